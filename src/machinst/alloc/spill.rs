//! Spilling before regalloc2: [`presplit`] lowers the number of values live at once to what
//! regalloc2's names and the register file hold, so that regalloc2 itself does not spill.
//!
//! Why. regalloc2 has 64 names per class (`machinst`'s essay). Where more values of a class
//! are live at one point (cub's radix-sort downsweep kernels), it splits and spills live
//! ranges by itself, and the class slices the allocator then falls back to spill far more than
//! the pressure needs (17.7 k instructions and 2.8 KiB of local memory on
//! `radixSortThrust.ptx`, where ptxas has 6.0 k), after several slow attempts.
//!
//! In: a [`VCode`] after edge splitting (predicates allocated), the [`Limits`] (per class, its
//! names less the fixed registers it must keep; all classes' names together, since scalars
//! overflow into the other classes; the 32-bit words of the register file), and the byte
//! offset of the spill area (`AllocOptions::spill_base`, rounded up to 16).
//! Out: the same code where, at every instruction, the values live (counted as regalloc2 does:
//! an early def also beside the uses, a late use also beside the defs) fit the limits, as far
//! as removing values that the instruction does not name can make them fit; and [`Spilled`]:
//! the bytes of local memory the pass used (its slots lie from the spill base up; regalloc2's
//! own slots, if it still spills, go above them) and how many stores, reloads and
//! rematerialisations it inserted.
//!
//! How. Rounds of: liveness; a forward walk over each block that keeps the set of values in
//! registers and, wherever it overflows the limits, *cuts* the live values the instruction
//! does not name whose next read is farthest away (Belady's rule; a value only live out of
//! the block counts as farther than any read in it; a value that can be rematerialised counts
//! as four times as far, since bringing it back costs one cheap instruction); then a rewrite:
//! a value cut anywhere is *spilled* everywhere: it keeps its register from its def to its
//! store (`STL` right after the def or, for a block parameter, at the top of the block) and to
//! its reads in the def's block up to its first cut, and every later read is renamed to a fresh
//! value loaded (`LDL`) before the first read in a block and after each cut. Values the
//! ISA can compute again from nothing ([`MachInst::rematerialisable`]: constants,
//! constant-bank words, thread indices) are not stored: the def is copied before the reads
//! instead, and dropped where nothing reads it any more. A reload or a rematerialised copy
//! remembers where its value comes from, so that a later round that cuts it again loads or
//! recomputes it again, never stores it a second time. Last, the slots share bytes
//! ([`share_slots`]): two slots take the same bytes unless one is live (between its store and
//! its last reload) at the other's store, as ptxas reuses its spill slots (cub's radix sort
//! spills hundreds of values, few of them live at once).
//!
//! Invariants: the code stays in SSA form (each reload is a fresh vreg defined once, and no
//! reload lives across a block boundary: a block's reads and edge arguments of a spilled value
//! use that block's own reloads); a slot is written once, by the store right after its value's
//! def, and every load of it is reached only through that def, hence after the store (each
//! round renames reads of the values it cuts, and the store reads the def, never a load: a
//! store reading a reload of its own slot was the bug of an earlier version, which renamed
//! the reads of every value with a slot in each round); a slot is aligned to its value's size
//! and the area is a multiple of 16 bytes; no store writes bytes that a slot live there holds.
//! Values defined by a terminator and predicates are
//! never cut.

use super::super::vcode::{for_each_field, BlockData};
use super::super::Terminator;
use super::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// How many values regalloc2 can hold in registers at one point.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Per class (scalars, pairs, quads): its names less its fixed registers.
    pub(super) class: [usize; 3],
    /// All classes' names together, less the fixed registers.
    pub(super) names: usize,
    /// 32-bit registers for values.
    pub(super) words: usize,
}

/// What [`presplit`] inserted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Spilled {
    /// Bytes of local memory from the spill base, a multiple of 16.
    pub(super) bytes: u32,
    /// Spill stores and reloads inserted.
    pub(super) stores: usize,
    pub(super) loads: usize,
    /// Copies of rematerialisable defs inserted.
    pub(super) remats: usize,
}

/// Rounds of cutting and rewriting (each fixes what the reloads of the round before made
/// overflow; the radix-sort kernels settle in three).
const ROUNDS: usize = 6;

/// A value only live out of a block counts as this much farther than the block's end.
const FAR: u32 = 1 << 20;

/// Counts per class and in 32-bit words.
#[derive(Clone, Copy, Default)]
struct Count {
    class: [usize; 3],
    words: usize,
}

