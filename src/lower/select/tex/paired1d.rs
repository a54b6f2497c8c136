//! `tex.1d` with a level, gradients, offsets or a depth reference through a sampler of
//! `.texmode_independent`, a (texture, sampler) pair by slot or both handles in registers
//! (combined into one `.B` handle word), as ptxas 11.8 writes it for sm_50 (probed with one
//! PTX per form; `tests/compile_sampler.rs` and `tests/compile_sampler_reg.rs` check the
//! words against nvdisasm and the texture lines against ptxas's; `scripts/tex_sweep.py -H
//! pair`/`-H regpair`):
//!
//! ```text
//! .level / offsets / ref (f32)   TEX{.B}{.LL}{.AOFFI}{.DC} rd.., x, {[handle,] lod, off, ref},
//!                                  slot (0x0 for .B), 1D, mask4
//! .grad (f32)                    TXD{.B}{.AOFFI} rd.., x | {x, BFI off, 0xc10, RZ}, {dx, dy},
//!                                  slot, 1D
//! .grad and ref (f32)            four quad passes of TEX{.B}{.AOFFI}.DC.NDV ... 1D (`quad`)
//! s32 coordinates                as a bound .texref's (TLD/TXD on 1D: `fetch`, `grad`)
//! ```
//!
//! In: the IR's `TexOp::SampleLod` on `TexShape::D1` with a paired handle (its slot) or a
//! combined one (its register), and its operands after the handle. Out: the texture
//! instruction(s). Unlike a bound `.texref`'s float 1d forms (read as 2D `{x, 0}`, `TEXS`
//! where it fits), a sampled 1d stays 1D, because the sampler's `addr_mode_1` would
//! otherwise act on the made-up y; rb's parts are in PTX's order, each when present (the
//! offset as it is, not packed). `tex.grad.1d` with a reference is emulated across the
//! quad as 3d gradients are (`quad`: SAM/RAM, FSWZADD.NDV, TEX.DC.NDV on 1D `{x}`), where a
//! bound `.texref` or texture object drops the reference (`ir::build::tex`, `grad`).

use super::{quad, LodDest, Lowerer, TexSlot};
use crate::ir::tex::{TexLod, TexOp, TexShape};
use crate::ir::Value;
use crate::lower::LowerError;
use crate::sm50::values::tex::dim;

impl Lowerer<'_> {
    /// A 1d fetch with options through a sampler (module essay): `handle` is the pair's
    /// slot or the combined handle's register; `coords` are the operands after the handle.
    pub(super) fn lower_tex_lod_paired_1d(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: TexSlot,
        coords: &[Value],
    ) -> Result<(), LowerError> {
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
            TexLod::Grad if depth => {
                let g = quad::QuadGrad {
                    dim: dim::V1D,
                    handle,
                    first: 0,
                    coords: o.xy,
                    grads: &o.rest[..2],
                    off: o.off,
                    dref: o.dref,
                    cube: false,
                };
                self.lower_tex_grad_quad(results, g)
            }
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
