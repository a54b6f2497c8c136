//! `tex.1d` with a level, gradients, offsets or a depth reference through a (texture,
//! sampler) pair of `.texmode_independent`, as ptxas 11.8 writes it for sm_50 (probed with
//! one PTX per form; `tests/compile_sampler.rs` checks the words against nvdisasm and the
//! texture lines against ptxas's):
//!
//! ```text
//! .level / offsets / ref (f32)   TEX{.LL}{.AOFFI}{.DC} rd.., x, {lod, off, ref}, slot, 1D, mask4
//! .grad (f32)                    TXD{.AOFFI} rd.., x | {x, BFI off, 0xc10, RZ}, {dx, dy}, slot, 1D
//! s32 coordinates                as a bound .texref's (TLD/TXD on 1D: `fetch`, `grad`)
//! ```
//!
//! In: the IR's `TexOp::SampleLod` on `TexShape::D1` with a paired handle (its slot `tid`)
//! and its operands after the handle. Out: one texture instruction. Unlike a bound
//! `.texref`'s float 1d forms (read as 2D `{x, 0}`, `TEXS` where it fits), the pair stays
//! 1D, because the sampler's `addr_mode_1` would otherwise act on the made-up y; rb's parts
//! are in PTX's order, each when present (the offset as it is, not packed). Not here:
//! `tex.grad.1d` with a reference through a pair, which ptxas emulates across the quad
//! (SAM/RAM, FSWZADD.NDV, TEX.DC.NDV: refused by name) rather than dropping the reference as
//! it does for a bound `.texref` (`grad`).

use super::{LodDest, Lowerer, TexSlot};
use crate::ir::tex::{TexLod, TexOp, TexShape};
use crate::ir::Value;
use crate::lower::LowerError;
use crate::sm50::values::tex::dim;

impl Lowerer<'_> {
    /// A paired 1d fetch with options (module essay); `coords` are the operands after the
    /// handle.
    pub(super) fn lower_tex_lod_paired_1d(
        &mut self,
        results: &[Value],
        op: TexOp,
        tid: u64,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        let handle = TexSlot::Bound(tid);
        let TexOp::SampleLod {
            shape: TexShape::D1,
            int_coords: false,
            lod,
            offset,
            depth,
            ..
        } = op
        else {
            // Integer coordinates: 1D already, the bound forms.
            return self.lower_tex_lod(results, op, handle, false, coords);
        };
        let o = self.tex_lod_operands(TexShape::D1, offset, depth, coords)?;
        match lod {
            TexLod::Grad if depth => Err(self.unsupported(
                "tex.grad.1d with a depth reference through a texture and a sampler (ptxas \
                 11.8 emulates it across the quad: SAM/RAM, FSWZADD.NDV, TEX.DC.NDV)"
                    .to_string(),
            )),
            TexLod::Grad => self.lower_tex_grad(results, dim::V1D, 1, handle, o.xy, o.rest, o.off),
            TexLod::Base | TexLod::Level => {
                let (comps, mask4) = self.tex_mask4(results);
                let dest = LodDest {
                    results,
                    comps,
                    dim: dim::V1D,
                    mask4,
                };
                self.lower_tex_lod_general(&dest, handle, lod == TexLod::Level, false, o)
            }
        }
    }
}
