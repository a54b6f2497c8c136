//! PTX bit-manipulation instructions → IR: `clz`, `popc`, `brev`, `bfind`, `bfe`, `bfi`,
//! `prmt` (as [`InstData::Bits`](crate::ir::InstData::Bits) on `i32`), and `shf`, `sad`, which
//! are plain shifts, compares and adds.
//!
//! The 64-bit forms of `clz`, `popc`, `brev` and `bfind` are built from the 32-bit operation on
//! the two words (so the IR has one width): `clz(x) = hi != 0 ? clz(hi) : 32 + clz(lo)`,
//! `popc(x) = popc(lo) + popc(hi)`, `brev(x) = brev(lo) << 32 | brev(hi)`,
//! `bfind.u(x) = hi != 0 ? 32 + bfind(hi) : bfind(lo)` (`bfind(0)` is all ones, which is
//! also the 64-bit answer for 0), `bfind.s(x) = bfind.u(x < 0 ? ~x : x)`, and `.shiftamt`
//! turns a position p into `63 - p`. `shf.l` is `(b << n) | (a >> (32 - n))`, `shf.r` is
//! `(a >> n) | (b << (32 - n))` with `n = c & 31` (`.wrap`) or `min(c, 32)` (`.clamp`): the
//! IR's shifts give 0 for counts of 32 or more, which is exactly the end cases PTX wants.
//! 64-bit `bfe`/`bfi` are 64-bit shifts and masks (see [`FnBuilder::bf64`]).

use super::FnBuilder;
use crate::ir::{BinaryOp, BitOp, IntCC, PrmtMode, Type, UnaryOp, Value};
use crate::ptx::ast::{self, Instruction, Opcode, Operand};

impl FnBuilder<'_, '_> {
    /// The two 32-bit words of a 64-bit value.
    fn words(&mut self, x: Value) -> (Value, Value) {
        let lo = self.ins().trunc(Type::I32, x);
        let k = self.iconst(Type::I32, 32);
        let h = self.ins().binary(BinaryOp::ShrU, x, k);
        let hi = self.ins().trunc(Type::I32, h);
        (lo, hi)
    }

    /// The bit position `bfind.u` finds in a 64-bit value (all ones for 0).
    fn bfind64(&mut self, x: Value) -> Value {
        let (lo, hi) = self.words(x);
        let find = BitOp::Bfind {
            signed: false,
            shiftamt: false,
        };
        let z = self.iconst(Type::I32, 0);
        let k = self.iconst(Type::I32, 32);
        let in_hi = self.ins().icmp(IntCC::Ne, hi, z);
        let ph = self.ins().bits(find, &[hi]);
        let ph = self.ins().add(ph, k);
        let pl = self.ins().bits(find, &[lo]);
        self.ins().select(in_hi, ph, pl)
    }

