//! PTX `suld.b`, `sust.b` and `sured.b` → [`InstData::Surface`](crate::ir::InstData::Surface)
//! (the model: [`crate::surface`]).
//!
//! In: one instruction, `suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}{.trap,.clamp,
//! .zero} d, [s, {coords}]`, `sust.b… [s, {coords}], {values}` or
//! `sured.b.op.{1d,2d,3d}.type{.clamp} [s, {coords}], value`, where `s` is a module
//! `.surfref` or a `.u64` surface object (bindless). Out: one `InstData::Surface` with the
//! coordinates in the hardware's order (x in bytes, y, then z or the layer: PTX puts an
//! array's layer first) and the data packed as `SULD`/`SUST` move it:
//!
//! * `.v2.b8` and `.v4.b8`, `.v2.b16` are one 16- or 32-bit element (ptxas 11.8's `U16` and
//!   32-bit forms: the bytes little-endian, element 0 lowest), `.v4.b16` two 32-bit ones;
//!   other vectors stay as they are (`.v2.b32` is `64`, `.v4.b32` and `.v2.b64` are `128`).
//! * The clamp mode defaults to `.trap` (PTX's default).
//!
//! `sust.p.{1d,2d,3d,a1d,a2d}{.v2,.v4}.b32.{trap,clamp,zero}` (ptxas 11.8 accepts only
//! `.b32` and requires the clamp mode) is [`SurfOp::StoreFormatted`]: x in elements, the
//! values unpacked (one `I32` each, R, G, B, A), converted by the surface's format.
//!
//! `suq.<attribute>.b32 d, [s]` is [`SurfOp::Query`] (no coordinates, one `I32` result).
//!
//! `sured.p.{add,min,max,and,or}.{1d,2d,3d}.b32` is [`SurfOp::RedFormatted`] (x in
//! elements; ptxas 11.8 refuses other types, and so do we, with its words; the array
//! shapes, which it refuses too, the opcode table does not list for `sured`).
//!
//! Refused with a diagnostic: `suld.p` (ptxas 11.8 has no `suld.p` for sm_5x: "Not a name
//! of any known instruction"), 32-byte vectors, and `sured` on types other than 32- and
//! 64-bit integers.

use super::FnBuilder;
use crate::ir::{BinaryOp, Type, Value};
use crate::ptx::ast::{self, Instruction, Modifier, Opcode, Operand, TypeKind};
use crate::surface::{SurfAccess, SurfClamp, SurfHandle, SurfOp, SurfQuery, SurfRedOp, SurfShape};

/// A surface access's form, as its modifiers give it (step 1 of `surface`).
struct SurfForm {
    op: SurfOp,
    shape: SurfShape,
    clamp: SurfClamp,
    /// The PTX data type.
    pt: ast::Type,
    /// Bits of one PTX element: 8, 16, 32 or 64.
    elem: u32,
    /// PTX elements: 1, 2 or 4.
    vec: u32,
}

