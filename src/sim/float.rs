//! Floating-point instructions of the simulator: FADD/FMUL/FFMA (and the 32-bit immediate
//! forms), FSETP, FSET, FMNMX, DADD/DMUL/DFMA/DSETP/DSET/DMNMX, I2F, F2I, F2F and FCHK
//! (a conservative model, see [`fchk_divide`]).
//!
//! In: a decoded instruction and the warp state. Out: the destination registers/predicates
//! of every executing lane, or [`SimError::Unsupported`] for a field combination not
//! modelled (`.CC` other than on FSET/DSET, FMUL `.FMZ`, `.H1` on non-F16 sources).
//! FMUL's scaling (`.D2` .. `.M8`) multiplies the exact product by 2^k before its one
//! rounding (a model: checked on ptxas's code by `leafold verify --against-ptxas`). The arithmetic is
//! the exact IEEE core of [`crate::ir::float`] (the IR reference uses the same functions),
//! so NaN results follow its rules (canonical for f32, IEEE-style for f64), `.FTZ` flushes subnormal inputs and outputs, and `.SAT`
//! clamps to [+0, 1]. Operand modifiers (`-`, `|x|`) act on the sign bit before the
//! operation, except on an f64 NaN, which they leave as it is; an f64 lives in an aligned register pair (low word in the even register);
//! an F16 value is the low half of its register (the high half with `.H1`).

use super::exec::{f, flag, get, lanes, unsupported, zs, Sim, Warp};
use super::SimError;
use crate::ir::float::{self as fl, FloatCC, FloatFmt, Round};
use crate::ir::Type;
use crate::sm50::{Field, Form, Inst};

/// `FCHK.DIVIDE P, a, b`: whether ptxas's fast f32 division (a reciprocal refined by FFMA,
/// `q = a·r`, one FFMA correction) might not give the correctly rounded `a / b`, so that the
/// code takes its slow path (a called subroutine that handles every input). NVIDIA does not
/// document the exact test; this model is *conservative*: it passes (false) only where
/// every step of the fast path stays normal and finite, far from the edges: `a` and `b`
/// finite and normal, `b`'s exponent in [-124, 124] (its reciprocal normal), `a`'s in
/// [-100, 125] (the remainder `a - b·q`, about 2^-24·a, stays normal) and the quotient's
/// exponent, `e(a) - e(b)`, in [-124, 124]. Everything else (zeros, subnormals, infinities,
/// NaN, large exponent gaps) is flagged. Flagging more inputs than the hardware only moves
/// them to the slow path, which must be exact on its own; flagging fewer would run the fast
/// path where it can be wrong, and `verify` would show a mismatch on ptxas's code.
pub(super) fn fchk_divide(a: u32, b: u32) -> bool {
    let exp = |x: u32| ((x >> 23) & 0xff) as i32;
    let (ea, eb) = (exp(a), exp(b));
    let normal = |e: i32| (1..=254).contains(&e);
    if !normal(ea) || !normal(eb) {
        return true;
    }
    let (ea, eb) = (ea - 127, eb - 127);
    !((-124..=124).contains(&eb) && (-100..=125).contains(&ea) && (-124..=124).contains(&(ea - eb)))
}

/// A float source: a register (pair) or a fixed value.
#[derive(Clone, Copy)]
enum FSrc {
    Reg(u64),
    Val(u64),
}

/// The rounding of a `rnd`/`rm` code (every float class numbers .RN, its unprinted
/// default, then .RM, .RP, .RZ alike; F2I's .FLOOR/.CEIL/.TRUNC are the same codes).
fn round(code: u64) -> Round {
    use crate::sm50::values::fadd::rnd;
    match code & 3 {
        rnd::DEFAULT => Round::Rn,
        rnd::RM => Round::Rm,
        rnd::RP => Round::Rp,
        _ => Round::Rz,
    }
}

/// The format of an F2F/F2I/I2F `dsz`/`ssz` code.
fn fmt_of(code: u64) -> Option<FloatFmt> {
    use crate::sm50::values::f2f::dsz;
    match code {
        dsz::F16 => Some(FloatFmt::F16),
        dsz::F32 => Some(FloatFmt::F32),
        dsz::F64 => Some(FloatFmt::F64),
        _ => None,
    }
}

