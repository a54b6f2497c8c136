//! Predicate allocation (P0..P6), run on the [`VCode`] before regalloc2.
//!
//! In: a VCode whose predicate vregs may be block parameters and may be live anywhere.
//! Out: a VCode with no predicate block parameters or arguments, plus a map from every
//! predicate vreg to a [`PhysPred`], such that two predicates that are live at the same
//! program point never share a register.
//!
//! Method: (1) every predicate block parameter becomes a 32-bit parameter; the branch converts
//! its argument with `gen_pred_to_gpr` just before the terminator and the target converts it
//! back with `gen_gpr_to_pred` at its top. (2) Liveness by the usual backward dataflow; each
//! predicate gets the *hull* of its live points in layout order (one interval, conservative:
//! holes are ignored, so intervals that do not overlap are never live together). (3) Linear
//! scan over 7 registers, each interval taking the free register freed longest ago, so that
//! neighbouring short predicates differ and the scheduler (after allocation) may overlap
//! them (an interval live across an instruction that clobbers predicates,
//! [`MachInst::clobbers`], takes none of those); when an interval finds none free, the live interval that ends last
//! (among those not created by a previous spill) is spilled: its value is copied to a fresh
//! 32-bit vreg right after its definition and each use reads a fresh predicate converted back
//! just before it, except a use in the instruction right after the definition, which reads
//! the predicate itself (it still holds the value). The pass then starts over; every round removes one long interval, so it
//! terminates (bounded by the number of predicates plus one).

use super::vcode::{for_each_field, FieldInfo, VCode};
use super::{MachInst, OpKind, OpPos, PhysPred, Reg, RegKind, Terminator, VReg};
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;
use std::collections::{BTreeSet, VecDeque};

/// Allocatable predicates: P0..P6 (P7 is PT).
pub const NUM_PREDS: usize = 7;

/// Per-block live-in and live-out sets of the vregs `want` selects (backward dataflow; block
/// parameters are defined at the block's top, branch arguments are used by the terminator),
/// each in increasing vreg order. The sets are dense bit sets over the selected vregs while
/// the fixpoint is computed (the least fixpoint does not depend on the visiting order, so a
/// worklist computes it).
pub(crate) fn liveness<I: MachInst>(
    vc: &VCode<I>,
    want: impl Fn(RegKind) -> bool,
) -> (BlockSets, BlockSets) {
    liveness_sets(vc, want, true)
}

/// A vreg list per block, stored as one list (one allocation, not one per block): block
/// `b`'s is `sets[b]`.
pub(crate) struct BlockSets {
    items: Vec<u32>,
    /// Block `b`'s items are `items[start[b]..start[b + 1]]`.
    start: Vec<u32>,
}

impl std::ops::Index<usize> for BlockSets {
    type Output = [u32];
    fn index(&self, b: usize) -> &[u32] {
        &self.items[self.start[b] as usize..self.start[b + 1] as usize]
    }
}

