//! Integer multiplication that is not a power of two: `mulhi`, `mulwide`, 64-bit `mul`, and
//! the 16-bit forms, as `XMAD` sequences in the shapes ptxas 11.8 emits for sm_50.
//!
//! In: the IR operands of one `mul`/`mulhi`/`mulwide` (a power-of-two factor never reaches
//! here: `select` turns it into a shift or an LEA chain first, which is what address folding
//! relies on). Out: one multi-piece [`Sm50Inst`] per IR instruction; every temporary is an
//! early def of that instruction, so the allocator never lets a piece overwrite a register a
//! later piece still reads.
//!
//! # The 16-bit building block
//!
//! `XMAD d, a[.H1], b[.H1], c` is `d = a16 · b16 + c`, each 16-bit half read unsigned or
//! signed (`.S16`), with modes that change C: `.CHI` adds `c >> 16` (the high half), `.CBCC`
//! with `.PSL` shifts the product left 16 and adds the carry-corrected C, `.CSFU` is the sign
//! fix-up of the high×high product, and `.MRG` merges b's low half into the result's high half
//! (feeding the `.PSL.CBCC` of the low word). ptxas's sequences (read from its output):
//!
//! ```text
//! low word   XMAD t, a, b, RZ ; XMAD.MRG m, a, b.H1, RZ ; XMAD.PSL.CBCC lo, a.H1, m.H1, t
//! high word  XMAD[.U16.S16] u, a, b.H1, RZ ; XMAD[.S16.S16.CSFU] w, a.H1, b.H1, RZ ;
//!            XMAD[.S16.U16].CHI v, a.H1, b, t ; IADD3.RS hi, v, u, w
//! ```
//!
//! (signed forms in brackets). `IADD3.RS` is `((v + u) >> 16) + w` with the 33-bit sum. The
//! full 32×32→64 product shares `t` between the two words (7 instructions; ptxas spends 8).
//!
//! # 64-bit products
//!
//! `mul.lo.u64`: `lo, h = wide(a.lo, b.lo)`, `hi = h + lo32(a.lo, b.hi) + lo32(a.hi, b.lo)`
//! (one `IADD3`): 14 instructions against ptxas's 17. `mulhi.u64` is the schoolbook sum of the
//! four 32×32→64 products with `IADD.CC`/`IADD.X` carries; `mulhi.s64` subtracts the usual
//! corrections from it: `hi_s(a, b) = hi_u(a, b) - (a < 0 ? b : 0) - (b < 0 ? a : 0)`
//! (mod 2^64), where ptxas negates both operands and the result instead.

use super::{kind_of, Lowerer};
use crate::ir::{BinaryOp, Type, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};

/// A register word inside the sequence being built: operand number and word offset.
type W = (u8, u8);

// XMAD modes (the `mode` field).
use sm50::values::xmad::mode::{CBCC, CHI, CSFU};

/// An `XMAD` form with its flags.
#[derive(Default, Clone, Copy)]
struct X {
    sa: bool,
    sb: bool,
    ah: bool,
    bh: bool,
    mode: u64,
    psl: bool,
    mrg: bool,
}

impl<'a> Lowerer<'a> {
    /// A fresh 32-bit temporary of `i` (an early def).
    fn tmp(&mut self, i: &mut Sm50Inst) -> W {
        let v = self.new_vreg(RegKind::B32);
        (i.def(v, true), 0)
    }

    /// `XMAD d, a, b, c` (c = None: RZ).
    fn xmad(i: &mut Sm50Inst, x: X, d: W, a: W, b: W, c: Option<W>) {
        let inst = sm50::Inst::new(Form::XMAD_R)
            .with(Field::Sa, x.sa as u64)
            .with(Field::Sb, x.sb as u64)
            .with(Field::Ah, x.ah as u64)
            .with(Field::Bh, x.bh as u64)
            .with(Field::Mode, x.mode)
            .with(Field::Psl, x.psl as u64)
            .with(Field::Mrg, x.mrg as u64);
        let mut refs = vec![
            (Field::Rd, d.0, d.1),
            (Field::Ra, a.0, a.1),
            (Field::Rb, b.0, b.1),
        ];
        if let Some(c) = c {
            refs.push((Field::Rc, c.0, c.1));
        }
        i.piece(inst, &refs);
    }

