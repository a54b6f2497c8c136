//! Surfaces (issue 21): `suld.b`, `sust.b` and `sured.b` on module `.surfref`s and bindless
//! `.u64` surface objects, every shape (1d, 2d, 3d, a1d, a2d), element sizes 8..128 bits
//! and the three clamp modes. Each case checks:
//!
//! * the kernel compiles and the hazard checker finds nothing in our `.text`;
//! * with the oracle, `cuobjdump -sass` and nvdisasm print every word of our cubin as our
//!   printer does, and our `SULD`/`SUST`/`SURED` instructions are ptxas 11.8's for the same
//!   PTX (the same texts once register numbers are blanked: opcode, modifiers, slot);
//! * `ir::eval` (the PTX meaning, `leafold::surface`'s model) and the simulator running our
//!   SASS leave the same bytes in the surface and the output buffer, over random surface
//!   contents, with coordinates that fall outside the surface for `.clamp`/`.zero`;
//! * `.trap` out of bounds traps on both sides;
//! * the cubin's surface metadata (the `.surfref` symbols, `.rel.nv.constant0.<k>`'s
//!   `R_CUDA_SURF_HEADER_INDEX` entries, the grown `.nv.constant0.<k>`,
//!   `EIATTR_BINDLESS_SURFACE_BANK`) is ptxas's, section by section.

mod common;

