//! Texture instructions in the IR: PTX `tex` and `txq` (issue 21, the texture part).
//!
//! In: what `ir::build` reads from a `tex.<shape>.v4.<dtype>.<ctype>`, `txq.<query>.b32` or
//! `tld4.<comp>.<shape>.v4.<dtype>.f32` instruction. Out: one [`InstData::Texture`](super::InstData::Texture) `{ op, handle, args }`.
//!
//! * `handle` says which texture is read: [`TexHandle::Bound`] names a module `.texref`
//!   variable by its index in [`Module::texrefs`](super::Module::texrefs) (declaration order);
//!   [`TexHandle::Bindless`] takes the texture object from `args[0]`, an `i64` (a
//!   `cudaTextureObject_t` passed as a `.u64` parameter or loaded from memory);
//!   [`TexHandle::Combined`] too, a texture handle and a sampler handle in registers
//!   combined into one word (`.texmode_independent`), which samples integer coordinates
//!   through the sampler (below).
//! * The remaining `args` are the coordinates, each `i32` (float coordinates are `f32`
//!   bits, as every float is in the IR): [`TexShape::coords`] of them, in PTX order (for the
//!   array shapes the layer index comes first). PTX pads 3-element coordinate vectors to four
//!   (`{x, y, z, _}`); the padding element is dropped by `build`.
//! * Results: [`TexOp::Sample`] has four `i32` results, the texel's four components (`f32`
//!   bits, or integers for `.s32`/`.u32`); [`TexOp::Query`] has one `i32`, and so has
//!   [`TexOp::QueryLevel`] (`txq.level`), whose one coordinate is the mip level;
//!   [`TexOp::Gather`] four (one component of four texels), its offsets and depth
//!   reference after the coordinates.
//!
//! Semantics (evaluated by the texture model of `crate::texture` through the launch's
//! bindings): `Sample` with float coordinates filters the texture at `coords` with its
//! sampler state; with integer coordinates (`int_coords`) it reads the texel at those
//! integer coordinates (PTX: "integer coordinates ... are not normalized"), except through
//! a sampler ([`samples_integer_coords`]: a [`TexHandle::Combined`] handle on a shape other
//! than 1d, a [`TexHandle::Paired`] one on 2d, 3d and a2d), where ptxas 11.8 converts them
//! to floats (`I2F.F32.S32`) and samples there at level 0 with the sampler's state
//! (`TEXS.LZ`, `TEX.B.LZ`: normalization, filtering and address modes apply), and a 1d or
//! a1d fetch through a `clamp_to_edge` sampler clamps ([`clamps_integer_coords`]); so does
//! `SampleLod` with integer coordinates and `.level` or offsets. `SampleLod` with `.grad`
//! and integer coordinates is the exception, decided by what ptxas 11.8's code does (our
//! semantics are those of ptxas's SASS): it hands the integers' bits to `TXD` unconverted,
//! so the texture unit filters at the float coordinates whose bits the integers are
//! (`f32::from_bits`; the layer of the array shapes stays an integer), with the gradients'
//! level of detail (`build` drops the depth reference of `tex.grad.1d` on a `.texref` or
//! texture object, as ptxas 11.8 does). `Query` reads
//! one attribute of the bound texture (its width, height or depth).
//! Invariant: a `Sample`'s result type and coordinate kind are those PTX allows for `tex`
//! (`.f32`/`.s32`/`.u32` results; `.f32` or `.s32` coordinates).

use crate::sm50::PARAM_BASE;

/// The dimensionality of a texture access (PTX `.1d` .. `.acube`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TexShape {
    D1,
    D2,
    D3,
    A1,
    A2,
    Cube,
    ACube,
}

