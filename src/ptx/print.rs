//! Printing the AST: valid PTX text (`Display`) and a readable structural dump (`dump_ast`).
//!
//! In: an [`ast::Module`]. Out: text. `Display` prints PTX that parses back to the same AST
//! (spans aside): immediates are printed in a form that reparses to the same value (integers in
//! decimal, floats as `0f`/`0d` bit patterns), names verbatim, modifiers in their original
//! order. The dump names every node kind and field explicitly (no spans, so it is stable under
//! whitespace changes) and is what `leafold check --dump-ast` prints.

use crate::ptx::ast::*;
use std::fmt::{self, Display, Formatter, Write};

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for item in &self.items {
            match item {
                Item::Version { major, minor, .. } => writeln!(f, ".version {major}.{minor}")?,
                Item::Target { targets, .. } => {
                    let t: Vec<_> = targets.iter().map(|t| t.text.as_str()).collect();
                    writeln!(f, ".target {}", t.join(", "))?
                }
                Item::AddressSize { size, .. } => writeln!(f, ".address_size {size}")?,
                Item::File {
                    index, path, extra, ..
                } => {
                    write!(f, ".file {index} {}", quote(path))?;
                    for e in extra {
                        write!(f, ", {e}")?;
                    }
                    writeln!(f)?
                }
                Item::Loc(l) => writeln!(f, "{l}")?,
                Item::Pragma { text, .. } => writeln!(f, "{};", pragma(text))?,
                Item::Section { name, body, .. } => writeln!(f, ".section {name} {{{body}}}")?,
                Item::Var(v) => writeln!(f, "{v};")?,
                Item::Function(func) => write!(f, "{func}")?,
                Item::Alias { alias, aliasee, .. } => {
                    writeln!(f, ".alias {}, {};", alias.text, aliasee.text)?
                }
            }
        }
        Ok(())
    }
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn pragma(text: &str) -> String {
    let parts: Vec<_> = text.split('\u{0}').map(quote).collect();
    format!(".pragma {}", parts.join(", "))
}

impl Display for Loc {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".loc {} {} {}", self.file, self.line, self.col)?;
        if !self.extra.is_empty() {
            write!(f, " {}", self.extra)?;
        }
        Ok(())
    }
}

impl Display for Imm {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match *self {
            Imm::Int { value, unsigned } => {
                // Negative values print as `-4`; `[r+-4]` and `x+-4` reparse to the same offset.
                write!(f, "{value}")?;
                if unsigned {
                    f.write_str("U")?;
                }
                Ok(())
            }
            Imm::F32(b) => write!(f, "0f{b:08X}"),
            Imm::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

impl Display for VarDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for l in &self.linkage {
            write!(f, "{} ", l.name())?;
        }
        f.write_str(self.space.name())?;
        for a in &self.attributes {
            match a {
                Attribute::Managed => f.write_str(" .attribute(.managed)")?,
                Attribute::Unified(a, b) => write!(f, " .attribute(.unified({a}, {b}))")?,
            }
        }
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " .{}", self.ty.name())?;
        if let Some(p) = &self.ptr {
            f.write_str(" .ptr")?;
            if let Some(s) = p.space {
                write!(f, " {}", s.name())?;
            }
            if let Some(a) = p.align {
                write!(f, " .align {a}")?;
            }
        }
        for (i, d) in self.names.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(&d.name.text)?;
            if let Some(r) = d.range {
                write!(f, "<{r}>")?;
            }
            for dim in &d.dims {
                match dim {
                    Some(n) => write!(f, "[{n}]")?,
                    None => f.write_str("[]")?,
                }
            }
            if let Some(init) = &d.init {
                write!(f, " = {init}")?;
            }
        }
        Ok(())
    }
}

