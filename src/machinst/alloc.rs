//! [`allocate`]: predicates, critical-edge splitting, environment sizing, regalloc2, edits.
//!
//! In: a [`VCode`] and [`AllocOptions`]. Out: an [`Allocated`] whose instructions name only
//! physical registers, or a typed [`AllocError`] (never a panic for any valid VCode).
//!
//! Invariants of the result: pairs sit at even registers and quads at multiples of 4 (every
//! class slice is built aligned); R1 and RZ are never handed out (they are in no slice); every
//! register is below `max_regs`; `num_regs` = highest register touched + 1, at least 2.

use super::pred::{allocate_preds, liveness};
use super::vcode::{fields, fixed_regs, ra_class, VCode};
use super::{BlockId, MachInst, OpKind, PhysReg, Reg, RegKind};
use regalloc2 as ra;

/// Options for [`allocate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocOptions {
    /// Registers R0..R(max_regs-1) may be used (`--maxrregcount`); at most 255.
    pub max_regs: u8,
    /// Run regalloc2's checker on the result.
    pub checker: bool,
}

impl Default for AllocOptions {
    fn default() -> Self {
        AllocOptions {
            max_regs: 255,
            checker: false,
        }
    }
}

/// Why allocation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The VCode breaks a structural rule (a lowering bug).
    #[error("invalid vcode: {0}")]
    Invalid(String),
    /// `max_regs` leaves too few registers for some instruction's operands.
    #[error("too few registers: {0}")]
    TooFewRegisters(String),
    /// More predicates needed at one instruction than exist.
    #[error("predicates: {0}")]
    Predicates(String),
    /// regalloc2 refused the function.
    #[error("regalloc2: {0}")]
    Regalloc(String),
    /// regalloc2's checker found the allocation wrong.
    #[error("regalloc2 checker: {0}")]
    Checker(String),
}

/// One block after allocation.
#[derive(Clone, Debug)]
pub struct AllocatedBlock<I> {
    pub id: BlockId,
    pub insts: Vec<I>,
}

/// The result of [`allocate`].
#[derive(Clone, Debug)]
pub struct Allocated<I> {
    /// Blocks in layout order (critical-edge blocks included), instructions physical.
    pub blocks: Vec<AllocatedBlock<I>>,
    /// Highest GPR used + 1, at least 2 (R1), as ptxas reports "Used N registers".
    pub num_regs: u32,
    /// Bytes of local memory for spill slots, addressed `[R1 + offset]`.
    pub spill_bytes: u32,
    /// Whether regalloc2's checker ran (and passed).
    pub checked: bool,
    /// How many predicates were spilled into GPRs.
    pub pred_spills: usize,
    /// Number of spill (store) instructions inserted.
    pub spills: usize,
    /// Number of reload instructions inserted.
    pub reloads: usize,
    /// Class sizes (scalars, pairs, quads) of the environment that was used.
    pub class_sizes: [usize; 3],
}

const KINDS: [RegKind; 3] = [RegKind::B32, RegKind::B64, RegKind::B128];

fn class_index(kind: RegKind) -> usize {
    match kind {
        RegKind::B32 | RegKind::Pred => 0,
        RegKind::B64 => 1,
        RegKind::B128 => 2,
    }
}

