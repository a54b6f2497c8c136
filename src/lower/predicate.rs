//! If-conversion before register allocation, for branch sides that hold a long-latency load:
//! the side's instructions run under the branch's predicate in the branching block, and the
//! values the join receives are chosen by tied writes or `SEL`.
//!
//! In: the [`VCode`] selection produced (virtual registers, SSA, block parameters), before
//! [`super::hoist`]. Out: the same function where every convertible branch (below) is gone:
//! the side's instructions are appended to the branching block A, each piece guarded by the
//! branch's predicate (or its negation for the other side of a diamond; copies stay
//! unguarded, they only name a value), then a jump to the join J. Per join parameter whose
//! two incoming values differ: when a side computes its value in one plain instruction with
//! one late write, that write is *tied* (a reuse constraint) to the other path's value,
//! computed before it, so the lanes that skip the instruction keep that value in the same
//! register (ptxas's `@P1 LOP.XOR R2, R2, R27`); otherwise a `SEL d, t, e, P` after the
//! sides picks it. When A is then J's only predecessor, J's
//! instructions are appended too and J's parameters are renamed to the values A passes, so
//! a chain of such `if`s becomes one block. Blocks that were merged away are removed and the
//! others renumbered; every structural rule of [`VCode`] is checked again.
//!
//! # Why before allocation
//!
//! [`super::ifconv`] converts small sides after allocation, where a side's loads already have
//! registers: the allocator gave consecutive sides the same few registers, so the loads of
//! one side wait for the uses of the previous side's loads. curand's `initRNG` tests 32 bits
//! one after another and, for each set bit, XORs five words loaded from a table into its
//! state: leafold waited a full global-memory latency per bit, where ptxas predicates the
//! sides and issues the next bits' loads before waiting. Converted here, the sides are one
//! block of SSA code and [`super::hoist`] moves each guarded load up past the previous
//! sides' instructions (it depends only on its address and its predicate), as ptxas does.
//!
//! # When a branch converts
//!
//! Block A ends in `@P BRA t ; BRA e` (the selector's conditional branch). A *side* is a block
//! that is not the entry, whose only predecessor is A, that has no parameters, ends in an
//! unconditional jump to J, and whose other instructions are copies or plain instructions of
//! predicable pieces (`predicable=` in `isa/sm50.isa`: computation, moves, memory accesses
//! and texture fetches; no control transfer, barrier, warp-wide instruction, texture query
//! or surface access), without clobbers, and unguarded, except under an *inner guard*
//! (below). The shapes: an if-then (one of `t`, `e` a side to J, the other J itself) and a
//! diamond (both sides to the same J). J is not A, not a side, has no predicate parameters,
//! and is not a block that only exits (there the lanes that skip leave at once, `@P EXIT`).
//! At least one side holds a global, local or generic load or a texture fetch.
//!
//! Branches convert in rounds until none does, so a nested `if` converts from the inside
//! out: NVVM's `if (a && b) x = tex(..)` is `@!a BRA J` then, in the side, `b = setp ..;
//! @!b BRA J`; once the inner branch is gone, the outer side holds instructions guarded by
//! `b`, which the side computes itself. Such an inner guard `q` is allowed when one
//! unguarded `ISETP`/`FSETP`/`DSETP` of the side computes it alone (`.AND q, PT, .., PT`)
//! before its uses, and every use guards with the same sense. Converting the outer branch
//! folds its guard G into that compare instead of guarding it: `q AND G` for `@q` uses,
//! `q OR NOT G` for `@!q` ones (ptxas's `FSETP.EQ.OR P3, PT, R19, RZ, P3`), so `q`'s uses
//! run only where both conditions hold; the compare itself runs in every lane.
//!
//! Exactness: each lane runs the pieces of the side it would have branched to, in order; a
//! guarded-off piece does nothing (sm50-isa.md; `sim` executes it so), so a lane's values are
//! those it had; a side's defs are read only inside the side (SSA: the side dominates nothing
//! else) under the same guard, and by the `SEL`s, which pick them only in lanes that ran the
//! side. A tied write leaves the other path's value in the lanes that skip it, which is
//! what they must see. Copies are safe unguarded: they only name a value. A folded compare
//! writes `q` in lanes outside G too (from sources the side may not have computed there),
//! but G decides `q` in those lanes, and `q` is read only inside the side. An instruction
//! an inner conversion tied to the outer path's value keeps that value wherever it does not
//! run, so it carries the join value of both levels without a `SEL`.
//!
//! # Trade-off
//!
//! A converted side costs one issue slot per piece in every lane, even when the whole warp
//! would have skipped it, plus one `SEL` per differing join value that no tie covers (the
//! allocator cannot merge them as it merges the branch's moves; a tie costs a copy only
//! where the other value is still live after the write); the branch cost `SSY`/`@P SYNC`/`SYNC` when
//! divergent (13 stall cycles each for the last two) or a `BRA` when uniform, and, for a side
//! with a load, a full memory latency that nothing else overlapped. So only sides with a
//! long-latency load (about 200 cycles) convert, and only up to [`MAX_PIECES`] pieces in all
//! (sides and `SEL` words): past that, a side skipped by the whole warp costs more issue
//! slots than the latency it hides (ptxas 11.8 converts one `LDG` with 18 integer
//! instructions, not with 20). Smaller sides without such a load are left to
//! [`super::ifconv`], where the allocator's moves cost nothing. Hoisting the guarded loads
//! lengthens the predicates' and values' live ranges (more registers, and predicates may
//! spill to registers: `machinst::pred`).
//!
//! A texture fetch counts as such a load: its result comes back after a few hundred cycles
//! like a global load's, and ptxas 11.8 predicates it (`@!P0 TLDS.LZ.P RZ, R4, R4, ..`
//! where the PTX branched around `tex.1d`; the unrolled loop of leukocyte's
//! `dilate_kernel` issues four guarded fetches before waiting on any). A guarded-off fetch
//! still issues and holds its scoreboard until the texture unit answers, so the lanes that
//! skip pay the side's issue slots and, when they read the destination (a running maximum),
//! the wait; a branch around it costs `SSY`/`@P SYNC`/`SYNC` and serialises the fetches of
//! consecutive sides. So sides whose only long loads are texture fetches convert only where
//! fetches can overlap: outside loops (the cost is paid once), or in a loop whose body
//! holds two fetches or more. A loop of one fetch per trip stays a branch, as ptxas keeps
//! it (the older corpus's `dilate_kernel`: `@!P0 SYNC` around its one `TLDS`), since every
//! trip a whole warp skips would issue the side and wait for the fetch anyway.