impl Display for Init {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Init::Imm(v, _) => write!(f, "{v}"),
            Init::Addr {
                name,
                generic,
                offset,
                mask,
                ..
            } => {
                if let Some(m) = mask {
                    write!(f, "0x{m:X}(")?;
                }
                if *generic {
                    write!(f, "generic({})", name.text)?;
                } else {
                    f.write_str(&name.text)?;
                }
                if *offset != 0 {
                    write!(f, "+{offset}")?;
                }
                if mask.is_some() {
                    f.write_str(")")?;
                }
                Ok(())
            }
            Init::Fields(fields, _) => {
                f.write_str("{")?;
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match v {
                        FieldValue::Word(w) => write!(f, "{} = {}", k.text, w.text)?,
                        FieldValue::Int(n) => write!(f, "{} = {n}", k.text)?,
                    }
                }
                f.write_str("}")
            }
            Init::List(items, _) => {
                f.write_str("{")?;
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{it}")?;
                }
                f.write_str("}")
            }
        }
    }
}

fn params(f: &mut Formatter<'_>, ps: &[VarDecl]) -> fmt::Result {
    f.write_str("(")?;
    for (i, p) in ps.iter().enumerate() {
        f.write_str(if i == 0 { "\n\t" } else { ",\n\t" })?;
        write!(f, "{p}")?;
    }
    f.write_str(")")
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for l in &self.linkage {
            write!(f, "{} ", l.name())?;
        }
        f.write_str(match self.kind {
            FuncKind::Entry => ".entry ",
            FuncKind::Func => ".func ",
        })?;
        if let Some(r) = &self.rets {
            params(f, r)?;
            f.write_str(" ")?;
        }
        f.write_str(&self.name.text)?;
        if self.params_parens {
            params(f, &self.params)?;
        }
        if self.noreturn {
            f.write_str(" .noreturn")?;
        }
        for p in &self.perf {
            f.write_str("\n")?;
            match p {
                PerfDirective::MaxNtid(v, _) => write!(f, ".maxntid {}", join(v))?,
                PerfDirective::ReqNtid(v, _) => write!(f, ".reqntid {}", join(v))?,
                PerfDirective::MinNctaPerSm(n, _) => write!(f, ".minnctapersm {n}")?,
                PerfDirective::MaxNctaPerSm(n, _) => write!(f, ".maxnctapersm {n}")?,
                PerfDirective::MaxNreg(n, _) => write!(f, ".maxnreg {n}")?,
                PerfDirective::Pragma(t, _) => write!(f, "{};", pragma(t))?,
            }
        }
        match &self.body {
            Some(b) => {
                f.write_str("\n")?;
                block(f, b, 0)?;
                f.write_str("\n")
            }
            None => f.write_str(";\n"),
        }
    }
}

fn join(v: &[u32]) -> String {
    v.iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn block(f: &mut Formatter<'_>, b: &Block, depth: usize) -> fmt::Result {
    let ind = "\t".repeat(depth);
    writeln!(f, "{ind}{{")?;
    for s in &b.stmts {
        match s {
            Statement::Label(n) => writeln!(f, "{}:", n.text)?,
            Statement::Var(v) => writeln!(f, "{ind}\t{v};")?,
            Statement::Instr(i) => writeln!(f, "{ind}\t{i}")?,
            Statement::Block(b) => {
                block(f, b, depth + 1)?;
                f.write_str("\n")?
            }
            Statement::Loc(l) => writeln!(f, "{ind}\t{l}")?,
            Statement::Pragma(t, _) => writeln!(f, "{ind}\t{};", pragma(t))?,
            Statement::Targets {
                name,
                calls,
                targets,
                ..
            } => {
                let t: Vec<_> = targets.iter().map(|t| t.text.as_str()).collect();
                let kw = if *calls {
                    ".calltargets"
                } else {
                    ".branchtargets"
                };
                writeln!(f, "{}: {kw} {};", name.text, t.join(", "))?
            }
            Statement::Prototype {
                name,
                rets,
                params: ps,
                noreturn,
                ..
            } => {
                write!(f, "{ind}{}: .callprototype ", name.text)?;
                if let Some(r) = rets {
                    params(f, r)?;
                }
                f.write_str(" _ ")?;
                params(f, ps)?;
                if *noreturn {
                    f.write_str(" .noreturn")?;
                }
                writeln!(f, ";")?
            }
        }
    }
    write!(f, "{ind}}}")
}

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{}{} ", if g.negated { "!" } else { "" }, g.pred.text)?;
        }
        f.write_str(self.opcode.name())?;
        for m in &self.mods {
            write!(f, ".{}", m.text())?;
        }
        for (i, o) in self.operands.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{o}")?;
        }
        f.write_str(";")
    }
}

