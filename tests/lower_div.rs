//! Integer `div`/`rem` end to end: PTX → our cubin → the SM50 simulator, compared with the
//! IR interpreter (`ir::eval`, the PTX semantics) on edge operands (0, 1, 2, max, min,
//! powers of two and their neighbours) crossed with each other, plus random pairs; and again
//! with every `MUFU` result perturbed by ±1 and ±2 ulps, which must not change any result
//! (the sequence may only rely on `MUFU.RCP` being within 2 ulps). 64-bit division is a loop
//! built in the IR; it is checked the same way. The cubins also pass the hazard checker, and
//! NVIDIA's cuobjdump and nvdisasm print every word as our printer does.

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

/// `out[i] = a[i] <op> b[i]` for `.<ty>` elements (`width` bytes each).
fn kernel(op: &str, ty: &str, width: u32) -> String {
    let ty = if width == 2 {
        ty.replace("32", "16")
    } else {
        ty.to_string()
    };
    let reg = format!("b{}", width * 8);
    let mul = width;
    let ld = ty;
    format!(
        r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout)
{{
    .reg .{reg} %v<4>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pout];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.s32 %r3, %r1, {BLOCK}, %r2;
    mul.wide.u32 %rd4, %r3, {mul};
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    ld.global.{ld} %v1, [%rd5];
    ld.global.{ld} %v2, [%rd6];
    {op}.{ld} %v3, %v1, %v2;
    st.global.{ld} [%rd7], %v3;
    ret;
}}
"#
    )
}

