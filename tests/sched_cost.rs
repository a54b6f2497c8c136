//! The static cost model (`sm50::sched::cost`): stalls add up, a wait on a scoreboard costs
//! the modelled latency of what is pending on it minus the cycles already spent, and
//! `DEPBAR.LE` waits only for the older operations.

use leafold::sm50::sched::cost::{block_cycles, cycles, latency};
use leafold::sm50::{Ctrl, Field, Form, Inst};

fn iadd(d: u64) -> Inst {
    Inst::new(Form::IADD_R).with(Field::Rd, d)
}
fn ldg(d: u64) -> Inst {
    Inst::new(Form::LDG)
        .with(Field::Rd, d)
        .with(Field::Ra, 8)
        .with(Field::E, 1)
        .with(Field::Size, 4)
}
fn c(stall: u8, wbar: Option<u8>, wait: u8) -> Ctrl {
    Ctrl {
        stall,
        yield_: true,
        wbar,
        rbar: None,
        wait,
        reuse: 0,
    }
}

#[test]
fn stalls_add_up() {
    let insts = [iadd(1), iadd(2), iadd(3)];
    assert_eq!(
        cycles(&insts, &[c(6, None, 0), c(1, None, 0), c(4, None, 0)]),
        11
    );
}

#[test]
fn a_wait_costs_the_rest_of_the_latency() {
    let lat = latency(&ldg(2));
    let insts = [ldg(2), iadd(3), iadd(4)];
    // LDG at 0 (stall 2), IADD at 2, IADD waits on SB0 until `lat`, then stalls 1.
    let ctrl = [c(2, Some(0), 0), c(1, None, 0), c(1, None, 1)];
    assert_eq!(cycles(&insts, &ctrl), lat + 1);
    // Without the wait it is just the stalls.
    let ctrl = [c(2, Some(0), 0), c(1, None, 0), c(1, None, 0)];
    assert_eq!(cycles(&insts, &ctrl), 4);
}

#[test]
fn depbar_waits_for_the_older_operations_only() {
    let lat = latency(&ldg(2));
    let depbar = Inst::new(Form::DEPBAR)
        .with(Field::Le, 1)
        .with(Field::Sb, 0)
        .with(Field::Cnt, 1);
    // Loads at 0 and 10; DEPBAR.LE SB0, 1 waits for the first (done at `lat`).
    let insts = [ldg(2), ldg(3), depbar, iadd(4)];
    let ctrl = [
        c(10, Some(0), 0),
        c(1, Some(0), 0),
        c(1, None, 0),
        c(1, None, 0),
    ];
    assert_eq!(cycles(&insts, &ctrl), lat + 2);
    let blocks = block_cycles(&insts, &ctrl, &[]);
    assert_eq!(blocks, vec![(0x8, lat + 2)]);
}
