//! Simulator instructions the IR cannot express yet (PRMT, atomics), checked on kernels
//! compiled by ptxas (sm_52) against values worked out here from the PTX ISA's definitions,
//! over edge and pseudo-random inputs. Skipped, with the oracle's notice, without ptxas.

use leafold::ir::eval::{GlobalRegion, Launch, RunOutput};
use leafold::oracle::Oracle;
use leafold::sim;

const A: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;

fn compiled(oracle: &Oracle, ptx: &str) -> (Vec<u64>, sim::KernelInfo) {
    let cubin = oracle.ptxas(ptx, "sm_52", &[]).expect("ptxas");
    sim::load_kernel(&cubin, "k").expect("cubin loads")
}

/// Deterministic pseudo-random words (xorshift).
fn noise(n: usize, seed: u64) -> Vec<u32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn word(o: &RunOutput, region: usize, k: usize) -> u32 {
    u32::from_le_bytes(o.global[region].bytes[4 * k..4 * k + 4].try_into().unwrap())
}

/// PTX's `prmt.b32 d, a, b, c` (default mode), written from the ISA's table: bytes b7..b0 =
/// {b, a}; each of d's bytes is picked by a selector nibble, bit 3 asking for the byte's sign
/// replicated instead.
fn prmt_reference(a: u32, b: u32, c: u32) -> u32 {
    let mut src = a.to_le_bytes().to_vec();
    src.extend(b.to_le_bytes());
    let mut d = [0u8; 4];
    for (k, out) in d.iter_mut().enumerate() {
        let nibble = (c >> (4 * k)) & 0xf;
        let byte = src[(nibble & 7) as usize];
        *out = if nibble & 8 == 0 {
            byte
        } else if byte & 0x80 != 0 {
            0xff
        } else {
            0
        };
    }
    u32::from_le_bytes(d)
}

/// Thread t permutes a[3t], a[3t+1] with selector a[3t+2] (register form), with the constant
/// selector 0x9a31 (immediate form), and with the parameter selector (constant-bank form).
const PRMT: &str = r#"
.version 7.8
.target sm_52
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout, .param .u32 s)
{
    .reg .u32 %r<12>;
    .reg .u64 %rd<8>;
    ld.param.u64 %rd0, [pa];
    ld.param.u64 %rd1, [pout];
    ld.param.u32 %r9, [s];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd2, %r0, 12;
    add.s64 %rd3, %rd0, %rd2;
    ld.global.u32 %r1, [%rd3];
    ld.global.u32 %r2, [%rd3+4];
    ld.global.u32 %r3, [%rd3+8];
    prmt.b32 %r4, %r1, %r2, %r3;
    prmt.b32 %r5, %r1, %r2, 0x9a31;
    prmt.b32 %r6, %r1, %r2, %r9;
    mul.wide.u32 %rd4, %r0, 12;
    add.s64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r4;
    st.global.u32 [%rd5+4], %r5;
    st.global.u32 [%rd5+8], %r6;
    ret;
}
"#;

#[test]
fn prmt_default_mode_matches_the_ptx_definition() {
    let Some(oracle) = Oracle::for_test("sim_ops::prmt_default_mode") else {
        return;
    };
    let (code, info) = compiled(&oracle, PRMT);
    let threads = 64usize;
    let mut input = noise(3 * threads, 3);
    // Fixed cases first: identity, all sign-replicates, bytes from b only, sign of 0x80/0x7f.
    let fixed = [
        [0x8070_ff01u32, 0x7f80_0102, 0x3210],
        [0x8070_ff01, 0x7f80_0102, 0xba98],
        [0x8070_ff01, 0x7f80_0102, 0xfedc],
        [0x8070_ff01, 0x7f80_0102, 0x7654],
        [0, 0xffff_ffff, 0x4c8f],
    ];
    for (t, f) in fixed.iter().enumerate() {
        input[3 * t..3 * t + 3].copy_from_slice(f);
    }
    for s in [0x3210u32, 0xba98, 0x0001_c4e7, 0xffff_ffff, noise(1, 9)[0]] {
        let mut l = Launch::new([1, 1, 1], [threads as u32, 1, 1]);
        l.params = [A, OUT].iter().flat_map(|v| v.to_le_bytes()).collect();
        l.params.extend(s.to_le_bytes());
        l.params.extend([0; 4]);
        l.global = vec![
            GlobalRegion {
                base: A,
                bytes: bytes(&input),
            },
            GlobalRegion {
                base: OUT,
                bytes: vec![0; 12 * threads],
            },
        ];
        let out = sim::run(&code, &info, &l).unwrap_or_else(|e| panic!("sim: {e}"));
        for t in 0..threads {
            let (a, b, c) = (input[3 * t], input[3 * t + 1], input[3 * t + 2]);
            for (k, sel) in [c, 0x9a31, s].into_iter().enumerate() {
                assert_eq!(
                    word(&out, 1, 3 * t + k),
                    prmt_reference(a, b, sel),
                    "prmt a = {a:#x}, b = {b:#x}, selector = {sel:#x}"
                );
            }
        }
    }
    // Two by hand, so the reference cannot be wrong in the same way.
    assert_eq!(
        prmt_reference(0x8070_ff01, 0x7f80_0102, 0x3210),
        0x8070_ff01
    );
    assert_eq!(
        prmt_reference(0x8070_ff01, 0x7f80_0102, 0x4c9f),
        0x0200_ff00
    );
}
