//! `leafold::compile` end to end on `examples/seed_lea.ptx` (and a branching kernel):
//! the cubin reads back, its code passes the independent hazard checker, NVIDIA's
//! cuobjdump/nvdisasm accept it and print exactly our listing, and the SM50 simulator running
//! our code produces the same memory as the IR reference interpreter.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50;
use leafold::sm50::sched::check::{check_code, check_hazards, decode_text};

const SEED: &str = include_str!("../examples/seed_lea.ptx");

/// A guarded loop: `if (tid < n) for (k = 0; k < n; k++) out[tid] += in[k]`.
const LOOP: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry sum_loop(.param .u64 in, .param .u64 out, .param .u32 n)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<8>;
    .reg .pred %p<3>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
LOOP:
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r5, [%rd4];
    add.s32 %r3, %r3, %r5;
    add.s32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, %r1;
    @%p2 bra LOOP;
    mul.wide.u32 %rd5, %r2, 4;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u32 [%rd6], %r3;
DONE:
    ret;
}
"#;

fn opts(name: &str) -> Options {
    Options {
        file_name: name.to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

fn kernel_code(cubin_bytes: &[u8]) -> (Vec<u64>, u32) {
    let c = cubin::read(cubin_bytes).expect("our cubin reads back");
    assert_eq!(c.kernels.len(), 1);
    (c.kernels[0].code.clone(), c.kernels[0].regcount)
}

#[test]
fn seed_compiles_and_reports_like_ptxas() {
    let mut o = opts("seed_lea.ptx");
    o.verbose = true;
    let out = compile(SEED, &o).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    assert_eq!(out.kernels.len(), 1);
    let k = &out.kernels[0];
    assert_eq!(k.name, "seed_lea");
    // 0x140 + 48 parameter bytes, as ptxas reports for this kernel ("368 bytes cmem[0]").
    assert_eq!(k.cmem0, 368);
    assert!(out
        .info_log
        .contains("ptxas info    : Compiling entry function 'seed_lea' for 'sm_50'"));
    assert!(out.info_log.contains(&format!(
        "ptxas info    : Used {} registers, 368 bytes cmem[0]",
        k.registers
    )));
    let (code, regs) = kernel_code(&out.cubin);
    assert_eq!(regs, k.registers);
    let (insts, ctrl, targets) = decode_text(&code).expect("our code decodes");
    assert_eq!(
        insts[0],
        sm50::decode(0x4c98078000870001).unwrap(),
        "prologue"
    );
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);
    // The listing shows the same instructions the cubin holds.
    assert_eq!(common::parse_lines(&out.text).len(), code.len() / 4 * 3);
}

#[test]
fn loop_kernel_is_hazard_free() {
    let out = compile(LOOP, &opts("loop.ptx"))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let (code, _) = kernel_code(&out.cubin);
    let (insts, ctrl, targets) = decode_text(&code).expect("our code decodes");
    assert!(targets.iter().any(Option::is_some), "{}", out.sass);
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);
}

#[test]
fn oracle_accepts_compiled_cubins() {
    let Some(oracle) = Oracle::for_test("compile_seed") else {
        return;
    };
    let mut spill = opts("seed_spill.ptx");
    spill.max_regs = Some(6);
    let mut serial = opts("loop_serial.ptx");
    serial.sched = leafold::sm50::sched::Mode::Serial;
    for (name, src, o) in [
        ("seed_lea.ptx", SEED, opts("seed_lea.ptx")),
        ("loop.ptx", LOOP, opts("loop.ptx")),
        ("seed_spill.ptx", SEED, spill),
        ("loop_serial.ptx", LOOP, serial),
    ] {
        let out = compile(src, &o).unwrap();
        let (code, _) = kernel_code(&out.cubin);
        let errs = check_code(&code);
        assert!(errs.is_empty(), "{name}: {errs:#?}");
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
    }
}

fn le64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Run the kernel in the IR interpreter and in the simulator (on our code) and compare.
fn run_both(src: &str, launch: &Launch) -> eval::RunOutput {
    run_both_with(src, launch, &opts("t.ptx"))
}

fn run_both_with(src: &str, launch: &Launch, o: &Options) -> eval::RunOutput {
    let module = common::ir_module("t.ptx", src);
    let f = &module.functions[0];
    let reference = eval::run(&module, &f.name, launch).expect("ir::eval runs");
    let out = compile(src, o).unwrap();
    let (code, info) = common::load_our_kernel(&out, f);
    let ours = sim::run(&code, &info, launch).unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
    if out.kernels[0].stack_frame == 0 {
        assert_eq!(ours, reference, "{}", out.sass);
    } else {
        // Spill slots live in local memory, which the IR knows nothing about.
        assert_eq!(ours.global, reference.global, "{}", out.sass);
        assert_eq!(ours.shared, reference.shared, "{}", out.sass);
    }
    ours
}

