//! Selection of memory accesses: loads and stores in every space, parameter loads, addresses
//! (the folding of address arithmetic into the access, `Plg` per address), the stack pointer
//! and displacements, and the SASS memory form of an access.
//!
//! In: one IR `Load`/`Store` (or a parameter read). Out: SASS memory instructions whose address
//! operands follow the fold mode; the [`Access`] records what was folded.

use super::*;

/// A matched and built address, ready for the memory instruction.
#[derive(Clone, Debug)]
pub(super) struct Access {
    /// The address register is R1 itself (a `.local` access with no register of its own).
    pub(super) sp: bool,
    pub(super) addr: Option<Loc>,
    pub(super) pred: Option<VReg>,
    pub(super) disp: i64,
    pub(super) wide: bool,
}

/// The 64-bit shared-window test as two pieces of `i`: `LEA RZ.CC, a.lo, RZ` then
/// `LEA.HI.X P, RZ, a.lo, RZ, a.hi`, whose `Plg` (operand `pop`) is true exactly outside
/// the window. `aop` is the address pair's operand, `o` its first word.
pub(in crate::lower) fn window_test_pieces(i: &mut Sm50Inst, aop: u8, o: u8, pop: u8) {
    let lo = sm50::Inst::new(Form::LEA_R).with(Field::Cc, 1);
    i.piece(lo, &[(Field::Ra, aop, o)]);
    let hi = sm50::Inst::new(Form::LEA_HI_R).with(Field::X, 1);
    i.piece(
        hi,
        &[
            (Field::Ra, aop, o),
            (Field::Rc, aop, o + 1),
            (Field::Plg, pop, 0),
        ],
    );
}

impl<'a> Lowerer<'a> {
    // ------------------------------------------------------------ memory

    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_load(
        &mut self,
        results: &[Value],
        space: Space,
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
        cache: CacheOp,
    ) -> Result<(), LowerError> {
        let bytes = ty.bytes().unwrap_or(4);
        let total = bytes * u32::from(width);
        if width > 1 && (bytes < 4 || total > 16) {
            // Narrow elements: one scalar access each (total alignment covers each element).
            // An element nothing reads is not loaded (Mandelbrot reads three bytes of each
            // `uchar4`): a plain load has no effect but its value. Volatile and `.cv` loads
            // keep every access. Nothing is traded: only accesses whose value is dead go.
            let strong = matches!(cache, CacheOp::Volatile | CacheOp::Cv);
            for (k, &r) in results.iter().enumerate() {
                if !strong && self.use_count[r.index()] == 0 {
                    continue;
                }
                let off = offset.wrapping_add((k as u32 * bytes) as i32);
                self.lower_load(&[r], space, ty, 1, addr, off, cache)?;
            }
            return Ok(());
        }
        if space == Space::Param {
            return self.load_param_space(results, ty, width, addr, offset);
        }
        if space == Space::Const && total > 8 && width > 1 {
            // LDC reads at most 64 bits: two halves (`LDC.64` twice, as ptxas does).
            let half = results.len() / 2;
            let w = width / 2;
            let second = offset.wrapping_add((total / 2) as i32);
            self.lower_load(&results[..half], space, ty, w, addr, offset, cache)?;
            return self.lower_load(&results[half..], space, ty, w, addr, second, cache);
        }
        let kind = match total {
            8 => RegKind::B64,
            16 => RegKind::B128,
            _ => RegKind::B32,
        };
        let words_per = (bytes / 4).max(1) as u8;
        let access = self.address(space, addr, offset)?;
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let (mut inst, mut refs) = self.mem_inst(&mut i, space, &access, false, total)?;
        if results.len() == 1 && self.signed_load(results[0]) {
            inst = inst.with(Field::Size, size_code(total, true));
        }
        cache::set_field(&mut inst, cache);
        refs.push((Field::Rd, dop, 0));
        i.piece(inst, &refs);
        self.push(i);
        for (k, &r) in results.iter().enumerate() {
            self.set_loc(
                r,
                Loc {
                    vreg: d,
                    offset: k as u8 * words_per,
                },
            );
        }
        Ok(())
    }

