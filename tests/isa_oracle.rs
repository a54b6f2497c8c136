//! Random instructions of every form, with random legal control words, through
//! `nvdisasm -b SM50 -hex`: our printer must produce exactly nvdisasm's text.
//!
//! Also checks that the control fields nvdisasm rejects are the ones `Ctrl::validate`
//! rejects.

mod common;

use common::Rng;
use leafold::oracle::Oracle;
use leafold::sm50::{self, Bundle, Ctrl, Form, Inst, FORMS};

/// A random control field that nvdisasm accepts for an instruction of this latency class,
/// never forming a dual-issue pair (stall 0 with bit 4 set), so each line stands alone.
fn random_ctrl(rng: &mut Rng, variable: bool) -> Ctrl {
    let r = rng.next();
    let bar = |v: u64| {
        if v % 7 == 6 {
            None
        } else {
            Some((v % 7) as u8)
        }
    };
    let stall = (r & 0xf) as u8;
    Ctrl {
        stall,
        yield_: stall != 0 && r >> 4 & 1 != 0,
        wbar: if variable { bar(r >> 8) } else { None },
        rbar: if variable { bar(r >> 16) } else { None },
        wait: (r >> 24 & 0x3f) as u8,
        reuse: (r >> 32 & 7) as u8,
    }
}

/// Whether `nvdisasm -b SM50` names `i` differently from the sm_52/53 name we print:
/// `MUFU.SQRT` (op 8) is INVALIDMUFUOPCODE8 there; [`mufu_sqrt_prints_like_nvdisasm_sm52`]
/// checks it against SM52 and SM53.
fn sm52_only(i: &Inst) -> bool {
    i.form == Form::MUFU && i.get(sm50::Field::Op) == Some(8)
}

/// Disassemble `insts` with their control fields; returns (ours, nvdisasm's) per line.
fn check_batch(
    oracle: &Oracle,
    insts: &[(Inst, Ctrl)],
) -> Result<Vec<(String, String, u64)>, String> {
    // The half-precision forms decode only under SM53 (a superset of SM50's decoding).
    let arch = if insts.iter().any(|(i, _)| i.form.needs_sm53()) {
        "SM53"
    } else {
        "SM50"
    };
    check_batch_arch(oracle, insts, arch)
}

/// [`check_batch`] with `nvdisasm -b <arch>`.
fn check_batch_arch(
    oracle: &Oracle,
    insts: &[(Inst, Ctrl)],
    arch: &str,
) -> Result<Vec<(String, String, u64)>, String> {
    let (words, addrs) = common::bundle_words(insts);
    let ours = insts
        .iter()
        .zip(addrs)
        .map(|((i, c), addr)| (addr, sm50::print(i, addr, c.reuse), sm50::encode(i)));
    let out = oracle
        .nvdisasm_raw_arch(&words, arch)
        .map_err(|e| e.to_string())?;
    let theirs: std::collections::HashMap<u64, String> =
        common::parse_lines(&out).into_iter().collect();
    Ok(ours
        .into_iter()
        .map(|(a, t, w)| (t, theirs.get(&a).cloned().unwrap_or_default(), w))
        .collect())
}

