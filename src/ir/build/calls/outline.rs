//! The inlining decision for calls that could be inlined but should not be (issue 22): a
//! large `.func` that a kernel would otherwise get several copies of is compiled once as a
//! subroutine and called (`CAL`), as ptxas 11.8 keeps it.
//!
//! In: the module's function table and the recursive set ([`super::subroutine_set`]'s cycle
//! rule). Out: [`Outlined`]: the `.func`s to compile as subroutines for their size, and for
//! each kernel which of them it calls as subroutines (the others it still inlines).
//!
//! # The rule
//!
//! ptxas 11.8 never inlines a defined `.func` (docs/calls.md, probe `big.ptx`: 12 to 240
//! instructions, 1 to 3 call sites, always a `CAL`). leafold inlines by default, which wins on
//! small functions (no argument moves, constants propagate, no clobbered registers) and
//! loses on large ones called from several places: each copy adds the whole body
//! (particlefilter's `likelihood_kernel`: two copies of `__internal_trig_reduction_slowpathd`
//! and four of `__internal_accurate_pow` made 3,045 instructions against ptxas's 1,444). A
//! function is kept as a subroutine for a kernel when
//!
//! * the kernel would inline at least [`OUTLINE_MIN_COPIES`] copies of it (counting copies
//!   made through other inlined functions), and
//! * its body, with what it would inline itself, has at least [`OUTLINE_MIN_INSTRS`] PTX
//!   instructions.
//!
//! The trade-off: each copy saved removes the body's size, and costs a call sequence (argument
//! moves into R4.., the `CAL`, the callee's saves of callee-saved registers it writes) and the
//! caller-saved registers the call clobbers; below ~100 instructions the copies are cheap
//! enough and inlining keeps the constants and registers. A kernel that would inline only one
//! copy keeps inlining it (no code to share).
//!
//! # Eligibility
//!
//! Only functions the subroutine path compiles whole: `.param` parameters and results that
//! [`ExternSig::of`] lays out; no `.shared` variable named in its body or in what it inlines
//! (the kernel lays out only its own shared memory); no `alloca` (R1 moves); no texture,
//! surface instructions (kept simple: those stay inlined); no call that stays a call under the standard ABI (indirect,
//! system or recursive: the subroutine's own convention, `lower::OUTLINED_CAL`, promises its
//! callers every register from R16 up). Anything else is inlined as before.
//!
//! # Indirect calls
//!
//! An indirect call is expanded into one copy of every candidate (`Expander::indirect`, each
//! entered when the pointer holds its value); those copies count like the copies of direct
//! calls ([`dispatch_callees`]). A candidate kept as a subroutine is still dispatched by a
//! compare of the pointer, but its copy is a `CAL` of the one body (`Item::SubCall`), where
//! ptxas 11.8 loads the address from a constant-bank table and branches through it (`LDC R3,
//! c[0x2][R0]; PRET; BRX R3`, FunctionPointers' SobelShared): a compare and a `CAL` per
//! candidate is the same shape under leafold's function values (`function_ids`). The bound
//! is lower for a function an indirect call may reach, [`OUTLINE_MIN_DISPATCH_INSTRS`]: a
//! dispatched copy sits under its compare whatever it inlines, so nothing is lost by the
//! call but the argument moves (FunctionPointers: `ComputeSobel`, `ComputeBox`, 43 and 45
//! PTX instructions, each copied into SobelShared 4 times, ptxas 11.8 keeps each once;
//! `Threshold`, 9, stays inlined).

use super::*;

/// Copies of a function a kernel must otherwise inline before it is kept as a subroutine.
pub(in crate::ir::build) const OUTLINE_MIN_COPIES: usize = 2;
/// PTX instructions (with what the function inlines itself) at and above which a function
/// called from several places is kept as a subroutine.
pub(in crate::ir::build) const OUTLINE_MIN_INSTRS: usize = 100;

/// The same bound for a function an indirect call may reach (module essay, "Indirect
/// calls").
pub(in crate::ir::build) const OUTLINE_MIN_DISPATCH_INSTRS: usize = 32;

/// The result of the rule (see the module essay).
#[derive(Default, Clone)]
pub(in crate::ir::build) struct Outlined {
    /// Every function kept as a subroutine by some kernel.
    pub all: HashSet<String>,
    /// Per kernel: the functions it calls as subroutines for their size.
    pub by_kernel: HashMap<String, HashSet<String>>,
}