    pub(super) fn lower_store(
        &mut self,
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        values: &[Value],
        cache: CacheOp,
    ) -> Result<(), LowerError> {
        let bytes = ty.bytes().unwrap_or(4);
        let total = bytes * values.len() as u32;
        if values.len() > 1 && (bytes < 4 || total > 16) {
            for (k, &v) in values.iter().enumerate() {
                let off = offset.wrapping_add((k as u32 * bytes) as i32);
                self.lower_store(space, ty, addr, off, &[v], cache)?;
            }
            return Ok(());
        }
        if matches!(space, Space::Param | Space::Const) {
            return Err(self.unsupported(format!("store to the .{} space", space.name())));
        }
        // A zero of at most 32 bits is stored from RZ (an unset register field), no MOV32I.
        let zero =
            values.len() == 1 && total <= 4 && matches!(self.class(values[0]), Class::Imm(0));
        let data = if zero {
            None
        } else {
            Some(self.store_data(values, total)?)
        };
        let access = self.address(space, addr, offset)?;
        let mut i = Sm50Inst::new(Role::Plain);
        let (mut inst, mut refs) = self.mem_inst(&mut i, space, &access, true, total)?;
        cache::set_field(&mut inst, cache);
        if let Some(data) = data {
            let sop = i.use_(data.vreg);
            refs.push((Field::Rd, sop, data.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        Ok(())
    }

    /// The register group a store reads: the value itself, or its elements gathered into an
    /// aligned pair/quad unless they already are consecutive words of one.
    pub(super) fn store_data(&mut self, values: &[Value], total: u32) -> Result<Loc, LowerError> {
        let locs: Vec<Loc> = values
            .iter()
            .map(|&v| self.reg(v))
            .collect::<Result<_, _>>()?;
        let words = (total / 4).max(1) as u8;
        let per = words / values.len() as u8;
        let first = locs[0];
        let aligned = first.offset % words == 0
            && locs
                .iter()
                .enumerate()
                .all(|(k, l)| l.vreg == first.vreg && l.offset == first.offset + k as u8 * per);
        if values.len() == 1 || aligned {
            return Ok(first);
        }
        let kind = if words == 4 {
            RegKind::B128
        } else {
            RegKind::B64
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        for (k, l) in locs.iter().enumerate() {
            let s = i.use_(l.vreg);
            for w in 0..per {
                i.piece(
                    sm50::Inst::new(Form::MOV_R),
                    &[
                        (Field::Rd, dop, k as u8 * per + w),
                        (Field::Rb, s, l.offset + w),
                    ],
                );
            }
        }
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// `ld.param` through an address: only constant addresses, read from the bank.
    pub(super) fn load_param_space(
        &mut self,
        results: &[Value],
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
    ) -> Result<(), LowerError> {
        let Class::Imm(base) = self.class(addr) else {
            return Err(self.unsupported("ld.param through a computed address"));
        };
        let bytes = ty.bytes().unwrap_or(4);
        let off = base.wrapping_add(i64::from(offset));
        if bytes < 4 {
            // An 8- or 16-bit element (clang reads a `__half` parameter this way): MOV its
            // containing word, then shift it down to bit 0, as a direct narrow ld.param is
            // read (the high bits of an i8/i16 value are unspecified).
            for (k, &r) in results.iter().take(width as usize).enumerate() {
                let byte = 0x140 + off + i64::from(k as u32 * bytes);
                if !(0..0x10000).contains(&byte) {
                    return Err(self.unsupported("ld.param offset out of the constant bank"));
                }
                let d = self.new_vreg(kind_of(ty));
                let mut i = Sm50Inst::new(Role::Plain);
                let dop = i.def(d, true);
                let mov = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, byte as u64 / 4);
                i.piece(mov, &[(Field::Rd, dop, 0)]);
                if byte % 4 != 0 {
                    let shr =
                        sm50::Inst::new(Form::SHR_I).with(Field::ImmImm20s, 8 * (byte as u64 % 4));
                    i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
                }
                self.push(i);
                self.set_loc(r, Loc { vreg: d, offset: 0 });
            }
            return Ok(());
        }
        let words = (bytes / 4) as u8;
        for (k, &r) in results.iter().take(width as usize).enumerate() {
            let kind = kind_of(ty);
            let d = self.new_vreg(kind);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(d, words > 1);
            for w in 0..words {
                let byte = 0x140 + off + i64::from(k as u32 * bytes) + 4 * i64::from(w);
                if !(0..0x10000).contains(&byte) {
                    return Err(self.unsupported("ld.param offset out of the constant bank"));
                }
                let inst = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, byte as u64 / 4);
                i.piece(inst, &[(Field::Rd, dop, w)]);
            }
            self.push(i);
            self.set_loc(r, Loc { vreg: d, offset: 0 });
        }
        Ok(())
    }

    /// Match and build the address of an access (see [`Access`]).
    pub(super) fn address(
        &mut self,
        space: Space,
        addr: Value,
        offset: i32,
    ) -> Result<Access, LowerError> {
        let wide = matches!(space, Space::Global | Space::Generic) && self.ty(addr) == Type::I64;
        let in_reg = |v: Value| self.non_address_use[v.index()];
        let konst = |v: Value| self.known_constant(v);
        let local = space == Space::Local;
        let frame = |v: Value| if local { self.frame_offset(v) } else { None };
        let facts = Facts {
            in_register: &in_reg,
            constant: &konst,
            frame: &frame,
        };
        let mode = match_address(self.f, addr, offset, wide, &facts, true);
        let generic = space == Space::Generic;
        let mem_bits = match space {
            Space::Generic => 32,
            Space::Const => 16,
            _ => 24,
        };
        // Where the displacement goes. Generic accesses computed by a chain get Plg. By default
        // (ptxas's rule) the chain's Plg, tested on `base + index`, serves every displacement
        // from it: an object never straddles a window, so the displacement stays in the
        // instruction. With `--plg-per-address` Plg must cover the final address, so the
        // displacement joins the chain (two more LEAs for a 64-bit chain).
        // A lone parameter base gets a chain only for a 64-bit generic access (where it buys
        // Plg); elsewhere two MOVs (one for 32 bits) cost as much and are shared by every
        // block.
        let fold = self.opts.fold != Fold::None;
        // A 32-bit shared, global or constant address that is its index alone (no base, no
        // scale, not subtracted; its widening does not matter, as the access truncates it)
        // is that register: a chain would be `LEA d, i, RZ`, a copy. Old PTX addresses shared
        // memory as `cvt.s64.s32` of an offset plus a symbol at 0, so every unrolled copy of
        // such an access paid one (sdk2.2 histogram64: 64).
        let bare_index = match mode.index {
            Some(Index {
                value,
                shift: 0,
                neg: false,
                ..
            }) if fold && !wide && !generic && mode.base == Base::None && space != Space::Local => {
                Some(value)
            }
            _ => None,
        };
        let has_chain = (mode.index.is_some() && bare_index.is_none())
            || (matches!(mode.base, Base::Param { .. }) && generic && wide && fold);
        let plg = generic && has_chain && fold;
        let disp_in_chain =
            plg && self.opts.plg_per_address && mode.disp != 0 && fits_imm20(mode.disp);
        let plg = plg && (disp_in_chain || !self.opts.plg_per_address || mode.disp == 0);
        let (chain_disp, mut mem_disp) = if disp_in_chain {
            (mode.disp, 0)
        } else {
            (0, mode.disp)
        };

        let mut a = Access {
            sp: false,
            addr: None,
            pred: None,
            disp: 0,
            wide,
        };
        if mode.sp {
            // A `.local` variable's offset: R1 is the base, of the chain or of the
            // instruction. Any other `.local` address is absolute already
            // (`lower_local_address`), as ptxas's `LDL [R6]` or `LDL [0x8]`.
            a.sp = true;
        }
        if has_chain && chain_disp > 0 && matches!(self.opts.fold, Fold::Full | Fold::Block) {
            // Plg must cover the displacement: a shared chain for the rest of the address,
            // then `base + disp` with Plg per displacement (see `lea::plg_step`).
            let (base, _) = self.chain(mode, 0, false, a.sp)?;
            let (reg, p) = self.plg_step(base, chain_disp, wide)?;
            a.addr = Some(Loc {
                vreg: reg,
                offset: 0,
            });
            a.pred = Some(p);
        } else if has_chain {
            let (reg, p) = self.chain(mode, chain_disp, plg, a.sp)?;
            a.addr = Some(Loc {
                vreg: reg,
                offset: 0,
            });
            a.pred = p;
        } else {
            match (mode.base, bare_index) {
                (_, Some(v)) | (Base::Reg(v), None) => a.addr = Some(self.reg(v)?),
                (Base::Param { value, .. }, None) => a.addr = Some(self.reg(value)?),
                (Base::None, None) => {}
            }
        }
        if a.sp && !has_chain {
            a.addr = None;
        } else {
            a.sp = false;
        }
        let limit = 1i64 << (mem_bits - 1);
        if !(-limit..limit).contains(&mem_disp) {
            // Too far for the instruction's immediate: add it to the address first.
            if a.sp {
                return Err(self.unsupported("a .local offset beyond 24 bits"));
            }
            let base = a.addr;
            a.addr = Some(self.add_disp(base, mem_disp, wide)?);
            mem_disp = 0;
        }
        a.disp = mem_disp;
        if self.planning.is_none() {
            let st = &mut self.stats;
            st.plg_folds += a.pred.is_some() as u32;
            st.disp_folds += (mem_disp != 0) as u32;
            st.disp_in_chain += (chain_disp != 0) as u32;
            if generic && has_chain && fold && a.pred.is_none() {
                st.reject("generic access: displacement beyond imm20, no Plg from the chain");
            }
        }
        Ok(a)
    }

    /// The chain for `mode` (shared with earlier accesses of this block when identical).
    pub(super) fn chain(
        &mut self,
        mode: AddrMode,
        disp: i64,
        plg: bool,
        sp_base: bool,
    ) -> Result<(VReg, Option<VReg>), LowerError> {
        let key = ChainKey {
            mode: AddrMode { disp, ..mode },
            plg,
            sp: sp_base,
        };
        // `--fold=lea` builds every access its own chain. Otherwise a chain built earlier in
        // this block or in a block that dominates it is reused: its registers hold the same
        // address on every path here (the IR is SSA, so the leaves cannot have changed). The
        // trade-off is a longer live range (a loop-invariant chain lives through the loop)
        // against two or more instructions per access. A chain with `Plg` is shared within
        // its block only: predicate registers are few (7) and a live one across blocks is
        // more likely to cost a spill than the pair it saves. `--fold=block` shares every
        // chain within its block only (the driver's register retry).
        let here = self.cur_ir;
        if self.planning.is_none() && self.opts.fold != Fold::Lea {
            let doms = &self.doms;
            let across = self.opts.fold != Fold::Block;
            let found = self.chains.get(&key).and_then(|v| {
                v.iter().rev().find(|(b, _, p)| {
                    here.is_some_and(|h| {
                        *b == h || (across && p.is_none() && doms.dominates(*b, h))
                    })
                })
            });
            if let Some(&(_, r, p)) = found {
                self.stats.chains_shared += 1;
                return Ok((r, p));
            }
            // An access that needs no Plg also takes the address of the same chain built with
            // one (a generic access at displacement 0 before the `plg_step`s of its
            // neighbours): the address words do not depend on the predicate, so only the
            // dominance rule of plain chains applies.
            if !plg {
                let with_plg = ChainKey { plg: true, ..key };
                let found = self.chains.get(&with_plg).and_then(|v| {
                    v.iter().rev().find(|(b, _, _)| {
                        here.is_some_and(|h| *b == h || (across && doms.dominates(*b, h)))
                    })
                });
                if let Some(&(_, r, _)) = found {
                    self.stats.chains_shared += 1;
                    return Ok((r, None));
                }
            }
        }
        let base = match mode.base {
            Base::None if sp_base => ChainBase::Sp,
            Base::None => ChainBase::None,
            Base::Reg(v) => match self.split_base(v, mode.wide) {
                Some((x, Ext::Sext)) => {
                    let lo = self.reg(x)?;
                    let hi = self.sign_word(x, lo);
                    ChainBase::Split { lo, hi: Some(hi) }
                }
                Some((x, _)) => ChainBase::Split {
                    lo: self.reg(x)?,
                    hi: None,
                },
                None => ChainBase::Reg(self.reg(v)?),
            },
            Base::Param { offset, .. } => ChainBase::Cbuf(0x140 + offset),
        };
        let index = match mode.index {
            Some(Index {
                value,
                ext,
                shift,
                neg,
            }) => {
                let loc = self.reg(value)?;
                // The sign word is shared as the chains are: by every chain over the index
                // in the blocks its block dominates (`--fold=full`), or in its block only
                // (`--fold=block`: NVVM's `mul.wide.s32` + `add.s64` per array, `a[i]`,
                // `b[i]`, `c[i]` in one block, is one `SHR` and two instructions per array
                // instead of three).
                let block_only = self.opts.fold == Fold::Block;
                let sext = mode.wide
                    && ext == Ext::Sext
                    && matches!(self.opts.fold, Fold::Full | Fold::Block);
                let count_key = (value, if block_only { self.cur_ir } else { None });
                if sext && self.planning.is_some() {
                    *self.sext_chains.entry(count_key).or_default() += 1;
                }
                // A sign word of its own only pays when several chains read it; for one it
                // would cost a register the in-chain form does not (tight --maxrregcount).
                let share = sext && self.sext_chains.get(&count_key).copied().unwrap_or(0) > 1;
                let sign = if share && self.planning.is_none() {
                    Some(self.sign_word(value, loc))
                } else {
                    None
                };
                Some(ChainIndex {
                    loc,
                    ext,
                    shift,
                    neg,
                    sign,
                })
            }
            None => None,
        };
        let planning = self.planning.is_some();
        let vb = &mut self.vb;
        let mut fresh = |k: RegKind| {
            if planning {
                VReg { index: 0, kind: k }
            } else {
                vb.new_vreg(k)
            }
        };
        let c = match (mode.wide, index) {
            (true, _) if self.opts.fold == Fold::None => plain::wide_chain(&mut fresh, base, index),
            (false, Some(index)) if self.opts.fold == Fold::None => {
                plain::narrow_chain(&mut fresh, base, index)
            }
            (true, _) => wide_chain(&mut fresh, base, index, disp, plg),
            (false, Some(index)) => narrow_chain(&mut fresh, base, index, disp, plg),
            (false, None) => {
                return Err(LowerError::Internal(
                    "a 32-bit chain without an index".into(),
                ))
            }
        };
        let out = (c.addr, c.plg);
        let mut inst = c.inst;
        if self.opts.explain && !planning {
            inst.note =
                Some(super::super::explain::chain_expr(self.f, &mode, disp, sp_base).into());
        }
        self.push(inst);
        if !planning {
            if let Some(h) = here {
                self.chains.entry(key).or_default().push((h, out.0, out.1));
            }
            self.stats.chains_formed += 1;
        }
        Ok(out)
    }

    /// `base + disp` with its Plg (shared with earlier accesses of this block).
    pub(super) fn plg_step(
        &mut self,
        base: VReg,
        disp: i64,
        wide: bool,
    ) -> Result<(VReg, VReg), LowerError> {
        let key = (base, disp);
        let here = self.cur_ir;
        if self.planning.is_none() {
            if let Some(&(b, r, p)) = self.plg_steps.get(&key) {
                if Some(b) == here {
                    self.stats.chains_shared += 1;
                    return Ok((r, p));
                }
            }
        }
        let planning = self.planning.is_some();
        let vb = &mut self.vb;
        let mut fresh = |k: RegKind| {
            if planning {
                VReg { index: 0, kind: k }
            } else {
                vb.new_vreg(k)
            }
        };
        let c = plg_step(
            &mut fresh,
            Loc {
                vreg: base,
                offset: 0,
            },
            disp,
            wide,
        );
        let out = (c.addr, c.plg.unwrap_or(c.addr));
        self.push(c.inst);
        if !planning {
            if let Some(h) = here {
                self.plg_steps.insert(key, (h, out.0, out.1));
            }
        }
        Ok(out)
    }

    /// The sign word of the i32 `v` (in `loc`): `SHR s, v, 0x1f`, built once and reused in
    /// this block and the blocks it dominates, like chains (in this block only with
    /// `--fold=block`).
    /// For the base `v` of a 64-bit chain (`--fold=full`): `(x, ext)` when `v` is an i32 `x`
    /// zero-extended, or sign-extended and used by nothing but addresses. The chain then reads
    /// `x` and `RZ` or its sign word as the base's two words, so `v` need not be built as a
    /// pair: a `MOV` saved, and for a sign extension the `SHR` is the shared sign word, as an
    /// index's. A zero-extended `v` that something else needs as a pair costs nothing more
    /// (`x` is in a register to build it anyway); a sign-extended one would cost a second
    /// `SHR`, so it stays a pair. Decided from the IR alone, so planning and emission agree.
    pub(super) fn split_base(&self, v: Value, wide: bool) -> Option<(Value, Ext)> {
        if !wide || self.opts.fold != Fold::Full {
            return None;
        }
        let ValueDef::Result(def, _) = self.f.values[v].def else {
            return None;
        };
        match self.f.insts[def].data {
            InstData::Convert { op, arg, .. } if self.f.value_type(arg) == Type::I32 => match op {
                ConvOp::Sext if !self.non_address_use[v.index()] => Some((arg, Ext::Sext)),
                ConvOp::Zext => Some((arg, Ext::Zext)),
                _ => None,
            },
            _ => None,
        }
    }

    pub(super) fn sign_word(&mut self, v: Value, loc: Loc) -> Loc {
        let here = self.cur_ir;
        if self.planning.is_none() {
            let found = if self.opts.fold == Fold::Block {
                self.signs.find_in_block(&v, here)
            } else {
                self.signs.find(&v, here, &self.doms)
            };
            if let Some(l) = found {
                return l;
            }
        }
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let a = i.use_(loc.vreg);
        let shr = sm50::Inst::new(Form::SHR_I)
            .with(Field::Sgn, 1)
            .with(Field::ImmImm20s, 0x1f);
        i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, a, loc.offset)]);
        self.push(i);
        let out = Loc { vreg: d, offset: 0 };
        if self.planning.is_none() {
            self.signs.record(v, here, out);
        }
        out
    }

