//! [`allocate`]: predicates, critical-edge splitting, environment sizing, regalloc2, edits.
//!
//! In: a [`VCode`] and [`AllocOptions`]. Out: an [`Allocated`] whose instructions name only
//! physical registers, or a typed [`AllocError`] (never a panic for any valid VCode).
//!
//! Invariants of the result: pairs sit at even registers and quads at multiples of 4 (the
//! colouring gives aligned bases; every class slice is built aligned); R1 and RZ are never
//! handed out; every register is below `max_regs`; `num_regs` = highest register touched + 1,
//! at least 2.

use super::assign::{self, NameProg, StepKind, Webs};
use super::check;
use super::pred::{allocate_preds, liveness_sets};
use super::vcode::{fields, fixed_operand_regs, fixed_regs, ra_class, VCode};
use super::{BlockId, MachInst, OpKind, OpPos, PhysReg, Reg, RegKind, VReg};
use regalloc2 as ra;

/// Options for [`allocate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocOptions {
    /// Registers R0..R(max_regs-1) may be used (`--maxrregcount`); at most 255.
    pub max_regs: u8,
    /// Run regalloc2's checker on the result.
    pub checker: bool,
    /// Byte offset from R1 where the spill area starts, i.e. the size of the kernel's own
    /// `.local` data below it; rounded up to 16 so that 128-bit slots stay aligned.
    pub spill_base: u32,
}

impl Default for AllocOptions {
    fn default() -> Self {
        AllocOptions {
            max_regs: 255,
            checker: false,
            spill_base: 0,
        }
    }
}

/// Why allocation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The VCode breaks a structural rule (a lowering bug).
    #[error("invalid vcode: {0}")]
    Invalid(String),
    /// `max_regs` leaves too few registers for some instruction's operands.
    #[error("too few registers: {0}")]
    TooFewRegisters(String),
    /// More predicates needed at one instruction than exist.
    #[error("predicates: {0}")]
    Predicates(String),
    /// regalloc2 refused the function.
    #[error("regalloc2: {0}")]
    Regalloc(String),
    /// regalloc2's checker found the allocation wrong.
    #[error("regalloc2 checker: {0}")]
    Checker(String),
    /// The checker of the final assignment (`machinst::check`: which value each physical
    /// register holds at each use, after the colouring across widths) found it wrong.
    #[error("register assignment checker: {0}")]
    Assignment(String),
}

/// One block after allocation.
#[derive(Clone, Debug)]
pub struct AllocatedBlock<I> {
    /// The block's number in the allocated code (its index in [`Allocated::blocks`]); branch
    /// instructions name these numbers.
    pub id: BlockId,
    /// The block of the input VCode it comes from; `None` for a block inserted to split a
    /// critical edge. Unreachable input blocks are dropped and a block laid out before all of its
    /// predecessors is moved after the first of them to be placed (regalloc2's checker needs
    /// that order), so blocks may be renumbered.
    pub origin: Option<BlockId>,
    pub insts: Vec<I>,
}

/// The result of [`allocate`].
#[derive(Clone, Debug)]
pub struct Allocated<I> {
    /// Blocks in layout order (critical-edge blocks included), instructions physical.
    pub blocks: Vec<AllocatedBlock<I>>,
    /// Highest GPR used + 1, at least 2 (R1), as ptxas reports "Used N registers".
    pub num_regs: u32,
    /// Bytes of local memory for spill slots, addressed `[R1 + spill_base + 4 * slot]`; the
    /// local frame is `spill_base` (rounded up to 16) + `spill_bytes`.
    pub spill_bytes: u32,
    /// Whether regalloc2's checker ran (and passed).
    pub checked: bool,
    /// How many predicates were spilled into GPRs.
    pub pred_spills: usize,
    /// Number of spill (store) instructions inserted.
    pub spills: usize,
    /// Whether the spills were forced by pressure: in some class that spilled at its limit of
    /// 64 registers (not held lower by `max_regs`), the values live at one point plus the
    /// class's fixed registers (which no value live across the call naming them can take)
    /// outnumber 64. False when nothing spilled.
    pub spills_forced: bool,
    /// Number of reload instructions inserted.
    pub reloads: usize,
    /// Registers in each regalloc2 class (Int, Float, Vector) of the environment that was used
    /// (64 names per class that has values where the name spaces were coloured).
    pub class_sizes: [usize; 3],
    /// What each class held: normally B32, B64, B128; a class the function had no values of may
    /// hold overflow scalars (B32).
    pub class_kinds: [RegKind; 3],
}

impl<I> Allocated<I> {
    /// What spilling costs, for choosing between two allocations of one function: spill
    /// bytes first, then the spill and reload instructions.
    pub fn spill_cost(&self) -> (u32, usize) {
        (self.spill_bytes, self.spills + self.reloads)
    }
}

const KINDS: [RegKind; 3] = [RegKind::B32, RegKind::B64, RegKind::B128];

fn class_index(kind: RegKind) -> usize {
    match kind {
        RegKind::B32 | RegKind::Pred => 0,
        RegKind::B64 => 1,
        RegKind::B128 => 2,
    }
}

/// Drop blocks the entry cannot reach (regalloc2 cannot allocate them: it panics on vregs it
/// only meets in unreachable code) and lay the rest out so that every block but the entry comes
/// after at least one of its predecessors, renumbering and retargeting the branches. Returns
/// the new VCode and, per new block, its original id.
///
/// Why the order matters: regalloc2's checker visits the blocks first in layout order, and a
/// block none of whose predecessors has been visited yet starts from an empty state ("nothing
/// is known in any register") instead of being skipped. That empty state then flows to the
/// block's successors, and the meet at a join (which keeps only the registers known on *every*
/// incoming edge) can never win those registers back, so later uses report
/// `UnknownValueInAllocation` although the allocation is right (the toy-ISA interpreters and
/// the SM50 nested-loop test confirmed it; ion's own liveness follows the CFG, not the layout,
/// so only the checker needs this order). The order chosen keeps the input layout where it already has the
/// property (each step takes the first remaining block, in input order, that has a placed
/// predecessor), so well-ordered input is left untouched.
fn prune_unreachable<I: MachInst>(vc: VCode<I>) -> Result<(VCode<I>, Vec<BlockId>), String> {
    let n = vc.ranges.len();
    let order = layout_order(n, |b, out| {
        out.extend(vc.succs[b].iter().map(|(t, _)| t.0 as usize));
    });
    // Blocks never placed are exactly those the entry cannot reach.
    let kept: Vec<BlockId> = order.iter().map(|b| BlockId(*b as u32)).collect();
    if order.iter().enumerate().all(|(i, b)| i == *b) && order.len() == n {
        return Ok((vc, kept));
    }
    let mut new_id = vec![None; n];
    for (i, b) in order.iter().enumerate() {
        new_id[*b] = Some(BlockId(i as u32));
    }
    if order.windows(2).all(|w| w[0] < w[1]) {
        // Only unreachable blocks go: the one-pass rebuild, splitting no edge.
        let split: Vec<Vec<bool>> = vc.succs.iter().map(|ss| vec![false; ss.len()]).collect();
        return Ok((split_in_order(vc, &split, &order, &new_id)?, kept));
    }
    let (blocks, vregs) = vc.into_blocks();
    let mut blocks: Vec<Option<_>> = blocks.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(order.len());
    for &b in &order {
        let mut block: super::vcode::BlockData<I> = blocks[b].take().ok_or("block placed twice")?;
        retarget(&mut block, &new_id)?;
        out.push(block);
    }
    // Reordered valid code, the entry still first (`layout_order` starts there).
    Ok((VCode::from_blocks_trusted(out, vregs)?, kept))
}

/// Point the successors of `block` (and its terminator) at their new ids.
fn retarget<I: MachInst>(
    block: &mut super::vcode::BlockData<I>,
    new_id: &[Option<BlockId>],
) -> Result<(), String> {
    for (k, (t, _)) in block.succs.iter_mut().enumerate() {
        // a reachable block's successors are reachable
        *t = new_id[t.0 as usize].ok_or("unreachable successor of a reachable block")?;
        block
            .insts
            .last_mut()
            .ok_or("empty block")?
            .set_branch_target(k, *t);
    }
    Ok(())
}

