//! The pure meaning of IR instructions: [`pure`] evaluates every instruction whose result
//! depends only on its operands (unary, binary, wide multiplies, conversions, selects, compares,
//! bit operations), which the simplifier also uses to fold constants.
//!
//! In: an instruction and its operand values. Out: the result bits, or `None` when the
//! instruction is not pure.

use super::*;

/// The result of a *pure* instruction: one whose value depends on its operands' values and
/// nothing else (no memory, no thread, no launch): `Unary`, `Binary`, `MulWide`, `Convert`,
/// `Select`, `Icmp` and `Bits`. `ty_of` gives each operand's type and `get` its value (masked
/// to its type, as registers hold them); the result is *not* masked to the result's type
/// (the caller does, as [`Thread::step`] does when it writes the register). `None` for every
/// other instruction.
///
/// This is the one definition of these operations: the interpreter runs it, and
/// `ir::simplify` folds constants with it, so folding cannot disagree with the reference.
pub fn pure(
    data: &InstData,
    ty_of: impl Fn(Value) -> Type,
    get: impl Fn(Value) -> u64,
) -> Option<u64> {
    Some(match data {
        InstData::Unary { op, arg } => {
            let a = get(*arg);
            match op {
                UnaryOp::Not => !a,
                UnaryOp::Neg => a.wrapping_neg(),
            }
        }
        InstData::Binary { op, args } => binary(*op, ty_of(args[0]), get(args[0]), get(args[1])),
        InstData::MulWide { signed, args } => {
            let bits = ty_of(args[0]).bits();
            let (a, b) = (get(args[0]), get(args[1]));
            if *signed {
                (sx(a, bits) * sx(b, bits)) as u64
            } else {
                a * b
            }
        }
        InstData::Convert { op, arg, .. } => {
            let a = get(*arg);
            match op {
                ConvOp::Sext => sx(a, ty_of(*arg).bits()) as u64,
                ConvOp::Zext | ConvOp::Trunc => a,
            }
        }
        InstData::Select { cond, args } => get(if get(*cond) != 0 { args[0] } else { args[1] }),
        InstData::Icmp { cc, args } => {
            let bits = ty_of(args[0]).bits();
            let (a, b) = (get(args[0]), get(args[1]));
            let (x, y) = (sx(a, bits), sx(b, bits));
            u64::from(match cc {
                IntCC::Eq => a == b,
                IntCC::Ne => a != b,
                IntCC::Slt => x < y,
                IntCC::Sle => x <= y,
                IntCC::Sgt => x > y,
                IntCC::Sge => x >= y,
                IntCC::Ult => a < b,
                IntCC::Ule => a <= b,
                IntCC::Ugt => a > b,
                IntCC::Uge => a >= b,
            })
        }
        InstData::Bits { op, args } => {
            let vals: SmallVec<[u64; 4]> = args.iter().map(|&a| get(a)).collect();
            op.eval(&vals)
        }
        _ => return None,
    })
}

pub(super) fn binary(op: BinaryOp, ty: Type, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let (x, y) = (sx(a, bits), sx(b, bits));
    // Shift counts are i32 operands read as unsigned; PTX clamps counts beyond the width.
    let count = b & 0xffff_ffff;
    match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::MulHiS => ((i128::from(x) * i128::from(y)) >> bits) as u64,
        BinaryOp::MulHiU => ((u128::from(a) * u128::from(b)) >> bits) as u64,
        BinaryOp::Shl if count >= u64::from(bits) => 0,
        BinaryOp::Shl => a << count,
        BinaryOp::ShrU if count >= u64::from(bits) => 0,
        BinaryOp::ShrU => a >> count,
        BinaryOp::ShrS => (x >> count.min(u64::from(bits) - 1)) as u64,
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::MinS => {
            if x <= y {
                a
            } else {
                b
            }
        }
        BinaryOp::MinU => a.min(b),
        BinaryOp::MaxS => {
            if x >= y {
                a
            } else {
                b
            }
        }
        BinaryOp::MaxU => a.max(b),
        BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS => divide(op, a, b, x, y),
        BinaryOp::AddSatS | BinaryOp::SubSatS => {
            let (x, y) = (i128::from(x), i128::from(y));
            let exact = if op == BinaryOp::AddSatS {
                x + y
            } else {
                x - y
            };
            let max = (1i128 << (bits - 1)) - 1;
            exact.clamp(-max - 1, max) as u64
        }
    }
}

/// Integer division as the IR defines it (see the `ir` essay): by zero gives all ones; the
/// signed overflow wraps. `a`, `b` are zero-extended and `x`, `y` sign-extended operands of
/// one type; the result is masked by the caller to that type.
pub(super) fn divide(op: BinaryOp, a: u64, b: u64, x: i64, y: i64) -> u64 {
    if b == 0 {
        return u64::MAX;
    }
    match op {
        BinaryOp::DivU => a / b,
        BinaryOp::RemU => a % b,
        // `wrapping_*`: i64::MIN / -1 is the one overflow (64-bit); narrower types fit.
        BinaryOp::DivS => x.wrapping_div(y) as u64,
        _ => x.wrapping_rem(y) as u64,
    }
}
