//! List scheduling: the order of the instructions inside each block.
//!
//! In: a function's SM50 instructions in layout order (registers allocated) and their branch
//! targets (instruction indices). Out: a permutation `order` (`order[new] = old`) that moves
//! instructions only inside their block, so every block keeps its index range and every
//! branch target its index; [`super::assign_control`] then gives the reordered code its
//! control fields.
//!
//! **Blocks** are those of [`super::leaders`] (branch and SSY/PBK targets, and whatever
//! follows a control transfer).
//!
//! **Dependency graph** of a block, an edge `i → j` (`i` before `j` in the input) with a
//! latency when `j` must stay after `i`:
//! * `j` reads a register, predicate or CC that `i` writes: the fixed latency
//!   ([`super::fixed_latency`]) or, for a variable-latency producer, the cost model's
//!   [`cost::latency`];
//! * `j` overwrites what `i` reads or writes: 1 (order only; the control codes cover the
//!   rest);
//! * memory: two accesses of which at least one is a store, unless they are in provably
//!   different state spaces (global, local, shared; generic addresses may be any), or in the
//!   same space off the same base register, which nothing between them overwrites, with
//!   byte ranges `[off, off + size)` that do not overlap ([`disjoint`]; `[R2]` and
//!   `[R2+0x4]` as 4-byte accesses): 1. Loads may pass loads; constant loads (LDC) pass
//!   everything;
//! * a *fence* stays in place relative to everything: control transfers and SSY/PBK, BAR,
//!   MEMBAR, DEPBAR, atomics and reductions, KIL, NOP, clock and timer reads (S2R/CS2R of
//!   SR_CLOCK*, SR_GLOBALTIMER*), P2R/R2P/B2R and VOTE (whole-predicate-file or lane-mask
//!   operands), and instruction 0 (the prologue, which ptxas keeps first).
//!
//! Two instructions under the same predicate with opposite senses still get their edges
//! (conservative).
//!
//! **Priority**: the critical path, the longest latency-weighted path from an instruction to
//! the end of its block. The scheduler walks cycles: at each one it issues, among the
//! instructions whose predecessors are issued and whose operands are ready, the one with the
//! longest path (ties: the earlier in the input); when none is ready it moves to the cycle the
//! first becomes ready. So long-latency loads, MUFU, FP64 and conversions start early and
//! independent work fills their shadow. Register pressure does not matter here (allocation is
//! done), and the order is deterministic.

use super::{access, cost, fixed_latency, leaders, Access};
use crate::sm50::{Field, Inst};

/// Which memory a load or store touches, for the ordering rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    Global,
    Local,
    Shared,
    /// Generic addressing (`LD`, `ST`): may be any of the above.
    Generic,
}

/// How an instruction takes part in memory ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mem {
    None,
    Load(Space),
    Store(Space),
}

fn mem(inst: &Inst) -> Mem {
    match inst.info().class {
        "LDG" | "TEX" | "TEXS" | "TLDS" => Mem::Load(Space::Global),
        "LD" => Mem::Load(Space::Generic),
        "LDL" => Mem::Load(Space::Local),
        "LDS" => Mem::Load(Space::Shared),
        "STG" => Mem::Store(Space::Global),
        "ST" => Mem::Store(Space::Generic),
        "STL" => Mem::Store(Space::Local),
        "STS" => Mem::Store(Space::Shared),
        _ => Mem::None,
    }
}

/// Whether two memory accesses must keep their order.
fn mem_conflict(a: Mem, b: Mem) -> bool {
    let same = |x: Space, y: Space| x == y || x == Space::Generic || y == Space::Generic;
    match (a, b) {
        (Mem::Store(x), Mem::Store(y) | Mem::Load(y)) | (Mem::Load(x), Mem::Store(y)) => same(x, y),
        _ => false,
    }
}

