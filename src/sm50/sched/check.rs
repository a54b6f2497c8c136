//! A hazard checker for any SM50 code (ours or ptxas's): a dataflow analysis over the
//! control-flow graph of the decoded instructions and their control fields.
//!
//! In: instructions in layout order, their control fields and branch targets (instruction
//! indices), as [`decode_text`] gives them for a kernel's `.text`. Out: a list of [`Hazard`]s
//! (empty = nothing found), each with the address and text of the instruction where it shows
//! and, where there is one, of the earlier instruction involved. It shares no state-tracking
//! code with [`super::assign_control`], so it checks the assigner rather than repeating it.
//!
//! **Timing model** (sm50-isa.md §1–§2). Instruction `n+1` issues `stall(n)` cycles after
//! instruction `n`; a dual-issue pair (stall 0, bit 4 set) issues in the same cycle, so it
//! counts 0. A wait on a scoreboard may take any time, so it never counts as elapsed cycles.
//! The yield bit only lets another warp issue in between, which delays but never hurts, so it
//! is not modelled.
//! * A fixed-latency result (GPR, carry flag: 6 cycles; predicate: 13) may not be read before
//!   that many cycles, summed along **every** path that reaches the reader.
//! * A variable-latency instruction's result is pending until a wait on its write scoreboard
//!   (a wait-mask bit, or `DEPBAR.LE SBn, k` once at least `k` later operations were issued on
//!   SBn: a scoreboard is a counter, and like ptxas we take operations on one scoreboard to
//!   complete in order). Reading or overwriting a pending result is a hazard.
//! * Its GPR/carry sources are read 2 cycles after issue at the latest ([`VAR_READ`]: ptxas
//!   issues loads, stores and conversions 2 cycles after a fixed-latency producer of their
//!   operands), unless it sets a read scoreboard: then they are pending until that is waited
//!   on, and overwriting one earlier is a hazard.
//! * Two instructions guarded by the same predicate with opposite senses never depend on each
//!   other (no lane runs both).
//! * A guarded write may leave the old value (in the lanes where its guard is off), so it
//!   does not end an earlier fixed-latency write still in flight unless that one is under the
//!   same guard; a register can then have several pending fixed-latency writes at once.
//! * A variable-latency instruction may overwrite the pending sources or result of an earlier
//!   one of the same pipe without waiting (in-order completion, as ptxas assumes).
//! * A non-memory variable-latency instruction without a write barrier (ptxas does this for
//!   some I2I and MUFU) is taken as fixed-latency: its result is readable after 6 cycles.
//! * ptxas leaves the barrier off an operation that a later one of the same pipe (global,
//!   shared, constant memory; otherwise the same instruction class) covers: such an operation
//!   joins the next barrier set in its pipe and completes with it.
//! * A wait less than 2 cycles after its scoreboard was set is a hazard (barriers become
//!   active one cycle late). `DEPBAR.LE` that splits operations of different pipes on one
//!   scoreboard relies on an order that does not exist (a scoreboard reused across pipes).
//!
//! **Control flow.** Successors: the fall-through unless the instruction is an unconditional
//! `BRA`/`EXIT`/`RET`/`SYNC`/`BRK`/`BRX`; a branch target; `SYNC` → the target of the
//! innermost `SSY` before it whose target lies after it (every `SSY` target if none does),
//! `BRK` → likewise for `PBK`, `RET` → the instruction after every `CAL` of its subroutine
//! (the one at the greatest `CAL` target before it), `BRX` → every block
//! leader. A divergent warp also resumes its other side when one side reaches `SYNC`, `BRK`,
//! `EXIT` or `RET`; those edges are left out on purpose: the resumed side runs other lanes,
//! so the first side's pending writes and reads concern registers of lanes it does not
//! touch, and at the reconvergence point (the `SSY` target) the first side's state still
//! arrives through its own `SYNC` edge, with no fewer pending operations and no more elapsed
//! cycles than in reality. The state at a point is, per register/predicate/CC, the cycles left on a pending fixed-latency
//! write, plus the set of pending variable-latency operations (scoreboard, how many later
//! operations it has, cycles since issue). Join = worst case (max cycles left, union of
//! pending operations, min counts and ages); the iteration runs to a fixpoint (all values are
//! bounded, so it terminates), and a final pass over every reachable block reports.
//!
//! **Static checks** on every instruction: [`crate::sm50::Ctrl::validate`] (barrier 6,
//! barriers on fixed-latency instructions, reuse bit 3); a reuse flag on an operand slot
//! whose register the flagged instruction itself overwrites, texture fetches excepted
//! (ptxas flags operands that a later, not necessarily the next, instruction reads from the
//! cache, so "the next instruction reads it" is not a rule); a dual-issue pair whose first
//! instruction is a control transfer, or whose second is a fixed-latency ALU instruction, or
//! both reading a constant bank (ptxas pairs a fixed-latency ALU or FP64 instruction with a
//! following variable-latency or control one, sm50-isa.md §1.4).

