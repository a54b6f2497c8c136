//! Interleaving before allocation: the order of a block's instructions by modelled issue
//! cycles, inside a window of [`super`]'s keys.
//!
//! In: a block's dependence graph as [`super::block_order`] builds it on virtual registers
//! (`preds[j]`: what `j` must follow; `data[j]`: those of them whose result `j` reads) and the
//! keys of its load hoisting (input index, loads and what they need pulled up, stores of
//! loaded values pushed down). Out: `order[new] = old`, a topological order of the graph.
//!
//! Why: the list scheduler (`sm50::sched::list`) orders allocated code, where the allocator
//! has given the next value of one dependence chain the register another chain just freed.
//! An unrolled body of dependent float chains written one chain after the other
//! (cuda-samples' `MandelbrotDS0`: double-single arithmetic, `FADD` after `FADD`, 6 cycles
//! each) then keeps its chains apart, as written, and waits out every latency. On virtual
//! registers only true dependences remain, so the chains can be interleaved here, and the
//! allocator then gives them registers that keep them apart.
//!
//! **Order**: a cycle-driven list schedule. Each instruction issues one cycle per SASS piece;
//! a result is readable [`result_latency`] cycles after its last piece issued (6 for a GPR, 13
//! for a predicate, the cost model's cycles for a variable-latency piece, sm50-isa.md §2.2);
//! an order-only edge costs one cycle. At each step the candidates are the ready instructions
//! (every predecessor placed) whose key is at most the least ready key plus the window; the
//! one that can issue earliest goes first, ties to the least key, then input order. So where
//! nothing waits the order is the keys' (the plain hoisting order), and where the next
//! instruction in that order would wait on a latency, a later independent one within the
//! window fills the gap.
//!
//! **Copies** ([`coalescing_edges`]): a copy `dst <- src` at a block's end (a loop's phi, the
//! pointer bumped for the next trip) is dropped after allocation when `dst` and `src` share a
//! register, which they can only when `src` is defined after the last read of `dst`'s old
//! value. Moving `src`'s definition above those reads (the bump ahead of the trip's loads)
//! would keep the copy, and on a loop's back edge the copy needs a block of its own and a
//! second `BRA`. So `src`'s definition is ordered after those reads (an order-only edge).
//!
//! **Trade-off**: an instruction moves ahead of at most the window's worth of others, so a
//! value lives at most that many instructions longer: registers for issue slots. The driver
//! compiles a kernel whose registers limit its occupancy once more without the interleaving
//! (`LowerOptions::no_interleave`) and keeps whichever keeps more warps resident.

use std::collections::BTreeSet;

use super::Sm50Inst;
use crate::machinst::{MachInst, OpKind, Reg, RegKind};
use crate::sm50::sched::model::{latency, LAT_GPR, LAT_PRED};

/// How many ready instructions one step looks at, at most (a block of thousands of ready
/// instructions with one key stays linear).
const SCAN: usize = 64;

/// Cycles from the issue of `i`'s last piece until its result is readable.
fn result_latency(i: &Sm50Inst) -> u32 {
    let variable = i
        .pieces
        .iter()
        .filter(|p| p.inst.info().variable_latency)
        .map(|p| latency(&p.inst) as u32)
        .max();
    if let Some(l) = variable {
        return l;
    }
    let mut pred = false;
    i.for_each_operand(&mut |reg, spec| {
        let is_pred = match reg {
            Reg::Virt(v) => v.kind == RegKind::Pred,
            Reg::Pred(_) => true,
            Reg::Phys(_) => false,
        };
        pred |= spec.kind == OpKind::Def && is_pred;
    });
    if pred {
        LAT_PRED
    } else {
        LAT_GPR
    }
}

/// The order of the block `insts` (see the module essay).
pub(super) fn timed_order(
    insts: &[Sm50Inst],
    preds: &[Vec<usize>],
    data: &[Vec<usize>],
    key: &[usize],
    window: usize,
) -> Vec<usize> {
    let n = insts.len();
    // Successors with the edge's latency from the predecessor's issue.
    let mut succs: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = vec![0; n];
    for j in 0..n {
        waiting[j] = preds[j].len();
        for &i in &preds[j] {
            let pieces = insts[i].pieces.len().max(1) as u32;
            let lat = if data[j].contains(&i) {
                pieces - 1 + result_latency(&insts[i])
            } else {
                1
            };
            succs[i].push((j, lat));
        }
    }
    let mut earliest = vec![0u32; n];
    let mut ready: BTreeSet<(usize, usize)> = (0..n)
        .filter(|&j| waiting[j] == 0)
        .map(|j| (key[j], j))
        .collect();
    let mut order = Vec::with_capacity(n);
    let mut t = 0u32;
    while let Some(&(least, _)) = ready.first() {
        // (issue cycle, key, index) of the best candidate.
        let mut best: Option<(u32, usize, usize)> = None;
        for &(k, j) in ready.iter().take(SCAN) {
            if k > least + window {
                break;
            }
            let start = earliest[j].max(t);
            if best.map_or(true, |b| (start, k, j) < b) {
                best = Some((start, k, j));
            }
            if start == t {
                break; // nothing later in key order issues earlier
            }
        }
        let (start, k, j) = best.expect("the least ready key is a candidate");
        ready.remove(&(k, j));
        order.push(j);
        t = start + insts[j].pieces.len().max(1) as u32;
        for &(s, lat) in &succs[j] {
            earliest[s] = earliest[s].max(start + lat);
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.insert((key[s], s));
            }
        }
    }
    debug_assert_eq!(order.len(), n, "the dependences of a block form no cycle");
    order
}

/// Orders the definition of each copy's source after the reads of the copy's destination
/// that precede the copy (see the module essay, "Copies"): the block's own copies, and
/// `edge_copies`, its successors' parameters from its branch arguments (at the block's end).
/// Only edges from an earlier to a later input index are added, so the graph stays acyclic.
pub(super) fn coalescing_edges(
    insts: &[Sm50Inst],
    edge_copies: &[(Reg, Reg)],
    preds: &mut [Vec<usize>],
) {
    let n = insts.len();
    let copies = insts
        .iter()
        .enumerate()
        .filter_map(|(m, i)| Some((m, i.is_move()?)))
        .chain(edge_copies.iter().map(|&c| (n, c)));
    let touches = |i: &Sm50Inst, reg: Reg, kind: OpKind| {
        let mut hit = false;
        i.for_each_operand(&mut |r, spec| hit |= spec.kind == kind && r == reg);
        hit
    };
    for (m, (dst, src)) in copies {
        let Some(d) = (0..m).rev().find(|&k| touches(&insts[k], src, OpKind::Def)) else {
            continue;
        };
        for r in (0..d).rev() {
            if touches(&insts[r], dst, OpKind::Def) {
                break;
            }
            if touches(&insts[r], dst, OpKind::Use) && !preds[d].contains(&r) {
                preds[d].push(r);
            }
        }
    }
}
