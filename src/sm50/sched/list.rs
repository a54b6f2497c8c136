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
//!   [`super::model::latency`];
//! * `j` overwrites what `i` reads or writes: 1 (order only; the control codes cover the
//!   rest);
//! * memory: two accesses of which at least one is a store, unless they are in provably
//!   different state spaces (global, local, shared; generic addresses may be any), or in the
//!   same space off the same base register, which nothing between them overwrites, with
//!   byte ranges `[off, off + size)` that do not overlap ([`same_space_disjoint`]; `[R2]` and
//!   `[R2+0x4]` as 4-byte accesses): 1. Loads may pass loads; constant loads (LDC) pass
//!   everything;
//! * *strong* accesses, a `.CV` load or a `.WT` store (LDG/LD/STG/ST; what `ld.volatile`,
//!   `st.volatile`, `ld.cv` and `st.wt` become): 1 to and from every access of a space they
//!   may alias, loads included and without the same-base exemption: a volatile access acts
//!   as a memory fence of its space, so it is never hoisted over, sunk under or swapped with
//!   another access there (volatile spin-waits and warp-synchronous `volatile` shared code
//!   rely on program order; a relaxed reading would allow more, but the SASS has nothing
//!   finer to go by and volatile code is rare). Volatile shared accesses cannot be told from
//!   plain ones in SASS (ptxas gives both `LDS.U.32`/`STS`) and get the ordinary rule;
//! * a *fence* stays in place relative to everything: control transfers and SSY/PBK, BAR,
//!   MEMBAR, DEPBAR, atomics and reductions, KIL, NOP, clock and timer reads (S2R/CS2R of
//!   SR_CLOCK*, SR_GLOBALTIMER*), P2R/R2P/B2R (whole-predicate-file or barrier-state
//!   operands), and instruction 0 (the prologue, which ptxas keeps first). `VOTE` is no
//!   fence: its operands say all it reads and writes, and the lanes it counts, the active
//!   ones, are the same everywhere in a block (a guard disables a piece, not a lane), so it
//!   moves like arithmetic, as in ptxas (cub's multi-split interleaves its bits' votes).
//!
//! Two instructions under the same predicate with opposite senses still get their edges
//! (conservative). The graph is built without the edges other paths imply (see
//! [`candidate_preds`]): a 16,000-instruction block has linearly many edges instead of
//! quadratically many, and the ready instructions wait in heaps, so a block schedules in
//! O(n log n) for the usual code; the order is the one the full graph gives (a unit test
//! compares both on random blocks).
//!
//! **Carry chains** ([`cc_chains`]): the carry flag is one register, so the rules above
//! would keep every 64-bit add pair (`LEA R2.CC` + `LEA.HI.X R3`, `IADD.CC` + `IADD.X`) in
//! the order the allocator left the pairs in, although the pairs are independent. In a
//! loop that bumps two pointers after a copy (`LDG R9, [R10]; STG [R2], R9; R2 += s;
//! R10 += s`, alignedTypes' `testKernel`), the store's pair must follow the store (it
//! overwrites the store's address), and the load's pair was written after it: the carry
//! then held the load's pair behind the store too, where it cannot fill the load's
//! latency (ptxas bumps it there). So where a block has two or more chains, the graph leaves
//! the flag out and orders it by the chains instead: each member after the one before it
//! (a write's latency, or 1), a chain that reads a carry from before the block before all
//! others, and the last chain after all others when the flag is live after the block
//! ([`cc_live_after`]). Chains may then go in any order but never interleave: the first
//! member to issue *locks* the flag for its chain until its last member has issued, and a
//! chain only starts when everything its members wait for, outside the chain, has issued
//! (so a started chain always finishes). Should the lock leave nothing to issue (a chain
//! whose `.X` reads a value computed from its own `.CC` result through another chain),
//! the block is scheduled again with the flag as an ordinary register. The priorities
//! still count the flag's edges in input order (a chain's path runs on through the chains
//! after it): the flag serialises the chains, and without that a block of many chains
//! (rodinia's `GICOV_kernel`, four pointer bumps a loop) put its other work first and
//! ended on the chains' latencies. So ready chains go in input order, and only a chain
//! that is not ready lets a later one pass it. Trade-off: a chain holds the flag across
//! the cycles between its write and its read, as before.
//!
//! **Priority**: the critical path, the longest latency-weighted path from an instruction to
//! the end of its block. The scheduler walks cycles: at each one it issues, among the
//! instructions whose predecessors are issued and whose operands are ready, the one with the
//! longest path (ties: the earlier in the input); when none is ready it moves to the cycle the
//! first becomes ready. So long-latency loads, MUFU, FP64 and conversions start early and
//! independent work fills their shadow. Register pressure does not matter here (allocation is
//! done), and the order is deterministic.

use super::model::{
    self, access, fixed_latency, is_fence, latency, leaders, Access, Regs, CC, NUM_RES,
};
use crate::sm50::{Field, Inst, MemAccess, MemSpace};

/// Which memory a load or store touches, for the ordering rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    Global,
    Local,
    Shared,
    /// Generic addressing (`LD`, `ST`): may be any of the above.
    Generic,
}

/// How an instruction takes part in memory ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mem {
    None,
    Load(Space),
    Store(Space),
}

pub(crate) fn mem(inst: &Inst) -> Mem {
    let p = inst.info().props;
    // Textures and surfaces read or write global memory through the texture unit.
    let space = match p.space {
        MemSpace::Generic => Space::Generic,
        MemSpace::Local => Space::Local,
        MemSpace::Shared => Space::Shared,
        MemSpace::Global | MemSpace::Texture | MemSpace::Surface => Space::Global,
        MemSpace::Const | MemSpace::None => return Mem::None,
    };
    match p.access {
        MemAccess::Load => Mem::Load(space),
        MemAccess::Store => Mem::Store(space),
        // A surface reduction or atomic reads and writes: ordered as a store. Atomics and
        // reductions in memory are fences (`is_fence`), ordered against everything.
        MemAccess::Atomic if p.space == MemSpace::Surface => Mem::Store(space),
        MemAccess::Atomic | MemAccess::Query | MemAccess::None => Mem::None,
    }
}

