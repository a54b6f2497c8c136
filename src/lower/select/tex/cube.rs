//! Cube maps: `tex.cube`/`tex.acube` (plain and `.level`) and `tld4.cube`/`tld4.acube`, as
//! ptxas 11.8 writes them for sm_50 (probed with small PTX files; `tests/compile_tex2.rs`
//! checks the words against nvdisasm and the texture lines against ptxas's).
//!
//! In: an `ir::tex` instruction whose shape is `.cube` or `.acube` (float coordinates: the
//! builder refuses integer ones), its texture (slot word or handle register) and operands.
//! Out: the projection and one texture instruction.
//!
//! ptxas never hands the unit the PTX direction: it first scales it by the reciprocal of
//! its major component, and so do we, with the same instructions:
//!
//! ```text
//! FMNMX m, |x|, |y|, !PT        (the maximum)
//! FMNMX m, m, |z|, !PT
//! MUFU.RCP r, m
//! FMUL x', r, x ; FMUL y', r, y ; FMUL z', r, z
//! ```
//!
//! (`texture::cube_project` is the same arithmetic for `ir::eval`.) Then:
//!
//! ```text
//! cube,  slot               TEXS     rd2, rd, {x',y'}, z', slot, CUBE, mask
//! cube,  slot, .level       TEXS.LL  rd2, rd, {x',y'}, {z',lod}, slot, CUBE, mask
//! acube, slot               TEX      rd.., {layer,x',y',z'}, slot, ARRAY_CUBE, mask4
//! acube, slot, .level       TEX.LL   rd.., {layer,x',y',z'}, lod, slot, ARRAY_CUBE, mask4
//! register handle           TEX.B    rd.., {[layer,]x',y',z'}, handle, 0x0, CUBE|ARRAY_CUBE
//! register handle, .level   TEX.B.LL rd.., {[layer,]x',y',z'}, {handle,lod}, 0x0, ..
//! tld4, slot                TLD4.c   rd.., {[layer,]x',y',z'}, slot, CUBE|ARRAY_CUBE, mask4
//! tld4, register handle     TLD4.c.B rd.., {[layer,]x',y',z'}, handle, 0x0, ..
//! ```
//!
//! With a depth reference (no TEXS form): `TEX{.LL}.DC rd.., {[layer,]x',y',z'},
//! {[lod,]ref}, slot` and `TEX.B{.LL}.DC rd.., {..}, {handle,[lod,]ref}, 0x0`.
//!
//! `layer` is clamped by `I2I.U16.U32.SAT` as for the other array shapes. `tex.grad` of cube
//! maps (with or without a reference) is emulated across the quad as ptxas does it
//! ([`super::quad`]: `SHFL` of each lane's operands to its quad, `FSWZADD.NDV` to add the
//! gradients, this projection of every lane's perturbed direction, `TEX.NDV`, and a masked
//! `MOV` keeping lane k's result). Not lowered (a clear error naming the form): offsets on a
//! cube, a reference on a cube `tld4`.

use super::{Lowerer, Part, TexSlot};
use crate::ir::tex::{TexLod, TexOp, TexShape};
use crate::ir::Value;
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::mufu::Func;
use crate::sm50::{self, Field, Form};

/// TEX/TLD4's `dim` for CUBE and ARRAY_CUBE.
const DIM_CUBE: u64 = 6;
const DIM_ARRAY_CUBE: u64 = 7;
/// TEXS's `tgt` for CUBE and CUBE `.LL`.
const TGT_CUBE: u64 = 12;
const TGT_CUBE_LL: u64 = 13;

/// The shape of a cube-map sample or gather (`None` for every other instruction).
pub(super) fn cube_shape(op: TexOp) -> Option<TexShape> {
    let shape = match op {
        TexOp::Sample { shape, .. }
        | TexOp::SampleLod { shape, .. }
        | TexOp::Gather { shape, .. } => shape,
        TexOp::Query(_) | TexOp::QueryLevel(_) | TexOp::SampleMs { .. } => return None,
    };
    matches!(shape, TexShape::Cube | TexShape::ACube).then_some(shape)
}

