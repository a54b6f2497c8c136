//! The builder and the interpreter against NVIDIA's compiler: each kernel of
//! tests/data/build/*.ptx is compiled by ptxas (sm_52) and run in the SM50 simulator, and
//! the same PTX is built by `ir::build` and run in `ir::eval`, on the same pseudo-random
//! inputs; the two `RunOutput`s must be equal byte for byte. Nothing here states the expected
//! values: ptxas's reading of the PTX is the reference for ours (build_eval.rs checks values
//! by hand). Skipped, with the oracle's notice, where ptxas is not installed.

mod common;

use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::ir::Module;
use leafold::oracle::Oracle;
use leafold::sim::{self, KernelInfo};

/// Below 4 GB (for the 32-bit modules) and clear of the shared/local/const windows.
const A: u64 = 0x1000_0000;
const B: u64 = 0x1800_0000;
const OUT: u64 = 0x2000_0000;

fn source(name: &str) -> String {
    let path = format!("{}/tests/data/build/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn build(name: &str, text: &str) -> Module {
    common::ir_module(format!("{name}.ptx"), text)
}

/// ptxas's code for kernel `name` and what the simulator needs to know about it.
fn compile(oracle: &Oracle, name: &str, text: &str) -> (Vec<u64>, KernelInfo) {
    let cubin = oracle.ptxas(text, "sm_52", &[]).expect("ptxas");
    sim::load_kernel(&cubin, name).unwrap_or_else(|e| panic!("{name}: ptxas's cubin: {e}"))
}

/// Deterministic pseudo-random bytes.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    common::noise(n, seed)
        .into_iter()
        .map(|w| w as u8)
        .collect()
}

fn params(m: &Module, values: &[u64]) -> Vec<u8> {
    let f = &m.functions[0];
    let mut out = vec![0u8; f.param_size() as usize];
    for (p, v) in f.params.iter().zip(values) {
        for k in 0..p.size.min(8) as usize {
            out[p.offset as usize + k] = (v >> (8 * k)) as u8;
        }
    }
    out
}

/// Run `name` both ways with `values` as parameters and `global` as memory.
fn check(name: &str, values: &[u64], global: Vec<GlobalRegion>, block: u32, dynamic: u32) {
    let Some(oracle) = Oracle::for_test(&format!("build_oracle::{name}")) else {
        return;
    };
    let text = source(name);
    let m = build(name, &text);
    let (code, info) = compile(&oracle, name, &text);
    let mut l = Launch::new([2, 1, 1], [block, 1, 1]);
    l.params = params(&m, values);
    l.global = global;
    l.dynamic_shared = dynamic;
    let reference = eval::run(&m, name, &l).unwrap_or_else(|e| panic!("{name}: eval: {e}"));
    let simulated = sim::run(&code, &info, &l).unwrap_or_else(|e| panic!("{name}: sim: {e}"));
    assert_eq!(simulated.global, reference.global, "{name}: global memory");
    assert_eq!(simulated.shared, reference.shared, "{name}: shared memory");
    assert_eq!(simulated.local, reference.local, "{name}: local memory");
}

fn r(base: u64, bytes: Vec<u8>) -> GlobalRegion {
    GlobalRegion { base, bytes }
}

#[test]
fn lea_a_i_plus_10() {
    for (seed, i) in [(1, 0u64), (2, 7), (3, 21)] {
        let g = vec![r(A, noise(8 * 32, seed)), r(OUT, vec![0; 8])];
        check("lea_a_i_plus_10", &[A, i, OUT], g, 32, 0);
    }
}

#[test]
fn lea_a_100_minus_i() {
    for (seed, i) in [(4, 0i32), (5, 37), (6, -20)] {
        let g = vec![r(A, noise(8 * 128, seed)), r(OUT, vec![0; 8])];
        check("lea_a_100_minus_i", &[A, i as u32 as u64, OUT], g, 32, 0);
    }
}

#[test]
fn lea_struct_field() {
    for (seed, i) in [(7, 0u64), (8, 3)] {
        let g = vec![r(A, noise(128 * 4, seed)), r(OUT, vec![0; 4])];
        check("lea_struct_field", &[A, i, OUT], g, 32, 0);
    }
}

#[test]
fn lea_byte_32bit() {
    for (seed, i) in [(9, 2u64), (10, 40)] {
        let g = vec![r(A, noise(64, seed)), r(OUT, vec![0; 4])];
        check("lea_byte_32bit", &[A, i, OUT], g, 32, 0);
    }
}

