//! Integer and memory instructions of newer GPUs emulated on sm_5x (issue 26,
//! `src/ir/build/emulate.rs`): `dp4a` and `dp2a` in every signedness, `bmsk`, `szext`,
//! `nanosleep`, and `cp.async` with its commit and wait groups and its zero fill (src-size,
//! `ignore-src`). One test per construct, each
//! checked the `common::warp_kernel` way (compiles; hazard-free; with the oracle, cuobjdump and
//! nvdisasm print our listing; `ir::eval` and the simulator write the same bytes over random
//! launches), and then against the PTX ISA's definition: the words the kernel wrote are
//! compared with a direct Rust transcription of the ISA's pseudocode applied to the same
//! inputs, so the expansion itself is checked, not only its compilation.
//!
//! Every kernel has parameters `(in, out)`: thread `g` reads `in[g]` into `%r2` and writes
//! `out[8g .. 8g + 8]`. Second and third operands are derived from `%r2` in the kernel
//! (`b = a * 0x9e3779b1 + 0x1234567`, `c = a ^ 0x5a5a5a5a` by [`ABC`]).

mod common;

use common::warp_kernel::*;

/// `%r3 = b`, `%r4 = c` from `%r2 = a`.
const ABC: &str = r#"
    mad.lo.u32 %r3, %r2, 0x9e3779b1, 0x1234567;
    xor.b32 %r4, %r2, 0x5a5a5a5a;
"#;

fn abc(a: u32) -> (u32, u32, u32) {
    (
        a,
        a.wrapping_mul(0x9e37_79b1).wrapping_add(0x123_4567),
        a ^ 0x5a5a_5a5a,
    )
}

/// The input word of thread `g` in launch `seed`.
fn input(seed: u64, g: usize) -> u32 {
    let b = &launch(seed).global[0].bytes;
    u32::from_le_bytes(b[4 * g..4 * g + 4].try_into().unwrap())
}

/// Run `body` (after [`ABC`]) and check word `w` of every thread of the last launch against
/// `want[w](a, b, c)`.
fn run_against(test: &str, body: &str, want: &[fn(u32, u32, u32) -> u32]) -> String {
    let (out, last) = run(test, "", &format!("{ABC}{body}"));
    for g in 0..(THREADS * CTAS) as usize {
        let (a, b, c) = abc(input(3, g));
        for (w, f) in want.iter().enumerate() {
            assert_eq!(
                word(&last, g, w),
                f(a, b, c),
                "{test}: thread {g}, word {w}: a={a:#x} b={b:#x} c={c:#x}"
            );
        }
    }
    out.sass
}

fn byte(x: u32, i: u32, signed: bool) -> i64 {
    let v = (x >> (8 * i)) & 0xff;
    if signed {
        v as u8 as i8 as i64
    } else {
        v as i64
    }
}

fn half(x: u32, i: u32, signed: bool) -> i64 {
    let v = (x >> (16 * i)) & 0xffff;
    if signed {
        v as u16 as i16 as i64
    } else {
        v as i64
    }
}

/// PTX ISA, dp4a: `d = c + Σ ext(a.byte[i]) * ext(b.byte[i])`, 32-bit wrap-around.
fn dp4a(sa: bool, sb: bool, a: u32, b: u32, c: u32) -> u32 {
    let s: i64 = (0..4).map(|i| byte(a, i, sa) * byte(b, i, sb)).sum();
    (c as i64).wrapping_add(s) as u32
}

/// PTX ISA, dp2a: `d = c + Σ_{i<2} ext(a.half[i]) * ext(b.byte[i + 2·hi])`.
fn dp2a(hi: bool, sa: bool, sb: bool, a: u32, b: u32, c: u32) -> u32 {
    let off = if hi { 2 } else { 0 };
    let s: i64 = (0..2).map(|i| half(a, i, sa) * byte(b, i + off, sb)).sum();
    (c as i64).wrapping_add(s) as u32
}

#[test]
fn dp4a_every_signedness() {
    let body = r#"
    dp4a.s32.s32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3], %r5;
    dp4a.u32.u32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+4], %r5;
    dp4a.s32.u32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+8], %r5;
    dp4a.u32.s32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+12], %r5;
    dp4a.s32.s32 %r5, %r2, 0x80ff7f01, -5;
    st.global.u32 [%rd3+16], %r5;
"#;
    let sass = run_against(
        "dp4a",
        body,
        &[
            |a, b, c| dp4a(true, true, a, b, c),
            |a, b, c| dp4a(false, false, a, b, c),
            |a, b, c| dp4a(true, false, a, b, c),
            |a, b, c| dp4a(false, true, a, b, c),
            |a, _, _| dp4a(true, true, a, 0x80ff_7f01, -5i32 as u32),
        ],
    );
    assert!(has(&sass, |t| t.starts_with("XMAD")), "{sass}");
    // An edge value by hand: all bytes -128 times all bytes -128, four times 2^14.
    assert_eq!(dp4a(true, true, 0x8080_8080, 0x8080_8080, 0), 0x1_0000);
}

#[test]
fn dp2a_lo_and_hi_every_signedness() {
    let body = r#"
    dp2a.lo.s32.s32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3], %r5;
    dp2a.hi.s32.s32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+4], %r5;
    dp2a.lo.u32.u32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+8], %r5;
    dp2a.hi.u32.u32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+12], %r5;
    dp2a.lo.u32.s32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+16], %r5;
    dp2a.hi.s32.u32 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+20], %r5;
"#;
    run_against(
        "dp2a",
        body,
        &[
            |a, b, c| dp2a(false, true, true, a, b, c),
            |a, b, c| dp2a(true, true, true, a, b, c),
            |a, b, c| dp2a(false, false, false, a, b, c),
            |a, b, c| dp2a(true, false, false, a, b, c),
            |a, b, c| dp2a(false, false, true, a, b, c),
            |a, b, c| dp2a(true, true, false, a, b, c),
        ],
    );
}

