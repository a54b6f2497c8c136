//! The scheduler's rules, one table per rule, on hand-built code: the dependency graph and
//! list scheduling ([`list::schedule`]), waits at the first consumer across blocks, the
//! end-of-block drain, dual issue ([`pairable`]) and operand reuse. Every control assignment
//! here is also run through the hazard checker.

use leafold::sm50::sched::bundle::{layout, Body};
use leafold::sm50::sched::check::check_hazards;
use leafold::sm50::sched::{access, assign_control, list, pairable, Mode};
use leafold::sm50::{Ctrl, Field, Form, Inst};

fn iadd(d: u64, a: u64, b: u64) -> Inst {
    Inst::new(Form::IADD_R)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::Rb, b)
}
fn iadd_c(d: u64, a: u64) -> Inst {
    Inst::new(Form::IADD_C)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::Cbo, 0x50)
}
fn ldg(d: u64, a: u64) -> Inst {
    Inst::new(Form::LDG)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::E, 1)
        .with(Field::Size, 4)
}
fn stg(a: u64, s: u64) -> Inst {
    Inst::new(Form::STG)
        .with(Field::Rd, s)
        .with(Field::Ra, a)
        .with(Field::E, 1)
        .with(Field::Size, 4)
}
fn sts(a: u64, s: u64) -> Inst {
    Inst::new(Form::STS)
        .with(Field::Rd, s)
        .with(Field::Ra, a)
        .with(Field::Size, 4)
}
fn lds(d: u64, a: u64) -> Inst {
    Inst::new(Form::LDS)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::Size, 4)
}
/// `inst` with the displacement `off` (and, for `Some(size)`, that size field).
fn at(inst: Inst, off: u64, size: Option<u64>) -> Inst {
    let i = inst.with(Field::Off, off);
    match size {
        Some(s) => i.with(Field::Size, s),
        None => i,
    }
}
fn s2r(d: u64, sr: u64) -> Inst {
    Inst::new(Form::S2R).with(Field::Rd, d).with(Field::Sr, sr)
}
fn isetp(p: u64, a: u64, b: u64) -> Inst {
    Inst::new(Form::ISETP_R)
        .with(Field::Pd0, p)
        .with(Field::Ra, a)
        .with(Field::Rb, b)
        .with(Field::Cmp, 1)
}
fn exit() -> Inst {
    Inst::new(Form::EXIT)
}
fn bra_if(p: u64) -> Inst {
    Inst::new(Form::BRA).with(Field::Pg, p)
}

fn text(insts: &[Inst]) -> Vec<String> {
    insts
        .iter()
        .map(|i| leafold::sm50::print(i, 0, 0))
        .collect()
}

/// Control fields for `insts`, checked for hazards.
fn assign(insts: &[Inst], targets: &[Option<usize>], mode: Mode) -> Vec<Ctrl> {
    let ctrl = assign_control(insts, targets, mode);
    let h = check_hazards(insts, &ctrl, targets);
    assert!(h.is_empty(), "{:?}: {h:?}", text(insts));
    ctrl
}

/// The scheduled order of a straight-line block ending in EXIT, as the position each input
/// instruction ends up at.
fn scheduled(insts: &[Inst]) -> Vec<Inst> {
    let targets = vec![None; insts.len()];
    let order = list::schedule(insts, &targets);
    let (new, new_targets) = list::permute(insts, &targets, &order);
    assign(&new, &new_targets, Mode::Normal);
    new
}

fn pos(code: &[Inst], inst: &Inst) -> usize {
    code.iter().position(|i| i == inst).expect("still there")
}

