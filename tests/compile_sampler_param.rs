//! Samplers passed as kernel parameters, `.entry k(.., .param .samplerref s)`
//! (`.texmode_independent`, issue 21; `leafold::sampler`, "Samplers passed as kernel
//! parameters"): fetches `[t, s, {c}]` through a module `.texref` and a sampler parameter
//! (1d, 2d, a2d, tld4), sampler parameters among other parameters and beside a module
//! sampler, a kernel whose only parameter is a sampler, and kernels sharing a sampler
//! parameter's name. For each:
//!
//! * `ir::eval` equals the simulator running our SASS on random texels (3 seeds), and the
//!   texture's own state matters (a linear, wrapping texture: the results are not the
//!   texels of a point fetch, and differ between threads);
//! * the code is hazard-free;
//! * with the oracle: cuobjdump and nvdisasm print exactly our listing, ptxas 11.8 picks the
//!   same texture instructions, and the cubin's metadata equals ptxas's
//!   (`common::assert_same_cubin_metadata`: the LOCAL sampler symbols of CUDA type 11 in the
//!   first kernel's section, `KPARAM_INFO` with offset 0xffff, size 0, space 8 and the
//!   symbol as index, the pair words relocated against texture and sampler, `.strtab`).

mod common;

use leafold::ir::eval::Launch;
use leafold::oracle::Oracle;
use leafold::texture::{AddressMode, FilterMode, Shape, Texture, TextureBindings};

const OUT: u64 = 0x3000_0000;
const THREADS: u32 = 64;

struct Case {
    name: &'static str,
    /// The kernel's parameters after `.param .u64 out` (each sampler parameter takes no
    /// bytes; `a` is a `.f32`).
    params: &'static str,
    /// The fetches, `D` standing for a destination vector (each added into the result).
    insts: &'static [&'static str],
    shape: Shape,
    /// The mnemonic (phase aside) ptxas 11.8 writes.
    want: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "sparam_1d",
        params: ", .param .samplerref s",
        insts: &["tex.1d.v4.f32.f32 D, [t, s, {%f3}];"],
        shape: Shape::D1,
        want: "TEX ",
    },
    Case {
        name: "sparam_2d",
        params: ", .param .samplerref s",
        insts: &["tex.2d.v4.f32.f32 D, [t, s, {%f3, %f4}];"],
        shape: Shape::D2,
        want: "TEXS ",
    },
    Case {
        name: "sparam_a2d",
        params: ", .param .samplerref s",
        insts: &["tex.a2d.v4.f32.f32 D, [t, s, {%r5, %f3, %f4, %f4}];"],
        shape: Shape::A2,
        want: "TEXS ",
    },
    Case {
        name: "sparam_tld4",
        params: ", .param .samplerref s",
        insts: &["tld4.g.2d.v4.f32.f32 D, [t, s, {%f3, %f4}];"],
        shape: Shape::D2,
        want: "TLD4S.G ",
    },
    // Sampler parameters before, between and after the others (one unused), and a module
    // sampler beside them: the ordinals, the symbols and the pair words.
    Case {
        name: "sparam_order",
        params: ", .param .samplerref s, .param .f32 a, .param .samplerref q, \
                 .param .samplerref unused",
        insts: &[
            "tex.2d.v4.f32.f32 D, [t, s, {%f3, %f4}];",
            "tex.2d.v4.f32.f32 D, [t2, q, {%f4, %f3}];",
            "tex.2d.v4.f32.f32 D, [t, m, {%f4, %f4}];",
        ],
        shape: Shape::D2,
        want: "TEXS ",
    },
];

impl Case {
    fn ptx(&self) -> String {
        let mut body = String::new();
        for (k, inst) in self.insts.iter().enumerate() {
            body += &format!("  {}\n", inst.replace("D", "{%f20, %f21, %f22, %f23}"));
            if k == 0 {
                body += "  mov.f32 %f10, %f20; mov.f32 %f11, %f21; mov.f32 %f12, %f22; mov.f32 %f13, %f23;\n";
            } else {
                body += "  add.f32 %f10, %f10, %f20; add.f32 %f11, %f11, %f21;\n  \
                         add.f32 %f12, %f12, %f22; add.f32 %f13, %f13, %f23;\n";
            }
        }
        let scale = if self.params.contains(".f32 a") {
            "  ld.param.f32 %f1, [a];\n"
        } else {
            "  mov.f32 %f1, 0f3D591687;\n"
        };
        format!(
            ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n\
             .global .texref t;\n.global .texref t2;\n\
             .global .samplerref m = {{ filter_mode = nearest }};\n\
             .entry {name}(.param .u64 out{params})\n{{\n\
             \x20 .reg .f32 %f<30>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n\
             \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
             {scale}\
             \x20 mov.u32 %r1, %tid.x;\n\
             \x20 cvt.rn.f32.u32 %f2, %r1;\n\
             \x20 fma.rn.f32 %f3, %f2, %f1, 0fBF800000;\n\
             \x20 fma.rn.f32 %f4, %f2, 0f3D4CCCCD, 0fBF000000;\n\
             \x20 rem.u32 %r5, %r1, 3;\n\
             \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n\
             {body}\
             \x20 st.global.v4.f32 [%rd3], {{%f10, %f11, %f12, %f13}};\n  ret;\n}}\n",
            name = self.name,
            params = self.params,
        )
    }

    /// A 7×5 texture of 4 × f32 (3 layers for a2d), normalized coordinates, linear and
    /// wrapping (its own state, which a sampler parameter reads it through), `seed`'s texels.
    fn texture(&self, seed: u64) -> Texture {
        common::texture_7x5_f32x4(
            self.name,
            self.shape,
            FilterMode::Linear,
            AddressMode::Wrap,
            seed,
        )
    }

