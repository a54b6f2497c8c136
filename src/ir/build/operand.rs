//! Operands: reading a PTX operand as an IR value of a wanted type (registers, immediates,
//! symbols, vectors), fitting widths, and writing results back to destination registers.
//!
//! In: AST operands of one instruction. Out: IR values and destination variables; a
//! width or kind that does not fit is a diagnostic at the operand.

use super::*;

impl<'m, 'f> FnBuilder<'m, 'f> {
    /// The instruction type as an IR integer type; floats and other types are refused with
    /// `what` as the reason.
    pub(super) fn int_type(&mut self, ins: &Instruction) -> Option<(Type, bool)> {
        let Some(t) = ins.ty() else {
            self.unsupported(ins, "no instruction type");
            return None;
        };
        match t.kind() {
            TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed => {
                let ty = ir_type(t).unwrap_or(Type::Pred);
                if !ty.is_int() {
                    self.unsupported(ins, "128-bit integers are not in the IR");
                    return None;
                }
                Some((ty, t.kind() == TypeKind::Signed))
            }
            TypeKind::Float => {
                self.unsupported(ins, "floating-point arithmetic is not in the IR yet");
                None
            }
            _ => {
                self.unsupported(ins, "operand type not in the IR");
                None
            }
        }
    }

    pub(super) fn reject_flags(&mut self, ins: &Instruction, flags: &[&str]) -> Option<()> {
        for f in flags {
            if ins.has_flag(f) {
                return self.unsupported(ins, &format!("'.{f}' is not in the IR yet"));
            }
        }
        if ins.rounding().is_some() {
            return self.unsupported(ins, "rounding modes are floating-point only");
        }
        Some(())
    }

