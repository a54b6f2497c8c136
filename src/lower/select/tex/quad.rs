//! `tex.grad` on the shapes Maxwell's `TXD` cannot take (3d, cube, acube, and 1d/2d/a1d/a2d
//! with a depth reference), emulated across each quad as ptxas 11.8 does for sm_50: by slot or
//! through a register handle, with or without offsets; 3d integer coordinates are taken as
//! the floats whose bits they are (ptxas 11.8 adds the gradients to the integers' bits with
//! `FSWZADD`, as `TXD` takes them for 1d/2d: `super::grad`).
//!
//! Why: the texture unit picks the level of detail from derivatives, and the only
//! derivatives it computes itself are the *implicit* ones: the differences of a coordinate
//! between the lanes of a quad (lanes 4q..4q+3 laid out as a 2x2 block, lane 1 the x
//! neighbour of lane 0 and lane 2 its y neighbour). `TXD` takes explicit gradients for 1D
//! and 2D only. For the other forms ptxas gives the quad coordinates whose differences *are*
//! the requested gradients, one lane at a time: in pass `l` (0..3) every lane of the quad
//! takes lane `l`'s coordinates `c` and gradients, and lane `k` of the quad then holds
//!
//! ```text
//! lane 0: c        lane 1: c + dPdx        lane 2: c + dPdy        lane 3: c + dPdx + dPdy
//! ```
//!
//! so the unit's differences at lane 0 are `(c + dPdx) - c` and `(c + dPdy) - c`, and lane
//! 0's sample is lane `l`'s result, which a shuffle and a lane-masked `MOV` hand to lane
//! `l`. Each pass runs between `SAM` (every lane of a quad with an active lane made active,
//! so the neighbours exist even where the quad is partly inactive) and `RAM` (the mask
//! restored). Per pass, as ptxas writes it (probed: `scripts/tex_sweep.py -k grad_quad -v`):
//!
//! ```text
//! SAM
//! SHFL.IDX PT, q.k, c_k, l, 0x1c03          every coordinate word (the layer first) of lane l
//! SHFL.IDX PT, g, dPdx_j, l, 0x1c03
//! FSWZADD.NDV q.j, g, q.j, ZPPPZPPP          lanes 1 and 3 add dPdx (ZP: rb alone)
//! SHFL.IDX PT, g, dPdy_j, l, 0x1c03
//! FSWZADD.NDV q.j, g, q.j, ZPZPPPPP          lanes 2 and 3 add dPdy
//! [SHFL.IDX PT, r.m, rb_m, l, 0x1c03]        rb's words {handle, offsets, ref}, each when
//!                                            present (a lone offset or ref: passes 1..3)
//! TEX{.B}{.AOFFI}{.DC}.NDV q, q, [rb|r], slot (0x0 for .B), dim, mask4
//! [SHFL.IDX PT, q.n, q.n, RZ, 0x1c03]        passes 1..3: lane 0's result to the quad
//! RAM
//! MOV d.n, q.n, 1<<l                         lane l of each quad keeps it
//! ```
//!
//! Differences from ptxas's words: ptxas keeps pass 0's layer where it already is and
//! fetches pass 0 straight into the destination; here every pass shuffles the layer and
//! fetches into the scratch quad `q` (the `MOV`s are the same count). The whole sequence is
//! one machine instruction (`Sm50Inst`): `d`, `q` and the scratch words are early defs, so
//! the allocator keeps them apart from the operands the later passes still read. `SAM`
//! and `RAM` are scheduling fences, so nothing moves into or out of a pass.
//!
//! The level of detail, as the simulator models it (`sim::tex`): `TEX.NDV` takes, per
//! lane, `dx = c[k|1] - c[k&~1]` and `dy = c[k|2] - c[k&~2]` in f32 and then the same
//! level computation as `TXD`'s explicit gradients ([`crate::texture::Lod::Grad`]). The
//! gradients lane 0 sees are therefore `fl(fl(c + dPdx) - fl(0 + c))`, not `dPdx` itself;
//! `ir::eval` samples these forms with exactly those rounded gradients
//! ([`crate::texture::quad_gradient`]) so that it equals the simulator. Whether the
//! hardware subtracts in f32 (and how it treats a lane whose sum overflowed) is not
//! knowable without a GPU; this is the documented model, not a measurement.
//!
//! The handle is shuffled in every pass, pass 0 included (as ptxas does), so that the four
//! lanes of a quad read one texture; a lone offset or reference is lane 0's own in pass 0;
//! several rb words go to one aligned scratch vector in every pass (by slot, pass 0 copies
//! lane 0's own words with `MOV`s where ptxas finds them already paired: either way ptxas's
//! count of `SHFL`s, which EIATTR_INT_WARP_WIDE_INSTR_OFFSETS lists).
//!
//! Cube and acube gradients (`super::cube`) take the same passes; after the `FSWZADD`s each
//! lane projects its perturbed direction as every cube fetch does (probed:
//! `tex.grad.cube`/`.acube`, with and without a reference, by slot and by handle):
//!
//! ```text
//! FMNMX g, |q.x|, |q.y|, !PT ; FMNMX h, g, |q.z|, !PT ; MUFU.RCP g, h
//! FMUL q.x, q.x, g ; FMUL q.y, q.y, g ; FMUL q.z, q.z, g
//! ```
//!
//! so the unit's differences are those of the projected directions
//! ([`crate::texture::quad_cube_gradient`] is the same arithmetic for `ir::eval`).

