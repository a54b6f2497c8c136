//! Spill slots in registers: [`promote`] moves the local-memory slots of an allocation into
//! registers the allocation left free, so that a spill store becomes a `MOV` into the slot's
//! register and a reload a `MOV` out of it.
//!
//! Why. regalloc2 has 64 names per class, 192 in all (`machinst`'s essay). Where more values
//! are live at once than that, the allocation spills (`spill`, then regalloc2 itself) although
//! the register file, 255 registers, would hold them: cub's radix-sort downsweep kernels keep
//! about 270 scalars live and came out at 77 registers with 2.8 KiB of spill slots, reloading
//! from local memory (hundreds of cycles) in their hottest code, where ptxas, which is not
//! limited that way, uses 255 registers and spills 104 bytes. A slot in a register costs a
//! `MOV` (fixed latency) where the slot in memory costs an `STL` and an `LDL` (variable
//! latency, a scoreboard wait) and local memory bandwidth. It is what ptxas does too: it
//! spills only where its register budget is full, never to stay below it.
//!
//! In: an [`Allocated`] function, its register budget (`max_regs`) and where its spill area
//! starts (`AllocOptions::spill_base`, rounded up to 16). Out: the same function in which the
//! slots that fit in the registers from `num_regs` to `max_regs - 1` live there, with
//! `num_regs`, `spills`, `reloads` and `spill_bytes` updated.
//!
//! Which slots. Every instruction that [`MachInst::as_slot_access`] recognises as spill code
//! and whose offset lies in the spill area is an access of its slot `(offset, kind)`. A slot is
//! promoted whole or not at all, and only where every access of its bytes uses the same offset
//! and width (a slot written as a pair and read one word at a time stays in memory). Slots are
//! taken in order of how often the code reads and writes them (the static count, each access
//! inside a loop counted as 16: a reload in a loop runs many times), and each gets the lowest
//! free register of its alignment (pairs even, quads at multiples of 4) until none is left.
//!
//! Why it is correct. The spill area is the allocator's own: no other instruction reads or
//! writes it (the kernel's `.local` data lie below `spill_base`), and its slots are only ever
//! accessed through `[R1 + offset]` by the spill code. A register at or above `num_regs` is
//! read or written by no instruction of the function. So a register that the slot's stores
//! write and its reloads read holds, at every point, what the slot would hold in memory.
//! Functions that call subroutines are left alone: a callee writes registers the caller does
//! not see (the call ABI's scratch registers, and the callee's own use of registers above the
//! caller's count), and so are subroutines (their registers above the ABI's are the caller's).
//! Invariant of the result: `spill_bytes` is 0 where every slot was promoted; otherwise the
//! slots left in memory are moved down to close the gaps of the promoted ones ([`compact`]:
//! cub's radix-sort kernels kept 904 bytes of area for the 43 slots left, ptxas has 104), and
//! `spill_bytes` covers what they use.

use super::*;
use crate::machinst::SlotAccess;
use rustc_hash::FxHashMap;

/// An access inside a loop counts this many times an access outside one.
const LOOP_WEIGHT: u64 = 16;

/// What promotion did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Promoted {
    /// Slots moved into registers.
    pub(super) slots: usize,
    /// Spill stores and reloads that became register moves.
    pub(super) stores: usize,
    pub(super) loads: usize,
}

