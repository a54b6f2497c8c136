//! `.texmode_independent` end to end (issue 21): module `.samplerref`s with initializers
//! and fetches that name a texture and a sampler, `tex.<shape> d, [t, s, {c}]` (1d, 2d, 3d,
//! a2d) and `tld4`, one kernel per case, plus a kernel reading one texture through two
//! samplers and two textures through one. For each:
//!
//! * `ir::eval` equals the simulator running our SASS on random texels, and the sampler
//!   matters: the same PTX with the samplers' initializers left out evaluates differently
//!   (so eval and the simulator both read the sampler's modes, the simulator from the
//!   cubin's `EIATTR_SAMPLER_INIT` records);
//! * the code is hazard-free;
//! * with the oracle: cuobjdump and nvdisasm print exactly our listing, ptxas 11.8 picks the
//!   same texture instructions, and the cubin's metadata equals ptxas's
//!   (`common::assert_same_cubin_metadata`: sections, symbols, the paired
//!   `R_CUDA_TEX_HEADER_INDEX`/`R_CUDA_SAMP_HEADER_INDEX` words, `.strtab` with
//!   `$BINDLESS$<k>$<tex>$<sampler>`, `.nv.info`) down to the sampler records' values.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;
use leafold::texture::{AddressMode, FilterMode, Shape, Texture, TextureBindings};

const OUT: u64 = 0x3000_0000;
const THREADS: u32 = 64;

/// The module's samplers: every field form ptxas takes, and one without an initializer.
const SAMPLERS: &str = "\
.global .samplerref sw = { addr_mode_0 = wrap, addr_mode_1 = mirror, addr_mode_2 = wrap, filter_mode = nearest };
.global .samplerref sm = { addr_mode_0 = mirror, addr_mode_1 = clamp_to_border, filter_mode = linear };
.global .samplerref su = { force_unnormalized_coords = 1, addr_mode_0 = clamp_to_edge, filter_mode = linear };
.global .samplerref s0;
";

struct Case {
    name: &'static str,
    /// The fetches, `D` standing for a destination vector (each added into the result).
    insts: &'static [&'static str],
    shape: Shape,
    /// The mnemonic (phase aside) ptxas 11.8 writes.
    want: &'static str,
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        Case {
            name: "samp_1d",
            insts: &["tex.1d.v4.f32.f32 D, [t, sw, {%f3}];"],
            shape: Shape::D1,
            want: "TEX ",
        },
        Case {
            name: "samp_2d",
            insts: &["tex.2d.v4.f32.f32 D, [t, sm, {%f3, %f4}];"],
            shape: Shape::D2,
            want: "TEXS ",
        },
        Case {
            name: "samp_2d_unnorm",
            insts: &["tex.2d.v4.f32.f32 D, [t, su, {%f5, %f6}];"],
            shape: Shape::D2,
            want: "TEXS ",
        },
        Case {
            name: "samp_3d",
            insts: &["tex.3d.v4.f32.f32 D, [t, sw, {%f3, %f4, %f7, %f7}];"],
            shape: Shape::D3,
            want: "TEXS ",
        },
        Case {
            name: "samp_a2d",
            insts: &["tex.a2d.v4.f32.f32 D, [t, sm, {%r5, %f3, %f4, %f4}];"],
            shape: Shape::A2,
            want: "TEXS ",
        },
        Case {
            name: "samp_tld4",
            insts: &["tld4.g.2d.v4.f32.f32 D, [t, sw, {%f3, %f4}];"],
            shape: Shape::D2,
            want: "TLD4S.G ",
        },
        Case {
            name: "samp_pairs",
            insts: &[
                "tex.2d.v4.f32.f32 D, [t, sw, {%f3, %f4}];",
                "tex.2d.v4.f32.f32 D, [t, sm, {%f3, %f4}];",
                "tex.2d.v4.f32.f32 D, [t2, sw, {%f4, %f3}];",
                "tex.2d.v4.f32.f32 D, [t, s0, {%f3, %f4}];",
            ],
            shape: Shape::D2,
            want: "TEXS ",
        },
    ];
    v.extend(paired_1d_cases());
    v.extend(paired_int_cases());
    v
}

