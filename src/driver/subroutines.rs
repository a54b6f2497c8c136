//! Subroutines of the module (recursive functions): each compiled on its own as a kernel is,
//! given the frame the call ABI asks of it (docs/calls.md), and placed once after the code of
//! the kernel that calls it.
//!
//! In: a kernel's (or an object function's) emitted code whose `CAL`s name subroutines
//! (`lower::SUB_CAL_BASE + k`).
//! Out: the code with every called subroutine appended and each such `CAL` pointing at it; the
//! register count of the whole. Invariant: a subroutine is placed once per kernel, however
//! many calls reach it.

use super::*;

/// `EIATTR_CRS_STACK_SIZE` of a kernel that recurses, as ptxas 11.8 writes it.
pub(super) const RECURSION_CRS_STACK: u32 = 0x600;

/// What [`place_subroutines`] placed after a kernel's code.
pub(super) struct PlacedSubs {
    /// Registers the kernel and its subroutines use, at most.
    pub(super) regs: u32,
    /// Each subroutine placed, in code order.
    pub(super) subs: Vec<PlacedSub>,
}

/// One subroutine placed after a kernel's code: ptxas 11.8 gives it a LOCAL FUNC symbol
/// `$<kernel>$<name>` with its own `EIATTR_FRAME_SIZE` / `MIN_STACK_SIZE` (0xffffffff) /
/// `MAX_STACK_SIZE` records, and `-v` a "Function properties for <name>" line in which its
/// saves of callee-saved registers count as spills (`fact`: "8 bytes stack frame, 4 bytes
/// spill stores, 4 bytes spill loads").
#[derive(Clone, Debug)]
pub(super) struct PlacedSub {
    /// The PTX name.
    pub(super) name: String,
    /// Its instructions: indices `start..end` of the code.
    pub(super) start: usize,
    pub(super) end: usize,
    /// Its frame bytes.
    pub(super) frame: u32,
    /// Bytes of its `.local` data at the start of its frame (not spills).
    pub(super) local_data: u32,
    /// The stack a call of it needs: its frame and the deepest chain of calls below it
    /// (`EIATTR_MIN_STACK_SIZE`); `u32::MAX` when it can recurse.
    pub(super) min_stack: u32,
    /// Whether the kernel's own code calls it.
    pub(super) from_kernel: bool,
}

