//! Vectorisation of adjacent scalar `.shared`/`.const` accesses (`ir::vectorize`, issue 24):
//! NVVM writes an unrolled tile read as scalar `ld.shared.f32 [%r+0]`, `[%r+4]`, ...; ptxas
//! 11.8 reads it with `LDS.U.128` where the address is provably 16-aligned, `LDS.U.64` where
//! it is 8-aligned, and never across a store or a barrier (rules probed with `ptxas
//! -arch=sm_50`, see the module essay).
//!
//! Each kernel fills a shared buffer from global memory with scalar stores whose alignment is
//! unknown (`S + 4*tid`), waits at a barrier, then runs the case under test and writes what
//! it read to global memory. Each test compiles, checks the hazard checker and `ir::eval` =
//! simulator (`common::compile_and_verify`), and counts the access widths in our listing.

mod common;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// A kernel `name` whose shared buffer `S` (8 KiB, `.align 4`) holds `in[tid + 128 k]` at
/// `S + 4 tid + 512 k` (k < 16); `%r10` is `S + 16 (tid & 127)`, `%r11` is `S + 4 tid`;
/// `body` sets `%f1..%f8` (each read once); their sum goes to `out[tid]`.
fn kernel(name: &str, decls: &str, body: &str) -> String {
    let mut fill = String::new();
    for k in 0..16 {
        fill += &format!(
            "\tld.global.f32 %f{v}, [%rd5+{g}];\n\tst.shared.f32 [%r11+{s}], %f{v};\n",
            v = 20 + k,
            g = k * 512,
            s = k * 512,
        );
    }
    let mut sum = String::from("\tmov.f32 %f9, 0f00000000;\n");
    for k in 1..=8 {
        sum += &format!("\tadd.f32 %f9, %f9, %f{k};\n");
    }
    format!(
        "{HEAD}{decls}.visible .entry {name}(.param .u64 in, .param .u64 out)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .f32 %f<64>;\n\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<16>;\n\
         \t.shared .align 4 .b8 S[8192];\n\
         \tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n\
         \tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n\
         \tmov.u32 %r1, %tid.x;\n\tand.b32 %r1, %r1, 127;\n\
         \tmul.wide.u32 %rd6, %r1, 4;\n\tadd.s64 %rd5, %rd3, %rd6;\n\
         \tmov.u32 %r2, S;\n\tshl.b32 %r3, %r1, 2;\n\tadd.s32 %r11, %r2, %r3;\n\
         \tshl.b32 %r4, %r1, 4;\n\tadd.s32 %r10, %r2, %r4;\n\
         {fill}\tbar.sync 0;\n{body}{sum}\
         \tadd.s64 %rd7, %rd4, %rd6;\n\tst.global.f32 [%rd7], %f9;\n\tret;\n}}\n"
    )
}

/// How many lines of `sass` contain `what` (an opcode with its width, e.g. `LDS.U.128 `).
fn count(sass: &str, what: &str) -> usize {
    sass.lines().filter(|l| l.contains(what)).count()
}

#[test]
fn aligned_words_merge_into_128_and_64() {
    // [r10+0..16) is 16-aligned: one .128. [r10+0x208..0x218) starts 8 mod 16: two .64
    // (sgemm_4x4's shape). The pair at 0x400 comes in reverse order and still merges.
    let body = "\tld.shared.f32 %f1, [%r10];\n\tld.shared.f32 %f2, [%r10+4];\n\
                \tld.shared.f32 %f3, [%r10+8];\n\tld.shared.f32 %f4, [%r10+12];\n\
                \tld.shared.f32 %f5, [%r10+520];\n\tld.shared.f32 %f6, [%r10+524];\n\
                \tld.shared.f32 %f7, [%r10+532];\n\tld.shared.f32 %f8, [%r10+528];\n";
    let sass = common::compile_and_verify("vec_aligned.ptx", "aligned", &kernel("k", "", body));
    assert_eq!(count(&sass, "LDS.U.128 "), 1, "{sass}");
    assert_eq!(count(&sass, "LDS.U.64 "), 2, "{sass}");
    assert_eq!(count(&sass, "LDS.U.32 "), 0, "{sass}");
    // The fill's stores at S + 4 tid stay scalar: their alignment is 4.
    assert_eq!(count(&sass, "STS "), 16, "{sass}");
}

#[test]
fn unknown_alignment_stays_scalar() {
    // r11 = S + 4 tid: only 4-aligned, as ptxas leaves `T + 4*tid` pairs alone.
    let body = "\tld.shared.f32 %f1, [%r11];\n\tld.shared.f32 %f2, [%r11+4];\n\
                \tld.shared.f32 %f3, [%r11+8];\n\tld.shared.f32 %f4, [%r11+12];\n\
                \tld.shared.f32 %f5, [%r11+16];\n\tld.shared.f32 %f6, [%r11+20];\n\
                \tld.shared.f32 %f7, [%r11+24];\n\tld.shared.f32 %f8, [%r11+28];\n";
    let sass = common::compile_and_verify("vec_unknown.ptx", "unknown", &kernel("k", "", body));
    assert_eq!(count(&sass, "LDS.U.32 "), 8, "{sass}");
    assert_eq!(
        count(&sass, "LDS.U.64 ") + count(&sass, "LDS.U.128 "),
        0,
        "{sass}"
    );
}

