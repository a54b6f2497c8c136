//! The `--fold=none` baseline: the address `base + ([-]index << s)` computed without `LEA`,
//! with the shift/add sequences a compiler without LEA folding emits (ISCADD, SHL, SHR, SHF,
//! IADD.CC + IADD.X).
//!
//! In and out as [`super::lea`]: the chain's leaves already in registers (or a constant-bank
//! base), and one [`Sm50Inst`] defining the address (early def, since intermediate words are
//! written before every input is read). Never a `Plg` predicate and never a displacement:
//! without a chain there is nothing to take the predicate from, so the caller leaves the
//! displacement in the memory instruction and generic accesses use `PT`.
//!
//! Shapes (h = high word of the shifted index, computed into `d.hi` first):
//!
//! ```text
//! 64-bit:  h: index 64-bit  SHF.L.U64 d.hi, i.lo, s, i.hi     (s = 0: i.hi itself)
//!             sign-extended SHR d.hi, i, 32-s                  (s = 0: SHR d.hi, i, 0x1f)
//!             zero-extended SHR.U32 d.hi, i, 32-s              (s = 0: RZ)
//!          ISCADD d.lo.CC, i.lo, base.lo, s                    (s = 0: IADD.CC)
//!          IADD.X d.hi, h, base.hi
//!   negated index: SHL d.lo, i.lo, s ; IADD.CC d.lo, -d.lo, base.lo ; IADD.X d.hi, -h, base.hi
//! 32-bit:  ISCADD d, i, base, s   (s = 0: IADD; no base: SHL; negated: SHL then IADD -d)
//! ```
//!
//! A missing base is `RZ` (the register fields' default). The carry pair stays adjacent.

use super::amode::Ext;
use super::inst::{Role, Sm50Inst};
use super::lea::{Chain, ChainBase, ChainIndex};
use crate::machinst::{OpSpec, PhysReg, Reg, RegKind, VReg};
use crate::sm50::{self, Field, Form};

/// The forms `(register B, constant-bank B)` for a base.
fn b_form(base: ChainBase, r: Form, c: Form) -> Form {
    match base {
        ChainBase::Cbuf(_) => c,
        _ => r,
    }
}

/// The base as an operand of `i` (one operand however many words use it): (operand, word
/// offset), or None for a constant-bank base or none.
fn base_op(i: &mut Sm50Inst, base: ChainBase) -> Option<(u8, u8)> {
    match base {
        ChainBase::Reg(l) => Some((i.use_(l.vreg), l.offset)),
        ChainBase::Sp => Some((i.op(Reg::Phys(PhysReg::SP), OpSpec::use_()), 0)),
        ChainBase::Cbuf(_) | ChainBase::None => None,
        // `Lowerer::split_base` makes split bases for `--fold=full` only.
        ChainBase::Split { .. } => unreachable!("a split base in a --fold=none chain"),
    }
}

/// Add the base's word `w` to `inst`/`refs` as operand B.
fn add_base(
    base: ChainBase,
    bop: Option<(u8, u8)>,
    w: u32,
    inst: &mut sm50::Inst,
    refs: &mut Vec<(Field, u8, u8)>,
) {
    if let ChainBase::Cbuf(off) = base {
        inst.set(Field::Cbo, u64::from(off / 4 + w));
    }
    if let Some((op, o)) = bop {
        refs.push((Field::Rb, op, o + w as u8));
    }
}

