//! `txq` of sampler attributes (issue 21): `txq.<addr_mode_0|addr_mode_1|addr_mode_2|
//! filter_mode|force_unnormalized_coords>` of a module `.samplerref` in
//! `.texmode_independent`, a load from the driver's sampler table
//! (`leafold::tex_table::samp`). Two kernels: every attribute of four samplers (every
//! initializer form, one without an initializer), and a kernel whose queried sampler also
//! pairs with a texture (ptxas reads it from the pair's word) next to one that does not.
//! For each: `ir::eval` equals the simulator and gives the initializer's codes, the code is
//! hazard-free, and with the oracle nvdisasm prints our listing, ptxas's cubin runs to the
//! same values in the simulator, and the cubin's metadata (the `.nv.independent.
//! samplerrefDescSize` symbol, the `R_CUDA_SAMP_HEADER_INDEX` words, `.nv.constant2`'s
//! field offsets, `.nv.info`) equals ptxas's.

mod common;

use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::texture::{ChannelType, Shape, Texture, TextureBindings, TextureDesc};

const OUT: u64 = 0x3000_0000;

const HEAD: &str = "\
.version 7.8
.target sm_50, texmode_independent
.address_size 64
.global .texref t;
.global .samplerref sw = { addr_mode_0 = wrap, addr_mode_1 = mirror, addr_mode_2 = clamp_to_edge, filter_mode = nearest };
.global .samplerref sm = { addr_mode_0 = mirror, addr_mode_1 = clamp_to_border, filter_mode = linear };
.global .samplerref su = { force_unnormalized_coords = 1, addr_mode_0 = clamp_to_edge, filter_mode = linear };
.global .samplerref s0;
";

const FIELDS: [&str; 5] = [
    "addr_mode_0",
    "addr_mode_1",
    "addr_mode_2",
    "filter_mode",
    "force_unnormalized_coords",
];

/// Every attribute of every sampler, stored in (sampler, field) order.
fn all_ptx() -> String {
    let mut body = String::new();
    let mut k = 0;
    for s in ["sw", "sm", "su", "s0"] {
        for f in FIELDS {
            body += &format!(
                "  txq.{f}.b32 %r1, [{s}];\n  st.global.u32 [%rd1+{}], %r1;\n",
                4 * k
            );
            k += 1;
        }
    }
    format!(
        "{HEAD}.entry txq_samp(.param .u64 out)\n{{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n\
         \x20 ld.param.u64 %rd1, [out];\n{body}  ret;\n}}\n"
    )
}

/// A fetch through (t, sm), queries of sm (the pair's word) and sw (its own word).
fn mix_ptx() -> String {
    format!(
        "{HEAD}.entry txq_samp_mix(.param .u64 out, .param .f32 x)\n{{\n\
         \x20 .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .f32 %f<8>;\n\
         \x20 ld.param.u64 %rd1, [out];\n  ld.param.f32 %f5, [x];\n\
         \x20 txq.addr_mode_1.b32 %r1, [sm];\n\
         \x20 tex.2d.v4.f32.f32 {{%f1,%f2,%f3,%f4}}, [t, sm, {{%f5, %f5}}];\n\
         \x20 txq.filter_mode.b32 %r2, [sw];\n\
         \x20 txq.addr_mode_2.b32 %r3, [sw];\n\
         \x20 st.global.v4.f32 [%rd1], {{%f1,%f2,%f3,%f4}};\n\
         \x20 st.global.v4.u32 [%rd1+16], {{%r1,%r2,%r3,%r3}};\n  ret;\n}}\n"
    )
}

