//! Subcommands of the `leafold` binary. Each module has an `Args` (clap) and a
//! `run(&Args) -> u8` returning the process exit code: 0 success, 1 errors in the input,
//! 2 the tool could not do its job (unreadable file, bad arguments).

pub mod batch;
pub mod check;
pub mod compare;
pub mod compile;
pub mod disasm;
pub mod hazards;
pub mod ptxas;
pub mod stats;
pub mod verify;

/// Write `text` to standard output. A reader that closed the pipe early (`leafold disasm
/// x.cubin | head`) is not an error: the rest is dropped, as Unix tools do, where `print!`
/// would panic.
pub fn print_out(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
