//! PTX `.f16x2` instructions → IR, one lane at a time.
//!
//! In: one checked `add/sub/mul/fma/neg/abs/setp/set` whose type is `.f16x2`. Out: IR values
//! written to the destination registers, or a diagnostic naming the construct.
//!
//! An `.f16x2` register is a `.b32` (an `i32` in the IR) holding two f16 lanes: H0 in bits
//! 0..15 (PTX's "lower half") and H1 in bits 16..31. The IR has no vector type, so each
//! instruction is split: both sources are cut into halves (`trunc` for H0, `shr.u 16` then
//! `trunc` for H1), the scalar `Float` operation in `FloatFmt::F16` runs on each lane with
//! the instruction's `.rn/.ftz/.sat`, and the two results are packed back
//! (`zext | zext << 16`). This is exactly PTX's meaning (each lane computed and rounded on
//! its own), so `ir::eval` needs nothing new; selection picks `HADD2`-style instructions per
//! lane on sm_53.
//!
//! `setp.<cmp>.f16x2 p|q, a, b{, c}` writes the H0 lanes' test (combined with `c` by
//! `.and/.or/.xor`) to `p` and the H1 lanes' to `q` (PTX). `set.<cmp>.<dtype>.f16x2 d, a, b`
//! writes each lane of `d` as 1.0 (`0x3c00`, dtype `.f16x2`) or all ones (dtype `.u32`,
//! `.s32`, `.b32`: `0xffff` per lane) where the lane's test holds, else 0.

use super::float::{float_cc, half_op};
use super::FnBuilder;
use crate::ir::float::{FloatBinOp, FloatFmt, FloatOp, FloatUnOp};
use crate::ir::{BinaryOp, Type, Value};
use crate::ptx::ast::{self, Instruction, Opcode, Operand};

impl FnBuilder<'_, '_> {
    /// Translate one `.f16x2` instruction (see the module essay).
    pub(super) fn half2_instr(&mut self, ins: &Instruction) -> Option<()> {
        if !half_op(ins.opcode) {
            return self.unsupported(
                ins,
                &format!(
                    "'{}' on .f16x2 is not supported (PTX has it on sm_80 and later, if at all)",
                    ins.opcode.name()
                ),
            );
        }
        match ins.opcode {
            Opcode::Setp | Opcode::Set => self.half2_compare(ins),
            _ => self.half2_arith(ins),
        }
    }

    /// `x` (an `i32`) as its two f16 lanes `[H0, H1]`.
    fn half2_split(&mut self, x: Value) -> [Value; 2] {
        let lo = self.ins().trunc(Type::I16, x);
        let sixteen = self.ins().iconst(Type::I32, 16);
        let up = self.ins().binary(BinaryOp::ShrU, x, sixteen);
        let hi = self.ins().trunc(Type::I16, up);
        [lo, hi]
    }

    /// Two 16-bit lanes packed into an `i32` (H0 low).
    fn half2_pack(&mut self, [lo, hi]: [Value; 2]) -> Value {
        let lo = self.ins().zext(Type::I32, lo);
        let hi = self.ins().zext(Type::I32, hi);
        let sixteen = self.ins().iconst(Type::I32, 16);
        let hi = self.ins().shl(hi, sixteen);
        self.ins().binary(BinaryOp::Or, lo, hi)
    }

