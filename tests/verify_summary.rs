//! `leafold verify --summary`: coverage per file and in total, with the class of each reason a
//! kernel could not run (`verify::Coverage`, `verify::reason_class`).

use leafold::verify::{reason_class, verify_file, Coverage, VerifyOptions};
use std::process::Command;

fn data(p: &str) -> String {
    format!("{}/tests/data/{p}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn reasons_fall_into_classes() {
    let cases = [
        (
            "the PTX is undefined on the random inputs of seed 1: inst7: undefined in PTX: data race",
            "undefined launch (race, divergent barrier)",
        ),
        (
            "the reference run (seed 1) faults on the random inputs: inst3: out of bounds",
            "faults on random inputs",
        ),
        (
            "inst2: reads a performance-monitor counter (%pm), whose value cannot be known, so no run can be compared",
            "reads a performance counter",
        ),
        (
            "the reference interpreter cannot run it: inst9: step limit of 100 instructions reached",
            "step limit",
        ),
        (
            "the simulator cannot run ptxas's code: 0x0040: TEX",
            "simulator lacks an instruction",
        ),
        (
            "the reference interpreter cannot run it: bad launch: global regions at 0x700000000 overlap",
            "launch cannot be laid out",
        ),
        ("something new", "other"),
    ];
    for (why, class) in cases {
        assert_eq!(reason_class(why), class, "{why}");
    }
}

#[test]
fn coverage_counts_full_reduced_and_not_run() {
    // One of mathloops.ptx's five kernels is undefined at the full launch and verifies only
    // at a reduced one; the four others verify at the full launch.
    let text = std::fs::read_to_string(data("cuda-own/nvcc/mathloops.ptx")).unwrap();
    let opts = VerifyOptions {
        runs: 1,
        ..VerifyOptions::default()
    };
    let mut c = Coverage::default();
    for v in verify_file(&text, None, &opts).unwrap() {
        c.add(&v);
    }
    assert_eq!((c.full, c.reduced, c.mismatch, c.kernels()), (4, 1, 0, 5));
    assert!(c.not_run.is_empty());
    let mut total = Coverage::default();
    total.merge(&c);
    total.add_uncompiled();
    assert_eq!(
        total.to_string(),
        "5 kernels: 4 verified at the full launch, 1 at a reduced launch, 0 mismatched, 0 not \
         run; 1 file does not compile"
    );
}

#[test]
fn cli_summary_over_a_directory() {
    let out = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(["verify", "--summary", "--runs", "1"])
        .arg(data("cuda-own/nvcc"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // One line per file, then the total.
    let files = std::fs::read_dir(data("cuda-own/nvcc")).unwrap().count();
    assert_eq!(text.lines().count(), files + 1, "{text}");
    assert!(
        text.contains(
            "mathloops.ptx: 5 kernels: 4 verified at the full launch, 1 at a reduced launch"
        ),
        "{text}"
    );
    // fences() writes the same words in every CTA and reads nothing that tells CTAs apart:
    // one CTA is its full launch (`verify::shape`), counted as the kernel's own launch.
    assert!(
        text.contains(
            "atomics.ptx: 3 kernels: 3 verified at the full launch (1 at the launch the kernel \
             is written for), 0 at a reduced launch"
        ),
        "{text}"
    );
    let total = text.lines().last().unwrap();
    assert!(
        total.starts_with(&format!("TOTAL over {files} files: ")),
        "{total}"
    );
}
