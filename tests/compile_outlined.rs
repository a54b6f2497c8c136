//! Large `.func`s called from several places are kept as subroutines (issue 22's "calls that
//! should not be inlined"; `ir::build::calls::outlined_set`), as ptxas 11.8 keeps every
//! defined `.func`; small ones, and large ones a kernel calls once, are still inlined.
//!
//! The large function is shaped as NVVM writes `__internal_trig_reduction_slowpathd`: `.param`
//! arguments, a `.b64` pointer into the *caller's* `.local` depot that it writes through
//! (generic stores), f64 constants (which the subroutine reads from the kernel's literal pool
//! in constant bank 2), and a long straight body. Each test checks, as the other call tests
//! do: hazard-free code printed by nvdisasm exactly as we print it (`compile_checked`),
//! `ir::eval` = the simulator on random launches, and the shape: one `CAL` per call, the
//! body once, no recursion warning and no recursion CRS stack (0x600).

mod common;

use common::warp_kernel::*;
use leafold::cubin::{self, eiattr::Attribute};

/// Bytes of stack each thread gets below its frame.
const STACK: u32 = 4096;

/// `big(x: f64, p: .b64 generic pointer to two words) -> f64`: `steps` rounds of f64 and
/// integer work on `x` (each round 4 PTX instructions), an f32 division (whose slow path's
/// `RET`s return into the subroutine, not from it), the integer state written to `p[0]` and
/// `p[1]`.
fn big(steps: usize) -> String {
    let mut body = String::new();
    for k in 0..steps {
        let c = 1.0 + k as f64 / 64.0;
        body.push_str(&format!(
            "    fma.rn.f64 %fd1, %fd1, 0d{:016X}, 0d3FE0000000000000;\n\
             \x20   mov.b64 %rd3, %fd1;\n\
             \x20   xor.b64 %rd4, %rd4, %rd3;\n\
             \x20   shf.l.wrap.b32 %r1, %r1, %r1, {};\n",
            c.to_bits(),
            k % 31 + 1
        ));
    }
    format!(
        r#"
.func (.param .b64 func_retval0) big(.param .b64 big_param_0, .param .b64 big_param_1)
{{
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    .reg .f64 %fd<4>;
    .reg .f32 %f<4>;
    ld.param.f64 %fd1, [big_param_0];
    ld.param.u64 %rd1, [big_param_1];
    mov.b64 %rd4, %fd1;
    cvt.u32.u64 %r1, %rd4;
{body}    cvt.u32.u64 %r2, %rd4;
    xor.b32 %r2, %r2, %r1;
    cvt.rn.f32.u32 %f1, %r2;
    and.b32 %r4, %r1, 255;
    cvt.rn.f32.u32 %f2, %r4;
    div.rn.f32 %f3, %f1, %f2;
    mov.b32 %r5, %f3;
    xor.b32 %r2, %r2, %r5;
    st.u32 [%rd1], %r2;
    shr.u64 %rd5, %rd4, 32;
    cvt.u32.u64 %r3, %rd5;
    st.u32 [%rd1+4], %r3;
    st.param.f64 [func_retval0+0], %fd1;
    ret;
}}
"#
    )
}

/// One call of `big` on `%fd{arg}` with the generic address `%rd{ptr}`, result in `%fd{res}`.
fn call_big(arg: u32, ptr: u32, res: u32) -> String {
    format!(
        r#"    {{
    .param .b64 param0;
    st.param.f64 [param0+0], %fd{arg};
    .param .b64 param1;
    st.param.b64 [param1+0], %rd{ptr};
    .param .b64 retval0;
    call.uni (retval0), big, (param0, param1);
    ld.param.f64 %fd{res}, [retval0+0];
    }}
"#
    )
}

/// The kernel body: `big` called under two data-dependent guards (as the trig slow path is),
/// each on its own value and its own half of a `.local` depot, then everything stored.
fn body(calls: usize) -> String {
    let mut s = String::from(
        "    .local .align 8 .b8 __local_depot0[16];\n\
         \x20   .reg .b64 %SP;\n\
         \x20   .reg .f64 %fd<8>;\n\
         \x20   mov.u64 %SP, __local_depot0;\n\
         \x20   cvta.local.u64 %SP, %SP;\n\
         \x20   cvt.rn.f64.u32 %fd1, %r2;\n\
         \x20   cvt.rn.f64.u32 %fd2, %r1;\n\
         \x20   mov.f64 %fd3, %fd1;\n\
         \x20   mov.f64 %fd4, %fd2;\n\
         \x20   mov.u32 %r20, 0;\n\
         \x20   st.local.u32 [__local_depot0], %r20;\n\
         \x20   st.local.u32 [__local_depot0+4], %r20;\n\
         \x20   st.local.u32 [__local_depot0+8], %r20;\n\
         \x20   st.local.u32 [__local_depot0+12], %r20;\n\
         \x20   and.b32 %r21, %r2, 1;\n\
         \x20   setp.eq.s32 %p1, %r21, 0;\n\
         \x20   @%p1 bra $L_a;\n\
         \x20   add.u64 %rd8, %SP, 0;\n",
    );
    s.push_str(&call_big(1, 8, 3));
    s.push_str("$L_a:\n");
    if calls > 1 {
        s.push_str(
            "    and.b32 %r22, %r2, 2;\n\
             \x20   setp.eq.s32 %p2, %r22, 0;\n\
             \x20   @%p2 bra $L_b;\n\
             \x20   add.u64 %rd9, %SP, 8;\n",
        );
        s.push_str(&call_big(2, 9, 4));
        s.push_str("$L_b:\n");
    }
    s.push_str(
        "    st.global.f64 [%rd3], %fd3;\n\
         \x20   st.global.f64 [%rd3+8], %fd4;\n\
         \x20   ld.local.u32 %r23, [__local_depot0];\n\
         \x20   ld.local.u32 %r24, [__local_depot0+4];\n\
         \x20   ld.local.u32 %r25, [__local_depot0+8];\n\
         \x20   ld.local.u32 %r26, [__local_depot0+12];\n\
         \x20   st.global.v4.u32 [%rd3+16], {%r23, %r24, %r25, %r26};\n",
    );
    s
}