/// Whether `inst` is a plain load or store (`[Ra+off]`) of global, generic, local or shared
/// memory.
fn plain_access(inst: &Inst) -> bool {
    let p = inst.info().props;
    matches!(p.access, MemAccess::Load | MemAccess::Store)
        && matches!(
            p.space,
            MemSpace::Global | MemSpace::Generic | MemSpace::Local | MemSpace::Shared
        )
}

/// Whether `inst` is a strong access (see the module notes): a load with cache mode `.CV`
/// or a store with `.WT`, field value 3 in both of their cache enums.
pub(crate) fn strong(inst: &Inst) -> bool {
    let may = plain_access(inst)
        && matches!(
            inst.info().props.space,
            MemSpace::Global | MemSpace::Generic
        );
    may && inst.get(Field::Cache) == Some(3)
}

/// Whether two memory accesses must keep their order.
pub(crate) fn mem_conflict(a: Mem, b: Mem) -> bool {
    match (a, b) {
        (Mem::Store(x), Mem::Store(y) | Mem::Load(y)) | (Mem::Load(x), Mem::Store(y)) => {
            may_alias(x, y)
        }
        _ => false,
    }
}

/// The base register, displacement and width in bytes of a plain load or store
/// (`[Ra+off]`, any space), with whether the address is 64-bit (`.E`); `None` for anything
/// else (texture fetches, an unknown size).
pub(crate) fn address(inst: &Inst) -> Option<(u64, i64, i64, bool)> {
    if !plain_access(inst) {
        return None;
    }
    let info = inst.info();
    // The displacement's width, and whether size 7 is `.U.128` (LD, LDG).
    let off_bits = info.fields.iter().find(|f| f.field == Field::Off)?.len;
    let u128_load = info.props.access == MemAccess::Load
        && matches!(info.props.space, MemSpace::Global | MemSpace::Generic);
    let size = match inst.get(Field::Size)? {
        0 | 1 => 1,
        2 | 3 => 2,
        4 => 4,
        5 => 8,
        6 => 16,
        7 if u128_load => 16, // .U.128
        _ => return None,
    };
    let off = crate::sm50::rt::sext(inst.get(Field::Off)?, off_bits) as i64;
    let wide = inst.get(Field::E) == Some(1);
    Some((inst.get(Field::Ra)?, off, size, wide))
}

/// The base registers of memory accesses `i` and `j` when both are plain loads or stores of
/// the same state space off the same base register (pair, for `.E`) with byte ranges that do
/// not overlap: then they touch different bytes unless something between them rewrites one
/// of those registers (the caller's check). `None` otherwise. RZ as the base gives no
/// register (it is the same value everywhere). A range, not a list: this runs for every
/// candidate pair of a block's memory accesses.
fn apart_off_one_base(insts: &[Inst], i: usize, j: usize) -> Option<std::ops::Range<usize>> {
    let space = |m: Mem| match m {
        Mem::Load(s) | Mem::Store(s) => Some(s),
        Mem::None => None,
    };
    let (a, b) = (space(mem(&insts[i])), space(mem(&insts[j])));
    if a.is_none() || a != b {
        return None;
    }
    let (Some((ra, oi, si, wi)), Some((rb, oj, sj, wj))) = (address(&insts[i]), address(&insts[j]))
    else {
        return None;
    };
    if ra != rb || wi != wj || !(oi + si <= oj || oj + sj <= oi) {
        return None;
    }
    let ra = ra as usize;
    Some(match (ra, wi) {
        (255, _) => 0..0,
        (_, true) => ra..ra + 2,
        (_, false) => ra..ra + 1,
    })
}

/// Whether memory accesses `i` and `j` (`i` before `j` in one block) provably touch
/// different bytes of one state space: [`apart_off_one_base`], and neither `i` nor anything
/// between them writes the base. (The definition; [`candidate_preds`] decides the same from
/// its table of latest writers.)
#[cfg(test)]
fn same_space_disjoint(insts: &[Inst], acc: &[Access], i: usize, j: usize) -> bool {
    let Some(base) = apart_off_one_base(insts, i, j) else {
        return false;
    };
    !acc[i..j]
        .iter()
        .any(|a| a.defs.iter().any(|d| base.contains(d)))
}

/// Latency of the edge `i → j`, or `None` when `j` may go before `i`.
#[cfg(test)]
fn edge(insts: &[Inst], acc: &[Access], i: usize, j: usize) -> Option<u32> {
    let (mi, mj) = (mem(&insts[i]), mem(&insts[j]));
    let mem_order = if strong(&insts[i]) || strong(&insts[j]) {
        match (mi, mj) {
            (Mem::Load(x) | Mem::Store(x), Mem::Load(y) | Mem::Store(y)) => may_alias(x, y),
            _ => false,
        }
    } else {
        mem_conflict(mi, mj) && !same_space_disjoint(insts, acc, i, j)
    };
    match (edge_without_memory(insts, acc, i, j), mem_order) {
        (l, false) => l,
        (l, true) => Some(l.unwrap_or(1)),
    }
}

