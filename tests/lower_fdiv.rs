//! IEEE f32 division and reciprocal (`div.{rn,rz,rm,rp}{.ftz}.f32`, `rcp` likewise) end to
//! end: PTX → our cubin → the simulator, compared bit for bit with `ir::eval` AND with an
//! independent reference (the host's f64 quotient, rounded by the mode: an f64 quotient of
//! two f32s cannot double-round, see `reference`), on zeros, infinities, NaN, subnormals,
//! the largest and smallest normals, quotients that overflow or underflow, exact halfway
//! cases of subnormal results, and random operands, with every MUFU result moved by up to
//! ±2 ulps (the sequence must not depend on an exact reciprocal; the FCHK fast path of
//! `div.rn`/`rcp.rn`, ptxas's, does, and is checked on the unperturbed model only, its slow
//! path, the inline sequence, with ±2 and `--no-subroutines`). The same for `.f64`
//! div, rcp and sqrt (reference: the host's `/` and `sqrt` for `rn`, the exact residual's
//! sign for the directed modes); the f64 `div.rn`/`rcp.rn` fast path (Markstein's, which
//! does not depend on `RCP64H`'s bits) with `RCP64H` moved by ±2 ulps too, on extra inputs
//! at the edges of its check, and the inline sequence with `--no-subroutines`; the f64
//! `sqrt.rn` fast path (a directed-rounding finish, independent of `RSQ64H`'s bits) likewise,
//! on operands whose root lies next to a rounding midpoint and at the edges of its window.
//! `sqrt.{rn,rz,rm,rp}{.ftz}.f32` likewise (reference: the host's f64 root, rounded to f32,
//! and the sign of s² - x in f64; `sqrt.rn.f32`'s fast path, ptxas's one Newton step on
//! `MUFU.RSQ`, on the unperturbed model, like the division's).
//! Also: the hazard checker
//! is silent, and nvdisasm prints every word as our printer does.

mod common;

use common::Rng;
use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim::{self, SimOptions};
use leafold::sm50::sched::check::check_code;

const A: u64 = 0x1000_0000;
const B: u64 = 0x2000_0000;
const OUT: u64 = 0x3000_0000;
const BLOCK: u32 = 256;

fn ops() -> Vec<String> {
    let mut v = Vec::new();
    for f in ["div", "rcp"] {
        for r in ["rn", "rz", "rm", "rp"] {
            for ftz in ["", ".ftz"] {
                v.push(format!("{f}.{r}{ftz}.f32"));
            }
        }
    }
    v
}

fn kernel(op: &str) -> String {
    let args = if op.starts_with("div") {
        "%f3, %f1, %f2"
    } else {
        "%f3, %f2"
    };
    format!(
        r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{{
    .reg .f32 %f<4>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pout];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.s32 %r3, %r1, {BLOCK}, %r2;
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    ld.global.f32 %f1, [%rd5];
    ld.global.f32 %f2, [%rd6];
    {op} {args};
    st.global.f32 [%rd7], %f3;
    ret;
}}
"#
    )
}

