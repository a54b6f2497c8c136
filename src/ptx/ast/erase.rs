//! Span erasure: [`Module::without_spans`] is a copy of a module with every span (and the
//! name table) reset, so that two parses of differently laid out text compare equal when they
//! mean the same thing (the round-trip tests parse printed PTX back and compare).
//!
//! In: a module. Out: the copy; nothing but spans and interned name ids changes.

use super::*;

// ---- span erasure (for comparing ASTs structurally, e.g. in the round-trip tests) --------

impl Module {
    /// A copy with every span set to the empty span, so two parses of differently laid out
    /// text compare equal when they mean the same thing.
    pub fn without_spans(&self) -> Module {
        let mut m = self.clone();
        m.span = Span::default();
        m.names = NameTable::default();
        for item in &mut m.items {
            match item {
                Item::Version { span, .. }
                | Item::AddressSize { span, .. }
                | Item::File { span, .. }
                | Item::Pragma { span, .. }
                | Item::Section { span, .. } => *span = Span::default(),
                Item::Target { targets, span } => {
                    *span = Span::default();
                    targets.iter_mut().for_each(clear_name);
                }
                Item::Loc(l) => l.span = Span::default(),
                Item::Alias {
                    alias,
                    aliasee,
                    span,
                } => {
                    *span = Span::default();
                    clear_name(alias);
                    clear_name(aliasee);
                }
                Item::Var(v) => clear_var(v),
                Item::Function(f) => {
                    f.span = Span::default();
                    clear_name(&mut f.name);
                    f.rets.iter_mut().flatten().for_each(clear_var);
                    f.params.iter_mut().for_each(clear_var);
                    for p in &mut f.perf {
                        match p {
                            PerfDirective::MaxNtid(_, s)
                            | PerfDirective::ReqNtid(_, s)
                            | PerfDirective::MinNctaPerSm(_, s)
                            | PerfDirective::MaxNctaPerSm(_, s)
                            | PerfDirective::MaxNreg(_, s)
                            | PerfDirective::Pragma(_, s) => *s = Span::default(),
                        }
                    }
                    if let Some(b) = &mut f.body {
                        clear_block(b);
                    }
                }
            }
        }
        m
    }
}

pub(super) fn clear_name(n: &mut Name) {
    n.span = Span::default();
}

pub(super) fn clear_var(v: &mut VarDecl) {
    v.span = Span::default();
    for d in &mut v.names {
        clear_name(&mut d.name);
        if let Some(i) = &mut d.init {
            clear_init(i);
        }
    }
}

pub(super) fn clear_init(i: &mut Init) {
    match i {
        Init::Imm(_, s) => *s = Span::default(),
        Init::Addr { name, span, .. } => {
            clear_name(name);
            *span = Span::default();
        }
        Init::List(items, s) => {
            *s = Span::default();
            items.iter_mut().for_each(clear_init);
        }
        Init::Fields(fields, s) => {
            *s = Span::default();
            for (k, v) in fields {
                clear_name(k);
                if let FieldValue::Word(w) = v {
                    clear_name(w);
                }
            }
        }
    }
}

pub(super) fn clear_block(b: &mut Block) {
    b.span = Span::default();
    for s in &mut b.stmts {
        match s {
            Statement::Label(n) => clear_name(n),
            Statement::Var(v) => clear_var(v),
            Statement::Block(b) => clear_block(b),
            Statement::Loc(l) => l.span = Span::default(),
            Statement::Pragma(_, s) => *s = Span::default(),
            Statement::Targets {
                name,
                targets,
                span,
                ..
            } => {
                clear_name(name);
                *span = Span::default();
                targets.iter_mut().for_each(clear_name);
            }
            Statement::Prototype {
                name,
                rets,
                params,
                span,
                ..
            } => {
                clear_name(name);
                *span = Span::default();
                rets.iter_mut().flatten().for_each(clear_var);
                params.iter_mut().for_each(clear_var);
            }
            Statement::Instr(i) => {
                i.span = Span::default();
                i.opcode_span = Span::default();
                if let Some(g) = &mut i.guard {
                    clear_name(&mut g.pred);
                }
                i.operands.iter_mut().for_each(clear_operand);
            }
        }
    }
}

pub(super) fn clear_operand(o: &mut Operand) {
    match o {
        Operand::Name(n)
        | Operand::Special { name: n, .. }
        | Operand::Elem { name: n, .. }
        | Operand::Selected { name: n, .. } => clear_name(n),
        Operand::NameOffset { name, span, .. } => {
            clear_name(name);
            *span = Span::default();
        }
        Operand::Imm(_, s) | Operand::Sink(s) => *s = Span::default(),
        Operand::Address(a) => clear_addr(a),
        Operand::Indexed { base, index, span } => {
            clear_name(base);
            clear_addr(index);
            *span = Span::default();
        }
        Operand::Vector(items, s) | Operand::TexArgs(items, s) | Operand::List(items, s) => {
            *s = Span::default();
            items.iter_mut().for_each(clear_operand);
        }
        Operand::Not(inner, s) | Operand::Neg(inner, s) => {
            *s = Span::default();
            clear_operand(inner);
        }
        Operand::PredPair(a, b) => {
            clear_name(a);
            clear_name(b);
        }
    }
}

pub(super) fn clear_addr(a: &mut AddrExpr) {
    a.span = Span::default();
    if let Some(b) = &mut a.base {
        clear_name(b);
    }
}
