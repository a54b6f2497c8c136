//! PTX `atom` and `red` → [`InstData::Atomic`](crate::ir::InstData::Atomic).
//!
//! `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}` and `red{.sem}{.scope}{.space}.op.type
//! [a], b`. The memory-order and scope qualifiers are accepted and dropped: sm_5x atomics are
//! relaxed and device-wide, and no other thread order is observable in `ir::eval` (see
//! `ir::atomic`). `red` is an `atom` whose result is never read. `atom/red.add.f32` is
//! `AtomOp::FAdd` (round to nearest, flush to zero, as SM50's only float atomic). Refused
//! with a diagnostic: other floating-point atomics (`.f64`, `.f16`, and f32 operations
//! other than `add`), 16- and 128-bit ones, `inc`/`dec` on 64
//! bits, cache hints, and spaces other than global, shared and generic.

use super::FnBuilder;
use crate::ir::{AtomOp, Space, Type};
use crate::ptx::ast::{Instruction, Opcode, TypeKind};

impl FnBuilder<'_, '_> {
    pub(super) fn atomic(&mut self, ins: &Instruction) -> Option<()> {
        if ins.has_flag("L2::cache_hint") {
            return self.unsupported(ins, "cache hints are not supported");
        }
        let space = self.mem_space(ins)?;
        if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
            return self.unsupported(ins, "atomics are in the global, shared or generic space");
        }
        let Some(t) = ins.ty() else {
            return self.unsupported(ins, "no instruction type");
        };
        if t.kind() == TypeKind::Float {
            return self.float_atomic(ins, space);
        }
        let (ty, signed) = self.int_type(ins)?;
        if !matches!(ty, Type::I32 | Type::I64) {
            return self.unsupported(ins, "atomics are 32 or 64 bits wide here");
        }
        let pick = |s: bool, a: AtomOp, b: AtomOp| if s { a } else { b };
        let op = [
            ("add", AtomOp::Add),
            ("min", pick(signed, AtomOp::MinS, AtomOp::MinU)),
            ("max", pick(signed, AtomOp::MaxS, AtomOp::MaxU)),
            ("inc", AtomOp::Inc),
            ("dec", AtomOp::Dec),
            ("and", AtomOp::And),
            ("or", AtomOp::Or),
            ("xor", AtomOp::Xor),
            ("exch", AtomOp::Exch),
            ("cas", AtomOp::Cas),
        ]
        .into_iter()
        .find(|(f, _)| ins.has_flag(f))
        .map(|(_, op)| op);
        let Some(op) = op else {
            return self.unsupported(ins, "no atomic operation");
        };
        if matches!(op, AtomOp::Inc | AtomOp::Dec) && ty != Type::I32 {
            return self.unsupported(ins, "inc and dec are 32-bit only");
        }
        let red = ins.opcode == Opcode::Red;
        let first = if red { 0 } else { 1 };
        let n = first + 1 + op.arity();
        let ops = self.ops(ins, n)?;
        let it = ins.ty();
        let (addr, offset) = self.address(&ops[first], space)?;
        let mut args = Vec::new();
        for o in &ops[first + 1..] {
            args.push(self.read(o, ty, it)?);
        }
        let old = self.ins().atomic(op, space, ty, addr, offset, &args);
        if red {
            return Some(());
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, signed, ops[0].span())
    }

    /// `atom{.space}.add.f32 d, [a], b` and `red{.space}.add.f32 [a], b`.
    fn float_atomic(&mut self, ins: &Instruction, space: Space) -> Option<()> {
        if ins.ty() != Some(crate::ptx::ast::Type::F32) || !ins.has_flag("add") {
            return self.unsupported(
                ins,
                "floating-point atomics other than add.f32 (sm_5x has no others)",
            );
        }
        let red = ins.opcode == Opcode::Red;
        let first = if red { 0 } else { 1 };
        let ops = self.ops(ins, first + 2)?;
        let (addr, offset) = self.address(&ops[first], space)?;
        let b = self.read(&ops[first + 1], Type::I32, ins.ty())?;
        let old = self
            .ins()
            .atomic(AtomOp::FAdd, space, Type::I32, addr, offset, &[b]);
        if red {
            return Some(());
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, false, ops[0].span())
    }
}
