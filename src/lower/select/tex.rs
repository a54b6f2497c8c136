//! Texture instructions (`ir::tex`) as ptxas 11.8 writes them for sm_50 (probed with small
//! PTX files; `tests/compile_tex.rs` checks the words against nvdisasm):
//!
//! ```text
//! tex.1d  f32 coords   TEXS  rd2, rd, x, zero, slot, 2D, mask     (y = a zeroed register)
//! tex.2d  f32 coords   TEXS  rd2, rd, x, y, slot, 2D, mask
//! tex.3d  f32 coords   TEXS  rd2, rd, {x,y}, z, slot, 3D, mask
//! tex.a2d f32 coords   TEXS  rd2, rd, {layer,x}, y, slot, ARRAY_2D, mask
//! tex.1d  s32 coords   TLDS.LZ rd2, rd, x, slot, 1D, mask
//! tex.2d  s32 coords   TLDS.LZ rd2, rd, x, y, slot, 2D, mask
//! tex.3d  s32 coords   TLDS.LZ rd2, rd, {x,y}, z, slot, 3D, mask
//! tex.a2d s32 coords   TLDS.LZ rd2, rd, {layer,0}, {x,y}, slot, ARRAY_2D, mask
//! tex.a1d f32 coords   TEX     rd.., {layer,x}, slot, ARRAY_1D, mask4   (general form)
//! tex.a1d s32 coords   TLD.LZ  rd.., {layer,x}, slot, ARRAY_1D, mask4
//! txq.width/height/depth   TXQ rd, zero, TEX_HEADER_DIMENSION, slot, 0x1/0x2/0x4
//! txq.level.width/...      TXQ rd, lod, TEX_HEADER_DIMENSION, slot, 0x1/0x2/0x4
//! ```
//!
//! `{a,b}` is an aligned register pair; `layer` is the PTX layer index clamped by
//! `I2I.U16.U32.SAT`. `slot` is the word of constant bank 0 that holds the texture's header
//! index, by index: a bound `.texref` gets one after the parameters
//! ([`ir::tex::bound_slot_offset`]), a texture object that is a `.u64` kernel parameter is
//! its parameter's low word. The TEXS/TLDS `mask` names the components whose results are
//! read; they go to `rd`, `rd+1`, `rd2`, `rd2+1` in order (`rd2` = RZ for one or two;
//! we always take `rd2` = `rd+2`, one aligned quad, as ptxas mostly does). The
//! results are variable-latency (scoreboards are the scheduler's business).
//!
//! The general forms' 4-bit `mask4` has one bit per component read; their results are
//! consecutive registers from `rd`.
//!
//! A texture object in a register (not a kernel parameter) takes the `.B` forms:
//!
//! ```text
//! tex f32 coords       TEX.B    rd.., {coords}, handle, 0x0, dim, mask4   (1d as 2d {x,0})
//! tex s32 coords       TLD.B.LZ rd.., {coords}, handle, 0x0, dim, mask4
//! txq                  TXQ.B    rd, {handle,0}, TEX_HEADER_DIMENSION, 0x0, mask
//! txq.level            TXQ.B    rd, {handle,lod}, TEX_HEADER_DIMENSION, 0x0, mask
//! ```
//!
//! Where the handle may differ within a quad, each of these is wrapped in ptxas's per-quad
//! split ([`handle_split`]).
//!
//! A texture and a sampler handle in registers (`.texmode_independent`, combined into one
//! handle word: `TexHandle::Combined`) take the same forms, except float `tex.1d`, which
//! stays `TEX.B ... 1D` with `ra = x` (with options too: [`paired1d`]), and integer
//! coordinates on the other shapes:
//! `I2F.F32.S32` each (not the layer), then `TEX.B.LZ` ([`Lowerer::lower_tex_bindless`]).
//!
//! (`{coords}`: every coordinate consecutive, the layer first.) `tld4` is `TLD4S` (2D, by
//! slot, all four components read), `TLD4` or `TLD4.B`: see [`Lowerer::lower_tld4`]. The
//! `.cube` and `.acube` shapes (a projected direction, `TEXS ... CUBE` or the general forms
//! on CUBE/ARRAY_CUBE) are [`cube`].

mod cube;
mod fetch;
mod grad;
pub(super) mod handle_split;
mod ms;
mod paired1d;
mod quad;

use super::Lowerer;
use crate::ir::tex::{self, TexHandle, TexLod, TexOp, TexQuery, TexShape};
use crate::ir::{InstData, Type, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};
use cranelift_entity::EntityRef;

/// One register of a coordinate vector: a lowered location, a zero, or the clamped layer.
#[derive(Copy, Clone)]
pub(super) enum Part {
    At(Loc),
    Zero,
}

/// Where a texture comes from: its slot word in constant bank 0, or a handle register.
#[derive(Copy, Clone)]
enum TexSlot {
    Bound(u64),
    Register(Value),
}

impl<'a> Lowerer<'a> {
    /// The word index (`tid`) of the texture's slot in constant bank 0; `None` for a
    /// texture object in a register (not a kernel parameter: the `.B` forms).
    fn tex_slot(&mut self, handle: TexHandle, args: &[Value]) -> Result<Option<u64>, LowerError> {
        let byte = match handle {
            TexHandle::Bound(_) | TexHandle::Paired { .. } | TexHandle::Sampler(_) => {
                let order = tex::bound_textures(self.f);
                let word = tex::slot_handle(self.f, handle);
                let Some(pos) = order.iter().position(|&t| t == word) else {
                    return Err(LowerError::Internal(format!(
                        "texture {handle:?} missing from the kernel's bound textures"
                    )));
                };
                tex::bound_slot_offset(self.f, pos)
            }
            // A kernel parameter's slot; in a subroutine a parameter is an argument
            // register's value (the call ABI), never the kernel's bank-0 word.
            TexHandle::Combined => return Ok(None),
            TexHandle::Bindless => match self.def_of(args[0]) {
                Some(&InstData::LoadParam {
                    ty: Type::I64,
                    offset,
                }) if !self.f.subroutine => tex::param_cbank_offset(offset),
                _ => return Ok(None),
            },
        };
        Ok(Some(u64::from(byte / 4)))
    }

