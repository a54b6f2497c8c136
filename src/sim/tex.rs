//! `TEXS`, `TLDS`, `TXQ` and the general `TEX`/`TLD` (bound by slot), and `TEX.B`,
//! `TLD.B`, `TXQ.B` (a texture object's handle in a register), through the texture model
//! (`crate::texture`).
//!
//! In: the instruction, the warp's registers, constant bank 0, [`KernelInfo::textures`]
//! (which slot words are bound `.texref`s) and `Launch::textures`. Out: the result registers
//! of every executing lane, or an error for a texture the launch does not bind or a form
//! outside the ones modelled.
//!
//! The slot: `tid` names word `tid` of constant bank 0. A word the cubin relocates with
//! `R_CUDA_TEX_HEADER_INDEX` is the named `.texref`; any other word holds a texture object's
//! handle (a `.u64` kernel parameter's low word; texture objects are small integers, see
//! `TextureBindings::add_object`).
//!
//! Coordinates (as ptxas 11.8 lays them out, `lower::select::tex`): TEXS 2D `x = ra`,
//! `y = rb`; 3D `x, y = ra, ra+1`, `z = rb`; ARRAY_2D `layer, x = ra, ra+1`, `y = rb`
//! (floats). TLDS 1D `x = ra`; 2D `x = ra`, `y = rb`; 2D `.LZ.AOFFI` `x, y = ra, ra+1`,
//! the packed offsets `rb`; 3D `x, y = ra, ra+1`, `z = rb`; ARRAY_2D `layer = ra`,
//! `x, y = rb, rb+1` (integers); 2D `.LZ.MS` `x, y = ra, ra+1`, the sample at `rb`
//! ([`Texture::fetch_ms`]; TLD/TLD.B `.MS`: the sample in rb after the handle). Results go to `rd`, `rd+1`, `rd2`,
//! `rd2+1` in the mask's component order. TXQ `TEX_HEADER_DIMENSION` (also `suq.width`/
//! `.height` when the slot word or handle names a surface, see `Sim::slot_queried`) with mask bits 0/1/2
//! writes width/height/depth of level `ra` to consecutive registers from `rd` (`TXQ.B`:
//! handle `ra`, level `ra+1`). The general forms (no level, offset, compare or other
//! option) read every coordinate consecutively from `ra` (the layer first) and write one
//! result register per 4-bit mask bit, consecutive from `rd`; `.B` takes the handle from
//! `rb`'s word (texture objects are small integers).
//!
//! Cube maps (the direction as ptxas projects it, `lower::select::tex::cube`): `TEXS` CUBE
//! reads `{x, y}` at ra and `z` at rb (`.LL`: `{z, level}`); `TEX`/`TEX.B`/`TLD4`/`TLD4.B`
//! on CUBE read `{x, y, z}` from ra, on ARRAY_CUBE `{layer, x, y, z}` (`TEX.DC`: the
//! reference in rb after the handle and the level).
//!
//! `TEX.NDV` (between SAM and RAM, `lower::select::tex::quad`): the level of detail as
//! for explicit gradients, `dx = c[l|1] - c[l&~1]` and `dy = c[l|2] - c[l&~2]` per
//! coordinate from lane `l`'s quad neighbours' coordinates ([`crate::texture::quad_delta`];
//! the hardware's exact arithmetic is not documented: this is the model `ir::eval` shares);
//! every lane of the quad must execute.
//!
//! `TEXS` 2D `.LL`/`.DC`/`.LL.DC` read `{x, y}` at ra and `{level, reference}` at rb; `TXD`
//! and `TXD.B` (`tex.grad` on 1D, 2D, ARRAY_1D, ARRAY_2D, with `.AOFFI`) see
//! [`Sim::texture_grad`].
//!
//! `TLD4S`, `TLD4` and `TLD4.B` (`tld4`, [`Texture::gather`]): TLD4S plain `x = ra`,
//! `y = rb`; with `.AOFFI`/`.DC` `x, y = ra, ra+1` and `rb` the packed offsets then the
//! reference; results `rd, rd+1, rd2, rd2+1`. TLD4/TLD4.B read the coordinates from ra by
//! target (2D `x, y`; ARRAY_2D `layer, x, y`) and from rb the handle (`.B`), the packed
//! offsets, the reference, in that order, each when present; one result per mask bit. The
//! packed offsets hold x in bits 0..5 and y in bits 8..13, signed.
//!
//! # One handle per quad
//!
//! The texture unit serves a quad (lanes 4q..4q+3) with one texture header: a `.B` form
//! (`TEX.B`, `TLD.B`, `TXD.B`, `TLD4.B`, `TXQ.B`) takes the handle of one lane of each quad
//! for all its lanes. That is what ptxas 11.8 implies: wherever the handle is not provably
//! uniform it splits the fetch so that every quad's executing lanes hold equal handles
//! (`SHFL.IDX` of quad lanes 0, 1, 2 and `BRA CC.EQ` to the fetch, `lower::select::tex`'s
//! "Handles that differ within a quad"), and leaves uniform handles alone. Which lane wins
//! is not observable under that discipline; the model takes the lowest active lane of the
//! quad (`quad_handle`), so code without the split and with handles that differ within a
//! quad samples the wrong texture for some lanes, and `leafold verify` (per-lane `ir::eval`,
//! PTX's semantics) reports the mismatch instead of passing what a GPU would get wrong.
//! Surfaces (`SULD`/`SUST`/`SURED`) stay per lane: ptxas does not split them.
//!
//! [`KernelInfo::textures`]: super::KernelInfo::textures

