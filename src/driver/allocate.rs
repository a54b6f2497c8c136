//! Lowering and register allocation of one kernel ([`lower_and_allocate`], with its retries;
//! [`reallocate`] compiles the kept recipe once more with a capped spread), and what the
//! allocation's result sets: the warps per SM of a register count ([`warps`]) and the
//! stack frame ([`frame_size`]).

use super::*;

/// How an allocation was made: the lowering options and the register budget of the compile
/// kept among [`lower_and_allocate`]'s retries, to allocate the same code again with another
/// spread (`compile_kernel`).
#[derive(Clone, Copy)]
pub(super) struct Recipe {
    lower: LowerOptions,
    max_regs: u8,
}

/// What [`lower_and_allocate`] and [`reallocate`] return: fold statistics, literal pool, the
/// allocation and how it was made.
type Allocation = (
    FoldStats,
    Vec<u8>,
    machinst::Allocated<lower::Sm50Inst>,
    Recipe,
);

/// One compile: (fold statistics, literal pool, the `--emit vcode` text, the allocation,
/// whether it calls a subroutine, whether store motion moved something, how it was made).
type Compiled = (
    FoldStats,
    Vec<u8>,
    String,
    machinst::Allocated<lower::Sm50Inst>,
    bool,
    bool,
    Recipe,
);

/// The allocation options of a kernel's compile: `max_regs`, spill slots after its `.local`
/// data (`local_data` bytes), both addressed from R1.
fn alloc_options(max_regs: u8, local_data: u32) -> AllocOptions {
    AllocOptions {
        max_regs,
        checker: cfg!(debug_assertions),
        spill_base: local_data,
        ..AllocOptions::default()
    }
}

/// Lower the kernel of `cx` with `lower_opts` and allocate it with `alloc_opts`, once.
fn compile_once(
    cx: &KernelCtx,
    lower_opts: &LowerOptions,
    alloc_opts: &AllocOptions,
    times: &mut PassTimes,
    t: &mut std::time::Instant,
) -> Result<Compiled, Diagnostics> {
    let KernelCtx {
        module,
        opts,
        f,
        name,
        ..
    } = *cx;
    let err = |msg: String| cx.err(msg);
    let lower::Lowered {
        vcode,
        fold,
        constant2,
        store_motion,
    } = lower::lower_verified_stats(module, f, lower_opts)
        .map_err(|e| err(format!("cannot compile kernel `{name}`: {e}")))?;
    times.lap("lower", t);
    let text = if opts.emit == Emit::Vcode {
        format!("kernel {name}:\n{vcode}\n")
    } else {
        String::new()
    };
    let calls = vcode.has_clobbers();
    let alloc = machinst::allocate_owned(vcode, alloc_opts).map_err(|e| {
        err(format!(
            "register allocation failed for kernel `{name}`: {e}"
        ))
    })?;
    times.lap("regalloc", t);
    let recipe = Recipe {
        lower: *lower_opts,
        max_regs: alloc_opts.max_regs,
    };
    Ok((fold, constant2, text, alloc, calls, store_motion, recipe))
}

/// The kept compile's `--emit vcode`/`--emit alloc` text to `out`, and its allocation.
fn finish(cx: &KernelCtx, compiled: Compiled, out: &mut Output) -> Allocation {
    let (fold, constant2, vtext, alloc, _, _, recipe) = compiled;
    out.text.push_str(&vtext);
    if cx.opts.emit == Emit::Alloc {
        let _ = writeln!(out.text, "kernel {}:\n{alloc}", cx.name);
    }
    (fold, constant2, alloc, recipe)
}

/// The compile `recipe` describes once more, its colouring spread over at most `extra`
/// registers above the fewest it finds (`AllocOptions::spread_extra`; `compile_kernel`'s
/// spread retry).
pub(super) fn reallocate(
    cx: &KernelCtx,
    recipe: Recipe,
    extra: u32,
    local_data: u32,
    out: &mut Output,
    times: &mut PassTimes,
    t: &mut std::time::Instant,
) -> Result<Allocation, Diagnostics> {
    let alloc_opts = AllocOptions {
        spread_extra: Some(extra),
        ..alloc_options(recipe.max_regs, local_data)
    };
    let compiled = compile_once(cx, &recipe.lower, &alloc_opts, times, t)?;
    Ok(finish(cx, compiled, out))
}

