//! The compile driver: PTX text in, a cubin (and every intermediate dump) out.
//!
//! ```text
//! ptx::parse_and_check → ir::build (with `ir::contract`, `--fmad`) → ir::simplify (and `ir::sroa`) → per kernel: lower::lower_function
//!   → machinst::allocate → lower::emit → sm50::sched (control codes, layout) → cubin::write
//! ```
//!
//! In: the PTX text and [`Options`]. Out: [`Output`] with the cubin bytes, the SASS listing,
//! the requested dump (`--emit`), warnings, and one [`KernelReport`] per kernel (what
//! `ptxas -v` prints). Every failure is a [`Diagnostics`] with file, line and column: front-end
//! errors carry their own spans; a later stage's failure points at the kernel's name.
//!
//! Module `.global` variables become one data section laid out like `ir::eval`'s (see
//! `global_memory`), and every `MOV32I` that selection marked with a [`lower::Reloc`] becomes an
//! `R_CUDA_ABS32_LO_20`/`HI_20` relocation (a 64-bit module) or an `R_CUDA_ABS32_20` one (a
//! 32-bit module) at its final byte offset, as ptxas writes them. Addresses in `.global` and
//! `.const` initializers ([`ir::AddrInit`]) become data relocations of `.nv.global.init` /
//! `.nv.constant3` (`R_CUDA_G64`, `R_CUDA_G32`, `R_CUDA_G8_<n>`; see `data_relocations`).
//!
//! With [`Options::entries`] (`-e`), only the named kernels are compiled, and only they (and
//! the module's declarations) need to build: a construct leafold does not support in another
//! kernel is no error.
//!
//! Source lines: `ir::build` records each IR instruction's PTX line, selection stamps it on
//! the machine instructions, and [`lower::emit_all`] returns one per emitted instruction; the
//! layout keeps body order (prologue first, frame adjustment next), so
//! [`KernelReport::src_lines`] is that list shifted by the instructions placed before the
//! body. `--explain` ([`Options::explain`]) prints the listing with those lines and each LEA
//! chain's address expression; [`Output::pass_times`] times each stage.
//!
//! Kernels compile one at a time: each kernel's IR leaves the module, is simplified,
//! lowered, allocated and laid out on its own (`compile_kernel` reads nothing another kernel
//! writes), and is freed when it is done, so peak memory holds one kernel's working data.
//! (Compiling kernels in parallel was tried: on the corpus and two cores it was no faster,
//! since most kernels are too small to pay for the hand-over, and it multiplies the working
//! data held at once.)
//!
//! Invariants: nothing here panics on user input; the cubin is produced only when every
//! requested kernel compiled.

use std::fmt::Write as _;

use crate::cubin::{self, CubinSpec, DataSpec, KernelSpec, ParamSpec};
use crate::error::{Diagnostic, Diagnostics, SourceFile, Span};
use crate::ir;
use crate::lower::{self, Fold, FoldStats, LowerOptions, RelocWord};
use crate::machinst::{self, AllocOptions};
use crate::ptx::{self, ast};
use crate::sm50::sched::bundle::{layout, Body, Laid};
use crate::sm50::sched::Mode;
use crate::sm50::{self, Field, Form, Inst};

/// Target architecture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arch {
    #[default]
    Sm50,
    Sm52,
    Sm53,
}

impl Arch {
    /// The SM number (50, 52, 53).
    pub fn sm(self) -> u32 {
        match self {
            Arch::Sm50 => 50,
            Arch::Sm52 => 52,
            Arch::Sm53 => 53,
        }
    }

    /// `sm_50` etc.
    pub fn name(self) -> String {
        format!("sm_{}", self.sm())
    }

    /// Parse `sm_50`, `sm_52`, `sm_53` (also `compute_5x`-less plain numbers are rejected).
    pub fn parse(s: &str) -> Option<Arch> {
        match s {
            "sm_50" => Some(Arch::Sm50),
            "sm_52" => Some(Arch::Sm52),
            "sm_53" => Some(Arch::Sm53),
            _ => None,
        }
    }
}

/// Which stage's output [`Output::text`] holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Emit {
    /// SSA IR (`ir::Function` text).
    Ir,
    /// Machine instructions over virtual registers.
    Vcode,
    /// Machine instructions after register allocation.
    Alloc,
    /// The SASS listing (cuobjdump style, with control words).
    Sass,
    /// Only the cubin (text empty).
    #[default]
    Cubin,
}

/// Compile options (mirroring ptxas's command line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub arch: Arch,
    pub emit: Emit,
    /// Produce the `ptxas -v` lines in [`Output::info_log`].
    pub verbose: bool,
    /// See [`LowerOptions::plg_per_address`] (`--plg-per-address`; off by default).
    pub plg_per_address: bool,
    /// `--maxrregcount` (at most 255).
    pub max_regs: Option<u32>,
    /// Name used in diagnostics.
    pub file_name: String,
    /// Control-code mode (serial = wait on everything, for hazard bisection).
    pub sched: Mode,
    /// `-e/--entry`: compile only these kernels (empty: all). A name the module does not
    /// define is an error.
    pub entries: Vec<String>,
    /// Folding strategy (`--fold`).
    pub fold: Fold,
    /// Leave out `SSY`/`SYNC` (see `lower::reconverge`): divergent paths then never meet
    /// again. Only for showing what reconvergence is for (tests); never correct with barriers.
    pub no_reconvergence: bool,
    /// Keep every branch as a branch (`--no-ifconv`): no predicated code from
    /// `lower::ifconv`.
    pub no_ifconv: bool,
    /// Keep `div.rn.f32` / `rcp.rn.f32` inline at every site (`--no-subroutines`): no fast
    /// path and no slow-path subroutine (see `lower::LowerOptions::no_subroutines`).
    pub no_subroutines: bool,
    /// Contract float `mul` + `add`/`sub` written without rounding modifiers into fused
    /// multiply-adds (ptxas's `--fmad`, on by default): [`ir::contract`].
    pub fmad: bool,
    /// Fill [`Output::sass`] (on by default; the command line turns it off when it prints no
    /// listing: formatting every instruction costs time and memory on big inputs).
    pub sass_listing: bool,
    /// Fill [`Output::explain`]: the SASS listing annotated with PTX lines and the address
    /// expression of each `LEA` chain (`--explain`).
    pub explain: bool,
    /// A deliberate miscompilation, for tests that the verifier catches one.
    #[doc(hidden)]
    pub debug_inject: Option<InjectBug>,
    /// Write a relocatable object (`ET_REL`, `ptxas --compile-only`) for `nvlink` instead of
    /// a whole-program executable cubin ([`cubin::relocatable`]).
    pub relocatable: bool,
}

/// A known-bad compiler change [`Options::debug_inject`] can switch on.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectBug {
    /// Every `LEA` / `LEA.HI` shifts by one more than it should.
    WrongLeaScale,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            arch: Arch::Sm50,
            emit: Emit::Cubin,
            verbose: false,
            plg_per_address: false,
            max_regs: None,
            file_name: "<input>".to_string(),
            sched: Mode::Normal,
            no_reconvergence: false,
            no_ifconv: false,
            no_subroutines: false,
            fmad: true,
            debug_inject: None,
            entries: Vec::new(),
            fold: Fold::Full,
            explain: false,
            sass_listing: true,
            relocatable: false,
        }
    }
}

/// What `ptxas -v` reports for one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelReport {
    pub name: String,
    pub registers: u32,
    /// Instructions laid out (prologue, EXIT and `BRA` self included; padding not).
    pub instructions: usize,
    pub stack_frame: u32,
    /// Bytes stored and loaded by spill code (the `STL`/`LDL` into the spill area above the
    /// `.local` data), counted statically as ptxas does.
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    /// Bytes of constant bank 0 (0x140 + parameters).
    pub cmem0: u32,
    /// Bytes of shared memory.
    pub smem: u64,
    /// What address folding did (`--stats`).
    pub fold: FoldStats,
    /// The PTX line each laid-out instruction came from, in `.text` order (index `n` is the
    /// instruction at byte `32·(n/3) + 8 + 8·(n%3)`; control words are not counted). `None`
    /// for what no PTX instruction asked for: the prologue, the frame adjustment, the
    /// allocator's moves/spills/reloads, the final `EXIT`/`BRA` self and the padding.
    pub src_lines: Vec<Option<u32>>,
}

impl KernelReport {
    /// The PTX line of the instruction at `.text` byte offset `addr` (see [`Self::src_lines`]).
    pub fn ptx_line_at(&self, addr: u64) -> Option<u32> {
        let slot = addr % 32;
        if slot < 8 || addr % 8 != 0 {
            return None;
        }
        let n = 3 * (addr / 32) + (slot - 8) / 8;
        self.src_lines.get(n as usize).copied().flatten()
    }
}

