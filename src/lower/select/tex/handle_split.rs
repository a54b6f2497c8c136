//! Handles that differ within a quad: the per-quad split ptxas 11.8 wraps around a `.B`
//! texture instruction whose handle it cannot prove uniform.
//!
//! Why: the texture unit serves the four lanes of a quad (4q..4q+3) with one texture
//! header, so a `.B` fetch (`TEX.B`, `TEX.B.LL`, `TLD.B`, `TXD.B`, `TLD4.B`, `TXQ.B`) samples
//! one lane's texture for the whole quad (`sim::tex`'s "One handle per quad"). PTX gives
//! every thread its own handle, so where lanes of a quad may hold different handles ptxas
//! runs the fetch once per distinct handle of the quad. Probed (`ptxas -arch=sm_50`,
//! `cuobjdump -sass`; handles loaded from `hs[tid]`, `cvt` of `%tid`, a `selp`/phi of two
//! uniform handles on `%tid & 1`; the same for every `.B` form and every `txq`):
//!
//! ```text
//! SSY after                                 (ptxas hoists it; here it is the first piece)
//! SHFL.IDX PT, s, h, 0x0, 0x1c1f            s = the handle of quad lane 0
//! IADD RZ.CC, s, -h
//! BRA CC.EQ, fetch                          lanes holding lane 0's handle fetch first
//! SHFL.IDX PT, s, h, 0x1, 0x1c1f            (the rest: lane 1's handle, then lane 2's)
//! IADD RZ.CC, s, -h
//! BRA CC.EQ, fetch
//! SHFL.IDX PT, s, h, 0x2, 0x1c1f
//! IADD RZ.CC, s, -h
//! BRA CC.EQ, fetch
//! fetch: TEX.B ...                          falling through: lane 3 alone
//! SYNC
//! after:
//! ```
//!
//! `h` is the handle's low word (the one register the `.B` form reads; `TXD.B` and `TXQ.B`
//! take it in `ra`, the others in `rb`). A taken `BRA CC.EQ` runs its lanes to the fetch
//! and to `SYNC`, which resumes the lanes that did not branch at the next `SHFL`; the
//! `SHFL`s then read lanes that are parked (their registers still hold their handles,
//! which the simulator's `SHFL` models as ptxas relies on). Each run of the fetch has, in
//! every quad, only lanes with one handle. A uniform handle costs three instructions
//! (the first test succeeds everywhere) and a split nothing more.
//!
//! ptxas's uniformity rule, probed: no split for a handle from `ld.param`, from `ld.const`,
//! `ld.global` or `ld.shared` at a uniform address (including `%ctaid` arithmetic), for
//! arithmetic on uniform values, a phi of uniform values in a uniform loop, or a uniform
//! handle used inside a divergent branch; a split for a handle loaded at a `%tid`-dependent
//! address, computed from `%tid`, or chosen between uniform handles by a divergent `selp` or
//! branch. This is `reconverge::divergent_values` with loads at uniform addresses taken as
//! uniform. Surfaces (`SULD`/`SUST`/`SURED` of a handle in a register) get no split from
//! ptxas and none here.
//!
//! Shape: [`split_per_quad`] rewrites the one [`Sm50Inst`] holding the fetch, so the
//! allocator sees one instruction. The scratch `s` and every def are early (no def shares a
//! register with the handle, which parked lanes must keep for the later `SHFL`s); the
//! branches and the `SSY` name their targets by distance in pieces
//! ([`LOCAL_BRANCH`]), which `lower::emit` turns into instruction indices. Nothing is
//! inserted inside the sequence after selection: if-conversion takes no piece that is not
//! predicable (`SSY`, `SHFL`), and `reconverge` puts its own `SSY` before a block's closing
//! branches only, which start after the unguarded `SYNC`.
//!
//! [`LOCAL_BRANCH`]: crate::lower::inst::LOCAL_BRANCH

use crate::lower::inst::{Piece, RegRef, Sm50Inst, LOCAL_BRANCH};
use crate::machinst::{OpConstraint, OpKind, OpPos, VReg};
use crate::sm50::{self, Field, Form};

/// SHFL's `c` for a quad in ptxas's words: segment mask 0x1c, clamp 0x1f.
const QUAD: u64 = 0x1c1f;
/// The predicate register number of `PT`.
const PT: u64 = 7;
/// BRA's `CC.EQ` test.
const CC_EQ: u64 = 2;

/// The handle word a `.B` texture piece reads, when `p` is one.
fn handle_ref(p: &Piece) -> Option<RegRef> {
    let field = match p.inst.form {
        Form::TEX_B | Form::TLD_B | Form::TLD4_B => Field::Rb,
        Form::TXD_B | Form::TXQ_B => Field::Ra,
        _ => return None,
    };
    p.refs.iter().find(|r| r.field == field).copied()
}

/// Whether `i` holds a `.B` texture piece.
pub(in crate::lower::select) fn has_bindless_fetch(i: &Sm50Inst) -> bool {
    i.pieces.iter().any(|p| handle_ref(p).is_some())
}