impl TexShape {
    pub fn from_name(s: &str) -> Option<TexShape> {
        Some(match s {
            "1d" => TexShape::D1,
            "2d" => TexShape::D2,
            "3d" => TexShape::D3,
            "a1d" => TexShape::A1,
            "a2d" => TexShape::A2,
            "cube" => TexShape::Cube,
            "acube" => TexShape::ACube,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TexShape::D1 => "1d",
            TexShape::D2 => "2d",
            TexShape::D3 => "3d",
            TexShape::A1 => "a1d",
            TexShape::A2 => "a2d",
            TexShape::Cube => "cube",
            TexShape::ACube => "acube",
        }
    }

    /// The coordinates the IR instruction carries (layer first for the array shapes).
    pub fn coords(self) -> usize {
        match self {
            TexShape::D1 => 1,
            TexShape::D2 | TexShape::A1 => 2,
            TexShape::D3 | TexShape::A2 | TexShape::Cube => 3,
            TexShape::ACube => 4,
        }
    }

    /// The length of the PTX coordinate vector (3-element vectors are padded to 4).
    pub fn ptx_vector_len(self) -> usize {
        match self.coords() {
            3 => 4,
            n => n,
        }
    }

    /// An array shape (its first coordinate is an integer layer index).
    pub fn is_array(self) -> bool {
        matches!(self, TexShape::A1 | TexShape::A2 | TexShape::ACube)
    }
}

/// How `tex` interprets its four result components.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TexType {
    F32,
    S32,
    U32,
}

impl TexType {
    pub fn name(self) -> &'static str {
        match self {
            TexType::F32 => "f32",
            TexType::S32 => "s32",
            TexType::U32 => "u32",
        }
    }
}

/// A `txq` attribute.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TexQuery {
    Width,
    Height,
    Depth,
    /// An attribute ptxas reads from the driver's descriptor table ([`crate::tex_table`]),
    /// not the texture header.
    Table(crate::texture::TxqQuery),
    /// A sampler attribute of a `.samplerref` ([`TexHandle::Sampler`]), read from the
    /// driver's sampler table ([`crate::tex_table::samp`]).
    Sampler(crate::texture::TxqQuery),
}

impl TexQuery {
    pub fn from_name(s: &str) -> Option<TexQuery> {
        Some(match s {
            "width" => TexQuery::Width,
            "height" => TexQuery::Height,
            "depth" => TexQuery::Depth,
            _ => {
                let q = crate::texture::TxqQuery::from_name(s)?;
                crate::tex_table::field_offset(q)?;
                TexQuery::Table(q)
            }
        })
    }

    /// The texture model's name of this attribute.
    pub fn model(self) -> crate::texture::TxqQuery {
        match self {
            TexQuery::Width => crate::texture::TxqQuery::Width,
            TexQuery::Height => crate::texture::TxqQuery::Height,
            TexQuery::Depth => crate::texture::TxqQuery::Depth,
            TexQuery::Table(q) | TexQuery::Sampler(q) => q,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TexQuery::Width => "width",
            TexQuery::Height => "height",
            TexQuery::Depth => "depth",
            TexQuery::Table(q) | TexQuery::Sampler(q) => crate::tex_table::query_name(q),
        }
    }
}

/// What a texture instruction does.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TexOp {
    /// `tex.<shape>.v4.<result>.<f32|s32>`: four components at the coordinates.
    Sample {
        shape: TexShape,
        result: TexType,
        int_coords: bool,
    },
    /// `txq.<query>.b32`.
    Query(TexQuery),
    /// `txq.level.<query>.b32 d, [t], lod`: the size of mip level `lod` (the one
    /// coordinate operand, `i32`; a level past the last reads 0).
    QueryLevel(TexQuery),
    /// `tld4.<comp>.<shape>.v4.<result>.f32`: component `comp` (0 r .. 3 a) of the four
    /// texels of the bilinear footprint. Operands after the handle: the shape's float
    /// coordinates (layer first for `a2d`), then with `offset` the two integer texel
    /// offsets, then with `depth` the depth-compare reference (`f32` bits).
    Gather {
        comp: u8,
        shape: TexShape,
        result: TexType,
        offset: bool,
        depth: bool,
    },
    /// `tex` with options: `tex{.level|.grad}.<shape>.v4.<result>.<ctype>`, with an offset
    /// vector and/or a depth-compare reference. Operands after the handle: the coordinates
    /// (as `Sample`), with `offset` one integer offset per dimension of the shape, with
    /// `depth` the reference (`f32` bits), then the level of detail (`Level`: one, `f32`
    /// bits or an integer for integer coordinates) or the gradients (`Grad`: d/dx then
    /// d/dy, one per dimension each).
    SampleLod {
        shape: TexShape,
        result: TexType,
        int_coords: bool,
        lod: TexLod,
        offset: bool,
        depth: bool,
    },
    /// `tex.2dms`/`tex.a2dms` `.v4.<result>.s32`: one sample of a multisample texel
    /// (`crate::texture::Texture::fetch_ms`). Operands after the handle, in PTX's order:
    /// the sample index, the layer (`array`: `a2dms`), x, y, all integers (2dms's fourth,
    /// unused vector element is dropped by `build`).
    SampleMs { array: bool, result: TexType },
}

