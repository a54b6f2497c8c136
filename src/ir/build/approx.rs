//! PTX `rcp`, `sqrt`, `rsqrt`, `sin`, `cos`, `lg2`, `ex2` and float `div` → the IR's
//! `FloatOp::Approx` (f32 `.approx` forms and `div.full`), whose meaning is the special
//! function unit model of [`crate::mufu::approx`].
//!
//! In: one checked instruction of those opcodes. Out: the IR value written to the
//! destination, or a diagnostic naming what is not supported: the IEEE-rounded forms other
//! than `sqrt.rn.f32` and f32/f64 `div`/`rcp` (those are `FloatBinOp::Div`, exact IEEE division,
//! `rcp` as `1.0 / x`) and `sqrt.<rnd>{.ftz}.f32`/`.f64` (`FloatOp::Sqrt`; plain `sqrt.rn.f32`
//! is `Approx::SqrtRn`, the same value), other `.f64` forms (`rcp.approx.ftz.f64` and
//! `rsqrt.approx.ftz.f64` are `Approx::Rcp64h`/`Rsqrt64h` on i64: the unit's 64-bit-high
//! form; `rsqrt.approx.f64` without `.ftz` is the same `Rsqrt64h` on the operand, or on it
//! scaled by 2^54 with the result scaled by 2^27 when it is subnormal, selected in the IR:
//! exactly rsqrt of the operand within the unit model, since both scalings are exact; not
//! ptxas's refined sequence, and not its bits)
//! and what sm_5x cannot do at all (`tanh`, `ex2.f16`: sm_75 and later).

use super::FnBuilder;
use crate::ir::float::{FloatBinOp, FloatFmt, FloatOp, Round};
use crate::ir::{BinaryOp, IntCC, Type};
use crate::mufu::Approx;
use crate::ptx::ast::{self, Instruction, Opcode};

