//! Spilling against ptxas under a register budget (issue 23 item 4): a few corpus kernels are
//! compiled by both compilers with `--maxrregcount N` (ptxas 11.8 `-O3 -maxrregcount=N`), and
//! the spill bytes of leafold's `-v` report, summed over the kernels, must stay within a floor
//! of ptxas's (the figures measured when the test was written, rounded up, so that a change
//! that spills more fails). Each kernel must also keep to the budget.
//!
//! Needs the oracle (ptxas); without it the test prints the oracle notice and passes. The
//! other tests need no oracle: a tight budget on a kernel with its own local memory at
//! negative offsets compiles without a panic, and thread indices live across a loop under a
//! budget are read again (`S2R`) rather than stored to local memory.

mod common;

use common::warp_kernel::{differential, kernel, texts};
use leafold::cli::compare::parse_v;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;

/// (corpus file, budget). Kernels that spill on both sides at these budgets.
const CASES: &[(&str, u32)] = &[
    ("gtcasl__gpuocelot__tests_ptx_sdk2.2_matrixMul.ptx", 16),
    (
        "gtcasl__gpuocelot__tests_cuda3.2_data_matrixMul_kernel.ptx",
        16,
    ),
    ("gtcasl__gpuocelot__tests_ptx_sdk2.2_BlackScholes.ptx", 16),
    ("gtcasl__gpuocelot__tests_ptx_parboil_mri-q.ptx", 16),
    ("gtcasl__gpuocelot__tests_ptx_rodinia_hotspot.ptx", 24),
];

/// leafold's spill bytes (stores + loads, all kernels of [`CASES`]) at most this many times
/// ptxas's. Measured when the test was written: 2508 against 2088 = 1.201; with the spilling
/// pass under the budget (`alloc::budget_presplit`), 1408 against 2088 = 0.674 (matrixMul
/// 40/12, CUDA 3.2's matrixMul 48/12 and matrixMul_64bit 248/24, BlackScholes 176/172, mri-q's
/// ComputeQ 784/1840, hotspot at 24 registers 112/28). The goal (issue 23) is at most ptxas's
/// on each kernel, which matrixMul and hotspot still miss. Since the driver's retries weigh
/// code as well as spill bytes (`Allocated::code_cost`, session 31), mri-q's ComputeQ keeps
/// an allocation with 812 bytes rather than 784 whose code costs less, and matrixMul_64bit
/// spills 240 rather than 248: 1428 against 2088 = 0.684. With `ICMP` selects (session 33,
/// `select_by_icmp`: a compared value in a register where a predicate was) hotspot at 24
/// registers spills 140 bytes rather than 112: 1456 against 2088 = 0.697. The floor moved by
/// that one kernel; whether a budgeted kernel should keep its predicates is noted on issue 23.
const SPILL_RATIO_FLOOR: f64 = 0.70;

/// (kernel, spill store bytes + spill load bytes) of each kernel of ptxas's compile.
fn ptxas_spills(oracle: &Oracle, path: &std::path::Path, budget: u32) -> Vec<(String, u32)> {
    let out = std::env::temp_dir().join(format!(
        "leafold_spill_budget_{}_{budget}.cubin",
        std::process::id()
    ));
    let o = std::process::Command::new(&oracle.ptxas)
        .args(["-arch=sm_50", "-O3", "-v"])
        .arg(format!("-maxrregcount={budget}"))
        .arg(path)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("ptxas runs");
    let _ = std::fs::remove_file(&out);
    let log = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "ptxas failed: {log}");
    log.lines()
        .filter_map(|l| {
            let rest = l.split("Compiling entry function '").nth(1)?;
            Some(rest.split('\'').next()?.to_string())
        })
        .map(|k| {
            let v = parse_v(&log, &k);
            (k, v.spill_stores + v.spill_loads)
        })
        .collect()
}

