//! The `leafold` command line: a thin shell over the library. Each subcommand's arguments and
//! behaviour live in `leafold::cli::<name>`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
    /// Compile a PTX file to an sm_50/52/53 cubin (ptxas-style options).
    Compile(leafold::cli::compile::Args),
    /// Check a cubin's control codes for hazards; exit 1 if any is found.
    Hazards(leafold::cli::hazards::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(leafold::cli::compile::ptxas_style_args(std::env::args_os()));
    let code = match cli.command {
        Command::Check(args) => leafold::cli::check::run(&args),
        Command::Disasm(args) => leafold::cli::disasm::run(&args),
        Command::Compile(args) => leafold::cli::compile::run(&args),
        Command::Hazards(args) => leafold::cli::hazards::run(&args),
    };
    ExitCode::from(code)
}
