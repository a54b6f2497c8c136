//! Functions of a relocatable object: under `--compile-only`, each `.visible .func` with a
//! body becomes a function other objects call (issue 22, separate compilation; ptxas 11.8's
//! `-c` output read with `cuobjdump -elf -sass`, docs/calls.md).
//!
//! In: the module's [`ir::Module::object_functions`] (built as subroutines are: arguments
//! from R4, the result in R4; `ir::build::build_object_functions`) and
//! [`ir::Module::object_function_skips`]. Out: one [`KernelSpec`] with `entry: false` per
//! function (its own `.text.<f>`, a GLOBAL FUNC symbol without `STO_CUDA_ENTRY`, no
//! `.nv.constant0.<f>`, `.nv.info.<f>` with the version records and its externs, the module
//! `.nv.info` REGCOUNT / stack records), and a warning for each function left out.
//!
//! The code is a subroutine's ([`compile_subroutine`]: ptxas's frame, `RET`), followed by
//! the recursive subroutines it calls ([`place_subroutines`]), laid out without the kernel
//! prologue ([`layout_function`]): ptxas's `_Z11offset_maini` is `IADD32I R4, R4, 0x7 ;
//! RET ; BRA self`. Calls to other objects' functions are `JCAL`s with
//! `R_CUDA_ABS32_20` relocations, as for system calls; nvlink resolves them. So are calls of
//! the large functions of this object (`ir::build::calls::object_calls`), against their own
//! defined symbols (no `EIATTR_EXTERNS` for them). Inside the module's kernels, calls of the
//! function are still inlined (the whole-program default).
//!
//! `.shared` data and literals, as ptxas writes them (docs/calls.md): every `.shared`
//! address is a `MOV32I` under `R_CUDA_ABS24_20` against the variable's symbol in
//! `.nv_debug.shared` ([`object_shared`], [`shared_symbol`]), which nvlink places in the
//! window of each kernel that calls the function; the function's literals are its own
//! `.nv.constant2.<f>`, which `cubin::relocatable` relocates into the callers' bank 2.
//!
//! A dynamically sized `.extern .shared` array is an undefined GLOBAL symbol
//! ([`dynamic_shared_symbols`], not in `.nv_debug.shared`), its uses relocated as above;
//! nvlink resolves it after the whole static window of each kernel that calls the function
//! (ptxas's probe `dyn.ptx`: `dsm` st_info 0x1d, st_other 0x40, section 0).
//!
//! Invariant: a function that cannot be compiled so (a `.reg` parameter, ...) is left out
//! with a warning and never fails the object, which compiled without it before.

use super::*;
use crate::sm50::sched::bundle::layout_function;

/// The object functions of the module (see the module essay), in module order, and their
/// `-v` lines (ptxas's "Function properties for f", then its frame and spills); warnings
/// for those left out go to `out.diagnostics`.
pub(super) fn object_functions(
    inputs: &KernelInputs,
    out: &mut Output,
) -> (Vec<KernelSpec>, String) {
    let module = inputs.module;
    let warn = |out: &mut Output, name: &str, why: &str| {
        out.diagnostics.push(Diagnostic::warning(
            inputs.file,
            inputs.facts.span(name),
            format!(
                "the .visible .func '{name}' is not written as a function of the object (other objects cannot call it): {why}"
            ),
        ));
    };
    for (name, why) in &module.object_function_skips {
        warn(out, name, why);
    }
    let mut specs = Vec::new();
    let mut log = String::new();
    for f in &module.object_functions {
        match object_function(inputs, f, out) {
            Ok((k, stores, loads)) => {
                let _ = writeln!(
                    log,
                    "ptxas info    : Function properties for {}\n    {} bytes stack frame, {stores} bytes spill stores, {loads} bytes spill loads",
                    k.name, k.frame_size
                );
                specs.push(k);
            }
            Err(why) => warn(out, &f.name, &why),
        }
    }
    (specs, log)
}