/// Integer coordinates through a pair (%r6 = tid - 20 and %r7 = tid >> 3 run off the
/// texture both ways; the layer %r5 past its three layers): ptxas 11.8 samples them as
/// floats on 2d, 3d and a2d (`I2F.F32.S32`, `TEXS.LZ`: su's unnormalized linear filtering
/// applies) and fetches 1d and a1d texels, with `.CL` through su (`addr_mode_0 =
/// clamp_to_edge`: clamped to the edge where the initializer-less module reads zero).
fn paired_int_cases() -> Vec<Case> {
    const INTS: &str = "sub.s32 %r6, %r1, 20;\n  shr.u32 %r7, %r1, 3;\n  ";
    let case = |name, inst: &str, shape, want| Case {
        name,
        insts: Vec::leak(vec![String::leak(format!("{INTS}{inst}")) as &str]),
        shape,
        want,
    };
    vec![
        case(
            "samp_int_1d_clamp",
            "tex.1d.v4.f32.s32 D, [t, su, {%r6}];",
            Shape::D1,
            "TLD.LZ.CL ",
        ),
        case(
            "samp_int_a1d_clamp",
            "tex.a1d.v4.f32.s32 D, [t, su, {%r5, %r6}];",
            Shape::A1,
            "TLD.LZ.CL ",
        ),
        case(
            "samp_int_2d",
            "tex.2d.v4.f32.s32 D, [t, su, {%r6, %r7}];",
            Shape::D2,
            "TEXS.LZ ",
        ),
        case(
            "samp_int_3d",
            "tex.3d.v4.f32.s32 D, [t, su, {%r6, %r7, %r5, %r5}];",
            Shape::D3,
            "TEXS.LZ ",
        ),
        case(
            "samp_int_a2d",
            "tex.a2d.v4.f32.s32 D, [t, su, {%r5, %r6, %r7, %r7}];",
            Shape::A2,
            "TEXS.LZ ",
        ),
    ]
}

/// `tex.1d` with a level, gradients, offsets (%r5) or a depth reference (%f7) through a
/// pair (`lower::select::tex::paired1d`; a reference in %f4, which runs from -1 to 2.2
/// across the texels' range): ptxas 11.8 keeps them 1D (`TEX{.LL}{.AOFFI}{.DC}`,
/// `TXD{.AOFFI}`, with gradients and a reference the quad's `TEX{.AOFFI}.DC.NDV`), the
/// integer-coordinate `tex.grad` (%r6 holds %f3's bits) too.
fn paired_1d_cases() -> Vec<Case> {
    let case = |name, insts, want| Case {
        name,
        insts,
        shape: Shape::D1,
        want,
    };
    vec![
        case(
            "samp_level_1d",
            &["tex.level.1d.v4.f32.f32 D, [t, sm, {%f3}], %f4;"],
            "TEX.LL ",
        ),
        case(
            "samp_grad_1d",
            &["tex.grad.1d.v4.f32.f32 D, [t, sw, {%f3}], {%f4}, {%f7};"],
            "TXD ",
        ),
        case(
            "samp_off_1d",
            &["tex.1d.v4.f32.f32 D, [t, sw, {%f3}], {%r5};"],
            "TEX.AOFFI ",
        ),
        case(
            "samp_dc_1d",
            &["tex.1d.v4.f32.f32 D, [t, sm, {%f3}], %f4;"],
            "TEX.DC ",
        ),
        case(
            "samp_level_off_dc_1d",
            &["tex.level.1d.v4.f32.f32 D, [t, sm, {%f3}], %f7, {%r5}, %f4;"],
            "TEX.LL.AOFFI.DC ",
        ),
        case(
            "samp_grad_off_1d",
            &["tex.grad.1d.v4.f32.f32 D, [t, sm, {%f3}], {%f4}, {%f7}, {%r5};"],
            "TXD.AOFFI ",
        ),
        // Gradients with a reference: emulated across the quad (`lower::select::tex::quad`);
        // through the linear sampler, as a point-sampled comparison gives only 0s and 1s.
        case(
            "samp_grad_dc_1d",
            &["tex.grad.1d.v4.f32.f32 D, [t, sm, {%f3}], {%f7}, {%f7}, %f4;"],
            "TEX.DC.NDV ",
        ),
        case(
            "samp_grad_off_dc_1d",
            &["tex.grad.1d.v4.f32.f32 D, [t, sm, {%f3}], {%f4}, {%f7}, {%r5}, %f4;"],
            "TEX.AOFFI.DC.NDV ",
        ),
        case(
            "samp_igrad_1d",
            &["mov.b32 %r6, %f3;\n  tex.grad.1d.v4.f32.s32 D, [t, sw, {%r6}], {%f4}, {%f7};"],
            "TXD ",
        ),
    ]
}