/// Compile the module's subroutines that kernel code `code` calls (a `CAL` whose `rel`
/// holds `lower::SUB_CAL_BASE + k`), directly or through each other, and place each once
/// after the code (which first gets an `EXIT` if it could fall through), pointing every
/// such `CAL` at its subroutine's first instruction. `srclocs` grows with the code (the
/// subroutines' instructions name no PTX line), `relocs` with their relocations (system
/// calls, addresses of `.global` variables). `None` when the code calls none.
///
/// Each subroutine is simplified, selected, allocated and emitted on its own, as a kernel
/// is, and then gets the frame the call ABI asks of it (docs/calls.md): on entry
/// `IADD32I R1, R1, -frame` and an `STL` of every callee-saved register it writes (R2,
/// R16..R31, then every other quad), and before each `RET` the
/// `LDL`s back and `IADD32I R1, R1, frame`, under the `RET`'s own guard. Its spill slots
/// sit at `[R1 + 0..]`, the saved registers after them.
pub(super) fn place_subroutines(
    inputs: &KernelInputs,
    pool: &mut Vec<u8>,
    object: bool,
    code: &mut Vec<Inst>,
    srclocs: &mut Vec<machinst::SrcLoc>,
    relocs: &mut Vec<(usize, lower::Reloc)>,
) -> Result<Option<PlacedSubs>, String> {
    let base = lower::SUB_CAL_BASE;
    let calls_of = |code: &[Inst]| -> Vec<usize> {
        code.iter()
            .filter(|i| i.form == Form::CAL)
            .filter_map(|i| i.get(Field::Rel))
            .filter(|&r| r >= base)
            .map(|r| ((r - base) & !lower::OUTLINED_CAL) as usize)
            .collect()
    };
    let mut work = calls_of(code);
    let from_kernel: Vec<usize> = work.clone();
    if work.is_empty() {
        return Ok(None);
    }
    let ends = code.last().is_some_and(|l| {
        matches!(l.form, Form::EXIT | Form::BRA | Form::RET)
            && l.get(Field::Pg) == Some(7)
            && l.get(Field::Pgn) == Some(0)
    });
    if !ends {
        code.push(Inst::new(Form::EXIT));
        srclocs.push(machinst::SrcLoc::NONE);
    }
    let mut start: rustc_hash::FxHashMap<usize, u64> = Default::default();
    let mut regs = 0;
    let mut placed = Vec::new();
    // Subroutine index of each placed one, and the subroutines each calls.
    let mut graph: Vec<(usize, Vec<usize>)> = Vec::new();
    while let Some(k) = work.pop() {
        if start.contains_key(&k) {
            continue;
        }
        let sub = inputs
            .module
            .subroutines
            .get(k)
            .ok_or_else(|| format!("internal error: no subroutine {k}"))?;
        let SubCode {
            code: mut sub_code,
            relocs: sub_relocs,
            regs: sub_regs,
            frame,
            local_data,
            constant2,
        } = compile_subroutine(inputs, sub, object)?;
        merge_literals(pool, &constant2, &mut sub_code, &sub.name)?;
        // A caller keeps values above R59 across a `CAL` (the clobber sets stop there,
        // `lower::abi::extern_call_clobbers`), so a subroutine of the standard ABI must not
        // write the caller-saved registers up there (R64..R67, ...).
        if sub_regs > 64 && !inputs.module.outlined.contains(&sub.name) {
            return Err(format!(
                "unsupported: the recursive function `{}` needs {sub_regs} registers (at most 64 are supported with calls)",
                sub.name
            ));
        }
        regs = regs.max(sub_regs);
        let callees = calls_of(&sub_code);
        work.extend(&callees);
        graph.push((k, callees));
        let at = code.len();
        relocs.extend(sub_relocs.into_iter().map(|(k, r)| (at + k, r)));
        start.insert(k, at as u64);
        placed.push(PlacedSub {
            name: sub.name.clone(),
            start: at,
            end: at + sub_code.len(),
            frame,
            local_data,
            min_stack: u32::MAX,
            from_kernel: from_kernel.contains(&k),
        });
        for mut i in sub_code {
            if matches!(i.form, Form::BRA | Form::SSY | Form::PBK | Form::CAL) {
                let rel = i.get(Field::Rel).unwrap_or(0);
                if rel < base {
                    i.set(Field::Rel, rel + at as u64);
                }
            }
            code.push(i);
            srclocs.push(machinst::SrcLoc::NONE);
        }
    }
    for i in code.iter_mut().filter(|i| i.form == Form::CAL) {
        if let Some(&at) = i
            .get(Field::Rel)
            .filter(|&r| r >= base)
            .and_then(|r| start.get(&(((r - base) & !lower::OUTLINED_CAL) as usize)))
        {
            i.set(Field::Rel, at);
        }
    }
    let stacks = min_stacks(&placed, &graph);
    for (p, m) in placed.iter_mut().zip(stacks) {
        p.min_stack = m;
    }
    Ok(Some(PlacedSubs { regs, subs: placed }))
}

/// Each placed subroutine's `EIATTR_MIN_STACK_SIZE`: its frame plus the largest of its
/// callees' (ptxas 11.8 writes a kernel's as the whole stack its calls need: probe
/// `outl.ptx`, where `big`'s frame is part of the kernel's 0x10), `u32::MAX` for one that
/// reaches itself again. `graph[i]` is placed subroutine `i`'s index and its callees'.
fn min_stacks(placed: &[PlacedSub], graph: &[(usize, Vec<usize>)]) -> Vec<u32> {
    let at = |k: usize| graph.iter().position(|(g, _)| *g == k);
    // Depth-first, with the subroutines on the current chain marked (a cycle: recursion).
    fn visit(
        i: usize,
        placed: &[PlacedSub],
        graph: &[(usize, Vec<usize>)],
        at: &dyn Fn(usize) -> Option<usize>,
        memo: &mut Vec<Option<u32>>,
        on_chain: &mut Vec<bool>,
    ) -> u32 {
        if let Some(m) = memo[i] {
            return m;
        }
        if on_chain[i] {
            return u32::MAX;
        }
        on_chain[i] = true;
        let mut below = 0u32;
        for &c in &graph[i].1 {
            let m = at(c).map_or(0, |j| visit(j, placed, graph, at, memo, on_chain));
            below = below.max(m);
        }
        on_chain[i] = false;
        let m = if below == u32::MAX {
            u32::MAX
        } else {
            placed[i].frame.saturating_add(below)
        };
        memo[i] = Some(m);
        m
    }
    let mut memo = vec![None; placed.len()];
    let mut on_chain = vec![false; placed.len()];
    (0..placed.len())
        .map(|i| visit(i, placed, graph, &at, &mut memo, &mut on_chain))
        .collect()
}

