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
//! indices into byte offsets, `target = addr + 8 + rel`). Before layout, [`ifconv`] turns the
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

pub mod amode;
pub mod carry;
mod explain;
pub mod ifconv;
pub mod inst;
pub mod lea;
pub mod plain;
pub mod reconverge;
mod select;
pub(crate) use select::SUB_CAL_BASE;
pub mod stats;

pub use inst::{Operand, Piece, RegRef, Reloc, RelocWord, Role, Sm50Inst};
pub use stats::{Fold, FoldStats};

use crate::ir;
use crate::machinst::{Allocated, BlockId, SrcLoc, VCode};
use crate::sm50::{self, Field, Form};

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
    /// Keep `div.rn.f32` / `rcp.rn.f32` as the whole inline sequence at every site
    /// (`--no-subroutines`) instead of a fast path that calls the kernel's one slow-path
    /// subroutine (`select::fdiv`).
    pub no_subroutines: bool,
    /// The target's SM number (`-arch sm_53` is 53; 0, the default, reads as 50). Only
    /// sm_53 has the half-precision ALU (`HADD2`..`HSET2`); below it `.f16` arithmetic goes
    /// through f32 and f64 (`select::half`).
    pub sm: u32,
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
    select::Lowerer::new(module, func, opts).run()
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

/// Flatten an allocated function into SM50 instructions (see the module essay for what the
/// `BRA` fields hold). Panics only if `alloc` still has virtual registers, which
/// `machinst::allocate` never returns.
pub fn emit(alloc: &Allocated<Sm50Inst>) -> Vec<sm50::Inst> {
    emit_relocated_with(alloc, true).0
}

/// [`emit`], with the `SSY`/`SYNC` of [`reconverge`] only when `reconverge` holds (without,
/// divergent paths never meet again: for tests that show why they must).
pub fn emit_with(alloc: &Allocated<Sm50Inst>, reconverge: bool) -> Vec<sm50::Inst> {
    emit_relocated_with(alloc, reconverge).0
}

/// [`emit`], also returning the relocations: (index in the code, relocation).
pub fn emit_relocated(alloc: &Allocated<Sm50Inst>) -> (Vec<sm50::Inst>, Vec<(usize, Reloc)>) {
    emit_relocated_with(alloc, true)
}

/// [`emit_with`] and [`emit_relocated`] in one.
pub fn emit_relocated_with(
    alloc: &Allocated<Sm50Inst>,
    reconverge: bool,
) -> (Vec<sm50::Inst>, Vec<(usize, Reloc)>) {
    let e = emit_all(alloc, reconverge);
    (e.code, e.relocs)
}

/// What [`emit_all`] produces: the code and, per instruction, what it came from.
#[derive(Clone, Debug, Default)]
pub struct Emitted {
    /// The instructions (see the module essay for what the `BRA` fields hold).
    pub code: Vec<sm50::Inst>,
    /// Relocations: (index in `code`, relocation).
    pub relocs: Vec<(usize, Reloc)>,
    /// One per instruction of `code`: the PTX line of the IR instruction it was selected for.
    pub srclocs: Vec<SrcLoc>,
    /// `(index in code, text)`: the [`Sm50Inst::note`]s, on each sequence's first instruction.
    pub notes: Vec<(usize, Box<str>)>,
    /// Why the code must not be used: a divergent branch got no reconvergence point and an
    /// instruction that needs the whole warp (`BAR`, `SHFL`, `VOTE`) follows it (see
    /// [`reconverge::insert_reconvergence`]). `None` when the code is usable.
    pub reconvergence_error: Option<String>,
}

/// [`emit_relocated_with`], also giving each instruction's source line and note.
///
/// Relocations, source lines and notes are kept per block by instruction index. [`ifconv`]
/// moves them with the instructions it moves. That stays
/// right through the later passes because every one of them only touches a block's trailing
/// transfers (`SSY` is inserted before the trailing `BRA`/`SYNC` run, `SYNC`/`EXIT` replace
/// branches, and the fall-through pass drops or rewrites the last one or two branches), which
/// never carry a relocation or a note; whole blocks that disappear hold nothing but a
/// transfer. A transfer pushed past the block's original length (after an `SSY` went in
/// before it) takes the source line of the block's last instruction, its terminator.
pub fn emit_all(alloc: &Allocated<Sm50Inst>, reconverge: bool) -> Emitted {
    emit_all_with(
        alloc,
        &EmitOptions {
            reconverge,
            if_convert: reconverge,
        },
    )
}

