//! If-conversion: short branch sides become predicated straight-line code, so that a small
//! divergent `if` costs neither `SSY`/`@P SYNC`/`SYNC` nor a split warp, and a small uniform
//! one no `BRA`.
//!
//! In: the allocated, flattened blocks of `lower::emit_all` (pass 1: every block ends in
//! explicit `BRA`s, a conditional one as `@P BRA x ; BRA y`, moves and spills in place, the
//! allocator's critical-edge blocks still there) with one "ends in a branch that may diverge"
//! flag per block, before [`super::reconverge`] runs. Out: the same blocks where every
//! convertible branch is gone: its sides' instructions are appended to the branching block
//! under the branch's guard (the `x` side) and its negation (the `y` side), followed by
//! `BRA j`; the sides are dropped, and `j` is appended too when the branching block is now its
//! only predecessor (so the scheduler sees one block, and a chain of small `if`s converts
//! one after the other). The per-block relocations, source lines and notes move with their
//! instructions.
//!
//! # When a branch converts
//!
//! Block A ends in `@P BRA x ; BRA y` (a two-way branch; whether it may diverge does not
//! matter). A *side* is a block, not the entry, whose only predecessor is A, that ends in an
//! unconditional `BRA j` and whose other instructions are all *predicable*: not guarded yet,
//! of a plain computing or memory class (no control transfer, no `BAR`/`MEMBAR`/`DEPBAR`,
//! no `SHFL`/`VOTE`/`B2R`, which count the warp's lanes together, no texture access: the
//! fetches `isa/sm50.isa` calls predicable are converted before allocation or not at all,
//! by [`super::predicate`]'s rule of where they overlap), and not
//! writing `P`. The shapes are an if-then (one of `x`, `y` is a side to `j`, the other is `j`
//! itself) and a diamond (both are sides to the same `j`); the allocator's edge block on the
//! A→j edge is an ordinary side (its moves run under the opposite guard). `j` is neither A
//! nor a side.
//!
//! Why this is exact: each lane runs the instructions of exactly the side it would have
//! branched to, in the same order, and a guarded-off instruction has no effect at all (no
//! write, no memory access, no fault; sm50-isa.md, and `sim` executes it so). Nothing in a
//! side writes `P`, so every guard of both sides reads the branch's own condition. A lane of
//! one side never sees the other side's writes, so a diamond's sides may use the same
//! registers. The scheduler and the hazard checker treat a guarded write as one that may
//! leave the old value (the assigner waits on an earlier write's scoreboard before any
//! overwrite, guarded or not).
//!
//! # Size limit
//!
//! A side of at most [`MAX_SIDE`] instructions converts. A divergent branch costs `SSY`,
//! `@P SYNC` and `SYNC` (13 stall cycles each for the last two) plus the time both sides run
//! one after the other anyway; a uniform one costs a `BRA` (13 cycles when taken). The
//! predicated code costs one issue slot per guarded-off instruction; past a handful of
//! instructions a skipped uniform side would cost more than the branch, which is about where
//! ptxas 11.8 stops converting too.

use rustc_hash::FxHashMap as HashMap;

use super::{Flat, Reloc};
use crate::machinst::{BlockId, SrcLoc};
use crate::sm50::{self, Field, Form, MemSpace, Operand};

/// At most this many instructions (the final `BRA` not counted) per side (see the essay).
pub const MAX_SIDE: usize = 8;

/// Per block: relocations, source lines (one per instruction) and notes (instruction index,
/// text), as `emit_all` keeps them.
pub(super) struct Meta<'a> {
    pub relocs: &'a mut HashMap<BlockId, Vec<Option<Reloc>>>,
    pub srclocs: &'a mut HashMap<BlockId, Vec<SrcLoc>>,
    pub notes: &'a mut HashMap<BlockId, Vec<(usize, Box<str>)>>,
}

