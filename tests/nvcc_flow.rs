//! The nvcc build flow with leafold in place of ptxas (issue 22): CUDA sources written for this
//! test (`tests/data/nvcc-flow/`) are built by nvcc 11.8 with `-arch=sm_50` as `-cubin`, `-c`,
//! a linked executable and with `-rdc=true` (separate compilation: leafold's relocatable
//! object, linked by nvlink with `libcudadevrt`). Each result's `cuobjdump -sass` must list
//! exactly the SASS that `leafold compile` writes for the same PTX (and not ptxas's, which
//! differs for these kernels), and the `ptxas` wrapper must have been called, so the build
//! really ran on leafold.
//!
//! The toolkit is the tree `scripts/install-nvcc.sh` makes: `$LEAFOLD_NVCC`, else
//! `~/.cache/leafold/nvcc118`, else `/opt/cuda118`. The test makes a copy of it in a scratch
//! directory (links, with `nvcc` and its profile copied so that `$(_HERE_)` is the copy's
//! `bin/`) whose `bin/ptxas` is a script running `leafold ptxas "$@"`. Without the toolkit the
//! tests print a notice and pass, unless `LEAFOLD_REQUIRE_ORACLE=1` (CI), where a missing
//! toolkit is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvcc-flow");

/// The nvcc 11.8 tree, or `None` after a notice (a failure when CI requires it).
fn toolkit(test: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("LEAFOLD_NVCC") {
        candidates.push(PathBuf::from(d));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(Path::new(&home).join(".cache/leafold/nvcc118"));
    }
    candidates.push(PathBuf::from("/opt/cuda118"));
    let found = candidates.into_iter().find(|d| {
        d.join("bin/nvcc").is_file()
            && d.join("bin/nvlink").is_file()
            && d.join("lib64/libcudadevrt.a").is_file()
    });
    if found.is_none() {
        if std::env::var("LEAFOLD_REQUIRE_ORACLE").as_deref() == Ok("1") {
            panic!("{test}: LEAFOLD_REQUIRE_ORACLE=1 but nvcc 11.8 was not found (run scripts/install-nvcc.sh)");
        }
        eprintln!(
            "NOTICE: {test} skipped: nvcc 11.8 not installed; run scripts/install-nvcc.sh and \
             export LEAFOLD_NVCC=~/.cache/leafold/nvcc118"
        );
    }
    found
}

/// A scratch copy of the toolkit whose `ptxas` is leafold, and a work directory.
struct Flow {
    root: PathBuf,
    work: PathBuf,
    real: PathBuf,
}