/// The result of [`compile`].
#[derive(Clone, Debug)]
pub struct Output {
    pub cubin: Vec<u8>,
    /// The SASS listing of every kernel (empty when [`Options::sass_listing`] is off and
    /// [`Options::emit`] is not [`Emit::Sass`]).
    pub sass: String,
    /// The dump [`Options::emit`] asked for (the SASS listing for `Emit::Sass`).
    pub text: String,
    /// Warnings.
    pub diagnostics: Vec<Diagnostic>,
    pub kernels: Vec<KernelReport>,
    /// `ptxas -v` style lines (empty unless [`Options::verbose`]).
    pub info_log: String,
    /// The annotated listing (empty unless [`Options::explain`]).
    pub explain: String,
    /// Seconds spent in each stage, summed over the kernels, in pipeline order
    /// (`--time-passes`).
    pub pass_times: PassTimes,
}

/// Seconds per compile stage (see [`Output::pass_times`]).
#[derive(Clone, Debug, Default)]
pub struct PassTimes(pub Vec<(&'static str, f64)>);

impl PassTimes {
    /// Add the time since `*t` to stage `name` and restart `*t`.
    fn lap(&mut self, name: &'static str, t: &mut std::time::Instant) {
        let now = std::time::Instant::now();
        let secs = now.duration_since(*t).as_secs_f64();
        *t = now;
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, s)) => *s += secs,
            None => self.0.push((name, secs)),
        }
    }
}

impl std::fmt::Display for PassTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: f64 = self.0.iter().map(|(_, s)| s).sum();
        for (name, secs) in &self.0 {
            writeln!(
                f,
                "{name:<10} {:>9.3} ms {:>5.1}%",
                secs * 1e3,
                100.0 * secs / total.max(1e-12)
            )?;
        }
        writeln!(f, "{:<10} {:>9.3} ms", "total", total * 1e3)
    }
}

/// Compile PTX text to an sm_5x cubin.
pub fn compile(ptx_text: &str, opts: &Options) -> Result<Output, Diagnostics> {
    let mut times = PassTimes::default();
    let mut t = std::time::Instant::now();
    let file = SourceFile::new(opts.file_name.clone(), ptx_text);
    let (ast, warnings) = ptx::parse_and_check(&file)?;
    times.lap("parse", &mut t);
    if opts.relocatable {
        relocatable_version(&ast, &file)?;
    }
    let bopts = ir::build::BuildOptions {
        fmad: opts.fmad,
        any_extern: opts.relocatable,
    };
    let module = if opts.entries.is_empty() {
        ir::build::build_with(&ast, &file, &bopts).map_err(Diagnostics)?
    } else {
        // `-e`: only the named kernels (and the module's declarations) must build; what the
        // other kernels use does not matter.
        let p = ir::build::build_partial_with(&ast, &file, &bopts);
        let mut errors = p.errors[..p.declaration_errors].to_vec();
        for (name, range) in p.failed.iter().zip(&p.failed_errors) {
            if opts.entries.contains(name) {
                if range.is_empty() {
                    errors.push(Diagnostic::error(
                        &file,
                        kernel_span(&ast, name),
                        format!("kernel `{name}` could not be built"),
                    ));
                }
                errors.extend_from_slice(&p.errors[range.clone()]);
            }
        }
        if !errors.is_empty() {
            return Err(Diagnostics(errors));
        }
        p.module
    };
    times.lap("ir-build", &mut t);
    // The few facts later stages need from the AST; the AST itself (most of the memory on a
    // large file) goes before lowering starts.
    let facts = AstFacts::of(&ast);
    drop(ast);
    // The kernels to compile (`-e`: the named ones) leave the module: each is simplified
    // and compiled on its own (see `compile_kernel`), and its IR goes when it is done. No
    // later stage looks at the module's other functions.
    let mut module = module;
    let mut functions = std::mem::take(&mut module.functions);
    if let Some(missing) = opts
        .entries
        .iter()
        .find(|e| !functions.iter().any(|f| &f.name == *e))
    {
        return Err(Diagnostics(vec![Diagnostic::error(
            &file,
            Span::new(0, 0),
            format!("entry function '{missing}' (-e/--entry) is not defined in this module"),
        )]));
    }
    functions.retain(|f| opts.entries.is_empty() || opts.entries.contains(&f.name));
    let (mut global_data, global_init) = global_memory(&module);
    let gmem = global_data.as_ref().map_or(0, |g| g.size);

    let lower_opts = LowerOptions {
        plg_per_address: opts.plg_per_address,
        fold: opts.fold,
        explain: opts.explain,
        no_subroutines: opts.no_subroutines,
        sm: opts.arch.sm(),
    };
    let max_regs = opts.max_regs.unwrap_or(255).min(255);
    let mut const_data = module_constants(&module);
    let data_relocs = data_relocations(&module, global_data.as_mut(), const_data.as_mut());

    let mut out = Output {
        cubin: Vec::new(),
        sass: String::new(),
        text: String::new(),
        diagnostics: warnings,
        kernels: Vec::new(),
        info_log: String::new(),
        explain: String::new(),
        pass_times: PassTimes::default(),
    };
    times.lap("other", &mut t);
    // One kernel at a time, in module order; each kernel's IR and working data are freed
    // before the next starts.
    let inputs = KernelInputs {
        module: &module,
        file: &file,
        facts: &facts,
        opts,
        lower_opts,
        max_regs,
    };
    let handles = surface_handles(&module, functions.last());
    let mut specs = Vec::with_capacity(functions.len());
    for f in functions {
        specs.push(compile_kernel(&inputs, f, &mut out, &mut times, &mut t)?);
    }
    if opts.emit == Emit::Sass {
        out.text = out.sass.clone();
    }
    // The system functions the kernels call: undefined GLOBAL FUNC symbols (st_info 0x12),
    // after every other symbol, as ptxas 11.8 writes them.
    let mut externs: Vec<(String, u8)> = Vec::new();
    for k in &specs {
        for n in &k.externs {
            if !externs.iter().any(|(h, _)| h == n) {
                externs.push((n.clone(), 0x12));
            }
        }
    }
    let spec = CubinSpec {
        arch: opts.arch.sm(),
        ptx_arch: facts.ptx_target.unwrap_or(opts.arch.sm()),
        address_bits: facts.address_bits,
        kernels: specs,
        constant3: const_data,
        global_init: global_init.then(|| global_data.clone()).flatten(),
        global: (!global_init).then_some(global_data).flatten(),
        strtab_order: None,
        // Every module `.texref` is a symbol, used or not (ptxas 11.8 keeps unused ones);
        // st_info 0x1a: GLOBAL, CUDA texture type 10. Then the `.surfref`s, in the order
        // `surface_handles` gives, and the system functions called (undefined GLOBAL FUNC).
        handles: module
            .texrefs
            .iter()
            .map(|n| (n.clone(), 0x1a))
            .chain(handles)
            .chain(externs)
            .collect(),
        symbol_order: None,
        abi_version: 7,
        texmode_independent: facts.texmode_independent,
        data_relocs,
    };
    times.lap("other", &mut t);
    out.cubin = cubin::write(&spec);
    if opts.relocatable {
        out.cubin = cubin::relocatable(&out.cubin, &facts.visible_vars).map_err(|e| {
            Diagnostics(vec![Diagnostic::error(
                &file,
                Span::new(0, 0),
                format!("cannot write the relocatable object: {e}"),
            )])
        })?;
    }
    times.lap("cubin", &mut t);
    if opts.verbose {
        out.info_log = info_log(&out.kernels, opts.arch, gmem);
    }
    out.pass_times = times;
    Ok(out)
}

/// `R_CUDA_TEX_HEADER_INDEX`: the driver writes a texture's header index into the word.
const R_CUDA_TEX_HEADER_INDEX: u32 = 6;

/// The cubin records of kernel `f`'s bound textures, as ptxas 11.8 writes them: one word of
/// `.nv.constant0.<k>` per texture after the parameters (`ir::tex::bound_slot_offset`, where
/// `TEXS`/`TLDS`/`TXQ` read it), relocated by `R_CUDA_TEX_HEADER_INDEX` against the
/// texture's symbol (listed from the highest offset down, as ptxas lists them), and
/// `EIATTR_BINDLESS_TEXTURE_BANK` 0 (ptxas writes it for kernels with bound textures only;
/// a texture object passed as a parameter needs neither).
fn texture_records(module: &ir::Module, f: &ir::Function, k: &mut KernelSpec) {
    let bound = ir::tex::bound_textures(f);
    if bound.is_empty() {
        return;
    }
    for (pos, &t) in bound.iter().enumerate().rev() {
        k.const0_relocs.push(cubin::RelocSpec {
            offset: u64::from(ir::tex::bound_slot_offset(f, pos)),
            symbol: module.texrefs[t as usize].clone(),
            rtype: R_CUDA_TEX_HEADER_INDEX,
        });
    }
    k.extra_info.push(cubin::eiattr::Attribute::Other {
        format: cubin::eiattr::Format::Bval,
        code: BINDLESS_TEXTURE_BANK,
        payload: vec![0, 0],
    });
}