impl FnBuilder<'_, '_> {
    pub(super) fn surface(&mut self, ins: &Instruction) -> Option<()> {
        // 1. The form: refused variants, then operation, shape, clamp mode and data type.
        self.surface_variant_checks(ins)?;
        let SurfForm {
            op,
            shape,
            clamp,
            pt,
            elem,
            vec,
        } = self.surface_form(ins)?;
        // 2. The packed data: (type, elements).
        let formatted = op == SurfOp::StoreFormatted;
        let (ty, width) = match (elem, vec) {
            _ if formatted => (Type::I32, vec as u8),
            (8, 1) => (Type::I8, 1),
            (16, 1) | (8, 2) => (Type::I16, 1),
            (32, 1) | (8, 4) | (16, 2) => (Type::I32, 1),
            (16, 4) | (32, 2) => (Type::I32, 2),
            (32, 4) => (Type::I32, 4),
            (64, 1) => (Type::I64, 1),
            (64, 2) => (Type::I64, 2),
            _ => return self.unsupported(ins, "this surface vector shape"),
        };
        // 3. The surface and the coordinates, in the hardware's order.
        let (handle, mut args) = self.surface_coordinates(ins, op, shape)?;
        let access = SurfAccess {
            op,
            shape,
            clamp,
            handle,
            ty,
            width,
        };
        // 4. A store's or reduction's values, packed; a load's results, unpacked.
        let per = vec / u32::from(width); // PTX elements per packed element
        let elem_ty = match elem {
            8 => Type::I8,
            16 => Type::I16,
            32 => Type::I32,
            _ => Type::I64,
        };
        if op != SurfOp::Load {
            let values = self.surface_values(ins, pt, elem_ty, vec)?;
            for chunk in values.chunks(per as usize) {
                let v = self.pack(chunk, ty, elem);
                args.push(v);
            }
            self.ins().surface(access, &args);
            return Some(());
        }
        let dsts = self.dests(&ins.operands[0])?;
        if dsts.len() != vec as usize {
            self.error(
                ins.operands[0].span(),
                format!("{} destinations for a .v{vec} surface load", dsts.len()),
            );
            return None;
        }
        let signed = pt.kind() == TypeKind::Signed;
        let got = self.ins().surface(access, &args);
        let mut k = 0;
        for v in got {
            for part in 0..per {
                let x = if per == 1 {
                    v
                } else {
                    let sh = self.iconst(Type::I32, i64::from(part * elem));
                    let s = self.ins().binary(BinaryOp::ShrU, v, sh);
                    self.ins().trunc(elem_ty, s)
                };
                self.write(dsts[k], x, signed, ins.operands[0].span())?;
                k += 1;
            }
        }
        Some(())
    }

    /// Step 1 of `surface`: the variants ptxas 11.8 refuses (`suld.p`, `sust.p` and
    /// `sured.p` on other than `.b32`, `sust.p` without a clamp mode) and a missing `.b`.
    fn surface_variant_checks(&mut self, ins: &Instruction) -> Option<()> {
        if ins.has_flag("p") && ins.opcode == Opcode::Suld {
            return self.unsupported(
                ins,
                "suld.p: ptxas 11.8 has no formatted surface load for sm_5x (it reports \"Not a name of any known instruction: 'suld.p'\"); use suld.b",
            );
        }
        let formatted = ins.has_flag("p") && ins.opcode == Opcode::Sust;
        let red_formatted = ins.has_flag("p") && ins.opcode == Opcode::Sured;
        if red_formatted && ins.ty().map(|t| t.name()) != Some("b32") {
            return self.unsupported(
                ins,
                "sured.p takes .b32 data only (ptxas 11.8: \"Unexpected instruction types specified for 'sured.p'\")",
            );
        }
        if formatted {
            if ins.ty().map(|t| t.name()) != Some("b32") {
                return self.unsupported(
                    ins,
                    "sust.p takes .b32 data only (ptxas 11.8: \"Unexpected instruction types specified for 'sust.p'\")",
                );
            }
            if !["trap", "clamp", "zero"].iter().any(|c| ins.has_flag(c)) {
                return self.unsupported(
                    ins,
                    "sust.p needs a clamp mode (.trap, .clamp or .zero; ptxas 11.8: \"Clamp modifier required\")",
                );
            }
        } else if !ins.has_flag("b") && !red_formatted {
            return self.unsupported(ins, "a surface access needs .b");
        }
        Some(())
    }

