//! What `verify --summary` counts: per file and in total, kernels verified at the full launch,
//! verified only at a reduced launch, with a mismatch, and not run, each not-run kernel under
//! the class of its reason ([`reason_class`]).
//!
//! In: the [`Verdict`]s of a run over files. Out: a [`Coverage`] that prints itself. Invariant:
//! every kernel counted lands in exactly one of those columns.

use super::*;

/// How many kernels a verification covered, by how far (`leafold verify --summary`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Kernels that matched at the launch asked for.
    pub full: usize,
    /// Of `full`, kernels that matched at the launch they are written for ([`shape`])
    /// rather than the default one.
    pub from_kernel: usize,
    /// Kernels that matched only at a smaller launch (one thread per CTA, or one thread).
    pub reduced: usize,
    /// Kernels with a mismatch.
    pub mismatch: usize,
    /// Kernels that could not run, by [`reason_class`].
    pub not_run: std::collections::BTreeMap<&'static str, usize>,
    /// Files that did not compile (their kernels are not counted above).
    pub uncompiled_files: usize,
}

/// The class of a "cannot run" reason, for coverage reports: what would have to change for
/// the kernel to run.
pub fn reason_class(why: &str) -> &'static str {
    const CLASSES: &[(&str, &str)] = &[
        (UNDEFINED, "undefined launch (race, divergent barrier)"),
        ("faults on the random inputs", "faults on random inputs"),
        ("whose value cannot be known", "reads a performance counter"),
        ("step limit", "step limit"),
        ("the simulator cannot run", "simulator lacks an instruction"),
        ("cubin", "cubin cannot be loaded"),
        ("bad launch", "launch cannot be laid out"),
        (super::NOT_COMPILED, "kernel does not compile"),
    ];
    CLASSES
        .iter()
        .find(|(needle, _)| why.contains(needle))
        .map_or("other", |(_, class)| class)
}

impl Coverage {
    pub fn add(&mut self, v: &Verdict) {
        match &v.outcome {
            Outcome::Match {
                one_thread: None, ..
            } => {
                self.full += 1;
                self.from_kernel += usize::from(v.launch_from_kernel.is_some());
            }
            Outcome::Match { .. } => self.reduced += 1,
            Outcome::Mismatch(_) => self.mismatch += 1,
            Outcome::CannotRun(why) => *self.not_run.entry(reason_class(why)).or_default() += 1,
        }
    }

    /// A whole file that did not compile (or could not be read).
    pub fn add_uncompiled(&mut self) {
        self.uncompiled_files += 1;
    }

    pub fn merge(&mut self, o: &Coverage) {
        self.full += o.full;
        self.reduced += o.reduced;
        self.from_kernel += o.from_kernel;
        self.mismatch += o.mismatch;
        self.uncompiled_files += o.uncompiled_files;
        for (k, n) in &o.not_run {
            *self.not_run.entry(k).or_default() += n;
        }
    }

    pub fn kernels(&self) -> usize {
        self.full + self.reduced + self.mismatch + self.not_run.values().sum::<usize>()
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not_run: usize = self.not_run.values().sum();
        write!(
            f,
            "{} kernels: {} verified at the full launch{}, {} at a reduced launch, {} \
             mismatched, {not_run} not run",
            self.kernels(),
            self.full,
            match self.from_kernel {
                0 => String::new(),
                n => format!(" ({n} at the launch the kernel is written for)"),
            },
            self.reduced,
            self.mismatch
        )?;
        if not_run > 0 {
            let classes: Vec<String> = self
                .not_run
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect();
            write!(f, " ({})", classes.join(", "))?;
        }
        match self.uncompiled_files {
            0 => Ok(()),
            1 => write!(f, "; 1 file does not compile"),
            n => write!(f, "; {n} files do not compile"),
        }
    }
}
