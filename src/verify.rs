//! Differential verification: what the PTX means (`ir::eval`) against what our SASS does
//! (`sim` running leafold's cubin), on seeded random inputs, compared byte for byte.
//!
//! In: PTX text, a kernel name and [`VerifyOptions`] (seed, runs, grid, block, buffer size,
//! optionally ptxas's cubin of the same text). Out: a [`Verdict`] per kernel: every run
//! matched, or the first mismatch (which byte, both values, the SASS instruction that last
//! wrote it), or the reason the kernel cannot be run at all.
//!
//! # Inputs
//!
//! * **Shaped by the kernel** ([`inputs`]): before any memory is filled, the IR says which
//!   parameter fields and which words of which buffers hold pointers (and into which
//!   buffer: pointers in parameters, in structs by value, in memory, to structs of
//!   pointers, end pointers compared with pointers) and which hold indices, sizes and loop
//!   bounds (drawn in `1..64`); every other byte is random. `leafold verify
//!   --explain-inputs` prints it. Each object gets its own buffer of `buffer_size` bytes
//!   from where its pointers point (default 64 KiB, retried at 1 MiB when the reference
//!   faults with the default), with a margin of 1/16 of that before
//!   ([`buffer_margin`]), so that a read at index -1 stays inside. In 64-bit modules
//!   buffer k straddles a 4 GB line (`(k + 1) << 32`, skipping the line of the module's
//!   `.global` variables), so that every carry from the low address word into the high one
//!   is exercised; in 32-bit modules buffers sit at `0x1000_0000 · (k + 1)` (below 4 GB,
//!   away from the generic windows).
//! * **Other scalar parameters** get random values below 64 (for every byte count up to 8;
//!   bigger parameters get random bytes).
//! * A module with an `extern .shared` array (size 0) gets 16 KiB of dynamic shared memory.
//! * The block keeps its thread count but becomes 16 × n for a kernel that reads the y
//!   dimension of `%tid`/`%ntid` (4 × 4 × n for z), and a grid of n CTAs is laid along y
//!   (z) for a kernel that reads `%ctaid.y` (`.z`) but not `.x`, unless the caller fixed the
//!   shape ([`launch_block`], [`launch_grid`]).
//! * The launch the kernel is written for ([`shape`]): the block `.reqntid`/`.maxntid`
//!   give is the full launch; otherwise a block bounded by the extents of shared arrays
//!   indexed by `%tid.x`/`%tid.y` (2D when the kernel reads `%tid.y`), or one thread when
//!   no store address depends on the thread or CTA index, is tried when the default launch
//!   is undefined or faults, before smaller launches; a match there counts as verified at
//!   the full launch, and says so (`--summary`: "N at the launch the kernel is written
//!   for"; `--explain-inputs` prints the launch).
//! * The step limit grows with the launch ([`step_limit`]); clocks and the global timer
//!   read a deterministic model on both sides (`ir::eval`'s essay, "Clocks and timers").
//!
//! Run `r` uses the seed `seed + r`; each run is reproducible from its seed alone. When the
//! PTX is undefined on that input, or the reference faults on it at every buffer size, the
//! run takes the next of [`INPUT_TRIES`] seeds (`seed + r + k · 2^20`, reported as the
//! seed of the run); a kernel undefined on all of them goes to smaller launches
//! ([`verify_kernel`]).
//!
//! # Comparison
//!
//! Every byte of every global buffer, of each CTA's shared memory and of each thread's local
//! memory (the part the PTX declares: the simulator's frame also holds spill slots, which the
//! IR knows nothing about). For ptxas's cubin only global memory, and shared memory of
//! kernels with at most one `.shared` variable, are compared (ptxas lays out its own stack,
//! and orders several shared variables its own way without naming them in the cubin; shared
//! memory is no output of a kernel anyway), and the module's `.global` variables by name: ptxas
//! orders them its own way, so each one's bytes are read where ptxas's symbol table puts it. A fault of the simulator on code whose reference run
//! succeeded (out of bounds, wrong `Plg`, branch out of the code, step limit) is a mismatch
//! too; an instruction the simulator does not model makes the kernel "cannot run".
//!
//! A launch on which the reference executes `trap` has no defined memory (the launch is
//! aborted): it matches when the simulator stops at a `BPT.TRAP` too, and is a mismatch when
//! the code runs to the end or faults otherwise; memory is not compared. A failed `assert`
//! (`__assertfail`, [`crate::sysfn`]) is such a trap with a message: it matches when the
//! simulator fails the same assertion (the message compared without its `block:`/`thread:`
//! part: which failing thread stops the launch first depends on the order threads run in).
//!
//! # System calls
//!
//! Kernels that print, allocate or assert run the system-function models on both sides
//! ([`crate::sysfn`]). The `printf` output (`RunOutput::printf`: records sorted by CTA,
//! thread and call, the same text whatever order threads run in) is compared before memory;
//! a difference is a mismatch that names the first differing line and prints both texts. A
//! kernel that calls `malloc` or `free` gets the model heap, a global region compared like
//! the buffers. A device-runtime call (dynamic parallelism) cannot run: exit 2, with the
//! reason.
//!
//! # Where
//!
//! A mismatch names the SASS instruction that last wrote the differing byte (the simulator
//! logs writers) and, for leafold's code, the PTX line that instruction was lowered from
//! (`KernelReport::ptx_line_at`, from the IR's source positions), with the line's text. An
//! instruction no PTX instruction asked for (prologue, allocator move, spill, reload) has no
//! line, and neither has ptxas's code. A reference error ("cannot run") names the IR
//! instruction and its PTX line.

