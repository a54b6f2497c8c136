//! Sharing of immediates put in registers.
//!
//! In: the IR function (its blocks, their successors, the dominator tree). Out: for a block
//! `a` that dominates a block `b`, whether a register that holds a constant, written in `a`,
//! may serve a use in `b` ([`LoopRegions::may_serve`]).
//!
//! The IR keeps one `iconst`/`fconst` per operand (NVVM writes the literal at every use), and
//! a SASS instruction has one immediate or constant-bank slot: `fma x, a, 0.5, 0.5` needs the
//! second `0.5` in a register. Each such constant was its own `MOV32I`, so an unrolled body
//! with a texture fetch at `x·0.5+0.5` per coordinate (volumeFiltering's `d_render_*`) paid
//! one `MOV32I` per coordinate per fetch, where ptxas writes the register once and reads it
//! with `.reuse` ([`super::Lowerer::materialize`] now asks here before writing another).
//!
//! **Rule**: a 32-bit constant written in block `a` serves a use in block `b` when `a`
//! dominates `b`, every block on a path from `a` to `b` belongs to the same loops as `a`
//! (the shared register never lives across a loop it was not written in: the sharing never
//! hoists a constant out of a loop, nor keeps one alive through an inner loop), and it was
//! written at most [`SHARE_WINDOW`] lowered IR instructions before the use (in lowering
//! order: blocks in dominance order, each top to bottom). 64-bit constants (register pairs)
//! are not shared.
//!
//! **Trade-off**: one instruction (and one issue slot) saved per further use, against a
//! register live from the first use to the last instead of one per use, each live for an
//! instruction or two. The window bounds that life: a shared register lives at most
//! [`SHARE_WINDOW`] instructions, so a constant read all through a long body is written once
//! per window, not once. Bounded by the last use instead (a chain of windows), CUB's
//! `SingleTile` kernels kept a constant from the top of their unrolled tile to the bottom
//! (130 to 168 registers), and nbody's `integrateBodies<double>` a mask pair read 129
//! times (40 to 47 registers, 48 to 40 warps): hence also no pairs. The allocator's
//! spiller rematerialises a constant (`MachInst::rematerialisable`) instead of storing it
//! where the pressure exceeds the budget, so the longer life costs at most registers, never
//! a spill. Hoisting out of a loop (which would save the instruction on every iteration) is
//! not done: it would hold the register across the whole loop, where the pressure is
//! highest, for an instruction per iteration that usually dual-issues; ptxas 11.8 keeps
//! volumeFiltering's `0.5` in the loop too, one `MOV32I` per iteration.

use crate::ir::{self, Block, Function};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// How many lowered IR instructions after its write a register holding a constant may serve
/// a use (see the module essay): NVVM's unrolled bodies repeat a use every 20 to 30
/// instructions (volumeFiltering's coordinate mapping, once per texture fetch).
pub(super) const SHARE_WINDOW: u32 = 32;

/// The natural loops of a function, as the set of loop headers each block belongs to, and
/// the blocks' predecessors, for [`LoopRegions::may_serve`].
pub(super) struct LoopRegions {
    preds: HashMap<Block, Vec<Block>>,
    /// By block: the headers of the natural loops containing it, sorted (empty outside loops;
    /// absent for unreachable blocks).
    loops: HashMap<Block, Vec<Block>>,
    /// Answers so far, by `(a, b)`.
    answers: HashMap<(Block, Block), bool>,
}

impl LoopRegions {
    pub(super) fn of(f: &Function, doms: &ir::Dominators) -> LoopRegions {
        let mut preds: HashMap<Block, Vec<Block>> = HashMap::default();
        let mut back_edges = Vec::new();
        for &b in &f.layout {
            let Some(&last) = f.blocks[b].insts.last() else {
                continue;
            };
            for t in f.insts[last].data.targets() {
                let list = preds.entry(t.block).or_default();
                if !list.contains(&b) {
                    list.push(b);
                }
                // A back edge: its target dominates its source.
                if doms.dominates(t.block, b) {
                    back_edges.push((b, t.block));
                }
            }
        }
        let mut loops: HashMap<Block, Vec<Block>> = HashMap::default();
        for &b in &f.layout {
            loops.insert(b, Vec::new());
        }
        // The natural loop of a back edge `t -> h`: `h` and every block that reaches `t`
        // without passing through `h`.
        for &(t, h) in &back_edges {
            let mut body: HashSet<Block> = HashSet::default();
            body.insert(h);
            let mut work = vec![t];
            while let Some(x) = work.pop() {
                if !body.insert(x) {
                    continue;
                }
                if let Some(ps) = preds.get(&x) {
                    work.extend(ps.iter().copied().filter(|&p| doms.dominates(h, p)));
                }
            }
            for x in body {
                let set = loops.entry(x).or_default();
                if !set.contains(&h) {
                    set.push(h);
                    set.sort();
                }
            }
        }
        LoopRegions {
            preds,
            loops,
            answers: HashMap::default(),
        }
    }

    /// Whether a register written in `a` may serve a use in `b` (see the module essay): `a`
    /// dominates `b` (the caller checks it), and every block on a path from `a` to `b` is
    /// in exactly `a`'s loops. The walk goes backwards from `b` and stops at `a`; as `a`
    /// dominates `b`, it visits exactly the blocks between them.
    pub(super) fn may_serve(&mut self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        if let Some(&known) = self.answers.get(&(a, b)) {
            return known;
        }
        let Some(home) = self.loops.get(&a) else {
            return false;
        };
        let mut seen: HashSet<Block> = HashSet::default();
        seen.insert(a);
        let mut work = vec![b];
        let mut ok = true;
        while let Some(x) = work.pop() {
            if !seen.insert(x) {
                continue;
            }
            if self.loops.get(&x) != Some(home) {
                ok = false;
                break;
            }
            if let Some(ps) = self.preds.get(&x) {
                work.extend(ps.iter().copied());
            }
        }
        self.answers.insert((a, b), ok);
        ok
    }
}