#[test]
fn list_scheduling_order_rules() {
    // (name, block (instruction 0 stands for the prologue), earlier, later): after
    // scheduling, `earlier` comes before `later`.
    let chain = [iadd(5, 6, 6), iadd(7, 5, 5), iadd(8, 7, 7)];
    let cases: Vec<(&str, Vec<Inst>, Inst, Inst)> = vec![
        (
            "a load goes before independent ALU work",
            [
                &[iadd(1, 1, 1)][..],
                &chain,
                &[ldg(2, 20), iadd(3, 2, 2), exit()],
            ]
            .concat(),
            ldg(2, 20),
            iadd(5, 6, 6),
        ),
        (
            "S2R (variable latency) goes early too",
            [
                &[iadd(1, 1, 1)][..],
                &chain,
                &[s2r(2, 0x21), iadd(3, 2, 2), exit()],
            ]
            .concat(),
            s2r(2, 0x21),
            iadd(5, 6, 6),
        ),
        (
            "a load does not pass a store to the same space",
            vec![
                iadd(1, 1, 1),
                stg(10, 11),
                ldg(2, 20),
                iadd(3, 2, 2),
                exit(),
            ],
            stg(10, 11),
            ldg(2, 20),
        ),
        (
            "a global load passes a shared store",
            vec![
                iadd(1, 1, 1),
                sts(10, 11),
                ldg(2, 20),
                iadd(3, 2, 2),
                exit(),
            ],
            ldg(2, 20),
            sts(10, 11),
        ),
        (
            "a shared load does not pass a shared store",
            vec![iadd(1, 1, 1), sts(10, 11), lds(2, 4), iadd(3, 2, 2), exit()],
            sts(10, 11),
            lds(2, 4),
        ),
        (
            "a shared load passes a shared store off the same base, other bytes",
            vec![
                iadd(1, 1, 1),
                sts(10, 11),
                at(lds(2, 10), 4, None),
                iadd(3, 2, 2),
                exit(),
            ],
            at(lds(2, 10), 4, None),
            sts(10, 11),
        ),
        (
            "a global load passes a global store off the same base, other bytes",
            vec![
                iadd(1, 1, 1),
                at(stg(10, 11), 8, None),
                ldg(2, 10),
                iadd(3, 2, 2),
                exit(),
            ],
            ldg(2, 10),
            at(stg(10, 11), 8, None),
        ),
        (
            "a shared load does not pass an overlapping shared store (STS.64 at 0, LDS at 4)",
            vec![
                iadd(1, 1, 1),
                at(sts(10, 12), 0, Some(5)),
                at(lds(2, 10), 4, None),
                iadd(3, 2, 2),
                exit(),
            ],
            at(sts(10, 12), 0, Some(5)),
            at(lds(2, 10), 4, None),
        ),
        (
            "a load does not pass a store off another base",
            vec![
                iadd(1, 1, 1),
                sts(10, 11),
                at(lds(2, 12), 4, None),
                iadd(3, 2, 2),
                exit(),
            ],
            sts(10, 11),
            at(lds(2, 12), 4, None),
        ),
        (
            "a clock read is a fence",
            [
                &[iadd(1, 1, 1)][..],
                &chain,
                &[s2r(2, 0x50), ldg(9, 20), exit()],
            ]
            .concat(),
            s2r(2, 0x50),
            ldg(9, 20),
        ),
        (
            "a load waits for the write of its address (RAW)",
            vec![
                iadd(1, 1, 1),
                iadd(20, 6, 6),
                ldg(2, 20),
                iadd(3, 2, 2),
                exit(),
            ],
            iadd(20, 6, 6),
            ldg(2, 20),
        ),
        (
            "a load stays after a read of its destination (WAR)",
            vec![
                iadd(1, 1, 1),
                iadd(9, 2, 2),
                ldg(2, 20),
                iadd(3, 2, 2),
                exit(),
            ],
            iadd(9, 2, 2),
            ldg(2, 20),
        ),
        (
            "the prologue stays first",
            vec![iadd(1, 1, 1), ldg(2, 20), iadd(3, 2, 2), exit()],
            iadd(1, 1, 1),
            ldg(2, 20),
        ),
    ];
    for (name, block, earlier, later) in cases {
        let code = scheduled(&block);
        let mut a = code.clone();
        let mut b = block.clone();
        a.sort_by_key(|i| format!("{i:?}"));
        b.sort_by_key(|i| format!("{i:?}"));
        assert_eq!(a, b, "{name}: same instructions");
        assert!(
            pos(&code, &earlier) < pos(&code, &later),
            "{name}: {:?}",
            text(&code)
        );
        assert_eq!(code.last(), Some(&exit()), "{name}: EXIT stays last");
    }
}

#[test]
fn blocks_keep_their_instructions() {
    // 0: prologue; 1..3: block A ending in a branch to 5; 4: block B; 5..: block C.
    let insts = vec![
        iadd(1, 1, 1),
        iadd(5, 6, 6),
        ldg(2, 20),
        bra_if(0),
        iadd(7, 7, 7),
        ldg(3, 22),
        iadd(9, 3, 2),
        exit(),
    ];
    let mut targets = vec![None; insts.len()];
    targets[3] = Some(5);
    let order = list::schedule(&insts, &targets);
    let ranges = [0..1, 1..4, 4..5, 5..8];
    for r in ranges {
        let mut got: Vec<usize> = order[r.clone()].to_vec();
        got.sort_unstable();
        assert_eq!(got, r.collect::<Vec<_>>());
    }
    assert_eq!(order[3], 3, "the branch stays last in its block");
}

