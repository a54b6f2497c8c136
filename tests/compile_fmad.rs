//! Floating-point contraction (`ir::contract`, ptxas's `--fmad=true`): a `mul` whose product
//! only feeds `add`/`sub` in its block becomes part of each as one FFMA/DFMA, as ptxas 11.8
//! does, and nothing else is contracted.
//!
//! `tests/data/fmad/cases_{a,b}.ptx` hold one case per rule, each storing its result to its
//! own offset: the cases were written to probe ptxas and the expectations below are ptxas
//! 11.8's SASS for them (read from `cuobjdump -sass`), so each test checks that:
//!
//! * our SASS has the multiset of float opcodes (FFMA, FMUL, FADD, DFMA with their
//!   modifiers) that ptxas's has, written out below, and with the oracle ptxas's listing
//!   has it too;
//! * `ir::eval` (which sees the contracted IR, as the compiler does) equals the simulator on
//!   our code and on ptxas's: ptxas's fused results agree bit for bit with the reference;
//! * `--fmad=false` contracts nothing (no FFMA/DFMA at all, as the PTX has no `fma`).
//!
//! `tests/data/fmad/cases_c.ptx` holds the cases across blocks, one kernel each: there ptxas
//! unrolls loops, so each kernel's *set* of float opcodes is compared, not their counts.

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

const A: &str = include_str!("data/fmad/cases_a.ptx");
const B: &str = include_str!("data/fmad/cases_b.ptx");
const C: &str = include_str!("data/fmad/cases_c.ptx");

fn sass(ptx: &str, fmad: bool) -> String {
    let opts = Options {
        emit: Emit::Sass,
        fmad,
        ..Options::default()
    };
    compile(ptx, &opts).expect("compiles").sass
}

/// The float opcodes of a listing (mnemonic with modifiers), sorted.
fn float_ops(listing: &str) -> Vec<String> {
    let mut v: Vec<String> = listing
        .lines()
        .filter_map(|l| {
            let body = l.split("*/").nth(1)?.trim().trim_start_matches('{').trim();
            let mut words = body.split_whitespace();
            let mut op = words.next()?;
            if op.starts_with('@') {
                op = words.next()?;
            }
            ["FFMA", "FMUL", "FADD", "DFMA", "DMUL", "DADD"]
                .iter()
                .any(|p| op.starts_with(p))
                .then(|| op.to_string())
        })
        .collect();
    v.sort();
    v
}

fn counts(ops: &[String]) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for o in ops {
        match out.iter_mut().find(|(n, _)| n == o) {
            Some((_, c)) => *c += 1,
            None => out.push((o.clone(), 1)),
        }
    }
    out
}

#[test]
fn contractions_are_ptxas_s() {
    // Case A: (single use) FFMA; B: product also stored: FMUL + FADD; C: two adds, both
    // fused; D: mul.ftz + add: apart; E: add.sat: FFMA.SAT; F: f64: DFMA; G: mul.rn and
    // H: add.rn: apart (its product is B's, found equal by value numbering); I: the add in
    // another block: apart.
    let a = float_ops(&sass(A, true));
    assert_eq!(
        counts(&a),
        counts(
            &[
                "DFMA", "FADD", "FADD", "FADD", "FADD", "FADD", "FFMA", "FFMA", "FFMA", "FFMA.SAT",
                "FMUL", "FMUL", "FMUL", "FMUL.FTZ"
            ]
            .map(String::from)
        ),
        "{a:?}"
    );
    // J/K: two products, the first fused; L: `p + p` apart; M: another block: apart; N/O:
    // constant factor/addend; P: through a `neg`; Q: both .ftz; R: .ftz on the add only.
    let b = float_ops(&sass(B, true));
    assert_eq!(
        counts(&b),
        counts(
            &[
                "FADD", "FADD", "FADD.FTZ", "FFMA", "FFMA", "FFMA", "FFMA", "FFMA", "FFMA.FTZ",
                "FMUL", "FMUL", "FMUL", "FMUL"
            ]
            .map(String::from)
        ),
        "{b:?}"
    );
    let Some(oracle) = Oracle::for_test("contractions_are_ptxas_s") else {
        return;
    };
    for (name, ptx, ours) in [("a", A, a), ("b", B, b)] {
        let cubin = oracle.ptxas(ptx, "sm_50", &[]).expect("ptxas compiles it");
        let listing = oracle
            .cuobjdump(&cubin, "-sass")
            .expect("cuobjdump lists it");
        let theirs = float_ops(&listing);
        assert_eq!(ours, theirs, "case file {name}");
    }
}

/// Each kernel's distinct float opcodes in a listing (`Function : NAME` headers), by name.
fn float_ops_per_kernel(listing: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in listing.lines() {
        match line.trim().strip_prefix("Function : ") {
            Some(name) => out.push((name.trim().to_string(), String::new())),
            None => {
                if let Some((_, text)) = out.last_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    let mut v: Vec<(String, Vec<String>)> = out
        .into_iter()
        .map(|(name, text)| {
            let mut ops = float_ops(&text);
            ops.dedup();
            (name, ops)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn contractions_across_blocks_are_ptxas_s() {
    let ours = float_ops_per_kernel(&sass(C, true));
    let fused = ["FFMA"].map(String::from).to_vec();
    let apart = ["FADD", "FMUL"].map(String::from).to_vec();
    let expected: Vec<(String, Vec<String>)> = [
        ("A", vec!["FADD".to_string(), "FFMA".to_string()]),
        ("B2", apart.clone()),
        ("B3", apart.clone()),
        ("C", fused.clone()),
        ("D", fused.clone()),
        ("E", apart.clone()),
        ("cp", fused.clone()),
        ("lc", apart.clone()),
        ("ll", apart.clone()),
        ("lp", fused.clone()),
        ("pi", fused.clone()),
        ("pp", fused),
    ]
    .into_iter()
    .map(|(n, ops)| (n.to_string(), ops))
    .collect();
    assert_eq!(ours, expected);
    let Some(oracle) = Oracle::for_test("contractions_across_blocks_are_ptxas_s") else {
        return;
    };
    let cubin = oracle.ptxas(C, "sm_50", &[]).expect("ptxas compiles it");
    let listing = oracle
        .cuobjdump(&cubin, "-sass")
        .expect("cuobjdump lists it");
    assert_eq!(float_ops_per_kernel(&listing), expected);
}

#[test]
fn fmad_false_contracts_nothing() {
    for ptx in [A, B, C] {
        let ops = float_ops(&sass(ptx, false));
        assert!(!ops.is_empty());
        assert!(
            ops.iter()
                .all(|o| !o.starts_with("FFMA") && !o.starts_with("DFMA")),
            "{ops:?}"
        );
    }
}

#[test]
fn reference_and_both_codes_agree() {
    let oracle = Oracle::for_test("reference_and_both_codes_agree");
    for fmad in [true, false] {
        for ptx in [A, B, C] {
            let mut o = VerifyOptions {
                grid: [1, 1, 1],
                block: [32, 1, 1],
                ..VerifyOptions::default()
            };
            o.compile.fmad = fmad;
            // ptxas's code is compared only where it contracts the same way.
            if let (Some(oracle), true) = (&oracle, fmad) {
                o.ptxas_cubin = Some(oracle.ptxas(ptx, "sm_50", &[]).expect("ptxas"));
            }
            let v = verify_file(ptx, None, &o).expect("verifies");
            for k in &v {
                assert!(
                    matches!(k.outcome, Outcome::Match { .. }),
                    "fmad={fmad}: {k}"
                );
            }
        }
    }
}
