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
//! * **Pointer parameters** are found by data flow ([`pointer_params`]): a parameter whose
//!   loaded value reaches the address of a global or generic load, store or atomic through
//!   `add`, `sub`, `select`, `cvta` and block arguments (not through `mul`, `shl` or
//!   conversions, which make indices), with the address's width. Each gets its own buffer of random bytes
//!   (`buffer_size`, default 64 KiB, retried at 1 MiB when the reference faults with the
//!   default). In 64-bit modules buffer k straddles the 4 GB line `(k + 1) << 32`, so that
//!   every carry from the low address word into the high one is exercised; in 32-bit modules
//!   buffers sit at `0x1000_0000 · (k + 1)` (below 4 GB, away from the generic windows).
//! * **Scalar parameters** get random values below 64 (for every byte count up to 8; bigger
//!   parameters get random bytes), so that values used as sizes or indices stay inside the
//!   buffers more often than not.
//! * A module with an `extern .shared` array (size 0) gets 4 KiB of dynamic shared memory.
//! * The block keeps its thread count but becomes 16 × n for a kernel that reads the y
//!   dimension of `%tid`/`%ntid` (4 × 4 × n for z), unless the caller fixed the shape
//!   ([`launch_block`]).
//!
//! Run `r` uses the seed `seed + r`; each run is reproducible from its seed alone.
//!
//! # Comparison
//!
//! Every byte of every global buffer, of each CTA's shared memory and of each thread's local
//! memory (the part the PTX declares: the simulator's frame also holds spill slots, which the
//! IR knows nothing about). For ptxas's cubin only global and shared memory are compared
//! (ptxas lays out its own stack), and the module's `.global` variables by name: ptxas
//! orders them its own way, so each one's bytes are read where ptxas's symbol table puts it. A fault of the simulator on code whose reference run
//! succeeded (out of bounds, wrong `Plg`, branch out of the code, step limit) is a mismatch
//! too; an instruction the simulator does not model makes the kernel "cannot run".
//!
//! A launch on which the reference executes `trap` has no defined memory (the launch is
//! aborted): it matches when the simulator stops at a `BPT.TRAP` too, and is a mismatch when
//! the code runs to the end or faults otherwise; memory is not compared.
//!
//! # Where
//!
//! A mismatch names the SASS instruction that last wrote the differing byte (the simulator
//! logs writers) and, for leafold's code, the PTX line that instruction was lowered from
//! (`KernelReport::ptx_line_at`, from the IR's source positions), with the line's text. An
//! instruction no PTX instruction asked for (prologue, allocator move, spill, reload) has no
//! line, and neither has ptxas's code. A reference error ("cannot run") names the IR
//! instruction and its PTX line.

use std::fmt::{self, Write as _};

use crate::driver::{compile, Options};
use crate::error::{Diagnostics, SourceFile};
use crate::ir::eval::{self, GlobalRegion, Launch, RunOutput};
use crate::ir::{self, Function, InstData, Space, Value, ValueDef};
use crate::sim::{self, Loc};
use crate::sm50;

