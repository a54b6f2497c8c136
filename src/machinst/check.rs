//! A checker of the final register assignment: which value each physical register holds.
//!
//! In: the allocated function as a list of [`Op`]s per block (recorded by `alloc` while it
//! writes the physical code: every instruction with the vreg and physical register of each
//! operand, every move, spill and reload it inserted), the CFG with each edge's block
//! arguments and the successor's parameters. Out: `Ok(())`, or an error naming the first use
//! that reads a register not holding the value the instruction expects.
//!
//! The abstract state maps every 32-bit location (R0..R254, and every 4-byte word of the spill
//! area) to the set of values it is known to hold on *every* path reaching the point, a value
//! being one 32-bit word of one vreg (`(vreg, word)`): a pair or a quad is tracked word by
//! word, so writing R5 removes word 1 of a pair at R4 and a use of the pair then fails.
//! * An instruction first has its uses checked (each word of each use must be in its register),
//!   then writes: clobbered registers hold nothing, each def's vreg leaves every location (a
//!   new value of it, e.g. the next iteration of a loop) and its registers hold its words. An
//!   ISA register copy makes its destination hold what the source held plus the new vreg (the
//!   allocator may give both the same register and drop the copy).
//! * An early def may not overlap a use of its instruction, nor a late use a def, nor any def
//!   a use it does not cover exactly (the instruction, maybe several SASS pieces writing one
//!   word at a time, would read a register it has already overwritten).
//! * A move, spill or reload copies the source's sets to the destination.
//! * On an edge, each parameter of the successor leaves every location and then joins each
//!   location holding the corresponding argument; at a block with several predecessors the
//!   sets are intersected. The states are iterated to a fixed point, then every use is checked.
//!
//! This is the same model as regalloc2's checker, but over physical registers with aliasing
//! widths, after `assign` has coloured regalloc2's names: it checks the colouring, the edits'
//! translation and the packing together.

use super::VReg;

/// One operand of an instruction, as placed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Operand {
    pub vreg: u32,
    /// First physical register.
    pub reg: u8,
    /// How many registers it covers (1 for one half of a pair).
    pub words: u8,
    /// Which word of the value is in `reg` (1 for the high half of a pair, else 0).
    pub first_word: u8,
    /// Early def, or late use.
    pub odd_pos: bool,
}

/// One step of the final code.
#[derive(Clone, Debug)]
pub(super) enum Op {
    Inst {
        /// Index of the instruction in its final block (for messages).
        at: usize,
        uses: Vec<Operand>,
        defs: Vec<Operand>,
        clobbers: &'static [super::PhysReg],
        /// A register copy: `defs[0]` gets what `uses[0]` holds, from its word `copy_word` on
        /// (a 32-bit copy of a pair's high word: 1).
        copy: bool,
        copy_word: u8,
        /// `(def vreg, use vreg, word)`: the instruction copies the use into that word of the
        /// def, one piece per word ([`super::MachInst::pack_words`]): the use may sit exactly
        /// on that word (the piece copies it onto itself).
        packs: smallvec::SmallVec<[(u32, u32, u8); 4]>,
    },
    Move {
        from: u8,
        to: u8,
        words: u8,
    },
    Spill {
        from: u8,
        slot: u32,
        words: u8,
    },
    Reload {
        to: u8,
        slot: u32,
        words: u8,
    },
}

type Val = (u32, u8);
type State = Vec<Vec<Val>>;

const GPRS: usize = 255;

fn clear_vreg(state: &mut State, v: u32) {
    for loc in state.iter_mut() {
        loc.retain(|(x, _)| *x != v);
    }
}

fn loc_ok(state: &State, r: usize) -> bool {
    r < state.len()
}