    /// `t = a.lo16 · b.lo16` (unsigned), the product both words of a 32-bit multiply start from.
    fn xmad_ll(&mut self, i: &mut Sm50Inst, a: W, b: W) -> W {
        let t = self.tmp(i);
        Self::xmad(i, X::default(), t, a, b, None);
        t
    }

    /// `d = (a · b) mod 2^32`, given `t` from [`Self::xmad_ll`].
    fn mul_lo32(&mut self, i: &mut Sm50Inst, d: W, a: W, b: W, t: W) {
        let m = self.tmp(i);
        Self::mul_lo32_with(i, d, a, b, t, m);
    }

    /// [`Self::mul_lo32`] with its scratch word `m` given.
    fn mul_lo32_with(i: &mut Sm50Inst, d: W, a: W, b: W, t: W, m: W) {
        let mrg = X {
            bh: true,
            mrg: true,
            ..X::default()
        };
        Self::xmad(i, mrg, m, a, b, None);
        let psl = X {
            ah: true,
            bh: true,
            psl: true,
            mode: CBCC,
            ..X::default()
        };
        Self::xmad(i, psl, d, a, m, Some(t));
    }

    /// `d = (a · b) >> 32` (signed or unsigned 32-bit operands), given `t`.
    fn mul_hi32(&mut self, i: &mut Sm50Inst, d: W, a: W, b: W, t: W, signed: bool) {
        let uwv = [self.tmp(i), self.tmp(i), self.tmp(i)];
        Self::mul_hi32_with(i, d, [a, b, t], uwv, signed);
    }

    /// [`Self::mul_hi32`] with its scratch words `u`, `w` and `v` given.
    fn mul_hi32_with(i: &mut Sm50Inst, d: W, [a, b, t]: [W; 3], [u, w, v]: [W; 3], signed: bool) {
        let lh = X {
            sb: signed,
            bh: true,
            ..X::default()
        };
        Self::xmad(i, lh, u, a, b, None);
        let hh = X {
            sa: signed,
            sb: signed,
            ah: true,
            bh: true,
            mode: if signed { CSFU } else { 0 },
            ..X::default()
        };
        Self::xmad(i, hh, w, a, b, None);
        let hl = X {
            sa: signed,
            ah: true,
            mode: CHI,
            ..X::default()
        };
        Self::xmad(i, hl, v, a, b, Some(t));
        let rs = sm50::Inst::new(Form::IADD3_R).with(Field::Sh, sm50::values::iadd3::sh::RS);
        i.piece(
            rs,
            &[
                (Field::Rd, d.0, d.1),
                (Field::Ra, v.0, v.1),
                (Field::Rb, u.0, u.1),
                (Field::Rc, w.0, w.1),
            ],
        );
    }

    /// `(lo, hi)` = the full 64-bit product of two 32-bit words into `lo` and `hi`.
    fn mul_wide32(&mut self, i: &mut Sm50Inst, lo: W, hi: W, a: W, b: W, signed: bool) {
        let t = self.xmad_ll(i, a, b);
        self.mul_lo32(i, lo, a, b, t);
        self.mul_hi32(i, hi, a, b, t, signed);
    }

    /// One `IADD` piece over words (`Rd = Ra + Rb` with flags).
    fn iadd(i: &mut Sm50Inst, d: Option<W>, a: Option<W>, b: Option<W>, flags: &[(Field, u64)]) {
        let mut inst = sm50::Inst::new(Form::IADD_R);
        for &(f, v) in flags {
            inst.set(f, v);
        }
        let mut refs = Vec::new();
        for (f, w) in [(Field::Rd, d), (Field::Ra, a), (Field::Rb, b)] {
            if let Some(w) = w {
                refs.push((f, w.0, w.1));
            }
        }
        i.piece(inst, &refs);
    }

