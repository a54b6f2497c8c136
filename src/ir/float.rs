//! Floating-point operations of the IR and their exact reference semantics.
//!
//! In: the operand bits of one [`FloatOp`] (integers holding IEEE 754 binary16/32/64 bits).
//! Out: the result bits, computed exactly as IEEE 754 prescribes for the operation's rounding
//! mode, plus the PTX / SM50 rules IEEE leaves open (below). [`super::eval`] calls
//! [`FloatOp::eval`]; the SM50 simulator calls the same `pub` functions ([`add`], [`mul`],
//! [`fma`], [`round_to`] ...) for FADD/DADD/... so the reference arithmetic exists once.
//!
//! # Representation
//!
//! Float values have no float *type* in the IR: a PTX `.f32` register is an `i32` value
//! holding the bits, `.f64` an `i64`, `.f16` an `i16`. The opcode names the format
//! ([`FloatFmt`]), so loads, stores, moves and selects of floats need no bitcasts, and every
//! float operation is one `InstData::Float { op, args }` whose operand and result types
//! follow from `op` ([`FloatOp::operand_types`], [`FloatOp::result_type`]).
//!
//! # Exact arithmetic
//!
//! No host float operation is trusted for rounding. Operands are unpacked into sign,
//! integer significand and exponent; sums and products are formed in `u128` (products of
//! 53-bit significands are exact; sums align the smaller operand with a *sticky* right
//! shift that keeps at least 70 bits below the rounding position, which decides every
//! rounding mode exactly), and [`round_to`] rounds once to the destination format: `rn`
//! (nearest, ties to even), `rz`, `rm`, `rp`, with gradual underflow and IEEE overflow
//! (to infinity or to the largest finite value, by mode).
//!
//! # Rules beyond IEEE (what SM50 and PTX do)
//!
//! * **NaN results, f16 and f32**: the canonical NaN of the format ([`canonical_nan`]),
//!   `0x7fffffff` / `0x7fff`, whatever the operands' payloads and signs (also `neg`/`abs`
//!   of a NaN: they are FADD with negated/absolute operands).
//! * **NaN results, f64** (IEEE-style; measured on an H200 by the probe kernels
//!   `tests/data/fpmath/nan_probe.ptx`, `nan_probe2.ptx` and `nan_probe3.ptx`, rows held by
//!   `tests/float_nan.rs`): an invalid operation (`inf - inf`, `0 · inf`, `fma(0, inf, x)`,
//!   `0/0`, `inf/inf`, `sqrt` of a negative) gives [`invalid_nan`] `0xfff8000000000000`
//!   (ptxas's own `sqrt.rz.f64` code builds the same high word). One NaN operand: the
//!   result is that NaN quieted ([`quiet_nan`]: quiet bit set, sign and payload kept); operand
//!   negation and `|x|` do not touch a NaN, so `sub`, `neg`, `abs` keep its sign. Two NaN
//!   operands of `add/sub/mul/min/max` ([`nan_operand`]): a signalling NaN before a quiet
//!   one, a negative before a positive one, else the smaller as if the high words were equal
//!   (positive: smaller low word; negative: larger), the first on a tie; two signalling NaNs
//!   of one sign order the other way in `add/sub/mul` (one measured pair). `fma(a, b, c)`:
//!   two NaN factors give that choice of them (even when `c` is NaN); else a NaN `c`; else
//!   the NaN factor. `div` (and `rcp`) gives the first NaN operand, `sqrt` and `cvt.rni`
//!   the operand, quieted (the division sequences choose positionally on the GPU, and
//!   `lower::select::fdiv` does the same). `rsqrt.approx.f64`/`rcp.approx.ftz.f64` keep the
//!   MUFU model (`0x7fffffff00000000`; approximate, not compared).
//! * **NaN through conversions** ([`convert`]): f64 → f32 keeps the sign and the top 23
//!   payload bits, quieted (`0x7ff8..0123` → `0x7fc00000`); f32 → f64 and f16 → f64 keep the
//!   sign and shift the payload up, quieted (`0x7fc00123` → `0x7ff8002460000000`); f32 ↔ f16
//!   give the canonical f16/f32 NaN. f64 → f16 gives the canonical `0x7fff` here although
//!   the H200 keeps the payload (`0xfff8..0456` → `0xfe00`): sm_50's f16 `fma` is an f64
//!   DFMA narrowed by `F2F.F16.F64`, and that narrowing must give the f16 arithmetic's
//!   canonical NaN.
//! * float → integer conversions saturate (PTX), out-of-range values clamp to the integer
//!   type's range. NaN ([`to_int`]; measured): a 64-bit result is `0x8000000000000000`
//!   from any format; from f64 a 32-bit result is `0x80000000` (s32 and u32), saturated
//!   into narrower types as ptxas's `F2I.S32/U32` + `I2I.SAT` sequence does (s16 `0x8000`,
//!   s8 `0x80`, as on the H200; u16 `0xffff`, u8 `0xff`, where the H200's own code gives
//!   `0x8000`/`0x80`); from f32 and f16 every result of 32 bits or fewer is 0.
//! * `.ftz` flushes subnormal inputs and subnormal (rounded) results to zero of the same sign.
//! * `.sat` clamps the result to `[+0.0, 1.0]`; NaN and `-0.0` become `+0.0`.
//! * `min`/`max`: a NaN operand is ignored (two NaNs give a NaN, as above); `-0.0 < +0.0`.
//! * `x + (-x)` is `+0.0` except under `rm`, where it is `-0.0`.
//!
//! # Files of this module
//!
//! - `exact.rs`: The exact core of IEEE arithmetic.

