//! `tests/data/nvrtc13/ptx/m2_*.ptx`: CUDA C++ written for these tests (`src/m2_*.cu`:
//! `__dp4a`/`__dp2a`, a `__nanosleep` back-off lock, bf16 math and conversions at
//! `compute_80`, `__half`/bf16 `hexp2`/`h2rcp`/tanh at `compute_90`, `__pipeline_memcpy_async`,
//! `cuda::memcpy_async` with `cuda::pipeline` (CTA and thread scope) and with `cuda::barrier`,
//! mbarrier phases through `cuda::ptx`, bf16 at `compute_90`, `__fns`), compiled to PTX 9.x
//! by NVRTC 13 (`gen.py`), the PTX that no ptxas for Maxwell accepts.
//!
//! Each file must compile for sm_50 and for sm_53, be hazard-free, be listed by cuobjdump
//! exactly as we print it (with the oracle), and every kernel must verify (`ir::eval` and the
//! simulator running our SASS agree on every byte of seeded random launches; [`TIMED`] ones
//! read a timer and cannot be compared) — except the files in [`PENDING`], which need constructs not emulated yet; for those the test checks
//! that compiling fails with a located error naming the construct, so that the list shrinks
//! as emulations land.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Arch, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

/// Files that still fail, with a construct each error list must name.
const PENDING: &[(&str, &str)] = &[];

/// Files whose kernels compile and run but cannot be compared: CCCL's `cuda::barrier` wait
/// reads `%globaltimer` for its back-off before the first test (the timer has no fixed value,
/// so `ir::eval` refuses the launch).
const TIMED: &[&str] = &["m2_barrier.ptx"];

fn files() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nvrtc13/ptx");
    let mut names: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("m2_") && n.ends_with(".ptx")
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

fn options(name: &str, arch: Arch) -> Options {
    Options {
        file_name: name.to_string(),
        emit: Emit::Sass,
        arch,
        ..Options::default()
    }
}

fn pending(name: &str) -> Option<&'static str> {
    PENDING.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
}

fn cases() -> Vec<(String, String, Arch)> {
    let mut v = Vec::new();
    for (name, ptx) in files() {
        for arch in [Arch::Sm50, Arch::Sm53] {
            v.push((name.clone(), ptx.clone(), arch));
        }
    }
    v
}

#[test]
fn every_file_compiles_hazard_free_and_as_cuobjdump_lists_it() {
    let oracle = Oracle::for_test("compile_nvrtc13_m2");
    let cases = cases();
    assert!(cases.len() >= 16, "only {} cases", cases.len());
    common::par_map(&cases, |(name, ptx, arch)| {
        let r = compile(ptx, &options(name, *arch));
        if let Some(what) = pending(name) {
            let Err(d) = r else {
                panic!("{name} compiles now: take it off PENDING");
            };
            let text = leafold::error::render_all(&d.0);
            assert!(
                text.contains(what) && text.contains(&format!("{name}:")),
                "{name}: {text}"
            );
            return;
        }
        let out = r.unwrap_or_else(|d| {
            panic!(
                "{name} ({arch:?}) does not compile:\n{}",
                leafold::error::render_all(&d.0)
            )
        });
        let c = cubin::read(&out.cubin).unwrap_or_else(|e| panic!("{name}: {e}"));
        for k in &c.kernels {
            let errs = check_code(&k.code);
            assert!(errs.is_empty(), "{name} {arch:?} {}: {errs:#?}", k.name);
        }
        if let Some(o) = &oracle {
            common::assert_cuobjdump_lists_unordered(o, name, &out.cubin, &out.sass);
        }
    });
}

#[test]
fn every_kernel_verifies_on_sm50_and_sm53() {
    let cases: Vec<_> = cases()
        .into_iter()
        .filter(|(n, _, _)| pending(n).is_none())
        .collect();
    let verdicts = common::par_map(&cases, |(name, ptx, arch)| {
        let opts = VerifyOptions {
            runs: 2,
            compile: options(name, *arch),
            ..VerifyOptions::default()
        };
        let v = verify_file(ptx, None, &opts).unwrap_or_else(|d| {
            panic!(
                "{name} does not compile:\n{}",
                leafold::error::render_all(&d.0)
            )
        });
        (format!("{name} {arch:?}"), v)
    });
    let mut kernels = 0;
    for (name, vs) in &verdicts {
        for v in vs {
            kernels += 1;
            match &v.outcome {
                Outcome::Match { .. } => {}
                Outcome::CannotRun(why)
                    if TIMED.iter().any(|t| name.starts_with(t)) && why.contains("globaltimer") => {
                }
                _ => panic!("{name}: {v}"),
            }
        }
    }
    assert!(kernels >= 14, "only {kernels} kernels");
}