/// [`edge`] less its memory rule, which [`candidate_preds`] decides.
fn edge_without_memory(insts: &[Inst], acc: &[Access], i: usize, j: usize) -> Option<u32> {
    let (a, b) = (&acc[i], &acc[j]);
    let mut lat: Option<u32> = None;
    let mut need = |l: u32| lat = Some(lat.map_or(l, |x| x.max(l)));
    if i == 0 || is_fence(&insts[i]) || is_fence(&insts[j]) {
        need(1);
    }
    for &r in &b.uses {
        if a.defs.contains(&r) {
            if insts[i].info().variable_latency {
                need(latency(&insts[i]) as u32);
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
    lat
}

/// Index of a memory space in the per-space tables of [`candidate_preds`].
fn space_index(s: Space) -> usize {
    match s {
        Space::Global => 0,
        Space::Local => 1,
        Space::Shared => 2,
        Space::Generic => 3,
    }
}

const SPACES: [Space; 4] = [Space::Global, Space::Local, Space::Shared, Space::Generic];

/// Whether accesses to spaces `x` and `y` may touch the same memory.
fn may_alias(x: Space, y: Space) -> bool {
    x == y || x == Space::Generic || y == Space::Generic
}

/// Latency of a read of `r` after `inst` writes it (the read-after-write part of [`edge`]).
fn raw_latency(inst: &Inst, r: usize) -> u32 {
    if inst.info().variable_latency {
        latency(inst) as u32
    } else {
        fixed_latency(r)
    }
}

/// For each instruction `j` of the block `insts[start..end]`, calls `f(j, preds)` with the
/// instructions `i < j` (all indices into `insts`, sorted, no duplicates) that get an edge
/// `i → j` in the block's dependency graph. The full graph has an edge for every pair that
/// [`edge`] relates, quadratic in the block's length; this gives only the edges no path of
/// other edges implies. An edge `i → j` of latency `l` is left out only where the full graph
/// has `i → k → j` with latencies summing to at least `l` (every latency is at least 1), so
/// the scheduler sees the same readiness, earliest cycles and critical paths as with every
/// edge. Per reason:
/// * fences: a fence depends on every instruction since the previous fence (or instruction
///   0), every instruction on the latest fence before it;
/// * a register write depends on the latest earlier write and on the reads since then;
/// * a register read depends on the earlier writes not yet *covered*: a write `w'` is
///   covered by a later write `w` of the same register when `1 + raw_latency(w)` is at least
///   `raw_latency(w')` (the path `w' → w → reader` is as long);
/// * memory: since accesses off one base may pass each other, one store does not stand for
///   the stores before it, so an access is checked against *every* store (and a store against
///   every load) of the spaces it may alias since those spaces' latest *memory fence*, and
///   depends on each it may touch, and on the fences. These are the `mem` predecessors:
///   edges of latency 1 that [`edge_without_memory`] does not give. To stay linear, an
///   access that would check more than [`MEM_WINDOW`] earlier ones becomes the memory fence
///   of every space it may alias: it depends on all of them, and later accesses of those
///   spaces depend on it. That keeps order (never reorders what the full graph orders) but
///   can order more than the full graph, in long runs of memory accesses only. A memory
///   fence depends on every earlier access of those spaces, loads included (a load that
///   became one used to skip the earlier loads, which later stores then no longer saw). A
///   strong access (`.CV` load, `.WT` store) is checked like a store against loads and
///   stores, joins the stores for later accesses (loads included) to check, and is never
///   exempt as same-base disjoint.
fn candidate_preds(
    insts: &[Inst],
    acc: &[Access],
    start: usize,
    end: usize,
    regs: &mut RegTables,
    window: usize,
    mut f: impl FnMut(usize, &[usize], &[usize]),
) {
    // The latest fence, or instruction 0 (which every later instruction follows too).
    let mut last_fence: Option<usize> = None;
    let RegTables {
        writers,
        last_writer,
        readers,
        stores,
        loads,
        cand,
        mem_preds,
        ..
    } = regs;
    // Per space: stores and loads since its memory fence (`stores`, `loads`), and that fence.
    let mut mem_fence: [Option<usize>; 4] = [None; 4];
    for j in start..end {
        cand.clear();
        mem_preds.clear();
        let fence = is_fence(&insts[j]);
        if fence {
            cand.extend(last_fence.unwrap_or(start)..j);
        } else {
            cand.extend(last_fence);
        }
        let a = &acc[j];
        // (The lists are short, mostly one or two entries: copied element by element, where
        // `extend_from_slice` called `memcpy` for each.)
        for &r in &a.uses {
            cand.extend(writers[r].iter().copied());
        }
        for &r in &a.defs {
            cand.extend(readers[r].iter().copied());
            cand.extend(last_writer[r]);
        }
        let m = mem(&insts[j]);
        let mut becomes_mem_fence = false;
        if let Mem::Load(s) | Mem::Store(s) = m {
            let is_store = matches!(m, Mem::Store(_));
            // A strong access checks loads too, and is checked by later loads (it is kept
            // with the stores), never exempt as same-base disjoint.
            let is_strong = strong(&insts[j]);
            let check_loads = is_store || is_strong;
            let aliased = || SPACES.into_iter().filter(move |&x| may_alias(x, s));
            let earlier: usize = aliased()
                .map(|x| {
                    let k = space_index(x);
                    stores[k].len() + if check_loads { loads[k].len() } else { 0 }
                })
                .sum();
            becomes_mem_fence = earlier > window;
            for x in aliased() {
                let k = space_index(x);
                mem_preds.extend(mem_fence[k]);
                let loads_k: &[usize] = if check_loads || becomes_mem_fence {
                    &loads[k]
                } else {
                    &[]
                };
                for &i in stores[k].iter().chain(loads_k) {
                    debug_assert!(
                        becomes_mem_fence
                            || is_strong
                            || strong(&insts[i])
                            || mem_conflict(mem(&insts[i]), m)
                    );
                    let apart = !becomes_mem_fence
                        && !is_strong
                        && !strong(&insts[i])
                        && apart_off_one_base(insts, i, j).is_some_and(|mut base| {
                            base.all(|r| last_writer[r].map_or(true, |w| w < i))
                        });
                    if !apart {
                        mem_preds.push(i);
                    }
                }
            }
            mem_preds.sort_unstable();
            mem_preds.dedup();
            cand.extend(mem_preds.iter().copied());
        }
        cand.sort_unstable();
        cand.dedup();
        f(j, cand, mem_preds);

        // What `j` adds for the instructions after it.
        if fence || j == 0 {
            last_fence = Some(j);
        }
        for &r in &a.uses {
            readers[r].push(j);
        }
        for &r in &a.defs {
            readers[r].clear();
            last_writer[r] = Some(j);
            let lat = raw_latency(&insts[j], r);
            writers[r].retain(|&w| 1 + lat < raw_latency(&insts[w], r));
            writers[r].push(j);
        }
        if let Mem::Load(s) | Mem::Store(s) = m {
            if becomes_mem_fence {
                for x in SPACES.into_iter().filter(|&x| may_alias(x, s)) {
                    let k = space_index(x);
                    stores[k].clear();
                    loads[k].clear();
                    mem_fence[k] = Some(j);
                }
            } else if matches!(m, Mem::Store(_)) || strong(&insts[j]) {
                stores[space_index(s)].push(j);
            } else {
                loads[space_index(s)].push(j);
            }
        }
    }
    for v in stores.iter_mut().chain(loads.iter_mut()) {
        v.clear();
    }
    regs.clear(&acc[start..end]);
}

/// How many earlier stores (and, for a store, loads) an access is checked against before it
/// becomes a memory fence instead (see [`candidate_preds`]).
const MEM_WINDOW: usize = 64;

/// The per-register tables of [`candidate_preds`] (indexed by [`super::Res`]), and the other
/// buffers it and [`schedule_block`] fill per block: allocated once per function and cleared
/// after (or, `succs`, before) each block, since most blocks are short. (Fresh vectors per
/// block were a visible share of the scheduler's time, in allocation and growth.)
struct RegTables {
    /// Writes not yet covered by a later write, for later reads.
    writers: Vec<Vec<usize>>,
    last_writer: Vec<Option<usize>>,
    /// Reads since the latest write.
    readers: Vec<Vec<usize>>,
    /// Per space: stores and loads since its memory fence (empty between blocks).
    stores: [Vec<usize>; 4],
    loads: [Vec<usize>; 4],
    /// One instruction's candidate and memory predecessors.
    cand: Vec<usize>,
    mem_preds: Vec<usize>,
    /// The successor lists of a block's instructions (local indices); a block of `n`
    /// instructions clears and uses the first `n`.
    succs: Vec<Vec<(usize, u32)>>,
    /// [`schedule_block_into`]'s per-instruction arrays and ready heaps (emptied and sized
    /// by each block).
    npreds: Vec<usize>,
    height: Vec<u32>,
    earliest: Vec<u32>,
    waiting: std::collections::BinaryHeap<std::cmp::Reverse<(u32, std::cmp::Reverse<u32>, usize)>>,
    now: std::collections::BinaryHeap<(u32, std::cmp::Reverse<usize>)>,
    /// Set while a function is being scheduled on these tables (see [`schedule_with`]).
    in_use: bool,
}

impl RegTables {
    fn new() -> RegTables {
        RegTables {
            writers: vec![Vec::new(); NUM_RES],
            last_writer: vec![None; NUM_RES],
            readers: vec![Vec::new(); NUM_RES],
            stores: Default::default(),
            loads: Default::default(),
            cand: Vec::new(),
            mem_preds: Vec::new(),
            succs: Vec::new(),
            npreds: Vec::new(),
            height: Vec::new(),
            earliest: Vec::new(),
            waiting: Default::default(),
            now: Default::default(),
            in_use: false,
        }
    }

    /// Forget what the instructions with accesses `acc` recorded.
    fn clear(&mut self, acc: &[Access]) {
        for a in acc {
            for &r in a.uses.iter().chain(&a.defs) {
                self.writers[r].clear();
                self.last_writer[r] = None;
                self.readers[r].clear();
            }
        }
    }
}

/// The order of one block `insts[start..end]` (indices into `insts`).
#[cfg(test)]
fn schedule_block(
    insts: &[Inst],
    acc: &[Access],
    start: usize,
    end: usize,
    regs: &mut RegTables,
    window: usize,
) -> Vec<usize> {
    let mut order = Vec::new();
    let done = schedule_block_into(insts, acc, start, end, regs, window, None, &mut order);
    debug_assert!(done, "without carry chains a block always schedules");
    order
}

/// `table` taken out of the tables (to be put back when the block is done), as `n` zeros.
fn zeroed<T: Copy + Default>(table: &mut Vec<T>, n: usize) -> Vec<T> {
    let mut v = std::mem::take(table);
    v.clear();
    v.resize(n, T::default());
    v
}

/// [`schedule_block`], the order appended to `order`. Its working arrays are `regs`'s,
/// emptied and sized for the block here (a fresh vector of each per block was an
/// allocation and a free each, for every block of every function).
///
/// With `chains` (the block's carry chains, [`cc_chains`]), `acc` must be the accesses
/// without the carry flag: the graph then orders the carry flag by the chains' own edges,
/// and a chain, once started, owns the flag until its last member issues (see the module
/// notes). Returns false, with `order` as it was, when that lock leaves nothing to issue
/// (the caller schedules the block again without chains); always true without chains.
#[allow(clippy::too_many_arguments)]
fn schedule_block_into(
    insts: &[Inst],
    acc: &[Access],
    start: usize,
    end: usize,
    regs: &mut RegTables,
    window: usize,
    chains: Option<&CcChains>,
    order: &mut Vec<usize>,
) -> bool {
    use std::cmp::Reverse;
    let n = end - start;
    // Edges as successor lists (local indices) and predecessor counts.
    let mut npreds = zeroed(&mut regs.npreds, n);
    // (Taken out of `regs` while `candidate_preds` borrows it, and put back at the end.)
    let mut all_succs = std::mem::take(&mut regs.succs);
    if all_succs.len() < n {
        all_succs.resize(n, Vec::new());
    }
    let succs = &mut all_succs[..n];
    for s in succs.iter_mut() {
        s.clear();
    }
    candidate_preds(
        insts,
        acc,
        start,
        end,
        regs,
        window,
        |j, preds, mem_preds| {
            for &i in preds {
                let ordered = mem_preds.binary_search(&i).is_ok();
                let l = edge_without_memory(insts, acc, i, j);
                if let Some(l) = if ordered { Some(l.unwrap_or(1)) } else { l } {
                    npreds[j - start] += 1;
                    succs[i - start].push((j - start, l));
                }
            }
        },
    );
    // The carry chains' own edges, and what each chain member waits for.
    let mut preds_of: Vec<Vec<usize>> = Vec::new();
    if let Some(c) = chains {
        for &(i, j, l) in &c.edges {
            npreds[j] += 1;
            succs[i].push((j, l));
        }
        preds_of = vec![Vec::new(); n];
        for (i, s) in succs.iter().enumerate() {
            for &(j, _) in s {
                if c.chain_of[j].is_some() {
                    preds_of[j].push(i);
                }
            }
        }
    }
    // Critical path to the end of the block.
    let mut height = zeroed(&mut regs.height, n);
    for i in (0..n).rev() {
        height[i] = succs[i]
            .iter()
            .map(|&(j, l)| l + height[j])
            .max()
            .unwrap_or(0);
        if let Some(j) = chains.and_then(|c| c.then[i]) {
            height[i] = height[i].max(1 + height[j]);
        }
    }
    let mut left = npreds;
    let mut earliest = zeroed(&mut regs.earliest, n);
    let first = order.len();
    order.reserve(n);
    let mut t = 0u32;
    // Instructions whose predecessors are all issued: `waiting` by the cycle they become
    // ready (their `earliest` is final then), `now` those ready at `t` by priority.
    let mut waiting = std::mem::take(&mut regs.waiting);
    waiting.clear();
    waiting.extend(
        (0..n)
            .filter(|&j| left[j] == 0)
            .map(|j| Reverse((0, Reverse(height[j]), j))),
    );
    let mut now = std::mem::take(&mut regs.now);
    now.clear();
    // The carry lock: the chain that owns the flag, and each chain's members not issued.
    let mut lock: Option<usize> = None;
    let mut chain_left: Vec<usize> =
        chains.map_or_else(Vec::new, |c| c.members.iter().map(|m| m.len()).collect());
    let mut issued = vec![false; if chains.is_some() { n } else { 0 }];
    let mut held: Vec<(u32, Reverse<usize>)> = Vec::new();
    let mut stuck = false;
    while order.len() - first < n {
        while let Some(&Reverse((e, _, j))) = waiting.peek() {
            if e > t {
                break;
            }
            waiting.pop();
            now.push((height[j], Reverse(j)));
        }
        // Highest priority among those ready now that the carry lock lets issue; else the
        // first to become ready.
        let mut pick = None;
        while let Some((h, Reverse(j))) = now.pop() {
            let free = match chains.and_then(|c| c.chain_of[j].map(|k| (c, k))) {
                None => true,
                Some((_, k)) if lock == Some(k) => true,
                Some((c, k)) => {
                    lock.is_none()
                        && c.members[k].iter().all(|&m| {
                            preds_of[m]
                                .iter()
                                .all(|&p| issued[p] || c.chain_of[p] == Some(k))
                        })
                }
            };
            if free {
                pick = Some(j);
                break;
            }
            held.push((h, Reverse(j)));
        }
        now.extend(held.drain(..));
        let pick = match pick {
            Some(j) => j,
            None if chains.is_none() => {
                let Reverse((_, _, j)) = waiting
                    .pop()
                    .expect("a block's dependency graph is acyclic");
                j
            }
            None => match waiting.peek() {
                // Nothing may issue now: on to the cycle the next becomes ready.
                Some(&Reverse((e, _, _))) => {
                    t = t.max(e);
                    continue;
                }
                None => {
                    stuck = true;
                    break;
                }
            },
        };
        t = t.max(earliest[pick]);
        order.push(start + pick);
        if let Some(c) = chains {
            issued[pick] = true;
            if let Some(k) = c.chain_of[pick] {
                chain_left[k] -= 1;
                lock = (chain_left[k] > 0).then_some(k);
            }
        }
        for &(j, l) in &succs[pick] {
            left[j] -= 1;
            earliest[j] = earliest[j].max(t + l);
            if left[j] == 0 {
                waiting.push(Reverse((earliest[j], Reverse(height[j]), j)));
            }
        }
        t += 1;
    }
    if stuck {
        order.truncate(first);
        now.clear();
        waiting.clear();
    }
    regs.succs = all_succs;
    regs.npreds = left;
    regs.height = height;
    regs.earliest = earliest;
    regs.waiting = waiting;
    regs.now = now;
    !stuck
}

/// The carry chains of one block ([`cc_chains`]; local indices).
struct CcChains {
    /// Per instruction: the chain it belongs to (`None`: it leaves the carry flag alone).
    chain_of: Vec<Option<usize>>,
    /// Per chain: its members in input order.
    members: Vec<Vec<usize>>,
    /// The edges that order the flag: member to next member of a chain (the write's latency,
    /// or 1 after a read), and the pins of a chain that reads a carry from before the block
    /// (before every other chain) and of the last one when the flag is live after the block
    /// (after every other chain).
    edges: Vec<(usize, usize, u32)>,
    /// Per instruction: the first member of the next chain in input order, for the last
    /// member of a chain. The priorities count the chains in input order (as the carry
    /// flag's own edges would), so ready chains still go in that order and the flag's
    /// serialisation stays on the critical path; only readiness is relaxed.
    then: Vec<Option<usize>>,
}

/// The carry chains of the block `insts[start..end]`, when it has two or more (with one,
/// the flag orders nothing the chain's own edges would not). A chain starts at an
/// instruction that writes the carry flag without reading it and takes every later
/// instruction that reads the flag (an `.X` add, `LEA.HI.X`, `ISETP.X`), up to the next
/// such write; the reads before the block's first write form a chain of their own.
fn cc_chains(
    insts: &[Inst],
    acc: &[Access],
    start: usize,
    end: usize,
    live_out: bool,
) -> Option<CcChains> {
    let n = end - start;
    let mut chain_of = vec![None; n];
    let mut members: Vec<Vec<usize>> = Vec::new();
    let mut live_in = false;
    for j in 0..n {
        let a = &acc[start + j];
        let (reads, writes) = (a.uses.contains(&CC), a.defs.contains(&CC));
        if !reads && !writes {
            continue;
        }
        if !reads || members.is_empty() {
            live_in |= reads;
            members.push(Vec::new());
        }
        let k = members.len() - 1;
        members[k].push(j);
        chain_of[j] = Some(k);
    }
    if members.len() < 2 {
        return None;
    }
    let mut edges = Vec::new();
    for m in &members {
        for w in m.windows(2) {
            let l = if acc[start + w[0]].defs.contains(&CC) {
                raw_latency(&insts[start + w[0]], CC)
            } else {
                1
            };
            edges.push((w[0], w[1], l));
        }
    }
    let (first, last) = (&members[0], &members[members.len() - 1]);
    for m in &members[1..members.len() - 1] {
        if live_in {
            edges.push((first[first.len() - 1], m[0], 1));
        }
        if live_out {
            edges.push((m[m.len() - 1], last[0], 1));
        }
    }
    if live_in || live_out {
        edges.push((first[first.len() - 1], last[0], 1));
    }
    let mut then = vec![None; n];
    for w in members.windows(2) {
        then[w[0][w[0].len() - 1]] = Some(w[1][0]);
    }
    Some(CcChains {
        chain_of,
        members,
        edges,
        then,
    })
}

/// Per instruction: whether the carry flag may be read after it by an instruction of a
/// later block before anything writes it (a backward dataflow over the model's successors,
/// [`model::successors`]). Only block ends matter to [`cc_chains`].
fn cc_live_after(insts: &[Inst], targets: &[Option<usize>], acc: &[Access]) -> Vec<bool> {
    let n = insts.len();
    if !acc.iter().any(|a| a.uses.contains(&CC)) {
        return vec![false; n];
    }
    let succ = model::successors(insts, targets);
    // Live before each instruction; iterate to the fixpoint (the flag is rarely live).
    let mut live_before = vec![false; n];
    let mut live_after = vec![false; n];
    loop {
        let mut changed = false;
        for k in (0..n).rev() {
            let after = succ[k].iter().any(|&s| live_before[s]);
            let a = &acc[k];
            let before = a.uses.contains(&CC) || (after && !a.defs.contains(&CC));
            if after != live_after[k] || before != live_before[k] {
                changed = true;
                live_after[k] = after;
                live_before[k] = before;
            }
        }
        if !changed {
            return live_after;
        }
    }
}

/// The new order of `insts` (`order[new] = old`): each block list-scheduled in place.
pub fn schedule(insts: &[Inst], targets: &[Option<usize>]) -> Vec<usize> {
    let acc: Vec<Access> = insts.iter().map(access).collect();
    schedule_with(insts, targets, &leaders(insts, targets), &acc)
}

/// [`schedule`] given [`leaders`] and [`access`] of every instruction.
pub(crate) fn schedule_with(
    insts: &[Inst],
    targets: &[Option<usize>],
    lead: &[bool],
    acc: &[Access],
) -> Vec<usize> {
    // One set of tables per thread, kept from function to function: the vectors keep their
    // room, where fresh tables per function allocated each register's lists again. Every
    // block leaves the tables empty (see [`candidate_preds`] and [`schedule_block_into`]);
    // `in_use` stays set when a block did not finish (a panic), and then the tables are
    // made anew rather than trusted.
    thread_local! {
        static TABLES: std::cell::RefCell<RegTables> = std::cell::RefCell::new(RegTables::new());
    }
    TABLES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut regs) => {
            if regs.in_use {
                *regs = RegTables::new();
            }
            regs.in_use = true;
            let order = schedule_with_tables(insts, targets, lead, acc, &mut regs);
            regs.in_use = false;
            order
        }
        Err(_) => schedule_with_tables(insts, targets, lead, acc, &mut RegTables::new()),
    })
}

