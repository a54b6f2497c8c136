//! A static cost model: the issue cycles of a block and of a kernel, from the control codes.
//!
//! In: decoded instructions with their control fields (or a kernel's `.text` words). Out:
//! cycles. One warp is walked through the code in layout order, each instruction once (loops
//! count one iteration, branches are not followed: the figure compares two schedules of the
//! same code, it does not predict run time). Instruction `n+1` issues `stall(n)` cycles after
//! `n`, or later when it waits on a scoreboard (a wait-mask bit, or `DEPBAR`) whose
//! operations are modelled as complete [`latency`] cycles after they issued (a read barrier
//! clears after at most [`READ_LATENCY`]). The kernel's cost is the issue cycle of its last
//! instruction plus that instruction's stall; a block's cost is the same with nothing pending
//! at its start.
//!
//! The variable latencies are assumptions, not measurements (no SM50 hardware was used:
//! sm50-isa.md §0). Their order of magnitude follows the public Maxwell microbenchmarks
//! (Mei & Chu, "Dissecting GPU Memory Hierarchy through Microbenchmarking", IEEE TPDS 2017;
//! Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", 2018,
//! whose tables include Maxwell): shared memory ~ 25–30 cycles, an L1/texture hit ~ 80, an
//! L2 hit ~ 200, DRAM ~ 350+. We take an L2 hit for global/local/generic memory:
//!
//! | class                                            | cycles |
//! |--------------------------------------------------|--------|
//! | LDG, LD, LDL, ATOM, RED, (STG, ST, STL results)  | 200    |
//! | LDS, ATOMS, STS, SHFL                            | 30     |
//! | LDC                                              | 30     |
//! | DADD, DMUL, DFMA, DSETP, DMNMX, DSET (1/32 rate) | 48     |
//! | MUFU                                             | 20     |
//! | S2R                                              | 20     |
//! | I2F, F2I, F2F, I2I, POPC, FLO, IMUL              | 15     |
//! | BAR, MEMBAR, anything else                       | 20     |

use super::model::{decode_text, inst_addr};
pub use super::model::{latency, READ_LATENCY};
use crate::sm50::{Ctrl, Field, Form, Inst};

/// Issue cycles of `insts` walked in order with nothing pending at the start.
fn walk(insts: &[Inst], ctrl: &[Ctrl]) -> u64 {
    let issue = trace(insts, ctrl);
    match (issue.last(), ctrl.get(issue.len().wrapping_sub(1))) {
        (Some(&t), Some(c)) => t + u64::from(c.stall),
        _ => 0,
    }
}

/// The modelled issue cycle of each instruction of `insts`, walked in order with nothing
/// pending at the start (what [`cycles`] sums; for finding where a schedule loses cycles).
pub fn trace(insts: &[Inst], ctrl: &[Ctrl]) -> Vec<u64> {
    let mut clock = Clock::default();
    insts
        .iter()
        .zip(ctrl)
        .map(|(inst, c)| clock.issue(inst, c))
        .collect()
}

/// One warp's issue clock under the model above: fed the instructions the warp issues, in
/// order, with their control fields. [`trace`] feeds it the layout order; the simulator
/// feeds it the instructions a run executes (`sim::run_timed`), which makes the figure
/// dynamic: loops count every iteration, untaken code nothing.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// The earliest cycle the next instruction may issue.
    next: u64,
    /// Per scoreboard: completion cycles of its operations in issue order.
    pending: [Vec<u64>; 6],
}

impl Clock {
    /// Issue `inst` (with control field `c`) as early as its waits allow; its issue cycle.
    pub fn issue(&mut self, inst: &Inst, c: &Ctrl) -> u64 {
        let pending = &mut self.pending;
        let mut t = self.next;
        let mut wait = c.wait & 0x3f;
        if inst.form == Form::DEPBAR {
            wait |= inst.get(Field::Ws).unwrap_or(0) as u8 & 0x3f;
            if inst.get(Field::Le) == Some(1) {
                let b = inst.get(Field::Sb).unwrap_or(0) as usize;
                let keep = inst.get(Field::Cnt).unwrap_or(0) as usize;
                if let Some(q) = pending.get_mut(b) {
                    let done = q.len().saturating_sub(keep);
                    t = t.max(q[..done].iter().copied().max().unwrap_or(0));
                    q.drain(..done);
                }
            }
        }
        for (b, q) in pending.iter_mut().enumerate() {
            if wait & (1 << b) != 0 {
                t = t.max(q.iter().copied().max().unwrap_or(0));
                q.clear();
            }
        }
        if let Some(b) = c.wbar.filter(|&b| b < 6) {
            pending[b as usize].push(t + latency(inst));
        }
        if let Some(b) = c.rbar.filter(|&b| b < 6) {
            pending[b as usize].push(t + READ_LATENCY.min(latency(inst)));
        }
        self.next = t + u64::from(c.stall);
        t
    }

    /// The cycle after the last issued instruction's stall: the warp's cycles so far.
    pub fn now(&self) -> u64 {
        self.next
    }

    /// Hold the warp until cycle `t` (a barrier it waits at releases then).
    pub fn wait_until(&mut self, t: u64) {
        self.next = self.next.max(t);
    }
}

/// Issue cycles of a whole kernel (layout order, each instruction once).
pub fn cycles(insts: &[Inst], ctrl: &[Ctrl]) -> u64 {
    let n = insts.len().min(ctrl.len());
    walk(&insts[..n], &ctrl[..n])
}

/// Issue cycles of each block: `(byte offset of its first instruction, cycles)`, blocks as
/// [`super::leaders`] finds them.
pub fn block_cycles(insts: &[Inst], ctrl: &[Ctrl], targets: &[Option<usize>]) -> Vec<(u64, u64)> {
    let n = insts.len().min(ctrl.len());
    let lead = super::model::leaders(&insts[..n], targets);
    let starts: Vec<usize> = (0..n).filter(|&k| lead[k]).collect();
    starts
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let e = starts.get(i + 1).copied().unwrap_or(n);
            (inst_addr(s), walk(&insts[s..e], &ctrl[s..e]))
        })
        .collect()
}

/// Issue cycles of a kernel's `.text` words; `None` when a word does not decode.
pub fn kernel_cycles(code: &[u64]) -> Option<u64> {
    let (insts, ctrl, _) = decode_text(code).ok()?;
    Some(cycles(&insts, &ctrl))
}
