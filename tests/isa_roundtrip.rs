//! Encode/decode round trips for every form (no oracle needed).

use leafold::sm50::{self, Inst, FORMS};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random legal field values: encode, decode to the same form and fields, encode again
    /// to the same word.
    #[test]
    fn every_form_round_trips(form_ix in 0..FORMS.len(), seed in any::<u64>()) {
        let form = FORMS[form_ix].form;
        let mut state = seed | 1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let inst = Inst::random(form, &mut next);
        let w = sm50::encode(&inst);
        let back = sm50::decode(w).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, inst, "word {:#018x}", w);
        prop_assert_eq!(sm50::encode(&back), w);
    }

    /// Any 64-bit word: decode never panics, and whatever decodes re-encodes to a word that
    /// decodes to the same instruction (bits no field covers may be dropped).
    #[test]
    fn random_words_never_panic(w in any::<u64>()) {
        if let Ok(i) = sm50::decode(w) {
            let w2 = sm50::encode(&i);
            prop_assert_eq!(sm50::decode(w2), Ok(i));
            let _ = sm50::print(&i, 0x100, 7);
            i.operands(|_| {});
        }
    }
}

#[test]
fn forms_have_distinct_opcodes_for_their_own_words() {
    // An instruction of each form must decode back to that form: no form's opcode is
    // shadowed by a more specific one. Neutral values where they are valid, else random.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for info in FORMS {
        let mut i = Inst::new(info.form);
        if !i.is_valid() {
            i = Inst::random(info.form, &mut || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            });
        }
        let d = sm50::decode(sm50::encode(&i)).expect("neutral instruction decodes");
        assert_eq!(d.form, info.form, "{}", info.name);
    }
}

#[test]
fn known_ptxas_words() {
    // From sm50-isa.md §3.2 / §3.6 (ptxas output); printed as cuobjdump prints them.
    let cases = [
        (
            0x4bd7818005070300u64,
            0x08,
            "LEA R0.CC, R3, c[0x0][0x140], 0x3",
        ),
        (
            0x1a1f010005170303,
            0x10,
            "LEA.HI.X R3, R3, c[0x0][0x144], R2, 0x3",
        ),
        (0x36d7800032070002, 0x18, "LEA R2.CC, R0, 0x320"),
        (0x5bd801c00ff70003, 0x28, "LEA.HI.X P0, R3, R0, RZ, R3"),
        (0x37d0007fffe70000, 0x30, "LEA P0, R0, R0, -0x2"),
        (0x4c98078000870001, 0x08, "MOV R1, c[0x0][0x20]"),
        (0x1c0ffffffc070101, 0x10, "IADD32I R1, R1, -0x40"),
        (0xe2400fffff87000f, 0x50, "BRA 0x50"),
        (0xf0f0000034170000, 0x10, "DEPBAR.LE SB5, 0x1"),
        (0x50b0000000070f00, 0x18, "NOP"),
        (0xe30000000007000f, 0x18, "EXIT"),
    ];
    for (w, addr, text) in cases {
        let i = sm50::decode(w).unwrap();
        assert_eq!(sm50::print(&i, addr, 0), text, "{w:#018x}");
        assert_eq!(sm50::encode(&i), w, "{text}");
    }
}

#[test]
fn operands_and_timing() {
    use leafold::sm50::{Field, Form, Operand};
    // LEA.HI.X P0, R3, R0, RZ, R3: writes R3 and P0, reads R0, R3 and the carry.
    let i = sm50::decode(0x5bd801c00ff70003).unwrap();
    let mut ops = Vec::new();
    i.operands(|o| ops.push(o));
    assert!(ops.contains(&Operand::Reg {
        reg: 3,
        width: 1,
        def: true
    }));
    assert!(ops.contains(&Operand::Reg {
        reg: 0,
        width: 1,
        def: false
    }));
    assert!(ops.contains(&Operand::Pred { pred: 0, def: true }));
    assert!(ops.contains(&Operand::Cc { def: false }));
    let t = i.timing();
    assert!(!t.variable && t.reads_cc && t.writes_pred && !t.writes_cc);
    // LDG.E.64 R2, [R4]: a pair written, a 64-bit address pair read, scoreboarded.
    let ldg = Inst::new(Form::LDG)
        .with(Field::Rd, 2)
        .with(Field::Ra, 4)
        .with(Field::E, 1)
        .with(Field::Size, 5);
    assert_eq!(sm50::print(&ldg, 8, 0), "LDG.E.64 R2, [R4]");
    let mut ops = Vec::new();
    ldg.operands(|o| ops.push(o));
    assert_eq!(
        ops,
        vec![
            Operand::Reg {
                reg: 2,
                width: 2,
                def: true
            },
            Operand::Reg {
                reg: 4,
                width: 2,
                def: false
            },
        ]
    );
    assert!(ldg.timing().variable);
}

/// The condition-code flag: `.CC` writes it, `.X` reads it, and in the control-flow forms the
/// `cc` field is a *test* of it (`CC.NEU` reads it, the default `T` reads nothing).
#[test]
fn condition_code_reads_and_writes() {
    fn cc_ops(word: u64) -> Vec<bool> {
        let mut v = Vec::new();
        sm50::decode(word).unwrap().operands(|o| {
            if let sm50::Operand::Cc { def } = o {
                v.push(def)
            }
        });
        v
    }
    let bra_t = 0xe2400fffff87000f; // BRA self (test T)
    let bra_neu = 0xe2400fffff87000d; // BRA CC.NEU self
    assert_eq!(
        sm50::print(&sm50::decode(bra_neu).unwrap(), 0x10, 0),
        "BRA CC.NEU, 0x10"
    );
    assert_eq!(cc_ops(bra_t), Vec::<bool>::new());
    assert_eq!(cc_ops(bra_neu), vec![false]);
    assert_eq!(cc_ops(0xe30000000007000f), Vec::<bool>::new()); // EXIT
    assert_eq!(cc_ops(0x4bd7818005070300), vec![true]); // LEA R0.CC, R3, c[0x0][0x140], 0x3
    assert_eq!(cc_ops(0x1a1f010005170303), vec![false]); // LEA.HI.X R3, R3, c[..], R2, 0x3
}
