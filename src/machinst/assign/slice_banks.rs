//! Register banks for code allocated in class slices ([`permute_slices`]).
//!
//! In: a [`NameProg`] of code that regalloc2 allocated in class slices (it spilled, or the
//! colouring across widths did not fit; see `alloc::allocate_prepared`), and per class the
//! physical base register of every name (`alloc::compact`'s map). Out: the same map with the
//! bases of some names of one class exchanged, so that fewer machine instructions read two
//! registers of one bank (`R % 4`; see `sm50::banks`).
//!
//! Why it is safe: in a class slice every name is one register range of the class's width,
//! all ranges aligned to that width, no two names sharing a register, and nothing but the
//! name decides which register a value is in. Exchanging the bases of two names of one class
//! is therefore a renaming that keeps every interference, every copy (a move between two names
//! stays a move, a move of a name to itself stays dropped), alignment, the register count and
//! the set of registers used. Names pinned to a fixed register (a call's operands and
//! clobbers) never move, and only names the code uses are exchanged.
//!
//! What is scored: per machine instruction (an instruction of several pieces, such as the
//! three `XMAD`s of a 32-bit multiply, per piece: [`NameProg::read_groups`]) the registers it
//! reads, each register of a wide read counted; and for regalloc2's spills, the stack pointer
//! R1 with the spilled register (`STL [R1+x], R5` reads two registers of bank 1). A group
//! costs, per bank, the registers it reads there beyond the first, weighted by the loop depth
//! of its block (a group in a loop body counts 4 times, in a nested one 16 times, at most 64:
//! the static count is what `compare` reports, the dynamic one what the code pays). The
//! search is a local one: for every two movable names of a class whose banks differ, exchange
//! them when that lowers the cost of the groups that read them; passes until none improves
//! (at most 4).
//!
//! Measured on corpus-nvcc's `radixSortThrust.ptx` (counted on the listing: instructions
//! reading two registers of one bank), whose three downsweep kernels spill and so keep their
//! slices: 2,279 before, 2,035 with this exchange alone, 673 with the webs then moved
//! (`improve_slice_banks`) and spills kept off bank 1; ptxas 666.

use super::*;

/// One register read of a group: a name (with the width of the value read), or a physical
/// register outside the classes (R1).
#[derive(Clone, Copy)]
enum Read {
    Name(u16, u8),
    Phys(u8),
}

/// Exchange the bases of names within their class (see the module essay) where that lowers
/// the weighted number of same-bank reads. `map[c][i]`: the base register of name `c * 64 +
/// i`; `movable(name)`: whether the name holds values and is not pinned to a fixed register.
/// Returns how many exchanges were made.
pub(in crate::machinst) fn permute_slices(
    prog: &NameProg,
    map: &mut [Vec<u8>; 3],
    movable: &dyn Fn(u16) -> bool,
) -> usize {
    let (groups, weights) = read_groups_of(prog);
    exchange(&groups, &weights, map, movable)
}

/// The base register of name `n` in `map`.
fn base(map: &[Vec<u8>; 3], n: u16) -> Option<u8> {
    map[n as usize / PER_CLASS]
        .get(n as usize % PER_CLASS)
        .copied()
}

/// Group `reads`' cost under `map`: per bank, the distinct registers read there beyond the
/// first.
fn cost(map: &[Vec<u8>; 3], reads: &[Read]) -> u32 {
    let mut banks = [0u32; 4];
    let mut seen = [0u64; 4];
    let mut add = |r: usize| {
        if r < 256 && seen[r / 64] & (1 << (r % 64)) == 0 {
            seen[r / 64] |= 1 << (r % 64);
            banks[r % 4] += 1;
        }
    };
    for r in reads {
        match *r {
            Read::Name(n, w) => {
                if let Some(b) = base(map, n) {
                    (b as usize..b as usize + w as usize).for_each(&mut add);
                }
            }
            Read::Phys(p) => add(p as usize),
        }
    }
    banks.iter().map(|&k| k.saturating_sub(1)).sum()
}

/// The local search of [`permute_slices`] on `groups` (each with its weight).
fn exchange(
    groups: &[smallvec::SmallVec<[Read; 4]>],
    weights: &[u32],
    map: &mut [Vec<u8>; 3],
    movable: &dyn Fn(u16) -> bool,
) -> usize {
    // per name, the groups reading it (each once)
    let mut of_name: Vec<Vec<u32>> = vec![Vec::new(); NAMES];
    for (g, reads) in groups.iter().enumerate() {
        for r in reads {
            if let Read::Name(n, _) = *r {
                let v = &mut of_name[n as usize];
                if v.last() != Some(&(g as u32)) {
                    v.push(g as u32);
                }
            }
        }
    }
    let names: Vec<u16> = (0..NAMES as u16)
        .filter(|&n| movable(n) && !of_name[n as usize].is_empty() && base(map, n).is_some())
        .collect();
    let total = |map: &[Vec<u8>; 3], touched: &[u32]| -> u32 {
        touched
            .iter()
            .map(|&g| cost(map, &groups[g as usize]) * weights[g as usize])
            .sum()
    };
    let mut swaps = 0;
    let mut touched: Vec<u32> = Vec::new();
    for _pass in 0..4 {
        let mut improved = false;
        for (k, &a) in names.iter().enumerate() {
            for &b in &names[k + 1..] {
                let c = a as usize / PER_CLASS;
                if c != b as usize / PER_CLASS {
                    continue;
                }
                let (ba, bb) = (base(map, a).unwrap_or(0), base(map, b).unwrap_or(0));
                if ba % 4 == bb % 4 {
                    continue;
                }
                touched.clear();
                touched.extend_from_slice(&of_name[a as usize]);
                touched.extend_from_slice(&of_name[b as usize]);
                touched.sort_unstable();
                touched.dedup();
                let before = total(map, &touched);
                if before == 0 {
                    continue;
                }
                let (ia, ib) = (a as usize % PER_CLASS, b as usize % PER_CLASS);
                map[c].swap(ia, ib);
                if total(map, &touched) < before {
                    swaps += 1;
                    improved = true;
                } else {
                    map[c].swap(ia, ib);
                }
            }
        }
        if !improved {
            break;
        }
    }
    swaps
}

