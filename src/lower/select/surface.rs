//! `suld.b`/`sust.b`/`sured.b` ([`InstData::Surface`](crate::ir::InstData::Surface)) →
//! `SULD.D.BA`, `SUST.D.BA`, `SURED.D.BA`, as ptxas 11.8 writes them.
//!
//! In: the access ([`SurfAccess`]) and its operands. Out: one instruction, its coordinates
//! gathered into consecutive registers `[Ra]` (x in bytes, y, z or the layer: a pair for
//! two, an aligned quad for three), its data in one register group (32, 64 or 128 bits;
//! `U8`/`U16` for 1- and 2-byte elements) and the surface as ptxas names it:
//!
//! * a module `.surfref`: the immediate slot `tid` = the word of constant bank 0 the driver
//!   fills with its header index ([`crate::surface::bound_slots`]);
//! * a bindless handle read straight from a kernel parameter: the parameter's own word
//!   (`c[0x0][0x140 + offset]` / 4), no register;
//! * any other bindless handle: its low word in register `Rc` (the `_R` forms).
//!
//! `sust.p` ([`SurfOp::StoreFormatted`]) is `SUST.P` with no `.BA` (x counts elements) and
//! the channel mask of its vector (`.R`, `.RG`, none for four), its values one register
//! group like `sust.b.v*.b32`'s.
//!
//! `suq` ([`SurfOp::Query`]): `.width`/`.height` are `TXQ`/`TXQ.B` `TEX_HEADER_DIMENSION` on
//! the same slot word or handle, the other attributes a load from the driver's surface
//! descriptor table ([`crate::tex_table::surf`], the sequence of `txq`'s table).
//!
//! `sured.p` ([`SurfOp::RedFormatted`]) is `SURED.D` with no `.BA` (x counts elements), its
//! min/max `.SD32` (signed or not as the surface's format says), as ptxas 11.8 writes it.
//!
//! Clamp modes: `.trap` → `.TRAP`, `.clamp` → nothing (the hardware's default), `.zero` →
//! `.IGN`. Reductions: `.ADD/.MIN/.MAX/.AND/.OR` with `.S32`, `.U64`, `.S64` or nothing
//! (unsigned 32-bit).

use super::Lowerer;
use crate::ir::{InstData, Type, Value};
use crate::lower::inst::{RelocWord, Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};
use crate::surface::{SurfAccess, SurfClamp, SurfHandle, SurfOp, SurfQuery, SurfRedOp, SurfShape};

impl<'a> Lowerer<'a> {
    pub(super) fn lower_surface(
        &mut self,
        results: &[Value],
        access: SurfAccess,
        args: &[Value],
    ) -> Result<(), LowerError> {
        if let SurfOp::Query(q) = access.op {
            return self.lower_suq(results[0], q, access.handle, args);
        }
        let h = access.handle_operands();
        let n = access.coord_operands();
        // The surface: an immediate slot, or a handle register.
        let (slot, handle_reg) = match self.surf_slot(access.handle, args)? {
            Some(w) => (Some(w), None),
            None => (None, Some(self.reg(args[0])?)),
        };
        let coords = self.gather(&args[h..h + n])?;
        let size = access.size();
        let (form_i, form_r) = match access.op {
            SurfOp::Load => (Form::SULD_D_I, Form::SULD_D_R),
            SurfOp::Store => (Form::SUST_D_I, Form::SUST_D_R),
            SurfOp::StoreFormatted => (Form::SUST_P_I, Form::SUST_P_R),
            SurfOp::Red(_) | SurfOp::RedFormatted(_) => (Form::SURED_D_I, Form::SURED_D_R),
            SurfOp::Query(_) => return Err(LowerError::Internal("suq reached SULD".into())),
        };
        let formatted = matches!(access.op, SurfOp::StoreFormatted | SurfOp::RedFormatted(_));
        let mut inst = sm50::Inst::new(if slot.is_some() { form_i } else { form_r })
            .with(
                Field::Dim,
                match access.shape {
                    SurfShape::D1 => 0,
                    SurfShape::A1 => 2,
                    SurfShape::D2 => 3,
                    SurfShape::A2 => 4,
                    SurfShape::D3 => 5,
                },
            )
            .with(
                Field::Clamp,
                match access.clamp {
                    SurfClamp::Zero => 0,
                    SurfClamp::Clamp => 1,
                    SurfClamp::Trap => 2,
                },
            );
        if !formatted {
            inst.set(Field::Ba, 1);
        }
        if let Some(t) = slot {
            inst.set(Field::Tid, t);
        }
        match access.op {
            SurfOp::RedFormatted(op) => {
                let (o, _) = red_op_code(op);
                inst.set(Field::Op, o);
                // min/max: .SD32 (6), signed as the surface's format says; else none.
                let minmax = matches!(op, SurfRedOp::Min { .. } | SurfRedOp::Max { .. });
                inst.set(Field::Type, if minmax { 6 } else { 0 });
            }
            SurfOp::Red(op) => {
                let (o, signed) = red_op_code(op);
                inst.set(Field::Op, o);
                let wide = access.ty == Type::I64;
                // type: 0 (U32), 1 .S32, 2 .U64, 5 .S64.
                inst.set(
                    Field::Type,
                    match (wide, signed) {
                        (false, false) => 0,
                        (false, true) => 1,
                        (true, false) => 2,
                        (true, true) => 5,
                    },
                );
            }
            SurfOp::StoreFormatted => {
                // The channel mask: .R (1), .RG (3), none (RGBA, 15).
                inst.set(Field::Mask, (1 << access.width) - 1);
            }
            _ => {
                // size: .U8 0, .U16 2, 32 bits 4, .64 5, .128 6.
                let code = match size {
                    1 => 0,
                    2 => 2,
                    4 => 4,
                    8 => 5,
                    _ => 6,
                };
                inst.set(Field::Size, code);
            }
        }
        let mut i = Sm50Inst::new(Role::Plain);
        let cop = i.use_(coords.vreg);
        let mut refs = vec![(Field::Ra, cop, coords.offset)];
        if let Some(hr) = handle_reg {
            let hop = i.use_(hr.vreg);
            refs.push((Field::Rc, hop, hr.offset));
        }
        let kind = match size {
            8 => RegKind::B64,
            16 => RegKind::B128,
            _ => RegKind::B32,
        };
        match access.op {
            SurfOp::Load => {
                let d = self.new_vreg(kind);
                let dop = i.def(d, false);
                refs.push((Field::Rd, dop, 0));
                i.piece(inst, &refs);
                self.push(i);
                let words_per = (access.ty.bits() / 32).max(1) as u8;
                for (k, &r) in results.iter().enumerate() {
                    self.set_loc(
                        r,
                        Loc {
                            vreg: d,
                            offset: k as u8 * words_per,
                        },
                    );
                }
            }
            _ => {
                let data = &args[h + n..];
                let total = if matches!(access.op, SurfOp::Red(_) | SurfOp::RedFormatted(_)) {
                    access.ty.bits() / 8
                } else {
                    size
                };
                let d = if total <= 4 && data.len() == 1 {
                    self.reg(data[0])?
                } else {
                    self.store_data(data, total)?
                };
                let sop = i.use_(d.vreg);
                refs.push((Field::Rd, sop, d.offset));
                i.piece(inst, &refs);
                self.push(i);
            }
        }
        Ok(())
    }