/// The FSETP/DSETP condition; `Err` for the constant ones (`.F` = false, `.T` = true).
pub(super) fn cond(code: u64) -> Result<FloatCC, bool> {
    use crate::sm50::values::fsetp::cmp;
    Ok(match code {
        cmp::LT => FloatCC::Lt,
        cmp::EQ => FloatCC::Eq,
        cmp::LE => FloatCC::Le,
        cmp::GT => FloatCC::Gt,
        cmp::NE => FloatCC::Ne,
        cmp::GE => FloatCC::Ge,
        cmp::NUM => FloatCC::Num,
        cmp::NAN => FloatCC::Nan,
        cmp::LTU => FloatCC::Ltu,
        cmp::EQU => FloatCC::Equ,
        cmp::LEU => FloatCC::Leu,
        cmp::GTU => FloatCC::Gtu,
        cmp::NEU => FloatCC::Neu,
        cmp::GEU => FloatCC::Geu,
        cmp::F => return Err(false),
        _ => return Err(true),
    })
}

/// Apply `|x|` then `-x` to the sign bit of a `bits`-wide float. An f64 NaN passes through
/// unchanged (as measured: `sub`, `neg` and `abs` of an f64 NaN keep its sign; an f32 NaN
/// result is canonical whatever the operand's sign).
pub(super) fn modify(x: u64, bits: u32, abs: bool, neg: bool) -> u64 {
    if bits == 64 && fl::is_nan(FloatFmt::F64, x) {
        return x;
    }
    let s = 1u64 << (bits - 1);
    let x = if abs { x & !s } else { x };
    if neg {
        x ^ s
    } else {
        x
    }
}

/// A `bop` code (.AND, .OR, .XOR: every setp class numbers them alike) on `a` and `b`.
pub(super) fn bool_op(op: u64, a: bool, b: bool) -> bool {
    use crate::sm50::values::fsetp::bop;
    match op {
        bop::AND => a && b,
        bop::OR => a || b,
        _ => a ^ b,
    }
}

impl Warp {
    /// A register of `words` 32-bit words (1 or 2) starting at `r`.
    fn rw(&self, r: u64, words: u32, lane: usize) -> u64 {
        let lo = u64::from(self.r(r, lane));
        if words == 2 {
            lo | u64::from(self.r(r + 1, lane)) << 32
        } else {
            lo
        }
    }

    fn set_rw(&mut self, r: u64, words: u32, lane: usize, v: u64) {
        self.set_r(r, lane, v as u32);
        if words == 2 {
            self.set_r(r + 1, lane, (v >> 32) as u32);
        }
    }

    fn fval(&self, s: FSrc, words: u32, lane: usize) -> u64 {
        match s {
            FSrc::Reg(r) => self.rw(r, words, lane),
            FSrc::Val(v) => v,
        }
    }
}