/// [`schedule_with`] on the tables `regs` (empty, and left empty).
fn schedule_with_tables(
    insts: &[Inst],
    targets: &[Option<usize>],
    lead: &[bool],
    acc: &[Access],
    regs: &mut RegTables,
) -> Vec<usize> {
    let mut order = Vec::with_capacity(insts.len());
    let live = cc_live_after(insts, targets, acc);
    // The accesses without the carry flag, for the blocks with carry chains.
    let mut acc_nocc: Vec<Access> = Vec::new();
    let mut start = 0;
    while start < insts.len() {
        let mut end = start + 1;
        while end < insts.len() && !lead[end] {
            end += 1;
        }
        let chains = cc_chains(insts, acc, start, end, live[end - 1]);
        if chains.is_some() && acc_nocc.is_empty() {
            acc_nocc = acc.iter().map(without_cc).collect();
        }
        let relaxed = chains.as_ref().is_some_and(|c| {
            schedule_block_into(
                insts,
                &acc_nocc,
                start,
                end,
                regs,
                MEM_WINDOW,
                Some(c),
                &mut order,
            )
        });
        if !relaxed {
            schedule_block_into(insts, acc, start, end, regs, MEM_WINDOW, None, &mut order);
        }
        start = end;
    }
    order
}

/// `a` without the carry flag.
fn without_cc(a: &Access) -> Access {
    let strip = |r: &Regs| r.iter().copied().filter(|&x| x != CC).collect();
    Access {
        uses: strip(&a.uses),
        defs: strip(&a.defs),
        late_uses: strip(&a.late_uses),
    }
}

