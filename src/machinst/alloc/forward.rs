//! Reloads of promoted slots read the slot's register: [`forward`] drops the `MOV r, s` that a
//! promoted reload left (`promote`), where the instructions after it can read `s` instead; and
//! stores into them are coalesced backwards: it drops the `MOV s, r` that a promoted store
//! left, where the instruction defining `r` can write `s` instead.
//!
//! Why. A promoted slot `s` is a register that nothing but the slot's stores writes; a reload
//! from it became `MOV r, s`, and the code then reads `r` up to its last use. cub's
//! radix-sort downsweep kernels kept about a thousand such moves per kernel (of 8-12 k
//! instructions, where ptxas has 6.6 k in all), and the moves pushed branch sides over
//! if-conversion's length limit. ptxas has no such moves: its spilled values that sit in
//! registers are read where they are.
//!
//! In: an [`Allocated`] function after [`promote`](super::promote), and its [`Facts`]: per
//! instruction, the width of each operand the allocator placed (after allocation an operand is
//! a bare physical register, which does not say whether it is a scalar or a pair), the CFG,
//! which instructions are promoted reloads, and, where the checker runs, the assignment
//! checker's operations. Out: the same function without the reload moves that could go, the
//! instructions after each reading `s` where they read `r`; the number of moves dropped.
//!
//! How. Liveness of the physical registers over the allocated CFG (32-bit words; an operand
//! the code named itself counts as reading four registers, R1 one, and as writing none).
//! Then, for each promoted reload `MOV r, s` of `w` words, a walk forward through its block:
//! * a use lying inside `r..r+w` is a *candidate*; it will read the same words of `s` (pairs
//!   and quads keep their alignment: `r` and `s` are both aligned to `w`);
//! * a use overlapping `r..r+w` only in part, or a named register overlapping `r` or `s`,
//!   keeps the move;
//! * an instruction that writes `s` ends the walk; it keeps the move if it also reads `r`
//!   (its def could overwrite `s` before its read, or be tied to it);
//! * a def tied to a candidate (`OpConstraint::Reuse`, a guarded def that keeps the old value)
//!   keeps the move: the def must stay in the register it reads;
//! * a def of words of `r` ends their life; the walk ends when every word is written again.
//!
//! When the walk ends (at the end of the block, at a write of `s`, or with every word written)
//! every word of `r` not written again must be dead there; then the candidates are rewritten to
//! `s` and the move is dropped, otherwise nothing changes.
//!
//! Stores, after the reloads' moves are gone (liveness computed again). For each promoted
//! store `MOV s, r` of `w` words whose `r` is not itself a slot register, a walk back through
//! its block finds the def of `r` it reads: the nearest instruction writing any word of
//! `r`, which must write exactly `r..r+w` with one operand not tied to a use (a pair written a
//! word at a time, or a guarded def, keeps the move). Between that def and the store (the def
//! included) nothing may read or write `s` or name `r` or `s`, and each read of `r` must lie
//! inside `r..r+w`. After the store, the same walk as a reload's (`r` equals `s` there) finds
//! the later reads of `r` and asks that `r` be dead where it ends. Where all holds and no
//! renamed read adds a bank conflict, the def writes `s`, every read of `r` between the def
//! and the end of the walk reads `s`, and the move is dropped. cub's radix-sort kernels
//! stored about 650 values per kernel right after computing them; `presplit` puts each store
//! right after its value's def, so most of these defs are found in one step.
//!
//! Why it is correct. Between the move and the end of the walk nothing writes `s` and the move
//! had made `r` equal to `s`, so each rewritten read finds the same value. After the walk no
//! read of `r` remains that the move reached (the words are dead or written again). Dropping a
//! write of `r` can only make `r` less live before the move, so the liveness computed once
//! stays an over-approximation for later moves; and `s` is never a reload's `r` (slot registers
//! lie above all registers the allocation gave out). Where the checker runs, the assignment
//! checker ([`check`]) is run again on the result, its operations rewritten alongside: a
//! promoted slot's store and reload become register moves, a dropped regalloc2 reload a move of
//! `s` to itself, a dropped reload of `spill`'s slots a def of its value in `s`, and each
//! rewritten operand reads `s`. It then proves, word by word, that every read finds its value.
//!
//! A coalesced store is correct for the same reasons, backwards: `s` is neither read nor
//! written between the def and the store, so its old value was dead from the def on (the
//! store overwrote it), and the def may write it there; the value is then in `s` from the def
//! on, where the store used to put it; every read of `r` that the def reached is renamed (up to
//! the store by the walk back, after it by the walk forward, and `r` is dead after that), so no
//! read expects the value in `r` any more. Renaming only ever removes reads and writes of a
//! register below the slots, so liveness computed before the stores' rewrites stays an
//! over-approximation for the later stores. The checker sees the def's operand in `s` and
//! the dropped store as a move of `s` to itself (a `spill` store: its read of the value in
//! `s`).