use rustc_hash::FxHashMap as HashMap;

use super::inst::{RegRef, Role, Sm50Inst};
use crate::machinst::{
    BlockData, BlockId, MachInst, OpConstraint, OpKind, OpPos, OpSpec, Reg, RegKind, SrcLoc, VCode,
    VReg,
};
use crate::sm50::{self, Field, Form, MemAccess, MemSpace};

/// At most this many pieces per conversion: the sides' instructions plus the `SEL` words
/// (see the trade-off in the essay).
pub const MAX_PIECES: usize = 20;

/// `@P BRA t ; BRA e` as the selector builds it: (P, negated).
fn two_way(b: &Sm50Inst) -> Option<(VReg, bool)> {
    if b.role != Role::Branch || b.pieces.len() != 2 || b.targets.len() != 2 {
        return None;
    }
    let (c, u) = (&b.pieces[0], &b.pieces[1]);
    if c.target != Some(0) || u.target != Some(1) || !u.refs.is_empty() || c.refs.len() != 1 {
        return None;
    }
    let r = c.refs[0];
    if r.field != Field::Pg || r.offset != 0 {
        return None;
    }
    // Nothing but the guard decides (no condition-code test or other field set).
    let pgn = c.inst.get(Field::Pgn)?;
    let bare_c = sm50::Inst::new(Form::BRA)
        .with(Field::Pg, c.inst.get(Field::Pg)?)
        .with(Field::Pgn, pgn);
    if c.inst != bare_c || u.inst != sm50::Inst::new(Form::BRA) {
        return None;
    }
    match b.ops.get(usize::from(r.op))?.reg {
        Reg::Virt(v) if v.kind == RegKind::Pred => Some((v, pgn != 0)),
        _ => None,
    }
}

/// The target of an unconditional jump.
fn jump_target(b: &Sm50Inst) -> Option<BlockId> {
    (b.role == Role::Branch
        && b.pieces.len() == 1
        && b.targets.len() == 1
        && b.pieces[0].refs.is_empty()
        && b.pieces[0].inst == sm50::Inst::new(Form::BRA))
    .then(|| b.targets[0])
}

