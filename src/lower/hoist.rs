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
//!   scheduler's rule), unless both are single plain accesses of one space off the same
//!   virtual base register, defined by the same instruction (or before the block) for
//!   both, with byte ranges that do not overlap ([`apart`]; the list scheduler's same-base
//!   exemption on virtual registers);
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
//! **Sinking stores**: a store of a value that a global, local or generic load of the same
//! block produced (an unrolled copy loop, `sdata[k] = in[f(k)]`, as in rodinia's
//! `rdwt53Kernel`) gets the key `s + SINK_STORE` instead of its index `s`, again lowered to
//! the least key of what depends on it. Otherwise the store stays where it was written, right
//! after the next load; the allocator then reuses the stored register for the next value, and
//! the overwrite ties the store (and so the wait for its load) in front of the next loads:
//! each load waits alone. Sunk, the stores of a run follow its loads and are waited for once.
//! Only a store that such a load follows within [`SINK_STORE`] places sinks
//! ([`feeds_a_later_load`]): with no load behind it, it holds nothing back.
//!
//! **Interleaving** ([`interleave`]): with a window (the driver's default, [`WIDE`]), every
//! block (not only those with loads) is ordered by a cycle-driven list schedule over the same
//! dependences and keys: where the next instruction in key order would wait on a latency, a
//! ready one up to the window's worth of keys later goes first. Independent chains written one
//! after the other (NVVM's expression trees, unrolled bodies) then interleave before the
//! allocator gives the second chain the registers the first one frees.
//!
//! **Bounded by occupancy**: the store motion (the sinking, and loads passing stores of the
//! same base) can be turned off (`LowerOptions::no_store_motion`), and [`hoist_loads`] says
//! whether it changed any block. Where it did and the kernel's registers cost it warps (a
//! step of `occupancy::theoretical`), the driver compiles the kernel once more without it and
//! keeps the code with more resident warps (on a tie, the store motion's). So the motion
//! never lowers a kernel's occupancy below that of loads hoisted alone; rodinia's
//! `needle` and thrust's `Unique` kernels lost warps to it before.
//!
//! **Trade-off**: a hoisted load's value (and its address until the load issues) is live for
//! up to `d` more instructions, which can raise the register count (and lower occupancy, or
//! spill under a register limit); in exchange up to `d` issue slots of the load's latency are
//! hidden, and a run of loads issues back to back and is waited for once. `d` follows the
//! latency (`sched::cost`: 200 cycles for global memory, 30 for shared): a global load is worth
//! a few registers, a shared one only a short lead (with 32 places, the unrolled shared-memory
//! dot products of the matrixMul kernels went from 21 to 42 registers and lost occupancy).

mod interleave;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap as HashMap;

use super::inst::{Role, Sm50Inst};
use crate::machinst::VCode;
use crate::machinst::{MachInst, OpConstraint, OpKind, Reg, RegKind};
use crate::sm50::sched::list::{address, mem, mem_conflict, strong, Mem};
use crate::sm50::sched::model::{access, is_fence, NUM_RES};
use crate::sm50::{Field, Form, MemAccess, MemSpace};

/// How many places a global, local or generic load may move up (see the trade-off in the
/// essay).
pub const HOIST: usize = 32;

/// How many places a shared-memory load may move up.
pub const HOIST_SHARED: usize = 6;

/// The window of the interleaving (`interleave`), by default: values computed up to this many
/// instructions ahead of their place. Measured on corpus-nvcc (dynamic cycles, window 0 / 8 /
/// 12 / 24): 15.21 M / - / 13.84 M / 13.77 M, where 24 cost two kernels a step of occupancy
/// that 12 did not (the driver's fallback, [`NARROW`]).
pub const WIDE: usize = 24;

/// The narrow window the driver tries where [`WIDE`] costs a kernel warps.
pub const NARROW: usize = 12;

/// How many places a store of a value loaded from global, local or generic memory in the
/// same block may move down (see the essay). Trade-off: the loaded value stays live for up
/// to this many more instructions (registers, as for [`HOIST`]); in exchange the stores no
/// longer order the next loads behind the wait for the previous one.
pub const SINK_STORE: usize = 32;

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

