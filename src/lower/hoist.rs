//! Load hoisting before register allocation: each long-latency load of a block moves up to
//! [`HOIST`] instructions earlier, with the address arithmetic it needs, so that its latency
//! overlaps the work before it.
//!
//! In: the [`VCode`] selection produced (virtual registers, SSA). Out: the same code with the
//! instructions of each block in a new order that keeps every dependence below; nothing is
//! added, removed or changed, and blocks, parameters and successors stay.
//!
//! Why before allocation: the list scheduler (`sm50::sched::list`) runs on allocated code,
//! where the allocator has already given consecutive loads of an unrolled body the register
//! the previous load's value just freed (`LDG R18; STS [..], R18; LDG R18; STS ..`). The
//! overwrite orders the second load after the first store, which waits for the first load: a
//! chain of `n` loads costs `n` full latencies, where ptxas issues them together and waits
//! once (rodinia's `rdwt53Kernel`, curand's `initRNG`, FDTD3d). On virtual registers only true
//! dependences remain, so the loads can start early and the allocator then gives each its own
//! register.
//!
//! **Dependences** inside a block, `i` before `j` in the input, `j` kept after `i` when:
//! * `j` reads a register (virtual, physical or predicate operand) that `i` defines;
//! * they touch the same hidden resource: what the pieces' fields name outside the operand
//!   list (the carry flag, fixed registers or predicates; `sm50::sched::model::access` of each
//!   piece with its operand fields masked), read after write, write after read or write;
//! * both access memory, at least one writes, and their spaces may alias (the list
//!   scheduler's rule, without its same-base exemption);
//! * either is a *fence*: a terminator, a call or anything with clobbers, an operand with a
//!   fixed register, a piece the scheduler keeps in place (`model::is_fence`: barriers,
//!   atomics, clock reads, ...) or a strong (`.CV`/`.WT`) access.
//!
//! **Order**: list scheduling by key. An instruction's key is its input index, except that a
//! long-latency load at index `l` gets `l - d`, `d` its [`hoist_distance`] (global, local and
//! generic loads [`HOIST`], shared loads [`HOIST_SHARED`]), and every instruction it depends
//! on inside the block the least key of what depends on it. Among the instructions whose
//! predecessors are placed, the least key goes first (ties: input order). So with no load the
//! order is unchanged, and a load and its address arithmetic move up by at most `d` places,
//! as far as the dependences let them.
//!
//! **Trade-off**: a hoisted load's value (and its address until the load issues) is live for
//! up to `d` more instructions, which can raise the register count (and lower occupancy, or
//! spill under a register limit); in exchange up to `d` issue slots of the load's latency are
//! hidden, and a run of loads issues back to back and is waited for once. `d` follows the
//! latency (`sched::cost`: 200 cycles for global memory, 30 for shared): a global load is worth
//! a few registers, a shared one only a short lead (with 32 places, the unrolled shared-memory
//! dot products of the matrixMul kernels went from 21 to 42 registers and lost occupancy).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap as HashMap;

use super::inst::{Role, Sm50Inst};
use crate::machinst::VCode;
use crate::machinst::{MachInst, OpConstraint, OpKind, Reg, RegKind};
use crate::sm50::sched::list::{mem, mem_conflict, strong, Mem};
use crate::sm50::sched::model::{access, is_fence, NUM_RES};
use crate::sm50::{Field, MemAccess, MemSpace};

/// How many places a global, local or generic load may move up (see the trade-off in the
/// essay).
pub const HOIST: usize = 32;

/// How many places a shared-memory load may move up.
pub const HOIST_SHARED: usize = 6;

/// How far `i` may move up: 0 for anything but a long-latency load.
fn hoist_distance(i: &Sm50Inst) -> usize {
    if !is_long_load(i) {
        return 0;
    }
    match i.pieces[0].inst.info().props.space {
        MemSpace::Shared => HOIST_SHARED,
        _ => HOIST,
    }
}

/// Reorder every block of `vcode` (see the module essay).
pub(super) fn hoist_loads(vcode: VCode<Sm50Inst>) -> Result<VCode<Sm50Inst>, String> {
    let (mut blocks, vregs) = vcode.into_blocks();
    for b in &mut blocks {
        if b.insts.iter().any(is_long_load) {
            let order = block_order(&b.insts);
            let mut old: Vec<Option<Sm50Inst>> = b.insts.drain(..).map(Some).collect();
            b.insts = order.iter().filter_map(|&k| old[k].take()).collect();
        }
    }
    VCode::from_blocks_trusted(blocks, vregs)
}

/// A single plain load whose latency is worth hiding.
fn is_long_load(i: &Sm50Inst) -> bool {
    i.role == Role::Plain && i.pieces.len() == 1 && !is_fence_inst(i) && {
        // A plain load of memory (texture fetches keep their place: `texture_phases`).
        let p = i.pieces[0].inst.info().props;
        p.access == MemAccess::Load
            && matches!(
                p.space,
                MemSpace::Global | MemSpace::Generic | MemSpace::Local | MemSpace::Shared
            )
    }
}

