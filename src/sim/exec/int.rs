//! The integer family of the simulator: moves, selects, `S2R`, adds (`IADD`, `IADD3`,
//! `ISCADD`, `LEA`), multiplies (`XMAD`, `IMUL`), compares and predicate logic, `IMNMX`,
//! `I2I`, `CSETP`.
//!
//! In: one decoded instruction and the executing lanes. Out: the destination registers,
//! predicates and CC of each lane.

use super::*;

/// One addend of a 33-bit sum: a negated operand is `~x + 1`, or `~x` inside an .X chain,
/// where the +1 (or the borrow) comes in through CC.CF.
pub(super) fn add_term(v: u64, neg: bool, x: bool) -> u64 {
    if !neg {
        v
    } else if x {
        !v & 0xffff_ffff
    } else {
        (!v & 0xffff_ffff) + 1
    }
}

/// The .CSFU ("C sign fix-up") correction of XMAD, in units of 2^16 to subtract from C.
///
/// An inference from ptxas's mul.hi.s32 sequence (a = aH:aL, b = bH:bL, halves):
/// `XMAD t, a, b` (aL·bL); `XMAD.U16.S16 u, a, b.H1` (aL·bH); `XMAD.S16.U16.CHI v, a.H1, b, t`
/// (aH·bL + t>>16); `XMAD.S16.S16.CSFU w, a.H1, b.H1, RZ`; `IADD3.RS d, v, u, w`. IADD3.RS
/// adds v and u as unsigned 32-bit numbers, so a negative partial product contributes an
/// extra 2^32, i.e. 2^16 after the shift; w must take it back. `u` is negative exactly when
/// bH < 0 and aL != 0, `v` exactly when aH < 0 and bL != 0 (aL·bL>>16 < bL). So .CSFU
/// subtracts 2^16 for each signed selected half that is negative while the *other* half of
/// the other operand is non-zero. This is the only rule under which that sequence computes
/// the signed high word; tests/sim_mulhi.rs checks it on edge values against `ir::eval`.
pub(super) fn csfu_fixup(a: u32, ah: bool, sa: bool, b: u32, bh: bool, sb: bool) -> u32 {
    let (a_sel, a_other) = if ah {
        (a >> 16, a & 0xffff)
    } else {
        (a & 0xffff, a >> 16)
    };
    let (b_sel, b_other) = if bh {
        (b >> 16, b & 0xffff)
    } else {
        (b & 0xffff, b >> 16)
    };
    let neg = |h: u32, signed: bool| signed && h & 0x8000 != 0;
    u32::from(neg(a_sel, sa) && b_other != 0) + u32::from(neg(b_sel, sb) && a_other != 0)
}

/// IADD3 half select: 0 = whole, 1 = .H0, 2 = .H1 (zero-extended).
pub(super) fn half(v: u32, h: u64) -> u64 {
    use crate::sm50::values::iadd3::ha::{H0, H1};
    u64::from(match h {
        H0 => v & 0xffff,
        H1 => v >> 16,
        _ => v,
    })
}

/// Integer compare: F, LT, EQ, LE, GT, NE, GE, T.
pub(super) fn icmp(cmp: u64, signed: bool, a: u32, b: u32) -> bool {
    let ord = if signed {
        (a as i32).cmp(&(b as i32))
    } else {
        a.cmp(&b)
    };
    use crate::sm50::values::isetp::cmp::*;
    use std::cmp::Ordering::*;
    match cmp {
        F => false,
        LT => ord == Less,
        EQ => ord == Equal,
        LE => ord != Greater,
        GT => ord == Greater,
        NE => ord != Equal,
        GE => ord != Less,
        _ => true,
    }
}

