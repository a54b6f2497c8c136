//! NVIDIA's reference tools (ptxas, nvdisasm, cuobjdump 11.8), used as the ground truth.
//!
//! In: the environment. `LEAFOLD_ORACLE` names a directory holding the three binaries
//! (`scripts/install-oracle.sh` puts them in `~/.cache/leafold/oracle/bin`); failing that they
//! are looked up in that default directory and then on `PATH`. Out: an [`Oracle`] with their
//! paths and helpers that run them on temporary files.
//!
//! Tests call [`Oracle::for_test`]: when the oracle is missing it prints a clear notice and
//! returns `None`, so the test passes vacuously on a machine without the tools, unless
//! `LEAFOLD_REQUIRE_ORACLE=1` is set (CI sets it), in which case a missing oracle is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Debug)]
pub struct Oracle {
    pub ptxas: PathBuf,
    pub nvdisasm: PathBuf,
    pub cuobjdump: PathBuf,
}

/// What went wrong running an oracle tool.
#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    #[error("could not run {tool}: {source}")]
    Spawn {
        tool: String,
        source: std::io::Error,
    },
    #[error("{tool} failed ({status}): {stderr}")]
    Failed {
        tool: String,
        status: String,
        stderr: String,
    },
    #[error("temporary file: {0}")]
    Io(#[from] std::io::Error),
}

