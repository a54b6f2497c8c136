//! The ptxas-compatible command line and batch mode of `leafold compile`: every ptxas option
//! in the brief (as `leafold compile`, `leafold ptxas` and a binary named `ptxas`), the
//! warnings for options that do not apply, and batch compilation of files and directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn leafold() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leafold"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("leafold_ptxas_cli_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn seed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/seed_lea.ptx")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Kernel names in a cubin we wrote, sorted (the cubin lists them in reverse PTX order).
fn kernels(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let c = leafold::cubin::read(&bytes).expect("our cubin reads back");
    let mut names: Vec<String> = c.kernels.iter().map(|k| k.name.clone()).collect();
    names.sort();
    names
}

const TWO_KERNELS: &str = "
.version 7.0
.target sm_50
.address_size 64

.visible .entry first(.param .u64 p)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 7;
    st.global.u32 [%rd2], %r1;
    ret;
}

.visible .entry second(.param .u64 p)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 9;
    st.global.u32 [%rd2+4], %r1;
    ret;
}
";

#[test]
fn binary_named_ptxas_and_ptxas_subcommand_compile() {
    let d = scratch("argv0");
    let ptxas = d.join("ptxas");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_leafold"), &ptxas).unwrap();
    let out = d.join("a.cubin");
    let o = Command::new(&ptxas)
        .args(["-arch=sm_52", "-O3", "--output-file"])
        .arg(&out)
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kernels(&out), ["seed_lea"]);

    let o = Command::new(&ptxas).arg("--version").output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("leafold"), "{}", stdout(&o));

    let out2 = d.join("b.cubin");
    let o = leafold()
        .args(["ptxas", "--gpu-name", "sm_53", "--opt-level", "2", "-o"])
        .arg(&out2)
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kernels(&out2), ["seed_lea"]);
}

#[test]
fn default_output_is_elf_o_and_opt_levels_are_accepted() {
    let d = scratch("elf_o");
    for level in ["-O0", "-O1", "-O2", "-O3"] {
        let _ = std::fs::remove_file(d.join("elf.o"));
        let o = leafold()
            .current_dir(&d)
            .args(["compile", level])
            .arg(seed())
            .output()
            .unwrap();
        assert!(o.status.success(), "{level}: {}", stderr(&o));
        assert!(stderr(&o).is_empty(), "{level}: {}", stderr(&o));
        assert_eq!(kernels(&d.join("elf.o")), ["seed_lea"]);
    }
    let o = leafold()
        .current_dir(&d)
        .args(["compile", "-O7"])
        .arg(seed())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "-O7 is not a ptxas level");
}

