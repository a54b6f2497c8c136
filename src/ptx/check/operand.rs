//! Operands in the checker: names resolved in the current scopes, register types against what
//! the instruction expects (PTX's relaxed type checking, [`compatible`]), predicates,
//! address-operand shapes and the state-space rules of memory operands.
//!
//! In: one instruction whose opcode and modifiers were checked. Out: one diagnostic per operand
//! rule broken, at the operand's span.

use super::*;

impl<'a, 'f> Checker<'a, 'f> {
    pub(super) fn resolve_operand(&mut self, o: &Operand) {
        match o {
            Operand::Name(n)
            | Operand::Elem { name: n, .. }
            | Operand::Selected { name: n, .. }
            | Operand::NameOffset { name: n, .. } => {
                self.resolve(n);
            }
            Operand::Address(a) => {
                if let Some(b) = &a.base {
                    self.resolve(b);
                }
            }
            Operand::Indexed { base, index, .. } => {
                self.resolve(base);
                if let Some(b) = &index.base {
                    self.resolve(b);
                }
            }
            Operand::Vector(items, _) | Operand::TexArgs(items, _) | Operand::List(items, _) => {
                for it in items {
                    self.resolve_operand(it);
                }
            }
            Operand::Not(inner, _) | Operand::Neg(inner, _) => self.resolve_operand(inner),
            Operand::PredPair(a, b) => {
                // `_|p`: the first result may be the sink (`elect.sync`).
                if a.text != "_" {
                    self.resolve(a);
                }
                self.resolve(b);
            }
            Operand::Special { .. } | Operand::Imm(..) | Operand::Sink(_) => {}
        }
    }

    /// The register declaration a plain name operand refers to, if it is a register. The
    /// type checks ask after the instruction's names were resolved ([`Checker::resolve`]),
    /// in the same scopes, so what a name resolved to is read back from
    /// [`Checker::found`] instead of looked up a second time.
    pub(super) fn reg_of(&self, n: &Name) -> Option<&'a VarDecl> {
        let s = match self.found.get(n) {
            Some(s) => s,
            None => self.lookup(n),
        };
        match s {
            Some(Sym::Var(v)) if v.space == StateSpace::Reg => Some(v),
            _ => None,
        }
    }

    pub(super) fn operand_type(&mut self, i: &Instruction, o: &Operand, ty: Type, widen: bool) {
        match o {
            Operand::Name(n)
            | Operand::Elem { name: n, .. }
            | Operand::Selected { name: n, .. } => {
                if let Some(v) = self.reg_of(n) {
                    if !compatible(ty, v.ty, widen) {
                        self.error(
                            n.span,
                            format!(
                                "type mismatch: '{}' is .{} but '{}' expects .{}",
                                n.text,
                                v.ty.name(),
                                instr_name(i),
                                ty.name()
                            ),
                        );
                    }
                }
            }
            Operand::Vector(items, _) => {
                for it in items {
                    self.operand_type(i, it, ty, widen);
                }
            }
            Operand::Not(inner, _) | Operand::Neg(inner, _) => {
                self.operand_type(i, inner, ty, widen)
            }
            Operand::Imm(Imm::F32(_) | Imm::F64(_), span)
                if matches!(ty.kind(), TypeKind::Signed | TypeKind::Unsigned) =>
            {
                self.error(
                    *span,
                    format!(
                        "type mismatch: floating-point constant where '{}' expects .{}",
                        instr_name(i),
                        ty.name()
                    ),
                );
            }
            _ => {}
        }
    }

    pub(super) fn pred_operand(&mut self, i: &Instruction, o: &Operand) {
        match o {
            Operand::Name(n) => {
                if let Some(v) = self.reg_of(n) {
                    if v.ty != Type::Pred {
                        self.error(
                            n.span,
                            format!(
                                "type mismatch: '{}' is .{} but '{}' expects .pred",
                                n.text,
                                v.ty.name(),
                                instr_name(i)
                            ),
                        );
                    }
                }
            }
            Operand::Not(inner, _) => self.pred_operand(i, inner),
            Operand::PredPair(a, b) => {
                self.pred_operand(i, &Operand::Name(a.clone()));
                self.pred_operand(i, &Operand::Name(b.clone()));
            }
            _ => {}
        }
    }

    /// Operand shapes the table's counts do not capture: where loads and stores take their
    /// address.
    pub(super) fn shape(&mut self, i: &Instruction) {
        let addr_at = match i.opcode {
            Opcode::Ld | Opcode::Ldu => 1,
            Opcode::St => 0,
            _ => return,
        };
        if let Some(o) = i.operands.get(addr_at) {
            if !matches!(o, Operand::Address(_) | Operand::Indexed { .. }) {
                self.error(
                    o.span(),
                    format!(
                        "malformed address: operand {} of '{}' must be an address such as [reg] or [var+imm]",
                        addr_at + 1,
                        i.opcode.name()
                    ),
                );
            }
        }
    }

    /// State-space rules for memory operands.
    pub(super) fn spaces(&mut self, i: &Instruction) {
        let space = i.space();
        if i.opcode == Opcode::St && space == Some(StateSpace::Const) {
            self.error(i.opcode_span, "'st' cannot write to the .const state space");
        }
        if matches!(
            i.opcode,
            Opcode::Ld | Opcode::St | Opcode::Ldu | Opcode::Atom | Opcode::Red
        ) && matches!(
            space,
            Some(StateSpace::Reg | StateSpace::Sreg | StateSpace::Tex)
        ) {
            let s = space.map(|s| s.name()).unwrap_or("");
            self.error(
                i.opcode_span,
                format!("'{}' cannot access the {s} state space", i.opcode.name()),
            );
        }
        if !matches!(
            i.opcode,
            Opcode::Ld | Opcode::St | Opcode::Ldu | Opcode::Atom | Opcode::Red | Opcode::Prefetch
        ) {
            return;
        }
        for o in &i.operands {
            let base = match o {
                Operand::Address(AddrExpr {
                    base: None, span, ..
                }) if space != Some(StateSpace::Local) => {
                    self.error(
                        *span,
                        "malformed address: immediate addresses are only allowed for .local",
                    );
                    continue;
                }
                Operand::Address(AddrExpr { base: Some(b), .. }) => b,
                Operand::Indexed { base, .. } => base,
                _ => continue,
            };
            match self.lookup(base) {
                Some(Sym::Var(v)) if v.space == StateSpace::Reg => {
                    if matches!(v.ty.kind(), TypeKind::Float | TypeKind::Pred) {
                        self.error(
                            base.span,
                            format!(
                                "malformed address: register '{}' is .{}, not an integer",
                                base.text,
                                v.ty.name()
                            ),
                        );
                    }
                }
                Some(Sym::Var(v)) => {
                    let vs = v.space;
                    let ok = match space {
                        None => true,
                        Some(s) => {
                            s == vs
                                || (s == StateSpace::Shared && vs == StateSpace::SharedCluster)
                                || (s == StateSpace::SharedCluster && vs == StateSpace::Shared)
                        }
                    };
                    if !ok {
                        self.error(
                            base.span,
                            format!(
                                "state space mismatch: '{}' is declared {} but '{}' accesses {}",
                                base.text,
                                vs.name(),
                                instr_name(i),
                                space.map(|s| s.name()).unwrap_or("generic memory")
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}