impl Count {
    fn add(&mut self, kind: RegKind) {
        self.class[class_index(kind)] += 1;
        self.words += kind.gprs() as usize;
    }
    fn sub(&mut self, kind: RegKind) {
        self.class[class_index(kind)] -= 1;
        self.words -= kind.gprs() as usize;
    }
    /// The class whose names overflow, or `Some(None)` where only the names together or the
    /// words do (any value helps), or `None` where everything fits.
    fn over(&self, lim: &Limits) -> Option<Option<usize>> {
        if let Some(c) = (0..3).find(|c| self.class[*c] > lim.class[*c]) {
            return Some(Some(c));
        }
        let names: usize = self.class.iter().sum();
        (names > lim.names || self.words > lim.words).then_some(None)
    }
}

/// Where a value comes from once spilled: an instruction with one virtual def (a reload from
/// its slot or a rematerialisable def), copied with the def renamed.
struct Sources<I> {
    templates: Vec<I>,
    /// Whether a template is a reload (else a rematerialisation).
    is_load: Vec<bool>,
    /// Per vreg, its template's index (`u32::MAX`: none yet).
    of: Vec<u32>,
    /// Per template, the slot a reload reads (`u32::MAX` for a rematerialisation).
    slot: Vec<u32>,
    /// Per slot, its size in bytes.
    slot_sizes: Vec<u32>,
    /// Per block, per instruction: the slot a store writes or a reload reads ([`Tag`]).
    tags: Vec<Vec<Tag>>,
}

/// Spill (see the module essay) until the code fits `lim`; the code is returned unchanged,
/// with zero counts, where it already fits or the ISA has no spill instructions.
pub(super) fn presplit<I: MachInst>(
    mut vc: VCode<I>,
    lim: &Limits,
    spill_base: u32,
) -> Result<(VCode<I>, Spilled), String> {
    let mut stats = Spilled::default();
    if I::gen_spill_virt(
        0,
        VReg {
            index: 0,
            kind: RegKind::B32,
        },
    )
    .is_none()
    {
        return Ok((vc, stats));
    }
    let mut sources = Sources {
        templates: Vec::new(),
        is_load: Vec::new(),
        of: vec![u32::MAX; vc.vregs.len()],
        slot: Vec::new(),
        slot_sizes: Vec::new(),
        tags: vc
            .ranges
            .iter()
            .map(|&(s, e)| vec![Tag::NONE; (e - s) as usize])
            .collect(),
    };
    let mut used_bytes = 0u32;
    for _ in 0..ROUNDS {
        let (cut, cuts) = choose_cuts(&vc, lim, &sources);
        if !cut.iter().any(|c| *c) {
            break;
        }
        vc = rewrite(
            vc,
            &cut,
            &cuts,
            &mut sources,
            spill_base,
            &mut used_bytes,
            &mut stats,
        )?;
    }
    if stats.stores + stats.loads + stats.remats == 0 {
        return Ok((vc, stats));
    }
    let (mut blocks, vregs) = vc.into_blocks();
    let bytes = share_slots(&mut blocks, &sources.tags, &sources.slot_sizes, spill_base)?;
    stats.bytes = bytes.next_multiple_of(16);
    Ok((VCode::from_blocks_underived(blocks, vregs)?, stats))
}

/// What an instruction is to the slots: a store to one, a reload from one, or neither.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Tag(u32);

impl Tag {
    const NONE: Tag = Tag(u32::MAX);
    fn store(slot: u32) -> Tag {
        Tag(slot * 2 + 1)
    }
    fn load(slot: u32) -> Tag {
        Tag(slot * 2)
    }
    /// The slot and whether the instruction stores to it.
    fn get(self) -> Option<(u32, bool)> {
        (self != Tag::NONE).then_some((self.0 / 2, self.0 % 2 == 1))
    }
}