impl Case {
    /// The module; `init: false` leaves the samplers' initializers out.
    fn ptx(&self, init: bool) -> String {
        let samplers = if init {
            SAMPLERS.to_string()
        } else {
            SAMPLERS
                .lines()
                .map(|l| {
                    l.split(" = ")
                        .next()
                        .unwrap()
                        .trim_end_matches(';')
                        .to_string()
                        + ";\n"
                })
                .collect()
        };
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
        format!(
            ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n\
             .global .texref t;\n.global .texref t2;\n{samplers}\
             .entry {name}(.param .u64 out, .param .f32 s)\n{{\n\
             \x20 .reg .f32 %f<30>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n\
             \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
             \x20 ld.param.f32 %f1, [s];\n\
             \x20 mov.u32 %r1, %tid.x;\n\
             \x20 cvt.rn.f32.u32 %f2, %r1;\n\
             \x20 fma.rn.f32 %f3, %f2, %f1, 0fC0000000;\n\
             \x20 fma.rn.f32 %f4, %f2, 0f3D4CCCCD, 0fBF800000;\n\
             \x20 fma.rn.f32 %f5, %f2, 0f3E99999A, 0fC0000000;\n\
             \x20 fma.rn.f32 %f6, %f2, 0f3E19999A, 0fBF800000;\n\
             \x20 mul.f32 %f7, %f2, 0f3C800000;\n\
             \x20 rem.u32 %r5, %r1, 5;\n\
             \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n\
             {body}\
             \x20 st.global.v4.f32 [%rd3], {{%f10, %f11, %f12, %f13}};\n  ret;\n}}\n",
            name = self.name
        )
    }

    /// A 7×5(×3) texture of 4 × f32 with normalized coordinates, point sampled and clamped
    /// (the samplers change each of these), `seed`'s texels; 3 layers for a2d.
    fn texture(&self, seed: u64) -> Texture {
        common::texture_7x5_f32x4(
            self.name,
            self.shape,
            FilterMode::Point,
            AddressMode::Clamp,
            seed,
        )
    }

    fn launch(&self, seed: u64) -> Launch {
        let mut textures = TextureBindings::new();
        textures.bind("t", self.texture(seed));
        textures.bind("t2", self.texture(seed ^ 0x55));
        let mut params = OUT.to_le_bytes().to_vec();
        params.extend_from_slice(&0.053f32.to_bits().to_le_bytes());
        common::one_cta_texture_launch(THREADS, OUT, params, textures)
    }
}

fn ours(ptx: &str, name: &str) -> leafold::driver::Output {
    let opts = Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    compile(ptx, &opts)
        .unwrap_or_else(|d| panic!("{name}:\n{ptx}\n{}", leafold::error::render_all(&d.0)))
}