use super::exec::{f, lanes, unsupported, Regs, Sim, Warp};
use super::SimError;
use crate::ir::tex::gather_offset;
use crate::ir::tex::sample_offset;
use crate::sm50::values::{texs, tld4, tlds, txq};
use crate::sm50::{Field, Form, Inst};
use crate::texture::{Lod, SampleQuery, Texture, TxqQuery};

/// What a `TXQ` queries: a texture, or a surface (`suq.width`/`.height`, which ptxas writes
/// as `TXQ` on the surface's word or handle).
enum Queried {
    Texture(Texture),
    Surface(crate::surface::SurfaceDesc),
}

impl Queried {
    /// The sizes `TEX_HEADER_DIMENSION` writes for `mask` (width, height, depth bits) at
    /// level `lod` (a surface has one level).
    fn sizes(&self, mask: u64, lod: u32) -> Vec<u32> {
        use crate::surface::SurfQuery;
        let all = [
            (TxqQuery::Width, SurfQuery::Width),
            (TxqQuery::Height, SurfQuery::Height),
            (TxqQuery::Depth, SurfQuery::Depth),
        ];
        all.into_iter()
            .enumerate()
            .filter(|(bit, _)| mask >> bit & 1 != 0)
            .map(|(_, (t, s))| match self {
                Queried::Texture(tex) => tex.query(t, lod),
                Queried::Surface(d) => d.query(s),
            })
            .collect()
    }
}

/// The components a TEXS/TLDS mask selects (rd2 = RZ: one or two; else three or four).
fn components(mask: u64, two_pairs: bool) -> Option<&'static [usize]> {
    Some(match (two_pairs, mask) {
        (false, 0) => &[0],
        (false, 1) => &[1],
        (false, 2) => &[2],
        (false, 3) => &[3],
        (false, 4) => &[0, 1],
        (false, 5) => &[0, 3],
        (false, 6) => &[1, 3],
        (false, 7) => &[2, 3],
        (true, 0) => &[0, 1, 2],
        (true, 1) => &[0, 1, 3],
        (true, 2) => &[0, 2, 3],
        (true, 3) => &[1, 2, 3],
        (true, 4) => &[0, 1, 2, 3],
        _ => return None,
    })
}