mod launch;
pub use launch::*;
mod compare;
use compare::*;
mod coverage;
pub use coverage::*;
mod run;
use run::*;
use std::fmt::{self, Write as _};

use crate::driver::{compile, Options};
use crate::error::{Diagnostics, SourceFile};
use crate::ir::eval::{self, GlobalRegion, Launch, RunOutput};
use crate::ir::{self, Function, InstData, Space};
use crate::sim::{self, Loc};
use crate::sm50;

pub mod inputs;
pub mod shape;
pub mod surfaces;

/// Default bytes per pointer parameter's buffer.
pub const DEFAULT_BUFFER: u64 = 64 * 1024;
/// Buffer size tried when the reference run faults with [`DEFAULT_BUFFER`].
pub const LARGE_BUFFER: u64 = 1024 * 1024;
/// Seeds tried per run: when the PTX is undefined on a run's input, or the reference faults
/// on it at every buffer size, the run takes the next seed (`RETRY_SEED_STRIDE` on).
pub const INPUT_TRIES: u64 = 4;
/// Distance between the seeds tried for one run (far from the other runs' seeds).
pub const RETRY_SEED_STRIDE: u64 = 1 << 20;
/// Dynamic shared memory given to modules with an `extern .shared` array.
pub const DYNAMIC_SHARED: u32 = 16384;

/// How to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    pub seed: u64,
    pub runs: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes per pointer parameter's buffer (`None`: 64 KiB, then 1 MiB).
    pub buffer_size: Option<u64>,
    /// Options for leafold's compile.
    pub compile: Options,
    /// ptxas's cubin of the same PTX: also run it through the simulator against the reference.
    pub ptxas_cubin: Option<Vec<u8>>,
    /// Simulate only ptxas's cubin (validating the simulator even where leafold's code
    /// mismatches).
    pub only_ptxas: bool,
    /// Reshape `block` (same thread count) for kernels that read `%tid.y`/`%tid.z`: see
    /// [`launch_block`]. Off when the user gave the block shape.
    pub shape_block: bool,
    /// After each matching run, run the code again tracing its dependences and check that
    /// every instruction the run shows flowing into a memory address is in the static
    /// address slice ([`crate::sm50::slice`]) that `leafold compare` counts; a miss is a
    /// mismatch. Slow (a trace of every lane's every instruction).
    pub check_slice: bool,
    /// How size parameters are drawn ([`Sizes`]; `verify_kernel` tries both on the full
    /// launch).
    pub sizes: Sizes,
    /// Descriptions of the textures kernels read, by `.texref` or texture-object parameter
    /// name (`leafold verify --texture NAME=SPEC`, [`crate::texture::spec`]); a texture not
    /// described gets [`crate::texture::spec::default_desc`] (see
    /// [`crate::texture::launch::bind_for_launch`]).
    pub textures: Vec<(String, crate::texture::TextureDesc)>,
    /// Every surface's bytes per row, rows, slices and layers (`--surface`; `None`:
    /// [`surfaces::DEFAULT_SURFACE`]).
    pub surface: Option<[u32; 4]>,
    /// Also attribute the first run's cycles to the instructions (`sim::run_profiled`, for
    /// `leafold compare --profile`; [`Verdict::profile`]).
    pub profile: bool,
    /// Every surface's element format (`--surface ...:FORMAT`; what `sust.p` converts to,
    /// [`crate::surface::SurfFormat::RAW`] unless given).
    pub surface_format: crate::surface::SurfFormat,
    /// leafold's compile kept the kernel's `.local` arrays indexed at run time in local
    /// memory ([`crate::driver::KernelReport::indexed_locals_in_memory`]; [`verify_file`] sets
    /// it from the report): [`compare::kept_locals`] lays out local memory so.
    pub indexed_locals_in_memory: bool,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            seed: 1,
            runs: 3,
            grid: [2, 1, 1],
            block: [64, 1, 1],
            buffer_size: None,
            compile: Options::default(),
            ptxas_cubin: None,
            only_ptxas: false,
            shape_block: true,
            check_slice: false,
            sizes: Sizes::Small,
            textures: Vec::new(),
            surface: None,
            profile: false,
            surface_format: crate::surface::SurfFormat::RAW,
            indexed_locals_in_memory: false,
        }
    }
}