    fn half2_arith(&mut self, ins: &Instruction) -> Option<()> {
        let fmt = FloatFmt::F16;
        let (ftz, sat) = self.float_flags(ins, fmt)?;
        let rnd = self.arith_round(ins)?;
        let n = match ins.opcode {
            Opcode::Fma => 4,
            Opcode::Neg | Opcode::Abs => 2,
            _ => 3,
        };
        let ops = self.ops(ins, n)?;
        let mut lanes: Vec<[Value; 2]> = Vec::with_capacity(3);
        for op in &ops[1..] {
            let x = self.read(op, Type::I32, Some(ast::Type::B32))?;
            lanes.push(self.half2_split(x));
        }
        let op = match ins.opcode {
            Opcode::Fma => FloatOp::Fma { fmt, rnd, ftz, sat },
            Opcode::Neg | Opcode::Abs => {
                if sat {
                    return self.unsupported(ins, "'.sat' on neg/abs");
                }
                FloatOp::Unary {
                    op: if ins.opcode == Opcode::Neg {
                        FloatUnOp::Neg
                    } else {
                        FloatUnOp::Abs
                    },
                    fmt,
                    ftz,
                }
            }
            opc => FloatOp::Binary {
                op: match opc {
                    Opcode::Add => FloatBinOp::Add,
                    Opcode::Sub => FloatBinOp::Sub,
                    _ => FloatBinOp::Mul,
                },
                fmt,
                rnd,
                ftz,
                sat,
            },
        };
        let mut out = [lanes[0][0]; 2];
        for (k, o) in out.iter_mut().enumerate() {
            let args: Vec<Value> = lanes.iter().map(|l| l[k]).collect();
            *o = self.ins().float(op, &args);
        }
        let d = self.half2_pack(out);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// The `.and/.or/.xor` fourth operand of a half-precision `setp`: each comparison result
    /// in `t` combined with that predicate (nothing to do without one).
    pub(super) fn combine_with_pred(
        &mut self,
        ins: &Instruction,
        ops: &[Operand],
        t: &mut [Value],
    ) -> Option<()> {
        if let Some((op, c)) = self.pred_combiner(ins, ops)? {
            for r in t.iter_mut() {
                *r = self.ins().binary(op, *r, c);
            }
        }
        Some(())
    }

    /// A comparison's fourth operand `c` (`setp.CC.{and,or,xor}`), read, with the operation
    /// that combines the comparison with it; `None` when there is none. Shared by the
    /// integer, float, half and bf16 comparisons.
    pub(super) fn pred_combiner(
        &mut self,
        ins: &Instruction,
        ops: &[Operand],
    ) -> Option<Option<(BinaryOp, Value)>> {
        let Some(c) = ops.get(3) else {
            return Some(None);
        };
        let c = self.read(c, Type::Pred, None)?;
        let op = if ins.has_flag("and") {
            BinaryOp::And
        } else if ins.has_flag("or") {
            BinaryOp::Or
        } else if ins.has_flag("xor") {
            BinaryOp::Xor
        } else {
            self.unsupported(ins, "a fourth operand needs .and, .or or .xor")?;
            return None;
        };
        Some(Some((op, c)))
    }

    fn half2_compare(&mut self, ins: &Instruction) -> Option<()> {
        let fmt = FloatFmt::F16;
        let (ftz, _) = self.float_flags(ins, fmt)?;
        let Some(cc) = ins.cmp().and_then(float_cc) else {
            return self.unsupported(ins, "no float comparison");
        };
        // set: 1.0 or all ones per lane, by the destination type.
        let set_true: Option<i64> = if ins.opcode == Opcode::Set {
            match ins.type_mods().next() {
                Some(ast::Type::F16x2) => Some(0x3c00),
                Some(ast::Type::U32 | ast::Type::S32 | ast::Type::B32) => Some(0xffff),
                _ => {
                    return self.unsupported(ins, "set on .f16x2 writes .f16x2, .u32, .s32 or .b32")
                }
            }
        } else {
            None
        };
        let ops = &ins.operands;
        if ops.len() != 3 && ops.len() != 4 {
            return self.unsupported(ins, "expected 3 or 4 operands");
        }
        let a = self.read(&ops[1], Type::I32, Some(ast::Type::B32))?;
        let b = self.read(&ops[2], Type::I32, Some(ast::Type::B32))?;
        let (a, b) = (self.half2_split(a), self.half2_split(b));
        let mut t = [a[0]; 2];
        for k in 0..2 {
            t[k] = self
                .ins()
                .float(FloatOp::Cmp { cc, fmt, ftz }, &[a[k], b[k]]);
        }
        self.combine_with_pred(ins, ops, &mut t)?;
        match (&ops[0], set_true) {
            (Operand::PredPair(p, q), None) => {
                let pv = self.reg_var(p)?;
                let qv = self.reg_var(q)?;
                self.write(Some(pv), t[0], false, p.span)?;
                self.write(Some(qv), t[1], false, q.span)
            }
            (d, Some(one)) if !matches!(d, Operand::PredPair(..)) => {
                let dst = self.dest1(d)?;
                let one = self.iconst(Type::I16, one);
                let zero = self.iconst(Type::I16, 0);
                let lo = self.ins().select(t[0], one, zero);
                let hi = self.ins().select(t[1], one, zero);
                let r = self.half2_pack([lo, hi]);
                self.write(dst, r, false, d.span())
            }
            _ => self.unsupported(ins, "setp on .f16x2 writes a predicate pair p|q"),
        }
    }
}
