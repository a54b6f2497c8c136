//! The address slice of a kernel's SASS: which instructions compute memory addresses.
//!
//! In: decoded instructions in layout order and their branch targets (instruction indices),
//! as [`super::sched::model::decode_text`] gives them for any cubin, ours or ptxas's. Out: per
//! instruction, whether its result reaches the address of some memory access
//! ([`address_slice`]), and the count of those that are arithmetic
//! ([`address_slice_arith`]).
//!
//! `leafold compare`'s "address arithmetic" column counts instructions by opcode class (LEA,
//! ISCADD, IADD*, SHL/SHR/SHF, XMAD, MOV), whatever their results feed: a float slow path's
//! exponent arithmetic or an RNG's XMADs count as much as a pointer increment. The slice is
//! the exact reading of the words: an instruction belongs to it when one of its results
//! flows, through any chain of instructions, into
//! * the address register(s) of a load, store or atomic (`Ra`, and `Ra + 1` for `.E`
//!   64-bit addresses; `RZ` is no register), or
//! * the window predicate (`Plg`) that a generic `LD`/`ST` reads.
//!
//! The analysis is a backward walk over reaching definitions: from each such use, every
//! path back through the control-flow graph to the nearest instruction that writes the
//! register, a guarded write also letting the older value through. Each instruction found
//! joins the slice and its own sources (not its guard predicate, which chooses whether it runs
//! rather than what it computes) are followed in turn. The walk stops at instructions that
//! bring data into the integer arithmetic rather than compute on it: loads (a pointer read from
//! memory; the load's own address is a seed already), special registers, shuffles, votes,
//! textures, and floating point, conversions from float included (an index computed from a
//! float, as in a trig argument reduction, is data-dependent addressing, like an index loaded
//! from memory). They join the slice but are not counted.
//!
//! The graph is the one the machine runs ([`Graph::with_tokens`]): a node is an instruction
//! together with the CRS token stack it runs under. `SSY`, `PBK` and `CAL` push a token;
//! `SYNC`, `BRK` and `RET` go where the innermost token of their kind says. So a `SYNC`
//! reconverges at its own `SSY`'s target wherever the layout put it, and a subroutine called
//! from several places returns only to the call it came from. (The hazard checker's graph,
//! [`successors`], matches a `SYNC` to the innermost `SSY` before it whose target follows it,
//! and when there is none, to every `SSY` target; it returns from a `RET` after every call of
//! the subroutine. That is safe for hazards, but for dataflow it lets values from unrelated
//! code through: on MC-GPU's `track_particles` it pulled whole random-number generators into
//! the slice, on both compilers' code.) Code whose stack cannot be followed from the words
//! (indirect branches, a pop with no token, more than 2^20 nodes or 2^16 stacks) falls back to that graph.
//!
//! Guards are followed a little: a reader remembers its own guard as long as nothing writes
//! that predicate, and a write under the same guard hides the older value (`@P0 IADD.CC`
//! then `@P0 IADD.X`: when the `.X` runs, so did the write). Otherwise the walk is
//! path-insensitive: a guarded write lets the older value through whatever the guard of the
//! reader, so predicated code can pull in a little more than a path-sensitive analysis
//! would. Both compilers' code is measured alike, and `leafold verify --check-slice` (on in
//! tests/verify_corpus.rs for both) checks that every instruction a traced simulator run shows
//! flowing into an address is in the slice.
//!
//! Invariants: the walk visits each (node, register, guard) state at most once, so it ends in
//! time linear in nodes times registers (nodes are instructions times the token stacks each
//! runs under, one for most); the result does not depend on register
//! names, only on dataflow, so ours and ptxas's code are measured alike.
//! [`address_slice_arith`] counts slice members other than those sources: the integer
//! instructions that do arithmetic on the way to an address.

use super::crs::{self, Move};
use super::sched::model::successors;
use super::sched::{access, Res, NUM_RES, PRED};
use super::{Field, Flow, Inst, MemSpace};
use rustc_hash::{FxHashMap, FxHashSet};

