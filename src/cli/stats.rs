//! `leafold compile --stats`: per-kernel folding statistics as JSON (one object per input
//! file, on stdout).
//!
//! In: the kernels' [`KernelReport`]s for the chosen `--fold`, and those of the same file
//! compiled with `--fold=none` (the baseline "instructions saved" is measured against).
//! Out: `{"file": .., "fold": .., "kernels": [{"name", "instructions", "lea",
//! "address_arith", "saved_vs_none", "chains_formed", "chains_shared", "plg_folds",
//! "disp_folds", "disp_in_chain", "rejected": {reason: count}}]}`. Written by hand (a few
//! flat fields do not warrant a serialisation crate); strings are escaped per RFC 8259.

use crate::driver::KernelReport;
use crate::lower::Fold;
use std::fmt::Write as _;

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The `--stats` object for one file. `baseline` holds the `--fold=none` reports (matched by
/// kernel name); a kernel missing there gets `"saved_vs_none": null`.
pub fn stats_json(
    file: &str,
    fold: Fold,
    kernels: &[KernelReport],
    baseline: &[KernelReport],
) -> String {
    let mut s = format!(
        "{{\"file\": {}, \"fold\": {}, \"kernels\": [",
        json_str(file),
        json_str(fold.name())
    );
    for (n, k) in kernels.iter().enumerate() {
        let f = &k.fold;
        let saved = baseline
            .iter()
            .find(|b| b.name == k.name)
            .map_or("null".to_string(), |b| {
                (i64::from(b.fold.sass.instructions) - i64::from(f.sass.instructions)).to_string()
            });
        let rejected: Vec<String> = f
            .rejected
            .iter()
            .map(|(why, n)| format!("{}: {n}", json_str(why)))
            .collect();
        let _ = write!(
            s,
            "{}\n  {{\"name\": {}, \"instructions\": {}, \"lea\": {}, \"address_arith\": {}, \
             \"saved_vs_none\": {saved}, \"chains_formed\": {}, \"chains_shared\": {}, \
             \"plg_folds\": {}, \"disp_folds\": {}, \"disp_in_chain\": {}, \"rejected\": {{{}}}}}",
            if n == 0 { "" } else { "," },
            json_str(&k.name),
            f.sass.instructions,
            f.sass.lea,
            f.sass.address_arith,
            f.chains_formed,
            f.chains_shared,
            f.plg_folds,
            f.disp_folds,
            f.disp_in_chain,
            rejected.join(", ")
        );
    }
    s.push_str("\n]}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }
}