    /// `mulhi.s` / `mulhi.u` of any integer width the IR has (16, 32, 64 bits).
    pub(super) fn lower_mulhi(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let signed = op == BinaryOp::MulHiS;
        let ty = self.ty(v);
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        let d = self.new_vreg(kind_of(ty));
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        let bop = i.use_(b.vreg);
        let (aw, bw) = ((aop, a.offset), (bop, b.offset));
        match ty {
            Type::I16 => {
                // The 32-bit product of the 16-bit halves, then its high half.
                let t = self.tmp(&mut i);
                let x = X {
                    sa: signed,
                    sb: signed,
                    ..X::default()
                };
                Self::xmad(&mut i, x, t, aw, bw, None);
                let shr = sm50::Inst::new(Form::SHR_I).with(Field::ImmImm20s, 16);
                i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, t.0, t.1)]);
            }
            Type::I32 => {
                let t = self.xmad_ll(&mut i, aw, bw);
                self.mul_hi32(&mut i, (dop, 0), aw, bw, t, signed);
            }
            Type::I64 => self.mulhi64(&mut i, dop, (aop, a.offset), (bop, b.offset), signed),
            _ => return Err(self.unsupported(format!("mulhi of {ty}"))),
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// The high 64 bits of a 64×64 product into the pair `dop`.
    fn mulhi64(&mut self, i: &mut Sm50Inst, dop: u8, a: W, b: W, signed: bool) {
        let (a0, a1) = (a, (a.0, a.1 + 1));
        let (b0, b1) = (b, (b.0, b.1 + 1));
        let wide = |s: &mut Self, i: &mut Sm50Inst, x: W, y: W| {
            let lo = s.tmp(i);
            let hi = s.tmp(i);
            s.mul_wide32(i, lo, hi, x, y, false);
            (lo, hi)
        };
        let (_, ll1) = wide(self, i, a0, b0);
        let (lh0, lh1) = wide(self, i, a0, b1);
        let (hl0, hl1) = wide(self, i, a1, b0);
        let (hh0, hh1) = wide(self, i, a1, b1);
        // s = lh + hl as a 65-bit sum (s0, s1, s2).
        let s0 = self.tmp(i);
        let s1 = self.tmp(i);
        let s2 = self.tmp(i);
        Self::iadd(i, Some(s0), Some(lh0), Some(hl0), &[(Field::Cc, 1)]);
        Self::iadd(
            i,
            Some(s1),
            Some(lh1),
            Some(hl1),
            &[(Field::X, 1), (Field::Cc, 1)],
        );
        Self::iadd(i, Some(s2), None, None, &[(Field::X, 1)]);
        // Only the carry of s0 + ll1 matters; then the high words.
        Self::iadd(i, None, Some(s0), Some(ll1), &[(Field::Cc, 1)]);
        let (r0, r1) = if signed {
            (self.tmp(i), self.tmp(i))
        } else {
            ((dop, 0), (dop, 1))
        };
        Self::iadd(
            i,
            Some(r0),
            Some(s1),
            Some(hh0),
            &[(Field::X, 1), (Field::Cc, 1)],
        );
        Self::iadd(i, Some(r1), Some(s2), Some(hh1), &[(Field::X, 1)]);
        if !signed {
            return;
        }
        // Corrections: (b & (a >> 63)) + (a & (b >> 63)), subtracted from the unsigned result.
        let sa = self.tmp(i);
        let sb = self.tmp(i);
        let sar = sm50::Inst::new(Form::SHR_I)
            .with(Field::Sgn, 1)
            .with(Field::ImmImm20s, 31);
        i.piece(sar, &[(Field::Rd, sa.0, sa.1), (Field::Ra, a1.0, a1.1)]);
        i.piece(sar, &[(Field::Rd, sb.0, sb.1), (Field::Ra, b1.0, b1.1)]);
        let and = sm50::Inst::new(Form::LOP_R).with(Field::Op, sm50::values::lop::op::AND);
        let mut masked = Vec::new();
        for (x, m) in [(b0, sa), (b1, sa), (a0, sb), (a1, sb)] {
            let t = self.tmp(i);
            i.piece(
                and,
                &[
                    (Field::Rd, t.0, t.1),
                    (Field::Ra, x.0, x.1),
                    (Field::Rb, m.0, m.1),
                ],
            );
            masked.push(t);
        }
        let c0 = self.tmp(i);
        let c1 = self.tmp(i);
        Self::iadd(
            i,
            Some(c0),
            Some(masked[0]),
            Some(masked[2]),
            &[(Field::Cc, 1)],
        );
        Self::iadd(
            i,
            Some(c1),
            Some(masked[1]),
            Some(masked[3]),
            &[(Field::X, 1)],
        );
        // d = r - c: the negated operand in the A slot, as `select` subtracts pairs.
        Self::iadd(
            i,
            Some((dop, 0)),
            Some(c0),
            Some(r0),
            &[(Field::Nega, 1), (Field::Cc, 1)],
        );
        Self::iadd(
            i,
            Some((dop, 1)),
            Some(c1),
            Some(r1),
            &[(Field::Nega, 1), (Field::X, 1)],
        );
    }

    /// `mulwide` by a non-power-of-two: 16→32 bits is one `XMAD`, 32→64 the 7-instruction
    /// sequence of the module essay.
    pub(super) fn lower_mulwide_general(
        &mut self,
        v: Value,
        signed: bool,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let from = self.ty(args[0]);
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        let kind = kind_of(self.ty(v));
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        let bop = i.use_(b.vreg);
        let (aw, bw) = ((aop, a.offset), (bop, b.offset));
        match from {
            Type::I16 => {
                let x = X {
                    sa: signed,
                    sb: signed,
                    ..X::default()
                };
                Self::xmad(&mut i, x, (dop, 0), aw, bw, None);
            }
            Type::I32 => self.mul_wide32(&mut i, (dop, 0), (dop, 1), aw, bw, signed),
            _ => return Err(self.unsupported(format!("mulwide of {from}"))),
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `mul` (the low half) of 16-bit values (one `XMAD`: the low 16 bits of the product of
    /// the low halves) and of 64-bit values (the module essay's 14 instructions).
    pub(super) fn lower_mul_general(
        &mut self,
        v: Value,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        let d = self.new_vreg(kind_of(ty));
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        let bop = i.use_(b.vreg);
        let (a0, b0) = ((aop, a.offset), (bop, b.offset));
        match ty {
            Type::I8 | Type::I16 => Self::xmad(&mut i, X::default(), (dop, 0), a0, b0, None),
            Type::I64 => {
                let (a1, b1) = ((aop, a.offset + 1), (bop, b.offset + 1));
                // Six temporaries, not twelve: every temporary is an early def of the whole
                // sequence and so takes a register of its own, and the cross products reuse
                // the scratch words of the wide product once they are dead (`x` goes where
                // `u` was, `y` where `w` was). With twelve, matrixMul_64bit could not be
                // allocated under `--maxrregcount=16`.
                let h = self.tmp(&mut i);
                let t = self.xmad_ll(&mut i, a0, b0);
                let m = self.tmp(&mut i);
                Self::mul_lo32_with(&mut i, (dop, 0), a0, b0, t, m);
                let (x, y, v) = (self.tmp(&mut i), self.tmp(&mut i), self.tmp(&mut i));
                Self::mul_hi32_with(&mut i, h, [a0, b0, t], [x, y, v], false);
                Self::xmad(&mut i, X::default(), t, a0, b1, None);
                Self::mul_lo32_with(&mut i, x, a0, b1, t, m);
                Self::xmad(&mut i, X::default(), t, a1, b0, None);
                Self::mul_lo32_with(&mut i, y, a1, b0, t, m);
                i.piece(
                    sm50::Inst::new(Form::IADD3_R),
                    &[
                        (Field::Rd, dop, 1),
                        (Field::Ra, h.0, h.1),
                        (Field::Rb, x.0, x.1),
                        (Field::Rc, y.0, y.1),
                    ],
                );
            }
            _ => return Err(self.unsupported(format!("mul of {ty}"))),
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}
