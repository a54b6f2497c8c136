//! Differential tests of floating point: for each family of float operations, a kernel is
//! compiled with `leafold::compile`, its code checked by the hazard checker, and the SM50
//! simulator running it must leave exactly the memory that the IR interpreter (`ir::eval`,
//! the exact IEEE reference) leaves, on inputs mixing zeros of both signs, subnormals,
//! infinities, NaNs, values near 1 and random bit patterns (fixed seeds, 32 threads per
//! launch, several launches per kernel). NVIDIA's cuobjdump and nvdisasm must accept each
//! cubin and print exactly our listing.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;

const IN: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;
const THREADS: u32 = 32;
/// Bytes of output per thread.
const ROW: u64 = 128;

/// A kernel whose thread t reads three 8-byte slots at IN + 32 t (as f32: their low words
/// %f1..%f3; as f64: %fd1..%fd3; as integers: %r2 (u32), %rd7 (u64), %r3 (u32)) and writes
/// its results at %rd6 = OUT + 128 t.
fn kernel(body: &str) -> String {
    format!(
        r#"
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 IN, .param .u64 OUT)
{{
    .reg .f32 %f<40>;
    .reg .f64 %fd<40>;
    .reg .pred %p<20>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<40>;
    .reg .b16 %h<8>;
    ld.param.u64 %rd1, [IN];
    ld.param.u64 %rd2, [OUT];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 32;
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd5, %r1, 128;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+8];
    ld.global.f32 %f3, [%rd4+16];
    ld.global.f64 %fd1, [%rd4];
    ld.global.f64 %fd2, [%rd4+8];
    ld.global.f64 %fd3, [%rd4+16];
    ld.global.u32 %r2, [%rd4];
    ld.global.u64 %rd7, [%rd4+8];
    ld.global.u32 %r3, [%rd4+16];
{body}
    ret;
}}
"#
    )
}

/// Interesting 32-bit float patterns and 32-bit high words of doubles.
fn pattern32(x: u64, double_hi: bool) -> u32 {
    let r = (x >> 8) as u32;
    let sign = ((x >> 40) as u32 & 1) << 31;
    match (x & 0xf, double_hi) {
        (0, _) => sign,                         // ±0
        (1, false) => sign | (r & 0x007f_ffff), // subnormal
        (1, true) => sign | (r & 0x000f_ffff),  // subnormal double
        (2, false) => sign | 0x7f80_0000,       // ±inf
        (2, true) => sign | 0x7ff0_0000,
        (3, false) => sign | 0x7f80_0000 | (r & 0x7f_ffff) | 1, // NaN
        (3, true) => sign | 0x7ff0_0000 | (r & 0xf_ffff) | 1,
        (4 | 5, false) => sign | 0x3f80_0000 | (r & 0xffff), // near ±1
        (4 | 5, true) => sign | 0x3ff0_0000 | (r & 0xff),
        (6, false) => sign | 0x0080_0000 | (r & 0x3_ffff), // near the smallest normal
        (6, true) => sign | 0x0010_0000 | (r & 0x3ff),
        (7, false) => sign | 0x7f7f_0000 | (r & 0xffff), // near the largest finite
        (7, true) => sign | 0x7fef_0000 | (r & 0xffff),
        (8, false) => sign | 0x4f00_0000 | (r & 0xff_ffff), // near 2^31 (f2i limits)
        (8, true) => sign | 0x41e0_0000 | (r & 0xf_ffff),
        (9, _) => sign | (0x3f00_0000 + (r & 0x1f) * 0x0080_0000), // small powers of two
        _ => r,
    }
}

fn inputs(seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for _ in 0..THREADS * 4 {
        let (a, b) = (next(), next());
        let lo = pattern32(a, false);
        let hi = pattern32(b, true);
        // Half the slots: the double is the f32 widened (so f64 ops see f32-like values and
        // conversions see exact cases).
        let slot = if b >> 63 == 0 {
            u64::from(hi) << 32 | u64::from(lo)
        } else {
            f64::from(f32::from_bits(lo)).to_bits() & !0xffff_ffff | u64::from(lo)
        };
        out.extend(slot.to_le_bytes());
    }
    out
}