/// Give the slots offsets where slots whose contents are needed at once never overlap (as
/// ptxas reuses its spill slots), and rewrite the stores and reloads to them; returns the
/// bytes the slots take.
///
/// A slot is live from its store to its last reload: a backward liveness over the blocks,
/// each reload a read of its slot and each store a write. Since a slot's one store follows
/// its value's def, which dominates every reload, two slots need distinct bytes exactly where
/// one is live at the other's store (a store whose slot is never read still overwrites the
/// slots live there). Slots then take, largest first, the lowest offset aligned to their
/// size that overlaps none of those already placed that they interfere with, nor any slot of
/// another size: slots of one size share bytes only with slots of that size, so that every
/// byte of the area is accessed at one offset and width, which `promote` needs to move a slot
/// into a register (a scalar slot inside the bytes of a pair's slot kept both in memory).
fn share_slots<I: MachInst>(
    blocks: &mut [BlockData<I>],
    tags: &[Vec<Tag>],
    sizes: &[u32],
    spill_base: u32,
) -> Result<u32, String> {
    let n = sizes.len();
    let nb = blocks.len();
    // per block: the slots read before any store to them (gen) and those stored (kill)
    let mut gen: Vec<Vec<u32>> = vec![Vec::new(); nb];
    let mut kill: Vec<Vec<u32>> = vec![Vec::new(); nb];
    for b in 0..nb {
        let mut stored = FxHashSet::default();
        for t in &tags[b] {
            match t.get() {
                Some((s, true)) => {
                    stored.insert(s);
                    kill[b].push(s);
                }
                Some((s, false)) if !stored.contains(&s) => gen[b].push(s),
                _ => {}
            }
        }
    }
    let mut live_in: Vec<FxHashSet<u32>> = vec![FxHashSet::default(); nb];
    let live_out_of = |b: usize, live_in: &[FxHashSet<u32>]| -> FxHashSet<u32> {
        let mut out = FxHashSet::default();
        for (t, _) in &blocks[b].succs {
            out.extend(live_in[t.0 as usize].iter().copied());
        }
        out
    };
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut live = live_out_of(b, &live_in);
            for s in &kill[b] {
                live.remove(s);
            }
            live.extend(gen[b].iter().copied());
            if live.len() != live_in[b].len() {
                live_in[b] = live;
                changed = true;
            }
        }
    }
    // interference at each store
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (b, block_tags) in tags.iter().enumerate() {
        let mut live = live_out_of(b, &live_in);
        for t in block_tags.iter().rev() {
            match t.get() {
                Some((s, true)) => {
                    live.remove(&s);
                    for &o in &live {
                        adj[s as usize].push(o);
                        adj[o as usize].push(s);
                    }
                }
                Some((s, false)) => {
                    live.insert(s);
                }
                None => {}
            }
        }
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|s| (std::cmp::Reverse(sizes[*s as usize]), *s));
    let mut offset = vec![u32::MAX; n];
    let mut bytes = 0u32;
    for s in order {
        let size = sizes[s as usize];
        // the placed slots it interferes with, and all placed slots of other sizes
        let other_size = (0..n as u32).filter(|o| sizes[*o as usize] != size);
        let mut taken: Vec<(u32, u32)> = adj[s as usize]
            .iter()
            .copied()
            .chain(other_size)
            .filter(|o| offset[*o as usize] != u32::MAX)
            .map(|o| (offset[o as usize], offset[o as usize] + sizes[o as usize]))
            .collect();
        taken.sort_unstable();
        let mut at = 0u32;
        for (lo, hi) in taken {
            if at + size <= lo {
                break;
            }
            at = at.max(hi.next_multiple_of(size));
        }
        offset[s as usize] = at;
        bytes = bytes.max(at + size);
    }
    for (blk, tags) in blocks.iter_mut().zip(tags) {
        for (inst, t) in blk.insts.iter_mut().zip(tags) {
            let Some((s, store)) = t.get() else { continue };
            let mut reg = None;
            for_each_field(inst, |f| reg = Some(f.vreg));
            let v = reg.ok_or("a spill slot access without a virtual register")?;
            let off = spill_base + offset[s as usize];
            *inst = if store {
                I::gen_spill_virt(off, v)
            } else {
                I::gen_reload_virt(v, off)
            }
            .ok_or("the ISA has no spill instructions")?;
        }
    }
    Ok(bytes)
}

