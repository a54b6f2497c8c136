//! Half precision (`.f16`, `.f16x2`) compiled end to end for sm_53 (the H* instructions) and
//! sm_50 (through f32, f64 for fma), one kernel per construct, each checked four ways:
//!
//! * semantics: `ir::eval` (PTX's meaning, exact IEEE binary16) and the simulator running our
//!   cubin write the same bytes over random launches whose f16 operands mix random bits with
//!   edge values (±0, subnormals, the smallest normal, the largest finite, ±inf, NaNs, 1 and
//!   values one ulp apart, which make rounding ties);
//! * timing: the hazard checker finds nothing in our `.text`;
//! * encoding (with the oracle): nvdisasm prints every word of our code as our printer does
//!   (`-b SM53` for sm_53 code: the H* instructions exist only there), and cuobjdump lists the
//!   cubin exactly as our listing;
//! * shape: sm_53 code uses the H* instruction the construct maps to, sm_50 code none.
//!
//! Every kernel follows one convention: thread `t` reads three words `a b c` at `in + 16 t`
//! (`%r1 %r2 %r3`; their low halves are also loaded as `%h1 %h2 %h3`) and writes `%r4`, `%r5`
//! and the 16-bit `%h4` at `out + 16 t`.

mod common;

use common::Rng;
use leafold::cubin;
use leafold::driver::{compile, Arch, Emit, Options, Output};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::{check_hazards, decode_text};

const IN: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;
const THREADS: u32 = 64;

/// The kernel with `body` between the loads and the stores.
fn kernel(body: &str) -> String {
    format!(
        r#".version 7.0
.target sm_53
.address_size 64

.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b16 %h<16>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .pred %p<8>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<4>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    mov.u32 %r15, %tid.x;
    mul.wide.u32 %rd3, %r15, 16;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.b32 %r1, [%rd4];
    ld.global.b32 %r2, [%rd4+4];
    ld.global.b32 %r3, [%rd4+8];
    ld.global.b16 %h1, [%rd4];
    ld.global.b16 %h2, [%rd4+4];
    ld.global.b16 %h3, [%rd4+8];
    mov.b32 %r4, 0;
    mov.b32 %r5, 0;
    mov.b16 %h4, 0;
{body}
    st.global.b32 [%rd5], %r4;
    st.global.b32 [%rd5+4], %r5;
    st.global.b16 [%rd5+8], %h4;
    ret;
}}
"#
    )
}

impl Rng {
    /// An f16: random bits, or (one time in two) an edge value.
    fn half(&mut self) -> u16 {
        const EDGE: [u16; 24] = [
            0x0000, 0x8000, // ±0
            0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200, // subnormals
            0x0400, 0x8400, // smallest normal
            0x7bff, 0xfbff, 0x7bfe, // largest finite
            0x7c00, 0xfc00, // ±inf
            0x7e00, 0x7c01, 0xfe00, // NaNs (quiet, signalling, negative)
            0x3c00, 0xbc00, 0x3c01, 0x3bff, 0x1400, // 1, -1, 1 ± ulp, 2^-10
            0x3800, 0x4000, // 0.5, 2
        ];
        let r = self.next();
        if r % 2 == 0 {
            EDGE[(r >> 8) as usize % EDGE.len()]
        } else {
            (r >> 32) as u16
        }
    }
}

fn launch(seed: u64) -> Launch {
    let mut rng = Rng(0x5851_f42d_4c95_7f2d ^ (seed + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let input: Vec<u8> = (0..THREADS * 8)
        .flat_map(|_| rng.half().to_le_bytes())
        .collect();
    let mut launch = Launch::new([1, 1, 1], [THREADS, 1, 1]);
    launch.params = IN
        .to_le_bytes()
        .into_iter()
        .chain(OUT.to_le_bytes())
        .collect();
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: input,
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0xa5; 16 * THREADS as usize],
        },
    ];
    launch
}