/// Whether `i` may run in a side after conversion (see the essay).
pub(super) fn convertible(i: &Sm50Inst) -> bool {
    match i.role {
        Role::Move => true,
        Role::Plain => {
            let (regs, preds) = i.clobbers();
            regs.is_empty()
                && preds.is_empty()
                && i.pieces.iter().all(|p| {
                    p.target.is_none()
                        && p.inst.info().props.predicable
                        && p.inst.get(Field::Pg) == Some(7)
                        && p.inst.get(Field::Pgn) == Some(0)
                        && p.refs.iter().all(|r| r.field != Field::Pg)
                })
        }
        _ => false,
    }
}

/// The predicate `i` alone computes, when it is a compare that a guard can be folded into:
/// one unguarded `ISETP`/`FSETP`/`DSETP` piece writing one predicate (the other `PT`) and
/// combining with nothing yet (`.AND ..., PT`).
fn combinable_def(i: &Sm50Inst) -> Option<VReg> {
    let [piece] = i.pieces.as_slice() else {
        return None;
    };
    let inst = &piece.inst;
    let plain = inst.get(Field::Pacc) == Some(7)
        && inst.get(Field::Paccn) == Some(0)
        && inst.get(Field::Bop) == Some(0)
        && inst.get(Field::Pd1) == Some(7);
    if !convertible(i) || !plain || piece.refs.iter().any(|r| r.field == Field::Pacc) {
        return None;
    }
    let mut defs = piece.refs.iter().filter(|r| r.field == Field::Pd0);
    let (Some(r), None) = (defs.next(), defs.next()) else {
        return None;
    };
    match i.ops.get(usize::from(r.op))?.reg {
        Reg::Virt(q) if q.kind == RegKind::Pred => Some(q),
        _ => None,
    }
}

/// The guard of an instruction that an earlier conversion put into a side: (predicate,
/// negated), the same on every piece, the instruction otherwise [`convertible`].
fn inner_guard(i: &Sm50Inst) -> Option<(VReg, bool)> {
    if i.role != Role::Plain {
        return None;
    }
    let (regs, preds) = i.clobbers();
    if !regs.is_empty() || !preds.is_empty() {
        return None;
    }
    let mut guard = None;
    for p in &i.pieces {
        let mut pgs = p.refs.iter().filter(|r| r.field == Field::Pg);
        let (Some(r), None) = (pgs.next(), pgs.next()) else {
            return None;
        };
        let Reg::Virt(q) = i.ops.get(usize::from(r.op))?.reg else {
            return None;
        };
        let g = (q, p.inst.get(Field::Pgn)? != 0);
        if p.target.is_some() || !p.inst.info().props.predicable || *guard.get_or_insert(g) != g {
            return None;
        }
    }
    guard
}

/// Whether a side's body converts (see the essay), and then per predicate that guards some
/// of its instructions already (an inner branch converted before), whether those guards
/// are negated. Such a predicate must be computed in the body, before its uses, by a
/// [`combinable_def`], and guard with one sense only.
fn side_guards(body: &[Sm50Inst]) -> Option<HashMap<VReg, bool>> {
    let mut combinable: Vec<VReg> = Vec::new();
    let mut senses: HashMap<VReg, bool> = HashMap::default();
    for i in body {
        if convertible(i) {
            combinable.extend(combinable_def(i));
            continue;
        }
        let (q, neg) = inner_guard(i)?;
        if !combinable.contains(&q) || *senses.entry(q).or_insert(neg) != neg {
            return None;
        }
    }
    Some(senses)
}

/// Whether `i` loads from memory with a long latency (global, local or generic, or a
/// texture fetch).
fn long_load(i: &Sm50Inst) -> bool {
    i.pieces.iter().any(|p| {
        let props = p.inst.info().props;
        props.access == MemAccess::Load
            && matches!(
                props.space,
                MemSpace::Global | MemSpace::Local | MemSpace::Generic | MemSpace::Texture
            )
    })
}

/// Whether `i` fetches from a texture.
fn fetch(i: &Sm50Inst) -> bool {
    i.pieces.iter().any(|p| {
        let props = p.inst.info().props;
        props.space == MemSpace::Texture && props.access == MemAccess::Load
    })
}

