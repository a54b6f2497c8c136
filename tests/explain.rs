//! Source lines through the pipeline: `leafold compile --explain` (each SASS instruction under
//! the PTX line it came from, each LEA chain with its address expression), the per-instruction
//! lines in `KernelReport::src_lines`, and the verifier naming the PTX line of the instruction
//! that wrote (or faulted on) a mismatching byte.

use leafold::driver::{InjectBug, Options};
use leafold::verify::{verify_file, Outcome, VerifyOptions};
use std::process::Command;

const SEED: &str = include_str!("../examples/seed_lea.ptx");

fn explain(src: &str) -> String {
    let opts = Options {
        explain: true,
        ..Options::default()
    };
    leafold::compile(src, &opts).unwrap().explain
}

/// The seed example (shared/seeds/001's three address shapes): every load's chain is listed
/// under the load's PTX line with the expression it computes, in PTX register names.
#[test]
fn explain_seed() {
    insta::assert_snapshot!("explain_seed", explain(SEED));
}

/// The listing is the same code as the plain SASS listing, instruction for instruction.
#[test]
fn explain_lists_the_compiled_code() {
    let out = leafold::compile(SEED, &Options::default()).unwrap();
    let ex = explain(SEED);
    let sass: Vec<String> = out
        .sass
        .lines()
        .filter_map(|l| l.trim().strip_prefix("/*").map(str::to_string))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_hexdigit()))
        .filter_map(|l| {
            l.split(" ;")
                .next()
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .filter(|l| !l.ends_with("NOP"))
        .collect();
    let listed: Vec<String> = ex
        .lines()
        .filter_map(|l| l.trim().strip_prefix("/*"))
        .filter_map(|l| {
            l.split(" ;")
                .next()
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect();
    assert_eq!(sass, listed);
}

/// `src_lines` has one entry per laid-out instruction; the loads carry their own PTX lines,
/// the prologue none.
#[test]
fn src_lines_per_instruction() {
    let out = leafold::compile(SEED, &Options::default()).unwrap();
    let k = &out.kernels[0];
    assert_eq!(k.src_lines[0], None, "the prologue");
    let line_of = |needle: &str| {
        SEED.lines()
            .position(|l| l.contains(needle))
            .map(|i| i as u32 + 1)
            .unwrap()
    };
    let lines: Vec<u32> = k.src_lines.iter().flatten().copied().collect();
    for ptx in [
        "ld.f64          %fd1",
        "ld.f64          %fd2",
        "ld.u32          %r3",
        "st.global.u32",
    ] {
        assert!(lines.contains(&line_of(ptx)), "{ptx}: {lines:?}");
    }
    // Every line named is an instruction line of the kernel body.
    for l in lines {
        let text = SEED.lines().nth(l as usize - 1).unwrap().trim();
        assert!(text.ends_with(';') && !text.starts_with('.'), "{l}: {text}");
    }
}

/// With every LEA shifting one too far, the first seed load reads outside its buffer: the
/// verifier names the faulting `LD` and the PTX line it was compiled from. (With
/// `--plg-per-address` the displacement 80 is added by a LEA too, which the bug doubles with
/// the rest of the address; by default it stays in the LD and the load may land inside the
/// buffer.)
#[test]
fn verify_names_the_ptx_line() {
    let opts = VerifyOptions {
        compile: Options {
            debug_inject: Some(InjectBug::WrongLeaScale),
            plg_per_address: true,
            ..Options::default()
        },
        ..VerifyOptions::default()
    };
    let v = verify_file(SEED, None, &opts).unwrap();
    let Outcome::Mismatch(m) = &v[0].outcome else {
        panic!("not caught: {}", v[0]);
    };
    let (pc, sass) = m.writer.clone().expect("the faulting load is named");
    assert!(sass.starts_with("LD.E.64"), "{pc:x}: {sass}");
    assert_eq!(
        m.ptx_line,
        Some((33, "ld.f64          %fd1, [%rd7+80];".to_string())),
        "{}",
        v[0]
    );
    assert!(
        v[0].to_string()
            .contains("PTX line 33: ld.f64          %fd1, [%rd7+80];"),
        "{}",
        v[0]
    );

    // The same through the command line, in the default mode: the bad load lands inside the
    // buffer, and the verifier names the store that wrote the wrong value.
    let out = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(["verify", "examples/seed_lea.ptx", "--debug-wrong-lea-scale"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("PTX line 34: st.global.f64"), "{text}");
}

/// `compile --explain` prints the listing on stdout and writes no cubin unless `-o` is given.
#[test]
fn cli_explain() {
    let dir = std::env::temp_dir().join(format!("leafold-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(["compile", "--explain"])
        .arg(format!(
            "{}/examples/seed_lea.ptx",
            env!("CARGO_MANIFEST_DIR")
        ))
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(text, explain(SEED));
    assert!(!dir.join("elf.o").exists(), "no cubin without -o");
}
