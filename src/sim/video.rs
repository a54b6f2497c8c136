//! The scalar video instructions: `VADD`, `VABSDIFF`, `VMNMX`, `VSET`, `VSHL`, `VSHR`,
//! `VMAD`, computed from their SASS fields.
//!
//! In: a decoded instruction of one of those forms and its lane's Ra, B (register, or the
//! immediate forms' 16-bit immediate, U16 or S16) and Rc values. Out: the 32-bit result, or
//! the reason the form is not simulated (`.CC`, an invalid selector, the `INVALIDVMADSCALE3`
//! scale, `VADD.PO`, which ptxas writes for no scalar PTX form).
//!
//! The model (the PTX text's rule for the forms ptxas 11.8 writes, which this crate's
//! `ir::video` also follows, read off the fields here on its own): A and B are the selected
//! byte (sel 0-3), half (4-5) or word (6) of Ra and B, sign-extended when `.S` (bits 48/49;
//! B of `VSHL`/`VSHR` is always unsigned), exact in i128; the primary result is A ± B
//! (`VADD`: bit 57 negates A, 56 B), |A - B|, min or max (`.MX`), the comparison's 0 or 1, or
//! the shift (`.W` takes the count mod 32, else it is clamped to 32; `VSHR` shifts
//! arithmetically as A's sign says); `.SAT` clamps it to the destination's range (bit 54
//! signed, else unsigned; 8 or 16 bits for the byte and half merges); its low 32 bits then
//! go through `.ACC` (+ Rc, wrapping), `.MIN`/`.MAX` with Rc (as the destination's sign;
//! unsigned for `VSET`) or a merge into Rc (`MRG_16H`, `MRG_16L`, `MRG_8B0`, `MRG_8B2`).
//! `VMAD`: ±(A * B) ± Rc (bit 54 negates the product, 53 Rc; both = A * B + Rc + 1), Rc
//! sign-extended when A or B is signed or one operand is negated (not with .PO), shifted
//! right by 0, 7 or 15, and with `.SAT` clamped to the 32-bit range of that sign.

use crate::sm50::{Field, Form, Inst};

fn f(i: &Inst, field: Field) -> u64 {
    i.get(field).unwrap_or(0)
}

fn flag(i: &Inst, field: Field) -> bool {
    f(i, field) != 0
}

/// Selector `sel` of `x`, extended as `signed` says.
fn part(x: u32, sel: u64, signed: bool) -> Result<i128, &'static str> {
    let v = match sel {
        0..=3 => {
            let byte = (x >> (8 * sel)) as u8;
            if signed {
                i64::from(byte as i8)
            } else {
                i64::from(byte)
            }
        }
        4 | 5 => {
            let half = (x >> (16 * (sel - 4))) as u16;
            if signed {
                i64::from(half as i16)
            } else {
                i64::from(half)
            }
        }
        6 if signed => i64::from(x as i32),
        6 => i64::from(x),
        _ => return Err("an invalid video selector"),
    };
    Ok(i128::from(v))
}

/// `[lo, hi]` of a `bits`-bit destination.
fn range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The register-B form of a video form (the immediate forms compute alike).
fn base_form(form: Form) -> Form {
    match form {
        Form::VADD_I => Form::VADD,
        Form::VABSDIFF_I => Form::VABSDIFF,
        Form::VMNMX_I => Form::VMNMX,
        Form::VSHL_I => Form::VSHL,
        Form::VSHR_I => Form::VSHR,
        Form::VMAD_I | Form::VMAD32 | Form::VMAD32_I => Form::VMAD,
        f => f,
    }
}