    /// Step 1 of `surface`: the operation, shape, clamp mode (`.trap` by default) and data
    /// type of an access [`Self::surface_variant_checks`] let through.
    fn surface_form(&mut self, ins: &Instruction) -> Option<SurfForm> {
        let formatted = ins.has_flag("p") && ins.opcode == Opcode::Sust;
        let red_formatted = ins.has_flag("p") && ins.opcode == Opcode::Sured;
        let shapes = ["1d", "2d", "3d", "a1d", "a2d"];
        let Some(shape) = shapes
            .iter()
            .find(|s| ins.has_flag(s))
            .and_then(|s| SurfShape::from_ptx(s))
        else {
            self.unsupported(
                ins,
                "a surface access needs a shape (.1d, .2d, .3d, .a1d, .a2d)",
            );
            return None;
        };
        let clamp = if ins.has_flag("clamp") {
            SurfClamp::Clamp
        } else if ins.has_flag("zero") {
            SurfClamp::Zero
        } else {
            SurfClamp::Trap
        };
        let Some(pt) = ins.ty() else {
            self.unsupported(ins, "no instruction type");
            return None;
        };
        let elem = match pt.name().get(1..).and_then(|b| b.parse::<u32>().ok()) {
            Some(b @ (8 | 16 | 32 | 64)) if pt.kind() != TypeKind::Float => b,
            _ => {
                let what = format!("surface data of type .{}", pt.name());
                self.unsupported(ins, &what);
                return None;
            }
        };
        let vec = ins.vector().unwrap_or(1);
        if !matches!(vec, 1 | 2 | 4) || elem * vec > 128 {
            self.unsupported(ins, "a surface access of more than 16 bytes");
            return None;
        }
        let op = match ins.opcode {
            Opcode::Suld => SurfOp::Load,
            Opcode::Sust if formatted => SurfOp::StoreFormatted,
            Opcode::Sust => SurfOp::Store,
            _ => {
                let signed = pt.kind() == TypeKind::Signed;
                let red = if ins.has_flag("add") {
                    SurfRedOp::Add
                } else if ins.has_flag("min") {
                    SurfRedOp::Min { signed }
                } else if ins.has_flag("max") {
                    SurfRedOp::Max { signed }
                } else if ins.has_flag("and") {
                    SurfRedOp::And
                } else if ins.has_flag("or") {
                    SurfRedOp::Or
                } else {
                    self.unsupported(ins, "sured needs an operation");
                    return None;
                };
                if vec != 1 || !matches!(elem, 32 | 64) {
                    self.unsupported(ins, "sured on other than 32- and 64-bit integers");
                    return None;
                }
                if red_formatted {
                    // min/max compare as the surface's channel type (crate::surface).
                    SurfOp::RedFormatted(red.with_sign(false))
                } else {
                    SurfOp::Red(red)
                }
            }
        };
        Some(SurfForm {
            op,
            shape,
            clamp,
            pt,
            elem,
            vec,
        })
    }

    /// Step 3 of `surface`: the surface named by the `[s, {coordinates}]` operand and the
    /// instruction's arguments so far: a bindless handle, then the coordinates in the
    /// hardware's order (x, y, then z or the layer).
    fn surface_coordinates(
        &mut self,
        ins: &Instruction,
        op: SurfOp,
        shape: SurfShape,
    ) -> Option<(SurfHandle, Vec<Value>)> {
        let surf_op = match op {
            SurfOp::Load => 1,
            _ => 0,
        };
        let Some(surf) = ins.operands.get(surf_op) else {
            self.unsupported(ins, "missing surface operand");
            return None;
        };
        let Operand::TexArgs(items, span) = surf else {
            self.error(surf.span(), "expected [surface, {coordinates}]");
            return None;
        };
        if items.len() != 2 {
            self.error(*span, "expected [surface, {coordinates}]");
            return None;
        }
        let mut args: Vec<Value> = Vec::new();
        let handle = self.surf_handle(&items[0], &mut args)?;
        let coords: Vec<&Operand> = match &items[1] {
            Operand::Vector(v, _) => v.iter().collect(),
            o => vec![o],
        };
        // PTX's coordinate vector: 1d {x}, 2d {x, y}, 3d {x, y, z, _}, a1d {layer, x},
        // a2d {layer, x, y, _}; the hardware's: x, y, then z or the layer.
        let (need, order): (&[usize], usize) = match shape {
            SurfShape::D1 => (&[0], 1),
            SurfShape::D2 => (&[0, 1], 2),
            SurfShape::D3 => (&[0, 1, 2], 4),
            SurfShape::A1 => (&[1, 0], 2),
            SurfShape::A2 => (&[1, 2, 0], 4),
        };
        if coords.len() != order && !(shape == SurfShape::D3 && coords.len() == 3) {
            self.error(
                items[1].span(),
                format!(
                    "{} coordinates for a .{} surface access (expected {order})",
                    coords.len(),
                    shape.ptx()
                ),
            );
            return None;
        }
        for &k in need {
            args.push(self.read(coords[k], Type::I32, Some(ast::Type::S32))?);
        }
        Some((handle, args))
    }

