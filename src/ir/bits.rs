//! Bit-field operations on 32-bit integers: `clz`, `popc`, `brev`, `bfind`, `bfe`, `bfi`,
//! `prmt`, `lop3` (PTX ISA section 9.7.1, "Integer and bit-manipulation instructions"),
//! the video forms ptxas keeps native (`vabsdiff4` with default selectors and the scalar
//! forms of [`super::video`], 9.7.10), integer `cvt.sat` from 32 bits and `mad.hi.sat.s32`.
//!
//! In: an [`InstData::Bits`](super::InstData::Bits) names one [`BitOp`] and its operands, all
//! `i32`; the result is `i32`. The 64-bit PTX forms (`clz.b64`, `popc.b64`, `brev.b64`,
//! `bfind.u64`/`.s64`) are built from the 32-bit ones on the two words by `ir::build`, so the
//! IR, the verifier and the lowering only ever see one width.
//! Out: [`BitOp::eval`], the reference semantics `ir::eval` runs, which is the PTX text's rule
//! for every operand value (the same rule as the SM50 instructions they lower to: `FLO`,
//! `POPC`, `BFE.BREV`, `BFE`, `BFI`, `PRMT`; the differential tests compare the two).

use super::video::VideoOp;

/// A bit operation; operand counts are in [`BitOp::arity`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BitOp {
    /// Leading zeros, 32 for 0.
    Clz,
    /// Set bits.
    Popc,
    /// Bits reversed.
    Brev,
    /// Position of the most significant set bit (signed: of the most significant bit that
    /// differs from the sign), `0xffffffff` when there is none; `shiftamt`: `31 - position`
    /// instead (still `0xffffffff` when there is none).
    Bfind { signed: bool, shiftamt: bool },
    /// `bfe a, pos, len`: `len` bits of `a` from `pos` (both taken mod 256), zero- or
    /// sign-extended; bits past bit 31 read as 0 (unsigned) or as bit 31 (signed); `len = 0`
    /// gives 0.
    Bfe { signed: bool },
    /// `bfi a, b, pos, len`: `b` with `len` bits at `pos` replaced by the low bits of `a`
    /// (bits that would land past bit 31 are dropped).
    Bfi,
    /// `prmt a, b, sel` ([`PrmtMode`]). In the default mode result byte k is byte
    /// `sel[4k+2..4k]` of the 8-byte `{b, a}` (a's low byte is byte 0), or that byte's sign
    /// replicated when `sel[4k+3]` is set; the other modes pick bytes by `sel[1:0]` alone.
    Prmt { mode: PrmtMode },
    /// `vabsdiff4.u32.{u32,s32}.u32` with the default selectors and all four lanes: the byte
    /// lanes `t[i] = |a.b[i] - b.b[i]|` (`a`'s bytes signed when `signed_a`, `b`'s unsigned);
    /// `acc` (PTX `.add`): `c + t[0] + t[1] + t[2] + t[3]` (operands a, b, c), else the
    /// lanes' low bytes (operands a, b). SASS `VABSDIFF4`.
    Vabsdiff4 { signed_a: bool, acc: bool },
    /// `lop3 a, b, c, lut`: each result bit is bit `a << 2 | b << 1 | c` of `lut` (the low
    /// 8 bits of the fourth operand, an `iconst`: PTX requires an immediate), so that
    /// `lop3(0xF0, 0xCC, 0xAA, lut) = lut`. SASS `LOP3.LUT`.
    Lop3,
    /// A scalar video instruction ptxas keeps native ([`VideoOp`], `ir::video`); its IR
    /// spelling is [`VideoOp::name`]. SASS `VADD`, `VABSDIFF`, `VMNMX`, `VSET`, `VSHL`,
    /// `VSHR`, `VMAD`.
    Video(VideoOp),
    /// Integer `cvt.sat` from a 32-bit source: the operand read as `src_signed` says,
    /// clamped to the range of a `dst_bits`-bit (8, 16, 32) destination of sign
    /// `dst_signed`, and extended from it by that sign (operand a). SASS `I2I...SAT`.
    SatCvt {
        src_signed: bool,
        dst_bits: u8,
        dst_signed: bool,
    },
    /// `mad.hi.sat.s32`: the high word of the signed product `a * b`, plus `c`, clamped to
    /// the s32 range (operands a, b, c). SASS `IMAD.HI.SAT`.
    MadHiSat,
}