fn arch_name(arch: Arch) -> &'static str {
    match arch {
        Arch::Sm53 => "sm_53",
        Arch::Sm52 => "sm_52",
        Arch::Sm50 => "sm_50",
    }
}

/// Compile for `arch`; the code is hazard-free and, with the oracle, printed by nvdisasm and
/// listed by cuobjdump exactly as by our printer.
fn compile_checked(what: &str, src: &str, arch: Arch) -> Output {
    let opts = Options {
        file_name: format!("{what}.ptx"),
        emit: Emit::Sass,
        arch,
        ..Options::default()
    };
    let out = compile(src, &opts).unwrap_or_else(|d| {
        panic!(
            "{what} ({}): {}",
            arch_name(arch),
            leafold::error::render_all(&d.0)
        )
    });
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    let code = &c.kernels[0].code;
    let (insts, ctrl, targets) = decode_text(code).expect("decodes");
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "{what}: hazards: {errs:?}\n{}", out.sass);
    if let Some(oracle) = Oracle::for_test("compile_half") {
        let nv_arch = if arch == Arch::Sm53 { "SM53" } else { "SM50" };
        let raw = oracle
            .nvdisasm_raw_arch(code, nv_arch)
            .unwrap_or_else(|e| panic!("{what}: nvdisasm rejects our words: {e}\n{}", out.sass));
        assert_eq!(
            common::parse_lines(&raw),
            common::parse_lines(&out.sass),
            "{what}: nvdisasm (left) vs ours (right)"
        );
        common::assert_cuobjdump_lists(&oracle, what, &out.cubin, &out.sass);
    }
    out
}

/// `body` compiled for `arch` and run against `ir::eval` on `launches` random launches;
/// returns the SASS listing.
fn differential(what: &str, body: &str, arch: Arch, launches: u64) -> String {
    let src = kernel(body);
    let out = compile_checked(what, &src, arch);
    let module = common::ir_module(format!("{what}.ptx"), src.as_str());
    for seed in 0..launches {
        let launch = launch(seed);
        let want = eval::run(&module, "k", &launch).expect("ir::eval runs");
        let got = sim::run_cubin(&out.cubin, "k", &launch)
            .unwrap_or_else(|e| panic!("{what}: sim: {e}\n{}", out.sass));
        let (a, b) = (got.region(OUT).unwrap(), want.region(OUT).unwrap());
        if let Some(k) = (0..a.len() / 2).find(|k| a[2 * k..2 * k + 2] != b[2 * k..2 * k + 2]) {
            let t = k / 8;
            let inp = &launch.global[0].bytes[16 * t..16 * t + 16];
            let h = |m: &[u8]| u16::from_le_bytes([m[2 * k], m[2 * k + 1]]);
            panic!(
                "{what} ({}): seed {seed}, thread {t}, half {}: sim {:#06x}, eval {:#06x}; input {inp:02x?}\n{}",
                arch_name(arch),
                k % 8,
                h(a),
                h(b),
                out.sass
            );
        }
    }
    out.sass
}

fn count(sass: &str, mnemonic: &str) -> usize {
    common::parse_lines(sass)
        .iter()
        .filter(|(_, t)| {
            t.split_whitespace()
                .find(|w| !w.starts_with('@') && *w != "{")
                .is_some_and(|m| m == mnemonic || m.starts_with(&format!("{mnemonic}.")))
        })
        .count()
}

const H_OPS: [&str; 5] = ["HADD2", "HMUL2", "HFMA2", "HSETP2", "HSET2"];

/// Run `body` on both architectures: sm_53 must use `native` (an H* mnemonic) and sm_50 no
/// H* instruction at all.
fn both(what: &str, body: &str, native: &str, launches: u64) -> String {
    let sass = differential(what, body, Arch::Sm53, launches);
    assert!(
        count(&sass, native) > 0,
        "{what}: no {native} on sm_53\n{sass}"
    );
    let sass50 = differential(what, body, Arch::Sm50, launches);
    for h in H_OPS {
        assert_eq!(count(&sass50, h), 0, "{what}: {h} on sm_50\n{sass50}");
    }
    sass
}

