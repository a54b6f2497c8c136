//! `isspacep.{shared,local,global}` end to end: a kernel tests a shared, a local and a
//! global address (and one just past the shared window) with each form; the simulator
//! running our SASS must agree with `ir::eval` and with the expected answers, and nvdisasm
//! must print our words as we do. `isspacep.const` is false for every address (sm_5x has no
//! generic constant window; ptxas's code, run by the simulator, agrees);
//! `isspacep.param` (sm_70 and later) is a named diagnostic.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;

const OUT: u64 = 0x3000_0000;

const SRC: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 pout)
{
    .shared .align 4 .b32 sh[64];
    .local .align 4 .b32 lo[4];
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, sh;
    cvta.shared.u64 %rd2, %rd2;
    mov.u64 %rd3, lo;
    cvta.local.u64 %rd3, %rd3;
    cvta.to.global.u64 %rd4, %rd1;
    add.s64 %rd5, %rd2, 16777216;
    mul.wide.u32 %rd6, %r1, 16;
    add.s64 %rd7, %rd4, %rd6;
    st.local.u32 [lo], %r1;
    // Row of four words per thread: shared, local, global, past-the-shared-window.
    isspacep.shared %p1, %rd2;
    isspacep.local %p2, %rd2;
    isspacep.global %p3, %rd2;
    selp.u32 %r2, 1, 0, %p1;
    selp.u32 %r3, 2, 0, %p2;
    selp.u32 %r4, 4, 0, %p3;
    or.b32 %r2, %r2, %r3;
    or.b32 %r2, %r2, %r4;
    st.global.u32 [%rd7], %r2;
    isspacep.shared %p1, %rd3;
    isspacep.local %p2, %rd3;
    isspacep.global %p3, %rd3;
    selp.u32 %r2, 1, 0, %p1;
    selp.u32 %r3, 2, 0, %p2;
    selp.u32 %r4, 4, 0, %p3;
    or.b32 %r2, %r2, %r3;
    or.b32 %r2, %r2, %r4;
    st.global.u32 [%rd7+4], %r2;
    isspacep.shared %p1, %rd4;
    isspacep.local %p2, %rd4;
    isspacep.global %p3, %rd4;
    selp.u32 %r2, 1, 0, %p1;
    selp.u32 %r3, 2, 0, %p2;
    selp.u32 %r4, 4, 0, %p3;
    or.b32 %r2, %r2, %r3;
    or.b32 %r2, %r2, %r4;
    st.global.u32 [%rd7+8], %r2;
    isspacep.shared %p1, %rd5;
    selp.u32 %r2, 1, 0, %p1;
    st.global.u32 [%rd7+12], %r2;
    ret;
}
"#;

fn opts() -> Options {
    Options {
        file_name: "isspacep.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

#[test]
fn sim_and_eval_classify_addresses_alike() {
    let out =
        compile(SRC, &opts()).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let n = 64u32;
    let mut launch = Launch::new([1, 1, 1], [n, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; n as usize * 16],
    }];
    let module = common::ir_module("isspacep.ptx", SRC);
    let want = eval::run(&module, "k", &launch).expect("ir::eval runs");
    let got = sim::run_cubin(&out.cubin, "k", &launch).unwrap_or_else(|e| panic!("sim: {e}"));
    let (w, g) = (want.region(OUT).unwrap(), got.region(OUT).unwrap());
    assert_eq!(w, g, "sim and eval differ\n{}", out.sass);
    let words: Vec<u32> = g
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for t in 0..n as usize {
        assert_eq!(&words[4 * t..4 * t + 4], &[1, 2, 4, 0], "thread {t}");
    }
}

#[test]
fn nvdisasm_agrees_with_our_printer() {
    let Some(oracle) = Oracle::for_test("lower_isspacep") else {
        return;
    };
    let out = compile(SRC, &opts()).unwrap();
    let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
    let raw = oracle
        .nvdisasm_raw(&code)
        .expect("nvdisasm accepts our words");
    assert_eq!(common::parse_lines(&raw), common::parse_lines(&out.sass));
}

/// Each thread tests the generic address at `IN[tid]` with `isspacep.const`.
const CONST_SRC: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry kc(.param .u64 pin, .param .u64 pout)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u64 %rd5, [%rd4];
    isspacep.const %p1, %rd5;
    selp.u32 %r2, 1, 0, %p1;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd2, %rd6;
    st.global.u32 [%rd7], %r2;
    ret;
}
"#;

