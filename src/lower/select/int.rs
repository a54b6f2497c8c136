//! Selection of integer arithmetic: binary operations, predicate logic, add chains and carry
//! chains (`IADD.X`, `LEA.HI.X`), 32-bit multiplies as `XMAD` sequences, shifts (64-bit
//! variable and constant), register-pair operations and wide multiplies. Two fused shapes
//! follow ptxas: an add of a product read once is the XMAD sequence with the addend
//! ([`Lowerer::lower_mad32`]), an add of a logical right shift by a constant read once is one
//! `LEA.HI` ([`Lowerer::lower_add_shr32`]).
//!
//! In: one IR integer instruction. Out: SASS instructions in the current block; the value's
//! [`Loc`] is set.

use super::*;
use crate::ir::float::FloatFmt;

impl<'a> Lowerer<'a> {
    /// `v` as one SASS instruction `inst` writing a new 32-bit register (`Rd`) and reading
    /// each `(field, source)` in order.
    pub(super) fn one_inst32(&mut self, v: Value, inst: sm50::Inst, srcs: &[(Field, Loc)]) {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let mut refs = vec![(Field::Rd, dop, 0)];
        for &(field, l) in srcs {
            let op = i.use_(l.vreg);
            refs.push((field, op, l.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
    }

    pub(super) fn lower_binary(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let kind = kind_of(ty);
        if kind == RegKind::Pred {
            return self.lower_pred_logic(v, op, args);
        }
        // Two f16 lanes packed: one H* instruction or one XMAD (`select/half.rs`).
        if op == BinaryOp::Or {
            if let Some(r) = self.lower_half2_pack(v) {
                return r;
            }
        }
        let wide = kind == RegKind::B64;
        match op {
            BinaryOp::Add | BinaryOp::Sub => {
                if let Some(&k) = self.carry_of.get(&v) {
                    return self.lower_carry_chain(k);
                }
                if self.add_as_chain(v)? {
                    return Ok(());
                }
                if op == BinaryOp::Add && self.lower_mad32(v, args)? {
                    return Ok(());
                }
                if op == BinaryOp::Add && self.lower_add_shr32(v, args)? {
                    return Ok(());
                }
                self.lower_add(v, op == BinaryOp::Sub, args, wide)
            }
            BinaryOp::Mul => {
                let k = [args[1], args[0]]
                    .into_iter()
                    .find_map(|x| match self.class(x) {
                        Class::Imm(k) if k > 0 && (k as u64).is_power_of_two() => Some((x, k)),
                        _ => None,
                    });
                if let Some((c, k)) = k {
                    let x = if c == args[1] { args[0] } else { args[1] };
                    return self.shift_const(v, x, BinaryOp::Shl, k.trailing_zeros() as i64);
                }
                if ty != Type::I32 {
                    return self.lower_mul_general(v, args);
                }
                self.lower_mul32(v, args)
            }
            BinaryOp::MulHiS | BinaryOp::MulHiU => self.lower_mulhi(v, op, args),
            BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS => {
                if let Class::Imm(k) = self.class(args[1]) {
                    return self.shift_const(v, args[0], op, k & 0xffff_ffff);
                }
                if wide {
                    return self.shift64_var(v, op, args);
                }
                let a = match op {
                    BinaryOp::Shl => self.reg(args[0])?,
                    _ => match self.norm32(args[0], op == BinaryOp::ShrS)? {
                        Src::Reg(l) => l,
                        _ => self.reg(args[0])?,
                    },
                };
                let n = self.reg(args[1])?;
                let form = if op == BinaryOp::Shl {
                    Form::SHL_R
                } else {
                    Form::SHR_R
                };
                let mut inst = sm50::Inst::new(form);
                if op == BinaryOp::ShrS {
                    inst.set(Field::Sgn, 1);
                }
                self.one_inst32(v, inst, &[(Field::Ra, a), (Field::Rb, n)]);
                Ok(())
            }
            BinaryOp::Or if wide && self.lower_pair(v, args)? => Ok(()),
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => self.lower_logic(v, op, args, wide),
            BinaryOp::MinS | BinaryOp::MinU | BinaryOp::MaxS | BinaryOp::MaxU => {
                if wide {
                    return Err(self.unsupported("64-bit min/max"));
                }
                let signed = matches!(op, BinaryOp::MinS | BinaryOp::MaxS);
                let a = match self.norm32(args[0], signed)? {
                    Src::Reg(l) => l,
                    _ => self.reg(args[0])?,
                };
                let b = self.norm32_b(args[1], signed)?;
                let d = self.new_vreg(RegKind::B32);
                let mut i = Sm50Inst::new(Role::Plain);
                let dop = i.def(d, false);
                let aop = i.use_(a.vreg);
                let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)];
                let forms = (Form::IMNMX_R, Form::IMNMX_C, Form::IMNMX_I);
                let mut inst = Self::with_b(&mut i, forms, b, 0, &mut refs);
                // The predicate picks the minimum when true: PT = min, !PT = max.
                inst.set(Field::Sgn, signed as u64);
                inst.set(
                    Field::Paccn,
                    matches!(op, BinaryOp::MaxS | BinaryOp::MaxU) as u64,
                );
                i.piece(inst, &refs);
                self.push(i);
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                Ok(())
            }
            BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS => {
                self.lower_divide(v, op, args)
            }
            BinaryOp::AddSatS | BinaryOp::SubSatS => {
                // IADD.SAT d, a, b / IADD.SAT d, a, -b (ptxas 11.8's `add/sub.sat.s32`).
                if wide {
                    return Err(self.unsupported("64-bit add.sat"));
                }
                let a = self.reg(args[0])?;
                let b = self.reg(args[1])?;
                let inst = sm50::Inst::new(Form::IADD_R)
                    .with(Field::Sat, 1)
                    .with(Field::Negb, (op == BinaryOp::SubSatS) as u64);
                self.one_inst32(v, inst, &[(Field::Ra, a), (Field::Rb, b)]);
                Ok(())
            }
        }
    }

    pub(super) fn lower_pred_logic(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        if !op.is_bitwise() {
            return Err(self.unsupported(format!("{} on predicates", op.name())));
        }
        // A compare read by nothing else takes the other predicate as its accumulator:
        // `ISETP.<cc>.<op> p, PT, x, y, q` (and FSETP/DSETP), as ptxas, one instruction where
        // the compare and a PSETP were two (NVVM's `setp ; setp ; and.pred` of a bounds test
        // `x < w && y < h`, and libdevice's infinity tests `lo == 0 && hi == 0x7ff00000`). The
        // compare is lowered here rather than where it stood: its operands live up to the
        // `and` (they are SSA values, so they hold there too) and its own predicate not at
        // all. Where the compare's selection takes a form without an accumulator (a bit
        // test, the shared-window test, 64-bit operands), the PSETP follows it as before.
        if let Some(k) = [1, 0].into_iter().find(|&k| self.accumulable_cmp(args[k])) {
            let acc = self.reg(args[1 - k])?;
            self.pending_acc = Some((lop_code(op), acc));
            match self.def_of(args[k]) {
                Some(&InstData::Icmp { cc, args }) => self.lower_icmp(v, cc, args)?,
                Some(InstData::Float {
                    op: FloatOp::Cmp { cc, fmt, ftz },
                    args,
                }) => self.lower_fcmp(v, *cc, *fmt, *ftz, args)?,
                _ => unreachable!("accumulable_cmp checked the definition"),
            }
            if self.pending_acc.take().is_none() {
                return Ok(());
            }
            let c = self.reg(v)?;
            return self.psetp(v, op, acc, c);
        }
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        self.psetp(v, op, a, b)
    }

    /// Whether `p` is a 32-bit integer, f32 or f64 compare that nothing but one predicate
    /// operation reads (see [`Lowerer::lower_pred_logic`]).
    fn accumulable_cmp(&self, p: Value) -> bool {
        if self.use_count[p.index()] != 1 {
            return false;
        }
        match self.def_of(p) {
            Some(InstData::Icmp { args, .. }) => kind_of(self.ty(args[0])) == RegKind::B32,
            Some(InstData::Float {
                op: FloatOp::Cmp { fmt, ftz, .. },
                ..
            }) => *fmt == FloatFmt::F32 || *fmt == FloatFmt::F64 && !ftz,
            _ => false,
        }
    }

    /// `PSETP.<op>.AND d, PT, a, b, PT` for the predicate `v`.
    fn psetp(&mut self, v: Value, op: BinaryOp, a: Loc, b: Loc) -> Result<(), LowerError> {
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let bop = i.use_(b.vreg);
        // PSETP.<op>.AND d, PT, a, b, PT
        let inst = sm50::Inst::new(Form::PSETP).with(Field::Bop1, lop_code(op));
        i.piece(
            inst,
            &[
                (Field::Pd0, dop, 0),
                (Field::Pa, aop, 0),
                (Field::Pb, bop, 0),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A sum that has the shape of an address (`base + (index << s)`, an extended index) is
    /// computed by a chain even when it is a plain value: one `LEA` (two for 64 bits) instead
    /// of a shift, an extension and an add. Plain `a + b` stays an IADD, which has immediate
    /// forms; a sum with a constant part too stays an IADD (the chain would need two more LEAs).
    pub(super) fn add_as_chain(&mut self, v: Value) -> Result<bool, LowerError> {
        if self.opts.fold != Fold::Full {
            return Ok(false);
        }
        let wide = match self.ty(v) {
            Type::I64 => true,
            Type::I32 => false,
            _ => return Ok(false),
        };
        let in_reg = |x: Value| self.non_address_use[x.index()];
        let konst = |x: Value| self.known_constant(x);
        // A value, not an access: a `.local` variable's address is a register here
        // (`lower_local_address`).
        let frame = |_: Value| None;
        let facts = Facts {
            in_register: &in_reg,
            constant: &konst,
            frame: &frame,
        };
        let mode = match_address(self.f, v, 0, wide, &facts, false);
        let Some(ix) = mode.index else {
            return Ok(false);
        };
        if mode.disp != 0 || (ix.shift == 0 && ix.ext == Ext::None) {
            if self.planning.is_none() {
                self.stats.reject(if mode.disp != 0 {
                    "sum with a constant part (IADD is shorter)"
                } else {
                    "plain sum without shift or extension (IADD)"
                });
            }
            return Ok(false);
        }
        let (reg, _) = self.chain(mode, 0, false, false)?;
        self.set_loc(
            v,
            Loc {
                vreg: reg,
                offset: 0,
            },
        );
        Ok(true)
    }

    /// A word of an extended-precision carry chain ([`super::super::carry`]): the whole chain is one
    /// `LEA` + `LEA.HI.X` links instruction, emitted with its first demanded result.
    pub(super) fn lower_carry_chain(&mut self, k: usize) -> Result<(), LowerError> {
        let chain = self.carry_chains[k].clone();
        if self.planning.is_none() && self.carry_done.contains_key(&k) {
            return Ok(());
        }
        let mut links = Vec::new();
        for l in &chain.links {
            links.push((self.reg(l.base)?, self.reg(l.word)?));
        }
        let planning = self.planning.is_some();
        let vb = &mut self.vb;
        let mut fresh = |kind: RegKind| {
            if planning {
                VReg { index: 0, kind }
            } else {
                vb.new_vreg(kind)
            }
        };
        let (inst, results) = carry_chain(&mut fresh, &links, chain.shift);
        self.push(inst);
        if !planning {
            for (l, r) in chain.links.iter().zip(&results) {
                self.set_loc(l.result, *r);
            }
            self.carry_done.insert(k, results);
            self.stats.chains_formed += 1;
        }
        Ok(())
    }

    /// add/sub: `IADD` / `IADD32I` (32-bit), `IADD.CC` + `IADD.X` (64-bit). A subtraction
    /// negates its register operand in the A slot, the shape ptxas uses for 64-bit `a - b`.
    pub(super) fn lower_add(
        &mut self,
        v: Value,
        sub: bool,
        args: [Value; 2],
        wide: bool,
    ) -> Result<(), LowerError> {
        let (mut a, mut b) = (args[0], args[1]);
        let mut neg_a = false;
        let mut neg_b = sub;
        // The A slot must be a register: put a constant/parameter first operand in B.
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
            std::mem::swap(&mut neg_a, &mut neg_b);
        }
        let mut bsrc = self.src(b)?;
        // A negated immediate is just another immediate.
        if let Src::Imm(k) = bsrc {
            if neg_b {
                bsrc = Src::Imm(k.wrapping_neg());
                neg_b = false;
            }
        }
        if wide {
            match bsrc {
                Src::Imm(k) if !fits_imm20(k) => bsrc = Src::Reg(self.reg(b)?),
                // A 64-bit subtraction negates a register in the A slot (ptxas's verified
                // shape); a negated constant-bank B with a carry is left unused.
                Src::Cbuf(..) if neg_b => bsrc = Src::Reg(self.reg(b)?),
                _ => {}
            }
        }
        // ptxas's shape for `x - y`: the negated operand goes in the A slot.
        let (a_loc, b_src, neg_a, neg_b) = if neg_b {
            match bsrc {
                Src::Reg(bl) => match self.src(a)? {
                    s @ (Src::Reg(_) | Src::Cbuf(..) | Src::Lit(_)) => (bl, s, true, false),
                    Src::Imm(k) if fits_imm20(k) || !wide => (bl, Src::Imm(k), true, false),
                    Src::Imm(_) => (bl, Src::Reg(self.reg(a)?), true, false),
                },
                _ => (self.reg(a)?, bsrc, neg_a, true),
            }
        } else {
            (self.reg(a)?, bsrc, neg_a, false)
        };
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // A late def even for the two-word form: each IADD reads word `w` of its operands
        // before it writes word `w` of `d`, and the high one reads no low word, so `d` may
        // take either operand's pair (a loop's `p += 4` updates `p` in place, with no MOV
        // pair on the back edge).
        let dop = i.def(d, false);
        let aop = i.use_(a_loc.vreg);
        let words = if wide { 2 } else { 1 };
        for w in 0..words {
            let mut refs = vec![(Field::Rd, dop, w), (Field::Ra, aop, a_loc.offset + w)];
            let inst = match b_src {
                Src::Imm(k) if !wide && !fits_imm20(k) => {
                    sm50::Inst::new(Form::IADD32I).with(Field::Imm, k as u64 & 0xffff_ffff)
                }
                Src::Imm(k) if wide && w == 1 => sm50::Inst::new(Form::IADD_I)
                    .with_signed(Field::ImmImm20s, if k < 0 { -1 } else { 0 }),
                s => Self::with_b(
                    &mut i,
                    (Form::IADD_R, Form::IADD_C, Form::IADD_I),
                    s,
                    w,
                    &mut refs,
                ),
            };
            let mut inst = inst;
            if inst.form != Form::IADD32I {
                inst.set(Field::Negb, neg_b as u64);
            }
            inst.set(Field::Nega, neg_a as u64);
            if wide {
                if w == 0 {
                    inst.set(Field::Cc, 1);
                } else {
                    inst.set(Field::X, 1);
                }
            }
            i.piece(inst, &refs);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// ptxas's 32-bit multiply: `XMAD t, a, b, RZ ; XMAD.MRG u, a, b.H1, RZ ;
    /// XMAD.PSL.CBCC d, a.H1, u.H1, t`.
    pub(super) fn lower_mul32(&mut self, v: Value, args: [Value; 2]) -> Result<(), LowerError> {
        // By a 16-bit constant, ptxas's two-instruction shape (the constant fits XMAD's
        // immediate): `XMAD t, a, k, RZ ; XMAD.PSL d, a.H1, k, t` = a.lo·k + (a.hi·k << 16).
        let k16 = [(1, 0), (0, 1)]
            .into_iter()
            .find_map(|(c, x)| match self.class(args[c]) {
                Class::Imm(k) if (0..1 << 16).contains(&k) => Some((k as u64, args[x])),
                _ => None,
            });
        if let Some((k, x)) = k16 {
            let a = self.reg(x)?;
            let d = self.new_vreg(RegKind::B32);
            let t = self.new_vreg(RegKind::B32);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(d, false);
            let top = i.def(t, true);
            let aop = i.use_(a.vreg);
            let x = sm50::Inst::new(Form::XMAD_I).with(Field::ImmImm16, k);
            i.piece(x, &[(Field::Rd, top, 0), (Field::Ra, aop, a.offset)]);
            i.piece(
                x.with(Field::Psl, 1).with(Field::Ah, 1),
                &[
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, a.offset),
                    (Field::Rc, top, 0),
                ],
            );
            self.push(i);
            self.set_loc(v, Loc { vreg: d, offset: 0 });
            return Ok(());
        }
        // A factor in the constant bank (`%ntid.x`, a kernel parameter) is read in place by
        // the first two XMADs, as ptxas does (`XMAD t, a, c[0x0][0x8], RZ ; XMAD.MRG u, a,
        // c[0x0][0x8].H1, RZ`), which saves the MOV into a register. The third XMAD reads
        // only `a` and `u`. (`mul.lo` commutes, so either operand may be the bank one.)
        self.mul32_xmads(v, args, None)
    }

    /// The IR block that defines `x` (`None` for a block parameter).
    fn def_block(&self, x: Value) -> Option<Block> {
        match self.f.values[x].def {
            ValueDef::Result(i, _) => Some(self.f.insts[i].block),
            ValueDef::Param(..) => None,
        }
    }

    /// `x + (a >> k)` (i32, a logical shift by a constant `k` in 1..=31 that nothing else
    /// reads, in the add's block) is one `LEA.HI d, a, x, RZ, 32 - k` (`x + ((RZ:a) >>
    /// (32 - s))` with `s = 32 - k`), ptxas's shape for the rounding step of a signed division
    /// by a power of two (`x + (x >>> 31)`, then `>> 1`): one instruction and one fixed
    /// latency fewer than `SHR.U32` + `IADD` on the chain. `x` is a register or a bank word.
    /// Returns false (nothing emitted) when the shape does not apply.
    pub(super) fn lower_add_shr32(
        &mut self,
        v: Value,
        args: [Value; 2],
    ) -> Result<bool, LowerError> {
        if self.ty(v) != Type::I32 {
            return Ok(false);
        }
        for (sh, x) in [(args[1], args[0]), (args[0], args[1])] {
            let Some(&InstData::Binary {
                op: BinaryOp::ShrU,
                args: [a, count],
            }) = self.def_of(sh)
            else {
                continue;
            };
            let Class::Imm(k) = self.class(count) else {
                continue;
            };
            if !(1..=31).contains(&k)
                || self.ty(sh) != Type::I32
                || self.use_count[sh.index()] != 1
                || self.def_block(sh).is_none()
                || self.def_block(sh) != self.def_block(v)
                || !matches!(self.class(a), Class::Reg)
                || matches!(self.class(x), Class::Imm(_))
            {
                continue;
            }
            let al = self.reg(a)?;
            let xs = self.src(x)?;
            let d = self.new_vreg(RegKind::B32);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(d, false);
            let aop = i.use_(al.vreg);
            let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, al.offset)];
            let inst = match xs {
                Src::Reg(l) => {
                    let xop = i.use_(l.vreg);
                    refs.push((Field::Rb, xop, l.offset));
                    sm50::Inst::new(Form::LEA_HI_R)
                }
                Src::Cbuf(b, o) => sm50::Inst::new(Form::LEA_HI_C)
                    .with(Field::Cbk, u64::from(b))
                    .with(Field::Cbo, u64::from(o / 4)),
                Src::Lit(o) => sm50::Inst::new(Form::LEA_HI_C)
                    .with(Field::Cbk, 2)
                    .with(Field::Cbo, u64::from(o / 4)),
                Src::Imm(_) => unreachable!("an immediate addend was excluded"),
            };
            i.piece(inst.with(Field::S, (32 - k) as u64), &refs);
            self.push(i);
            self.set_loc(v, Loc { vreg: d, offset: 0 });
            return Ok(true);
        }
        Ok(false)
    }

    /// `a * b + c` for an i32 `add` whose one operand is an i32 `mul` of two non-constant
    /// factors that nothing else reads: ptxas's `mad.lo` shape, the addend in the first XMAD's
    /// C slot (`XMAD t, a, b, c ; XMAD.MRG u, a, b.H1, RZ ; XMAD.PSL.CBCC d, a.H1, u.H1, t`),
    /// which saves the IADD (`%ctaid.x * %ntid.x + %tid.x`); the `mul` must be in the add's
    /// block (see below). Correct because the sequence is
    /// `(a.lo·b.lo + c) + ((a.hi·b.lo + a.lo·b.hi) << 16)` modulo 2^32. Returns false (nothing
    /// emitted) when the shape does not apply.
    pub(super) fn lower_mad32(&mut self, v: Value, args: [Value; 2]) -> Result<bool, LowerError> {
        if self.ty(v) != Type::I32 {
            return Ok(false);
        }
        for (m, c) in [(args[0], args[1]), (args[1], args[0])] {
            let Some(&InstData::Binary {
                op: BinaryOp::Mul,
                args: factors,
            }) = self.def_of(m)
            else {
                continue;
            };
            // Only a product of this block: one in a dominating block (a loop-invariant
            // stride) is computed once there, and folding it here would repeat three XMADs
            // per iteration to save one IADD.
            // (From the IR, not `cur_ir`, so that planning and emission agree.)
            let same_block = self.def_block(m).is_some() && self.def_block(m) == self.def_block(v);
            let plain = |x: Value| !matches!(self.class(x), Class::Imm(_));
            if !same_block
                || self.ty(m) != Type::I32
                || self.use_count[m.index()] != 1
                || !matches!(self.class(c), Class::Reg)
                || !factors.iter().all(|&x| plain(x))
            {
                continue;
            }
            self.mul32_xmads(v, factors, Some(c))?;
            return Ok(true);
        }
        Ok(false)
    }

    /// The three XMADs of a 32-bit multiply, plus `addend` in the first one's C slot.
    pub(super) fn mul32_xmads(
        &mut self,
        v: Value,
        args: [Value; 2],
        addend: Option<Value>,
    ) -> Result<(), LowerError> {
        let cb = [(1, 0), (0, 1)]
            .into_iter()
            .find_map(|(c, x)| match self.class(args[c]) {
                Class::Cbuf(b, o) => Some(((b, o), args[x])),
                _ => None,
            });
        let (a, b) = match cb {
            Some((o, x)) => (self.reg(x)?, Err(o)),
            None => (self.reg(args[0])?, Ok(self.reg(args[1])?)),
        };
        let c = match addend {
            Some(c) => Some(self.reg(c)?),
            None => None,
        };
        let d = self.new_vreg(RegKind::B32);
        let t = self.new_vreg(RegKind::B32);
        let u = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let top = i.def(t, true);
        let uop = i.def(u, true);
        let aop = i.use_(a.vreg);
        let x = sm50::Inst::new(Form::XMAD_R);
        let mut first = vec![(Field::Rd, top, 0), (Field::Ra, aop, a.offset)];
        if let Some(c) = c {
            let cop = i.use_(c.vreg);
            first.push((Field::Rc, cop, c.offset));
        }
        match b {
            Ok(b) => {
                let bop = i.use_(b.vreg);
                first.push((Field::Rb, bop, b.offset));
                i.piece(x, &first);
                i.piece(
                    x.with(Field::Mrg, 1).with(Field::Bh, 1),
                    &[
                        (Field::Rd, uop, 0),
                        (Field::Ra, aop, a.offset),
                        (Field::Rb, bop, b.offset),
                    ],
                );
            }
            Err((b, o)) => {
                let xc = sm50::Inst::new(Form::XMAD_C)
                    .with(Field::Cbk, u64::from(b))
                    .with(Field::Cbo, u64::from(o / 4));
                i.piece(xc, &first);
                i.piece(
                    xc.with(Field::Mrg, 1).with(Field::Bh, 1),
                    &[(Field::Rd, uop, 0), (Field::Ra, aop, a.offset)],
                );
            }
        }
        i.piece(
            x.with(Field::Psl, 1)
                .with(Field::Mode, 4)
                .with(Field::Ah, 1)
                .with(Field::Bh, 1),
            &[
                (Field::Rd, dop, 0),
                (Field::Ra, aop, a.offset),
                (Field::Rb, uop, 0),
                (Field::Rc, top, 0),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A 64-bit shift by a register count, as ptxas: a funnel shift for the word that takes
    /// bits from both halves and a plain shift for the other. `shl` is `SHF.L.U64 hi, lo, n,
    /// hi` and `SHL lo, lo, n`; `shr` is `SHF.R.{U64,S64} lo, lo, n, hi` and `SHR{.U32} hi,
    /// hi, n`. Without `.W` the hardware clamps the count (SHL/SHR at 32, SHF.U64/S64 at 64),
    /// which is PTX's clamping of counts beyond the width: every 32-bit count is exact,
    /// 0xffffffff too.
    pub(super) fn shift64_var(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let a = self.reg(args[0])?;
        let n = self.reg(args[1])?;
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        let nop = i.use_(n.vreg);
        let (o, no) = (a.offset, n.offset);
        let signed = op == BinaryOp::ShrS;
        // The funnel word: hi for a left shift, lo for a right one.
        let (funnel, word, plain) = if op == BinaryOp::Shl {
            (Form::SHF_LR, 1, Form::SHL_R)
        } else {
            (Form::SHF_RR, 0, Form::SHR_R)
        };
        let shf = sm50::Inst::new(funnel).with(Field::Ty, 2 + signed as u64);
        i.piece(
            shf,
            &[
                (Field::Rd, dop, word),
                (Field::Ra, aop, o),
                (Field::Rb, nop, no),
                (Field::Rc, aop, o + 1),
            ],
        );
        let other = 1 - word;
        let mut sh = sm50::Inst::new(plain);
        if signed {
            sh.set(Field::Sgn, 1);
        }
        i.piece(
            sh,
            &[
                (Field::Rd, dop, other),
                (Field::Ra, aop, o + other),
                (Field::Rb, nop, no),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// Shifts by a constant. 32-bit: `SHL`/`SHR` imm. 64-bit, all with LEA forms whose
    /// meaning ptxas shows (`LEA.HI d, lo, RZ, hi, s` = high word of `{hi:lo} << s`):
    /// `x << k`: `LEA d.lo, x.lo, RZ, k ; LEA.HI d.hi, x.lo, RZ, x.hi, k`;
    /// `x >> k`: `LEA.HI d.lo, x.lo, RZ, x.hi, 32-k ; SHR d.hi, x.hi, k`;
    /// counts of 32 or more move words and fill with zero or the sign.
    pub(super) fn shift_const(
        &mut self,
        v: Value,
        x: Value,
        op: BinaryOp,
        k: i64,
    ) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let wide = kind_of(ty) == RegKind::B64;
        let signed = op == BinaryOp::ShrS;
        let a = if op == BinaryOp::Shl || wide {
            self.reg(x)?
        } else {
            match self.norm32(x, signed)? {
                Src::Reg(l) => l,
                _ => self.reg(x)?,
            }
        };
        let width = if wide { 64 } else { 32 };
        let k = k.clamp(0, width);
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, wide);
        let aop = i.use_(a.vreg);
        let o = a.offset;
        let shl = |n: i64| sm50::Inst::new(Form::SHL_I).with_signed(Field::ImmImm20s, n);
        let shr = |n: i64| {
            sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, signed as u64)
                .with_signed(Field::ImmImm20s, n)
        };
        let mov_rz = sm50::Inst::new(Form::MOV_R);
        if !wide {
            let inst = if op == BinaryOp::Shl { shl(k) } else { shr(k) };
            i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, aop, o)]);
        } else if op == BinaryOp::Shl {
            if k < 32 {
                let lea = sm50::Inst::new(Form::LEA_R).with(Field::S, k as u64);
                let hi = sm50::Inst::new(Form::LEA_HI_R).with(Field::S, k as u64);
                i.piece(lea, &[(Field::Rd, dop, 0), (Field::Ra, aop, o)]);
                i.piece(
                    hi,
                    &[
                        (Field::Rd, dop, 1),
                        (Field::Ra, aop, o),
                        (Field::Rc, aop, o + 1),
                    ],
                );
            } else {
                i.piece(shl(k - 32), &[(Field::Rd, dop, 1), (Field::Ra, aop, o)]);
                i.piece(mov_rz, &[(Field::Rd, dop, 0)]);
            }
        } else if k == 0 {
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, 0), (Field::Rb, aop, o)],
            );
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, 1), (Field::Rb, aop, o + 1)],
            );
        } else if k < 32 {
            let hi = sm50::Inst::new(Form::LEA_HI_R).with(Field::S, (32 - k) as u64);
            i.piece(
                hi,
                &[
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, o),
                    (Field::Rc, aop, o + 1),
                ],
            );
            i.piece(shr(k), &[(Field::Rd, dop, 1), (Field::Ra, aop, o + 1)]);
        } else if !signed && k == 64 {
            // A logical shift by 64 or more (k is clamped to 64) leaves nothing; the count
            // must not be clamped to 31, which would keep the top bit.
            i.piece(mov_rz, &[(Field::Rd, dop, 0)]);
            i.piece(mov_rz, &[(Field::Rd, dop, 1)]);
        } else {
            i.piece(
                shr((k - 32).min(31)),
                &[(Field::Rd, dop, 0), (Field::Ra, aop, o + 1)],
            );
            if signed {
                i.piece(shr(31), &[(Field::Rd, dop, 1), (Field::Ra, aop, o + 1)]);
            } else {
                i.piece(mov_rz, &[(Field::Rd, dop, 1)]);
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `trunc(shr x, k)` of a 64-bit `x`, 32 <= k < 64 (PTX `mov.b64 {_, hi}, x`, how NVVM's
    /// double-precision library reads a double's high word, is `trunc(shr.u x, 32)`): the
    /// narrow result is the high word of `x`'s pair itself for k = 32, and one 32-bit `SHR`
    /// of that word by `k - 32` otherwise. Whether it applied (else `v` is left to the plain
    /// truncation).
    ///
    /// Without the rule the shift is selected as a 64-bit value, `SHR d.lo, x.hi, k-32 ;
    /// MOV d.hi, RZ`, of which the truncation keeps the low word: two instructions and a
    /// register pair for what is (for k = 32) no instruction at all. Trade-off: for k = 32 the
    /// result keeps `x`'s whole pair live as long as it is used, where the shift's own pair
    /// would have been live as long; no worse. The shift itself is still selected if anything
    /// else uses it (selection is demand-driven).
    pub(super) fn trunc_of_high_shift(&mut self, v: Value, arg: Value) -> Result<bool, LowerError> {
        let Some(&InstData::Binary {
            op: op @ (BinaryOp::ShrU | BinaryOp::ShrS),
            args: [x, n],
        }) = self.def_of(arg)
        else {
            return Ok(false);
        };
        let k = match self.class(n) {
            Class::Imm(k) if (32..64).contains(&k) => k,
            _ => return Ok(false),
        };
        if self.ty(arg) != Type::I64 || self.ty(x) != Type::I64 {
            return Ok(false);
        }
        let l = self.reg(x)?;
        let hi = Loc {
            vreg: l.vreg,
            offset: l.offset + 1,
        };
        if k == 32 {
            self.set_loc(v, hi);
            return Ok(true);
        }
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(hi.vreg);
        let shr = sm50::Inst::new(Form::SHR_I)
            .with(Field::Sgn, u64::from(op == BinaryOp::ShrS))
            .with_signed(Field::ImmImm20s, k - 32);
        i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, aop, hi.offset)]);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    /// One word of a 64-bit value built from two 32-bit halves (see [`Self::pair_words`]).
    pub(super) fn pair_word(&self, v: Value, high: bool) -> Option<Word> {
        match *self.def_of(v)? {
            InstData::Iconst { imm, .. } => {
                let (word, other) = if high {
                    (imm >> 32, imm as u32)
                } else {
                    (imm & 0xffff_ffff, (imm >> 32) as u32)
                };
                (other == 0).then_some(Word::Imm(word as u32))
            }
            InstData::Convert {
                op: ConvOp::Zext,
                arg,
                ..
            } if !high && self.ty(arg) == Type::I32 => Some(Word::Val(arg)),
            InstData::Binary {
                op: BinaryOp::Shl,
                args: [x, n],
            } if high && matches!(self.class(n), Class::Imm(32)) => match *self.def_of(x)? {
                InstData::Convert {
                    op: ConvOp::Zext | ConvOp::Sext,
                    arg,
                    ..
                } if self.ty(arg) == Type::I32 => Some(Word::Val(arg)),
                _ => Some(Word::Low(x)),
            },
            _ => None,
        }
    }

    /// `or.i64 a, b` where one side has only low bits and the other only high bits, as PTX
    /// `mov.b64 d, {lo, hi}` builds it (`or(zext lo, shl(zext hi, 32))`, or a constant
    /// half): the words, low first.
    pub(super) fn pair_words(&self, args: [Value; 2]) -> Option<(Word, Word)> {
        [(args[0], args[1]), (args[1], args[0])]
            .into_iter()
            .find_map(|(a, b)| Some((self.pair_word(a, false)?, self.pair_word(b, true)?)))
    }

    /// A 64-bit value that [`Self::pair_words`] recognises: each word moved into the pair
    /// (`MOV`, `MOV32I`, `MOV` from the constant bank or from `RZ`), instead of extending
    /// both halves, shifting one and ORing them.
    pub(super) fn lower_pair(&mut self, v: Value, args: [Value; 2]) -> Result<bool, LowerError> {
        let Some((lo, hi)) = self.pair_words(args) else {
            return Ok(false);
        };
        let srcs = [lo, hi]
            .into_iter()
            .map(|w| {
                Ok(match w {
                    Word::Val(x) => self.src(x)?,
                    Word::Low(x) => Src::Reg(self.reg(x)?),
                    Word::Imm(k) => Src::Imm(i64::from(k)),
                })
            })
            .collect::<Result<SmallVec<[Src; 2]>, LowerError>>()?;
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        for (w, s) in (0u8..).zip(srcs) {
            match s {
                Src::Reg(l) => {
                    let sop = i.use_(l.vreg);
                    i.piece(
                        sm50::Inst::new(Form::MOV_R),
                        &[(Field::Rd, dop, w), (Field::Rb, sop, l.offset)],
                    );
                }
                Src::Cbuf(b, o) => i.piece(
                    sm50::Inst::new(Form::MOV_C)
                        .with(Field::Cbk, u64::from(b))
                        .with(Field::Cbo, u64::from(o / 4)),
                    &[(Field::Rd, dop, w)],
                ),
                Src::Lit(o) => i.piece(
                    sm50::Inst::new(Form::MOV_C)
                        .with(Field::Cbk, 2)
                        .with(Field::Cbo, u64::from(o / 4)),
                    &[(Field::Rd, dop, w)],
                ),
                // MOV d, RZ
                Src::Imm(0) => i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, w)]),
                Src::Imm(k) => i.piece(
                    sm50::Inst::new(Form::MOV32I).with(Field::Imm, k as u64 & 0xffff_ffff),
                    &[(Field::Rd, dop, w)],
                ),
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    pub(super) fn lower_logic(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
        wide: bool,
    ) -> Result<(), LowerError> {
        let (mut a, mut b) = (args[0], args[1]);
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
        }
        let al = self.reg(a)?;
        let bs = self.src(b)?;
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // Word by word (each LOP reads word `w` of its operands, then writes word `w` of `d`):
        // a late def, so `d` may take an operand's pair.
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        for w in 0..(if wide { 2u8 } else { 1 }) {
            let mut refs = vec![(Field::Rd, dop, w), (Field::Ra, aop, al.offset + w)];
            let inst = match bs {
                Src::Imm(k) => {
                    let word = if wide {
                        (k as u64 >> (32 * w)) & 0xffff_ffff
                    } else {
                        k as u64 & 0xffff_ffff
                    };
                    sm50::Inst::new(Form::LOP32I)
                        .with(Field::Op, lop_code(op))
                        .with(Field::Imm, word)
                }
                s => Self::with_b(
                    &mut i,
                    (Form::LOP_R, Form::LOP_C, Form::LOP_I),
                    s,
                    w,
                    &mut refs,
                )
                .with(Field::Op, lop_code(op)),
            };
            i.piece(inst, &refs);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `mulwide` by a power of two is an extension and a shift; anything else goes to `mul.rs`.
    pub(super) fn lower_mulwide(
        &mut self,
        v: Value,
        signed: bool,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let k = [1usize, 0]
            .into_iter()
            .find_map(|j| match self.class(args[j]) {
                Class::Imm(k)
                    if k > 0 && (k as u64).is_power_of_two() && k.trailing_zeros() < 32 =>
                {
                    Some((args[1 - j], k.trailing_zeros() as u64))
                }
                _ => None,
            });
        let Some((x, k)) = k.filter(|_| self.ty(v) == Type::I64) else {
            return self.lower_mulwide_general(v, signed, args);
        };
        let a = self.reg(x)?;
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        // [SHR d.hi, x, 0x1f] ; LEA d.lo, x, RZ, k ; LEA.HI d.hi, x, RZ, d.hi|RZ, k
        let mut hi_refs = vec![(Field::Rd, dop, 1), (Field::Ra, aop, a.offset)];
        if signed {
            let shr = sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, 1)
                .with(Field::ImmImm20s, 0x1f);
            i.piece(shr, &[(Field::Rd, dop, 1), (Field::Ra, aop, a.offset)]);
            hi_refs.push((Field::Rc, dop, 1));
        }
        i.piece(
            sm50::Inst::new(Form::LEA_R).with(Field::S, k),
            &[(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)],
        );
        i.piece(sm50::Inst::new(Form::LEA_HI_R).with(Field::S, k), &hi_refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}