/// `prmt.b32{.mode}`: how the selector picks the result's bytes from `{b, a}`. The
/// discriminants are the SASS `PRMT` mode field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    /// No mode: four 4-bit selectors (with sign replication).
    Default = 0,
    /// `.f4e`, forward 4 extract: bytes `s+3, s+2, s+1, s` (mod 8), `s = sel[1:0]`.
    F4e = 1,
    /// `.b4e`, backward 4 extract: bytes `s-3, s-2, s-1, s` (mod 8).
    B4e = 2,
    /// `.rc8`, replicate 8: byte `s` in all four places.
    Rc8 = 3,
    /// `.ecl`, edge clamp left: byte k is byte `max(k, s)`.
    Ecl = 4,
    /// `.ecr`, edge clamp right: byte k is byte `min(k, s)`.
    Ecr = 5,
    /// `.rc16`, replicate 16: halfword `s & 1` in both halves.
    Rc16 = 6,
}

impl PrmtMode {
    /// Every mode, default first, in the order of their discriminants.
    pub const ALL: [PrmtMode; 7] = [
        PrmtMode::Default,
        PrmtMode::F4e,
        PrmtMode::B4e,
        PrmtMode::Rc8,
        PrmtMode::Ecl,
        PrmtMode::Ecr,
        PrmtMode::Rc16,
    ];

    /// The PTX suffix (`""` for the default mode).
    pub fn suffix(self) -> &'static str {
        match self {
            PrmtMode::Default => "",
            PrmtMode::F4e => ".f4e",
            PrmtMode::B4e => ".b4e",
            PrmtMode::Rc8 => ".rc8",
            PrmtMode::Ecl => ".ecl",
            PrmtMode::Ecr => ".ecr",
            PrmtMode::Rc16 => ".rc16",
        }
    }

    /// The source byte (0..7 of `{b, a}`) that result byte `k` (0..3) takes for selector
    /// `s = sel[1:0]`, in a mode other than the default.
    fn byte(self, k: u32, s: u32) -> u32 {
        match self {
            PrmtMode::Default | PrmtMode::F4e => (s + k) & 7,
            PrmtMode::B4e => (s + 8 - k) & 7,
            PrmtMode::Rc8 => s,
            PrmtMode::Ecl => k.max(s),
            PrmtMode::Ecr => k.min(s),
            PrmtMode::Rc16 => 2 * (s & 1) + (k & 1),
        }
    }
}

impl BitOp {
    /// How many `i32` operands the operation takes.
    pub fn arity(self) -> usize {
        match self {
            BitOp::Clz | BitOp::Popc | BitOp::Brev | BitOp::Bfind { .. } => 1,
            BitOp::Bfe { .. } | BitOp::Prmt { .. } => 3,
            BitOp::Bfi | BitOp::Lop3 => 4,
            BitOp::Vabsdiff4 { acc: true, .. } => 3,
            BitOp::Vabsdiff4 { acc: false, .. } => 2,
            BitOp::Video(v) => v.arity(),
            BitOp::SatCvt { .. } => 1,
            BitOp::MadHiSat => 3,
        }
    }

