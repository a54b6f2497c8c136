//! `leafold compile` as a ptxas stand-in: option spellings, `-v` lines, exit codes and
//! diagnostics.

use std::path::PathBuf;
use std::process::Command;

fn leafold() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leafold"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("leafold_compile_cli_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn seed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/seed_lea.ptx")
}

#[test]
fn ptxas_style_arch_and_verbose() {
    let d = scratch("arch");
    for arch_args in [
        &["-arch", "sm_52"][..],
        &["-arch=sm_52"][..],
        &["--gpu-name", "sm_52"][..],
    ] {
        let out_path = d.join("seed.cubin");
        let _ = std::fs::remove_file(&out_path);
        let o = leafold()
            .arg("compile")
            .args(arch_args)
            .arg("-v")
            .arg(seed())
            .arg("-o")
            .arg(&out_path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{arch_args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines[0], "ptxas info    : 0 bytes gmem");
        assert_eq!(
            lines[1],
            "ptxas info    : Compiling entry function 'seed_lea' for 'sm_52'"
        );
        assert_eq!(lines[2], "ptxas info    : Function properties for seed_lea");
        assert_eq!(
            lines[3],
            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
        );
        assert!(
            lines[4].starts_with("ptxas info    : Used ")
                && lines[4].ends_with(" registers, 368 bytes cmem[0]"),
            "{}",
            lines[4]
        );
        let cubin = std::fs::read(&out_path).unwrap();
        let c = leafold::cubin::read(&cubin).unwrap();
        assert_eq!(c.arch(), 52, "{arch_args:?}");
    }
}

#[test]
fn emit_stages_print_to_stdout() {
    for (stage, needle) in [
        ("ir", "seed_lea"),
        ("vcode", "LEA"),
        ("alloc", "LEA"),
        ("sass", "MOV R1, c[0x0][0x20]"),
    ] {
        let d = scratch(stage);
        let o = leafold()
            .current_dir(&d)
            .args(["compile", "--emit", stage])
            .arg(seed())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{stage}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains(needle), "{stage}:\n{stdout}");
    }
}

/// `-o -` is standard output: the text of `--emit ir|sass|...`, or the cubin itself; never
/// a file named `-`.
#[test]
fn dash_output_is_stdout() {
    let d = scratch("dash");
    let o = leafold()
        .current_dir(&d)
        .args(["compile", "--emit", "sass", "-o", "-"])
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("MOV R1, c[0x0][0x20]"));
    assert!(!d.join("-").exists(), "`-o -` wrote a file named -");
    let o = leafold()
        .current_dir(&d)
        .args(["compile", "-o", "-"])
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!d.join("-").exists(), "`-o -` wrote a file named -");
    let file = d.join("seed.cubin");
    let f = leafold()
        .args(["compile", "-o"])
        .arg(&file)
        .arg(seed())
        .output()
        .unwrap();
    assert!(f.status.success());
    assert_eq!(
        o.stdout,
        std::fs::read(&file).unwrap(),
        "stdout is the cubin"
    );
}

#[test]
fn bad_arch_and_bad_input_fail_cleanly() {
    let d = scratch("bad");
    let o = leafold()
        .current_dir(&d)
        .args(["compile", "-arch=sm_70"])
        .arg(seed())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sm_70"));

    let bad = d.join("bad.ptx");
    std::fs::write(
        &bad,
        ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k()\n{\n    frobnicate.u32 %r1;\n    ret;\n}\n",
    )
    .unwrap();
    let o = leafold()
        .current_dir(&d)
        .arg("compile")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("bad.ptx:6:"), "{stderr}");
    assert!(!d.join("elf.o").exists(), "no output on error");

    let o = leafold()
        .args(["compile", "/nonexistent/x.ptx"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn maxrregcount_is_recorded() {
    let d = scratch("maxreg");
    let out_path = d.join("k.cubin");
    let o = leafold()
        .args(["compile", "--maxrregcount", "32"])
        .arg(seed())
        .arg("-o")
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = leafold::cubin::read(&std::fs::read(&out_path).unwrap()).unwrap();
    let k = &c.kernels[0];
    assert!(k.regcount <= 32);
    assert!(
        k.info
            .iter()
            .any(|a| matches!(a, leafold::cubin::Attribute::MaxRegCount(32))),
        "{:?}",
        k.info
    );
}
