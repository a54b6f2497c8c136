//! Device-function calls, by inlining (part of `ir::build`).
//!
//! In: a kernel body whose `call` instructions name `.func` definitions of the same module.
//! Out: the flattened statement list of the kernel with every direct call replaced by the
//! callee's body between [`Item::CallBegin`] and [`Item::CallEnd`] markers, and, while the
//! builder walks that list, the SSA values that carry arguments and results across them.
//! The IR of a kernel is one function whose only calls are those of system functions.
//!
//! # Expansion ([`Expander`])
//!
//! Before the block plan is made, [`Expander::expand`] flattens the body like
//! `build::flatten`, and at each `call` flattens the callee's body in place (recursively,
//! so nested calls are inlined too). Each inlined body is a *frame* with its own number
//! (the kernel is frame 0): its labels are keyed by frame in the plan, so the same label in
//! two copies names two blocks, and its `ret` is a branch to the frame's return label, which
//! the `CallEnd` marker starts (`exit` still ends the thread). A guarded call (`@p call`)
//! branches over the whole copy to a join label after `CallEnd`.
//!
//! Calls of the *system functions* (`vprintf`, `malloc`, `free`, `__assertfail`: declared
//! without a body, resolved by the driver) stay calls: the expander leaves the `call` in
//! place and records its [`ExternSig`] (which registers of the sm_50 call ABI each argument
//! takes, docs/calls.md), and the builder ([`FnBuilder::extern_call`]) reads the argument
//! stores into those registers' values and makes an [`crate::ir::InstData::ExternCall`],
//! whose result it writes to the result store or register.
//!
//! Under `--compile-only` (`Expander::any_extern`) a call of any bodiless `.extern .func`
//! stays a call the same way (nvlink resolves it).
//!
//! # Subroutines (recursion)
//!
//! A `.func` on a cycle of direct calls ([`subroutine_set`]: direct or mutual recursion)
//! cannot be inlined. It is built once, on its own, as an IR function with
//! [`crate::ir::Function::subroutine`] set (`FnBuilder::run` with its [`ExternSig`]): its
//! parameters are the argument registers' bytes (the parameter in register `r` at offset
//! `4 * (r - 4)`), its result a store whose bytes its `ret` returns as the ABI's result
//! words ([`crate::ir::InstData::SubReturn`], `FnBuilder::frame0_ret`). Every call of it,
//! from a kernel or from another subroutine, stays a call exactly like a system call (an
//! `ExternCall` naming it); `ir::Module::subroutines` holds it, and selection and the
//! driver make the call a `CAL` to its code placed after the kernel's. Refused in such a
//! function: `.reg` parameters or results, `.local` variables (each activation would need
//! its own), more arguments than R4..R15 hold.
//!
//! # Function addresses and indirect calls
//!
//! A `.func` whose address the module takes has a value ([`function_ids`]: 8, 16, ..., in
//! module order): `mov.u64 %rd, f` is that constant, and so is `f` in an initializer. A call
//! through a register (`call (r), %rd, (args), proto;`) is expanded into one inlined copy of
//! every address-taken function whose parameter and result sizes are the `.callprototype`'s
//! (or of every function its `.calltargets` lists); each copy is a [`CallSite`] with
//! [`CallSite::dispatch`] set, entered only when the pointer equals the function's value, and
//! otherwise skipped to its join like a guarded call. A pointer that holds no candidate's
//! value calls nothing (PTX: undefined).
//!
//! `brx.idx idx, table` ([`FnBuilder::brx`]) is a chain of compares to the labels of its
//! `.branchtargets` table, which the expander records by instruction (so that the block plan
//! counts each label's incoming edges).
//!
//! Refused with a diagnostic at the `call`: recursion through a function pointer (the callee
//! is already being inlined), indirect calls no address-taken function fits,
//! other callees with no body (a whole program links nothing else: ptxas says "Unresolved
//! extern function"), system calls whose arguments need more than R4..R15, nesting deeper
//! than [`MAX_DEPTH`], and kernels that inlining would make longer than [`MAX_INSTRS`]
//! instructions.
//!
//! # Scopes and fresh names
//!
//! At `CallBegin` the builder sets the caller's scope stack aside and gives the callee a new
//! one holding only its parameters; the callee's `{ }` scopes then declare its registers
//! afresh, so every inlined copy has its own variables (and so its own SSA names), and a
//! callee cannot see the caller's registers. Addressable variables a callee declares
//! (`.local` arrays, `__local_depot` stacks) become module variables named
//! `kernel.callee.name` (numbered when a second copy exists), one per copy. `CallEnd`
//! restores the caller's scopes.
//!
//! # Parameters
//!
//! A `.param` variable declared in a body (the call sequence's `param0`, `retval0`) and a
//! callee's `.param` parameter are an [`ArgStore`]: bytes with no address, kept in SSA
//! variables. A store is cut into *slots* (disjoint byte ranges, each one register
//! variable) when it is first touched: an access of 1, 2, 4 or 8 bytes covering only
//! untouched bytes makes one slot, so the usual `st.param.b64 [param0], %rd1` /
//! `ld.param.u64 %rd2, [foo_param_0]` pair is one variable and costs no instruction. Any other
//! overlap (byte-wise struct copies read back as words, and the reverse) is composed with
//! shifts, masks and ors over the slots it touches, which is always exact. The callee's
//! parameter names are bound to the caller's argument stores (no copy); a register or
//! immediate argument is first written into a fresh store. `.reg` parameters and results
//! (`.func (.reg .b32 %r) f(.reg .b32 %a)`) are fresh register variables assigned at
//! `CallBegin` (arguments) and read at `CallEnd` (results). A `.param` variable whose address is
//! taken (`mov.u64 %rd, param0`) is refused: it has none.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{
    ast, int_of_bits, ir_type, Block, Dests, FnBuilder, Item, Plan, Scope, Sym, Type, VarId,
};
use crate::error::Span;
use crate::ir::{BinaryOp, Value, VarScope};
use crate::ptx::ast::{Instruction, NameText, Opcode, Operand, StateSpace};