use super::*;
use crate::machinst::{OpConstraint, OpSpec};
use smallvec::SmallVec;

/// Registers as a bit set (R0..R255).
type Regs = [u64; 4];

/// An operand of a block's instruction: (instruction index, operand index).
type Operand = (usize, usize);

/// An operand the code named itself (other than R1, the stack pointer: one register) counts as
/// this many registers.
const NAMED: u8 = 4;

/// What [`rewrite`](super::rewrite) gathers for [`promote`](super::promote) and [`forward`] in a
/// function that spilled and may have its slots promoted.
#[derive(Clone, Debug, Default)]
pub(super) struct Facts {
    /// Per block, per instruction, per operand in [`MachInst::visit_operands`]' order: how many
    /// registers it covers; 0 for a predicate or a register the code named itself.
    pub(super) words: Vec<Vec<SmallVec<[u8; 4]>>>,
    /// Per block: its successors.
    pub(super) succs: Vec<Vec<usize>>,
    /// The promoted reloads (`promote` fills it): block, instruction, slot register.
    pub(super) reloads: Vec<(usize, usize, PhysReg)>,
    /// The promoted stores (`promote` fills it): block, instruction, slot register.
    pub(super) stores: Vec<(usize, usize, PhysReg)>,
    /// Where the assignment checker runs: its input.
    pub(super) check: Option<CheckInput>,
}

/// The assignment checker's input (see [`check::check`]), kept to check the code again.
#[derive(Clone, Debug)]
pub(super) struct CheckInput {
    pub(super) ops: Vec<Vec<check::Op>>,
    /// Per block, per instruction: the index of its operation in `ops`.
    pub(super) op_of: Vec<Vec<usize>>,
    pub(super) succs: Vec<Vec<(BlockId, Vec<VReg>)>>,
    pub(super) params: Vec<Vec<VReg>>,
    pub(super) spill_words: usize,
}

fn add(set: &mut Regs, first: u8, n: u8) {
    for r in first as usize..(first as usize + n as usize).min(255) {
        set[r / 64] |= 1 << (r % 64);
    }
}

fn has(set: &Regs, r: usize) -> bool {
    set[r / 64] >> (r % 64) & 1 == 1
}

/// Each GPR operand of `inst`: its index, first register, register count (`NAMED` for one the
/// code named), whether the allocator placed it, and its spec. RZ and predicates are skipped.
fn each_gpr<I: MachInst>(inst: &I, words: &[u8], f: &mut dyn FnMut(usize, u8, u8, bool, OpSpec)) {
    let mut k = 0;
    inst.for_each_operand(&mut |r, spec| {
        let w = words.get(k).copied().unwrap_or(0);
        if let Reg::Phys(p) = r {
            if p != PhysReg::RZ {
                let placed = w > 0;
                let n = match (placed, p) {
                    (true, _) => w,
                    // (the stack pointer is one 32-bit register)
                    (false, PhysReg::SP) => 1,
                    (false, _) => NAMED,
                };
                f(k, p.0, n, placed, spec);
            }
        }
        k += 1;
    });
}

/// The registers `inst` reads and those it writes (a named def writes none, as far as
/// liveness can tell).
fn uses_defs<I: MachInst>(inst: &I, words: &[u8]) -> (Regs, Regs) {
    let (mut uses, mut defs) = (Regs::default(), Regs::default());
    each_gpr(
        inst,
        words,
        &mut |_, reg, n, placed, spec| match spec.kind {
            OpKind::Use => add(&mut uses, reg, n),
            OpKind::Def if placed => add(&mut defs, reg, n),
            OpKind::Def => {}
        },
    );
    (uses, defs)
}

/// Per block: the registers live at its end.
fn live_out<I: MachInst>(alloc: &Allocated<I>, facts: &Facts) -> Vec<Regs> {
    let n = alloc.blocks.len();
    // per block: read before written (gen), written (kill)
    let summary: Vec<(Regs, Regs)> = alloc
        .blocks
        .iter()
        .zip(&facts.words)
        .map(|(block, words)| {
            let (mut gen, mut kill) = (Regs::default(), Regs::default());
            for (inst, w) in block.insts.iter().zip(words).rev() {
                let (u, d) = uses_defs(inst, w);
                for k in 0..4 {
                    gen[k] = (gen[k] & !d[k]) | u[k];
                    kill[k] |= d[k];
                }
            }
            (gen, kill)
        })
        .collect();
    let mut out = vec![Regs::default(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).rev() {
            let mut o = Regs::default();
            for &s in facts.succs.get(b).map_or(&[][..], |v| &v[..]) {
                let (gen, kill) = &summary[s];
                for k in 0..4 {
                    o[k] |= gen[k] | (out[s][k] & !kill[k]);
                }
            }
            if o != out[b] {
                out[b] = o;
                changed = true;
            }
        }
    }
    out
}

