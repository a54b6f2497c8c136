//! `alloca`, `stacksave` and `stackrestore` (PTX ISA 7.3, sm_52; issue 19's last long-tail
//! family). Each kernel test checks:
//!
//! * the kernel compiles, and its SASS has ptxas 11.8's shape: R1 is the stack pointer and
//!   moves (`IADD R1, R1, -size` with the size in a register, `-c[0x0][..]` for a parameter
//!   or `IADD32I R1, R1, -k` for a constant, then `LOP32I.AND R1, R1, -align` with the
//!   alignment at least 8), probed with `ptxas -arch=sm_52`;
//! * the hazard checker finds nothing in our `.text`;
//! * with the oracle installed, `cuobjdump -sass` lists our cubin exactly as our printer does
//!   and nvdisasm prints every word of it the same way;
//! * `ir::eval` (the PTX meaning: a per-thread stack below the frame) and the simulator
//!   running our SASS write the same bytes over random launches of 2 CTAs × 64 threads, each
//!   thread with [`ROOM`] bytes of stack below its frame.
//!
//! And: the cubin's stack attributes are ptxas's (`EIATTR_MIN_STACK_SIZE` 0xffffffff, the
//! frame in `EIATTR_FRAME_SIZE`); what ptxas refuses is refused with its reason at the
//! instruction; `ir::eval` calls an access to released or never-allocated stack memory
//! undefined.
//!
//! Every kernel has parameters `(in, out, ...)`: thread `g` (global index) reads the word
//! `in[g]` and writes its results to `out[8g .. 8g + 8]` (words).

mod common;

use common::warp_kernel::*;

use leafold::cubin;
use leafold::driver::{compile, Options};
use leafold::ir::eval::{self, EvalError, Launch};

/// Bytes of stack below each thread's frame (a multiple of every alignment used here, so
/// `ir::eval`'s frame-relative alignment and the simulator's absolute one agree).
const ROOM: u32 = 16 << 10;

fn with_room(l: &mut Launch) {
    l.local_size = ROOM;
}

/// Compile, check, and compare eval with sim over 4 random launches with stack room.
fn run_stack(test: &str, src: &str) -> (leafold::driver::Output, Vec<u8>) {
    let out = compile_checked(test, src);
    let last = differential(test, src, &out, 4, with_room);
    (out, last)
}

/// The kernel's `EIATTR_MIN_STACK_SIZE` and `EIATTR_FRAME_SIZE`.
fn stack_attrs(cubin_bytes: &[u8]) -> (Option<u32>, Option<u32>) {
    let c = cubin::read(cubin_bytes).expect("cubin reads back");
    (c.kernels[0].min_stack_size, c.kernels[0].frame_size)
}