/// Whose code ran in the simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Leafold,
    Ptxas,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Leafold => "leafold",
            Side::Ptxas => "ptxas",
        })
    }
}

/// The first difference between the reference and the simulator.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub side: Side,
    /// The seed of the failing run.
    pub seed: u64,
    /// A summary of the launch (grid, block, parameters, buffers).
    pub inputs: String,
    /// What went wrong: the first differing byte, or the simulator's fault.
    pub what: String,
    /// The SASS instruction (`.text` offset and text) that last wrote the byte, if known.
    pub writer: Option<(u64, String)>,
    /// The PTX line (1-based) and its text that the writer was lowered from: leafold's code
    /// only, and only for instructions some PTX instruction asked for.
    pub ptx_line: Option<(u32, String)>,
}

/// The outcome for one kernel.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Every run matched on every byte; `ptxas` says whether ptxas's code was checked too;
    /// `one_thread` gives the reason when the runs had a smaller launch than the one asked
    /// for (see [`verify_kernel`]; the name is historical: one thread per CTA was the only
    /// smaller launch once); `one_cta` says they had one CTA only; `launch` is the grid and
    /// block the runs had.
    Match {
        runs: u32,
        ptxas: bool,
        one_thread: Option<String>,
        one_cta: bool,
        launch: [[u32; 3]; 2],
    },
    Mismatch(Box<Mismatch>),
    /// The kernel cannot be run (the reason names the construct or the fault).
    CannotRun(String),
}

/// The verdict for one kernel.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub kernel: String,
    pub outcome: Outcome,
    /// Warp-instructions the simulator executed for leafold's code, over all runs.
    pub sim_steps: u64,
    /// Seconds the simulator took for them.
    pub sim_seconds: f64,
    /// The first run's cost (executed warp-instructions and issue cycles, `sim::run_timed`)
    /// for leafold's code and for ptxas's, when it ran and matched: both on the same launch,
    /// for `leafold compare`'s dynamic columns.
    pub timing: [Option<sim::Timing>; 2],
    /// When the runs had the launch the kernel is written for rather than the default one
    /// ([`shape`]): the rule that chose it. Such a match counts as verified at the full
    /// launch.
    pub launch_from_kernel: Option<String>,
    /// With [`VerifyOptions::profile`], the first run's cycles per instruction, for the same
    /// two sides as `timing`.
    pub profile: [Option<sim::Profile>; 2],
}