    fn launch(&self, seed: u64) -> Launch {
        let mut textures = TextureBindings::new();
        textures.bind("t", self.texture(seed));
        textures.bind("t2", self.texture(seed ^ 0x55));
        let mut params = OUT.to_le_bytes().to_vec();
        if self.params.contains(".f32 a") {
            params.extend_from_slice(&0.053f32.to_bits().to_le_bytes());
        }
        common::one_cta_texture_launch(THREADS, OUT, params, textures)
    }
}

#[test]
fn eval_equals_simulator() {
    for case in CASES {
        let name = case.name;
        let ptx = case.ptx();
        let out = common::compile_sass(name, &ptx);
        let module = common::ir_module(format!("{name}.ptx"), ptx.clone());
        for seed in 0..3 {
            let bytes =
                common::assert_eval_equals_sim(name, &module, &out, &case.launch(seed), OUT);
            let bytes = &bytes[..THREADS as usize * 16];
            let distinct: std::collections::BTreeSet<&[u8]> = bytes.chunks(16).collect();
            assert!(distinct.len() > 8, "{name}: {distinct:?}");
        }
    }
}

#[test]
fn code_is_hazard_free_and_uses_ptxas_instructions() {
    for case in CASES {
        let out = common::compile_sass(case.name, &case.ptx());
        common::assert_hazard_free_and_shows(case.name, &out.cubin, &out.sass, case.want);
    }
}

#[test]
fn sampler_parameters_take_no_bytes() {
    let case = CASES.iter().find(|c| c.name == "sparam_order").unwrap();
    let out = common::compile_sass(case.name, &case.ptx());
    let c = leafold::cubin::read(&out.cubin).unwrap();
    let k = &c.kernels[0];
    // out, s, a, q, unused: a follows out at 8, the samplers have offset 0xffff, size 0 and
    // their LOCAL symbols (CUDA type 11) as index.
    let mut params: Vec<_> = k
        .params
        .iter()
        .map(|p| (p.ordinal, p.offset, p.size))
        .collect();
    params.sort();
    assert_eq!(
        params,
        [
            (0, 0, 8),
            (1, 0xffff, 0),
            (2, 8, 4),
            (3, 0xffff, 0),
            (4, 0xffff, 0)
        ]
    );
    for p in k.params.iter().filter(|p| p.offset == 0xffff) {
        let sym = &c.symbols[p.info.index as usize];
        assert_eq!(
            sym.info,
            leafold::sampler::SAMPLER_PARAM_SYMBOL_INFO,
            "{}",
            sym.name
        );
        assert_eq!(p.info.space(), 8);
    }
}

#[test]
fn oracle_prints_our_listing_and_the_metadata_is_ptxas_s() {
    let Some(oracle) = Oracle::for_test("compile_sampler_param") else {
        return;
    };
    for case in CASES {
        let name = case.name;
        let ptx = case.ptx();
        let out = common::compile_sass(name, &ptx);
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
        let theirs = common::ptxas_cached(&oracle, &ptx, "sm_50")
            .unwrap_or_else(|e| panic!("{name}: ptxas: {e}"));
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        let phase = case.insts.len() == 1;
        assert_eq!(
            common::texture_lines(&listing, phase),
            common::texture_lines(&out.sass, phase),
            "{name}: ptxas (left) vs ours (right)\n{listing}\n{}",
            out.sass
        );
        common::assert_same_cubin_metadata(&oracle, name, &out.cubin, &theirs);
    }
}

/// Kernels sharing a sampler parameter's name (at the same ordinal: one LOCAL symbol, in
/// the section of the kernel ptxas writes first, the last of the file) and a kernel whose
/// only parameter is a sampler (PARAM_CBANK of size 0, no CBANK_PARAM_SIZE).
#[test]
fn several_kernels_metadata_is_ptxas_s() {
    let Some(oracle) = Oracle::for_test("compile_sampler_param") else {
        return;
    };
    let kernel = |name: &str, params: &str, samp: &str| {
        format!(
            ".entry {name}({params})\n{{\n .reg .f32 %f<20>; .reg .b64 %rd<4>;\n \
             mov.u64 %rd1, 4096; mov.f32 %f1, 0f3F000000;\n \
             tex.1d.v4.f32.f32 {{%f6,%f7,%f8,%f9}}, [t, {samp}, {{%f1}}];\n \
             st.global.f32 [%rd1], %f6;\n ret;\n}}\n"
        )
    };
    let ptx = format!(
        ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n\
         .global .texref t;\n{}{}{}",
        kernel("k1", ".param .u64 out, .param .samplerref s", "s"),
        kernel("only", ".param .samplerref r", "r"),
        kernel(
            "k2",
            ".param .u64 out, .param .samplerref s, .param .samplerref q",
            "q"
        ),
    );
    let out = common::compile_sass("kernels", &ptx);
    let theirs = common::ptxas_cached(&oracle, &ptx, "sm_50").unwrap();
    common::assert_same_cubin_metadata(&oracle, "several kernels", &out.cubin, &theirs);
}

/// One listing (read when accepted: the pair words after the parameters, 0x148 and up, as
/// with module samplers).
#[test]
fn listings_snapshot() {
    let case = CASES.iter().find(|c| c.name == "sparam_order").unwrap();
    let out = common::compile_sass(case.name, &case.ptx());
    insta::assert_snapshot!("sampler_param_listing", out.sass);
}
