//! The exact core of IEEE arithmetic: unpacking a float of any [`FloatFmt`] into sign,
//! exponent and significand, rounding an exact result to a format under a [`Round`] mode (with
//! overflow and subnormals), and the correctly rounded operations built on them (add, mul,
//! div, sqrt, fma, min/max, conversions to and from integers and between formats).
//!
//! In: bit patterns and a format. Out: the correctly rounded result bits; a NaN result as the
//! module essay's rules say (canonical for f16/f32, IEEE-style for f64). Invariant: every
//! operation is exact before its one rounding.

use super::*;

// ---- the exact core ------------------------------------------------------------------------

/// An unpacked operand. `Fin(sign, m, e)` is `(-1)^sign * m * 2^e` with `m` normalised so its
/// top bit is bit `prec - 1`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Class {
    Nan,
    Inf(bool),
    Zero(bool),
    Fin(bool, u64, i32),
}

/// Unpack `bits` of `fmt`; with `ftz`, a subnormal is read as zero of its sign.
pub fn unpack(fmt: FloatFmt, bits: u64, ftz: bool) -> Class {
    let fb = fmt.prec() as u32 - 1;
    let sign = bits & fmt.sign_bit() != 0;
    let emax = (1u64 << fmt.exp_bits()) - 1;
    let e = (bits >> fb) & emax;
    let m = bits & ((1u64 << fb) - 1);
    if e == emax {
        return if m == 0 { Class::Inf(sign) } else { Class::Nan };
    }
    if e == 0 {
        if m == 0 || ftz {
            return Class::Zero(sign);
        }
        // Subnormal: m * 2^(1 - bias - fb), normalised.
        let s = m.leading_zeros() - (63 - fb);
        return Class::Fin(sign, m << s, 1 - fmt.bias() - fb as i32 - s as i32);
    }
    Class::Fin(sign, m | (1u64 << fb), e as i32 - fmt.bias() - fb as i32)
}

/// The canonical NaN of `fmt` (see the module essay).
pub fn canonical_nan(fmt: FloatFmt) -> u64 {
    match fmt {
        FloatFmt::F16 => 0x7fff,
        FloatFmt::F32 => 0x7fff_ffff,
        FloatFmt::F64 => 0x7fff_ffff_ffff_ffff,
    }
}

/// Whether `bits` is a NaN of `fmt`.
pub fn is_nan(fmt: FloatFmt, bits: u64) -> bool {
    matches!(unpack(fmt, bits, false), Class::Nan)
}

/// The NaN an invalid operation makes (`inf - inf`, `0 · inf`, `0/0`, `inf/inf`,
/// `sqrt(-x)`): canonical for f16/f32, `0xfff8000000000000` for f64 (see the module essay).
pub fn invalid_nan(fmt: FloatFmt) -> u64 {
    match fmt {
        FloatFmt::F64 => 0xfff8_0000_0000_0000,
        _ => canonical_nan(fmt),
    }
}

/// The f64 quiet bit (the significand's top bit).
const F64_QUIET: u64 = 1 << 51;

/// A NaN operand passed through: an f64 NaN quieted with its sign and payload kept, an
/// f16/f32 NaN canonical.
pub fn quiet_nan(fmt: FloatFmt, bits: u64) -> u64 {
    match fmt {
        FloatFmt::F64 => bits | F64_QUIET,
        _ => canonical_nan(fmt),
    }
}

/// Which of two f64 NaN operands `add/sub/mul/min/max` (and `fma`'s product) return,
/// quieted, as measured (module essay): a signalling NaN before a quiet one, then a negative
/// before a positive one, then the smaller value as if the high words were equal (the
/// smaller low word when positive, the larger when negative), the first on a tie. With
/// `sig_reversed` (add, sub, mul) two signalling NaNs of one sign order the other way.
fn pick_nan(a: u64, b: u64, sig_reversed: bool) -> u64 {
    let sig = |x: u64| x & F64_QUIET == 0;
    let neg = |x: u64| x >> 63 != 0;
    let first = if sig(a) != sig(b) {
        sig(a)
    } else if neg(a) != neg(b) {
        neg(a)
    } else {
        let flip = neg(a) != (sig(a) && sig_reversed);
        match (a as u32).cmp(&(b as u32)) {
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Less => !flip,
            std::cmp::Ordering::Greater => flip,
        }
    };
    quiet_nan(FloatFmt::F64, if first { a } else { b })
}