#[test]
fn vla_sized_by_a_parameter_writes_then_reads_back() {
    // n = param & 63 words (0 allowed), nvcc's generic round trip (cvta.local then
    // cvta.to.local), buf[i] = in * (i + 1) forwards, then a suffix sum backwards.
    let body = r#"
    ld.param.u32 %r3, [pn];
    and.b32 %r3, %r3, 63;
    mul.wide.u32 %rd7, %r3, 4;
    alloca.u64 %rd8, %rd7, 16;
    cvta.local.u64 %rd8, %rd8;
    cvta.to.local.u64 %rd8, %rd8;
    mov.u32 %r4, 0;
    mov.u64 %rd9, %rd8;
    setp.eq.u32 %p1, %r3, 0;
    @%p1 bra DONE1;
FILL:
    add.u32 %r5, %r4, 1;
    mul.lo.u32 %r6, %r2, %r5;
    st.local.u32 [%rd9], %r6;
    add.u64 %rd9, %rd9, 4;
    mov.u32 %r4, %r5;
    setp.lt.u32 %p2, %r4, %r3;
    @%p2 bra FILL;
    mov.u32 %r7, 0;
SUM:
    add.u64 %rd9, %rd9, -4;
    ld.local.u32 %r8, [%rd9];
    add.u32 %r7, %r7, %r8;
    st.local.u32 [%rd9], %r7;
    setp.ne.u64 %p3, %rd9, %rd8;
    @%p3 bra SUM;
    ld.local.u32 %r12, [%rd8];
    st.global.u32 [%rd3], %r12;
    st.global.u32 [%rd3+4], %r7;
DONE1:
    st.global.u32 [%rd3+8], %r3;
"#;
    let src = kernel_with("", ", .param .u32 pn", body);
    let out = compile_checked("alloca_vla", &src);
    // ptxas: the size straight from the parameter's constant-bank word (as `-c[0x0][..]`
    // needs it 32-bit; here the product is 64-bit, so it is a register) and the mask.
    assert!(
        has(&out.sass, |t| t.starts_with("IADD R1, R1, -R")),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |t| t == "LOP32I.AND R1, R1, 0xfffffff0"),
        "{}",
        out.sass
    );
    let ns = [0u32, 1, 5, 63, 40];
    for (k, n) in ns.iter().enumerate() {
        let last = differential("alloca_vla", &src, &out, 1, |l| {
            with_room(l);
            l.params
                .extend_from_slice(&(n + 64 * k as u32).to_le_bytes());
        });
        // Spot check against the meaning: buf[0] after the suffix sum is in * n(n+1)/2.
        let g = 3;
        assert_eq!(word(&last, g, 2), *n);
        if *n > 0 {
            assert_eq!(word(&last, g, 0), word(&last, g, 1));
        }
    }
    let (min, frame) = stack_attrs(&out.cubin);
    assert_eq!(
        min,
        Some(u32::MAX),
        "MIN_STACK_SIZE as ptxas: cannot be determined"
    );
    assert_eq!(frame, Some(0));
    // ptxas 11.8's warning, word for word.
    let warned = leafold::error::render_all(&out.diagnostics);
    assert!(
        warned.contains("Stack size for entry function 'k' cannot be statically determined"),
        "{warned}"
    );
}

#[test]
fn parameter_and_constant_sizes_are_ptxas_operands() {
    // A 32-bit size read from a parameter is `IADD R1, R1, -c[0x0][0x150]`; a constant one
    // `IADD32I R1, R1, -0x28`; alignment 4 (and none) is 8.
    let body = r#"
    ld.param.u32 %r3, [pn];
    alloca.u32 %r4, %r3, 4;
    alloca.u32 %r5, 40;
    st.local.u32 [%r4], %r2;
    st.local.u32 [%r5], %r1;
    st.local.u32 [%r5+36], %r9;
    ld.local.u32 %r6, [%r4];
    ld.local.u32 %r7, [%r5];
    ld.local.u32 %r8, [%r5+36];
    st.global.u32 [%rd3], %r6;
    st.global.u32 [%rd3+4], %r7;
    st.global.u32 [%rd3+8], %r8;
    sub.u32 %r10, %r4, %r5;
    st.global.u32 [%rd3+12], %r10;
    and.b32 %r11, %r5, 7;
    st.global.u32 [%rd3+16], %r11;
"#;
    let src = kernel_with("", ", .param .u32 pn", body);
    let out = compile_checked("alloca_operands", &src);
    let t = texts(&out.sass);
    assert!(
        t.iter().any(|t| t == "IADD R1, R1, -c[0x0][0x150]"),
        "{}",
        out.sass
    );
    assert!(
        t.iter().any(|t| t == "IADD32I R1, R1, -0x28"),
        "{}",
        out.sass
    );
    assert_eq!(
        t.iter()
            .filter(|t| *t == "LOP32I.AND R1, R1, 0xfffffff8")
            .count(),
        2,
        "{}",
        out.sass
    );
    let last = differential("alloca_operands", &src, &out, 3, |l| {
        with_room(l);
        l.params.extend_from_slice(&12u32.to_le_bytes());
    });
    // The second block lies 40 bytes (rounded to 8) below the first, aligned to 8.
    assert_eq!(word(&last, 5, 3), 40);
    assert_eq!(word(&last, 5, 4), 0);
}

