//! Integer-to-float conversions of a byte or halfword of a word, read in place with I2F's
//! source select (`I2F.F32.U8 R0, R2.B2`, `I2F.F32.U16 R0, R2.H1`).
//!
//! In: a `FloatOp::FromInt` whose operand the IR computes as a field of another value
//! (`and x, 0xff`, `shr.u32 x, 16` then `and 0xff`, `bfe.u32 x, 8, 8`, `cvt.u16.u32` then
//! `shr.u16 .., 8`, zero extensions between). Out: one I2F that reads that other value (the
//! *word*) with the select of the field, so the extraction is not demanded and disappears
//! when nothing else reads it.
//!
//! # Why
//!
//! NVVM unpacks a loaded word of four bytes into four 16-bit registers and converts each
//! with `cvt.rn.f32.u16` at once, early (NV12-to-BGR kernels do it for three words: twelve
//! conversions). Converting each extracted value keeps twelve floats live where ptxas keeps
//! three words and converts late with a byte select: `I2F.F32.U8 R24, R37.B2`. Read from the
//! word, the conversion needs no register of its own until it is issued, and the scheduler is
//! free to place it next to its use (see the trade-off below).
//!
//! # The rule
//!
//! [`Lowerer::field`] follows the operand back through `trunc`, `zext`, `and` with a
//! low mask (`2^m - 1`), `shr.u` by a constant (and `shr.s` where the sign bit is known to be
//! zero) and `bfe.u` with constant position and length, and says which bits of which value the
//! operand's low bits are ([`Bits`]), and whether the operand's bits above them are zero. The
//! conversion reads `from`'s width `n` of the operand:
//!
//! * when the field is at least `n` bits, it reads exactly the field's low `n` bits: I2F of
//!   `from`'s width and signedness on the word with the select of the field's position;
//! * when the field is narrower than `n` and zero above, the value is the field zero-extended
//!   (nonnegative whatever `from`'s signedness): I2F unsigned of the field's width.
//!
//! Either way the width read must be 8 at byte position 0, 8, 16 or 24 (`.B0`..`.B3`), or 16
//! at 0 or 16 (`.H1`), and lie inside the word's type (a 64-bit word gives its low or high
//! register). A 32-bit conversion of the word itself is the plain I2F: nothing is gained.
//!
//! # Trade-off
//!
//! The word stays live until the last conversion that reads it, instead of the extracted
//! values (or floats) after it. NVVM's shape loads one word and converts all of its bytes,
//! so one register replaces up to four, as ptxas does. Where another instruction also reads
//! the extracted value it is still computed, and the conversion costs the same either way.
//! ptxas 11.8 uses the select for bytes 2 and 3 (`.B2`, `.B3`) and converts bytes 0 and 1
//! after a `LOP32I.AND` (and a `SHR`); the select reads them as exactly, one instruction
//! fewer each.

use super::float::{rnd_code, size_code};
use super::Lowerer;
use crate::ir::bits::BitOp;
use crate::ir::float::{FloatFmt, Round};
use crate::ir::{BinaryOp, ConvOp, InstData, Type, Value};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::sm50::{self, Field, Form};

/// How far [`Lowerer::field`] follows operands back (NVVM's chains are three or four deep).
const DEPTH: u32 = 8;

/// The low `len` bits of a value are bits `lo..lo + len` of `word`; when `zext`, the value's
/// bits above `len` are zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bits {
    pub word: Value,
    pub lo: u32,
    pub len: u32,
    pub zext: bool,
}

/// The I2F select of `width` bits at bit `lo`: `bsel` 0..3 for bytes, 0 or 2 (`.H1`) for
/// halfwords; `None` where I2F has no select for it.
fn select_code(width: u32, lo: u32) -> Option<u64> {
    match (width, lo) {
        (8, 0 | 8 | 16 | 24) => Some(u64::from(lo / 8)),
        (16, 0 | 16) => Some(u64::from(lo / 8)),
        _ => None,
    }
}

/// The I2F `st` code of a `width`-bit source.
fn source_code(width: u32, signed: bool) -> u64 {
    let size = match width {
        8 => 0,
        16 => 1,
        _ => 2,
    };
    size | if signed { 4 } else { 0 }
}