fn list(f: &mut Formatter<'_>, open: &str, items: &[Operand], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{o}")?;
    }
    f.write_str(close)
}

impl Display for AddrExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.base {
            Some(b) if self.offset == 0 => f.write_str(&b.text),
            Some(b) => write!(f, "{}+{}", b.text, self.offset),
            None => write!(f, "{}", self.offset),
        }
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Name(n) => f.write_str(&n.text),
            Operand::Special { name, comp } => {
                f.write_str(&name.text)?;
                if let Some(c) = comp {
                    write!(f, ".{}", c.name())?;
                }
                Ok(())
            }
            Operand::Elem { name, comp } => write!(f, "{}.{}", name.text, comp.name()),
            Operand::Selected { name, sel } => write!(f, "{}.{sel}", name.text),
            Operand::Imm(v, _) => write!(f, "{v}"),
            Operand::Address(a) => write!(f, "[{a}]"),
            Operand::Indexed { base, index, .. } => write!(f, "{}[{index}]", base.text),
            Operand::NameOffset { name, offset, .. } => write!(f, "{}+{offset}", name.text),
            Operand::Vector(v, _) => list(f, "{", v, "}"),
            Operand::TexArgs(v, _) => list(f, "[", v, "]"),
            Operand::List(v, _) => list(f, "(", v, ")"),
            Operand::Not(o, _) => write!(f, "!{o}"),
            Operand::Neg(o, _) => write!(f, "-{o}"),
            Operand::PredPair(a, b) => write!(f, "{}|{}", a.text, b.text),
            Operand::Sink(_) => f.write_str("_"),
        }
    }
}

// ---- the structural dump ---------------------------------------------------------------------

/// A stable, readable dump of the AST (no spans), one node per line.
pub fn dump_ast(m: &Module) -> String {
    let mut out = String::new();
    out.push_str("module\n");
    for item in &m.items {
        dump_item(&mut out, item);
    }
    out
}

fn dump_item(out: &mut String, item: &Item) {
    let _ = match item {
        Item::Version { major, minor, .. } => writeln!(out, "  version {major}.{minor}"),
        Item::Target { targets, .. } => {
            let t: Vec<_> = targets.iter().map(|t| t.text.as_str()).collect();
            writeln!(out, "  target {}", t.join(", "))
        }
        Item::AddressSize { size, .. } => writeln!(out, "  address_size {size}"),
        Item::File {
            index, path, extra, ..
        } => {
            writeln!(out, "  file {index} {} extra={extra:?}", quote(path))
        }
        Item::Loc(l) => writeln!(out, "  loc {} {} {} {:?}", l.file, l.line, l.col, l.extra),
        Item::Pragma { text, .. } => writeln!(out, "  pragma {text:?}"),
        Item::Section { name, body, .. } => {
            writeln!(out, "  section {name} ({} bytes)", body.len())
        }
        Item::Alias { alias, aliasee, .. } => {
            writeln!(out, "  alias {} = {}", alias.text, aliasee.text)
        }
        Item::Var(v) => {
            out.push_str("  ");
            dump_var(out, v);
            Ok(())
        }
        Item::Function(func) => {
            dump_function(out, func);
            Ok(())
        }
    };
}

fn dump_var(out: &mut String, v: &VarDecl) {
    out.push_str("var");
    for l in &v.linkage {
        let _ = write!(out, " {}", l.name());
    }
    let _ = write!(out, " space={} type={}", v.space.name(), v.ty.name());
    if let Some(n) = v.vector {
        let _ = write!(out, " vec={n}");
    }
    if let Some(a) = v.align {
        let _ = write!(out, " align={a}");
    }
    if let Some(p) = &v.ptr {
        let _ = write!(
            out,
            " ptr(space={}, align={:?})",
            p.space.map(|s| s.name()).unwrap_or("-"),
            p.align
        );
    }
    for a in &v.attributes {
        let _ = write!(out, " attr={a:?}");
    }
    for d in &v.names {
        let _ = write!(out, " name={}", d.name.text);
        if let Some(r) = d.range {
            let _ = write!(out, "<{r}>");
        }
        if !d.dims.is_empty() {
            // An omitted dimension shows the size the initializer gives it in parentheses.
            let dims: Vec<String> = d
                .dims
                .iter()
                .zip(d.resolved_dims())
                .map(|(written, resolved)| match (written, resolved) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(n)) => format!("({n})"),
                    (None, None) => String::new(),
                })
                .collect();
            let _ = write!(out, " dims=[{}]", dims.join("]["));
        }
        if let Some(i) = &d.init {
            let _ = write!(out, " init=");
            dump_init(out, i);
        }
    }
    out.push('\n');
}

