//! Full unrolling of small constant-trip loops (`ir::unroll`), on PTX shaped as NVVM writes it
//! (`tests/data/unroll/*.ptx`, each opening with a comment that says what it pins): which
//! loops disappear from the IR lowering receives (a snapshot), what that does to the local
//! array the loops touch (the kernel's frame), and `ir::eval` of the kernel as built against
//! the simulator running our code on random inputs (`verify`), with the hazard checker
//! finding nothing in the compiled code.

#[path = "common/frame_ir.rs"]
mod frame_ir;

use frame_ir::{frame_and_ir as frame_and_ir_in, options, read};
use leafold::driver::{compile, Emit};
use leafold::sm50::sched::check::check_code;

fn frame_and_ir(file: &str) -> (u32, String) {
    frame_and_ir_in("unroll", file)
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
    frame_ir::assert_eval_matches_sim("unroll", file);
    let out = compile(&read("unroll", file), &options(file, Emit::Cubin)).unwrap();
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
fn long_unbounded_and_large_loops_stay_loops() {
    let (_, ir) = frame_and_ir("keep.ptx");
    assert_eq!(self_loops(&ir), 3, "{ir}");
    assert_eval_matches_sim("keep.ptx");
}
