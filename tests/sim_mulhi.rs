//! The simulator's XMAD/IADD3 model against ptxas's multiply-high sequences: `mul.hi.u32` and
//! `mul.hi.s32` kernels compiled by ptxas (sm_52) run in the simulator over every pair of
//! edge values (and some pseudo-random ones), and the same PTX, built by `ir::build`, runs in
//! `ir::eval`; memory must match byte for byte. A few results are also checked by hand, so
//! two identical wrong answers cannot pass. Skipped, with the oracle's notice, without ptxas.
//!
//! ptxas's sequences (see `csfu_fixup` in src/sim/exec.rs): the unsigned high word needs
//! IADD3.RS to keep the carry of A+B (0xffffffff² once gave 0xfffefffe), the signed one needs
//! XMAD.CSFU.

mod common;

use common::noise;
use leafold::ir::eval::{self, GlobalRegion, Launch, RunOutput};
use leafold::ir::Module;
use leafold::oracle::Oracle;
use leafold::sim;

const A: u64 = 0x1000_0000;
const B: u64 = 0x1800_0000;
const OUT: u64 = 0x2000_0000;

/// Thread t multiplies a[t] by b[t] (both loaded, so ptxas uses XMAD's register form) and by
/// the parameter `c` (constant-bank form), storing four high words at out[4t..4t+4].
const PTX: &str = r#"
.version 7.8
.target sm_52
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout, .param .u32 c)
{
    .reg .u32 %r<12>;
    .reg .u64 %rd<8>;
    ld.param.u64 %rd0, [pa];
    ld.param.u64 %rd1, [pb];
    ld.param.u64 %rd2, [pout];
    ld.param.u32 %r9, [c];
    mov.u32 %r0, %ctaid.x;
    mov.u32 %r1, %ntid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.u32 %r3, %r0, %r1, %r2;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd0, %rd3;
    add.s64 %rd5, %rd1, %rd3;
    ld.global.u32 %r4, [%rd4];
    ld.global.u32 %r5, [%rd5];
    mul.hi.u32 %r6, %r4, %r5;
    mul.hi.s32 %r7, %r4, %r5;
    mul.hi.u32 %r8, %r4, %r9;
    mul.hi.s32 %r10, %r4, %r9;
    mul.wide.u32 %rd6, %r3, 16;
    add.s64 %rd7, %rd2, %rd6;
    st.global.v4.u32 [%rd7], {%r6, %r7, %r8, %r10};
    ret;
}
"#;

const EDGES: [u32; 13] = [
    0,
    1,
    2,
    0x7fff,
    0x8000,
    0xffff,
    0x10000,
    0x0001_ffff,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_ffff,
    0xffff_0000,
    0xffff_ffff,
];

fn build() -> Module {
    common::ir_module("mulhi.ptx", PTX)
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Run the kernel both ways on operand pairs `pairs` and multiplier `c`; returns the common
/// output after comparing.
fn check(
    m: &Module,
    code: &[u64],
    info: &sim::KernelInfo,
    pairs: &[(u32, u32)],
    c: u32,
) -> RunOutput {
    let threads = pairs.len() as u32;
    assert_eq!(threads % 64, 0, "whole CTAs of 64 threads");
    let mut l = Launch::new([threads / 64, 1, 1], [64, 1, 1]);
    l.params = [A, B, OUT].iter().flat_map(|v| v.to_le_bytes()).collect();
    l.params.extend(c.to_le_bytes());
    l.params.extend([0; 4]);
    let (a, b): (Vec<u32>, Vec<u32>) = pairs.iter().copied().unzip();
    l.global = vec![
        GlobalRegion {
            base: A,
            bytes: bytes(&a),
        },
        GlobalRegion {
            base: B,
            bytes: bytes(&b),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 16 * pairs.len()],
        },
    ];
    let reference = eval::run(m, "k", &l).expect("ir::eval runs");
    let simulated = sim::run(code, info, &l).unwrap_or_else(|e| panic!("sim: {e}"));
    for (t, (x, y)) in pairs.iter().enumerate() {
        for (k, what) in [
            "mul.hi.u32 a,b",
            "mul.hi.s32 a,b",
            "mul.hi.u32 a,c",
            "mul.hi.s32 a,c",
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(
                hi(&simulated, t, k),
                hi(&reference, t, k),
                "{what}: a = {x:#x}, b = {y:#x}, c = {c:#x}"
            );
        }
    }
    assert_eq!(simulated.global, reference.global);
    simulated
}

fn compiled(oracle: &Oracle) -> (Vec<u64>, sim::KernelInfo) {
    let cubin = oracle.ptxas(PTX, "sm_52", &[]).expect("ptxas");
    sim::load_kernel(&cubin, "k").expect("cubin loads")
}

/// The high word at thread `t`, slot `k` of an output.
fn hi(o: &RunOutput, t: usize, k: usize) -> u32 {
    u32::from_le_bytes(
        o.global[2].bytes[16 * t + 4 * k..16 * t + 4 * k + 4]
            .try_into()
            .unwrap(),
    )
}

#[test]
fn mul_hi_edge_values_match_ir_eval() {
    let Some(oracle) = Oracle::for_test("sim_mulhi::mul_hi_edge_values_match_ir_eval") else {
        return;
    };
    let m = build();
    let (code, info) = compiled(&oracle);
    // Every ordered pair of edge values, padded to whole CTAs with random pairs.
    let mut pairs: Vec<(u32, u32)> = EDGES
        .iter()
        .flat_map(|&x| EDGES.iter().map(move |&y| (x, y)))
        .collect();
    let r = noise(2 * 64, 7);
    let mut k = 0;
    while pairs.len() % 64 != 0 {
        pairs.push((r[k], r[k + 1]));
        k += 2;
    }
    for &c in EDGES.iter().chain(&noise(4, 11)) {
        let out = check(&m, &code, &info, &pairs, c);
        // By hand: 0xffffffff² = 0xfffffffe_00000001 unsigned, (-1)² = 1 signed.
        let t = pairs
            .iter()
            .position(|&p| p == (0xffff_ffff, 0xffff_ffff))
            .unwrap();
        assert_eq!((hi(&out, t, 0), hi(&out, t, 1)), (0xffff_fffe, 0));
        // 0x80000000 · 0x7fffffff: unsigned hi 0x3fffffff, signed -2^62 + 2^31 → 0xc0000000.
        let t = pairs
            .iter()
            .position(|&p| p == (0x8000_0000, 0x7fff_ffff))
            .unwrap();
        assert_eq!((hi(&out, t, 0), hi(&out, t, 1)), (0x3fff_ffff, 0xc000_0000));
    }
}

#[test]
fn mul_hi_random_values_match_ir_eval() {
    let Some(oracle) = Oracle::for_test("sim_mulhi::mul_hi_random_values_match_ir_eval") else {
        return;
    };
    let m = build();
    let (code, info) = compiled(&oracle);
    for seed in 1..4 {
        let r = noise(2 * 512, seed);
        let pairs: Vec<(u32, u32)> = r.chunks(2).map(|p| (p[0], p[1])).collect();
        let out = check(&m, &code, &info, &pairs, noise(1, seed + 100)[0]);
        // One value by hand against Rust's own 64-bit product.
        let (x, y) = pairs[5];
        assert_eq!(hi(&out, 5, 0), ((u64::from(x) * u64::from(y)) >> 32) as u32);
        let s = i64::from(x as i32) * i64::from(y as i32);
        assert_eq!(hi(&out, 5, 1), (s >> 32) as u32);
    }
}
