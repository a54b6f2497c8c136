//! [`VCode`]: blocks of [`MachInst`]s over virtual registers, and its `regalloc2::Function` view.
//!
//! In: blocks and instructions from [`VCodeBuilder`]. Out: a validated, flat VCode: every
//! block ends in exactly one terminator, branch argument lists match the successors' parameter
//! kinds, every vreg is defined once (instruction def or block parameter), the entry block has
//! no parameters. regalloc2 operands are collected once per instruction (predicate and
//! physical fields are left out: they are not regalloc2's business).

use super::{
    BlockId, MachInst, OpConstraint, OpKind, OpPos, OpSpec, PhysReg, Reg, RegKind, SrcLoc,
    Terminator, VReg,
};
use regalloc2 as ra;
use smallvec::SmallVec;

/// One block as the builder collects it.
#[derive(Clone, Debug)]
pub(crate) struct BlockData<I> {
    pub params: Vec<VReg>,
    pub insts: Vec<I>,
    /// Successors in the order the terminator names them, each with its argument list.
    pub succs: Vec<(BlockId, Vec<VReg>)>,
}

/// Builds a [`VCode`]. Blocks are laid out in creation order; the first is the entry.
#[derive(Clone, Debug)]
pub struct VCodeBuilder<I> {
    blocks: Vec<BlockData<I>>,
    vregs: Vec<RegKind>,
    terminated: Vec<bool>,
    /// Given to every instruction pushed that has none of its own.
    srcloc: SrcLoc,
}

impl<I: MachInst> Default for VCodeBuilder<I> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I: MachInst> VCodeBuilder<I> {
    pub fn new() -> Self {
        VCodeBuilder {
            blocks: Vec::new(),
            vregs: Vec::new(),
            terminated: Vec::new(),
            srcloc: SrcLoc::NONE,
        }
    }

    /// The source position given to the instructions pushed from now on (lowering sets it to
    /// each IR instruction's before selecting it).
    pub fn set_srcloc(&mut self, loc: SrcLoc) {
        self.srcloc = loc;
    }

    /// The source position set by [`Self::set_srcloc`].
    pub fn srcloc(&self) -> SrcLoc {
        self.srcloc
    }

    fn stamp(&self, inst: &mut I) {
        if inst.srcloc() == SrcLoc::NONE {
            inst.set_srcloc(self.srcloc);
        }
    }

    /// A fresh virtual register of `kind`.
    pub fn new_vreg(&mut self, kind: RegKind) -> VReg {
        let v = VReg {
            index: self.vregs.len() as u32,
            kind,
        };
        self.vregs.push(kind);
        v
    }

    /// How many virtual registers exist so far: the index the next one gets.
    pub fn num_vregs(&self) -> u32 {
        self.vregs.len() as u32
    }

    /// A new empty block, placed after every block created so far.
    pub fn new_block(&mut self) -> BlockId {
        self.new_block_with_capacity(0)
    }

    /// [`Self::new_block`] with room for `insts` instructions (capacity only: a block grown
    /// from empty copies its instructions at every doubling, and they are large).
    pub fn new_block_with_capacity(&mut self, insts: usize) -> BlockId {
        self.blocks.push(BlockData {
            params: Vec::new(),
            insts: Vec::with_capacity(insts),
            succs: Vec::new(),
        });
        self.terminated.push(false);
        BlockId(self.blocks.len() as u32 - 1)
    }

    /// A new parameter of `block` (an SSA merge value).
    pub fn add_block_param(&mut self, block: BlockId, kind: RegKind) -> VReg {
        let v = self.new_vreg(kind);
        self.blocks[block.0 as usize].params.push(v);
        v
    }

    /// Append a non-terminator instruction to `block`.
    pub fn push(&mut self, block: BlockId, mut inst: I) {
        self.stamp(&mut inst);
        self.blocks[block.0 as usize].insts.push(inst);
    }

    /// End `block` with `inst`; `succs` lists its successors in the order the instruction names
    /// them (empty for a return), each with the arguments for the successor's parameters.
    pub fn terminate(&mut self, block: BlockId, mut inst: I, succs: Vec<(BlockId, Vec<VReg>)>) {
        self.stamp(&mut inst);
        let b = &mut self.blocks[block.0 as usize];
        b.insts.push(inst);
        b.succs = succs;
        self.terminated[block.0 as usize] = true;
    }

