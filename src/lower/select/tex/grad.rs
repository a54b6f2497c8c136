//! `tex.grad` on 1d, 2d, a1d and a2d with float coordinates, with or without an offset
//! vector, as ptxas 11.8 writes it for sm_50 (probed with one PTX per form:
//! `scripts/tex_sweep.py`; `tests/compile_tex2.rs` checks the words against nvdisasm and
//! the texture lines against ptxas's):
//!
//! ```text
//! slot               TXD{.AOFFI}   rd.., {x[,y][,w]}, {dxx,dyx[,dxy,dyy]}, slot, dim, mask4
//! register handle    TXD.B{.AOFFI} rd.., {handle,x[,y][,w]}, {..}, 0x0, dim, mask4
//! ```
//!
//! In: the coordinate parts as `lower_tex_lod` builds them (the clamped layer first for the
//! arrays, 1d as 2d `{x, 0}`), the gradient operands (d/dx then d/dy, one per dimension each)
//! and the offset register (`.AOFFI`: 2d packed by `BFI 0x404`, 1d as it is). Out: the word
//! `w` and one `TXD`. Unlike `TEX`, `TXD` takes the layer *after* the coordinates; with
//! offsets, `w` is `BFI w, off, 0xc10, layer` (the layer, or RZ off arrays, in bits 0..15,
//! the offsets from bit 16); without, `w` is the layer alone (arrays only). The gradients are
//! `{dPdx.x, dPdy.x, dPdx.y, dPdy.y}` (zero y gradients for 1d as 2D; 1D and ARRAY_1D take the
//! first pair only).
//!
//! Integer coordinates (`tex.grad.<shape>.v4.<dtype>.s32`): ptxas 11.8 hands the integers'
//! bits to TXD unconverted, so the unit samples at the float whose bits they are (what
//! `ir::eval` models, `crate::ir::tex`); the words are the float forms', except that 1d
//! stays 1D: ra `{x}` (`.AOFFI`: `{x, BFI off, 0xc10, RZ}`), rb `{dPdx.x, dPdy.x}`.
//!
//! A depth reference on 1d (float coordinates): ptxas 11.8 drops it (TXD on 2D without
//! `.DC`, no diagnostic), and so does `ir::build` (never computed, as with ptxas). Not here:
//! a reference on the other shapes and 3d (ptxas emulates those gradients across the quad:
//! [`super::quad`]), cube (emulated too, with a projection: [`super::cube`]).

use super::{Lowerer, Part, TexSlot};
use crate::ir::Value;
use crate::lower::LowerError;
use crate::sm50::{self, Field, Form};

/// TXD's `dim` for 1D, ARRAY_1D and ARRAY_2D.
const DIM_1D: u64 = 0;
const DIM_ARRAY_1D: u64 = 1;
const DIM_ARRAY_2D: u64 = 3;

impl Lowerer<'_> {
    /// A gradient fetch (module essay): `dim` is TXD's target, `d` the shape's dimensions
    /// (1 or 2), `xy` the coordinate parts, `grads` the gradient operands, `off` the offset
    /// register.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_tex_grad(
        &mut self,
        results: &[Value],
        dim: u64,
        d: usize,
        handle: TexSlot,
        mut xy: Vec<Part>,
        grads: &[Value],
        off: Option<Part>,
    ) -> Result<(), LowerError> {
        let array = matches!(dim, DIM_ARRAY_1D | DIM_ARRAY_2D);
        let layer = if array { Some(xy.remove(0)) } else { None };
        // The gradient pairs TXD reads.
        let pairs = if matches!(dim, DIM_1D | DIM_ARRAY_1D) {
            1
        } else {
            2
        };
        // {dPdx.x, dPdy.x, dPdx.y, dPdy.y}: d/dx at grads[0..d], d/dy at grads[d..2d].
        let mut g = Vec::new();
        for k in 0..pairs {
            for dir in 0..2 {
                g.push(if k < d {
                    Part::At(self.reg(grads[dir * d + k])?)
                } else {
                    Part::Zero
                });
            }
        }
        // (rb before ra, as the 2d form was always built.)
        let rb = self.tex_vec(&g)?;
        let word = match (off, layer) {
            (Some(Part::At(o)), layer) => {
                let layer = match layer {
                    Some(Part::At(l)) => Some(l),
                    _ => None,
                };
                // 12 bits at bit 16.
                Some(Part::At(self.tex_bfi(o, 12 << 8 | 16, layer)))
            }
            (Some(Part::Zero), layer) => layer.or(Some(Part::Zero)),
            (None, layer) => layer,
        };
        xy.extend(word);
        if let TexSlot::Register(h) = handle {
            xy.insert(0, Part::At(self.reg(h)?));
        }
        let ra = self.tex_vec(&xy)?;
        let (comps, mask4) = self.tex_mask4(results);
        let form = match handle {
            TexSlot::Bound(_) => Form::TXD_I,
            TexSlot::Register(_) => Form::TXD_B,
        };
        let mut inst = sm50::Inst::new(form)
            .with(Field::Dim, dim)
            .with(Field::Mask, mask4)
            .with(Field::Aoffi, u64::from(off.is_some()));
        if let TexSlot::Bound(tid) = handle {
            inst.set(Field::Tid, tid);
        }
        self.tex_push(inst, results, &comps, false, ra, Some(rb));
        Ok(())
    }
}
