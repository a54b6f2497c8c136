//! `MUFU` and `RRO` in the simulator, on the numeric model of [`crate::mufu`], and the
//! [`SimOptions`] knob that perturbs `MUFU` results to test that IEEE sequences do not depend
//! on the model's exact bits.

use super::exec::{f, flag, unsupported, Sim, Warp};
use super::SimError;
use crate::mufu::{self, Func};
use crate::sm50::{Field, Form, Inst};

/// Simulator options that change results (the defaults are the documented model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimOptions {
    /// Every finite non-zero `MUFU` result is moved by this many ulps (see
    /// [`mufu::perturb`]): hardware is within ~1-2 ulp of the model, so code whose results
    /// must be exact has to give the same results for -2..=2.
    pub mufu_ulps: i32,
}

/// f32 bits with the negate/abs modifiers applied (sign-bit operations, as on hardware).
fn modify(bits: u32, neg: bool, abs: bool) -> u32 {
    let b = if abs { bits & 0x7fff_ffff } else { bits };
    if neg {
        b ^ 0x8000_0000
    } else {
        b
    }
}

/// Saturate an f32 result to [0, 1] (NaN becomes 0).
fn saturate(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        1.0f32.to_bits()
    } else {
        bits
    }
}

impl Sim<'_> {
    /// `MUFU.<op>{.SAT} Rd, {-}{|}Ra{|}`.
    pub(super) fn mufu(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let Some(func) = Func::from_code(f(i, Field::Op)) else {
            // MUFU.SQRT (sm_52/53): its hardware error is not modelled.
            return Err(unsupported(addr, i, "MUFU.SQRT"));
        };
        let (ra, neg, abs, sat) = (
            f(i, Field::Ra),
            flag(i, Field::Nega),
            flag(i, Field::Absa),
            flag(i, Field::Sat),
        );
        let wide = matches!(func, Func::Rcp64h | Func::Rsq64h);
        let ulps = self.opts.mufu_ulps;
        self.alu(w, i, exec, |w, l| {
            let r = mufu::eval(func, modify(w.r(ra, l), neg, abs));
            let r = mufu::perturb(r, ulps, wide);
            if sat && !wide {
                saturate(r)
            } else {
                r
            }
        });
        Ok(())
    }

    /// `RRO.{SINCOS,EX2} Rd, B`.
    pub(super) fn rro(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let b = self.src_b(i, addr)?;
        let (neg, abs) = (flag(i, Field::Negb), flag(i, Field::Absb));
        debug_assert!(matches!(i.form, Form::RRO_R | Form::RRO_C | Form::RRO_I));
        self.alu(w, i, exec, |w, l| mufu::rro(modify(w.val(b, l), neg, abs)));
        Ok(())
    }
}
