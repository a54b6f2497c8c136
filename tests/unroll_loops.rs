//! Full unrolling of small constant-trip loops (`ir::unroll`), on PTX shaped as NVVM writes it
//! (`tests/data/unroll/*.ptx`, each opening with a comment that says what it pins): which
//! loops disappear from the IR lowering receives (a snapshot), what that does to the local
//! array the loops touch (the kernel's frame), and `ir::eval` of the kernel as built against
//! the simulator running our code on random inputs (`verify`), with the hazard checker
//! finding nothing in the compiled code. The runtime-trip unrolling (`ir::unroll_runtime`)
//! is off by default; its tests turn it on (`runtime_options`, `--unroll-runtime`).

#[path = "common/frame_ir.rs"]
mod frame_ir;

use frame_ir::{frame_and_ir as frame_and_ir_in, options, read};
use leafold::driver::{compile, Emit};
use leafold::sm50::sched::check::check_code;

/// [`options`] with the runtime-trip unrolling (`--unroll-runtime`, off by default) on.
fn runtime_options(file: &str, emit: Emit) -> leafold::driver::Options {
    leafold::driver::Options {
        unroll_runtime: true,
        ..options(file, emit)
    }
}

fn frame_and_ir(file: &str) -> (u32, String) {
    frame_and_ir_in("unroll", file)
}

/// Blocks that branch back to themselves (single-block loops) in an IR listing.
fn self_loops(ir: &str) -> usize {
    let mut block = String::new();
    let mut n = 0;
    for line in ir.lines() {
        if line.starts_with("block") {
            block = line.split([':', '(']).next().unwrap().to_string();
            continue;
        }
        let t = line.trim_start();
        if (t.starts_with("brif") || t.starts_with("jump"))
            && t.split([' ', ',', '(']).any(|w| w == block)
        {
            n += 1;
        }
    }
    n
}

/// `ir::eval` against the simulator, several random launches, by default and with the
/// runtime-trip unrolling, and no hazard in our code (unrolled).
fn assert_eval_matches_sim(file: &str) {
    frame_ir::assert_eval_matches_sim("unroll", file);
    frame_ir::assert_eval_matches_sim_with("unroll", file, runtime_options(file, Emit::Cubin));
    let out = compile(&read("unroll", file), &runtime_options(file, Emit::Cubin)).unwrap();
    let c = leafold::cubin::read(&out.cubin).unwrap();
    for k in &c.kernels {
        let found = check_code(&k.code);
        assert!(found.is_empty(), "{file} {}: {found:?}", k.name);
    }
}

#[test]
fn a_copy_loop_of_twelve_becomes_straight_line_with_constant_offsets() {
    let (frame, ir) = frame_and_ir("copy.ptx");
    assert_eq!(self_loops(&ir), 0, "{ir}");
    // Twelve loads and twelve stores, each at one base plus a constant offset.
    assert_eq!(ir.matches("load.global").count(), 12, "{ir}");
    assert_eq!(ir.matches("store.local").count(), 12, "{ir}");
    // The dynamically indexed read keeps the 48-byte array in local memory.
    assert_eq!(frame, 48, "{ir}");
    insta::assert_snapshot!("unroll_copy_ir", ir);
    assert_eval_matches_sim("copy.ptx");
}

#[test]
fn unrolled_loops_make_a_local_array_constant_indexed_and_it_leaves_memory() {
    let (frame, ir) = frame_and_ir("promote.ptx");
    assert_eq!(self_loops(&ir), 0, "{ir}");
    assert_eq!(frame, 0, "{ir}");
    assert!(!ir.contains("local"), "{ir}");
    insta::assert_snapshot!("unroll_promote_ir", ir);
    assert_eval_matches_sim("promote.ptx");
}

#[test]
fn long_unbounded_and_nounroll_loops_stay_loops() {
    let (_, ir) = frame_and_ir("keep.ptx");
    assert_eq!(self_loops(&ir), 4, "{ir}");
    assert_eval_matches_sim("keep.ptx");
}

#[test]
fn a_float_counted_window_unrolls_fully_with_constant_counters() {
    let (_, ir) = frame_and_ir("float.ptx");
    assert_eq!(self_loops(&ir), 0, "{ir}");
    // -3, -2, .., 3 twice over: 7 x 7 loads, as ptxas's 49 LDGs.
    assert_eq!(ir.matches("load.global").count(), 49, "{ir}");
    // The counters' copies and their squares folded: no float compare remains, and the
    // only float adds are the pixel coordinate's and the two sums'.
    assert!(!ir.contains("setp") && !ir.contains("fcmp"), "{ir}");
    insta::assert_snapshot!("unroll_float_ir", ir);
    assert_eval_matches_sim("float.ptx");
}