    /// The registers of a coordinate vector: one part as it is, several in a new aligned
    /// pair (or quad), copied in.
    fn tex_vec(&mut self, parts: &[Part]) -> Result<Loc, LowerError> {
        if let [Part::At(l)] = parts {
            return Ok(*l);
        }
        let kind = match parts.len() {
            1 => RegKind::B32,
            2 => RegKind::B64,
            _ => RegKind::B128,
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        i.tex_pack = true;
        let dop = i.def(d, parts.len() > 1);
        for (k, p) in parts.iter().enumerate() {
            match *p {
                Part::At(l) => {
                    let s = i.use_(l.vreg);
                    i.piece(
                        sm50::Inst::new(Form::MOV_R),
                        &[(Field::Rd, dop, k as u8), (Field::Rb, s, l.offset)],
                    );
                }
                // MOV Rd, RZ (the unset B register field is RZ).
                Part::Zero => i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, k as u8)]),
            }
        }
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// An integer coordinate as a float, as ptxas 11.8 converts one sampled through a
    /// sampler: `I2F.F32.S32`.
    fn tex_i2f(&mut self, v: Value) -> Result<Loc, LowerError> {
        let inst = sm50::Inst::new(Form::I2F_R)
            .with(Field::Dsz, sm50::values::i2f::dsz::F32)
            .with(Field::St, sm50::values::i2f::st::S32);
        self.tex_convert(v, inst)
    }

    /// A PTX layer index clamped to 16 bits, as the hardware takes it: `I2I.U16.U32.SAT`.
    fn tex_layer(&mut self, v: Value) -> Result<Loc, LowerError> {
        let inst = sm50::Inst::new(Form::I2I_R)
            .with(Field::Dt, sm50::values::i2i::dt::U16)
            .with(Field::St, sm50::values::i2i::st::U32)
            .with(Field::Sat, 1);
        self.tex_convert(v, inst)
    }

    /// `inst Rd, v` (a one-source conversion, the source in `Rb`) into a new register.
    fn tex_convert(&mut self, v: Value, inst: sm50::Inst) -> Result<Loc, LowerError> {
        let a = self.reg(v)?;
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Rb, aop, a.offset)]);
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// A texture instruction; a `.B` one whose handle may differ within a quad gets the
    /// per-quad split around its fetch ([`handle_split`]).
    pub(super) fn lower_texture(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: TexHandle,
        args: &[Value],
    ) -> Result<(), LowerError> {
        // (a combined texture-and-sampler handle is one register word too)
        let split = handle.in_register()
            && !self.opts.no_handle_split
            && self.planning.is_none()
            && self
                .tex_divergent
                .get_or_insert_with(|| crate::lower::reconverge::divergent_values(self.f, true))
                .contains(&args[0]);
        let outer = std::mem::replace(&mut self.split_handles, split);
        let r = self.lower_texture_any(results, op, handle, args);
        self.split_handles = outer;
        r
    }

    fn lower_texture_any(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: TexHandle,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let slot = self.tex_slot(handle, args)?;
        if let TexOp::Query(TexQuery::Table(q)) = op {
            return self.lower_txq_table(results[0], q, slot, args.first().copied());
        }
        if let TexOp::Query(TexQuery::Sampler(q)) = op {
            return self.lower_txq_sampler(results[0], q, slot);
        }
        let coords = match handle {
            TexHandle::Bound(_) | TexHandle::Paired { .. } | TexHandle::Sampler(_) => args,
            TexHandle::Bindless | TexHandle::Combined => &args[1..],
        };
        if let TexOp::SampleMs { array, .. } = op {
            let handle = match slot {
                Some(tid) => TexSlot::Bound(tid),
                None => TexSlot::Register(args[0]),
            };
            return self.lower_tex_ms(results, array, handle, coords);
        }
        if let Some(shape) = cube::cube_shape(op) {
            let handle = match slot {
                Some(tid) => TexSlot::Bound(tid),
                None => TexSlot::Register(args[0]),
            };
            return self.lower_tex_cube(results, op, shape, handle, coords);
        }
        if let (
            TexHandle::Paired { .. } | TexHandle::Combined,
            TexOp::SampleLod {
                shape: TexShape::D1,
                ..
            },
        ) = (handle, op)
        {
            let handle = match slot {
                Some(tid) => TexSlot::Bound(tid),
                None => TexSlot::Register(args[0]),
            };
            return self.lower_tex_lod_paired_1d(results, op, handle, coords);
        }
        if let TexOp::SampleLod { shape, .. } = op {
            let sampler = tex::samples_integer_coords(handle, shape);
            let handle = match slot {
                Some(tid) => TexSlot::Bound(tid),
                None => TexSlot::Register(args[0]),
            };
            return self.lower_tex_lod(results, op, handle, sampler, coords);
        }
        if let TexOp::Gather { .. } = op {
            let handle = match slot {
                Some(tid) => TexSlot::Bound(tid),
                None => TexSlot::Register(args[0]),
            };
            return self.lower_tld4(results, op, handle, coords);
        }
        let Some(tid) = slot else {
            let combined = handle == TexHandle::Combined;
            return self.lower_tex_bindless(results, op, args[0], combined, coords);
        };
        if let TexHandle::Paired { .. } = handle {
            return self.lower_tex_paired(results, op, handle, coords, tid);
        }
        match op {
            TexOp::Query(q) => self.lower_txq(results[0], q, tid, Part::Zero),
            TexOp::QueryLevel(q) => {
                let lod = Part::At(self.reg(coords[0])?);
                self.lower_txq(results[0], q, tid, lod)
            }
            TexOp::Sample {
                shape, int_coords, ..
            } => self.lower_tex_sample(results, shape, int_coords, coords, tid),
            TexOp::Gather { .. } | TexOp::SampleLod { .. } | TexOp::SampleMs { .. } => {
                Err(LowerError::Internal("tld4/tex options reached tex".into()))
            }
        }
    }

    /// `tld4` as ptxas 11.8 writes it:
    ///
    /// ```text
    /// 2d, slot, all four read   TLD4S.c rd2, rd, x, y, slot           (plain)
    ///                           TLD4S.c.AOFFI.DC rd2, rd, {x,y}, {off,ref}, slot
    /// otherwise, slot           TLD4.c rd.., {coords}, [{off,ref}], slot, dim, mask4
    /// register handle           TLD4.c.B rd.., {coords}, {handle[,off][,ref]}, 0x0, dim, mask4
    /// ```
    ///
    /// `{coords}`: 2D `{x, y}`, ARRAY_2D `{layer, x, y}` (the layer clamped by
    /// `I2I.U16.U32.SAT`); `off` the offset vector packed by `BFI off, dy, 0x608, dx`
    /// (6 bits each, x at bit 0, y at bit 8); each part only when present.
    fn lower_tld4(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: TexSlot,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        let TexOp::Gather {
            comp,
            shape,
            offset,
            depth,
            ..
        } = op
        else {
            return Err(LowerError::Internal("lower_tld4 takes tld4".into()));
        };
        let at = |s: &mut Self, v: Value| s.reg(v).map(Part::At);
        let (dim, mut xy): (u64, Vec<Part>) = match shape {
            TexShape::D2 => (2, vec![at(self, coords[0])?, at(self, coords[1])?]),
            TexShape::A2 => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                (3, vec![layer, at(self, coords[1])?, at(self, coords[2])?])
            }
            _ => return Err(LowerError::Internal("cube tld4 is tex::cube's".into())),
        };
        let mut next = shape.coords();
        // rb's parts after the handle: the packed offsets, then the reference.
        let mut extra = Vec::new();
        if offset {
            extra.push(Part::At(self.tex_pack_offsets(
                coords[next],
                coords[next + 1],
                8,
                6,
            )?));
            next += 2;
        }
        if depth {
            extra.push(at(self, coords[next])?);
        }
        let comps = self.tex_read_components(results);
        let c = u64::from(comp & 3);
        match handle {
            TexSlot::Bound(tid) if shape == TexShape::D2 && comps.len() == 4 => {
                let (ra, rb) = if extra.is_empty() {
                    let y = xy.pop().unwrap_or(Part::Zero);
                    (self.tex_vec(&xy)?, self.tex_vec(&[y])?)
                } else {
                    (self.tex_vec(&xy)?, self.tex_vec(&extra)?)
                };
                let opt = u64::from(depth) | u64::from(offset) << 1;
                let inst = sm50::Inst::new(Form::TLD4S)
                    .with(Field::Tid, tid)
                    .with(Field::Comp, c)
                    .with(Field::Opt, opt);
                self.tex_push(inst, results, &comps, true, ra, Some(rb));
            }
            TexSlot::Bound(tid) => {
                let (comps, mask) = self.tex_mask4(results);
                let ra = self.tex_vec(&xy)?;
                let rb = if extra.is_empty() {
                    None
                } else {
                    Some(self.tex_vec(&extra)?)
                };
                let inst = sm50::Inst::new(Form::TLD4_I)
                    .with(Field::Tid, tid)
                    .with(Field::Comp, c)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask)
                    .with(Field::Off, u64::from(offset))
                    .with(Field::Dc, u64::from(depth));
                self.tex_push(inst, results, &comps, false, ra, rb);
            }
            TexSlot::Register(h) => {
                let (comps, mask) = self.tex_mask4(results);
                let ra = self.tex_vec(&xy)?;
                let mut parts = vec![at(self, h)?];
                parts.extend(extra);
                let rb = self.tex_vec(&parts)?;
                let inst = sm50::Inst::new(Form::TLD4_B)
                    .with(Field::Comp, c)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask)
                    .with(Field::Off, u64::from(offset))
                    .with(Field::Dc, u64::from(depth));
                self.tex_push(inst, results, &comps, false, ra, Some(rb));
            }
        }
        Ok(())
    }

    /// `tex` with a level, gradients, offsets or a depth reference, as ptxas 11.8 writes
    /// the forms it was probed with (the others are refused by name):
    ///
    /// ```text
    /// 1d/2d f32, slot, .level and/or ref   TEXS.LL/.DC/.LL.DC rd2, rd, {x,y}, {lod,ref}, slot
    /// any other f32 (not cube)              TEX{.LL}{.AOFFI}{.DC} rd.., {coords}, {lod,off,ref},
    ///                                         slot, dim (each part of rb when present)
    /// f32, register handle                  TEX.B{.LL}{.AOFFI}{.DC} rd.., {coords},
    ///                                         {handle,lod,off,ref}, 0x0, dim
    /// s32, .level and/or offsets            TLD/TLDS forms: [`fetch`]
    /// 1d/2d/a1d/a2d f32 or s32 .grad        TXD[.B]{.AOFFI}: [`grad`]
    /// ```
    ///
    /// (1d as 2d with y = 0 and zero y gradients; `off` packs 4 bits per offset, BFI 0x404,
    /// and for 3d a second BFI 0x408 for z.) The steps: gather the operands, pick the form,
    /// write it.
    fn lower_tex_lod(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: TexSlot,
        through_sampler: bool,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        let TexOp::SampleLod {
            shape,
            int_coords,
            lod,
            offset,
            depth,
            ..
        } = op
        else {
            return Err(LowerError::Internal(
                "lower_tex_lod takes tex options".into(),
            ));
        };
        let mut o = self.tex_lod_operands(shape, offset, depth, coords)?;
        let form = tex_lod_what(shape, lod, offset, depth, handle);
        let refuse = |s: &mut Self| Err(s.unsupported(form.clone()));
        let Some(dim) = tex_lod_dim(shape, int_coords) else {
            return refuse(self);
        };
        if shape == TexShape::D1 && !int_coords {
            o.xy.push(Part::Zero);
        }
        let (comps, mask4) = self.tex_mask4(results);
        let dest = LodDest {
            results,
            comps,
            dim,
            mask4,
        };
        let d = shape.dims();
        if int_coords && lod == TexLod::Grad && d <= 2 && !depth {
            // ptxas 11.8 hands the integers' bits to TXD as they are (module essay of
            // `grad`), 1d as 1D.
            return self.lower_tex_grad(results, dim, d, handle, o.xy, o.rest, o.off);
        }
        // 3d gradients on integer coordinates: emulated across the quad on the integers'
        // bits, as the float form (ptxas 11.8; `quad`).
        let quad_int = int_coords && lod == TexLod::Grad && shape == TexShape::D3 && !depth;
        if int_coords && lod == TexLod::Base && through_sampler {
            // Through a sampler (`ir::tex::samples_integer_coords`) ptxas 11.8 samples
            // integer coordinates as floats at level 0, offsets and all: `I2F.F32.S32` each
            // (not the layer), then `TEX{.B}.LZ{.AOFFI}`.
            let first = usize::from(shape.is_array());
            for (k, &c) in coords[first..shape.coords()].iter().enumerate() {
                o.xy[first + k] = Part::At(self.tex_i2f(c)?);
            }
            return self.lower_tex_lod_general(&dest, handle, false, true, o);
        }
        if int_coords && !quad_int {
            if lod == TexLod::Grad || depth {
                return refuse(self);
            }
            let level = match lod {
                TexLod::Level => Some(Part::At(self.reg(o.rest[0])?)),
                _ => None,
            };
            return self.lower_tex_fetch(results, dim, handle, &o.xy, level, o.off);
        }
        match (lod, handle) {
            (TexLod::Grad, _) if d <= 2 && !depth => {
                self.lower_tex_grad(results, dim, d, handle, o.xy, o.rest, o.off)
            }
            (TexLod::Grad, _) => {
                // Emulated across the quad (`quad`).
                let g = quad::QuadGrad {
                    dim,
                    handle,
                    first: usize::from(shape.is_array()),
                    coords: o.xy,
                    grads: &o.rest[..2 * d],
                    off: o.off,
                    dref: o.dref,
                    cube: false,
                };
                self.lower_tex_grad_quad(results, g)
            }
            (_, TexSlot::Bound(tid)) if d <= 2 && !shape.is_array() && !offset => {
                let level = lod == TexLod::Level;
                let Some(tgt) = texs_lod_target(level, depth) else {
                    return refuse(self);
                };
                self.lower_texs_lod(results, tid, tgt, level, o)
            }
            _ => self.lower_tex_lod_general(&dest, handle, lod == TexLod::Level, false, o),
        }
    }

    /// The operands of a `tex` with options in PTX's order: the coordinates (layer first,
    /// clamped), the packed offsets, the depth reference, and what follows them (the level
    /// or the gradients).
    fn tex_lod_operands<'v>(
        &mut self,
        shape: TexShape,
        offset: bool,
        depth: bool,
        coords: &'v [Value],
    ) -> Result<LodOperands<'v>, LowerError> {
        let at = |s: &mut Self, v: Value| s.reg(v).map(Part::At);
        let d = shape.dims();
        let mut xy = Vec::new();
        let first = usize::from(shape.is_array());
        if first == 1 {
            xy.push(Part::At(self.tex_layer(coords[0])?));
        }
        for &c in &coords[first..shape.coords()] {
            xy.push(at(self, c)?);
        }
        let mut next = shape.coords();
        let off = if offset {
            let o = if d == 1 {
                at(self, coords[next])?
            } else if d == 2 {
                Part::At(self.tex_pack_offsets(coords[next], coords[next + 1], 4, 4)?)
            } else {
                Part::At(self.tex_pack_offsets3(&coords[next..next + 3])?)
            };
            next += d;
            Some(o)
        } else {
            None
        };
        let dref = if depth {
            next += 1;
            Some(at(self, coords[next - 1])?)
        } else {
            None
        };
        Ok(LodOperands {
            xy,
            off,
            dref,
            rest: &coords[next..],
        })
    }

    /// `TEXS.LL/.DC/.LL.DC` (target `tgt`) for a 1d/2d texture by slot: ra `{x, y}`, rb
    /// `{lod, ref}`, each when present.
    fn lower_texs_lod(
        &mut self,
        results: &[Value],
        tid: u64,
        tgt: u64,
        level: bool,
        o: LodOperands,
    ) -> Result<(), LowerError> {
        let mut rb = Vec::new();
        if level {
            rb.push(Part::At(self.reg(o.rest[0])?));
        }
        rb.extend(o.dref);
        let ra = self.tex_vec(&o.xy)?;
        let rb = self.tex_vec(&rb)?;
        self.texs_push(Form::TEXS, tid, tgt, results, ra, Some(rb));
        Ok(())
    }

    /// `TEX[.B]{.LL}{.AOFFI}{.DC}`: rb `{[handle,] [level,] [offsets,] [ref]}`, each when
    /// present, in PTX's order (ptxas 11.8: `TEX.LL.AOFFI.DC` rb `{lod, off, ref}`).
    fn lower_tex_lod_general(
        &mut self,
        dest: &LodDest,
        handle: TexSlot,
        level: bool,
        lz: bool,
        o: LodOperands,
    ) -> Result<(), LowerError> {
        let ra = self.tex_vec(&o.xy)?;
        let mut rb = Vec::new();
        if let TexSlot::Register(h) = handle {
            rb.push(Part::At(self.reg(h)?));
        }
        if level {
            rb.push(Part::At(self.reg(o.rest[0])?));
        }
        rb.extend(o.off);
        rb.extend(o.dref);
        let rb = if rb.is_empty() {
            None
        } else {
            Some(self.tex_vec(&rb)?)
        };
        // `.LZ` (`lz`): level 0 stated (integer coordinates sampled through a sampler).
        use sm50::values::{tex::lod as tl, tex_b::lod as tbl};
        let (form, ll, lz_code) = match handle {
            TexSlot::Bound(_) => (Form::TEX, tl::LL, tl::LZ),
            TexSlot::Register(_) => (Form::TEX_B, tbl::LL, tbl::LZ),
        };
        let field = match (level, lz) {
            (true, _) => ll,
            (false, true) => lz_code,
            (false, false) => 0,
        };
        let inst = sm50::Inst::new(form)
            .with(Field::Lod, field)
            .with(Field::Aoffi, u64::from(o.off.is_some()))
            .with(Field::Dc, u64::from(o.dref.is_some()));
        self.tex_lod_push(inst, dest, handle, ra, rb);
        Ok(())
    }

    /// Push `inst` of a `tex` with options with its dim, mask and (by slot) `tid` set.
    fn tex_lod_push(
        &mut self,
        inst: sm50::Inst,
        dest: &LodDest,
        handle: TexSlot,
        ra: Loc,
        rb: Option<Loc>,
    ) {
        let mut inst = inst
            .with(Field::Dim, dest.dim)
            .with(Field::Mask, dest.mask4);
        if let TexSlot::Bound(tid) = handle {
            inst.set(Field::Tid, tid);
        }
        self.tex_push(inst, dest.results, &dest.comps, false, ra, rb);
    }

    /// An offset vector packed as the texture unit reads it, as ptxas 11.8 packs it:
    /// `BFI r, dy, (bits << 8 | 8), dx` (dx in the low bits, dy's low `bits` bits at bit 8).
    fn tex_pack_offsets(
        &mut self,
        dx: Value,
        dy: Value,
        at_bit: u64,
        bits: u64,
    ) -> Result<Loc, LowerError> {
        let x = self.reg(dx)?;
        let y = self.reg(dy)?;
        Ok(self.tex_bfi(y, bits << 8 | at_bit, Some(x)))
    }

    /// A 3d offset vector packed as ptxas 11.8 packs it: `BFI p, dy, 0x404, dx` then
    /// `BFI p, dz, 0x408, p` (4 bits each: x at bit 0, y at 4, z at 8).
    fn tex_pack_offsets3(&mut self, d: &[Value]) -> Result<Loc, LowerError> {
        let xy = self.tex_pack_offsets(d[0], d[1], 4, 4)?;
        let z = self.reg(d[2])?;
        Ok(self.tex_bfi(z, 4 << 8 | 8, Some(xy)))
    }

    /// `BFI d, a, imm, c`: `c` (`None`: RZ) with `a`'s low `imm >> 8` bits inserted at bit
    /// `imm & 0xff`.
    fn tex_bfi(&mut self, a: Loc, imm: u64, c: Option<Loc>) -> Loc {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)];
        if let Some(c) = c {
            let cop = i.use_(c.vreg);
            refs.push((Field::Rc, cop, c.offset));
        }
        let inst = sm50::Inst::new(Form::BFI_I).with(Field::ImmImm20s, imm);
        i.piece(inst, &refs);
        self.push(i);
        Loc { vreg: d, offset: 0 }
    }

    /// `TXQ` of the level in `lod` (zero for a plain `txq`).
    pub(super) fn lower_txq(
        &mut self,
        r: Value,
        q: TexQuery,
        tid: u64,
        lod: Part,
    ) -> Result<(), LowerError> {
        let mask = txq_mask(q);
        let lod = self.tex_vec(&[lod])?;
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(lod.vreg);
        let inst = sm50::Inst::new(Form::TXQ_I)
            .with(Field::Query, sm50::values::txq::query::TEX_HEADER_DIMENSION)
            .with(Field::Tid, tid)
            .with(Field::Mask, mask);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, aop, lod.offset)]);
        self.push(i);
        self.set_loc(r, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// The components whose results are read, in order (at least one: a fetch nobody reads
    /// still writes R, as the IR keeps it).
    fn tex_read_components(&self, results: &[Value]) -> Vec<usize> {
        let mut comps: Vec<usize> = (0..4)
            .filter(|&k| self.use_count[results[k].index()] > 0)
            .collect();
        if comps.is_empty() {
            comps.push(0);
        }
        comps
    }

    /// The components a general form (`TEX`, `TLD`, `TLD4`, their `.B` forms) writes, one
    /// register each from `rd`: those read, and the 4-bit mask that names them.
    fn tex_mask4(&self, results: &[Value]) -> (Vec<usize>, u64) {
        let comps = self.tex_read_components(results);
        let mask = comps.iter().map(|&c| 1u64 << c).sum();
        (comps, mask)
    }

    /// Pushes texture instruction `inst` writing components `comps` of `results` (in that
    /// order) to one new destination vreg (a pair or quad for several): `Rd` at its word 0,
    /// with `rd2` also `Rd2` at word 2 (the TEXS/TLDS/TLD4S second pair); `Ra` and `Rb`
    /// (when given) are the coordinate (and handle, offset, reference) registers.
    fn tex_push(
        &mut self,
        inst: sm50::Inst,
        results: &[Value],
        comps: &[usize],
        rd2: bool,
        ra: Loc,
        rb: Option<Loc>,
    ) {
        let d = self.tex_dest(comps.len());
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(ra.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, ra.offset)];
        if rd2 {
            refs.push((Field::Rd2, dop, 2));
        }
        if let Some(rb) = rb {
            let bop = i.use_(rb.vreg);
            refs.push((Field::Rb, bop, rb.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        self.tex_set_results(results, comps, d);
    }

    /// A new destination for `n` result words (a pair or quad for several).
    fn tex_dest(&mut self, n: usize) -> crate::machinst::VReg {
        let kind = match n {
            1 => RegKind::B32,
            2 => RegKind::B64,
            _ => RegKind::B128,
        };
        self.new_vreg(kind)
    }

    /// Components `comps` of `results` (in that order) live in consecutive words of `d`.
    fn tex_set_results(&mut self, results: &[Value], comps: &[usize], d: crate::machinst::VReg) {
        for (n, &c) in comps.iter().enumerate() {
            let loc = Loc {
                vreg: d,
                offset: n as u8,
            };
            self.set_loc(results[c], loc);
        }
    }

    /// `tex.a1d` as ptxas 11.8 writes it: the general `TEX` (float coordinates) or
    /// `TLD.LZ` (integer ones) on target ARRAY_1D, coordinates `{layer, x}` at `ra`, one
    /// destination register per component read (the 4-bit mask), consecutive from `rd`.
    fn lower_tex_general(
        &mut self,
        results: &[Value],
        int_coords: bool,
        ra: Loc,
        tid: u64,
        dim: u64,
    ) -> Result<(), LowerError> {
        let (comps, mask) = self.tex_mask4(results);
        let form = if int_coords { Form::TLD_I } else { Form::TEX };
        // dim 1 = ARRAY_1D, 0 = 1D; lod 0 is TEX's plain form and TLD's .LZ.
        let inst = sm50::Inst::new(form)
            .with(Field::Tid, tid)
            .with(Field::Dim, dim)
            .with(Field::Mask, mask)
            .with(Field::Lod, 0);
        self.tex_push(inst, results, &comps, false, ra, None);
        Ok(())
    }

    /// A fetch through a (texture, sampler) pair of `.texmode_independent`: as a bound
    /// `.texref`'s, except that a float 1D fetch stays `TEX ... 1D` with `ra = x` (ptxas
    /// 11.8; unified mode reads it as 2D `{x, 0}` with `TEXS`, which the sampler's
    /// `addr_mode_1` could change).
    ///
    /// Integer coordinates through the pair, as ptxas 11.8 writes them: on 2d, 3d and a2d
    /// converted (`I2F.F32.S32`, not the layer) and sampled, `TEXS.LZ` (2D: ra `x`, rb `y`;
    /// 3D: `{x, y}`, `z`; ARRAY_2D: `{layer, x}`, `y`); on 1d and a1d fetched, with `.CL`
    /// where the sampler clamps to the edge in x (`TLD.LZ.CL`, ra `x` or `{layer, x}`),
    /// else as a `.texref`'s (`TLDS.LZ`, `TLD.LZ`). What they mean: `ir::tex`'s
    /// `samples_integer_coords` and `clamps_integer_coords`.
    fn lower_tex_paired(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: TexHandle,
        coords: &[Value],
        tid: u64,
    ) -> Result<(), LowerError> {
        if let TexOp::Sample {
            shape,
            int_coords: true,
            ..
        } = op
        {
            if tex::samples_integer_coords(handle, shape) {
                return self.lower_texs_sampled_ints(results, shape, coords, tid);
            }
            if tex::clamps_integer_coords(handle, shape, &self.module.samplerrefs) {
                let (ra, dim) = if shape == TexShape::A1 {
                    let layer = Part::At(self.tex_layer(coords[0])?);
                    let x = Part::At(self.reg(coords[1])?);
                    (self.tex_vec(&[layer, x])?, sm50::values::tex::dim::ARRAY_1D)
                } else {
                    (self.reg(coords[0])?, sm50::values::tex::dim::V1D)
                };
                let (comps, mask) = self.tex_mask4(results);
                // lod 0: .LZ.
                let inst = sm50::Inst::new(Form::TLD_I)
                    .with(Field::Tid, tid)
                    .with(Field::Dim, dim)
                    .with(Field::Mask, mask)
                    .with(Field::Lod, 0)
                    .with(Field::Cl, 1);
                self.tex_push(inst, results, &comps, false, ra, None);
                return Ok(());
            }
        }
        match op {
            TexOp::Sample {
                shape: TexShape::D1,
                int_coords: false,
                ..
            } => {
                let ra = self.reg(coords[0])?;
                self.lower_tex_general(results, false, ra, tid, 0)
            }
            TexOp::Sample {
                shape, int_coords, ..
            } => self.lower_tex_sample(results, shape, int_coords, coords, tid),
            _ => Err(self.unsupported(
                "this fetch through a texture and a sampler (leafold lowers tex and tld4 \
                 without options on a .texref/.samplerref pair)"
                    .to_string(),
            )),
        }
    }

    /// A texture object in a register, as ptxas 11.8 writes it: `TEX.B` (float
    /// coordinates) / `TLD.B.LZ` (integer ones) with every coordinate consecutive from `ra`
    /// (1D float as 2D `{x, 0}`; 3D `{x, y, z}`; arrays `{layer, x[, y]}`), the handle's low
    /// word in `rb`, one result register per component read; `TXQ.B` with `{handle, 0}` at
    /// `ra`.
    ///
    /// A `combined` texture-and-sampler handle (`TexHandle::Combined`) differs in two forms,
    /// as ptxas 11.8 writes them: float `tex.1d` is `TEX.B ... 1D` with `ra = x`, and integer
    /// coordinates on the other shapes are `I2F.F32.S32` each (not the layer) then
    /// `TEX.B.LZ` (1d integer coordinates stay `TLD.B.LZ ... 1D`).
    pub(super) fn lower_tex_bindless(
        &mut self,
        results: &[Value],
        op: TexOp,
        handle: Value,
        combined: bool,
        coords: &[Value],
    ) -> Result<(), LowerError> {
        let h = self.reg(handle)?;
        let (shape, int_coords) = match op {
            TexOp::Query(q) | TexOp::QueryLevel(q) => {
                let mask = txq_mask(q);
                let lod = match op {
                    TexOp::QueryLevel(_) => Part::At(self.reg(coords[0])?),
                    _ => Part::Zero,
                };
                let ra = self.tex_vec(&[Part::At(h), lod])?;
                let d = self.new_vreg(RegKind::B32);
                let mut i = Sm50Inst::new(Role::Plain);
                let dop = i.def(d, false);
                let aop = i.use_(ra.vreg);
                let inst = sm50::Inst::new(Form::TXQ_B)
                    .with(Field::Query, sm50::values::txq::query::TEX_HEADER_DIMENSION)
                    .with(Field::Mask, mask);
                i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, aop, ra.offset)]);
                self.push(i);
                self.set_loc(results[0], Loc { vreg: d, offset: 0 });
                return Ok(());
            }
            TexOp::Sample {
                shape, int_coords, ..
            } => (shape, int_coords),
            TexOp::Gather { .. } | TexOp::SampleLod { .. } | TexOp::SampleMs { .. } => {
                return Err(LowerError::Internal(
                    "tld4/tex options reached tex.B".into(),
                ))
            }
        };
        // Integer coordinates sampled through the sampler as floats (`combined`).
        let sampled = combined && int_coords && shape != TexShape::D1;
        let at = |s: &mut Self, v: Value| {
            if sampled {
                s.tex_i2f(v).map(Part::At)
            } else {
                s.reg(v).map(Part::At)
            }
        };
        // (dim, coordinate parts): dim as TEX's enum (1D, ARRAY_1D, 2D, ARRAY_2D, 3D, ...).
        let (dim, parts): (u64, Vec<Part>) = match shape {
            TexShape::D1 if int_coords || combined => (0, vec![at(self, coords[0])?]),
            TexShape::D1 => (2, vec![at(self, coords[0])?, Part::Zero]),
            TexShape::D2 => (2, vec![at(self, coords[0])?, at(self, coords[1])?]),
            TexShape::D3 => (
                4,
                vec![
                    at(self, coords[0])?,
                    at(self, coords[1])?,
                    at(self, coords[2])?,
                ],
            ),
            TexShape::A1 => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                (1, vec![layer, at(self, coords[1])?])
            }
            TexShape::A2 => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                (3, vec![layer, at(self, coords[1])?, at(self, coords[2])?])
            }
            TexShape::Cube | TexShape::ACube => {
                return Err(LowerError::Internal("cube tex is tex::cube's".into()))
            }
        };
        let ra = self.tex_vec(&parts)?;
        let (comps, mask) = self.tex_mask4(results);
        let (form, lod) = if sampled {
            (Form::TEX_B, sm50::values::tex_b::lod::LZ)
        } else if int_coords {
            // lod 0: TLD.B's .LZ.
            (Form::TLD_B, 0)
        } else {
            (Form::TEX_B, 0)
        };
        let inst = sm50::Inst::new(form)
            .with(Field::Dim, dim)
            .with(Field::Mask, mask)
            .with(Field::Lod, lod);
        self.tex_push(inst, results, &comps, false, ra, Some(h));
        Ok(())
    }

    fn lower_tex_sample(
        &mut self,
        results: &[Value],
        shape: TexShape,
        int_coords: bool,
        coords: &[Value],
        tid: u64,
    ) -> Result<(), LowerError> {
        let at = |s: &mut Self, v: Value| s.reg(v).map(Part::At);
        // (form, tgt, ra parts, rb parts)
        let (form, tgt, ra, rb): (Form, u64, Vec<Part>, Vec<Part>) = match (shape, int_coords) {
            (TexShape::D1, false) => (Form::TEXS, 1, vec![at(self, coords[0])?], vec![Part::Zero]),
            (TexShape::D2, false) => (
                Form::TEXS,
                1,
                vec![at(self, coords[0])?],
                vec![at(self, coords[1])?],
            ),
            (TexShape::D3, false) => (
                Form::TEXS,
                10,
                vec![at(self, coords[0])?, at(self, coords[1])?],
                vec![at(self, coords[2])?],
            ),
            (TexShape::A2, false) => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                (
                    Form::TEXS,
                    7,
                    vec![layer, at(self, coords[1])?],
                    vec![at(self, coords[2])?],
                )
            }
            (TexShape::D1, true) => (Form::TLDS, 0, vec![at(self, coords[0])?], vec![]),
            (TexShape::D2, true) => (
                Form::TLDS,
                2,
                vec![at(self, coords[0])?],
                vec![at(self, coords[1])?],
            ),
            (TexShape::D3, true) => (
                Form::TLDS,
                7,
                vec![at(self, coords[0])?, at(self, coords[1])?],
                vec![at(self, coords[2])?],
            ),
            (TexShape::A2, true) => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                (
                    Form::TLDS,
                    8,
                    vec![layer, Part::Zero],
                    vec![at(self, coords[1])?, at(self, coords[2])?],
                )
            }
            (TexShape::A1, _) => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                let x = at(self, coords[1])?;
                let ra = self.tex_vec(&[layer, x])?;
                return self.lower_tex_general(results, int_coords, ra, tid, 1);
            }
            (TexShape::Cube | TexShape::ACube, _) => {
                return Err(LowerError::Internal("cube tex is tex::cube's".into()))
            }
        };
        let ra = self.tex_vec(&ra)?;
        let rb = if rb.is_empty() {
            None
        } else {
            Some(self.tex_vec(&rb)?)
        };
        self.texs_push(form, tid, tgt, results, ra, rb);
        Ok(())
    }

    /// Integer coordinates sampled through a `.texref`/`.samplerref` pair (2d, 3d, a2d):
    /// `I2F.F32.S32` of each (not the layer), then `TEXS.LZ` ([`Lowerer::lower_tex_paired`]).
    fn lower_texs_sampled_ints(
        &mut self,
        results: &[Value],
        shape: TexShape,
        coords: &[Value],
        tid: u64,
    ) -> Result<(), LowerError> {
        use sm50::values::texs::tgt;
        let f = |s: &mut Self, v: Value| s.tex_i2f(v).map(Part::At);
        let (tgt, ra, rb) = match shape {
            TexShape::D2 => (tgt::T2D_LZ, vec![f(self, coords[0])?], f(self, coords[1])?),
            TexShape::D3 => (
                tgt::T3D_LZ,
                vec![f(self, coords[0])?, f(self, coords[1])?],
                f(self, coords[2])?,
            ),
            TexShape::A2 => {
                let layer = Part::At(self.tex_layer(coords[0])?);
                (
                    tgt::ARRAY_2D_LZ,
                    vec![layer, f(self, coords[1])?],
                    f(self, coords[2])?,
                )
            }
            _ => {
                return Err(LowerError::Internal(
                    "sampled integer coordinates on 2d, 3d and a2d only".into(),
                ))
            }
        };
        let ra = self.tex_vec(&ra)?;
        let rb = self.tex_vec(&[rb])?;
        self.texs_push(Form::TEXS, tid, tgt, results, ra, Some(rb));
        Ok(())
    }

    /// Pushes `TEXS`/`TLDS` (`form`) of slot `tid` on target `tgt`, writing the components
    /// of `results` that are read (its pair mask, [`texs_mask`]).
    fn texs_push(
        &mut self,
        form: Form,
        tid: u64,
        tgt: u64,
        results: &[Value],
        ra: Loc,
        rb: Option<Loc>,
    ) {
        let (comps, mask) = texs_mask(self.tex_read_components(results));
        // One destination vreg: rd at its word 0, rd2 at word 2 (a quad for three or four
        // components, so a `.v4` store of them needs no copies, as with ptxas's rd2 = rd+2).
        let mut inst = sm50::Inst::new(form)
            .with(Field::Tid, tid)
            .with(Field::Tgt, tgt)
            .with(Field::Mask, mask);
        if comps.len() <= 2 {
            inst.set(Field::Rd2, 255);
        }
        self.tex_push(inst, results, &comps, comps.len() > 2, ra, rb);
    }
}