impl Verdict {
    /// 0 when everything matched, 1 on a mismatch, 2 when the kernel cannot be run.
    pub fn exit_code(&self) -> u8 {
        match self.outcome {
            Outcome::Match { .. } => 0,
            Outcome::Mismatch(_) => 1,
            Outcome::CannotRun(_) => 2,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = &self.kernel;
        match &self.outcome {
            Outcome::Match {
                runs,
                ptxas,
                one_thread,
                one_cta,
                launch: [grid, block],
            } => {
                let p = if *ptxas { " (leafold and ptxas)" } else { "" };
                write!(f, "{k}: OK, {runs} runs match{p}")?;
                let shape = match (*one_cta, block == &[1, 1, 1]) {
                    (true, true) => "one thread in one CTA".to_string(),
                    (false, true) => "one thread per CTA".to_string(),
                    (true, false) => format!("one CTA of {block:?} threads"),
                    (false, false) => format!("grid {grid:?} and block {block:?}"),
                };
                if let Some(rule) = &self.launch_from_kernel {
                    write!(
                        f,
                        ", at the launch the kernel is written for (grid {grid:?}, {rule})"
                    )?;
                }
                match one_thread {
                    Some(why) => write!(
                        f,
                        ", with {shape}, because with the full \
                         block: {why}"
                    ),
                    None => Ok(()),
                }
            }
            Outcome::CannotRun(why) => write!(f, "{k}: cannot run: {why}"),
            Outcome::Mismatch(m) => {
                writeln!(f, "{k}: MISMATCH ({} code, seed {})", m.side, m.seed)?;
                writeln!(f, "  inputs: {}", m.inputs)?;
                writeln!(f, "  {}", m.what)?;
                match &m.writer {
                    Some((pc, text)) => writeln!(f, "  written by /*{pc:04x}*/ {text}")?,
                    None => writeln!(f, "  no instruction of the simulated code wrote it")?,
                }
                match (&m.ptx_line, m.side, &m.writer) {
                    (Some((n, text)), _, _) => write!(f, "  PTX line {n}: {}", text.trim()),
                    (None, _, None) => write!(f, "  PTX line: none (no writer)"),
                    (None, Side::Ptxas, _) => write!(f, "  PTX line: not known for ptxas's code"),
                    (None, Side::Leafold, _) => write!(
                        f,
                        "  PTX line: none (no PTX instruction asked for the writer: prologue, \
                         register move, spill or reload)"
                    ),
                }
            }
        }
    }
}

/// Verify every kernel of `ptx` (or only `kernel`, compiled on its own as with `-e`, so that
/// what other kernels use does not matter). Errors: the PTX does not compile, or no kernel
/// has that name. When the whole module does not compile but some of its kernels do on
/// their own, those are verified and the others are [`Outcome::CannotRun`]
/// ([`verify_kernels_apart`]).
pub fn verify_file(
    ptx: &str,
    kernel: Option<&str>,
    opts: &VerifyOptions,
) -> Result<Vec<Verdict>, Diagnostics> {
    let mut copts = opts.compile.clone();
    if let Some(k) = kernel {
        if copts.entries.is_empty() {
            copts.entries = vec![k.to_string()];
        }
    }
    let out = match compile(ptx, &copts) {
        Ok(out) => out,
        Err(d) if copts.entries.is_empty() => return verify_kernels_apart(ptx, opts, d),
        Err(d) => return Err(d),
    };
    let file = SourceFile::new(opts.compile.file_name.clone(), ptx);
    let (ast, _) = crate::ptx::parse_and_check(&file)?;
    // Built as the compiler built it: the same `--fmad` contractions (a choice PTX leaves to
    // the compiler) in the reference.
    let bopts = ir::build::BuildOptions {
        fmad: copts.fmad,
        any_extern: copts.relocatable,
    };
    let module = if copts.entries.is_empty() {
        ir::build::build_with(&ast, &file, &bopts).map_err(Diagnostics)?
    } else {
        // The compile succeeded, so the requested kernels built.
        ir::build::build_partial_with(&ast, &file, &bopts).module
    };
    let addr32 = ast.address_size() == 32;
    let mut v = Vec::new();
    for f in &module.functions {
        if kernel.is_some_and(|k| k != f.name) {
            continue;
        }
        let report = out.kernels.iter().find(|k| k.name == f.name);
        let directive = ast
            .functions()
            .find(|a| *a.name.text == *f.name)
            .and_then(|a| shape::directive(&a.perf));
        let fallback;
        let kopts = if report.is_some_and(|r| r.indexed_locals_in_memory) {
            fallback = VerifyOptions {
                indexed_locals_in_memory: true,
                ..opts.clone()
            };
            &fallback
        } else {
            opts
        };
        let mut verdict = verify_kernel_with(&module, f, addr32, &out.cubin, kopts, directive);
        if let Outcome::Mismatch(m) = &mut verdict.outcome {
            if let (Side::Leafold, Some((pc, _)), Some(r)) = (m.side, &m.writer, report) {
                m.ptx_line = r
                    .ptx_line_at(*pc)
                    .map(|n| (n, file.line_text(n as usize).trim().to_string()));
            }
        }
        v.push(verdict);
    }
    if v.is_empty() {
        let name = kernel.unwrap_or("");
        return Err(Diagnostics(vec![crate::Diagnostic::error(
            &file,
            crate::Span::new(0, 0),
            format!("no kernel named `{name}`"),
        )]));
    }
    Ok(v)
}

/// The kernels of a module that does not compile as a whole (`whole`: its errors), each
/// verified on its own (as `-e k` compiles it): a kernel that calls the device runtime
/// (`cudaLaunchDeviceV2`, which only `-c` leaves to the linker) or uses some other unsupported
/// construct no longer keeps its module's other kernels from being verified; it is
/// [`Outcome::CannotRun`] with its first error. `Err(whole)` when no kernel compiles.
fn verify_kernels_apart(
    ptx: &str,
    opts: &VerifyOptions,
    whole: Diagnostics,
) -> Result<Vec<Verdict>, Diagnostics> {
    let file = SourceFile::new(opts.compile.file_name.clone(), ptx);
    let Ok((ast, _)) = crate::ptx::parse_and_check(&file) else {
        return Err(whole);
    };
    let mut v = Vec::new();
    let mut compiled = false;
    for f in ast.functions() {
        if f.kind != crate::ptx::ast::FuncKind::Entry || f.body.is_none() {
            continue;
        }
        let name = f.name.text.to_string();
        match verify_file(ptx, Some(&name), opts) {
            Ok(vs) => {
                compiled = true;
                v.extend(vs);
            }
            Err(d) => {
                let why =
                    d.0.iter()
                        .find(|e| e.severity == crate::error::Severity::Error);
                let why = why.map_or(String::from("?"), |e| {
                    let (line, col) = e.location();
                    format!("{line}:{col}: {}", e.message)
                });
                v.push(Verdict {
                    kernel: name,
                    outcome: Outcome::CannotRun(format!("{NOT_COMPILED}: {why}")),
                    sim_steps: 0,
                    sim_seconds: 0.0,
                    timing: [None, None],
                    launch_from_kernel: None,
                    profile: [None, None],
                });
            }
        }
    }
    if compiled {
        Ok(v)
    } else {
        Err(whole)
    }
}

/// The start of the reason of a kernel that does not compile on its own
/// ([`verify_kernels_apart`]).
pub const NOT_COMPILED: &str = "it does not compile on its own";

/// What [`inputs::infer`] finds for every kernel of `ptx` (or only `kernel`): the kernel's
/// name and its plan, for `leafold verify --explain-inputs`. Errors: the PTX does not parse
/// or build.
pub fn explain_inputs(
    ptx: &str,
    kernel: Option<&str>,
    opts: &VerifyOptions,
) -> Result<Vec<(String, inputs::Plan)>, Diagnostics> {
    let file = SourceFile::new(opts.compile.file_name.clone(), ptx);
    let (ast, _) = crate::ptx::parse_and_check(&file)?;
    let module = ir::build::build_partial(&ast, &file).module;
    let addr32 = ast.address_size() == 32;
    Ok(module
        .functions
        .iter()
        .filter(|f| kernel.map_or(true, |k| k == f.name))
        .map(|f| (f.name.clone(), inputs::infer(f, addr32)))
        .collect())
}

/// The launch each kernel of `ptx` (or only `kernel`) is written for ([`shape::infer`]), as
/// one line for `leafold verify --explain-inputs`: the rule, grid and block, and whether it
/// is the full launch (a directive) or tried when the default one is undefined (inferred).
/// Errors: the PTX does not parse or build.
pub fn explain_launches(
    ptx: &str,
    kernel: Option<&str>,
    opts: &VerifyOptions,
) -> Result<Vec<(String, String)>, Diagnostics> {
    let file = SourceFile::new(opts.compile.file_name.clone(), ptx);
    let (ast, _) = crate::ptx::parse_and_check(&file)?;
    let module = ir::build::build_partial(&ast, &file).module;
    Ok(module
        .functions
        .iter()
        .filter(|f| kernel.map_or(true, |k| k == f.name))
        .map(|f| {
            let directive = ast
                .functions()
                .find(|a| *a.name.text == *f.name)
                .and_then(|a| shape::directive(&a.perf));
            let (grid, block) = (launch_grid(f, opts), launch_block(f, opts));
            let line = match shape::infer(&module, f, directive, grid, block) {
                _ if !opts.shape_block => format!("grid {grid:?}, block {block:?} (as given)"),
                None => format!("grid {grid:?}, block {block:?} (default; no rule applies)"),
                Some(k) if directive.is_some() => {
                    format!("grid {:?}, {} (the full launch)", k.grid, k.why)
                }
                Some(k) => format!(
                    "grid {grid:?}, block {block:?} (default); when undefined there: grid {:?}, \
                     {}",
                    k.grid, k.why
                ),
            };
            (f.name.clone(), line)
        })
        .collect())
}

/// How a "cannot run" reason starts when the PTX is undefined on the launch.
const UNDEFINED: &str = "the PTX is undefined";

/// Verify kernel `f` of `module` (compiled into `cubin`, `addr32` for `.address_size 32`).
///
/// When the reference finds the PTX undefined on the launch (a race between threads, a
/// barrier in divergent code), or faults, or runs out of steps, the runs are done again with
/// the size parameters drawn at least as big as the launch ([`Sizes::Launch`]: kernels
/// written for an array of one element per thread race when the size is smaller), then on
/// smaller launches, in order, until one is defined: one CTA with the full block (a race on
/// global memory between CTAs cannot happen there), one thread per CTA (neither a barrier
/// nor a race inside a CTA can happen), one thread in one CTA. If a smaller launch matches,
/// the verdict is a match that says which and why the bigger ones could not run (many small
/// test kernels are written for one thread, and every thread of them stores to the same
/// place).
pub fn verify_kernel(
    module: &ir::Module,
    f: &Function,
    addr32: bool,
    cubin: &[u8],
    opts: &VerifyOptions,
) -> Verdict {
    verify_kernel_with(module, f, addr32, cubin, opts, None)
}

/// [`verify_kernel`] with the kernel's `.reqntid`/`.maxntid` block ([`shape::directive`]).
/// Unless the caller fixed the block (`shape_block` off), the launch the kernel is written
/// for ([`shape::infer`]) is the full launch where a directive gives it, and is tried after
/// the default launch (and before smaller ones) where it is inferred; a match on it counts
/// as full, with the rule in [`Verdict::launch_from_kernel`].
pub fn verify_kernel_with(
    module: &ir::Module,
    f: &Function,
    addr32: bool,
    cubin: &[u8],
    opts: &VerifyOptions,
    directive: Option<([u32; 3], bool)>,
) -> Verdict {
    let derived = opts
        .shape_block
        .then(|| {
            let (grid, block) = (launch_grid(f, opts), launch_block(f, opts));
            shape::infer(module, f, directive, grid, block)
        })
        .flatten();
    match derived {
        Some(k) if directive.is_some() => {
            let o = kernel_launch_options(&k, opts);
            let mut v = reduce_on_failure(module, f, addr32, cubin, &o, None);
            if matches!(
                v.outcome,
                Outcome::Match {
                    one_thread: None,
                    ..
                }
            ) {
                v.launch_from_kernel = Some(k.why);
            }
            v
        }
        k => reduce_on_failure(module, f, addr32, cubin, opts, k.as_ref()),
    }
}

/// `opts` on the launch `k` gives, unshaped.
fn kernel_launch_options(k: &shape::KernelLaunch, opts: &VerifyOptions) -> VerifyOptions {
    VerifyOptions {
        grid: k.grid,
        block: k.block,
        shape_block: false,
        ..opts.clone()
    }
}

/// The body of [`verify_kernel`]: the launch `opts` describes, then (when it is undefined,
/// faults or runs out of steps) sizes as big as the launch, the launch `derived` from the
/// kernel, and smaller launches.
fn reduce_on_failure(
    module: &ir::Module,
    f: &Function,
    addr32: bool,
    cubin: &[u8],
    opts: &VerifyOptions,
    derived: Option<&shape::KernelLaunch>,
) -> Verdict {
    let full = verify_launch(module, f, addr32, cubin, opts);
    let Outcome::CannotRun(why) = &full.outcome else {
        return full;
    };
    let block = launch_block(f, opts);
    let threads = block.iter().product::<u32>();
    let ctas = opts.grid.iter().product::<u32>();
    let reducible = why.starts_with(UNDEFINED)
        || reason_class(why) == "faults on random inputs"
        || reason_class(why) == "step limit";
    if !reducible {
        return full;
    }
    let mut why = why.clone();
    let (mut steps, mut seconds) = (full.sim_steps, full.sim_seconds);
    // The same launch with sizes as big as the launch, when there are size parameters.
    let plan = inputs::infer(f, addr32);
    let has_sizes = plan
        .params
        .iter()
        .any(|p| matches!(p.kind, inputs::Kind::Small));
    if has_sizes && opts.sizes == Sizes::Small {
        let o = VerifyOptions {
            sizes: Sizes::Launch,
            ..opts.clone()
        };
        let mut v = verify_launch(module, f, addr32, cubin, &o);
        add_cost(&mut v, &mut steps, &mut seconds);
        match &v.outcome {
            Outcome::Match { .. } | Outcome::Mismatch(_) => return v,
            Outcome::CannotRun(w) => {
                write!(why, "; with sizes as big as the launch: {w}").ok();
            }
        }
    }
    // The launch the kernel is written for, with small sizes, then (when there are size
    // parameters) with sizes as big as that launch.
    let size_kinds: &[Sizes] = if has_sizes && opts.sizes == Sizes::Small {
        &[Sizes::Small, Sizes::Launch]
    } else {
        &[opts.sizes]
    };
    for (k, &sizes) in derived
        .iter()
        .flat_map(|k| size_kinds.iter().map(move |s| (k, s)))
    {
        let o = VerifyOptions {
            sizes,
            ..kernel_launch_options(k, opts)
        };
        let mut v = verify_launch(module, f, addr32, cubin, &o);
        add_cost(&mut v, &mut steps, &mut seconds);
        match &mut v.outcome {
            // A launch that leaves code unrun counts as reduced (`shape::KernelLaunch::full`).
            Outcome::Match { one_thread, .. } if !k.full => {
                *one_thread = Some(format!("{why}; the launch from the kernel ({})", k.why));
                return v;
            }
            Outcome::Match { .. } => {
                v.launch_from_kernel = Some(k.why.clone());
                return v;
            }
            Outcome::Mismatch(_) => return v,
            Outcome::CannotRun(w) => {
                write!(
                    why,
                    "; at the launch from the kernel ({}, {sizes:?} sizes): {w}",
                    k.why
                )
                .ok();
            }
        }
    }
    if threads * ctas == 1 {
        return Verdict {
            sim_steps: steps,
            sim_seconds: seconds,
            ..full
        };
    }
    let mut smaller: Vec<([u32; 3], [u32; 3])> = Vec::new();
    if ctas > 1 && threads > 1 {
        smaller.push(([1, 1, 1], block));
    }
    if threads > 1 {
        smaller.push((launch_grid(f, opts), [1, 1, 1]));
    }
    if ctas > 1 {
        smaller.push(([1, 1, 1], [1, 1, 1]));
    }
    for (grid, block) in smaller {
        let o = VerifyOptions {
            grid,
            block,
            shape_block: false,
            ..opts.clone()
        };
        let mut v = verify_launch(module, f, addr32, cubin, &o);
        add_cost(&mut v, &mut steps, &mut seconds);
        match &mut v.outcome {
            Outcome::Match {
                one_thread,
                one_cta,
                ..
            } => {
                *one_thread = Some(why);
                *one_cta = grid == [1, 1, 1];
                return v;
            }
            // A mismatch on the smaller launch is a finding.
            Outcome::Mismatch(_) => return v,
            // Still not runnable for a reason a smaller launch may avoid: try the next one.
            Outcome::CannotRun(w)
                if w.starts_with(UNDEFINED)
                    || reason_class(w) == "faults on random inputs"
                    || reason_class(w) == "step limit" =>
            {
                write!(why, "; with grid {grid:?} and block {block:?}: {w}").ok();
            }
            // Anything else keeps the first reason.
            Outcome::CannotRun(_) => break,
        }
    }
    Verdict {
        sim_steps: steps,
        sim_seconds: seconds,
        ..full
    }
}

/// Adds a fallback run's simulator cost to the totals so far, and makes them its own.
fn add_cost(v: &mut Verdict, steps: &mut u64, seconds: &mut f64) {
    *steps += v.sim_steps;
    *seconds += v.sim_seconds;
    v.sim_steps = *steps;
    v.sim_seconds = *seconds;
}

/// [`verify_kernel`] on the launch `opts` describes, in named steps: load both cubins
/// ([`load_sides`]), and for each run find an input the reference runs on
/// ([`reference_run`]) and compare each side's simulated run with it
/// ([`Compare::side`]). The first step that cannot go on gives the verdict.
fn verify_launch(
    module: &ir::Module,
    f: &Function,
    addr32: bool,
    cubin: &[u8],
    opts: &VerifyOptions,
) -> Verdict {
    let mut verdict = Verdict {
        kernel: f.name.clone(),
        outcome: Outcome::CannotRun(String::new()),
        sim_steps: 0,
        sim_seconds: 0.0,
        timing: [None, None],
        launch_from_kernel: None,
        profile: [None, None],
    };
    let globals = eval::module_global_base(module);
    let (ours, theirs) = match load_sides(cubin, opts, &f.name, globals) {
        Ok(sides) => sides,
        Err(why) => {
            verdict.outcome = Outcome::CannotRun(why);
            return verdict;
        }
    };
    let plan = inputs::infer(f, addr32);
    let local_map = compared_locals(
        module,
        f,
        opts.compile.unroll_runtime,
        !opts.indexed_locals_in_memory,
    );
    let cmp = Compare {
        module,
        f,
        plan: &plan,
        cubin,
        opts,
        globals,
        local_map: local_map.as_deref(),
    };
    for r in 0..opts.runs {
        let run = match reference_run(module, f, &plan, opts.seed.wrapping_add(u64::from(r)), opts)
        {
            Ok(run) => run,
            Err(why) => {
                verdict.outcome = Outcome::CannotRun(why);
                return verdict;
            }
        };
        let sides = std::iter::once((Side::Leafold, &ours))
            .filter(|_| !opts.only_ptxas)
            .chain(theirs.as_ref().map(|t| (Side::Ptxas, t)));
        for (side, kernel) in sides {
            if let Err(outcome) = cmp.side(side, kernel, r, &run, &mut verdict) {
                verdict.outcome = outcome;
                return verdict;
            }
        }
    }
    verdict.outcome = Outcome::Match {
        runs: opts.runs,
        ptxas: theirs.is_some(),
        one_thread: None,
        one_cta: false,
        launch: [launch_grid(f, opts), launch_block(f, opts)],
    };
    verdict
}

/// At most the first 40 lines of a printf output, indented, for a mismatch report.
fn printf_excerpt(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().take(40).map(|l| format!("    {l}")).collect();
    if lines.len() > 40 {
        out.push(format!("    ... ({} more lines)", lines.len() - 40));
    }
    out.join("\n")
}

/// Why [`check_slice`] failed.
enum SliceCheck {
    /// The static slice misses an instruction the run shows reaching an address.
    Missed(String),
    /// The run cannot be traced (too long, or it fails when traced).
    Untraceable(String),
}

/// Check the static address slice of `code` against a traced run on `launch`: every
/// instruction whose result the run shows reaching a memory address must be in it.
fn check_slice(code: &[u64], info: &sim::KernelInfo, launch: &Launch) -> Result<(), SliceCheck> {
    let (insts, _, targets) = crate::sm50::sched::check::decode_text(code)
        .map_err(|e| SliceCheck::Untraceable(format!("the code does not decode: {e}")))?;
    let in_slice = crate::sm50::slice::address_slice(&insts, &targets);
    let (_, deps) = sim::run_dependences(code, info, launch)
        .map_err(|e| SliceCheck::Untraceable(format!("the traced run failed: {e}")))?;
    if deps.truncated {
        return Err(SliceCheck::Untraceable(format!(
            "the run is longer than {} lane-instructions, too long to trace for the slice check",
            sim::MAX_TRACE
        )));
    }
    // The simulator's trace holds instruction addresses only (never a control word's).
    let index = crate::sm50::ctrl::inst_index;
    let stops = |addr: u64| {
        index(addr)
            .and_then(|k| insts.get(k))
            .is_some_and(crate::sm50::slice::is_source)
    };
    let dynamic = deps.slice(stops);
    for addr in dynamic {
        let k = index(addr);
        if !k.is_some_and(|k| in_slice.get(k) == Some(&true)) {
            return Err(SliceCheck::Missed(format!(
                "the run shows 0x{addr:04x} ({}) reaching a memory address, but the static address slice misses it",
                sass_at(code, addr)
            )));
        }
    }
    Ok(())
}

/// ptxas orders the module's `.global` variables its own way; leafold's cubin places them
/// where the reference does. Move each variable's bytes in `got` (a run of ptxas's cubin
/// `theirs`) to its address in `ours`, so the module region compares variable by variable.
/// Bytes outside every variable of `ours` (padding), and variables ptxas dropped (unused),
/// take the reference's bytes.
fn relayout_module_globals(
    got: &mut RunOutput,
    reference: &RunOutput,
    ours: &[u8],
    theirs: &[u8],
    base: u64,
) {
    let (Ok(ours), Ok(theirs)) = (
        sim::global_symbols(ours, base),
        sim::global_symbols(theirs, base),
    ) else {
        return;
    };
    let (Some(want), Some(region)) = (
        reference.global.iter().find(|r| r.base == base),
        got.global.iter_mut().find(|r| r.base == base),
    ) else {
        return;
    };
    let mut bytes = want.bytes.clone();
    for (name, at, size) in &ours {
        let Some((_, from, _)) = theirs.iter().find(|t| &t.0 == name) else {
            continue;
        };
        let (to, from) = ((at - base) as usize, (from - base) as usize);
        let n = (*size as usize)
            .min(bytes.len().saturating_sub(to))
            .min(region.bytes.len().saturating_sub(from));
        bytes[to..to + n].copy_from_slice(&region.bytes[from..from + n]);
    }
    region.bytes = bytes;
}

/// The instruction address a simulator error names.
fn fault_addr(e: &sim::SimError) -> Option<u64> {
    use sim::SimError::*;
    match e {
        Decode { addr, .. }
        | Unsupported { addr, .. }
        | BadPc { addr, .. }
        | OutOfBounds { addr, .. }
        | Unmapped { addr, .. }
        | Misaligned { addr, .. }
        | PlgMismatch { addr, .. }
        | Divergence { addr, .. }
        | StepLimit { addr, .. }
        | Trap { addr }
        | AssertFailed { addr, .. }
        | SystemCall { addr, .. } => Some(*addr),
        BadLaunch(_) | BadCubin(_) => None,
    }
}

/// The SASS text of the instruction at `.text` offset `pc`.
pub fn sass_at(code: &[u64], pc: u64) -> String {
    match code.get((pc / 8) as usize).map(|&w| sm50::decode(w)) {
        Some(Ok(i)) => sm50::print(&i, pc, 0),
        Some(Err(_)) => format!("(word {:#018x} does not decode)", code[(pc / 8) as usize]),
        None => "(outside the code)".to_string(),
    }
}

/// A small deterministic generator (SplitMix64): no dependency, and a run is reproducible
/// from its seed alone.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn fill(&mut self, bytes: &mut [u8]) {
        for c in bytes.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// The step limit of a launch: [`eval::DEFAULT_STEP_LIMIT`] for up to 128 threads (the
/// default launch), growing with the thread count beyond (a budget of instructions per
/// thread), so that a kernel's legitimate work on a bigger launch is not cut short.
pub fn step_limit(grid: [u32; 3], block: [u32; 3]) -> u64 {
    let threads: u64 = grid.iter().chain(&block).map(|&d| u64::from(d)).product();
    let per_thread = eval::DEFAULT_STEP_LIMIT / 128;
    (per_thread * threads).max(eval::DEFAULT_STEP_LIMIT)
}

/// One line describing a launch's inputs.
fn summary(launch: &Launch, f: &Function, plan: &inputs::Plan) -> String {
    let mut s = format!("grid {:?}, block {:?}; params:", launch.grid, launch.block);
    let pointers = plan.pointer_param_offsets();
    for p in &f.params {
        let at = p.offset as usize;
        let bytes = &launch.params[at..at + p.size as usize];
        let mut v = [0u8; 8];
        let n = bytes.len().min(8);
        v[..n].copy_from_slice(&bytes[..n]);
        let v = u64::from_le_bytes(v);
        let kind = if pointers.contains(&p.offset) {
            "pointer"
        } else {
            "scalar"
        };
        let _ = write!(s, " {}={v:#x} ({kind})", p.name);
    }
    let _ = write!(
        s,
        "; {} buffers of {} bytes shaped by the kernel (see --explain-inputs)",
        launch.global.len(),
        launch.global.first().map_or(0, |r| r.bytes.len())
    );
    s
}
