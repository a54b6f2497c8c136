//! Texture and sampler handles in registers (`.texmode_independent`, `[th, sh, {c}]`):
//! ptxas 11.8 combines them into one `.B` handle, `SHL h, sh, 0x14` then
//! `BFI h, th, 0x1400, h` (the texture's header index in bits 0..19, the sampler's above),
//! for `tex` with float coordinates and for `tld4`; `tex.1d`, which ptxas keeps `TEX.B 1D`
//! with options too (`TEX.B.LL`, `TXD.B.AOFFI`, the quad's `TEX.B.DC.NDV`), and integer
//! coordinates, which it samples as floats. For each case:
//!
//! * `ir::eval` equals the simulator on random texels, where the sampler object's state
//!   (wrap/mirror, linear, normalized) differs from the texture's own (clamp, point), so a
//!   fetch that ignored the sampler would differ (3 seeds);
//! * the code is hazard-free, has the SHL/BFI pair and the `.B` fetch ptxas uses;
//! * with the oracle: cuobjdump and nvdisasm print our listing, and ptxas picks the same
//!   texture instructions.

mod common;

use leafold::ir::eval::{self, Launch};
use leafold::oracle::Oracle;
use leafold::sampler::{FieldValue, SamplerInit};
use leafold::texture::{ChannelType, Shape, Texture, TextureBindings, TextureDesc};

const OUT: u64 = 0x3000_0000;
const THREADS: u32 = 64;

/// (name, instruction with D for the destination, the `.B` fetch ptxas writes).
const CASES: &[(&str, &str, &str)] = &[
    (
        "sreg_tex_2d",
        "tex.2d.v4.f32.f32 D, [%rd5, %rd6, {%f3, %f4}];",
        "TEX.B ",
    ),
    (
        "sreg_tex_a2d",
        "tex.a2d.v4.f32.f32 D, [%rd5, %rd6, {%r5, %f3, %f4, %f4}];",
        "TEX.B ",
    ),
    (
        "sreg_tex_level_2d",
        "tex.level.2d.v4.f32.f32 D, [%rd5, %rd6, {%f3, %f4}], %f5;",
        "TEX.B.LL ",
    ),
    (
        "sreg_tld4_2d",
        "tld4.g.2d.v4.f32.f32 D, [%rd5, %rd6, {%f3, %f4}];",
        "TLD4.G.B ",
    ),
    // ptxas keeps tex.1d 1D (`ra = x`), fetches 1d integer coordinates as texels and
    // samples the other shapes' integer coordinates through the sampler as floats.
    (
        "sreg_tex_1d",
        "tex.1d.v4.f32.f32 D, [%rd5, %rd6, {%f3}];",
        "TEX.B ",
    ),
    (
        "sreg_tex_1d_s32",
        "tex.1d.v4.f32.s32 D, [%rd5, %rd6, {%r6}];",
        "TLD.B.LZ ",
    ),
    (
        "sreg_tex_2d_s32",
        "tex.2d.v4.f32.s32 D, [%rd5, %rd6, {%r6, %r7}];",
        "TEX.B.LZ ",
    ),
    (
        "sreg_tex_3d_s32",
        "tex.3d.v4.f32.s32 D, [%rd5, %rd6, {%r6, %r7, %r5, %r5}];",
        "TEX.B.LZ ",
    ),
    (
        "sreg_tex_a1d_s32",
        "tex.a1d.v4.f32.s32 D, [%rd5, %rd6, {%r5, %r6}];",
        "TEX.B.LZ ",
    ),
    (
        "sreg_tex_a2d_s32",
        "tex.a2d.v4.f32.s32 D, [%rd5, %rd6, {%r5, %r6, %r7, %r7}];",
        "TEX.B.LZ ",
    ),
    // With offsets too: converted and sampled (`TEX.B.LZ.AOFFI`, the offsets 4-bit packed).
    (
        "sreg_tex_off_2d_s32",
        "tex.2d.v4.f32.s32 D, [%rd5, %rd6, {%r6, %r7}], {%r5, %r7};",
        "TEX.B.LZ.AOFFI ",
    ),
    (
        "sreg_tex_off_a2d_s32",
        "tex.a2d.v4.f32.s32 D, [%rd5, %rd6, {%r5, %r6, %r7, %r7}], {%r7, %r5};",
        "TEX.B.LZ.AOFFI ",
    ),
    // Float tex.1d with options stays 1D as through a pair (`lower::select::tex::paired1d`),
    // gradients with a reference emulated across the quad (`TEX.B.DC.NDV`).
    // The gradients are %f5 (0 to 1.26 across the threads): the low threads sample the
    // 7- and 3-texel levels, where the sampler's wrap and linear filter show (larger ones
    // reach the 1-texel level, where every sampler gives the same); %f5 is the reference
    // too, below 1 there (%f4 is above 1, where every comparison fails); with offsets, the
    // coordinate %f3 (-1 to 1.2), which gives more distinct results.
    (
        "sreg_tex_level_1d",
        "tex.level.1d.v4.f32.f32 D, [%rd5, %rd6, {%f3}], %f5;",
        "TEX.B.LL ",
    ),
    (
        "sreg_tex_level_off_dc_1d",
        "tex.level.1d.v4.f32.f32 D, [%rd5, %rd6, {%f3}], %f5, {%r5}, %f4;",
        "TEX.B.LL.AOFFI.DC ",
    ),
    (
        "sreg_tex_grad_off_1d",
        "tex.grad.1d.v4.f32.f32 D, [%rd5, %rd6, {%f3}], {%f5}, {%f5}, {%r5};",
        "TXD.B.AOFFI ",
    ),
    (
        "sreg_tex_grad_dc_1d",
        "tex.grad.1d.v4.f32.f32 D, [%rd5, %rd6, {%f3}], {%f5}, {%f5}, %f5;",
        "TEX.B.DC.NDV ",
    ),
    (
        "sreg_tex_grad_off_dc_1d",
        "tex.grad.1d.v4.f32.f32 D, [%rd5, %rd6, {%f3}], {%f5}, {%f5}, {%r5}, %f3;",
        "TEX.B.AOFFI.DC.NDV ",
    ),
];

