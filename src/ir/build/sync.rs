//! Barriers and fences: `bar.sync`/`barrier.sync`/`bar.arrive` with a barrier number and an
//! optional thread count, and `membar.{cta,gl,sys}` (declared from `build.rs`).
//!
//! In: one `bar`/`barrier`/`membar`/`fence` instruction. Out: `Barrier` (the plain
//! `bar.sync 0`, as before), `NamedBarrier`, `BarrierRed` (`bar.red.popc.u32`,
//! `bar.red.{and,or}.pred`), `BarrierReg` (any of these with the barrier number or thread
//! count in a register) or `MemBar` (`bar.warp.sync` is a `MemBar` of scope `Warp`), or a
//! diagnostic naming what sm_5x or leafold cannot do: an immediate number outside 0..15 or
//! count not a multiple of 32. `fence.*` (PTX 6.0+, sm_70) and `membar.proxy` become
//! `MemBar` of their scope (`order.rs` has the mapping).

use super::FnBuilder;
use crate::ir::{BarRedOp, MemScope, Type};
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
            return self.barrier_red(ins);
        }
        if ins.has_flag("warp") {
            return self.warp_sync(ins);
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
        if ins.operands.iter().take(2).any(|o| imm(o).is_none()) {
            if !wait && ins.operands.len() < 2 {
                return self.unsupported(ins, "bar.arrive without a thread count");
            }
            self.barrier_reg(ins, &ins.operands, wait, None)?;
            return Some(());
        }
        let (id, count) = self.barrier_number(ins, &ins.operands)?;
        if !wait && count.is_none() {
            return self.unsupported(ins, "bar.arrive without a thread count");
        }
        if wait && id == 0 && count.is_none() {
            self.ins().barrier();
        } else {
            self.ins().named_barrier(id, count, wait);
        }
        Some(())
    }

    /// The barrier number and thread count of a `bar` whose operands (after any destination)
    /// are `ops`: both immediate (a register one goes to [`Self::barrier_reg`] first).
    fn barrier_number(&mut self, ins: &Instruction, ops: &[Operand]) -> Option<(u8, Option<u32>)> {
        let Some(id) = ops.first().and_then(imm) else {
            let why = "a barrier number in a register (internal: barrier_reg takes it)";
            return self.unsupported(ins, why).and(None);
        };
        if !(0..=15).contains(&id) {
            return self
                .unsupported(ins, "a barrier number outside 0..15")
                .and(None);
        }
        let count = match ops.get(1) {
            None => None,
            Some(op) => match imm(op) {
                Some(c) if c > 0 && c % 32 == 0 && c <= 1024 => Some(c as u32),
                Some(_) => {
                    let why = "a thread count that is not a multiple of 32 in 32..1024";
                    return self.unsupported(ins, why).and(None);
                }
                None => {
                    let why = "a thread count in a register (internal: barrier_reg takes it)";
                    return self.unsupported(ins, why).and(None);
                }
            },
        };
        Some((id as u8, count))
    }

    /// A barrier whose number or count (`ops`: the number, then an optional count) is a
    /// register ([`crate::ir::InstData::BarrierReg`]): the immediate one is range-checked as
    /// in [`Self::barrier_number`]; a register one is read as a 32-bit integer (PTX: `.b32`
    /// or `.u32`), its range checked by `ir::eval` at run time. `red`: `bar.red`'s reduction
    /// and predicate operand; its result is returned.
    fn barrier_reg(
        &mut self,
        ins: &Instruction,
        ops: &[Operand],
        wait: bool,
        red: Option<(BarRedOp, &Operand)>,
    ) -> Option<Option<crate::ir::Value>> {
        let mut args = Vec::new();
        let id = match ops.first().map(|o| (o, imm(o))) {
            Some((_, Some(i))) if (0..=15).contains(&i) => Some(i as u8),
            Some((_, Some(_))) => {
                return self
                    .unsupported(ins, "a barrier number outside 0..15")
                    .and(None)
            }
            Some((o, None)) => {
                args.push(self.read(o, Type::I32, Some(ast::Type::U32))?);
                None
            }
            None => return self.unsupported(ins, "a barrier needs a number").and(None),
        };
        let mut count = None;
        let mut count_reg = false;
        match ops.get(1).map(|o| (o, imm(o))) {
            None => {}
            Some((_, Some(c))) if c > 0 && c % 32 == 0 && c <= 1024 => count = Some(c as u32),
            Some((_, Some(_))) => {
                let why = "a thread count that is not a multiple of 32 in 32..1024";
                return self.unsupported(ins, why).and(None);
            }
            Some((o, None)) => {
                args.push(self.read(o, Type::I32, Some(ast::Type::U32))?);
                count_reg = true;
            }
        }
        if ops.len() > 2 {
            return self
                .unsupported(ins, "a barrier takes a number and a count")
                .and(None);
        }
        let op = match red {
            Some((op, p)) => {
                args.push(self.read(p, Type::Pred, None)?);
                Some(op)
            }
            None => None,
        };
        Some(
            self.ins()
                .barrier_reg(op, wait, id, count, count_reg, &args),
        )
    }

    /// `bar{.cta}.red.popc.u32 d, a{, b}, {!}c` and `bar{.cta}.red.{and,or}.pred p, a{, b},
    /// {!}c` (also spelled `barrier`): a barrier that reduces the predicate `c` over the CTA.
    fn barrier_red(&mut self, ins: &Instruction) -> Option<()> {
        let op = [
            ("popc", BarRedOp::Popc),
            ("and", BarRedOp::And),
            ("or", BarRedOp::Or),
        ]
        .into_iter()
        .find(|(f, _)| ins.has_flag(f))
        .map(|(_, op)| op);
        let Some(op) = op else {
            return self.unsupported(ins, "bar.red without popc, and or or");
        };
        if let Some(m) = ins.mods.iter().find(|m| {
            !matches!(
                m,
                Modifier::Flag("red" | "popc" | "and" | "or" | "aligned" | "cta" | "sync")
            ) && !matches!(m, Modifier::Type(_))
        }) {
            let what = format!("the modifier {m:?} of bar.red");
            return self.unsupported(ins, &what);
        }
        let want = match op {
            BarRedOp::Popc => ast::Type::U32,
            _ => ast::Type::Pred,
        };
        if ins.ty() != Some(want) {
            return self.unsupported(ins, "bar.red.popc is .u32, bar.red.and/.or are .pred");
        }
        let n = ins.operands.len();
        if !(3..=4).contains(&n) {
            return self.unsupported(ins, "bar.red takes d, a{, b}, c");
        }
        let nums = &ins.operands[1..n - 1];
        let r = if nums.iter().any(|o| imm(o).is_none()) {
            self.barrier_reg(ins, nums, true, Some((op, &ins.operands[n - 1])))??
        } else {
            let (id, count) = self.barrier_number(ins, nums)?;
            let c = self.read(&ins.operands[n - 1], Type::Pred, None)?;
            self.ins().barrier_red(op, id, count, c)
        };
        let dst = self.dest1(&ins.operands[0])?;
        self.write(dst, r, false, ins.operands[0].span())
    }

    /// `bar.warp.sync membermask`: the lanes of `membermask` wait for each other, and their
    /// memory accesses before it are ordered before those after it. On sm_5x a warp runs
    /// its converged lanes together, and ptxas 11.8 emits nothing for it; leafold builds a
    /// `MemBar` of scope `Warp`, which `ir::eval` takes as a warp rendezvous and selection
    /// as a `NOP` that the scheduler keeps in place (it sees only SASS, so without an
    /// instruction it could move a shared load above another lane's store). The mask is read
    /// (a bad operand is still a diagnostic) but not used: the converged lanes take part,
    /// as `vote.sync` and `shfl.sync` do.
    fn warp_sync(&mut self, ins: &Instruction) -> Option<()> {
        if let Some(m) = ins
            .mods
            .iter()
            .find(|m| !matches!(m, Modifier::Flag("warp" | "sync")))
        {
            let what = format!("the modifier {m:?} of bar.warp.sync");
            return self.unsupported(ins, &what);
        }
        if !ins.has_flag("sync") {
            return self.unsupported(ins, "bar.warp needs .sync");
        }
        let ops = self.ops(ins, 1)?;
        self.read(&ops[0], Type::I32, Some(ast::Type::B32))?;
        self.ins().membar(MemScope::Warp);
        Some(())
    }

    pub(super) fn membar(&mut self, ins: &Instruction) -> Option<()> {
        if ins.opcode == Opcode::Fence {
            return self.fence(ins);
        }
        // `membar.proxy.alias` (PTX 7.5): sm_5x has one proxy, so this orders nothing a
        // plain fence does not; the GPU-wide fence is what ptxas writes for its sm_70 twin
        // `fence.proxy.alias` (see `order`).
        if ins.has_flag("proxy") {
            self.ins().membar(MemScope::Gl);
            return Some(());
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

    /// `fence{.sem}.scope` and `fence.proxy.*` (PTX 6.0+, sm_70+), as `MEMBAR` of the scope
    /// (see `order`): `.sc` and `.acq_rel` both become the full fence, the only one sm_5x has.
    /// The fences of features sm_5x cannot run (`fence.mbarrier_init`, `fence.proxy.async`
    /// and `.tensormap` of TMA) still order ordinary accesses at least as strongly.
    fn fence(&mut self, ins: &Instruction) -> Option<()> {
        let w = |x| super::order::has_word(ins, x);
        let scope = if w("proxy") || w("mbarrier_init") {
            MemScope::Gl
        } else {
            super::order::scope_of(ins)
        };
        // `fence.proxy.tensormap::generic.acquire [a], 128` names a tensor map; there is
        // none on sm_5x, and the fence alone is at least as strong.
        self.ins().membar(scope);
        Some(())
    }
}
