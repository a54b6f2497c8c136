//! The address slice of a kernel's SASS: which instructions compute memory addresses.
//!
//! In: decoded instructions in layout order and their branch targets (instruction indices),
//! as [`super::sched::check::decode_text`] gives them for any cubin, ours or ptxas's. Out: per
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
//! path back through the control-flow graph ([`super::sched::check::successors`], the same
//! graph the hazard checker walks) to the nearest instruction that writes the register, a
//! guarded write also letting the older value through. Each instruction found joins the
//! slice and its own sources (not its guard predicate, which chooses whether it runs rather
//! than what it computes) are followed in turn. The walk stops at instructions that bring
//! data into the integer arithmetic rather than compute on it: loads (a pointer read from
//! memory; the load's own address is a seed already), special registers, shuffles, votes,
//! textures, and floating point, conversions from float included (an index computed from a
//! float, as in a trig argument reduction, is data-dependent addressing, like an index loaded
//! from memory). They join the slice but are not counted.
//!
//! The walk is path-insensitive: a guarded write lets the older value through whatever the
//! guard of the reader, so predicated code (ours after if-conversion, ptxas's) can pull in a
//! little more than a path-sensitive analysis would. Both compilers' code is measured alike.
//!
//! Invariants: the walk visits each (position, register) pair at most once, so it ends in
//! time linear in instructions times registers; the result does not depend on register
//! names, only on dataflow, so ours and ptxas's code are measured alike.
//! [`address_slice_arith`] counts slice members other than those sources: the integer
//! instructions that do arithmetic on the way to an address.

use super::sched::check::successors;
use super::sched::{access, Res, NUM_RES, PRED};
use super::{Field, Inst};

/// What kind of memory access `inst` is: `None` for none; `Some(generic)` otherwise.
fn memory(inst: &Inst) -> Option<bool> {
    match inst.info().class {
        "LD" | "ST" => Some(true),
        "LDG" | "STG" | "LDS" | "STS" | "LDL" | "STL" | "LDC" | "ATOM" | "ATOM_CAS" | "ATOMS"
        | "ATOMS_CAS" | "RED" => Some(false),
        _ => None,
    }
}

/// The resources that give `inst`'s address: its address register(s) and, for a generic
/// access, its window predicate.
fn address_uses(inst: &Inst) -> Vec<Res> {
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
fn is_source(inst: &Inst) -> bool {
    memory(inst).is_some()
        || matches!(
            inst.info().class,
            "S2R"
                | "CS2R"
                | "SHFL"
                | "VOTE"
                | "TEX"
                | "TEXS"
                | "TLDS"
                | "FADD"
                | "FMUL"
                | "FFMA"
                | "FADD32I"
                | "FMUL32I"
                | "FFMA32I"
                | "FSETP"
                | "FSET"
                | "FCMP"
                | "FMNMX"
                | "MUFU"
                | "RRO"
                | "FCHK"
                | "FCHK_I"
                | "DADD"
                | "DMUL"
                | "DFMA"
                | "DSETP"
                | "DSET"
                | "DMNMX"
                | "I2F"
                | "F2I"
                | "F2F"
        )
}

/// Per instruction, whether one of its results reaches a memory address (see the module
/// essay).
pub fn address_slice(insts: &[Inst], targets: &[Option<usize>]) -> Vec<bool> {
    let n = insts.len();
    let succ = successors(insts, targets);
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, s) in succ.iter().enumerate() {
        for &t in s {
            preds[t].push(k);
        }
    }
    let accesses: Vec<_> = insts.iter().map(access).collect();
    let guarded = |k: usize| {
        let i = &insts[k];
        !(i.get(Field::Pg).unwrap_or(7) == 7 && i.get(Field::Pgn).unwrap_or(0) == 0)
    };
    let guard = |k: usize| -> Option<Res> {
        let pg = insts[k].get(Field::Pg)?;
        (pg != 7).then_some(PRED + pg as Res)
    };
    let mut in_slice = vec![false; n];
    // `seen[k * NUM_RES + r]`: resource `r` is already wanted just before instruction `k`.
    let mut seen = vec![false; n * NUM_RES];
    let mut work: Vec<(usize, Res)> = Vec::new();
    let mut want = |k: usize, r: Res, work: &mut Vec<(usize, Res)>| {
        if r < NUM_RES && !std::mem::replace(&mut seen[k * NUM_RES + r], true) {
            work.push((k, r));
        }
    };
    for (k, inst) in insts.iter().enumerate() {
        for r in address_uses(inst) {
            want(k, r, &mut work);
        }
    }
    while let Some((k, r)) = work.pop() {
        for &p in &preds[k] {
            if accesses[p].defs.contains(&r) {
                if !in_slice[p] {
                    in_slice[p] = true;
                    if !is_source(&insts[p]) {
                        let g = guard(p);
                        for &u in &accesses[p].uses {
                            if Some(u) != g {
                                want(p, u, &mut work);
                            }
                        }
                    }
                }
                if guarded(p) {
                    want(p, r, &mut work);
                }
            } else {
                want(p, r, &mut work);
            }
        }
    }
    in_slice
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
}