impl Sim<'_> {
    /// The texture of slot word `tid` for `lane` (a handle word may differ per lane only
    /// in theory: it is a constant-bank word).
    /// A (texture, sampler) pair's word reads the texture with the sampler's modes
    /// ([`crate::sampler`]).
    fn slot_texture(&mut self, i: &Inst, addr: u64) -> Result<Texture, SimError> {
        let byte = f(i, Field::Tid) * 4;
        if let Some((_, name)) = self.textures.iter().find(|(o, _)| u64::from(*o) == byte) {
            let t = self.launch.textures.by_name(name).ok_or_else(|| {
                SimError::BadLaunch(format!("texture '{name}' is not bound in the launch"))
            })?;
            return match self.samplers.iter().find(|(o, _)| u64::from(*o) == byte) {
                Some((_, s)) => s.texture(t).map_err(SimError::BadLaunch),
                None => Ok(t.clone()),
            };
        }
        let handle = u64::from(self.mem.const32(addr, 0, byte)?);
        self.launch
            .textures
            .by_handle(handle)
            .cloned()
            .ok_or_else(|| SimError::BadLaunch(format!("no texture object has handle {handle:#x}")))
    }

    /// What `TXQ` on slot word `tid` asks: a `.surfref`'s word ([`Sim::surface_slots`]) is
    /// that surface (`suq`); a handle word names a texture object, else a surface object
    /// (the model's texture and surface handles are both small integers: a kernel querying
    /// both kinds through parameters of equal value is read as a texture).
    fn slot_queried(&mut self, i: &Inst, addr: u64) -> Result<Queried, SimError> {
        let byte = f(i, Field::Tid) * 4;
        if self
            .surface_slots
            .iter()
            .any(|(o, _)| u64::from(*o) == byte)
        {
            let h = u64::from(self.mem.const32(addr, 0, byte)?);
            return self.surface_queried(h);
        }
        if !self.textures.iter().any(|(o, _)| u64::from(*o) == byte) {
            let h = u64::from(self.mem.const32(addr, 0, byte)?);
            if self.launch.textures.by_handle(h).is_none() {
                return self.surface_queried(h);
            }
        }
        Ok(Queried::Texture(self.slot_texture(i, addr)?))
    }

    fn surface_queried(&self, h: u64) -> Result<Queried, SimError> {
        crate::surface::by_handle(&self.mem.surfaces, h)
            .map(|s| Queried::Surface(s.clone()))
            .map_err(|e| SimError::BadLaunch(e.to_string()))
    }

    pub(super) fn texture(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let (ra, rb) = (f(i, Field::Ra), f(i, Field::Rb));
        // A register pair's second register (RZ stays RZ).
        let next = |r: u64| if r >= 255 { 255 } else { r + 1 };
        if i.form == Form::TXQ_I {
            let q = self.slot_queried(i, addr)?;
            let mask = f(i, Field::Mask);
            if f(i, Field::Query) != txq::query::TEX_HEADER_DIMENSION || mask & !7 != 0 {
                return Err(unsupported(addr, i, "a TXQ query other than the sizes"));
            }
            let rd = f(i, Field::Rd);
            for l in lanes(exec) {
                let mut at = rd;
                for v in q.sizes(mask, w.r(ra, l)) {
                    w.set_r(at, l, v);
                    at = next(at);
                }
            }
            return Ok(());
        }
        let tex = self.slot_texture(i, addr)?;
        if matches!(i.form, Form::TEX | Form::TLD_I) {
            return self.texture_general(w, i, addr, exec, Some(&tex));
        }
        let (rd, rd2) = (f(i, Field::Rd), f(i, Field::Rd2));
        let Some(comps) = components(f(i, Field::Mask), rd2 != 255) else {
            return Err(unsupported(addr, i, "an invalid component mask"));
        };
        let tgt = f(i, Field::Tgt);
        let mut out = Vec::with_capacity(32);
        for l in lanes(exec) {
            let r = |reg: u64| w.r(reg, l);
            let words = match (i.form, tgt) {
                (Form::TEXS, texs::tgt::LL..=texs::tgt::LL_DC) => {
                    // 2D with a level (.LL, 3), a reference (.DC, 4) or both (5):
                    // ra {x, y}, rb {level, reference} (the order of PTX's operands,
                    // which ptxas 11.8 keeps).
                    let fl = |reg: u64| f32::from_bits(r(reg));
                    let mut b = rb;
                    let mut q = SampleQuery {
                        coords: [fl(ra), fl(next(ra)), 0.0],
                        ..Default::default()
                    };
                    if tgt != texs::tgt::DC {
                        q.lod = Lod::Level(fl(b));
                        b = next(b);
                    }
                    if tgt != texs::tgt::LL {
                        q.depth_ref = Some(fl(b));
                    }
                    tex.sample(&q)
                }
                // `.LZ` (level 0) reads as the plain form, whose level is 0 in the model
                // too (ptxas 11.8's integer coordinates sampled through a sampler).
                (
                    Form::TEXS,
                    texs::tgt::T2D
                    | texs::tgt::ARRAY_2D
                    | texs::tgt::T3D
                    | texs::tgt::T2D_LZ
                    | texs::tgt::ARRAY_2D_LZ
                    | texs::tgt::T3D_LZ,
                ) => {
                    let fl = |reg: u64| f32::from_bits(r(reg));
                    let (coords, layer) = match tgt {
                        texs::tgt::T2D | texs::tgt::T2D_LZ => ([fl(ra), fl(rb), 0.0], 0),
                        texs::tgt::T3D | texs::tgt::T3D_LZ => ([fl(ra), fl(next(ra)), fl(rb)], 0),
                        _ => ([fl(next(ra)), fl(rb), 0.0], r(ra) as i32),
                    };
                    tex.sample(&SampleQuery {
                        coords,
                        layer,
                        ..Default::default()
                    })
                }
                (Form::TEXS, texs::tgt::CUBE | texs::tgt::CUBE_LL) => {
                    // CUBE and CUBE .LL: ra {x, y}, rb z (.LL: {z, level}).
                    let fl = |reg: u64| f32::from_bits(r(reg));
                    let mut q = SampleQuery {
                        coords: [fl(ra), fl(next(ra)), fl(rb)],
                        ..Default::default()
                    };
                    if tgt == texs::tgt::CUBE_LL {
                        q.lod = Lod::Level(fl(next(rb)));
                    }
                    tex.sample(&q)
                }
                (
                    Form::TLDS,
                    tlds::tgt::T1D_LZ
                    | tlds::tgt::T2D_LZ
                    | tlds::tgt::T2D_LZ_AOFFI
                    | tlds::tgt::T3D_LZ
                    | tlds::tgt::ARRAY_2D_LZ,
                ) => {
                    let s = |reg: u64| r(reg) as i32;
                    let c = match tgt {
                        tlds::tgt::T1D_LZ => [s(ra), 0, 0, 0],
                        tlds::tgt::T2D_LZ => [s(ra), s(rb), 0, 0],
                        // 2D .LZ.AOFFI: {x, y} at ra, the packed offsets at rb.
                        tlds::tgt::T2D_LZ_AOFFI => {
                            let off = r(rb);
                            [
                                s(ra).wrapping_add(sample_offset(off)),
                                s(next(ra)).wrapping_add(sample_offset(off >> 4)),
                                0,
                                0,
                            ]
                        }
                        tlds::tgt::T3D_LZ => [s(ra), s(next(ra)), s(rb), 0],
                        _ => [s(rb), s(next(rb)), 0, s(ra)],
                    };
                    tex.fetch(c, 0)
                }
                (Form::TLDS, tlds::tgt::T2D_LZ_MS) => {
                    // 2D .LZ.MS: {x, y} at ra, the sample index at rb.
                    let s = |reg: u64| r(reg) as i32;
                    tex.fetch_ms(s(ra), s(next(ra)), 0, s(rb))
                }
                _ => return Err(unsupported(addr, i, "this texture target")),
            };
            out.push((l, words));
        }
        let dests = [rd, next(rd), rd2, next(rd2)];
        for (l, words) in out {
            for (n, &c) in comps.iter().enumerate() {
                w.set_r(dests[n], l, words[c]);
            }
        }
        Ok(())
    }

    /// The general forms: `TEX`/`TLD` (bound by slot) and `TEX.B`/`TLD.B` (the handle's
    /// low word first in rb), the coordinates consecutive from ra by target (1D `x`,
    /// ARRAY_1D `layer, x`, 2D `x, y`, ARRAY_2D `layer, x, y`, 3D `x, y, z`); rb's parts
    /// after the handle, each when present: the level (`TEX.LL`, `TLD.LL`; ptxas sets `.CL`
    /// on the latter, read the same; `TLD.LZ.CL` clamps to the edge), the packed offsets (`.AOFFI`, 4 bits each; TLD adds
    /// them to the integer texel coordinates), the depth reference (`.DC`). One result
    /// register per mask bit from rd.
    fn texture_general(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
        bound: Option<&Texture>,
    ) -> Result<(), SimError> {
        let bindless = bound.is_none();
        let float = matches!(i.form, Form::TEX | Form::TEX_B);
        // TEX: none, .LZ (level 0), .LL; TLD: .LZ, .LL (TEX.B and TLD.B number alike).
        use crate::sm50::values::{tex::lod as tex_lod, tld::lod as tld_lod};
        let level = match (float, f(i, Field::Lod)) {
            (true, tex_lod::DEFAULT | tex_lod::LZ) | (false, tld_lod::LZ) => false,
            (true, tex_lod::LL) | (false, tld_lod::LL) => true,
            _ => return Err(unsupported(addr, i, "this texture level mode")),
        };
        let (aoffi, dc) = (f(i, Field::Aoffi) != 0, f(i, Field::Dc) != 0);
        // `.MS` (TLD only, as ptxas 11.8 writes tex.2dms/a2dms: .LZ, no offsets): the
        // sample index in rb after the handle.
        let ms = !float && f(i, Field::Ms) != 0;
        let parts = usize::from(aoffi) + usize::from(dc) + usize::from(level) + usize::from(ms);
        // `.NDV` (the quad-emulated gradients, `lower::select::tex::quad`): the level of
        // detail from the quad's coordinates.
        let ndv = f(i, Field::Ndv) != 0;
        let known = (bindless || parts > 0 || f(i, Field::Rb) == 255)
            && (!ndv || (float && !level))
            && (f(i, Field::Ms) == 0 || (ms && !level && !aoffi));
        use crate::sm50::values::tex::dim::*;
        let dim = f(i, Field::Dim);
        let cube = dim == CUBE || dim == ARRAY_CUBE;
        if !known || (dim > V3D && !cube) || (cube && (!float || aoffi)) {
            return Err(unsupported(addr, i, "this texture target or option"));
        }
        let [ra, rb, rd, mask] = general_fields(i);
        let next = next_reg;
        // (layer, coordinates) of lane `m`, by target.
        let coords_of = |w: &Warp, m: usize| {
            let mut regs = [0u32; 4];
            let mut at = ra;
            for r in &mut regs {
                *r = w.r(at, m);
                at = next(at);
            }
            match dim {
                V1D => (0, [regs[0], 0, 0]),
                ARRAY_1D => (regs[0], [regs[1], 0, 0]),
                V2D => (0, [regs[0], regs[1], 0]),
                ARRAY_2D => (regs[0], [regs[1], regs[2], 0]),
                ARRAY_CUBE => (regs[0], [regs[1], regs[2], regs[3]]),
                _ => (0, [regs[0], regs[1], regs[2]]),
            }
        };
        if ndv && (0..8).any(|q| matches!(exec >> (4 * q) & 0xf, 1..=14)) {
            return Err(unsupported(addr, i, "TEX.NDV on a partial quad (no SAM)"));
        }
        // (the quad leaders' handles as the instruction found them; none by slot)
        let held = if bound.is_none() {
            w.held(rb)
        } else {
            Regs::default()
        };
        // `.NDV`: every lane's coordinates as the instruction found them (the results of
        // the lanes before may overwrite them: ptxas's `TEX.NDV q, q`).
        let found: Vec<[u32; 3]> = if ndv {
            (0..32).map(|m| coords_of(w, m).1).collect()
        } else {
            Vec::new()
        };
        for l in lanes(exec) {
            let mut b = rb;
            let tex = self.lane_texture(bound, &held, l, exec, &mut b)?;
            let (layer, c) = coords_of(w, l);
            if ms {
                let words = tex.fetch_ms(c[0] as i32, c[1] as i32, layer as i32, w.r(b, l) as i32);
                write_mask4(w, rd, mask, l, &words);
                continue;
            }
            let mut q = SampleQuery {
                coords: c.map(f32::from_bits),
                layer: layer as i32,
                ..Default::default()
            };
            // rb: the level first (ptxas 11.8's TEX.LL.AOFFI.DC: {level, offsets, ref}).
            let lod = if level { w.r(b, l) } else { 0 };
            if level {
                b = next(b);
            }
            if aoffi {
                let p = w.r(b, l);
                // 4 bits each: x at bit 0, y at 4, z (3D) at 8.
                let z = if dim == V3D { sample_offset(p >> 8) } else { 0 };
                q.offset = [sample_offset(p), sample_offset(p >> 4), z];
                b = next(b);
            }
            if dc {
                q.depth_ref = Some(f32::from_bits(w.r(b, l)));
            }
            let words = if float {
                if level {
                    q.lod = Lod::Level(f32::from_bits(lod));
                }
                if ndv {
                    // The differences to the x and y neighbours (texture::quad_delta).
                    let at = |m: usize| found[m].map(f32::from_bits);
                    let (x0, x1, y0, y1) = (at(l & !1), at(l | 1), at(l & !2), at(l | 2));
                    let mut dx = [0f32; 3];
                    let mut dy = [0f32; 3];
                    for k in 0..3 {
                        dx[k] = crate::texture::quad_delta(x0[k], x1[k]);
                        dy[k] = crate::texture::quad_delta(y0[k], y1[k]);
                    }
                    q.lod = Lod::Grad { dx, dy };
                }
                tex.sample(&q)
            } else {
                // `.AOFFI` moves the texel by the offsets (TLD: ptxas 11.8's tex.*.s32 with
                // offsets, packed as TEX's).
                let at = |k: usize| (c[k] as i32).wrapping_add(q.offset[k]);
                // `.LZ.CL`: clamped to the edge (`ir::tex::clamps_integer_coords`' model; on
                // `.LL`, where ptxas always sets it, read as without).
                let coords = [at(0), at(1), at(2), layer as i32];
                if !level && f(i, Field::Cl) != 0 {
                    tex.fetch_clamped(coords, 0)
                } else {
                    tex.fetch(coords, lod as i32)
                }
            };
            write_mask4(w, rd, mask, l, &words);
        }
        Ok(())
    }

    /// `TXD` (bound by slot) and `TXD.B` (the handle's low word first in ra): the
    /// coordinates at ra (1D and ARRAY_1D `{x}`, 2D and ARRAY_2D `{x, y}`), then the layer
    /// (arrays) or with `.AOFFI` one word holding the layer (zero off arrays) in bits 0..15
    /// and the offsets from bit 16 (4 bits each, x first); the gradients
    /// `{dPdx.x, dPdy.x, dPdx.y, dPdy.y}` at rb (1D, ARRAY_1D: the first pair); one result
    /// register per mask bit from rd.
    pub(super) fn texture_grad(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let bound = if i.form == Form::TXD_I {
            Some(self.slot_texture(i, addr)?)
        } else {
            None
        };
        let dim = f(i, Field::Dim);
        if !matches!(dim, 0..=3) {
            return Err(unsupported(addr, i, "this TXD target"));
        }
        let aoffi = f(i, Field::Aoffi) != 0;
        // 1D 0, ARRAY_1D 1, 2D 2, ARRAY_2D 3.
        let (array, two) = (dim & 1 == 1, dim >= 2);
        let [ra, rb, rd, mask] = general_fields(i);
        let next = next_reg;
        // (the quad leaders' handles as the instruction found them; none by slot)
        let held = if bound.is_none() {
            w.held(ra)
        } else {
            Regs::default()
        };
        for l in lanes(exec) {
            let fl = |reg: u64| f32::from_bits(w.r(reg, l));
            let mut a = ra;
            let tex = self.lane_texture(bound.as_ref(), &held, l, exec, &mut a)?;
            let x = fl(a);
            a = next(a);
            let y = if two {
                let y = fl(a);
                a = next(a);
                y
            } else {
                0.0
            };
            let word = if array || aoffi { w.r(a, l) } else { 0 };
            let (layer, offset) = if aoffi {
                let o = word >> 16;
                (word & 0xffff, [sample_offset(o), sample_offset(o >> 4), 0])
            } else {
                (word, [0; 3])
            };
            let g = [rb, next(rb), next(next(rb)), next(next(next(rb)))].map(fl);
            let (gy, hy) = if two { (g[2], g[3]) } else { (0.0, 0.0) };
            let q = SampleQuery {
                coords: [x, y, 0.0],
                layer: layer as i32,
                lod: Lod::Grad {
                    dx: [g[0], gy, 0.0],
                    dy: [g[1], hy, 0.0],
                },
                offset,
                ..Default::default()
            };
            let words = tex.sample(&q);
            write_mask4(w, rd, mask, l, &words);
        }
        Ok(())
    }

    /// The texture a lane reads: `bound` (by slot), or the object whose handle is in
    /// register `*reg` of the lane's quad leader ([`quad_handle`]), which then moves past it
    /// (the `.B` forms).
    fn lane_texture<'t>(
        &'t self,
        bound: Option<&'t Texture>,
        held: &Regs,
        lane: usize,
        exec: u32,
        reg: &mut u64,
    ) -> Result<&'t Texture, SimError> {
        match bound {
            Some(t) => Ok(t),
            None => {
                let t = self.object(u64::from(quad_handle(held, *reg, lane, exec)))?;
                *reg = next_reg(*reg);
                Ok(t)
            }
        }
    }

    /// The texture object with handle `h` (a register's word: its low 32 bits).
    fn object(&self, h: u64) -> Result<&Texture, SimError> {
        self.launch
            .textures
            .by_handle(h)
            .ok_or_else(|| SimError::BadLaunch(format!("no texture object has handle {h:#x}")))
    }

    /// `TEX.B`, `TLD.B` and `TXQ.B` (ra = {handle, level}).
    pub(super) fn texture_bindless(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        if i.form != Form::TXQ_B {
            return self.texture_general(w, i, addr, exec, None);
        }
        let mask = f(i, Field::Mask);
        if f(i, Field::Query) != txq::query::TEX_HEADER_DIMENSION || mask & !7 != 0 {
            return Err(unsupported(addr, i, "a TXQ query other than the sizes"));
        }
        let (ra, rd) = (f(i, Field::Ra), f(i, Field::Rd));
        let next = |r: u64| if r >= 255 { 255 } else { r + 1 };
        // (the quad leaders' handles as the instruction found them)
        let held = w.held(ra);
        for l in lanes(exec) {
            let h = u64::from(quad_handle(&held, ra, l, exec));
            // A texture object, else a surface object (`suq`; see `slot_queried`).
            let q = match self.launch.textures.by_handle(h) {
                Some(t) => Queried::Texture(t.clone()),
                None if !self.mem.surfaces.is_empty() => self.surface_queried(h)?,
                None => Queried::Texture(self.object(h)?.clone()),
            };
            let out = q.sizes(mask, w.r(next(ra), l));
            let mut at = rd;
            for v in out {
                w.set_r(at, l, v);
                at = next(at);
            }
        }
        Ok(())
    }

    /// `TLD4S`, `TLD4` (by slot) and `TLD4.B` (module essay).
    pub(super) fn gather(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        let scalar = i.form == Form::TLD4S;
        let bindless = i.form == Form::TLD4_B;
        let bound = if bindless {
            None
        } else {
            Some(self.slot_texture(i, addr)?)
        };
        use tld4::dim::{ARRAY_2D, ARRAY_CUBE, CUBE, V2D};
        let (offset, depth, dim) = if scalar {
            let opt = f(i, Field::Opt);
            use crate::sm50::values::tld4s::opt::{AOFFI, DC};
            (opt & AOFFI != 0, opt & DC != 0, V2D)
        } else {
            if f(i, Field::Off) > tld4::off::AOFFI || f(i, Field::Ndv) != 0 {
                return Err(unsupported(addr, i, "TLD4.PTP or .NDV"));
            }
            (
                f(i, Field::Off) == tld4::off::AOFFI,
                f(i, Field::Dc) != 0,
                f(i, Field::Dim),
            )
        };
        let cube = dim == CUBE || dim == ARRAY_CUBE;
        // Cube gathers: the general forms with no offsets or reference (as we emit them).
        let cube_ok = cube && !scalar && !offset && !depth;
        if !matches!(dim, V2D | ARRAY_2D) && !cube_ok {
            return Err(unsupported(addr, i, "this TLD4 target"));
        }
        let (ra, rb, rd) = (f(i, Field::Ra), f(i, Field::Rb), f(i, Field::Rd));
        let comp = f(i, Field::Comp) as u8;
        let next = |r: u64| if r >= 255 { 255 } else { r + 1 };
        let mut out = Vec::with_capacity(32);
        // (the quad leaders' handles as the instruction found them; none by slot)
        let held = if bound.is_none() {
            w.held(rb)
        } else {
            Regs::default()
        };
        for l in lanes(exec) {
            let r = |reg: u64| w.r(reg, l);
            // (layer, x, y) and the registers of rb after the handle.
            if cube {
                // CUBE {x, y, z}, ARRAY_CUBE {layer, x, y, z} from ra; rb the handle (.B).
                let mut at = ra;
                let mut layer = 0;
                if dim == ARRAY_CUBE {
                    layer = r(at);
                    at = next(at);
                }
                let c = [at, next(at), next(next(at))].map(|reg| f32::from_bits(r(reg)));
                let mut b = rb;
                let tex = self.lane_texture(bound.as_ref(), &held, l, exec, &mut b)?;
                let q = SampleQuery {
                    coords: c,
                    layer: layer.min(i32::MAX as u32) as i32,
                    ..Default::default()
                };
                out.push((l, tex.gather(comp, &q)));
                continue;
            }
            let (layer, x, y, mut b) = if scalar && !offset && !depth {
                (0, r(ra), r(rb), 255)
            } else if dim == ARRAY_2D {
                (r(ra), r(next(ra)), r(next(next(ra))), rb)
            } else {
                (0, r(ra), r(next(ra)), rb)
            };
            let tex = self.lane_texture(bound.as_ref(), &held, l, exec, &mut b)?;
            let mut q = SampleQuery {
                coords: [f32::from_bits(x), f32::from_bits(y), 0.0],
                layer: layer.min(i32::MAX as u32) as i32,
                ..Default::default()
            };
            if offset {
                let packed = r(b);
                q.offset = [gather_offset(packed), gather_offset(packed >> 8), 0];
                b = next(b);
            }
            if depth {
                q.depth_ref = Some(f32::from_bits(r(b)));
            }
            out.push((l, tex.gather(comp, &q)));
        }
        for (l, words) in out {
            if scalar {
                let rd2 = f(i, Field::Rd2);
                for (k, reg) in [rd, next(rd), rd2, next(rd2)].into_iter().enumerate() {
                    w.set_r(reg, l, words[k]);
                }
            } else {
                write_mask4(w, rd, f(i, Field::Mask), l, &words);
            }
        }
        Ok(())
    }
}

