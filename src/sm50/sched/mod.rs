//! Control codes: stall counts, scoreboards, wait masks and yield bits (sm50-isa.md §1–§2).
//!
//! In: a function's SM50 instructions in layout order, with the instruction index each branch
//! goes to. Out: one [`Ctrl`] per instruction, every field legal for nvdisasm
//! ([`Ctrl::validate`]).
//!
//! The model (latencies as ptxas's stall counts imply them, sm50-isa.md §2.2):
//! * A **fixed-latency** result is ready 6 cycles after issue (GPRs and the carry flag) or
//!   13 cycles (predicates). The stall field of the instruction before a consumer is raised
//!   until the consumer issues at least that late.
//! * A **variable-latency** result (loads, S2R, conversions, FP64, MUFU, ...) gets a write
//!   scoreboard; every instruction that reads or overwrites it first waits on that scoreboard.
//!   A variable-latency instruction whose GPR (or carry) sources any other instruction of the
//!   function overwrites also gets a read scoreboard; an overwriter in the same straight-line
//!   region waits on it, one elsewhere is covered by its block leader's wait. Predicate operands are read at issue (ptxas overwrites an LD's predicate without
//!   waiting), so they never need a read scoreboard.
//! * A wait comes at least 2 cycles after the instruction that set the scoreboard (barriers
//!   become active one cycle late).
//! * Scoreboards are counters: when all six are busy, the oldest one is reused after the
//!   instruction waits on it, which is always correct (a wait waits for every operation on it).
//!
//! Control flow is handled the simplest correct way: a block *leader* (a branch target, or the
//! instruction after a branch, EXIT, SYNC, BRK, RET, CAL or BRX) waits on every scoreboard the
//! function uses (unless it is itself an operand-free jump, whose target waits instead), and the last instruction before a leader (and every control transfer) stalls
//! until every fixed-latency result is ready. So no hazard crosses a block edge, along any path.
//! The scheduling issue will replace this with a dataflow analysis.
//!
//! Fixed stalls after control instructions follow ptxas: 13 after BRA/SYNC/BRK/RET/CAL/BRX,
//! 15 after EXIT and BAR, 5 after MEMBAR. No dual issue (every stall is at least 1) and no
//! operand reuse (reuse caches are an optimisation; leaving them off is always correct).
//!
//! Yield bit: ptxas sets bit 4 on most instructions and clears it on predicate writers whose
//! stall covers the predicate latency (stall ≥ 12), and on every stall of exactly 12 (all 404
//! such instructions in 60 corpus kernels); we do the same.
//!
//! [`Mode::Serial`] is a debugging mode: every instruction stalls 15 cycles and waits on every
//! scoreboard still pending, so any remaining hazard must be in the model, not the assignment.

pub mod bundle;
pub mod check;
pub mod cost;

use super::{Ctrl, Inst, Operand};

/// How control codes are assigned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Minimal stalls and waits the latency model allows.
    #[default]
    Normal,
    /// Wait on everything and stall 15 after every instruction (hazard bisection).
    Serial,
}

/// Cycles from a fixed-latency GPR or carry-flag write to its first reader.
pub const LAT_GPR: u32 = 6;
/// Cycles from a fixed-latency predicate write to its first reader.
pub const LAT_PRED: u32 = 13;
/// Cycles from setting a scoreboard to the first instruction waiting on it.
pub const LAT_BARRIER: u32 = 2;

/// A register-like resource: GPR 0..=254, predicate P0..P6 at `PRED + p`, the carry flag.
pub type Res = usize;
pub const PRED: Res = 256;
pub const CC: Res = 264;
pub const NUM_RES: usize = 265;

/// The registers an instruction reads and writes, as [`Res`] indices (RZ and PT excluded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    pub uses: Vec<Res>,
    pub defs: Vec<Res>,
    /// The subset of `uses` that a variable-latency instruction may read after issue (GPRs
    /// and the carry flag; not predicates, not the guard).
    pub late_uses: Vec<Res>,
}

