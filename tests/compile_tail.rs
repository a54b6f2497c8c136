//! The last PTX forms of issue 19 point 2 that ptxas 11.8 takes for sm_5x: integer
//! `cvt.sat` between integer types, `fns`, `cvta.const`/`cvta.to.const` and `.alias`.
//! Each construct is checked as `compile_warpsync.rs` checks its own:
//!
//! * the kernel compiles and the hazard checker finds nothing in our `.text`;
//! * with the oracle installed, cuobjdump and nvdisasm print our cubin as our printer does;
//! * `ir::eval` (the PTX meaning) and the simulator running our SASS write the same bytes,
//!   over launches of 2 CTAs × 64 threads whose inputs are mostly edge values;
//! * and where the meaning is simple to state, a plain Rust model of the PTX ISA's words
//!   agrees with what the simulator wrote (so a shared mistake of eval and lowering shows).
//!
//! Every kernel has parameters `(in, out)`: thread `g` reads the 64-bit word `in[g]` (as
//! `%r2` low, `%r3` high, `%rd7` whole) and writes up to 16 words at `out[16g ..]`.

mod common;

use common::warp_kernel::compile_checked;

use common::Rng;
use leafold::driver::{compile, Emit, Options, Output};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::sim;

const IN: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;
const THREADS: u32 = 64;
const CTAS: u32 = 2;
const N: usize = (THREADS * CTAS) as usize;
/// Bytes each thread may write.
const STRIDE: usize = 64;

fn kernel(decls: &str, body: &str) -> String {
    format!(
        r#".version 7.8
.target sm_52
.address_size 64
{decls}
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    .reg .pred %p<8>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r9, %tid.x;
    mov.u32 %r10, %ctaid.x;
    mov.u32 %r11, %ntid.x;
    mad.lo.s32 %r1, %r10, %r11, %r9;
    mul.wide.u32 %rd4, %r1, 8;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.v2.u32 {{%r2, %r3}}, [%rd5];
    mov.b64 %rd7, {{%r2, %r3}};
    mul.wide.u32 %rd6, %r1, {STRIDE};
    add.s64 %rd3, %rd2, %rd6;
{body}
    ret;
}}
"#
    )
}

/// 64-bit edge values: the limits of every integer type, one either side, and negations.
fn edges() -> Vec<u64> {
    let mut v = Vec::new();
    for b in [8u32, 16, 32, 64] {
        let smax = (1u64 << (b - 1)) - 1;
        let umax = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
        for x in [smax, smax + 1, umax, umax.wrapping_add(1)] {
            for d in [x.wrapping_sub(1), x, x.wrapping_add(1)] {
                v.push(d);
                v.push(d.wrapping_neg());
            }
        }
    }
    v.extend([0, 1, 2, 3, 5]);
    v
}

/// Thread `g`'s input word for `seed`: an edge value, its low half sign- or zero-extended
/// (edge values of the 32-bit types), or random.
fn input(seed: u64) -> Vec<u64> {
    let e = edges();
    let mut rng = Rng(0x7a11_0000_1234_5678 ^ (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..N)
        .map(|g| {
            let r = rng.next();
            match r % 4 {
                0 | 1 => e[(g + seed as usize * 7) % e.len()],
                2 => e[(r >> 8) as usize % e.len()] as u32 as u64,
                _ => rng.next(),
            }
        })
        .collect()
}

fn launch(seed: u64) -> Launch {
    let bytes: Vec<u8> = input(seed).iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut launch = Launch::new([CTAS, 1, 1], [THREADS, 1, 1]);
    launch.params = IN
        .to_le_bytes()
        .into_iter()
        .chain(OUT.to_le_bytes())
        .collect();
    launch.global = vec![
        GlobalRegion { base: IN, bytes },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; STRIDE * N],
        },
    ];
    launch
}

