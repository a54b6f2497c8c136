//! Addresses and memory: `cvta`, `isspacep`, state-space selection, the address of a variable
//! or an indexed operand, and `ld`/`st` with their cache operators.
//!
//! In: one checked AST memory instruction. Out: IR `Load`/`Store`/`Cvta` instructions with a
//! resolved [`Space`] and byte offset; an address the builder cannot form is a diagnostic.

use super::*;

impl<'m, 'f> FnBuilder<'m, 'f> {
    pub(super) fn cvta(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, _) = self.int_type(ins)?;
        if !matches!(ty, Type::I32 | Type::I64) {
            return self.unsupported(ins, "cvta takes .u32 or .u64");
        }
        let space = match ins.space().and_then(ir_space) {
            Some(s @ (Space::Global | Space::Shared | Space::Local | Space::Const)) => s,
            _ => return self.unsupported(ins, "cvta to or from this space is not in the IR"),
        };
        let dir = if ins.has_flag("to") {
            CvtaDir::FromGeneric
        } else {
            CvtaDir::ToGeneric
        };
        let ops = self.ops(ins, 2)?;
        let a = self.read(&ops[1], ty, ins.ty())?;
        let d = self.ins().cvta(dir, space, ty, a);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `isspacep.{shared,local,global} p, a`: `a`'s top 40 bits against those of the
    /// space's window base (taken as `cvta` of offset 0: the 16 MB window of the generic
    /// model; the local one is `cvta` of offset 0 plus the stack pointer, hence the mask),
    /// as ptxas does; global is "neither shared nor local". `isspacep.const` is false: sm_5x
    /// has no generic window onto constant memory, and ptxas 11.8's sequence for it
    /// (`IADD RZ.CC, lo, -c[0x0][0xd0]`, then `ISETP.GE.U32.X` of the high word against
    /// `c[0x0][0xd4]` ANDed with its own negation) is false for every address.
    /// `isspacep.param` needs sm_70 (ptxas refuses it for sm_5x): a diagnostic.
    pub(super) fn isspacep(&mut self, ins: &Instruction) -> Option<()> {
        let space =
            match ins.space().and_then(ir_space) {
                Some(s @ (Space::Global | Space::Shared | Space::Local | Space::Const)) => s,
                Some(Space::Param) => return self.unsupported(
                    ins,
                    "isspacep.param requires sm_70 or later (sm_5x has no generic .param window)",
                ),
                _ => return self.unsupported(ins, "isspacep of this state space"),
            };
        let ops = self.ops(ins, 2)?;
        if space == Space::Const {
            // The operand is still read (and checked); the answer does not depend on it.
            self.read(&ops[1], Type::I64, None)?;
            let f = self.pred_const(false);
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, f, false, ops[0].span());
        }
        let a = self.read(&ops[1], Type::I64, None)?;
        let mask = self.iconst(Type::I64, !0xff_ffff);
        let top = self.ins().binary(BinaryOp::And, a, mask);
        let p = match space {
            Space::Global => {
                let s = self.window_cmp(top, mask, Space::Shared, IntCC::Ne);
                let l = self.window_cmp(top, mask, Space::Local, IntCC::Ne);
                self.ins().binary(BinaryOp::And, s, l)
            }
            sp => self.window_cmp(top, mask, sp, IntCC::Eq),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, p, false, ops[0].span())
    }

    /// `top` (a generic address ANDed with `mask`, the bits above the 16 MB window offset)
    /// compared by `cc` with the same bits of `sp`'s window base: `Eq` is "inside `sp`'s
    /// window", `Ne` outside (`isspacep`; the generic float atomics' branch, whose shared
    /// `Ne` selection turns into ptxas's `LEA`/`LEA.HI.X` window predicate).
    pub(in crate::ir) fn window_cmp(
        &mut self,
        top: Value,
        mask: Value,
        sp: Space,
        cc: IntCC,
    ) -> Value {
        let zero = self.iconst(Type::I64, 0);
        let base = self.ins().cvta(CvtaDir::ToGeneric, sp, Type::I64, zero);
        let base = self.ins().binary(BinaryOp::And, base, mask);
        self.ins().icmp(cc, top, base)
    }

    // -- memory --

    pub(super) fn mem_space(&mut self, ins: &Instruction) -> Option<Space> {
        if ins.opcode == Opcode::Ldu {
            return Some(Space::Global);
        }
        match ins.space() {
            None => Some(Space::Generic),
            Some(s) => match ir_space(s) {
                Some(sp) => Some(sp),
                None => {
                    self.unsupported(ins, &format!("the {} space is not in the IR", s.name()));
                    None
                }
            },
        }
    }

    pub(super) fn addr_type_for(&self, space: Space) -> Type {
        match space {
            Space::Global | Space::Generic => self.m.addr_type(),
            _ => Type::I32,
        }
    }

    /// The address of variable `sym` as seen by an access to `space`.
    pub(super) fn var_addr(&mut self, n: &ast::Name, sym: &Sym, space: Space) -> Option<Value> {
        let Sym::Var { gv, space: vs, .. } = sym else {
            if let Sym::Opaque(what) = sym {
                self.error(
                    n.span,
                    format!("unsupported use of '{}': {what} are not lowered", n.text),
                );
            } else {
                self.error(n.span, format!("'{}' is not addressable here", n.text));
            }
            return None;
        };
        let (gv, vs) = (*gv, *vs);
        if space == Space::Generic && vs != Space::Global {
            let ty = self.m.addr_type();
            let a = self.ins().symbol_addr(ty, gv);
            return Some(self.ins().cvta(CvtaDir::ToGeneric, vs, ty, a));
        }
        let ty = self.addr_type_for(vs);
        Some(self.ins().symbol_addr(ty, gv))
    }

    /// `var[imm]` or `var[reg+imm]`: the index counts elements of the variable.
    pub(super) fn indexed(
        &mut self,
        base: &ast::Name,
        index: &ast::AddrExpr,
        space: Option<Space>,
    ) -> Option<(Value, i32)> {
        let sym = match self.lookup(base) {
            Some(Err(s)) => s,
            _ => {
                self.error(
                    base.span,
                    format!("'{}' is not an array variable", base.text),
                );
                return None;
            }
        };
        let elem = match &sym {
            Sym::Var {
                elem, space: vs, ..
            } => (*elem, *vs),
            _ => (1, Space::Global),
        };
        let space = space.unwrap_or(elem.1);
        let addr = self.var_addr(base, &sym, space)?;
        let aty = self.func.values[addr].ty;
        let Some(reg) = &index.base else {
            let off = index.offset.checked_mul(i64::from(elem.0));
            return match off.and_then(|o| i32::try_from(o).ok()) {
                Some(o) => Some((addr, o)),
                None => {
                    self.error(index.span, "array offset does not fit in 32 bits");
                    None
                }
            };
        };
        let var = self.reg_var(reg)?;
        let i = self.use_var(var);
        let ity = self.func.values[i].ty;
        if !ity.is_int() {
            self.error(reg.span, "array index must be an integer register");
            return None;
        }
        let k = self.iconst(ity, index.offset);
        let i = self.ins().add(i, k);
        let s = self.iconst(ity, i64::from(elem.0));
        let i = self.ins().mul(i, s);
        let i = self.fit(i, aty, false)?;
        Some((self.ins().add(addr, i), 0))
    }

    /// An address operand: the address value and the byte offset.
    pub(super) fn address(&mut self, op: &Operand, space: Space) -> Option<(Value, i32)> {
        let off32 = |this: &mut Self, off: i64, span: Span| match i32::try_from(off) {
            Ok(o) => Some(o),
            Err(_) => {
                this.error(
                    span,
                    "address offset does not fit in a signed 32-bit immediate",
                );
                None
            }
        };
        match op {
            Operand::Address(a) => match &a.base {
                Some(n) => {
                    let off = off32(self, a.offset, a.span)?;
                    match self.lookup(n) {
                        Some(Ok(_)) => {
                            let var = self.reg_var(n)?;
                            let v = self.use_var(var);
                            let v = match self.func.values[v].ty {
                                Type::I32 | Type::I64 => v,
                                Type::I8 | Type::I16 => self.ins().zext(Type::I32, v),
                                _ => {
                                    self.error(n.span, "address register must be an integer");
                                    return None;
                                }
                            };
                            Some((v, off))
                        }
                        Some(Err(Sym::Param { offset })) if space == Space::Param => {
                            let ty = self.addr_type_for(space);
                            let v = self.iconst(ty, i64::from(offset));
                            Some((v, off))
                        }
                        Some(Err(sym)) => Some((self.var_addr(n, &sym, space)?, off)),
                        None => {
                            self.error(n.span, format!("undeclared name '{}'", n.text));
                            None
                        }
                    }
                }
                None => {
                    // [imm]: an absolute address (unsigned 32-bit).
                    let ty = self.addr_type_for(space);
                    let v = self.iconst(ty, a.offset);
                    Some((v, 0))
                }
            },
            Operand::Indexed { base, index, .. } => self.indexed(base, index, Some(space)),
            other => {
                self.error(other.span(), "expected an address operand");
                None
            }
        }
    }

    /// Element type and width of a load or store.
    pub(super) fn access(&mut self, ins: &Instruction) -> Option<(Type, ast::Type, u8)> {
        let (ty, _) = self.bits_type(ins)?;
        if ty == Type::Pred {
            self.unsupported(ins, "predicates have no memory form");
            return None;
        }
        let width = match ins.vector() {
            None => 1,
            Some(n @ (2 | 4)) => n as u8,
            Some(_) => {
                self.unsupported(ins, "only .v2 and .v4 accesses are in the IR");
                return None;
            }
        };
        Some((ty, ins.ty()?, width))
    }

    pub(super) fn load(&mut self, ins: &Instruction) -> Option<()> {
        let space = self.mem_space(ins)?;
        let (ty, pt, width) = self.access(ins)?;
        self.cache_hint_operand(ins, 2)?;
        let signed = pt.kind() == TypeKind::Signed;
        let order = order::order_of(ins);
        let dsts = self.dests(&ins.operands[0])?;
        if dsts.len() != usize::from(width) {
            self.error(
                ins.operands[0].span(),
                format!("{} destinations for a .v{width} load", dsts.len()),
            );
            return None;
        }
        if space == Space::Param {
            if let Some((store, off)) = self.arg_operand(&ins.operands[1]) {
                return self.load_arg(ins, store, off, ty, signed, dsts);
            }
        }
        // ld.param of a kernel parameter by name: a read at a known offset.
        let direct = match &ins.operands[1] {
            Operand::Address(ast::AddrExpr {
                base: Some(n),
                offset,
                ..
            }) if space == Space::Param => match self.lookup(n) {
                Some(Err(Sym::Param { offset: at })) => Some((at, *offset)),
                _ => None,
            },
            _ => None,
        };
        let values: Vec<Value> = if let Some((at, off)) = direct {
            let Some(base) = i64::from(at)
                .checked_add(off)
                .and_then(|x| u32::try_from(x).ok())
            else {
                self.error(ins.operands[1].span(), "parameter offset out of range");
                return None;
            };
            let elem = ty.bytes().unwrap_or(1);
            (0..u32::from(width))
                .map(|k| self.ins().load_param(ty, base + k * elem))
                .collect()
        } else {
            let cache = self.cache_op(ins, space)?;
            let (addr, off) = self.address(&ins.operands[1], space)?;
            let v = self
                .ins()
                .load_cached(space, ty, width, addr, off, cache)
                .into_vec();
            // `ld.acquire`: later accesses stay after the fence (`order`).
            self.fence_after(order);
            v
        };
        for (dst, v) in dsts.into_iter().zip(values) {
            self.write(dst, v, signed, ins.operands[0].span())?;
        }
        Some(())
    }

    pub(super) fn store(&mut self, ins: &Instruction) -> Option<()> {
        let space = self.mem_space(ins)?;
        let (ty, pt, width) = self.access(ins)?;
        self.cache_hint_operand(ins, 2)?;
        let arg = match space {
            Space::Param => self.arg_operand(&ins.operands[0]),
            _ => None,
        };
        if arg.is_none() && matches!(space, Space::Param | Space::Const) {
            return self.unsupported(
                ins,
                "only stores to call parameters and results can write the param space",
            );
        }
        let srcs: Vec<&Operand> = match &ins.operands[1] {
            Operand::Vector(items, _) => items.iter().collect(),
            other => vec![other],
        };
        let mut values = Vec::new();
        if srcs.len() == 1 && width > 1 {
            // A vector register named whole.
            if let Operand::Name(n) = srcs[0] {
                if let Some(Ok(r)) = self.lookup(n) {
                    for var in r.vars() {
                        let v = self.use_var(var);
                        values.push(self.fit(v, ty, false)?);
                    }
                }
            }
        } else {
            for s in srcs {
                values.push(self.read(s, ty, Some(pt))?);
            }
        }
        if values.len() != usize::from(width) {
            self.error(
                ins.operands[1].span(),
                format!("{} values for a .v{width} store", values.len()),
            );
            return None;
        }
        if let Some((store, off)) = arg {
            return self.store_arg(ins, store, off, &values);
        }
        let cache = self.cache_op(ins, space)?;
        let (addr, off) = self.address(&ins.operands[0], space)?;
        // `st.release`: earlier accesses stay before the fence (`order`).
        self.fence_before(order::order_of(ins));
        self.ins().store_cached(space, addr, off, &values, cache);
        Some(())
    }

    /// An access's operands are `n`, plus with `.L2::cache_hint` a 64-bit cache policy
    /// (from `createpolicy`) that is read, so a bad operand is still a diagnostic, and
    /// dropped: sm_5x has no L2 eviction policies, and a hint never changes what an access
    /// reads or writes.
    pub(super) fn cache_hint_operand(&mut self, ins: &Instruction, n: usize) -> Option<()> {
        let hint = ins.has_flag("L2::cache_hint");
        match ins.operands.len() {
            k if k == n => Some(()),
            k if k == n + 1 && hint => {
                self.read(&ins.operands[n], Type::I64, Some(ast::Type::B64))?;
                Some(())
            }
            _ => self.unsupported(
                ins,
                &format!("expected {n} operands (a cache policy only with .L2::cache_hint)"),
            ),
        }
    }

    /// The cache operator of an `ld`/`st` (see `lower::select::cache` for what each becomes).
    /// `.ca`/`.wb` are the defaults; `.nc` wins over an operator after it; `.relaxed`,
    /// `.acquire` and `.release` (sm_70 PTX) are taken as `.volatile`, their sm_5x analogue.
    /// ptxas's errors: `.volatile` on `.local`, `.nc` outside `.global`, `.nc.lu`.
    pub(super) fn cache_op(&mut self, ins: &Instruction, space: Space) -> Option<CacheOp> {
        let volatile = ["volatile", "relaxed", "acquire", "release", "mmio"]
            .iter()
            .any(|f| ins.has_flag(f));
        if volatile && space == Space::Local {
            self.error(
                ins.span,
                "modifier '.volatile' cannot be applied to the '.local' space",
            );
            return None;
        }
        if ins.has_flag("nc") {
            if space != Space::Global {
                self.error(ins.span, "ld.nc needs the .global space");
                return None;
            }
            if ins.has_flag("lu") {
                self.error(ins.span, "illegal cache operation .lu for ld.nc");
                return None;
            }
            return Some(CacheOp::Nc);
        }
        if volatile {
            return Some(CacheOp::Volatile);
        }
        let ops = [
            ("cg", CacheOp::Cg),
            ("cs", CacheOp::Cs),
            ("lu", CacheOp::Lu),
            ("cv", CacheOp::Cv),
            ("wt", CacheOp::Wt),
        ];
        Some(
            ops.iter()
                .find(|(f, _)| ins.has_flag(f))
                .map_or(CacheOp::Default, |&(_, c)| c),
        )
    }
}
