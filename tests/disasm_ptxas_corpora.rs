//! Every word ptxas 11.8 writes decodes (issue 19 point 6). Each file of both corpora
//! (`tests/data/corpus`, the files its manifest says ptxas compiles, and
//! `tests/data/corpus-nvcc`) goes through ptxas for sm_50, sm_52 and sm_53 (ptxas picks
//! other forms there, e.g. `MUFU.SQRT`); `leafold disasm` of each cubin must print no
//! `UNKNOWN` word. Files that call device-runtime functions (the `cdp*` samples) only link
//! as relocatable code, so a file ptxas refuses is compiled again with `-c`.
//!
//! Then every kernel that uses one of the forms added for this issue (textures other than
//! TEX/TEXS/TLDS, surfaces, CSETP, BRK/EXIT on a CC test, F2I to 16 bits, MUFU.SQRT) must
//! pass the hazard checker: ptxas's control codes are right by definition, so a report that
//! involves a new form would mean our latency classes or operands are wrong. And in those
//! kernels, dropping the waits that protect a new form's result before its first reader
//! must be reported (the forms take scoreboards).
//!

mod common;

use leafold::disasm::{listing, ListingOptions};
use leafold::oracle::Oracle;
use leafold::sm50::sched::access;
use leafold::sm50::sched::check::{analyze, decode_text};
use leafold::sm50::{Ctrl, Field, Form, Inst};

const ARCHS: [&str; 3] = ["sm_50", "sm_52", "sm_53"];

/// Whether `i` is one of the forms this issue added to the description.
fn new_form(i: &Inst) -> bool {
    let class = i.info().class;
    matches!(
        class,
        "CSETP" | "SUST" | "SULD" | "SURED" | "SUATOM" | "TEX_B" | "TXD" | "TLD" | "TLD4" | "TXQ"
    ) || (matches!(class, "BRK" | "EXIT") && i.get(Field::Cc) != Some(15))
        || (class == "F2I" && matches!(i.get(Field::Dt), Some(1 | 5)))
        || (class == "MUFU" && i.get(Field::Op) == Some(8))
}

/// An unconditional BRA, EXIT, RET, SYNC or BRK: layout order stops being an execution
/// path there.
fn ends_flow(i: &Inst) -> bool {
    matches!(
        i.form,
        Form::BRA | Form::EXIT | Form::RET | Form::SYNC | Form::BRK
    ) && i.get(Field::Pg) == Some(7)
        && i.get(Field::Pgn) == Some(0)
        && i.get(Field::Cc).unwrap_or(15) == 15
}

/// The first mutant per new-form producer: every wait protecting the result of
/// variable-latency `p` (a new form with a write barrier) dropped up to its first reader; `None` when there is no such reader. The checker must notice each.
fn dropped_waits(insts: &[Inst], ctrl: &[Ctrl], targets: &[Option<usize>]) -> Vec<bool> {
    let mut caught = Vec::new();
    for p in 0..insts.len() {
        if !new_form(&insts[p]) || !insts[p].info().variable_latency {
            continue;
        }
        let a = access(&insts[p]);
        // The write barrier guards p's results until a reader; the read barrier guards the
        // registers p reads late (a store's data) until an instruction overwrites one.
        let guarded = [
            (ctrl[p].wbar, a.defs.clone(), false),
            (ctrl[p].rbar, a.late_uses.clone(), true),
        ];
        for (sb, regs, overwrite) in guarded {
            let Some(sb) = sb else { continue };
            // The first reader (overwriter) in layout order, not past an unconditional branch
            // or exit (ptxas's bindless waterfall puts a SYNC in between).
            let Some(c) = (p + 1..insts.len().min(p + 64))
                .take_while(|&j| j == p + 1 || !ends_flow(&insts[j - 1]))
                .find(|&j| {
                    let b = access(&insts[j]);
                    let touched = if overwrite { &b.defs } else { &b.uses };
                    touched.iter().any(|r| regs.contains(r))
                })
            else {
                continue;
            };
            let hit = !analyze_dropped(insts, ctrl, targets, p, c, sb).is_empty();
            if !hit {
                eprintln!(
                    "missed: SB{sb} of `{}` before `{}`",
                    leafold::sm50::print(&insts[p], 0, 0),
                    leafold::sm50::print(&insts[c], 0, 0)
                );
            }
            caught.push(hit);
        }
    }
    caught
}

