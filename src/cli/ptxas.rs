//! ptxas's command-line spellings, rewritten into the form `leafold compile` parses (clap).
//!
//! In: the raw arguments after the subcommand (or after the program name when the binary runs
//! as `ptxas`). Out: [`Normalized`]: arguments clap understands, plus one warning per ptxas
//! option that leafold accepts but that has no effect here.
//!
//! ptxas writes its long options with one dash (`-arch=sm_52`, `-maxrregcount 32`,
//! `-lineinfo`, `-Werror`) as well as two (`--gpu-name sm_52`), and has short aliases clap
//! cannot express (`-optf`, `-warn-spills`). Each spelling in [`RENAMES`] becomes its clap long
//! option; `--options-file F` is replaced by the whitespace-separated words of F (nested files
//! up to a small depth, so a file naming itself cannot loop); the options in [`IGNORED`] are
//! dropped with a warning (with their value when they take one). Anything else passes through
//! unchanged, so an option nobody knows is rejected by clap with its usual message rather than
//! silently misbehaving. Nothing here panics on user input; an unreadable options file is an
//! error string.

use std::ffi::OsString;

/// ptxas spellings (without leading dashes) and the clap long option they mean.
const RENAMES: &[(&str, &str)] = &[
    ("arch", "--arch"),
    ("gpu-name", "--arch"),
    ("output-file", "--output-file"),
    ("maxrregcount", "--maxrregcount"),
    ("opt-level", "--opt-level"),
    ("verbose", "--verbose"),
    ("lineinfo", "--generate-line-info"),
    ("generate-line-info", "--generate-line-info"),
    ("device-debug", "--device-debug"),
    ("entry", "--entry"),
    ("fmad", "--fmad"),
    ("compile-only", "--compile-only"),
    ("disable-warnings", "--disable-warnings"),
    ("Werror", "--warning-as-error"),
    ("warning-as-error", "--warning-as-error"),
    ("warn-spills", "--warn-on-spills"),
    ("warn-on-spills", "--warn-on-spills"),
    ("version", "--version"),
    ("help", "--help"),
];

/// ptxas options leafold accepts and ignores: (spelling, takes a value).
const IGNORED: &[(&str, bool)] = &[
    ("machine", true),
    ("m32", false),
    ("def-load-cache", true),
    ("dlcm", true),
    ("def-store-cache", true),
    ("dscm", true),
    ("allow-expensive-optimizations", true),
    ("position-independent-code", true),
    ("pic", true),
    ("device-function-maxrregcount", true),
    ("func-maxrregcount", true),
    ("sp-bounds-check", false),
    ("extensible-whole-program", false),
    ("ewp", false),
    ("preserve-relocs", false),
    ("suppress-stack-size-warning", false),
    ("warn-on-double-precision-use", false),
    ("warn-double-usage", false),
    ("warn-on-local-memory-usage", false),
    ("warn-lmem-usage", false),
    ("return-at-end", false),
    ("ret-end", false),
    ("disable-optimizer-constants", false),
    ("disable-optimizer-consts", false),
    ("dont-merge-basicblocks", false),
    ("no-bb-merge", false),
    ("make-errors-visible-at-exit", false),
    ("compile-as-tools-patch", false),
    ("astoolspatch", false),
];

/// Spellings of `--options-file`.
const OPTIONS_FILE: &[&str] = &["options-file", "optf"];

/// How deep `--options-file` may nest.
const MAX_DEPTH: usize = 4;

/// Arguments ready for clap, and the warnings for ignored options.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Normalized {
    pub args: Vec<OsString>,
    pub warnings: Vec<String>,
}

/// Rewrite ptxas-style arguments (see the module essay).
pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Result<Normalized, String> {
    let mut out = Normalized::default();
    walk(args.into_iter().collect(), 0, &mut out)?;
    Ok(out)
}

fn walk(args: Vec<OsString>, depth: usize, out: &mut Normalized) -> Result<(), String> {
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            out.args.push(a);
            continue;
        };
        // `-m64` is what leafold does anyway (64-bit addresses come from the PTX).
        if s == "-m64" {
            continue;
        }
        let Some(body) = s.strip_prefix("--").or_else(|| s.strip_prefix('-')) else {
            out.args.push(a);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        if OPTIONS_FILE.contains(&name) {
            let path = match value {
                Some(v) => v.to_string(),
                None => it
                    .next()
                    .and_then(|v| v.to_str().map(str::to_string))
                    .ok_or_else(|| format!("option '{s}' needs a file name"))?,
            };
            if depth >= MAX_DEPTH {
                return Err(format!(
                    "options file '{path}': nested more than {MAX_DEPTH} deep"
                ));
            }
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read options file '{path}': {e}"))?;
            let words = text.split_whitespace().map(OsString::from).collect();
            walk(words, depth + 1, out)?;
            continue;
        }
        if let Some((_, long)) = RENAMES.iter().find(|(n, _)| *n == name) {
            out.args.push(match value {
                Some(v) => format!("{long}={v}").into(),
                None => (*long).into(),
            });
            continue;
        }
        if let Some(&(_, takes_value)) = IGNORED.iter().find(|(n, _)| *n == name) {
            if takes_value && value.is_none() {
                it.next();
            }
            out.warnings.push(format!(
                "ptxas warning : option '{s}' has no effect in leafold; ignored"
            ));
            continue;
        }
        out.args.push(a);
    }
    Ok(())
}

