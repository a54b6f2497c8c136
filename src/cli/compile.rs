//! `leafold compile FILE.ptx -o FILE.cubin`: ptxas-style compilation, also reached as
//! `leafold ptxas ...` and by the binary under the name `ptxas` (see [`super::ptxas`], which
//! rewrites ptxas's spellings first).
//!
//! Options mirror ptxas 11.8: `-arch/--gpu-name`, `-o/--output-file` (default `elf.o`),
//! `-O0..-O3`, `-v` (resource-usage lines in ptxas 11.8's format on stderr), `--maxrregcount`,
//! `-e/--entry` (only the named kernels), `-w`, `-Werror`, `--warn-on-spills`, `--version`;
//! `-lineinfo`, `-g` and `-c` are accepted with a warning (leafold writes no line table, no
//! debug information and no relocatable object). leafold's own: `--emit
//! ir|vcode|alloc|sass|cubin` prints a stage's dump to stdout (`cubin`, the default, writes
//! only the file), `--plg-per-address` (test the shared window of every generic final address
//! instead of ptxas's one test per base; `--assume-inbounds` is an accepted alias of that
//! default), `--sched=list|inorder|serial` (`--serial` is
//! `--sched=serial`: wait on every scoreboard, for hazard bisection), `--fold=none|lea|full`
//! (see [`crate::lower::stats`]), `--stats` (JSON per kernel on stdout, [`super::stats`]) and
//! `--explain` (the SASS with each instruction's PTX line and each LEA chain's address
//! expression on stdout, [`crate::driver::Options::explain`]). Several inputs or a directory
//! switch to batch mode
//! ([`super::batch`]).
//! Exit code: 0 success, 1 errors in the input (or warnings under `-Werror`), 2 bad
//! arguments or unreadable/unwritable files.