impl Lowerer<'_> {
    /// Which bits of which value `v`'s low bits are (the rule in the module essay); `v`
    /// itself, whole, where nothing narrower is known.
    pub(super) fn field(&self, v: Value) -> Bits {
        self.field_at(v, DEPTH)
    }

    fn field_at(&self, v: Value, depth: u32) -> Bits {
        let t = self.ty(v).bits();
        let whole = Bits {
            word: v,
            lo: 0,
            len: t,
            zext: true,
        };
        if depth == 0 || !self.ty(v).is_int() {
            return whole;
        }
        let Some(d) = self.def_of(v) else {
            return whole;
        };
        let inner = |x: Value| self.field_at(x, depth - 1);
        let found = match *d {
            InstData::Convert {
                op: ConvOp::Trunc,
                arg,
                ..
            } => {
                let f = inner(arg);
                Some(Bits {
                    len: f.len.min(t),
                    zext: f.zext || f.len >= t,
                    ..f
                })
            }
            InstData::Convert {
                op: ConvOp::Zext,
                arg,
                ..
            } => {
                let f = inner(arg);
                let s = self.ty(arg).bits();
                Some(Bits {
                    zext: f.zext || f.len >= s,
                    ..f
                })
            }
            InstData::Binary {
                op: BinaryOp::And,
                args,
            } => {
                let mask = |k: Value| {
                    let k = self.imm_of(k)? as u64 & (u64::MAX >> (64 - t));
                    (k.wrapping_add(1) & k == 0).then(|| k.count_ones())
                };
                let (x, m) = match (mask(args[1]), mask(args[0])) {
                    (Some(m), _) => (args[0], m),
                    (None, Some(m)) => (args[1], m),
                    (None, None) => return whole,
                };
                let f = inner(x);
                if m < f.len {
                    Some(Bits {
                        len: m,
                        zext: true,
                        ..f
                    })
                } else {
                    Some(f)
                }
            }
            InstData::Binary {
                op: op @ (BinaryOp::ShrU | BinaryOp::ShrS),
                args,
            } => {
                let c = self
                    .imm_of(args[1])
                    .filter(|&c| (0..i64::from(t)).contains(&c));
                let f = inner(args[0]);
                // An arithmetic shift of a value whose sign bit is zero is a logical one.
                let logical = op == BinaryOp::ShrU || f.zext && f.len < t;
                match c {
                    Some(c) if logical && (c as u32) < f.len => Some(Bits {
                        lo: f.lo + c as u32,
                        len: f.len - c as u32,
                        zext: f.zext || f.len == t,
                        ..f
                    }),
                    _ => None,
                }
            }
            InstData::Bits {
                op: BitOp::Bfe { signed: false },
                ref args,
            } if t == 32 => {
                let (pos, len) = (self.imm_of(args[1]), self.imm_of(args[2]));
                let f = inner(args[0]);
                match (pos, len) {
                    (Some(p), Some(l)) if p >= 0 && l > 0 && p + l <= i64::from(f.len) => {
                        Some(Bits {
                            lo: f.lo + p as u32,
                            len: l as u32,
                            zext: true,
                            ..f
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        found.unwrap_or(whole)
    }

    /// `v = (float) arg` (`from`, `signed`) as one I2F with a source select on the word that
    /// `arg` is a field of ([`Lowerer::field`]); `Ok(false)`, having done nothing, where the
    /// rule in the module essay does not apply.
    pub(super) fn i2f_select(
        &mut self,
        v: Value,
        arg: Value,
        (from, signed): (Type, bool),
        fmt: FloatFmt,
        rnd: Round,
    ) -> Result<bool, LowerError> {
        let n = from.bits();
        let f = self.field(arg);
        if f.word == arg || n > 32 {
            return Ok(false);
        }
        let (width, signed) = if f.len >= n {
            (n, signed)
        } else if f.zext {
            (f.len, false)
        } else {
            return Ok(false);
        };
        let word_bits = self.ty(f.word).bits();
        // The register of the word that holds the field, and the field's place in it.
        let (reg, lo) = (f.lo / 32, f.lo % 32);
        if lo + width > 32 || f.lo + width > word_bits {
            return Ok(false);
        }
        let Some(bsel) = select_code(width, lo) else {
            return Ok(false);
        };
        let s = self.reg(f.word)?;
        let inst = sm50::Inst::new(Form::I2F_R)
            .with(Field::Dsz, size_code(fmt))
            .with(Field::St, source_code(width, signed))
            .with(Field::Rnd, rnd_code(rnd))
            .with(Field::Bsel, bsel);
        let d = self.conv_at(
            inst,
            Loc {
                vreg: s.vreg,
                offset: s.offset + reg as u8,
            },
            fmt.carrier(),
        );
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }
}
