//! `tex.2dms` and `tex.a2dms` (`TexOp::SampleMs`) as ptxas 11.8 writes them for sm_50
//! (probed with one PTX per form, `scripts/tex_sweep.py -k ms`):
//!
//! ```text
//! 2dms, slot              TLDS.LZ.MS rd2, rd, {x,y}, sample, slot, 2D, mask
//! a2dms, slot             TLD.LZ.MS rd.., {layer,x,y}, sample, slot, ARRAY_2D, mask4
//! register handle         TLD.B.LZ.MS rd.., {x,y} or {layer,x,y}, {handle,sample}, 0x0,
//!                           2D or ARRAY_2D, mask4
//! ```
//!
//! In: the operands of `SampleMs` (sample, layer for `a2dms`, x, y) and where the texture
//! comes from (a slot word: a bound `.texref`, a `.texref`/`.samplerref` pair or a texture
//! object parameter; or a handle register). The layer is clamped by `I2I.U16.U32.SAT` as
//! for every array fetch; the sample index goes to the instruction unchanged (ptxas neither
//! clamps nor masks it). Out: one texture instruction, its results variable-latency.

use super::{Lowerer, Part, TexSlot};
use crate::ir::Value;
use crate::lower::LowerError;
use crate::sm50::values::tlds;
use crate::sm50::{self, Field, Form};

/// TLD's `dim` of a 2D and of a 2D array texture.
const DIM_2D: u64 = 2;
const DIM_ARRAY_2D: u64 = 3;

impl Lowerer<'_> {
    /// A multisample fetch (module essay); `coords` are `SampleMs`'s operands after the
    /// handle.
    pub(super) fn lower_tex_ms(
        &mut self,
        results: &[Value],
        array: bool,
        handle: TexSlot,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        let at = |s: &mut Self, v: Value| s.reg(v).map(Part::At);
        let sample = at(self, coords[0])?;
        let mut xy = Vec::new();
        if array {
            xy.push(Part::At(self.tex_layer(coords[1])?));
        }
        let first = 1 + usize::from(array);
        xy.push(at(self, coords[first])?);
        xy.push(at(self, coords[first + 1])?);
        let ra = self.tex_vec(&xy)?;
        let dim = if array { DIM_ARRAY_2D } else { DIM_2D };
        match handle {
            TexSlot::Bound(tid) if !array => {
                let rb = self.tex_vec(&[sample])?;
                self.texs_push(Form::TLDS, tid, tlds::tgt::T2D_LZ_MS, results, ra, Some(rb));
            }
            TexSlot::Bound(tid) => {
                let rb = self.tex_vec(&[sample])?;
                let (comps, mask4) = self.tex_mask4(results);
                let inst = sm50::Inst::new(Form::TLD_I)
                    .with(Field::Tid, tid)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask4)
                    .with(Field::Ms, 1);
                self.tex_push(inst, results, &comps, false, ra, Some(rb));
            }
            TexSlot::Register(h) => {
                let hp = at(self, h)?;
                let rb = self.tex_vec(&[hp, sample])?;
                let (comps, mask4) = self.tex_mask4(results);
                let inst = sm50::Inst::new(Form::TLD_B)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask4)
                    .with(Field::Ms, 1);
                self.tex_push(inst, results, &comps, false, ra, Some(rb));
            }
        }
        Ok(())
    }
}
