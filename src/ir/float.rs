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
//! * A NaN result is the canonical NaN of its format ([`canonical_nan`]): `0x7fffffff` for
//!   f32 (as SM50 produces), `0x7fff` for f16 and `0x7fffffffffffffff` for f64 (not checked
//!   against hardware). Input payloads are never propagated; `neg`/`abs` of a NaN also give
//!   the canonical NaN, because they are lowered to FADD/DADD with negated/absolute operands.
//! * `.ftz` flushes subnormal inputs and subnormal (rounded) results to zero of the same sign.
//! * `.sat` clamps the result to `[+0.0, 1.0]`; NaN and `-0.0` become `+0.0`.
//! * `min`/`max`: a NaN operand is ignored (two NaNs give the canonical NaN); `-0.0 < +0.0`.
//! * `x + (-x)` is `+0.0` except under `rm`, where it is `-0.0`.
//! * float → integer conversions saturate (PTX): NaN gives 0, out-of-range values clamp to
//!   the integer type's range.

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
                    FloatBinOp::Sub => add(fmt, arg(0), arg(1) ^ fmt.sign_bit(), rnd, ftz),
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

fn zero(fmt: FloatFmt, sign: bool) -> u64 {
    if sign {
        fmt.sign_bit()
    } else {
        0
    }
}

fn inf(fmt: FloatFmt, sign: bool) -> u64 {
    let fb = fmt.prec() as u32 - 1;
    zero(fmt, sign) | (((1u64 << fmt.exp_bits()) - 1) << fb)
}