use common::Rng;
use leafold::cubin;
use leafold::driver::{compile, Emit, Options, Output};
use leafold::ir::eval::{self, EvalError, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::{check_hazards, decode_text};
use leafold::surface::{SurfFormat, SurfaceDesc};

const OUT: u64 = 0x2000_0000;
const SURF: u64 = 0x3000_0000;
const THREADS: u32 = 64;
const CTAS: u32 = 2;

/// A kernel `k(hnd, out)` around `body`. The prologue leaves `%rd2` = the bindless handle,
/// `%rd5` = `&out[4 * tid]` (16 bytes per thread), `%r2` = x in bytes (element `tid % xs`
/// times `size`), `%r3` = y (`tid / 16`), `%r4` = z or the layer (`%ctaid.x`), `%r5` =
/// a per-thread value.
fn kernel(size: u32, xs: u32, body: &str) -> String {
    format!(
        r#".version 7.8
.target sm_50
.address_size 64
.global .surfref surf;
.global .surfref other;
.visible .entry k(.param .u64 hnd, .param .u64 out)
{{
    .reg .b16 %h<8>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [hnd];
    mov.u32 %r1, %tid.x;
    mov.u32 %r9, %ctaid.x;
    rem.u32 %r2, %r1, {xs};
    mul.lo.u32 %r2, %r2, {size};
    shr.u32 %r3, %r1, 4;
    mov.u32 %r4, %r9;
    mad.lo.u32 %r5, %r1, 0x01010101, 0x3c2b1a09;
    mad.lo.u32 %r5, %r9, 0x55, %r5;
    mul.wide.u32 %rd4, %r1, 16;
    add.s64 %rd5, %rd1, %rd4;
{body}
    ret;
}}
"#
    )
}

/// The surface every case binds (both to `.surfref surf` and as handle 0): `width` bytes,
/// 4 rows, 2 slices, 2 layers, random bytes.
fn launch(seed: u64, width: u32) -> Launch {
    launch_with(seed, width, SurfFormat::RAW)
}

/// [`launch`] with a surface of element format `format`.
fn launch_with(seed: u64, width: u32, format: SurfFormat) -> Launch {
    let mut rng = Rng(0x5eed_5eed_0000_0001 ^ (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let desc = SurfaceDesc {
        name: Some("surf".to_string()),
        base: SURF,
        width,
        height: 4,
        depth: 2,
        layers: 2,
        format,
    };
    let bytes: Vec<u8> = (0..desc.bytes()).map(|_| rng.next() as u8).collect();
    let mut l = Launch::new([CTAS, 1, 1], [THREADS, 1, 1]);
    l.params = 0u64
        .to_le_bytes()
        .into_iter()
        .chain(OUT.to_le_bytes())
        .collect();
    l.global = vec![
        GlobalRegion { base: SURF, bytes },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 16 * THREADS as usize],
        },
    ];
    l.surfaces = vec![desc];
    l
}

fn opts() -> Options {
    Options {
        file_name: "surface.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// Compile, check hazards and (with the oracle) the printing of every word and the
/// surface instructions against ptxas's.
fn compile_checked(what: &str, src: &str) -> Output {
    let out = compile(src, &opts())
        .unwrap_or_else(|d| panic!("{what}: {}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    let (insts, ctrl, targets) = decode_text(&c.kernels[0].code).expect("decodes");
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "{what}: hazards: {errs:?}\n{}", out.sass);
    assert!(
        !surface_insts(&out.sass).is_empty(),
        "{what}: no surface instruction\n{}",
        out.sass
    );
    if let Some(oracle) = Oracle::for_test("compile_surface") {
        common::assert_oracle_prints_our_listing(&oracle, what, &out.cubin, &out.sass);
        let theirs = common::ptxas_cached(&oracle, src, "sm_50").expect("ptxas compiles it");
        let listing = oracle.cuobjdump(&theirs, "-sass").expect("cuobjdump");
        let mut ours = surface_insts(&out.sass);
        let mut want = surface_insts(&listing);
        ours.sort();
        want.sort();
        assert_eq!(ours, want, "{what}: ptxas:\n{listing}\nours:\n{}", out.sass);
    }
    out
}

/// The surface instructions of a listing (and `TXQ`, which is `suq.width`/`.height`, its
/// `.T`/`.P` phase dropped: that follows the schedule, which `tests/tex_phase.rs` checks),
/// register numbers blanked.
fn surface_insts(sass: &str) -> Vec<String> {
    common::parse_lines(sass)
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| {
            t.contains("SULD") || t.contains("SUST") || t.contains("SURED") || t.contains("TXQ")
        })
        .map(|t| {
            let mut s = String::new();
            let mut chars = t.chars().peekable();
            while let Some(c) = chars.next() {
                s.push(c);
                if c == 'R' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                        chars.next();
                    }
                    s.push('#');
                }
            }
            s.replace("TXQ.B.T ", "TXQ.B ")
                .replace("TXQ.B.P ", "TXQ.B ")
                .replace("TXQ.T ", "TXQ ")
                .replace("TXQ.P ", "TXQ ")
        })
        .collect()
}

/// `ir::eval` and the simulator on our cubin leave the same surface and output bytes over
/// `runs` random surfaces; or both trap.
fn differential(what: &str, src: &str, out: &Output, width: u32, runs: u64) -> usize {
    differential_with(what, src, out, width, runs, SurfFormat::RAW)
}

/// [`differential`] on surfaces of element format `format`.
fn differential_with(
    what: &str,
    src: &str,
    out: &Output,
    width: u32,
    runs: u64,
    format: SurfFormat,
) -> usize {
    let module = common::ir_module("surface.ptx", src);
    let mut traps = 0;
    for seed in 0..runs {
        let l = launch_with(seed, width, format);
        let want = eval::run(&module, "k", &l);
        let got = sim::run_cubin(&out.cubin, "k", &l);
        match (want, got) {
            (Ok(w), Ok(g)) => {
                assert_eq!(
                    w.region(SURF),
                    g.region(SURF),
                    "{what}: surface, seed {seed}"
                );
                assert_eq!(w.region(OUT), g.region(OUT), "{what}: out, seed {seed}");
            }
            (Err(EvalError::Trapped { .. }), Err(sim::SimError::Trap { .. })) => traps += 1,
            (w, g) => panic!(
                "{what}: seed {seed}: eval {:?} vs sim {:?}\n{}",
                w.err(),
                g.err(),
                out.sass
            ),
        }
    }
    traps
}

/// One case: a body, its element size and the number of x positions (past the width of
/// 12 elements for the out-of-bounds cases).
struct Case {
    name: &'static str,
    size: u32,
    xs: u32,
    body: &'static str,
}

const STORE_OUT: &str = "    st.global.v4.u32 [%rd5], {%r10, %r11, %r12, %r13};";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "suld_1d_b32_trap_bound",
            size: 4,
            xs: 12,
            body: "    suld.b.1d.b32.trap {%r10}, [surf, {%r2}];",
        },
        Case {
            name: "suld_2d_v2_b32_clamp_bound",
            size: 8,
            xs: 16,
            body: "    suld.b.2d.v2.b32.clamp {%r10, %r11}, [surf, {%r2, %r3}];",
        },
        Case {
            name: "suld_3d_v4_b32_zero_bindless",
            size: 16,
            xs: 16,
            body: "    suld.b.3d.v4.b32.zero {%r10, %r11, %r12, %r13}, [%rd2, {%r2, %r3, %r4, %r4}];",
        },
        Case {
            name: "suld_1d_b8_zero_bound",
            size: 1,
            xs: 16,
            body: "    suld.b.1d.b8.zero {%h1}, [surf, {%r2}];\n    cvt.u32.u16 %r10, %h1;",
        },
        Case {
            name: "suld_2d_v2_b16_trap_bindless",
            size: 4,
            xs: 12,
            body: "    suld.b.2d.v2.b16.trap {%h1, %h2}, [%rd2, {%r2, %r3}];\n    cvt.u32.u16 %r10, %h1;\n    cvt.u32.u16 %r11, %h2;",
        },
        Case {
            name: "suld_a1d_b64_clamp_bindless",
            size: 8,
            xs: 16,
            body: "    suld.b.a1d.b64.clamp {%rd6}, [%rd2, {%r4, %r2}];\n    mov.b64 {%r10, %r11}, %rd6;",
        },
        Case {
            name: "suld_a2d_v2_b64_trap_bound",
            size: 16,
            xs: 12,
            body: "    suld.b.a2d.v2.b64.trap {%rd6, %rd7}, [surf, {%r4, %r2, %r3, %r3}];\n    mov.b64 {%r10, %r11}, %rd6;\n    mov.b64 {%r12, %r13}, %rd7;",
        },
        Case {
            name: "suld_1d_v4_b8_clamp_bound",
            size: 4,
            xs: 16,
            body: "    suld.b.1d.v4.b8.clamp {%h1, %h2, %h3, %h4}, [surf, {%r2}];\n    cvt.u32.u16 %r10, %h1;\n    cvt.u32.u16 %r11, %h2;\n    cvt.u32.u16 %r12, %h3;\n    cvt.u32.u16 %r13, %h4;",
        },
        Case {
            name: "sust_1d_b32_trap_bound",
            size: 4,
            xs: 12,
            body: "    sust.b.1d.b32.trap [surf, {%r2}], {%r5};",
        },
        Case {
            name: "sust_2d_v2_b32_clamp_bindless",
            size: 8,
            xs: 16,
            body: "    add.u32 %r6, %r5, 1;\n    sust.b.2d.v2.b32.clamp [%rd2, {%r2, %r3}], {%r5, %r6};",
        },
        Case {
            name: "sust_3d_v4_b32_zero_bound",
            size: 16,
            xs: 16,
            body: "    add.u32 %r6, %r5, 1;\n    add.u32 %r7, %r5, 2;\n    sust.b.3d.v4.b32.zero [surf, {%r2, %r3, %r4, %r4}], {%r5, %r6, %r7, %r1};",
        },
        Case {
            name: "sust_1d_b8_trap_bound",
            size: 1,
            xs: 12,
            body: "    cvt.u16.u32 %h1, %r5;\n    sust.b.1d.b8.trap [surf, {%r2}], {%h1};",
        },
        Case {
            name: "sust_a1d_v2_b16_zero_bindless",
            size: 4,
            xs: 16,
            body: "    cvt.u16.u32 %h1, %r5;\n    shr.u32 %r6, %r5, 16;\n    cvt.u16.u32 %h2, %r6;\n    sust.b.a1d.v2.b16.zero [%rd2, {%r4, %r2}], {%h1, %h2};",
        },
        Case {
            name: "sust_a2d_b64_clamp_bound",
            size: 8,
            xs: 16,
            body: "    mul.wide.u32 %rd6, %r5, 0x10001;\n    sust.b.a2d.b64.clamp [surf, {%r4, %r2, %r3, %r3}], {%rd6};",
        },
        Case {
            name: "sust_1d_v4_b16_trap_bound",
            size: 8,
            xs: 12,
            body: "    cvt.u16.u32 %h1, %r5;\n    cvt.u16.u32 %h2, %r1;\n    sust.b.1d.v4.b16.trap [surf, {%r2}], {%h1, %h2, %h1, %h2};",
        },
        // A load after a store to the same place (each thread its own element: x, y and
        // the slice are unique per thread) must see the stored value: the scheduler keeps
        // SULD after SUST.
        Case {
            name: "sust_then_suld_3d_b32_zero_bound",
            size: 4,
            xs: 16,
            body: "    sust.b.3d.b32.zero [surf, {%r2, %r3, %r4, %r4}], {%r5};\n    suld.b.3d.b32.zero {%r10}, [surf, {%r2, %r3, %r4, %r4}];\n    st.global.u32 [%rd5+4], %r10;",
        },
        Case {
            name: "sured_2d_add_u32_trap_bound",
            size: 4,
            xs: 12,
            body: "    sured.b.add.2d.u32.trap [surf, {%r2, %r3}], %r5;",
        },
        Case {
            name: "sured_1d_min_s32_clamp_bindless",
            size: 4,
            xs: 16,
            body: "    sured.b.min.1d.s32.clamp [%rd2, {%r2}], %r5;",
        },
        Case {
            name: "sured_3d_max_u32_zero_bound",
            size: 4,
            xs: 16,
            body: "    sured.b.max.3d.u32.zero [surf, {%r2, %r3, %r4, %r4}], %r5;",
        },
        Case {
            name: "sured_1d_add_u64_trap_bound",
            size: 8,
            xs: 12,
            body: "    cvt.u64.u32 %rd6, %r5;\n    sured.b.add.1d.u64.trap [surf, {%r2}], %rd6;",
        },
        Case {
            name: "sured_2d_or_b32_zero_bindless",
            size: 4,
            xs: 16,
            body: "    sured.b.or.2d.b32.zero [%rd2, {%r2, %r3}], %r5;",
        },
    ]
}

