//! PTX `vote` → [`InstData::Vote`](crate::ir::InstData::Vote):
//! `vote{.sync}.{all,any,uni}.pred d, {!}a{, membermask}` and
//! `vote{.sync}.ballot.b32 d, {!}a{, membermask}`. The member mask is read (so a bad operand
//! is still a diagnostic) but not used; see `ir::warp` for who takes part.

use super::FnBuilder;
use crate::ir::{Type, VoteMode};
use crate::ptx::ast::Instruction;

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