    /// Validate and flatten.
    pub fn finish(self) -> Result<VCode<I>, String> {
        if let Some(i) = self.terminated.iter().position(|t| !t) {
            return Err(format!("block b{i} has no terminator"));
        }
        VCode::from_blocks(self.blocks, self.vregs)
    }
}

/// Machine code over virtual registers, flat, in layout order. Implements
/// [`regalloc2::Function`].
#[derive(Clone, Debug)]
pub struct VCode<I> {
    pub(crate) insts: Vec<I>,
    pub(crate) vregs: Vec<RegKind>,
    pub(crate) params: Vec<Vec<VReg>>,
    pub(crate) succs: Vec<Vec<(BlockId, Vec<VReg>)>>,
    /// Instruction index range per block.
    pub(crate) ranges: Vec<(u32, u32)>,
    /// regalloc2 class of every vreg: normally by kind, but `alloc` may move some 32-bit webs
    /// into a class whose natural kind the function does not use.
    pub(crate) classes: Vec<ra::RegClass>,
    /// 4-byte spill slots per value of each class (1, 2, 4 unless a class holds scalars).
    pub(crate) slot_words: [usize; 3],
    // regalloc2 views, derived from the above.
    /// Every instruction's operands, one after another: instruction `i`'s are
    /// `ra_ops[ra_op_start[i]..ra_op_start[i + 1]]` (one vector, not one per instruction).
    ra_ops: Vec<ra::Operand>,
    ra_op_start: Vec<u32>,
    /// Per instruction, the registers [`MachInst::clobbers`] names (set by `resolve_fixed`).
    ra_clobbers: Vec<ra::PRegSet>,
    ra_params: Vec<Vec<ra::VReg>>,
    ra_succs: Vec<Vec<ra::Block>>,
    ra_preds: Vec<Vec<ra::Block>>,
    ra_args: Vec<Vec<Vec<ra::VReg>>>,
    terms: Vec<Terminator>,
    /// Whether the regalloc2 views above are derived from the current code. The passes of
    /// `alloc` and `pred` rebuild the code several times before regalloc2 sees it
    /// ([`Self::from_blocks_underived`]); only the last one needs the views
    /// ([`Self::ensure_derived`]).
    derived: bool,
}

pub(crate) fn ra_class(kind: RegKind) -> ra::RegClass {
    match kind {
        RegKind::B32 | RegKind::Pred => ra::RegClass::Int,
        RegKind::B64 => ra::RegClass::Float,
        RegKind::B128 => ra::RegClass::Vector,
    }
}

/// One regalloc2-visible operand field of an instruction: its visit position and spec.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldInfo {
    pub vreg: VReg,
    pub spec: OpSpec,
}

/// Every field of `inst`, in visit order (None for physical fields). Inline up to eight
/// fields: this is called for every instruction by several passes, and a heap vector per call
/// was a visible share of compile time.
pub(crate) fn fields<I: MachInst>(inst: &I) -> SmallVec<[Option<FieldInfo>; 8]> {
    let mut out = SmallVec::new();
    fields_into(inst, &mut out);
    out
}

/// [`fields`] into `out` (cleared first): a pass that needs them by position for every
/// instruction reuses one vector instead of returning (copying) a new one per instruction.
pub(crate) fn fields_into<I: MachInst>(inst: &I, out: &mut SmallVec<[Option<FieldInfo>; 8]>) {
    out.clear();
    inst.for_each_operand(&mut |r, spec| match r {
        Reg::Virt(vreg) => out.push(Some(FieldInfo { vreg, spec })),
        _ => out.push(None),
    });
}

/// Calls `f` with each virtual field of `inst`: the `Some` entries of [`fields`], in the
/// same order, without gathering them into a vector first (for passes that only walk them).
pub(crate) fn for_each_field<I: MachInst>(inst: &I, mut f: impl FnMut(FieldInfo)) {
    inst.for_each_operand(&mut |r, spec| {
        if let Reg::Virt(vreg) = r {
            f(FieldInfo { vreg, spec });
        }
    });
}

/// Physical registers that regalloc2 must be able to name for fixed constraints and
/// clobbers ([`MachInst::clobbers`], 32-bit), per kind, each once in order of first mention.
pub(crate) fn fixed_regs<I: MachInst>(insts: &[I]) -> Vec<(RegKind, PhysReg)> {
    named_regs(insts, true)
}

