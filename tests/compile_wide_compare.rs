//! Ordered 64-bit compares (`setp.{lt,le,gt,ge}.{u,s}64`) lower to ptxas's two-instruction
//! shape: `IADD RZ.CC, a.lo, -b.lo` (CF: no borrow from the low words, ZF: they are equal),
//! then `ISETP.<cc>[.U32].X` on the high words, for a register, a parameter (constant bank)
//! and an immediate `b` (`IADD32I RZ.CC, a.lo, -k.lo`, or `-RZ` when `k.lo` is 0, and the high
//! word as ISETP's immediate). Equality keeps its two accumulated ISETPs.
//!
//! The kernel compares each pair of eight edge values (low words equal, off by one, the sign
//! bit, all ones) with every ordered condition and stores one bit per compare; `verify`
//! checks `ir::eval` against the simulator on that code, and the listing is checked for the
//! shape (one `.X` ISETP and one CC-writing add per ordered compare, no three-ISETP chains).

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

const PTX: &str = r#"
.version 7.0
.target sm_50
.address_size 64
.const .align 8 .u64 edges[8] = {0, 1, 4294967295, 4294967296, 4294967297,
    9223372036854775807, 9223372036854775808, 18446744073709551615};
.visible .entry k(.param .u64 out, .param .u64 p)
{
    .reg .pred %p<16>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd9, [p];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 7;
    shr.u32 %r3, %r1, 3;
    and.b32 %r3, %r3, 7;
    mul.wide.u32 %rd2, %r2, 8;
    mul.wide.u32 %rd3, %r3, 8;
    mov.u64 %rd4, edges;
    add.s64 %rd5, %rd4, %rd2;
    add.s64 %rd6, %rd4, %rd3;
    ld.const.u64 %rd7, [%rd5];
    ld.const.u64 %rd8, [%rd6];
    setp.lt.u64 %p1, %rd7, %rd8;
    setp.le.u64 %p2, %rd7, %rd8;
    setp.gt.u64 %p3, %rd7, %rd8;
    setp.ge.u64 %p4, %rd7, %rd8;
    setp.lt.s64 %p5, %rd7, %rd8;
    setp.le.s64 %p6, %rd7, %rd8;
    setp.gt.s64 %p7, %rd7, %rd8;
    setp.ge.s64 %p8, %rd7, %rd8;
    setp.lt.u64 %p9, %rd7, 4294967296;
    setp.gt.s64 %p10, %rd7, 1;
    setp.le.s64 %p11, %rd7, -2;
    setp.ge.u64 %p12, %rd7, %rd9;
    setp.lt.s64 %p13, %rd9, %rd8;
    selp.u32 %r10, 1, 0, %p1;
    selp.u32 %r11, 2, 0, %p2;
    selp.u32 %r12, 4, 0, %p3;
    selp.u32 %r13, 8, 0, %p4;
    selp.u32 %r14, 16, 0, %p5;
    selp.u32 %r15, 32, 0, %p6;
    selp.u32 %r16, 64, 0, %p7;
    selp.u32 %r17, 128, 0, %p8;
    selp.u32 %r18, 256, 0, %p9;
    selp.u32 %r19, 512, 0, %p10;
    selp.u32 %r20, 1024, 0, %p11;
    selp.u32 %r21, 2048, 0, %p12;
    selp.u32 %r22, 4096, 0, %p13;
    or.b32 %r30, %r10, %r11;
    or.b32 %r30, %r30, %r12;
    or.b32 %r30, %r30, %r13;
    or.b32 %r30, %r30, %r14;
    or.b32 %r30, %r30, %r15;
    or.b32 %r30, %r30, %r16;
    or.b32 %r30, %r30, %r17;
    or.b32 %r30, %r30, %r18;
    or.b32 %r30, %r30, %r19;
    or.b32 %r30, %r30, %r20;
    or.b32 %r30, %r30, %r21;
    or.b32 %r30, %r30, %r22;
    mul.wide.u32 %rd10, %r1, 4;
    add.s64 %rd11, %rd1, %rd10;
    st.global.u32 [%rd11], %r30;
    ret;
}
"#;

/// Each instruction's opcode (with modifiers, without the guard) and first operand.
fn ops(listing: &str) -> Vec<String> {
    common::parse_lines(listing)
        .into_iter()
        .map(|(_, text)| {
            let mut words = text.split_whitespace().skip_while(|w| w.starts_with('@'));
            let op = words.next().unwrap_or("");
            format!("{op} {}", words.next().unwrap_or(""))
        })
        .collect()
}

#[test]
fn ordered_wide_compares_are_a_borrow_then_an_extended_isetp() {
    let opts = Options {
        emit: Emit::Sass,
        ..Options::default()
    };
    let out = compile(PTX, &opts).expect("compiles");
    let sass = out.sass;
    let ops = ops(&sass);
    let count = |p: &dyn Fn(&str) -> bool| ops.iter().filter(|o| p(o)).count();
    // 13 ordered compares: each one `.X` ISETP and one add into RZ.CC.
    assert_eq!(
        count(&|o| o.starts_with("ISETP") && o.contains(".X.")),
        13,
        "{sass}"
    );
    // No accumulated chain: its middle step was `ISETP.EQ.U32.AND` on the high words (the
    // other ISETPs here are `.NE` tests of predicates the allocator kept in registers).
    assert_eq!(count(&|o| o.starts_with("ISETP.EQ")), 0, "{sass}");
    assert_eq!(
        count(&|o| o.starts_with("IADD") && o.ends_with(" RZ.CC,")),
        13,
        "{sass}"
    );
    // The constants stay immediates: k.lo != 0 by IADD32I, k.lo == 0 by `-RZ`.
    assert!(sass.contains("IADD32I RZ.CC,"), "{sass}");
    assert!(sass.contains(", -RZ ;"), "{sass}");
    // The parameter is read from the constant bank, not moved into registers first.
    assert!(sass.contains("-c[0x0][0x148]"), "{sass}");
    // NVIDIA's tools print the new encodings (`IADD RZ.CC, a, -RZ`, `IADD32I RZ.CC`,
    // `ISETP.X` with an immediate) as our printer does.
    if let Some(oracle) =
        Oracle::for_test("ordered_wide_compares_are_a_borrow_then_an_extended_isetp")
    {
        common::assert_oracle_prints_our_listing(&oracle, "wide compares", &out.cubin, &sass);
    }
}

#[test]
fn ordered_wide_compares_verify_on_edge_values() {
    let o = VerifyOptions {
        runs: 2,
        ..VerifyOptions::default()
    };
    let v = verify_file(PTX, None, &o).expect("compiles");
    assert_eq!(v.len(), 1);
    assert!(
        matches!(v[0].outcome, Outcome::Match { .. }),
        "{:?}",
        v[0].outcome
    );
}
