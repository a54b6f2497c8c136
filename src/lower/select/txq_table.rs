//! `txq.<attribute>` of an attribute the texture header does not hold (channel data type
//! and order, normalized coordinates, filter and address modes, array size, mip levels,
//! samples): a load from the driver's descriptor table, as ptxas 11.8 writes it
//! ([`crate::tex_table`] has the sequence, the table and the model).
//!
//! In: the query, the texture's slot word in constant bank 0 (a `.texref` or a texture
//! object parameter) or its handle register. Out: `MOV`/`LOP32I.AND` of the header index,
//! the relocated `MOV32I` of the descriptor size, three `XMAD`s adding the field offset
//! (a literal of constant bank 2), the 64-bit add of the table address `c[0x0][0xb0]`, and
//! `LDG.E.CI` of the word. The result is the load's register. Each query makes its own
//! index; the size is loaded once and shared by the queries it dominates ([`Lowerer::desc_size`];
//! ptxas loads it once, at the kernel's entry, for every query of the kernel).
//!
//! `txq` of a sampler attribute (`.texmode_independent`) is the same load from the sampler
//! table ([`crate::tex_table::samp`]): the index `SHR.U32 0x14` of the sampler's slot word,
//! the table at `c[0x0][0xb8]`, and `RZ` for the field at offset 0.

use super::Lowerer;
use crate::ir::Value;
use crate::lower::inst::{Reloc, RelocWord, Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};
use crate::tex_table;
use crate::texture::TxqQuery;

impl<'a> Lowerer<'a> {
    /// `d = table[index].field(q)`; `slot`: the word index of the handle in bank 0, else the
    /// handle is `handle`'s register (its low word).
    pub(super) fn lower_txq_table(
        &mut self,
        d: Value,
        q: TxqQuery,
        slot: Option<u64>,
        handle: Option<Value>,
    ) -> Result<(), LowerError> {
        let Some(field) = tex_table::field_offset(q) else {
            return Err(LowerError::Internal(format!(
                "txq.{} is not a descriptor-table attribute",
                tex_table::query_name(q)
            )));
        };
        let table = (tex_table::TABLE_CBANK_OFFSET, RelocWord::TexDescSize);
        self.lower_desc_table(d, field, table, slot, handle)
    }

    /// `txq` of a sampler attribute: the sampler table's load ([`tex_table::samp`]) from
    /// the sampler's own slot word, the index its high 12 bits.
    pub(super) fn lower_txq_sampler(
        &mut self,
        d: Value,
        q: TxqQuery,
        slot: Option<u64>,
    ) -> Result<(), LowerError> {
        let (Some(field), Some(_)) = (tex_table::samp::field_offset(q), slot) else {
            return Err(LowerError::Internal(format!(
                "txq.{} of a sampler without a field or a slot",
                tex_table::query_name(q)
            )));
        };
        let table = (tex_table::samp::TABLE_CBANK_OFFSET, RelocWord::SampDescSize);
        self.lower_desc_table(d, field, table, slot, None)
    }