/// `EIATTR_BINDLESS_TEXTURE_BANK`.
const BINDLESS_TEXTURE_BANK: u8 = 0x15;

/// ptxas 11.8 refuses `-c` below PTX ISA 3.1 (with this message); so does leafold, at the
/// `.version` directive.
fn relocatable_version(
    ast: &ast::Module,
    file: &std::sync::Arc<SourceFile>,
) -> Result<(), Diagnostics> {
    for item in &ast.items {
        if let ast::Item::Version { major, minor, span } = item {
            if (*major, *minor) < (3, 1) {
                return Err(Diagnostics(vec![Diagnostic::error(
                    file,
                    *span,
                    format!(
                        "'Compile only(-c)' requires PTX ISA .version 3.1 or later (this file is .version {major}.{minor})"
                    ),
                )]));
            }
        }
    }
    Ok(())
}

/// The IR lowering receives for kernel `f` of `module`, from what `ir::build` made: the warp
/// collectives sm_5x lacks expanded (`ir::collective`), simplified (`ir::simplify`), and the
/// `.local` variables that only constant offsets reach promoted to SSA values
/// (`ir::sroa`, then simplified again, since loads that became values fold further).
/// `verify` calls it too, to know which `.local` variables the compiled kernel keeps.
pub fn prepare_kernel_ir(module: &ir::Module, f: &mut ir::Function) {
    ir::collective::expand(f);
    ir::simplify::simplify(f);
    if ir::sroa::promote_locals(module, f).vars > 0 {
        ir::simplify::simplify(f);
    }
}

/// What every kernel's compile reads.
#[derive(Clone, Copy)]
struct KernelInputs<'a> {
    module: &'a ir::Module,
    file: &'a std::sync::Arc<SourceFile>,
    facts: &'a AstFacts,
    opts: &'a Options,
    lower_opts: LowerOptions,
    max_regs: u32,
}

/// What every stage of one kernel's compilation reads: the inputs, the kernel, and how to
/// report an error at the kernel's span.
struct KernelCtx<'a> {
    inputs: &'a KernelInputs<'a>,
    module: &'a ir::Module,
    file: &'a std::sync::Arc<SourceFile>,
    facts: &'a AstFacts,
    opts: &'a Options,
    f: &'a ir::Function,
    name: &'a str,
}

impl KernelCtx<'_> {
    /// An error at the kernel's span.
    fn err(&self, msg: String) -> Diagnostics {
        Diagnostics(vec![Diagnostic::error(
            self.file,
            self.facts.span(self.name),
            msg,
        )])
    }
}

/// Simplify, lower, allocate, emit and lay out kernel `f` (see [`compile`]): its dumps,
/// listings and report go to `out`, its stage times to `times` (lapped on `t`); returns its
/// part of the cubin. Reads nothing another kernel writes. The pipeline, one named stage a
/// line: IR preparation ([`prepare_kernel_ir`]), [`lower_and_allocate`], [`frame_size`],
/// [`emit_kernel`], the layout ([`layout`]: list scheduling and control codes),
/// [`listings`], [`kernel_spec`] and [`kernel_report`].
fn compile_kernel(
    inputs: &KernelInputs,
    mut f: ir::Function,
    out: &mut Output,
    times: &mut PassTimes,
    t: &mut std::time::Instant,
) -> Result<KernelSpec, Diagnostics> {
    let KernelInputs {
        module,
        file,
        facts,
        opts,
        lower_opts,
        max_regs,
    } = *inputs;
    // Constant folding and identities (`ir::simplify`): lowering, and `--emit ir`, see the
    // simplified kernel; `verify` runs the reference on the unsimplified one. Debug builds
    // verify the result.
    // The warp collectives sm_5x lacks become votes, shuffles and loops first
    // (`ir::collective`); `verify` runs the reference on the unexpanded kernel.
    // The limits apply to what the PTX declares, as ptxas checks them: before `ir::sroa`
    // takes a variable out of local memory.
    let limits = check_memory_limits(module, &f);
    prepare_kernel_ir(module, &mut f);
    let f = &f;
    let name = f.name.as_str();
    let cx = KernelCtx {
        inputs,
        module,
        file,
        facts,
        opts,
        f,
        name,
    };
    let err = |msg: String| cx.err(msg);
    let launch = facts.launch.get(name).copied().unwrap_or_default();
    let (max_regs, budget_warning) = launch.register_budget(opts.arch, name, max_regs);
    if let Some(w) = budget_warning {
        out.diagnostics
            .push(Diagnostic::warning(file, facts.span(name), w));
    }
    if cfg!(debug_assertions) {
        if let Err(e) = ir::verify_in_module(module, f) {
            let msg = e.iter().map(|e| e.to_string()).collect::<Vec<_>>();
            return Err(err(format!(
                "internal error: the simplified IR does not verify: {}",
                msg.join("; ")
            )));
        }
    }
    times.lap("simplify", t);
    if opts.emit == Emit::Ir {
        let _ = writeln!(out.text, "{f}");
    }
    limits.map_err(err)?;
    let local_data = lower::local_size(module, f).next_multiple_of(16);
    let (fold, constant2, alloc) =
        lower_and_allocate(&cx, lower_opts, max_regs, local_data, out, times, t)?;
    let frame = frame_size(&cx, &alloc, local_data);
    let (code, relocs, srclocs, notes, shape) = emit_kernel(&cx, &alloc, out)?;
    let dynamic_stack = shape.dynamic_stack;
    times.lap("emit", t);
    let body = body_from_lowered(inject(code, opts.debug_inject), frame, dynamic_stack)
        .map_err(|e| err(format!("internal error in kernel `{name}`: {e}")))?;
    let laid = layout(&body, opts.sched)
        .map_err(|e| err(format!("internal error laying out `{name}`: {e}")))?;
    times.lap("schedule", t);
    // Code index k is body index k (+1 after the frame adjustment), and the layout puts
    // its prologue first: index k + 1 (+1) before scheduling; `moved` says where list
    // scheduling placed it.
    let shift = 1 + usize::from(frame > 0) + usize::from(dynamic_stack);
    let src_lines = listings(&cx, &laid, shift, &srclocs, &notes, out);
    times.lap("listing", t);
    let placed = Placed {
        laid: &laid,
        shift,
        frame,
        shape,
    };
    let k = kernel_spec(&cx, &placed, &alloc, max_regs, launch, constant2, relocs)?;
    kernel_report(&cx, &placed, &k, local_data, fold, src_lines, out);
    times.lap("other", t);
    Ok(k)
}

/// A kernel's laid-out code and where its emitted instructions went in it.
struct Placed<'a> {
    laid: &'a Laid,
    /// Emitted instruction k is body instruction k + `shift` before scheduling.
    shift: usize,
    frame: u32,
    shape: Shape,
}