/// The NaN result of a two-operand `add/sub/mul/min/max` when an operand is NaN (`None`
/// when neither is): the NaN operand quieted, or [`pick_nan`]'s choice of two; always the
/// canonical NaN for f16/f32.
pub fn nan_operand(fmt: FloatFmt, a: u64, b: u64, sig_reversed: bool) -> Option<u64> {
    match (is_nan(fmt, a), is_nan(fmt, b)) {
        (false, false) => None,
        _ if fmt != FloatFmt::F64 => Some(canonical_nan(fmt)),
        (true, true) => Some(pick_nan(a, b, sig_reversed)),
        (true, false) => Some(quiet_nan(fmt, a)),
        (false, true) => Some(quiet_nan(fmt, b)),
    }
}

/// `-b` for a subtraction or a negated operand: the sign flipped unless `b` is a NaN (a NaN
/// operand passes through unchanged, as measured for f64 `sub`, `neg` and `abs`).
pub fn negate_operand(fmt: FloatFmt, b: u64) -> u64 {
    if is_nan(fmt, b) {
        b
    } else {
        b ^ fmt.sign_bit()
    }
}

pub(super) fn zero(fmt: FloatFmt, sign: bool) -> u64 {
    if sign {
        fmt.sign_bit()
    } else {
        0
    }
}

pub(super) fn inf(fmt: FloatFmt, sign: bool) -> u64 {
    let fb = fmt.prec() as u32 - 1;
    zero(fmt, sign) | (((1u64 << fmt.exp_bits()) - 1) << fb)
}

pub(super) fn overflow(fmt: FloatFmt, sign: bool, rnd: Round) -> u64 {
    let to_inf = match rnd {
        Round::Rn => true,
        Round::Rz => false,
        Round::Rp => !sign,
        Round::Rm => sign,
    };
    if to_inf {
        inf(fmt, sign)
    } else {
        // The largest finite value: all-ones significand, largest exponent.
        inf(fmt, sign) - 1
    }
}

/// Round `(-1)^sign * mag * 2^exp` (exact, or with a sticky low bit far below the rounding
/// position) to `fmt` under `rnd`; with `ftz`, a subnormal result becomes zero of its sign.
/// `mag == 0` gives zero of `sign`.
pub fn round_to(fmt: FloatFmt, sign: bool, mag: u128, exp: i32, rnd: Round, ftz: bool) -> u64 {
    if mag == 0 {
        return zero(fmt, sign);
    }
    let prec = fmt.prec();
    let msb = 127 - mag.leading_zeros() as i32;
    let top = exp + msb;
    let emin = 1 - fmt.bias();
    let lsb = (top - (prec - 1)).max(emin - (prec - 1));
    let shift = lsb - exp;
    let mut q = if shift <= 0 {
        // Exact: fewer significant bits than the format holds.
        mag << (-shift) as u32
    } else {
        shift_round(mag, shift as u32, sign, rnd)
    };
    let mut lsb = lsb;
    if q == 1u128 << prec {
        q >>= 1;
        lsb += 1;
    }
    let fb = prec as u32 - 1;
    if q >> fb != 0 {
        let be = lsb + (prec - 1) + fmt.bias();
        if be >= (1 << fmt.exp_bits()) - 1 {
            return overflow(fmt, sign, rnd);
        }
        zero(fmt, sign) | ((be as u64) << fb) | (q as u64 & ((1u64 << fb) - 1))
    } else if ftz && q != 0 {
        zero(fmt, sign)
    } else {
        zero(fmt, sign) | q as u64
    }
}

/// Shift right, OR-ing every shifted-out bit into bit 0 (so the result is inexact exactly
/// when the value was, and lies strictly inside the same unit interval).
pub(super) fn shr_sticky(x: u128, k: i32) -> u128 {
    if k <= 0 {
        x
    } else if k >= 128 {
        u128::from(x != 0)
    } else {
        (x >> k) | u128::from(x & ((1u128 << k) - 1) != 0)
    }
}