fn overflow(fmt: FloatFmt, sign: bool, rnd: Round) -> u64 {
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
    let (q, rem_nonzero, half) = if shift <= 0 {
        // Exact: fewer significant bits than the format holds.
        (mag << (-shift) as u32, false, std::cmp::Ordering::Less)
    } else if shift >= 128 {
        let half = if shift == 128 {
            mag.cmp(&(1u128 << 127))
        } else {
            std::cmp::Ordering::Less
        };
        (0, true, half)
    } else {
        let rem = mag & ((1u128 << shift) - 1);
        (mag >> shift, rem != 0, rem.cmp(&(1u128 << (shift - 1))))
    };
    let inc = match rnd {
        Round::Rn => {
            half == std::cmp::Ordering::Greater || (half == std::cmp::Ordering::Equal && q & 1 == 1)
        }
        Round::Rz => false,
        Round::Rp => !sign && rem_nonzero,
        Round::Rm => sign && rem_nonzero,
    };
    let mut q = q + u128::from(inc);
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
fn shr_sticky(x: u128, k: i32) -> u128 {
    if k <= 0 {
        x
    } else if k >= 128 {
        u128::from(x != 0)
    } else {
        (x >> k) | u128::from(x & ((1u128 << k) - 1) != 0)
    }
}

/// Round the exact sum of two finite nonzero values (significands of up to 106 bits).
fn sum(fmt: FloatFmt, a: (bool, u128, i32), b: (bool, u128, i32), rnd: Round, ftz: bool) -> u64 {
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
fn repack(fmt: FloatFmt, c: Class, rnd: Round, ftz: bool) -> u64 {
    match c {
        Class::Nan => canonical_nan(fmt),
        Class::Inf(s) => inf(fmt, s),
        Class::Zero(s) => zero(fmt, s),
        Class::Fin(s, m, e) => round_to(fmt, s, u128::from(m), e, rnd, ftz),
    }
}

/// IEEE addition.
pub fn add(fmt: FloatFmt, a: u64, b: u64, rnd: Round, ftz: bool) -> u64 {
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => canonical_nan(fmt),
        (Class::Inf(s), Class::Inf(t)) if s != t => canonical_nan(fmt),
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
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    let sign = sign_of(ca) != sign_of(cb);
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => canonical_nan(fmt),
        (Class::Inf(_), Class::Zero(_)) | (Class::Zero(_), Class::Inf(_)) => canonical_nan(fmt),
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
pub fn div(fmt: FloatFmt, a: u64, b: u64, rnd: Round, ftz: bool) -> u64 {
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    let sign = sign_of(ca) != sign_of(cb);
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => canonical_nan(fmt),
        (Class::Inf(_), Class::Inf(_)) | (Class::Zero(_), Class::Zero(_)) => canonical_nan(fmt),
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
        Class::Nan | Class::Inf(true) | Class::Fin(true, _, _) => canonical_nan(fmt),
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
fn isqrt(n: u128) -> u128 {
    let (mut r, mut bit) = (0u128, 1u128 << 62);
    while bit != 0 {
        if (r | bit) * (r | bit) <= n {
            r |= bit;
        }
        bit >>= 1;
    }
    r
}

fn sign_of(c: Class) -> bool {
    match c {
        Class::Nan => false,
        Class::Inf(s) | Class::Zero(s) | Class::Fin(s, _, _) => s,
    }
}

/// IEEE fused multiply-add `a * b + c`, one rounding.
pub fn fma(fmt: FloatFmt, a: u64, b: u64, c: u64, rnd: Round, ftz: bool) -> u64 {
    let (ca, cb, cc) = (
        unpack(fmt, a, ftz),
        unpack(fmt, b, ftz),
        unpack(fmt, c, ftz),
    );
    if matches!(ca, Class::Nan) || matches!(cb, Class::Nan) || matches!(cc, Class::Nan) {
        return canonical_nan(fmt);
    }
    let sp = sign_of(ca) != sign_of(cb);
    // The product's class: infinite, zero or finite.
    let prod_inf = matches!(ca, Class::Inf(_)) || matches!(cb, Class::Inf(_));
    let prod_zero = matches!(ca, Class::Zero(_)) || matches!(cb, Class::Zero(_));
    if prod_inf && prod_zero {
        return canonical_nan(fmt);
    }
    if prod_inf {
        return match cc {
            Class::Inf(t) if t != sp => canonical_nan(fmt),
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

/// `min` (`max` when `max`): NaN operands are ignored, `-0 < +0`.
pub fn minmax(fmt: FloatFmt, a: u64, b: u64, max: bool, ftz: bool) -> u64 {
    let (ca, cb) = (unpack(fmt, a, ftz), unpack(fmt, b, ftz));
    let (ra, rb) = (
        repack(fmt, ca, Round::Rn, ftz),
        repack(fmt, cb, Round::Rn, ftz),
    );
    match (ca, cb) {
        (Class::Nan, Class::Nan) => canonical_nan(fmt),
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
fn to_f64(c: Class) -> f64 {
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

/// `neg` (sign flipped; NaN canonical; with `ftz`, a subnormal becomes zero first).
pub fn neg(fmt: FloatFmt, a: u64, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Nan => canonical_nan(fmt),
        c => repack(fmt, c, Round::Rn, ftz) ^ fmt.sign_bit(),
    }
}

/// `abs` (sign cleared; NaN canonical; with `ftz`, a subnormal becomes +0).
pub fn abs(fmt: FloatFmt, a: u64, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Nan => canonical_nan(fmt),
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

fn saturate_if(fmt: FloatFmt, r: u64, sat: bool) -> u64 {
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
fn int_magnitude(sign: bool, m: u64, e: i32, rnd: Round) -> Option<u128> {
    if e >= 0 {
        if e + (64 - m.leading_zeros() as i32) > 100 {
            return None;
        }
        return Some(u128::from(m) << e);
    }
    let k = -e;
    let m = u128::from(m);
    let (q, rem_nonzero, half) = if k >= 100 {
        (0, true, std::cmp::Ordering::Less)
    } else {
        let rem = m & ((1u128 << k) - 1);
        (m >> k, rem != 0, rem.cmp(&(1u128 << (k - 1))))
    };
    let inc = match rnd {
        Round::Rn => {
            half == std::cmp::Ordering::Greater || (half == std::cmp::Ordering::Equal && q & 1 == 1)
        }
        Round::Rz => false,
        Round::Rp => !sign && rem_nonzero,
        Round::Rm => sign && rem_nonzero,
    };
    Some(q + u128::from(inc))
}

/// Float to integer `to`, saturating (NaN gives 0).
pub fn to_int(fmt: FloatFmt, a: u64, to: Type, signed: bool, rnd: Round, ftz: bool) -> u64 {
    let bits = to.bits();
    let (smax, smin) = ((1u128 << (bits - 1)) - 1, 1u128 << (bits - 1));
    let umax = to.mask();
    let (sign, mag) = match unpack(fmt, a, ftz) {
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

/// Float to float of another format.
pub fn convert(from: FloatFmt, to: FloatFmt, a: u64, rnd: Round, ftz: bool) -> u64 {
    // `.ftz` applies to f32 operands and results (PTX); f16 and f64 keep their subnormals.
    let c = unpack(from, a, ftz && from == FloatFmt::F32);
    repack(to, c, rnd, ftz && to == FloatFmt::F32)
}

/// Round to an integral value in the same format; the sign of a zero result is kept.
pub fn round_int(fmt: FloatFmt, a: u64, rnd: Round, ftz: bool) -> u64 {
    match unpack(fmt, a, ftz) {
        Class::Fin(s, m, e) if e < 0 => match int_magnitude(s, m, e, rnd) {
            Some(q) => round_to(fmt, s, q, 0, Round::Rn, ftz),
            None => canonical_nan(fmt),
        },
        c => repack(fmt, c, Round::Rn, ftz),
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
                got == want.to_bits() || (want.is_nan() && got == canonical_nan(FloatFmt::F64)),
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
                got == want.to_bits() || (want.is_nan() && got == canonical_nan(FloatFmt::F64))
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
            assert!(same(
                convert(FloatFmt::F64, FloatFmt::F32, x.to_bits(), Round::Rn, false),
                x as f32
            ));
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