mod exact;
pub use exact::*;
use smallvec::{smallvec, SmallVec};

use super::Type;

/// A floating-point format.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatFmt {
    F16,
    F32,
    F64,
}

impl FloatFmt {
    pub fn bits(self) -> u32 {
        match self {
            FloatFmt::F16 => 16,
            FloatFmt::F32 => 32,
            FloatFmt::F64 => 64,
        }
    }

    /// The IR integer type that carries a value of this format.
    pub fn carrier(self) -> Type {
        match self {
            FloatFmt::F16 => Type::I16,
            FloatFmt::F32 => Type::I32,
            FloatFmt::F64 => Type::I64,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FloatFmt::F16 => "f16",
            FloatFmt::F32 => "f32",
            FloatFmt::F64 => "f64",
        }
    }

    /// Significand precision in bits, hidden bit included.
    fn prec(self) -> i32 {
        match self {
            FloatFmt::F16 => 11,
            FloatFmt::F32 => 24,
            FloatFmt::F64 => 53,
        }
    }

    fn exp_bits(self) -> u32 {
        self.bits() - self.prec() as u32
    }

    fn bias(self) -> i32 {
        (1 << (self.exp_bits() - 1)) - 1
    }

    fn sign_bit(self) -> u64 {
        1u64 << (self.bits() - 1)
    }
}

/// IEEE 754 rounding-direction attribute (PTX `.rn .rz .rm .rp`, and `.rni .rzi .rmi .rpi`
/// for rounding to an integer).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Round {
    /// To nearest, ties to even.
    Rn,
    /// Toward zero.
    Rz,
    /// Toward minus infinity.
    Rm,
    /// Toward plus infinity.
    Rp,
}

impl Round {
    pub fn name(self) -> &'static str {
        match self {
            Round::Rn => "rn",
            Round::Rz => "rz",
            Round::Rm => "rm",
            Round::Rp => "rp",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatBinOp {
    Add,
    Sub,
    Mul,
    Min,
    Max,
    /// IEEE division, correctly rounded by `rnd` (PTX `div.rn` etc.; `rcp.rn` is `1 / x`).
    Div,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatUnOp {
    Neg,
    Abs,
}

/// Float comparisons: PTX's ordered ones (false when either operand is NaN), unordered ones
/// (`u` suffix: true when either is NaN), `num` (neither is NaN) and `nan` (either is).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatCC {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl FloatCC {
    pub fn name(self) -> &'static str {
        match self {
            FloatCC::Eq => "eq",
            FloatCC::Ne => "ne",
            FloatCC::Lt => "lt",
            FloatCC::Le => "le",
            FloatCC::Gt => "gt",
            FloatCC::Ge => "ge",
            FloatCC::Equ => "equ",
            FloatCC::Neu => "neu",
            FloatCC::Ltu => "ltu",
            FloatCC::Leu => "leu",
            FloatCC::Gtu => "gtu",
            FloatCC::Geu => "geu",
            FloatCC::Num => "num",
            FloatCC::Nan => "nan",
        }
    }

    /// The result when the operands compare as `ord` (`None`: unordered, a NaN is involved).
    pub fn holds(self, ord: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::*;
        match (self, ord) {
            (FloatCC::Num, o) => o.is_some(),
            (FloatCC::Nan, o) => o.is_none(),
            (FloatCC::Equ | FloatCC::Neu | FloatCC::Ltu, None)
            | (FloatCC::Leu | FloatCC::Gtu | FloatCC::Geu, None) => true,
            (_, None) => false,
            (FloatCC::Eq | FloatCC::Equ, Some(o)) => o == Equal,
            (FloatCC::Ne | FloatCC::Neu, Some(o)) => o != Equal,
            (FloatCC::Lt | FloatCC::Ltu, Some(o)) => o == Less,
            (FloatCC::Le | FloatCC::Leu, Some(o)) => o != Greater,
            (FloatCC::Gt | FloatCC::Gtu, Some(o)) => o == Greater,
            (FloatCC::Ge | FloatCC::Geu, Some(o)) => o != Less,
        }
    }
}

/// One floating-point operation. Operands and result are integer bit carriers
/// ([`FloatFmt::carrier`]); `ftz` and `sat` are PTX's `.ftz` and `.sat`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatOp {
    /// `add sub mul min max` (min/max ignore `rnd`; it is `rn` for them).
    Binary {
        op: FloatBinOp,
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
        sat: bool,
    },
    /// `a * b + c` rounded once.
    Fma {
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
        sat: bool,
    },
    Unary {
        op: FloatUnOp,
        fmt: FloatFmt,
        ftz: bool,
    },
    /// Comparison; the result is a `pred`.
    Cmp {
        cc: FloatCC,
        fmt: FloatFmt,
        ftz: bool,
    },
    /// Integer (of type `from`, read as signed or unsigned) to float.
    FromInt {
        signed: bool,
        from: Type,
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
        sat: bool,
    },
    /// Float to integer `to`, rounded to an integer by `rnd` (PTX `.rni` etc.), saturating.
    ToInt {
        signed: bool,
        fmt: FloatFmt,
        to: Type,
        rnd: Round,
        ftz: bool,
    },
    /// Float to float of another format (widening is exact; narrowing rounds by `rnd`).
    Convert {
        from: FloatFmt,
        to: FloatFmt,
        rnd: Round,
        ftz: bool,
        sat: bool,
    },
    /// IEEE square root, correctly rounded by `rnd` (PTX `sqrt.rn.f64` etc.).
    Sqrt {
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
    },
    /// Round to an integral value in the same format (PTX `cvt.rni.f32.f32`).
    RoundInt {
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
        sat: bool,
    },
    /// An f32 `.approx` function (and `div.approx`/`div.full`): defined as the special
    /// function unit's model, see [`crate::mufu::approx`].
    Approx {
        func: crate::mufu::Approx,
        ftz: bool,
    },
}