/// What `inst` reads and writes, including its guard predicate.
pub fn access(inst: &Inst) -> Access {
    let mut a = Access::default();
    if let (Some(pg), Some(_)) = (inst.get(super::Field::Pg), inst.get(super::Field::Pgn)) {
        if pg != 7 {
            a.uses.push(PRED + pg as usize);
        }
    }
    inst.operands(|o| match o {
        Operand::Reg { reg, width, def } => {
            for r in reg as usize..(reg as usize + width as usize).min(255) {
                if def {
                    a.defs.push(r);
                } else {
                    a.uses.push(r);
                    a.late_uses.push(r);
                }
            }
        }
        Operand::Pred { pred, def } => {
            if def {
                a.defs.push(PRED + pred as usize)
            } else {
                a.uses.push(PRED + pred as usize)
            }
        }
        Operand::Cc { def } => {
            if def {
                a.defs.push(CC)
            } else {
                a.uses.push(CC);
                a.late_uses.push(CC);
            }
        }
    });
    a
}

/// Latency of a fixed-latency write to `r`.
pub fn fixed_latency(r: Res) -> u32 {
    if (PRED..CC).contains(&r) {
        LAT_PRED
    } else {
        LAT_GPR
    }
}

/// Whether the instruction transfers control (the next instruction starts a block).
pub fn is_control(inst: &Inst) -> bool {
    matches!(
        inst.info().class,
        "BRA" | "BRX" | "SYNC" | "BRK" | "RET" | "EXIT" | "CAL"
    )
}

/// The stall ptxas always puts after this instruction (0 = no minimum of its own).
pub fn min_stall_after(inst: &Inst) -> u8 {
    match inst.info().class {
        "EXIT" | "BAR" => 15,
        "BRA" | "BRX" | "SYNC" | "BRK" | "RET" | "CAL" => 13,
        "MEMBAR" => 5,
        _ => 1,
    }
}

/// An operand-free control transfer (`BRA` with no guard, `EXIT`, ...): as a block leader it
/// needs no waits, because it reads and writes nothing and the block it transfers to waits
/// for itself. (ptxas's `BRA self` after the final `EXIT` carries no wait.)
pub fn bare_transfer(inst: &Inst, access: &Access) -> bool {
    is_control(inst) && access.uses.is_empty() && access.defs.is_empty()
}

/// Which instructions start a block: index 0, branch targets, and every instruction after a
/// control transfer. `targets[i]` is the target index of branch `i` (out-of-range ignored).
pub fn leaders(insts: &[Inst], targets: &[Option<usize>]) -> Vec<bool> {
    let mut l = vec![false; insts.len()];
    if let Some(first) = l.first_mut() {
        *first = true;
    }
    for (i, inst) in insts.iter().enumerate() {
        if let Some(Some(t)) = targets.get(i) {
            if *t < insts.len() {
                l[*t] = true;
            }
        }
        if is_control(inst) && i + 1 < insts.len() {
            l[i + 1] = true;
        }
    }
    l
}

/// Assign a control field to every instruction. `targets[i]` is the index of the instruction
/// branch `i` jumps to (`None` for non-branches; a shorter slice means no more branches).
pub fn assign_control(insts: &[Inst], targets: &[Option<usize>], mode: Mode) -> Vec<Ctrl> {
    let leaders = leaders(insts, targets);
    let access: Vec<Access> = insts.iter().map(access).collect();
    let mut ctrl = match mode {
        Mode::Normal => assign_normal(insts, &access, &leaders),
        Mode::Serial => assign_serial(insts, &access),
    };
    // Leaders wait on every scoreboard used anywhere (a jump may arrive from any block).
    let used = ctrl.iter().fold(0u8, |m, c| {
        m | c.wbar.map_or(0, |b| 1 << b) | c.rbar.map_or(0, |b| 1 << b)
    });
    // The function entry starts with nothing pending, unless something branches back to it.
    let entry_targeted = targets.contains(&Some(0));
    for (k, (c, &lead)) in ctrl.iter_mut().zip(&leaders).enumerate() {
        if lead && (k > 0 || entry_targeted) && !bare_transfer(&insts[k], &access[k]) {
            c.wait |= used;
        }
    }
    for (c, inst) in ctrl.iter_mut().zip(insts) {
        c.yield_ = !(c.stall == 12 || (inst.timing().writes_pred && c.stall >= 12));
        debug_assert_eq!(c.validate(inst.info().variable_latency), Ok(()));
    }
    ctrl
}