/// The registers fixed-register operands name (a call's arguments and results), without the
/// clobbers, as [`fixed_regs`] lists them.
pub(crate) fn fixed_operand_regs<I: MachInst>(insts: &[I]) -> Vec<(RegKind, PhysReg)> {
    named_regs(insts, false)
}

fn named_regs<I: MachInst>(insts: &[I], clobbers: bool) -> Vec<(RegKind, PhysReg)> {
    let mut out = Vec::new();
    for inst in insts {
        if clobbers {
            for r in inst.clobbers().0 {
                if !out.contains(&(RegKind::B32, *r)) {
                    out.push((RegKind::B32, *r));
                }
            }
        }
        for_each_field(inst, |f| {
            if let OpConstraint::Fixed(r) = f.spec.constraint {
                if !out.contains(&(f.vreg.kind, r)) {
                    out.push((f.vreg.kind, r));
                }
            }
        });
    }
    out
}

impl<I: MachInst> VCode<I> {
    /// Validate and flatten `blocks`. The regalloc2 views are not derived here: `alloc`
    /// rewrites the code (pruning, predicates, edge splitting) before regalloc2 sees it, and
    /// derives them once on the final code ([`Self::ensure_derived`]); deriving them here was
    /// wasted for almost every kernel.
    pub(crate) fn from_blocks(
        blocks: Vec<BlockData<I>>,
        vregs: Vec<RegKind>,
    ) -> Result<Self, String> {
        Self::from_blocks_underived(blocks, vregs)
    }

    /// Validate and flatten `blocks` (every structural rule of the module essay, reuse
    /// constraints included), without the regalloc2 views; [`Self::ensure_derived`] makes them.
    pub(crate) fn from_blocks_underived(
        blocks: Vec<BlockData<I>>,
        vregs: Vec<RegKind>,
    ) -> Result<Self, String> {
        let n = blocks.len();
        if n == 0 {
            return Err("function has no blocks".into());
        }
        if !blocks[0].params.is_empty() {
            return Err("the entry block has parameters".into());
        }
        let mut insts = Vec::with_capacity(blocks.iter().map(|b| b.insts.len()).sum());
        let mut params = Vec::with_capacity(n);
        let mut succs = Vec::with_capacity(n);
        let mut ranges = Vec::with_capacity(n);
        let mut defined = vec![false; vregs.len()];
        // `what` describes the definition for an error message: formatted only on error.
        let mut define = |v: VReg, what: &dyn Fn() -> String| -> Result<(), String> {
            let slot = defined
                .get_mut(v.index as usize)
                .ok_or_else(|| format!("{v} is not a vreg of this function ({})", what()))?;
            if *slot {
                return Err(format!("{v} is defined twice ({})", what()));
            }
            *slot = true;
            Ok(())
        };
        // Each instruction's fields, by position (one vector for all of them).
        let mut fs: SmallVec<[Option<FieldInfo>; 8]> = SmallVec::new();
        for (bi, b) in blocks.into_iter().enumerate() {
            let start = insts.len() as u32;
            for p in &b.params {
                define(*p, &|| format!("parameter of b{bi}"))?;
            }
            let count = b.insts.len();
            // (Checked by reference and moved over in one piece below: moving each
            // instruction out of the block and into `insts` copied it twice.)
            for (k, inst) in b.insts.iter().enumerate() {
                let term = inst.terminator();
                let last = k + 1 == count;
                if last != (term != Terminator::None) {
                    return Err(format!(
                        "b{bi}: the terminator must be the last instruction, exactly once"
                    ));
                }
                if last && (term == Terminator::Ret) != b.succs.is_empty() {
                    return Err(format!(
                        "b{bi}: a return has no successors, a branch has some"
                    ));
                }
                fields_into(inst, &mut fs);
                for f in fs.iter().flatten() {
                    if vregs.get(f.vreg.index as usize) != Some(&f.vreg.kind) {
                        return Err(format!("{}: unknown vreg or wrong kind", f.vreg));
                    }
                    if f.spec.kind == OpKind::Def {
                        define(f.vreg, &|| format!("instruction `{inst}`"))?;
                    }
                    if f.vreg.kind == RegKind::Pred && f.spec.constraint != OpConstraint::Reg {
                        return Err(format!(
                            "`{inst}`: predicates take no fixed or reuse constraint"
                        ));
                    }
                    if f.spec.half.is_some()
                        && (f.vreg.kind != RegKind::B64 || f.spec.kind != OpKind::Use)
                    {
                        return Err(format!("`{inst}`: only a use of a pair may read one half"));
                    }
                    // A reuse def names a whole use of the same kind (the rule `derive_ra`
                    // relies on; predicates were refused above).
                    if let OpConstraint::Reuse(pos) = f.spec.constraint {
                        let same = fs
                            .get(usize::from(pos))
                            .copied()
                            .flatten()
                            .is_some_and(|u| {
                                u.vreg.kind == f.vreg.kind
                                    && u.spec.kind == OpKind::Use
                                    && u.spec.half.is_none()
                            });
                        if !same || f.spec.kind != OpKind::Def {
                            return Err(format!("`{inst}`: bad reuse constraint"));
                        }
                    }
                }
            }
            insts.extend(b.insts);
            if count == 0 {
                return Err(format!("b{bi} is empty"));
            }
            for (t, args) in &b.succs {
                let target = t.0 as usize;
                if target >= n {
                    return Err(format!("b{bi} branches to missing block {t}"));
                }
                if target == 0 {
                    return Err(format!("b{bi} branches to the entry block"));
                }
                let _ = args;
            }
            ranges.push((start, insts.len() as u32));
            params.push(b.params);
            succs.push(b.succs);
        }
        for (bi, ss) in succs.iter().enumerate() {
            for (t, args) in ss {
                let p = &params[t.0 as usize];
                if p.len() != args.len() || p.iter().zip(args).any(|(a, b)| a.kind != b.kind) {
                    return Err(format!(
                        "b{bi} -> {t}: arguments do not match the parameters"
                    ));
                }
            }
        }
        Ok(Self::underived(insts, vregs, params, succs, ranges))
    }

