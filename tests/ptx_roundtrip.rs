//! Round trip (proptest): PTX generated from a strategy parses; the AST printed as PTX parses
//! to the same AST (spans ignored); printing is then a fixed point. The strategy covers
//! declarations with arrays and nested initializers, every operand shape, immediates of all
//! kinds (any i64, any f32/f64 bit pattern), guards, labels and nested blocks.

use leafold::ptx;
use leafold::SourceFile;
use proptest::prelude::*;

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,6}".prop_filter("not a reserved word", |s| s != "generic"),
        "%r[0-9]{1,3}",
        "\\$L__[a-z0-9_]{1,5}",
    ]
}

fn imm() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u32>().prop_map(|v| format!("{v}U")),
        any::<u32>().prop_map(|b| format!("0f{b:08X}")),
        any::<u64>().prop_map(|b| format!("0d{b:016x}")),
        (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        any::<u16>().prop_map(|v| format!("0x{v:x}")),
        (1i64..100, 1i64..100).prop_map(|(a, b)| format!("({a} + {b}) * 3")),
    ]
}

fn operand() -> impl Strategy<Value = String> {
    prop_oneof![
        ident(),
        imm(),
        (ident(), any::<i32>()).prop_map(|(n, o)| format!("[{n}+{o}]")),
        (ident(), any::<i32>()).prop_map(|(n, o)| format!("[{n}-{o}]")),
        any::<u32>().prop_map(|a| format!("[{a}]")),
        prop::collection::vec(ident(), 1..5).prop_map(|v| format!("{{{}}}", v.join(", "))),
        (
            ident(),
            prop::sample::select(vec!["x", "y", "z", "w", "r", "g", "b", "a"])
        )
            .prop_map(|(n, c)| format!("{n}.{c}")),
        (ident(), 0u32..64).prop_map(|(n, i)| format!("{n}[{i}]")),
        (ident(), any::<i16>()).prop_map(|(n, o)| format!("{n}+{o}")),
        Just("%tid.x".to_string()),
        Just("%clock64".to_string()),
    ]
}

fn instruction() -> impl Strategy<Value = String> {
    // (opcode with modifiers, operand count): the parser checks counts against the table.
    let op = prop::sample::select(vec![
        ("add.s32", 3),
        ("sub.f32", 3),
        ("mov.b64", 2),
        ("ld.global.v4.f32", 2),
        ("st.shared.u8", 2),
        ("mad.lo.cc.u32", 4),
        ("cvt.rzi.ftz.s32.f32", 2),
        ("setp.ltu.and.f64", 4),
        ("atom.global.cas.b32", 4),
        ("tex.2d.v4.f32.s32", 2),
        ("mul.wide.s16", 3),
        ("selp.b32", 4),
    ]);
    let guard = prop_oneof![
        Just(String::new()),
        ident().prop_map(|p| format!("@{p} ")),
        ident().prop_map(|p| format!("@!{p} "))
    ];
    (guard, op, prop::collection::vec(operand(), 4))
        .prop_map(|(g, (op, n), ops)| format!("\t{g}{op} {};", ops[..n].join(", ")))
}

fn init(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        imm(),
        ident().prop_map(|n| n.replace(['%', '$'], "v")),
        (ident(), 0i32..100)
            .prop_map(|(n, o)| format!("generic({})+{o}", n.replace(['%', '$'], "v"))),
        ident().prop_map(|n| format!("0xff00({})", n.replace(['%', '$'], "v"))),
    ];
    if depth == 0 {
        leaf.boxed()
    } else {
        prop_oneof![
            leaf,
            prop::collection::vec(init(depth - 1), 0..4)
                .prop_map(|v| format!("{{{}}}", v.join(", "))),
        ]
        .boxed()
    }
}

fn declaration() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![".global", ".const", ".shared"]),
        prop::option::of(prop::sample::select(vec![1u32, 4, 16])),
        prop::sample::select(vec![".u32", ".f32", ".b8", ".s64", ".v2 .f32"]),
        ident(),
        prop::collection::vec(prop::option::of(1u64..50), 0..3),
        prop::option::of(init(3)),
    )
        .prop_map(|(space, align, ty, name, dims, init)| {
            let align = align.map(|a| format!(" .align {a}")).unwrap_or_default();
            let dims: String = dims
                .iter()
                .map(|d| d.map(|n| format!("[{n}]")).unwrap_or("[]".into()))
                .collect();
            let init = init.map(|i| format!(" = {i}")).unwrap_or_default();
            format!("{space}{align} {ty} {name}{dims}{init};")
        })
}

fn body_item() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => instruction(),
        1 => ident().prop_map(|l| format!("{l}:")),
        1 => (ident(), 1u32..200).prop_map(|(r, n)| format!("\t.reg .b32 {r}<{n}>;")),
        1 => prop::collection::vec(instruction(), 0..3).prop_map(|v| format!("\t{{\n{}\n\t}}", v.join("\n"))),
        1 => (1u32..9, 1u32..900, 0u32..80).prop_map(|(f, l, c)| format!("\t.loc {f} {l} {c}")),
    ]
}

fn module() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(declaration(), 0..4),
        prop::collection::vec(body_item(), 0..12),
        prop::bool::ANY,
    )
        .prop_map(|(decls, body, func)| {
            let header = if func {
                ".visible .func (.param .b32 r) f(.param .b32 a, .param .align 8 .b8 blob[8])\n.noreturn"
            } else {
                ".entry k(.param .u64 .ptr .global .align 4 p)\n.maxntid 64, 2, 1"
            };
            format!(
                ".version 7.0\n.target sm_50\n.address_size 64\n{}\n{header}\n{{\n{}\n}}\n",
                decls.join("\n"),
                body.join("\n")
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn printed_ast_reparses_to_the_same_ast(src in module()) {
        let file = SourceFile::new("gen.ptx", src.clone());
        let (m, d) = ptx::parse(&file);
        prop_assert!(d.iter().all(|d| !d.is_error()), "generated PTX should parse:\n{}\n{}", src, leafold::error::render_all(&d));
        let m = m.unwrap();
        let printed = m.to_string();
        let (m2, d2) = ptx::parse(&SourceFile::new("printed.ptx", printed.clone()));
        prop_assert!(d2.iter().all(|d| !d.is_error()), "printed PTX should parse:\n{}\n{}", printed, leafold::error::render_all(&d2));
        let m2 = m2.unwrap();
        prop_assert_eq!(m.without_spans(), m2.without_spans());
        prop_assert_eq!(printed, m2.to_string());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let file = SourceFile::from_bytes("junk.ptx", &bytes);
        let (m, d) = ptx::parse(&file);
        for x in &d { let _ = x.to_string(); }
        if let Some(m) = m { let _ = ptx::check(&m, &file); let _ = ptx::dump_ast(&m); }
    }
}