#[test]
fn several_allocas_do_not_overlap() {
    // Three blocks (sizes from the input, 12 bytes, 8 bytes), each filled with its own
    // pattern, then all read back.
    let body = r#"
    and.b32 %r3, %r2, 15;
    add.u32 %r3, %r3, 1;
    mul.wide.u32 %rd7, %r3, 4;
    alloca.u64 %rd8, %rd7, 8;
    alloca.u64 %rd9, 12, 4;
    alloca.u64 %rd10, 8, 16;
    st.local.u32 [%rd9], %r1;
    st.local.u32 [%rd9+4], %r2;
    st.local.u32 [%rd9+8], %r9;
    st.local.v2.u32 [%rd10], {%r2, %r1};
    mov.u32 %r4, 0;
    mov.u64 %rd11, %rd8;
FILL:
    xor.b32 %r5, %r2, %r4;
    st.local.u32 [%rd11], %r5;
    add.u64 %rd11, %rd11, 4;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p1, %r4, %r3;
    @%p1 bra FILL;
    ld.local.u32 %r6, [%rd11+-4];
    ld.local.u32 %r7, [%rd9];
    ld.local.u32 %r8, [%rd9+8];
    ld.local.v2.u32 {%r10, %r11}, [%rd10];
    ld.local.u32 %r12, [%rd8];
    st.global.v4.u32 [%rd3], {%r6, %r7, %r8, %r12};
    st.global.v2.u32 [%rd3+16], {%r10, %r11};
    sub.u64 %rd12, %rd8, %rd10;
    cvt.u32.u64 %r13, %rd12;
    st.global.u32 [%rd3+24], %r13;
"#;
    let src = kernel("", body);
    let (out, last) = run_stack("alloca_several", &src);
    assert!(
        has(&out.sass, |t| t == "IADD32I R1, R1, -0xc"),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |t| t == "LOP32I.AND R1, R1, 0xfffffff0"),
        "{}",
        out.sass
    );
    // Each block reads back what was written to it.
    for g in [0usize, 7, 64, 127] {
        assert_eq!(word(&last, g, 1), g as u32, "thread {g}");
        assert_eq!(word(&last, g, 5), g as u32, "thread {g}");
        assert_eq!(word(&last, g, 0) ^ word(&last, g, 3), {
            // last element of block 1 is in ^ (n - 1), its first in ^ 0
            let n = (word(&last, g, 4) & 15) + 1;
            n - 1
        });
        // Block 3 lies below block 2 (12 → 16 bytes), below block 1.
        assert!(word(&last, g, 6) >= 16 + 8, "thread {g}");
    }
}

#[test]
fn alloca_in_a_loop_with_stacksave_and_stackrestore() {
    // LLVM's VLA-in-a-loop shape: each round saves the stack pointer, allocates
    // (in & 7) + 1 + round words, uses them, and restores it; at the end the stack pointer is
    // back where it started.
    let body = r#"
    stacksave.u64 %rd7;
    and.b32 %r3, %r2, 7;
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
ROUND:
    stacksave.u64 %rd8;
    add.u32 %r6, %r3, %r4;
    add.u32 %r6, %r6, 1;
    mul.wide.u32 %rd9, %r6, 4;
    alloca.u64 %rd10, %rd9, 16;
    mov.u32 %r7, 0;
    mov.u64 %rd11, %rd10;
FILL:
    mad.lo.u32 %r8, %r7, %r4, %r2;
    st.local.u32 [%rd11], %r8;
    add.u64 %rd11, %rd11, 4;
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p1, %r7, %r6;
    @%p1 bra FILL;
    ld.local.u32 %r10, [%rd11+-4];
    add.u32 %r5, %r5, %r10;
    stackrestore.u64 %rd8;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, 5;
    @%p2 bra ROUND;
    stacksave.u64 %rd12;
    sub.u64 %rd13, %rd12, %rd7;
    cvt.u32.u64 %r11, %rd13;
    st.global.u32 [%rd3], %r5;
    st.global.u32 [%rd3+4], %r11;
    cvt.u32.u64 %r12, %rd7;
    st.global.u32 [%rd3+8], %r12;
"#;
    let src = kernel("", body);
    let (out, last) = run_stack("alloca_loop", &src);
    // stacksave/stackrestore copy R1: a `.local` address is absolute, as ptxas's.
    assert!(
        has(&out.sass, |t| t.starts_with("MOV R1, R")),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |t| t.starts_with("MOV R") && t.ends_with(", R1")),
        "{}",
        out.sass
    );
    for g in [0usize, 33, 100] {
        assert_eq!(word(&last, g, 1), 0, "thread {g}: restored");
        // The frame base: R1 after the kernel's frame, the top of the stack room.
        assert_eq!(
            word(&last, g, 2),
            ROOM,
            "thread {g}: starts at the frame base"
        );
    }
}

