//! Simulator instructions the IR cannot express yet (PRMT, SHFL, atomics), checked on kernels
//! compiled by ptxas (sm_52) against values worked out here from the PTX ISA's definitions,
//! over edge and pseudo-random inputs. Skipped, with the oracle's notice, without ptxas.

mod common;

use common::noise;
use leafold::ir::eval::{GlobalRegion, Launch, RunOutput};
use leafold::oracle::Oracle;
use leafold::sim;

const A: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;

fn compiled(oracle: &Oracle, ptx: &str) -> (Vec<u64>, sim::KernelInfo) {
    let cubin = oracle.ptxas(ptx, "sm_52", &[]).expect("ptxas");
    sim::load_kernel(&cubin, "k").expect("cubin loads")
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

/// Global and shared atomics, the way ptxas compiles them (warp-aggregated ADD/XOR through
/// SHFL scans and VOTE, plain ATOM/ATOMS for the rest). 64 threads in one CTA; the reference
/// applies each operation to its address in thread order, which is the order the simulator
/// runs them in (warp 0 finishes before warp 1, lanes in order): any other order would give
/// other `old` values, and the final memory too for CAS and INC.
const ATOMICS: &str = r#"
.version 7.8
.target sm_52
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout)
{
    .reg .u32 %r<12>;
    .reg .u64 %rd<8>;
    .shared .align 4 .b8 sm[32];
    ld.param.u64 %rd0, [pa];
    ld.param.u64 %rd1, [pout];
    cvta.to.global.u64 %rd0, %rd0;
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r0, %tid.x;
    mul.lo.u32 %r9, %r0, 0x9e3779b9;
    atom.global.add.u32 %r1, [%rd0], %r9;
    atom.global.max.s32 %r2, [%rd0+4], %r9;
    atom.global.cas.b32 %r3, [%rd0+8], %r0, 7;
    red.global.xor.b32 [%rd0+12], %r9;
    atom.global.inc.u32 %r4, [%rd0+16], 5;
    atom.shared.add.u32 %r5, [sm+8], %r0;
    atom.shared.exch.b32 %r6, [sm+12], %r0;
    atom.shared.cas.b32 %r7, [sm+16], %r0, 3;
    atom.global.dec.u32 %r10, [%rd0+20], 2;
    atom.global.min.u32 %r11, [%rd0+24], %r9;
    bar.sync 0;
    ld.shared.u32 %r8, [sm+8];
    mul.wide.u32 %rd2, %r0, 48;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
    st.global.v4.u32 [%rd3+16], {%r5, %r6, %r7, %r8};
    st.global.v2.u32 [%rd3+32], {%r10, %r11};
    ret;
}
"#;

#[test]
fn atomics_match_sequential_thread_order() {
    let Some(oracle) = Oracle::for_test("sim_ops::atomics") else {
        return;
    };
    let (code, info) = compiled(&oracle, ATOMICS);
    let n = 64u32;
    let init = [0xffff_ff00u32, 0x8000_0000, 0, 0x1234_5678, 3, 1, u32::MAX];
    let mut l = Launch::new([1, 1, 1], [n, 1, 1]);
    l.params = [A, OUT].iter().flat_map(|v| v.to_le_bytes()).collect();
    l.global = vec![
        GlobalRegion {
            base: A,
            bytes: bytes(&init),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 48 * n as usize],
        },
    ];
    let out = sim::run(&code, &info, &l).unwrap_or_else(|e| panic!("sim: {e}"));

    // The reference: memory words, applied in thread order.
    let mut g = init;
    let mut s = [0u32; 8];
    let mut want = Vec::new();
    for t in 0..n {
        let v = t.wrapping_mul(0x9e37_79b9);
        let mut row = [0u32; 10];
        row[0] = g[0];
        g[0] = g[0].wrapping_add(v);
        row[1] = g[1];
        g[1] = (g[1] as i32).max(v as i32) as u32;
        row[2] = g[2];
        if g[2] == t {
            g[2] = 7;
        }
        g[3] ^= v;
        row[3] = g[4];
        g[4] = if g[4] >= 5 { 0 } else { g[4] + 1 };
        row[4] = s[2];
        s[2] = s[2].wrapping_add(t);
        row[5] = s[3];
        s[3] = t;
        row[6] = s[4];
        if s[4] == t {
            s[4] = 3;
        }
        row[8] = g[5];
        g[5] = if g[5] == 0 || g[5] > 2 { 2 } else { g[5] - 1 };
        row[9] = g[6];
        g[6] = g[6].min(v);
        want.push(row);
    }
    for (t, row) in want.iter_mut().enumerate() {
        row[7] = s[2]; // after the barrier every thread sees the final shared sum
        let got: Vec<u32> = (0..10).map(|k| word(&out, 1, 12 * t + k)).collect();
        assert_eq!(got, row.to_vec(), "thread {t}");
    }
    let mem: Vec<u32> = (0..7).map(|k| word(&out, 0, k)).collect();
    assert_eq!(mem, g.to_vec(), "global words after the kernel");
    // By hand: thread 0 swapped 0 for 7 in the CAS word; the shared sum is 0 + 1 + ... + 63.
    assert_eq!(want[0][2], 0);
    assert_eq!(want[1][2], 7);
    assert_eq!(want[0][7], 2016);
}

