//! 64-bit shared (and `.const`) pointers narrowed to 32 bits (`ir::narrow`), on PTX shaped as
//! the front ends write it (`tests/data/narrow/*.ptx`, each opening with a comment that says what
//! it pins): the IR lowering receives (a snapshot), the registers the kernel needs, and
//! `ir::eval` of the unnarrowed kernel against the simulator running our code on random
//! inputs (`verify`).

#[path = "common/frame_ir.rs"]
mod frame_ir;

use leafold::driver::{compile, Emit};

/// The first block with parameters (the loop header) carries no `i64` value.
fn assert_loop_header_has_no_i64(ir: &str) {
    let header = ir
        .lines()
        .find(|l| l.starts_with("block") && l.contains('('))
        .unwrap_or_else(|| panic!("no block with parameters:\n{ir}"));
    assert!(!header.contains("i64"), "{header}\n{ir}");
}

#[test]
fn loop_carried_shared_pointers_become_32_bit() {
    let (_, ir) = frame_ir::frame_and_ir("narrow", "loop_ptrs.ptx");
    // The loop's block parameters: the sum, the count and the two pointers, all i32 now.
    assert_loop_header_has_no_i64(&ir);
    // The steps of the two pointers are 32-bit adds of 4.
    assert!(
        !ir.contains("add.i64 v") || ir.matches("add.i64").count() <= 3,
        "{ir}"
    );
    // The address of s_a[tid] written to global memory as data keeps all 64 bits.
    assert!(ir.contains("store.global.i64"), "{ir}");
    insta::assert_snapshot!("narrow_loop_ptrs_ir", ir);
    frame_ir::assert_eval_matches_sim("narrow", "loop_ptrs.ptx");
}

#[test]
fn loop_carried_shared_pointers_take_no_high_word_registers() {
    let ptx = frame_ir::read("narrow", "loop_ptrs.ptx");
    let sass = compile(&ptx, &frame_ir::options("loop_ptrs.ptx", Emit::Sass))
        .unwrap()
        .text;
    // No pointer is stepped as a register pair: no carry into a high word.
    assert!(!sass.contains("IADD.X"), "{sass}");
}

#[test]
fn loop_carried_const_pointers_become_32_bit() {
    let (_, ir) = frame_ir::frame_and_ir("narrow", "const_ptrs.ptx");
    // The loop's parameters: the sum, the count and the two table pointers.
    assert_loop_header_has_no_i64(&ir);
    let ptx = frame_ir::read("narrow", "const_ptrs.ptx");
    let sass = compile(&ptx, &frame_ir::options("const_ptrs.ptx", Emit::Sass))
        .unwrap()
        .text;
    // The two table pointers step as single registers: no carry into a high word.
    assert!(!sass.contains("IADD.X"), "{sass}");
    assert!(sass.contains("LDC"), "{sass}");
    frame_ir::assert_eval_matches_sim("narrow", "const_ptrs.ptx");
}