/// What [`emit_all_with`] does besides flattening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmitOptions {
    /// Place `SSY`/`SYNC` ([`reconverge`]).
    pub reconverge: bool,
    /// Turn short branch sides into predicated code first ([`ifconv`]).
    pub if_convert: bool,
}

/// [`emit_all`] with every option: [`ifconv`] (when `opts.if_convert`) runs on the
/// flattened blocks before [`reconverge`], so a converted branch needs no token.
pub fn emit_all_with(alloc: &Allocated<Sm50Inst>, opts: &EmitOptions) -> Emitted {
    let reconverge = opts.reconverge;
    // Pass 1: resolve registers; keep (instruction, branch target block), and each
    // instruction's relocation beside it.
    let mut blocks: Vec<(BlockId, Flat)> = Vec::new();
    let mut block_relocs: rustc_hash::FxHashMap<BlockId, Vec<Option<Reloc>>> = Default::default();
    let mut block_srclocs: rustc_hash::FxHashMap<BlockId, Vec<SrcLoc>> = Default::default();
    let mut block_notes: rustc_hash::FxHashMap<BlockId, Vec<(usize, Box<str>)>> =
        Default::default();
    let mut divergent = Vec::new();
    for b in &alloc.blocks {
        divergent.push(
            b.insts
                .last()
                .is_some_and(|t| t.role == Role::Branch && t.targets.len() == 2 && !t.uniform),
        );
        // One entry per piece in each list, sized up front (grown from empty, they were
        // copied whole several times per block).
        let pieces: usize = b.insts.iter().map(|i| i.pieces.len()).sum();
        let mut insts = Vec::with_capacity(pieces);
        let mut relocs = Vec::with_capacity(pieces);
        let mut srclocs = Vec::with_capacity(pieces);
        let mut notes = Vec::new();
        for i in &b.insts {
            let before = insts.len();
            i.resolve_into(&mut insts)
                .unwrap_or_else(|e| panic!("lower::emit on unallocated code: {e}"));
            relocs.extend(i.pieces.iter().map(|p| p.reloc));
            if let Some(n) = &i.note {
                notes.push((before, n.clone()));
            }
            srclocs.extend(std::iter::repeat(i.srcloc).take(insts.len() - before));
        }
        blocks.push((b.id, insts));
        block_relocs.insert(b.id, relocs);
        block_srclocs.insert(b.id, srclocs);
        if !notes.is_empty() {
            block_notes.insert(b.id, notes);
        }
    }
    if opts.if_convert {
        ifconv::if_convert(
            &mut blocks,
            &mut divergent,
            ifconv::Meta {
                relocs: &mut block_relocs,
                srclocs: &mut block_srclocs,
                notes: &mut block_notes,
            },
        );
    }
    // Reconvergence (`SSY`/`SYNC`), then `@P SYNC` / `@P EXIT` for branches to blocks that
    // hold only that. A branch whose token cannot be placed runs its sides one after the
    // other; that is an error only where the split warp would reach a barrier or a shuffle.
    let reconvergence_error = if reconverge {
        reconverge::insert_reconvergence(&mut blocks, &divergent).err()
    } else {
        None
    };
    reconverge::fold_trivial_targets(&mut blocks);
    // Pass 2: fall-through. A trailing `BRA next` goes; `@P BRA next ; BRA other` becomes
    // `@!P BRA other` (and `@P BRA next ; SYNC` or `EXIT` becomes `@!P SYNC` or `@!P EXIT`).
    for k in 0..blocks.len() {
        let Some(next) = blocks.get(k + 1).map(|b| b.0) else {
            continue;
        };
        let insts = &mut blocks[k].1;
        let n = insts.len();
        if n >= 1 && insts[n - 1].1 == Some(next) && is_plain_bra(&insts[n - 1].0) {
            insts.pop();
            continue;
        }
        if n >= 2
            && insts[n - 2].1 == Some(next)
            && insts[n - 2].0.form == Form::BRA
            && insts[n - 1].1.is_some()
            && is_plain_bra(&insts[n - 1].0)
            && !is_plain_bra(&insts[n - 2].0)
        {
            let other = insts.pop().and_then(|(_, t)| t);
            let last = insts.last_mut().expect("n >= 2");
            let neg = last.0.get(Field::Pgn).unwrap_or(0);
            last.0.set(Field::Pgn, neg ^ 1);
            last.1 = other;
        } else if n >= 2
            && insts[n - 2].1 == Some(next)
            && insts[n - 2].0.form == Form::BRA
            && !is_plain_bra(&insts[n - 2].0)
            && is_bare(&insts[n - 1].0)
        {
            let form = insts.pop().map_or(Form::SYNC, |(i, _)| i.form);
            let last = insts.last_mut().expect("n >= 2");
            let neg = last.0.get(Field::Pgn).unwrap_or(0);
            let pg = last.0.get(Field::Pg).unwrap_or(7);
            last.0 = sm50::Inst::new(form)
                .with(Field::Pg, pg)
                .with(Field::Pgn, neg ^ 1);
            last.1 = None;
        }
    }
    // Pass 3: block start indices, then targets.
    let mut start = rustc_hash::FxHashMap::default();
    let mut n = 0usize;
    for (id, insts) in &blocks {
        start.insert(*id, n);
        n += insts.len();
    }
    let mut out = Vec::with_capacity(n);
    let mut relocs = Vec::new();
    let mut srclocs = Vec::with_capacity(n);
    let mut notes = Vec::new();
    for (id, insts) in blocks {
        let brel = block_relocs.remove(&id).unwrap_or_default();
        let blocs = block_srclocs.remove(&id).unwrap_or_default();
        for (k, note) in block_notes.remove(&id).unwrap_or_default() {
            notes.push((out.len() + k, note));
        }
        for (k, (mut inst, target)) in insts.into_iter().enumerate() {
            srclocs.push(
                blocs
                    .get(k)
                    .or(blocs.last())
                    .copied()
                    .unwrap_or(SrcLoc::NONE),
            );
            if let Some(t) = target {
                inst.set(Field::Rel, start.get(&t).copied().unwrap_or(n) as u64);
            }
            if let Some(Some(r)) = brel.get(k) {
                debug_assert!(target.is_none(), "a relocation on a branch");
                relocs.push((out.len(), *r));
            }
            out.push(inst);
        }
    }
    // Pass 4: the slow-path subroutine (`select::fdiv`), once, after the kernel's code when
    // some `CAL` calls it; the kernel's code first ends in an `EXIT` if it could fall through.
    // (A `CAL` of one of the module's subroutines, `select::call`, is the driver's to place.)
    let fdiv_cal =
        |i: &sm50::Inst| i.form == Form::CAL && i.get(Field::Rel) == Some(select::CAL_FDIV);
    if out.iter().any(fdiv_cal) {
        let ends = out.last().is_some_and(|l| {
            matches!(l.form, Form::EXIT | Form::BRA)
                && l.get(Field::Pg) == Some(7)
                && l.get(Field::Pgn) == Some(0)
        });
        if !ends {
            out.push(sm50::Inst::new(Form::EXIT));
            srclocs.push(SrcLoc::NONE);
        }
        let start = out.len() as u64;
        for i in out.iter_mut().filter(|i| fdiv_cal(i)) {
            i.set(Field::Rel, start);
        }
        let sub = select::fdiv_slow_path()
            .resolve()
            .expect("the slow path names only physical registers");
        for (inst, _) in sub {
            out.push(inst);
            srclocs.push(SrcLoc::NONE);
        }
    }
    Emitted {
        code: out,
        relocs,
        srclocs,
        notes,
        reconvergence_error,
    }
}

/// An unguarded `SYNC` or `EXIT`.
fn is_bare(i: &sm50::Inst) -> bool {
    matches!(i.form, Form::SYNC | Form::EXIT)
        && i.get(Field::Pg) == Some(7)
        && i.get(Field::Pgn) == Some(0)
}

/// A flattened block: instructions with the block each branch (or `SSY`) names.
type Flat = Vec<(sm50::Inst, Option<BlockId>)>;

/// An unconditional `BRA` (guard PT, not negated).
fn is_plain_bra(i: &sm50::Inst) -> bool {
    i.form == Form::BRA && i.get(Field::Pg) == Some(7) && i.get(Field::Pgn) == Some(0)
}