/// Move spill slots of `alloc` at or above `area` into registers below `max_regs` (see the
/// module essay).
/// `loops`: per block of the code before allocation, whether it lies in a loop
/// ([`blocks_in_loops`]; blocks the allocation inserted count as outside). The caller looks
/// for loops only where the allocation spilled.
/// `facts` (where `forward` runs next): the operands' widths and the checker's operations of
/// the stores and reloads become those of their moves, and the promoted reloads are listed.
pub(super) fn promote<I: MachInst>(
    alloc: &mut Allocated<I>,
    area: u32,
    max_regs: u8,
    loops: &[bool],
    mut facts: Option<&mut super::forward::Facts>,
) -> Promoted {
    if alloc.spill_bytes == 0 {
        return Promoted::default();
    }
    let end = area + alloc.spill_bytes;
    let in_loop: Vec<bool> = alloc
        .blocks
        .iter()
        .map(|b| {
            b.origin
                .is_some_and(|o| loops.get(o.0 as usize) == Some(&true))
        })
        .collect();
    // Per slot offset: its width, and its weight; `None` width: accessed at several widths.
    let mut slots: FxHashMap<u32, (Option<RegKind>, u64)> = FxHashMap::default();
    for (b, block) in alloc.blocks.iter().enumerate() {
        for inst in &block.insts {
            let Some(a) = inst.as_slot_access() else {
                continue;
            };
            if a.offset < area || a.offset >= end {
                continue;
            }
            let weight = if in_loop[b] { LOOP_WEIGHT } else { 1 };
            let e = slots.entry(a.offset).or_insert((Some(a.kind), 0));
            if e.0 != Some(a.kind) {
                e.0 = None;
            }
            e.1 += weight;
        }
    }
    // Slots whose bytes another slot's accesses also touch stay in memory.
    let mut by_offset: Vec<(u32, Option<RegKind>, u64)> =
        slots.iter().map(|(o, (k, w))| (*o, *k, *w)).collect();
    by_offset.sort_unstable_by_key(|s| s.0);
    let bytes = |k: Option<RegKind>| k.map_or(16, |k| 4 * k.gprs().max(1));
    let mut clash = vec![false; by_offset.len()];
    for i in 1..by_offset.len() {
        let (prev, prev_kind, _) = by_offset[i - 1];
        if prev + bytes(prev_kind) > by_offset[i].0 {
            clash[i - 1] = true;
            clash[i] = true;
        }
    }
    let mut candidates: Vec<(u32, RegKind, u64)> = by_offset
        .iter()
        .zip(&clash)
        .filter_map(|(&(o, k, w), &c)| Some((o, k.filter(|_| !c)?, w)))
        .collect();
    // Heaviest first; among equals, the lower offset (a deterministic order).
    candidates.sort_unstable_by_key(|&(o, _, w)| (std::cmp::Reverse(w), o));

    // Registers from `num_regs` up, below the budget, are free.
    let mut free = [false; 256];
    for r in alloc.num_regs..u32::from(max_regs) {
        free[r as usize] = r != u32::from(PhysReg::SP.0);
    }
    let mut home: FxHashMap<u32, PhysReg> = FxHashMap::default();
    let mut top = alloc.num_regs;
    for (offset, kind, _) in candidates {
        let n = kind.gprs().max(1) as usize;
        let base = (0..256 - n)
            .step_by(n)
            .find(|&r| free[r..r + n].iter().all(|f| *f));
        let Some(base) = base else {
            continue;
        };
        free[base..base + n].iter_mut().for_each(|f| *f = false);
        top = top.max((base + n) as u32);
        home.insert(offset, PhysReg(base as u8));
    }
    if home.is_empty() {
        return Promoted::default();
    }

    let mut done = Promoted {
        slots: home.len(),
        ..Promoted::default()
    };
    let mut left_in_memory = false;
    for (b, block) in alloc.blocks.iter_mut().enumerate() {
        for (i, inst) in block.insts.iter_mut().enumerate() {
            let Some(SlotAccess {
                offset,
                reg,
                kind,
                store,
            }) = inst.as_slot_access()
            else {
                continue;
            };
            if offset < area || offset >= end {
                continue;
            }
            let Some(&slot) = home.get(&offset) else {
                left_in_memory = true;
                continue;
            };
            *inst = if store {
                done.stores += 1;
                I::gen_move(slot, reg, kind)
            } else {
                done.loads += 1;
                I::gen_move(reg, slot, kind)
            };
            if let Some(f) = facts.as_deref_mut() {
                moved_in_facts(f, (b, i), slot, kind, store);
            }
        }
    }
    alloc.num_regs = alloc.num_regs.max(top);
    alloc.spills -= done.stores.min(alloc.spills);
    alloc.reloads -= done.loads.min(alloc.reloads);
    alloc.spill_bytes = if left_in_memory {
        compact(alloc, area, end)
    } else {
        0
    };
    done
}