impl FloatOp {
    /// The operand types, in order.
    pub fn operand_types(&self) -> SmallVec<[Type; 3]> {
        match *self {
            FloatOp::Binary { fmt, .. } | FloatOp::Cmp { fmt, .. } => {
                smallvec![fmt.carrier(); 2]
            }
            FloatOp::Fma { fmt, .. } => smallvec![fmt.carrier(); 3],
            FloatOp::Unary { fmt, .. }
            | FloatOp::ToInt { fmt, .. }
            | FloatOp::Sqrt { fmt, .. }
            | FloatOp::RoundInt { fmt, .. } => smallvec![fmt.carrier()],
            FloatOp::FromInt { from, .. } => smallvec![from],
            FloatOp::Convert { from, .. } => smallvec![from.carrier()],
            FloatOp::Approx { func, .. } => smallvec![func.carrier(); func.arity()],
        }
    }

    pub fn result_type(&self) -> Type {
        match *self {
            FloatOp::Binary { fmt, .. }
            | FloatOp::Fma { fmt, .. }
            | FloatOp::Unary { fmt, .. }
            | FloatOp::FromInt { fmt, .. }
            | FloatOp::Sqrt { fmt, .. }
            | FloatOp::RoundInt { fmt, .. } => fmt.carrier(),
            FloatOp::Cmp { .. } => Type::Pred,
            FloatOp::ToInt { to, .. } => to,
            FloatOp::Convert { to, .. } => to.carrier(),
            FloatOp::Approx { func, .. } => func.carrier(),
        }
    }

    /// Problems with the operation itself (not its operands), for the verifier.
    pub fn check(&self) -> Option<String> {
        match *self {
            FloatOp::FromInt { from, .. } if !from.is_int() => {
                Some(format!("i2f: source must be an integer type, got {from}"))
            }
            FloatOp::ToInt { to, .. } if !to.is_int() => {
                Some(format!("f2i: result must be an integer type, got {to}"))
            }
            FloatOp::Convert { from, to, .. } if from == to => {
                Some("f2f: formats must differ (use frint to round in place)".to_string())
            }
            _ => None,
        }
    }

    /// The IR text of the opcode (without operands), e.g. `fadd.rn.ftz.f32`.
    pub fn display_name(&self) -> String {
        let fl = |ftz: bool, sat: bool| {
            let mut s = String::new();
            if ftz {
                s.push_str(".ftz");
            }
            if sat {
                s.push_str(".sat");
            }
            s
        };
        match *self {
            FloatOp::Binary {
                op,
                fmt,
                rnd,
                ftz,
                sat,
            } => {
                let (name, r) = match op {
                    FloatBinOp::Add => ("fadd", true),
                    FloatBinOp::Sub => ("fsub", true),
                    FloatBinOp::Mul => ("fmul", true),
                    FloatBinOp::Min => ("fmin", false),
                    FloatBinOp::Max => ("fmax", false),
                    FloatBinOp::Div => ("fdiv", true),
                };
                let r = if r {
                    format!(".{}", rnd.name())
                } else {
                    String::new()
                };
                format!("{name}{r}{}.{}", fl(ftz, sat), fmt.name())
            }
            FloatOp::Fma { fmt, rnd, ftz, sat } => {
                format!("ffma.{}{}.{}", rnd.name(), fl(ftz, sat), fmt.name())
            }
            FloatOp::Unary { op, fmt, ftz } => {
                let name = match op {
                    FloatUnOp::Neg => "fneg",
                    FloatUnOp::Abs => "fabs",
                };
                format!("{name}{}.{}", fl(ftz, false), fmt.name())
            }
            FloatOp::Cmp { cc, fmt, ftz } => {
                format!("fcmp.{}{}.{}", cc.name(), fl(ftz, false), fmt.name())
            }
            FloatOp::FromInt {
                signed,
                from,
                fmt,
                rnd,
                ftz,
                sat,
            } => {
                let s = if signed { "s" } else { "u" };
                format!(
                    "i2f.{}{}.{}.{s}.{from}",
                    rnd.name(),
                    fl(ftz, sat),
                    fmt.name()
                )
            }
            FloatOp::ToInt {
                signed,
                fmt,
                to,
                rnd,
                ftz,
            } => {
                let s = if signed { "s" } else { "u" };
                format!(
                    "f2i.{}i{}.{s}.{to}.{}",
                    rnd.name(),
                    fl(ftz, false),
                    fmt.name()
                )
            }
            FloatOp::Convert {
                from,
                to,
                rnd,
                ftz,
                sat,
            } => format!(
                "f2f.{}{}.{}.{}",
                rnd.name(),
                fl(ftz, sat),
                to.name(),
                from.name()
            ),
            FloatOp::Sqrt { fmt, rnd, ftz } => {
                format!("fsqrt.{}{}.{}", rnd.name(), fl(ftz, false), fmt.name())
            }
            FloatOp::RoundInt { fmt, rnd, ftz, sat } => {
                format!("frint.{}i{}.{}", rnd.name(), fl(ftz, sat), fmt.name())
            }
            FloatOp::Approx { func, ftz } => {
                let ty = if func.carrier() == Type::I64 {
                    "f64"
                } else {
                    "f32"
                };
                format!("{}{}.{ty}", func.name(), fl(ftz, false))
            }
        }
    }
    /// The constant this operation folds to when every operand is a known constant: its
    /// [`Self::eval`] value (the interpreter's definition). Every IEEE operation is correctly
    /// rounded, so it has one value; the approximations (`ex2.approx`, `rcp.approx`: the
    /// hardware's tables) do not fold. `None` too when an operand is not known. Used by
    /// `ir::simplify` and by `ir::unroll` on its copies.
    pub fn fold(&self, args: impl IntoIterator<Item = Option<u64>>) -> Option<u64> {
        if matches!(self, FloatOp::Approx { .. }) {
            return None;
        }
        let vals: smallvec::SmallVec<[u64; 3]> = args.into_iter().collect::<Option<_>>()?;
        Some(self.eval(&vals))
    }

