//! Bit-field operations ([`BitOp`], all on `i32`) and the cycle counters, as ptxas 11.8 emits
//! them for sm_50 (read from its output):
//!
//! ```text
//! clz       FLO.U32 t, a ; IADD32I d, -t, 0x1f     (FLO of 0 is all ones: 31 - (-1) = 32)
//! popc      POPC d, a
//! brev      BFE.U32.BREV d, a, 0x2000              (the whole word, reversed)
//! bfind     FLO[.U32][.SH] d, a
//! bfe       BFE[.U32] d, a, pos | len << 8          (constants: one immediate)
//!           BFI ctl, len, 0x808, pos ; BFE d, a, ctl  (registers: build the control word,
//!                                                    once per (pos, len) where it dominates)
//! bfi       BFI d, a, ctl, b                        (ctl as for bfe)
//! prmt      PRMT{.mode} d, a, sel, b                (PTX's b goes in the C slot)
//! vabsdiff4 VABSDIFF4.{U8,S8}.U8{.ACC} d, a, b, c   (c: RZ without .ACC)
//! cvt.sat   I2I.<dt>.<U32|S32>.SAT d, a              (32-bit sources)
//! mad.hi.sat IMAD.HI.SAT d, a, b, c                  (.s32)
//! video     VADD/VABSDIFF/VMNMX/VSET/VSHL/VSHR/VMAD d, a.sel, b.sel, c  (c: RZ without a
//!           secondary op or merge; vsub = VADD with -b; see `video_inst`)
//! %clock    CS2R d, SR_CLOCKLO
//! %clock64  CS2R hi, SR_CLOCKHI ; CS2R lo, SR_CLOCKLO ; ISETP.LT p, lo, RZ ; @!p CS2R hi, SR_CLOCKHI
//! ```
//!
//! BFE and BFI read only the low 8 bits of each control byte, which is PTX's `& 0xff` of
//! `pos` and `len`; a constant pair is folded into the immediate. `%clock64` re-reads the high
//! word when the low word's top bit is clear (it may have just wrapped), as ptxas does.