/// The high-word step of a multi-word compare (`IADD RZ.CC, lo, -lo'` then `ISETP.X`/`ISET.X`
/// on the high words): the difference `a - b - !CF` decides, and equality also needs the low
/// words' ZF.
pub(super) fn icmp_x(cmp: u64, signed: bool, a: u32, b: u32, cc: u8) -> bool {
    let sum = u64::from(a) + u64::from(!b) + u64::from(cc & CF);
    let r = sum as u32;
    let eq = r == 0 && cc & ZF != 0;
    let lt = if signed {
        let overflow = ((a ^ b) & (a ^ r)) >> 31 != 0;
        (r >> 31 != 0) != overflow
    } else {
        sum >> 32 == 0
    };
    use crate::sm50::values::isetp::cmp::*;
    match cmp {
        F => false,
        LT => lt,
        EQ => eq,
        LE => lt || eq,
        GT => !lt && !eq,
        NE => !eq,
        GE => !lt,
        _ => true,
    }
}

/// LOP/LOP3 predicate output: none (false), .T, .Z, .NZ.
pub(super) fn pred_op(pop: u64, r: u32) -> bool {
    use crate::sm50::values::lop::pop::{NZ, T, Z};
    match pop {
        T => true,
        Z => r == 0,
        NZ => r != 0,
        _ => false,
    }
}

pub(super) fn bool_op(op: u64, a: bool, b: bool) -> bool {
    use crate::sm50::values::isetp::bop::{AND, OR};
    match op {
        AND => a && b,
        OR => a || b,
        _ => a ^ b,
    }
}