/// Whether the call ABI has the callee keep register `r` (docs/calls.md).
pub(super) fn callee_saved(r: u32) -> bool {
    r == 2 || (16..32).contains(&r) || (r >= 32 && (r / 4) % 2 == 1)
}

/// Whether a subroutine kept for its size (`ir::Module::outlined`) keeps register `r` for
/// its caller: every register but R1 (the stack pointer, restored) and those its `CAL`
/// clobbers (`lower::abi::outlined_call_clobbers`, the `lower::OUTLINED_CAL` convention:
/// R0, R3..R15).
fn outlined_keeps(r: u32) -> bool {
    let (clobbers, _) = crate::lower::abi::outlined_call_clobbers(0);
    r != 1 && !clobbers.iter().any(|c| u32::from(c.0) == r)
}

/// The registers a subroutine saves when it writes them: [`callee_saved`], or
/// [`outlined_keeps`] for a subroutine kept for its size.
fn saves(outlined: bool) -> fn(u32) -> bool {
    if outlined {
        outlined_keeps
    } else {
        callee_saved
    }
}

/// [`saves`] as one bit per register (`AllocOptions::save_cost`).
fn callee_saved_mask(outlined: bool) -> [u64; 4] {
    let mut m = [0u64; 4];
    for r in (0..255u32).filter(|&r| saves(outlined)(r)) {
        m[r as usize / 64] |= 1 << (r % 64);
    }
    m
}

/// A subroutine's code with its frame (see [`compile_subroutine`]).
pub(super) struct SubCode {
    /// The code, `BRA`/`CAL` `rel`s indices into it.
    pub(super) code: Vec<Inst>,
    /// Relocations, by index in `code`.
    pub(super) relocs: Vec<(usize, lower::Reloc)>,
    /// Registers it uses.
    pub(super) regs: u32,
    /// Its frame bytes: its `.local` data, spill slots, then the callee-saved registers it
    /// saves.
    pub(super) frame: u32,
    /// Its `.local` data's bytes (at the start of the frame).
    pub(super) local_data: u32,
    /// Its literal pool (constant bank 2, from offset 0): the caller appends it to the
    /// kernel's own ([`merge_literals`]), as ptxas's subroutines read the kernel's
    /// `.nv.constant2.<kernel>`.
    pub(super) constant2: Vec<u8>,
}

/// Append a subroutine's literal pool `sub` to the kernel's `pool` and point the `c[0x2]`
/// operands of its `code` at the appended copy (ptxas places a subroutine in the kernel's
/// `.text` and its constants in the kernel's bank 2; for a function of a relocatable object,
/// the pool is the function's own `.nv.constant2.<f>`, which nvlink relocates).
pub(super) fn merge_literals(
    pool: &mut Vec<u8>,
    sub: &[u8],
    code: &mut [Inst],
    name: &str,
) -> Result<(), String> {
    if sub.is_empty() {
        return Ok(());
    }
    // 8-aligned: an f64 literal keeps its alignment.
    let at = pool.len().next_multiple_of(8);
    if at + sub.len() > 0x1_0000 {
        return Err(format!(
            "unsupported: the literals of `{name}` do not fit the kernel's constant bank 2"
        ));
    }
    pool.resize(at, 0);
    pool.extend_from_slice(sub);
    for i in code.iter_mut().filter(|i| i.get(Field::Cbk) == Some(2)) {
        if let Some(o) = i.get(Field::Cbo) {
            i.set(Field::Cbo, o + (at / 4) as u64);
        }
    }
    Ok(())
}