    /// `d = word at index × size + field + c[0x0][table.0]`, the size relocated by
    /// `table.1`: the load `txq` (texture table), `suq` (surface table,
    /// [`tex_table::surf`]) and the sampler `txq` share. From the sampler table
    /// (`RelocWord::SampDescSize`) the index is the slot word's bits 20 and up
    /// (`SHR.U32 0x14`, not `LOP32I.AND 0xfffff`), and a field at offset 0 adds `RZ` rather
    /// than a constant (ptxas 11.8).
    pub(super) fn lower_desc_table(
        &mut self,
        d: Value,
        field: u32,
        table: (u32, RelocWord),
        slot: Option<u64>,
        handle: Option<Value>,
    ) -> Result<(), LowerError> {
        let sampler = matches!(table.1, RelocWord::SampDescSize);
        let src = match (slot, handle) {
            (None, Some(h)) => Some(self.reg(h)?),
            _ => None,
        };
        let lit = if sampler && field == 0 {
            None
        } else {
            Some(self.literal(u64::from(field), 4)?)
        };
        let size = self.desc_size(table.1);
        let idx = self.new_vreg(RegKind::B32);
        let t = self.new_vreg(RegKind::B32);
        let u = self.new_vreg(RegKind::B32);
        let lo = self.new_vreg(RegKind::B32);
        let addr = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let iop = i.def(idx, true);
        let sop = i.use_(size);
        let top = i.def(t, true);
        let uop = i.def(u, true);
        let lop = i.def(lo, true);
        let aop = i.def(addr, true);
        let and = if sampler {
            sm50::Inst::new(Form::SHR_I)
                .with(Field::ImmImm20s, u64::from(tex_table::samp::INDEX_SHIFT))
        } else {
            sm50::Inst::new(Form::LOP32I)
                .with(Field::Op, 0)
                .with(Field::Imm, u64::from(tex_table::INDEX_MASK))
        };
        match (slot, src) {
            (Some(w), _) => {
                let mov = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, w);
                i.piece(mov, &[(Field::Rd, iop, 0)]);
                i.piece(and, &[(Field::Rd, iop, 0), (Field::Ra, iop, 0)]);
            }
            (None, Some(h)) => {
                let hop = i.use_(h.vreg);
                i.piece(and, &[(Field::Rd, iop, 0), (Field::Ra, hop, h.offset)]);
            }
            (None, None) => return Err(LowerError::Internal("txq without a handle".into())),
        }
        // idx × size + field: XMAD t, idx, size, c[0x2][lit]; XMAD.MRG u, idx, size.H1, RZ;
        // XMAD.PSL.CBCC lo, idx.H1, u.H1, t.
        let first = match lit {
            Some(lit) => sm50::Inst::new(Form::XMAD_CC)
                .with(Field::Cbk, 2)
                .with(Field::Cbo, u64::from(lit / 4)),
            None => sm50::Inst::new(Form::XMAD_R),
        };
        i.piece(
            first,
            &[
                (Field::Rd, top, 0),
                (Field::Ra, iop, 0),
                (Field::Rb, sop, 0),
            ],
        );
        let x = sm50::Inst::new(Form::XMAD_R);
        i.piece(
            x.with(Field::Mrg, 1).with(Field::Bh, 1),
            &[
                (Field::Rd, uop, 0),
                (Field::Ra, iop, 0),
                (Field::Rb, sop, 0),
            ],
        );
        i.piece(
            x.with(Field::Psl, 1)
                .with(Field::Mode, 4)
                .with(Field::Ah, 1)
                .with(Field::Bh, 1),
            &[
                (Field::Rd, lop, 0),
                (Field::Ra, iop, 0),
                (Field::Rb, uop, 0),
                (Field::Rc, top, 0),
            ],
        );
        // + the table's address: IADD a.CC, lo, c[0x0][0xb0]; IADD.X a+1, RZ, c[0x0][0xb4]
        // (0xc0/0xc4 for surfaces).
        let base = u64::from(table.0 / 4);
        i.piece(
            sm50::Inst::new(Form::IADD_C)
                .with(Field::Cbo, base)
                .with(Field::Cc, 1),
            &[(Field::Rd, aop, 0), (Field::Ra, lop, 0)],
        );
        i.piece(
            sm50::Inst::new(Form::IADD_C)
                .with(Field::Cbo, base + 1)
                .with(Field::X, 1),
            &[(Field::Rd, aop, 1)],
        );
        self.push(i);
        let r = self.new_vreg(RegKind::B32);
        let mut l = Sm50Inst::new(Role::Plain);
        let rop = l.def(r, false);
        let aop = l.use_(addr);
        let ldg = sm50::Inst::new(Form::LDG)
            .with(Field::E, 1)
            .with(Field::Cache, 2)
            .with(Field::Size, 4);
        l.piece(ldg, &[(Field::Rd, rop, 0), (Field::Ra, aop, 0)]);
        self.push(l);
        self.set_loc(d, Loc { vreg: r, offset: 0 });
        Ok(())
    }

    /// The descriptor size `word` names (`MOV32I size, 0x0` relocated against the size
    /// symbol): one already loaded in a block that dominates this one, else a new load.
    fn desc_size(&mut self, word: RelocWord) -> crate::machinst::VReg {
        let here = self.cur_ir;
        if self.planning.is_none() {
            if let Some(size) = self.desc_sizes.find(&word, here, &self.doms) {
                return size;
            }
        }
        let size = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let sop = i.def(size, false);
        i.piece(
            sm50::Inst::new(Form::MOV32I).with(Field::Imm, 0),
            &[(Field::Rd, sop, 0)],
        );
        if let Some(p) = i.pieces.last_mut() {
            p.reloc = Some(Reloc {
                var: crate::ir::GlobalVar::from_u32(0),
                word,
            });
        }
        self.push(i);
        if self.planning.is_none() {
            self.desc_sizes.record(word, here, size);
        }
        size
    }
}
