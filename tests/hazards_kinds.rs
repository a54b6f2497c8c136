//! Table-driven cases for each hazard kind of the dataflow checker: a small program with
//! hand-written control fields, and the kinds it must report (an empty list: clean). Every
//! hazardous case has a clean twin differing in one control field, so a checker that
//! reports everything (or nothing) fails.

use leafold::sm50::sched::check::{analyze, HazardKind as K};
use leafold::sm50::{Ctrl, Field, Form, Inst};

fn iadd(d: u64, a: u64, b: u64) -> Inst {
    Inst::new(Form::IADD_R)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::Rb, b)
}
fn ldg(d: u64, a: u64) -> Inst {
    Inst::new(Form::LDG)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::E, 1)
        .with(Field::Size, 4)
}
fn lds(d: u64, a: u64) -> Inst {
    Inst::new(Form::LDS)
        .with(Field::Rd, d)
        .with(Field::Ra, a)
        .with(Field::Size, 4)
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
fn depbar(sb: u64, cnt: u64) -> Inst {
    Inst::new(Form::DEPBAR)
        .with(Field::Le, 1)
        .with(Field::Sb, sb)
        .with(Field::Cnt, cnt)
}
fn bra_if(p: u64) -> Inst {
    Inst::new(Form::BRA).with(Field::Pg, p)
}

/// `S<stall>`, with write barrier `w`, read barrier `r`, wait mask `b`, reuse `u`, and
/// `dual` = stall 0 with bit 4 set.
fn c(stall: u8) -> Ctrl {
    Ctrl {
        stall,
        yield_: true,
        wbar: None,
        rbar: None,
        wait: 0,
        reuse: 0,
    }
}
fn w(mut x: Ctrl, b: u8) -> Ctrl {
    x.wbar = Some(b);
    x
}
fn r(mut x: Ctrl, b: u8) -> Ctrl {
    x.rbar = Some(b);
    x
}
fn b(mut x: Ctrl, mask: u8) -> Ctrl {
    x.wait = mask;
    x
}
fn u(mut x: Ctrl, mask: u8) -> Ctrl {
    x.reuse = mask;
    x
}

struct Case {
    name: &'static str,
    insts: Vec<Inst>,
    ctrl: Vec<Ctrl>,
    targets: Vec<Option<usize>>,
    expect: Vec<K>,
}

fn case(name: &'static str, insts: Vec<Inst>, ctrl: Vec<Ctrl>, expect: &[K]) -> Case {
    Case {
        name,
        targets: vec![None; insts.len()],
        insts,
        ctrl,
        expect: expect.to_vec(),
    }
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        // Fixed latency: 6 cycles for a GPR, 13 for a predicate.
        case(
            "gpr 6",
            vec![iadd(2, 0, 0), iadd(3, 2, 2)],
            vec![c(6), c(1)],
            &[],
        ),
        case(
            "gpr 5",
            vec![iadd(2, 0, 0), iadd(3, 2, 2)],
            vec![c(5), c(1)],
            &[K::EarlyRead],
        ),
        case(
            "gpr 2+0+3: a dual pair adds no cycle",
            vec![iadd(2, 0, 0), iadd(4, 0, 0), ldg(6, 8), iadd(3, 2, 2)],
            vec![c(2), c(0), w(c(3), 0), c(1)],
            &[K::EarlyRead],
        ),
        case(
            "pred 13",
            vec![isetp(0, 1, 1), iadd(2, 0, 0).with(Field::Pg, 0)],
            vec![c(13), c(1)],
            &[],
        ),
        case(
            "pred 12",
            vec![isetp(0, 1, 1), iadd(2, 0, 0).with(Field::Pg, 0)],
            vec![c(12), c(1)],
            &[K::EarlyRead],
        ),
        // A guarded write may leave the old value (if-conversion's code): it does not end
        // the pending state of an earlier write of the same register.
        case(
            "guarded load after a fixed write, read 3 cycles after it",
            vec![iadd(2, 0, 0), ldg(2, 4).with(Field::Pg, 0), iadd(3, 2, 2)],
            vec![c(1), w(c(2), 0), b(c(1), 1)],
            &[K::EarlyRead],
        ),
        case(
            "guarded load after a fixed write, read 6 cycles after it",
            vec![iadd(2, 0, 0), ldg(2, 4).with(Field::Pg, 0), iadd(3, 2, 2)],
            vec![c(4), w(c(2), 0), b(c(1), 1)],
            &[],
        ),
        case(
            "opposite guards: the reader under the first needs its 6 cycles",
            vec![
                iadd(2, 0, 0).with(Field::Pg, 0),
                iadd(2, 5, 5).with(Field::Pg, 0).with(Field::Pgn, 1),
                iadd(3, 2, 2).with(Field::Pg, 0),
            ],
            vec![c(1), c(1), c(1)],
            &[K::EarlyRead],
        ),
        case(
            "opposite guards: the reader under the first 6 cycles after it",
            vec![
                iadd(2, 0, 0).with(Field::Pg, 0),
                iadd(2, 5, 5).with(Field::Pg, 0).with(Field::Pgn, 1),
                iadd(3, 2, 2).with(Field::Pg, 0),
            ],
            vec![c(5), c(1), c(1)],
            &[],
        ),
        case(
            "guarded load, unguarded reader waits on it",
            vec![ldg(2, 4), iadd(2, 5, 5).with(Field::Pg, 0), iadd(3, 2, 2)],
            vec![w(c(2), 0), b(c(6), 1), c(1)],
            &[],
        ),
        case(
            "guarded overwrite of a pending load without waiting",
            vec![ldg(2, 4), iadd(2, 5, 5).with(Field::Pg, 0), iadd(3, 2, 2)],
            vec![w(c(2), 0), c(6), b(c(1), 1)],
            &[K::UnwaitedOverwrite],
        ),
        // Variable latency: waits on the write scoreboard, at least 2 cycles after it is set.
        case(
            "load waited",
            vec![ldg(2, 4), iadd(3, 2, 2)],
            vec![w(c(2), 0), b(c(1), 1)],
            &[],
        ),
        case(
            "load not waited",
            vec![ldg(2, 4), iadd(3, 2, 2)],
            vec![w(c(2), 0), c(1)],
            &[K::UnwaitedRead],
        ),
        case(
            "load waited 1 cycle after",
            vec![ldg(2, 4), iadd(3, 2, 2)],
            vec![w(c(1), 0), b(c(1), 1)],
            &[K::EarlyWait],
        ),
        case(
            "load result overwritten",
            vec![ldg(2, 4), iadd(2, 0, 0)],
            vec![w(c(2), 0), c(1)],
            &[K::UnwaitedOverwrite],
        ),
        // Read barriers: a store's data register may be overwritten once it was read.
        case(
            "store source protected",
            vec![stg(4, 2), iadd(2, 0, 0)],
            vec![r(c(2), 1), b(c(1), 2)],
            &[],
        ),
        case(
            "store source overwritten",
            vec![stg(4, 2), iadd(2, 0, 0)],
            vec![r(c(2), 1), c(1)],
            &[K::SourceOverwrite],
        ),
        // Counters: DEPBAR.LE SB0, 1 waits for all but the newest operation on SB0.
        case(
            "depbar covers the older load",
            vec![ldg(2, 8), ldg(3, 8), depbar(0, 1), iadd(5, 2, 2)],
            vec![w(c(1), 0), w(c(2), 0), c(1), c(1)],
            &[],
        ),
        case(
            "depbar does not cover the newer load",
            vec![ldg(2, 8), ldg(3, 8), depbar(0, 1), iadd(5, 3, 3)],
            vec![w(c(1), 0), w(c(2), 0), c(1), c(1)],
            &[K::UnwaitedRead],
        ),
        case(
            "unbarriered load covered by a later one of its pipe",
            vec![ldg(2, 8), ldg(3, 8), iadd(5, 2, 2)],
            vec![c(1), w(c(2), 0), b(c(1), 1)],
            &[],
        ),
        case(
            "depbar across pipes",
            vec![lds(2, 8), ldg(3, 8), depbar(0, 1), iadd(5, 2, 2)],
            vec![w(c(1), 0), w(c(2), 0), c(1), c(1)],
            &[K::MixedScoreboard],
        ),
        // Control fields nvdisasm rejects.
        case(
            "barrier on fixed latency",
            vec![iadd(2, 0, 0)],
            vec![w(c(1), 0)],
            &[K::IllegalControl],
        ),
        case(
            "barrier 6",
            vec![ldg(2, 4)],
            vec![w(c(1), 6)],
            &[K::IllegalControl],
        ),
        case(
            "reuse bit 3",
            vec![iadd(2, 0, 0)],
            vec![u(c(1), 8)],
            &[K::IllegalControl],
        ),
        // Reuse: the next instruction must read the same register in the same slot.
        case(
            "reuse A kept",
            vec![iadd(2, 7, 0), iadd(3, 7, 1)],
            vec![u(c(1), 1), c(6)],
            &[],
        ),
        case(
            "reuse A on a register the instruction overwrites",
            vec![iadd(7, 7, 0), iadd(3, 7, 1)],
            vec![u(c(6), 1), c(6)],
            &[K::BadReuse],
        ),
        case(
            "store address 2 cycles after its producer",
            vec![iadd(4, 0, 0), stg(4, 2)],
            vec![c(2), c(1)],
            &[],
        ),
        case(
            "store address 1 cycle after its producer",
            vec![iadd(4, 0, 0), stg(4, 2)],
            vec![c(1), c(1)],
            &[K::EarlyRead],
        ),
        case(
            "complementary guards",
            vec![
                isetp(0, 1, 1),
                iadd(2, 0, 0).with(Field::Pg, 0).with(Field::Pgn, 1),
                iadd(2, 2, 2).with(Field::Pg, 0),
            ],
            vec![c(13), c(1), c(6)],
            &[],
        ),
        // Dual issue: ALU then memory, never two ALU instructions.
        case(
            "dual ALU + load",
            vec![iadd(2, 0, 0), ldg(4, 6)],
            vec![c(0), w(c(1), 0)],
            &[],
        ),
        case(
            "dual ALU + ALU",
            vec![iadd(2, 0, 0), iadd(4, 6, 6)],
            vec![c(0), c(1)],
            &[K::BadDualIssue],
        ),
    ];
    // Control flow: a loop whose back edge brings a short fixed latency to its head.
    let mut lp = case(
        "loop carried 19 cycles",
        vec![iadd(2, 2, 3), isetp(0, 2, 4), bra_if(0), iadd(5, 5, 5)],
        vec![c(6), c(13), c(1), c(1)],
        &[],
    );
    lp.targets = vec![None, None, Some(0), None];
    // IADD R2 (stall 6) → ISETP (stall 13) → BRA → IADD R2 reads R2 20 cycles after.
    v.push(lp);
    let mut lp = case(
        "loop carried load not waited at the head",
        vec![iadd(3, 2, 2), ldg(2, 8), isetp(0, 6, 4), bra_if(0)],
        vec![c(6), w(c(13), 0), c(13), c(1)],
        // (The load overwriting its own pending result of the previous iteration is fine:
        // one pipe completes in order.)
        &[K::UnwaitedRead],
    );
    lp.targets = vec![None, None, None, Some(0)];
    v.push(lp);
    let mut lp = case(
        "loop carried load waited at the head",
        vec![iadd(3, 2, 2), ldg(2, 8), isetp(0, 6, 4), bra_if(0)],
        vec![b(c(6), 1), w(c(13), 0), c(13), c(1)],
        &[],
    );
    lp.targets = vec![None, None, None, Some(0)];
    v.push(lp);
    v
}

#[test]
fn each_kind_is_reported_exactly_where_expected() {
    let mut failures = Vec::new();
    for cs in cases() {
        let got = analyze(&cs.insts, &cs.ctrl, &cs.targets);
        let mut kinds: Vec<K> = got.iter().map(|h| h.kind).collect();
        kinds.sort();
        kinds.dedup();
        let mut want = cs.expect.clone();
        want.sort();
        if kinds != want {
            failures.push(format!(
                "{}: want {want:?}, got {:#?}",
                cs.name,
                got.iter().map(|h| h.to_string()).collect::<Vec<_>>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn report_names_both_instructions() {
    let h = analyze(&[iadd(2, 0, 0), iadd(3, 2, 2)], &[c(3), c(1)], &[]);
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].addr, 0x10);
    assert_eq!(h[0].other, Some(0));
    assert_eq!(
        h[0].to_string(),
        "+0x0010: R2 read by `IADD R3, R2, R2` 3 cycles after `IADD R2, R0, R0` at +0x0008 (needs 6)"
    );
}
