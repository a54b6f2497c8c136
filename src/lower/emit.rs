//! Post-allocation emission: flattening an allocated function ([`Allocated`]) into plain
//! [`sm50::Inst`]s in layout order, with if-conversion ([`super::ifconv`]) and reconvergence
//! ([`super::reconverge`]) on the flattened blocks, branch targets as instruction indices, and
//! per instruction its relocation, source line and note ([`Emitted`]).
//!
//! In: a register-allocated function without virtual registers. Out: [`Emitted`]. Invariant:
//! relocations, source lines and notes stay attached to their instructions through every pass
//! here (see [`emit_all`]).

use super::*;

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
// Long by design: the emission passes in order over per-block vectors they share (relocations,
// source lines and notes move with the instructions).
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
            } else if let Some(delta) = local_branch(&inst) {
                inst.set(Field::Rel, (out.len() as u64) + delta);
            }
            if let Some(Some(r)) = brel.get(k) {
                debug_assert!(target.is_none(), "a relocation on a branch");
                relocs.push((out.len(), *r));
            }
            out.push(inst);
        }
    }
    // Pass 4: the slow-path subroutines (`select::fdiv`: f32 and f64 division,
    // reciprocal and square root), each once,
    // after the kernel's code when some `CAL` calls it; the kernel's code first ends in an
    // `EXIT` if it could fall through. (A `CAL` of one of the module's subroutines,
    // `select::call`, is the driver's to place.)
    let subs: [(u64, fn() -> Sm50Inst); 6] = [
        (select::CAL_FDIV, select::fdiv_slow_path),
        (select::CAL_FRCP, select::frcp_slow_path),
        (select::CAL_DDIV, select::ddiv_slow_path),
        (select::CAL_DRCP, select::drcp_slow_path),
        (select::CAL_DSQRT, select::dsqrt_slow_path),
        (select::CAL_FSQRT, select::fsqrt_slow_path),
    ];
    for (placeholder, build) in subs {
        let cal_of = |i: &sm50::Inst| i.form == Form::CAL && i.get(Field::Rel) == Some(placeholder);
        if !out.iter().any(cal_of) {
            continue;
        }
        let ends = out.last().is_some_and(|l| {
            matches!(l.form, Form::EXIT | Form::BRA | Form::RET)
                && l.get(Field::Pg) == Some(7)
                && l.get(Field::Pgn) == Some(0)
        });
        if !ends {
            out.push(sm50::Inst::new(Form::EXIT));
            srclocs.push(SrcLoc::NONE);
        }
        let start = out.len() as u64;
        for i in out.iter_mut().filter(|i| cal_of(i)) {
            i.set(Field::Rel, start);
        }
        let sub = build()
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

/// An unguarded `SYNC`, `EXIT` or `BRK`.
pub(super) fn is_bare(i: &sm50::Inst) -> bool {
    matches!(i.form, Form::SYNC | Form::EXIT | Form::BRK)
        && i.get(Field::Pg) == Some(7)
        && i.get(Field::Pgn) == Some(0)
}

/// The distance to the target of a `BRA`/`SSY` within its sequence
/// ([`super::inst::LOCAL_BRANCH`]).
fn local_branch(i: &sm50::Inst) -> Option<u64> {
    let rel = i.get(Field::Rel)?;
    (matches!(i.form, Form::BRA | Form::SSY) && rel & super::inst::LOCAL_BRANCH != 0)
        .then_some(rel & !super::inst::LOCAL_BRANCH)
}

/// An unconditional `BRA` (guard PT, not negated).
pub(super) fn is_plain_bra(i: &sm50::Inst) -> bool {
    i.form == Form::BRA && i.get(Field::Pg) == Some(7) && i.get(Field::Pgn) == Some(0)
}
