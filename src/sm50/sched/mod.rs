//! Control codes: stall counts, scoreboards, wait masks, yield bits, dual issue and operand
//! reuse (sm50-isa.md §1–§2); [`list`] orders the instructions of each block before.
//!
//! In: a function's SM50 instructions in layout order, with the instruction index each branch
//! goes to. Out: one [`Ctrl`] per instruction, every field legal for nvdisasm
//! ([`Ctrl::validate`]), and no hazard the checker ([`check`]) can find.
//!
//! The model (latencies as ptxas's stall counts imply them, sm50-isa.md §2.2):
//! * A **fixed-latency** result is ready 6 cycles after issue (GPRs and the carry flag) or
//!   13 cycles (predicates). The stall field of the instruction before a consumer is raised
//!   until the consumer issues at least that late.
//! * A **variable-latency** result (loads, S2R, conversions, FP64, MUFU, ...) gets a write
//!   scoreboard; the first instruction that reads or overwrites it waits on that scoreboard.
//!   A variable-latency instruction whose GPR (or carry) sources any other instruction of the
//!   function overwrites also gets a read scoreboard, which the overwriter waits on; loads and
//!   texture fetches excepted, which read their address registers at issue (as ptxas and
//!   the checker take it).
//!   Predicate operands are read at issue (ptxas overwrites an LD's predicate without
//!   waiting), so they never need a read scoreboard.
//! * A wait comes at least 2 cycles after the instruction that set the scoreboard (barriers
//!   become active one cycle late).
//! * Scoreboards are counters: when all six are busy, the conservative assignment reuses the
//!   oldest after the instruction waits on it; the dataflow assignment instead adds the new
//!   operation to one of them or reclaims one whose operations the model says are done,
//!   whichever costs the fewest modelled cycles ([`State::pick_or_share`]). All are correct:
//!   a wait waits for every operation on the scoreboard.
//!
//! **Control flow** ([`assign_dataflow`]): a forward dataflow over the blocks carries what is
//! pending at each block start: per register, predicate and CC the cycles left on a
//! fixed-latency write and the scoreboards guarding a variable-latency write or source read;
//! per scoreboard the fewest cycles since it was set. Join = worst case (max cycles, union of
//! scoreboards, min age); edges are the model's ([`model::successors`], which the checker also follows). Inside a block
//! the straight-line assignment starts from that state, so a wait comes at the first real
//! consumer, in whatever block. A block's first instruction cannot be delayed by a stall of
//! its own, so each block's last stall covers the operands of the instructions it may go to
//! and lets every scoreboard it set become active. The iteration runs to a fixpoint (capped;
//! past the cap, and whenever the checker objects to the result, the conservative assignment
//! below is used instead: a debug build panics then, so the tests see it).
//!
//! **Dual issue** ([`pairable`]): an instruction issues in the same cycle as the one before
//! (stall 0, yield bit set) when that one is a fixed-latency ALU instruction, this one a
//! variable-latency or control instruction, they are independent, at most one reads a
//! constant bank, this one waits on nothing and the one before is not itself the second of
//! a pair. **Reuse** ([`reuse_flags`]): a source slot of a fixed-latency ALU instruction is
//! flagged when the next instruction of the same block reads the same register in the same
//! slot and the flagged instruction does not overwrite it.
//!
//! **Texture phase** ([`texture_phases`]): every texture instruction carries `.T` or `.P` in
//! its reuse bits, as ptxas 11.8 sets them: the texture fetches of a block issued before
//! any of their results is waited on are one batch, its last `.P`, the others `.T`.
//!
//! `CAL` and `RET` wait on every pending scoreboard (the subroutine starts and returns with
//! none pending: see [`assign_block`]).
//!
//! Fixed stalls after control instructions follow ptxas: 13 after BRA/SYNC/BRK/RET/CAL/BRX,
//! 15 after EXIT and BAR, 5 after MEMBAR.
//!
//! Yield bit: ptxas sets bit 4 on most instructions and clears it on predicate writers whose
//! stall covers the predicate latency (stall ≥ 12), and on every stall of exactly 12 (every
//! such instruction in the corpus kernels checked); we do the same.
//!
//! **Conservative assignment** ([`assign_normal`] plus leader waits): every block leader
//! (a branch target, or the instruction after a control transfer) waits on every scoreboard
//! the function uses, and the last instruction of a block stalls until every fixed-latency
//! result is ready; no dual issue, no reuse. [`Mode::Serial`] is a debugging mode on top of
//! it: every instruction stalls 15 cycles and waits on every scoreboard still pending, so any
//! remaining hazard must be in the model, not the assignment. [`Mode::InOrder`] is `Normal`
//! without the reordering.

pub mod bundle;
pub mod check;
pub mod cost;
pub mod list;
pub mod model;

use super::{Ctrl, Flow, Inst, MemAccess};
// The model's facts that code outside the scheduler reads (the simulator's register
// accesses, the address slice, the tests) are re-exported here.
pub use model::{access, fixed_latency, leaders, Access, Res, CC, NUM_RES, PRED};
use model::{bare_transfer, is_control, min_stall_after, LAT_BARRIER};