#[test]
fn spills_under_a_budget_stay_near_ptxas() {
    let Some(oracle) = Oracle::for_test("spills_under_a_budget_stay_near_ptxas") else {
        return;
    };
    let (mut ours, mut theirs) = (0u64, 0u64);
    let mut lines = String::new();
    for (file, budget) in CASES {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/corpus/ptx")
            .join(file);
        let ptx = std::fs::read_to_string(&path).expect("corpus file");
        let opts = Options {
            file_name: (*file).into(),
            max_regs: Some(*budget),
            ..Options::default()
        };
        let out =
            compile(&ptx, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
        let theirs_k = ptxas_spills(&oracle, &path, *budget);
        for k in &out.kernels {
            assert!(
                k.registers <= *budget,
                "{file} {}: {} registers over the budget {budget}",
                k.name,
                k.registers
            );
            let Some((_, t)) = theirs_k.iter().find(|(n, _)| *n == k.name) else {
                continue;
            };
            let o = k.spill_store_bytes + k.spill_load_bytes;
            lines += &format!("{file} {} @{budget}: leafold {o}, ptxas {t}\n", k.name);
            ours += u64::from(o);
            theirs += u64::from(*t);
        }
    }
    eprint!("{lines}");
    assert!(
        theirs > 0,
        "the cases no longer spill under ptxas:\n{lines}"
    );
    let ratio = ours as f64 / theirs as f64;
    assert!(
        ratio <= SPILL_RATIO_FLOOR,
        "spill bytes {ours} against ptxas's {theirs} = {ratio:.3} > {SPILL_RATIO_FLOOR}\n{lines}"
    );
}

/// optix's `trace` (gpuocelot's PTX) keeps `.local` arrays that it addresses at negative
/// offsets from R1; under `--maxrregcount=32` the allocator's promotion of spill slots read
/// such an access's 24-bit offset as unsigned (0xfffff8 for -8) and panicked encoding it again
/// (`compare --maxrregcount 32` on the corpus stopped there). It must compile within the budget.
#[test]
fn negative_local_offsets_under_a_budget_do_not_panic() {
    let file = "gtcasl__gpuocelot__tests_ptx_optix_kernel_trace_device0_1.ptx";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/corpus/ptx")
        .join(file);
    let ptx = std::fs::read_to_string(&path).expect("corpus file");
    let opts = Options {
        file_name: file.into(),
        max_regs: Some(32),
        ..Options::default()
    };
    let out =
        compile(&ptx, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    for k in &out.kernels {
        assert!(k.registers <= 32, "{}: {} registers", k.name, k.registers);
    }
}

/// The registers each `STL` of `sass` stores whose last writer before it (in listing order)
/// was an `S2R`: a thread index stored to local memory where one `S2R` would bring it back.
fn stored_thread_indices(sass: &str) -> Vec<String> {
    let mut writer: std::collections::HashMap<String, String> = Default::default();
    let mut stored = Vec::new();
    for t in texts(sass) {
        let t = t.trim_end_matches(';').trim();
        // drop a guard
        let t = if t.starts_with('@') {
            t.split_once(' ').map_or("", |(_, r)| r)
        } else {
            t
        };
        let Some((op, rest)) = t.split_once(' ') else {
            continue;
        };
        let ops: Vec<&str> = rest.split(',').map(str::trim).collect();
        if op.starts_with("STL") {
            let src = ops.last().copied().unwrap_or("");
            if writer.get(src).is_some_and(|w| w.starts_with("S2R")) {
                stored.push(src.to_string());
            }
        } else if let Some(dst) = ops.first().filter(|d| d.starts_with('R')) {
            let dst = dst.split('.').next().unwrap_or(dst);
            writer.insert(dst.to_string(), op.to_string());
        }
    }
    stored
}

/// Under `--maxrregcount 16`, eight accumulators, a loop counter and two addresses fill the
/// registers through a loop, while four thread indices (`%tid.x`, `%tid.y`, `%ctaid.x`,
/// `%laneid`, each an `S2R`) are read only after it. regalloc2 alone stored them to local
/// memory before the loop and loaded them back after it; the spilling pass
/// (`alloc::budget_presplit`) reads them again with `S2R` instead. No `STL` may store an `S2R`'s
/// result, the spill bytes stay within what was measured, and eval and the simulator agree.
#[test]
fn thread_indices_under_a_budget_are_read_again_not_spilled() {
    const BUDGET: u32 = 16;
    // spill store + load bytes when the test was written: 8 + 8 (two accumulators; before,
    // regalloc2 alone spilled 16 + 36 with the four thread indices)
    const SPILL_BYTES: u32 = 16;
    let mut body = String::from(
        "    mov.u32 %r12, %tid.y;\n    mov.u32 %r13, %laneid;\n    mov.u32 %r14, 0;\n",
    );
    for i in 0..8 {
        body += &format!(
            "    xor.b32 %r{}, %r2, {};\n",
            20 + i,
            0x9e37_79b9u32.wrapping_mul(i + 1)
        );
    }
    body += "LOOP:\n    mul.wide.u32 %rd7, %r14, 4;\n    add.s64 %rd8, %rd1, %rd7;\n    ld.global.u32 %r4, [%rd8];\n";
    for i in 0..8 {
        body += &format!(
            "    mad.lo.u32 %r{}, %r{}, %r4, %r{};\n",
            20 + i,
            20 + i,
            20 + (i + 1) % 8
        );
    }
    body += "    add.u32 %r14, %r14, 1;\n    setp.lt.u32 %p1, %r14, 8;\n    @%p1 bra LOOP;\n";
    body += "    add.u32 %r5, %r20, %r21;\n";
    for i in 2..8 {
        body += &format!("    xor.b32 %r5, %r5, %r{};\n", 20 + i);
    }
    body += "    st.global.u32 [%rd3], %r5;\n    st.global.u32 [%rd3+4], %r9;\n";
    body += "    st.global.u32 [%rd3+8], %r10;\n    st.global.u32 [%rd3+12], %r12;\n";
    body += "    st.global.u32 [%rd3+16], %r13;\n";
    let test = "budget_thread_indices";
    let src = kernel("", &body);
    let opts = Options {
        file_name: format!("{test}.ptx"),
        emit: Emit::Sass,
        max_regs: Some(BUDGET),
        ..Options::default()
    };
    let out =
        compile(&src, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let k = &out.kernels[0];
    assert!(
        k.registers <= BUDGET,
        "{} registers\n{}",
        k.registers,
        out.sass
    );
    let stored = stored_thread_indices(&out.sass);
    assert!(
        stored.is_empty(),
        "thread indices stored to local memory: {stored:?}\n{}",
        out.sass
    );
    let bytes = k.spill_store_bytes + k.spill_load_bytes;
    assert!(
        bytes <= SPILL_BYTES,
        "{} bytes spilled, {} reloaded\n{}",
        k.spill_store_bytes,
        k.spill_load_bytes,
        out.sass
    );
    differential(test, &src, &out, 2, |_| {});
}
