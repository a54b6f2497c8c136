//! Machine-level code with virtual registers ([`VCode`]) and its register allocation.
//!
//! In: a [`VCode`] built by an ISA's lowering through [`VCodeBuilder`]: blocks in layout order,
//! SSA block parameters, terminators with one argument list per successor, and instructions of
//! a type implementing [`MachInst`], whose register fields are [`Reg::Virt`] values.
//! Out: [`allocate`] returns an [`Allocated`]: the same blocks as flat instruction lists whose
//! register fields are all physical ([`Reg::Phys`], [`Reg::Pred`]), with the moves, spills and
//! reloads the allocator asked for, the register count (ptxas style: highest register + 1,
//! at least 2 because R1 is the stack pointer) and the local-memory spill frame size.
//!
//! # How Maxwell's register file is mapped onto regalloc2
//!
//! regalloc2 knows three disjoint classes of at most 64 registers and no aliasing. Maxwell has
//! R0..R254 with 64-bit values in even pairs and 128-bit values in 4-aligned quads, and one
//! register may hold a scalar at one point and half of a pair at another. So regalloc2's
//! registers are *names*, not registers: class `Int` names 32-bit scalars ([`RegKind::B32`]),
//! `Float` aligned pairs ([`RegKind::B64`]) and `Vector` aligned quads ([`RegKind::B128`]);
//! regalloc2 decides which name every operand, move, spill and reload uses, and the names are
//! turned into physical registers afterwards (`assign`), all widths together:
//!
//! * the name-level code is split into *webs* (the definitions and uses of one name that reach
//!   each other), and the webs into an interference graph (a web defined where another is
//!   live; an early def and the uses of its instruction; a late use and the defs of its
//!   instruction), in which a pair interferes with the scalars it would overlap as with any
//!   other web: the register file is shared, the peak of the *sum* of the widths counts;
//! * the webs are coloured greedily with their alignment (pairs even, quads 4-aligned), R1 (the
//!   stack pointer) and RZ never given, a copy's two ends given one register where they do
//!   not interfere (the copy then disappears), the fixed registers' names pinned: first packed
//!   from R0 to find the fewest registers, then again spread over the registers that keep the
//!   same occupancy (up to about what the slices below would take), each web in the register
//!   left longest ago, so that the scheduler is not held back by reused registers;
//! * a checker (`check`) follows, over the final physical code, which vreg word every register
//!   and every spill word holds along all paths, and rejects a use that reads the wrong value
//!   (writing R5 removes the high word of a pair at R4). It runs wherever regalloc2's checker
//!   runs ([`AllocOptions::checker`]: debug builds, tests, fuzz targets).
//!
//! The budget. First every class that has values gets all 64 names (the fixed registers'
//! first, as regalloc2's non-preferred registers), and regalloc2 runs once. That is taken when
//! nothing spills and the colouring fits below `max_regs` (255, `--maxrregcount`, `.maxnreg`,
//! launch bounds). Otherwise (more than 64 values of one class live at once, or a tight
//! `max_regs`) regalloc2 runs again with smaller name spaces, so that it spills: each class is
//! then a disjoint slice of the register file, sized from a liveness pressure estimate and
//! packed from R0 (quads first at 4-aligned bases, then pairs, then scalars into the holes, R1
//! excluded), grown and retried where it spills and registers remain below `max_regs`. The
//! slices fit below `max_regs` by construction; the registers regalloc2 used are then packed
//! from R0 (renamed within their class, which is valid because the registers of a class are
//! interchangeable). That allocation is not coloured: tried, coloured code that spills
//! waited several times longer on its reloads in the cost model. A class holds at most 64 registers (regalloc2's register index has 6
//! bits); when more than 64 scalars are live at once, the other classes take scalars too (see
//! `alloc::overflow_scalars`): a class the function has no values of takes a second set of 64,
//! and where the function has pairs and quads of its own their classes become name spaces of
//! mixed widths, the width of each access being that of the value the name holds there
//! (`assign::NameProg::acc_widths`, followed through regalloc2's moves, spills and reloads),
//! so that regalloc2 has 3 × 64 names before it must spill (cub's radix-sort kernels spilled
//! because of the 64-name limit alone). Where even that spills
//! (the register file itself is full), the allocation without mixed classes is made too and
//! the one with less local memory kept (a scalar in a slice of the pair class wastes a
//! register).
//!
//! Costs of the slices under a tight `max_regs`, stated honestly: every class must hold the
//! most operands of its kind that any single instruction names, *at the same time* (e.g. a
//! 7-scalar `ret` plus a pair+quad load need 7 + 2 + 4 registers + R1, though no instruction
//! needs all of them at once); [`AllocError::TooFewRegisters`] reports when that does not fit.
//! And a slice spills as soon as its width's peak outgrows it, while the other slices' registers
//! are free there. So under a budget (`max_regs` below 255, code without fixed registers) the
//! name spaces are tried once more, spills allowed (`alloc::tight_names`): each class gets as
//! many names as the budget holds of its width, then a fifth fewer per try, until regalloc2's
//! allocation colours below `max_regs`; kept when it spills fewer bytes than the slices (or as
//! many with fewer spill and reload instructions), or when the slices do not fit at all
//! (matrixMul under `--maxrregcount=16`: 40 bytes spilled by the slices, 32 so; ptxas 8).
//! Not yet enough for `matrixMul_64bit` of CUDA 3.2's sample at 16, which ptxas fits with an
//! 8-byte spill: the slices do not fit, and no name-space size tried colours below 16.
//!
//! # Order of work in [`allocate`]
//!
//! 1. drop blocks the entry cannot reach (regalloc2 panics on them; lowering may leave some)
//!    and make sure every block comes after one of its predecessors in layout (regalloc2's
//!    checker wrongly rejects correct allocations otherwise, see `alloc::prune_unreachable`);
//! 2. allocate predicates ([`pred`]), which rewrites predicate block parameters and spills;
//! 3. split critical edges (and edges out of a branch with register operands into a block with
//!    several predecessors) with [`MachInst::gen_jump`] blocks, as regalloc2 requires, and
//!    restore the layout order of step 1 (an edge block is appended at the end, so the loop
//!    header it enters may need to move after it);
//! 4. run regalloc2 (ion, SSA validation on) with name spaces; where that spills or does not
//!    colour below `max_regs`, size the class slices, run it again, grow and retry on spills;
//!    run regalloc2's checker if asked;
//! 5. colour the names into physical registers (or pack the slices), turn edits into
//!    [`MachInst::gen_move`], [`MachInst::gen_spill`] and [`MachInst::gen_reload`] (slot = 4
//!    bytes, offset off R1), and run the final-assignment checker if asked.
//!
//! # Predicates
//!
//! Predicates (P0..P6, PT = 7) are a fourth register file that regalloc2 cannot model, so
//! [`pred`] allocates them *before* regalloc2 runs, with its own linear scan over 7 registers:
//! * a predicate block parameter is rewritten into a 32-bit one (the branch converts the
//!   predicate with [`MachInst::gen_pred_to_gpr`], the target block converts it back with
//!   [`MachInst::gen_gpr_to_pred`]), so predicates never cross an edge in a register;
//! * when more than 7 predicates would be live at once, the one whose live range ends last is
//!   "spilled" the same way into a fresh 32-bit vreg (ptxas uses P2R/R2P or SEL/ISETP), which
//!   regalloc2 then allocates (and may spill to memory like any scalar).
//!
//! The rewrite happens on the VCode, so regalloc2 and its checker see the conversion
//! instructions as ordinary instructions with ordinary 32-bit operands.
//!
//! # Calls
//!
//! An instruction may overwrite registers besides its defs ([`MachInst::clobbers`]: a call of
//! a subroutine that works on fixed registers). The clobbered 32-bit registers are fixed
//! registers of the scalar class (they are laid out first and never renamed by the packing,
//! and the class is sized for them on top of the pressure estimate) and go to regalloc2 as
//! the instruction's clobbers; clobbered predicates are avoided by [`pred`] for every
//! predicate live across the instruction. The call's operands use [`OpSpec::fixed`].
//! Where code with calls spills, two retries come before giving up: first the fixed
//! operands' registers become regalloc2's non-preferred registers (tried last), with as many
//! registers more in their class, so that a long-lived value is not put in one and then
//! evicted by a call's operand (which can send its pieces to memory at low pressure); then,
//! where the scalar class spills at 64 registers, an unused class takes scalars too (as
//! `alloc::overflow_scalars` does for more than 64 live scalars). The result says whether
//! the spills were forced by pressure plus fixed registers ([`Allocated::spills_forced`]).
//!
//! # Pseudo-instructions
//!
//! A carry chain (`LEA.CC` + `LEA.HI.X`, `IADD.CC` + `IADD.X`) is one [`MachInst`] until
//! emission. Its result is an *early* def ([`OpSpec::early_def`]): regalloc2 then never gives
//! it a register that one of its inputs occupies, so the first half cannot overwrite an input
//! the second half still reads.