/// The base register, displacement and width in bytes of a plain load or store
/// (`[Ra+off]`, any space), with whether the address is 64-bit (`.E`); `None` for anything
/// else (texture fetches, an unknown size).
fn address(inst: &Inst) -> Option<(u64, i64, i64, bool)> {
    let off_bits = match inst.info().class {
        "LD" | "ST" => 32,
        "LDG" | "STG" | "LDS" | "STS" | "LDL" | "STL" => 24,
        _ => return None,
    };
    let size = match inst.get(Field::Size)? {
        0 | 1 => 1,
        2 | 3 => 2,
        4 => 4,
        5 => 8,
        6 => 16,
        7 if matches!(inst.info().class, "LD" | "LDG") => 16, // .U.128
        _ => return None,
    };
    let off = crate::sm50::rt::sext(inst.get(Field::Off)?, off_bits) as i64;
    let wide = inst.get(Field::E) == Some(1);
    Some((inst.get(Field::Ra)?, off, size, wide))
}

/// Whether memory accesses `i` and `j` (`i` before `j` in one block, both plain loads or
/// stores of the same state space) provably touch different bytes: the same base register
/// (pair, for `.E`), which neither `i` nor anything between them writes, so both addresses
/// are that one value plus their displacements, and byte ranges that do not overlap. (RZ as
/// the base is the same value too.)
fn disjoint(insts: &[Inst], acc: &[Access], i: usize, j: usize) -> bool {
    let (Some((ra, oi, si, wi)), Some((rb, oj, sj, wj))) = (address(&insts[i]), address(&insts[j]))
    else {
        return false;
    };
    if ra != rb || wi != wj {
        return false;
    }
    let base: Vec<usize> = if ra == 255 {
        Vec::new()
    } else if wi {
        vec![ra as usize, ra as usize + 1]
    } else {
        vec![ra as usize]
    };
    let rewritten = acc[i..j]
        .iter()
        .any(|a| a.defs.iter().any(|d| base.contains(d)));
    !rewritten && (oi + si <= oj || oj + sj <= oi)
}

/// Whether `inst` must stay in place relative to every other instruction of its block.
pub fn is_fence(inst: &Inst) -> bool {
    let class = inst.info().class;
    if super::is_control(inst) {
        return true;
    }
    match class {
        "SSY" | "PBK" | "BAR" | "MEMBAR" | "DEPBAR" | "ATOM" | "ATOM_CAS" | "ATOMS"
        | "ATOMS_CAS" | "RED" | "KIL" | "NOP" | "BPT" | "P2R" | "R2P" | "B2R" | "VOTE" | "CCTL"
        | "JCAL" | "PRET" | "CS2R" => true,
        // Clock and timer reads observe time; every other special register is constant.
        "S2R" => matches!(inst.get(Field::Sr), Some(1 | 0x50..=0x53) | None),
        _ => false,
    }
}

/// Whether `i` and `j` access the same state space and [`disjoint`] bytes of it.
fn same_space_disjoint(insts: &[Inst], acc: &[Access], i: usize, j: usize) -> bool {
    let space = |m: Mem| match m {
        Mem::Load(s) | Mem::Store(s) => Some(s),
        Mem::None => None,
    };
    let (a, b) = (space(mem(&insts[i])), space(mem(&insts[j])));
    a.is_some() && a == b && disjoint(insts, acc, i, j)
}

/// Latency of the edge `i → j`, or `None` when `j` may go before `i`.
fn edge(insts: &[Inst], acc: &[Access], i: usize, j: usize) -> Option<u32> {
    let (a, b) = (&acc[i], &acc[j]);
    let mut lat: Option<u32> = None;
    let mut need = |l: u32| lat = Some(lat.map_or(l, |x| x.max(l)));
    if i == 0 || is_fence(&insts[i]) || is_fence(&insts[j]) {
        need(1);
    }
    for &r in &b.uses {
        if a.defs.contains(&r) {
            if insts[i].info().variable_latency {
                need(cost::latency(&insts[i]) as u32);
            } else {
                need(fixed_latency(r));
            }
        }
    }
    if b.defs
        .iter()
        .any(|r| a.uses.contains(r) || a.defs.contains(r))
    {
        need(1);
    }
    if mem_conflict(mem(&insts[i]), mem(&insts[j])) && !same_space_disjoint(insts, acc, i, j) {
        need(1);
    }
    lat
}

