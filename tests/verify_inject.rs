//! The verifier catches a known-bad compiler change: with `Options::debug_inject =
//! WrongLeaScale` every LEA shifts by one too many, and `verify` must report a mismatch
//! (naming the store that wrote the wrong byte), while the same kernel compiled correctly
//! verifies. Also the `leafold verify` exit codes: 0 match, 1 mismatch, 2 cannot run.

use leafold::driver::{InjectBug, Options};
use leafold::verify::{verify_file, Outcome, VerifyOptions};
use std::process::Command;

const SEED: &str = include_str!("../examples/seed_lea.ptx");

/// `out[i] = in[i + 3]` (i = ctaid × ntid + tid, so that no two threads of the launch store
/// to one word, a race the reference would reject) with a 64-bit index: one LEA / LEA.HI.X
/// chain per access.
const COPY: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry copy(.param .u64 in, .param .u64 out)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<4>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r0, %ntid.x;
    mad.lo.u32 %r1, %r3, %r0, %r1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4+12];
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r2;
    ret;
}
"#;

fn opts(bug: Option<InjectBug>) -> VerifyOptions {
    VerifyOptions {
        compile: Options {
            debug_inject: bug,
            ..Options::default()
        },
        ..VerifyOptions::default()
    }
}

#[test]
fn correct_code_verifies() {
    for src in [SEED, COPY] {
        for v in verify_file(src, None, &opts(None)).unwrap() {
            assert!(matches!(v.outcome, Outcome::Match { runs: 3, .. }), "{v}");
        }
    }
}

#[test]
fn wrong_lea_scale_is_caught() {
    let mut named = 0;
    for src in [SEED, COPY] {
        let bad = leafold::compile(src, &opts(Some(InjectBug::WrongLeaScale)).compile).unwrap();
        let good = leafold::compile(src, &Options::default()).unwrap();
        assert_ne!(bad.sass, good.sass, "the injection changes the code");
        for v in verify_file(src, None, &opts(Some(InjectBug::WrongLeaScale))).unwrap() {
            let Outcome::Mismatch(m) = &v.outcome else {
                panic!("not caught: {v}\n{}", bad.sass);
            };
            assert_eq!(m.side, leafold::verify::Side::Leafold);
            assert_eq!(m.seed, 1, "the first run already differs");
            // Either a wrong byte (written by a store) or a fault of the wrong address.
            let text = v.to_string();
            assert!(
                text.contains("first difference at global")
                    || text.contains("faults in the simulator"),
                "{text}"
            );
            // The byte the reference wrote may be one our code never wrote (the store went
            // elsewhere); otherwise the store (or faulting access) is named.
            match m.writer.clone() {
                Some((pc, sass)) => {
                    named += 1;
                    assert!(bad.sass.contains(&format!("/*{pc:04x}*/")), "{pc:x}");
                    assert!(sass.starts_with("ST") || sass.starts_with("LD"), "{sass}");
                    assert!(text.contains(&format!("by /*{pc:04x}*/ {sass}")), "{text}");
                    // ... with the PTX line the access was lowered from (its text, too).
                    let (line, ptx) = m.ptx_line.clone().expect("a PTX line for a load/store");
                    assert!(ptx.contains("ld.") || ptx.contains("st."), "{line}: {ptx}");
                    assert_eq!(
                        src.lines().nth(line as usize - 1).map(str::trim),
                        Some(ptx.as_str())
                    );
                    assert!(
                        text.contains(&format!("PTX line {line}: {}", ptx.trim())),
                        "{text}"
                    );
                }
                None => assert!(text.contains("no instruction of the simulated code wrote it")),
            }
        }
    }
    assert!(named > 0, "no mismatch named its instruction");
}

