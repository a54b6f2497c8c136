//! `tests/data/corpus-nvcc`: PTX as nvcc 11.8 writes it today (cuda-samples and Rodinia, see
//! that folder's README and MANIFEST.tsv). Every file is compiled by `leafold::compile`:
//!
//! * a file that compiles is hazard-free in every kernel and, with the oracle, cuobjdump
//!   accepts the cubin and lists exactly our SASS;
//! * a file that does not compile fails only for a construct another issue owns (textures and
//!   surfaces, calls to functions without a body, indirect calls, function addresses), and
//!   every one of its diagnostics says so. Any other diagnostic (an unsupported instruction,
//!   an internal error) fails the test;
//! * the set of files that fail is exactly [`EXPECTED_FAILURES`], so a file that starts to
//!   compile (or stops) is noticed and the table is updated with the change that did it;
//! * the dynamic-parallelism files ([`DEVICE_RUNTIME`]) call the device runtime, which only
//!   nvlink resolves (against libcudadevrt): ptxas 11.8 refuses them as a whole program
//!   ("Unresolved extern function") and compiles them under `-c`. leafold does the same:
//!   whole, every diagnostic is that refusal; under `-c` the object passes the checks above.
//!   ptxas compiles the other 58 files whole.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;

/// Why a file may still fail: the construct's own issue has not landed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Owner {
    Textures,
    Calls,
}

/// The files that do not compile yet, with the construct that stops them.
const EXPECTED_FAILURES: &[(&str, Owner)] = &[];

/// The files that launch kernels from the device (dynamic parallelism): relocatable only.
const DEVICE_RUNTIME: &[&str] = &[
    "cuda-samples__Samples_3_CUDA_Features_cdpAdvancedQuicksort_cdpAdvancedQuicksort.ptx",
    "cuda-samples__Samples_3_CUDA_Features_cdpBezierTessellation_BezierLineCDP.ptx",
    "cuda-samples__Samples_3_CUDA_Features_cdpSimplePrint_cdpSimplePrint.ptx",
];

/// The construct a diagnostic names, if another issue owns it.
fn owner(message: &str) -> Option<Owner> {
    if message.contains("does not lower textures or surfaces") {
        return Some(Owner::Textures);
    }
    const CALLS: &[&str] = &[
        "unsupported call to",
        "unsupported indirect call",
        "the address of function",
        // A kernel named as a value: the device runtime's launch (dynamic parallelism).
        "undeclared name '_Z",
    ];
    CALLS
        .iter()
        .any(|c| message.contains(c))
        .then_some(Owner::Calls)
}

fn corpus() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus-nvcc/ptx");
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "ptx").then(|| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
        })
        .collect();
    v.sort();
    v
}

/// What happened to one file: `Ok(kernels)` or the owners of its failure.
type Outcome = Result<usize, Vec<Owner>>;

fn compile_one(oracle: Option<&Oracle>, name: &str, text: &str) -> Outcome {
    let relocatable = DEVICE_RUNTIME.contains(&name);
    if relocatable {
        // Whole, refused as ptxas refuses it: the device runtime is for nvlink to resolve.
        let whole = Options {
            file_name: name.to_string(),
            ..Options::default()
        };
        let d = compile(text, &whole)
            .err()
            .unwrap_or_else(|| panic!("{name}: compiles as a whole program, which ptxas refuses"));
        for diag in &d.0 {
            let text = leafold::error::render_all(std::slice::from_ref(diag));
            assert!(
                text.contains("Unresolved extern function"),
                "{name}: whole-program diagnostic other than ptxas's refusal:\n{text}"
            );
        }
    }
    let opts = Options {
        file_name: name.to_string(),
        emit: Emit::Sass,
        relocatable,
        ..Options::default()
    };
    match compile(text, &opts) {
        Ok(out) => {
            let c = cubin::read(&out.cubin).unwrap_or_else(|e| panic!("{name}: {e}"));
            for k in &c.kernels {
                let errs = check_code(&k.code);
                assert!(errs.is_empty(), "{name} {}: {errs:#?}", k.name);
            }
            if let Some(o) = oracle {
                common::assert_cuobjdump_lists_unordered(o, name, &out.cubin, &out.sass);
            }
            Ok(c.kernels.len())
        }
        Err(d) => {
            assert!(!d.0.is_empty(), "{name}: error without a diagnostic");
            let mut owners = Vec::new();
            for diag in &d.0 {
                let text = leafold::error::render_all(std::slice::from_ref(diag));
                match owner(&text) {
                    Some(o) => owners.push(o),
                    None => {
                        panic!("{name}: fails for a construct this corpus must compile:\n{text}")
                    }
                }
            }
            owners.sort_by_key(|o| *o as u8);
            owners.dedup();
            Err(owners)
        }
    }
}

#[test]
fn every_file_compiles_or_fails_only_for_textures_or_calls() {
    // (The device-runtime files compile under `-c`: see `compile_one`.)
    let oracle = Oracle::for_test("compile_corpus_nvcc");
    let files = corpus();
    assert_eq!(files.len(), 61, "the corpus has 61 files (MANIFEST.tsv)");
    let outcomes = common::par_map(&files, |(name, text)| {
        (name.clone(), compile_one(oracle.as_ref(), name, text))
    });
    let mut compiled = 0;
    let mut kernels = 0;
    let mut failed = Vec::new();
    for (name, outcome) in &outcomes {
        match outcome {
            Ok(k) => {
                compiled += 1;
                kernels += k;
            }
            Err(owners) => failed.push((name.as_str(), owners.clone())),
        }
    }
    println!(
        "{compiled} of {} corpus-nvcc files compiled ({kernels} kernels)",
        files.len()
    );
    for (name, owner) in EXPECTED_FAILURES {
        match failed.iter().find(|(n, _)| n == name) {
            None => panic!("{name} now compiles: take it out of EXPECTED_FAILURES"),
            Some((_, owners)) => assert!(
                owners.contains(owner),
                "{name}: expected to fail for {owner:?}, fails for {owners:?}"
            ),
        }
    }
    for (name, owners) in &failed {
        assert!(
            EXPECTED_FAILURES.iter().any(|(n, _)| n == name),
            "{name} fails ({owners:?}) and is not in EXPECTED_FAILURES"
        );
    }
}