/// Drop the promoted reloads' moves that can go, then the promoted stores' (see the module
/// essay); returns how many went. Where `facts` holds the checker's input, the result is
/// checked again.
pub(super) fn forward<I: MachInst>(
    alloc: &mut Allocated<I>,
    mut facts: Facts,
) -> Result<usize, AllocError> {
    // the slot registers (only stores write them)
    let mut slots = Regs::default();
    for &(b, i, s) in facts.reloads.iter().chain(&facts.stores) {
        add(
            &mut slots,
            s.0,
            facts.words[b][i].first().copied().unwrap_or(1),
        );
    }
    let mut drop = no_drops(alloc);
    let mut dropped = 0;
    let reloads = std::mem::take(&mut facts.reloads);
    // per block, per instruction: the registers live after it (filled for blocks with
    // reloads when first needed)
    let mut live_after = LiveAfter::new(alloc, &facts);
    for &(b, i, s) in &reloads {
        let Some((Reg::Phys(r), _)) = alloc.blocks[b].insts[i].is_move() else {
            continue;
        };
        let w = facts.words[b][i].first().copied().unwrap_or(0);
        if w == 0 {
            continue;
        }
        let after = live_after.of(alloc, &facts, b);
        let Some(cands) = walk(
            &alloc.blocks[b].insts,
            &facts.words[b],
            i,
            r.0,
            s.0,
            w,
            after,
        ) else {
            continue;
        };
        rename_all(alloc, &mut facts, b, &cands, r.0, s.0);
        if let Some(c) = facts.check.as_mut() {
            drop_in_check(&mut c.ops[b][c.op_of[b][i]], r.0, s.0);
        }
        drop[b][i] = true;
        dropped += 1;
    }
    remove(alloc, &mut facts, &drop);
    dropped += coalesce(alloc, &mut facts, &slots);
    if let Some(c) = &facts.check {
        check::check(&c.ops, &c.succs, &c.params, c.spill_words)
            .map_err(|e| AllocError::Assignment(format!("after dropping slot moves: {e}")))?;
    }
    Ok(dropped)
}

/// Per block: whether each instruction is to go (none yet).
fn no_drops<I: MachInst>(alloc: &Allocated<I>) -> Vec<Vec<bool>> {
    alloc
        .blocks
        .iter()
        .map(|b| vec![false; b.insts.len()])
        .collect()
}

/// Per block, per instruction: the registers live after it, over the code as it was when
/// [`LiveAfter::new`] ran (computed for a block when first asked for).
struct LiveAfter {
    out: Vec<Regs>,
    blocks: Vec<Option<Vec<Regs>>>,
}

impl LiveAfter {
    fn new<I: MachInst>(alloc: &Allocated<I>, facts: &Facts) -> Self {
        LiveAfter {
            out: live_out(alloc, facts),
            blocks: vec![None; alloc.blocks.len()],
        }
    }

    fn of<I: MachInst>(&mut self, alloc: &Allocated<I>, facts: &Facts, b: usize) -> &[Regs] {
        let out = self.out[b];
        self.blocks[b].get_or_insert_with(|| {
            let block = &alloc.blocks[b];
            let mut live = out;
            let mut v = vec![Regs::default(); block.insts.len()];
            for (j, inst) in block.insts.iter().enumerate().rev() {
                v[j] = live;
                let (u, d) = uses_defs(inst, &facts.words[b][j]);
                for k in 0..4 {
                    live[k] = (live[k] & !d[k]) | u[k];
                }
            }
            v
        })
    }
}

/// Removes the instructions `drop` marks, with their widths and checker indices, and moves
/// the stores' indices in `facts` along.
fn remove<I: MachInst>(alloc: &mut Allocated<I>, facts: &mut Facts, drop: &[Vec<bool>]) {
    fn keep<T>(v: &mut Vec<T>, gone: &[bool]) {
        let mut it = gone.iter();
        v.retain(|_| !it.next().copied().unwrap_or(false));
    }
    for (b, gone) in drop.iter().enumerate() {
        keep(&mut alloc.blocks[b].insts, gone);
        keep(&mut facts.words[b], gone);
        if let Some(c) = facts.check.as_mut() {
            keep(&mut c.op_of[b], gone);
        }
    }
    facts.stores.retain_mut(|(b, i, _)| {
        let gone = &drop[*b];
        let kept = !gone[*i];
        *i -= gone[..*i].iter().filter(|g| **g).count();
        kept
    });
}