fn cli(args: &[&str], ptx: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("leafold-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // One file per call: tests run in parallel threads, and two PTX texts of the same length
    // (`COPY` and its `.target sm_61` variant) once shared a name, so one test read the other's
    // half-written file ("Missing .version directive").
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = dir.join(format!("k{n}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .arg("verify")
        .arg(&file)
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// Reads a performance-monitor counter, which no model knows: it cannot be run. (A kernel
/// that reads a pointer from memory and dereferences it, which used to be the example here,
/// runs now that inputs are shaped by the kernel: `tests/verify_inputs.rs`.)
const PM: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry pm(.param .u64 out)
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %pm0;
    st.global.u32 [%rd2], %r1;
    ret;
}
"#;

#[test]
fn cli_exit_codes() {
    let (code, text) = cli(&["--runs", "2", "--grid", "1", "--block", "32,2"], COPY);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("copy: OK, 2 runs match"), "{text}");
    let (code, text) = cli(&["--debug-wrong-lea-scale", "--seed", "9"], COPY);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("copy: MISMATCH (leafold code, seed 9)"),
        "{text}"
    );
    assert!(
        text.contains("inputs: grid [2, 1, 1], block [64, 1, 1]"),
        "{text}"
    );
    // The wrong byte is one no store of ours wrote (the store went elsewhere), so there is no
    // writer and no PTX line; `wrong_lea_scale_is_caught` checks the lines of named writers.
    assert!(
        text.contains("no instruction of the simulated code wrote it")
            && text.contains("PTX line: none (no writer)"),
        "{text}"
    );
    // The address slice checked against traced runs: the chain's LEAs and the index
    // arithmetic reach the addresses, and the static slice holds them.
    let (code, text) = cli(&["--check-slice", "--runs", "1"], COPY);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("copy: OK, 1 runs match"), "{text}");
    let (code, text) = cli(&[], PM);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("pm: cannot run"), "{text}");
    let (code, text) = cli(&["--kernel", "nope"], COPY);
    assert_eq!(code, 2, "{text}");
    let (code, text) = cli(&["--grid", "0"], COPY);
    assert_eq!(code, 2, "{text}");
}

/// Findings of the fuzzer kept as files, as regression tests: both were the missing
/// reconvergence point after a divergent branch (a warp reaching `bar.sync` diverged), fixed
/// by SSY/SYNC reconvergence in the lowering; each now verifies on the launch that found it.
#[test]
fn fuzz_findings_verify_now() {
    let o = VerifyOptions {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        runs: 5,
        ..opts(None)
    };
    let src = include_str!("data/fuzz-found/diverged_barrier.ptx");
    let v = verify_file(src, None, &o).unwrap();
    assert!(matches!(v[0].outcome, Outcome::Match { .. }), "{}", v[0]);

    // The launch the fuzzer used (see the file's header).
    let o = VerifyOptions {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        buffer_size: Some(32768),
        seed: 6072529,
        runs: 1,
        ..opts(None)
    };
    let src = include_str!("data/fuzz-found/predicated_ld_u64.ptx");
    let v = verify_file(src, None, &o).unwrap();
    assert!(matches!(v[0].outcome, Outcome::Match { .. }), "{}", v[0]);
}

/// `verify --against-ptxas` on PTX whose `.target` (and `.version`) are newer than ptxas
/// 11.8 takes for sm_50: `compile` warns and compiles for Maxwell, and ptxas is given the
/// retargeted text (`leafold::oracle::retarget`) instead of refusing the file.
#[test]
fn against_ptxas_accepts_newer_targets() {
    let Some(_) = leafold::oracle::Oracle::for_test("against_ptxas_accepts_newer_targets") else {
        return;
    };
    for (version, target) in [("7.0", "sm_61"), ("8.0", "sm_80")] {
        let ptx = COPY
            .replace(".version 7.0", &format!(".version {version}"))
            .replace(".target sm_50", &format!(".target {target}"));
        let (code, text) = cli(&["--against-ptxas", "--runs", "1"], &ptx);
        assert_eq!(code, 0, "{target}: {text}");
        assert!(!text.contains("ptxas rejects"), "{text}");
        assert!(text.contains("copy: OK"), "{text}");
    }
}
