//! `tex` and `txq` (declared from `build.rs`; the IR instruction is [`crate::ir::tex`]).
//!
//! In: a `tex.<shape>.v4.<f32|s32|u32>.<f32|s32>` instruction, `d, [t, {c..}]`, or a
//! `txq[.level].<width|height|depth>.b32 d, [t][, lod]`, where `t` is a module `.texref` (bound) or a
//! 64-bit register holding a texture object (bindless). Out: one `InstData::Texture` and
//! the writes of its results to the destinations. The padding element PTX adds to
//! 3-element coordinate vectors, and the unused ones of the old four-element form (PTX 1.x
//! wrote `tex.2d [t, {x, y, _, _}]`; ptxas 11.8 accepts it), are read (each must be a valid
//! operand) but dropped.
//! `tld4.<r|g|b|a>.<2d|a2d|cube|acube>.v4.<f32|s32|u32>.f32 d, [t, {c..}] {, {dx, dy}} {, ref}` gives a
//! `TexOp::Gather` whose operands are the coordinates, then the offset vector's two
//! elements, then the depth reference (which optional operands are present is told by their
//! kind: a vector is the offset, a scalar the reference).
//! `tex.level`/`tex.grad` and `tex` with an offset vector or a depth reference give a
//! `TexOp::SampleLod` (operand order in its documentation; the depth reference of
//! `tex.grad.1d` is read and dropped, as ptxas 11.8 drops it, except through a sampler).
//! `tex.2dms`/`tex.a2dms` give a
//! `TexOp::SampleMs` ([`ms`]); a texture and a sampler handle in registers, `[th, sh, {c}]`,
//! one combined bindless handle ([`sampler_reg`]).
//! `txq.<addr_mode_i|filter_mode|force_unnormalized_coords>` of a module `.samplerref`
//! gives a `TexOp::Query(TexQuery::Sampler(..))` of a `TexHandle::Sampler`
//! ([`crate::tex_table::samp`]).
//! A kernel's `.param .samplerref` is an entry of `Module::samplerrefs` too (with its
//! kernel and ordinal, declared with the parameters; [`crate::sampler`]), so `[t, s, {c}]`
//! with it is the same bound pair.
//! Everything else of the texture chapter (the other `txq` attributes) is refused with a
//! diagnostic naming what is missing.

mod ms;
mod sampler_reg;

use super::{FnBuilder, ModuleBuilder, Sym};
use crate::error::Span;
use crate::ir::tex::{TexHandle, TexLod, TexOp, TexQuery, TexShape, TexType};
use crate::ir::{Type, Value};
use crate::ptx::ast::{self, Instruction, Modifier, Operand};

/// The `txq` attributes of samplers (`.samplerref`, `.texmode_independent`), which ptxas 11.8
/// reads from the driver's sampler descriptor table; the texture attributes it reads from the
/// texture table are lowered ([`crate::tex_table`]).
const DRIVER_TABLE_QUERIES: &[&str] = &["force_unnormalized_coords"];

impl ModuleBuilder<'_> {
    /// A module `.texref` (or `.tex` space variable): the next slot of `Module::texrefs`.
    pub(super) fn declare_texref(&mut self, d: &ast::Declarator) -> Sym {
        let k = self.ir.texrefs.len() as u32;
        self.ir.texrefs.push(d.name.text.to_string());
        Sym::TexRef(k)
    }

    /// A module `.samplerref` and its initializer (`{ addr_mode_0 = wrap, ... }`): the next
    /// entry of `Module::samplerrefs` ([`crate::sampler`]). A field ptxas would not take is
    /// an error at the field.
    pub(super) fn declare_samplerref(&mut self, d: &ast::Declarator) -> Option<Sym> {
        use crate::sampler::{FieldValue, SamplerInit, SamplerRef};
        let mut init = SamplerInit::default();
        match &d.init {
            None => {}
            Some(ast::Init::Fields(fields, _)) => {
                for (name, value) in fields {
                    let v = match value {
                        ast::FieldValue::Word(w) => FieldValue::Word(&w.text),
                        ast::FieldValue::Int(i) => FieldValue::Int(*i),
                    };
                    if let Err(e) = init.set(&name.text, v) {
                        self.error(name.span, e);
                        return None;
                    }
                }
            }
            Some(other) => {
                self.error(
                    other.span(),
                    "a .samplerref takes { field = value, ... } as its initializer",
                );
                return None;
            }
        }
        let k = self.ir.samplerrefs.len() as u32;
        self.ir.samplerrefs.push(SamplerRef {
            name: d.name.text.to_string(),
            init,
            param: None,
        });
        Some(Sym::SamplerRef(k))
    }
}