use super::stats::stats_json;
use crate::driver::{compile, Arch, Emit, Options};
use crate::error::render_all;
use crate::lower::Fold;
use crate::sm50::sched::Mode;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// PTX files or directories (searched recursively for *.ptx). More than one input, or a
    /// directory, compiles them all in parallel (batch mode).
    pub files: Vec<PathBuf>,
    /// Output cubin (default: `elf.o` in the current directory, as ptxas). In batch mode a
    /// directory (created if missing); without it each cubin goes next to its input.
    #[arg(short = 'o', long = "output-file")]
    pub output: Option<PathBuf>,
    /// Target: sm_50, sm_52 or sm_53.
    #[arg(long = "arch", visible_alias = "gpu-name", default_value = "sm_50")]
    pub arch: String,
    /// Print resource usage (ptxas -v format) to stderr.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Which stage to print: ir, vcode, alloc, sass or cubin (= only write the file).
    #[arg(long, default_value = "cubin")]
    pub emit: String,
    /// Test the shared window of every generic access's final address (a non-zero
    /// displacement joins the address chain). By default one test per base serves every
    /// displacement from it, as in ptxas (an object never straddles a window).
    #[arg(long = "plg-per-address", conflicts_with = "assume_inbounds")]
    pub plg_per_address: bool,
    /// Accepted alias of the default: one window test per base, shared by every
    /// displacement (what this flag switched on before it became the default).
    #[arg(long)]
    pub assume_inbounds: bool,
    /// Use at most N registers per thread (at most 255).
    #[arg(long = "maxrregcount")]
    pub maxrregcount: Option<u32>,
    /// Scheduling: `list` (default: reorder blocks, waits at first use, dual issue),
    /// `inorder` (the same control codes without reordering) or `serial` (wait on
    /// everything, stall 15; for bisecting hazards).
    #[arg(long = "sched", value_name = "MODE", value_parser = ["list", "inorder", "serial"])]
    pub sched: Option<String>,
    /// Keep every branch: no if-conversion of short branch sides into predicated code.
    #[arg(long = "no-ifconv")]
    pub no_ifconv: bool,
    /// Keep IEEE division, reciprocal and square root (`.rn`, f32 and f64) inline at every
    /// site: no fast path calling a shared slow-path subroutine.
    #[arg(long = "no-subroutines")]
    pub no_subroutines: bool,
    /// Contract float `mul` + `add`/`sub` without rounding modifiers into fused
    /// multiply-adds (FFMA/DFMA/HFMA2), as ptxas does by default (`--fmad=false` keeps them
    /// apart).
    #[arg(long = "fmad", value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub fmad: bool,
    /// Unroll loops whose trip count is known only at run time by four, as ptxas does
    /// (off by default: NVVM has unrolled most of them already).
    #[arg(long = "unroll-runtime")]
    pub unroll_runtime: bool,
    /// Alias of `--sched=serial`.
    #[arg(long)]
    pub serial: bool,
    /// ptxas optimisation level 0-3 (accepted; leafold has one level).
    #[arg(short = 'O', long = "opt-level", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt_level: Option<u8>,
    /// `-lineinfo`: accepted, no line table is written (warning).
    #[arg(long = "generate-line-info")]
    pub line_info: bool,
    /// `-g`: accepted, no debug information is written (warning).
    #[arg(short = 'g', long = "device-debug")]
    pub device_debug: bool,
    /// Compile only these entry functions (comma-separated or repeated).
    #[arg(short = 'e', long = "entry", value_delimiter = ',')]
    pub entry: Vec<String>,
    /// `-c`: write a relocatable object (ET_REL) for nvlink instead of an executable cubin.
    #[arg(short = 'c', long = "compile-only")]
    pub compile_only: bool,
    /// Print no warnings.
    #[arg(short = 'w', long = "disable-warnings")]
    pub disable_warnings: bool,
    /// Treat warnings about the input (and spills with --warn-on-spills) as errors.
    #[arg(long = "warning-as-error")]
    pub warning_as_error: bool,
    /// Warn when a kernel spills registers to local memory.
    #[arg(long = "warn-on-spills")]
    pub warn_on_spills: bool,
    /// Print the version and exit.
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    /// Batch mode: number of parallel jobs (default: one per CPU).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// Address folding: none (ISCADD/SHL/IADD baseline), lea (one LEA chain per access),
    /// block (chains shared within a block only) or full (shared chains, sums as chains; the
    /// default).
    #[arg(long, default_value = "full")]
    pub fold: String,
    /// Print per-kernel folding statistics as JSON on stdout.
    #[arg(long)]
    pub stats: bool,
    /// Print the SASS annotated with the PTX line each instruction came from and the address
    /// expression each LEA chain computes (on stdout; no cubin unless -o is given).
    #[arg(long)]
    pub explain: bool,
    /// Print the seconds spent in each compile stage on stderr.
    #[arg(long = "time-passes")]
    pub time_passes: bool,
}

/// Parse the `--emit` value.
pub fn parse_emit(s: &str) -> Option<Emit> {
    Some(match s {
        "ir" => Emit::Ir,
        "vcode" => Emit::Vcode,
        "alloc" => Emit::Alloc,
        "sass" => Emit::Sass,
        "cubin" => Emit::Cubin,
        _ => return None,
    })
}

/// What compiling one file produced: text for stdout and stderr (printed by the caller, so
/// that batch mode can keep each file's lines together) and the file's exit code.
#[derive(Debug, Default)]
pub struct FileResult {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
    /// The cubin, for `-o -` with `--emit cubin`: written to stdout after `stdout`.
    pub cubin_to_stdout: Option<Vec<u8>>,
}

pub fn run(args: &Args) -> u8 {
    run_with_warnings(args, &[])
}