    /// `addr + disp` in a new register (wide: `IADD32I.CC` + `IADD.X`).
    pub(super) fn add_disp(
        &mut self,
        base: Option<Loc>,
        disp: i64,
        wide: bool,
    ) -> Result<Loc, LowerError> {
        if wide && i64::from(disp as i32) != disp {
            return Err(self.unsupported("a 64-bit displacement beyond 32 bits"));
        }
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // Word by word, as a 64-bit IADD (see `lower_add`): a late def.
        let dop = i.def(d, false);
        let bop = base.map(|b| (i.use_(b.vreg), b.offset));
        let mut refs = vec![(Field::Rd, dop, 0)];
        if let Some((op, o)) = bop {
            refs.push((Field::Ra, op, o));
        }
        let lo = sm50::Inst::new(Form::IADD32I)
            .with(Field::Imm, disp as u64 & 0xffff_ffff)
            .with(Field::Cc, wide as u64);
        i.piece(lo, &refs);
        if wide {
            let mut refs = vec![(Field::Rd, dop, 1)];
            if let Some((op, o)) = bop {
                refs.push((Field::Ra, op, o + 1));
            }
            let hi = sm50::Inst::new(Form::IADD_I)
                .with(Field::X, 1)
                .with_signed(Field::ImmImm20s, if disp < 0 { -1 } else { 0 });
            i.piece(hi, &refs);
        }
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// The memory instruction for an access, with its address operand added to `i`.
    #[allow(clippy::type_complexity)]
    pub(super) fn mem_inst(
        &mut self,
        i: &mut Sm50Inst,
        space: Space,
        a: &Access,
        store: bool,
        total: u32,
    ) -> Result<(sm50::Inst, Vec<(Field, u8, u8)>), LowerError> {
        let size = size_code(total, false);
        let form = match (space, store) {
            (Space::Global, false) => Form::LDG,
            (Space::Global, true) => Form::STG,
            (Space::Generic, false) => Form::LD,
            (Space::Generic, true) => Form::ST,
            (Space::Shared, false) => Form::LDS,
            (Space::Shared, true) => Form::STS,
            (Space::Const, false) => Form::LDC,
            (Space::Local, false) => Form::LDL,
            (Space::Local, true) => Form::STL,
            (s, _) => {
                return Err(self.unsupported(format!("memory access to the .{} space", s.name())))
            }
        };
        if form == Form::LDC && total > 8 {
            return Err(self.unsupported("a 128-bit ld.const"));
        }
        let mut inst = sm50::Inst::new(form)
            .with(Field::Size, size)
            .with_signed(Field::Off, a.disp);
        if matches!(form, Form::LDG | Form::STG | Form::LD | Form::ST) {
            inst.set(Field::E, a.wide as u64);
        }
        if form == Form::LDS {
            inst.set(Field::U, 1);
        }
        if form == Form::LDC {
            inst.set(Field::Bank, 3);
        }
        let mut refs = Vec::new();
        if let Some(l) = a.addr {
            let op = i.use_(l.vreg);
            refs.push((Field::Ra, op, l.offset));
        } else if a.sp {
            let op = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
            refs.push((Field::Ra, op, 0));
        }
        if let Some(p) = a.pred {
            let op = i.use_(p);
            refs.push((Field::P, op, 0));
        }
        // The caller adds the data register and makes the piece.
        Ok((inst, refs))
    }
}
