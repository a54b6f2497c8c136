//! `alloca`, `stacksave`, `stackrestore` (declared from `build.rs`).
//!
//! In: one of these instructions, already checked by `ptx::check` (PTX ISA 7.3, `.target`
//! sm_52 or higher, type `.u32` or `.u64`, registers of that width, an immediate power-of-two
//! alignment). Out: an [`InstData::Stack`](crate::ir::InstData::Stack) of the instruction
//! type: `alloca.type d, size{, align}` reads `size` (a register or an immediate) and writes
//! the `.local` address of the new block to `d`; `stacksave.type d` writes the stack
//! pointer; `stackrestore.type a` sets it. The alignment is at least 8, as ptxas 11.8 makes
//! it (`LOP32I.AND R1, R1, 0xfffffff8` for `alloca` with alignment 1, 2, 4, 8 or none).

use super::{FnBuilder, Type};
use crate::ptx::ast::{Imm, Instruction, Opcode, Operand};

/// The least alignment ptxas 11.8 gives an `alloca` block.
const MIN_ALIGN: u32 = 8;

impl FnBuilder<'_, '_> {
    pub(super) fn stack_instr(&mut self, ins: &Instruction) -> Option<()> {
        let it = ins.ty();
        let ty = match it {
            Some(crate::ptx::ast::Type::U32) => Type::I32,
            Some(crate::ptx::ast::Type::U64) => Type::I64,
            _ => return self.unsupported(ins, "the type must be .u32 or .u64"),
        };
        match ins.opcode {
            Opcode::Alloca => {
                let n = ins.operands.len();
                if !(2..=3).contains(&n) {
                    return self.unsupported(ins, "expected 2 or 3 operands");
                }
                let ops = &ins.operands;
                let align = match ops.get(2) {
                    None => MIN_ALIGN,
                    Some(Operand::Imm(Imm::Int { value, .. }, _))
                        if (1..=1 << 23).contains(value) && value.count_ones() == 1 =>
                    {
                        (*value as u32).max(MIN_ALIGN)
                    }
                    Some(_) => {
                        return self
                            .unsupported(ins, "the alignment must be a power of two up to 2^23")
                    }
                };
                let size = self.read(&ops[1], ty, it)?;
                let d = self.ins().alloca(ty, size, align);
                let dst = self.dest1(&ops[0])?;
                self.write(dst, d, false, ops[0].span())
            }
            Opcode::Stacksave => {
                let ops = self.ops(ins, 1)?;
                let d = self.ins().stack_save(ty);
                let dst = self.dest1(&ops[0])?;
                self.write(dst, d, false, ops[0].span())
            }
            _ => {
                let ops = self.ops(ins, 1)?;
                let sp = self.read(&ops[0], ty, it)?;
                self.ins().stack_restore(sp);
                Some(())
            }
        }
    }
}