    pub(super) fn bit_instr(&mut self, ins: &Instruction) -> Option<()> {
        match ins.opcode {
            Opcode::Shf => return self.shf(ins),
            Opcode::Sad => return self.sad(ins),
            _ => {}
        }
        let (ty, signed) = self.int_type(ins)?;
        let wide = match ty {
            Type::I32 => false,
            Type::I64 if matches!(ins.opcode, Opcode::Bfe | Opcode::Bfi) => return self.bf64(ins),
            Type::I64 if ins.opcode != Opcode::Prmt => true,
            _ => return self.unsupported(ins, &format!("{ty} operands (only 32-bit here)")),
        };
        let n = match ins.opcode {
            Opcode::Bfe | Opcode::Prmt => 4,
            Opcode::Bfi => 5,
            _ => 2,
        };
        let ops = self.ops(ins, n)?;
        let it = ins.ty();
        let u32t = Some(ast::Type::U32);
        let a = self.read(&ops[1], ty, it)?;
        let d = match ins.opcode {
            Opcode::Clz if wide => {
                let (lo, hi) = self.words(a);
                let z = self.iconst(Type::I32, 0);
                let k = self.iconst(Type::I32, 32);
                let in_hi = self.ins().icmp(IntCC::Ne, hi, z);
                let ch = self.ins().bits(BitOp::Clz, &[hi]);
                let cl = self.ins().bits(BitOp::Clz, &[lo]);
                let cl = self.ins().add(cl, k);
                self.ins().select(in_hi, ch, cl)
            }
            Opcode::Popc if wide => {
                let (lo, hi) = self.words(a);
                let pl = self.ins().bits(BitOp::Popc, &[lo]);
                let ph = self.ins().bits(BitOp::Popc, &[hi]);
                self.ins().add(pl, ph)
            }
            Opcode::Brev if wide => {
                let (lo, hi) = self.words(a);
                let rl = self.ins().bits(BitOp::Brev, &[lo]);
                let rh = self.ins().bits(BitOp::Brev, &[hi]);
                let rl = self.ins().zext(Type::I64, rl);
                let rh = self.ins().zext(Type::I64, rh);
                let k = self.iconst(Type::I32, 32);
                let up = self.ins().shl(rl, k);
                self.ins().binary(BinaryOp::Or, up, rh)
            }
            Opcode::Bfind if wide => {
                let v = if signed {
                    let z = self.iconst(Type::I64, 0);
                    let neg = self.ins().icmp(IntCC::Slt, a, z);
                    let inv = self.ins().unary(UnaryOp::Not, a);
                    self.ins().select(neg, inv, a)
                } else {
                    a
                };
                let p = self.bfind64(v);
                if ins.has_flag("shiftamt") {
                    let none = self.iconst(Type::I32, -1);
                    let k = self.iconst(Type::I32, 63);
                    let missing = self.ins().icmp(IntCC::Eq, p, none);
                    let s = self.ins().sub(k, p);
                    self.ins().select(missing, none, s)
                } else {
                    p
                }
            }
            Opcode::Clz => self.ins().bits(BitOp::Clz, &[a]),
            Opcode::Popc => self.ins().bits(BitOp::Popc, &[a]),
            Opcode::Brev => self.ins().bits(BitOp::Brev, &[a]),
            Opcode::Bfind => {
                let op = BitOp::Bfind {
                    signed,
                    shiftamt: ins.has_flag("shiftamt"),
                };
                self.ins().bits(op, &[a])
            }
            Opcode::Bfe => {
                let pos = self.read(&ops[2], Type::I32, u32t)?;
                let len = self.read(&ops[3], Type::I32, u32t)?;
                let op = BitOp::Bfe { signed };
                self.ins().bits(op, &[a, pos, len])
            }
            Opcode::Bfi => {
                let b = self.read(&ops[2], Type::I32, it)?;
                let pos = self.read(&ops[3], Type::I32, u32t)?;
                let len = self.read(&ops[4], Type::I32, u32t)?;
                self.ins().bits(BitOp::Bfi, &[a, b, pos, len])
            }
            _ => {
                // prmt.b32 d, a, b, c
                let b = self.read(&ops[2], Type::I32, it)?;
                let c = self.read(&ops[3], Type::I32, it)?;
                let mode = PrmtMode::ALL[1..]
                    .iter()
                    .copied()
                    .find(|m| ins.has_flag(&m.suffix()[1..]))
                    .unwrap_or(PrmtMode::Default);
                self.ins().bits(BitOp::Prmt { mode }, &[a, b, c])
            }
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `bfe.u64/.s64 d, a, pos, len` and `bfi.b64 d, a, b, pos, len` as 64-bit shifts and
    /// masks (pos and len taken mod 256; the IR's shifts give 0, or the sign for an arithmetic
    /// right shift, for counts of 64 or more, which is the end case PTX wants):
    /// * `bfe.u64`: `(a >> pos) & ~(-1 << len)`;
    /// * `bfe.s64`: with `e = min(pos + len, 64)`, `(a << (64 - e)) >>s (64 - e + pos)`, the
    ///   field sign-extended from bit `e - 1` (all bits `a[63]` when pos ≥ 64), and 0 when
    ///   `len = 0`;
    /// * `bfi.b64`: with `m = ~(-1 << len) << pos`, `(b & ~m) | ((a << pos) & m)`.
    fn bf64(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let bfi = ins.opcode == Opcode::Bfi;
        let ops = self.ops(ins, if bfi { 5 } else { 4 })?;
        let it = ins.ty();
        let u32t = Some(ast::Type::U32);
        let a = self.read(&ops[1], ty, it)?;
        let k = if bfi { 3 } else { 2 };
        let pos = self.read(&ops[k], Type::I32, u32t)?;
        let len = self.read(&ops[k + 1], Type::I32, u32t)?;
        if bfi {
            // nvcc's idiom for building a 64-bit value from two words, `bfi.b64 d, a, b, 32,
            // 32` (or a longer len), and its mirror `bfi.b64 d, a, b, 0, 32`: a pair of words,
            // which the lowering moves (`MOV`s) instead of masking both 64-bit operands.
            let imm = |o: &Operand| match o {
                Operand::Imm(ast::Imm::Int { value, .. }, _) => Some(value & 0xff),
                _ => None,
            };
            let words = match (imm(&ops[3]), imm(&ops[4])) {
                (Some(32), Some(l)) if l >= 32 => Some(true),
                (Some(0), Some(32)) => Some(false),
                _ => None,
            };
            if let Some(high) = words {
                let b = self.read(&ops[2], ty, it)?;
                let (alo, _) = self.words(a);
                let (blo, bhi) = self.words(b);
                let (lo, hi) = if high { (blo, alo) } else { (alo, bhi) };
                let lo = self.ins().zext(Type::I64, lo);
                let hi = self.ins().zext(Type::I64, hi);
                let k = self.iconst(Type::I32, 32);
                let up = self.ins().shl(hi, k);
                let d = self.ins().binary(BinaryOp::Or, lo, up);
                let dst = self.dest1(&ops[0])?;
                return self.write(dst, d, false, ops[0].span());
            }
        }
        let ff = self.iconst(Type::I32, 0xff);
        let pos = self.ins().binary(BinaryOp::And, pos, ff);
        let len = self.ins().binary(BinaryOp::And, len, ff);
        let ones = self.iconst(Type::I64, -1);
        let up = self.ins().shl(ones, len);
        let low_mask = self.ins().unary(UnaryOp::Not, up);
        let d = if bfi {
            let b = self.read(&ops[2], ty, it)?;
            let m = self.ins().shl(low_mask, pos);
            let keep = self.ins().unary(UnaryOp::Not, m);
            let old = self.ins().binary(BinaryOp::And, b, keep);
            let moved = self.ins().shl(a, pos);
            let new = self.ins().binary(BinaryOp::And, moved, m);
            self.ins().binary(BinaryOp::Or, old, new)
        } else if !signed {
            let x = self.ins().binary(BinaryOp::ShrU, a, pos);
            self.ins().binary(BinaryOp::And, x, low_mask)
        } else {
            let k64 = self.iconst(Type::I32, 64);
            let end = self.ins().add(pos, len);
            let end = self.ins().binary(BinaryOp::MinU, end, k64);
            let left = self.ins().sub(k64, end);
            let right = self.ins().add(left, pos);
            let y = self.ins().shl(a, left);
            let x = self.ins().binary(BinaryOp::ShrS, y, right);
            let z32 = self.iconst(Type::I32, 0);
            let z = self.iconst(Type::I64, 0);
            let empty = self.ins().icmp(IntCC::Eq, len, z32);
            self.ins().select(empty, z, x)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c` (funnel shift of `{b, a}` by `c`).
    fn shf(&mut self, ins: &Instruction) -> Option<()> {
        let left = ins.has_flag("l");
        if left == ins.has_flag("r") || ins.has_flag("wrap") == ins.has_flag("clamp") {
            return self.unsupported(ins, "shf needs one of .l/.r and one of .wrap/.clamp");
        }
        let (ty, _) = self.int_type(ins)?;
        if ty != Type::I32 {
            return self.unsupported(ins, "shf is 32-bit only");
        }
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], Type::I32, it)?;
        let b = self.read(&ops[2], Type::I32, it)?;
        let c = self.read(&ops[3], Type::I32, Some(ast::Type::U32))?;
        let n = if ins.has_flag("wrap") {
            let m = self.iconst(Type::I32, 31);
            self.ins().binary(BinaryOp::And, c, m)
        } else {
            let k = self.iconst(Type::I32, 32);
            self.ins().binary(BinaryOp::MinU, c, k)
        };
        let k = self.iconst(Type::I32, 32);
        let rest = self.ins().sub(k, n);
        let (x, y) = if left {
            let x = self.ins().shl(b, n);
            let y = self.ins().binary(BinaryOp::ShrU, a, rest);
            (x, y)
        } else {
            let x = self.ins().binary(BinaryOp::ShrU, a, n);
            let y = self.ins().shl(b, rest);
            (x, y)
        };
        let d = self.ins().binary(BinaryOp::Or, x, y);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `sad.type d, a, b, c`: `c + |a - b|`.
    fn sad(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let c = self.read(&ops[3], ty, it)?;
        let cc = if signed { IntCC::Slt } else { IntCC::Ult };
        let lt = self.ins().icmp(cc, a, b);
        let ba = self.ins().sub(b, a);
        let ab = self.ins().sub(a, b);
        let diff = self.ins().select(lt, ba, ab);
        let d = self.ins().add(c, diff);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `lop3.b32 d, a, b, c, immLut` (ptxas 11.8 takes it for sm_5x: `LOP3.LUT`).
    pub(super) fn lop3(&mut self, ins: &Instruction) -> Option<()> {
        if ins.ty() != Some(ast::Type::B32) {
            return self.unsupported(ins, "lop3 is .b32");
        }
        let ops = self.ops(ins, 5)?;
        let it = ins.ty();
        let lut = match ops[4] {
            ast::Operand::Imm(ast::Imm::Int { value, .. }, _) if (0..=255).contains(&value) => {
                value
            }
            _ => {
                return self.unsupported(
                    ins,
                    "the lookup table of lop3 must be an immediate in 0..255",
                )
            }
        };
        let a = self.read(&ops[1], Type::I32, it)?;
        let b = self.read(&ops[2], Type::I32, it)?;
        let c = self.read(&ops[3], Type::I32, it)?;
        let lut = self.iconst(Type::I32, lut);
        let d = self.ins().bits(BitOp::Lop3, &[a, b, c, lut]);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }
}
