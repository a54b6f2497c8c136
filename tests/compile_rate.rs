//! Issue 5's compile rate, kernel by kernel. A corpus kernel is *eligible* when its file uses
//! no textures or surfaces (the manifest's TEXTURE mark) and ptxas 11.8 compiles the file for
//! sm_50 (the kernel is then in ptxas's cubin). Each eligible kernel is compiled on its own
//! (`Options::entries`, ptxas's `-e`); one that fails is listed with its first diagnostic.
//! Every kernel that compiles must pass the hazard checker, and cuobjdump must print exactly
//! our listing of it. The test prints the rate, the total SASS instructions of ours and
//! ptxas's on the kernels both compile (trailing NOP padding excluded on both sides), and the
//! slowest single-kernel compile; it asserts the number compiled measured when the floor was
//! last raised, so a regression fails.
//!
//! Needs the oracle (eligibility is ptxas's verdict); without it the test prints a NOTICE and
//! passes, as every oracle test does (CI sets LEAFOLD_REQUIRE_ORACLE=1).

mod common;

use common::{corpus, par_map, ptxas_cached, CorpusFile};
use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::lower::stats::count_sass;
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::{check_code, decode_text};
use std::time::Instant;

/// Eligible kernels that compiled when this floor was last raised.
const MIN_COMPILED: usize = 360;
/// Eligible kernels as ptxas 11.8 and the manifest define them (a smaller denominator would
/// make the rate meaningless).
const ELIGIBLE: usize = 363;

struct Row {
    file: String,
    kernel: String,
    /// ptxas's instruction count (None when our decoder cannot read its code).
    ptxas: Option<u32>,
    /// Ours: (instructions, compile milliseconds), or the first diagnostic.
    ours: Result<(u32, f64), String>,
}

fn instructions(code: &[u64]) -> Option<u32> {
    let d = decode_text(code).ok()?;
    Some(count_sass(&d.0).instructions)
}

/// Every eligible kernel of `f` with ptxas's and our result; `Err` names why the file has no
/// eligible kernel.
fn file_rows(oracle: &Oracle, f: &CorpusFile) -> Result<Vec<Row>, String> {
    if f.texture {
        return Err("uses textures or surfaces".into());
    }
    let theirs = ptxas_cached(oracle, &f.ptx_for_ptxas, "sm_50")
        .map_err(|e| format!("ptxas fails: {}", e.lines().next().unwrap_or("")))?;
    let theirs = cubin::read(&theirs).unwrap_or_else(|e| panic!("{}: ptxas's cubin: {e}", f.name));
    let mut rows = Vec::new();
    for k in &theirs.kernels {
        let opts = Options {
            file_name: f.name.clone(),
            emit: Emit::Sass,
            entries: vec![k.name.clone()],
            ..Options::default()
        };
        let start = Instant::now();
        let result = compile(&f.ptx, &opts);
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let ours = match result {
            Ok(out) => {
                let c = cubin::read(&out.cubin).unwrap_or_else(|e| panic!("{}: {e}", f.name));
                let ck = c
                    .kernels
                    .iter()
                    .find(|c| c.name == k.name)
                    .unwrap_or_else(|| panic!("{} {}: not in our cubin", f.name, k.name));
                let errs = check_code(&ck.code);
                assert!(errs.is_empty(), "{} {}: {errs:#?}", f.name, k.name);
                let what = format!("{} {}", f.name, k.name);
                common::assert_cuobjdump_lists_unordered(oracle, &what, &out.cubin, &out.sass);
                let n = instructions(&ck.code)
                    .unwrap_or_else(|| panic!("{} {}: our code does not decode", f.name, k.name));
                Ok((n, ms))
            }
            Err(d) => Err(d.0.first().map_or_else(
                || "an error without a diagnostic".to_string(),
                |d| {
                    let (line, col) = d.location();
                    format!("{line}:{col}: {}", d.message)
                },
            )),
        };
        rows.push(Row {
            file: f.name.clone(),
            kernel: k.name.clone(),
            ptxas: instructions(&k.code),
            ours,
        });
    }
    Ok(rows)
}

#[test]
fn eligible_corpus_kernels_compile() {
    let Some(oracle) = Oracle::for_test("compile_rate") else {
        return;
    };
    let files = corpus();
    let results = par_map(&files, |f| file_rows(&oracle, f));
    let mut rows = Vec::new();
    let mut excluded = Vec::new();
    for (f, r) in files.iter().zip(results) {
        match r {
            Ok(v) => rows.extend(v),
            Err(why) => excluded.push((f.name.as_str(), why)),
        }
    }
    println!("files without eligible kernels:");
    for (f, why) in &excluded {
        println!("  {f}: {why}");
    }
    println!("eligible kernels that do not compile (file, kernel, first diagnostic):");
    let mut failed = 0;
    for r in &rows {
        if let Err(why) = &r.ours {
            failed += 1;
            println!("  {} {}\n      {why}", r.file, r.kernel);
        }
    }
    let eligible = rows.len();
    let compiled = eligible - failed;
    let (mut ours_total, mut theirs_total, mut both) = (0u64, 0u64, 0);
    let mut slowest: Option<(f64, &Row)> = None;
    for r in &rows {
        let Ok((n, ms)) = r.ours else { continue };
        if let Some(p) = r.ptxas {
            ours_total += u64::from(n);
            theirs_total += u64::from(p);
            both += 1;
        }
        if slowest.map_or(true, |(s, _)| ms > s) {
            slowest = Some((ms, r));
        }
    }
    println!(
        "compile rate: {compiled} of {eligible} eligible kernels ({:.1}%)",
        100.0 * compiled as f64 / eligible.max(1) as f64
    );
    println!(
        "SASS instructions on the {both} kernels both compile: leafold {ours_total}, ptxas {theirs_total} (leafold/ptxas = {:.3})",
        ours_total as f64 / theirs_total.max(1) as f64
    );
    if let Some((ms, r)) = slowest {
        println!(
            "slowest compile: {ms:.1} ms ({} {}; test profile)",
            r.file, r.kernel
        );
    }
    assert_eq!(eligible, ELIGIBLE, "the eligible set changed");
    assert!(
        compiled >= MIN_COMPILED,
        "only {compiled} eligible kernels compile (floor {MIN_COMPILED})"
    );
}
