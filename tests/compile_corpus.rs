//! The whole corpus through `leafold::compile`: every file either compiles or gets
//! diagnostics (never a panic); every cubin produced passes the hazard checker on its decoded
//! code, and (with the oracle) cuobjdump accepts it and prints exactly our listing.

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_hazards;
use leafold::sm50::{self, Bundle, Field, Form};

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

fn parse_lines(out: &str) -> Vec<(u64, String)> {
    let mut v = Vec::new();
    for line in out.lines() {
        let Some(p) = line.find("/*") else { continue };
        let rest = &line[p + 2..];
        let Some(e) = rest.find("*/") else { continue };
        let Ok(addr) = u64::from_str_radix(&rest[..e], 16) else {
            continue;
        };
        let text = rest[e + 2..].split("/*").next().unwrap_or("").trim();
        v.push((addr, text.trim_end_matches(';').trim().to_string()));
    }
    v
}

/// Hazards in one kernel's `.text` (decoded; padding after the last `BRA` self dropped).
fn hazards(code: &[u64]) -> Vec<String> {
    let mut insts = Vec::new();
    let mut ctrl = Vec::new();
    for b in code.chunks(4) {
        let c = Bundle::split_ctrl(b[0]);
        for k in 0..3 {
            insts.push(sm50::decode(b[1 + k]).expect("our code decodes"));
            ctrl.push(c[k]);
        }
    }
    let mut targets = vec![None; insts.len()];
    for (n, i) in insts.iter().enumerate() {
        if matches!(i.form, Form::BRA | Form::SSY | Form::PBK) {
            let addr = (n / 3 * 32 + 8 + n % 3 * 8) as u64;
            let rel = sm50::rt::sext(i.get(Field::Rel).unwrap(), 24);
            let mut t = addr.wrapping_add(8).wrapping_add(rel);
            if t % 32 == 0 {
                t += 8;
            }
            targets[n] = Some((t / 32 * 3 + (t % 32 - 8) / 8) as usize);
        }
    }
    let live = insts.len()
        - insts
            .iter()
            .rev()
            .take_while(|i| i.form == Form::NOP)
            .count();
    check_hazards(&insts[..live], &ctrl[..live], &targets[..live])
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
            let errs = hazards(&k.code);
            assert!(errs.is_empty(), "{name} {}: {errs:#?}", k.name);
        }
        if let Some(o) = &oracle {
            let sass = o
                .cuobjdump(&out.cubin, "-sass")
                .unwrap_or_else(|e| panic!("{name}: cuobjdump rejects our cubin: {e}"));
            // cuobjdump lists kernels in file order (the reverse of PTX order); compare sets
            // of (address, text) per kernel by sorting both listings.
            let mut theirs = parse_lines(&sass);
            let mut ours = parse_lines(&out.sass);
            theirs.sort();
            ours.sort();
            assert_eq!(theirs, ours, "{name}");
        }
    }
    println!(
        "{compiled} of {} corpus files compiled ({kernels} kernels)",
        files.len()
    );
    // What the build and lower stages support today compiles at least this many files; a
    // drop means a regression somewhere in the pipeline.
    assert!(compiled >= 14, "only {compiled} files compiled");
}