/// PTX ISA, bmsk (the pseudocode as written there).
fn bmsk(clamp: bool, a: u32, b: u32) -> u32 {
    let a1 = a & 0x1f;
    let mut mask0 = !0u32 << a1;
    let b1 = b & 0x1f;
    let sum = a1 + b1;
    let mut mask1 = if sum < 32 { !0u32 << sum } else { 0 };
    let mut pos_over = false;
    let mut width_over = false;
    if clamp {
        if a >= 32 {
            pos_over = true;
            mask0 = 0;
        }
        if b >= 32 {
            width_over = true;
        }
    }
    if sum >= 32 || pos_over || width_over {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = !0;
    }
    mask0 & !mask1
}

/// PTX ISA, szext.
fn szext(clamp: bool, signed: bool, a: u32, b: u32) -> u32 {
    let b1 = b & 0x1f;
    let too_large = b >= 32 && clamp;
    let mask = if too_large { 0 } else { !0u32 << b1 };
    let sign_pos = b1.wrapping_sub(1) & 0x1f;
    let sign = !(b1 == 0 || too_large || !signed) && (a >> sign_pos) & 1 == 1;
    (a & !mask) | if sign { mask } else { 0 }
}

#[test]
fn bmsk_clamp_and_wrap() {
    // Positions and widths from the input's bytes, reduced to 0..47 so both sides of 32
    // (and exactly 32) occur often.
    let body = r#"
    and.b32 %r5, %r2, 0xff;
    rem.u32 %r5, %r5, 48;
    shr.u32 %r6, %r2, 8;
    and.b32 %r6, %r6, 0xff;
    rem.u32 %r6, %r6, 48;
    bmsk.clamp.b32 %r7, %r5, %r6;
    st.global.u32 [%rd3], %r7;
    bmsk.wrap.b32 %r7, %r5, %r6;
    st.global.u32 [%rd3+4], %r7;
    bmsk.wrap.b32 %r7, 1, 2;
    st.global.u32 [%rd3+8], %r7;
    bmsk.clamp.b32 %r7, %r2, %r3;
    st.global.u32 [%rd3+12], %r7;
"#;
    run_against(
        "bmsk",
        body,
        &[
            |a, _, _| bmsk(true, (a & 0xff) % 48, ((a >> 8) & 0xff) % 48),
            |a, _, _| bmsk(false, (a & 0xff) % 48, ((a >> 8) & 0xff) % 48),
            |_, _, _| 6,
            |a, b, _| bmsk(true, a, b),
        ],
    );
}

#[test]
fn szext_signed_and_unsigned_clamp_and_wrap() {
    let body = r#"
    and.b32 %r5, %r3, 0xff;
    rem.u32 %r5, %r5, 48;
    szext.clamp.s32 %r7, %r2, %r5;
    st.global.u32 [%rd3], %r7;
    szext.wrap.s32 %r7, %r2, %r5;
    st.global.u32 [%rd3+4], %r7;
    szext.clamp.u32 %r7, %r2, %r5;
    st.global.u32 [%rd3+8], %r7;
    szext.wrap.u32 %r7, %r2, %r5;
    st.global.u32 [%rd3+12], %r7;
    szext.wrap.u32 %r7, 0xffffffff, 0;
    st.global.u32 [%rd3+16], %r7;
"#;
    run_against(
        "szext",
        body,
        &[
            |a, b, _| szext(true, true, a, (b & 0xff) % 48),
            |a, b, _| szext(false, true, a, (b & 0xff) % 48),
            |a, b, _| szext(true, false, a, (b & 0xff) % 48),
            |a, b, _| szext(false, false, a, (b & 0xff) % 48),
            |_, _, _| 0,
        ],
    );
}

#[test]
fn nanosleep_is_a_hint_that_costs_nothing() {
    let body = r#"
    nanosleep.u32 %r2;
    nanosleep.u32 100;
    st.global.u32 [%rd3], %r2;
"#;
    let sass = run_against("nanosleep", body, &[|a, _, _| a]);
    // The same code as without it.
    let plain = compile_checked(
        "nanosleep_plain",
        &kernel("", &format!("{ABC}    st.global.u32 [%rd3], %r2;\n")),
    );
    assert_eq!(texts(&sass), texts(&plain.sass));
}

#[test]
fn cp_async_copies_are_complete_after_wait_group() {
    // Each thread copies 16, 8 and 4 bytes of the input into shared memory in two groups,
    // waits, and after a CTA barrier reads a neighbour's copies. Two copies carry a cache
    // policy (`.L2::cache_hint`, from `createpolicy`) and one an L2 prefetch size: accepted,
    // and nothing on sm_5x.
    let decls = ".shared .align 16 .b32 sm[64 * 8];";
    let body = r#"
    and.b32 %r5, %r9, 63;
    mov.u32 %r6, sm;
    mad.lo.u32 %r7, %r5, 32, %r6;
    shr.u32 %r12, %r1, 2;
    shl.b32 %r12, %r12, 4;
    cvt.u64.u32 %rd7, %r12;
    add.s64 %rd7, %rd1, %rd7;
    createpolicy.fractional.L2::evict_first.b64 %rd9, 1.0;
    cp.async.cg.shared.global.L2::cache_hint [%r7], [%rd7], 16, %rd9;
    cp.async.commit_group;
    cp.async.ca.shared.global.L2::cache_hint.L2::128B [%r7+16], [%rd7+8], 8, 8, %rd9;
    cp.async.ca.shared.global [%r7+24], [%rd5], 4;
    cp.async.commit_group;
    setp.eq.u32 %p5, %r9, 1000;
    @%p5 cp.async.ca.shared.global [%r7+28], [%rd5], 4;
    cp.async.wait_group 1;
    cp.async.wait_all;
    bar.sync 0;
    add.s32 %r8, %r5, 1;
    and.b32 %r8, %r8, 63;
    mad.lo.u32 %r8, %r8, 32, %r6;
    ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r8];
    ld.shared.v2.u32 {%r24, %r25}, [%r8+16];
    ld.shared.u32 %r26, [%r8+24];
    st.global.v4.u32 [%rd3], {%r20, %r21, %r22, %r23};
    st.global.v2.u32 [%rd3+16], {%r24, %r25};
    st.global.u32 [%rd3+24], %r26;
    ld.shared.u32 %r27, [%r8+28];
    st.global.u32 [%rd3+28], %r27;