/// Whether `i` must keep its place relative to every instruction of its block.
fn is_fence_inst(i: &Sm50Inst) -> bool {
    let (regs, preds) = i.clobbers();
    i.role != Role::Plain && i.role != Role::Move
        || !regs.is_empty()
        || !preds.is_empty()
        || i.ops
            .iter()
            .any(|o| matches!(o.spec.constraint, OpConstraint::Fixed(_)))
        || i.pieces
            .iter()
            .any(|p| is_fence(&p.inst) || strong(&p.inst))
}

/// The resources the pieces of `i` read and write outside its operands (see the essay):
/// each piece's fields named by operands are set to `RZ`/`PT` first.
fn hidden(i: &Sm50Inst) -> (Vec<usize>, Vec<usize>) {
    let (mut uses, mut defs) = (Vec::new(), Vec::new());
    for p in &i.pieces {
        let mut inst = p.inst;
        for r in &p.refs {
            let pred = match i.ops[r.op as usize].reg {
                Reg::Virt(v) => v.kind == RegKind::Pred,
                Reg::Pred(_) => true,
                Reg::Phys(_) => false,
            };
            // A guard field stays `PT` with a clear negation bit (an unguarded instruction).
            if r.field == Field::Pg {
                inst.set(Field::Pgn, 0);
            }
            inst.set(r.field, if pred { 7 } else { 255 });
        }
        let a = access(&inst);
        uses.extend(a.uses.iter().copied().filter(|&r| r < NUM_RES));
        defs.extend(a.defs.iter().copied().filter(|&r| r < NUM_RES));
    }
    (uses, defs)
}

/// The new order of a block's instructions: `order[new] = old`.
fn block_order(insts: &[Sm50Inst]) -> Vec<usize> {
    let n = insts.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Registers: the instruction defining each operand register in this block.
    let mut def_of: HashMap<Reg, usize> = HashMap::default();
    // Hidden resources: the last writer, and the readers since.
    let mut last_write: HashMap<usize, usize> = HashMap::default();
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::default();
    // Memory: accesses since the last store of each kind, and the stores so far.
    let mut stores: Vec<(usize, Mem)> = Vec::new();
    let mut loads: Vec<(usize, Mem)> = Vec::new();
    let mut last_fence: Option<usize> = None;
    for (j, inst) in insts.iter().enumerate() {
        let p = &mut preds[j];
        if is_fence_inst(inst) {
            // After everything before it (the previous fence covers what precedes it).
            let from = last_fence.map_or(0, |f| f);
            p.extend(from..j);
            last_fence = Some(j);
        } else if let Some(f) = last_fence {
            p.push(f);
        }
        inst.for_each_operand(&mut |reg, spec| {
            if spec.kind == OpKind::Use {
                if let Some(&d) = def_of.get(&reg) {
                    p.push(d);
                }
            }
        });
        let (uses, defs) = hidden(inst);
        for r in &uses {
            if let Some(&w) = last_write.get(r) {
                p.push(w);
            }
        }
        for r in &defs {
            if let Some(&w) = last_write.get(r) {
                p.push(w);
            }
            if let Some(rs) = readers.get(r) {
                p.extend(rs.iter().copied());
            }
        }
        for r in &uses {
            readers.entry(*r).or_default().push(j);
        }
        for r in &defs {
            last_write.insert(*r, j);
            readers.remove(r);
        }
        for piece in &inst.pieces {
            let m = mem(&piece.inst);
            match m {
                Mem::None => {}
                Mem::Load(_) => {
                    p.extend(
                        stores
                            .iter()
                            .filter(|&&(_, s)| mem_conflict(s, m))
                            .map(|&(k, _)| k),
                    );
                    loads.push((j, m));
                }
                Mem::Store(_) => {
                    p.extend(
                        stores
                            .iter()
                            .chain(&loads)
                            .filter(|&&(_, s)| mem_conflict(s, m))
                            .map(|&(k, _)| k),
                    );
                    stores.push((j, m));
                }
            }
        }
        inst.for_each_operand(&mut |reg, spec| {
            if spec.kind == OpKind::Def {
                def_of.insert(reg, j);
            }
        });
        p.retain(|&k| k != j);
        p.sort_unstable();
        p.dedup();
    }
    // Keys: input index, loads and what they need pulled up by HOIST.
    let mut key: Vec<usize> = (0..n).collect();
    for j in (0..n).rev() {
        key[j] = key[j].min(j.saturating_sub(hoist_distance(&insts[j])));
        for &i in &preds[j] {
            key[i] = key[i].min(key[j]);
        }
    }
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut waiting: Vec<usize> = vec![0; n];
    for (j, p) in preds.iter().enumerate() {
        waiting[j] = p.len();
        for &i in p {
            succs[i].push(j);
        }
    }
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = (0..n)
        .filter(|&j| waiting[j] == 0)
        .map(|j| Reverse((key[j], j)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, j))) = ready.pop() {
        order.push(j);
        for &s in &succs[j] {
            waiting[s] -= 1;
            if waiting[s] == 0 {
                ready.push(Reverse((key[s], s)));
            }
        }
    }
    debug_assert_eq!(order.len(), n, "the dependences of a block form no cycle");
    order
}
