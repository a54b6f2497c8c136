//! `.bf16`/`.bf16x2` arithmetic and conversions, `.f16x2`/`.bf16x2` packing conversions, and
//! `tanh.approx`/`ex2.approx` on half formats, emulated on sm_5x (issue 26,
//! `src/ir/build/bf16.rs`). Each test compiles a `common::warp_kernel` kernel (hazard-free;
//! with the oracle, cuobjdump and nvdisasm print our listing), compares `ir::eval` with the
//! simulator over random launches, and then checks the words written against a reference
//! written here from the PTX ISA's definitions:
//!
//! * the arithmetic against an exact one: the operands' exact sum or product in integers
//!   (with a sticky bit below 80 guard bits when exponents are far apart), rounded once to
//!   bf16 (nearest even), so the f64 round-to-odd expansion is checked bit for bit, on random
//!   words (every exponent, subnormals, infinities and NaNs occur);
//! * the approximate functions against `f64` with the accuracy contract of the module essay.
//!
//! Inputs: `%r2 = a` (random), `%r3 = b`, `%r4 = c` derived from it as in [`ABC`].

mod common;

use common::warp_kernel::*;

const ABC: &str = r#"
    .reg .b16 %h<8>;
    .reg .f32 %f<8>;
    mad.lo.u32 %r3, %r2, 0x9e3779b1, 0x1234567;
    xor.b32 %r4, %r2, 0x5a5a5a5a;
    mov.b32 {%h0, %h1}, %r2;
    mov.b32 {%h2, %h3}, %r3;
    mov.b32 {%h4, %h5}, %r4;
"#;

fn abc(a: u32) -> (u32, u32, u32) {
    (
        a,
        a.wrapping_mul(0x9e37_79b1).wrapping_add(0x123_4567),
        a ^ 0x5a5a_5a5a,
    )
}

fn input(seed: u64, g: usize) -> u32 {
    let b = &launch(seed).global[0].bytes;
    u32::from_le_bytes(b[4 * g..4 * g + 4].try_into().unwrap())
}

/// Run `body` after [`ABC`]; check word `w` of every thread against `check(w, a, b, c, got)`.
fn run_checked(test: &str, body: &str, check: impl Fn(usize, u32, u32, u32, u32)) -> String {
    let (out, last) = run(test, "", &format!("{ABC}{body}"));
    for g in 0..(THREADS * CTAS) as usize {
        let (a, b, c) = abc(input(3, g));
        for w in 0..8 {
            check(w, a, b, c, word(&last, g, w));
        }
    }
    out.sass
}

#[derive(Copy, Clone, PartialEq, Debug)]
enum Mode {
    Rn,
    Rz,
    Rm,
    Rp,
}

/// `(-1)^neg · m · 2^e` rounded to bf16 by `mode`.
fn round_bf16(neg: bool, m: u128, e: i32, mode: Mode) -> u16 {
    let sign = if neg { 0x8000 } else { 0 };
    if m == 0 {
        return sign;
    }
    let msb = 127 - m.leading_zeros() as i32;
    let top = msb + e; // exponent of the leading bit
    let away = |rem_nonzero: bool| match mode {
        Mode::Rn | Mode::Rz => false,
        Mode::Rm => neg && rem_nonzero,
        Mode::Rp => !neg && rem_nonzero,
    };
    if top > 127 {
        let inf = match mode {
            Mode::Rn => true,
            Mode::Rz => false,
            Mode::Rm => neg,
            Mode::Rp => !neg,
        };
        return sign | if inf { 0x7f80 } else { 0x7f7f };
    }
    let lsb = if top < -126 { -133 } else { top - 7 };
    let shift = lsb - e;
    let q = if shift <= 0 {
        m << (-shift)
    } else if shift > 120 {
        // Far below the smallest subnormal: less than half of it (m < 2^120).
        let up = match mode {
            Mode::Rn => false,
            _ => away(true),
        };
        up as u128
    } else {
        let q = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = match mode {
            Mode::Rn => rem > half || (rem == half && q & 1 == 1),
            _ => away(rem != 0),
        };
        q + up as u128
    };
    let bits = (((lsb + 133) as u128) << 7) + q;
    sign | bits.min(0x7f80) as u16
}

