//! Lowering: SSA IR → SM50 machine instructions over virtual registers, folding address
//! arithmetic into `LEA` / `LEA.HI.X` chains.
//!
//! In: a verified [`ir::Function`] of an [`ir::Module`] and [`LowerOptions`].
//! Out: [`lower_function`] gives a [`VCode<Sm50Inst>`] for `machinst::allocate`; after
//! allocation, [`emit`] flattens it into plain [`sm50::Inst`]s. Unsupported IR is a
//! [`LowerError`] naming it, never a panic and never wrong code.
//!
//! Stages (one file each):
//! * [`amode`]: match every address as `base + (index << scale) + disp` in prioritised rule
//!   phases (constants first, then values already in registers, then scaled and extended
//!   indices, then the base, with kernel parameters read from the constant bank);
//! * [`lea`]: build the chain for a matched address: `LEA` (32-bit) or `LEA.CC` +
//!   `LEA.HI.X` (64-bit) as one pseudo-instruction, with `-Ra`, the sign word or `RZ` as the
//!   index's high word, and `Plg` for generic accesses; also the extended-precision
//!   `LEA.CC` + `LEA.HI.X.CC` links of the carry chains [`carry`] finds in the IR;
//! * `select`: demand-driven selection of everything (memory ops pick LDG/STG, LD/ST,
//!   LDS/STS, LDC and place the displacement; the integer subset gets simple correct forms);
//! * [`inst`]: [`Sm50Inst`], the `MachInst` the allocator sees;
//! * [`predicate`] and `guard`, on the selected code before allocation: branch sides with a
//!   long-latency load become guarded straight-line code, and a `SEL` whose one arm a
//!   single instruction computes for it alone becomes that instruction, guarded, writing
//!   into the other arm's register (off with [`LowerOptions::no_ifconv`]);
//! * [`ifconv`]: in [`emit`], short branch sides (if-then, if/else) become predicated
//!   straight-line code before reconvergence is placed (off with [`EmitOptions::if_convert`]);
//! * [`reconverge`]: which branches may diverge (selection marks the uniform ones), and, in
//!   [`emit`], `SSY`/`SYNC` so that the lanes of a warp meet again after them.
//! * [`plain`] and [`stats`]: the `--fold=none` baseline without LEA, the [`Fold`]
//!   strategies, and the per-kernel [`FoldStats`] selection counts.
//! * `explain`: the address expression of each chain, for `--explain`.
//!
//! Every [`Sm50Inst`] carries the PTX line ([`SrcLoc`]) of the IR instruction it was selected
//! for (the `VCodeBuilder` stamps it; everything a selection rule pushes while lowering one IR
//! instruction gets that instruction's line, shared chains the first user's). [`emit_all`]
//! hands the lines on, one per emitted instruction.
//!
//! # The generic-access predicate
//!
//! A generic `LD`/`ST` takes a window predicate (sm50-isa.md §3.2; what exactly the hardware
//! does with it is an open question). Our model, shared with `sim`: `Plg` is *not in the
//! shared window* (the bit the seed calls CC.OF = !(shared-window-detect)); ptxas's generic
//! atomics branch `@!P0` to `ATOMS`, which fixes that polarity. On LD/ST, true means "decode
//! the windows" and false means "shared", so PT is the always-correct answer (full window
//! check, as nouveau does), and the chain's own `Plg` is correct for the address it computed.
//! When a chain computes the address anyway, its last `LEA` writes `Plg` for free and the
//! access uses it.
//!
//! By default `Plg` follows ptxas's rule: one test per base (the chain's `base + index`),
//! shared by every displacement from it, the displacement staying in the instruction's imm32
//! as in the seed's examples. This assumes an object never straddles a window boundary;
//! code that could tell the difference would break under ptxas too. (`--assume-inbounds`,
//! the flag that once chose this form, is accepted as an alias of the default.) With
//! [`LowerOptions::plg_per_address`] (`--plg-per-address`), `Plg` must describe the *final*
//! address, so a non-zero displacement is added inside the chain (two more LEAs; with
//! `--fold=full` they are a step of their own on top of the base chain, which other accesses
//! and dominated blocks share, see `lea::plg_step`), and a generic atomic with a displacement
//! tests its final address again. An access whose address no chain computes (a pointer in a
//! register plus a displacement) uses PT in both modes: building a chain only to obtain the
//! predicate would cost two instructions and buy nothing certain.
//!
//! # What `emit` hands on
//!
//! The flattened instructions in layout order, with every `BRA`'s and `SSY`'s `rel` field
//! holding the *index* of its target instruction in the returned vector (the emit stage turns
//! indices into byte offsets, `target = addr + 8 + rel`); a piece's branch within its own
//! sequence ([`inst::LOCAL_BRANCH`], the per-quad handle split of `select::tex`) gets its
//! index the same way. Before layout, [`ifconv`] turns the
//! short sides of branches into guarded instructions of the branching block, [`reconverge`] adds
//! `SSY` and turns branches into reconvergence points into `SYNC`, branches to blocks that
//! are only `BRA x`, `SYNC` or `EXIT` are threaded or folded (`@P0 SYNC`, `@P0 EXIT`), and
//! blocks nothing names any more are dropped. A `BRA` to the next block is dropped, and a
//! conditional branch whose taken side is the next block is inverted (`@P BRA next; SYNC`
//! becomes `@!P SYNC`). Every `ret` becomes
//! `EXIT`; the prologue (`MOV R1, c[0x0][0x20]`, the frame adjustment `IADD32I R1, R1,
//! -frame` with frame = [`local_size`] rounded to 16 + [`Allocated::spill_bytes`], or without
//! spills [`local_size`] rounded to 8 or to its largest variable alignment, as ptxas) and the
//! trailing `BRA` self + padding are the emit stage's. `.local` accesses address
//! `[R1 + offset]`, `.const` variables sit at their declaration-order offsets in bank 3 and
//! `.shared` variables at the kernel's own offsets (`ir::Module::shared_layout`: only the
//! variables it names, as ptxas allocates them), which the cubin writer must lay out the same
//! way.
//!
//! When the code calls the f32 division slow path (a `CAL` piece, `select::fdiv`), the
//! subroutine comes once after the kernel's code (an `EXIT` first if that code could fall
//! through), ending in `RET`; every `CAL`'s `rel` then holds the subroutine's first index, and
//! its instructions have no PTX line. The `CAL` is the last piece of an ordinary (non-
//! terminator) instruction, so it sits inside a block: `ifconv` never guards it (it has no
//! guard field) and the scheduler sees a control transfer (a block boundary).
//!
//! # Files of this module
//!
//! - `emit.rs`: Post-allocation emission.