/// Whether guarded texture fetches at block `a` can overlap (see the essay): `a` is in no
/// loop, or its innermost loop holds two fetches or more. A loop is a back edge `u -> h`
/// (`h <= u` in block order, which follows the PTX) with the blocks between; the innermost
/// around `a` is the shortest that contains it.
fn fetches_overlap(blocks: &[BlockData<Sm50Inst>], dead: &[bool], a: usize) -> bool {
    let mut inner: Option<(usize, usize)> = None;
    for (u, b) in blocks.iter().enumerate() {
        if dead[u] {
            continue;
        }
        for (h, _) in &b.succs {
            let h = h.0 as usize;
            if h <= a && a <= u && inner.map_or(true, |(h0, u0)| u - h < u0 - h0) {
                inner = Some((h, u));
            }
        }
    }
    let Some((h, u)) = inner else {
        return true;
    };
    let fetches: usize = (h..=u)
        .filter(|&k| !dead[k])
        .map(|k| blocks[k].insts.iter().filter(|i| fetch(i)).count())
        .sum();
    fetches >= 2
}

/// A conversion found at a block: the sides with their guard's negation, the join, and per
/// join parameter the values of the taken (`t`) and not-taken (`e`) paths.
struct Plan {
    sides: Vec<(usize, bool)>,
    join: usize,
    values: Vec<(VReg, VReg)>,
}

/// The conversion at block `a`, if its branch converts (see the essay).
fn plan_at(
    blocks: &[BlockData<Sm50Inst>],
    rename: &HashMap<VReg, VReg>,
    preds: &[usize],
    dead: &[bool],
    a: usize,
) -> Option<Plan> {
    let (_, neg) = two_way(blocks[a].insts.last()?)?;
    let [(t, targs), (e, eargs)] = blocks[a].succs.as_slice() else {
        return None;
    };
    let (t, e) = (t.0 as usize, e.0 as usize);
    if t == e {
        return None;
    }
    // The join a side jumps to, with its arguments.
    let side = |s: usize| -> Option<(usize, &[VReg])> {
        let b = &blocks[s];
        if s == 0 || s == a || dead[s] || preds[s] != 1 || !b.params.is_empty() {
            return None;
        }
        let (last, body) = b.insts.split_last()?;
        let j = jump_target(last)?.0 as usize;
        let [(_, args)] = b.succs.as_slice() else {
            return None;
        };
        (j != s && j != a && side_guards(body).is_some()).then_some((j, args.as_slice()))
    };
    // (sides with their guard's negation, join, values of the taken and not-taken paths)
    type Shape<'b> = (Vec<(usize, bool)>, usize, &'b [VReg], &'b [VReg]);
    let (sides, join, tvals, evals): Shape<'_> = match (side(t), side(e)) {
        (Some((jt, ta)), Some((je, ea))) if jt == je && jt != t && jt != e => {
            (vec![(t, neg), (e, !neg)], jt, ta, ea)
        }
        (Some((jt, ta)), _) if jt == e => (vec![(t, neg)], jt, ta, eargs.as_slice()),
        (_, Some((je, ea))) if je == t => (vec![(e, !neg)], je, targs.as_slice(), ea),
        _ => return None,
    };
    if blocks[join].params.iter().any(|p| p.kind == RegKind::Pred) {
        return None;
    }
    // A join that only exits: the skipping lanes leave at once (`@P EXIT`, `reconverge`),
    // and nothing after the side could overlap its loads; converted, a warp whose lanes all
    // skip would still wait for the guarded-off loads (vectorAdd's `if (i < n)`).
    if let [only] = blocks[join].insts.as_slice() {
        if only.role == Role::Ret {
            return None;
        }
    }
    let bodies = || {
        sides.iter().flat_map(|&(s, _)| {
            let insts = &blocks[s].insts;
            &insts[..insts.len() - 1]
        })
    };
    if !bodies().any(long_load) {
        return None;
    }
    // Texture fetches alone: only where they can overlap (see the essay).
    if !bodies().any(|i| long_load(i) && !fetch(i)) && !fetches_overlap(blocks, dead, a) {
        return None;
    }
    let values: Vec<(VReg, VReg)> = tvals
        .iter()
        .zip(evals)
        .map(|(&x, &y)| (resolve(rename, x), resolve(rename, y)))
        .collect();
    let sel_words: usize = values
        .iter()
        .filter(|(x, y)| x != y)
        .map(|(x, _)| x.kind.gprs().max(1) as usize)
        .sum();
    let pieces: usize = bodies().map(|i| i.pieces.len()).sum::<usize>() + sel_words;
    (pieces <= MAX_PIECES).then_some(Plan {
        sides,
        join,
        values,
    })
}

