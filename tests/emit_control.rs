//! Control codes and layout without the oracle: the hazard checker accepts what
//! `assign_control` produces for random straight-line and branching code (normal and serial
//! mode), rejects hand-broken control fields, and the layout has ptxas's shape.

use leafold::sm50::sched::bundle::{inst_addr, layout, Body};
use leafold::sm50::sched::check::check_hazards;
use leafold::sm50::sched::{assign_control, Mode};
use leafold::sm50::{self, Ctrl, Field, Form, Inst};
use proptest::prelude::*;

fn iadd(d: u64, a: u64, b: u64) -> Inst {
    Inst::new(Form::IADD_R)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::Rb, b)
}
fn ldg(d: u64, a: u64, wide: bool) -> Inst {
    Inst::new(Form::LDG)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::E, 1)
        .with(Field::Size, if wide { 5 } else { 4 })
}
fn stg(a: u64, s: u64) -> Inst {
    Inst::new(Form::STG)
        .with(Field::Rd, s)
        .with(Field::Ra, a)
        .with(Field::E, 1)
        .with(Field::Size, 4)
}
fn isetp(p: u64, a: u64, b: u64) -> Inst {
    Inst::new(Form::ISETP_R)
        .with(Field::Pd0, p)
        .with(Field::Ra, a)
        .with(Field::Rb, b)
        .with(Field::Cmp, 1)
}
fn guarded(i: Inst, p: u64) -> Inst {
    i.with(Field::Pg, p)
}
fn bra() -> Inst {
    Inst::new(Form::BRA)
}

/// One random instruction from a pool covering every hazard kind: fixed GPR, carry and
/// predicate results, variable-latency loads/S2R/FP64, stores (read scoreboards), guards.
fn arb_inst() -> impl Strategy<Value = Inst> {
    let r = || 0u64..8;
    let p = || 0u64..3;
    prop_oneof![
        (r(), r(), r()).prop_map(|(d, a, b)| iadd(d, a, b)),
        (r(), r(), r()).prop_map(|(d, a, b)| iadd(d, a, b).with(Field::Cc, 1)),
        (r(), r(), r()).prop_map(|(d, a, b)| iadd(d, a, b).with(Field::X, 1)),
        (r(), r(), r(), 0u64..32).prop_map(|(d, a, b, s)| Inst::new(Form::LEA_R)
            .with(Field::Rd, d)
            .with(Field::Ra, a)
            .with(Field::Rb, b)
            .with(Field::S, s)),
        (p(), r(), r()).prop_map(|(q, a, b)| isetp(q, a, b)),
        (r(), r(), p()).prop_map(|(d, a, q)| Inst::new(Form::SEL_R)
            .with(Field::Rd, d)
            .with(Field::Ra, a)
            .with(Field::Ps, q)),
        (r(), r(), r(), p()).prop_map(|(d, a, b, q)| guarded(iadd(d, a, b), q)),
        (r(), r(), any::<bool>()).prop_map(|(d, a, w)| ldg(d & !1, a & !1, w)),
        (r(), r()).prop_map(|(a, s)| stg(a & !1, s)),
        r().prop_map(|d| Inst::new(Form::S2R)
            .with(Field::Rd, d)
            .with(Field::Sr, 0x21)),
        (r(), r(), r()).prop_map(|(d, a, b)| Inst::new(Form::DADD_R)
            .with(Field::Rd, d & !1)
            .with(Field::Ra, a & !1)
            .with(Field::Rb, b & !1)),
        (r(), r()).prop_map(|(a, s)| Inst::new(Form::STS)
            .with(Field::Rd, s)
            .with(Field::Ra, a)
            .with(Field::Size, 4)),
    ]
}