mod emit;
pub use emit::*;
pub(crate) mod abi;
pub mod amode;
pub mod carry;
mod explain;
mod guard;
pub mod hoist;
pub mod ifconv;
pub mod inst;
pub mod lea;
pub mod plain;
pub mod predicate;
pub mod reconverge;
mod select;
pub(crate) use select::{OUTLINED_CAL, STACK_ARG_LOAD_BASE, SUB_CAL_BASE};
pub mod stats;

pub use inst::{Operand, Piece, RegRef, Reloc, RelocWord, Role, Sm50Inst};
pub use stats::{Fold, FoldStats};

use crate::ir;
use crate::machinst::{Allocated, BlockId, SrcLoc, VCode};
use crate::sm50::{self, Field, Form};

/// Which `.shared` variables' addresses only the linker knows (`LowerOptions::shared_relocs`).
/// Such an address is a `MOV32I` that `R_CUDA_ABS24_20` patches (ptxas 11.8's `MOV32I R0,
/// 0x0` against `$__buf__8`), never a known offset folded into other instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SharedRelocs {
    /// None: every `.shared` variable lies at its offset in the kernel's window.
    #[default]
    None,
    /// The dynamically sized (`.extern .shared`) arrays: code of a relocatable object that a
    /// kernel runs. nvlink places the array after the kernel's whole static window, which
    /// includes the `.shared` data of other objects' functions the kernel calls (ptxas's
    /// kernel under `-c`: `STS [R3+0x100]` after a called function's 256-byte array).
    Dynamic,
    /// All: a function of a relocatable object, whose shared window nvlink lays out in each
    /// kernel that calls it.
    All,
}