/// The groups of registers read together (see the module essay) and each group's weight.
fn read_groups_of(prog: &NameProg) -> (Vec<smallvec::SmallVec<[Read; 4]>>, Vec<u32>) {
    let depth = loop_depths(prog);
    let mut groups = Vec::new();
    let mut weights = Vec::new();
    for (b, &(s, e)) in prog.blocks.iter().enumerate() {
        let weight = 1u32 << (2 * depth[b].min(3));
        for s in s as usize..e as usize {
            let step = &prog.steps[s];
            let read = |k: usize| {
                let a = step.start as usize + k;
                Read::Name(prog.accs[a].name, prog.acc_widths[a])
            };
            let n = (step.end - step.start) as usize;
            match step.kind {
                StepKind::Spill => {
                    groups.push([read(0), Read::Phys(1)].into_iter().collect());
                    weights.push(weight);
                }
                StepKind::Inst(_) => match &prog.read_groups[s] {
                    Some(gs) => {
                        for g in gs {
                            let reads: smallvec::SmallVec<[Read; 4]> = g
                                .iter()
                                .map(|&k| k as usize)
                                .filter(|&k| k < n)
                                .map(read)
                                .collect();
                            if reads.len() > 1 {
                                groups.push(reads);
                                weights.push(weight);
                            }
                        }
                    }
                    None => {
                        let reads: smallvec::SmallVec<[Read; 4]> = (0..n)
                            .filter(|&k| !prog.accs[step.start as usize + k].def)
                            .map(read)
                            .collect();
                        if reads.len() > 1 {
                            groups.push(reads);
                            weights.push(weight);
                        }
                    }
                },
                StepKind::Move | StepKind::Reload => {}
            }
        }
    }
    (groups, weights)
}

/// Per block, how many loops hold it, taking the blocks in their order: an edge from block
/// `b` to a block `t <= b` closes a loop over the blocks `t..=b` (the lowering lays blocks out
/// in program order, so a loop's body lies between its header and its latch).
fn loop_depths(prog: &NameProg) -> Vec<u32> {
    let n = prog.blocks.len();
    let mut depth = vec![0u32; n];
    for (b, succs) in prog.succs.iter().enumerate() {
        for &t in succs {
            let t = t as usize;
            if t <= b {
                depth[t..=b].iter_mut().for_each(|d| *d += 1);
            }
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A three-source `FFMA` whose scalars sit in R4, R8 and R12 (all bank 0), with R5, R6 and
    /// R9 held by three other names (R5 pinned, read with the one in R6; the one in R9
    /// spilled): exchanging gives the three sources three banks, keeps the spilled name out
    /// of bank 1 (R1's) and the one read with R5 out of R5's bank.
    #[test]
    fn ffma_sources_take_three_banks() {
        let mut map: [Vec<u8>; 3] = [vec![4, 8, 12, 5, 6, 9], Vec::new(), Vec::new()];
        let ffma: smallvec::SmallVec<[Read; 4]> =
            [Read::Name(0, 1), Read::Name(1, 1), Read::Name(2, 1)]
                .into_iter()
                .collect();
        let stl: smallvec::SmallVec<[Read; 4]> =
            [Read::Name(5, 1), Read::Phys(1)].into_iter().collect();
        let with_r5: smallvec::SmallVec<[Read; 4]> =
            [Read::Name(4, 1), Read::Name(3, 1)].into_iter().collect();
        let groups = vec![ffma.clone(), stl.clone(), with_r5.clone()];
        assert_eq!(cost(&map, &ffma), 2);
        assert_eq!(cost(&map, &stl), 1);
        // name 3 is pinned: it keeps R5
        let swaps = exchange(&groups, &[1, 1, 1], &mut map, &|n| n != 3);
        assert!(swaps > 0);
        let left = cost(&map, &ffma) + cost(&map, &stl) + cost(&map, &with_r5);
        assert_eq!(left, 0, "{map:?}");
        assert_eq!(map[0][3], 5);
        let mut regs = map[0].clone();
        regs.sort_unstable();
        assert_eq!(
            regs,
            vec![4, 5, 6, 8, 9, 12],
            "a permutation of the same registers"
        );
    }

    /// A pair's spill always reads R1's bank when the pair is at 4k (its high word is 4k+1):
    /// exchanging with a pair at 4k+2 removes it; an immovable pair stays.
    #[test]
    fn spilled_pairs_leave_bank_one() {
        let mut map: [Vec<u8>; 3] = [Vec::new(), vec![4, 6], Vec::new()];
        let stl: smallvec::SmallVec<[Read; 4]> =
            [Read::Name(64, 2), Read::Phys(1)].into_iter().collect();
        let other: smallvec::SmallVec<[Read; 4]> =
            [Read::Name(65, 2), Read::Name(65, 2)].into_iter().collect();
        let groups = vec![stl.clone(), other];
        assert_eq!(exchange(&groups, &[1, 1], &mut map, &|_| false), 0);
        assert_eq!(map[1], vec![4, 6]);
        assert_eq!(exchange(&groups, &[1, 1], &mut map, &|_| true), 1);
        assert_eq!(map[1], vec![6, 4]);
        assert_eq!(cost(&map, &stl), 0);
    }
}