/// A finite bf16 as `(neg, m, e)` with value `m · 2^e`.
fn decode_bf16(h: u16) -> (bool, u128, i32) {
    let neg = h & 0x8000 != 0;
    let ex = ((h >> 7) & 0xff) as i32;
    let fr = (h & 0x7f) as u128;
    if ex == 0 {
        (neg, fr, -133)
    } else {
        (neg, fr | 0x80, ex - 134)
    }
}

fn is_nan(h: u16) -> bool {
    h & 0x7fff > 0x7f80
}

fn is_inf(h: u16) -> bool {
    h & 0x7fff == 0x7f80
}

/// The PTX `fma.rn.bf16`: `a · b + c` rounded once; NaN results are `0x7fff`.
fn fma_bf16(a: u16, b: u16, c: u16, relu: bool) -> u16 {
    let r = fma_bf16_raw(a, b, c);
    if is_nan(r) {
        0x7fff
    } else if relu && r & 0x8000 != 0 {
        0
    } else {
        r
    }
}

fn fma_bf16_raw(a: u16, b: u16, c: u16) -> u16 {
    if is_nan(a) || is_nan(b) || is_nan(c) {
        return 0x7fff;
    }
    let pneg = (a ^ b) & 0x8000 != 0;
    let zero = |h: u16| h & 0x7fff == 0;
    if is_inf(a) || is_inf(b) {
        if zero(a) || zero(b) {
            return 0x7fff;
        }
        if is_inf(c) && (c & 0x8000 != 0) != pneg {
            return 0x7fff;
        }
        return if pneg { 0xff80 } else { 0x7f80 };
    }
    if is_inf(c) {
        return c;
    }
    let (_, ma, ea) = decode_bf16(a);
    let (_, mb, eb) = decode_bf16(b);
    let (cneg, mc, ec) = decode_bf16(c);
    let (mp, ep) = (ma * mb, ea + eb);
    if mp == 0 && mc == 0 {
        // IEEE: the sum of two zeros is -0 only when both are -0 (round to nearest).
        return if pneg && cneg { 0x8000 } else { 0 };
    }
    if mp == 0 {
        return c;
    }
    if mc == 0 {
        return round_bf16(pneg, mp, ep, Mode::Rn);
    }
    // Align on the smaller exponent, keeping at most 80 bits between them (the rest is a
    // sticky unit, far below the rounding position).
    let top = |m: u128, e: i32| e + 128 - m.leading_zeros() as i32;
    let ((bn, bm, be), (sn, sm, se)) = if top(mp, ep) >= top(mc, ec) {
        ((pneg, mp, ep), (cneg, mc, ec))
    } else {
        ((cneg, mc, ec), (pneg, mp, ep))
    };
    let (big, small, e) = if be - se > 80 {
        (bm << 80, 1i128, be - 80)
    } else if be >= se {
        (bm << (be - se), sm as i128, se)
    } else {
        (bm, (sm << (se - be)) as i128, be)
    };
    let t = if bn { -(big as i128) } else { big as i128 } + if sn { -small } else { small };
    if t == 0 {
        return 0;
    }
    round_bf16(t < 0, t.unsigned_abs(), e, Mode::Rn)
}

/// The PTX f32 → bf16 conversion by `mode` (NaN → `0x7fff`).
fn cvt_bf16(x: u32, mode: Mode, relu: bool) -> u16 {
    if x & 0x7fff_ffff > 0x7f80_0000 {
        return 0x7fff;
    }
    let neg = x >> 31 == 1;
    if relu && neg {
        return 0;
    }
    if x & 0x7fff_ffff == 0x7f80_0000 {
        return (x >> 16) as u16;
    }
    let ex = ((x >> 23) & 0xff) as i32;
    let fr = (x & 0x7f_ffff) as u128;
    let (m, e) = if ex == 0 {
        (fr, -149)
    } else {
        (fr | 0x80_0000, ex - 150)
    };
    round_bf16(neg, m, e, mode)
}

fn lo(x: u32) -> u16 {
    x as u16
}
fn hi(x: u32) -> u16 {
    (x >> 16) as u16
}
fn pair(l: u16, h: u16) -> u32 {
    l as u32 | (h as u32) << 16
}

