//! The `.T`/`.P` texture phase (issue 21): the scheduler marks the texture instructions a
//! block issues before it waits on any of their results as one batch, the last `.P` and the
//! others `.T` (`sm50::sched::texture_phases` has the rule and its evidence). These kernels
//! have batches of one to four fetches, a fetch whose coordinate is an earlier fetch's
//! result (two batches), `txq` next to `tex` (their results first used together, so that
//! both schedulers issue both before a wait), and a fetch in a loop. For each:
//!
//! * the code is hazard-free;
//! * every texture instruction has a phase, and a `.P` ends each block's last batch;
//! * with the oracle: nvdisasm prints exactly our listing, and ptxas 11.8 writes the same
//!   texture instructions with the same sequence of phases for the same PTX.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;

/// (kernel name, body): `%f1`..`%f3` hold float coordinates, `%rd2` the output address.
const KERNELS: &[(&str, &str)] = &[
    (
        "four_independent",
        " tex.2d.v4.f32.f32 {%f10,%f11,%f12,%f13}, [t, {%f1, %f2}];
 tex.2d.v4.f32.f32 {%f14,%f15,%f16,%f17}, [t, {%f2, %f3}];
 tex.2d.v4.f32.f32 {%f18,%f19,%f20,%f21}, [t, {%f3, %f1}];
 tex.2d.v4.f32.f32 {%f22,%f23,%f24,%f25}, [u, {%f1, %f1}];
 add.f32 %f10, %f10, %f14;
 add.f32 %f18, %f18, %f22;
 add.f32 %f10, %f10, %f18;
 st.global.f32 [%rd2], %f10;",
    ),
    (
        "dependent_pair",
        " tex.1d.v4.f32.f32 {%f10,%f11,%f12,%f13}, [t, {%f1}];
 tex.1d.v4.f32.f32 {%f14,%f15,%f16,%f17}, [u, {%f10}];
 st.global.f32 [%rd2], %f14;",
    ),
    (
        "two_then_dependent",
        " tex.2d.v4.f32.f32 {%f10,%f11,%f12,%f13}, [t, {%f1, %f2}];
 tex.2d.v4.f32.f32 {%f14,%f15,%f16,%f17}, [u, {%f2, %f3}];
 add.f32 %f10, %f10, %f14;
 tex.2d.v4.f32.f32 {%f18,%f19,%f20,%f21}, [t, {%f10, %f3}];
 st.global.f32 [%rd2], %f18;",
    ),
    (
        "txq_and_tex",
        " txq.width.b32 %r5, [u];
 tex.2d.v4.f32.f32 {%f10,%f11,%f12,%f13}, [t, {%f1, %f2}];
 cvt.rzi.u32.f32 %r6, %f10;
 add.u32 %r6, %r6, %r5;
 st.global.u32 [%rd2], %r6;",
    ),
    (
        "loop",
        " mov.u32 %r5, 0;
 mov.f32 %f9, 0f00000000;
LOOP:
 .pragma \"nounroll\";
 tex.1d.v4.f32.f32 {%f10,%f11,%f12,%f13}, [t, {%f1}];
 add.f32 %f9, %f9, %f10;
 add.f32 %f1, %f1, 0f3F800000;
 add.u32 %r5, %r5, 1;
 setp.lt.u32 %p1, %r5, %r1;
 @%p1 bra LOOP;
 st.global.f32 [%rd2], %f9;",
    ),
];

fn ptx(name: &str, body: &str) -> String {
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n.global .texref t;\n.global .texref u;\n\n\
         .visible .entry {name}(.param .u64 out, .param .f32 s)\n{{\n\
         \x20.reg .pred %p<4>;\n .reg .f32 %f<32>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<4>;\n\
         \x20ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n\
         \x20ld.param.f32 %f1, [s];\n mov.u32 %r1, %tid.x;\n\
         \x20cvt.rn.f32.u32 %f2, %r1;\n mul.f32 %f3, %f2, %f1;\n\
         \x20mul.wide.u32 %rd3, %r1, 4;\n add.s64 %rd2, %rd1, %rd3;\n{body}\n ret;\n}}\n"
    )
}

fn opts(name: &str) -> Options {
    Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// The texture mnemonics of a listing, in order, with their phase.
fn texture_mnemonics(listing: &str) -> Vec<String> {
    common::parse_lines(listing)
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| t.starts_with("TEX") || t.starts_with("TLD") || t.starts_with("TXQ"))
        .map(|t| t.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn every_texture_instruction_has_a_phase_and_the_code_is_hazard_free() {
    for &(name, body) in KERNELS {
        let src = ptx(name, body);
        let out = compile(&src, &opts(name))
            .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)));
        let c = cubin::read(&out.cubin).unwrap();
        let errs = check_code(&c.kernels[0].code);
        assert!(errs.is_empty(), "{name}: {errs:#?}\n{}", out.sass);
        let m = texture_mnemonics(&out.sass);
        assert!(
            !m.is_empty(),
            "{name}: no texture instruction\n{}",
            out.sass
        );
        assert!(
            m.iter().all(|t| t.ends_with(".T") || t.ends_with(".P")),
            "{name}: {m:?}"
        );
        assert!(m.last().unwrap().ends_with(".P"), "{name}: {m:?}");
    }
}

#[test]
fn ptxas_sets_the_same_phases() {
    let Some(oracle) = Oracle::for_test("tex_phase") else {
        return;
    };
    for &(name, body) in KERNELS {
        let src = ptx(name, body);
        let out = compile(&src, &opts(name))
            .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)));
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
        let theirs = common::ptxas_cached(&oracle, &src, "sm_50")
            .unwrap_or_else(|e| panic!("{name}: ptxas: {e}"));
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        // The same instructions (the schedulers may order a batch differently) and the same
        // phase sequence.
        let split = |m: Vec<String>| {
            let phases: Vec<String> = m.iter().map(|t| t[t.len() - 2..].to_string()).collect();
            let mut ops: Vec<String> = m.iter().map(|t| t[..t.len() - 2].to_string()).collect();
            ops.sort();
            (ops, phases)
        };
        assert_eq!(
            split(texture_mnemonics(&listing)),
            split(texture_mnemonics(&out.sass)),
            "{name}: ptxas (left) vs ours (right)\n{listing}\n{}",
            out.sass
        );
    }
}