/// `ir::eval` and the simulator on our cubin write the same `out` over `runs` launches;
/// returns each launch's `out` with its seed.
fn differential(test: &str, src: &str, out: &Output, runs: u64) -> Vec<(u64, Vec<u8>)> {
    let module = common::ir_module(format!("{test}.ptx"), src);
    let mut all = Vec::new();
    for seed in 0..runs {
        let l = launch(seed);
        let want = eval::run(&module, "k", &l).unwrap_or_else(|e| panic!("{test}: eval: {e}"));
        let got = sim::run_cubin(&out.cubin, "k", &l)
            .unwrap_or_else(|e| panic!("{test}: sim: {e}\n{}", out.sass));
        let (a, b) = (got.region(OUT).unwrap(), want.region(OUT).unwrap());
        if let Some(k) = (0..a.len() / 4).find(|k| a[4 * k..4 * k + 4] != b[4 * k..4 * k + 4]) {
            let w = |m: &[u8]| u32::from_le_bytes(m[4 * k..4 * k + 4].try_into().unwrap());
            panic!(
                "{test}: seed {seed}, thread {}, byte {}: sim {:#x}, eval {:#x}\n{}",
                4 * k / STRIDE,
                4 * k % STRIDE,
                w(a),
                w(b),
                out.sass
            );
        }
        all.push((seed, a.to_vec()));
    }
    all
}

/// The 64-bit word at byte `off` of thread `g`'s output.
fn out64(out: &[u8], g: usize, off: usize) -> u64 {
    let k = STRIDE * g + off;
    u64::from_le_bytes(out[k..k + 8].try_into().unwrap())
}

fn run(test: &str, decls: &str, body: &str, runs: u64) -> (Output, Vec<(u64, Vec<u8>)>) {
    let src = kernel(decls, body);
    let out = compile_checked(test, &src);
    let all = differential(test, &src, &out, runs);
    (out, all)
}

// ---------------------------------------------------------------- cvt.sat between integers

const INT_TYPES: [(&str, u32, bool); 8] = [
    ("u8", 8, false),
    ("u16", 16, false),
    ("u32", 32, false),
    ("u64", 64, false),
    ("s8", 8, true),
    ("s16", 16, true),
    ("s32", 32, true),
    ("s64", 64, true),
];

fn range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// ptxas 11.8 takes integer `cvt.sat` only where the source range is not inside the
/// destination's (probed over all 64 pairs).
fn sat_allowed(s: (u32, bool), d: (u32, bool)) -> bool {
    let (smin, smax) = range(s.0, s.1);
    let (dmin, dmax) = range(d.0, d.1);
    smin < dmin || smax > dmax
}

/// The PTX meaning: the source read by its type from the low bits, clamped to the
/// destination's range, and (for an 8/16-bit destination in a 32-bit register) extended by
/// the destination's signedness. Returns the register's bits (32 or 64).
fn cvt_sat_model(x: u64, s: (u32, bool), d: (u32, bool)) -> u64 {
    let low = if s.0 == 64 {
        x
    } else {
        x & ((1u64 << s.0) - 1)
    };
    let v: i128 = if s.1 {
        (low << (64 - s.0)) as i64 as i128 >> (64 - s.0)
    } else {
        low as i128
    };
    let (dmin, dmax) = range(d.0, d.1);
    let c = v.clamp(dmin, dmax);
    if d.0 == 64 {
        c as u64
    } else {
        (c as i64 as u64) & 0xffff_ffff
    }
}

/// ptxas 11.8 (`-arch=sm_52`) on `cvt.sat.D.S` for every pair: row D, column S, both in
/// the order of [`INT_TYPES`]; 1 = accepted, 0 = "Illegal modifier '.sat'".
const PTXAS_TAKES: [[u8; 8]; 8] = [
    [0, 1, 1, 1, 1, 1, 1, 1],
    [0, 0, 1, 1, 1, 1, 1, 1],
    [0, 0, 0, 1, 1, 1, 1, 1],
    [0, 0, 0, 0, 1, 1, 1, 1],
    [1, 1, 1, 1, 0, 1, 1, 1],
    [0, 1, 1, 1, 0, 0, 1, 1],
    [0, 0, 1, 1, 0, 0, 0, 1],
    [0, 0, 0, 1, 0, 0, 0, 0],
];

#[test]
fn sat_rule_is_ptxas_table() {
    for (d, &(_, db, ds)) in INT_TYPES.iter().enumerate() {
        for (s, &(_, sb, ss)) in INT_TYPES.iter().enumerate() {
            assert_eq!(
                sat_allowed((sb, ss), (db, ds)),
                PTXAS_TAKES[d][s] == 1,
                "{d} {s}"
            );
        }
    }
}

