//! `.local` addresses in registers are absolute, `R1 + offset`, as ptxas 11.8 makes them
//! (`lower::amode`'s essay): every way an access can reach a `.local` variable's address
//! through address arithmetic keeps R1 in it. Each test compiles a kernel with a local
//! array and no calls, checks hazards and (with the oracle) that cuobjdump and nvdisasm print
//! our listing, and compares `ir::eval` with the simulator running our SASS over random
//! launches (a lost R1 writes below the frame: the array's words then differ). The listing
//! checks pin the shape: R1 is added to the register part once.
//!
//! Thread `g` reads `in[g]` (`%r2`) and writes its results to `out[8g .. 8g + 8]`.

mod common;

use common::warp_kernel::*;

/// Fill `arr[0..16]` words with `k * 3 + 1` (every word a later load may read is defined).
const FILL: &str = r#"
    .local .align 4 .b8 arr[64];
    mov.u32 %r20, 0;
$L_fill:
    shl.b32 %r21, %r20, 2;
    cvt.u64.u32 %rd10, %r21;
    mov.u64 %rd11, arr;
    add.u64 %rd12, %rd11, %rd10;
    mad.lo.s32 %r22, %r20, 3, 1;
    st.local.u32 [%rd12], %r22;
    add.s32 %r20, %r20, 1;
    setp.lt.u32 %p1, %r20, 16;
    @%p1 bra $L_fill;
"#;

/// Whether some instruction other than the frame's set-up reads R1 into a register (`IADD
/// d, R1, x`, `LEA d, x, R1`, `MOV d, R1`): the absolute address of `arr + x` is made of it.
fn reads_r1(sass: &str) -> bool {
    has(sass, |t| {
        let (op, rest) = t.split_once(' ').unwrap_or((t, ""));
        let ops: Vec<&str> = rest.trim_end_matches(" ;").split(", ").collect();
        !op.starts_with("STL")
            && !op.starts_with("LDL")
            && ops.len() > 1
            && ops[0] != "R1"
            && ops[1..]
                .iter()
                .any(|o| o.trim_end_matches(';').trim() == "R1")
    })
}

/// `arr + x` where `x` is in a register anyway (stored too): the sum's access must add R1,
/// not take `x` alone as the address (calls7's `MOV R4, R9`). Both operand orders.
#[test]
fn array_plus_a_register_keeps_r1() {
    let body = format!(
        "{FILL}{}",
        r#"
    and.b32 %r3, %r2, 60;
    cvt.u64.u32 %rd7, %r3;
    mov.u64 %rd8, arr;
    add.u64 %rd9, %rd8, %rd7;
    st.local.u32 [%rd9], %r2;
    add.u64 %rd13, %rd7, %rd8;
    ld.local.u32 %r4, [%rd13];
    ld.local.u32 %r5, [arr];
    ld.local.u32 %r6, [arr+60];
    st.global.u32 [%rd3], %r4;
    st.global.u32 [%rd3+4], %r5;
    st.global.u32 [%rd3+8], %r6;
    st.global.u32 [%rd3+12], %r3;
"#
    );
    let (out, last) = run("local_arr_plus_reg", "", &body);
    assert!(reads_r1(&out.sass), "{}", out.sass);
    // Thread 0 of the last launch, by hand: the word written and the array's ends.
    let x = input0();
    let k = (x & 60) / 4;
    let read = |w: u32| if w == k { x } else { w * 3 + 1 };
    assert_eq!(word(&last, 0, 0), x, "{}", out.sass);
    assert_eq!(word(&last, 0, 1), read(0), "{}", out.sass);
    assert_eq!(word(&last, 0, 2), read(15), "{}", out.sass);
}

/// Thread 0's input word in the last launch [`run`] makes (seed 3).
fn input0() -> u32 {
    u32::from_le_bytes(launch(3).global[0].bytes[0..4].try_into().unwrap())
}

/// `(arr + x) + (i << 2)`: R1 with a base of its own and a scaled index; the array's
/// address becomes a register (`R1`'s copy) like any other leaf.
#[test]
fn array_plus_a_register_plus_a_scaled_index() {
    let body = format!(
        "{FILL}{}",
        r#"
    and.b32 %r3, %r2, 16;
    cvt.u64.u32 %rd7, %r3;
    mov.u64 %rd8, arr;
    add.u64 %rd9, %rd8, %rd7;
    shr.u32 %r4, %r2, 8;
    and.b32 %r4, %r4, 7;
    add.s32 %r4, %r4, 1;
    mul.wide.u32 %rd13, %r4, 4;
    add.u64 %rd14, %rd9, %rd13;
    st.local.u32 [%rd14], %r2;
    ld.local.u32 %r5, [%rd14+-4];
    ld.local.u32 %r6, [arr+4];
    ld.local.u32 %r7, [arr+36];
    st.global.u32 [%rd3], %r5;
    st.global.u32 [%rd3+4], %r6;
    st.global.u32 [%rd3+8], %r7;
"#
    );
    let (out, _) = run("local_arr_reg_index", "", &body);
    assert!(reads_r1(&out.sass), "{}", out.sass);
}

/// nvcc's generic round trip of `arr + x` (`cvta.local`, then `cvta.to.local`), and a
/// generic access through it: the generic address is the window plus the absolute address.
#[test]
fn array_plus_a_register_through_generic() {
    let body = format!(
        "{FILL}{}",
        r#"
    and.b32 %r3, %r2, 60;
    cvt.u64.u32 %rd7, %r3;
    mov.u64 %rd8, arr;
    add.u64 %rd9, %rd8, %rd7;
    cvta.local.u64 %rd13, %rd9;
    st.u32 [%rd13], %r2;
    cvta.to.local.u64 %rd14, %rd13;
    ld.local.u32 %r5, [%rd14];
    ld.local.u32 %r6, [arr+8];
    st.global.u32 [%rd3], %r5;
    st.global.u32 [%rd3+4], %r6;
"#
    );
    let (out, last) = run("local_arr_generic", "", &body);
    assert!(reads_r1(&out.sass), "{}", out.sass);
    assert_eq!(word(&last, 0, 0), input0(), "{}", out.sass);
}
