//! `.local` arrays in registers (`ir::sroa`), on PTX shaped as NVVM writes it
//! (`tests/data/sroa/*.ptx`, each opening with a comment that says what it pins): which
//! arrays leave local memory (the kernel's frame), the IR lowering receives (a snapshot), and
//! `ir::eval` of the unpromoted kernel against the simulator running our code on random
//! inputs (`verify`, which compares the local bytes of the arrays that stay, wherever they
//! moved in the frame).

#[path = "common/frame_ir.rs"]
mod frame_ir;

fn frame_and_ir(file: &str) -> (u32, String) {
    frame_ir::frame_and_ir("sroa", file)
}

fn assert_eval_matches_sim(file: &str) {
    frame_ir::assert_eval_matches_sim("sroa", file)
}

#[test]
fn constant_offsets_through_spl_and_sp_leave_local_memory() {
    let (frame, ir) = frame_and_ir("consts.ptx");
    // ptxas 11.8 keeps this array (16 bytes of stack frame); every offset is a constant.
    assert_eq!(frame, 0, "{ir}");
    assert!(!ir.contains(" gv"), "{ir}");
    // Every load read the array; the one store left writes the result to global memory.
    assert!(!ir.contains("load"), "{ir}");
    assert_eq!(ir.matches("store").count(), 1, "{ir}");
    // The loop carries the two elements it writes as block parameters.
    insta::assert_snapshot!("sroa_consts_ir", ir);
    assert_eval_matches_sim("consts.ptx");
}

#[test]
fn only_the_constant_indexed_array_of_three_is_promoted() {
    let (frame, ir) = frame_and_ir("mixed.ptx");
    // depot1 (32 bytes, dynamic index) and depot2 (8 bytes, read in halves) stay: 40 bytes;
    // depot0 (12 bytes) goes. ptxas 11.8 keeps all three (56).
    assert_eq!(frame, 40, "{ir}");
    assert!(
        !ir.contains(" gv0") && ir.contains(" gv1") && ir.contains(" gv2"),
        "{ir}"
    );
    insta::assert_snapshot!("sroa_mixed_ir", ir);
    assert_eval_matches_sim("mixed.ptx");
}

#[test]
fn an_escaping_address_keeps_the_array_in_memory() {
    let (frame, ir) = frame_and_ir("escape.ptx");
    // 4 used bytes of 8, the frame rounded to 8 as ptxas rounds it.
    assert_eq!(frame, 8, "{ir}");
    assert!(ir.contains(" gv0"), "{ir}");
}