#[test]
fn every_shape_and_mode_agrees_with_the_model_and_ptxas() {
    for c in cases() {
        let body = if c.name.starts_with("suld") {
            format!("{}\n{STORE_OUT}", c.body)
        } else {
            c.body.to_string()
        };
        let src = kernel(c.size, c.xs, &body);
        let out = compile_checked(c.name, &src);
        // 12 elements per row: x positions 12..15 fall outside under .clamp/.zero.
        let traps = differential(c.name, &src, &out, 12 * c.size, 4);
        assert_eq!(traps, 0, "{}: in-bounds accesses trapped", c.name);
    }
}

/// Per-thread floats for the formatted stores: `%r20` = tid · 0.04 − 1.3 + ctaid · 0.3
/// (−1.3 ..= 1.52, past both ends of the normalized ranges), `%r21` = `%r5`'s bits (any
/// float, NaN and infinities included), `%r22` = −`%r20`.
const FLOATS: &str = "    cvt.rn.f32.u32 %r20, %r1;
    cvt.rn.f32.u32 %r23, %r9;
    fma.rn.f32 %r20, %r20, 0f3D23D70A, 0fBFA66666;
    fma.rn.f32 %r20, %r23, 0f3E99999A, %r20;
    mov.b32 %r21, %r5;
    neg.f32 %r22, %r20;";