/// `.f16x2` arithmetic on sm_53 is one H* instruction per PTX instruction, as ptxas writes
/// it: no lane is split off and packed back (no shifts, masks or ORs).
fn assert_whole_register(what: &str, sass: &str, mnemonic: &str, n: usize) {
    assert_eq!(count(sass, mnemonic), n, "{what}\n{sass}");
    for m in ["SHL", "SHR", "LOP", "LOP32I", "BFI", "BFE", "PRMT", "XMAD"] {
        assert_eq!(count(sass, m), 0, "{what}: {m}\n{sass}");
    }
}

/// Run `body` on sm_53 only (sm_50 refuses it with a message naming the PTX line).
fn sm53_only(what: &str, body: &str, native: &str, launches: u64) {
    let sass = differential(what, body, Arch::Sm53, launches);
    assert!(
        count(&sass, native) > 0,
        "{what}: no {native} on sm_53\n{sass}"
    );
    let opts = Options {
        file_name: format!("{what}.ptx"),
        arch: Arch::Sm50,
        ..Options::default()
    };
    let err = match compile(&kernel(body), &opts) {
        Ok(_) => panic!("{what}: compiles for sm_50"),
        Err(d) => leafold::error::render_all(&d.0),
    };
    assert!(
        err.contains("needs sm_53") && err.contains("PTX line"),
        "{what}: {err}"
    );
}

// ------------------------------------------------------------------ scalar .f16

#[test]
fn add_f16() {
    both("add_f16", "    add.f16 %h4, %h1, %h2;", "HADD2", 8);
}

#[test]
fn add_rn_sat_f16() {
    both(
        "add_sat_f16",
        "    add.rn.sat.f16 %h4, %h1, %h2;",
        "HADD2",
        8,
    );
}

#[test]
fn sub_f16() {
    both("sub_f16", "    sub.f16 %h4, %h1, %h2;", "HADD2", 8);
}

#[test]
fn mul_f16() {
    both("mul_f16", "    mul.f16 %h4, %h1, %h2;", "HMUL2", 8);
}

#[test]
fn mul_sat_f16() {
    both("mul_sat_f16", "    mul.sat.f16 %h4, %h1, %h2;", "HMUL2", 8);
}

#[test]
fn fma_f16() {
    // More launches: on sm_50 this is the f64 route, whose single f64 rounding must never
    // move the f16 result.
    both("fma_f16", "    fma.rn.f16 %h4, %h1, %h2, %h3;", "HFMA2", 40);
}

#[test]
fn fma_sat_f16() {
    both(
        "fma_sat_f16",
        "    fma.rn.sat.f16 %h4, %h1, %h2, %h3;",
        "HFMA2",
        8,
    );
}

#[test]
fn neg_abs_f16() {
    both(
        "neg_abs_f16",
        "    neg.f16 %h4, %h1;\n    abs.f16 %h5, %h2;\n    mov.b32 %r4, {%h4, %h5};",
        "HADD2",
        8,
    );
}

#[test]
fn ftz_f16() {
    sm53_only(
        "ftz_f16",
        "    add.ftz.f16 %h4, %h1, %h2;\n    mul.ftz.f16 %h5, %h1, %h2;\n    fma.rn.ftz.f16 %h6, %h1, %h2, %h3;\n    neg.ftz.f16 %h7, %h3;\n    mov.b32 %r4, {%h5, %h6};\n    mov.b32 %r5, {%h7, %h7};",
        "HFMA2",
        8,
    );
}

