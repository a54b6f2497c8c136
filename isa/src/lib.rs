//! The SM50 instruction set as data, and the generator that turns it into Rust.
//!
//! In: `sm50.isa` (next to this crate's `Cargo.toml`), a line-oriented description with one
//! `form` row per encoding form. Out: the Rust source of `sm50_gen.rs` (written by leafold's
//! `build.rs` into `$OUT_DIR`), which holds the `Form` and `Field` enums, the per-form field
//! tables, and one generated function each for encode, decode, print and operand visiting.
//! Because all four are generated from the same row, they cannot disagree about a bit.
//!
//! The description language (see the header of `sm50.isa` for the full grammar):
//! - `class NAME lat=fixed|var ver=TAG [flow=F] [transfer=yes] [fence=yes|clock] [stall=N]
//!   [cycles=N] [space=S] [access=A] [sm53=yes] [predicable=yes] [source=yes] [dual=second]`:
//!   starts a family; the `field` and `print` lines that follow are shared by the forms of
//!   the class. The optional
//!   attributes are what the passes need to know of the class ([`Props`]): its control flow,
//!   whether it ends a block, whether it is a scheduling fence, the stall ptxas always puts
//!   after it, its modelled variable latency, the memory it accesses and how, whether it
//!   exists only on sm_53, whether if-conversion may guard it, whether the address slice
//!   takes its result as data and whether ptxas pairs it as the second of a dual issue.
//!   Each form also gets its class's number (`class_id`, in order of first appearance).
//! - `field NAME KIND BITS [def|use] [A|B|C] [w2|w4|wmem=F|wlog=F|wflag=F|wtab=F:W/W/..|wsum=N+F+..]`:
//!   a named bit field (`wtab`: register count looked up by field F's value; `wsum`: N plus
//!   one per listed field that is not zero, or, written `F>M`, exceeds M; `wtab=F:T?G:T2`:
//!   table T2 instead of T when field G is not zero).
//! - `print MNEMONIC | OPERAND , OPERAND ...`: the nvdisasm text template.
//! - `form SUFFIX OPC/MASK [B=reg|cbuf|imm20s|imm20u|f32i|f64i|imm32]`: one encoding form;
//!   `OPC/MASK` are the fixed bits 48..63; `field`/`print` lines after it belong to it alone.
//! - `check COND`: a cross-field condition every valid encoding of the form satisfies.
//!
//! Invariants the generator checks (it panics, failing the build, when the data is wrong):
//! no two fields of one form overlap, no field overlaps the fixed opcode bits, no field is
//! wider than 32 bits (the compiler stores field values in 32 bits), every name a template
//! uses is a field of the form.

use std::collections::BTreeSet;
use std::fmt::Write;

mod parse;
pub use parse::*;

/// The ISA description shipped with this crate.
pub const SM50_ISA: &str = include_str!("../sm50.isa");

/// How a field's value is interpreted.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// General register, 255 = RZ.
    Reg,
    /// Predicate register, 7 = PT.
    Pred,
    /// One bit.
    Flag,
    /// Unsigned number, printed in hex.
    U,
    /// Two's-complement number of the field's width, printed as signed hex.
    S,
    /// Enumeration: printed names per value; `None` = invalid encoding.
    Enum(Vec<Option<String>>),
    /// Must hold exactly this value (decode rejects anything else).
    Const(u64),
    /// A top-level `enum NAME` (resolved to `Enum` while parsing).
    Named(String),
}