fn bit(b: u8) -> u8 {
    1 << b
}

/// Serial mode: stall 15 everywhere; every variable-latency instruction takes scoreboard 0 for
/// its results and 1 for its sources, and the next instruction waits on both.
fn assign_serial(insts: &[Inst], access: &[Access]) -> Vec<Ctrl> {
    let mut out = Vec::with_capacity(insts.len());
    let mut pending = 0u8;
    for (inst, a) in insts.iter().zip(access) {
        let mut c = Ctrl {
            stall: 15,
            yield_: true,
            wbar: None,
            rbar: None,
            wait: pending,
            reuse: 0,
        };
        pending = 0;
        if inst.info().variable_latency {
            if !a.defs.is_empty() {
                c.wbar = Some(0);
                pending |= 1;
            }
            if !a.late_uses.is_empty() {
                c.rbar = Some(1);
                pending |= 2;
            }
        }
        out.push(c);
    }
    out
}

/// Straight-line state of the normal assignment.
struct State {
    /// Cycle at which a fixed-latency result becomes readable.
    ready: Vec<u32>,
    /// Scoreboards guarding a pending variable-latency write of the resource.
    wmask: Vec<u8>,
    /// Scoreboards guarding a pending read of the resource by a variable-latency instruction.
    rmask: Vec<u8>,
    /// Issue cycle of the last instruction that set each scoreboard, while it may be pending.
    set_time: [Option<u32>; 6],
}

impl State {
    fn new() -> State {
        State {
            ready: vec![0; NUM_RES],
            wmask: vec![0; NUM_RES],
            rmask: vec![0; NUM_RES],
            set_time: [None; 6],
        }
    }

    fn pending(&self) -> u8 {
        (0..6u8)
            .filter(|&i| self.set_time[i as usize].is_some())
            .fold(0, |m, i| m | bit(i))
    }

    /// After waiting on `mask`, nothing guarded by those scoreboards is pending.
    fn clear(&mut self, mask: u8) {
        if mask == 0 {
            return;
        }
        for m in self.wmask.iter_mut().chain(self.rmask.iter_mut()) {
            *m &= !mask;
        }
        for i in 0..6 {
            if mask & bit(i) != 0 {
                self.set_time[i as usize] = None;
            }
        }
    }

    /// A scoreboard for a new operation: a free one (or one the instruction waits on anyway),
    /// else the oldest, which is then added to `wait`. Never one in `avoid`.
    fn pick(&self, wait: &mut u8, avoid: u8) -> u8 {
        let free = (0..6u8).find(|&i| {
            avoid & bit(i) == 0 && (self.set_time[i as usize].is_none() || *wait & bit(i) != 0)
        });
        if let Some(i) = free {
            return i;
        }
        let oldest = (0..6u8)
            .filter(|&i| avoid & bit(i) == 0)
            .min_by_key(|&i| self.set_time[i as usize])
            .expect("at most one scoreboard is avoided");
        *wait |= bit(oldest);
        oldest
    }
}