#[test]
fn cvt_sat_between_integer_types() {
    for (sname, sbits, ssigned) in INT_TYPES {
        let src_reg = if sbits == 64 { "%rd7" } else { "%r2" };
        let mut body = String::new();
        let mut dsts = Vec::new();
        for (k, (dname, dbits, dsigned)) in INT_TYPES.into_iter().enumerate() {
            if !sat_allowed((sbits, ssigned), (dbits, dsigned)) {
                continue;
            }
            let off = 8 * k;
            if dbits == 64 {
                body += &format!(
                    "    cvt.sat.{dname}.{sname} %rd8, {src_reg};\n    st.global.u64 [%rd3+{off}], %rd8;\n"
                );
            } else {
                body += &format!(
                    "    cvt.sat.{dname}.{sname} %r12, {src_reg};\n    st.global.u32 [%rd3+{off}], %r12;\n"
                );
            }
            dsts.push((k, dname, dbits, dsigned));
        }
        let test = format!("cvt_sat_from_{sname}");
        let (out, all) = run(&test, "", &body, 3);
        if sbits == 32 {
            // ptxas's shape: one I2I.<D>.<S>.SAT per destination (.U32 for .u64), no IMNMX
            // clamp.
            let mut want: Vec<String> = dsts
                .iter()
                .map(|d| {
                    let dn = if d.1 == "u64" { "u32" } else { d.1 };
                    format!("I2I.{}.{}.SAT", dn.to_uppercase(), sname.to_uppercase())
                })
                .collect();
            let mut got: Vec<String> = texts_of(&out.sass)
                .into_iter()
                .filter(|t| t.starts_with("I2I"))
                .map(|t| t.split(' ').next().unwrap_or("").to_string())
                .collect();
            // (`.u32` and `.u64` share one conversion of the same source.)
            want.sort();
            want.dedup();
            got.sort();
            assert_eq!(got, want, "{}", out.sass);
            assert!(!out.sass.contains("IMNMX"), "{}", out.sass);
        }
        for (seed, out) in &all {
            let inp = input(*seed);
            for (g, &x) in inp.iter().enumerate() {
                for &(k, dname, dbits, dsigned) in &dsts {
                    let want = cvt_sat_model(x, (sbits, ssigned), (dbits, dsigned));
                    let mut got = out64(out, g, 8 * k);
                    if dbits < 64 {
                        got &= 0xffff_ffff;
                    }
                    assert_eq!(
                        got, want,
                        "cvt.sat.{dname}.{sname} of {x:#x} (thread {g}, seed {seed})"
                    );
                }
            }
        }
    }
}

#[test]
fn cvt_sat_refused_where_ptxas_refuses_it() {
    let refused = INT_TYPES.iter().flat_map(|&(d, db, ds)| {
        INT_TYPES
            .iter()
            .filter(move |&&(_, sb, ss)| !sat_allowed((sb, ss), (db, ds)))
            .map(move |&(s, _, _)| (d, s))
    });
    let mut n = 0;
    for (d, s) in refused {
        n += 1;
        let rd = if d.ends_with("64") { "%rd8" } else { "%r12" };
        let rs = if s.ends_with("64") { "%rd7" } else { "%r2" };
        let src = kernel("", &format!("    cvt.sat.{d}.{s} {rd}, {rs};\n"));
        let opts = Options {
            file_name: "sat.ptx".to_string(),
            emit: Emit::Sass,
            ..Options::default()
        };
        let err = compile(&src, &opts).expect_err("ptxas refuses it");
        let text = leafold::error::render_all(&err.0);
        assert!(text.contains("cvt.sat"), "{text}");
        assert!(text.contains("sat.ptx:"), "{text}");
    }
    assert_eq!(n, 26, "ptxas 11.8 refuses 26 of the 64 pairs");
}

// ---------------------------------------------------------------- fns

/// `fns.b32` as the PTX ISA's pseudocode states it.
fn fns_model(mask: u32, base: u32, offset: i32) -> u32 {
    if offset == 0 {
        return if mask >> base & 1 == 1 {
            base
        } else {
            u32::MAX
        };
    }
    let mut pos = i64::from(base);
    let mut count = i64::from(offset).abs() - 1;
    let inc = if offset > 0 { 1 } else { -1 };
    while (0..32).contains(&pos) {
        if mask >> pos & 1 == 1 {
            if count == 0 {
                return pos as u32;
            }
            count -= 1;
        }
        pos += inc;
    }
    u32::MAX
}

#[test]
fn fns_model_matches_the_ptx_examples() {
    assert_eq!(fns_model(0xaaaa_aaaa, 3, 1), 3);
    assert_eq!(fns_model(0xaaaa_aaaa, 3, -1), 3);
    assert_eq!(fns_model(0xaaaa_aaaa, 2, 1), 3);
    assert_eq!(fns_model(0xaaaa_aaaa, 2, -1), 1);
}