/// SHFL's four modes, with a clamp and with 8-lane segments; values worked out by hand
/// from the PTX rule (x = 100 + 3 * lane).
const SHFL: &str = r#"
.version 7.8
.target sm_52
.address_size 64
.visible .entry k(.param .u64 pout)
{
    .reg .u32 %r<12>;
    .reg .pred %p<4>;
    .reg .u64 %rd<4>;
    ld.param.u64 %rd1, [pout];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r0, %tid.x;
    mad.lo.u32 %r1, %r0, 3, 100;
    shfl.sync.up.b32 %r2|%p0, %r1, 1, 0, -1;
    shfl.sync.down.b32 %r3|%p1, %r1, 3, 0x1f, -1;
    shfl.sync.bfly.b32 %r4, %r1, 5, 0x1f, -1;
    shfl.sync.idx.b32 %r5, %r1, 7, 0x1f, -1;
    shfl.sync.idx.b32 %r6, %r1, 5, 0x181f, -1;
    shfl.sync.down.b32 %r7|%p2, %r1, 2, 0x1807, -1;
    selp.u32 %r8, 1, 0, %p0;
    selp.u32 %r9, 1, 0, %p1;
    selp.u32 %r10, 1, 0, %p2;
    mul.wide.u32 %rd2, %r0, 48;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};
    st.global.v4.u32 [%rd3+16], {%r6, %r7, %r8, %r9};
    st.global.u32 [%rd3+32], %r10;
    ret;
}
"#;

#[test]
fn shfl_modes_by_hand() {
    let Some(oracle) = Oracle::for_test("sim_ops::shfl") else {
        return;
    };
    let (code, info) = compiled(&oracle, SHFL);
    let mut l = Launch::new([1, 1, 1], [32, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 48 * 32],
    }];
    let out = sim::run(&code, &info, &l).unwrap_or_else(|e| panic!("sim: {e}"));
    let x = |lane: u32| 100 + 3 * lane;
    for t in 0..32u32 {
        let got: Vec<u32> = (0..9).map(|k| word(&out, 0, 12 * t as usize + k)).collect();
        // down by 2 inside 8-lane segments clamped at the segment's lane 7.
        let seg_end = (t & !7) + 7;
        let want = [
            if t >= 1 { x(t - 1) } else { x(t) },
            if t + 3 <= 31 { x(t + 3) } else { x(t) },
            x(t ^ 5),
            x(7),
            x((t & !7) + 5),
            if t + 2 <= seg_end { x(t + 2) } else { x(t) },
            u32::from(t >= 1),
            u32::from(t + 3 <= 31),
            u32::from(t + 2 <= seg_end),
        ];
        assert_eq!(got, want, "lane {t}");
    }
}

/// Generic `atom.add`: ptxas aggregates over the warp (VOTE, FLO, POPC, SHFL.IDX), tests the
/// shared window with `LEA.HI.X P0` and picks ATOM or ATOMS (the address masked to the
/// window offset). One generic address is global, the other the CTA's shared array.
const GENERIC_ATOM: &str = r#"
.version 7.8
.target sm_52
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout)
{
    .reg .u32 %r<8>;
    .reg .u64 %rd<8>;
    .shared .align 4 .b8 sm[16];
    ld.param.u64 %rd0, [pa];
    ld.param.u64 %rd1, [pout];
    mov.u32 %r0, %tid.x;
    atom.add.u32 %r1, [%rd0], 3;
    mov.u64 %rd2, sm;
    cvta.shared.u64 %rd3, %rd2;
    atom.add.u32 %r2, [%rd3+4], 5;
    bar.sync 0;
    ld.shared.u32 %r3, [sm+4];
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ntid.x;
    mad.lo.u32 %r6, %r4, %r5, %r0;
    mul.wide.u32 %rd4, %r6, 16;
    add.s64 %rd5, %rd1, %rd4;
    st.v4.u32 [%rd5], {%r1, %r2, %r3, %r0};
    ret;
}
"#;