fn ptx(name: &str, inst: &str) -> String {
    let inst = inst.replace("D,", "{%f10, %f11, %f12, %f13},");
    format!(
        ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n\n\
         .entry {name}(.param .u64 out, .param .u64 th, .param .u64 sh)\n{{\n\
         \x20 .reg .f32 %f<16>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n\
         \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
         \x20 ld.param.u64 %rd5, [th];\n  ld.param.u64 %rd6, [sh];\n\
         \x20 mov.u32 %r1, %tid.x;\n\
         \x20 cvt.rn.f32.u32 %f2, %r1;\n\
         \x20 fma.rn.f32 %f3, %f2, 0f3D0F5C29, 0fBF800000;\n\
         \x20 fma.rn.f32 %f4, %f2, 0fBCA3D70A, 0f3F99999A;\n\
         \x20 mul.f32 %f5, %f2, 0f3CA3D70A;\n\
         \x20 and.b32 %r5, %r1, 3;\n\
         \x20 xor.b32 %r6, %r1, 9;\n  shr.u32 %r7, %r1, 2;\n\
         \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n\
         \x20 {inst}\n\
         \x20 st.global.v4.f32 [%rd3], {{%f10, %f11, %f12, %f13}};\n  ret;\n}}\n"
    )
}

fn shape(name: &str) -> Shape {
    ["a2d", "a1d", "3d", "1d"]
        .into_iter()
        .find(|s| name.contains(s))
        .map_or(Shape::D2, |s| Shape::from_name(s).unwrap())
}