fn opts() -> Options {
    Options {
        file_name: "fdiv.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// Operand pairs (a, b).
fn inputs() -> Vec<(u32, u32)> {
    let edge: Vec<u32> = [
        0.0f32,
        1.0,
        1.5,
        3.0,
        0.1,
        7.0,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        1.0 - f32::EPSILON / 2.0,
        1.0 + f32::EPSILON,
        2.0f32.powi(-100),
        2.0f32.powi(100),
        2.0f32.powi(126),
        2.0f32.powi(-126) * 1.5,
    ]
    .iter()
    .flat_map(|&x| [f(x), f(-x)])
    .chain([
        1,
        2,
        3,
        0x7f_ffff,
        0x40_0000,
        0x80_0001,
        0x7fc0_0000,
        0xffc0_1234,
    ])
    .collect();
    let mut v = Vec::new();
    for &a in &edge {
        for &b in &edge {
            v.push((a, b));
        }
    }
    // Subnormal results with exact ties and near-ties (odd multiple of 2^-149 over 2, 4..),
    // results next to the normal/subnormal boundary, overflow and the largest finite value.
    for m in [1u32, 3, 5, 7, 0x7f_ffff, 0x7f_fffd, 0x40_0001] {
        for d in [2.0f32, 4.0, 8.0, -2.0, 0.5, 1.0 + f32::EPSILON, 3.0] {
            v.push((m, f(d)));
            v.push((m | 0x8000_0000, f(d)));
        }
    }
    for (a, b) in [
        (f32::MIN_POSITIVE, 1.0 + f32::EPSILON),
        (f32::MIN_POSITIVE, 1.0 - f32::EPSILON / 2.0),
        (f32::MIN_POSITIVE * 2.0, 2.0 + 2.0 * f32::EPSILON),
        (f32::MAX, 0.5),
        (f32::MAX, 1.0 - f32::EPSILON / 2.0),
        (f32::MAX, 1.0 + f32::EPSILON),
        (f32::MAX, f32::MIN_POSITIVE),
        (1.0, f32::MAX),
        (1.0, 2.0f32.powi(-149)),
        (2.0f32.powi(-149), f32::MAX),
        (2.0f32.powi(-149), 2.0f32.powi(127)),
        (3.0 * 2.0f32.powi(-149), 4.0),
        (3.0, 2.0f32.powi(127) * 1.5),
    ] {
        for (x, y) in [(a, b), (-a, b), (a, -b), (-a, -b)] {
            v.push((f(x), f(y)));
        }
    }
    let mut rng = Rng(0x0dd_ba11_cafe);
    for _ in 0..6000 {
        v.push((rng.next_u32(), rng.next_u32()));
    }
    // Random operands whose quotient lands near the subnormal range and near overflow.
    for _ in 0..3000 {
        let (x, y) = (rng.next_u32(), rng.next_u32());
        let ea = rng.next_u32() % 40;
        let eb = 60 + rng.next_u32() % 40;
        let a = (x & 0x807f_ffff) | (ea << 23);
        let b = (y & 0x807f_ffff) | ((127 + eb) << 23);
        v.push((a, b));
        v.push((
            (x & 0x807f_ffff) | ((214 + ea % 40) << 23),
            (y & 0x807f_ffff) | ((rng.next_u32() % 90) << 23),
        ));
    }
    v
}

fn le(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn same(x: u32, y: u32) -> bool {
    x == y || (f32::from_bits(x).is_nan() && f32::from_bits(y).is_nan())
}

/// The correctly rounded `a / b` from the host. The f64 quotient of two f32s is within
/// 2^-53 relative of the true one, and the true one is either on the f32 grid of its
/// binade or at least 2^-48 relative away from every grid point and midpoint (a - b·m is a
/// nonzero multiple of 2^-47 relative), so the f64 value rounds like the exact one.
fn reference(op: &str, a: u32, b: u32) -> u32 {
    let ftz = op.contains(".ftz");
    let flush = |x: u32| {
        if ftz && x & 0x7f80_0000 == 0 {
            x & 0x8000_0000
        } else {
            x
        }
    };
    let (a, b) = (flush(a), flush(b));
    let q = f64::from(f32::from_bits(a)) / f64::from(f32::from_bits(b));
    let r = q as f32;
    let bits = if q.is_nan() || f64::from(r) == q {
        r.to_bits()
    } else {
        let neg = q < 0.0;
        let away = |r: f32| r.to_bits() + 1;
        let toward = |r: f32| r.to_bits() - 1;
        let rf = f64::from(r);
        if op.contains(".rz") && rf.abs() > q.abs() {
            toward(r)
        } else if op.contains(".rp") && rf < q {
            if neg {
                toward(r)
            } else {
                away(r)
            }
        } else if op.contains(".rm") && rf > q {
            if neg {
                away(r)
            } else {
                toward(r)
            }
        } else {
            r.to_bits()
        }
    };
    if ftz && bits & 0x7f80_0000 == 0 {
        bits & 0x8000_0000
    } else {
        bits
    }
}

/// The correctly rounded `sqrt.<rnd>{.ftz}.f32` of `x` from the host: the f64 root of an f32
/// rounded to f32 is the rn result (53 >= 2·24 + 2 bits: no double rounding), and whether it
/// lies above or below the exact root is the sign of s² - x, exact in f64 (s² has 48 bits).
fn sqrt_reference(op: &str, x: u32) -> u32 {
    let ftz = op.contains(".ftz");
    let x = if ftz && x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    };
    let xf = f64::from(f32::from_bits(x));
    let r = xf.sqrt();
    if r.is_nan() {
        return 0x7fff_ffff;
    }
    if xf == 0.0 || r.is_infinite() {
        return x;
    }
    let s = r as f32;
    let sq = f64::from(s) * f64::from(s);
    let bits = s.to_bits();
    if (op.contains(".rz") || op.contains(".rm")) && sq > xf {
        bits - 1
    } else if op.contains(".rp") && sq < xf {
        bits + 1
    } else {
        bits
    }
}

/// Compile `op`, check its code's hazards, run sim (MUFU moved by `ulps`) and eval on
/// `pairs`; assert sim == eval == reference.
fn check(op: &str, pairs: &[(u32, u32)], ulps: i32) {
    check_with(op, pairs, ulps, false)
}

/// [`check`], with `inline` the division compiled without the fast path and subroutine
/// (`--no-subroutines`).
fn check_with(op: &str, pairs: &[(u32, u32)], ulps: i32, inline: bool) {
    let n = pairs.len().div_ceil(BLOCK as usize) * BLOCK as usize;
    let mut a: Vec<u32> = pairs.iter().map(|p| p.0).collect();
    let mut b: Vec<u32> = pairs.iter().map(|p| p.1).collect();
    a.resize(n, 0x3f80_0000);
    b.resize(n, 0x3f80_0000);
    let src = kernel(op);
    let o = Options {
        no_subroutines: inline,
        ..opts()
    };
    let out =
        compile(&src, &o).unwrap_or_else(|d| panic!("{op}: {}", leafold::error::render_all(&d.0)));
    // div.rn / rcp.rn without .ftz: a fast path per site, one subroutine after the code
    // (the division's starts with FCHK.DIVIDE, the reciprocal's with an exponent test).
    let fast = is_fast_path(op) && !inline;
    for what in ["CAL ", "RET"] {
        assert_eq!(out.sass.contains(what), fast, "{op}: {what}\n{}", out.sass);
    }
    let fchk = fast && op.starts_with("div");
    assert_eq!(out.sass.contains("FCHK.DIVIDE"), fchk, "{op}\n{}", out.sass);
    let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
    let errs = check_code(&code);
    assert!(errs.is_empty(), "{op}: {errs:#?}\n{}", out.sass);
    let unit = if op.starts_with("sqrt") {
        "MUFU.RSQ"
    } else {
        "MUFU.RCP"
    };
    assert!(out.sass.contains(unit), "{op}:\n{}", out.sass);

    let mut launch = Launch::new([n as u32 / BLOCK, 1, 1], [BLOCK, 1, 1]);
    launch.params = [A, B, OUT].iter().flat_map(|x| x.to_le_bytes()).collect();
    launch.global = vec![
        GlobalRegion {
            base: A,
            bytes: le(&a),
        },
        GlobalRegion {
            base: B,
            bytes: le(&b),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; n * 4],
        },
    ];
    let module = common::ir_module("fdiv.ptx", &src);
    let reference_run = eval::run(&module, "k", &launch).expect("ir::eval runs");
    let want = words(reference_run.region(OUT).unwrap());
    let (_, info) = common::load_our_kernel(&out, &module.functions[0]);
    let o = SimOptions { mufu_ulps: ulps };
    let ours =
        sim::run_with(&code, &info, &launch, &o).unwrap_or_else(|e| panic!("{op}: sim: {e}"));
    let got = words(ours.region(OUT).unwrap());
    let rcp = op.starts_with("rcp");
    let mut bad = Vec::new();
    for k in 0..n {
        let x = if rcp { 0x3f80_0000 } else { a[k] };
        let host = if op.starts_with("sqrt") {
            sqrt_reference(op, b[k])
        } else {
            reference(op, x, b[k])
        };
        assert!(
            same(want[k], host),
            "eval {op}({:#x}, {:#x}) = {:#x}, host says {host:#x}",
            x,
            b[k],
            want[k]
        );
        // The simulator must give eval's bits, NaN payloads included (the host may not).
        if got[k] != want[k] && bad.len() < 12 {
            bad.push(format!(
                "{op}({:#x} = {:e}, {:#x} = {:e}) MUFU {ulps:+}: sim {:#x}, want {:#x}",
                x,
                f32::from_bits(x),
                b[k],
                f32::from_bits(b[k]),
                got[k],
                want[k]
            ));
        }
    }
    assert!(bad.is_empty(), "{}\n{}", bad.join("\n"), out.sass);
}

/// Whether `op` gets the FCHK fast path and the slow-path subroutine (see `select::fdiv`).
fn is_fast_path(op: &str) -> bool {
    op == "div.rn.f32" || op == "rcp.rn.f32" || op == "sqrt.rn.f32"
}

/// The inputs mix lanes that FCHK.DIVIDE flags (specials, subnormals, exponent gaps) with
/// lanes it does not, in every warp, so the slow path runs in divergent warps (a `@!P RET`
/// returns part of the warp). The fast path is ptxas's one Newton step on `MUFU.RCP`, and
/// unlike the inline sequence it DOES depend on the reciprocal's bits (with `RCP(1 - 2^-24)`
/// = 1.0, an error of half an ulp, `1 / (1 - 2^-24)` comes out 1.0 instead of `1 + 2^-23`):
/// it is right where the unit returns what ptxas counts on. So it is checked on the
/// simulator's model (correctly rounded) only; the inline sequence, which the slow path runs,
/// with MUFU moved by up to 2 ulps (`--no-subroutines`).
#[test]
fn div_and_rcp_are_correctly_rounded_with_perturbed_mufu() {
    let pairs = inputs();
    for op in ops() {
        if is_fast_path(&op) {
            check(&op, &pairs, 0);
            for ulps in [0, 2, -2, 1, -1] {
                check_with(&op, &pairs, ulps, true);
            }
        } else {
            for ulps in [0, 2, -2, 1, -1] {
                check(&op, &pairs, ulps);
            }
        }
    }
}

/// `rcp.rn.f32`'s own fast path and slow path (`select::fdiv::frcp_slow_path`), which
/// sorts its operands by exponent: operands of every biased exponent (0 to 255, both
/// signs, random significands), with extra weight on the classes the slow path treats
/// apart: subnormals (the ·2^64 scaling, whose reciprocals overflow to infinity below
/// about 2^-128), exponents 253 and 254 (subnormal reciprocals, ties included: `2^127 ·
/// (1 + k·2^-23)`), powers of two at every boundary, zeros, infinities and NaNs; checked
/// on the simulator's model, in warps that mix every class.
#[test]
fn rcp_rn_is_correctly_rounded_for_every_exponent() {
    let mut rng = Rng(0x5ca1_ab1e);
    let mut ys: Vec<u32> = Vec::new();
    for e in 0..=255u32 {
        for _ in 0..24 {
            ys.push((rng.next_u32() & 0x807f_ffff) | (e << 23));
        }
    }
    for _ in 0..3000 {
        let m = rng.next_u32() & 0x807f_ffff;
        ys.push(m);
        ys.push(m | (253 << 23));
        ys.push(m | (254 << 23));
        ys.push(m | (252 << 23));
        ys.push(m | (1 << 23));
    }
    for e in [-149, -148, -129, -128, -127, -126, -125, 0, 125, 126, 127] {
        let p = 2.0f32.powi(e);
        for y in [p, -p] {
            ys.extend([f(y), f(y) + 1, f(y).wrapping_sub(1)]);
        }
    }
    ys.extend([
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffff_ffff,
        1,
    ]);
    ys.extend([
        0x7f7f_ffff,
        0xff7f_ffff,
        0x007f_ffff,
        0x0000_0002,
        0x0040_0000,
    ]);
    for _ in 0..4000 {
        ys.push(rng.next_u32());
    }
    let pairs: Vec<(u32, u32)> = ys.iter().map(|&y| (0x3f80_0000, y)).collect();
    check("rcp.rn.f32", &pairs, 0);
}

/// `sqrt.<rnd>{.ftz}.f32` on the division inputs' second operands, plus squares of random
/// f32s (exact roots) and their neighbours, and subnormals; `sqrt.rn.f32` with its fast
/// path and slow path (in warps that mix both) on the model, inline perturbed.
#[test]
fn f32_sqrt_is_correctly_rounded_in_every_mode_with_perturbed_mufu() {
    let mut pairs = inputs();
    let mut rng = Rng(0x5eed_5a2e);
    for _ in 0..3000 {
        // A 12-bit significand squares exactly to an f32; exponents 2^-57..2^62 keep the
        // square normal and finite.
        let e = 70 + rng.next_u32() % 120;
        let s = f32::from_bits((e << 23) | (rng.next_u32() & 0x007f_f000));
        let sq = f(s * s);
        for x in [sq - 1, sq, sq + 1] {
            pairs.push((0, x));
        }
        pairs.push((0, rng.next_u32() & 0x807f_ffff));
    }
    for r in ["rn", "rz", "rm", "rp"] {
        for ftz in ["", ".ftz"] {
            let op = format!("sqrt.{r}{ftz}.f32");
            if is_fast_path(&op) {
                // ptxas's fast path and slow path depend on `MUFU.RSQ`'s bits
                // (`select::fdiv`): on the model only; the inline sequence perturbed.
                check(&op, &pairs, 0);
                for ulps in [0, 2, -2] {
                    check_with(&op, &pairs, ulps, true);
                }
                continue;
            }
            for ulps in [0, 2, -2] {
                check(&op, &pairs, ulps);
            }
        }
    }
}

#[test]
fn nvdisasm_agrees_with_our_printer() {
    let Some(oracle) = Oracle::for_test("lower_fdiv") else {
        return;
    };
    let sqrt = ["rn", "rz", "rm", "rp"]
        .iter()
        .flat_map(|r| ["", ".ftz"].map(|ftz| format!("sqrt.{r}{ftz}.f32")));
    for op in ops().into_iter().chain(sqrt) {
        let out = compile(&kernel(&op), &opts()).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, &op, &out.cubin, &out.sass);
    }
}