/// How `TexOp::SampleLod` picks the level of detail.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TexLod {
    /// Level 0 (no `.level`/`.grad`).
    Base,
    /// `.level`: an explicit level of detail.
    Level,
    /// `.grad`: the coordinates' derivatives.
    Grad,
}

impl TexShape {
    /// Dimensions addressed within one layer (1, 2 or 3): the length of an offset and of
    /// each gradient.
    pub fn dims(self) -> usize {
        match self {
            TexShape::D1 | TexShape::A1 => 1,
            TexShape::D2 | TexShape::A2 | TexShape::Cube | TexShape::ACube => 2,
            TexShape::D3 => 3,
        }
    }

    /// The elements of each `tex.grad` gradient: [`dims`](Self::dims), but a cube map's
    /// gradients are derivatives of its 3-component direction.
    pub fn grad_dims(self) -> usize {
        match self {
            TexShape::Cube | TexShape::ACube => 3,
            other => other.dims(),
        }
    }

    /// `.cube` or `.acube`.
    pub fn is_cube(self) -> bool {
        matches!(self, TexShape::Cube | TexShape::ACube)
    }
}

impl TexOp {
    /// The number of results (all `i32`).
    pub fn results(self) -> usize {
        match self {
            TexOp::Sample { .. }
            | TexOp::Gather { .. }
            | TexOp::SampleLod { .. }
            | TexOp::SampleMs { .. } => 4,
            TexOp::Query(_) | TexOp::QueryLevel(_) => 1,
        }
    }

    /// The number of coordinate operands (after the bindless handle, if any).
    pub fn coords(self) -> usize {
        match self {
            TexOp::Sample { shape, .. } => shape.coords(),
            TexOp::Query(_) => 0,
            TexOp::QueryLevel(_) => 1,
            TexOp::Gather {
                shape,
                offset,
                depth,
                ..
            } => shape.coords() + 2 * usize::from(offset) + usize::from(depth),
            TexOp::SampleLod {
                shape,
                lod,
                offset,
                depth,
                ..
            } => {
                let d = shape.dims();
                let lod = match lod {
                    TexLod::Base => 0,
                    TexLod::Level => 1,
                    TexLod::Grad => 2 * shape.grad_dims(),
                };
                shape.coords() + d * usize::from(offset) + usize::from(depth) + lod
            }
            TexOp::SampleMs { array, .. } => 3 + usize::from(array),
        }
    }
}

/// A `tld4` texel offset as the hardware reads it: ptxas 11.8 packs the offset vector into
/// one register with `BFI` (x in bits 0..5, y in bits 8..13) and `TLD4` takes each as a
/// 6-bit signed number, so an offset outside -32..31 wraps.
pub fn gather_offset(v: u32) -> i32 {
    ((v << 26) as i32) >> 26
}

/// A `tex` texel offset as the hardware reads it: ptxas 11.8 packs `tex`'s offset vector
/// with `BFI` 4 bits apart (x in bits 0..3, y in bits 4..7), each a 4-bit signed number, so
/// an offset outside -8..7 wraps.
pub fn sample_offset(v: u32) -> i32 {
    ((v << 28) as i32) >> 28
}