#[test]
fn reference_rounding_by_hand() {
    // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1).
    assert_eq!(cvt_bf16(0x3f80_8000, Mode::Rn, false), 0x3f80);
    assert_eq!(cvt_bf16(0x3f81_8000, Mode::Rn, false), 0x3f82);
    // The tie broken by a tiny addend: 1.0078125 · 1 + 2^-100 rounds up.
    // (1 + 2^-7) · (1 + 2^-1)... use a product: (1 + 2^-4)(1 + 2^-4) = 1 + 2^-3 + 2^-8.
    let x = 0x3f88; // 1 + 2^-4
    assert_eq!(fma_bf16(x, x, 0, false), 0x3f90); // 1.125 + 2^-8: tie, to even: 1.125
    assert_eq!(fma_bf16(x, x, 0x0d80, false), 0x3f91); // + 2^-100 breaks the tie upward
    assert_eq!(fma_bf16(x, x, 0x8d80, false), 0x3f90);
    assert_eq!(fma_bf16(0x7f7f, 0x4000, 0, false), 0x7f80);
    assert_eq!(fma_bf16(0x3f80, 0x3f80, 0xbf80, false), 0);
    assert_eq!(fma_bf16(0xbf80, 0x3f80, 0, true), 0);
}

#[test]
fn bf16x2_fma_add_sub_mul_are_correctly_rounded() {
    let body = r#"
    fma.rn.bf16x2 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3], %r5;
    fma.rn.relu.bf16x2 %r5, %r2, %r3, %r4;
    st.global.u32 [%rd3+4], %r5;
    add.rn.bf16x2 %r5, %r2, %r4;
    st.global.u32 [%rd3+8], %r5;
    sub.bf16x2 %r5, %r2, %r4;
    st.global.u32 [%rd3+12], %r5;
    mul.rn.bf16x2 %r5, %r2, %r3;
    st.global.u32 [%rd3+16], %r5;
    fma.rn.bf16 %h6, %h0, %h3, %h4;
    mov.b32 %r5, {%h6, %h6};
    st.global.u32 [%rd3+20], %r5;
"#;
    let one = 0x3f80;
    run_checked("bf16_fma", body, |w, a, b, c, got| {
        let lanes =
            |f: &dyn Fn(u16, u16, u16) -> u16| pair(f(lo(a), lo(b), lo(c)), f(hi(a), hi(b), hi(c)));
        let want = match w {
            0 => lanes(&|a, b, c| fma_bf16(a, b, c, false)),
            1 => lanes(&|a, b, c| fma_bf16(a, b, c, true)),
            2 => lanes(&|a, _, c| fma_bf16(a, one, c, false)),
            3 => lanes(&|a, _, c| fma_bf16(a, one, c ^ 0x8000, false)),
            4 => lanes(&|a, b, _| fma_bf16(a, b, 0x8000, false)),
            5 => {
                let r = fma_bf16(lo(a), hi(b), lo(c), false);
                pair(r, r)
            }
            _ => return,
        };
        assert_eq!(got, want, "word {w}: a={a:#x} b={b:#x} c={c:#x}");
    });
}

#[test]
fn bf16_neg_abs_min_max() {
    let body = r#"
    neg.bf16x2 %r5, %r2;
    st.global.u32 [%rd3], %r5;
    abs.bf16x2 %r5, %r2;
    st.global.u32 [%rd3+4], %r5;
    min.bf16x2 %r5, %r2, %r4;
    st.global.u32 [%rd3+8], %r5;
    max.bf16x2 %r5, %r2, %r4;
    st.global.u32 [%rd3+12], %r5;
    min.NaN.bf16x2 %r5, %r2, %r4;
    st.global.u32 [%rd3+16], %r5;
    max.NaN.bf16 %h6, %h0, %h4;
    neg.bf16 %h7, %h1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+20], %r5;
"#;
    let val = |h: u16| f32::from_bits((h as u32) << 16);
    // PTX min/max: a NaN operand is ignored (two give the canonical NaN); -0 < +0.
    let minmax = move |x: u16, y: u16, max: bool, nan: bool| -> u16 {
        match (is_nan(x), is_nan(y)) {
            (true, true) => return 0x7fff,
            (true, false) | (false, true) if nan => return 0x7fff,
            (true, false) => return y,
            (false, true) => return x,
            _ => {}
        }
        let (fx, fy) = (val(x), val(y));
        let x_first = if fx == fy {
            // Equal: only ±0 differ; -0 is the smaller.
            (x & 0x8000 != 0) != max
        } else {
            (fx < fy) != max
        };
        if x_first {
            x
        } else {
            y
        }
    };
    run_checked("bf16_minmax", body, |w, a, _, c, got| {
        let lanes = |f: &dyn Fn(u16, u16) -> u16| pair(f(lo(a), lo(c)), f(hi(a), hi(c)));
        let want = match w {
            0 => a ^ 0x8000_8000,
            1 => a & 0x7fff_7fff,
            2 => lanes(&|x, y| minmax(x, y, false, false)),
            3 => lanes(&|x, y| minmax(x, y, true, false)),
            4 => lanes(&|x, y| minmax(x, y, false, true)),
            5 => pair(minmax(lo(a), lo(c), true, true), hi(a) ^ 0x8000),
            _ => return,
        };
        assert_eq!(got, want, "word {w}: a={a:#x} c={c:#x}");
    });
}