    /// The spelling in the IR text.
    pub fn name(self) -> &'static str {
        match self {
            BitOp::Clz => "clz",
            BitOp::Popc => "popc",
            BitOp::Brev => "brev",
            BitOp::Bfind {
                signed: false,
                shiftamt: false,
            } => "bfind.u",
            BitOp::Bfind {
                signed: true,
                shiftamt: false,
            } => "bfind.s",
            BitOp::Bfind {
                signed: false,
                shiftamt: true,
            } => "bfind.shiftamt.u",
            BitOp::Bfind {
                signed: true,
                shiftamt: true,
            } => "bfind.shiftamt.s",
            BitOp::Bfe { signed: false } => "bfe.u",
            BitOp::Bfe { signed: true } => "bfe.s",
            BitOp::Bfi => "bfi",
            BitOp::Prmt {
                mode: PrmtMode::Default,
            } => "prmt",
            BitOp::Prmt {
                mode: PrmtMode::F4e,
            } => "prmt.f4e",
            BitOp::Prmt {
                mode: PrmtMode::B4e,
            } => "prmt.b4e",
            BitOp::Prmt {
                mode: PrmtMode::Rc8,
            } => "prmt.rc8",
            BitOp::Prmt {
                mode: PrmtMode::Ecl,
            } => "prmt.ecl",
            BitOp::Prmt {
                mode: PrmtMode::Ecr,
            } => "prmt.ecr",
            BitOp::Prmt {
                mode: PrmtMode::Rc16,
            } => "prmt.rc16",
            BitOp::Vabsdiff4 {
                signed_a: false,
                acc: false,
            } => "vabsdiff4.u",
            BitOp::Vabsdiff4 {
                signed_a: true,
                acc: false,
            } => "vabsdiff4.s",
            BitOp::Vabsdiff4 {
                signed_a: false,
                acc: true,
            } => "vabsdiff4.u.add",
            BitOp::Vabsdiff4 {
                signed_a: true,
                acc: true,
            } => "vabsdiff4.s.add",
            BitOp::Lop3 => "lop3",
            BitOp::Video(_) => "video",
            BitOp::SatCvt { .. } => "cvt.sat",
            BitOp::MadHiSat => "mad.hi.sat.s32",
        }
    }

    /// The result for operands `args` (their low 32 bits count; `args.len() == arity`).
    pub fn eval(self, args: &[u64]) -> u64 {
        let x = |k: usize| args.get(k).copied().unwrap_or(0) as u32;
        let r: u32 = match self {
            BitOp::Clz => x(0).leading_zeros(),
            BitOp::Popc => x(0).count_ones(),
            BitOp::Brev => x(0).reverse_bits(),
            BitOp::Bfind { signed, shiftamt } => {
                let mut v = x(0);
                if signed && (v as i32) < 0 {
                    v = !v;
                }
                match (v, shiftamt) {
                    (0, _) => u32::MAX,
                    (v, true) => v.leading_zeros(),
                    (v, false) => 31 - v.leading_zeros(),
                }
            }
            BitOp::Bfe { signed } => {
                let (a, pos, len) = (x(0), x(1) & 0xff, x(2) & 0xff);
                if len == 0 {
                    0
                } else {
                    let msb = 31;
                    let sbit = signed && (a >> (pos + len - 1).min(msb)) & 1 != 0;
                    (0..32).fold(0u32, |d, i| {
                        let bit = if i < len && pos + i <= msb {
                            (a >> (pos + i)) & 1 != 0
                        } else {
                            sbit
                        };
                        d | (u32::from(bit) << i)
                    })
                }
            }
            BitOp::Lop3 => {
                let (a, b, c, lut) = (x(0), x(1), x(2), x(3) & 0xff);
                (0..32).fold(0u32, |d, i| {
                    let k = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1);
                    d | (((lut >> k) & 1) << i)
                })
            }
            BitOp::Bfi => {
                let (a, b, pos, len) = (x(0), x(1), x(2) & 0xff, x(3) & 0xff);
                (0..len).take_while(|i| pos + i <= 31).fold(b, |f, i| {
                    let bit = (a >> i) & 1;
                    (f & !(1 << (pos + i))) | (bit << (pos + i))
                })
            }
            BitOp::Video(v) => v.eval(x(0), x(1), x(2)),
            BitOp::SatCvt {
                src_signed,
                dst_bits,
                dst_signed,
            } => {
                let v = if src_signed {
                    i64::from(x(0) as i32)
                } else {
                    i64::from(x(0))
                };
                let bits = u32::from(dst_bits);
                let (lo, hi) = if dst_signed {
                    (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
                } else {
                    (0, (1i64 << bits) - 1)
                };
                // In range, so the low 32 bits are the value extended by either sign.
                v.clamp(lo, hi) as u32
            }
            BitOp::MadHiSat => {
                let p = i64::from(x(0) as i32) * i64::from(x(1) as i32);
                let t = (p >> 32) + i64::from(x(2) as i32);
                t.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
            }
            BitOp::Prmt { mode } if mode != PrmtMode::Default => {
                let src = u64::from(x(0)) | (u64::from(x(1)) << 32);
                let s = x(2) & 3;
                (0..4).fold(0u32, |d, k| {
                    let byte = (src >> (8 * mode.byte(k, s))) as u8;
                    d | (u32::from(byte) << (8 * k))
                })
            }
            BitOp::Vabsdiff4 { signed_a, acc } => {
                let (a, b) = (x(0), x(1));
                let lane = |k: u32| {
                    let va = (a >> (8 * k)) as u8;
                    let va = if signed_a {
                        i32::from(va as i8)
                    } else {
                        i32::from(va)
                    };
                    let vb = i32::from((b >> (8 * k)) as u8);
                    (va - vb).unsigned_abs()
                };
                if acc {
                    (0..4).fold(x(2), |s, k| s.wrapping_add(lane(k)))
                } else {
                    (0..4).fold(0, |d, k| d | (lane(k) & 0xff) << (8 * k))
                }
            }
            BitOp::Prmt { .. } => {
                let src = u64::from(x(0)) | (u64::from(x(1)) << 32);
                let sel = x(2);
                (0..4).fold(0u32, |d, k| {
                    let nib = sel >> (4 * k);
                    let byte = (src >> (8 * (nib & 7))) as u8;
                    let byte = if nib & 8 != 0 {
                        ((byte as i8) >> 7) as u8
                    } else {
                        byte
                    };
                    d | (u32::from(byte) << (8 * k))
                })
            }
        };
        u64::from(r)
    }
}

