//! `.local` arrays in registers (`ir::sroa`), on PTX shaped as NVVM writes it
//! (`tests/data/sroa/*.ptx`, each opening with a comment that says what it pins): which
//! arrays leave local memory (the kernel's frame), the IR lowering receives (a snapshot), and
//! `ir::eval` of the unpromoted kernel against the simulator running our code on random
//! inputs (`verify`, which compares the local bytes of the arrays that stay, wherever they
//! moved in the frame).

#[path = "common/frame_ir.rs"]
mod frame_ir;

fn frame_and_ir(file: &str) -> (u32, String) {
    frame_ir::frame_and_ir("sroa", file)
}

fn assert_eval_matches_sim(file: &str) {
    frame_ir::assert_eval_matches_sim("sroa", file)
}

#[test]
fn constant_offsets_through_spl_and_sp_leave_local_memory() {
    let (frame, ir) = frame_and_ir("consts.ptx");
    // ptxas 11.8 keeps this array (16 bytes of stack frame); every offset is a constant.
    assert_eq!(frame, 0, "{ir}");
    assert!(!ir.contains(" gv"), "{ir}");
    // Every load read the array; the one store left writes the result to global memory.
    assert!(!ir.contains("load"), "{ir}");
    assert_eq!(ir.matches("store").count(), 1, "{ir}");
    // The loop carries the two elements it writes as block parameters.
    insta::assert_snapshot!("sroa_consts_ir", ir);
    assert_eval_matches_sim("consts.ptx");
}

#[test]
fn arrays_split_into_elements_are_promoted_and_a_split_u64_stays() {
    let (frame, ir) = frame_and_ir("mixed.ptx");
    // depot0 (12 bytes, constant offsets) and depot1 (32 bytes, one store at an index, one
    // load at a constant offset: ir::unindex) go; depot2 (8 bytes, a u64 read back in
    // halves) stays. ptxas 11.8 keeps all three (56).
    assert_eq!(frame, 8, "{ir}");
    assert!(
        !ir.contains(" gv0") && !ir.contains(" gv1") && ir.contains(" gv2"),
        "{ir}"
    );
    insta::assert_snapshot!("sroa_mixed_ir", ir);
    assert_eval_matches_sim("mixed.ptx");
}

#[test]
fn an_array_indexed_at_run_time_leaves_local_memory() {
    let (frame, ir) = frame_and_ir("indexed.ptx");
    // As ptxas 11.8 (0 bytes of stack frame): the pointer stepped in the loop, the loads
    // at computed offsets and the store at one all become compares and selects.
    assert_eq!(frame, 0, "{ir}");
    assert!(!ir.contains(" gv"), "{ir}");
    // Two global accesses remain: the input load and the result store.
    assert_eq!(ir.matches("load").count(), 1, "{ir}");
    assert_eq!(ir.matches("store").count(), 1, "{ir}");
    assert!(ir.contains("select"), "{ir}");
    insta::assert_snapshot!("sroa_indexed_ir", ir);
    assert_eval_matches_sim("indexed.ptx");
}

#[test]
fn a_large_array_indexed_at_run_time_stays_in_memory() {
    let (frame, ir) = frame_and_ir("bigindex.ptx");
    // 32 elements, over ir::unindex::MAX_ELEMS: 128 bytes, as ptxas 11.8.
    assert_eq!(frame, 128, "{ir}");
    assert!(ir.contains(" gv0") && !ir.contains("select"), "{ir}");
    assert_eval_matches_sim("bigindex.ptx");
}

#[test]
fn an_escaping_address_keeps_the_array_in_memory() {
    let (frame, ir) = frame_and_ir("escape.ptx");
    // 4 used bytes of 8, the frame rounded to 8 as ptxas rounds it.
    assert_eq!(frame, 8, "{ir}");
    assert!(ir.contains(" gv0"), "{ir}");
}

