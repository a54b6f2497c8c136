//! Argument stores: a call's `.param` bytes kept in SSA variables. A store is cut into slots
//! (one register variable per disjoint byte range) when first touched; reads and writes that
//! straddle slots are composed with shifts, masks and ors, which is always exact.
//!
//! In: `ld.param`/`st.param` accesses and argument bindings of an inlined call. Out: the values
//! read, and the slots written. Invariant: the slots of a store never overlap.

use super::*;

impl FnBuilder<'_, '_> {
    /// Bind the callee's parameter names in `scope` (arguments are read in the caller's
    /// scopes, which are still current) and plan the result copies.
    pub(super) fn arg_bind(
        &mut self,
        site: &CallSite<'_>,
        scope: &mut Scope,
    ) -> Option<Vec<(Place, Place)>> {
        let (ret_ops, arg_ops) = call_lists(site.ins)?;
        let callee = site.callee;
        let params = callee
            .params
            .iter()
            .flat_map(|d| d.names.iter().map(move |n| (d, n)));
        for (i, (d, n)) in params.enumerate() {
            let Some(arg) = arg_ops.get(i) else {
                self.error(
                    site.ins.span,
                    format!("call to '{}' lacks argument {}", callee.name.text, i + 1),
                );
                return None;
            };
            let size = decl_size(d, n);
            if d.space == StateSpace::Reg {
                let info = self.arg_reg_param(d, n)?;
                let ty = self.var_ty[info];
                let v = match arg {
                    Operand::Name(a) => match self.lookup(a) {
                        Some(Err(Sym::Arg { store })) => {
                            let bytes = ty.bytes().unwrap_or(1);
                            self.arg_read(store, 0, bytes, a.span)?
                        }
                        _ => self.read(arg, ty, Some(d.ty))?,
                    },
                    _ => self.read(arg, ty, Some(d.ty))?,
                };
                self.def_var(info, v);
                scope
                    .regs
                    .insert(n.name.id, super::super::RegInfo::one(info));
                continue;
            }
            let store = self.arg_store(arg, size, Some(d.ty))?;
            scope.syms.insert(n.name.id, Sym::Arg { store });
        }
        let mut rets = Vec::new();
        let decls = callee
            .rets
            .iter()
            .flatten()
            .flat_map(|d| d.names.iter().map(move |n| (d, n)));
        for (i, (d, n)) in decls.enumerate() {
            let size = decl_size(d, n);
            let dest = ret_ops.get(i);
            // Where the caller wants the result.
            let to = match dest {
                None | Some(Operand::Sink(_)) => None,
                Some(Operand::Name(a)) => match self.lookup(a) {
                    Some(Err(Sym::Arg { store })) => Some(Err(store)),
                    _ => Some(Ok(self.dest1(dest?)??)),
                },
                Some(other) => Some(Ok(self.dest1(other)??)),
            };
            if d.space == StateSpace::Reg {
                let var = self.arg_reg_param(d, n)?;
                scope
                    .regs
                    .insert(n.name.id, super::super::RegInfo::one(var));
                let bytes = self.var_ty[var].bytes().unwrap_or(1);
                match to {
                    None => {}
                    Some(Ok(dv)) => rets.push((Place::Var(var), Place::Var(dv))),
                    Some(Err(s)) => rets.push((Place::Var(var), Place::Store(s, bytes))),
                }
                continue;
            }
            let sym = match to {
                // The callee writes the caller's store itself.
                Some(Err(s)) => Sym::Arg { store: s },
                Some(Ok(dv)) => {
                    let s = self.new_store(size);
                    if let Sym::Arg { store } = s {
                        rets.push((Place::Store(store, size), Place::Var(dv)));
                    }
                    s
                }
                None => self.new_store(size),
            };
            scope.syms.insert(n.name.id, sym);
        }
        Some(rets)
    }