#[test]
fn fns_finds_the_nth_set_bit() {
    // base: in[g].hi & 31; offsets: fixed edges and one from the high bits (-16..15).
    let offsets: [&str; 13] = [
        "0",
        "1",
        "-1",
        "2",
        "-2",
        "5",
        "-7",
        "16",
        "-31",
        "32",
        "-33",
        "0x7fffffff",
        "0x80000000",
    ];
    let mut body = String::from(
        "    and.b32 %r4, %r3, 31;\n    shr.s32 %r5, %r3, 27;\n    fns.b32 %r6, %r2, %r4, %r5;\n    st.global.u32 [%rd3], %r6;\n",
    );
    for (k, o) in offsets.iter().enumerate() {
        body += &format!(
            "    fns.b32 %r{r}, %r2, %r4, {o};\n    st.global.u32 [%rd3+{off}], %r{r};\n",
            r = 12 + k,
            off = 4 * (k + 1)
        );
    }
    // An immediate mask and base too (the PTX examples' operands).
    body += "    fns.b32 %r30, 0xaaaaaaaa, 2, %r5;\n    st.global.u32 [%rd3+56], %r30;\n";
    let (out, all) = run("fns", "", &body, 4);
    assert!(out.sass.contains("POPC"), "{}", out.sass);
    for (seed, o) in &all {
        for (g, &x) in input(*seed).iter().enumerate() {
            let (mask, hi) = (x as u32, (x >> 32) as u32);
            let base = hi & 31;
            let off0 = (hi as i32) >> 27;
            let word = |k: usize| {
                let b = STRIDE * g + 4 * k;
                u32::from_le_bytes(o[b..b + 4].try_into().unwrap())
            };
            assert_eq!(
                word(0),
                fns_model(mask, base, off0),
                "fns {mask:#x} {base} {off0}"
            );
            for (k, s) in offsets.iter().enumerate() {
                let off = if let Some(h) = s.strip_prefix("0x") {
                    u32::from_str_radix(h, 16).unwrap() as i32
                } else {
                    s.parse().unwrap()
                };
                let want = fns_model(mask, base, off);
                assert_eq!(word(k + 1), want, "fns {mask:#x} {base} {off}");
            }
            assert_eq!(word(14), fns_model(0xaaaa_aaaa, 2, off0));
        }
    }
}

// ---------------------------------------------------------------- cvta.const

const TAB: [u32; 8] = [11, 22, 33, 44, 0xdead_beef, 0x8000_0000, 0, 0xffff_ffff];

#[test]
fn cvta_const_reads_a_const_array_through_a_generic_pointer() {
    let decls =
        ".const .align 4 .b32 tab[8] = {11, 22, 33, 44, 0xdeadbeef, 0x80000000, 0, 0xffffffff};";
    let body = r#"
    and.b32 %r4, %r2, 7;
    mov.u64 %rd8, tab;
    cvta.const.u64 %rd9, %rd8;
    mul.wide.u32 %rd10, %r4, 4;
    add.s64 %rd11, %rd9, %rd10;
    ld.u32 %r5, [%rd11];
    st.global.u32 [%rd3], %r5;
    cvta.to.const.u64 %rd12, %rd11;
    ld.const.u32 %r6, [%rd12];
    st.global.u32 [%rd3+4], %r6;
    sub.s64 %rd13, %rd12, %rd8;
    st.global.u64 [%rd3+8], %rd13;
    cvt.u32.u64 %r7, %rd8;
    cvta.const.u32 %r8, %r7;
    st.global.u32 [%rd3+16], %r8;
    cvta.to.const.u32 %r13, %r8;
    sub.u32 %r14, %r13, %r7;
    st.global.u32 [%rd3+20], %r14;
"#;
    let (out, all) = run("cvta_const", decls, body, 2);
    let t = common::parse_lines(&out.sass);
    assert!(
        t.iter().any(|(_, s)| s.starts_with("IADD R")
            && s.contains(".CC")
            && s.ends_with("c[0x0][0xd0]")),
        "{}",
        out.sass
    );
    assert!(
        t.iter()
            .any(|(_, s)| s.starts_with("IADD.X") && s.ends_with("-c[0x0][0xd4]")),
        "{}",
        out.sass
    );
    for (seed, o) in &all {
        for (g, &x) in input(*seed).iter().enumerate() {
            let k = (x & 7) as usize;
            assert_eq!(out64(o, g, 0) as u32, TAB[k], "thread {g}");
            assert_eq!((out64(o, g, 0) >> 32) as u32, TAB[k], "thread {g}");
            assert_eq!(out64(o, g, 8), 4 * k as u64, "thread {g}");
            assert_eq!(
                out64(o, g, 16) >> 32,
                0,
                "cvta.to.const.u32 undoes cvta.const.u32"
            );
        }
    }
}