/// Convert every convertible branch of `vcode` (see the module essay).
pub(super) fn if_convert_early(vcode: VCode<Sm50Inst>) -> Result<VCode<Sm50Inst>, String> {
    let (mut blocks, mut vregs) = vcode.into_blocks();
    let n = blocks.len();
    let mut preds = vec![0usize; n];
    for b in &blocks {
        for (t, _) in &b.succs {
            preds[t.0 as usize] += 1;
        }
    }
    let mut dead = vec![false; n];
    // Join parameters renamed to the value the merged-into block passes.
    let mut rename: HashMap<VReg, VReg> = HashMap::default();
    let mut converted = 0;
    // Rounds until nothing converts: converting an inner branch (a later block) can make
    // the side of an outer one (an earlier block) convertible.
    loop {
        let before = converted;
        for a in 0..n {
            while !dead[a] {
                let Some(plan) = plan_at(&blocks, &rename, &preds, &dead, a) else {
                    break;
                };
                apply(
                    &mut blocks,
                    &mut vregs,
                    &mut preds,
                    &mut dead,
                    &mut rename,
                    a,
                    plan,
                );
                converted += 1;
            }
        }
        if converted == before {
            break;
        }
    }
    if converted == 0 {
        return VCode::from_blocks_trusted(blocks, vregs);
    }
    let resolve = |v: VReg| resolve(&rename, v);
    // Renumber the blocks that stay.
    let mut new_id = vec![BlockId(u32::MAX); n];
    let mut k = 0u32;
    for (b, d) in dead.iter().enumerate() {
        if !d {
            new_id[b] = BlockId(k);
            k += 1;
        }
    }
    let mut b = 0;
    blocks.retain(|_| {
        b += 1;
        !dead[b - 1]
    });
    for blk in &mut blocks {
        for i in &mut blk.insts {
            i.visit_operands(&mut |r, _| {
                if let Reg::Virt(v) = r {
                    *r = Reg::Virt(resolve(*v));
                }
            });
            for t in &mut i.targets {
                *t = new_id[t.0 as usize];
            }
        }
        for (t, args) in &mut blk.succs {
            *t = new_id[t.0 as usize];
            for v in args {
                *v = resolve(*v);
            }
        }
    }
    VCode::from_blocks(blocks, vregs)
}

