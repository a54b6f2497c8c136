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
        (
            "it does not compile on its own: 12:2: unsupported call to 'cudaLaunchDeviceV2'",
            "kernel does not compile",
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

/// A module that does not compile as a whole because one kernel calls the device runtime
/// (only `-c` leaves `cudaLaunchDeviceV2` to the linker): the other kernel is still verified,
/// and the caller is not run, with its error (it was an error for the whole file).
#[test]
fn kernels_verified_apart_when_the_module_does_not_compile() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
        .extern .func (.param .b32 r) cudaLaunchDeviceV2(.param .b64 p, .param .b64 s);\n\
        .visible .entry launcher(.param .u64 p)\n{\n .reg .b32 %r<2>; .reg .b64 %rd<2>;\n\
        ld.param.u64 %rd1, [p];\n { .param .b64 a0; .param .b64 a1; .param .b32 r0;\n\
        st.param.b64 [a0], %rd1;\n st.param.b64 [a1], 0;\n\
        call.uni (r0), cudaLaunchDeviceV2, (a0, a1);\n ld.param.b32 %r1, [r0]; }\n ret;\n}\n\
        .visible .entry plain(.param .u64 p)\n{\n .reg .b32 %r<2>; .reg .b64 %rd<3>;\n\
        ld.param.u64 %rd1, [p];\n cvta.to.global.u64 %rd2, %rd1;\n mov.u32 %r1, %tid.x;\n\
        mul.wide.u32 %rd1, %r1, 4;\n add.s64 %rd2, %rd2, %rd1;\n st.global.u32 [%rd2], %r1;\n\
        ret;\n}\n";
    let opts = VerifyOptions {
        runs: 1,
        ..VerifyOptions::default()
    };
    assert!(
        leafold::driver::compile(src, &opts.compile).is_err(),
        "the whole module does not compile"
    );
    let v = verify_file(src, None, &opts).expect("one kernel compiles");
    let names: Vec<&str> = v.iter().map(|v| v.kernel.as_str()).collect();
    assert_eq!(names, ["launcher", "plain"]);
    assert_eq!(v[1].exit_code(), 0, "{}", v[1]);
    let text = v[0].to_string();
    assert!(
        text.contains("does not compile on its own") && text.contains("cudaLaunchDeviceV2"),
        "{text}"
    );
    let mut c = Coverage::default();
    v.iter().for_each(|v| c.add(v));
    assert_eq!(c.not_run.get("kernel does not compile"), Some(&1));
}
