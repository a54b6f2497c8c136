//! `leafold check FILE...`: parse and check PTX files.
//!
//! Prints every diagnostic (errors and warnings) to stderr; with `--dump-ast`, prints the AST
//! dump of each file that parsed to stdout. Exit code: 2 if a file cannot be read, else 1 if any
//! file has an error, else 0.

use crate::error::{render_all, SourceFile};
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

pub fn run(args: &Args) -> u8 {
    let mut code = 0u8;
    for path in &args.files {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}: error: cannot read file: {e}", path.display());
                code = 2;
                continue;
            }
        };
        let file = SourceFile::from_bytes(path.display().to_string(), &bytes);
        let (mut module, mut diags) = crate::ptx::parse(&file);
        if let Some(m) = &mut module {
            if !diags.iter().any(|d| d.is_error()) {
                diags.extend(crate::ptx::alias::resolve_aliases(m, &file));
            }
            if !diags.iter().any(|d| d.is_error()) {
                diags.extend(crate::ptx::check(m, &file));
            }
            if args.dump_ast {
                super::print_out(&crate::ptx::dump_ast(m));
            }
        }
        eprint!("{}", render_all(&diags));
        if diags.iter().any(|d| d.is_error()) && code == 0 {
            code = 1;
        }
    }
    code
}