fn dump_imm(out: &mut String, v: &Imm) {
    let _ = match v {
        Imm::Int { value, unsigned } => {
            write!(out, "int({value}{})", if *unsigned { "U" } else { "" })
        }
        Imm::F32(b) => write!(out, "f32(0x{b:08x}={})", f32::from_bits(*b)),
        Imm::F64(b) => write!(out, "f64(0x{b:016x}={})", f64::from_bits(*b)),
    };
}

fn dump_init(out: &mut String, i: &Init) {
    match i {
        Init::Imm(v, _) => dump_imm(out, v),
        Init::Addr {
            name,
            generic,
            offset,
            mask,
            ..
        } => {
            let _ = write!(
                out,
                "addr({}{}{:+}{})",
                if *generic { "generic " } else { "" },
                name.text,
                offset,
                mask.map(|m| format!(" mask=0x{m:x}")).unwrap_or_default()
            );
        }
        Init::Fields(fields, _) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(k, v)| match v {
                    FieldValue::Word(w) => format!("{}={}", k.text, w.text),
                    FieldValue::Int(n) => format!("{}={n}", k.text),
                })
                .collect();
            let _ = write!(out, "fields({})", parts.join(", "));
        }
        Init::List(items, _) => {
            out.push('{');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                dump_init(out, it);
            }
            out.push('}');
        }
    }
}

fn dump_function(out: &mut String, func: &Function) {
    let kind = match func.kind {
        FuncKind::Entry => "entry",
        FuncKind::Func => "func",
    };
    let _ = write!(out, "  {kind} {}", func.name.text);
    for l in &func.linkage {
        let _ = write!(out, " {}", l.name());
    }
    if func.noreturn {
        out.push_str(" noreturn");
    }
    out.push('\n');
    if let Some(r) = &func.rets {
        for p in r {
            out.push_str("    ret ");
            dump_var(out, p);
        }
    }
    for p in &func.params {
        out.push_str("    param ");
        dump_var(out, p);
    }
    for p in &func.perf {
        let _ = match p {
            PerfDirective::MaxNtid(v, _) => writeln!(out, "    perf maxntid {v:?}"),
            PerfDirective::ReqNtid(v, _) => writeln!(out, "    perf reqntid {v:?}"),
            PerfDirective::MinNctaPerSm(n, _) => writeln!(out, "    perf minnctapersm {n}"),
            PerfDirective::MaxNctaPerSm(n, _) => writeln!(out, "    perf maxnctapersm {n}"),
            PerfDirective::MaxNreg(n, _) => writeln!(out, "    perf maxnreg {n}"),
            PerfDirective::Pragma(t, _) => writeln!(out, "    perf pragma {t:?}"),
        };
    }
    match &func.body {
        Some(b) => dump_block(out, b, 2),
        None => out.push_str("    (declaration)\n"),
    }
}

