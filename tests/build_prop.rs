//! Property tests of `ir::build` on random kernels in the integer subset, with random
//! labels, forward and backward branches, guards, and registers read before they are set.
//!
//! * Every such kernel checks, builds, verifies (so SSA dominance holds on arbitrary CFGs)
//!   and evaluates without panicking (a loop may hit the step limit: that is an answer).
//! * With the oracle installed, kernels with forward branches only (so they terminate) are
//!   compiled by ptxas and run in the SM50 simulator, and must leave memory byte-identical to
//!   `ir::build` + `ir::eval` on the same launch. Every register is set in the prologue,
//!   since hardware registers start with garbage where `ir::eval` reads zero.

use leafold::ir::eval::{self, EvalError, GlobalRegion, Launch};
use leafold::ir::{self, Module};
use leafold::oracle::Oracle;
use leafold::ptx;
use leafold::sim::{self, KernelInfo, SimError};
use leafold::SourceFile;
use proptest::prelude::*;

const OUT: u64 = 0x2000_0000;
const IN: u64 = 0x3000_0000_0000;
const SEGMENTS: usize = 5;

fn reg() -> impl Strategy<Value = String> {
    (0..6u32).prop_map(|k| format!("%r{k}"))
}

fn src() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => reg(),
        1 => prop_oneof![Just(0i64), Just(1), Just(-1), Just(31), Just(32), -70000i64..70000]
            .prop_map(|v| v.to_string()),
    ]
}

fn pred() -> impl Strategy<Value = String> {
    (0..3u32).prop_map(|k| format!("%p{k}"))
}

/// ALU statements.
fn alu() -> impl Strategy<Value = String> {
    const BIN: &[&str] = &[
        "add.u32",
        "sub.s32",
        "mul.lo.u32",
        "and.b32",
        "or.b32",
        "xor.b32",
        "min.s32",
        "min.u32",
        "max.s32",
        "max.u32",
        "shl.b32",
        "shr.u32",
        "shr.s32",
        "mul.hi.u32",
        "mul.hi.s32",
    ];
    const CMP: &[&str] = &["lt.s32", "ge.u32", "eq.u32", "ne.b32", "gt.s32", "ls.u32"];
    prop_oneof![
        (prop::sample::select(BIN), reg(), src(), src())
            .prop_map(|(op, d, a, b)| format!("{op} {d}, {a}, {b};")),
        (
            prop::sample::select(&["not.b32", "neg.s32", "mov.u32"][..]),
            reg(),
            src()
        )
            .prop_map(|(op, d, a)| format!("{op} {d}, {a};")),
        (reg(), src(), src(), src())
            .prop_map(|(d, a, b, c)| format!("mad.lo.s32 {d}, {a}, {b}, {c};")),
        (prop::sample::select(CMP), pred(), src(), src())
            .prop_map(|(c, p, a, b)| format!("setp.{c} {p}, {a}, {b};")),
        (reg(), src(), src(), pred())
            .prop_map(|(d, a, b, p)| format!("selp.b32 {d}, {a}, {b}, {p};")),
        (reg(), src(), src()).prop_map(|(d, a, b)| format!(
            "mul.wide.s32 %rd0, {a}, {b}; add.s64 %rd1, %rd1, %rd0; cvt.u32.u64 {d}, %rd1;"
        )),
        (reg(), src()).prop_map(|(d, a)| format!("cvt.s16.u32 %h0, {a}; cvt.s32.s16 {d}, %h0;")),
        (reg(), src(), src())
            .prop_map(|(d, a, b)| format!("add.cc.u32 {d}, {a}, {b}; addc.u32 %r5, %r5, 0;")),
        memory(),
    ]
}

/// Loads and stores at computed addresses.
fn memory() -> impl Strategy<Value = String> {
    prop_oneof![
        // A global load at IN + (i * 4 & 60) + 4k. A guard covers only the first instruction of
        // a line, so the masking comes after it and the address stays in bounds either way.
        (reg(), src(), 0..48u32).prop_map(|(d, a, k)| format!(
            "mul.wide.u32 %rd5, {a}, 4; and.b64 %rd5, %rd5, 60; add.s64 %rd5, %rd4, %rd5; \
             ld.global.u32 {d}, [%rd5+{}];",
            4 * k
        )),
        // A store into the per-thread .local array through a 32-bit address, and a load.
        (src(), src()).prop_map(|(i, v)| format!(
            "shl.b32 %r6, {i}, 2; and.b32 %r6, %r6, 60; mov.u32 %r7, lm; add.u32 %r7, %r7, %r6; \
             st.local.u32 [%r7], {v};"
        )),
        (reg(), 0..16u32).prop_map(|(d, k)| format!("ld.local.u32 {d}, lm[{k}];")),
    ]
}

/// One statement of segment `seg`; `back` allows branches to earlier labels.
fn stmt(seg: usize, back: bool) -> BoxedStrategy<String> {
    let lo = if back { 0 } else { seg };
    let guard = prop_oneof![
        3 => Just(String::new()),
        1 => pred().prop_map(|p| format!("@{p} ")),
        1 => pred().prop_map(|p| format!("@!{p} ")),
    ];
    if lo >= SEGMENTS - 1 {
        return (guard, alu()).prop_map(|(g, a)| format!("{g}{a}")).boxed();
    }
    prop_oneof![
        6 => (guard, alu()).prop_map(|(g, a)| format!("{g}{a}")),
        1 => (pred(), any::<bool>(), lo..SEGMENTS - 1)
            .prop_map(|(p, neg, l)| format!("@{}{p} bra L{l};", if neg { "!" } else { "" })),
        1 => (lo..SEGMENTS - 1).prop_map(|l| format!("bra L{l};")),
    ]
    .boxed()
}

