//! `tests/data/cuda-own` and `tests/data/cuda-apps`: CUDA C++ written for these tests (warp intrinsics, half precision,
//! SIMD video intrinsics, 64-bit bit operations, atomics and fences, library math, loops and
//! control flow in the shapes optimisers leave, small applications), compiled to PTX by
//! nvcc 11.8 (`nvcc/`) and by LLVM's NVPTX back end (`clang/`); `gen.sh` regenerates both.
//! The corpora are other people's programs; these are the constructs users' compilers emit,
//! chosen on purpose, from two front ends. `cuda-apps/` holds application-shaped kernels
//! (sparse and dense linear algebra, image filters, n-body, Black-Scholes, stencils, softmax,
//! layer norm, k-means), compiled by nvcc 11.8 only (`cuda-apps/gen.sh`); it is also the set
//! the README's results measure as "nvcc output written by us".
//!
//! Every file must compile for the target its `.target` names (sm_50, sm_52 for `alloca`, or
//! sm_53 for the half-precision one), be hazard-free, be listed by cuobjdump exactly as we print it (with
//! the oracle), and every kernel must verify: `ir::eval` and the simulator running our code
//! agree on every byte of seeded random launches (a kernel whose PTX is undefined at the
//! full launch verifies at one thread per CTA, as `leafold verify` does).

mod common;

use common::ptx_files::{self, Case};
use leafold::driver::Arch;
use leafold::verify::Outcome;

/// Every file of `nvcc/` and `clang/`, for the Maxwell target it names (`.target sm_53`
/// for the half-precision sources, `.target sm_52` for `alloca`).
fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for front in ["nvcc", "clang"] {
        let dir = format!("tests/data/cuda-own/{front}");
        for (name, ptx) in ptx_files::read_dir(&dir, &format!("{front}/"), |_| true) {
            let arch = arch_of(&ptx);
            v.push(Case { name, ptx, arch });
        }
    }
    for (name, ptx) in ptx_files::read_dir("tests/data/cuda-apps/nvcc", "apps/", |_| true) {
        let arch = arch_of(&ptx);
        v.push(Case { name, ptx, arch });
    }
    v
}

fn arch_of(ptx: &str) -> Arch {
    if ptx.lines().any(|l| l.trim().starts_with(".target sm_53")) {
        Arch::Sm53
    } else if ptx.lines().any(|l| l.trim().starts_with(".target sm_52")) {
        Arch::Sm52
    } else {
        Arch::Sm50
    }
}

#[test]
fn every_file_compiles_hazard_free_and_as_cuobjdump_lists_it() {
    let cases = cases();
    assert!(cases.len() >= 18, "cuda-own has {} files", cases.len());
    ptx_files::compile_all("compile_cuda_own", &cases, |_| None, |_, _| {});
}

#[test]
fn every_kernel_verifies() {
    let kernels = ptx_files::verify_all(&cases(), 2, |_, o| match o {
        Outcome::Match { .. } => true,
        // Reading a clock or timer makes a result time-dependent: nothing to compare.
        Outcome::CannotRun(why) => why.contains("clock") || why.contains("timer"),
        _ => false,
    });
    assert!(kernels >= 60, "only {kernels} kernels");
}