    /// Values (32-bit) in consecutive registers: the value itself when there is one, else a
    /// new pair (two) or quad (three or four) filled by `MOV`s (each dropped where the
    /// register allocation puts the value on its word, as for a texture's coordinates).
    fn gather(&mut self, values: &[Value]) -> Result<Loc, LowerError> {
        let locs: Vec<Loc> = values
            .iter()
            .map(|&v| self.reg(v))
            .collect::<Result<_, _>>()?;
        if locs.len() == 1 {
            return Ok(locs[0]);
        }
        let kind = if locs.len() == 2 {
            RegKind::B64
        } else {
            RegKind::B128
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // a texture operand pack (`machinst::assign`'s pack copies): each value may be put
        // on its word, and its `MOV` dropped
        i.tex_pack = true;
        let dop = i.def(d, true);
        for (k, l) in locs.iter().enumerate() {
            let s = i.use_(l.vreg);
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, k as u8), (Field::Rb, s, l.offset)],
            );
        }
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// The word of constant bank 0 that names the surface (a `.surfref`'s slot, or the
    /// parameter a bindless handle is read from), or `None` for a handle in a register.
    fn surf_slot(&mut self, handle: SurfHandle, args: &[Value]) -> Result<Option<u64>, LowerError> {
        Ok(match handle {
            SurfHandle::Bound(i) => {
                let slots = crate::surface::bound_slots(self.f);
                let Some(&(_, off)) = slots.iter().find(|(k, _)| *k == i) else {
                    return Err(LowerError::Internal("surfref without a slot".into()));
                };
                Some(u64::from(off / 4))
            }
            SurfHandle::Bindless => match self.def_of(args[0]) {
                // In a subroutine a parameter is an argument register (the call ABI).
                Some(&InstData::LoadParam { offset, .. }) if !self.f.subroutine => {
                    Some(u64::from((0x140 + offset) / 4))
                }
                _ => None,
            },
        })
    }

    /// `suq` as ptxas 11.8 writes it: `.width`/`.height` are `TXQ` (by the surface's word)
    /// or `TXQ.B` (a handle register) with mask 0x1/0x2; the others load the driver's
    /// surface table ([`crate::tex_table::surf`]).
    fn lower_suq(
        &mut self,
        d: Value,
        q: SurfQuery,
        handle: SurfHandle,
        args: &[Value],
    ) -> Result<(), LowerError> {
        use super::tex::Part;
        use crate::ir::tex::{TexOp, TexQuery};
        use crate::tex_table::surf;
        let slot = self.surf_slot(handle, args)?;
        let header = match q {
            SurfQuery::Width => Some(TexQuery::Width),
            SurfQuery::Height => Some(TexQuery::Height),
            _ => None,
        };
        if let Some(tq) = header {
            return match slot {
                Some(w) => self.lower_txq(d, tq, w, Part::Zero),
                None => self.lower_tex_bindless(&[d], TexOp::Query(tq), args[0], false, &[]),
            };
        }
        let Some(field) = surf::field_offset(q) else {
            return Err(LowerError::Internal(format!(
                "suq.{} has no table field",
                q.ptx()
            )));
        };
        let table = (surf::TABLE_CBANK_OFFSET, RelocWord::SurfDescSize);
        let reg = if slot.is_none() { Some(args[0]) } else { None };
        self.lower_desc_table(d, field, table, slot, reg)
    }
}

/// SURED's operation code (`.ADD` 0, `.MIN` 1, `.MAX` 2, `.AND` 5, `.OR` 6) and whether it
/// compares signed.
fn red_op_code(op: SurfRedOp) -> (u64, bool) {
    match op {
        SurfRedOp::Add => (0, false),
        SurfRedOp::Min { signed } => (1, signed),
        SurfRedOp::Max { signed } => (2, signed),
        SurfRedOp::And => (5, false),
        SurfRedOp::Or => (6, false),
    }
}
