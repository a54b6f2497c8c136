//! `tests/data/nvrtc13/ptx/m2_*.ptx`: CUDA C++ written for these tests (`src/m2_*.cu`:
//! `__dp4a`/`__dp2a`, a `__nanosleep` back-off lock, bf16 math and conversions at
//! `compute_80`, `__half`/bf16 `hexp2`/`h2rcp`/tanh at `compute_90`, `__pipeline_memcpy_async`,
//! `cuda::memcpy_async` with `cuda::pipeline` (CTA and thread scope) and with `cuda::barrier`,
//! mbarrier phases through `cuda::ptx`, bf16 at `compute_90`, `__fns`, producer/consumer
//! kernels in which only some warps wait: two `cuda::barrier`s polled by phase parity and a
//! partitioned `cuda::pipeline`), compiled to PTX 9.x
//! by NVRTC 13 (`gen.py`), the PTX that no ptxas for Maxwell accepts.
//!
//! Each file must compile for sm_50 and for sm_53, be hazard-free, be listed by cuobjdump
//! exactly as we print it (with the oracle), and every kernel must verify (`ir::eval` and the
//! simulator running our SASS agree on every byte of seeded random launches; [`TIMED`] ones
//! read a timer and cannot be compared) — except the files in [`PENDING`], which need constructs not emulated yet; for those the test checks
//! that compiling fails with a located error naming the construct, so that the list shrinks
//! as emulations land.

mod common;

use common::ptx_files::{self, Case};
use leafold::driver::Arch;
use leafold::verify::Outcome;

/// Files that still fail, with a construct each error list must name.
const PENDING: &[(&str, &str)] = &[];

/// Files whose kernels compile and run but cannot be compared: CCCL's `cuda::barrier` wait
/// reads `%globaltimer` for its back-off before the first test (the timer has no fixed value,
/// so `ir::eval` refuses the launch).
const TIMED: &[&str] = &["m2_barrier.ptx"];

/// Files that compile and pass the oracle but whose verification is left out, with why.
/// (`m2_pipeline.ptx`, a CTA-scope `cuda::pipeline` in which every thread produces and
/// consumes, was here while `ir::eval`'s race shadow made every spinning poll walk a list
/// that grew by the same cells on each round: quadratic, minutes per launch. It verifies.)
const UNVERIFIED: &[&str] = &[];

fn pending(name: &str) -> Option<&'static str> {
    PENDING.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
}

fn cases() -> Vec<Case> {
    let files = ptx_files::read_dir("tests/data/nvrtc13/ptx", "", |n| n.starts_with("m2_"));
    ptx_files::for_archs(&files, &[Arch::Sm50, Arch::Sm53])
}

#[test]
fn every_file_compiles_hazard_free_and_as_cuobjdump_lists_it() {
    let cases = cases();
    assert!(cases.len() >= 2 * 13, "only {} cases", cases.len());
    ptx_files::compile_all("compile_nvrtc13_m2", &cases, pending, |_, _| {});
}

#[test]
fn every_kernel_verifies_on_sm50_and_sm53() {
    let cases: Vec<_> = cases()
        .into_iter()
        .filter(|c| pending(&c.name).is_none() && !UNVERIFIED.contains(&c.name.as_str()))
        .collect();
    let kernels = ptx_files::verify_all(&cases, 2, |case, o| match o {
        Outcome::Match { .. } => true,
        Outcome::CannotRun(why) => {
            TIMED.contains(&case.name.as_str()) && why.contains("globaltimer")
        }
        _ => false,
    });
    assert!(kernels >= 2 * 12, "only {kernels} kernels");
}
