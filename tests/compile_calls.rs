//! Inlined calls end to end: each tests/data/build/call_*.ptx kernel compiles with
//! `leafold::compile`, its code passes the hazard checker, and the SM50 simulator running our
//! cubin writes the same memory as `ir::eval` on the IR, for several inputs. Also: a module
//! `.const` array with an initializer (constant bank 3) read with a computed index.
//! With the oracle installed, cuobjdump and nvdisasm accept each cubin and print our listing.

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;

const OUT: u64 = 0x1000_0000;
const IN: u64 = 0x2000_0000;

fn source(name: &str) -> String {
    let path = format!("{}/tests/data/build/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn opts(name: &str) -> Options {
    Options {
        file_name: name.to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// Compile, check hazards, run both, compare every byte; returns the OUT region.
fn run_both(name: &str, src: &str, launch: &Launch) -> Vec<u8> {
    let module = common::ir_module(name, src);
    let f = &module.functions[0];
    let reference = eval::run(&module, &f.name, launch).expect("ir::eval runs");
    let out = compile(src, &opts(name))
        .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)));
    let (code, info) = common::load_our_kernel(&out, f);
    let errs = check_code(&code);
    assert!(errs.is_empty(), "{name}: {errs:#?}\n{}", out.sass);
    let ours =
        sim::run(&code, &info, launch).unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", out.sass));
    // Local memory holds spill slots the IR knows nothing about: compare global and shared.
    assert_eq!(ours.global, reference.global, "{name}\n{}", out.sass);
    assert_eq!(ours.shared, reference.shared, "{name}\n{}", out.sass);
    ours.region(OUT).unwrap().to_vec()
}

fn launch(params: Vec<u8>, threads: u32, extra: Vec<GlobalRegion>) -> Launch {
    let mut l = Launch::new([1, 1, 1], [threads, 1, 1]);
    l.params = params;
    l.global = extra;
    l.global.push(GlobalRegion {
        base: OUT,
        bytes: vec![0; 64],
    });
    l
}

fn out_and(x: &[u8]) -> Vec<u8> {
    let mut p = OUT.to_le_bytes().to_vec();
    p.extend_from_slice(x);
    p
}

#[test]
fn call_kernels_run_like_the_ir_interpreter() {
    let input: Vec<u8> = (0..4u32).flat_map(|x| (x * 10 + 7).to_le_bytes()).collect();
    let mut p = IN.to_le_bytes().to_vec();
    p.extend(OUT.to_le_bytes());
    let l = launch(
        p,
        4,
        vec![GlobalRegion {
            base: IN,
            bytes: input,
        }],
    );
    let out = run_both("call_scalar", &source("call_scalar"), &l);
    assert_eq!(&out[0..4], &21u32.to_le_bytes());

    for x in [0u32, 0x1234, 0xdead_beef] {
        let l = launch(out_and(&x.to_le_bytes()), 1, vec![]);
        run_both("call_struct_param", &source("call_struct_param"), &l);
    }
    for n in [0u32, 3, 9, 60] {
        let l = launch(out_and(&n.to_le_bytes()), 1, vec![]);
        run_both("call_early_ret", &source("call_early_ret"), &l);
    }
    for x in [1u64, 0x0123_4567_89ab_cdef] {
        let l = launch(out_and(&x.to_le_bytes()), 1, vec![]);
        run_both("call_nested", &source("call_nested"), &l);
    }
    for i in 0..4u32 {
        let mut p = out_and(&i.to_le_bytes());
        p.extend([0; 4]);
        let l = launch(p, 1, vec![]);
        let out = run_both("call_local_array", &source("call_local_array"), &l);
        assert_eq!(&out[0..4], &(33 + i).to_le_bytes());
    }
    for x in [4u32, 12] {
        let mut p = out_and(&x.to_le_bytes());
        p.extend([0; 4]);
        let l = launch(p, 1, vec![]);
        run_both("call_reg_params", &source("call_reg_params"), &l);
    }
}

/// A module `.const` array with an initializer, indexed by the thread: constant bank 3.
const CONST_TABLE: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.const .align 4 .u32 table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
.const .align 8 .u64 big = 0x0102030405060708;

.visible .entry const_table(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, table;
    add.s64 %rd4, %rd3, %rd2;
    ld.const.u32 %r2, [%rd4];
    ld.const.u64 %rd5, [big];
    cvt.u32.u64 %r3, %rd5;
    add.s32 %r2, %r2, %r3;
    add.s64 %rd1, %rd1, %rd2;
    st.global.u32 [%rd1], %r2;
    ret;
}
"#;

#[test]
fn const_module_array_reads_bank_3() {
    let l = launch(OUT.to_le_bytes().to_vec(), 8, vec![]);
    let out = run_both("const_table.ptx", CONST_TABLE, &l);
    for (t, v) in [3u32, 1, 4, 1, 5, 9, 2, 6].iter().enumerate() {
        assert_eq!(&out[4 * t..4 * t + 4], &(v + 0x0506_0708).to_le_bytes());
    }
}

#[test]
fn oracle_accepts_call_cubins() {
    let Some(oracle) = Oracle::for_test("compile_calls") else {
        return;
    };
    let names = [
        "call_scalar",
        "call_struct_param",
        "call_early_ret",
        "call_nested",
        "call_local_array",
        "call_reg_params",
    ];
    let mut srcs: Vec<(String, String)> =
        names.iter().map(|n| (n.to_string(), source(n))).collect();
    srcs.push(("const_table".into(), CONST_TABLE.into()));
    for (name, src) in srcs {
        let out = compile(&src, &opts(&name)).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, &name, &out.cubin, &out.sass);
    }
}