/// Drops the promoted stores' moves `MOV s, r` that can go (see the module essay): the def of
/// `r` before the store, in its block, writes `s` instead, and the reads of `r` between them
/// and after the store (as far as [`walk`] renames them) read `s`. `slots`: the slot
/// registers. Returns how many moves went.
fn coalesce<I: MachInst>(alloc: &mut Allocated<I>, facts: &mut Facts, slots: &Regs) -> usize {
    let mut drop = no_drops(alloc);
    let mut dropped = 0;
    let mut live_after = LiveAfter::new(alloc, facts);
    let stores = std::mem::take(&mut facts.stores);
    for &(b, i, s) in &stores {
        let Some((Reg::Phys(to), Reg::Phys(r))) = alloc.blocks[b].insts[i].is_move() else {
            continue;
        };
        let w = facts.words[b][i].first().copied().unwrap_or(0);
        if to != s || w == 0 || (0..w).any(|x| has(slots, usize::from(r.0 + x))) {
            continue;
        }
        let insts = &alloc.blocks[b].insts;
        let words = &facts.words[b];
        let Some((def, def_k, mut cands)) = def_of(insts, words, i, r.0, s.0, w) else {
            continue;
        };
        let mut conflict = false;
        for (j, group) in cands.chunk_by(|x, y| x.0 == y.0).map(|g| (g[0].0, g)) {
            let ks: SmallVec<[usize; 4]> = group.iter().map(|c| c.1).collect();
            conflict |= adds_bank_conflict(&insts[j], &words[j], &ks, r.0, s.0);
        }
        if conflict {
            continue;
        }
        let after = live_after.of(alloc, facts, b);
        let insts = &alloc.blocks[b].insts;
        let Some(later) = walk(insts, words, i, r.0, s.0, w, after) else {
            continue;
        };
        // the store's source, then the def and the reads
        let mut src = None;
        each_gpr(&insts[i], &words[i], &mut |k, _, _, _, spec| {
            if spec.kind == OpKind::Use && src.is_none() {
                src = Some(k);
            }
        });
        let Some(src) = src else {
            continue;
        };
        cands.extend(later);
        cands.push((def, def_k));
        cands.push((i, src));
        rename_all(alloc, facts, b, &cands, r.0, s.0);
        drop[b][i] = true;
        dropped += 1;
    }
    remove(alloc, facts, &drop);
    dropped
}

/// The def that the store `MOV s, r` at `i` of `insts` (`w` words) reads, found walking back
/// through the block, and the reads of `r` between the two: (the def's instruction, its
/// operand index, the reads as (instruction, operand index)). `None` where the def is not in
/// the block, is not one operand writing exactly `r..r+w` (a pair written a word at a time,
/// a def tied to a use), or where something between them (the def included) reads or writes
/// `s`, reads `r` only in part, or names `r` or `s` itself. (The def's own reads of `r` read
/// the value before it and stay.)
fn def_of<I: MachInst>(
    insts: &[I],
    words: &[SmallVec<[u8; 4]>],
    i: usize,
    r: u8,
    s: u8,
    w: u8,
) -> Option<(usize, usize, Vec<Operand>)> {
    let mut cands = Vec::new();
    for j in (0..i).rev() {
        let (mut def, mut bad) = (None, false);
        let mut reads: SmallVec<[usize; 2]> = SmallVec::new();
        each_gpr(&insts[j], &words[j], &mut |k, a, n, placed, spec| {
            let (on_r, on_s) = (overlaps(a, n, r, w), overlaps(a, n, s, w));
            if on_s || (on_r && !placed) {
                bad = true;
            } else if on_r && spec.kind == OpKind::Use {
                if inside(a, n, r, w) {
                    reads.push(k);
                } else {
                    bad = true;
                }
            } else if on_r {
                let tied = matches!(spec.constraint, OpConstraint::Reuse(_));
                if a == r && n == w && !tied && def.is_none() {
                    def = Some(k);
                } else {
                    bad = true;
                }
            }
        });
        if bad {
            return None;
        }
        if let Some(k) = def {
            cands.reverse();
            return Some((j, k, cands));
        }
        cands.extend(reads.into_iter().rev().map(|k| (j, k)));
    }
    None
}

/// Whether `a..a+n` overlaps the `w` registers from `base`.
fn overlaps(a: u8, n: u8, base: u8, w: u8) -> bool {
    u16::from(a) < u16::from(base) + u16::from(w) && u16::from(base) < u16::from(a) + u16::from(n)
}

/// Whether `a..a+n` lies inside the `w` registers from `base`.
fn inside(a: u8, n: u8, base: u8, w: u8) -> bool {
    a >= base && u16::from(a) + u16::from(n) <= u16::from(base) + u16::from(w)
}