#[test]
fn generic_atomics_pick_global_or_shared() {
    let Some(oracle) = Oracle::for_test("sim_ops::generic_atomics") else {
        return;
    };
    let (code, info) = compiled(&oracle, GENERIC_ATOM);
    let n = 64u32;
    let mut l = Launch::new([2, 1, 1], [n, 1, 1]);
    l.params = [A, OUT].iter().flat_map(|v| v.to_le_bytes()).collect();
    l.global = vec![
        GlobalRegion {
            base: A,
            bytes: bytes(&[10]),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 16 * 2 * n as usize],
        },
    ];
    let out = sim::run(&code, &info, &l).unwrap_or_else(|e| panic!("sim: {e}"));
    // CTAs run one after the other, threads in order: the global counter goes up by 3 per
    // thread over both CTAs; each CTA's shared counter starts at 0 and goes up by 5.
    for g in 0..2 * n {
        let t = g % n;

        let got: Vec<u32> = (0..4).map(|k| word(&out, 1, 4 * g as usize + k)).collect();
        assert_eq!(
            got,
            [10 + 3 * g, 5 * t, 5 * n, t],
            "cta {} thread {t}",
            g / n
        );
    }
    assert_eq!(word(&out, 0, 0), 10 + 3 * 2 * n);
}

/// 64-bit atomics (register pairs), global and shared, in thread order as above.
const ATOMICS64: &str = r#"
.version 7.8
.target sm_52
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout)
{
    .reg .u32 %r<4>;
    .reg .u64 %rd<16>;
    .shared .align 8 .b8 sm[16];
    ld.param.u64 %rd0, [pa];
    ld.param.u64 %rd1, [pout];
    cvta.to.global.u64 %rd0, %rd0;
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r0, %tid.x;
    cvt.u64.u32 %rd2, %r0;
    mul.lo.u64 %rd3, %rd2, 0x9e3779b97f4a7c15;
    atom.global.add.u64 %rd4, [%rd0], %rd3;
    atom.global.exch.b64 %rd5, [%rd0+8], %rd3;
    atom.global.cas.b64 %rd6, [%rd0+16], %rd2, 0x100000007;
    atom.global.min.s64 %rd7, [%rd0+24], %rd3;
    atom.shared.add.u64 %rd8, [sm], %rd3;
    atom.shared.cas.b64 %rd9, [sm+8], %rd2, 0x300000003;
    bar.sync 0;
    ld.shared.u64 %rd10, [sm];
    mul.wide.u32 %rd11, %r0, 64;
    add.s64 %rd12, %rd1, %rd11;
    st.global.v2.u64 [%rd12], {%rd4, %rd5};
    st.global.v2.u64 [%rd12+16], {%rd6, %rd7};
    st.global.v2.u64 [%rd12+32], {%rd8, %rd9};
    st.global.u64 [%rd12+48], %rd10;
    ret;
}
"#;

#[test]
fn atomics_64bit_match_sequential_thread_order() {
    let Some(oracle) = Oracle::for_test("sim_ops::atomics_64bit") else {
        return;
    };
    let (code, info) = compiled(&oracle, ATOMICS64);
    let n = 64u64;
    let init = [
        u64::MAX - 5,
        0x1111_2222_3333_4444,
        0,
        0x7fff_ffff_ffff_ffff,
    ];
    let mut l = Launch::new([1, 1, 1], [n as u32, 1, 1]);
    l.params = [A, OUT].iter().flat_map(|v| v.to_le_bytes()).collect();
    l.global = vec![
        GlobalRegion {
            base: A,
            bytes: init.iter().flat_map(|v| v.to_le_bytes()).collect(),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 64 * n as usize],
        },
    ];
    let out = sim::run(&code, &info, &l).unwrap_or_else(|e| panic!("sim: {e}"));
    let dword = |r: usize, k: usize| {
        u64::from(word(&out, r, 2 * k)) | u64::from(word(&out, r, 2 * k + 1)) << 32
    };
    let mut g = init;
    let mut s = [0u64; 2];
    let mut want = Vec::new();
    for t in 0..n {
        let v = t.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut row = [0u64; 7];
        row[0] = g[0];
        g[0] = g[0].wrapping_add(v);
        row[1] = g[1];
        g[1] = v;
        row[2] = g[2];
        if g[2] == t {
            g[2] = 0x1_0000_0007;
        }
        row[3] = g[3];
        g[3] = (g[3] as i64).min(v as i64) as u64;
        row[4] = s[0];
        s[0] = s[0].wrapping_add(v);
        row[5] = s[1];
        if s[1] == t {
            s[1] = 0x3_0000_0003;
        }
        want.push(row);
    }
    for (t, row) in want.iter_mut().enumerate() {
        row[6] = s[0];
        let got: Vec<u64> = (0..7).map(|k| dword(1, 8 * t + k)).collect();
        assert_eq!(got, row.to_vec(), "thread {t}");
    }
    let mem: Vec<u64> = (0..4).map(|k| dword(0, k)).collect();
    assert_eq!(mem, g.to_vec(), "global words after the kernel");
    // By hand: the add wraps past 2^64 on thread 1 (old = 2^64 - 6 before it).
    assert_eq!(want[1][0], u64::MAX - 5);
    assert_eq!(want[1][2], 0x1_0000_0007);
}