    /// The store a call's argument operand names (`param0`), or, for a register or an
    /// immediate argument, a fresh `bytes`-byte store holding it (read as `ptx_ty` when
    /// the parameter's type is known). Inlined and ABI calls both marshal through this.
    pub(super) fn arg_store(
        &mut self,
        arg: &Operand,
        bytes: u32,
        ptx_ty: Option<ast::Type>,
    ) -> Option<usize> {
        if let Operand::Name(a) = arg {
            if let Some(Err(Sym::Arg { store })) = self.lookup(a) {
                return Some(store);
            }
        }
        let Some(ty) = bytes.checked_mul(8).and_then(int_of_bits) else {
            self.error(arg.span(), format!("unsupported {bytes}-byte argument"));
            return None;
        };
        let v = self.read(arg, ty, ptx_ty)?;
        let Sym::Arg { store } = self.new_store(bytes) else {
            return None;
        };
        self.arg_write(store, 0, bytes, v, arg.span())?;
        Some(store)
    }

    /// A fresh scalar register variable for a `.reg` parameter or result.
    pub(super) fn arg_reg_param(&mut self, d: &ast::VarDecl, n: &ast::Declarator) -> Option<VarId> {
        match ir_type(d.ty) {
            Some(ty) if d.vector.is_none() && n.dims.is_empty() => Some(self.new_var(ty)),
            _ => {
                self.error(n.name.span, format!("unsupported register parameter '{}' (only scalar integer, bit and predicate registers)", n.name.text));
                None
            }
        }
    }

    /// The slots covering `[off, off+bytes)` of a store, making slots for untouched bytes.
    pub(super) fn arg_slots(
        &mut self,
        s: usize,
        off: u32,
        bytes: u32,
        ty: Option<Type>,
    ) -> Vec<Slot> {
        let end = off + bytes;
        let mut hit: Vec<Slot> = self.stores[s]
            .slots
            .iter()
            .copied()
            .filter(|sl| sl.off < end && off < sl.off + sl.bytes)
            .collect();
        if hit.is_empty() && matches!(bytes, 1 | 2 | 4 | 8) {
            let ty = ty.unwrap_or_else(|| int_of_bits(bytes * 8).unwrap_or(Type::I8));
            let sl = Slot {
                off,
                bytes,
                var: self.new_var(ty),
            };
            self.stores[s].slots.push(sl);
            return vec![sl];
        }
        // Untouched bytes become one-byte slots.
        for b in off..end {
            if !hit.iter().any(|sl| sl.off <= b && b < sl.off + sl.bytes) {
                let sl = Slot {
                    off: b,
                    bytes: 1,
                    var: self.new_var(Type::I8),
                };
                self.stores[s].slots.push(sl);
                hit.push(sl);
            }
        }
        hit
    }

    pub(super) fn arg_in_range(
        &mut self,
        s: usize,
        off: u32,
        bytes: u32,
        span: Span,
    ) -> Option<()> {
        if !matches!(bytes, 1 | 2 | 4 | 8) {
            // Whole-variable copies of arrays between `.param` and registers.
            self.error(span, format!("unsupported {bytes}-byte parameter access (a register holds 1, 2, 4 or 8 bytes)"));
            return None;
        }
        let size = self.stores[s].size;
        if off.checked_add(bytes).map_or(true, |e| e > size) {
            self.error(
                span,
                format!(
                    "access of {bytes} bytes at offset {off} is outside the {size}-byte parameter"
                ),
            );
            return None;
        }
        Some(())
    }

    pub(super) fn arg_widen(&mut self, v: Value) -> Option<Value> {
        self.fit(v, Type::I64, false)
    }

    pub(super) fn arg_shift(&mut self, op: BinaryOp, v: Value, bytes: u32) -> Value {
        if bytes == 0 {
            return v;
        }
        let k = self.iconst(Type::I32, i64::from(bytes * 8));
        self.ins().binary(op, v, k)
    }

    pub(super) fn arg_mask(&mut self, bytes: u32) -> Value {
        let m = if bytes >= 8 {
            -1
        } else {
            (1i64 << (bytes * 8)) - 1
        };
        self.iconst(Type::I64, m)
    }

