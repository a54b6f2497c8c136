//! `leafold compile FILE.ptx -o FILE.cubin`: ptxas-style compilation.
//!
//! Accepts ptxas's spellings: `-arch sm_52`, `-arch=sm_52`, `--gpu-name sm_52`; `-v` prints
//! the resource-usage lines in ptxas 11.8's format to stderr (where ptxas prints them);
//! `--emit ir|vcode|alloc|sass|cubin` prints a stage's dump to stdout (`cubin`, the default,
//! writes only the file); `--assume-inbounds`; `--maxrregcount N`; `--serial` waits on every
//! scoreboard (hazard bisection). Exit code: 0 success, 1 errors in the input, 2 bad
//! arguments or unreadable/unwritable files.

use crate::driver::{compile, Arch, Emit, Options};
use crate::error::render_all;
use crate::sm50::sched::Mode;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PTX file to compile.
    pub file: PathBuf,
    /// Output cubin (default: `elf.o` in the current directory, as ptxas).
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
    /// Generic accesses may take the window predicate from the address chain without its
    /// displacement.
    #[arg(long)]
    pub assume_inbounds: bool,
    /// Use at most N registers per thread (at most 255).
    #[arg(long = "maxrregcount")]
    pub maxrregcount: Option<u32>,
    /// Control codes that wait on everything (slow; for bisecting hazards).
    #[arg(long)]
    pub serial: bool,
}

/// Rewrite ptxas's single-dash long options (`-arch sm_52`, `-arch=sm_52`, `-maxrregcount`,
/// `-o` stays) into the double-dash form clap parses. Other arguments pass unchanged.
pub fn ptxas_style_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    const LONG: [&str; 4] = ["arch", "maxrregcount", "gpu-name", "output-file"];
    args.into_iter()
        .map(|a| {
            let Some(s) = a.to_str() else { return a };
            let Some(rest) = s.strip_prefix('-') else {
                return a;
            };
            let name = rest.split('=').next().unwrap_or("");
            if !rest.starts_with('-') && LONG.contains(&name) {
                format!("--{rest}").into()
            } else {
                a
            }
        })
        .collect()
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

pub fn run(args: &Args) -> u8 {
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
    if let Some(n) = args.maxrregcount {
        if n > 255 {
            eprintln!("ptxas warning : Too big maxrregcount value specified {n}, will be ignored");
        }
    }
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: error: cannot read file: {e}", args.file.display());
            return 2;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let opts = Options {
        arch,
        emit,
        verbose: args.verbose,
        assume_inbounds: args.assume_inbounds,
        max_regs: args.maxrregcount.filter(|&n| n <= 255),
        file_name: args.file.display().to_string(),
        sched: if args.serial {
            Mode::Serial
        } else {
            Mode::Normal
        },
    };
    let out = match compile(&text, &opts) {
        Ok(o) => o,
        Err(diags) => {
            eprint!("{}", render_all(&diags.0));
            return 1;
        }
    };
    if !out.diagnostics.is_empty() {
        eprint!("{}", render_all(&out.diagnostics));
    }
    if emit != Emit::Cubin {
        print!("{}", out.text);
    }
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("elf.o"));
    if emit == Emit::Cubin || args.output.is_some() {
        if let Err(e) = std::fs::write(&path, &out.cubin) {
            eprintln!("{}: error: cannot write file: {e}", path.display());
            return 2;
        }
    }
    if args.verbose {
        eprint!("{}", out.info_log);
        eprint!("{}", static_cycles_log(&out.cubin));
    }
    0
}

/// One line per kernel after ptxas's `-v` lines (which stay byte-compatible): the static
/// issue cycles of [`crate::sm50::sched::cost`].
fn static_cycles_log(cubin: &[u8]) -> String {
    let Ok(c) = crate::cubin::read(cubin) else {
        return String::new();
    };
    c.kernels
        .iter()
        .filter_map(|k| {
            let n = crate::sm50::sched::cost::kernel_cycles(&k.code)?;
            Some(format!(
                "leafold info  : Static issue cycles for '{}': {n}\n",
                k.name
            ))
        })
        .collect()
}