/// `i` with its `.B` texture piece wrapped in the module essay's sequence, the scratch word
/// in `scratch` (a new 32-bit vreg). `i` unchanged when it holds no such piece.
pub(in crate::lower::select) fn split_per_quad(mut i: Sm50Inst, scratch: VReg) -> Sm50Inst {
    let Some((at, h)) = i
        .pieces
        .iter()
        .enumerate()
        .find_map(|(k, p)| handle_ref(p).map(|h| (k, h)))
    else {
        return i;
    };
    // Every def early: the handle must survive the fetch in the lanes that ran it.
    for op in i.ops.iter_mut() {
        if op.spec.kind == OpKind::Def {
            debug_assert_eq!(op.spec.constraint, OpConstraint::Reg, "a tied texture def");
            op.spec.pos = OpPos::Early;
        }
    }
    let s = i.def(scratch, true);
    let rest: Vec<Piece> = i.pieces.drain(at..).collect();
    // SSY (1) + 3 × (SHFL, IADD, BRA) + the fetch + SYNC: the fetch is piece 10 and the
    // reconvergence point piece 12 from the SSY.
    i.piece(local(Form::SSY, 12), &[]);
    for lane in 0..3u64 {
        let shfl = sm50::Inst::new(Form::SHFL_II)
            .with(Field::Mode, sm50::values::shfl::mode::IDX)
            .with(Field::B, lane)
            .with(Field::C, QUAD)
            .with(Field::Pd, PT);
        i.piece(shfl, &[(Field::Rd, s, 0), (Field::Ra, h.op, h.offset)]);
        let cmp = sm50::Inst::new(Form::IADD_R)
            .with(Field::Cc, 1)
            .with(Field::Negb, 1);
        i.piece(cmp, &[(Field::Ra, s, 0), (Field::Rb, h.op, h.offset)]);
        // From the BRA (piece 3 + 3 lane) to the fetch (piece 10).
        let bra = local(Form::BRA, 10 - (3 + 3 * lane)).with(Field::Cc, CC_EQ);
        i.piece(bra, &[]);
    }
    let mut rest = rest.into_iter();
    i.pieces.extend(rest.next());
    i.piece(sm50::Inst::new(Form::SYNC), &[]);
    i.pieces.extend(rest);
    i
}

/// A `BRA` or `SSY` to the piece `delta` pieces after it ([`LOCAL_BRANCH`]).
fn local(form: Form, delta: u64) -> sm50::Inst {
    sm50::Inst::new(form).with(Field::Rel, LOCAL_BRANCH | delta)
}

/// The pieces of `i` that [`split_per_quad`] adds, for tests: `SSY`, `SHFL`, `IADD`, `BRA`
/// and `SYNC` forms in order.
#[cfg(test)]
fn forms(i: &Sm50Inst) -> Vec<Form> {
    i.pieces.iter().map(|p| p.inst.form).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::inst::Role;
    use crate::machinst::RegKind;

    #[test]
    fn wraps_the_fetch_and_makes_every_def_early() {
        let vr = |index: u32, kind| VReg { index, kind };
        let mut i = Sm50Inst::new(Role::Plain);
        let d = i.def(vr(1, RegKind::B128), false);
        let a = i.use_(vr(2, RegKind::B64));
        let b = i.use_(vr(3, RegKind::B64));
        let tex = sm50::Inst::new(Form::TEX_B);
        i.piece(
            tex,
            &[(Field::Rd, d, 0), (Field::Ra, a, 0), (Field::Rb, b, 0)],
        );
        let out = split_per_quad(i, vr(4, RegKind::B32));
        use Form::*;
        let want = [
            SSY, SHFL_II, IADD_R, BRA, SHFL_II, IADD_R, BRA, SHFL_II, IADD_R, BRA, TEX_B, SYNC,
        ];
        assert_eq!(forms(&out).as_slice(), want);
        assert!(out
            .ops
            .iter()
            .filter(|o| o.spec.kind == OpKind::Def)
            .all(|o| o.spec.pos == OpPos::Early));
        // Every branch lands on the fetch, the SSY after the SYNC.
        for (k, p) in out.pieces.iter().enumerate() {
            if let Some(rel) = p.inst.get(Field::Rel) {
                let to = k as u64 + (rel & !LOCAL_BRANCH);
                let want = if p.inst.form == SSY { 12 } else { 10 };
                assert_eq!(to, want, "piece {k}");
            }
        }
        // The SHFLs and compares read the handle word (operand b, offset 0).
        let shfl_reads: Vec<_> = out
            .pieces
            .iter()
            .filter(|p| matches!(p.inst.form, SHFL_II | IADD_R))
            .map(|p| p.refs.iter().find(|r| r.op == b).map(|r| r.offset))
            .collect();
        assert!(shfl_reads.iter().all(|r| *r == Some(0)), "{shfl_reads:?}");
    }
}