/// Moves the slots left in memory (accesses in `area..end`) down to the start of the area,
/// closing the gaps the promoted slots left, and returns the bytes the area keeps (a multiple
/// of 16). Slots whose bytes overlap move together; each group keeps its offset modulo 16, so
/// every access keeps its alignment.
fn compact<I: MachInst>(alloc: &mut Allocated<I>, area: u32, end: u32) -> u32 {
    // per offset accessed: the most bytes an access there covers
    let mut spans: FxHashMap<u32, u32> = FxHashMap::default();
    for inst in alloc.blocks.iter().flat_map(|b| &b.insts) {
        if let Some(a) = inst
            .as_slot_access()
            .filter(|a| (area..end).contains(&a.offset))
        {
            let e = spans.entry(a.offset).or_insert(0);
            *e = (*e).max(4 * a.kind.gprs().max(1));
        }
    }
    let mut spans: Vec<(u32, u32)> = spans.into_iter().collect();
    spans.sort_unstable();
    // per offset: where it moves; overlapping spans form one group
    let mut moved: FxHashMap<u32, u32> = FxHashMap::default();
    let (mut cursor, mut group) = (area, None::<(u32, u32, u32)>);
    for (offset, bytes) in spans {
        let (start, group_end, new_start) = match group {
            Some((start, group_end, new_start)) if offset < group_end => {
                (start, group_end.max(offset + bytes), new_start)
            }
            _ => {
                // the lowest offset from `cursor` on that is `offset` modulo 16
                let new_start = cursor + (offset.wrapping_sub(cursor) % 16);
                (offset, offset + bytes, new_start)
            }
        };
        moved.insert(offset, new_start + (offset - start));
        cursor = cursor.max(new_start + (group_end - start));
        group = Some((start, group_end, new_start));
    }
    for inst in alloc.blocks.iter_mut().flat_map(|b| &mut b.insts) {
        let Some(a) = inst.as_slot_access() else {
            continue;
        };
        if let Some(&to) = moved.get(&a.offset).filter(|to| **to != a.offset) {
            *inst = if a.store {
                I::gen_spill(to, a.reg, a.kind)
            } else {
                I::gen_reload(a.reg, to, a.kind)
            };
        }
    }
    (cursor - area).next_multiple_of(16)
}

/// `facts` after the slot access at `at` became a move from or to `slot` (`store`: to it): the
/// move's operands have the access's width, a store or a reload is listed, and in the checker's
/// operations a regalloc2 slot's store or reload becomes that move (`spill`'s stay
/// instructions, as the checker knows them).
fn moved_in_facts(
    f: &mut super::forward::Facts,
    (b, i): (usize, usize),
    slot: PhysReg,
    kind: RegKind,
    store: bool,
) {
    let w = kind.gprs().max(1) as u8;
    f.words[b][i] = smallvec::smallvec![w, w];
    if store {
        f.stores.push((b, i, slot));
    } else {
        f.reloads.push((b, i, slot));
    }
    if let Some(c) = f.check.as_mut() {
        let op = &mut c.ops[b][c.op_of[b][i]];
        *op = match *op {
            check::Op::Spill { from, words, .. } => check::Op::Move {
                from,
                to: slot.0,
                words,
            },
            check::Op::Reload { to, words, .. } => check::Op::Move {
                from: slot.0,
                to,
                words,
            },
            ref other => other.clone(),
        };
    }
}

/// Per block of `vc`: its successors' indices (the CFG [`blocks_in_loops`] walks).
pub(super) fn successors<I: MachInst>(vc: &VCode<I>) -> Vec<Vec<usize>> {
    (0..vc.num_blocks())
        .map(|b| {
            vc.block_succs(BlockId(b as u32))
                .iter()
                .map(|s| s.0 .0 as usize)
                .collect()
        })
        .collect()
}