#[test]
fn eval_equals_simulator_and_the_sampler_matters() {
    for case in cases() {
        let name = case.name;
        let ptx = case.ptx(true);
        let out = ours(&ptx, name);
        let module = common::ir_module(format!("{name}.ptx"), ptx.clone());
        let plain = common::ir_module(format!("{name}.ptx"), case.ptx(false));
        let mut differs = false;
        for seed in 0..3 {
            let launch = case.launch(seed);
            let want = eval::run(&module, name, &launch)
                .unwrap_or_else(|e| panic!("{name}: ir::eval: {e}"));
            let got = sim::run_cubin(&out.cubin, name, &launch)
                .unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", out.sass));
            assert_eq!(
                want.region(OUT),
                got.region(OUT),
                "{name} seed {seed}:\n{}",
                out.sass
            );
            let without = eval::run(&plain, name, &launch).unwrap();
            differs |= without.region(OUT) != want.region(OUT);
            let bytes = &got.region(OUT).unwrap()[..THREADS as usize * 16];
            let distinct: std::collections::BTreeSet<&[u8]> = bytes.chunks(16).collect();
            assert!(distinct.len() > 4, "{name}: {distinct:?}");
        }
        assert!(differs, "{name}: the samplers change nothing");
    }
}

#[test]
fn code_is_hazard_free_and_uses_ptxas_instructions() {
    for case in cases() {
        let out = ours(&case.ptx(true), case.name);
        common::assert_hazard_free_and_shows(case.name, &out.cubin, &out.sass, case.want);
    }
}

/// The sampler records of a cubin with their values (the metadata helper compares the
/// records' names only).
fn sampler_records(c: &[u8]) -> Vec<(String, leafold::sampler::SamplerInit)> {
    leafold::sampler::from_cubin(&cubin::read(c).unwrap())
}

#[test]
fn oracle_prints_our_listing_and_the_metadata_is_ptxas_s() {
    let Some(oracle) = Oracle::for_test("compile_sampler") else {
        return;
    };
    for case in cases() {
        let name = case.name;
        let ptx = case.ptx(true);
        let out = ours(&ptx, name);
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
        let theirs = common::ptxas_cached(&oracle, &ptx, "sm_50")
            .unwrap_or_else(|e| panic!("{name}: ptxas: {e}"));
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        // (Several fetches: ptxas's `.T`/`.P` phases differ from ours, a scheduling
        // matter outside the samplers; the instructions, slots and masks are compared.)
        let phase = case.insts.len() == 1;
        assert_eq!(
            common::texture_lines(&listing, phase),
            common::texture_lines(&out.sass, phase),
            "{name}: ptxas (left) vs ours (right)\n{listing}\n{}",
            out.sass
        );
        common::assert_same_cubin_metadata(&oracle, name, &out.cubin, &theirs);
        let records = sampler_records(&theirs);
        assert_eq!(records.len(), 4, "{name}: {records:?}");
        assert_eq!(sampler_records(&out.cubin), records, "{name}");
    }
}