#[test]
fn seed_runs_like_the_ir_interpreter() {
    const A: u64 = 0x1000_0000;
    const B: u64 = 0x2000_0000;
    const OUT: u64 = 0x3000_0000;
    let a: Vec<u64> = (0..128u64).map(|x| (x as f64 * 1.5).to_bits()).collect();
    let b: Vec<u8> = (0..512u32).map(|x| (x * 7 % 251) as u8).collect();
    let (i, j, k) = (3u64, 5u32, 2u32);
    let mut params = Vec::new();
    params.extend(A.to_le_bytes());
    params.extend(i.to_le_bytes());
    params.extend(j.to_le_bytes());
    params.extend([0; 4]);
    params.extend(B.to_le_bytes());
    params.extend(k.to_le_bytes());
    params.extend([0; 4]);
    params.extend(OUT.to_le_bytes());
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: A,
            bytes: le64(&a),
        },
        GlobalRegion {
            base: B,
            bytes: b.clone(),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 24],
        },
    ];
    // Normal control codes, serial ones, and a register limit that forces spills (the frame
    // prologue `IADD32I R1, R1, -frame` and STL/LDL): all must compute the same memory.
    let mut serial = opts("t.ptx");
    serial.sched = leafold::sm50::sched::Mode::Serial;
    let mut spill = opts("t.ptx");
    spill.max_regs = Some(6);
    assert!(
        compile(SEED, &spill).unwrap().kernels[0].stack_frame > 0,
        "spills"
    );
    for o in [opts("t.ptx"), serial, spill] {
        let r = run_both_with(SEED, &launch, &o);
        let out = r.region(OUT).unwrap();
        // Hand-computed: out[0] = A[i+10], out[1] = A[100-j], out[2] = B[k*128+20 .. +4].
        assert_eq!(&out[0..8], &a[13].to_le_bytes());
        assert_eq!(&out[8..16], &a[95].to_le_bytes());
        assert_eq!(&out[16..20], &b[276..280]);
    }
}

#[test]
fn loop_runs_like_the_ir_interpreter() {
    const IN: u64 = 0x1000_0000;
    const OUT: u64 = 0x2000_0000;
    let n = 5u32;
    let input: Vec<u8> = (1..=8u32).flat_map(|x| (x * x).to_le_bytes()).collect();
    let mut params = Vec::new();
    params.extend(IN.to_le_bytes());
    params.extend(OUT.to_le_bytes());
    params.extend(n.to_le_bytes());
    let mut launch = Launch::new([1, 1, 1], [8, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: input,
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 32],
        },
    ];
    let r = run_both(LOOP, &launch);
    let out = r.region(OUT).unwrap();
    // Threads 0..4 store 1+4+9+16+25 = 55; threads 5..7 store nothing.
    for t in 0..8 {
        let v = u32::from_le_bytes(out[4 * t..4 * t + 4].try_into().unwrap());
        assert_eq!(v, if t < 5 { 55 } else { 0 }, "thread {t}");
    }
}

/// A kernel with its own `.local` array (frame prologue, STL/LDL at `[R1+off]`). Every
/// access is at a run-time index (`x & 3`, `(x & 3) ^ 2`, and that plus `%tid.x >> 1`, which
/// is 0 for the two threads the test launches, but not a constant to the compiler), so
/// the array stays in local memory, as ptxas keeps it (16 bytes of frame; `ir::unindex`
/// needs one constant access, as ptxas does). With `x = 5`: `buf[1] = 5`, `buf[3] = 12`.
const LOCAL: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry with_local(.param .u64 out, .param .u32 x)
{
    .local .align 4 .b8 buf[16];
    .reg .b64 %rd<8>;
    .reg .b32 %r<9>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [x];
    mov.u64 %rd3, buf;
    and.b32 %r6, %r1, 3;
    mul.wide.u32 %rd4, %r6, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.local.u32 [%rd5], %r1;
    add.s32 %r2, %r1, 7;
    xor.b32 %r7, %r6, 2;
    mul.wide.u32 %rd6, %r7, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.local.u32 [%rd7], %r2;
    ld.local.u32 %r3, [%rd5];
    mov.u32 %r4, %tid.x;
    shr.u32 %r4, %r4, 1;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd2, %rd7, %rd2;
    ld.local.u32 %r4, [%rd2];
    add.s32 %r5, %r3, %r4;
    st.global.u32 [%rd1], %r5;
    ret;
}
"#;

#[test]
fn local_array_runs_like_the_ir_interpreter() {
    const OUT: u64 = 0x1000_0000;
    let out = compile(LOCAL, &opts("local.ptx"))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    assert!(out.kernels[0].stack_frame >= 16, "{}", out.sass);
    let mut params = Vec::new();
    params.extend(OUT.to_le_bytes());
    params.extend(5u32.to_le_bytes());
    params.extend([0; 4]);
    let mut launch = Launch::new([1, 1, 1], [2, 1, 1]);
    launch.params = params;
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 4],
    }];
    let r = run_both(LOCAL, &launch);
    assert_eq!(r.region(OUT).unwrap(), &17u32.to_le_bytes());
}