/// Every comparison, one bit of `%r4` each (`%r5` the same with `.ftz` on sm_53).
fn setp_body(ty: &str, ftz: bool) -> String {
    let ccs = [
        "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
    ];
    let mut s = String::new();
    for (k, cc) in ccs.iter().enumerate() {
        let (a, b) = if ty == "f16" {
            ("%h1", "%h2")
        } else {
            ("%r1", "%r2")
        };
        let f = if ftz { ".ftz" } else { "" };
        if ty == "f16" {
            s += &format!("    setp.{cc}{f}.f16 %p1, {a}, {b};\n");
            s += &format!("    selp.b32 %r6, {}, 0, %p1;\n", 1 << k);
        } else {
            s += &format!("    setp.{cc}{f}.f16x2 %p1|%p2, {a}, {b};\n");
            s += &format!("    selp.b32 %r6, {}, 0, %p1;\n", 1 << k);
            s += &format!("    selp.b32 %r7, {}, 0, %p2;\n", 1 << (k + 16));
            s += "    or.b32 %r6, %r6, %r7;\n";
        }
        let d = if ftz { "%r5" } else { "%r4" };
        s += &format!("    or.b32 {d}, {d}, %r6;\n");
    }
    s
}

#[test]
fn setp_f16() {
    both("setp_f16", &setp_body("f16", false), "HSETP2", 8);
}

#[test]
fn setp_ftz_f16() {
    let sass = differential("setp_ftz_f16", &setp_body("f16", true), Arch::Sm53, 8);
    assert!(count(&sass, "HSETP2") >= 12, "{sass}");
}

#[test]
fn set_f16() {
    both(
        "set_f16",
        "    set.gt.u32.f16 %r4, %h1, %h2;\n    set.leu.f16.f16 %h4, %h1, %h2;\n    set.nan.s32.f16 %r5, %h1, %h3;",
        "HSETP2",
        8,
    );
}

// ------------------------------------------------------------------ .f16x2

#[test]
fn add_f16x2() {
    let sass = both(
        "add_f16x2",
        "    add.f16x2 %r4, %r1, %r2;\n    add.rn.sat.f16x2 %r5, %r1, %r3;",
        "HADD2",
        8,
    );
    assert_whole_register("add_f16x2", &sass, "HADD2", 2);
}

#[test]
fn sub_f16x2() {
    let sass = both("sub_f16x2", "    sub.f16x2 %r4, %r1, %r2;", "HADD2", 8);
    assert_whole_register("sub_f16x2", &sass, "HADD2", 1);
}

#[test]
fn mul_f16x2() {
    let sass = both(
        "mul_f16x2",
        "    mul.f16x2 %r4, %r1, %r2;\n    mul.sat.f16x2 %r5, %r2, %r3;",
        "HMUL2",
        8,
    );
    assert_whole_register("mul_f16x2", &sass, "HMUL2", 2);
}

#[test]
fn fma_f16x2() {
    let sass = both(
        "fma_f16x2",
        "    fma.rn.f16x2 %r4, %r1, %r2, %r3;\n    fma.rn.sat.f16x2 %r5, %r3, %r1, %r2;",
        "HFMA2",
        24,
    );
    assert_whole_register("fma_f16x2", &sass, "HFMA2", 2);
}

#[test]
fn neg_abs_f16x2() {
    let sass = both(
        "neg_abs_f16x2",
        "    neg.f16x2 %r4, %r1;\n    abs.f16x2 %r5, %r2;",
        "HADD2",
        8,
    );
    assert_whole_register("neg_abs_f16x2", &sass, "HADD2", 2);
}

#[test]
fn ftz_f16x2() {
    sm53_only(
        "ftz_f16x2",
        "    fma.rn.ftz.f16x2 %r4, %r1, %r2, %r3;\n    sub.ftz.sat.f16x2 %r5, %r1, %r2;",
        "HFMA2",
        8,
    );
}

#[test]
fn setp_f16x2() {
    let sass = both("setp_f16x2", &setp_body("f16x2", false), "HSETP2", 8);
    // One HSETP2 writes both predicates (p: the H0 lanes, q: the H1 lanes), as ptxas.
    assert_eq!(count(&sass, "HSETP2"), 14, "{sass}");
}

