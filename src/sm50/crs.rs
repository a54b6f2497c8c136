//! The call/return/sync (CRS) stack a kernel needs: `EIATTR_CRS_STACK_SIZE`.
//!
//! In: a kernel's final `.text` words (control words included), as the cubin writer gets them,
//! or decoded instructions with their branch targets ([`super::sched::model::decode_text`]).
//! Out: the most stack *units* (16 bytes each) any path can hold by ptxas 11.8's accounting
//! (below), and that many bytes for the record (`None` when no path pushes anything: ptxas
//! then writes no record).
//! Code whose stack use cannot be bounded from the words alone (`BRX`, `PRET`, a
//! `SYNC`/`BRK`/`RET` with nothing to pop, a branch out of the code, recursion) is an error,
//! never a guess.
//!
//! # The machine (sm50-isa.md, `sim`'s essay)
//!
//! `SSY`, `PBK` and `CAL` push a token on the warp's stack; `SYNC`, `BRK` and `RET` end at
//! the innermost token of their kind, and at its target the stack is what it was before the
//! push. A branch whose guard splits the active lanes pushes the lanes that wait (a *divergence
//! entry*) and runs the others; the entry is popped when the running lanes leave (`SYNC`,
//! `BRK`, `RET`, `EXIT`). Every divergence entry holds at least one lane that no other entry
//! holds and at least one lane keeps running, so a warp never holds more than 31 of them, however
//! often a loop diverges. The driver sizes each warp's CRS memory by `EIATTR_CRS_STACK_SIZE`;
//! too little is a "hardware stack error" at run time.
//!
//! # ptxas's accounting, measured
//!
//! Over the kernels ptxas 11.8 compiles from tests/data/corpus/ptx and the probe kernels of
//! tests/data/crs/probes.ptx (nested divergent `if`s of depth 1..6, loops with uniform and
//! divergent trip counts and a `break`, `div.rn.f32` alone, in an `if`, in a uniform and a
//! divergent loop), the value is 16 bytes times the largest, over all paths, of:
//!
//! | on the path                                                 | units       |
//! |-------------------------------------------------------------|-------------|
//! | each open `SSY`                                             | 1           |
//! | each open `PBK`                                             | 2           |
//! | each open `CAL`                                             | 1           |
//! | each guarded `BRA` taken, guarded `SYNC`/`BRK` not taken    | 1 (a split) |
//! | splits, however many (a loop that diverges again and again) | at most 32  |
//! | some split while no `SSY`/`PBK` is open                     | 1 more      |
//!
//! Splits made inside a token's region are gone once its `SYNC`/`BRK`/`RET` is passed. A
//! guarded `RET` or `EXIT` is no split (the lanes that run on need no entry). The probes
//! (ptxas's record; this rule on ptxas's code; our record, tests/crs_oracle.rs):
//!
//! | probe                     | ptxas's SASS                                  | ptxas | rule  | ours  |
//! |---------------------------|-----------------------------------------------|-------|-------|-------|
//! | nest1, nest2              | one `SSY` region, `@P SYNC`                   | 0x20  | 0x20  | -, 0x20 |
//! | nest3 .. nest6            | `SSY` regions nested 2 .. 5 deep              | 0x40 .. 0xa0 (0x20 a level) | same | same |
//! | loop_div, _join, loop_break | `SSY` around a loop with a guarded back edge | 0x210 | 0x210 | 0x210 |
//! | loop_uni                  | uniform loop, no `SSY`                        | -     | 0x210 | 0x210 |
//! | loop_uni_if               | uniform loop around an `SSY` region           | 0x20  | 0x210 | 0x210 |
//! | fdiv                      | one `CAL` (slow path, guarded `BRA`s in it)   | 0x10  | 0x40  | 0x30  |
//! | fdiv_if                   | `SSY` region holding the `CAL`                | 0x30  | 0x50  | 0x50  |
//! | fdiv_loop                 | same in a uniform loop, callee with 2 `PBK`   | 0x90  | 0x260 | 0x220 |
//! | fdiv_loopdiv              | same in a divergent loop                      | 0x220 | 0x270 | 0x230 |
//!
//! Over the corpus (tests/crs_oracle.rs, which states the current counts) the rule on
//! ptxas's code gives ptxas's value for most kernels, more for some, less for very few, and
//! refuses indirect calls and branches (`BRX`/`PRET`). More: ptxas knows which branches are warp-uniform (a loop over a kernel
//! parameter gets no record at all) and does not count the splits inside its called
//! subroutines; the words say neither, so every guarded branch counts here. Less: sdk2.2
//! volumeRender `d_render` (ptxas 0x220, rule 0x210: an `SSY` around a diverging loop after a
//! guarded `EXIT`, calls elsewhere), whose extra unit is not explained. By the machine model
//! above the rule bounds the real stack from above (a warp holds at most 31 divergence
//! entries, 32 are counted), so being above ptxas costs memory only: 0x210 bytes per warp.
//!
//! # The walk
//!
//! A worklist over states (control transfer, open tokens with the split count when each was
//! pushed, splits now); other instructions change nothing, so a path skips to the next control
//! transfer. States with the same instruction and tokens join by the larger split counts;
//! counts saturate at 32 and a state is revisited only when one grows, so loops terminate; a
//! stack deeper than [`MAX_TOKENS`] (only recursion makes one) is an error. The walk is a small
//! share of compile time (`--time-passes`, "other").

