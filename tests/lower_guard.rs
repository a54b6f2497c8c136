//! Predicated single instructions (`@!p not.b32 %r, %r;`, which the front end turns into a
//! select between the old value and the new one) stay one guarded instruction writing into
//! the old value's register, as ptxas keeps them (`lower::guard`), rather than the
//! instruction plus a `SEL`. Each kernel is NVVM-shaped PTX, compiled, checked hazard-free
//! and run by `ir::eval` and the simulator on random inputs (`common::compile_and_verify`);
//! the assertions pin the shape.

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

/// CUB's match-any step (a ballot, inverted in the lanes whose bit is clear, inline assembly
/// in `cub::MatchAny`) twice, then a predicated add whose guard is the select's own sense:
/// three guarded instructions, no `SEL`.
#[test]
fn predicated_instructions_stay_guarded() {
    let body = "\
	and.b32  	%r4, %r2, 1;
	setp.eq.u32 	%p1, %r4, 1;
	vote.sync.ballot.b32 	%r5, %p1, -1;
	@!%p1 not.b32 	%r5, %r5;
	and.b32  	%r6, %r2, 2;
	setp.ne.u32 	%p2, %r6, 0;
	vote.sync.ballot.b32 	%r7, %p2, -1;
	@!%p2 not.b32 	%r7, %r7;
	and.b32  	%r8, %r7, %r5;
	@%p2 add.s32 	%r8, %r8, %r3;
	mov.b32  	%r9, %r8;";
    let sass = compile_and_verify("guard.ptx", "guard", &kernel(body));
    assert_eq!(count(&sass, "SEL "), 0, "{sass}");
    assert_eq!(count(&sass, "@!P"), 2, "{sass}");
    assert_eq!(count(&sass, "@P"), 1, "{sass}");
}

/// A predicated 64-bit instruction: one guarded `DMUL` writing into the old value's pair,
/// no `SEL` pair.
#[test]
fn predicated_pairs_stay_guarded() {
    let body = "\
	cvt.rn.f64.s32 	%fd1, %r2;
	cvt.rn.f64.s32 	%fd2, %r3;
	setp.lt.s32 	%p1, %r2, %r3;
	@%p1 mul.f64 	%fd1, %fd1, %fd2;
	cvt.rzi.s32.f64 	%r9, %fd1;";
    let src = common::two_word_kernel("\t.reg .pred \t%p<8>;\n\t.reg .f64 \t%fd<4>;", body);
    let sass = compile_and_verify("guard64.ptx", "guard64", &src);
    assert_eq!(count(&sass, "SEL "), 0, "{sass}");
    assert_eq!(count(&sass, "@P0 DMUL"), 1, "{sass}");
}

/// Where the select stays: the old value is read again later (a guarded write would have
/// to copy it first), the new value is read twice, and the new value is a load (a load does
/// not move past the instructions between it and the select).
#[test]
fn selects_whose_arms_live_on_stay_selects() {
    let body = "\
	setp.lt.s32 	%p1, %r2, %r3;
	mov.b32  	%r4, %r2;
	@%p1 add.s32 	%r4, %r4, 5;
	add.s32  	%r5, %r3, 7;
	selp.b32 	%r6, %r5, %r4, %p1;
	xor.b32  	%r7, %r5, %r6;
	ld.global.u32 	%r8, [%rd6+512];
	selp.b32 	%r10, %r8, %r7, %p1;
	add.s32  	%r11, %r10, %r2;
	add.s32  	%r12, %r11, %r4;
	xor.b32  	%r9, %r12, %r7;";
    let sass = compile_and_verify("no_guard.ptx", "no_guard", &kernel(body));
    assert_eq!(count(&sass, "SEL "), 3, "{sass}");
    assert_eq!(count(&sass, "@P"), 0, "{sass}");
    assert_eq!(count(&sass, "@!P"), 0, "{sass}");
}