/// `sust.p` cases: (name, surface format, x positions, body). x counts elements (the
/// kernel's `%r2` is `tid % xs`); rows are 12 elements, so 16 positions fall outside.
fn formatted_cases() -> Vec<(&'static str, &'static str, u32, &'static str)> {
    vec![
        (
            "sust_p_1d_b32_trap_bound_u32",
            "u32",
            12,
            "    sust.p.1d.b32.trap [surf, {%r2}], {%r5};",
        ),
        (
            "sust_p_2d_v2_b32_clamp_bindless_unorm16x2",
            "unorm16x2",
            16,
            "    sust.p.2d.v2.b32.clamp [%rd2, {%r2, %r3}], {%r20, %r22};",
        ),
        (
            "sust_p_3d_v4_b32_zero_bound_unorm8x4",
            "unorm8x4",
            16,
            "    sust.p.3d.v4.b32.zero [surf, {%r2, %r3, %r4, %r4}], {%r20, %r22, %r21, %r20};",
        ),
        (
            "sust_p_a1d_b32_trap_bindless_f16",
            "f16",
            12,
            "    sust.p.a1d.b32.trap [%rd2, {%r4, %r2}], {%r20};",
        ),
        (
            "sust_p_a2d_v4_b32_clamp_bound_snorm8x4",
            "snorm8x4",
            16,
            "    sust.p.a2d.v4.b32.clamp [surf, {%r4, %r2, %r3, %r3}], {%r20, %r22, %r21, %r5};",
        ),
        (
            "sust_p_2d_v2_b32_zero_bound_s16x2",
            "s16x2",
            16,
            "    sust.p.2d.v2.b32.zero [surf, {%r2, %r3}], {%r5, %r1};",
        ),
        (
            "sust_p_1d_v4_b32_trap_bindless_snorm16x2_extra_values",
            "snorm16x2",
            12,
            "    sust.p.1d.v4.b32.trap [%rd2, {%r2}], {%r20, %r22, %r5, %r5};",
        ),
        (
            "sust_p_2d_v4_b32_clamp_bound_f32x4",
            "f32x4",
            16,
            "    sust.p.2d.v4.b32.clamp [surf, {%r2, %r3}], {%r21, %r20, %r5, %r22};",
        ),
        (
            "sust_p_3d_v2_b32_trap_bindless_u8x2",
            "u8x2",
            12,
            "    sust.p.3d.v2.b32.trap [%rd2, {%r2, %r3, %r4, %r4}], {%r5, %r1};",
        ),
    ]
}

#[test]
fn formatted_stores_agree_with_the_model_and_ptxas() {
    for (name, fmt, xs, body) in formatted_cases() {
        let format = SurfFormat::parse(fmt).expect("a format");
        let src = kernel(1, xs, &format!("{FLOATS}\n{body}"));
        let out = compile_checked(name, &src);
        let width = 12 * format.elem_bytes();
        let traps = differential_with(name, &src, &out, width, 4, format);
        assert_eq!(traps, 0, "{name}: in-bounds accesses trapped");
    }
    // .trap past the row's end traps on both sides.
    let src = kernel(
        1,
        16,
        &format!("{FLOATS}\n    sust.p.1d.v2.b32.trap [surf, {{%r2}}], {{%r20, %r5}};"),
    );
    let out = compile_checked("sust_p_trap_oob", &src);
    let format = SurfFormat::parse("unorm16x2").unwrap();
    assert_eq!(
        differential_with("sust_p_trap_oob", &src, &out, 48, 2, format),
        2
    );
}

#[test]
fn trap_out_of_bounds_traps_on_both_sides() {
    // x runs over 16 elements of a 12-element row: every launch has an access outside.
    let body = format!("    suld.b.2d.b32.trap {{%r10}}, [surf, {{%r2, %r3}}];\n{STORE_OUT}");
    let src = kernel(4, 16, &body);
    let out = compile_checked("trap_oob", &src);
    assert_eq!(differential("trap_oob", &src, &out, 48, 2), 2);
}

