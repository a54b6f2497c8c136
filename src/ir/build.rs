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
//!
//! # Files of this module
//!
//! - `module.rs`: Module-scope variables.
//! - `plan.rs`: The block plan.
//! - `scope.rs`: Registers and scopes.
//! - `ssa.rs`: SSA construction after Braun et al.
//! - `operand.rs`: Operands.
//! - `int.rs`: Integer, predicate and data-movement instructions.
//! - `mem.rs`: Addresses and memory.

mod module;
use module::*;
mod plan;
use plan::*;
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
mod int;
mod mem;
mod mma;
mod operand;
mod scope;
mod ssa;
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

mod istypep;
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
        outlined: calls::Outlined::default(),
        object_calls: HashSet::default(),
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
    let mut dropped: Vec<String> = Vec::new();
    let funcs = calls::function_table(module);
    m.subs = calls::subroutine_set(module, &funcs, false);
    // Under `-c` the object's functions are roots too; the recursive functions only they
    // reach are built for them alone, and one that fails is dropped, not fatal.
    let object_only: HashSet<String> = if opts.any_extern {
        calls::subroutine_set(module, &funcs, true)
            .into_iter()
            .filter(|f| !m.subs.contains(f))
            .collect()
    } else {
        HashSet::default()
    };
    m.subs.extend(object_only.iter().cloned());
    m.outlined = calls::outlined_set(module, &funcs, &m.subs, &m.fn_ids);
    m.subs.extend(m.outlined.all.iter().cloned());
    m.ir.outlined = m.outlined.all.iter().cloned().collect();
    m.ir.outlined.sort();
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
                Err(_) if object_only.contains(f.name.text.as_str()) => {
                    dropped.push(f.name.text.to_string());
                    continue;
                }
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
                // Its `.local` variables lie in each activation's frame (R1 moves with
                // every call; `driver::compile_subroutine`, `ir::eval`'s call frames).
                m.ir.subroutines.push(func);
                true
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
        if !built && object_only.contains(f.name.text.as_str()) {
            m.errors.truncate(before);
            failed.pop();
            dropped.push(f.name.text.to_string());
            continue;
        }
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
    if opts.any_extern {
        drop_object_subroutines(&mut m, &funcs, dropped);
        build_object_functions(&mut m, module, &module_regs, &funcs, opts);
    }
    Partial {
        module: m.ir,
        failed,
        errors: m.errors,
        declaration_errors,
        failed_errors,
    }
}

/// Under `--compile-only`: every `.visible .func` with a body, built once more as a function
/// of the object, with the call ABI's [`calls::ExternSig`] as a subroutine is (arguments from
/// R4, result in R4), into [`Module::object_functions`], so that other objects can call it
/// (nvlink resolves their `JCAL`s to it). Calls inside this module's kernels still inline it;
/// the object's functions call the large ones (`calls::object_calls`: `JCAL` against the
/// callee's own symbol, as ptxas does) and inline the others. One that cannot be built so
/// (a `.reg` parameter, more arguments than R4..R15) is left out with its reason in
/// [`Module::object_function_skips`] (the driver warns) rather than failing the object:
/// nothing in this module needs it. The calls are decided before any is built; a callee
/// that then fails to build is inlined again, and its callers are built once more.
fn build_object_functions(
    m: &mut ModuleBuilder<'_>,
    module: &ast::Module,
    module_regs: &[&ast::VarDecl],
    funcs: &HashMap<&str, &ast::Function>,
    opts: &BuildOptions,
) {
    let mut candidates: HashSet<String> = HashSet::default();
    for f in module.functions() {
        let chosen = funcs
            .get(f.name.text.as_str())
            .is_some_and(|&g| std::ptr::eq(g, f));
        if f.body.is_some()
            && f.kind == ast::FuncKind::Func
            && chosen
            && f.linkage.contains(&ast::Linkage::Visible)
            && calls::ExternSig::of(f).is_ok()
        {
            candidates.insert(f.name.text.to_string());
        }
    }
    let calls = calls::object_calls(module, funcs, &m.subs, &m.fn_ids, &candidates);
    m.object_calls = calls;
    loop {
        m.ir.object_functions.clear();
        m.ir.object_function_skips.clear();
        build_object_functions_once(m, module, module_regs, funcs, opts);
        let before = m.object_calls.len();
        let skips = &m.ir.object_function_skips;
        m.object_calls
            .retain(|f| !skips.iter().any(|(name, _)| name == f));
        if m.object_calls.len() == before {
            break;
        }
    }
    m.object_calls.clear();
}

