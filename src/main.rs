//! The `leafold` command line: a thin shell over the library. Each subcommand's arguments and
//! behaviour live in `leafold::cli::<name>`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc instead of the system allocator: compiling allocates many small, short-lived
/// vectors per instruction and per block, and glibc's malloc/free took about a fifth of the
/// CPU time of a large compile (the 20,000-line benchmark kernel: 0.12 s -> 0.08 s CPU; see
/// the README's results). Freed memory stays with the process (`leafold::heap`).
#[global_allocator]
static GLOBAL: leafold::heap::Heap = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "leafold",
    version,
    about = "PTX to SASS compiler for NVIDIA Maxwell (sm_50/52/53)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and check PTX files; print diagnostics; exit 1 on any error.
    Check(leafold::cli::check::Args),
    /// Disassemble an sm_50/52/53 cubin like `cuobjdump -sass`.
    Disasm(leafold::cli::disasm::Args),
    /// Compile PTX files to sm_50/52/53 cubins (ptxas-style options; also `leafold ptxas`).
    #[command(visible_alias = "ptxas")]
    Compile(leafold::cli::compile::Args),
    /// Compile, then compare the reference interpreter and the simulator on random inputs.
    Verify(leafold::cli::verify::Args),
    /// Compare leafold with NVIDIA ptxas 11.8 -O3 per kernel (needs the oracle).
    Compare(leafold::cli::compare::Args),
    /// Check a cubin's control codes for hazards; exit 1 if any is found.
    Hazards(leafold::cli::hazards::Args),
}

fn main() -> ExitCode {
    leafold::heap::keep_freed_memory();
    // `ptxas ...` (the binary under that name) and `leafold ptxas ...` mean `compile`, with
    // ptxas's option spellings rewritten first.
    let line = match leafold::cli::ptxas::command_line(std::env::args_os().collect()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("ptxas fatal   : {e}");
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(line.args);
    let code = match cli.command {
        Command::Check(args) => leafold::cli::check::run(&args),
        Command::Disasm(args) => leafold::cli::disasm::run(&args),
        Command::Compile(args) => leafold::cli::compile::run_with_warnings(&args, &line.warnings),
        Command::Compare(args) => leafold::cli::compare::run(&args),
        Command::Verify(args) => leafold::cli::verify::run(&args),
        Command::Hazards(args) => leafold::cli::hazards::run(&args),
    };
    ExitCode::from(code)
}
