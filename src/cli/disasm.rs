//! `leafold disasm FILE.cubin`: SASS text like `cuobjdump -sass`. (Being built; see issue 3.)

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The cubin to disassemble.
    pub file: PathBuf,
    /// Add a column with each instruction's control code.
    #[arg(long)]
    pub ctrl: bool,
    /// Print raw instruction words only.
    #[arg(long)]
    pub raw: bool,
}

pub fn run(_args: &Args) -> u8 {
    eprintln!("leafold disasm: the decoder is not built yet");
    2
}
