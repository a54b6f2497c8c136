//! Differential verification of the corpus: every corpus kernel leafold compiles (with its
//! whole file, or on its own with `-e` when the file does not compile whole) runs in the
//! IR reference interpreter and, as leafold's SASS, in the simulator, on 2 CTAs × 64 threads
//! (or a smaller launch where that one is undefined) with 2 seeded random inputs each; every
//! byte of global, shared and declared local memory must match. With the oracle, ptxas's cubin of the same file runs through the simulator
//! against the same reference (which validates the simulator itself).
//!
//! Each matching run is also run again with the simulator's dependence trace, and every
//! instruction the run shows flowing into a memory address must be in the static address
//! slice (`sm50::slice`) of that code, leafold's and ptxas's alike: `leafold compare`'s
//! address-slice column is checked against real runs on both sides.
//!
//! Nothing is skipped silently: kernels that cannot be run are printed with the reason, and
//! the number verified is asserted against what was measured when this test was written, so
//! a regression that stops kernels from running fails here too.

mod common;

use common::{corpus, par_map, ptxas_cached, Plan};
use leafold::driver::Options;
use leafold::oracle::Oracle;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

/// Kernels verified (leafold's code): a floor below what is measured. With global race
/// detection (seed 7, 2 runs): 401 since the launch the kernel is written for
/// (`verify::shape`) and the simulator's `BRX`; 364 since inputs are shaped by the kernel (`verify::inputs`,
/// the clock model, other seeds and sizes before smaller launches; 336 before), many of
/// them only on a smaller launch (one CTA, one thread per CTA, or one thread in one CTA:
/// their full launch races or diverges at a barrier, see `verify::verify_kernel`; printed by
/// the test with the reason).
const MIN_VERIFIED: usize = 395;
/// Of them, kernels verified at the full launch (the default one, or the launch the kernel
/// is written for, `verify::shape`): a floor below what is measured (`leafold verify
/// --summary tests/data/corpus`: 349 since one CTA is the launch of a kernel blind to its CTA,
/// 346 with launches from the kernel, 303 before; this test's seed: 348).
const MIN_FULL: usize = 340;
/// Kernels whose ptxas cubin also matched: a floor (399 measured since the simulator runs
/// ptxas's `BRX` and `PRET`; 347 measured with shaped inputs; 326
/// since the simulator runs ptxas's f32 division: FCHK.DIVIDE, FSET .CC and FMUL.D2; 316
/// before).
const MIN_VERIFIED_PTXAS: usize = 393;
/// Known mismatches: (file, kernel, whose code: "leafold" or "ptxas", cause). Each entry
/// must still mismatch (the test fails when one verifies, so that it is removed), and each
/// names a cause that is not a bug of leafold, the simulator or the reference.
///
/// The 27 that appeared when float kernels started to compile were triaged: races on shared
/// memory (atom_add, scan_naive, convolutionColumnGPU, needle_cuda_shared_1), `bar.sync` in
/// divergent code (barrier-deadlock) and `%clock` (clock) are now detected by the reference
/// and "cannot run"; ptxas's faults in dct8x8 and thrust's reduce_intervals were accesses
/// past the kernel's own `.shared` variables into another kernel's (now detected too); the
/// Mandelbrot_sm13 kernels read their last parameter word whole, which the simulator now
/// allows (see tests/verify_undefined.rs for each, reduced). The three listed as wrong code
/// later (boxFilter's two `_y` kernels, parboil pns) were races on global memory on the
/// random inputs, now detected; they verify on smaller launches (tests/verify_undefined.rs).
/// ptxas's code for vm's `VmKernel` "left reg_global[8] unwritten": ptxas orders the module's
/// `.global` variables differently and they were compared by address; they are compared by
/// name now (`verify::relayout_module_globals`), and it verifies.
/// The two FMA-contraction entries (mri-fhd's `ComputeRhoPhiGPU` and dct8x8's
/// `CUDAkernel2DCT`, ptxas's code) were ptxas contracting `mul.f32` + `add`/`sub.f32` (no
/// rounding modifier, so PTX allows it) into FFMA, which rounds once, where the reference
/// rounded both: the IR now makes the same contractions (`ir::contract`, ptxas's
/// `--fmad=true` rule), in the reference too, and both verify.
const KNOWN_MISMATCHES: &[(&str, &str, &str, &str)] = &[
    ("vosen__ZLUDA__ptx_src_test_spirv_run_func_ptr.ptx", "func_ptr", "ptxas",
     "the kernel stores a function's address (`mov.u64 %rd, foobar`) as a number; its value is the implementation's (leafold's is 8, `ir::build::calls::function_ids`; ptxas's an offset into its own table), so only leafold's code can match the reference"),
];