/// Insert an empty jump block on every edge regalloc2 cannot place moves on: from a block with
/// several successors to one with several predecessors (a critical edge), and from a branch
/// with register operands to a block with several predecessors.
fn split_edges<I: MachInst>(vc: &VCode<I>) -> Result<VCode<I>, String> {
    let n = vc.ranges.len();
    let mut npreds = vec![0usize; n];
    for ss in &vc.succs {
        for (t, _) in ss {
            npreds[t.0 as usize] += 1;
        }
    }
    let needs = |b: usize, t: usize| {
        let term_has_ops = vc.ra_operands_of(vc.ranges[b].1 as usize - 1) > 0;
        npreds[t] > 1 && (vc.succs[b].len() > 1 || term_has_ops)
    };
    if !(0..n).any(|b| vc.succs[b].iter().any(|(t, _)| needs(b, t.0 as usize))) {
        return Ok(vc.clone());
    }
    let (mut blocks, vregs) = vc.to_blocks();
    for b in 0..n {
        for k in 0..blocks[b].succs.len() {
            let (t, args) = blocks[b].succs[k].clone();
            if !needs(b, t.0 as usize) {
                continue;
            }
            let mid = BlockId(blocks.len() as u32);
            blocks.push(super::vcode::BlockData {
                params: Vec::new(),
                insts: vec![I::gen_jump(t)],
                succs: vec![(t, args)],
            });
            blocks[b].succs[k] = (mid, Vec::new());
            blocks[b]
                .insts
                .last_mut()
                .expect("validated: blocks are non-empty")
                .set_branch_target(k, mid);
        }
    }
    VCode::from_blocks(blocks, vregs)
}

/// Maximum number of simultaneously live vregs per class, and the most operands of each class
/// one instruction names (the least a class must have to allocate at all).
fn pressure<I: MachInst>(vc: &VCode<I>) -> ([usize; 3], [usize; 3]) {
    let (_, live_out) = liveness(vc, &|k| k != RegKind::Pred);
    let mut max = [0usize; 3];
    let mut min_needed = [0usize; 3];
    let count = |live: &std::collections::BTreeSet<u32>| {
        let mut c = [0usize; 3];
        for v in live {
            c[class_index(vc.vregs[*v as usize])] += 1;
        }
        c
    };
    for b in 0..vc.ranges.len() {
        let (s, e) = vc.ranges[b];
        let mut live = live_out[b].clone();
        for (_, args) in &vc.succs[b] {
            live.extend(args.iter().map(|a| a.index));
        }
        for i in (s..e).rev() {
            let fs: Vec<_> = fields(&vc.insts[i as usize])
                .into_iter()
                .flatten()
                .filter(|f| f.vreg.kind != RegKind::Pred)
                .collect();
            let mut here = [0usize; 3];
            for f in &fs {
                here[class_index(f.vreg.kind)] += 1;
            }
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                live.insert(f.vreg.index);
            }
            let c = count(&live);
            for k in 0..3 {
                max[k] = max[k].max(c[k]);
                min_needed[k] = min_needed[k].max(here[k]);
            }
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                live.remove(&f.vreg.index);
            }
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Use) {
                live.insert(f.vreg.index);
            }
            let c = count(&live);
            for k in 0..3 {
                max[k] = max[k].max(c[k]);
            }
        }
    }
    (max, min_needed)
}

