//! `istypep.{texref,samplerref,surfref} p, a` (declared from `build.rs`).
//!
//! In: the instruction; `a` is a 64-bit register holding an opaque handle (ptxas 11.8
//! refuses a variable's name there: "Arguments mismatch for instruction 'istypep'"). Out:
//! plain IR, `p = (a & (1 << bit)) != 0`, with bit 61 for `.texref`, 62 for `.samplerref`
//! and 63 for `.surfref`: ptxas tests the same bits of the handle's high word (`LOP32I.AND`
//! with 0x20000000/0x40000000/0x80000000, then `ISET.EQ.U32.X` against that constant in
//! bank 2). `ir::eval` and the simulator so agree by construction, whatever the launch's
//! handles hold. The module is marked [`crate::ir::Module::istypep_used`]: ptxas writes
//! `EIATTR_ISTYPEP_USED` first in the module `.nv.info` then.

use super::FnBuilder;
use crate::ir::{BinaryOp, IntCC, Type};
use crate::ptx::ast::{self, Instruction, Modifier, Operand};

impl FnBuilder<'_, '_> {
    pub(super) fn istypep(&mut self, ins: &Instruction) -> Option<()> {
        // The kind is a type modifier (`.texref` parses as one).
        let bit = ins.mods.iter().find_map(|m| match m {
            Modifier::Type(ast::Type::TexRef) => Some(61),
            Modifier::Type(ast::Type::SamplerRef) => Some(62),
            Modifier::Type(ast::Type::SurfRef) => Some(63),
            _ => None,
        });
        let Some(bit) = bit else {
            return self.unsupported(ins, "istypep takes .texref, .samplerref or .surfref");
        };
        let ops = self.ops(ins, 2)?;
        if matches!(ops[1], Operand::Name(_)) && self.is_opaque_name(&ops[1]) {
            self.error(
                ops[1].span(),
                "istypep takes a 64-bit register holding a handle, not a variable's name \
                 (ptxas 11.8: \"Arguments mismatch for instruction 'istypep'\")",
            );
            return None;
        }
        let h = self.read(&ops[1], Type::I64, Some(ast::Type::U64))?;
        let mask = self.ins().iconst(Type::I64, 1i64 << bit);
        let set = self.ins().binary(BinaryOp::And, h, mask);
        let zero = self.ins().iconst(Type::I64, 0);
        let p = self.ins().icmp(IntCC::Ne, set, zero);
        self.m.ir.istypep_used = true;
        let dst = self.dest1(&ops[0])?;
        self.write(dst, p, false, ops[0].span())
    }

    /// A texture, sampler or surface variable's name.
    fn is_opaque_name(&mut self, op: &Operand) -> bool {
        let Operand::Name(n) = op else { return false };
        matches!(
            self.lookup(n),
            Some(Err(super::Sym::TexRef(_)
                | super::Sym::SamplerRef(_)
                | super::Sym::Opaque(_)))
        )
    }
}