/// The operands of a `tex` with options ([`Lowerer::tex_lod_operands`]).
struct LodOperands<'v> {
    /// The coordinates, the layer first (clamped).
    xy: Vec<Part>,
    /// The offsets, packed.
    off: Option<Part>,
    /// The depth reference.
    dref: Option<Part>,
    /// The operands after those: the level, or the gradients (d/dx, then d/dy).
    rest: &'v [Value],
}

/// What a `tex` with options writes: its results, the components read, and the `dim` and
/// 4-bit `mask` of its instruction.
struct LodDest<'r> {
    results: &'r [Value],
    comps: Vec<usize>,
    dim: u64,
    mask4: u64,
}

/// The `dim` of a `tex` with options (TEX, TLD and TXD encode it alike; a 1d f32 texture is
/// sampled as 2d); `None` for the cube shapes.
fn tex_lod_dim(shape: TexShape, int_coords: bool) -> Option<u64> {
    use sm50::values::tex::dim;
    Some(match shape {
        TexShape::D1 if !int_coords => dim::V2D,
        TexShape::D1 => dim::V1D,
        TexShape::A1 => dim::ARRAY_1D,
        TexShape::D2 => dim::V2D,
        TexShape::A2 => dim::ARRAY_2D,
        TexShape::D3 => dim::V3D,
        TexShape::Cube | TexShape::ACube => return None,
    })
}

