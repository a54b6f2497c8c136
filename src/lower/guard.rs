//! Guarded writes for selects: `SEL d, a, b, P` where one arm is computed for the select
//! alone becomes that arm's instruction under `P`, writing into the other arm's register.
//!
//! In: the [`VCode`] selection produced (virtual registers, SSA), after
//! [`super::predicate`]'s early if-conversion. Out: the same function with fewer `SEL`s.
//!
//! PTX predicates single instructions (`@!p not.b32 %r, %r;`, CUB's match-any and radix
//! ranking do it in inline assembly), and the front end, which keeps SSA, turns each into a
//! select between the old value and the new one. Selected as written that is two
//! instructions, `LOP32I.XOR t, r, 0xffffffff ; SEL d, r, t, P`; ptxas keeps the guard:
//! `@!P LOP.PASS_B R9, RZ, ~R9`, one. Here, for a 32-bit `SEL` or a 64-bit pair of them
//! (unguarded, both arms in registers), when an arm `x`:
//! * is defined in the `SEL`'s block by one plain instruction of one piece with one late def
//!   (no other def, no predicate or carry-flag write or read), which is predicable, touches
//!   no memory, has no clobbers, is unguarded and may be moved (no fence: not a clock read);
//! * is read by nothing but this `SEL`;
//!
//! and the other arm `y` dies at the `SEL` (it is defined in the block, by an instruction or
//! as a parameter, and read nowhere after the `SEL` nor passed to a successor), the defining
//! instruction moves to the `SEL`'s place, takes the `SEL`'s def, gets the guard under which
//! the `SEL` picks `x`, and its def is *tied* to `y` (a reuse constraint, as
//! [`super::predicate`] ties join values), so lanes that skip it keep `y`. The `SEL` goes.
//!
//! Exactness: in lanes where the guard holds, `d` is what the instruction computes from its
//! sources, which are SSA values, so the same at the `SEL` as where it stood (nothing
//! between can change them: no memory, no flag, no clock); in the other lanes the guarded-off
//! write leaves the register as it was, which the tie makes `y`'s. `x` had no other reader.
//!
//! Trade-off: one instruction less per select, and `x`'s register is never live on its own.
//! The moved instruction's sources live up to the `SEL` instead of to their old place, which
//! can lengthen a live range by the instructions in between. Requiring `y` to die at the
//! `SEL` keeps the tie free: were `y` still live, the allocator would copy it into `d`
//! first, which costs the instruction the rule saves. A guarded write also depends on the
//! register's previous value (the scheduler orders it after `y`'s producer), which a `SEL`
//! did too.

use rustc_hash::FxHashMap as HashMap;

use super::inst::{Role, Sm50Inst};
use super::predicate;
use crate::machinst::{BlockData, MachInst, OpKind, OpSpec, Reg, RegKind, VCode, VReg};
use crate::sm50::{Fence, Field, Form, MemSpace};

/// Rewrite every `SEL` the module essay describes.
pub(super) fn guard_selects(vcode: VCode<Sm50Inst>) -> Result<VCode<Sm50Inst>, String> {
    let (mut blocks, vregs) = vcode.into_blocks();
    // Readers of each value in the whole function (successor arguments included).
    let mut reads: HashMap<VReg, u32> = HashMap::default();
    for b in &blocks {
        for i in &b.insts {
            i.for_each_operand(&mut |r, spec| {
                if let (Reg::Virt(v), OpKind::Use) = (r, spec.kind) {
                    *reads.entry(v).or_default() += 1;
                }
            });
        }
        for (_, args) in &b.succs {
            for &v in args {
                *reads.entry(v).or_default() += 1;
            }
        }
    }
    let mut changed = false;
    for b in &mut blocks {
        changed |= guard_block(b, &reads);
    }
    if changed {
        VCode::from_blocks(blocks, vregs)
    } else {
        VCode::from_blocks_trusted(blocks, vregs)
    }
}

