//! Every word ptxas 11.8 writes decodes (issue 19 point 6). Each file of both corpora
//! (`tests/data/corpus`, the files its manifest says ptxas compiles, and
//! `tests/data/corpus-nvcc`) goes through ptxas for sm_50, sm_52 and sm_53 (ptxas picks
//! other forms there, e.g. `MUFU.SQRT`); `leafold disasm` of each cubin must print no
//! `UNKNOWN` word. Files that call device-runtime functions (the `cdp*` samples) only link
//! as relocatable code, so a file ptxas refuses is compiled again with `-c`.
//!
//! Then every kernel that uses one of the forms added for this issue (textures other than
//! TEX/TEXS/TLDS, surfaces, CSETP, BRK/EXIT on a CC test, F2I to 16 bits, MUFU.SQRT) must
//! pass the hazard checker: ptxas's control codes are right by definition, so a report would
//! mean our latency classes or operands are wrong.
//!
//! Temporary exception: video instructions (`V*`, branch `simd`) and the sm_53 half-precision
//! pairs (`HADD2`, `HMUL2`, `HFMA2`, `HSETP2`, `HSET2`, branch `half`) are described by other
//! branches; an `UNKNOWN` word that cuobjdump prints as one of those is tolerated (and
//! counted) until they are merged. The lead removes `ELSEWHERE` after merging them.

mod common;

use leafold::disasm::{listing, ListingOptions};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::{analyze, decode_text};
use leafold::sm50::{Field, Inst};

/// Mnemonic prefixes of the forms other branches add (see the module notes).
const ELSEWHERE: &[&str] = &[
    "VABSDIFF", "VADD", "VMNMX", "VSET", "VSHL", "VSHR", "VMAD", "HADD2", "HMUL2", "HFMA2",
    "HSETP2", "HSET2",
];

const ARCHS: [&str; 3] = ["sm_50", "sm_52", "sm_53"];

/// Whether `i` is one of the forms this issue added to the description.
fn new_form(i: &Inst) -> bool {
    let class = i.info().class;
    matches!(
        class,
        "CSETP" | "SUST" | "SULD" | "SURED" | "TEX_B" | "TXD" | "TLD" | "TLD4" | "TXQ"
    ) || (matches!(class, "BRK" | "EXIT") && i.get(Field::Cc) != Some(15))
        || (class == "F2I" && matches!(i.get(Field::Dt), Some(1 | 5)))
        || (class == "MUFU" && i.get(Field::Op) == Some(8))
}

/// (name, PTX as ptxas gets it) for every file of both corpora.
fn corpus_files() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = common::ptxas_corpus()
        .into_iter()
        .map(|f| (format!("corpus/{}", f.name), f.ptx_for_ptxas))
        .collect();
    let dir = std::path::Path::new("tests/data/corpus-nvcc/ptx");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    names.sort();
    for p in names {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        v.push((format!("corpus-nvcc/{name}"), text));
    }
    v
}

/// What one (file, arch) gave.
#[derive(Default)]
struct Outcome {
    words: usize,
    /// `file arch addr: word (cuobjdump's text)` of each UNKNOWN not in [`ELSEWHERE`].
    unknown: Vec<String>,
    /// UNKNOWN words of the forms other branches add.
    elsewhere: usize,
    /// Kernels with a new form, and hazard reports on them.
    checked_kernels: usize,
    hazards: Vec<String>,
    /// Reports in those kernels between instructions of older forms only.
    other_hazards: Vec<String>,
}