#[test]
fn over_aligned_alloca() {
    // Alignments 256 and 4096 (ptxas: `LOP32I.AND R1, R1, 0xffffff00` / `0xfffff000`): the
    // addresses' low bits are zero and the blocks hold their data.
    let body = r#"
    and.b32 %r3, %r2, 255;
    add.u32 %r3, %r3, 4;
    cvt.u64.u32 %rd7, %r3;
    alloca.u64 %rd8, %rd7, 256;
    alloca.u64 %rd9, 8, 4096;
    st.local.u32 [%rd8], %r2;
    st.local.u32 [%rd9+4], %r1;
    ld.local.u32 %r4, [%rd8];
    ld.local.u32 %r5, [%rd9+4];
    cvt.u32.u64 %r6, %rd8;
    and.b32 %r6, %r6, 255;
    cvt.u32.u64 %r7, %rd9;
    and.b32 %r7, %r7, 4095;
    st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};
"#;
    let src = kernel("", body);
    let (out, last) = run_stack("alloca_aligned", &src);
    let t = texts(&out.sass);
    assert!(
        t.iter().any(|t| t == "LOP32I.AND R1, R1, 0xffffff00"),
        "{}",
        out.sass
    );
    assert!(
        t.iter().any(|t| t == "LOP32I.AND R1, R1, 0xfffff000"),
        "{}",
        out.sass
    );
    for g in [1usize, 50, 127] {
        assert_eq!(word(&last, g, 1), g as u32);
        assert_eq!(word(&last, g, 2), 0);
        assert_eq!(word(&last, g, 3), 0);
    }
}

#[test]
fn static_local_array_alongside_alloca() {
    // A `.local` array indexed at run time stays in the frame (addressed off the frame base
    // R0, as ptxas addresses it off its copy of R1) while R1 moves below it; FRAME_SIZE is
    // the array's.
    let body = r#"
    .local .align 8 .b8 arr[256];
    mov.u64 %rd7, arr;
    and.b32 %r3, %r2, 252;
    cvt.u64.u32 %rd8, %r3;
    add.u64 %rd9, %rd7, %rd8;
    st.local.u32 [%rd9], %r1;
    st.local.u32 [arr+252], %r2;
    and.b32 %r4, %r2, 31;
    add.u32 %r4, %r4, 1;
    mul.wide.u32 %rd10, %r4, 4;
    alloca.u64 %rd11, %rd10, 16;
    st.local.u32 [%rd11], %r9;
    add.u64 %rd12, %rd11, %rd10;
    st.local.u32 [%rd12+-4], %r2;
    ld.local.u32 %r5, [%rd9];
    ld.local.u32 %r6, [arr+252];
    ld.local.u32 %r7, [%rd11];
    ld.local.u32 %r8, [%rd12+-4];
    st.global.v4.u32 [%rd3], {%r5, %r6, %r7, %r8};
"#;
    let src = kernel("", body);
    let (out, last) = run_stack("alloca_static", &src);
    let (min, frame) = stack_attrs(&out.cubin);
    assert_eq!((min, frame), (Some(u32::MAX), Some(256)));
    assert!(
        has(&out.sass, |t| t == "IADD32I R1, R1, -0x100"),
        "{}",
        out.sass
    );
    assert!(has(&out.sass, |t| t == "MOV R0, R1"), "{}", out.sass);
    for g in [2usize, 90] {
        assert_eq!(word(&last, g, 2), (g % 64) as u32);
    }
}