/// One block: find the candidates first (positions do not move while looking), then apply
/// them. Returns whether anything changed.
fn guard_block(b: &mut BlockData<Sm50Inst>, reads: &HashMap<VReg, u32>) -> bool {
    let mut def_at: HashMap<VReg, usize> = HashMap::default();
    // Per value read in this block: the position of its last reader, and how many read it.
    let mut last_read: HashMap<VReg, usize> = HashMap::default();
    let mut local_reads: HashMap<VReg, u32> = HashMap::default();
    for (k, i) in b.insts.iter().enumerate() {
        i.for_each_operand(&mut |r, spec| {
            if let Reg::Virt(v) = r {
                match spec.kind {
                    OpKind::Def => {
                        def_at.insert(v, k);
                    }
                    OpKind::Use => {
                        last_read.insert(v, k);
                        *local_reads.entry(v).or_default() += 1;
                    }
                }
            }
        });
    }
    let mut plans = Vec::new();
    // An instruction moves at most once, and a moved one is not another plan's `SEL`.
    let mut taken = vec![false; b.insts.len()];
    for (s, sel) in b.insts.iter().enumerate() {
        let Some(arms) = sel_arms(sel) else {
            continue;
        };
        for (x, y, x_is_ra) in [(arms.a, arms.b, true), (arms.b, arms.a, false)] {
            let Some(&j) = def_at.get(&x) else {
                continue;
            };
            let y_local = def_at.get(&y).is_some_and(|&k| k < s) || b.params.contains(&y);
            // Every reader of `y` is in this block, the last one the `SEL` (a value defined
            // here may also be read in the blocks it dominates; `reads` counts successor
            // arguments, `local_reads` does not).
            let y_dies =
                y_local && last_read.get(&y) == Some(&s) && local_reads.get(&y) == reads.get(&y);
            if j < s
                && !taken[j]
                && !taken[s]
                && x != y
                && reads.get(&x) == Some(&1)
                && y_dies
                && movable(&b.insts[j], x)
            {
                taken[j] = true;
                taken[s] = true;
                // The `SEL` picks `a` where `P` (negated by `Psn`) holds: guard an `Ra` arm
                // by that, an `Rb` arm by its negation.
                let neg = arms.p_neg == x_is_ra;
                plans.push(Plan {
                    def: j,
                    sel: s,
                    d: arms.d,
                    x,
                    y,
                    p: arms.p,
                    neg,
                });
                break;
            }
        }
    }
    // Each moved instruction replaces its `SEL` in place (no position shifts); the
    // definitions it came from are removed afterwards, from the highest position down.
    let mut removals = Vec::with_capacity(plans.len());
    for plan in &plans {
        let mut i = b.insts[plan.def].clone();
        i.visit_operands(&mut |r, spec| {
            if spec.kind == OpKind::Def && *r == Reg::Virt(plan.x) {
                *r = Reg::Virt(plan.d);
            }
        });
        predicate::guard(&mut i, plan.p, plan.neg);
        predicate::tie(&mut i, plan.y);
        i.srcloc = b.insts[plan.sel].srcloc;
        b.insts[plan.sel] = i;
        removals.push(plan.def);
    }
    removals.sort_unstable_by(|a, b| b.cmp(a));
    let changed = !removals.is_empty();
    for k in removals {
        b.insts.remove(k);
    }
    changed
}

struct Plan {
    def: usize,
    sel: usize,
    d: VReg,
    x: VReg,
    y: VReg,
    p: VReg,
    neg: bool,
}

/// A `SEL d, a, b, P` of two registers, 32-bit (one piece) or 64-bit (one piece per word,
/// word `w` of each pair in piece `w`): its values and `Psn`.
struct Arms {
    d: VReg,
    a: VReg,
    b: VReg,
    p: VReg,
    p_neg: bool,
}

fn sel_arms(i: &Sm50Inst) -> Option<Arms> {
    let (kind, def) = match i.pieces.len() {
        1 => (RegKind::B32, OpSpec::def()),
        2 => (RegKind::B64, OpSpec::early_def()),
        _ => return None,
    };
    if i.role != Role::Plain {
        return None;
    }
    let first = &i.pieces[0].inst;
    let (psn, mut arms) = (first.get(Field::Psn), None);
    for (w, piece) in i.pieces.iter().enumerate() {
        let inst = &piece.inst;
        if inst.form != Form::SEL_R
            || inst.get(Field::Pg) != Some(7)
            || inst.get(Field::Pgn) != Some(0)
            || inst.get(Field::Psn) != psn
        {
            return None;
        }
        let field = |f: Field, kind: RegKind, spec: OpSpec, offset: u8| -> Option<VReg> {
            let mut refs = piece.refs.iter().filter(|r| r.field == f);
            let (Some(r), None) = (refs.next(), refs.next()) else {
                return None;
            };
            let op = i.ops.get(usize::from(r.op))?;
            match op.reg {
                Reg::Virt(v) if r.offset == offset && v.kind == kind && op.spec == spec => Some(v),
                _ => None,
            }
        };
        let w = w as u8;
        let these = Arms {
            d: field(Field::Rd, kind, def, w)?,
            a: field(Field::Ra, kind, OpSpec::use_(), w)?,
            b: field(Field::Rb, kind, OpSpec::use_(), w)?,
            p: field(Field::Ps, RegKind::Pred, OpSpec::use_(), 0)?,
            p_neg: psn == Some(1),
        };
        match &arms {
            None => arms = Some(these),
            Some(a) if (a.d, a.a, a.b, a.p) == (these.d, these.a, these.b, these.p) => {}
            Some(_) => return None,
        }
    }
    arms
}

/// Whether `i`, the definition of `x`, may move down to a `SEL` and run there under a
/// guard (the conditions of the module essay): what early if-conversion may guard and tie
/// ([`predicate::convertible`], [`predicate::tieable`]: one plain piece, unguarded, no
/// clobbers, one late def), and nothing that depends on where it runs: no memory, no
/// relocation, no carry flag, no clock read.
fn movable(i: &Sm50Inst, x: VReg) -> bool {
    let [piece] = i.pieces.as_slice() else {
        return false;
    };
    let props = piece.inst.info().props;
    let t = piece.inst.timing();
    predicate::convertible(i)
        && predicate::tieable(i, x)
        && piece.reloc.is_none()
        && props.space == MemSpace::None
        && props.fence == Fence::No
        && !t.writes_cc
        && !t.reads_cc
}