/// Whether `i` may be put under guard `pg` (see the essay): unguarded, predicable class,
/// does not write `pg`.
fn predicable(i: &sm50::Inst, pg: u64) -> bool {
    if i.get(Field::Pg) != Some(7) || i.get(Field::Pgn) != Some(0) {
        return false;
    }
    // Classes that may run under a guard the conversion adds (`predicable=` in
    // `isa/sm50.isa`): computation, moves, and memory accesses (a guarded-off access touches
    // nothing). Everything else stays behind its branch.
    let props = i.info().props;
    if !props.predicable || props.space == MemSpace::Texture {
        return false;
    }
    let mut writes_pg = false;
    i.operands(|o| {
        if let Operand::Pred { pred, def: true } = o {
            writes_pg |= u64::from(pred) == pg;
        }
    });
    !writes_pg
}

/// An unconditional `BRA`.
fn plain_bra(i: &sm50::Inst) -> bool {
    i.form == Form::BRA && i.get(Field::Pg) == Some(7) && i.get(Field::Pgn) == Some(0)
}

/// Convert every convertible branch of `blocks` (see the module essay); `divergent` stays
/// parallel to `blocks`. Returns how many branches were converted.
pub(super) fn if_convert(
    blocks: &mut Vec<(BlockId, Flat)>,
    divergent: &mut Vec<bool>,
    mut meta: Meta<'_>,
) -> usize {
    let index: HashMap<BlockId, usize> = blocks.iter().enumerate().map(|(k, b)| (b.0, k)).collect();
    // Branches naming each block.
    let mut preds: Vec<usize> = vec![0; blocks.len()];
    for (_, insts) in blocks.iter() {
        for (_, t) in insts {
            if let Some(&k) = t.and_then(|t| index.get(&t)) {
                preds[k] += 1;
            }
        }
    }
    let mut dead = vec![false; blocks.len()];
    let mut converted = 0;
    for a in 0..blocks.len() {
        // Convert at `a` as long as its (possibly merged) end is convertible.
        while !dead[a] {
            let Some((x, y, pg, pgn)) = two_way(&blocks[a].1) else {
                break;
            };
            let (Some(&xi), Some(&yi)) = (index.get(&x), index.get(&y)) else {
                break;
            };
            if xi == yi {
                break;
            }
            let as_side = |s: usize| -> Option<usize> {
                if s == 0 || s == a || dead[s] || preds[s] != 1 {
                    return None;
                }
                let insts = &blocks[s].1;
                let (last, body) = insts.split_last()?;
                let j = last.1.and_then(|t| index.get(&t).copied())?;
                let ok = plain_bra(&last.0)
                    && j != s
                    && j != a
                    && body.len() <= MAX_SIDE
                    && body.iter().all(|(i, t)| t.is_none() && predicable(i, pg));
                ok.then_some(j)
            };
            // (sides with their guard sense, join)
            let (sides, j): (Vec<(usize, u64)>, usize) = match (as_side(xi), as_side(yi)) {
                (Some(jx), Some(jy)) if jx == jy && jx != xi && jx != yi => {
                    (vec![(xi, pgn), (yi, pgn ^ 1)], jx)
                }
                (Some(jx), _) if jx == yi => (vec![(xi, pgn)], jx),
                (_, Some(jy)) if jy == xi => (vec![(yi, pgn ^ 1)], jy),
                _ => break,
            };
            // Rewrite `a`: drop the two branches, append the sides under their guards, then
            // `BRA j` (with the source line of the conditional branch).
            let a_id = blocks[a].0;
            let n = blocks[a].1.len();
            let a_locs = meta.srclocs.entry(a_id).or_default();
            let bra_loc = a_locs
                .get(n - 2)
                .or(a_locs.last())
                .copied()
                .unwrap_or(SrcLoc::NONE);
            a_locs.truncate(n - 2);
            meta.relocs.entry(a_id).or_default().truncate(n - 2);
            if let Some(v) = meta.notes.get_mut(&a_id) {
                v.retain(|(k, _)| *k < n - 2);
            }
            blocks[a].1.truncate(n - 2);
            for &(s, sense) in &sides {
                let body: Vec<(sm50::Inst, Option<BlockId>)> = blocks[s].1[..blocks[s].1.len() - 1]
                    .iter()
                    .map(|&(mut i, t)| {
                        i.set(Field::Pg, pg);
                        i.set(Field::Pgn, sense);
                        (i, t)
                    })
                    .collect();
                let s_id = blocks[s].0;
                append_meta(&mut meta, a_id, blocks[a].1.len(), s_id, body.len());
                blocks[a].1.extend(body);
                blocks[s].1.clear();
                dead[s] = true;
                preds[j] -= 1;
            }
            if sides.len() == 1 {
                // The branch named `j` itself.
                preds[j] -= 1;
            }
            let j_id = blocks[j].0;
            blocks[a].1.push((sm50::Inst::new(Form::BRA), Some(j_id)));
            meta.srclocs.entry(a_id).or_default().push(bra_loc);
            meta.relocs.entry(a_id).or_default().push(None);
            preds[j] += 1;
            divergent[a] = false;
            converted += 1;
            // `a` is now `j`'s only predecessor: `j` joins it.
            if preds[j] == 1 && j != 0 && j != a {
                let n = blocks[a].1.len();
                blocks[a].1.truncate(n - 1);
                meta.srclocs.entry(a_id).or_default().truncate(n - 1);
                meta.relocs.entry(a_id).or_default().truncate(n - 1);
                let j_insts = std::mem::take(&mut blocks[j].1);
                append_meta(&mut meta, a_id, n - 1, j_id, j_insts.len());
                blocks[a].1.extend(j_insts);
                divergent[a] = divergent[j];
                dead[j] = true;
            }
        }
    }
    let mut k = 0;
    blocks.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
    let mut k = 0;
    divergent.retain(|_| {
        k += 1;
        !dead[k - 1]
    });
    converted
}