"#;
    let (out, last) = run("cp_async", decls, body);
    assert!(
        has(&out.sass, |t| t.starts_with("LDG.E.128")),
        "{}",
        out.sass
    );
    assert!(has(&out.sass, |t| t.starts_with("STS.128")), "{}", out.sass);
    // Thread g reads what thread n = g + 1 (same CTA, wrapping at 64) copied: the 16 bytes
    // at in[4 (n' / 4)] (n' its global index), 8 bytes from 8 bytes further, its own word.
    for g in 0..(THREADS * CTAS) as usize {
        let cta = g / THREADS as usize;
        let n = cta * THREADS as usize + (g % THREADS as usize + 1) % THREADS as usize;
        let base = 4 * (n / 4);
        let want = [
            input(3, base),
            input(3, base + 1),
            input(3, base + 2),
            input(3, base + 3),
            input(3, base + 2),
            input(3, base + 3),
            input(3, n),
            // A predicated-off copy writes nothing (shared memory starts zeroed).
            0,
        ];
        for (w, v) in want.iter().enumerate() {
            assert_eq!(word(&last, g, w), *v, "thread {g} word {w}");
        }
    }
}

#[test]
fn cp_async_zero_fill_by_src_size_and_ignore_src() {
    // Each thread fills its 32 bytes of shared memory with ones, then copies 16 bytes of
    // which `s` (0..=16, a register) come from the input, 8 of which 5 do (an immediate),
    // and 4 that `ignore-src` (a predicate) may replace with zeros; word 7 is left alone.
    let decls = ".shared .align 16 .b32 sm[64 * 8];";
    let body = r#"
    and.b32 %r5, %r9, 63;
    mov.u32 %r6, sm;
    mad.lo.u32 %r7, %r5, 32, %r6;
    mov.u32 %r10, -1;
    st.shared.v4.u32 [%r7], {%r10, %r10, %r10, %r10};
    st.shared.v4.u32 [%r7+16], {%r10, %r10, %r10, %r10};
    shr.u32 %r12, %r1, 2;
    shl.b32 %r12, %r12, 4;
    cvt.u64.u32 %rd7, %r12;
    add.s64 %rd7, %rd1, %rd7;
    and.b32 %r11, %r2, 15;
    and.b32 %r13, %r2, 16;
    or.b32 %r11, %r11, %r13;
    min.u32 %r11, %r11, 16;
    cp.async.ca.shared.global [%r7], [%rd7], 16, %r11;
    cp.async.ca.shared.global [%r7+16], [%rd7], 8, 5;
    and.b32 %r14, %r2, 32;
    setp.ne.u32 %p6, %r14, 0;
    cp.async.ca.shared.global [%r7+24], [%rd7+4], 4, %p6;
    cp.async.commit_group;
    cp.async.wait_all;
    ld.shared.v4.u32 {%r20, %r21, %r22, %r23}, [%r7];
    ld.shared.v4.u32 {%r24, %r25, %r26, %r27}, [%r7+16];
    st.global.v4.u32 [%rd3], {%r20, %r21, %r22, %r23};
    st.global.v4.u32 [%rd3+16], {%r24, %r25, %r26, %r27};
"#;
    let (_, last) = run("cp_async_zfill", decls, body);
    for g in 0..(THREADS * CTAS) as usize {
        let a = input(3, g);
        let base = 4 * (g / 4);
        let src = |k: usize| (input(3, base + k / 4) >> (8 * (k % 4))) & 0xff;
        // The word made of bytes `from..from + 4` of a copy that takes `n` source bytes
        // starting at source byte `skip`.
        let copied = |from: usize, n: usize, skip: usize| {
            (0..4).fold(0u32, |w, i| {
                let k = from + i;
                w | if k < n { src(skip + k) << (8 * i) } else { 0 }
            })
        };
        let s = ((a & 15) | (a & 16)).min(16) as usize;
        let ignore = a & 32 != 0;
        let want = [
            copied(0, s, 0),
            copied(4, s, 0),
            copied(8, s, 0),
            copied(12, s, 0),
            copied(0, 5, 0),
            copied(4, 5, 0),
            if ignore { 0 } else { copied(0, 4, 4) },
            u32::MAX,
        ];
        for (w, v) in want.iter().enumerate() {
            assert_eq!(
                word(&last, g, w),
                *v,
                "thread {g} word {w}: s={s} ignore={ignore}"
            );
        }
    }
}

#[test]
fn unemulated_forms_are_located_errors() {
    for (src, what) in [
        (
            "cp.async.ca.shared.global [%r7], [%rd5], 4, 8;",
            "src-size must be at most cp-size",
        ),
        ("cp.async.ca.shared.global [%r7], [%rd5], 12;", "cp-size"),
        ("dp2a.s32.s32 %r5, %r2, %r3, %r4;", ".lo or .hi"),
    ] {
        let body =
            format!("    mov.u32 %r7, 0;\n    mov.u32 %r3, 0;\n    mov.u32 %r4, 0;\n    {src}\n");
        let ptx = kernel("", &body);
        let opts = leafold::driver::Options {
            file_name: "bad.ptx".into(),
            ..Default::default()
        };
        let Err(d) = leafold::driver::compile(&ptx, &opts) else {
            panic!("{src} compiled");
        };
        let text = leafold::error::render_all(&d.0);
        assert!(
            text.contains(what) && text.contains("bad.ptx:"),
            "{src}: {text}"
        );
    }
}