/// A named bit field: `(start, len)` pieces, low piece first.
#[derive(Clone, Debug)]
pub struct FieldDef {
    pub name: String,
    pub kind: Kind,
    pub bits: Vec<(u32, u32)>,
    /// `Some(true)` = register/predicate written, `Some(false)` = read.
    pub def: Option<bool>,
    /// Reuse slot 0 (A), 1 (B), 2 (C).
    pub reuse: Option<u8>,
    /// Register count: a constant, or computed from another field.
    pub width: Width,
    /// `defuse`: a written register that is also read first (FFMA32I's C is its Rd).
    pub also_use: bool,
    /// `consts=N,N,..`: a constant name per value of an enumerated field (`?`: none), for
    /// values whose printed names repeat (TEXS's `.LZ` of several targets): `values_module`
    /// emits them beside the printed names.
    pub consts: Vec<Option<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Width {
    One,
    Const(u8),
    /// Memory size code (0..4 → 1, 5 → 2, 6/7 → 4).
    Mem(String),
    /// log2 bytes (3 → 2 registers, else 1).
    Log(String),
    /// A flag field: set → 2 registers.
    Flag2(String),
    /// TEXS/TLDS first destination: 2 registers when the second destination (the other
    /// field) is not RZ or the component mask names two components (mask ≥ 4), else 1.
    TexLo(String, String),
    /// TEXS/TLDS second destination: the fourth component (mask 4 = RGBA) makes it a pair.
    TexHi(String),
    /// TEX: one register per bit set in a component-mask field.
    Popc(String),
    /// Looked up by another field's value in a table (values past its end → 1).
    Table(String, Vec<u8>),
    /// As `Table`, with a second table used when a flag field is set (`wtab=F:W/..?G:W/..`):
    /// TXD's coordinates, where `.AOFFI` adds a word after them on the non-array targets.
    TableIf(String, Vec<u8>, String, Vec<u8>),
    /// A base count plus one register for each listed field that is not zero (`F`) or
    /// exceeds a number (`F>N`), at least one: TLD4's rb holds the handle (`.B`), then the
    /// offsets, then the reference.
    Sum(u8, Vec<String>),
}

impl FieldDef {
    pub fn bit_len(&self) -> u32 {
        self.bits.iter().map(|b| b.1).sum()
    }
}

/// One encoding form.
#[derive(Clone, Debug)]
pub struct FormDef {
    pub name: String,
    pub class: String,
    pub opc: u64,
    pub mask: u64,
    pub variable: bool,
    pub verified: String,
    pub fields: Vec<FieldDef>,
    /// The class's properties for the passes (`flow=`, `transfer=`, ... on the class line).
    pub props: Props,
    pub mnemonic: String,
    pub operands: Vec<String>,
    /// Conditions every valid encoding satisfies (`check` lines): decode rejects the rest.
    pub checks: Vec<String>,
}

/// What the passes need to know of a class, from the optional attributes of its `class`
/// line; every attribute left out takes the default of [`Props::default`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Props {
    /// `flow=`: how the class takes part in control flow (`Flow::` variant name).
    pub flow: String,
    /// `transfer=yes`: a control transfer; the next instruction starts a block.
    pub transfer: bool,
    /// `fence=yes|clock`: stays in place relative to every instruction of its block (`clock`:
    /// only when it reads a clock or timer) (`Fence::` variant name).
    pub fence: String,
    /// `stall=N`: the stall ptxas always puts after it (1: no minimum of its own).
    pub min_stall: u8,
    /// `cycles=N`: modelled cycles from issue to result when the latency is variable.
    pub cycles: u16,
    /// `space=`: the memory its address or handle names (`MemSpace::` variant name).
    pub space: String,
    /// `access=load|store|atomic|query`: what it does to that memory (`MemAccess::` variant name).
    pub access: String,
    /// `sm53=yes`: the form exists only on sm_53.
    pub sm53: bool,
    /// `predicable=yes`: if-conversion may put it under a guard it adds.
    pub predicable: bool,
    /// `source=yes`: its result is data the address slice takes in without following.
    pub source: bool,
    /// `dual=second`: ptxas pairs it as the second instruction of a dual issue.
    pub dual_second: bool,
}

impl Default for Props {
    fn default() -> Props {
        Props {
            flow: "Other".into(),
            transfer: false,
            fence: "No".into(),
            min_stall: 1,
            cycles: 20,
            space: "None".into(),
            access: "None".into(),
            sm53: false,
            predicable: false,
            source: false,
            dual_second: false,
        }
    }
}

fn camel(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c == '_' || c == '.' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Rust expression extracting field `fd` from `w`.
fn extract(fd: &FieldDef) -> String {
    let mut parts = Vec::new();
    let mut at = 0;
    for &(s, l) in &fd.bits {
        parts.push(format!("(((w >> {s}) & {:#x}) << {at})", (1u64 << l) - 1));
        at += l;
    }
    parts.join(" | ")
}

/// Rust statement inserting value `v` into `w` for field `fd`.
fn insert(fd: &FieldDef, v: &str) -> String {
    let mut parts = Vec::new();
    let mut at = 0;
    for &(s, l) in &fd.bits {
        parts.push(format!(
            "w |= ((({v}) >> {at}) & {:#x}) << {s};",
            (1u64 << l) - 1
        ));
        at += l;
    }
    parts.join(" ")
}

/// Compile a condition `a&!b&c=3&d!=7` into a Rust boolean expression.
fn cond_expr(form: &FormDef, c: &str) -> String {
    if c.contains('|') {
        let alts: Vec<String> = c
            .split('|')
            .map(|a| format!("({})", cond_expr(form, a)))
            .collect();
        return alts.join(" || ");
    }
    c.split('&')
        .map(|t| {
            let t = t.trim();
            if let Some((a, b)) = t.split_once("!=") {
                format!("({} != {})", fv(form, a), parse_num(b))
            } else if let Some((a, b)) = t.split_once('=') {
                format!("({} == {})", fv(form, a), parse_num(b))
            } else if let Some(a) = t.strip_prefix('!') {
                format!("({} == 0)", fv(form, a))
            } else {
                format!("({} != 0)", fv(form, t))
            }
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

fn parse_num(s: &str) -> u64 {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).expect("hex number")
    } else {
        s.parse().expect("number")
    }
}

fn slot(form: &FormDef, name: &str) -> usize {
    form.fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("form {}: no field {name}", form.name))
}

fn fv(form: &FormDef, name: &str) -> String {
    format!("u64::from(i.f[{}])", slot(form, name))
}

fn field<'a>(form: &'a FormDef, name: &str) -> &'a FieldDef {
    &form.fields[slot(form, name)]
}