#[test]
fn printer_matches_nvdisasm_on_random_instructions() {
    let Some(oracle) = Oracle::for_test("isa_oracle") else {
        return;
    };
    // A fixed seed keeps failures reproducible; LEAFOLD_ISA_SEED explores others.
    let seed = std::env::var("LEAFOLD_ISA_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0x1eaf_01d5_eed5_0001);
    println!("seed {seed}");
    let mut rng = Rng(seed | 1);
    let per_form = (2400 / FORMS.len()).max(24);
    let mut total = 0;
    let mut bad = Vec::new();
    for info in FORMS {
        let insts: Vec<(Inst, Ctrl)> = (0..per_form)
            .map(|_| {
                let mut i = Inst::random(info.form, &mut || rng.next());
                while sm52_only(&i) {
                    i = Inst::random(info.form, &mut || rng.next());
                }
                let c = random_ctrl(&mut rng, info.variable_latency);
                (i, c)
            })
            .collect();
        match check_batch(&oracle, &insts) {
            Ok(lines) => {
                for (ours, theirs, w) in lines {
                    total += 1;
                    if ours != theirs {
                        bad.push(format!(
                            "{:<10} {w:#018x}\n   ours: {ours}\n  nvdis: {theirs}",
                            info.name
                        ));
                    }
                }
            }
            Err(e) => bad.push(format!("{}: nvdisasm rejected the batch: {e}", info.name)),
        }
    }
    println!(
        "{} instructions over {} forms, {} mismatches",
        total,
        FORMS.len(),
        bad.len()
    );
    // At most two examples per form, so one broken form does not hide the others.
    let mut shown: std::collections::HashMap<String, usize> = Default::default();
    for b in &bad {
        let form = b.split([' ', ':']).next().unwrap_or("").to_string();
        let n = shown.entry(form).or_default();
        *n += 1;
        if *n <= 2 {
            println!("{b}");
        }
    }
    assert!(total >= 2000, "only {total} instructions checked");
    assert!(bad.is_empty(), "{} mismatches", bad.len());
}

#[test]
fn mufu_sqrt_prints_like_nvdisasm_sm52() {
    let Some(oracle) = Oracle::for_test("isa_oracle") else {
        return;
    };
    let mut rng = Rng(0x5e52_0001);
    let insts: Vec<(Inst, Ctrl)> = (0..24)
        .map(|_| {
            let mut i = Inst::random(Form::MUFU, &mut || rng.next());
            i.set(sm50::Field::Op, 8);
            (i, random_ctrl(&mut rng, true))
        })
        .collect();
    for arch in ["SM52", "SM53"] {
        let lines = check_batch_arch(&oracle, &insts, arch).unwrap();
        for (ours, theirs, w) in &lines {
            assert!(ours.contains("MUFU.SQRT"), "{ours}");
            assert_eq!(ours, theirs, "{arch} {w:#018x}");
        }
    }
}

#[test]
fn illegal_control_fields_are_rejected_by_both() {
    let Some(oracle) = Oracle::for_test("isa_oracle") else {
        return;
    };
    let iadd = Inst::new(Form::IADD_R);
    let ldg = Inst::new(Form::LDG);
    let ok = Ctrl {
        stall: 1,
        ..Ctrl::NEUTRAL
    };
    let cases = [
        (
            ldg,
            Ctrl {
                wbar: Some(6),
                ..ok
            },
            true,
        ),
        (ldg, Ctrl { reuse: 8, ..ok }, true),
        (
            ldg,
            Ctrl {
                rbar: Some(6),
                ..ok
            },
            true,
        ),
        (
            iadd,
            Ctrl {
                wbar: Some(0),
                ..ok
            },
            false,
        ),
        (
            iadd,
            Ctrl {
                rbar: Some(3),
                ..ok
            },
            false,
        ),
        (iadd, Ctrl { reuse: 8, ..ok }, false),
        (
            ldg,
            Ctrl {
                wbar: Some(5),
                rbar: Some(0),
                ..ok
            },
            true,
        ),
        (
            iadd,
            Ctrl {
                reuse: 7,
                wait: 0x3f,
                ..ok
            },
            false,
        ),
    ];
    for (inst, ctrl, variable) in cases {
        let ours = ctrl.validate(variable).is_ok();
        let b = Bundle {
            ctrl: [ctrl, Ctrl::NEUTRAL, Ctrl::NEUTRAL],
            insts: [sm50::encode(&inst), 0x50b0000000070f00, 0x50b0000000070f00],
        };
        let mut words = vec![b.ctrl_word()];
        words.extend(b.insts);
        let theirs = oracle.nvdisasm_raw(&words).is_ok();
        // nvdisasm 11.8 accepts barrier 6 and reuse bit 3 on variable-latency instructions
        // (measured here, although sm50-isa.md says it rejects them); we stay stricter there
        // and never emit them. Everything nvdisasm rejects, we must reject too, and on
        // fixed-latency instructions the two must agree exactly.
        if !theirs {
            assert!(
                !ours,
                "nvdisasm rejects {ctrl:?} on {:?} but we accept it",
                inst.form
            );
        }
        if !variable {
            assert_eq!(ours, theirs, "{ctrl:?} on {:?}", inst.form);
        }
    }
}
