//! Integer, predicate and data-movement instructions: `add`/`sub` (with carries and
//! saturation), `mul`/`mad`/`mul24`, shifts, bitwise logic, `min`/`max`, `setp`, `selp`/`slct`,
//! `mov` and `cvt` (with integer saturation).
//!
//! In: one checked AST instruction. Out: IR instructions in the current block and the
//! destination registers written; an unsupported form is a diagnostic.

use super::*;

impl<'m, 'f> FnBuilder<'m, 'f> {
    // -- ALU --

    pub(super) fn add_sub(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        if ins.has_flag("sat") {
            return self.add_sub_sat(ins);
        }
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let add = ins.opcode == Opcode::Add;
        let d = if add {
            self.ins().add(a, b)
        } else {
            self.ins().sub(a, b)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())?;
        if ins.has_flag("cc") {
            // The machine carry: out of the addition (d < a unsigned); of a + ~b + 1 for the
            // subtraction, which is "no borrow" (a >= b).
            let c = if add {
                self.ins().icmp(IntCC::Ult, d, a)
            } else {
                self.ins().icmp(IntCC::Uge, a, b)
            };
            self.write(Some(self.carry), c, false, ins.span)?;
        }
        Some(())
    }

    /// `add.sat.s32` / `sub.sat.s32`: the signed result clamped to the `.s32` range (the only
    /// type PTX gives `.sat` on integers here).
    pub(super) fn add_sub_sat(&mut self, ins: &Instruction) -> Option<()> {
        if ins.ty() != Some(ast::Type::S32) || ins.has_flag("cc") {
            return self.unsupported(ins, "integer .sat is add.sat.s32 or sub.sat.s32");
        }
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], Type::I32, it)?;
        let b = self.read(&ops[2], Type::I32, it)?;
        let op = if ins.opcode == Opcode::Add {
            BinaryOp::AddSatS
        } else {
            BinaryOp::SubSatS
        };
        let d = self.ins().binary(op, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, true, ops[0].span())
    }

    pub(super) fn addc_subc(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let cin = self.use_var(self.carry);
        let one = self.iconst(ty, 1);
        let zero = self.iconst(ty, 0);
        let c = self.ins().select(cin, one, zero);
        // The carry register is the machine's carry flag, as ptxas reads it (the oracle test
        // pins this): subtraction is a + ~b + 1, so `sub.cc` leaves CF = "no borrow" and
        // `subc` computes a + ~b + CF. Then both are one rule: t = a + b' carries when
        // t < a; d = t + c carries when d < t.
        let b = if ins.opcode == Opcode::Subc {
            self.ins().unary(UnaryOp::Not, b)
        } else {
            b
        };
        let t = self.ins().add(a, b);
        let d = self.ins().add(t, c);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())?;
        if ins.has_flag("cc") {
            let c1 = self.ins().icmp(IntCC::Ult, t, a);
            let c2 = self.ins().icmp(IntCC::Ult, d, t);
            let cout = self.ins().binary(BinaryOp::Or, c1, c2);
            self.write(Some(self.carry), cout, false, ins.span)?;
        }
        Some(())
    }

    pub(super) fn mode(ins: &Instruction) -> Option<&'static str> {
        ["lo", "hi", "wide"].into_iter().find(|m| ins.has_flag(m))
    }

    /// The low (`"lo"`) or high (`"hi"`) half of the product `a * b`, as `mul` and the
    /// carrying `mad`s take it.
    pub(super) fn product_half(&mut self, half: &str, signed: bool, a: Value, b: Value) -> Value {
        if half == "lo" {
            return self.ins().mul(a, b);
        }
        let op = if signed {
            BinaryOp::MulHiS
        } else {
            BinaryOp::MulHiU
        };
        self.ins().binary(op, a, b)
    }

    pub(super) fn mul(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["sat"])?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let d = match Self::mode(ins) {
            Some(half @ ("lo" | "hi")) => self.product_half(half, signed, a, b),
            Some(_) if matches!(ty, Type::I16 | Type::I32) => self.ins().mul_wide(signed, a, b),
            _ => return self.unsupported(ins, "integer mul needs .lo, .hi or .wide (16/32-bit)"),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `mad.lo.cc`, `mad.hi.cc` and `madc{.cc}` (`.lo`/`.hi`, 32 and 64 bits): the product's
    /// half `p`, then `d = p + c (+ CF for madc)`, with the carry out of that addition, which
    /// is the carry ptxas's `XMAD`/`IMAD` chains leave (PTX: "the carry-out of the add").
    pub(super) fn mad_cc(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["sat"])?;
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let c = self.read(&ops[3], ty, it)?;
        let p = match Self::mode(ins) {
            Some(half @ ("lo" | "hi")) => self.product_half(half, signed, a, b),
            _ => return self.unsupported(ins, "mad with a carry needs .lo or .hi"),
        };
        let t = self.ins().add(p, c);
        let (d, c1) = if ins.opcode == Opcode::Madc {
            let cin = self.use_var(self.carry);
            let one = self.iconst(ty, 1);
            let zero = self.iconst(ty, 0);
            let k = self.ins().select(cin, one, zero);
            let d = self.ins().add(t, k);
            (d, Some(self.ins().icmp(IntCC::Ult, d, t)))
        } else {
            (t, None)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())?;
        if ins.has_flag("cc") {
            let c0 = self.ins().icmp(IntCC::Ult, t, p);
            let cout = match c1 {
                Some(c1) => self.ins().binary(BinaryOp::Or, c0, c1),
                None => c0,
            };
            self.write(Some(self.carry), cout, false, ins.span)?;
        }
        Some(())
    }

    pub(super) fn mad(&mut self, ins: &Instruction) -> Option<()> {
        if ins.has_flag("cc") {
            return self.mad_cc(ins);
        }
        let (ty, signed) = self.int_type(ins)?;
        let sat = ins.has_flag("sat");
        if sat && (ins.ty() != Some(ast::Type::S32) || Self::mode(ins) != Some("hi")) {
            return self.unsupported(ins, "integer mad takes .sat only as mad.hi.sat.s32");
        }
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let d = match Self::mode(ins) {
            // The high word plus c, clamped to the .s32 range: IMAD.HI.SAT, as ptxas.
            Some("hi") if sat => {
                let c = self.read(&ops[3], ty, it)?;
                self.ins().bits(BitOp::MadHiSat, &[a, b, c])
            }
            Some("lo") => {
                let c = self.read(&ops[3], ty, it)?;
                self.ins().mad_lo(a, b, c)
            }
            Some("hi") => {
                let c = self.read(&ops[3], ty, it)?;
                self.ins().mad_hi(signed, a, b, c)
            }
            Some(_) if matches!(ty, Type::I16 | Type::I32) => {
                let wide = ty.double_width()?;
                let c = self.read(&ops[3], wide, it)?;
                self.ins().mad_wide(signed, a, b, c)
            }
            _ => return self.unsupported(ins, "integer mad needs .lo, .hi or .wide (16/32-bit)"),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    pub(super) fn shift(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let n = self.read(&ops[2], Type::I32, Some(ast::Type::U32))?;
        let op = match (ins.opcode, signed) {
            (Opcode::Shl, _) => BinaryOp::Shl,
            (_, true) => BinaryOp::ShrS,
            (_, false) => BinaryOp::ShrU,
        };
        let d = self.ins().binary(op, a, n);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    pub(super) fn pred_or_int(&mut self, ins: &Instruction) -> Option<Type> {
        if ins.ty() == Some(ast::Type::Pred) {
            return Some(Type::Pred);
        }
        self.int_type(ins).map(|(t, _)| t)
    }

    pub(super) fn bitwise(&mut self, ins: &Instruction) -> Option<()> {
        let ty = self.pred_or_int(ins)?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let op = match ins.opcode {
            Opcode::And => BinaryOp::And,
            Opcode::Or => BinaryOp::Or,
            _ => BinaryOp::Xor,
        };
        let d = self.ins().binary(op, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    pub(super) fn unary(&mut self, ins: &Instruction) -> Option<()> {
        let ty = if ins.opcode == Opcode::Not {
            self.pred_or_int(ins)?
        } else {
            self.int_type(ins)?.0
        };
        let ops = self.ops(ins, 2)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let d = match ins.opcode {
            Opcode::Not => self.ins().unary(UnaryOp::Not, a),
            Opcode::Neg => self.ins().unary(UnaryOp::Neg, a),
            Opcode::Abs => {
                // abs(a) = a < 0 ? -a : a (the most negative value stays itself, as in PTX).
                let z = self.iconst(ty, 0);
                let neg = self.ins().icmp(IntCC::Slt, a, z);
                let na = self.ins().unary(UnaryOp::Neg, a);
                self.ins().select(neg, na, a)
            }
            _ => {
                // cnot: 1 when a is zero, else 0.
                let z = self.iconst(ty, 0);
                let one = self.iconst(ty, 1);
                let is0 = self.ins().icmp(IntCC::Eq, a, z);
                self.ins().select(is0, one, z)
            }
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    pub(super) fn minmax(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["relu"])?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let op = match (ins.opcode == Opcode::Min, signed) {
            (true, true) => BinaryOp::MinS,
            (true, false) => BinaryOp::MinU,
            (false, true) => BinaryOp::MaxS,
            (false, false) => BinaryOp::MaxU,
        };
        let d = if ty == Type::I64 {
            // SM50 has no 64-bit IMNMX: a compare and a select, as ptxas does
            // (ISETP + ISETP.X, then SEL on each half).
            let cc = match (ins.opcode == Opcode::Min, signed) {
                (true, true) => IntCC::Slt,
                (true, false) => IntCC::Ult,
                (false, true) => IntCC::Sgt,
                (false, false) => IntCC::Ugt,
            };
            let p = self.ins().icmp(cc, a, b);
            self.ins().select(p, a, b)
        } else {
            self.ins().binary(op, a, b)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `mul24.lo` / `mad24.lo`: the low 32 bits of the product of the operands' low 24 bits
    /// (sign-extended from bit 23 for `.s32`), plus `c` for `mad24`.
    pub(super) fn mul24(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let hi = ins.has_flag("hi");
        // `.sat` only on `mad24.hi.s32`: the sum is clamped to the .s32 range (ptxas: the
        // XMAD product, then IADD.SAT).
        let sat = ins.has_flag("sat");
        if ty != Type::I32
            || !(ins.has_flag("lo") || hi)
            || (sat && !(hi && signed && ins.opcode == Opcode::Mad24))
        {
            return self.unsupported(
                ins,
                "only mul24/mad24 .lo and .hi on 32-bit integers, .sat only on mad24.hi.s32",
            );
        }
        let n = if ins.opcode == Opcode::Mad24 { 4 } else { 3 };
        let ops = self.ops(ins, n)?;
        let it = ins.ty();
        let mut v = [None, None];
        for (k, op) in ops[1..3].iter().enumerate() {
            let x = self.read(op, ty, it)?;
            v[k] = Some(if signed {
                let eight = self.iconst(Type::I32, 8);
                let up = self.ins().shl(x, eight);
                self.ins().binary(BinaryOp::ShrS, up, eight)
            } else {
                let mask = self.iconst(Type::I32, 0xff_ffff);
                self.ins().binary(BinaryOp::And, x, mask)
            });
        }
        let mut d = if hi {
            // .hi: bits 16..47 of the 48-bit product of the 24-bit operands.
            let w = self.ins().mul_wide(signed, v[0]?, v[1]?);
            let k = self.iconst(Type::I32, 16);
            let w = self.ins().binary(BinaryOp::ShrU, w, k);
            self.ins().trunc(Type::I32, w)
        } else {
            self.ins().mul(v[0]?, v[1]?)
        };
        if n == 4 {
            let c = self.read(&ops[3], ty, it)?;
            d = if sat {
                self.ins().binary(BinaryOp::AddSatS, d, c)
            } else {
                self.ins().add(d, c)
            };
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `setp` (predicate result) and `set` (integer or float-bits result) on integers.
    pub(super) fn setp(&mut self, ins: &Instruction) -> Option<()> {
        // `set.<cmp>.<dtype>.<stype>`: the comparison is on the source type.
        let (ty, signed) = self.int_type(ins)?;
        let set_true: Option<i64> = if ins.opcode == Opcode::Set {
            match ins.type_mods().next() {
                Some(ast::Type::F32) => Some(0x3f80_0000),
                Some(ast::Type::U32 | ast::Type::S32 | ast::Type::B32) => Some(-1),
                _ => return self.unsupported(ins, "set writes .u32, .s32 or .f32"),
            }
        } else {
            None
        };
        if ins.operands.len() != 3 && ins.operands.len() != 4 {
            return self.unsupported(ins, "expected 3 or 4 operands");
        }
        let ops = &ins.operands;
        let it = ins.ty();
        let Some(cmp) = ins.cmp() else {
            return self.unsupported(ins, "no comparison");
        };
        let cc = match (cmp, signed) {
            (CmpOp::Eq, _) => IntCC::Eq,
            (CmpOp::Ne, _) => IntCC::Ne,
            (CmpOp::Lt, true) => IntCC::Slt,
            (CmpOp::Le, true) => IntCC::Sle,
            (CmpOp::Gt, true) => IntCC::Sgt,
            (CmpOp::Ge, true) => IntCC::Sge,
            (CmpOp::Lt | CmpOp::Lo, _) => IntCC::Ult,
            (CmpOp::Le | CmpOp::Ls, _) => IntCC::Ule,
            (CmpOp::Gt | CmpOp::Hi, _) => IntCC::Ugt,
            (CmpOp::Ge | CmpOp::Hs, _) => IntCC::Uge,
            _ => return self.unsupported(ins, "floating-point comparison on integers"),
        };
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let r = self.ins().icmp(cc, a, b);
        self.write_comparison(ins, r, set_true.map(|t| (Type::I32, t)))
    }

    /// The common end of `setp` and `set` (integer and float): `r` combined with the
    /// optional fourth operand by `.and`/`.or`/`.xor`, written to `p` (and its negation,
    /// combined the same way, to `q` of `p|q`), or for `set` turned into `t` where it holds
    /// and zero elsewhere (`set_true` = the destination type and `t`: all ones or 1.0).
    pub(super) fn write_comparison(
        &mut self,
        ins: &Instruction,
        mut r: Value,
        set_true: Option<(Type, i64)>,
    ) -> Option<()> {
        let ops = &ins.operands;
        let mut nr = None;
        if let Some((op, c)) = self.pred_combiner(ins, ops)? {
            // The second destination (p|q) combines the negated comparison with c.
            if matches!(ops[0], Operand::PredPair(..)) {
                let n = self.ins().unary(UnaryOp::Not, r);
                nr = Some(self.ins().binary(op, n, c));
            }
            r = self.ins().binary(op, r, c);
        }
        match &ops[0] {
            Operand::PredPair(p, q) => {
                let pv = self.reg_var(p)?;
                let qv = self.reg_var(q)?;
                let nr = match nr {
                    Some(x) => x,
                    None => self.ins().unary(UnaryOp::Not, r),
                };
                self.write(Some(pv), r, false, p.span)?;
                self.write(Some(qv), nr, false, q.span)
            }
            d => {
                let dst = self.dest1(d)?;
                let r = match set_true {
                    // set: all ones (or 1.0) where the comparison holds, else zero.
                    Some((ty, t)) => {
                        let t = self.iconst(ty, t);
                        let z = self.iconst(ty, 0);
                        self.ins().select(r, t, z)
                    }
                    None => r,
                };
                self.write(dst, r, false, d.span())
            }
        }
    }

    /// The instruction type as the IR type of its bits (floats allowed): for moves.
    pub(super) fn bits_type(&mut self, ins: &Instruction) -> Option<(Type, bool)> {
        let Some(t) = ins.ty() else {
            self.unsupported(ins, "no instruction type");
            return None;
        };
        match ir_type(t) {
            Some(ty) => Some((ty, t.kind() == TypeKind::Signed)),
            None => {
                self.unsupported(ins, &format!(".{} values are not in the IR", t.name()));
                None
            }
        }
    }

    pub(super) fn selp(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.bits_type(ins)?;
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let c = self.read(&ops[3], Type::Pred, None)?;
        let d = self.ins().select(c, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `slct.<dtype>.s32 d, a, b, c`: `c >= 0 ? a : b`.
    pub(super) fn slct(&mut self, ins: &Instruction) -> Option<()> {
        let (dt, ct) = match ins.type_mod_list()[..] {
            [d, c] => (d, c),
            _ => return self.unsupported(ins, "unexpected types"),
        };
        if !matches!(ct, ast::Type::S32 | ast::Type::F32) {
            return self.unsupported(ins, "the selector must be .s32 or .f32");
        }
        let Some(ty) = ir_type(dt).filter(|t| t.is_int()) else {
            return self.unsupported(ins, "unsupported result type");
        };
        let ops = self.ops(ins, 4)?;
        let a = self.read(&ops[1], ty, Some(dt))?;
        let b = self.read(&ops[2], ty, Some(dt))?;
        let c = self.read(&ops[3], Type::I32, Some(ct))?;
        let z = self.iconst(Type::I32, 0);
        let p = if ct == ast::Type::F32 {
            // `c >= 0` as a float comparison: -0 selects a, NaN selects b, and with .ftz a
            // negative subnormal (flushed to -0) selects a.
            let cmp = FloatOp::Cmp {
                cc: FloatCC::Ge,
                fmt: FloatFmt::F32,
                ftz: ins.has_flag("ftz"),
            };
            self.ins().float(cmp, &[c, z])
        } else {
            self.ins().icmp(IntCC::Sge, c, z)
        };
        let d = self.ins().select(p, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    pub(super) fn mov(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.bits_type(ins)?;
        if ins.vector().is_some() {
            return self.unsupported(ins, "vector moves are not supported");
        }
        let ops = self.ops(ins, 2)?;
        let it = ins.ty();
        match (&ops[0], &ops[1]) {
            // Pack: mov.b64 d, {lo, hi}.
            (d, Operand::Vector(items, _)) => {
                let n = items.len() as u32;
                let Some(et) = int_of_bits(ty.bits() / n.max(1)).filter(|_| n > 1) else {
                    return self.unsupported(ins, "unsupported pack");
                };
                let mut acc: Option<Value> = None;
                for (k, it_op) in items.iter().enumerate() {
                    let part = self.read(it_op, et, None)?;
                    let wide = self.ins().zext(ty, part);
                    let shifted = if k == 0 {
                        wide
                    } else {
                        let sh = self.iconst(Type::I32, i64::from(et.bits()) * k as i64);
                        self.ins().shl(wide, sh)
                    };
                    acc = Some(match acc {
                        None => shifted,
                        Some(a) => self.ins().binary(BinaryOp::Or, a, shifted),
                    });
                }
                let dst = self.dest1(d)?;
                self.write(dst, acc?, false, d.span())
            }
            // Unpack: mov.b64 {lo, hi}, s.
            (Operand::Vector(items, _), s) => {
                let n = items.len() as u32;
                let Some(et) = int_of_bits(ty.bits() / n.max(1)).filter(|_| n > 1) else {
                    return self.unsupported(ins, "unsupported unpack");
                };
                let v = self.read(s, ty, it)?;
                let dsts = self.dests(&ops[0])?;
                for (k, dst) in dsts.into_iter().enumerate() {
                    if dst.is_none() {
                        continue;
                    }
                    let part = if k == 0 {
                        v
                    } else {
                        let sh = self.iconst(Type::I32, i64::from(et.bits()) * k as i64);
                        self.ins().binary(BinaryOp::ShrU, v, sh)
                    };
                    let part = self.ins().trunc(et, part);
                    self.write(dst, part, false, items[k].span())?;
                }
                Some(())
            }
            (d, s) => {
                let v = self.read(s, ty, it)?;
                let dst = self.dest1(d)?;
                self.write(dst, v, signed, d.span())
            }
        }
    }

    pub(super) fn cvt(&mut self, ins: &Instruction) -> Option<()> {
        let types = ins.type_mod_list();
        let (dt, st) = match types[..] {
            [d, s] => (d, s),
            [d] => (d, d),
            _ => return self.unsupported(ins, "unexpected types"),
        };
        let int = |t: ast::Type| {
            matches!(
                t.kind(),
                TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed
            ) && t.bits() <= 64
        };
        if !int(dt) || !int(st) {
            return self.unsupported(ins, "floating-point conversions are not in the IR yet");
        }
        self.reject_flags(ins, &["ftz", "relu", "satfinite", "pack"])?;
        let ops = self.ops(ins, 2)?;
        let (sty, dty) = (ir_type(st)?, ir_type(dt)?);
        // The source register may be wider than the source format: keep its low bits.
        let a = self.read(&ops[1], sty, Some(st))?;
        if ins.has_flag("sat") {
            // As ptxas 11.8: `.sat` is taken only where it can change the value.
            if !sat_can_clamp((st, sty), (dt, dty)) {
                return self.unsupported(
                    ins,
                    "integer cvt.sat needs a destination range that does not contain the source's",
                );
            }
            let v = self.int_saturate(a, (st, sty), (dt, dty));
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, v, dt.kind() == TypeKind::Signed, ops[0].span());
        }
        // Seed 6.5.1: widen by the source's signedness, chop to narrow, then (note 1) the
        // destination register is filled by the destination's signedness.
        let v = if dty.bits() > sty.bits() {
            if st.kind() == TypeKind::Signed {
                self.ins().sext(dty, a)
            } else {
                self.ins().zext(dty, a)
            }
        } else if dty.bits() < sty.bits() {
            self.ins().trunc(dty, a)
        } else {
            a
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, v, dt.kind() == TypeKind::Signed, ops[0].span())
    }

    /// `cvt.sat.dt.st` between integer types (PTX ISA 9.7.9.21: the source value, read by
    /// its own signedness, clamped to the destination type's range). Built as a clamp with
    /// min/max at the source's width (at least 32 bits), keeping only the bounds that can
    /// bite, then the (now in-range) value moved to the destination width: an extension by
    /// the source's signedness (a clamped value is never negative when the destination is
    /// unsigned) or a truncation. A 32-bit source is ptxas's one `I2I...SAT`
    /// ([`BitOp::SatCvt`], to at most 32 bits, then extended).
    pub(super) fn int_saturate(
        &mut self,
        a: Value,
        (st, sty): (ast::Type, Type),
        (dt, dty): (ast::Type, Type),
    ) -> Value {
        let ssigned = st.kind() == TypeKind::Signed;
        let sbits = sty.bits();
        if sbits == 32 {
            // A 32-bit source: one I2I...SAT, as ptxas (to 64 bits, `cvt.sat.u64.s32`: to
            // .U32, then extended).
            let dsigned = dt.kind() == TypeKind::Signed;
            let op = BitOp::SatCvt {
                src_signed: ssigned,
                dst_bits: dty.bits().min(32) as u8,
                dst_signed: dsigned,
            };
            let v = self.ins().bits(op, &[a]);
            return match dty.bits() {
                32 => v,
                64 if dsigned => self.ins().sext(dty, v),
                64 => self.ins().zext(dty, v),
                _ => self.ins().trunc(dty, v),
            };
        }
        let (smin, smax) = int_range(st, sty);
        let (dmin, dmax) = int_range(dt, dty);
        let wty = if sbits > 32 { Type::I64 } else { Type::I32 };
        let mut v = a;
        if sty != wty {
            v = if ssigned {
                self.ins().sext(wty, v)
            } else {
                self.ins().zext(wty, v)
            };
        }
        if dmin > smin {
            // Only a signed source goes below the destination's minimum.
            let lo = self.iconst(wty, dmin as i64);
            v = self.clamp_step(wty, v, lo, IntCC::Slt, BinaryOp::MaxS);
        }
        if dmax < smax {
            let hi = self.iconst(wty, dmax as i64);
            let (cc, op) = if ssigned {
                (IntCC::Sgt, BinaryOp::MinS)
            } else {
                (IntCC::Ugt, BinaryOp::MinU)
            };
            v = self.clamp_step(wty, v, hi, cc, op);
        }
        if dty.bits() > wty.bits() {
            if ssigned {
                self.ins().sext(dty, v)
            } else {
                self.ins().zext(dty, v)
            }
        } else if dty.bits() < wty.bits() {
            self.ins().trunc(dty, v)
        } else {
            v
        }
    }

    /// One bound of a clamp: `op` (a min or max) on 32 bits; on 64 bits, where selection
    /// has no min/max, `bound` if `v cc bound` else `v`.
    pub(super) fn clamp_step(
        &mut self,
        ty: Type,
        v: Value,
        bound: Value,
        cc: IntCC,
        op: BinaryOp,
    ) -> Value {
        if ty == Type::I64 {
            let out = self.ins().icmp(cc, v, bound);
            self.ins().select(out, bound, v)
        } else {
            self.ins().binary(op, v, bound)
        }
    }
}