mod alloc;
mod assign;
mod check;
mod display;
pub mod pred;
mod vcode;

pub use alloc::{allocate, allocate_owned, AllocError, AllocOptions, Allocated, AllocatedBlock};
/// One block of a [`VCode`] taken apart by `VCode::into_blocks`, for rewriting passes.
pub(crate) use vcode::BlockData;
pub use vcode::{VCode, VCodeBuilder};

use std::fmt;

pub use crate::ir::SrcLoc;

/// The width class of a virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RegKind {
    /// A 32-bit scalar in one GPR.
    B32,
    /// A 64-bit value in an even-aligned GPR pair Rn:Rn+1.
    B64,
    /// A 128-bit value in a 4-aligned GPR quad Rn..Rn+3.
    B128,
    /// A predicate P0..P6.
    Pred,
}

impl RegKind {
    /// Number of 32-bit GPRs a value of this kind occupies (0 for predicates).
    pub fn gprs(self) -> u32 {
        match self {
            RegKind::B32 => 1,
            RegKind::B64 => 2,
            RegKind::B128 => 4,
            RegKind::Pred => 0,
        }
    }
}

/// A virtual register: an index into the function's vreg table and its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg {
    pub index: u32,
    pub kind: RegKind,
}

/// A physical GPR R0..R254, or RZ (255). For pairs and quads it names the base register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PhysReg(pub u8);