#[test]
fn a_handle_computed_at_run_time_uses_the_register_form() {
    // The handle comes from memory: SULD.D.BA ... [Ra], Rc (ptxas's `_R` form). The store
    // goes to slice 1, which the load (slice 0) does not read.
    let body = format!(
        "    ld.global.u64 %rd8, [%rd1+2048];\n    suld.b.1d.b32.trap {{%r10}}, [%rd8, {{%r2}}];\n    mov.u32 %r7, 1;\n    sust.b.3d.b32.zero [%rd8, {{%r2, %r3, %r7, %r7}}], {{%r5}};\n{STORE_OUT}"
    );
    let src = kernel(4, 12, &body);
    let out = compile_checked("register_handle", &src);
    let su = surface_insts(&out.sass);
    assert!(su.iter().all(|t| t.ends_with("R#")), "{su:?}");
    let module = common::ir_module("surface.ptx", &src);
    for seed in 0..3 {
        let mut l = launch(seed, 48);
        // out[2048..] holds handle 0; the rest of out is written by the kernel.
        l.global[1].bytes.resize(4096, 0);
        let want = eval::run(&module, "k", &l).expect("eval");
        let got = sim::run_cubin(&out.cubin, "k", &l).expect("sim");
        assert_eq!(want.region(SURF), got.region(SURF));
        assert_eq!(want.region(OUT), got.region(OUT));
    }
}

#[test]
fn surface_listing_snapshot() {
    let body = format!(
        "    suld.b.2d.v2.b32.clamp {{%r10, %r11}}, [surf, {{%r2, %r3}}];\n    sust.b.a1d.b32.trap [%rd2, {{%r4, %r2}}], {{%r10}};\n    sured.b.add.1d.u32.zero [surf, {{%r2}}], %r11;\n{STORE_OUT}"
    );
    listing_snapshot("surface_listing", 8, &body);
}

/// Our listing of `kernel(size, 12, body)`, checked as every case is, as snapshot `name`.
fn listing_snapshot(name: &str, size: u32, body: &str) {
    let src = kernel(size, 12, body);
    let out = compile_checked(name, &src);
    insta::assert_snapshot!(name, out.sass);
}

/// The ELF sections, symbols, relocations and `.nv.info` records that carry surfaces, as
/// ptxas writes them for the same PTX: one kernel with two `.surfref`s and a handle
/// parameter; and several kernels, where ptxas gives each kernel's slots in the order it
/// first uses them and lists the `.surfref` symbols after its first kernel's (the last
/// defined), those that kernel uses first.
#[test]
fn cubin_surface_metadata_is_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_surface") else {
        return;
    };
    let body = format!(
        "    suld.b.2d.v2.b32.clamp {{%r10, %r11}}, [surf, {{%r2, %r3}}];\n    sust.b.1d.b32.trap [other, {{%r2}}], {{%r10}};\n    sust.b.1d.b32.trap [%rd2, {{%r2}}], {{%r11}};\n{STORE_OUT}"
    );
    same_metadata(&oracle, "one kernel", &kernel(8, 12, &body));
    let several = r#".version 7.8
.target sm_50
.address_size 64
.global .surfref u0;
.global .surfref sa;
.global .surfref sb;
.global .surfref unused;
.visible .entry k1(.param .u32 x)
{
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [x];
  sust.b.1d.b32.trap [sa, {%r1}], {%r1};
  ret;
}
.visible .entry k2(.param .u64 p, .param .u32 x)
{
  .reg .b32 %r<4>;
  ld.param.u32 %r1, [x];
  sust.b.1d.b32.trap [sb, {%r1}], {%r1};
  sust.b.1d.b32.trap [u0, {%r1}], {%r1};
  ret;
}
"#;
    same_metadata(&oracle, "several kernels", several);
}

fn same_metadata(oracle: &Oracle, what: &str, src: &str) {
    let out = compile(src, &opts()).expect("compiles");
    let theirs = common::ptxas_cached(oracle, src, "sm_50").expect("ptxas");
    common::assert_same_cubin_metadata(oracle, what, &out.cubin, &theirs);
    let sass = oracle.cuobjdump(&out.cubin, "-sass").expect("cuobjdump");
    let want = oracle.cuobjdump(&theirs, "-sass").expect("cuobjdump");
    let mut ours = surface_insts(&sass);
    let mut them = surface_insts(&want);
    ours.sort();
    them.sort();
    assert_eq!(ours, them, "{what}: surface instructions (slots)");
}