impl Oracle {
    /// Find the three tools, or `None` when any is missing.
    pub fn find() -> Option<Oracle> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(d) = std::env::var_os("LEAFOLD_ORACLE") {
            dirs.push(PathBuf::from(d));
        }
        if let Some(home) = std::env::var_os("HOME") {
            dirs.push(Path::new(&home).join(".cache/leafold/oracle/bin"));
        }
        if let Some(path) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        let find = |name: &str| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
        Some(Oracle {
            ptxas: find("ptxas")?,
            nvdisasm: find("nvdisasm")?,
            cuobjdump: find("cuobjdump")?,
        })
    }

    /// For tests: the oracle, or a printed notice and `None`. Panics (failing the test) when
    /// `LEAFOLD_REQUIRE_ORACLE=1` and the oracle is missing, so CI can never skip silently.
    pub fn for_test(test: &str) -> Option<Oracle> {
        match Oracle::find() {
            Some(o) => Some(o),
            None => {
                if std::env::var("LEAFOLD_REQUIRE_ORACLE").as_deref() == Ok("1") {
                    panic!("{test}: LEAFOLD_REQUIRE_ORACLE=1 but ptxas/nvdisasm/cuobjdump were not found (run scripts/install-oracle.sh)");
                }
                eprintln!(
                    "NOTICE: {test} skipped: NVIDIA oracle (ptxas/nvdisasm/cuobjdump 11.8) not installed; \
                     run scripts/install-oracle.sh and export LEAFOLD_ORACLE=~/.cache/leafold/oracle/bin"
                );
                None
            }
        }
    }

    /// Run a tool and return its stdout, or an error carrying its stderr.
    pub fn run(&self, tool: &Path, args: &[&std::ffi::OsStr]) -> Result<String, OracleError> {
        let name = tool
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let out = Command::new(tool)
            .args(args)
            .output()
            .map_err(|source| OracleError::Spawn {
                tool: name.clone(),
                source,
            })?;
        if !out.status.success() {
            return Err(OracleError::Failed {
                tool: name,
                status: out.status.to_string(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned()
                    + &String::from_utf8_lossy(&out.stdout),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `nvdisasm -b SM50 -hex` over raw little-endian words (bundles of control word + three
    /// instructions).
    pub fn nvdisasm_raw(&self, words: &[u64]) -> Result<String, OracleError> {
        self.nvdisasm_raw_arch(words, "SM50")
    }

    /// [`Oracle::nvdisasm_raw`] for another architecture (`"SM52"`, `"SM53"`): the
    /// half-precision `HADD2`..`HSET2` exist only on SM53 (nvdisasm rejects them under SM50),
    /// and a few encodings print differently there (`MUFU.SQRT` is INVALIDMUFUOPCODE8 on SM50).
    pub fn nvdisasm_raw_arch(&self, words: &[u64], arch: &str) -> Result<String, OracleError> {
        let dir = scratch_dir()?;
        let path = dir.join("raw.bin");
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, bytes)?;
        let r = self.run(
            &self.nvdisasm,
            &[
                "-b".as_ref(),
                arch.as_ref(),
                "-hex".as_ref(),
                path.as_os_str(),
            ],
        );
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    /// `ptxas -arch=<arch> in.ptx -o out.cubin`, returning the cubin bytes.
    pub fn ptxas(&self, ptx: &str, arch: &str, extra: &[&str]) -> Result<Vec<u8>, OracleError> {
        let dir = scratch_dir()?;
        let input = dir.join("in.ptx");
        let output = dir.join("out.cubin");
        std::fs::write(&input, ptx)?;
        let arch = format!("-arch={arch}");
        let mut args: Vec<&std::ffi::OsStr> = vec![arch.as_ref()];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        args.extend([input.as_os_str(), "-o".as_ref(), output.as_os_str()]);
        let r = self
            .run(&self.ptxas, &args)
            .and_then(|_| Ok(std::fs::read(&output)?));
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    /// `cuobjdump <flag> file.cubin` (e.g. `-sass` or `-elf`) on cubin bytes.
    pub fn cuobjdump(&self, cubin: &[u8], flag: &str) -> Result<String, OracleError> {
        let dir = scratch_dir()?;
        let path = dir.join("k.cubin");
        std::fs::write(&path, cubin)?;
        let r = self.run(&self.cuobjdump, &[flag.as_ref(), path.as_os_str()]);
        let _ = std::fs::remove_dir_all(&dir);
        r
    }
}

/// A fresh private directory under the system temp dir (unique per process and call).
fn scratch_dir() -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "leafold-oracle-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// PTX text as ptxas 11.8 takes it for `arch` (`sm_50`, `sm_52`, `sm_53`): a `.target` newer
/// than `arch` becomes `arch` (ptxas refuses a `.target` above its `-arch`, where `leafold
/// compile` warns and compiles for Maxwell) and a `.version` above 7.8, the newest ptxas
/// 11.8 reads, becomes 7.8. Other lines, and the line count, are unchanged, so ptxas's line
/// numbers stay those of the input. Returns the text unchanged when nothing needs rewriting.
pub fn retarget<'a>(ptx: &'a str, arch: &str) -> std::borrow::Cow<'a, str> {
    let arch_sm = sm_number(arch).unwrap_or(50);
    let mut changed = false;
    let lines: Vec<String> = ptx
        .split('\n')
        .map(|l| {
            let t = l.trim_start();
            let indent = &l[..l.len() - t.len()];
            if let Some(rest) = t.strip_prefix(".target") {
                // `.target sm_61, texmode_independent // comment`: only the sm_XX word changes.
                let newer = rest
                    .split([',', ' ', '\t', '\r'])
                    .any(|w| sm_number(w).is_some_and(|n| n > arch_sm));
                if newer && rest.starts_with([' ', '\t']) {
                    changed = true;
                    let words: Vec<String> = rest
                        .split(',')
                        .map(|w| {
                            let word = w.trim();
                            if sm_number(word).is_some_and(|n| n > arch_sm) {
                                w.replacen(word, arch, 1)
                            } else {
                                w.to_string()
                            }
                        })
                        .collect();
                    return format!("{indent}.target{}", words.join(","));
                }
            } else if let Some(rest) = t.strip_prefix(".version") {
                let v = rest.split_whitespace().next().unwrap_or("");
                let newer = v
                    .split_once('.')
                    .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                    .is_some_and(|v| v > (7, 8));
                if newer {
                    changed = true;
                    return format!(
                        "{indent}.version 7.8{}",
                        &rest[rest.find(v).unwrap_or(0) + v.len()..]
                    );
                }
            }
            l.to_string()
        })
        .collect();
    if changed {
        std::borrow::Cow::Owned(lines.join("\n"))
    } else {
        std::borrow::Cow::Borrowed(ptx)
    }
}

/// `sm_61` → 61, `sm_90a` → 90 (`None` for anything else).
fn sm_number(word: &str) -> Option<u32> {
    let digits: String = word
        .strip_prefix("sm_")?
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod retarget_tests {
    use super::retarget;

    #[test]
    fn newer_targets_and_versions_are_rewritten_line_for_line() {
        let src = ".version 8.0\n.target sm_80, texmode_independent\n.address_size 64\n";
        assert_eq!(
            retarget(src, "sm_50"),
            ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n"
        );
        assert_eq!(
            retarget("  .version 8.3 // x\n\t.target sm_61\n", "sm_52"),
            "  .version 7.8 // x\n\t.target sm_52\n"
        );
        // Already acceptable: the same text, borrowed.
        let ok = ".version 7.0\n.target sm_50\n";
        assert!(matches!(
            retarget(ok, "sm_52"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(retarget(".target sm_53\n", "sm_50"), ".target sm_50\n");
    }
}