#[test]
fn a_count_down_copy_of_456_words_unrolls_fully() {
    let (_, ir) = frame_and_ir("countdown.ptx");
    assert_eq!(self_loops(&ir), 0, "{ir}");
    assert_eq!(ir.matches("load.global").count(), 456, "{ir}");
    assert_eq!(ir.matches("store.shared").count(), 456, "{ir}");
    assert_eval_matches_sim("countdown.ptx");
}

/// One thread of `float.ptx` on an image of ones: with both loops unrolled the code is
/// straight-line, so every instruction up to `EXIT` issues exactly once (the dynamic count
/// is the static one), and by hand both sums are the same 49 weights added in the same
/// order (`fma(1.0, w, acc)` rounds as `acc + w`), so the two outputs are equal.
#[test]
fn the_unrolled_window_runs_each_instruction_once() {
    use leafold::ir::eval::{GlobalRegion, Launch};
    const OUT: u64 = 0x1000_0000;
    const IMG: u64 = 0x2000_0000;
    let out = compile(
        &read("unroll", "float.ptx"),
        &options("float.ptx", Emit::Cubin),
    )
    .unwrap();
    let (code, info) = leafold::sim::load_kernel(&out.cubin, "knn").unwrap();
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = [OUT.to_le_bytes(), IMG.to_le_bytes()].concat();
    launch.params.extend(64u32.to_le_bytes());
    launch.global = vec![
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 8],
        },
        GlobalRegion {
            base: IMG,
            bytes: 1.0f32.to_le_bytes().repeat(64 * 64),
        },
    ];
    let (run, warp_insts) = leafold::sim::run_counted(&code, &info, &launch).unwrap();
    // Instruction lines start with their address (`/*0008*/`); control words with `/* 0x`.
    let listing: Vec<&str> = out
        .sass
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("/*") && !l.starts_with("/* "))
        .collect();
    let exit = listing.iter().position(|l| l.contains("EXIT")).unwrap();
    assert_eq!(warp_insts, exit as u64 + 1, "{}", out.sass);
    assert!(!out.sass.contains(" BRA ") || listing[exit + 1..].iter().all(|l| !l.contains("@")));
    let o = run.region(OUT).unwrap();
    assert_eq!(o[0..4], o[4..8], "{o:?}");
    assert_ne!(o[0..4], [0; 4]);
}

/// Each kernel's IR in a listing of several, by name (`kernel @name(` opens one).
fn kernel_ir<'a>(ir: &'a str, name: &str) -> &'a str {
    let open = format!("kernel @{name}(");
    let start = ir
        .find(&open)
        .unwrap_or_else(|| panic!("no {name} in {ir}"));
    let rest = &ir[start..];
    let end = rest[1..].find("kernel @").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// `runtime.ptx`'s loops with a trip count known only at run time: which ones
/// `ir::unroll_runtime` unrolls by four with ptxas's remainder (a loop of four copies, `U`,
/// then a block of two, `D`, then the original loop for the last iteration: two self-loops
/// and seven loads of the body's one, as ptxas's 4 + 2 + 1 copies) and which it leaves as
/// ptxas leaves them (one self-loop, one load), as a table of self-loops and loads per
/// kernel.
#[test]
fn runtime_loops_unroll_by_four_with_ptxas_remainder() {
    let ir = compile(
        &read("unroll", "runtime.ptx"),
        &runtime_options("runtime.ptx", Emit::Ir),
    )
    .unwrap()
    .text;
    let mut table = String::new();
    for (name, unrolled) in [
        ("sum_lt", true),
        ("count_down", true),
        ("param_ult", false),
        ("wrap_ne", true),
        ("gt_by_two", true),
        ("pragma", false),
        ("big", false),
        ("div_rn", false),
    ] {
        let k = kernel_ir(&ir, name);
        let (loops, loads) = (self_loops(k), k.matches("load.global").count());
        table += &format!("{name}: {loops} self-loops, {loads} global loads\n");
        let body_loads = if name == "wrap_ne" { 0 } else { 1 };
        let want = if unrolled {
            (2, 7 * body_loads)
        } else {
            (1, body_loads)
        };
        assert_eq!((loops, loads), want, "{name}:\n{k}");
    }
    insta::assert_snapshot!("unroll_runtime_table", table);
    // NVVM's shape: the four copies' pointer bumps are one base plus constant offsets.
    insta::assert_snapshot!("unroll_runtime_sum_lt_ir", kernel_ir(&ir, "sum_lt"));
}