/// One subroutine's code with its frame (see [`place_subroutines`]), its `BRA`/`CAL`
/// `rel`s indices into it; its relocations (by index in that code); its register count;
/// its frame bytes.
///
/// The frame, from R1 up, as ptxas 11.8 lays it out (`$k$rsum` with a 16-byte `.local`
/// array: `IADD32I R1, R1, -0x18`, the array at `[R1]`, the save of R2 at `[R1+0x10]`): the
/// subroutine's own `.local` variables at their [`ir::Module::local_layout`] offsets (each
/// activation has its own, since R1 moves with every call), then the spill slots (from
/// that size rounded up to 16, `AllocOptions::spill_base`), then the saved registers; the
/// whole rounded up to 8, or to the largest alignment of a variable so that R1 keeps every
/// variable aligned.
/// Its `.shared` variables are the kernel's (`ir::Module::shared_layout`) and its literals
/// are returned for [`merge_literals`]. With `object` (a function of a relocatable object,
/// and what it calls: there is no kernel yet) every `.shared` address is a relocated
/// `MOV32I` (`lower::LowerOptions::shared_relocs`), which nvlink resolves in each kernel;
/// otherwise the kernel's choice holds (under `-c`, the dynamically sized arrays' are).
pub(super) fn compile_subroutine(
    inputs: &KernelInputs,
    sub: &ir::Function,
    object: bool,
) -> Result<SubCode, String> {
    let mut f = sub.clone();
    let outlined = inputs.module.outlined.contains(&sub.name);
    prepare_kernel_ir_with(inputs.module, &mut f, inputs.opts.unroll_runtime, true);
    let lower_opts = lower::LowerOptions {
        shared_relocs: if object {
            lower::SharedRelocs::All
        } else {
            inputs.lower_opts.shared_relocs
        },
        ..inputs.lower_opts
    };
    let lowered = lower::lower_verified_stats(inputs.module, &f, &lower_opts)
        .map_err(|e| format!("subroutine `{}`: {e}", f.name))?;
    let (local_vars, local_data) = inputs.module.local_layout(&f);
    let align = local_vars
        .keys()
        .map(|&gv| inputs.module.vars[gv].align)
        .fold(8, u32::max);
    let alloc_opts = AllocOptions {
        max_regs: inputs.max_regs.min(255) as u8,
        checker: cfg!(debug_assertions),
        spill_base: local_data,
        // Each callee-saved register it writes costs a save and a restore (ptxas's `fact`
        // keeps its short-lived values in R0 and R3..: caller-saved).
        save_cost: callee_saved_mask(outlined),
        // (`alloc::spill` places its slots from the spill base up, before the frame's
        // saved registers are known; not measured for subroutines)
        presplit: false,
        // (its registers above the call ABI's belong to its callers)
        promote_slots: false,
        spread_extra: None,
    };
    let alloc = machinst::allocate_owned(lowered.vcode, &alloc_opts).map_err(|e| {
        format!(
            "register allocation failed for subroutine `{}`: {e}",
            f.name
        )
    })?;
    let emitted = lower::emit_all_with(
        &alloc,
        &lower::EmitOptions {
            reconverge: !inputs.opts.no_reconvergence,
            if_convert: !inputs.opts.no_ifconv,
        },
    );
    if let Some(why) = emitted.reconvergence_error {
        return Err(format!("subroutine `{}`: {why}", f.name));
    }
    // The callee-saved registers its own instructions write (a call it makes preserves
    // them: the callee saves what it writes in turn), as ptxas saves them (`fact` uses R2
    // and saves R2 alone); one it never writes keeps the caller's value untouched.
    let mut written = vec![false; 256];
    for i in emitted
        .code
        .iter()
        .filter(|i| !matches!(i.form, Form::CAL | Form::JCAL))
    {
        for r in crate::sm50::sched::model::access(i).defs {
            if let Some(w) = written.get_mut(r) {
                *w = true;
            }
        }
    }
    let saved: Vec<u32> = (0..alloc.num_regs)
        .filter(|&r| saves(outlined)(r) && written[r as usize])
        .collect();
    let saves_at = if alloc.spill_bytes > 0 {
        local_data.next_multiple_of(16) + alloc.spill_bytes
    } else {
        local_data.next_multiple_of(4)
    };
    let (saves, saves_end) = save_slots(&saved, saves_at);
    let frame = saves_end.next_multiple_of(align);
    let adjust = |by: i64| {
        Inst::new(Form::IADD32I)
            .with(Field::Rd, 1)
            .with(Field::Ra, 1)
            .with_signed(Field::Imm, by)
    };
    let mut prologue = Vec::new();
    if frame > 0 {
        prologue.push(adjust(-i64::from(frame)));
        for &(r, size, off) in &saves {
            prologue.push(
                Inst::new(Form::STL)
                    .with(Field::Rd, u64::from(r))
                    .with(Field::Ra, 1)
                    .with(Field::Size, size)
                    .with_signed(Field::Off, off),
            );
        }
    }
    // New positions: the prologue, then each instruction with its epilogue before each RET.
    let old = emitted.code;
    let relocs_at = emitted.relocs;
    let mut out = prologue;
    let mut index = Vec::with_capacity(old.len());
    // The f32 division's slow path, appended after the code by `lower::emit` (the target of
    // its `CAL`s, the only `CAL`s whose `rel` is an index here), returns to this
    // subroutine's own code: its `RET`s get no epilogue.
    let fdiv_start = old
        .iter()
        .filter(|i| i.form == Form::CAL)
        .filter_map(|i| i.get(Field::Rel))
        .filter(|&r| r < lower::SUB_CAL_BASE)
        .min()
        .unwrap_or(u64::MAX);
    for (at, i) in old.iter().enumerate() {
        index.push(out.len() as u64);
        if i.form == Form::RET && frame > 0 && (at as u64) < fdiv_start {
            let pg = i.get(Field::Pg).unwrap_or(7);
            let pgn = i.get(Field::Pgn).unwrap_or(0);
            let guard = |x: Inst| x.with(Field::Pg, pg).with(Field::Pgn, pgn);
            for &(r, size, off) in &saves {
                out.push(guard(
                    Inst::new(Form::LDL)
                        .with(Field::Rd, u64::from(r))
                        .with(Field::Ra, 1)
                        .with(Field::Size, size)
                        .with_signed(Field::Off, off),
                ));
            }
            out.push(guard(adjust(i64::from(frame))));
        }
        out.push(*i);
    }
    patch_stack_arg_loads(&mut out, frame);
    let end = out.len() as u64;
    for i in &mut out {
        if matches!(i.form, Form::BRA | Form::SSY | Form::PBK | Form::CAL) {
            let rel = i.get(Field::Rel).unwrap_or(0);
            if rel < lower::SUB_CAL_BASE {
                let to = index.get(rel as usize).copied().unwrap_or(end);
                i.set(Field::Rel, to);
            }
        }
    }
    let relocs = relocs_at
        .into_iter()
        .map(|(k, r)| (index[k] as usize, r))
        .collect();
    Ok(SubCode {
        code: out,
        relocs,
        regs: alloc.num_regs,
        frame,
        local_data,
        constant2: lowered.constant2,
    })
}