/// What kind of memory access `inst` is: `None` for none; `Some(generic)` otherwise.
fn memory(inst: &Inst) -> Option<bool> {
    match inst.info().props.space {
        MemSpace::Generic => Some(true),
        MemSpace::Global | MemSpace::Local | MemSpace::Shared | MemSpace::Const => Some(false),
        MemSpace::Texture | MemSpace::Surface | MemSpace::None => None,
    }
}

/// The resources that give `inst`'s address: its address register(s) and, for a generic
/// access, its window predicate.
pub(crate) fn address_uses(inst: &Inst) -> Vec<Res> {
    let Some(generic) = memory(inst) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    if let Some(ra) = inst.get(Field::Ra) {
        if ra != 255 {
            v.push(ra as Res);
            if inst.get(Field::E) == Some(1) && ra < 254 {
                v.push(ra as Res + 1);
            }
        }
    }
    if generic {
        if let Some(p) = inst.get(Field::P) {
            if p != 7 {
                v.push(PRED + p as Res);
            }
        }
    }
    v
}

/// Whether `inst` brings data into the integer arithmetic rather than computing on it: a
/// memory access (a loaded pointer; a load's own address is a seed already), a special
/// register, another lane's value (`SHFL`, `VOTE`), a texture fetch, or floating point
/// (any float or double instruction, `MUFU`, and the conversions from float, `F2I`/`F2F`:
/// an index computed from a float, as in a trig reduction, is data-dependent addressing, like
/// an index loaded from memory). It joins the slice, but its sources are not followed and it
/// is not counted as address arithmetic.
pub fn is_source(inst: &Inst) -> bool {
    // The classes are those with `source=yes` in `isa/sm50.isa`.
    memory(inst).is_some() || inst.info().props.source
}

/// Per instruction, whether one of its results reaches a memory address (see the module
/// essay).
pub fn address_slice(insts: &[Inst], targets: &[Option<usize>]) -> Vec<bool> {
    let n = insts.len();
    let graph = Graph::with_tokens(insts, targets).unwrap_or_else(|| Graph::plain(insts, targets));
    let accesses: Vec<_> = insts.iter().map(access).collect();
    let guards: Vec<Guard> = insts.iter().map(guard_of).collect();
    let mut in_slice = vec![false; n];
    // Every state is wanted at most once; `expanded` holds the nodes whose instruction's
    // sources have been followed.
    let mut seen: FxHashSet<Want> = FxHashSet::default();
    let mut expanded = vec![false; graph.pos.len()];
    let mut work: Vec<Want> = Vec::new();
    let mut want = |w: Want, work: &mut Vec<Want>| {
        if w.res < NUM_RES && seen.insert(w) {
            work.push(w);
        }
    };
    for (node, &k) in graph.pos.iter().enumerate() {
        for res in address_uses(&insts[k]) {
            let guard = guards[k];
            want(Want { node, res, guard }, &mut work);
        }
    }
    while let Some(w) = work.pop() {
        for &node in &graph.preds[w.node] {
            let p = graph.pos[node];
            // The reader's guard still holds just before `p` unless `p` writes its predicate.
            let guard = match w.guard {
                Some((pred, _)) if accesses[p].defs.contains(&(PRED + pred as Res)) => None,
                g => g,
            };
            let older = Want {
                node,
                res: w.res,
                guard,
            };
            if !accesses[p].defs.contains(&w.res) {
                want(older, &mut work);
                continue;
            }
            in_slice[p] = true;
            if !is_source(&insts[p]) && !std::mem::replace(&mut expanded[node], true) {
                let own = guards[p].map(|(pred, _)| PRED + pred as Res);
                for &res in &accesses[p].uses {
                    if Some(res) != own {
                        let guard = guards[p];
                        want(Want { node, res, guard }, &mut work);
                    }
                }
            }
            // A guarded write lets the older value through, unless the reader runs under
            // the same guard: then whenever the reader runs, so did this write.
            if guards[p].is_some() && guard != guards[p] {
                want(older, &mut work);
            }
        }
    }
    in_slice
}