/// The label key of a frame's return point (a space cannot occur in a PTX label).
pub(super) const RET_LABEL: &str = " ret";
/// The label key of the join after a guarded call.
pub(super) const JOIN_LABEL: &str = " join";
/// Calls nested deeper than this are refused.
pub(super) const MAX_DEPTH: usize = 32;
/// A kernel that inlining would make longer than this many instructions is refused.
pub(super) const MAX_INSTRS: usize = 200_000;

/// One inlined call.
#[derive(Clone, Copy)]
pub(super) struct CallSite<'a> {
    /// The frame number of the callee's copy (1 and up).
    pub frame: usize,
    pub ins: &'a Instruction,
    pub callee: &'a ast::Function,
    /// For one copy of an indirect call: the callee's value ([`function_ids`]); the copy is
    /// entered only when the call's pointer equals it (like a guarded call).
    pub dispatch: Option<u64>,
}

impl CallSite<'_> {
    /// Whether the copy may be skipped: a guarded call, or one candidate of an indirect one.
    pub fn guarded(&self) -> bool {
        self.ins.guard.is_some() || self.dispatch.is_some()
    }
}

/// The `.func` definitions of a module by name: a definition with a body wins over a
/// declaration, a strong definition over a `.weak` one.
pub(super) fn function_table(module: &ast::Module) -> HashMap<&str, &ast::Function> {
    let mut t: HashMap<&str, &ast::Function> = HashMap::default();
    for f in module.functions() {
        if f.kind != ast::FuncKind::Func {
            continue;
        }
        let rank = |f: &ast::Function| {
            u8::from(f.body.is_some()) * 2 + u8::from(!f.linkage.contains(&ast::Linkage::Weak))
        };
        match t.get(f.name.text.as_str()) {
            Some(old) if rank(old) >= rank(f) => {}
            _ => {
                t.insert(&f.name.text, f);
            }
        }
    }
    t
}

/// The value of each `.func` whose address the module takes (a name used as a value by an
/// instruction other than a direct `call`, or in an initializer), in module order: 8, 16,
/// 24, ... (never 0, which PTX code compares function pointers with). A function pointer
/// is only ever compared or called, so any distinct values do; see the module essay.
pub(super) fn function_ids(module: &ast::Module) -> HashMap<String, u64> {
    let defined: Vec<&str> = module
        .functions()
        .filter(|f| f.kind == ast::FuncKind::Func && f.body.is_some())
        .map(|f| f.name.text.as_str())
        .collect();
    let mut taken: Vec<&str> = Vec::new();
    fn init_names<'a>(i: &'a ast::Init, out: &mut Vec<&'a str>) {
        match i {
            ast::Init::Addr { name, .. } => out.push(name.text.as_str()),
            ast::Init::List(v, _) => v.iter().for_each(|x| init_names(x, out)),
            _ => {}
        }
    }
    fn operand_names<'a>(o: &'a Operand, out: &mut Vec<&'a str>) {
        match o {
            Operand::Name(n) => out.push(n.text.as_str()),
            Operand::List(v, _) => v.iter().for_each(|x| operand_names(x, out)),
            _ => {}
        }
    }
    fn block_names<'a>(b: &'a ast::Block, out: &mut Vec<&'a str>) {
        for st in &b.stmts {
            match st {
                ast::Statement::Instr(i) => {
                    // A direct call names its callee first (after the result list).
                    let callee = (i.opcode == Opcode::Call)
                        .then(|| {
                            i.operands
                                .iter()
                                .position(|o| !matches!(o, Operand::List(..)))
                        })
                        .flatten();
                    for (k, o) in i.operands.iter().enumerate() {
                        if Some(k) != callee {
                            operand_names(o, out);
                        }
                    }
                }
                ast::Statement::Block(inner) => block_names(inner, out),
                ast::Statement::Var(v) => {
                    for n in &v.names {
                        if let Some(i) = &n.init {
                            init_names(i, out);
                        }
                    }
                }
                ast::Statement::Targets {
                    calls: true,
                    targets,
                    ..
                } => out.extend(targets.iter().map(|t| t.text.as_str())),
                _ => {}
            }
        }
    }
    for item in &module.items {
        let mut names = Vec::new();
        match item {
            ast::Item::Var(v) => {
                for n in &v.names {
                    if let Some(i) = &n.init {
                        init_names(i, &mut names);
                    }
                }
            }
            ast::Item::Function(f) => {
                if let Some(b) = &f.body {
                    block_names(b, &mut names);
                }
            }
            _ => {}
        }
        for n in names {
            if let Some(&d) = defined.iter().find(|&&d| d == n) {
                if !taken.contains(&d) {
                    taken.push(d);
                }
            }
        }
    }
    // In module order, so that the values do not depend on where the first use is.
    let mut ids = HashMap::default();
    let mut k = 0u64;
    for d in defined {
        if taken.contains(&d) && !ids.contains_key(d) {
            k += 1;
            ids.insert(d.to_string(), 8 * k);
        }
    }
    ids
}