/// The walk from the move `MOV r, s` at `i` of `insts` (`w` words); `after[j]`: the registers
/// live after instruction `j`. Returns the uses to rewrite (instruction, operand index), or
/// `None` where the move must stay.
fn walk<I: MachInst>(
    insts: &[I],
    words: &[SmallVec<[u8; 4]>],
    i: usize,
    r: u8,
    s: u8,
    w: u8,
    after: &[Regs],
) -> Option<Vec<(usize, usize)>> {
    let end_of = |a: u8, n: u8| u16::from(a) + u16::from(n);
    // words of `r` not yet written again
    let mut open: u8 = (1 << w) - 1;
    let mut cands = Vec::new();
    let mut end = insts.len() - 1;
    for (j, inst) in insts.iter().enumerate().skip(i + 1) {
        let (mut reads_r, mut writes_s, mut bad) = (Vec::new(), false, false);
        let mut written: u8 = 0;
        let mut tied: SmallVec<[usize; 2]> = SmallVec::new();
        each_gpr(inst, &words[j], &mut |k, a, n, placed, spec| {
            // the words of `r` the operand covers
            let cover: u8 = (0..w)
                .filter(|x| {
                    let word = u16::from(r + x);
                    word >= u16::from(a) && word < end_of(a, n)
                })
                .fold(0, |m, x| m | 1 << x);
            if !placed && (cover & open != 0 || overlaps(a, n, s, w)) {
                bad = true;
            }
            match spec.kind {
                // (a use of words written again reads their new value)
                OpKind::Use if cover & open != 0 => {
                    if cover & !open == 0 && inside(a, n, r, w) {
                        reads_r.push(k);
                    } else {
                        bad = true;
                    }
                }
                OpKind::Use => {}
                OpKind::Def => {
                    writes_s |= overlaps(a, n, s, w);
                    written |= cover;
                    if let OpConstraint::Reuse(q) = spec.constraint {
                        tied.push(usize::from(q));
                    }
                }
            }
        });
        if bad || tied.iter().any(|q| reads_r.contains(q)) || (writes_s && !reads_r.is_empty()) {
            return None;
        }
        if !reads_r.is_empty() && adds_bank_conflict(inst, &words[j], &reads_r, r, s) {
            return None;
        }
        cands.extend(reads_r.into_iter().map(|k| (j, k)));
        open &= !written;
        if writes_s || open == 0 {
            end = j;
            break;
        }
    }
    // the words not written again must be dead where the walk ended
    let dead = (0..w).all(|x| open & (1 << x) == 0 || !has(&after[end], (r + x) as usize));
    dead.then_some(cands)
}

/// Whether reading `s` instead of `r` in the operands `renamed` of `inst` makes more pairs of
/// its source registers share a bank (`R % 4`) than before. Such a rename keeps its move: a
/// bank conflict costs an issue cycle each time the instruction runs, as much as the move
/// saves, and the colouring had chosen the registers to avoid it (`assign::colouring`).
fn adds_bank_conflict<I: MachInst>(
    inst: &I,
    words: &[u8],
    renamed: &[usize],
    r: u8,
    s: u8,
) -> bool {
    let (mut before, mut after): (SmallVec<[u8; 8]>, SmallVec<[u8; 8]>) = Default::default();
    each_gpr(inst, words, &mut |k, a, n, placed, spec| {
        if spec.kind != OpKind::Use || !placed {
            return;
        }
        let moved = if renamed.contains(&k) { s + (a - r) } else { a };
        for x in 0..n {
            for (list, reg) in [(&mut before, a + x), (&mut after, moved + x)] {
                if !list.contains(&reg) {
                    list.push(reg);
                }
            }
        }
    });
    let pairs = |regs: &[u8]| {
        let mut same = 0;
        for (i, a) in regs.iter().enumerate() {
            same += regs[i + 1..].iter().filter(|b| *b % 4 == a % 4).count();
        }
        same
    };
    pairs(&after) > pairs(&before)
}

/// Renames `r` to `s` in each operand `(instruction, operand index)` of `cands` in block `b`,
/// and in the checker's copy of those operations where `facts` holds one.
fn rename_all<I: MachInst>(
    alloc: &mut Allocated<I>,
    facts: &mut Facts,
    b: usize,
    cands: &[(usize, usize)],
    r: u8,
    s: u8,
) {
    for &(j, k) in cands {
        rename(&mut alloc.blocks[b].insts[j], k, r, s);
        if let Some(c) = facts.check.as_mut() {
            let inst = &alloc.blocks[b].insts[j];
            let op = &mut c.ops[b][c.op_of[b][j]];
            rename_in_check(op, inst, &facts.words[b][j], k, r, s);
        }
    }
}