impl FnBuilder<'_, '_> {
    /// The operands `t, s` of `[t, s, ...]` (`.texmode_independent`): a module `.texref`
    /// and a module `.samplerref` or a kernel's `.param .samplerref`, one bound pair
    /// ([`TexHandle::Paired`]). A module variable paired with a register is refused; two
    /// registers are [`sampler_reg`]'s.
    fn tex_sampler_pair(&mut self, t: &Operand, s: &Operand) -> Option<TexHandle> {
        let look = |b: &mut Self, op: &Operand| match op {
            Operand::Name(n) => b.lookup(n),
            _ => None,
        };
        match (look(self, t), look(self, s)) {
            (Some(Err(Sym::TexRef(tex))), Some(Err(Sym::SamplerRef(samp)))) => {
                Some(TexHandle::Paired { tex, samp })
            }
            (_, Some(Err(Sym::SamplerRef(_)))) => {
                self.error(
                    t.span(),
                    "leafold pairs a .samplerref with a module .texref only (a texture \
                     handle in a register with a sampler is not lowered)",
                );
                None
            }
            _ => {
                self.error(
                    s.span(),
                    "leafold takes a module .samplerref as the sampler operand (sampler \
                     handles in registers, which ptxas merges into the texture handle with \
                     SHL/BFI, are not lowered)",
                );
                None
            }
        }
    }

    /// The texture of a fetch `[t, c]` or `[t, s, c]` ([`tex_handle`](Self::tex_handle),
    /// [`tex_sampler_pair`](Self::tex_sampler_pair)).
    fn fetch_handle(
        &mut self,
        t: &Operand,
        samp: Option<&Operand>,
    ) -> Option<(TexHandle, Option<Value>)> {
        match samp {
            Some(s) if self.sampler_in_register(t, s) => self.tex_sampler_registers(t, s),
            Some(s) => Some((self.tex_sampler_pair(t, s)?, None)),
            None => self.tex_handle(t),
        }
    }

    /// The texture operand `t` of `[t, ...]`: a bound `.texref` or a bindless handle.
    fn tex_handle(&mut self, op: &Operand) -> Option<(TexHandle, Option<Value>)> {
        if let Operand::Name(n) = op {
            if let Some(Err(Sym::TexRef(k))) = self.lookup(n) {
                return Some((TexHandle::Bound(k), None));
            }
        }
        let h = self.read(op, Type::I64, Some(ast::Type::U64))?;
        Some((TexHandle::Bindless, Some(h)))
    }

