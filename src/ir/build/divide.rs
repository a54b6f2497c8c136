//! PTX `div` and `rem` on integers → the IR's `div.u`/`div.s`/`rem.u`/`rem.s` (see the `ir`
//! essay for their semantics, division by zero included).
//!
//! In: a checked `div`/`rem` instruction. Out: for 8..32-bit types one IR binary
//! instruction (the selector has a branch-free sequence for it); for 64-bit types a
//! shift-subtract loop of plain IR operations (`div_rem_64`) with the same semantics, since a
//! 64-bit sequence would need branches inside one machine instruction. Floating-point `div`
//! goes to `approx.rs`.

use super::FnBuilder;
use crate::ir::{BinaryOp, IntCC, Type, UnaryOp, Value};
use crate::ptx::ast::{Instruction, Opcode, TypeKind};

impl FnBuilder<'_, '_> {
    /// `div.{u,s}N d, a, b` / `rem.{u,s}N d, a, b` for N = 16, 32, 64 (and 8 if it appears).
    pub(super) fn div_rem(&mut self, ins: &Instruction) -> Option<()> {
        if ins.ty().is_some_and(|t| t.kind() == TypeKind::Float) {
            return self.approx_fn(ins);
        }
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["approx", "full", "ftz"])?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let op = match (ins.opcode == Opcode::Div, signed) {
            (true, false) => BinaryOp::DivU,
            (true, true) => BinaryOp::DivS,
            (false, false) => BinaryOp::RemU,
            (false, true) => BinaryOp::RemS,
        };
        let d = if ty == Type::I64 {
            self.div_rem_64(op, a, b)
        } else {
            self.ins().binary(op, a, b)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// 64-bit `div`/`rem` as a restoring shift-subtract loop in the IR (SM50 has no 64-bit
    /// divide and the selector's sequences cannot branch): 64 iterations, each shifting the
    /// next dividend bit into the remainder and subtracting the divisor when it fits. The trip
    /// count is uniform, so the loop never diverges. Signed operands run on magnitudes with
    /// the signs fixed afterwards; a zero divisor gives all ones, `MIN / -1` wraps (as
    /// `ir::eval` defines `div`/`rem`). The loop stays a loop (`.pragma "nounroll"`'s mark),
    /// as ptxas's 64-bit divide stays a called subroutine.
    fn div_rem_64(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = Type::I64;
        let signed = matches!(op, BinaryOp::DivS | BinaryOp::RemS);
        let is_div = matches!(op, BinaryOp::DivU | BinaryOp::DivS);
        let zero = self.iconst(ty, 0);
        let (n, d) = if signed {
            (self.abs64(a, zero), self.abs64(b, zero))
        } else {
            (a, b)
        };
        let (vn, vr, vq, vk) = (
            self.new_var(ty),
            self.new_var(ty),
            self.new_var(ty),
            self.new_var(Type::I32),
        );
        let count = self.iconst(Type::I32, 64);
        self.def_var(vn, n);
        self.def_var(vr, zero);
        self.def_var(vq, zero);
        self.def_var(vk, count);
        let header = self.new_block(2);
        let exit = self.new_block(1);
        // ptxas calls a subroutine for a 64-bit divide, it never unrolls one: 64 copies of
        // this body (about 30 SASS instructions each, half of them 64-bit pairs) would be
        // code and address-slice growth with no loads to overlap (`ir::unroll`).
        self.func.nounroll[header] = true;
        self.terminate_jump(header);
        self.switch_to(header);
        let (n, r, q, k) = (
            self.use_var(vn),
            self.use_var(vr),
            self.use_var(vq),
            self.use_var(vk),
        );
        let c63 = self.iconst(Type::I32, 63);
        let c1 = self.iconst(Type::I32, 1);
        let (one, zero) = (self.iconst(ty, 1), self.iconst(ty, 0));
        let mut fb = self.ins();
        // r < d on entry; 2r + bit may exceed 64 bits (`over`), and then it certainly
        // holds d, and (2r + bit - d) mod 2^64 is the true, smaller remainder.
        let r_top = fb.binary(BinaryOp::ShrU, r, c63);
        let n_top = fb.binary(BinaryOp::ShrU, n, c63);
        let r_sh = fb.shl(r, c1);
        let r2 = fb.binary(BinaryOp::Or, r_sh, n_top);
        let n2 = fb.shl(n, c1);
        let over = fb.icmp(IntCC::Ne, r_top, zero);
        let fits = fb.icmp(IntCC::Uge, r2, d);
        let take = fb.binary(BinaryOp::Or, over, fits);
        let r_sub = fb.sub(r2, d);
        let r3 = fb.select(take, r_sub, r2);
        let bit = fb.select(take, one, zero);
        let q_sh = fb.shl(q, c1);
        let q2 = fb.binary(BinaryOp::Or, q_sh, bit);
        let k2 = fb.sub(k, c1);
        let k0 = fb.iconst(Type::I32, 0);
        let more = fb.icmp(IntCC::Ne, k2, k0);
        self.def_var(vn, n2);
        self.def_var(vr, r3);
        self.def_var(vq, q2);
        self.def_var(vk, k2);
        self.brif(more, header, exit);
        self.switch_to(exit);
        let q = self.use_var(vq);
        let r = self.use_var(vr);
        let zero = self.iconst(ty, 0);
        let mut fb = self.ins();
        let mut out = if is_div { q } else { r };
        if signed {
            // The quotient is negative when the signs differ, the remainder when a < 0.
            let sign = if is_div {
                fb.binary(BinaryOp::Xor, a, b)
            } else {
                a
            };
            let neg = fb.icmp(IntCC::Slt, sign, zero);
            let minus = fb.unary(UnaryOp::Neg, out);
            out = fb.select(neg, minus, out);
        }
        let ones = fb.iconst(ty, -1);
        let by_zero = fb.icmp(IntCC::Eq, b, zero);
        fb.select(by_zero, ones, out)
    }

    /// |x| of an i64 (the wrapping `|MIN| = MIN`, read as unsigned 2^63 by the loop).
    fn abs64(&mut self, x: Value, zero: Value) -> Value {
        let mut fb = self.ins();
        let neg = fb.icmp(IntCC::Slt, x, zero);
        let minus = fb.unary(UnaryOp::Neg, x);
        fb.select(neg, minus, x)
    }
}