use super::{Lowerer, Part, TexSlot};
use crate::ir::Value;
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::mufu::Func;
use crate::sm50::values::fswzadd::op0::{PP, ZP};
use crate::sm50::{self, Field, Form};

/// SHFL's `c` for a quad: segment mask 0x1c (bits 8..12), clamp 3.
const QUAD: u64 = 0x1c03;
/// The predicate register number of `PT`.
const PT: u64 = 7;

/// What one emulated gradient fetch reads (module essay).
pub(super) struct QuadGrad<'a> {
    /// TEX's `dim`.
    pub dim: u64,
    /// The slot word, or the handle register (`TEX.B`, its word shuffled to the quad too).
    pub handle: TexSlot,
    /// TEX's coordinate words in order (the clamped layer first for the arrays).
    pub coords: Vec<Part>,
    /// Index in `coords` of the first float coordinate.
    pub first: usize,
    /// d/dx then d/dy, one per float coordinate each.
    pub grads: &'a [Value],
    /// The packed offsets (`.AOFFI`).
    pub off: Option<Part>,
    /// The depth reference.
    pub dref: Option<Part>,
    /// A cube direction (`coords[first..first + 3]`), projected in every lane.
    pub cube: bool,
}

impl Lowerer<'_> {
    /// The four passes of the module essay as one machine instruction.
    pub(super) fn lower_tex_grad_quad(
        &mut self,
        results: &[Value],
        g: QuadGrad<'_>,
    ) -> Result<(), LowerError> {
        let d_count = g.grads.len() / 2;
        let (comps, mask4) = self.tex_mask4(results);
        let mut i = Sm50Inst::new(Role::Plain);
        // Operands: the coordinate words, the gradients, the reference (uses); then the
        // result, the scratch quad, the gradient words and the shuffled reference (early defs).
        let mut coord_ops = Vec::new();
        for p in &g.coords {
            coord_ops.push(match *p {
                Part::At(l) => Some((i.use_(l.vreg), l.offset)),
                Part::Zero => None,
            });
        }
        let mut grad_ops = Vec::new();
        for &v in g.grads {
            let l = self.reg(v)?;
            grad_ops.push((i.use_(l.vreg), l.offset));
        }
        // rb's words in order: the handle, the offsets, the reference (each when present).
        let mut rb_parts = Vec::new();
        if let TexSlot::Register(h) = g.handle {
            rb_parts.push(Part::At(self.reg(h)?));
        }
        rb_parts.extend(g.off);
        rb_parts.extend(g.dref);
        let mut rb_ops = Vec::new();
        for p in &rb_parts {
            if let Part::At(l) = *p {
                rb_ops.push((i.use_(l.vreg), l.offset));
            }
        }
        // A lone offset or reference is lane 0's own in pass 0; a handle, or several
        // words (one aligned vector), are shuffled in every pass.
        let own_in_pass0 = rb_ops.len() == 1 && matches!(g.handle, TexSlot::Bound(_));
        let d = self.tex_dest(comps.len());
        let dop = i.def(d, true);
        let q = self.new_vreg(RegKind::B128);
        let qop = i.def(q, true);
        let gx = self.new_vreg(RegKind::B32);
        let gxop = i.def(gx, true);
        let gy = self.new_vreg(RegKind::B32);
        let gyop = i.def(gy, true);
        // The shuffled rb words.
        let rop = match rb_ops.len() {
            0 => 0,
            n => {
                let r = self.new_vreg(match n {
                    1 => RegKind::B32,
                    2 => RegKind::B64,
                    _ => RegKind::B128,
                });
                i.def(r, true)
            }
        };
        // Lane 0 as ptxas names it, `RZ` (SHFL's register-b form, the unset rb).
        let shfl = |lane: u64| {
            let i = if lane == 0 {
                sm50::Inst::new(Form::SHFL_RI)
            } else {
                sm50::Inst::new(Form::SHFL_II).with(Field::B, lane)
            };
            i.with(Field::Mode, sm50::values::shfl::mode::IDX)
                .with(Field::C, QUAD)
                .with(Field::Pd, PT)
        };
        let swz = |ops: [u64; 4]| {
            sm50::Inst::new(Form::FSWZADD)
                .with(Field::Op0, ops[0])
                .with(Field::Op1, ops[1])
                .with(Field::Op2, ops[2])
                .with(Field::Op3, ops[3])
                .with(Field::Ndv, 1)
        };
        for l in 0..4u64 {
            i.piece(sm50::Inst::new(Form::SAM), &[]);
            for (k, op) in coord_ops.iter().enumerate() {
                match *op {
                    Some((o, off)) => {
                        i.piece(shfl(l), &[(Field::Rd, qop, k as u8), (Field::Ra, o, off)])
                    }
                    // MOV q.k, RZ (1d as 2d: y = 0).
                    None => i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, qop, k as u8)]),
                }
            }
            for j in 0..d_count {
                let k = (g.first + j) as u8;
                for (dir, (sop, ops)) in [(gxop, [ZP, PP, ZP, PP]), (gyop, [ZP, ZP, PP, PP])]
                    .into_iter()
                    .enumerate()
                {
                    let (go, goff) = grad_ops[dir * d_count + j];
                    i.piece(shfl(l), &[(Field::Rd, sop, 0), (Field::Ra, go, goff)]);
                    i.piece(
                        swz(ops),
                        &[
                            (Field::Rd, qop, k),
                            (Field::Ra, sop, 0),
                            (Field::Rb, qop, k),
                        ],
                    );
                }
            }
            if g.cube {
                // The projection (module essay), gx and gy free again after the gradients.
                let f = g.first as u8;
                let max = |abs_a: u64| {
                    sm50::Inst::new(Form::FMNMX_R)
                        .with(Field::Absa, abs_a)
                        .with(Field::Absb, 1)
                        .with(Field::Paccn, 1)
                };
                let q_ = |k: u8| (Field::Rb, qop, f + k);
                i.piece(max(1), &[(Field::Rd, gxop, 0), (Field::Ra, qop, f), q_(1)]);
                i.piece(max(0), &[(Field::Rd, gyop, 0), (Field::Ra, gxop, 0), q_(2)]);
                let rcp = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rcp.code());
                i.piece(rcp, &[(Field::Rd, gxop, 0), (Field::Ra, gyop, 0)]);
                for k in f..f + 3 {
                    i.piece(
                        sm50::Inst::new(Form::FMUL_R),
                        &[
                            (Field::Rd, qop, k),
                            (Field::Ra, qop, k),
                            (Field::Rb, gxop, 0),
                        ],
                    );
                }
            }
            let mut refs = vec![(Field::Rd, qop, 0), (Field::Ra, qop, 0)];
            match rb_ops[..] {
                [] => {}
                // Lane 0 samples for itself: its own word.
                [(o, off)] if l == 0 && own_in_pass0 => refs.push((Field::Rb, o, off)),
                _ => {
                    // Pass 0 by slot: lane 0's own words (lanes 1..3's results are
                    // dropped), copied into the vector rather than shuffled, so that the
                    // SHFLs (EIATTR_INT_WARP_WIDE_INSTR_OFFSETS) are as many as ptxas's.
                    let own = l == 0 && matches!(g.handle, TexSlot::Bound(_));
                    for (k, &(o, off)) in rb_ops.iter().enumerate() {
                        if own {
                            let mov = sm50::Inst::new(Form::MOV_R);
                            i.piece(mov, &[(Field::Rd, rop, k as u8), (Field::Rb, o, off)]);
                        } else {
                            i.piece(shfl(l), &[(Field::Rd, rop, k as u8), (Field::Ra, o, off)]);
                        }
                    }
                    refs.push((Field::Rb, rop, 0));
                }
            }
            let tex = match g.handle {
                TexSlot::Bound(tid) => sm50::Inst::new(Form::TEX).with(Field::Tid, tid),
                TexSlot::Register(_) => sm50::Inst::new(Form::TEX_B),
            };
            let tex = tex
                .with(Field::Dim, g.dim)
                .with(Field::Mask, mask4)
                .with(Field::Lod, 0)
                .with(Field::Ndv, 1)
                .with(Field::Aoffi, u64::from(g.off.is_some()))
                .with(Field::Dc, u64::from(g.dref.is_some()));
            i.piece(tex, &refs);
            if l > 0 {
                for n in 0..comps.len() as u8 {
                    i.piece(shfl(0), &[(Field::Rd, qop, n), (Field::Ra, qop, n)]);
                }
            }
            i.piece(sm50::Inst::new(Form::RAM), &[]);
            for n in 0..comps.len() as u8 {
                let mov = sm50::Inst::new(Form::MOV_R).with(Field::Lm, 1 << l);
                i.piece(mov, &[(Field::Rd, dop, n), (Field::Rb, qop, n)]);
            }
        }
        self.push(i);
        self.tex_set_results(results, &comps, d);
        Ok(())
    }
}