    pub(super) fn texture(&mut self, ins: &Instruction) -> Option<()> {
        if let Some(array) = ms::ms_shape(ins) {
            return self.texture_ms(ins, array);
        }
        let mut shape = None;
        let mut lod = TexLod::Base;
        for m in &ins.mods {
            match m {
                Modifier::Flag(f) if shape.is_none() && TexShape::from_name(f).is_some() => {
                    shape = TexShape::from_name(f)
                }
                Modifier::Flag(f) if lod == TexLod::Base && (*f == "level" || *f == "grad") => {
                    lod = if *f == "level" {
                        TexLod::Level
                    } else {
                        TexLod::Grad
                    };
                }
                // `.base` is level 0, what `tex` without a level reads: ptxas 11.8 writes the
                // same instructions for both.
                Modifier::Flag(f) if lod == TexLod::Base && *f == "base" => {}
                Modifier::Type(_) | Modifier::Vec(4) => {}
                _ => {
                    let what = format!("leafold does not lower tex.{} yet", m.text());
                    return self.unsupported(ins, &what);
                }
            }
        }
        let Some(shape) = shape else {
            return self.unsupported(ins, "tex needs a geometry (.1d, .2d, ...)");
        };
        let types = ins.types();
        let (result, int_coords) = match types[..] {
            [d, c] => {
                let result = match d {
                    ast::Type::F32 => TexType::F32,
                    ast::Type::S32 => TexType::S32,
                    ast::Type::U32 => TexType::U32,
                    _ => return self.unsupported(ins, "tex results are .f32, .s32 or .u32"),
                };
                let int_coords = match c {
                    ast::Type::F32 => false,
                    ast::Type::S32 => true,
                    _ => return self.unsupported(ins, "tex coordinates are .f32 or .s32"),
                };
                (result, int_coords)
            }
            _ => return self.unsupported(ins, "tex needs a result and a coordinate type"),
        };
        if ins.vector() != Some(4) {
            return self.unsupported(ins, "tex needs .v4");
        }
        if matches!(shape, TexShape::Cube | TexShape::ACube) && int_coords {
            return self.unsupported(ins, "cube textures take .f32 coordinates");
        }
        let ops = &ins.operands[..];
        let (t, samp, items, span) = self.tex_operands(ins, 6)?;
        // PTX before ISA 2.x (and ptxas 11.8 still) takes four coordinates for every shape;
        // the ones past the shape's are ignored.
        if items.len() != shape.ptx_vector_len() && items.len() != 4 {
            self.error(
                span,
                format!(
                    "tex.{} takes {} coordinates, got {}",
                    shape.name(),
                    shape.ptx_vector_len(),
                    items.len()
                ),
            );
            return None;
        }
        let plain = lod == TexLod::Base && ops.len() == 2;
        // Through texture and sampler handles in registers (`TexHandle::Combined`), ptxas
        // 11.8 (`scripts/tex_sweep.py -H regpair`) keeps float tex.1d `TEX.B ... 1D` without
        // options and with them (`TEX.B{.LL}{.AOFFI}{.DC} 1D`, `TXD.B{.AOFFI} 1D`, the quad's
        // `TEX.B.DC.NDV 1D`), and samples integer coordinates through the sampler
        // (`I2F.F32.S32`, `TEX.B.LZ`). With options, integer coordinates with offsets alone
        // are sampled as floats on every shape but 1d (`TEX.B.LZ.AOFFI`,
        // `ir::tex::samples_integer_coords`); with a level or gradients, and 1d's, they are
        // fetched or sampled as through a texture object alone (`TLD.B.LZ.AOFFI`/`TLD.B.LL.CL`
        // 1D, `TXD.B`, `TEX.B.NDV`).
        let (handle, h) = self.fetch_handle(t, samp)?;
        let mut args: Vec<Value> = h.into_iter().collect();
        for (k, c) in items.iter().enumerate() {
            // The layer index of an array shape is always an integer (`.u32`).
            let it = if (shape.is_array() && k == 0) || int_coords {
                ast::Type::S32
            } else {
                ast::Type::F32
            };
            let v = self.read(c, Type::I32, Some(it))?;
            if k < shape.coords() {
                args.push(v);
            }
        }
        let op = if plain {
            TexOp::Sample {
                shape,
                result,
                int_coords,
            }
        } else {
            let (offset, mut depth) =
                self.tex_options(ins, &ops[2..], shape, lod, int_coords, &mut args)?;
            if depth
                && lod == TexLod::Grad
                && shape == TexShape::D1
                && !matches!(handle, TexHandle::Paired { .. } | TexHandle::Combined)
            {
                // ptxas 11.8 drops the reference of tex.grad.1d on a .texref or texture
                // object (TXD on 2D without .DC, no diagnostic; through a sampler, by slot
                // or in registers, it emulates the gradients across the quad with
                // TEX{.B}.DC.NDV 1D instead). The
                // reference is the operand before the two gradients.
                args.remove(args.len() - 3);
                depth = false;
            }
            if offset && shape.is_cube() {
                // ptxas 11.8 on tex.grad.cube: "Illegal modifier '.cube' for instruction
                // 'tex.grad'"; the other cube forms with offsets were not probed.
                return self.unsupported(
                    ins,
                    &format!("leafold does not lower tex.{} with offsets", shape.name()),
                );
            }
            if depth && shape == TexShape::D3 {
                // ptxas 11.8: "Illegal modifier '.3d' for instruction 'tex'".
                return self.unsupported(ins, "tex.3d takes no depth-compare reference");
            }
            TexOp::SampleLod {
                shape,
                result,
                int_coords,
                lod,
                offset,
                depth,
            }
        };
        self.texture_results(&ops[0], op, handle, &args, result)
    }

