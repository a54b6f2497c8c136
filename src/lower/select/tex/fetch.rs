//! `tex` with integer coordinates and a level and/or an offset vector (`TexOp::SampleLod`
//! with `int_coords`), as ptxas 11.8 writes it for sm_50 (probed with one PTX per form:
//! `scripts/tex_sweep.py`; `tests/compile_tex2.rs` checks the words against nvdisasm and the
//! texture lines against ptxas's):
//!
//! ```text
//! 2d, slot, offsets, no level   TLDS.LZ.AOFFI rd2, rd, {x,y}, off, slot, 2D, mask
//! otherwise, slot               TLD{.LZ|.LL}{.AOFFI}{.CL} rd.., {coords}, {lod,off}, slot, dim
//! register handle               TLD.B{.LZ|.LL}{.AOFFI}{.CL} rd.., {coords}, {handle,lod,off},
//!                                 0x0, dim
//! ```
//!
//! In: the lowered coordinate parts (the layer first for arrays, already clamped by
//! `I2I.U16.U32.SAT`; 1D is `x` alone, not TEX's `{x, 0}`), the level (`.level`) and the
//! packed offset register (`.AOFFI`; 4 bits each as `TEX.AOFFI`'s, a 1D offset as it is).
//! Out: one texture instruction. `rb` holds the parts that are present, in that order; with
//! neither a handle, a level nor offsets `rb` is RZ. `.CL` goes with `.LL` as ptxas sets it.
//! A depth reference with integer coordinates is refused by ptxas and by the builder.

use super::{Lowerer, Part, TexSlot};
use crate::ir::Value;
use crate::lower::LowerError;
use crate::sm50::Field;
use crate::sm50::{self, Form};

/// TLDS's `tgt` for 2D `.LZ.AOFFI`.
const TGT_2D_LZ_AOFFI: u64 = 4;

impl Lowerer<'_> {
    /// An integer-coordinate fetch (module essay): `dim` is TLD's target, `xy` the
    /// coordinate parts, `level` the explicit level, `off` the packed offsets.
    pub(super) fn lower_tex_fetch(
        &mut self,
        results: &[Value],
        dim: u64,
        handle: TexSlot,
        xy: &[Part],
        level: Option<Part>,
        off: Option<Part>,
    ) -> Result<(), LowerError> {
        let ra = self.tex_vec(xy)?;
        if let (TexSlot::Bound(tid), 2, None, Some(off)) = (handle, dim, level, off) {
            let rb = self.tex_vec(&[off])?;
            self.texs_push(Form::TLDS, tid, TGT_2D_LZ_AOFFI, results, ra, Some(rb));
            return Ok(());
        }
        let mut rb = Vec::new();
        if let TexSlot::Register(h) = handle {
            rb.push(Part::At(self.reg(h)?));
        }
        rb.extend(level);
        rb.extend(off);
        let rb = if rb.is_empty() {
            None
        } else {
            Some(self.tex_vec(&rb)?)
        };
        let (comps, mask4) = self.tex_mask4(results);
        let form = match handle {
            TexSlot::Bound(_) => Form::TLD_I,
            TexSlot::Register(_) => Form::TLD_B,
        };
        // lod 0 .LZ, 1 .LL; ptxas sets .CL with .LL.
        let ll = u64::from(level.is_some());
        let mut inst = sm50::Inst::new(form)
            .with(Field::Dim, dim)
            .with(Field::Mask, mask4)
            .with(Field::Lod, ll)
            .with(Field::Cl, ll)
            .with(Field::Aoffi, u64::from(off.is_some()));
        if let TexSlot::Bound(tid) = handle {
            inst.set(Field::Tid, tid);
        }
        self.tex_push(inst, results, &comps, false, ra, rb);
        Ok(())
    }
}
