//! Immediates shared between uses (`lower::select::consts`, issue 24 point 2): NVVM writes a
//! literal at every use (`fma.rn.f32 x, a, 0f3F000000, 0f3F000000`, volumeFiltering's texture
//! coordinates), and a SASS instruction has one immediate slot, so the second `0.5` needs a
//! register. One `MOV32I` serves every use in blocks it dominates with no loop between; a
//! constant is never hoisted out of a loop.
//!
//! Each kernel: compiles, is hazard-free, `ir::eval` equals the simulator on random launches;
//! the number of `MOV32I` of the constant is asserted.

mod common;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// How many `MOV32I` of `bits` the listing holds.
fn movs_of(sass: &str, bits: u32) -> usize {
    let want = format!("0x{bits:x}");
    common::parse_lines(sass)
        .into_iter()
        .filter(|(_, t)| {
            t.contains("MOV32I") && t.split([' ', ',', ';']).any(|w| w == want.as_str())
        })
        .count()
}

/// volumeFiltering's shape: a loop of `n` steps whose body maps three coordinates by
/// `x·0.5 + 0.5` twice (an unrolled body of two fetches' worth), then, in a block of its own
/// under a data-dependent branch, once more; 0.5 is also used before the loop.
fn half_loop_kernel() -> String {
    let mut body = String::new();
    for k in 0..6 {
        body += &format!(
            "\tfma.rn.f32 %f{d}, %f{s}, 0f3F000000, 0f3F000000;\n\tadd.f32 %f1, %f1, %f{d};\n",
            d = 10 + k,
            s = 2 + k % 3,
        );
    }
    format!(
        "{HEAD}.visible .entry halves(.param .u64 out, .param .u32 n)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .f32 %f<40>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tld.param.u32 %r2, [n];\n\tand.b32 %r2, %r2, 7;\n\
         \tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f2, %r1;\n\
         \tfma.rn.f32 %f3, %f2, 0f3F000000, 0f3F000000;\n\
         \tadd.f32 %f4, %f2, %f3;\n\tmov.f32 %f1, 0f00000000;\n\
         \tmov.u32 %r3, 0;\n\
         LOOP:\n\
         \tsetp.ge.u32 %p1, %r3, %r2;\n\t@%p1 bra DONE;\n\
         {body}\
         \tsetp.gt.f32 %p2, %f1, 0f42C80000;\n\t@%p2 bra NEXT;\n\
         \tfma.rn.f32 %f20, %f1, 0f3F000000, 0f3F000000;\n\tmul.f32 %f1, %f20, 0f3E800000;\n\
         NEXT:\n\
         \tadd.f32 %f2, %f2, 0f3F800000;\n\tadd.s32 %r3, %r3, 1;\n\tbra.uni LOOP;\n\
         DONE:\n\
         \tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tst.global.f32 [%rd4], %f1;\n\tret;\n}}\n"
    )
}

/// A diamond: each side uses the constant in `fma x, a, k, k`, then the join does again. The
/// sides do not dominate each other nor the join: the entry's register serves all three.
fn diamond_kernel() -> String {
    format!(
        "{HEAD}.visible .entry diamond(.param .u64 out)\n{{\n\
         \t.reg .pred %p<2>;\n\t.reg .f32 %f<16>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f1, %r1;\n\
         \tfma.rn.f32 %f2, %f1, 0f40400000, 0f40400000;\n\
         \tand.b32 %r2, %r1, 1;\n\tsetp.eq.s32 %p1, %r2, 0;\n\t@%p1 bra ELSE;\n\
         \tfma.rn.f32 %f3, %f2, 0f40400000, 0f40400000;\n\tmul.f32 %f3, %f3, %f1;\n\
         \tbra.uni JOIN;\n\
         ELSE:\n\
         \tfma.rn.f32 %f3, %f1, 0f40400000, 0f40400000;\n\tadd.f32 %f3, %f3, %f2;\n\
         JOIN:\n\
         \tfma.rn.f32 %f4, %f3, 0f40400000, 0f40400000;\n\
         \tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tst.global.f32 [%rd4], %f4;\n\tret;\n}}\n"
    )
}

#[test]
fn one_register_per_constant_in_a_loop_body() {
    let sass = common::compile_and_verify("consts.ptx", "halves", &half_loop_kernel());
    // One 0.5 before the loop (not reused inside: no hoisting out of a loop) and one in the
    // body, serving its six uses and the guarded block's (dominated, same loop). Without
    // sharing: 1 + 6 + 1.
    assert_eq!(movs_of(&sass, 0x3f00_0000), 2, "{sass}");
}

#[test]
fn a_dominating_register_serves_both_sides_and_the_join() {
    let sass = common::compile_and_verify("consts.ptx", "diamond", &diamond_kernel());
    // The entry's 3.0 serves the two sides and the join (if-conversion may merge them;
    // the count is the same either way). Without sharing: 4.
    assert_eq!(movs_of(&sass, 0x4040_0000), 1, "{sass}");
}