#[test]
fn cvt_f32_to_bf16_every_rounding_and_packing() {
    let body = r#"
    mov.b32 %f1, %r2;
    mov.b32 %f2, %r3;
    cvt.rn.bf16.f32 %h6, %f1;
    cvt.rz.bf16.f32 %h7, %f1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3], %r5;
    cvt.rm.bf16.f32 %h6, %f1;
    cvt.rp.bf16.f32 %h7, %f1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+4], %r5;
    cvt.rn.relu.bf16.f32 %h6, %f1;
    cvt.f32.bf16 %f3, %h6;
    mov.b32 %r5, %f3;
    st.global.u32 [%rd3+8], %r5;
    cvt.rn.bf16x2.f32 %r5, %f1, %f2;
    st.global.u32 [%rd3+12], %r5;
    cvt.rn.relu.bf16x2.f32 %r5, %f1, %f2;
    st.global.u32 [%rd3+16], %r5;
    cvt.rn.f16x2.f32 %r5, %f1, %f2;
    st.global.u32 [%rd3+20], %r5;
    cvt.rn.f16.f32 %h6, %f2;
    cvt.rn.f16.f32 %h7, %f1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+24], %r5;
"#;
    run_checked("bf16_cvt", body, |w, a, b, _, got| {
        let want = match w {
            0 => pair(cvt_bf16(a, Mode::Rn, false), cvt_bf16(a, Mode::Rz, false)),
            1 => pair(cvt_bf16(a, Mode::Rm, false), cvt_bf16(a, Mode::Rp, false)),
            2 => (cvt_bf16(a, Mode::Rn, true) as u32) << 16,
            // `d, a, b`: a to the upper half.
            3 => pair(cvt_bf16(b, Mode::Rn, false), cvt_bf16(a, Mode::Rn, false)),
            4 => pair(cvt_bf16(b, Mode::Rn, true), cvt_bf16(a, Mode::Rn, true)),
            _ => return,
        };
        assert_eq!(got, want, "word {w}: a={a:#x} b={b:#x}");
    });
    // Word 5 (the f16x2 pack) equals word 6 (two cvt.rn.f16.f32, ptxas's own path).
    let (_, last) = run(
        "bf16_cvt_pack",
        "",
        &format!("{ABC}{}", body.replace("[%rd3+24]", "[%rd3+28]")),
    );
    for g in 0..(THREADS * CTAS) as usize {
        assert_eq!(word(&last, g, 5), word(&last, g, 7), "thread {g}");
    }
}

/// `x` (f16 bits) as f64.
fn f16_val(h: u16) -> f64 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let f = (h & 0x3ff) as f64;
    s * match e {
        0 => f * 2f64.powi(-24),
        31 if f == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + f / 1024.0) * 2f64.powi(e - 15),
    }
}

fn bf16_val(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// The accuracy contract: `got` is within `rel · |want|` plus one unit in the last place of
/// the result's format (`ulp` at `want`), or both are NaN, or both the same infinity.
fn close(got: f64, want: f64, rel: f64, ulp: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= rel * want.abs() + ulp
}

/// One unit in the last place at `x` for a format with `p` significand bits and smallest
/// normal exponent `emin`.
fn ulp(x: f64, p: i32, emin: i32) -> f64 {
    let e = if x == 0.0 {
        emin
    } else {
        (x.abs().log2().floor() as i32).max(emin)
    };
    2f64.powi(e - (p - 1))
}

#[test]
fn tanh_and_ex2_approx_meet_the_accuracy_contract() {
    let body = r#"
    mov.b32 %f1, %r2;
    tanh.approx.f32 %f2, %f1;
    mov.b32 %r5, %f2;
    st.global.u32 [%rd3], %r5;
    tanh.approx.f16x2 %r5, %r2;
    st.global.u32 [%rd3+4], %r5;
    tanh.approx.bf16x2 %r5, %r2;
    st.global.u32 [%rd3+8], %r5;
    ex2.approx.f16x2 %r5, %r2;
    st.global.u32 [%rd3+12], %r5;
    ex2.approx.ftz.bf16x2 %r5, %r2;
    st.global.u32 [%rd3+16], %r5;
    tanh.approx.f16 %h6, %h0;
    ex2.approx.f16 %h7, %h1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+20], %r5;
    tanh.approx.bf16 %h6, %h0;
    ex2.approx.ftz.bf16 %h7, %h1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+24], %r5;