/// Operand `k` of `inst` reads `s + (its register - r)` instead.
fn rename<I: MachInst>(inst: &mut I, k: usize, r: u8, s: u8) {
    let mut at = 0;
    inst.visit_operands(&mut |reg, _| {
        if at == k {
            if let Reg::Phys(p) = reg {
                *reg = Reg::Phys(PhysReg(s + (p.0 - r)));
            }
        }
        at += 1;
    });
}

/// The checker's operation of `inst`, whose operand `k` was renamed: the same operand in it
/// is in `s` instead of `r`. (An instruction's placed uses and defs are the operation's `uses`
/// and `defs`, in order; a move's source is its `from`, its destination its `to`; a store's
/// source is its `from`, a reload's destination its `to`.)
fn rename_in_check<I: MachInst>(
    op: &mut check::Op,
    inst: &I,
    words: &[u8],
    k: usize,
    r: u8,
    s: u8,
) {
    let moved = |x: &mut u8| *x = s + (*x - r);
    // the operand's kind, and how many placed operands of that kind come before it
    let (mut def, mut rank, mut m) = (false, 0, 0);
    let mut kinds: SmallVec<[(OpKind, bool); 8]> = SmallVec::new();
    inst.for_each_operand(&mut |_, spec| {
        kinds.push((spec.kind, words.get(m).is_some_and(|w| *w > 0)));
        m += 1;
    });
    if let Some(&(kind, _)) = kinds.get(k) {
        def = kind == OpKind::Def;
        rank = kinds[..k]
            .iter()
            .filter(|(other, placed)| *placed && *other == kind)
            .count();
    }
    match op {
        check::Op::Inst { uses, defs, .. } => {
            let list = if def { defs } else { uses };
            if let Some(u) = list.get_mut(rank) {
                moved(&mut u.reg);
            }
        }
        check::Op::Move { to, .. } | check::Op::Reload { to, .. } if def => moved(to),
        check::Op::Move { from, .. } | check::Op::Spill { from, .. } if !def => moved(from),
        check::Op::Move { .. } | check::Op::Spill { .. } | check::Op::Reload { .. } => {}
    }
}

