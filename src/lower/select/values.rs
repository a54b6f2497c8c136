//! Selection of value-producing instructions that are neither integer arithmetic nor memory:
//! materializing constants and symbol addresses, special registers, unary operations,
//! conversions, selects, integer compares, and `cvta` with the shared-window tests.
//!
//! In: one IR value and its definition. Out: SASS instructions in the current block and the
//! value's [`Loc`].

use super::*;

impl<'a> Lowerer<'a> {
    // ------------------------------------------------------------ values

    /// A constant, parameter, `.const` word (`Lowerer::const_bank_word`) or variable address
    /// that some instruction wants in a register.
    pub(super) fn materialize(&mut self, v: Value) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let kind = kind_of(ty);
        let class = self.class(v);
        if let Some(InstData::SymbolAddr { var, .. }) = self.def_of(v) {
            let var = *var;
            let space = self.module.vars.get(var).map(|d| d.space);
            // ptxas's sequence for a `.global` variable: `MOV32I lo, 0x0` and `MOV32I hi, 0x0`,
            // which the loader patches (R_CUDA_ABS32_LO_20 / R_CUDA_ABS32_HI_20) with its
            // address; a 32-bit address (a 32-bit module) is one `MOV32I` (R_CUDA_ABS32_20).
            // A `.shared` one the linker places (`shared_relocs`): `MOV32I R0, 0x0` with
            // `R_CUDA_ABS24_20` (a shared address is below 2^24; a 64-bit one's high word 0).
            if space == Some(Space::Local) {
                let k = i64::from(self.var_offsets[var.as_u32() as usize]);
                return self.lower_local_address(v, kind, k);
            }
            let words: Option<&[RelocWord]> = match (space, kind) {
                (Some(Space::Global), RegKind::B64) => Some(&[RelocWord::Lo, RelocWord::Hi]),
                (Some(Space::Global), RegKind::B32) => Some(&[RelocWord::Abs32]),
                (Some(Space::Shared), RegKind::B64) if self.linker_shared(var) => {
                    Some(&[RelocWord::Shared, RelocWord::Zero])
                }
                (Some(Space::Shared), RegKind::B32) if self.linker_shared(var) => {
                    Some(&[RelocWord::Shared])
                }
                _ => None,
            };
            if let Some(words) = words {
                self.relocated_words(v, kind, var, words);
                return Ok(());
            }
            if matches!(class, Class::Reg) {
                let space = space.map_or("?", |s| s.name());
                return Err(self.unsupported(format!(
                    "the address of a .{space} variable (needs a frame layout or relocations)"
                )));
            }
        }
        // A constant passed to a block parameter is copied into the parameter's register: a
        // shared register there is a `MOV` instead of a `MOV32I` (no instruction saved) and
        // one more register live (a loop's `i = 0; sum = 0`), so it neither takes nor offers one.
        // Nothing is shared in the driver's retries for warps (`shares_immediates`).
        let shareable = self.shares_immediates() && !self.block_arg[v.index()];
        if let (RegKind::B32, Class::Imm(k), true) = (kind, class, shareable) {
            if let Some(loc) = self.shared_imm(kind, k) {
                self.set_loc(v, loc);
                return Ok(());
            }
        }
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        if let Some(&InstData::LoadParam { offset, .. }) = self.def_of(v) {
            if offset % 4 != 0 {
                // MOV the containing word, then shift the value down to bit 0 (the high bits
                // of an i8/i16 register are unspecified, so a logical shift is enough).
                let dop = i.def(d, true);
                let word = u64::from((0x140 + offset) / 4);
                let mov = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, word);
                i.piece(mov, &[(Field::Rd, dop, 0)]);
                let shr = sm50::Inst::new(Form::SHR_I)
                    .with(Field::ImmImm20s, u64::from(8 * (offset % 4)));
                i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
                self.push(i);
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                return Ok(());
            }
        }
        match (kind, class) {
            (RegKind::Pred, Class::Imm(k)) => {
                // PSETP.AND.AND d, PT, PT, PT, PT (or !PT for false)
                let dop = i.def(d, false);
                let inst = sm50::Inst::new(Form::PSETP).with(Field::Pan, (k & 1 == 0) as u64);
                i.piece(inst, &[(Field::Pd0, dop, 0)]);
            }
            (RegKind::B32, Class::Imm(k)) => {
                let dop = i.def(d, false);
                let inst = sm50::Inst::new(Form::MOV32I).with(Field::Imm, k as u64 & 0xffff_ffff);
                i.piece(inst, &[(Field::Rd, dop, 0)]);
            }
            (RegKind::B64, Class::Imm(k)) => {
                let dop = i.def(d, true);
                for w in 0..2u8 {
                    let inst = sm50::Inst::new(Form::MOV32I)
                        .with(Field::Imm, (k as u64 >> (32 * w)) & 0xffff_ffff);
                    i.piece(inst, &[(Field::Rd, dop, w)]);
                }
            }
            (RegKind::B32 | RegKind::B64, Class::Cbuf(b, o)) => bank_read(&mut i, d, b, o),
            _ => return Err(LowerError::Internal(format!("cannot materialize {v}"))),
        }
        self.push(i);
        let loc = Loc { vreg: d, offset: 0 };
        self.set_loc(v, loc);
        // 32-bit constants only: a shared pair holds two registers, and in NVVM's f64 code
        // (nbody's `integrateBodies<double>`: a mask pair read 129 times) the longer lives
        // cost registers past an occupancy step (40 to 47, 48 to 40 warps).
        if let (RegKind::B32, Class::Imm(k), Some(here), None, true) =
            (kind, class, self.cur_ir, &self.planning, shareable)
        {
            let clock = self.clock;
            self.imm_regs
                .entry(imm_key(kind, k))
                .or_default()
                .push((here, loc, clock));
        }
        Ok(())
    }

    /// Whether immediates are shared at all. Not in the driver's retry for warps
    /// (`remat_cbuf`), which writes each immediate afresh at its use as it reads
    /// constant-bank values afresh: a shared register lives across the window (rodinia's
    /// `IMGVF_kernel` 64 -> 72 registers, boxFilter's `d_boxfilter_rgba_y` 32 -> 40, each a
    /// quarter or an eighth of the warps lost). Nor in the retry with address chains shared
    /// within a block or not at all (`Fold::Block`/`Fold::Lea`): particlefilter's
    /// `likelihood_kernel` reaches its warps with the block's chains shared only when the
    /// constants are not (otherwise the retry falls back to one chain per access, 1,944 ->
    /// 2,003 instructions).
    fn shares_immediates(&self) -> bool {
        !self.opts.remat_cbuf && self.opts.fold == Fold::Full
    }

    /// A register already holding the immediate `k` of kind `kind` that may serve a use in
    /// the current block: written in a block that dominates it with no loop between, at
    /// most [`consts::SHARE_WINDOW`] lowered instructions ago (`consts`' rule and
    /// trade-off). Never while planning (nothing is written then).
    fn shared_imm(&mut self, kind: RegKind, k: i64) -> Option<Loc> {
        let here = self.cur_ir.filter(|_| self.planning.is_none())?;
        let clock = self.clock;
        let list = self.imm_regs.get(&imm_key(kind, k))?;
        let regions = self
            .loop_regions
            .get_or_insert_with(|| consts::LoopRegions::of(self.f, &self.doms));
        let doms = &self.doms;
        list.iter()
            .rev()
            .find(|(b, _, written)| {
                clock - *written <= consts::SHARE_WINDOW
                    && doms.dominates(*b, here)
                    && regions.may_serve(*b, here)
            })
            .map(|&(_, loc, _)| loc)
    }

    pub(super) fn lower_sreg(&mut self, v: Value, reg: SpecialReg) -> Result<(), LowerError> {
        let sr = match reg {
            SpecialReg::Tid(d) => 0x21 + d.index() as u64,
            SpecialReg::Ctaid(d) => 0x25 + d.index() as u64,
            SpecialReg::LaneId => 0x00,
            SpecialReg::WarpId | SpecialReg::SmId => 0x03,
            // SR_EQMASK .. SR_GEMASK
            SpecialReg::LaneMask(m) => 0x38 + m as u64,
            SpecialReg::Clock => return self.lower_clock(v, false),
            SpecialReg::Clock64 => return self.lower_clock(v, true),
            SpecialReg::NSmId => 0x02,
            SpecialReg::TotalSmemSize => 0x32,
            // SR_GLOBALTIMERLO/HI, SR_PMn (4 + n) and SR_PM_HIn (0x48 + n), read with CS2R.
            SpecialReg::GlobalTimerLo => return self.lower_counter(v, 0x52, None),
            SpecialReg::GlobalTimerHi => return self.lower_counter(v, 0x53, None),
            SpecialReg::GlobalTimer => return self.lower_counter(v, 0x52, Some(0x53)),
            SpecialReg::Pm(n) => return self.lower_counter(v, 4 + u64::from(n), None),
            SpecialReg::Pm64(n) => {
                let n = u64::from(n);
                return self.lower_counter(v, 4 + n, Some(0x48 + n));
            }
            _ => return self.materialize(v),
        };
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let s2r = sm50::Inst::new(Form::S2R).with(Field::Sr, sr);
        if matches!(
            reg,
            SpecialReg::WarpId | SpecialReg::SmId | SpecialReg::NSmId
        ) {
            // %warpid = BFE.U32(SR_VIRTID, 0x608), %smid = BFE.U32(SR_VIRTID, 0x914), %nsmid
            // = BFE.U32(SR_VIRTCFG, 0x914), as ptxas does.
            let dop = i.def(d, false);
            i.piece(s2r, &[(Field::Rd, dop, 0)]);
            let field = if reg == SpecialReg::WarpId {
                0x608
            } else {
                0x914
            };
            let bfe = sm50::Inst::new(Form::BFE_I).with(Field::ImmImm20s, field);
            i.piece(bfe, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
        } else {
            let dop = i.def(d, false);
            i.piece(s2r, &[(Field::Rd, dop, 0)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    pub(super) fn lower_unary(
        &mut self,
        v: Value,
        op: UnaryOp,
        arg: Value,
    ) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let a = self.reg(arg)?;
        let kind = kind_of(ty);
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let words = kind.gprs() as u8;
        let dop = i.def(d, words > 1);
        let aop = i.use_(a.vreg);
        match (op, kind) {
            (UnaryOp::Not, RegKind::Pred) => {
                // PSETP.AND.AND d, PT, !a, PT, PT
                let inst = sm50::Inst::new(Form::PSETP).with(Field::Pan, 1);
                i.piece(inst, &[(Field::Pd0, dop, 0), (Field::Pa, aop, 0)]);
            }
            (UnaryOp::Not, _) => {
                for w in 0..words {
                    let inst = sm50::Inst::new(Form::LOP32I)
                        .with(Field::Op, crate::sm50::values::lop32i::op::XOR)
                        .with(Field::Imm, 0xffff_ffff);
                    i.piece(inst, &[(Field::Rd, dop, w), (Field::Ra, aop, a.offset + w)]);
                }
            }
            (UnaryOp::Neg, RegKind::Pred) => return Err(self.unsupported("neg of a predicate")),
            (UnaryOp::Neg, _) => {
                // IADD[.CC] d, -a, RZ ; IADD.X d.hi, -a.hi, RZ  (0 - a, ptxas's negated-Ra shape)
                for w in 0..words {
                    let inst = sm50::Inst::new(Form::IADD_R)
                        .with(Field::Nega, 1)
                        .with(Field::Cc, (words > 1 && w == 0) as u64)
                        .with(Field::X, (w == 1) as u64);
                    i.piece(inst, &[(Field::Rd, dop, w), (Field::Ra, aop, a.offset + w)]);
                }
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    pub(super) fn lower_convert(
        &mut self,
        v: Value,
        op: ConvOp,
        ty: Type,
        arg: Value,
    ) -> Result<(), LowerError> {
        let from = self.ty(arg);
        if !from.is_int() || !ty.is_int() {
            return Err(self.unsupported(format!("convert {from} to {ty}")));
        }
        if op == ConvOp::Trunc {
            if self.trunc_of_high_shift(v, arg)? {
                return Ok(());
            }
            // The low word of a pair, or the same register: high bits of narrow values are
            // unspecified, so truncation costs nothing.
            let l = self.reg(arg)?;
            self.set_loc(v, l);
            return Ok(());
        }
        let signed = op == ConvOp::Sext;
        let loaded = if signed {
            self.signed_load(arg)
        } else {
            self.zero_extended(arg)
        };
        if ty != Type::I64 {
            let l = self.reg(arg)?;
            let out = if loaded {
                l
            } else {
                self.extend_narrow(l, from, signed, None)?
            };
            self.set_loc(v, out);
            return Ok(());
        }
        // To 64 bits: [extend the narrow source] then the high word is RZ or the sign word.
        let lo = if from.bits() < 32 && !loaded {
            match self.norm32(arg, signed)? {
                Src::Reg(l) => l,
                _ => self.reg(arg)?,
            }
        } else {
            self.reg(arg)?
        };
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(lo.vreg);
        i.piece(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, dop, 0), (Field::Rb, aop, lo.offset)],
        );
        if signed {
            let shr = sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, 1)
                .with(Field::ImmImm20s, 0x1f);
            i.piece(shr, &[(Field::Rd, dop, 1), (Field::Ra, aop, lo.offset)]);
        } else {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// Whether the register of the narrow (8- or 16-bit) `v` holds it zero-extended to 32
    /// bits, so that its zero extension is that register, not a `LOP32I.AND`
    /// ([`Self::zero_above`] its width).
    fn zero_extended(&self, v: Value) -> bool {
        let bits = self.ty(v).bits();
        bits < 32 && self.zero_above(v, bits)
    }

    /// Whether the register `v` is lowered into is zero above its low `bits` bits (`v` of at
    /// most 32 bits), known from `v`'s definition alone:
    /// * a load from memory of at most `bits`: every narrow load is an unsigned
    ///   `LD*.U8`/`.U16` ([`size_code`]; narrow vector loads are split into such scalar ones)
    ///   unless it is loaded signed ([`Self::signed_load`]). ptxas 11.8 reads a
    ///   `ld.shared.u8` into a `.b32` register with one `LDS.U.U8`; FunctionPointers'
    ///   SobelShared masked each of its 9 pixels per call site. Parameter reads are out (a
    ///   narrow kernel parameter is read from the constant bank as its whole word, a
    ///   subroutine's from its argument register, upper bits unspecified);
    /// * a zero extension from at most `bits`: [`Self::lower_convert`] masked it (or it is
    ///   such a load's register). A callee's `u8` parameter widened to `u16` then `u32` was
    ///   masked twice, `0xff` then `0xffff`;
    /// * an `and` with a constant below `2^bits` (`lower_logic`'s `LOP`, whole register);
    /// * a truncation of such a value: the same register (not a truncated shift, which
    ///   `trunc_of_high_shift` builds anew). SobelShared's `Threshold` masked `and x, 255`
    ///   again after `cvt.u16.u8`.
    ///
    /// Nothing is traded: each rule drops an instruction whose result equals its operand.
    fn zero_above(&self, v: Value, bits: u32) -> bool {
        let vb = self.ty(v).bits();
        if !self.ty(v).is_int() || vb > 32 {
            return false;
        }
        match self.def_of(v) {
            Some(InstData::Load { space, ty, .. }) => {
                *space != Space::Param && ty.bits() <= bits && !self.signed_load(v)
            }
            Some(InstData::Convert {
                op: ConvOp::Zext,
                arg,
                ..
            }) => self.ty(*arg).bits() <= bits,
            Some(InstData::Convert {
                op: ConvOp::Trunc,
                arg,
                ..
            }) => {
                let shift = matches!(
                    self.def_of(*arg),
                    Some(InstData::Binary {
                        op: BinaryOp::ShrU | BinaryOp::ShrS,
                        ..
                    })
                );
                !shift && self.zero_above(*arg, bits)
            }
            Some(InstData::Binary {
                op: BinaryOp::And,
                args,
            }) => args.iter().any(
                |&a| matches!(self.class(a), Class::Imm(k) if k >= 0 && (k as u64) >> bits == 0),
            ),
            _ => false,
        }
    }

    /// Whether the narrow `v` is a load (not a parameter read) that nothing reads but sign
    /// extensions: it is then loaded signed (`LD*.S8`/`.S16`, `lower_load`), which
    /// sign-extends into its register, and each extension is that register, not a `BFE`
    /// (ptxas 11.8 loads a `ld.global.s8` into a `.b32` register with one `LDG.E.S8`).
    pub(super) fn signed_load(&self, v: Value) -> bool {
        let n = self.use_count[v.index()];
        self.ty(v).bits() < 32
            && n > 0
            && self.sext_count[v.index()] == n
            && matches!(self.def_of(v), Some(InstData::Load { space, .. }) if *space != Space::Param)
    }

    pub(super) fn lower_select(
        &mut self,
        v: Value,
        cond: Value,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let kind = kind_of(self.ty(v));
        if kind == RegKind::Pred {
            return Err(self.unsupported("select of predicates"));
        }
        if kind == RegKind::B32 && self.select_by_icmp(v, cond, args)? {
            return Ok(());
        }
        if kind == RegKind::B32 && self.select_by_mask(v, cond, args)? {
            return Ok(());
        }
        if kind == RegKind::B32 && self.select_imm(v, cond, args)? {
            return Ok(());
        }
        // A constant that no immediate holds is read from the literal pool (constant bank 2),
        // as ptxas does (float constants are `iconst`s of their bits in the IR); a constant
        // first operand goes to B: `c ? k : b` is `SEL d, b, k, !c`.
        let swap = matches!(self.class(args[0]), Class::Imm(_))
            && matches!(self.class(args[1]), Class::Reg);
        let (av, bv) = if swap {
            (args[1], args[0])
        } else {
            (args[0], args[1])
        };
        let c = self.reg(cond)?;
        let a = self.reg(av)?;
        let b = match self.class(bv) {
            Class::Imm(k) if kind == RegKind::B64 => {
                if fits_imm20(i64::from(k as i32)) && fits_imm20(k >> 32) {
                    Src::Imm(k)
                } else {
                    Src::Lit(self.literal(k as u64, 8)?)
                }
            }
            Class::Imm(k) if !fits_imm20(k) => Src::Lit(self.literal(u64::from(k as u32), 4)?),
            _ if kind == RegKind::B64 => match self.src(bv)? {
                Src::Imm(_) => Src::Reg(self.reg(bv)?),
                s => s,
            },
            _ => self.src20(bv)?,
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let words = kind.gprs() as u8;
        let dop = i.def(d, words > 1);
        let cop = i.use_(c.vreg);
        let aop = i.use_(a.vreg);
        for w in 0..words {
            // SEL d, a, b, c  ==  c ? a : b
            let mut refs = vec![
                (Field::Rd, dop, w),
                (Field::Ra, aop, a.offset + w),
                (Field::Ps, cop, 0),
            ];
            let inst = Self::with_b(
                &mut i,
                (Form::SEL_R, Form::SEL_C, Form::SEL_I),
                b,
                w,
                &mut refs,
            )
            .with(Field::Psn, u64::from(swap));
            i.piece(inst, &refs);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A 32-bit select on a compare of a 32-bit integer with zero that only this select reads,
    /// in the compare's block: ptxas's `ICMP.<cc> d, a, b, x` (`d = (x <cc> 0) ? a : b`), one
    /// instruction where `ISETP` + `SEL` were two, and no predicate register (ptxas's code for
    /// corpus-nvcc has 1,578 `ICMP`s, CUB's radix-sort key flips `selp.b32 %r, -1,
    /// -2147483648, %p` on `setp.lt.s32 %p, %k, 0` among them). `a` must be a register or zero
    /// (RZ): a constant first operand with a register second swaps them and negates the
    /// condition; two constants put the first in a register, as the `SEL` would. A bit test
    /// (`(y & m) ==/!= 0` with the `and` read only by it) stays `LOP.AND.Z` + `SEL`
    /// ([`Lowerer::bit_test`]): as an `ICMP` it would put the `and` in a register.
    ///
    /// Trade-off: the compared value, not a predicate, lives from the compare to the select;
    /// the two sit in one block and nothing else reads the predicate, so that is the same
    /// stretch of code, and a predicate (7 of them) is the scarcer register.
    pub(super) fn select_by_icmp(
        &mut self,
        v: Value,
        cond: Value,
        args: [Value; 2],
    ) -> Result<bool, LowerError> {
        let Some(&InstData::Icmp { cc, args: cargs }) = self.def_of(cond) else {
            return Ok(false);
        };
        if self.use_count[cond.index()] != 1 || self.read_elsewhere[cond.index()] {
            return Ok(false);
        }
        // At most two instructions apart, constants not counted (NVVM writes `setp` then
        // `selp`): the compared value then lives hardly longer than it would for the compare.
        // Further apart it holds a register over the stretch where a predicate register held
        // the condition (older corpus without this bound: registers +25, bank conflicts +76,
        // static cycles +2.5 k; with it: registers +46, all but 14 of them MC-GPU's
        // `track_particles` going over an occupancy step, 96 -> 128 registers).
        let (ValueDef::Result(ci, _), ValueDef::Result(si, _)) =
            (self.f.values[cond].def, self.f.values[v].def)
        else {
            return Ok(false);
        };
        if self.inst_pos[si.index()].wrapping_sub(self.inst_pos[ci.index()]) > 2 {
            return Ok(false);
        }
        let ty = self.ty(cargs[0]);
        if !ty.is_int() || ty.bits() != 32 {
            return Ok(false);
        }
        let (x, mut cc) = match (self.class(cargs[0]), self.class(cargs[1])) {
            (Class::Reg, Class::Imm(0)) => (cargs[0], cc),
            (Class::Imm(0), Class::Reg) => (cargs[1], cc.swapped()),
            _ => return Ok(false),
        };
        if matches!(cc, IntCC::Eq | IntCC::Ne) && self.and_read_once(x).is_some() {
            return Ok(false);
        }
        let in_a = |c: Class| matches!(c, Class::Reg | Class::Imm(0));
        let (mut a, mut b) = (args[0], args[1]);
        if !in_a(self.class(a)) && in_a(self.class(b)) {
            std::mem::swap(&mut a, &mut b);
            cc = cc.negated();
        }
        let (code, signed) = cmp_code(cc);
        let xl = self.reg(x)?;
        let al = match self.class(a) {
            Class::Imm(0) => None,
            _ => Some(self.reg(a)?),
        };
        let bs = match self.class(b) {
            Class::Imm(k) => self.imm32(k as u32)?,
            _ => self.src20(b)?,
        };
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let xop = i.use_(xl.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Rc, xop, xl.offset)];
        if let Some(al) = al {
            let aop = i.use_(al.vreg);
            refs.push((Field::Ra, aop, al.offset));
        }
        let inst = Self::with_b(
            &mut i,
            (Form::ICMP_R, Form::ICMP_C, Form::ICMP_I),
            bs,
            0,
            &mut refs,
        )
        .with(Field::Cmp, code)
        .with(Field::Sgn, signed as u64);
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    /// A 32-bit select of a value or zero on a 32-bit integer compare, `(a cc b) ? x : 0` or
    /// `(a cc b) ? 0 : x`, as ptxas writes it where the select sits on a dependency chain:
    /// `ISET.<cc>.AND t, a, b, PT` (all ones or zero in a register) then `LOP.AND d, x, t`,
    /// not `ISETP p` then `SEL d, x, RZ, p`. A predicate is read 13 cycles after its compare
    /// issues, a register 6 (`sched::model`), so the select's result is ready 12 cycles after
    /// the compare's operands where it was 19. rodinia dwt2d's mirrored index steps
    /// (`setp.eq` → `selp %r, %x, 0` → `sub` → the next step's `add`, eight a row) run on
    /// such a chain, as they do in ptxas's code (`ISET.EQ` + `LOP.AND`).
    ///
    /// Trade-off: where the predicate has other readers (dwt2d's other two selects of each
    /// step), its `ISETP` stays and the `ISET` is one instruction more (the `LOP` replaces the
    /// `SEL`); where this select is its only reader, the `ISETP` is never demanded and the
    /// count is the same. The compare's operands, not the predicate, live up to the select.
    /// Selects on one condition in one block share its mask (`masks`), as they would share
    /// the predicate: shfl_scan's vertical scan selects four values on each lane test, and a
    /// mask per select was 12 `ISET`s more. Only within a block, so a mask never lives
    /// longer than the selects of one block need it.
    pub(super) fn select_by_mask(
        &mut self,
        v: Value,
        cond: Value,
        args: [Value; 2],
    ) -> Result<bool, LowerError> {
        let (x, invert) = match (self.class(args[0]), self.class(args[1])) {
            (Class::Reg, Class::Imm(0)) => (args[0], false),
            (Class::Imm(0), Class::Reg) => (args[1], true),
            _ => return Ok(false),
        };
        let Some(&InstData::Icmp { cc, args: cargs }) = self.def_of(cond) else {
            return Ok(false);
        };
        // A predicate that other blocks test again stays a predicate: its `ISETP` is needed
        // there anyway, and a mask per block would be an `ISET` more in each (shfl_scan's
        // vertical scan tests four lane conditions once and selects on them in four blocks:
        // 12 instructions more with masks).
        if self.read_elsewhere[cond.index()] {
            return Ok(false);
        }
        let ty = self.ty(cargs[0]);
        if !ty.is_int() || kind_of(ty) != RegKind::B32 {
            return Ok(false);
        }
        let (mut a, mut b, mut cc) = (cargs[0], cargs[1], cc);
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
            cc = cc.swapped();
        }
        if !matches!(self.class(a), Class::Reg) {
            return Ok(false);
        }
        // A mask test, `(x & m) ==/!= k` with the `and` read only here, is one `LOP.AND.Z`
        // into a predicate ([`Lowerer::bit_test`]); the mask would materialize the `and`
        // and take three instructions where the test and the `SEL` take two (the Sobol
        // direction-vector loops of curand's initialisation: 44 -> 72 registers with the
        // masks, one ISET result live per bit).
        if matches!(cc, IntCC::Eq | IntCC::Ne)
            && matches!(self.class(b), Class::Imm(_))
            && self.and_read_once(a).is_some()
        {
            return Ok(false);
        }
        if invert {
            cc = cc.negated();
        }
        let here = self.cur_ir;
        let built = match self.planning {
            None => self.masks.find_in_block(&(cond, invert), here),
            Some(_) => None,
        };
        let t = match built {
            Some(t) => t,
            None => {
                let t = self.compare_mask(cc, a, b)?;
                if self.planning.is_none() {
                    self.masks.record((cond, invert), here, t);
                }
                t
            }
        };
        let xl = self.reg(x)?;
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let xop = i.use_(xl.vreg);
        let top = i.use_(t);
        let refs = [
            (Field::Rd, dop, 0),
            (Field::Ra, xop, xl.offset),
            (Field::Rb, top, 0),
        ];
        i.piece(sm50::Inst::new(Form::LOP_R), &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    /// `ISET.<cc>.AND t, a, b, PT`: all ones in `t` where `a cc b` holds, zero elsewhere
    /// ([`Lowerer::select_by_mask`]).
    fn compare_mask(&mut self, cc: IntCC, a: Value, b: Value) -> Result<VReg, LowerError> {
        let (code, signed) = cmp_code(cc);
        let al = match self.norm32(a, signed)? {
            Src::Reg(l) => l,
            _ => self.reg(a)?,
        };
        let bs = self.norm32_b(b, signed)?;
        let t = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let top = i.def(t, false);
        let aop = i.use_(al.vreg);
        let mut refs = vec![(Field::Rd, top, 0), (Field::Ra, aop, al.offset)];
        let set = Self::with_b(
            &mut i,
            (Form::ISET_R, Form::ISET_C, Form::ISET_I),
            bs,
            0,
            &mut refs,
        )
        .with(Field::Cmp, code)
        .with(Field::Sgn, signed as u64);
        i.piece(set, &refs);
        self.push(i);
        Ok(t)
    }

    /// A 32-bit select with a constant first operand, without materializing it (ptxas's
    /// shapes): `c ? 0 : b` is `SEL d, RZ, b, c`; `c ? k : b` (k an imm20, b not a constant
    /// or 0) is `SEL d, b|RZ, k, !c`. Returns false when neither applies.
    pub(super) fn select_imm(
        &mut self,
        v: Value,
        cond: Value,
        args: [Value; 2],
    ) -> Result<bool, LowerError> {
        let Class::Imm(ka) = self.class(args[0]) else {
            return Ok(false);
        };
        let (ra, b, negate) = if ka == 0 {
            (None, self.src20(args[1])?, false)
        } else if !fits_imm20(ka) {
            return Ok(false);
        } else {
            match self.class(args[1]) {
                Class::Imm(0) => (None, Src::Imm(ka), true),
                Class::Imm(_) => return Ok(false),
                _ => (Some(self.reg(args[1])?), Src::Imm(ka), true),
            }
        };
        let c = self.reg(cond)?;
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let cop = i.use_(c.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ps, cop, 0)];
        if let Some(a) = ra {
            let aop = i.use_(a.vreg);
            refs.push((Field::Ra, aop, a.offset));
        }
        let inst = Self::with_b(
            &mut i,
            (Form::SEL_R, Form::SEL_C, Form::SEL_I),
            b,
            0,
            &mut refs,
        )
        .with(Field::Psn, negate as u64);
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    /// A predicate operation's other operand as this compare's accumulator, where
    /// [`Lowerer::lower_pred_logic`] left one: `pacc` and the operation in `bop`.
    pub(super) fn take_accumulator(
        &mut self,
        i: &mut Sm50Inst,
        inst: &mut sm50::Inst,
        refs: &mut Vec<(Field, u8, u8)>,
    ) {
        if let Some((bop, acc)) = self.pending_acc.take() {
            let aop = i.use_(acc.vreg);
            refs.push((Field::Pacc, aop, acc.offset));
            inst.set(Field::Bop, bop);
        }
    }

    /// `ISETP.<cc>[.U32].AND p, PT, a, b, PT`. 64-bit equality combines two ISETPs through the
    /// accumulator predicate (low words, then `hi <cc> hi AND/OR p`); the ordered 64-bit compares
    /// are ptxas's `IADD RZ.CC, a.lo, -b.lo` then `ISETP.<cc>.X` on the high words.
    pub(super) fn lower_icmp(
        &mut self,
        v: Value,
        cc: IntCC,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        if let Some(a) = self.outside_shared_window(cc, args) {
            return self.lower_window_pred(v, a);
        }
        if self.bit_test(v, cc, args)? {
            return Ok(());
        }
        let ty = self.ty(args[0]);
        let (mut a, mut b, mut cc) = (args[0], args[1], cc);
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
            cc = cc.swapped();
        }
        let (code, signed) = cmp_code(cc);
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        if kind_of(ty) != RegKind::B64 {
            let al = match self.norm32(a, signed)? {
                Src::Reg(l) => l,
                _ => self.reg(a)?,
            };
            let bs = self.norm32_b(b, signed)?;
            let dop = i.def(d, false);
            let aop = i.use_(al.vreg);
            let mut refs = vec![(Field::Pd0, dop, 0), (Field::Ra, aop, al.offset)];
            let mut inst = Self::with_b(
                &mut i,
                (Form::ISETP_R, Form::ISETP_C, Form::ISETP_I),
                bs,
                0,
                &mut refs,
            )
            .with(Field::Cmp, code)
            .with(Field::Sgn, signed as u64);
            self.take_accumulator(&mut i, &mut inst, &mut refs);
            i.piece(inst, &refs);
        } else {
            let al = self.reg(a)?;
            let ordered = !matches!(cc, IntCC::Eq | IntCC::Ne);
            let bs = match self.src(b)? {
                // An ordered compare keeps a constant whose high word fits ISETP's immediate
                // (ptxas's `IADD32I RZ.CC, a.lo, -k.lo ; ISETP.<cc>.X p, PT, a.hi, k.hi, PT`).
                Src::Imm(k) if ordered && fits_imm20(k >> 32) => Src::Imm(k),
                // An equality whose constant's two words each fit the sign-extended imm20
                // keeps it as an immediate of both ISETPs (`with_b` takes each word): the
                // null tests NVVM writes for placement new (`setp.eq.s64 %p, %rd, 0`, 117 of
                // them in cub's radix-sort downsweep kernel) then cost the two compares only,
                // where a register pair cost two `MOV32I`s more and two registers.
                Src::Imm(k)
                    if !ordered && fits_imm20(i64::from(k as i32)) && fits_imm20(k >> 32) =>
                {
                    Src::Imm(k)
                }
                // Other constants: both words from the literal pool (`c[0x2][off]`, eight
                // aligned bytes; `with_b` reads the word each piece wants), as ptxas, for the
                // two `MOV32I`s and the register pair a materialized constant costs.
                Src::Imm(k) => Src::Lit(self.literal(k as u64, 8)?),
                s => s,
            };
            let dop = i.def(d, true);
            let aop = i.use_(al.vreg);
            let forms = (Form::ISETP_R, Form::ISETP_C, Form::ISETP_I);
            let piece = |i: &mut Sm50Inst, word: u8, code: u64, sgn: bool, bop: u64, acc: bool| {
                let mut refs = vec![(Field::Pd0, dop, 0), (Field::Ra, aop, al.offset + word)];
                if acc {
                    refs.push((Field::Pacc, dop, 0));
                }
                let inst = Self::with_b(i, forms, bs, word, &mut refs)
                    .with(Field::Cmp, code)
                    .with(Field::Sgn, sgn as u64)
                    .with(Field::Bop, bop);
                i.piece(inst, &refs);
            };
            match cc {
                IntCC::Eq => {
                    piece(&mut i, 0, code, false, 0, false);
                    piece(&mut i, 1, code, false, 0, true);
                }
                IntCC::Ne => {
                    piece(&mut i, 0, code, false, 0, false);
                    piece(&mut i, 1, code, false, 1, true);
                }
                _ => {
                    // ptxas's ordered wide compare: `IADD RZ.CC, a.lo, -b.lo` leaves the low
                    // words' borrow (CF) and equality (ZF) in CC, and `ISETP.<cc>.X` on the high
                    // words folds them in. Two dependent instructions instead of the three
                    // ISETPs of an accumulated compare (low, `hi ==`, strict `hi <cc>`); the
                    // cost is CC, which only carry chains use and which is dead here at once.
                    let mut refs = vec![(Field::Ra, aop, al.offset)];
                    let lo = match bs {
                        // a.lo + (2^32 - k.lo): CF is "no borrow", ZF "equal" (k.lo != 0).
                        Src::Imm(k) if k as u32 != 0 => sm50::Inst::new(Form::IADD32I)
                            .with(Field::Imm, u64::from((k as u32).wrapping_neg())),
                        // k.lo = 0: `IADD RZ.CC, a.lo, -RZ` (~0 + 1 carries: never a borrow).
                        Src::Imm(_) => sm50::Inst::new(Form::IADD_R).with(Field::Negb, 1),
                        s => Self::with_b(
                            &mut i,
                            (Form::IADD_R, Form::IADD_C, Form::IADD_I),
                            s,
                            0,
                            &mut refs,
                        )
                        .with(Field::Negb, 1),
                    }
                    .with(Field::Cc, 1);
                    i.piece(lo, &refs);
                    let mut refs = vec![(Field::Pd0, dop, 0), (Field::Ra, aop, al.offset + 1)];
                    let hi = Self::with_b(&mut i, forms, bs, 1, &mut refs)
                        .with(Field::Cmp, code)
                        .with(Field::Sgn, signed as u64)
                        .with(Field::X, 1);
                    i.piece(hi, &refs);
                }
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// The operands of `t` where it is an `and` that only one operand slot reads (a mask
    /// test's `and`, which [`Lowerer::bit_test`] folds into its `LOP.AND.Z|NZ`).
    fn and_read_once(&self, t: Value) -> Option<[Value; 2]> {
        match self.def_of(t) {
            Some(&InstData::Binary {
                op: BinaryOp::And,
                args,
            }) if self.use_count[t.index()] == 1 => Some(args),
            _ => None,
        }
    }

    /// A mask test, `(x & m) ==/!= 0` or, for a one-bit constant `m`, `(x & m) ==/!= m`, on
    /// i8..i32, where nothing else reads the `and`: ptxas's `LOP.AND.Z|NZ p, RZ, x, m` (the
    /// predicate output of the logic op, the result to RZ), one instruction where the `and`
    /// and an `ISETP` were two (NVVM's `and.b32 %r, %x, 4 ; setp.eq.s32 %p, %r, 0` per bit of
    /// quasirandomGenerator's Sobol loop and of every `x & 1` parity test). A mask that is no
    /// imm20 is read from the literal pool (`c[0x2][..]`, as ptxas). Returns false (nothing
    /// emitted) when the shape does not apply.
    fn bit_test(&mut self, v: Value, cc: IntCC, args: [Value; 2]) -> Result<bool, LowerError> {
        if !matches!(cc, IntCC::Eq | IntCC::Ne) {
            return Ok(false);
        }
        let ty = self.ty(args[0]);
        if !ty.is_int() || ty.bits() > 32 {
            return Ok(false);
        }
        for (t, c) in [(args[0], args[1]), (args[1], args[0])] {
            let Some([p, q]) = self.and_read_once(t) else {
                continue;
            };
            let Class::Imm(k) = self.class(c) else {
                continue;
            };
            // The operands as the LOP reads them: `x` in a register, the mask `m` a constant
            // (a narrow value's high bits are unspecified, so it must be a constant within the
            // type; for i32 any source).
            let (x, m) = match (self.class(p), self.class(q)) {
                (_, Class::Imm(m)) => (p, Some(m as u64 & ty.mask())),
                (Class::Imm(m), _) => (q, Some(m as u64 & ty.mask())),
                _ if ty.bits() == 32 && matches!(self.class(p), Class::Reg) => (p, None),
                _ => continue,
            };
            let k = k as u64 & ty.mask();
            // `nz`: the compare holds exactly when `x & m` is not zero.
            let nz = match (k, m) {
                (0, _) => cc == IntCC::Ne,
                (k, Some(m)) if k == m && m.is_power_of_two() => cc == IntCC::Eq,
                _ => continue,
            };
            let xl = self.reg(x)?;
            let ms = match m {
                // LOP's imm20 is sign-extended: `0xfffffff0` is `-0x10`.
                Some(m) => self.imm32(m as u32)?,
                None => self.src(if x == p { q } else { p })?,
            };
            let d = self.new_vreg(RegKind::Pred);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(d, false);
            let xop = i.use_(xl.vreg);
            let mut refs = vec![(Field::Pd, dop, 0), (Field::Ra, xop, xl.offset)];
            let pop = if nz {
                sm50::values::lop::pop::NZ
            } else {
                sm50::values::lop::pop::Z
            };
            let inst = Self::with_b(
                &mut i,
                (Form::LOP_R, Form::LOP_C, Form::LOP_I),
                ms,
                0,
                &mut refs,
            )
            .with(Field::Op, sm50::values::lop::op::AND)
            .with(Field::Pop, pop);
            i.piece(inst, &refs);
            self.push(i);
            self.set_loc(v, Loc { vreg: d, offset: 0 });
            return Ok(true);
        }
        Ok(false)
    }

    /// `icmp.ne (and a, ~0xffffff), (and (cvta.shared 0), ~0xffffff)` on i64, `ir::build`'s
    /// test "generic address `a` lies outside the shared window" (`isspacep.global`'s half,
    /// the generic float atomics' branch): `a`, when `args` has that shape.
    pub(super) fn outside_shared_window(&self, cc: IntCC, args: [Value; 2]) -> Option<Value> {
        if cc != IntCC::Ne || self.ty(args[0]) != Type::I64 {
            return None;
        }
        let window_mask = |v: Value| {
            matches!(self.def_of(v), Some(InstData::Iconst { imm, .. })
                if *imm as i64 == !0xff_ffff)
        };
        let masked = |v: Value| match self.def_of(v) {
            Some(InstData::Binary {
                op: BinaryOp::And,
                args: [x, m],
            }) if window_mask(*m) => Some(*x),
            _ => None,
        };
        let shared_base = |v: Value| {
            matches!(self.def_of(v), Some(InstData::Cvta {
                dir: CvtaDir::ToGeneric,
                space: Space::Shared,
                arg,
                ..
            }) if matches!(self.def_of(*arg), Some(InstData::Iconst { imm: 0, .. })))
        };
        let (a, b) = (masked(args[0])?, masked(args[1])?);
        if shared_base(b) {
            Some(a)
        } else if shared_base(a) {
            Some(b)
        } else {
            None
        }
    }

    /// Generic address `a` (a pair) outside the shared window, as ptxas tests it for generic
    /// atomics: `LEA RZ.CC, a.lo, RZ` then `LEA.HI.X P, RZ, a.lo, RZ, a.hi`, whose `Plg` is
    /// true exactly outside the window (the window predicate generic accesses take; see the
    /// module essay of `lower` and `sim`). Two instructions instead of the masks, the window
    /// base's materialization and a 64-bit compare.
    pub(super) fn lower_window_pred(&mut self, v: Value, a: Value) -> Result<(), LowerError> {
        let al = self.reg(a)?;
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        window_test_pieces(&mut i, aop, al.offset, dop);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `cvta` of the global space is the identity; shared/local add or subtract the window
    /// base from `c[0x0][0x0]` / `c[0x0][0x4]` (sm50-isa.md §4). Window addresses are below
    /// 4 GB, so the high word of the result is zero for every address inside the window
    /// (PTX leaves the rest undefined).
    pub(super) fn lower_cvta(
        &mut self,
        v: Value,
        dir: CvtaDir,
        space: Space,
        ty: Type,
        arg: Value,
    ) -> Result<(), LowerError> {
        let window = match space {
            Space::Global => {
                let l = self.reg(arg)?;
                self.set_loc(v, l);
                return Ok(());
            }
            Space::Shared => 0x0,
            Space::Local => 0x4,
            Space::Const => return self.lower_cvta_const(v, dir, ty, arg),
            s => return Err(self.unsupported(format!("cvta of the .{} space", s.name()))),
        };
        if space == Space::Local && dir == CvtaDir::ToGeneric {
            if let Some(k) = self.frame_offset(arg) {
                return self.lower_cvta_local_frame(v, ty, k);
            }
        }
        let a = self.reg(arg)?;
        let kind = kind_of(ty);
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, kind == RegKind::B64);
        let aop = i.use_(a.vreg);
        let from = (dir == CvtaDir::FromGeneric) as u64;
        let add = sm50::Inst::new(Form::IADD_C)
            .with(Field::Cbo, window / 4)
            .with(Field::Negb, from);
        i.piece(add, &[(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)]);
        if kind == RegKind::B64 {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `v` as `MOV32I`s of 0, one per word of `words`, each carrying that word's relocation
    /// (`var` names the variable where the word is one of its address's), for the loader or
    /// the linker to patch: a module variable's address, a kernel's descriptor.
    pub(in crate::lower) fn relocated_words(
        &mut self,
        v: Value,
        kind: RegKind,
        var: crate::ir::GlobalVar,
        words: &[RelocWord],
    ) {
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        for (w, &word) in (0u8..).zip(words) {
            i.piece(
                sm50::Inst::new(Form::MOV32I).with(Field::Imm, 0),
                &[(Field::Rd, dop, w)],
            );
            if let Some(p) = i.pieces.last_mut().filter(|_| word != RelocWord::Zero) {
                p.reloc = Some(super::super::Reloc { var, word });
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
    }

    /// `cvta.local` of a `.local` variable's address (a known frame offset `k`, as nvcc's
    /// `mov %SPL, __local_depot0; cvta.local %SP, %SPL` makes it): the stack pointer plus the
    /// local window base, `IADD d, R1, c[0x0][0x4]` (ptxas 11.8 writes the same sum as
    /// `LOP.OR`), then `+ k` when it is not 0; the high word of a 64-bit one is zero. The
    /// offset is never materialized in a register.
    pub(super) fn lower_cvta_local_frame(
        &mut self,
        v: Value,
        ty: Type,
        k: i64,
    ) -> Result<(), LowerError> {
        let kind = kind_of(ty);
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
        // c[0x0][0x4], the local window base (the offset field counts words).
        let base = sm50::Inst::new(Form::IADD_C).with(Field::Cbo, 1);
        i.piece(base, &[(Field::Rd, dop, 0), (Field::Ra, sp, 0)]);
        if k != 0 {
            let add = sm50::Inst::new(Form::IADD32I).with(Field::Imm, k as u64 & 0xffff_ffff);
            i.piece(add, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
        }
        if kind == RegKind::B64 {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A `.local` variable's address `k` in the frame as a value: the absolute local address
    /// `R1 + k` (`MOV d, R1` for 0, else `IADD32I d, R1, k`), the high word of a 64-bit one
    /// zero, as ptxas 11.8 makes it (probe: `mov.u64 %rd, arr` passed to a subroutine is
    /// `MOV R6, R1 ; MOV R7, RZ`, which the callee reads with `LDL [R6]`). A `.local`
    /// address in a register is absolute in every function, so it names the same bytes in
    /// a callee, whose R1 lies below its caller's.
    pub(super) fn lower_local_address(
        &mut self,
        v: Value,
        kind: RegKind,
        k: i64,
    ) -> Result<(), LowerError> {
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, kind == RegKind::B64);
        let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
        let inst = if k == 0 {
            sm50::Inst::new(Form::MOV_R)
        } else {
            sm50::Inst::new(Form::IADD32I).with(Field::Imm, k as u64 & 0xffff_ffff)
        };
        let field = if k == 0 { Field::Rb } else { Field::Ra };
        i.piece(inst, &[(Field::Rd, dop, 0), (field, sp, 0)]);
        if kind == RegKind::B64 {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `cvta.const` / `cvta.to.const` as ptxas 11.8 emits them: the 64-bit const window base
    /// `c[0x0][0xd0]` (low word) / `c[0x0][0xd4]` (high word) added to or subtracted from
    /// the address, `IADD.CC` then `IADD.X` (one `IADD` for `.u32`).
    pub(super) fn lower_cvta_const(
        &mut self,
        v: Value,
        dir: CvtaDir,
        ty: Type,
        arg: Value,
    ) -> Result<(), LowerError> {
        let a = self.reg(arg)?;
        let kind = kind_of(ty);
        let wide = kind == RegKind::B64;
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // Word w of the result is written after word w of the source is read, and the
        // high IADD reads no low word: a late def, as `lower_add`.
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let from = (dir == CvtaDir::FromGeneric) as u64;
        for w in 0..if wide { 2 } else { 1 } {
            let mut add = sm50::Inst::new(Form::IADD_C)
                .with(Field::Cbo, (0xd0 + 4 * w as u64) / 4)
                .with(Field::Negb, from);
            if wide {
                add.set(if w == 0 { Field::Cc } else { Field::X }, 1);
            }
            i.piece(add, &[(Field::Rd, dop, w), (Field::Ra, aop, a.offset + w)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}

/// `i`'s pieces reading `d`'s words (one or two) from constant bank `bank` at byte
/// `offset`: a `MOV_C` per word, the high word at `offset + 4`.
pub(super) fn bank_read(i: &mut Sm50Inst, d: VReg, bank: u8, offset: u32) {
    let words = d.kind.gprs() as u8;
    let dop = i.def(d, words > 1);
    for w in 0..words {
        let inst = sm50::Inst::new(Form::MOV_C)
            .with(Field::Cbk, u64::from(bank))
            .with(Field::Cbo, u64::from(offset / 4) + u64::from(w));
        i.piece(inst, &[(Field::Rd, dop, w)]);
    }
}

/// The key of an immediate in [`Lowerer::imm_regs`]: its kind and the bits a register of
/// that kind holds.
fn imm_key(kind: RegKind, k: i64) -> (RegKind, u64) {
    let bits = if kind == RegKind::B32 {
        k as u64 & 0xffff_ffff
    } else {
        k as u64
    };
    (kind, bits)
}