/// `verify` runs surface kernels out of the box: a surface per `.surfref` and per handle
/// parameter (`--surface`'s default size), random contents, compared after the run; on
/// leafold's code and, with the oracle, on ptxas's.
#[test]
fn verify_covers_surface_kernels() {
    use leafold::verify::{verify_file, Outcome, VerifyOptions};
    // Each thread its own element (x = 8 · tid, row %ctaid.x): no races.
    let body = "    shl.b32 %r2, %r1, 3;
    suld.b.2d.b32.trap {%r10}, [surf, {%r2, %r4}];
    add.u32 %r10, %r10, %r5;
    sust.b.2d.b32.trap [surf, {%r2, %r4}], {%r10};
    suld.b.a1d.v2.b32.clamp {%r11, %r12}, [%rd2, {%r4, %r2}];
    sust.b.3d.b8.zero [%rd2, {%r2, %r4, %r4, %r4}], {%h1};
    add.u32 %r6, %r4, 2;
    sured.b.max.2d.u32.trap [%rd2, {%r2, %r6}], %r11;
    mad.lo.u32 %r20, %r9, 64, %r1;
    mul.wide.u32 %rd4, %r20, 16;
    add.s64 %rd5, %rd1, %rd4;
    st.global.v4.u32 [%rd5], {%r10, %r11, %r12, %r13};";
    let src = kernel(4, 12, body);
    let oracle = Oracle::for_test("compile_surface");
    let opts = VerifyOptions {
        ptxas_cubin: oracle
            .as_ref()
            .map(|o| common::ptxas_cached(o, &src, "sm_50").expect("ptxas")),
        ..VerifyOptions::default()
    };
    let v = verify_file(&src, None, &opts).expect("compiles");
    assert_full_match(&v, oracle.is_some());
    // A surface too small for the accesses: .trap aborts both sides alike.
    let small = VerifyOptions {
        surface: Some([16, 1, 1, 1]),
        ..opts
    };
    let v = verify_file(&src, None, &small).expect("compiles");
    assert!(!matches!(v[0].outcome, Outcome::Mismatch(_)), "{}", v[0]);
}

/// One kernel verified at the full launch, on ptxas's code too when `with_ptxas`.
fn assert_full_match(v: &[leafold::verify::Verdict], with_ptxas: bool) {
    use leafold::verify::Outcome;
    assert_eq!(v.len(), 1);
    match &v[0].outcome {
        Outcome::Match {
            one_thread: None,
            ptxas,
            ..
        } => assert_eq!(*ptxas, with_ptxas, "{}", v[0]),
        _ => panic!("{}", v[0]),
    }
}

/// `verify` runs `sust.p` on a surface of the format `--surface ...:FORMAT` names (here
/// `unorm8x4`, a 4-byte element): on leafold's code and, with the oracle, on ptxas's.
#[test]
fn verify_covers_formatted_stores() {
    // Each thread its own element (x = tid, row %ctaid.x): no races.
    let body = format!(
        "{FLOATS}\n    sust.p.2d.v4.b32.trap [surf, {{%r1, %r4}}], {{%r20, %r22, %r21, %r5}};\n    sust.p.a1d.v4.b32.zero [%rd2, {{%r4, %r1}}], {{%r22, %r20, %r5, %r21}};"
    );
    verify_on_surfaces(&kernel(1, 12, &body), "256,4,1,2:unorm8x4");
}

/// `verify` of `src` on surfaces `spec` (`--surface`'s syntax) matches at the full launch,
/// on leafold's code and, with the oracle, on ptxas's.
fn verify_on_surfaces(src: &str, spec: &str) {
    use leafold::verify::{verify_file, VerifyOptions};
    let oracle = Oracle::for_test("compile_surface");
    let (dims, format) = leafold::verify::surfaces::parse_spec(spec).unwrap();
    let opts = VerifyOptions {
        ptxas_cubin: oracle
            .as_ref()
            .map(|o| common::ptxas_cached(o, src, "sm_50").expect("ptxas")),
        surface: Some(dims),
        surface_format: format,
        ..VerifyOptions::default()
    };
    let v = verify_file(src, None, &opts).expect("compiles");
    assert_full_match(&v, oracle.is_some());
}

/// What leafold refuses of the surface chapter gets a diagnostic at the instruction's file,
/// line and column that says what ptxas 11.8 does: `suld.p` (ptxas has none for sm_5x),
/// `sust.p` of other than `.b32` or without a clamp mode, `sured.p` of other than `.b32` or
/// on an array shape (ptxas refuses all of them).
#[test]
fn formatted_accesses_ptxas_refuses_are_refused_with_its_words() {
    for (body, says) in [
        (
            "    suld.p.2d.v4.b32.trap {%r10, %r11, %r12, %r13}, [surf, {%r2, %r3}];",
            "no formatted surface load for sm_5x",
        ),
        (
            "    sust.p.2d.f32.trap [surf, {%r2, %r3}], %r5;",
            "Unexpected instruction types specified for 'sust.p'",
        ),
        (
            "    sust.p.2d.b32 [surf, {%r2, %r3}], %r5;",
            "Clamp modifier required",
        ),
        (
            "    sured.p.add.2d.trap.u32 [surf, {%r2, %r3}], %r5;",
            "Unexpected instruction types specified for 'sured.p'",
        ),
    ] {
        let src = kernel(4, 8, body);
        let e = compile(&src, &opts()).unwrap_err();
        let text = leafold::error::render_all(&e.0);
        // The body is line 23 of `kernel`'s text, its instruction at column 5.
        assert!(text.contains("surface.ptx:23:5"), "{text}");
        assert!(text.contains(says), "{text}");
    }
}

