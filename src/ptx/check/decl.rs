//! Declarations and initializers in the checker: names declared once per scope, the constant
//! bank's 64 KB, the shape of an initializer against the declared dimensions, scalar values
//! against the type, and addresses in initializers under ptxas 11.8's rules.
//!
//! In: a variable declaration and the checker's scopes. Out: its names in the current scope,
//! and one diagnostic per rule broken, at the span that breaks it.

use super::*;

impl<'a, 'f> Checker<'a, 'f> {
    /// Declare the names of a declaration in the current scope (or globally) and check it.
    pub(super) fn var_decl(&mut self, v: &'a VarDecl, global: bool) {
        self.found.forget();
        if let Some(a) = v.align {
            if !a.is_power_of_two() {
                self.error(v.span, format!("alignment {a} is not a power of two"));
            }
        }
        if let Some(PtrAttr { align: Some(a), .. }) = &v.ptr {
            if !a.is_power_of_two() {
                self.error(v.span, format!("alignment {a} is not a power of two"));
            }
        }
        if v.ty == Type::Pred && v.space != StateSpace::Reg {
            self.error(
                v.span,
                "predicate variables may only be declared in the .reg state space",
            );
        }
        if let Some(n) = v.vector {
            if v.ty == Type::Pred {
                self.error(v.span, "vectors of predicates are not allowed");
            } else if n * v.ty.bits() > 128 {
                self.error(
                    v.span,
                    format!(
                        "vector .v{n} .{} is {} bits; vectors cannot exceed 128 bits",
                        v.ty.name(),
                        n * v.ty.bits()
                    ),
                );
            }
        }
        for d in &v.names {
            if v.space == StateSpace::Const && !v.linkage.contains(&Linkage::Extern) {
                self.const_space(v, d);
            }
            if let Some(init) = &d.init {
                self.initializer(v, d, init);
            }
            if global {
                if let Some(prev) = self.globals.get(&d.name.id) {
                    let extern_pair = match prev {
                        Sym::Var(p) => {
                            p.linkage.contains(&Linkage::Extern)
                                || v.linkage.contains(&Linkage::Extern)
                        }
                        _ => false,
                    };
                    if !extern_pair {
                        self.error(
                            d.name.span,
                            format!("duplicate declaration of '{}'", d.name.text),
                        );
                        continue;
                    }
                }
                self.globals.insert(d.name.id, Sym::Var(v));
                continue;
            }
            let scope = self.scopes.last_mut().expect("a local scope is open");
            let dup = if let Some(n) = d.range {
                let dup = scope.ranges.contains_key(&d.name.id);
                scope.ranges.insert(d.name.id, (n, v));
                dup
            } else {
                scope.names.insert(d.name.id, Sym::Var(v)).is_some()
            };
            if dup {
                self.error(
                    d.name.span,
                    format!("duplicate declaration of '{}'", d.name.text),
                );
            }
        }
    }

    /// Count `.const` variable `d` against the 64 KB of constant bank 3 (ptxas: "File uses
    /// too much global constant data"); the error is at the variable that crosses it.
    pub(super) fn const_space(&mut self, v: &'a VarDecl, d: &'a Declarator) {
        if self.const_end == u64::MAX {
            return;
        }
        let elem = u64::from(v.ty.bits().div_ceil(8)) * u64::from(v.vector.unwrap_or(1));
        let align = u64::from(v.align.unwrap_or(elem as u32).max(1));
        let size = d
            .resolved_dims()
            .iter()
            .fold(elem, |n, x| n.saturating_mul(x.unwrap_or(0)));
        let end = self
            .const_end
            .checked_next_multiple_of(align)
            .unwrap_or(u64::MAX)
            .saturating_add(size);
        if end > MAX_CONST {
            self.error(
                d.name.span,
                format!(
                    "file uses too much global constant data ({end:#x} bytes, {MAX_CONST:#x} max)"
                ),
            );
            self.const_end = u64::MAX;
        } else {
            self.const_end = end;
        }
    }

    pub(super) fn initializer(&mut self, v: &'a VarDecl, d: &'a Declarator, init: &'a Init) {
        if matches!(
            v.space,
            StateSpace::Reg | StateSpace::Param | StateSpace::Local | StateSpace::Shared
        ) {
            self.error(
                init.span(),
                format!(
                    "bad initializer: {} variables cannot be initialized",
                    v.space.name()
                ),
            );
            return;
        }
        if v.linkage.contains(&Linkage::Extern) {
            self.error(
                init.span(),
                "bad initializer: external variables cannot be initialized",
            );
            return;
        }
        if matches!(v.ty, Type::F16 | Type::F16x2 | Type::Pred) {
            self.error(
                init.span(),
                format!(
                    "bad initializer: .{} variables cannot be initialized",
                    v.ty.name()
                ),
            );
            return;
        }
        let opaque = v.ty.kind() == TypeKind::Opaque;
        match init {
            Init::Fields(..) if opaque => return,
            Init::Fields(_, span) => {
                self.error(
                    *span,
                    format!(
                        "bad initializer: field list for a non-opaque .{} variable",
                        v.ty.name()
                    ),
                );
                return;
            }
            _ if opaque => {
                self.error(
                    init.span(),
                    format!("bad initializer: .{} takes a field list such as {{ filter_mode = nearest }}", v.ty.name()),
                );
                return;
            }
            _ => {}
        }
        let dims = d.resolved_dims();
        self.declaring = &d.name.text;
        self.init_shape(v, init, &dims);
    }

