//! `tests/data/cuda-own`: CUDA C++ written for these tests (warp intrinsics, half precision,
//! SIMD video intrinsics, 64-bit bit operations, atomics and fences, library math, loops and
//! control flow in the shapes optimisers leave, small applications), compiled to PTX by
//! nvcc 11.8 (`nvcc/`) and by LLVM's NVPTX back end (`clang/`); `gen.sh` regenerates both.
//! The corpora are other people's programs; these are the constructs users' compilers emit,
//! chosen on purpose, from two front ends.
//!
//! Every file must compile for the target its `.target` names (sm_50, sm_52 for `alloca`, or
//! sm_53 for the half-precision one), be hazard-free, be listed by cuobjdump exactly as we print it (with
//! the oracle), and every kernel must verify: `ir::eval` and the simulator running our code
//! agree on every byte of seeded random launches (a kernel whose PTX is undefined at the
//! full launch verifies at one thread per CTA, as `leafold verify` does).

mod common;

use leafold::cubin;
use leafold::driver::{compile, Arch, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

fn files() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cuda-own");
    let mut v = Vec::new();
    for front in ["nvcc", "clang"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(front))
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        names.sort();
        for p in names {
            let name = format!("{front}/{}", p.file_name().unwrap().to_string_lossy());
            v.push((name, std::fs::read_to_string(&p).unwrap()));
        }
    }
    v
}

/// The Maxwell target a file names (`.target sm_53` for the half-precision sources,
/// `.target sm_52` for `alloca`).
fn arch_of(ptx: &str) -> Arch {
    if ptx.lines().any(|l| l.trim().starts_with(".target sm_53")) {
        Arch::Sm53
    } else if ptx.lines().any(|l| l.trim().starts_with(".target sm_52")) {
        Arch::Sm52
    } else {
        Arch::Sm50
    }
}

fn options(name: &str, ptx: &str) -> Options {
    Options {
        file_name: name.to_string(),
        emit: Emit::Sass,
        arch: arch_of(ptx),
        ..Options::default()
    }
}

#[test]
fn every_file_compiles_hazard_free_and_as_cuobjdump_lists_it() {
    let oracle = Oracle::for_test("compile_cuda_own");
    let files = files();
    assert!(files.len() >= 14, "cuda-own has {} files", files.len());
    common::par_map(&files, |(name, ptx)| {
        let out = compile(ptx, &options(name, ptx)).unwrap_or_else(|d| {
            panic!(
                "{name} does not compile:\n{}",
                leafold::error::render_all(&d.0)
            )
        });
        let c = cubin::read(&out.cubin).unwrap_or_else(|e| panic!("{name}: {e}"));
        for k in &c.kernels {
            let errs = check_code(&k.code);
            assert!(errs.is_empty(), "{name} {}: {errs:#?}", k.name);
        }
        if let Some(o) = &oracle {
            common::assert_cuobjdump_lists_unordered(o, name, &out.cubin, &out.sass);
        }
    });
}

#[test]
fn every_kernel_verifies() {
    let files = files();
    let verdicts = common::par_map(&files, |(name, ptx)| {
        let opts = VerifyOptions {
            runs: 2,
            compile: options(name, ptx),
            ..VerifyOptions::default()
        };
        let v = verify_file(ptx, None, &opts).unwrap_or_else(|d| {
            panic!(
                "{name} does not compile:\n{}",
                leafold::error::render_all(&d.0)
            )
        });
        (name.clone(), v)
    });
    let mut kernels = 0;
    for (name, vs) in &verdicts {
        for v in vs {
            kernels += 1;
            match &v.outcome {
                Outcome::Match { .. } => {}
                // Reading a clock or timer makes a result time-dependent: nothing to compare.
                Outcome::CannotRun(why) if why.contains("clock") || why.contains("timer") => {}
                _ => panic!("{name}: {v}"),
            }
        }
    }
    assert!(kernels >= 40, "only {kernels} kernels");
}