impl PhysReg {
    /// RZ reads as zero and discards writes.
    pub const RZ: PhysReg = PhysReg(255);
    /// R1 is the stack pointer by convention (ptxas's prologue `MOV R1, c[0x0][0x20]`).
    pub const SP: PhysReg = PhysReg(1);
}

/// A spill store or reload ([`MachInst::as_slot_access`]): `[R1 + offset]`, `kind` wide, from
/// or into `reg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotAccess {
    pub offset: u32,
    pub reg: PhysReg,
    pub kind: RegKind,
    /// A store (`STL`) rather than a reload.
    pub store: bool,
}

/// A physical predicate P0..P6, or PT (7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PhysPred(pub u8);

impl PhysPred {
    pub const PT: PhysPred = PhysPred(7);
}

/// A register field of an instruction: virtual before allocation, physical after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    Virt(VReg),
    Phys(PhysReg),
    Pred(PhysPred),
}

/// Whether an operand is read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Use,
    Def,
}

/// When, within its instruction, an operand is read or written. A use is normally early and a
/// def late (so a def may share a register with a use that dies there); an *early def* is
/// written before the inputs are consumed and so never shares one with an input; a *late use*
/// is still read at the end of the instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpPos {
    Early,
    Late,
}

/// Where the allocator may place an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpConstraint {
    /// Any register of the operand's kind (never a stack slot: SM50 ALU ops read registers).
    Reg,
    /// This physical register (base register for pairs and quads).
    Fixed(PhysReg),
    /// A def that must take the register of the use visited at this position (0-based, counting
    /// every call of the operand visitor for this instruction, physical registers included).
    /// A byte: instructions have a handful of operands, and operands are copied with every
    /// instruction through every allocator pass (a `usize` doubled an operand's size).
    Reuse(u8),
}

/// Which 32-bit half of a 64-bit pair a use reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Lo,
    Hi,
}

/// Everything the allocator needs to know about one register field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSpec {
    pub kind: OpKind,
    pub pos: OpPos,
    pub constraint: OpConstraint,
    /// For a use of a [`RegKind::B64`] vreg: read only this half; the field becomes the single
    /// register `base + 0` or `base + 1` after allocation.
    pub half: Option<Half>,
}

impl OpSpec {
    /// An ordinary read (early use in any register).
    pub fn use_() -> OpSpec {
        OpSpec {
            kind: OpKind::Use,
            pos: OpPos::Early,
            constraint: OpConstraint::Reg,
            half: None,
        }
    }
    /// A read that stays live to the end of the instruction.
    pub fn late_use() -> OpSpec {
        OpSpec {
            pos: OpPos::Late,
            ..OpSpec::use_()
        }
    }
    /// A read of one half of a pair.
    pub fn use_half(half: Half) -> OpSpec {
        OpSpec {
            half: Some(half),
            ..OpSpec::use_()
        }
    }
    /// An ordinary write (late def in any register).
    pub fn def() -> OpSpec {
        OpSpec {
            kind: OpKind::Def,
            pos: OpPos::Late,
            constraint: OpConstraint::Reg,
            half: None,
        }
    }
    /// A write that never shares a register with this instruction's inputs.
    pub fn early_def() -> OpSpec {
        OpSpec {
            pos: OpPos::Early,
            ..OpSpec::def()
        }
    }
    /// A write into the register of the use visited at position `input`.
    pub fn reuse_def(input: usize) -> OpSpec {
        OpSpec {
            constraint: OpConstraint::Reuse(
                u8::try_from(input).expect("an instruction has fewer than 256 operands"),
            ),
            ..OpSpec::def()
        }
    }
    /// This operand, pinned to a physical register.
    pub fn fixed(self, r: PhysReg) -> OpSpec {
        OpSpec {
            constraint: OpConstraint::Fixed(r),
            ..self
        }
    }
}

