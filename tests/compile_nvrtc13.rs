//! `tests/data/nvrtc13/ptx/m1_*.ptx`: CUDA C++ written for issue 26 (warp-aggregated
//! histogram with `__match_any_sync`, `__reduce_*_sync` reductions, `atomicAdd(double*)`,
//! 16-bit `atomicCAS`, `atomicAdd(__half*)` and `(__half2*)`, `cuda::atomic_ref` with memory orders and scopes, `__threadfence*`,
//! cooperative-groups `coalesced_threads` and `elect.sync`), compiled by NVRTC 13 to PTX 9.x
//! for sm_75..sm_90: PTX that no ptxas for Maxwell takes. (The `m2_*` files of the same
//! folder have their own test.)
//!
//! Each file must compile for sm_50 and sm_53 with a warning about its newer `.target`, be
//! hazard-free, be listed by cuobjdump and nvdisasm exactly as we print it (with the
//! oracle), and every kernel must verify at the full launch (2 CTAs of 64 threads):
//! `ir::eval` (the PTX meaning; `redux`/`match`/`elect` from their definitions in
//! `ir::collective`) and the simulator running our emulation agree on every byte.

mod common;

use common::ptx_files::{self, Case};
use leafold::driver::{compile, Arch};
use leafold::verify::Outcome;

fn files() -> Vec<(String, String)> {
    ptx_files::read_dir("tests/data/nvrtc13/ptx", "", |n| n.starts_with("m1_"))
}

fn cases() -> Vec<Case> {
    ptx_files::for_archs(&files(), &[Arch::Sm50, Arch::Sm53])
}

#[test]
fn every_file_compiles_for_sm50_and_sm53_hazard_free_and_as_the_oracle_lists_it() {
    let cases = cases();
    assert!(cases.len() >= 2 * 6, "only {} m1_ cases", cases.len());
    ptx_files::compile_all(
        "compile_nvrtc13",
        &cases,
        |_| None,
        |case, out| {
            assert!(
                out.diagnostics
                    .iter()
                    .any(|d| d.to_string().contains("is newer than sm_53")),
                "{}: no warning about the target",
                case.name
            );
        },
    );
}

#[test]
fn every_kernel_verifies_at_the_full_launch() {
    let kernels = ptx_files::verify_all(&cases(), 3, |_, o| {
        matches!(
            o,
            Outcome::Match {
                one_thread: None,
                ..
            }
        )
    });
    assert!(kernels >= 2 * 17, "only {kernels} kernels");
}

/// The emulations are where the PTX asks for them: a butterfly for a full-warp
/// `redux`, a vote-and-shuffle loop for `match.any`, a 64-bit CAS loop for
/// `atomicAdd(double*)`, `BREV`+`FLO` for `elect`, and a `MEMBAR` of each fence's scope.
#[test]
fn the_emulations_have_their_shapes() {
    let files = files();
    let sass = |file: &str, kernel: &str| {
        let (name, ptx) = files.iter().find(|(n, _)| n == file).unwrap();
        let case = Case {
            name: name.clone(),
            ptx: ptx.clone(),
            arch: Arch::Sm50,
        };
        let mut o = ptx_files::options(&case);
        o.entries = vec![kernel.to_string()];
        compile(ptx, &o).unwrap().sass
    };
    let count = |s: &str, p: &str| {
        common::parse_lines(s)
            .iter()
            .filter(|(_, t)| t.starts_with(p))
            .count()
    };
    let r = sass("m1_reduce.ptx", "reduce_all");
    assert_eq!(count(&r, "SHFL.BFLY"), 8 * 5, "{r}");
    let r = sass("m1_reduce.ptx", "reduce_partial");
    assert!(
        count(&r, "SHFL.IDX") >= 1 && count(&r, "BFE.U32.BREV") >= 1,
        "{r}"
    );
    let h = sass("m1_histogram_match.ptx", "hist_match");
    assert!(
        count(&h, "VOTE.ANY") >= 2 && count(&h, "SHFL.IDX") == 1,
        "{h}"
    );
    let d = sass("m1_atomic_f64.ptx", "dsum");
    assert!(
        count(&d, "ATOM.E.CAS.64") == 1 && count(&d, "DADD") == 1,
        "{d}"
    );
    let e = sass("m1_elect.ptx", "elect_one");
    assert!(count(&e, "FLO.U32.SH") >= 2, "{e}");
    let f = sass("m1_atomic_ref.ptx", "fences");
    // membar.cta, membar.gl, membar.sys, then fence.acq_rel.gpu (the atomic_thread_fence).
    assert_eq!(
        (
            count(&f, "MEMBAR.CTA"),
            count(&f, "MEMBAR.GL"),
            count(&f, "MEMBAR.SYS")
        ),
        (1, 2, 1),
        "{f}"
    );
}