#[cfg(test)]
mod tests {
    use super::{BitOp, PrmtMode};

    #[test]
    fn pinned_values() {
        assert_eq!(BitOp::Clz.eval(&[0]), 32);
        assert_eq!(BitOp::Clz.eval(&[1]), 31);
        assert_eq!(BitOp::Popc.eval(&[0xf0f0]), 8);
        assert_eq!(BitOp::Brev.eval(&[1]), 0x8000_0000);
        let u = BitOp::Bfind {
            signed: false,
            shiftamt: false,
        };
        assert_eq!(u.eval(&[0]), 0xffff_ffff);
        assert_eq!(u.eval(&[0x100]), 8);
        let s = BitOp::Bfind {
            signed: true,
            shiftamt: false,
        };
        assert_eq!(s.eval(&[0xffff_ffff]), 0xffff_ffff);
        assert_eq!(s.eval(&[0xffff_fff0]), 3);
        let sh = BitOp::Bfind {
            signed: false,
            shiftamt: true,
        };
        assert_eq!(sh.eval(&[0x100]), 23);
        let bu = BitOp::Bfe { signed: false };
        let bs = BitOp::Bfe { signed: true };
        assert_eq!(bu.eval(&[0xabcd_1234, 8, 8]), 0x12);
        assert_eq!(bs.eval(&[0x0000_8000, 8, 8]), 0xffff_ff80);
        assert_eq!(bs.eval(&[0x8000_0000, 28, 8]), 0xffff_fff8);
        assert_eq!(bu.eval(&[0x8000_0000, 28, 8]), 0x8);
        assert_eq!(bu.eval(&[0xffff_ffff, 3, 0]), 0);
        assert_eq!(bs.eval(&[0x8000_0000, 40, 3]), 0xffff_ffff);
        assert_eq!(BitOp::Bfi.eval(&[0xff, 0, 4, 4]), 0xf0);
        assert_eq!(BitOp::Bfi.eval(&[0xff, 0, 30, 8]), 0xc000_0000);
        assert_eq!(BitOp::Bfi.eval(&[0xff, 7, 4, 0]), 7);
        assert_eq!(
            BitOp::Prmt {
                mode: PrmtMode::Default
            }
            .eval(&[0x4433_2211, 0x8877_6655, 0x7654_3210]),
            0x4433_2211
        );
        assert_eq!(
            BitOp::Prmt {
                mode: PrmtMode::Default
            }
            .eval(&[0x4433_2211, 0x8877_6655, 0x0000_000f]),
            0x1111_11ff
        );
        // The PTX ISA's tables for the modes, at selector 1 (bytes of {b, a} = 88..11).
        let (a, b) = (0x4433_2211, 0x8877_6655);
        let at = |mode, s| BitOp::Prmt { mode }.eval(&[a, b, s]);
        assert_eq!(at(PrmtMode::F4e, 1), 0x5544_3322);
        assert_eq!(at(PrmtMode::F4e, 0xfffc), 0x4433_2211);
        assert_eq!(at(PrmtMode::B4e, 1), 0x7788_1122);
        assert_eq!(at(PrmtMode::B4e, 3), 0x1122_3344);
        assert_eq!(at(PrmtMode::Rc8, 2), 0x3333_3333);
        assert_eq!(at(PrmtMode::Ecl, 1), 0x4433_2222);
        assert_eq!(at(PrmtMode::Ecr, 2), 0x3333_2211);
        assert_eq!(at(PrmtMode::Rc16, 1), 0x4433_4433);
        assert_eq!(at(PrmtMode::Rc16, 2), 0x2211_2211);
    }
}