/// The order of one block `insts[start..end]` (indices into `insts`).
fn schedule_block(insts: &[Inst], acc: &[Access], start: usize, end: usize) -> Vec<usize> {
    let n = end - start;
    // Edges as successor lists (local indices) and predecessor counts.
    let mut npreds = vec![0usize; n];
    let mut succs: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (j, np) in npreds.iter_mut().enumerate() {
        for (i, si) in succs.iter_mut().enumerate().take(j) {
            if let Some(l) = edge(insts, acc, start + i, start + j) {
                *np += 1;
                si.push((j, l));
            }
        }
    }
    // Critical path to the end of the block.
    let mut height = vec![0u32; n];
    for i in (0..n).rev() {
        height[i] = succs[i]
            .iter()
            .map(|&(j, l)| l + height[j])
            .max()
            .unwrap_or(0);
    }
    let mut left = npreds;
    let mut earliest = vec![0u32; n];
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut t = 0u32;
    while order.len() < n {
        let ready = (0..n).filter(|&j| !done[j] && left[j] == 0);
        // Highest priority among those ready now; else the first to become ready.
        let pick = ready
            .clone()
            .filter(|&j| earliest[j] <= t)
            .max_by_key(|&j| (height[j], std::cmp::Reverse(j)))
            .or_else(|| ready.min_by_key(|&j| (earliest[j], std::cmp::Reverse(height[j]), j)))
            .expect("a block's dependency graph is acyclic");
        t = t.max(earliest[pick]);
        done[pick] = true;
        order.push(start + pick);
        for &(j, l) in &succs[pick] {
            left[j] -= 1;
            earliest[j] = earliest[j].max(t + l);
        }
        t += 1;
    }
    order
}

/// The new order of `insts` (`order[new] = old`): each block list-scheduled in place.
pub fn schedule(insts: &[Inst], targets: &[Option<usize>]) -> Vec<usize> {
    let lead = leaders(insts, targets);
    let acc: Vec<Access> = insts.iter().map(access).collect();
    let mut order = Vec::with_capacity(insts.len());
    let mut start = 0;
    while start < insts.len() {
        let mut end = start + 1;
        while end < insts.len() && !lead[end] {
            end += 1;
        }
        order.extend(schedule_block(insts, &acc, start, end));
        start = end;
    }
    order
}