/// The layout order of [`prune_unreachable`] for a CFG of `n` blocks whose successors
/// `succs(b, out)` appends to `out`: the entry, then repeatedly the first block not yet
/// placed, in index order, that has a placed predecessor. Blocks the entry cannot reach are
/// left out.
///
/// The blocks not yet placed that have a placed predecessor wait in a min-heap: each enters
/// it when its first predecessor is placed and leaves it when it is placed, so the heap's
/// least block is exactly the one that rule picks. (A search over the blocks in index order
/// for one with a placed predecessor, redone for every block placed, was quadratic where
/// the order is not the input's, and needed predecessor lists, a vector per block.)
fn layout_order(n: usize, mut succs: impl FnMut(usize, &mut Vec<usize>)) -> Vec<usize> {
    use std::cmp::Reverse;
    // placed, or waiting in `ready`
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut ready = std::collections::BinaryHeap::new();
    let mut next = Vec::new();
    seen[0] = true;
    ready.push(Reverse(0usize));
    while let Some(Reverse(b)) = ready.pop() {
        order.push(b);
        next.clear();
        succs(b, &mut next);
        for &t in &next {
            if !seen[t] {
                seen[t] = true;
                ready.push(Reverse(t));
            }
        }
    }
    order
}

/// Insert an empty jump block on every edge regalloc2 cannot place moves on: from a block with
/// several successors to one with several predecessors (a critical edge), and from a branch
/// with register operands to a block with several predecessors; then lay the blocks out as
/// [`prune_unreachable`] would.
///
/// The edge blocks count as appended after all other blocks (in the order of their source
/// block and successor), which can leave a block (a loop header entered through a split edge)
/// before all of its predecessors; the layout of [`prune_unreachable`] ([`layout_order`])
/// restores the property regalloc2's checker needs. Both happen in one rebuild of the code
/// (splitting and then pruning rebuilt it twice). Returns the new VCode and, per block, the
/// block of `vc` it was (`None` for an edge block).
fn split_edges<I: MachInst>(vc: VCode<I>) -> Result<(VCode<I>, Vec<Option<usize>>), String> {
    let n = vc.ranges.len();
    let mut npreds = vec![0usize; n];
    for ss in &vc.succs {
        for (t, _) in ss {
            npreds[t.0 as usize] += 1;
        }
    }
    let needs = |b: usize, t: usize| {
        let term_has_ops = vc.ra_operands_of(vc.ranges[b].1 as usize - 1) > 0;
        npreds[t] > 1 && (vc.succs[b].len() > 1 || term_has_ops)
    };
    // The edges to split, decided before the blocks are taken apart (without copying them).
    let split: Vec<Vec<bool>> = (0..n)
        .map(|b| {
            vc.succs[b]
                .iter()
                .map(|(t, _)| needs(b, t.0 as usize))
                .collect()
        })
        .collect();
    // The split CFG: edge block `n + m` is the m-th split edge (in the order of its source
    // block and successor), going to `edge_target[m]`; block `b`'s first split edge is
    // edge block `first_edge[b]`.
    let mut first_edge = Vec::with_capacity(n);
    let mut edge_target = Vec::new();
    for (b, ss) in vc.succs.iter().enumerate() {
        first_edge.push(n + edge_target.len());
        for (k, (t, _)) in ss.iter().enumerate() {
            if split[b][k] {
                edge_target.push(t.0 as usize);
            }
        }
    }
    let edge_blocks = edge_target.len();
    let total = n + edge_blocks;
    let order = layout_order(total, |b, out| {
        if b >= n {
            out.push(edge_target[b - n]);
            return;
        }
        let mut m = first_edge[b];
        for (k, (t, _)) in vc.succs[b].iter().enumerate() {
            if split[b][k] {
                out.push(m);
                m += 1;
            } else {
                out.push(t.0 as usize);
            }
        }
    });
    let origin: Vec<Option<usize>> = order.iter().map(|&b| (b < n).then_some(b)).collect();
    if edge_blocks == 0 && order.len() == n && order.iter().enumerate().all(|(i, b)| i == *b) {
        return Ok((vc, origin));
    }
    let mut new_id = vec![None; total];
    for (i, b) in order.iter().enumerate() {
        new_id[*b] = Some(BlockId(i as u32));
    }
    // (Whether the input blocks keep their order, without collecting them first.)
    let kept = || order.iter().filter(|&&b| b < n);
    let in_order = kept().zip(kept().skip(1)).all(|(a, b)| a < b);
    if in_order {
        return Ok((split_in_order(vc, &split, &order, &new_id)?, origin));
    }
    let (blocks, vregs) = vc.into_blocks();
    let mut blocks: Vec<Option<_>> = blocks.into_iter().map(Some).collect();
    // Each edge block's target and arguments, taken from its source block, whose edge then
    // goes to the edge block (in the numbering of the split CFG).
    let mut edges: Vec<Option<(BlockId, Vec<VReg>)>> = Vec::with_capacity(edge_blocks);
    for (b, block) in blocks.iter_mut().enumerate() {
        let block = block.as_mut().ok_or("block taken twice")?;
        for (k, succ) in block.succs.iter_mut().enumerate() {
            if split[b][k] {
                let mid = BlockId((n + edges.len()) as u32);
                edges.push(Some(std::mem::replace(succ, (mid, Vec::new()))));
            }
        }
    }
    let mut out = Vec::with_capacity(order.len());
    for &b in &order {
        let mut block = if b < n {
            blocks[b].take().ok_or("block placed twice")?
        } else {
            let (t, args) = edges[b - n].take().ok_or("edge block placed twice")?;
            super::vcode::BlockData {
                params: Vec::new(),
                insts: vec![I::gen_jump(t)],
                succs: vec![(t, args)],
            }
        };
        retarget(&mut block, &new_id)?;
        out.push(block);
    }
    // Valid code reordered, with jump blocks on split edges, the entry still first
    // (`layout_order` starts there): what `split_in_order` builds in its case.
    Ok((VCode::from_blocks_trusted(out, vregs)?, origin))
}

/// [`split_edges`]'s rebuild (and [`prune_unreachable`]'s, splitting nothing) where `order`
/// keeps the input blocks in their order (edge blocks go between them, almost always so): the instructions move over in one pass, with no
/// per-block round trip. The result is what the round trip builds from the same blocks: the
/// same blocks in the same order, each split edge's arguments and original target moved to its
/// edge block (a jump), every successor renumbered by `new_id` and its branch retargeted.
/// It is valid code because the input was (only jumps and renumbering are added), which
/// debug builds check ([`VCode::from_parts_trusted`]).
fn split_in_order<I: MachInst>(
    vc: VCode<I>,
    split: &[Vec<bool>],
    order: &[usize],
    new_id: &[Option<BlockId>],
) -> Result<VCode<I>, String> {
    let n = vc.ranges.len();
    let super::vcode::VCode {
        insts: old_insts,
        vregs,
        params: mut old_params,
        succs: mut old_succs,
        ranges: old_ranges,
        ..
    } = vc;
    let mut edges: Vec<Option<(BlockId, Vec<VReg>)>> = Vec::new();
    for (b, ss) in old_succs.iter_mut().enumerate() {
        for (k, succ) in ss.iter_mut().enumerate() {
            if split[b][k] {
                let mid = BlockId((n + edges.len()) as u32);
                edges.push(Some(std::mem::replace(succ, (mid, Vec::new()))));
            }
        }
    }
    let mut insts = Vec::with_capacity(old_insts.len() + edges.len());
    let mut ranges = Vec::with_capacity(order.len());
    let mut params = Vec::with_capacity(order.len());
    let mut succs = Vec::with_capacity(order.len());
    let mut old_insts = old_insts.into_iter();
    // The index of the next instruction `old_insts` gives.
    let mut pos = 0u32;
    for &b in order {
        let start = insts.len();
        let mut block_succs = if b < n {
            let (s, e) = old_ranges[b];
            // (Blocks left out of `order`, if any, are skipped; the order only goes forward.)
            if s < pos {
                return Err("block placed twice".into());
            }
            for _ in pos..s {
                old_insts.next();
            }
            insts.extend(old_insts.by_ref().take((e - s) as usize));
            pos = e;
            params.push(std::mem::take(&mut old_params[b]));
            std::mem::take(&mut old_succs[b])
        } else {
            let (t, args) = edges[b - n].take().ok_or("edge block placed twice")?;
            insts.push(I::gen_jump(t));
            params.push(Vec::new());
            vec![(t, args)]
        };
        if insts.len() == start {
            return Err("empty block".into());
        }
        for (k, (t, _)) in block_succs.iter_mut().enumerate() {
            *t = new_id[t.0 as usize].ok_or("unreachable successor of a reachable block")?;
            insts
                .last_mut()
                .ok_or("empty block")?
                .set_branch_target(k, *t);
        }
        succs.push(block_succs);
        ranges.push((start as u32, insts.len() as u32));
    }
    VCode::from_parts_trusted(insts, vregs, params, succs, ranges)
}