/// How control codes are assigned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// List scheduling inside blocks, then minimal stalls, waits at the first reader,
    /// dual issue and operand reuse.
    #[default]
    Normal,
    /// The control codes of `Normal` on the instructions in selection order (no reordering;
    /// for bisecting a scheduling problem).
    InOrder,
    /// Wait on everything and stall 15 after every instruction (hazard bisection).
    Serial,
}

/// Assign a control field to every instruction. `targets[i]` is the index of the instruction
/// branch `i` jumps to (`None` for non-branches; a shorter slice means no more branches).
pub fn assign_control(insts: &[Inst], targets: &[Option<usize>], mode: Mode) -> Vec<Ctrl> {
    let lead = leaders(insts, targets);
    assign_control_with(
        insts,
        targets,
        &lead,
        mode,
        insts.iter().map(access).collect(),
    )
}

/// [`assign_control`] given [`leaders`] and [`access`] of every instruction.
pub(crate) fn assign_control_with(
    insts: &[Inst],
    targets: &[Option<usize>],
    lead: &[bool],
    mode: Mode,
    access: Vec<Access>,
) -> Vec<Ctrl> {
    debug_assert_eq!(lead, leaders(insts, targets));
    let written = written_anywhere(&access);
    // The control-flow edges, once for the dataflow assignment and the checker (both follow
    // [`model::successors`]; `ctrl` has one field per instruction, so the checker's are these).
    let succ = model::successors(insts, targets);
    let mut ctrl = match mode {
        Mode::Normal | Mode::InOrder => {
            match assign_dataflow(insts, &access, &written, lead, &succ) {
                Some(c) => c,
                None => conservative(insts, &access, &written, targets, mode),
            }
        }
        Mode::Serial => conservative(insts, &access, &written, targets, mode),
    };
    for (c, inst) in ctrl.iter_mut().zip(insts) {
        c.yield_ = !(c.stall == 12 || (inst.timing().writes_pred && c.stall >= 12));
    }
    if mode != Mode::Serial {
        reuse_flags(insts, &access, lead, &mut ctrl);
        // The dataflow assignment is new; the checker (validated on ptxas's code) is the
        // judge. Should it ever object, fall back to the conservative assignment, which waits
        // at every block leader.
        if !check::analyze_with_succ(insts, &ctrl, &access, &succ).is_empty() {
            debug_assert!(
                false,
                "scheduled control codes have hazards: {:?}",
                check::check_hazards(insts, &ctrl, targets)
            );
            ctrl = conservative(insts, &access, &written, targets, mode);
            for (c, inst) in ctrl.iter_mut().zip(insts) {
                c.yield_ = !(c.stall == 12 || (inst.timing().writes_pred && c.stall >= 12));
            }
        }
    }
    texture_phases(insts, lead, &mut ctrl);
    for (c, inst) in ctrl.iter_mut().zip(insts) {
        debug_assert_eq!(c.validate(inst.info().variable_latency), Ok(()));
    }
    ctrl
}

/// The texture phase of every texture instruction (`.T` = reuse bits 1, `.P` = 2; nvdisasm
/// prints them after the opcode), by ptxas 11.8's rule: the texture instructions of a block
/// issued before any of their results is waited on form one batch; the last of a batch is
/// `.P`, the others `.T`. A batch ends at the first instruction that waits on a scoreboard
/// one of its instructions set, at a control transfer and at the end of the block (the
/// next block's first instruction is a leader).
///
/// Evidence (we cannot run hardware, so matching ptxas is the evidence): in ptxas's cubins
/// of the 31 texture files of both corpora, 751 of the 758 texture instructions follow this
/// rule (its texture instructions all set SB5; a wait is a wait-mask bit 5 or a `DEPBAR.LE
/// SB5, n` that needs the instruction done). The 7 others are in kernels where ptxas
/// splits or joins batches across a `DEPBAR` for reasons its code does not show (imageDenoising,
/// volumeRender, spmv). Never `.T` on the last texture instruction before a wait: a batch
/// we close early only costs what a wait costs.
fn texture_phases(insts: &[Inst], leaders: &[bool], ctrl: &mut [Ctrl]) {
    // The texture instructions of the open batch, and the scoreboards they set.
    let mut batch: Vec<usize> = Vec::new();
    let mut bars = 0u8;
    let close = |batch: &mut Vec<usize>, bars: &mut u8, ctrl: &mut [Ctrl]| {
        let n = batch.len();
        for (i, &k) in batch.iter().enumerate() {
            ctrl[k].reuse = (ctrl[k].reuse & !3) | if i + 1 == n { 2 } else { 1 };
        }
        batch.clear();
        *bars = 0;
    };
    for (k, inst) in insts.iter().enumerate() {
        if leaders[k] || ctrl[k].wait & bars != 0 {
            close(&mut batch, &mut bars, ctrl);
        }
        if model::is_texture(inst) {
            batch.push(k);
            bars |= ctrl[k].wbar.map_or(0, bit);
        }
        if is_control(inst) {
            close(&mut batch, &mut bars, ctrl);
        }
    }
    close(&mut batch, &mut bars, ctrl);
}