/// Rewrite block `a` by `plan` (see the essay): tie what can be tied ([`plan_ties`]), guard
/// the sides' instructions by the branch's predicate and append them to `a` (step 2), take
/// the join's arguments ([`join_args`]), then merge the join into `a` or jump to it.
fn apply(
    blocks: &mut [BlockData<Sm50Inst>],
    vregs: &mut Vec<RegKind>,
    preds: &mut [usize],
    dead: &mut [bool],
    rename: &mut HashMap<VReg, VReg>,
    a: usize,
    plan: Plan,
) {
    let branch = blocks[a]
        .insts
        .pop()
        .expect("a branching block ends in its branch");
    let (p, neg) = two_way(&branch).expect("planned at a conditional branch");
    let loc = branch.srcloc;
    // Edges into the join that go away: the sides' jumps, and A's own edge in an if-then.
    preds[plan.join] -= plan.sides.len();
    if plan.sides.len() == 1 {
        preds[plan.join] -= 1;
    }
    let (ties, tied) = plan_ties(blocks, rename, &plan);
    for (k, &(s, guard_neg)) in plan.sides.iter().enumerate() {
        let mut insts = std::mem::take(&mut blocks[s].insts);
        insts.pop();
        let inner = side_guards(&insts).expect("planned on convertible sides");
        for (idx, mut i) in insts.into_iter().enumerate() {
            if let Some(&inner_neg) = combinable_def(&i).and_then(|q| inner.get(&q)) {
                // The inner guard `q` folds this side's guard in and stays unguarded:
                // `@q` lanes need q AND G, `@!q` lanes need q OR NOT G (G: this side runs,
                // `p` XOR `guard_neg`).
                let op = i.use_(p);
                let piece = &mut i.pieces[0];
                piece.inst.set(Field::Bop, u64::from(inner_neg));
                piece
                    .inst
                    .set(Field::Paccn, u64::from(guard_neg != inner_neg));
                piece.refs.push(RegRef {
                    field: Field::Pacc,
                    op,
                    offset: 0,
                });
            } else if i.role == Role::Plain && inner_guard(&i).is_none() {
                guard(&mut i, p, guard_neg);
            }
            if let Some(&y) = ties.get(&(k, idx)) {
                tie(&mut i, y);
            }
            blocks[a].insts.push(i);
        }
        blocks[s].succs.clear();
        dead[s] = true;
    }
    let args = join_args(&mut blocks[a].insts, vregs, &plan, &tied, (p, neg), loc);
    let j = plan.join;
    let j_id = BlockId(j as u32);
    if preds[j] == 0 && j != 0 {
        // A is now J's only predecessor: J joins it, its parameters renamed.
        for (&param, &arg) in blocks[j].params.iter().zip(&args) {
            rename.insert(param, arg);
        }
        blocks[j].params.clear();
        let j_insts = std::mem::take(&mut blocks[j].insts);
        let j_succs = std::mem::take(&mut blocks[j].succs);
        blocks[a].insts.extend(j_insts);
        blocks[a].succs = j_succs;
        dead[j] = true;
    } else {
        let mut jump = Sm50Inst::gen_jump(j_id);
        jump.srcloc = loc;
        blocks[a].insts.push(jump);
        blocks[a].succs = vec![(j_id, args)];
        preds[j] += 1;
    }
}

/// Per (side, instruction index) of a tied instruction, the value its def is tied to.
type Ties = HashMap<(usize, usize), VReg>;

/// Step 1 of [`apply`]: join values a side computes in one plain instruction. That
/// instruction writes into the register of the other path's value (a reuse constraint), so
/// lanes that skip it keep that value and no `SEL` is needed (ptxas's `@P LOP.XOR R2, R2,
/// R27`). Renames the sides' operands by `rename` first. Returns the ties (side, instruction
/// index) -> the value its def is tied to, and per join value the tied side value that
/// carries it.
fn plan_ties(
    blocks: &mut [BlockData<Sm50Inst>],
    rename: &HashMap<VReg, VReg>,
    plan: &Plan,
) -> (Ties, Vec<Option<VReg>>) {
    let mut def_at: HashMap<VReg, (usize, usize)> = HashMap::default();
    for (k, &(s, _)) in plan.sides.iter().enumerate() {
        for i in &mut blocks[s].insts {
            // (under the renaming so far, so that `tie` finds an operand it already reads)
            i.visit_operands(&mut |r, _| {
                if let Reg::Virt(v) = r {
                    *r = Reg::Virt(resolve(rename, *v));
                }
            });
        }
        for (idx, i) in blocks[s].insts.iter().enumerate() {
            i.for_each_operand(&mut |r, spec| {
                if let (Reg::Virt(v), OpKind::Def) = (r, spec.kind) {
                    def_at.insert(v, (k, idx));
                }
            });
        }
    }
    let mut ties: Ties = HashMap::default();
    // Per join value, the tied side value that carries it.
    let mut tied: Vec<Option<VReg>> = Vec::with_capacity(plan.values.len());
    for &(tv, ev) in &plan.values {
        let mut try_tie = |x: VReg, y: VReg| {
            let Some(&(k, idx)) = def_at.get(&x) else {
                return false;
            };
            // `y` is computed before the instruction: outside the sides, or in an earlier one.
            let before = def_at.get(&y).map_or(true, |&(ky, _)| ky < k);
            let inst = &blocks[plan.sides[k].0].insts[idx];
            let ok =
                before && !ties.contains_key(&(k, idx)) && (tieable(inst, x) || tied_to(inst, y));
            if ok {
                ties.insert((k, idx), y);
            }
            ok
        };
        tied.push(if tv == ev {
            None
        } else if try_tie(ev, tv) {
            Some(ev)
        } else if try_tie(tv, ev) {
            Some(tv)
        } else {
            None
        });
    }
    (ties, tied)
}

