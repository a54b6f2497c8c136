//! Mask tests selected as a logic op's predicate output: `(x & m) ==/!= 0`, and for a one-bit
//! `m` also `(x & m) ==/!= m`, become ptxas's `LOP.AND.Z|NZ p, RZ, x, m` (one instruction
//! where the `and` and an `ISETP` were two), and NVVM's `xor.pred p, q, 0 ; not.pred r, p`
//! after a compare becomes the compare with the negated condition (no `PSETP`). Each kernel
//! is NVVM-shaped PTX, compiled, checked hazard-free and run by `ir::eval` and the simulator
//! on random inputs (`common::compile_and_verify`); the assertions pin the selected shape.

mod common;

use common::compile_and_verify;

/// The module around `body` ([`common::two_word_kernel`]: `x` in `%r2`, `y` in `%r3`, the
/// result `%r9` stored).
fn kernel(body: &str) -> String {
    common::two_word_kernel("\t.reg .pred \t%p<8>;\n\t.reg .b16 \t%rs<4>;", body)
}

fn count(sass: &str, what: &str) -> usize {
    sass.lines().filter(|l| l.contains(what)).count()
}

/// NVVM's parity test (`x & 1`, compared with 1, through `xor.pred`/`not.pred`) and a bit
/// tested against zero, each selecting between the two loads.
#[test]
fn parity_and_bit_tests_are_one_lop_each() {
    let body = "\
	and.b32  	%r4, %r2, 1;
	setp.eq.b32 	%p1, %r4, 1;
	mov.pred 	%p2, 0;
	xor.pred  	%p3, %p1, %p2;
	not.pred 	%p4, %p3;
	selp.b32 	%r5, %r2, %r3, %p4;
	and.b32  	%r6, %r3, 4;
	setp.eq.s32 	%p5, %r6, 0;
	selp.b32 	%r7, 7, %r5, %p5;
	and.b32  	%r8, %r2, 1024;
	setp.ne.s32 	%p6, %r8, 1024;
	selp.b32 	%r9, %r7, 11, %p6;";
    let sass = compile_and_verify("bit_parity.ptx", "parity", &kernel(body));
    assert_eq!(
        count(&sass, "LOP.AND.Z P") + count(&sass, "LOP.AND.NZ P"),
        3,
        "{sass}"
    );
    assert_eq!(
        count(&sass, "ISETP"),
        0,
        "no compare of the masked value:\n{sass}"
    );
    assert_eq!(
        count(&sass, "PSETP"),
        0,
        "the `not` folds into the test:\n{sass}"
    );
    assert_eq!(
        count(&sass, "LOP32I.AND"),
        0,
        "no mask into a register:\n{sass}"
    );
}

/// Masks that are no imm20 (bit 19: from the literal pool, as ptxas) or are sign-extended
/// imm20s (`0xfffffff0`), a register mask, and a 16-bit test (the mask within the type).
#[test]
fn wide_register_and_narrow_masks() {
    let body = "\
	and.b32  	%r4, %r2, 524288;
	setp.eq.s32 	%p1, %r4, 0;
	and.b32  	%r5, %r3, -16;
	setp.ne.s32 	%p2, %r5, 0;
	and.b32  	%r6, %r2, %r3;
	setp.eq.s32 	%p3, %r6, 0;
	cvt.u16.u32 	%rs1, %r3;
	and.b16  	%rs2, %rs1, 32768;
	setp.eq.s16 	%p4, %rs2, 0;
	selp.b32 	%r7, 1, 0, %p1;
	selp.b32 	%r8, 2, 0, %p2;
	selp.b32 	%r10, 4, 0, %p3;
	selp.b32 	%r11, 8, 0, %p4;
	or.b32  	%r12, %r7, %r8;
	or.b32  	%r13, %r10, %r11;
	or.b32  	%r9, %r12, %r13;";
    let sass = compile_and_verify("bit_masks.ptx", "masks", &kernel(body));
    assert_eq!(
        count(&sass, "LOP.AND.Z P") + count(&sass, "LOP.AND.NZ P"),
        4,
        "{sass}"
    );
    assert_eq!(count(&sass, "ISETP"), 0, "{sass}");
    assert!(
        sass.contains("c[0x2][0x0]"),
        "bit 19 from the literal pool:\n{sass}"
    );
}

/// A mask whose `and` is also read elsewhere keeps the `and` and compares it: the rule
/// would otherwise compute the mask twice.
#[test]
fn shared_and_keeps_its_compare() {
    let body = "\
	and.b32  	%r4, %r2, 12;
	setp.eq.s32 	%p1, %r4, 0;
	selp.b32 	%r5, %r3, %r4, %p1;
	add.s32 	%r9, %r5, %r4;";
    let sass = compile_and_verify("bit_shared.ptx", "shared and", &kernel(body));
    assert_eq!(
        count(&sass, "LOP.AND.Z P") + count(&sass, "LOP.AND.NZ P"),
        0,
        "{sass}"
    );
}