/// [`analyze`] with every wait on scoreboard `sb` in `(p, c]` dropped (wait bits, and a
/// `DEPBAR` on it made vacuous).
fn analyze_dropped(
    insts: &[Inst],
    ctrl: &[Ctrl],
    targets: &[Option<usize>],
    p: usize,
    c: usize,
    sb: u8,
) -> Vec<leafold::sm50::sched::check::Hazard> {
    {
        let (mut ctrl, mut insts) = (ctrl.to_vec(), insts.to_vec());
        for j in p + 1..=c {
            ctrl[j].wait &= !(1 << sb);
            let i = &mut insts[j];
            if i.form == Form::DEPBAR {
                if let Some(w) = i.get(Field::Ws) {
                    i.set(Field::Ws, w & !(1 << sb));
                }
                if i.get(Field::Le) == Some(1) && i.get(Field::Sb) == Some(u64::from(sb)) {
                    i.set(Field::Cnt, 63);
                }
            }
        }
        analyze(&insts, &ctrl, targets)
    }
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
    // Hand-written kernels that make ptxas use the texture and surface forms the corpora
    // barely touch (bindless fetches, TXD, TLD4, TXQ, SULD, SURED, the P modes).
    names.insert(0, std::path::PathBuf::from("tests/data/ptxas_forms.ptx"));
    for p in names {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p
            .strip_prefix("tests/data")
            .unwrap_or(&p)
            .to_string_lossy()
            .into_owned();
        v.push((name, text));
    }
    v
}

/// What one (file, arch) gave.
#[derive(Default)]
struct Outcome {
    words: usize,
    /// `file arch addr: word (cuobjdump's text)` of each UNKNOWN.
    unknown: Vec<String>,
    /// Kernels with a new form, and hazard reports on them.
    checked_kernels: usize,
    hazards: Vec<String>,
    /// Reports in those kernels between instructions of older forms only.
    other_hazards: Vec<String>,
    /// Dropped-wait mutants on new-form results: (tried, caught).
    mutants: (usize, usize),
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
        // Name each undecodable word by cuobjdump's text for the failure message (none is
        // tolerated: the assertion below wants every word decoded).
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
            out.unknown
                .push(format!("{name} {arch}: 0x{word} (cuobjdump: {what})"));
        }
    }
    for k in &parsed.kernels {
        let Ok((insts, ctrl, targets)) = decode_text(&k.code) else {
            continue; // an UNKNOWN word (counted above)
        };
        if !insts.iter().any(new_form) {
            continue;
        }
        out.checked_kernels += 1;
        let reports = analyze(&insts, &ctrl, &targets);
        if reports.is_empty() {
            let m = dropped_waits(&insts, &ctrl, &targets);
            out.mutants.0 += m.len();
            out.mutants.1 += m.iter().filter(|&&c| c).count();
        }
        for h in reports {
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
                total.checked_kernels += o.checked_kernels;
                total.hazards.extend(o.hazards);
                total.other_hazards.extend(o.other_hazards);
                total.mutants.0 += o.mutants.0;
                total.mutants.1 += o.mutants.1;
            }
            Err(e) => failed.push(e),
        }
    }
    println!(
        "{} files x {} archs: {} instruction lines, {} UNKNOWN; \
         {} kernels with the new forms checked, {} hazard reports on them ({} between older \
         forms only, not counted)",
        files.len(),
        ARCHS.len(),
        total.words,
        total.unknown.len(),
        total.checked_kernels,
        total.hazards.len(),
        total.other_hazards.len()
    );
    println!(
        "dropped waits on new-form results: {} of {} caught",
        total.mutants.1, total.mutants.0
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
    // The new forms are variable latency with scoreboards: a consumer that no longer waits
    // for one of their results must be reported.
    assert!(total.mutants.0 >= 10, "only {} mutants", total.mutants.0);
    assert_eq!(
        total.mutants.1, total.mutants.0,
        "dropped waits on new-form results went unnoticed"
    );
}
