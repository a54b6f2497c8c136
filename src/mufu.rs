//! The numeric model of SM50's special function unit (`MUFU`) and its range reduction (`RRO`),
//! shared by the simulator ([`crate::sim`]) and the IR interpreter ([`crate::ir::eval`]) so
//! that `.approx` results can be compared byte for byte.
//!
//! In: raw f32 bits (for `RCP64H`/`RSQ64H` the high word of an f64). Out: raw result bits.
//! [`eval`] is one `MUFU` instruction, [`rro`] one `RRO`, and [`approx`] a whole PTX f32
//! `.approx` function (or `div.full`) as the sequence `lower` emits for it computes it: that
//! is the meaning `ir::eval` gives `FloatOp::Approx`.
//!
//! # The model (a choice, not a hardware fact)
//!
//! NVIDIA documents the accuracy of the PTX `.approx` instructions (e.g. `rcp.approx.f32`:
//! max relative error 2^-23 over the whole range; `sin.approx`: absolute error 2^-20.5 in
//! [-π, π]), not the exact bits the unit returns. We model each function as *the exact
//! function evaluated in f64 and rounded to f32* (for `RCP64H`/`RSQ64H`: to the high word of
//! the f64 result), which hardware is within ~1-2 ulp of. Sequences that need IEEE results
//! (`div.rn`, `rcp.rn`, `sqrt.rn`, integer division) must not depend on these bits: the
//! simulator can perturb every finite non-zero result by a number of ulps
//! ([`perturb`], `sim::SimOptions::mufu_ulps`) and the tests check that the final results do
//! not change. One exception: the FCHK fast path of `div.rn.f32`/`rcp.rn.f32`
//! (`lower::select::fdiv`) is ptxas's one Newton step, which is right only where the unit
//! returns what ptxas counts on; it is tested on this model unperturbed.
//!
//! Inputs and outputs are flushed: a subnormal input counts as a zero of its sign and a
//! subnormal result becomes a zero of its sign (the SFU works on normal numbers; ptxas wraps
//! the non-`.ftz` PTX forms in scaling code for that reason). Special values follow IEEE
//! limits: `RCP(±0) = ±inf`, `RCP(±inf) = ±0`, `RSQ(-x) = NaN`, `RSQ(+0) = +inf`,
//! `RSQ(-0) = -inf`, `LG2(0) = -inf`, `LG2(x < 0) = NaN`, `EX2(-inf) = +0`, `SIN`/`COS` of
//! ±inf = NaN; any NaN gives the canonical NaN `0x7fffffff`.
//!
//! `RRO` (range reduction before `SIN`/`COS`/`EX2`) has an undocumented output format. The
//! model keeps the argument as an f32 unchanged (after its negate/abs modifiers), and the
//! `MUFU.SIN`/`COS`/`EX2` model takes that value as the plain argument. Only `MUFU` reads an
//! `RRO` result in the code we emit, so the format never shows anywhere else.

/// The canonical NaN MUFU produces.
pub const NAN: u32 = 0x7fff_ffff;

/// A MUFU operation (the instruction's `op` field, in encoding order).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Func {
    Cos,
    Sin,
    Ex2,
    Lg2,
    Rcp,
    Rsq,
    Rcp64h,
    Rsq64h,
}

impl Func {
    /// The operation of an encoded `op` field value.
    pub fn from_code(code: u64) -> Option<Func> {
        Some(match code {
            0 => Func::Cos,
            1 => Func::Sin,
            2 => Func::Ex2,
            3 => Func::Lg2,
            4 => Func::Rcp,
            5 => Func::Rsq,
            6 => Func::Rcp64h,
            7 => Func::Rsq64h,
            _ => return None,
        })
    }

    /// The encoded `op` field value.
    pub fn code(self) -> u64 {
        self as u64
    }
}

/// A subnormal f32 becomes a zero of its sign.
fn flush32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// Round an f64 result to f32 bits, flushing subnormals and canonicalising NaN.
fn out32(r: f64) -> u32 {
    if r.is_nan() {
        return NAN;
    }
    flush32(r as f32).to_bits()
}