    /// Step 4 of `surface`: a store's or reduction's `vec` values (operand 1), each read as
    /// `elem_ty`.
    fn surface_values(
        &mut self,
        ins: &Instruction,
        pt: ast::Type,
        elem_ty: Type,
        vec: u32,
    ) -> Option<Vec<Value>> {
        let Some(dop) = ins.operands.get(1) else {
            self.unsupported(ins, "missing data operand");
            return None;
        };
        let srcs: Vec<&Operand> = match dop {
            Operand::Vector(v, _) => v.iter().collect(),
            o => vec![o],
        };
        if srcs.len() != vec as usize {
            self.error(
                dop.span(),
                format!("{} values for a .v{vec} surface store", srcs.len()),
            );
            return None;
        }
        let mut vals = Vec::new();
        for s in srcs {
            vals.push(self.read(s, elem_ty, Some(pt))?);
        }
        Some(vals)
    }

    /// `vals` (each `bits` wide) packed little-endian into one `ty`.
    fn pack(&mut self, vals: &[Value], ty: Type, bits: u32) -> Value {
        if vals.len() == 1 {
            return vals[0];
        }
        let mut acc = self.ins().zext(ty, vals[0]);
        for (k, &v) in vals.iter().enumerate().skip(1) {
            let z = self.ins().zext(ty, v);
            let sh = self.iconst(Type::I32, (k as u32 * bits) as i64);
            let s = self.ins().shl(z, sh);
            acc = self.ins().binary(BinaryOp::Or, acc, s);
        }
        acc
    }

    /// The surface operand `s` names: a module `.surfref`, or a `.u64` surface object (read
    /// into `args` as the instruction's first operand).
    fn surf_handle(&mut self, s: &Operand, args: &mut Vec<Value>) -> Option<SurfHandle> {
        match s {
            Operand::Name(n) => match self.lookup(n) {
                Some(Err(super::Sym::Opaque(_))) => {
                    match self.m.ir.surfrefs.iter().position(|x| *x == n.text) {
                        Some(i) => Some(SurfHandle::Bound(i as u32)),
                        None => {
                            self.error(n.span, format!("'{}' is not a .surfref", n.text));
                            None
                        }
                    }
                }
                _ => {
                    args.push(self.read(s, Type::I64, Some(ast::Type::U64))?);
                    Some(SurfHandle::Bindless)
                }
            },
            other => {
                self.error(other.span(), "expected a .surfref or a .u64 surface object");
                None
            }
        }
    }

    /// `suq.<attribute>.b32 d, [s]` ([`SurfOp::Query`]).
    pub(super) fn suq(&mut self, ins: &Instruction) -> Option<()> {
        let mut query = None;
        for m in &ins.mods {
            match m {
                Modifier::Flag(f) if query.is_none() && SurfQuery::from_ptx(f).is_some() => {
                    query = SurfQuery::from_ptx(f)
                }
                Modifier::Type(ast::Type::B32) => {}
                _ => {
                    let what = format!("suq.{} (suq takes an attribute and .b32)", m.text());
                    return self.unsupported(ins, &what);
                }
            }
        }
        let Some(query) = query else {
            return self.unsupported(
                ins,
                "suq needs an attribute (.width, .height, .depth, .channel_data_type, .channel_order, .array_size, .memory_layout)",
            );
        };
        let ops = self.ops(ins, 2)?;
        let s = match &ops[1] {
            Operand::TexArgs(items, _) if items.len() == 1 => items[0].clone(),
            Operand::Address(ast::AddrExpr {
                base: Some(n),
                offset: 0,
                ..
            }) => Operand::Name(n.clone()),
            other => {
                self.error(other.span(), "expected [surface]");
                return None;
            }
        };
        let mut args = Vec::new();
        let handle = self.surf_handle(&s, &mut args)?;
        let access = SurfAccess {
            op: SurfOp::Query(query),
            shape: SurfShape::D1,
            clamp: SurfClamp::Trap,
            handle,
            ty: Type::I32,
            width: 1,
        };
        let dst = self.dest1(&ops[0])?;
        let v = self.ins().surface(access, &args)[0];
        self.write(dst, v, false, ops[0].span())
    }
}