    /// Read `bytes` bytes at `off` of a store as an integer of that width.
    pub(in crate::ir::build) fn arg_read(
        &mut self,
        s: usize,
        off: u32,
        bytes: u32,
        span: Span,
    ) -> Option<Value> {
        self.arg_in_range(s, off, bytes, span)?;
        let slots = self.arg_slots(s, off, bytes, None);
        if let [sl] = slots[..] {
            if sl.off == off && sl.bytes == bytes {
                return Some(self.use_var(sl.var));
            }
        }
        let Some(ty) = int_of_bits(bytes * 8) else {
            self.error(span, format!("unsupported {bytes}-byte parameter access"));
            return None;
        };
        let mut acc = self.iconst(Type::I64, 0);
        for sl in slots {
            let lo = off.max(sl.off);
            let hi = (off + bytes).min(sl.off + sl.bytes);
            let v = self.use_var(sl.var);
            let Some(v) = self.arg_widen(v) else {
                self.error(
                    span,
                    "unsupported mix of parameter accesses of different types",
                );
                return None;
            };
            let v = self.arg_shift(BinaryOp::ShrU, v, lo - sl.off);
            let m = self.arg_mask(hi - lo);
            let v = self.ins().binary(BinaryOp::And, v, m);
            let v = self.arg_shift(BinaryOp::Shl, v, lo - off);
            acc = self.ins().binary(BinaryOp::Or, acc, v);
        }
        self.fit(acc, ty, false)
    }

    /// Write the `bytes`-byte integer `v` at `off` of a store.
    pub(in crate::ir::build) fn arg_write(
        &mut self,
        s: usize,
        off: u32,
        bytes: u32,
        v: Value,
        span: Span,
    ) -> Option<()> {
        self.arg_in_range(s, off, bytes, span)?;
        let ty = self.func.values[v].ty;
        let slots = self.arg_slots(s, off, bytes, Some(ty));
        if let [sl] = slots[..] {
            if sl.off == off && sl.bytes == bytes && self.var_ty[sl.var] == ty {
                self.def_var(sl.var, v);
                return Some(());
            }
        }
        let Some(val) = self.arg_widen(v) else {
            self.error(
                span,
                "unsupported mix of parameter accesses of different types",
            );
            return None;
        };
        for sl in slots {
            let lo = off.max(sl.off);
            let hi = (off + bytes).min(sl.off + sl.bytes);
            let old = self.use_var(sl.var);
            let slot_ty = self.var_ty[sl.var];
            let Some(old) = self.arg_widen(old) else {
                self.error(
                    span,
                    "unsupported mix of parameter accesses of different types",
                );
                return None;
            };
            let part = self.arg_shift(BinaryOp::ShrU, val, lo - off);
            let m = self.arg_mask(hi - lo);
            let part = self.ins().binary(BinaryOp::And, part, m);
            let part = self.arg_shift(BinaryOp::Shl, part, lo - sl.off);
            let m = self.arg_shift(BinaryOp::Shl, m, lo - sl.off);
            let keep = self.ins().unary(crate::ir::UnaryOp::Not, m);
            let old = self.ins().binary(BinaryOp::And, old, keep);
            let new = self.ins().binary(BinaryOp::Or, old, part);
            let new = self.fit(new, slot_ty, false)?;
            self.def_var(sl.var, new);
        }
        Some(())
    }

    /// `ld.param` from a store: one read per vector element.
    pub(in crate::ir::build) fn load_arg(
        &mut self,
        ins: &Instruction,
        store: usize,
        off: i64,
        ty: Type,
        signed: bool,
        dsts: Dests,
    ) -> Option<()> {
        let elem = ty.bytes().unwrap_or(1);
        let span = ins.operands[1].span();
        let Ok(off) = u32::try_from(off) else {
            self.error(span, "negative parameter offset");
            return None;
        };
        for (k, dst) in dsts.into_iter().enumerate() {
            let at = off.saturating_add((k as u32).saturating_mul(elem));
            let v = self.arg_read(store, at, elem, span)?;
            self.write(dst, v, signed, ins.operands[0].span())?;
        }
        Some(())
    }

    /// `st.param` into a store: one write per vector element.
    pub(in crate::ir::build) fn store_arg(
        &mut self,
        ins: &Instruction,
        store: usize,
        off: i64,
        values: &[Value],
    ) -> Option<()> {
        let span = ins.operands[0].span();
        let Ok(off) = u32::try_from(off) else {
            self.error(span, "negative parameter offset");
            return None;
        };
        let mut at = off;
        for &v in values {
            let bytes = self.func.values[v].ty.bytes().unwrap_or(1);
            self.arg_write(store, at, bytes, v, span)?;
            at = at.saturating_add(bytes);
        }
        Some(())
    }
}