/// MUFU `func` of the raw operand `a` (modifiers already applied).
pub fn eval(func: Func, a: u32) -> u32 {
    match func {
        Func::Rcp64h | Func::Rsq64h => {
            let x = f64::from_bits(u64::from(a) << 32);
            let x = if x.is_subnormal() {
                0.0f64.copysign(x)
            } else {
                x
            };
            let r = if func == Func::Rcp64h {
                1.0 / x
            } else if x == 0.0 {
                f64::INFINITY.copysign(x)
            } else {
                1.0 / x.sqrt()
            };
            if r.is_nan() {
                return 0x7fff_ffff;
            }
            let r = if r.is_subnormal() {
                0.0f64.copysign(r)
            } else {
                r
            };
            (r.to_bits() >> 32) as u32
        }
        _ => {
            let x = f64::from(flush32(f32::from_bits(a)));
            let r = match func {
                Func::Rcp => 1.0 / x,
                Func::Rsq if x == 0.0 => f64::INFINITY.copysign(x),
                Func::Rsq => 1.0 / x.sqrt(),
                Func::Lg2 if x == 0.0 => f64::NEG_INFINITY,
                Func::Lg2 => x.log2(),
                Func::Ex2 => x.exp2(),
                Func::Sin => x.sin(),
                _ => x.cos(),
            };
            out32(r)
        }
    }
}

/// `RRO` of the raw operand (modifiers already applied): the model's identity (see above).
pub fn rro(a: u32) -> u32 {
    a
}

/// `r` moved by `ulps` units in the last place away from (positive) or toward (negative)
/// zero, for the simulator's perturbation knob. NaN, infinities and zeros stay as they are,
/// and a value never crosses zero or reaches infinity. `wide`: `r` is the high word of an
/// f64 (its ulps are then the high word's).
pub fn perturb(r: u32, ulps: i32, wide: bool) -> u32 {
    let exp_mask = if wide { 0x7ff0_0000 } else { 0x7f80_0000 };
    let mag = r & 0x7fff_ffff;
    if ulps == 0 || mag == 0 || r & exp_mask == exp_mask {
        return r;
    }
    let moved = i64::from(mag) + i64::from(ulps);
    let moved = moved.clamp(1, i64::from(exp_mask) - 1) as u32;
    (r & 0x8000_0000) | moved
}

/// The PTX f32 functions built on the unit (`rcp.approx`, `sqrt.approx`, `rsqrt.approx`,
/// `sin`/`cos`/`lg2`/`ex2.approx`, `div.approx`, `div.full`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Approx {
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Div,
    DivFull,
    /// `sqrt.rn.f32`: the IEEE square root, correctly rounded (not an approximation; it
    /// lives here because its sequence is built on `MUFU.RSQ` like the others).
    SqrtRn,
    /// `rcp.approx.ftz.f64`: `MUFU.RCP64H` on the operand's high word gives the result's
    /// high word, over a zero low word (ptxas's `MOV lo, RZ`). Its IR operand and result
    /// are `i64` ([`Approx::carrier`]); [`approx`] takes and gives the high words.
    Rcp64h,
    /// `rsqrt.approx.ftz.f64` likewise: `MUFU.RSQ64H` on the high word. `rsqrt.approx.f64`
    /// without `.ftz` uses it too, on the operand scaled by 2^54 (result by 2^27) when the
    /// operand is subnormal, selected in the IR (`ir::build`'s approx essay).
    Rsqrt64h,
}

impl Approx {
    /// Operands: 2 for the divisions, else 1.
    pub fn arity(self) -> usize {
        match self {
            Approx::Div | Approx::DivFull => 2,
            _ => 1,
        }
    }

    /// The IR type of the operands and the result: `i64` for the f64 forms, else `i32`.
    pub fn carrier(self) -> crate::ir::Type {
        match self {
            Approx::Rcp64h | Approx::Rsqrt64h => crate::ir::Type::I64,
            _ => crate::ir::Type::I32,
        }
    }

    /// The IR spelling, e.g. `rcp.approx`.
    pub fn name(self) -> &'static str {
        match self {
            Approx::Rcp => "rcp.approx",
            Approx::Sqrt => "sqrt.approx",
            Approx::Rsqrt => "rsqrt.approx",
            Approx::Sin => "sin.approx",
            Approx::Cos => "cos.approx",
            Approx::Lg2 => "lg2.approx",
            Approx::Ex2 => "ex2.approx",
            Approx::Div => "div.approx",
            Approx::DivFull => "div.full",
            Approx::SqrtRn => "sqrt.rn",
            Approx::Rcp64h => "rcp.approx",
            Approx::Rsqrt64h => "rsqrt.approx",
        }
    }
}

/// 2^-126, the smallest normal f32: below it the unit would see a flushed zero.
const MIN_NORMAL: f32 = f32::MIN_POSITIVE;
const TWO_24: f32 = 16_777_216.0;
const TWO_126: f32 = 8.507_059e37;

fn unit(func: Func, x: f32) -> f32 {
    f32::from_bits(eval(func, x.to_bits()))
}

fn ftz(x: f32) -> f32 {
    flush32(x)
}