/// Reorder every block of `vcode` (see the module essay); with `store_motion` off, no store
/// sinks and no load passes a store of the same base (the motion of loads alone); with a
/// `window`, blocks are also interleaved by modelled cycles (`interleave`). Also says
/// whether the store motion changed the order of any block (so whether compiling without it
/// can give other code).
pub(super) fn hoist_loads(
    vcode: VCode<Sm50Inst>,
    store_motion: bool,
    window: usize,
) -> Result<(VCode<Sm50Inst>, bool), String> {
    let (mut blocks, vregs) = vcode.into_blocks();
    let mut moved_stores = false;
    // Each block's copies into its successors' parameters (a loop's phis), `(dst, src)`.
    let edge_copies: Vec<Vec<(Reg, Reg)>> = blocks
        .iter()
        .map(|b| {
            b.succs
                .iter()
                .flat_map(|(t, args)| {
                    let params = &blocks[t.0 as usize].params;
                    params
                        .iter()
                        .zip(args)
                        .map(|(&p, &a)| (Reg::Virt(p), Reg::Virt(a)))
                })
                .collect()
        })
        .collect();
    for (b, copies) in blocks.iter_mut().zip(&edge_copies) {
        if b.insts.iter().any(is_long_load) || (window > 0 && b.insts.len() > 2) {
            let (order, moved) = block_order(&b.insts, copies, store_motion, window);
            moved_stores |= moved;
            let mut old: Vec<Option<Sm50Inst>> = b.insts.drain(..).map(Some).collect();
            b.insts = order.iter().filter_map(|&k| old[k].take()).collect();
        }
    }
    Ok((VCode::from_blocks_trusted(blocks, vregs)?, moved_stores))
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

/// An I2F of an 8- or 16-bit source (a byte or halfword of a word read with its select,
/// `select/bytesel.rs`): it sinks to its first user in the block. Trade-off: the word (or
/// narrow value) it reads stays live down to there in place of the float; NVVM converts all
/// the bytes of a loaded word at once, early, and the word is live anyway until its last
/// byte is converted, so the floats no longer hold registers across the code between.
fn is_narrow_i2f(i: &Sm50Inst) -> bool {
    i.role == Role::Plain
        && i.pieces.len() == 1
        && i.pieces[0].inst.form == Form::I2F_R
        && i.pieces[0].inst.get(Field::St).is_some_and(|st| st & 3 < 2)
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

/// Where a single plain load or store points: its ordering class, the virtual register (and
/// part of it) in its base field with the block's instruction that last defined it (`None`:
/// before the block), displacement, width in bytes and whether the address is 64-bit.
type Place = (Mem, (Reg, u8, Option<usize>), i64, i64, bool);

/// [`Place`] of `i`, `def_of` the last definition of each register so far; `None` for
/// anything but a single plain access off a virtual base (a physical or `RZ` base included).
fn place(i: &Sm50Inst, def_of: &HashMap<Reg, usize>) -> Option<Place> {
    let [piece] = &i.pieces[..] else {
        return None;
    };
    let (_, off, size, wide) = address(&piece.inst)?;
    let base = piece.refs.iter().find(|r| r.field == Field::Ra)?;
    let reg = i.ops[base.op as usize].reg;
    let def = def_of.get(&reg).copied();
    matches!(reg, Reg::Virt(_)).then_some((
        mem(&piece.inst),
        (reg, base.offset, def),
        off,
        size,
        wide,
    ))
}

/// Whether two accesses provably touch different bytes (see the essay): one space, one
/// virtual base, byte ranges apart. Trade-off: none in code size; the loads that may now
/// pass a store of the same base keep their values live a little longer (at most their
/// hoist distance).
fn apart(a: Option<Place>, b: Option<Place>) -> bool {
    let (Some((ma, ba, oa, sa, wa)), Some((mb, bb, ob, sb, wb))) = (a, b) else {
        return false;
    };
    let space = |m: Mem| match m {
        Mem::Load(s) | Mem::Store(s) => Some(s),
        Mem::None => None,
    };
    space(ma).is_some()
        && space(ma) == space(mb)
        && (ba, wa) == (bb, wb)
        && (oa + sa <= ob || ob + sb <= oa)
}

/// Whether a global, local or generic load follows the store at `s` within [`SINK_STORE`]
/// places: only then can the store (and the wait for its value) hold a later load back.
/// Trade-off: a store with no such load stays where it is, as sinking it would only keep its
/// value live longer (measured on the older corpus: such stores cost static and dynamic
/// cycles through the allocation and schedule that followed, and hid nothing).
fn feeds_a_later_load(insts: &[Sm50Inst], s: usize) -> bool {
    insts
        .iter()
        .skip(s + 1)
        .take(SINK_STORE)
        .any(|i| is_long_load(i) && hoist_distance(i) == HOIST)
}

/// The new order of a block's instructions: `order[new] = old` (`store_motion`: see
/// [`hoist_loads`]); and whether the store motion changed anything the order is made from (a
/// conflict it let pass or a store it sank: without either, the order is the one without it).
fn block_order(
    insts: &[Sm50Inst],
    copies: &[(Reg, Reg)],
    store_motion: bool,
    window: usize,
) -> (Vec<usize>, bool) {
    let n = insts.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Of those, the instructions whose result `j` reads (the edges with a latency).
    let mut data: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Registers: the instruction defining each operand register in this block.
    let mut def_of: HashMap<Reg, usize> = HashMap::default();
    // Hidden resources: the last writer, and the readers since.
    let mut last_write: HashMap<usize, usize> = HashMap::default();
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::default();
    // Memory: accesses since the last store of each kind, and the stores so far.
    let mut stores: Vec<(usize, Mem, Option<Place>)> = Vec::new();
    let mut loads: Vec<(usize, Mem, Option<Place>)> = Vec::new();
    let mut last_fence: Option<usize> = None;
    // Stores of a value a long-latency global, local or generic load of the block defined.
    let mut sinks = vec![false; n];
    // Whether two accesses that conflict by kind were let pass as apart (same base, other
    // bytes): only the store motion's places allow it.
    let mut passed = false;
    for (j, inst) in insts.iter().enumerate() {
        let p = &mut preds[j];
        let dp = &mut data[j];
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
                    dp.push(d);
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
        let at = place(inst, &def_of).filter(|_| store_motion);
        if store_motion
            && !is_fence_inst(inst)
            && inst
                .pieces
                .iter()
                .any(|x| matches!(mem(&x.inst), Mem::Store(_)))
        {
            inst.for_each_operand(&mut |reg, spec| {
                let loaded = def_of.get(&reg).map(|&d| &insts[d]);
                if spec.kind == OpKind::Use
                    && loaded.is_some_and(|d| is_long_load(d) && hoist_distance(d) == HOIST)
                {
                    sinks[j] = true;
                }
            });
        }
        for piece in &inst.pieces {
            let m = mem(&piece.inst);
            let conflict = |&&(_, s, sp): &&(usize, Mem, Option<Place>)| {
                let kinds = mem_conflict(s, m);
                let excused = kinds && apart(sp, at);
                passed |= excused;
                kinds && !excused
            };
            match m {
                Mem::None => {}
                Mem::Load(_) => {
                    p.extend(stores.iter().filter(conflict).map(|&(k, _, _)| k));
                    loads.push((j, m, at));
                }
                Mem::Store(_) => {
                    p.extend(
                        stores
                            .iter()
                            .chain(&loads)
                            .filter(conflict)
                            .map(|&(k, _, _)| k),
                    );
                    stores.push((j, m, at));
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
    // Keys: input index, stores of loaded values pushed down by SINK_STORE, loads and what
    // they need pulled up by HOIST.
    let mut key: Vec<usize> = (0..n).collect();
    let mut sank = false;
    for (j, k) in key.iter_mut().enumerate() {
        if sinks[j] && feeds_a_later_load(insts, j) {
            *k += SINK_STORE;
            sank = true;
        }
        if is_narrow_i2f(&insts[j]) {
            // Lowered below to its first user's key: placed just before that user (a lead of
            // 8 places cost nv12ToBGR 18 more static cycles and no register).
            *k = usize::MAX;
        }
    }
    for j in (0..n).rev() {
        let d = hoist_distance(&insts[j]);
        if d > 0 {
            key[j] = key[j].min(j.saturating_sub(d));
        }
        for &i in &preds[j] {
            key[i] = key[i].min(key[j]);
        }
    }
    if window > 0 {
        interleave::coalescing_edges(insts, copies, &mut preds);
        let order = interleave::timed_order(insts, &preds, &data, &key, window);
        return (order, passed || sank);
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
    (order, passed || sank)
}