/// Physical base registers per class, packed from R0 upward: fixed registers first, then
/// quads at 4-aligned bases, pairs at even bases, scalars in what is left. `None` if `sizes`
/// does not fit below `max_regs`.
fn layout(sizes: [usize; 3], fixed: &[(RegKind, PhysReg)], max_regs: u8) -> Option<[Vec<u8>; 3]> {
    let top = max_regs as usize;
    let mut free = vec![true; top];
    if top > 1 {
        free[1] = false; // stack pointer
    }
    let mut out: [Vec<u8>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (kind, r) in fixed {
        let w = kind.gprs() as usize;
        let base = r.0 as usize;
        if base % w != 0 || base + w > top || !(base..base + w).all(|x| free[x]) {
            return None;
        }
        (base..base + w).for_each(|x| free[x] = false);
        out[class_index(*kind)].push(r.0);
    }
    for c in [2usize, 1, 0] {
        let w = KINDS[c].gprs() as usize;
        let mut base = 0;
        while out[c].len() < sizes[c] {
            if base + w > top {
                return None;
            }
            if (base..base + w).all(|x| free[x]) {
                (base..base + w).for_each(|x| free[x] = false);
                out[c].push(base as u8);
            }
            base += w;
        }
    }
    Some(out)
}

/// Pick class sizes: start at `want` (capped at 64), never below `min`, shrink the largest
/// demand until the layout fits.
fn fit_sizes(
    want: [usize; 3],
    min: [usize; 3],
    fixed: &[(RegKind, PhysReg)],
    max_regs: u8,
) -> Result<[Vec<u8>; 3], AllocError> {
    let mut sizes = [0usize; 3];
    for c in 0..3 {
        sizes[c] = want[c].max(min[c]).min(64);
    }
    loop {
        if let Some(l) = layout(sizes, fixed, max_regs) {
            return Ok(l);
        }
        // shrink the class using the most registers that is still above its minimum
        let victim = (0..3)
            .filter(|c| sizes[*c] > min[*c])
            .max_by_key(|c| sizes[*c] * KINDS[*c].gprs() as usize);
        match victim {
            Some(c) => sizes[c] -= 1,
            None => {
                return Err(AllocError::TooFewRegisters(format!(
                    "{} scalars, {} pairs and {} quads needed by one instruction do not fit in {} registers",
                    min[0], min[1], min[2], max_regs
                )))
            }
        }
    }
}

fn machine_env(classes: &[Vec<u8>; 3]) -> ra::MachineEnv {
    let mut preferred = [ra::PRegSet::empty(); 3];
    for (c, regs) in classes.iter().enumerate() {
        for i in 0..regs.len() {
            preferred[c].add(ra::PReg::new(i, ra_class(KINDS[c])));
        }
    }
    ra::MachineEnv {
        preferred_regs_by_class: preferred,
        non_preferred_regs_by_class: [ra::PRegSet::empty(); 3],
        scratch_by_class: [None; 3],
        fixed_stack_slots: Vec::new(),
    }
}

fn class_of(rc: ra::RegClass) -> usize {
    match rc {
        ra::RegClass::Int => 0,
        ra::RegClass::Float => 1,
        ra::RegClass::Vector => 2,
    }
}

/// Allocate registers for `vcode` (see the module essays of `machinst` and this file).
pub fn allocate<I: MachInst>(
    vcode: &VCode<I>,
    opts: &AllocOptions,
) -> Result<Allocated<I>, AllocError> {
    let max_regs = opts.max_regs.min(255);
    let pa = allocate_preds(vcode).map_err(AllocError::Predicates)?;
    let mut vc = split_edges(&pa.vcode).map_err(AllocError::Invalid)?;
    let fixed = fixed_regs(&vc.insts);
    let (press, min_needed) = pressure(&vc);
    let used: [bool; 3] = [0, 1, 2].map(|c| {
        vc.vregs
            .iter()
            .any(|k| *k != RegKind::Pred && class_index(*k) == c)
    });
    // A little slack over the pressure estimate: constraints (reuse, early defs) can need it.
    let mut want = [0usize; 3];
    for c in 0..3 {
        if used[c] {
            want[c] = press[c] + 1;
        }
    }
    let ra_opts = ra::RegallocOptions {
        verbose_log: false,
        validate_ssa: true,
        algorithm: ra::Algorithm::Ion,
    };
    let mut last_sizes = None;
    let (classes, out) = loop {
        let classes = fit_sizes(want, min_needed, &fixed, max_regs)?;
        let sizes = [classes[0].len(), classes[1].len(), classes[2].len()];
        let to_preg = |kind: RegKind, r: PhysReg| {
            let c = class_index(kind);
            classes[c]
                .iter()
                .position(|b| *b == r.0)
                .map(|i| ra::PReg::new(i, ra_class(kind)))
        };
        vc.resolve_fixed(&to_preg).map_err(AllocError::Invalid)?;
        let env = machine_env(&classes);
        let out =
            ra::run(&vc, &env, &ra_opts).map_err(|e| AllocError::Regalloc(format!("{e:?}")))?;
        let mut spilled = [false; 3];
        for (_, ra::Edit::Move { from, to }) in &out.edits {
            for (a, other) in [(from, to), (to, from)] {
                if a.is_stack() {
                    if let Some(r) = other.as_reg() {
                        spilled[class_of(r.class())] = true;
                    }
                }
            }
        }
        let grown = (0..3).any(|c| spilled[c] && sizes[c] < 64);
        if !grown || last_sizes == Some(sizes) {
            if opts.checker {
                let mut checker = ra::checker::Checker::new(&vc, &env);
                checker.prepare(&out);
                checker
                    .run()
                    .map_err(|e| AllocError::Checker(format!("{e:?}")))?;
            }
            break (classes, out);
        }
        last_sizes = Some(sizes);
        for c in 0..3 {
            if spilled[c] {
                want[c] = (sizes[c] + sizes[c] / 2 + 4).min(64);
            }
        }
    };
    let phys = |p: ra::PReg| PhysReg(classes[class_of(p.class())][p.hw_enc()]);
    let kind_of = |p: ra::PReg| KINDS[class_of(p.class())];
    let mut max_reg: u32 = 1;
    let mut note = |r: PhysReg, kind: RegKind| {
        if r != PhysReg::RZ {
            max_reg = max_reg.max(r.0 as u32 + kind.gprs().max(1) - 1);
        }
    };
    let (mut spills, mut reloads) = (0, 0);
    let mut blocks = Vec::with_capacity(vc.num_blocks());
    for b in 0..vc.num_blocks() {
        let mut insts = Vec::new();
        for item in out.block_insts_and_edits(&vc, ra::Block::new(b)) {
            match item {
                ra::InstOrEdit::Edit(ra::Edit::Move { from, to }) => {
                    match (from.as_reg(), to.as_reg(), from.as_stack(), to.as_stack()) {
                        (Some(f), Some(t), _, _) => {
                            if f != t {
                                note(phys(t), kind_of(t));
                                insts.push(I::gen_move(phys(t), phys(f), kind_of(t)));
                            }
                        }
                        (Some(f), None, _, Some(slot)) => {
                            spills += 1;
                            insts.push(I::gen_spill(slot.index() as u32 * 4, phys(f), kind_of(f)));
                        }
                        (None, Some(t), Some(slot), _) => {
                            reloads += 1;
                            note(phys(t), kind_of(t));
                            insts.push(I::gen_reload(phys(t), slot.index() as u32 * 4, kind_of(t)));
                        }
                        _ => {
                            return Err(AllocError::Regalloc(format!(
                                "unexpected edit {from} -> {to}"
                            )))
                        }
                    }
                }
                ra::InstOrEdit::Inst(i) => {
                    let mut inst = vc.insts[i.index()].clone();
                    let allocs = out.inst_allocs(i);
                    let mut k = 0;
                    let mut bad = None;
                    inst.visit_operands(&mut |r, spec| {
                        let Reg::Virt(v) = *r else { return };
                        if v.kind == RegKind::Pred {
                            match pa.assignment.get(&v.index) {
                                Some(p) => *r = Reg::Pred(*p),
                                None => bad = Some(format!("predicate {v} has no register")),
                            }
                            return;
                        }
                        match allocs.get(k).and_then(|a| a.as_reg()) {
                            Some(p) => {
                                let base = phys(p);
                                let reg = match spec.half {
                                    Some(super::Half::Hi) => PhysReg(base.0 + 1),
                                    _ => base,
                                };
                                *r = Reg::Phys(reg);
                            }
                            None => bad = Some(format!("{v} did not get a register")),
                        }
                        k += 1;
                    });
                    if let Some(msg) = bad {
                        return Err(AllocError::Regalloc(msg));
                    }
                    for a in allocs {
                        if let Some(p) = a.as_reg() {
                            note(phys(p), kind_of(p));
                        }
                    }
                    if let Some((Reg::Phys(d), Reg::Phys(s))) = inst.is_move() {
                        if d == s {
                            continue;
                        }
                    }
                    insts.push(inst);
                }
            }
        }
        blocks.push(AllocatedBlock {
            id: BlockId(b as u32),
            insts,
        });
    }
    Ok(Allocated {
        blocks,
        num_regs: max_reg + 1,
        spill_bytes: out.num_spillslots as u32 * 4,
        checked: opts.checker,
        pred_spills: pa.spilled,
        spills,
        reloads,
        class_sizes: [classes[0].len(), classes[1].len(), classes[2].len()],
    })
}
