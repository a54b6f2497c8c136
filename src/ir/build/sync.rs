//! Barriers and fences: `bar.sync`/`barrier.sync`/`bar.arrive` with a barrier number and an
//! optional thread count, and `membar.{cta,gl,sys}` (declared from `build.rs`).
//!
//! In: one `bar`/`barrier`/`membar`/`fence` instruction. Out: `Barrier` (the plain
//! `bar.sync 0`, as before), `NamedBarrier` or `MemBar`, or a diagnostic naming what sm_5x or
//! leafold cannot do: a barrier number or count in a register (the SM50 description has only
//! the immediate forms of `BAR`), `bar.red` (the IR has no barrier reduction yet, although
//! the SM50 description has `BAR.RED` and `B2R.RESULT`), and
//! `fence` (PTX 6.0 requires sm_70 for it; sm_5x has `membar`).

use super::FnBuilder;
use crate::ir::MemScope;
use crate::ptx::ast::{self, Instruction, Modifier, Opcode, Operand};

/// An immediate integer operand.
fn imm(op: &Operand) -> Option<i64> {
    match op {
        Operand::Imm(ast::Imm::Int { value, .. }, _) => Some(*value),
        _ => None,
    }
}

impl FnBuilder<'_, '_> {
    pub(super) fn barrier(&mut self, ins: &Instruction) -> Option<()> {
        if ins.has_flag("red") {
            return self.unsupported(
                ins,
                "bar.red is not compiled yet: the IR has no barrier reduction to lower to BAR.RED and B2R.RESULT",
            );
        }
        let wait = ins.has_flag("sync");
        if !wait && !ins.has_flag("arrive") {
            return self.unsupported(ins, "only bar.sync, barrier.sync and bar.arrive");
        }
        if let Some(m) = ins
            .mods
            .iter()
            .find(|m| !matches!(m, Modifier::Flag("sync" | "arrive" | "aligned" | "cta")))
        {
            let what = format!("the modifier {m:?} of a barrier");
            return self.unsupported(ins, &what);
        }
        let Some(id) = ins.operands.first().and_then(imm) else {
            return self.unsupported(
                ins,
                "a barrier number in a register (BAR with a register operand is not described)",
            );
        };
        if !(0..=15).contains(&id) {
            return self.unsupported(ins, "a barrier number outside 0..15");
        }
        let count = match ins.operands.get(1) {
            None => None,
            Some(op) => match imm(op) {
                Some(c) if c > 0 && c % 32 == 0 && c <= 1024 => Some(c as u32),
                Some(_) => {
                    return self.unsupported(
                        ins,
                        "a thread count that is not a multiple of 32 in 32..1024",
                    )
                }
                None => return self.unsupported(
                    ins,
                    "a thread count in a register (BAR with a register operand is not described)",
                ),
            },
        };
        if !wait && count.is_none() {
            return self.unsupported(ins, "bar.arrive without a thread count");
        }
        if wait && id == 0 && count.is_none() {
            self.ins().barrier();
        } else {
            self.ins().named_barrier(id as u8, count, wait);
        }
        Some(())
    }

    pub(super) fn membar(&mut self, ins: &Instruction) -> Option<()> {
        if ins.opcode == Opcode::Fence {
            return self.unsupported(ins, "fence needs sm_70; use membar on sm_5x");
        }
        let scope = if ins.has_flag("cta") {
            MemScope::Cta
        } else if ins.has_flag("gl") {
            MemScope::Gl
        } else if ins.has_flag("sys") {
            MemScope::Sys
        } else {
            return self.unsupported(ins, "only membar.cta, membar.gl and membar.sys");
        };
        self.ins().membar(scope);
        Some(())
    }
}