use super::sched::model::{decode_text, may_skip};
use super::{Flow, Inst};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::hash_map::Entry;

/// Bytes per stack unit in `EIATTR_CRS_STACK_SIZE`.
pub const UNIT_BYTES: u32 = 16;
/// Splits counted at most (ptxas reserves this many units for a loop that keeps diverging).
pub const MAX_SPLITS: u32 = 32;
/// Open tokens a path may hold before the walk gives up: far beyond any real nesting (a
/// kernel of 80 nested divergent `if`s holds 80, and compiles), so only recursion, whose
/// stack has no bound, reaches it.
pub const MAX_TOKENS: usize = 4096;
/// States visited before the walk gives up.
const MAX_STATES: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Ssy,
    Pbk,
    Cal,
}

impl Kind {
    fn units(self) -> u32 {
        match self {
            Kind::Ssy | Kind::Cal => 1,
            Kind::Pbk => 2,
        }
    }
}

/// An open token: its kind, where its pop resumes, and the splits when it was pushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Token {
    kind: Kind,
    resume: usize,
    splits: u32,
}

/// How one instruction moves a warp along and changes its tokens (the machine of the module
/// essay): what this module's walk follows, and `sm50::slice`'s dataflow graph too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    /// Go on at `to` with the same tokens. `split`: the lanes that go there left others
    /// behind (a guarded branch taken; a guarded `SYNC`/`BRK` not taken).
    Go { to: usize, split: bool },
    /// Push a token of `kind` that resumes at `resume`, and go on at `to`.
    Push {
        to: usize,
        kind: Kind,
        resume: usize,
    },
    /// End at the innermost token of `kind`: go on where it resumes, with the tokens below it.
    Pop(Kind),
}

