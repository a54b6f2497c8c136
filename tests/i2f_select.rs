//! Snapshots of the SASS for integer-to-float conversions of a byte or halfword of a word, in
//! NVVM's shapes (`select/bytesel.rs`): each rule converts with I2F's source select on the
//! word (`I2F.F32.U8 R0, R2.B2`, `I2F.F32.U16 R0, R2.H1`) and the extraction (`LOP`, `SHR`,
//! `BFE`) is gone. tests/float_diff.rs (`conversions_byte_selects`) checks what they compute
//! against `ir::eval` and that nvdisasm prints the same text.

mod common;

/// A kernel that loads the word `%r1` (and the 64-bit `%rd4`) at its parameter, runs `body`
/// and stores `%f1`..`%f4` after it.
fn sass(name: &str, body: &str) -> String {
    let src = format!(
        r#"
.version 7.0
.target sm_50
.address_size 64
.visible .entry {name}(.param .u64 P)
{{
    .reg .f32 %f<8>;
    .reg .b16 %rs<12>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [P];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.nc.u32 %r1, [%rd2];
    ld.global.nc.u64 %rd4, [%rd2+8];
{body}
    st.global.v4.f32 [%rd2+16], {{%f1, %f2, %f3, %f4}};
    ret;
}}
"#
    );
    let out = common::compile_sass(name, &src);
    common::parse_lines(&out.sass)
        .into_iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(_, t)| t + "\n")
        .collect()
}

/// NV12-to-BGR's unpacking: `cvt.u16.u32`, then `and.b16 255` (byte 0) and `shr.u16 8`
/// (byte 1); `shr.u32 16`, `cvt.u16.u32`, `and.b16 255` (byte 2); `shr.u32 24`,
/// `cvt.u16.u32` (byte 3). Four selects `.B0`..`.B3` on the loaded word.
#[test]
fn nvvm_u16_bytes() {
    let body = "
    cvt.u16.u32 %rs1, %r1;
    and.b16 %rs2, %rs1, 255;
    shr.u16 %rs3, %rs1, 8;
    shr.u32 %r2, %r1, 16;
    cvt.u16.u32 %rs4, %r2;
    and.b16 %rs5, %rs4, 255;
    shr.u32 %r3, %r1, 24;
    cvt.u16.u32 %rs6, %r3;
    cvt.rn.f32.u16 %f1, %rs2;
    cvt.rn.f32.u16 %f2, %rs3;
    cvt.rn.f32.u16 %f3, %rs5;
    cvt.rn.f32.u16 %f4, %rs6;
";
    insta::assert_snapshot!("i2f_select_nvvm_u16_bytes", sass("nvvm_u16_bytes", body));
}

/// 32-bit shapes: `bfe.u32 x, 8, 8` (`.B1`), `and.b32 x, 255` read as s32 (nonnegative: the
/// unsigned byte), `shr.u32 x, 16` (`.H1`), `and.b32 x, 0xffff` (`U16`).
#[test]
fn bfe_and_halves() {
    let body = "
    bfe.u32 %r2, %r1, 8, 8;
    cvt.rn.f32.u32 %f1, %r2;
    and.b32 %r3, %r1, 255;
    cvt.rz.f32.s32 %f2, %r3;
    shr.u32 %r4, %r1, 16;
    cvt.rn.f32.u32 %f3, %r4;
    and.b32 %r5, %r1, 65535;
    cvt.rn.f32.u32 %f4, %r5;
";
    insta::assert_snapshot!("i2f_select_bfe_and_halves", sass("bfe_and_halves", body));
}

/// Signed narrow sources read the field's own bits: `cvt.rn.f32.s8` of byte 1 is
/// `I2F.F32.S8 .B1`, `cvt.rn.f32.s16` of the high half `I2F.F32.S16 .H1`; a byte of a 64-bit
/// word reads its register (bits 40..47: the high one, `.B1`). `shr.s32 x, 24` (a sign-filled
/// byte) has no select: plain `SHR` and `I2F.F32.S32`.
#[test]
fn signed_and_wide() {
    let body = "
    shr.u32 %r2, %r1, 8;
    cvt.u8.u32 %rs1, %r2;
    cvt.rn.f32.s8 %f1, %rs1;
    shr.u32 %r3, %r1, 16;
    cvt.u16.u32 %rs2, %r3;
    cvt.rn.f32.s16 %f2, %rs2;
    shr.u64 %rd5, %rd4, 40;
    cvt.u32.u64 %r4, %rd5;
    and.b32 %r5, %r4, 255;
    cvt.rn.f32.u32 %f3, %r5;
    shr.s32 %r6, %r1, 24;
    cvt.rn.f32.s32 %f4, %r6;
";
    insta::assert_snapshot!("i2f_select_signed_and_wide", sass("signed_and_wide", body));
}