/// Apply an order from [`schedule`] to instructions and their branch targets. Targets are
/// block leaders, which keep their index, so only the branch's own position moves.
pub fn permute(
    insts: &[Inst],
    targets: &[Option<usize>],
    order: &[usize],
) -> (Vec<Inst>, Vec<Option<usize>>) {
    permute_with_capacity(insts, targets, order, order.len())
}

/// [`permute`] into vectors with room for at least `cap` entries (the layout pads the
/// sequence afterwards, and growing a full vector copies it).
pub(crate) fn permute_with_capacity(
    insts: &[Inst],
    targets: &[Option<usize>],
    order: &[usize],
    cap: usize,
) -> (Vec<Inst>, Vec<Option<usize>>) {
    let mut new_insts = Vec::with_capacity(cap.max(order.len()));
    new_insts.extend(order.iter().map(|&o| insts[o]));
    let mut new_targets = Vec::with_capacity(cap.max(order.len()));
    new_targets.extend(order.iter().map(|&o| targets.get(o).copied().flatten()));
    (new_insts, new_targets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm50::Form;

    fn reg(form: Form, rd: u64, ra: u64) -> Inst {
        Inst::new(form).with(Field::Rd, rd).with(Field::Ra, ra)
    }

    /// The list schedule over every edge [`edge`] gives, with linear scans for the ready
    /// instructions: the definition [`schedule_block`]'s pruned graph and heaps must match.
    fn schedule_block_full_graph(
        insts: &[Inst],
        acc: &[Access],
        start: usize,
        end: usize,
    ) -> Vec<usize> {
        let n = end - start;
        let mut left = vec![0usize; n];
        let mut succs: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
        for (j, lj) in left.iter_mut().enumerate() {
            for (i, si) in succs.iter_mut().enumerate().take(j) {
                if let Some(l) = edge(insts, acc, start + i, start + j) {
                    *lj += 1;
                    si.push((j, l));
                }
            }
        }
        let mut height = vec![0u32; n];
        for i in (0..n).rev() {
            height[i] = succs[i]
                .iter()
                .map(|&(j, l)| l + height[j])
                .max()
                .unwrap_or(0);
        }
        let mut earliest = vec![0u32; n];
        let mut done = vec![false; n];
        let mut order = Vec::new();
        let mut t = 0u32;
        while order.len() < n {
            let ready = (0..n).filter(|&j| !done[j] && left[j] == 0);
            let pick = ready
                .clone()
                .filter(|&j| earliest[j] <= t)
                .max_by_key(|&j| (height[j], std::cmp::Reverse(j)))
                .or_else(|| ready.min_by_key(|&j| (earliest[j], std::cmp::Reverse(height[j]), j)))
                .unwrap();
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

    /// Random blocks over few registers and predicates, mixing fixed- and variable-latency
    /// ALU work, loads and stores of every space, and fences: the pruned dependency graph
    /// schedules exactly as the full one (same order), with and without instruction 0.
    #[test]
    fn pruned_graph_schedules_as_full_graph() {
        use crate::sm50::FieldKind;
        let forms = [
            Form::IADD_R,
            Form::IADD_R,
            Form::IADD_R,
            Form::ISETP_R,
            Form::IMUL_R,
            Form::DADD_R,
            Form::LDG,
            Form::STG,
            Form::LDS,
            Form::STS,
            Form::LDL,
            Form::STL,
            Form::LD,
            Form::ST,
            Form::LDC,
            Form::S2R,
            Form::BAR,
            Form::MEMBAR,
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        // One set of tables for every block, as `schedule` uses them.
        let mut regs = RegTables::new();
        let mut compared = 0;
        for round in 0..400 {
            let len = 1 + rand(if round % 10 == 0 { 120 } else { 40 }) as usize;
            let insts: Vec<Inst> = (0..len)
                .map(|_| {
                    let mut inst = Inst::new(forms[rand(forms.len() as u64) as usize]);
                    for k in 0..inst.info().fields.len() {
                        let fi = &inst.info().fields[k];
                        match fi.kind {
                            FieldKind::Reg => {
                                let r = rand(7);
                                inst.set(fi.field, if r == 6 { 255 } else { r });
                            }
                            FieldKind::Pred if fi.field != Field::Pg || rand(3) == 0 => {
                                let p = rand(4);
                                inst.set(fi.field, if p == 3 { 7 } else { p });
                            }
                            _ => {}
                        }
                    }
                    // Small displacements and sizes off the few base registers, so that
                    // same-base disjointness (and its absence) comes up often.
                    if inst.get(Field::Off).is_some() && inst.get(Field::Size).is_some() {
                        inst.set(Field::Off, 4 * rand(4));
                        inst.set(Field::Size, [0, 4, 5, 6][rand(4) as usize]);
                    }
                    // Cache modes, `.CV`/`.WT` (strong accesses) among them.
                    if inst.get(Field::Cache).is_some() {
                        inst.set(Field::Cache, rand(4));
                    }
                    inst
                })
                .collect();
            let acc: Vec<Access> = insts.iter().map(access).collect();
            // The whole sequence as one block, and a block starting after instruction 0.
            for start in [0, 1.min(len - 1)] {
                assert_eq!(
                    schedule_block(&insts, &acc, start, len, &mut regs, usize::MAX),
                    schedule_block_full_graph(&insts, &acc, start, len),
                    "round {round}, block from {start}"
                );
                // With a small window, accesses become memory fences: the order may differ
                // from the full graph's, but it must keep every edge of it.
                let order = schedule_block(&insts, &acc, start, len, &mut regs, 2);
                let mut pos = vec![0; len];
                for (p, &o) in order.iter().enumerate() {
                    pos[o] = p;
                }
                for j in start..len {
                    for i in start..j {
                        if edge(&insts, &acc, i, j).is_some() {
                            assert!(pos[i] < pos[j], "round {round}: {i} -> {j} reversed");
                        }
                    }
                }
                compared += 1;
            }
        }
        assert_eq!(compared, 800);
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

    /// `IADD rd.CC, ra, rb` (`x`: `IADD.X rd, ra, rb`, which reads the carry).
    fn add(rd: u64, ra: u64, rb: u64, x: bool) -> Inst {
        reg(Form::IADD_R, rd, ra)
            .with(Field::Rb, rb)
            .with(if x { Field::X } else { Field::Cc }, 1)
    }

    /// A copy loop's tail: the load's pointer pair was written after the store's, whose
    /// pair must follow the store. With carry chains the load's pair goes first, into the
    /// load's shadow, and no pair interleaves with the other; with the carry as an ordinary
    /// register (the fallback) both pairs stay behind the store.
    #[test]
    fn carry_chains_reorder_whole_pairs() {
        let ldg = Inst::new(Form::LDG)
            .with(Field::Rd, 9)
            .with(Field::Ra, 10)
            .with(Field::E, 1)
            .with(Field::Size, 4);
        let stg = Inst::new(Form::STG)
            .with(Field::Rd, 9)
            .with(Field::Ra, 2)
            .with(Field::E, 1)
            .with(Field::Size, 4);
        let insts = vec![
            reg(Form::IADD_R, 1, 255),
            ldg,
            stg,
            add(2, 2, 4, false),
            add(3, 3, 5, true),
            add(10, 10, 4, false),
            add(11, 11, 5, true),
        ];
        let order = schedule(&insts, &vec![None; insts.len()]);
        assert_eq!(order, vec![0, 1, 5, 6, 2, 3, 4]);
        let acc: Vec<Access> = insts.iter().map(access).collect();
        let mut regs = RegTables::new();
        let plain = schedule_block(&insts, &acc, 0, insts.len(), &mut regs, MEM_WINDOW);
        assert_eq!(plain, vec![0, 1, 2, 3, 4, 5, 6]);
    }

    /// Where the carry is live after the block (read by the next one), the chain that
    /// writes it last keeps its place after the others; where the block reads a carry from
    /// before it, that chain stays first.
    #[test]
    fn carry_chains_keep_live_carries_in_place() {
        // Block 0: two independent chains, the second one's carry read in block 1.
        let insts = vec![
            reg(Form::IADD_R, 1, 255),
            add(20, 21, 22, false),
            add(2, 2, 4, false),
            add(3, 3, 5, true),
            add(10, 10, 4, false),
            Inst::new(Form::BRA),
            add(11, 11, 5, true),
        ];
        let mut targets = vec![None; insts.len()];
        targets[5] = Some(6);
        let acc: Vec<Access> = insts.iter().map(access).collect();
        let live = cc_live_after(&insts, &targets, &acc);
        assert!(live[4] && live[5] && !live[3] && !live[6]);
        let c = cc_chains(&insts, &acc, 0, 6, live[5]).expect("three chains");
        assert_eq!(c.members, vec![vec![1], vec![2, 3], vec![4]]);
        assert!(c.edges.contains(&(1, 4, 1)) && c.edges.contains(&(3, 4, 1)));
        let order = schedule(&insts, &targets);
        let pos = |k: usize| order.iter().position(|&o| o == k).unwrap();
        assert!(pos(3) < pos(4), "{order:?}");
        // A block that reads a carry from before it: that chain stays first.
        let mut regs = RegTables::new();
        let mut order = Vec::new();
        // (Without the pin the new chain, the longer path, would go first.)
        let live_in = vec![
            reg(Form::IADD_R, 1, 255),
            add(11, 11, 5, true),
            add(20, 21, 22, false),
            add(23, 24, 25, true),
        ];
        let acc: Vec<Access> = live_in.iter().map(access).collect();
        let c = cc_chains(&live_in, &acc, 1, 4, false).expect("two chains");
        assert_eq!(c.members, vec![vec![0], vec![1, 2]]);
        assert!(c.edges.contains(&(0, 1, 1)), "{:?}", c.edges);
        assert!(schedule_block_into(
            &live_in,
            &acc.iter().map(without_cc).collect::<Vec<_>>(),
            1,
            4,
            &mut regs,
            MEM_WINDOW,
            Some(&c),
            &mut order,
        ));
        assert_eq!(order, vec![1, 2, 3]);
    }

    /// A chain whose `.X` reads a value computed from its own `.CC` result by an instruction
    /// outside it cannot start under the lock's rule: the block falls back to the carry as
    /// an ordinary register, which keeps the carry accesses in input order.
    #[test]
    fn carry_chains_fall_back_when_locked() {
        let insts = vec![
            reg(Form::IADD_R, 1, 255),
            add(2, 2, 4, false),
            reg(Form::IADD_R, 6, 2).with(Field::Rb, 7),
            add(3, 6, 5, true),
            add(10, 10, 4, false),
            add(11, 11, 5, true),
        ];
        let acc: Vec<Access> = insts.iter().map(access).collect();
        let c = cc_chains(&insts, &acc, 0, insts.len(), false).expect("two chains");
        let mut regs = RegTables::new();
        let mut order = vec![99];
        let nocc: Vec<Access> = acc.iter().map(without_cc).collect();
        let done = schedule_block_into(
            &insts,
            &nocc,
            0,
            insts.len(),
            &mut regs,
            MEM_WINDOW,
            Some(&c),
            &mut order,
        );
        assert!(!done);
        assert_eq!(order, vec![99], "a failed try leaves the order as it was");
        let order = schedule(&insts, &vec![None; insts.len()]);
        let pos = |k: usize| order.iter().position(|&o| o == k).unwrap();
        assert!(
            pos(1) < pos(3) && pos(3) < pos(4) && pos(4) < pos(5),
            "{order:?}"
        );
    }
}