/// Lower and allocate the kernel: (fold statistics, literal pool, the allocation, how it was
/// made). With `--emit vcode`/`--emit alloc` their text goes to `out`.
pub(super) fn lower_and_allocate(
    cx: &KernelCtx,
    lower_opts: LowerOptions,
    max_regs: u32,
    local_data: u32,
    out: &mut Output,
    times: &mut PassTimes,
    t: &mut std::time::Instant,
) -> Result<Allocation, Diagnostics> {
    let alloc_opts = alloc_options(max_regs as u8, local_data);
    let lower_and_allocate =
        |lower_opts: &LowerOptions, times: &mut PassTimes, t: &mut std::time::Instant| {
            compile_once(cx, lower_opts, &alloc_opts, times, t)
        };
    // The slow-path subroutine pins 14 registers (`lower::select::fdiv`). Where a kernel
    // that calls it spills although its values and those registers fit in the registers
    // (so the spills come from how the allocator worked around the calls, not from
    // pressure), or where `--maxrregcount` holds the registers down, the inline division
    // may spill less: keep whichever spills less. Where they do not fit in the 64 of the
    // allocator's scalar class (`spills_forced`), the inline code, with 12 scratch
    // registers at every division, spills too, and the subroutine version's shorter code
    // is kept without compiling the other. And where those registers do not fit under
    // `--maxrregcount` at all, the inline code may.
    let inline = LowerOptions {
        no_subroutines: true,
        ..lower_opts
    };
    let (mut compiled, mut chosen) = match lower_and_allocate(&lower_opts, times, t) {
        Ok(x) => (x, lower_opts),
        Err(e) if !lower_opts.no_subroutines => (
            lower_and_allocate(&inline, times, t).map_err(|_| e)?,
            inline,
        ),
        Err(e) => return Err(e),
    };
    if compiled.3.spill_bytes > 0 && compiled.4 && !compiled.3.spills_forced {
        let other = lower_and_allocate(&inline, times, t)?;
        if other.3.spill_bytes < compiled.3.spill_bytes
            && other.3.code_cost() <= compiled.3.code_cost()
        {
            (compiled, chosen) = (other, inline);
        }
    }
    // The f32 square root's slow path pins three registers at every site (its operand, its
    // result and one scratch register), which the inline sequence does not. Where the kernel
    // calls it and spills, compile it once more with the square roots inline and keep
    // whichever spills less for code that costs no more (MC-GPU's `track_particles`, 12
    // roots at 93 scalar registers: 64 bytes of spill traffic in its loops with the calls,
    // none inline). Trade-off: one more compile for spilling kernels with such roots.
    let calls_sqrt = |c: &Compiled| {
        c.3.blocks
            .iter()
            .any(|b| b.insts.iter().any(|i| i.calls_sqrt_slow_path()))
    };
    if compiled.3.spill_bytes > 0 && calls_sqrt(&compiled) {
        let inline_sqrt = LowerOptions {
            inline_sqrt: true,
            ..chosen
        };
        if let Ok(other) = lower_and_allocate(&inline_sqrt, times, t) {
            if spills_less(&other.3, &compiled.3) {
                (compiled, chosen) = (other, inline_sqrt);
            }
        }
    }
    // `lower::hoist`'s interleaving lengthens live ranges by up to its window. Where the
    // kernel spills or its registers cost it warps (a step of `occupancy::theoretical`),
    // compile it once more without (and without the store motion where that moved
    // something: the two together can cost a step that neither costs alone); where that
    // spills less or keeps more warps resident, once more with the narrow window, kept if it
    // does as well as none (ties: the wider window's code, which hides more latency).
    // Trade-off: one more compile for kernels whose registers limit them, two where the
    // window is what limits them.
    // Predicate spills count as spills here: the window keeps more if-converted guards live
    // at once than the 7 predicates hold, and each spilled guard costs a `SEL` and an
    // `ISETP` per use (sdk2.2 quasirandomGenerator: 48 instructions more).
    let limited = |c: &Compiled| {
        c.3.spill_bytes > 0 || c.3.pred_spills > 0 || warps(cx, c.3.num_regs) < wanted_warps(cx)
    };
    let better = |a: &Compiled, b: &Compiled| {
        better(cx, &a.3, &b.3, |x: &Alloc| (x.spill_cost(), x.pred_spills))
    };
    if chosen.interleave != lower::Interleave::Off && !chosen.no_hoist && limited(&compiled) {
        let off = LowerOptions {
            interleave: lower::Interleave::Off,
            no_store_motion: chosen.no_store_motion || compiled.5,
            ..chosen
        };
        if let Ok(plain) = lower_and_allocate(&off, times, t) {
            if better(&plain, &compiled) {
                (compiled, chosen) = (plain, off);
                let narrow = LowerOptions {
                    interleave: lower::Interleave::Narrow,
                    ..off
                };
                if let Ok(mid) = lower_and_allocate(&narrow, times, t) {
                    if !better(&compiled, &mid) {
                        (compiled, chosen) = (mid, narrow);
                    }
                }
            }
        }
    }
    // Hoisted loads (`lower::hoist`) live longer. Where the kernel spills (typically under
    // `--maxrregcount`), compile it once more with the loads left in place and keep whichever
    // spills less: a spill costs a local-memory round trip per use, more than the latency
    // the hoisting hides.
    if compiled.3.spill_bytes > 0 {
        let unhoisted = LowerOptions {
            no_hoist: true,
            ..chosen
        };
        if let Ok(other) = lower_and_allocate(&unhoisted, times, t) {
            if spills_less(&other.3, &compiled.3) {
                compiled = other;
            }
        }
    }
    // `lower::hoist`'s store motion lengthens the live ranges of loaded values. Where it
    // changed the code and the registers it took cost the kernel warps (a step of the
    // occupancy rules, `occupancy::theoretical`), compile it once more without it and keep
    // whichever has the higher occupancy (ties: the store motion's code, which hides more
    // latency). Trade-off: at most one more compile, only for kernels whose registers limit
    // their occupancy.
    if compiled.5
        && compiled.3.spill_bytes == 0
        && warps(cx, compiled.3.num_regs) < wanted_warps(cx)
    {
        let plain = LowerOptions {
            no_store_motion: true,
            ..chosen
        };
        if let Ok(other) = lower_and_allocate(&plain, times, t) {
            if other.3.spill_bytes == 0
                && warps(cx, other.3.num_regs) > warps(cx, compiled.3.num_regs)
            {
                compiled = other;
            }
        }
    }
    // Selection reads a constant-bank value (a parameter, a `.const` word) into a register
    // once, where it is defined, and that register lives from there to its last use: across
    // whole loops that read it only in a move or in an operand slot that takes no bank
    // operand (Mandelbrot's f64 parameters, a pair each). Where the registers cost the kernel
    // warps, compile it once more reading such values afresh in each block that wants them
    // (`LowerOptions::remat_cbuf`), and keep that where it keeps more warps resident without
    // a spill; later retries start from it. Trade-off: one more compile for kernels whose
    // registers limit them, and where the retry wins, a `MOV` per block and use site, in a
    // loop per iteration, for a quarter or more warps resident (boxFilter's
    // `d_boxfilter_rgba_y`: 39 -> 32 registers, 48 -> 64 warps, +2.4% single-warp cycles).
    // Measured and not taken: the same retry without if-conversion (`no_ifconv`) brings
    // curand's XORWOW `initRNG` from 39 registers to 31, but its skip-ahead loop then runs
    // 2.4 times the cycles (1.9 times ptxas's), which a third more warps does not repay.
    let no_spill = |c: &Compiled| c.3.spill_bytes == 0 && c.3.pred_spills == 0;
    if !chosen.remat_cbuf
        && no_spill(&compiled)
        && warps(cx, compiled.3.num_regs) < wanted_warps(cx)
    {
        let remat = LowerOptions {
            remat_cbuf: true,
            ..chosen
        };
        if let Ok(other) = lower_and_allocate(&remat, times, t) {
            if no_spill(&other) && warps(cx, other.3.num_regs) > warps(cx, compiled.3.num_regs) {
                (compiled, chosen) = (other, remat);
            }
        }
    }
    // The register count decides the occupancy in steps (`occupancy::theoretical`): a
    // kernel a few registers above a step keeps a quarter fewer warps (33 registers: 48
    // warps; 32: 64). ptxas aims its count at the top of a step. Where the kernel calls the
    // f32 division's slow path, whose 14 pinned registers no value living across the call
    // may take, it is compiled once more with the inline division (then also without store
    // motion, where that changed the code), each with the step's top as the budget, and the
    // first that fits there without a spill is kept; then the next step down. Measured on
    // both corpora, nothing else reached a step at a price worth paying: the same lowering
    // allocated again under the budget (and without store motion) reached none (the
    // colouring already finds the fewest registers it can give the code, and its spread
    // keeps their occupancy), and the loads left in place (`no_hoist`) reached three but
    // tripled their static cycles (curand's XORWOW `initRNG` 2,409 -> 6,695, FDTD3d 5,037
    // -> 16,572), which a quarter more warps does not pay for. Trade-off: up to two more
    // compiles, only for kernels that call the slow path and whose registers limit their
    // occupancy, not for the largest (cub's radix sort, 2,000 to 25,000 instructions).
    const MAX_INSTS: usize = 2000;
    let insts = |c: &Compiled| c.3.blocks.iter().map(|b| b.insts.len()).sum::<usize>();
    let inline_division = LowerOptions {
        no_subroutines: true,
        ..chosen
    };
    let mut tries = Vec::new();
    if compiled.4 {
        tries.push(inline_division);
        if compiled.5 {
            tries.push(LowerOptions {
                no_store_motion: true,
                ..inline_division
            });
        }
        // The interleaving's longer live ranges can keep the inline division above the
        // step too (`integrateBodies<false>`: 48 registers with it, 40 without).
        if chosen.interleave != lower::Interleave::Off {
            tries.push(LowerOptions {
                interleave: lower::Interleave::Off,
                no_store_motion: true,
                ..inline_division
            });
        }
    }
    while compiled.3.spill_bytes == 0
        && compiled.3.pred_spills == 0
        && insts(&compiled) <= MAX_INSTS
        && warps(cx, compiled.3.num_regs) < wanted_warps(cx)
    {
        let Some(step) = occupancy_step_below(|r| warps(cx, r), compiled.3.num_regs) else {
            break;
        };
        let budget = AllocOptions {
            max_regs: step as u8,
            ..alloc_opts
        };
        let fits =
            |c: &Compiled| c.3.spill_bytes == 0 && c.3.pred_spills == 0 && c.3.num_regs <= step;
        let better = tries.iter().find_map(|o| {
            compile_once(cx, o, &budget, times, t)
                .ok()
                .filter(|c| fits(c))
        });
        match better {
            Some(c) => compiled = c,
            None => break,
        }
    }
    Ok(finish(cx, compiled, out))
}