/// Compile one template piece list (text with `{...}` tokens) into statements appending
/// to `s`.
fn compile_pieces(form: &FormDef, tpl: &str, out: &mut String) {
    // `{reuse:NAME}` moves a register's `.reuse` after suffixes such as `.H1`.
    let late_reuse = |name: &str| tpl.contains(&format!("{{reuse:{name}}}"));
    let mut rest = tpl;
    while !rest.is_empty() {
        if let Some(p) = rest.find('{') {
            if p > 0 {
                writeln!(out, "s.push_str({:?});", &rest[..p]).unwrap();
            }
            let e = rest[p..].find('}').expect("unclosed {") + p;
            compile_token(form, &rest[p + 1..e], &late_reuse, out);
            rest = &rest[e + 1..];
        } else {
            writeln!(out, "s.push_str({rest:?});").unwrap();
            break;
        }
    }
}

fn compile_token(form: &FormDef, tok: &str, late_reuse: &dyn Fn(&str) -> bool, out: &mut String) {
    if let Some((c, text)) = tok.split_once('?') {
        writeln!(out, "if {} {{ s.push_str({text:?}); }}", cond_expr(form, c)).unwrap();
        return;
    }
    let args: Vec<&str> = tok.split(':').collect();
    let a = |k: usize| fv(form, args[k]);
    match args[0] {
        "B" => {
            // The B operand of a reg/cbuf/imm form.
            if let Some(rb) = form.fields.iter().find(|f| f.name == "rb") {
                let r = match rb.reuse {
                    Some(k) if !late_reuse("B") => format!("reuse & {} != 0", 1 << k),
                    _ => "false".to_string(),
                };
                writeln!(out, "rt::reg(s, {}, {r});", fv(form, "rb")).unwrap();
            } else if form.fields.iter().any(|f| f.name == "cbks") {
                writeln!(
                    out,
                    "rt::cbuf_spaced(s, {}, {});",
                    fv(form, "cbks"),
                    fv(form, "cbo")
                )
                .unwrap();
            } else if form.fields.iter().any(|f| f.name == "cbk") {
                writeln!(
                    out,
                    "rt::cbuf(s, {}, {});",
                    fv(form, "cbk"),
                    fv(form, "cbo")
                )
                .unwrap();
            } else if let Some(f) = form.fields.iter().find(|f| f.name.starts_with("imm_")) {
                let v = fv(form, &f.name);
                let call = match &f.name[4..] {
                    "imm20s" => format!("rt::shex(s, rt::sext({v}, 20))"),
                    "imm20n" => format!("rt::neg_suffix(s, rt::sext({v}, 20))"),
                    "imm20u" | "imm32" | "imm16" => format!("rt::hex(s, {v})"),
                    "f32i" => format!("rt::f32(s, ({v} as u32) << 12)"),
                    "f64i" => format!("rt::f64(s, {v} << 44)"),
                    k => panic!("B kind {k}"),
                };
                writeln!(out, "{call};").unwrap();
            } else {
                panic!("form {}: {{B}} without a B group", form.name);
            }
        }
        // Texture instructions print their control word's reuse bits 0-1 as a phase suffix.
        "phase" => writeln!(
            out,
            "s.push_str(match reuse & 3 {{ 1 => \".T\", 2 => \".P\", 3 => \".INVALIDPHASE3\", _ => \"\" }});"
        )
        .unwrap(),
        // `.reuse` by control-word slot number, for an operand that is not its own field
        // (FFMA32I's C operand is its Rd).
        "reuseslot" => writeln!(
            out,
            "if reuse & {} != 0 {{ s.push_str(\".reuse\"); }}",
            1u32 << args[1].parse::<u32>().expect("reuse slot number")
        )
        .unwrap(),
        // A register's `.reuse`, placed explicitly (B = the B-operand register, if any).
        "reuse" => {
            if args[1] == "B" {
                if let Some(k) = form
                    .fields
                    .iter()
                    .find(|f| f.name == "rb")
                    .and_then(|f| f.reuse)
                {
                    writeln!(
                        out,
                        "if reuse & {} != 0 {{ s.push_str(\".reuse\"); }}",
                        1 << k
                    )
                    .unwrap();
                }
            } else if let Some(k) = field(form, args[1]).reuse {
                writeln!(
                    out,
                    "if reuse & {} != 0 {{ s.push_str(\".reuse\"); }}",
                    1 << k
                )
                .unwrap();
            }
        }
        // Memory address [Ra+off] with a signed offset of `bits` bits (nvdisasm never
        // prints `.reuse` inside brackets).
        "mem" => writeln!(out, "rt::mem(s, {}, {}, {}, false);", a(1), a(2), args[3]).unwrap(),
        // A bare register address `[Ra]` (surface instructions: no offset).
        "addr" => writeln!(out, "rt::mem(s, {}, 0, 32, false);", a(1)).unwrap(),
        // Constant bank with nvdisasm's space before the offset (XMAD's cbuf form).
        "cbufsp" => writeln!(out, "rt::cbuf_spaced(s, {}, {});", a(1), a(2)).unwrap(),
        // Constant bank c[bank][off*4].
        "cbuf" => writeln!(out, "rt::cbuf(s, {}, {});", a(1), a(2)).unwrap(),
        // Word-scaled offset (ATOMS).
        "mem4" => writeln!(out, "rt::mem4(s, {}, {}, {});", a(1), a(2), args[3]).unwrap(),
        // Indexed constant c[bank][Ra+off].
        "cbufr" => writeln!(
            out,
            "rt::cbufr(s, {}, {}, {}, reuse & 1 != 0);",
            a(1),
            a(2),
            a(3)
        )
        .unwrap(),
        "target" => writeln!(
            out,
            "rt::shex(s, addr.wrapping_add(8).wrapping_add(rt::sext({}, 24)));",
            a(1)
        )
        .unwrap(),
        "shex" => writeln!(
            out,
            "rt::shex(s, rt::sext({}, {}));",
            a(1),
            field(form, args[1]).bit_len()
        )
        .unwrap(),
        "hex" => writeln!(out, "rt::hex(s, {});", a(1)).unwrap(),
        "sbset" => writeln!(out, "rt::sb_set(s, {});", a(1)).unwrap(),
        "dec" => writeln!(out, "s.push_str(&{}.to_string());", a(1)).unwrap(),
        "f32" => writeln!(out, "rt::f32(s, {} as u32);", a(1)).unwrap(),
        "x4" => writeln!(
            out,
            "rt::shex(s, rt::sext({}, {}) * 4);",
            a(1),
            field(form, args[1]).bit_len()
        )
        .unwrap(),
        // The register after the next (the swap half of a 64-bit CAS operand pair).
        "plus2" => writeln!(
            out,
            "rt::reg(s, if {0} == 255 {{ 255 }} else {{ {0} + 2 }}, false);",
            a(1)
        )
        .unwrap(),
        "plus1" => writeln!(
            out,
            "rt::reg(s, if {0} == 255 {{ 255 }} else {{ {0} + 1 }}, false);",
            a(1)
        )
        .unwrap(),
        name => {
            let fd = field(form, name);
            let v = fv(form, name);
            match &fd.kind {
                Kind::Reg => {
                    let r = match fd.reuse {
                        Some(k) if !late_reuse(name) => format!("reuse & {} != 0", 1 << k),
                        _ => "false".into(),
                    };
                    writeln!(out, "rt::reg(s, {v}, {r});").unwrap();
                }
                Kind::Pred => writeln!(out, "rt::pred(s, {v});").unwrap(),
                Kind::Enum(_) => {
                    writeln!(
                        out,
                        "s.push_str(ENUM_{}_{}[{v} as usize].unwrap_or(\"\"));",
                        form.name,
                        fd.name.to_uppercase()
                    )
                    .unwrap();
                }
                Kind::U | Kind::Flag | Kind::Const(_) | Kind::Named(_) => {
                    writeln!(out, "rt::hex(s, {v});").unwrap()
                }
                Kind::S => writeln!(out, "rt::shex(s, rt::sext({v}, {}));", fd.bit_len()).unwrap(),
            }
        }
    }
}