    /// A fetch's `[t, c]` operand: the texture, the coordinate items and their span; the
    /// instruction has 2 to `max` operands (`d`, `[t, c]`, the optional ones).
    fn tex_operands<'i>(
        &mut self,
        ins: &'i Instruction,
        max: usize,
    ) -> Option<(&'i Operand, Option<&'i Operand>, Vec<&'i Operand>, Span)> {
        if !(2..=max).contains(&ins.operands.len()) {
            self.unsupported(ins, "expected d, [t, c] and the optional operands");
            return None;
        }
        let Operand::TexArgs(targs, span) = &ins.operands[1] else {
            self.unsupported(ins, "expected [texture, {coordinates}]");
            return None;
        };
        let (t, samp, coords) = match &targs[..] {
            [t, coords] => (t, None, coords),
            [t, s, coords] => (t, Some(s), coords),
            _ => {
                self.unsupported(
                    ins,
                    "expected [texture, {coordinates}] or [texture, sampler, {coordinates}]",
                );
                return None;
            }
        };
        let items: Vec<&Operand> = match coords {
            Operand::Vector(items, _) => items.iter().collect(),
            one => vec![one],
        };
        Some((t, samp, items, *span))
    }

    /// The `InstData::Texture` of a fetch, its four results written to the `.v4`
    /// destination `d` (sign-extended for `.s32`).
    fn texture_results(
        &mut self,
        d: &Operand,
        op: TexOp,
        handle: TexHandle,
        args: &[Value],
        result: TexType,
    ) -> Option<()> {
        let dsts = self.dests(d)?;
        if dsts.len() != 4 {
            self.error(d.span(), "a texture fetch needs four destinations (.v4)");
            return None;
        }
        let values = self.ins().texture(op, handle, args);
        let signed = result == TexType::S32;
        for (dst, v) in dsts.into_iter().zip(values) {
            self.write(dst, v, signed, d.span())?;
        }
        Some(())
    }

    /// The operands of `tex` after `[t, c]`: the level (`.level`) or the two gradient
    /// vectors (`.grad`), then `{, offsets} {, reference}` (PTX's order; ptxas 11.8 refuses
    /// offsets before the level), appended to `args` as offsets, reference, then the level
    /// or gradients (`TexOp::SampleLod`); says whether the offsets and the reference are
    /// there.
    fn tex_options(
        &mut self,
        ins: &Instruction,
        extra: &[Operand],
        shape: TexShape,
        lod: TexLod,
        int_coords: bool,
        args: &mut Vec<Value>,
    ) -> Option<(bool, bool)> {
        let tail = match lod {
            TexLod::Base => 0,
            TexLod::Level => 1,
            TexLod::Grad => 2,
        };
        if extra.len() < tail {
            self.unsupported(ins, "tex.level takes a level, tex.grad two gradients");
            return None;
        }
        let (tail_ops, opts) = extra.split_at(tail);
        let d = shape.dims();
        // A vector of `d` elements (3-element ones padded to 4), or a scalar when d = 1.
        let elems = |o: &Operand, d: usize| -> Option<Vec<Operand>> {
            match o {
                Operand::Vector(items, _) if items.len() == d || (d == 3 && items.len() == 4) => {
                    Some(items[..d].to_vec())
                }
                Operand::Vector(..) => None,
                one if d == 1 => Some(vec![one.clone()]),
                _ => None,
            }
        };
        let (mut offset, mut depth) = (false, false);
        for o in opts {
            match o {
                Operand::Vector(..) if !offset && !depth => {
                    let Some(items) = elems(o, d) else {
                        self.error(o.span(), format!("the tex offset vector has {d} elements"));
                        return None;
                    };
                    for e in &items {
                        args.push(self.read(e, Type::I32, Some(ast::Type::S32))?);
                    }
                    offset = true;
                }
                _ if !depth && !matches!(o, Operand::Vector(..)) => {
                    args.push(self.read(o, Type::I32, Some(ast::Type::F32))?);
                    depth = true;
                }
                _ => {
                    self.error(o.span(), "tex takes an offset vector, then a reference");
                    return None;
                }
            }
        }
        match lod {
            TexLod::Base => {}
            TexLod::Level => {
                let it = if int_coords {
                    ast::Type::S32
                } else {
                    ast::Type::F32
                };
                args.push(self.read(&tail_ops[0], Type::I32, Some(it))?);
            }
            TexLod::Grad => {
                // A cube map's gradients have 3 elements (padded to 4).
                let d = shape.grad_dims();
                for g in tail_ops {
                    let Some(items) = elems(g, d) else {
                        self.error(g.span(), format!("a tex.grad gradient has {d} elements"));
                        return None;
                    };
                    for e in &items {
                        args.push(self.read(e, Type::I32, Some(ast::Type::F32))?);
                    }
                }
            }
        }
        Some((offset, depth))
    }

    /// `tld4.<comp>.<shape>.v4.<dtype>.f32 d, [t, {c..}] {, offsets} {, reference}`.
    pub(super) fn tld4(&mut self, ins: &Instruction) -> Option<()> {
        let (mut comp, mut shape) = (None, None);
        for m in &ins.mods {
            match m {
                Modifier::Flag(f) if comp.is_none() && ["r", "g", "b", "a"].contains(f) => {
                    comp = ["r", "g", "b", "a"].iter().position(|c| c == f)
                }
                Modifier::Flag(f) if shape.is_none() && TexShape::from_name(f).is_some() => {
                    shape = TexShape::from_name(f)
                }
                Modifier::Type(_) | Modifier::Vec(4) => {}
                _ => {
                    let what = format!("leafold does not lower tld4.{} yet", m.text());
                    return self.unsupported(ins, &what);
                }
            }
        }
        let (Some(comp), Some(shape)) = (comp, shape) else {
            return self.unsupported(ins, "tld4 needs a component (.r .g .b .a) and a geometry");
        };
        match shape {
            TexShape::D2 | TexShape::A2 | TexShape::Cube | TexShape::ACube => {}
            _ => return self.unsupported(ins, "tld4 takes .2d, .a2d, .cube or .acube"),
        }
        let result = match ins.types()[..] {
            [d, ast::Type::F32] => match d {
                ast::Type::F32 => TexType::F32,
                ast::Type::S32 => TexType::S32,
                ast::Type::U32 => TexType::U32,
                _ => return self.unsupported(ins, "tld4 results are .f32, .s32 or .u32"),
            },
            _ => return self.unsupported(ins, "tld4 needs a result type and .f32 coordinates"),
        };
        if ins.vector() != Some(4) {
            return self.unsupported(ins, "tld4 needs .v4");
        }
        let ops = &ins.operands[..];
        let (t, samp, items, span) = self.tex_operands(ins, 4)?;
        if items.len() != shape.ptx_vector_len() {
            self.error(
                span,
                format!(
                    "tld4.{} takes {} coordinates, got {}",
                    shape.name(),
                    shape.ptx_vector_len(),
                    items.len()
                ),
            );
            return None;
        }
        let (handle, h) = self.fetch_handle(t, samp)?;
        let mut args: Vec<Value> = h.into_iter().collect();
        for (k, c) in items.iter().take(shape.coords()).enumerate() {
            let it = if shape.is_array() && k == 0 {
                ast::Type::S32
            } else {
                ast::Type::F32
            };
            args.push(self.read(c, Type::I32, Some(it))?);
        }
        let (mut offset, mut depth) = (false, false);
        for extra in &ops[2..] {
            match extra {
                Operand::Vector(items, vspan) if !offset && !depth => {
                    if items.len() != 2 {
                        self.error(*vspan, "the tld4 offset vector has two elements (.v2.s32)");
                        return None;
                    }
                    for e in items {
                        args.push(self.read(e, Type::I32, Some(ast::Type::S32))?);
                    }
                    offset = true;
                }
                Operand::Vector(_, vspan) => {
                    self.error(*vspan, "the tld4 offset vector comes before the reference");
                    return None;
                }
                one if !depth => {
                    args.push(self.read(one, Type::I32, Some(ast::Type::F32))?);
                    depth = true;
                }
                other => {
                    self.error(other.span(), "tld4 takes one depth-compare reference");
                    return None;
                }
            }
        }
        let op = TexOp::Gather {
            comp: comp as u8,
            shape,
            result,
            offset,
            depth,
        };
        self.texture_results(&ops[0], op, handle, &args, result)
    }

    pub(super) fn txq(&mut self, ins: &Instruction) -> Option<()> {
        let mut query = None;
        let mut level = false;
        for m in &ins.mods {
            match m {
                Modifier::Flag(f) if query.is_none() && TexQuery::from_name(f).is_some() => {
                    query = TexQuery::from_name(f)
                }
                Modifier::Flag(f) if *f == "level" && query.is_none() && !level => level = true,
                Modifier::Type(ast::Type::B32) => {}
                Modifier::Flag(f) if query.is_none() && DRIVER_TABLE_QUERIES.contains(f) => {
                    query = crate::texture::TxqQuery::from_name(f).map(TexQuery::Sampler)
                }
                _ => {
                    let what = format!("leafold does not lower txq.{} yet", m.text());
                    return self.unsupported(ins, &what);
                }
            }
        }
        let Some(query) = query else {
            return self.unsupported(ins, "txq needs an attribute (.width, .height, .depth)");
        };
        if let (TexQuery::Table(q), true) = (query, level) {
            let what = format!(
                "txq.level takes .width, .height or .depth, not .{} (ptxas 11.8: \
                 \"Illegal query modifier for instruction 'txq.level'\")",
                crate::tex_table::query_name(q)
            );
            return self.unsupported(ins, &what);
        }
        let ops = self.ops(ins, if level { 3 } else { 2 })?;
        let t = match &ops[1] {
            Operand::TexArgs(targs, _) if targs.len() == 1 => &targs[0],
            Operand::Address(ast::AddrExpr {
                base: Some(n),
                offset: 0,
                ..
            }) => &Operand::Name(n.clone()),
            _ => return self.unsupported(ins, "expected [texture]"),
        };
        let t = t.clone();
        if let Some(r) = self.txq_sampler(ins, &t, query, level) {
            return r;
        }
        let (handle, h) = self.tex_handle(&t)?;
        let mut args: Vec<Value> = h.into_iter().collect();
        let op = if level {
            args.push(self.read(&ops[2], Type::I32, Some(ast::Type::S32))?);
            TexOp::QueryLevel(query)
        } else {
            TexOp::Query(query)
        };
        let dst = self.dest1(&ops[0])?;
        let v = self.ins().texture(op, handle, &args)[0];
        self.write(dst, v, false, ops[0].span())
    }

    /// `txq` of a sampler attribute of a module `.samplerref` (`Some`: handled, or refused
    /// with a diagnostic); `None` when `t` is no sampler. A `.samplerref` takes only the
    /// sampler attributes, and `force_unnormalized_coords` only a `.samplerref` (ptxas 11.8:
    /// "Argument 1 of instruction 'txq': .samplerref expected").
    fn txq_sampler(
        &mut self,
        ins: &Instruction,
        t: &Operand,
        query: TexQuery,
        level: bool,
    ) -> Option<Option<()>> {
        let samp = match t {
            Operand::Name(n) => match self.lookup(n) {
                Some(Err(Sym::SamplerRef(k))) => Some(k),
                _ => None,
            },
            _ => None,
        };
        let q = query.model();
        let Some(k) = samp else {
            if let TexQuery::Sampler(_) = query {
                let what = format!(
                    "txq.{} takes a .samplerref (ptxas 11.8: \"Argument 1 of instruction \
                     'txq': .samplerref expected\")",
                    query.name()
                );
                return Some(self.unsupported(ins, &what));
            }
            return None;
        };
        if level || crate::tex_table::samp::field_offset(q).is_none() {
            let what = format!(
                "txq{}.{} of a .samplerref: a sampler has only addr_mode_0..2, filter_mode \
                 and force_unnormalized_coords",
                if level { ".level" } else { "" },
                query.name()
            );
            return Some(self.unsupported(ins, &what));
        }
        let Some(ops) = self.ops(ins, 2) else {
            return Some(None);
        };
        let Some(dst) = self.dest1(&ops[0]) else {
            return Some(None);
        };
        let op = TexOp::Query(TexQuery::Sampler(q));
        let v = self.ins().texture(op, TexHandle::Sampler(k), &[])[0];
        Some(self.write(dst, v, false, ops[0].span()))
    }
}