impl Sim<'_> {
    /// The move family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_move(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            MOV_R | MOV_C | MOV_I => {
                let b = self.src_b(i, addr)?;
                // The lane mask: bit k writes lane k of each quad.
                let lm = f(i, Field::Lm) as u32;
                let mut quads = 0u32;
                for k in 0..4 {
                    if lm >> k & 1 != 0 {
                        quads |= 0x1111_1111 << k;
                    }
                }
                self.alu(w, i, exec & quads, |w, l| w.val(b, l));
            }
            MOV32I => {
                let v = f(i, Field::Imm) as u32;
                self.alu(w, i, exec, |_, _| v);
            }
            S2R | CS2R => self.s2r(w, i, addr, exec)?,
            SEL_R | SEL_C | SEL_I => {
                let b = self.src_b(i, addr)?;
                let (ra, ps, psn) = (f(i, Field::Ra), f(i, Field::Ps), flag(i, Field::Psn));
                self.alu(w, i, exec, |w, l| {
                    if w.p(ps, l) != psn {
                        w.r(ra, l)
                    } else {
                        w.val(b, l)
                    }
                });
            }
            _ => unreachable!("{:?} is not a move form", i.form),
        }
        Ok(())
    }

    /// The add family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_add(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            IADD_R | IADD_C | IADD_I | IADD32I => {
                let b = if i.form == IADD32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let ra = f(i, Field::Ra);
                let (na, nb) = (flag(i, Field::Nega), flag(i, Field::Negb));
                if flag(i, Field::Sat) {
                    // Signed saturation of a ± b (what ptxas makes of `add/sub.sat.s32`); the
                    // extended, `.PO` and carry-out forms are not modelled.
                    if flag(i, Field::X) || (na && nb) || flag(i, Field::Cc) {
                        return Err(unsupported(addr, i, "IADD.SAT with .X, .PO or .CC"));
                    }
                    let signed = |v: u32, neg: bool| {
                        let v = i64::from(v as i32);
                        if neg {
                            -v
                        } else {
                            v
                        }
                    };
                    for l in lanes(exec) {
                        let s = signed(w.r(ra, l), na) + signed(w.val(b, l), nb);
                        let s = s.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
                        w.set_r(f(i, Field::Rd), l, s as i32 as u32);
                    }
                    return Ok(());
                }
                let x = flag(i, Field::X);
                let po = na && nb;
                for l in lanes(exec) {
                    let a = u64::from(w.r(ra, l));
                    let bv = u64::from(w.val(b, l));
                    let sum = if po {
                        a + bv + 1
                    } else {
                        add_term(a, na && !po, x) + add_term(bv, nb && !po, x)
                    } + if x { w.cf(l) } else { 0 };
                    self.write_sum(w, i, l, sum);
                }
            }
            IADD3_R | IADD3_C | IADD3_I => {
                let b = match (i.form, get(i, Field::ImmImm20u)) {
                    // nvdisasm prints IADD3's 20-bit immediate unsigned, but it is signed:
                    // ptxas 11.8 writes `IADD3 R4, R7, 0xfffe1, R4` for `x + y - 31`
                    // (build_prop's differential test against ptxas's code found it).
                    (IADD3_I, Some(v)) => Src::Val(sext(v, 20) as u32),
                    _ => self.src_b(i, addr)?,
                };
                let (ra, rc) = (f(i, Field::Ra), f(i, Field::Rc));
                let (na, nb, nc) = (
                    flag(i, Field::Nega),
                    flag(i, Field::Negb),
                    flag(i, Field::Negc),
                );
                let (ha, hb, hc, sh) = (
                    f(i, Field::Ha),
                    f(i, Field::Hb),
                    f(i, Field::Hc),
                    f(i, Field::Sh),
                );
                let x = flag(i, Field::X);
                for l in lanes(exec) {
                    let a = half(w.r(ra, l), ha);
                    let bv = half(w.val(b, l), hb);
                    let c = half(w.r(rc, l), hc);
                    let ab = add_term(a, na, x) + add_term(bv, nb, x);
                    // .RS shifts the adder's whole A+B, carry bits included: ptxas's
                    // mul.hi.u32 sums two 32-bit partial products here and needs bit 32 of
                    // that sum to land in bit 16 of the result.
                    use crate::sm50::values::iadd3;
                    let ab = match sh {
                        iadd3::sh::RS => (ab & 0x3_ffff_ffff) >> 16,
                        iadd3::sh::LS => (ab << 16) & 0xffff_ffff,
                        _ => ab,
                    };
                    let sum = ab + add_term(c, nc, x) + if x { w.cf(l) } else { 0 };
                    self.write_sum(w, i, l, sum);
                }
            }
            ISCADD_R | ISCADD_C | ISCADD_I | ISCADD32I => {
                let b = if i.form == ISCADD32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let (ra, s) = (f(i, Field::Ra), f(i, Field::S) as u32);
                let (na, nb) = (flag(i, Field::Nega), flag(i, Field::Negb));
                let po = na && nb;
                for l in lanes(exec) {
                    let a = u64::from(w.r(ra, l) << s);
                    let bv = u64::from(w.val(b, l));
                    let sum = if po {
                        a + bv + 1
                    } else {
                        add_term(a, na, false) + add_term(bv, nb, false)
                    };
                    self.write_sum(w, i, l, sum);
                }
            }
            LEA_R | LEA_C | LEA_I | LEA_HI_R | LEA_HI_C => self.lea(w, i, addr, exec)?,
            _ => unreachable!("{:?} is not a add form", i.form),
        }
        Ok(())
    }

    /// The mul family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_mul(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            XMAD_R | XMAD_I | XMAD_C | XMAD_CC => self.xmad(w, i, addr, exec)?,
            IMUL_R | IMUL_C | IMUL_I | IMUL32I => {
                if flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "IMUL.CC"));
                }
                let b = if i.form == IMUL32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let ra = f(i, Field::Ra);
                let (hi, sa, sb) = (flag(i, Field::Hi), flag(i, Field::Sa), flag(i, Field::Sb));
                // The full 64-bit product of the operands read as signed or unsigned.
                let wide = |v: u32, signed: bool| {
                    if signed {
                        i64::from(v as i32)
                    } else {
                        i64::from(v)
                    }
                };
                self.alu(w, i, exec, |w, l| {
                    let p = wide(w.r(ra, l), sa).wrapping_mul(wide(w.val(b, l), sb));
                    if hi {
                        (p >> 32) as u32
                    } else {
                        p as u32
                    }
                });
            }
            IMAD_R => {
                // Only ptxas's mad.hi.sat.s32 form: IMAD.HI.SAT (signed), no negation, .X, .CC.
                let only = flag(i, Field::Hi)
                    && flag(i, Field::Sat)
                    && flag(i, Field::Sa)
                    && flag(i, Field::Sb)
                    && !flag(i, Field::Nega)
                    && !flag(i, Field::Negc)
                    && !flag(i, Field::X)
                    && !flag(i, Field::Cc);
                if !only {
                    return Err(unsupported(addr, i, "IMAD other than IMAD.HI.SAT"));
                }
                let (ra, rb, rc) = (f(i, Field::Ra), f(i, Field::Rb), f(i, Field::Rc));
                self.alu(w, i, exec, |w, l| {
                    let p = i64::from(w.r(ra, l) as i32) * i64::from(w.r(rb, l) as i32);
                    let t = (p >> 32) + i64::from(w.r(rc, l) as i32);
                    t.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
                });
            }
            _ => unreachable!("{:?} is not a mul form", i.form),
        }
        Ok(())
    }

    /// The cmp family of [`Self::exec`]: the arms of its match for these forms.
    // Long by design: one short arm per class; a long body means many classes, not long logic.
    pub(super) fn exec_cmp(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            ISETP_R | ISETP_C | ISETP_I => {
                // .X: the high-word step of a wide compare, as for ISET.X.
                let x = flag(i, Field::X);
                let b = self.src_b(i, addr)?;
                let (ra, cmp, sgn) = (f(i, Field::Ra), f(i, Field::Cmp), flag(i, Field::Sgn));
                let (pacc, paccn, bop) =
                    (f(i, Field::Pacc), flag(i, Field::Paccn), f(i, Field::Bop));
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                for l in lanes(exec) {
                    let c = if x {
                        icmp_x(cmp, sgn, w.r(ra, l), w.val(b, l), w.cc[l])
                    } else {
                        icmp(cmp, sgn, w.r(ra, l), w.val(b, l))
                    };
                    let acc = w.p(pacc, l) != paccn;
                    w.set_p(pd0, l, bool_op(bop, c, acc));
                    w.set_p(pd1, l, bool_op(bop, !c, acc));
                }
            }
            ISET_R | ISET_C | ISET_I => {
                let b = self.src_b(i, addr)?;
                let x = flag(i, Field::X);
                let (ra, cmp, sgn) = (f(i, Field::Ra), f(i, Field::Cmp), flag(i, Field::Sgn));
                let (pacc, paccn, bop) =
                    (f(i, Field::Pacc), flag(i, Field::Paccn), f(i, Field::Bop));
                let (bf, cc, rd) = (flag(i, Field::Bf), flag(i, Field::Cc), f(i, Field::Rd));
                for l in lanes(exec) {
                    let c = if x {
                        icmp_x(cmp, sgn, w.r(ra, l), w.val(b, l), w.cc[l])
                    } else {
                        icmp(cmp, sgn, w.r(ra, l), w.val(b, l))
                    };
                    let r = match (bool_op(bop, c, w.p(pacc, l) != paccn), bf) {
                        (false, _) => 0,
                        (true, true) => 1.0f32.to_bits(),
                        (true, false) => u32::MAX,
                    };
                    w.set_r(rd, l, r);
                    if cc {
                        // ptxas pairs `ISET … RZ.CC` with `BRA CC.NEU`: CC from the result.
                        w.cc[l] = zs(r);
                    }
                }
            }
            ICMP_R | ICMP_C | ICMP_I => {
                let b = self.src_b(i, addr)?;
                let (ra, rc) = (f(i, Field::Ra), f(i, Field::Rc));
                let (cmp, sgn) = (f(i, Field::Cmp), flag(i, Field::Sgn));
                self.alu(w, i, exec, |w, l| {
                    if icmp(cmp, sgn, w.r(rc, l), 0) {
                        w.r(ra, l)
                    } else {
                        w.val(b, l)
                    }
                });
            }
            PSET => {
                let (pa, pan) = (f(i, Field::Pa), flag(i, Field::Pan));
                let (pb, pbn) = (f(i, Field::Pb), flag(i, Field::Pbn));
                let (pc, pcn) = (f(i, Field::Pc), flag(i, Field::Pcn));
                let (b1, b2) = (f(i, Field::Bop1), f(i, Field::Bop2));
                let one = if flag(i, Field::Bf) {
                    1.0f32.to_bits()
                } else {
                    u32::MAX
                };
                self.alu(w, i, exec, |w, l| {
                    let t = bool_op(b1, w.p(pa, l) != pan, w.p(pb, l) != pbn);
                    if bool_op(b2, t, w.p(pc, l) != pcn) {
                        one
                    } else {
                        0
                    }
                });
            }
            R2P_I => {
                if flag(i, Field::Ccm) {
                    return Err(unsupported(addr, i, "R2P CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, shift) = (f(i, Field::Ra), 8 * f(i, Field::Bsel));
                for l in lanes(exec) {
                    let bits = w.r(ra, l) >> shift;
                    let mask = w.val(b, l);
                    for p in 0..7u64 {
                        if mask >> p & 1 != 0 {
                            w.set_p(p, l, bits >> p & 1 != 0);
                        }
                    }
                }
            }
            P2R_I | P2R_R | P2R_C => {
                if flag(i, Field::Ccm) {
                    return Err(unsupported(addr, i, "P2R CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, shift) = (f(i, Field::Ra), 8 * f(i, Field::Bsel));
                self.alu(w, i, exec, |w, l| {
                    let mask = (w.val(b, l) & 0xff) << shift;
                    let pr = u32::from(w.preds[l] & 0x7f) << shift;
                    (w.r(ra, l) & !mask) | (pr & mask)
                });
            }
            B2R => {
                let (rd, pd) = (f(i, Field::Rd), f(i, Field::Pd));
                let red = self.red_result;
                let Some(mode) = red.mode else {
                    return Err(unsupported(addr, i, "B2R.RESULT before any BAR.RED"));
                };
                // Rd is only known to hold the count after .POPC, Pd the vote after .AND/.OR
                // (the forms ptxas emits); other combinations are not modelled.
                use crate::sm50::values::bar::ro;
                let popc = mode == ro::POPC;
                if (popc && pd != PT) || (!popc && rd != RZ) {
                    return Err(unsupported(addr, i, "this B2R.RESULT after this BAR.RED"));
                }
                for l in lanes(exec) {
                    w.set_r(rd, l, red.count);
                    w.set_p(pd, l, if mode == ro::AND { red.all } else { red.any });
                }
            }
            PSETP => {
                let (pa, pan) = (f(i, Field::Pa), flag(i, Field::Pan));
                let (pb, pbn) = (f(i, Field::Pb), flag(i, Field::Pbn));
                let (pc, pcn) = (f(i, Field::Pc), flag(i, Field::Pcn));
                let (b1, b2) = (f(i, Field::Bop1), f(i, Field::Bop2));
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                for l in lanes(exec) {
                    let t = bool_op(b1, w.p(pa, l) != pan, w.p(pb, l) != pbn);
                    let c = w.p(pc, l) != pcn;
                    w.set_p(pd0, l, bool_op(b2, t, c));
                    w.set_p(pd1, l, bool_op(b2, !t, c));
                }
            }
            IMNMX_R | IMNMX_C | IMNMX_I => {
                if f(i, Field::Mode) != crate::sm50::values::imnmx::mode::DEFAULT
                    || flag(i, Field::Cc)
                {
                    return Err(unsupported(addr, i, "IMNMX .XLO/.XMED/.XHI/.CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, sgn) = (f(i, Field::Ra), flag(i, Field::Sgn));
                let (pacc, paccn) = (f(i, Field::Pacc), flag(i, Field::Paccn));
                self.alu(w, i, exec, |w, l| {
                    let (a, bv) = (w.r(ra, l), w.val(b, l));
                    let min = w.p(pacc, l) != paccn;
                    let a_less = if sgn {
                        (a as i32) < (bv as i32)
                    } else {
                        a < bv
                    };
                    if a_less == min {
                        a
                    } else {
                        bv
                    }
                });
            }
            I2I_R | I2I_C | I2I_I => self.i2i(w, i, addr, exec)?,
            CSETP => {
                // Like ISETP with the CC test as the comparison: Pd0 = test BOP Pacc,
                // Pd1 = !test BOP Pacc.
                let test = f(i, Field::Cct) as u8;
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                let (pacc, paccn, bop) =
                    (f(i, Field::Pacc), flag(i, Field::Paccn), f(i, Field::Bop));
                for l in lanes(exec) {
                    let Some(t) = cc_test(test, w.cc[l]) else {
                        return Err(unsupported(addr, i, "this CSETP CC test"));
                    };
                    let acc = w.p(pacc, l) != paccn;
                    w.set_p(pd0, l, bool_op(bop, t, acc));
                    w.set_p(pd1, l, bool_op(bop, !t, acc));
                }
            }
            _ => unreachable!("{:?} is not a cmp form", i.form),
        }
        Ok(())
    }

    pub(super) fn lea(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let b = self.src_b(i, addr)?;
        let hi = matches!(i.form, Form::LEA_HI_R | Form::LEA_HI_C);
        let (ra, rc, rd) = (f(i, Field::Ra), f(i, Field::Rc), f(i, Field::Rd));
        let s = f(i, Field::S) as u32;
        let (neg, x, cc, plg) = (
            flag(i, Field::Nega),
            flag(i, Field::X),
            flag(i, Field::Cc),
            get(i, Field::Plg).unwrap_or(PT),
        );
        let sw = SHARED_WINDOW_BASE as u32;
        let detect = |lo: u32| lo & 0xff00_0000 == sw;
        for l in lanes(exec) {
            let off = if hi {
                u64::from(w.r(rc, l)) << 32 | u64::from(w.r(ra, l))
            } else {
                u64::from(w.r(ra, l))
            };
            let off = if neg { off.wrapping_neg() } else { off };
            let scaled = off << s;
            let term = if hi {
                scaled >> 32
            } else {
                scaled & 0xffff_ffff
            };
            let cin = if x { w.cf(l) } else { 0 };
            let sum = term + u64::from(w.val(b, l)) + cin;
            let r = sum as u32;
            let carry = sum >> 32 != 0;
            // The shared-window detect of the (64-bit) address this LEA completes.
            let in_window = if hi {
                r == 0 && w.cc[l] & OF == 0
            } else {
                detect(r)
            };
            w.set_r(rd, l, r);
            // Plg is the same bit as CC.OF: "not in the shared window" (see the essay: ptxas's
            // generic atomics branch to ATOMS when it is false).
            w.set_p(plg, l, !in_window);
            if cc {
                w.cc[l] = flags(carry, !in_window, r);
            }
        }
        Ok(())
    }

    pub(super) fn xmad(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let b = self.src_b(i, addr)?;
        let c = self.src_c(i, addr)?;
        let (ra, rd) = (f(i, Field::Ra), f(i, Field::Rd));
        let (sa, sb, ah, bh) = (
            flag(i, Field::Sa),
            flag(i, Field::Sb),
            flag(i, Field::Ah),
            flag(i, Field::Bh),
        );
        let (psl, mrg, x, cc, mode) = (
            flag(i, Field::Psl),
            flag(i, Field::Mrg),
            flag(i, Field::X),
            flag(i, Field::Cc),
            f(i, Field::Mode),
        );
        if mode > 4 {
            return Err(unsupported(addr, i, "XMAD mode 5..7"));
        }
        let h16 = |v: u32, high: bool, signed: bool| -> u32 {
            let h = if high { v >> 16 } else { v & 0xffff };
            if signed {
                h as u16 as i16 as i32 as u32
            } else {
                h
            }
        };
        for l in lanes(exec) {
            let av = w.r(ra, l);
            let bv = w.val(b, l);
            let p = h16(av, ah, sa).wrapping_mul(h16(bv, bh, sb));
            let p = if psl { p << 16 } else { p };
            let cv = w.val(c, l);
            use crate::sm50::values::xmad::mode as xm;
            let cv = match mode {
                xm::CLO => cv & 0xffff,
                xm::CHI => cv >> 16,
                xm::CSFU => cv.wrapping_sub(csfu_fixup(av, ah, sa, bv, bh, sb) << 16),
                xm::CBCC => cv.wrapping_add(bv << 16),
                _ => cv,
            };
            let sum = u64::from(p) + u64::from(cv) + if x { w.cf(l) } else { 0 };
            let mut r = sum as u32;
            if mrg {
                r = (r & 0xffff) | (bv << 16);
            }
            w.set_r(rd, l, r);
            if cc {
                w.cc[l] = flags(sum >> 32 != 0, false, r);
            }
        }
        Ok(())
    }

    pub(super) fn i2i(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        if flag(i, Field::Cc) {
            return Err(unsupported(addr, i, "I2I.CC"));
        }
        let b = self.src_b(i, addr)?;
        let (dt, st, bsel) = (f(i, Field::Dt), f(i, Field::St), f(i, Field::Bsel));
        let (neg, abs, sat) = (
            flag(i, Field::Negb),
            flag(i, Field::Absb),
            flag(i, Field::Sat),
        );
        // (bits, signed) of an I2I type code.
        let ty = |t: u64| (8u32 << (t & 3), t & 4 != 0);
        let (sbits, ssigned) = ty(st);
        let (dbits, dsigned) = ty(dt);
        self.alu(w, i, exec, |w, l| {
            let raw = u64::from(w.val(b, l) >> (8 * bsel));
            let mut v = if ssigned {
                sext(raw, sbits) as i64
            } else {
                (raw & ((1u64 << sbits) - 1)) as i64
            };
            if abs {
                v = v.abs();
            }
            if neg {
                v = -v;
            }
            let (lo, hi) = if dsigned {
                (-(1i64 << (dbits - 1)), (1i64 << (dbits - 1)) - 1)
            } else {
                (0, (1i64 << dbits) - 1)
            };
            if sat {
                v = v.clamp(lo, hi);
            }
            let bits = (v as u64) & ((1u64 << dbits) - 1);
            if dsigned {
                sext(bits, dbits) as u32
            } else {
                bits as u32
            }
        });
        Ok(())
    }

    pub(super) fn s2r(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let sr = f(i, Field::Sr);
        let block = self.launch.block;
        let ctaid = self.ctaid;
        let steps = self.steps;
        let smem = self.mem.shared_size as u32;
        let warp = w.index as u32;
        let reads = w.timer_reads;
        let tid = |l: usize| {
            let t = warp * 32 + l as u32;
            [
                t % block[0],
                t / block[0] % block[1],
                t / (block[0] * block[1]),
            ]
        };
        let value = |l: usize| -> Option<u32> {
            let lt = (1u64 << l) as u32;
            Some(match sr {
                0x00 => l as u32,
                0x01 => steps as u32,
                // The clock model shared with `ir::eval` (its essay, "Clocks and timers"):
                // reads of the low words count, per lane, below.
                0x50 | 0x52 => {
                    crate::ir::eval::timer_value(sr == 0x52, reads[usize::from(sr == 0x52)][l]).0
                }
                0x51 | 0x53 => crate::ir::eval::timer_value(sr == 0x53, 0).1,
                // Performance-monitor counters SR_PM0..7 and SR_PM_HI0..7: no model of the
                // events; they read as the step counter, like the clocks (no test compares
                // them).
                0x04..=0x0b => steps as u32,
                0x48..=0x4f => (steps >> 32) as u32,
                0x02 => 1 << 20 | 64 << 8,
                0x03 => (warp & 63) << 8,
                0x20 => {
                    let t = tid(l);
                    t[0] | t[1] << 16 | t[2] << 26
                }
                0x21..=0x23 => tid(l)[(sr - 0x21) as usize],
                0x25..=0x27 => ctaid[(sr - 0x25) as usize],
                0x32 => smem,
                0x38 => lt,
                0x39 => lt.wrapping_sub(1),
                0x3a => lt.wrapping_sub(1) | lt,
                0x3b => !(lt.wrapping_sub(1) | lt),
                0x3c => !lt.wrapping_sub(1),
                _ => return None,
            })
        };
        if i.form == Form::CS2R && !matches!(sr, 0x50..=0x53 | 0x04..=0x0b | 0x48..=0x4f) {
            return Err(unsupported(addr, i, "this CS2R special register"));
        }
        let rd = f(i, Field::Rd);
        for l in lanes(exec) {
            let Some(v) = value(l) else {
                return Err(unsupported(addr, i, "this special register"));
            };
            w.set_r(rd, l, v);
            if matches!(sr, 0x50 | 0x52) {
                w.timer_reads[usize::from(sr == 0x52)][l] += 1;
            }
        }
        Ok(())
    }
}