#[test]
fn div_without_a_rounding_modifier_is_a_named_diagnostic() {
    let src = kernel("div.f32");
    let err = compile(&src, &opts()).expect_err("div.f32");
    let text = leafold::error::render_all(&err.0);
    assert!(text.contains("rounding modifier"), "{text}");
    assert!(text.contains("fdiv.ptx:"), "{text}");
}

fn ops64() -> Vec<String> {
    let mut v = Vec::new();
    for f in ["div", "rcp", "sqrt"] {
        for r in ["rn", "rz", "rm", "rp"] {
            v.push(format!("{f}.{r}.f64"));
        }
    }
    v
}

fn kernel64(op: &str) -> String {
    kernel(op)
        .replace(".f32", ".f64")
        .replace("mul.wide.u32 %rd4, %r3, 4", "mul.wide.u32 %rd4, %r3, 8")
}

fn g(x: f64) -> u64 {
    x.to_bits()
}

/// f64 operand pairs: the f32 edge set's analogues, ties of subnormal results, overflow,
/// and random patterns (some steered to land near the subnormal range and near overflow).
fn inputs64() -> Vec<(u64, u64)> {
    let tiny = f64::from_bits(1);
    let edge: Vec<u64> = [
        0.0f64,
        1.0,
        1.5,
        3.0,
        0.1,
        7.0,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::INFINITY,
        1.0 - f64::EPSILON / 2.0,
        1.0 + f64::EPSILON,
        2f64.powi(-600),
        2f64.powi(600),
        2f64.powi(1022),
        f64::MIN_POSITIVE * 1.5,
        tiny,
        tiny * 3.0,
        f64::MIN_POSITIVE - tiny,
    ]
    .iter()
    .flat_map(|&x| [g(x), g(-x)])
    .chain([0x7ff8_0000_0000_0000, 0xfff0_0000_0000_1234])
    // NaN payloads: quiet and signalling, both signs (a NaN operand passes through,
    // quieted, the first of two for a division: `ir::float::div`).
    .chain([
        0x7ff8_0000_0000_0123,
        0xfff8_0000_0000_0456,
        0x7ff0_0000_0000_0789,
        0xfff4_5678_9abc_def0,
    ])
    .collect();
    let mut v = Vec::new();
    for &a in &edge {
        for &b in &edge {
            v.push((a, b));
        }
    }
    for m in [1u64, 3, 5, 7, (1 << 52) - 1, (1 << 52) - 3, (1 << 51) + 1] {
        for d in [2.0f64, 4.0, -2.0, 0.5, 1.0 + f64::EPSILON, 3.0] {
            v.push((m, g(d)));
            v.push((m | 1 << 63, g(d)));
        }
    }
    // Squares and their neighbours (sqrt reads the second operand).
    for k in [
        3.0f64,
        9.0,
        1.0 + f64::EPSILON,
        1.5,
        12345.678,
        2f64.powi(-520) * 3.0,
    ] {
        let sq = k * k;
        for bits in [sq.to_bits() - 1, sq.to_bits(), sq.to_bits() + 1] {
            v.push((g(1.0), bits));
        }
    }
    // The edges of the f64 fast path's check (`select::fdiv`): divisors with an all-ones
    // significand or low word, x = y, dividends around 2^-970, divisors around 2^1017 and
    // 2^-1022, quotients around 2^-1021 and 2^-1022, ties on the subnormal grid (x =
    // y·(k + 1/2)·2^-1074 exactly), quotients just below and above overflow.
    let ones = g(2.0 - f64::EPSILON);
    for y in [
        ones,
        ones ^ 1 << 63,
        ones + (5 << 52),
        ones - (700 << 52),
        g(1.5) | 0xffff_ffff,
    ] {
        for x in [
            g(1.0),
            g(3.0),
            g(-0.75),
            g(2.0 - f64::EPSILON),
            ones + (9 << 52),
            g(0.1),
        ] {
            v.push((x, y));
        }
    }
    for x in [
        1.0f64,
        -3.5,
        0.1,
        2f64.powi(-1000),
        7e300,
        f64::MIN_POSITIVE,
    ] {
        v.push((g(x), g(x)));
    }
    for e in [-972, -971, -970, -969] {
        for y in [1.0f64, 3.0, 0.7, 2f64.powi(-60)] {
            v.push((g(2f64.powi(e) * 1.3), g(y)));
            v.push((g(2f64.powi(e)), g(y)));
        }
    }
    for y in [
        2f64.powi(1016) * 1.9,
        2f64.powi(1017),
        2f64.powi(1017) * 1.1,
        2f64.powi(1022),
    ] {
        for x in [1.0f64, 2f64.powi(1000), f64::MAX, 3.0] {
            v.push((g(x), g(y)));
        }
    }
    for y in [
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE * 1.5,
        f64::MIN_POSITIVE * 0.75,
    ] {
        for x in [2f64.powi(-1000), 1e-300, 1.0, 2f64.powi(-970)] {
            v.push((g(x), g(y)));
        }
    }
    for q in [
        2f64.powi(-1021),
        2f64.powi(-1022),
        f64::MIN_POSITIVE * 1.99,
        2f64.powi(-1023),
    ] {
        for y in [3.0f64, 2f64.powi(60) * 1.7, 2f64.powi(52) + 1.0] {
            let x = q * y;
            for bits in [g(x) - 1, g(x), g(x) + 1] {
                v.push((bits, g(y)));
            }
        }
    }
    for k in [1u64, 3, (1 << 50) + 1, (1 << 51) - 1] {
        for y in [3u64, 5, 7] {
            // x = y·(k + 1/2)·2^-1074: (2k+1)·y fits 53 bits.
            let x = ((2 * k + 1) * y) as f64 * 2f64.powi(-1075) * 2f64.powi(60);
            v.push((g(x), g(y as f64 * 2f64.powi(60))));
        }
    }
    for x in [f64::MAX, f64::MAX * 0.75, 2f64.powi(1000)] {
        for y in [
            1.0 - f64::EPSILON / 2.0,
            1.0 - f64::EPSILON,
            0.5,
            2f64.powi(-24) * 1.1,
        ] {
            v.push((g(x), g(y)));
        }
    }
    let mut rng = Rng(0xfeed_f00d);
    let r64 = |rng: &mut Rng| u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
    for _ in 0..3000 {
        v.push((r64(&mut rng), r64(&mut rng)));
    }
    for _ in 0..1500 {
        let (x, y) = (r64(&mut rng), r64(&mut rng));
        let ea = u64::from(rng.next_u32() % 60);
        let eb = 1000 + u64::from(rng.next_u32() % 60);
        let m = 0x800f_ffff_ffff_ffffu64;
        v.push(((x & m) | ea << 52, (y & m) | eb << 52));
        v.push((
            (x & m) | (1990 + ea) << 52,
            (y & m) | (u64::from(rng.next_u32()) % 80) << 52,
        ));
    }
    v
}