/// Which texture an instruction reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TexHandle {
    /// A module `.texref`, by index in `Module::texrefs`.
    Bound(u32),
    /// The texture object in the instruction's first operand (`i64`).
    Bindless,
    /// `.texmode_independent`: a texture handle and a sampler handle in registers, combined
    /// into one `.B` handle word in the first operand (`i64`, `ir::build::tex::sampler_reg`).
    /// As [`TexHandle::Bindless`], except what ptxas 11.8 writes for two forms and hence
    /// what they mean: `tex.1d` with float coordinates samples 1D `{x}` (not 2D `{x, 0}`),
    /// and integer coordinates on the other shapes are converted to floats (`I2F.F32.S32`)
    /// and sampled at level 0 through the sampler (`TEX.B.LZ`), not fetched as texels.
    Combined,
    /// `.texmode_independent`: a module `.texref` (index in `Module::texrefs`) read through
    /// a `.samplerref` (index in `Module::samplerrefs`: a module variable or a kernel's
    /// `.param .samplerref`, [`crate::sampler`]); the pair has one slot word.
    Paired { tex: u32, samp: u32 },
    /// `.texmode_independent`: a module `.samplerref` alone (index in
    /// `Module::samplerrefs`), for `txq` of a sampler attribute ([`TexQuery::Sampler`],
    /// [`crate::tex_table::samp`]); it has its own slot word.
    Sampler(u32),
}

impl TexHandle {
    /// Bound by a word of constant bank 0 after the parameters ([`bound_textures`]).
    pub fn is_bound(self) -> bool {
        !self.in_register()
    }

    /// The texture (and sampler) in the instruction's first operand, a register.
    pub fn in_register(self) -> bool {
        matches!(self, TexHandle::Bindless | TexHandle::Combined)
    }
}

/// The module `.texref`s `f` reads, by index in `Module::texrefs`, in the order of their
/// first use (block layout order, then instruction order): ptxas 11.8 gives each its own word
/// of constant bank 0 after the parameters in this order, where the driver writes the
/// texture's header index (`R_CUDA_TEX_HEADER_INDEX`); `TEXS`/`TLDS`/`TXQ` name that word by
/// its index (byte offset / 4).
///
/// In `.texmode_independent` each (texture, sampler) pair ([`TexHandle::Paired`]) is one
/// entry, in the same first-use order (ptxas 11.8).
///
/// A sampler queried alone ([`TexHandle::Sampler`]) shares the word of a pair with that
/// sampler where the kernel has one ([`slot_handle`]), else has its own entry.
pub fn bound_textures(f: &super::Function) -> Vec<TexHandle> {
    let mut out: Vec<TexHandle> = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            if let super::InstData::Texture { handle, .. } = f.insts[i].data {
                let handle = slot_handle(f, handle);
                if handle.is_bound() && !out.contains(&handle) {
                    out.push(handle);
                }
            }
        }
    }
    out
}

/// The entry of [`bound_textures`] whose word `h` reads: for a sampler alone, the first
/// (layout order) pair of `f` with that sampler, whose word the driver also writes the
/// sampler's index into (ptxas 11.8 reads a queried sampler from such a word, even one
/// first used after the `txq`); otherwise `h`.
pub fn slot_handle(f: &super::Function, h: TexHandle) -> TexHandle {
    let TexHandle::Sampler(s) = h else {
        return h;
    };
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            if let super::InstData::Texture { handle, .. } = f.insts[i].data {
                if matches!(handle, TexHandle::Paired { samp, .. } if samp == s) {
                    return handle;
                }
            }
        }
    }
    h
}

/// The byte offset in constant bank 0 of the word of `f`'s `k`-th bound texture (in
/// [`bound_textures`] order): after the parameters, from the next 4-byte boundary.
pub fn bound_slot_offset(f: &super::Function, k: usize) -> u32 {
    let end = f
        .params
        .iter()
        .map(|p| p.offset + p.size)
        .max()
        .unwrap_or(0);
    (PARAM_BASE + end).next_multiple_of(4) + 4 * k as u32
}

/// The byte offset in constant bank 0 of the kernel parameter at `param_offset` (a bindless
/// texture object passed as a `.u64` parameter is read from there, like a bound texture's
/// slot).
pub fn param_cbank_offset(param_offset: u32) -> u32 {
    PARAM_BASE + param_offset
}