#[test]
fn options_that_do_not_apply_warn_and_w_silences_them() {
    let d = scratch("ignored");
    let out = d.join("k.cubin");
    let o = leafold()
        .args([
            "compile",
            "-lineinfo",
            "-g",
            "--fmad=false",
            "-dlcm",
            "ca",
            "-m64",
            "-o",
        ])
        .arg(&out)
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    // (`-c` is not among them: it writes a relocatable object, tests/compile_relocatable.rs;
    // `--fmad=false` is honoured, `ir::contract`.)
    for what in ["-lineinfo", "-g:", "'-dlcm'"] {
        assert!(err.contains(what), "no warning for {what}: {err}");
    }
    assert!(!err.contains("m64"), "-m64 is leafold's behaviour: {err}");
    assert!(
        !err.contains("fmad"),
        "--fmad is an option leafold has: {err}"
    );
    assert_eq!(err.lines().count(), 3, "{err}");
    assert_eq!(kernels(&out), ["seed_lea"]);

    let o = leafold()
        .args(["compile", "-w", "-lineinfo", "--fmad", "true", "-o"])
        .arg(&out)
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn unknown_options_and_help() {
    let o = leafold()
        .args(["compile", "--frobnicate"])
        .arg(seed())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--frobnicate"), "{}", stderr(&o));
    let o = leafold().args(["ptxas", "--help"]).output().unwrap();
    assert!(o.status.success());
    for opt in [
        "--entry",
        "--opt-level",
        "--maxrregcount",
        "--warn-on-spills",
    ] {
        assert!(stdout(&o).contains(opt), "help lacks {opt}");
    }
    let o = leafold().args(["compile"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("No input files"), "{}", stderr(&o));
}

#[test]
fn entry_selects_kernels() {
    let d = scratch("entry");
    let ptx = d.join("two.ptx");
    std::fs::write(&ptx, TWO_KERNELS).unwrap();
    let out = d.join("two.cubin");
    let run = |args: &[&str]| {
        let _ = std::fs::remove_file(&out);
        leafold()
            .arg("compile")
            .args(args)
            .arg("-o")
            .arg(&out)
            .arg(&ptx)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kernels(&out), ["first", "second"]);
    let o = run(&["-e", "second"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kernels(&out), ["second"]);
    let o = run(&["--entry=first,second", "-v"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(kernels(&out), ["first", "second"]);
    assert_eq!(stderr(&o).matches("Compiling entry function").count(), 2);
    let o = run(&["-e", "third"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("'third'"), "{}", stderr(&o));
    assert!(!out.exists());
}

#[test]
fn options_file_expands_in_place() {
    let d = scratch("optf");
    let out = d.join("o.cubin");
    let opts = d.join("opts.txt");
    std::fs::write(&opts, format!("-arch=sm_52\n  -v -o {}\n", out.display())).unwrap();
    let o = leafold()
        .arg("compile")
        .arg("--options-file")
        .arg(&opts)
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("for 'sm_52'"), "{}", stderr(&o));
    assert_eq!(kernels(&out), ["seed_lea"]);
    // A file that names itself stops at the depth limit instead of looping.
    std::fs::write(&opts, format!("-optf {}", opts.display())).unwrap();
    let o = leafold()
        .arg("compile")
        .arg(format!("-optf={}", opts.display()))
        .arg(seed())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nested"), "{}", stderr(&o));
    let o = leafold()
        .args(["compile", "--options-file", "/nonexistent/opts"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn werror_turns_input_warnings_into_failure() {
    let d = scratch("werror");
    let ptx = d.join("new_target.ptx");
    let text = std::fs::read_to_string(seed())
        .unwrap()
        .replace(".target sm_50", ".target sm_70");
    std::fs::write(&ptx, text).unwrap();
    let out = d.join("w.cubin");
    let o = leafold()
        .arg("compile")
        .arg("-o")
        .arg(&out)
        .arg(&ptx)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("newer than sm_53"), "{}", stderr(&o));
    std::fs::remove_file(&out).unwrap();
    let o = leafold()
        .args(["compile", "-w", "-o"])
        .arg(&out)
        .arg(&ptx)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(stderr(&o), "");
    std::fs::remove_file(&out).unwrap();
    let o = leafold()
        .args(["compile", "-Werror", "-o"])
        .arg(&out)
        .arg(&ptx)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("-Werror"), "{}", stderr(&o));
    assert!(!out.exists(), "no output under -Werror failure");
}

#[test]
fn warn_on_spills_reports_spilling_kernels() {
    let d = scratch("spills");
    let out = d.join("s.cubin");
    let o = leafold()
        .args(["compile", "-maxrregcount", "6", "-warn-spills", "-o"])
        .arg(&out)
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "ptxas warning : Registers are spilled to local memory in function 'seed_lea', "
        ),
        "{err}"
    );
    // Without the option, or with enough registers, nothing is said.
    for args in [&["-maxrregcount", "6"][..], &["--warn-on-spills"][..]] {
        let o = leafold()
            .arg("compile")
            .args(args)
            .arg("-o")
            .arg(&out)
            .arg(seed())
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    let o = leafold()
        .args([
            "compile",
            "--maxrregcount=6",
            "--warn-on-spills",
            "-Werror",
            "-o",
        ])
        .arg(&out)
        .arg(seed())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn batch_compiles_a_tree_and_reports_each_failure() {
    let d = scratch("batch");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("nested/deeper")).unwrap();
    std::fs::copy(seed(), src.join("a.ptx")).unwrap();
    std::fs::write(src.join("nested/two.ptx"), TWO_KERNELS).unwrap();
    std::fs::write(
        src.join("nested/deeper/bad.ptx"),
        ".version 7.0\n.target sm_50\nbogus;\n",
    )
    .unwrap();
    std::fs::write(src.join("notes.txt"), "not ptx").unwrap();
    let out = d.join("out");
    let o = leafold()
        .args(["compile", "-j", "2", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.ptx:3:"),
        "the failure names its file and line: {err}"
    );
    assert_eq!(err.lines().last(), Some("2 compiled, 1 failed"), "{err}");
    assert_eq!(kernels(&out.join("a.cubin")), ["seed_lea"]);
    assert_eq!(kernels(&out.join("nested/two.cubin")), ["first", "second"]);
    assert!(!out.join("nested/deeper/bad.cubin").exists());
    assert!(!out.join("notes.cubin").exists());

    // Files given one by one, cubins next to them; all good: exit 0.
    let o = leafold()
        .arg("compile")
        .arg(src.join("a.ptx"))
        .arg(src.join("nested/two.ptx"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().last(), Some("2 compiled, 0 failed"));
    assert_eq!(kernels(&src.join("a.cubin")), ["seed_lea"]);
    assert_eq!(kernels(&src.join("nested/two.cubin")), ["first", "second"]);

    // --emit in batch mode prints each file's dump under a header, in input order.
    let o = leafold()
        .args(["compile", "--emit", "sass"])
        .arg(src.join("nested/two.ptx"))
        .arg(src.join("a.ptx"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let two = text.find("two.ptx").expect("header for two.ptx");
    let a = text.find("a.ptx").expect("header for a.ptx");
    assert!(
        two < a && text[two..a].contains("Function : second"),
        "{text}"
    );
    assert!(text[a..].contains("Function : seed_lea"));

    // A missing input is one failure among the others.
    let o = leafold()
        .arg("compile")
        .arg(src.join("a.ptx"))
        .arg(d.join("missing.ptx"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().last(), Some("1 compiled, 1 failed"));
}

/// Each kernel's stack frame holds only the `.local` variables it names (as ptxas's does):
/// a module of two kernels with their own local arrays reports each one's own size under
/// `-v`, not their sum. Every access is at a run-time index, so ptxas keeps both arrays in
/// memory (16 and 64 bytes of frame; one constant access would put them in registers,
/// `ir::unindex`).
#[test]
fn each_kernel_frames_only_its_own_locals() {
    let ptx = "
.version 7.0
.target sm_50
.address_size 64

.visible .entry small(.param .u64 p, .param .u32 i)
{
    .local .align 4 .b8 a[16];
    .reg .b64 %rd<6>;
    .reg .b32 %r<3>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [i];
    mov.u64 %rd2, a;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.local.u32 [%rd4], %r1;
    ld.local.u32 %r2, [%rd4+4];
    cvta.to.global.u64 %rd5, %rd1;
    st.global.u32 [%rd5], %r2;
    ret;
}

.visible .entry big(.param .u64 p, .param .u32 i)
{
    .local .align 8 .b8 b[64];
    .reg .b64 %rd<6>;
    .reg .b32 %r<3>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [i];
    mov.u64 %rd2, b;
    mul.wide.u32 %rd3, %r1, 8;
    add.u64 %rd4, %rd2, %rd3;
    st.local.u32 [%rd4], %r1;
    ld.local.u32 %r2, [%rd4+8];
    cvta.to.global.u64 %rd5, %rd1;
    st.global.u32 [%rd5], %r2;
    ret;
}
";
    let dir = scratch("frames");
    let src = dir.join("frames.ptx");
    std::fs::write(&src, ptx).unwrap();
    let o = leafold()
        .args(["compile", "-v", "-o"])
        .arg(dir.join("frames.cubin"))
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let log = stderr(&o);
    let frame = |kernel: &str| -> u32 {
        let at = log
            .find(&format!("Function properties for {kernel}\n"))
            .unwrap_or_else(|| panic!("no properties for {kernel}:\n{log}"));
        let line = log[at..].lines().nth(1).unwrap();
        line.split_whitespace().next().unwrap().parse().unwrap()
    };
    assert_eq!((frame("small"), frame("big")), (16, 64), "{log}");
}
