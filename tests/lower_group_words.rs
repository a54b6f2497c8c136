//! Floating-point operations on one word of a register group (issue 19, point 5): a
//! component of a vector load (`rsqrt.approx` of the second float of an `ld.v2.f32`), an f64
//! in the high half of an `LDG.128`, a word of a `.v4.u32` load moved to an f32. Selection
//! used to refuse these ("cannot lower rsqrt.approx of a word of a register group") in every
//! multi-instruction float sequence: the `MUFU` functions and their scaling steps, the IEEE
//! f32/f64 division and square root (the f32 `div.rn` fast path too, whose operands are
//! pinned to the slow path's registers). The sequences now read the word in place
//! (`Seq::read_word`); the pinned operands of the fast path are copied out of the group.
//!
//! Each case: compiles, is hazard-free, `ir::eval` equals the simulator on random launches
//! (random input bits: NaNs, infinities and subnormals included), and with the oracle nvdisasm
//! and cuobjdump print our listing.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

/// One kernel per case: every thread (by global index) loads 32 bytes of `in` (`ld.global.v4.f32
/// {%f1..%f4}` at +0, `ld.global.v2.f64 {%fd1, %fd2}` at +16), runs `op` (which writes `%f9`,
/// `%fd9` or `%r9`, as `store` says) and stores the result at its own 32 bytes of `out`.
fn kernel(op: &str, store: &str) -> String {
    format!(
        r#".version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{{
	.reg .f32 %f<10>; .reg .f64 %fd<10>; .reg .b32 %r<10>; .reg .b64 %rd<10>; .reg .pred %p<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [in];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mad.lo.s32 %r1, %r2, %r3, %r1;
	mul.wide.u32 %rd3, %r1, 32;
	add.s64 %rd4, %rd2, %rd3;
	add.s64 %rd5, %rd1, %rd3;
	ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd4];
	ld.global.v2.f64 {{%fd1, %fd2}}, [%rd4+16];
	{op}
	{store}
	ret;
}}
"#
    )
}

const F32: &str = "st.global.f32 [%rd5], %f9;";
const F64: &str = "st.global.f64 [%rd5], %fd9;";

/// The cases: (operation, store). Operands are words 1..3 of the f32 group and the f64 in
/// words 2..3 of the other.
const CASES: &[(&str, &str)] = &[
    ("rsqrt.approx.f32 %f9, %f2;", F32),
    ("rsqrt.approx.ftz.f32 %f9, %f2;", F32),
    ("rcp.approx.f32 %f9, %f3;", F32),
    ("rcp.approx.ftz.f32 %f9, %f4;", F32),
    ("sqrt.approx.f32 %f9, %f2;", F32),
    ("sqrt.approx.ftz.f32 %f9, %f3;", F32),
    ("sqrt.rn.f32 %f9, %f2;", F32),
    ("sqrt.rz.f32 %f9, %f3;", F32),
    ("sqrt.rp.ftz.f32 %f9, %f4;", F32),
    ("sin.approx.f32 %f9, %f2;", F32),
    ("cos.approx.ftz.f32 %f9, %f3;", F32),
    ("lg2.approx.f32 %f9, %f4;", F32),
    ("ex2.approx.f32 %f9, %f2;", F32),
    ("ex2.approx.ftz.f32 %f9, %f3;", F32),
    ("rcp.rn.f32 %f9, %f2;", F32),
    ("rcp.rz.f32 %f9, %f3;", F32),
    ("div.rn.f32 %f9, %f1, %f2;", F32),
    ("div.rn.f32 %f9, %f3, %f1;", F32),
    ("div.rn.f32 %f9, %f2, %f3;", F32),
    ("div.rn.f32 %f9, %f2, %f2;", F32),
    ("div.rz.f32 %f9, %f2, %f4;", F32),
    ("div.rn.ftz.f32 %f9, %f4, %f3;", F32),
    ("div.approx.f32 %f9, %f2, %f3;", F32),
    ("div.approx.ftz.f32 %f9, %f4, %f2;", F32),
    ("div.full.f32 %f9, %f3, %f2;", F32),
    ("div.full.ftz.f32 %f9, %f2, %f4;", F32),
    ("sqrt.rn.f64 %fd9, %fd2;", F64),
    ("sqrt.rz.f64 %fd9, %fd2;", F64),
    ("div.rn.f64 %fd9, %fd1, %fd2;", F64),
    ("div.rn.f64 %fd9, %fd2, %fd1;", F64),
    ("div.rp.f64 %fd9, %fd2, %fd2;", F64),
    ("rcp.rn.f64 %fd9, %fd2;", F64),
    ("rcp.approx.ftz.f64 %fd9, %fd2;", F64),
    ("rsqrt.approx.f64 %fd9, %fd2;", F64),
    // A word of an integer vector load, and a word of a 64-bit component, as an f32.
    (
        "ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];\n\tmov.b32 %f8, %r4;\n\tlg2.approx.ftz.f32 %f9, %f8;",
        F32,
    ),
    (
        "ld.global.v2.u64 {%rd6, %rd7}, [%rd4];\n\tcvt.u32.u64 %r2, %rd7;\n\tmov.b32 %f8, %r2;\n\tsqrt.rn.f32 %f9, %f8;",
        F32,
    ),
];

