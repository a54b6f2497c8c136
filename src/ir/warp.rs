//! Warp-wide operations: votes (PTX `vote{.sync}.{all,any,uni,ballot}`) and shuffles (PTX
//! `shfl{.sync}.{up,down,bfly,idx}.b32`).
//!
//! In: an [`InstData::Vote`](super::InstData::Vote) with a predicate operand; the result is a
//! predicate (`all`, `any`, `uni`) or the `i32` ballot (bit k = lane k's predicate). An
//! [`InstData::Shfl`](super::InstData::Shfl) with operands `a, b, c` (`i32`); results: the
//! value read from the source lane's `a` and the predicate "the source lane was in range".
//! Out: [`VoteMode::eval`], the value every participating lane gets; [`ShflMode::source`],
//! the lane a shuffle reads (PTX's rule: `c[4:0]` is the clamp, `c[12:8]` the segment mask; a
//! lane out of range reads itself and gets false).
//!
//! # Who takes part
//!
//! The lanes of one warp that reach the vote *together*: in `ir::eval`, a thread that reaches
//! a vote stops there; when every thread of the CTA has stopped (at a vote, a barrier or its
//! end), the threads of each warp stopped at the same vote take it together, and the others
//! wait. That is the active mask the hardware's `VOTE` sees for structured control flow. A
//! `.sync` vote's member mask is read but not checked: PTX leaves a mask that differs from
//! the threads that arrive undefined. A shuffle whose source lane did not take part reads its
//! own `a` (PTX leaves that undefined too).

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

/// Which shuffle.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

impl ShflMode {
    pub fn name(self) -> &'static str {
        match self {
            ShflMode::Idx => "idx",
            ShflMode::Up => "up",
            ShflMode::Down => "down",
            ShflMode::Bfly => "bfly",
        }
    }

    /// The lane that `lane` reads and whether it was in range, for operands `b` and `c`.
    pub fn source(self, lane: u32, b: u32, c: u32) -> (u32, bool) {
        let (b, clamp, mask) = (b & 0x1f, c & 0x1f, (c >> 8) & 0x1f);
        let lane = lane & 0x1f;
        let max_lane = (lane & mask) | (clamp & !mask);
        let min_lane = lane & mask;
        let (j, ok) = match self {
            ShflMode::Idx => {
                let j = min_lane | (b & !mask);
                (j, j <= max_lane)
            }
            ShflMode::Up => {
                let j = lane as i32 - b as i32;
                (j.max(0) as u32, j >= max_lane as i32)
            }
            ShflMode::Down => (lane + b, lane + b <= max_lane),
            ShflMode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
        };
        if ok {
            (j, true)
        } else {
            (lane, false)
        }
    }
}