#[test]
fn mbarrier_as_a_cta_barrier() {
    // Phase 0: every thread stores its word, arrives, spins on test_wait, reads its
    // neighbour's word (ordered only by the mbarrier). Phase 1: one arrival of count 64 by
    // thread 0, everyone waits on parity 1 and reads the pending count of a state.
    let decls = ".shared .align 8 .b64 mb;\n.shared .align 4 .b32 sm[64];";
    let body = r#"
    .reg .b64 %st<4>;
    mov.u32 %r5, mb;
    mov.u32 %r6, sm;
    setp.eq.u32 %p1, %r9, 0;
    @%p1 mbarrier.init.shared.b64 [%r5], %r11;
    bar.sync 0;
    shl.b32 %r7, %r9, 2;
    add.s32 %r7, %r6, %r7;
    st.shared.u32 [%r7], %r2;
    mbarrier.arrive.shared.b64 %st1, [%r5];
WAIT0:
    mbarrier.test_wait.shared.b64 %p2, [%r5], %st1;
    @!%p2 bra WAIT0;
    add.s32 %r8, %r9, 1;
    rem.u32 %r8, %r8, %r11;
    shl.b32 %r8, %r8, 2;
    add.s32 %r8, %r6, %r8;
    ld.shared.u32 %r12, [%r8];
    st.global.u32 [%rd3], %r12;
    @%p1 mbarrier.arrive.shared.b64 %st2, [%r5], %r11;
    @%p1 mbarrier.pending_count.b64 %r13, %st2;
    @!%p1 mov.u32 %r13, 7;
WAIT1:
    mbarrier.try_wait.parity.shared.b64 %p3, [%r5], 1;
    @!%p3 bra WAIT1;
    st.global.u32 [%rd3+4], %r13;
    mbarrier.test_wait.parity.shared.b64 %p4, [%r5], 0;
    selp.u32 %r14, 1, 0, %p4;
    st.global.u32 [%rd3+8], %r14;
    bar.sync 0;
    @%p1 mbarrier.inval.shared.b64 [%r5];
"#;
    let (out, last) = run("mbarrier", decls, body);
    assert!(
        has(&out.sass, |t| t.starts_with("ATOMS.ADD")),
        "{}",
        out.sass
    );
    // The waits spin on the phase; no thread takes a hardware barrier for them.
    assert!(
        !has(&out.sass, |t| t.starts_with("BAR.SYNC 0xf")),
        "{}",
        out.sass
    );
    for g in 0..(THREADS * CTAS) as usize {
        let cta = g / THREADS as usize;
        let n = cta * THREADS as usize + (g % THREADS as usize + 1) % THREADS as usize;
        assert_eq!(
            word(&last, g, 0),
            input(3, n),
            "thread {g}: neighbour's word"
        );
        // Thread 0's count-64 arrival completed phase 1: pending 0 in its state.
        let want = if g % THREADS as usize == 0 { 0 } else { 7 };
        assert_eq!(word(&last, g, 1), want, "thread {g}");
        // Phase 2 (parity 0) has not completed.
        assert_eq!(word(&last, g, 2), 0, "thread {g}");
    }
}

#[test]
fn mbarrier_producer_warp_and_waiting_consumer_warp() {
    // Only warp 0 waits, on data warp 1 (a later warp) produces: the consumers spin on
    // try_wait.parity while the producers store and arrive (count 32), one of them
    // announcing 16 transaction bytes (expect_tx with its arrival) and another completing
    // them (complete_tx). A wait that every thread had to take would deadlock here; with
    // the tx-count ignored the phase would complete with the bytes still pending.
    let decls = ".shared .align 8 .b64 mb;\n.shared .align 4 .b32 sm[64];";
    let body = r#"
    mov.u32 %r5, mb;
    mov.u32 %r6, sm;
    setp.eq.u32 %p1, %r9, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r5], 32;
    bar.sync 0;
    shl.b32 %r7, %r9, 2;
    add.s32 %r7, %r6, %r7;
    setp.lt.u32 %p2, %r9, 32;
    @%p2 bra CONSUMER;
    add.s32 %r12, %r2, 1;
    st.shared.u32 [%r7], %r12;
    st.global.u32 [%rd3], %r9;
    setp.eq.u32 %p3, %r9, 33;
    @%p3 bra EXPECT;
    setp.eq.u32 %p4, %r9, 40;
    @%p4 mbarrier.complete_tx.shared::cta.b64 [%r5], 16;
    mbarrier.arrive.release.cta.shared::cta.b64 _, [%r5];
    bra DONE;
EXPECT:
    mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%r5], 16;
    bra DONE;
CONSUMER:
    mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r5], 0;
    @!%p5 bra CONSUMER;
    ld.shared.u32 %r12, [%r7+128];
    st.global.u32 [%rd3], %r12;
DONE:
"#;
    let (out, last) = run("mbarrier_pc", decls, body);
    assert!(has(&out.sass, |t| t == "NOP"), "{}", out.sass);
    for g in 0..(THREADS * CTAS) as usize {
        let t = g % THREADS as usize;
        let want = if t < 32 {
            input(3, g + 32).wrapping_add(1)
        } else {
            t as u32
        };
        assert_eq!(word(&last, g, 0), want, "thread {g}");
    }
}