/// A block of a [`VCode`], numbered in layout order from 0 (the entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// What kind of instruction ends a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminator {
    /// Not a terminator.
    None,
    /// Leaves the function; the block has no successors.
    Ret,
    /// Transfers control to the block's successors (as recorded by the builder, in order).
    Branch,
}

/// The machine-independent view of an ISA's instruction.
///
/// Register fields are [`Reg`]s; [`MachInst::visit_operands`] hands each of them, with its
/// [`OpSpec`], to the allocator, always in the same order. Fields that already hold a physical
/// register (RZ, R1 as stack base, PT) are visited too (they count for
/// [`OpConstraint::Reuse`] positions) but are not allocated.
///
/// The generators produce instructions whose registers are physical: they are called after
/// allocation. Spill slots are byte offsets from R1 in local memory (`STL [R1+off]`), aligned
/// to the value's size.
pub trait MachInst: Clone + fmt::Debug + fmt::Display {
    /// Call `f` once per register field, in a fixed order.
    fn visit_operands(&mut self, f: &mut dyn FnMut(&mut Reg, OpSpec));
    /// [`MachInst::visit_operands`] without changing anything (the allocator's analyses call
    /// it for every instruction, several times: an ISA should override the default, which
    /// visits a copy).
    fn for_each_operand(&self, f: &mut dyn FnMut(Reg, OpSpec)) {
        let mut copy = self.clone();
        copy.visit_operands(&mut |r, spec| f(*r, spec));
    }
    /// Whether (and how) this instruction ends a block.
    fn terminator(&self) -> Terminator;
    /// `Some((dst, src))` for a plain register copy, which is dropped after allocation when both
    /// sides got the same register.
    fn is_move(&self) -> Option<(Reg, Reg)>;
    /// For a copy ([`MachInst::is_move`]) of one word of a wider source (a 32-bit copy of a
    /// pair's high word: 1): which word of the source it copies; the copy is dropped when its
    /// destination is that word's register. Default 0 (the copy starts at the source's base).
    fn move_word(&self) -> u8 {
        0
    }
    /// For an instruction that only copies 32-bit values into the words of one wider value
    /// (a texture's coordinate pair or quad, built by one register copy per word): per copied
    /// value `(def, use, word)`, the wider value, the 32-bit one and the word it fills.
    /// `assign` may then give the 32-bit value that word's register, where the copy becomes
    /// a move of a register onto itself, which [`MachInst::drop_identity_copies`] removes.
    /// Empty (the default): no such instruction.
    fn pack_words(&self) -> smallvec::SmallVec<[(VReg, VReg, u8); 4]> {
        smallvec::SmallVec::new()
    }
    /// After allocation: remove the copies of a register onto itself that a
    /// [`MachInst::pack_words`] instruction holds; whether nothing is left of it (then it is
    /// dropped). The default removes nothing.
    fn drop_identity_copies(&mut self) -> bool {
        false
    }
    /// A copy of a value of `kind` between physical registers (base registers for pairs/quads).
    fn gen_move(dst: PhysReg, src: PhysReg, kind: RegKind) -> Self;
    /// Store `src` to local memory at `[R1 + offset]`.
    fn gen_spill(offset: u32, src: PhysReg, kind: RegKind) -> Self;
    /// Load `dst` from local memory at `[R1 + offset]`.
    fn gen_reload(dst: PhysReg, offset: u32, kind: RegKind) -> Self;
    /// Store the virtual register `src` to local memory at `[R1 + offset]`: the spill store
    /// of `alloc::spill`, placed before register allocation. `None` (the default): the ISA
    /// has none, and that pass leaves the code alone.
    fn gen_spill_virt(_offset: u32, _src: VReg) -> Option<Self> {
        None
    }
    /// Load the virtual register `dst` from local memory at `[R1 + offset]` (the reload of
    /// `alloc::spill`). `None` (the default): the ISA has none.
    fn gen_reload_virt(_dst: VReg, _offset: u32) -> Option<Self> {
        None
    }
    /// For a spill store or reload exactly as [`MachInst::gen_spill`] or
    /// [`MachInst::gen_reload`] make it (physical register, `[R1 + offset]`, unguarded): what
    /// it accesses. `alloc::promote` moves such slots into free registers. Default: `None`
    /// (the ISA's spill code is never rewritten).
    fn as_slot_access(&self) -> Option<SlotAccess> {
        None
    }
    /// Whether executing this instruction again anywhere in the function, with its def renamed,
    /// gives the same value: one virtual def, no virtual use, no side effect, nothing read
    /// that changes while the function runs (a constant, a constant-bank word, the thread's
    /// index). `alloc::spill` rematerialises such values at their reads instead of keeping them
    /// live. Default: no.
    fn rematerialisable(&self) -> bool {
        false
    }
    /// An unconditional jump to `target`, without operands (used to split critical edges).
    fn gen_jump(target: BlockId) -> Self;
    /// `dst = src ? 1 : 0` (e.g. `SEL dst, RZ, 0x1, !src` or P2R) with virtual registers.
    fn gen_pred_to_gpr(dst: VReg, src: VReg) -> Self;
    /// `dst = src != 0` (e.g. `ISETP.NE.AND dst, PT, src, RZ, PT` or R2P) with virtual registers.
    fn gen_gpr_to_pred(dst: VReg, src: VReg) -> Self;
    /// Retarget a branch: its successor number `succ_index` is now `target` (critical-edge
    /// splitting inserts a block between). Non-branches ignore it.
    fn set_branch_target(&mut self, succ_index: usize, target: BlockId);
    /// The blocks a branch names (none for other instructions), for
    /// [`Allocated::code_cost`]'s loops.
    fn branch_targets(&self) -> &[BlockId] {
        &[]
    }
    /// The PTX line this instruction was selected for ([`SrcLoc::NONE`] for code that
    /// allocation adds: moves, spills, reloads, edge jumps).
    fn srcloc(&self) -> SrcLoc {
        SrcLoc::NONE
    }
    /// Record the PTX line ([`VCodeBuilder`] does, for every instruction it is given).
    fn set_srcloc(&mut self, _loc: SrcLoc) {}
    /// What this instruction overwrites besides its defs (a call: the scratch registers and
    /// predicates of the subroutine it calls): 32-bit registers and predicates. No value that
    /// is live across the instruction is given one of them; the registers are fixed
    /// registers of the 32-bit class (they never move when the allocator packs registers).
    /// Default: nothing.
    fn clobbers(&self) -> (&'static [PhysReg], &'static [PhysPred]) {
        (&[], &[])
    }
    /// Register banks (`assign`'s colouring): for an instruction that is a sequence of
    /// several machine instructions, per machine instruction the operands (indices in
    /// [`MachInst::visit_operands`]' order) whose registers it reads as sources, a def's
    /// included where a later instruction of the sequence reads what an earlier one wrote
    /// (a multiply's temporaries). `None` (the default): one instruction, reading its uses.
    fn read_groups(&self) -> Option<Vec<smallvec::SmallVec<[u8; 4]>>> {
        None
    }
    /// Whether the instruction may read its register sources after it issues (on SM50 a
    /// variable-latency instruction other than a load: a store's data and address, a
    /// conversion's source), so that an instruction overwriting one of them soon after waits
    /// for that read (`assign`'s colouring keeps such registers for later). Default: no.
    fn reads_late(&self) -> bool {
        false
    }
}

impl fmt::Display for VReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = match self.kind {
            RegKind::B32 => 'v',
            RegKind::B64 => 'd',
            RegKind::B128 => 'q',
            RegKind::Pred => 'p',
        };
        write!(f, "%{c}{}", self.index)
    }
}

impl fmt::Display for PhysReg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 255 {
            write!(f, "RZ")
        } else {
            write!(f, "R{}", self.0)
        }
    }
}

impl fmt::Display for PhysPred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 7 {
            write!(f, "PT")
        } else {
            write!(f, "P{}", self.0)
        }
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reg::Virt(v) => v.fmt(f),
            Reg::Phys(r) => r.fmt(f),
            Reg::Pred(p) => p.fmt(f),
        }
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}", self.0)
    }
}
