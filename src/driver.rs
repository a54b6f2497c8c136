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
//!
//! # Files of this module
//!
//! - `subroutines.rs`: Subroutines of the module (recursive functions).
//! - `object_funcs.rs`: Functions of a relocatable object (`.visible .func` under `-c`).
//! - `facts.rs`: What the driver reads from the AST besides the IR: each kernel's span,
//!   visibility and launch directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`),
//!   and the register budget they give.
//! - `data.rs`: Module data for the cubin.
//! - `handles.rs`: Texture and surface handles in the cubin.
//! - `allocate.rs`: Lowering and register allocation of a kernel, its warps and frame size.

mod report;
pub use report::*;
mod explain;
use explain::*;
mod subroutines;
use subroutines::*;
mod object_funcs;
use object_funcs::*;
mod facts;
use facts::*;
mod data;
pub use data::*;
mod handles;
use handles::*;
mod allocate;
use allocate::*;
use std::fmt::Write as _;

use crate::cubin::{self, CubinSpec, DataSpec, KernelSpec};
use crate::error::{Diagnostic, Diagnostics, SourceFile, Span};
use crate::ir;
use crate::lower::{self, Fold, FoldStats, LowerOptions, RelocWord};
use crate::machinst::{self, AllocOptions};
use crate::ptx::{self, ast};
use crate::sm50::sched::bundle::{layout, Body, Laid};
use crate::sm50::sched::cost;
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
    /// Leave out the per-quad split around `.B` texture fetches whose handle may differ
    /// within a quad (`lower::LowerOptions::no_handle_split`). Only for tests showing what
    /// the split is for: wrong wherever the handles do differ.
    pub no_handle_split: bool,
    /// Keep `div.rn.f32` / `rcp.rn.f32` inline at every site (`--no-subroutines`): no fast
    /// path and no slow-path subroutine (see `lower::LowerOptions::no_subroutines`).
    pub no_subroutines: bool,
    /// Contract float `mul` + `add`/`sub` written without rounding modifiers into fused
    /// multiply-adds (ptxas's `--fmad`, on by default): [`ir::contract`].
    pub fmad: bool,
    /// Unroll loops whose trip count is known only at run time by four
    /// (`--unroll-runtime`, off by default): [`ir::unroll_runtime`].
    pub unroll_runtime: bool,
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
            no_handle_split: false,
            no_subroutines: false,
            fmad: true,
            unroll_runtime: false,
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
    /// The subroutines placed after the kernel's code (recursive functions): PTX name, frame
    /// bytes, spill store and load bytes (`-v`'s "Function properties for <name>").
    pub subroutines: Vec<(String, u32, u32, u32)>,
    /// ptxas's `-v` line where the kernel's directives override `--maxrregcount`
    /// ("Overriding global maxrregcount ...", see `facts::Budget::override_line`).
    pub budget_note: Option<String>,
    /// The kernel was compiled through [`compile_kernel`]'s fallback that leaves its `.local`
    /// arrays indexed at run time in local memory (`ir::unindex`'s select chains would have
    /// cost it warps); `leafold verify` lays out its local memory so.
    pub indexed_locals_in_memory: bool,
}