/// Flattens a body with calls inlined; see the module essay.
pub(super) struct Expander<'a, 't> {
    /// Any bodiless `.extern .func` may be called (a relocatable object), not only the
    /// system functions.
    any_extern: bool,
    pub funcs: &'t HashMap<&'a str, &'a ast::Function>,
    /// [`function_ids`]: the candidates of an indirect call, and their values.
    pub fn_ids: &'t HashMap<String, u64>,
    /// The `.callprototype`s and `.calltargets` declared so far: (result sizes, parameter
    /// sizes), or the listed functions.
    protos: HashMap<&'a str, Proto<'a>>,
    /// Refused calls: where, and why.
    pub errors: Vec<(Span, String)>,
    next_frame: usize,
    /// The functions being inlined, outermost first.
    stack: Vec<&'a str>,
    instrs: usize,
    /// The calls of system functions left as calls, by the address of their `call`
    /// instruction (the builder makes an [`crate::ir::InstData::ExternCall`] of each).
    pub externs: HashMap<usize, ExternSig>,
    /// The `.branchtargets` declared so far, by name.
    branch_tables: HashMap<&'a str, Vec<NameText>>,
    /// Each `brx.idx`'s labels (its `.branchtargets`), by the address of its instruction.
    pub brx_targets: HashMap<usize, Vec<NameText>>,
    /// The `.func`s compiled as subroutines ([`subroutine_set`]): calls of them stay calls.
    pub subs: HashSet<String>,
}

impl<'a, 't> Expander<'a, 't> {
    pub fn new(
        funcs: &'t HashMap<&'a str, &'a ast::Function>,
        fn_ids: &'t HashMap<String, u64>,
        any_extern: bool,
    ) -> Self {
        Expander {
            any_extern,
            funcs,
            fn_ids,
            protos: HashMap::default(),
            errors: Vec::new(),
            next_frame: 1,
            stack: Vec::new(),
            instrs: 0,
            externs: HashMap::default(),
            branch_tables: HashMap::default(),
            brx_targets: HashMap::default(),
            subs: HashSet::default(),
        }
    }