/// [`liveness`]; the live-in lists only when `with_in` (else every one is empty: listing them
/// costs as much as the rest for a big function, and the pressure estimate needs only the
/// live-out sets).
pub(crate) fn liveness_sets<I: MachInst>(
    vc: &VCode<I>,
    want: impl Fn(RegKind) -> bool,
    with_in: bool,
) -> (BlockSets, BlockSets) {
    let n = vc.ranges.len();
    // dense numbering of the selected vregs, in vreg order
    let mut dense = vec![u32::MAX; vc.vregs.len()];
    let mut vreg_of: Vec<u32> = Vec::with_capacity(vc.vregs.len());
    for (v, kind) in vc.vregs.iter().enumerate() {
        if want(*kind) {
            dense[v] = vreg_of.len() as u32;
            vreg_of.push(v as u32);
        }
    }
    let words = vreg_of.len().div_ceil(64);
    let mut gen = vec![0u64; n * words];
    let mut kill = vec![0u64; n * words];
    let set = |bits: &mut [u64], d: u32| bits[d as usize / 64] |= 1 << (d % 64);
    let clear = |bits: &mut [u64], d: u32| bits[d as usize / 64] &= !(1 << (d % 64));
    // Each instruction's selected fields, gathered by one visit (reused for every one).
    let mut fs: SmallVec<[FieldInfo; 8]> = SmallVec::new();
    // upward-exposed uses and defs per block
    for b in 0..n {
        let (s, e) = vc.ranges[b];
        let (g, k) = (
            &mut gen[b * words..(b + 1) * words],
            &mut kill[b * words..(b + 1) * words],
        );
        for (_, args) in &vc.succs[b] {
            for a in args.iter().filter(|a| want(a.kind)) {
                set(g, dense[a.index as usize]);
            }
        }
        for inst in vc.insts[s as usize..e as usize].iter().rev() {
            fs.clear();
            for_each_field(inst, |f| {
                if want(f.vreg.kind) {
                    fs.push(f);
                }
            });
            // Defs first, then uses (a use of what the instruction defines stays live in).
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                clear(g, dense[f.vreg.index as usize]);
                set(k, dense[f.vreg.index as usize]);
            }
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Use) {
                set(g, dense[f.vreg.index as usize]);
            }
        }
        for p in vc.params[b].iter().filter(|p| want(p.kind)) {
            clear(g, dense[p.index as usize]);
            set(k, dense[p.index as usize]);
        }
    }
    let mut live_in = vec![0u64; n * words];
    let mut live_out = vec![0u64; n * words];
    let mut out = vec![0u64; words];
    // A worklist: every block once (in reverse layout order), then again only when the
    // live-in set of a successor grew. Sweeping every block until nothing changed cost a
    // whole extra sweep at the end and sweeps over blocks with nothing new; both reach the
    // same (least) fixpoint.
    // Every block's predecessors in one list (counted, then placed in block order, as
    // pushing onto a list per block ordered them): `pred_of[pred_start[b]..pred_start[b + 1]]`.
    let mut pred_start = vec![0u32; n + 1];
    for ss in &vc.succs {
        for (t, _) in ss {
            pred_start[t.0 as usize + 1] += 1;
        }
    }
    for b in 0..n {
        pred_start[b + 1] += pred_start[b];
    }
    let mut pred_of = vec![0u32; pred_start[n] as usize];
    let mut fill = pred_start.clone();
    for (b, ss) in vc.succs.iter().enumerate() {
        for (t, _) in ss {
            let at = &mut fill[t.0 as usize];
            pred_of[*at as usize] = b as u32;
            *at += 1;
        }
    }
    let mut queue: std::collections::VecDeque<usize> = VecDeque::with_capacity(n);
    queue.extend((0..n).rev());
    let mut queued = vec![true; n];
    while let Some(b) = queue.pop_front() {
        queued[b] = false;
        out.fill(0);
        for (t, _) in &vc.succs[b] {
            let t = t.0 as usize;
            for (o, i) in out.iter_mut().zip(&live_in[t * words..(t + 1) * words]) {
                *o |= *i;
            }
        }
        live_out[b * words..(b + 1) * words].copy_from_slice(&out);
        // The block's words as slices walked together (indexing each array per word checked
        // every index and kept the loop from vectorising); a word changed exactly when it
        // differs from the new one, so the bits of every change are gathered.
        let blk = b * words..(b + 1) * words;
        let mut changed = 0u64;
        for (((li, &o), &k), &g) in live_in[blk.clone()]
            .iter_mut()
            .zip(&out)
            .zip(&kill[blk.clone()])
            .zip(&gen[blk])
        {
            let inn = (o & !k) | g;
            changed |= inn ^ *li;
            *li = inn;
        }
        if changed != 0 {
            for &p in &pred_of[pred_start[b] as usize..pred_start[b + 1] as usize] {
                let p = p as usize;
                if !queued[p] {
                    queued[p] = true;
                    queue.push_back(p);
                }
            }
        }
    }
    let lists = |bits: &[u64]| -> BlockSets {
        let mut sets = BlockSets {
            items: Vec::new(),
            start: Vec::with_capacity(n + 1),
        };
        sets.start.push(0);
        for b in 0..n {
            for (w, &x) in bits[b * words..(b + 1) * words].iter().enumerate() {
                let mut x = x;
                while x != 0 {
                    sets.items
                        .push(vreg_of[w * 64 + x.trailing_zeros() as usize]);
                    x &= x - 1;
                }
            }
            sets.start.push(sets.items.len() as u32);
        }
        sets
    };
    let ins = if with_in {
        lists(&live_in)
    } else {
        BlockSets {
            items: Vec::new(),
            start: vec![0; n + 1],
        }
    };
    (ins, lists(&live_out))
}

