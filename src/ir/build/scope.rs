//! Registers and scopes: declaring `.reg` variables and kernel-scope addressable variables, and
//! resolving a PTX name to a register, a vector element or a symbol through the nested `{ }`
//! scopes.
//!
//! In: declarations and names as the parser gives them. Out: SSA variable numbers
//! ([`VarId`]) and [`Sym`]s; an unknown or mistyped name is a diagnostic at its span.

use super::*;

impl<'m, 'f> FnBuilder<'m, 'f> {
    // ---- declarations ---------------------------------------------------------------------

    pub(super) fn declare(&mut self, v: &ast::VarDecl) {
        self.scopes_changed();
        if v.space == StateSpace::Param {
            // A call's argument or result variable: bytes in registers (calls.rs).
            for d in &v.names {
                let size = calls::decl_size(v, d);
                let sym = self.new_store(size);
                if let Some(s) = self.scopes.last_mut() {
                    s.syms.insert(d.name.id, sym);
                }
            }
            return;
        }
        if v.space != StateSpace::Reg {
            for d in &v.names {
                let mut ir_name = format!("{}.{}", self.kernel, d.name.text);
                // The same name declared again in another { } scope gets a numbered suffix.
                let mut n = 1;
                while self.m.ir.vars.values().any(|v| v.name == ir_name) {
                    n += 1;
                    ir_name = format!("{}.{}.{n}", self.kernel, d.name.text);
                }
                let scopes = &self.scopes;
                let scoped = |n: &ast::Name| -> Option<Sym> {
                    scopes.iter().rev().find_map(|s| s.syms.get(&n.id).cloned())
                };
                if let Some(sym) = self.m.declare_var(v, d, &ir_name, &scoped) {
                    if let Sym::Var { gv, .. } = sym {
                        self.m.ir.var_scopes[gv] = self.frame_scope();
                    }
                    if let Some(s) = self.scopes.last_mut() {
                        s.syms.insert(d.name.id, sym);
                    }
                }
            }
            return;
        }
        let ty = ir_type(v.ty);
        let width = v.vector.unwrap_or(1);
        for d in &v.names {
            if let Some(count) = d.range {
                if let Some(s) = self.scopes.last_mut() {
                    s.ranges.insert(
                        d.name.id,
                        RangeInfo {
                            count,
                            ty,
                            width,
                            // Room for the declared count (up to 256) up front rather than
                            // rehashing as registers are first used (capacity only).
                            made: HashMap::with_capacity_and_hasher(
                                count.min(256) as usize,
                                Default::default(),
                            ),
                        },
                    );
                }
            } else {
                let info = self.make_reg(ty, width, &d.name.text);
                if let Some(s) = self.scopes.last_mut() {
                    s.regs.insert(d.name.id, info);
                }
            }
        }
    }

    pub(super) fn make_reg(&mut self, ty: Option<Type>, width: u32, name: &str) -> RegInfo {
        // A register of a type the IR cannot hold gets no variables; using it is an error.
        // The variables are made one after another: the register is their range.
        let first = self.var_ty.len();
        let mut len = 0;
        if let Some(t) = ty {
            for _ in 0..width {
                self.new_var(t);
                len += 1;
            }
        }
        if len == 1 {
            self.var_name[first] = Some(self.func.reg_names.len() as u32);
            self.func.reg_names.push(name.to_string());
        }
        RegInfo {
            first: first as u32,
            len,
        }
    }

    /// The scopes changed (a scope entered or left, a declaration made, an inlined call's
    /// scopes swapped in or out, a new kernel): what [`Self::lookup`] remembered is stale.
    pub(in crate::ir) fn scopes_changed(&mut self) {
        self.m.found.forget();
    }