/// `suq` cases (four attributes each, stored to `out`): on the bound `.surfref`, on the
/// handle parameter (ptxas's `TXQ` on the parameter's word), mixed.
const SUQ_CASES: [(&str, &str); 3] = [
    (
        "suq_bound_sizes_and_type",
        "    suq.width.b32 %r10, [surf];
    suq.height.b32 %r11, [surf];
    suq.depth.b32 %r12, [surf];
    suq.channel_data_type.b32 %r13, [surf];",
    ),
    (
        "suq_bound_order_layers_layout_and_bindless_width",
        "    suq.channel_order.b32 %r10, [surf];
    suq.array_size.b32 %r11, [surf];
    suq.memory_layout.b32 %r12, [surf];
    suq.width.b32 %r13, [%rd2];",
    ),
    (
        "suq_bindless_table_attributes",
        "    suq.height.b32 %r10, [%rd2];
    suq.depth.b32 %r11, [%rd2];
    suq.channel_order.b32 %r12, [%rd2];
    suq.array_size.b32 %r13, [%rd2];",
    ),
];

/// Formats the `suq` and `sured.p` cases run on.
const QUERY_FORMATS: [&str; 5] = ["u8", "f16x2", "s32", "unorm8x4", "u32"];

/// `suq` of every attribute, bound and bindless: TXQ (width, height) as ptxas writes it,
/// the table loads beside them, and `ir::eval` = the simulator on several formats (the
/// simulator reads the driver tables the cubin's relocations point it at). One answer is
/// pinned to the model's meaning, so that both sides cannot agree on a wrong one.
#[test]
fn suq_agrees_with_the_model_and_ptxas() {
    for (name, body) in SUQ_CASES {
        let src = kernel(4, 12, &format!("{body}\n{STORE_OUT}"));
        let out = compile_checked(name, &src);
        for fmt in QUERY_FORMATS {
            let format = SurfFormat::parse(fmt).unwrap();
            let traps = differential_with(name, &src, &out, 48, 1, format);
            assert_eq!(traps, 0, "{name}");
        }
    }
    // 48 bytes of f16x2 (4-byte) elements: width 12; 4 rows, 2 slices; CU_AD_FORMAT_HALF.
    let src = kernel(4, 12, &format!("{}\n{STORE_OUT}", SUQ_CASES[0].1));
    let module = common::ir_module("surface.ptx", &src);
    let l = launch_with(0, 48, SurfFormat::parse("f16x2").unwrap());
    let r = eval::run(&module, "k", &l).expect("eval");
    let first: Vec<u32> = r.region(OUT).unwrap()[..16]
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(first, [12, 4, 2, 0x10]);
}

/// `suq` on a handle loaded from memory: `TXQ.B` and the table load from the handle
/// register, as ptxas writes them.
#[test]
fn suq_on_a_register_handle() {
    let body = format!(
        "    ld.global.u64 %rd8, [%rd1+2048];\n    suq.width.b32 %r10, [%rd8];\n    suq.height.b32 %r11, [%rd8];\n    suq.array_size.b32 %r12, [%rd8];\n    suq.channel_data_type.b32 %r13, [%rd8];\n{STORE_OUT}"
    );
    let src = kernel(4, 12, &body);
    let out = compile_checked("suq_register_handle", &src);
    assert!(out.sass.contains("TXQ.B"), "{}", out.sass);
    let module = common::ir_module("surface.ptx", &src);
    for seed in 0..2 {
        let mut l = launch_with(seed, 48, SurfFormat::parse("s16x2").unwrap());
        l.global[1].bytes.resize(4096, 0);
        let want = eval::run(&module, "k", &l).expect("eval");
        let got = sim::run_cubin(&out.cubin, "k", &l).expect("sim");
        assert_eq!(want.region(OUT), got.region(OUT));
    }
}

/// `sured.p` cases: (name, x positions, body); x counts elements, rows are 12 elements.
const SURED_P_CASES: [(&str, u32, &str); 5] = [
    (
        "sured_p_add_1d_trap_bound",
        12,
        "    sured.p.add.1d.b32.trap [surf, {%r2}], %r5;",
    ),
    (
        "sured_p_min_2d_clamp_bindless",
        16,
        "    sured.p.min.2d.b32.clamp [%rd2, {%r2, %r3}], %r5;",
    ),
    (
        "sured_p_max_3d_zero_bound",
        16,
        "    sured.p.max.3d.b32.zero [surf, {%r2, %r3, %r4, %r4}], %r5;",
    ),
    (
        "sured_p_and_2d_trap_bound",
        12,
        "    sured.p.and.2d.b32.trap [surf, {%r2, %r3}], %r5;",
    ),
    (
        "sured_p_or_1d_zero_bindless",
        16,
        "    sured.p.or.1d.b32.zero [%rd2, {%r2}], %r5;",
    ),
];