/// One object function's part of the cubin, and its spill store and load bytes (the frame's
/// spill slots and the callee-saved registers' saves after them, as ptxas counts them).
fn object_function(
    inputs: &KernelInputs,
    f: &ir::Function,
    out: &mut Output,
) -> Result<(KernelSpec, u32, u32), String> {
    let SubCode {
        mut code,
        mut relocs,
        regs,
        frame,
        local_data,
        constant2: mut pool,
    } = compile_subroutine(inputs, f, true)?;
    let mut srclocs = vec![machinst::SrcLoc::NONE; code.len()];
    let subs = place_subroutines(
        inputs,
        &mut pool,
        true,
        &mut code,
        &mut srclocs,
        &mut relocs,
    )?;
    let body = body_from_lowered(code, 0, false)?;
    let laid = layout_function(&body, inputs.opts.sched)
        .map_err(|e| format!("internal error laying out `{}`: {e}", f.name))?;
    if inputs.opts.sass_listing || inputs.opts.emit == Emit::Sass {
        let _ = writeln!(out.sass, "\t\tFunction : {}", f.name);
        laid.listing_to(&mut out.sass);
        out.sass.push('\n');
    }
    let num_regs = subs.as_ref().map_or(regs, |s| s.regs.max(regs));
    let mut k = KernelSpec::new(&f.name, laid.code.clone(), num_regs);
    k.entry = false;
    k.visible = true;
    k.frame_size = frame;
    // ptxas's "cannot be statically determined" stack, as for a kernel that recurses.
    k.min_stack_size = if subs.is_some() { u32::MAX } else { frame };
    k.barriers = barrier_count(&laid);
    k.constant2 = (!pool.is_empty()).then_some(pool);
    code_relocations(inputs.module, &laid, 0, relocs, &mut k)?;
    // ptxas counts the saves of callee-saved registers as spills (probe `of.ptx`: `f` saves R2
    // around a `JCAL`, "8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads"),
    // never the loads of stack arguments above the frame.
    let spills = |form| spill_bytes(&laid, form, local_data) - spill_bytes(&laid, form, frame);
    if !k.externs.is_empty() && num_regs > 64 {
        return Err(format!(
            "it calls other functions and needs {num_regs} registers (at most 64 are supported with calls)"
        ));
    }
    Ok((k, spills(Form::STL), spills(Form::LDL)))
}

/// The symbol of a `.shared` variable that a function of the object names: a module-scope
/// variable keeps its name; one declared in a function body (`f.buf`) gets ptxas's
/// `$__buf__N` form, numbered by the variable so that it is unique in the object.
pub(super) fn shared_symbol(module: &ir::Module, var: ir::GlobalVar) -> String {
    let name = &module.vars[var].name;
    match name.split('.').nth(1) {
        Some(own) => format!("$__{own}__{}", var.as_u32()),
        None => name.clone(),
    }
}

/// `.nv_debug.shared` of the object (`cubin::CubinSpec::object_shared`): every `.shared`
/// variable the functions `specs` relocate against, in module order, each at its alignment;
/// `None` when they name none.
pub(super) fn object_shared(module: &ir::Module, specs: &[KernelSpec]) -> Option<DataSpec> {
    let named: Vec<&String> = specs
        .iter()
        .filter(|k| !k.entry)
        .flat_map(|k| &k.relocs)
        .filter(|r| r.rtype == R_CUDA_ABS24_20)
        .map(|r| &r.symbol)
        .collect();
    let mut d = DataSpec {
        size: 0,
        align: 1,
        init: Vec::new(),
        symbols: Vec::new(),
    };
    for (gv, v) in module.vars.iter() {
        let sym = shared_symbol(module, gv);
        if v.space != ir::Space::Shared || v.size == 0 || !named.contains(&&sym) {
            continue;
        }
        let align = u64::from(v.align.max(1));
        d.size = d.size.next_multiple_of(align) + u64::from(v.size);
        d.align = d.align.max(align);
        // ptxas's value is the alignment (`CubinSpec::object_shared`).
        d.symbols.push((sym, align, u64::from(v.size)));
    }
    (!d.symbols.is_empty()).then_some(d)
}

/// The dynamically sized (`.extern .shared`) arrays the code of a relocatable object names,
/// in module order: undefined GLOBAL symbols ([`cubin::DYNAMIC_SHARED_SYMBOL_INFO`], value
/// and size 0), as ptxas 11.8 writes `dsm` (probe `dyn.ptx`), which nvlink resolves after
/// the static window of each kernel that runs the code. Not in `.nv_debug.shared`.
pub(super) fn dynamic_shared_symbols(
    module: &ir::Module,
    specs: &[KernelSpec],
) -> Vec<(String, u8)> {
    module
        .vars
        .iter()
        .filter(|(_, v)| v.space == ir::Space::Shared && v.size == 0)
        .map(|(gv, _)| shared_symbol(module, gv))
        .filter(|sym| {
            specs
                .iter()
                .flat_map(|k| &k.relocs)
                .any(|r| r.rtype == R_CUDA_ABS24_20 && r.symbol == *sym)
        })
        .map(|sym| (sym, cubin::DYNAMIC_SHARED_SYMBOL_INFO))
        .collect()
}
