//! `leafold disasm FILE.cubin`: SASS text like `cuobjdump -sass`, for any sm_50/52/53 cubin.
//! `--ctrl` adds a control-code column, `--raw` prints the words, `--slice` marks the
//! address slice. A file that cannot be read, or is not a cubin we can read, is an error
//! naming the file and the reason (exit 2, as `leafold hazards` exits for the same file).

use crate::disasm::{listing, ListingOptions};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The cubin to disassemble.
    pub file: PathBuf,
    /// Add a column with each instruction's control code ([B------:R-:W-:Y:S06] notation).
    #[arg(long)]
    pub ctrl: bool,
    /// Print raw instruction words only.
    #[arg(long)]
    pub raw: bool,
    /// Mark with `*` the instructions whose results reach a memory address (the address
    /// slice that `leafold compare` counts).
    #[arg(long)]
    pub slice: bool,
}

pub fn run(args: &Args) -> u8 {
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: error: {e}", args.file.display());
            return 2;
        }
    };
    let cubin = match crate::cubin::read(&bytes) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{}: error: not a readable cubin: {e}", args.file.display());
            return 2;
        }
    };
    let opts = ListingOptions {
        ctrl: args.ctrl,
        raw: args.raw,
        slice: args.slice,
    };
    super::print_out(&listing(&cubin, opts));
    0
}