fn launch(seed: u64) -> Launch {
    let mut d = TextureDesc::new(Shape::D2, [7, 5, 1], ChannelType::F32, 4);
    d.sampler.normalized_coords = true;
    d.validate().unwrap();
    let mut textures = TextureBindings::new();
    textures.bind("t", Texture::random(d, seed));
    let mut params = OUT.to_le_bytes().to_vec();
    params.extend_from_slice(&0.3f32.to_bits().to_le_bytes());
    let mut l = Launch::new([1, 1, 1], [1, 1, 1]);
    l.params = params;
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0xcd; 128],
    }];
    l.textures = textures;
    l
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// The initializers' codes (wrap 0, mirror 1, clamp_to_edge 3, clamp_to_border 4; nearest
/// 0, linear 1), a field left out reading 0 (the model, `tex_table::samp`).
#[test]
fn eval_equals_simulator_and_gives_the_initializers() {
    let ptx = all_ptx();
    let out = common::compile_sass("txq_samp", &ptx);
    let module = common::ir_module("txq_samp.ptx", ptx.clone());
    let got = common::assert_eval_equals_sim("txq_samp", &module, &out, &launch(1), OUT);
    let want = [
        [0, 1, 3, 0, 0], // sw
        [1, 4, 0, 1, 0], // sm
        [3, 0, 0, 1, 1], // su
        [0, 0, 0, 0, 0], // s0
    ];
    assert_eq!(words(&got[..80]), want.concat(), "{}", out.sass);

    let ptx = mix_ptx();
    let out = common::compile_sass("txq_samp_mix", &ptx);
    let module = common::ir_module("txq_samp_mix.ptx", ptx.clone());
    for seed in 0..3 {
        let l = launch(seed);
        let got = common::assert_eval_equals_sim("txq_samp_mix", &module, &out, &l, OUT);
        assert_eq!(words(&got[16..32]), [4, 0, 3, 3], "{}", out.sass);
        // The fetch reads the texture through sm (linear filtering, not the texture's
        // point sampling).
        assert_ne!(words(&got[..16]), [0xcdcd_cdcd; 4]);
    }
}

#[test]
fn code_is_hazard_free_and_loads_from_the_sampler_table() {
    for (name, ptx) in [("txq_samp", all_ptx()), ("txq_samp_mix", mix_ptx())] {
        let out = common::compile_sass(name, &ptx);
        common::assert_hazard_free_and_shows(name, &out.cubin, &out.sass, "SHR.U32");
        assert!(out.sass.contains("c[0x0][0xb8]"), "{name}:\n{}", out.sass);
        assert!(out.sass.contains("LDG.E.CI"), "{name}:\n{}", out.sass);
    }
}

#[test]
fn listings_snapshot() {
    let mut text = String::new();
    for (name, ptx) in [("txq_samp", all_ptx()), ("txq_samp_mix", mix_ptx())] {
        text += &format!("// {name}\n{}\n", common::compile_sass(name, &ptx).sass);
    }
    insta::assert_snapshot!("txq_sampler_listings", text);
}

#[test]
fn refusals_name_the_operand_ptxas_wants() {
    let opts = leafold::driver::Options {
        file_name: "bad.ptx".to_string(),
        ..leafold::driver::Options::default()
    };
    for (inst, want) in [
        (
            "txq.force_unnormalized_coords.b32 %r1, [t];",
            "takes a .samplerref",
        ),
        ("txq.width.b32 %r1, [sw];", "a sampler has only"),
    ] {
        let ptx = format!(
            "{HEAD}.entry k(.param .u64 out)\n{{\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n\
             \x20 ld.param.u64 %rd1, [out];\n  {inst}\n  st.global.u32 [%rd1], %r1;\n  ret;\n}}\n"
        );
        let err = leafold::driver::compile(&ptx, &opts).err().unwrap();
        let text = leafold::error::render_all(&err.0);
        assert!(
            text.contains("bad.ptx:14:") && text.contains(want),
            "{text}"
        );
    }
}

#[test]
fn oracle_prints_our_listing_and_the_metadata_is_ptxas_s() {
    let Some(oracle) = Oracle::for_test("compile_txq_sampler") else {
        return;
    };
    for (name, ptx) in [("txq_samp", all_ptx()), ("txq_samp_mix", mix_ptx())] {
        let out = common::compile_sass(name, &ptx);
        common::assert_oracle_lists_ours_and_ptxas_textures(
            &oracle, name, &ptx, &out.cubin, &out.sass,
        );
        let theirs = common::ptxas_cached(&oracle, &ptx, "sm_50").unwrap();
        common::assert_same_cubin_metadata(&oracle, name, &out.cubin, &theirs);
        // ptxas's code reads the same table model to the same values.
        let l = launch(2);
        let a = sim::run_cubin(&out.cubin, name, &l).unwrap();
        let b = sim::run_cubin(&theirs, name, &l)
            .unwrap_or_else(|e| panic!("{name}: ptxas's cubin in the simulator: {e}"));
        assert_eq!(a.region(OUT), b.region(OUT), "{name}");
        let module = common::ir_module(format!("{name}.ptx"), ptx.clone());
        let want = eval::run(&module, name, &l).unwrap();
        assert_eq!(want.region(OUT), b.region(OUT), "{name}");
    }
}