/// Round the exact sum of two finite nonzero values (significands of up to 106 bits).
pub(super) fn sum(
    fmt: FloatFmt,
    a: (bool, u128, i32),
    b: (bool, u128, i32),
    rnd: Round,
    ftz: bool,
) -> u64 {
    // Normalise both to top bit 125: two spare bits for the carry, and at least 20 guard
    // bits below a 106-bit product, so a sticky shift only loses bits far below rounding.
    let norm = |(s, m, e): (bool, u128, i32)| {
        let k = m.leading_zeros() as i32 - 2;
        (s, m << k, e - k)
    };
    let (mut x, mut y) = (norm(a), norm(b));
    if y.2 > x.2 {
        std::mem::swap(&mut x, &mut y);
    }
    let ym = shr_sticky(y.1, x.2 - y.2);
    let (sign, mag) = if x.0 == y.0 {
        (x.0, x.1 + ym)
    } else if x.1 >= ym {
        (x.0, x.1 - ym)
    } else {
        (y.0, ym - x.1)
    };
    if mag == 0 {
        // Exact cancellation: +0, or -0 when rounding toward minus infinity.
        return zero(fmt, rnd == Round::Rm);
    }
    round_to(fmt, sign, mag, x.2, rnd, ftz)
}

/// The value of a finite operand, exactly, rounded (with `ftz`) to its own format.
pub(super) fn repack(fmt: FloatFmt, c: Class, rnd: Round, ftz: bool) -> u64 {
    match c {
        Class::Nan => canonical_nan(fmt),
        Class::Inf(s) => inf(fmt, s),
        Class::Zero(s) => zero(fmt, s),
        Class::Fin(s, m, e) => round_to(fmt, s, u128::from(m), e, rnd, ftz),
    }
}

/// IEEE addition.
pub fn add(fmt: FloatFmt, a: u64, b: u64, rnd: Round, ftz: bool) -> u64 {
    if let Some(n) = nan_operand(fmt, a, b, true) {
        return n;
    }
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => canonical_nan(fmt),
        (Class::Inf(s), Class::Inf(t)) if s != t => invalid_nan(fmt),
        (Class::Inf(s), _) | (_, Class::Inf(s)) => inf(fmt, s),
        (Class::Zero(s), Class::Zero(t)) => zero(fmt, if s == t { s } else { rnd == Round::Rm }),
        (Class::Zero(_), c) | (c, Class::Zero(_)) => repack(fmt, c, rnd, ftz),
        (Class::Fin(sa, ma, ea), Class::Fin(sb, mb, eb)) => sum(
            fmt,
            (sa, u128::from(ma), ea),
            (sb, u128::from(mb), eb),
            rnd,
            ftz,
        ),
    }
}

/// IEEE multiplication.
pub fn mul(fmt: FloatFmt, a: u64, b: u64, rnd: Round, ftz: bool) -> u64 {
    if let Some(n) = nan_operand(fmt, a, b, true) {
        return n;
    }
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    let sign = sign_of(ca) != sign_of(cb);
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => canonical_nan(fmt),
        (Class::Inf(_), Class::Zero(_)) | (Class::Zero(_), Class::Inf(_)) => invalid_nan(fmt),
        (Class::Inf(_), _) | (_, Class::Inf(_)) => inf(fmt, sign),
        (Class::Zero(_), _) | (_, Class::Zero(_)) => zero(fmt, sign),
        (Class::Fin(_, ma, ea), Class::Fin(_, mb, eb)) => round_to(
            fmt,
            sign,
            u128::from(ma) * u128::from(mb),
            ea + eb,
            rnd,
            ftz,
        ),
    }
}

/// `a · b · 2^k` with one rounding (the exact product scaled, then rounded): the simulator's
/// model of SM50's `FMUL.D2/.D4/.D8/.M2/.M4/.M8`. With `k = 0` it is [`mul`].
pub fn mul_scaled(fmt: FloatFmt, a: u64, b: u64, k: i32, rnd: Round, ftz: bool) -> u64 {
    match (unpack(fmt, a, ftz), unpack(fmt, b, ftz)) {
        (Class::Fin(sa, ma, ea), Class::Fin(sb, mb, eb)) => round_to(
            fmt,
            sa != sb,
            u128::from(ma) * u128::from(mb),
            ea + eb + k,
            rnd,
            ftz,
        ),
        _ => mul(fmt, a, b, rnd, ftz),
    }
}