#[test]
fn lea_u128_add() {
    for seed in [11, 12, 13] {
        let mut x = noise(16, seed);
        if seed == 13 {
            x = vec![0xff; 16];
        }
        let g = vec![r(A, x), r(B, noise(16, seed + 100)), r(OUT, vec![0; 16])];
        check("lea_u128_add", &[A, B, OUT], g, 32, 0);
    }
}

#[test]
fn loop_sum() {
    for (seed, n) in [(14, 0i32), (15, 1), (16, 33), (17, -4)] {
        let g = vec![r(A, noise(4 * 40, seed)), r(OUT, vec![0; 4])];
        check("loop_sum", &[A, n as u32 as u64, OUT], g, 32, 0);
    }
}

#[test]
fn predication() {
    for x in [0u64, 3, 5, 11] {
        let g = vec![r(A, noise(4, x + 20)), r(OUT, noise(16, x + 30))];
        check("predication", &[A, x, OUT], g, 32, 0);
    }
}

#[test]
fn conversions() {
    for x in [0x8000_ff80u64, 0x1234_5678, 0x7f, 0xffff_fffe] {
        check("conversions", &[OUT, x], vec![r(OUT, vec![0; 64])], 32, 0);
    }
}

#[test]
fn sregs_arith() {
    // mul.hi.s32 (XMAD.CSFU in ptxas's code), mul.hi.u32 and mad.hi at sign and carry edges.
    for (x, y) in [
        (0x9000_0005u64, 0x0000_7003u64),
        (0xffff_ffff, 0xffff_ffff),
        (0x8000_0000, 0x7fff_ffff),
        (0x0001_ffff, 0xffff_0000),
        (0x7fff_ffff, 0x8000_ffff),
    ] {
        check(
            "sregs_arith",
            &[OUT, x, y],
            vec![r(OUT, vec![0; 64 * 64])],
            32,
            0,
        );
    }
}

#[test]
fn barrier_reverse() {
    check("barrier_reverse", &[A], vec![r(A, noise(128, 40))], 32, 128);
}

#[test]
fn set_mul24() {
    for (x, y) in [
        (5u64, 7u64),
        (0xff80_0003, 2),
        (9, 9),
        (0x0080_0001, 0x0100_0003),
    ] {
        check("set_mul24", &[OUT, x, y], vec![r(OUT, vec![0; 28])], 32, 0);
    }
}

#[test]
fn carry_sub() {
    let cases: [[u32; 6]; 4] = [
        [5, 0, 0, 7, 0, 0],
        [0, 0, 9, 1, 0, 0],
        [0xffff_ffff, 3, 4, 0xffff_ffff, 3, 5],
        [0x8000_0000, 0x8000_0000, 0, 0x8000_0001, 0xffff_ffff, 1],
    ];
    for c in cases {
        let x: Vec<u8> = c.iter().flat_map(|w| w.to_le_bytes()).collect();
        check(
            "carry_sub",
            &[A, OUT],
            vec![r(A, x), r(OUT, vec![0; 20])],
            32,
            0,
        );
    }
}

/// The float families (one thread per CTA: each kernel reads and rewrites OUT in place):
/// ptxas's FADD/FFMA/FMNMX/DADD/..., FSETP/DSETP and I2F/F2I/F2F code in the simulator must
/// agree with `ir::eval`'s exact IEEE semantics on random and special inputs.
#[test]
fn float_families() {
    let specials: [[u8; 24]; 3] = [
        // 1.5f, -0.0f, f64 NaN.
        {
            let mut b = [0u8; 24];
            b[0..4].copy_from_slice(&1.5f32.to_bits().to_le_bytes());
            b[4..8].copy_from_slice(&(-0.0f32).to_bits().to_le_bytes());
            b[8..16].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
            b
        },
        // A subnormal f32, +inf, a huge double.
        {
            let mut b = [0u8; 24];
            b[0..4].copy_from_slice(&1u32.to_le_bytes());
            b[4..8].copy_from_slice(&f32::INFINITY.to_bits().to_le_bytes());
            b[8..16].copy_from_slice(&1.0e300f64.to_bits().to_le_bytes());
            b
        },
        // -2.5f, 0.1f, -7.75.
        {
            let mut b = [0u8; 24];
            b[0..4].copy_from_slice(&(-2.5f32).to_bits().to_le_bytes());
            b[4..8].copy_from_slice(&0.1f32.to_bits().to_le_bytes());
            b[8..16].copy_from_slice(&(-7.75f64).to_bits().to_le_bytes());
            b
        },
    ];
    for name in ["float_arith", "float_cmp", "float_cvt"] {
        for seed in 40..46 {
            check(name, &[OUT], vec![r(OUT, noise(24, seed))], 1, 0);
        }
        for s in &specials {
            check(name, &[OUT], vec![r(OUT, s.to_vec())], 1, 0);
        }
    }
}