/// The block-leader assignment (and the serial mode): every leader waits on every scoreboard
/// the function uses, every block drains its fixed latencies, nothing is paired.
fn conservative(
    insts: &[Inst],
    access: &[Access],
    written: &[bool],
    targets: &[Option<usize>],
    mode: Mode,
) -> Vec<Ctrl> {
    let leaders = leaders(insts, targets);
    let mut ctrl = match mode {
        Mode::Normal | Mode::InOrder => assign_normal(insts, access, written, &leaders),
        Mode::Serial => assign_serial(insts, access),
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
/// (Fixed-size arrays, like [`Entry`]'s: the dataflow makes one per block visit.)
struct State {
    /// Cycle at which a fixed-latency result becomes readable.
    ready: [u32; NUM_RES],
    /// Scoreboards guarding a pending variable-latency write of the resource.
    wmask: [u8; NUM_RES],
    /// Scoreboards guarding a pending read of the resource by a variable-latency instruction.
    rmask: [u8; NUM_RES],
    /// Issue cycle of the last instruction that set each scoreboard, while it may be pending.
    set_time: [Option<u32>; 6],
    /// Per scoreboard set in this block: the modelled cycle its last operation completes, and
    /// the position of the first instruction that waits on one of its operations (see
    /// [`Pending`]); `None` for one carried in from another block or not set. Only
    /// [`State::pick_or_share`]'s choice reads them, never a correctness decision.
    known: [Option<Pending>; 6],
    /// The resources the function touches at all (the others are never changed here).
    span: Span,
}

/// What [`State::pick_or_share`] knows of the operations on a scoreboard set in the current
/// block, or of a new operation: when it completes (modelled cycles, [`model::latency`]) and
/// where its first waiter is (an instruction index; the block's end when no instruction of
/// the block waits on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    done: u32,
    need: u32,
}

/// The resources a function's instructions read or write lie in `0..gprs` (GPRs up to the
/// highest one named) and `PRED..NUM_RES` (predicates and the carry flag, always included).
/// The per-resource loops of the dataflow assignment ([`State::clear`], [`Entry::join`],
/// [`Entry::load`], [`Entry::store_after`]) visit only these two ranges: a resource outside
/// them is never issued to, so its `left`, `wmask` and `rmask` stay 0 in every state and
/// entry (where they start), and its `ready` is never read (only the resources an
/// instruction names are). Most functions use a few dozen of the 255 GPRs, and those loops
/// ran over all 265 resources for every block visit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    gprs: usize,
}

impl Span {
    /// Every resource.
    const ALL: Span = Span { gprs: PRED };

    /// The span of the resources `access` names.
    fn of(access: &[Access]) -> Span {
        let mut gprs = 0;
        for a in access {
            for &r in a.uses.iter().chain(&a.defs) {
                if r < PRED {
                    gprs = gprs.max(r + 1);
                }
            }
        }
        Span { gprs }
    }

    /// The two index ranges of the span.
    fn ranges(self) -> [std::ops::Range<usize>; 2] {
        [0..self.gprs, PRED..NUM_RES]
    }
}

impl State {
    fn new(span: Span) -> State {
        State {
            ready: [0; NUM_RES],
            wmask: [0; NUM_RES],
            rmask: [0; NUM_RES],
            set_time: [None; 6],
            known: [None; 6],
            span,
        }
    }

    fn pending(&self) -> u8 {
        (0..6u8)
            .filter(|&i| self.set_time[i as usize].is_some())
            .fold(0, |m, i| m | bit(i))
    }

    /// Issue an instruction at cycle `t`: waiting on `wait` clears those scoreboards, then its
    /// writes become pending (on `wbar` if `variable`, else for the fixed latency) and its late
    /// reads are guarded by `rbar`.
    fn issue(
        &mut self,
        a: &Access,
        variable: bool,
        wbar: Option<u8>,
        rbar: Option<u8>,
        wait: u8,
        t: u32,
    ) {
        self.clear(wait);
        for &r in &a.defs {
            if variable {
                self.wmask[r] = wbar.map_or(0, bit);
                // An earlier fixed-latency write may still be in flight; readers wait on the
                // scoreboard anyway, and block ends keep draining it.
                self.ready[r] = self.ready[r].max(t);
            } else {
                self.wmask[r] = 0;
                self.ready[r] = t + fixed_latency(r);
            }
        }
        if let Some(b) = rbar {
            for &r in &a.late_uses {
                if !a.defs.contains(&r) {
                    self.rmask[r] |= bit(b);
                }
            }
        }
        for b in [wbar, rbar].into_iter().flatten() {
            self.set_time[b as usize] = Some(t);
        }
    }

    /// After waiting on `mask`, nothing guarded by those scoreboards is pending.
    fn clear(&mut self, mask: u8) {
        if mask == 0 {
            return;
        }
        // Two plain loops rather than one over a chained iterator: these vectorise, the chain
        // did not (it was most of the time spent issuing an instruction). Over the span only
        // (outside it both masks are 0).
        for r in self.span.ranges() {
            for m in self.wmask[r.clone()].iter_mut() {
                *m &= !mask;
            }
            for m in self.rmask[r].iter_mut() {
                *m &= !mask;
            }
        }
        for i in 0..6 {
            if mask & bit(i) != 0 {
                self.set_time[i as usize] = None;
                self.known[i as usize] = None;
            }
        }
    }