    /// The code from its flat parts, regalloc2's views not derived yet (no checks: the
    /// callers' duty).
    fn underived(
        insts: Vec<I>,
        vregs: Vec<RegKind>,
        params: Vec<Vec<VReg>>,
        succs: Vec<Vec<(BlockId, Vec<VReg>)>>,
        ranges: Vec<(u32, u32)>,
    ) -> Self {
        let classes = vregs.iter().map(|k| ra_class(*k)).collect();
        VCode {
            insts,
            vregs,
            params,
            succs,
            ranges,
            classes,
            slot_words: [1, 2, 4],
            ra_ops: Vec::new(),
            ra_op_start: Vec::new(),
            ra_clobbers: Vec::new(),
            ra_params: Vec::new(),
            ra_succs: Vec::new(),
            ra_preds: Vec::new(),
            ra_args: Vec::new(),
            terms: Vec::new(),
            derived: false,
        }
    }

    /// Derive the regalloc2 views unless they are current.
    pub(crate) fn ensure_derived(&mut self) -> Result<(), String> {
        if self.derived {
            return Ok(());
        }
        self.derive_ra()
    }

    /// Rewrite the instructions in place of the per-block round trip ([`Self::into_blocks`],
    /// [`Self::from_blocks_underived`]) for a pass that only inserts instructions around
    /// existing ones: `f` gets each instruction in layout order and pushes it, and whatever
    /// goes before and after it, onto the block's new list; it may add vregs. The blocks,
    /// their parameters and successors stay. Each block must still end in its terminator and
    /// hold no other (checked: `Err` otherwise). The pass's other duties (every new vreg
    /// defined once, operands of the right kind) are its own; debug builds check the whole
    /// result as [`Self::from_blocks_underived`] does.
    pub(crate) fn insert_around(
        self,
        mut f: impl FnMut(I, &mut Vec<I>, &mut Vec<RegKind>),
    ) -> Result<Self, String> {
        let VCode {
            insts: old,
            mut vregs,
            params,
            succs,
            ranges: old_ranges,
            ..
        } = self;
        let mut insts = Vec::with_capacity(old.len() + old.len() / 8 + 4);
        let mut ranges = Vec::with_capacity(old_ranges.len());
        let mut old = old.into_iter();
        for (b, &(s, e)) in old_ranges.iter().enumerate() {
            let start = insts.len();
            for inst in old.by_ref().take((e - s) as usize) {
                f(inst, &mut insts, &mut vregs);
            }
            let block = &insts[start..];
            let ends = block.last().map(|i| i.terminator() != Terminator::None);
            let inner = block[..block.len().saturating_sub(1)]
                .iter()
                .any(|i| i.terminator() != Terminator::None);
            if ends != Some(true) || inner {
                return Err(format!(
                    "b{b}: the terminator must be the last instruction, exactly once"
                ));
            }
            ranges.push((start as u32, insts.len() as u32));
        }
        Self::from_parts_trusted(insts, vregs, params, succs, ranges)
    }

