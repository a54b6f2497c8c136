//! Semantic checks on a parsed module.
//!
//! In: an [`ast::Module`] that parsed without errors. Out: diagnostics (errors and warnings);
//! the AST is not changed. What is checked:
//!
//! - names: every register, variable, function and label is declared once per scope and
//!   registers and variables before their use (labels are function-wide, so a branch may
//!   jump forward; functions may be declared by a prototype and defined later);
//! - operand types against the instruction type, following the PTX ISA's relaxed type-checking
//!   rules (bit-size instruction types accept any register of the same size, integer types
//!   accept integer or bit registers of the same size, float types only the same float type or
//!   a bit register of its size; loads, stores and conversions accept wider registers for
//!   integer and bit types), predicates where a predicate is required;
//! - state spaces: a variable accessed through an address operand must live in the state space
//!   the instruction names; `st` cannot write `.const`; predicates only in `.reg`; module-level
//!   `.reg`/`.param` variables are rejected;
//! - declarations: alignment a power of two, vectors at most 128 bits, initializers that fit
//!   their array;
//! - target: a `.target` newer than sm_53 is a warning (leafold generates sm_50/52/53 code).
//!
//! Invariants: the checker never panics on any AST the parser can produce, and it reports
//! each problem once at the span of the offending name or operand.
//!
//! # Files of this module
//!
//! - `decl.rs`: Declarations and initializers in the checker.
//! - `operand.rs`: Operands in the checker.
//! - `texmode.rs`: a fetch without a sampler in a `texmode_independent` module.

mod decl;
mod operand;
mod texmode;
use crate::error::{Diagnostic, SourceFile, Span};
use crate::ptx::ast::*;
use crate::ptx::opcodes::{Opcode, Rule};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

/// Check a module; returns errors and warnings.
pub fn check(module: &Module, file: &Arc<SourceFile>) -> Vec<Diagnostic> {
    let mut c = Checker {
        file,
        diags: Vec::new(),
        globals: HashMap::default(),
        version: module.version(),
        target_sm: highest_sm(&module.targets()),
        module_names: HashSet::default(),
        declaring: "",
        scopes: Vec::new(),
        labels: HashSet::default(),
        in_control: false,
        names: &module.names,
        found: NameMemo::new(&module.names, None),
        const_end: 0,
        independent: module.targets().contains(&"texmode_independent"),
    };
    c.module(module);
    c.diags
}

/// Bytes of `.const` data a module may declare: constant bank 3 on sm_5x.
pub const MAX_CONST: u64 = 0x1_0000;

/// What a name refers to.
#[derive(Copy, Clone)]
enum Sym<'a> {
    Var(&'a VarDecl),
    Func {
        defined: bool,
        rets: usize,
        params: usize,
        /// An `.entry`.
        kernel: bool,
    },
    /// A label, `.callprototype` or `.branchtargets` name: only branch and call operands.
    Label,
}

#[derive(Default)]
struct Scope<'a> {
    /// By name id ([`Name::id`]; so are the checker's other maps of names).
    names: HashMap<u32, Sym<'a>>,
    /// `%r<100>`: prefix → (count, declaration).
    ranges: HashMap<u32, (u32, &'a VarDecl)>,
}

struct Checker<'a, 'f> {
    file: &'f Arc<SourceFile>,
    /// Bytes of `.const` data declared so far, laid out at each variable's alignment
    /// (saturating; past [`MAX_CONST`] once reported, then `u64::MAX`).
    const_end: u64,
    diags: Vec<Diagnostic>,
    globals: HashMap<u32, Sym<'a>>,
    /// The module's `.version` (major, minor).
    version: Option<(u32, u32)>,
    /// The highest `sm_NN` the module's `.target` names (0 when none does).
    target_sm: u32,
    /// Every module-scope variable and function name (to tell a name declared too late from
    /// an undeclared one), and the variable whose initializer is being checked.
    module_names: HashSet<u32>,
    declaring: &'a str,
    scopes: Vec<Scope<'a>>,
    labels: HashSet<u32>,
    /// Inside the operands of a branch or call (where labels are allowed).
    in_control: bool,
    /// The module's names: how each one splits for `%r<N>` ranges.
    names: &'a NameTable,
    /// What [`Checker::lookup`] found for each operand name ([`Checker::remembered`]),
    /// forgotten whenever what names mean can change (a declaration, a scope entered or
    /// left, a function's labels, a function declared).
    found: NameMemo<Option<Sym<'a>>>,
    /// The module's `.target` names `texmode_independent` ([`texmode`]).
    independent: bool,
}

