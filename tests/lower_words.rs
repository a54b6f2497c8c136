//! Words and bytes that need no instruction (issue 24: particlefilter's `likelihood_kernel`,
//! MC_SingleAsianOptionP's `generatePaths<double>`, Mandelbrot's neighbour tests).
//!
//! * One word of a 64-bit value: NVVM's double-precision library reads a double's high word
//!   with `mov.b64 {%temp, %r}, %fd`, which `ir::build` makes `trunc(shr.u x, 32)`.
//!   Selection gives the narrow result the high word of `x`'s pair itself (no instruction),
//!   and a shift by 33..63 of it one 32-bit `SHR`, where it used to select the 64-bit shift
//!   (`SHR d.lo, x.hi, 0 ; MOV d.hi, RZ`) and keep its low word.
//! * A loaded byte: NVVM reads a `uchar` as `ld.u8 %rs` then `cvt.u32.u16` and often
//!   `and.b32 .., 255`; the mask keeps every bit the extended byte can have, so it costs no
//!   `LOP32I.AND` (`ir::simplify`'s `x & m` rule); and the bytes of a vector load that
//!   nothing reads are not loaded.
//!
//! Each kernel: compiles, is hazard-free, `ir::eval` equals the simulator on random launches
//! (`common::compile_and_verify`); the listing is a snapshot; the instruction counts the rule
//! promises are asserted.

mod common;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// `pow`'s and `exp`'s shape: the high word of a loaded double (and of a sum of it) is
/// tested and masked, the low word tested; one word stored per test. Also the arithmetic
/// and logical shifts of a 64-bit integer by more than 32 whose low word is kept.
fn words_kernel() -> String {
    format!(
        "{HEAD}.visible .entry words(.param .u64 in, .param .u64 out)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<24>;\n\t.reg .f64 %fd<8>;\n\t.reg .b64 %rd<16>;\n\
         \tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n\
         \tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n\
         \tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd5, %r1, 8;\n\
         \tadd.s64 %rd6, %rd3, %rd5;\n\tld.global.f64 %fd1, [%rd6];\n\
         \t{{\n\t.reg .b32 %temp;\n\tmov.b64 {{%temp, %r2}}, %fd1;\n\t}}\n\
         \t{{\n\t.reg .b32 %temp;\n\tmov.b64 {{%r3, %temp}}, %fd1;\n\t}}\n\
         \tand.b32 %r4, %r2, 2146435072;\n\
         \tsetp.ne.s32 %p1, %r4, 2146435072;\n\
         \tsetp.ne.s32 %p2, %r3, 0;\n\
         \tor.pred %p3, %p1, %p2;\n\
         \tselp.b32 %r5, %r2, %r4, %p3;\n\
         \tadd.f64 %fd2, %fd1, 0d4000000000000000;\n\
         \t{{\n\t.reg .b32 %temp;\n\tmov.b64 {{%temp, %r6}}, %fd2;\n\t}}\n\
         \tshr.u32 %r7, %r6, 20;\n\
         \tmov.b64 %rd7, %fd1;\n\
         \tshr.s64 %rd8, %rd7, 40;\n\tcvt.u32.u64 %r8, %rd8;\n\
         \tshr.u64 %rd9, %rd7, 52;\n\tcvt.u32.u64 %r9, %rd9;\n\
         \tmul.wide.u32 %rd10, %r1, 16;\n\tadd.s64 %rd11, %rd4, %rd10;\n\
         \tst.global.v4.u32 [%rd11], {{%r5, %r7, %r8, %r9}};\n\
         \tret;\n}}\n"
    )
}

/// The opcodes of a listing, one a line (no registers: the snapshot pins the shape).
fn opcodes(sass: &str) -> String {
    sass.lines()
        .filter_map(|l| {
            let l = l.trim();
            let body = l.strip_prefix("/*")?.split_once("*/")?.1.trim();
            let body = body.trim_end_matches(';').trim();
            Some(
                body.split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn count(sass: &str, what: &str) -> usize {
    sass.lines().filter(|l| l.contains(what)).count()
}

/// Mandelbrot's shape: a `uchar4` pixel and its left neighbour, `|a.x - b.x| > 10 ||
/// |a.y - b.y| > 10`, each byte `cvt.u32.u16` and masked with 255 as NVVM writes it.
fn bytes_kernel() -> String {
    format!(
        "{HEAD}.visible .entry bytes(.param .u64 img, .param .u64 out)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b16 %rs<12>;\n\t.reg .b32 %r<24>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [img];\n\tld.param.u64 %rd2, [out];\n\
         \tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n\
         \tmov.u32 %r1, %tid.x;\n\tadd.s32 %r2, %r1, 1;\n\tmul.wide.u32 %rd5, %r2, 4;\n\
         \tadd.s64 %rd6, %rd3, %rd5;\n\
         \tld.global.v4.u8 {{%rs1, %rs2, %rs3, %rs4}}, [%rd6];\n\
         \tld.global.v4.u8 {{%rs5, %rs6, %rs7, %rs8}}, [%rd6+-4];\n\
         \tcvt.u32.u16 %r3, %rs5;\n\tcvt.u32.u16 %r4, %rs1;\n\tand.b32 %r5, %r4, 255;\n\
         \tsub.s32 %r6, %r3, %r5;\n\tabs.s32 %r7, %r6;\n\tsetp.gt.s32 %p1, %r7, 10;\n\
         \tcvt.u32.u16 %r8, %rs2;\n\tand.b32 %r9, %r8, 255;\n\
         \tcvt.u32.u16 %r10, %rs6;\n\tand.b32 %r11, %r10, 255;\n\
         \tsub.s32 %r12, %r11, %r9;\n\tabs.s32 %r13, %r12;\n\tsetp.gt.s32 %p2, %r13, 10;\n\
         \tor.pred %p3, %p1, %p2;\n\tselp.u32 %r14, 1, 0, %p3;\n\
         \tmul.wide.u32 %rd7, %r1, 4;\n\tadd.s64 %rd7, %rd4, %rd7;\n\
         \tst.global.u32 [%rd7], %r14;\n\tret;\n}}\n"
    )
}

#[test]
fn loaded_bytes_need_no_mask() {
    let sass = common::compile_and_verify("bytes.ptx", "bytes", &bytes_kernel());
    insta::assert_snapshot!("loaded_bytes", opcodes(&sass));
    // No mask: each byte read is an `LDG.E.U8`, which zero-extends (`Lowerer::zero_above`),
    // and the `and.b32 .., 255` of it changes nothing.
    assert_eq!(
        count(&sass, ", 0xff ;"),
        0,
        "no mask of a masked byte\n{sass}"
    );
    // Four of the eight bytes are read; the others are not loaded (`lower_load`).
    assert_eq!(count(&sass, "LDG.E.U8"), 4, "only the bytes read\n{sass}");
}

#[test]
fn high_word_is_the_pairs_own_register() {
    let sass = common::compile_and_verify("words.ptx", "words", &words_kernel());
    insta::assert_snapshot!("word_extract", opcodes(&sass));
    // The three high-word reads cost nothing; the shifts by 40 and 52 one SHR each, plus
    // the `shr.u32 .., 20` of the PTX.
    assert_eq!(count(&sass, "SHR"), 3, "{sass}");
    assert_eq!(count(&sass, ", 0x0 ;"), 0, "no shift by zero\n{sass}");
    assert_eq!(count(&sass, ", RZ ;"), 0, "no zero high word\n{sass}");
}
