//! PTX `redux.sync`, `match.{any,all}.sync` and `elect.sync` → [`InstData::Collective`]
//! (`ir::collective` has their meaning and their sm_5x emulation).
//!
//! In: `redux.sync.{add,min,max}.{u32,s32}` / `.{and,or,xor}.b32 d, a, membermask`,
//! `match.any.sync.{b32,b64} d, a, membermask`, `match.all.sync.{b32,b64} d{|p}, a,
//! membermask`, `elect.sync d|p, membermask` (`d` may be the sink `_`). Out: one
//! `Collective` whose results are written to `d` (and `p`). Refused with a diagnostic:
//! `redux.sync` on `.f32` (`.abs`, `.NaN`: sm_100a) and a missing `.sync`.

use super::FnBuilder;
use crate::ir::{CollectiveOp, ReduxOp, Type};
use crate::ptx::ast::{self, Instruction, Opcode, Operand, TypeKind};

impl FnBuilder<'_, '_> {
    pub(super) fn collective(&mut self, ins: &Instruction) -> Option<()> {
        if !ins.has_flag("sync") {
            return self.unsupported(ins, "needs .sync");
        }
        let op = match ins.opcode {
            Opcode::Redux => self.redux_op(ins)?,
            Opcode::Match if ins.has_flag("any") => CollectiveOp::MatchAny,
            Opcode::Match if ins.has_flag("all") => CollectiveOp::MatchAll,
            Opcode::Match => return self.unsupported(ins, "match needs .any or .all"),
            _ => CollectiveOp::Elect,
        };
        let ops = self.ops(ins, op.arity() + 1)?;
        let b32 = Some(ast::Type::B32);
        let mut args = Vec::new();
        if op.arity() == 2 {
            let (ty, it) = match ins.ty() {
                Some(t @ (ast::Type::B64 | ast::Type::U64 | ast::Type::S64))
                    if ins.opcode == Opcode::Match =>
                {
                    (Type::I64, Some(t))
                }
                Some(t) if t.kind() != TypeKind::Float && t.bits() == 32 => (Type::I32, Some(t)),
                _ => return self.unsupported(ins, "operand type (.b32, or .b64 for match)"),
            };
            args.push(self.read(&ops[1], ty, it)?);
        }
        args.push(self.read(&ops[op.arity()], Type::I32, b32)?);
        let (d, p) = self.ins().collective(op, &args);
        match &ops[0] {
            Operand::PredPair(dn, pn) => {
                if dn.text != "_" {
                    let dv = self.reg_var(dn)?;
                    self.write(Some(dv), d, false, dn.span)?;
                }
                let Some(p) = p else {
                    return self.unsupported(ins, "no predicate result here");
                };
                let pv = self.reg_var(pn)?;
                self.write(Some(pv), p, false, pn.span)
            }
            o => {
                let dst = self.dest1(o)?;
                self.write(dst, d, false, o.span())
            }
        }
    }

    fn redux_op(&mut self, ins: &Instruction) -> Option<CollectiveOp> {
        let Some(t) = ins.ty() else {
            self.unsupported(ins, "no instruction type");
            return None;
        };
        if t.kind() == TypeKind::Float {
            self.unsupported(
                ins,
                "redux.sync on .f32 is sm_100a PTX; sm_5x runs integer redux only",
            );
            return None;
        }
        let signed = t.kind() == TypeKind::Signed;
        let pick = |s: bool, a: ReduxOp, b: ReduxOp| if s { a } else { b };
        let op = [
            ("add", ReduxOp::Add),
            ("min", pick(signed, ReduxOp::MinS, ReduxOp::MinU)),
            ("max", pick(signed, ReduxOp::MaxS, ReduxOp::MaxU)),
            ("and", ReduxOp::And),
            ("or", ReduxOp::Or),
            ("xor", ReduxOp::Xor),
        ]
        .into_iter()
        .find(|(f, _)| ins.has_flag(f))
        .map(|(_, op)| op);
        match op {
            Some(op) => Some(CollectiveOp::Redux(op)),
            None => {
                self.unsupported(ins, "redux needs .add, .min, .max, .and, .or or .xor");
                None
            }
        }
    }
}