/// Lower and allocate the kernel: (fold statistics, literal pool, the allocation). With
/// `--emit vcode`/`--emit alloc` their text goes to `out`.
fn lower_and_allocate(
    cx: &KernelCtx,
    lower_opts: LowerOptions,
    max_regs: u32,
    local_data: u32,
    out: &mut Output,
    times: &mut PassTimes,
    t: &mut std::time::Instant,
) -> Result<(FoldStats, Vec<u8>, machinst::Allocated<lower::Sm50Inst>), Diagnostics> {
    let KernelCtx {
        module,
        opts,
        f,
        name,
        ..
    } = *cx;
    let err = |msg: String| cx.err(msg);
    let alloc_opts = AllocOptions {
        max_regs: max_regs as u8,
        checker: cfg!(debug_assertions),
        // Spill slots go after the kernel's `.local` data, both addressed from R1.
        spill_base: local_data,
    };
    // `ir::build` verified every function it returned.
    // Lower and allocate the kernel: (fold statistics, literal pool, the `--emit vcode`
    // text, the allocation, whether it calls a subroutine).
    type Compiled = (
        FoldStats,
        Vec<u8>,
        String,
        machinst::Allocated<lower::Sm50Inst>,
        bool,
    );
    let lower_and_allocate = |lower_opts: &LowerOptions,
                              times: &mut PassTimes,
                              t: &mut std::time::Instant|
     -> Result<Compiled, Diagnostics> {
        let lower::Lowered {
            vcode,
            fold,
            constant2,
        } = lower::lower_verified_stats(module, f, lower_opts)
            .map_err(|e| err(format!("cannot compile kernel `{name}`: {e}")))?;
        times.lap("lower", t);
        let text = if opts.emit == Emit::Vcode {
            format!("kernel {name}:\n{vcode}\n")
        } else {
            String::new()
        };
        let calls = vcode.has_clobbers();
        let alloc = machinst::allocate_owned(vcode, &alloc_opts).map_err(|e| {
            err(format!(
                "register allocation failed for kernel `{name}`: {e}"
            ))
        })?;
        times.lap("regalloc", t);
        Ok((fold, constant2, text, alloc, calls))
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
    let mut compiled = match lower_and_allocate(&lower_opts, times, t) {
        Ok(x) => x,
        Err(e) if !lower_opts.no_subroutines => {
            lower_and_allocate(&inline, times, t).map_err(|_| e)?
        }
        Err(e) => return Err(e),
    };
    if compiled.3.spill_bytes > 0 && compiled.4 && !compiled.3.spills_forced {
        let other = lower_and_allocate(&inline, times, t)?;
        if other.3.spill_bytes < compiled.3.spill_bytes {
            compiled = other;
        }
    }
    let (fold, constant2, vtext, alloc, _) = compiled;
    out.text.push_str(&vtext);
    if opts.emit == Emit::Alloc {
        let _ = writeln!(out.text, "kernel {name}:\n{alloc}");
    }
    Ok((fold, constant2, alloc))
}

/// The kernel's stack frame in bytes: its `.local` data and spill slots.
fn frame_size(
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

/// What [`emit_kernel`] hands on: the code (with the subroutines it calls placed after it),
/// its relocations, source lines and notes (by index in the code), and its [`Shape`].
type EmittedKernel = (
    Vec<Inst>,
    Vec<(usize, lower::Reloc)>,
    Vec<machinst::SrcLoc>,
    Vec<(usize, Box<str>)>,
    Shape,
);

/// What the later stages need to know of the emitted code's shape.
#[derive(Clone, Copy)]
struct Shape {
    /// Registers the kernel and its subroutines use.
    num_regs: u32,
    /// The kernel moves its stack pointer (`alloca`).
    dynamic_stack: bool,
    /// The kernel calls subroutines of the module (recursion).
    recursive: bool,
}

/// Post-allocation emission ([`lower::emit_all_with`]), the subroutines the kernel calls
/// placed after it ([`place_subroutines`]), the bank-conflict renaming and, for a kernel with
/// `alloca`, the stack-pointer registers swapped (with ptxas's warnings).
fn emit_kernel(
    cx: &KernelCtx,
    alloc: &machinst::Allocated<lower::Sm50Inst>,
    out: &mut Output,
) -> Result<EmittedKernel, Diagnostics> {
    let KernelCtx {
        inputs,
        file,
        facts,
        opts,
        f,
        name,
        ..
    } = *cx;
    let err = |msg: String| cx.err(msg);
    let lower::Emitted {
        mut code,
        mut relocs,
        mut srclocs,
        notes,
        reconvergence_error,
    } = lower::emit_all_with(
        alloc,
        &lower::EmitOptions {
            reconverge: !opts.no_reconvergence,
            if_convert: !opts.no_ifconv,
        },
    );
    if let Some(why) = reconvergence_error {
        return Err(err(format!("cannot compile kernel `{name}`: {why}")));
    }
    // The module's subroutines this kernel calls, placed after its code (`place_subroutines`).
    let subs = place_subroutines(inputs, &mut code, &mut srclocs, &mut relocs)
        .map_err(|e| err(format!("cannot compile kernel `{name}`: {e}")))?;
    // Fewer same-bank source pairs: a register renaming that keeps every dependency (not
    // across calls of subroutines, whose registers the call ABI fixes).
    if subs.is_none() {
        crate::sm50::banks::avoid_conflicts(&mut code, alloc.num_regs);
    }
    let num_regs = subs
        .as_ref()
        .map_or(alloc.num_regs, |s| s.regs.max(alloc.num_regs));
    if subs.is_some() {
        // ptxas 11.8's warning for a kernel that recurses, word for word.
        out.diagnostics.push(Diagnostic::warning(
            file,
            facts.span(name),
            format!("Stack size for entry function '{name}' cannot be statically determined"),
        ));
    }
    // `alloca`/`stacksave`/`stackrestore`: R1 becomes the moving stack pointer and R0 the
    // frame base (`lower::select::stack`).
    let dynamic_stack = uses_dynamic_stack(f);
    if dynamic_stack {
        swap_stack_registers(&mut code);
        // ptxas 11.8's warning for such a kernel, word for word.
        out.diagnostics.push(Diagnostic::warning(
            file,
            facts.span(name),
            format!("Stack size for entry function '{name}' cannot be statically determined"),
        ));
    }
    let shape = Shape {
        num_regs,
        dynamic_stack,
        recursive: subs.is_some(),
    };
    Ok((code, relocs, srclocs, notes, shape))
}

/// The `--sass`/`--emit sass` listing and the `--explain` listing of the laid-out kernel;
/// returns each placed instruction's PTX line.
fn listings(
    cx: &KernelCtx,
    laid: &Laid,
    shift: usize,
    srclocs: &[machinst::SrcLoc],
    notes: &[(usize, Box<str>)],
    out: &mut Output,
) -> Vec<Option<u32>> {
    let KernelCtx {
        file, opts, name, ..
    } = *cx;
    if opts.sass_listing || opts.emit == Emit::Sass {
        let _ = writeln!(out.sass, "\t\tFunction : {name}");
        laid.listing_to(&mut out.sass);
        out.sass.push('\n');
    }
    let placed_at = |k: usize| laid.moved.get(k + shift).copied();
    let mut src_lines = vec![None; laid.placed.len()];
    for (k, loc) in srclocs.iter().enumerate() {
        if let Some(l) = placed_at(k).and_then(|m| src_lines.get_mut(m)) {
            *l = loc.ptx_line();
        }
    }
    if opts.explain {
        let mut placed_notes: Vec<(usize, Box<str>)> = notes
            .iter()
            .filter_map(|(k, t)| placed_at(*k).map(|m| (m, t.clone())))
            .collect();
        placed_notes.sort_by_key(|n| n.0);
        explain_kernel(
            &mut out.explain,
            name,
            laid,
            &src_lines,
            &placed_notes,
            0,
            file,
        );
    }
    src_lines
}

/// The kernel's part of the cubin: code, parameters, memory, attributes and relocations.
fn kernel_spec(
    cx: &KernelCtx,
    placed: &Placed,
    alloc: &machinst::Allocated<lower::Sm50Inst>,
    max_regs: u32,
    launch: LaunchDirectives,
    constant2: Vec<u8>,
    relocs: Vec<(usize, lower::Reloc)>,
) -> Result<KernelSpec, Diagnostics> {
    let KernelCtx {
        module,
        facts,
        f,
        name,
        ..
    } = *cx;
    let Placed {
        laid,
        shift,
        frame,
        shape,
    } = *placed;
    let Shape {
        num_regs,
        dynamic_stack,
        recursive,
    } = shape;
    let err = |msg: String| cx.err(msg);
    let params: Vec<ParamSpec> = f
        .params
        .iter()
        .map(|p| ParamSpec {
            offset: p.offset.min(u32::from(u16::MAX)) as u16,
            size: p.size,
            // `.ptr` parameter attributes are not recorded in the IR yet.
            pointee: 0,
        })
        .collect();
    let visible = facts.visible(name);
    let mut k = KernelSpec::new(name, laid.code.clone(), num_regs);
    k.visible = visible;
    k.params = params;
    let shared = module.shared_layout(f);
    k.shared = shared
        .section
        .then_some((u64::from(shared.size), u64::from(shared.align)));
    k.constant2 = (!constant2.is_empty()).then_some(constant2);
    k.frame_size = frame;
    // ptxas 11.8 writes 0xffffffff ("Stack size ... cannot be statically determined") for a
    // kernel with `alloca`: the driver then gives it the default stack size.
    k.min_stack_size = if dynamic_stack || recursive {
        u32::MAX
    } else {
        frame
    };
    k.max_reg_count = max_regs as u16;
    k.extra_info = launch.records();
    texture_records(module, f, &mut k);
    surface_metadata(module, f, &mut k);
    k.exit_offsets = laid.exit_offsets.clone();
    k.s2r_ctaid_offsets = laid.s2r_ctaid_offsets.clone();
    k.barriers = barrier_count(&laid);
    // EIATTR_CRS_STACK_SIZE from the final code (sm50::crs): the driver sizes the
    // per-warp SSY/PBK/CAL/divergence stack by it.
    let insts: Vec<sm50::Inst> = laid.placed.iter().map(|p| p.inst).collect();
    k.crs_stack_size = match sm50::crs::record(&insts, &laid.targets) {
        // Recursion has no bound: ptxas 11.8 writes 0x600 for it (docs/calls.md).
        Err(_) if recursive => Some(RECURSION_CRS_STACK),
        r => r.map_err(|e| err(format!("internal error in kernel `{name}`: {e}")))?,
    };
    for (at, r) in relocs {
        let Some(p) = laid.moved.get(at + shift).and_then(|&m| laid.placed.get(m)) else {
            return Err(err(format!(
                "internal error: relocation past the code of `{name}`"
            )));
        };
        let symbol = match r.word {
            RelocWord::Call(n) => module.extern_funcs[n as usize].clone(),
            RelocWord::DescLo(n) | RelocWord::DescHi(n) => module.kernel_descs[n as usize].clone(),
            _ => module.vars[r.var].name.clone(),
        };
        k.relocs.push(cubin::RelocSpec {
            offset: p.addr,
            symbol,
            rtype: match r.word {
                RelocWord::Lo => R_CUDA_ABS32_LO_20,
                RelocWord::Hi => R_CUDA_ABS32_HI_20,
                RelocWord::Abs32 | RelocWord::Call(_) => R_CUDA_ABS32_20,
                RelocWord::DescLo(_) => R_CUDA_FUNC_DESC32_LO_32,
                RelocWord::DescHi(_) => R_CUDA_FUNC_DESC32_HI_32,
            },
        });
    }
    for r in &k.relocs {
        let call = r.rtype == R_CUDA_ABS32_20 && module.extern_funcs.contains(&r.symbol);
        if call && !k.externs.contains(&r.symbol) {
            k.externs.push(r.symbol.clone());
        }
    }
    // The caller-saved registers the call clobbers are listed up to R63
    // (`lower::select::call`); above that the ABI's pattern is not modelled.
    if !k.externs.is_empty() && alloc.num_regs > 64 {
        return Err(err(format!(
            "unsupported: kernel `{name}` calls a system function and needs {} registers (at most 64 are supported with calls)",
            alloc.num_regs
        )));
    }
    Ok(k)
}

/// The kernel's line of the report (`--info`, `stats`, `compare`).
#[allow(clippy::too_many_arguments)]
fn kernel_report(
    cx: &KernelCtx,
    placed: &Placed,
    k: &KernelSpec,
    local_data: u32,
    mut fold: FoldStats,
    src_lines: Vec<Option<u32>>,
    out: &mut Output,
) {
    let KernelCtx {
        module, f, name, ..
    } = *cx;
    let Placed {
        laid, frame, shape, ..
    } = *placed;
    let num_regs = shape.num_regs;
    let shared = module.shared_layout(f);
    out.kernels.push(KernelReport {
        name: name.to_string(),
        registers: num_regs,
        instructions: live_instructions(laid),
        stack_frame: frame,
        spill_store_bytes: spill_bytes(laid, Form::STL, local_data),
        spill_load_bytes: spill_bytes(laid, Form::LDL, local_data),
        cmem0: 0x140 + k.param_bytes(),
        smem: u64::from(shared.size),
        fold: {
            fold.sass = lower::stats::count_sass(laid.placed.iter().map(|p| &p.inst));
            fold
        },
        src_lines,
    });
}

/// Static `.shared` bytes a kernel may use on sm_5x (ptxas: "uses too much shared data").
pub const MAX_SHARED: u32 = 0xc000;
/// `EIATTR_CRS_STACK_SIZE` of a kernel that recurses, as ptxas 11.8 writes it.
const RECURSION_CRS_STACK: u32 = 0x600;

/// What [`place_subroutines`] placed after a kernel's code.
struct PlacedSubs {
    /// Registers the kernel and its subroutines use, at most.
    regs: u32,
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
/// `IADD32I R1, R1, -frame` and an `STL` of every callee-saved register it may write (R2,
/// R16..R31, then every other quad, below its register count), and before each `RET` the
/// `LDL`s back and `IADD32I R1, R1, frame`, under the `RET`'s own guard. Its spill slots
/// sit at `[R1 + 0..]`, the saved registers after them.
fn place_subroutines(
    inputs: &KernelInputs,
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
            .map(|r| (r - base) as usize)
            .collect()
    };
    let mut work = calls_of(code);
    if work.is_empty() {
        return Ok(None);
    }
    let ends = code.last().is_some_and(|l| {
        matches!(l.form, Form::EXIT | Form::BRA)
            && l.get(Field::Pg) == Some(7)
            && l.get(Field::Pgn) == Some(0)
    });
    if !ends {
        code.push(Inst::new(Form::EXIT));
        srclocs.push(machinst::SrcLoc::NONE);
    }
    let mut start: rustc_hash::FxHashMap<usize, u64> = Default::default();
    let mut regs = 0;
    while let Some(k) = work.pop() {
        if start.contains_key(&k) {
            continue;
        }
        let sub = inputs
            .module
            .subroutines
            .get(k)
            .ok_or_else(|| format!("internal error: no subroutine {k}"))?;
        let (sub_code, sub_relocs, sub_regs) = compile_subroutine(inputs, sub)?;
        regs = regs.max(sub_regs);
        work.extend(calls_of(&sub_code));
        let at = code.len();
        relocs.extend(sub_relocs.into_iter().map(|(k, r)| (at + k, r)));
        start.insert(k, at as u64);
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
            .and_then(|r| start.get(&((r - base) as usize)))
        {
            i.set(Field::Rel, at);
        }
    }
    Ok(Some(PlacedSubs { regs }))
}

/// Whether the call ABI has the callee keep register `r` (docs/calls.md).
fn callee_saved(r: u32) -> bool {
    r == 2 || (16..32).contains(&r) || (r >= 32 && (r / 4) % 2 == 1)
}

/// A subroutine's code with its frame, `BRA`/`CAL` `rel`s indices into it.
type SubCode = (Vec<Inst>, Vec<(usize, lower::Reloc)>, u32);

/// One subroutine's code with its frame (see [`place_subroutines`]), its `BRA`/`CAL`
/// `rel`s indices into it; its relocations (by index in that code); its register count.
/// Refused: a subroutine that names `.shared` variables (the kernel lays out only its own)
/// or needs constants in bank 2 (the kernel's literal pool is its own).
fn compile_subroutine(inputs: &KernelInputs, sub: &ir::Function) -> Result<SubCode, String> {
    let mut f = sub.clone();
    prepare_kernel_ir(inputs.module, &mut f);
    if !inputs.module.shared_layout(&f).offsets.is_empty() {
        return Err(format!(
            "unsupported: the recursive function `{}` names .shared variables",
            f.name
        ));
    }
    let lowered = lower::lower_verified_stats(inputs.module, &f, &inputs.lower_opts)
        .map_err(|e| format!("subroutine `{}`: {e}", f.name))?;
    if !lowered.constant2.is_empty() {
        return Err(format!(
            "unsupported: the recursive function `{}` needs constants of its own in c[0x2]",
            f.name
        ));
    }
    let alloc_opts = AllocOptions {
        max_regs: inputs.max_regs.min(255) as u8,
        checker: cfg!(debug_assertions),
        spill_base: 0,
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
    let saved: Vec<u32> = (0..alloc.num_regs).filter(|&r| callee_saved(r)).collect();
    let frame = (alloc.spill_bytes + 4 * saved.len() as u32).next_multiple_of(8);
    let slot = |n: usize| i64::from(alloc.spill_bytes) + 4 * n as i64;
    let adjust = |by: i64| {
        Inst::new(Form::IADD32I)
            .with(Field::Rd, 1)
            .with(Field::Ra, 1)
            .with_signed(Field::Imm, by)
    };
    let mut prologue = Vec::new();
    if frame > 0 {
        prologue.push(adjust(-i64::from(frame)));
        for (n, &r) in saved.iter().enumerate() {
            prologue.push(
                Inst::new(Form::STL)
                    .with(Field::Rd, u64::from(r))
                    .with(Field::Ra, 1)
                    .with_signed(Field::Off, slot(n)),
            );
        }
    }
    // New positions: the prologue, then each instruction with its epilogue before each RET.
    let old = emitted.code;
    let relocs_at = emitted.relocs;
    let mut out = prologue;
    let mut index = Vec::with_capacity(old.len());
    for i in &old {
        index.push(out.len() as u64);
        if i.form == Form::RET && frame > 0 {
            let pg = i.get(Field::Pg).unwrap_or(7);
            let pgn = i.get(Field::Pgn).unwrap_or(0);
            let guard = |x: Inst| x.with(Field::Pg, pg).with(Field::Pgn, pgn);
            for (n, &r) in saved.iter().enumerate() {
                out.push(guard(
                    Inst::new(Form::LDL)
                        .with(Field::Rd, u64::from(r))
                        .with(Field::Ra, 1)
                        .with_signed(Field::Off, slot(n)),
                ));
            }
            out.push(guard(adjust(i64::from(frame))));
        }
        out.push(*i);
    }
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
    Ok((out, relocs, alloc.num_regs))
}

/// `.local` bytes per thread a kernel's variables may use: what the frame adjustment's signed
/// 32-bit immediate holds, with room for spill slots. ptxas 11.8 compiles frames of 100 MB,
/// reports a 2^31 - 1 byte array as a -2147483648-byte frame and silently gives a 4 GB one a
/// 0-byte frame.
pub const MAX_LOCAL: u32 = 0x7fff_0000;

/// Kernel `f`'s static shared data and local variables must fit sm_5x's limits; the message
/// is ptxas's where ptxas has one.
fn check_memory_limits(module: &ir::Module, f: &ir::Function) -> Result<(), String> {
    let shared = module.shared_layout(f).size;
    if shared > MAX_SHARED {
        return Err(format!(
            "entry function '{}' uses too much shared data ({shared:#x} bytes, {MAX_SHARED:#x} max)",
            f.name
        ));
    }
    let local = lower::local_size(module, f);
    if local > MAX_LOCAL {
        return Err(format!(
            "entry function '{}' uses too much local data ({local:#x} bytes per thread, {MAX_LOCAL:#x} max)",
            f.name
        ));
    }
    Ok(())
}

/// Append kernel `name`'s `--explain` listing to `out`: each run of instructions from one PTX
/// line under a `// line N: <PTX text>` header (`// no PTX line` for the prologue, the
/// allocator's code and the tail), each chain's address expression after its first
/// instruction, the padding left out. `notes` index the emitted code, which sits at placed
/// index + `shift`.
fn explain_kernel(
    out: &mut String,
    name: &str,
    laid: &Laid,
    src_lines: &[Option<u32>],
    notes: &[(usize, Box<str>)],
    shift: usize,
    file: &SourceFile,
) {
    let _ = writeln!(out, "\t\tFunction : {name}");
    let live = live_instructions(laid);
    let mut notes = notes.iter().peekable();
    let mut prev: Option<Option<u32>> = None;
    for (n, p) in laid.placed.iter().enumerate().take(live) {
        let line = src_lines.get(n).copied().flatten();
        if prev != Some(line) {
            match line {
                Some(l) => {
                    let text = file.line_text(l as usize).trim();
                    let _ = writeln!(out, "        // line {l}: {text}");
                }
                None => {
                    let _ = writeln!(out, "        // no PTX line");
                }
            }
            prev = Some(line);
        }
        let text = format!("{} ;", sm50::print(&p.inst, p.addr, p.ctrl.reuse));
        while notes.peek().is_some_and(|(k, _)| k + shift < n) {
            notes.next();
        }
        let note = match notes.peek() {
            Some((k, t)) if k + shift == n => {
                notes.next();
                format!("  // chain: {t}")
            }
            _ => String::new(),
        };
        let _ = writeln!(out, "        /*{:04x}*/    {text}{note}", p.addr);
    }
}

/// `ptxas -v` lines in ptxas 11.8's format (conventions.md §4.1).
/// `gmem` is the size of the module's `.global` data.
pub fn info_log(kernels: &[KernelReport], arch: Arch, gmem: u64) -> String {
    let mut s = format!("ptxas info    : {gmem} bytes gmem\n");
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
    s
}

/// Whether `f` has `alloca`, `stacksave` or `stackrestore`.
fn uses_dynamic_stack(f: &ir::Function) -> bool {
    f.insts
        .values()
        .any(|i| matches!(i.data, ir::InstData::Stack { .. }))
}

/// Swap R0 and R1 in every register field: selection wrote the dynamic stack pointer as R0
/// (`lower::select::stack::DSP`, a register the allocator kept free) and the frame base as
/// R1; ptxas's code moves R1 and keeps the frame base elsewhere. No pair or quad starts at
/// R0 (R1 is never allocated), so every field naming R0 or R1 names exactly that register.
fn swap_stack_registers(insts: &mut [Inst]) {
    for inst in insts {
        let fields = inst.info().fields;
        for (k, f) in fields.iter().enumerate() {
            if matches!(f.kind, crate::sm50::FieldKind::Reg) && inst.f[k] <= 1 {
                inst.f[k] ^= 1;
            }
        }
    }
}

/// Turn `lower::emit`'s output (each `BRA`'s `rel` holds its target's index) into a [`Body`],
/// prepending the frame adjustment `IADD32I R1, R1, -frame` when the kernel spills, and then
/// `MOV R0, R1` (the frame base) when it has a dynamic stack.
fn body_from_lowered(
    mut insts: Vec<Inst>,
    frame: u32,
    dynamic_stack: bool,
) -> Result<Body, String> {
    // The emitted vector becomes the body's in place (the prologue, when there is one, goes
    // in front in one move of the whole vector) rather than each instruction copied over.
    let n = insts.len();
    let shift = usize::from(frame > 0) + usize::from(dynamic_stack);
    let mut prologue = Vec::new();
    if frame > 0 {
        prologue.push(
            Inst::new(Form::IADD32I)
                .with(Field::Rd, 1)
                .with(Field::Ra, 1)
                .with_signed(Field::Imm, -i64::from(frame)),
        );
    }
    if dynamic_stack {
        prologue.push(Inst::new(Form::MOV_R).with(Field::Rd, 0).with(Field::Rb, 1));
    }
    if !prologue.is_empty() {
        insts.splice(0..0, prologue);
    }
    let mut targets = Vec::with_capacity(insts.len());
    targets.resize(shift, None);
    for inst in &mut insts[shift..] {
        let target = match inst.form {
            Form::BRA | Form::SSY | Form::PBK | Form::CAL => {
                let t = inst.get(Field::Rel).unwrap_or(0) as usize;
                if t >= n {
                    return Err(format!("branch to instruction {t} of {n}"));
                }
                inst.set(Field::Rel, 0);
                Some(t + shift)
            }
            _ => None,
        };
        targets.push(target);
    }
    Ok(Body { insts, targets })
}

/// Apply a deliberate miscompilation (tests of the verifier only).
fn inject(mut insts: Vec<Inst>, bug: Option<InjectBug>) -> Vec<Inst> {
    if bug == Some(InjectBug::WrongLeaScale) {
        for i in &mut insts {
            if matches!(i.info().class, "LEA" | "LEA_HI") {
                if let Some(s) = i.get(Field::S) {
                    i.set(Field::S, (s + 1) % 32);
                }
            }
        }
    }
    insts
}

/// The span of a kernel's name in the source (for stage errors), or the file start.
fn kernel_span(ast: &ast::Module, name: &str) -> Span {
    ast.functions()
        .find(|f| f.name.text == name)
        .map_or(Span::new(0, 0), |f| f.name.span)
}

/// What compiling needs from the AST once the IR is built (so that the AST can go).
struct AstFacts {
    /// Per function name: its name's span and whether it is `.visible`.
    functions: rustc_hash::FxHashMap<String, (Span, bool)>,
    /// Per kernel name: its performance-tuning directives, where it has any.
    launch: rustc_hash::FxHashMap<String, LaunchDirectives>,
    ptx_target: Option<u32>,
    address_bits: u32,
    texmode_independent: bool,
    /// Module variables declared `.visible` (GLOBAL symbols of a relocatable object).
    visible_vars: Vec<String>,
}

impl AstFacts {
    fn of(ast: &ast::Module) -> AstFacts {
        let mut functions = rustc_hash::FxHashMap::default();
        let mut launch = rustc_hash::FxHashMap::default();
        for f in ast.functions() {
            functions
                .entry(f.name.text.to_string())
                .or_insert((f.name.span, f.linkage.contains(&ast::Linkage::Visible)));
            if !f.perf.is_empty() {
                launch.insert(f.name.text.to_string(), LaunchDirectives::of(&f.perf));
            }
        }
        AstFacts {
            functions,
            launch,
            ptx_target: ptx_target(ast),
            address_bits: ast.address_size(),
            texmode_independent: ast.targets().contains(&"texmode_independent"),
            visible_vars: ast
                .items
                .iter()
                .filter_map(|i| match i {
                    ast::Item::Var(v) if v.linkage.contains(&ast::Linkage::Visible) => Some(v),
                    _ => None,
                })
                .flat_map(|v| v.names.iter().map(|d| d.name.text.to_string()))
                .collect(),
        }
    }

    /// Where kernel `name` is named (the file start if it is not a function of the file).
    fn span(&self, name: &str) -> Span {
        self.functions.get(name).map_or(Span::new(0, 0), |f| f.0)
    }

    /// Whether `name` is `.visible` (a name the file does not define counts as visible).
    fn visible(&self, name: &str) -> bool {
        self.functions.get(name).map_or(true, |f| f.1)
    }
}

/// A kernel's performance-tuning directives (PTX ISA 11.4) as far as code generation and the
/// cubin use them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LaunchDirectives {
    maxntid: Option<[u32; 3]>,
    reqntid: Option<[u32; 3]>,
    maxnreg: Option<u32>,
    minnctapersm: Option<u32>,
}

/// The fewest registers ptxas 11.8 lets a kernel have: it raises a smaller `.maxnreg` to this,
/// with a warning.
const MIN_REGISTER_BUDGET: u32 = 16;

impl LaunchDirectives {
    fn of(perf: &[ast::PerfDirective]) -> LaunchDirectives {
        let dims = |v: &[u32]| {
            let d = |k: usize| v.get(k).copied().unwrap_or(1);
            [d(0), d(1), d(2)]
        };
        let mut l = LaunchDirectives::default();
        for p in perf {
            match p {
                ast::PerfDirective::MaxNtid(v, _) => l.maxntid = Some(dims(v)),
                ast::PerfDirective::ReqNtid(v, _) => l.reqntid = Some(dims(v)),
                ast::PerfDirective::MaxNreg(n, _) => l.maxnreg = Some(*n),
                ast::PerfDirective::MinNctaPerSm(n, _) => l.minnctapersm = Some(*n),
                ast::PerfDirective::MaxNctaPerSm(..) | ast::PerfDirective::Pragma(..) => {}
            }
        }
        l
    }

    /// Threads per block the directives fix or bound.
    fn block(&self) -> Option<u32> {
        self.reqntid
            .or(self.maxntid)
            .map(|d| d.iter().map(|&x| x.max(1)).fold(1u32, u32::saturating_mul))
    }

    /// The register budget and, where a directive had to be adjusted, ptxas's warning.
    ///
    /// As ptxas 11.8 does (measured on its `EIATTR_MAXREG_COUNT`): `.maxnreg` wins over
    /// everything (raised to 16 when below); otherwise a block-size directive sets the budget
    /// to the most registers with which `.minnctapersm` blocks of that size (one without the
    /// directive) are still resident on one SM, and `--maxrregcount` is ignored; otherwise
    /// `--maxrregcount` (255 without it). A `.minnctapersm` that no block size could meet
    /// (more warps than an SM holds) is ignored, with a warning.
    fn register_budget(&self, arch: Arch, name: &str, cli: u32) -> (u32, Option<String>) {
        if let Some(n) = self.maxnreg {
            let n = n.min(255);
            if n < MIN_REGISTER_BUDGET {
                return (
                    MIN_REGISTER_BUDGET,
                    Some(format!(
                        "for entry {name} adjusting per thread register count of {n} to lower \
                         bound of {MIN_REGISTER_BUDGET}"
                    )),
                );
            }
            return (n, None);
        }
        let Some(block) = self.block() else {
            return (cli, None);
        };
        let block = block.min(1024);
        let warps = block.div_ceil(32);
        let mut blocks = self.minnctapersm.unwrap_or(1).max(1);
        let mut warning = None;
        if blocks.saturating_mul(warps) > crate::occupancy::WARPS_PER_SM
            || blocks > crate::occupancy::BLOCKS_PER_SM
        {
            warning = Some(format!(
                "value of threads per SM for entry {name} is out of range; .minnctapersm \
                 will be ignored"
            ));
            blocks = 1;
        }
        let fits = |r: u32| crate::occupancy::theoretical(arch, r, 0, Some(block)).blocks >= blocks;
        let budget = (MIN_REGISTER_BUDGET..=255)
            .rev()
            .find(|&r| fits(r))
            .unwrap_or(MIN_REGISTER_BUDGET);
        (budget, warning)
    }

    /// The `.nv.info` records ptxas writes for them: `EIATTR_MAX_THREADS` for `.maxntid`,
    /// `EIATTR_REQNTID` for `.reqntid` (the driver refuses a launch beyond either).
    fn records(&self) -> Vec<cubin::eiattr::Attribute> {
        let rec = |code: u8, d: [u32; 3]| cubin::eiattr::Attribute::Other {
            format: cubin::eiattr::Format::Sval,
            code,
            payload: d.iter().flat_map(|x| x.to_le_bytes()).collect(),
        };
        let mut v = Vec::new();
        if let Some(d) = self.maxntid {
            v.push(rec(cubin::eiattr::code::MAX_THREADS, d));
        }
        if let Some(d) = self.reqntid {
            v.push(rec(cubin::eiattr::code::REQNTID, d));
        }
        v
    }
}

/// `R_CUDA_SURF_HEADER_INDEX`: the driver writes a surface's header index into the
/// relocated word of constant bank 0.
const R_CUDA_SURF_HEADER_INDEX: u32 = 0x34;
/// `EIATTR_BINDLESS_SURFACE_BANK` (a BVAL: the constant bank of the surface handles, 0).
const EIATTR_BINDLESS_SURFACE_BANK: u8 = 0x16;
/// `st_info` of a `.surfref` symbol: GLOBAL binding, CUDA type 12 (surface).
const SURFREF_SYMBOL_INFO: u8 = 0x1c;

/// The module's `.surfref` symbols, as ptxas 11.8 writes them (undefined GLOBAL symbols of
/// CUDA type 12): first those the last kernel uses, in the order it first uses them (ptxas
/// compiles the kernels last first, and makes these symbols as it meets them), then the
/// others in declaration order.
fn surface_handles(module: &ir::Module, last: Option<&ir::Function>) -> Vec<(String, u8)> {
    let mut order: Vec<u32> = last
        .map(|f| {
            crate::surface::bound_slots(f)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        })
        .unwrap_or_default();
    for i in 0..module.surfrefs.len() as u32 {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    order
        .into_iter()
        .map(|i| (module.surfrefs[i as usize].clone(), SURFREF_SYMBOL_INFO))
        .collect()
}

/// A kernel's surface metadata, as ptxas 11.8 writes it: one `R_CUDA_SURF_HEADER_INDEX`
/// relocation of `.nv.constant0.<k>` per `.surfref` it uses (at the word
/// [`crate::surface::bound_slots`] gives it; ptxas lists them last slot first), and
/// `EIATTR_BINDLESS_SURFACE_BANK` 0 when a surface instruction names its surface by a
/// constant-bank slot (a `.surfref`, or a handle read straight from a parameter).
fn surface_metadata(module: &ir::Module, f: &ir::Function, k: &mut KernelSpec) {
    use crate::surface::SurfHandle;
    let slots = crate::surface::bound_slots(f);
    for &(i, off) in slots.iter().rev() {
        k.const0_relocs.push(cubin::RelocSpec {
            offset: u64::from(off),
            symbol: module.surfrefs[i as usize].clone(),
            rtype: R_CUDA_SURF_HEADER_INDEX,
        });
    }
    let by_slot = f.insts.values().any(|n| match &n.data {
        ir::InstData::Surface { access, args } => match access.handle {
            SurfHandle::Bound(_) => true,
            SurfHandle::Bindless => matches!(
                f.values[args[0]].def,
                ir::ValueDef::Result(d, _) if matches!(f.insts[d].data, ir::InstData::LoadParam { .. })
            ),
        },
        _ => false,
    });
    if by_slot {
        k.extra_info.push(cubin::eiattr::Attribute::Other {
            format: cubin::eiattr::Format::Bval,
            code: EIATTR_BINDLESS_SURFACE_BANK,
            payload: vec![0, 0],
        });
    }
}

/// The PTX `.target sm_XX` number.
fn ptx_target(ast: &ast::Module) -> Option<u32> {
    ast.targets()
        .iter()
        .find_map(|t| t.strip_prefix("sm_").and_then(|n| n.parse().ok()))
}

/// The `.const` data, laid out in declaration order at each variable's alignment, as `lower`
/// assigns their offsets. (Shared memory is per kernel: `ir::Module::shared_layout`.)
fn module_constants(module: &ir::Module) -> Option<DataSpec> {
    let mut cdata = DataSpec {
        size: 0,
        align: 4,
        init: Vec::new(),
        symbols: Vec::new(),
    };
    let mut any_const = false;
    for (_, v) in module.vars_in_layout_order() {
        let align = u64::from(v.align.max(1));
        if let ir::Space::Const | ir::Space::Param | ir::Space::Generic = v.space {
            any_const = true;
            let off = cdata.size.next_multiple_of(align);
            cdata.size = off + u64::from(v.size);
            cdata.align = cdata.align.max(align);
            cdata.init.resize(cdata.size as usize, 0);
            if let Some(init) = &v.init {
                let end = (off as usize + init.len()).min(cdata.size as usize);
                cdata.init[off as usize..end].copy_from_slice(&init[..end - off as usize]);
            }
            cdata.symbols.push((v.name.clone(), off, u64::from(v.size)));
        }
    }
    any_const.then_some(cdata)
}

/// The data relocations for the addresses in `.global` and `.const` initializers
/// ([`ir::AddrInit`]), as ptxas 11.8 writes them: `R_CUDA_G64` for an 8-byte element,
/// `R_CUDA_G8_<8k>` for a `mask()` byte (byte k of the address), against the named variable,
/// the offset as addend; every entry without an addend in `.rel.<section>`, those with one in
/// `.rela.<section>`; the relocated bytes stay zero. A `.global` variable's plain and
/// generic addresses are the same; a `.const` variable's plain address is its offset in
/// `.nv.constant3`, which ptxas writes as data, not as a relocation (done here, into
/// `constant`/`global`'s bytes).
///
/// One deviation: for a 4-byte element (`.u32 p = x`) ptxas (with its default `-m64`, a
/// 64-bit ELF as leafold writes) also emits `R_CUDA_G64`, which writes 8 bytes into the 4-byte
/// variable and so over the 4 bytes after it; leafold writes `R_CUDA_G32`, which is what
/// ptxas `-m32` writes for the same element.
fn data_relocations(
    module: &ir::Module,
    mut global: Option<&mut DataSpec>,
    mut constant: Option<&mut DataSpec>,
) -> Vec<cubin::DataRelocs> {
    let offset_in = |d: &Option<&mut DataSpec>, name: &str| -> Option<u64> {
        let d = d.as_deref()?;
        d.symbols.iter().find(|s| s.0 == name).map(|s| s.1)
    };
    // (global: rel, rela), (const: rel, rela)
    let mut groups: [Vec<cubin::DataRelocSpec>; 4] = Default::default();
    for (gv, v) in module.vars.iter() {
        let Some(addrs) = module.addr_inits.get(gv).filter(|a| !a.is_empty()) else {
            continue;
        };
        let (section, base) = match v.space {
            ir::Space::Global => (0, offset_in(&global, &v.name)),
            ir::Space::Const => (2, offset_in(&constant, &v.name)),
            _ => continue,
        };
        let Some(base) = base else { continue };
        for a in addrs {
            let Some(t) = module.vars.get(a.target) else {
                continue;
            };
            if t.space == ir::Space::Const && !a.generic {
                // An offset in the const space: known now.
                let Some(toff) = offset_in(&constant, &t.name) else {
                    continue;
                };
                let data = if section == 0 {
                    global.as_deref_mut()
                } else {
                    constant.as_deref_mut()
                };
                if let Some(d) = data {
                    let end = ((base + u64::from(v.size)) as usize).min(d.init.len());
                    if let Some(bytes) = d.init.get_mut(base as usize..end) {
                        a.patch(bytes, toff);
                    }
                }
                continue;
            }
            let rtype = match a.width {
                ir::AddrWidth::Word(8) => R_CUDA_G64,
                ir::AddrWidth::Word(_) => R_CUDA_G32,
                ir::AddrWidth::Byte(shift) => R_CUDA_G8_0 + u32::from(shift.min(56) / 8),
            };
            groups[section + usize::from(a.addend != 0)].push(cubin::DataRelocSpec {
                offset: base + u64::from(a.offset),
                symbol: t.name.clone(),
                rtype,
                addend: a.addend,
            });
        }
    }
    let names = [
        ".nv.global.init",
        ".nv.global.init",
        ".nv.constant3",
        ".nv.constant3",
    ];
    groups
        .into_iter()
        .enumerate()
        .filter(|(_, g)| !g.is_empty())
        .map(|(i, relocs)| cubin::DataRelocs {
            section: names[i].to_string(),
            rela: i % 2 == 1,
            relocs,
        })
        .collect()
}

/// `R_CUDA_G64`: the 64-bit generic address of a symbol (plus the addend) into 8 bytes of
/// data.
pub const R_CUDA_G64: u32 = 0x4;
/// `R_CUDA_G32`: its low 32 bits into 4 bytes of data.
pub const R_CUDA_G32: u32 = 0x3;
/// `R_CUDA_G8_0`: byte 0 of the generic address into one byte of data; `R_CUDA_G8_<8k>` is
/// `R_CUDA_G8_0 + k` (byte k, up to `R_CUDA_G8_56` = 0x5b).
pub const R_CUDA_G8_0: u32 = 0x54;

/// `R_CUDA_FUNC_DESC32_LO_32` / `R_CUDA_FUNC_DESC32_HI_32`: the low / high word of a kernel's
/// function descriptor (what `cudaLaunchDevice` takes) into a `MOV32I`'s 32-bit immediate, as
/// ptxas 11.8 writes `mov.u64 %rd, kernel;` under `-c` (nvlink resolves them).
pub const R_CUDA_FUNC_DESC32_LO_32: u32 = 0x30;
pub const R_CUDA_FUNC_DESC32_HI_32: u32 = 0x31;

/// `R_CUDA_ABS32_LO_20` / `R_CUDA_ABS32_HI_20`: the low / high word of a symbol's address into
/// a `MOV32I`'s 32-bit immediate (what ptxas 11.8 emits for a `.global` variable's address).
pub const R_CUDA_ABS32_LO_20: u32 = 0x2b;
pub const R_CUDA_ABS32_HI_20: u32 = 0x2c;
/// `R_CUDA_ABS32_20`: a 32-bit module's whole symbol address into a `MOV32I`'s immediate.
pub const R_CUDA_ABS32_20: u32 = 0x2a;

/// The module's `.global` variables as one data section, and whether it holds initial bytes.
///
/// Variables are laid out in declaration order at their alignment, exactly as
/// [`ir::eval`] places them at `MODULE_GLOBAL_BASE`, so the simulator running our cubin and the
/// IR interpreter see the same bytes at the same addresses. ptxas splits initialized
/// (`.nv.global.init`) from zero-initialized (`.nv.global`, NOBITS) variables; when a module has
/// both, leafold keeps them together in `.nv.global.init` (zeros written out) to keep that
/// layout.
fn global_memory(module: &ir::Module) -> (Option<DataSpec>, bool) {
    let mut g = DataSpec {
        size: 0,
        align: 1,
        init: Vec::new(),
        symbols: Vec::new(),
    };
    let mut any = false;
    let mut any_init = false;
    for v in module
        .vars
        .values()
        .filter(|v| v.space == ir::Space::Global)
    {
        any = true;
        let align = u64::from(v.align.max(1));
        let off = g.size.next_multiple_of(align);
        g.size = off + u64::from(v.size);
        g.align = g.align.max(align);
        // Bytes only up to the last initialized variable (the writer zero-pads to `size`):
        // a large uninitialized array costs no memory here.
        if let Some(init) = &v.init {
            any_init = true;
            let end = (off as usize + init.len()).min(g.size as usize);
            g.init.resize(end, 0);
            g.init[off as usize..end].copy_from_slice(&init[..end - off as usize]);
        }
        g.symbols.push((v.name.clone(), off, u64::from(v.size)));
    }
    (any.then_some(g), any_init)
}

/// Named barriers used: highest `BAR` id + 1; 16 (all) when a barrier number is in a
/// register, as ptxas 11.8 reports (`SHF_BARRIERS=16`).
fn barrier_count(laid: &Laid) -> u32 {
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
fn spill_bytes(laid: &Laid, form: Form, spill_base: u32) -> u32 {
    laid.placed
        .iter()
        .filter(|p| {
            p.inst.form == form
                && p.inst.get(Field::Ra) == Some(1)
                && sm50::rt::sext(p.inst.get(Field::Off).unwrap_or(0), 24) as i64
                    >= i64::from(spill_base)
        })
        .map(|p| match p.inst.get(Field::Size) {
            Some(0 | 1) => 1,
            Some(2 | 3) => 2,
            Some(5) => 8,
            Some(6) => 16,
            _ => 4,
        })
        .sum()
}

/// Instructions without the trailing padding NOPs.
fn live_instructions(laid: &Laid) -> usize {
    laid.placed.len()
        - laid
            .placed
            .iter()
            .rev()
            .take_while(|p| p.inst.form == Form::NOP)
            .count()
}