impl Sim<'_> {
    /// The B operand of a float instruction, `words` wide.
    fn fsrc_b(&mut self, i: &Inst, addr: u64, words: u32) -> Result<FSrc, SimError> {
        if let Some(rb) = get(i, Field::Rb) {
            return Ok(FSrc::Reg(rb));
        }
        if let Some(off) = get(i, Field::Cbo) {
            let bank = get(i, Field::Cbk).or(get(i, Field::Cbks)).unwrap_or(0) as u8;
            let lo = u64::from(self.mem.const32(addr, bank, off * 4)?);
            let hi = if words == 2 {
                u64::from(self.mem.const32(addr, bank, off * 4 + 4)?)
            } else {
                0
            };
            return Ok(FSrc::Val(lo | hi << 32));
        }
        if let Some(v) = get(i, Field::ImmF32i) {
            return Ok(FSrc::Val(v << 12));
        }
        if let Some(v) = get(i, Field::ImmF64i) {
            return Ok(FSrc::Val(v << 44));
        }
        if let Some(v) = get(i, Field::Imm) {
            return Ok(FSrc::Val(v & 0xffff_ffff));
        }
        if let Some(v) = get(i, Field::ImmImm20s) {
            return Ok(FSrc::Val(crate::sm50::rt::sext(v, 20)));
        }
        Err(unsupported(
            addr,
            i,
            "a float instruction without a B operand",
        ))
    }

    /// `FSWZADD` (quad swizzle add, `lower::select::tex::quad`): lane `k` of each quad
    /// computes `sa·Ra + sb·Rb` with the signs of op `k` (PP `+,+`, NP `-,+`, PN `+,-`, ZP
    /// `0,+`: Ra replaced by +0), one rounding as FADD's. `.NDV` changes nothing here.
    pub(super) fn fswzadd(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use crate::sm50::values::fswzadd::op0::{NP, PN, ZP};
        if flag(i, Field::Cc) {
            return Err(unsupported(addr, i, "FSWZADD .CC"));
        }
        let ops = [Field::Op0, Field::Op1, Field::Op2, Field::Op3].map(|o| f(i, o));
        let (ra, rb, rd) = (f(i, Field::Ra), f(i, Field::Rb), f(i, Field::Rd));
        let (rnd, ftz) = (round(f(i, Field::Rnd)), flag(i, Field::Ftz));
        for l in lanes(exec) {
            let (a, b) = (u64::from(w.r(ra, l)), u64::from(w.r(rb, l)));
            let (a, b) = match ops[l % 4] {
                NP => (a ^ 0x8000_0000, b),
                PN => (a, b ^ 0x8000_0000),
                ZP => (0, b),
                _ => (a, b),
            };
            w.set_r(rd, l, fl::add(FloatFmt::F32, a, b, rnd, ftz) as u32);
        }
        Ok(())
    }

    /// Execute one floating-point instruction (see the module essay).
    // Long by design: one arm per floating-point class, after the modifiers they share.
    pub(super) fn float(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        // FMUL, FFMA32I and FMUL32I number `.FTZ`/`.FMZ` as FFMA does.
        use crate::sm50::values::ffma::fmz;
        // `.CC` on FSET/DSET sets ZF/SF from the 32-bit result, as on ISET (ptxas's f32
        // division slow path tests `FSET.NEU ... RZ.CC, |x|, +INF` with `BRA CC.EQ`).
        let set_cc = flag(i, Field::Cc);
        if set_cc && !matches!(i.form, FSET_R | FSET_C | FSET_I | DSET_R | DSET_C | DSET_I) {
            return Err(unsupported(addr, i, "float .CC"));
        }
        let wide = matches!(
            i.form,
            DADD_R
                | DADD_C
                | DADD_I
                | DMUL_R
                | DMUL_C
                | DMUL_I
                | DFMA_R
                | DFMA_C
                | DFMA_CC
                | DFMA_I
                | DSETP_R
                | DSETP_C
                | DSETP_I
                | DMNMX_R
                | DMNMX_C
                | DMNMX_I
                | DSET_R
                | DSET_C
                | DSET_I
        );
        let (fmt, words, bits) = if wide {
            (FloatFmt::F64, 2, 64)
        } else {
            (FloatFmt::F32, 1, 32)
        };
        match i.form {
            I2F_R | I2F_C | I2F_I => return self.i2f(w, i, addr, exec),
            F2I_R | F2I_C | F2I_I => return self.f2i(w, i, addr, exec),
            F2F_R | F2F_C | F2F_I => return self.f2f(w, i, addr, exec),
            _ => {}
        }
        if f(i, Field::Fmz) == fmz::FMZ {
            return Err(unsupported(addr, i, "FMUL .FMZ"));
        }
        // FMUL's `.D2/.D4/.D8` and `.M8/.M4/.M2`: the product times 2^k, rounded once.
        use crate::sm50::values::fmul::scale::{D2, D8, DEFAULT, M2, M8};
        let scale = match f(i, Field::Scale) {
            DEFAULT => 0,
            s @ D2..=D8 => -(s as i32),
            s @ M8..=M2 => 7 - s as i32,
            _ => return Err(unsupported(addr, i, "this FMUL scale")),
        };
        let ftz = flag(i, Field::Ftz) || f(i, Field::Fmz) == fmz::FTZ;
        let sat = flag(i, Field::Sat);
        let rnd = round(f(i, Field::Rnd));
        let ra = f(i, Field::Ra);
        let (na, nb, nc) = (
            flag(i, Field::Nega),
            flag(i, Field::Negb),
            flag(i, Field::Negc),
        );
        let (aa, ab) = (flag(i, Field::Absa), flag(i, Field::Absb));
        let (b, c) = if matches!(i.form, FFMA_CC | DFMA_CC) {
            let off = f(i, Field::Cbo);
            let bank = f(i, Field::Cbk) as u8;
            let lo = u64::from(self.mem.const32(addr, bank, off * 4)?);
            let hi = if wide {
                u64::from(self.mem.const32(addr, bank, off * 4 + 4)?)
            } else {
                0
            };
            (FSrc::Reg(f(i, Field::Rb)), FSrc::Val(lo | hi << 32))
        } else {
            let b = self.fsrc_b(i, addr, words)?;
            let c = get(i, Field::Rc).map_or(FSrc::Val(0), FSrc::Reg);
            (b, c)
        };
        let sat_if = |r: u64| if sat { fl::saturate(fmt, r) } else { r };
        let rd = f(i, Field::Rd);
        match i.form {
            FADD_R | FADD_C | FADD_I | FADD32I | DADD_R | DADD_C | DADD_I => {
                for l in lanes(exec) {
                    let a = modify(w.rw(ra, words, l), bits, aa, na);
                    let bv = modify(w.fval(b, words, l), bits, ab, nb);
                    let r = sat_if(fl::add(fmt, a, bv, rnd, ftz));
                    w.set_rw(rd, words, l, r);
                }
            }
            FMUL_R | FMUL_C | FMUL_I | FMUL32I | DMUL_R | DMUL_C | DMUL_I => {
                for l in lanes(exec) {
                    let a = w.rw(ra, words, l);
                    let bv = modify(w.fval(b, words, l), bits, false, nb);
                    let r = sat_if(fl::mul_scaled(fmt, a, bv, scale, rnd, ftz));
                    w.set_rw(rd, words, l, r);
                }
            }
            FFMA_R | FFMA_C | FFMA_CC | FFMA_I | DFMA_R | DFMA_C | DFMA_CC | DFMA_I => {
                for l in lanes(exec) {
                    let a = w.rw(ra, words, l);
                    let bv = modify(w.fval(b, words, l), bits, false, nb);
                    let cv = modify(w.fval(c, words, l), bits, false, nc);
                    let r = sat_if(fl::fma(fmt, a, bv, cv, rnd, ftz));
                    w.set_rw(rd, words, l, r);
                }
            }
            FMNMX_R | FMNMX_C | FMNMX_I | DMNMX_R | DMNMX_C | DMNMX_I => {
                let (pacc, paccn) = (f(i, Field::Pacc), flag(i, Field::Paccn));
                for l in lanes(exec) {
                    let a = modify(w.rw(ra, words, l), bits, aa, na);
                    let bv = modify(w.fval(b, words, l), bits, ab, nb);
                    let min = w.p(pacc, l) != paccn;
                    w.set_rw(rd, words, l, fl::minmax(fmt, a, bv, !min, ftz));
                }
            }
            FSETP_R | FSETP_C | FSETP_I | DSETP_R | DSETP_C | DSETP_I => {
                let cc = cond(f(i, Field::Cmp));
                let bop = f(i, Field::Bop);
                let (pacc, paccn) = (f(i, Field::Pacc), flag(i, Field::Paccn));
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                for l in lanes(exec) {
                    let a = modify(w.rw(ra, words, l), bits, aa, na);
                    let bv = modify(w.fval(b, words, l), bits, ab, nb);
                    let r = match cc {
                        Ok(cc) => cc.holds(fl::compare(fmt, a, bv, ftz)),
                        Err(k) => k,
                    };
                    let acc = w.p(pacc, l) != paccn;
                    w.set_p(pd0, l, bool_op(bop, r, acc));
                    w.set_p(pd1, l, bool_op(bop, !r, acc));
                }
            }
            FSET_R | FSET_C | FSET_I | DSET_R | DSET_C | DSET_I => {
                // A 32-bit result: 1.0f (.BF) or all ones where the test holds, else 0.
                let cc = cond(f(i, Field::Cmp));
                let bop = f(i, Field::Bop);
                let (pacc, paccn) = (f(i, Field::Pacc), flag(i, Field::Paccn));
                let t = if flag(i, Field::Bf) {
                    0x3f80_0000
                } else {
                    u32::MAX
                };
                for l in lanes(exec) {
                    let a = modify(w.rw(ra, words, l), bits, aa, na);
                    let bv = modify(w.fval(b, words, l), bits, ab, nb);
                    let r = match cc {
                        Ok(cc) => cc.holds(fl::compare(fmt, a, bv, ftz)),
                        Err(k) => k,
                    };
                    let acc = w.p(pacc, l) != paccn;
                    let v = if bool_op(bop, r, acc) { t } else { 0 };
                    w.set_r(rd, l, v);
                    if set_cc {
                        w.cc[l] = zs(v);
                    }
                }
            }
            FCMP_R | FCMP_C | FCMP_I | FCMP_CR => {
                // Rd = (C cmp 0.0) ? Ra : B, a select of the raw bits (ptxas's `selp` of a
                // float comparison with zero; `.FTZ` flushes C before the test). In the CR
                // form B is Rb and C the constant.
                let cc = cond(f(i, Field::Cmp));
                let (b, c) = if i.form == FCMP_CR {
                    let off = f(i, Field::Cbo);
                    let bank = f(i, Field::Cbk) as u8;
                    let v = u64::from(self.mem.const32(addr, bank, off * 4)?);
                    (FSrc::Reg(f(i, Field::Rb)), FSrc::Val(v))
                } else {
                    (b, c)
                };
                for l in lanes(exec) {
                    let r = match cc {
                        Ok(cc) => cc.holds(fl::compare(fmt, w.fval(c, 1, l), 0, ftz)),
                        Err(k) => k,
                    };
                    let v = if r { w.rw(ra, 1, l) } else { w.fval(b, 1, l) };
                    w.set_rw(rd, 1, l, v);
                }
            }
            FCHK_R | FCHK_C | FCHK_I => {
                let pd = f(i, Field::Pd);
                for l in lanes(exec) {
                    let a = modify(w.rw(ra, 1, l), 32, aa, na) as u32;
                    let bv = modify(w.fval(b, 1, l), 32, ab, nb) as u32;
                    w.set_p(pd, l, fchk_divide(a, bv));
                }
            }
            _ => return Err(unsupported(addr, i, "this float instruction")),
        }
        Ok(())
    }

    fn i2f(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let (st, bsel) = (f(i, Field::St), f(i, Field::Bsel));
        let Some(to) = fmt_of(f(i, Field::Dsz)) else {
            return Err(unsupported(addr, i, "I2F size"));
        };
        let src_bits = 8u32 << (st & 3);
        let b = self.fsrc_b(i, addr, if src_bits == 64 { 2 } else { 1 })?;
        let (neg, abs) = (flag(i, Field::Negb), flag(i, Field::Absb));
        let rnd = round(f(i, Field::Rnd));
        let rd = f(i, Field::Rd);
        let words_out = if to == FloatFmt::F64 { 2 } else { 1 };
        for l in lanes(exec) {
            let raw = w.fval(b, if src_bits == 64 { 2 } else { 1 }, l);
            let raw = if src_bits < 32 {
                raw >> (8 * bsel)
            } else {
                raw
            };
            let raw = if src_bits == 64 {
                raw
            } else {
                raw & ((1u64 << src_bits) - 1)
            };
            let mut v: i128 = if st & 4 != 0 {
                i128::from(crate::sm50::rt::sext(raw, src_bits) as i64)
            } else {
                i128::from(raw)
            };
            if abs {
                v = v.abs();
            }
            if neg {
                v = -v;
            }
            let r = fl::round_to(to, v < 0, v.unsigned_abs(), 0, rnd, false);
            w.set_rw(rd, words_out, l, r);
        }
        Ok(())
    }

    fn f2i(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let dt = f(i, Field::Dt);
        let Some(from) = fmt_of(f(i, Field::Ssz)) else {
            return Err(unsupported(addr, i, "F2I size"));
        };
        // .U16/.S16 saturate to the 16-bit range and write the value zero- or sign-extended
        // to 32 bits (ptxas stores `F2I.S16`'s register straight as a sign-extended s32).
        // The size without the sign bit.
        use crate::sm50::values::f2i::dt::{U16, U32, U64};
        let (to, words_out) = match dt & 3 {
            U16 => (Type::I16, 1),
            U32 => (Type::I32, 1),
            U64 => (Type::I64, 2),
            _ => return Err(unsupported(addr, i, "F2I to 8 bits")),
        };
        let h1 = flag(i, Field::H1);
        if h1 && from != FloatFmt::F16 {
            return Err(unsupported(addr, i, "F2I .H1 on a non-F16 source"));
        }
        let words_in = if from == FloatFmt::F64 { 2 } else { 1 };
        let b = self.fsrc_b(i, addr, words_in)?;
        let (neg, abs) = (flag(i, Field::Negb), flag(i, Field::Absb));
        let (rnd, ftz) = (round(f(i, Field::Rnd)), flag(i, Field::Ftz));
        let rd = f(i, Field::Rd);
        for l in lanes(exec) {
            let x = source(w.fval(b, words_in, l), from, h1);
            let x = modify(x, from.bits(), abs, neg);
            let r = fl::to_int(from, x, to, dt & 4 != 0, rnd, ftz);
            let r = if to == Type::I16 && dt & 4 != 0 {
                r as u16 as i16 as i32 as u32 as u64
            } else {
                r
            };
            w.set_rw(rd, words_out, l, r);
        }
        Ok(())
    }

    fn f2f(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let (Some(to), Some(from)) = (fmt_of(f(i, Field::Dsz)), fmt_of(f(i, Field::Ssz))) else {
            return Err(unsupported(addr, i, "F2F size"));
        };
        let h1 = flag(i, Field::H1);
        if h1 && from != FloatFmt::F16 {
            return Err(unsupported(addr, i, "F2F .H1 on a non-F16 source"));
        }
        let ri = flag(i, Field::Ri);
        if ri != (to == from) {
            return Err(unsupported(addr, i, "F2F rounding vs. sizes"));
        }
        let words_in = if from == FloatFmt::F64 { 2 } else { 1 };
        let words_out = if to == FloatFmt::F64 { 2 } else { 1 };
        let b = self.fsrc_b(i, addr, words_in)?;
        let (neg, abs) = (flag(i, Field::Negb), flag(i, Field::Absb));
        let (rnd, ftz, sat) = (
            round(f(i, Field::Rm)),
            flag(i, Field::Ftz),
            flag(i, Field::Sat),
        );
        let rd = f(i, Field::Rd);
        for l in lanes(exec) {
            let x = source(w.fval(b, words_in, l), from, h1);
            let x = modify(x, from.bits(), abs, neg);
            let r = if ri {
                fl::round_int(to, x, rnd, ftz)
            } else {
                fl::convert(from, to, x, rnd, ftz)
            };
            let r = if sat { fl::saturate(to, r) } else { r };
            w.set_rw(rd, words_out, l, r);
        }
        Ok(())
    }
}

/// The bits of a `from` operand in a register value (an F16 is a half of the word).
fn source(raw: u64, from: FloatFmt, h1: bool) -> u64 {
    match from {
        FloatFmt::F16 => (raw >> if h1 { 16 } else { 0 }) & 0xffff,
        FloatFmt::F32 => raw & 0xffff_ffff,
        FloatFmt::F64 => raw,
    }
}