/// Apply `op` to `state`; with `check`, report the first wrong read.
fn step(state: &mut State, op: &Op, check: bool) -> Result<(), String> {
    match op {
        Op::Inst {
            at,
            uses,
            defs,
            clobbers,
            copy,
            copy_word,
            packs,
        } => {
            if check {
                for u in uses {
                    for k in 0..u.words {
                        let r = u.reg as usize + k as usize;
                        let want = (u.vreg, u.first_word + k);
                        if !loc_ok(state, r) || !state[r].contains(&want) {
                            let held: Vec<String> = state
                                .get(r)
                                .map(|s| s.iter().map(|(v, w)| format!("%{v}.{w}")).collect())
                                .unwrap_or_default();
                            return Err(format!(
                                "instruction {at}: R{r} should hold word {} of vreg {} but holds {{{}}}",
                                want.1,
                                want.0,
                                held.join(", ")
                            ));
                        }
                    }
                }
                let overlap =
                    |a: &Operand, b: &Operand| a.reg < b.reg + b.words && b.reg < a.reg + a.words;
                for d in defs {
                    for u in uses {
                        // (an instruction of several pieces writes and reads word by word:
                        // only a def exactly on a use may share its registers)
                        let partial = d.reg != u.reg || d.words != u.words;
                        let on_its_word = u.words == 1
                            && packs.iter().any(|&(dv, uv, w)| {
                                dv == d.vreg && uv == u.vreg && u.reg == d.reg + w
                            });
                        if (d.odd_pos || u.odd_pos || partial)
                            && overlap(d, u)
                            && !(*copy)
                            && !on_its_word
                        {
                            return Err(format!(
                                "instruction {at}: def of vreg {} in R{} overwrites R{} before vreg {} is read there",
                                d.vreg, d.reg, u.reg, u.vreg
                            ));
                        }
                    }
                }
            }
            let copied: Vec<Vec<Val>> = match (copy, uses.first()) {
                (true, Some(u)) => (*copy_word..u.words)
                    .map(|k| {
                        state
                            .get(u.reg as usize + k as usize)
                            .cloned()
                            .unwrap_or_default()
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for c in clobbers.iter() {
                if let Some(loc) = state.get_mut(c.0 as usize) {
                    loc.clear();
                }
            }
            for d in defs {
                clear_vreg(state, d.vreg);
            }
            for (j, d) in defs.iter().enumerate() {
                for k in 0..d.words {
                    let r = d.reg as usize + k as usize;
                    if let Some(loc) = state.get_mut(r) {
                        loc.clear();
                        if *copy && j == 0 {
                            if let Some(c) = copied.get(k as usize) {
                                loc.extend(c.iter().copied());
                            }
                        }
                        loc.push((d.vreg, d.first_word + k));
                    }
                }
            }
        }
        Op::Move { from, to, words } => {
            copy_words(state, *from as usize, *to as usize, *words);
        }
        Op::Spill { from, slot, words } => {
            copy_words(state, *from as usize, GPRS + *slot as usize, *words);
        }
        Op::Reload { to, slot, words } => {
            copy_words(state, GPRS + *slot as usize, *to as usize, *words);
        }
    }
    Ok(())
}

fn copy_words(state: &mut State, from: usize, to: usize, words: u8) {
    let vals: Vec<Vec<Val>> = (0..words as usize)
        .map(|k| state.get(from + k).cloned().unwrap_or_default())
        .collect();
    for (k, v) in vals.into_iter().enumerate() {
        if let Some(loc) = state.get_mut(to + k) {
            *loc = v;
        }
    }
}

/// The state on entry to a successor, from the state at the end of its predecessor.
fn across_edge(state: &State, args: &[VReg], params: &[VReg]) -> State {
    let mut out = state.clone();
    for p in params {
        clear_vreg(&mut out, p.index);
    }
    for (a, p) in args.iter().zip(params) {
        for (loc, old) in out.iter_mut().zip(state) {
            for &(v, w) in old {
                if v == a.index {
                    loc.push((p.index, w));
                }
            }
        }
    }
    out
}

fn meet(into: &mut State, other: &State) -> bool {
    let mut changed = false;
    for (a, b) in into.iter_mut().zip(other) {
        let before = a.len();
        a.retain(|x| b.contains(x));
        changed |= a.len() != before;
    }
    changed
}

/// Check `blocks` (see the module essay); `succs[b]` lists `(target, args)`, `params[t]` the
/// target's parameters; `spill_words` is the size of the spill area in 4-byte words.
pub(super) fn check(
    blocks: &[Vec<Op>],
    succs: &[Vec<(super::BlockId, Vec<VReg>)>],
    params: &[Vec<VReg>],
    spill_words: usize,
) -> Result<(), String> {
    let n = blocks.len();
    let mut entry: Vec<Option<State>> = vec![None; n];
    if n == 0 {
        return Ok(());
    }
    entry[0] = Some(vec![Vec::new(); GPRS + spill_words]);
    let mut work: Vec<usize> = vec![0];
    let mut queued = vec![false; n];
    queued[0] = true;
    while let Some(b) = work.pop() {
        queued[b] = false;
        let Some(mut state) = entry[b].clone() else {
            continue;
        };
        for op in &blocks[b] {
            step(&mut state, op, false)?;
        }
        for (t, args) in &succs[b] {
            let t = t.0 as usize;
            let incoming = across_edge(&state, args, &params[t]);
            let changed = match &mut entry[t] {
                None => {
                    entry[t] = Some(incoming);
                    true
                }
                Some(cur) => meet(cur, &incoming),
            };
            if changed && !queued[t] {
                queued[t] = true;
                work.push(t);
            }
        }
    }
    for b in 0..n {
        let Some(mut state) = entry[b].clone() else {
            continue;
        };
        for op in &blocks[b] {
            step(&mut state, op, true).map_err(|e| format!("block {b}, {e}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opnd(vreg: u32, reg: u8, words: u8) -> Operand {
        Operand {
            vreg,
            reg,
            words,
            first_word: 0,
            odd_pos: false,
        }
    }

    fn inst(uses: Vec<Operand>, defs: Vec<Operand>) -> Op {
        Op::Inst {
            at: 0,
            uses,
            defs,
            clobbers: &[],
            copy: false,
            copy_word: 0,
            packs: Default::default(),
        }
    }

    /// A pair at R4:R5, then a scalar written to R5, then a read of the pair: caught; the
    /// same with the scalar in R6 passes.
    #[test]
    fn a_scalar_over_a_pair_is_caught() {
        for (r, bad) in [(5u8, true), (6, false)] {
            let ops = vec![
                inst(vec![], vec![opnd(0, 4, 2)]),
                inst(vec![], vec![opnd(1, r, 1)]),
                inst(vec![opnd(0, 4, 2), opnd(1, r, 1)], vec![]),
            ];
            let res = check(&[ops], &[Vec::new()], &[Vec::new()], 0);
            assert_eq!(res.is_err(), bad, "{res:?}");
        }
    }

    /// A value stored and reloaded elsewhere is still that value; a reload into the register
    /// of another live value overwrites it.
    #[test]
    fn spills_and_reloads_carry_values() {
        let ops = vec![
            inst(vec![], vec![opnd(0, 0, 1)]),
            inst(vec![], vec![opnd(1, 2, 1)]),
            Op::Spill {
                from: 0,
                slot: 0,
                words: 1,
            },
            Op::Reload {
                to: 3,
                slot: 0,
                words: 1,
            },
            inst(vec![opnd(0, 3, 1), opnd(1, 2, 1)], vec![]),
        ];
        assert!(check(std::slice::from_ref(&ops), &[Vec::new()], &[Vec::new()], 1).is_ok());
        let mut bad = ops;
        bad[3] = Op::Reload {
            to: 2,
            slot: 0,
            words: 1,
        };
        bad[4] = inst(vec![opnd(0, 2, 1), opnd(1, 2, 1)], vec![]);
        assert!(check(&[bad], &[Vec::new()], &[Vec::new()], 1).is_err());
    }
}