/// The result of video instruction `i` on one lane's Ra, B and Rc.
pub(super) fn video(i: &Inst, ra: u32, b: u32, rc: u32) -> Result<u32, &'static str> {
    if flag(i, Field::Cc) {
        return Err("a video instruction with .CC");
    }
    let a = part(ra, f(i, Field::Sa), flag(i, Field::As))?;
    // The immediate forms' B is a 16-bit value, S16 with bit 49 (no such bit on the shifts).
    let form = base_form(i.form);
    let bv = if i.get(Field::Imm).is_some() {
        if flag(i, Field::Bs) {
            i128::from(b as u16 as i16)
        } else {
            i128::from(b as u16)
        }
    } else if matches!(form, Form::VSHL | Form::VSHR) {
        part(b, f(i, Field::Sb), false)?
    } else {
        part(b, f(i, Field::Sb), flag(i, Field::Bs))?
    };
    if form == Form::VMAD {
        let (negab, negc) = (flag(i, Field::Negab), flag(i, Field::Negc));
        // .PO (both bits) is no negation: it leaves the sign to the operands.
        let signed = flag(i, Field::As) || flag(i, Field::Bs) || negab != negc;
        let c = if signed {
            i128::from(rc as i32)
        } else {
            i128::from(rc)
        };
        let prod = a * bv;
        let t = match (negab, negc) {
            (true, true) => prod + c + 1,
            (true, false) => c - prod,
            (false, true) => prod - c,
            (false, false) => prod + c,
        };
        use crate::sm50::values::vmad::scale;
        let t = match f(i, Field::Scale) {
            scale::DEFAULT => t,
            scale::SHR_7 => t >> 7,
            scale::SHR_15 => t >> 15,
            _ => return Err("VMAD's scale 3"),
        };
        let t = if flag(i, Field::Sat) {
            let (lo, hi) = range(32, signed);
            t.clamp(lo, hi)
        } else {
            t
        };
        return Ok(t as u32);
    }
    let t: i128 = match form {
        Form::VADD => match (flag(i, Field::Nega), flag(i, Field::Negb)) {
            (true, true) => return Err("VADD.PO"),
            (true, false) => bv - a,
            (false, true) => a - bv,
            (false, false) => a + bv,
        },
        Form::VABSDIFF => (a - bv).abs(),
        Form::VMNMX if flag(i, Field::Mx) => a.max(bv),
        Form::VMNMX => a.min(bv),
        Form::VSET => {
            use crate::sm50::values::vset::cmp;
            let r = match f(i, Field::Cmp) {
                cmp::F => false,
                cmp::LT => a < bv,
                cmp::EQ => a == bv,
                cmp::LE => a <= bv,
                cmp::GT => a > bv,
                cmp::NE => a != bv,
                cmp::GE => a >= bv,
                _ => true,
            };
            i128::from(r)
        }
        _ => {
            // VSHL / VSHR: the count clamped to 32, or mod 32 with .W.
            let n = bv as u32;
            let n = if flag(i, Field::W) { n & 31 } else { n.min(32) };
            if form == Form::VSHL {
                a << n
            } else {
                a >> n
            }
        }
    };
    // VSET has no destination sign (its bits 54..56 are the comparison).
    let dsigned = match form {
        Form::VSET => false,
        Form::VABSDIFF => flag(i, Field::Sd),
        _ => flag(i, Field::Nud),
    };
    // Every video class numbers its vop alike.
    use crate::sm50::values::vadd::vop;
    let vop = f(i, Field::Vop);
    let bits = match vop {
        vop::MRG_16H | vop::MRG_16L => 16,
        vop::MRG_8B0 | vop::MRG_8B2 => 8,
        _ => 32,
    };
    let t = if form != Form::VSET && flag(i, Field::Sat) {
        let (lo, hi) = range(bits, dsigned);
        t.clamp(lo, hi)
    } else {
        t
    };
    let low = t as u32;
    Ok(match vop {
        vop::MRG_16H => (rc & 0xffff) | (low << 16),
        vop::MRG_16L => (rc & 0xffff_0000) | (low & 0xffff),
        vop::MRG_8B0 => (rc & 0xffff_ff00) | (low & 0xff),
        vop::MRG_8B2 => (rc & 0xff00_ffff) | ((low & 0xff) << 16),
        vop::ACC => low.wrapping_add(rc),
        vop::MIN if dsigned => (low as i32).min(rc as i32) as u32,
        vop::MAX if dsigned => (low as i32).max(rc as i32) as u32,
        vop::MIN => low.min(rc),
        vop::MAX => low.max(rc),
        _ => low,
    })
}