    pub(super) fn ops<'i>(&mut self, ins: &'i Instruction, n: usize) -> Option<&'i [Operand]> {
        if ins.operands.len() != n {
            self.unsupported(ins, &format!("expected {n} operands"));
            return None;
        }
        Some(&ins.operands)
    }

    // -- operands --

    pub(super) fn iconst(&mut self, ty: Type, x: i64) -> Value {
        self.ins().iconst(ty, x)
    }

    pub(super) fn pred_const(&mut self, b: bool) -> Value {
        let z = self.iconst(Type::I32, 0);
        let cc = if b { IntCC::Eq } else { IntCC::Ne };
        self.ins().icmp(cc, z, z)
    }

    /// Convert `v` to `want`: truncate a wider integer, extend a narrower one.
    pub(super) fn fit(&mut self, v: Value, want: Type, signed: bool) -> Option<Value> {
        let have = self.func.values[v].ty;
        if have == want {
            return Some(v);
        }
        if !have.is_int() || !want.is_int() {
            return None;
        }
        Some(if have.bits() > want.bits() {
            self.ins().trunc(want, v)
        } else if signed {
            self.ins().sext(want, v)
        } else {
            self.ins().zext(want, v)
        })
    }

    /// Read a source operand as a value of type `want`.
    pub(super) fn read(
        &mut self,
        op: &Operand,
        want: Type,
        itype: Option<ast::Type>,
    ) -> Option<Value> {
        let span = op.span();
        let mismatch = |this: &mut Self| {
            this.error(span, format!("operand does not fit type {want}"));
            None
        };
        match op {
            Operand::Name(n) => match self.lookup(n) {
                Some(Ok(r)) => {
                    // (`lookup` once: `reg_var` would repeat it.)
                    let var = self.scalar_var(n, &r)?;
                    let v = self.use_var(var);
                    match self.fit(v, want, false) {
                        Some(v) => Some(v),
                        None => mismatch(self),
                    }
                }
                Some(Err(sym)) => self.symbol_value(n, &sym, want, 0),
                // A function's address: its value (see `calls::function_ids`).
                None if self.m.fn_ids.contains_key(n.text.as_str()) && want.bytes() >= Some(4) => {
                    let id = self.m.fn_ids[n.text.as_str()];
                    Some(self.ins().iconst(want, id as i64))
                }
                // A kernel's address: its function descriptor (dynamic parallelism).
                None if self.m.kernels.contains(n.text.as_str())
                    && matches!(want.bytes(), Some(4 | 8)) =>
                {
                    let descs = &mut self.m.ir.kernel_descs;
                    let entry = match descs.iter().position(|k| *k == n.text) {
                        Some(k) => k,
                        None => {
                            descs.push(n.text.to_string());
                            descs.len() - 1
                        }
                    } as u32;
                    let ty = if want.bytes() == Some(8) {
                        Type::I64
                    } else {
                        Type::I32
                    };
                    let v = self.ins().kernel_desc(ty, entry);
                    match self.fit(v, want, false) {
                        Some(v) => Some(v),
                        None => mismatch(self),
                    }
                }
                None if self.m.funcs.contains(&n.id) => {
                    self.error(
                        n.span,
                        format!(
                            "unsupported use of function '{}' as a value (leafold inlines calls: there are no function addresses or indirect calls)",
                            n.text
                        ),
                    );
                    None
                }
                None => {
                    self.error(n.span, format!("undeclared name '{}'", n.text));
                    None
                }
            },
            Operand::Elem { name, comp } => {
                let var = self.elem_var(name, *comp)?;
                let v = self.use_var(var);
                match self.fit(v, want, false) {
                    Some(v) => Some(v),
                    None => mismatch(self),
                }
            }
            Operand::Imm(imm, _) => {
                if want == Type::Pred {
                    return match imm {
                        ast::Imm::Int { value, .. } => Some(self.pred_const(*value != 0)),
                        _ => mismatch(self),
                    };
                }
                let t = itype.unwrap_or(ast::Type::B64);
                let bits = imm_bits(*imm, t);
                Some(self.iconst(want, bits as i64))
            }
            Operand::Special { name, comp } => {
                let reg = special(&name.text, *comp);
                let Some(reg) = reg else {
                    let c = comp.map(|c| format!(".{}", c.name())).unwrap_or_default();
                    let msg = modern::special_reg_error(&name.text).unwrap_or_else(|| {
                        format!("unsupported special register '{}{c}'", name.text)
                    });
                    self.error(name.span, msg);
                    return None;
                };
                let v = self.ins().special_reg(reg);
                match self.fit(v, want, false) {
                    Some(v) => Some(v),
                    None => mismatch(self),
                }
            }
            Operand::Not(inner, _) => {
                let v = self.read(inner, Type::Pred, itype)?;
                Some(self.ins().unary(UnaryOp::Not, v))
            }
            Operand::NameOffset { name, offset, .. } => match self.lookup(name) {
                Some(Err(sym)) => self.symbol_value(name, &sym, want, *offset),
                _ => {
                    self.error(name.span, format!("'{}' is not a variable", name.text));
                    None
                }
            },
            Operand::Indexed { base, index, .. } => {
                let (addr, off) = self.indexed(base, index, None)?;
                let addr = self.fit(addr, want, false)?;
                if off == 0 {
                    return Some(addr);
                }
                let k = self.iconst(want, i64::from(off));
                Some(self.ins().add(addr, k))
            }
            _ => {
                self.error(span, "unsupported operand form");
                None
            }
        }
    }

    /// The value of a variable or parameter name used as an operand: its address (`mov`).
    pub(super) fn symbol_value(
        &mut self,
        n: &ast::Name,
        sym: &Sym,
        want: Type,
        off: i64,
    ) -> Option<Value> {
        let base = match sym {
            Sym::Var { gv, .. } if matches!(want, Type::I32 | Type::I64) => {
                self.ins().symbol_addr(want, *gv)
            }
            Sym::Param { offset } if matches!(want, Type::I32 | Type::I64) => {
                // The address of a kernel parameter in the param space is its offset.
                self.iconst(want, i64::from(*offset))
            }
            Sym::Opaque(what) => {
                self.error(
                    n.span,
                    format!("unsupported use of '{}': {what} are not lowered", n.text),
                );
                return None;
            }
            Sym::Arg { .. } => {
                self.error(
                    n.span,
                    format!(
                        "unsupported address of call parameter '{}' (leafold inlines calls, so call parameters have no address)",
                        n.text
                    ),
                );
                return None;
            }
            _ => {
                self.error(n.span, format!("'{}' used as a {want} value", n.text));
                return None;
            }
        };
        if off == 0 {
            return Some(base);
        }
        let k = self.iconst(want, off);
        Some(self.ins().add(base, k))
    }

    /// A destination operand: the variables written, `None` entries for `_`.
    pub(super) fn dests(&mut self, op: &Operand) -> Option<Dests> {
        match op {
            Operand::Name(n) => {
                let found = self.lookup(n);
                match found {
                    Some(Ok(r)) if r.len > 0 => {
                        let mut out = Dests::new();
                        for v in r.vars() {
                            out.push(Some(v));
                        }
                        Some(out)
                    }
                    Some(Ok(_)) => {
                        self.error(
                            n.span,
                            format!(
                                "unsupported register '{}': its type has no IR representation",
                                n.text
                            ),
                        );
                        None
                    }
                    _ => {
                        self.error(
                            n.span,
                            format!("destination '{}' is not a register", n.text),
                        );
                        None
                    }
                }
            }
            Operand::Elem { name, comp } => {
                let mut out = Dests::new();
                out.push(Some(self.elem_var(name, *comp)?));
                Some(out)
            }
            Operand::Sink(_) => {
                let mut out = Dests::new();
                out.push(None);
                Some(out)
            }
            Operand::Vector(items, _) => {
                let mut out = Dests::new();
                for it in items {
                    let d = self.dests(it)?;
                    if d.len() != 1 {
                        self.error(it.span(), "unsupported nested vector");
                        return None;
                    }
                    out.push(d[0]);
                }
                Some(out)
            }
            other => {
                self.error(other.span(), "unsupported destination operand");
                None
            }
        }
    }

    /// The single scalar destination of an ALU instruction.
    pub(super) fn dest1(&mut self, op: &Operand) -> Option<Option<VarId>> {
        let d = self.dests(op)?;
        if d.len() != 1 {
            self.error(op.span(), "unsupported vector destination");
            return None;
        }
        Some(d[0])
    }

    /// Write `v` to a variable, extending or truncating to the register's type; under a
    /// select-style guard, keep the old value where the guard fails.
    pub(super) fn write(
        &mut self,
        var: Option<VarId>,
        v: Value,
        signed: bool,
        span: Span,
    ) -> Option<()> {
        let Some(var) = var else { return Some(()) };
        let rt = self.var_ty[var];
        let Some(v) = self.fit(v, rt, signed) else {
            self.error(
                span,
                format!("destination register is {rt}, the result is not"),
            );
            return None;
        };
        let v = match self.guard {
            Some((p, neg)) => {
                let old = self.use_var(var);
                if neg {
                    self.ins().select(p, old, v)
                } else {
                    self.ins().select(p, v, old)
                }
            }
            None => v,
        };
        if let Some(k) = self.var_name[var] {
            self.value_slot(v);
            if self.func.value_names[v] == 0 {
                self.func.value_names[v] = k + 1;
            }
        }
        self.def_var(var, v);
        Some(())
    }
}
