//! PTX AST → SSA IR: the builder (`ir::build`).
//!
//! In: a module that [`crate::ptx::parse_and_check`] accepted, and its source file (for
//! diagnostics). Out: an [`ir::Module`](super::Module) whose every function passes
//! [`super::verify_in_module`], or one [`Diagnostic`] per construct that leafold cannot
//! translate, each naming the construct and pointing at its line. Nothing panics on user input:
//! an instruction outside the supported subset is a diagnostic, never wrong IR.
//!
//! # Variables
//!
//! Module `.global`/`.const`/`.shared`/`.local` variables become [`VarData`] (initializers
//! flattened to little-endian bytes, row-major, short brace lists zero-padded). An address in
//! an initializer (`x`, `generic(x)+8`, `0xff00(x)`) leaves zero bytes and an [`AddrInit`] in
//! [`Module::addr_inits`], naming the `.global`/`.const` variable (module or enclosing kernel
//! scope); a function's or kernel's address is refused (calls are inlined: no function has
//! an address). Kernel-scope
//! addressable variables (`.local`, `.shared`, ...) become module variables named
//! `kernel.name` (a dot cannot occur in a PTX identifier, so the name is unique; the same name
//! in a second `{ }` scope becomes `kernel.name.2`). An unsized module-scope `.extern .shared`
//! array is the dynamic shared memory, with alignment 16; every layout of the module's memory
//! ([`Module::vars_in_layout_order`]) puts it after every sized variable, kernel-scope ones
//! included, which is where [`super::eval`] puts the dynamic bytes.
//! Kernel parameters become [`super::KernelParam`]s at their natural (or declared) alignment.
//!
//! # SSA construction
//!
//! PTX registers are mutable variables; the builder turns them into SSA values with Braun et
//! al.'s on-the-fly algorithm ("Simple and Efficient Construction of Static Single Assignment
//! Form", CC 2013), using block parameters instead of phis:
//!
//! 1. A pre-pass splits the flattened statement list into blocks (a label starts one, a branch
//!    or `ret`/`exit` ends one) and counts every block's incoming edges.
//! 2. Blocks are then filled in source order. Reading a register looks for its definition in
//!    the current block, then walks single-predecessor chains; at a block with several
//!    predecessors it adds a block parameter. A block is *sealed* once all its predecessors are
//!    filled; parameters added before that are completed when it is sealed. The walk and the
//!    operand filling use an explicit worklist, so deep CFGs cannot overflow the stack.
//! 3. Parameters whose incoming values are all one value (or the parameter itself) are
//!    removed (Braun's trivial-phi removal, iterated to a fixpoint), unreachable blocks are
//!    dropped, and the function is renumbered densely in layout (= source) order.
//!
//! A register read before any definition reaches it reads zero (PTX leaves it undefined;
//! zero is one admissible value), from constants placed at the top of the entry block.
//!
//! # Typing
//!
//! Each register has one IR type: the integer of its declared width (`.f32`/`.b32`/`.u32` are
//! all `i32`), or `pred`. Floating-point data is carried as its bits, which is exact for the
//! moves, loads, stores and selects; floating-point instructions become IR `Float`
//! operations that name their format (`build/float.rs`). A value narrower than its destination register (a
//! `ld.u8` or `cvt` into a 32-bit register) is extended by the signedness of the instruction
//! type (`.s` sign-extends, `.u`/`.b` zero-extend; seed 6.5.1 note 1); a register wider than an
//! instruction's operand type (loads, stores, `cvt` accept those) is truncated.
//!
//! # Guards and carries
//!
//! `@p` on a pure instruction computes the new value and keeps the old one with `select`.
//! `@p` on a load, store, barrier or return branches around the instruction (a load must not
//! fault when its guard is false); the merge is an ordinary block parameter. `@p bra` is a
//! `brif`. The carry flag of `add.cc`/`addc`/`sub.cc`/`subc` is a hidden predicate register
//! (`icmp` computes it), so the IR needs no flags: 128-bit adds stay exact. It holds the
//! machine carry as ptxas reads it: `sub.cc` leaves "no borrow" and `subc` is `a + ~b + CF`
//! (so `subc` after `add.cc` subtracts one more when the add did *not* carry).
//!
//! # Calls
//!
//! leafold has no call ABI: every direct `call` of a `.func` defined in the module is inlined
//! while the body is flattened (`calls.rs`), with fresh registers and addressable variables
//! per copy, `.param` arguments and results kept in SSA variables, and the callee's `ret` a
//! branch to the return point. Recursion, calls through a register, callees without a body
//! (`vprintf`, `malloc`) and over-deep or over-long inlining are diagnosed at the `call`.
//! `.func` definitions are not built on their own: only kernels reach the IR.
//!
//! # Addresses
//!
//! `[reg]`, `[reg+imm]`, `[var]`, `[var+imm]`, `[imm]` and `var[imm]`/`var[reg+imm]` (the
//! index counts elements of the variable, as ptxas reads it) become an address value plus the
//! signed 32-bit offset of `load`/`store`; `ld.param` of a kernel parameter by name becomes
//! `param [offset]`. A variable named in a generic access is converted with `cvta` to its
//! generic address; a variable's own-space address is `i32` except for `.global` variables in a
//! 64-bit module.

mod approx;
mod atomics;
mod bf16;
mod bits;
mod collective;
mod divide;
mod emulate;
mod float;
mod fns;
mod half;
mod warp;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

mod calls;

use cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;

use super::{
    AddrInit, AddrWidth, BinaryOp, BitOp, Block, BlockCall, CacheOp, CvtaDir, Dim, Function,
    FunctionBuilder, GlobalVar, Inst, InstData, InstNode, IntCC, LaneMask, Module, Space,
    SpecialReg, SrcLoc, Type, UnaryOp, Value, ValueData, ValueDef, VarData,
};
use crate::error::{Diagnostic, SourceFile, Span};
use crate::ir::float::{FloatCC, FloatFmt, FloatOp};

mod modern;
mod order;
mod prefetch;
mod stack;
mod surface;
mod sync;
mod tex;
mod video;
use crate::ptx::ast;
use crate::ptx::ast::{CmpOp, Init, Instruction, NameText, Opcode, Operand, StateSpace, TypeKind};

/// Build a whole module. `Err` carries every diagnostic when any kernel cannot be built.
pub fn build(module: &ast::Module, file: &Arc<SourceFile>) -> Result<Module, Vec<Diagnostic>> {
    build_with(module, file, &BuildOptions::default())
}

/// The result of building as much as possible: the kernels that built, and the diagnostics
/// of those that did not (used to measure coverage over a corpus).
#[derive(Debug)]
pub struct Partial {
    /// Module variables and every kernel that built completely.
    pub module: Module,
    /// Names of the kernels (and `.func` functions) that did not build.
    pub failed: Vec<String>,
    /// Every error, for the failed kernels and for module-level declarations.
    pub errors: Vec<Diagnostic>,
    /// How many of `errors` come first from module-level declarations; the rest belong to
    /// the kernels of `failed`.
    pub declaration_errors: usize,
    /// For each kernel of `failed`, the range of `errors` that are its own.
    pub failed_errors: Vec<std::ops::Range<usize>>,
}

/// How the IR is built (the defaults are ptxas's).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// Contract float `mul` + `add`/`sub` written without rounding modifiers into fused
    /// multiply-adds, as ptxas's `--fmad=true` (its default): see [`super::contract`].
    pub fmad: bool,
    /// Let a kernel call any bodiless `.extern .func` (a relocatable object's calls, which
    /// nvlink resolves: `--compile-only`), not only the system functions a whole program may
    /// leave to the driver.
    pub any_extern: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            fmad: true,
            any_extern: false,
        }
    }
}

/// [`build`] with explicit options.
pub fn build_with(
    module: &ast::Module,
    file: &Arc<SourceFile>,
    opts: &BuildOptions,
) -> Result<Module, Vec<Diagnostic>> {
    let partial = build_partial_with(module, file, opts);
    if partial.errors.is_empty() {
        Ok(partial.module)
    } else {
        Err(partial.errors)
    }
}

/// Build every kernel that can be built; see [`Partial`].
pub fn build_partial<'f>(module: &'f ast::Module, file: &'f Arc<SourceFile>) -> Partial {
    build_partial_with(module, file, &BuildOptions::default())
}

/// [`build_partial`] with explicit options.
pub fn build_partial_with<'f>(
    module: &'f ast::Module,
    file: &'f Arc<SourceFile>,
    opts: &BuildOptions,
) -> Partial {
    let mut m = ModuleBuilder {
        any_extern: opts.any_extern,
        file,
        wide: module.address_size() == 64,
        ir: Module {
            addr32: module.address_size() != 64,
            ..Module::new()
        },
        globals: HashMap::default(),
        errors: Vec::new(),
        func_order: HashMap::default(),
        kernels: HashSet::default(),
        funcs: module
            .functions()
            .filter(|f| f.kind == ast::FuncKind::Func)
            .map(|f| f.name.id)
            .collect(),
        names: &module.names,
        found: ast::NameMemo::new(&module.names, None),
        fn_ids: calls::function_ids(module),
        subs: HashSet::default(),
    };
    for (i, f) in (0u32..).zip(module.functions()) {
        m.func_order.entry(f.name.text.to_string()).or_insert(i);
        if f.kind == ast::FuncKind::Entry {
            m.kernels.insert(f.name.text.to_string());
        }
    }
    // Sized variables first, unsized extern shared arrays last (see the essay).
    let decls: Vec<&ast::VarDecl> = module
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Var(v) => Some(v),
            _ => None,
        })
        .collect();
    // Module-scope `.reg` declarations (nvopencc and OptiX emit them) are per-thread
    // registers: each kernel gets its own.
    let module_regs: Vec<&ast::VarDecl> = decls
        .iter()
        .copied()
        .filter(|v| v.space == StateSpace::Reg)
        .collect();
    for pass_unsized in [false, true] {
        for v in decls.iter().filter(|v| v.space != StateSpace::Reg) {
            for d in &v.names {
                if is_unsized(d) == pass_unsized {
                    if let Some(sym) = m.declare_var(v, d, &d.name.text, &|_| None) {
                        m.globals.insert(d.name.id, sym);
                    }
                }
            }
        }
    }
    let declaration_errors = m.errors.len();
    let mut failed = Vec::new();
    let mut failed_errors = Vec::new();
    let funcs = calls::function_table(module);
    m.subs = calls::subroutine_set(module, &funcs);
    for f in module.functions() {
        let Some(body) = &f.body else { continue };
        let sub = if f.kind == ast::FuncKind::Func {
            // Device functions are inlined into the kernels that call them (see calls.rs),
            // except those compiled as subroutines, once (a weak definition loses to a
            // strong one: `function_table`).
            let chosen = funcs
                .get(f.name.text.as_str())
                .is_some_and(|&g| std::ptr::eq(g, f));
            if !chosen || !m.subs.contains(f.name.text.as_str()) {
                continue;
            }
            match calls::ExternSig::of(f) {
                Ok(sig) => Some(sig),
                Err(why) => {
                    m.error(f.name.span, why);
                    failed.push(f.name.text.to_string());
                    failed_errors.push(m.errors.len() - 1..m.errors.len());
                    continue;
                }
            }
        } else {
            None
        };
        let before = m.errors.len();
        let built = match FnBuilder::run(&mut m, f, body, &module_regs, &funcs, sub.as_ref()) {
            Some(mut func) if func.subroutine && m.errors.len() == before => {
                if opts.fmad {
                    super::contract::contract(&mut func);
                }
                if !m.ir.local_layout(&func).0.is_empty() {
                    m.error(
                        f.name.span,
                        format!("unsupported: the recursive function '{}' declares .local variables (each call would need its own)", f.name.text),
                    );
                    false
                } else {
                    m.ir.subroutines.push(func);
                    true
                }
            }
            Some(mut func) if m.errors.len() == before => {
                if opts.fmad {
                    super::contract::contract(&mut func);
                }
                m.ir.functions.push(func);
                true
            }
            _ => {
                failed.push(f.name.text.to_string());
                false
            }
        };
        // A callee inlined twice reports its problems once.
        let mut seen = HashSet::default();
        let mut k = before;
        while k < m.errors.len() {
            let e = &m.errors[k];
            if seen.insert((e.span.start, e.span.end, e.message.clone())) {
                k += 1;
            } else {
                m.errors.remove(k);
            }
        }
        if !built {
            failed_errors.push(before..m.errors.len());
        }
    }
    Partial {
        module: m.ir,
        failed,
        errors: m.errors,
        declaration_errors,
        failed_errors,
    }
}

