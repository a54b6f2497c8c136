//! Batch compilation: `leafold compile A.ptx B.ptx DIR/ [-o OUTDIR]`.
//!
//! In: the compile [`Args`] with several inputs or a directory (searched recursively for
//! `*.ptx`, in sorted order so runs are reproducible) and the shared [`Options`]. Out: one
//! cubin per input, in `OUTDIR` (created if missing; a file found under a directory argument
//! keeps its path relative to that directory) or next to its input, `x.ptx` -> `x.cubin`.
//!
//! Files compile in parallel (rayon; `-j N` bounds the threads). Each file's messages are
//! collected and printed together, in input order, after all have finished, so one file's
//! errors never interleave with another's and never stop the others. A progress bar
//! (indicatif) is drawn on stderr only when it is a terminal and there are enough files to
//! wait for. The last line is the summary `N compiled, M failed`; the exit code is 0 when
//! every file compiled, else the highest file code (1 input errors, 2 I/O).

use super::compile::{compile_file, Args, FileResult};
use crate::driver::{Emit, Options};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Files from which on a progress bar is worth drawing.
const PROGRESS_MIN: usize = 8;

/// Whether `args` asks for batch mode: more than one input, or a directory.
pub fn is_batch(args: &Args) -> bool {
    args.files.len() > 1 || args.files.iter().any(|f| f.is_dir())
}

/// One input and where its cubin goes (written only with `--emit cubin` or `-o`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub input: PathBuf,
    pub output: PathBuf,
}

/// Expand the inputs: files as given, directories recursively (`*.ptx`, sorted).
pub fn jobs(inputs: &[PathBuf], out_dir: Option<&Path>) -> Result<Vec<Job>, String> {
    let mut jobs = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found = Vec::new();
            find_ptx(input, &mut found)
                .map_err(|e| format!("{}: error: cannot read directory: {e}", input.display()))?;
            found.sort();
            for f in found {
                let rel = f.strip_prefix(input).unwrap_or(&f).to_path_buf();
                jobs.push(job(f, &rel, out_dir));
            }
        } else {
            let rel = PathBuf::from(input.file_name().unwrap_or(input.as_os_str()));
            jobs.push(job(input.clone(), &rel, out_dir));
        }
    }
    Ok(jobs)
}

fn job(input: PathBuf, rel: &Path, out_dir: Option<&Path>) -> Job {
    let output = match out_dir {
        Some(d) => d.join(rel).with_extension("cubin"),
        None => input.with_extension("cubin"),
    };
    Job { input, output }
}

pub(crate) fn find_ptx(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ty = entry.file_type()?;
        if ty.is_dir() {
            find_ptx(&path, out)?;
        } else if ty.is_file() && path.extension().is_some_and(|e| e == "ptx") {
            out.push(path);
        }
    }
    Ok(())
}

/// Compile every job (see the module essay); returns the exit code.
pub fn run(args: &Args, opts: &Options) -> u8 {
    let jobs = match jobs(&args.files, args.output.as_deref()) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let write = opts.emit == Emit::Cubin || args.output.is_some();
    let bar = progress_bar(jobs.len());
    let work = || {
        jobs.par_iter()
            .map(|job| {
                let r = compile_job(job, write, opts, args);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                r
            })
            .collect::<Vec<_>>()
    };
    let results = match args.jobs {
        Some(n) => match rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
        {
            Ok(pool) => pool.install(work),
            Err(e) => {
                eprintln!("error: cannot start {n} threads: {e}");
                return 2;
            }
        },
        None => work(),
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut failed = 0;
    let mut code = 0;
    for (job, r) in jobs.iter().zip(&results) {
        if !r.stdout.is_empty() {
            super::print_out(&format!("// {}\n", job.input.display()));
            super::print_out(&r.stdout);
        }
        eprint!("{}", r.stderr);
        if r.code != 0 {
            failed += 1;
            code = code.max(r.code);
        }
    }
    eprintln!("{} compiled, {failed} failed", jobs.len() - failed);
    code
}

fn compile_job(job: &Job, write: bool, opts: &Options, args: &Args) -> FileResult {
    if write {
        if let Some(parent) = job.output.parent() {
            if let Err(e) = std::fs::create_dir_all(parent) {
                return FileResult {
                    stderr: format!(
                        "{}: error: cannot create directory: {e}\n",
                        parent.display()
                    ),
                    code: 2,
                    ..FileResult::default()
                };
            }
        }
    }
    compile_file(
        &job.input,
        write.then_some(job.output.as_path()),
        opts,
        args,
    )
}

fn progress_bar(n: usize) -> Option<indicatif::ProgressBar> {
    if n < PROGRESS_MIN || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(n as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files ({elapsed}, eta {eta})")
    {
        bar.set_style(style);
    }
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_go_next_to_inputs_or_under_the_directory() {
        let j = job(PathBuf::from("a/b/k.ptx"), Path::new("b/k.ptx"), None);
        assert_eq!(j.output, PathBuf::from("a/b/k.cubin"));
        let j = job(
            PathBuf::from("a/b/k.ptx"),
            Path::new("b/k.ptx"),
            Some(Path::new("out")),
        );
        assert_eq!(j.output, PathBuf::from("out/b/k.cubin"));
    }
}