/// Apply an order from [`schedule`] to instructions and their branch targets. Targets are
/// block leaders, which keep their index, so only the branch's own position moves.
pub fn permute(
    insts: &[Inst],
    targets: &[Option<usize>],
    order: &[usize],
) -> (Vec<Inst>, Vec<Option<usize>>) {
    let new_insts = order.iter().map(|&o| insts[o]).collect();
    let new_targets = order
        .iter()
        .map(|&o| targets.get(o).copied().flatten())
        .collect();
    (new_insts, new_targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm50::Form;

    fn reg(form: Form, rd: u64, ra: u64) -> Inst {
        Inst::new(form).with(Field::Rd, rd).with(Field::Ra, ra)
    }

    #[test]
    fn memory_ordering_rules() {
        use Mem::*;
        use Space::*;
        // (first, second, must keep order)
        let table = [
            (Load(Global), Load(Global), false),
            (Load(Global), Store(Global), true),
            (Store(Global), Load(Global), true),
            (Store(Global), Store(Global), true),
            (Store(Shared), Load(Global), false),
            (Store(Local), Store(Shared), false),
            (Store(Generic), Load(Shared), true),
            (Load(Local), Store(Generic), true),
            (Load(Generic), Load(Shared), false),
            (None, Store(Global), false),
        ];
        for (a, b, want) in table {
            assert_eq!(mem_conflict(a, b), want, "{a:?} then {b:?}");
        }
    }

    #[test]
    fn same_base_disjointness() {
        let mem = |form: Form, ra: u64, off: u64, size: u64| {
            Inst::new(form)
                .with(Field::Rd, 30)
                .with(Field::Ra, ra)
                .with(Field::Off, off)
                .with(Field::Size, size)
        };
        let w = |i: Inst| i.with(Field::E, 1);
        // (block, first, second, provably different bytes of one space)
        let table = [
            (vec![mem(Form::STS, 4, 0, 4), mem(Form::LDS, 4, 4, 4)], true),
            (vec![mem(Form::STS, 4, 4, 4), mem(Form::LDS, 4, 0, 4)], true),
            (
                vec![mem(Form::STS, 4, 0, 5), mem(Form::LDS, 4, 4, 4)],
                false,
            ), // .64 overlaps
            (
                vec![mem(Form::STS, 4, 0, 4), mem(Form::LDS, 5, 4, 4)],
                false,
            ), // other base
            (
                vec![mem(Form::STS, 4, 0, 4), mem(Form::LDS, 4, 0, 4)],
                false,
            ), // same bytes
            (vec![mem(Form::STS, 4, 0, 0), mem(Form::LDS, 4, 1, 0)], true), // bytes
            (
                vec![mem(Form::STS, 4, 0xfffffc, 4), mem(Form::LDS, 4, 0, 4)],
                true,
            ), // -4
            (
                vec![mem(Form::STS, 4, 0, 4), mem(Form::LDG, 4, 4, 4)],
                false,
            ), // two spaces
            (vec![mem(Form::STL, 4, 0, 4), mem(Form::LDL, 4, 8, 4)], true),
            (
                vec![w(mem(Form::STG, 4, 0, 4)), w(mem(Form::LDG, 4, 4, 4))],
                true,
            ),
            (
                vec![w(mem(Form::STG, 4, 0, 4)), mem(Form::LDG, 4, 4, 4)],
                false,
            ), // .E vs not
            (
                vec![
                    mem(Form::STS, 4, 0, 4),
                    reg(Form::IADD_R, 4, 4),
                    mem(Form::LDS, 4, 4, 4),
                ],
                false, // base rewritten between
            ),
            (
                vec![
                    w(mem(Form::STG, 4, 0, 4)),
                    reg(Form::IADD_R, 5, 4),
                    w(mem(Form::LDG, 4, 4, 4)),
                ],
                false, // high half of the .E pair rewritten
            ),
            (
                vec![
                    mem(Form::LDS, 4, 0, 4).with(Field::Rd, 4),
                    mem(Form::STS, 4, 4, 4),
                ],
                false, // the load itself writes the base
            ),
        ];
        for (block, want) in table {
            let acc: Vec<Access> = block.iter().map(access).collect();
            let j = block.len() - 1;
            assert_eq!(
                same_space_disjoint(&block, &acc, 0, j),
                want,
                "{:?}",
                block
                    .iter()
                    .map(|i| crate::sm50::print(i, 0, 0))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn fences_and_clock_reads() {
        let s2r = |sr| Inst::new(Form::S2R).with(Field::Rd, 0).with(Field::Sr, sr);
        let table = [
            (s2r(0x21), false), // SR_TID.X
            (s2r(0x25), false), // SR_CTAID.X
            (s2r(0x50), true),  // SR_CLOCKLO
            (s2r(1), true),     // SR_CLOCK
            (Inst::new(Form::EXIT), true),
            (Inst::new(Form::BRA), true),
            (Inst::new(Form::NOP), true),
            (reg(Form::IADD_R, 2, 3), false),
        ];
        for (inst, want) in table {
            assert_eq!(is_fence(&inst), want, "{}", crate::sm50::print(&inst, 0, 0));
        }
    }
}