    /// The code from its flat parts (block `b` holds `insts[ranges[b].0..ranges[b].1]`, the
    /// ranges consecutive from 0), for a pass that rewrites valid code into valid code without
    /// the per-block round trip: the structural rules of [`Self::from_blocks_underived`] are
    /// the pass's duty, and debug builds check them all by that very round trip.
    pub(crate) fn from_parts_trusted(
        insts: Vec<I>,
        vregs: Vec<RegKind>,
        params: Vec<Vec<VReg>>,
        succs: Vec<Vec<(BlockId, Vec<VReg>)>>,
        ranges: Vec<(u32, u32)>,
    ) -> Result<Self, String> {
        let vc = Self::underived(insts, vregs, params, succs, ranges);
        if cfg!(debug_assertions) {
            let (blocks, vregs) = vc.into_blocks();
            return Self::from_blocks_underived(blocks, vregs);
        }
        Ok(vc)
    }

    /// Flatten `blocks` without the checks of [`Self::from_blocks_underived`], for a pass
    /// that only reorders the blocks of valid code, adds jump blocks and renumbers successors
    /// (retargeting their branches): that keeps every structural rule, as long as the entry
    /// block stays first. Debug builds check them all ([`Self::from_parts_trusted`]).
    /// (The checks visit every operand of the function; the passes that reorder blocks ran
    /// them again on code they had not changed otherwise.)
    pub(crate) fn from_blocks_trusted(
        blocks: Vec<BlockData<I>>,
        vregs: Vec<RegKind>,
    ) -> Result<Self, String> {
        let n = blocks.len();
        let mut insts = Vec::with_capacity(blocks.iter().map(|b| b.insts.len()).sum());
        let mut params = Vec::with_capacity(n);
        let mut succs = Vec::with_capacity(n);
        let mut ranges = Vec::with_capacity(n);
        for b in blocks {
            let start = insts.len() as u32;
            insts.extend(b.insts);
            ranges.push((start, insts.len() as u32));
            params.push(b.params);
            succs.push(b.succs);
        }
        Self::from_parts_trusted(insts, vregs, params, succs, ranges)
    }

    /// Back to per-block form (for rewriting passes), without copying: the blocks take the
    /// instructions, parameters and successors over (the ranges are consecutive from 0, as [`Self::from_blocks`] lays them
    /// out).
    pub(crate) fn into_blocks(self) -> (Vec<BlockData<I>>, Vec<RegKind>) {
        let mut insts = self.insts.into_iter();
        let blocks = self
            .ranges
            .iter()
            .zip(self.params)
            .zip(self.succs)
            .map(|((&(s, e), params), succs)| BlockData {
                params,
                insts: insts.by_ref().take((e - s) as usize).collect(),
                succs,
            })
            .collect();
        (blocks, self.vregs)
    }

    /// Give every vreg a regalloc2 class (see `alloc`'s scalar overflow).
    pub(crate) fn set_classes(
        &mut self,
        classes: Vec<ra::RegClass>,
        slot_words: [usize; 3],
    ) -> Result<(), String> {
        self.classes = classes;
        self.slot_words = slot_words;
        self.derive_ra()
    }