/// An instruction's guard: `None` when it always runs (`@PT`), else the predicate and
/// whether it is negated (`@!P0`; `@!PT`, which never runs, is predicate 7 negated).
type Guard = Option<(u8, bool)>;

fn guard_of(inst: &Inst) -> Guard {
    let pg = inst.get(Field::Pg).unwrap_or(7) as u8;
    let neg = inst.get(Field::Pgn).unwrap_or(0) == 1;
    (pg != 7 || neg).then_some((pg, neg))
}

/// One state of the backward walk: `res` is wanted just before the instruction of graph node
/// `node`, by a reader that runs only under `guard` (the guard of the instruction that reads
/// it, as long as no instruction in between writes that predicate).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Want {
    node: usize,
    res: Res,
    guard: Guard,
}

/// A token on the CRS stack: its kind and where the matching `SYNC`, `BRK` or `RET` goes.
type Token = (crs::Kind, u32);

/// The control-flow graph the walk follows. Nodes are instructions, each paired with the
/// CRS token stack it runs under ([`Graph::with_tokens`]); `pos` gives a node's instruction
/// and `preds` its predecessors.
struct Graph {
    pos: Vec<usize>,
    preds: Vec<Vec<usize>>,
}

/// More nodes or distinct stacks than these, or a deeper token stack, and
/// [`Graph::with_tokens`] gives up (bounding its memory on any input: at most
/// `MAX_STACKS * MAX_DEPTH` tokens are stored, twice).
const MAX_NODES: usize = 1 << 20;
const MAX_STACKS: usize = 1 << 16;
const MAX_DEPTH: usize = 32;

impl Graph {
    /// One node per instruction, the edges of [`successors`] (the hazard checker's graph):
    /// a `SYNC`/`BRK` goes to its textually enclosing `SSY`/`PBK` target, a `RET` after every
    /// call of its subroutine.
    fn plain(insts: &[Inst], targets: &[Option<usize>]) -> Graph {
        let succ = successors(insts, targets);
        let mut preds = vec![Vec::new(); insts.len()];
        for (k, s) in succ.iter().enumerate() {
            for &t in s {
                preds[t].push(k);
            }
        }
        Graph {
            pos: (0..insts.len()).collect(),
            preds,
        }
    }

    /// The graph the machine runs: a node is an instruction and the token stack it runs under,
    /// from the entry with an empty stack. `SSY`/`PBK`/`CAL` push, `SYNC`/`BRK`/`RET` go to the
    /// innermost token of their kind and pop it, so each reconverges where its own token says
    /// (whatever the layout) and each subroutine returns only to the call it came from. `None`
    /// when the words do not allow it (an indirect branch or call, a pop with no token, a
    /// branch out of the code, a stack deeper than [`MAX_DEPTH`], more than [`MAX_NODES`]
    /// nodes); the caller then takes [`Graph::plain`].
    fn with_tokens(insts: &[Inst], targets: &[Option<usize>]) -> Option<Graph> {
        let n = insts.len();
        if n == 0 {
            return None;
        }
        let mut stacks: Vec<Vec<Token>> = vec![Vec::new()];
        let mut stack_ids: FxHashMap<Vec<Token>, usize> = FxHashMap::default();
        stack_ids.insert(Vec::new(), 0);
        let mut nodes: FxHashMap<(usize, usize), usize> = FxHashMap::default();
        nodes.insert((0, 0), 0);
        let mut pos = vec![0];
        let mut stack_of = vec![0];
        let mut edges: Vec<(usize, usize)> = Vec::new();
        let mut work = vec![0];
        while let Some(node) = work.pop() {
            let k = pos[node];
            let stack = &stacks[stack_of[node]];
            let flow = insts[k].info().props.flow;
            let mut next: Vec<(usize, Vec<Token>)> = Vec::new();
            for m in crs::moves(insts, targets, k).ok()? {
                match m {
                    // A guarded `EXIT` or `BRA` may end the code; anything else falling off
                    // the end is not code the walk can follow.
                    Move::Go { to, .. } if to >= n => {
                        if !matches!(flow, Flow::Exit | Flow::Bra) {
                            return None;
                        }
                    }
                    Move::Go { to, .. } => next.push((to, stack.clone())),
                    Move::Push { to, kind, resume } => {
                        let mut s = stack.clone();
                        s.push((kind, resume as u32));
                        next.push((to, s));
                    }
                    Move::Pop(kind) => {
                        let at = stack.iter().rposition(|t| t.0 == kind)?;
                        next.push((stack[at].1 as usize, stack[..at].to_vec()));
                    }
                }
            }
            for (t, s) in next {
                if t >= n || s.len() > MAX_DEPTH {
                    return None;
                }
                let sid = match stack_ids.get(&s) {
                    Some(&id) => id,
                    None => {
                        if stacks.len() >= MAX_STACKS {
                            return None;
                        }
                        stacks.push(s.clone());
                        stack_ids.insert(s, stacks.len() - 1);
                        stacks.len() - 1
                    }
                };
                let to = match nodes.get(&(t, sid)) {
                    Some(&id) => id,
                    None => {
                        if pos.len() >= MAX_NODES {
                            return None;
                        }
                        pos.push(t);
                        stack_of.push(sid);
                        nodes.insert((t, sid), pos.len() - 1);
                        work.push(pos.len() - 1);
                        pos.len() - 1
                    }
                };
                edges.push((node, to));
            }
        }
        let mut preds = vec![Vec::new(); pos.len()];
        for (from, to) in edges {
            preds[to].push(from);
        }
        Some(Graph { pos, preds })
    }
}