/// The result of predicate allocation.
pub(crate) struct PredAlloc<I> {
    pub vcode: VCode<I>,
    pub assignment: HashMap<u32, PhysPred>,
    /// How many predicates were spilled into GPRs.
    pub spilled: usize,
}

/// Rewrite predicate block parameters into 32-bit ones (step 1 of the module essay).
fn demote_pred_params<I: MachInst>(vc: VCode<I>) -> Result<VCode<I>, String> {
    let has_any = vc.params.iter().flatten().any(|p| p.kind == RegKind::Pred);
    if !has_any {
        return Ok(vc);
    }
    let (mut blocks, mut vregs) = vc.into_blocks();
    let mut fresh = |kind: RegKind| {
        let v = VReg {
            index: vregs.len() as u32,
            kind,
        };
        vregs.push(kind);
        v
    };
    // New 32-bit parameter for each predicate parameter.
    let mut new_params: Vec<Vec<(usize, VReg, VReg)>> = vec![Vec::new(); blocks.len()];
    for (b, block) in blocks.iter_mut().enumerate() {
        let mut top = Vec::new();
        for (k, p) in block.params.iter_mut().enumerate() {
            if p.kind == RegKind::Pred {
                let g = fresh(RegKind::B32);
                new_params[b].push((k, *p, g));
                top.push(I::gen_gpr_to_pred(*p, g));
                *p = g;
            }
        }
        block.insts.splice(0..0, top);
    }
    for block in blocks.iter_mut() {
        let mut before_term = Vec::new();
        for (t, args) in block.succs.iter_mut() {
            for (k, _, _) in &new_params[t.0 as usize] {
                let g = fresh(RegKind::B32);
                before_term.push(I::gen_pred_to_gpr(g, args[*k]));
                args[*k] = g;
            }
        }
        let at = block.insts.len() - 1;
        block.insts.splice(at..at, before_term);
    }
    VCode::from_blocks_underived(blocks, vregs)
}

/// Live interval hulls (in half-instruction points) of every predicate vreg, as
/// `(lo, hi, vreg)` sorted (the order [`scan`] visits them in).
fn intervals<I: MachInst>(vc: &VCode<I>) -> Vec<(u32, u32, u32)> {
    let (live_in, live_out) = liveness(vc, |k| k == RegKind::Pred);
    // Per vreg (indexed by its number): its hull so far, `lo > hi` while it has none. (A
    // hash map keyed by vreg was looked up for every live point.)
    let mut iv: Vec<(u32, u32)> = vec![(u32::MAX, 0); vc.vregs.len()];
    let mut touch = |v: u32, p: u32| {
        let e = &mut iv[v as usize];
        e.0 = e.0.min(p);
        e.1 = e.1.max(p);
    };
    for b in 0..vc.ranges.len() {
        let (s, e) = vc.ranges[b];
        for v in &live_in[b] {
            touch(*v, 2 * s);
        }
        for v in &live_out[b] {
            touch(*v, 2 * e - 1);
        }
        for i in s..e {
            for_each_field(&vc.insts[i as usize], |f| {
                if f.vreg.kind == RegKind::Pred {
                    let late = f.spec.pos == OpPos::Late;
                    touch(f.vreg.index, 2 * i + late as u32);
                }
            });
        }
    }
    let mut order: Vec<(u32, u32, u32)> = iv
        .iter()
        .enumerate()
        .filter(|(_, (lo, hi))| lo <= hi)
        .map(|(v, &(lo, hi))| (lo, hi, v as u32))
        .collect();
    order.sort_unstable();
    order
}