/// The argument list `main` parses: `ptxas ARGS` (program named `ptxas`) and
/// `leafold ptxas ARGS` both become `leafold compile ARGS`; the arguments after `compile` are
/// [`normalize`]d; other subcommands pass unchanged.
pub fn command_line(argv: Vec<OsString>) -> Result<Normalized, String> {
    let mut argv = argv.into_iter();
    let prog = argv.next().unwrap_or_else(|| "leafold".into());
    let rest: Vec<OsString> = argv.collect();
    let as_ptxas = std::path::Path::new(&prog)
        .file_stem()
        .is_some_and(|s| s == "ptxas");
    let (head, tail): (Vec<OsString>, Vec<OsString>) = if as_ptxas {
        (vec![prog, "compile".into()], rest)
    } else {
        match rest.first().and_then(|s| s.to_str()) {
            Some("ptxas" | "compile") => (vec![prog, "compile".into()], rest[1..].to_vec()),
            _ => {
                return Ok(Normalized {
                    args: std::iter::once(prog).chain(rest).collect(),
                    warnings: Vec::new(),
                })
            }
        }
    };
    let mut n = normalize(tail)?;
    n.args.splice(0..0, head);
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Normalized {
        normalize(args.iter().map(OsString::from)).unwrap()
    }

    fn strs(n: &Normalized) -> Vec<&str> {
        n.args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn single_dash_long_options_become_clap_longs() {
        let n = norm(&[
            "-arch=sm_52",
            "-maxrregcount",
            "32",
            "-lineinfo",
            "-Werror",
            "-warn-spills",
            "-O3",
            "-o",
            "x",
            "k.ptx",
        ]);
        assert_eq!(
            strs(&n),
            [
                "--arch=sm_52",
                "--maxrregcount",
                "32",
                "--generate-line-info",
                "--warning-as-error",
                "--warn-on-spills",
                "-O3",
                "-o",
                "x",
                "k.ptx"
            ]
        );
        assert!(n.warnings.is_empty());
    }

    #[test]
    fn ignored_options_take_their_value_and_warn() {
        let n = norm(&[
            "--allow-expensive-optimizations",
            "false",
            "-dlcm=ca",
            "-m64",
            "--preserve-relocs",
            "k.ptx",
        ]);
        assert_eq!(strs(&n), ["k.ptx"]);
        assert_eq!(n.warnings.len(), 3, "{:?}", n.warnings);
        assert!(n.warnings[0].contains("'--allow-expensive-optimizations'"));
    }

    #[test]
    fn fmad_is_honoured_in_both_spellings() {
        assert_eq!(
            strs(&norm(&["-fmad=false", "k.ptx"])),
            ["--fmad=false", "k.ptx"]
        );
        assert_eq!(
            strs(&norm(&["--fmad", "false", "k.ptx"])),
            ["--fmad", "false", "k.ptx"]
        );
    }

    #[test]
    fn unknown_options_pass_through_for_clap_to_reject() {
        assert_eq!(strs(&norm(&["--frobnicate"])), ["--frobnicate"]);
    }

    #[test]
    fn program_named_ptxas_means_compile() {
        let n = command_line(
            ["/usr/bin/ptxas", "-arch", "sm_50", "a.ptx"]
                .map(OsString::from)
                .to_vec(),
        )
        .unwrap();
        assert_eq!(
            strs(&n),
            ["/usr/bin/ptxas", "compile", "--arch", "sm_50", "a.ptx"]
        );
        let n = command_line(
            ["leafold", "ptxas", "-lineinfo"]
                .map(OsString::from)
                .to_vec(),
        )
        .unwrap();
        assert_eq!(strs(&n), ["leafold", "compile", "--generate-line-info"]);
        let n = command_line(["leafold", "disasm", "-e"].map(OsString::from).to_vec()).unwrap();
        assert_eq!(strs(&n), ["leafold", "disasm", "-e"]);
    }
}
