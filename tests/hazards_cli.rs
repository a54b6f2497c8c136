//! `leafold hazards FILE.cubin [--kernel K]`: clean code exits 0 silently, weakened control
//! codes are reported with kernel, address and instructions (exit 1), unreadable or corrupt
//! files exit 2 with a message and never panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn leafold() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leafold"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("leafold_hazards_cli_{}_{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compile the seed example with leafold itself; returns the cubin's path.
fn seed_cubin(d: &Path) -> PathBuf {
    let seed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/seed_lea.ptx");
    let out = d.join("seed.cubin");
    let o = leafold()
        .args(["compile", "-arch=sm_50"])
        .arg(&seed)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn hazards(args: &[&std::ffi::OsStr]) -> Output {
    leafold().arg("hazards").args(args).output().unwrap()
}

#[test]
fn clean_cubin_exits_0_silently() {
    let d = scratch("clean");
    let cubin = seed_cubin(&d);
    let o = hazards(&[cubin.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = hazards(&[cubin.as_os_str(), "--kernel".as_ref(), "seed_lea".as_ref()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

#[test]
fn lowered_stalls_are_reported_with_both_instructions() {
    let d = scratch("lowered");
    let cubin = seed_cubin(&d);
    let mut bytes = std::fs::read(&cubin).unwrap();
    let c = leafold::cubin::read(&bytes).unwrap();
    let k = &c.kernels[0];
    let text: Vec<u8> = k.code.iter().flat_map(|w| w.to_le_bytes()).collect();
    let at = bytes
        .windows(text.len())
        .position(|w| w == &text[..])
        .expect("the kernel's code is in the file");
    // Every stall 1 (yield kept): a 6-cycle dependency in the seed now comes too early.
    for b in 0..text.len() / 32 {
        let off = at + 32 * b;
        let mut w = u64::from_le_bytes(bytes[off..off + 8].try_into().unwrap());
        for slot in 0..3 {
            w = (w & !(0xf << (21 * slot))) | (1 << (21 * slot));
        }
        bytes[off..off + 8].copy_from_slice(&w.to_le_bytes());
    }
    let bad = d.join("bad.cubin");
    std::fs::write(&bad, &bytes).unwrap();
    let o = hazards(&[bad.as_os_str()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let line = out
        .lines()
        .find(|l| l.contains("cycles after"))
        .unwrap_or_else(|| panic!("no early-read report:\n{out}"));
    // `seed_lea+0x0040: R3 read by `...` 1 cycles after `...` at +0x0038 (needs 6)`
    assert!(line.starts_with("seed_lea+0x"), "{line}");
    assert!(
        line.contains(" at +0x") && line.ends_with("(needs 6)") || line.ends_with("(needs 13)"),
        "{line}"
    );
    assert_eq!(
        line.matches('`').count(),
        4,
        "two instruction texts: {line}"
    );
}

#[test]
fn unreadable_and_corrupt_files_exit_2() {
    let d = scratch("corrupt");
    let missing = d.join("missing.cubin");
    let o = hazards(&[missing.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));

    let junk = d.join("junk.cubin");
    std::fs::write(&junk, b"\x7fELF this is not a cubin").unwrap();
    let o = hazards(&[junk.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a readable cubin"));

    // Every prefix of a real cubin: exit 0, 1 or 2, never a panic (101).
    let good = std::fs::read(seed_cubin(&d)).unwrap();
    let cut = d.join("cut.cubin");
    for len in (0..good.len()).step_by(97) {
        std::fs::write(&cut, &good[..len]).unwrap();
        let o = hazards(&[cut.as_os_str()]);
        assert!(
            matches!(o.status.code(), Some(0..=2)),
            "prefix {len}: {o:?}"
        );
    }

    let cubin = seed_cubin(&d);
    let o = hazards(&[cubin.as_os_str(), "--kernel".as_ref(), "nosuch".as_ref()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no kernel named `nosuch`"));
}

/// `disasm` and `hazards` answer the same unreadable file with the same exit code (2): a
/// missing file, a file that is not ELF, an ELF that is not a cubin, and prefixes of a real
/// cubin that `cubin::read` refuses.
#[test]
fn disasm_and_hazards_agree_on_unreadable_files() {
    let d = scratch("agree");
    let good = std::fs::read(seed_cubin(&d)).unwrap();
    let mut files = vec![d.join("missing.cubin")];
    for (name, bytes) in [
        ("empty.cubin", &b""[..]),
        ("text.cubin", &b"hello"[..]),
        ("elf.cubin", &b"\x7fELF\x02\x01\x01garbage"[..]),
        ("half.cubin", &good[..good.len() / 2]),
        ("head.cubin", &good[..64]),
    ] {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        files.push(p);
    }
    for f in &files {
        let h = hazards(&[f.as_os_str()]);
        let dis = leafold().arg("disasm").arg(f).output().unwrap();
        assert_eq!(h.status.code(), Some(2), "hazards {}: {h:?}", f.display());
        assert_eq!(
            dis.status.code(),
            Some(2),
            "disasm {}: {dis:?}",
            f.display()
        );
        assert!(
            String::from_utf8_lossy(&dis.stderr).contains(&*f.display().to_string()),
            "the message names the file: {dis:?}"
        );
    }
}