/// Whether two lookups found the same thing (variables by identity).
fn same_sym(a: Option<Sym<'_>>, b: Option<Sym<'_>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Sym::Var(x)), Some(Sym::Var(y))) => std::ptr::eq(x, y),
        (
            Some(Sym::Func {
                defined: d1,
                rets: r1,
                params: p1,
                kernel: k1,
            }),
            Some(Sym::Func {
                defined: d2,
                rets: r2,
                params: p2,
                kernel: k2,
            }),
        ) => (d1, r1, p1, k1) == (d2, r2, p2, k2),
        (Some(Sym::Label), Some(Sym::Label)) => true,
        _ => false,
    }
}

/// Split `%rd12` into (`%rd`, 12) for parameterized register lookup (`%rd<N>` declarations);
/// `None` for names without a number or with a leading zero (`%r01` is its own name).
pub fn split_numbered(name: &str) -> Option<(&str, u32)> {
    let digits = name
        .bytes()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits == name.len() {
        return None;
    }
    let (prefix, num) = name.split_at(name.len() - digits);
    if num.len() > 1 && num.starts_with('0') {
        return None;
    }
    // `num` is ASCII digits only: accumulate them (what `str::parse` would do, without its
    // sign and error handling; this runs for most register names), `None` past `u32::MAX`.
    let mut n = 0u32;
    for b in num.bytes() {
        n = n.checked_mul(10)?.checked_add(u32::from(b - b'0'))?;
    }
    Some((prefix, n))
}