/// The calls of a block: callee names (direct calls only), in order.
pub(in crate::ir::build) fn direct_callees<'a>(b: &'a ast::Block, out: &mut Vec<&'a str>) {
    for st in &b.stmts {
        match st {
            ast::Statement::Instr(i) if i.opcode == Opcode::Call => {
                if let Some(Operand::Name(n)) =
                    i.operands.iter().find(|o| !matches!(o, Operand::List(..)))
                {
                    out.push(n.text.as_str());
                }
            }
            ast::Statement::Block(inner) => direct_callees(inner, out),
            _ => {}
        }
    }
}

/// The candidates of a block's indirect calls ([`dispatch_candidates`]), one entry per
/// candidate per call, in order: each is a copy the kernel would inline under a compare.
fn dispatch_callees<'a>(
    b: &'a ast::Block,
    funcs: &HashMap<&str, &'a ast::Function>,
    fn_ids: &HashMap<String, u64>,
    protos: &mut HashMap<&'a str, Proto<'a>>,
    out: &mut Vec<&'a str>,
) {
    for st in &b.stmts {
        if let Some((name, proto)) = proto_of(st) {
            protos.insert(name, proto);
        }
        match st {
            ast::Statement::Instr(i) if i.opcode == Opcode::Call => {
                let target = i.operands.iter().find(|o| !matches!(o, Operand::List(..)));
                let indirect = matches!(target, Some(Operand::Name(n)) if !funcs.contains_key(n.text.as_str()));
                let proto = match i.operands.last() {
                    Some(Operand::Name(p)) if indirect => protos.get(p.text.as_str()),
                    _ => None,
                };
                if let Some(proto) = proto {
                    let found = dispatch_candidates(proto, funcs, fn_ids);
                    out.extend(found.into_iter().map(|(f, _)| f.name.text.as_str()));
                }
            }
            ast::Statement::Block(inner) => dispatch_callees(inner, funcs, fn_ids, protos, out),
            _ => {}
        }
    }
}

/// Names an operand mentions (registers, variables, functions).
fn operand_names<'a>(o: &'a Operand, out: &mut Vec<&'a str>) {
    match o {
        Operand::Name(n) | Operand::Elem { name: n, .. } => out.push(n.text.as_str()),
        Operand::NameOffset { name, .. } => out.push(name.text.as_str()),
        Operand::Address(a) => out.extend(a.base.as_ref().map(|n| n.text.as_str())),
        Operand::Indexed { base, index, .. } => {
            out.push(base.text.as_str());
            out.extend(index.base.as_ref().map(|n| n.text.as_str()));
        }
        Operand::List(v, _) | Operand::Vector(v, _) => v.iter().for_each(|x| operand_names(x, out)),
        _ => {}
    }
}

/// Per function: its own PTX instruction count and whether its own body is eligible (see
/// the module essay; callees are checked separately).
fn own_facts(
    b: &ast::Block,
    shared: &HashSet<&str>,
    funcs: &HashMap<&str, &ast::Function>,
    recursive: &HashSet<String>,
) -> (usize, bool) {
    let mut n = 0;
    let mut ok = true;
    let mut stack = vec![b];
    while let Some(b) = stack.pop() {
        for st in &b.stmts {
            match st {
                ast::Statement::Instr(i) => {
                    n += 1;
                    if matches!(
                        i.opcode,
                        Opcode::Alloca
                            | Opcode::Brx
                            | Opcode::Tex
                            | Opcode::Tld4
                            | Opcode::Txq
                            | Opcode::Suld
                            | Opcode::Suq
                            | Opcode::Sured
                            | Opcode::Sust
                    ) {
                        ok = false;
                    }
                    let mut names = Vec::new();
                    i.operands.iter().for_each(|o| operand_names(o, &mut names));
                    if names.iter().any(|n| shared.contains(n)) {
                        ok = false;
                    }
                    // Only calls that are inlined (or of other subroutines kept for their
                    // size): not an indirect call (its callee is a register), a system
                    // function or a recursive one, which follow the standard ABI and may
                    // clobber registers this subroutine's callers keep (`lower::OUTLINED_CAL`).
                    if i.opcode == Opcode::Call {
                        let target = i.operands.iter().find(|o| !matches!(o, Operand::List(..)));
                        let inlined = match target {
                            Some(Operand::Name(n)) => {
                                let name = n.text.as_str();
                                funcs.get(name).is_some_and(|g| g.body.is_some())
                                    && !recursive.contains(name)
                            }
                            _ => false,
                        };
                        ok &= inlined;
                    }
                }
                ast::Statement::Var(v) if v.space == StateSpace::Shared => ok = false,
                ast::Statement::Block(inner) => stack.push(inner),
                _ => {}
            }
        }
    }
    (n, ok)
}