/// One round's choice: per vreg whether it is cut somewhere, and per block the cuts as
/// (instruction index in the block, vreg), in order: the value leaves its register before
/// that instruction.
fn choose_cuts<I: MachInst>(
    vc: &VCode<I>,
    lim: &Limits,
    sources: &Sources<I>,
) -> (Vec<bool>, Vec<Vec<(u32, u32)>>) {
    let n = vc.vregs.len();
    let mut cut = vec![false; n];
    let mut cuts: Vec<Vec<(u32, u32)>> = vec![Vec::new(); vc.ranges.len()];
    let (live_in, live_out) = liveness_sets(vc, |k| k != RegKind::Pred, true);
    // Values that can be cut: defined by an instruction that is not a terminator, or a block
    // parameter; and whether each can be rematerialised.
    let mut spillable = vec![false; n];
    let mut remat = vec![false; n];
    for b in 0..vc.ranges.len() {
        for p in &vc.params[b] {
            spillable[p.index as usize] = p.kind != RegKind::Pred;
        }
        let (s, e) = vc.ranges[b];
        for inst in &vc.insts[s as usize..e as usize] {
            let term = inst.terminator() != Terminator::None;
            let re = !term && inst.rematerialisable();
            for_each_field(inst, |f| {
                if f.spec.kind == OpKind::Def && f.vreg.kind != RegKind::Pred {
                    spillable[f.vreg.index as usize] = !term;
                    remat[f.vreg.index as usize] = re;
                }
            });
        }
    }
    for (v, s) in sources.of.iter().enumerate() {
        if *s != u32::MAX && !sources.is_load[*s as usize] {
            remat[v] = true;
        }
    }
    let kind = |v: u32| vc.vregs[v as usize];
    // Per block: each value's read positions, in order (edge arguments read at the terminator).
    let mut reads: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut in_reg = vec![false; n];
    let mut live_out_here = vec![false; n];
    let mut fs = Vec::new();
    for b in 0..vc.ranges.len() {
        let (s, e) = vc.ranges[b];
        let len = e - s;
        reads.clear();
        for (k, inst) in vc.insts[s as usize..e as usize].iter().enumerate() {
            for_each_field(inst, |f| {
                if f.spec.kind == OpKind::Use && f.vreg.kind != RegKind::Pred {
                    let r = reads.entry(f.vreg.index).or_default();
                    if r.last() != Some(&(k as u32)) {
                        r.push(k as u32);
                    }
                }
            });
        }
        for (_, args) in &vc.succs[b] {
            for a in args.iter().filter(|a| a.kind != RegKind::Pred) {
                let r = reads.entry(a.index).or_default();
                if r.last() != Some(&(len - 1)) {
                    r.push(len - 1);
                }
            }
        }
        for &v in &live_out[b] {
            live_out_here[v as usize] = true;
        }
        // The values in registers and their count; a value cut this round is not live into
        // a block (its reads there reload it).
        let mut live: Vec<u32> = Vec::new();
        let mut count = Count::default();
        for &v in live_in[b]
            .iter()
            .chain(vc.params[b].iter().map(|p| &p.index))
        {
            if kind(v) != RegKind::Pred && !cut[v as usize] && !in_reg[v as usize] {
                in_reg[v as usize] = true;
                live.push(v);
                count.add(kind(v));
            }
        }
        // Whether `v` is still needed after position `k` of this block.
        let needed_after = |v: u32, k: u32, cut: &[bool], reads: &FxHashMap<u32, Vec<u32>>| {
            let later = reads
                .get(&v)
                .is_some_and(|r| r.last().is_some_and(|l| *l > k));
            later || (live_out_here[v as usize] && !cut[v as usize])
        };
        for (k, inst) in vc.insts[s as usize..e as usize].iter().enumerate() {
            let k = k as u32;
            fs.clear();
            for_each_field(inst, |f| {
                if f.vreg.kind != RegKind::Pred {
                    fs.push(f);
                }
            });
            // reads of values not in registers (cut before): reloaded before the instruction
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Use) {
                let v = f.vreg.index;
                if !in_reg[v as usize] {
                    in_reg[v as usize] = true;
                    live.push(v);
                    count.add(f.vreg.kind);
                }
            }
            let is_term = k + 1 == len;
            // edge arguments are read at the terminator
            if is_term {
                for (_, args) in &vc.succs[b] {
                    for a in args.iter().filter(|a| a.kind != RegKind::Pred) {
                        if !in_reg[a.index as usize] {
                            in_reg[a.index as usize] = true;
                            live.push(a.index);
                            count.add(a.kind);
                        }
                    }
                }
            }
            // the counts at regalloc2's two points of the instruction
            let mut before = count;
            let mut after = count;
            let named = |v: u32| {
                fs.iter().any(|f| f.vreg.index == v)
                    || (is_term
                        && vc.succs[b]
                            .iter()
                            .any(|(_, args)| args.iter().any(|a| a.index == v)))
            };
            let mut dying: Vec<u32> = Vec::new();
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Use) {
                let v = f.vreg.index;
                if !dying.contains(&v) && !needed_after(v, k, &cut, &reads) {
                    dying.push(v);
                    let late = fs.iter().any(|g| {
                        g.vreg.index == v && g.spec.kind == OpKind::Use && g.spec.pos == OpPos::Late
                    });
                    if !late {
                        after.sub(f.vreg.kind);
                    }
                }
            }
            let mut defs: Vec<u32> = Vec::new();
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                if !defs.contains(&f.vreg.index) {
                    defs.push(f.vreg.index);
                    after.add(f.vreg.kind);
                    if f.spec.pos == OpPos::Early {
                        before.add(f.vreg.kind);
                    }
                }
            }
            // cut the farthest-read values the instruction does not name
            while let Some(class) = before.over(lim).or_else(|| after.over(lim)) {
                let next_read = |v: u32| {
                    let d = match reads.get(&v).and_then(|r| r.iter().find(|p| **p >= k)) {
                        Some(p) => p - k,
                        None => len - k + FAR,
                    };
                    if remat[v as usize] {
                        d.saturating_mul(4)
                    } else {
                        d
                    }
                };
                let victim = live
                    .iter()
                    .copied()
                    .filter(|v| {
                        spillable[*v as usize]
                            && class.map_or(true, |c| class_index(kind(*v)) == c)
                            && !named(*v)
                    })
                    .max_by_key(|v| (next_read(*v), *v));
                let Some(v) = victim else { break };
                in_reg[v as usize] = false;
                live.retain(|x| *x != v);
                count.sub(kind(v));
                before.sub(kind(v));
                after.sub(kind(v));
                cut[v as usize] = true;
                cuts[b].push((k, v));
            }
            // after the instruction: reads that die leave, defs still needed enter
            for v in dying {
                if in_reg[v as usize] {
                    in_reg[v as usize] = false;
                    live.retain(|x| *x != v);
                    count.sub(kind(v));
                }
            }
            for v in defs {
                if needed_after(v, k, &cut, &reads) && !in_reg[v as usize] {
                    in_reg[v as usize] = true;
                    live.push(v);
                    count.add(kind(v));
                }
            }
        }
        for v in live {
            in_reg[v as usize] = false;
        }
        for &v in &live_out[b] {
            live_out_here[v as usize] = false;
        }
    }
    (cut, cuts)
}