// ---------------------------------------------------------------- .alias

const ALIAS_DECLS: &str = r#"
.func (.param .b32 r) triple_plus(.param .b32 a, .param .b32 b)
{
    .reg .b32 %t<4>;
    ld.param.b32 %t1, [a];
    ld.param.b32 %t2, [b];
    mad.lo.u32 %t3, %t1, 3, %t2;
    st.param.b32 [r], %t3;
    ret;
}
.func (.param .b32 r) tp(.param .b32 a, .param .b32 b);
.alias tp, triple_plus;
"#;

fn alias_body(callee: &str) -> String {
    format!(
        r#"
    {{
    .param .b32 pa;
    .param .b32 pb;
    .param .b32 pr;
    st.param.b32 [pa], %r2;
    st.param.b32 [pb], %r3;
    call.uni (pr), {callee}, (pa, pb);
    ld.param.b32 %r4, [pr];
    }}
    st.global.u32 [%rd3], %r4;
"#
    )
}

#[test]
fn alias_calls_run_the_aliasee() {
    let (out, all) = run("alias", ALIAS_DECLS, &alias_body("tp"), 2);
    for (seed, o) in &all {
        for (g, &x) in input(*seed).iter().enumerate() {
            let want = (x as u32).wrapping_mul(3).wrapping_add((x >> 32) as u32);
            assert_eq!(out64(o, g, 0) as u32, want, "thread {g}");
        }
    }
    // The same code as calling the aliasee by its own name.
    let direct = compile_checked(
        "alias_direct",
        &kernel(ALIAS_DECLS, &alias_body("triple_plus")),
    );
    assert_eq!(texts_of(&out.sass), texts_of(&direct.sass));
}

fn texts_of(sass: &str) -> Vec<String> {
    common::parse_lines(sass)
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

#[test]
fn bad_aliases_are_errors_at_the_alias_line() {
    let cases = [
        (
            ALIAS_DECLS.replace(".alias tp, triple_plus;", ".alias tp, nothing;"),
            "nothing",
        ),
        (
            ALIAS_DECLS.replace(
                ".func (.param .b32 r) tp(.param .b32 a, .param .b32 b);",
                "",
            ),
            "without a body",
        ),
        (
            ALIAS_DECLS.replace(
                ".func (.param .b32 r) tp(.param .b32 a, .param .b32 b);",
                ".func (.param .b32 r) tp(.param .b64 a, .param .b32 b);",
            ),
            "same prototype",
        ),
    ];
    for (decls, what) in cases {
        let src = kernel(&decls, &alias_body("tp"));
        let opts = Options {
            file_name: "alias.ptx".to_string(),
            emit: Emit::Sass,
            ..Options::default()
        };
        let err = compile(&src, &opts).expect_err("a bad .alias is refused");
        let text = leafold::error::render_all(&err.0);
        assert!(text.contains(what) && text.contains("alias.ptx:"), "{text}");
        let line = src.lines().position(|l| l.starts_with(".alias")).unwrap() + 1;
        assert!(text.contains(&format!("alias.ptx:{line}:")), "{text}");
    }
    let old = kernel(ALIAS_DECLS, &alias_body("tp")).replace(".version 7.8", ".version 6.2");
    let err = compile(&old, &Options::default()).expect_err("PTX 6.2 has no .alias");
    assert!(leafold::error::render_all(&err.0).contains("6.3"));
}

#[test]
fn alias_prints_and_reparses() {
    let src = kernel(ALIAS_DECLS, &alias_body("tp"));
    let parse = |text: &str| {
        let file = leafold::error::SourceFile::from_bytes("a.ptx".to_string(), text.as_bytes());
        let (m, diags) = leafold::ptx::parse(&file);
        assert!(diags.is_empty(), "{}", leafold::error::render_all(&diags));
        m.expect("parses")
    };
    let m = parse(&src);
    let printed = m.to_string();
    assert!(printed.contains(".alias tp, triple_plus;"), "{printed}");
    assert_eq!(parse(&printed).without_spans(), m.without_spans());
}