/// Whether a GPR/carry source of instruction `k` (other than one it also writes) is written by
/// any other instruction of the function. Within `k`'s straight-line region the writer waits
/// on the read scoreboard itself; a writer elsewhere (a later block, or an earlier one
/// reached again through a loop) is covered by its block leader's wait on every scoreboard.
/// Without a read scoreboard nothing would ever guard such a source (the checker's
/// dataflow finds those).
fn sources_overwritten(access: &[Access], k: usize) -> bool {
    let srcs: Vec<Res> = access[k]
        .late_uses
        .iter()
        .copied()
        .filter(|r| !access[k].defs.contains(r))
        .collect();
    if srcs.is_empty() {
        return false;
    }
    (0..access.len())
        .filter(|&j| j != k)
        .any(|j| access[j].defs.iter().any(|d| srcs.contains(d)))
}

fn assign_normal(insts: &[Inst], access: &[Access], leaders: &[bool]) -> Vec<Ctrl> {
    let n = insts.len();
    let mut out: Vec<Ctrl> = Vec::with_capacity(n);
    let mut st = State::new();
    // Issue cycle of the previous instruction.
    let mut t_prev = 0u32;
    for k in 0..n {
        let a = &access[k];
        let variable = insts[k].info().variable_latency;
        // 1. What this instruction must wait on.
        let mut wait = 0u8;
        if leaders[k] && !bare_transfer(&insts[k], a) {
            wait |= st.pending();
        }
        for &r in &a.uses {
            wait |= st.wmask[r];
        }
        for &r in &a.defs {
            wait |= st.wmask[r] | st.rmask[r];
        }
        // 2. Its own scoreboards.
        let mut wbar = None;
        let mut rbar = None;
        if variable && !a.defs.is_empty() {
            wbar = Some(st.pick(&mut wait, 0));
        }
        if variable && sources_overwritten(access, k) {
            let avoid = wbar.map_or(0, bit);
            rbar = Some(st.pick(&mut wait, avoid));
        }
        // 3. Earliest issue cycle: fixed-latency sources ready, barriers active.
        // (The previous instruction's stall already holds its own minimum and any drain.)
        let mut earliest = match out.last() {
            Some(prev) => t_prev + u32::from(prev.stall),
            None => 0,
        };
        for &r in &a.uses {
            earliest = earliest.max(st.ready[r]);
        }
        for i in 0..6u8 {
            if wait & bit(i) != 0 {
                if let Some(t) = st.set_time[i as usize] {
                    earliest = earliest.max(t + LAT_BARRIER);
                }
            }
        }
        let t = earliest;
        if k > 0 {
            let stall = t - t_prev;
            debug_assert!(stall <= 15, "stall {stall} out of range");
            out[k - 1].stall = stall.min(15) as u8;
        }
        // 4. Issue: waits clear scoreboards, then the new operations set theirs.
        st.clear(wait);
        for &r in &a.defs {
            if variable {
                st.wmask[r] = wbar.map_or(0, bit);
                // An earlier fixed-latency write may still be in flight; readers wait on the
                // scoreboard anyway, and block ends keep draining it.
                st.ready[r] = st.ready[r].max(t);
            } else {
                st.wmask[r] = 0;
                st.ready[r] = t + fixed_latency(r);
            }
        }
        if let Some(b) = rbar {
            for &r in &a.late_uses {
                if !a.defs.contains(&r) {
                    st.rmask[r] |= bit(b);
                }
            }
        }
        for b in [wbar, rbar].into_iter().flatten() {
            st.set_time[b as usize] = Some(t);
        }
        out.push(Ctrl {
            stall: min_stall_after(&insts[k]),
            yield_: true,
            wbar,
            rbar,
            wait,
            reuse: 0,
        });
        // 5. Before a block boundary every fixed-latency result must be ready.
        let ends_block = is_control(&insts[k]) || k + 1 == n || leaders[k + 1];
        if ends_block {
            let drain = st
                .ready
                .iter()
                .map(|&r| r.saturating_sub(t))
                .max()
                .unwrap_or(0);
            let c = out.last_mut().expect("just pushed");
            c.stall = c.stall.max(drain.min(15) as u8);
        }
        t_prev = t;
    }
    out
}