    pub fn expand(&mut self, b: &'a ast::Block, out: &mut Vec<Item<'a>>) {
        out.push(Item::Enter);
        for s in &b.stmts {
            match s {
                ast::Statement::Var(v) => out.push(Item::Decl(v)),
                ast::Statement::Label(n) => out.push(Item::Label(n)),
                ast::Statement::Instr(i) if i.opcode == Opcode::Call => self.call(i, out),
                ast::Statement::Instr(i) => {
                    if i.opcode == Opcode::Brx {
                        let table = match i.operands.get(1) {
                            Some(Operand::Name(t)) => self.branch_tables.get(t.text.as_str()),
                            _ => None,
                        };
                        if let Some(labels) = table {
                            self.brx_targets
                                .insert(i as *const Instruction as usize, labels.clone());
                        }
                    }
                    self.instrs += 1;
                    out.push(Item::Instr(i));
                }
                ast::Statement::Targets {
                    name,
                    calls: false,
                    targets,
                    ..
                } => {
                    let labels = targets.iter().map(|t| t.text.clone()).collect();
                    self.branch_tables.insert(name.text.as_str(), labels);
                }
                ast::Statement::Block(inner) => self.expand(inner, out),
                ast::Statement::Prototype {
                    name, rets, params, ..
                } => {
                    let sizes = |v: &'a [ast::VarDecl]| -> Vec<u32> {
                        v.iter()
                            .flat_map(|d| d.names.iter().map(move |n| decl_size(d, n)))
                            .collect()
                    };
                    let r = rets.as_deref().map(sizes).unwrap_or_default();
                    self.protos
                        .insert(name.text.as_str(), Proto::Sig(r, sizes(params)));
                }
                ast::Statement::Targets {
                    name,
                    calls: true,
                    targets,
                    ..
                } => {
                    let t = targets.iter().map(|t| t.text.as_str()).collect();
                    self.protos.insert(name.text.as_str(), Proto::Targets(t));
                }
                _ => {}
            }
        }
        out.push(Item::Exit);
    }

    fn refuse(&mut self, span: Span, msg: String) {
        self.errors.push((span, msg));
    }

    fn call(&mut self, ins: &'a Instruction, out: &mut Vec<Item<'a>>) {
        let Some(Operand::Name(target)) = ins
            .operands
            .iter()
            .find(|o| !matches!(o, Operand::List(..)))
        else {
            return self.refuse(ins.span, "unsupported call: no callee operand".into());
        };
        let Some(&callee) = self.funcs.get(target.text.as_str()) else {
            return self.indirect(ins, target, out);
        };
        let external = callee.linkage.contains(&ast::Linkage::Extern) && self.any_extern;
        let sub = callee.body.is_some() && self.subs.contains(target.text.as_str());
        if sub || (callee.body.is_none() && (external || is_system_function(&target.text))) {
            match ExternSig::of(callee) {
                Ok(sig) => {
                    self.instrs += 1;
                    self.externs.insert(ins as *const Instruction as usize, sig);
                    out.push(Item::Instr(ins));
                }
                Err(why) => self.refuse(target.span, why),
            }
            return;
        }
        let Some(body) = &callee.body else {
            return self.refuse(
                target.span,
                format!(
                    "unsupported call to '{}': it is declared without a body, and a whole program may leave only the system functions vprintf, malloc, free and __assertfail unresolved (ptxas: \"Unresolved extern function\")",
                    target.text
                ),
            );
        };
        if let Some(at) = self.stack.iter().position(|&f| f == target.text) {
            let mut chain: Vec<&str> = self.stack[at..].to_vec();
            chain.push(&target.text);
            return self.refuse(
                target.span,
                format!(
                    "unsupported recursive call to '{}' ({}): leafold inlines calls and cannot inline recursion",
                    target.text,
                    chain.join(" -> ")
                ),
            );
        }
        if self.stack.len() >= MAX_DEPTH {
            return self.refuse(
                target.span,
                format!(
                    "unsupported call to '{}': calls nested deeper than {MAX_DEPTH} are not inlined",
                    target.text
                ),
            );
        }
        if self.instrs > MAX_INSTRS {
            return self.refuse(
                target.span,
                format!(
                    "unsupported call to '{}': inlining makes the kernel longer than {MAX_INSTRS} instructions",
                    target.text
                ),
            );
        }
        self.inline(ins, callee, body, None, out);
    }

    /// One inlined copy of `callee` at `ins` (under `dispatch`, see [`CallSite::dispatch`]).
    fn inline(
        &mut self,
        ins: &'a Instruction,
        callee: &'a ast::Function,
        body: &'a ast::Block,
        dispatch: Option<u64>,
        out: &mut Vec<Item<'a>>,
    ) {
        let site = CallSite {
            frame: self.next_frame,
            ins,
            callee,
            dispatch,
        };
        self.next_frame += 1;
        out.push(Item::CallBegin(site));
        self.stack.push(&callee.name.text);
        self.expand(body, out);
        self.stack.pop();
        out.push(Item::CallEnd(site));
        if site.guarded() {
            out.push(Item::CallJoin(site.frame));
        }
    }

    /// `call (r), %rd, (args), proto;`: a copy of every function the pointer may hold (its
    /// address is taken and its signature is the prototype's, or it is one of the listed
    /// `.calltargets`), each entered only when the pointer equals its value.
    fn indirect(&mut self, ins: &'a Instruction, target: &'a ast::Name, out: &mut Vec<Item<'a>>) {
        if ins.guard.is_some() {
            return self.refuse(
                ins.span,
                "unsupported guarded indirect call (branch around it instead)".into(),
            );
        }
        let proto = match ins.operands.last() {
            Some(Operand::Name(p)) => self.protos.get(p.text.as_str()).cloned(),
            _ => None,
        };
        let Some(proto) = proto else {
            return self.refuse(
                target.span,
                format!(
                    "unsupported indirect call through '{}': no .callprototype or .calltargets names its callees",
                    target.text
                ),
            );
        };
        let sizes = |v: &[ast::VarDecl]| -> Vec<u32> {
            v.iter()
                .flat_map(|d| d.names.iter().map(move |n| decl_size(d, n)))
                .collect()
        };
        let mut candidates: Vec<(&'a ast::Function, u64)> = Vec::new();
        let mut names: Vec<&str> = self.fn_ids.keys().map(String::as_str).collect();
        names.sort_by_key(|n| self.fn_ids[*n]);
        for name in names {
            let Some(&f) = self.funcs.get(name) else {
                continue;
            };
            let fits = match &proto {
                Proto::Sig(r, p) => {
                    sizes(&f.params) == *p && f.rets.as_deref().map(sizes).unwrap_or_default() == *r
                }
                Proto::Targets(t) => t.contains(&name),
            };
            if fits && f.body.is_some() {
                candidates.push((f, self.fn_ids[name]));
            }
        }
        if candidates.is_empty() {
            return self.refuse(
                target.span,
                format!(
                    "unsupported indirect call through '{}': no function whose address the module takes fits its prototype",
                    target.text
                ),
            );
        }
        for (f, id) in candidates {
            if self.stack.iter().any(|&g| g == f.name.text) {
                return self.refuse(
                    target.span,
                    format!(
                        "unsupported recursive indirect call (through '{}', possibly to '{}'): leafold inlines calls and cannot inline recursion",
                        target.text, f.name.text
                    ),
                );
            }
            if let Some(body) = &f.body {
                self.inline(ins, f, body, Some(id), out);
            }
        }
    }
}

/// What an indirect call's last operand names.
#[derive(Clone)]
enum Proto<'a> {
    /// A `.callprototype`: result and parameter sizes.
    Sig(Vec<u32>, Vec<u32>),
    /// A `.calltargets` list.
    Targets(Vec<&'a str>),
}

/// The bytes of one `.param` variable of a body or callee; see the module essay.
pub(super) struct ArgStore {
    size: u32,
    /// Disjoint slots, in creation order.
    slots: Vec<Slot>,
}

#[derive(Clone, Copy)]
struct Slot {
    off: u32,
    bytes: u32,
    var: VarId,
}

/// Where a result of an inlined call comes from, or goes to.
#[derive(Clone, Copy)]
enum Place {
    Var(VarId),
    /// A whole store of this many bytes.
    Store(usize, u32),
}

/// An inlined call being walked.
pub(super) struct Frame {
    id: usize,
    saved_scopes: Vec<Scope>,
    saved_prefix: String,
    /// Where the callee's own variables go in the shared layout.
    scope: VarScope,
    /// Results: copied from the first place to the second at `CallEnd`.
    rets: Vec<(Place, Place)>,
    /// The stack pointer at `CallBegin` when the callee has `alloca`: restored at `CallEnd`,
    /// so that what the callee allocated is released when it returns, as a real call's
    /// frame is (ptxas 11.8 resets R1 at the callee's return).
    saved_sp: Option<Value>,
}

