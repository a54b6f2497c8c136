//! [`allocate`]: predicates, critical-edge splitting, environment sizing, regalloc2, edits.
//!
//! In: a [`VCode`] and [`AllocOptions`]. Out: an [`Allocated`] whose instructions name only
//! physical registers, or a typed [`AllocError`] (never a panic for any valid VCode).
//!
//! Invariants of the result: pairs sit at even registers and quads at multiples of 4 (the
//! colouring gives aligned bases; every class slice is built aligned); R1 and RZ are never
//! handed out; every register is below `max_regs`; `num_regs` = highest register touched + 1,
//! at least 2.
//!
//! # Files of this module
//!
//! - `edges.rs`: The CFG as regalloc2 needs it.
//! - `pressure.rs`: Register pressure per class, and the escape when scalars alone overflow the
//!   Int class.
//! - `slices.rs`: The class slices' search of the allocator.
//! - `spill.rs`: Spilling before regalloc2, where more values are live than it has names; under
//!   a register budget, where regalloc2 alone spills, also down to the budget's words
//!   ([`budget_presplit`]: thread indices and constants computed again, not stored), the
//!   allocation whose code costs less kept.
//! - `promote.rs`: Spill slots moved into the registers the allocation left free.
//! - `forward.rs`: The moves of promoted reloads dropped where the code can read the slot's
//!   register instead, and those of promoted stores where the def can write it.

mod slices;
use slices::*;
mod edges;
use edges::*;
mod forward;
mod pressure;
mod promote;
mod spill;
use super::assign::{self, NameProg, StepKind, Webs};
use super::check;
use super::pred::{allocate_preds, liveness_sets};
use super::vcode::{fields, fixed_operand_regs, fixed_regs, ra_class, VCode};
use super::{BlockId, MachInst, OpKind, OpPos, PhysReg, Reg, RegKind, VReg};
use pressure::*;
use regalloc2 as ra;
use smallvec::SmallVec;

/// Options for [`allocate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocOptions {
    /// Registers R0..R(max_regs-1) may be used (`--maxrregcount`); at most 255.
    pub max_regs: u8,
    /// Run regalloc2's checker on the result.
    pub checker: bool,
    /// Byte offset from R1 where the spill area starts, i.e. the size of the kernel's own
    /// `.local` data below it; rounded up to 16 so that 128-bit slots stay aligned.
    pub spill_base: u32,
    /// Registers that cost a save when written (one bit per register): a subroutine's
    /// callee-saved registers under the call ABI. The colouring gives a value one of them
    /// only where no other register is free, or where one is written anyway
    /// (`assign::colour`).
    pub save_cost: [u64; 4],
    /// Spill before regalloc2 where more values are live at once than it has names or the
    /// register file has words (`alloc::spill`). Off for subroutines: their frame and saved
    /// registers are laid out around regalloc2's own spill slots.
    pub presplit: bool,
    /// Move spill slots into the registers the allocation left free below `max_regs`
    /// (`alloc::promote`), in functions that neither are subroutines (`presplit` off,
    /// `save_cost` set) nor call any.
    pub promote_slots: bool,
    /// At most how many registers above the fewest it finds the colouring may spread values
    /// over (`assign::colour`); `None`: as many as keep the occupancy. The driver tries the
    /// tight colouring (`Some(0)`) where the spread costs registers, and keeps it where its
    /// schedule is as fast (`driver::compile_kernel`).
    pub spread_extra: Option<u32>,
}