/// Default bytes per pointer parameter's buffer.
pub const DEFAULT_BUFFER: u64 = 64 * 1024;
/// Buffer size tried when the reference run faults with [`DEFAULT_BUFFER`].
pub const LARGE_BUFFER: u64 = 1024 * 1024;
/// Dynamic shared memory given to modules with an `extern .shared` array.
pub const DYNAMIC_SHARED: u32 = 4096;

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
    /// `one_thread` gives the reason when the runs had one thread per CTA (see
    /// [`verify_kernel`]); `one_cta` says they also had one CTA only.
    Match {
        runs: u32,
        ptxas: bool,
        one_thread: Option<String>,
        one_cta: bool,
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
            } => {
                let p = if *ptxas { " (leafold and ptxas)" } else { "" };
                write!(f, "{k}: OK, {runs} runs match{p}")?;
                let shape = if *one_cta {
                    "one thread in one CTA"
                } else {
                    "one thread per CTA"
                };
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
/// has that name.
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
    let out = compile(ptx, &copts)?;
    let file = SourceFile::new(opts.compile.file_name.clone(), ptx);
    let (ast, _) = crate::ptx::parse_and_check(&file)?;
    let module = if copts.entries.is_empty() {
        ir::build(&ast, &file).map_err(Diagnostics)?
    } else {
        // The compile succeeded, so the requested kernels built.
        ir::build::build_partial(&ast, &file).module
    };
    let addr32 = ast.address_size() == 32;
    let mut v = Vec::new();
    for f in &module.functions {
        if kernel.is_some_and(|k| k != f.name) {
            continue;
        }
        let report = out.kernels.iter().find(|k| k.name == f.name);
        let mut verdict = verify_kernel(&module, f, addr32, &out.cubin, opts);
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

/// How a "cannot run" reason starts when the PTX is undefined on the launch.
const UNDEFINED: &str = "the PTX is undefined";

/// Verify kernel `f` of `module` (compiled into `cubin`, `addr32` for `.address_size 32`).
///
/// When the reference finds the PTX undefined on the launch (a race between threads, a
/// barrier in divergent code) and the block has more than one thread, the runs are done again
/// with one thread per CTA, where neither a barrier nor a race inside a CTA can happen; if
/// that launch is still undefined (a race on global memory between CTAs) and the grid has
/// more than one CTA, they are done once more with a single thread in a single CTA. If the
/// smaller launch matches, the verdict is a match that says so (many small test kernels are
/// written for one thread, and every thread of them stores to the same place).
pub fn verify_kernel(
    module: &ir::Module,
    f: &Function,
    addr32: bool,
    cubin: &[u8],
    opts: &VerifyOptions,
) -> Verdict {
    let full = verify_launch(module, f, addr32, cubin, opts);
    let Outcome::CannotRun(why) = &full.outcome else {
        return full;
    };
    let threads = launch_block(f, opts).iter().product::<u32>();
    let ctas = opts.grid.iter().product::<u32>();
    if !why.starts_with(UNDEFINED) || threads * ctas == 1 {
        return full;
    }
    let mut why = why.clone();
    let (mut steps, mut seconds) = (full.sim_steps, full.sim_seconds);
    // One thread per CTA (when the block has more than one), then one thread in all (when
    // the grid has more than one CTA).
    let mut smaller = Vec::new();
    if threads > 1 {
        smaller.push(opts.grid);
    }
    if ctas > 1 {
        smaller.push([1, 1, 1]);
    }
    for grid in smaller {
        let o = VerifyOptions {
            grid,
            block: [1, 1, 1],
            shape_block: false,
            ..opts.clone()
        };
        let mut v = verify_launch(module, f, addr32, cubin, &o);
        steps += v.sim_steps;
        seconds += v.sim_seconds;
        v.sim_steps = steps;
        v.sim_seconds = seconds;
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
            // Still undefined: try the next, smaller launch, and say why.
            Outcome::CannotRun(w) if w.starts_with(UNDEFINED) => {
                write!(why, "; with one thread per CTA: {w}").ok();
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

/// [`verify_kernel`] on the launch `opts` describes.
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
    };
    let globals = eval::module_global_base(module);
    let ours = match sim::load_kernel_globals(cubin, &f.name, globals) {
        Ok(k) => k,
        Err(e) => {
            verdict.outcome = Outcome::CannotRun(format!("leafold's cubin: {e}"));
            return verdict;
        }
    };
    let theirs = match &opts.ptxas_cubin {
        Some(c) => match sim::load_kernel_globals(c, &f.name, globals) {
            Ok(k) => Some(k),
            Err(e) => {
                verdict.outcome = Outcome::CannotRun(format!("ptxas's cubin: {e}"));
                return verdict;
            }
        },
        None => None,
    };
    let pointers = pointer_params(f);
    let dynamic_shared = if module
        .vars
        .values()
        .any(|v| v.space == Space::Shared && v.size == 0)
    {
        DYNAMIC_SHARED
    } else {
        0
    };
    for r in 0..opts.runs {
        let seed = opts.seed.wrapping_add(u64::from(r));
        let mut tries: Vec<u64> = match opts.buffer_size {
            Some(b) => vec![b],
            None => vec![DEFAULT_BUFFER, LARGE_BUFFER],
        };
        let (launch, reference) = loop {
            let size = tries.remove(0);
            let launch = match make_launch(f, &pointers, addr32, size, seed, opts) {
                Ok(mut l) => {
                    l.dynamic_shared = dynamic_shared;
                    l
                }
                Err(why) => {
                    verdict.outcome = Outcome::CannotRun(why);
                    return verdict;
                }
            };
            let at = |e: &eval::EvalError| match e.inst().and_then(|i| f.srcloc(i).ptx_line()) {
                Some(n) => format!(" (PTX line {n})"),
                None => String::new(),
            };
            match eval::run(module, &f.name, &launch) {
                Ok(out) => break (launch, Ok(out)),
                // A trapping launch has no defined memory: the simulator must trap too.
                Err(e @ eval::EvalError::Trapped { .. }) => {
                    break (launch, Err(format!("{e}{}", at(&e))));
                }
                // No run of this kernel can be compared (a bigger buffer does not help).
                Err(e @ eval::EvalError::Unknowable { .. }) => {
                    verdict.outcome = Outcome::CannotRun(format!("{e}{}", at(&e)));
                    return verdict;
                }
                Err(e @ eval::EvalError::Undefined { .. }) => {
                    verdict.outcome = Outcome::CannotRun(format!(
                        "{UNDEFINED} on the random inputs of seed {seed}: {e}{}",
                        at(&e)
                    ));
                    return verdict;
                }
                Err(e) if tries.is_empty() => {
                    let why = match e {
                        eval::EvalError::OutOfBounds { .. }
                        | eval::EvalError::Unmapped { .. }
                        | eval::EvalError::Misaligned { .. } => format!(
                            "the reference run (seed {seed}) faults on the random inputs: {e}{}",
                            at(&e)
                        ),
                        _ => format!("the reference interpreter cannot run it: {e}{}", at(&e)),
                    };
                    verdict.outcome = Outcome::CannotRun(why);
                    return verdict;
                }
                Err(_) => {}
            }
        };
        let sides = std::iter::once((Side::Leafold, &ours))
            .filter(|_| !opts.only_ptxas)
            .chain(theirs.as_ref().map(|t| (Side::Ptxas, t)));
        for (side, (code, info, module_globals)) in sides {
            // The module's `.global` variables sit where the reference puts them, and their
            // region comes last in both outputs.
            let mut launch = launch.clone();
            launch.global.extend(module_globals.clone());
            let launch = &launch;
            // A mismatch with no instruction to name as the writer of a wrong byte.
            let unattributed = |what: String| {
                Outcome::Mismatch(Box::new(Mismatch {
                    side,
                    seed,
                    inputs: summary(launch, f, &pointers),
                    what,
                    writer: None,
                    ptx_line: None,
                }))
            };
            let start = std::time::Instant::now();
            let got = sim::run_timed(code, info, launch);
            let reference = match (&reference, got) {
                (Ok(r), got) => (r, got),
                (Err(_), Err(sim::SimError::Trap { .. })) => continue,
                (Err(_), Err(sim::SimError::Unsupported { addr, what })) => {
                    verdict.outcome = Outcome::CannotRun(format!(
                        "the simulator cannot run {side}'s code: 0x{addr:04x}: {what}"
                    ));
                    return verdict;
                }
                (Err(trap), got) => {
                    let what = match got {
                        Ok(_) => format!("the reference traps ({trap}); {side}'s code does not"),
                        Err(e) => format!(
                            "the reference traps ({trap}); {side}'s code faults instead: {e}"
                        ),
                    };
                    verdict.outcome = unattributed(what);
                    return verdict;
                }
            };
            let (reference, got) = reference;
            let got = match got {
                Ok((out, timing)) => {
                    if side == Side::Leafold {
                        verdict.sim_steps += timing.warp_insts;
                        verdict.sim_seconds += start.elapsed().as_secs_f64();
                    }
                    if r == 0 {
                        verdict.timing[side as usize] = Some(timing);
                    }
                    out
                }
                Err(sim::SimError::Unsupported { addr, what }) => {
                    verdict.outcome = Outcome::CannotRun(format!(
                        "the simulator cannot run {side}'s code: 0x{addr:04x}: {what}"
                    ));
                    return verdict;
                }
                Err(e) => {
                    let writer = fault_addr(&e).map(|pc| (pc, sass_at(code, pc)));
                    verdict.outcome = Outcome::Mismatch(Box::new(Mismatch {
                        side,
                        seed,
                        inputs: summary(launch, f, &pointers),
                        what: format!(
                            "the reference ran, {side}'s code faults in the simulator: {e}"
                        ),
                        writer,
                        ptx_line: None,
                    }));
                    return verdict;
                }
            };
            let mut got = got;
            if side == Side::Ptxas {
                if let Some(c) = &opts.ptxas_cubin {
                    relayout_module_globals(&mut got, reference, cubin, c, globals);
                }
            }
            if let Some(d) = first_difference(reference, &got, side == Side::Leafold) {
                let writer = sim::run_traced(code, info, launch)
                    .ok()
                    .and_then(|(_, log)| log.last_writer(d.loc))
                    .map(|pc| (pc, sass_at(code, pc)));
                verdict.outcome = Outcome::Mismatch(Box::new(Mismatch {
                    side,
                    seed,
                    inputs: summary(launch, f, &pointers),
                    what: format!(
                        "first difference at {}: reference 0x{:02x}, {side} 0x{:02x}",
                        d.describe(),
                        d.expected,
                        d.got
                    ),
                    writer,
                    ptx_line: None,
                }));
                return verdict;
            }
            if opts.check_slice {
                match check_slice(code, info, launch) {
                    Ok(()) => {}
                    Err(SliceCheck::Untraceable(why)) => {
                        verdict.outcome = Outcome::CannotRun(format!("{side}'s code: {why}"));
                        return verdict;
                    }
                    Err(SliceCheck::Missed(what)) => {
                        verdict.outcome = unattributed(what);
                        return verdict;
                    }
                }
            }
        }
    }
    verdict.outcome = Outcome::Match {
        runs: opts.runs,
        ptxas: theirs.is_some(),
        one_thread: None,
        one_cta: false,
    };
    verdict
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
    let index = |addr: u64| ((addr / 32) * 3 + (addr % 32) / 8).checked_sub(1);
    let stops = |addr: u64| {
        index(addr)
            .and_then(|k| insts.get(k as usize))
            .is_some_and(crate::sm50::slice::is_source)
    };
    let dynamic = deps.slice(stops);
    for addr in dynamic {
        let k = index(addr).map(|k| k as usize);
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
        | Trap { addr } => Some(*addr),
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

/// A differing byte.
struct Difference {
    loc: Loc,
    expected: u8,
    got: u8,
}

impl Difference {
    fn describe(&self) -> String {
        match self.loc {
            Loc::Global(a) => format!("global 0x{a:x}"),
            Loc::Shared { cta, offset } => format!("shared 0x{offset:x} of CTA {cta}"),
            Loc::Local { thread, offset } => {
                format!("local 0x{offset:x} of thread {thread} (launch-wide index)")
            }
        }
    }
}

/// The first byte where `got` differs from `reference`: global regions, then shared memory,
/// then (with `local`, for leafold's code) the declared part of each thread's local memory.
fn first_difference(reference: &RunOutput, got: &RunOutput, local: bool) -> Option<Difference> {
    for r in &reference.global {
        let Some(g) = got.region(r.base) else {
            return Some(Difference {
                loc: Loc::Global(r.base),
                expected: r.bytes.first().copied().unwrap_or(0),
                got: 0,
            });
        };
        if let Some(i) = (0..r.bytes.len()).find(|&i| g.get(i) != Some(&r.bytes[i])) {
            return Some(Difference {
                loc: Loc::Global(r.base + i as u64),
                expected: r.bytes[i],
                got: g.get(i).copied().unwrap_or(0),
            });
        }
    }
    for (cta, (e, g)) in reference.shared.iter().zip(&got.shared).enumerate() {
        // ptxas allocates only the `.shared` variables a kernel uses (the reference, every
        // variable of the module), so its shared memory has another layout: compare it only
        // when the sizes agree. leafold's layout is the reference's (`local` is true).
        if !local && e.len() != g.len() {
            continue;
        }
        if let Some(i) = (0..e.len()).find(|&i| g.get(i) != Some(&e[i])) {
            return Some(Difference {
                loc: Loc::Shared {
                    cta,
                    offset: i as u64,
                },
                expected: e[i],
                got: g.get(i).copied().unwrap_or(0),
            });
        }
    }
    if local {
        for (thread, (e, g)) in reference.local.iter().zip(&got.local).enumerate() {
            if let Some(i) = (0..e.len()).find(|&i| g.get(i) != Some(&e[i])) {
                return Some(Difference {
                    loc: Loc::Local {
                        thread,
                        offset: i as u64,
                    },
                    expected: e[i],
                    got: g.get(i).copied().unwrap_or(0),
                });
            }
        }
    }
    None
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

/// Where pointer parameter number `k` (of those found) gets its buffer.
fn buffer_base(k: usize, size: u64, addr32: bool) -> Option<u64> {
    if addr32 {
        let base = 0x1000_0000u64 * (k as u64 + 1);
        (base + size <= 1 << 32).then_some(base)
    } else {
        // Straddle the 4 GB line (k + 1) << 32: carries into the high word get exercised.
        let line = (k as u64 + 1) << 32;
        Some(line - (size / 2) / 256 * 256)
    }
}

/// The block shape of a launch. A kernel that reads `%tid.y` or `%ntid.y` was written for
/// two-dimensional blocks (a 16×16 tile, say), and a 64×1 block would make it index its
/// shared tiles out of bounds, where the fault depends on how the compiler laid the tiles
/// out; so, with `shape_block`, the same thread count is arranged as 16 × n (and as 4 × 4 × n
/// for kernels that read the z dimension).
pub fn launch_block(f: &Function, opts: &VerifyOptions) -> [u32; 3] {
    let [x, y, z] = opts.block;
    let threads = x * y * z;
    if !opts.shape_block || y != 1 || z != 1 {
        return opts.block;
    }
    let reads = |d: ir::Dim| {
        f.insts.values().any(|n| {
            matches!(
                n.data,
                InstData::SpecialReg {
                    reg: ir::SpecialReg::Tid(e) | ir::SpecialReg::Ntid(e)
                } if e == d
            )
        })
    };
    if reads(ir::Dim::Z) && threads % 16 == 0 {
        [4, 4, threads / 16]
    } else if reads(ir::Dim::Y) && threads % 16 == 0 {
        [16, threads / 16, 1]
    } else {
        opts.block
    }
}

/// The launch of run `seed`: parameters and buffers as the module essay says.
fn make_launch(
    f: &Function,
    pointers: &[usize],
    addr32: bool,
    buffer: u64,
    seed: u64,
    opts: &VerifyOptions,
) -> Result<Launch, String> {
    let mut rng = Rng::new(seed);
    let mut launch = Launch::new(opts.grid, launch_block(f, opts));
    launch.global_races = true;
    let mut params = vec![0u8; f.param_size() as usize];
    for (i, p) in f.params.iter().enumerate() {
        let at = p.offset as usize;
        let dst = &mut params[at..at + p.size as usize];
        if let Some(k) = pointers.iter().position(|&x| x == i) {
            let base = buffer_base(k, buffer, addr32).ok_or_else(|| {
                format!(
                    "{} pointer parameters of {buffer} bytes do not fit a 32-bit address space",
                    pointers.len()
                )
            })?;
            let mut bytes = vec![0u8; buffer as usize];
            rng.fill(&mut bytes);
            launch.global.push(GlobalRegion { base, bytes });
            let b = base.to_le_bytes();
            let n = dst.len().min(8);
            dst[..n].copy_from_slice(&b[..n]);
        } else if p.size <= 8 {
            let v = rng.below(64).to_le_bytes();
            let n = dst.len();
            dst.copy_from_slice(&v[..n]);
        } else {
            rng.fill(dst);
        }
    }
    launch.params = params;
    Ok(launch)
}

/// One line describing a launch's inputs.
fn summary(launch: &Launch, f: &Function, pointers: &[usize]) -> String {
    let mut s = format!("grid {:?}, block {:?}; params:", launch.grid, launch.block);
    for (i, p) in f.params.iter().enumerate() {
        let at = p.offset as usize;
        let bytes = &launch.params[at..at + p.size as usize];
        let mut v = [0u8; 8];
        let n = bytes.len().min(8);
        v[..n].copy_from_slice(&bytes[..n]);
        let v = u64::from_le_bytes(v);
        let kind = if pointers.contains(&i) {
            "pointer"
        } else {
            "scalar"
        };
        let _ = write!(s, " {}={v:#x} ({kind})", p.name);
    }
    let _ = write!(
        s,
        "; {} buffers of {} random bytes",
        launch.global.len(),
        launch.global.first().map_or(0, |r| r.bytes.len())
    );
    s
}

/// Indices of the parameters that hold pointers: their `param` load reaches the address of
/// a global or generic access (load, store or atomic) through `add`, `sub`, `and` with a
/// constant, `select`, `cvta` or block arguments, and
/// has the address's type. Multiplications, shifts and conversions stop the walk: what goes
/// through them is an index, not a base.
pub fn pointer_params(f: &Function) -> Vec<usize> {
    // Incoming arguments of each block parameter.
    let mut incoming: std::collections::HashMap<Value, Vec<Value>> = Default::default();
    for node in f.insts.values() {
        for call in node.data.targets() {
            for (&p, &a) in f.blocks[call.block].params.iter().zip(&call.args) {
                incoming.entry(p).or_default().push(a);
            }
        }
    }
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for node in f.insts.values() {
        let addr = match &node.data {
            InstData::Load { space, addr, .. }
            | InstData::Store { space, addr, .. }
            | InstData::Atomic { space, addr, .. }
                if matches!(space, Space::Global | Space::Generic) =>
            {
                *addr
            }
            _ => continue,
        };
        let ty = f.value_type(addr);
        let mut stack = vec![addr];
        while let Some(v) = stack.pop() {
            if !seen.insert((v, ty)) {
                continue;
            }
            match f.values[v].def {
                ValueDef::Param(..) => {
                    stack.extend(incoming.get(&v).into_iter().flatten().copied());
                }
                ValueDef::Result(inst, _) => match &f.insts[inst].data {
                    InstData::LoadParam { ty: pty, offset } if *pty == ty => {
                        if let Some(i) = f.params.iter().position(|p| p.offset == *offset) {
                            found.push(i);
                        }
                    }
                    InstData::Binary {
                        op: ir::BinaryOp::Add | ir::BinaryOp::Sub,
                        args,
                    } => stack.extend_from_slice(args),
                    // A pointer aligned down to its word (`atom.cas.b16`'s emulation,
                    // `ir/build/atomics.rs`): `p & -4` with a constant mask.
                    InstData::Binary {
                        op: ir::BinaryOp::And,
                        args,
                    } if matches!(
                        f.values[args[1]].def,
                        ValueDef::Result(k, _) if matches!(f.insts[k].data, InstData::Iconst { .. })
                    ) =>
                    {
                        stack.push(args[0])
                    }
                    InstData::Select { args, .. } => stack.extend_from_slice(args),
                    InstData::Cvta { arg, .. } => stack.push(*arg),
                    _ => {}
                },
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// How many kernels a verification covered, by how far (`leafold verify --summary`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Kernels that matched at the launch asked for.
    pub full: usize,
    /// Kernels that matched only at a smaller launch (one thread per CTA, or one thread).
    pub reduced: usize,
    /// Kernels with a mismatch.
    pub mismatch: usize,
    /// Kernels that could not run, by [`reason_class`].
    pub not_run: std::collections::BTreeMap<&'static str, usize>,
    /// Files that did not compile (their kernels are not counted above).
    pub uncompiled_files: usize,
}

impl Coverage {
    pub fn add(&mut self, v: &Verdict) {
        match &v.outcome {
            Outcome::Match {
                one_thread: None, ..
            } => self.full += 1,
            Outcome::Match { .. } => self.reduced += 1,
            Outcome::Mismatch(_) => self.mismatch += 1,
            Outcome::CannotRun(why) => *self.not_run.entry(reason_class(why)).or_default() += 1,
        }
    }

    /// A whole file that did not compile (or could not be read).
    pub fn add_uncompiled(&mut self) {
        self.uncompiled_files += 1;
    }

    pub fn merge(&mut self, o: &Coverage) {
        self.full += o.full;
        self.reduced += o.reduced;
        self.mismatch += o.mismatch;
        self.uncompiled_files += o.uncompiled_files;
        for (k, n) in &o.not_run {
            *self.not_run.entry(k).or_default() += n;
        }
    }

    pub fn kernels(&self) -> usize {
        self.full + self.reduced + self.mismatch + self.not_run.values().sum::<usize>()
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not_run: usize = self.not_run.values().sum();
        write!(
            f,
            "{} kernels: {} verified at the full launch, {} at a reduced launch, {} mismatched, \
             {not_run} not run",
            self.kernels(),
            self.full,
            self.reduced,
            self.mismatch
        )?;
        if not_run > 0 {
            let classes: Vec<String> = self
                .not_run
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect();
            write!(f, " ({})", classes.join(", "))?;
        }
        match self.uncompiled_files {
            0 => Ok(()),
            1 => write!(f, "; 1 file does not compile"),
            n => write!(f, "; {n} files do not compile"),
        }
    }
}

/// The class of a "cannot run" reason, for coverage reports: what would have to change for
/// the kernel to run.
pub fn reason_class(why: &str) -> &'static str {
    const CLASSES: &[(&str, &str)] = &[
        (UNDEFINED, "undefined launch (race, divergent barrier)"),
        ("faults on the random inputs", "faults on random inputs"),
        ("whose value cannot be known", "reads a clock or timer"),
        ("step limit", "step limit"),
        ("the simulator cannot run", "simulator lacks an instruction"),
        ("cubin", "cubin cannot be loaded"),
        ("bad launch", "launch cannot be laid out"),
    ];
    CLASSES
        .iter()
        .find(|(needle, _)| why.contains(needle))
        .map_or("other", |(_, class)| class)
}