/// The size rule (module essay) over `module`: `recursive` are the functions already
/// compiled as subroutines (they count as one call instruction where they are called).
pub(in crate::ir::build) fn outlined_set(
    module: &ast::Module,
    funcs: &HashMap<&str, &ast::Function>,
    recursive: &HashSet<String>,
    fn_ids: &HashMap<String, u64>,
) -> Outlined {
    let mut shared: HashSet<&str> = HashSet::default();
    for it in &module.items {
        if let ast::Item::Var(v) = it {
            if v.space == StateSpace::Shared {
                shared.extend(v.names.iter().map(|n| n.name.text.as_str()));
            }
        }
    }
    // Per defined, non-recursive function: its callees that it would inline, its own size
    // and eligibility.
    let mut callees: HashMap<&str, Vec<&str>> = HashMap::default();
    let mut own: HashMap<&str, (usize, bool)> = HashMap::default();
    // Functions some indirect call may reach (the smaller bound applies to them).
    let mut dispatched: HashSet<&str> = HashSet::default();
    for (&name, f) in funcs {
        let Some(b) = &f.body else { continue };
        if recursive.contains(name) {
            continue;
        }
        let mut out = Vec::new();
        direct_callees(b, &mut out);
        out.retain(|c| !recursive.contains(*c) && funcs.get(c).is_some_and(|g| g.body.is_some()));
        callees.insert(name, out);
        let sig_ok = ExternSig::of(f).is_ok()
            && f.params
                .iter()
                .chain(f.rets.iter().flatten())
                .all(|d| d.space == StateSpace::Param);
        let (n, ok) = own_facts(b, &shared, funcs, recursive);
        own.insert(name, (n, ok && sig_ok));
        let mut found = Vec::new();
        dispatch_callees(b, funcs, fn_ids, &mut HashMap::default(), &mut found);
        dispatched.extend(found.iter().copied());
        if let Some(c) = callees.get_mut(name) {
            c.extend(found.into_iter().filter(|f| !recursive.contains(*f)));
        }
    }
    // Inlined size and eligibility, through inlined callees (no cycles: recursion is out).
    fn total<'a>(
        f: &'a str,
        callees: &HashMap<&'a str, Vec<&'a str>>,
        own: &HashMap<&'a str, (usize, bool)>,
        memo: &mut HashMap<&'a str, (usize, bool)>,
        depth: usize,
    ) -> (usize, bool) {
        if let Some(&r) = memo.get(f) {
            return r;
        }
        let (mut n, mut ok) = own.get(f).copied().unwrap_or((1, false));
        if depth > MAX_DEPTH {
            return (n, false);
        }
        for &c in callees.get(f).into_iter().flatten() {
            let (cn, cok) = total(c, callees, own, memo, depth + 1);
            n = n.saturating_add(cn);
            ok &= cok;
        }
        memo.insert(f, (n, ok));
        (n, ok)
    }
    let mut memo = HashMap::default();
    let mut result = Outlined::default();
    for k in module.functions() {
        let (ast::FuncKind::Entry, Some(b)) = (k.kind, &k.body) else {
            continue;
        };
        // Copies of each function the kernel would inline (paths from the kernel).
        let mut copies: HashMap<&str, usize> = HashMap::default();
        let mut work: Vec<(&str, usize)> = Vec::new();
        let mut top = Vec::new();
        direct_callees(b, &mut top);
        let mut found = Vec::new();
        dispatch_callees(b, funcs, fn_ids, &mut HashMap::default(), &mut found);
        let mine: HashSet<&str> = found.iter().copied().collect();
        top.extend(found);
        work.extend(
            top.into_iter()
                .filter(|c| callees.contains_key(c))
                .map(|c| (c, 0)),
        );
        while let Some((f, depth)) = work.pop() {
            let c = copies.entry(f).or_default();
            *c += 1;
            if depth < MAX_DEPTH && *c <= MAX_INSTRS {
                work.extend(callees[f].iter().map(|&g| (g, depth + 1)));
            }
        }
        let mut chosen: HashSet<String> = HashSet::default();
        for (&f, &n) in &copies {
            let (size, ok) = total(f, &callees, &own, &mut memo, 0);
            let min = if dispatched.contains(f) || mine.contains(f) {
                OUTLINE_MIN_DISPATCH_INSTRS
            } else {
                OUTLINE_MIN_INSTRS
            };
            if ok && n >= OUTLINE_MIN_COPIES && size >= min {
                chosen.insert(f.to_string());
            }
        }
        if !chosen.is_empty() {
            result.all.extend(chosen.iter().cloned());
            result.by_kernel.insert(k.name.text.to_string(), chosen);
        }
    }
    result
}