impl Lowerer<'_> {
    /// A cube-map `tex` or `tld4` (module essay). `coords` are the operands after the
    /// handle: `[layer,] x, y, z`, then the level for `.level`.
    pub(super) fn lower_tex_cube(
        &mut self,
        results: &[Value],
        op: TexOp,
        shape: TexShape,
        handle: TexSlot,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        if let TexOp::SampleLod {
            lod: TexLod::Grad,
            offset: false,
            depth,
            ..
        } = op
        {
            return self.lower_tex_cube_grad(results, shape, handle, depth, coords);
        }
        let (level, depth, gather) = match op {
            TexOp::Sample { .. } => (false, false, None),
            TexOp::SampleLod {
                lod,
                offset: false,
                depth,
                ..
            } if lod != TexLod::Grad => (lod == TexLod::Level, depth, None),
            TexOp::Gather {
                comp,
                offset: false,
                depth: false,
                ..
            } => (false, false, Some(comp)),
            TexOp::SampleLod {
                lod, offset, depth, ..
            } => {
                let what = super::tex_lod_what(shape, lod, offset, depth, handle);
                return Err(self.unsupported(what));
            }
            _ => {
                return Err(
                    self.unsupported(format!("this tex/tld4.{} form ({op:?})", shape.name()))
                )
            }
        };
        let array = shape == TexShape::ACube;
        let first = usize::from(array);
        let layer = if array {
            Some(Part::At(self.tex_layer(coords[0])?))
        } else {
            None
        };
        let dir = [coords[first], coords[first + 1], coords[first + 2]];
        let [x, y, z] = self.cube_project(dir)?;
        // After the direction: the reference (depth compare), then the level.
        let dref = if depth {
            Some(Part::At(self.reg(coords[first + 3])?))
        } else {
            None
        };
        let lod = if level {
            Some(Part::At(self.reg(coords[first + 3 + usize::from(depth)])?))
        } else {
            None
        };
        if depth {
            return self.lower_tex_cube_dc(results, array, handle, layer, [x, y, z], lod, dref);
        }
        let dim = if array { DIM_ARRAY_CUBE } else { DIM_CUBE };
        // Every coordinate consecutive from ra, the layer first (the general forms).
        let mut all: Vec<Part> = layer.into_iter().collect();
        all.extend([x, y, z]);
        if let Some(comp) = gather {
            let (comps, mask) = self.tex_mask4(results);
            let ra = self.tex_vec(&all)?;
            let (form, rb) = match handle {
                TexSlot::Bound(_) => (Form::TLD4_I, None),
                TexSlot::Register(h) => (Form::TLD4_B, Some(self.reg(h)?)),
            };
            let mut inst = sm50::Inst::new(form)
                .with(Field::Comp, u64::from(comp & 3))
                .with(Field::Dim, dim)
                .with(Field::Mask, mask);
            if let TexSlot::Bound(tid) = handle {
                inst.set(Field::Tid, tid);
            }
            self.tex_push(inst, results, &comps, false, ra, rb);
            return Ok(());
        }
        match handle {
            TexSlot::Bound(tid) if !array => {
                // TEXS: ra {x', y'}, rb z' (.LL: {z', lod}).
                let ra = self.tex_vec(&[x, y])?;
                let mut rb = vec![z];
                rb.extend(lod);
                let rb = self.tex_vec(&rb)?;
                let tgt = if level { TGT_CUBE_LL } else { TGT_CUBE };
                self.texs_push(Form::TEXS, tid, tgt, results, ra, Some(rb));
            }
            TexSlot::Bound(tid) => {
                let (comps, mask) = self.tex_mask4(results);
                let ra = self.tex_vec(&all)?;
                let rb = match lod {
                    Some(l) => Some(self.tex_vec(&[l])?),
                    None => None,
                };
                // .LL, or 0: the plain form.
                let lod = if level { sm50::values::tex::lod::LL } else { 0 };
                let inst = sm50::Inst::new(Form::TEX)
                    .with(Field::Tid, tid)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask)
                    .with(Field::Lod, lod);
                self.tex_push(inst, results, &comps, false, ra, rb);
            }
            TexSlot::Register(h) => {
                let (comps, mask) = self.tex_mask4(results);
                let ra = self.tex_vec(&all)?;
                let mut rb = vec![Part::At(self.reg(h)?)];
                rb.extend(lod);
                let rb = self.tex_vec(&rb)?;
                let lod = if level {
                    sm50::values::tex_b::lod::LL
                } else {
                    0
                };
                let inst = sm50::Inst::new(Form::TEX_B)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask)
                    .with(Field::Lod, lod);
                self.tex_push(inst, results, &comps, false, ra, Some(rb));
            }
        }
        Ok(())
    }

    /// A cube-map `tex` with a depth reference, as ptxas 11.8 writes it (no TEXS form): the
    /// general `TEX{.LL}.DC` on `{[layer,] x', y', z'}` with rb `{[lod,] ref}`, or
    /// `TEX.B{.LL}.DC` with rb `{handle, [lod,] ref}`.
    #[allow(clippy::too_many_arguments)]
    fn lower_tex_cube_dc(
        &mut self,
        results: &[Value],
        array: bool,
        handle: TexSlot,
        layer: Option<Part>,
        dir: [Part; 3],
        lod: Option<Part>,
        dref: Option<Part>,
    ) -> Result<(), LowerError> {
        let dim = if array { DIM_ARRAY_CUBE } else { DIM_CUBE };
        let mut all: Vec<Part> = layer.into_iter().collect();
        all.extend(dir);
        let (comps, mask) = self.tex_mask4(results);
        let ra = self.tex_vec(&all)?;
        let mut rb = Vec::new();
        if let TexSlot::Register(h) = handle {
            rb.push(Part::At(self.reg(h)?));
        }
        rb.extend(lod);
        rb.extend(dref);
        let rb = self.tex_vec(&rb)?;
        let (form, ll) = match handle {
            TexSlot::Bound(_) => (Form::TEX, sm50::values::tex::lod::LL),
            TexSlot::Register(_) => (Form::TEX_B, sm50::values::tex_b::lod::LL),
        };
        let mut inst = sm50::Inst::new(form)
            .with(Field::Dim, dim)
            .with(Field::Mask, mask)
            .with(Field::Lod, if lod.is_some() { ll } else { 0 })
            .with(Field::Dc, 1);
        if let TexSlot::Bound(tid) = handle {
            inst.set(Field::Tid, tid);
        }
        self.tex_push(inst, results, &comps, false, ra, Some(rb));
        Ok(())
    }

    /// `tex.grad.cube`/`.acube`: emulated across the quad, each lane's perturbed direction
    /// projected before `TEX.NDV` (`super::quad`). `coords`: `[layer,] x, y, z, [ref,]`
    /// then dPdx and dPdy (three each).
    fn lower_tex_cube_grad(
        &mut self,
        results: &[Value],
        shape: TexShape,
        handle: TexSlot,
        depth: bool,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        let array = shape == TexShape::ACube;
        let first = usize::from(array);
        let mut dir = Vec::new();
        if array {
            dir.push(Part::At(self.tex_layer(coords[0])?));
        }
        for &c in &coords[first..first + 3] {
            dir.push(Part::At(self.reg(c)?));
        }
        let mut next = first + 3;
        let dref = if depth {
            next += 1;
            Some(Part::At(self.reg(coords[next - 1])?))
        } else {
            None
        };
        let g = super::quad::QuadGrad {
            dim: if array { DIM_ARRAY_CUBE } else { DIM_CUBE },
            handle,
            coords: dir,
            first,
            grads: &coords[next..next + 6],
            off: None,
            dref,
            cube: true,
        };
        self.lower_tex_grad_quad(results, g)
    }

    /// ptxas's projection of a cube direction: each component times `RCP` of the largest
    /// magnitude (module essay).
    fn cube_project(&mut self, dir: [Value; 3]) -> Result<[Part; 3], LowerError> {
        let [x, y, z] = [self.reg(dir[0])?, self.reg(dir[1])?, self.reg(dir[2])?];
        let max = |s: &mut Self, a: Loc, abs_a: bool, b: Loc| {
            // FMNMX d, {|}a{|}, |b|, !PT: the maximum.
            let inst = sm50::Inst::new(Form::FMNMX_R)
                .with(Field::Absa, u64::from(abs_a))
                .with(Field::Absb, 1)
                .with(Field::Paccn, 1);
            s.cube_op(inst, a, Some(b))
        };
        let m = max(self, x, true, y);
        let m = max(self, m, false, z);
        let rcp = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rcp.code());
        let r = self.cube_op(rcp, m, None);
        let mul =
            |s: &mut Self, c: Loc| Part::At(s.cube_op(sm50::Inst::new(Form::FMUL_R), r, Some(c)));
        Ok([mul(self, x), mul(self, y), mul(self, z)])
    }

    /// One arithmetic instruction of the projection: `inst d, a[, b]` into a new register.
    fn cube_op(&mut self, inst: sm50::Inst, a: Loc, b: Option<Loc>) -> Loc {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)];
        if let Some(b) = b {
            let bop = i.use_(b.vreg);
            refs.push((Field::Rb, bop, b.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        Loc { vreg: d, offset: 0 }
    }
}