/// IEEE division `a / b`, one rounding: `0/0` and `inf/inf` are NaN, `x/0` is infinite.
/// A NaN operand gives the first NaN operand, quieted (f64; measured: no payload choice).
pub fn div(fmt: FloatFmt, a: u64, b: u64, rnd: Round, ftz: bool) -> u64 {
    if is_nan(fmt, a) || is_nan(fmt, b) {
        return quiet_nan(fmt, if is_nan(fmt, a) { a } else { b });
    }
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    let sign = sign_of(ca) != sign_of(cb);
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => canonical_nan(fmt),
        (Class::Inf(_), Class::Inf(_)) | (Class::Zero(_), Class::Zero(_)) => invalid_nan(fmt),
        (Class::Inf(_), _) | (_, Class::Zero(_)) => inf(fmt, sign),
        (Class::Zero(_), _) | (_, Class::Inf(_)) => zero(fmt, sign),
        (Class::Fin(_, ma, ea), Class::Fin(_, mb, eb)) => {
            // Dividend's top bit at 126, divisor's at 63: the integer quotient has 63 or 64
            // bits (far more than 53 + 2), and a nonzero remainder becomes a sticky bit.
            let sa = ma.leading_zeros() as i32 + 63;
            let sb = mb.leading_zeros() as i32;
            let (n, d) = (u128::from(ma) << sa, u128::from(mb << sb));
            let (q, r) = (n / d, n % d);
            let mag = q << 1 | u128::from(r != 0);
            round_to(fmt, sign, mag, ea - sa - (eb - sb) - 1, rnd, ftz)
        }
    }
}

/// IEEE square root, one rounding: `-0` is `-0`, other negatives are NaN.
pub fn sqrt(fmt: FloatFmt, a: u64, rnd: Round, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Nan => quiet_nan(fmt, a),
        Class::Inf(true) | Class::Fin(true, _, _) => invalid_nan(fmt),
        Class::Inf(false) => inf(fmt, false),
        Class::Zero(s) => zero(fmt, s),
        Class::Fin(false, m, e) => {
            // m·2^e with the significand's top bit at 124 or 125 and an even exponent: the
            // integer root has 62 or 63 bits, and a nonzero remainder is a sticky bit.
            let mut sh = m.leading_zeros() as i32 + 60;
            if (e - sh) % 2 != 0 {
                sh += 1;
            }
            let n = u128::from(m) << sh;
            let r = isqrt(n);
            let mag = r << 1 | u128::from(r * r != n);
            round_to(fmt, false, mag, (e - sh) / 2 - 1, rnd, ftz)
        }
    }
}

/// The integer square root (floor) of `n` < 2^126.
pub(super) fn isqrt(n: u128) -> u128 {
    let (mut r, mut bit) = (0u128, 1u128 << 62);
    while bit != 0 {
        if (r | bit) * (r | bit) <= n {
            r |= bit;
        }
        bit >>= 1;
    }
    r
}

pub(super) fn sign_of(c: Class) -> bool {
    match c {
        Class::Nan => false,
        Class::Inf(s) | Class::Zero(s) | Class::Fin(s, _, _) => s,
    }
}

/// IEEE fused multiply-add `a * b + c`, one rounding. NaN operands (f64, measured): two NaN
/// factors give [`pick_nan`]'s choice of them; otherwise a NaN `c`; otherwise the NaN factor;
/// quieted; `0 · inf + c` with `c` a NaN is `c`.
pub fn fma(fmt: FloatFmt, a: u64, b: u64, c: u64, rnd: Round, ftz: bool) -> u64 {
    let (ca, cb, cc) = (
        unpack(fmt, a, ftz),
        unpack(fmt, b, ftz),
        unpack(fmt, c, ftz),
    );
    if matches!(ca, Class::Nan) && matches!(cb, Class::Nan) {
        return nan_operand(fmt, a, b, true).unwrap_or(canonical_nan(fmt));
    }
    if matches!(cc, Class::Nan) {
        return quiet_nan(fmt, c);
    }
    if let Some(n) = nan_operand(fmt, a, b, true) {
        return n;
    }
    let sp = sign_of(ca) != sign_of(cb);
    // The product's class: infinite, zero or finite.
    let prod_inf = matches!(ca, Class::Inf(_)) || matches!(cb, Class::Inf(_));
    let prod_zero = matches!(ca, Class::Zero(_)) || matches!(cb, Class::Zero(_));
    if prod_inf && prod_zero {
        return invalid_nan(fmt);
    }
    if prod_inf {
        return match cc {
            Class::Inf(t) if t != sp => invalid_nan(fmt),
            _ => inf(fmt, sp),
        };
    }
    if let Class::Inf(t) = cc {
        return inf(fmt, t);
    }
    if prod_zero {
        return match cc {
            Class::Zero(t) => zero(fmt, if sp == t { sp } else { rnd == Round::Rm }),
            c => repack(fmt, c, rnd, ftz),
        };
    }
    let (Class::Fin(_, ma, ea), Class::Fin(_, mb, eb)) = (ca, cb) else {
        return canonical_nan(fmt);
    };
    let p = (sp, u128::from(ma) * u128::from(mb), ea + eb);
    match cc {
        Class::Fin(sc, mc, ec) => sum(fmt, p, (sc, u128::from(mc), ec), rnd, ftz),
        _ => round_to(fmt, p.0, p.1, p.2, rnd, ftz),
    }
}