/// How many instructions of the address slice do integer arithmetic: slice members other
/// than the sources where the walk stops (memory, special registers, floating point ...).
pub fn address_slice_arith(insts: &[Inst], targets: &[Option<usize>]) -> u32 {
    address_slice(insts, targets)
        .iter()
        .zip(insts)
        .filter(|(s, i)| **s && !is_source(i))
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm50::Form;

    fn r(form: Form, fields: &[(Field, u64)]) -> Inst {
        fields
            .iter()
            .fold(Inst::new(form), |i, &(f, v)| i.with(f, v))
    }

    /// The positions a slice marks.
    fn members(s: &[bool]) -> Vec<usize> {
        (0..s.len()).filter(|&k| s[k]).collect()
    }

    /// IADD R2 <- R0 (tid) + c; SHL R3 <- R2; LDS [R3]; an FADD on the loaded value and an
    /// unrelated IADD are not in the slice.
    #[test]
    fn follows_sources_of_an_address_only() {
        let insts = vec![
            r(Form::S2R, &[(Field::Rd, 0), (Field::Sr, 0x21)]),
            r(
                Form::IADD_C,
                &[(Field::Rd, 2), (Field::Ra, 0), (Field::Cbo, 2)],
            ),
            r(
                Form::SHL_I,
                &[(Field::Rd, 3), (Field::Ra, 2), (Field::ImmImm20s, 2)],
            ),
            r(
                Form::IADD_C,
                &[(Field::Rd, 5), (Field::Ra, 0), (Field::Cbo, 3)],
            ),
            r(Form::LDS, &[(Field::Rd, 4), (Field::Ra, 3)]),
            r(
                Form::FADD_R,
                &[(Field::Rd, 4), (Field::Ra, 4), (Field::Rb, 5)],
            ),
            r(Form::EXIT, &[]),
        ];
        let targets = vec![None; insts.len()];
        let s = address_slice(&insts, &targets);
        assert_eq!(s, [true, true, true, false, false, false, false]);
        assert_eq!(address_slice_arith(&insts, &targets), 2);
    }

    /// An index converted from a float is data: the F2I joins the slice and is not counted,
    /// the float arithmetic before it is not followed; the SHL after it is counted.
    #[test]
    fn floats_are_data() {
        let insts = vec![
            r(
                Form::FADD_R,
                &[(Field::Rd, 2), (Field::Ra, 0), (Field::Rb, 1)],
            ),
            r(Form::F2I_R, &[(Field::Rd, 3), (Field::Rb, 2)]),
            r(
                Form::SHL_I,
                &[(Field::Rd, 4), (Field::Ra, 3), (Field::ImmImm20s, 2)],
            ),
            r(Form::LDS, &[(Field::Rd, 5), (Field::Ra, 4)]),
            r(Form::EXIT, &[]),
        ];
        let targets = vec![None; insts.len()];
        let s = address_slice(&insts, &targets);
        assert_eq!(s, [false, true, true, false, false]);
        assert_eq!(address_slice_arith(&insts, &targets), 1);
    }

    /// A loop: R2 starts at 0 and is bumped by 4 each trip; the bump reaches the next trip's
    /// address through the back edge.
    #[test]
    fn back_edges_and_guarded_writes() {
        let insts = vec![
            r(Form::MOV32I, &[(Field::Rd, 2), (Field::Imm, 0)]),
            r(Form::LDS, &[(Field::Rd, 4), (Field::Ra, 2)]),
            r(
                Form::IADD32I,
                &[(Field::Rd, 2), (Field::Ra, 2), (Field::Imm, 4)],
            ),
            // @P0 MOV R2, R6: a guarded write lets the older value (the IADD's) through too.
            r(
                Form::MOV_R,
                &[(Field::Rd, 2), (Field::Rb, 6), (Field::Pg, 0)],
            ),
            r(Form::BRA, &[(Field::Pg, 1)]),
            r(Form::EXIT, &[]),
        ];
        let mut targets = vec![None; insts.len()];
        targets[4] = Some(1);
        let s = address_slice(&insts, &targets);
        assert_eq!(s, [true, false, true, true, false, false]);
    }

    /// A `SYNC` laid out after the code that follows its region reconverges at its own
    /// `SSY`'s target (4), not at a later region's (8). The textual rule (the innermost `SSY`
    /// before the `SYNC` whose target follows it) finds none for the `SYNC` at 12 and goes to
    /// every `SSY` target, so R5 from the out-of-line block (11) would reach the `LDS` at 8;
    /// on every real path R5 is set again at 5 first.
    #[test]
    fn sync_reconverges_at_its_own_token() {
        let insts = vec![
            /* 0 */ r(Form::SSY, &[]),
            /* 1 */ r(Form::BRA, &[(Field::Pg, 0)]),
            /* 2 */ r(Form::MOV32I, &[(Field::Rd, 2), (Field::Imm, 16)]),
            /* 3 */ r(Form::SYNC, &[]),
            /* 4 */ r(Form::LDS, &[(Field::Rd, 4), (Field::Ra, 2)]),
            /* 5 */ r(Form::MOV32I, &[(Field::Rd, 5), (Field::Imm, 0)]),
            /* 6 */ r(Form::SSY, &[]),
            /* 7 */ r(Form::SYNC, &[]),
            /* 8 */ r(Form::LDS, &[(Field::Rd, 4), (Field::Ra, 5)]),
            /* 9 */ r(Form::EXIT, &[]),
            // the other side of the branch at 1, placed last
            /* 10 */
            r(Form::MOV32I, &[(Field::Rd, 2), (Field::Imm, 32)]),
            /* 11 */
            r(
                Form::IADD32I,
                &[(Field::Rd, 5), (Field::Ra, 2), (Field::Imm, 8)],
            ),
            /* 12 */ r(Form::SYNC, &[]),
        ];
        let mut targets = vec![None; insts.len()];
        targets[0] = Some(4);
        targets[1] = Some(10);
        targets[6] = Some(8);
        assert_eq!(members(&address_slice(&insts, &targets)), [2, 5, 10]);
    }

    /// A subroutine called from two places returns to the call it came from: R2 is set to
    /// an address before the first call and to a counter before the second; only the first
    /// `MOV32I` reaches the `LDS` after the first call. Without call contexts the second one
    /// would reach it through the subroutine's `RET`.
    #[test]
    fn calls_return_to_their_own_caller() {
        let insts = vec![
            /* 0 */ r(Form::MOV32I, &[(Field::Rd, 2), (Field::Imm, 64)]),
            /* 1 */ r(Form::CAL, &[]),
            /* 2 */ r(Form::LDS, &[(Field::Rd, 4), (Field::Ra, 2)]),
            /* 3 */ r(Form::MOV32I, &[(Field::Rd, 2), (Field::Imm, 7)]),
            /* 4 */ r(Form::CAL, &[]),
            /* 5 */ r(Form::EXIT, &[]),
            // the subroutine: does not touch R2
            /* 6 */
            r(Form::MOV32I, &[(Field::Rd, 6), (Field::Imm, 1)]),
            /* 7 */ r(Form::RET, &[]),
        ];
        let mut targets = vec![None; insts.len()];
        targets[1] = Some(6);
        targets[4] = Some(6);
        assert_eq!(members(&address_slice(&insts, &targets)), [0]);
    }

    /// `@P0 IADD32I R2.CC` then `@P0 IADD.X R3`: the carry the `.X` reads is the one its own
    /// guard's write gave, never an older one (whenever the `.X` runs, so did the write), so
    /// the unrelated carry-out before them stays out of the slice.
    #[test]
    fn same_guard_writes_hide_older_values() {
        let insts = vec![
            /* 0 */
            r(
                Form::IADD32I,
                &[
                    (Field::Rd, 8),
                    (Field::Ra, 9),
                    (Field::Imm, 1),
                    (Field::Cc, 1),
                ],
            ),
            /* 1 */
            r(
                Form::IADD32I,
                &[
                    (Field::Rd, 2),
                    (Field::Ra, 2),
                    (Field::Imm, 4),
                    (Field::Cc, 1),
                    (Field::Pg, 0),
                ],
            ),
            /* 2 */
            r(
                Form::IADD_I,
                &[
                    (Field::Rd, 3),
                    (Field::Ra, 3),
                    (Field::X, 1),
                    (Field::Pg, 0),
                ],
            ),
            /* 3 */ r(Form::LDG, &[(Field::Rd, 4), (Field::Ra, 2), (Field::E, 1)]),
            /* 4 */ r(Form::EXIT, &[]),
        ];
        let targets = vec![None; insts.len()];
        assert_eq!(members(&address_slice(&insts, &targets)), [1, 2]);
    }

    /// Random control flow (branches, `SSY`/`SYNC`, `PBK`/`BRK`, `CAL`/`RET` with random
    /// targets, some out of range or missing) never panics and marks only instructions that
    /// write something; whatever the token walk cannot follow falls back to the plain graph.
    #[test]
    fn random_control_flow_is_handled() {
        let mut rng = crate::verify::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u64| rng.below(m);
        for _ in 0..300 {
            let n = 2 + next(40) as usize;
            let mut insts = Vec::new();
            let mut targets = Vec::new();
            for _ in 0..n {
                let (inst, t) = match next(10) {
                    0 => (r(Form::SSY, &[]), true),
                    1 => (r(Form::SYNC, &[(Field::Pg, next(8))]), false),
                    2 => (r(Form::BRA, &[(Field::Pg, next(8))]), true),
                    3 => (r(Form::CAL, &[]), true),
                    4 => (r(Form::RET, &[(Field::Pg, next(8))]), false),
                    5 => (r(Form::PBK, &[]), true),
                    6 => (
                        r(Form::LDS, &[(Field::Rd, next(4)), (Field::Ra, next(4))]),
                        false,
                    ),
                    7 => (r(Form::EXIT, &[(Field::Pg, next(8))]), false),
                    _ => (
                        r(
                            Form::IADD32I,
                            &[
                                (Field::Rd, next(4)),
                                (Field::Ra, next(4)),
                                (Field::Imm, 4),
                                (Field::Pg, next(8)),
                            ],
                        ),
                        false,
                    ),
                };
                insts.push(inst);
                targets.push(
                    t.then(|| next(n as u64 + 2) as usize)
                        .filter(|_| next(8) != 0),
                );
            }
            let s = address_slice(&insts, &targets);
            assert_eq!(s.len(), n);
            for (k, &m) in s.iter().enumerate() {
                assert!(!m || !access(&insts[k]).defs.is_empty(), "{k} marked");
            }
        }
    }
}