"#;
    let f32_rel = 2f64.powi(-11) * 1.05; // 2^-10.93
    let (out, last) = run("tanh_ex2", "", &format!("{ABC}{body}"));
    assert!(
        has(&out.sass, |t| t.starts_with("MUFU.EX2")),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |t| t.starts_with("MUFU.RCP")),
        "{}",
        out.sass
    );
    for seed in [3] {
        for g in 0..(THREADS * CTAS) as usize {
            let a = input(seed, g);
            let x = f32::from_bits(a) as f64;
            let got = f32::from_bits(word(&last, g, 0)) as f64;
            // f32 subnormal inputs: the unit flushes them; tanh(x) = x there anyway.
            assert!(
                close(got, x.tanh(), f32_rel, 2f64.powi(-149)),
                "tanh.f32({x:e}) = {got:e}, want {:e}",
                x.tanh()
            );
            let check =
                |w: usize, k: u32, val: &dyn Fn(u16) -> f64, p: i32, emin: i32, tanh: bool| {
                    let h = ((a >> (16 * k)) & 0xffff) as u16;
                    let r = ((word(&last, g, w) >> (16 * k)) & 0xffff) as u16;
                    let x = val(h);
                    let mut want = if tanh { x.tanh() } else { x.exp2() };
                    // Past the format's largest finite value (its rounding threshold): infinity.
                    let over = 2f64.powi(1 - emin) * (2.0 - 2f64.powi(-p));
                    if want >= over {
                        want = f64::INFINITY;
                    }
                    let got = val(r);
                    // Flushed subnormal results of ex2: anything below the format's smallest
                    // normal may read as 0.
                    let want_ftz = if !tanh && want < 2f64.powi(emin) {
                        0.0
                    } else {
                        want
                    };
                    assert!(
                        close(got, want, f32_rel, ulp(want, p, emin))
                            || close(got, want_ftz, f32_rel, ulp(want, p, emin)),
                        "word {w} lane {k}: f({x:e}) = {got:e}, want {want:e} (thread {g})"
                    );
                };
            for k in 0..2 {
                check(1, k, &f16_val, 11, -14, true);
                check(2, k, &bf16_val, 8, -126, true);
                check(3, k, &f16_val, 11, -14, false);
                check(4, k, &bf16_val, 8, -126, false);
            }
            check(5, 0, &f16_val, 11, -14, true);
            check(5, 1, &f16_val, 11, -14, false);
            check(6, 0, &bf16_val, 8, -126, true);
            check(6, 1, &bf16_val, 8, -126, false);
        }
    }
}

/// An f64 (bits) as `(neg, m, e)`, finite.
fn decode_f64(x: u64) -> (bool, u128, i32) {
    let neg = x >> 63 == 1;
    let ex = ((x >> 52) & 0x7ff) as i32;
    let fr = (x & ((1 << 52) - 1)) as u128;
    if ex == 0 {
        (neg, fr, -1074)
    } else {
        (neg, fr | 1 << 52, ex - 1075)
    }
}

/// PTX `cvt.rnd.bf16.f64`.
fn cvt_bf16_f64(x: u64, mode: Mode) -> u16 {
    if x & !(1 << 63) > 0x7ff0_0000_0000_0000 {
        return 0x7fff;
    }
    if x & !(1 << 63) == 0x7ff0_0000_0000_0000 {
        return ((x >> 48) as u16 & 0x8000) | 0x7f80;
    }
    let (neg, m, e) = decode_f64(x);
    round_bf16(neg, m, e, mode)
}

/// PTX `cvt.rnd.bf16.s64` / `.u64` / `.s32` / `.u32`.
fn cvt_bf16_int(x: i128, mode: Mode) -> u16 {
    round_bf16(x < 0, x.unsigned_abs(), 0, mode)
}