impl Default for AllocOptions {
    fn default() -> Self {
        AllocOptions {
            max_regs: 255,
            checker: false,
            spill_base: 0,
            save_cost: [0; 4],
            presplit: true,
            promote_slots: true,
            spread_extra: None,
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
    /// The checker of the final assignment (`machinst::check`: which value each physical
    /// register holds at each use, after the colouring across widths) found it wrong.
    #[error("register assignment checker: {0}")]
    Assignment(String),
}

/// One block after allocation.
#[derive(Clone, Debug)]
pub struct AllocatedBlock<I> {
    /// The block's number in the allocated code (its index in [`Allocated::blocks`]); branch
    /// instructions name these numbers.
    pub id: BlockId,
    /// The block of the input VCode it comes from; `None` for a block inserted to split a
    /// critical edge. Unreachable input blocks are dropped and a block laid out before all of its
    /// predecessors is moved after the first of them to be placed (regalloc2's checker needs
    /// that order), so blocks may be renumbered.
    pub origin: Option<BlockId>,
    pub insts: Vec<I>,
}

/// The result of [`allocate`].
#[derive(Clone, Debug)]
pub struct Allocated<I> {
    /// Blocks in layout order (critical-edge blocks included), instructions physical.
    pub blocks: Vec<AllocatedBlock<I>>,
    /// Highest GPR used + 1, at least 2 (R1), as ptxas reports "Used N registers".
    pub num_regs: u32,
    /// The fewest registers the colouring found before spreading values over more
    /// (`assign::colour`; `num_regs` where the code was not coloured).
    pub fewest_regs: u32,
    /// Bytes of local memory for spill slots, addressed `[R1 + spill_base + 4 * slot]`; the
    /// local frame is `spill_base` (rounded up to 16) + `spill_bytes`.
    pub spill_bytes: u32,
    /// Whether regalloc2's checker ran (and passed).
    pub checked: bool,
    /// How many predicates were spilled into GPRs.
    pub pred_spills: usize,
    /// Number of spill (store) instructions inserted.
    pub spills: usize,
    /// Whether the spills were forced by pressure: in some class that spilled at its limit of
    /// 64 registers (not held lower by `max_regs`), the values live at one point plus the
    /// class's fixed registers (which no value live across the call naming them can take)
    /// outnumber 64. False when nothing spilled.
    pub spills_forced: bool,
    /// Number of reload instructions inserted.
    pub reloads: usize,
    /// Registers in each regalloc2 class (Int, Float, Vector) of the environment that was used
    /// (64 names per class that has values where the name spaces were coloured).
    pub class_sizes: [usize; 3],
    /// What each class held: normally B32, B64, B128; a class the function had no values of may
    /// hold overflow scalars (B32).
    pub class_kinds: [RegKind; 3],
    /// What promotion and [`forward`] read, in a function that spilled and may have its slots
    /// promoted; taken by [`allocate_owned`].
    facts: Option<Box<forward::Facts>>,
}

impl<I> Allocated<I> {
    /// What spilling costs, for choosing between two allocations of one function: spill
    /// bytes first, then the spill and reload instructions.
    pub fn spill_cost(&self) -> (u32, usize) {
        (self.spill_bytes, self.spills + self.reloads)
    }
}

impl<I: MachInst> Allocated<I> {
    /// What the allocated code costs ([`weighted_cost`]: instructions, a slot access as
    /// [`SLOT_ACCESS_COST`], each in a loop [`LOOP_WEIGHT`] times), its loops read from its
    /// own layout: a block lies in a loop where a branch in it or after it goes back to it or
    /// before it. That over-counts a block laid out inside a loop's range without being in
    /// the loop (an exit block placed before the block that splits the back edge): natural
    /// loops would be exact. For the driver's retries, which chose by spill bytes alone and so kept, for
    /// fewer bytes of slots, code that ran its loops longer (CUB's 255-register radix-sort
    /// downsweep kernel: 248 -> 176 bytes of spills, 7,137 -> 8,368 instructions and 1.7
    /// times the cycles, after an unrelated change moved its allocation).
    pub fn code_cost(&self) -> u64 {
        let mut in_loop = vec![false; self.blocks.len()];
        for (b, blk) in self.blocks.iter().enumerate() {
            for inst in &blk.insts {
                for t in inst.branch_targets() {
                    let t = t.0 as usize;
                    if t <= b {
                        in_loop[t..=b].iter_mut().for_each(|x| *x = true);
                    }
                }
            }
        }
        weighted_cost(self, &in_loop)
    }
}

const KINDS: [RegKind; 3] = [RegKind::B32, RegKind::B64, RegKind::B128];

fn class_index(kind: RegKind) -> usize {
    match kind {
        RegKind::B32 | RegKind::Pred => 0,
        RegKind::B64 => 1,
        RegKind::B128 => 2,
    }
}

/// Physical base registers per class, packed from R0 upward: fixed registers first, then
/// quads at 4-aligned bases, pairs at even bases, scalars in what is left. `None` if `sizes`
/// does not fit below `max_regs`.
fn layout(
    kinds: &[RegKind; 3],
    sizes: [usize; 3],
    fixed: &[(RegKind, PhysReg)],
    max_regs: u8,
    reserve0: bool,
) -> Option<[Vec<u8>; 3]> {
    let top = max_regs as usize;
    let mut free = vec![true; top];
    if top > 1 {
        free[1] = false; // stack pointer
    }
    if reserve0 && top > 0 {
        // Named outright by the code (the dynamic stack pointer of a function with
        // `alloca`, `lower::select::stack`): never handed out.
        free[0] = false;
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
        let w = kinds[c].gprs() as usize;
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

/// Whether some instruction names R0 outright (a physical operand, not a fixed constraint):
/// then R0 is in no class.
fn names_r0<I: MachInst>(insts: &[I]) -> bool {
    let mut found = false;
    for inst in insts {
        inst.for_each_operand(&mut |r, _| found |= r == Reg::Phys(PhysReg(0)));
        if found {
            break;
        }
    }
    found
}

/// Pick class sizes: start at `want` (capped at 64), never below `min`, shrink the largest
/// demand until the layout fits.
fn fit_sizes(
    kinds: &[RegKind; 3],
    want: [usize; 3],
    min: [usize; 3],
    fixed: &[(RegKind, PhysReg)],
    max_regs: u8,
    reserve0: bool,
) -> Result<[Vec<u8>; 3], AllocError> {
    if let Some(c) = (0..3).find(|c| min[*c] > 64) {
        return Err(AllocError::TooFewRegisters(format!(
            "one instruction names {} {:?} registers; a class holds at most 64",
            min[c], kinds[c]
        )));
    }
    let mut sizes = [0usize; 3];
    for c in 0..3 {
        sizes[c] = want[c].max(min[c]).min(64);
    }
    loop {
        if let Some(l) = layout(kinds, sizes, fixed, max_regs, reserve0) {
            return Ok(l);
        }
        // shrink the class using the most registers that is still above its minimum
        let victim = (0..3)
            .filter(|c| sizes[*c] > min[*c])
            .max_by_key(|c| sizes[*c] * kinds[*c].gprs() as usize);
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

/// Whether register `r` of class `c` is one of the fixed registers.
fn is_fixed(fixed: &[(RegKind, PhysReg)], c: usize, r: u8) -> bool {
    fixed.iter().any(|(k, f)| class_index(*k) == c && f.0 == r)
}

/// Renumber the registers regalloc2 actually used so that they pack from R0 upward.
///
/// Within a class every register is interchangeable (no aliasing, no ABI), so any injective,
/// aligned renaming of a class's registers keeps the allocation valid; only fixed registers
/// must stay where they are. ion does not prefer low registers, so without this the register
/// count would be the top of each class slice rather than the number of registers in use.
/// Returns, per class, the physical base register of every regalloc2 register index.
fn compact(
    kinds: &[RegKind; 3],
    classes: &[Vec<u8>; 3],
    fixed: &[(RegKind, PhysReg)],
    out: &ra::Output,
    max_regs: u8,
    reserve0: bool,
) -> [Vec<u8>; 3] {
    let mut used: [Vec<bool>; 3] = [0, 1, 2].map(|c| vec![false; classes[c].len()]);
    let mut mark = |a: ra::Allocation| {
        if let Some(p) = a.as_reg() {
            used[class_of(p.class())][p.hw_enc()] = true;
        }
    };
    out.allocs.iter().for_each(|a| mark(*a));
    for (_, ra::Edit::Move { from, to }) in &out.edits {
        mark(*from);
        mark(*to);
    }
    let mut sizes = [0usize; 3];
    for c in 0..3 {
        sizes[c] = (0..classes[c].len())
            .filter(|i| used[c][*i] || is_fixed(fixed, c, classes[c][*i]))
            .count();
    }
    let Some(packed) = layout(kinds, sizes, fixed, max_regs, reserve0) else {
        return classes.clone();
    };
    let mut map = classes.clone();
    for c in 0..3 {
        let nfixed = in_class(fixed, c);
        let mut next = packed[c][nfixed..].iter();
        for (i, base) in classes[c].iter().enumerate() {
            if used[c][i] && !is_fixed(fixed, c, *base) {
                match next.next() {
                    Some(b) => map[c][i] = *b,
                    None => return classes.clone(),
                }
            }
        }
    }
    map
}

/// regalloc2's environment for the class slices `classes`: every register preferred but
/// those of `last` (non-preferred: tried after all the others).
/// Resolves the function's fixed operands and clobbers to regalloc2 registers of `classes`
/// (each class's list of register names; a fixed register is the index of its name there).
/// `fixed_regs` lists every clobbered register and every fixed constraint: with none,
/// resolving them would only reset the clobber sets (and it costs a walk over every operand
/// of the function per attempt), so that case takes the short path.
fn resolve_fixed_in<I: MachInst>(
    vc: &mut VCode<I>,
    classes: &[Vec<u8>; 3],
    fixed: &[(RegKind, PhysReg)],
) -> Result<(), AllocError> {
    if fixed.is_empty() {
        vc.resolve_no_fixed();
        return Ok(());
    }
    let to_preg = |kind: RegKind, r: PhysReg| {
        let c = class_index(kind);
        classes[c]
            .iter()
            .position(|b| *b == r.0)
            .map(|i| ra::PReg::new(i, ra_class(kind)))
    };
    vc.resolve_fixed(&to_preg).map_err(AllocError::Invalid)
}

fn machine_env(classes: &[Vec<u8>; 3], last: &[(RegKind, PhysReg)]) -> ra::MachineEnv {
    let mut preferred = [ra::PRegSet::empty(); 3];
    let mut non_preferred = [ra::PRegSet::empty(); 3];
    for (c, regs) in classes.iter().enumerate() {
        for (i, r) in regs.iter().enumerate() {
            let p = ra::PReg::new(i, ra_class(KINDS[c])); // class c by identity
            if last.iter().any(|(k, f)| class_index(*k) == c && f.0 == *r) {
                non_preferred[c].add(p);
            } else {
                preferred[c].add(p);
            }
        }
    }
    ra::MachineEnv {
        preferred_regs_by_class: preferred,
        non_preferred_regs_by_class: non_preferred,
        scratch_by_class: [None; 3],
        fixed_stack_slots: Vec::new(),
    }
}

/// How many of `regs` are in allocation class `c`.
fn in_class(regs: &[(RegKind, PhysReg)], c: usize) -> usize {
    regs.iter().filter(|(k, _)| class_index(*k) == c).count()
}

fn class_of(rc: ra::RegClass) -> usize {
    match rc {
        ra::RegClass::Int => 0,
        ra::RegClass::Float => 1,
        ra::RegClass::Vector => 2,
    }
}

/// The class sizes to start from and the least each class must have (see [`Pressure`]).
///
/// Start at the pressure estimate (every register of a class costs 1, 2 or 4 GPRs whether
/// used or not, so slack is expensive); constraints such as early defs can need more, and
/// then the allocation spills and the retry in [`allocate_owned`] grows the class (without
/// running regalloc2 where `Pressure::exact` already says it must spill). Fixed registers (a
/// call's operands and clobbers) sit in their class on top of what the pressure estimate
/// asks for: values that live across the call cannot use them.
fn start_sizes<I: MachInst>(
    vc: &VCode<I>,
    press: &Pressure,
    fixed: &[(RegKind, PhysReg)],
) -> ([usize; 3], [usize; 3]) {
    let used: [bool; 3] = [0, 1, 2].map(|c| {
        vc.vregs
            .iter()
            .zip(&vc.classes)
            .any(|(k, rc)| *k != RegKind::Pred && class_of(*rc) == c)
    });
    let mut want = [0usize; 3];
    for c in 0..3 {
        if used[c] {
            want[c] = press.max[c] + in_class(fixed, c);
        }
    }
    (want, press.min_needed)
}

/// What [`allocate_names`] returns: the classes, regalloc2's output, the name-level code and
/// the physical base register of each of its accesses.
/// The name classes, regalloc2's output, the named program, each access's register, and the
/// fewest registers the colouring found (before spreading).
type Named = ([Vec<u8>; 3], ra::Output, NameProg, (Vec<u8>, Option<u32>));

/// Run regalloc2 on `vc` in `env`, taking its output out of the thread's context.
fn run_ra<I: MachInst>(
    vc: &VCode<I>,
    env: &ra::MachineEnv,
    ra_opts: &ra::RegallocOptions,
) -> Result<ra::Output, AllocError> {
    RA_CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        if let Err(e) = ra::run_with_ctx(vc, env, ra_opts, &mut ctx) {
            return Err(AllocError::Regalloc(format!("{e:?}")));
        }
        Ok(std::mem::take(&mut ctx.output))
    })
}

/// The allocation with name spaces (see the module essay of `machinst`): every class that
/// holds values gets 64 names, the fixed registers' first (regalloc2 tries them last), and
/// regalloc2 runs once. `None` where it spills (a class with more than 64 values live at once,
/// or fixed registers it could not work around) or where the names' colouring ([`assign`])
/// does not fit below `max_regs`: the class slices then allocate, with spills, in what fits.
/// The classes returned give, per class, the fixed register of each of its first names (the
/// other entries are placeholders that only keep every entry distinct).
fn allocate_names<I: MachInst>(
    vc: &mut VCode<I>,
    kinds: &[RegKind; 3],
    fixed: &[(RegKind, PhysReg)],
    ra_opts: &ra::RegallocOptions,
    opts: &AllocOptions,
    hint: u32,
    limits: Option<[usize; 3]>,
) -> Result<Option<Named>, AllocError> {
    let (max_regs, checker) = (opts.max_regs, opts.checker);
    let used: [bool; 3] = [0, 1, 2].map(|c| {
        in_class(fixed, c) > 0
            || vc
                .vregs
                .iter()
                .zip(&vc.classes)
                .any(|(k, rc)| *k != RegKind::Pred && class_of(*rc) == c)
    });
    let classes: [Vec<u8>; 3] = [0, 1, 2].map(|c| {
        if !used[c] {
            return Vec::new();
        }
        let mut names: Vec<u8> = fixed
            .iter()
            .filter(|(k, _)| class_index(*k) == c)
            .map(|(_, r)| r.0)
            .collect();
        let mut filler = 0u8..=254;
        let size = limits.map_or(assign::PER_CLASS, |l| l[c].clamp(1, assign::PER_CLASS));
        while names.len() < size {
            match filler.next() {
                Some(x) if !names.contains(&x) => names.push(x),
                Some(_) => {}
                None => break,
            }
        }
        names
    });
    if classes.iter().any(|c| c.len() > assign::PER_CLASS) {
        return Ok(None);
    }
    resolve_fixed_in(vc, &classes, fixed)?;
    let env = machine_env(&classes, fixed);
    let Ok(out) = run_ra(vc, &env, ra_opts) else {
        return Ok(None);
    };
    let spills = out
        .edits
        .iter()
        .any(|(_, ra::Edit::Move { from, to })| from.is_stack() || to.is_stack());
    if spills && limits.is_none() {
        return Ok(None);
    }
    let prog = NameProg::build(vc, &out, kinds).map_err(AllocError::Regalloc)?;
    let webs = Webs::build(&prog);
    let Some((per_acc, _, fewest)) = assign::colour(
        &webs,
        &precolours(&classes, fixed),
        max_regs,
        hint,
        opts.spread_extra,
        &opts.save_cost,
    ) else {
        return Ok(None);
    };
    if checker {
        let mut checker = ra::checker::Checker::new(vc, &env);
        checker.prepare(&out);
        checker
            .run()
            .map_err(|e| AllocError::Checker(format!("{e:?}")))?;
    }
    Ok(Some((classes, out, prog, (per_acc, Some(fewest)))))
}

/// The name spaces under a register budget (see the end of [`allocate_owned`]): each class
/// first gets as many names as the budget holds of its width, then fewer (a fifth less each
/// time, never below what one instruction needs) until regalloc2's allocation, spills and
/// all, colours below `max_regs`; `None` where no size tried does.
fn tight_names<I: MachInst>(
    vc: &mut VCode<I>,
    kinds: &[RegKind; 3],
    min_needed: [usize; 3],
    ra_opts: &ra::RegallocOptions,
    opts: &AllocOptions,
) -> Result<Option<Named>, AllocError> {
    let max_regs = opts.max_regs;
    // R1 and, for alignment, the register before it are never a value's
    let room = (max_regs as usize).saturating_sub(2);
    let mut limits = [0, 1, 2].map(|c| {
        (room / kinds[c].gprs().max(1) as usize)
            .min(assign::PER_CLASS)
            .max(min_needed[c])
    });
    for _ in 0..8 {
        let hint = u32::from(max_regs);
        if let Some(n) = allocate_names(vc, kinds, &[], ra_opts, opts, hint, Some(limits))? {
            return Ok(Some(n));
        }
        let mut changed = false;
        for c in 0..3 {
            let n = (limits[c] * 4 / 5).max(min_needed[c]).max(1);
            if n < limits[c] {
                limits[c] = n;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Ok(None)
}

/// Per name (class `c`, index `i` is name `64 c + i`), the physical register it is pinned
/// to: the names of fixed registers.
fn precolours(classes: &[Vec<u8>; 3], fixed: &[(RegKind, PhysReg)]) -> Vec<Option<u8>> {
    let mut out = vec![None; assign::NAMES];
    for (c, regs) in classes.iter().enumerate() {
        for (i, r) in regs.iter().enumerate().take(assign::PER_CLASS) {
            if fixed.iter().any(|(k, f)| class_index(*k) == c && f.0 == *r) {
                out[c * assign::PER_CLASS + i] = Some(*r);
            }
        }
    }
    out
}

/// Highest register an access covers + 1, at least 2 (R1).
fn count_regs(prog: &NameProg, per_acc: &[u8]) -> u32 {
    prog.accs
        .iter()
        .zip(per_acc)
        .zip(&prog.acc_widths)
        .filter(|((a, _), _)| !a.clobber)
        .map(|((_, r), w)| *r as u32 + *w as u32)
        .max()
        .unwrap_or(0)
        .max(2)
}

thread_local! {
    /// regalloc2's working memory, kept from one allocation to the next on this thread
    /// (`ra::run` would allocate and zero every table of it again for each function; its
    /// `Env::new` resets whatever a previous run left, so the result does not depend on it).
    /// The output is taken out for the caller, and its vectors are handed back at the end.
    static RA_CTX: std::cell::RefCell<ra::Ctx> = std::cell::RefCell::new(ra::Ctx::default());
}

/// What [`rewrite`] returns: the blocks, the numbers of spills and reloads, per block what
/// the final-assignment checker reads, and, where asked for, the operands' widths and the
/// checker's operation of each instruction ([`forward::Facts`]).
type Rewritten<I> = (
    Vec<AllocatedBlock<I>>,
    usize,
    usize,
    Vec<Vec<check::Op>>,
    Option<Widths>,
);

/// Per block, per instruction: [`forward::Facts::words`], and the index of its checker
/// operation ([`forward::CheckInput::op_of`]; empty without the checker).
type Widths = (Vec<Vec<SmallVec<[u8; 4]>>>, Vec<Vec<usize>>);

/// The allocated blocks: the instructions of `vc` (taken out of it) with every virtual
/// register replaced by its physical register (`acc_phys` per access of `prog`, the
/// prepared predicates' registers for predicates), and `prog`'s moves, spills (to the spill
/// base + 4 per slot) and reloads between them; a move to its own register is left out. The
/// checker's operations are only gathered when `checker` is set, the widths with `widths`.
fn rewrite<I: MachInst>(
    vc: &mut VCode<I>,
    prog: &NameProg,
    acc_phys: &[u8],
    prep: &Prepared,
    checker: bool,
    widths: bool,
) -> Result<Rewritten<I>, AllocError> {
    let spill_base = prep.spill_base;
    let (mut spills, mut reloads) = (0, 0);
    let mut blocks = Vec::with_capacity(vc.num_blocks());
    // What the final-assignment checker reads, per block (only filled when it runs).
    let mut check_ops: Vec<Vec<check::Op>> = Vec::new();
    let (mut all_words, mut all_op_of) = (Vec::new(), Vec::new());
    // The instructions move into the result (each is visited once; the edits iterator only
    // needs the block ranges), rather than being cloned. The blocks' ranges are consecutive
    // from 0 (`VCode`'s invariant) and regalloc2 yields each block's instructions in order,
    // so they come out in index order: they are taken straight from the vector's iterator
    // (one move each, not a move into an `Option` slot and another out of it).
    let mut taken = std::mem::take(&mut vc.insts).into_iter().enumerate();
    for b in 0..vc.num_blocks() {
        let (s, e) = vc.ranges[b];
        let (ss, se) = prog.blocks[b];
        let mut insts = Vec::with_capacity((e - s) as usize + 4);
        let mut ops = Vec::new();
        // per instruction pushed: its operands' widths and its checker operation
        let (mut words_of, mut op_of): (Vec<SmallVec<[u8; 4]>>, Vec<usize>) = Default::default();
        let mut note = |words: SmallVec<[u8; 4]>, ops: &Vec<check::Op>| {
            if widths {
                words_of.push(words);
                if checker {
                    op_of.push(ops.len() - 1);
                }
            }
        };
        for step in &prog.steps[ss as usize..se as usize] {
            let at = |k: usize| step.start as usize + k;
            let reg = |k: usize| acc_phys[at(k)];
            let words = |k: usize| prog.acc_widths[at(k)];
            // the value's kind (a class may hold overflow scalars besides its own kind)
            let kind_of = |k: usize| match words(k) {
                1 => RegKind::B32,
                2 => RegKind::B64,
                _ => RegKind::B128,
            };
            match step.kind {
                StepKind::Move => {
                    let (f, t) = (reg(0), reg(1));
                    ops.push(check::Op::Move {
                        from: f,
                        to: t,
                        words: words(1),
                    });
                    if f != t {
                        insts.push(I::gen_move(PhysReg(t), PhysReg(f), kind_of(1)));
                        note(smallvec::smallvec![words(1), words(1)], &ops);
                    }
                }
                StepKind::Spill | StepKind::Reload => {
                    let slot = step.slot;
                    let offset = spill_base + slot * 4;
                    if step.kind == StepKind::Spill {
                        spills += 1;
                        insts.push(I::gen_spill(offset, PhysReg(reg(0)), kind_of(0)));
                        ops.push(check::Op::Spill {
                            from: reg(0),
                            slot,
                            words: words(0),
                        });
                        note(smallvec::smallvec![words(0), 0], &ops);
                    } else {
                        reloads += 1;
                        insts.push(I::gen_reload(PhysReg(reg(0)), offset, kind_of(0)));
                        ops.push(check::Op::Reload {
                            to: reg(0),
                            slot,
                            words: words(0),
                        });
                        note(smallvec::smallvec![words(0), 0], &ops);
                    }
                }
                StepKind::Inst(i) => {
                    let mut inst = match taken.next() {
                        Some((n, inst)) if n == i as usize => inst,
                        _ => {
                            return Err(AllocError::Regalloc(format!(
                                "instruction {i} placed out of order"
                            )))
                        }
                    };
                    let packs: SmallVec<[(u32, u32, u8); 4]> = inst
                        .pack_words()
                        .into_iter()
                        .map(|(d, s, word)| (d.index, s.index, word))
                        .collect();
                    let mut k = 0;
                    let mut bad = None;
                    let (mut uses, mut defs) = (Vec::new(), Vec::new());
                    let mut inst_words: SmallVec<[u8; 4]> = SmallVec::new();
                    inst.visit_operands(&mut |r, spec| {
                        // (0 unless the operand gets its register here, set below)
                        inst_words.push(0);
                        let Reg::Virt(v) = *r else { return };
                        if v.kind == RegKind::Pred {
                            match prep.preds.get(&v.index) {
                                Some(p) => *r = Reg::Pred(*p),
                                None => bad = Some(format!("predicate {v} has no register")),
                            }
                            return;
                        }
                        if at(k) >= step.end as usize {
                            bad = Some(format!("{v} did not get a register"));
                            return;
                        }
                        let base = reg(k);
                        let (phys, first_word, n) = match spec.half {
                            Some(super::Half::Hi) => (base + 1, 1, 1),
                            Some(super::Half::Lo) => (base, 0, 1),
                            None => (base, 0, v.kind.gprs() as u8),
                        };
                        *r = Reg::Phys(PhysReg(phys));
                        if let Some(last) = inst_words.last_mut() {
                            *last = n;
                        }
                        if checker {
                            let o = check::Operand {
                                vreg: v.index,
                                reg: phys,
                                words: n,
                                first_word,
                                odd_pos: (spec.kind == OpKind::Def) == (spec.pos == OpPos::Early),
                            };
                            if spec.kind == OpKind::Def {
                                defs.push(o);
                            } else {
                                uses.push(o);
                            }
                        }
                        k += 1;
                    });
                    if let Some(msg) = bad {
                        return Err(AllocError::Regalloc(msg));
                    }
                    let copy = step.copy.is_some() || step.part.is_some();
                    if checker {
                        ops.push(check::Op::Inst {
                            at: insts.len(),
                            uses,
                            defs,
                            clobbers: inst.clobbers().0,
                            copy,
                            copy_word: step.part.map_or(0, |(_, _, word)| word),
                            packs,
                        });
                    }
                    if let Some((Reg::Phys(d), Reg::Phys(s))) = inst.is_move() {
                        if u32::from(d.0) == u32::from(s.0) + u32::from(inst.move_word()) {
                            continue;
                        }
                    }
                    if inst.drop_identity_copies() {
                        continue;
                    }
                    insts.push(inst);
                    note(inst_words, &ops);
                }
            }
        }
        if checker {
            check_ops.push(ops);
        }
        if widths {
            all_words.push(words_of);
            all_op_of.push(op_of);
        }
        blocks.push(AllocatedBlock {
            id: BlockId(b as u32),
            origin: prep.origins.get(b).copied().flatten(),
            insts,
        });
    }
    let widths = widths.then_some((all_words, all_op_of));
    Ok((blocks, spills, reloads, check_ops, widths))
}

/// Allocate registers for `vcode` (see the module essays of `machinst` and this file).
pub fn allocate<I: MachInst>(
    vcode: &VCode<I>,
    opts: &AllocOptions,
) -> Result<Allocated<I>, AllocError> {
    allocate_owned(vcode.clone(), opts)
}

/// [`allocate`], consuming the code (no copy of it is made).
pub fn allocate_owned<I: MachInst>(
    vcode: VCode<I>,
    opts: &AllocOptions,
) -> Result<Allocated<I>, AllocError> {
    // Spill slots go into free registers last (`promote`), in kernels that call nothing: a
    // subroutine's registers above its own count are its callers', and a callee writes
    // registers its caller does not see.
    // (the input's CFG is kept for the loops, which are only looked for where it spilled)
    let cfg = may_promote(&vcode, opts).then(|| promote::successors(&vcode));
    let mut out = allocate_in_registers_and_slots(vcode, opts)?;
    let facts = out.facts.take();
    if let Some(cfg) = cfg.filter(|_| out.spill_bytes > 0) {
        let loops = promote::blocks_in_loops(&cfg);
        let mut facts = facts.map(|f| *f);
        promote::promote(
            &mut out,
            spill_area(opts)?,
            opts.max_regs,
            &loops,
            facts.as_mut(),
        );
        // then the reloads' moves that the code can do without (`forward`)
        if let Some(facts) = facts {
            forward::forward(&mut out, facts)?;
        }
    }
    Ok(out)
}

/// Whether spill slots of `vcode` may go into registers ([`promote`]): asked for, and neither
/// a subroutine nor a function that calls one.
fn may_promote<I: MachInst>(vcode: &VCode<I>, opts: &AllocOptions) -> bool {
    opts.promote_slots && opts.presplit && opts.save_cost == [0; 4] && !vcode.has_clobbers()
}

/// Where the spill area starts: `AllocOptions::spill_base` rounded up to 16.
fn spill_area(opts: &AllocOptions) -> Result<u32, AllocError> {
    opts.spill_base.checked_next_multiple_of(16).ok_or_else(|| {
        AllocError::TooFewRegisters(format!("spill base {:#x} is out of range", opts.spill_base))
    })
}

/// [`allocate_owned`] up to the promotion of spill slots into registers.
fn allocate_in_registers_and_slots<I: MachInst>(
    vcode: VCode<I>,
    opts: &AllocOptions,
) -> Result<Allocated<I>, AllocError> {
    let spill_base = spill_area(opts)?;
    // Each pass takes the code and hands it back untouched when it has nothing to do.
    let (reachable, origins) = prune_unreachable(vcode).map_err(AllocError::Invalid)?;
    let pa = allocate_preds(reachable).map_err(AllocError::Predicates)?;
    let (mut vc, split_origin) = split_edges(pa.vcode).map_err(AllocError::Invalid)?;
    // The passes above rebuild the code without regalloc2's views; regalloc2 needs them.
    vc.ensure_derived().map_err(AllocError::Invalid)?;
    // per allocated block: the input block it comes from (None for an edge block)
    let origins: Vec<Option<BlockId>> =
        split_origin.iter().map(|b| b.map(|o| origins[o])).collect();
    let fixed = fixed_regs(&vc.insts);
    let press = pressure(&vc);
    let prep = Prepared {
        reserve0: names_r0(&vc.insts),
        preds: pa.assignment,
        pred_spills: pa.spilled,
        origins,
        fixed,
        spill_base,
        presplit: spill::Spilled::default(),
    };
    if !opts.presplit || prep.reserve0 {
        return allocate_pressed(vc, &prep, opts, press);
    }
    // Spilling before regalloc2 (`spill`): first down to what all of regalloc2's names hold,
    // scalars spread over its three classes (`overflow_scalars`); where regalloc2 still
    // spills (that spread is a greedy guess and can overflow one class), once more down to
    // the scalar class's own names, and the allocation with fewer instructions is kept.
    let spread = spill_limits(&prep.fixed, opts.max_regs, true);
    let own = spill_limits(&prep.fixed, opts.max_regs, false);
    let again = press_exceeds(&press, &own).then(|| vc.clone());
    // Under a register budget the limits above count names only, so regalloc2 does the
    // spilling, and it neither recomputes a value nor chooses by the next read; kept aside
    // for [`budget_presplit`].
    let budgeted = (opts.max_regs < 255).then(|| vc.clone());
    let (first, first_bytes) = allocate_split(vc, &prep, opts, press, &spread)?;
    let best = match again.filter(|_| first.spill_bytes > first_bytes) {
        None => first,
        Some(vc) => {
            let press = pressure(&vc);
            let (second, _) = allocate_split(vc, &prep, opts, press, &own)?;
            let insts = |a: &Allocated<I>| a.blocks.iter().map(|b| b.insts.len()).sum::<usize>();
            if insts(&second) < insts(&first) {
                second
            } else {
                first
            }
        }
    };
    match budgeted.filter(|_| best.spill_bytes > 0) {
        Some(vc) => budget_presplit(vc, &prep, opts, best),
        None => Ok(best),
    }
}

/// Under a register budget where `best` spills: [`spill::presplit`] down to the budget's
/// words as well (Belady's rule; constants, constant-bank words and thread indices computed
/// again at their reads rather than stored), then regalloc2; the allocation whose code costs
/// less ([`weighted_cost`], with the loops of `vc`'s blocks) is kept.
/// matrixMul at `--maxrregcount=16` stored `SR_CTAID.X`, `SR_CTAID.Y` and `SR_TID.Y` to
/// local memory where one `S2R` brings each back. An allocation that fails (the presplit
/// code does not fit the budget) leaves `best`; a checker's rejection is returned.
fn budget_presplit<I: MachInst>(
    vc: VCode<I>,
    prep: &Prepared,
    opts: &AllocOptions,
    best: Allocated<I>,
) -> Result<Allocated<I>, AllocError> {
    let fixed_words: usize = prep.fixed.iter().map(|(k, _)| k.gprs() as usize).sum();
    let mut lim = spill_limits(&prep.fixed, opts.max_regs, true);
    lim.words = (opts.max_regs as usize).saturating_sub(1 + fixed_words + SPILL_SLACK);
    let press = pressure(&vc);
    if lim.words == 0 || !press_exceeds(&press, &lim) {
        return Ok(best);
    }
    let loops = &promote::blocks_in_loops(&promote::successors(&vc));
    match allocate_split(vc, prep, opts, press, &lim) {
        Ok((other, _)) if weighted_cost(&other, loops) < weighted_cost(&best, loops) => Ok(other),
        // a checker's verdict is a bug to report, not a reason to fall back
        Err(e @ (AllocError::Checker(_) | AllocError::Assignment(_))) => Err(e),
        _ => Ok(best),
    }
}

/// A local-memory access of a spill slot counts as this many instructions in
/// [`weighted_cost`] (its latency, which the scheduler hides only in part).
const SLOT_ACCESS_COST: u64 = 4;

/// An instruction in a loop counts this many times in [`weighted_cost`].
const LOOP_WEIGHT: u64 = 8;

/// What the code of an allocation costs, for [`budget_presplit`]'s choice: its instructions,
/// a spill slot's `STL`/`LDL` as [`SLOT_ACCESS_COST`] instructions, each instruction in a
/// block of a loop (`loops`, per block) [`LOOP_WEIGHT`] times. Spill bytes alone chose badly:
/// the presplit code can keep fewer bytes of slots and still load them more often, or
/// rematerialise a value at each read inside a loop.
fn weighted_cost<I: MachInst>(a: &Allocated<I>, loops: &[bool]) -> u64 {
    let access = |i: &I| {
        if i.as_slot_access().is_some() {
            SLOT_ACCESS_COST
        } else {
            1
        }
    };
    a.blocks
        .iter()
        .enumerate()
        .map(|(b, blk)| {
            let w = if loops.get(b) == Some(&true) {
                LOOP_WEIGHT
            } else {
                1
            };
            w * blk.insts.iter().map(access).sum::<u64>()
        })
        .sum()
}

/// [`allocate_pressed`] after [`spill::presplit`] down to `lim` where the pressure exceeds it;
/// also returns the bytes of the pass's slots.
fn allocate_split<I: MachInst>(
    mut vc: VCode<I>,
    prep: &Prepared,
    opts: &AllocOptions,
    mut press: Pressure,
    lim: &spill::Limits,
) -> Result<(Allocated<I>, u32), AllocError> {
    if !press_exceeds(&press, lim) {
        return Ok((allocate_pressed(vc, prep, opts, press)?, 0));
    }
    let (code, spilled) = spill::presplit(vc, lim, prep.spill_base).map_err(AllocError::Invalid)?;
    vc = code;
    vc.ensure_derived().map_err(AllocError::Invalid)?;
    press = pressure(&vc);
    let prep = Prepared {
        spill_base: prep.spill_base + spilled.bytes,
        presplit: spilled,
        ..prep.clone()
    };
    Ok((allocate_pressed(vc, &prep, opts, press)?, spilled.bytes))
}

/// The allocation of prepared code whose pressure is `press`.
fn allocate_pressed<I: MachInst>(
    vc: VCode<I>,
    prep: &Prepared,
    opts: &AllocOptions,
    press: Pressure,
) -> Result<Allocated<I>, AllocError> {
    // More scalars live at once than the Int class has names: spread them over the other
    // classes too (see `overflow_scalars`). Where that allocation still spills (the register
    // file itself is full), the one without mixed classes is made as well and the one with
    // less local memory kept: spilling, class slices of mixed widths waste registers (a
    // scalar in the pair class's slice takes two).
    if press.exact[0] + in_class(&prep.fixed, 0) > 64 {
        let plain = vc.clone();
        // (`None`: the mixed classes ended in class slices, which cannot hold two widths,
        // see the end of `allocate_prepared`; the allocation without mixing is then the one)
        let mixed = allocate_prepared(vc, prep, opts, press, true)?;
        let mixed = match mixed {
            Some(m) if m.spill_bytes == prep.presplit.bytes => return Ok(m),
            m => m,
        };
        let press = pressure(&plain);
        let other = plain_allocation(allocate_prepared(plain, prep, opts, press, false)?)?;
        let Some(mixed) = mixed else {
            return Ok(other);
        };
        return Ok(if other.spill_cost() < mixed.spill_cost() {
            other
        } else {
            mixed
        });
    }
    plain_allocation(allocate_prepared(vc, prep, opts, press, false)?)
}

/// What regalloc2 holds in registers at once (see [`spill::Limits`]): per class its 64 names
/// less the class's fixed registers; all classes' names together (scalars overflow into the
/// other classes, [`overflow_scalars`]); and, without a budget, the registers but R1, less the
/// fixed ones, and a few that alignment may leave unusable where widths mix.
/// Without `spread`, scalars count against the Int class's own names.
fn spill_limits(fixed: &[(RegKind, PhysReg)], max_regs: u8, spread: bool) -> spill::Limits {
    let mut class = [0, 1, 2].map(|c| assign::PER_CLASS.saturating_sub(in_class(fixed, c)));
    let fixed_words: usize = fixed.iter().map(|(k, _)| k.gprs() as usize).sum();
    let names = (3 * assign::PER_CLASS).saturating_sub(fixed.len());
    if spread {
        // scalars beyond the Int class's names go to the other classes
        class[0] = names;
    }
    spill::Limits {
        class,
        names,
        // Under a register budget (`--maxrregcount`, the occupancy-step retry of
        // `driver::allocate`) only the names count: there the name spaces under the budget
        // and the class slices spill what must be spilled, and the words limit (the fixed
        // registers counted as taken everywhere) spilled integrateBodies<false>, which fits
        // its occupancy step without a spill. Where regalloc2 then spills,
        // `budget_presplit` tries the words limit as well.
        words: if max_regs < 255 {
            usize::MAX
        } else {
            (max_regs as usize).saturating_sub(1 + fixed_words + SPILL_SLACK)
        },
    }
}

/// Registers [`spill_limits`] leaves for the alignment of pairs and quads.
const SPILL_SLACK: usize = 3;

/// Whether the pressure may exceed `lim` somewhere: a class above its names, or the peaks of
/// all classes together above the names or the words (the peaks need not coincide; the
/// pass finds out).
fn press_exceeds(press: &Pressure, lim: &spill::Limits) -> bool {
    let e = &press.exact;
    (0..3).any(|c| e[c] > lim.class[c])
        || e.iter().sum::<usize>() > lim.names
        || e[0] + 2 * e[1] + 4 * e[2] > lim.words
}

/// An allocation without mixed classes, which [`allocate_prepared`] always finishes.
fn plain_allocation<I: MachInst>(a: Option<Allocated<I>>) -> Result<Allocated<I>, AllocError> {
    a.ok_or_else(|| AllocError::Regalloc("classes of mixed widths without mixing".into()))
}

/// Whether some class of `vc` holds values of another width than its kind's (overflow
/// scalars in the pair or quad class beside the class's own pairs or quads, see
/// [`overflow_scalars`] with `mix`).
fn has_mixed_classes<I: MachInst>(vc: &VCode<I>, kinds: &[RegKind; 3]) -> bool {
    vc.vregs
        .iter()
        .zip(&vc.classes)
        .any(|(k, rc)| *k != RegKind::Pred && k.gprs() != kinds[class_of(*rc)].gprs())
}

/// What [`allocate_owned`] has found before regalloc2 runs, besides the code.
#[derive(Clone)]
struct Prepared {
    /// The code names R0 outright (see [`names_r0`]).
    reserve0: bool,
    /// The predicates' registers and how many were spilled (`pred::allocate_preds`).
    preds: rustc_hash::FxHashMap<u32, super::PhysPred>,
    pred_spills: usize,
    /// Per allocated block, the input block it comes from (None for an edge block).
    origins: Vec<Option<BlockId>>,
    fixed: Vec<(RegKind, PhysReg)>,
    /// Where regalloc2's spill slots start: `AllocOptions::spill_base` rounded up to 16, above
    /// the slots of [`spill::presplit`].
    spill_base: u32,
    /// What [`spill::presplit`] inserted.
    presplit: spill::Spilled,
}

/// The allocation of prepared code `vc` (unreachable blocks dropped, predicates allocated,
/// critical edges split) whose pressure is `press`; with `mix`, scalars beyond the Int
/// class's 64 names go to the pair and quad classes too, else only to classes the code has no
/// values of.
///
/// Long by design: the stages in their order (scalars spread over the classes, the name
/// spaces, the class slices of [`SliceSearch`], the tight names under a budget, the
/// physical registers, [`rewrite`]), each a call, with the state they hand on between them.
fn allocate_prepared<I: MachInst>(
    mut vc: VCode<I>,
    prep: &Prepared,
    opts: &AllocOptions,
    mut press: Pressure,
    mix: bool,
) -> Result<Option<Allocated<I>>, AllocError> {
    let (fixed, reserve0) = (&prep.fixed[..], prep.reserve0);
    let max_regs = opts.max_regs;
    let mut kinds = KINDS;
    // Whether the scalars have been spread over the other classes (once).
    let mut spread = false;
    if press.max[0] > 64 || (mix && press.exact[0] + in_class(fixed, 0) > 64) {
        if let Some(k) = overflow_scalars(&mut vc, fixed, mix).map_err(AllocError::Invalid)? {
            kinds = k;
            press = pressure(&vc);
            spread = true;
        }
    }
    let (want, min_needed) = start_sizes(&vc, &press, fixed);
    let ra_opts = ra::RegallocOptions {
        verbose_log: false,
        validate_ssa: true,
        algorithm: ra::Algorithm::Ion,
    };
    // First the name spaces: every class gets all 64 of regalloc2's names and the names
    // are coloured into physical registers afterwards ([`assign`]); taken when nothing
    // spills and the colouring fits below `max_regs`.
    // (about the registers the class slices would take: the colouring may spread values over
    // that many where it keeps the occupancy)
    let hint = 1
        + fixed.len() as u32
        + (0..3)
            .map(|c| press.max[c] as u32 * kinds[c].gprs())
            .sum::<u32>();
    // Code that names R0 (a kernel with `alloca`: R0 becomes the stack pointer after
    // allocation) keeps the class slices, which leave R0 out; the colouring knows no such rule.
    let named = if reserve0 {
        None
    } else {
        allocate_names(&mut vc, &kinds, fixed, &ra_opts, opts, hint, None)?
    };
    let mut named_code = None;
    let mut named = named.map(|(classes, out, prog, per_acc)| {
        named_code = Some((prog, per_acc));
        (classes, out)
    });
    // Where the budget cannot even hold each width's largest need at one instruction side by
    // side (the slices' sum; the instructions that need the most scalars and the most pairs
    // are seldom one), the name spaces under the budget may still colour (see below).
    let budget_names = !reserve0 && fixed.is_empty() && max_regs < 255;
    if named.is_none()
        && budget_names
        && fit_sizes(&kinds, want, min_needed, fixed, max_regs, reserve0).is_err()
    {
        if let Some((classes, out, prog, per_acc)) =
            tight_names(&mut vc, &kinds, min_needed, &ra_opts, opts)?
        {
            named_code = Some((prog, per_acc));
            named = Some((classes, out));
        }
    }
    // Then the class slices: each class gets registers of its own, sized from the pressure
    // and grown until regalloc2 allocates without spilling or spilling cannot be helped. After
    // each attempt the strategies of [`SliceSearch`] are asked in this order; the first that
    // changes something makes another attempt, and an attempt none of them can improve is
    // taken.
    let mut search = SliceSearch {
        kinds,
        press,
        want,
        min_needed,
        last_sizes: None,
        last_regs: None,
        spread,
    };
    let (mut classes, mut out, spills_forced) = loop {
        if let Some((classes, out)) = named.take() {
            break (classes, out, false);
        }
        let classes = search.fit(fixed, max_regs, reserve0)?;
        let sizes = [classes[0].len(), classes[1].len(), classes[2].len()];
        if search.grow_where_spill_is_certain(sizes) {
            continue;
        }
        let (env, out, spilled) = attempt(&mut vc, &classes, fixed, &search, &ra_opts)?;
        if search.try_fixed_registers_last(&vc, sizes, spilled, fixed, max_regs, reserve0) {
            continue;
        }
        if search.grow_spilled(sizes, spilled) {
            continue;
        }
        if search.overflow_scalars_once(&mut vc, spilled, fixed)? {
            continue;
        }
        if opts.checker {
            let mut checker = ra::checker::Checker::new(&vc, &env);
            checker.prepare(&out);
            checker
                .run()
                .map_err(|e| AllocError::Checker(format!("{e:?}")))?;
        }
        break (classes, out, search.forced(sizes, spilled, fixed));
    };
    let SliceSearch {
        kinds, min_needed, ..
    } = search;
    // Under a register budget the class slices spill as soon as one width's peak outgrows its
    // slice, though the registers of the other widths are free there: names in smaller
    // classes, spilled by regalloc2 and coloured together, may spill less (matrixMul under
    // `--maxrregcount=16`). Kept where it spills fewer bytes, or as many in fewer spill and
    // reload instructions. Only without fixed registers: the slices' attempts have resolved
    // the code's fixed operands for their own classes.
    let stack_edits = |o: &ra::Output| {
        let n = o
            .edits
            .iter()
            .filter(|(_, ra::Edit::Move { from, to })| from.is_stack() || to.is_stack())
            .count();
        (o.num_spillslots, n)
    };
    if named_code.is_none() && budget_names && stack_edits(&out).1 > 0 {
        if let Some((c, o, prog, per_acc)) =
            tight_names(&mut vc, &kinds, min_needed, &ra_opts, opts)?
        {
            if stack_edits(&o) < stack_edits(&out) {
                (classes, out, named_code) = (c, o, Some((prog, per_acc)));
            }
        }
    }
    // Physical registers: the colouring of all widths together (found by `allocate_names`),
    // or the class slices packed from R0.
    // (`fewest`: the registers the colouring found before spreading; none for the slices)
    let (prog, (acc_phys, fewest)) = match named_code {
        Some(x) => x,
        // A class slice is one register range per name, of the class kind's width: where a
        // class holds values of two widths, regalloc2 may give a def the name of a use that
        // dies at the same instruction (for it, the name is free there), and a pair def then
        // overwrites the scalar's register while the instruction still reads it (it writes
        // word by word; the final-assignment checker caught this on cub's radix sort,
        // `DeviceRadixSortDownsweepKernel` Policy800 in
        // `tests/data/corpus-nvcc/ptx/cuda-samples__..._radixSortThrust.ptx`, whose mixed
        // allocation spills). Such code is not kept: the caller takes the allocation without
        // mixing (colouring it instead, which keeps a def and a use of different widths
        // apart, was not measured in time; the slices are what spilled code keeps anyway).
        None if has_mixed_classes(&vc, &kinds) => return Ok(None),
        None => {
            let prog = NameProg::build(&vc, &out, &kinds).map_err(AllocError::Regalloc)?;
            let mut map = compact(&kinds, &classes, fixed, &out, max_regs, reserve0);
            // Within a class any two names may exchange registers: fewer bank conflicts
            // (`assign::permute_slices`; names of fixed registers stay).
            assign::permute_slices(&prog, &mut map, &|n| {
                let (c, i) = (
                    n as usize / assign::PER_CLASS,
                    n as usize % assign::PER_CLASS,
                );
                classes[c].get(i).is_some_and(|&r| !is_fixed(fixed, c, r))
            });
            let mut sliced: Vec<u8> = prog
                .accs
                .iter()
                .map(|a| {
                    let c = a.name as usize / assign::PER_CLASS;
                    map[c][a.name as usize % assign::PER_CLASS]
                })
                .collect();
            // Then single values move to registers of other banks where no other value is
            // live, within the registers the slices take (`assign::improve_slice_banks`).
            // (Not where the code names R0 itself, which the webs do not see.)
            if !reserve0 {
                let top = count_regs(&prog, &sliced);
                assign::improve_slice_banks(
                    &prog,
                    &mut sliced,
                    &precolours(&classes, fixed),
                    top,
                    &opts.save_cost,
                );
            }
            // Code allocated in slices (it spilled with name spaces, or their colouring did
            // not fit) keeps the slices packed from R0. Colouring it too was tried: where it
            // spills, into fewer (or as many) registers, its reloads lost their reach and
            // waited several times longer in the cost model (6 times on cub's radix sort).
            (prog, (sliced, None))
        }
    };
    let max_reg = count_regs(&prog, &acc_phys) - 1;
    let spill_bytes = prep.presplit.bytes + out.num_spillslots as u32 * 4;
    // (what `promote` and `forward` read, where they will run)
    let widths = spill_bytes > 0 && may_promote(&vc, opts);
    let (blocks, spills, reloads, check_ops, widths) =
        rewrite(&mut vc, &prog, &acc_phys, prep, opts.checker, widths)?;
    if opts.checker {
        check::check(&check_ops, &vc.succs, &vc.params, out.num_spillslots)
            .map_err(|e| AllocError::Assignment(e.to_string()))?;
    }
    let facts = widths.map(|(words, op_of)| {
        Box::new(forward::Facts {
            words,
            succs: vc
                .succs
                .iter()
                .map(|s| s.iter().map(|(b, _)| b.0 as usize).collect())
                .collect(),
            reloads: Vec::new(),
            stores: Vec::new(),
            check: opts.checker.then(|| forward::CheckInput {
                ops: check_ops,
                op_of,
                succs: vc.succs.clone(),
                params: vc.params.clone(),
                spill_words: out.num_spillslots,
            }),
        })
    });
    // The output's vectors go back to the context, to be filled again by the next run.
    RA_CTX.with(|ctx| ctx.borrow_mut().output = out);
    Ok(Some(Allocated {
        blocks,
        num_regs: max_reg + 1,
        fewest_regs: fewest.map_or(max_reg + 1, |n| n.min(max_reg + 1)),
        spill_bytes,
        checked: opts.checker,
        pred_spills: prep.pred_spills,
        spills: spills + prep.presplit.stores,
        spills_forced,
        reloads: reloads + prep.presplit.loads,
        class_sizes: [classes[0].len(), classes[1].len(), classes[2].len()],
        class_kinds: kinds,
        facts,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{Role, Sm50Inst};
    use crate::machinst::{OpSpec, VCodeBuilder};

    /// `defs` 32-bit values, then one instruction reading the first two (their last reads)
    /// (late reads if `late_reads`; an early def if `def_early`), then a return reading the rest.
    fn program(late_reads: bool, def_early: bool) -> VCode<Sm50Inst> {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let vs: Vec<VReg> = (0..4).map(|_| b.new_vreg(RegKind::B32)).collect();
        for v in &vs {
            let mut i = Sm50Inst::new(Role::Plain);
            i.def(*v, false);
            b.push(blk, i);
        }
        let d = b.new_vreg(RegKind::B32);
        let mut x = Sm50Inst::new(Role::Plain);
        let read = if late_reads {
            OpSpec::late_use()
        } else {
            OpSpec::use_()
        };
        x.op(Reg::Virt(vs[0]), read);
        x.op(Reg::Virt(vs[1]), read);
        x.def(d, def_early);
        b.push(blk, x);
        let mut ret = Sm50Inst::new(Role::Ret);
        for v in [vs[2], vs[3], d] {
            ret.use_(v);
        }
        b.terminate(blk, ret, Vec::new());
        b.finish().expect("valid vcode")
    }

    /// A pair and two scalars defined, then all read: every value is live at the last read, so
    /// any two of them interfere (the pair with the scalars across widths).
    fn mixed_widths() -> VCode<Sm50Inst> {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let d = b.new_vreg(RegKind::B64);
        let vs: Vec<VReg> = (0..2).map(|_| b.new_vreg(RegKind::B32)).collect();
        for v in std::iter::once(&d).chain(&vs) {
            let mut i = Sm50Inst::new(Role::Plain);
            i.def(*v, false);
            b.push(blk, i);
        }
        let mut ret = Sm50Inst::new(Role::Ret);
        ret.use_(d);
        for v in &vs {
            ret.use_(*v);
        }
        b.terminate(blk, ret, Vec::new());
        b.finish().expect("valid vcode")
    }

    /// `entry` (a def, a jump), `body` (`n` defs and reads, a compare, a branch back to
    /// itself when `looping`, else on to `exit` either way), `exit` (a read, a return).
    fn looped(n: usize, looping: bool) -> VCode<Sm50Inst> {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let (entry, body, exit) = (b.new_block(), b.new_block(), b.new_block());
        let x = b.new_vreg(RegKind::B32);
        let mut d = Sm50Inst::new(Role::Plain);
        d.def(x, false);
        b.push(entry, d);
        let mut jump = Sm50Inst::new(Role::Branch);
        jump.targets.push(body);
        jump.branch_piece(0, None);
        b.terminate(entry, jump, vec![(body, Vec::new())]);
        for _ in 0..n {
            let v = b.new_vreg(RegKind::B32);
            let mut d = Sm50Inst::new(Role::Plain);
            d.def(v, false);
            b.push(body, d);
            let mut r = Sm50Inst::new(Role::Plain);
            r.use_(v);
            b.push(body, r);
        }
        let p = b.new_vreg(RegKind::Pred);
        let mut setp = Sm50Inst::new(Role::Plain);
        setp.def(p, false);
        b.push(body, setp);
        let mut br = Sm50Inst::new(Role::Branch);
        if looping {
            let g = br.use_(p);
            br.targets.push(body);
            br.targets.push(exit);
            br.branch_piece(0, Some((g, false)));
            br.branch_piece(1, None);
            b.terminate(body, br, vec![(body, Vec::new()), (exit, Vec::new())]);
        } else {
            br.use_(p);
            br.targets.push(exit);
            br.branch_piece(0, None);
            b.terminate(body, br, vec![(exit, Vec::new())]);
        }
        let mut r = Sm50Inst::new(Role::Plain);
        r.use_(x);
        b.push(exit, r);
        b.terminate(exit, Sm50Inst::new(Role::Ret), Vec::new());
        b.finish().expect("valid vcode")
    }

    /// `Allocated::code_cost` (the driver's retries weigh code with it): without a loop and
    /// without spills it is the instruction count; a block that a later branch goes back to
    /// counts `LOOP_WEIGHT` times. (Not asserted: the exit block here is laid out before the
    /// block that splits the back edge, so it counts as in the loop too; see `code_cost`.)
    #[test]
    fn code_cost_weighs_the_loop_body() {
        let opts = AllocOptions::default();
        let n = 10;
        let straight = allocate(&looped(n, false), &opts).expect("allocates");
        let count: usize = straight.blocks.iter().map(|b| b.insts.len()).sum();
        assert_eq!(straight.spill_bytes, 0);
        assert_eq!(straight.code_cost(), count as u64);
        let looping = allocate(&looped(n, true), &opts).expect("allocates");
        assert_eq!(looping.spill_bytes, 0);
        let total: u64 = looping.blocks.iter().map(|b| b.insts.len() as u64).sum();
        // The body's 2n + 2 instructions at least count LOOP_WEIGHT times; entry and exit
        // (a def and a jump, a read and a return) once.
        let body = 2 * n as u64 + 2;
        assert!(
            looping.code_cost() >= total + (LOOP_WEIGHT - 1) * body,
            "{} for {total} instructions",
            looping.code_cost()
        );
    }

    /// The final-assignment checker passes the colouring and catches a wrong one: one web
    /// moved onto the register of a web it interferes with (a scalar onto a scalar, or onto
    /// a pair it overlaps).
    #[test]
    fn checker_catches_a_wrong_colouring() {
        let opts = AllocOptions {
            checker: true,
            ..AllocOptions::default()
        };
        for code in [program(false, false), program(true, true), mixed_widths()] {
            let good = allocate(&code, &opts).expect("allocates");
            assert!(good.checked);
            assign::CORRUPT.with(|c| c.set(true));
            let bad = allocate(&code, &opts);
            assign::CORRUPT.with(|c| c.set(false));
            match bad {
                Err(AllocError::Assignment(_)) => {}
                other => panic!("a wrong colouring was not caught: {other:?}"),
            }
        }
    }

    /// Scalars and pairs share registers: a scalar defined after a pair died takes one of its
    /// registers. Two scalars, one defined by the pair's last read (not in the pair: widths
    /// in one instruction do not share) and one after it, fit in R0 and the pair's R2:R3
    /// (4 registers), where class slices needed 5.
    #[test]
    fn widths_share_registers() {
        let mut b = VCodeBuilder::<Sm50Inst>::new();
        let blk = b.new_block();
        let d = b.new_vreg(RegKind::B64);
        let mut def = Sm50Inst::new(Role::Plain);
        def.def(d, false);
        b.push(blk, def);
        let v = b.new_vreg(RegKind::B32);
        let mut x = Sm50Inst::new(Role::Plain);
        x.use_(d);
        x.def(v, false);
        b.push(blk, x);
        let w = b.new_vreg(RegKind::B32);
        let mut y = Sm50Inst::new(Role::Plain);
        y.use_(v);
        y.def(w, false);
        b.push(blk, y);
        let mut ret = Sm50Inst::new(Role::Ret);
        ret.use_(v);
        ret.use_(w);
        b.terminate(blk, ret, Vec::new());
        let code = b.finish().expect("valid vcode");
        // (Without a limit the colouring spreads values over the registers that keep the
        // occupancy; 4 registers make it pack them.)
        let opts = AllocOptions {
            checker: true,
            max_regs: 4,
            ..AllocOptions::default()
        };
        let out = allocate(&code, &opts).expect("allocates");
        assert_eq!((out.num_regs, out.spill_bytes), (4, 0), "{:?}", out.blocks);
    }

    /// Four values live before the middle instruction; an early def or late reads there make
    /// five live at one of regalloc2's points, which only `exact` counts.
    #[test]
    fn exact_pressure_counts_early_defs_and_late_uses() {
        let plain = pressure(&program(false, false));
        assert_eq!((plain.max[0], plain.exact[0]), (4, 4));
        let early = pressure(&program(false, true));
        assert_eq!((early.max[0], early.exact[0]), (4, 5));
        let late = pressure(&program(true, false));
        assert_eq!((late.max[0], late.exact[0]), (4, 5));
        assert_eq!(late.min_needed[0], 3);
    }
}