#[test]
fn store_or_barrier_between_loads_stops_the_merge() {
    // A store between two loads (to another address, as ptxas still refuses), and a barrier
    // between two more; the last pair, with nothing between, merges.
    let body = "\tld.shared.f32 %f1, [%r10];\n\tst.shared.f32 [%r10+4096], %f20;\n\
                \tld.shared.f32 %f2, [%r10+4];\n\
                \tld.shared.f32 %f3, [%r10+16];\n\tbar.sync 0;\n\
                \tld.shared.f32 %f4, [%r10+20];\n\
                \tld.shared.f32 %f5, [%r10+32];\n\tld.shared.f32 %f6, [%r10+36];\n\
                \tmov.f32 %f7, 0f3f800000;\n\tmov.f32 %f8, %f7;\n";
    let sass = common::compile_and_verify("vec_order.ptx", "order", &kernel("k", "", body));
    assert_eq!(count(&sass, "LDS.U.32 "), 4, "{sass}");
    assert_eq!(count(&sass, "LDS.U.64 "), 1, "{sass}");
}

#[test]
fn aligned_stores_merge_and_const_pairs_read_64() {
    // Four computed words stored at a 16-aligned address: one STS.128 (ptxas's shape), read
    // back after a barrier as one LDS.U.128. Two words of a `.const` array at a 16-aligned
    // index: one LDC.64 (LDC reads 64 bits at most).
    let decls = ".const .align 16 .b8 C[64] = {0,0,128,63, 0,0,0,64, 0,0,64,64, 0,0,128,64};\n";
    let body = "\tadd.f32 %f40, %f20, %f21;\n\tadd.f32 %f41, %f21, %f22;\n\
                \tadd.f32 %f42, %f22, %f23;\n\tadd.f32 %f43, %f23, %f24;\n\
                \tst.shared.f32 [%r10+4096], %f40;\n\tst.shared.f32 [%r10+4100], %f41;\n\
                \tst.shared.f32 [%r10+4104], %f42;\n\tst.shared.f32 [%r10+4108], %f43;\n\
                \tbar.sync 0;\n\
                \tld.shared.f32 %f1, [%r10+4096];\n\tld.shared.f32 %f2, [%r10+4100];\n\
                \tld.shared.f32 %f3, [%r10+4104];\n\tld.shared.f32 %f4, [%r10+4108];\n\
                \tand.b32 %r20, %r1, 3;\n\tshl.b32 %r21, %r20, 4;\n\
                \tmov.u32 %r22, C;\n\tadd.s32 %r23, %r22, %r21;\n\
                \tld.const.f32 %f5, [%r23];\n\tld.const.f32 %f6, [%r23+4];\n\
                \tld.const.f32 %f7, [%r23+8];\n\tld.const.f32 %f8, [%r23+12];\n";
    let sass = common::compile_and_verify("vec_store.ptx", "stores", &kernel("k", decls, body));
    assert_eq!(count(&sass, "STS.128 "), 1, "{sass}");
    assert_eq!(count(&sass, "LDS.U.128 "), 1, "{sass}");
    assert_eq!(count(&sass, "LDC.64 "), 2, "{sass}");
}

#[test]
fn loop_pointer_keeps_its_alignment() {
    // A pointer stepped by 16 around a loop of 1..4 trips (a block parameter): still 16-aligned, so each
    // iteration's four words are one LDS.U.128; stepped by 4 it is not.
    let body = "\tmov.u32 %r30, %r10;\n\tmov.u32 %r31, 0;\n\tmov.f32 %f1, 0f00000000;\n\
                \tmov.f32 %f2, %f1;\n\tmov.f32 %f3, %f1;\n\tmov.f32 %f4, %f1;\n\
                \tmov.u32 %r32, %r11;\n\tmov.f32 %f5, %f1;\n\tmov.f32 %f6, %f1;\n\
                \tand.b32 %r33, %r1, 3;\n\tadd.s32 %r33, %r33, 1;\n\
                 L1:\n\
                \tld.shared.f32 %f10, [%r30];\n\tld.shared.f32 %f11, [%r30+4];\n\
                \tld.shared.f32 %f12, [%r30+8];\n\tld.shared.f32 %f13, [%r30+12];\n\
                \tadd.f32 %f1, %f1, %f10;\n\tadd.f32 %f2, %f2, %f11;\n\
                \tadd.f32 %f3, %f3, %f12;\n\tadd.f32 %f4, %f4, %f13;\n\
                \tld.shared.f32 %f14, [%r32];\n\tld.shared.f32 %f15, [%r32+4];\n\
                \tadd.f32 %f5, %f5, %f14;\n\tadd.f32 %f6, %f6, %f15;\n\
                \tadd.s32 %r30, %r30, 16;\n\tadd.s32 %r32, %r32, 4;\n\
                \tadd.s32 %r31, %r31, 1;\n\tsetp.lt.u32 %p1, %r31, %r33;\n\
                \t@%p1 bra L1;\n\tmov.f32 %f7, %f1;\n\tmov.f32 %f8, %f2;\n";
    let sass = common::compile_and_verify("vec_loop.ptx", "loop", &kernel("k", "", body));
    assert_eq!(count(&sass, "LDS.U.128 "), 1, "{sass}");
    assert_eq!(count(&sass, "LDS.U.32 "), 2, "{sass}");
}