impl FnBuilder<'_, '_> {
    /// One of the functions above; `Opcode::Div` only with a float type.
    pub(super) fn approx_fn(&mut self, ins: &Instruction) -> Option<()> {
        let name = match ins.opcode {
            Opcode::Rcp => "rcp",
            Opcode::Sqrt => "sqrt",
            Opcode::Rsqrt => "rsqrt",
            Opcode::Sin => "sin",
            Opcode::Cos => "cos",
            Opcode::Lg2 => "lg2",
            Opcode::Ex2 => "ex2",
            _ => "div",
        };
        let ty = ins.ty();
        if matches!(
            ty,
            Some(ast::Type::F16 | ast::Type::F16x2 | ast::Type::Bf16)
        ) {
            return self.unsupported(ins, &format!("{name} on half precision requires sm_75"));
        }
        let full = ins.has_flag("full");
        let ftz = ins.has_flag("ftz");
        let ieee = !(ins.has_flag("approx") || full);
        let wide = ty == Some(ast::Type::F64);
        if ieee
            && matches!(ins.opcode, Opcode::Div | Opcode::Rcp)
            && (wide || ty == Some(ast::Type::F32))
        {
            if wide && ftz {
                return self.unsupported(ins, "'.ftz' on f64");
            }
            let fmt = if wide { FloatFmt::F64 } else { FloatFmt::F32 };
            return self.ieee_div(ins, fmt, ftz);
        }
        // IEEE sqrt: f64, and f32 other than plain `sqrt.rn.f32` (which the approx path's
        // `SqrtRn` sequence computes, as ptxas's shape).
        let f32_rounded = ty == Some(ast::Type::F32)
            && ins.rounding().is_some()
            && (ftz || ins.rounding() != Some(ast::Rounding::Rn));
        if ieee && ins.opcode == Opcode::Sqrt && (wide || f32_rounded) {
            let rnd = match ins.rounding() {
                Some(ast::Rounding::Rn) => Round::Rn,
                Some(ast::Rounding::Rz) => Round::Rz,
                Some(ast::Rounding::Rm) => Round::Rm,
                Some(ast::Rounding::Rp) => Round::Rp,
                _ => return self.unsupported(ins, "sqrt.f64 needs .rn, .rz, .rm or .rp"),
            };
            if ftz && wide {
                return self.unsupported(ins, "'.ftz' on f64");
            }
            let (fmt, ir_ty) = if wide {
                (FloatFmt::F64, Type::I64)
            } else {
                (FloatFmt::F32, Type::I32)
            };
            let ops = self.ops(ins, 2)?;
            let x = self.read(&ops[1], ir_ty, ty)?;
            let op = FloatOp::Sqrt { fmt, rnd, ftz };
            let d = self.ins().float(op, &[x]);
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, d, false, ops[0].span());
        }
        if wide
            && ftz
            && ins.has_flag("approx")
            && matches!(ins.opcode, Opcode::Rcp | Opcode::Rsqrt)
        {
            return self.approx_f64_ftz(ins);
        }
        if wide && !ftz && ins.has_flag("approx") && ins.opcode == Opcode::Rsqrt {
            return self.rsqrt_approx_f64(ins);
        }
        if ty != Some(ast::Type::F32) {
            return self.unsupported(ins, &format!("only f32 {name} is lowered"));
        }
        let sqrt_rn = ins.opcode == Opcode::Sqrt
            && ins.rounding() == Some(ast::Rounding::Rn)
            && !ftz
            && !ins.has_flag("approx");
        if sqrt_rn {
            let ops = self.ops(ins, 2)?;
            let a = self.read(&ops[1], Type::I32, ty)?;
            let func = Approx::SqrtRn;
            let d = self.ins().float(FloatOp::Approx { func, ftz: false }, &[a]);
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, d, false, ops[0].span());
        }
        if !(ins.has_flag("approx") || full) {
            return self.unsupported(
                ins,
                &format!("IEEE-rounded {name} (no '.approx') is not lowered yet"),
            );
        }
        let func = match ins.opcode {
            Opcode::Rcp => Approx::Rcp,
            Opcode::Sqrt => Approx::Sqrt,
            Opcode::Rsqrt => Approx::Rsqrt,
            Opcode::Sin => Approx::Sin,
            Opcode::Cos => Approx::Cos,
            Opcode::Lg2 => Approx::Lg2,
            Opcode::Ex2 => Approx::Ex2,
            _ if full => Approx::DivFull,
            _ => Approx::Div,
        };
        if ins.rounding().is_some() {
            return self.unsupported(ins, "a rounding modifier on an approximate function");
        }
        let ops = self.ops(ins, 1 + func.arity())?;
        let mut args = Vec::with_capacity(2);
        for op in &ops[1..] {
            args.push(self.read(op, Type::I32, ty)?);
        }
        let d = self.ins().float(FloatOp::Approx { func, ftz }, &args);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `rcp.approx.ftz.f64` / `rsqrt.approx.ftz.f64`, as ptxas 11.8 compiles them: the unit's
    /// 64-bit-high form (`MUFU.RCP64H`/`RSQ64H`) on the operand's high word gives the
    /// result's high word, over a zero low word.
    fn approx_f64_ftz(&mut self, ins: &Instruction) -> Option<()> {
        let ops = self.ops(ins, 2)?;
        let x = self.read(&ops[1], Type::I64, ins.ty())?;
        let func = if ins.opcode == Opcode::Rcp {
            Approx::Rcp64h
        } else {
            Approx::Rsqrt64h
        };
        let d = self.ins().float(FloatOp::Approx { func, ftz: true }, &[x]);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `rsqrt.approx.f64` without `.ftz`: the `.ftz` form (`MUFU.RSQ64H` on the high word)
    /// on `x`, except that an `x` with a zero exponent field (a subnormal or a zero, either
    /// sign) is scaled by 2^54 first (exact, and a scaled subnormal is normal) and the
    /// result by 2^27 (exact): rsqrt(x 2^54) 2^27 = rsqrt(x). A zero scales to itself and
    /// its result, an infinity of its sign, too, so the test need not exclude it: it reads
    /// the high word alone (`LOP32I.AND` + `ISETP`, where a test of the whole word excluding
    /// zero cost six instructions), and the scalings are guarded `DMUL`s (`lower::guard`).
    /// Built from IR operations, so `ir::eval` and the machine run the same model (ptxas
    /// instead uses a refined sequence with a slow path; this is a different approximation
    /// of the same function, not its bits).
    fn rsqrt_approx_f64(&mut self, ins: &Instruction) -> Option<()> {
        let ops = self.ops(ins, 2)?;
        let x = self.read(&ops[1], Type::I64, ins.ty())?;
        let mut b = self.ins();
        let k32 = b.iconst(Type::I32, 32);
        let high = b.binary(BinaryOp::ShrU, x, k32);
        let high = b.trunc(Type::I32, high);
        let mask = b.iconst(Type::I32, 0x7fff_ffff);
        let mag = b.binary(BinaryOp::And, high, mask);
        let lim = b.iconst(Type::I32, 0x0010_0000);
        let sub = b.icmp(IntCC::Ult, mag, lim);
        let mul = FloatOp::Binary {
            op: FloatBinOp::Mul,
            fmt: FloatFmt::F64,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let k54 = b.iconst(Type::I64, 2f64.powi(54).to_bits() as i64);
        let scaled = b.float(mul, &[x, k54]);
        let y = b.select(sub, scaled, x);
        let func = Approx::Rsqrt64h;
        let r = b.float(FloatOp::Approx { func, ftz: true }, &[y]);
        let k27 = b.iconst(Type::I64, 2f64.powi(27).to_bits() as i64);
        let rs = b.float(mul, &[r, k27]);
        let d = b.select(sub, rs, r);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `div.{rn,rz,rm,rp}{.ftz}.f32` and `.f64` → `fdiv`, and `rcp` of those forms → `fdiv 1.0, x`.
    fn ieee_div(&mut self, ins: &Instruction, fmt: FloatFmt, ftz: bool) -> Option<()> {
        let rnd = match ins.rounding() {
            Some(ast::Rounding::Rn) => Round::Rn,
            Some(ast::Rounding::Rz) => Round::Rz,
            Some(ast::Rounding::Rm) => Round::Rm,
            Some(ast::Rounding::Rp) => Round::Rp,
            _ => {
                return self.unsupported(
                    ins,
                    "IEEE div/rcp needs a rounding modifier (.rn, .rz, .rm or .rp)",
                )
            }
        };
        let ty = ins.ty();
        let (it, one) = match fmt {
            FloatFmt::F64 => (Type::I64, 1f64.to_bits() as i64),
            _ => (Type::I32, i64::from(1f32.to_bits())),
        };
        let (ops, args) = if ins.opcode == Opcode::Rcp {
            let ops = self.ops(ins, 2)?;
            let x = self.read(&ops[1], it, ty)?;
            let one = self.ins().iconst(it, one);
            (ops, [one, x])
        } else {
            let ops = self.ops(ins, 3)?;
            let a = self.read(&ops[1], it, ty)?;
            let b = self.read(&ops[2], it, ty)?;
            (ops, [a, b])
        };
        let op = FloatOp::Binary {
            op: FloatBinOp::Div,
            fmt,
            rnd,
            ftz,
            sat: false,
        };
        let d = self.ins().float(op, &args);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }
}