/// Compile `body`, check hazards, and compare the simulator with `ir::eval` on 8 launches.
fn check(body: &str) {
    let src = kernel(body);
    let module = common::ir_module("t.ptx", src.clone());
    let f = &module.functions[0];
    let o = Options {
        file_name: "t.ptx".into(),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out = compile(&src, &o).unwrap_or_else(|e| panic!("{e}"));
    let c = cubin::read(&out.cubin).unwrap();
    let code = c.kernels[0].code.clone();
    let hazards = check_code(&code);
    assert!(hazards.is_empty(), "{hazards:?}\n{}", out.sass);
    // As a loader does: parameters, frame and the literal pool (constant bank 2) from the cubin.
    let (_, info) = sim::load_kernel(&out.cubin, &f.name).expect("our cubin loads");
    assert_eq!(info.param_size, f.param_size());
    for seed in 1..=8u64 {
        let mut launch = Launch::new([1, 1, 1], [THREADS, 1, 1]);
        launch.params = [IN.to_le_bytes(), OUT.to_le_bytes()].concat();
        launch.global = vec![
            GlobalRegion {
                base: IN,
                bytes: inputs(seed),
            },
            GlobalRegion {
                base: OUT,
                bytes: vec![0; (ROW * u64::from(THREADS)) as usize],
            },
        ];
        let reference = eval::run(&module, &f.name, &launch).expect("ir::eval runs");
        let ours =
            sim::run(&code, &info, &launch).unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        if ours.global != reference.global {
            let (a, b) = (&ours.global[1].bytes, &reference.global[1].bytes);
            let at = (0..a.len()).find(|&k| a[k] != b[k]).unwrap_or(0);
            let (t, off) = (at as u64 / ROW, (at as u64 % ROW) & !3);
            let w = |m: &[u8]| u32::from_le_bytes(m[at & !3..(at & !3) + 4].try_into().unwrap());
            let input = inputs(seed);
            let slots: Vec<String> = (0..3)
                .map(|k| {
                    let o = (t * 32 + k * 8) as usize;
                    format!(
                        "{:#018x}",
                        u64::from_le_bytes(input[o..o + 8].try_into().unwrap())
                    )
                })
                .collect();
            panic!(
                "seed {seed}, thread {t}, output byte {off}: sim {:#x}, eval {:#x}; inputs {slots:?}\n{}",
                w(a),
                w(b),
                out.sass
            );
        }
    }
}

/// Store `regs` (f32 or u32 registers) at consecutive words of the output row.
fn store32(regs: &[&str]) -> String {
    regs.iter()
        .enumerate()
        .map(|(k, r)| format!("    st.global.b32 [%rd6+{}], {r};\n", 4 * k))
        .collect()
}

fn store64(regs: &[&str]) -> String {
    regs.iter()
        .enumerate()
        .map(|(k, r)| format!("    st.global.b64 [%rd6+{}], {r};\n", 8 * k))
        .collect()
}

#[test]
fn f32_add_mul_fma_every_rounding() {
    check(&body_f32_add_mul_fma_every_rounding());
}

fn body_f32_add_mul_fma_every_rounding() -> String {
    let mut body = String::new();
    let mut outs = Vec::new();
    for (k, r) in ["rn", "rz", "rm", "rp"].iter().enumerate() {
        let n = 10 + 3 * k;
        body += &format!("    add.{r}.f32 %f{}, %f1, %f2;\n", n);
        body += &format!("    mul.{r}.f32 %f{}, %f1, %f2;\n", n + 1);
        body += &format!("    fma.{r}.f32 %f{}, %f1, %f2, %f3;\n", n + 2);
        outs.extend([n, n + 1, n + 2]);
    }
    body += "    sub.f32 %f30, %f1, %f2;\n    mad.f32 %f31, %f1, %f2, %f3;\n";
    outs.extend([30, 31]);
    let regs: Vec<String> = outs.iter().map(|n| format!("%f{n}")).collect();
    let regs: Vec<&str> = regs.iter().map(|s| s.as_str()).collect();
    body + &store32(&regs)
}

#[test]
fn f32_ftz_sat_minmax_neg_abs_and_immediates() {
    check(&body_f32_ftz_sat_minmax_neg_abs_and_immediates());
}

fn body_f32_ftz_sat_minmax_neg_abs_and_immediates() -> String {
    let body = "
    add.rz.ftz.f32 %f10, %f1, %f2;
    mul.rp.ftz.sat.f32 %f11, %f1, %f2;
    fma.rm.ftz.sat.f32 %f12, %f1, %f2, %f3;
    add.sat.f32 %f13, %f1, %f2;
    min.f32 %f14, %f1, %f2;
    max.ftz.f32 %f15, %f1, %f2;
    neg.f32 %f16, %f1;
    abs.ftz.f32 %f17, %f2;
    mul.f32 %f18, %f1, 0f40400000;
    add.f32 %f19, %f1, 0f3DCCCCCD;
    fma.rn.f32 %f20, %f1, 0fBF800000, %f3;
    sub.rm.f32 %f21, 0f00000001, %f2;
    neg.ftz.f32 %f22, %f3;
    min.ftz.f32 %f23, %f3, 0f80000000;
    mul.ftz.sat.f32 %f24, %f2, 0f3DCCCCCD;
    sub.ftz.f32 %f25, %f3, 0f3DCCCCCD;
";
    body.to_string()
        + &store32(&[
            "%f10", "%f11", "%f12", "%f13", "%f14", "%f15", "%f16", "%f17", "%f18", "%f19", "%f20",
            "%f21", "%f22", "%f23", "%f24", "%f25",
        ])
}

#[test]
fn f64_arith_every_rounding() {
    check(&body_f64_arith_every_rounding());
}

fn body_f64_arith_every_rounding() -> String {
    let body = "
    add.rn.f64 %fd10, %fd1, %fd2;
    add.rz.f64 %fd11, %fd1, %fd2;
    mul.rm.f64 %fd12, %fd1, %fd2;
    mul.rp.f64 %fd13, %fd1, %fd2;
    fma.rn.f64 %fd14, %fd1, %fd2, %fd3;
    fma.rz.f64 %fd15, %fd1, %fd2, %fd3;
    sub.rp.f64 %fd16, %fd1, %fd3;
    min.f64 %fd17, %fd1, %fd2;
    max.f64 %fd18, %fd1, %fd2;
    neg.f64 %fd19, %fd1;
    abs.f64 %fd20, %fd2;
    mul.f64 %fd21, %fd1, 0d4008000000000000;
    fma.rm.f64 %fd22, %fd1, %fd2, 0dBFF0000000000000;
";
    body.to_string()
        + &store64(&[
            "%fd10", "%fd11", "%fd12", "%fd13", "%fd14", "%fd15", "%fd16", "%fd17", "%fd18",
            "%fd19", "%fd20", "%fd21", "%fd22",
        ])
}

#[test]
fn comparisons_f32_and_f64() {
    check(&body_comparisons_f32_and_f64());
}

fn body_comparisons_f32_and_f64() -> String {
    let ccs = [
        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    ];
    let mut body = String::new();
    let mut regs = Vec::new();
    for (k, cc) in ccs.iter().enumerate() {
        body += &format!("    setp.{cc}.f32 %p1, %f1, %f2;\n");
        body += &format!("    setp.{cc}.f64 %p2, %fd1, %fd2;\n");
        body += &format!("    selp.u32 %r{}, 1, 0, %p1;\n", 4 + k);
        body += &format!("    selp.u32 %r{}, 2, 0, %p2;\n", 20 + k);
        body += &format!("    add.u32 %r{0}, %r{0}, %r{1};\n", 4 + k, 20 + k);
        regs.push(format!("%r{}", 4 + k));
    }
    body += "    setp.lt.ftz.and.f32 %p3|%p4, %f1, %f3, %p1;\n";
    body += "    selp.u32 %r30, 1, 0, %p3;\n    selp.u32 %r31, 1, 0, %p4;\n";
    body += "    set.gtu.f32.f32 %f30, %f2, %f3;\n";
    regs.extend(["%r30".into(), "%r31".into(), "%f30".into()]);
    let regs: Vec<&str> = regs.iter().map(|s| s.as_str()).collect();
    body + &store32(&regs)
}

#[test]
fn conversions_int_float() {
    check(&body_conversions_int_float());
}

fn body_conversions_int_float() -> String {
    let body = "
    cvt.rn.f32.s32 %f10, %r2;
    cvt.rz.f32.u32 %f11, %r2;
    cvt.rm.f32.s64 %f12, %rd7;
    cvt.rp.f32.u64 %f13, %rd7;
    cvt.rn.f64.s32 %fd10, %r2;
    cvt.rz.f64.u64 %fd11, %rd7;
    cvt.rni.s32.f32 %r10, %f1;
    cvt.rzi.u32.f32 %r11, %f2;
    cvt.rmi.s32.f64 %r12, %fd1;
    cvt.rpi.u32.f64 %r13, %fd2;
    cvt.rzi.s64.f32 %rd10, %f1;
    cvt.rni.u64.f64 %rd11, %fd2;
    cvt.rzi.s8.f32 %r14, %f1;
    cvt.rmi.u16.f32 %r15, %f2;
    cvt.rzi.ftz.s32.f32 %r16, %f3;
    cvt.rn.sat.f32.s32 %f14, %r3;
";
    body.to_string()
        + &store32(&[
            "%f10", "%f11", "%f12", "%f13", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15", "%r16",
            "%f14",
        ])
        + "    st.global.b64 [%rd6+64], %fd10;\n    st.global.b64 [%rd6+72], %fd11;\n"
        + "    st.global.b64 [%rd6+80], %rd10;\n    st.global.b64 [%rd6+88], %rd11;\n"
}

/// Conversions of bytes and halfwords of a word, in NVVM's shapes (`cvt.u16.u32` then `and`
/// or `shr.u16`, `shr.u32` then `and`, `bfe.u32`, a byte of a 64-bit word): selected as I2F
/// with a source select on the word (`select/bytesel.rs`). Threads 0..15 convert words of the
/// edge bytes 0, 0x7f, 0x80 and 0xff (rotated so each byte position sees each), 16..31 random
/// words; signed forms see 0x80 and 0xff as negative bytes.
#[test]
fn conversions_byte_selects() {
    check(&body_conversions_byte_selects());
}

fn body_conversions_byte_selects() -> String {
    let body = "
    mov.b32 %r21, 0xff807f00;
    and.b32 %r20, %r1, 3;
    shl.b32 %r20, %r20, 3;
    shf.l.wrap.b32 %r22, %r21, %r21, %r20;
    setp.ge.u32 %p1, %r1, 16;
    selp.b32 %r4, %r2, %r22, %p1;
    cvt.u16.u32 %h1, %r4;
    and.b16 %h2, %h1, 255;
    shr.u16 %h3, %h1, 8;
    shr.u32 %r23, %r4, 16;
    cvt.u16.u32 %h4, %r23;
    and.b16 %h5, %h4, 255;
    shr.u32 %r24, %r4, 24;
    cvt.u16.u32 %h6, %r24;
    cvt.rn.f32.u16 %f10, %h2;
    cvt.rn.f32.u16 %f11, %h3;
    cvt.rn.f32.u16 %f12, %h5;
    cvt.rn.f32.u16 %f13, %h6;
    bfe.u32 %r25, %r4, 8, 8;
    cvt.rn.f32.u32 %f14, %r25;
    and.b32 %r26, %r4, 255;
    cvt.rz.f32.s32 %f15, %r26;
    cvt.rn.f32.u32 %f16, %r23;
    cvt.rn.f32.s8 %f17, %h3;
    cvt.u16.u32 %h7, %r23;
    cvt.rn.f32.s16 %f18, %h7;
    shr.s32 %r30, %r4, 24;
    cvt.rn.f32.s32 %f19, %r30;
    shr.u64 %rd10, %rd7, 40;
    cvt.u32.u64 %r31, %rd10;
    and.b32 %r32, %r31, 255;
    cvt.rn.f32.u32 %f20, %r32;
    and.b32 %r28, %r4, 65535;
    cvt.rn.f64.u32 %fd10, %r28;
    shr.u32 %r29, %r4, 8;
    cvt.u16.u32 %h0, %r29;
    cvt.rn.f32.u16 %f21, %h0;
";
    body.to_string()
        + &store32(&[
            "%f10", "%f11", "%f12", "%f13", "%f14", "%f15", "%f16", "%f17", "%f18", "%f19", "%f20",
            "%f21",
        ])
        + "    st.global.b64 [%rd6+48], %fd10;\n"
}

#[test]
fn conversions_float_float() {
    check(&body_conversions_float_float());
}

fn body_conversions_float_float() -> String {
    let body = "
    cvt.f64.f32 %fd10, %f1;
    cvt.ftz.f64.f32 %fd11, %f2;
    cvt.rn.f32.f64 %f10, %fd1;
    cvt.rz.f32.f64 %f11, %fd2;
    cvt.rm.ftz.f32.f64 %f12, %fd3;
    cvt.rp.sat.f32.f64 %f13, %fd1;
    cvt.rn.f16.f32 %h1, %f1;
    cvt.rz.f16.f32 %h2, %f2;
    cvt.f32.f16 %f14, %h1;
    cvt.f32.f16 %f15, %h2;
    cvt.rni.f32.f32 %f16, %f1;
    cvt.rmi.ftz.f32.f32 %f17, %f2;
    cvt.rpi.f64.f64 %fd12, %fd1;
    cvt.rzi.f64.f64 %fd13, %fd2;
    cvt.ftz.sat.f32.f32 %f18, %f3;
";
    body.to_string()
        + &store32(&[
            "%f10", "%f11", "%f12", "%f13", "%f14", "%f15", "%f16", "%f17", "%f18",
        ])
        + "    st.global.b64 [%rd6+40], %fd10;\n    st.global.b64 [%rd6+48], %fd11;\n"
        + "    st.global.b64 [%rd6+56], %fd12;\n    st.global.b64 [%rd6+64], %fd13;\n"
}

#[test]
fn conversions_sat_f64() {
    check(&body_conversions_sat_f64());
}

/// `.sat` on f64 results (rejected before the gaps audit): the conversion, then ptxas's
/// `DMNMX` with +0 (`!PT`) and with 1 (`PT`); NaN and -0 become +0.
fn body_conversions_sat_f64() -> String {
    let body = "
    cvt.sat.f64.f64 %fd10, %fd1;
    cvt.rni.sat.f64.f64 %fd11, %fd2;
    cvt.rzi.sat.f64.f64 %fd12, %fd3;
    cvt.rmi.sat.f64.f64 %fd13, %fd1;
    cvt.sat.f64.f32 %fd14, %f2;
    cvt.rn.sat.f64.s32 %fd15, %r2;
    cvt.rz.sat.f64.u64 %fd16, %rd7;
";
    body.to_string()
        + &store64(&[
            "%fd10", "%fd11", "%fd12", "%fd13", "%fd14", "%fd15", "%fd16",
        ])
}

#[test]
fn conversions_sat_int_to_f16() {
    check(&body_conversions_sat_int_to_f16());
}

/// `.sat` on int-to-f16 `cvt` (rejected before): `I2F.F32` then `F2F.F16.F32.SAT` with the
/// same rounding; the result is +0 or 1 except for the integers 0 and 1 themselves. The
/// inputs are the random words and small integers (-1..=2) made from them.
fn body_conversions_sat_int_to_f16() -> String {
    let body = "
    and.b32 %r10, %r2, 3;
    add.s32 %r10, %r10, -1;
    cvt.s64.s32 %rd10, %r10;
    cvt.u16.u32 %h6, %r10;
    cvt.u16.u32 %h7, %r3;
    cvt.rn.sat.f16.s32 %h1, %r10;
    cvt.rz.sat.f16.u32 %h2, %r10;
    cvt.rm.sat.f16.s64 %h3, %rd10;
    cvt.rp.sat.f16.u64 %h4, %rd7;
    cvt.rn.sat.f16.s16 %h5, %h6;
    cvt.u32.u16 %r11, %h1;
    cvt.u32.u16 %r12, %h2;
    cvt.u32.u16 %r13, %h3;
    cvt.u32.u16 %r14, %h4;
    cvt.u32.u16 %r15, %h5;
    cvt.rn.sat.f16.s32 %h1, %r2;
    cvt.rp.sat.f16.u32 %h2, %r3;
    cvt.rz.sat.f16.s64 %h3, %rd7;
    cvt.rm.sat.f16.u16 %h4, %h6;
    cvt.rn.sat.f16.s16 %h5, %h7;
    cvt.u32.u16 %r16, %h1;
    cvt.u32.u16 %r17, %h2;
    cvt.u32.u16 %r18, %h3;
    cvt.u32.u16 %r19, %h4;
    cvt.u32.u16 %r20, %h5;
";
    body.to_string()
        + &store32(&[
            "%r11", "%r12", "%r13", "%r14", "%r15", "%r16", "%r17", "%r18", "%r19", "%r20",
        ])
}

/// f16 round-to-integer (`cvt.rni/rzi/rmi/rpi{.sat}.f16.f16`, rejected before): ptxas's
/// `F2F.F32.F16`, `F2F.F32.F32.ROUND/TRUNC/FLOOR/CEIL{.SAT}`, `F2F.F16.F32`, on the random
/// words' low halves (every f16 class: subnormals, halves, NaN, infinities).
#[test]
fn f16_round_to_integer() {
    check(&body_f16_round_to_integer());
}

fn body_f16_round_to_integer() -> String {
    let body = "
    cvt.u16.u32 %h1, %r2;
    cvt.u16.u32 %h2, %r3;
    cvt.rni.f16.f16 %h3, %h1;
    cvt.rzi.f16.f16 %h4, %h1;
    cvt.rmi.f16.f16 %h5, %h2;
    cvt.rpi.sat.f16.f16 %h6, %h2;
    cvt.u32.u16 %r11, %h3;
    cvt.u32.u16 %r12, %h4;
    cvt.u32.u16 %r13, %h5;
    cvt.u32.u16 %r14, %h6;
    cvt.rpi.f16.f16 %h3, %h1;
    cvt.rmi.sat.f16.f16 %h4, %h1;
    cvt.u32.u16 %r15, %h3;
    cvt.u32.u16 %r16, %h4;
";
    body.to_string() + &store32(&["%r11", "%r12", "%r13", "%r14", "%r15", "%r16"])
}

/// `div.full.ftz.f32` (rejected before the construct audit): ptxas's shape, the divisor above
/// 2^126 and the dividend scaled by 1/4, `MUFU.RCP`, a flushing multiply; next to `div.full`.
#[test]
fn div_full_ftz() {
    check(
        &("
    div.full.ftz.f32 %f10, %f1, %f2;
    div.full.ftz.f32 %f11, %f3, %f1;
    div.full.f32 %f12, %f1, %f2;
"
        .to_string()
            + &store32(&["%f10", "%f11", "%f12"])),
    );
}

/// Every float kernel above: cuobjdump accepts the cubin, and cuobjdump and nvdisasm (on the
/// raw words, so every control field is legal) print exactly our listing.
#[test]
fn oracle_prints_our_float_listings() {
    let Some(oracle) = Oracle::for_test("float_diff") else {
        return;
    };
    let bodies = [
        (
            "f32_add_mul_fma_every_rounding",
            body_f32_add_mul_fma_every_rounding(),
        ),
        (
            "f32_ftz_sat_minmax_neg_abs_and_immediates",
            body_f32_ftz_sat_minmax_neg_abs_and_immediates(),
        ),
        ("f64_arith_every_rounding", body_f64_arith_every_rounding()),
        ("comparisons_f32_and_f64", body_comparisons_f32_and_f64()),
        ("conversions_int_float", body_conversions_int_float()),
        ("conversions_byte_selects", body_conversions_byte_selects()),
        ("conversions_float_float", body_conversions_float_float()),
        ("conversions_sat_f64", body_conversions_sat_f64()),
        (
            "conversions_sat_int_to_f16",
            body_conversions_sat_int_to_f16(),
        ),
        ("f16_round_to_integer", body_f16_round_to_integer()),
    ];
    for (name, body) in bodies {
        let o = Options {
            file_name: format!("{name}.ptx"),
            emit: Emit::Sass,
            ..Options::default()
        };
        let out = compile(&kernel(&body), &o).unwrap_or_else(|e| panic!("{e}"));
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
    }
}