impl SharedRelocs {
    /// Whether the address of a `.shared` variable of `size` bytes (0: dynamically sized) is
    /// the linker's.
    pub fn relocates(self, size: u32) -> bool {
        match self {
            SharedRelocs::None => false,
            SharedRelocs::Dynamic => size == 0,
            SharedRelocs::All => true,
        }
    }
}

/// Options that change selection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// Test the window of every generic *final* address (`--plg-per-address`): a non-zero
    /// displacement joins the chain so that `Plg` covers it. Off by default, where one test
    /// per base is shared by every displacement from it (ptxas's rule: an object never
    /// straddles a window, so `base + index` and `base + index + disp` lie in the same one).
    pub plg_per_address: bool,
    /// Folding strategy (`--fold`, see [`stats`]).
    pub fold: Fold,
    /// Describe each `LEA` chain's address expression in its [`Sm50Inst::note`]
    /// (`--explain`; costs a string per chain, so off by default).
    pub explain: bool,
    /// Keep `div.rn`/`rcp.rn` (f32 and f64) and `sqrt.rn` (f32 and f64) as the whole inline
    /// sequence at every site (`--no-subroutines`) instead of a fast path that calls the
    /// kernel's one slow-path subroutine per operation (`select::fdiv`).
    pub no_subroutines: bool,
    /// Keep only `sqrt.rn.f32` inline (the driver's retry where the pinned registers of its
    /// slow-path calls cost spills: `driver::allocate`).
    pub inline_sqrt: bool,
    /// The target's SM number (`-arch sm_53` is 53; 0, the default, reads as 50). Only
    /// sm_53 has the half-precision ALU (`HADD2`..`HSET2`); below it `.f16` arithmetic goes
    /// through f32 and f64 (`select::half`).
    pub sm: u32,
    /// Leave loads where selection put them ([`hoist`] off). The driver compiles a kernel
    /// that spills once more with this set and keeps whichever spills less: hoisting
    /// lengthens live ranges, which pays off in hidden latency only while registers are free.
    pub no_hoist: bool,
    /// Keep every branch as a branch before allocation ([`predicate`] off; the driver's
    /// `--no-ifconv`). With `no_hoist` set it is off as well: it pays off by letting
    /// [`hoist`] move the converted sides' loads.
    pub no_ifconv: bool,
    /// Hoist loads but move no store ([`hoist::hoist_loads`]'s `store_motion` off). The
    /// driver compiles a kernel once more with this set where the store motion changed its
    /// code and registers limit its occupancy, and keeps whichever has the higher occupancy.
    pub no_store_motion: bool,
    /// How far [`hoist`] may interleave independent work by modelled cycles before
    /// allocation. The driver compiles a kernel whose registers limit its occupancy once more
    /// without, and where that keeps more warps resident, once more with the narrow window.
    pub interleave: Interleave,
    /// Which `.shared` variables are addressed through the linker ([`SharedRelocs`]).
    pub shared_relocs: SharedRelocs,
    /// Leave out ptxas's per-quad split around `.B` texture instructions whose handle may
    /// differ within a quad (`select::tex::handle_split`): wrong code on a GPU and in the
    /// simulator wherever handles do differ; for tests that show the split is needed.
    pub no_handle_split: bool,
    /// Read a constant-bank value (a kernel parameter, a `.const` word at a constant
    /// address, `%ntid`..) into a register afresh in each block that needs it in one
    /// (`select::Lowerer::reg`), instead of once where it is defined. The driver compiles a
    /// kernel whose registers cost it warps once more with this set. It also writes each
    /// immediate that needs a register afresh at its use (`select::consts`' sharing off).
    pub remat_cbuf: bool,
}