/// Step 3 of [`apply`]: one value per join parameter: the tied side value (`tied`), or
/// `SEL d, t, e, P` (appended to `insts`, at `loc`) where the paths differ.
fn join_args(
    insts: &mut Vec<Sm50Inst>,
    vregs: &mut Vec<RegKind>,
    plan: &Plan,
    tied: &[Option<VReg>],
    (p, neg): (VReg, bool),
    loc: SrcLoc,
) -> Vec<VReg> {
    let mut args = Vec::with_capacity(plan.values.len());
    for (&(tv, ev), &carrier) in plan.values.iter().zip(tied) {
        if tv == ev {
            args.push(tv);
            continue;
        }
        if let Some(x) = carrier {
            // The side's value holds the other path's value in the lanes that skipped it.
            args.push(x);
            continue;
        }
        let d = VReg {
            index: vregs.len() as u32,
            kind: tv.kind,
        };
        vregs.push(tv.kind);
        let words = tv.kind.gprs().max(1) as u8;
        let mut sel = Sm50Inst::new(Role::Plain);
        sel.srcloc = loc;
        let dop = sel.def(d, words > 1);
        let top = sel.use_(tv);
        let eop = sel.use_(ev);
        let pop = sel.use_(p);
        for w in 0..words {
            let inst = sm50::Inst::new(Form::SEL_R).with(Field::Psn, u64::from(neg));
            sel.piece(
                inst,
                &[
                    (Field::Rd, dop, w),
                    (Field::Ra, top, w),
                    (Field::Rb, eop, w),
                    (Field::Ps, pop, 0),
                ],
            );
        }
        insts.push(sel);
        args.push(d);
    }
    args
}

/// `v` under the renaming of merged join parameters.
fn resolve(rename: &HashMap<VReg, VReg>, mut v: VReg) -> VReg {
    while let Some(&w) = rename.get(&v) {
        v = w;
    }
    v
}

/// Whether `i` computes `x` alone in one late write, so that the write may take another
/// value's register ([`tie`]).
pub(super) fn tieable(i: &Sm50Inst, x: VReg) -> bool {
    let mut defs = 0;
    let mut ok = false;
    i.for_each_operand(&mut |r, spec| {
        if spec.kind == OpKind::Def {
            defs += 1;
            ok = r == Reg::Virt(x)
                && spec.constraint == OpConstraint::Reg
                && spec.pos == OpPos::Late
                && x.kind != RegKind::Pred;
        }
    });
    i.role == Role::Plain && i.pieces.len() == 1 && defs == 1 && ok
}

/// Whether `i` (one def) is tied to `y` already: an inner conversion made it keep `y` in
/// the lanes that skip it, which is what the lanes skipping the outer side must see too.
fn tied_to(i: &Sm50Inst, y: VReg) -> bool {
    let mut defs = 0;
    let mut ok = false;
    i.for_each_operand(&mut |_, spec| {
        if spec.kind == OpKind::Def {
            defs += 1;
            ok = matches!(spec.constraint, OpConstraint::Reuse(q)
                if i.ops.get(usize::from(q)).map(|o| o.reg) == Some(Reg::Virt(y)));
        }
    });
    i.role == Role::Plain && defs == 1 && ok
}

/// Guard every piece of `i` by predicate `p` (negated when `neg`).
pub(super) fn guard(i: &mut Sm50Inst, p: VReg, neg: bool) {
    let q = i.use_(p);
    for piece in &mut i.pieces {
        piece.inst.set(Field::Pgn, u64::from(neg));
        piece.refs.push(RegRef {
            field: Field::Pg,
            op: q,
            offset: 0,
        });
    }
}

/// Make the one def of `i` write into the register of `y` (a reuse constraint on a use of
/// `y`, the existing one if `i` reads `y` already).
pub(super) fn tie(i: &mut Sm50Inst, y: VReg) {
    let q = match i.ops.iter().position(|o| {
        o.reg == Reg::Virt(y) && o.spec.kind == OpKind::Use && o.spec == OpSpec::use_()
    }) {
        Some(q) => q as u8,
        None => i.use_(y),
    };
    for o in &mut i.ops {
        if o.spec.kind == OpKind::Def {
            o.spec = OpSpec::reuse_def(usize::from(q));
        }
    }
}