/// [`run`], first printing `pre` (warnings about ignored ptxas options from
/// [`super::ptxas::normalize`]) unless `-w`.
pub fn run_with_warnings(args: &Args, pre: &[String]) -> u8 {
    if args.version {
        println!(
            "leafold: PTX to SASS compiler for NVIDIA Maxwell (ptxas-compatible command line)"
        );
        println!(
            "leafold {}, targets sm_50, sm_52, sm_53",
            env!("CARGO_PKG_VERSION")
        );
        return 0;
    }
    let mut notes: Vec<String> = pre.to_vec();
    for (on, what) in [
        (args.line_info, "-lineinfo: no line table is written"),
        (args.device_debug, "-g: no debug information is written"),
    ] {
        if on {
            notes.push(format!("ptxas warning : {what}; option ignored"));
        }
    }
    if !args.disable_warnings {
        for n in &notes {
            eprintln!("{n}");
        }
    }
    if args.files.is_empty() {
        eprintln!(
            "ptxas fatal   : No input files specified; use option --help for more information"
        );
        return 2;
    }
    let Some(arch) = Arch::parse(&args.arch) else {
        eprintln!(
            "ptxas fatal   : Value '{}' is not defined for option 'gpu-name' (leafold supports sm_50, sm_52, sm_53)",
            args.arch
        );
        return 2;
    };
    let Some(emit) = parse_emit(&args.emit) else {
        eprintln!(
            "error: unknown --emit value '{}' (expected ir, vcode, alloc, sass or cubin)",
            args.emit
        );
        return 2;
    };
    let Some(fold) = Fold::parse(&args.fold) else {
        eprintln!(
            "error: unknown --fold value '{}' (expected none, lea, block or full)",
            args.fold
        );
        return 2;
    };
    if let Some(n) = args.maxrregcount {
        if n > 255 && !args.disable_warnings {
            eprintln!("ptxas warning : Too big maxrregcount value specified {n}, will be ignored");
        }
    }
    let opts = Options {
        arch,
        emit,
        verbose: args.verbose,
        plg_per_address: args.plg_per_address,
        // (a value above 255 is ignored: 255, which `-v` names as the global one)
        max_regs: args.maxrregcount.map(|n| n.min(255)),
        file_name: String::new(),
        no_reconvergence: false,
        no_ifconv: args.no_ifconv,
        no_handle_split: false,
        no_subroutines: args.no_subroutines,
        fmad: args.fmad,
        unroll_runtime: args.unroll_runtime,
        sched: match (args.serial, args.sched.as_deref()) {
            (true, _) | (_, Some("serial")) => Mode::Serial,
            (_, Some("inorder")) => Mode::InOrder,
            _ => Mode::Normal,
        },
        debug_inject: None,
        entries: args.entry.clone(),
        fold,
        explain: args.explain,
        // Only `--emit sass` prints the listing.
        sass_listing: false,
        relocatable: args.compile_only,
    };
    if super::batch::is_batch(args) {
        return super::batch::run(args, &opts);
    }
    let input = &args.files[0];
    let output = if (emit == Emit::Cubin && !args.explain) || args.output.is_some() {
        Some(
            args.output
                .clone()
                .unwrap_or_else(|| PathBuf::from("elf.o")),
        )
    } else {
        None
    };
    let r = compile_file(input, output.as_deref(), &opts, args);
    super::print_out(&r.stdout);
    if let Some(cubin) = &r.cubin_to_stdout {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(cubin).and_then(|()| out.flush()) {
            eprintln!("error: cannot write the cubin to standard output: {e}");
            return 2;
        }
    }
    eprint!("{}", r.stderr);
    r.code
}

