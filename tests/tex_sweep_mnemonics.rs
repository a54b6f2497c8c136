//! The texture forms of `scripts/tex_sweep.py` (issue 21's sweep: `tex` with a level,
//! gradients, offsets or a depth reference, on every shape, by slot, texture object and
//! register handle) keep ptxas 11.8's texture instructions: for each form listed in
//! `tests/data/tex_sweep_mnemonics.txt` (every one that matched when it was written, by
//! `--write-matching`) the script compiles the form with ptxas and with this crate's
//! `leafold` binary and compares the sequences of TEX/TEXS/TLD/TLDS/TLD4/TLD4S/TXD/TXQ
//! mnemonics with their modifiers and non-register operands. A form that stops compiling or
//! picks another instruction fails the test. Needs the oracle and `python3` (skips with a
//! notice otherwise).

use leafold::oracle::Oracle;
use std::process::Command;

#[test]
fn sweep_forms_keep_ptxas_texture_instructions() {
    let Some(oracle) = Oracle::for_test("tex_sweep_mnemonics") else {
        return;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("NOTICE: tex_sweep_mnemonics skipped: python3 not found");
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/tex_sweep.py"))
        .arg(env!("CARGO_BIN_EXE_leafold"))
        .arg("--expect")
        .arg(format!("{root}/tests/data/tex_sweep_mnemonics.txt"))
        .env("LEAFOLD_ORACLE", oracle.ptxas.parent().unwrap())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tex_sweep.py --expect failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Not vacuous: the script compared forms.
    assert!(text.contains("total: compile"), "{text}");
}