/// `sured.p`: `SURED.D` without `.BA` (x in elements), min/max `.SD32`, as ptxas writes
/// it; `ir::eval` = the simulator on `u32` and `s32` surfaces (min/max compare as the
/// format's type), and both refuse other formats alike (undefined in the model).
#[test]
fn sured_p_agrees_with_the_model_and_ptxas() {
    for (name, xs, body) in SURED_P_CASES {
        let src = kernel(1, xs, body);
        let out = compile_checked(name, &src);
        for fmt in ["u32", "s32"] {
            let format = SurfFormat::parse(fmt).unwrap();
            let traps = differential_with(name, &src, &out, 48, 3, format);
            assert_eq!(traps, 0, "{name} on {fmt}");
        }
        let module = common::ir_module("surface.ptx", &src);
        let l = launch_with(0, 48, SurfFormat::parse("u16x2").unwrap());
        let e = eval::run(&module, "k", &l).unwrap_err();
        assert!(e.to_string().contains("one 32-bit integer channel"), "{e}");
        assert!(sim::run_cubin(&out.cubin, "k", &l).is_err());
    }
    // min on u32 and on s32 differ where the sign bit is set: the model honours the format.
    let src = kernel(1, 12, SURED_P_CASES[1].2);
    let module = common::ir_module("surface.ptx", &src);
    let run = |fmt: &str| {
        let l = launch_with(0, 48, SurfFormat::parse(fmt).unwrap());
        eval::run(&module, "k", &l)
            .unwrap()
            .region(SURF)
            .unwrap()
            .to_vec()
    };
    assert_ne!(run("u32"), run("s32"));
}

#[test]
fn suq_and_sured_p_listing_snapshot() {
    let body = format!(
        "    suq.width.b32 %r10, [surf];\n    suq.channel_order.b32 %r11, [%rd2];\n    sured.p.max.2d.b32.trap [surf, {{%r2, %r3}}], %r5;\n{STORE_OUT}"
    );
    listing_snapshot("surface_query_listing", 1, &body);
}

/// The cubin of `suq`/`sured.p` kernels carries what ptxas's does: `.nv.surfrefDescSize`
/// (after the `.text` symbol), the field offset in `.nv.constant2`, the descriptor-size
/// relocation, `EIATTR_BINDLESS_SURFACE_BANK`. One table query each: with more, ptxas loads
/// the descriptor size once where leafold loads it per query (more `.rel.text` entries).
#[test]
fn suq_cubin_metadata_is_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_surface") else {
        return;
    };
    let body = "    suq.width.b32 %r10, [surf];\n    suq.height.b32 %r11, [%rd2];\n    suq.array_size.b32 %r12, [%rd2];";
    same_metadata(
        &oracle,
        "suq",
        &kernel(4, 12, &format!("{body}\n{STORE_OUT}")),
    );
    // sured.p on both kinds of handle, in a kernel of no other constants (the shared
    // prologue's immediates go to ptxas's constant bank 2).
    let sured = r#".version 7.8
.target sm_50
.address_size 64
.global .surfref s0;
.visible .entry k(.param .u64 sobj)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  ld.param.u64 %rd1, [sobj];
  sured.p.max.2d.b32.zero [s0, {%r1, %r2}], %r1;
  sured.p.add.1d.b32.trap [%rd1, {%r2}], %r1;
  ret;
}
"#;
    same_metadata(&oracle, "sured.p", sured);
}

/// `verify` runs `suq` and `sured.p` kernels on an `s32` surface, on leafold's code and,
/// with the oracle, on ptxas's.
#[test]
fn verify_covers_suq_and_sured_p() {
    // Each thread its own element (x = tid, row %ctaid.x): no races.
    let body = "    sured.p.add.2d.b32.trap [surf, {%r1, %r4}], %r5;
    sured.p.min.1d.b32.zero [%rd2, {%r1}], %r5;
    suq.width.b32 %r10, [surf];
    suq.array_size.b32 %r11, [%rd2];
    suq.channel_data_type.b32 %r12, [surf];
    suq.height.b32 %r13, [%rd2];
    mad.lo.u32 %r20, %r9, 64, %r1;
    mul.wide.u32 %rd4, %r20, 16;
    add.s64 %rd5, %rd1, %rd4;
    st.global.v4.u32 [%rd5], {%r10, %r11, %r12, %r13};";
    verify_on_surfaces(&kernel(1, 12, body), "256,4,1,2:s32");
}
