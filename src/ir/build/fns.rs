//! `fns.b32 d, mask, base, offset` → IR (PTX ISA, "Integer Arithmetic Instructions: fns", PTX 6.0): the bit position of the
//! `|offset|`-th set bit of `mask`, counting from bit `base` upward (`offset > 0`) or
//! downward (`offset < 0`), `base` itself included; `offset = 0` gives `base` when bit `base`
//! is set; `0xffffffff` when there is no such bit. `base > 31` is undefined in PTX (here:
//! whatever the sequence below computes, the same in `ir::eval` and on the GPU).
//!
//! In: the instruction (operands `i32`: mask `.b32`, base `.b32/.u32/.s32`, offset `.s32`).
//! Out: a branch-free sequence of existing IR operations, so eval, selection and the
//! simulator need nothing new (ptxas 11.8 also expands `fns` into an ALU sequence):
//!
//! * `x` = the searched bits moved so that the search runs upward from bit 0: for
//!   `offset > 0`, `mask & (~0 << base)` (bits below `base` cleared; the search from bit 0
//!   then meets `base` first); for `offset < 0`, `brev(mask & (~0 >> (31 - base)))` (bits
//!   above `base` cleared, reversed: bit `base` is now the lowest candidate and positions
//!   read as `31 - p`);
//! * `n = |offset|` (as unsigned; `|MIN|` is `2^31`); found iff `n <= popc(x)`;
//! * the `n`-th set bit of `x` from the bottom by a binary search over halves: with `k = n`,
//!   `p = 0`, for `w` in 16, 8, 4, 2, 1: `c = popc(x & (2^w - 1))`; if `k > c` the bit is in
//!   the upper half of the `2w`-bit window: `k -= c`, `p += w`, `x >>= w`. Each step is a
//!   compare and three selects.
//!
//! The result is `p` (upward) or `31 - p` (downward) when found, else all ones; `offset = 0`
//! selects `(mask >> base) & 1 ? base : 0xffffffff` instead.

use super::FnBuilder;
use crate::ir::{BinaryOp, BitOp, IntCC, Type, Value};
use crate::ptx::ast::{self, Instruction};

impl FnBuilder<'_, '_> {
    pub(super) fn fns(&mut self, ins: &Instruction) -> Option<()> {
        if ins.ty() != Some(ast::Type::B32) {
            return self.unsupported(ins, "fns takes .b32 only");
        }
        let ops = self.ops(ins, 4)?;
        let mask = self.read(&ops[1], Type::I32, Some(ast::Type::B32))?;
        let base = self.read(&ops[2], Type::I32, Some(ast::Type::U32))?;
        let offset = self.read(&ops[3], Type::I32, Some(ast::Type::S32))?;
        let d = self.fns_value(mask, base, offset);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn fns_value(&mut self, mask: Value, base: Value, offset: Value) -> Value {
        let i = |this: &mut Self, x: i64| this.iconst(Type::I32, x);
        let zero = i(self, 0);
        let ones = i(self, -1);
        let k31 = i(self, 31);
        let up = self.ins().icmp(IntCC::Sgt, offset, zero);
        // Upward: the bits at and above base.
        let hi_bits = self.ins().binary(BinaryOp::Shl, ones, base);
        let m_up = self.ins().binary(BinaryOp::And, mask, hi_bits);
        // Downward: the bits at and below base, reversed.
        let sh = self.ins().binary(BinaryOp::Sub, k31, base);
        let lo_bits = self.ins().binary(BinaryOp::ShrU, ones, sh);
        let m_dn = self.ins().binary(BinaryOp::And, mask, lo_bits);
        let m_dn = self.ins().bits(BitOp::Brev, &[m_dn]);
        let mut x = self.ins().select(up, m_up, m_dn);
        let neg = self.ins().binary(BinaryOp::Sub, zero, offset);
        let mut k = self.ins().select(up, offset, neg);
        let total = self.ins().bits(BitOp::Popc, &[x]);
        let found = self.ins().icmp(IntCC::Ule, k, total);
        let mut p = zero;
        for w in [16i64, 8, 4, 2, 1] {
            let low = i(self, (1i64 << w) - 1);
            let wv = i(self, w);
            let lx = self.ins().binary(BinaryOp::And, x, low);
            let c = self.ins().bits(BitOp::Popc, &[lx]);
            let adv = self.ins().icmp(IntCC::Ugt, k, c);
            let k2 = self.ins().binary(BinaryOp::Sub, k, c);
            k = self.ins().select(adv, k2, k);
            let p2 = self.ins().binary(BinaryOp::Add, p, wv);
            p = self.ins().select(adv, p2, p);
            if w > 1 {
                let x2 = self.ins().binary(BinaryOp::ShrU, x, wv);
                x = self.ins().select(adv, x2, x);
            }
        }
        let p_dn = self.ins().binary(BinaryOp::Sub, k31, p);
        let pos = self.ins().select(up, p, p_dn);
        let nonzero = self.ins().select(found, pos, ones);
        // offset == 0: bit base itself.
        let at = self.ins().binary(BinaryOp::ShrU, mask, base);
        let one = i(self, 1);
        let bit = self.ins().binary(BinaryOp::And, at, one);
        let set = self.ins().icmp(IntCC::Ne, bit, zero);
        let z = self.ins().select(set, base, ones);
        let is0 = self.ins().icmp(IntCC::Eq, offset, zero);
        self.ins().select(is0, z, nonzero)
    }
}