fn is_known(file: &str, kernel: &str, side: &str) -> bool {
    KNOWN_MISMATCHES
        .iter()
        .any(|&(f, k, s, _)| f == file && k == kernel && s == side)
}

fn opts(name: &str) -> VerifyOptions {
    VerifyOptions {
        seed: 7,
        runs: 2,
        compile: Options {
            file_name: name.to_string(),
            ..Options::default()
        },
        check_slice: true,
        ..VerifyOptions::default()
    }
}

/// The `.entry` names of a corpus file (empty when it does not parse).
fn entry_names(name: &str, ptx: &str) -> Vec<String> {
    let file = leafold::SourceFile::new(name, ptx);
    let Ok((ast, _)) = leafold::ptx::parse_and_check(&file) else {
        return Vec::new();
    };
    ast.functions()
        .filter(|f| f.kind == leafold::ptx::ast::FuncKind::Entry)
        .map(|f| f.name.text.to_string())
        .collect()
}

#[test]
fn corpus_kernels_verify() {
    let oracle = Oracle::for_test("verify_corpus");
    let files = corpus();
    let results = par_map(&files, |f| {
        let mut o = opts(&f.name);
        let Ok(first) = verify_file(&f.ptx, None, &o) else {
            // The file does not compile whole: verify the kernels that compile on their own
            // (`-e`, as the compile_rate test counts them), leafold's code only.
            let single: Vec<_> = entry_names(&f.name, &f.ptx)
                .iter()
                .filter_map(|k| verify_file(&f.ptx, Some(k), &o).ok())
                .flatten()
                .collect();
            return (f.name.clone(), Some(single).filter(|v| !v.is_empty()), None);
        };
        // ptxas's code, separately, so a simulator gap on ptxas's code does not hide our
        // result.
        let theirs = match (&oracle, f.plan) {
            (Some(oracle), Plan::AsIs | Plan::Rewrite) => {
                match ptxas_cached(oracle, &f.ptx_for_ptxas, "sm_50") {
                    Ok(c) => {
                        o.ptxas_cubin = Some(c);
                        o.only_ptxas = true;
                        verify_file(&f.ptx, None, &o).ok()
                    }
                    Err(_) => None,
                }
            }
            _ => None,
        };
        (f.name.clone(), Some(first), theirs)
    });
    let mut verified = 0;
    let mut full = 0;
    let mut verified_ptxas = 0;
    let mut cannot = Vec::new();
    let mut mismatches = Vec::new();
    let mut known = Vec::new();
    let mut one_thread_names = Vec::new();
    let mut compiled = 0;
    let (mut steps, mut seconds) = (0u64, 0f64);
    for (name, ours, theirs) in &results {
        let Some(ours) = ours else { continue };
        compiled += 1;
        for v in ours {
            steps += v.sim_steps;
            seconds += v.sim_seconds;
            match &v.outcome {
                Outcome::Match { one_thread, .. } => {
                    verified += 1;
                    full += usize::from(one_thread.is_none());
                    if let Some(why) = one_thread {
                        one_thread_names.push(format!("{name}: {}: {why}", v.kernel));
                    }
                }
                Outcome::CannotRun(why) => cannot.push(format!("{name}: {}: {why}", v.kernel)),
                Outcome::Mismatch(_) if is_known(name, &v.kernel, "leafold") => {
                    known.push(format!("{name}: {} (leafold)", v.kernel))
                }
                Outcome::Mismatch(_) => mismatches.push(format!("{name}: {v}")),
            }
        }
        for v in theirs.iter().flatten() {
            match &v.outcome {
                Outcome::Match { ptxas: true, .. } => verified_ptxas += 1,
                Outcome::Mismatch(m) if m.side == leafold::verify::Side::Ptxas => {
                    if is_known(name, &v.kernel, "ptxas") {
                        known.push(format!("{name}: {} (ptxas)", v.kernel))
                    } else {
                        mismatches.push(format!("{name}: {v}"))
                    }
                }
                Outcome::CannotRun(why) if why.contains("ptxas") => {
                    cannot.push(format!("{name}: {} (ptxas's code): {why}", v.kernel))
                }
                _ => {}
            }
        }
    }
    println!("{compiled} corpus files compile (whole, or some kernels on their own); {verified} kernels verified (leafold), {verified_ptxas} also with ptxas's code");
    println!(
        "simulator: {steps} warp-instructions in {seconds:.3} s ({:.0} per second, test profile)",
        steps as f64 / seconds.max(1e-9)
    );
    println!(
        "verified with one thread per CTA (the full block is undefined) ({}):",
        one_thread_names.len()
    );
    for n in &one_thread_names {
        println!("  {n}");
    }
    println!("cannot run ({}):", cannot.len());
    for c in &cannot {
        println!("  {c}");
    }
    println!("known mismatches ({}): {known:?}", known.len());
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    let expected_known = KNOWN_MISMATCHES
        .iter()
        .filter(|k| k.2 == "leafold" || oracle.is_some())
        .count();
    assert_eq!(
        known.len(),
        expected_known,
        "a known mismatch verifies now: remove it from KNOWN_MISMATCHES: {known:?}"
    );
    assert!(
        verified >= MIN_VERIFIED,
        "{verified} verified, expected at least {MIN_VERIFIED}"
    );
    assert!(
        full >= MIN_FULL,
        "{full} verified at the full launch, expected at least {MIN_FULL}"
    );
    if oracle.is_some() {
        assert!(
            verified_ptxas >= MIN_VERIFIED_PTXAS,
            "{verified_ptxas} verified with ptxas, expected at least {MIN_VERIFIED_PTXAS}"
        );
    }
}