impl Flow {
    fn new(test: &str, real: PathBuf) -> Flow {
        let root =
            std::env::temp_dir().join(format!("leafold_nvcc_flow_{}_{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let bin = root.join("toolkit/bin");
        std::fs::create_dir_all(&bin).unwrap();
        for d in ["include", "lib64", "nvvm"] {
            std::os::unix::fs::symlink(real.join(d), root.join("toolkit").join(d)).unwrap();
        }
        for e in std::fs::read_dir(real.join("bin")).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            let to = bin.join(&name);
            match name.to_str() {
                Some("ptxas") => {}
                // Copied, not linked: nvcc finds its profile and tools next to its own path.
                Some("nvcc" | "nvcc.profile") => {
                    std::fs::copy(e.path(), &to).unwrap();
                }
                _ => std::os::unix::fs::symlink(e.path(), &to).unwrap(),
            }
        }
        let log = root.join("ptxas.log");
        let wrapper = format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' ptxas \"$@\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_leafold")
        );
        std::fs::write(bin.join("ptxas"), wrapper).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("ptxas"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        Flow { root, work, real }
    }

    fn tool(&self, name: &str) -> PathBuf {
        self.root.join("toolkit/bin").join(name)
    }

    /// Run a tool of the copy in the work directory; its stdout, or a panic with its stderr.
    fn run(&self, tool: &str, args: &[&str]) -> String {
        // A tool copied here moments ago may still be open for writing in a child that
        // another test thread forked meanwhile ("text file busy", ETXTBSY): retry briefly.
        let mut tries = 0;
        let out = loop {
            match Command::new(self.tool(tool))
                .args(args)
                .current_dir(&self.work)
                .output()
            {
                Err(e) if e.raw_os_error() == Some(26) && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => break r.unwrap_or_else(|e| panic!("cannot run {tool}: {e}")),
            }
        };
        assert!(
            out.status.success(),
            "{tool} {}: failed\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The ptxas command lines the wrapper saw.
    fn ptxas_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.root.join("ptxas.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// `cuobjdump -sass` of `file`: per function name, its instruction lines (address and
    /// encoding comments removed, so a linked image and a cubin compare equal).
    fn sass(&self, file: &Path) -> Vec<(String, Vec<String>)> {
        let text = self.run("cuobjdump", &["-sass", file.to_str().unwrap()]);
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for line in text.lines() {
            if let Some(name) = line.trim().strip_prefix("Function : ") {
                out.push((name.to_string(), Vec::new()));
            } else if let (Some(f), Some(at)) = (out.last_mut(), line.find("*/")) {
                let inst = line[at + 2..].split("/*").next().unwrap_or("").trim();
                if line.trim_start().starts_with("/*") && !inst.is_empty() {
                    f.1.push(inst.to_string());
                }
            }
        }
        out
    }

    /// The SASS of `kernel` as leafold compiles `ptx` on its own, and as NVIDIA's ptxas does;
    /// with `compile_only`, as relocatable objects (`-c`: what `-rdc=true` builds, and the
    /// only way either compiles a kernel that calls the device runtime).
    fn reference(
        &self,
        ptx: &Path,
        kernel: &str,
        compile_only: bool,
    ) -> (Vec<String>, Vec<String>) {
        let c: &[&str] = if compile_only { &["-c"] } else { &[] };
        let ours = self.work.join("reference_leafold.cubin");
        let st = Command::new(env!("CARGO_BIN_EXE_leafold"))
            .args(["compile", "-arch", "sm_50"])
            .args(c)
            .arg(ptx)
            .arg("-o")
            .arg(&ours)
            .status()
            .unwrap();
        assert!(st.success(), "leafold compile {}", ptx.display());
        let theirs = self.work.join("reference_ptxas.cubin");
        let st = Command::new(self.real.join("bin/ptxas"))
            .args(["-arch=sm_50"])
            .args(c)
            .arg(ptx)
            .arg("-o")
            .arg(&theirs)
            .status()
            .unwrap();
        assert!(st.success(), "ptxas {}", ptx.display());
        let pick = |file: &Path| {
            self.sass(file)
                .into_iter()
                .find(|(n, _)| n == kernel)
                .map(|(_, s)| s)
                .unwrap_or_else(|| panic!("no {kernel} in {}", file.display()))
        };
        (pick(&ours), pick(&theirs))
    }

    /// Assert that `file` holds `kernel` with leafold's SASS for `ptx`, not ptxas's.
    fn assert_leafold_code(&self, file: &Path, kernel: &str, ptx: &Path) {
        self.assert_leafold_code_as(file, kernel, ptx, false);
    }

    /// [`Flow::assert_leafold_code`], the references compiled with `-c` when `compile_only`.
    fn assert_leafold_code_as(&self, file: &Path, kernel: &str, ptx: &Path, compile_only: bool) {
        let (ours, theirs) = self.reference(ptx, kernel, compile_only);
        assert_ne!(
            ours, theirs,
            "{kernel}: leafold's and ptxas's SASS are equal, so the check proves nothing"
        );
        let got = self.sass(file);
        let k = got.iter().find(|(n, _)| n == kernel).unwrap_or_else(|| {
            panic!(
                "{}: no function {kernel} in cuobjdump -sass",
                file.display()
            )
        });
        assert_eq!(
            k.1,
            ours,
            "{}: {kernel} is not leafold's code",
            file.display()
        );
    }
}

impl Flow {
    /// The one cubin of the executable `exe` in the work directory (`cuobjdump -xelf`).
    fn linked_cubin(&self, exe: &str) -> leafold::cubin::Cubin {
        let dir = self.work.join(format!("{exe}.elf"));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = self.work.join(exe);
        let st = Command::new(self.tool("cuobjdump"))
            .args(["-xelf", "all"])
            .arg(&exe)
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(st.success(), "cuobjdump -xelf all {}", exe.display());
        let linked = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "cubin"))
            .expect("the linked cubin");
        leafold::cubin::read(&std::fs::read(&linked).unwrap()).unwrap()
    }
}

/// The instructions of function `name` in the linked cubin `c` (control words left out).
fn code_of(c: &leafold::cubin::Cubin, name: &str) -> Vec<leafold::sm50::Inst> {
    let text = c
        .section(&format!(".text.{name}"))
        .unwrap_or_else(|| panic!("no code of {name}"));
    text.data
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .enumerate()
        .filter(|(n, _)| n % 4 != 0)
        .filter_map(|(_, w)| leafold::sm50::decode(w).ok())
        .collect()
}

impl Drop for Flow {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

const SAXPY: &str = "_Z5saxpyifPKfPfi";

/// `nvcc -cubin`, `-c` and a linked executable, each with leafold's code.
#[test]
fn cubin_object_and_executable() {
    let Some(real) = toolkit("nvcc_flow::cubin_object_and_executable") else {
        return;
    };
    let f = Flow::new("whole", real);
    let src = format!("{DATA}/saxpy.cu");
    f.run("nvcc", &["-arch=sm_50", "-ptx", &src, "-o", "saxpy.ptx"]);
    let ptx = f.work.join("saxpy.ptx");
    assert!(f.ptxas_calls().is_empty(), "-ptx runs no ptxas");

    f.run(
        "nvcc",
        &["-arch=sm_50", "-cubin", &src, "-o", "saxpy.cubin"],
    );
    f.assert_leafold_code(&f.work.join("saxpy.cubin"), SAXPY, &ptx);
    f.run("nvcc", &["-arch=sm_50", "-c", &src, "-o", "saxpy.o"]);
    f.assert_leafold_code(&f.work.join("saxpy.o"), SAXPY, &ptx);
    f.run("nvcc", &["-arch=sm_50", &src, "-o", "saxpy"]);
    f.assert_leafold_code(&f.work.join("saxpy"), SAXPY, &ptx);
    let calls = f.ptxas_calls();
    assert_eq!(calls.len(), 3, "one ptxas call per build: {calls:?}");
    assert!(
        calls.iter().all(|c| !c.contains("--compile-only")),
        "{calls:?}"
    );
}

/// `-rdc=true`: ptxas is called with `--compile-only`; leafold's relocatable object goes
/// through nvlink (with libcudadevrt, as nvcc links it) into the executable.
#[test]
fn relocatable_device_code_links() {
    let Some(real) = toolkit("nvcc_flow::relocatable_device_code_links") else {
        return;
    };
    let f = Flow::new("rdc", real);
    let src = format!("{DATA}/saxpy.cu");
    f.run(
        "nvcc",
        &["-arch=sm_50", "-rdc=true", "-ptx", &src, "-o", "saxpy.ptx"],
    );
    let ptx = f.work.join("saxpy.ptx");
    f.run(
        "nvcc",
        &[
            "-arch=sm_50",
            "-rdc=true",
            &src,
            "-o",
            "saxpy_rdc",
            "-lcudadevrt",
        ],
    );
    let calls = f.ptxas_calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].contains("--compile-only"), "{calls:?}");
    f.assert_leafold_code(&f.work.join("saxpy_rdc"), SAXPY, &ptx);

    // The object on its own: nvcc -dc, then nvlink by hand with libcudadevrt.
    f.run("nvcc", &["-arch=sm_50", "-dc", &src, "-o", "saxpy_dc.o"]);
    f.run("cuobjdump", &["-xelf", "all", "saxpy_dc.o"]);
    let cubin = std::fs::read_dir(&f.work)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "cubin") && p.to_string_lossy().contains("saxpy")
        })
        .expect("cuobjdump -xelf extracts the object's cubin");
    let c = leafold::cubin::read(&std::fs::read(&cubin).unwrap()).unwrap();
    assert_eq!(c.header.e_type, 1, "ET_REL");
    let lib = f.real.join("lib64");
    f.run(
        "nvlink",
        &[
            "-arch=sm_50",
            cubin.to_str().unwrap(),
            "-L",
            lib.to_str().unwrap(),
            "-lcudadevrt",
            "-o",
            "linked.cubin",
        ],
    );
    f.assert_leafold_code(&f.work.join("linked.cubin"), SAXPY, &ptx);
}