/// A copy of `template` defining `dst` in place of its one virtual def.
fn instantiate<I: MachInst>(template: &I, dst: VReg) -> I {
    let mut inst = template.clone();
    inst.visit_operands(&mut |r, spec| {
        if spec.kind == OpKind::Def && matches!(r, Reg::Virt(_)) {
            *r = Reg::Virt(dst);
        }
    });
    inst
}

/// The round's rewrite (see the module essay): stores after the defs of the values `cut`
/// that have no source yet, reloads (or rematerialisations) at their reads.
fn rewrite<I: MachInst>(
    vc: VCode<I>,
    cut: &[bool],
    cuts: &[Vec<(u32, u32)>],
    sources: &mut Sources<I>,
    spill_base: u32,
    used_bytes: &mut u32,
    stats: &mut Spilled,
) -> Result<VCode<I>, String> {
    let (mut blocks, mut vregs) = vc.into_blocks();
    // Sources of the values cut for the first time: their defs' copies where those can be
    // made again, else a new slot (the store's offset, per vreg, `u32::MAX` for none).
    let mut store_at = vec![u32::MAX; vregs.len()];
    // per vreg with a new slot, the slot
    let mut slot_of = vec![u32::MAX; vregs.len()];
    for blk in &blocks {
        for inst in &blk.insts {
            for_each_field(inst, |f| {
                let v = f.vreg.index as usize;
                if f.spec.kind == OpKind::Def
                    && cut[v]
                    && sources.of[v] == u32::MAX
                    && inst.rematerialisable()
                {
                    sources.of[v] = sources.templates.len() as u32;
                    sources.templates.push(inst.clone());
                    sources.is_load.push(false);
                    sources.slot.push(u32::MAX);
                }
            });
        }
    }
    for (v, kind) in vregs.iter().enumerate() {
        if cut[v] && sources.of[v] == u32::MAX {
            let size = kind.gprs() * 4;
            let offset = used_bytes.next_multiple_of(size);
            *used_bytes = offset + size;
            let dst = VReg {
                index: v as u32,
                kind: *kind,
            };
            let load = I::gen_reload_virt(dst, spill_base + offset)
                .ok_or("the ISA has no reload of a virtual register")?;
            sources.of[v] = sources.templates.len() as u32;
            sources.templates.push(load);
            sources.is_load.push(true);
            sources.slot.push(sources.slot_sizes.len() as u32);
            slot_of[v] = sources.slot_sizes.len() as u32;
            sources.slot_sizes.push(size);
            store_at[v] = spill_base + offset;
        }
    }
    let store = |v: VReg, stats: &mut Spilled| -> Result<I, String> {
        stats.stores += 1;
        I::gen_spill_virt(store_at[v.index as usize], v)
            .ok_or_else(|| "the ISA has no store of a virtual register".to_string())
    };
    for (b, blk) in blocks.iter_mut().enumerate() {
        let old = std::mem::take(&mut blk.insts);
        let old_tags = std::mem::take(&mut sources.tags[b]);
        let mut insts = Vec::with_capacity(old.len() + 8);
        let mut new_tags = Vec::with_capacity(old.len() + 8);
        // the value each spilled vreg has in this block, where it has one in a register
        let mut cur: FxHashMap<u32, VReg> = FxHashMap::default();
        for p in &blk.params {
            if cut[p.index as usize] {
                if store_at[p.index as usize] != u32::MAX {
                    insts.push(store(*p, stats)?);
                    new_tags.push(Tag::store(slot_of[p.index as usize]));
                }
                cur.insert(p.index, *p);
            }
        }
        let mut next_cut = cuts[b].iter().peekable();
        let len = old.len();
        for (k, (mut inst, tag)) in old.into_iter().zip(old_tags).enumerate() {
            while let Some((_, v)) = next_cut.next_if(|(at, _)| *at as usize == k) {
                cur.remove(v);
            }
            // reads of spilled values: the block's current copy, else a new one made here
            let mut made: Vec<(VReg, u32)> = Vec::new();
            let mut rename = |v: VReg, vregs: &mut Vec<RegKind>| -> VReg {
                if !cut[v.index as usize] {
                    return v;
                }
                *cur.entry(v.index).or_insert_with(|| {
                    let n = VReg {
                        index: vregs.len() as u32,
                        kind: v.kind,
                    };
                    vregs.push(v.kind);
                    made.push((n, v.index));
                    n
                })
            };
            inst.visit_operands(&mut |r, spec| {
                if let (Reg::Virt(v), OpKind::Use) = (*r, spec.kind) {
                    if v.kind != RegKind::Pred {
                        *r = Reg::Virt(rename(v, &mut vregs));
                    }
                }
            });
            if k + 1 == len {
                for (_, args) in blk.succs.iter_mut() {
                    for a in args.iter_mut() {
                        if a.kind != RegKind::Pred {
                            *a = rename(*a, &mut vregs);
                        }
                    }
                }
            }
            for (n, from) in made {
                let src = sources.of[from as usize];
                if sources.is_load[src as usize] {
                    stats.loads += 1;
                } else {
                    stats.remats += 1;
                }
                insts.push(instantiate(&sources.templates[src as usize], n));
                new_tags.push(match sources.slot[src as usize] {
                    u32::MAX => Tag::NONE,
                    s => Tag::load(s),
                });
                sources.of.resize(vregs.len(), u32::MAX);
                sources.of[n.index as usize] = src;
            }
            let mut defs: Vec<VReg> = Vec::new();
            for_each_field(&inst, |f| {
                if f.spec.kind == OpKind::Def && cut[f.vreg.index as usize] {
                    defs.push(f.vreg);
                }
            });
            insts.push(inst);
            new_tags.push(tag);
            for d in defs {
                cur.insert(d.index, d);
                if store_at[d.index as usize] != u32::MAX {
                    insts.push(store(d, stats)?);
                    new_tags.push(Tag::store(slot_of[d.index as usize]));
                }
            }
        }
        blk.insts = insts;
        sources.tags[b] = new_tags;
    }
    sources.of.resize(vregs.len(), u32::MAX);
    drop_unread_remats(&mut blocks, &mut sources.tags, vregs.len());
    VCode::from_blocks_underived(blocks, vregs)
}