/// Kernels of the test suite's own PTX files verified when this test was written.
const MIN_SUITE_VERIFIED: usize = 24;

/// Every kernel of the test suite's PTX files (tests/data/build, tests/data/ptx,
/// tests/data/lower, examples) that leafold compiles, verified the same way; the files that
/// do not compile and the kernels that cannot run are printed.
#[test]
fn suite_kernels_verify() {
    let mut files = Vec::new();
    for dir in [
        "tests/data/build",
        "tests/data/ptx",
        "tests/data/lower",
        "examples",
    ] {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut verified, mut not_compiled) = (0, 0);
    let mut problems = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let name = p.display().to_string();
        let Ok(vs) = verify_file(&text, None, &opts(&name)) else {
            not_compiled += 1;
            continue;
        };
        for v in vs {
            match &v.outcome {
                Outcome::Match { .. } => verified += 1,
                Outcome::CannotRun(why) => println!("{name}: {}: cannot run: {why}", v.kernel),
                Outcome::Mismatch(_) => problems.push(format!("{name}: {v}")),
            }
        }
    }
    println!(
        "{} files, {not_compiled} do not compile; {verified} kernels verified",
        files.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        verified >= MIN_SUITE_VERIFIED,
        "{verified} verified, expected at least {MIN_SUITE_VERIFIED}"
    );
}
