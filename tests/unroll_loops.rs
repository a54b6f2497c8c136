//! Full unrolling of small constant-trip loops (`ir::unroll`), on PTX shaped as NVVM writes it
//! (`tests/data/unroll/*.ptx`, each opening with a comment that says what it pins): which
//! loops disappear from the IR lowering receives (a snapshot), what that does to the local
//! array the loops touch (the kernel's frame), and `ir::eval` of the kernel as built against
//! the simulator running our code on random inputs (`verify`), with the hazard checker
//! finding nothing in the compiled code.

use leafold::driver::{compile, Emit, Options};
use leafold::sm50::sched::check::check_code;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

fn read(file: &str) -> String {
    let path = format!("{}/tests/data/unroll/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn options(file: &str, emit: Emit) -> Options {
    Options {
        emit,
        file_name: file.to_string(),
        ..Options::default()
    }
}

/// The kernel's frame (local memory per thread, bytes) and the IR lowering receives.
fn frame_and_ir(file: &str) -> (u32, String) {
    let ptx = read(file);
    let out = compile(&ptx, &options(file, Emit::Cubin)).unwrap_or_else(|d| {
        panic!("{}", leafold::error::render_all(&d.0));
    });
    let ir = compile(&ptx, &options(file, Emit::Ir)).unwrap().text;
    (out.kernels[0].stack_frame, ir)
}

/// Blocks that branch back to themselves (single-block loops) in an IR listing.
fn self_loops(ir: &str) -> usize {
    let mut block = String::new();
    let mut n = 0;
    for line in ir.lines() {
        if line.starts_with("block") {
            block = line.split([':', '(']).next().unwrap().to_string();
            continue;
        }
        let t = line.trim_start();
        if (t.starts_with("brif") || t.starts_with("jump"))
            && t.split([' ', ',', '(']).any(|w| w == block)
        {
            n += 1;
        }
    }
    n
}

/// `ir::eval` against the simulator, several random launches, and no hazard in our code.
fn assert_eval_matches_sim(file: &str) {
    let opts = VerifyOptions {
        runs: 4,
        compile: options(file, Emit::Cubin),
        ..VerifyOptions::default()
    };
    let verdicts = verify_file(&read(file), None, &opts).unwrap();
    assert!(!verdicts.is_empty());
    for v in verdicts {
        assert!(
            matches!(v.outcome, Outcome::Match { .. }),
            "{file} {}: {:?}",
            v.kernel,
            v.outcome
        );
    }
    let ptx = read(file);
    let out = compile(&ptx, &options(file, Emit::Cubin)).unwrap();
    let c = leafold::cubin::read(&out.cubin).unwrap();
    for k in &c.kernels {
        let found = check_code(&k.code);
        assert!(found.is_empty(), "{file} {}: {found:?}", k.name);
    }
}

#[test]
fn a_copy_loop_of_twelve_becomes_straight_line_with_constant_offsets() {
    let (frame, ir) = frame_and_ir("copy.ptx");
    assert_eq!(self_loops(&ir), 0, "{ir}");
    // Twelve loads and twelve stores, each at one base plus a constant offset.
    assert_eq!(ir.matches("load.global").count(), 12, "{ir}");
    assert_eq!(ir.matches("store.local").count(), 12, "{ir}");
    // The dynamically indexed read keeps the 48-byte array in local memory.
    assert_eq!(frame, 48, "{ir}");
    insta::assert_snapshot!("unroll_copy_ir", ir);
    assert_eval_matches_sim("copy.ptx");
}

#[test]
fn unrolled_loops_make_a_local_array_constant_indexed_and_it_leaves_memory() {
    let (frame, ir) = frame_and_ir("promote.ptx");
    assert_eq!(self_loops(&ir), 0, "{ir}");
    assert_eq!(frame, 0, "{ir}");
    assert!(!ir.contains("local"), "{ir}");
    insta::assert_snapshot!("unroll_promote_ir", ir);
    assert_eval_matches_sim("promote.ptx");
}

#[test]
fn long_and_unbounded_loops_stay_loops() {
    let (_, ir) = frame_and_ir("keep.ptx");
    assert_eq!(self_loops(&ir), 2, "{ir}");
    assert_eval_matches_sim("keep.ptx");
}