#[test]
fn mbarrier_arrive_drop_lowers_later_phases() {
    // 64 expected arrivals; in phase 0 warp 0 arrives with arrive_drop and leaves, so phase
    // 1 completes with warp 1 alone (it would never complete without the drop: the launch
    // would stop at the step limit). In phase 1 each of them passes a word to its neighbour
    // through shared memory, ordered by the mbarrier alone. (The groups are whole warps:
    // on sm_5x a warp's lanes spinning while other lanes of the same warp have yet to
    // arrive never let those run, a deadlock the simulator reports at its step limit.)
    let decls = ".shared .align 8 .b64 mb;\n.shared .align 4 .b32 sm[64];";
    let body = r#"
    .reg .b64 %st<4>;
    mov.u32 %r5, mb;
    mov.u32 %r6, sm;
    setp.eq.u32 %p1, %r9, 0;
    @%p1 mbarrier.init.shared.b64 [%r5], %r11;
    bar.sync 0;
    setp.lt.u32 %p2, %r9, 32;
    @%p2 bra DROP;
    mbarrier.arrive.shared.b64 %st1, [%r5];
W0:
    mbarrier.test_wait.shared.b64 %p3, [%r5], %st1;
    @!%p3 bra W0;
    shl.b32 %r7, %r9, 2;
    add.s32 %r7, %r6, %r7;
    st.shared.u32 [%r7], %r2;
    mbarrier.arrive.shared.b64 %st2, [%r5];
W1:
    mbarrier.try_wait.shared.b64 %p3, [%r5], %st2;
    @!%p3 bra W1;
    add.s32 %r8, %r9, 1;
    setp.eq.u32 %p4, %r8, %r11;
    @%p4 mov.u32 %r8, 32;
    shl.b32 %r8, %r8, 2;
    add.s32 %r8, %r6, %r8;
    ld.shared.u32 %r12, [%r8];
    st.global.u32 [%rd3], %r12;
    bra DONE;
DROP:
    mbarrier.arrive_drop.shared.b64 %st3, [%r5];
W2:
    mbarrier.test_wait.shared.b64 %p3, [%r5], %st3;
    @!%p3 bra W2;
    st.global.u32 [%rd3], %r9;
DONE:
"#;
    let (_, last) = run("mbarrier_drop", decls, body);
    for g in 0..(THREADS * CTAS) as usize {
        let t = g % THREADS as usize;
        let want = if t < 32 {
            t as u32
        } else {
            let n = if t + 1 == THREADS as usize { 32 } else { t + 1 };
            input(3, g - t + n)
        };
        assert_eq!(word(&last, g, 0), want, "thread {g}");
    }
}

#[test]
fn mbarrier_phase_that_never_completes_is_no_progress_not_a_hang() {
    // Expected count 2 · ntid but one arrival per thread: phase 0 never completes, and every
    // thread spins on it. `ir::eval` must say so (no progress), not run to its step limit.
    let src = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry stuck(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .b64 %st<2>;
    .shared .align 8 .b64 mb;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    shl.b32 %r3, %r2, 1;
    mov.u32 %r5, mb;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [%r5], %r3;
    bar.sync 0;
    mbarrier.arrive.shared.b64 %st1, [%r5];
WAIT:
    mbarrier.test_wait.shared.b64 %p2, [%r5], %st1;
    @!%p2 bra WAIT;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;
    let module = common::ir_module("stuck.ptx", src);
    let mut launch = leafold::ir::eval::Launch::new([1, 1, 1], [64, 1, 1]);
    launch.params = 0x2000_0000u64.to_le_bytes().to_vec();
    launch.global = vec![leafold::ir::eval::GlobalRegion {
        base: 0x2000_0000,
        bytes: vec![0; 256],
    }];
    match leafold::ir::eval::run(&module, "stuck", &launch) {
        Err(e @ leafold::ir::eval::EvalError::NoProgress { waiting: 64, .. }) => {
            assert!(e.to_string().contains("no progress"), "{e}");
        }
        other => panic!("want NoProgress with 64 waiting threads, got {other:?}"),
    }
}

// ---- ldmatrix and mma.sync (src/ir/build/mma.rs) -------------------------------------
//
// The references below are written from the PTX ISA's fragment figures (the row and column
// of each element of each lane's registers), independently of the tables in `mma.rs`.

/// `n` words of a hash chain from `x` (the kernels compute the same with `mad.lo`).
fn chain(x: u32, n: usize) -> Vec<u32> {
    let mut y = x;
    (0..n)
        .map(|_| {
            y = y.wrapping_mul(0x9e37_79b1).wrapping_add(0x123_4567);
            y
        })
        .collect()
}

/// PTX lines computing [`chain`] of `%r2` into `%r12..`, each word and-ed with `masks[i]`.
fn chain_ptx(masks: &[u32]) -> String {
    let mut s = String::new();
    for i in 0..masks.len() {
        let from = if i == 0 { 2 } else { 11 + i };
        s += &format!(
            "    mad.lo.u32 %r{}, %r{from}, 0x9e3779b1, 0x1234567;\n",
            12 + i
        );
    }
    for (i, m) in masks.iter().enumerate() {
        s += &format!("    and.b32 %r{}, %r{}, {m:#x};\n", 24 + i, 12 + i);
    }
    s
}

/// The ldmatrix kernels: every thread stores `in[g]` and its first chain word into `sm`
/// (512 bytes per CTA), then each lane `l` of a warp gives row address
/// `sm + 16·((5l) mod 32)` (a permutation of the 32 rows) to `.x4`, `.x2` and `.x1` loads.
fn ldmatrix_case(test: &str, trans: bool) {
    let t = if trans { ".trans" } else { "" };
    let decls = ".shared .align 16 .b32 sm[128];";
    let body = format!(
        r#"
    mov.u32 %r5, sm;
    shl.b32 %r6, %r9, 3;
    add.s32 %r6, %r5, %r6;
    mad.lo.u32 %r7, %r2, 0x9e3779b1, 0x1234567;
    st.shared.v2.u32 [%r6], {{%r2, %r7}};
    bar.sync 0;
    mov.u32 %r8, %laneid;
    mul.lo.u32 %r8, %r8, 5;
    and.b32 %r8, %r8, 31;
    shl.b32 %r8, %r8, 4;
    add.s32 %r8, %r5, %r8;
    ldmatrix.sync.aligned.m8n8.x4{t}.shared.b16 {{%r12, %r13, %r14, %r15}}, [%r8];
    ldmatrix.sync.aligned.m8n8.x2{t}.shared::cta.b16 {{%r16, %r17}}, [%r8];
    ldmatrix.sync.aligned.m8n8.x1{t}.shared.b16 {{%r18}}, [%r8];
    st.global.v4.u32 [%rd3], {{%r12, %r13, %r14, %r15}};
    st.global.v2.u32 [%rd3+16], {{%r16, %r17}};
    st.global.u32 [%rd3+24], %r18;
"#
    );
    let (out, last) = run(test, decls, &body);
    assert!(
        has(&out.sass, |t| t.starts_with("SHFL.IDX")),
        "{}",
        out.sass
    );
    for cta in 0..CTAS as usize {
        let base = cta * THREADS as usize;
        let mut sm = Vec::new();
        for tid in 0..THREADS as usize {
            let x = input(3, base + tid);
            sm.extend(x.to_le_bytes());
            sm.extend(chain(x, 1)[0].to_le_bytes());
        }
        let row = |lane: usize| 16 * ((5 * lane) % 32);
        let u16_at = |a: usize| u32::from(u16::from_le_bytes([sm[a], sm[a + 1]]));
        for tid in 0..THREADS as usize {
            let l = tid % 32;
            let g = base + tid;
            let frag = |i: usize| {
                if trans {
                    let lo = u16_at(row(8 * i + 2 * (l % 4)) + 2 * (l / 4));
                    let hi = u16_at(row(8 * i + 2 * (l % 4) + 1) + 2 * (l / 4));
                    lo | hi << 16
                } else {
                    let a = row(8 * i + l / 4) + 4 * (l % 4);
                    u32::from_le_bytes(sm[a..a + 4].try_into().unwrap())
                }
            };
            let want = [
                frag(0),
                frag(1),
                frag(2),
                frag(3),
                frag(0),
                frag(1),
                frag(0),
            ];
            for (w, &x) in want.iter().enumerate() {
                assert_eq!(word(&last, g, w), x, "{test}: thread {g}, word {w}");
            }
        }
    }
}

#[test]
fn ldmatrix_x1_x2_x4() {
    ldmatrix_case("ldmatrix", false);
}

#[test]
fn ldmatrix_trans_x1_x2_x4() {
    ldmatrix_case("ldmatrix_trans", true);
}

/// An f16 as f32 (exact).
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f32::from(h & 0x3ff);
    assert!(e != 31, "the tests use finite halves");
    if e == 0 {
        sign * m * 2f32.powi(-24)
    } else {
        sign * (1024.0 + m) * 2f32.powi(e - 25)
    }
}

