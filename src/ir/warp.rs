//! Warp-wide votes (PTX `vote{.sync}.{all,any,uni,ballot}`).
//!
//! In: an [`InstData::Vote`](super::InstData::Vote) with a predicate operand; the result is a
//! predicate (`all`, `any`, `uni`) or the `i32` ballot (bit k = lane k's predicate).
//! Out: [`VoteMode::eval`], the value every participating lane gets.
//!
//! # Who takes part
//!
//! The lanes of one warp that reach the vote *together*: in `ir::eval`, a thread that reaches
//! a vote stops there; when every thread of the CTA has stopped (at a vote, a barrier or its
//! end), the threads of each warp stopped at the same vote take it together, and the others
//! wait. That is the active mask the hardware's `VOTE` sees for structured control flow. A
//! `.sync` vote's member mask is read but not checked: PTX leaves a mask that differs from
//! the threads that arrive undefined.

/// Which vote.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum VoteMode {
    All,
    Any,
    /// True when the predicate is the same in every participating lane.
    Uni,
    /// The lanes' predicates as a 32-bit mask.
    Ballot,
}

impl VoteMode {
    pub fn name(self) -> &'static str {
        match self {
            VoteMode::All => "all",
            VoteMode::Any => "any",
            VoteMode::Uni => "uni",
            VoteMode::Ballot => "ballot",
        }
    }

    /// The result for `ballot` (the lanes whose predicate is true) among `active` lanes.
    pub fn eval(self, ballot: u32, active: u32) -> u64 {
        let ballot = ballot & active;
        match self {
            VoteMode::All => u64::from(ballot == active),
            VoteMode::Any => u64::from(ballot != 0),
            VoteMode::Uni => u64::from(ballot == active || ballot == 0),
            VoteMode::Ballot => u64::from(ballot),
        }
    }
}
