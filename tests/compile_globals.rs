//! Module `.global` variables end to end: `leafold compile` writes their data
//! (`.nv.global.init`, or `.nv.global` when none has an initializer) and relocates every use of
//! their addresses as ptxas 11.8 does (`MOV32I lo, 0x0` / `MOV32I hi, 0x0` with
//! `R_CUDA_ABS32_LO_20` / `R_CUDA_ABS32_HI_20`; in a 32-bit module one `MOV32I` with
//! `R_CUDA_ABS32_20`, the address below 4 GB); the simulator, loading the cubin like a
//! driver (`sim::run_cubin`), writes the same memory as `ir::eval` (module variables
//! included); with the oracle, cuobjdump and nvdisasm accept the cubin and print our listing,
//! and ptxas's cubin of the same PTX carries the same relocation types against the same
//! symbols.

mod common;

use leafold::cubin;
use leafold::driver::{
    compile, Emit, Options, R_CUDA_ABS32_20, R_CUDA_ABS32_HI_20, R_CUDA_ABS32_LO_20,
};
use leafold::ir::eval::{self, GlobalRegion, Launch, MODULE_GLOBAL_BASE, MODULE_GLOBAL_BASE_32};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;

/// `out[t] = table[t] + counter`, `hist[t] = t`, and thread 0 stores `counter + 5` into `total`
/// (no location is written by one thread and read by another: the simulator runs a warp in
/// lockstep, the interpreter one thread after another).
const GLOBALS: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.global .align 4 .b32 table[8] = {10, 20, 30, 40, 50, 60, 70, 80};
.global .align 8 .u64 counter = 7;
.global .align 4 .u32 hist[8];
.global .align 8 .u64 total;

.visible .entry globals(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<10>;
    .reg .pred %p1;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, table;
    add.s64 %rd4, %rd3, %rd2;
    ld.global.u32 %r2, [%rd4];
    ld.global.u64 %rd5, [counter];
    cvt.u32.u64 %r3, %rd5;
    add.s32 %r2, %r2, %r3;
    add.s64 %rd6, %rd1, %rd2;
    st.global.u32 [%rd6], %r2;
    add.s64 %rd5, %rd5, 5;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.global.u64 [total], %rd5;
    mov.u64 %rd8, hist;
    add.s64 %rd9, %rd8, %rd2;
    st.global.u32 [%rd9], %r1;
    ret;
}
"#;

/// Only zero-initialized variables: `.nv.global` (NOBITS).
const ZEROED: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.global .align 4 .u32 slots[16];

.visible .entry zeroed(.param .u32 v)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u32 %r1, [v];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd1, %r2, 4;
    mov.u64 %rd2, slots;
    add.s64 %rd3, %rd2, %rd1;
    st.global.u32 [%rd3], %r1;
    ret;
}
"#;

/// A 32-bit module (`.address_size 32`): addresses of `.global` variables are 32 bits, one
/// relocated `MOV32I` each. `out[t] = table[t] + counter`, then `table[t] = t`.
const GLOBALS32: &str = r#"
.version 7.0
.target sm_50
.address_size 32

.global .align 4 .u32 counter = 5;
.global .align 4 .b32 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.visible .entry globals32(.param .u32 out)
{
    .reg .b32 %r<10>;
    ld.param.u32 %r1, [out];
    mov.u32 %r2, %tid.x;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, table;
    add.s32 %r5, %r4, %r3;
    ld.global.u32 %r6, [%r5];
    ld.global.u32 %r7, [counter];
    add.s32 %r6, %r6, %r7;
    add.s32 %r8, %r1, %r3;
    st.global.u32 [%r8], %r6;
    st.global.u32 [%r5], %r2;
    ret;
}
"#;

const OUT: u64 = 0x1000_0000;