/// The layer and the (up to three) coordinate words of a texture instruction's operands
/// `words` (after the handle): the array shapes' layer comes first, and PTX reads it as
/// `.u32` (a negative one is a huge index, clamped like any other past the last layer).
/// A cube direction comes back projected as ptxas projects it.
fn layer_and_coords(shape: TexShape, words: &[u64]) -> (i32, [u32; 3]) {
    let (layer, c) = layer_and_raw_coords(shape, words);
    if shape.is_cube() {
        // The direction as ptxas's projection hands it to the unit (texture::cube_project).
        let v = crate::texture::cube_project(c.map(f32::from_bits));
        return (layer, v.map(f32::to_bits));
    }
    (layer, c)
}

/// [`layer_and_coords`] without the cube projection (the operands as PTX gives them).
fn layer_and_raw_coords(shape: TexShape, words: &[u64]) -> (i32, [u32; 3]) {
    let word = |k: usize| words.get(k).map_or(0, |&v| v as u32);
    let (layer, first) = if shape.is_array() {
        (word(0).min(i32::MAX as u32) as i32, 1)
    } else {
        (0, 0)
    };
    let n = shape.coords() - first;
    let c = |k: usize| if k < n { word(first + k) } else { 0 };
    (layer, [c(0), c(1), c(2)])
}