/// Random code with some branches: (instructions, targets).
fn arb_code() -> impl Strategy<Value = (Vec<Inst>, Vec<Option<usize>>)> {
    (
        prop::collection::vec(arb_inst(), 1..60),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                0u64..4,
            ),
            0..4,
        ),
    )
        .prop_map(|(mut insts, branches)| {
            let mut targets = vec![None; insts.len()];
            for (at, to, p) in branches {
                let at = at.index(insts.len());
                let to = to.index(insts.len());
                let b = if p < 3 { guarded(bra(), p) } else { bra() };
                insts[at] = b;
                targets[at] = Some(to);
            }
            (insts, targets)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn assigned_control_has_no_hazards((insts, targets) in arb_code()) {
        for mode in [Mode::Normal, Mode::Serial] {
            let ctrl = assign_control(&insts, &targets, mode);
            prop_assert_eq!(ctrl.len(), insts.len());
            let errs = check_hazards(&insts, &ctrl, &targets);
            prop_assert!(errs.is_empty(), "{:?}: {:#?}", mode, errs);
        }
    }

    #[test]
    fn laid_out_code_has_no_hazards((insts, targets) in arb_code()) {
        let laid = layout(&Body { insts, targets }, Mode::Normal).unwrap();
        // Padding NOPs after the final `BRA self` are unreachable: leave them out.
        let live = laid.placed.len()
            - laid.placed.iter().rev().take_while(|p| p.inst.form == Form::NOP).count();
        let insts: Vec<Inst> = laid.placed[..live].iter().map(|p| p.inst).collect();
        let ctrl: Vec<Ctrl> = laid.placed[..live].iter().map(|p| p.ctrl).collect();
        let errs = check_hazards(&insts, &ctrl, &laid.targets);
        prop_assert!(errs.is_empty(), "{:#?}", errs);
        prop_assert_eq!(laid.code.len() % 8, 0);
    }
}

/// The checker is not vacuous: it finds the hazards it is meant to find.
#[test]
fn checker_rejects_broken_control() {
    let insts = vec![
        ldg(2, 4, false),
        iadd(3, 2, 2),             // reads the load result
        isetp(0, 3, 3),            // reads a fixed result
        guarded(iadd(5, 5, 5), 0), // reads a predicate
        stg(4, 3),                 // store reads R3 late
        iadd(3, 0, 0),             // overwrites the store's data register
    ];
    let targets = vec![None; insts.len()];
    let good = assign_control(&insts, &targets, Mode::Normal);
    assert!(check_hazards(&insts, &good, &targets).is_empty());
    // The load result is guarded by a write scoreboard the consumer waits on.
    let sb = good[0].wbar.expect("load gets a write scoreboard");
    assert_ne!(good[1].wait & (1 << sb), 0);
    // The store's data register is protected by a read scoreboard.
    let rb = good[4].rbar.expect("store gets a read scoreboard");
    assert_ne!(good[5].wait & (1 << rb), 0);
    // Stalls: ISETP result → guard needs 13 cycles, IADD → ISETP 6.
    assert!(good[1].stall >= 6);
    assert!(good[2].stall >= 13);

    let broken = |f: &dyn Fn(&mut Vec<Ctrl>)| {
        let mut c = good.clone();
        f(&mut c);
        check_hazards(&insts, &c, &targets)
    };
    assert!(!broken(&|c| c[1].wait = 0).is_empty(), "missing RAW wait");
    assert!(
        !broken(&|c| c[0].wbar = None).is_empty(),
        "missing write barrier"
    );
    assert!(!broken(&|c| c[1].stall = 5).is_empty(), "short GPR stall");
    assert!(
        !broken(&|c| c[2].stall = 12).is_empty(),
        "short predicate stall"
    );
    assert!(!broken(&|c| c[5].wait = 0).is_empty(), "missing WAR wait");
    assert!(
        !broken(&|c| c[0].stall = 1).is_empty(),
        "wait 1 cycle after barrier set"
    );
    assert!(
        !broken(&|c| c[2].wbar = Some(1)).is_empty(),
        "barrier on fixed latency"
    );
}

#[test]
fn six_scoreboards_are_recycled() {
    // Ten independent loads, then every result is read: more loads than scoreboards.
    let mut insts: Vec<Inst> = (0..10).map(|k| ldg(20 + 2 * k, 2, false)).collect();
    insts.extend((0..10).map(|k| iadd(60 + k, 20 + 2 * k, 20 + 2 * k)));
    let targets = vec![];
    let ctrl = assign_control(&insts, &targets, Mode::Normal);
    assert!(check_hazards(&insts, &ctrl, &targets).is_empty());
    for c in &ctrl {
        assert!(c.wbar.map_or(true, |b| b < 6));
    }
}

#[test]
fn layout_has_ptxas_shape() {
    let body = Body {
        insts: vec![
            iadd(0, 2, 3),
            guarded(bra(), 0),
            sm50::sched::bundle::exit(),
        ],
        targets: vec![None, Some(2), None],
    };
    let laid = layout(&body, Mode::Normal).unwrap();
    let words = &laid.code;
    // Prologue MOV R1, c[0x0][0x20] in slot 0 with stall 6.
    assert_eq!(words[1], 0x4c98078000870001);
    assert_eq!(Ctrl::from_bits(words[0] as u32 & 0x1f_ffff).stall, 6);
    // Body, EXIT (already last: not duplicated), BRA self, then NOP padding to 64 bytes.
    let texts: Vec<String> = laid
        .placed
        .iter()
        .map(|p| sm50::print(&p.inst, p.addr, 0))
        .collect();
    assert_eq!(
        texts,
        [
            "MOV R1, c[0x0][0x20]",
            "IADD R0, R2, R3",
            // EXIT is in slot 0 of bundle 1 (0x28): ptxas encodes the bundle base.
            "@P0 BRA 0x20",
            "EXIT",
            "BRA 0x30",
            "NOP",
        ]
    );
    assert_eq!(words.len(), 8);
    assert_eq!(words[6], 0xe2400fffff87000f, "BRA self as ptxas encodes it");
    assert_eq!(words[7], 0x50b0000000070f00);
    assert_eq!(laid.exit_offsets, vec![0x28]);
    assert_eq!(inst_addr(3), 0x28);
    // ptxas: EXIT and BRA self both get 0x7ff (stall 15, bit 4), padding NOPs 0x7e0.
    assert_eq!(laid.placed[3].ctrl.to_bits(), 0x7ff);
    assert_eq!(laid.placed[4].ctrl.to_bits() & 0x1f, 0x1f);
    assert_eq!(laid.placed[5].ctrl.to_bits(), 0x7e0);
}

#[test]
fn body_without_exit_gets_one() {
    let laid = layout(
        &Body {
            insts: vec![iadd(0, 2, 3)],
            targets: vec![],
        },
        Mode::Normal,
    )
    .unwrap();
    let forms: Vec<Form> = laid.placed.iter().map(|p| p.inst.form).collect();
    assert_eq!(
        forms,
        [
            Form::MOV_C,
            Form::IADD_R,
            Form::EXIT,
            Form::BRA,
            Form::NOP,
            Form::NOP
        ]
    );
}

#[test]
fn slot0_targets_encode_the_bundle_base() {
    // Target = instruction 3 of the laid-out sequence (slot 0 of bundle 1, address 0x28):
    // ptxas encodes the bundle base 0x20.
    let body = Body {
        insts: vec![
            iadd(0, 2, 3),
            iadd(4, 2, 3),
            iadd(5, 2, 3),
            guarded(bra(), 0),
        ],
        targets: vec![None, None, None, Some(2)],
    };
    let laid = layout(&body, Mode::Normal).unwrap();
    assert_eq!(
        sm50::print(&laid.placed[4].inst, laid.placed[4].addr, 0),
        "@P0 BRA 0x20"
    );
}

#[test]
fn layout_rejects_bad_targets() {
    let body = Body {
        insts: vec![bra()],
        targets: vec![Some(5)],
    };
    assert!(layout(&body, Mode::Normal).is_err());
    let body = Body {
        insts: vec![iadd(0, 1, 2)],
        targets: vec![Some(0)],
    };
    assert!(layout(&body, Mode::Normal).is_err());
    let body = Body {
        insts: vec![bra()],
        targets: vec![],
    };
    assert!(layout(&body, Mode::Normal).is_err());
}

/// The control fields of a small kernel in CuAssembler notation, pinned: a load feeding an
/// add (write scoreboard + wait), a store whose data is overwritten next (read scoreboard +
/// wait), a predicate feeding a guard (13 cycles, bit 4 clear), a carry chain (6 cycles), and
/// the ptxas tail.
#[test]
fn control_fields_snapshot() {
    let insts = vec![
        ldg(2, 4, false),
        iadd(3, 2, 2),
        isetp(0, 3, 3),
        guarded(iadd(5, 5, 5), 0),
        stg(4, 3),
        iadd(3, 0, 0),
        iadd(6, 0, 0).with(Field::Cc, 1),
        iadd(7, 1, 1).with(Field::X, 1),
        sm50::sched::bundle::exit(),
    ];
    let laid = layout(
        &Body {
            targets: vec![None; insts.len()],
            insts,
        },
        Mode::Normal,
    )
    .unwrap();
    let listing: String = laid
        .placed
        .iter()
        .map(|p| {
            format!(
                "{} /*{:04x}*/ {}\n",
                p.ctrl.cuasm(),
                p.addr,
                sm50::print(&p.inst, p.addr, p.ctrl.reuse)
            )
        })
        .collect();
    insta::assert_snapshot!(listing);
}