/// Several kernels, samplers used in another order than declared, some by none: the
/// symbols (texture then sampler, in the last kernel's first-use order, then the rest in
/// declaration order) and each kernel's pair words equal ptxas's.
#[test]
fn several_kernels_metadata_is_ptxas_s() {
    let Some(oracle) = Oracle::for_test("compile_sampler") else {
        return;
    };
    let kernel = |name: &str, pairs: &[(&str, &str)]| {
        let mut s = format!(
            ".entry {name}(.param .u64 out, .param .f32 a)\n{{\n \
             .reg .f32 %f<20>; .reg .b64 %rd<4>;\n \
             ld.param.u64 %rd1, [out]; ld.param.f32 %f1, [a];\n"
        );
        for (t, smp) in pairs {
            s += &format!(
                " tex.1d.v4.f32.f32 {{%f6,%f7,%f8,%f9}}, [{t}, {smp}, {{%f1}}];\n \
                 add.f32 %f1, %f1, %f6;\n"
            );
        }
        s + " st.global.f32 [%rd1], %f1;\n ret;\n}\n"
    };
    let ptx = format!(
        ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n\
         .global .texref ta;\n.global .samplerref sa = {{ filter_mode = linear }};\n\
         .global .texref tb;\n.global .samplerref sz;\n\
         .global .samplerref sb = {{ addr_mode_2 = mirror, force_unnormalized_coords = 0 }};\n\
         {}{}",
        kernel("k1", &[("ta", "sa"), ("tb", "sa")]),
        kernel("k2", &[("tb", "sb"), ("ta", "sb"), ("tb", "sb")])
    );
    let opts = Options {
        file_name: "kernels.ptx".to_string(),
        ..Options::default()
    };
    let out = compile(&ptx, &opts).unwrap();
    let theirs = common::ptxas_cached(&oracle, &ptx, "sm_50").unwrap();
    common::assert_same_cubin_metadata(&oracle, "several kernels", &out.cubin, &theirs);
    assert_eq!(sampler_records(&out.cubin), sampler_records(&theirs));
}

/// One listing per kind of fetch (read when accepted: the pair's one slot word, 0x54 and
/// up, as a `.texref`'s would be).
#[test]
fn listings_snapshot() {
    let text = listings(&["samp_1d", "samp_tld4", "samp_pairs"]);
    insta::assert_snapshot!("sampler_listings", text);
}

/// Our listings of the named cases, each after a `// name` line.
fn listings(names: &[&str]) -> String {
    let mut text = String::new();
    for case in cases().into_iter().filter(|c| names.contains(&c.name)) {
        let out = ours(&case.ptx(true), case.name);
        text += &format!("// {}\n{}\n", case.name, out.sass);
    }
    text
}

#[test]
fn sampler_errors_point_at_the_field() {
    let bad = [
        (
            "{ filter_mode = cubic }",
            "'cubic' is not one of nearest, linear",
        ),
        ("{ border = 1 }", "'border' is not a sampler field"),
    ];
    for (init, want) in bad {
        let ptx = format!(
            ".version 7.8\n.target sm_50, texmode_independent\n.address_size 64\n\
             .global .texref t;\n.global .samplerref s = {init};\n\
             .entry k(.param .u64 out)\n{{\n .reg .f32 %f<8>; .reg .b64 %rd<2>;\n \
             ld.param.u64 %rd1, [out]; mov.f32 %f1, 0f00000000;\n \
             tex.1d.v4.f32.f32 {{%f2,%f3,%f4,%f5}}, [t, s, {{%f1}}];\n \
             st.global.f32 [%rd1], %f2;\n ret;\n}}\n"
        );
        let opts = Options {
            file_name: "bad.ptx".to_string(),
            ..Options::default()
        };
        let err = match compile(&ptx, &opts) {
            Ok(_) => panic!("{init}: accepted"),
            Err(d) => leafold::error::render_all(&d.0),
        };
        assert!(err.contains(want), "{init}: {err}");
        assert!(err.contains("bad.ptx:5:"), "{init}: {err}");
    }
}

/// `istypep` on a handle whose bits 58..63 are the thread index: bit 61, 62, 63 answer
/// `.texref`, `.samplerref`, `.surfref` (ptxas 11.8's bits). Thread `i` stores
/// `texref | samplerref << 1 | surfref << 2`, which is `(i >> 3) & 7`.
const ISTYPEP: &str = "\
.version 7.8
.target sm_50
.address_size 64
.entry ist(.param .u64 out, .param .u64 h)
{
  .reg .b64 %rd<8>; .reg .pred %p<4>; .reg .b32 %r<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [h];
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd3, %r1;
  shl.b64 %rd3, %rd3, 58;
  xor.b64 %rd2, %rd2, %rd3;
  istypep.texref %p1, %rd2;
  istypep.samplerref %p2, %rd2;
  istypep.surfref %p3, %rd2;
  selp.u32 %r2, 1, 0, %p1;
  selp.u32 %r3, 2, 0, %p2;
  selp.u32 %r4, 4, 0, %p3;
  add.u32 %r2, %r2, %r3;
  add.u32 %r2, %r2, %r4;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd1, %rd4;
  st.global.u32 [%rd5], %r2;
  ret;
}
";

