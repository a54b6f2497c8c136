//! Bit-field operations on 32-bit integers: `clz`, `popc`, `brev`, `bfind`, `bfe`, `bfi`,
//! `prmt` (PTX ISA section 9.7.1, "Integer and bit-manipulation instructions").
//!
//! In: an [`InstData::Bits`](super::InstData::Bits) names one [`BitOp`] and its operands, all
//! `i32`; the result is `i32`. The 64-bit PTX forms (`clz.b64`, `popc.b64`, `brev.b64`,
//! `bfind.u64`/`.s64`) are built from the 32-bit ones on the two words by `ir::build`, so the
//! IR, the verifier and the lowering only ever see one width.
//! Out: [`BitOp::eval`], the reference semantics `ir::eval` runs, which is the PTX text's rule
//! for every operand value (the same rule as the SM50 instructions they lower to: `FLO`,
//! `POPC`, `BFE.BREV`, `BFE`, `BFI`, `PRMT`; the differential tests compare the two).

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
    /// `prmt a, b, sel` in the default mode: result byte k is byte `sel[4k+2..4k]` of the
    /// 8-byte `{b, a}` (a's low byte is byte 0), or that byte's sign replicated when
    /// `sel[4k+3]` is set.
    Prmt,
}

impl BitOp {
    /// How many `i32` operands the operation takes.
    pub fn arity(self) -> usize {
        match self {
            BitOp::Clz | BitOp::Popc | BitOp::Brev | BitOp::Bfind { .. } => 1,
            BitOp::Bfe { .. } | BitOp::Prmt => 3,
            BitOp::Bfi => 4,
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
            BitOp::Prmt => "prmt",
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
            BitOp::Bfi => {
                let (a, b, pos, len) = (x(0), x(1), x(2) & 0xff, x(3) & 0xff);
                (0..len).take_while(|i| pos + i <= 31).fold(b, |f, i| {
                    let bit = (a >> i) & 1;
                    (f & !(1 << (pos + i))) | (bit << (pos + i))
                })
            }
            BitOp::Prmt => {
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
    use super::BitOp;

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
            BitOp::Prmt.eval(&[0x4433_2211, 0x8877_6655, 0x7654_3210]),
            0x4433_2211
        );
        assert_eq!(
            BitOp::Prmt.eval(&[0x4433_2211, 0x8877_6655, 0x0000_000f]),
            0x1111_11ff
        );
    }
}