use super::{Lowerer, Src};
use crate::ir::video::{VideoKind, VideoOp, VideoOp2};
use crate::ir::{BitOp, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::{RegKind, VReg};
use crate::sm50::{self, Field, Form};

/// A BFE/BFI control word: an immediate, or a register.
#[derive(Clone, Copy)]
enum Ctl {
    Imm(i64),
    Reg(VReg),
}

impl<'a> Lowerer<'a> {
    /// One single-source piece `form d, B` (FLO, POPC) with B from `x`.
    fn b_only(
        &mut self,
        i: &mut Sm50Inst,
        forms: (Form, Form, Form),
        d: (u8, u8),
        x: Value,
        flags: &[(Field, u64)],
    ) -> Result<(), LowerError> {
        let s = self.src20(x)?;
        let mut refs = vec![(Field::Rd, d.0, d.1)];
        let mut inst = Self::with_b(i, forms, s, 0, &mut refs);
        for &(f, v) in flags {
            inst.set(f, v);
        }
        i.piece(inst, &refs);
        Ok(())
    }

    /// The BFE/BFI control word `pos | len << 8`: an immediate when both are constants,
    /// else `BFI ctl, len, 0x808, pos` as an instruction of its own, shared by every
    /// bit-field operation on the same `(pos, len)` in a block its block dominates.
    ///
    /// Trade-off: cub's radix-sort kernels extract the current digit with
    /// `bfe.u32 %r, %key, %bit, %len` (both kernel parameters) once per key, 156 times in a
    /// downsweep kernel; one control word per extraction cost 154 `BFI`s where ptxas builds
    /// one. The shared word is one register live from its first use to its last, where the
    /// per-operation words kept `pos` and `len` live over the same span instead (two
    /// registers), so sharing never raises the pressure there.
    fn bit_control(&mut self, pos: Value, len: Value) -> Result<Ctl, LowerError> {
        if let (Some(p), Some(l)) = (self.imm_of(pos), self.imm_of(len)) {
            return Ok(Ctl::Imm((p & 0xff) | (l & 0xff) << 8));
        }
        let here = self.cur_ir;
        if self.planning.is_none() {
            if let Some(t) = self.bit_ctls.find(&(pos, len), here, &self.doms) {
                return Ok(Ctl::Reg(t));
            }
        }
        let pl = self.reg(pos)?;
        let ll = self.reg(len)?;
        let t = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let top = i.def(t, false);
        let pop = i.use_(pl.vreg);
        let lop = i.use_(ll.vreg);
        i.piece(
            sm50::Inst::new(Form::BFI_I).with(Field::ImmImm20s, 0x808),
            &[
                (Field::Rd, top, 0),
                (Field::Ra, lop, ll.offset),
                (Field::Rc, pop, pl.offset),
            ],
        );
        self.push(i);
        if self.planning.is_none() {
            self.bit_ctls.record((pos, len), here, t);
        }
        Ok(Ctl::Reg(t))
    }

    /// A BFE/BFI piece (`forms`: register and immediate) with B = the control word.
    fn with_ctl(
        i: &mut Sm50Inst,
        forms: (Form, Form),
        ctl: Ctl,
        refs: &mut Vec<(Field, u8, u8)>,
    ) -> sm50::Inst {
        match ctl {
            Ctl::Imm(k) => sm50::Inst::new(forms.1).with_signed(Field::ImmImm20s, k),
            Ctl::Reg(t) => {
                let op = i.use_(t);
                refs.push((Field::Rb, op, 0));
                sm50::Inst::new(forms.0)
            }
        }
    }

    /// `v` as a compile-time integer, if it is one.
    pub(super) fn imm_of(&self, v: Value) -> Option<i64> {
        match self.class(v) {
            super::Class::Imm(k) => Some(k),
            _ => None,
        }
    }

    // Long by design: the dispatch over `BitOp`, one short arm per operation.
    pub(super) fn lower_bits(
        &mut self,
        v: Value,
        op: BitOp,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let arg = |k: usize| {
            args.get(k)
                .copied()
                .ok_or_else(|| LowerError::Internal(format!("{v}: missing operand")))
        };
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        // Sequences with a temporary make every def early (see `inst`).
        let multi = matches!(op, BitOp::Clz);
        let dop = i.def(d, multi);
        let flo = (Form::FLO_R, Form::FLO_C, Form::FLO_I);
        match op {
            BitOp::Clz => {
                let t = self.new_vreg(RegKind::B32);
                let top = i.def(t, true);
                self.b_only(&mut i, flo, (top, 0), arg(0)?, &[])?;
                let sub = sm50::Inst::new(Form::IADD32I)
                    .with(Field::Nega, 1)
                    .with(Field::Imm, 0x1f);
                i.piece(sub, &[(Field::Rd, dop, 0), (Field::Ra, top, 0)]);
            }
            BitOp::Popc => {
                let forms = (Form::POPC_R, Form::POPC_C, Form::POPC_I);
                self.b_only(&mut i, forms, (dop, 0), arg(0)?, &[])?;
            }
            BitOp::Bfind { signed, shiftamt } => {
                let flags = [(Field::Sgn, signed as u64), (Field::Sh, shiftamt as u64)];
                self.b_only(&mut i, flo, (dop, 0), arg(0)?, &flags)?;
            }
            BitOp::Brev => {
                let a = self.reg(arg(0)?)?;
                let aop = i.use_(a.vreg);
                let inst = sm50::Inst::new(Form::BFE_I)
                    .with(Field::Brev, 1)
                    .with(Field::ImmImm20s, 0x2000);
                i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)]);
            }
            BitOp::Bfe { signed } => {
                let a = self.reg(arg(0)?)?;
                let ctl = self.bit_control(arg(1)?, arg(2)?)?;
                let aop = i.use_(a.vreg);
                let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)];
                let forms = (Form::BFE_R, Form::BFE_I);
                let inst =
                    Self::with_ctl(&mut i, forms, ctl, &mut refs).with(Field::Sgn, signed as u64);
                i.piece(inst, &refs);
            }
            BitOp::Bfi => {
                let a = self.reg(arg(0)?)?;
                let b = self.reg(arg(1)?)?;
                let ctl = self.bit_control(arg(2)?, arg(3)?)?;
                let aop = i.use_(a.vreg);
                let bop = i.use_(b.vreg);
                let mut refs = vec![
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, a.offset),
                    (Field::Rc, bop, b.offset),
                ];
                let forms = (Form::BFI_R, Form::BFI_I);
                let inst = Self::with_ctl(&mut i, forms, ctl, &mut refs);
                i.piece(inst, &refs);
            }
            BitOp::Prmt { mode } => {
                let a = self.reg(arg(0)?)?;
                let b = self.reg(arg(1)?)?;
                // Only the selector's low 16 bits count.
                let sel = match self.imm_of(arg(2)?) {
                    Some(k) => Src::Imm(k & 0xffff),
                    None => self.src20(arg(2)?)?,
                };
                let aop = i.use_(a.vreg);
                let bop = i.use_(b.vreg);
                let mut refs = vec![
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, a.offset),
                    (Field::Rc, bop, b.offset),
                ];
                let forms = (Form::PRMT_R, Form::PRMT_C, Form::PRMT_I);
                let inst =
                    Self::with_b(&mut i, forms, sel, 0, &mut refs).with(Field::Mode, mode as u64);
                i.piece(inst, &refs);
            }
            BitOp::Vabsdiff4 { signed_a, acc } => {
                let a = self.reg(arg(0)?)?;
                let b = self.reg(arg(1)?)?;
                let aop = i.use_(a.vreg);
                let bop = i.use_(b.vreg);
                let mut refs = vec![
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, a.offset),
                    (Field::Rb, bop, b.offset),
                ];
                if acc {
                    let c = self.reg(arg(2)?)?;
                    let cop = i.use_(c.vreg);
                    refs.push((Field::Rc, cop, c.offset));
                }
                let inst = sm50::Inst::new(Form::VABSDIFF4)
                    .with(Field::As, signed_a as u64)
                    .with(Field::Red, acc as u64);
                i.piece(inst, &refs);
            }
            BitOp::Video(v) => {
                // As ptxas: a zero operand is RZ; a small constant B the 16-bit immediate
                // (U16, or S16 for a signed B, non-negative in both), other constants a
                // register.
                let mut refs = vec![(Field::Rd, dop, 0)];
                let mut operand = |this: &mut Self, x: Value, field: Field| {
                    if this.imm_of(x) != Some(0) {
                        let l = this.reg(x)?;
                        refs.push((field, i.use_(l.vreg), l.offset));
                    }
                    Ok::<(), LowerError>(())
                };
                operand(self, arg(0)?, Field::Ra)?;
                let shift = matches!(v.kind, VideoKind::Shl { .. } | VideoKind::Shr { .. });
                let limit = if v.b_signed && !shift { 0x7fff } else { 0xffff };
                // VSET's immediate form is not modelled (isa/sm50.isa): a register.
                let set = matches!(v.kind, VideoKind::Set { .. });
                let imm = self
                    .imm_of(arg(1)?)
                    .filter(|&k| !set && v.bsel == 6 && (1..=limit).contains(&k));
                if imm.is_none() {
                    operand(self, arg(1)?, Field::Rb)?;
                }
                if v.arity() == 3 {
                    operand(self, arg(2)?, Field::Rc)?;
                }
                i.piece(video_inst(v, imm), &refs);
            }
            BitOp::SatCvt {
                src_signed,
                dst_bits,
                dst_signed,
            } => {
                // I2I.<dt>.<st>.SAT d, a (type codes: 0/1/2 = 8/16/32 bits, +4 signed).
                let code = |bits: u8, signed: bool| {
                    u64::from(bits.trailing_zeros() - 3) | (u64::from(signed) << 2)
                };
                let a = self.reg(arg(0)?)?;
                let aop = i.use_(a.vreg);
                let inst = sm50::Inst::new(Form::I2I_R)
                    .with(Field::Dt, code(dst_bits, dst_signed))
                    .with(Field::St, code(32, src_signed))
                    .with(Field::Sat, 1);
                i.piece(inst, &[(Field::Rd, dop, 0), (Field::Rb, aop, a.offset)]);
            }
            BitOp::MadHiSat => {
                // IMAD.HI.SAT d, a, b, c (ptxas 11.8's mad.hi.sat.s32).
                let a = self.reg(arg(0)?)?;
                let b = self.reg(arg(1)?)?;
                let c = self.reg(arg(2)?)?;
                let aop = i.use_(a.vreg);
                let bop = i.use_(b.vreg);
                let cop = i.use_(c.vreg);
                let inst = sm50::Inst::new(Form::IMAD_R)
                    .with(Field::Sa, 1)
                    .with(Field::Sb, 1)
                    .with(Field::Hi, 1)
                    .with(Field::Sat, 1);
                i.piece(
                    inst,
                    &[
                        (Field::Rd, dop, 0),
                        (Field::Ra, aop, a.offset),
                        (Field::Rb, bop, b.offset),
                        (Field::Rc, cop, c.offset),
                    ],
                );
            }
            BitOp::Lop3 => {
                // LOP3.LUT d, a, b, c, lut (ptxas 11.8's form: three registers).
                let Some(lut) = self.imm_of(arg(3)?) else {
                    return Err(LowerError::Internal(
                        "lop3 with a lookup table in a register".into(),
                    ));
                };
                let a = self.reg(arg(0)?)?;
                let b = self.reg(arg(1)?)?;
                let c = self.reg(arg(2)?)?;
                let aop = i.use_(a.vreg);
                let bop = i.use_(b.vreg);
                let cop = i.use_(c.vreg);
                let inst = sm50::Inst::new(Form::LOP3_R).with(Field::Lut, lut as u64 & 0xff);
                i.piece(
                    inst,
                    &[
                        (Field::Rd, dop, 0),
                        (Field::Ra, aop, a.offset),
                        (Field::Rb, bop, b.offset),
                        (Field::Rc, cop, c.offset),
                    ],
                );
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `%clock` / `%clock64` (see the module essay).
    pub(super) fn lower_clock(&mut self, v: Value, wide: bool) -> Result<(), LowerError> {
        self.lower_counter(v, 0x50, wide.then_some(0x51))
    }

    /// A counter read with CS2R: the 32-bit special register `lo`, or with `hi` the 64-bit
    /// pair read as ptxas 11.8 reads `%clock64`, `%globaltimer` and `%pmN_64`: the high
    /// word, the low word, and the high word again when the low word's top bit is clear
    /// (the low word may have wrapped between the two reads).
    pub(super) fn lower_counter(
        &mut self,
        v: Value,
        lo: u64,
        hi: Option<u64>,
    ) -> Result<(), LowerError> {
        let cs2r = |sr: u64| sm50::Inst::new(Form::CS2R).with(Field::Sr, sr);
        let mut i = Sm50Inst::new(Role::Plain);
        let wide = hi.is_some();
        let d = self.new_vreg(if wide { RegKind::B64 } else { RegKind::B32 });
        let hi = hi.unwrap_or(0);
        if !wide {
            let dop = i.def(d, false);
            i.piece(cs2r(lo), &[(Field::Rd, dop, 0)]);
        } else {
            let dop = i.def(d, true);
            let p = self.new_vreg(RegKind::Pred);
            let pop = i.def(p, true);
            i.piece(cs2r(hi), &[(Field::Rd, dop, 1)]);
            i.piece(cs2r(lo), &[(Field::Rd, dop, 0)]);
            // ISETP.LT.AND p, PT, lo, RZ, PT
            let isetp = sm50::Inst::new(Form::ISETP_R)
                .with(Field::Cmp, sm50::values::isetp::cmp::LT)
                .with(Field::Sgn, 1);
            i.piece(isetp, &[(Field::Pd0, pop, 0), (Field::Ra, dop, 0)]);
            let again = cs2r(hi).with(Field::Pgn, 1);
            i.piece(again, &[(Field::Rd, dop, 1), (Field::Pg, pop, 0)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}

/// The one SASS instruction of a scalar video operation, operands unset (see `ir::video`):
/// `vsub` is `VADD` with B negated, `vmin`/`vmax` `VMNMX` (`.MX` = max), `.po` both `VMAD`
/// negation bits; bit 54 (`nud`/`sd`) is the destination's sign.
/// With `imm`, the immediate-B form (`_I`) holding it.
fn video_inst(v: VideoOp, imm: Option<i64>) -> sm50::Inst {
    let vop = match v.op2 {
        VideoOp2::Merge { pos: 16, len: 16 } => 0,
        VideoOp2::Merge { len: 16, .. } => 1,
        VideoOp2::Merge { pos: 0, .. } => 2,
        VideoOp2::Merge { .. } => 3,
        VideoOp2::Add => 4,
        VideoOp2::Min => 5,
        VideoOp2::Max => 6,
        VideoOp2::None => 7,
    };
    let base = |form: Form| {
        let i = match imm {
            None => sm50::Inst::new(form).with(Field::Sb, u64::from(v.bsel)),
            Some(k) => sm50::Inst::new(match form {
                Form::VADD => Form::VADD_I,
                Form::VABSDIFF => Form::VABSDIFF_I,
                Form::VMNMX => Form::VMNMX_I,
                Form::VSHL => Form::VSHL_I,
                Form::VSHR => Form::VSHR_I,
                Form::VMAD32 => Form::VMAD32_I,
                _ => Form::VMAD_I,
            })
            .with(Field::Imm, k as u64 & 0xffff),
        };
        i.with(Field::Sa, u64::from(v.asel))
            .with(Field::As, v.a_signed as u64)
    };
    // The forms with a signed B, a secondary op, a destination sign and .SAT.
    let full = |form: Form, sign: Field| {
        base(form)
            .with(Field::Bs, v.b_signed as u64)
            .with(Field::Vop, vop)
            .with(sign, v.d_signed as u64)
            .with(Field::Sat, v.sat as u64)
    };
    match v.kind {
        VideoKind::Add => full(Form::VADD, Field::Nud),
        VideoKind::Sub => full(Form::VADD, Field::Nud).with(Field::Negb, 1),
        VideoKind::Absdiff => full(Form::VABSDIFF, Field::Sd),
        VideoKind::Min => full(Form::VMNMX, Field::Nud),
        VideoKind::Max => full(Form::VMNMX, Field::Nud).with(Field::Mx, 1),
        VideoKind::Shl { wrap } | VideoKind::Shr { wrap } => {
            let form = if matches!(v.kind, VideoKind::Shl { .. }) {
                Form::VSHL
            } else {
                Form::VSHR
            };
            base(form)
                .with(Field::W, wrap as u64)
                .with(Field::Vop, vop)
                .with(Field::Nud, v.d_signed as u64)
                .with(Field::Sat, v.sat as u64)
        }
        VideoKind::Set { cmp } => base(Form::VSET)
            .with(Field::Bs, v.b_signed as u64)
            .with(Field::Vop, vop)
            .with(Field::Cmp, u64::from(cmp)),
        VideoKind::Mad {
            scale,
            neg_ab,
            neg_c,
            po,
        } => {
            // A 32-bit operand makes it the variable-latency VMAD (see isa/sm50.isa).
            let wide = v.asel == 6 || (imm.is_none() && v.bsel == 6);
            base(if wide { Form::VMAD32 } else { Form::VMAD })
                .with(Field::Bs, v.b_signed as u64)
                .with(
                    Field::Scale,
                    match scale {
                        7 => 1,
                        15 => 2,
                        _ => 0,
                    },
                )
                .with(Field::Negab, (neg_ab || po) as u64)
                .with(Field::Negc, (neg_c || po) as u64)
                .with(Field::Sat, v.sat as u64)
        }
    }
}