/// A 7×5 texture of 4 × f32 (3 layers for a2d), 3 levels, normalized coordinates, its own
/// state clamp and point; the sampler: wrap in x, mirror in y, linear (and unnormalized
/// coordinates for the integer ones, which would all wrap to 0 otherwise). 1D is 7 wide,
/// 3D 7×5×3.
fn launch(name: &str, seed: u64) -> Launch {
    let size = match shape(name) {
        Shape::D1 | Shape::A1 => [7, 1, 1],
        Shape::D3 => [7, 5, 3],
        _ => [7, 5, 1],
    };
    let mut d = TextureDesc::new(shape(name), size, ChannelType::F32, 4);
    if d.shape.is_layered() {
        d.layers = 3;
    }
    d.mip_levels = 3;
    d.sampler.normalized_coords = true;
    d.validate().unwrap();
    let mut s = SamplerInit::default();
    s.set("addr_mode_0", FieldValue::Word("wrap")).unwrap();
    s.set("addr_mode_1", FieldValue::Word("mirror")).unwrap();
    s.set("filter_mode", FieldValue::Word("linear")).unwrap();
    if name.contains("_s32") {
        s.set("force_unnormalized_coords", FieldValue::Int(1))
            .unwrap();
    }
    let mut textures = TextureBindings::new();
    // Decoys first, so neither handle is 1.
    textures.add_object(Texture::random(d.clone(), seed ^ 1));
    let th = textures.add_object(Texture::random(d, seed));
    textures
        .add_sampler_object(&SamplerInit::default())
        .unwrap();
    let sh = textures.add_sampler_object(&s).unwrap();
    let mut params = OUT.to_le_bytes().to_vec();
    params.extend_from_slice(&th.to_le_bytes());
    params.extend_from_slice(&sh.to_le_bytes());
    common::one_cta_texture_launch(THREADS, OUT, params, textures)
}

fn ours(name: &str, inst: &str) -> leafold::driver::Output {
    common::compile_sass(name, &ptx(name, inst))
}

#[test]
fn eval_equals_simulator_and_the_sampler_counts() {
    for &(name, inst, _) in CASES {
        let out = ours(name, inst);
        let module = common::ir_module(format!("{name}.ptx"), ptx(name, inst));
        let mut distinct = std::collections::BTreeSet::new();
        for seed in 0..3 {
            let l = launch(name, seed);
            let got = common::assert_eval_equals_sim(name, &module, &out, &l, OUT);
            distinct.extend(got.chunks(16).map(<[u8]>::to_vec));
            // Through the other sampler (the default one, handle 1) the results differ
            // (except for TLD's texel fetch, which reads no sampler state).
            let mut other = l.clone();
            other.params[16..24].copy_from_slice(&1u64.to_le_bytes());
            let plain = eval::run(&module, name, &other).unwrap();
            if !name.contains("1d_s32") {
                assert_ne!(plain.region(OUT), Some(&got[..]), "{name}: sampler ignored");
            }
        }
        assert!(distinct.len() > 20, "{name}: {} distinct", distinct.len());
    }
}

#[test]
fn code_is_hazard_free_and_combines_the_handles_as_ptxas() {
    for &(name, inst, want) in CASES {
        let out = ours(name, inst);
        common::assert_hazard_free_and_shows(name, &out.cubin, &out.sass, want);
        let shl = out
            .sass
            .lines()
            .any(|l| l.contains("SHL ") && l.contains("0x14"));
        let bfi = out
            .sass
            .lines()
            .any(|l| l.contains("BFI ") && l.contains("0x1400"));
        assert!(shl && bfi, "{name}: no SHL 0x14 / BFI 0x1400\n{}", out.sass);
    }
}

#[test]
fn oracle_prints_our_listing_and_ptxas_picks_the_same_instructions() {
    let Some(oracle) = Oracle::for_test("compile_sampler_reg") else {
        return;
    };
    for &(name, inst, _) in CASES {
        let out = ours(name, inst);
        common::assert_oracle_lists_ours_and_ptxas_textures(
            &oracle,
            name,
            &ptx(name, inst),
            &out.cubin,
            &out.sass,
        );
    }
}

/// Listings of the forms a combined handle changes (read when accepted: TEX.B 1D with
/// `ra = x`; I2F.F32.S32 of each integer coordinate, not the layer, then TEX.B.LZ).
#[test]
fn combined_handle_forms_listing_snapshot() {
    let mut text = String::new();
    for &(name, inst, _) in CASES {
        if ["sreg_tex_1d", "sreg_tex_a2d_s32"].contains(&name) {
            text += &ours(name, inst).sass;
        }
    }
    insta::assert_snapshot!("sampler_reg_combined_listing", text);
}

/// One listing (read when accepted: `SHL` of the sampler's word, `BFI` of the texture's
/// into it, the combined register as `TEX.B`'s handle).
#[test]
fn listing_snapshot() {
    let (name, inst, _) = CASES[0];
    insta::assert_snapshot!("sampler_reg_listing", ours(name, inst).sass);
}
