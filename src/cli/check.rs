//! `leafold check FILE...`: parse and check PTX. (Being built; see issue 2.)

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// PTX files to check.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the AST of each file.
    #[arg(long)]
    pub dump_ast: bool,
}

pub fn run(_args: &Args) -> u8 {
    eprintln!("leafold check: the PTX front end is not built yet");
    2
}