/// `min` (`max` when `max`): NaN operands are ignored, `-0 < +0`; two NaNs give
/// [`nan_operand`]'s NaN.
pub fn minmax(fmt: FloatFmt, a: u64, b: u64, max: bool, ftz: bool) -> u64 {
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    let (ra, rb) = (
        repack(fmt, ca, Round::Rn, ftz),
        repack(fmt, cb, Round::Rn, ftz),
    );
    match (ca, cb) {
        (Class::Nan, Class::Nan) => nan_operand(fmt, a, b, false).unwrap_or(canonical_nan(fmt)),
        (Class::Nan, _) => rb,
        (_, Class::Nan) => ra,
        _ => {
            let (x, y) = (to_f64(ca), to_f64(cb));
            let a_less = x < y || (x == y && sign_of(ca) && !sign_of(cb));
            if a_less != max {
                ra
            } else {
                rb
            }
        }
    }
}

/// The exact value as an `f64` (every f16/f32/f64 value is one); NaN gives NaN.
pub(super) fn to_f64(c: Class) -> f64 {
    match c {
        Class::Nan => f64::NAN,
        Class::Inf(s) => {
            if s {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        Class::Zero(s) => {
            if s {
                -0.0
            } else {
                0.0
            }
        }
        Class::Fin(s, m, e) => {
            let bits = round_to(FloatFmt::F64, s, u128::from(m), e, Round::Rn, false);
            f64::from_bits(bits)
        }
    }
}

/// Compare two values; `None` when either is NaN.
pub fn compare(fmt: FloatFmt, a: u64, b: u64, ftz: bool) -> Option<std::cmp::Ordering> {
    let (x, y) = (to_f64(unpack(fmt, a, ftz)), to_f64(unpack(fmt, b, ftz)));
    x.partial_cmp(&y)
}

/// `neg` (sign flipped; a NaN passed through as [`quiet_nan`]; with `ftz`, a subnormal
/// becomes zero first).
pub fn neg(fmt: FloatFmt, a: u64, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Nan => quiet_nan(fmt, a),
        c => repack(fmt, c, Round::Rn, ftz) ^ fmt.sign_bit(),
    }
}

/// `abs` (sign cleared; a NaN passed through as [`quiet_nan`], its sign kept; with `ftz`, a
/// subnormal becomes +0).
pub fn abs(fmt: FloatFmt, a: u64, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Nan => quiet_nan(fmt, a),
        c => repack(fmt, c, Round::Rn, ftz) & !fmt.sign_bit(),
    }
}

/// PTX `.sat`: clamp to `[+0.0, 1.0]`, NaN and negative values (also `-0.0`) to `+0.0`.
pub fn saturate(fmt: FloatFmt, r: u64) -> u64 {
    match unpack(fmt, r, false) {
        Class::Nan | Class::Inf(true) | Class::Zero(_) | Class::Fin(true, _, _) => 0,
        c => {
            if to_f64(c) > 1.0 {
                round_to(fmt, false, 1, 0, Round::Rn, false)
            } else {
                r
            }
        }
    }
}

pub(super) fn saturate_if(fmt: FloatFmt, r: u64, sat: bool) -> u64 {
    if sat {
        saturate(fmt, r)
    } else {
        r
    }
}

/// Integer of type `from` (bits in `a`) to `fmt`.
pub fn from_int(fmt: FloatFmt, a: u64, from: Type, signed: bool, rnd: Round, ftz: bool) -> u64 {
    let bits = from.bits();
    let a = a & from.mask();
    let (sign, mag) = if signed && (a >> (bits - 1)) & 1 == 1 {
        // Two's complement magnitude of a negative number.
        (true, u128::from((!a).wrapping_add(1) & from.mask()))
    } else {
        (false, u128::from(a))
    };
    // (The most negative value's magnitude 2^(bits-1) survives the mask: it is the sign bit.)
    round_to(fmt, sign, mag, 0, rnd, ftz)
}

/// Round a finite value to an integer magnitude by `rnd`; `None` when it does not fit in
/// 100 bits (far beyond any integer type: the caller saturates).
pub(super) fn int_magnitude(sign: bool, m: u64, e: i32, rnd: Round) -> Option<u128> {
    if e >= 0 {
        if e + (64 - m.leading_zeros() as i32) > 100 {
            return None;
        }
        return Some(u128::from(m) << e);
    }
    Some(shift_round(u128::from(m), (-e) as u32, sign, rnd))
}