fn opts() -> Options {
    Options {
        file_name: "words.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

#[test]
fn float_operations_on_group_words_verify() {
    for (op, store) in CASES {
        let src = kernel(op, store);
        let out = compile(&src, &opts())
            .unwrap_or_else(|d| panic!("{op}: {}", leafold::error::render_all(&d.0)));
        let file = cubin::read(&out.cubin).unwrap();
        let errs = check_code(&file.kernels[0].code);
        assert!(errs.is_empty(), "{op}: hazards {errs:?}\n{}", out.sass);
        for seed in [1, 2] {
            let o = VerifyOptions {
                seed,
                runs: 2,
                compile: opts(),
                ..VerifyOptions::default()
            };
            let v = verify_file(&src, None, &o).unwrap();
            match &v[0].outcome {
                Outcome::Match {
                    one_thread: None, ..
                } => {}
                _ => panic!("{op}, seed {seed}: {}\n{}", v[0], out.sass),
            }
        }
    }
}

/// The word is read in place, as ptxas reads it: `rsqrt.approx.ftz.f32` of the second float
/// of the `LDG.E.128` is one `MUFU.RSQ` of the load's second register, with no copy.
#[test]
fn a_component_is_read_in_place() {
    let src = kernel("rsqrt.approx.ftz.f32 %f9, %f2;", F32);
    let out = compile(&src, &opts()).unwrap();
    let lines = common::parse_lines(&out.sass);
    let reg_of = |t: &str, prefix: &str| -> Option<u32> {
        let rest = t.strip_prefix(prefix)?;
        let r = rest.trim_start().strip_prefix('R')?;
        r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    let base = lines
        .iter()
        .find_map(|(_, t)| reg_of(t, "LDG.E.128"))
        .expect("an LDG.E.128");
    let mufu = lines
        .iter()
        .find(|(_, t)| t.starts_with("MUFU.RSQ"))
        .expect("a MUFU.RSQ");
    let operand = mufu.1.rsplit(", ").next().unwrap().trim_end_matches(" ;");
    assert!(
        operand.starts_with(&format!("R{}", base + 1)),
        "{}",
        out.sass
    );
    let moves = lines
        .iter()
        .filter(|(_, t)| t.starts_with("MOV R") && !t.contains("c[0x0]"))
        .count();
    assert_eq!(moves, 0, "{}", out.sass);
}

#[test]
fn nvdisasm_and_cuobjdump_print_our_listing() {
    let Some(oracle) = Oracle::for_test("lower_group_words") else {
        return;
    };
    for (op, store) in CASES {
        let src = kernel(op, store);
        let out = compile(&src, &opts()).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, op, &out.cubin, &out.sass);
    }
}