/// Whether a body has an `alloca` (outside nested calls, which release their own).
fn has_alloca(b: &ast::Block) -> bool {
    b.stmts.iter().any(|s| match s {
        ast::Statement::Instr(i) => i.opcode == Opcode::Alloca,
        ast::Statement::Block(b) => has_alloca(b),
        _ => false,
    })
}

/// The size in bytes of one declarator of a parameter declaration.
pub(super) fn decl_size(d: &ast::VarDecl, n: &ast::Declarator) -> u32 {
    let elem = d.ty.bits().div_ceil(8) * d.vector.unwrap_or(1);
    let count: u64 = n.resolved_dims().iter().map(|x| x.unwrap_or(0)).product();
    u32::try_from(u64::from(elem).saturating_mul(count)).unwrap_or(u32::MAX)
}

impl FnBuilder<'_, '_> {
    /// The frame being walked (0: the kernel itself).
    pub(super) fn frame_id(&self) -> usize {
        self.frames.last().map_or(0, |f| f.id)
    }

    /// A new `.param` store of `size` bytes.
    pub(super) fn new_store(&mut self, size: u32) -> Sym {
        self.stores.push(ArgStore {
            size,
            slots: Vec::new(),
        });
        Sym::Arg {
            store: self.stores.len() - 1,
        }
    }

    /// The store and byte offset an `ld.param`/`st.param` address names, if it names one.
    pub(super) fn arg_operand(&mut self, op: &Operand) -> Option<(usize, i64)> {
        let Operand::Address(ast::AddrExpr {
            base: Some(n),
            offset,
            ..
        }) = op
        else {
            return None;
        };
        match self.lookup(n) {
            Some(Err(Sym::Arg { store })) => Some((store, *offset)),
            _ => None,
        }
    }

    /// `ret` inside an inlined callee: a branch to the frame's return point.
    pub(super) fn frame_ret(
        &mut self,
        ins: &Instruction,
        guard: Option<(Value, bool)>,
        plan: &Plan,
        fall: Option<Block>,
    ) -> Option<()> {
        let Some(&target) = plan
            .labels
            .get(&(self.frame_id(), NameText::new(RET_LABEL)))
        else {
            self.error(
                ins.span,
                "internal error: no return point for an inlined call",
            );
            return None;
        };
        self.call_branch(ins.span, target, guard, fall)
    }

    /// Jump to `target`, or branch there when the guard holds and fall through otherwise.
    fn call_branch(
        &mut self,
        span: Span,
        target: Block,
        guard: Option<(Value, bool)>,
        fall: Option<Block>,
    ) -> Option<()> {
        match (guard, fall) {
            (None, _) => self.terminate_jump(target),
            (Some((p, false)), Some(fall)) => self.brif(p, target, fall),
            (Some((p, true)), Some(fall)) => self.brif(p, fall, target),
            (Some(_), None) => {
                self.error(span, "internal error: no fall-through block");
                return None;
            }
        }
        Some(())
    }

    /// Enter an inlined callee: bind its parameters and results, branch over it when the
    /// call is guarded, and give it its own scopes.
    pub(super) fn call_begin(&mut self, site: &CallSite<'_>, plan: &Plan, fall: Option<Block>) {
        let mut scope = Scope::default();
        let rets = self.arg_bind(site, &mut scope).unwrap_or_default();
        if let Some(id) = site.dispatch {
            let join = plan
                .labels
                .get(&(site.frame, NameText::new(JOIN_LABEL)))
                .copied();
            let ptr = site
                .ins
                .operands
                .iter()
                .find(|o| !matches!(o, Operand::List(..)))
                .and_then(|o| self.read(o, Type::I64, None));
            if let (Some(ptr), Some(join), Some(fall)) = (ptr, join, fall) {
                let want = self.ins().iconst(Type::I64, id as i64);
                let p = self.ins().icmp(crate::ir::IntCC::Eq, ptr, want);
                self.brif(p, fall, join);
            }
        }
        if let Some(g) = &site.ins.guard {
            let join = plan
                .labels
                .get(&(site.frame, NameText::new(JOIN_LABEL)))
                .copied();
            let p = self.reg_var(&g.pred).map(|v| (self.use_var(v), v));
            match (p, join, fall) {
                (Some((p, v)), Some(join), Some(fall)) if self.var_ty[v] == Type::Pred => {
                    // Skip the copy (and its result copies) when the guard fails.
                    if g.negated {
                        self.brif(p, join, fall);
                    } else {
                        self.brif(p, fall, join);
                    }
                }
                (Some(_), ..) => {
                    self.error(g.pred.span, format!("'{}' is not a predicate", g.pred.text))
                }
                (None, ..) => {}
            }
        }
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        self.scopes_changed();
        let prefix = format!("{}.{}", self.kernel, site.callee.name.text);
        let saved_prefix = std::mem::replace(&mut self.kernel, prefix);
        let order = self
            .m
            .func_order
            .get(site.callee.name.text.as_str())
            .copied();
        let saved_sp = site
            .callee
            .body
            .as_ref()
            .filter(|b| has_alloca(b))
            .map(|_| self.ins().stack_save(Type::I32));
        self.frames.push(Frame {
            id: site.frame,
            saved_scopes,
            saved_prefix,
            scope: VarScope::Callee(order.unwrap_or(u32::MAX)),
            rets,
            saved_sp,
        });
    }

    /// Where a variable declared now belongs: the kernel's body or the innermost callee's.
    pub(super) fn frame_scope(&self) -> VarScope {
        self.frames.last().map_or(self.own_scope, |f| f.scope)
    }