#[test]
fn bf16_integer_f64_f16_conversions_and_comparisons() {
    let body = r#"
    .reg .f64 %fd<4>;
    .reg .b64 %rl<4>;
    cvt.rn.bf16.s32 %h6, %r2;
    cvt.rz.bf16.u32 %h7, %r3;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3], %r5;
    mov.b64 %rl1, {%r3, %r2};
    cvt.rm.bf16.s64 %h6, %rl1;
    cvt.rp.bf16.u64 %h7, %rl1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+4], %r5;
    mov.b64 %fd1, %rl1;
    cvt.rn.bf16.f64 %h6, %fd1;
    cvt.rp.bf16.f64 %h7, %fd1;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+8], %r5;
    cvt.rni.s32.bf16 %r5, %h0;
    st.global.u32 [%rd3+12], %r5;
    cvt.rzi.u32.bf16 %r5, %h1;
    st.global.u32 [%rd3+16], %r5;
    setp.lt.bf16 %p1, %h0, %h4;
    selp.u32 %r5, 1, 0, %p1;
    setp.gtu.bf16x2 %p2|%p3, %r2, %r4;
    selp.u32 %r6, 2, 0, %p2;
    or.b32 %r5, %r5, %r6;
    selp.u32 %r6, 4, 0, %p3;
    or.b32 %r5, %r5, %r6;
    st.global.u32 [%rd3+20], %r5;
    set.le.bf16x2.bf16x2 %r5, %r2, %r4;
    st.global.u32 [%rd3+24], %r5;
    cvt.rn.bf16.f16 %h6, %h0;
    cvt.rn.f16.bf16 %h7, %h0;
    mov.b32 %r5, {%h6, %h7};
    st.global.u32 [%rd3+28], %r5;
"#;
    let val = |h: u16| bf16_val(h);
    // PTX float-to-integer conversion: round by mode, saturate, NaN → 0.
    let to_int = |x: f64, signed: bool, mode: Mode| -> u32 {
        if x.is_nan() {
            return 0;
        }
        let r = match mode {
            Mode::Rn => {
                let f = x.floor();
                let d = x - f;
                if d > 0.5 || (d == 0.5 && f % 2.0 != 0.0) {
                    f + 1.0
                } else {
                    f
                }
            }
            Mode::Rz => x.trunc(),
            Mode::Rm => x.floor(),
            Mode::Rp => x.ceil(),
        };
        if signed {
            r.clamp(i32::MIN as f64, i32::MAX as f64) as i32 as u32
        } else {
            r.clamp(0.0, u32::MAX as f64) as u32
        }
    };
    run_checked("bf16_conv_cmp", body, |w, a, b, c, got| {
        let wide = (a as u64) << 32 | b as u64;
        let want = match w {
            0 => pair(
                cvt_bf16_int(a as i32 as i128, Mode::Rn),
                cvt_bf16_int(b as i128, Mode::Rz),
            ),
            1 => pair(
                cvt_bf16_int(wide as i64 as i128, Mode::Rm),
                cvt_bf16_int(wide as i128, Mode::Rp),
            ),
            2 => pair(cvt_bf16_f64(wide, Mode::Rn), cvt_bf16_f64(wide, Mode::Rp)),
            3 => to_int(val(lo(a)), true, Mode::Rn),
            4 => to_int(val(hi(a)), false, Mode::Rz),
            5 => {
                let lt = val(lo(a)) < val(lo(c));
                // gtu: greater than, or unordered.
                let gtu = |x: f64, y: f64| x > y || x.is_nan() || y.is_nan();
                lt as u32
                    | (gtu(val(lo(a)), val(lo(c))) as u32) << 1
                    | (gtu(val(hi(a)), val(hi(c))) as u32) << 2
            }
            6 => {
                let le = |x: u16, y: u16| if val(x) <= val(y) { 0x3f80 } else { 0 };
                pair(le(lo(a), lo(c)), le(hi(a), hi(c)))
            }
            7 => {
                // f16 → bf16: the f16 value (exact in f64) rounded once; word's upper half
                // (bf16 → f16) is checked by eval == sim only.
                let x = f16_val(lo(a));
                let r = if x.is_nan() {
                    0x7fff
                } else {
                    cvt_bf16_f64(x.to_bits(), Mode::Rn)
                };
                return assert_eq!(got as u16, r, "word 7: a={a:#x}");
            }
            _ => return,
        };
        assert_eq!(got, want, "word {w}: a={a:#x} b={b:#x} c={c:#x}");
    });
}