#[test]
fn guarded_writes_keep_earlier_writes_pending() {
    // If-converted code: a write under a guard may leave the old value, so the write before
    // it must still be complete (scoreboard waited, fixed latency elapsed) when a reader
    // comes, and the writes of one register stay in program order. `assign` runs the hazard
    // checker, which models exactly that (tests/hazards_kinds.rs).
    let g = |i: Inst| i.with(Field::Pg, 0);
    let ng = |i: Inst| i.with(Field::Pg, 0).with(Field::Pgn, 1);
    // (name, block, writes of R5 in order, reader)
    let cases: Vec<(&str, Vec<Inst>, Vec<Inst>, Inst)> = vec![
        (
            "load, then a guarded ALU write, then a reader",
            vec![
                iadd(1, 1, 1),
                ldg(5, 20),
                isetp(0, 6, 6),
                g(iadd(5, 7, 7)),
                iadd(3, 5, 5),
                exit(),
            ],
            vec![ldg(5, 20), g(iadd(5, 7, 7))],
            iadd(3, 5, 5),
        ),
        (
            "ALU write, then a guarded load, then a reader",
            vec![
                iadd(1, 1, 1),
                isetp(0, 6, 6),
                iadd(5, 6, 6),
                g(ldg(5, 20)),
                iadd(3, 5, 5),
                exit(),
            ],
            vec![iadd(5, 6, 6), g(ldg(5, 20))],
            iadd(3, 5, 5),
        ),
        (
            "opposite guards, reader under the first",
            vec![
                iadd(1, 1, 1),
                isetp(0, 6, 6),
                g(iadd(5, 6, 6)),
                ng(ldg(5, 20)),
                g(iadd(3, 5, 5)),
                exit(),
            ],
            vec![g(iadd(5, 6, 6)), ng(ldg(5, 20))],
            g(iadd(3, 5, 5)),
        ),
    ];
    for (name, block, writes, reader) in cases {
        let targets = vec![None; block.len()];
        for mode in [Mode::Normal, Mode::InOrder, Mode::Serial] {
            assign(&block, &targets, mode);
        }
        let code = scheduled(&block);
        let at: Vec<usize> = writes.iter().map(|w| pos(&code, w)).collect();
        assert!(
            at.windows(2).all(|w| w[0] < w[1]) && at[at.len() - 1] < pos(&code, &reader),
            "{name}: {:?}",
            text(&code)
        );
    }
}

#[test]
fn waits_come_at_the_first_consumer_across_blocks() {
    // A load before a conditional branch; the fall-through block does not touch its result,
    // the join block reads it.
    let insts = vec![
        iadd(1, 1, 1),
        ldg(2, 20),
        isetp(0, 5, 5),
        bra_if(0),
        iadd(7, 7, 7),
        iadd(8, 8, 8),
        iadd(3, 2, 2),
        exit(),
    ];
    let mut targets = vec![None; insts.len()];
    targets[3] = Some(6);
    let ctrl = assign(&insts, &targets, Mode::Normal);
    let sb = ctrl[1].wbar.expect("the load has a write scoreboard");
    // (index, must wait on the load's scoreboard)
    for (k, want) in [(4, false), (5, false), (6, true), (7, false)] {
        assert_eq!(
            ctrl[k].wait & (1 << sb) != 0,
            want,
            "instruction {k}: {ctrl:?}"
        );
    }
    // The conservative assignment waits at the leader instead.
    let serial = assign(&insts, &targets, Mode::Serial);
    assert!(serial[4].wait != 0 || serial[2].wait != 0);
}

#[test]
fn block_ends_drain_what_the_next_block_reads_first() {
    // Instruction 3 is a branch target, so 2 → 3 crosses a block edge by fall-through.
    // (name, producer, consumer at the leader, minimum stall of the producer)
    let cases = [
        ("GPR", iadd(5, 6, 6), iadd(7, 5, 5), 6),
        ("predicate", isetp(0, 6, 6), bra_if(0), 13),
        ("unrelated", iadd(5, 6, 6), iadd(7, 8, 8), 1),
    ];
    for (name, producer, consumer, min) in cases {
        let insts = vec![iadd(1, 1, 1), bra_if(1), producer, consumer, exit()];
        let mut targets = vec![None; insts.len()];
        targets[1] = Some(3);
        if consumer.form == Form::BRA {
            targets[3] = Some(4);
        }
        let ctrl = assign(&insts, &targets, Mode::Normal);
        assert!(ctrl[2].stall >= min, "{name}: {ctrl:?}");
        if min == 1 {
            assert_eq!(ctrl[2].stall, 1, "{name}: no drain without a reader");
        }
    }
}