use super::model::{
    access, fixed_latency, inst_addr, is_control, is_texture, reads_cbuf, slot_reg, successors,
    Access, Regs, Res, Succ, CC, LAT_BARRIER, PRED,
};
use crate::sm50::{self, Ctrl, Field, Form, Inst, MemSpace};

pub use super::model::{decode_text, DecodedText};
use std::collections::BTreeSet;
use std::fmt;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HazardKind {
    /// A fixed-latency result read before its latency elapsed (on some path).
    EarlyRead,
    /// A variable-latency result read without waiting on its scoreboard.
    UnwaitedRead,
    /// A pending variable-latency result overwritten (its late write would win).
    UnwaitedOverwrite,
    /// A variable-latency instruction's source overwritten before its read barrier cleared.
    SourceOverwrite,
    /// A scoreboard waited on less than 2 cycles after it was set.
    EarlyWait,
    /// `DEPBAR.LE` counting operations of different pipes on one scoreboard.
    MixedScoreboard,
    /// A control field nvdisasm rejects.
    IllegalControl,
    /// A reuse flag the next instruction cannot use.
    BadReuse,
    /// A dual-issue pair of a shape the hardware does not pair.
    BadDualIssue,
    /// A word that does not decode (the code cannot be checked).
    Undecodable,
}

/// One hazard: where it shows, what, and the earlier instruction involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    pub kind: HazardKind,
    /// Instruction index and byte offset in `.text` where it shows.
    pub at: usize,
    pub addr: u64,
    /// The earlier instruction involved (producer, scoreboard setter), if any.
    pub other: Option<usize>,
    /// The message, instruction texts included.
    pub message: String,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+{:#06x}: {}", self.addr, self.message)
    }
}

/// [`hazards`] as strings (one per hazard, `+0xADDR: message`).
pub fn check_code(code: &[u64]) -> Vec<String> {
    hazards(code).iter().map(Hazard::to_string).collect()
}

/// Every hazard in a kernel's `.text` words; a word that does not decode is one
/// [`HazardKind::Undecodable`] hazard (nothing else is checked then).
pub fn hazards(code: &[u64]) -> Vec<Hazard> {
    match decode_text(code) {
        Ok((insts, ctrl, targets)) => analyze(&insts, &ctrl, &targets),
        Err(e) => {
            let at = code
                .chunks(4)
                .flat_map(|b| b.iter().skip(1))
                .position(|&w| sm50::decode(w).is_err())
                .unwrap_or(0);
            vec![Hazard {
                kind: HazardKind::Undecodable,
                at,
                addr: inst_addr(at),
                other: None,
                message: e.to_string(),
            }]
        }
    }
}

/// [`analyze`] as strings.
pub fn check_hazards(insts: &[Inst], ctrl: &[Ctrl], targets: &[Option<usize>]) -> Vec<String> {
    analyze(insts, ctrl, targets)
        .iter()
        .map(Hazard::to_string)
        .collect()
}

/// Cycles a variable-latency instruction needs after a fixed-latency GPR/carry producer.
pub const VAR_READ: u32 = 2;

/// An instruction's guard (predicate, negated), `None` for `PT`.
fn guard(i: &Inst) -> Option<(u64, u64)> {
    let (pg, pgn) = i.get(Field::Pg).zip(i.get(Field::Pgn))?;
    (pg != 7).then_some((pg, pgn))
}

/// Bounds that keep the lattice finite.
const AGE_CAP: u8 = 15;
const AFTER_CAP: u8 = 63;

/// Which in-order completion queue a variable-latency instruction belongs to. Texture fetches
/// share the global queue: on Maxwell LDG goes through the unified L1/texture cache, and
/// ptxas counts TLDS and LDG on one scoreboard with `DEPBAR.LE` (parboil spmv).
pub fn pipe(inst: &Inst) -> &'static str {
    match pipe_id(inst) {
        0 => "global",
        1 => "shared",
        _ => inst.info().class,
    }
}

