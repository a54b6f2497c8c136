//! Selection of barriers with a reduction (`bar.red`) and barriers with register operands
//! (`barrier`/`bar.sync` with a register id or thread count).
//!
//! In: one IR barrier instruction. Out: `BAR` forms and the predicate or register moves around
//! them.

use super::*;

impl<'a> Lowerer<'a> {
    /// `bar.red` as ptxas 11.8: `BAR.RED.{POPC,AND,OR} id[, count], {!}P`, `MEMBAR.CTA`, then
    /// `B2R.RESULT Rd` (the count) or `B2R.RESULT RZ, Pd` (the vote). The three stay in order
    /// (BAR, MEMBAR and B2R are scheduling fences).
    pub(super) fn lower_barrier_red(
        &mut self,
        v: Value,
        op: ir::BarRedOp,
        id: u8,
        count: Option<u32>,
        arg: Value,
    ) -> Result<(), LowerError> {
        // `bar.red ..., !c` reads c through BAR.RED's own negation, as ptxas.
        let (arg, neg) = match self.def_of(arg) {
            Some(&InstData::Unary {
                op: ir::UnaryOp::Not,
                arg: inner,
            }) if self.ty(inner) == Type::Pred => (inner, true),
            _ => (arg, false),
        };
        let p = self.reg(arg)?;
        let mut bar = Sm50Inst::new(Role::Plain);
        let pop = bar.use_(p.vreg);
        let ro = match op {
            ir::BarRedOp::Popc => 0,
            ir::BarRedOp::And => 1,
            ir::BarRedOp::Or => 2,
        };
        let inst = sm50::Inst::new(Form::BAR_RED)
            .with(Field::Id, u64::from(id))
            .with(Field::Cnt, u64::from(count.unwrap_or(0)))
            .with(Field::Ro, ro)
            .with(Field::Bpn, neg as u64);
        bar.piece(inst, &[(Field::Bp, pop, 0)]);
        self.push(bar);
        let mut fence = Sm50Inst::new(Role::Plain);
        fence.piece(sm50::Inst::new(Form::MEMBAR), &[]);
        self.push(fence);
        let popc = op == ir::BarRedOp::Popc;
        let d = self.new_vreg(if popc { RegKind::B32 } else { RegKind::Pred });
        let mut b2r = Sm50Inst::new(Role::Plain);
        let dop = b2r.def(d, false);
        let field = if popc { Field::Rd } else { Field::Pd };
        b2r.piece(sm50::Inst::new(Form::B2R), &[(field, dop, 0)]);
        self.push(b2r);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A barrier with its number and/or count in a register, as ptxas 11.8: `BAR.SYNC Ra`
    /// / `BAR.SYNC id, Rb` / `BAR.ARV Ra, cnt`; both in registers, one register holding both
    /// (`BFI t, count, 0xc10, id`: the count in bits 16..27) named as Ra and Rb; `bar.red`
    /// as `BAR.RED` of the same forms. Then `MEMBAR.CTA` (ptxas follows every such BAR with
    /// one), and for `bar.red` the `B2R.RESULT` that reads the reduction.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_barrier_reg(
        &mut self,
        results: &[Value],
        red: Option<ir::BarRedOp>,
        wait: bool,
        id: Option<u8>,
        count: Option<u32>,
        count_reg: bool,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let mut rest = args.iter().copied();
        let mut next = || {
            rest.next()
                .ok_or_else(|| LowerError::Internal("barrier operands".into()))
        };
        let id_reg = if id.is_none() { Some(next()?) } else { None };
        let cnt_reg = if count_reg { Some(next()?) } else { None };
        let pred = if red.is_some() { Some(next()?) } else { None };
        let id_loc = id_reg.map(|v| self.reg(v)).transpose()?;
        let cnt_loc = cnt_reg.map(|v| self.reg(v)).transpose()?;
        let mut bar = Sm50Inst::new(Role::Plain);
        let mut refs = Vec::new();
        let form = match (id_loc, cnt_loc) {
            (Some(a), Some(c)) => {
                let t = self.new_vreg(RegKind::B32);
                let mut bfi = Sm50Inst::new(Role::Plain);
                let top = bfi.def(t, false);
                let cop = bfi.use_(c.vreg);
                let aop = bfi.use_(a.vreg);
                bfi.piece(
                    sm50::Inst::new(Form::BFI_I).with(Field::ImmImm20s, 0xc10),
                    &[
                        (Field::Rd, top, 0),
                        (Field::Ra, cop, c.offset),
                        (Field::Rc, aop, a.offset),
                    ],
                );
                self.push(bfi);
                let o = bar.use_(t);
                refs.push((Field::Ra, o, 0));
                refs.push((Field::Rb, o, 0));
                if red.is_some() {
                    Form::BARR_REDRR
                } else {
                    Form::BARR_RR
                }
            }
            (Some(a), None) => {
                let o = bar.use_(a.vreg);
                refs.push((Field::Ra, o, a.offset));
                if red.is_some() {
                    Form::BARR_REDRA
                } else {
                    Form::BARR_RA
                }
            }
            (None, Some(c)) => {
                let o = bar.use_(c.vreg);
                refs.push((Field::Rb, o, c.offset));
                if red.is_some() {
                    Form::BARR_REDRB
                } else {
                    Form::BARR_RB
                }
            }
            (None, None) => return Err(LowerError::Internal("BarrierReg with no register".into())),
        };
        let mut inst = sm50::Inst::new(form);
        if id_loc.is_none() {
            inst.set(Field::Id, u64::from(id.unwrap_or(0)));
        }
        if cnt_loc.is_none() {
            inst.set(Field::Cnt, u64::from(count.unwrap_or(0)));
        }
        if let (Some(op), Some(arg)) = (red, pred) {
            // `bar.red ..., !c` reads c through BAR.RED's own negation, as ptxas.
            let (arg, neg) = match self.def_of(arg) {
                Some(&InstData::Unary {
                    op: ir::UnaryOp::Not,
                    arg: inner,
                }) if self.ty(inner) == Type::Pred => (inner, true),
                _ => (arg, false),
            };
            let p = self.reg(arg)?;
            let pop = bar.use_(p.vreg);
            refs.push((Field::Bp, pop, 0));
            let ro = match op {
                ir::BarRedOp::Popc => 0,
                ir::BarRedOp::And => 1,
                ir::BarRedOp::Or => 2,
            };
            inst.set(Field::Ro, ro);
            inst.set(Field::Bpn, neg as u64);
        } else {
            inst.set(Field::Mode, u64::from(!wait));
        }
        bar.piece(inst, &refs);
        self.push(bar);
        let mut fence = Sm50Inst::new(Role::Plain);
        fence.piece(sm50::Inst::new(Form::MEMBAR), &[]);
        self.push(fence);
        if let Some(op) = red {
            let popc = op == ir::BarRedOp::Popc;
            let d = self.new_vreg(if popc { RegKind::B32 } else { RegKind::Pred });
            let mut b2r = Sm50Inst::new(Role::Plain);
            let dop = b2r.def(d, false);
            let field = if popc { Field::Rd } else { Field::Pd };
            b2r.piece(sm50::Inst::new(Form::B2R), &[(field, dop, 0)]);
            self.push(b2r);
            let v = results
                .first()
                .copied()
                .ok_or_else(|| LowerError::Internal("bar.red result".into()))?;
            self.set_loc(v, Loc { vreg: d, offset: 0 });
        }
        Ok(())
    }
}
