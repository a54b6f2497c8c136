//! Parsing `sm50.isa` ([`parse`]): in: the description text; out: its [`FormDef`]s, each
//! checked ([`check_form`]). Panics with a line number on malformed input (it is this
//! crate's own data file).

use super::*;

/// The `Flow::` variant of a `flow=` value.
fn flow_variant(v: &str) -> Option<String> {
    let known = [
        "bra", "cal", "sync", "brk", "ret", "brx", "exit", "ssy", "pbk", "pret", "jcal",
    ];
    variant(&known, v)
}

/// The enum variant (capitalised) of an attribute value, when `known` holds it.
fn variant(known: &[&str], v: &str) -> Option<String> {
    known.contains(&v).then(|| {
        let mut c = v.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase())
            .into_iter()
            .chain(c)
            .collect()
    })
}

/// Parse the description into forms. Panics with a line number on malformed input: the
/// input is this crate's own data file, so a mistake must stop the build.
pub fn parse(src: &str) -> Vec<FormDef> {
    struct Class {
        name: String,
        variable: bool,
        verified: String,
        fields: Vec<FieldDef>,
        print: Option<String>,
        props: Props,
    }
    let mut forms: Vec<FormDef> = Vec::new();
    let mut class: Option<Class> = None;
    // Print line of the current form, when it overrides the class's.
    let mut in_form = false;
    // Named sparse enumerations (`enum NAME value=name ...`), used by `enum=NAME` fields.
    let mut named: std::collections::HashMap<String, Vec<(usize, String)>> = Default::default();
    for (ln, raw) in src.lines().enumerate() {
        let line = raw.split(" #").next().unwrap().trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kw, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        let err = |m: &str| -> ! { panic!("sm50.isa:{}: {m}: {raw}", ln + 1) };
        match kw {
            "enum" => {
                let mut it = rest.split_whitespace();
                let name = it.next().unwrap_or_else(|| err("enum name")).to_string();
                let vals = it
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').unwrap_or_else(|| err("value=name"));
                        (parse_num(k) as usize, v.to_string())
                    })
                    .collect();
                named.insert(name, vals);
            }
            "class" => {
                let mut it = rest.split_whitespace();
                let name = it.next().unwrap_or_else(|| err("class name")).to_string();
                let mut variable = false;
                let mut verified = String::new();
                let mut props = Props::default();
                for a in it {
                    match a.split_once('=') {
                        Some(("lat", "fixed")) => variable = false,
                        Some(("lat", "var")) => variable = true,
                        Some(("ver", v)) => verified = v.replace('_', " "),
                        Some(("flow", v)) => {
                            props.flow = flow_variant(v).unwrap_or_else(|| err("flow"))
                        }
                        Some(("transfer", "yes")) => props.transfer = true,
                        Some(("fence", "yes")) => props.fence = "Yes".into(),
                        Some(("fence", "clock")) => props.fence = "Clock".into(),
                        Some(("stall", v)) => {
                            props.min_stall = v.parse().unwrap_or_else(|_| err("stall"))
                        }
                        Some(("cycles", v)) => {
                            props.cycles = v.parse().unwrap_or_else(|_| err("cycles"))
                        }
                        Some(("space", v)) => {
                            let known = [
                                "global", "generic", "local", "shared", "const", "texture",
                                "surface",
                            ];
                            props.space = variant(&known, v).unwrap_or_else(|| err("space"))
                        }
                        Some(("access", v)) => {
                            let known = ["load", "store", "atomic", "query"];
                            props.access = variant(&known, v).unwrap_or_else(|| err("access"))
                        }
                        Some(("sm53", "yes")) => props.sm53 = true,
                        Some(("predicable", "yes")) => props.predicable = true,
                        Some(("source", "yes")) => props.source = true,
                        Some(("dual", "second")) => props.dual_second = true,
                        _ => err("class attribute"),
                    }
                }
                class = Some(Class {
                    name,
                    variable,
                    verified,
                    fields: Vec::new(),
                    print: None,
                    props,
                });
                in_form = false;
            }
            "field" => {
                let mut f = parse_field(rest).unwrap_or_else(|e| err(&e));
                if let Kind::Named(n) = &f.kind {
                    let vals = named.get(n).unwrap_or_else(|| err("unknown enum"));
                    let mut names = vec![None; 1usize << f.bit_len()];
                    for (k, v) in vals {
                        names[*k] = Some(v.clone());
                    }
                    f.kind = Kind::Enum(names);
                }
                let c = class.as_mut().unwrap_or_else(|| err("field outside class"));
                if in_form {
                    forms.last_mut().unwrap().fields.push(f);
                } else {
                    c.fields.push(f);
                }
            }
            "print" => {
                let c = class.as_mut().unwrap_or_else(|| err("print outside class"));
                if in_form {
                    let (m, ops) = split_print(rest);
                    let fm = forms.last_mut().unwrap();
                    fm.mnemonic = m;
                    fm.operands = ops;
                } else {
                    c.print = Some(rest.to_string());
                }
            }
            "check" => {
                if !in_form {
                    err("check outside form");
                }
                forms.last_mut().unwrap().checks.push(rest.to_string());
            }
            "form" => {
                let c = class.as_ref().unwrap_or_else(|| err("form outside class"));
                let mut it = rest.split_whitespace();
                let suffix = it.next().unwrap_or_else(|| err("form name"));
                let om = it.next().unwrap_or_else(|| err("opcode/mask"));
                let (o, m) = om.split_once('/').unwrap_or_else(|| err("opcode/mask"));
                let opc = u64::from_str_radix(o, 16).unwrap_or_else(|_| err("opcode")) << 48;
                let mask = u64::from_str_radix(m, 16).unwrap_or_else(|_| err("mask")) << 48;
                let mut fields = c.fields.clone();
                let mut ver = c.verified.clone();
                for a in it {
                    match a.split_once('=') {
                        Some(("B", k)) => fields.extend(b_group(k).unwrap_or_else(|e| err(&e))),
                        Some(("ver", v)) => ver = v.replace('_', " "),
                        _ => err("form attribute"),
                    }
                }
                // A form without a class print must give its own (checked in check_form).
                let (mnemonic, operands) = split_print(c.print.as_deref().unwrap_or(""));
                let name = if suffix == "-" {
                    c.name.clone()
                } else {
                    format!("{}_{}", c.name, suffix)
                };
                forms.push(FormDef {
                    name,
                    class: c.name.clone(),
                    opc,
                    mask,
                    variable: c.variable,
                    verified: ver,
                    fields,
                    props: c.props.clone(),
                    mnemonic,
                    operands,
                    checks: Vec::new(),
                });
                in_form = true;
            }
            _ => err("unknown keyword"),
        }
    }
    for f in &forms {
        check_form(f);
    }
    forms
}

