//! The whole corpus through `leafold::compile`: every file either compiles or gets
//! diagnostics (never a panic); every cubin produced passes the hazard checker on its decoded
//! code, and (with the oracle) cuobjdump accepts it and prints exactly our listing.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;

fn corpus() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/ptx");
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "ptx").then(|| {
                let bytes = std::fs::read(&p).unwrap();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                )
            })
        })
        .collect();
    v.sort();
    v
}

#[test]
fn corpus_compiles_or_gets_diagnostics_and_output_is_hazard_free() {
    let oracle = Oracle::for_test("compile_corpus");
    let files = corpus();
    let mut compiled = 0;
    let mut kernels = 0;
    for (name, text) in &files {
        let opts = Options {
            file_name: name.clone(),
            emit: Emit::Sass,
            ..Options::default()
        };
        let out = match compile(text, &opts) {
            Ok(o) => o,
            Err(d) => {
                assert!(!d.0.is_empty(), "{name}: error without a diagnostic");
                continue;
            }
        };
        compiled += 1;
        let c = cubin::read(&out.cubin).unwrap_or_else(|e| panic!("{name}: {e}"));
        for k in &c.kernels {
            kernels += 1;
            let errs = check_code(&k.code);
            assert!(errs.is_empty(), "{name} {}: {errs:#?}", k.name);
        }
        if let Some(o) = &oracle {
            common::assert_cuobjdump_lists_unordered(o, name, &out.cubin, &out.sass);
        }
    }
    println!(
        "{compiled} of {} corpus files compiled ({kernels} kernels)",
        files.len()
    );
    // What the build and lower stages support today compiles at least this many files; a
    // drop means a regression somewhere in the pipeline.
    assert!(compiled >= 128, "only {compiled} files compiled");
}