/// Compile `input`; write the cubin to `output` when given. `opts.file_name` is replaced by
/// the input's path. Warnings obey `-w`, `-Werror` and `--warn-on-spills`.
pub fn compile_file(
    input: &Path,
    output: Option<&Path>,
    opts: &Options,
    args: &Args,
) -> FileResult {
    let mut r = FileResult::default();
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            r.stderr = format!("{}: error: cannot read file: {e}\n", input.display());
            r.code = 2;
            return r;
        }
    };
    // `from_utf8` first: the same text for valid UTF-8 (all PTX is ASCII), and its ASCII fast
    // path is several times quicker than the lossy decoder's scan.
    let text = match std::str::from_utf8(&bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(&bytes),
    };
    let opts = Options {
        file_name: input.display().to_string(),
        ..opts.clone()
    };
    let out = match compile(&text, &opts) {
        Ok(o) => o,
        Err(diags) => {
            r.stderr = render_all(&diags.0);
            r.code = 1;
            return r;
        }
    };
    let mut warnings = render_all(&out.diagnostics);
    if args.warn_on_spills {
        for k in out
            .kernels
            .iter()
            .filter(|k| k.spill_store_bytes + k.spill_load_bytes > 0)
        {
            let _ = writeln!(
                warnings,
                "ptxas warning : Registers are spilled to local memory in function '{}', {} bytes spill stores, {} bytes spill loads",
                k.name, k.spill_store_bytes, k.spill_load_bytes
            );
        }
    }
    if !warnings.is_empty() {
        if args.warning_as_error {
            r.stderr = warnings;
            r.stderr
                .push_str("ptxas error   : warnings treated as errors (-Werror)\n");
            r.code = 1;
            return r;
        }
        if !args.disable_warnings {
            r.stderr.push_str(&warnings);
        }
    }
    if opts.emit != Emit::Cubin {
        r.stdout = out.text;
    }
    r.stdout.push_str(&out.explain);
    if args.stats {
        // The baseline: the same kernels without folding (the file compiled once, so it
        // compiles again; emit nothing but the reports).
        let none = Options {
            fold: Fold::None,
            emit: Emit::Cubin,
            verbose: false,
            explain: false,
            ..opts.clone()
        };
        let baseline = compile(&text, &none).map_or(Vec::new(), |o| o.kernels);
        r.stdout.push_str(&stats_json(
            &opts.file_name,
            opts.fold,
            &out.kernels,
            &baseline,
        ));
    }
    // `-o -` is standard output: the cubin itself (handed over at the end), or, with `--emit`
    // of a text form, that text (and no file named `-`).
    let to_stdout = output == Some(Path::new("-"));
    if let Some(path) = output.filter(|_| !to_stdout) {
        if let Err(e) = std::fs::write(path, &out.cubin) {
            let _ = writeln!(
                r.stderr,
                "{}: error: cannot write file: {e}",
                path.display()
            );
            r.code = 2;
            return r;
        }
    }
    if args.time_passes {
        let _ = write!(r.stderr, "{}", out.pass_times);
    }
    if opts.verbose {
        r.stderr.push_str(&out.info_log);
        r.stderr.push_str(&static_cycles_log(&out.cubin, opts.arch));
    }
    if to_stdout && opts.emit == Emit::Cubin && !opts.explain {
        r.cubin_to_stdout = Some(out.cubin);
    }
    r
}

/// Lines per kernel after ptxas's `-v` lines (which stay byte-compatible): the static issue
/// cycles of [`crate::sm50::sched::cost`] and the theoretical occupancy
/// ([`crate::occupancy`]).
fn static_cycles_log(cubin: &[u8], arch: Arch) -> String {
    let Ok(c) = crate::cubin::read(cubin) else {
        return String::new();
    };
    let mut s = String::new();
    for k in &c.kernels {
        if let Some(n) = crate::sm50::sched::cost::kernel_cycles(&k.code) {
            s.push_str(&format!(
                "leafold info  : Static issue cycles for '{}': {n}\n",
                k.name
            ));
        }
        s.push_str(&format!(
            "leafold info  : Occupancy of '{}' on {}: {}\n",
            k.name,
            arch.name(),
            crate::occupancy::of_kernel(arch, k)
        ));
    }
    s
}
