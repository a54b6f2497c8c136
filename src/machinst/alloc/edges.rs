//! The CFG as regalloc2 needs it: blocks the entry cannot reach are dropped, every edge
//! regalloc2 cannot place moves on (a critical edge, or a branch with register operands into a
//! join) gets an empty jump block, and the blocks are laid out so that each one but the entry
//! comes after one of its predecessors (what regalloc2's checker needs; see
//! [`prune_unreachable`]).
//!
//! In: a valid [`VCode`]. Out: a valid VCode with the same meaning, and per new block the block
//! of the input it was (`None` for an edge block).

use super::*;

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
pub(super) fn prune_unreachable<I: MachInst>(
    vc: VCode<I>,
) -> Result<(VCode<I>, Vec<BlockId>), String> {
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
        let mut block: super::super::vcode::BlockData<I> =
            blocks[b].take().ok_or("block placed twice")?;
        retarget(&mut block, &new_id)?;
        out.push(block);
    }
    // Reordered valid code, the entry still first (`layout_order` starts there).
    Ok((VCode::from_blocks_trusted(out, vregs)?, kept))
}

/// Point the successors of `block` (and its terminator) at their new ids.
pub(super) fn retarget<I: MachInst>(
    block: &mut super::super::vcode::BlockData<I>,
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
pub(super) fn layout_order(n: usize, mut succs: impl FnMut(usize, &mut Vec<usize>)) -> Vec<usize> {
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
pub(super) fn split_edges<I: MachInst>(
    vc: VCode<I>,
) -> Result<(VCode<I>, Vec<Option<usize>>), String> {
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
            super::super::vcode::BlockData {
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
pub(super) fn split_in_order<I: MachInst>(
    vc: VCode<I>,
    split: &[Vec<bool>],
    order: &[usize],
    new_id: &[Option<BlockId>],
) -> Result<VCode<I>, String> {
    let n = vc.ranges.len();
    let super::super::vcode::VCode {
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
