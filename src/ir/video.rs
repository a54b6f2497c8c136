//! The scalar video instructions ptxas 11.8 keeps native (PTX ISA 9.7.10): `vadd`, `vsub`,
//! `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vset` and `vmad`, as one IR operation each.
//!
//! In: a [`VideoOp`] inside [`BitOp::Video`](super::BitOp::Video), built by
//! `ir::build::video` from one PTX instruction, with `i32` operands `a, b` (and `c` when the
//! form has a secondary operation, a merge or is `vmad`). Out: [`VideoOp::eval`], the PTX
//! pseudo-code's result, which `ir::eval` runs and `ir::simplify` folds with; the lowering
//! writes the one SASS instruction (`VADD`, `VABSDIFF`, `VMNMX`, `VSET`, `VSHL`, `VSHR`,
//! `VMAD`) whose fields carry the same numbers, and the simulator (`sim::video`) computes
//! that instruction from its fields on its own.
//!
//! The rule (`vop.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}`): `ta`,
//! `tb` are the selected byte / half / word of `a`, `b`, zero- or sign-extended (exact in
//! i128); `tmp = ta op tb`; `.sat` clamps `tmp` to the range of the destination (its sign,
//! and 8 or 16 bits for a merge); the low 32 bits then go through the secondary op (`.add`
//! wraps; `.min`/`.max` compare as the destination's sign, unsigned for `vset`) or are
//! merged into `c` (the byte at 0 or 16, the half at 0 or 16: the SASS `MRG_*` forms; PTX
//! `.b1`/`.b3` merges are a `.b0` merge into 0 and a `prmt`, as ptxas writes them).
//! `vmad`: `tmp = ±(ta * tb) + ±c + po`, `c` extended by the final sign (signed when an
//! operand is signed or negated), shifted right by 0, 7 or 15, and with `.sat` clamped to
//! the 32-bit range of that sign.
//!
//! Invariants: selectors are SASS codes (0-3 byte, 4-5 half, 6 word); `Merge` positions
//! are 0 or 16 with lengths 8 or 16 at 0 and 16 only (the four `MRG_*` forms); `Mad` has no
//! secondary operation and no merge.

/// A scalar video operation's primary arithmetic.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum VideoKind {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    /// `vshl`: `wrap` takes the count mod 32, otherwise it is clamped to 32.
    Shl {
        wrap: bool,
    },
    /// `vshr` (arithmetic for a signed `a`).
    Shr {
        wrap: bool,
    },
    /// `vset`: the SASS/ISETP comparison code (1 LT, 2 EQ, 3 LE, 4 GT, 5 NE, 6 GE); 0 or 1.
    Set {
        cmp: u8,
    },
    /// `vmad`: `scale` 0, 7 or 15; `neg_ab` negates the product, `neg_c` the addend, `po`
    /// adds one (PTX `.po`; SASS sets both negation bits for it).
    Mad {
        scale: u8,
        neg_ab: bool,
        neg_c: bool,
        po: bool,
    },
}

/// What happens to the low 32 bits of the (saturated) result.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum VideoOp2 {
    /// The result is `d` (operands a, b).
    None,
    /// `d = low + c`.
    Add,
    /// `d = min(low, c)` (as the destination's sign).
    Min,
    /// `d = max(low, c)`.
    Max,
    /// `c` with `len` bits at `pos` replaced by the low bits of the result (`len` 8 or 16,
    /// `pos` 0 or 16).
    Merge { pos: u8, len: u8 },
}

/// One scalar video operation (see the module essay).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct VideoOp {
    pub kind: VideoKind,
    /// SASS selector codes: 0-3 byte, 4-5 half, 6 the whole word.
    pub asel: u8,
    pub bsel: u8,
    pub a_signed: bool,
    pub b_signed: bool,
    pub d_signed: bool,
    pub sat: bool,
    pub op2: VideoOp2,
}

/// The selected field of `x` (SASS selector code `sel`), extended as `signed` says.
pub fn select(x: u32, sel: u8, signed: bool) -> i64 {
    match (sel, signed) {
        (0..=3, false) => i64::from((x >> (8 * sel)) as u8),
        (0..=3, true) => i64::from((x >> (8 * sel)) as u8 as i8),
        (4 | 5, false) => i64::from((x >> (16 * (sel - 4))) as u16),
        (4 | 5, true) => i64::from((x >> (16 * (sel - 4))) as u16 as i16),
        (_, false) => i64::from(x),
        (_, true) => i64::from(x as i32),
    }
}

