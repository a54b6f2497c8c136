//! Module-scope variables: declaring `.global`/`.const`/`.shared`/`.local` variables
//! ([`ModuleBuilder::declare_var`]), resolving addresses used in initializers and flattening
//! initializers into little-endian bytes ([`ModuleBuilder::fill_init`]).
//!
//! In: the AST declarations of one module. Out: [`VarData`] entries and [`AddrInit`]s in the
//! module being built, or one diagnostic per refused declaration. Invariant: an initializer
//! never yields more than `MAX_INIT_BYTES` bytes.

use super::*;

/// Initialized variables larger than this are refused rather than materialized.
pub(super) const MAX_INIT_BYTES: u32 = 1 << 28;

pub(super) fn is_unsized(d: &ast::Declarator) -> bool {
    d.resolved_dims().iter().any(|x| x.is_none())
}

/// Where [`ModuleBuilder::fill_init`] writes: the initial bytes, and the addresses found.
pub(super) struct Fill<'a> {
    pub(super) bytes: &'a mut Vec<u8>,
    pub(super) addrs: &'a mut Vec<PendingAddr>,
}

/// An address in an initializer whose name is not resolved yet.
pub(super) struct PendingAddr {
    pub(super) offset: u32,
    pub(super) name: ast::Name,
    pub(super) generic: bool,
    pub(super) addend: i64,
    pub(super) width: AddrWidth,
}

/// The bits an immediate stores into a variable or operand of PTX type `t`.
pub(super) fn imm_bits(imm: ast::Imm, t: ast::Type) -> u64 {
    match (imm, t) {
        (ast::Imm::Int { value, .. }, ast::Type::F32) => u64::from((value as f32).to_bits()),
        (ast::Imm::Int { value, .. }, ast::Type::F64) => (value as f64).to_bits(),
        (ast::Imm::Int { value, .. }, _) => value as u64,
        (ast::Imm::F32(b), ast::Type::F64) => f64::from(f32::from_bits(b)).to_bits(),
        (ast::Imm::F32(b), _) => u64::from(b),
        (ast::Imm::F64(b), t) if t.bits() == 32 => u64::from((f64::from_bits(b) as f32).to_bits()),
        (ast::Imm::F64(b), _) => b,
    }
}