fn one(oracle: &Oracle, name: &str, ptx: &str, arch: &str) -> Result<Outcome, String> {
    let cubin = common::ptxas_cached(oracle, ptx, arch)
        .or_else(|_| common::ptxas_cached_with(oracle, ptx, arch, &["-c"]))
        .map_err(|e| format!("{name} {arch}: ptxas: {e}"))?;
    let parsed = leafold::cubin::read(&cubin).map_err(|e| format!("{name} {arch}: {e}"))?;
    let text = listing(&parsed, ListingOptions::default());
    let mut out = Outcome::default();
    let unknown: Vec<&str> = text.lines().filter(|l| l.contains("UNKNOWN")).collect();
    out.words = text
        .lines()
        .filter(|l| l.trim_start().starts_with("/*"))
        .count();
    if !unknown.is_empty() {
        // cuobjdump names the word: tolerate the forms other branches add.
        let theirs = oracle
            .cuobjdump(&cubin, "-sass")
            .map_err(|e| format!("{name} {arch}: cuobjdump: {e}"))?;
        let by_word: std::collections::HashMap<String, String> = theirs
            .lines()
            .filter_map(|l| {
                let w = l.rsplit("/* 0x").next()?.get(..16)?.to_string();
                let t = l.split("*/").nth(1)?.split(';').next()?.trim();
                Some((w, t.trim_start_matches(['{', ' ']).to_string()))
            })
            .collect();
        for l in unknown {
            let word = l
                .split("UNKNOWN 0x")
                .nth(1)
                .map_or("", |r| r.get(..16).unwrap_or(""));
            let what = by_word.get(word).cloned().unwrap_or_default();
            let op = what
                .split_whitespace()
                .find(|t| !t.starts_with('@'))
                .unwrap_or("");
            if ELSEWHERE.iter().any(|p| op.starts_with(p)) {
                out.elsewhere += 1;
            } else {
                out.unknown
                    .push(format!("{name} {arch}: 0x{word} (cuobjdump: {what})"));
            }
        }
    }
    for k in &parsed.kernels {
        let Ok((insts, ctrl, targets)) = decode_text(&k.code) else {
            continue; // a word of another branch's forms (counted above)
        };
        if !insts.iter().any(new_form) {
            continue;
        }
        out.checked_kernels += 1;
        for h in analyze(&insts, &ctrl, &targets) {
            let line = format!("{name} {arch} {}: {}", k.name, h.message);
            // Reports between older forms are the checker's known gaps (hazards_ptxas.rs
            // lists them); the ones that involve a new form are this test's business.
            let involved = std::iter::once(h.at).chain(h.other);
            if involved
                .into_iter()
                .any(|j| insts.get(j).is_some_and(new_form))
            {
                out.hazards.push(line);
            } else {
                out.other_hazards.push(line);
            }
        }
    }
    Ok(out)
}

#[test]
fn every_ptxas_word_of_both_corpora_decodes() {
    let Some(oracle) = Oracle::for_test("every_ptxas_word_of_both_corpora_decodes") else {
        return;
    };
    let files = corpus_files();
    let jobs: Vec<(&str, &str, &str)> = files
        .iter()
        .flat_map(|(n, p)| ARCHS.iter().map(move |a| (n.as_str(), p.as_str(), *a)))
        .collect();
    let results = common::par_map(&jobs, |(n, p, a)| one(&oracle, n, p, a));
    let mut total = Outcome::default();
    let mut failed = Vec::new();
    for r in results {
        match r {
            Ok(o) => {
                total.words += o.words;
                total.unknown.extend(o.unknown);
                total.elsewhere += o.elsewhere;
                total.checked_kernels += o.checked_kernels;
                total.hazards.extend(o.hazards);
                total.other_hazards.extend(o.other_hazards);
            }
            Err(e) => failed.push(e),
        }
    }
    println!(
        "{} files x {} archs: {} instruction lines, {} UNKNOWN, {} of other branches' forms; \
         {} kernels with the new forms checked, {} hazard reports on them ({} between older \
         forms only, not counted)",
        files.len(),
        ARCHS.len(),
        total.words,
        total.unknown.len(),
        total.elsewhere,
        total.checked_kernels,
        total.hazards.len(),
        total.other_hazards.len()
    );
    for u in total.unknown.iter().take(40) {
        println!("  {u}");
    }
    for h in total.hazards.iter().chain(&total.other_hazards).take(20) {
        println!("  {h}");
    }
    assert!(failed.is_empty(), "ptxas failed:\n{}", failed.join("\n"));
    assert!(files.len() >= 190, "only {} corpus files", files.len());
    assert!(
        total.words > 100_000,
        "only {} instruction lines",
        total.words
    );
    assert!(
        total.unknown.is_empty(),
        "{} words ptxas writes do not decode",
        total.unknown.len()
    );
    assert!(
        total.checked_kernels >= 10,
        "only {} kernels use the new forms",
        total.checked_kernels
    );
    assert!(
        total.hazards.is_empty(),
        "the hazard checker reports ptxas's own code"
    );
}