#[test]
fn istypep_tests_the_handle_bits() {
    let out = ours(ISTYPEP, "ist");
    let c = cubin::read(&out.cubin).unwrap();
    let errs = check_code(&c.kernels[0].code);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);
    let module = common::ir_module("ist.ptx", ISTYPEP);
    for h in [0u64, 0x0300_0000_0000_1234] {
        let mut l = Launch::new([1, 1, 1], [THREADS, 1, 1]);
        l.params = OUT.to_le_bytes().to_vec();
        l.params.extend_from_slice(&h.to_le_bytes());
        l.global = vec![GlobalRegion {
            base: OUT,
            bytes: vec![0xcd; THREADS as usize * 4],
        }];
        let want = eval::run(&module, "ist", &l).unwrap();
        let got = sim::run_cubin(&out.cubin, "ist", &l).unwrap();
        assert_eq!(want.region(OUT), got.region(OUT), "{}", out.sass);
        let words: Vec<u32> = got.region(OUT).unwrap()[..THREADS as usize * 4]
            .chunks(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let expect: Vec<u32> = (0..THREADS).map(|i| (i >> 3) & 7).collect();
        assert_eq!(words, expect, "{}", out.sass);
    }
    // A variable's name is refused, as ptxas refuses it.
    let named = ISTYPEP
        .replace(
            ".address_size 64\n",
            ".address_size 64\n.global .texref t;\n",
        )
        .replace("istypep.texref %p1, %rd2;", "istypep.texref %p1, t;");
    let opts = Options {
        file_name: "ist.ptx".to_string(),
        ..Options::default()
    };
    let err = leafold::error::render_all(&compile(&named, &opts).err().unwrap().0);
    assert!(
        err.contains("ist.ptx:14:") && err.contains("not a variable's name"),
        "{err}"
    );
    let Some(oracle) = Oracle::for_test("compile_sampler") else {
        return;
    };
    common::assert_oracle_prints_our_listing(&oracle, "istypep", &out.cubin, &out.sass);
    // The module `.nv.info` starts with EIATTR_ISTYPEP_USED, as ptxas's.
    let theirs = common::ptxas_cached(&oracle, ISTYPEP, "sm_50").unwrap();
    let first = |c: &[u8]| {
        let text = oracle.cuobjdump(c, "-elf").unwrap();
        text.lines()
            .find(|l| l.contains("Attribute:"))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(first(&out.cubin), first(&theirs));
    assert!(first(&theirs).contains("EIATTR_ISTYPEP_USED"));
}

/// Listings of the paired 1d forms with options (read when accepted: target 1D, ra `x` (or
/// `{x, BFI off, 0xc10, RZ}` for TXD), rb `{lod, off, ref}` with the offset as it is).
#[test]
fn paired_1d_listings_snapshot() {
    let text = listings(&["samp_level_off_dc_1d", "samp_grad_off_1d", "samp_igrad_1d"]);
    insta::assert_snapshot!("sampler_paired_1d_listings", text);
}

/// Listings of integer coordinates through a pair (read when accepted: TLD.LZ.CL 1D with
/// `ra = x`; I2F.F32.S32 of x and y, not the layer, then TEXS.LZ ARRAY_2D `{layer, x}`, `y`).
#[test]
fn paired_int_listings_snapshot() {
    let text = listings(&["samp_int_1d_clamp", "samp_int_a2d"]);
    insta::assert_snapshot!("sampler_paired_int_listings", text);
}