/// `@P BRA x ; BRA y` at the end of a block: (x, y, P, negated).
fn two_way(insts: &Flat) -> Option<(BlockId, BlockId, u64, u64)> {
    let [.., (c, Some(x)), (u, Some(y))] = insts.as_slice() else {
        return None;
    };
    if c.form != Form::BRA || !plain_bra(u) {
        return None;
    }
    let (pg, pgn) = (c.get(Field::Pg)?, c.get(Field::Pgn)?);
    // Nothing but the guard decides (no condition-code test or other field set).
    let plain = sm50::Inst::new(Form::BRA)
        .with(Field::Pg, pg)
        .with(Field::Pgn, pgn);
    (pg != 7 && *c == plain).then_some((*x, *y, pg, pgn))
}

/// Move the first `len` relocations, source lines and notes of block `from` to the end of
/// block `to`, whose instructions so far number `at`.
fn append_meta(meta: &mut Meta<'_>, to: BlockId, at: usize, from: BlockId, len: usize) {
    let mut relocs = meta.relocs.remove(&from).unwrap_or_default();
    relocs.resize(len, None);
    let dst = meta.relocs.entry(to).or_default();
    dst.resize(at, None);
    dst.extend(relocs);
    let mut locs = meta.srclocs.remove(&from).unwrap_or_default();
    let fill = locs.last().copied().unwrap_or(SrcLoc::NONE);
    locs.resize(len, fill);
    let dst = meta.srclocs.entry(to).or_default();
    let fill = dst.last().copied().unwrap_or(SrcLoc::NONE);
    dst.resize(at, fill);
    dst.extend(locs);
    let notes = meta.notes.remove(&from).unwrap_or_default();
    let moved: Vec<(usize, Box<str>)> = notes
        .into_iter()
        .filter(|(k, _)| *k < len)
        .map(|(k, t)| (at + k, t))
        .collect();
    if !moved.is_empty() {
        meta.notes.entry(to).or_default().extend(moved);
    }
}