    /// Leave an inlined callee: restore the caller's scopes and copy the results.
    pub(super) fn call_end(&mut self, site: &CallSite<'_>) {
        let Some(frame) = self.frames.pop() else {
            self.error(site.ins.span, "internal error: unbalanced inlined call");
            return;
        };
        self.scopes = frame.saved_scopes;
        self.scopes_changed();
        self.kernel = frame.saved_prefix;
        if let Some(sp) = frame.saved_sp {
            self.ins().stack_restore(sp);
        }
        for (from, to) in frame.rets {
            let v = match from {
                Place::Var(var) => Some(self.use_var(var)),
                Place::Store(s, size) => self.arg_read(s, 0, size, site.ins.span),
            };
            let Some(v) = v else { continue };
            match to {
                Place::Var(var) => {
                    let _ = self.write(Some(var), v, false, site.ins.span);
                }
                Place::Store(s, size) => {
                    let _ = self.arg_write(s, 0, size, v, site.ins.span);
                }
            }
        }
    }

    /// Bind the callee's parameter names in `scope` (arguments are read in the caller's
    /// scopes, which are still current) and plan the result copies.
    fn arg_bind(&mut self, site: &CallSite<'_>, scope: &mut Scope) -> Option<Vec<(Place, Place)>> {
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
                scope.regs.insert(n.name.id, super::RegInfo::one(info));
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
                scope.regs.insert(n.name.id, super::RegInfo::one(var));
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
    fn arg_store(&mut self, arg: &Operand, bytes: u32, ptx_ty: Option<ast::Type>) -> Option<usize> {
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
    fn arg_reg_param(&mut self, d: &ast::VarDecl, n: &ast::Declarator) -> Option<VarId> {
        match ir_type(d.ty) {
            Some(ty) if d.vector.is_none() && n.dims.is_empty() => Some(self.new_var(ty)),
            _ => {
                self.error(n.name.span, format!("unsupported register parameter '{}' (only scalar integer, bit and predicate registers)", n.name.text));
                None
            }
        }
    }

    /// The slots covering `[off, off+bytes)` of a store, making slots for untouched bytes.
    fn arg_slots(&mut self, s: usize, off: u32, bytes: u32, ty: Option<Type>) -> Vec<Slot> {
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

    fn arg_in_range(&mut self, s: usize, off: u32, bytes: u32, span: Span) -> Option<()> {
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

    fn arg_widen(&mut self, v: Value) -> Option<Value> {
        self.fit(v, Type::I64, false)
    }

    fn arg_shift(&mut self, op: BinaryOp, v: Value, bytes: u32) -> Value {
        if bytes == 0 {
            return v;
        }
        let k = self.iconst(Type::I32, i64::from(bytes * 8));
        self.ins().binary(op, v, k)
    }

    fn arg_mask(&mut self, bytes: u32) -> Value {
        let m = if bytes >= 8 {
            -1
        } else {
            (1i64 << (bytes * 8)) - 1
        };
        self.iconst(Type::I64, m)
    }

    /// Read `bytes` bytes at `off` of a store as an integer of that width.
    pub(super) fn arg_read(&mut self, s: usize, off: u32, bytes: u32, span: Span) -> Option<Value> {
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
    pub(super) fn arg_write(
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
    pub(super) fn load_arg(
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
    pub(super) fn store_arg(
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

/// The `.func`s compiled as real subroutines rather than inlined: those on a cycle of direct
/// calls (recursion, direct or mutual), which no amount of inlining can flatten, and which
/// a kernel of `module` reaches (an unused recursive function is not built, as before).
pub(super) fn subroutine_set(
    module: &ast::Module,
    funcs: &HashMap<&str, &ast::Function>,
) -> HashSet<String> {
    fn callees<'a>(b: &'a ast::Block, out: &mut Vec<&'a str>) {
        for st in &b.stmts {
            match st {
                ast::Statement::Instr(i) if i.opcode == Opcode::Call => {
                    if let Some(Operand::Name(n)) =
                        i.operands.iter().find(|o| !matches!(o, Operand::List(..)))
                    {
                        out.push(n.text.as_str());
                    }
                }
                ast::Statement::Block(inner) => callees(inner, out),
                _ => {}
            }
        }
    }
    let mut edges: HashMap<&str, Vec<&str>> = HashMap::default();
    for (&name, f) in funcs {
        let mut out = Vec::new();
        if let Some(b) = &f.body {
            callees(b, &mut out);
        }
        out.retain(|c| funcs.get(c).is_some_and(|g| g.body.is_some()));
        edges.insert(name, out);
    }
    // The functions the kernels reach.
    let mut work: Vec<&str> = Vec::new();
    for k in module.functions() {
        if let (ast::FuncKind::Entry, Some(b)) = (k.kind, &k.body) {
            callees(b, &mut work);
        }
    }
    let mut reached: HashSet<&str> = HashSet::default();
    while let Some(g) = work.pop() {
        if reached.insert(g) {
            work.extend(edges.get(g).into_iter().flatten().copied());
        }
    }
    // `f` is recursive when it can reach itself.
    let mut subs = HashSet::default();
    for &start in edges.keys().filter(|f| reached.contains(*f)) {
        let mut seen: HashSet<&str> = HashSet::default();
        let mut work: Vec<&str> = edges[start].clone();
        while let Some(g) = work.pop() {
            if g == start {
                subs.insert(start.to_string());
                break;
            }
            if seen.insert(g) {
                work.extend(edges.get(g).into_iter().flatten().copied());
            }
        }
    }
    subs
}

/// A `call`'s result and argument operand lists (`call (r), f, (a, b)`; empty when absent),
/// or `None` when it names no callee.
fn call_lists(ins: &Instruction) -> Option<(Vec<Operand>, Vec<Operand>)> {
    let ops = &ins.operands;
    let k = ops.iter().position(|o| !matches!(o, Operand::List(..)))?;
    let list = |o: Option<&Operand>| match o {
        Some(Operand::List(v, _)) => v.clone(),
        _ => Vec::new(),
    };
    let rets = if k > 0 {
        list(ops.get(k - 1))
    } else {
        Vec::new()
    };
    Some((rets, list(ops.get(k + 1))))
}

/// Whether item `i` is an unguarded `ret` that only scope ends separate from the end of its
/// inlined callee: it needs no branch, the return point follows.
pub(super) fn final_ret(items: &[Item<'_>], i: usize) -> bool {
    let Some(Item::Instr(ins)) = items.get(i) else {
        return false;
    };
    if ins.opcode != Opcode::Ret || ins.guard.is_some() {
        return false;
    }
    items[i + 1..]
        .iter()
        .find(|it| !matches!(it, Item::Exit))
        .is_some_and(|it| matches!(it, Item::CallEnd(_)))
}

/// The bodiless functions a whole-program cubin may call: the driver resolves them (ptxas
/// 11.8 refuses any other unresolved `.extern .func` with "Unresolved extern function").
pub(super) fn is_system_function(name: &str) -> bool {
    matches!(name, "vprintf" | "malloc" | "free" | "__assertfail")
}

/// Where a system function's parameters and result go under the sm_50 call ABI
/// (docs/calls.md): one entry per parameter, its size and first register.
#[derive(Clone, Debug)]
pub(super) struct ExternSig {
    pub name: String,
    /// Per parameter: (bytes, first register).
    pub params: Vec<(u32, u8)>,
    /// Bytes of the one result (0: none); its words are R4, R5, ..
    pub ret_bytes: u32,
}

impl ExternSig {
    /// The register layout of `f`'s parameters, as ptxas 11.8 lays them out: from R4 up, a
    /// parameter of one word takes the lowest free register (filling a hole an 8-aligned one
    /// left), a wider one the registers after the highest taken, starting at an even one when
    /// it is 8-aligned. Parameters past R15 (passed on the stack) are refused.
    pub fn of(f: &ast::Function) -> Result<ExternSig, String> {
        let name = f.name.text.to_string();
        let mut taken = [false; 16];
        let mut params = Vec::new();
        for d in &f.params {
            for n in &d.names {
                let bytes = decl_size(d, n);
                let words = bytes.div_ceil(4).max(1) as usize;
                let align = d.align.unwrap_or_else(|| (d.ty.bits() / 8).max(1));
                let first = if words == 1 {
                    (4..16).find(|&r| !taken[r])
                } else {
                    let after = (4..16).rev().find(|&r| taken[r]).map_or(4, |r| r + 1);
                    let start = if align >= 8 {
                        after.next_multiple_of(2)
                    } else {
                        after
                    };
                    (start + words <= 16).then_some(start)
                };
                let Some(first) = first else {
                    return Err(format!(
                        "unsupported call to '{name}': its arguments need more than the 12 argument registers R4..R15 (stack arguments are not supported)"
                    ));
                };
                taken[first..first + words]
                    .iter_mut()
                    .for_each(|t| *t = true);
                params.push((bytes, first as u8));
            }
        }
        let rets: Vec<u32> = f
            .rets
            .iter()
            .flatten()
            .flat_map(|d| d.names.iter().map(move |n| decl_size(d, n)))
            .collect();
        if rets.len() > 1 || rets.iter().any(|&b| b > 8) {
            return Err(format!(
                "unsupported call to '{name}': a result wider than 8 bytes, or more than one"
            ));
        }
        Ok(ExternSig {
            name,
            params,
            ret_bytes: rets.first().copied().unwrap_or(0),
        })
    }
}

impl FnBuilder<'_, '_> {
    /// `brx.idx idx, table;`: a jump to the `idx`-th label of the `.branchtargets` table, as a
    /// chain of compares (`idx == 0` to the first label, ..., anything else to the last: an
    /// index out of range is undefined in PTX).
    pub(super) fn brx(&mut self, ins: &Instruction, plan: &Plan) -> Option<()> {
        if ins.guard.is_some() {
            self.error(
                ins.span,
                "unsupported guarded brx.idx (branch around it instead)",
            );
            return None;
        }
        let Some(labels) = self
            .brx_targets
            .get(&(ins as *const Instruction as usize))
            .cloned()
        else {
            self.error(
                ins.span,
                "brx.idx needs a .branchtargets table declared before it in its body",
            );
            return None;
        };
        let plan_labels: Vec<Block> = {
            let frame = self.frame_id();
            let mut v = Vec::new();
            for l in &labels {
                let Some(&b) = plan.labels.get(&(frame, l.clone())) else {
                    self.error(ins.span, format!("unknown label '{l}'"));
                    return None;
                };
                v.push(b);
            }
            v
        };
        let idx = self.read(ins.operands.first()?, Type::I32, None)?;
        let (last, rest) = plan_labels.split_last()?;
        for (k, &target) in rest.iter().enumerate() {
            let kv = self.ins().iconst(Type::I32, k as i64);
            let p = self.ins().icmp(crate::ir::IntCC::Eq, idx, kv);
            let next = self.new_block(1);
            self.brif(p, target, next);
            self.switch_to(next);
        }
        self.terminate_jump(*last);
        Some(())
    }

    /// A `call` of a system function (the expander left it in place): the argument stores'
    /// words into the ABI's registers, an `ExternCall`, its result words into the result
    /// store or register.
    /// Building a subroutine: a store for its result (bound to the result's name), and its
    /// size; `None` when it returns nothing.
    pub(super) fn declare_sub_result(
        &mut self,
        f: &ast::Function,
        sig: &ExternSig,
    ) -> Option<Option<(usize, u32)>> {
        let Some((d, n)) = f
            .rets
            .iter()
            .flatten()
            .flat_map(|d| d.names.iter().map(move |n| (d, n)))
            .next()
        else {
            return Some(None);
        };
        if d.space == StateSpace::Reg {
            self.error(
                n.name.span,
                "unsupported: a .reg result of a recursive function",
            );
            return None;
        }
        let Sym::Arg { store } = self.new_store(sig.ret_bytes) else {
            return None;
        };
        self.scopes[0].syms.insert(n.name.id, Sym::Arg { store });
        Some(Some((store, sig.ret_bytes)))
    }

    /// `ret`/`exit` outside any inlined callee: the kernel's end, or a subroutine's `ret`,
    /// which returns the result store's bytes as the ABI's result words.
    pub(super) fn frame0_ret(&mut self, ins: &Instruction) -> Option<()> {
        let Some(result) = self.sub_ret.filter(|_| ins.opcode == Opcode::Ret) else {
            self.ins().ret();
            return Some(());
        };
        let words = match result {
            None => Vec::new(),
            Some((store, 8)) => vec![self.arg_read(store, 0, 8, ins.span)?],
            Some((store, 4)) => vec![self.arg_read(store, 0, 4, ins.span)?],
            Some((store, b @ (1 | 2))) => {
                let v = self.arg_read(store, 0, b, ins.span)?;
                vec![self.ins().zext(Type::I32, v)]
            }
            Some((_, b)) => {
                self.error(ins.span, format!("unsupported {b}-byte result"));
                return None;
            }
        };
        self.ins().sub_return(&words);
        Some(())
    }

    pub(super) fn extern_call(&mut self, ins: &Instruction) -> Option<()> {
        let Some(sig) = self
            .extern_sigs
            .get(&(ins as *const Instruction as usize))
            .cloned()
        else {
            self.error(
                ins.span,
                "internal error: a call left to the ABI has no signature",
            );
            return None;
        };
        let (ret_ops, arg_ops) = call_lists(ins)?;
        if arg_ops.len() != sig.params.len() {
            self.error(
                ins.span,
                format!(
                    "call to '{}' passes {} arguments, it takes {}",
                    sig.name,
                    arg_ops.len(),
                    sig.params.len()
                ),
            );
            return None;
        }
        let mut args = Vec::new();
        let mut regs = Vec::new();
        for (arg, &(bytes, first)) in arg_ops.iter().zip(&sig.params) {
            let store = self.arg_store(arg, bytes, None)?;
            if bytes == 8 {
                // A 64-bit argument (a pointer, a size): one read, split into its words.
                let v = self.arg_read(store, 0, 8, arg.span())?;
                args.push(v);
                regs.push(first);
                continue;
            }
            for w in 0..bytes.div_ceil(4) {
                let n = (bytes - 4 * w).min(4);
                // A 3-byte tail is read as a 2- and a 1-byte piece.
                let pieces: &[u32] = match n {
                    4 => &[4],
                    3 => &[2, 1],
                    2 => &[2],
                    _ => &[1],
                };
                let mut word = None;
                let mut at = 0;
                for &piece in pieces {
                    let v = self.arg_read(store, 4 * w + at, piece, arg.span())?;
                    let v = if piece < 4 {
                        self.ins().zext(Type::I32, v)
                    } else {
                        v
                    };
                    let v = if at > 0 {
                        let sh = self.ins().iconst(Type::I32, i64::from(at * 8));
                        self.ins().binary(BinaryOp::Shl, v, sh)
                    } else {
                        v
                    };
                    word = Some(match word {
                        None => v,
                        Some(w0) => self.ins().binary(BinaryOp::Or, w0, v),
                    });
                    at += piece;
                }
                args.push(word?);
                regs.push(first + w as u8);
            }
        }
        let callee = match self.m.ir.extern_funcs.iter().position(|n| *n == sig.name) {
            Some(i) => i,
            None => {
                self.m.ir.extern_funcs.push(sig.name.clone());
                self.m.ir.extern_funcs.len() - 1
            }
        } as u32;
        let ret_ty: &[Type] = match sig.ret_bytes {
            0 => &[],
            8 => &[Type::I64],
            _ => &[Type::I32],
        };
        let rets = self.ins().extern_call(callee, &args, &regs, ret_ty);
        let (Some(dest), Some(&ret)) = (ret_ops.first(), rets.first()) else {
            return Some(());
        };
        // The result as one value of the result's width.
        let value = match sig.ret_bytes {
            4 | 8 => ret,
            b @ (1 | 2) => self.ins().trunc(int_of_bits(b * 8)?, ret),
            _ => {
                self.error(
                    ins.span,
                    format!("unsupported {}-byte result", sig.ret_bytes),
                );
                return None;
            }
        };
        match dest {
            Operand::Sink(_) => Some(()),
            Operand::Name(a) => match self.lookup(a) {
                Some(Err(Sym::Arg { store })) => {
                    self.arg_write(store, 0, sig.ret_bytes, value, ins.span)
                }
                _ => {
                    let v = self.dest1(dest)?;
                    self.write(v, value, false, ins.span)
                }
            },
            other => {
                let v = self.dest1(other)?;
                self.write(v, value, false, ins.span)
            }
        }
    }
}
