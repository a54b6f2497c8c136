//! `atom.global.add.f32` / `red.global.add.f32` → `ATOM/RED.E.ADD.F32.FTZ.RN`, as ptxas
//! emits them. The simulator running our SASS must agree with `ir::eval` (the atomic's
//! meaning: f32 add, round to nearest, subnormals flushed): per-thread slots with random
//! operands (rounding and flushing, old values returned), and shared counters hit by every
//! thread with +1.0 (exact in any order: the final counts, and the returned old values
//! forming 0..n-1). nvdisasm reads our words as we print them; the shared form is a CAS loop,
//! as in ptxas (tested in depth by `tests/compile_intops.rs`, `fatomic_*`).

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;

const X: u64 = 0x1000_0000;
const SLOT: u64 = 0x2000_0000;
const OLD: u64 = 0x3000_0000;
const COUNT: u64 = 0x4000_0000;
const BLOCK: u32 = 128;
const GRID: u32 = 4;

const SRC: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 px, .param .u64 pslot, .param .u64 pold, .param .u64 pcount)
{
    .reg .f32 %f<6>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [px];
    ld.param.u64 %rd2, [pslot];
    ld.param.u64 %rd3, [pold];
    ld.param.u64 %rd4, [pcount];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.s32 %r3, %r1, 128, %r2;
    mul.wide.u32 %rd5, %r3, 4;
    add.s64 %rd6, %rd1, %rd5;
    add.s64 %rd7, %rd2, %rd5;
    add.s64 %rd8, %rd3, %rd5;
    ld.global.f32 %f1, [%rd6];
    atom.global.add.f32 %f2, [%rd7], %f1;
    red.global.add.f32 [%rd7+2048], %f1;
    and.b32 %r4, %r3, 3;
    mul.wide.u32 %rd9, %r4, 4;
    add.s64 %rd10, %rd4, %rd9;
    atom.global.add.f32 %f3, [%rd10], 0f3F800000;
    st.global.f32 [%rd8], %f2;
    st.global.f32 [%rd8+2048], %f3;
    ret;
}
"#;

fn opts() -> Options {
    Options {
        file_name: "fatomic.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

fn le(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn sim_agrees_with_eval() {
    let out =
        compile(SRC, &opts()).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    assert!(out.sass.contains("ATOM.E.ADD.F32.FTZ.RN"), "{}", out.sass);
    assert!(out.sass.contains("RED.E.ADD.F32.FTZ.RN"), "{}", out.sass);
    let n = (BLOCK * GRID) as usize;
    let mut seed = 0x5eed_1234_u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as u32
    };
    // Operands and initial slots: random bits (NaN, inf, subnormals included) and a few
    // chosen pairs (a subnormal sum, cancellation, overflow).
    let mut x: Vec<u32> = (0..n).map(|_| rnd()).collect();
    let mut slot: Vec<u32> = (0..2 * n).map(|_| rnd()).collect();
    for (k, (a, b)) in [
        (0x0000_0001, 0x3f80_0000),
        (0x0080_0000, 0x8000_0001),
        (0x3f80_0000, 0xbf80_0000),
        (0x7f7f_ffff, 0x7f7f_ffff),
        (0x0040_0000, 0x0040_0000),
    ]
    .into_iter()
    .enumerate()
    {
        x[k] = a;
        slot[k] = b;
    }
    let mut launch = Launch::new([GRID, 1, 1], [BLOCK, 1, 1]);
    launch.params = [X, SLOT, OLD, COUNT]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    launch.global = vec![
        GlobalRegion {
            base: X,
            bytes: le(&x),
        },
        GlobalRegion {
            base: SLOT,
            bytes: le(&slot),
        },
        GlobalRegion {
            base: OLD,
            bytes: vec![0; 2 * n * 4],
        },
        GlobalRegion {
            base: COUNT,
            bytes: vec![0; 16],
        },
    ];
    let module = common::ir_module("fatomic.ptx", SRC);
    let want = eval::run(&module, "k", &launch).expect("ir::eval runs");
    let got = sim::run_cubin(&out.cubin, "k", &launch).unwrap_or_else(|e| panic!("sim: {e}"));
    let same =
        |a: u32, b: u32| a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan());
    let (ws, gs) = (
        words(want.region(SLOT).unwrap()),
        words(got.region(SLOT).unwrap()),
    );
    for k in 0..2 * n {
        assert!(
            same(ws[k], gs[k]),
            "slot {k}: sim {:#x}, eval {:#x}",
            gs[k],
            ws[k]
        );
    }
    // Flush and rounding as defined: 2^-149 + 1 = 1 (flushed), 2^-126 + -2^-149 = 2^-126.
    assert_eq!(gs[0], 0x3f80_0000);
    assert_eq!(gs[1], 0x0080_0000);
    assert_eq!(gs[3], 0x7f80_0000, "MAX + MAX overflows to inf");
    assert_eq!(gs[4], 0, "two subnormals are flushed");
    let (wo, go) = (
        words(want.region(OLD).unwrap()),
        words(got.region(OLD).unwrap()),
    );
    for k in 0..n {
        assert!(
            same(wo[k], go[k]),
            "old {k}: sim {:#x}, eval {:#x}",
            go[k],
            wo[k]
        );
    }
    // Counters: n/4 increments each; the returned old values are 0..n/4-1 per counter.
    let counts = words(got.region(COUNT).unwrap());
    assert_eq!(counts, vec![(n as f32 / 4.0).to_bits(); 4]);
    assert_eq!(words(want.region(COUNT).unwrap()), counts);
    let mut olds: Vec<u32> = go[n..].iter().map(|&b| f32::from_bits(b) as u32).collect();
    olds.sort();
    let expect: Vec<u32> = (0..n as u32 / 4).flat_map(|v| [v; 4]).collect();
    assert_eq!(olds, expect);
}

#[test]
fn nvdisasm_agrees_with_our_printer() {
    let Some(oracle) = Oracle::for_test("lower_fatomic") else {
        return;
    };
    let out = compile(SRC, &opts()).unwrap();
    let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
    let raw = oracle
        .nvdisasm_raw(&code)
        .expect("nvdisasm accepts our words");
    assert_eq!(common::parse_lines(&raw), common::parse_lines(&out.sass));
}

/// The same kernel with one counter in shared memory compiles: the shared add is a CAS loop
/// (`LDS`, `FADD`, `ATOMS.CAS`), no longer a diagnostic.
#[test]
fn shared_float_atomic_is_a_cas_loop() {
    let src = SRC
        .replace(
            "atom.global.add.f32 %f3, [%rd10]",
            "atom.shared.add.f32 %f3, [%r4]",
        )
        .replace(
            "    .reg .f32 %f<6>;",
            "    .reg .f32 %f<6>;\n    .shared .f32 sh[4];",
        );
    let out =
        compile(&src, &opts()).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    for m in ["LDS.U.32", "FADD", "ATOMS.CAS"] {
        assert!(out.sass.contains(m), "{m} in\n{}", out.sass);
    }
}