/// What a texture instruction returns ([`TexOp::results`] words), for `ir::eval`: `args` are
/// the instruction's operand values (the bindless handle first), `texrefs` the module's
/// `.texref` names, `bindings` the launch's textures. A texture the launch does not bind is
/// an error (its message names it).
pub fn eval(
    op: TexOp,
    handle: TexHandle,
    args: &[u64],
    texrefs: &[String],
    samplers: &[crate::sampler::SamplerRef],
    bindings: &crate::texture::TextureBindings,
) -> Result<[u32; 4], String> {
    use std::borrow::Cow;
    let named = |k: u32| {
        let name = texrefs
            .get(k as usize)
            .ok_or_else(|| format!("texture {k} is not declared"))?;
        bindings
            .by_name(name)
            .ok_or_else(|| format!("texture '{name}' is not bound in the launch"))
    };
    let (tex, coords) = match handle {
        TexHandle::Sampler(k) => {
            let s = samplers
                .get(k as usize)
                .ok_or_else(|| format!("sampler {k} is not declared"))?;
            let TexOp::Query(q) = op else {
                return Err("a sampler alone is only queried".to_string());
            };
            let v = crate::tex_table::samp::query(&s.init, q.model())
                .ok_or_else(|| format!("txq.{} is not a sampler attribute", q.name()))?;
            return Ok([v, 0, 0, 0]);
        }
        TexHandle::Bound(k) => (Cow::Borrowed(named(k)?), args),
        TexHandle::Bindless | TexHandle::Combined => {
            let h = args[0];
            let t = bindings
                .by_handle(h)
                .ok_or_else(|| format!("no texture object has handle {h:#x}"))?;
            (Cow::Borrowed(t), &args[1..])
        }
        TexHandle::Paired { tex, samp } => {
            let s = samplers
                .get(samp as usize)
                .ok_or_else(|| format!("sampler {samp} is not declared"))?;
            (Cow::Owned(s.init.texture(named(tex)?)?), args)
        }
    };
    let word = |k: usize| coords.get(k).map_or(0, |&v| v as u32);
    match op {
        TexOp::Query(q) => Ok([tex.query(q.model(), 0), 0, 0, 0]),
        TexOp::QueryLevel(q) => Ok([tex.query(q.model(), word(0)), 0, 0, 0]),
        TexOp::Sample {
            shape, int_coords, ..
        } => {
            let (layer, c) = layer_and_coords(shape, coords);
            if int_coords && samples_integer_coords(handle, shape) {
                // Through a sampler: the integers as floats, sampled at level 0.
                let q = crate::texture::SampleQuery {
                    coords: c.map(|v| v as i32 as f32),
                    layer,
                    ..Default::default()
                };
                Ok(tex.sample(&q))
            } else if int_coords {
                let at = [c[0] as i32, c[1] as i32, c[2] as i32, layer];
                if clamps_integer_coords(handle, shape, samplers) {
                    Ok(tex.fetch_clamped(at, 0))
                } else {
                    Ok(tex.fetch(at, 0))
                }
            } else {
                let q = crate::texture::SampleQuery {
                    coords: c.map(f32::from_bits),
                    layer,
                    ..Default::default()
                };
                Ok(tex.sample(&q))
            }
        }
        TexOp::Gather {
            comp,
            shape,
            offset,
            depth,
            ..
        } => {
            let (layer, c) = layer_and_coords(shape, coords);
            let mut q = crate::texture::SampleQuery {
                coords: c.map(f32::from_bits),
                layer,
                ..Default::default()
            };
            let mut next = shape.coords();
            if offset {
                q.offset = [gather_offset(word(next)), gather_offset(word(next + 1)), 0];
                next += 2;
            }
            if depth {
                q.depth_ref = Some(f32::from_bits(word(next)));
            }
            Ok(tex.gather(comp, &q))
        }
        TexOp::SampleLod {
            shape,
            int_coords,
            lod,
            offset,
            depth,
            ..
        } => {
            // A cube direction with gradients is projected per quad lane below.
            let cube_grad = shape.is_cube() && lod == TexLod::Grad;
            let (layer, mut c) = if cube_grad {
                layer_and_raw_coords(shape, coords)
            } else {
                layer_and_coords(shape, coords)
            };
            let d = shape.dims();
            let mut next = shape.coords();
            let mut off = [0i32; 3];
            if offset {
                for (k, o) in off.iter_mut().enumerate().take(d) {
                    *o = sample_offset(word(next + k));
                }
                next += d;
            }
            let depth_ref = if depth {
                next += 1;
                Some(f32::from_bits(word(next - 1)))
            } else {
                None
            };
            // Integer coordinates with offsets alone through a sampler are sampled as
            // floats (`samples_integer_coords`; `I2F.F32.S32`, not the layer) at level 0.
            let through_sampler =
                int_coords && lod == TexLod::Base && samples_integer_coords(handle, shape);
            if through_sampler {
                let n = shape.coords() - usize::from(shape.is_array());
                for w in &mut c[..n] {
                    *w = (*w as i32 as f32).to_bits();
                }
            }
            // `.grad` with integer coordinates samples at the floats whose bits they are
            // (module essay), the float path below.
            if int_coords && lod != TexLod::Grad && !through_sampler {
                let level = if lod == TexLod::Level {
                    word(next) as i32
                } else {
                    0
                };
                // Offsets move the texel (`TLD.AOFFI`), wrapped to 4 bits as the others.
                let at = |k: usize| (c[k] as i32).wrapping_add(off[k]);
                return Ok(tex.fetch([at(0), at(1), at(2), layer], level));
            }
            let g = |k: usize| f32::from_bits(word(next + k));
            let lod = match lod {
                TexLod::Base => crate::texture::Lod::Base,
                TexLod::Level => crate::texture::Lod::Level(g(0)),
                TexLod::Grad if cube_grad => {
                    // ptxas 11.8 emulates them across the quad and projects each lane's
                    // perturbed direction (`texture::quad_cube_gradient`).
                    let dx = [0, 1, 2].map(g);
                    let dy = [3, 4, 5].map(g);
                    let (p, lod) =
                        crate::texture::quad_cube_gradient(c.map(f32::from_bits), dx, dy);
                    c = p.map(f32::to_bits);
                    lod
                }
                TexLod::Grad => {
                    let mut dx = [0f32; 3];
                    let mut dy = [0f32; 3];
                    // The forms ptxas emulates across the quad see the gradients as the
                    // differences of the quad's perturbed coordinates (`quad_gradient`).
                    let quad = quad_emulated_grad(shape, int_coords, depth_ref.is_some());
                    for k in 0..d {
                        dx[k] = g(k);
                        dy[k] = g(d + k);
                        if quad {
                            let ck = f32::from_bits(c[k]);
                            dx[k] = crate::texture::quad_gradient(ck, dx[k]);
                            dy[k] = crate::texture::quad_gradient(ck, dy[k]);
                        }
                    }
                    crate::texture::Lod::Grad { dx, dy }
                }
            };
            let q = crate::texture::SampleQuery {
                coords: c.map(f32::from_bits),
                layer,
                lod,
                offset: off,
                depth_ref,
            };
            Ok(tex.sample(&q))
        }
        TexOp::SampleMs { array, .. } => {
            let s = |k: usize| word(k) as i32;
            let (layer, x) = if array { (s(1), 2) } else { (0, 1) };
            Ok(tex.fetch_ms(s(x), s(x + 1), layer, s(0)))
        }
    }
}