    /// An initializer for an array of `dims` (scalar when empty; a vector variable takes a
    /// brace list of at most its width).
    pub(super) fn init_shape(&mut self, v: &'a VarDecl, init: &'a Init, dims: &[Option<u64>]) {
        match (init, dims.split_first()) {
            (Init::List(items, span), Some((dim, rest))) => {
                if let Some(n) = dim {
                    if items.len() as u64 > *n {
                        self.error(
                            *span,
                            format!(
                                "bad initializer: {} elements for an array of {n}",
                                items.len()
                            ),
                        );
                    }
                }
                for it in items {
                    self.init_shape(v, it, rest);
                }
            }
            (Init::List(items, span), None) => match v.vector {
                Some(n) if items.len() as u32 <= n => {
                    for it in items {
                        self.init_scalar(v, it);
                    }
                }
                _ => self.error(*span, "bad initializer: a brace list for a scalar variable"),
            },
            (_, _) => self.init_scalar(v, init),
        }
    }

    pub(super) fn init_scalar(&mut self, v: &'a VarDecl, init: &'a Init) {
        match init {
            Init::List(_, span) | Init::Fields(_, span) => {
                self.error(*span, "bad initializer: too many levels of braces")
            }
            Init::Imm(Imm::Int { .. }, _) => {}
            Init::Imm(_, span) => {
                if v.ty.kind() != TypeKind::Float && v.ty.kind() != TypeKind::Bits {
                    self.error(
                        *span,
                        format!(
                            "bad initializer: floating-point value for a .{} variable",
                            v.ty.name()
                        ),
                    );
                }
            }
            Init::Addr {
                name,
                mask,
                generic,
                offset,
                span,
            } => self.init_addr(v, name, *mask, *generic, *offset, *span),
        }
    }

    /// An address in an initializer (`x`, `generic(x)+4`, `0xff00(x)`), with ptxas 11.8's
    /// rules: the name is a `.global` or `.const` variable or a function declared before
    /// (kernels included, not the variable itself); a function's address takes neither
    /// `generic()` nor an offset; the variable is `.u32` or `.u64`, or with a mask `.u8` too
    /// (ptxas: "Initial value type mismatch"); a mask is one byte of the address
    /// (0xff << 8k) and needs PTX ISA 7.1.
    pub(super) fn init_addr(
        &mut self,
        v: &'a VarDecl,
        name: &'a Name,
        mask: Option<u64>,
        generic: bool,
        offset: i64,
        span: Span,
    ) {
        let ty_ok = match mask {
            None => matches!(v.ty, Type::U32 | Type::U64),
            Some(_) => matches!(v.ty, Type::U8 | Type::U32 | Type::U64),
        };
        if !ty_ok {
            let allowed = if mask.is_some() {
                ".u8, .u32 or .u64"
            } else {
                ".u32 or .u64 (.u8 with a mask such as 0xff(x))"
            };
            self.error(
                span,
                format!(
                    "bad initializer: an address can only initialize a {allowed} variable, not .{}",
                    v.ty.name()
                ),
            );
        }
        if let Some(m) = mask {
            if m.count_ones() != 8 || m.trailing_zeros() % 8 != 0 {
                self.error(
                    span,
                    format!(
                        "bad initializer: mask {m:#x} is not one byte of the address (0xff, 0xff00, ..., 0xff00000000000000)"
                    ),
                );
            }
            if let Some((major, minor)) = self.version.filter(|&v| v < (7, 1)) {
                self.error(
                    span,
                    format!(
                        "bad initializer: mask() in an initializer requires PTX ISA 7.1 (this module is .version {major}.{minor})"
                    ),
                );
            }
        }
        // Scopes, then module names; a label is no initializer.
        let found = self
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.names.get(&name.id).copied())
            .or_else(|| self.globals.get(&name.id).copied());
        match found {
            Some(Sym::Var(t)) if matches!(t.space, StateSpace::Global | StateSpace::Const) => {}
            Some(Sym::Var(t)) => self.error(
                name.span,
                format!(
                    "bad initializer: '{}' is a {} variable; only the addresses of .global and .const variables can initialize a variable",
                    name.text,
                    t.space.name()
                ),
            ),
            Some(Sym::Func { kernel, .. }) => {
                let what = if kernel { "kernel" } else { "function" };
                if generic {
                    self.error(
                        span,
                        format!(
                            "bad initializer: generic() of {what} '{}' (only variables have generic addresses)",
                            name.text
                        ),
                    );
                } else if offset != 0 {
                    self.error(
                        span,
                        format!(
                            "bad initializer: an offset cannot be added to the address of {what} '{}'",
                            name.text
                        ),
                    );
                }
            }
            _ if name.text == self.declaring => self.error(
                name.span,
                format!(
                    "bad initializer: '{}' names the variable it initializes",
                    name.text
                ),
            ),
            None if self.module_names.contains(&name.id) => self.error(
                name.span,
                format!(
                    "bad initializer: '{}' is declared after this initializer; an initializer can only name what is declared before it",
                    name.text
                ),
            ),
            Some(Sym::Label) | None => self.error(
                name.span,
                format!("undeclared variable '{}' in initializer", name.text),
            ),
        }
    }
}