fn opts(name: &str) -> Options {
    Options {
        file_name: name.to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// The (type, symbol) pairs of the cubin's code relocations, sorted, each once (ptxas shares
/// one address materialization between accesses where leafold may make two).
fn relocs(bytes: &[u8]) -> Vec<(u32, String)> {
    let c = cubin::read(bytes).unwrap();
    let mut v: Vec<(u32, String)> = c
        .relocations
        .iter()
        .flat_map(|rs| rs.relocs.iter())
        .map(|r| (r.rtype, c.symbols[r.sym as usize].name.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

fn run_both(name: &str, src: &str, launch: &Launch) -> eval::RunOutput {
    let module = common::ir_module(name, src);
    let reference = eval::run(&module, &module.functions[0].name, launch).unwrap();
    let out = compile(src, &opts(name))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).unwrap();
    let errs = check_code(&c.kernels[0].code);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);
    let ours = sim::run_cubin(&out.cubin, &module.functions[0].name, launch)
        .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
    assert_eq!(ours, reference, "{}", out.sass);
    ours
}

#[test]
fn global_variables_are_relocated_and_run_like_the_ir() {
    let mut o = opts("globals.ptx");
    o.verbose = true;
    let out = compile(GLOBALS, &o).unwrap();
    // ptxas 11.8 -v says the same for this module (40 initialized + 40 zeroed bytes).
    assert_eq!(
        out.info_log.lines().next(),
        Some("ptxas info    : 80 bytes gmem")
    );
    let c = cubin::read(&out.cubin).unwrap();
    let init = c.section(".nv.global.init").expect(".nv.global.init");
    // table (32 bytes), counter = 7 at 32, hist zeros at 40..72, total zero at 72..80.
    assert_eq!(init.data.len(), 80);
    assert_eq!(&init.data[0..4], &10u32.to_le_bytes());
    assert_eq!(&init.data[32..40], &7u64.to_le_bytes());
    let r = relocs(&out.cubin);
    for sym in ["table", "counter", "hist", "total"] {
        assert!(r.contains(&(R_CUDA_ABS32_LO_20, sym.to_string())), "{r:?}");
        assert!(r.contains(&(R_CUDA_ABS32_HI_20, sym.to_string())), "{r:?}");
    }

    let mut launch = Launch::new([1, 1, 1], [8, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 32],
    }];
    let got = run_both("globals.ptx", GLOBALS, &launch);
    let outr = got.region(OUT).unwrap();
    for t in 0..8u32 {
        let v = u32::from_le_bytes(outr[4 * t as usize..4 * t as usize + 4].try_into().unwrap());
        assert_eq!(v, 10 * (t + 1) + 7, "thread {t}");
    }
    let module = got.region(MODULE_GLOBAL_BASE).unwrap();
    assert_eq!(&module[44..48], &1u32.to_le_bytes());
    assert_eq!(&module[68..72], &7u32.to_le_bytes());
    assert_eq!(&module[72..80], &12u64.to_le_bytes());

    let out = compile(ZEROED, &opts("zeroed.ptx")).unwrap();
    let c = cubin::read(&out.cubin).unwrap();
    assert!(c.section(".nv.global").is_some() && c.section(".nv.global.init").is_none());
    let mut launch = Launch::new([1, 1, 1], [16, 1, 1]);
    launch.params = 0xabcdu32.to_le_bytes().to_vec();
    let got = run_both("zeroed.ptx", ZEROED, &launch);
    assert_eq!(
        got.region(MODULE_GLOBAL_BASE).unwrap(),
        [0xcd, 0xab, 0, 0].repeat(16).as_slice()
    );
}

#[test]
fn a_32_bit_module_relocates_32_bit_addresses() {
    let out = compile(GLOBALS32, &opts("globals32.ptx"))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let r = relocs(&out.cubin);
    assert_eq!(
        r,
        [
            (R_CUDA_ABS32_20, "counter".to_string()),
            (R_CUDA_ABS32_20, "table".to_string())
        ]
    );
    let mut launch = Launch::new([1, 1, 1], [8, 1, 1]);
    launch.params = (OUT as u32).to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 32],
    }];
    let got = run_both("globals32.ptx", GLOBALS32, &launch);
    let outr = got.region(OUT).unwrap();
    for t in 0..8u32 {
        let v = u32::from_le_bytes(outr[4 * t as usize..4 * t as usize + 4].try_into().unwrap());
        assert_eq!(v, t + 1 + 5, "thread {t}");
    }
    // counter (4 bytes), then table[t] = t.
    let module = got.region(MODULE_GLOBAL_BASE_32).unwrap();
    assert_eq!(&module[8..12], &1u32.to_le_bytes());
}

#[test]
fn oracle_accepts_relocated_cubins_like_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_globals") else {
        return;
    };
    for (name, src) in [
        ("globals.ptx", GLOBALS),
        ("zeroed.ptx", ZEROED),
        ("globals32.ptx", GLOBALS32),
    ] {
        let out = compile(src, &opts(name)).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
        oracle
            .cuobjdump(&out.cubin, "-elf")
            .unwrap_or_else(|e| panic!("{name}: cuobjdump -elf rejects our cubin: {e}"));
        let theirs = common::ptxas_cached(&oracle, src, "sm_50").unwrap();
        assert_eq!(relocs(&out.cubin), relocs(&theirs), "{name}");
    }
}