/// Initialized variables larger than this are refused rather than materialized.
const MAX_INIT_BYTES: u32 = 1 << 28;

/// `blocks` without repeats, in first-seen order: a linear scan for the few predecessors a
/// block usually has, a set for a join of many edges.
fn unique_in_order(blocks: &[Block]) -> SmallVec<[Block; 4]> {
    let mut out: SmallVec<[Block; 4]> = SmallVec::new();
    if blocks.len() > 16 {
        let mut seen = HashSet::default();
        out.extend(blocks.iter().copied().filter(|b| seen.insert(*b)));
    } else {
        for &b in blocks {
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    out
}

fn is_unsized(d: &ast::Declarator) -> bool {
    d.resolved_dims().iter().any(|x| x.is_none())
}

/// What a name outside `.reg` refers to.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Sym {
    /// An addressable variable: its IR variable, space and element size (for `var[i]`).
    Var {
        gv: GlobalVar,
        space: Space,
        elem: u32,
    },
    /// A kernel parameter at a byte offset of the param space.
    Param { offset: u32 },
    /// A declared name the IR has no storage for (textures, samplers).
    Opaque(&'static str),
    /// A `.param` variable of a body or an inlined callee: bytes kept in registers
    /// (`calls::ArgStore`), with no address.
    Arg { store: usize },
    /// A module `.texref` (or `.tex` space) variable: its index in `Module::texrefs`.
    TexRef(u32),
}

struct ModuleBuilder<'f> {
    /// Calls of any bodiless `.extern .func` are allowed ([`build_with`]).
    any_extern: bool,
    file: &'f Arc<SourceFile>,
    /// `.address_size 64`.
    wide: bool,
    ir: Module,
    /// By name id ([`ast::Name::id`]; so are the scopes' maps).
    globals: HashMap<u32, Sym>,
    errors: Vec<Diagnostic>,
    /// Each function's name and the index of its first declaration (for [`VarScope`]).
    func_order: HashMap<String, u32>,
    /// The names of the module's kernels (`.entry`).
    kernels: HashSet<String>,
    /// The name ids of the module's `.func`s (for a clear error when one is used as a
    /// value), gathered once for all kernels.
    funcs: HashSet<u32>,
    /// The AST module's names: how each one splits for `%r<N>` ranges.
    names: &'f ast::NameTable,
    /// The values of the `.func`s whose address is taken (`calls::function_ids`).
    fn_ids: HashMap<String, u64>,
    /// What [`FnBuilder::lookup`] found for each name (made once for all the module's
    /// kernels), forgotten whenever the scopes change ([`FnBuilder::scopes_changed`]).
    found: ast::NameMemo<Found>,
    /// The `.func`s compiled as real subroutines, not inlined (`calls::subroutine_set`).
    subs: HashSet<String>,
}

/// What a name means in the current scopes ([`FnBuilder::lookup`]): a register, an
/// addressable symbol, or nothing.
type Found = Option<Result<RegInfo, Sym>>;

fn ir_space(s: StateSpace) -> Option<Space> {
    Some(match s {
        StateSpace::Global => Space::Global,
        StateSpace::Shared => Space::Shared,
        StateSpace::Local => Space::Local,
        StateSpace::Const => Space::Const,
        StateSpace::Param => Space::Param,
        _ => return None,
    })
}

/// The IR type holding a PTX type: the integer of its width (floats as bits), or `pred`.
fn ir_type(t: ast::Type) -> Option<Type> {
    if t == ast::Type::Pred {
        return Some(Type::Pred);
    }
    if t.kind() == TypeKind::Opaque {
        return None;
    }
    Some(match t.bits() {
        8 => Type::I8,
        16 => Type::I16,
        32 => Type::I32,
        64 => Type::I64,
        _ => return None,
    })
}

/// The range of integer type `t` (held in IR type `ty`): signed or not by `t`'s kind.
fn int_range(t: ast::Type, ty: Type) -> (i128, i128) {
    let bits = ty.bits();
    if t.kind() == TypeKind::Signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// Whether integer `cvt.sat` from `s` to `d` can clamp: the source's range is not inside
/// the destination's (ptxas refuses `.sat` otherwise, e.g. `cvt.sat.s32.s32`, `cvt.sat.u16.u8`).
fn sat_can_clamp(s: (ast::Type, Type), d: (ast::Type, Type)) -> bool {
    let (smin, smax) = int_range(s.0, s.1);
    let (dmin, dmax) = int_range(d.0, d.1);
    smin < dmin || smax > dmax
}

fn int_of_bits(bits: u32) -> Option<Type> {
    Some(match bits {
        8 => Type::I8,
        16 => Type::I16,
        32 => Type::I32,
        64 => Type::I64,
        _ => return None,
    })
}

impl ModuleBuilder<'_> {
    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(Diagnostic::error(self.file, span, msg));
    }

    fn addr_type(&self) -> Type {
        if self.wide {
            Type::I64
        } else {
            Type::I32
        }
    }

    /// Add an addressable variable to the IR module under `ir_name`. `scoped` finds the
    /// names of an enclosing body (a kernel-scope declaration's initializer may name them);
    /// module-scope names are looked up after it.
    fn declare_var(
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
    fn resolve_addr(
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
    fn fill_init(
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

/// Where [`ModuleBuilder::fill_init`] writes: the initial bytes, and the addresses found.
struct Fill<'a> {
    bytes: &'a mut Vec<u8>,
    addrs: &'a mut Vec<PendingAddr>,
}

/// An address in an initializer whose name is not resolved yet.
struct PendingAddr {
    offset: u32,
    name: ast::Name,
    generic: bool,
    addend: i64,
    width: AddrWidth,
}

/// The bits an immediate stores into a variable or operand of PTX type `t`.
fn imm_bits(imm: ast::Imm, t: ast::Type) -> u64 {
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

// ---- the function builder ------------------------------------------------------------------

/// A PTX register variable (one per scalar register, one per element of a vector register).
type VarId = usize;

/// The key of block `b`'s definition of `var` in [`FnBuilder::defs`]: the two numbers side
/// by side (a variable number always fits in 32 bits: there is at most one per PTX operand).
fn def_key(b: Block, var: VarId) -> u64 {
    debug_assert!(u32::try_from(var).is_ok());
    (u64::from(b.as_u32()) << 32) | var as u64
}

/// The variables a destination operand writes, `None` for `_` (one per element: inline up to
/// a `.v4`, so a destination costs no allocation).
type Dests = SmallVec<[Option<VarId>; 4]>;

/// A register's variables: one per element (one for a scalar register, none for a type the
/// IR cannot hold). [`FnBuilder::make_reg`] makes a register's variables one after another,
/// so they are a range: copied as two numbers at every lookup instead of a list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct RegInfo {
    first: u32,
    len: u32,
}

impl RegInfo {
    /// A scalar register of variable `var`.
    fn one(var: VarId) -> RegInfo {
        RegInfo {
            first: var as u32,
            len: 1,
        }
    }

    /// The variables, element by element.
    fn vars(self) -> std::ops::Range<VarId> {
        self.first as usize..self.first as usize + self.len as usize
    }
}

/// A `%r<100>` declaration: variables are made on first use of each index.
struct RangeInfo {
    count: u32,
    ty: Option<Type>,
    width: u32,
    made: HashMap<u32, RegInfo>,
}

#[derive(Default)]
struct Scope {
    /// By name id ([`ast::Name::id`]), like the other two.
    regs: HashMap<u32, RegInfo>,
    /// By the id of the range's prefix (`%r` of `%r<100>`).
    ranges: HashMap<u32, RangeInfo>,
    syms: HashMap<u32, Sym>,
}

/// One flattened statement (`calls::Expander` flattens bodies and inlines calls).
enum Item<'a> {
    Enter,
    Exit,
    Decl(&'a ast::VarDecl),
    Label(&'a ast::Name),
    Instr(&'a Instruction),
    /// The start of an inlined callee's body.
    CallBegin(calls::CallSite<'a>),
    /// Its end: the callee's return point.
    CallEnd(calls::CallSite<'a>),
    /// After a guarded call: where the skipped call joins (frame number).
    CallJoin(usize),
}

/// How a PTX instruction ends a block.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Flow {
    /// Not a terminator.
    Straight,
    /// `bra`, `ret`, `exit`: nothing falls through.
    Stop,
    /// `@p bra`, `@p ret`: falls through when the guard fails.
    Fall,
}

fn flow(i: &Instruction) -> Flow {
    match i.opcode {
        Opcode::Bra | Opcode::Ret | Opcode::Exit | Opcode::Brx => {
            if i.guard.is_some() {
                Flow::Fall
            } else {
                Flow::Stop
            }
        }
        _ => Flow::Straight,
    }
}

/// The block plan of a body: where blocks start, which label names which block, how many
/// edges enter each.
struct Plan {
    /// By item index (one slot per item, and one past the last): the block that starts
    /// there. Slots, like `fall`, since `body` asks at every item.
    starts: Vec<Option<Block>>,
    /// By inlined frame (0: the kernel) and label.
    labels: HashMap<(usize, NameText), Block>,
    /// By item index: the block after a conditional terminator at this item.
    fall: Vec<Option<Block>>,
}

struct FnBuilder<'m, 'f> {
    m: &'m mut ModuleBuilder<'f>,
    /// The system-function calls the expander left as calls, by their instruction's address
    /// (`calls::Expander::externs`).
    extern_sigs: HashMap<usize, calls::ExternSig>,
    /// Each `brx.idx`'s labels, by its instruction's address (`calls::Expander::brx_targets`).
    brx_targets: HashMap<usize, Vec<NameText>>,
    /// Building a subroutine: its result store and size (`None` inside: no result), which
    /// its `ret` returns (`calls::FnBuilder::sub_return`).
    sub_ret: Option<Option<(usize, u32)>>,
    kernel: String,
    /// Where the kernel's own variables go in the shared layout (by its `.visible`).
    own_scope: super::VarScope,
    func: Function,
    cur: Block,
    entry: Block,
    /// Blocks in the order they were filled: the layout.
    order: Vec<Block>,
    // Registers.
    var_ty: Vec<Type>,
    /// Each variable's PTX register name (an index into `func.reg_names`), for scalars.
    var_name: Vec<Option<u32>>,
    /// The PTX line of the instruction being translated (recorded on what it builds).
    srcloc: SrcLoc,
    /// The last line [`Self::at`] found (where the next search starts).
    line_hint: usize,
    scopes: Vec<Scope>,
    carry: VarId,
    // SSA state.
    /// Each block's current value of each variable it defines or has looked up, in one
    /// table keyed by [`def_key`] (one map per block allocated and rehashed a small table
    /// for every block; the table is never iterated).
    defs: HashMap<u64, Value>,
    preds: SecondaryMap<Block, Vec<Block>>,
    expected: SecondaryMap<Block, u32>,
    sealed: SecondaryMap<Block, bool>,
    incomplete: SecondaryMap<Block, Vec<Value>>,
    /// For every block parameter made by the SSA construction: its variable (values are
    /// dense indices: entity maps instead of hash maps, looked up for every parameter).
    param_var: SecondaryMap<Value, Option<VarId>>,
    /// Incoming value of each such parameter per predecessor block (empty for any other).
    incoming: SecondaryMap<Value, Vec<(Block, Value)>>,
    /// How many value slots `param_var`, `incoming` and the function's `value_names` have
    /// been given ([`FnBuilder::value_slot`]).
    value_slots: usize,
    pending: Vec<Value>,
    undef: HashMap<Type, Value>,
    /// The undef constants' instructions (five: one per integer type and the predicate),
    /// in a list: compaction asks about every instruction.
    undef_insts: SmallVec<[Inst; 5]>,
    /// Set while translating a guarded pure instruction: writes become selects.
    guard: Option<(Value, bool)>,
    /// Errors already reported before this kernel.
    err_start: usize,
    /// The inlined calls being walked, innermost last.
    frames: Vec<calls::Frame>,
    /// `.param` variables of the body and of inlined callees.
    stores: Vec<calls::ArgStore>,
}

impl<'m, 'f> FnBuilder<'m, 'f> {
    fn run(
        m: &'m mut ModuleBuilder<'f>,
        f: &ast::Function,
        body: &ast::Block,
        module_regs: &[&ast::VarDecl],
        funcs: &HashMap<&str, &ast::Function>,
        sub: Option<&calls::ExternSig>,
    ) -> Option<Function> {
        let mut func = Function::new(&f.name.text);
        let mut params = Scope::default();
        if let Some(sig) = sub {
            // A subroutine's parameters are its argument registers' bytes (R4 at 0).
            func.subroutine = true;
            let names = f
                .params
                .iter()
                .flat_map(|p| p.names.iter().map(move |d| (p, d)));
            for ((p, d), &(size, first)) in names.zip(&sig.params) {
                if p.space == StateSpace::Reg {
                    m.error(
                        d.name.span,
                        "unsupported: a .reg parameter of a recursive function",
                    );
                    return None;
                }
                let offset = 4 * u32::from(first - 4);
                func.params.push(crate::ir::KernelParam {
                    name: d.name.text.to_string(),
                    offset,
                    size,
                    align: 4,
                });
                params.syms.insert(d.name.id, Sym::Param { offset });
            }
        }
        for p in f.params.iter().filter(|_| sub.is_none()) {
            let elem = p.ty.bits().div_ceil(8) * p.vector.unwrap_or(1);
            for d in &p.names {
                let count: u64 = d.resolved_dims().iter().map(|x| x.unwrap_or(0)).product();
                let size = u32::try_from(u64::from(elem).saturating_mul(count)).unwrap_or(u32::MAX);
                let align = p.align.unwrap_or(elem).max(1);
                let offset = func.add_param(&d.name.text, size, align);
                params.syms.insert(d.name.id, Sym::Param { offset });
            }
        }
        let mut b = FnBuilder {
            m,
            kernel: f.name.text.to_string(),
            own_scope: if f.linkage.contains(&ast::Linkage::Visible) {
                super::VarScope::Kernel
            } else {
                super::VarScope::HiddenKernel
            },
            func,
            cur: Block::new(0),
            entry: Block::new(0),
            order: Vec::new(),
            var_ty: Vec::new(),
            var_name: Vec::new(),
            srcloc: SrcLoc::NONE,
            line_hint: 0,
            scopes: vec![params],
            carry: 0,
            defs: HashMap::default(),
            preds: SecondaryMap::new(),
            expected: SecondaryMap::new(),
            sealed: SecondaryMap::new(),
            incomplete: SecondaryMap::new(),
            param_var: SecondaryMap::new(),
            incoming: SecondaryMap::new(),
            value_slots: 0,
            pending: Vec::new(),
            undef: HashMap::default(),
            undef_insts: SmallVec::new(),
            guard: None,
            err_start: 0,
            frames: Vec::new(),
            stores: Vec::new(),
            extern_sigs: HashMap::default(),
            brx_targets: HashMap::default(),
            sub_ret: None,
        };
        b.err_start = b.m.errors.len();
        b.scopes_changed();
        b.carry = b.new_var(Type::Pred);
        b.scopes.push(Scope::default());
        for v in module_regs {
            b.declare(v);
        }
        let mut items = Vec::new();
        let fn_ids = b.m.fn_ids.clone();
        if let Some(sig) = sub {
            b.sub_ret = Some(b.declare_sub_result(f, sig)?);
        }
        let mut expander = calls::Expander::new(funcs, &fn_ids, b.m.any_extern);
        expander.subs = b.m.subs.clone();
        expander.expand(body, &mut items);
        for (span, msg) in expander.errors {
            b.error(span, msg);
        }
        b.extern_sigs = expander.externs;
        b.brx_targets = expander.brx_targets;
        b.body(&items, f.name.span)
    }

    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.m.error(span, msg);
    }

    fn new_var(&mut self, ty: Type) -> VarId {
        self.var_ty.push(ty);
        self.var_name.push(None);
        self.var_ty.len() - 1
    }

    fn new_block(&mut self, expected: u32) -> Block {
        let b = FunctionBuilder::new(&mut self.func).create_block();
        self.expected[b] = expected;
        if expected == 0 {
            self.sealed[b] = true;
        }
        b
    }

    /// A builder appending to the current block.
    fn ins(&mut self) -> FunctionBuilder<'_> {
        let cur = self.cur;
        let srcloc = self.srcloc;
        let mut fb = FunctionBuilder::new(&mut self.func);
        fb.switch_to_block(cur);
        fb.set_srcloc(srcloc);
        fb
    }

    /// Record `span`'s line on the instructions built from now on.
    fn at(&mut self, span: Span) {
        let line = self.m.file.line_from(span.start, &mut self.line_hint);
        self.srcloc = SrcLoc::line(line as u32);
    }

    fn switch_to(&mut self, b: Block) {
        self.cur = b;
        self.order.push(b);
    }

    // ---- block plan -----------------------------------------------------------------------

    fn plan(&mut self, items: &[Item<'_>]) -> Plan {
        let mut plan = Plan {
            starts: vec![None; items.len() + 2],
            labels: HashMap::default(),
            fall: vec![None; items.len()],
        };
        let mut cur = self.entry;
        let mut state = Flow::Straight;
        let mut empty = false;
        let mut targets: Vec<((usize, NameText), Span)> = Vec::new();
        // The inlined frame each item belongs to (labels are per frame).
        let mut frames: Vec<usize> = vec![0];
        // Frames with a `ret` that branches to their return point.
        let mut returning: HashSet<usize> = HashSet::default();
        for (i, item) in items.iter().enumerate() {
            if calls::final_ret(items, i) {
                // A callee's last `ret` falls through to its return point: no block needed.
                continue;
            }
            let frame = frames.last().copied().unwrap_or(0);
            let label = match item {
                Item::Label(n) => Some((frame, n.text.clone())),
                Item::CallEnd(c) => {
                    frames.pop();
                    Some((c.frame, NameText::new(calls::RET_LABEL)))
                }
                Item::CallJoin(f) => Some((*f, NameText::new(calls::JOIN_LABEL))),
                _ => None,
            };
            if let Some(key) = label {
                let unentered = matches!(item, Item::CallEnd(c) if !returning.contains(&c.frame));
                // A label may be a loop head, which the entry block cannot be; nothing
                // branches to the return point of a callee without an early `ret`.
                if state == Flow::Straight && ((empty && cur != self.entry) || unentered) {
                    plan.labels.insert(key, cur);
                } else {
                    let b = self.new_block(0);
                    self.sealed[b] = false;
                    if state == Flow::Straight {
                        self.expected[b] += 1;
                    }
                    plan.starts[i] = Some(b);
                    plan.labels.insert(key, b);
                    cur = b;
                    state = Flow::Straight;
                }
                // `CallEnd` emits the result copies: a join after it needs its own block.
                empty = !matches!(item, Item::CallEnd(_));
                continue;
            }
            match item {
                Item::Instr(_) | Item::CallBegin(_) => {
                    if state == Flow::Stop {
                        // Code after an unconditional terminator with no label: unreachable.
                        let b = self.new_block(0);
                        self.sealed[b] = false;
                        plan.starts[i] = Some(b);
                        cur = b;
                    }
                    empty = false;
                    match item {
                        Item::Instr(ins) => {
                            state = flow(ins);
                            if ins.opcode == Opcode::Bra {
                                if let Some(Operand::Name(n)) = ins.operands.first() {
                                    targets.push(((frame, n.text.clone()), n.span));
                                }
                            }
                            if ins.opcode == Opcode::Brx {
                                let key = *ins as *const Instruction as usize;
                                for l in self.brx_targets.get(&key).into_iter().flatten() {
                                    targets.push(((frame, l.clone()), ins.span));
                                }
                            }
                            if ins.opcode == Opcode::Ret && frame != 0 {
                                // An inlined `ret` branches to the frame's return point.
                                targets.push(((frame, NameText::new(calls::RET_LABEL)), ins.span));
                                returning.insert(frame);
                            }
                        }
                        Item::CallBegin(c) => {
                            frames.push(c.frame);
                            state = Flow::Straight;
                            if c.guarded() {
                                // A guarded call branches over the copy to its join.
                                targets.push((
                                    (c.frame, NameText::new(calls::JOIN_LABEL)),
                                    c.ins.span,
                                ));
                                state = Flow::Fall;
                            }
                        }
                        _ => {}
                    }
                    if state == Flow::Fall {
                        let b = self.new_block(1);
                        self.sealed[b] = false;
                        plan.fall[i] = Some(b);
                        plan.starts[i + 1] = Some(b);
                        cur = b;
                        state = Flow::Straight;
                        empty = true;
                    }
                }
                _ => {}
            }
        }
        for (t, _) in &targets {
            if let Some(&b) = plan.labels.get(t) {
                self.expected[b] += 1;
            }
        }
        // Blocks nobody enters are sealed from the start.
        for &b in plan.starts.iter().flatten() {
            if self.expected[b] == 0 {
                self.sealed[b] = true;
            }
        }
        plan
    }

    fn body(mut self, items: &[Item<'_>], span: Span) -> Option<Function> {
        // Room for two instructions and two values per statement (constants, address
        // arithmetic and wide operations make more than one of many), reserved once: with
        // one per statement nearly every function still doubled its instruction table at
        // the end, copying it whole (capacity only; nothing depends on it).
        self.func.insts.reserve(2 * items.len());
        self.func.values.reserve(2 * items.len());
        // Definitions: a write per statement, and reads cache what they find in every block
        // they pass through: room for four per statement (with two, growing the table
        // still cost 2.6M instructions over the corpus; capacity only).
        self.defs.reserve(4 * items.len());
        // The per-value slots likewise (they still grow past it, doubling).
        self.value_slots = 2 * items.len();
        self.param_var.resize(self.value_slots);
        self.incoming.resize(self.value_slots);
        self.func.value_names.resize(self.value_slots);
        self.entry = self.new_block(0);
        self.switch_to(self.entry);
        for ty in [Type::I8, Type::I16, Type::I32, Type::I64] {
            let v = self.ins().iconst(ty, 0);
            let i = self.inst_of(v);
            self.undef_insts.push(i);
            self.undef.insert(ty, v);
        }
        let z = self.undef[&Type::I32];
        let p = self.ins().icmp(IntCC::Ne, z, z);
        let i = self.inst_of(p);
        self.undef_insts.push(i);
        self.undef.insert(Type::Pred, p);

        let plan = self.plan(items);
        let mut open = true;
        for (i, item) in items.iter().enumerate() {
            if let Some(b) = plan.starts[i] {
                if open {
                    self.terminate_jump(b);
                }
                self.switch_to(b);
                open = true;
            }
            match item {
                Item::Enter => {
                    self.scopes.push(Scope::default());
                    self.scopes_changed();
                }
                Item::Exit => {
                    self.scopes.pop();
                    self.scopes_changed();
                }
                Item::Decl(v) => self.declare(v),
                Item::Label(_) | Item::CallJoin(_) => {}
                Item::CallBegin(c) => {
                    // Always entered (the plan gives it a block), so scopes stay balanced.
                    let fall = plan.fall[i];
                    self.at(c.ins.span);
                    self.call_begin(c, &plan, fall);
                    if c.guarded() {
                        open = false;
                    }
                }
                Item::CallEnd(c) => {
                    self.at(c.ins.span);
                    self.call_end(c)
                }
                Item::Instr(_) if calls::final_ret(items, i) => {}
                Item::Instr(ins) => {
                    if !open {
                        continue;
                    }
                    let fall = plan.fall[i];
                    // On `None` the error is already reported: keep going to find more
                    // (the kernel fails either way).
                    self.at(ins.span);
                    let _ = self.instruction(ins, &plan, fall);
                    if flow(ins) != Flow::Straight {
                        open = false;
                    }
                }
            }
        }
        if let Some(b) = plan.starts[items.len()] {
            if open {
                self.terminate_jump(b);
            }
            self.switch_to(b);
            open = true;
        }
        if open {
            // Falling off the end of a kernel returns.
            self.ins().ret();
            self.filled(&[]);
        }
        if self.m.errors.len() > self.err_start {
            return None;
        }
        if self.func.blocks.keys().any(|b| !self.sealed[b]) {
            self.error(span, "internal error: a block was never sealed");
            return None;
        }
        self.finish(span)
    }

    fn inst_of(&self, v: Value) -> Inst {
        match self.func.values[v].def {
            ValueDef::Result(i, _) => i,
            ValueDef::Param(..) => unreachable!("undef constants are instruction results"),
        }
    }

    // ---- declarations ---------------------------------------------------------------------

    fn declare(&mut self, v: &ast::VarDecl) {
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

    fn make_reg(&mut self, ty: Option<Type>, width: u32, name: &str) -> RegInfo {
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
    pub(super) fn scopes_changed(&mut self) {
        self.m.found.forget();
    }

    /// What a name means here: a register, or an addressable symbol. Remembered per name
    /// until the scopes change ([`ModuleBuilder::found`]): compiler output declares its
    /// registers at the top of the kernel, so most of a body's lookups are of names already
    /// looked up in the same scopes, one slot read instead of a walk over the scopes' maps.
    /// The walk finds the same again (a register made on first use is in its range's
    /// `made` map by then); debug builds compare.
    fn lookup(&mut self, name: &ast::Name) -> Found {
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
    fn lookup_in_scopes(&mut self, name: &ast::Name) -> Found {
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
    fn reg_var(&mut self, n: &ast::Name) -> Option<VarId> {
        match self.lookup(n) {
            Some(Ok(r)) => self.scalar_var(n, &r),
            _ => {
                self.error(n.span, format!("'{}' is not a register", n.text));
                None
            }
        }
    }

    /// The variable of scalar register `n`, whose [`Self::lookup`] gave `r`.
    fn scalar_var(&mut self, n: &ast::Name, r: &RegInfo) -> Option<VarId> {
        match r.len {
            1 => Some(r.first as usize),
            _ => self.not_scalar(n, r),
        }
    }

    /// [`FnBuilder::scalar_var`]'s errors, out of line so that the common case inlines.
    #[cold]
    #[inline(never)]
    fn not_scalar(&mut self, n: &ast::Name, r: &RegInfo) -> Option<VarId> {
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

    fn elem_var(&mut self, n: &ast::Name, comp: ast::Component) -> Option<VarId> {
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

    // ---- SSA ------------------------------------------------------------------------------

    fn use_var(&mut self, var: VarId) -> Value {
        let v = self.read_var(var, self.cur);
        self.drain();
        v
    }

    fn read_var(&mut self, var: VarId, block: Block) -> Value {
        // Most reads find a definition (or an earlier read's answer) in the block itself.
        match self.defs.get(&def_key(block, var)) {
            Some(&v) => v,
            None => self.read_var_walk(var, block),
        }
    }

    /// [`Self::read_var`] where `block` has no definition of `var`: walk single-predecessor
    /// chains up to one that has (caching the answer in every block passed), or add a
    /// parameter.
    fn read_var_walk(&mut self, var: VarId, block: Block) -> Value {
        let mut chain: SmallVec<[Block; 8]> = SmallVec::new();
        let mut b = block;
        let result = loop {
            // `b` has no definition of `var` here (the caller looked in `block`, the step
            // below in each block it moves to).
            if chain.len() > self.func.blocks.len() {
                // More single-predecessor steps than blocks: a cycle of them, which only
                // unreachable code forms.
                break self.undef[&self.var_ty[var]];
            }
            if !self.sealed[b] {
                let p = self.new_param(b, var);
                self.incomplete[b].push(p);
                break p;
            }
            let preds = &self.preds[b];
            let first = preds.first().copied();
            match first {
                None => break self.undef[&self.var_ty[var]],
                Some(p0) if preds.iter().all(|&p| p == p0) => {
                    chain.push(b);
                    b = p0;
                    if let Some(&v) = self.defs.get(&def_key(b, var)) {
                        break v;
                    }
                }
                Some(_) => {
                    let p = self.new_param(b, var);
                    self.pending.push(p);
                    break p;
                }
            }
        };
        for c in chain {
            self.defs.insert(def_key(c, var), result);
        }
        result
    }

    fn new_param(&mut self, b: Block, var: VarId) -> Value {
        let p = FunctionBuilder::new(&mut self.func).append_block_param(b, self.var_ty[var]);
        self.defs.insert(def_key(b, var), p);
        self.value_slot(p);
        self.param_var[p] = Some(var);
        self.incoming[p] = Vec::new();
        p
    }

    /// Make sure the per-value maps hold a slot for `v`, growing them to twice what it needs
    /// when they do not (writing past the end of a map grew it by one slot at a time).
    /// Capacity only: a slot past the end reads as the default, like a missing one.
    fn value_slot(&mut self, v: Value) {
        if v.index() >= self.value_slots {
            self.value_slots = 2 * (v.index() + 1);
            self.param_var.resize(self.value_slots);
            self.incoming.resize(self.value_slots);
            self.func.value_names.resize(self.value_slots);
        }
    }

    /// Give every pending parameter its incoming values.
    fn drain(&mut self) {
        while let Some(p) = self.pending.pop() {
            let Some(var) = self.param_var[p] else {
                continue;
            };
            let ValueDef::Param(b, _) = self.func.values[p].def else {
                continue;
            };
            let preds = unique_in_order(&self.preds[b]);
            self.incoming[p].reserve_exact(preds.len());
            for pred in preds {
                let v = self.read_var(var, pred);
                self.incoming[p].push((pred, v));
            }
        }
    }

    fn seal(&mut self, b: Block) {
        self.sealed[b] = true;
        let ps = std::mem::take(&mut self.incomplete[b]);
        self.pending.extend(ps);
        self.drain();
    }

    fn def_var(&mut self, var: VarId, v: Value) {
        let cur = self.cur;
        self.defs.insert(def_key(cur, var), v);
    }

    /// Record the edges of the terminator just emitted in the current block.
    fn filled(&mut self, targets: &[Block]) {
        let cur = self.cur;
        for &t in targets {
            self.preds[t].push(cur);
        }
        for (k, &t) in targets.iter().enumerate() {
            // Each target once (a branch's two sides may be one block).
            let first = !targets[..k].contains(&t);
            if first && !self.sealed[t] && self.preds[t].len() as u32 >= self.expected[t] {
                self.seal(t);
            }
        }
    }

    fn terminate_jump(&mut self, b: Block) {
        self.ins().jump(b, &[]);
        self.filled(&[b]);
    }

    fn brif(&mut self, cond: Value, then_b: Block, else_b: Block) {
        self.ins().brif(cond, then_b, &[], else_b, &[]);
        self.filled(&[then_b, else_b]);
    }

    // ---- finishing ------------------------------------------------------------------------

    fn finish(mut self, span: Span) -> Option<Function> {
        let func = &self.func;
        // The sets and maps below are keyed by entities, so they are flags and slots indexed
        // by entity (hash maps here were a visible share of building); none is iterated.
        // Reachability over the emitted terminators.
        // Each is sized once from the function's counts rather than grown slot by slot.
        let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
        reachable.resize(func.blocks.len());
        let mut stack = vec![self.entry];
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut reachable[b], true) {
                continue;
            }
            if let Some(&last) = func.blocks[b].insts.last() {
                for call in func.insts[last].data.targets() {
                    stack.push(call.block);
                }
            }
        }
        // Trivial parameter removal over reachable predecessors.
        let mut alias: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
        alias.resize(func.values.len());
        fn resolve(alias: &SecondaryMap<Value, Option<Value>>, mut v: Value) -> Value {
            while let Some(a) = alias[v] {
                v = a;
            }
            v
        }
        let mut removed: SecondaryMap<Value, bool> = SecondaryMap::new();
        removed.resize(func.values.len());
        loop {
            let mut changed = false;
            for &b in &self.order {
                if !reachable[b] {
                    continue;
                }
                for &p in &func.blocks[b].params {
                    if removed[p] {
                        continue;
                    }
                    let mut only: Option<Value> = None;
                    let mut trivial = true;
                    for &(pred, v) in &self.incoming[p] {
                        if !reachable[pred] {
                            continue;
                        }
                        let v = resolve(&alias, v);
                        if v == p || only == Some(v) {
                            continue;
                        }
                        if only.is_some() {
                            trivial = false;
                            break;
                        }
                        only = Some(v);
                    }
                    if trivial {
                        let to = only.unwrap_or(self.undef[&func.values[p].ty]);
                        alias[p] = Some(to);
                        removed[p] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let order: Vec<Block> = self
            .order
            .iter()
            .copied()
            .filter(|b| reachable[*b])
            .collect();
        // The register names move to the compacted function (nothing reads them here).
        let reg_names = std::mem::take(&mut self.func.reg_names);
        let out = self.compact(&order, &alias, &removed, reg_names);
        match out {
            Some(f) => match super::verify_in_module(&self.m.ir, &f) {
                Ok(()) => Some(f),
                Err(errs) => {
                    let msg: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
                    let m = self.m;
                    m.error(
                        span,
                        format!(
                            "internal error: the IR built for this kernel does not verify: {}",
                            msg.join("; ")
                        ),
                    );
                    None
                }
            },
            None => {
                let m = self.m;
                m.error(span, "internal error: a value escaped SSA construction");
                None
            }
        }
    }

    /// A fresh function with the reachable blocks in `order`, parameters removed or aliased
    /// away, unused undef constants dropped, and entities numbered densely.
    fn compact(
        &self,
        order: &[Block],
        alias: &SecondaryMap<Value, Option<Value>>,
        removed: &SecondaryMap<Value, bool>,
        reg_names: Vec<String>,
    ) -> Option<Function> {
        let old = &self.func;
        let resolve = |mut v: Value| {
            while let Some(a) = alias[v] {
                v = a;
            }
            v
        };
        // Not collected: walked where needed, so no list is allocated per block and edge.
        let kept_params = |b: Block| {
            old.blocks[b]
                .params
                .iter()
                .copied()
                .filter(move |p| !removed[*p])
        };
        let is_undef = |i: Inst| self.undef_insts.contains(&i);
        // Which undef constants are used (after aliasing)? (Like the maps below, a slot per
        // entity rather than a hash map.)
        // Every map and list below is sized once up front (old counts bound the new ones):
        // growing them entry by entry was a visible share of building.
        let mut used: SecondaryMap<Value, bool> = SecondaryMap::new();
        used.resize(old.values.len());
        for &b in order {
            for &i in &old.blocks[b].insts {
                // The undef constants' own operands do not keep them alive.
                if is_undef(i) {
                    continue;
                }
                for part in old.insts[i].data.operand_parts() {
                    for &v in part {
                        used[resolve(v)] = true;
                    }
                }
                for call in old.insts[i].data.targets() {
                    let target = call.block;
                    for p in kept_params(target) {
                        for &(pred, v) in &self.incoming[p] {
                            if pred == b {
                                used[resolve(v)] = true;
                            }
                        }
                    }
                }
            }
        }
        // The zero i32 feeds the pred undef.
        if used[self.undef[&Type::Pred]] {
            used[self.undef[&Type::I32]] = true;
        }
        let keep_inst = |i: Inst| !is_undef(i) || old.insts[i].results.iter().any(|r| used[*r]);
        let mut f = Function::new(&old.name);
        f.params = old.params.clone();
        f.subroutine = old.subroutine;
        f.blocks.reserve(order.len());
        f.layout.reserve(order.len());
        f.values.reserve(old.values.len());
        f.insts.reserve(old.insts.len());
        let mut bmap: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
        bmap.resize(old.blocks.len());
        for &b in order {
            let nb = f.blocks.push(Default::default());
            f.layout.push(nb);
            bmap[b] = Some(nb);
        }
        // Number every value first: a use may come before its definition in layout order.
        let mut vmap: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
        vmap.resize(old.values.len());
        let mut next_inst = 0usize;
        for &b in order {
            let nb = bmap[b]?;
            for (k, p) in kept_params(b).enumerate() {
                let nv = f.values.push(ValueData {
                    ty: old.values[p].ty,
                    def: ValueDef::Param(nb, k),
                });
                f.blocks[nb].params.push(nv);
                vmap[p] = Some(nv);
            }
            for &i in &old.blocks[b].insts {
                if !keep_inst(i) {
                    continue;
                }
                let ni = Inst::new(next_inst);
                next_inst += 1;
                for (k, &r) in old.insts[i].results.iter().enumerate() {
                    let nv = f.values.push(ValueData {
                        ty: old.values[r].ty,
                        def: ValueDef::Result(ni, k),
                    });
                    vmap[r] = Some(nv);
                }
            }
        }
        f.reg_names = reg_names;
        // One slot per value up front (capacity only: a missing slot reads as 0 too).
        f.value_names.resize(f.values.len());
        for (v, &k) in old.value_names.iter().filter(|(_, k)| **k != 0) {
            if let Some(nv) = vmap[v] {
                f.value_names[nv] = k;
            }
        }
        let map = |v: Value| vmap[resolve(v)];
        for &b in order {
            let nb = bmap[b]?;
            for &i in &old.blocks[b].insts {
                if !keep_inst(i) {
                    continue;
                }
                let node = &old.insts[i];
                let mut failed = false;
                let mut call = |c: &BlockCall| -> BlockCall {
                    let target = bmap[c.block];
                    let args = kept_params(c.block)
                        .map(|p| {
                            let v = self.incoming[p]
                                .iter()
                                .find(|(pred, _)| *pred == b)
                                .map(|&(_, v)| v);
                            // Mapped below with every other operand.
                            v.unwrap_or_else(|| {
                                failed = true;
                                p
                            })
                        })
                        .collect();
                    BlockCall {
                        block: target.unwrap_or_else(|| {
                            failed = true;
                            c.block
                        }),
                        args,
                    }
                };
                let data = match &node.data {
                    InstData::Jump { dest } => InstData::Jump { dest: call(dest) },
                    InstData::Brif {
                        cond,
                        then_dest,
                        else_dest,
                    } => {
                        let t = call(then_dest);
                        let e = call(else_dest);
                        InstData::Brif {
                            cond: *cond,
                            then_dest: t,
                            else_dest: e,
                        }
                    }
                    other => other.clone(),
                };
                let mut data = data;
                data.map_operands(|v| match map(v) {
                    Some(x) => x,
                    None => {
                        failed = true;
                        v
                    }
                });
                if failed {
                    return None;
                }
                let results = node
                    .results
                    .iter()
                    .map(|r| vmap[*r])
                    .collect::<Option<_>>()?;
                let ni = f.insts.push(InstNode {
                    data,
                    results,
                    block: nb,
                });
                f.srclocs[ni] = old.srclocs[i];
                f.contractible[ni] = old.contractible[i];
                f.blocks[nb].insts.push(ni);
            }
        }
        Some(f)
    }

    // ---- instructions ---------------------------------------------------------------------

    fn instruction(&mut self, ins: &Instruction, plan: &Plan, fall: Option<Block>) -> Option<()> {
        let guard = match &ins.guard {
            Some(g) => {
                let var = self.reg_var(&g.pred)?;
                if self.var_ty[var] != Type::Pred {
                    self.error(g.pred.span, format!("'{}' is not a predicate", g.pred.text));
                    return None;
                }
                Some((self.use_var(var), g.negated))
            }
            None => None,
        };
        match ins.opcode {
            Opcode::Bra => {
                let Some(Operand::Name(n)) = ins.operands.first() else {
                    self.error(ins.span, "unsupported branch operand");
                    return None;
                };
                let Some(&target) = plan.labels.get(&(self.frame_id(), n.text.clone())) else {
                    self.error(n.span, format!("unknown label '{}'", n.text));
                    return None;
                };
                match (guard, fall) {
                    (None, _) => {
                        self.ins().jump(target, &[]);
                        self.filled(&[target]);
                    }
                    (Some((p, neg)), Some(fall)) => {
                        if neg {
                            self.brif(p, fall, target);
                        } else {
                            self.brif(p, target, fall);
                        }
                    }
                    (Some(_), None) => {
                        self.error(ins.span, "internal error: no fall-through block");
                        return None;
                    }
                }
                Some(())
            }
            Opcode::Brx => self.brx(ins, plan),
            Opcode::Ret if self.frame_id() != 0 => self.frame_ret(ins, guard, plan, fall),
            Opcode::Ret | Opcode::Exit => {
                match (guard, fall) {
                    (None, _) => {
                        self.frame0_ret(ins)?;
                        self.filled(&[]);
                    }
                    (Some((p, neg)), Some(fall)) => {
                        let r = self.new_block(1);
                        if neg {
                            self.brif(p, fall, r);
                        } else {
                            self.brif(p, r, fall);
                        }
                        self.switch_to(r);
                        self.frame0_ret(ins)?;
                        self.filled(&[]);
                    }
                    (Some(_), None) => {
                        self.error(ins.span, "internal error: no fall-through block");
                        return None;
                    }
                }
                Some(())
            }
            _ => {
                let side_effect = matches!(
                    ins.opcode,
                    Opcode::Ld
                        | Opcode::Ldu
                        | Opcode::St
                        | Opcode::Bar
                        | Opcode::Barrier
                        | Opcode::Atom
                        | Opcode::Red
                        | Opcode::Vote
                        | Opcode::Shfl
                        | Opcode::Redux
                        | Opcode::Match
                        | Opcode::Elect
                        | Opcode::Trap
                        | Opcode::Brkpt
                        | Opcode::Prefetch
                        | Opcode::Prefetchu
                        | Opcode::Cp
                        | Opcode::Mbarrier
                        | Opcode::Alloca
                        | Opcode::Stackrestore
                        | Opcode::Call
                );
                match guard {
                    None => self.body_instr(ins),
                    Some((p, neg)) if !side_effect => {
                        self.guard = Some((p, neg));
                        let r = self.body_instr(ins);
                        self.guard = None;
                        r
                    }
                    Some((p, neg)) => {
                        // Branch around: the instruction runs in its own block.
                        let then_b = self.new_block(1);
                        let join = self.new_block(2);
                        if neg {
                            self.brif(p, join, then_b);
                        } else {
                            self.brif(p, then_b, join);
                        }
                        self.switch_to(then_b);
                        let r = self.body_instr(ins);
                        self.terminate_jump(join);
                        self.switch_to(join);
                        r
                    }
                }
            }
        }
    }

    fn unsupported(&mut self, ins: &Instruction, why: &str) -> Option<()> {
        let name = instr_name(ins);
        self.error(
            ins.opcode_span.to(ins.span),
            format!("unsupported instruction '{name}' ({why})"),
        );
        None
    }

    fn body_instr(&mut self, ins: &Instruction) -> Option<()> {
        // Newer-GPU instructions emulated on sm_5x (issue 26), before the paths that refuse them.
        if let Some(r) = self.emulated_instr(ins) {
            return r;
        }
        if let Some(r) = self.bf16_instr(ins) {
            return r;
        }
        if let Some(r) = self.float_instr(ins) {
            return r;
        }
        if let Some(r) = self.modern_instr(ins) {
            return r;
        }
        let why = match ins.opcode {
            Opcode::Add | Opcode::Sub => return self.add_sub(ins),
            Opcode::Addc | Opcode::Subc => return self.addc_subc(ins),
            Opcode::Mul => return self.mul(ins),
            Opcode::Mad => return self.mad(ins),
            Opcode::Madc => return self.mad_cc(ins),
            Opcode::Shl | Opcode::Shr => return self.shift(ins),
            Opcode::And | Opcode::Or | Opcode::Xor => return self.bitwise(ins),
            Opcode::Not | Opcode::Neg | Opcode::Abs | Opcode::Cnot => return self.unary(ins),
            Opcode::Min | Opcode::Max => return self.minmax(ins),
            Opcode::Setp | Opcode::Set => return self.setp(ins),
            Opcode::Mul24 | Opcode::Mad24 => return self.mul24(ins),
            Opcode::Selp => return self.selp(ins),
            Opcode::Slct => return self.slct(ins),
            Opcode::Mov => return self.mov(ins),
            Opcode::Cvt => return self.cvt(ins),
            Opcode::Cvta => return self.cvta(ins),
            Opcode::Isspacep => return self.isspacep(ins),
            Opcode::Ld | Opcode::Ldu => return self.load(ins),
            Opcode::St => return self.store(ins),
            Opcode::Bar | Opcode::Barrier => return self.barrier(ins),
            Opcode::Prefetch | Opcode::Prefetchu => return self.prefetch(ins),
            Opcode::Div | Opcode::Rem => return self.div_rem(ins),
            Opcode::Rcp
            | Opcode::Sqrt
            | Opcode::Rsqrt
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Lg2
            | Opcode::Ex2 => return self.approx_fn(ins),
            Opcode::Tanh => "tanh requires sm_75 (MUFU.TANH); sm_5x has no such instruction",
            Opcode::Fns => return self.fns(ins),
            Opcode::Clz
            | Opcode::Popc
            | Opcode::Brev
            | Opcode::Bfind
            | Opcode::Bfe
            | Opcode::Bfi
            | Opcode::Prmt
            | Opcode::Shf
            | Opcode::Sad => return self.bit_instr(ins),
            Opcode::Tex => return self.texture(ins),
            Opcode::Txq => return self.txq(ins),
            Opcode::Suld | Opcode::Sust | Opcode::Sured => return self.surface(ins),
            Opcode::Suq => "leafold does not lower suq yet (ptxas 11.8: TXQ on the surface's slot for .width/.height; the other attributes from the driver's surface descriptor table at c[0x0][0xc0], scaled by .nv.surfrefDescSize); the surface model has no element format",
            Opcode::Tld4 => return self.tld4(ins),
            Opcode::Istypep => "leafold does not lower textures or surfaces",
            Opcode::Atom | Opcode::Red => return self.atomic(ins),
            Opcode::Vote => return self.vote(ins),
            Opcode::Redux | Opcode::Match | Opcode::Elect => return self.collective(ins),
            Opcode::Activemask => return self.activemask(ins),
            Opcode::Lop3 => return self.lop3(ins),
            Opcode::Shfl => return self.shfl(ins),
            Opcode::Call => return self.extern_call(ins),
            Opcode::Fma | Opcode::Testp | Opcode::Copysign => {
                "floating-point arithmetic is not in the IR yet"
            }
            Opcode::Membar | Opcode::Fence => return self.membar(ins),
            Opcode::Vadd
            | Opcode::Vsub
            | Opcode::Vabsdiff
            | Opcode::Vmin
            | Opcode::Vmax
            | Opcode::Vshl
            | Opcode::Vshr
            | Opcode::Vset
            | Opcode::Vmad
            | Opcode::Vadd2
            | Opcode::Vsub2
            | Opcode::Vavrg2
            | Opcode::Vabsdiff2
            | Opcode::Vmin2
            | Opcode::Vmax2
            | Opcode::Vset2
            | Opcode::Vadd4
            | Opcode::Vsub4
            | Opcode::Vavrg4
            | Opcode::Vabsdiff4
            | Opcode::Vmin4
            | Opcode::Vmax4
            | Opcode::Vset4 => return self.video_instr(ins),
            // `brkpt` is what ptxas 11.8 makes of `trap` too: `BPT.TRAP 0x1`.
            Opcode::Trap | Opcode::Brkpt => {
                self.ins().trap();
                return Some(());
            }
            // `pmevent a` / `pmevent.mask a`: signal a performance-monitor event. ptxas 11.8
            // emits nothing for it on sm_5x, and it has no effect on memory or registers.
            Opcode::Pmevent => {
                let ops = self.ops(ins, 1)?;
                if !matches!(ops[0], Operand::Imm(..)) {
                    return self.unsupported(ins, "pmevent takes an immediate event number");
                }
                return Some(());
            }
            Opcode::Alloca | Opcode::Stacksave | Opcode::Stackrestore => {
                return self.stack_instr(ins)
            }
            Opcode::Brx => "internal error: brx.idx reached the straight-line instructions",
            _ => "not in the IR yet",
        };
        self.unsupported(ins, why)
    }

    /// The instruction type as an IR integer type; floats and other types are refused with
    /// `what` as the reason.
    fn int_type(&mut self, ins: &Instruction) -> Option<(Type, bool)> {
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

    fn reject_flags(&mut self, ins: &Instruction, flags: &[&str]) -> Option<()> {
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

    fn ops<'i>(&mut self, ins: &'i Instruction, n: usize) -> Option<&'i [Operand]> {
        if ins.operands.len() != n {
            self.unsupported(ins, &format!("expected {n} operands"));
            return None;
        }
        Some(&ins.operands)
    }

    // -- operands --

    fn iconst(&mut self, ty: Type, x: i64) -> Value {
        self.ins().iconst(ty, x)
    }

    fn pred_const(&mut self, b: bool) -> Value {
        let z = self.iconst(Type::I32, 0);
        let cc = if b { IntCC::Eq } else { IntCC::Ne };
        self.ins().icmp(cc, z, z)
    }

    /// Convert `v` to `want`: truncate a wider integer, extend a narrower one.
    fn fit(&mut self, v: Value, want: Type, signed: bool) -> Option<Value> {
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
    fn read(&mut self, op: &Operand, want: Type, itype: Option<ast::Type>) -> Option<Value> {
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
    fn symbol_value(&mut self, n: &ast::Name, sym: &Sym, want: Type, off: i64) -> Option<Value> {
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
    fn dests(&mut self, op: &Operand) -> Option<Dests> {
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
    fn dest1(&mut self, op: &Operand) -> Option<Option<VarId>> {
        let d = self.dests(op)?;
        if d.len() != 1 {
            self.error(op.span(), "unsupported vector destination");
            return None;
        }
        Some(d[0])
    }

    /// Write `v` to a variable, extending or truncating to the register's type; under a
    /// select-style guard, keep the old value where the guard fails.
    fn write(&mut self, var: Option<VarId>, v: Value, signed: bool, span: Span) -> Option<()> {
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

    // -- ALU --

    fn add_sub(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        if ins.has_flag("sat") {
            return self.add_sub_sat(ins);
        }
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let add = ins.opcode == Opcode::Add;
        let d = if add {
            self.ins().add(a, b)
        } else {
            self.ins().sub(a, b)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())?;
        if ins.has_flag("cc") {
            // The machine carry: out of the addition (d < a unsigned); of a + ~b + 1 for the
            // subtraction, which is "no borrow" (a >= b).
            let c = if add {
                self.ins().icmp(IntCC::Ult, d, a)
            } else {
                self.ins().icmp(IntCC::Uge, a, b)
            };
            self.write(Some(self.carry), c, false, ins.span)?;
        }
        Some(())
    }

    /// `add.sat.s32` / `sub.sat.s32`: the signed result clamped to the `.s32` range (the only
    /// type PTX gives `.sat` on integers here).
    fn add_sub_sat(&mut self, ins: &Instruction) -> Option<()> {
        if ins.ty() != Some(ast::Type::S32) || ins.has_flag("cc") {
            return self.unsupported(ins, "integer .sat is add.sat.s32 or sub.sat.s32");
        }
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], Type::I32, it)?;
        let b = self.read(&ops[2], Type::I32, it)?;
        let op = if ins.opcode == Opcode::Add {
            BinaryOp::AddSatS
        } else {
            BinaryOp::SubSatS
        };
        let d = self.ins().binary(op, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, true, ops[0].span())
    }

    fn addc_subc(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let cin = self.use_var(self.carry);
        let one = self.iconst(ty, 1);
        let zero = self.iconst(ty, 0);
        let c = self.ins().select(cin, one, zero);
        // The carry register is the machine's carry flag, as ptxas reads it (the oracle test
        // pins this): subtraction is a + ~b + 1, so `sub.cc` leaves CF = "no borrow" and
        // `subc` computes a + ~b + CF. Then both are one rule: t = a + b' carries when
        // t < a; d = t + c carries when d < t.
        let b = if ins.opcode == Opcode::Subc {
            self.ins().unary(UnaryOp::Not, b)
        } else {
            b
        };
        let t = self.ins().add(a, b);
        let d = self.ins().add(t, c);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())?;
        if ins.has_flag("cc") {
            let c1 = self.ins().icmp(IntCC::Ult, t, a);
            let c2 = self.ins().icmp(IntCC::Ult, d, t);
            let cout = self.ins().binary(BinaryOp::Or, c1, c2);
            self.write(Some(self.carry), cout, false, ins.span)?;
        }
        Some(())
    }

    fn mode(ins: &Instruction) -> Option<&'static str> {
        ["lo", "hi", "wide"].into_iter().find(|m| ins.has_flag(m))
    }

    /// The low (`"lo"`) or high (`"hi"`) half of the product `a * b`, as `mul` and the
    /// carrying `mad`s take it.
    fn product_half(&mut self, half: &str, signed: bool, a: Value, b: Value) -> Value {
        if half == "lo" {
            return self.ins().mul(a, b);
        }
        let op = if signed {
            BinaryOp::MulHiS
        } else {
            BinaryOp::MulHiU
        };
        self.ins().binary(op, a, b)
    }

    fn mul(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["sat"])?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let d = match Self::mode(ins) {
            Some(half @ ("lo" | "hi")) => self.product_half(half, signed, a, b),
            Some(_) if matches!(ty, Type::I16 | Type::I32) => self.ins().mul_wide(signed, a, b),
            _ => return self.unsupported(ins, "integer mul needs .lo, .hi or .wide (16/32-bit)"),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `mad.lo.cc`, `mad.hi.cc` and `madc{.cc}` (`.lo`/`.hi`, 32 and 64 bits): the product's
    /// half `p`, then `d = p + c (+ CF for madc)`, with the carry out of that addition, which
    /// is the carry ptxas's `XMAD`/`IMAD` chains leave (PTX: "the carry-out of the add").
    fn mad_cc(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["sat"])?;
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let c = self.read(&ops[3], ty, it)?;
        let p = match Self::mode(ins) {
            Some(half @ ("lo" | "hi")) => self.product_half(half, signed, a, b),
            _ => return self.unsupported(ins, "mad with a carry needs .lo or .hi"),
        };
        let t = self.ins().add(p, c);
        let (d, c1) = if ins.opcode == Opcode::Madc {
            let cin = self.use_var(self.carry);
            let one = self.iconst(ty, 1);
            let zero = self.iconst(ty, 0);
            let k = self.ins().select(cin, one, zero);
            let d = self.ins().add(t, k);
            (d, Some(self.ins().icmp(IntCC::Ult, d, t)))
        } else {
            (t, None)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())?;
        if ins.has_flag("cc") {
            let c0 = self.ins().icmp(IntCC::Ult, t, p);
            let cout = match c1 {
                Some(c1) => self.ins().binary(BinaryOp::Or, c0, c1),
                None => c0,
            };
            self.write(Some(self.carry), cout, false, ins.span)?;
        }
        Some(())
    }

    fn mad(&mut self, ins: &Instruction) -> Option<()> {
        if ins.has_flag("cc") {
            return self.mad_cc(ins);
        }
        let (ty, signed) = self.int_type(ins)?;
        let sat = ins.has_flag("sat");
        if sat && (ins.ty() != Some(ast::Type::S32) || Self::mode(ins) != Some("hi")) {
            return self.unsupported(ins, "integer mad takes .sat only as mad.hi.sat.s32");
        }
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let d = match Self::mode(ins) {
            // The high word plus c, clamped to the .s32 range: IMAD.HI.SAT, as ptxas.
            Some("hi") if sat => {
                let c = self.read(&ops[3], ty, it)?;
                self.ins().bits(BitOp::MadHiSat, &[a, b, c])
            }
            Some("lo") => {
                let c = self.read(&ops[3], ty, it)?;
                self.ins().mad_lo(a, b, c)
            }
            Some("hi") => {
                let c = self.read(&ops[3], ty, it)?;
                self.ins().mad_hi(signed, a, b, c)
            }
            Some(_) if matches!(ty, Type::I16 | Type::I32) => {
                let wide = ty.double_width()?;
                let c = self.read(&ops[3], wide, it)?;
                self.ins().mad_wide(signed, a, b, c)
            }
            _ => return self.unsupported(ins, "integer mad needs .lo, .hi or .wide (16/32-bit)"),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    fn shift(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let n = self.read(&ops[2], Type::I32, Some(ast::Type::U32))?;
        let op = match (ins.opcode, signed) {
            (Opcode::Shl, _) => BinaryOp::Shl,
            (_, true) => BinaryOp::ShrS,
            (_, false) => BinaryOp::ShrU,
        };
        let d = self.ins().binary(op, a, n);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    fn pred_or_int(&mut self, ins: &Instruction) -> Option<Type> {
        if ins.ty() == Some(ast::Type::Pred) {
            return Some(Type::Pred);
        }
        self.int_type(ins).map(|(t, _)| t)
    }

    fn bitwise(&mut self, ins: &Instruction) -> Option<()> {
        let ty = self.pred_or_int(ins)?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let op = match ins.opcode {
            Opcode::And => BinaryOp::And,
            Opcode::Or => BinaryOp::Or,
            _ => BinaryOp::Xor,
        };
        let d = self.ins().binary(op, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn unary(&mut self, ins: &Instruction) -> Option<()> {
        let ty = if ins.opcode == Opcode::Not {
            self.pred_or_int(ins)?
        } else {
            self.int_type(ins)?.0
        };
        let ops = self.ops(ins, 2)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let d = match ins.opcode {
            Opcode::Not => self.ins().unary(UnaryOp::Not, a),
            Opcode::Neg => self.ins().unary(UnaryOp::Neg, a),
            Opcode::Abs => {
                // abs(a) = a < 0 ? -a : a (the most negative value stays itself, as in PTX).
                let z = self.iconst(ty, 0);
                let neg = self.ins().icmp(IntCC::Slt, a, z);
                let na = self.ins().unary(UnaryOp::Neg, a);
                self.ins().select(neg, na, a)
            }
            _ => {
                // cnot: 1 when a is zero, else 0.
                let z = self.iconst(ty, 0);
                let one = self.iconst(ty, 1);
                let is0 = self.ins().icmp(IntCC::Eq, a, z);
                self.ins().select(is0, one, z)
            }
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn minmax(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        self.reject_flags(ins, &["relu"])?;
        let ops = self.ops(ins, 3)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let op = match (ins.opcode == Opcode::Min, signed) {
            (true, true) => BinaryOp::MinS,
            (true, false) => BinaryOp::MinU,
            (false, true) => BinaryOp::MaxS,
            (false, false) => BinaryOp::MaxU,
        };
        let d = if ty == Type::I64 {
            // SM50 has no 64-bit IMNMX: a compare and a select, as ptxas does
            // (ISETP + ISETP.X, then SEL on each half).
            let cc = match (ins.opcode == Opcode::Min, signed) {
                (true, true) => IntCC::Slt,
                (true, false) => IntCC::Ult,
                (false, true) => IntCC::Sgt,
                (false, false) => IntCC::Ugt,
            };
            let p = self.ins().icmp(cc, a, b);
            self.ins().select(p, a, b)
        } else {
            self.ins().binary(op, a, b)
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `mul24.lo` / `mad24.lo`: the low 32 bits of the product of the operands' low 24 bits
    /// (sign-extended from bit 23 for `.s32`), plus `c` for `mad24`.
    fn mul24(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.int_type(ins)?;
        let hi = ins.has_flag("hi");
        // `.sat` only on `mad24.hi.s32`: the sum is clamped to the .s32 range (ptxas: the
        // XMAD product, then IADD.SAT).
        let sat = ins.has_flag("sat");
        if ty != Type::I32
            || !(ins.has_flag("lo") || hi)
            || (sat && !(hi && signed && ins.opcode == Opcode::Mad24))
        {
            return self.unsupported(
                ins,
                "only mul24/mad24 .lo and .hi on 32-bit integers, .sat only on mad24.hi.s32",
            );
        }
        let n = if ins.opcode == Opcode::Mad24 { 4 } else { 3 };
        let ops = self.ops(ins, n)?;
        let it = ins.ty();
        let mut v = [None, None];
        for (k, op) in ops[1..3].iter().enumerate() {
            let x = self.read(op, ty, it)?;
            v[k] = Some(if signed {
                let eight = self.iconst(Type::I32, 8);
                let up = self.ins().shl(x, eight);
                self.ins().binary(BinaryOp::ShrS, up, eight)
            } else {
                let mask = self.iconst(Type::I32, 0xff_ffff);
                self.ins().binary(BinaryOp::And, x, mask)
            });
        }
        let mut d = if hi {
            // .hi: bits 16..47 of the 48-bit product of the 24-bit operands.
            let w = self.ins().mul_wide(signed, v[0]?, v[1]?);
            let k = self.iconst(Type::I32, 16);
            let w = self.ins().binary(BinaryOp::ShrU, w, k);
            self.ins().trunc(Type::I32, w)
        } else {
            self.ins().mul(v[0]?, v[1]?)
        };
        if n == 4 {
            let c = self.read(&ops[3], ty, it)?;
            d = if sat {
                self.ins().binary(BinaryOp::AddSatS, d, c)
            } else {
                self.ins().add(d, c)
            };
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `setp` (predicate result) and `set` (integer or float-bits result) on integers.
    fn setp(&mut self, ins: &Instruction) -> Option<()> {
        // `set.<cmp>.<dtype>.<stype>`: the comparison is on the source type.
        let (ty, signed) = self.int_type(ins)?;
        let set_true: Option<i64> = if ins.opcode == Opcode::Set {
            match ins.type_mods().next() {
                Some(ast::Type::F32) => Some(0x3f80_0000),
                Some(ast::Type::U32 | ast::Type::S32 | ast::Type::B32) => Some(-1),
                _ => return self.unsupported(ins, "set writes .u32, .s32 or .f32"),
            }
        } else {
            None
        };
        if ins.operands.len() != 3 && ins.operands.len() != 4 {
            return self.unsupported(ins, "expected 3 or 4 operands");
        }
        let ops = &ins.operands;
        let it = ins.ty();
        let Some(cmp) = ins.cmp() else {
            return self.unsupported(ins, "no comparison");
        };
        let cc = match (cmp, signed) {
            (CmpOp::Eq, _) => IntCC::Eq,
            (CmpOp::Ne, _) => IntCC::Ne,
            (CmpOp::Lt, true) => IntCC::Slt,
            (CmpOp::Le, true) => IntCC::Sle,
            (CmpOp::Gt, true) => IntCC::Sgt,
            (CmpOp::Ge, true) => IntCC::Sge,
            (CmpOp::Lt | CmpOp::Lo, _) => IntCC::Ult,
            (CmpOp::Le | CmpOp::Ls, _) => IntCC::Ule,
            (CmpOp::Gt | CmpOp::Hi, _) => IntCC::Ugt,
            (CmpOp::Ge | CmpOp::Hs, _) => IntCC::Uge,
            _ => return self.unsupported(ins, "floating-point comparison on integers"),
        };
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let mut r = self.ins().icmp(cc, a, b);
        let mut nr = None;
        if let Some(c) = ops.get(3) {
            let c = self.read(c, Type::Pred, None)?;
            let op = if ins.has_flag("and") {
                BinaryOp::And
            } else if ins.has_flag("or") {
                BinaryOp::Or
            } else if ins.has_flag("xor") {
                BinaryOp::Xor
            } else {
                return self.unsupported(ins, "a fourth operand needs .and, .or or .xor");
            };
            // The second destination (p|q) combines the negated comparison with c.
            if matches!(ops[0], Operand::PredPair(..)) {
                let n = self.ins().unary(UnaryOp::Not, r);
                nr = Some(self.ins().binary(op, n, c));
            }
            r = self.ins().binary(op, r, c);
        }
        match &ops[0] {
            Operand::PredPair(p, q) => {
                let pv = self.reg_var(p)?;
                let qv = self.reg_var(q)?;
                let nr = match nr {
                    Some(x) => x,
                    None => self.ins().unary(UnaryOp::Not, r),
                };
                self.write(Some(pv), r, false, p.span)?;
                self.write(Some(qv), nr, false, q.span)
            }
            d => {
                let dst = self.dest1(d)?;
                let r = match set_true {
                    // set: all ones (or 1.0f) where the comparison holds, else zero.
                    Some(t) => {
                        let t = self.iconst(Type::I32, t);
                        let z = self.iconst(Type::I32, 0);
                        self.ins().select(r, t, z)
                    }
                    None => r,
                };
                self.write(dst, r, false, d.span())
            }
        }
    }

    /// The instruction type as the IR type of its bits (floats allowed): for moves.
    fn bits_type(&mut self, ins: &Instruction) -> Option<(Type, bool)> {
        let Some(t) = ins.ty() else {
            self.unsupported(ins, "no instruction type");
            return None;
        };
        match ir_type(t) {
            Some(ty) => Some((ty, t.kind() == TypeKind::Signed)),
            None => {
                self.unsupported(ins, &format!(".{} values are not in the IR", t.name()));
                None
            }
        }
    }

    fn selp(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.bits_type(ins)?;
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let a = self.read(&ops[1], ty, it)?;
        let b = self.read(&ops[2], ty, it)?;
        let c = self.read(&ops[3], Type::Pred, None)?;
        let d = self.ins().select(c, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `slct.<dtype>.s32 d, a, b, c`: `c >= 0 ? a : b`.
    fn slct(&mut self, ins: &Instruction) -> Option<()> {
        let (dt, ct) = match ins.type_mod_list()[..] {
            [d, c] => (d, c),
            _ => return self.unsupported(ins, "unexpected types"),
        };
        if !matches!(ct, ast::Type::S32 | ast::Type::F32) {
            return self.unsupported(ins, "the selector must be .s32 or .f32");
        }
        let Some(ty) = ir_type(dt).filter(|t| t.is_int()) else {
            return self.unsupported(ins, "unsupported result type");
        };
        let ops = self.ops(ins, 4)?;
        let a = self.read(&ops[1], ty, Some(dt))?;
        let b = self.read(&ops[2], ty, Some(dt))?;
        let c = self.read(&ops[3], Type::I32, Some(ct))?;
        let z = self.iconst(Type::I32, 0);
        let p = if ct == ast::Type::F32 {
            // `c >= 0` as a float comparison: -0 selects a, NaN selects b, and with .ftz a
            // negative subnormal (flushed to -0) selects a.
            let cmp = FloatOp::Cmp {
                cc: FloatCC::Ge,
                fmt: FloatFmt::F32,
                ftz: ins.has_flag("ftz"),
            };
            self.ins().float(cmp, &[c, z])
        } else {
            self.ins().icmp(IntCC::Sge, c, z)
        };
        let d = self.ins().select(p, a, b);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn mov(&mut self, ins: &Instruction) -> Option<()> {
        let (ty, signed) = self.bits_type(ins)?;
        if ins.vector().is_some() {
            return self.unsupported(ins, "vector moves are not supported");
        }
        let ops = self.ops(ins, 2)?;
        let it = ins.ty();
        match (&ops[0], &ops[1]) {
            // Pack: mov.b64 d, {lo, hi}.
            (d, Operand::Vector(items, _)) => {
                let n = items.len() as u32;
                let Some(et) = int_of_bits(ty.bits() / n.max(1)).filter(|_| n > 1) else {
                    return self.unsupported(ins, "unsupported pack");
                };
                let mut acc: Option<Value> = None;
                for (k, it_op) in items.iter().enumerate() {
                    let part = self.read(it_op, et, None)?;
                    let wide = self.ins().zext(ty, part);
                    let shifted = if k == 0 {
                        wide
                    } else {
                        let sh = self.iconst(Type::I32, i64::from(et.bits()) * k as i64);
                        self.ins().shl(wide, sh)
                    };
                    acc = Some(match acc {
                        None => shifted,
                        Some(a) => self.ins().binary(BinaryOp::Or, a, shifted),
                    });
                }
                let dst = self.dest1(d)?;
                self.write(dst, acc?, false, d.span())
            }
            // Unpack: mov.b64 {lo, hi}, s.
            (Operand::Vector(items, _), s) => {
                let n = items.len() as u32;
                let Some(et) = int_of_bits(ty.bits() / n.max(1)).filter(|_| n > 1) else {
                    return self.unsupported(ins, "unsupported unpack");
                };
                let v = self.read(s, ty, it)?;
                let dsts = self.dests(&ops[0])?;
                for (k, dst) in dsts.into_iter().enumerate() {
                    if dst.is_none() {
                        continue;
                    }
                    let part = if k == 0 {
                        v
                    } else {
                        let sh = self.iconst(Type::I32, i64::from(et.bits()) * k as i64);
                        self.ins().binary(BinaryOp::ShrU, v, sh)
                    };
                    let part = self.ins().trunc(et, part);
                    self.write(dst, part, false, items[k].span())?;
                }
                Some(())
            }
            (d, s) => {
                let v = self.read(s, ty, it)?;
                let dst = self.dest1(d)?;
                self.write(dst, v, signed, d.span())
            }
        }
    }

    fn cvt(&mut self, ins: &Instruction) -> Option<()> {
        let types = ins.type_mod_list();
        let (dt, st) = match types[..] {
            [d, s] => (d, s),
            [d] => (d, d),
            _ => return self.unsupported(ins, "unexpected types"),
        };
        let int = |t: ast::Type| {
            matches!(
                t.kind(),
                TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed
            ) && t.bits() <= 64
        };
        if !int(dt) || !int(st) {
            return self.unsupported(ins, "floating-point conversions are not in the IR yet");
        }
        self.reject_flags(ins, &["ftz", "relu", "satfinite", "pack"])?;
        let ops = self.ops(ins, 2)?;
        let (sty, dty) = (ir_type(st)?, ir_type(dt)?);
        // The source register may be wider than the source format: keep its low bits.
        let a = self.read(&ops[1], sty, Some(st))?;
        if ins.has_flag("sat") {
            // As ptxas 11.8: `.sat` is taken only where it can change the value.
            if !sat_can_clamp((st, sty), (dt, dty)) {
                return self.unsupported(
                    ins,
                    "integer cvt.sat needs a destination range that does not contain the source's",
                );
            }
            let v = self.int_saturate(a, (st, sty), (dt, dty));
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, v, dt.kind() == TypeKind::Signed, ops[0].span());
        }
        // Seed 6.5.1: widen by the source's signedness, chop to narrow, then (note 1) the
        // destination register is filled by the destination's signedness.
        let v = if dty.bits() > sty.bits() {
            if st.kind() == TypeKind::Signed {
                self.ins().sext(dty, a)
            } else {
                self.ins().zext(dty, a)
            }
        } else if dty.bits() < sty.bits() {
            self.ins().trunc(dty, a)
        } else {
            a
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, v, dt.kind() == TypeKind::Signed, ops[0].span())
    }

    /// `cvt.sat.dt.st` between integer types (PTX ISA 9.7.9.21: the source value, read by
    /// its own signedness, clamped to the destination type's range). Built as a clamp with
    /// min/max at the source's width (at least 32 bits), keeping only the bounds that can
    /// bite, then the (now in-range) value moved to the destination width: an extension by
    /// the source's signedness (a clamped value is never negative when the destination is
    /// unsigned) or a truncation. A 32-bit source is ptxas's one `I2I...SAT`
    /// ([`BitOp::SatCvt`], to at most 32 bits, then extended).
    fn int_saturate(
        &mut self,
        a: Value,
        (st, sty): (ast::Type, Type),
        (dt, dty): (ast::Type, Type),
    ) -> Value {
        let ssigned = st.kind() == TypeKind::Signed;
        let sbits = sty.bits();
        if sbits == 32 {
            // A 32-bit source: one I2I...SAT, as ptxas (to 64 bits, `cvt.sat.u64.s32`: to
            // .U32, then extended).
            let dsigned = dt.kind() == TypeKind::Signed;
            let op = BitOp::SatCvt {
                src_signed: ssigned,
                dst_bits: dty.bits().min(32) as u8,
                dst_signed: dsigned,
            };
            let v = self.ins().bits(op, &[a]);
            return match dty.bits() {
                32 => v,
                64 if dsigned => self.ins().sext(dty, v),
                64 => self.ins().zext(dty, v),
                _ => self.ins().trunc(dty, v),
            };
        }
        let (smin, smax) = int_range(st, sty);
        let (dmin, dmax) = int_range(dt, dty);
        let wty = if sbits > 32 { Type::I64 } else { Type::I32 };
        let mut v = a;
        if sty != wty {
            v = if ssigned {
                self.ins().sext(wty, v)
            } else {
                self.ins().zext(wty, v)
            };
        }
        if dmin > smin {
            // Only a signed source goes below the destination's minimum.
            let lo = self.iconst(wty, dmin as i64);
            v = self.clamp_step(wty, v, lo, IntCC::Slt, BinaryOp::MaxS);
        }
        if dmax < smax {
            let hi = self.iconst(wty, dmax as i64);
            let (cc, op) = if ssigned {
                (IntCC::Sgt, BinaryOp::MinS)
            } else {
                (IntCC::Ugt, BinaryOp::MinU)
            };
            v = self.clamp_step(wty, v, hi, cc, op);
        }
        if dty.bits() > wty.bits() {
            if ssigned {
                self.ins().sext(dty, v)
            } else {
                self.ins().zext(dty, v)
            }
        } else if dty.bits() < wty.bits() {
            self.ins().trunc(dty, v)
        } else {
            v
        }
    }

    /// One bound of a clamp: `op` (a min or max) on 32 bits; on 64 bits, where selection
    /// has no min/max, `bound` if `v cc bound` else `v`.
    fn clamp_step(&mut self, ty: Type, v: Value, bound: Value, cc: IntCC, op: BinaryOp) -> Value {
        if ty == Type::I64 {
            let out = self.ins().icmp(cc, v, bound);
            self.ins().select(out, bound, v)
        } else {
            self.ins().binary(op, v, bound)
        }
    }

    fn cvta(&mut self, ins: &Instruction) -> Option<()> {
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
    fn isspacep(&mut self, ins: &Instruction) -> Option<()> {
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
    pub(super) fn window_cmp(&mut self, top: Value, mask: Value, sp: Space, cc: IntCC) -> Value {
        let zero = self.iconst(Type::I64, 0);
        let base = self.ins().cvta(CvtaDir::ToGeneric, sp, Type::I64, zero);
        let base = self.ins().binary(BinaryOp::And, base, mask);
        self.ins().icmp(cc, top, base)
    }

    // -- memory --

    fn mem_space(&mut self, ins: &Instruction) -> Option<Space> {
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

    fn addr_type_for(&self, space: Space) -> Type {
        match space {
            Space::Global | Space::Generic => self.m.addr_type(),
            _ => Type::I32,
        }
    }

    /// The address of variable `sym` as seen by an access to `space`.
    fn var_addr(&mut self, n: &ast::Name, sym: &Sym, space: Space) -> Option<Value> {
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
    fn indexed(
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
    fn address(&mut self, op: &Operand, space: Space) -> Option<(Value, i32)> {
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
    fn access(&mut self, ins: &Instruction) -> Option<(Type, ast::Type, u8)> {
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

    fn load(&mut self, ins: &Instruction) -> Option<()> {
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

    fn store(&mut self, ins: &Instruction) -> Option<()> {
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
    fn cache_hint_operand(&mut self, ins: &Instruction, n: usize) -> Option<()> {
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
    fn cache_op(&mut self, ins: &Instruction, space: Space) -> Option<CacheOp> {
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

fn special(name: &str, comp: Option<ast::Component>) -> Option<SpecialReg> {
    let dim = || match comp? {
        ast::Component::X => Some(Dim::X),
        ast::Component::Y => Some(Dim::Y),
        ast::Component::Z => Some(Dim::Z),
        _ => None,
    };
    Some(match name {
        "%tid" => SpecialReg::Tid(dim()?),
        "%ntid" => SpecialReg::Ntid(dim()?),
        "%ctaid" => SpecialReg::Ctaid(dim()?),
        "%nctaid" => SpecialReg::Nctaid(dim()?),
        "%laneid" if comp.is_none() => SpecialReg::LaneId,
        "%warpid" if comp.is_none() => SpecialReg::WarpId,
        "%nwarpid" if comp.is_none() => SpecialReg::NWarpId,
        "%gridid" if comp.is_none() => SpecialReg::GridId,
        "%clock" if comp.is_none() => SpecialReg::Clock,
        "%smid" if comp.is_none() => SpecialReg::SmId,
        "%clock64" if comp.is_none() => SpecialReg::Clock64,
        "%lanemask_eq" if comp.is_none() => SpecialReg::LaneMask(LaneMask::Eq),
        "%lanemask_lt" if comp.is_none() => SpecialReg::LaneMask(LaneMask::Lt),
        "%lanemask_le" if comp.is_none() => SpecialReg::LaneMask(LaneMask::Le),
        "%lanemask_gt" if comp.is_none() => SpecialReg::LaneMask(LaneMask::Gt),
        "%lanemask_ge" if comp.is_none() => SpecialReg::LaneMask(LaneMask::Ge),
        _ if comp.is_some() => return None,
        "%nsmid" => SpecialReg::NSmId,
        "%dynamic_smem_size" => SpecialReg::DynamicSmemSize,
        "%total_smem_size" => SpecialReg::TotalSmemSize,
        "%globaltimer" => SpecialReg::GlobalTimer,
        "%globaltimer_lo" => SpecialReg::GlobalTimerLo,
        "%globaltimer_hi" => SpecialReg::GlobalTimerHi,
        _ => return numbered_special(name),
    })
}

/// `%envreg0..31`, `%pm0..7` and `%pm0_64..%pm7_64`.
fn numbered_special(name: &str) -> Option<SpecialReg> {
    let number = |s: &str, max: u8| s.parse::<u8>().ok().filter(|&n| n <= max);
    if let Some(n) = name.strip_prefix("%envreg") {
        return number(n, 31).map(SpecialReg::EnvReg);
    }
    let n = name.strip_prefix("%pm")?;
    match n.strip_suffix("_64") {
        Some(n) => number(n, 7).map(SpecialReg::Pm64),
        None => number(n, 7).map(SpecialReg::Pm),
    }
}

fn instr_name(i: &Instruction) -> String {
    let mut s = i.opcode.name().to_string();
    for m in &i.mods {
        s.push('.');
        s.push_str(&m.text());
    }
    s
}