/// [`pipe`] as a small number (equal numbers: the same pipe; 0 global, 1 shared, then one per
/// class): the checker compares pipes in its inner loops, where comparing strings was a
/// visible share of its time.
fn pipe_id(inst: &Inst) -> u16 {
    let info = inst.info();
    match info.props.space {
        // Surfaces and the bindless and other texture forms have their own texture-unit path
        // (ptxas was not seen counting them on one scoreboard with loads); "global" is the
        // cautious queue, as for TEX.
        MemSpace::Global
        | MemSpace::Generic
        | MemSpace::Local
        | MemSpace::Texture
        | MemSpace::Surface => 0,
        MemSpace::Shared => 1,
        MemSpace::Const | MemSpace::None => 2 + info.class_id,
    }
}

/// One pending variable-latency operation (its write, or its reads of its sources).
#[derive(Debug, PartialEq, Eq)]
struct Op {
    at: usize,
    read: bool,
    /// The scoreboard that covers it; `None`: not yet covered by any.
    sb: Option<u8>,
    /// Operations issued on `sb` after it (saturating).
    after: u8,
    /// Cycles since issue (saturating).
    age: u8,
    /// Resources still pending.
    res: Regs,
}

impl Clone for Op {
    /// The resources copied as one slice (`SmallVec::from_slice`): the derived clone went
    /// through the generic extend, element by element, for every pending operation of every
    /// state copied or joined.
    fn clone(&self) -> Op {
        Op {
            at: self.at,
            read: self.read,
            sb: self.sb,
            after: self.after,
            age: self.age,
            res: Regs::from_slice(&self.res),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
struct State {
    /// Pending fixed-latency writes: resource, cycles left before it is readable (> 0), and
    /// the producer; sorted by resource and producer. A resource has several entries when a
    /// guarded write did not supersede an earlier one (see [`State::set_fixed`]).
    fixed: Vec<(Res, u8, usize)>,
    /// Pending operations, sorted by `(at, read)`.
    ops: Vec<Op>,
}

impl Clone for State {
    fn clone(&self) -> State {
        State {
            fixed: self.fixed.clone(),
            ops: self.ops.clone(),
        }
    }

    /// Reuses the vectors' allocations (the derived one would drop them and allocate anew).
    fn clone_from(&mut self, o: &State) {
        self.fixed.clone_from(&o.fixed);
        self.ops.clone_from(&o.ops);
    }
}

impl State {
    fn new() -> State {
        State {
            fixed: Vec::new(),
            ops: Vec::new(),
        }
    }

    /// `insts[p]` writes `r`, readable after `left` cycles (0: at once). An unguarded write
    /// ends every earlier pending fixed-latency write of `r`; a guarded one leaves the old
    /// value in the lanes where it is off, so it ends only those under the same guard that
    /// are ready no later than it (if-converted code: `IADD R2 ; @P0 LDG R2` must not make
    /// `R2` readable before the `IADD`'s 6 cycles, nor `@!P0 MOV R2` hide an `@P0 IADD R2`
    /// from a reader under `@P0`).
    /// `guards` is [`guard`] of every instruction.
    fn set_fixed(&mut self, r: Res, left: u8, p: usize, guards: &[Option<(u64, u64)>]) {
        let g = guards[p];
        // Only the entries of `r` can end, and they are one run of the sorted list: the
        // run is filtered in place (in order, as a retain over the whole list keeps it) and
        // what it no longer needs is removed, instead of testing every entry.
        let (lo, hi) = self.range_of(r);
        let mut kept = lo;
        for i in lo..hi {
            let (x, l, q) = self.fixed[i];
            if !(g.is_none() || (guards[q] == g && l <= left)) {
                self.fixed[kept] = (x, l, q);
                kept += 1;
            }
        }
        self.fixed.drain(kept..hi);
        if left > 0 {
            // Into its place in the order (the list is sorted and no entry has the same
            // resource and producer: the filter above just ended any earlier write of `r`
            // by `p`, which has `p`'s guard and no more cycles left), as sorting after a
            // push would put it: after the run's entries of producers before `p`.
            let at = lo + self.fixed[lo..kept].partition_point(|f| f.2 < p);
            self.fixed.insert(at, (r, left, p));
        }
    }

    /// The entries of `fixed` for resource `r`: `fixed[lo..hi]` (the list is sorted by
    /// resource, so they are one run, found by binary search).
    fn range_of(&self, r: Res) -> (usize, usize) {
        debug_assert!(self
            .fixed
            .windows(2)
            .all(|w| (w[0].0, w[0].2) < (w[1].0, w[1].2)));
        let lo = self.fixed.partition_point(|f| f.0 < r);
        let hi = lo + self.fixed[lo..].partition_point(|f| f.0 == r);
        (lo, hi)
    }

    /// Worst case of both; returns whether `self` changed.
    ///
    /// The change is tracked as it happens instead of comparing with a copy taken before
    /// (that copy was most of the join's cost). Every way the state can change is counted: an
    /// entry added (always a change), a field lowered or raised, an operation's `sb` cleared,
    /// and an operation's `res` that was not sorted before it is sorted (sorting a sequence
    /// changes it exactly when it was not already sorted). `ops` is always sorted by
    /// `(at, read)` (every step sorts after adding), so the stable sort at the end changes
    /// nothing unless something was added.
    fn join(&mut self, o: &State) -> bool {
        let mut changed = false;
        // `fixed` is sorted by `(resource, producer)`, each key once: an entry of `o` is found
        // by binary search, and a new one goes where sorting after a push would put it.
        for &(r, left, p) in &o.fixed {
            match self.fixed.binary_search_by_key(&(r, p), |f| (f.0, f.2)) {
                Ok(i) => {
                    let f = &mut self.fixed[i];
                    if left > f.1 {
                        f.1 = left;
                        changed = true;
                    }
                }
                Err(i) => {
                    self.fixed.insert(i, (r, left, p));
                    changed = true;
                }
            }
        }
        let mut added = false;
        // The operation each of `o`'s merges into is the first of `self.ops` with its key
        // `(at, read)`, as a search from the front finds it. Both lists are sorted by key, so
        // that is found by one walk: `cur` is the first of the operations `self` had before
        // this join whose key is not below the current one (`o`'s keys never decrease, so
        // `cur` only moves on). Only when none of those has the key can an operation pushed
        // by this join be the first with it, and then it is the last one pushed (the keys
        // pushed never decrease either).
        let old_len = self.ops.len();
        debug_assert!(self
            .ops
            .windows(2)
            .all(|w| (w[0].at, w[0].read) <= (w[1].at, w[1].read)));
        debug_assert!(o
            .ops
            .windows(2)
            .all(|w| (w[0].at, w[0].read) <= (w[1].at, w[1].read)));
        let mut cur = 0;
        for op in &o.ops {
            let key = (op.at, op.read);
            while cur < old_len && (self.ops[cur].at, self.ops[cur].read) < key {
                cur += 1;
            }
            let first = if cur < old_len && (self.ops[cur].at, self.ops[cur].read) == key {
                Some(cur)
            } else if self.ops.len() > old_len {
                let last = self.ops.len() - 1;
                ((self.ops[last].at, self.ops[last].read) == key).then_some(last)
            } else {
                None
            };
            debug_assert_eq!(
                first,
                self.ops
                    .iter()
                    .position(|m| m.at == op.at && m.read == op.read)
            );
            match first.map(|i| &mut self.ops[i]) {
                Some(m) => {
                    if m.sb != op.sb && m.sb.is_some() {
                        m.sb = None;
                        changed = true;
                    }
                    if op.after < m.after {
                        m.after = op.after;
                        changed = true;
                    }
                    if op.age < m.age {
                        m.age = op.age;
                        changed = true;
                    }
                    let mut grew = false;
                    for &r in &op.res {
                        if !m.res.contains(&r) {
                            m.res.push(r);
                            grew = true;
                        }
                    }
                    if grew || !m.res.windows(2).all(|w| w[0] <= w[1]) {
                        m.res.sort_unstable();
                        changed = true;
                    }
                }
                None => {
                    self.ops.push(op.clone());
                    added = true;
                }
            }
        }
        if added {
            self.ops.sort_by_key(|m| (m.at, m.read));
            changed = true;
        }
        changed
    }
}

fn res_name(r: Res) -> String {
    if r == CC {
        "CC".into()
    } else if r >= PRED {
        format!("P{}", r - PRED)
    } else {
        format!("R{r}")
    }
}

/// Step 5 of [`Checker::step`]: `stall` cycles pass: fixed-latency results come closer
/// (those ready leave `st`), pending operations age.
fn time_passes(st: &mut State, stall: u8) {
    // (One pass: each entry's cycles go down, and it ends when none are left.)
    st.fixed.retain_mut(|f| {
        f.1 = f.1.saturating_sub(stall);
        f.1 > 0
    });
    for op in st.ops.iter_mut() {
        op.age = op.age.saturating_add(stall).min(AGE_CAP);
    }
}

struct Checker<'a> {
    insts: &'a [Inst],
    ctrl: &'a [Ctrl],
    acc: &'a [Access],
    /// Per instruction, decided once (the steps ask these of other instructions in their
    /// inner loops): [`guard`], [`pipe_id`], and whether it is variable-latency.
    guards: Vec<Option<(u64, u64)>>,
    pipes: Vec<u16>,
    variable: Vec<bool>,
    out: Vec<Hazard>,
    seen: BTreeSet<(HazardKind, usize, Option<usize>, String)>,
}

impl<'a> Checker<'a> {
    /// Whether instructions `a` and `b` are guarded by the same predicate with opposite
    /// senses (no lane executes both, so no dependency between them), from their guards.
    fn complementary(&self, a: usize, b: usize) -> bool {
        match (self.guards[a], self.guards[b]) {
            (Some((pa, na)), Some((pb, nb))) => pa == pb && na != nb,
            _ => false,
        }
    }

    fn text(&self, k: usize) -> String {
        sm50::print(&self.insts[k], inst_addr(k), self.ctrl[k].reuse)
    }

    fn report(&mut self, kind: HazardKind, at: usize, other: Option<usize>, message: String) {
        if self.seen.insert((kind, at, other, message.clone())) {
            self.out.push(Hazard {
                kind,
                at,
                addr: inst_addr(at),
                other,
                message,
            });
        }
    }

    /// Transfer one instruction over `st`; report only when `report`.
    fn step(&mut self, k: usize, st: &mut State, report: bool) {
        let inst = &self.insts[k];
        let c = self.ctrl[k];
        let variable = self.variable[k];
        // ptxas leaves the write barrier off some non-memory variable-latency instructions
        // (I2I, MUFU) and reads their result like a fixed-latency one: model them so.
        let fixed_like =
            variable && c.wbar.is_none() && !matches!(pipe(inst), "global" | "shared" | "LDC");

        // 1. Waits: the wait mask, and DEPBAR's own scoreboard set and counter.
        self.waits(k, st, report);
        // 2. Reads (nothing to do but report: the state does not change here).
        if report {
            self.reads(k, st);
        }
        // 3. Writes: pending results and pending source reads of earlier operations.
        self.writes(k, st, report, fixed_like);
        // 4. New pending operations.
        if variable {
            self.new_operations(k, st, fixed_like);
        }
        // 5. Time passes.
        time_passes(st, c.stall);
    }

    /// Step 1: the operations instruction `k` waits for (its wait mask, DEPBAR's scoreboard
    /// and counter) leave `st`; reports waits too early after the barrier was set, and a
    /// DEPBAR counting on order across pipes.
    fn waits(&mut self, k: usize, st: &mut State, report: bool) {
        let insts: &'a [Inst] = self.insts;
        let inst = &insts[k];
        let c = self.ctrl[k];
        let mut wait = c.wait & 0x3f;
        let mut depbar: Option<(u8, u8)> = None;
        if inst.form == Form::DEPBAR {
            wait |= inst.get(Field::Ws).unwrap_or(0) as u8 & 0x3f;
            if inst.get(Field::Le) == Some(1) {
                let sb = inst.get(Field::Sb).unwrap_or(0) as u8;
                let cnt = inst.get(Field::Cnt).unwrap_or(0) as u8;
                if sb < 6 {
                    depbar = Some((sb, cnt));
                }
            }
        }
        let mut early = Vec::new();
        // (Looked for per scoreboard only when some operation waited on is that young: one
        // pass over the operations, where most waits find none.)
        let young = |o: &Op| {
            matches!(o.sb, Some(b) if wait & (1 << b) != 0) && u32::from(o.age) < LAT_BARRIER
        };
        let any_young = report && wait != 0 && st.ops.iter().any(young);
        for b in 0..6u8 {
            if any_young && wait & (1 << b) != 0 {
                for op in st.ops.iter().filter(|o| o.sb == Some(b)) {
                    if u32::from(op.age) < LAT_BARRIER {
                        early.push((op.at, b, op.age));
                    }
                }
            }
        }
        if wait != 0 {
            st.ops
                .retain(|o| !matches!(o.sb, Some(b) if wait & (1 << b) != 0));
        }
        if let Some((b, cnt)) = depbar {
            let done = |o: &Op| o.sb == Some(b) && o.after >= cnt;
            let left = |o: &Op| o.sb == Some(b) && o.after < cnt;
            let done_pipes: BTreeSet<&str> = st
                .ops
                .iter()
                .filter(|o| done(o))
                .map(|o| pipe(&self.insts[o.at]))
                .collect();
            let mixed = st
                .ops
                .iter()
                .find(|o| left(o) && done_pipes.iter().any(|p| *p != pipe(&self.insts[o.at])));
            if let (Some(m), true) = (mixed, report) {
                let msg = format!(
                    "DEPBAR.LE SB{b}, {cnt:#x} counts on in-order completion, but `{}` at \
                     +{:#06x} shares SB{b} with operations of another pipe",
                    self.text(m.at),
                    inst_addr(m.at)
                );
                let at = m.at;
                self.report(HazardKind::MixedScoreboard, k, Some(at), msg);
            }
            for op in st.ops.iter().filter(|o| report && done(o)) {
                if u32::from(op.age) < LAT_BARRIER {
                    early.push((op.at, b, op.age));
                }
            }
            st.ops.retain(|o| !done(o));
        }
        if report {
            for (p, b, age) in early {
                let msg = format!(
                    "waits on SB{b} {age} cycles after `{}` at +{:#06x} set it (needs {LAT_BARRIER})",
                    self.text(p),
                    inst_addr(p)
                );
                self.report(HazardKind::EarlyWait, k, Some(p), msg);
            }
        }
    }

    /// Step 2: reports reads by instruction `k` of results still in flight in `st`.
    fn reads(&mut self, k: usize, st: &State) {
        let accs: &'a [Access] = self.acc;
        let acc = &accs[k];
        let variable = self.variable[k];
        for &r in &acc.uses {
            // (`r`'s entries are one run of the sorted list: found by binary search.)
            let (lo, hi) = st.range_of(r);
            for &(_, left, p) in &st.fixed[lo..hi] {
                let need = fixed_latency(r);
                // Variable-latency instructions read GPR and carry sources late: ptxas issues
                // them 2 cycles after the producer (sm50-isa.md §2.2 gives 6 for ALU readers).
                let late = if variable && (r < PRED || r == CC) {
                    need - VAR_READ
                } else {
                    0
                };
                if u32::from(left) > late && !self.complementary(k, p) {
                    let msg = format!(
                        "{} read by `{}` {} cycles after `{}` at +{:#06x} (needs {need})",
                        res_name(r),
                        self.text(k),
                        need - u32::from(left),
                        self.text(p),
                        inst_addr(p)
                    );
                    self.report(HazardKind::EarlyRead, k, Some(p), msg);
                }
            }
            for o in st.ops.iter().filter(|o| !o.read && o.res.contains(&r)) {
                if self.complementary(k, o.at) {
                    continue;
                }
                let (p, sb) = (o.at, o.sb);
                let msg = format!(
                    "{} read by `{}` without waiting on {} of `{}` at +{:#06x}",
                    res_name(r),
                    self.text(k),
                    sb.map_or("a scoreboard (it has none)".into(), |b| format!("SB{b}")),
                    self.text(p),
                    inst_addr(p)
                );
                self.report(HazardKind::UnwaitedRead, k, Some(p), msg);
            }
        }
    }

    /// Step 3: instruction `k`'s writes end the pending results and source reads of earlier
    /// operations in `st` (reported when they had not been waited for), and start its own
    /// fixed-latency results.
    fn writes(&mut self, k: usize, st: &mut State, report: bool, fixed_like: bool) {
        let accs: &'a [Access] = self.acc;
        let acc = &accs[k];
        let variable = self.variable[k];
        for &r in &acc.defs {
            let mut found = Vec::new();
            // A later operation of the same in-order pipe writes after the earlier one has
            // read its sources and written its results.
            let pipes = &self.pipes;
            let in_order = |p: usize| variable && !fixed_like && pipes[p] == pipes[k];
            for op in st.ops.iter_mut() {
                // (Whether the operation has `r` pending first: that is rarely so, and the
                // other two tests only matter then.)
                let Some(pos) = op.res.iter().position(|&x| x == r) else {
                    continue;
                };
                if self.complementary(k, op.at) || in_order(op.at) {
                    continue;
                }
                op.res.remove(pos);
                found.push((op.at, op.read, op.sb));
            }
            // An operation no scoreboard covers yet and with nothing left pending is gone.
            st.ops.retain(|o| o.sb.is_some() || !o.res.is_empty());
            if report {
                for (p, read, sb) in found {
                    let sb = sb.map_or("its scoreboard (it has none)".into(), |b| format!("SB{b}"));
                    let (kind, what) = if read {
                        (HazardKind::SourceOverwrite, "a source")
                    } else {
                        (HazardKind::UnwaitedOverwrite, "the pending result")
                    };
                    let msg = format!(
                        "`{}` overwrites {}, {what} of `{}` at +{:#06x}, before waiting on {sb}",
                        self.text(k),
                        res_name(r),
                        self.text(p),
                        inst_addr(p)
                    );
                    self.report(kind, k, Some(p), msg);
                }
            }
            let left = if variable && !fixed_like {
                0
            } else {
                fixed_latency(r) as u8
            };
            st.set_fixed(r, left, k, &self.guards);
        }
    }

    /// Step 4: variable-latency instruction `k`'s barriers count on in `st`, and its pending
    /// results and (with a read barrier) sources join the operations.
    fn new_operations(&self, k: usize, st: &mut State, fixed_like: bool) {
        let c = self.ctrl[k];
        let acc = &self.acc[k];
        let me = self.pipes[k];
        let set = |st: &mut State, b: u8| {
            for op in st.ops.iter_mut().filter(|o| o.sb == Some(b)) {
                op.after = op.after.saturating_add(1).min(AFTER_CAP);
            }
            // Uncovered operations of the same pipe complete before this one.
            for op in st.ops.iter_mut().filter(|o| o.sb.is_none()) {
                if self.pipes[op.at] == me {
                    op.sb = Some(b);
                    op.after = 0;
                }
            }
        };
        if let Some(b) = c.wbar {
            set(st, b);
        }
        if let Some(b) = c.rbar.filter(|&b| Some(b) != c.wbar) {
            set(st, b);
        }
        // (Gathered only for an instruction with a read barrier, the only one that uses
        // them.)
        let srcs = || -> Regs {
            acc.late_uses
                .iter()
                .copied()
                .filter(|r| !acc.defs.contains(r))
                .collect()
        };
        // Each new operation goes into its place in the `(at, read)` order, after any with
        // the same key (`ops` is sorted; a stable sort after a push put it there too).
        //
        // The resources are kept sorted from the start. Their order means nothing to the
        // analysis (it asks whether an operation has a resource pending, removes one
        // occurrence, and whether any is left; reports follow the order of the
        // operations and of the instruction's operands), but [`State::join`] sorts them
        // and counts that as a change: an operation created unsorted (`IADD R0, R5, R3`
        // reads R5 before R3) made every block its state reached be visited once more
        // for nothing, each visit from the same state as the one before but for that
        // order, with the same steps, hazards and exit states.
        let mut add = |read: bool, sb: Option<u8>, mut res: Regs| {
            if sb.is_some() || !res.is_empty() {
                res.sort_unstable();
                let at = st.ops.partition_point(|m| (m.at, m.read) <= (k, read));
                st.ops.insert(
                    at,
                    Op {
                        at: k,
                        read,
                        sb,
                        after: 0,
                        age: 0,
                        res,
                    },
                );
            }
        };
        if !fixed_like {
            add(false, c.wbar, Regs::from_slice(&acc.defs));
        }
        // Without a read barrier the sources are read early (ptxas overwrites the address
        // registers of loads and stores right after issue); with one they are pending
        // until it is waited on.
        if let Some(b) = c.rbar {
            add(true, Some(b), srcs());
        }
    }

    /// Per-instruction checks that need no dataflow.
    fn static_checks(&mut self, k: usize, reachable: &[bool]) {
        // (Borrowed for the lifetime of the slice, not copied: `report` borrows `self`.)
        let insts: &'a [Inst] = self.insts;
        let inst = &insts[k];
        let c = self.ctrl[k];
        if let Err(e) = c.validate(inst.info().variable_latency) {
            let msg = format!("`{}`: illegal control field: {e}", self.text(k));
            self.report(HazardKind::IllegalControl, k, None, msg);
        }
        for slot in 0..3 {
            if c.reuse & (1 << slot) == 0 {
                continue;
            }
            let name = ["A", "B", "C"][slot];
            let reg = slot_reg(inst, slot);
            let overwritten = reg.is_some_and(|r| self.acc[k].defs.contains(&(r as usize)));
            if overwritten && !is_texture(inst) {
                let msg = format!(
                    "`{}`: reuse flag on slot {name}, whose register this instruction \
                     overwrites (the cache would hold a stale value)",
                    self.text(k),
                );
                self.report(HazardKind::BadReuse, k, None, msg);
            }
        }
        if reachable[k] && c.stall == 0 && c.yield_ {
            // ptxas pairs FP64 (variable-latency) instructions with a following branch too.
            let first_ok = !is_control(inst);
            let second_ok = self.insts.get(k + 1).is_some_and(|n| {
                n.info().variable_latency || is_control(n) || n.info().props.dual_second
            });
            let both_cbuf = self.insts.get(k + 1).is_some_and(reads_cbuf) && reads_cbuf(inst);
            if !first_ok || !second_ok || both_cbuf {
                let next = if k + 1 < self.insts.len() {
                    format!("`{}`", self.text(k + 1))
                } else {
                    "nothing".into()
                };
                let msg = format!(
                    "dual issue of `{}` with {next}: a pair is a fixed-latency ALU instruction \
                     then a variable-latency or control one, not both reading a constant bank",
                    self.text(k)
                );
                self.report(HazardKind::BadDualIssue, k, Some(k + 1), msg);
            }
        }
    }
}

/// Every hazard in `insts` with control fields `ctrl` (see the module essay).
pub fn analyze(insts: &[Inst], ctrl: &[Ctrl], targets: &[Option<usize>]) -> Vec<Hazard> {
    let n = insts.len().min(ctrl.len());
    let acc: Vec<Access> = insts[..n].iter().map(access).collect();
    analyze_with(insts, ctrl, targets, &acc)
}

/// [`analyze`] given [`access`] of (at least) the first `min(insts.len(), ctrl.len())`
/// instructions, as the scheduler already has it.
pub(crate) fn analyze_with(
    insts: &[Inst],
    ctrl: &[Ctrl],
    targets: &[Option<usize>],
    acc: &[Access],
) -> Vec<Hazard> {
    let n = insts.len().min(ctrl.len());
    let succ = successors(&insts[..n], targets);
    analyze_with_succ(insts, ctrl, acc, &succ)
}

/// [`analyze_with`] given also `succ`, [`successors`] of the first
/// `min(insts.len(), ctrl.len())` instructions and the branch targets (the scheduler computes
/// them for its own dataflow; the function is the same, so is the result).
pub(crate) fn analyze_with_succ(
    insts: &[Inst],
    ctrl: &[Ctrl],
    acc: &[Access],
    succ: &[Succ],
) -> Vec<Hazard> {
    let n = insts.len().min(ctrl.len());
    let insts = &insts[..n];
    let ctrl = &ctrl[..n];
    let acc = &acc[..n];
    let mut ck = Checker {
        insts,
        ctrl,
        acc,
        guards: insts.iter().map(guard).collect(),
        pipes: insts.iter().map(pipe_id).collect(),
        variable: insts.iter().map(|i| i.info().variable_latency).collect(),
        out: Vec::new(),
        seen: BTreeSet::new(),
    };
    if n == 0 {
        return ck.out;
    }
    // Blocks: maximal runs where only the last instruction has other than one successor
    // `k + 1` and only the first is entered from elsewhere.
    let mut entered = vec![false; n];
    entered[0] = true;
    for (k, s) in succ.iter().enumerate() {
        for &t in s {
            if t != k + 1 || succ[k].len() != 1 {
                entered[t] = true;
            }
        }
    }
    let mut block_end = vec![0; n];
    let mut k = n;
    while k > 0 {
        k -= 1;
        let ends = k + 1 == n || entered[k + 1] || succ[k][..] != [k + 1];
        block_end[k] = if ends { k } else { block_end[k + 1] };
    }
    let mut entry: Vec<Option<State>> = vec![None; n];
    entry[0] = Some(State::new());
    let mut work: BTreeSet<usize> = BTreeSet::from([0]);
    let mut reachable = vec![false; n];
    // One state buffer for every block visit (`clone_from` keeps its allocations).
    let mut st = State::new();
    // The hazards found on each block's latest visit. The latest visit of a block starts
    // from its final entry state (a later change would have queued it again), so these are
    // exactly what a separate pass over every block from its final entry would report; the
    // steps change the state the same way whether they report or not. (That separate pass
    // repeated every step of the function once more.) A hazard names an instruction of its
    // own block, so the blocks' lists never repeat each other's.
    // (Only blocks with hazards have an entry: a list per instruction was made, walked and
    // freed for every function. In block order, as walking that list gave them.)
    let mut block_out: std::collections::BTreeMap<usize, Vec<Hazard>> = Default::default();
    while let Some(b) = work.pop_first() {
        st.clone_from(entry[b].as_ref().expect("queued blocks have a state"));
        reachable[b..=block_end[b]].fill(true);
        ck.out.clear();
        ck.seen.clear();
        for k in b..=block_end[b] {
            ck.step(k, &mut st, true);
        }
        if ck.out.is_empty() {
            block_out.remove(&b);
        } else {
            block_out.insert(b, std::mem::take(&mut ck.out));
        }
        for &t in &succ[block_end[b]] {
            let changed = match &mut entry[t] {
                Some(e) => e.join(&st),
                e @ None => {
                    *e = Some(st.clone());
                    true
                }
            };
            if changed {
                work.insert(t);
            }
        }
    }
    ck.out = block_out.into_values().flatten().collect();
    ck.seen.clear();
    for k in 0..n {
        ck.static_checks(k, &reachable);
    }
    ck.out.sort_by_key(|h| (h.at, h.kind));
    ck.out
}