/// An f32 rounded to the nearest f16 (ties to even), for finite values in f16's range.
fn f32_to_f16(x: f32) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = f64::from(x.abs());
    // The spacing of f16 values around `a`: 2^-24 below 2^-14, else 2^(e - 10).
    let e = if a < 2f64.powi(-14) {
        -14
    } else {
        a.log2().floor() as i32
    };
    let q = 2f64.powi(e - 10);
    let n = a / q;
    let r = n.round();
    let r = if (n - n.floor() - 0.5).abs() < f64::EPSILON && r % 2.0 != 0.0 {
        r - 1.0
    } else {
        r
    };
    let v = r * q;
    let bits = if v < 2f64.powi(-14) {
        (v / 2f64.powi(-24)) as u16
    } else {
        let e2 = v.log2().floor() as i32;
        let m = (v / 2f64.powi(e2 - 10)) as u32 - 1024;
        (((e2 + 15) as u32) << 10 | m) as u16
    };
    sign | bits
}

/// One `mma` test: `shape` (`m16n8k8`, ...), the type suffix, `K`, rows `M` (8 or 16),
/// integer or f16 inputs, signedness of A and B (integer), f16 `D`/`C` (f16 inputs).
#[allow(clippy::too_many_arguments)]
fn mma_case(
    test: &str,
    shape: &str,
    types: &str,
    k: usize,
    m: usize,
    int: bool,
    sa: bool,
    sb: bool,
    d16: bool,
    c16: bool,
) {
    let per = if int { 4 } else { 2 };
    let (na, nb) = (m * k / 32 / per, k * 8 / 32 / per);
    let ncr = |f16: bool| if f16 { m / 8 } else { m / 4 };
    let (nd, nc) = (ncr(d16), ncr(c16));
    let hmask = if int { u32::MAX } else { 0xbfff_bfff };
    let cmask = if int {
        u32::MAX
    } else if c16 {
        0xbfff_bfff
    } else {
        0xbfff_ffff
    };
    let masks: Vec<u32> = (0..na + nb)
        .map(|_| hmask)
        .chain((0..nc).map(|_| cmask))
        .collect();
    let regs = |from: usize, n: usize| {
        (from..from + n)
            .map(|r| format!("%r{}", 24 + r))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let dregs = (0..nd).map(|r| format!("%r{}", 4 + r)).collect::<Vec<_>>();
    let body = format!(
        "{}    mma.sync.aligned.{shape}.row.col.{types} {{{}}}, {{{}}}, {{{}}}, {{{}}};\n{}",
        chain_ptx(&masks),
        dregs.join(", "),
        regs(0, na),
        regs(na, nb),
        regs(na + nb, nc),
        dregs
            .iter()
            .enumerate()
            .map(|(i, r)| format!("    st.global.u32 [%rd3+{}], {r};\n", 4 * i))
            .collect::<String>()
    );
    let (out, last) = run(test, "", &body);
    assert!(
        has(&out.sass, |t| t.starts_with("SHFL.IDX")),
        "{}",
        out.sass
    );
    // Per warp: the matrices from every lane's registers, then D.
    for w0 in (0..(THREADS * CTAS) as usize).step_by(32) {
        let lanes: Vec<Vec<u32>> = (0..32)
            .map(|l| {
                let x = input(3, w0 + l);
                chain(x, masks.len())
                    .iter()
                    .zip(&masks)
                    .map(|(v, mk)| v & mk)
                    .collect()
            })
            .collect();
        let mut a = vec![vec![0u32; k]; m];
        let mut b = vec![vec![0u32; 8]; k];
        let mut c = vec![vec![0u32; 8]; m];
        for (l, r) in lanes.iter().enumerate() {
            let (g, t) = (l / 4, l % 4);
            for (j, &rj) in r.iter().enumerate().take(na) {
                for e in 0..per {
                    let x = (rj >> (32 / per * e)) & if int { 0xff } else { 0xffff };
                    let (row, col) = if int {
                        (g + 8 * (j & 1), 4 * t + e + 16 * (j / 2))
                    } else {
                        (g + 8 * (j & 1), 2 * t + e + 8 * (j / 2))
                    };
                    a[row][col] = x;
                }
            }
            for j in 0..nb {
                for e in 0..per {
                    let x = (r[na + j] >> (32 / per * e)) & if int { 0xff } else { 0xffff };
                    let row = if int {
                        4 * t + e + 16 * j
                    } else {
                        2 * t + e + 8 * j
                    };
                    b[row][g] = x;
                }
            }
            for j in 0..nc {
                let x = r[na + nb + j];
                if c16 {
                    c[g + 8 * j][2 * t] = x & 0xffff;
                    c[g + 8 * j][2 * t + 1] = x >> 16;
                } else {
                    c[g + 8 * (j / 2)][2 * t + (j & 1)] = x;
                }
            }
        }
        let ext = |x: u32, s: bool| {
            if s {
                i32::from(x as u8 as i8)
            } else {
                x as i32
            }
        };
        let d = |row: usize, col: usize| -> u32 {
            if int {
                let mut acc = c[row][col] as i32;
                for kk in 0..k {
                    acc = acc.wrapping_add(ext(a[row][kk], sa) * ext(b[kk][col], sb));
                }
                acc as u32
            } else {
                let mut acc = if c16 {
                    f16_to_f32(c[row][col] as u16)
                } else {
                    f32::from_bits(c[row][col])
                };
                for kk in 0..k {
                    let x = f16_to_f32(a[row][kk] as u16);
                    let y = f16_to_f32(b[kk][col] as u16);
                    acc = x.mul_add(y, acc);
                }
                if d16 {
                    u32::from(f32_to_f16(acc))
                } else {
                    acc.to_bits()
                }
            }
        };
        for l in 0..32 {
            let (g, t) = (l / 4, l % 4);
            for j in 0..nd {
                let want = if d16 {
                    d(g + 8 * j, 2 * t) | d(g + 8 * j, 2 * t + 1) << 16
                } else {
                    d(g + 8 * (j / 2), 2 * t + (j & 1))
                };
                assert_eq!(
                    word(&last, w0 + l, j),
                    want,
                    "{test}: thread {}, D register {j}",
                    w0 + l
                );
            }
        }
    }
}

#[test]
fn mma_f16_m16n8k16_f32_and_f16_accumulators() {
    mma_case(
        "mma_f16_k16_f32",
        "m16n8k16",
        "f32.f16.f16.f32",
        16,
        16,
        false,
        false,
        false,
        false,
        false,
    );
    mma_case(
        "mma_f16_k16_f16",
        "m16n8k16",
        "f16.f16.f16.f16",
        16,
        16,
        false,
        false,
        false,
        true,
        true,
    );
}

#[test]
fn mma_f16_m16n8k8_mixed_accumulators() {
    mma_case(
        "mma_f16_k8_f32",
        "m16n8k8",
        "f32.f16.f16.f16",
        8,
        16,
        false,
        false,
        false,
        false,
        true,
    );
    mma_case(
        "mma_f16_k8_f16",
        "m16n8k8",
        "f16.f16.f16.f32",
        8,
        16,
        false,
        false,
        false,
        true,
        false,
    );
}

#[test]
fn mma_s8_u8_integer_shapes() {
    mma_case(
        "mma_m8n8k16_s8",
        "m8n8k16",
        "s32.s8.s8.s32",
        16,
        8,
        true,
        true,
        true,
        false,
        false,
    );
    mma_case(
        "mma_m16n8k16_u8s8",
        "m16n8k16",
        "s32.u8.s8.s32",
        16,
        16,
        true,
        false,
        true,
        false,
        false,
    );
    mma_case(
        "mma_m16n8k32_s8u8",
        "m16n8k32",
        "s32.s8.u8.s32",
        32,
        16,
        true,
        true,
        false,
        false,
        false,
    );
}

/// A 16×16×16 `wmma` tile (f16 A and B, f32 C and D) on shared tiles filled by the CTA:
/// thread `tid` writes words `2tid, 2tid + 1` of A and of B (halves in `[-2, 2]`) and words
/// `4tid..4tid + 4` of C (f32 in `(-2, 2)`); each warp loads them with layouts `la`, `lb`,
/// `lc`, multiplies, and stores D row-major over its 32 threads' output words. The reference
/// reads the same memory, so it is independent of the fragment layout (which PTX leaves
/// unspecified).
fn wmma_case(test: &str, la: &str, lb: &str, lc: &str) {
    let decls = ".shared .align 32 .b32 sa[128];\n.shared .align 32 .b32 sb[128];\n.shared .align 32 .b32 sc[256];";
    let masks = [
        0xbfff_bfff,
        0xbfff_bfff,
        0xbfff_bfff,
        0xbfff_bfff,
        0xbfff_ffff,
        0xbfff_ffff,
        0xbfff_ffff,
        0xbfff_ffff,
    ];
    let body = format!(
        r#"{}
    shl.b32 %r5, %r9, 3;
    mov.u32 %r6, sa;
    add.s32 %r6, %r6, %r5;
    st.shared.v2.u32 [%r6], {{%r24, %r25}};
    mov.u32 %r6, sb;
    add.s32 %r6, %r6, %r5;
    st.shared.v2.u32 [%r6], {{%r26, %r27}};
    shl.b32 %r5, %r9, 4;
    mov.u32 %r6, sc;
    add.s32 %r6, %r6, %r5;
    st.shared.v4.u32 [%r6], {{%r28, %r29, %r30, %r31}};
    bar.sync 0;
    mov.u32 %r5, sa;
    mov.u32 %r6, sb;
    mov.u32 %r7, sc;
    wmma.load.a.sync.aligned.{la}.m16n16k16.shared.f16 {{%r12, %r13, %r14, %r15, %r16, %r17, %r18, %r19}}, [%r5], 16;
    wmma.load.b.sync.aligned.{lb}.m16n16k16.shared.f16 {{%r20, %r21, %r22, %r23, %r32, %r33, %r34, %r35}}, [%r6];
    mov.u32 %r8, 16;
    wmma.load.c.sync.aligned.{lc}.m16n16k16.shared.f32 {{%r24, %r25, %r26, %r27, %r28, %r29, %r30, %r31}}, [%r7], %r8;
    wmma.mma.sync.aligned.{la}.{lb}.m16n16k16.f32.f32 {{%r24, %r25, %r26, %r27, %r28, %r29, %r30, %r31}}, {{%r12, %r13, %r14, %r15, %r16, %r17, %r18, %r19}}, {{%r20, %r21, %r22, %r23, %r32, %r33, %r34, %r35}}, {{%r24, %r25, %r26, %r27, %r28, %r29, %r30, %r31}};
    mov.u32 %r5, %laneid;
    mul.wide.u32 %rd7, %r5, 32;
    sub.s64 %rd8, %rd3, %rd7;
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd8], {{%r24, %r25, %r26, %r27, %r28, %r29, %r30, %r31}}, %r8;
"#,
        chain_ptx(&masks)
    );
    let (_, last) = run(test, decls, &body);
    for cta in 0..CTAS as usize {
        let base = cta * THREADS as usize;
        let (mut sa, mut sb, mut sc) = (Vec::new(), Vec::new(), Vec::new());
        for tid in 0..THREADS as usize {
            let w: Vec<u32> = chain(input(3, base + tid), 8)
                .iter()
                .zip(&masks)
                .map(|(v, m)| v & m)
                .collect();
            for x in &w[0..2] {
                sa.push((x & 0xffff) as u16);
                sa.push((x >> 16) as u16);
            }
            for x in &w[2..4] {
                sb.push((x & 0xffff) as u16);
                sb.push((x >> 16) as u16);
            }
            sc.extend(&w[4..8]);
        }
        let at = |layout: &str, i: usize, j: usize| {
            if layout == "row" {
                16 * i + j
            } else {
                16 * j + i
            }
        };
        for warp in 0..(THREADS / 32) as usize {
            let g0 = base + 32 * warp;
            for r in 0..16 {
                for c in 0..16 {
                    let mut acc = f32::from_bits(sc[at(lc, r, c)]);
                    for k in 0..16 {
                        let x = f16_to_f32(sa[at(la, r, k)]);
                        let y = f16_to_f32(sb[at(lb, k, c)]);
                        acc = x.mul_add(y, acc);
                    }
                    let n = 16 * r + c;
                    assert_eq!(
                        word(&last, g0 + n / 8, n % 8),
                        acc.to_bits(),
                        "{test}: CTA {cta} warp {warp}: D[{r}][{c}]"
                    );
                }
            }
        }
    }
}