#[test]
fn dual_issue_pairs() {
    // (name, first, second, pairable)
    let cases = [
        ("ALU then load", iadd(5, 6, 6), ldg(2, 20), true),
        ("ALU then S2R", iadd(5, 6, 6), s2r(2, 0x21), true),
        ("ALU then branch", iadd(5, 6, 6), bra_if(0), true),
        ("two ALU", iadd(5, 6, 6), iadd(7, 8, 8), false),
        ("load then ALU", ldg(2, 20), iadd(5, 6, 6), false),
        ("dependent (RAW)", iadd(20, 6, 6), ldg(2, 20), false),
        ("dependent (WAR)", iadd(5, 2, 6), ldg(2, 20), false),
        ("dependent (WAW)", iadd(2, 6, 6), ldg(2, 20), false),
        ("branch first", bra_if(0), ldg(2, 20), false),
        (
            "both constant bank",
            iadd_c(5, 6),
            Inst::new(Form::LDC).with(Field::Rd, 2),
            false,
        ),
        ("one constant bank", iadd_c(5, 6), ldg(2, 20), true),
        (
            "predicate writer then its branch",
            isetp(0, 5, 5),
            bra_if(0),
            false,
        ),
    ];
    for (name, first, second, want) in cases {
        assert_eq!(
            pairable(&first, &access(&first), &second, &access(&second)),
            want,
            "{name}"
        );
        // In code: the first's stall is 0 (and its yield bit set) exactly when they pair.
        let insts = vec![iadd(1, 1, 1), first, second, exit()];
        let mut targets = vec![None; insts.len()];
        if second.form == Form::BRA {
            targets[2] = Some(3);
        }
        let ctrl = assign(&insts, &targets, Mode::InOrder);
        assert_eq!(ctrl[1].stall == 0, want, "{name}: {ctrl:?}");
        if want {
            assert!(ctrl[1].yield_, "{name}: a pair needs the yield bit");
        }
    }
    // No triples: the second of a pair never pairs again.
    let insts = vec![iadd(1, 1, 1), iadd(5, 6, 6), ldg(2, 20), ldg(3, 22), exit()];
    let ctrl = assign(&insts, &[None; 5], Mode::InOrder);
    assert_eq!((ctrl[1].stall, ctrl[2].stall), (0, 1));
}

#[test]
fn operand_reuse_flags() {
    // (name, first, second, reuse bits on the first)
    let cases = [
        ("same register, slot A", iadd(5, 2, 6), iadd(7, 2, 8), 0b001),
        ("same register, slot B", iadd(5, 6, 2), iadd(7, 8, 2), 0b010),
        ("slots A and B", iadd(5, 2, 3), iadd(7, 2, 3), 0b011),
        ("different slots", iadd(5, 2, 6), iadd(7, 8, 2), 0),
        ("overwritten by the first", iadd(2, 2, 6), iadd(7, 2, 8), 0),
        ("next is a load", iadd(5, 4, 6), ldg(7, 20), 0),
    ];
    for (name, first, second, want) in cases {
        let insts = vec![iadd(1, 1, 1), first, second, exit()];
        let ctrl = assign(&insts, &[None; 4], Mode::InOrder);
        assert_eq!(ctrl[1].reuse, want, "{name}");
    }
    // Never across a block boundary: the next instruction may be reached from elsewhere.
    let insts = vec![
        iadd(1, 1, 1),
        bra_if(0),
        iadd(5, 2, 6),
        iadd(7, 2, 8),
        exit(),
    ];
    let mut targets = vec![None; 5];
    targets[1] = Some(3);
    let ctrl = assign(&insts, &targets, Mode::InOrder);
    assert_eq!(ctrl[2].reuse, 0);
    // Serial mode flags nothing.
    let insts = vec![iadd(1, 1, 1), iadd(5, 2, 6), iadd(7, 2, 8), exit()];
    assert_eq!(assign(&insts, &[None; 4], Mode::Serial)[1].reuse, 0);
}