/// The moves of instruction `k` (branch targets as instruction indices). A fall-through may
/// be `insts.len()` (off the end); a branch out of the code or indirect control flow is an
/// error.
pub(crate) fn moves(
    insts: &[Inst],
    targets: &[Option<usize>],
    k: usize,
) -> Result<SmallVec<[Move; 2]>, String> {
    let n = insts.len();
    let target = || -> Result<usize, String> {
        targets
            .get(k)
            .copied()
            .flatten()
            .filter(|&t| t < n)
            .ok_or_else(|| format!("instruction {k} branches out of the code"))
    };
    let g = may_skip(&insts[k]);
    let go = |to: usize, split: bool| Move::Go { to, split };
    let mut v = SmallVec::new();
    let info = insts[k].info();
    match info.props.flow {
        f @ (Flow::Ssy | Flow::Pbk) => {
            let kind = if f == Flow::Ssy { Kind::Ssy } else { Kind::Pbk };
            v.push(Move::Push {
                to: k + 1,
                kind,
                resume: target()?,
            });
        }
        Flow::Cal => v.push(Move::Push {
            to: target()?,
            kind: Kind::Cal,
            resume: k + 1,
        }),
        f @ (Flow::Sync | Flow::Brk | Flow::Ret) => {
            v.push(Move::Pop(match f {
                Flow::Sync => Kind::Ssy,
                Flow::Brk => Kind::Pbk,
                _ => Kind::Cal,
            }));
            if g {
                v.push(go(k + 1, f != Flow::Ret));
            }
        }
        Flow::Exit => {
            if g {
                v.push(go(k + 1, false));
            }
        }
        Flow::Bra => {
            let t = target()?;
            if g {
                v.push(go(k + 1, false));
                v.push(go(t, true));
            } else {
                v.push(go(t, false));
            }
        }
        Flow::Brx | Flow::Pret => {
            return Err(format!(
                "{} at instruction {k}: the CRS stack of indirect control flow is not bounded here",
                info.class
            ));
        }
        // A call of a system function (the loader resolves its target): ptxas 11.8 writes no
        // CRS record for a kernel whose only call is one (its stack is the driver's).
        Flow::Jcal => v.push(go(k + 1, false)),
        Flow::Other => v.push(go(k + 1, false)),
    }
    Ok(v)
}

/// The units of the deepest path through `insts` (from index 0) with branch targets
/// `targets` (instruction indices, as [`decode_text`] gives them).
pub fn max_units(insts: &[Inst], targets: &[Option<usize>]) -> Result<u32, String> {
    let n = insts.len();
    // Only control transfers change the state: a walk that reaches any other instruction
    // goes on at the next control transfer after it (or off the end, `n`).
    let mut next_control = vec![n; n + 1];
    for k in (0..n).rev() {
        next_control[k] = if insts[k].info().props.flow != Flow::Other {
            k
        } else {
            next_control[k + 1]
        };
    }
    // Per instruction and token skeleton (kinds and resume points), the most splits seen at
    // each token's push and now. Every count only ever grows (bounded by MAX_SPLITS), and the
    // cost of a path is monotone in each, so joining by the element-wise maximum is safe and
    // makes the walk terminate.
    type Skeleton = Vec<(Kind, usize)>;
    let mut seen: FxHashMap<(usize, Skeleton), Vec<u32>> = FxHashMap::default();
    let mut work: Vec<(usize, Vec<Token>, u32)> = vec![(0, Vec::new(), 0)];
    let mut best = 0;
    while let Some((k, mut stack, mut splits)) = work.pop() {
        let k = next_control[k.min(n)];
        if k >= n {
            // Running off the end (only reachable in code without a final EXIT).
            continue;
        }
        if seen.len() > MAX_STATES {
            return Err("too many control-flow states to bound the CRS stack".into());
        }
        if stack.len() > MAX_TOKENS {
            return Err(format!(
                "more than {MAX_TOKENS} open SSY/PBK/CAL tokens (recursion?)"
            ));
        }
        let skeleton: Skeleton = stack.iter().map(|t| (t.kind, t.resume)).collect();
        let counts = stack.iter().map(|t| t.splits).chain([splits]);
        // (The key moves into the map and the join happens in place: no copy of the
        // skeleton for the lookup, no joined vector to compare with the old one.)
        match seen.entry((k, skeleton)) {
            Entry::Occupied(mut e) => {
                let old = e.get_mut();
                let mut grew = false;
                for (a, b) in old.iter_mut().zip(counts) {
                    if b > *a {
                        *a = b;
                        grew = true;
                    }
                }
                if !grew {
                    continue;
                }
                for (t, &c) in stack.iter_mut().zip(old.iter()) {
                    t.splits = c;
                }
                splits = old[old.len() - 1];
            }
            Entry::Vacant(e) => {
                e.insert(counts.collect());
            }
        }
        let tokens: u32 = stack.iter().map(|t| t.kind.units()).sum();
        let unscoped = splits > 0 && !stack.iter().any(|t| t.kind != Kind::Cal);
        best = best.max(tokens + splits + u32::from(unscoped));
        let split = (splits + 1).min(MAX_SPLITS);
        let mut moves = moves(insts, targets, k)?.into_iter().peekable();
        while let Some(m) = moves.next() {
            // The last move takes the token stack over; the others copy it.
            let tokens = if moves.peek().is_some() {
                stack.clone()
            } else {
                std::mem::take(&mut stack)
            };
            match m {
                Move::Go { to, split: s } => {
                    work.push((to, tokens, if s { split } else { splits }))
                }
                Move::Push { to, kind, resume } => {
                    let mut tokens = tokens;
                    tokens.push(Token {
                        kind,
                        resume,
                        splits,
                    });
                    work.push((to, tokens, splits));
                }
                Move::Pop(kind) => {
                    let Some(j) = tokens.iter().rposition(|t| t.kind == kind) else {
                        return Err(format!(
                            "{} at instruction {k} has no open token to end",
                            insts[k].info().class
                        ));
                    };
                    let t = tokens[j];
                    work.push((t.resume, tokens[..j].to_vec(), t.splits));
                }
            }
        }
    }
    Ok(best)
}