fn same64(x: u64, y: u64) -> bool {
    x == y || (f64::from_bits(x).is_nan() && f64::from_bits(y).is_nan())
}

/// What the host can say about the correctly rounded `a / b`: `rn` is the host's `/`; a
/// directed result is that or its neighbour, on the side the exact residual's sign says
/// (checked where the quotient and the dividend are far from underflow and overflow, so
/// that `mul_add`'s residual x - y·n is exact).
fn host64_agrees(op: &str, a: u64, b: u64, got: u64) -> bool {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    let n = x / y;
    if op.contains(".rn") {
        return same64(got, n.to_bits());
    }
    if !n.is_finite() || n == 0.0 || n.abs() < 1e-290 || n.abs() > 1e290 || x.abs() < 1e-270 {
        return true;
    }
    let res = (-y).mul_add(n, x);
    if res == 0.0 {
        return got == n.to_bits();
    }
    // The exact quotient is above n iff res / y > 0.
    let q_above = (res > 0.0) == (y > 0.0);
    let next_up = |v: f64| {
        f64::from_bits(if v > 0.0 {
            v.to_bits() + 1
        } else {
            v.to_bits() - 1
        })
    };
    let next_down = |v: f64| {
        f64::from_bits(if v > 0.0 {
            v.to_bits() - 1
        } else {
            v.to_bits() + 1
        })
    };
    let rp = if q_above { next_up(n) } else { n };
    let rm = if q_above { n } else { next_down(n) };
    let want = if op.contains(".rp") {
        rp
    } else if op.contains(".rm") || n > 0.0 {
        rm
    } else {
        rp
    };
    got == want.to_bits()
}

