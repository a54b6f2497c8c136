//! `leafold hazards FILE.cubin [--kernel K]`: run the hazard checker
//! ([`crate::sm50::sched::check`]) over every kernel of any sm_50/52/53 cubin (ours or
//! ptxas's) and print one line per hazard, `kernel+0x0080: R2 read by ... (needs 6)`.
//!
//! Exit code: 0 when nothing is reported, 1 when anything is, 2 when the file cannot be read,
//! is not a cubin we can read, has no such kernel, or holds a word that does not decode (the
//! code cannot be checked then; the message says which word).

use crate::sm50::sched::check::{hazards, HazardKind};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The cubin to check.
    pub file: PathBuf,
    /// Check only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
}

pub fn run(args: &Args) -> u8 {
    let path = args.file.display();
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: error: cannot read file: {e}");
            return 2;
        }
    };
    let cubin = match crate::cubin::read(&bytes) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{path}: error: not a readable cubin: {e}");
            return 2;
        }
    };
    let kernels: Vec<_> = cubin
        .kernels
        .iter()
        .filter(|k| args.kernel.as_ref().map_or(true, |n| *n == k.name))
        .collect();
    if let (Some(name), true) = (&args.kernel, kernels.is_empty()) {
        eprintln!("{path}: error: no kernel named `{name}`");
        return 2;
    }
    let mut code = 0u8;
    let mut out = std::io::stdout().lock();
    for k in kernels {
        for h in hazards(&k.code) {
            if h.kind == HazardKind::Undecodable {
                eprintln!("{path}: error: {}{h}: cannot check this kernel", k.name);
                code = 2;
            } else {
                code = code.max(1);
                // A closed pipe (`| head`) ends the listing, not the process with a panic.
                if writeln!(out, "{}{h}", k.name).is_err() {
                    return code;
                }
            }
        }
    }
    code
}
