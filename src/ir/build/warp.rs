//! PTX `vote` → [`InstData::Vote`](crate::ir::InstData::Vote):
//! `vote{.sync}.{all,any,uni}.pred d, {!}a{, membermask}` and
//! `vote{.sync}.ballot.b32 d, {!}a{, membermask}`. The member mask is read (so a bad operand
//! is still a diagnostic) but not used; see `ir::warp` for who takes part. `shfl` likewise,
//! with `d|p` giving both results. `activemask` is the ballot of a true predicate.

use super::FnBuilder;
use crate::ir::{ShflMode, Type, VoteMode};
use crate::ptx::ast::{Instruction, Operand};

impl FnBuilder<'_, '_> {
    pub(super) fn vote(&mut self, ins: &Instruction) -> Option<()> {
        let mode = [
            ("all", VoteMode::All),
            ("any", VoteMode::Any),
            ("uni", VoteMode::Uni),
            ("ballot", VoteMode::Ballot),
        ]
        .into_iter()
        .find(|(f, _)| ins.has_flag(f))
        .map(|(_, m)| m);
        let Some(mode) = mode else {
            return self.unsupported(ins, "vote needs .all, .any, .uni or .ballot");
        };
        let n = if ins.has_flag("sync") { 3 } else { 2 };
        let ops = self.ops(ins, n)?;
        let a = self.read(&ops[1], Type::Pred, None)?;
        if n == 3 {
            self.read(&ops[2], Type::I32, Some(crate::ptx::ast::Type::B32))?;
        }
        let d = self.ins().vote(mode, a);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }
}

impl FnBuilder<'_, '_> {
    /// `activemask.b32 d`: the lanes of the warp that execute it, which is the ballot of a
    /// true predicate (ptxas 11.8: `VOTE.ANY d, PT, PT`).
    pub(super) fn activemask(&mut self, ins: &Instruction) -> Option<()> {
        let ops = self.ops(ins, 1)?;
        let t = self.pred_const(true);
        let d = self.ins().vote(VoteMode::Ballot, t);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }
}

impl FnBuilder<'_, '_> {
    /// `shfl{.sync}.mode.b32 d[|p], a, b, c{, membermask}`.
    pub(super) fn shfl(&mut self, ins: &Instruction) -> Option<()> {
        let mode = [
            ("idx", ShflMode::Idx),
            ("up", ShflMode::Up),
            ("down", ShflMode::Down),
            ("bfly", ShflMode::Bfly),
        ]
        .into_iter()
        .find(|(f, _)| ins.has_flag(f))
        .map(|(_, m)| m);
        let Some(mode) = mode else {
            return self.unsupported(ins, "shfl needs .idx, .up, .down or .bfly");
        };
        let n = if ins.has_flag("sync") { 5 } else { 4 };
        let ops = self.ops(ins, n)?;
        let it = Some(crate::ptx::ast::Type::B32);
        let a = self.read(&ops[1], Type::I32, it)?;
        let b = self.read(&ops[2], Type::I32, it)?;
        let c = self.read(&ops[3], Type::I32, it)?;
        if n == 5 {
            self.read(&ops[4], Type::I32, it)?;
        }
        let (d, p) = self.ins().shfl(mode, a, b, c);
        match &ops[0] {
            Operand::PredPair(dn, pn) => {
                let dv = self.reg_var(dn)?;
                let pv = self.reg_var(pn)?;
                self.write(Some(dv), d, false, dn.span)?;
                self.write(Some(pv), p, false, pn.span)
            }
            o => {
                let dst = self.dest1(o)?;
                self.write(dst, d, false, o.span())
            }
        }
    }
}
