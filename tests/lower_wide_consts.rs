//! Constants that fit no 20-bit immediate, as the B operand of an instruction with no
//! 32-bit-immediate form (`ISETP`, `ISET`, `IMNMX`, and both words of a 64-bit compare): read
//! from the literal pool, `c[0x2][off]`, as ptxas 11.8 does, rather than put in a register by a
//! `MOV32I` (`Lowerer::norm32_b`; the 64-bit compares in `lower_icmp`). Each kernel is
//! NVVM-shaped PTX, compiled, checked hazard-free and run by `ir::eval` and the simulator on
//! random inputs (`common::compile_and_verify`); the constants sit where random words fall on
//! both sides of them, and the assertions pin the selected shape.

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

/// The four compares' results `%p1..%p4` as bits 0..3 of `%r8`.
const FLAGS: &str = "\
	selp.b32 	%r4, 1, 0, %p1;
	selp.b32 	%r5, 2, 0, %p2;
	selp.b32 	%r6, 4, 0, %p3;
	selp.b32 	%r7, 8, 0, %p4;
	or.b32  	%r8, %r4, %r5;
	or.b32  	%r8, %r8, %r6;
	or.b32  	%r8, %r8, %r7;";

/// Signed and unsigned 32-bit compares against wide constants (positive, negative, the sign
/// bit), min and max against them, and a value-or-zero select (`ISET` + `LOP.AND`).
#[test]
fn wide_32_bit_constants_come_from_the_literal_pool() {
    let body = format!(
        "\
	setp.lt.u32 	%p1, %r2, -2147483648;
	setp.gt.s32 	%p2, %r3, 305419896;
	setp.le.s32 	%p3, %r2, -1000000;
	setp.ge.u32 	%p4, %r3, 3221225472;
{FLAGS}
	min.s32 	%r10, %r2, 1073741824;
	max.u32 	%r11, %r3, -1073741824;
	add.s32 	%r12, %r10, %r11;
	setp.lt.s32 	%p5, %r3, 1610612736;
	selp.b32 	%r13, %r12, 0, %p5;
	xor.b32  	%r14, %r13, %r8;
	mov.u32 	%r9, %r14;"
    );
    let sass = compile_and_verify("wide32.ptx", "wide32", &kernel(&body));
    assert_eq!(
        count(&sass, "MOV32I"),
        0,
        "no constant in a register:\n{sass}"
    );
    let reads = sass
        .lines()
        .filter(|l| {
            l.contains("c[0x2]")
                && (l.contains("ISETP") || l.contains("ISET.") || l.contains("IMNMX"))
        })
        .count();
    assert_eq!(reads, 7, "each wide constant read from bank 2:\n{sass}");
}

/// 64-bit equality and ordered compares against constants whose words fit no imm20: both
/// words from one 8-byte literal (`ISETP` pairs; `IADD RZ.CC` + `ISETP.X`).
#[test]
fn wide_64_bit_constants_come_from_the_literal_pool() {
    let body = format!(
        "\
	mov.b64 	%rd8, {{%r2, %r3}};
	setp.ne.s64 	%p1, %rd8, 4886718345;
	setp.lt.u64 	%p2, %rd8, -9223372036854775808;
	setp.gt.s64 	%p3, %rd8, 8070450532551306872;
	setp.ge.u64 	%p4, %rd8, 13835058055282163712;
{FLAGS}
	mov.u32 	%r9, %r8;"
    );
    let sass = compile_and_verify("wide64.ptx", "wide64", &kernel(&body));
    assert_eq!(
        count(&sass, "MOV32I"),
        0,
        "no constant in a register:\n{sass}"
    );
    // Two reads per compare: the low words (an ISETP, or IADD's borrow) and the high words;
    // the three ordered compares end in `ISETP.<cc>.X`, the inequality in `ISETP.NE.U32.OR`.
    assert_eq!(count(&sass, "c[0x2]"), 8, "{sass}");
    assert_eq!(count(&sass, ".X.AND"), 3, "{sass}");
    assert_eq!(count(&sass, "IADD RZ.CC"), 3, "{sass}");
}