/// The range of a `bits`-bit signed or unsigned destination.
pub fn bounds(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

impl VideoOp {
    /// How many `i32` operands it takes: `a, b`, and `c` with a secondary op, a merge or
    /// for `vmad`.
    pub fn arity(self) -> usize {
        if matches!(self.kind, VideoKind::Mad { .. }) || self.op2 != VideoOp2::None {
            3
        } else {
            2
        }
    }

    /// The spelling in the IR text, e.g. `vadd.s.u.u.b1.w.sat.add`.
    pub fn name(self) -> String {
        let sgn = |s: bool| if s { "s" } else { "u" };
        let sel = |k: u8| match k {
            0..=3 => format!(".b{k}"),
            4 | 5 => format!(".h{}", k - 4),
            _ => String::new(),
        };
        let mut s = match self.kind {
            VideoKind::Add => "vadd".to_string(),
            VideoKind::Sub => "vsub".to_string(),
            VideoKind::Absdiff => "vabsdiff".to_string(),
            VideoKind::Min => "vmin".to_string(),
            VideoKind::Max => "vmax".to_string(),
            VideoKind::Shl { wrap } => format!("vshl{}", if wrap { ".wrap" } else { ".clamp" }),
            VideoKind::Shr { wrap } => format!("vshr{}", if wrap { ".wrap" } else { ".clamp" }),
            VideoKind::Set { cmp } => {
                let c = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"][usize::from(cmp & 7)];
                format!("vset.{c}")
            }
            VideoKind::Mad {
                scale,
                neg_ab,
                neg_c,
                po,
            } => {
                let mut m = "vmad".to_string();
                if po {
                    m.push_str(".po");
                }
                if neg_ab {
                    m.push_str(".negab");
                }
                if neg_c {
                    m.push_str(".negc");
                }
                if scale != 0 {
                    m.push_str(&format!(".shr{scale}"));
                }
                m
            }
        };
        s.push_str(&format!(
            ".{}.{}{}.{}{}",
            sgn(self.d_signed),
            sgn(self.a_signed),
            sel(self.asel),
            sgn(self.b_signed),
            sel(self.bsel)
        ));
        if self.sat {
            s.push_str(".sat");
        }
        match self.op2 {
            VideoOp2::None => {}
            VideoOp2::Add => s.push_str(".add"),
            VideoOp2::Min => s.push_str(".min"),
            VideoOp2::Max => s.push_str(".max"),
            VideoOp2::Merge { pos, len } => s.push_str(&format!(".merge{len}@{pos}")),
        }
        s
    }

    /// The result for `a`, `b` and `c` (`c` unused without a secondary op).
    pub fn eval(self, a: u32, b: u32, c: u32) -> u32 {
        let ta = i128::from(select(a, self.asel, self.a_signed));
        let tb = i128::from(select(b, self.bsel, self.b_signed));
        let dbits = match self.op2 {
            VideoOp2::Merge { len, .. } => u32::from(len),
            _ => 32,
        };
        let tmp: i128 = match self.kind {
            VideoKind::Add => ta + tb,
            VideoKind::Sub => ta - tb,
            VideoKind::Absdiff => (ta - tb).abs(),
            VideoKind::Min => ta.min(tb),
            VideoKind::Max => ta.max(tb),
            VideoKind::Shl { wrap } | VideoKind::Shr { wrap } => {
                // The count is the selected field of b, unsigned.
                let n = tb as u32;
                let n = if wrap { n & 31 } else { n.min(32) };
                if matches!(self.kind, VideoKind::Shl { .. }) {
                    ta << n
                } else {
                    ta >> n
                }
            }
            VideoKind::Set { cmp } => {
                let r = match cmp {
                    1 => ta < tb,
                    2 => ta == tb,
                    3 => ta <= tb,
                    4 => ta > tb,
                    5 => ta != tb,
                    6 => ta >= tb,
                    7 => true,
                    _ => false,
                };
                i128::from(r)
            }
            VideoKind::Mad {
                scale,
                neg_ab,
                neg_c,
                po,
            } => {
                let signed = self.a_signed || self.b_signed || neg_ab || neg_c;
                let prod = ta * tb;
                let c = if signed {
                    i128::from(c as i32)
                } else {
                    i128::from(c)
                };
                let t =
                    if neg_ab { -prod } else { prod } + if neg_c { -c } else { c } + i128::from(po);
                let t = t >> scale;
                let t = if self.sat {
                    let (lo, hi) = bounds(32, signed);
                    t.clamp(lo, hi)
                } else {
                    t
                };
                return t as u32;
            }
        };
        let tmp = if self.sat {
            let (lo, hi) = bounds(dbits, self.d_signed);
            tmp.clamp(lo, hi)
        } else {
            tmp
        };
        let low = tmp as u32;
        // vset's result and c compare unsigned (it has no destination sign).
        let signed = self.d_signed && !matches!(self.kind, VideoKind::Set { .. });
        match self.op2 {
            VideoOp2::None => low,
            VideoOp2::Add => low.wrapping_add(c),
            VideoOp2::Min if signed => (low as i32).min(c as i32) as u32,
            VideoOp2::Max if signed => (low as i32).max(c as i32) as u32,
            VideoOp2::Min => low.min(c),
            VideoOp2::Max => low.max(c),
            VideoOp2::Merge { pos, len } => {
                let mask = (((1u64 << len) - 1) as u32) << pos;
                (c & !mask) | ((low << pos) & mask)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kind: VideoKind) -> VideoOp {
        VideoOp {
            kind,
            asel: 6,
            bsel: 6,
            a_signed: false,
            b_signed: false,
            d_signed: false,
            sat: false,
            op2: VideoOp2::None,
        }
    }

    #[test]
    fn selectors_extend_by_sign() {
        assert_eq!(select(0x8081_82ff, 0, true), -1);
        assert_eq!(select(0x8081_82ff, 1, false), 0x82);
        assert_eq!(select(0x8081_82ff, 5, true), -0x7f7f);
        assert_eq!(select(0x8081_82ff, 6, true), 0x8081_82ff_u32 as i32 as i64);
    }

    #[test]
    fn sat_merge_and_secondary_ops() {
        let mut v = op(VideoKind::Add);
        v.sat = true;
        assert_eq!(v.eval(u32::MAX, 1, 0), u32::MAX);
        v.d_signed = true;
        v.a_signed = true;
        v.b_signed = true;
        assert_eq!(v.eval(i32::MAX as u32, 1, 0), i32::MAX as u32);
        v.op2 = VideoOp2::Merge { pos: 16, len: 8 };
        assert_eq!(v.eval(300, 0, 0xaabb_ccdd), 0xaa7f_ccdd);
        v.op2 = VideoOp2::Min;
        assert_eq!(v.eval(5, 1, (-3i32) as u32), (-3i32) as u32);
        let mut s = op(VideoKind::Set { cmp: 1 });
        s.op2 = VideoOp2::Max;
        assert_eq!(s.eval(1, 2, u32::MAX), u32::MAX);
    }

    #[test]
    fn shifts_and_mad() {
        let shl = op(VideoKind::Shl { wrap: false });
        assert_eq!(shl.eval(1, 40, 0), 0);
        let shl = op(VideoKind::Shl { wrap: true });
        assert_eq!(shl.eval(1, 33, 0), 2);
        let mut shr = op(VideoKind::Shr { wrap: false });
        shr.a_signed = true;
        assert_eq!(shr.eval(0x8000_0000, 99, 0), u32::MAX);
        let mut mad = op(VideoKind::Mad {
            scale: 7,
            neg_ab: false,
            neg_c: false,
            po: true,
        });
        assert_eq!(
            mad.eval(0x10000, 0x10000, 127),
            (((1u64 << 32) + 128) >> 7) as u32
        );
        mad.sat = true;
        mad.kind = VideoKind::Mad {
            scale: 0,
            neg_ab: true,
            neg_c: false,
            po: false,
        };
        // Negated: signed final; clamps at i32::MIN.
        assert_eq!(mad.eval(0x10000, 0x10000, 0), i32::MIN as u32);
    }
}