/// What [`pressure`] finds, per class.
struct Pressure {
    /// Maximum number of simultaneously live vregs, counting an instruction's defs with what
    /// is live after it and its uses with what is live before it (the class-size estimate).
    max: [usize; 3],
    /// The same at regalloc2's two points of each instruction: an early def is also live with
    /// the instruction's uses, a late use also with its defs. No allocation without spilling
    /// exists in a class with fewer registers than this (at least `max`).
    exact: [usize; 3],
    /// The most operands of the class one instruction names (the least a class must have to
    /// allocate at all).
    min_needed: [usize; 3],
}

/// Register pressure per class (see [`Pressure`]).
fn pressure<I: MachInst>(vc: &VCode<I>) -> Pressure {
    let (_, live_out) = liveness_sets(vc, |k| k != RegKind::Pred, false);
    let mut max = [0usize; 3];
    let mut exact = [0usize; 3];
    let mut min_needed = [0usize; 3];
    let class_of_vreg = |v: u32| class_of(vc.classes[v as usize]);
    // `live` as a dense flag per vreg, and the vregs flagged (to clear them per block)
    let mut live = vec![false; vc.vregs.len()];
    let mut flagged: Vec<u32> = Vec::new();
    // One instruction's fields (reused for every instruction of every block).
    let mut fs = Vec::new();
    for b in 0..vc.ranges.len() {
        let out = &live_out[b];
        let (s, e) = vc.ranges[b];
        // per-class counts of `live`, kept in step with it
        let mut c = [0usize; 3];
        let mut insert = |live: &mut [bool], c: &mut [usize; 3], v: u32| {
            if !live[v as usize] {
                live[v as usize] = true;
                flagged.push(v);
                c[class_of_vreg(v)] += 1;
            }
        };
        for &v in out {
            insert(&mut live, &mut c, v);
        }
        for (_, args) in &vc.succs[b] {
            for a in args {
                insert(&mut live, &mut c, a.index);
            }
        }
        for i in (s..e).rev() {
            fs.clear();
            super::vcode::for_each_field(&vc.insts[i as usize], |f| {
                if f.vreg.kind != RegKind::Pred {
                    fs.push(f);
                }
            });
            let mut here = [0usize; 3];
            // early defs; late uses not live after the instruction (each vreg once)
            let mut early_defs = [0usize; 3];
            let mut late_uses = [0usize; 3];
            for f in &fs {
                here[class_of_vreg(f.vreg.index)] += 1;
                if f.spec.kind == OpKind::Def && f.spec.pos == OpPos::Early {
                    early_defs[class_of_vreg(f.vreg.index)] += 1;
                }
            }
            // just after the instruction: everything live plus its defs
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                insert(&mut live, &mut c, f.vreg.index);
            }
            for (j, f) in fs.iter().enumerate() {
                let v = f.vreg.index;
                if f.spec.kind == OpKind::Use
                    && f.spec.pos == OpPos::Late
                    && !live[v as usize]
                    && !fs[..j]
                        .iter()
                        .any(|g| g.vreg.index == v && g.spec.pos == OpPos::Late)
                {
                    late_uses[class_of_vreg(v)] += 1;
                }
            }
            for k in 0..3 {
                max[k] = max[k].max(c[k]);
                exact[k] = exact[k].max(c[k] + late_uses[k]);
                min_needed[k] = min_needed[k].max(here[k]);
            }
            // just before it: defs dead, uses live
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                let v = f.vreg.index;
                if live[v as usize] {
                    live[v as usize] = false;
                    c[class_of_vreg(v)] -= 1;
                }
            }
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Use) {
                insert(&mut live, &mut c, f.vreg.index);
            }
            for k in 0..3 {
                max[k] = max[k].max(c[k]);
                exact[k] = exact[k].max(c[k] + early_defs[k]);
            }
        }
        for v in flagged.drain(..) {
            live[v as usize] = false;
        }
    }
    Pressure {
        max,
        exact,
        min_needed,
    }
}