/// A 64-bit address without LEA. Without an index the address is the base copied.
pub fn wide_chain(
    new_vreg: &mut dyn FnMut(RegKind) -> VReg,
    base: ChainBase,
    index: Option<ChainIndex>,
) -> Chain {
    let addr = new_vreg(RegKind::B64);
    let mut i = Sm50Inst::new(Role::Plain);
    let d = i.def(addr, true);
    let bop = base_op(&mut i, base);
    let Some(ix) = index else {
        for w in 0..2u32 {
            let mut mov = sm50::Inst::new(b_form(base, Form::MOV_R, Form::MOV_C));
            let mut refs = vec![(Field::Rd, d, w as u8)];
            add_base(base, bop, w, &mut mov, &mut refs);
            i.piece(mov, &refs);
        }
        return Chain {
            inst: i,
            addr,
            plg: None,
        };
    };
    let x = i.use_(ix.loc.vreg);
    let (lo, s) = (ix.loc.offset, u64::from(ix.shift));
    // h, the high word of the shifted index: in d.hi, in i.hi, or RZ (None).
    let h: Option<(u8, u8)> = match (ix.ext, s) {
        (Ext::None, 0) => Some((x, lo + 1)),
        (Ext::None, _) => {
            let shf = sm50::Inst::new(Form::SHF_LI)
                .with(Field::Ty, sm50::values::shf::ty::U64)
                .with(Field::Sh, s);
            i.piece(
                shf,
                &[
                    (Field::Rd, d, 1),
                    (Field::Ra, x, lo),
                    (Field::Rc, x, lo + 1),
                ],
            );
            Some((d, 1))
        }
        (Ext::Zext, 0) => None,
        (ext, _) => {
            let sgn = ext == Ext::Sext;
            let n = if s == 0 { 31 } else { 32 - s };
            let shr = sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, sgn as u64)
                .with_signed(Field::ImmImm20s, n as i64);
            i.piece(shr, &[(Field::Rd, d, 1), (Field::Ra, x, lo)]);
            Some((d, 1))
        }
    };
    // Low word, setting the carry.
    let mut lo_refs = vec![(Field::Rd, d, 0)];
    let mut lo_inst = if ix.neg {
        let src = if s > 0 {
            let shl = sm50::Inst::new(Form::SHL_I).with_signed(Field::ImmImm20s, s as i64);
            i.piece(shl, &[(Field::Rd, d, 0), (Field::Ra, x, lo)]);
            (d, 0)
        } else {
            (x, lo)
        };
        lo_refs.push((Field::Ra, src.0, src.1));
        sm50::Inst::new(b_form(base, Form::IADD_R, Form::IADD_C)).with(Field::Nega, 1)
    } else if s > 0 {
        lo_refs.push((Field::Ra, x, lo));
        sm50::Inst::new(b_form(base, Form::ISCADD_R, Form::ISCADD_C)).with(Field::S, s)
    } else {
        lo_refs.push((Field::Ra, x, lo));
        sm50::Inst::new(b_form(base, Form::IADD_R, Form::IADD_C))
    };
    lo_inst.set(Field::Cc, 1);
    add_base(base, bop, 0, &mut lo_inst, &mut lo_refs);
    i.piece(lo_inst, &lo_refs);
    // High word, adding the carry.
    let mut hi_refs = vec![(Field::Rd, d, 1)];
    if let Some((op, o)) = h {
        hi_refs.push((Field::Ra, op, o));
    }
    let mut hi_inst = sm50::Inst::new(b_form(base, Form::IADD_R, Form::IADD_C))
        .with(Field::X, 1)
        .with(Field::Nega, ix.neg as u64);
    add_base(base, bop, 1, &mut hi_inst, &mut hi_refs);
    i.piece(hi_inst, &hi_refs);
    Chain {
        inst: i,
        addr,
        plg: None,
    }
}

/// A 32-bit address without LEA.
pub fn narrow_chain(
    new_vreg: &mut dyn FnMut(RegKind) -> VReg,
    base: ChainBase,
    index: ChainIndex,
) -> Chain {
    let addr = new_vreg(RegKind::B32);
    let mut i = Sm50Inst::new(Role::Plain);
    let d = i.def(addr, true);
    let x = i.use_(index.loc.vreg);
    let bop = base_op(&mut i, base);
    let (lo, s) = (index.loc.offset, u64::from(index.shift));
    let shl = |i: &mut Sm50Inst| {
        let shl = sm50::Inst::new(Form::SHL_I).with_signed(Field::ImmImm20s, s as i64);
        i.piece(shl, &[(Field::Rd, d, 0), (Field::Ra, x, lo)]);
    };
    if base == ChainBase::None && !index.neg && s > 0 {
        shl(&mut i);
    } else {
        let mut refs = vec![(Field::Rd, d, 0)];
        let mut inst = if index.neg {
            if s > 0 {
                shl(&mut i);
                refs.push((Field::Ra, d, 0));
            } else {
                refs.push((Field::Ra, x, lo));
            }
            sm50::Inst::new(b_form(base, Form::IADD_R, Form::IADD_C)).with(Field::Nega, 1)
        } else if s > 0 {
            refs.push((Field::Ra, x, lo));
            sm50::Inst::new(b_form(base, Form::ISCADD_R, Form::ISCADD_C)).with(Field::S, s)
        } else {
            refs.push((Field::Ra, x, lo));
            sm50::Inst::new(b_form(base, Form::IADD_R, Form::IADD_C))
        };
        add_base(base, bop, 0, &mut inst, &mut refs);
        i.piece(inst, &refs);
    }
    Chain {
        inst: i,
        addr,
        plg: None,
    }
}