/// Per block of the CFG `cfg` ([`successors`]): whether it lies on a cycle (it can reach
/// itself), by Tarjan's strongly connected components (a component of several blocks, or a
/// block that branches to itself).
pub(super) fn blocks_in_loops(cfg: &[Vec<usize>]) -> Vec<bool> {
    let n = cfg.len();
    let succs = |b: usize| cfg[b].iter().copied();
    let mut in_loop = vec![false; n];
    let mut index = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0u32;
    for root in 0..n {
        if index[root] != u32::MAX {
            continue;
        }
        // (block, its successors not yet visited) frames of the depth-first walk
        let mut walk: Vec<(usize, Vec<usize>)> = Vec::new();
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        walk.push((root, succs(root).collect()));
        while let Some((b, todo)) = walk.last_mut() {
            let b = *b;
            if let Some(s) = todo.pop() {
                if s == b {
                    in_loop[b] = true;
                }
                if index[s] == u32::MAX {
                    index[s] = next;
                    low[s] = next;
                    next += 1;
                    stack.push(s);
                    on_stack[s] = true;
                    walk.push((s, succs(s).collect()));
                } else if on_stack[s] {
                    low[b] = low[b].min(index[s]);
                }
                continue;
            }
            walk.pop();
            if let Some((parent, _)) = walk.last() {
                low[*parent] = low[*parent].min(low[b]);
            }
            if low[b] == index[b] {
                let mut members = Vec::new();
                while let Some(m) = stack.pop() {
                    on_stack[m] = false;
                    members.push(m);
                    if m == b {
                        break;
                    }
                }
                if members.len() > 1 {
                    members.iter().for_each(|&m| in_loop[m] = true);
                }
            }
        }
    }
    in_loop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Role, Sm50Inst};
    use crate::machinst::{Reg, VCodeBuilder};
    use crate::sm50::Form;

    /// `n` scalars defined one after another, then read in the same order: `n` live at once.
    fn crowd(n: usize) -> VCode<Sm50Inst> {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let vs: Vec<VReg> = (0..n).map(|_| b.new_vreg(RegKind::B32)).collect();
        for v in &vs {
            let mut i = Sm50Inst::new(Role::Plain);
            i.def(*v, false);
            b.push(blk, i);
        }
        for v in &vs {
            let mut i = Sm50Inst::new(Role::Plain);
            i.use_(*v);
            b.push(blk, i);
        }
        b.terminate(blk, Sm50Inst::new(Role::Ret), Vec::new());
        b.finish().expect("valid vcode")
    }

    fn phys(r: Reg) -> u8 {
        match r {
            Reg::Phys(p) => p.0,
            other => panic!("not a physical GPR after allocation: {other:?}"),
        }
    }

    /// Runs the allocated crowd with values as labels: the k-th def writes label k into its
    /// register, moves copy a register's label, spill stores and reloads go through a model of
    /// the slots; every read must find its own label (the k-th read reads value k). Returns
    /// how many of the reads found it.
    fn reads_right(out: &Allocated<Sm50Inst>, n: usize) -> usize {
        let mut regs: FxHashMap<u8, usize> = FxHashMap::default();
        let mut slots: FxHashMap<u32, usize> = FxHashMap::default();
        let (mut defs, mut reads, mut right) = (0, 0, 0);
        for inst in out.blocks.iter().flat_map(|b| &b.insts) {
            if let Some(a) = inst.as_slot_access() {
                if a.store {
                    let v = regs.get(&a.reg.0).copied().unwrap_or(usize::MAX);
                    slots.insert(a.offset, v);
                } else {
                    let v = slots.get(&a.offset).copied().unwrap_or(usize::MAX);
                    regs.insert(a.reg.0, v);
                }
            } else if inst.role == Role::Move {
                let (d, s) = (phys(inst.ops[0].reg), phys(inst.ops[1].reg));
                let v = regs.get(&s).copied().unwrap_or(usize::MAX);
                regs.insert(d, v);
            } else if inst.role == Role::Plain && inst.ops.len() == 1 {
                let r = phys(inst.ops[0].reg);
                if inst.ops[0].spec.kind == crate::machinst::OpKind::Def {
                    regs.insert(r, defs);
                    defs += 1;
                } else {
                    right += usize::from(regs.get(&r) == Some(&reads));
                    reads += 1;
                }
            }
        }
        assert_eq!(
            (defs, reads),
            (n, n),
            "the crowd's defs and reads are all there"
        );
        right
    }

    fn count(out: &Allocated<Sm50Inst>, form: Form) -> usize {
        out.blocks
            .iter()
            .flat_map(|b| &b.insts)
            .flat_map(|i| &i.pieces)
            .filter(|p| p.inst.form == form)
            .count()
    }

    const N: usize = 220;

    /// 220 scalars live at once: more than regalloc2's 192 names, fewer than the 254
    /// registers. Without promotion the allocation spills to local memory; with it, every slot
    /// is a register, no `STL`/`LDL` is left, the register count grows by the slots, and
    /// every read still finds its value.
    #[test]
    fn slots_move_into_free_registers() {
        let plain = AllocOptions {
            promote_slots: false,
            ..AllocOptions::default()
        };
        let before = allocate(&crowd(N), &plain).expect("allocates");
        assert!(before.spill_bytes > 0, "the crowd spills without promotion");
        assert!(count(&before, Form::STL) > 0 && count(&before, Form::LDL) > 0);
        assert_eq!(reads_right(&before, N), N);
        let after = allocate(&crowd(N), &AllocOptions::default()).expect("allocates");
        assert_eq!((after.spill_bytes, after.spills, after.reloads), (0, 0, 0));
        assert_eq!(count(&after, Form::STL) + count(&after, Form::LDL), 0);
        assert_eq!(
            count(&after, Form::MOV_R),
            count(&before, Form::MOV_R),
            "each spill store and reload became a MOV, and the MOV went (`forward`)"
        );
        assert!(after.num_regs > before.num_regs && after.num_regs <= 255);
        assert_eq!(reads_right(&after, N), N);
    }

    /// With a budget that holds only some of the slots, those are promoted, the others stay
    /// in memory, moved down over the promoted ones' bytes (the area shrinks), the count stays
    /// in the budget, and every read still finds its value.
    #[test]
    fn budget_keeps_some_slots_in_memory() {
        let plain = AllocOptions {
            promote_slots: false,
            ..AllocOptions::default()
        };
        let before = allocate(&crowd(N), &plain).expect("allocates");
        let max_regs = (before.num_regs + 4) as u8;
        let opts = AllocOptions {
            max_regs,
            ..AllocOptions::default()
        };
        let after = allocate(&crowd(N), &opts).expect("allocates");
        assert!(after.num_regs <= u32::from(max_regs), "{}", after.num_regs);
        // the slots left are moved down over the promoted ones' bytes
        assert!(
            after.spill_bytes > 0 && after.spill_bytes < before.spill_bytes,
            "{} of {} bytes",
            after.spill_bytes,
            before.spill_bytes
        );
        let top = |out: &Allocated<Sm50Inst>| {
            let ends = out.blocks.iter().flat_map(|b| &b.insts);
            ends.filter_map(|i| i.as_slot_access())
                .map(|a| a.offset + 4 * a.kind.gprs().max(1))
                .max()
                .unwrap_or(0)
        };
        assert!(
            top(&after) <= after.spill_bytes,
            "every slot lies in the area"
        );
        assert!(
            count(&after, Form::STL) > 0 && count(&after, Form::STL) < count(&before, Form::STL)
        );
        assert_eq!(reads_right(&after, N), N);
    }

    /// A subroutine (registers that cost a save) keeps its slots in memory.
    #[test]
    fn subroutines_are_left_alone() {
        let opts = AllocOptions {
            save_cost: [1, 0, 0, 0],
            ..AllocOptions::default()
        };
        let out = allocate(&crowd(N), &opts).expect("allocates");
        assert!(out.spill_bytes > 0 && count(&out, Form::STL) > 0);
    }

    /// The loops of a CFG: a self-loop, a two-block cycle, and blocks on no cycle.
    #[test]
    fn loops_are_the_blocks_on_cycles() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blocks: Vec<BlockId> = (0..5).map(|_| b.new_block()).collect();
        // 0 -> 1; 1 -> 1, 2; 2 -> 3; 3 -> 2, 4; 4 returns
        let edges: [&[usize]; 5] = [&[1], &[1, 2], &[3], &[2, 4], &[]];
        for (k, targets) in edges.iter().enumerate() {
            if targets.is_empty() {
                b.terminate(blocks[k], Sm50Inst::new(Role::Ret), Vec::new());
                continue;
            }
            let mut br = Sm50Inst::new(Role::Branch);
            // two successors: the first taken under a predicate set in the block
            let guard = (targets.len() == 2).then(|| {
                let p = b.new_vreg(RegKind::Pred);
                let mut setp = Sm50Inst::new(Role::Plain);
                setp.def(p, false);
                b.push(blocks[k], setp);
                (br.use_(p), false)
            });
            for (t, target) in targets.iter().enumerate() {
                br.targets.push(blocks[*target]);
                br.branch_piece(t as u8, if t == 0 { guard } else { None });
            }
            let succs = targets.iter().map(|t| (blocks[*t], Vec::new())).collect();
            b.terminate(blocks[k], br, succs);
        }
        let code = b.finish().expect("valid vcode");
        assert_eq!(
            blocks_in_loops(&successors(&code)),
            vec![false, true, true, true, false]
        );
    }
}