/// The driver's retries choose between two allocations of a kernel by spilling, then warps:
/// whether `o` is kept over `c` because it spills less by `spill` (compared in order), or as
/// much and keeps more warps resident. Where it wins on spilling alone (no more warps), its
/// code must not cost more either ([`machinst::Allocated::code_cost`]): fewer bytes of slots
/// can still mean more instructions in the loops (CUB's 255-register radix-sort downsweep
/// kernel: 248 -> 176 bytes of spills for 1.7 times the cycles).
pub(super) fn better<K: Ord>(
    cx: &KernelCtx,
    o: &Alloc,
    c: &Alloc,
    spill: impl Fn(&Alloc) -> K,
) -> bool {
    let (wo, wc) = (warps(cx, o.num_regs), warps(cx, c.num_regs));
    (spill(o), wc) < (spill(c), wo) && (wo > wc || o.code_cost() <= c.code_cost())
}

/// Whether `o` spills less than `c` ([`machinst::Allocated::spill_cost`]) for code that costs
/// no more (the retries that do not change the warps; see [`better`]).
pub(super) fn spills_less(o: &Alloc, c: &Alloc) -> bool {
    o.spill_cost() < c.spill_cost() && o.code_cost() <= c.code_cost()
}

/// Warps per SM the kernel of `cx` keeps resident with `regs` registers per thread, its
/// shared memory and its launch directives' block (`occupancy::theoretical`).
pub(super) fn warps(cx: &KernelCtx, regs: u32) -> u32 {
    let KernelCtx {
        module,
        opts,
        f,
        name,
        facts,
        ..
    } = *cx;
    let block = facts.launch.get(name).and_then(|l| l.block());
    let smem = u64::from(module.shared_layout(f).size);
    crate::occupancy::theoretical(opts.arch, regs, smem, block).warps
}