/// More than 64 scalars live at once do not fit the Int class. When the function has no quads
/// (or no pairs), their class is free to hold a second (third) set of up to 64 scalars. The
/// 32-bit vregs are grouped into webs (a block parameter and all its arguments, and a reuse
/// def and its input, must share a class: regalloc2 cannot move between classes). Sweeping the
/// code in layout order, each web goes at its first definition to the class with the fewest
/// scalars live there (live = up to the last use in layout order, a cheap hull); dealing webs
/// round-robin instead was tried and fails on code that alternates short- and long-lived
/// values. Webs holding a fixed-register operand stay in Int, where their register lives.
/// Returns the per-class kinds if anything moved.
///
/// With `mix`, the pair and quad classes take scalars too where the function has pairs and
/// quads of its own: a class is then a name space of mixed widths (its names' widths are the
/// widths of the values they hold, followed by `assign::NameProg`), so that regalloc2 has
/// 3 × 64 names for what is live at once and spills only where the register file is full
/// rather than where one class is (cub's radix sort keeps more than 64 scalars live beside
/// its pairs and quads). The balance then counts the pairs and quads live in their classes.
fn overflow_scalars<I: MachInst>(
    vc: &mut VCode<I>,
    fixed: &[(RegKind, PhysReg)],
    mix: bool,
) -> Result<Option<[RegKind; 3]>, String> {
    let has = |k: RegKind| vc.vregs.contains(&k);
    let mut extra = Vec::new();
    let mut mixed = Vec::new();
    for (c, k) in [(2, RegKind::B128), (1, RegKind::B64)] {
        if !has(k) {
            extra.push(c);
        } else if mix {
            mixed.push(c);
        }
    }
    if extra.is_empty() && mixed.is_empty() {
        return Ok(None);
    }
    let n = vc.vregs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        let mut x = x;
        while p[x] != r {
            let next = p[x];
            p[x] = r;
            x = next;
        }
        r
    }
    for (b, succs) in vc.succs.iter().enumerate() {
        let _ = b;
        for (t, args) in succs {
            for (a, p) in args.iter().zip(&vc.params[t.0 as usize]) {
                let (ra_, rp) = (
                    find(&mut parent, a.index as usize),
                    find(&mut parent, p.index as usize),
                );
                parent[ra_.max(rp)] = ra_.min(rp);
            }
        }
    }
    // A reuse def and the use it reuses must share a class too.
    for inst in &vc.insts {
        let fs = fields(inst);
        for f in fs.iter().flatten() {
            if let super::OpConstraint::Reuse(pos) = f.spec.constraint {
                if let Some(Some(u)) = fs.get(usize::from(pos)) {
                    let (a, b) = (
                        find(&mut parent, f.vreg.index as usize),
                        find(&mut parent, u.vreg.index as usize),
                    );
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    let mut pinned = vec![false; n];
    if !fixed.is_empty() {
        for inst in &vc.insts {
            super::vcode::for_each_field(inst, |f| {
                if matches!(f.spec.constraint, super::OpConstraint::Fixed(_)) {
                    let r = find(&mut parent, f.vreg.index as usize);
                    pinned[r] = true;
                }
            });
        }
    }
    let targets: Vec<usize> = std::iter::once(0)
        .chain(extra.iter().copied())
        .chain(mixed.iter().copied())
        .collect();
    let class_ids = [ra::RegClass::Int, ra::RegClass::Float, ra::RegClass::Vector];
    // Last use of every vreg in layout order (a hull: enough for a balancing heuristic).
    let mut last_use = vec![0usize; n];
    for (i, inst) in vc.insts.iter().enumerate() {
        super::vcode::for_each_field(inst, |f| last_use[f.vreg.index as usize] = i);
    }
    for (b, succs) in vc.succs.iter().enumerate() {
        let term = vc.ranges[b].1 as usize - 1;
        for (_, args) in succs {
            for a in args {
                last_use[a.index as usize] = last_use[a.index as usize].max(term);
            }
        }
    }
    // A value live out of a block is live to its end (a loop's back edge keeps what the loop
    // reads live through the loop's body, past its last use in layout order).
    let (_, live_out) = liveness_sets(vc, |k| k != RegKind::Pred, false);
    for b in 0..vc.ranges.len() {
        let term = vc.ranges[b].1 as usize - 1;
        for &v in &live_out[b] {
            last_use[v as usize] = last_use[v as usize].max(term);
        }
    }
    // Sweep in layout order; each web goes, at its first definition, to the target class with
    // the fewest scalars live there at that point.
    let mut web_class: Vec<Option<usize>> = vec![None; n];
    let mut active: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut classes = vc.classes.clone();
    for (b, &(s, e)) in vc.ranges.iter().enumerate() {
        for i in s as usize..e as usize {
            let mut defs: Vec<u32> = Vec::new();
            if i == s as usize {
                defs.extend(vc.params[b].iter().map(|p| p.index));
            }
            super::vcode::for_each_field(&vc.insts[i], |f| {
                if f.spec.kind == super::OpKind::Def {
                    defs.push(f.vreg.index);
                }
            });
            for list in active.iter_mut() {
                list.retain(|end| *end >= i);
            }
            for v in defs {
                let v = v as usize;
                if vc.vregs[v] != RegKind::B32 {
                    if vc.vregs[v] != RegKind::Pred {
                        active[class_index(vc.vregs[v])].push(last_use[v].max(i));
                    }
                    continue;
                }
                let r = find(&mut parent, v);
                let c = match web_class[r] {
                    Some(c) => c,
                    None => {
                        let c = if pinned[r] {
                            0
                        } else {
                            *targets
                                .iter()
                                .min_by_key(|c| active[**c].len())
                                .unwrap_or(&0)
                        };
                        web_class[r] = Some(c);
                        c
                    }
                };
                classes[v] = class_ids[c];
                active[c].push(last_use[v].max(i));
            }
        }
    }
    let mut kinds = KINDS;
    for c in extra {
        kinds[c] = RegKind::B32;
    }
    vc.set_classes(classes, kinds.map(|k| k.gprs() as usize))?;
    Ok(Some(kinds))
}

/// Physical base registers per class, packed from R0 upward: fixed registers first, then
/// quads at 4-aligned bases, pairs at even bases, scalars in what is left. `None` if `sizes`
/// does not fit below `max_regs`.
fn layout(
    kinds: &[RegKind; 3],
    sizes: [usize; 3],
    fixed: &[(RegKind, PhysReg)],
    max_regs: u8,
    reserve0: bool,
) -> Option<[Vec<u8>; 3]> {
    let top = max_regs as usize;
    let mut free = vec![true; top];
    if top > 1 {
        free[1] = false; // stack pointer
    }
    if reserve0 && top > 0 {
        // Named outright by the code (the dynamic stack pointer of a function with
        // `alloca`, `lower::select::stack`): never handed out.
        free[0] = false;
    }
    let mut out: [Vec<u8>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (kind, r) in fixed {
        let w = kind.gprs() as usize;
        let base = r.0 as usize;
        if base % w != 0 || base + w > top || !(base..base + w).all(|x| free[x]) {
            return None;
        }
        (base..base + w).for_each(|x| free[x] = false);
        out[class_index(*kind)].push(r.0);
    }
    for c in [2usize, 1, 0] {
        let w = kinds[c].gprs() as usize;
        let mut base = 0;
        while out[c].len() < sizes[c] {
            if base + w > top {
                return None;
            }
            if (base..base + w).all(|x| free[x]) {
                (base..base + w).for_each(|x| free[x] = false);
                out[c].push(base as u8);
            }
            base += w;
        }
    }
    Some(out)
}

/// Whether some instruction names R0 outright (a physical operand, not a fixed constraint):
/// then R0 is in no class.
fn names_r0<I: MachInst>(insts: &[I]) -> bool {
    let mut found = false;
    for inst in insts {
        inst.for_each_operand(&mut |r, _| found |= r == Reg::Phys(PhysReg(0)));
        if found {
            break;
        }
    }
    found
}

/// Pick class sizes: start at `want` (capped at 64), never below `min`, shrink the largest
/// demand until the layout fits.
fn fit_sizes(
    kinds: &[RegKind; 3],
    want: [usize; 3],
    min: [usize; 3],
    fixed: &[(RegKind, PhysReg)],
    max_regs: u8,
    reserve0: bool,
) -> Result<[Vec<u8>; 3], AllocError> {
    if let Some(c) = (0..3).find(|c| min[*c] > 64) {
        return Err(AllocError::TooFewRegisters(format!(
            "one instruction names {} {:?} registers; a class holds at most 64",
            min[c], kinds[c]
        )));
    }
    let mut sizes = [0usize; 3];
    for c in 0..3 {
        sizes[c] = want[c].max(min[c]).min(64);
    }
    loop {
        if let Some(l) = layout(kinds, sizes, fixed, max_regs, reserve0) {
            return Ok(l);
        }
        // shrink the class using the most registers that is still above its minimum
        let victim = (0..3)
            .filter(|c| sizes[*c] > min[*c])
            .max_by_key(|c| sizes[*c] * kinds[*c].gprs() as usize);
        match victim {
            Some(c) => sizes[c] -= 1,
            None => {
                return Err(AllocError::TooFewRegisters(format!(
                    "{} scalars, {} pairs and {} quads needed by one instruction do not fit in {} registers",
                    min[0], min[1], min[2], max_regs
                )))
            }
        }
    }
}

/// Renumber the registers regalloc2 actually used so that they pack from R0 upward.
///
/// Within a class every register is interchangeable (no aliasing, no ABI), so any injective,
/// aligned renaming of a class's registers keeps the allocation valid; only fixed registers
/// must stay where they are. ion does not prefer low registers, so without this the register
/// count would be the top of each class slice rather than the number of registers in use.
/// Returns, per class, the physical base register of every regalloc2 register index.
fn compact(
    kinds: &[RegKind; 3],
    classes: &[Vec<u8>; 3],
    fixed: &[(RegKind, PhysReg)],
    out: &ra::Output,
    max_regs: u8,
    reserve0: bool,
) -> [Vec<u8>; 3] {
    let mut used: [Vec<bool>; 3] = [0, 1, 2].map(|c| vec![false; classes[c].len()]);
    let mut mark = |a: ra::Allocation| {
        if let Some(p) = a.as_reg() {
            used[class_of(p.class())][p.hw_enc()] = true;
        }
    };
    out.allocs.iter().for_each(|a| mark(*a));
    for (_, ra::Edit::Move { from, to }) in &out.edits {
        mark(*from);
        mark(*to);
    }
    let is_fixed = |c: usize, r: u8| fixed.iter().any(|(k, f)| class_index(*k) == c && f.0 == r);
    let mut sizes = [0usize; 3];
    for c in 0..3 {
        sizes[c] = (0..classes[c].len())
            .filter(|i| used[c][*i] || is_fixed(c, classes[c][*i]))
            .count();
    }
    let Some(packed) = layout(kinds, sizes, fixed, max_regs, reserve0) else {
        return classes.clone();
    };
    let mut map = classes.clone();
    for c in 0..3 {
        let nfixed = in_class(fixed, c);
        let mut next = packed[c][nfixed..].iter();
        for (i, base) in classes[c].iter().enumerate() {
            if used[c][i] && !is_fixed(c, *base) {
                match next.next() {
                    Some(b) => map[c][i] = *b,
                    None => return classes.clone(),
                }
            }
        }
    }
    map
}

/// regalloc2's environment for the class slices `classes`: every register preferred but
/// those of `last` (non-preferred: tried after all the others).
fn machine_env(classes: &[Vec<u8>; 3], last: &[(RegKind, PhysReg)]) -> ra::MachineEnv {
    let mut preferred = [ra::PRegSet::empty(); 3];
    let mut non_preferred = [ra::PRegSet::empty(); 3];
    for (c, regs) in classes.iter().enumerate() {
        for (i, r) in regs.iter().enumerate() {
            let p = ra::PReg::new(i, ra_class(KINDS[c])); // class c by identity
            if last.iter().any(|(k, f)| class_index(*k) == c && f.0 == *r) {
                non_preferred[c].add(p);
            } else {
                preferred[c].add(p);
            }
        }
    }
    ra::MachineEnv {
        preferred_regs_by_class: preferred,
        non_preferred_regs_by_class: non_preferred,
        scratch_by_class: [None; 3],
        fixed_stack_slots: Vec::new(),
    }
}

/// How many of `regs` are in allocation class `c`.
fn in_class(regs: &[(RegKind, PhysReg)], c: usize) -> usize {
    regs.iter().filter(|(k, _)| class_index(*k) == c).count()
}

fn class_of(rc: ra::RegClass) -> usize {
    match rc {
        ra::RegClass::Int => 0,
        ra::RegClass::Float => 1,
        ra::RegClass::Vector => 2,
    }
}

/// The class sizes to start from and the least each class must have (see [`Pressure`]).
///
/// Start at the pressure estimate (every register of a class costs 1, 2 or 4 GPRs whether
/// used or not, so slack is expensive); constraints such as early defs can need more, and
/// then the allocation spills and the retry in [`allocate_owned`] grows the class (without
/// running regalloc2 where `Pressure::exact` already says it must spill). Fixed registers (a
/// call's operands and clobbers) sit in their class on top of what the pressure estimate
/// asks for: values that live across the call cannot use them.
fn start_sizes<I: MachInst>(
    vc: &VCode<I>,
    press: &Pressure,
    fixed: &[(RegKind, PhysReg)],
) -> ([usize; 3], [usize; 3]) {
    let used: [bool; 3] = [0, 1, 2].map(|c| {
        vc.vregs
            .iter()
            .zip(&vc.classes)
            .any(|(k, rc)| *k != RegKind::Pred && class_of(*rc) == c)
    });
    let mut want = [0usize; 3];
    for c in 0..3 {
        if used[c] {
            want[c] = press.max[c] + in_class(fixed, c);
        }
    }
    (want, press.min_needed)
}

/// What [`allocate_names`] returns: the classes, regalloc2's output, the name-level code and
/// the physical base register of each of its accesses.
type Named = ([Vec<u8>; 3], ra::Output, NameProg, Vec<u8>);

/// Run regalloc2 on `vc` in `env`, taking its output out of the thread's context.
fn run_ra<I: MachInst>(
    vc: &VCode<I>,
    env: &ra::MachineEnv,
    ra_opts: &ra::RegallocOptions,
) -> Result<ra::Output, AllocError> {
    RA_CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        if let Err(e) = ra::run_with_ctx(vc, env, ra_opts, &mut ctx) {
            return Err(AllocError::Regalloc(format!("{e:?}")));
        }
        Ok(std::mem::take(&mut ctx.output))
    })
}

/// The allocation with name spaces (see the module essay of `machinst`): every class that
/// holds values gets 64 names, the fixed registers' first (regalloc2 tries them last), and
/// regalloc2 runs once. `None` where it spills (a class with more than 64 values live at once,
/// or fixed registers it could not work around) or where the names' colouring ([`assign`])
/// does not fit below `max_regs`: the class slices then allocate, with spills, in what fits.
/// The classes returned give, per class, the fixed register of each of its first names (the
/// other entries are placeholders that only keep every entry distinct).
fn allocate_names<I: MachInst>(
    vc: &mut VCode<I>,
    kinds: &[RegKind; 3],
    fixed: &[(RegKind, PhysReg)],
    ra_opts: &ra::RegallocOptions,
    opts: &AllocOptions,
    hint: u32,
    limits: Option<[usize; 3]>,
) -> Result<Option<Named>, AllocError> {
    let (max_regs, checker) = (opts.max_regs, opts.checker);
    let used: [bool; 3] = [0, 1, 2].map(|c| {
        in_class(fixed, c) > 0
            || vc
                .vregs
                .iter()
                .zip(&vc.classes)
                .any(|(k, rc)| *k != RegKind::Pred && class_of(*rc) == c)
    });
    let classes: [Vec<u8>; 3] = [0, 1, 2].map(|c| {
        if !used[c] {
            return Vec::new();
        }
        let mut names: Vec<u8> = fixed
            .iter()
            .filter(|(k, _)| class_index(*k) == c)
            .map(|(_, r)| r.0)
            .collect();
        let mut filler = 0u8..=254;
        let size = limits.map_or(assign::PER_CLASS, |l| l[c].clamp(1, assign::PER_CLASS));
        while names.len() < size {
            match filler.next() {
                Some(x) if !names.contains(&x) => names.push(x),
                Some(_) => {}
                None => break,
            }
        }
        names
    });
    if classes.iter().any(|c| c.len() > assign::PER_CLASS) {
        return Ok(None);
    }
    let to_preg = |kind: RegKind, r: PhysReg| {
        let c = class_index(kind);
        classes[c]
            .iter()
            .position(|b| *b == r.0)
            .map(|i| ra::PReg::new(i, ra_class(kind)))
    };
    if fixed.is_empty() {
        vc.resolve_no_fixed();
    } else {
        vc.resolve_fixed(&to_preg).map_err(AllocError::Invalid)?;
    }
    let env = machine_env(&classes, fixed);
    let Ok(out) = run_ra(vc, &env, ra_opts) else {
        return Ok(None);
    };
    let spills = out
        .edits
        .iter()
        .any(|(_, ra::Edit::Move { from, to })| from.is_stack() || to.is_stack());
    if spills && limits.is_none() {
        return Ok(None);
    }
    let prog = NameProg::build(vc, &out, kinds).map_err(AllocError::Regalloc)?;
    let webs = Webs::build(&prog);
    let Some((per_acc, _)) = assign::colour(&webs, &precolours(&classes, fixed), max_regs, hint)
    else {
        return Ok(None);
    };
    if checker {
        let mut checker = ra::checker::Checker::new(vc, &env);
        checker.prepare(&out);
        checker
            .run()
            .map_err(|e| AllocError::Checker(format!("{e:?}")))?;
    }
    Ok(Some((classes, out, prog, per_acc)))
}

/// The name spaces under a register budget (see the end of [`allocate_owned`]): each class
/// first gets as many names as the budget holds of its width, then fewer (a fifth less each
/// time, never below what one instruction needs) until regalloc2's allocation, spills and
/// all, colours below `max_regs`; `None` where no size tried does.
fn tight_names<I: MachInst>(
    vc: &mut VCode<I>,
    kinds: &[RegKind; 3],
    min_needed: [usize; 3],
    ra_opts: &ra::RegallocOptions,
    opts: &AllocOptions,
) -> Result<Option<Named>, AllocError> {
    let max_regs = opts.max_regs;
    // R1 and, for alignment, the register before it are never a value's
    let room = (max_regs as usize).saturating_sub(2);
    let mut limits = [0, 1, 2].map(|c| {
        (room / kinds[c].gprs().max(1) as usize)
            .min(assign::PER_CLASS)
            .max(min_needed[c])
    });
    for _ in 0..8 {
        let hint = u32::from(max_regs);
        if let Some(n) = allocate_names(vc, kinds, &[], ra_opts, opts, hint, Some(limits))? {
            return Ok(Some(n));
        }
        let mut changed = false;
        for c in 0..3 {
            let n = (limits[c] * 4 / 5).max(min_needed[c]).max(1);
            if n < limits[c] {
                limits[c] = n;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Ok(None)
}

/// Per name (class `c`, index `i` is name `64 c + i`), the physical register it is pinned
/// to: the names of fixed registers.
fn precolours(classes: &[Vec<u8>; 3], fixed: &[(RegKind, PhysReg)]) -> Vec<Option<u8>> {
    let mut out = vec![None; assign::NAMES];
    for (c, regs) in classes.iter().enumerate() {
        for (i, r) in regs.iter().enumerate().take(assign::PER_CLASS) {
            if fixed.iter().any(|(k, f)| class_index(*k) == c && f.0 == *r) {
                out[c * assign::PER_CLASS + i] = Some(*r);
            }
        }
    }
    out
}

/// Highest register an access covers + 1, at least 2 (R1).
fn count_regs(prog: &NameProg, per_acc: &[u8]) -> u32 {
    prog.accs
        .iter()
        .zip(per_acc)
        .zip(&prog.acc_widths)
        .filter(|((a, _), _)| !a.clobber)
        .map(|((_, r), w)| *r as u32 + *w as u32)
        .max()
        .unwrap_or(0)
        .max(2)
}

thread_local! {
    /// regalloc2's working memory, kept from one allocation to the next on this thread
    /// (`ra::run` would allocate and zero every table of it again for each function; its
    /// `Env::new` resets whatever a previous run left, so the result does not depend on it).
    /// The output is taken out for the caller, and its vectors are handed back at the end.
    static RA_CTX: std::cell::RefCell<ra::Ctx> = std::cell::RefCell::new(ra::Ctx::default());
}

/// Allocate registers for `vcode` (see the module essays of `machinst` and this file).
pub fn allocate<I: MachInst>(
    vcode: &VCode<I>,
    opts: &AllocOptions,
) -> Result<Allocated<I>, AllocError> {
    allocate_owned(vcode.clone(), opts)
}

/// [`allocate`], consuming the code (no copy of it is made).
pub fn allocate_owned<I: MachInst>(
    vcode: VCode<I>,
    opts: &AllocOptions,
) -> Result<Allocated<I>, AllocError> {
    let spill_base = opts
        .spill_base
        .checked_next_multiple_of(16)
        .ok_or_else(|| {
            AllocError::TooFewRegisters(format!(
                "spill base {:#x} is out of range",
                opts.spill_base
            ))
        })?;
    // Each pass takes the code and hands it back untouched when it has nothing to do.
    let (reachable, origins) = prune_unreachable(vcode).map_err(AllocError::Invalid)?;
    let pa = allocate_preds(reachable).map_err(AllocError::Predicates)?;
    let (mut vc, split_origin) = split_edges(pa.vcode).map_err(AllocError::Invalid)?;
    // The passes above rebuild the code without regalloc2's views; regalloc2 needs them.
    vc.ensure_derived().map_err(AllocError::Invalid)?;
    // per allocated block: the input block it comes from (None for an edge block)
    let origins: Vec<Option<BlockId>> =
        split_origin.iter().map(|b| b.map(|o| origins[o])).collect();
    let fixed = fixed_regs(&vc.insts);
    let press = pressure(&vc);
    let prep = Prepared {
        reserve0: names_r0(&vc.insts),
        preds: pa.assignment,
        pred_spills: pa.spilled,
        origins,
        fixed,
        spill_base,
    };
    // More scalars live at once than the Int class has names: spread them over the other
    // classes too (see `overflow_scalars`). Where that allocation still spills (the register
    // file itself is full), the one without mixed classes is made as well and the one with
    // less local memory kept: spilling, class slices of mixed widths waste registers (a
    // scalar in the pair class's slice takes two).
    if press.exact[0] + in_class(&prep.fixed, 0) > 64 {
        let plain = vc.clone();
        // (`None`: the mixed classes ended in class slices, which cannot hold two widths,
        // see the end of `allocate_prepared`; the allocation without mixing is then the one)
        let mixed = allocate_prepared(vc, &prep, opts, press, true)?;
        let mixed = match mixed {
            Some(m) if m.spill_bytes == 0 => return Ok(m),
            m => m,
        };
        let press = pressure(&plain);
        let other = plain_allocation(allocate_prepared(plain, &prep, opts, press, false)?)?;
        let Some(mixed) = mixed else {
            return Ok(other);
        };
        return Ok(if other.spill_cost() < mixed.spill_cost() {
            other
        } else {
            mixed
        });
    }
    plain_allocation(allocate_prepared(vc, &prep, opts, press, false)?)
}

/// An allocation without mixed classes, which [`allocate_prepared`] always finishes.
fn plain_allocation<I: MachInst>(a: Option<Allocated<I>>) -> Result<Allocated<I>, AllocError> {
    a.ok_or_else(|| AllocError::Regalloc("classes of mixed widths without mixing".into()))
}

/// Whether some class of `vc` holds values of another width than its kind's (overflow
/// scalars in the pair or quad class beside the class's own pairs or quads, see
/// [`overflow_scalars`] with `mix`).
fn has_mixed_classes<I: MachInst>(vc: &VCode<I>, kinds: &[RegKind; 3]) -> bool {
    vc.vregs
        .iter()
        .zip(&vc.classes)
        .any(|(k, rc)| *k != RegKind::Pred && k.gprs() != kinds[class_of(*rc)].gprs())
}

/// What [`allocate_owned`] has found before regalloc2 runs, besides the code.
struct Prepared {
    /// The code names R0 outright (see [`names_r0`]).
    reserve0: bool,
    /// The predicates' registers and how many were spilled (`pred::allocate_preds`).
    preds: rustc_hash::FxHashMap<u32, super::PhysPred>,
    pred_spills: usize,
    /// Per allocated block, the input block it comes from (None for an edge block).
    origins: Vec<Option<BlockId>>,
    fixed: Vec<(RegKind, PhysReg)>,
    /// `AllocOptions::spill_base` rounded up to 16.
    spill_base: u32,
}

/// The allocation of prepared code `vc` (unreachable blocks dropped, predicates allocated,
/// critical edges split) whose pressure is `press`; with `mix`, scalars beyond the Int
/// class's 64 names go to the pair and quad classes too, else only to classes the code has no
/// values of.
fn allocate_prepared<I: MachInst>(
    mut vc: VCode<I>,
    prep: &Prepared,
    opts: &AllocOptions,
    mut press: Pressure,
    mix: bool,
) -> Result<Option<Allocated<I>>, AllocError> {
    let (fixed, reserve0, spill_base) = (&prep.fixed[..], prep.reserve0, prep.spill_base);
    let max_regs = opts.max_regs;
    let mut kinds = KINDS;
    // Whether the scalars have been spread over the other classes (once).
    let mut spread = false;
    if press.max[0] > 64 || (mix && press.exact[0] + in_class(fixed, 0) > 64) {
        if let Some(k) = overflow_scalars(&mut vc, fixed, mix).map_err(AllocError::Invalid)? {
            kinds = k;
            press = pressure(&vc);
            spread = true;
        }
    }
    let (mut want, mut min_needed) = start_sizes(&vc, &press, fixed);
    let ra_opts = ra::RegallocOptions {
        verbose_log: false,
        validate_ssa: true,
        algorithm: ra::Algorithm::Ion,
    };
    // First the name spaces: every class gets all 64 of regalloc2's names and the names
    // are coloured into physical registers afterwards ([`assign`]); taken when nothing
    // spills and the colouring fits below `max_regs`.
    // (about the registers the class slices would take: the colouring may spread values over
    // that many where it keeps the occupancy)
    let hint = 1
        + fixed.len() as u32
        + (0..3)
            .map(|c| press.max[c] as u32 * kinds[c].gprs())
            .sum::<u32>();
    // Code that names R0 (a kernel with `alloca`: R0 becomes the stack pointer after
    // allocation) keeps the class slices, which leave R0 out; the colouring knows no such rule.
    let named = if reserve0 {
        None
    } else {
        allocate_names(&mut vc, &kinds, fixed, &ra_opts, opts, hint, None)?
    };
    let mut last_sizes = None;
    // Registers regalloc2 tries last, once the retry below has set them.
    let mut last_regs: Option<Vec<(RegKind, PhysReg)>> = None;
    let mut named_code = None;
    let mut named = named.map(|(classes, out, prog, per_acc)| {
        named_code = Some((prog, per_acc));
        (classes, out)
    });
    // Where the budget cannot even hold each width's largest need at one instruction side by
    // side (the slices' sum; the instructions that need the most scalars and the most pairs
    // are seldom one), the name spaces under the budget may still colour (see below).
    let budget_names = !reserve0 && fixed.is_empty() && max_regs < 255;
    if named.is_none()
        && budget_names
        && fit_sizes(&kinds, want, min_needed, fixed, max_regs, reserve0).is_err()
    {
        if let Some((classes, out, prog, per_acc)) =
            tight_names(&mut vc, &kinds, min_needed, &ra_opts, opts)?
        {
            named_code = Some((prog, per_acc));
            named = Some((classes, out));
        }
    }
    let (mut classes, mut out, spills_forced) = loop {
        if let Some((classes, out)) = named.take() {
            break (classes, out, false);
        }
        let classes = fit_sizes(&kinds, want, min_needed, fixed, max_regs, reserve0)?;
        let sizes = [classes[0].len(), classes[1].len(), classes[2].len()];
        // A class with fewer registers than values live at one point must spill (a spill
        // edit in that class): the attempt would be thrown away below, so it is not made and
        // the sizes grow as that spill would make them grow.
        let must_spill: [bool; 3] = [0, 1, 2].map(|c| press.exact[c] > sizes[c]);
        let grows = (0..3).any(|c| must_spill[c] && sizes[c] < 64);
        if grows && last_sizes != Some(sizes) {
            last_sizes = Some(sizes);
            for c in 0..3 {
                if must_spill[c] {
                    want[c] = (sizes[c] + sizes[c] / 2 + 4).min(64);
                }
            }
            continue;
        }
        let to_preg = |kind: RegKind, r: PhysReg| {
            let c = class_index(kind);
            classes[c]
                .iter()
                .position(|b| *b == r.0)
                .map(|i| ra::PReg::new(i, ra_class(kind)))
        };
        if fixed.is_empty() {
            // `fixed_regs` lists every clobbered register and every fixed constraint: with
            // none, resolving them would only reset the clobber sets (and it costs a walk
            // over every operand of the function per attempt).
            vc.resolve_no_fixed();
        } else {
            vc.resolve_fixed(&to_preg).map_err(AllocError::Invalid)?;
        }
        let env = machine_env(&classes, last_regs.as_deref().unwrap_or_default());
        let out = run_ra(&vc, &env, &ra_opts)?;
        let mut spilled = [false; 3];
        for (_, ra::Edit::Move { from, to }) in &out.edits {
            for (a, other) in [(from, to), (to, from)] {
                if a.is_stack() {
                    if let Some(r) = other.as_reg() {
                        spilled[class_of(r.class())] = true;
                    }
                }
            }
        }
        let any_spill = spilled.iter().any(|s| *s);
        // Code with fixed registers (calls) that spills is allocated again with the fixed
        // operands' registers tried last, and as many registers more in their class (so that
        // as many are tried first as before). regalloc2 spreads values over every register
        // of a class; a long-lived value that sits in a register a call's operand is fixed
        // to is evicted by that operand, and where no other register is free over the
        // evicted value's whole range, its pieces between uses go to the stack: a spill at
        // low pressure. Not done from the start: where nothing spills, spreading values over
        // all the registers makes fewer false dependencies for the scheduler.
        if any_spill && last_regs.is_none() && !fixed.is_empty() {
            let regs = fixed_operand_regs(&vc.insts);
            let mut bigger = want;
            for (c, b) in bigger.iter_mut().enumerate() {
                let n = in_class(&regs, c);
                if n > 0 {
                    *b = (sizes[c] + n).min(64);
                }
            }
            // Not where `max_regs` holds the classes down: there fewer registers tried first
            // would only spill more.
            let granted = fit_sizes(&kinds, bigger, min_needed, fixed, max_regs, reserve0)
                .is_ok_and(|l| (0..3).all(|c| l[c].len() >= bigger[c]));
            if granted && !regs.is_empty() {
                last_regs = Some(regs);
                want = bigger;
                continue;
            }
            last_regs = Some(Vec::new());
        }
        let grown = (0..3).any(|c| spilled[c] && sizes[c] < 64);
        if !grown || last_sizes == Some(sizes) {
            // The 32-bit class holds the fixed registers besides the values: where it spills
            // at its largest size, a class the code does not use takes scalars too (as for
            // more than 64 live scalars above), once.
            if spilled[0] && !fixed.is_empty() && !spread {
                spread = true;
                if let Some(k) =
                    overflow_scalars(&mut vc, fixed, false).map_err(AllocError::Invalid)?
                {
                    kinds = k;
                    press = pressure(&vc);
                    (want, min_needed) = start_sizes(&vc, &press, fixed);
                    last_sizes = None;
                    continue;
                }
            }
            if opts.checker {
                let mut checker = ra::checker::Checker::new(&vc, &env);
                checker.prepare(&out);
                checker
                    .run()
                    .map_err(|e| AllocError::Checker(format!("{e:?}")))?;
            }
            let forced = (0..3).any(|c| {
                let fixed_in = in_class(fixed, c);
                spilled[c] && sizes[c] == 64 && press.exact[c] + fixed_in > 64
            });
            break (classes, out, forced);
        }
        last_sizes = Some(sizes);
        for c in 0..3 {
            if spilled[c] {
                want[c] = (sizes[c] + sizes[c] / 2 + 4).min(64);
            }
        }
    };
    // Under a register budget the class slices spill as soon as one width's peak outgrows its
    // slice, though the registers of the other widths are free there: names in smaller
    // classes, spilled by regalloc2 and coloured together, may spill less (matrixMul under
    // `--maxrregcount=16`). Kept where it spills fewer bytes, or as many in fewer spill and
    // reload instructions. Only without fixed registers: the slices' attempts have resolved
    // the code's fixed operands for their own classes.
    let stack_edits = |o: &ra::Output| {
        let n = o
            .edits
            .iter()
            .filter(|(_, ra::Edit::Move { from, to })| from.is_stack() || to.is_stack())
            .count();
        (o.num_spillslots, n)
    };
    if named_code.is_none() && budget_names && stack_edits(&out).1 > 0 {
        if let Some((c, o, prog, per_acc)) =
            tight_names(&mut vc, &kinds, min_needed, &ra_opts, opts)?
        {
            if stack_edits(&o) < stack_edits(&out) {
                (classes, out, named_code) = (c, o, Some((prog, per_acc)));
            }
        }
    }
    // Physical registers: the colouring of all widths together (found by `allocate_names`),
    // or the class slices packed from R0.
    let (prog, acc_phys) = match named_code {
        Some(x) => x,
        // A class slice is one register range per name, of the class kind's width: where a
        // class holds values of two widths, regalloc2 may give a def the name of a use that
        // dies at the same instruction (for it, the name is free there), and a pair def then
        // overwrites the scalar's register while the instruction still reads it (it writes
        // word by word; the final-assignment checker caught this on cub's radix sort,
        // `DeviceRadixSortDownsweepKernel` Policy800 in
        // `tests/data/corpus-nvcc/ptx/cuda-samples__..._radixSortThrust.ptx`, whose mixed
        // allocation spills). Such code is not kept: the caller takes the allocation without
        // mixing (colouring it instead, which keeps a def and a use of different widths
        // apart, was not measured in time; the slices are what spilled code keeps anyway).
        None if has_mixed_classes(&vc, &kinds) => return Ok(None),
        None => {
            let prog = NameProg::build(&vc, &out, &kinds).map_err(AllocError::Regalloc)?;
            let map = compact(&kinds, &classes, fixed, &out, max_regs, reserve0);
            let sliced: Vec<u8> = prog
                .accs
                .iter()
                .map(|a| {
                    let c = a.name as usize / assign::PER_CLASS;
                    map[c][a.name as usize % assign::PER_CLASS]
                })
                .collect();
            // Code allocated in slices (it spilled with name spaces, or their colouring did
            // not fit) keeps the slices packed from R0. Colouring it too was tried: where it
            // spills, into fewer (or as many) registers, its reloads lost their reach and
            // waited several times longer in the cost model (6 times on cub's radix sort).
            (prog, sliced)
        }
    };
    let max_reg = count_regs(&prog, &acc_phys) - 1;
    let (mut spills, mut reloads) = (0, 0);
    let mut blocks = Vec::with_capacity(vc.num_blocks());
    // What the final-assignment checker reads, per block (only filled when it runs).
    let mut check_ops: Vec<Vec<check::Op>> = Vec::new();
    // The instructions move into the result (each is visited once; the edits iterator only
    // needs the block ranges), rather than being cloned. The blocks' ranges are consecutive
    // from 0 (`VCode`'s invariant) and regalloc2 yields each block's instructions in order,
    // so they come out in index order: they are taken straight from the vector's iterator
    // (one move each, not a move into an `Option` slot and another out of it).
    let mut taken = std::mem::take(&mut vc.insts).into_iter().enumerate();
    for b in 0..vc.num_blocks() {
        let (s, e) = vc.ranges[b];
        let (ss, se) = prog.blocks[b];
        let mut insts = Vec::with_capacity((e - s) as usize + 4);
        let mut ops = Vec::new();
        for step in &prog.steps[ss as usize..se as usize] {
            let at = |k: usize| step.start as usize + k;
            let reg = |k: usize| acc_phys[at(k)];
            let words = |k: usize| prog.acc_widths[at(k)];
            // the value's kind (a class may hold overflow scalars besides its own kind)
            let kind_of = |k: usize| match words(k) {
                1 => RegKind::B32,
                2 => RegKind::B64,
                _ => RegKind::B128,
            };
            match step.kind {
                StepKind::Move => {
                    let (f, t) = (reg(0), reg(1));
                    if f != t {
                        insts.push(I::gen_move(PhysReg(t), PhysReg(f), kind_of(1)));
                    }
                    ops.push(check::Op::Move {
                        from: f,
                        to: t,
                        words: words(1),
                    });
                }
                StepKind::Spill | StepKind::Reload => {
                    let slot = step.slot;
                    let offset = spill_base + slot * 4;
                    if step.kind == StepKind::Spill {
                        spills += 1;
                        insts.push(I::gen_spill(offset, PhysReg(reg(0)), kind_of(0)));
                        ops.push(check::Op::Spill {
                            from: reg(0),
                            slot,
                            words: words(0),
                        });
                    } else {
                        reloads += 1;
                        insts.push(I::gen_reload(PhysReg(reg(0)), offset, kind_of(0)));
                        ops.push(check::Op::Reload {
                            to: reg(0),
                            slot,
                            words: words(0),
                        });
                    }
                }
                StepKind::Inst(i) => {
                    let mut inst = match taken.next() {
                        Some((n, inst)) if n == i as usize => inst,
                        _ => {
                            return Err(AllocError::Regalloc(format!(
                                "instruction {i} placed out of order"
                            )))
                        }
                    };
                    let mut k = 0;
                    let mut bad = None;
                    let (mut uses, mut defs) = (Vec::new(), Vec::new());
                    inst.visit_operands(&mut |r, spec| {
                        let Reg::Virt(v) = *r else { return };
                        if v.kind == RegKind::Pred {
                            match prep.preds.get(&v.index) {
                                Some(p) => *r = Reg::Pred(*p),
                                None => bad = Some(format!("predicate {v} has no register")),
                            }
                            return;
                        }
                        if at(k) >= step.end as usize {
                            bad = Some(format!("{v} did not get a register"));
                            return;
                        }
                        let base = reg(k);
                        let (phys, first_word, n) = match spec.half {
                            Some(super::Half::Hi) => (base + 1, 1, 1),
                            Some(super::Half::Lo) => (base, 0, 1),
                            None => (base, 0, v.kind.gprs() as u8),
                        };
                        *r = Reg::Phys(PhysReg(phys));
                        if opts.checker {
                            let o = check::Operand {
                                vreg: v.index,
                                reg: phys,
                                words: n,
                                first_word,
                                odd_pos: (spec.kind == OpKind::Def) == (spec.pos == OpPos::Early),
                            };
                            if spec.kind == OpKind::Def {
                                defs.push(o);
                            } else {
                                uses.push(o);
                            }
                        }
                        k += 1;
                    });
                    if let Some(msg) = bad {
                        return Err(AllocError::Regalloc(msg));
                    }
                    let copy = step.copy.is_some() || step.part.is_some();
                    if opts.checker {
                        ops.push(check::Op::Inst {
                            at: insts.len(),
                            uses,
                            defs,
                            clobbers: inst.clobbers().0,
                            copy,
                            copy_word: step.part.map_or(0, |(_, _, word)| word),
                        });
                    }
                    if let Some((Reg::Phys(d), Reg::Phys(s))) = inst.is_move() {
                        if u32::from(d.0) == u32::from(s.0) + u32::from(inst.move_word()) {
                            continue;
                        }
                    }
                    insts.push(inst);
                }
            }
        }
        if opts.checker {
            check_ops.push(ops);
        }
        blocks.push(AllocatedBlock {
            id: BlockId(b as u32),
            origin: prep.origins.get(b).copied().flatten(),
            insts,
        });
    }
    if opts.checker {
        check::check(&check_ops, &vc.succs, &vc.params, out.num_spillslots)
            .map_err(|e| AllocError::Assignment(e.to_string()))?;
    }
    let spill_bytes = out.num_spillslots as u32 * 4;
    // The output's vectors go back to the context, to be filled again by the next run.
    RA_CTX.with(|ctx| ctx.borrow_mut().output = out);
    Ok(Some(Allocated {
        blocks,
        num_regs: max_reg + 1,
        spill_bytes,
        checked: opts.checker,
        pred_spills: prep.pred_spills,
        spills,
        spills_forced,
        reloads,
        class_sizes: [classes[0].len(), classes[1].len(), classes[2].len()],
        class_kinds: kinds,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Role, Sm50Inst};
    use crate::machinst::{OpSpec, VCodeBuilder};

    /// `defs` 32-bit values, then one instruction reading the first two (their last reads)
    /// (late reads if `late_reads`; an early def if `def_early`), then a return reading the rest.
    fn program(late_reads: bool, def_early: bool) -> VCode<Sm50Inst> {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let vs: Vec<VReg> = (0..4).map(|_| b.new_vreg(RegKind::B32)).collect();
        for v in &vs {
            let mut i = Sm50Inst::new(Role::Plain);
            i.def(*v, false);
            b.push(blk, i);
        }
        let d = b.new_vreg(RegKind::B32);
        let mut x = Sm50Inst::new(Role::Plain);
        let read = if late_reads {
            OpSpec::late_use()
        } else {
            OpSpec::use_()
        };
        x.op(Reg::Virt(vs[0]), read);
        x.op(Reg::Virt(vs[1]), read);
        x.def(d, def_early);
        b.push(blk, x);
        let mut ret = Sm50Inst::new(Role::Ret);
        for v in [vs[2], vs[3], d] {
            ret.use_(v);
        }
        b.terminate(blk, ret, Vec::new());
        b.finish().expect("valid vcode")
    }

    /// A pair and two scalars defined, then all read: every value is live at the last read, so
    /// any two of them interfere (the pair with the scalars across widths).
    fn mixed_widths() -> VCode<Sm50Inst> {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let d = b.new_vreg(RegKind::B64);
        let vs: Vec<VReg> = (0..2).map(|_| b.new_vreg(RegKind::B32)).collect();
        for v in std::iter::once(&d).chain(&vs) {
            let mut i = Sm50Inst::new(Role::Plain);
            i.def(*v, false);
            b.push(blk, i);
        }
        let mut ret = Sm50Inst::new(Role::Ret);
        ret.use_(d);
        for v in &vs {
            ret.use_(*v);
        }
        b.terminate(blk, ret, Vec::new());
        b.finish().expect("valid vcode")
    }

    /// The final-assignment checker passes the colouring and catches a wrong one: one web
    /// moved onto the register of a web it interferes with (a scalar onto a scalar, or onto
    /// a pair it overlaps).
    #[test]
    fn checker_catches_a_wrong_colouring() {
        let opts = AllocOptions {
            checker: true,
            ..AllocOptions::default()
        };
        for code in [program(false, false), program(true, true), mixed_widths()] {
            let good = allocate(&code, &opts).expect("allocates");
            assert!(good.checked);
            assign::CORRUPT.with(|c| c.set(true));
            let bad = allocate(&code, &opts);
            assign::CORRUPT.with(|c| c.set(false));
            match bad {
                Err(AllocError::Assignment(_)) => {}
                other => panic!("a wrong colouring was not caught: {other:?}"),
            }
        }
    }

    /// Scalars and pairs share registers: a scalar defined after a pair died takes one of its
    /// registers. Two scalars, one defined by the pair's last read (not in the pair: widths
    /// in one instruction do not share) and one after it, fit in R0 and the pair's R2:R3
    /// (4 registers), where class slices needed 5.
    #[test]
    fn widths_share_registers() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let d = b.new_vreg(RegKind::B64);
        let mut def = Sm50Inst::new(Role::Plain);
        def.def(d, false);
        b.push(blk, def);
        let v = b.new_vreg(RegKind::B32);
        let mut x = Sm50Inst::new(Role::Plain);
        x.use_(d);
        x.def(v, false);
        b.push(blk, x);
        let w = b.new_vreg(RegKind::B32);
        let mut y = Sm50Inst::new(Role::Plain);
        y.use_(v);
        y.def(w, false);
        b.push(blk, y);
        let mut ret = Sm50Inst::new(Role::Ret);
        ret.use_(v);
        ret.use_(w);
        b.terminate(blk, ret, Vec::new());
        let code = b.finish().expect("valid vcode");
        // (Without a limit the colouring spreads values over the registers that keep the
        // occupancy; 4 registers make it pack them.)
        let opts = AllocOptions {
            checker: true,
            max_regs: 4,
            ..AllocOptions::default()
        };
        let out = allocate(&code, &opts).expect("allocates");
        assert_eq!((out.num_regs, out.spill_bytes), (4, 0), "{:?}", out.blocks);
    }

    /// Four values live before the middle instruction; an early def or late reads there make
    /// five live at one of regalloc2's points, which only `exact` counts.
    #[test]
    fn exact_pressure_counts_early_defs_and_late_uses() {
        let plain = pressure(&program(false, false));
        assert_eq!((plain.max[0], plain.exact[0]), (4, 4));
        let early = pressure(&program(false, true));
        assert_eq!((early.max[0], early.exact[0]), (4, 5));
        let late = pressure(&program(true, false));
        assert_eq!((late.max[0], late.exact[0]), (4, 5));
        assert_eq!(late.min_needed[0], 3);
    }
}