/// Generate `sm50_gen.rs` from the shipped description.
pub fn generate() -> String {
    generate_from(SM50_ISA)
}

/// Generate from any description text (tests use small ones).
pub fn generate_from(src: &str) -> String {
    let forms = parse(src);
    let mut o = String::new();
    let max_fields = forms.iter().map(|f| f.fields.len()).max().unwrap_or(0);
    writeln!(
        o,
        "// @generated by leafold-isa from isa/sm50.isa. Do not edit."
    )
    .unwrap();
    writeln!(
        o,
        "/// Most fields any form has.\npub const MAX_FIELDS: usize = {max_fields};"
    )
    .unwrap();

    // Form enum.
    writeln!(o, "/// Every encoding form in `isa/sm50.isa`.\n#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n#[allow(non_camel_case_types)]\npub enum Form {{").unwrap();
    for f in &forms {
        writeln!(o, "    {},", f.name).unwrap();
    }
    writeln!(o, "}}").unwrap();

    // Field enum: union of names.
    let names: BTreeSet<&str> = forms
        .iter()
        .flat_map(|f| f.fields.iter().map(|d| d.name.as_str()))
        .collect();
    writeln!(o, "/// Every field name any form uses.\n#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub enum Field {{").unwrap();
    for n in &names {
        writeln!(o, "    {},", camel(n)).unwrap();
    }
    writeln!(o, "}}").unwrap();
    writeln!(
        o,
        "impl Field {{ pub fn name(self) -> &'static str {{ match self {{"
    )
    .unwrap();
    for n in &names {
        writeln!(o, "    Field::{} => {n:?},", camel(n)).unwrap();
    }
    writeln!(o, "}} }} }}").unwrap();

    // Enum name tables.
    for f in &forms {
        for fd in &f.fields {
            if let Kind::Enum(ns) = &fd.kind {
                let items: Vec<String> = ns
                    .iter()
                    .map(|n| match n {
                        Some(n) if n == "-" => "Some(\"\")".into(),
                        Some(n) => format!("Some({n:?})"),
                        None => "None".into(),
                    })
                    .collect();
                writeln!(
                    o,
                    "#[allow(dead_code)]\nconst ENUM_{}_{}: [Option<&str>; {}] = [{}];",
                    f.name,
                    fd.name.to_uppercase(),
                    ns.len(),
                    items.join(", ")
                )
                .unwrap();
            }
        }
    }

    values_module(&mut o, &forms);

    // Field tables.
    writeln!(
        o,
        "/// All forms with their fields, in `Form` order.\npub static FORMS: &[FormInfo] = &["
    )
    .unwrap();
    // Class numbers, in order of first appearance.
    let mut classes: Vec<&str> = Vec::new();
    for f in &forms {
        let p = &f.props;
        let class_id = match classes.iter().position(|c| *c == f.class) {
            Some(i) => i,
            None => {
                classes.push(&f.class);
                classes.len() - 1
            }
        };
        writeln!(o, "FormInfo {{ form: Form::{}, name: {:?}, class: {:?}, class_id: {class_id}, opcode: {:#018x}, mask: {:#018x}, variable_latency: {}, verified: {:?}, props: Props {{ flow: Flow::{}, transfer: {}, fence: Fence::{}, min_stall: {}, cycles: {}, space: MemSpace::{}, access: MemAccess::{}, sm53: {}, predicable: {}, source: {}, dual_second: {} }}, fields: &[", f.name, f.name, f.class, f.opc, f.mask, f.variable, f.verified, p.flow, p.transfer, p.fence, p.min_stall, p.cycles, p.space, p.access, p.sm53, p.predicable, p.source, p.dual_second).unwrap();
        for fd in &f.fields {
            let kind = match &fd.kind {
                Kind::Reg => "FieldKind::Reg".to_string(),
                Kind::Pred => "FieldKind::Pred".into(),
                Kind::Flag => "FieldKind::Flag".into(),
                Kind::U => "FieldKind::Unsigned".into(),
                Kind::S => "FieldKind::Signed".into(),
                Kind::Enum(_) => format!(
                    "FieldKind::Enum(&ENUM_{}_{})",
                    f.name,
                    fd.name.to_uppercase()
                ),
                Kind::Const(v) => format!("FieldKind::Const({v:#x})"),
                Kind::Named(_) => unreachable!("resolved while parsing"),
            };
            let bits: Vec<String> = fd.bits.iter().map(|(s, l)| format!("({s}, {l})")).collect();
            writeln!(
                o,
                "    FieldInfo {{ field: Field::{}, kind: {kind}, bits: &[{}], len: {} }},",
                camel(&fd.name),
                bits.join(", "),
                fd.bit_len()
            )
            .unwrap();
        }
        writeln!(o, "] }},").unwrap();
    }
    writeln!(o, "];").unwrap();

    // Decode: most specific mask first.
    let mut order: Vec<&FormDef> = forms.iter().collect();
    order.sort_by_key(|f| std::cmp::Reverse(f.mask.count_ones()));
    writeln!(o, "/// Decode one instruction word (generated).\npub fn decode_gen(w: u64) -> Option<Inst> {{").unwrap();
    for f in &order {
        writeln!(o, "    if w & {:#018x} == {:#018x} {{", f.mask, f.opc).unwrap();
        writeln!(
            o,
            "        let mut i = Inst {{ form: Form::{}, f: [0; MAX_FIELDS] }};",
            f.name
        )
        .unwrap();
        writeln!(o, "        let mut ok = true;").unwrap();
        for (k, fd) in f.fields.iter().enumerate() {
            writeln!(o, "        i.f[{k}] = ({}) as u32;", extract(fd)).unwrap();
            match &fd.kind {
                Kind::Enum(_) => writeln!(
                    o,
                    "        ok &= ENUM_{}_{}[i.f[{k}] as usize].is_some();",
                    f.name,
                    fd.name.to_uppercase()
                )
                .unwrap(),
                Kind::Const(v) => writeln!(o, "        ok &= i.f[{k}] == {v:#x};").unwrap(),
                _ => {}
            }
        }
        for c in &f.checks {
            writeln!(o, "        ok &= {};", cond_expr(f, c)).unwrap();
        }
        writeln!(o, "        if ok {{ return Some(i); }}\n    }}").unwrap();
    }
    writeln!(o, "    None\n}}").unwrap();

    // Cross-field validity.
    writeln!(o, "/// Whether the cross-field `check` conditions hold (generated).\npub fn valid_gen(i: &Inst) -> bool {{\n    match i.form {{").unwrap();
    for f in &forms {
        let c = if f.checks.is_empty() {
            "true".to_string()
        } else {
            f.checks
                .iter()
                .map(|c| format!("({})", cond_expr(f, c)))
                .collect::<Vec<_>>()
                .join(" && ")
        };
        writeln!(o, "        Form::{} => {c},", f.name).unwrap();
    }
    writeln!(o, "    }}\n}}").unwrap();

    // Encode.
    writeln!(o, "/// Encode (generated). Field values are masked to their widths.\npub fn encode_gen(i: &Inst) -> u64 {{\n    match i.form {{").unwrap();
    for f in &forms {
        writeln!(
            o,
            "        Form::{} => {{\n            let mut w: u64 = {:#018x};",
            f.name, f.opc
        )
        .unwrap();
        for (k, fd) in f.fields.iter().enumerate() {
            writeln!(
                o,
                "            {}",
                insert(fd, &format!("u64::from(i.f[{k}])"))
            )
            .unwrap();
        }
        writeln!(o, "            w\n        }}").unwrap();
    }
    writeln!(o, "    }}\n}}").unwrap();

    // Print.
    writeln!(o, "/// Print the nvdisasm text (generated), guard excluded.\n#[allow(unused_variables, unused_assignments, clippy::identity_op)]\npub fn print_gen(i: &Inst, addr: u64, reuse: u8, s: &mut String) {{\n    match i.form {{").unwrap();
    for f in &forms {
        writeln!(o, "        Form::{} => {{", f.name).unwrap();
        compile_pieces(f, &f.mnemonic, &mut o);
        if !f.operands.is_empty() {
            // Run-time separator: an omitted optional operand must not leave a comma behind.
            writeln!(o, "let mut sep = \" \";").unwrap();
        }
        for op in &f.operands {
            let (cond, body) = match op.strip_prefix('[') {
                Some(r) => {
                    let (c, b) = r.split_once(']').expect("operand condition ]");
                    (Some(c), b.trim())
                }
                None => (None, op.as_str()),
            };
            if let Some(c) = cond {
                writeln!(o, "if {} {{", cond_expr(f, c)).unwrap();
            }
            writeln!(o, "s.push_str(sep); sep = \", \";").unwrap();
            compile_pieces(f, body, &mut o);
            if cond.is_some() {
                writeln!(o, "}}").unwrap();
            }
        }
        writeln!(o, "        }}").unwrap();
    }
    writeln!(o, "    }}\n}}").unwrap();

    // Operands.
    writeln!(o, "/// Visit register/predicate operands (generated).\n#[allow(unused_variables)]\npub fn operands_gen(i: &Inst, v: &mut dyn FnMut(Operand)) {{\n    match i.form {{").unwrap();
    for f in &forms {
        writeln!(o, "        Form::{} => {{", f.name).unwrap();
        for (k, fd) in f.fields.iter().enumerate() {
            let Some(def) = fd.def else { continue };
            let width = match &fd.width {
                Width::One => "1".to_string(),
                Width::Const(n) => n.to_string(),
                Width::Mem(g) => format!("rt::mem_width({})", fv(f, g)),
                Width::Log(g) => format!("if {} & 3 == 3 {{ 2 }} else {{ 1 }}", fv(f, g)),
                Width::Flag2(g) => format!("if {} != 0 {{ 2 }} else {{ 1 }}", fv(f, g)),
                Width::TexLo(m, r) => format!(
                    "if {} != 255 || {} >= 4 {{ 2 }} else {{ 1 }}",
                    fv(f, r),
                    fv(f, m)
                ),
                Width::TexHi(m) => format!("if {} == 4 {{ 2 }} else {{ 1 }}", fv(f, m)),
                Width::Popc(m) => format!("({} as u32).count_ones().max(1) as u8", fv(f, m)),
                Width::Table(g, tab) => {
                    format!("{tab:?}.get({} as usize).copied().unwrap_or(1u8)", fv(f, g))
                }
                Width::TableIf(g, tab, flag, tab2) => format!(
                    "if {} != 0 {{ {tab2:?}.get({} as usize).copied().unwrap_or(1u8) }} else {{ {tab:?}.get({} as usize).copied().unwrap_or(1u8) }}",
                    fv(f, flag),
                    fv(f, g),
                    fv(f, g)
                ),
                Width::Sum(base, terms) => {
                    let mut e = format!("{base}u8");
                    for t in terms {
                        // `F` counts when F is not zero, `F>N` when F exceeds N.
                        let (g, above) = t.split_once('>').unwrap_or((t, "0"));
                        e.push_str(&format!(" + u8::from({} > {above})", fv(f, g)));
                    }
                    format!("({e}).max(1)")
                }
            };
            match fd.kind {
                Kind::Reg => {
                    if fd.also_use {
                        writeln!(o, "            if i.f[{k}] != 255 {{ v(Operand::Reg {{ reg: i.f[{k}] as u8, width: {width}, def: false }}); }}").unwrap();
                    }
                    writeln!(o, "            if i.f[{k}] != 255 {{ v(Operand::Reg {{ reg: i.f[{k}] as u8, width: {width}, def: {def} }}); }}").unwrap()
                }
                Kind::Pred => writeln!(o, "            if i.f[{k}] != 7 {{ v(Operand::Pred {{ pred: i.f[{k}] as u8, def: {def} }}); }}").unwrap(),
                _ => panic!("form {}: def/use on a non-register field {}", f.name, fd.name),
            }
        }
        if f.fields.iter().any(|d| d.name == "x") {
            writeln!(
                o,
                "            if {} != 0 {{ v(Operand::Cc {{ def: false }}); }}",
                fv(f, "x")
            )
            .unwrap();
        }
        // A one-bit `cc` is the `.CC` write flag. In the control-flow forms (BRA, EXIT, SYNC,
        // NOP, ...) `cc` is instead a condition-code test, where 0xf (`T`) reads nothing and
        // any other test reads the flag.
        if let Some(cc) = f.fields.iter().find(|d| d.name == "cc") {
            let (cond, def) = match cc.kind {
                Kind::Flag => (format!("{} != 0", fv(f, "cc")), true),
                _ => (format!("{} != 0xf", fv(f, "cc")), false),
            };
            writeln!(
                o,
                "            if {cond} {{ v(Operand::Cc {{ def: {def} }}); }}"
            )
            .unwrap();
        }
        writeln!(o, "        }}").unwrap();
    }
    writeln!(o, "    }}\n}}").unwrap();
    o
}

