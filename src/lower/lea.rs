//! LEA chains: one [`Sm50Inst`] computing `base + (index << s) [+ disp]` and, on request,
//! the `Plg` predicate for a generic access.
//!
//! In: the leaves of an [`super::amode::AddrMode`] already in registers ([`Loc`]s), or a
//! constant-bank parameter base, plus the displacement the caller wants inside the chain.
//! Out: an instruction defining the address (a pair for 64-bit, one register for 32-bit) as an
//! early def, and optionally a predicate def (`Plg`, written by the chain's last LEA).
//!
//! Shapes (s = scale 0..31; `-` when the index is subtracted, seed `A[100-i]`):
//!
//! ```text
//! 64-bit:  [SHR d.hi, i, 0x1f]                      only for a sign-extended i32 index
//!          LEA      d.lo.CC, [-]i.lo, base.lo, s     base: register, c[0x0][0x140+off], RZ
//!          LEA.HI.X [P,] d.hi, [-]i.lo, base.hi, i.hi|RZ|d.hi|sign, s
//!          [LEA d.lo.CC, d.lo, disp ; LEA.HI.X [P,] d.hi, RZ, d.hi, RZ|ones]   disp in chain
//! 32-bit:  LEA [P,] d, [-]i, base, s                 base: register, c[..], imm20, RZ
//!          [LEA P, d, d, disp]                       disp in chain
//! ```
//!
//! A base that is an i32 widened to 64 bits ([`ChainBase::Split`]) gives `base.lo` = the
//! value and `base.hi` = `RZ` (zero extension) or its shared sign word, so it is never built
//! as a pair first.
//!
//! Trade-offs: the sign word is one `SHR` (no `BFE` as in the seed). With `--fold=full` the
//! selector computes it once per index (`ChainIndex::sign`) when several chains use that
//! index, and every one of them reads it, one instruction saved per further chain for a register that lives longer;
//! otherwise it lives inside the chain, in the high word of the result. A displacement in
//! the chain costs two more LEAs (64-bit) or one (32-bit) and is asked for only where the
//! predicate must cover the final address (generic accesses under `--plg-per-address`); a
//! negative one needs an all-ones high word (`MOV32I t, 0xffffffff`), as LEA.HI has no
//! immediate form. In the second pair `Ra = RZ` is harmless: with `s = 0` and `Rc = RZ`,
//! `LEA.HI` adds only `B` and the carry, so the pair can update `d` in place.

use super::amode::Ext;
use super::inst::{Role, Sm50Inst};
use crate::machinst::{OpSpec, PhysReg, Reg, RegKind, VReg};
use crate::sm50::{self, Field, Form};

/// Where a value lives: a register group and the word offset inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub vreg: VReg,
    pub offset: u8,
}

/// The base of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainBase {
    None,
    Reg(Loc),
    /// Byte offset in constant bank 0 (low word; the high word follows at +4).
    Cbuf(u32),
    /// A 64-bit base whose words live apart: an extended i32 value as the low word and, as
    /// the high word, its sign word (`SHR s, x, 0x1f`, sign extension) or `RZ` (`None`,
    /// zero extension). LEA reads base.lo and base.hi from separate fields, so the extended
    /// value need not be built as a pair (`MOV lo, x` + `SHR hi, x, 0x1f`) first.
    Split {
        lo: Loc,
        hi: Option<Loc>,
    },
    /// The stack pointer R1 (32-bit chains of `.local` addresses only).
    Sp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainIndex {
    pub loc: Loc,
    pub ext: Ext,
    pub shift: u8,
    pub neg: bool,
    /// For a sign-extended index of a 64-bit chain: its sign word already in a register
    /// (`SHR s, i, 0x1f`, shared by every chain over the same index); `None`: the chain
    /// computes it itself into the high word of its result.
    pub sign: Option<Loc>,
}

/// What a chain produced.
pub struct Chain {
    pub inst: Sm50Inst,
    pub addr: VReg,
    pub plg: Option<VReg>,
}