fn count(sass: &str, prefix: &str) -> usize {
    texts(sass).iter().filter(|t| t.starts_with(prefix)).count()
}

/// Compile, check and compare eval with the simulator; the SASS, and whether `big` is a
/// subroutine of the kernel (ptxas's LOCAL FUNC symbol `$k$big`).
fn check(test: &str, steps: usize, calls: usize) -> (String, bool) {
    let src = kernel(&big(steps), &body(calls));
    let out = compile_checked(test, &src);
    differential(test, &src, &out, 3, |l| l.local_size = STACK);
    let c = cubin::read(&out.cubin).expect("cubin reads back");
    let sub = c.symbols.iter().any(|s| s.name == "$k$big");
    (out.sass, sub)
}

#[test]
fn large_function_called_twice_is_one_subroutine() {
    let src = kernel(&big(30), &body(2));
    let out = compile_checked("outlined_twice", &src);
    let sass = &out.sass;
    // Two calls of `big`, and its division's call of the f32 slow path, once.
    assert_eq!(
        count(sass, "CAL "),
        3,
        "two calls of one subroutine\n{sass}"
    );
    assert_eq!(count(sass, "FCHK"), 1, "the body once\n{sass}");
    // 30 rounds of one DFMA each: the body is there once, not twice.
    let dfma = count(sass, "DFMA");
    assert!((30..45).contains(&dfma), "{dfma} DFMAs\n{sass}");
    // The f64 constants come from the kernel's own bank 2, which holds the subroutine's.
    assert!(sass.contains("c[0x2]"), "{sass}");
    // Not recursive: the subroutine's own stack record is its frame, not 0xffffffff.
    let c = cubin::read(&out.cubin).expect("cubin reads back");
    let at = c
        .symbols
        .iter()
        .position(|s| s.name == "$k$big")
        .expect("a $k$big symbol");
    assert!(
        c.info.iter().any(
            |a| matches!(a, Attribute::MinStackSize { sym, size } if *sym as usize == at && *size != u32::MAX)
        ),
        "{:?}",
        c.info
    );
    // The kernel's record is the whole stack its calls need, as ptxas writes it (probe: its
    // frame plus the subroutine's; ptxas's `big` has no frame of its own, so its kernel
    // writes 0x10, its frame): the kernel's frame plus `big`'s.
    let frame_of = |at: usize| {
        c.info.iter().find_map(|a| match a {
            Attribute::FrameSize { sym, size } if *sym as usize == at => Some(*size),
            _ => None,
        })
    };
    let min_of = |at: usize| {
        c.info.iter().find_map(|a| match a {
            Attribute::MinStackSize { sym, size } if *sym as usize == at => Some(*size),
            _ => None,
        })
    };
    let kat = c.symbols.iter().position(|s| s.name == "k").expect("k");
    let (kf, bf) = (frame_of(kat).unwrap(), frame_of(at).unwrap());
    assert_eq!(min_of(at), Some(bf), "{:?}", c.info);
    assert_eq!(min_of(kat), Some(kf + bf), "{:?}", c.info);
    assert!(
        !c.kernels[0]
            .info
            .iter()
            .any(|a| matches!(a, Attribute::CrsStackSize(0x600))),
        "{:?}",
        c.kernels[0].info
    );
    assert!(
        out.diagnostics
            .iter()
            .all(|d| !d.message.contains("cannot be statically determined")),
        "{:?}",
        out.diagnostics
    );
    // Both guards taken, neither, and one of them: each thread's local words are what its
    // calls wrote, or the zeros it stored.
    let last = differential("outlined_twice", &src, &out, 3, |l| l.local_size = STACK);
    let mut seen = [false; 2];
    for g in 0..64 {
        let w = |k| word(&last, g, k);
        seen[0] |= w(4) != 0 || w(5) != 0;
        seen[1] |= w(6) != 0 || w(7) != 0;
    }
    assert!(seen[0] && seen[1], "both calls ran on some thread");
}

#[test]
fn large_function_called_once_is_inlined() {
    let (sass, sub) = check("outlined_once", 30, 1);
    assert!(!sub, "{sass}");
    // The one `CAL` is the inlined division's, of the f32 slow path.
    assert_eq!(count(&sass, "CAL "), 1, "{sass}");
}

#[test]
fn small_function_called_twice_is_inlined() {
    // 10 rounds: about 50 PTX instructions, under the size rule's 100.
    let (sass, sub) = check("outlined_small", 10, 2);
    assert!(!sub, "{sass}");
    // Each copy's division calls the f32 slow path.
    assert_eq!(count(&sass, "CAL "), 2, "{sass}");
    assert!(count(&sass, "DFMA") >= 20, "two copies\n{sass}");
}