/// [`host64_agrees`] for `sqrt`: rn is the host's root; a directed result is that or its
/// neighbour as the exact residual x - n² says.
fn host64_sqrt_agrees(op: &str, a: u64, got: u64) -> bool {
    let x = f64::from_bits(a);
    let n = x.sqrt();
    if op.contains(".rn") || !n.is_finite() || n <= 0.0 || x < 1e-290 {
        return same64(got, n.to_bits()) || !op.contains(".rn") && x < 1e-290;
    }
    let res = (-n).mul_add(n, x);
    let want = if res == 0.0 {
        n
    } else if res > 0.0 {
        // The root is above n.
        if op.contains(".rp") {
            f64::from_bits(n.to_bits() + 1)
        } else {
            n
        }
    } else if op.contains(".rp") {
        n
    } else {
        f64::from_bits(n.to_bits() - 1)
    };
    got == want.to_bits()
}

fn check64(op: &str, pairs: &[(u64, u64)], ulps: i32) {
    check64_with(op, pairs, ulps, false)
}

/// Whether `op` gets the f64 fast path and the slow-path subroutine.
fn is_fast_path64(op: &str) -> bool {
    op == "div.rn.f64" || op == "rcp.rn.f64" || op == "sqrt.rn.f64"
}

/// [`check64`], with `inline` compiled with `--no-subroutines` (the exact sequence).
fn check64_with(op: &str, pairs: &[(u64, u64)], ulps: i32, inline: bool) {
    let n = pairs.len().div_ceil(BLOCK as usize) * BLOCK as usize;
    let mut a: Vec<u64> = pairs.iter().map(|p| p.0).collect();
    let mut b: Vec<u64> = pairs.iter().map(|p| p.1).collect();
    a.resize(n, g(1.0));
    b.resize(n, g(1.0));
    let src = kernel64(op);
    let o = Options {
        no_subroutines: inline,
        ..opts()
    };
    let out =
        compile(&src, &o).unwrap_or_else(|d| panic!("{op}: {}", leafold::error::render_all(&d.0)));
    // div.rn.f64 / rcp.rn.f64: the fast path at the site, one CAL'd subroutine.
    let fast = is_fast_path64(op) && !inline;
    for what in ["CAL ", "RET", "SSY"] {
        assert_eq!(out.sass.contains(what), fast, "{op}: {what}\n{}", out.sass);
    }
    let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
    let errs = check_code(&code);
    assert!(errs.is_empty(), "{op}: {errs:#?}\n{}", out.sass);
    assert!(out.sass.contains("64H"), "{op}:\n{}", out.sass);
    let le64 = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let mut launch = Launch::new([n as u32 / BLOCK, 1, 1], [BLOCK, 1, 1]);
    launch.params = [A, B, OUT].iter().flat_map(|x| x.to_le_bytes()).collect();
    launch.global = vec![
        GlobalRegion {
            base: A,
            bytes: le64(&a),
        },
        GlobalRegion {
            base: B,
            bytes: le64(&b),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; n * 8],
        },
    ];
    let module = common::ir_module("fdiv.ptx", &src);
    let run = eval::run(&module, "k", &launch).expect("ir::eval runs");
    let w64 = |b: &[u8]| -> Vec<u64> {
        b.chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let want = w64(run.region(OUT).unwrap());
    let (_, info) = common::load_our_kernel(&out, &module.functions[0]);
    let o = SimOptions { mufu_ulps: ulps };
    let ours =
        sim::run_with(&code, &info, &launch, &o).unwrap_or_else(|e| panic!("{op}: sim: {e}"));
    let got = w64(ours.region(OUT).unwrap());
    let rcp = op.starts_with("rcp");
    let mut bad = Vec::new();
    for k in 0..n {
        let x = if rcp { g(1.0) } else { a[k] };
        let host = if op.starts_with("sqrt") {
            host64_sqrt_agrees(op, b[k], want[k])
        } else {
            host64_agrees(op, x, b[k], want[k])
        };
        assert!(
            host,
            "eval {op}({x:#x}, {:#x}) = {:#x}, host disagrees",
            b[k], want[k]
        );
        // The simulator must give eval's bits, NaN payloads included (the host may not).
        if got[k] != want[k] && bad.len() < 12 {
            bad.push(format!(
                "{op}({x:#x} = {:e}, {:#x} = {:e}) MUFU {ulps:+}: sim {:#x}, want {:#x}",
                f64::from_bits(x),
                b[k],
                f64::from_bits(b[k]),
                got[k],
                want[k]
            ));
        }
    }
    assert!(bad.is_empty(), "{}\n{}", bad.join("\n"), out.sass);
}