/// Two `.cu` files calling each other's device functions (`-rdc=true`).
#[test]
fn two_files_calling_each_other() {
    let Some(real) = toolkit("nvcc_flow::two_files_calling_each_other") else {
        return;
    };
    let f = Flow::new("two", real);
    let (a, b) = (format!("{DATA}/rdc_main.cu"), format!("{DATA}/rdc_lib.cu"));
    f.run("nvcc", &["-arch=sm_50", "-rdc=true", &a, &b, "-o", "two"]);
    assert_eq!(f.ptxas_calls().len(), 2);
    for (src, ptx) in [(&a, "main.ptx"), (&b, "lib.ptx")] {
        f.run(
            "nvcc",
            &["-arch=sm_50", "-rdc=true", "-ptx", src, "-o", ptx],
        );
    }
    // The kernel and both device functions, each from its own object, are leafold's code.
    for (function, ptx) in [
        ("_Z5applyPii", "main.ptx"),
        ("_Z11offset_maini", "main.ptx"),
        ("_Z9scale_libi", "lib.ptx"),
    ] {
        f.assert_leafold_code_as(&f.work.join("two"), function, &f.work.join(ptx), true);
    }
}

/// Separate compilation of a file with no kernel whose device function reaches a recursive
/// one (`rec_lib.cu`: `fib_xor` calls the file-local, doubly recursive `fib`). The function
/// used to be left out of leafold's object ("unsupported recursive call"), so nvlink failed
/// on the kernel's unresolved call; now nvlink links the executable and its `fib_xor` is
/// leafold's code (with `fib` placed after it).
#[test]
fn recursive_function_of_an_object() {
    let Some(real) = toolkit("nvcc_flow::recursive_function_of_an_object") else {
        return;
    };
    let f = Flow::new("rec", real);
    let (a, b) = (format!("{DATA}/rec_main.cu"), format!("{DATA}/rec_lib.cu"));
    f.run("nvcc", &["-arch=sm_50", "-rdc=true", &a, &b, "-o", "rec"]);
    assert_eq!(f.ptxas_calls().len(), 2);
    f.run(
        "nvcc",
        &["-arch=sm_50", "-rdc=true", "-ptx", &b, "-o", "lib.ptx"],
    );
    f.assert_leafold_code_as(
        &f.work.join("rec"),
        "_Z7fib_xorj",
        &f.work.join("lib.ptx"),
        true,
    );
}