fn opts() -> Options {
    Options {
        file_name: "div.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// Edge operands of a `bits`-bit type, as zero-extended u64.
fn edges(bits: u32) -> Vec<u64> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut v = vec![0, 1, 2, 3, 5, 7, 10, 0xff, 1000, 0xffff, 0x10001];
    for k in [bits / 2, bits - 2, bits - 1] {
        let p = 1u64 << k;
        v.extend([p - 1, p, p + 1]);
    }
    v.extend([mask, mask - 1, mask - 2, mask / 3, mask / 7 * 5]);
    let mut v: Vec<u64> = v.into_iter().map(|x| x & mask).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Operand pairs: edges × edges, random × edges, random × random (of random magnitude,
/// so that small divisors and quotients near their limits are common).
fn pairs(bits: u32, seed: u64) -> Vec<(u64, u64)> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let e = edges(bits);
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for &a in &e {
        for &b in &e {
            out.push((a, b));
        }
    }
    let rand = |rng: &mut Rng| {
        let shift = rng.next() % u64::from(bits);
        (rng.next() >> shift) & mask
    };
    for _ in 0..512 {
        let x = rand(&mut rng);
        let y = e[(rng.next() % e.len() as u64) as usize];
        out.push((x, y));
        out.push((y, x));
    }
    for _ in 0..2048 {
        out.push((rand(&mut rng), rand(&mut rng)));
    }
    out
}

fn le(v: &[u64], width: u32) -> Vec<u8> {
    v.iter()
        .flat_map(|x| x.to_le_bytes()[..width as usize].to_vec())
        .collect()
}

/// Compile, then run the kernel on `pairs` in `ir::eval` and (with each MUFU perturbation)
/// in the simulator; all must agree. Returns the results for the caller's own checks.
fn check(op: &str, ty: &str, bits: u32) -> Vec<u8> {
    let src = kernel(op, ty, bits / 8);
    check_src(&format!("{op}.{ty}"), &src, bits, 1).remove(0)
}

/// Like [`check`] for any kernel `k(pa, pb, out0, .., out{outs-1})` over the operand
/// pairs: returns each output region as `ir::eval` computed it (the simulator agreed).
fn check_src(what: &str, src: &str, bits: u32, outs: usize) -> Vec<Vec<u8>> {
    let width = bits / 8;
    let out =
        compile(src, &opts()).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    let code = c.kernels[0].code.clone();
    let errs = check_code(&code);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);

    let mut p = pairs(bits, 0x9e37_79b9_7f4a_7c15 ^ u64::from(bits));
    let n = p.len().div_ceil(BLOCK as usize) * BLOCK as usize;
    p.resize(n, (7, 3));
    let a: Vec<u64> = p.iter().map(|x| x.0).collect();
    let b: Vec<u64> = p.iter().map(|x| x.1).collect();
    let outs: Vec<u64> = (0..outs as u64).map(|k| OUT + k * 0x100_0000).collect();
    let mut launch = Launch::new([n as u32 / BLOCK, 1, 1], [BLOCK, 1, 1]);
    launch.params = [A, B]
        .iter()
        .chain(&outs)
        .flat_map(|x| x.to_le_bytes())
        .collect();
    launch.global = vec![
        GlobalRegion {
            base: A,
            bytes: le(&a, width),
        },
        GlobalRegion {
            base: B,
            bytes: le(&b, width),
        },
    ];
    for &o in &outs {
        launch.global.push(GlobalRegion {
            base: o,
            bytes: vec![0; n * width as usize],
        });
    }
    launch.step_limit = u64::MAX / 2;

    let module = common::ir_module("div.ptx", src);
    let reference = eval::run(&module, "k", &launch).expect("ir::eval runs");
    let want: Vec<Vec<u8>> = outs
        .iter()
        .map(|&o| reference.region(o).unwrap().to_vec())
        .collect();
    let (_, info) = common::load_our_kernel(&out, &module.functions[0]);
    for ulps in [0, 1, -1, 2, -2] {
        let opts = SimOptions { mufu_ulps: ulps };
        let ours = sim::run_with(&code, &info, &launch, &opts)
            .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        for (&o, want) in outs.iter().zip(&want) {
            let got = ours.region(o).unwrap();
            for (k, (g, w)) in got
                .chunks(width as usize)
                .zip(want.chunks(width as usize))
                .enumerate()
            {
                assert_eq!(
                    g, w,
                    "{what} (output at {o:#x}): {:#x}, {:#x} with MUFU {ulps:+} ulps: sim {g:02x?}, eval {w:02x?}",
                    a[k], b[k]
                );
            }
        }
    }
    want
}

/// The expected value of `op` on `bits`-bit operands, computed here independently of
/// `ir::eval` (so the reference itself is checked): truncating division, remainder with the
/// dividend's sign, all ones for a zero divisor, wrapping `MIN / -1`.
fn expect(op: &str, signed: bool, bits: u32, a: u64, b: u64) -> u64 {
    let mask = u64::MAX >> (64 - bits);
    if b == 0 {
        return mask;
    }
    let sx = |x: u64| ((x << (64 - bits)) as i64) >> (64 - bits);
    let r = match (op, signed) {
        ("div", false) => a / b,
        ("rem", false) => a % b,
        ("div", true) => sx(a).wrapping_div(sx(b)) as u64,
        _ => sx(a).wrapping_rem(sx(b)) as u64,
    };
    r & mask
}

fn check_all(op: &str, ty: &str, bits: u32) {
    let got = check(op, ty, bits);
    let width = (bits / 8) as usize;
    let p = pairs(bits, 0x9e37_79b9_7f4a_7c15 ^ u64::from(bits));
    for (k, &(a, b)) in p.iter().enumerate() {
        let mut w = [0u8; 8];
        w[..width].copy_from_slice(&got[k * width..(k + 1) * width]);
        let v = u64::from_le_bytes(w);
        assert_eq!(
            v,
            expect(op, ty.starts_with('s'), bits, a, b),
            "{op}.{ty} {a:#x}, {b:#x}"
        );
    }
}

#[test]
fn div_u32() {
    check_all("div", "u32", 32);
}

#[test]
fn div_s32() {
    check_all("div", "s32", 32);
}

#[test]
fn rem_u32() {
    check_all("rem", "u32", 32);
}

#[test]
fn rem_s32() {
    check_all("rem", "s32", 32);
}

#[test]
fn div_rem_16_bit() {
    for (op, ty) in [
        ("div", "u32"),
        ("div", "s32"),
        ("rem", "u32"),
        ("rem", "s32"),
    ] {
        check_all(op, &ty.replace("32", "16"), 16);
    }
}

#[test]
fn div_rem_64_bit() {
    for (op, ty) in [
        ("div", "u64"),
        ("div", "s64"),
        ("rem", "u64"),
        ("rem", "s64"),
    ] {
        check_all(op, ty, 64);
    }
}

#[test]
fn nvdisasm_agrees_with_our_printer() {
    let Some(oracle) = Oracle::for_test("lower_div") else {
        return;
    };
    for (op, ty) in [
        ("div", "u32"),
        ("div", "s32"),
        ("rem", "u32"),
        ("rem", "s16"),
    ] {
        let width = if ty.ends_with("16") { 2 } else { 4 };
        let out = compile(&kernel(op, ty, width), &opts()).unwrap();
        let what = format!("{op}.{ty}");
        common::assert_oracle_prints_our_listing(&oracle, &what, &out.cubin, &out.sass);
    }
}

/// 16-bit operands straight from the parameter space: `b` sits at byte 2 of a constant-bank
/// word, which must be shifted down (a `c[0x0][0x148]` read would give `a` again).
#[test]
fn narrow_parameters_at_odd_offsets() {
    let src = std::fs::read_to_string(format!(
        "{}/tests/data/fpmath/div_s16.ptx",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let out = compile(&src, &opts()).unwrap();
    let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
    let module = common::ir_module("div_s16.ptx", &src);
    let (_, info) = common::load_our_kernel(&out, &module.functions[0]);
    for (a, b) in [(1000i16, 7i16), (-32768, -1), (-7, 2), (5, 0), (300, -300)] {
        let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
        launch.params = OUT.to_le_bytes().to_vec();
        launch.params.extend(a.to_le_bytes());
        launch.params.extend(b.to_le_bytes());
        launch.global = vec![GlobalRegion {
            base: OUT,
            bytes: vec![0; 2],
        }];
        let reference = eval::run(&module, "div_s16", &launch).unwrap();
        let ours = sim::run(&code, &info, &launch).unwrap();
        let want = expect("div", true, 16, a as u16 as u64, b as u16 as u64) as u16;
        assert_eq!(
            reference.region(OUT).unwrap(),
            want.to_le_bytes(),
            "{a} / {b}"
        );
        assert_eq!(
            ours.region(OUT).unwrap(),
            want.to_le_bytes(),
            "{a} / {b}\n{}",
            out.sass
        );
    }
}

/// `out0 = a / b`, `out1 = a % b`, `out2 = (a ^ 0x5a5a) / b`, `out3 = b % a`: three
/// divisions by `b` share one reciprocal of `b` (and `a / b`, `a % b` one quotient), so the
/// shared lowering runs; the fourth divides by `a` alone.
fn shared_kernel(ty: &str) -> String {
    format!(
        r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 po0, .param .u64 po1,
                  .param .u64 po2, .param .u64 po3)
{{
    .reg .b32 %v<12>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<20>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %tid.x;
    mad.lo.s32 %r3, %r1, {BLOCK}, %r2;
    mul.wide.u32 %rd4, %r3, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    ld.global.{ty} %v1, [%rd5];
    ld.global.{ty} %v2, [%rd6];
    div.{ty} %v3, %v1, %v2;
    rem.{ty} %v4, %v1, %v2;
    xor.b32 %v5, %v1, 0x5a5a;
    div.{ty} %v6, %v5, %v2;
    rem.{ty} %v7, %v2, %v1;
    ld.param.u64 %rd7, [po0];
    add.s64 %rd8, %rd7, %rd4;
    st.global.{ty} [%rd8], %v3;
    ld.param.u64 %rd9, [po1];
    add.s64 %rd10, %rd9, %rd4;
    st.global.{ty} [%rd10], %v4;
    ld.param.u64 %rd11, [po2];
    add.s64 %rd12, %rd11, %rd4;
    st.global.{ty} [%rd12], %v6;
    ld.param.u64 %rd13, [po3];
    add.s64 %rd14, %rd13, %rd4;
    st.global.{ty} [%rd14], %v7;
    ret;
}}
"#
    )
}

/// Divisions sharing a divisor (and a `div`/`rem` pair sharing both operands) are lowered
/// with one reciprocal and one quotient: every result still matches the reference and the
/// independent expectation, with MUFU perturbed too; and the sharing really happens (one
/// `MUFU.RCP` per distinct divisor).
#[test]
fn shared_divisors() {
    for ty in ["u32", "s32"] {
        let src = shared_kernel(ty);
        let got = check_src(&format!("shared {ty}"), &src, 32, 4);
        let signed = ty.starts_with('s');
        let p = pairs(32, 0x9e37_79b9_7f4a_7c15 ^ 32);
        let word = |out: &[u8], k: usize| {
            u64::from(u32::from_le_bytes(
                out[k * 4..k * 4 + 4].try_into().unwrap(),
            ))
        };
        for (k, &(a, b)) in p.iter().enumerate() {
            let cases = [
                ("div", a, b, &got[0]),
                ("rem", a, b, &got[1]),
                ("div", a ^ 0x5a5a, b, &got[2]),
                ("rem", b, a, &got[3]),
            ];
            for (op, x, y, out) in cases {
                assert_eq!(
                    word(out, k),
                    expect(op, signed, 32, x, y),
                    "{op}.{ty} {x:#x}, {y:#x}"
                );
            }
        }
        let sass = compile(&src, &opts()).unwrap().sass;
        assert_eq!(sass.matches("MUFU.RCP").count(), 2, "{sass}");
    }
}
