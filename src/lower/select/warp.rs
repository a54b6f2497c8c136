//! Warp votes and shuffles (`ir::warp`) as ptxas writes them for sm_50:
//!
//! ```text
//! vote.all / .any   VOTE.ALL|ANY Pd, Pa
//! vote.uni          VOTE.EQ Pd, Pa
//! vote.ballot       VOTE.ANY Rd, PT, Pa
//! shfl.mode         SHFL.MODE Pd, Rd, Ra, b, c     (b, c immediates when constant)
//! ```
//!
//! `VOTE` is fixed-latency; its lanes are the active ones, which is who takes part in the IR's
//! vote as long as the vote sits where the PTX put it (selection never moves an instruction
//! out of its block).

use super::Lowerer;
use crate::ir::{InstData, IntCC, ShflMode, Value, VoteMode};
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
        // A constant true predicate (`activemask`, `vote.ballot.b32 d, 1`) is `PT`, as
        // ptxas writes it: `VOTE.ANY d, PT, PT`.
        // (`ir::build` writes a true predicate as `icmp.eq x, x`.)
        let always = matches!(self.class(arg), super::Class::Imm(k) if k & 1 == 1)
            || matches!(self.def_of(arg), Some(InstData::Icmp { cc: IntCC::Eq, args }) if args[0] == args[1]);
        let a = if always { None } else { Some(self.reg(arg)?) };
        let ballot = mode == VoteMode::Ballot;
        let d = self.new_vreg(if ballot { RegKind::B32 } else { RegKind::Pred });
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let code = match mode {
            VoteMode::All => 0,
            VoteMode::Any | VoteMode::Ballot => 1,
            VoteMode::Uni => 2,
        };
        let dst = if ballot { Field::Rd } else { Field::Pd };
        let vote = sm50::Inst::new(Form::VOTE).with(Field::Mode, code);
        match a {
            Some(a) => {
                let aop = i.use_(a.vreg);
                i.piece(vote, &[(dst, dop, 0), (Field::Pa, aop, 0)]);
            }
            None => i.piece(vote.with(Field::Pa, 7), &[(dst, dop, 0)]),
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}

impl<'a> Lowerer<'a> {
    /// `SHFL.mode Pd, Rd, Ra, b, c` with `b` a 5-bit and `c` a 13-bit immediate when they are
    /// constants that fit (forms II, IR, RI, RR). `SHFL` is variable-latency (scoreboarded).
    pub(super) fn lower_shfl(
        &mut self,
        results: &[Value],
        mode: ShflMode,
        args: [Value; 3],
    ) -> Result<(), LowerError> {
        let (Some(&rv), Some(&rp)) = (results.first(), results.get(1)) else {
            return Err(LowerError::Internal("shfl without its two results".into()));
        };
        let a = self.reg(args[0])?;
        let imm = |s: &Self, v: Value, max: i64| match s.class(v) {
            super::Class::Imm(k) if (0..=max).contains(&k) => Some(k as u64),
            _ => None,
        };
        let b_imm = imm(self, args[1], 31);
        let c_imm = imm(self, args[2], 0x1fff);
        let b = match b_imm {
            Some(_) => None,
            None => Some(self.reg(args[1])?),
        };
        let c = match c_imm {
            Some(_) => None,
            None => Some(self.reg(args[2])?),
        };
        let form = match (b_imm.is_some(), c_imm.is_some()) {
            (false, true) => Form::SHFL_RI,
            (true, true) => Form::SHFL_II,
            (false, false) => Form::SHFL_RR,
            (true, false) => Form::SHFL_IR,
        };
        let code = match mode {
            ShflMode::Idx => 0,
            ShflMode::Up => 1,
            ShflMode::Down => 2,
            ShflMode::Bfly => 3,
        };
        let mut inst = sm50::Inst::new(form).with(Field::Mode, code);
        if let Some(k) = b_imm {
            inst.set(Field::B, k);
        }
        if let Some(k) = c_imm {
            inst.set(Field::C, k);
        }
        let d = self.new_vreg(RegKind::B32);
        let p = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let pop = i.def(p, false);
        let aop = i.use_(a.vreg);
        let mut refs = vec![
            (Field::Rd, dop, 0),
            (Field::Pd, pop, 0),
            (Field::Ra, aop, a.offset),
        ];
        if let Some(l) = b {
            let op = i.use_(l.vreg);
            refs.push((Field::Rb, op, l.offset));
        }
        if let Some(l) = c {
            let op = i.use_(l.vreg);
            refs.push((Field::Rc, op, l.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(rv, Loc { vreg: d, offset: 0 });
        self.set_loc(rp, Loc { vreg: p, offset: 0 });
        Ok(())
    }
}
