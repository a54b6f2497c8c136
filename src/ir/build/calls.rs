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
//! stays a call the same way (nvlink resolves it). So does, in a function of the object, a
//! call of another large `.visible .func` the object writes ([`object_calls`]): the callee's
//! code is in the object already, and nvlink resolves the `JCAL` to its own symbol.
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
//! driver make the call a `CAL` to its code placed after the kernel's. Its `.local`
//! variables lie in each activation's own frame on the R1 stack. Refused in such a
//! function: `.reg` parameters or results, more arguments than R4..R15 hold.
//!
//! A large function that a kernel would otherwise inline several times is compiled the same
//! way, once, for that kernel (`outline.rs`, [`outlined_set`]: issue 22's "calls that should
//! not be inlined", ptxas's size rule); every other kernel still inlines it.
//!
//! # Function addresses and indirect calls
//!
//! A `.func` whose address the module takes has a value ([`function_ids`]: 8, 16, ..., in
//! module order): `mov.u64 %rd, f` is that constant, and so is `f` in an initializer. A call
//! through a register (`call (r), %rd, (args), proto;`) is expanded into one inlined copy of
//! every address-taken function whose parameter and result sizes are the `.callprototype`'s
//! (or of every function its `.calltargets` lists); each copy but the last is a [`CallSite`]
//! with [`CallSite::dispatch`] set, entered only when the pointer equals the function's value,
//! and otherwise skipped to its join like a guarded call. Where a candidate is a subroutine
//! (below), the copies are alternatives: each that ran jumps ([`Item::DispatchSkip`]) past
//! the others' compares to the end of the dispatch ([`Item::DispatchDone`]), and the last is
//! entered without a compare: a pointer that holds no candidate's value is undefined
//! behaviour in PTX (ptxas's `BRX` jumps wherever it points), so a pointer none of the
//! others matched is the last's. A candidate compiled as a subroutine for its size
//! ([`outlined_set`]) has no body in its copy: the copy binds the parameters and results as
//! usual, and an [`Item::SubCall`] is its `CAL` (`FnBuilder::sub_call`).
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