/// `func` of `a` (and `b` for the divisions), `.ftz` or not, exactly as the sequences
/// `lower` emits compute it on the model (ptxas's shapes): the `.ftz` forms are the bare unit
/// (`div.approx.ftz` = `a · RCP(b)` with a flushing multiply); the others first scale an
/// operand the unit would flush (|x| < 2^-126, or `ex2` of x < -126) by an exact power of
/// two and undo it on the result, and `div.full` also scales a divisor above 2^126 by 1/4 so
/// that its reciprocal stays normal (`div.full.ftz` does only that, with a flushing
/// multiply). Every multiply is an IEEE f32 multiply (round to
/// nearest); a NaN result may be any NaN.
pub fn approx(func: Approx, ftz_mode: bool, a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    let r = match (func, ftz_mode) {
        (Approx::SqrtRn, _) => {
            // Correctly rounded: the f64 square root of an f32 is exact to 53 bits, and
            // rounding that to 24 bits cannot double-round (53 >= 2 * 24 + 2).
            let r = f64::from(x).sqrt();
            return if r.is_nan() {
                NAN
            } else {
                (r as f32).to_bits()
            };
        }
        // Words of an f64, not f32 values.
        (Approx::Rcp64h, _) => return eval(Func::Rcp64h, a),
        (Approx::Rsqrt64h, _) => return eval(Func::Rsq64h, a),
        (Approx::Sin, _) => unit(Func::Sin, f32::from_bits(rro(a))),
        (Approx::Cos, _) => unit(Func::Cos, f32::from_bits(rro(a))),
        (Approx::Rcp, true) => unit(Func::Rcp, x),
        (Approx::Sqrt, true) => unit(Func::Rcp, unit(Func::Rsq, x)),
        (Approx::Rsqrt, true) => unit(Func::Rsq, x),
        (Approx::Lg2, true) => unit(Func::Lg2, x),
        (Approx::Ex2, true) => unit(Func::Ex2, f32::from_bits(rro(a))),
        (Approx::Div, true) => ftz(ftz(unit(Func::Rcp, y)) * ftz(x)),
        (Approx::Rcp, false) => {
            // s = 2^24 for tiny |x|, 1/4 for huge |x|, else 1; 1/x = s · RCP(s · x).
            let mut s = 1.0f32;
            if !(x.abs() >= MIN_NORMAL || x.is_nan()) {
                s = TWO_24;
            }
            if x.abs() > TWO_126 {
                s = 0.25;
            }
            unit(Func::Rcp, x * s) * s
        }
        (Approx::Sqrt | Approx::Rsqrt | Approx::Lg2, false) => {
            let normal = x.abs() >= MIN_NORMAL || x.is_nan();
            let t = if normal { x } else { x * TWO_24 };
            let r = match func {
                Approx::Sqrt => unit(Func::Rcp, unit(Func::Rsq, t)),
                Approx::Rsqrt => unit(Func::Rsq, t),
                _ => unit(Func::Lg2, t),
            };
            match (normal, func) {
                (true, _) => r,
                (false, Approx::Sqrt) => r * (1.0 / 4096.0),
                (false, Approx::Rsqrt) => r * 4096.0,
                (false, _) => r + -24.0,
            }
        }
        (Approx::Ex2, false) => {
            // 2^x = (2^(x/2))^2 where 2^x would be subnormal.
            let big = x >= -126.0 || x.is_nan();
            let t = if big { x } else { x * 0.5 };
            let r = unit(Func::Ex2, f32::from_bits(rro(t.to_bits())));
            if big {
                r
            } else {
                r * r
            }
        }
        (Approx::Div, false) => {
            let normal = y.abs() >= MIN_NORMAL || y.is_nan();
            let (xs, ys) = if normal {
                (x, y)
            } else {
                (x * TWO_24, y * TWO_24)
            };
            unit(Func::Rcp, ys) * xs
        }
        (Approx::DivFull, true) => {
            let (xs, ys) = if y.abs() > TWO_126 {
                (x * 0.25, y * 0.25)
            } else {
                (x, y)
            };
            ftz(ftz(unit(Func::Rcp, ys)) * ftz(xs))
        }
        (Approx::DivFull, false) => {
            let (mut xs, mut ys) = (x, y);
            if y.abs() > TWO_126 {
                xs = x * 0.25;
                ys = y * 0.25;
            }
            if !(y.abs() >= MIN_NORMAL || y.is_nan()) {
                xs *= TWO_24;
                ys *= TWO_24;
            }
            unit(Func::Rcp, ys) * xs
        }
    };
    // The last step is a MUFU, FMUL or FADD, which all give the canonical NaN (a Rust
    // multiply would keep an operand's payload instead).
    if r.is_nan() {
        NAN
    } else {
        r.to_bits()
    }
}