/// A 64-bit chain. `disp` must fit a signed imm20 (the caller checks).
pub fn wide_chain(
    new_vreg: &mut dyn FnMut(RegKind) -> VReg,
    base: ChainBase,
    index: Option<ChainIndex>,
    disp: i64,
    want_plg: bool,
) -> Chain {
    debug_assert!(fits_imm20(disp));
    let addr = new_vreg(RegKind::B64);
    let plg = want_plg.then(|| new_vreg(RegKind::Pred));
    let mut i = Sm50Inst::new(Role::Plain);
    // Which registers the result may share. Every piece reads the index (and its high word or
    // sign word) after the first has written `d.lo`, so the index is a late use: `d` never
    // lands on it. The base is read word by word before that word of `d` is written (`lo`
    // reads base.lo and writes d.lo; `hi` reads base.hi and writes d.hi), so `d` may take
    // the base's pair, as a loop's `p = p + stride` wants (no copy back on the back edge) —
    // unless the chain first writes its own sign word into `d.hi`, before `hi` reads
    // base.hi: then `d` is an early def, apart from everything.
    let sign_in_chain = index.is_some_and(|ix| ix.ext == Ext::Sext && ix.sign.is_none());
    let d = i.def(addr, sign_in_chain);
    let p = plg.map(|p| i.def(p, true));
    let ix = index.map(|ix| (i.op(Reg::Virt(ix.loc.vreg), OpSpec::late_use()), ix));
    // The base's words as (operand, word offset): base.lo, and base.hi unless it is RZ.
    let base_words = match base {
        ChainBase::Reg(l) => {
            let op = i.use_(l.vreg);
            Some(((op, l.offset), Some((op, l.offset + 1))))
        }
        ChainBase::Split { lo, hi } => Some((
            (i.use_(lo.vreg), lo.offset),
            hi.map(|h| (i.use_(h.vreg), h.offset)),
        )),
        _ => None,
    };
    let scale = index.map_or(0, |ix| u64::from(ix.shift));
    let neg = index.is_some_and(|ix| ix.neg) as u64;

    let sign = index
        .and_then(|ix| ix.sign)
        .map(|l| (i.op(Reg::Virt(l.vreg), OpSpec::late_use()), l.offset));
    if let Some((op, ix)) = ix {
        if ix.ext == Ext::Sext && sign.is_none() {
            let shr = sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, 1)
                .with(Field::ImmImm20s, 0x1f);
            i.piece(shr, &[(Field::Rd, d, 1), (Field::Ra, op, ix.loc.offset)]);
        }
    }
    // Low word.
    let (form_lo, form_hi) = match base {
        ChainBase::Cbuf(_) => (Form::LEA_C, Form::LEA_HI_C),
        _ => (Form::LEA_R, Form::LEA_HI_R),
    };
    let mut lo = sm50::Inst::new(form_lo)
        .with(Field::Cc, 1)
        .with(Field::S, scale)
        .with(Field::Nega, neg);
    let mut hi = sm50::Inst::new(form_hi)
        .with(Field::X, 1)
        .with(Field::S, scale)
        .with(Field::Nega, neg);
    let mut lo_refs = vec![(Field::Rd, d, 0)];
    let mut hi_refs = vec![(Field::Rd, d, 1)];
    if let Some((op, ix)) = ix {
        lo_refs.push((Field::Ra, op, ix.loc.offset));
        hi_refs.push((Field::Ra, op, ix.loc.offset));
        match ix.ext {
            Ext::None => hi_refs.push((Field::Rc, op, ix.loc.offset + 1)),
            Ext::Zext => {}
            Ext::Sext => match sign {
                Some((s, o)) => hi_refs.push((Field::Rc, s, o)),
                None => hi_refs.push((Field::Rc, d, 1)),
            },
        }
    }
    if let ChainBase::Cbuf(off) = base {
        lo.set(Field::Cbo, u64::from(off / 4));
        hi.set(Field::Cbo, u64::from(off / 4 + 1));
    }
    if let Some(((op, o), hi_word)) = base_words {
        lo_refs.push((Field::Rb, op, o));
        if let Some((hop, ho)) = hi_word {
            hi_refs.push((Field::Rb, hop, ho));
        }
    }
    if disp == 0 {
        if let Some(p) = p {
            hi_refs.push((Field::Plg, p, 0));
        }
    }
    i.piece(lo, &lo_refs);
    i.piece(hi, &hi_refs);
    if disp != 0 {
        let mut refs2 = vec![(Field::Rd, d, 1), (Field::Rb, d, 1)];
        if disp < 0 {
            let ones = new_vreg(RegKind::B32);
            let t = i.def(ones, true);
            let mov = sm50::Inst::new(Form::MOV32I).with(Field::Imm, 0xffff_ffff);
            // Before the second pair: MOV32I does not touch the carry, but keep the pair
            // adjacent anyway.
            let at = i.pieces.len() - 2;
            i.pieces.insert(
                at,
                super::inst::Piece {
                    inst: mov,
                    refs: [super::inst::RegRef {
                        field: Field::Rd,
                        op: t,
                        offset: 0,
                    }]
                    .into_iter()
                    .collect(),
                    target: None,
                    reloc: None,
                },
            );
            refs2.push((Field::Rc, t, 0));
        }
        let lo2 = sm50::Inst::new(Form::LEA_I)
            .with(Field::Cc, 1)
            .with_signed(Field::ImmImm20s, disp);
        i.piece(lo2, &[(Field::Rd, d, 0), (Field::Ra, d, 0)]);
        if let Some(p) = p {
            refs2.push((Field::Plg, p, 0));
        }
        i.piece(sm50::Inst::new(Form::LEA_HI_R).with(Field::X, 1), &refs2);
    }
    Chain { inst: i, addr, plg }
}

