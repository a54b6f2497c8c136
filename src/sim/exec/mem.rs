//! The memory family of the simulator: loads and stores in every space, atomics and
//! reductions, surfaces and textures.
//!
//! In: one decoded instruction and the executing lanes. Out: the memory and destination
//! registers of each lane, or a [`SimError`] for an access outside every window.

use super::*;

/// The new memory value of a 32-bit atomic `op` (ATOM's encoding) on `old` with operand `b`.
/// INC and DEC wrap as PTX says: INC gives 0 once old >= b, DEC gives b when old is 0 or
/// above b.
pub(super) fn atomic_op(op: u64, signed: bool, old: u32, b: u32) -> u32 {
    use crate::sm50::values::atom::op::*;
    match op {
        ADD => old.wrapping_add(b),
        MIN if signed => (old as i32).min(b as i32) as u32,
        MIN => old.min(b),
        MAX if signed => (old as i32).max(b as i32) as u32,
        MAX => old.max(b),
        INC => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        DEC => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        AND => old & b,
        OR => old | b,
        XOR => old ^ b,
        _ => b,
    }
}

/// [`atomic_op`] on 64-bit values (no INC/DEC).
pub(super) fn atomic_op64(op: u64, signed: bool, old: u64, b: u64) -> u64 {
    use crate::sm50::values::atom::op::*;
    match op {
        ADD => old.wrapping_add(b),
        MIN if signed => (old as i64).min(b as i64) as u64,
        MIN => old.min(b),
        MAX if signed => (old as i64).max(b as i64) as u64,
        MAX => old.max(b),
        AND => old & b,
        OR => old | b,
        XOR => old ^ b,
        _ => b,
    }
}

