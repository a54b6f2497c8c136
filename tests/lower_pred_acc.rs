//! A compare read only by a predicate operation (`and.pred`/`or.pred`/`xor.pred`) takes the
//! operation's other predicate as its accumulator, `ISETP/FSETP/DSETP.<cc>.<op> p, PT, a, b,
//! q`, as ptxas: one instruction where the compare and a `PSETP` were two (NVVM's bounds
//! tests `x < w && y < h`, libdevice's infinity tests `lo == 0 && hi == 0x7ff00000`). Where
//! neither compare can (both read elsewhere, or a 64-bit compare, which is two instructions of
//! its own) the `PSETP` stays. Each kernel is NVVM-shaped PTX, compiled, checked hazard-free
//! and run by `ir::eval` and the simulator on random inputs (`common::compile_and_verify`,
//! random words read as ints, floats and doubles: NaNs included); the assertions pin the
//! selected shape.

mod common;

use common::compile_and_verify;

/// The module around `body` ([`common::two_word_kernel`]: `x` in `%r2`, `y` in `%r3`, the
/// result `%r9` stored).
fn kernel(body: &str) -> String {
    common::two_word_kernel(
        "\t.reg .pred \t%p<12>;\n\t.reg .f32 \t%f<4>;\n\t.reg .f64 \t%fd<4>;",
        body,
    )
}

fn count(sass: &str, what: &str) -> usize {
    sass.lines().filter(|l| l.contains(what)).count()
}

/// `and` of two integer compares, `or` with an f32 compare, `xor` with an f64 compare: four
/// compares, each of the last three accumulating the one before, and no PSETP.
#[test]
fn compares_accumulate_into_and_or_xor() {
    let body = "\
	setp.lt.s32 	%p1, %r2, %r3;
	setp.gt.u32 	%p2, %r3, 1000;
	and.pred  	%p3, %p1, %p2;
	mov.b32 	%f1, %r2;
	setp.gtu.f32 	%p4, %f1, 0f3F800000;
	or.pred  	%p5, %p3, %p4;
	mov.b64 	%fd1, {%r2, %r3};
	setp.lt.f64 	%p6, %fd1, 0d0000000000000000;
	xor.pred  	%p7, %p5, %p6;
	selp.b32 	%r9, %r2, %r3, %p7;";
    let sass = compile_and_verify("pred_acc.ptx", "and/or/xor", &kernel(body));
    assert_eq!(count(&sass, "PSETP"), 0, "{sass}");
    assert_eq!(count(&sass, "ISETP"), 2, "{sass}");
    assert_eq!(count(&sass, "FSETP.GTU.OR"), 1, "{sass}");
    assert_eq!(count(&sass, "DSETP.LT.XOR"), 1, "{sass}");
}

/// A compare read twice cannot take the accumulator but its partner can; a 64-bit compare
/// and a compare read twice cannot either, so that `and` keeps its PSETP.
#[test]
fn only_compares_read_once_accumulate() {
    let body = "\
	setp.lt.s32 	%p1, %r2, %r3;
	setp.ne.s32 	%p2, %r3, 7;
	and.pred  	%p3, %p1, %p2;
	selp.b32 	%r4, 1, 2, %p2;
	selp.b32 	%r5, %r4, 5, %p3;
	cvt.s64.s32 	%rd8, %r2;
	cvt.s64.s32 	%rd9, %r3;
	setp.lt.s64 	%p4, %rd8, %rd9;
	setp.eq.s32 	%p5, %r5, 1;
	and.pred  	%p6, %p4, %p5;
	selp.b32 	%r6, %r2, %r3, %p5;
	selp.b32 	%r9, %r6, 9, %p6;";
    let sass = compile_and_verify("pred_acc_once.ptx", "read once", &kernel(body));
    assert_eq!(count(&sass, "PSETP"), 1, "{sass}");
    // `x < y` accumulates `y != 7`: its last operand is a predicate register, not PT
    let lt: Vec<&str> = sass
        .lines()
        .filter(|l| l.contains("ISETP.LT.AND"))
        .collect();
    assert_eq!(lt.len(), 1, "{sass}");
    assert!(!lt[0].contains(", PT ;"), "{sass}");
}