fn split_print(s: &str) -> (String, Vec<String>) {
    // The mnemonic ends at the first ` | ` (a bare `|` may be an alternative in a condition).
    let (m, ops) = s
        .split_once(" | ")
        .or_else(|| s.trim_end().strip_suffix(" |").map(|m| (m, "")))
        .unwrap_or((s, ""));
    let ops = ops
        .split(" , ")
        .map(|o| o.trim().to_string())
        .filter(|o| !o.is_empty())
        .collect();
    (m.trim().to_string(), ops)
}

fn parse_bits(s: &str) -> Result<Vec<(u32, u32)>, String> {
    s.split('+')
        .map(|p| {
            let (a, b) = p.split_once(':').ok_or("bits start:len")?;
            Ok((
                a.parse().map_err(|_| "bit start")?,
                b.parse().map_err(|_| "bit len")?,
            ))
        })
        .collect()
}

fn parse_field(s: &str) -> Result<FieldDef, String> {
    let mut it = s.split_whitespace();
    let name = it.next().ok_or("field name")?.to_string();
    let kind_s = it.next().ok_or("field kind")?;
    let bits = parse_bits(it.next().ok_or("field bits")?)?;
    let kind = match kind_s {
        "reg" => Kind::Reg,
        "pred" => Kind::Pred,
        "flag" => Kind::Flag,
        "u" => Kind::U,
        "s" => Kind::S,
        _ if kind_s.starts_with("enum:") => Kind::Enum(
            kind_s[5..]
                .split(',')
                .map(|n| if n == "?" { None } else { Some(n.to_string()) })
                .collect(),
        ),
        _ if kind_s.starts_with("enum=") => Kind::Named(kind_s[5..].to_string()),
        _ if kind_s.starts_with("const=") => Kind::Const(
            u64::from_str_radix(kind_s[6..].trim_start_matches("0x"), 16)
                .map_err(|_| "const value (hex)")?,
        ),
        _ => return Err(format!("unknown kind {kind_s}")),
    };
    let mut f = FieldDef {
        name,
        kind,
        bits,
        def: None,
        reuse: None,
        width: Width::One,
        also_use: false,
        consts: Vec::new(),
    };
    for a in it {
        match a {
            "def" => f.def = Some(true),
            "use" => f.def = Some(false),
            "defuse" => {
                f.def = Some(true);
                f.also_use = true;
            }
            "A" => f.reuse = Some(0),
            "B" => f.reuse = Some(1),
            "C" => f.reuse = Some(2),
            "w2" => f.width = Width::Const(2),
            "w4" => f.width = Width::Const(4),
            _ if a.starts_with("wmem=") => f.width = Width::Mem(a[5..].to_string()),
            _ if a.starts_with("wlog=") => f.width = Width::Log(a[5..].to_string()),
            _ if a.starts_with("wflag=") => f.width = Width::Flag2(a[6..].to_string()),
            _ if a.starts_with("wtexlo=") => {
                let (mask, other) = a[7..].split_once(':').expect("wtexlo=MASK:OTHER");
                f.width = Width::TexLo(mask.to_string(), other.to_string());
            }
            _ if a.starts_with("wtexhi=") => f.width = Width::TexHi(a[7..].to_string()),
            _ if a.starts_with("wpopc=") => f.width = Width::Popc(a[6..].to_string()),
            _ if a.starts_with("wsum=") => {
                let mut terms = a[5..].split('+');
                let base = terms
                    .next()
                    .and_then(|b| b.parse::<u8>().ok())
                    .ok_or_else(|| format!("wsum needs N+FIELD+..., got {a}"))?;
                f.width = Width::Sum(base, terms.map(str::to_string).collect());
            }
            _ if a.starts_with("consts=") => {
                f.consts = a[7..]
                    .split(',')
                    .map(|n| (n != "?").then(|| n.to_string()))
                    .collect();
            }
            _ if a.starts_with("wtab=") => {
                // `F:W/W/..`, or `F:W/..?G:W/..` (the second table when field G is set).
                let table = |t: &str| -> Result<(String, Vec<u8>), String> {
                    let (g, tab) = t
                        .split_once(':')
                        .ok_or_else(|| format!("wtab needs FIELD:W/W/..., got {a}"))?;
                    let tab = tab
                        .split('/')
                        .map(|w| w.parse::<u8>().map_err(|e| format!("{a}: {e}")))
                        .collect::<Result<Vec<u8>, String>>()?;
                    Ok((g.to_string(), tab))
                };
                f.width = match a[5..].split_once('?') {
                    Some((plain, flagged)) => {
                        let ((g, tab), (flag, tab2)) = (table(plain)?, table(flagged)?);
                        Width::TableIf(g, tab, flag, tab2)
                    }
                    None => {
                        let (g, tab) = table(&a[5..])?;
                        Width::Table(g, tab)
                    }
                };
            }
            _ => return Err(format!("field attribute {a}")),
        }
    }
    if !f.consts.is_empty() && f.consts.len() != 1usize << f.bit_len() {
        return Err(format!(
            "consts of {} has {} names for {} bits",
            f.name,
            f.consts.len(),
            f.bit_len()
        ));
    }
    if let Kind::Enum(names) = &f.kind {
        if names.len() != 1usize << f.bit_len() {
            return Err(format!(
                "enum {} has {} names for {} bits",
                f.name,
                names.len(),
                f.bit_len()
            ));
        }
    }
    Ok(f)
}