#[test]
fn wmma_m16n16k16_f16_f32_row_col() {
    wmma_case("wmma_row_col", "row", "col", "row");
}

#[test]
fn wmma_m16n16k16_f16_f32_col_row_strided() {
    wmma_case("wmma_col_row", "col", "row", "col");
}

#[test]
fn divergent_mma_and_ldmatrix_are_undefined_in_eval() {
    // `.aligned`: every lane of the warp must execute the same instruction. With lanes 0..16
    // branched around it the expansion's shuffles read lanes that take no part, and
    // `ir::eval` refuses the launch instead of inventing their registers.
    for ins in [
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r4, %r5, %r6, %r7}, {%r1, %r2}, {%r3}, {%r4, %r5, %r6, %r7};",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r4}, [%r8];",
    ] {
        let src = format!(
            r#"
.version 7.8
.target sm_80
.address_size 64
.visible .entry div(.param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<2>;
    .shared .align 16 .b8 sm[256];
    mov.u32 %r1, %laneid;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
    mov.u32 %r6, 0;
    mov.u32 %r7, 0;
    mov.u32 %r8, sm;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra SKIP;
    {ins}
SKIP:
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r4;
    ret;
}}
"#
        );
        let module = common::ir_module("div.ptx", src);
        let mut launch = leafold::ir::eval::Launch::new([1, 1, 1], [32, 1, 1]);
        launch.params = 0x2000_0000u64.to_le_bytes().to_vec();
        launch.global = vec![leafold::ir::eval::GlobalRegion {
            base: 0x2000_0000,
            bytes: vec![0; 256],
        }];
        match leafold::ir::eval::run(&module, "div", &launch) {
            Err(e @ leafold::ir::eval::EvalError::Undefined { .. }) => {
                assert!(e.to_string().contains("does not take part"), "{ins}: {e}");
            }
            other => panic!("{ins}: want Undefined (a shuffle from a lane not taking part), got {other:?}"),
        }
    }
}