    /// Evaluate on operand bits (each already masked to its type); the result's bits.
    pub fn eval(&self, args: &[u64]) -> u64 {
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        match *self {
            FloatOp::Binary {
                op,
                fmt,
                rnd,
                ftz,
                sat,
            } => {
                let r = match op {
                    FloatBinOp::Add => add(fmt, arg(0), arg(1), rnd, ftz),
                    FloatBinOp::Sub => add(fmt, arg(0), negate_operand(fmt, arg(1)), rnd, ftz),
                    FloatBinOp::Mul => mul(fmt, arg(0), arg(1), rnd, ftz),
                    FloatBinOp::Min => minmax(fmt, arg(0), arg(1), false, ftz),
                    FloatBinOp::Max => minmax(fmt, arg(0), arg(1), true, ftz),
                    FloatBinOp::Div => div(fmt, arg(0), arg(1), rnd, ftz),
                };
                saturate_if(fmt, r, sat)
            }
            FloatOp::Fma { fmt, rnd, ftz, sat } => {
                saturate_if(fmt, fma(fmt, arg(0), arg(1), arg(2), rnd, ftz), sat)
            }
            FloatOp::Unary { op, fmt, ftz } => match op {
                FloatUnOp::Neg => neg(fmt, arg(0), ftz),
                FloatUnOp::Abs => abs(fmt, arg(0), ftz),
            },
            FloatOp::Cmp { cc, fmt, ftz } => u64::from(cc.holds(compare(fmt, arg(0), arg(1), ftz))),
            FloatOp::FromInt {
                signed,
                from,
                fmt,
                rnd,
                ftz,
                sat,
            } => saturate_if(fmt, from_int(fmt, arg(0), from, signed, rnd, ftz), sat),
            FloatOp::ToInt {
                signed,
                fmt,
                to,
                rnd,
                ftz,
            } => to_int(fmt, arg(0), to, signed, rnd, ftz),
            FloatOp::Convert {
                from,
                to,
                rnd,
                ftz,
                sat,
            } => saturate_if(to, convert(from, to, arg(0), rnd, ftz), sat),
            FloatOp::Sqrt { fmt, rnd, ftz } => sqrt(fmt, arg(0), rnd, ftz),
            FloatOp::RoundInt { fmt, rnd, ftz, sat } => {
                saturate_if(fmt, round_int(fmt, arg(0), rnd, ftz), sat)
            }
            FloatOp::Approx { func, ftz } if func.carrier() == Type::I64 => {
                // The unit on the high word; the low word of the result is zero.
                let hi = crate::mufu::approx(func, ftz, (arg(0) >> 32) as u32, 0);
                u64::from(hi) << 32
            }
            FloatOp::Approx { func, ftz } => {
                u64::from(crate::mufu::approx(func, ftz, arg(0) as u32, arg(1) as u32))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `div` against the host: the f64 quotient of two f32s is never within 2^-53 relative
    /// of an f32 grid point unless it lies on it, so rounding it by `rnd` is exact.
    #[test]
    fn div_f32_matches_host_in_every_mode() {
        let mut vals: Vec<u32> = vec![
            0,
            0x8000_0000,
            1,
            2,
            3,
            0x7f_ffff,
            0x80_0000,
            0x80_0001,
            0x3f80_0000,
            0x3f80_0001,
            0x3fff_ffff,
            0x4040_0000,
            0x7f7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xbf80_0000,
            0x0040_0000,
            0x3400_0000,
            0x4b80_0000,
        ];
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x as u32);
        }
        for (i, &a) in vals.iter().enumerate() {
            for &b in vals.iter().skip(i % 7).step_by(53) {
                for rnd in [Round::Rn, Round::Rz, Round::Rm, Round::Rp] {
                    let got = div(FloatFmt::F32, a.into(), b.into(), rnd, false) as u32;
                    let want = host_div(a, b, rnd);
                    let same = got == want
                        || (f32::from_bits(got).is_nan() && f32::from_bits(want).is_nan());
                    assert!(same, "{a:#x} / {b:#x} {rnd:?}: {got:#x}, want {want:#x}");
                }
            }
        }
    }

    /// `sqrt` against the host's (correctly rounded) f64 and f32-via-f64 square roots.
    #[test]
    fn sqrt_matches_host() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut vals = vec![
            0u64,
            1,
            2,
            3,
            0x0010_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0x3ff0_0000_0000_0000,
        ];
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x);
        }
        for &v in &vals {
            let got = sqrt(FloatFmt::F64, v, Round::Rn, false);
            let want = f64::from_bits(v).sqrt();
            assert!(
                got == want.to_bits() || (want.is_nan() && f64::from_bits(got).is_nan()),
                "sqrt({v:#x})"
            );
            let v32 = v as u32;
            let got = sqrt(FloatFmt::F32, v32.into(), Round::Rn, false) as u32;
            let want = (f64::from(f32::from_bits(v32)).sqrt() as f32).to_bits();
            assert!(
                got == want || f32::from_bits(want).is_nan() && got == 0x7fff_ffff,
                "sqrt({v32:#x})"
            );
            // Directed: rz/rm below the root, rp above, one ulp apart unless exact.
            let (z, p) = (
                sqrt(FloatFmt::F64, v, Round::Rz, false),
                sqrt(FloatFmt::F64, v, Round::Rp, false),
            );
            assert_eq!(z, sqrt(FloatFmt::F64, v, Round::Rm, false));
            let r = f64::from_bits(v).sqrt();
            // (The residual test of exactness needs a residual that cannot underflow.)
            if r.is_finite() && f64::from_bits(v) > 1e-290 {
                let exact = r * r == f64::from_bits(v) && r.mul_add(-r, f64::from_bits(v)) == 0.0;
                assert_eq!(p - z, u64::from(!exact), "sqrt({v:#x}) rz {z:#x} rp {p:#x}");
                assert!(z == r.to_bits() || p == r.to_bits());
            }
        }
    }

    fn host_div(a: u32, b: u32, rnd: Round) -> u32 {
        let q = f64::from(f32::from_bits(a)) / f64::from(f32::from_bits(b));
        let r = q as f32;
        if q.is_nan() || f64::from(r) == q {
            return r.to_bits();
        }
        let step = |r: f32, away: bool| {
            let bits = r.to_bits();
            if away {
                bits + 1
            } else {
                bits - 1
            }
        };
        let above = f64::from(r).abs() > q.abs();
        let neg = q < 0.0;
        match rnd {
            Round::Rn => r.to_bits(),
            Round::Rz if above => step(r, false),
            Round::Rp if f64::from(r) < q => step(r, !neg),
            Round::Rm if f64::from(r) > q => step(r, neg),
            _ => r.to_bits(),
        }
    }

    fn f32r(x: u64) -> f32 {
        f32::from_bits(x as u32)
    }

    #[test]
    fn rn_matches_host_f32_and_f64() {
        let vals: [f32; 12] = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            3.25e-39,
            1.0e38,
            3.0e38,
            f32::MIN_POSITIVE,
            7.1e-45,
            0.1,
            -123456.78,
            f32::MAX,
        ];
        for &a in &vals {
            for &b in &vals {
                let (ab, bb) = (u64::from(a.to_bits()), u64::from(b.to_bits()));
                assert_eq!(f32r(add(FloatFmt::F32, ab, bb, Round::Rn, false)), a + b);
                assert_eq!(f32r(mul(FloatFmt::F32, ab, bb, Round::Rn, false)), a * b);
                for &c in &vals {
                    let cb = u64::from(c.to_bits());
                    let want = a.mul_add(b, c);
                    let got = f32r(fma(FloatFmt::F32, ab, bb, cb, Round::Rn, false));
                    assert_eq!(got.to_bits(), want.to_bits(), "fma({a:e}, {b:e}, {c:e})");
                }
                let (x, y) = (f64::from(a) * 1.1, f64::from(b) * 0.9);
                let got = add(FloatFmt::F64, x.to_bits(), y.to_bits(), Round::Rn, false);
                assert_eq!(f64::from_bits(got), x + y);
                let got = mul(FloatFmt::F64, x.to_bits(), y.to_bits(), Round::Rn, false);
                assert_eq!(f64::from_bits(got), x * y);
            }
        }
    }

    #[test]
    fn directed_rounding_brackets_the_exact_value() {
        // 1 + 2^-30 is between 1 and the next f32.
        let one = u64::from(1.0f32.to_bits());
        let tiny = u64::from((2.0f32).powi(-30).to_bits());
        assert_eq!(add(FloatFmt::F32, one, tiny, Round::Rn, false), one);
        assert_eq!(add(FloatFmt::F32, one, tiny, Round::Rz, false), one);
        assert_eq!(add(FloatFmt::F32, one, tiny, Round::Rm, false), one);
        assert_eq!(add(FloatFmt::F32, one, tiny, Round::Rp, false), one + 1);
        let mone = one | 0x8000_0000;
        assert_eq!(
            add(FloatFmt::F32, mone, tiny, Round::Rz, false),
            0xbf7f_ffff
        );
        assert_eq!(add(FloatFmt::F32, mone, tiny, Round::Rm, false), mone);
        // Overflow: rz gives the largest finite value.
        let max = u64::from(f32::MAX.to_bits());
        assert_eq!(add(FloatFmt::F32, max, max, Round::Rz, false), max);
        assert_eq!(add(FloatFmt::F32, max, max, Round::Rn, false), 0x7f80_0000);
        // x - x is -0 only under rm.
        assert_eq!(add(FloatFmt::F32, one, mone, Round::Rm, false), 0x8000_0000);
        assert_eq!(add(FloatFmt::F32, one, mone, Round::Rn, false), 0);
    }

    /// NaN rows measured on an H200 (`tests/data/fpmath/nan_probe*.rows` hold them all, run
    /// through whole kernels by `tests/float_nan.rs`): the functions the simulator shares.
    #[test]
    fn nan_rules_as_measured() {
        use FloatFmt::{F16, F32, F64};
        const A: u64 = 0x7ff8_0000_0000_0123; // quiet, +
        const B: u64 = 0xfff8_0000_0000_0456; // quiet, -
        const C: u64 = 0x7ff0_0000_0000_0789; // signalling, +
        const P1: u64 = 0x7ff8_0000_0000_0fff;
        const P2: u64 = 0x7ff8_0000_0000_0001;
        const N1: u64 = 0xfff8_0000_0000_0001;
        const N2: u64 = 0xfff8_0000_0000_0fff;
        const S1: u64 = 0x7ff0_0000_0000_0fff;
        const S2: u64 = 0x7ff0_0000_0000_0001;
        const H1: u64 = 0x7ffc_0000_0000_0001;
        const INV: u64 = 0xfff8_0000_0000_0000;
        const Q: u64 = 1 << 51; // the quiet bit
        let (one, inf, zero) = (1f64.to_bits(), f64::INFINITY.to_bits(), 0u64);
        let rn = Round::Rn;
        // Two NaN operands of add/mul (both orders) and max.
        for (x, y, want, want_max) in [
            (A, B, B, B),
            (P1, P2, P2, P2),
            (N1, P1, N1, N1),
            (N2, P2, N2, N2),
            (N2, N1, N2, N2),
            (S1, P2, S1 | Q, S1 | Q),
            (S1, N1, S1 | Q, S1 | Q),
            (S1, S2, S1 | Q, S2 | Q),
            (H1, P1, H1, H1),
        ] {
            for (a, b) in [(x, y), (y, x)] {
                assert_eq!(add(F64, a, b, rn, false), want, "add {a:#x} {b:#x}");
                assert_eq!(mul(F64, a, b, rn, false), want, "mul {a:#x} {b:#x}");
                assert_eq!(
                    minmax(F64, a, b, true, false),
                    want_max,
                    "max {a:#x} {b:#x}"
                );
            }
        }
        // fma: two NaN factors, else c, else the factor.
        for (a, b, c, want) in [
            (A, B, C, B),
            (A, one, C, C | Q),
            (one, B, C, C | Q),
            (C, one, A, A),
            (P2, one, P1, P1),
            (P1, P2, S1, P2),
            (zero, inf, A, A),
        ] {
            assert_eq!(
                fma(F64, a, b, c, rn, false),
                want,
                "fma {a:#x} {b:#x} {c:#x}"
            );
        }
        // One NaN operand; sub/neg/abs leave its sign; div takes the first NaN.
        let eval = |op: FloatOp, args: &[u64]| op.eval(args);
        let bin = |op| FloatOp::Binary {
            op,
            fmt: F64,
            rnd: rn,
            ftz: false,
            sat: false,
        };
        assert_eq!(eval(bin(FloatBinOp::Sub), &[one, N1]), N1);
        assert_eq!(eval(bin(FloatBinOp::Sub), &[zero, A]), A);
        assert_eq!(neg(F64, S1, false), S1 | Q);
        assert_eq!(abs(F64, N1, false), N1);
        assert_eq!(add(F64, C, one, rn, false), C | Q);
        assert_eq!(minmax(F64, N1, one, true, false), one);
        assert_eq!(div(F64, P1, P2, rn, false), P1);
        assert_eq!(div(F64, P2, P1, rn, false), P2);
        assert_eq!(div(F64, one, B, rn, false), B);
        assert_eq!(sqrt(F64, N2, rn, false), N2);
        assert_eq!(round_int(F64, S1, Round::Rz, false), S1 | Q);
        // Invalid operations.
        let ninf = f64::NEG_INFINITY.to_bits();
        assert_eq!(add(F64, inf, ninf, Round::Rm, false), INV);
        assert_eq!(mul(F64, inf, zero, Round::Rz, false), INV);
        assert_eq!(fma(F64, zero, inf, one, rn, false), INV);
        assert_eq!(sqrt(F64, (-1f64).to_bits(), Round::Rz, false), INV);
        assert_eq!(div(F64, zero, zero, rn, false), INV);
        assert_eq!(div(F64, inf, inf, rn, false), INV);
        // Conversions.
        assert_eq!(convert(F64, F32, A, rn, false), 0x7fc0_0000);
        assert_eq!(convert(F64, F32, B, Round::Rz, false), 0xffc0_0000);
        assert_eq!(convert(F64, F32, C, rn, false), 0x7fc0_0000);
        assert_eq!(
            convert(F32, F64, 0x7fc0_0123, rn, false),
            0x7ff8_0024_6000_0000
        );
        assert_eq!(
            convert(F32, F64, 0x7f80_0789, rn, false),
            0x7ff8_00f1_2000_0000
        );
        assert_eq!(convert(F16, F64, 0xfe05, rn, false), 0xfff8_1400_0000_0000);
        assert_eq!(convert(F32, F16, 0xffc0_0456, rn, false), 0x7fff);
        assert_eq!(convert(F16, F32, 0xfe05, rn, false), 0x7fff_ffff);
        assert_eq!(convert(F64, F16, B, rn, false), 0x7fff); // the H200: 0xfe00 (essay)
                                                             // Float to integer.
        let ti = |fmt, x, to, signed| to_int(fmt, x, to, signed, Round::Rz, false);
        assert_eq!(ti(F64, A, Type::I32, true), 0x8000_0000);
        assert_eq!(ti(F64, B, Type::I32, false), 0x8000_0000);
        assert_eq!(ti(F64, B, Type::I16, true), 0x8000);
        assert_eq!(ti(F64, P1, Type::I8, true), 0x80);
        assert_eq!(ti(F64, B, Type::I16, false), 0xffff); // the H200: 0x8000 (essay)
        assert_eq!(ti(F64, A, Type::I64, true), 1 << 63);
        assert_eq!(ti(F64, B, Type::I64, false), 1 << 63);
        assert_eq!(ti(F32, 0x7fc0_0123, Type::I64, true), 1 << 63);
        assert_eq!(ti(F32, 0xffc0_0456, Type::I64, false), 1 << 63);
        assert_eq!(ti(F16, 0x7e01, Type::I64, false), 1 << 63);
        assert_eq!(ti(F32, 0x7fc0_0123, Type::I32, true), 0);
        assert_eq!(ti(F32, 0xffc0_0456, Type::I32, false), 0);
        assert_eq!(ti(F32, 0x7fc0_0123, Type::I16, true), 0);
        // f32 stays canonical.
        assert_eq!(add(F32, 0x7fc0_0123, 0xffc0_0456, rn, false), 0x7fff_ffff);
        assert_eq!(neg(F32, 0xffc0_0456, false), 0x7fff_ffff);
        assert_eq!(add(F32, 0x7f80_0000, 0xff80_0000, rn, false), 0x7fff_ffff);
    }

    #[test]
    fn ftz_nan_sat_and_conversions() {
        let sub = 1u64; // smallest f32 subnormal
        assert_eq!(add(FloatFmt::F32, sub, 0, Round::Rn, true), 0);
        assert_eq!(add(FloatFmt::F32, sub, 0, Round::Rn, false), 1);
        assert_eq!(neg(FloatFmt::F32, sub, true), 0x8000_0000);
        let inf = 0x7f80_0000;
        assert_eq!(
            add(FloatFmt::F32, inf, inf | 0x8000_0000, Round::Rn, false),
            0x7fff_ffff
        );
        assert_eq!(
            saturate(FloatFmt::F32, u64::from(2.5f32.to_bits())),
            0x3f80_0000
        );
        assert_eq!(saturate(FloatFmt::F32, 0x8000_0000), 0);
        let x = u64::from((-2.5f32).to_bits());
        let ti = |r| to_int(FloatFmt::F32, x, Type::I32, true, r, false) as u32 as i32;
        assert_eq!(
            (ti(Round::Rn), ti(Round::Rz), ti(Round::Rm), ti(Round::Rp)),
            (-2, -2, -3, -2)
        );
        assert_eq!(
            to_int(
                FloatFmt::F32,
                0x7fc0_0000,
                Type::I32,
                true,
                Round::Rz,
                false
            ),
            0
        );
        assert_eq!(
            to_int(FloatFmt::F32, inf, Type::I32, true, Round::Rz, false),
            0x7fff_ffff
        );
        assert_eq!(
            to_int(FloatFmt::F32, x, Type::I32, false, Round::Rz, false),
            0
        );
        // i64::MIN and u64::MAX convert exactly / round correctly.
        let m = from_int(FloatFmt::F64, 1 << 63, Type::I64, true, Round::Rn, false);
        assert_eq!(f64::from_bits(m), -9.223372036854776e18);
        let u = from_int(FloatFmt::F32, u64::MAX, Type::I64, false, Round::Rz, false);
        assert_eq!(f32r(u), 1.8446743e19);
        // f32 -> f16 and back.
        let h = convert(
            FloatFmt::F32,
            FloatFmt::F16,
            u64::from(1.5f32.to_bits()),
            Round::Rn,
            false,
        );
        assert_eq!(h, 0x3e00);
        let back = convert(FloatFmt::F16, FloatFmt::F32, 0x0001, Round::Rn, false);
        assert_eq!(f32r(back), 2f32.powi(-24));
        let r = round_int(
            FloatFmt::F32,
            u64::from((-0.3f32).to_bits()),
            Round::Rp,
            false,
        );
        assert_eq!(r, 0x8000_0000);
    }

    /// Random bit patterns biased toward the interesting ones (zeros, subnormals, infinities,
    /// NaNs, values near 1), from a fixed xorshift seed.
    fn samples32(n: usize) -> Vec<u32> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut out = Vec::new();
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let r = x as u32;
            out.push(match x >> 60 {
                0 => r & 0x807f_ffff,                 // subnormal or zero
                1 => (r & 0x8000_0000) | 0x7f80_0000, // infinity
                2 => r | 0x7f80_0001,                 // NaN
                3 => (r & 0x8000_ffff) | 0x3f80_0000, // near one
                _ => r,
            });
        }
        out
    }

    #[test]
    fn random_rn_equals_host_and_directed_brackets() {
        let v = samples32(3000);
        for w in v.windows(3) {
            let (a, b, c) = (
                f32::from_bits(w[0]),
                f32::from_bits(w[1]),
                f32::from_bits(w[2]),
            );
            let (ab, bb, cb) = (u64::from(w[0]), u64::from(w[1]), u64::from(w[2]));
            let same = |got: u64, want: f32| {
                got as u32 == want.to_bits() || (want.is_nan() && got == 0x7fff_ffff)
            };
            assert!(same(add(FloatFmt::F32, ab, bb, Round::Rn, false), a + b));
            assert!(same(mul(FloatFmt::F32, ab, bb, Round::Rn, false), a * b));
            assert!(same(
                fma(FloatFmt::F32, ab, bb, cb, Round::Rn, false),
                a.mul_add(b, c)
            ));
            // The product is exact in f64: directed results must bracket it.
            let exact = f64::from(a) * f64::from(b);
            if exact.is_finite() && exact.abs() <= f64::from(f32::MAX) {
                let dn = f32r(mul(FloatFmt::F32, ab, bb, Round::Rm, false));
                let up = f32r(mul(FloatFmt::F32, ab, bb, Round::Rp, false));
                let z = f32r(mul(FloatFmt::F32, ab, bb, Round::Rz, false));
                assert!(
                    f64::from(dn) <= exact && exact <= f64::from(up),
                    "{a:e}*{b:e}"
                );
                // dn and up are equal exactly when the product is representable, and
                // neighbours otherwise.
                let next_up = |x: f32| -> f32 {
                    if x == 0.0 {
                        f32::from_bits(1)
                    } else if x > 0.0 {
                        f32::from_bits(x.to_bits() + 1)
                    } else {
                        f32::from_bits(x.to_bits() - 1)
                    }
                };
                if exact == f64::from(dn) {
                    assert_eq!(dn.to_bits(), up.to_bits(), "{a:e}*{b:e}");
                } else {
                    assert_eq!(next_up(dn), up, "{a:e}*{b:e}");
                }
                assert!(f64::from(z).abs() <= exact.abs());
            }
            let (x, y, z) = (
                f64::from(a) * 1.000_000_1,
                f64::from(b) / 3.0,
                f64::from(c) * 7.0,
            );
            let fx = |r: u64| f64::from_bits(r);
            let same64 = |got: u64, want: f64| {
                got == want.to_bits() || (want.is_nan() && f64::from_bits(got).is_nan())
            };
            assert!(same64(
                add(FloatFmt::F64, x.to_bits(), y.to_bits(), Round::Rn, false),
                x + y
            ));
            assert!(same64(
                mul(FloatFmt::F64, x.to_bits(), y.to_bits(), Round::Rn, false),
                x * y
            ));
            let r = fma(
                FloatFmt::F64,
                x.to_bits(),
                y.to_bits(),
                z.to_bits(),
                Round::Rn,
                false,
            );
            assert!(
                same64(r, x.mul_add(y, z)),
                "fma {x:e} {y:e} {z:e}: {:e}",
                fx(r)
            );
            // f32 -> f64 -> f32 round trip, and f64 -> f32 rn equals the host cast.
            let wide = convert(FloatFmt::F32, FloatFmt::F64, ab, Round::Rn, false);
            assert!(same64(wide, f64::from(a)));
            // (A NaN keeps its payload's top bits: `nan_rules_as_measured`.)
            let narrow = convert(FloatFmt::F64, FloatFmt::F32, x.to_bits(), Round::Rn, false);
            assert!(same(narrow, x as f32) || (x.is_nan() && f32r(narrow).is_nan()));
        }
    }

    #[test]
    fn directed_rounding_in_the_subnormal_and_half_ranges() {
        let tiny = 1u64; // 2^-1074
        let half = 0.5f64.to_bits();
        let m = |r| mul(FloatFmt::F64, tiny, half, r, false);
        assert_eq!(
            (m(Round::Rn), m(Round::Rz), m(Round::Rm), m(Round::Rp)),
            (0, 0, 0, 1)
        );
        let neg = tiny | 1 << 63;
        let m = |r| mul(FloatFmt::F64, neg, half, r, false);
        assert_eq!(m(Round::Rm), neg);
        assert_eq!(m(Round::Rp), 1 << 63);
        // 1.5 * 2^-1074 is 1.5 units of the subnormal grid: rn ties to even (2), rz 1.
        let m = |r| mul(FloatFmt::F64, 1.5f64.to_bits(), tiny, r, false);
        assert_eq!((m(Round::Rn), m(Round::Rz), m(Round::Rp)), (2, 1, 2));
        // f32 -> f16: 1 + 2^-11 is halfway between 1 and the next f16 (ties to even: 1).
        let x = u64::from((1.0f32 + 2f32.powi(-11)).to_bits());
        let c = |r| convert(FloatFmt::F32, FloatFmt::F16, x, r, false);
        assert_eq!(
            (c(Round::Rn), c(Round::Rz), c(Round::Rp)),
            (0x3c00, 0x3c00, 0x3c01)
        );
        // 65520 rounds to f16 infinity under rn, to the largest f16 under rz.
        let big = u64::from(65520.0f32.to_bits());
        assert_eq!(
            convert(FloatFmt::F32, FloatFmt::F16, big, Round::Rn, false),
            0x7c00
        );
        assert_eq!(
            convert(FloatFmt::F32, FloatFmt::F16, big, Round::Rz, false),
            0x7bff
        );
    }
}