impl<'a, 'f> Checker<'a, 'f> {
    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(self.file, span, msg));
    }

    fn warning(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::warning(self.file, span, msg));
    }

    fn module(&mut self, m: &'a Module) {
        for item in &m.items {
            match item {
                Item::Var(v) => self.module_names.extend(v.names.iter().map(|d| d.name.id)),
                Item::Function(f) => {
                    self.module_names.insert(f.name.id);
                }
                _ => {}
            }
        }
        self.items(m);
        // A function declared without `.extern` must be defined in this module (ptxas
        // compiles whole programs: "Unresolved extern function").
        for f in m.functions() {
            if f.body.is_none()
                && !f.linkage.contains(&Linkage::Extern)
                && matches!(
                    self.globals.get(&f.name.id),
                    Some(Sym::Func { defined: false, .. })
                )
            {
                self.error(
                    f.name.span,
                    format!(
                        "function '{}' is declared but never defined (declare it .extern if it lives elsewhere)",
                        f.name.text
                    ),
                );
            }
        }
    }

    fn items(&mut self, m: &'a Module) {
        let independent = m.targets().contains(&"texmode_independent");
        for item in &m.items {
            match item {
                Item::Target { targets, .. } => {
                    for t in targets {
                        if let Some(n) = t.text.strip_prefix("sm_") {
                            let digits: String =
                                n.chars().take_while(|c| c.is_ascii_digit()).collect();
                            if digits.parse::<u32>().map(|v| v > 53).unwrap_or(false) {
                                self.warning(
                                    t.span,
                                    format!(
                                        "target '{}' is newer than sm_53; leafold generates code for sm_50, sm_52 and sm_53 only",
                                        t.text
                                    ),
                                );
                            }
                        }
                    }
                }
                Item::Var(v) => {
                    // Module-scope `.reg` is accepted: nvopencc and OptiX emit it and ptxas
                    // takes it. `.param` and `.sreg` are not storage a module can own.
                    if matches!(v.space, StateSpace::Param | StateSpace::Sreg) {
                        self.error(
                            v.span,
                            format!(
                                "{} variables cannot be declared at module scope",
                                v.space.name()
                            ),
                        );
                    }
                    if v.ty == Type::SamplerRef && !independent {
                        self.error(
                            v.span,
                            "'.samplerref' requires '.target texmode_independent' (the default is texmode_unified)",
                        );
                    }
                    self.var_decl(v, true);
                }
                Item::Function(f) => {
                    let defined = f.body.is_some();
                    let prev = self.globals.get(&f.name.id).copied();
                    let was_defined = match prev {
                        Some(Sym::Func { defined: true, .. }) if defined => {
                            self.error(
                                f.name.span,
                                format!("duplicate definition of function '{}'", f.name.text),
                            );
                            true
                        }
                        Some(Sym::Func { defined, .. }) => defined,
                        Some(_) => {
                            self.error(
                                f.name.span,
                                format!("duplicate declaration of '{}'", f.name.text),
                            );
                            false
                        }
                        None => false,
                    };
                    self.found.forget();
                    self.globals.insert(
                        f.name.id,
                        Sym::Func {
                            defined: defined || was_defined,
                            rets: f.rets.as_ref().map_or(0, |r| r.len()),
                            params: f.params.len(),
                            kernel: f.kind == FuncKind::Entry,
                        },
                    );
                    self.function(f);
                }
                _ => {}
            }
        }
    }

    fn function(&mut self, f: &'a Function) {
        self.directives(f);
        if f.kind == FuncKind::Entry && f.body.is_some() {
            self.param_space(f);
        }
        let Some(body) = &f.body else { return };
        self.scopes.clear();
        self.scopes.push(Scope::default());
        for p in f.rets.iter().flatten().chain(&f.params) {
            self.var_decl(p, false);
        }
        self.labels.clear();
        self.collect_labels(body);
        self.found.forget();
        self.block(body);
        self.scopes.clear();
        self.found.forget();
    }

    /// The performance directives of a function header, as ptxas 11.8 takes them: only on
    /// an `.entry`, every count positive, at most three thread-block sizes, not both
    /// `.maxntid` and `.reqntid`, no `.maxnctapersm` after PTX 2.0; a `.maxnreg` above 255
    /// is ignored with a warning.
    fn directives(&mut self, f: &'a Function) {
        let mut ntid: Option<&'static str> = None;
        for d in &f.perf {
            let (what, values, span): (&'static str, &[u32], Span) = match d {
                PerfDirective::MaxNtid(v, s) => (".maxntid", v, *s),
                PerfDirective::ReqNtid(v, s) => (".reqntid", v, *s),
                PerfDirective::MinNctaPerSm(n, s) => (".minnctapersm", std::slice::from_ref(n), *s),
                PerfDirective::MaxNctaPerSm(n, s) => (".maxnctapersm", std::slice::from_ref(n), *s),
                PerfDirective::MaxNreg(n, s) => (".maxnreg", std::slice::from_ref(n), *s),
                PerfDirective::Pragma(..) => continue,
            };
            if f.kind != FuncKind::Entry {
                self.error(
                    span,
                    format!("'{what}' is only allowed on an .entry function"),
                );
                continue;
            }
            if what == ".maxnctapersm" && self.version.is_some_and(|v| v >= (2, 1)) {
                self.error(
                    span,
                    "deprecated feature: '.maxnctapersm' is not supported as of PTX version 2.1",
                );
                continue;
            }
            if values.len() > 3 {
                self.error(
                    span,
                    format!(
                        "'{what}' takes at most three sizes (x, y, z), not {}",
                        values.len()
                    ),
                );
                continue;
            }
            if values.contains(&0) {
                self.error(
                    span,
                    format!("positive non-zero value expected for '{what}'"),
                );
                continue;
            }
            if what == ".maxnreg" && values[0] > 255 {
                self.warning(
                    span,
                    format!(
                        "'.maxnreg {}' is more than 255 registers; ignored",
                        values[0]
                    ),
                );
            }
            if what == ".maxntid" || what == ".reqntid" {
                match ntid {
                    Some(prev) if prev != what => self.error(
                        span,
                        "conflicting directives: '.maxntid' and '.reqntid' cannot both be specified",
                    ),
                    _ => ntid = Some(what),
                }
            }
        }
    }

    /// A kernel's parameters, laid out at their alignments, must fit the 0x1100 bytes of
    /// constant bank 0 that sm_5x gives them (ptxas: "uses too much parameter space").
    fn param_space(&mut self, f: &'a Function) {
        const MAX: u64 = 0x1100;
        let mut end: u64 = 0;
        for p in &f.params {
            let elem = u64::from(p.ty.bits().div_ceil(8)) * u64::from(p.vector.unwrap_or(1));
            let align = u64::from(p.align.unwrap_or(elem as u32).max(1));
            for d in &p.names {
                let size = d
                    .resolved_dims()
                    .iter()
                    .fold(elem, |n, x| n.saturating_mul(x.unwrap_or(0)));
                end = end
                    .checked_next_multiple_of(align)
                    .unwrap_or(u64::MAX)
                    .saturating_add(size);
            }
        }
        if end > MAX {
            self.error(
                f.name.span,
                format!(
                    "entry function '{}' uses too much parameter space ({end:#x} bytes, {MAX:#x} max)",
                    f.name.text
                ),
            );
        }
    }

    fn collect_labels(&mut self, b: &'a Block) {
        for s in &b.stmts {
            match s {
                Statement::Label(n)
                | Statement::Prototype { name: n, .. }
                | Statement::Targets { name: n, .. }
                    if !self.labels.insert(n.id) =>
                {
                    self.error(n.span, format!("duplicate label '{}'", n.text));
                }
                Statement::Block(inner) => self.collect_labels(inner),
                _ => {}
            }
        }
    }

    fn block(&mut self, b: &'a Block) {
        self.scopes.push(Scope::default());
        self.found.forget();
        for s in &b.stmts {
            match s {
                // Function-scope .global/.const variables are statically allocated but their
                // names are still scoped like registers.
                Statement::Var(v) => self.var_decl(v, false),
                Statement::Instr(i) => self.instruction(i),
                Statement::Block(inner) => self.block(inner),
                Statement::Prototype { .. } => {}
                Statement::Targets { targets, calls, .. } => {
                    for t in targets {
                        if self.lookup(t).is_none() {
                            let what = if *calls { "function" } else { "label" };
                            self.error(t.span, format!("undeclared {what} '{}'", t.text));
                        }
                    }
                }
                Statement::Label(_) | Statement::Loc(_) | Statement::Pragma(..) => {}
            }
        }
        self.scopes.pop();
        self.found.forget();
    }

    fn lookup(&self, name: &Name) -> Option<Sym<'a>> {
        let id = name.id;
        for scope in self.scopes.iter().rev() {
            // Empty maps are skipped without hashing: compiler output declares registers
            // with ranges only, so most lookups hash once.
            if !scope.names.is_empty() {
                if let Some(s) = scope.names.get(&id) {
                    return Some(*s);
                }
            }
            if scope.ranges.is_empty() {
                continue;
            }
            if let Some((prefix, n)) = self.names.numbered(name) {
                if let Some((count, decl)) = scope.ranges.get(&prefix) {
                    if n < *count {
                        return Some(Sym::Var(decl));
                    }
                }
            }
        }
        if self.labels.contains(&id) {
            return Some(Sym::Label);
        }
        self.globals.get(&id).copied()
    }

    /// [`Checker::lookup`], remembered per name until it is forgotten ([`NameMemo`]): a
    /// body's operands name the same registers again and again in the same scopes, so most
    /// are one slot read instead of a walk over the scopes' maps. Debug builds compare with
    /// the walk.
    fn remembered(&mut self, n: &Name) -> Option<Sym<'a>> {
        if let Some(s) = self.found.get(n) {
            debug_assert!(same_sym(s, self.lookup(n)), "{}", n.text);
            return s;
        }
        let s = self.lookup(n);
        if s.is_some() {
            self.found.put(n, s);
        }
        s
    }

    /// Resolve a name used as an operand; reports undeclared names and labels used as data.
    fn resolve(&mut self, n: &Name) -> Option<Sym<'a>> {
        let s = self.remembered(n);
        match s {
            None => self.unresolved(n, true),
            Some(Sym::Label) if !self.in_control => self.unresolved(n, false),
            _ => {}
        }
        s
    }

    /// [`Checker::resolve`]'s errors, out of line so that the lookup made for every operand
    /// name stays small: `n` is undeclared, or (`undeclared` false) a label used as data.
    #[cold]
    #[inline(never)]
    fn unresolved(&mut self, n: &Name, undeclared: bool) {
        if undeclared {
            self.error(n.span, format!("undeclared identifier '{}'", n.text));
        } else {
            self.error(
                n.span,
                format!(
                    "label '{}' can only be used by branch and call instructions",
                    n.text
                ),
            );
        }
    }

    fn instruction(&mut self, i: &'a Instruction) {
        if let Some(g) = &i.guard {
            if let Some(Sym::Var(v)) = self.resolve(&g.pred) {
                if v.ty != Type::Pred || v.space != StateSpace::Reg {
                    self.error(
                        g.pred.span,
                        format!(
                            "guard '{}' is not a predicate register (declared .{})",
                            g.pred.text,
                            v.ty.name()
                        ),
                    );
                }
            }
        }
        if matches!(
            i.opcode,
            Opcode::Alloca | Opcode::Stacksave | Opcode::Stackrestore
        ) {
            self.stack_instruction(i);
        }
        let info = i.opcode.info();
        // Branch targets and call targets are labels or functions; everything else names
        // registers or variables.
        match info.rule {
            Rule::Control => {
                self.in_control = true;
                self.control(i);
                self.in_control = false;
                return;
            }
            _ => {
                for o in &i.operands {
                    self.resolve_operand(o);
                }
            }
        }
        self.spaces(i);
        self.shape(i);
        self.texmode_fetch(i);
        let types = i.type_mod_list();
        let ops = &i.operands;
        // Rules for opcodes that may carry no type modifier at all.
        match info.rule {
            Rule::Isspacep => {
                if let Some(p) = ops.first() {
                    self.pred_operand(i, p);
                }
                return;
            }
            Rule::Bar if types.is_empty() => {
                for o in ops {
                    self.operand_type(i, o, Type::U32, false);
                }
                return;
            }
            _ => {}
        }
        let Some(&ty) = types.last() else { return };
        self.typed_operands(i, ty);
    }

    /// The operand types of `i` by its opcode's typing rule (`ty`: its last type modifier).
    // Long by design: the dispatch over `Rule`, one arm per typing rule.
    fn typed_operands(&mut self, i: &'a Instruction, ty: Type) {
        let types = i.type_mod_list();
        let ops = &i.operands;
        let info = i.opcode.info();
        let is_mem = matches!(info.rule, Rule::Mem);
        match info.rule {
            Rule::Same => {
                let wide = i.has_flag("wide");
                for (k, o) in ops.iter().enumerate() {
                    // `mov.b64 d, {lo, hi}` packs/unpacks: each element is a slice of the type.
                    if let (Operand::Vector(items, _), None) = (o, i.vector()) {
                        let n = items.len() as u32;
                        if i.opcode == Opcode::Mov && n > 0 && ty.bits() % n == 0 {
                            if let Some(et) = bits_type(ty.bits() / n) {
                                self.operand_type(i, o, et, false);
                                continue;
                            }
                        }
                    }
                    // mul.wide / mad.wide: d (and c of mad) are double width.
                    let t = if wide && (k == 0 || (k == 3 && i.opcode == Opcode::Mad)) {
                        double(ty)
                    } else {
                        ty
                    };
                    self.operand_type(i, o, t, false);
                }
            }
            Rule::Shift => {
                if let [d, a, b] = &ops[..] {
                    self.operand_type(i, d, ty, false);
                    self.operand_type(i, a, ty, false);
                    self.operand_type(i, b, Type::U32, false);
                }
            }
            Rule::Setp => {
                if let Some(d) = ops.first() {
                    self.pred_operand(i, d);
                }
                for o in ops.iter().skip(1).take(2) {
                    self.operand_type(i, o, ty, false);
                }
                if let Some(c) = ops.get(3) {
                    self.pred_operand(i, c);
                }
            }
            Rule::Set => {
                if let (Some(d), Some(&src)) = (ops.first(), types.get(1)) {
                    self.operand_type(i, d, types[0], false);
                    for o in ops.iter().skip(1).take(2) {
                        self.operand_type(i, o, src, false);
                    }
                    if let Some(c) = ops.get(3) {
                        self.pred_operand(i, c);
                    }
                }
            }
            Rule::Selp => {
                for o in ops.iter().take(3) {
                    self.operand_type(i, o, ty, false);
                }
                if let Some(c) = ops.get(3) {
                    self.pred_operand(i, c);
                }
            }
            Rule::Cvt => {
                if let (Some(d), Some(a)) = (ops.first(), ops.get(1)) {
                    let dt = types[0];
                    let st = if types.len() > 1 { types[1] } else { types[0] };
                    self.operand_type(i, d, dt, true);
                    self.operand_type(i, a, st, true);
                }
            }
            Rule::Mem => {
                for o in ops {
                    if !matches!(o, Operand::Address(_) | Operand::Indexed { .. }) {
                        self.operand_type(i, o, ty, is_mem);
                    }
                }
            }
            Rule::Bfe | Rule::Bfi => {
                let typed = if info.rule == Rule::Bfe { 2 } else { 3 };
                for (k, o) in ops.iter().enumerate() {
                    let t = if k < typed { ty } else { Type::U32 };
                    self.operand_type(i, o, t, false);
                }
            }
            Rule::Count => {
                if let [d, a] = &ops[..] {
                    self.operand_type(i, d, Type::U32, false);
                    self.operand_type(i, a, ty, false);
                }
            }
            Rule::Testp => {
                if let [p, a] = &ops[..] {
                    self.pred_operand(i, p);
                    self.operand_type(i, a, ty, false);
                }
            }
            Rule::Vote => {
                if let Some(d) = ops.first() {
                    if ty == Type::Pred {
                        self.pred_operand(i, d);
                    } else {
                        self.operand_type(i, d, ty, false);
                    }
                }
                if let Some(a) = ops.get(1) {
                    self.pred_operand(i, a);
                }
                if let Some(mask) = ops.get(2) {
                    self.operand_type(i, mask, Type::U32, false);
                }
            }
            Rule::Shfl => {
                match ops.first() {
                    Some(Operand::PredPair(d, p)) => {
                        self.operand_type(i, &Operand::Name(d.clone()), ty, false);
                        self.pred_operand(i, &Operand::Name(p.clone()));
                    }
                    Some(d) => self.operand_type(i, d, ty, false),
                    None => {}
                }
                if let Some(a) = ops.get(1) {
                    self.operand_type(i, a, ty, false);
                }
                for o in ops.iter().skip(2) {
                    self.operand_type(i, o, Type::U32, false);
                }
            }
            Rule::Slct => {
                if let (Some(&dt), [d, a, b, c]) = (types.first(), &ops[..]) {
                    for o in [d, a, b] {
                        self.operand_type(i, o, dt, false);
                    }
                    self.operand_type(i, c, ty, false);
                }
            }
            Rule::Dp => {
                for o in ops {
                    self.operand_type(i, o, Type::B32, false);
                }
            }
            Rule::Bar => {
                // A typed `bar.red`: the result, one or two .u32 operands, a predicate last.
                if let Some((c, rest)) = ops[..].split_last() {
                    if let Some((d, counts)) = rest.split_first() {
                        if ty == Type::Pred {
                            self.pred_operand(i, d);
                        } else {
                            self.operand_type(i, d, ty, false);
                        }
                        for o in counts {
                            self.operand_type(i, o, Type::U32, false);
                        }
                    }
                    self.pred_operand(i, c);
                }
            }
            Rule::Video => {
                // `vset` has no destination type: its result is .u32.
                let (dt, at, bt) = match types[..] {
                    [d, a, b, ..] => (d, a, b),
                    [a, b] => (Type::U32, a, b),
                    _ => return,
                };
                for (k, o) in ops.iter().enumerate() {
                    let t = match k {
                        1 => at,
                        2 => bt,
                        _ => dt,
                    };
                    self.operand_type(i, o, t, false);
                }
            }
            Rule::Isspacep | Rule::Control | Rule::Free => {}
        }
    }

    /// `call (rets), f, (args)`: a direct call passes as many arguments as `f` declares.
    fn call_arity(&mut self, i: &'a Instruction) {
        let Some(k) = i
            .operands
            .iter()
            .position(|o| matches!(o, Operand::Name(_)))
        else {
            return;
        };
        let Operand::Name(callee) = &i.operands[k] else {
            return;
        };
        let Some(Sym::Func { rets, params, .. }) = self.globals.get(&callee.id).copied() else {
            return;
        };
        let count = |o: Option<&Operand>| match o {
            Some(Operand::List(v, _)) => v.len(),
            _ => 0,
        };
        let given_rets = if k > 0 {
            count(i.operands.get(k - 1))
        } else {
            0
        };
        let given_args = count(i.operands.get(k + 1));
        if given_args != params {
            self.error(
                callee.span,
                format!(
                    "call to '{}' passes {given_args} argument(s), but it takes {params}",
                    callee.text
                ),
            );
        } else if given_rets > rets {
            self.error(
                callee.span,
                format!(
                    "call to '{}' expects {given_rets} return value(s), but it returns {rets}",
                    callee.text
                ),
            );
        }
    }

    fn control(&mut self, i: &'a Instruction) {
        if i.opcode == Opcode::Call {
            self.call_arity(i);
        }
        for o in &i.operands {
            match o {
                Operand::Name(n) => {
                    if self.lookup(n).is_none() {
                        let what = if i.opcode == Opcode::Bra {
                            "label"
                        } else {
                            "function"
                        };
                        self.error(n.span, format!("undeclared {what} '{}'", n.text));
                    }
                }
                Operand::List(items, _) => {
                    for it in items {
                        self.resolve_operand(it);
                    }
                }
                other => self.resolve_operand(other),
            }
        }
    }
}

