//! Unit tests per grammar rule of the seeds: variables, initializers, arrays, vectors, address
//! operands, immediates, conversions, plus module directives, old and new PTX forms and error
//! recovery. Each test parses a small file and inspects the AST directly.

use leafold::ptx::ast::*;
use leafold::ptx::{self, Opcode};
use leafold::SourceFile;

const HEAD: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

/// Parse and check `HEAD + src`; panics with the rendered diagnostics on any error.
fn module(src: &str) -> Module {
    let file = SourceFile::new("t.ptx", format!("{HEAD}{src}"));
    match ptx::parse_and_check(&file) {
        Ok((m, _)) => m,
        Err(d) => panic!("unexpected errors:\n{d}"),
    }
}

/// The instructions of the first function with a body.
fn instrs(m: &Module) -> Vec<Instruction> {
    fn walk(b: &Block, out: &mut Vec<Instruction>) {
        for s in &b.stmts {
            match s {
                Statement::Instr(i) => out.push(i.clone()),
                Statement::Block(inner) => walk(inner, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    let f = m
        .functions()
        .find(|f| f.body.is_some())
        .expect("a function");
    walk(f.body.as_ref().unwrap(), &mut out);
    out
}

fn vars(m: &Module) -> Vec<VarDecl> {
    m.items
        .iter()
        .filter_map(|i| match i {
            Item::Var(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

fn kernel(body: &str) -> String {
    format!(".entry k()\n{{\n{body}\n\tret;\n}}\n")
}

fn int(v: i64) -> Imm {
    Imm::Int {
        value: v,
        unsigned: false,
    }
}

#[test]
fn module_directives() {
    let file = SourceFile::new(
        "t.ptx",
        ".version 1.4\n.target sm_10, map_f64_to_f32, texmode_independent\n.file 1 \"a.cu\", 123, 456\n",
    );
    let (m, d) = ptx::parse(&file);
    assert!(d.is_empty(), "{d:?}");
    let m = m.unwrap();
    assert_eq!(m.version(), Some((1, 4)));
    assert_eq!(
        m.targets(),
        vec!["sm_10", "map_f64_to_f32", "texmode_independent"]
    );
    assert_eq!(m.address_size(), 32, "absent .address_size means 32");
    assert!(
        matches!(&m.items[2], Item::File { index: 1, path, extra, .. } if path == "a.cu" && extra == &[123, 456])
    );
}

#[test]
fn variable_declarations() {
    let m =
        module(".global .align 16 .v4 .f32 V;\n.shared .v2 .u16 uv, uw;\n.const .b8 tbl[4][2];\n");
    let v = vars(&m);
    assert_eq!(
        (v[0].space, v[0].ty, v[0].vector, v[0].align),
        (StateSpace::Global, Type::F32, Some(4), Some(16))
    );
    assert_eq!(v[1].names.len(), 2);
    assert_eq!(v[1].names[1].name.text, "uw");
    assert_eq!(v[2].names[0].dims, vec![Some(4), Some(2)]);
}

#[test]
fn parameterized_register_names() {
    let m = module(&kernel("\t.reg .b32 %r<100>;\n\tmov.b32 %r99, %r0;"));
    let f = m.functions().next().unwrap();
    let Statement::Var(v) = &f.body.as_ref().unwrap().stmts[0] else {
        panic!()
    };
    assert_eq!(v.names[0].range, Some(100));
    // %r100 is outside the range.
    let file = SourceFile::new(
        "t.ptx",
        format!(
            "{HEAD}{}",
            kernel("\t.reg .b32 %r<100>;\n\tmov.b32 %r100, %r0;")
        ),
    );
    let err = ptx::parse_and_check(&file).unwrap_err();
    assert_eq!(err.0[0].message, "undeclared identifier '%r100'");
}

#[test]
fn initializers_nested_incomplete_and_sized_from_list() {
    let m = module(".global .s32 offset[][2] = { {-1, 0}, {0, -1}, {1, 0} };\n.global .s32 x[3][2] = { {1,2}, {3} };\n");
    let v = vars(&m);
    assert_eq!(v[0].names[0].dims, vec![None, Some(2)]);
    assert_eq!(v[0].names[0].resolved_dims(), vec![Some(3), Some(2)]);
    let Some(Init::List(rows, _)) = &v[1].names[0].init else {
        panic!()
    };
    assert_eq!(rows.len(), 2);
    let Init::List(second, _) = &rows[1] else {
        panic!()
    };
    assert!(matches!(
        second[..],
        [Init::Imm(Imm::Int { value: 3, .. }, _)]
    ));
}

#[test]
fn address_initializers() {
    // mask() (the last one) needs PTX ISA 7.1.
    let src = ".global .u32 bar[] = {1, 2};\n.global .u64 p = generic(bar)+8;\n.global .u32 q = bar+4;\n.global .u8 b[] = {0xff00(generic(bar)+4)};\n";
    let file = SourceFile::new("t.ptx", format!("{}{src}", HEAD.replace("7.0", "7.1")));
    let m = ptx::parse_and_check(&file)
        .unwrap_or_else(|d| panic!("unexpected errors:\n{d}"))
        .0;
    let v = vars(&m);
    assert!(
        matches!(&v[1].names[0].init, Some(Init::Addr { name, generic: true, offset: 8, mask: None, .. }) if name.text == "bar")
    );
    assert!(matches!(
        &v[2].names[0].init,
        Some(Init::Addr {
            generic: false,
            offset: 4,
            ..
        })
    ));
    let Some(Init::List(items, _)) = &v[3].names[0].init else {
        panic!()
    };
    assert!(matches!(
        &items[0],
        Init::Addr {
            generic: true,
            offset: 4,
            mask: Some(0xff00),
            ..
        }
    ));
}

#[test]
fn variable_attributes() {
    let m = module(
        ".global .attribute(.managed) .u32 a;\n.global .attribute(.unified(1, 2)) .u32 b;\n",
    );
    let v = vars(&m);
    assert_eq!(v[0].attributes, vec![Attribute::Managed]);
    assert_eq!(v[1].attributes, vec![Attribute::Unified(1, 2)]);
}

#[test]
fn address_operand_forms() {
    let m = module(&format!(
        ".global .u32 a[8];\n{}",
        kernel("\t.reg .u32 s;\n\t.reg .u64 r;\n\tld.global.u32 s, [a];\n\tld.global.u32 s, [r];\n\tld.global.u32 s, [r+8];\n\tld.global.u32 s, [r+-8];\n\tld.global.u32 s, [a+4];\n\tld.local.u32 s, [64];\n\tld.global.u32 s, a[2];")
    ));
    let got: Vec<(Option<String>, i64)> = instrs(&m)
        .iter()
        .take(7)
        .map(|i| match &i.operands[1] {
            Operand::Address(a) => (a.base.as_ref().map(|b| b.text.to_string()), a.offset),
            Operand::Indexed { base, index, .. } => {
                (Some(format!("{}[]", base.text)), index.offset)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    let want = [("a", 0), ("r", 0), ("r", 8), ("r", -8), ("a", 4)];
    for (k, (b, o)) in want.iter().enumerate() {
        assert_eq!(got[k], (Some(b.to_string()), *o));
    }
    assert_eq!(got[5], (None, 64));
    assert_eq!(got[6], (Some("a[]".into()), 2));
}

#[test]
fn vector_operands_and_components() {
    let m = module(&kernel("\t.reg .v4 .f32 V;\n\t.reg .f32 a, b, c, d;\n\tmov.v4.f32 {a,b,c,d}, V;\n\tmov.f32 a, V.w;\n\tmov.f32 a, V.r;"));
    let is = instrs(&m);
    assert_eq!(is[0].vector(), Some(4));
    assert!(matches!(&is[0].operands[0], Operand::Vector(v, _) if v.len() == 4));
    assert!(matches!(
        &is[1].operands[1],
        Operand::Elem {
            comp: Component::W,
            ..
        }
    ));
    assert_eq!(Component::R.index(), Component::X.index());
}

#[test]
fn immediates_in_every_notation() {
    let m = module(&kernel("\t.reg .u64 r;\n\t.reg .f32 f;\n\t.reg .f64 g;\n\tmov.u64 r, 0x10;\n\tmov.u64 r, 010;\n\tmov.u64 r, 0b10;\n\tmov.u64 r, 10U;\n\tmov.u64 r, -10;\n\tmov.f32 f, 0f40490FDB;\n\tmov.f64 g, 0d400921FB54442D18;\n\tmov.f64 g, 2.0;\n\tmov.u64 r, (3+4)*2;"));
    let imms: Vec<Imm> = instrs(&m)
        .iter()
        .filter_map(|i| match i.operands.get(1) {
            Some(Operand::Imm(v, _)) => Some(*v),
            _ => None,
        })
        .collect();
    assert_eq!(
        imms,
        vec![
            int(16),
            int(8),
            int(2),
            Imm::Int {
                value: 10,
                unsigned: true
            },
            int(-10),
            Imm::F32(0x40490FDB),
            Imm::F64(0x400921FB54442D18),
            Imm::F64(2.0f64.to_bits()),
            int(14),
        ]
    );
}

#[test]
fn conversions_syntax() {
    let m = module(&kernel(
        "\t.reg .f32 f;\n\t.reg .s32 s;\n\tcvt.rni.sat.s32.f32 s, f;",
    ));
    let i = &instrs(&m)[0];
    assert_eq!(i.opcode, Opcode::Cvt);
    assert_eq!(i.types(), vec![Type::S32, Type::F32]);
    assert_eq!(i.rounding(), Some(Rounding::Rni));
    assert!(i.has_flag("sat"));
}

#[test]
fn setp_predicates_guards_and_pairs() {
    let m = module(&kernel(
        "\t.reg .pred p, q;\n\t.reg .s32 a;\n\tsetp.lt.and.s32 p|q, a, 0, !p;\n\t@!q bra L;\nL:",
    ));
    let is = instrs(&m);
    assert_eq!(is[0].cmp(), Some(CmpOp::Lt));
    assert!(is[0].has_flag("and"));
    assert!(
        matches!(&is[0].operands[0], Operand::PredPair(a, b) if a.text == "p" && b.text == "q")
    );
    assert!(matches!(&is[0].operands[3], Operand::Not(..)));
    assert!(is[1].guard.as_ref().unwrap().negated);
}

#[test]
fn lo_is_a_comparison_for_setp_and_a_flag_for_mul() {
    let m = module(&kernel(
        "\t.reg .pred p;\n\t.reg .u32 a;\n\tsetp.lo.u32 p, a, 1;\n\tmul.lo.u32 a, a, 3;",
    ));
    let is = instrs(&m);
    assert_eq!(is[0].cmp(), Some(CmpOp::Lo));
    assert!(is[1].has_flag("lo") && is[1].cmp().is_none());
}

#[test]
fn old_nvopencc_style() {
    // PTX 1.4: %rh registers, __cudaparm_ names, .loc, declarations without `;`.
    let src = ".version 1.4\n.target sm_10, map_f64_to_f32\n.visible .func (.param .s32 r) f (.param .s32 a)\n\t.entry VecAdd (\n\t\t.param .u64 __cudaparm_VecAdd_A)\n\t{\n\t.reg .u16 %rh<4>;\n\t.reg .u32 %r<6>;\n\t.loc\t28\t21\t0\n\tmov.u16 \t%rh1, %ctaid.x;\n\tcvt.u32.u16 \t%r1, %rh1;\n\texit;\n\t}\n.visible .func (.param .s32 r) f (.param .s32 a)\n{\n\tret;\n}\n";
    let file = SourceFile::new("old.ptx", src);
    let (m, _) = ptx::parse_and_check(&file).unwrap();
    assert_eq!(m.functions().count(), 3);
    assert!(m.functions().next().unwrap().body.is_none());
}

#[test]
fn new_ptx_forms() {
    let src = ".version 8.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 .ptr .global .align 16 p)\n.reqntid 128\n.maxnreg 32\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n\t.reg .u64 %rd1;\n\tld.param.u64 %rd1, [p];\n\tshfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;\n\tld.global.nc.L1::evict_last.u32 %r1, [%rd1];\n\tmma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r1}, {%r2}, {%r3}, {%r1};\n\tret;\n}\n";
    let file = SourceFile::new("new.ptx", src);
    let (m, _) = ptx::parse_and_check(&file).unwrap_or_else(|d| panic!("{d}"));
    let is = instrs(&m);
    assert!(is[2].has_flag("L1::evict_last"));
    assert!(is[3].mods.contains(&Modifier::Other("m16n8k8".into())));
}

#[test]
fn several_errors_in_one_file() {
    let src = format!(
        "{HEAD}{}",
        kernel("\tfoo.u32 a;\n\tadd.bar.u32 a, a, a;\n\t.reg .u32 r;\n\tmov.u32 r, 1;\n\tbaz;")
    );
    let file = SourceFile::new("t.ptx", src);
    let (m, d) = ptx::parse(&file);
    assert!(m.is_some(), "recovery keeps the rest of the module");
    let msgs: Vec<_> = d.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        vec![
            "unknown opcode 'foo'",
            "unknown modifier '.bar' for 'add'",
            "unknown opcode 'baz'"
        ]
    );
}

#[test]
fn scoped_declarations_may_shadow() {
    module(&kernel(
        "\t.reg .u32 a;\n\t{\n\t\t.reg .f32 a;\n\t\tmov.f32 a, 0f00000000;\n\t}\n\tmov.u32 a, 1;",
    ));
}

#[test]
fn relaxed_type_rules() {
    use leafold::ptx::check::compatible;
    assert!(
        compatible(Type::B32, Type::F32, false),
        "bit type accepts any same-size register"
    );
    assert!(compatible(Type::U32, Type::S32, false));
    assert!(
        !compatible(Type::F32, Type::U32, false),
        "float wants a float or bit register"
    );
    assert!(compatible(Type::F32, Type::B32, false));
    assert!(!compatible(Type::U32, Type::U16, false));
    assert!(
        compatible(Type::U8, Type::U32, true),
        "ld/st/cvt accept a wider register"
    );
    assert!(!compatible(Type::U32, Type::Pred, true));
}

#[test]
fn opcode_table_covers_the_isa() {
    // A sample across PTX ISA generations.
    for name in [
        "add",
        "mad24",
        "vote",
        "shfl",
        "prmt",
        "lop3",
        "dp4a",
        "mma",
        "wgmma",
        "cp",
        "fence",
        "mbarrier",
        "redux",
        "elect",
        "griddepcontrol",
        "tanh",
        "tex",
        "suld",
        "vadd4",
    ] {
        assert!(Opcode::from_name(name).is_some(), "{name}");
    }
}

#[test]
fn branch_targets_and_brx() {
    let m = module(&kernel(
        "\t.reg .u32 i;\n\tts: .branchtargets A, B;\n\tbrx.idx i, ts;\nA:\nB:",
    ));
    let f = m.functions().next().unwrap();
    let has_targets = f.body.as_ref().unwrap().stmts.iter().any(
        |s| matches!(s, Statement::Targets { calls: false, targets, .. } if targets.len() == 2),
    );
    assert!(has_targets);
    assert_eq!(instrs(&m)[0].opcode, Opcode::Brx);
}

#[test]
fn sampler_field_initializers_in_independent_mode() {
    let src = ".version 7.0\n.target sm_50, texmode_independent\n.global .samplerref s = { addr_mode_0 = clamp_to_edge, filter_mode = nearest, force_unnormalized_coords = 1 };\n.global .texref t;\n";
    let file = SourceFile::new("t.ptx", src);
    let (m, _) = ptx::parse_and_check(&file).unwrap_or_else(|d| panic!("{d}"));
    let v = vars(&m);
    let Some(Init::Fields(fields, _)) = &v[0].names[0].init else {
        panic!()
    };
    assert_eq!(fields.len(), 3);
    assert!(matches!(&fields[0].1, FieldValue::Word(w) if w.text == "clamp_to_edge"));
    assert_eq!(fields[2].1, FieldValue::Int(1));
    // Printing reparses to the same thing.
    let (again, _) = ptx::parse(&SourceFile::new("p.ptx", m.to_string()));
    assert!(again.unwrap().without_spans() == m.without_spans());
}

#[test]
fn nothing_usable_gives_none() {
    let (m, d) = ptx::parse(&SourceFile::new("g.ptx", "this is not ptx"));
    assert!(m.is_none());
    assert_eq!(d[0].message, "expected a directive, found 'this'");
    // An empty file is a valid (empty) module.
    let (m, d) = ptx::parse(&SourceFile::new("e.ptx", ""));
    assert!(m.is_some() && d.is_empty());
}
