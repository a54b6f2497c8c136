//! The compile / oracle / verify loop of the test sets that are folders of PTX files
//! (`tests/data/nvrtc13`, `tests/data/cuda-own`): each test file keeps only its data (which
//! files, for which architecture) and its expectations (which outcomes it accepts).
//!
//! In: [`Case`]s (a file's name, its PTX text, the architecture to compile it for). Out:
//! panics naming the file and architecture on any failure; [`verify_all`] returns the
//! number of kernels it judged, for the caller's lower bound.

use super::{assert_cuobjdump_lists_unordered, par_map};
use leafold::cubin;
use leafold::driver::{compile, Arch, Emit, Options, Output};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;
use leafold::verify::{verify_file, Outcome, Verdict, VerifyOptions};

/// One file to compile for one architecture.
pub struct Case {
    pub name: String,
    pub ptx: String,
    pub arch: Arch,
}

/// The `*.ptx` files of `dir` (relative to the crate root) whose file names pass `keep`,
/// sorted by name, as (name, text); the name is the file name, prefixed by `prefix`.
pub fn read_dir(dir: &str, prefix: &str, keep: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut paths: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with(".ptx") && keep(&n)
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = format!("{prefix}{}", p.file_name().unwrap().to_string_lossy());
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Each file once for each of `archs`.
pub fn for_archs(files: &[(String, String)], archs: &[Arch]) -> Vec<Case> {
    files
        .iter()
        .flat_map(|(name, ptx)| {
            archs.iter().map(|&arch| Case {
                name: name.clone(),
                ptx: ptx.clone(),
                arch,
            })
        })
        .collect()
}

/// The options every case compiles with: SASS for its architecture.
pub fn options(case: &Case) -> Options {
    Options {
        file_name: case.name.clone(),
        emit: Emit::Sass,
        arch: case.arch,
        ..Options::default()
    }
}

/// Every case compiles, hazard-free, and (with the oracle) cuobjdump lists it as we print
/// it; then `check` sees the output. A case `pending` names (a construct its error must
/// mention) must instead fail to compile with a located error naming it.
pub fn compile_all(
    test: &str,
    cases: &[Case],
    pending: impl Fn(&str) -> Option<&'static str> + Sync,
    check: impl Fn(&Case, &Output) + Sync,
) {
    let oracle = Oracle::for_test(test);
    par_map(cases, |case| {
        let (name, arch) = (&case.name, case.arch);
        let r = compile(&case.ptx, &options(case));
        if let Some(what) = pending(name) {
            let Err(d) = r else {
                panic!("{name} compiles now: it is no longer pending");
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
            assert_cuobjdump_lists_unordered(o, name, &out.cubin, &out.sass);
        }
        check(case, &out);
    });
}

/// Verify every kernel of every case with `runs` seeded launches; `accept(case, outcome)`
/// says whether an outcome passes (any other panics with the verdict). Returns how many
/// kernels were judged.
pub fn verify_all(cases: &[Case], runs: u32, accept: impl Fn(&Case, &Outcome) -> bool) -> usize {
    let verdicts: Vec<Vec<Verdict>> = par_map(cases, |case| {
        let opts = VerifyOptions {
            runs,
            compile: options(case),
            ..VerifyOptions::default()
        };
        verify_file(&case.ptx, None, &opts).unwrap_or_else(|d| {
            panic!(
                "{} ({:?}) does not compile:\n{}",
                case.name,
                case.arch,
                leafold::error::render_all(&d.0)
            )
        })
    });
    let mut kernels = 0;
    for (case, vs) in cases.iter().zip(&verdicts) {
        for v in vs {
            kernels += 1;
            assert!(
                accept(case, &v.outcome),
                "{} ({:?}): {v}",
                case.name,
                case.arch
            );
        }
    }
    kernels
}
