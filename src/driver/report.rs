//! What the driver reports of a compiled kernel: its [`KernelReport`] line (registers,
//! barriers, stack, spill stores and loads, instructions) and the `ptxas -v` log in ptxas
//! 11.8's format.
//!
//! In: a laid-out kernel. Out: its report and log lines.

use super::*;

/// The kernel's line of the report (`--info`, `stats`, `compare`); `indexed_locals_in_memory`:
/// see [`KernelReport::indexed_locals_in_memory`].
#[allow(clippy::too_many_arguments)]
pub(super) fn kernel_report(
    cx: &KernelCtx,
    placed: &Placed,
    k: &KernelSpec,
    local_data: u32,
    mut fold: FoldStats,
    src_lines: Vec<Option<u32>>,
    indexed_locals_in_memory: bool,
    out: &mut Output,
) {
    let KernelCtx {
        module,
        f,
        name,
        facts,
        opts,
        ..
    } = *cx;
    let Placed {
        laid, frame, shape, ..
    } = *placed;
    let num_regs = shape.num_regs;
    let shared = module.shared_layout(f);
    // The kernel's own spills are those before its subroutines; each subroutine's frame
    // stores and loads (its saves included, as ptxas counts them) are its own line.
    let ranges = placed.sub_ranges();
    let kernel_end = ranges.iter().map(|r| r.1).min().unwrap_or(u64::MAX);
    let subroutines = ranges
        .iter()
        .map(|&(s, from, to)| {
            // (Not the loads of stack arguments, above its frame.)
            let bytes = |form| {
                spill_bytes_in(laid, form, s.local_data, from..to)
                    - spill_bytes_in(laid, form, s.frame, from..to)
            };
            (s.name.clone(), s.frame, bytes(Form::STL), bytes(Form::LDL))
        })
        .collect();
    out.kernels.push(KernelReport {
        name: name.to_string(),
        registers: num_regs,
        instructions: live_instructions(laid),
        stack_frame: frame,
        spill_store_bytes: spill_bytes_in(laid, Form::STL, local_data, 0..kernel_end),
        spill_load_bytes: spill_bytes_in(laid, Form::LDL, local_data, 0..kernel_end),
        subroutines,
        cmem0: crate::sm50::PARAM_BASE + k.param_bytes(),
        smem: u64::from(shared.size),
        fold: {
            fold.sass = lower::stats::count_sass(laid.placed.iter().map(|p| &p.inst));
            fold
        },
        src_lines,
        indexed_locals_in_memory,
        budget_note: facts
            .launch
            .get(name)
            .copied()
            .unwrap_or_default()
            .register_budget(opts.arch, name, cx.inputs.max_regs)
            .override_line(opts.max_regs),
    });
}

/// `ptxas -v` lines in ptxas 11.8's format (conventions.md §4.1).
/// `gmem` is the size of the module's `.global` data.
pub fn info_log(kernels: &[KernelReport], arch: Arch, gmem: u64) -> String {
    // The directives' overrides of `--maxrregcount` come first, as ptxas reads them.
    let mut s = String::new();
    for note in kernels.iter().filter_map(|k| k.budget_note.as_ref()) {
        let _ = writeln!(s, "{note}");
    }
    let _ = writeln!(s, "ptxas info    : {gmem} bytes gmem");
    for k in kernels {
        let _ = writeln!(
            s,
            "ptxas info    : Compiling entry function '{}' for '{}'",
            k.name,
            arch.name()
        );
        let _ = writeln!(s, "ptxas info    : Function properties for {}", k.name);
        let _ = writeln!(
            s,
            "    {} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
            k.stack_frame, k.spill_store_bytes, k.spill_load_bytes
        );
        let smem = if k.smem > 0 {
            format!("{} bytes smem, ", k.smem)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "ptxas info    : Used {} registers, {smem}{} bytes cmem[0]",
            k.registers, k.cmem0
        );
    }
    // ptxas 11.8 reports each subroutine once, after the kernels.
    let mut seen: Vec<&str> = Vec::new();
    for (name, frame, stores, loads) in kernels.iter().flat_map(|k| &k.subroutines) {
        if !seen.contains(&name.as_str()) {
            seen.push(name);
            let _ = writeln!(
                s,
                "ptxas info    : Function properties for {name}\n    {frame} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads"
            );
        }
    }
    s
}

/// Named barriers used: highest `BAR` id + 1; 16 (all) when a barrier number is in a
/// register, as ptxas 11.8 reports (`SHF_BARRIERS=16`).
pub(super) fn barrier_count(laid: &Laid) -> u32 {
    laid.placed
        .iter()
        .filter_map(|p| match p.inst.form {
            Form::BAR | Form::BARR_RB | Form::BARR_REDRB => {
                Some(p.inst.get(Field::Id).unwrap_or(0) as u32 + 1)
            }
            Form::BARR_RA | Form::BARR_RR | Form::BARR_REDRA | Form::BARR_REDRR => Some(16),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Bytes moved by the spill code's `form` (STL or LDL) instructions: those addressing the
/// spill area `[R1 + off]`, `off >= spill_base` (user `.local` data lies below it).
pub(crate) fn spill_bytes(laid: &Laid, form: Form, spill_base: u32) -> u32 {
    spill_bytes_in(laid, form, spill_base, 0..u64::MAX)
}

/// [`spill_bytes`] of the instructions at `.text` byte offsets in `range`.
pub(super) fn spill_bytes_in(
    laid: &Laid,
    form: Form,
    spill_base: u32,
    range: std::ops::Range<u64>,
) -> u32 {
    use crate::sm50::values::ldl::size;
    laid.placed
        .iter()
        .filter(|p| {
            range.contains(&p.addr)
                && p.inst.form == form
                && p.inst.get(Field::Ra) == Some(1)
                && sm50::rt::sext(p.inst.get(Field::Off).unwrap_or(0), 24) as i64
                    >= i64::from(spill_base)
        })
        // STL numbers its sizes as LDL does.
        .map(|p| match p.inst.get(Field::Size) {
            Some(size::U8 | size::S8) => 1,
            Some(size::U16 | size::S16) => 2,
            Some(size::V64) => 8,
            Some(size::V128) => 16,
            _ => 4,
        })
        .sum()
}

/// Instructions without the trailing padding NOPs.
pub(super) fn live_instructions(laid: &Laid) -> usize {
    laid.placed.len()
        - laid
            .placed
            .iter()
            .rev()
            .take_while(|p| p.inst.form == Form::NOP)
            .count()
}