/// The predicates [`MachInst::clobbers`] names, per instruction point: `(2i, mask)` for
/// instruction `i` (bit `r` = `P<r>`), only for instructions that clobber any.
fn clobber_points<I: MachInst>(vc: &VCode<I>) -> Vec<(u32, u8)> {
    let mut out = Vec::new();
    for (i, inst) in vc.insts.iter().enumerate() {
        let mask = inst
            .clobbers()
            .1
            .iter()
            .filter(|p| (p.0 as usize) < NUM_PREDS)
            .fold(0u8, |m, p| m | 1 << p.0);
        if mask != 0 {
            out.push((2 * i as u32, mask));
        }
    }
    out
}

/// Linear scan; `Err(v)` names the predicate to spill. An interval that is live across a
/// clobbering instruction (its hull holds both that instruction's points) avoids the
/// predicates the instruction clobbers.
fn scan(
    order: &[(u32, u32, u32)],
    unspillable: &BTreeSet<u32>,
    clobbered: &[(u32, u8)],
) -> Result<HashMap<u32, PhysPred>, Option<u32>> {
    // Per register, the end of the last interval given it (0 before any): the free register
    // freed longest ago is taken (see [`pick_free`]).
    let mut last_end = [0u32; NUM_PREDS];
    let mut active: Vec<(u32, u32, u8)> = Vec::new(); // (hi, vreg, reg)
    let mut out = HashMap::default();
    out.reserve(order.len());
    debug_assert!(clobbered.windows(2).all(|w| w[0].0 < w[1].0));
    for &(lo, hi, v) in order {
        active.retain(|(ahi, _, _)| *ahi >= lo);
        // The registers of the live intervals, as a mask (a vector per interval before).
        let used = active.iter().fold(0u8, |m, a| m | 1 << a.2);
        // The clobbering points in `lo..hi`: one run of the list, which is sorted by point.
        let from = clobbered.partition_point(|(p, _)| *p < lo);
        let to = from + clobbered[from..].partition_point(|(p, _)| *p < hi);
        let forbidden = clobbered[from..to].iter().fold(0u8, |m, (_, c)| m | c);
        if let Some(r) = pick_free(used | forbidden, &last_end) {
            last_end[r as usize] = hi;
            active.push((hi, v, r));
            out.insert(v, PhysPred(r));
        } else {
            let mut cands: Vec<(u32, u32)> = active.iter().map(|a| (a.0, a.1)).collect();
            cands.push((hi, v));
            cands.retain(|(_, c)| !unspillable.contains(c));
            cands.sort();
            return Err(cands.last().map(|c| c.1));
        }
    }
    Ok(out)
}

/// The register for the next interval: among those `taken` (a mask) leaves free, the one
/// whose last interval ended first (`last_end`; the lowest number among equals, so P0 first).
///
/// Taking the lowest free register instead gave every short-lived predicate of a block the
/// same one: NVVM's `if (i != end) { v = ld.shared; st.global v }` steps, if-converted in a
/// row (Rodinia dwt2d's output loops), all ran under `P2`, and the scheduler, which runs after
/// allocation, had to keep step `k + 1`'s `ISETP` after every instruction of step `k` that
/// reads `P2` (a write-after-read), so no step's shared load could start under the previous
/// step's global store. A register freed long ago rarely has a reader left nearby, so the
/// steps' loads overlap, as in ptxas, which also rotates through its predicates.
fn pick_free(taken: u8, last_end: &[u32; NUM_PREDS]) -> Option<u8> {
    (0..NUM_PREDS as u8)
        .filter(|r| taken & (1 << r) == 0)
        .min_by_key(|r| (last_end[*r as usize], *r))
}