    /// Record that operation `op` was put on scoreboard `b` (after [`State::issue`]): the
    /// scoreboard now completes with its last operation and is first waited on by the earliest
    /// waiter of any of them.
    fn note(&mut self, b: u8, op: Pending, shared: bool) {
        let k = &mut self.known[b as usize];
        *k = match (*k, shared) {
            (Some(old), true) => Some(Pending {
                done: old.done.max(op.done),
                need: old.need.min(op.need),
            }),
            // Shared with operations carried in from another block: their waiters are unknown.
            (None, true) => None,
            (_, false) => Some(op),
        };
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

    /// Like [`State::pick`], but when all six are busy the new operation joins the most
    /// recently set scoreboard instead of waiting for the oldest (ptxas puts every global
    /// load on SB5 so): a wait on a scoreboard waits for every operation on it, so each
    /// reader still waits long enough, only perhaps longer.
    ///
    /// **Which one, when all six are busy** (the loads of an unrolled body: rodinia's dwt2d
    /// issues eight global loads back to back and an `STS` read barrier before them): each
    /// busy scoreboard `b` is either *shared* (the new operation `op`, issued about cycle
    /// `now`, joins it) or *reclaimed* (this instruction waits on it now, as [`State::pick`]
    /// does), whichever the model says costs the fewest cycles of the warp:
    /// * sharing delays the earlier of the two first waiters to the later completion: if
    ///   `b`'s first waiter comes first, it now waits for `op` too (`op.done - b.done` more),
    ///   else `op`'s waiter waits for `b` (`b.done - op.done` more);
    /// * reclaiming stalls now until `b` completes (`b.done - now`): free for a read barrier
    ///   or a load modelled as done.
    ///
    /// Ties go to reclaiming (it keeps the operations apart for later choices), then to the
    /// most recently set scoreboard (the choice before this rule). A scoreboard carried in from
    /// another block has unknown waiters: sharing it counts as if its waiter came first and
    /// reclaiming as if it held a global load ([`CARRIED_LATENCY`]). Trade-off: the costs are
    /// estimates from the latency model (a real memory system may complete later); every
    /// choice is correct, a wrong estimate only makes a wait longer than needed. Before this
    /// rule the new operation always joined the most recent scoreboard, and the first of the
    /// eight dwt2d loads' consumers waited for the last load (147 cycles per block).
    fn pick_or_share(&self, wait: &mut u8, avoid: u8, op: Pending, now: u32) -> u8 {
        let free = (0..6u8).find(|&i| {
            avoid & bit(i) == 0 && (self.set_time[i as usize].is_none() || *wait & bit(i) != 0)
        });
        if let Some(i) = free {
            return i;
        }
        // (cost in cycles, 0 = reclaim / 1 = share, -set time, scoreboard)
        let mut best: Option<(u32, u8, std::cmp::Reverse<Option<u32>>, u8)> = None;
        for i in (0..6u8).filter(|&i| avoid & bit(i) == 0) {
            let set = self.set_time[i as usize];
            let (share, reclaim) = match self.known[i as usize] {
                Some(b) if b.need <= op.need => (op.done.saturating_sub(b.done), b.done),
                Some(b) => (b.done.saturating_sub(op.done), b.done),
                None => {
                    let set = set.unwrap_or(now);
                    (op.done.saturating_sub(set), set + CARRIED_LATENCY)
                }
            };
            let reclaim = reclaim.saturating_sub(now);
            for cand in [
                (reclaim, 0, std::cmp::Reverse(set), i),
                (share, 1, std::cmp::Reverse(set), i),
            ] {
                if best.map_or(true, |b| cand < b) {
                    best = Some(cand);
                }
            }
        }
        let (_, kind, _, i) = best.expect("at most one scoreboard is avoided");
        if kind == 0 {
            *wait |= bit(i);
        }
        i
    }
}

/// The modelled latency of an operation carried into a block on a scoreboard, for
/// [`State::pick_or_share`]'s cost of waiting on it (a global load's, the longest in
/// [`cost`]'s table).
const CARRIED_LATENCY: u32 = 200;

/// Whether a GPR/carry source of instruction `k` (other than one it also writes) is written by
/// any other instruction of the function. Within `k`'s straight-line region the writer waits
/// on the read scoreboard itself; a writer elsewhere (a later block, or an earlier one
/// reached again through a loop) is covered by its block leader's wait on every scoreboard.
/// Without a read scoreboard nothing would ever guard such a source (the checker's
/// dataflow finds those).
///
/// `written` is [`written_anywhere`] of `access`: a source `k` does not write itself is
/// written by another instruction exactly when some instruction writes it (this was a scan
/// of every instruction per variable-latency instruction, quadratic in the function size).
fn sources_overwritten(insts: &[Inst], access: &[Access], written: &[bool], k: usize) -> bool {
    // Loads and texture fetches read their address (coordinate) registers at issue: ptxas
    // overwrites them right after without a read barrier, and the checker models it so.
    let reads_at_issue = matches!(
        insts[k].info().props.access,
        MemAccess::Load | MemAccess::Query
    );
    if reads_at_issue {
        return false;
    }
    access[k]
        .late_uses
        .iter()
        .any(|&r| !access[k].defs.contains(&r) && written[r])
}

/// Per resource, whether any instruction writes it (indexed by [`Res`]).
fn written_anywhere(access: &[Access]) -> Vec<bool> {
    let mut written = vec![false; NUM_RES];
    for a in access {
        for &d in &a.defs {
            written[d] = true;
        }
    }
    written
}

fn assign_normal(
    insts: &[Inst],
    access: &[Access],
    written: &[bool],
    leaders: &[bool],
) -> Vec<Ctrl> {
    let n = insts.len();
    let mut out: Vec<Ctrl> = Vec::with_capacity(n);
    let mut st = State::new(Span::ALL);
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
        if variable && sources_overwritten(insts, access, written, k) {
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
        st.issue(a, variable, wbar, rbar, wait, t);
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

/// Issue cycle of a block's first instruction in [`assign_dataflow`]'s block-local clock
/// (larger than any age carried in, so earlier events have non-negative times).
const T0: u32 = 32;
/// Saturation of the cycles and ages carried across block edges.
const CARRY_CAP: u32 = 15;

/// What is pending when a block starts, joined (worst case) over its predecessors.
/// (Fixed-size arrays: one per block, and one more per block visit; heap vectors, cloned by
/// every join, were a visible cost.)
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// Cycles until a fixed-latency result is readable.
    left: [u8; NUM_RES],
    /// Scoreboards guarding pending variable-latency writes / source reads of a resource.
    wmask: [u8; NUM_RES],
    rmask: [u8; NUM_RES],
    /// Cycles since each pending scoreboard was last set (the least over all paths).
    age: [Option<u8>; 6],
}

/// `dst |= src` element by element; whether any element changed (a loop that vectorises).
/// (An element changes exactly when `src` has a bit `dst` lacks; those bits are OR-ed
/// together, which vectorises better than a flag set per element.)
fn or_into(dst: &mut [u8], src: &[u8]) -> bool {
    let mut new_bits = 0u8;
    for (x, &y) in dst.iter_mut().zip(src) {
        new_bits |= y & !*x;
        *x |= y;
    }
    new_bits != 0
}

impl Entry {
    fn empty() -> Entry {
        Entry {
            left: [0; NUM_RES],
            wmask: [0; NUM_RES],
            rmask: [0; NUM_RES],
            age: [None; 6],
        }
    }

    /// Worst case of both; whether `self` changed. Over the resources of `span` (outside
    /// it both are 0, see [`Span`]).
    fn join(&mut self, o: &Entry, span: Span) -> bool {
        // One loop per array: each vectorises (one loop over all three did not). A value
        // changes exactly when the joined one differs from it.
        // (`diff` gathers the bits of every element that changed: zero exactly when none did.)
        let mut diff = 0u8;
        let mut changed = false;
        for r in span.ranges() {
            for (x, &y) in self.left[r.clone()].iter_mut().zip(&o.left[r.clone()]) {
                let v = (*x).max(y);
                diff |= v ^ *x;
                *x = v;
            }
            changed |= or_into(&mut self.wmask[r.clone()], &o.wmask[r.clone()]);
            changed |= or_into(&mut self.rmask[r.clone()], &o.rmask[r]);
        }
        changed |= diff != 0;
        for b in 0..6 {
            let age = match (self.age[b], o.age[b]) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            changed |= age != self.age[b];
            self.age[b] = age;
        }
        changed
    }

    /// The straight-line state at the block's first instruction (issued at [`T0`]),
    /// written over every field of `st` in its span (one buffer serves every block visit;
    /// outside the span its masks stay 0 and its `ready` is never read).
    fn load(&self, st: &mut State) {
        for r in st.span.ranges() {
            for (t, &l) in st.ready[r.clone()].iter_mut().zip(&self.left[r.clone()]) {
                *t = T0 + u32::from(l);
            }
            st.wmask[r.clone()].copy_from_slice(&self.wmask[r.clone()]);
            st.rmask[r.clone()].copy_from_slice(&self.rmask[r]);
        }
        for b in 0..6 {
            st.set_time[b] = self.age[b].map(|a| T0 - u32::from(a));
        }
        st.known = [None; 6];
    }

    /// [`Entry::store`] for a block that started from `entered` (loaded with
    /// [`Entry::load`]) and whose instructions have accesses `block`: the same values,
    /// computed from `entered` for the resources the block does not write.
    ///
    /// Only [`State::issue`] changes `ready` after the load, and only for the resources its
    /// instruction writes; every other resource still has `ready = T0 + left` with
    /// `left <= CARRY_CAP`, so its cycles left at `t_end >= T0` are
    /// `clamp(T0 + left - t_end, 0, CARRY_CAP) = left - (t_end - T0)` saturating at 0: one
    /// byte-wide saturating subtraction over the array (16 resources per vector instruction),
    /// where the full computation widens and clamps every resource. The written resources
    /// are then computed as `store` does.
    fn store_after(&mut self, entered: &Entry, block: &[Access], st: &State, t_end: u32) {
        debug_assert!(t_end >= T0);
        let elapsed = (t_end - T0).min(u32::from(u8::MAX)) as u8;
        // (Over the span of `st`: outside it `self`, `entered` and `st` all hold 0.)
        for r in st.span.ranges() {
            for (l, &x) in self.left[r.clone()]
                .iter_mut()
                .zip(&entered.left[r.clone()])
            {
                *l = x.saturating_sub(elapsed);
            }
            self.wmask[r.clone()].copy_from_slice(&st.wmask[r.clone()]);
            self.rmask[r.clone()].copy_from_slice(&st.rmask[r]);
        }
        for a in block {
            for &r in &a.defs {
                self.left[r] = st.ready[r].saturating_sub(t_end).min(CARRY_CAP) as u8;
            }
        }
        for b in 0..6 {
            self.age[b] = st.set_time[b].map(|x| (t_end - x).min(CARRY_CAP) as u8);
        }
        debug_assert!({
            let mut full = Entry::empty();
            full.store(st, t_end);
            full == *self
        });
    }

    /// What is pending after a block whose last instruction issued at `t_end` minus its
    /// stall (`st` is the state then), written over every field of `self`.
    /// (The definition [`Entry::store_after`] computes faster; debug builds compare them.)
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn store(&mut self, st: &State, t_end: u32) {
        // In signed arithmetic, which vectorises on the baseline x86-64 target (unsigned
        // 32-bit min/max has no SSE2 instruction, and this loop ran one element at a time).
        // The same values: every cycle here is below 2^31 (the block clock starts at `T0`
        // and advances at most 15 cycles per instruction).
        debug_assert!(t_end < 1 << 31 && st.ready.iter().all(|&t| t < 1 << 31));
        let end = t_end as i32;
        for (l, &t) in self.left.iter_mut().zip(&st.ready) {
            *l = (t as i32 - end).clamp(0, CARRY_CAP as i32) as u8;
        }
        self.wmask = st.wmask;
        self.rmask = st.rmask;
        for b in 0..6 {
            self.age[b] = st.set_time[b].map(|x| (t_end - x).min(CARRY_CAP) as u8);
        }
    }
}

/// Whether `second` may issue in the same cycle as `first` (sm50-isa.md §1.4, and the
/// checker's rule): a fixed-latency ALU instruction, then a variable-latency or control one,
/// not both reading a constant bank, and the second touching nothing the first writes or
/// reads (no same-cycle dependency of any kind).
pub fn pairable(first: &Inst, fa: &Access, second: &Inst, sa: &Access) -> bool {
    let alu = |i: &Inst| {
        !i.info().variable_latency
            && !is_control(i)
            && !model::is_fence(i)
            && i.form != super::Form::NOP
    };
    // LDC reads the constant bank too; SSY and PBK pair like control transfers.
    let cbuf = |i: &Inst| model::reads_cbuf(i) || i.form == super::Form::LDC;
    let ssy_pbk = |i: &Inst| matches!(i.info().props.flow, Flow::Ssy | Flow::Pbk);
    let second_ok = || second.info().variable_latency || is_control(second) || ssy_pbk(second);
    let independent = || {
        !sa.uses.iter().chain(&sa.defs).any(|r| fa.defs.contains(r))
            && !sa.defs.iter().any(|r| fa.uses.contains(r))
    };
    // The cheapest test that fails most often first (most second instructions are ALU ones).
    second_ok() && alu(first) && independent() && !(cbuf(first) && cbuf(second))
}

/// Control fields with waits where the first reader needs them: a forward dataflow of
/// pending fixed latencies and scoreboards over the blocks ([`model::successors`] gives the
/// edges, the same the checker follows), iterated to a fixpoint, and inside each block the
/// straight-line assignment of [`State`] with dual issue. `None` when the iteration does not
/// settle (the caller then uses the conservative assignment).
fn assign_dataflow(
    insts: &[Inst],
    access: &[Access],
    written: &[bool],
    lead: &[bool],
    succ: &[model::Succ],
) -> Option<Vec<Ctrl>> {
    let span = Span::of(access);
    let ctrl = assign_dataflow_in(insts, access, written, lead, succ, span);
    // Debug builds check that visiting only the span changes nothing (see [`Span`]).
    debug_assert_eq!(
        ctrl,
        assign_dataflow_in(insts, access, written, lead, succ, Span::ALL)
    );
    ctrl
}

/// [`assign_dataflow`] with its per-resource loops over `span`, which holds every resource
/// `access` names.
fn assign_dataflow_in(
    insts: &[Inst],
    access: &[Access],
    written: &[bool],
    lead: &[bool],
    succ: &[model::Succ],
    span: Span,
) -> Option<Vec<Ctrl>> {
    let n = insts.len();
    if n == 0 {
        return Some(Vec::new());
    }
    let starts: Vec<usize> = (0..n).filter(|&k| lead[k]).collect();
    let block_of = {
        let mut b = vec![0; n];
        let mut cur = 0;
        for k in 0..n {
            if lead[k] && k > 0 {
                cur += 1;
            }
            b[k] = cur;
        }
        b
    };
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(n);
    let mut entry: Vec<Entry> = vec![Entry::empty(); starts.len()];
    let mut ctrl = vec![Ctrl::NEUTRAL; n];
    let mut work: std::collections::BTreeSet<usize> = (0..starts.len()).collect();
    let mut visits = 0usize;
    // One straight-line state and one exit state for every block visit (each visit
    // overwrites all of both).
    let mut st = State::new(span);
    let mut exit = Entry::empty();
    let mut facts: Vec<Facts> = (0..n)
        .map(|k| Facts::of(insts, access, written, k))
        .collect();
    first_waiters(access, &starts, &mut facts);
    while let Some(b) = work.pop_first() {
        visits += 1;
        if visits > 50 * starts.len() + 100 {
            return None;
        }
        let (s, e) = (starts[b], end_of(b));
        entry[b].load(&mut st);
        let t_end = assign_block(
            insts,
            access,
            &mut facts,
            &succ[e - 1],
            s,
            &mut ctrl[s..e],
            &mut st,
        )?;
        exit.store_after(&entry[b], &access[s..e], &st, t_end);
        for &t in &succ[e - 1] {
            let tb = block_of[t];
            if starts[tb] != t {
                return None; // an edge into the middle of a block: not expected here
            }
            if entry[tb].join(&exit, span) {
                work.insert(tb);
            }
        }
    }
    Some(ctrl)
}

/// What [`assign_block`] asks of an instruction on every visit of its block, decided once
/// per function (a block is visited again whenever its entry state grows, 2.6 times on
/// average over the corpus): the same answers as asking each time.
#[derive(Clone, Copy, Debug)]
struct Facts {
    /// Variable latency.
    variable: bool,
    /// [`call_or_return`].
    call_or_return: bool,
    /// Variable latency and [`sources_overwritten`]: its sources need a read scoreboard.
    overwritten: bool,
    /// [`min_stall_after`].
    min_stall: u8,
    /// [`pairable`] with the instruction before it, once a visit has asked.
    pairs_with_prev: Option<bool>,
    /// The first instruction of the block after this one that reads or writes what it
    /// writes, and the first that writes a register it reads late (the waiters of its write
    /// and read scoreboards); the block's end when there is none ([`first_waiters`]).
    need_w: u32,
    need_r: u32,
}

impl Facts {
    fn of(insts: &[Inst], access: &[Access], written: &[bool], k: usize) -> Facts {
        let variable = insts[k].info().variable_latency;
        Facts {
            variable,
            call_or_return: call_or_return(&insts[k]),
            overwritten: variable && sources_overwritten(insts, access, written, k),
            min_stall: min_stall_after(&insts[k]),
            pairs_with_prev: None,
            need_w: u32::MAX,
            need_r: u32::MAX,
        }
    }
}

/// Fill in [`Facts::need_w`] and [`Facts::need_r`] of every instruction: one backward walk per
/// block (`starts` are the block leaders) with, per resource, the next instruction that
/// reads or writes it and the next that writes it.
fn first_waiters(access: &[Access], starts: &[usize], facts: &mut [Facts]) {
    let n = access.len();
    // (block, instruction) of the next access and the next write of each resource.
    let mut next_acc = vec![(usize::MAX, 0u32); NUM_RES];
    let mut next_wr = vec![(usize::MAX, 0u32); NUM_RES];
    for (b, &s) in starts.iter().enumerate() {
        let e = starts.get(b + 1).copied().unwrap_or(n);
        let at = |x: (usize, u32)| if x.0 == b { x.1 } else { e as u32 };
        for k in (s..e).rev() {
            let a = &access[k];
            let f = &mut facts[k];
            f.need_w = a
                .defs
                .iter()
                .map(|&r| at(next_acc[r]))
                .min()
                .unwrap_or(e as u32);
            f.need_r = a
                .late_uses
                .iter()
                .filter(|r| !a.defs.contains(r))
                .map(|&r| at(next_wr[r]))
                .min()
                .unwrap_or(e as u32);
            for &r in a.uses.iter().chain(&a.defs) {
                next_acc[r] = (b, k as u32);
            }
            for &r in &a.defs {
                next_wr[r] = (b, k as u32);
            }
        }
    }
}

/// Whether `inst` is a `CAL` or a `RET`.
fn call_or_return(inst: &Inst) -> bool {
    matches!(inst.info().props.flow, Flow::Cal | Flow::Ret)
}

/// One block `insts[s..s + out.len()]` from its entry state `st`: its control fields into
/// `out`, `st` left as the state after its last instruction issued, and the cycle at which
/// the block ends (that issue plus the last stall). `next` are the instructions control may
/// go to after the block: its last stall makes their operands ready and lets every
/// scoreboard it set become active. (`None`: the caller gives up the dataflow assignment;
/// `out` is then partly written.)
fn assign_block(
    insts: &[Inst],
    access: &[Access],
    facts: &mut [Facts],
    next: &[usize],
    s: usize,
    out: &mut [Ctrl],
    st: &mut State,
) -> Option<u32> {
    let e = s + out.len();
    let mut t_prev = T0;
    for k in s..e {
        let a = &access[k];
        let fk = facts[k];
        let variable = fk.variable;
        let mut wait = 0u8;
        for &r in &a.uses {
            wait |= st.wmask[r];
        }
        for &r in &a.defs {
            wait |= st.wmask[r] | st.rmask[r];
        }
        // A call and a return wait on every pending scoreboard: a subroutine is entered from
        // every call site and returns to all of them, so whatever one caller (or the
        // subroutine) left pending would otherwise flow to every other site as a wait.
        if fk.call_or_return {
            wait |= st.pending();
        }
        let mut wbar = None;
        let mut rbar = None;
        // For the choice among busy scoreboards: about when this instruction issues, and what
        // its operations will be (completion, first waiter).
        let now = if k > s { t_prev + 1 } else { T0 };
        let lat = model::latency(&insts[k]) as u32;
        let wop = Pending {
            done: now + lat,
            need: fk.need_w,
        };
        let rop = Pending {
            done: now + lat.min(model::READ_LATENCY as u32),
            need: fk.need_r,
        };
        if variable && !a.defs.is_empty() {
            wbar = Some(st.pick_or_share(&mut wait, 0, wop, now));
        }
        if fk.overwritten {
            rbar = Some(st.pick_or_share(&mut wait, wbar.map_or(0, bit), rop, now));
        }
        // Whether each joins operations still pending on its scoreboard (not waited on here).
        let joins = |b: Option<u8>| {
            b.is_some_and(|b| st.set_time[b as usize].is_some() && wait & bit(b) == 0)
        };
        let (w_shared, r_shared) = (joins(wbar), joins(rbar));
        let mut earliest = T0;
        if k > s {
            let prev = &out[k - s - 1];
            // The previous instruction may pair with this one unless it is itself the
            // second of a pair.
            let prev_paired = k >= s + 2 && out[k - s - 2].stall == 0;
            let pair = !prev_paired && wait == 0 && prev.stall == 1 && {
                // (Decided on the first visit that asks, then kept.)
                *facts[k]
                    .pairs_with_prev
                    .get_or_insert_with(|| pairable(&insts[k - 1], &access[k - 1], &insts[k], a))
            };
            earliest = t_prev + if pair { 0 } else { u32::from(prev.stall) };
        }
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
        if k == s {
            if t != T0 {
                return None; // the predecessors' drain should have made this impossible
            }
        } else {
            let stall = t - t_prev;
            if stall > 15 {
                return None;
            }
            out[k - s - 1].stall = stall as u8;
        }
        st.issue(a, variable, wbar, rbar, wait, t);
        if let Some(b) = wbar {
            st.note(b, wop, w_shared);
        }
        if let Some(b) = rbar {
            st.note(b, rop, r_shared);
        }
        out[k - s] = Ctrl {
            stall: fk.min_stall,
            yield_: true,
            wbar,
            rbar,
            wait,
            reuse: 0,
        };
        t_prev = t;
    }
    // The last stall: the next block's first instruction must find its operands ready and
    // every scoreboard active (it is issued at the next block's T0, without a stall of its own).
    let mut drain = 0u32;
    for &nx in next {
        for &r in &access[nx].uses {
            drain = drain.max(st.ready[r].saturating_sub(t_prev));
        }
    }
    for t in st.set_time.iter().flatten() {
        drain = drain.max((t + LAT_BARRIER).saturating_sub(t_prev));
    }
    let last = out.last_mut().expect("a block has an instruction");
    last.stall = last.stall.max(drain.min(15) as u8);
    Some(t_prev + u32::from(last.stall))
}

/// Operand reuse flags: slot A, B or C of instruction `k` is flagged when instruction `k + 1`
/// (same block, so it always executes right after) reads the same register in the same slot
/// and `k` does not overwrite it. Only between fixed-latency ALU instructions (ptxas's
/// common case; memory operands go through other paths).
fn reuse_flags(insts: &[Inst], access: &[Access], leaders: &[bool], ctrl: &mut [Ctrl]) {
    let alu = |i: &Inst| !i.info().variable_latency && !is_control(i) && !model::is_fence(i);
    for k in 0..insts.len().saturating_sub(1) {
        if leaders[k + 1] || !alu(&insts[k]) || !alu(&insts[k + 1]) {
            continue;
        }
        for slot in 0..3 {
            let (Some(r), Some(r2)) = (
                model::slot_reg(&insts[k], slot),
                model::slot_reg(&insts[k + 1], slot),
            ) else {
                continue;
            };
            let r = r as usize;
            if r == r2 as usize
                && access[k].uses.contains(&r)
                && access[k + 1].uses.contains(&r)
                && !access[k].defs.contains(&r)
            {
                ctrl[k].reuse |= 1 << slot;
            }
        }
    }
}