/// Drop the rematerialisable defs nothing reads any more (their reads now have copies).
fn drop_unread_remats<I: MachInst>(
    blocks: &mut [BlockData<I>],
    tags: &mut [Vec<Tag>],
    nvregs: usize,
) {
    let mut read = vec![false; nvregs];
    for blk in blocks.iter() {
        for inst in &blk.insts {
            for_each_field(inst, |f| {
                if f.spec.kind == OpKind::Use {
                    read[f.vreg.index as usize] = true;
                }
            });
        }
        for (_, args) in &blk.succs {
            for a in args {
                read[a.index as usize] = true;
            }
        }
    }
    for (blk, tags) in blocks.iter_mut().zip(tags) {
        let keep: Vec<bool> = blk
            .insts
            .iter()
            .map(|inst| {
                let mut keep = !inst.rematerialisable();
                for_each_field(inst, |f| keep |= read[f.vreg.index as usize]);
                keep
            })
            .collect();
        let mut k = keep.iter();
        blk.insts.retain(|_| *k.next().unwrap_or(&true));
        let mut k = keep.iter();
        tags.retain(|_| *k.next().unwrap_or(&true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Role, Sm50Inst};
    use crate::machinst::VCodeBuilder;
    use crate::sm50::{self, Field, Form};

    /// The limits of the Int class's own 64 names (no fixed registers).
    const OWN: Limits = Limits {
        class: [64, 64, 64],
        names: 192,
        words: 251,
    };

    /// An instruction defining `v` that cannot be rematerialised.
    fn def(v: VReg) -> Sm50Inst {
        let mut i = Sm50Inst::new(Role::Plain);
        i.def(v, false);
        i
    }

    /// An instruction reading `vs`.
    fn read(vs: &[VReg]) -> Sm50Inst {
        let mut i = Sm50Inst::new(Role::Plain);
        for v in vs {
            i.use_(*v);
        }
        i
    }

    /// `n` scalars defined in `blk`, then read one by one, each read the last.
    fn crowd(b: &mut VCodeBuilder<Sm50Inst>, blk: BlockId, n: usize) {
        crowd_of(b, blk, n, RegKind::B32);
    }

    /// [`crowd`] of values of `kind`.
    fn crowd_of(b: &mut VCodeBuilder<Sm50Inst>, blk: BlockId, n: usize, kind: RegKind) {
        let vs: Vec<VReg> = (0..n).map(|_| b.new_vreg(kind)).collect();
        for v in &vs {
            b.push(blk, def(*v));
        }
        for v in &vs {
            b.push(blk, read(&[*v]));
        }
    }

    /// The machine instructions of `form` in `code`, in order.
    fn pieces_of(
        code: &VCode<Sm50Inst>,
        form: Form,
    ) -> impl Iterator<Item = &crate::lower::Piece> + '_ {
        code.insts
            .iter()
            .flat_map(|i| &i.pieces)
            .filter(move |p| p.inst.form == form)
    }

    fn forms(code: &VCode<Sm50Inst>, form: Form) -> usize {
        pieces_of(code, form).count()
    }

    /// 70 scalars live at once: after the pass at most 64 are, and regalloc2 (with its
    /// checker, and the final-assignment checker) allocates the result without a spill of
    /// its own; the pass's stores and loads are there.
    #[test]
    fn more_values_than_names_fit_after_it() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        crowd(&mut b, blk, 70);
        b.terminate(blk, Sm50Inst::new(Role::Ret), Vec::new());
        let code = b.finish().expect("valid vcode");
        assert_eq!(pressure(&code).exact[0], 70);
        let (after, spilled) = presplit(code, &OWN, 16).expect("spills");
        assert!(pressure(&after).exact[0] <= 64);
        assert_eq!(spilled.stores, 6, "{spilled:?}");
        assert_eq!(spilled.loads, 6);
        assert_eq!(spilled.bytes, 32);
        assert_eq!(forms(&after, Form::STL), 6);
        assert_eq!(forms(&after, Form::LDL), 6);
        let out = allocate_presplit(&after);
        assert_eq!((out.spill_bytes, out.spills, out.reloads), (0, 0, 0));
    }

    /// regalloc2's allocation (its checker on) of code the presplit has already spilled.
    fn allocate_presplit(code: &VCode<Sm50Inst>) -> Allocated<Sm50Inst> {
        let opts = AllocOptions {
            checker: true,
            presplit: false,
            ..AllocOptions::default()
        };
        allocate(code, &opts).expect("allocates")
    }

    /// The offsets of the stores and reloads of `form`, per instruction in order.
    fn offsets(code: &VCode<Sm50Inst>, form: Form) -> Vec<i64> {
        pieces_of(code, form)
            .map(|p| p.inst.get(Field::Off).expect("an offset") as i64)
            .collect()
    }

    /// Two crowds one after the other, each spilling 6 values that die before the second
    /// crowd's are defined: the second crowd's slots reuse the first's bytes (24 bytes, not
    /// 48), and every reload reads the offset its value was stored to.
    #[test]
    fn slots_of_values_live_apart_share_bytes() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        crowd(&mut b, blk, 70);
        crowd(&mut b, blk, 70);
        b.terminate(blk, Sm50Inst::new(Role::Ret), Vec::new());
        let code = b.finish().expect("valid vcode");
        let (after, spilled) = presplit(code, &OWN, 16).expect("spills");
        assert_eq!((spilled.stores, spilled.loads), (12, 12), "{spilled:?}");
        assert_eq!(spilled.bytes, 32, "6 slots of 4 bytes, rounded up to 16");
        let stores = offsets(&after, Form::STL);
        let loads = offsets(&after, Form::LDL);
        let distinct = |o: &[i64]| {
            let mut o = o.to_vec();
            o.sort_unstable();
            o.dedup();
            o
        };
        // within a crowd the slots differ; across crowds they repeat
        assert_eq!(distinct(&stores[..6]).len(), 6);
        assert_eq!(distinct(&stores[6..]), distinct(&stores[..6]));
        assert!(stores.iter().all(|o| (16..40).contains(o)), "{stores:?}");
        // each value is read back from where it was stored: the crowd reads its values in
        // the order it defined them, so the loads follow the stores
        assert_eq!(loads, stores);
        let out = allocate_presplit(&after);
        assert_eq!((out.spill_bytes, out.spills, out.reloads), (0, 0, 0));
    }

    /// A crowd of pairs, then one of scalars, each spilling 6 values that die before the next
    /// crowd's are defined: the scalars' slots do not share the pairs' bytes (slots share
    /// bytes only with slots of their size), so every byte of the area is accessed at one
    /// offset and width, and `promote` moves every slot into a register. When the scalars'
    /// slots lay inside the pairs', promotion kept both in memory.
    #[test]
    fn slots_of_other_sizes_stay_apart_and_promotable() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        crowd_of(&mut b, blk, 70, RegKind::B64);
        crowd(&mut b, blk, 70);
        b.terminate(blk, Sm50Inst::new(Role::Ret), Vec::new());
        let code = b.finish().expect("valid vcode");
        let (after, spilled) = presplit(code, &OWN, 16).expect("spills");
        assert_eq!((spilled.stores, spilled.loads), (12, 12), "{spilled:?}");
        assert_eq!(spilled.bytes, 80, "48 bytes of pairs, then 24 of scalars");
        // per store: its bytes and its width
        let stores: Vec<(i64, i64)> = after
            .insts
            .iter()
            .filter(|i| i.pieces.iter().any(|p| p.inst.form == Form::STL))
            .map(|i| {
                let width = match i.ops[0].reg {
                    crate::machinst::Reg::Virt(v) => 4 * i64::from(v.kind.gprs()),
                    other => panic!("a store of a physical register: {other:?}"),
                };
                let off = i.pieces[0].inst.get(Field::Off).expect("an offset");
                (off as i64, width)
            })
            .collect();
        for &(o, w) in &stores {
            for &(o2, w2) in &stores {
                let overlap = o < o2 + w2 && o2 < o + w;
                assert!(!overlap || (o, w) == (o2, w2), "{stores:?}");
            }
        }
        let mut out = allocate_presplit(&after);
        assert_eq!(out.spill_bytes, 0, "regalloc2 itself does not spill");
        out.spill_bytes = spilled.bytes;
        let done = super::super::promote::promote(&mut out, 16, 255, &[false], None);
        assert_eq!(done.slots, 12, "{done:?}");
        assert_eq!(out.spill_bytes, 0, "every slot is in a register");
    }

    /// A constant (`MOV32I`) read only after the crowd is the farthest read: it is
    /// rematerialised before that read, never stored, and its first def is dropped.
    #[test]
    fn constant_is_rematerialised() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let k = b.new_vreg(RegKind::B32);
        let mut mov = Sm50Inst::new(Role::Plain);
        let d = mov.def(k, false);
        mov.piece(
            sm50::Inst::new(Form::MOV32I).with(Field::Imm, 0x1234),
            &[(Field::Rd, d, 0)],
        );
        assert!(mov.rematerialisable());
        b.push(blk, mov);
        crowd(&mut b, blk, 64);
        b.push(blk, read(&[k]));
        b.terminate(blk, Sm50Inst::new(Role::Ret), Vec::new());
        let code = b.finish().expect("valid vcode");
        let (after, spilled) = presplit(code, &OWN, 0).expect("spills");
        assert_eq!((spilled.stores, spilled.loads, spilled.remats), (0, 0, 1));
        assert_eq!(spilled.bytes, 0);
        assert_eq!(forms(&after, Form::MOV32I), 1);
        // the copy stands right before the read
        let at = after
            .insts
            .iter()
            .position(|i| i.pieces.iter().any(|p| p.inst.form == Form::MOV32I))
            .expect("a MOV32I");
        assert!(at > 64, "the constant is made again late, at {at}");
        assert!(pressure(&after).exact[0] <= 64);
    }

    /// A value defined before a loop and read after it, with a crowd inside the loop: it is
    /// stored after its def and loaded in the exit block, so that it is not live in the loop.
    #[test]
    fn value_read_after_a_loop_is_spilled_across_it() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let (entry, body, exit) = (b.new_block(), b.new_block(), b.new_block());
        let x = b.new_vreg(RegKind::B32);
        b.push(entry, def(x));
        let mut jump = Sm50Inst::new(Role::Branch);
        jump.targets.push(body);
        jump.branch_piece(0, None);
        b.terminate(entry, jump, vec![(body, Vec::new())]);
        crowd(&mut b, body, 64);
        let p = b.new_vreg(RegKind::Pred);
        let mut setp = Sm50Inst::new(Role::Plain);
        setp.def(p, false);
        b.push(body, setp);
        let mut br = Sm50Inst::new(Role::Branch);
        let g = br.use_(p);
        br.targets.push(body);
        br.targets.push(exit);
        br.branch_piece(0, Some((g, false)));
        br.branch_piece(1, None);
        b.terminate(body, br, vec![(body, Vec::new()), (exit, Vec::new())]);
        b.push(exit, read(&[x]));
        b.terminate(exit, Sm50Inst::new(Role::Ret), Vec::new());
        let code = b.finish().expect("valid vcode");
        assert_eq!(pressure(&code).exact[0], 65);
        let (after, spilled) = presplit(code, &OWN, 0).expect("spills");
        assert_eq!((spilled.stores, spilled.loads), (1, 1), "{spilled:?}");
        let block = |n: usize| {
            let (s, e) = after.ranges[n];
            &after.insts[s as usize..e as usize]
        };
        let has = |insts: &[Sm50Inst], f: Form| {
            insts
                .iter()
                .any(|i| i.pieces.iter().any(|p| p.inst.form == f))
        };
        assert!(has(block(0), Form::STL) && has(block(2), Form::LDL));
        assert!(!has(block(1), Form::LDL) && !has(block(1), Form::STL));
        assert!(pressure(&after).exact[0] <= 64);
        let out = allocate_presplit(&after);
        assert_eq!(out.spill_bytes, 0);
    }
}