/// Separate compilation with shared memory and literals (`shared_main.cu`, `shared_lib.cu`):
/// the kernel has its own `__shared__` array and an f64 literal in bank 2; the device
/// function of the other file has its own array and an f32 literal. nvlink must place the
/// function's array after the kernel's in the kernel's window (the kernel object names its
/// window by a symbol, the function's `MOV32I` is relocated) and its literal after the
/// kernel's in bank 2 (the `c[0x2]` operand relocated): read back from the linked cubin.
/// Before, the function was left out with a warning; with ptxas's object for it, leafold's
/// kernel object still made nvlink lay both arrays at offset 0.
#[test]
fn shared_data_across_objects() {
    let Some(real) = toolkit("nvcc_flow::shared_data_across_objects") else {
        return;
    };
    let f = Flow::new("shared", real);
    let (a, b) = (
        format!("{DATA}/shared_main.cu"),
        format!("{DATA}/shared_lib.cu"),
    );
    f.run("nvcc", &["-arch=sm_50", "-rdc=true", &a, &b, "-o", "sh"]);
    assert_eq!(f.ptxas_calls().len(), 2);
    let c = f.linked_cubin("sh");
    let window = c
        .section(".nv.shared._Z5stagePiPd")
        .expect("the kernel's window");
    assert_eq!(
        window.size, 0x200,
        "the kernel's 256 bytes and the function's 256"
    );
    let insts = code_of(&c, "_Z9stage_libi");
    use leafold::sm50::Field;
    assert_eq!(shared_address(&insts), 0x100, "after the kernel's array");
    let lit = insts
        .iter()
        .find(|i| i.get(Field::Cbk) == Some(2))
        .expect("the literal's operand");
    let at = lit.get(Field::Cbo).unwrap() as usize * 4;
    assert!(at >= 8, "after the kernel's f64 literal: {at:#x}");
    let bank2 = c
        .section(".nv.constant2._Z5stagePiPd")
        .expect("the kernel's bank 2");
    let word = u32::from_le_bytes(bank2.data[at..at + 4].try_into().unwrap());
    assert!(
        [1.234_567_8f32.to_bits(), 0.765_432_1f32.to_bits()].contains(&word),
        "{word:#x} at c[0x2][{at:#x}]"
    );
    // Both functions are leafold's code (ptxas's differ); the function's relocated fields
    // aside, which the reference objects leave 0.
    for src in [&a, &b] {
        let ptx = format!(
            "{}.ptx",
            Path::new(src).file_stem().unwrap().to_str().unwrap()
        );
        f.run(
            "nvcc",
            &["-arch=sm_50", "-rdc=true", "-ptx", src, "-o", &ptx],
        );
    }
    f.assert_leafold_code_as(
        &f.work.join("sh"),
        "_Z5stagePiPd",
        &f.work.join("shared_main.ptx"),
        true,
    );
    let (ours, theirs) = f.reference(&f.work.join("shared_lib.ptx"), "_Z9stage_libi", true);
    assert_ne!(ours, theirs);
    let got = f.sass(&f.work.join("sh"));
    let got = &got.iter().find(|(n, _)| n == "_Z9stage_libi").unwrap().1;
    assert_eq!(opcodes(got), opcodes(&ours));
}