#[test]
fn setp_bop_f16x2() {
    both(
        "setp_bop_f16x2",
        "    setp.ne.b32 %p3, %r3, 0;\n    setp.lt.and.f16x2 %p1|%p2, %r1, %r2, %p3;\n    selp.b32 %r4, 1, 0, %p1;\n    selp.b32 %r5, 1, 0, %p2;\n    setp.geu.xor.f16x2 %p4|%p5, %r2, %r1, %p3;\n    selp.b16 %h4, 1, 2, %p4;\n    @%p5 add.u16 %h4, %h4, 4;",
        "HSETP2",
        8,
    );
}

#[test]
fn set_f16x2() {
    let sass = both(
        "set_f16x2",
        "    set.gt.f16x2.f16x2 %r4, %r1, %r2;\n    set.ltu.u32.f16x2 %r5, %r1, %r3;",
        "HSET2",
        8,
    );
    assert_whole_register("set_f16x2", &sass, "HSET2", 2);
}

// ------------------------------------------------------------------ moves and conversions

#[test]
fn pack_unpack() {
    both(
        "pack_unpack",
        "    mov.b32 {%h5, %h6}, %r1;\n    mov.b32 {%h7, %h8}, %r2;\n    add.f16 %h9, %h6, %h7;\n    mul.f16 %h10, %h5, %h8;\n    mov.b32 %r4, {%h9, %h10};\n    mov.b32 %r5, {%h8, %h5};",
        "HADD2",
        8,
    );
}

#[test]
fn cvt_f16() {
    both(
        "cvt_f16",
        "    cvt.f32.f16 %f1, %h1;\n    cvt.rn.f16.f32 %h5, %f1;\n    add.f16 %h4, %h5, %h2;\n    cvt.f64.f16 %fd1, %h2;\n    cvt.rz.f16.f64 %h6, %fd1;\n    cvt.rni.s32.f16 %r4, %h3;\n    cvt.rn.f16.s32 %h7, %r3;\n    mov.b32 %r5, {%h6, %h7};",
        "HADD2",
        8,
    );
}

/// A kernel as nvcc writes `__half2` code: f32 inputs converted with `cvt.rn.f16.f32`, packed
/// with `mov.b32 {..}`, an `fma.rn.f16x2` / `mul.f16x2` chain, unpacked and widened back.
#[test]
fn half2_mix_as_nvcc_writes_it() {
    both(
        "half2_mix",
        r#"    mov.b32 %f1, %r1;
    mov.b32 %f2, %r2;
    cvt.rn.f16.f32 %h5, %f1;
    cvt.rn.f16.f32 %h6, %f2;
    mov.b32 %r6, {%h5, %h6};
    mov.b32 %r7, {%h6, %h5};
    fma.rn.f16x2 %r8, %r6, %r7, %r3;
    mul.f16x2 %r9, %r8, %r6;
    sub.f16x2 %r10, %r9, %r7;
    mov.b32 {%h7, %h8}, %r10;
    cvt.f32.f16 %f3, %h7;
    cvt.f32.f16 %f4, %h8;
    add.f32 %f3, %f3, %f4;
    mov.b32 %r4, %f3;
    setp.gt.f16x2 %p1|%p2, %r10, %r3;
    selp.b32 %r5, %r8, %r9, %p2;
    @%p1 neg.f16x2 %r5, %r5;
    add.f16 %h4, %h7, %h8;"#,
        "HFMA2",
        16,
    );
}

#[test]
fn min_f16_is_refused_with_its_line() {
    let opts = Options {
        file_name: "min.ptx".to_string(),
        arch: Arch::Sm53,
        ..Options::default()
    };
    let err = match compile(&kernel("    min.f16 %h4, %h1, %h2;"), &opts) {
        Ok(_) => panic!("min.f16 compiles"),
        Err(d) => leafold::error::render_all(&d.0),
    };
    assert!(err.contains("min.ptx:") && err.contains("sm_80"), "{err}");
}