#[test]
fn inlined_function_releases_its_allocation() {
    // A `.func` with `alloca` called from a loop (nvcc's shape for a device function using
    // alloca): leafold inlines it and restores the stack pointer at its return, as a real
    // return does; the stack is where it was after the loop.
    let decls = r#"
.func (.reg .b32 r) sum(.reg .b32 n, .reg .b32 x)
{
    .reg .b32 %s<8>;
    .reg .b64 %sd<4>;
    .reg .pred %q;
    mul.wide.u32 %sd1, n, 4;
    alloca.u64 %sd2, %sd1, 16;
    mov.u32 %s1, 0;
    mov.u32 r, 0;
    mov.u64 %sd3, %sd2;
L:
    add.u32 %s2, x, %s1;
    st.local.u32 [%sd3], %s2;
    ld.local.u32 %s3, [%sd3];
    add.u32 r, r, %s3;
    add.u64 %sd3, %sd3, 4;
    add.u32 %s1, %s1, 1;
    setp.lt.u32 %q, %s1, n;
    @%q bra L;
    ret;
}
"#;
    let body = r#"
    stacksave.u64 %rd7;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
ROUND:
    add.u32 %r5, %r3, 1;
    call (%r6), sum, (%r5, %r2);
    add.u32 %r4, %r4, %r6;
    mov.u32 %r3, %r5;
    setp.lt.u32 %p1, %r3, 6;
    @%p1 bra ROUND;
    stacksave.u64 %rd8;
    sub.u64 %rd9, %rd8, %rd7;
    cvt.u32.u64 %r7, %rd9;
    st.global.u32 [%rd3], %r4;
    st.global.u32 [%rd3+4], %r7;
"#;
    let src = kernel(decls, body);
    let (_, last) = run_stack("alloca_inlined", &src);
    for g in [0usize, 64] {
        assert_eq!(
            word(&last, g, 1),
            0,
            "thread {g}: the callee's blocks released"
        );
    }
}

#[test]
fn ptxas_refusals_are_located_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            ".version 7.3\n.target sm_50",
            "alloca.u64 %rd7, 16, 8;",
            "Feature 'alloca' requires .target sm_52 or higher",
        ),
        (
            ".version 7.2\n.target sm_52",
            "stacksave.u64 %rd7;",
            "Feature 'stacksave' requires PTX ISA .version 7.3 or later",
        ),
        (
            ".version 7.3\n.target sm_52",
            "alloca.u64 %rd7, 16, 3;",
            "Alignment must be a power of two",
        ),
        (
            ".version 7.3\n.target sm_52",
            "alloca.u64 %rd7, 16, 16777216;",
            "Alignment value too large, exceeds 2^23",
        ),
        (
            ".version 7.3\n.target sm_52",
            "alloca.u64 %rd7, %r1, 8;",
            "Arguments mismatch for instruction 'alloca'",
        ),
        (
            ".version 7.3\n.target sm_52",
            "alloca.u16 %rd7, %rd1, 8;",
            "Unexpected instruction types specified for 'alloca'",
        ),
        (
            ".version 7.3\n.target sm_52",
            "alloca.b64 %rd7, %rd1, 8;",
            "'.b64'",
        ),
        (
            ".version 7.3\n.target sm_52",
            "stackrestore.u64 0;",
            "Result register required for instruction 'stackrestore'",
        ),
        (
            ".version 7.3\n.target sm_52",
            "alloca.local.u64 %rd7, 16;",
            "'.local'",
        ),
    ];
    for (head, line, want) in cases {
        let src = format!(
            "{head}\n.address_size 64\n.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n{line}\nret;\n}}\n"
        );
        let opts = Options {
            file_name: "bad.ptx".into(),
            ..Options::default()
        };
        let d = compile(&src, &opts).expect_err(line);
        let text = leafold::error::render_all(&d.0);
        assert!(text.contains(want), "{line}: {text}");
        assert!(
            text.contains("bad.ptx:8:"),
            "{line}: located on its line: {text}"
        );
    }
}