/// The linked address a function's or kernel's code gives its `.shared` array: the immediate
/// of its first relocated `MOV32I` (0 in the object; a window offset, below 0x1000, linked).
fn shared_address(insts: &[leafold::sm50::Inst]) -> u64 {
    use leafold::sm50::{Field, Form};
    insts
        .iter()
        .find(|i| i.form == Form::MOV32I && i.get(Field::Imm).is_some_and(|k| k < 0x1000))
        .and_then(|i| i.get(Field::Imm))
        .expect("the array's address")
}

/// The opcodes of a `cuobjdump -sass` listing (relocated fields differ between an object and
/// the linked executable).
fn opcodes(listing: &[String]) -> Vec<String> {
    listing
        .iter()
        .map(|t| t.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

/// Dynamically sized `extern __shared__` arrays across objects (`-rdc=true`): leafold's
/// objects leave the array an undefined symbol that each use is relocated against, as
/// ptxas's do, and nvlink places it after the kernel's whole static window. A function of
/// `dyn_lib.cu` using the array (it was left out of the object before, so the link failed)
/// gets 0x80, after the calling kernel's 128 bytes; a kernel using its own array and calling
/// `shared_lib.cu`'s function, whose 256-byte array nvlink adds to the kernel's window, gets
/// 0x100 (leafold's kernel code addressed it at 0 before, over the function's array). Both
/// are leafold's code (the opcodes of `leafold -c`'s and not ptxas's).
#[test]
fn dynamic_shared_across_objects() {
    let Some(real) = toolkit("nvcc_flow::dynamic_shared_across_objects") else {
        return;
    };
    let f = Flow::new("dynshared", real);
    for (main, lib, exe, kernel, user, window, at) in [
        (
            "dyn_main",
            "dyn_lib",
            "dyn",
            "_Z9dyn_stagePi",
            "_Z7dyn_libi",
            0x80,
            0x80,
        ),
        (
            "dyn_own_main",
            "shared_lib",
            "dyn_own",
            "_Z7dyn_ownPi",
            "_Z7dyn_ownPi",
            0x100,
            0x100,
        ),
    ] {
        let srcs = [main, lib].map(|n| format!("{DATA}/{n}.cu"));
        f.run(
            "nvcc",
            &["-arch=sm_50", "-rdc=true", &srcs[0], &srcs[1], "-o", exe],
        );
        let c = f.linked_cubin(exe);
        let w = c
            .section(&format!(".nv.shared.{kernel}"))
            .expect("the kernel's window");
        assert_eq!(w.size, window, "{exe}: the static window");
        assert_eq!(
            shared_address(&code_of(&c, user)),
            at,
            "{exe}: the dynamic array after the static window"
        );
        let (name, src) = if user == kernel {
            (main, &srcs[0])
        } else {
            (lib, &srcs[1])
        };
        let ptx = format!("{name}.ptx");
        f.run(
            "nvcc",
            &["-arch=sm_50", "-rdc=true", "-ptx", src, "-o", &ptx],
        );
        let (ours, theirs) = f.reference(&f.work.join(&ptx), user, true);
        assert_ne!(ours, theirs, "{user}: the check would prove nothing");
        let got = f.sass(&f.work.join(exe));
        let got = &got.iter().find(|(n, _)| n == user).unwrap().1;
        assert_eq!(
            opcodes(got),
            opcodes(&ours),
            "{exe}: {user} is leafold's code"
        );
    }
    assert_eq!(f.ptxas_calls().len(), 4);
}

/// An f64 literal of a function of another object keeps its 8-byte alignment in the calling
/// kernel's bank 2: the kernel's pool is one f32 (4 bytes), so nvlink must place the
/// function's `.nv.constant2` at 0x8, as it does for ptxas's objects (`DFMA R4, R4,
/// c[0x2][0x8], R6`). The writer gives a function's pool of 8 bytes or more alignment 8.
#[test]
fn f64_literal_across_objects_stays_aligned() {
    let Some(real) = toolkit("nvcc_flow::f64_literal_across_objects_stays_aligned") else {
        return;
    };
    let f = Flow::new("f64lit", real);
    let srcs = ["f64lit_main", "f64lit_lib"].map(|n| format!("{DATA}/{n}.cu"));
    f.run(
        "nvcc",
        &["-arch=sm_50", "-rdc=true", &srcs[0], &srcs[1], "-o", "lit"],
    );
    assert_eq!(f.ptxas_calls().len(), 2);
    let c = f.linked_cubin("lit");
    use leafold::sm50::Field;
    let bank2 = c
        .section(".nv.constant2._Z9lit_stagePfPd")
        .expect("the kernel's bank 2");
    let insts = code_of(&c, "_Z9scale_f64d");
    let reads: Vec<usize> = insts
        .iter()
        .filter(|i| i.get(Field::Cbk) == Some(2))
        .map(|i| i.get(Field::Cbo).unwrap() as usize * 4)
        .collect();
    assert!(
        !reads.is_empty(),
        "the function reads its literal from bank 2"
    );
    let kernel_reads = code_of(&c, "_Z9lit_stagePfPd")
        .iter()
        .filter(|i| i.get(Field::Cbk) == Some(2))
        .count();
    assert!(kernel_reads > 0, "the kernel has a literal of its own");
    let want = 1.000_000_000_1f64.to_bits();
    for at in reads {
        assert_eq!(
            at % 8,
            0,
            "the f64 literal at c[0x2][{at:#x}] is not 8-aligned"
        );
        assert!(at >= 8, "after the kernel's literal: {at:#x}");
        let got = u64::from_le_bytes(bank2.data[at..at + 8].try_into().unwrap());
        assert!(
            got == want || got == 0.25f64.to_bits(),
            "{got:#x} at c[0x2][{at:#x}]"
        );
    }
}

/// A dynamic-parallelism kernel linked against libcudadevrt.
#[test]
fn dynamic_parallelism_links_with_cudadevrt() {
    let Some(real) = toolkit("nvcc_flow::dynamic_parallelism_links_with_cudadevrt") else {
        return;
    };
    let f = Flow::new("cdp", real);
    let src = format!("{DATA}/cdp.cu");
    f.run(
        "nvcc",
        &["-arch=sm_50", "-rdc=true", &src, "-o", "cdp", "-lcudadevrt"],
    );
    f.run(
        "nvcc",
        &["-arch=sm_50", "-rdc=true", "-ptx", &src, "-o", "cdp.ptx"],
    );
    f.assert_leafold_code_as(
        &f.work.join("cdp"),
        "_Z6parentPii",
        &f.work.join("cdp.ptx"),
        true,
    );
}

/// printf (every argument class), malloc/free and assert: calls to system functions, left
/// unresolved for the driver, in a cubin and through `-rdc=true` and nvlink.
#[test]
fn system_calls_build_whole_and_separately() {
    let Some(real) = toolkit("nvcc_flow::system_calls_build_whole_and_separately") else {
        return;
    };
    let f = Flow::new("syscalls", real);
    let src = format!("{DATA}/syscalls.cu");
    let kernel = "_Z6reportPKdPii";
    f.run("nvcc", &["-arch=sm_50", "-ptx", &src, "-o", "syscalls.ptx"]);
    let ptx = f.work.join("syscalls.ptx");
    f.run(
        "nvcc",
        &["-arch=sm_50", "-cubin", &src, "-o", "syscalls.cubin"],
    );
    f.assert_leafold_code(&f.work.join("syscalls.cubin"), kernel, &ptx);
    f.run(
        "nvcc",
        &["-arch=sm_50", "-rdc=true", &src, "-o", "syscalls_rdc"],
    );
    f.assert_leafold_code(&f.work.join("syscalls_rdc"), kernel, &ptx);
    let calls = f.ptxas_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].contains("--compile-only"), "{calls:?}");
}