impl Sim<'_> {
    /// The mem family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_mem(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            LDG | STG | LD | ST | LDS | STS | LDL | STL | LDC => self.memory(w, i, addr, exec)?,
            ATOM | ATOM_CAS | RED | ATOMS | ATOMS_CAS => self.atomic(w, i, addr, exec)?,
            SUST_D_I | SUST_D_R | SULD_D_I | SULD_D_R | SURED_D_I | SURED_D_R
                if flag(i, Field::Ba) =>
            {
                self.surface(w, i, addr, exec)?
            }
            SUST_P_I | SUST_P_R | SURED_D_I | SURED_D_R => {
                self.surface_formatted(w, i, addr, exec)?
            }
            SUST_D_I | SUST_D_R | SULD_D_I | SULD_D_R | SULD_P_I | SULD_P_R | SURED_P_I
            | SURED_P_R | SUATOM_D_I | SUATOM_CAS_I => {
                return Err(unsupported(addr, i, "a surface instruction"));
            }
            TEXS | TLDS | TXQ_I | TEX | TLD_I => self.texture(w, i, addr, exec)?,
            TEX_B | TLD_B | TXQ_B => self.texture_bindless(w, i, addr, exec)?,
            TLD4S | TLD4_I | TLD4_B => self.gather(w, i, addr, exec)?,
            TXD_I | TXD_B => self.texture_grad(w, i, addr, exec)?,
            _ => unreachable!("{:?} is not a mem form", i.form),
        }
        Ok(())
    }

    /// ATOM/RED (global; `.E` = 64-bit address) and ATOMS (shared, offset in words): ADD,
    /// MIN, MAX (signed with .S32/.S64), INC, DEC (32-bit only), AND, OR, XOR, EXCH on 32- or
    /// 64-bit values (a 64-bit operand or result is a register pair), and CAS (Rb = compare,
    /// then the new value: Rb+1, or Rb+2:Rb+3 with .64). Lanes act one after another in lane
    /// order, so the result is one of the orders hardware may pick. `.F32.FTZ.RN` ADD (global)
    /// adds f32s, rounding to nearest and flushing subnormals; other float and 128-bit
    /// forms are Unsupported.
    /// `SULD.D.BA`, `SUST.D.BA`, `SURED.D.BA` ([`crate::surface`]): per lane, the surface
    /// from the slot's bank-0 word (`_I`) or `Rc` (`_R`), the coordinates from `Ra..`, then
    /// an access of the size's bytes at the address `surface::locate` gives.
    pub(super) fn surface(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use crate::surface::{self, SurfError, SurfRedOp};
        use Form::*;
        let (load, red) = (
            matches!(i.form, SULD_D_I | SULD_D_R),
            matches!(i.form, SURED_D_I | SURED_D_R),
        );
        let by_slot = matches!(i.form, SULD_D_I | SUST_D_I | SURED_D_I);
        let (shape, clamp) = surf_shape_clamp(i, addr)?;
        // (bytes, reduction, signed)
        let (size, op) = if red {
            use crate::sm50::values::sured::{op, r#type};
            let (wide, signed) = match f(i, Field::Type) {
                r#type::DEFAULT => (false, false),
                r#type::S32 => (false, true),
                r#type::U64 => (true, false),
                r#type::S64 => (true, true),
                _ => return Err(unsupported(addr, i, "this SURED type")),
            };
            let op = match f(i, Field::Op) {
                op::ADD => SurfRedOp::Add,
                op::MIN => SurfRedOp::Min { signed },
                op::MAX => SurfRedOp::Max { signed },
                op::AND => SurfRedOp::And,
                op::OR => SurfRedOp::Or,
                _ => return Err(unsupported(addr, i, "this SURED operation")),
            };
            (if wide { 8 } else { 4 }, Some(op))
        } else {
            use crate::sm50::values::suld::size;
            let size = match f(i, Field::Size) {
                size::U8 => 1,
                size::U16 => 2,
                size::DEFAULT => 4,
                size::V64 => 8,
                size::V128 => 16,
                _ => return Err(unsupported(addr, i, "a signed surface access size")),
            };
            (size, None)
        };
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        let words = (size / 4).max(1);
        let n = shape.coords() as u64;
        if (rd != RZ && rd + u64::from(words) > RZ) || (ra != RZ && ra + n > RZ) {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        for l in lanes(exec) {
            let handle = self.surf_handle(w, i, addr, by_slot, l);
            let coords: Vec<i32> = (0..n)
                .map(|k| if ra == RZ { 0 } else { w.r(ra + k, l) as i32 })
                .collect();
            let desc = surface::by_handle(&self.mem.surfaces, handle)
                .map_err(|e| unsupported(addr, i, &e.to_string()))?
                .clone();
            let at = match surface::locate(&desc, shape, clamp, &coords, size) {
                Ok(a) => a,
                Err(SurfError::Trap) => return Err(SimError::Trap { addr }),
                Err(e) => return Err(unsupported(addr, i, &e.to_string())),
            };
            let reg = |w: &Warp, k: u32| {
                if rd == RZ {
                    0
                } else {
                    w.r(rd + u64::from(k), l)
                }
            };
            match (at, load) {
                (None, true) => {
                    for k in 0..words {
                        if rd != RZ {
                            w.set_r(rd + u64::from(k), l, 0);
                        }
                    }
                }
                (None, false) => {}
                (Some(at), true) => {
                    let m = self.mem.bytes(addr, Space::Global, at, size)?;
                    let mut buf = [0u8; 16];
                    buf[..size as usize].copy_from_slice(m);
                    for k in 0..words {
                        let x = u32::from_le_bytes(
                            buf[4 * k as usize..4 * k as usize + 4].try_into().unwrap(),
                        );
                        if rd != RZ {
                            w.set_r(rd + u64::from(k), l, x);
                        }
                    }
                }
                (Some(at), false) => {
                    let mut buf = [0u8; 16];
                    let vwords = if red { size / 4 } else { words };
                    for k in 0..vwords {
                        buf[4 * k as usize..4 * k as usize + 4]
                            .copy_from_slice(&reg(w, k).to_le_bytes());
                    }
                    let m = self.mem.bytes(addr, Space::Global, at, size)?;
                    if let Some(op) = op {
                        let mut old = [0u8; 8];
                        old[..size as usize].copy_from_slice(m);
                        let v = u64::from_le_bytes(buf[..8].try_into().unwrap());
                        let new = op.apply(u64::from_le_bytes(old), v, size);
                        m.copy_from_slice(&new.to_le_bytes()[..size as usize]);
                    } else {
                        m.copy_from_slice(&buf[..size as usize]);
                    }
                    self.mem.note_write(addr, Space::Global, at, size);
                }
            }
        }
        Ok(())
    }

    /// The surface handle of lane `l`: the slot's bank-0 word (`_I` forms) or `Rc`.
    fn surf_handle(&mut self, w: &Warp, i: &Inst, addr: u64, by_slot: bool, l: usize) -> u64 {
        if by_slot {
            // A slot past bank 0 holds no handle: the access names no surface.
            u64::from(
                self.mem
                    .const32(addr, 0, f(i, Field::Tid) * 4)
                    .unwrap_or(u32::MAX),
            )
        } else {
            u64::from(w.r(f(i, Field::Rc), l))
        }
    }

    /// `SUST.P` ([`crate::surface::SurfOp::StoreFormatted`]): per lane, x (in elements of
    /// the surface's format) scaled to bytes, then the channel mask's registers (R, G, B, A
    /// in order from `Rd`) converted by [`crate::surface::SurfFormat::encode`] and written
    /// as one element. `SURED.D` without `.BA` (`sured.p`,
    /// [`crate::surface::SurfOp::RedFormatted`]): the same element address, then `Rd`
    /// reduced into the element, which must be one 32-bit integer channel (min/max `.SD32`
    /// compare as its type).
    fn surface_formatted(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use crate::surface::SurfRedOp;
        use crate::surface::{self, SurfError};
        let (shape, clamp) = surf_shape_clamp(i, addr)?;
        let red = matches!(i.form, Form::SURED_D_I | Form::SURED_D_R);
        let by_slot = matches!(i.form, Form::SUST_P_I | Form::SURED_D_I);
        use crate::sm50::values::sured::{op, r#type};
        let red_op = match (red, f(i, Field::Op), f(i, Field::Type)) {
            (false, _, _) => None,
            (true, op::ADD, r#type::DEFAULT) => Some(SurfRedOp::Add),
            (true, op::MIN, r#type::SD32) => Some(SurfRedOp::Min { signed: false }),
            (true, op::MAX, r#type::SD32) => Some(SurfRedOp::Max { signed: false }),
            (true, op::AND, r#type::DEFAULT) => Some(SurfRedOp::And),
            (true, op::OR, r#type::DEFAULT) => Some(SurfRedOp::Or),
            _ => return Err(unsupported(addr, i, "this SURED.D operation and type")),
        };
        use crate::sm50::values::sust::mask;
        let values = match (red, f(i, Field::Mask)) {
            (true, _) => 1,
            (false, mask::R) => 1,
            (false, mask::RG) => 2,
            (false, mask::DEFAULT) => 4,
            _ => return Err(unsupported(addr, i, "this SUST.P channel mask")),
        };
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        let n = shape.coords() as u64;
        if (rd != RZ && rd + values > RZ) || (ra != RZ && ra + n > RZ) {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        for l in lanes(exec) {
            let handle = self.surf_handle(w, i, addr, by_slot, l);
            let desc = surface::by_handle(&self.mem.surfaces, handle)
                .map_err(|e| unsupported(addr, i, &e.to_string()))?
                .clone();
            let size = desc.format.elem_bytes();
            let signed = match (red, desc.formatted_red_signed()) {
                (false, _) => false,
                (true, Some(s)) => s,
                (true, None) => {
                    return Err(unsupported(
                        addr,
                        i,
                        "SURED.D on a surface not of one 32-bit integer channel",
                    ))
                }
            };
            let mut coords: Vec<i32> = (0..n)
                .map(|k| if ra == RZ { 0 } else { w.r(ra + k, l) as i32 })
                .collect();
            coords[0] = coords[0].wrapping_mul(size as i32);
            let at = match surface::locate(&desc, shape, clamp, &coords, size) {
                Ok(Some(a)) => a,
                Ok(None) => continue,
                Err(SurfError::Trap) => return Err(SimError::Trap { addr }),
                Err(e) => return Err(unsupported(addr, i, &e.to_string())),
            };
            let data: Vec<u32> = (0..values)
                .map(|k| if rd == RZ { 0 } else { w.r(rd + k, l) })
                .collect();
            let m = self.mem.bytes(addr, Space::Global, at, size)?;
            if let Some(op) = red_op {
                let old = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
                let new = op
                    .with_sign(signed)
                    .apply(u64::from(old), u64::from(data[0]), 4);
                m.copy_from_slice(&(new as u32).to_le_bytes());
            } else {
                let (bytes, _) = desc.format.encode(&data);
                m.copy_from_slice(&bytes);
            }
            self.mem.note_write(addr, Space::Global, at, size);
        }
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        let shared = matches!(i.form, ATOMS | ATOMS_CAS);
        let cas = matches!(i.form, ATOM_CAS | ATOMS_CAS);
        let red = i.form == RED;
        use crate::sm50::values::{atom, atoms};
        // (op, 64-bit, signed); CAS is op CAS_OP here, f32 add (ATOM/RED .F32.FTZ.RN)
        // F32_ADD_OP (ATOM's .SAFEADD number: no SAFEADD reaches here).
        const CAS_OP: u64 = 9;
        const F32_ADD_OP: u64 = atom::op::SAFEADD;
        let (op, wide_val, signed) = if cas {
            (CAS_OP, flag(i, Field::W64), false)
        } else {
            let (ty, op) = (f(i, Field::Ty), f(i, Field::Op));
            // ATOMS numbers its types -, .S32, .U64, .S64; ATOM and RED -, .S32, .U64,
            // .F32, .U128, .S64.
            let (w64, signed) = match (shared, ty) {
                (_, atom::ty::DEFAULT) => (false, false),
                (_, atom::ty::S32) => (false, true),
                (_, atom::ty::U64) => (true, false),
                (true, atoms::ty::S64) | (false, atom::ty::S64) => (true, true),
                (false, atom::ty::F32_FTZ_RN) if op == atom::op::ADD => (false, false),
                _ => return Err(unsupported(addr, i, "a float or 128-bit atomic")),
            };
            let op = if !shared && ty == atom::ty::F32_FTZ_RN {
                F32_ADD_OP
            } else {
                op
            };
            let inc_dec = op == atom::op::INC || op == atom::op::DEC;
            if (op > atom::op::EXCH && op != F32_ADD_OP) || (w64 && inc_dec) {
                return Err(unsupported(addr, i, "this atomic operation"));
            }
            (op, w64, signed)
        };
        let size = if wide_val { 8 } else { 4 };
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        // RED's value is in the Rd field; the others read Rb.
        let rb = if red { rd } else { f(i, Field::Rb) };
        let nregs = if wide_val { 2 } else { 1 } * if cas { 2 } else { 1 };
        if (rb != RZ && rb + nregs > RZ) || (!red && rd != RZ && wide_val && rd + 2 > RZ) {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        let off = if shared {
            f(i, Field::Off) * 4
        } else {
            sext(f(i, Field::Off), 20)
        };
        let wide_addr = !shared && flag(i, Field::E);
        // A 32- or 64-bit operand from register `r` (a pair for 64 bits; RZ reads 0).
        let val = |w: &Warp, r: u64, l: usize| {
            let lo = u64::from(w.r(r, l));
            if wide_val && r != RZ {
                lo | u64::from(w.r(r + 1, l)) << 32
            } else {
                lo
            }
        };
        for l in lanes(exec) {
            let base = if wide_addr && ra != RZ {
                u64::from(w.r(ra + 1, l)) << 32 | u64::from(w.r(ra, l))
            } else {
                u64::from(w.r(ra, l))
            };
            let at = if wide_addr {
                base.wrapping_add(off)
            } else {
                base.wrapping_add(off) & 0xffff_ffff
            };
            let space = if shared { Space::Shared } else { Space::Global };
            let b = val(w, rb, l);
            let swap = if cas {
                val(w, if rb == RZ { RZ } else { rb + nregs / 2 }, l)
            } else {
                0
            };
            let m = self.mem.bytes(addr, space, at, size)?;
            let mut buf = [0u8; 8];
            buf[..size as usize].copy_from_slice(m);
            let old = u64::from_le_bytes(buf);
            let new = match op {
                CAS_OP if old == b => swap,
                CAS_OP => old,
                F32_ADD_OP => {
                    use crate::ir::float::{add, FloatFmt, Round};
                    add(FloatFmt::F32, old, b, Round::Rn, true)
                }
                _ if wide_val => atomic_op64(op, signed, old, b),
                _ => u64::from(atomic_op(op, signed, old as u32, b as u32)),
            };
            m.copy_from_slice(&new.to_le_bytes()[..size as usize]);
            self.mem.note_write(addr, space, at, size);
            if !red {
                w.set_r(rd, l, old as u32);
                if wide_val && rd != RZ {
                    w.set_r(rd + 1, l, (old >> 32) as u32);
                }
            }
        }
        Ok(())
    }

    pub(super) fn memory(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use crate::sm50::values::ld::size;
        use Form::*;
        let size_code = f(i, Field::Size);
        let (bytes, signed): (u32, bool) = match size_code {
            size::U8 => (1, false),
            size::S8 => (1, true),
            size::U16 => (2, false),
            size::S16 => (2, true),
            size::DEFAULT => (4, false),
            size::V64 => (8, false),
            _ => (16, false),
        };
        let load = matches!(i.form, LDG | LD | LDS | LDL | LDC);
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        let nregs = bytes.div_ceil(4) as u64;
        if rd != RZ && rd + nregs > RZ {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        let off = {
            let fi = i
                .slot(Field::Off)
                .map(|k| i.info().fields[k].len)
                .unwrap_or(0);
            sext(f(i, Field::Off), fi.max(1))
        };
        let wide = flag(i, Field::E);
        let generic_p = get(i, Field::P).unwrap_or(PT);
        if matches!(i.form, LDC) && f(i, Field::Mode) != crate::sm50::values::ldc::mode::DEFAULT {
            return Err(unsupported(addr, i, "LDC .IL/.IS/.ISL"));
        }
        for l in lanes(exec) {
            let base = if wide && ra != RZ {
                u64::from(w.r(ra + 1, l)) << 32 | u64::from(w.r(ra, l))
            } else {
                u64::from(w.r(ra, l))
            };
            let at = if wide {
                base.wrapping_add(off)
            } else {
                base.wrapping_add(off) & 0xffff_ffff
            };
            let thread = w.index * 32 + l;
            let (space, at) = match i.form {
                LDG | STG => (Space::Global, at),
                LDS | STS => (Space::Shared, at),
                LDL | STL => (Space::Local(thread), at),
                LDC => (Space::Const(f(i, Field::Bank) as u8), at),
                _ => {
                    // P true (PT by default): decode the windows; false: Plg said "in the
                    // shared window", which had better be so.
                    let decode = w.p(generic_p, l);
                    let in_window = |b: u64| at >= b && at - b < WINDOW_SIZE;
                    if !decode && !in_window(SHARED_WINDOW_BASE) {
                        return Err(SimError::PlgMismatch { addr, at });
                    }
                    if in_window(SHARED_WINDOW_BASE) {
                        (Space::Shared, at - SHARED_WINDOW_BASE)
                    } else if in_window(LOCAL_WINDOW_BASE) {
                        (Space::Local(thread), at - LOCAL_WINDOW_BASE)
                    } else if in_window(CONST_WINDOW_BASE) {
                        // `generic(x)` of a `.const` variable (an address in an initializer):
                        // bank 3, read-only.
                        if !load {
                            return Err(SimError::Unsupported {
                                addr,
                                what: format!("a generic store into the const window (0x{at:x})"),
                            });
                        }
                        (Space::Const(3), at - CONST_WINDOW_BASE)
                    } else {
                        (Space::Global, at)
                    }
                }
            };
            if load {
                let m = self.mem.bytes(addr, space, at, bytes)?;
                let mut buf = [0u8; 16];
                buf[..bytes as usize].copy_from_slice(m);
                if bytes < 4 {
                    let v = u64::from(u16::from_le_bytes([buf[0], buf[1]]))
                        & ((1u64 << (8 * bytes)) - 1);
                    let v = if signed { sext(v, 8 * bytes) } else { v };
                    w.set_r(rd, l, v as u32);
                } else if rd != RZ {
                    for k in 0..nregs {
                        let o = 4 * k as usize;
                        let v = u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
                        w.set_r(rd + k, l, v);
                    }
                }
            } else {
                let mut buf = [0u8; 16];
                for k in 0..nregs {
                    let v = if rd == RZ { 0 } else { w.r(rd + k, l) };
                    buf[4 * k as usize..4 * k as usize + 4].copy_from_slice(&v.to_le_bytes());
                }
                let m = self.mem.bytes(addr, space, at, bytes)?;
                m.copy_from_slice(&buf[..bytes as usize]);
                self.mem.note_write(addr, space, at, bytes);
            }
        }
        Ok(())
    }
}

/// A surface instruction's dimensionality and clamp mode.
fn surf_shape_clamp(
    i: &Inst,
    addr: u64,
) -> Result<(crate::surface::SurfShape, crate::surface::SurfClamp), SimError> {
    use crate::sm50::values::suld::{clamp, dim};
    use crate::surface::{SurfClamp, SurfShape};
    let shape = match f(i, Field::Dim) {
        dim::V1D => SurfShape::D1,
        dim::V1D_ARRAY => SurfShape::A1,
        dim::V2D => SurfShape::D2,
        dim::V2D_ARRAY => SurfShape::A2,
        dim::V3D => SurfShape::D3,
        _ => return Err(unsupported(addr, i, "this surface dimensionality")),
    };
    let clamp = match f(i, Field::Clamp) {
        clamp::IGN => SurfClamp::Zero,
        clamp::DEFAULT => SurfClamp::Clamp,
        clamp::TRAP => SurfClamp::Trap,
        _ => return Err(unsupported(addr, i, "this surface clamp mode")),
    };
    Ok((shape, clamp))
}