/// `EIATTR_CRS_STACK_SIZE` for a kernel's `.text` words: `None` when no path pushes anything
/// (ptxas writes no record then).
pub fn stack_size(code: &[u64]) -> Result<Option<u32>, String> {
    let (insts, _, targets) = decode_text(code).map_err(|e| format!("undecodable code: {e}"))?;
    record(&insts, &targets)
}

/// [`stack_size`] for code already decoded (instructions and branch targets as indices, as
/// the layout stage has them): the compile driver's entry, which need not decode its own
/// words again.
pub fn record(insts: &[Inst], targets: &[Option<usize>]) -> Result<Option<u32>, String> {
    let units = max_units(insts, targets)?;
    Ok((units > 0).then_some(units * UNIT_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm50::Field;
    use crate::sm50::Form;

    /// A tiny assembler for the cases below: instructions by class, targets by index.
    enum Op {
        Plain,
        Ssy(usize),
        Pbk(usize),
        Cal(usize),
        Bra(usize),
        GBra(usize),
        Sync,
        GSync,
        Brk,
        GBrk,
        Ret,
        GRet,
        Exit,
        GExit,
    }

    fn build(ops: &[Op]) -> (Vec<Inst>, Vec<Option<usize>>) {
        let guard = |i: Inst| i.with(Field::Pg, 0);
        ops.iter()
            .map(|op| match *op {
                Op::Plain => (Inst::new(Form::NOP), None),
                Op::Ssy(t) => (Inst::new(Form::SSY), Some(t)),
                Op::Pbk(t) => (Inst::new(Form::PBK), Some(t)),
                Op::Cal(t) => (Inst::new(Form::CAL), Some(t)),
                Op::Bra(t) => (Inst::new(Form::BRA), Some(t)),
                Op::GBra(t) => (guard(Inst::new(Form::BRA)), Some(t)),
                Op::Sync => (Inst::new(Form::SYNC), None),
                Op::GSync => (guard(Inst::new(Form::SYNC)), None),
                Op::Brk => (Inst::new(Form::BRK), None),
                Op::GBrk => (guard(Inst::new(Form::BRK)), None),
                Op::Ret => (Inst::new(Form::RET), None),
                Op::GRet => (guard(Inst::new(Form::RET)), None),
                Op::Exit => (Inst::new(Form::EXIT), None),
                Op::GExit => (guard(Inst::new(Form::EXIT)), None),
            })
            .unzip()
    }

    fn units(ops: &[Op]) -> Result<u32, String> {
        let (i, t) = build(ops);
        max_units(&i, &t)
    }

    #[test]
    fn straight_code_needs_nothing() {
        assert_eq!(units(&[Op::Plain, Op::GExit, Op::Plain, Op::Exit]), Ok(0));
    }

    #[test]
    fn nested_ssy_regions_count_token_and_split_per_level() {
        use Op::*;
        // SSY 5 { @P SYNC; x; SYNC } 5: EXIT — one level.
        assert_eq!(units(&[Ssy(4), GSync, Plain, Sync, Exit]), Ok(2));
        // Three levels (ptxas's nest3 layout): each region's SYNC falls into the enclosing
        // region's target, which ends that region in turn.
        let three = [
            Ssy(9),
            GSync,
            Ssy(8),
            GSync,
            Ssy(7),
            GSync,
            Sync, // ends the inner region: on at 7
            Sync, // 7: ends the middle one: on at 8
            Sync, // 8: ends the outer one: on at 9
            Exit, // 9
        ];
        assert_eq!(units(&three), Ok(6));
    }

    #[test]
    fn a_split_outside_any_region_counts_one_more() {
        use Op::*;
        // @P BRA 3; x; EXIT; y; EXIT (barrier-deadlock's deadlock_two: ptxas 0x20).
        assert_eq!(units(&[GBra(3), Plain, Exit, Plain, Exit]), Ok(2));
        // An unguarded branch is no split.
        assert_eq!(units(&[Bra(2), Plain, Plain, Exit]), Ok(0));
    }

    #[test]
    fn a_diverging_loop_saturates() {
        use Op::*;
        // SSY 4; loop: x; @P BRA 1; SYNC; 4: EXIT (matrixMul: ptxas 0x210).
        assert_eq!(
            units(&[Ssy(4), Plain, GBra(1), Sync, Exit]),
            Ok(1 + MAX_SPLITS)
        );
        // The same loop without a region (SobelCopyImage: ptxas 0x210).
        assert_eq!(units(&[Plain, GBra(0), Exit]), Ok(MAX_SPLITS + 1));
        // Splits inside a region are gone after its SYNC: a loop region, then a plain one.
        let after = [Ssy(4), Plain, GBra(1), Sync, Ssy(7), GSync, Sync, Exit];
        assert_eq!(units(&after), Ok(1 + MAX_SPLITS));
    }

    #[test]
    fn break_regions_and_calls() {
        use Op::*;
        // PBK 4; @P BRK; x; BRK; 4: EXIT.
        assert_eq!(units(&[Pbk(4), GBrk, Plain, Brk, Exit]), Ok(3));
        // CAL 2; EXIT; 2: @P RET; x; RET (the fdiv slow path: ptxas 0x10).
        assert_eq!(units(&[Cal(2), Exit, GRet, Plain, Ret]), Ok(1));
        // SSY, a split, a call inside, two nested PBK and a split in the callee: 1 + 1 + 1 +
        // 2 + 2 + 1 (ptxas's fdiv callee in a loop has one split more: 0x90).
        let nested = [
            Ssy(4),
            GSync,
            Cal(5),
            Sync,
            Exit,
            Pbk(11), // 5: callee
            Pbk(10),
            GBrk,
            Plain,
            Brk,
            Brk, // 10
            Ret, // 11
        ];
        assert_eq!(units(&nested), Ok(8));
    }

    #[test]
    fn unbounded_or_unmatched_code_is_an_error() {
        use Op::*;
        // SYNC without SSY.
        assert!(units(&[Plain, Sync, Exit]).is_err());
        // Recursion: CAL 1; 1: CAL 1 ...
        assert!(units(&[Cal(1), Cal(1), Ret]).is_err());
        // A branch out of the code.
        assert!(units(&[Bra(9), Exit]).is_err());
    }

    #[test]
    fn stack_size_writes_bytes_or_nothing() {
        use crate::sm50::encode;
        // Bundles of a control word (its value does not matter here) and three instructions.
        let words = |insts: &[Inst]| -> Vec<u64> {
            let mut v = Vec::new();
            for chunk in insts.chunks(3) {
                let mut w = [Inst::new(Form::NOP); 3];
                w[..chunk.len()].copy_from_slice(chunk);
                v.push(0);
                v.extend(w.iter().map(encode));
            }
            v
        };
        let exit = Inst::new(Form::EXIT);
        assert_eq!(stack_size(&words(&[exit])), Ok(None));
        // @P0 EXIT; @P0 BRA 0x28 (at 0x10: rel 0x10, to instruction 3); EXIT; EXIT.
        let bra = Inst::new(Form::BRA)
            .with(Field::Pg, 0)
            .with(Field::Rel, 0x10);
        let code = words(&[exit.with(Field::Pg, 0), bra, exit, exit]);
        assert_eq!(stack_size(&code), Ok(Some(2 * UNIT_BYTES)));
    }
}