/// The highest `sm_NN` among `.target` names (0 when there is none).
fn highest_sm(targets: &[&str]) -> u32 {
    targets
        .iter()
        .filter_map(|t| t.strip_prefix("sm_"))
        .filter_map(|n| {
            let digits: String = n.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse::<u32>().ok()
        })
        .max()
        .unwrap_or(0)
}

impl<'a> Checker<'a, '_> {
    /// `alloca.type d, size{, align}`, `stacksave.type d`, `stackrestore.type a` (PTX ISA 7.3,
    /// sm_52): what ptxas 11.8 accepts, with its words. `.type` is `.u32` or `.u64` and every
    /// register operand has that type; `align` is an immediate power of two up to 2^23.
    fn stack_instruction(&mut self, i: &'a Instruction) {
        let name = i.opcode.info().name;
        let at = i.opcode_span;
        if let Some((major, minor)) = self.version.filter(|&v| v < (7, 3)) {
            self.error(
                at,
                format!("Feature '{name}' requires PTX ISA .version 7.3 or later (this module is .version {major}.{minor})"),
            );
        }
        if self.target_sm < 52 {
            self.error(
                at,
                format!("Feature '{name}' requires .target sm_52 or higher"),
            );
        }
        let ty = i.ty().filter(|t| matches!(t, Type::U32 | Type::U64));
        let Some(ty) = ty else {
            self.error(
                at,
                format!("Unexpected instruction types specified for '{name}' (.u32 or .u64)"),
            );
            return;
        };
        let regs = if i.opcode == Opcode::Alloca { 2 } else { 1 };
        for (k, o) in i.operands.iter().enumerate().take(regs) {
            match o {
                Operand::Name(n) => match self.reg_of(n) {
                    Some(v) if v.ty.bits() == ty.bits() && v.ty != Type::Pred => {}
                    Some(v) => self.error(
                        n.span,
                        format!(
                            "Arguments mismatch for instruction '{name}': '{}' is .{}, not a {}-bit register",
                            n.text,
                            v.ty.name(),
                            ty.bits()
                        ),
                    ),
                    None => {}
                },
                // The size of an `alloca` may be an immediate.
                Operand::Imm(Imm::Int { .. }, _) if k == 1 => {}
                _ if i.opcode == Opcode::Stackrestore => self.error(
                    o.span(),
                    format!("Result register required for instruction '{name}'"),
                ),
                _ => self.error(
                    o.span(),
                    format!("Arguments mismatch for instruction '{name}'"),
                ),
            }
        }
        if let Some(o) = i.operands.get(2) {
            match o {
                Operand::Imm(Imm::Int { value, .. }, span) => {
                    let v = *value as u64;
                    if v == 0 || !v.is_power_of_two() {
                        self.error(*span, "Alignment must be a power of two");
                    } else if v > 1 << 23 {
                        self.error(*span, "Alignment value too large, exceeds 2^23");
                    }
                }
                _ => self.error(
                    o.span(),
                    format!("Arguments mismatch for instruction '{name}': the alignment must be an immediate"),
                ),
            }
        }
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

fn bits_type(bits: u32) -> Option<Type> {
    Some(match bits {
        8 => Type::B8,
        16 => Type::B16,
        32 => Type::B32,
        64 => Type::B64,
        128 => Type::B128,
        _ => return None,
    })
}

fn double(t: Type) -> Type {
    use Type::*;
    match t {
        U8 => U16,
        U16 => U32,
        U32 => U64,
        S8 => S16,
        S16 => S32,
        S32 => S64,
        B8 => B16,
        B16 => B32,
        B32 => B64,
        other => other,
    }
}

/// PTX relaxed type checking: may a register of type `reg` be used where the instruction
/// expects `want`? `widen` allows a wider register for integer and bit types (ld, st, cvt).
pub fn compatible(want: Type, reg: Type, widen: bool) -> bool {
    if want == reg {
        return true;
    }
    if want == Type::Pred || reg == Type::Pred {
        return false;
    }
    let (wb, rb) = (want.bits(), reg.bits());
    let size_ok = if widen && want.kind() != TypeKind::Float {
        rb >= wb
    } else {
        rb == wb
    };
    if !size_ok {
        return false;
    }
    match want.kind() {
        TypeKind::Bits => true,
        TypeKind::Signed | TypeKind::Unsigned => {
            matches!(
                reg.kind(),
                TypeKind::Bits | TypeKind::Signed | TypeKind::Unsigned
            )
        }
        // Packed and half types share registers with bit types of their size.
        TypeKind::Float => {
            reg.kind() == TypeKind::Bits || (widen && reg.kind() == TypeKind::Float && rb == wb)
        }
        TypeKind::Pred | TypeKind::Opaque => {
            reg.kind() == TypeKind::Bits || reg.kind() == want.kind()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_numbered;

    /// The digit loop agrees with the definition by `str::parse` (no number, a leading zero,
    /// and `u32` overflow give `None`).
    #[test]
    fn split_numbered_matches_parse() {
        fn by_parse(name: &str) -> Option<(&str, u32)> {
            let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
            if digits == 0 || digits == name.len() {
                return None;
            }
            let (prefix, num) = name.split_at(name.len() - digits);
            if num.len() > 1 && num.starts_with('0') {
                return None;
            }
            Some((prefix, num.parse::<u32>().ok()?))
        }
        for name in [
            "%r0",
            "%r1",
            "%rd12",
            "%r01",
            "%r00",
            "%p",
            "12",
            "",
            "%f4294967295",
            "%f4294967296",
            "%f42949672950",
            "%f99999999999999999999",
            "x1y2",
        ] {
            assert_eq!(split_numbered(name), by_parse(name), "{name}");
        }
        assert_eq!(split_numbered("%rd12"), Some(("%rd", 12)));
        assert_eq!(split_numbered("%f4294967295"), Some(("%f", u32::MAX)));
        assert_eq!(split_numbered("%f4294967296"), None);
    }
}