/// The B-operand group: the `{B}` token prints whichever of these the form has.
fn b_group(k: &str) -> Result<Vec<FieldDef>, String> {
    let l = |s: &str| parse_field(s);
    Ok(match k {
        "reg" => vec![l("rb reg 20:8 use B")?],
        "reg2" => vec![l("rb reg 20:8 use B w2")?],
        // FADD/DADD read their B register through the C port: its reuse flag is bit 2.
        "regc" => vec![l("rb reg 20:8 use C")?],
        "reg2c" => vec![l("rb reg 20:8 use C w2")?],
        // MUFU/DSETP-style: nvdisasm prints no reuse flag on this operand.
        "regn" => vec![l("rb reg 20:8 use")?],
        "reg2n" => vec![l("rb reg 20:8 use w2")?],
        "cbuf" => vec![l("cbo u 20:14")?, l("cbk u 34:5")?],
        // Same bits; nvdisasm prints a space before the offset (conversions, XMAD).
        "cbufs" => vec![l("cbo u 20:14")?, l("cbks u 34:5")?],
        "imm20s" | "imm20u" | "imm20n" | "f32i" | "f64i" => vec![l("imm u 20:19+56:1")?],
        "imm32" => vec![l("imm u 20:32")?],
        "imm16" => vec![l("imm u 20:16")?],
        _ => return Err(format!("unknown B kind {k}")),
    }
    .into_iter()
    .map(|mut f| {
        // Remember how the immediate prints; the name carries it to the template compiler.
        if f.name == "imm" {
            f.name = format!("imm_{k}");
        }
        f
    })
    .collect())
}

fn check_form(f: &FormDef) {
    assert!(!f.mnemonic.is_empty(), "form {}: no print template", f.name);
    let mut used = f.mask;
    for fd in &f.fields {
        // The compiler stores a field's value in 32 bits (`sm50::Inst`).
        let len: u32 = fd.bits.iter().map(|b| b.1).sum();
        assert!(
            len <= 32,
            "form {}: field {} is {len} bits wide, more than 32",
            f.name,
            fd.name
        );
        for &(s, l) in &fd.bits {
            let m = if l == 64 { !0 } else { ((1u64 << l) - 1) << s };
            assert!(
                used & m == 0,
                "form {}: field {} overlaps another field or the opcode",
                f.name,
                fd.name
            );
            used |= m;
        }
    }
    assert!(f.opc & !f.mask == 0, "form {}: opcode outside mask", f.name);
}
