//! Warp votes (`ir::warp`) as ptxas writes them for sm_50:
//!
//! ```text
//! vote.all / .any   VOTE.ALL|ANY Pd, Pa
//! vote.uni          VOTE.EQ Pd, Pa
//! vote.ballot       VOTE.ANY Rd, PT, Pa
//! ```
//!
//! `VOTE` is fixed-latency; its lanes are the active ones, which is who takes part in the IR's
//! vote as long as the vote sits where the PTX put it (selection never moves an instruction
//! out of its block).

use super::Lowerer;
use crate::ir::{Value, VoteMode};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};

impl<'a> Lowerer<'a> {
    pub(super) fn lower_vote(
        &mut self,
        v: Value,
        mode: VoteMode,
        arg: Value,
    ) -> Result<(), LowerError> {
        let a = self.reg(arg)?;
        let ballot = mode == VoteMode::Ballot;
        let d = self.new_vreg(if ballot { RegKind::B32 } else { RegKind::Pred });
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let code = match mode {
            VoteMode::All => 0,
            VoteMode::Any | VoteMode::Ballot => 1,
            VoteMode::Uni => 2,
        };
        let dst = if ballot { Field::Rd } else { Field::Pd };
        i.piece(
            sm50::Inst::new(Form::VOTE).with(Field::Mode, code),
            &[(dst, dop, 0), (Field::Pa, aop, 0)],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}