/// The warps per SM worth registers to the retries of [`lower_and_allocate`] (which give up
/// hidden latency or compile again for more resident warps): all that fit beside the
/// kernel's block and shared memory (`warps(cx, 0)`), or, where its directives name an
/// occupancy (`.minnctapersm` with `.maxntid`/`.reqntid`), that many blocks' warps when
/// fewer. ptxas 11.8 takes such a kernel's registers up to the budget those directives give
/// (`LaunchDirectives::register_budget`) and seeks no more warps than they ask for (rodinia's
/// dwt2d `fdwt53<192>`, `.minnctapersm 5`: 54 registers, 36 warps where 30 were asked for).
/// Trade-off: below the named occupancy we still trade latency hiding for warps; above it
/// we keep the interleaved code the author's occupancy leaves room for (the same
/// `fdwt53<192>` had dropped its interleaving for 42 warps instead of 36 and waited on every
/// shared-memory load: 1.58x ptxas's dynamic cycles).
pub(super) fn wanted_warps(cx: &KernelCtx) -> u32 {
    let full = warps(cx, 0);
    let Some(l) = cx.facts.launch.get(cx.name) else {
        return full;
    };
    match (l.minnctapersm, l.block()) {
        (Some(n), Some(block)) if n > 0 => full.min(n.saturating_mul(block.div_ceil(32))),
        _ => full,
    }
}