mod args;
mod extern_call;
mod outline;
pub(super) use extern_call::*;
pub(super) use outline::*;
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
/// The label key of the end of an indirect call's dispatch (keyed by its first copy's frame).
pub(super) const DONE_LABEL: &str = " done";
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
    /// Under `--compile-only`, building a function of the object: the other functions of
    /// the object it calls rather than inlines ([`object_calls`]); each call stays a call
    /// (a `JCAL` that nvlink resolves to the callee's own code).
    pub object_calls: HashSet<String>,
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
            object_calls: HashSet::default(),
        }
    }

    pub fn expand(&mut self, b: &'a ast::Block, out: &mut Vec<Item<'a>>) {
        out.push(Item::Enter);
        for s in &b.stmts {
            match s {
                ast::Statement::Var(v) => out.push(Item::Decl(v)),
                ast::Statement::Label(n) => out.push(Item::Label(n)),
                ast::Statement::Pragma(text, _) if text.contains("nounroll") => {
                    out.push(Item::NoUnroll)
                }
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
                ast::Statement::Prototype { .. } | ast::Statement::Targets { calls: true, .. } => {
                    if let Some((name, proto)) = proto_of(s) {
                        self.protos.insert(name, proto);
                    }
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
        let sub = callee.body.is_some()
            && (self.subs.contains(target.text.as_str())
                || self.object_calls.contains(target.text.as_str()));
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
        self.inline(ins, callee, body, None, None, out);
    }

    /// One inlined copy of `callee` at `ins` (under `dispatch`, see [`CallSite::dispatch`]);
    /// `skip`: the dispatch whose end the copy jumps to when it returns.
    fn inline(
        &mut self,
        ins: &'a Instruction,
        callee: &'a ast::Function,
        body: &'a ast::Block,
        dispatch: Option<u64>,
        skip: Option<usize>,
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
        out.extend(skip.map(Item::DispatchSkip));
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
        let candidates = dispatch_candidates(&proto, self.funcs, self.fn_ids);
        if candidates.is_empty() {
            return self.refuse(
                target.span,
                format!(
                    "unsupported indirect call through '{}': no function whose address the module takes fits its prototype",
                    target.text
                ),
            );
        }
        // The copies are alternatives: where one is a subroutine's `CAL`, each that ran
        // jumps past the others' compares to the end, so nothing the call passes stays live
        // across another candidate's call (inlined copies alone stay a straight sequence of
        // guarded copies, which if-conversion flattens: ocelot's `indirectCall` 46
        // instructions, 54 with the jumps).
        let done = self.next_frame;
        let calls = candidates
            .iter()
            .any(|(f, _)| self.subs.contains(f.name.text.as_str()));
        let last = candidates.len() - 1;
        for (k, (f, id)) in candidates.into_iter().enumerate() {
            let skip = (k < last && calls).then_some(done);
            // Where the copies are alternatives, the pointer holds one of the candidates'
            // values (calling anything else is undefined), so the last one is entered
            // without a compare, as ptxas's `BRX` jumps to whatever the pointer holds. (A
            // straight sequence of inlined copies runs into the last one after the one
            // that matched: it keeps its compare.)
            let id = (k < last || !calls).then_some(id);
            if self.stack.iter().any(|&g| g == f.name.text) {
                return self.refuse(
                    target.span,
                    format!(
                        "unsupported recursive indirect call (through '{}', possibly to '{}'): leafold inlines calls and cannot inline recursion",
                        target.text, f.name.text
                    ),
                );
            }
            if self.subs.contains(f.name.text.as_str()) {
                // A subroutine kept for its size (`outline.rs`): the copy is its `CAL`.
                self.instrs += 1;
                let site = CallSite {
                    frame: self.next_frame,
                    ins,
                    callee: f,
                    dispatch: id,
                };
                self.next_frame += 1;
                out.push(Item::CallBegin(site));
                out.push(Item::SubCall(site));
                out.push(Item::CallEnd(site));
                out.extend(skip.map(Item::DispatchSkip));
                if site.guarded() {
                    out.push(Item::CallJoin(site.frame));
                }
            } else if let Some(body) = &f.body {
                self.inline(ins, f, body, id, skip, out);
            }
        }
        out.push(Item::DispatchDone(done));
    }
}

/// The functions an indirect call of `proto` may reach, with their values, by value: every
/// defined function whose address the module takes and whose parameter and result sizes are
/// the `.callprototype`'s, or those its `.calltargets` lists.
pub(super) fn dispatch_candidates<'a>(
    proto: &Proto<'_>,
    funcs: &HashMap<&str, &'a ast::Function>,
    fn_ids: &HashMap<String, u64>,
) -> Vec<(&'a ast::Function, u64)> {
    let mut names: Vec<&str> = fn_ids.keys().map(String::as_str).collect();
    names.sort_by_key(|n| fn_ids[*n]);
    let mut candidates = Vec::new();
    for name in names {
        let Some(&f) = funcs.get(name) else {
            continue;
        };
        let fits = match proto {
            Proto::Sig(r, p) => {
                decl_sizes(&f.params) == *p
                    && f.rets.as_deref().map(decl_sizes).unwrap_or_default() == *r
            }
            Proto::Targets(t) => t.contains(&name),
        };
        if fits && f.body.is_some() {
            candidates.push((f, fn_ids[name]));
        }
    }
    candidates
}

/// The `.callprototype` or `.calltargets` a statement declares: its name and [`Proto`].
pub(super) fn proto_of(s: &ast::Statement) -> Option<(&str, Proto<'_>)> {
    match s {
        ast::Statement::Prototype {
            name, rets, params, ..
        } => {
            let r = rets.as_deref().map(decl_sizes).unwrap_or_default();
            Some((name.text.as_str(), Proto::Sig(r, decl_sizes(params))))
        }
        ast::Statement::Targets {
            name,
            calls: true,
            targets,
            ..
        } => {
            let t = targets.iter().map(|t| t.text.as_str()).collect();
            Some((name.text.as_str(), Proto::Targets(t)))
        }
        _ => None,
    }
}

/// What an indirect call's last operand names.
#[derive(Clone)]
pub(super) enum Proto<'a> {
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

/// The sizes of a declaration list's variables, in order (a prototype's or function's
/// parameters or results).
fn decl_sizes(v: &[ast::VarDecl]) -> Vec<u32> {
    v.iter()
        .flat_map(|d| d.names.iter().map(move |n| decl_size(d, n)))
        .collect()
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
}

/// The `.func`s compiled as real subroutines rather than inlined: those on a cycle of direct
/// calls (recursion, direct or mutual), which no amount of inlining can flatten, and which
/// a kernel of `module` reaches (an unused recursive function is not built, as before), or,
/// with `from_visible` (under `-c`, where every `.visible .func` with a body is a function of
/// the object and so a root like a kernel), which such a function reaches.
pub(super) fn subroutine_set(
    module: &ast::Module,
    funcs: &HashMap<&str, &ast::Function>,
    from_visible: bool,
) -> HashSet<String> {
    let callees = direct_callees;
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
        let root = k.kind == ast::FuncKind::Entry
            || (from_visible && k.linkage.contains(&ast::Linkage::Visible));
        if let (true, Some(b)) = (root, &k.body) {
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
        .find(|it| !matches!(it, Item::Exit | Item::NoUnroll))
        .is_some_and(|it| matches!(it, Item::CallEnd(_)))
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
}