#[test]
fn laid_out_kernels_are_scheduled_and_hazard_free() {
    // Through `layout`: the load is hoisted above the ALU chain in Normal mode, not in
    // InOrder mode, and both are hazard-free.
    let body = vec![
        iadd(5, 6, 6),
        iadd(7, 5, 5),
        iadd(8, 7, 7),
        ldg(2, 20),
        iadd(3, 2, 8),
        stg(4, 3),
    ];
    for (mode, hoisted) in [(Mode::Normal, true), (Mode::InOrder, false)] {
        let laid = layout(
            &Body {
                insts: body.clone(),
                targets: vec![None; body.len()],
            },
            mode,
        )
        .unwrap();
        let insts: Vec<Inst> = laid.placed.iter().map(|p| p.inst).collect();
        let ctrl: Vec<Ctrl> = laid.placed.iter().map(|p| p.ctrl).collect();
        assert!(check_hazards(&insts, &ctrl, &laid.targets).is_empty());
        assert_eq!(
            insts[1] == ldg(2, 20),
            hoisted,
            "{mode:?}: {:?}",
            text(&insts)
        );
    }
}

#[test]
fn a_new_load_reclaims_a_finished_scoreboard_before_sharing_a_busy_one() {
    // All six scoreboards busy: a shared store's read barrier (its source R30 is overwritten
    // at the end) and five global loads. After 24 cycles of other work the store has read
    // R30, so a sixth load waits on (reclaims) the store's barrier, which costs nothing,
    // instead of joining the fifth load's scoreboard, which would make the fifth load's
    // reader wait for the sixth load too (`State::pick_or_share`).
    let mut insts = vec![sts(20, 30)];
    insts.extend((0..5).map(|k| ldg(2 + k, 21 + k)));
    insts.extend((0..4).map(|_| iadd(10, 10, 10)));
    insts.extend([
        ldg(7, 26),
        iadd(11, 6, 6),
        iadd(12, 7, 7),
        iadd(13, 2, 3),
        iadd(14, 4, 5),
        iadd(30, 1, 1),
        exit(),
    ]);
    let targets = vec![None; insts.len()];
    let ctrl = assign(&insts, &targets, Mode::Normal);
    let store_bar = ctrl[0]
        .rbar
        .expect("the store's source is overwritten: read barrier");
    let busy: Vec<u8> = (1..6).map(|k| ctrl[k].wbar.expect("a load")).collect();
    assert_eq!(
        busy.iter()
            .chain([&store_bar])
            .fold(0u8, |m, &b| m | 1 << b),
        0x3f,
        "six busy scoreboards: {ctrl:?}"
    );
    let sixth = 10;
    assert_eq!(ctrl[sixth].wbar, Some(store_bar), "{ctrl:?}");
    assert_ne!(ctrl[sixth].wait & (1 << store_bar), 0, "{ctrl:?}");
    // The fifth load's reader waits on the fifth load's scoreboard alone.
    assert_eq!(ctrl[sixth + 1].wait, 1 << busy[4], "{ctrl:?}");
}

#[test]
fn a_new_load_joins_the_scoreboard_whose_reader_comes_later() {
    // Six loads busy, none done. The sixth load's reader comes right after a seventh load,
    // before the seventh load's own reader; the other five loads are read after it. Joining
    // the most recently set scoreboard (the sixth load's, the choice before
    // `State::pick_or_share` weighed costs) would make the sixth load's reader wait for the
    // seventh load too; joining one read later (the fifth load's, the most recent of those)
    // costs nothing: its reader waits after the seventh load's reader anyway.
    let mut insts: Vec<Inst> = (0..6).map(|k| ldg(2 + k, 20 + k)).collect();
    insts.extend([
        ldg(8, 26),
        iadd(10, 7, 7),
        iadd(11, 8, 8),
        iadd(12, 2, 3),
        iadd(13, 4, 5),
        iadd(14, 6, 6),
        exit(),
    ]);
    let targets = vec![None; insts.len()];
    let ctrl = assign(&insts, &targets, Mode::Normal);
    let bars: Vec<u8> = (0..6).map(|k| ctrl[k].wbar.expect("a load")).collect();
    assert_eq!(bars.iter().fold(0u8, |m, &b| m | 1 << b), 0x3f, "{ctrl:?}");
    assert_eq!(ctrl[6].wbar, Some(bars[4]), "{ctrl:?}");
    assert_eq!(ctrl[6].wait, 0, "sharing, not waiting: {ctrl:?}");
    // The sixth load's reader waits on its own scoreboard only.
    assert_eq!(ctrl[7].wait, 1 << bars[5], "{ctrl:?}");
}