/// `mag / 2^shift` (`shift` >= 1) rounded by `rnd` to an integer, for a value of sign
/// `sign`: the quotient plus one where the dropped bits round it up. The result may carry
/// into the next power of two (the caller renormalises).
fn shift_round(mag: u128, shift: u32, sign: bool, rnd: Round) -> u128 {
    use std::cmp::Ordering;
    let (q, rem_nonzero, half) = if shift > 128 {
        (0, mag != 0, Ordering::Less)
    } else if shift == 128 {
        (0, mag != 0, mag.cmp(&(1u128 << 127)))
    } else {
        let rem = mag & ((1u128 << shift) - 1);
        (mag >> shift, rem != 0, rem.cmp(&(1u128 << (shift - 1))))
    };
    let inc = match rnd {
        Round::Rn => half == Ordering::Greater || (half == Ordering::Equal && q & 1 == 1),
        Round::Rz => false,
        Round::Rp => !sign && rem_nonzero,
        Round::Rm => sign && rem_nonzero,
    };
    q + u128::from(inc)
}

/// Float to integer `to`, saturating. NaN (measured, module essay) gives what `F2I` to 32 or
/// 64 bits gives, `2^63` for a 64-bit result, `2^31` from an f64, else 0, saturated into a
/// narrower `to` (as read signed or unsigned) as the 32-bit result is by `I2I.SAT`.
pub fn to_int(fmt: FloatFmt, a: u64, to: Type, signed: bool, rnd: Round, ftz: bool) -> u64 {
    let bits = to.bits();
    let (smax, smin) = ((1u128 << (bits - 1)) - 1, 1u128 << (bits - 1));
    let umax = to.mask();
    let (sign, mag) = match unpack(fmt, a, ftz) {
        Class::Nan if bits == 64 => return 1 << 63,
        Class::Nan if fmt == FloatFmt::F64 && signed => (true, Some(1 << 31)),
        Class::Nan if fmt == FloatFmt::F64 => (false, Some(1 << 31)),
        Class::Nan | Class::Zero(_) => return 0,
        Class::Inf(s) => (s, None),
        Class::Fin(s, m, e) => (s, int_magnitude(s, m, e, rnd)),
    };
    if signed {
        if sign {
            match mag {
                Some(q) if q <= smin => (q as u64).wrapping_neg() & umax,
                _ => (smin as u64).wrapping_neg() & umax,
            }
        } else {
            match mag {
                Some(q) if q <= smax => q as u64,
                _ => smax as u64,
            }
        }
    } else if sign {
        0
    } else {
        match mag {
            Some(q) if q <= u128::from(umax) => q as u64,
            _ => umax,
        }
    }
}

/// Float to float of another format. A NaN keeps its sign and the top of its payload, quieted,
/// between f32 and f64 and from f16 to f64 (measured); to and from f16 otherwise it is the
/// canonical NaN (module essay).
pub fn convert(from: FloatFmt, to: FloatFmt, a: u64, rnd: Round, ftz: bool) -> u64 {
    if is_nan(from, a) && (to == FloatFmt::F64 || (from == FloatFmt::F64 && to == FloatFmt::F32)) {
        let (fb, tb) = (from.prec() - 1, to.prec() - 1);
        let payload = a & ((1u64 << fb) - 1);
        let payload = if tb >= fb {
            payload << (tb - fb)
        } else {
            payload >> (fb - tb)
        };
        let sign = if a & from.sign_bit() != 0 {
            to.sign_bit()
        } else {
            0
        };
        return sign | inf(to, false) | payload | (1 << (tb - 1));
    }
    // `.ftz` applies to f32 operands and results (PTX); f16 and f64 keep their subnormals.
    let c = unpack(from, a, ftz && from == FloatFmt::F32);
    repack(to, c, rnd, ftz && to == FloatFmt::F32)
}

/// Round to an integral value in the same format; the sign of a zero result is kept.
pub fn round_int(fmt: FloatFmt, a: u64, rnd: Round, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Nan => quiet_nan(fmt, a),
        Class::Fin(s, m, e) if e < 0 => match int_magnitude(s, m, e, rnd) {
            Some(q) => round_to(fmt, s, q, 0, Round::Rn, ftz),
            None => canonical_nan(fmt),
        },
        c => repack(fmt, c, Round::Rn, ftz),
    }
}
