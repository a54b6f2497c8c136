//! `.alias fAlias, fAliasee;` (PTX ISA 6.3+, module scope): `fAlias`, a function declared
//! without a body, names the same code as `fAliasee`, a `.func` defined in this module with
//! the same prototype.
//!
//! In: a parsed [`Module`] (before the checker). Out: the same module with the aliases
//! resolved away: every `.alias` item and every bodiless declaration of an alias removed,
//! and every name operand (a `call` target, a function address in `mov`, a `.calltargets`
//! entry) that spelled an alias now spelling its aliasee (the span stays the use's). The
//! checker, the IR builder and everything after see plain calls of the aliasee, which they
//! compile as any call (ptxas 11.8 likewise emits `CAL` to the aliasee's code).
//!
//! Errors (with the `.alias` line): a PTX version below 6.3, an aliasee that is not a `.func`
//! defined in the module, an alias that is not a bodiless `.func` declaration, prototypes
//! that differ, an alias of an alias, an alias given twice.

use crate::error::{Diagnostic, SourceFile};
use crate::ptx::ast::{FuncKind, Function, Item, Module, Name, Operand, Statement, VarDecl};
use std::collections::HashMap;
use std::sync::Arc;

/// Resolve every `.alias` of `m` (see the module essay); the diagnostics are errors.
pub fn resolve_aliases(m: &mut Module, file: &Arc<SourceFile>) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let aliases: Vec<(Name, Name, crate::error::Span)> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Alias {
                alias,
                aliasee,
                span,
            } => Some((alias.clone(), aliasee.clone(), *span)),
            _ => None,
        })
        .collect();
    if aliases.is_empty() {
        return diags;
    }
    if m.version().is_some_and(|v| v < (6, 3)) {
        diags.push(Diagnostic::error(
            file,
            aliases[0].2,
            ".alias requires PTX ISA version 6.3 or later",
        ));
        return diags;
    }
    let find = |id: u32, body: bool| -> Option<&Function> {
        m.functions()
            .find(|f| f.name.id == id && f.body.is_some() == body)
    };
    let mut map: HashMap<u32, Name> = HashMap::new();
    for (alias, aliasee, span) in &aliases {
        let err = |msg: String| Diagnostic::error(file, *span, msg);
        let target = find(aliasee.id, true).filter(|f| f.kind == FuncKind::Func);
        let Some(target) = target else {
            diags.push(err(format!(
                ".alias: '{}' must be a .func defined in this module",
                aliasee.text
            )));
            continue;
        };
        let Some(decl) = find(alias.id, false).filter(|f| f.kind == FuncKind::Func) else {
            diags.push(err(format!(
                ".alias: '{}' must be declared as a .func without a body",
                alias.text
            )));
            continue;
        };
        if find(alias.id, true).is_some() {
            diags.push(err(format!(
                ".alias: '{}' is defined with a body; an alias has none",
                alias.text
            )));
            continue;
        }
        if !same_prototype(decl, target) {
            diags.push(err(format!(
                ".alias: '{}' and '{}' must have the same prototype",
                alias.text, aliasee.text
            )));
            continue;
        }
        if map.insert(alias.id, aliasee.clone()).is_some() {
            diags.push(err(format!(".alias: '{}' is aliased twice", alias.text)));
        }
    }
    if !diags.is_empty() {
        return diags;
    }
    m.items.retain(|i| match i {
        Item::Alias { .. } => false,
        Item::Function(f) => !(f.body.is_none() && map.contains_key(&f.name.id)),
        _ => true,
    });
    for item in &mut m.items {
        if let Item::Function(f) = item {
            if let Some(b) = &mut f.body {
                rename_stmts(&mut b.stmts, &map);
            }
        }
    }
    diags
}

/// Parameter lists agree in count, state space, type, vector width and array shape.
fn same_prototype(a: &Function, b: &Function) -> bool {
    let sig = |ds: &[VarDecl]| -> Vec<String> {
        ds.iter()
            .flat_map(|d| {
                d.names
                    .iter()
                    .map(move |n| format!("{:?} {:?} {:?} {:?}", d.space, d.ty, d.vector, n.dims))
            })
            .collect()
    };
    let rets = |f: &Function| f.rets.as_deref().map(sig).unwrap_or_default();
    rets(a) == rets(b) && sig(&a.params) == sig(&b.params)
}

fn rename_stmts(stmts: &mut [Statement], map: &HashMap<u32, Name>) {
    for s in stmts {
        match s {
            Statement::Instr(ins) => ins.operands.iter_mut().for_each(|o| rename(o, map)),
            Statement::Block(b) => rename_stmts(&mut b.stmts, map),
            Statement::Targets { targets, .. } => {
                for t in targets {
                    rename_name(t, map);
                }
            }
            _ => {}
        }
    }
}

fn rename(o: &mut Operand, map: &HashMap<u32, Name>) {
    match o {
        Operand::Name(n) => rename_name(n, map),
        Operand::Vector(v, _) => v.iter_mut().for_each(|o| rename(o, map)),
        _ => {}
    }
}

fn rename_name(n: &mut Name, map: &HashMap<u32, Name>) {
    if let Some(to) = map.get(&n.id) {
        n.text = to.text.clone();
        n.id = to.id;
    }
}