impl ModuleBuilder<'_> {
    /// Add an addressable variable to the IR module under `ir_name`. `scoped` finds the
    /// names of an enclosing body (a kernel-scope declaration's initializer may name them);
    /// module-scope names are looked up after it.
    pub(super) fn declare_var(
        &mut self,
        v: &ast::VarDecl,
        d: &ast::Declarator,
        ir_name: &str,
        scoped: &dyn Fn(&ast::Name) -> Option<Sym>,
    ) -> Option<Sym> {
        if v.ty == ast::Type::SurfRef && !self.ir.surfrefs.iter().any(|s| s == ir_name) {
            // Surface instructions find a `.surfref` by name ([`Module::surfrefs`]).
            self.ir.surfrefs.push(ir_name.to_string());
        }
        if v.ty != ast::Type::SurfRef && (v.ty == ast::Type::TexRef || v.space == StateSpace::Tex) {
            return Some(self.declare_texref(d));
        }
        if v.ty == ast::Type::SamplerRef && v.space == StateSpace::Global {
            return self.declare_samplerref(d);
        }
        if v.ty.kind() == TypeKind::Opaque {
            return Some(Sym::Opaque("texture, sampler and surface references"));
        }
        let space = match v.space {
            StateSpace::Global => Space::Global,
            StateSpace::Shared => Space::Shared,
            StateSpace::Local => Space::Local,
            StateSpace::Const => Space::Const,
            StateSpace::Param => return Some(Sym::Opaque("'.param' variables inside a body")),
            other => {
                self.error(
                    d.name.span,
                    format!(
                        "unsupported declaration: {} variables outside a kernel body",
                        other.name()
                    ),
                );
                return None;
            }
        };
        let elem_ty = v.ty.bits().div_ceil(8);
        let elem = elem_ty * v.vector.unwrap_or(1);
        let dims = d.resolved_dims();
        let mut count: u64 = 1;
        for dim in &dims {
            count = count.saturating_mul(dim.unwrap_or(0));
        }
        let Some(size) = u64::from(elem)
            .checked_mul(count)
            .and_then(|s| u32::try_from(s).ok())
        else {
            self.error(
                d.name.span,
                format!("variable '{}' is larger than 4 GB", d.name.text),
            );
            return None;
        };
        let mut align = v.align.unwrap_or(elem).max(1);
        if dims.iter().any(|x| x.is_none()) && space == Space::Shared {
            align = align.max(16);
        }
        let mut addrs: Vec<PendingAddr> = Vec::new();
        let init = match &d.init {
            None => None,
            Some(init) => {
                if size > MAX_INIT_BYTES {
                    self.error(
                        d.name.span,
                        format!(
                            "unsupported initializer: '{}' is larger than 256 MB",
                            d.name.text
                        ),
                    );
                    return None;
                }
                let mut bytes = Vec::new();
                let all: Vec<u64> = dims.iter().map(|x| x.unwrap_or(0)).collect();
                let mut fill = Fill {
                    bytes: &mut bytes,
                    addrs: &mut addrs,
                };
                self.fill_init(v, init, &all, elem, size, 0, &mut fill)?;
                // An address-only initializer still makes the variable initialized data.
                if !addrs.is_empty() && bytes.len() < size as usize {
                    bytes.resize(size as usize, 0);
                }
                Some(bytes)
            }
        };
        let mut resolved = Vec::with_capacity(addrs.len());
        for a in &addrs {
            resolved.push(self.resolve_addr(a, scoped)?);
        }
        let gv = self.ir.add_var(VarData {
            name: ir_name.to_string(),
            space,
            size,
            align,
            init,
        });
        if !resolved.is_empty() {
            self.ir.addr_inits[gv] = resolved;
        }
        Some(Sym::Var { gv, space, elem })
    }

    /// The variable an address initializer names. The checker has made sure it is a
    /// `.global` or `.const` variable or a function declared before; a function's address
    /// is refused here (leafold inlines every call, so functions have no address).
    pub(super) fn resolve_addr(
        &mut self,
        a: &PendingAddr,
        scoped: &dyn Fn(&ast::Name) -> Option<Sym>,
    ) -> Option<AddrInit> {
        let name = a.name.text.as_str();
        let sym = scoped(&a.name).or_else(|| self.globals.get(&a.name.id).cloned());
        match sym {
            Some(Sym::Var {
                gv,
                space: Space::Global | Space::Const,
                ..
            }) => Some(AddrInit {
                offset: a.offset,
                target: gv,
                generic: a.generic,
                addend: a.addend,
                width: a.width,
            }),
            Some(Sym::Var { space, .. }) => {
                self.error(
                    a.name.span,
                    format!(
                        "bad initializer: '{name}' is a .{} variable; only the addresses of .global and .const variables can initialize one",
                        space.name()
                    ),
                );
                None
            }
            _ if self.kernels.contains(name) => {
                self.error(
                    a.name.span,
                    format!(
                        "unsupported initializer: the address of kernel '{name}' (a function descriptor for dynamic parallelism, R_CUDA_FUNC_DESC_64) is not emitted by leafold"
                    ),
                );
                None
            }
            _ if self.func_order.contains_key(name) => {
                self.error(
                    a.name.span,
                    format!(
                        "unsupported initializer: the address of function '{name}': leafold inlines every call, so functions have no address"
                    ),
                );
                None
            }
            _ => {
                self.error(
                    a.name.span,
                    format!("unsupported initializer: '{name}' has no address in leafold"),
                );
                None
            }
        }
    }

    /// Write `init` for an array of the remaining `dims` at byte `at` of `out` (at most
    /// `size` bytes: the checker already refused initializers longer than their array).
    /// Addresses leave zero bytes and a [`PendingAddr`] each.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fill_init(
        &mut self,
        v: &ast::VarDecl,
        init: &Init,
        dims: &[u64],
        elem: u32,
        size: u32,
        at: u64,
        out: &mut Fill<'_>,
    ) -> Option<()> {
        let scalar = v.ty.bits().div_ceil(8);
        match (init, dims.split_first()) {
            // One level of braces per array dimension.
            (Init::List(items, _), Some((_, rest))) => {
                let stride = rest.iter().product::<u64>() * u64::from(elem);
                for (i, it) in items.iter().enumerate() {
                    let off = at.saturating_add((i as u64).saturating_mul(stride));
                    self.fill_init(v, it, rest, elem, size, off, out)?;
                }
                Some(())
            }
            // The innermost braces of a vector variable list its components.
            (Init::List(items, _), None) => {
                for (i, it) in items.iter().enumerate() {
                    let off = at + i as u64 * u64::from(scalar);
                    self.fill_init(v, it, &[], elem, size, off, out)?;
                }
                Some(())
            }
            (Init::Imm(imm, _), _) => {
                let bits = imm_bits(*imm, v.ty);
                let end = at.saturating_add(u64::from(scalar));
                if end > u64::from(size) {
                    return Some(());
                }
                if end as usize > out.bytes.len() {
                    out.bytes.resize(end as usize, 0);
                }
                for k in 0..scalar as usize {
                    out.bytes[at as usize + k] = (bits >> (8 * k)) as u8;
                }
                Some(())
            }
            (
                Init::Addr {
                    name,
                    generic,
                    offset,
                    mask,
                    span,
                },
                _,
            ) => {
                let width = match (mask, scalar) {
                    (None, 4 | 8) => AddrWidth::Word(scalar as u8),
                    (Some(m), 1 | 4 | 8) if m.count_ones() == 8 && m.trailing_zeros() % 8 == 0 => {
                        AddrWidth::Byte(m.trailing_zeros() as u8)
                    }
                    _ => {
                        // The checker refuses these; say so rather than guess.
                        self.error(
                            *span,
                            format!(
                                "bad initializer: an address cannot initialize a .{} variable",
                                v.ty.name()
                            ),
                        );
                        return None;
                    }
                };
                let end = at.saturating_add(u64::from(scalar));
                if end > u64::from(size) {
                    return Some(());
                }
                if end as usize > out.bytes.len() {
                    out.bytes.resize(end as usize, 0);
                }
                // A function's address is its value (`calls::function_ids`), no relocation.
                if let (Some(&id), AddrWidth::Word(w), None) =
                    (self.fn_ids.get(name.text.as_str()), width, mask)
                {
                    let v = id.wrapping_add(*offset as u64).to_le_bytes();
                    out.bytes[at as usize..end as usize].copy_from_slice(&v[..usize::from(w)]);
                    return Some(());
                }
                out.addrs.push(PendingAddr {
                    offset: at as u32,
                    name: name.clone(),
                    generic: *generic,
                    addend: *offset,
                    width,
                });
                Some(())
            }
            (Init::Fields(..), _) => Some(()),
        }
    }
}