const IN: u64 = 0x2000_0000;

/// Addresses in every window of the model (shared, local, const), global ones, zero, and
/// high addresses.
fn const_launch() -> Launch {
    let mut addrs: Vec<u64> = vec![
        0,
        eval::SHARED_WINDOW_BASE,
        eval::LOCAL_WINDOW_BASE + 0x10,
        eval::CONST_WINDOW_BASE,
        eval::CONST_WINDOW_BASE + 0x40,
        eval::CONST_WINDOW_BASE + eval::WINDOW_SIZE - 4,
        IN,
        OUT,
        u64::MAX - 7,
        1 << 40,
    ];
    let mut x = 0x1234_5678_9abc_def1u64;
    while addrs.len() < 64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        addrs.push(x);
    }
    let mut launch = Launch::new([1, 1, 1], [64, 1, 1]);
    launch.params = [IN, OUT].iter().flat_map(|a| a.to_le_bytes()).collect();
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: addrs.iter().flat_map(|a| a.to_le_bytes()).collect(),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0xee; 64 * 4],
        },
    ];
    launch
}

/// sm_5x has no generic window onto constant memory: `isspacep.const` is false for every
/// address, under eval, in our code, and in ptxas's code run by the simulator.
#[test]
fn isspacep_const_is_false_as_in_ptxas() {
    let out = compile(CONST_SRC, &opts())
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let mut text = String::new();
    for (addr, inst) in common::parse_lines(&out.sass) {
        if !inst.is_empty() {
            text.push_str(&format!("{addr:04x}  {inst}\n"));
        }
    }
    insta::assert_snapshot!("isspacep_const_sass", text);
    let launch = const_launch();
    let module = common::ir_module("isspacep.ptx", CONST_SRC);
    let want = eval::run(&module, "kc", &launch).expect("ir::eval runs");
    let got = sim::run_cubin(&out.cubin, "kc", &launch).unwrap_or_else(|e| panic!("sim: {e}"));
    let zeros = vec![0u8; 64 * 4];
    assert_eq!(want.region(OUT).unwrap(), &zeros[..], "eval");
    assert_eq!(
        got.region(OUT).unwrap(),
        &zeros[..],
        "our code\n{}",
        out.sass
    );
    let Some(oracle) = Oracle::for_test("lower_isspacep") else {
        return;
    };
    let theirs = common::ptxas_cached(&oracle, CONST_SRC, "sm_50").unwrap();
    let sass = oracle.cuobjdump(&theirs, "-sass").unwrap();
    assert!(
        sass.contains("ISETP.GE.U32.X.AND"),
        "ptxas's shape changed:\n{sass}"
    );
    let got = sim::run_cubin(&theirs, "kc", &launch).unwrap_or_else(|e| panic!("sim: {e}"));
    assert_eq!(got.region(OUT).unwrap(), &zeros[..], "ptxas's code\n{sass}");
}

#[test]
fn isspacep_param_is_a_named_diagnostic() {
    let src = SRC.replace("isspacep.shared %p1, %rd5", "isspacep.param %p1, %rd5");
    let err = compile(&src, &opts()).expect_err("isspacep.param");
    let text = leafold::error::render_all(&err.0);
    assert!(text.contains("isspacep.param requires sm_70"), "{text}");
    assert!(text.contains("isspacep.ptx:"), "{text}");
}