/// ptxas 11.8 promotes an array indexed at run time only where some access is at a
/// constant offset (`ir::unindex`'s module essay): the same kernel without one keeps its
/// 16 bytes, with a dead constant store after the loads it keeps none. Both run as
/// `ir::eval` does.
#[test]
fn an_array_indexed_at_run_time_needs_a_constant_access_to_leave_memory() {
    let file = "constaccess.ptx";
    let ptx = frame_ir::read("sroa", file);
    let out =
        leafold::driver::compile(&ptx, &frame_ir::options(file, leafold::driver::Emit::Cubin))
            .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let frame = |name: &str| {
        out.kernels
            .iter()
            .find(|k| k.name == name)
            .map(|k| k.stack_frame)
            .unwrap()
    };
    assert_eq!(frame("without"), 16, "{}", out.sass);
    assert_eq!(frame("with"), 0, "{}", out.sass);
    assert_eval_matches_sim(file);
}

/// The driver's fallback (`driver::compile_kernel`): parboil mri-q's `ComputeQ_GPU` has
/// sine/cosine reductions over two 7-word arrays (Open64's shape, one array each);
/// promoted through `ir::unindex`, their select chains cost it warps, so it is compiled
/// with the arrays in local memory (56 bytes of frame; ptxas 11.8 keeps them in 42
/// registers with none). The report says so, and `verify`, which then lays out local
/// memory with the arrays kept (`verify::compare::kept_locals`), matches.
/// (oceanFFT's `generateSpectrumKernel`, this test's kernel before, now keeps its array in
/// memory by ptxas's third condition, below.)
#[test]
fn the_no_unindex_fallback_is_reported_and_verified_with_its_layout() {
    let file = "gtcasl__gpuocelot__tests_ptx_parboil_mri-q.ptx";
    let path = format!(
        "{}/tests/data/corpus/ptx/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let ptx = std::fs::read_to_string(path).unwrap();
    let opts = frame_ir::options(file, leafold::driver::Emit::Cubin);
    let out = leafold::driver::compile(&ptx, &opts)
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    for k in &out.kernels {
        let q = k.name == "_Z12ComputeQ_GPUiiPfS_S_S_S_";
        assert_eq!(k.indexed_locals_in_memory, q, "{}", k.name);
        if q {
            assert_eq!(k.stack_frame, 56, "{}", out.sass);
        }
    }
    let vopts = leafold::verify::VerifyOptions {
        runs: 2,
        compile: opts,
        ..leafold::verify::VerifyOptions::default()
    };
    for v in leafold::verify::verify_file(&ptx, None, &vopts).unwrap() {
        assert!(
            matches!(v.outcome, leafold::verify::Outcome::Match { .. }),
            "{}: {:?}",
            v.kernel,
            v.outcome
        );
    }
}

/// Each kernel's frame in `file` (compiled as the driver does by default).
fn frames(path: &str) -> Vec<(String, u32, bool)> {
    let ptx = std::fs::read_to_string(path).unwrap();
    let out =
        leafold::driver::compile(&ptx, &frame_ir::options(path, leafold::driver::Emit::Cubin))
            .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    out.kernels
        .iter()
        .map(|k| (k.name.clone(), k.stack_frame, k.indexed_locals_in_memory))
        .collect()
}

/// ptxas 11.8's third condition (`ir::unindex`, "Which variables"): two stores of one
/// element from blocks neither of which dominates the other, one through a pointer into the
/// array, keep it in memory. `tests/data/sroa/split.ptx` (nvcc 11.8's PTX, two kernels
/// edited) has the frames ptxas gives each kernel; all run as `ir::eval` does.
#[test]
fn split_stores_of_one_element_keep_an_indexed_array_in_memory() {
    let path = format!("{}/tests/data/sroa/split.ptx", env!("CARGO_MANIFEST_DIR"));
    let got = frames(&path);
    let want = [
        ("split", 32),
        ("two_regions", 32),
        ("one_region", 0),
        ("dominated", 0),
        ("start", 0),
    ];
    assert_eq!(got.len(), want.len());
    for (name, frame) in want {
        let k = got.iter().find(|k| k.0 == name).unwrap();
        assert_eq!((k.1, k.2), (frame, false), "{name}");
    }
    assert_eval_matches_sim("split.ptx");
}

/// The same rule on real code, with ptxas 11.8's frames: NVVM's sine/cosine reductions,
/// several in a kernel over one shared 7-word array, whose seventh word every reduction
/// stores through one hoisted pointer (32 bytes; one reduction alone is in registers), and
/// Open64's, whose counted loop `ir::unroll` copies into two blocks: the rule reads the
/// loops as written, so those arrays stay in registers (no frame).
#[test]
fn sine_reductions_keep_their_arrays_where_ptxas_does() {
    let dir = env!("CARGO_MANIFEST_DIR");
    for (file, kernel, frame) in [
        (
            "corpus-nvcc/ptx/cuda-samples__Samples_0_Introduction_simpleSurfaceWrite_simpleSurfaceWrite.ptx",
            "_Z15transformKernelPfiify",
            32,
        ),
        (
            "corpus-nvcc/ptx/cuda-samples__Samples_5_Domain_Specific_simpleGL_simpleGL.ptx",
            "_Z17simple_vbo_kernelP6float4jjf",
            32,
        ),
        (
            "corpus-nvcc/ptx/cuda-samples__Samples_4_CUDA_Libraries_oceanFFT_oceanFFT_kernel.ptx",
            "_Z22generateSpectrumKernelP6float2S0_jjjff",
            32,
        ),
        (
            "corpus/ptx/gtcasl__gpuocelot__tests_cuda3.2_data_simpleTexture_kernel.ptx",
            "transformKernel",
            0,
        ),
    ] {
        let got = frames(&format!("{dir}/tests/data/{file}"));
        let k = got.iter().find(|k| k.0 == kernel).unwrap();
        assert_eq!((k.1, k.2), (frame, false), "{file} {kernel}");
    }
}

/// Arrays of 4 and 8 words written and read at run-time indices (NVVM's shape,
/// `tests/data/sroa/selects.ptx`): in registers as ptxas 11.8 has them, one `ISETP.EQ` per
/// element on the index itself (not the offset `mul.wide` scales it to) and one `SEL` per
/// element and access (ptxas: an `ISETP.EQ` on the offset and a predicated `MOV`). The loads
/// at `m - i` and `i + 1` share `i`'s compares. The SASS is a snapshot.
#[test]
fn selects_compare_the_index_and_share_its_compares() {
    let file = "selects.ptx";
    let ptx = frame_ir::read("sroa", file);
    let out = leafold::driver::compile(&ptx, &frame_ir::options(file, leafold::driver::Emit::Sass))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    for k in &out.kernels {
        assert_eq!(k.stack_frame, 0, "{}: {}", k.name, out.sass);
    }
    let text = &out.text;
    for (name, n) in [("sel4", 4), ("sel8", 8)] {
        let start = text.find(&format!("Function : {name}")).unwrap();
        let body = &text[start..];
        let body = &body[..body[1..].find("Function :").map_or(body.len(), |e| e + 1)];
        // The store's compares of `in & m` (n), the first load's (n - 1: element 0 is the
        // default) and the other two loads' (`j = (in >> 8) & m` against 0..m, shared:
        // n, where two chains of n - 1 would compare offsets 2 (n - 1) times). A compare
        // with 0 that only the next select reads is one `ICMP.EQ` with that select
        // (`select_by_icmp`), so each such pair counts once among the compares and once
        // among the selects. A select whose one arm only it reads, computed by one
        // instruction, is that instruction under the select's predicate (`lower::guard`):
        // it counts among the selects too.
        let icmps = body.matches("ICMP.EQ").count();
        let guarded = body
            .lines()
            .filter(|l| l.contains(" @P") || l.contains(" @!P"))
            .filter(|l| {
                !["BRA", "SYNC", "BRK", "EXIT", "RET"]
                    .iter()
                    .any(|c| l.contains(c))
            })
            .count();
        assert_eq!(
            body.matches("ISETP.EQ").count() + icmps,
            3 * n - 1,
            "{body}"
        );
        assert_eq!(
            body.matches(" SEL ").count() + icmps + guarded,
            n + 3 * (n - 1),
            "{body}"
        );
    }
    insta::assert_snapshot!("sroa_selects_sass", text);
    assert_eval_matches_sim(file);
}
