//! The sm_53 half-precision instructions of the simulator: `HADD2`, `HMUL2`, `HFMA2`,
//! `HSETP2` and `HSET2` (register forms).
//!
//! In: a decoded instruction and the warp state. Out: the destination register (two f16
//! lanes, H0 in bits 0..15, H1 in bits 16..31) or predicates of every executing lane, or
//! [`SimError::Unsupported`] for what is not modelled: a `.F32` operand select and the
//! `.F32`/`.MRG_H0`/`.MRG_H1` output formats (selection never emits them), `.FMZ`.
//!
//! Each f16 lane is computed with the exact IEEE core of [`crate::ir::float`] (the IR
//! reference uses the same functions), so a result is correctly rounded to nearest even, a
//! NaN result is the canonical f16 NaN `0x7fff` (the model the project uses for every float
//! format; the hardware's NaN bits are not documented), `.FTZ` flushes f16 subnormal inputs
//! and outputs to zero of their sign, and `.SAT` clamps to [+0, 1]. A source's select picks
//! the halves: none = lane k reads half k, `.H0_H0` / `.H1_H1` = both lanes read that
//! half; the `-` and `|x|` modifiers act on each half's sign bit before the operation.
//!
//! `HSETP2 pd0, pd1, a, b, pacc`: pd0 is lane H0's test and pd1 lane H1's, each combined
//! with `pacc` by the boolean op (`.H_AND` first ANDs the two lanes' tests). `HSET2`: each
//! lane is all ones (`0x3c00`, 1.0, with `.BF`) where its combined test holds, else 0.

use super::exec::{f, flag, lanes, unsupported, Sim, Warp};
use super::float::{bool_op, cond, modify};
use super::SimError;
use crate::ir::float::{self as fl, FloatFmt, Round};
use crate::sm50::{Field, Form, Inst};

/// One source: its register and select, and the modifiers.
#[derive(Clone, Copy)]
struct HSrc {
    reg: u64,
    sel: u64,
    abs: bool,
    neg: bool,
}

impl HSrc {
    /// The f16 that lane `k` (0 = H0, 1 = H1) reads from the register value `v`.
    fn lane(self, v: u32, k: u32) -> u64 {
        // Every half class numbers its selects alike.
        use crate::sm50::values::hfma2::asel::{H0_H0, H1_H1};
        let half = match self.sel {
            H0_H0 => 0,
            H1_H1 => 1,
            _ => k,
        };
        modify(u64::from(v >> (16 * half)) & 0xffff, 16, self.abs, self.neg)
    }
}

impl Sim<'_> {
    /// Execute one half-precision instruction (see the module essay).
    pub(super) fn half(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use crate::sm50::values::hfma2::{asel, fmz, ofmt};
        use Form::*;
        // `f`/`flag` read 0 for a field the form lacks (no select, modifier or flag).
        if [Field::Asel, Field::Bsel, Field::Csel]
            .into_iter()
            .any(|s| f(i, s) == asel::F32)
        {
            return Err(unsupported(addr, i, "a .F32 half-precision operand"));
        }
        if f(i, Field::Ofmt) != ofmt::DEFAULT {
            return Err(unsupported(addr, i, "a half-precision output format"));
        }
        let ftz = match f(i, Field::Fmz) {
            fmz::DEFAULT => flag(i, Field::Ftz),
            fmz::FTZ => true,
            _ => return Err(unsupported(addr, i, "half-precision .FMZ")),
        };
        let src = |reg, sel, abs, neg| HSrc {
            reg: f(i, reg),
            sel: f(i, sel),
            abs: flag(i, abs),
            neg: flag(i, neg),
        };
        let a = src(Field::Ra, Field::Asel, Field::Absa, Field::Nega);
        let b = src(Field::Rb, Field::Bsel, Field::Absb, Field::Negb);
        // HFMA2's C (no |x|); the other forms have none (register 0, never read).
        let c = HSrc {
            reg: f(i, Field::Rc),
            sel: f(i, Field::Csel),
            abs: false,
            neg: flag(i, Field::Negc),
        };
        let h = FloatFmt::F16;
        let sat = flag(i, Field::Sat);
        let sat_if = |r: u64| if sat { fl::saturate(h, r) } else { r };
        match i.form {
            HADD2_R | HMUL2_R | HFMA2_R => {
                let rd = f(i, Field::Rd);
                for l in lanes(exec) {
                    let (va, vb) = (w.r(a.reg, l), w.r(b.reg, l));
                    let vc = w.r(c.reg, l);
                    let mut out = 0u32;
                    for k in 0..2 {
                        let (x, y) = (a.lane(va, k), b.lane(vb, k));
                        let r = match i.form {
                            HADD2_R => fl::add(h, x, y, Round::Rn, ftz),
                            HMUL2_R => fl::mul(h, x, y, Round::Rn, ftz),
                            _ => fl::fma(h, x, y, c.lane(vc, k), Round::Rn, ftz),
                        };
                        out |= (sat_if(r) as u32 & 0xffff) << (16 * k);
                    }
                    w.set_r(rd, l, out);
                }
            }
            HSETP2_R | HSET2_R => {
                let cc = cond(f(i, Field::Cmp));
                let bop = f(i, Field::Bop);
                let (pacc, paccn) = (f(i, Field::Pacc), flag(i, Field::Paccn));
                let hand = i.form == HSETP2_R && flag(i, Field::Hand);
                for l in lanes(exec) {
                    let (va, vb) = (w.r(a.reg, l), w.r(b.reg, l));
                    let mut t = [false; 2];
                    for (k, t) in t.iter_mut().enumerate() {
                        let (x, y) = (a.lane(va, k as u32), b.lane(vb, k as u32));
                        *t = match cc {
                            Ok(cc) => cc.holds(fl::compare(h, x, y, ftz)),
                            Err(v) => v,
                        };
                    }
                    if hand {
                        t = [t[0] && t[1]; 2];
                    }
                    let acc = w.p(pacc, l) != paccn;
                    let r = [bool_op(bop, t[0], acc), bool_op(bop, t[1], acc)];
                    if i.form == HSETP2_R {
                        w.set_p(f(i, Field::Pd0), l, r[0]);
                        w.set_p(f(i, Field::Pd1), l, r[1]);
                    } else {
                        let one = if flag(i, Field::Bf) { 0x3c00 } else { 0xffff };
                        let v = |x: bool| if x { one } else { 0 };
                        w.set_r(f(i, Field::Rd), l, v(r[0]) | v(r[1]) << 16);
                    }
                }
            }
            _ => return Err(unsupported(addr, i, "this half-precision instruction")),
        }
        Ok(())
    }
}