/// The window of [`hoist`]'s interleaving (`hoist::interleave`; its essay has the
/// trade-off): how many instructions a value may be computed ahead of its place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interleave {
    /// [`hoist::WIDE`] instructions (the default).
    #[default]
    Wide,
    /// [`hoist::NARROW`] instructions.
    Narrow,
    /// No interleaving: the hoisting order alone.
    Off,
}

/// Why a function could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// The IR uses something this lowering does not select (yet).
    #[error("{func}: cannot lower {what}")]
    Unsupported { func: String, what: String },
    /// The function does not verify.
    #[error("{0}")]
    Invalid(String),
    /// A lowering bug (the VCode it built does not validate).
    #[error("internal lowering error: {0}")]
    Internal(String),
}

/// What selection produces for one kernel.
#[derive(Debug)]
pub struct Lowered {
    /// The code over virtual registers.
    pub vcode: VCode<Sm50Inst>,
    /// What folding did (SASS counts left zero: they exist only after allocation and layout).
    pub fold: FoldStats,
    /// The literal pool the code reads as `c[0x2][off]` (constants that no immediate form
    /// holds exactly): the bytes of the kernel's `.nv.constant2.<kernel>` section, empty when
    /// the code reads none.
    pub constant2: Vec<u8>,
    /// Whether [`hoist`]'s store motion changed the order of some block: compiling with
    /// [`LowerOptions::no_store_motion`] would give other code.
    pub store_motion: bool,
}

/// Select SM50 instructions for `func` (a kernel of `module`). The code may read constant
/// bank 2: a cubin needs [`Lowered::constant2`] from [`lower_function_stats`] beside it.
pub fn lower_function(
    module: &ir::Module,
    func: &ir::Function,
    opts: &LowerOptions,
) -> Result<VCode<Sm50Inst>, LowerError> {
    lower_function_stats(module, func, opts).map(|l| l.vcode)
}

/// [`lower_function`], also returning what folding did and the literal pool.
pub fn lower_function_stats(
    module: &ir::Module,
    func: &ir::Function,
    opts: &LowerOptions,
) -> Result<Lowered, LowerError> {
    ir::verify_in_module(module, func).map_err(|e| LowerError::Invalid(format!("{e:?}")))?;
    lower_verified_stats(module, func, opts)
}

/// [`lower_function_stats`] for a function known to verify (every function `ir::build`
/// returns does: it verifies them itself), without verifying it again.
pub fn lower_verified_stats(
    module: &ir::Module,
    func: &ir::Function,
    opts: &LowerOptions,
) -> Result<Lowered, LowerError> {
    let mut lowered = select::Lowerer::new(module, func, opts).run()?;
    if !opts.no_hoist && !opts.no_ifconv {
        lowered.vcode = predicate::if_convert_early(lowered.vcode).map_err(LowerError::Internal)?;
    }
    if !opts.no_ifconv {
        lowered.vcode = guard::guard_selects(lowered.vcode).map_err(LowerError::Internal)?;
    }
    if !opts.no_hoist {
        let (vcode, moved) = hoist::hoist_loads(
            lowered.vcode,
            !opts.no_store_motion,
            match opts.interleave {
                Interleave::Wide => hoist::WIDE,
                Interleave::Narrow => hoist::NARROW,
                Interleave::Off => 0,
            },
        )
        .map_err(LowerError::Internal)?;
        lowered.vcode = vcode;
        lowered.store_motion = moved;
    }
    Ok(lowered)
}

/// Bytes of `.local` data kernel `f`'s variables need per thread
/// ([`ir::Module::local_layout`]: only the variables it names): pass it as
/// `AllocOptions::spill_base`, so that spill slots go after it. A `.local` address is an
/// offset from the stack pointer R1, which the emit stage lowers by the whole frame (this
/// size rounded up to 16, plus `Allocated::spill_bytes`; without spills, this size rounded up
/// to 8 or to the largest alignment of a variable) in the prologue.
pub fn local_size(module: &ir::Module, f: &ir::Function) -> u32 {
    module.local_layout(f).1
}

/// A flattened block: instructions with the block each branch (or `SSY`) names.
type Flat = Vec<(sm50::Inst, Option<BlockId>)>;