/// Two objects that both define `.const` variables: nvlink concatenates their
/// `.nv.constant3`, so each use of bank 3 must be relocated, in both link orders: the constant
/// ALU operands leafold's selection reads `.const` words as (`MOV R, c[0x3][..]`, `IADD R, R,
/// c[0x3][..]`, as ptxas), and a `MOV` from a hand-made object.
#[test]
fn objects_with_constants_link() {
    let Some(real) = toolkit("nvcc_flow::objects_with_constants_link") else {
        return;
    };
    let f = Flow::new("constants", real);
    let ptx = |name: &str, var: &str, first: u8| {
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n\
             .visible .const .align 4 .b8 {var}[16] = {{{first},0,0,0,2,0,0,0,3,0,0,0,4,0,0,0}};\n\
             .visible .entry {name}(.param .u64 p)\n{{\n  .reg .b32 %r<3>; .reg .b64 %rd<3>;\n\
             ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n\
             ld.const.u32 %r1, [{var}+8];\n  ld.const.u32 %r2, [{var}+4];\n\
             add.s32 %r1, %r1, %r2;\n  st.global.u32 [%rd2], %r1;\n  ret;\n}}\n"
        )
    };
    for (k, var, first) in [("e1", "t1", 1), ("e2", "t2", 5)] {
        std::fs::write(f.work.join(format!("{k}.ptx")), ptx(k, var, first)).unwrap();
        let st = Command::new(env!("CARGO_BIN_EXE_leafold"))
            .args(["ptxas", "-arch=sm_50", "-c"])
            .arg(f.work.join(format!("{k}.ptx")))
            .arg("-o")
            .arg(f.work.join(format!("{k}.cubin")))
            .status()
            .unwrap();
        assert!(st.success());
    }
    // A constant operand: `MOV R0, c[0x3][0x8]` (ptxas's encoding) in a hand-made object.
    let mov = 0x4c98_078c_0027_0000u64;
    assert_eq!(
        leafold::sm50::print(&leafold::sm50::decode(mov).unwrap(), 0, 0),
        "MOV R0, c[0x3][0x8]"
    );
    let exit = 0xe300_0000_0007_000fu64;
    let mut k =
        leafold::cubin::KernelSpec::new("e3", vec![0x001f_8000_fc00_07ff, mov, exit, exit], 4);
    k.exit_offsets = vec![0x10];
    let exec = leafold::cubin::write(&leafold::cubin::CubinSpec {
        arch: 50,
        ptx_arch: 50,
        address_bits: 64,
        kernels: vec![k],
        constant3: Some(leafold::cubin::DataSpec {
            size: 16,
            align: 4,
            init: vec![7; 16],
            symbols: vec![("t3".into(), 0, 16)],
        }),
        global_init: None,
        global: None,
        strtab_order: None,
        handles: Vec::new(),
        symbol_order: None,
        abi_version: 7,
        texmode_independent: false,
        samplers: Vec::new(),
        data_relocs: Vec::new(),
        object_shared: None,
    });
    let object = leafold::cubin::relocatable(&exec, &["t3".to_string()]).unwrap();
    std::fs::write(f.work.join("e3.cubin"), object).unwrap();
    let lines = |order: &[&str]| -> Vec<String> {
        let mut args = vec!["-arch=sm_50"];
        args.extend_from_slice(order);
        args.extend_from_slice(&["-o", "linked.cubin"]);
        f.run("nvlink", &args);
        f.sass(&f.work.join("linked.cubin"))
            .into_iter()
            .map(|(name, insts)| {
                // The opcode and the operand (registers are the allocator's business).
                let consts: Vec<String> = insts
                    .iter()
                    .filter_map(|i| {
                        let at = i.find("c[0x3]")?;
                        let op = i.split_whitespace().next()?;
                        Some(format!("{op} {}", i[at..].trim_end_matches([' ', ';'])))
                    })
                    .collect();
                format!("{name}: {}", consts.join(" | "))
            })
            .collect()
    };
    let mut got = lines(&["e1.cubin", "e2.cubin", "e3.cubin"]);
    got.sort();
    assert_eq!(
        got,
        [
            "e1: MOV c[0x3][0x8] | IADD c[0x3][0x4]",
            "e2: MOV c[0x3][0x18] | IADD c[0x3][0x14]",
            "e3: MOV c[0x3][0x28]",
        ]
    );
    let mut got = lines(&["e3.cubin", "e2.cubin", "e1.cubin"]);
    got.sort();
    assert_eq!(
        got,
        [
            "e1: MOV c[0x3][0x28] | IADD c[0x3][0x24]",
            "e2: MOV c[0x3][0x18] | IADD c[0x3][0x14]",
            "e3: MOV c[0x3][0x8]",
        ]
    );
}