/// The simulator's model of the H* instructions, checked on ptxas's own sm_53 code: ptxas
/// 11.8's cubin for each kernel, run in the simulator, writes what `ir::eval` computes. This
/// pins the meaning of the fields as ptxas uses them (which HSETP2 predicate gets which
/// lane, HSET2's lanes, the half selects), independently of our selection.
#[test]
fn ptxas_sm53_code_agrees_with_eval_in_our_simulator() {
    let Some(oracle) = Oracle::for_test("compile_half") else {
        return;
    };
    let bodies = [
        "    add.f16x2 %r4, %r1, %r2;\n    sub.ftz.sat.f16x2 %r5, %r1, %r3;\n    add.f16 %h4, %h1, %h3;",
        "    mul.f16x2 %r4, %r1, %r2;\n    mul.ftz.f16 %h4, %h2, %h3;\n    mul.sat.f16x2 %r5, %r3, %r2;",
        "    fma.rn.f16x2 %r4, %r1, %r2, %r3;\n    fma.rn.sat.f16 %h4, %h1, %h2, %h3;\n    fma.rn.ftz.f16x2 %r5, %r3, %r1, %r2;",
        "    neg.f16x2 %r4, %r1;\n    abs.f16x2 %r5, %r2;",
        &setp_body("f16x2", false),
        &setp_body("f16", true),
        "    set.gt.f16x2.f16x2 %r4, %r1, %r2;\n    set.ltu.u32.f16x2 %r5, %r1, %r3;\n    set.nan.f16.f16 %h4, %h2, %h3;",
        "    setp.ne.b32 %p3, %r3, 0;\n    setp.lt.and.f16x2 %p1|%p2, %r1, %r2, %p3;\n    selp.b32 %r4, 1, 0, %p1;\n    selp.b32 %r5, 1, 0, %p2;",
    ];
    for (n, body) in bodies.iter().enumerate() {
        let src = kernel(body);
        let theirs = oracle
            .ptxas(&src, "sm_53", &[])
            .unwrap_or_else(|e| panic!("ptxas rejects kernel {n}: {e}\n{src}"));
        let module = common::ir_module(format!("p{n}.ptx"), src.as_str());
        for seed in 0..6 {
            let launch = launch(seed);
            let want = eval::run(&module, "k", &launch).expect("ir::eval runs");
            let got = sim::run_cubin(&theirs, "k", &launch)
                .unwrap_or_else(|e| panic!("kernel {n}: sim on ptxas's code: {e}"));
            let (a, b) = (got.region(OUT).unwrap(), want.region(OUT).unwrap());
            if let Some(k) = (0..a.len() / 2).find(|k| a[2 * k..2 * k + 2] != b[2 * k..2 * k + 2]) {
                let t = k / 8;
                let inp = &launch.global[0].bytes[16 * t..16 * t + 16];
                let listing = oracle.cuobjdump(&theirs, "-sass").unwrap_or_default();
                panic!(
                    "kernel {n}, seed {seed}, thread {t}, half {}: ptxas's code in sim {:02x?}, eval {:02x?}; input {inp:02x?}\n{body}\n{listing}",
                    k % 8,
                    &a[2 * k..2 * k + 2],
                    &b[2 * k..2 * k + 2],
                );
            }
        }
    }
}

/// nvcc's `__half2` idioms: a scalar broadcast with `mov.b32 %r, {%h, %h}` (read in place as
/// `.H0_H0`, no pack) and an f16x2 constant (`0x3c003c00`, one `MOV32I`): on sm_53 each
/// PTX instruction is one H* instruction, as ptxas writes it.
#[test]
fn broadcast_and_constant_f16x2() {
    let body = "    mov.b32 %f1, %r3;\n    cvt.rn.f16.f32 %h5, %f1;\n    mov.b32 %r6, {%h5, %h5};\n    fma.rn.f16x2 %r7, %r1, %r6, %r2;\n    mov.b32 %r8, 0x3C00BC00;\n    mul.f16x2 %r4, %r7, %r8;\n    sub.f16x2 %r5, %r8, %r7;";
    let sass = both("broadcast_const", body, "HFMA2", 8);
    assert_eq!(count(&sass, "HFMA2"), 1, "{sass}");
    assert_whole_register("broadcast_const", &sass, "HMUL2", 1);
}
