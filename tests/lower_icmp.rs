//! Selects on a compare of a 32-bit integer with zero, the predicate read only by the select
//! and at most two instructions before it: ptxas's `ICMP.<cc> d, a, b, x` (`d = (x <cc> 0) ?
//! a : b`), one instruction where `ISETP` + `SEL` were two (`Lowerer::select_by_icmp`). Each
//! kernel is NVVM-shaped PTX, compiled, checked hazard-free and run by `ir::eval` and the
//! simulator on random inputs (`common::compile_and_verify`); the assertions pin the shape.

mod common;

use common::compile_and_verify;

/// The module around `body` ([`common::two_word_kernel`]: `x` in `%r2`, `y` in `%r3`, the
/// result `%r9` stored).
fn kernel(body: &str) -> String {
    common::two_word_kernel("\t.reg .pred \t%p<8>;", body)
}

fn count(sass: &str, what: &str) -> usize {
    sass.lines().filter(|l| l.contains(what)).count()
}

/// CUB's key flip (two constants: one in a register, the wide one from the literal pool), a
/// register pair, an unsigned test, a constant first operand (swapped, condition negated) and
/// zero on the compare's left: five `ICMP`s, no `ISETP` and no `SEL`.
#[test]
fn selects_on_a_compare_with_zero_are_icmp() {
    let body = "\
	setp.lt.s32 	%p1, %r2, 0;
	selp.b32 	%r4, -1, -2147483648, %p1;
	setp.ne.s32 	%p2, %r3, 0;
	selp.b32 	%r5, %r2, %r3, %p2;
	setp.gt.u32 	%p3, %r2, 0;
	selp.b32 	%r6, 7, %r3, %p3;
	setp.ge.s32 	%p4, 0, %r3;
	selp.b32 	%r7, %r5, 0, %p4;
	setp.le.s32 	%p5, %r6, 0;
	selp.b32 	%r8, %r7, %r4, %p5;
	xor.b32  	%r10, %r4, %r5;
	add.s32  	%r11, %r10, %r6;
	add.s32  	%r12, %r11, %r8;
	xor.b32  	%r9, %r12, %r7;";
    let sass = compile_and_verify("icmp.ptx", "icmp", &kernel(body));
    assert_eq!(count(&sass, "ICMP."), 5, "{sass}");
    assert_eq!(count(&sass, "ISETP"), 0, "{sass}");
    assert_eq!(count(&sass, "SEL "), 0, "{sass}");
    assert_eq!(
        count(&sass, "ICMP.GT.U32"),
        0,
        "`x >u 0` negated is `x <=u 0`:\n{sass}"
    );
    assert_eq!(count(&sass, "ICMP.LE.U32"), 1, "{sass}");
}

/// Where `ICMP` does not apply: a compare with a non-zero value, a predicate read twice, a
/// bit test (`LOP.AND.Z` + `SEL`), and a compare three instructions before its select (the
/// compared value would live where a predicate did).
#[test]
fn other_selects_keep_their_predicate() {
    let body = "\
	setp.lt.s32 	%p1, %r2, 5;
	selp.b32 	%r4, %r2, %r3, %p1;
	setp.eq.s32 	%p2, %r3, 0;
	selp.b32 	%r5, %r2, %r3, %p2;
	selp.b32 	%r6, %r3, %r4, %p2;
	and.b32  	%r7, %r2, 8;
	setp.eq.s32 	%p3, %r7, 0;
	selp.b32 	%r8, %r5, %r6, %p3;
	setp.gt.s32 	%p4, %r3, 0;
	add.s32  	%r10, %r4, %r5;
	mul.lo.s32  	%r11, %r10, %r6;
	xor.b32  	%r12, %r11, %r2;
	selp.b32 	%r13, %r12, %r8, %p4;
	add.s32  	%r9, %r13, %r11;";
    let sass = compile_and_verify("no_icmp.ptx", "no_icmp", &kernel(body));
    assert_eq!(count(&sass, "ICMP"), 0, "{sass}");
    assert_eq!(count(&sass, "LOP.AND.Z"), 1, "{sass}");
}