    fn derive_ra(&mut self) -> Result<(), String> {
        self.derived = false;
        let n = self.ranges.len();
        let classes = self.classes.clone();
        let ra_vreg = |v: VReg| ra::VReg::new(v.index as usize, classes[v.index as usize]);
        self.ra_ops = Vec::with_capacity(2 * self.insts.len());
        self.ra_op_start = Vec::with_capacity(self.insts.len() + 1);
        self.ra_op_start.push(0);
        self.terms = Vec::with_capacity(self.insts.len());
        // The regalloc2 operands of one instruction with their visit positions (the
        // positions of `fields`, physical operands included), gathered by one visit.
        let mut ops: SmallVec<[(usize, FieldInfo); 8]> = SmallVec::new();
        for inst in &self.insts {
            self.terms.push(inst.terminator());
            ops.clear();
            let mut pos = 0;
            inst.for_each_operand(&mut |r, spec| {
                if let Reg::Virt(vreg) = r {
                    if vreg.kind != RegKind::Pred {
                        ops.push((pos, FieldInfo { vreg, spec }));
                    }
                }
                pos += 1;
            });
            for &(_, f) in &ops {
                let constraint = match f.spec.constraint {
                    OpConstraint::Reg => ra::OperandConstraint::Reg,
                    // The fixed PReg is resolved when the environment is built; encode the
                    // physical number for now and translate in `alloc`.
                    OpConstraint::Fixed(_) => ra::OperandConstraint::Reg,
                    OpConstraint::Reuse(pos) => {
                        // The regalloc2 index of the operand at visit position `pos` (none
                        // if that is not a regalloc2 operand).
                        let idx = ops
                            .iter()
                            .position(|(p, _)| *p == usize::from(pos))
                            .unwrap_or(usize::MAX);
                        let same = ops.get(idx).is_some_and(|(_, u)| {
                            u.vreg.kind == f.vreg.kind
                                && u.spec.kind == OpKind::Use
                                && u.spec.half.is_none()
                        });
                        if !same || f.spec.kind != OpKind::Def {
                            return Err(format!("`{inst}`: bad reuse constraint"));
                        }
                        ra::OperandConstraint::Reuse(idx)
                    }
                };
                let kind = match f.spec.kind {
                    OpKind::Use => ra::OperandKind::Use,
                    OpKind::Def => ra::OperandKind::Def,
                };
                let pos = match f.spec.pos {
                    OpPos::Early => ra::OperandPos::Early,
                    OpPos::Late => ra::OperandPos::Late,
                };
                self.ra_ops
                    .push(ra::Operand::new(ra_vreg(f.vreg), constraint, kind, pos));
            }
            self.ra_op_start.push(self.ra_ops.len() as u32);
        }
        self.ra_params = self
            .params
            .iter()
            .map(|p| {
                p.iter()
                    .filter(|v| v.kind != RegKind::Pred)
                    .map(|v| ra_vreg(*v))
                    .collect()
            })
            .collect();
        self.ra_succs = self
            .succs
            .iter()
            .map(|s| {
                s.iter()
                    .map(|(t, _)| ra::Block::new(t.0 as usize))
                    .collect()
            })
            .collect();
        self.ra_preds = vec![Vec::new(); n];
        for (b, ss) in self.succs.iter().enumerate() {
            for (t, _) in ss {
                self.ra_preds[t.0 as usize].push(ra::Block::new(b));
            }
        }
        self.ra_args = self
            .succs
            .iter()
            .map(|s| {
                s.iter()
                    .map(|(_, args)| {
                        args.iter()
                            .filter(|v| v.kind != RegKind::Pred)
                            .map(|v| ra_vreg(*v))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        self.derived = true;
        Ok(())
    }

    /// Resolve `Fixed` constraints and clobbers to regalloc2 PRegs once the environment is
    /// known.
    pub(crate) fn resolve_fixed(
        &mut self,
        to_preg: &dyn Fn(RegKind, PhysReg) -> Option<ra::PReg>,
    ) -> Result<(), String> {
        if !self.derived {
            return Err("resolve_fixed before the regalloc2 views are derived".into());
        }
        self.ra_clobbers = vec![ra::PRegSet::empty(); self.insts.len()];
        for (i, inst) in self.insts.iter().enumerate() {
            for r in inst.clobbers().0 {
                let preg = to_preg(RegKind::B32, *r)
                    .ok_or_else(|| format!("`{inst}`: clobbered register {r} is not usable"))?;
                self.ra_clobbers[i].add(preg);
            }
            let base = self.ra_op_start[i] as usize;
            let mut ops: SmallVec<[FieldInfo; 8]> = SmallVec::new();
            for_each_field(inst, |f| {
                if f.vreg.kind != RegKind::Pred {
                    ops.push(f);
                }
            });
            for (k, f) in ops.iter().enumerate() {
                if let OpConstraint::Fixed(r) = f.spec.constraint {
                    let preg = to_preg(f.vreg.kind, r).ok_or_else(|| {
                        format!("`{inst}`: fixed register {r} is not usable for {}", f.vreg)
                    })?;
                    let old = self.ra_ops[base + k];
                    self.ra_ops[base + k] = ra::Operand::new(
                        old.vreg(),
                        ra::OperandConstraint::FixedReg(preg),
                        old.kind(),
                        old.pos(),
                    );
                }
            }
        }
        Ok(())
    }

    /// [`Self::resolve_fixed`] for code with no clobbers and no fixed constraints (an empty
    /// [`fixed_regs`]): there is nothing to resolve, only the clobber sets to reset.
    pub(crate) fn resolve_no_fixed(&mut self) {
        self.ra_clobbers.clear();
        self.ra_clobbers
            .resize(self.insts.len(), ra::PRegSet::empty());
    }

    pub fn num_blocks(&self) -> usize {
        self.ranges.len()
    }

    /// Whether any instruction clobbers registers or predicates ([`MachInst::clobbers`]).
    pub fn has_clobbers(&self) -> bool {
        self.insts.iter().any(|i| {
            let (r, p) = i.clobbers();
            !r.is_empty() || !p.is_empty()
        })
    }

    /// How many regalloc2 operands instruction `i` has (its virtual non-predicate operands;
    /// counted from the instruction, so the views need not be derived).
    pub(crate) fn ra_operands_of(&self, i: usize) -> usize {
        let mut n = 0;
        for_each_field(&self.insts[i], |f| {
            n += usize::from(f.vreg.kind != RegKind::Pred)
        });
        n
    }

    /// The instructions of `block`.
    pub fn block_insts(&self, block: BlockId) -> &[I] {
        let (s, e) = self.ranges[block.0 as usize];
        &self.insts[s as usize..e as usize]
    }

    /// The parameters of `block`.
    pub fn block_params(&self, block: BlockId) -> &[VReg] {
        &self.params[block.0 as usize]
    }

    /// The successors of `block` with their arguments.
    pub fn block_succs(&self, block: BlockId) -> &[(BlockId, Vec<VReg>)] {
        &self.succs[block.0 as usize]
    }

    /// The kind of every vreg, by index.
    pub fn vreg_kinds(&self) -> &[RegKind] {
        &self.vregs
    }
}

impl<I: MachInst> ra::Function for VCode<I> {
    fn num_insts(&self) -> usize {
        debug_assert!(
            self.derived,
            "regalloc2 views used before they were derived"
        );
        self.insts.len()
    }
    fn num_blocks(&self) -> usize {
        self.ranges.len()
    }
    fn entry_block(&self) -> ra::Block {
        ra::Block::new(0)
    }
    fn block_insns(&self, block: ra::Block) -> ra::InstRange {
        let (s, e) = self.ranges[block.index()];
        ra::InstRange::new(ra::Inst::new(s as usize), ra::Inst::new(e as usize))
    }
    fn block_succs(&self, block: ra::Block) -> &[ra::Block] {
        &self.ra_succs[block.index()]
    }
    fn block_preds(&self, block: ra::Block) -> &[ra::Block] {
        &self.ra_preds[block.index()]
    }
    fn block_params(&self, block: ra::Block) -> &[ra::VReg] {
        &self.ra_params[block.index()]
    }
    fn is_ret(&self, insn: ra::Inst) -> bool {
        self.terms[insn.index()] == Terminator::Ret
    }
    fn is_branch(&self, insn: ra::Inst) -> bool {
        self.terms[insn.index()] == Terminator::Branch
    }
    fn branch_blockparams(
        &self,
        block: ra::Block,
        _insn: ra::Inst,
        succ_idx: usize,
    ) -> &[ra::VReg] {
        &self.ra_args[block.index()][succ_idx]
    }
    fn inst_operands(&self, insn: ra::Inst) -> &[ra::Operand] {
        let i = insn.index();
        &self.ra_ops[self.ra_op_start[i] as usize..self.ra_op_start[i + 1] as usize]
    }
    fn inst_clobbers(&self, insn: ra::Inst) -> ra::PRegSet {
        self.ra_clobbers
            .get(insn.index())
            .copied()
            .unwrap_or_else(ra::PRegSet::empty)
    }
    fn num_vregs(&self) -> usize {
        self.vregs.len()
    }
    fn spillslot_size(&self, regclass: ra::RegClass) -> usize {
        // One slot is 4 bytes of local memory; regalloc2 aligns multi-slot values to their size,
        // which is exactly the alignment STL.64 / STL.128 need.
        self.slot_words[regclass as usize]
    }
}
