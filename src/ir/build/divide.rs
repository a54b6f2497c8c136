//! PTX `div` and `rem` on integers → the IR's `div.u`/`div.s`/`rem.u`/`rem.s` (see the `ir`
//! essay for their semantics, division by zero included).
//!
//! In: a checked `div`/`rem` instruction. Out: one IR binary instruction written to the
//! destination. Floating-point `div` is refused here with a diagnostic until the float ops
//! exist in the IR.

use super::FnBuilder;
use crate::ir::BinaryOp;
use crate::ptx::ast::{Instruction, Opcode};

impl FnBuilder<'_, '_> {
    /// `div.{u,s}N d, a, b` / `rem.{u,s}N d, a, b` for N = 16, 32, 64 (and 8 if it appears).
    pub(super) fn div_rem(&mut self, ins: &Instruction) -> Option<()> {
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
        let d = self.ins().binary(op, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }
}