/// One pass of [`build_object_functions`] with the calls `m.object_calls` decided.
fn build_object_functions_once(
    m: &mut ModuleBuilder<'_>,
    module: &ast::Module,
    module_regs: &[&ast::VarDecl],
    funcs: &HashMap<&str, &ast::Function>,
    opts: &BuildOptions,
) {
    for f in module.functions() {
        let Some(body) = &f.body else { continue };
        let chosen = funcs
            .get(f.name.text.as_str())
            .is_some_and(|&g| std::ptr::eq(g, f));
        if f.kind != ast::FuncKind::Func || !chosen || !f.linkage.contains(&ast::Linkage::Visible) {
            continue;
        }
        let name = f.name.text.to_string();
        let sig = match calls::ExternSig::of(f) {
            Ok(sig) => sig,
            Err(why) => {
                m.ir.object_function_skips.push((name, why));
                continue;
            }
        };
        let before = m.errors.len();
        let built = FnBuilder::run(m, f, body, module_regs, funcs, Some(&sig));
        let mut why: Vec<String> = m.errors.drain(before..).map(|e| e.message).collect();
        match built {
            Some(mut func) if why.is_empty() => {
                if opts.fmad {
                    super::contract::contract(&mut func);
                }
                m.ir.object_functions.push(func);
            }
            _ => {
                why.dedup();
                if why.is_empty() {
                    why.push("it could not be built".into());
                }
                m.ir.object_function_skips.push((name, why.join("; ")));
            }
        }
    }
}

/// Forget the object-only subroutines that could not be built (`dropped`), and those that
/// call one of them, directly or not (their `CAL` would have no target): the object's
/// functions that call them then try to inline them and are left out with that reason.
fn drop_object_subroutines(
    m: &mut ModuleBuilder<'_>,
    funcs: &HashMap<&str, &ast::Function>,
    mut dropped: Vec<String>,
) {
    let mut gone: HashSet<String> = HashSet::default();
    while let Some(f) = dropped.pop() {
        if !gone.insert(f.clone()) {
            continue;
        }
        m.subs.remove(&f);
        for (&caller, g) in funcs {
            let mut out = Vec::new();
            if let Some(b) = &g.body {
                calls::direct_callees(b, &mut out);
            }
            if m.subs.contains(caller) && out.contains(&f.as_str()) {
                dropped.push(caller.to_string());
            }
        }
    }
    m.ir.subroutines.retain(|s| !gone.contains(&s.name));
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
    /// A module `.samplerref` variable: its index in `Module::samplerrefs`.
    SamplerRef(u32),
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
    /// The large `.func`s kept as subroutines, and by which kernels
    /// (`calls::outlined_set`); they are in `subs` too.
    outlined: calls::Outlined,
    /// Under `--compile-only`, while the object's functions are built: the functions of the
    /// object they call (`JCAL`) rather than inline (`calls::object_calls`).
    object_calls: HashSet<String>,
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
}

// ---- the function builder ------------------------------------------------------------------

/// A PTX register variable (one per scalar register, one per element of a vector register).
type VarId = usize;

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
        let mut ordinal = 0;
        for p in f.params.iter().filter(|_| sub.is_none()) {
            let elem = p.ty.bits().div_ceil(8) * p.vector.unwrap_or(1);
            for d in &p.names {
                ordinal += 1;
                if p.ty == ast::Type::SamplerRef {
                    // A sampler the launch binds: no bytes of the parameter area
                    // (`crate::sampler`, "Samplers passed as kernel parameters").
                    let k = m.ir.samplerrefs.len() as u32;
                    m.ir.samplerrefs.push(crate::sampler::SamplerRef {
                        name: d.name.text.to_string(),
                        init: crate::sampler::SamplerInit::default(),
                        param: Some((f.name.text.to_string(), ordinal - 1)),
                    });
                    params.syms.insert(d.name.id, Sym::SamplerRef(k));
                    continue;
                }
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
        expander.object_calls = b.m.object_calls.clone();
        if f.kind == ast::FuncKind::Entry {
            // A kernel calls a large function as a subroutine only where it would otherwise
            // inline several copies (`calls::outlined_set`).
            let mine = b.m.outlined.by_kernel.get(f.name.text.as_str());
            expander
                .subs
                .retain(|g| !b.m.outlined.all.contains(g) || mine.is_some_and(|m| m.contains(g)));
        }
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

    fn inst_of(&self, v: Value) -> Inst {
        match self.func.values[v].def {
            ValueDef::Result(i, _) => i,
            ValueDef::Param(..) => unreachable!("undef constants are instruction results"),
        }
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
            Opcode::Suq => return self.suq(ins),
            Opcode::Tld4 => return self.tld4(ins),
            Opcode::Istypep => return self.istypep(ins),
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