/// Emit `pub mod values`: one module per class and enumerated field, holding a named constant
/// per printed value (`values::fsetp::cmp::LT`), so that the passes write an encoding by its
/// name rather than as a bare number. A field whose value names differ between the forms of
/// one class name differently gets no module (a form with a narrower field lists fewer); a name is the printed text without its dot, other characters
/// that cannot be in a Rust name replaced by `_` (a leading digit gets a `V`), and the value
/// printed as no modifier (`-`) is `DEFAULT`.
fn values_module(o: &mut String, forms: &[FormDef]) {
    use std::collections::BTreeMap;
    /// Per field name: the value names by encoding (`None` once two forms disagree).
    type FieldValues = BTreeMap<String, Option<Vec<Option<String>>>>;
    let mut per_class: BTreeMap<String, FieldValues> = BTreeMap::new();
    for f in forms {
        let fields = per_class.entry(f.class.to_lowercase()).or_default();
        for fd in &f.fields {
            if let Kind::Enum(ns) = &fd.kind {
                // Forms may list fewer values (a narrower field): merge, unless two forms
                // name one value differently.
                let merged = match fields.get(&fd.name) {
                    None => Some(ns.clone()),
                    Some(None) => None,
                    Some(Some(prev)) => {
                        let (long, short) = if prev.len() >= ns.len() {
                            (prev, ns)
                        } else {
                            (ns, prev)
                        };
                        let mut m = long.clone();
                        let mut ok = true;
                        for (v, n) in short.iter().enumerate() {
                            match (&m[v], n) {
                                (Some(a), Some(b)) if a != b => ok = false,
                                (None, Some(_)) => m[v] = n.clone(),
                                _ => {}
                            }
                        }
                        ok.then_some(m)
                    }
                };
                fields.insert(fd.name.clone(), merged);
            }
        }
    }
    const KEYWORDS: &[&str] = &[
        "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
        "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
        "where", "while", "async", "await", "dyn",
    ];
    let module = |n: &str| {
        if KEYWORDS.contains(&n) {
            format!("r#{n}")
        } else {
            n.to_string()
        }
    };
    writeln!(
        o,
        "/// Named values of the enumerated fields, per class and field (see `values_module` in\n\
         /// `isa/src/lib.rs`).\n#[allow(dead_code)]\npub mod values {{"
    )
    .unwrap();
    for (class, fields) in &per_class {
        let fields: Vec<(&String, &Vec<Option<String>>)> = fields
            .iter()
            .filter_map(|(n, v)| v.as_ref().map(|v| (n, v)))
            .collect();
        if fields.is_empty() {
            continue;
        }
        writeln!(o, "pub mod {} {{", module(class)).unwrap();
        for (field, names) in fields {
            writeln!(o, "pub mod {} {{", module(field)).unwrap();
            let mut seen = BTreeSet::new();
            for (v, n) in names.iter().enumerate() {
                let Some(n) = n else { continue };
                let mut id: String = n
                    .trim_start_matches('.')
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_uppercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                if n == "-" {
                    // The value nvdisasm prints no modifier for (the field's default).
                    id = "DEFAULT".to_string();
                }
                if id.is_empty() {
                    continue;
                }
                if id.starts_with(|c: char| c.is_ascii_digit()) {
                    id.insert(0, 'V');
                }
                if seen.insert(id.clone()) {
                    writeln!(o, "pub const {id}: u64 = {v};").unwrap();
                }
            }
            // The names `consts=` gives (one form of the class states them).
            let given = forms
                .iter()
                .filter(|f| f.class.to_lowercase() == *class)
                .flat_map(|f| &f.fields)
                .find(|fd| fd.name == *field && !fd.consts.is_empty());
            for (v, n) in given
                .map_or(&[][..], |fd| &fd.consts[..])
                .iter()
                .enumerate()
            {
                if let Some(n) = n {
                    if seen.insert(n.clone()) {
                        writeln!(o, "pub const {n}: u64 = {v};").unwrap();
                    }
                }
            }
            writeln!(o, "}}").unwrap();
        }
        writeln!(o, "}}").unwrap();
    }
    writeln!(o, "}}").unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_description_parses_and_generates() {
        let forms = parse(SM50_ISA);
        assert!(forms.iter().any(|f| f.name == "LEA_R"));
        let src = generate();
        assert!(src.contains("pub fn decode_gen"));
    }

    #[test]
    #[should_panic(expected = "overlaps")]
    fn overlapping_fields_are_rejected() {
        parse("class X lat=fixed\nfield a u 0:8\nfield b u 4:8\nprint X\nform - 5000/ff00\n");
    }

    #[test]
    #[should_panic(expected = "more than 32")]
    fn fields_wider_than_32_bits_are_rejected() {
        parse("class X lat=fixed\nfield a u 0:20+20:13\nprint X\nform - 5000/ff00\n");
    }
}
