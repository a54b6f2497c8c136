//! `leafold check`: exit codes (0 clean, 1 errors, 2 unreadable file), diagnostics on stderr,
//! `--dump-ast` on stdout.

use std::process::Command;

fn leafold(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run leafold");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn clean_file_exits_0_and_dumps_ast() {
    let (code, stdout, stderr) = leafold(&["check", "--dump-ast", "tests/data/ptx/vectors.ptx"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(stdout.starts_with("module\n  version 8.0\n"), "{stdout}");
    assert!(stdout.contains("instr mov [type:u32] name(tx) special(%tid.x)"));
}

#[test]
fn errors_exit_1_with_rendered_diagnostics() {
    let dir = std::env::temp_dir().join(format!("leafold-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.ptx");
    std::fs::write(
        &bad,
        ".version 7.0\n.target sm_50\n.entry k()\n{\n\tfrob;\n}\n",
    )
    .unwrap();
    let (code, _, stderr) =
        leafold(&["check", "tests/data/ptx/vectors.ptx", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    let expected = format!(
        "{}:5:2: error: unknown opcode 'frob'\n5 |  frob;\n  |  ^^^^\n",
        bad.display()
    );
    assert_eq!(stderr, expected);
}

#[test]
fn warnings_alone_exit_0() {
    let dir = std::env::temp_dir().join(format!("leafold-cli-w-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("w.ptx");
    std::fs::write(&f, ".version 7.0\n.target sm_75\n").unwrap();
    let (code, _, stderr) = leafold(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("warning: target 'sm_75' is newer than sm_53"),
        "{stderr}"
    );
}

#[test]
fn unreadable_file_exits_2() {
    let (code, _, stderr) = leafold(&["check", "tests/data/ptx/does-not-exist.ptx"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read file"), "{stderr}");
}