#[test]
fn eval_refuses_released_and_unallocated_stack() {
    // A store through a block after `stackrestore` released it, and a load below the stack
    // pointer: undefined (no value to compare), not a mismatch.
    let cases = [
        "stacksave.u64 %rd7;\n alloca.u64 %rd8, 16, 16;\n stackrestore.u64 %rd7;\n st.local.u32 [%rd8], %r1;",
        "alloca.u64 %rd8, 16, 16;\n ld.local.u32 %r3, [%rd8+-4];\n st.global.u32 [%rd3], %r3;",
        "alloca.u64 %rd8, 16, 16;\n stacksave.u64 %rd7;\n alloca.u64 %rd9, 32, 16;\n stackrestore.u64 %rd7;\n ld.local.u32 %r3, [%rd9];\n st.global.u32 [%rd3], %r3;",
    ];
    for (k, body) in cases.iter().enumerate() {
        let src = kernel("", body);
        let module = common::ir_module(format!("undef{k}.ptx"), src.as_str());
        let mut l = launch(0);
        with_room(&mut l);
        match eval::run(&module, "k", &l) {
            Err(EvalError::Undefined { why, .. }) => {
                assert!(why.contains("dynamic stack"), "{body}: {why}")
            }
            other => panic!("{body}: {other:?}"),
        }
    }
    // With `undefined_uninit`, reading stack bytes nothing wrote is undefined; written ones
    // read back.
    let src = kernel(
        "",
        "alloca.u64 %rd8, 16, 16;\n st.local.u32 [%rd8+4], %r1;\n ld.local.u32 %r3, [%rd8+4];\n ld.local.u32 %r4, [%rd8+8];\n st.global.v2.u32 [%rd3], {%r3, %r4};",
    );
    let module = common::ir_module("uninit.ptx", src.as_str());
    let mut l = launch(0);
    with_room(&mut l);
    l.undefined_uninit = true;
    let e = eval::run(&module, "k", &l).expect_err("reads an unwritten stack word");
    assert!(e.to_string().contains("nothing wrote"), "{e}");
    // Growing past the launch's room is undefined too.
    let src = kernel(
        "",
        "alloca.u64 %rd8, 65536, 16;\n st.local.u32 [%rd8], %r1;",
    );
    let module = common::ir_module("big.ptx", src.as_str());
    let mut l = launch(0);
    with_room(&mut l);
    let e = eval::run(&module, "k", &l).expect_err("past the room");
    assert!(e.to_string().contains("bytes of stack"), "{e}");
}

#[test]
fn cubin_stack_attributes_match_ptxas() {
    // With the oracle: ptxas's cubin of the same kernel has the same MIN_STACK_SIZE and
    // FRAME_SIZE.
    let body = r#"
    .local .align 4 .b8 arr[64];
    and.b32 %r3, %r2, 60;
    cvt.u64.u32 %rd7, %r3;
    mov.u64 %rd8, arr;
    add.u64 %rd8, %rd8, %rd7;
    st.local.u32 [%rd8], %r1;
    alloca.u64 %rd9, %rd7, 8;
    st.local.u32 [%rd9], %r2;
    ld.local.u32 %r4, [%rd9];
    ld.local.u32 %r5, [%rd8];
    add.u32 %r6, %r4, %r5;
    st.global.u32 [%rd3], %r6;
"#;
    let src = kernel("", body);
    let (out, _) = run_stack("alloca_attrs", &src);
    let ours = stack_attrs(&out.cubin);
    assert_eq!(ours, (Some(u32::MAX), Some(64)));
    let Some(oracle) = leafold::oracle::Oracle::for_test("alloca_attrs") else {
        return;
    };
    let theirs = oracle.ptxas(&src, "sm_52", &[]).expect("ptxas compiles it");
    assert_eq!(stack_attrs(&theirs), ours);
}