/// A 32-bit chain `LEA [P,] d, [-]i, base, s`, then `LEA P, d, d, disp` when `disp != 0`.
pub fn narrow_chain(
    new_vreg: &mut dyn FnMut(RegKind) -> VReg,
    base: ChainBase,
    index: ChainIndex,
    disp: i64,
    want_plg: bool,
) -> Chain {
    debug_assert!(fits_imm20(disp));
    let addr = new_vreg(RegKind::B32);
    let plg = want_plg.then(|| new_vreg(RegKind::Pred));
    let mut i = Sm50Inst::new(Role::Plain);
    let two = disp != 0;
    let d = i.def(addr, two);
    let p = plg.map(|p| i.def(p, two));
    let x = i.use_(index.loc.vreg);
    let form = match base {
        ChainBase::Cbuf(_) => Form::LEA_C,
        _ => Form::LEA_R,
    };
    let mut lea = sm50::Inst::new(form)
        .with(Field::S, u64::from(index.shift))
        .with(Field::Nega, index.neg as u64);
    let mut refs = vec![(Field::Rd, d, 0), (Field::Ra, x, index.loc.offset)];
    match base {
        ChainBase::Cbuf(off) => lea.set(Field::Cbo, u64::from(off / 4)),
        // A 32-bit address reads only the low word of a split base.
        ChainBase::Reg(l) | ChainBase::Split { lo: l, .. } => {
            let b = i.use_(l.vreg);
            refs.push((Field::Rb, b, l.offset));
        }
        ChainBase::Sp => {
            let b = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
            refs.push((Field::Rb, b, 0));
        }
        ChainBase::None => {}
    }
    if !two {
        if let Some(p) = p {
            refs.push((Field::Plg, p, 0));
        }
    }
    i.piece(lea, &refs);
    if two {
        let lea2 = sm50::Inst::new(Form::LEA_I).with_signed(Field::ImmImm20s, disp);
        let mut refs2 = vec![(Field::Rd, d, 0), (Field::Ra, d, 0)];
        if let Some(p) = p {
            refs2.push((Field::Plg, p, 0));
        }
        i.piece(lea2, &refs2);
    }
    Chain { inst: i, addr, plg }
}

pub fn fits_imm20(v: i64) -> bool {
    (-(1 << 19)..(1 << 19)).contains(&v)
}