#[test]
fn f64_div_rcp_sqrt_are_correctly_rounded_with_perturbed_mufu() {
    let pairs = inputs64();
    for op in ops64() {
        for ulps in [0, 2, -2] {
            check64(&op, &pairs, ulps);
            if is_fast_path64(&op) {
                check64_with(&op, &pairs, ulps, true);
            }
        }
    }
}

/// `sqrt.rn.f64` operands (as the second operand: sqrt reads it) at the edges of the fast
/// path's window (`select::fdiv`: x in [2^-970, +inf)) and its finish: the doubles next to
/// m² for midpoints m = (2K + 1)·2^-53 (their roots lie within about 2^-107 relative of m,
/// so a wrong neighbour or a wrong midpoint test shows), at exponents across the range;
/// exact squares and their neighbours; subnormals, tiny and huge normals, zeros, negatives,
/// infinities and NaN; and random bit patterns and random positive normals.
fn sqrt_inputs64() -> Vec<(u64, u64)> {
    let mut x: Vec<u64> = Vec::new();
    let mut rng = Rng(0x5eed_0017);
    let r64 = |rng: &mut Rng| u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32());
    // Midpoint squares: (2K + 1)^2 · 2^-106 · 4^j, the doubles just below and above it.
    for j in [-480i32, -300, -100, -1, 0, 1, 7, 200, 500, 510] {
        for _ in 0..40 {
            let k = (1u64 << 52) | (r64(&mut rng) & ((1 << 52) - 1));
            let m = (2 * k + 1) as u128;
            let sq = m * m; // 107 or 108 bits
            let shift = 128 - sq.leading_zeros() - 53;
            let top = (sq >> shift) as u64; // 53 bits, truncated
            for t in [top - 1, top, top + 1, top + 2] {
                let v = (t as f64) * 2f64.powi(shift as i32 - 106 + 2 * j);
                x.push(v.to_bits());
            }
        }
    }
    // 1 + 2^-52 (root just below the midpoint 1 + 2^-53) and its scaled copies.
    for j in [-485i32, -2, 0, 3, 511] {
        let v = (1.0 + f64::EPSILON) * 2f64.powi(2 * j);
        x.extend([v.to_bits() - 1, v.to_bits(), v.to_bits() + 1]);
    }
    // Exact squares and neighbours, of small integers and of doubles with full significands.
    for _ in 0..200 {
        // 26 significant bits: s² is exact.
        let e = 523 + u64::from(rng.next_u32() % 1000);
        let s = f64::from_bits(e << 52 | (r64(&mut rng) >> 39) << 27);
        let sq = (s * s).to_bits();
        x.extend([sq - 1, sq, sq + 1]);
    }
    // The window's edges: x.hi around 0x03500000 (2^-970) and 0x7ff00000, x.hi's top bits.
    for hi in [
        0x034f_ffffu64,
        0x0350_0000,
        0x0350_0001,
        0x0340_0000,
        0x0010_0000,
        0x000f_ffff,
        0x7fef_ffff,
        0x7fe0_0000,
        0x7ff0_0000,
        0x7ff0_0001,
        0x7ff8_0000,
        0x8000_0000,
        0x8350_0000,
        0xfff0_0000,
    ] {
        for lo in [0u64, 1, 0xffff_ffff, 0x8000_0000] {
            x.push(hi << 32 | lo);
        }
    }
    for v in [
        0.0f64,
        -0.0,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MIN_POSITIVE,
        f64::MAX,
        -1.0,
        -f64::MIN_POSITIVE,
        f64::NEG_INFINITY,
        2f64.powi(-970),
        2f64.powi(-971) * 1.999,
        2f64.powi(1023),
        4.0,
        2.0,
    ] {
        x.push(v.to_bits());
    }
    for _ in 0..1500 {
        x.push(r64(&mut rng));
        x.push(r64(&mut rng) >> 1);
    }
    x.into_iter().map(|b| (g(1.0), b)).collect()
}

#[test]
fn f64_sqrt_rn_fast_path_is_correctly_rounded_near_midpoints_and_window_edges() {
    let pairs = sqrt_inputs64();
    for ulps in [0, 2, -2] {
        check64("sqrt.rn.f64", &pairs, ulps);
        check64_with("sqrt.rn.f64", &pairs, ulps, true);
    }
}

#[test]
fn f64_nvdisasm_agrees_with_our_printer() {
    let Some(oracle) = Oracle::for_test("lower_fdiv") else {
        return;
    };
    for op in ops64() {
        let out = compile(&kernel64(&op), &opts()).unwrap();
        let ours = common::parse_lines(&out.sass);
        let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
        let raw = oracle
            .nvdisasm_raw(&code)
            .expect("nvdisasm accepts our words");
        assert_eq!(common::parse_lines(&raw), ours, "{op}");
    }
}