/// Where a subroutine saves the registers `saved` (ascending), from byte `at` of its frame:
/// `(first register, STL/LDL size code, offset)` per save, and the end of the saves. Two
/// saved registers `R2k`, `R2k+1` take one 8-aligned `STL.64`/`LDL.64` (half the
/// instructions of a long save list; R1 stays 8-aligned, frames being multiples of 8), the
/// others one word each.
fn save_slots(saved: &[u32], at: u32) -> (Vec<(u32, u64, i64)>, u32) {
    use crate::sm50::values::ldl::size;
    let pair = |k: usize| saved[k] % 2 == 0 && saved.get(k + 1) == Some(&(saved[k] + 1));
    let mut pairs = Vec::new();
    let mut singles = Vec::new();
    let mut k = 0;
    while k < saved.len() {
        if pair(k) {
            pairs.push(saved[k]);
            k += 2;
        } else {
            singles.push(saved[k]);
            k += 1;
        }
    }
    let mut out = Vec::new();
    let mut off = if pairs.is_empty() {
        at
    } else {
        at.next_multiple_of(8)
    };
    for r in pairs {
        out.push((r, size::V64, i64::from(off)));
        off += 8;
    }
    for r in singles {
        out.push((r, size::DEFAULT, i64::from(off)));
        off += 4;
    }
    (out, off)
}

/// The subroutine's loads of its stack arguments (`[R1 + lower::STACK_ARG_LOAD_BASE + off]`,
/// `lower::select::call`) made `[R1 + frame + off]`: the caller stored them at the bottom of
/// its own frame, just above this one (docs/calls.md, ptxas's `LDL R5, [R1]` in a callee
/// with no frame).
fn patch_stack_arg_loads(code: &mut [Inst], frame: u32) {
    let base = lower::STACK_ARG_LOAD_BASE as u64;
    // (`STL`: a result of more than 12 words, stored in the caller's buffer there.)
    for i in code
        .iter_mut()
        .filter(|i| matches!(i.form, Form::LDL | Form::STL))
    {
        // (The raw field: the marked offsets are positive, below the 24-bit sign bit.)
        let off = i.get(Field::Off).unwrap_or(0);
        if i.get(Field::Ra) == Some(1) && (base..0x80_0000).contains(&off) {
            *i = i.with_signed(Field::Off, (off - base) as i64 + i64::from(frame));
        }
    }
}