/// Spill predicate `v` into a 32-bit vreg (step 3 of the module essay). The fresh predicates
/// created for its uses go into `unspillable`. Consumes the code: its instructions move into
/// the result in one pass over the flat code ([`VCode::insert_around`]; a copy of every
/// instruction per spill, and then a round trip through per-block lists, were visible costs).
fn spill<I: MachInst>(
    mut vc: VCode<I>,
    v: u32,
    unspillable: &mut BTreeSet<u32>,
) -> Result<VCode<I>, String> {
    let g = VReg {
        index: vc.vregs.len() as u32,
        kind: RegKind::B32,
    };
    vc.vregs.push(RegKind::B32);
    let pv = VReg {
        index: v,
        kind: RegKind::Pred,
    };
    // Whether the instruction just visited defined `v`: a use in the next instruction keeps
    // reading `v` itself (see below).
    let mut just_defined = false;
    let mut kept = false;
    let out = vc.insert_around(|mut inst, out, vregs| {
        // Whether the instruction reads and whether it writes `v` (one visit of its fields,
        // without gathering them).
        let (mut uses, mut defs) = (false, false);
        for_each_field(&inst, |f| {
            if f.vreg == pv {
                match f.spec.kind {
                    OpKind::Use => uses = true,
                    OpKind::Def => defs = true,
                }
            }
        });
        // The instruction right after the def (a `setp`'s branch, NVVM's usual shape) reads
        // `v` as it is: its conversion back (`ISETP.NE p, g, RZ` of the `SEL` just made) would
        // recompute the value `v` still holds. `v`'s interval then spans that `SEL` and the
        // use only, where the converted predicate's would have spanned the conversion and the
        // use: the same predicates are live beside it, so no allocation that succeeded fails.
        if uses && just_defined {
            kept = true;
        } else if uses {
            let fresh = VReg {
                index: vregs.len() as u32,
                kind: RegKind::Pred,
            };
            vregs.push(RegKind::Pred);
            unspillable.insert(fresh.index);
            out.push(I::gen_gpr_to_pred(fresh, g));
            inst.visit_operands(&mut |r, spec| {
                if *r == Reg::Virt(pv) && spec.kind == OpKind::Use {
                    *r = Reg::Virt(fresh);
                }
            });
        }
        just_defined = defs && inst.terminator() == Terminator::None;
        out.push(inst);
        if defs {
            out.push(I::gen_pred_to_gpr(g, pv));
        }
    })?;
    // A kept `v` is a short interval now; it must not be chosen again (a second spill would
    // convert it once more, round after round).
    if kept {
        unspillable.insert(v);
    }
    Ok(out)
}

/// Allocate every predicate vreg of `vc` (see the module essay).
pub(crate) fn allocate_preds<I: MachInst>(vc: VCode<I>) -> Result<PredAlloc<I>, String> {
    let mut vc = demote_pred_params(vc)?;
    let mut unspillable = BTreeSet::new();
    let mut spilled = 0;
    let limit = vc.vregs.iter().filter(|k| **k == RegKind::Pred).count() + 1;
    for _ in 0..=limit {
        let iv = intervals(&vc);
        match scan(&iv, &unspillable, &clobber_points(&vc)) {
            Ok(assignment) => {
                return Ok(PredAlloc {
                    vcode: vc,
                    assignment,
                    spilled,
                })
            }
            Err(Some(v)) => {
                vc = spill(vc, v, &mut unspillable)?;
                spilled += 1;
            }
            Err(None) => break,
        }
    }
    Err("more than 7 predicates are needed at one instruction".into())
}