/// The most registers below `regs` with which more warps are resident than with `regs`
/// (`warps` gives the warps per SM of a register count; the occupancy falls in steps, a
/// warp's registers being allocated 256 at a time), or `None` where no smaller count does
/// better (the occupancy is full, or shared memory or the block size holds it). Never
/// below ptxas's floor for a budget, [`MIN_REGISTER_BUDGET`].
fn occupancy_step_below(warps: impl Fn(u32) -> u32, regs: u32) -> Option<u32> {
    let now = warps(regs);
    (MIN_REGISTER_BUDGET..regs).rev().find(|&r| warps(r) > now)
}

/// The kernel's stack frame in bytes: its `.local` data and spill slots.
pub(super) fn frame_size(
    cx: &KernelCtx,
    alloc: &machinst::Allocated<lower::Sm50Inst>,
    local_data: u32,
) -> u32 {
    let KernelCtx { module, f, .. } = *cx;
    if alloc.spill_bytes == 0 && local_data == 0 {
        0
    } else if alloc.spill_bytes == 0 && !uses_dynamic_stack(f) {
        // Only `.local` data: ptxas's frame, the data rounded to 8 bytes, or to the largest
        // alignment of a variable (R1 must keep every variable aligned), not to the 16 that
        // spill slots start at (`AllocOptions::spill_base`). Saves up to 8 bytes per thread.
        let (vars, size) = module.local_layout(f);
        let align = vars
            .keys()
            .map(|&gv| module.vars[gv].align)
            .fold(8, u32::max);
        size.next_multiple_of(align)
    } else {
        (local_data + alloc.spill_bytes).next_multiple_of(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_steps_follow_the_allocation_unit() {
        let step = |regs: u32, smem: u64, block: Option<u32>| {
            let warps = |r: u32| crate::occupancy::theoretical(Arch::Sm50, r, smem, block).warps;
            occupancy_step_below(warps, regs)
        };
        // 33 to 40 registers: 48 warps; 32 keep all 64; 41 to 48: 40 warps.
        assert_eq!(step(33, 0, None), Some(32));
        assert_eq!(step(40, 0, None), Some(32));
        assert_eq!(step(47, 0, None), Some(40));
        // Full occupancy: nothing to gain.
        assert_eq!(step(32, 0, None), None);
        assert_eq!(step(20, 0, None), None);
        // 40 KiB of shared memory per block hold one 256-thread block per SM (sm_50's
        // 64 KiB) whatever the registers: no step below.
        assert_eq!(step(40, 40 * 1024, Some(256)), None);
        // 1024-thread blocks (32 warps each): 65 registers cannot launch one, 64 hold one,
        // 32 two.
        assert_eq!(step(65, 0, Some(1024)), Some(64));
        assert_eq!(step(64, 0, Some(1024)), Some(32));
    }
}