/// The checker's operation of a dropped reload move `MOV r, s`: nothing moves (regalloc2's
/// slot: a move of `s` to itself), or the reloaded value is defined in `s` (`spill`'s slot).
fn drop_in_check(op: &mut check::Op, r: u8, s: u8) {
    match op {
        check::Op::Move { from, to, .. } => *to = *from,
        check::Op::Inst { defs, .. } => defs.iter_mut().for_each(|d| d.reg = s + (d.reg - r)),
        check::Op::Spill { .. } | check::Op::Reload { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Role, Sm50Inst};
    use crate::machinst::VCodeBuilder;

    /// A plain instruction reading (`def` false) or writing the `words` registers at `reg`.
    fn touch(reg: u8, words: u8, def: bool) -> (Sm50Inst, SmallVec<[u8; 4]>) {
        let mut i = Sm50Inst::new(Role::Plain);
        let spec = if def { OpSpec::def() } else { OpSpec::use_() };
        i.op(Reg::Phys(PhysReg(reg)), spec);
        (i, smallvec::smallvec![words])
    }

    /// `MOV dst, src` of `words` registers.
    fn mov(dst: u8, src: u8, words: u8) -> (Sm50Inst, SmallVec<[u8; 4]>) {
        let kind = [RegKind::B32, RegKind::B64, RegKind::B64, RegKind::B128][words as usize - 1];
        let m = Sm50Inst::gen_move(PhysReg(dst), PhysReg(src), kind);
        (m, smallvec::smallvec![words, words])
    }

    /// Blocks of physical code (each block falls through to the next) whose instructions
    /// `reloads` names (block, instruction) are promoted reloads; the code after [`forward`]
    /// and how many moves it dropped.
    fn run(
        code: Vec<Vec<(Sm50Inst, SmallVec<[u8; 4]>)>>,
        reloads: &[(usize, usize)],
    ) -> (Vec<Vec<Sm50Inst>>, usize) {
        run_with_stores(code, reloads, &[])
    }

    /// [`run`], where the instructions `stores` names are promoted stores.
    fn run_with_stores(
        code: Vec<Vec<(Sm50Inst, SmallVec<[u8; 4]>)>>,
        reloads: &[(usize, usize)],
        stores: &[(usize, usize)],
    ) -> (Vec<Vec<Sm50Inst>>, usize) {
        let n = code.len();
        let mut facts = Facts {
            succs: (0..n).map(|b| (b + 1..n).take(1).collect()).collect(),
            ..Facts::default()
        };
        let mut blocks = Vec::new();
        for (b, insts) in code.into_iter().enumerate() {
            let (insts, words): (Vec<_>, Vec<_>) = insts.into_iter().unzip();
            facts.words.push(words);
            blocks.push(AllocatedBlock {
                id: BlockId(b as u32),
                origin: None,
                insts,
            });
        }
        for &(b, i) in reloads {
            let Some((_, Reg::Phys(s))) = blocks[b].insts[i].is_move() else {
                panic!("not a move");
            };
            facts.reloads.push((b, i, s));
        }
        for &(b, i) in stores {
            let Some((Reg::Phys(s), _)) = blocks[b].insts[i].is_move() else {
                panic!("not a move");
            };
            facts.stores.push((b, i, s));
        }
        let mut alloc = Allocated {
            blocks,
            num_regs: 255,
            fewest_regs: 255,
            spill_bytes: 0,
            checked: false,
            pred_spills: 0,
            spills: 0,
            spills_forced: false,
            reloads: 0,
            class_sizes: [0; 3],
            class_kinds: [RegKind::B32; 3],
            facts: None,
        };
        let dropped = forward(&mut alloc, facts).expect("no checker to fail");
        (alloc.blocks.into_iter().map(|b| b.insts).collect(), dropped)
    }

    /// The first register of each instruction's operands.
    fn regs(insts: &[Sm50Inst]) -> Vec<Vec<u8>> {
        insts
            .iter()
            .map(|i| {
                i.ops
                    .iter()
                    .filter_map(|o| match o.reg {
                        Reg::Phys(p) => Some(p.0),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    /// A reload read twice, then written again: the move goes and both reads read the slot.
    #[test]
    fn reads_of_a_reload_read_the_slot() {
        let code = vec![vec![
            mov(4, 200, 1),
            touch(4, 1, false),
            touch(4, 1, false),
            touch(4, 1, true),
            touch(4, 1, false),
        ]];
        let (out, dropped) = run(code, &[(0, 0)]);
        assert_eq!(dropped, 1);
        assert_eq!(regs(&out[0]), vec![vec![200], vec![200], vec![4], vec![4]]);
    }

    /// A store into the slot ends the walk: where the reload is still read after it, the move
    /// stays and nothing is renamed; where it is not, the reads before the store are renamed.
    #[test]
    fn a_write_of_the_slot_stops_the_walk() {
        let reread = vec![vec![
            mov(4, 200, 1),
            touch(4, 1, false),
            mov(200, 7, 1),
            touch(4, 1, false),
        ]];
        let (out, dropped) = run(reread, &[(0, 0)]);
        assert_eq!(dropped, 0);
        assert_eq!(
            regs(&out[0]),
            vec![vec![4, 200], vec![4], vec![200, 7], vec![4]]
        );
        let dead = vec![vec![
            mov(4, 200, 1),
            touch(4, 1, false),
            mov(200, 7, 1),
            touch(7, 1, false),
        ]];
        let (out, dropped) = run(dead, &[(0, 0)]);
        assert_eq!(dropped, 1);
        assert_eq!(regs(&out[0]), vec![vec![200], vec![200, 7], vec![7]]);
    }

    /// A reload read in the next block (live at the end of its own) keeps its move.
    #[test]
    fn a_reload_live_out_stays() {
        let code = vec![
            vec![mov(4, 200, 1), touch(4, 1, false)],
            vec![touch(4, 1, false)],
        ];
        let (out, dropped) = run(code, &[(0, 0)]);
        assert_eq!(dropped, 0);
        assert_eq!(regs(&out[0]), vec![vec![4, 200], vec![4]]);
    }

    /// Pairs: a pair reload read as a pair and as its high half reads the slot's registers;
    /// a scalar reload read as part of a pair keeps its move.
    #[test]
    fn pair_uses_keep_their_words() {
        let pair = vec![vec![
            mov(4, 200, 2),
            touch(4, 2, false),
            touch(5, 1, false),
            touch(4, 2, true),
        ]];
        let (out, dropped) = run(pair, &[(0, 0)]);
        assert_eq!(dropped, 1);
        assert_eq!(regs(&out[0]), vec![vec![200], vec![201], vec![4]]);
        let partial = vec![vec![mov(5, 201, 1), touch(4, 2, false), touch(4, 2, true)]];
        let (out, dropped) = run(partial, &[(0, 0)]);
        assert_eq!(dropped, 0);
        assert_eq!(regs(&out[0])[1], vec![4]);
    }

    /// A store `MOV s, r`: the def of `r` writes `s`, the reads of `r` before and after the
    /// store read `s`, and the move goes; `r`'s next def keeps its register.
    #[test]
    fn a_stored_value_is_defined_in_the_slot() {
        let code = vec![vec![
            touch(4, 1, true),
            touch(4, 1, false),
            mov(200, 4, 1),
            touch(4, 1, false),
            touch(4, 1, true),
            touch(4, 1, false),
        ]];
        let (out, dropped) = run_with_stores(code, &[], &[(0, 2)]);
        assert_eq!(dropped, 1);
        assert_eq!(
            regs(&out[0]),
            vec![vec![200], vec![200], vec![200], vec![4], vec![4]]
        );
        // a pair: its def is one operand of two words
        let pair = vec![vec![touch(4, 2, true), mov(200, 4, 2), touch(5, 1, false)]];
        let (out, dropped) = run_with_stores(pair, &[], &[(0, 1)]);
        assert_eq!(dropped, 1);
        assert_eq!(regs(&out[0]), vec![vec![200], vec![201]]);
    }

    /// Where the slot is read or written between the def and the store, the def is in another
    /// block, the def writes only part of the stored registers, or `r` is still read after
    /// the block, the store's move stays and nothing is renamed.
    #[test]
    fn a_store_stays_where_the_slot_is_busy() {
        // (code, the store's block and index)
        let cases = vec![
            // the slot's old value is read after the def
            (
                vec![vec![
                    touch(4, 1, true),
                    touch(200, 1, false),
                    mov(200, 4, 1),
                ]],
                (0, 2),
            ),
            // the slot is written between them
            (
                vec![vec![touch(4, 1, true), mov(200, 7, 1), mov(200, 4, 1)]],
                (0, 2),
            ),
            // the def is in the block before
            (vec![vec![touch(4, 1, true)], vec![mov(200, 4, 1)]], (1, 0)),
            // a pair stored, one word of it written last
            (
                vec![vec![touch(4, 2, true), touch(5, 1, true), mov(200, 4, 2)]],
                (0, 2),
            ),
            // r read in the next block
            (
                vec![
                    vec![touch(4, 1, true), mov(200, 4, 1)],
                    vec![touch(4, 1, false)],
                ],
                (0, 1),
            ),
        ];
        for (code, store) in cases {
            let before: Vec<Vec<Vec<u8>>> = code
                .iter()
                .map(|b| regs(&b.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>()))
                .collect();
            let (out, dropped) = run_with_stores(code, &[], &[store]);
            assert_eq!(dropped, 0, "{before:?}");
            let after: Vec<Vec<Vec<u8>>> = out.iter().map(|b| regs(b)).collect();
            assert_eq!(after, before);
        }
    }

    /// A value spilled by `spill` and reloaded in two blocks: after promotion and [`forward`]
    /// no reload's or store's move is left (the defs write the slots' registers), and the
    /// assignment checker, run again on the result with its operations rewritten, passes.
    #[test]
    fn spilled_values_keep_no_move() {
        const N: usize = 220;
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let (first, second) = (b.new_block(), b.new_block());
        let vs: Vec<VReg> = (0..N).map(|_| b.new_vreg(RegKind::B32)).collect();
        for v in &vs {
            let mut i = Sm50Inst::new(Role::Plain);
            i.def(*v, false);
            b.push(first, i);
        }
        for blk in [first, second] {
            for v in &vs {
                let mut i = Sm50Inst::new(Role::Plain);
                i.use_(*v);
                b.push(blk, i);
            }
        }
        let mut br = Sm50Inst::new(Role::Branch);
        br.targets.push(second);
        br.branch_piece(0, None);
        b.terminate(first, br, vec![(second, Vec::new())]);
        b.terminate(second, Sm50Inst::new(Role::Ret), Vec::new());
        let code = b.finish().expect("valid vcode");
        let opts = AllocOptions {
            checker: true,
            ..AllocOptions::default()
        };
        let out = allocate(&code, &opts).expect("allocates, and the checker passes");
        assert_eq!((out.spill_bytes, out.spills, out.reloads), (0, 0, 0));
        // slot registers: those above what the allocation without promotion used
        let plain = AllocOptions {
            promote_slots: false,
            ..AllocOptions::default()
        };
        let first_slot = allocate(&code, &plain).expect("allocates").num_regs;
        let in_slot = |r: Reg| matches!(r, Reg::Phys(p) if u32::from(p.0) >= first_slot);
        let insts: Vec<&Sm50Inst> = out.blocks.iter().flat_map(|b| &b.insts).collect();
        let plain_in_slot = |def: bool| {
            insts
                .iter()
                .filter(|i| i.role == Role::Plain && i.ops.len() == 1 && in_slot(i.ops[0].reg))
                .filter(|i| (i.ops[0].spec.kind == OpKind::Def) == def)
                .count()
        };
        assert!(plain_in_slot(false) > 2, "reads read slots' registers");
        assert!(plain_in_slot(true) > 2, "defs write slots' registers");
        let moves = |into: bool| {
            insts
                .iter()
                .filter_map(|i| i.is_move())
                .filter(|(d, s)| in_slot(if into { *d } else { *s }))
                .count()
        };
        assert_eq!(moves(true), 0, "no move into a slot's register is left");
        assert_eq!(moves(false), 0, "no move out of a slot's register is left");
    }
}