    /// What a name means here: a register, or an addressable symbol. Remembered per name
    /// until the scopes change ([`ModuleBuilder::found`]): compiler output declares its
    /// registers at the top of the kernel, so most of a body's lookups are of names already
    /// looked up in the same scopes, one slot read instead of a walk over the scopes' maps.
    /// The walk finds the same again (a register made on first use is in its range's
    /// `made` map by then); debug builds compare.
    pub(super) fn lookup(&mut self, name: &ast::Name) -> Found {
        if let Some(found) = self.m.found.get(name) {
            debug_assert!(self.lookup_in_scopes(name) == found, "{}", name.text);
            return found;
        }
        let found = self.lookup_in_scopes(name);
        if found.is_some() {
            self.m.found.put(name, found);
        }
        found
    }

    /// [`Self::lookup`] by a walk over the scopes, innermost first, then the globals.
    pub(super) fn lookup_in_scopes(&mut self, name: &ast::Name) -> Found {
        let id = name.id;
        let numbered = self.m.names.numbered(name);
        for k in (0..self.scopes.len()).rev() {
            // Empty maps are skipped without hashing (compiler output declares registers
            // with ranges only).
            let scope = &self.scopes[k];
            if !scope.regs.is_empty() {
                if let Some(r) = scope.regs.get(&id) {
                    return Some(Ok(*r));
                }
            }
            if !scope.syms.is_empty() {
                if let Some(s) = scope.syms.get(&id) {
                    return Some(Err(*s));
                }
            }
            if scope.ranges.is_empty() {
                continue;
            }
            if let Some((prefix, n)) = numbered {
                let hit = scope
                    .ranges
                    .get(&prefix)
                    .filter(|r| n < r.count)
                    .map(|r| (r.made.get(&n).copied(), r.ty, r.width));
                if let Some((made, ty, width)) = hit {
                    if let Some(info) = made {
                        return Some(Ok(info));
                    }
                    let info = self.make_reg(ty, width, &name.text);
                    if let Some(r) = self.scopes[k].ranges.get_mut(&prefix) {
                        r.made.insert(n, info);
                    }
                    return Some(Ok(info));
                }
            }
        }
        self.m.globals.get(&id).copied().map(Err)
    }

    /// The scalar register variable a name refers to.
    pub(super) fn reg_var(&mut self, n: &ast::Name) -> Option<VarId> {
        match self.lookup(n) {
            Some(Ok(r)) => self.scalar_var(n, &r),
            _ => {
                self.error(n.span, format!("'{}' is not a register", n.text));
                None
            }
        }
    }

    /// The variable of scalar register `n`, whose [`Self::lookup`] gave `r`.
    pub(super) fn scalar_var(&mut self, n: &ast::Name, r: &RegInfo) -> Option<VarId> {
        match r.len {
            1 => Some(r.first as usize),
            _ => self.not_scalar(n, r),
        }
    }

    /// [`FnBuilder::scalar_var`]'s errors, out of line so that the common case inlines.
    #[cold]
    #[inline(never)]
    pub(super) fn not_scalar(&mut self, n: &ast::Name, r: &RegInfo) -> Option<VarId> {
        match r.len {
            0 => {
                self.error(
                    n.span,
                    format!(
                        "unsupported register '{}': its type has no IR representation (128-bit or opaque)",
                        n.text
                    ),
                );
                None
            }
            _ => {
                self.error(
                    n.span,
                    format!(
                        "unsupported use of vector register '{}' as a scalar",
                        n.text
                    ),
                );
                None
            }
        }
    }

    pub(super) fn elem_var(&mut self, n: &ast::Name, comp: ast::Component) -> Option<VarId> {
        match self.lookup(n) {
            Some(Ok(r)) => {
                let v = r.vars().nth(comp.index() as usize);
                if v.is_none() {
                    self.error(
                        n.span,
                        format!("'{}' has no component .{}", n.text, comp.name()),
                    );
                }
                v
            }
            _ => {
                self.error(n.span, format!("'{}' is not a vector register", n.text));
                None
            }
        }
    }
}