impl KernelReport {
    /// The PTX line of the instruction at `.text` byte offset `addr` (see [`Self::src_lines`]).
    pub fn ptx_line_at(&self, addr: u64) -> Option<u32> {
        if addr % 8 != 0 {
            return None;
        }
        let n = crate::sm50::ctrl::inst_index(addr)?;
        self.src_lines.get(n).copied().flatten()
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
    let module = build_module(&ast, &file, opts)?;
    times.lap("ir-build", &mut t);
    // The few facts later stages need from the AST; the AST itself (most of the memory on a
    // large file) goes before lowering starts.
    let facts = AstFacts::of(&ast);
    let declared = module_var_names(&ast);
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
        inline_sqrt: false,
        sm: opts.arch.sm(),
        no_hoist: false,
        no_ifconv: opts.no_ifconv,
        no_store_motion: false,
        // `Wide` measured 15.06 M -> 13.61 M dynamic cycles on corpus-nvcc (see
        // `lower::hoist::WIDE`); `driver::allocate` falls back where it costs warps.
        interleave: lower::Interleave::Wide,
        // Under `-c` the dynamically sized `.shared` arrays lie after the static window nvlink
        // builds from this object's kernel and the other objects' functions it calls.
        shared_relocs: if opts.relocatable {
            lower::SharedRelocs::Dynamic
        } else {
            lower::SharedRelocs::None
        },
        no_handle_split: opts.no_handle_split,
        // Only on `driver::allocate`'s retry for warps.
        remat_cbuf: false,
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
    let handles = reference_handles(&declared, &module, functions.last());
    let mut specs = Vec::with_capacity(functions.len());
    for f in functions {
        specs.push(compile_kernel(&inputs, f, &mut out, &mut times, &mut t)?);
    }
    // `--compile-only`: the `.visible .func`s other objects call, each its own function.
    let (functions, functions_log) = object_functions(&inputs, &mut out);
    specs.extend(functions);
    // A function of the object that another one calls (`JCAL`) is defined here: its
    // relocation is against its own symbol, not an extern (ptxas lists no `EIATTR_EXTERNS`
    // for it).
    let defined: Vec<String> = specs
        .iter()
        .filter(|k| !k.entry)
        .map(|k| k.name.clone())
        .collect();
    for k in &mut specs {
        k.externs.retain(|n| !defined.contains(n));
    }
    if opts.emit == Emit::Sass {
        out.text = out.sass.clone();
    }
    let object_shared = object_funcs::object_shared(&module, &specs);
    let dynamic_shared = object_funcs::dynamic_shared_symbols(&module, &specs);
    let externs = extern_symbols(&specs);
    let desc_size = desc_size_symbols(&specs);
    let spec = CubinSpec {
        arch: opts.arch.sm(),
        ptx_arch: facts.ptx_target.unwrap_or(opts.arch.sm()),
        address_bits: facts.address_bits,
        kernels: specs,
        constant3: const_data,
        global_init: global_init.then(|| global_data.clone()).flatten(),
        global: (!global_init).then_some(global_data).flatten(),
        strtab_order: None,
        // Every module `.texref` and `.surfref` is a symbol, used or not (ptxas 11.8 keeps
        // unused ones), in the order `reference_handles` gives; then the system functions
        // named dynamically sized `.shared` arrays and the functions called (undefined).
        handles: handles
            .into_iter()
            .chain(dynamic_shared)
            .chain(externs)
            .chain(desc_size)
            .collect(),
        symbol_order: None,
        abi_version: 7,
        texmode_independent: facts.texmode_independent,
        data_relocs,
        samplers: module
            .samplerrefs
            .iter()
            .filter(|s| s.param.is_none())
            .map(|s| (s.name.clone(), s.init))
            .collect(),
        object_shared,
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
        out.info_log.push_str(&functions_log);
    }
    out.pass_times = times;
    Ok(out)
}

/// The IR module of `ast`: all of it, or under `-e` only the named kernels (and the
/// module's declarations) must build; what the other kernels use does not matter.
fn build_module(
    ast: &ast::Module,
    file: &std::sync::Arc<SourceFile>,
    opts: &Options,
) -> Result<ir::Module, Diagnostics> {
    let bopts = ir::build::BuildOptions {
        fmad: opts.fmad,
        any_extern: opts.relocatable,
    };
    Ok(if opts.entries.is_empty() {
        ir::build::build_with(ast, file, &bopts).map_err(Diagnostics)?
    } else {
        let p = ir::build::build_partial_with(ast, file, &bopts);
        let mut errors = p.errors[..p.declaration_errors].to_vec();
        for (name, range) in p.failed.iter().zip(&p.failed_errors) {
            if opts.entries.contains(name) {
                if range.is_empty() {
                    errors.push(Diagnostic::error(
                        file,
                        kernel_span(ast, name),
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
    })
}

/// The system functions the kernels call: undefined GLOBAL FUNC symbols (st_info 0x12),
/// after every other symbol, as ptxas 11.8 writes them.
fn extern_symbols(specs: &[KernelSpec]) -> Vec<(String, u8)> {
    let mut externs: Vec<(String, u8)> = Vec::new();
    for k in specs {
        for n in &k.externs {
            if !externs.iter().any(|(h, _)| h == n) {
                externs.push((n.clone(), 0x12));
            }
        }
    }
    externs
}

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
/// collectives sm_5x lacks expanded (`ir::collective`), simplified (`ir::simplify`), small
/// constant-trip loops unrolled (`ir::unroll`, then simplified again), the `.local`
/// variables that only constant offsets reach, and the small arrays indexed at run time
/// that `ir::unindex` takes, promoted to SSA values (`ir::sroa`, then simplified again,
/// since loads that became values fold further), and adjacent aligned scalar
/// `.shared`/`.const` accesses merged (`ir::vectorize`). Runtime-trip loops are not unrolled
/// here (`--unroll-runtime` is off by default): [`prepare_kernel_ir_with`] says both.
pub fn prepare_kernel_ir(module: &ir::Module, f: &mut ir::Function) {
    prepare_kernel_ir_with(module, f, false, true);
}

/// [`prepare_kernel_ir`], with the runtime-trip loops unrolled (`runtime_unroll`,
/// [`Options::unroll_runtime`]) or not, and the `.local` arrays indexed at run time
/// promoted only where `unindex` is set (`ir::sroa::promote_locals_with`); returns how many
/// loops were unrolled and whether any such array was promoted.
pub fn prepare_kernel_ir_with(
    module: &ir::Module,
    f: &mut ir::Function,
    runtime_unroll: bool,
    unindex: bool,
) -> (usize, bool) {
    ir::collective::expand(f);
    ir::simplify::simplify(f);
    // ptxas's rule for arrays indexed at run time reads the loops as written.
    let kept = ir::unindex::split_stores(module, f);
    if ir::unroll::unroll_loops(f).loops > 0 {
        ir::simplify::simplify(f);
    }
    let unrolled = if runtime_unroll {
        ir::unroll_runtime::unroll_runtime_loops(f)
    } else {
        0
    };
    if unrolled > 0 {
        ir::simplify::simplify(f);
    }
    let promoted = ir::sroa::promote_locals_with(module, f, unindex, &kept);
    if promoted.vars > 0 {
        ir::simplify::simplify(f);
    }
    ir::vectorize::vectorize(module, f);
    (unrolled, promoted.unindexed > 0)
}

/// `f` prepared ([`prepare_kernel_ir`]) and narrowed ([`narrow_kernel_ir`]); returns the
/// unnarrowed function (as [`narrow_kernel_ir`]), where runtime-trip loops were unrolled
/// the kernel prepared and narrowed without that (`rolled`), for [`compile_kernel`]'s
/// occupancy fallback, and whether a `.local` array indexed at run time was promoted.
fn prepare_kernel(
    module: &ir::Module,
    f: &mut ir::Function,
    runtime_unroll: bool,
) -> (Option<ir::Function>, Option<ir::Function>, bool) {
    let mut rolled = f.clone();
    let (unrolled, unindexed) = prepare_kernel_ir_with(module, f, runtime_unroll, true);
    let wide = narrow_kernel_ir(module, f);
    if unrolled == 0 {
        return (wide, None, unindexed);
    }
    prepare_kernel_ir_with(module, &mut rolled, false, true);
    narrow_kernel_ir(module, &mut rolled);
    (wide, Some(rolled), unindexed)
}

/// `f` with its 64-bit values that only address `.shared` or `.const` memory narrowed to 32 bits
/// (`ir::narrow`), after [`prepare_kernel_ir`]; returns the unnarrowed function when anything
/// changed, for [`compile_kernel`]'s fallback.
pub fn narrow_kernel_ir(module: &ir::Module, f: &mut ir::Function) -> Option<ir::Function> {
    let wide = f.clone();
    if ir::narrow::narrow_addresses(module, f) == 0 {
        return None;
    }
    ir::simplify::simplify(f);
    Some(wide)
}

/// A kernel's allocated machine code.
type Alloc = machinst::Allocated<lower::Sm50Inst>;

/// A kernel's allocation emitted and laid out (see `compile_kernel`).
struct Laying {
    frame: u32,
    relocs: Vec<(usize, lower::Reloc)>,
    srclocs: Vec<machinst::SrcLoc>,
    notes: Vec<(usize, Box<str>)>,
    shape: Shape,
    subs: Vec<PlacedSub>,
    laid: Laid,
}

/// How much slower (static issue cycles, a fraction) the code coloured without spreading
/// may be than the spread code and still be kept for its fewer registers (`compile_kernel`).
const SPREAD_TOLERANCE: f64 = 0.005;

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
    let original = f.clone();
    let runtime_unroll = inputs.opts.unroll_runtime;
    let (wide, rolled, unindexed) = prepare_kernel(module, &mut f, runtime_unroll);
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
    let budget = launch.register_budget(opts.arch, name, max_regs);
    for w in &budget.warnings {
        out.diagnostics
            .push(Diagnostic::warning(file, facts.span(name), w.clone()));
    }
    let max_regs = budget.regs;
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
    let ir_mark = out.text.len();
    if opts.emit == Emit::Ir {
        let _ = writeln!(out.text, "{f}");
    }
    limits.map_err(err)?;
    let mut local_data = lower::local_size(module, f).next_multiple_of(16);
    let mark = out.text.len();
    let (fold, constant2, alloc, recipe) =
        lower_and_allocate(&cx, lower_opts, max_regs, local_data, out, times, t)?;
    let mut chosen = f;
    // Whether `chosen` has its runtime-trip loops unrolled (the rolled fallback has not).
    let mut chosen_unroll = runtime_unroll;
    // Compile the alternative `other` of the kernel (its local data `data` bytes, lowered
    // with `lower_opts`) as well; keep it where `prefer` says it does better than what was
    // chosen.
    let alternative = |other: &'_ ir::Function,
                       data: u32,
                       lower_opts: LowerOptions,
                       prefer: &dyn Fn(&Alloc, &Alloc) -> bool,
                       current: &mut (FoldStats, Vec<u8>, Alloc, Recipe),
                       out: &mut Output,
                       times: &mut PassTimes,
                       t: &mut std::time::Instant|
     -> bool {
        let current_text = out.text.split_off(mark);
        let cxo = KernelCtx { f: other, ..cx };
        match lower_and_allocate(&cxo, lower_opts, max_regs, data, out, times, t) {
            Ok(o) if prefer(&o.2, &current.2) => {
                *current = o;
                true
            }
            _ => {
                out.text.truncate(mark);
                out.text.push_str(&current_text);
                false
            }
        }
    };
    let mut current = (fold, constant2, alloc, recipe);
    // The narrowed shared pointers (`ir::narrow`) are 32-bit values where they were pairs.
    // Where the kernel keeps more than the allocator's 64 scalars live at once, that moves
    // values out of the pair class into an overflowing scalar one (MC-GPU's
    // `track_particles`: 96 registers became 139 with spills). Where the narrowed kernel
    // spills, compile the unnarrowed one as well and keep whichever spills less (ties: the
    // narrowed one). Trade-off: one more compile, only for spilling kernels that had a
    // 64-bit shared pointer.
    if let Some(wide) = wide.as_ref().filter(|_| current.2.spill_bytes > 0) {
        if alternative(
            wide,
            local_data,
            lower_opts,
            &spills_less,
            &mut current,
            out,
            times,
            t,
        ) {
            chosen = wide;
        }
    }
    // The runtime-unrolled loops (`ir::unroll_runtime`) run four copies' loads at once, and
    // the scheduler hoists them: more registers live. Where that leaves the kernel spilling
    // or below the warps it wants (`allocate::wanted_warps`), compile it once more without
    // the unrolling and keep that where it spills less or keeps more warps resident (ties:
    // the unrolled code). The same `.local` variables must stay in memory either way
    // (`leafold verify` finds them through `prepare_kernel_ir_with`). Trade-off: one more
    // compile for the kernels whose unrolled loops cost them occupancy; the occupancy is
    // never lower than without the unrolling (fir_double: 62 registers unrolled, 32 not).
    let limited = |a: &Alloc| a.spill_bytes > 0 || warps(&cx, a.num_regs) < wanted_warps(&cx);
    // Whether `o` spills less than `c`, or as much and keeps more warps resident (and, winning
    // on spilling alone, costs no more code: `allocate::better`).
    let better = |o: &Alloc, c: &Alloc| better(&cx, o, c, Alloc::spill_cost);
    if let Some(rolled) = rolled
        .as_ref()
        .filter(|r| limited(&current.2) && module.local_layout(r) == module.local_layout(chosen))
    {
        if alternative(
            rolled,
            local_data,
            lower_opts,
            &better,
            &mut current,
            out,
            times,
            t,
        ) {
            chosen = rolled;
            chosen_unroll = false;
            // `--emit ir` shows the IR compiled (nothing follows it in the text).
            if opts.emit == Emit::Ir {
                out.text.truncate(ir_mark);
                let _ = writeln!(out.text, "{rolled}");
            }
        }
    }
    // The lowering options of the chosen code.
    let mut chosen_opts = lower_opts;
    // The full address folding (`lower::Fold::Full`) shares one base chain (a register
    // pair) among the accesses of a block and of the blocks it dominates, keeps one sign word
    // per sign-extended index there, and computes address-shaped sums as chains: pairs that
    // live from the first access to the last, across the loop where the accesses sit in one
    // (parboil's `ComputeFH_GPU`: 40 registers, 32 with one chain per access; ptxas 28).
    // Where the kernel spills or its registers cost it warps, compile it once more, with all
    // the retries of `lower_and_allocate`, with one chain per access (`Fold::Lea`), and keep
    // that where it spills less or keeps more warps resident (ties: the shared chains, fewer
    // instructions); the arrays-in-memory fallback below starts from it. Trade-off: one more
    // compile cascade for the kernels whose registers limit them, and where it wins, each
    // access's address recomputed for the warps (rodinia's particlefilter `likelihood_kernel`
    // 48 -> 40 registers).
    // Bounded: kept only where the code grows by at most an eighth (curand's XORWOW
    // `initRNG` reached 32 registers so with 66% more instructions, and its skip-ahead loop
    // 2.6 times the single-warp cycles, which a third more warps does not repay).
    // Chains shared within each block only (`Fold::Block`) are tried first: nothing they
    // share lives beyond its block, and a block's accesses at several displacements of one
    // base (particlefilter's six loads of a coefficient row) keep one chain. Where that
    // leaves the kernel spilling or short of the warps it wants, one chain per access
    // (`Fold::Lea`) is tried as well, kept where it does better still (parboil's
    // `ComputeFH_GPU`). Both are bounded by the instructions of the shared-chain code.
    let insts = |a: &Alloc| a.blocks.iter().map(|b| b.insts.len()).sum::<usize>();
    let full_insts = insts(&current.2);
    let small = |o: &Alloc, c: &Alloc| insts(o) * 8 <= insts(c) * 9;
    let small_vs_full = |o: &Alloc| insts(o) * 8 <= full_insts * 9;
    let better_and_small = |o: &Alloc, c: &Alloc| better(o, c) && small_vs_full(o);
    if lower_opts.fold == lower::Fold::Full && limited(&current.2) {
        for fold in [lower::Fold::Block, lower::Fold::Lea] {
            if fold == lower::Fold::Lea && !limited(&current.2) {
                break;
            }
            let retry = LowerOptions { fold, ..lower_opts };
            if alternative(
                chosen,
                local_data,
                retry,
                &better_and_small,
                &mut current,
                out,
                times,
                t,
            ) {
                chosen_opts = retry;
            }
        }
    }
    // The select chains of the arrays indexed at run time (`ir::unindex`) keep more values
    // live than ptxas's predicated moves (simpleSurface `transformKernel`: 40 registers
    // against 32 with the array in local memory, 48 warps against 64). Where the kernel
    // promoted such an array and its registers cost it warps, compile it once more with the
    // arrays left in local memory and keep that where it keeps more warps resident without
    // spilling more. Trade-off: one more compile, only for those kernels; the report says
    // so (`KernelReport::indexed_locals_in_memory`), for `leafold verify`'s local layout.
    let plain;
    let mut in_memory = false;
    if unindexed && warps(&cx, current.2.num_regs) < wanted_warps(&cx) {
        let mut p = original;
        prepare_kernel_ir_with(module, &mut p, chosen_unroll, false);
        narrow_kernel_ir(module, &mut p);
        plain = p;
        let plain_data = lower::local_size(module, &plain).next_multiple_of(16);
        let fewer_warps_lost = |o: &Alloc, c: &Alloc| {
            o.spill_cost() <= c.spill_cost() && warps(&cx, o.num_regs) > warps(&cx, c.num_regs)
        };
        // With the shared address chains as well as without (parboil's `ComputeFH_GPU`
        // reaches ptxas's step only with both the arrays in memory and no chain shared
        // across blocks).
        let mut tries = vec![chosen_opts];
        for fold in [lower::Fold::Block, lower::Fold::Lea] {
            let earlier = match chosen_opts.fold {
                lower::Fold::Full => true,
                lower::Fold::Block => fold == lower::Fold::Lea,
                _ => false,
            };
            if earlier {
                tries.push(LowerOptions {
                    fold,
                    ..chosen_opts
                });
            }
        }
        for o in tries {
            // The other folding under the same bound as above.
            let prefer =
                |a: &Alloc, c: &Alloc| fewer_warps_lost(a, c) && (o == chosen_opts || small(a, c));
            if alternative(&plain, plain_data, o, &prefer, &mut current, out, times, t) {
                chosen = &plain;
                local_data = plain_data;
                in_memory = true;
                break;
            }
        }
    }
    let (fold, mut constant2, mut alloc, recipe) = current;
    let cx = KernelCtx { f: chosen, ..cx };
    // Emit and lay out an allocation: its frame, the emitted code's parts and the layout.
    let lay_out = |alloc: &Alloc,
                   constant2: &mut Vec<u8>,
                   out: &mut Output,
                   times: &mut PassTimes,
                   t: &mut std::time::Instant|
     -> Result<Laying, Diagnostics> {
        let frame = frame_size(&cx, alloc, local_data);
        let (code, relocs, srclocs, notes, shape, subs) = emit_kernel(&cx, alloc, constant2, out)?;
        times.lap("emit", t);
        let body = body_from_lowered(inject(code, opts.debug_inject), frame, shape.dynamic_stack)
            .map_err(|e| err(format!("internal error in kernel `{name}`: {e}")))?;
        let laid = layout(&body, opts.sched)
            .map_err(|e| err(format!("internal error laying out `{name}`: {e}")))?;
        times.lap("schedule", t);
        Ok(Laying {
            frame,
            relocs,
            srclocs,
            notes,
            shape,
            subs,
            laid,
        })
    };
    let mut laying = lay_out(&alloc, &mut constant2, out, times, t)?;
    // The colouring spreads values over more registers than the fewest it finds, as many as
    // keep the occupancy (`machinst::assign`): each register free longer, fewer orderings
    // for the scheduler. Where that costs registers, allocate the chosen code once more
    // without the spread (`AllocOptions::spread_extra`), lay it out, and keep it where its
    // static issue cycles (`sm50::sched::cost`) are within [`SPREAD_TOLERANCE`] of the
    // spread code's and it has no more instructions, spills and bank conflicts (instructions
    // reading one bank twice, `sm50::banks`): the spread bought nothing
    // there. Where it is slower, once more spreading over half the registers the spread
    // took above the fewest (where that is 4 or more), kept by the same rule. Trade-off: up
    // to two more compiles (lowering, allocation, emission and layout) for the kernels whose
    // spread took registers.
    let spread = alloc.num_regs.saturating_sub(alloc.fewest_regs);
    if spread > 0 {
        let cycles = |l: &Laying| cost::kernel_cycles(&l.laid.code).unwrap_or(u64::MAX);
        let count = |l: &Laying| l.laid.placed.len();
        // (instructions reading one register bank twice: the colouring's bank rule has fewer
        // registers to choose from without the spread, and the cost model does not see banks)
        let conflicts = |l: &Laying| {
            let insts: Vec<_> = l.laid.placed.iter().map(|p| p.inst).collect();
            crate::sm50::banks::count_conflicts(&insts)
        };
        let (spread_cycles, spread_count) = (cycles(&laying), count(&laying));
        let spread_conflicts = conflicts(&laying);
        // (fewer registers for no more spilling than the spread code's)
        let (regs, spill, pred_spills) = (alloc.num_regs, alloc.spill_cost(), alloc.pred_spills);
        let fewer = |a: &Alloc| {
            a.num_regs < regs && a.spill_cost() <= spill && a.pred_spills <= pred_spills
        };
        let extras = [Some(0), (spread >= 4).then_some(spread / 2)];
        for extra in extras.into_iter().flatten() {
            let (text_len, diag_len) = (out.text.len(), out.diagnostics.len());
            let tight = reallocate(&cx, recipe, extra, local_data, out, times, t);
            // (its `--emit vcode`/`--emit alloc` text, kept only where the code is)
            let tight_text = out.text.split_off(text_len);
            let mut kept = false;
            if let Some((_, mut c2, a, _)) = tight.ok().filter(|(_, _, a, _)| fewer(a)) {
                if let Ok(l) = lay_out(&a, &mut c2, out, times, t) {
                    if count(&l) <= spread_count
                        && conflicts(&l) <= spread_conflicts
                        && cycles(&l) as f64 <= spread_cycles as f64 * (1.0 + SPREAD_TOLERANCE)
                    {
                        (alloc, constant2, laying) = (a, c2, l);
                        out.text.truncate(mark);
                        out.text.push_str(&tight_text);
                        kept = true;
                    }
                }
            }
            out.diagnostics.truncate(diag_len);
            if kept {
                break;
            }
        }
    }
    let Laying {
        frame,
        relocs,
        srclocs,
        notes,
        shape,
        subs,
        laid,
    } = laying;
    let dynamic_stack = shape.dynamic_stack;
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
        subs: &subs,
    };
    let k = kernel_spec(&cx, &placed, &alloc, max_regs, launch, constant2, relocs)?;
    kernel_report(
        &cx, &placed, &k, local_data, fold, src_lines, in_memory, out,
    );
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
    /// The subroutines placed after the kernel's code (emitted indices).
    subs: &'a [PlacedSub],
}

impl Placed<'_> {
    /// Each placed subroutine with its `.text` byte range (from its first laid-out
    /// instruction to the next subroutine's, the last to the end of the code, as ptxas's
    /// `$k$fact` symbol spans).
    fn sub_ranges(&self) -> Vec<(&PlacedSub, u64, u64)> {
        let at = |i: usize| {
            self.laid
                .moved
                .get(i + self.shift)
                .and_then(|&m| self.laid.placed.get(m))
                .map_or(u64::MAX, |p| p.addr)
        };
        let starts: Vec<u64> = self
            .subs
            .iter()
            .map(|s| (s.start..s.end).map(at).min().unwrap_or(u64::MAX))
            .collect();
        let text_end = self.laid.code.len() as u64 * 8;
        self.subs
            .iter()
            .zip(&starts)
            .map(|(s, &from)| {
                let to = starts
                    .iter()
                    .copied()
                    .filter(|&x| x > from)
                    .min()
                    .unwrap_or(text_end);
                (s, from, to)
            })
            .collect()
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
    Vec<PlacedSub>,
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
    constant2: &mut Vec<u8>,
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
    let subs = place_subroutines(
        inputs,
        constant2,
        false,
        &mut code,
        &mut srclocs,
        &mut relocs,
    )
    .map_err(|e| err(format!("cannot compile kernel `{name}`: {e}")))?;
    // Fewer same-bank source pairs: a register renaming that keeps every dependency (not
    // across calls of subroutines, whose registers the call ABI fixes).
    if subs.is_none() {
        crate::sm50::banks::avoid_conflicts(&mut code, alloc.num_regs);
    }
    let num_regs = subs
        .as_ref()
        .map_or(alloc.num_regs, |s| s.regs.max(alloc.num_regs));
    // Subroutines kept for their size (`ir::Module::outlined`) do not recurse: the stack
    // stays bounded.
    let recursive = subs.as_ref().is_some_and(|s| {
        s.subs
            .iter()
            .any(|p| !inputs.module.outlined.contains(&p.name))
    });
    if recursive {
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
        recursive,
    };
    let placed = subs.map(|s| s.subs).unwrap_or_default();
    Ok((code, relocs, srclocs, notes, shape, placed))
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
        ..
    } = *placed;
    let Shape {
        num_regs,
        dynamic_stack,
        recursive,
    } = shape;
    let err = |msg: String| cx.err(msg);
    let (params, sampler_params) = handles::kernel_params(module, f);
    let visible = facts.visible(name);
    let mut k = KernelSpec::new(name, laid.code.clone(), num_regs);
    k.visible = visible;
    k.params = params;
    k.sampler_params = sampler_params;
    let shared = module.shared_layout(f);
    k.shared = shared
        .section
        .then_some((u64::from(shared.size), u64::from(shared.align)));
    k.constant2 = (!constant2.is_empty()).then_some(constant2);
    k.frame_size = frame;
    // ptxas 11.8 writes 0xffffffff ("Stack size ... cannot be statically determined") for a
    // kernel with `alloca`: the driver then gives it the default stack size.
    // So does one that recurses. One that calls subroutines kept for their size
    // (`ir::Module::outlined`) gets, as ptxas, the whole stack its calls need: its frame
    // plus the deepest chain of its subroutines' frames (`subroutines::min_stacks`). (The
    // simulator takes FRAME_SIZE as the kernel's frame and puts the subroutines' below it.)
    k.min_stack_size = if dynamic_stack || recursive {
        u32::MAX
    } else {
        let below = placed.subs.iter().filter(|s| s.from_kernel);
        frame.saturating_add(below.map(|s| s.min_stack).max().unwrap_or(0))
    };
    k.max_reg_count = max_regs as u16;
    k.extra_info = launch.records();
    // ptxas 11.8 writes EIATTR_BINDLESS_SURFACE_BANK before EIATTR_BINDLESS_TEXTURE_BANK.
    surface_metadata(module, f, &mut k);
    texture_records(module, f, &mut k);
    // ptxas 11.8 lists the quad emulation's SHFLs after the bindless bank record.
    if !laid.warp_wide_offsets.is_empty() {
        k.extra_info.push(cubin::eiattr::Attribute::Other {
            format: cubin::eiattr::Format::Sval,
            code: cubin::eiattr::code::INT_WARP_WIDE_INSTR_OFFSETS,
            payload: laid
                .warp_wide_offsets
                .iter()
                .flat_map(|a| a.to_le_bytes())
                .collect(),
        });
    }
    // ptxas lists the slot relocations from the highest word down, surfaces (after the
    // textures) first.
    k.const0_relocs.sort_by_key(|r| std::cmp::Reverse(r.offset));
    // ptxas's `$k$fact`: a LOCAL FUNC symbol per subroutine, with its own stack records.
    k.functions = placed
        .sub_ranges()
        .into_iter()
        .map(|(s, from, to)| cubin::FunctionSpec {
            name: format!("${name}${}", s.name),
            offset: from,
            size: to - from,
            bind: 0,
            frame_size: s.frame,
            min_stack_size: if recursive { u32::MAX } else { s.min_stack },
            max_stack_size: 0,
        })
        .collect();
    k.exit_offsets = laid.exit_offsets.clone();
    k.s2r_ctaid_offsets = laid.s2r_ctaid_offsets.clone();
    k.barriers = barrier_count(laid);
    k.istypep_used = module.istypep_used;
    // EIATTR_CRS_STACK_SIZE from the final code (sm50::crs): the driver sizes the
    // per-warp SSY/PBK/CAL/divergence stack by it.
    let insts: Vec<sm50::Inst> = laid.placed.iter().map(|p| p.inst).collect();
    k.crs_stack_size = match sm50::crs::record(&insts, &laid.targets) {
        // Recursion has no bound: ptxas 11.8 writes 0x600 for it (docs/calls.md).
        Err(_) if recursive => Some(RECURSION_CRS_STACK),
        r => r.map_err(|e| err(format!("internal error in kernel `{name}`: {e}")))?,
    };
    code_relocations(module, laid, shift, relocs, &mut k).map_err(err)?;
    // In `.texmode_independent` ptxas reads other tables (`.nv.independent.*DescSize`),
    // which leafold does not model.
    let table = crate::tex_table::TEXREF_DESC_SIZE_SYMBOL;
    if cx.facts.texmode_independent && k.relocs.iter().any(|r| r.symbol == table) {
        return Err(err(format!(
            "unsupported: txq of a descriptor-table attribute in kernel `{name}` under \
             .texmode_independent (ptxas reads the independent texture/sampler tables there)"
        )));
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

/// The code's relocations (emitted instruction `at` is laid-out sequence index `at + shift`)
/// as `k.relocs`, and the bodiless functions it calls as `k.externs`.
fn code_relocations(
    module: &ir::Module,
    laid: &Laid,
    shift: usize,
    relocs: Vec<(usize, lower::Reloc)>,
    k: &mut KernelSpec,
) -> Result<(), String> {
    for (at, r) in relocs {
        let Some(p) = laid.moved.get(at + shift).and_then(|&m| laid.placed.get(m)) else {
            return Err(format!(
                "internal error: relocation past the code of `{}`",
                k.name
            ));
        };
        let symbol = match r.word {
            RelocWord::Call(n) => module.extern_funcs[n as usize].clone(),
            RelocWord::DescLo(n) | RelocWord::DescHi(n) => module.kernel_descs[n as usize].clone(),
            RelocWord::TexDescSize => crate::tex_table::TEXREF_DESC_SIZE_SYMBOL.to_string(),
            RelocWord::SurfDescSize => crate::tex_table::surf::DESC_SIZE_SYMBOL.to_string(),
            RelocWord::SampDescSize => crate::tex_table::samp::DESC_SIZE_SYMBOL.to_string(),
            RelocWord::Shared => object_funcs::shared_symbol(module, r.var),
            _ => module.vars[r.var].name.clone(),
        };
        k.relocs.push(cubin::RelocSpec {
            offset: p.addr,
            symbol,
            rtype: match r.word {
                RelocWord::Lo => R_CUDA_ABS32_LO_20,
                RelocWord::Hi => R_CUDA_ABS32_HI_20,
                RelocWord::Abs32
                | RelocWord::Call(_)
                | RelocWord::TexDescSize
                | RelocWord::SurfDescSize
                | RelocWord::SampDescSize => R_CUDA_ABS32_20,
                RelocWord::Shared => R_CUDA_ABS24_20,
                RelocWord::Zero => return Err("internal error: a relocation of no word".into()),
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
    Ok(())
}

/// Static `.shared` bytes a kernel may use on sm_5x (ptxas: "uses too much shared data").
pub const MAX_SHARED: u32 = 0xc000;

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
            if crate::lower::stats::is_lea(i.form) {
                if let Some(s) = i.get(Field::S) {
                    i.set(Field::S, (s + 1) % 32);
                }
            }
        }
    }
    insts
}

/// The PTX `.target sm_XX` number.
fn ptx_target(ast: &ast::Module) -> Option<u32> {
    ast.targets()
        .iter()
        .find_map(|t| t.strip_prefix("sm_").and_then(|n| n.parse().ok()))
}

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
/// `R_CUDA_ABS24_20`: a `.shared` variable's offset in the shared window into a 24-bit field
/// at bit 20 (ptxas 11.8 under `-c`: the `MOV32I` of a function's `$__buf__N` address, and
/// the offsets of `LDS`/`STS` that name it).
pub const R_CUDA_ABS24_20: u32 = 0x2d;