/// Two application kernels with runtime-trip loops (`tests/data/cuda-apps/nvcc`): unrolled,
/// the four copies' loads hoisted together keep more values live (fir_double took 62
/// registers, gemv_tiled 46: 32 and 40 warps per SM instead of 64). The driver compiles
/// such a kernel once more without the unrolling and keeps the code with more resident
/// warps, so both stay at full occupancy (at most 32 registers, as without the unrolling;
/// ptxas: 28 and 26).
#[test]
fn runtime_unrolling_never_costs_occupancy() {
    for (file, kernel) in [
        ("science.ptx", "_Z10fir_doublePKdS0_Pdii"),
        ("linalg.ptx", "_Z10gemv_tilediiPKfS0_Pf"),
    ] {
        let out = compile(
            &read("cuda-apps/nvcc", file),
            &runtime_options(file, Emit::Cubin),
        )
        .unwrap();
        let k = out
            .kernels
            .iter()
            .find(|k| k.name == kernel)
            .unwrap_or_else(|| panic!("no {kernel} in {file}"));
        assert!(k.registers <= 32, "{kernel}: {} registers", k.registers);
    }
}

/// Every trip count from 0 to 31 and 32 of them up to about 2000 (one per thread), a
/// counter crossing INT_MAX, and the loops left alone: `ir::eval` equals the simulator and
/// the hazard checker finds nothing.
#[test]
fn runtime_unrolled_loops_run_every_trip_count_exactly() {
    assert_eval_matches_sim("runtime.ptx");
}

/// A loop NVVM has already unrolled by four (cuda-apps spmv_csr_scalar: a `nounroll`
/// prologue for `n % 4` trips, then four copies a trip, counter step 4, the column indices
/// read at `[p - 8]`, `[p - 4]`, `[p]`, `[p + 4]`) is not unrolled again: the two loops stay
/// two self-loops, and the kernel keeps its 17 loads (the row's two bounds, three a trip of
/// the prologue, twelve of the four copies; unrolled again, its 16 copies' gather chains
/// serialised: 14.8k -> 20.0k cycles).
#[test]
fn loops_nvvm_unrolled_are_not_unrolled_again() {
    let file = "linalg.ptx";
    let ir = compile(
        &read("cuda-apps/nvcc", file),
        &runtime_options(file, Emit::Ir),
    )
    .unwrap()
    .text;
    let k = kernel_ir(&ir, "_Z15spmv_csr_scalariPKiS0_PKfS2_Pf");
    assert_eq!(self_loops(k), 2, "{k}");
    assert_eq!(k.matches("load.global").count(), 2 + 3 + 4 * 3, "{k}");
}

/// A strided loop (step of 32 or more: the threads share the range) is left alone:
/// corpus-nvcc's mergeHistogram64 (`for (i = tid; i < n; i += 256)`, one global load a
/// trip) keeps one self-loop and one load under `--unroll-runtime`, while a step-1 loop of
/// the same shape (`runtime.ptx`'s sum_lt) is unrolled (two self-loops, seven loads).
/// Unrolled, the strided loop ran 0 or 1 trips a thread under `verify`'s launch and only
/// paid the remainder's compares and branches (+244 cycles).
#[test]
fn strided_loops_are_not_unrolled() {
    let file = "cuda-samples__Samples_2_Concepts_and_Techniques_histogram_histogram64.ptx";
    let ir = compile(
        &read("corpus-nvcc/ptx", file),
        &runtime_options(file, Emit::Ir),
    )
    .unwrap()
    .text;
    let k = kernel_ir(&ir, "_Z22mergeHistogram64KernelPjS_j");
    assert_eq!(self_loops(k), 1, "{k}");
    assert_eq!(k.matches("load.global").count(), 1, "{k}");
    let ir = compile(
        &read("unroll", "runtime.ptx"),
        &runtime_options("runtime.ptx", Emit::Ir),
    )
    .unwrap()
    .text;
    let k = kernel_ir(&ir, "sum_lt");
    assert_eq!(
        (self_loops(k), k.matches("load.global").count()),
        (2, 7),
        "{k}"
    );
}