fn dump_block(out: &mut String, b: &Block, depth: usize) {
    let ind = "  ".repeat(depth);
    let _ = writeln!(out, "{ind}block");
    for s in &b.stmts {
        let _ = match s {
            Statement::Label(n) => writeln!(out, "{ind}  label {}", n.text),
            Statement::Var(v) => {
                out.push_str(&ind);
                out.push_str("  ");
                dump_var(out, v);
                Ok(())
            }
            Statement::Block(b) => {
                dump_block(out, b, depth + 1);
                Ok(())
            }
            Statement::Loc(l) => writeln!(out, "{ind}  loc {} {} {}", l.file, l.line, l.col),
            Statement::Pragma(t, _) => writeln!(out, "{ind}  pragma {t:?}"),
            Statement::Targets {
                name,
                calls,
                targets,
                ..
            } => {
                let t: Vec<_> = targets.iter().map(|t| t.text.as_str()).collect();
                let kw = if *calls {
                    "calltargets"
                } else {
                    "branchtargets"
                };
                writeln!(out, "{ind}  {kw} {} = {}", name.text, t.join(", "))
            }
            Statement::Prototype {
                name, rets, params, ..
            } => {
                let _ = writeln!(out, "{ind}  prototype {}", name.text);
                for p in rets.iter().flatten() {
                    let _ = write!(out, "{ind}    ret ");
                    dump_var(out, p);
                }
                for p in params {
                    let _ = write!(out, "{ind}    param ");
                    dump_var(out, p);
                }
                Ok(())
            }
            Statement::Instr(i) => {
                let _ = write!(out, "{ind}  instr ");
                if let Some(g) = &i.guard {
                    let _ = write!(out, "@{}{} ", if g.negated { "!" } else { "" }, g.pred.text);
                }
                out.push_str(i.opcode.name());
                out.push_str(" [");
                for (k, m) in i.mods.iter().enumerate() {
                    if k > 0 {
                        out.push(' ');
                    }
                    let _ = match m {
                        Modifier::Type(t) => write!(out, "type:{}", t.name()),
                        Modifier::Space(s) => write!(out, "space:{}", &s.name()[1..]),
                        Modifier::Cmp(c) => write!(out, "cmp:{}", c.name()),
                        Modifier::Round(r) => write!(out, "round:{}", r.name()),
                        Modifier::Vec(n) => write!(out, "vec:{n}"),
                        Modifier::Flag(fl) => write!(out, "flag:{fl}"),
                        Modifier::Other(o) => write!(out, "other:{o}"),
                    };
                }
                out.push(']');
                for o in &i.operands {
                    out.push(' ');
                    dump_operand(out, o);
                }
                out.push('\n');
                Ok(())
            }
        };
    }
}

fn dump_operand(out: &mut String, o: &Operand) {
    let seq = |out: &mut String, tag: &str, v: &[Operand]| {
        out.push_str(tag);
        out.push('(');
        for (k, x) in v.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            dump_operand(out, x);
        }
        out.push(')');
    };
    let _ = match o {
        Operand::Name(n) => write!(out, "name({})", n.text),
        Operand::Special { name, comp } => write!(
            out,
            "special({}{})",
            name.text,
            comp.map(|c| format!(".{}", c.name())).unwrap_or_default()
        ),
        Operand::Elem { name, comp } => write!(out, "elem({}.{})", name.text, comp.name()),
        Operand::Selected { name, sel } => write!(out, "selected({}.{sel})", name.text),
        Operand::NameOffset { name, offset, .. } => {
            write!(out, "name_offset({}{offset:+})", name.text)
        }
        Operand::Imm(v, _) => {
            dump_imm(out, v);
            Ok(())
        }
        Operand::Address(a) => write!(
            out,
            "addr({}{:+})",
            a.base.as_ref().map(|b| b.text.as_str()).unwrap_or(""),
            a.offset
        ),
        Operand::Indexed { base, index, .. } => write!(
            out,
            "indexed({}[{}{:+}])",
            base.text,
            index.base.as_ref().map(|b| b.text.as_str()).unwrap_or(""),
            index.offset
        ),
        Operand::Vector(v, _) => {
            seq(out, "vec", v);
            Ok(())
        }
        Operand::TexArgs(v, _) => {
            seq(out, "tex", v);
            Ok(())
        }
        Operand::List(v, _) => {
            seq(out, "list", v);
            Ok(())
        }
        Operand::Not(x, _) => {
            out.push_str("not(");
            dump_operand(out, x);
            out.push(')');
            Ok(())
        }
        Operand::Neg(x, _) => {
            out.push_str("neg(");
            dump_operand(out, x);
            out.push(')');
            Ok(())
        }
        Operand::PredPair(a, b) => write!(out, "pair({}|{})", a.text, b.text),
        Operand::Sink(_) => write!(out, "sink"),
    };
}