/// TEXS's target for an explicit level and/or a depth reference; `None` for neither.
fn texs_lod_target(level: bool, depth: bool) -> Option<u64> {
    use sm50::values::texs::tgt;
    match (level, depth) {
        (true, false) => Some(tgt::LL),
        (false, true) => Some(tgt::DC),
        (true, true) => Some(tgt::LL_DC),
        (false, false) => None,
    }
}

/// How a refusal names a `tex` with options.
fn tex_lod_what(
    shape: TexShape,
    lod: TexLod,
    offset: bool,
    depth: bool,
    handle: TexSlot,
) -> String {
    format!(
        "this tex.{} form ({lod:?}{}{}{})",
        shape.name(),
        if offset { ", offsets" } else { "" },
        if depth { ", depth compare" } else { "" },
        match handle {
            TexSlot::Register(_) => ", a texture object in a register",
            TexSlot::Bound(_) => "",
        }
    )
}

/// The TEXS/TLDS mask of the components read and the components it writes: one or two
/// (rd2 = RZ), or three and four (R, B and G, B have no two-component encoding: they are
/// written as three, the middle one unread).
fn texs_mask(mut comps: Vec<usize>) -> (Vec<usize>, u64) {
    let mask = match comps[..] {
        [c] => c as u64,
        [0, 1] => 4,
        [0, 3] => 5,
        [1, 3] => 6,
        [2, 3] => 7,
        [0, 2] => {
            comps = vec![0, 1, 2];
            0
        }
        [1, 2] => {
            comps = vec![1, 2, 3];
            3
        }
        [0, 1, 2] => 0,
        [0, 1, 3] => 1,
        [0, 2, 3] => 2,
        [1, 2, 3] => 3,
        _ => 4,
    };
    (comps, mask)
}

/// The TXQ `TEX_HEADER_DIMENSION` mask bit of a size query.
fn txq_mask(q: TexQuery) -> u64 {
    match q {
        TexQuery::Width => 1,
        TexQuery::Height => 2,
        TexQuery::Depth => 4,
        // `lower_texture` sends these to `lower_txq_table` (no TXQ).
        TexQuery::Table(_) | TexQuery::Sampler(_) => 0,
    }
}