/// Where the texture object `h` comes from, as `verify` names it: the `.u64` parameter that
/// holds it (`h`), or the word `OFF` bytes past where pointer parameter `p` points, for an
/// object the kernel loads from memory at a constant offset (`p+OFF`; `ld.global.u64 h,
/// [p+OFF]`, through `cvta` and constant additions). `None` for any other source (an
/// address that depends on the thread, a computed handle).
pub fn handle_source(f: &super::Function, h: super::Value) -> Option<String> {
    use super::{BinaryOp, InstData};
    let def = |v: super::Value| match f.values[v].def {
        super::ValueDef::Result(d, _) => Some(&f.insts[d].data),
        super::ValueDef::Param(..) => None,
    };
    let param_at = |offset: u32| f.params.iter().find(|p| p.offset == offset);
    match *def(h)? {
        InstData::LoadParam { offset, .. } => Some(param_at(offset)?.name.clone()),
        InstData::Load {
            ty: super::Type::I64,
            width: 1,
            addr,
            offset,
            ..
        } => {
            // Walk the address back to a parameter, adding up constant displacements.
            let (mut v, mut off) = (addr, i64::from(offset));
            loop {
                match *def(v)? {
                    InstData::LoadParam { offset, .. } => {
                        let p = param_at(offset)?;
                        return (off >= 0 && p.size == 8).then(|| format!("{}+{off}", p.name));
                    }
                    InstData::Cvta { arg, .. } => v = arg,
                    InstData::Binary {
                        op: BinaryOp::Add,
                        args: [a, b],
                    } => {
                        let imm = |x: super::Value| match def(x) {
                            Some(&InstData::Iconst { imm, .. }) => Some(imm as i64),
                            _ => None,
                        };
                        if let Some(k) = imm(b) {
                            (v, off) = (a, off.wrapping_add(k));
                        } else if let Some(k) = imm(a) {
                            (v, off) = (b, off.wrapping_add(k));
                        } else {
                            return None;
                        }
                    }
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

/// The textures kernel `f` reads, for `verify` to bind ([`crate::texture::launch`]): each
/// bound `.texref` by name, each texture object by where it comes from ([`handle_source`]:
/// the `.u64` parameter that holds it, or `p+OFF` for one loaded from a buffer), with the
/// shape and result kind of the first `tex` that reads it (those of sampling instructions
/// first: a texture only `txq` reads is a 2D one of float texels). A texture object from
/// anywhere else is left out (the launch then has no texture for its handle: an error on
/// both sides).
pub fn texture_needs(
    module: &super::Module,
    f: &super::Function,
) -> Vec<crate::texture::launch::TextureNeed> {
    use crate::texture::launch::TextureNeed;
    use crate::texture::{ResultKind, Shape};
    let mut samples = Vec::new();
    let mut queries = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let super::InstData::Texture {
                op,
                handle,
                ref args,
            } = f.insts[i].data
            else {
                continue;
            };
            let (name, object) = match handle {
                TexHandle::Bound(k) | TexHandle::Paired { tex: k, .. } => {
                    match module.texrefs.get(k as usize) {
                        Some(n) => (n.clone(), false),
                        None => continue,
                    }
                }
                TexHandle::Sampler(_) => continue,
                TexHandle::Bindless | TexHandle::Combined => match handle_source(f, args[0]) {
                    Some(name) => (name, true),
                    None => continue,
                },
            };
            match op {
                TexOp::Sample { shape, result, .. }
                | TexOp::Gather { shape, result, .. }
                | TexOp::SampleLod { shape, result, .. } => samples.push(TextureNeed {
                    name,
                    object,
                    shape: match shape {
                        TexShape::D1 => Shape::D1,
                        TexShape::D2 => Shape::D2,
                        TexShape::D3 => Shape::D3,
                        TexShape::A1 => Shape::A1,
                        TexShape::A2 => Shape::A2,
                        TexShape::Cube => Shape::Cube,
                        TexShape::ACube => Shape::ACube,
                    },
                    kind: result_kind(result),
                    samples: 1,
                }),
                TexOp::Query(_) | TexOp::QueryLevel(_) => queries.push(TextureNeed {
                    name,
                    object,
                    shape: Shape::D2,
                    kind: ResultKind::Float,
                    samples: 1,
                }),
                TexOp::SampleMs { array, result } => samples.push(TextureNeed {
                    name,
                    object,
                    shape: if array { Shape::A2 } else { Shape::D2 },
                    kind: result_kind(result),
                    samples: crate::texture::launch::DEFAULT_SAMPLES,
                }),
            }
        }
    }
    samples.extend(queries);
    samples
}

/// What a fetch's result type suggests the texels are ([`texture_needs`]).
fn result_kind(result: TexType) -> crate::texture::ResultKind {
    use crate::texture::ResultKind;
    match result {
        TexType::F32 => ResultKind::Float,
        TexType::S32 => ResultKind::Signed,
        TexType::U32 => ResultKind::Unsigned,
    }
}

/// Whether a `tex` with integer coordinates and no options (or offsets alone: then
/// `TEX{.B}.LZ.AOFFI`) on `shape` through `handle` samples them through a sampler as floats
/// (`I2F.F32.S32`, then `TEXS.LZ` or `TEX.B.LZ`: ptxas 11.8) instead of fetching texels: a combined handle in a register on every shape
/// but 1d, a `.texref`/`.samplerref` pair on 2d, 3d and a2d (1d and a1d stay `TLDS.LZ` /
/// `TLD.LZ` there).
pub fn samples_integer_coords(handle: TexHandle, shape: TexShape) -> bool {
    match handle {
        TexHandle::Combined => shape != TexShape::D1,
        TexHandle::Paired { .. } => matches!(shape, TexShape::D2 | TexShape::D3 | TexShape::A2),
        _ => false,
    }
}

/// Whether a texel fetch (`tex` with integer coordinates, no options) on `shape` through
/// `handle` clamps its coordinates to the texture's edge: a 1d or a1d fetch through a
/// `.samplerref` whose initializer sets `addr_mode_0 = clamp_to_edge` (`samplers`: the
/// module's), which ptxas 11.8 writes `TLD.LZ.CL` (other modes `TLDS.LZ`/`TLD.LZ`).
///
/// The model of `.CL` (not measured on a GPU): the fetch's coordinates clamped to the
/// level's edge, OpenCL's `CLK_ADDRESS_CLAMP_TO_EDGE` for unnormalized integer coordinates
/// (`.texmode_independent` is OpenCL's mode); without it an out-of-range fetch reads zero
/// (`Texture::fetch`). ptxas also sets `.CL` on every `TLD.LL` (`tex.level` with integer
/// coordinates) whatever the texture's state, which says nothing about address modes: the
/// simulator reads `.CL` there as before (out of range reads zero).
pub fn clamps_integer_coords(
    handle: TexHandle,
    shape: TexShape,
    samplers: &[crate::sampler::SamplerRef],
) -> bool {
    match handle {
        TexHandle::Paired { samp, .. } if matches!(shape, TexShape::D1 | TexShape::A1) => samplers
            .get(samp as usize)
            .is_some_and(|s| s.init.clamps_to_edge(0)),
        _ => false,
    }
}

/// Whether ptxas 11.8 emulates `tex.grad` of this form across each quad (SAM/RAM,
/// `FSWZADD.NDV`, `TEX.NDV`: `lower::select::tex::quad`) instead of using `TXD`: 3d (float
/// coordinates, or integer ones taken as the floats whose bits they are), or with a depth
/// reference on 1d/2d/a1d/a2d (float coordinates; cube maps too, which leafold does not
/// lower).
pub fn quad_emulated_grad(shape: TexShape, int_coords: bool, depth: bool) -> bool {
    !matches!(shape, TexShape::Cube | TexShape::ACube)
        && (shape == TexShape::D3 || (depth && !int_coords))
}