/// The handle word a `.B` fetch of `lane` uses: register `reg` of the lowest active lane of
/// `lane`'s quad (module essay, "One handle per quad").
/// `held`: the registers as the instruction found them (lanes before `lane` may already
/// have written their results over the leader's handle).
fn quad_handle(held: &Regs, reg: u64, lane: usize, exec: u32) -> u32 {
    let quad = exec >> (lane & !3) & 0xf;
    let leader = (lane & !3) + quad.trailing_zeros() as usize;
    held.r(reg, leader)
}

/// The general forms' results: component `k` of `words` for each bit `k` of `mask`, to
/// consecutive registers from `rd` (RZ stays RZ).
fn write_mask4(w: &mut Warp, rd: u64, mask: u64, lane: usize, words: &[u32; 4]) {
    let mut at = rd;
    for (k, &word) in words.iter().enumerate() {
        if mask >> k & 1 != 0 {
            w.set_r(at, lane, word);
            at = next_reg(at);
        }
    }
}

/// The general forms' `[ra, rb, rd, mask]` fields.
fn general_fields(i: &Inst) -> [u64; 4] {
    [Field::Ra, Field::Rb, Field::Rd, Field::Mask].map(|fl| f(i, fl))
}

/// The register after `r` in a vector (RZ stays RZ).
fn next_reg(r: u64) -> u64 {
    if r >= 255 {
        255
    } else {
        r + 1
    }
}