fn kernel(back: bool) -> impl Strategy<Value = String> {
    let segs: Vec<_> = (0..SEGMENTS)
        .map(|s| prop::collection::vec(stmt(s, back), 0..6))
        .collect();
    segs.prop_map(|segs| {
        let mut body = String::new();
        for (i, seg) in segs.iter().enumerate() {
            for s in seg {
                body.push_str("    ");
                body.push_str(s);
                body.push('\n');
            }
            if i < SEGMENTS - 1 {
                body.push_str(&format!("L{i}:\n"));
            }
        }
        format!(
            ".version 7.0\n.target sm_52\n.address_size 64\n\
.visible .entry k(.param .u64 OUT, .param .u32 X, .param .u64 IN)\n{{\n\
    .reg .pred %p<3>;\n    .reg .b16 %h0;\n    .reg .b32 %r<8>;\n    .reg .b64 %rd<6>;\n\
    .local .align 16 .u32 lm[16];\n\
    ld.param.u64 %rd2, [OUT];\n    ld.param.u32 %r0, [X];\n    ld.param.u64 %rd4, [IN];\n\
    st.local.v4.u32 [lm], {{0, 1, 2, 3}};\n    st.local.v4.u32 [lm+16], {{4, 5, 6, 7}};\n\
    st.local.v4.u32 [lm+32], {{8, 9, 10, 11}};\n    st.local.v4.u32 [lm+48], {{12, 13, 14, 15}};\n\
    mov.u32 %r1, %tid.x;\n    mov.u32 %r2, %ctaid.x;\n    add.u32 %r3, %r0, %r1;\n\
    xor.b32 %r4, %r0, 0x5a5a;\n    mov.u32 %r5, 0;\n    mov.u64 %rd1, 0;\n    mov.u64 %rd0, 0;\n    mov.u16 %h0, 0;\n\
    mov.u64 %rd5, 0;\n    mov.u32 %r6, 0;\n    mov.u32 %r7, 0;\n\
    setp.lt.u32 %p0, %r1, 13;\n    setp.eq.u32 %p1, %r2, 1;\n    setp.gt.s32 %p2, %r0, 0;\n\
{body}\
    mov.u32 %r6, %tid.x;\n    mov.u32 %r7, %ctaid.x;\n    mad.lo.u32 %r6, %r7, 32, %r6;\n\
    mul.wide.u32 %rd3, %r6, 32;\n    add.s64 %rd3, %rd2, %rd3;\n\
    st.global.v4.u32 [%rd3], {{%r0, %r1, %r2, %r3}};\n\
    selp.u32 %r6, 1, 0, %p0;\n    selp.u32 %r7, 2, 0, %p1;\n    or.b32 %r6, %r6, %r7;\n\
    selp.u32 %r7, 4, 0, %p2;\n    or.b32 %r6, %r6, %r7;\n\
    st.global.v4.u32 [%rd3+16], {{%r4, %r5, %r6, %r6}};\n    ret;\n}}\n"
        )
    })
}

fn build(text: &str) -> Module {
    let file = SourceFile::new("k.ptx", text.to_string());
    let (module, _) = match ptx::parse_and_check(&file) {
        Ok(ok) => ok,
        Err(d) => panic!("generated PTX does not check:\n{d}\n{text}"),
    };
    match ir::build(&module, &file) {
        Ok(m) => m,
        Err(d) => panic!(
            "does not build:\n{}\n{text}",
            leafold::error::render_all(&d)
        ),
    }
}

fn launch(x: u32) -> Launch {
    let mut l = Launch::new([2, 1, 1], [32, 1, 1]);
    // OUT at 0, X at 8 (then 4 bytes of padding), IN at 16.
    l.params = OUT.to_le_bytes().to_vec();
    l.params.extend(x.to_le_bytes());
    l.params.extend([0; 4]);
    l.params.extend(IN.to_le_bytes());
    let input = (0..256u32).map(|k| (k.wrapping_mul(0x9e37_79b9) >> 24) as u8);
    l.global = vec![
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 64 * 32],
        },
        GlobalRegion {
            base: IN,
            bytes: input.collect(),
        },
    ];
    l.step_limit = 200_000;
    l
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_kernels_build_verify_and_run(text in kernel(true), x in any::<u32>()) {
        let m = build(&text);
        ir::verify_module(&m).unwrap();
        match eval::run(&m, "k", &launch(x)) {
            Ok(_) | Err(EvalError::StepLimit { .. }) => {}
            Err(e) => panic!("eval: {e}\n{text}\n{m}"),
        }
    }
}

fn ptxas_code(oracle: &Oracle, text: &str) -> (Vec<u64>, KernelInfo) {
    let cubin = oracle.ptxas(text, "sm_52", &[]).expect("ptxas");
    sim::load_kernel(&cubin, "k").unwrap_or_else(|e| panic!("ptxas's cubin: {e}\n{text}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn random_kernels_match_ptxas_in_the_simulator(text in kernel(false), x in any::<u32>()) {
        let Some(oracle) = Oracle::for_test("build_prop::random_kernels_match_ptxas") else {
            return Ok(());
        };
        let m = build(&text);
        let l = launch(x);
        let reference = eval::run(&m, "k", &l).unwrap_or_else(|e| panic!("eval: {e}\n{text}"));
        let (code, info) = ptxas_code(&oracle, &text);
        match sim::run(&code, &info, &l) {
            // An instruction the simulator does not model yet says nothing about the builder.
            Err(SimError::Unsupported { .. } | SimError::Decode { .. }) => {}
            Err(e) => panic!("sim: {e}\n{text}"),
            Ok(simulated) => {
                prop_assert_eq!(&simulated.global, &reference.global, "{}\n{}", text, m);
            }
        }
    }
}