/// An extended-precision carry chain (seed 001's U128 example, see [`super::carry`]):
/// `LEA d0.CC, w0, a0, s` then `LEA.HI.X d_k[.CC], w_{k-1}, a_k, w_k, s` per further word, the
/// last without `.CC`. `links` are `(a_k, w_k)`; returns the instruction and where each
/// result `d_k` lives: the words of one pair or quad for 2 or 4 links (so a `.v2`/`.v4`
/// store of the results needs no gathering MOVs), separate registers otherwise. All are
/// early defs: every piece reads leaves after the first has written.
pub fn carry_chain(
    new_vreg: &mut dyn FnMut(RegKind) -> VReg,
    links: &[(Loc, Loc)],
    shift: u8,
) -> (Sm50Inst, Vec<Loc>) {
    let mut i = Sm50Inst::new(Role::Plain);
    let n = links.len();
    let (results, defs): (Vec<Loc>, Vec<(u8, u8)>) = match n {
        2 | 4 => {
            let v = new_vreg(if n == 2 { RegKind::B64 } else { RegKind::B128 });
            let d = i.def(v, true);
            (0..n as u8)
                .map(|k| (Loc { vreg: v, offset: k }, (d, k)))
                .unzip()
        }
        _ => (0..n)
            .map(|_| {
                let v = new_vreg(RegKind::B32);
                (Loc { vreg: v, offset: 0 }, (i.def(v, true), 0))
            })
            .unzip(),
    };
    // One operand per register group, however many of its words the chain reads.
    let mut ops: Vec<(VReg, u8)> = Vec::new();
    let mut op = |i: &mut Sm50Inst, l: Loc| -> (u8, u8) {
        let o = match ops.iter().find(|(v, _)| *v == l.vreg) {
            Some(&(_, o)) => o,
            None => {
                let o = i.use_(l.vreg);
                ops.push((l.vreg, o));
                o
            }
        };
        (o, l.offset)
    };
    let uses: Vec<((u8, u8), (u8, u8))> = links
        .iter()
        .map(|&(a, w)| (op(&mut i, a), op(&mut i, w)))
        .collect();
    let s = u64::from(shift);
    for k in 0..n {
        let ((a, ao), (w, wo)) = uses[k];
        let cc = u64::from(k + 1 < n);
        if k == 0 {
            let lea = sm50::Inst::new(Form::LEA_R)
                .with(Field::Cc, cc)
                .with(Field::S, s);
            i.piece(
                lea,
                &[
                    (Field::Rd, defs[0].0, defs[0].1),
                    (Field::Ra, w, wo),
                    (Field::Rb, a, ao),
                ],
            );
        } else {
            let (_, (pw, pwo)) = uses[k - 1];
            let lea = sm50::Inst::new(Form::LEA_HI_R)
                .with(Field::X, 1)
                .with(Field::Cc, cc)
                .with(Field::S, s);
            i.piece(
                lea,
                &[
                    (Field::Rd, defs[k].0, defs[k].1),
                    (Field::Ra, pw, pwo),
                    (Field::Rb, a, ao),
                    (Field::Rc, w, wo),
                ],
            );
        }
    }
    (i, results)
}

/// `base + disp` and its `Plg`, for a generic access whose base chain is shared with other
/// accesses (`--fold=full`): `LEA d.lo.CC, base.lo, disp; LEA.HI.X P, d.hi, RZ, base.hi, RZ`
/// (64-bit) or `LEA P, d, base, disp` (32-bit). Two instructions per access (one for 32 bits)
/// on top of one shared chain, against a whole chain per displacement. Only for `disp > 0`:
/// a negative one needs an all-ones high word in a register of its own, and that extra
/// register is kept inside the in-place chain of [`wide_chain`] instead. The result is a late
/// def: each piece reads the base word it overwrites before writing it, so `d` may take the
/// base's registers (what keeps this within a tight `--maxrregcount`).
pub fn plg_step(
    new_vreg: &mut dyn FnMut(RegKind) -> VReg,
    base: Loc,
    disp: i64,
    wide: bool,
) -> Chain {
    debug_assert!(disp > 0 && fits_imm20(disp));
    let addr = new_vreg(if wide { RegKind::B64 } else { RegKind::B32 });
    let plg = new_vreg(RegKind::Pred);
    let mut i = Sm50Inst::new(Role::Plain);
    let d = i.def(addr, false);
    let p = i.def(plg, false);
    let b = i.use_(base.vreg);
    let lo = sm50::Inst::new(Form::LEA_I)
        .with(Field::Cc, wide as u64)
        .with_signed(Field::ImmImm20s, disp);
    if !wide {
        i.piece(
            lo,
            &[
                (Field::Rd, d, 0),
                (Field::Ra, b, base.offset),
                (Field::Plg, p, 0),
            ],
        );
    } else {
        i.piece(lo, &[(Field::Rd, d, 0), (Field::Ra, b, base.offset)]);
        i.piece(
            sm50::Inst::new(Form::LEA_HI_R).with(Field::X, 1),
            &[
                (Field::Rd, d, 1),
                (Field::Rb, b, base.offset + 1),
                (Field::Plg, p, 0),
            ],
        );
    }
    Chain {
        inst: i,
        addr,
        plg: Some(plg),
    }
}
