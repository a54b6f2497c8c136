//! Textures end to end (issue 21, the texture part): one kernel per `tex` shape the
//! compiler lowers (1d, 2d, 3d, a1d, a2d; float and integer coordinates; f32, s32 and u32
//! results; a bound `.texref`, a texture object passed as a `.u64` parameter and one loaded
//! from memory, which takes the `.B` forms) and per
//! `txq` size query (`txq.level` too). For each:
//!
//! * `ir::eval` (the PTX meaning, through the texture model) equals the simulator running
//!   our SASS, on random texels and coordinates that run off the texture's edges;
//! * the code is hazard-free;
//! * with the oracle: cuobjdump and nvdisasm print exactly our listing; ptxas 11.8 picks the
//!   same texture instructions for the same PTX (mnemonic with its `.T`/`.P` phase, slot,
//!   target and component mask; registers aside); and our cubin carries the texture metadata
//!   ptxas's does (the `.texref` symbols, each kernel's `R_CUDA_TEX_HEADER_INDEX` words of
//!   `.nv.constant0`, its size, `EIATTR_BINDLESS_TEXTURE_BANK`).

mod common;

use leafold::cubin::{self, Attribute, CubinSpec};
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;
use leafold::texture::{
    AddressMode, ChannelType, FilterMode, ReadMode, Shape, Texture, TextureBindings, TextureDesc,
};

const OUT: u64 = 0x3000_0000;
const THREADS: u32 = 64;

/// One kernel: `tex.<shape>.v4.<result>.<coords>` (or a `txq`) on texture `t` or object `h`.
#[derive(Clone, Copy, Debug)]
struct Case {
    shape: &'static str,
    result: &'static str,
    coords: &'static str,
    object: bool,
    /// The texture object is loaded from memory (a register, not a parameter: the `.B`
    /// forms).
    reg: bool,
    /// `Some(attribute)`: a `txq.<attribute>.b32` instead of a fetch.
    txq: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for shape in ["1d", "2d", "3d", "a1d", "a2d"] {
        for (result, coords) in [
            ("f32", "f32"),
            ("u32", "f32"),
            ("f32", "s32"),
            ("s32", "s32"),
        ] {
            for (object, reg) in [(false, false), (true, false), (true, true)] {
                v.push(Case {
                    shape,
                    result,
                    coords,
                    object,
                    reg,
                    txq: None,
                });
            }
        }
    }
    for q in [
        "width",
        "height",
        "depth",
        "level.width",
        "level.height",
        "level.depth",
    ] {
        for (object, reg) in [(false, false), (true, false), (true, true)] {
            v.push(Case {
                shape: "3d",
                result: "u32",
                coords: "s32",
                object,
                reg,
                txq: Some(q),
            });
        }
    }
    v
}

impl Case {
    fn name(&self) -> String {
        let t = match (self.object, self.reg) {
            (false, _) => "ref",
            (true, false) => "obj",
            (true, true) => "objreg",
        };
        match self.txq {
            Some(q) => format!("txq_{}_{t}", q.replace('.', "_")),
            None => format!("tex_{}_{}_{}_{t}", self.shape, self.result, self.coords),
        }
    }

    /// The coordinate registers, from the thread index (%r1) and a float scale (%f1):
    /// floats `tid * s - 2`, `tid * 0.3 - 1`, ...; integers `(tid ^ 37) - 40`, `tid / 3`, `tid & 3`;
    /// the layer of `a1d`/`a2d` is `tid % 5` (past the texture's three layers too).
    fn coords_ptx(&self) -> (String, String) {
        let mut body = String::new();
        body += "  cvt.rn.f32.u32 %f2, %r1;\n";
        body += "  fma.rn.f32 %f3, %f2, %f1, 0fC0000000;\n";
        body += "  fma.rn.f32 %f4, %f2, 0f3E99999A, 0fBF800000;\n";
        body += "  fma.rn.f32 %f5, %f2, 0f3E000000, 0fBF000000;\n";
        // (Not `tid - 4`: ptxas folds a constant added to an integer coordinate into the
        // instruction, TLDS.LZ.AOFFI, which leafold does not do.)
        body += "  xor.b32 %r2, %r1, 37;\n";
        body += "  add.s32 %r2, %r2, -40;\n";
        body += "  div.u32 %r3, %r1, 3;\n";
        body += "  and.b32 %r4, %r1, 3;\n";
        body += "  rem.u32 %r5, %r1, 5;\n";
        let f = self.coords == "f32";
        let c = |k: usize| -> &str {
            match (f, k) {
                (true, 0) => "%f3",
                (true, 1) => "%f4",
                (true, _) => "%f5",
                (false, 0) => "%r2",
                (false, 1) => "%r3",
                (false, _) => "%r4",
            }
        };
        let list = match self.shape {
            "1d" => c(0).to_string(),
            "2d" => format!("{}, {}", c(0), c(1)),
            "3d" => format!("{}, {}, {}, {}", c(0), c(1), c(2), c(2)),
            "a1d" => format!("%r5, {}", c(0)),
            _ => format!("%r5, {}, {}, {}", c(0), c(1), c(1)),
        };
        (body, format!("{{{list}}}"))
    }

    fn ptx(&self) -> String {
        let name = self.name();
        let t = if self.object { "%rd5" } else { "t" };
        let (coord_body, list) = self.coords_ptx();
        let (dty, regs) = match self.result {
            "f32" => ("f32", "{%f10, %f11, %f12, %f13}"),
            _ => ("u32", "{%r10, %r11, %r12, %r13}"),
        };
        let op = match self.txq {
            // `txq.level`: level `tid & 3` (of three; the fourth is past the last).
            Some(q) if q.starts_with("level.") => {
                format!("  txq.{q}.b32 %r10, [{t}], %r4;\n  st.global.u32 [%rd3], %r10;\n")
            }
            Some(q) => format!("  txq.{q}.b32 %r10, [{t}];\n  st.global.u32 [%rd3], %r10;\n"),
            None => format!(
                "  tex.{}.v4.{}.{} {regs}, [{t}, {list}];\n  st.global.v4.{dty} [%rd3], {regs};\n",
                self.shape, self.result, self.coords
            ),
        };
        // A texture object in a register: loaded from past the threads' words.
        let handle = if self.reg {
            format!("ld.global.u64 %rd5, [%rd1+{}]", THREADS * 16)
        } else {
            "ld.param.u64 %rd5, [h]".to_string()
        };
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n\n.global .texref t;\n\n\
             .visible .entry {name}(.param .u64 out, .param .f32 s, .param .u64 h)\n{{\n\
             \x20 .reg .f32 %f<16>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n\
             \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
             \x20 ld.param.f32 %f1, [s];\n  {handle};\n\
             \x20 mov.u32 %r1, %tid.x;\n{coord_body}\
             \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n{op}  ret;\n}}\n"
        )
    }

    /// A texture of the case's shape: 4 × f32 with linear filtering for float results (2 ×
    /// s16 read as normalized floats for `u32` results of float coordinates, whose words are
    /// then f32 bits too: the texture decides, not the PTX type), 4 × u8 / 1 × s32 for
    /// integer coordinates.
    fn texture(&self, seed: u64) -> Texture {
        let shape = match self.shape {
            "1d" => Shape::D1,
            "2d" => Shape::D2,
            "3d" => Shape::D3,
            "a1d" => Shape::A1,
            _ => Shape::A2,
        };
        let (ty, ch) = match (self.result, self.coords) {
            ("f32", "f32") => (ChannelType::F32, 4),
            (_, "f32") => (ChannelType::S16, 2),
            ("f32", _) => (ChannelType::U8, 4),
            _ => (ChannelType::S32, 1),
        };
        let mut d = TextureDesc::new(shape, [7, 5, 3], ty, ch);
        if matches!(shape, Shape::A1 | Shape::A2) {
            d.layers = 3;
        }
        if self.txq.is_some_and(|q| q.starts_with("level.")) {
            d.mip_levels = 3;
        }
        if self.coords == "f32" {
            d.sampler.filter = FilterMode::Linear;
            d.sampler.address = [AddressMode::Clamp, AddressMode::Border, AddressMode::Clamp];
            if ty == ChannelType::S16 {
                d.read_mode = ReadMode::NormalizedFloat;
            }
        }
        d.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", self.name()));
        Texture::random(d, seed)
    }

    fn launch(&self, seed: u64) -> Launch {
        let mut textures = TextureBindings::new();
        let tex = self.texture(seed);
        let handle = if self.object {
            // A decoy first, so the handle is not 1.
            textures.add_object(self.texture(seed ^ 1));
            textures.add_object(tex)
        } else {
            textures.bind("t", tex);
            0x77
        };
        let mut params = OUT.to_le_bytes().to_vec();
        params.extend_from_slice(&0.37f32.to_bits().to_le_bytes());
        params.extend_from_slice(&[0; 4]);
        params.extend_from_slice(&handle.to_le_bytes());
        let mut l = Launch::new([1, 1, 1], [THREADS, 1, 1]);
        l.params = params;
        let mut bytes = vec![0xcd; THREADS as usize * 16];
        bytes.extend_from_slice(&handle.to_le_bytes());
        l.global = vec![GlobalRegion { base: OUT, bytes }];
        l.textures = textures;
        l
    }
}

fn opts(name: &str) -> Options {
    Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    }
}

fn ours(case: &Case) -> leafold::driver::Output {
    compile(&case.ptx(), &opts(&case.name())).unwrap_or_else(|d| {
        panic!(
            "{}:\n{}\n{}",
            case.name(),
            case.ptx(),
            leafold::error::render_all(&d.0)
        )
    })
}

#[test]
fn eval_equals_simulator_on_random_texels() {
    for case in cases() {
        let name = case.name();
        let out = ours(&case);
        let module = common::ir_module(format!("{name}.ptx"), case.ptx());
        for seed in 0..3 {
            let launch = case.launch(seed);
            let want = eval::run(&module, &name, &launch)
                .unwrap_or_else(|e| panic!("{name}: ir::eval: {e}"));
            let got = sim::run_cubin(&out.cubin, &name, &launch)
                .unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", out.sass));
            assert_eq!(
                want.region(OUT),
                got.region(OUT),
                "{name} seed {seed}:\n{}",
                out.sass
            );
            // Not vacuous: the kernel wrote every thread's words.
            let bytes = &got.region(OUT).unwrap()[..THREADS as usize * 16];
            let written = if case.txq.is_some() { 4 } else { 16 };
            assert!(
                bytes
                    .chunks(16)
                    .any(|c| c[..written] != [0xcd; 16][..written]),
                "{name}: nothing written"
            );
        }
    }
}

#[test]
fn a_texture_the_launch_does_not_bind_is_an_error_on_both_sides() {
    let case = cases()[0];
    let name = case.name();
    let out = ours(&case);
    let module = common::ir_module(format!("{name}.ptx"), case.ptx());
    let mut launch = case.launch(0);
    launch.textures = TextureBindings::new();
    let e = eval::run(&module, &name, &launch).unwrap_err().to_string();
    assert!(e.contains("'t' is not bound"), "{e}");
    let e = sim::run_cubin(&out.cubin, &name, &launch)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'t' is not bound"), "{e}");
}

#[test]
fn code_is_hazard_free_and_uses_the_short_forms() {
    for case in cases() {
        let out = ours(&case);
        let c = cubin::read(&out.cubin).unwrap();
        let errs = check_code(&c.kernels[0].code);
        assert!(errs.is_empty(), "{}: {errs:#?}\n{}", case.name(), out.sass);
        let want = match (case.txq, case.shape, case.coords) {
            (Some(_), _, _) if case.reg => "TXQ.B ",
            (Some(_), _, _) => "TXQ ",
            (None, _, "f32") if case.reg => "TEX.B ",
            (None, _, _) if case.reg => "TLD.B.LZ ",
            (None, "a1d", "f32") => "TEX ",
            (None, "a1d", _) => "TLD.LZ ",
            (None, _, "f32") => "TEXS ",
            (None, _, _) => "TLDS.LZ ",
        };
        // (The `.T`/`.P` phase aside: `tex_phase.rs` checks it.)
        let sass = out.sass.replace(".T ", " ").replace(".P ", " ");
        assert!(
            sass.contains(want),
            "{}: no {want}\n{}",
            case.name(),
            out.sass
        );
    }
}

#[test]
fn unsupported_shapes_get_a_diagnostic() {
    // Cube maps and their gradients are lowered (tests/compile_tex2.rs), not with offsets
    // (ptxas 11.8: "Illegal modifier '.cube' for instruction 'tex.grad'").
    for (shape, coords) in [
        (
            "grad.cube",
            "{%f1, %f1, %f1, %f1}], {%f1, %f1, %f1, %f1}, {%f1, %f1, %f1, %f1}, {%r1, %r1}",
        ),
        (
            "grad.acube",
            "{%r1, %f1, %f1, %f1}], {%f1, %f1, %f1, %f1}, {%f1, %f1, %f1, %f1}, {%r1, %r1}",
        ),
    ] {
        let ptx = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.global .texref t;\n\
             .visible .entry k(.param .u64 out)\n{{\n .reg .f32 %f<8>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n\
             \x20mov.f32 %f1, 0f3F000000;\n mov.u32 %r1, 1;\n\
             \x20tex.{shape}.v4.f32.f32 {{%f2, %f3, %f4, %f5}}, [t, {coords};\n\
             \x20ld.param.u64 %rd1, [out];\n st.global.f32 [%rd1], %f2;\n ret;\n}}\n"
        );
        let e = compile(&ptx, &opts("bad")).unwrap_err();
        let text = leafold::error::render_all(&e.0);
        let form = format!("tex.{} with offsets", &shape[5..]);
        assert!(text.contains(&form), "{text}");
        assert!(text.contains("bad.ptx:12:"), "{text}");
    }
}

#[test]
fn oracle_prints_our_listing_and_ptxas_picks_the_same_instructions() {
    let Some(oracle) = Oracle::for_test("compile_tex") else {
        return;
    };
    for case in cases() {
        let name = case.name();
        let out = ours(&case);
        common::assert_oracle_prints_our_listing(&oracle, &name, &out.cubin, &out.sass);
        let theirs = common::ptxas_cached(&oracle, &case.ptx(), "sm_50")
            .unwrap_or_else(|e| panic!("{name}: ptxas: {e}"));
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        assert_eq!(
            common::texture_lines(&listing, true),
            common::texture_lines(&out.sass, true),
            "{name}: ptxas (left) vs ours (right)\n{listing}\n{}",
            out.sass
        );
    }
}

/// The texture metadata of a cubin: the texture symbols (name, st_info), and per kernel its
/// `R_CUDA_TEX_HEADER_INDEX` words, `.nv.constant0` size and whether it has
/// `EIATTR_BINDLESS_TEXTURE_BANK`.
type Meta = (
    Vec<(String, u8)>,
    Vec<(String, Vec<(u64, String, u32)>, u64, bool)>,
);

fn texture_meta(bytes: &[u8]) -> Meta {
    let c = cubin::read(bytes).unwrap();
    let spec = CubinSpec::from_cubin(&c);
    let mut handles = spec.handles.clone();
    handles.sort();
    let mut kernels: Vec<_> = c
        .kernels
        .iter()
        .map(|k| {
            let ks = spec.kernels.iter().find(|s| s.name == k.name).unwrap();
            let relocs = ks
                .const0_relocs
                .iter()
                .map(|r| (r.offset, r.symbol.clone(), r.rtype))
                .collect();
            let bank = k.info.iter().any(
                |a| matches!(a, Attribute::Other { code: 0x15, payload, .. } if payload == &[0, 0]),
            );
            (k.name.clone(), relocs, k.constant0_size.unwrap_or(0), bank)
        })
        .collect();
    kernels.sort();
    (handles, kernels)
}

#[test]
fn cubin_texture_metadata_matches_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_tex") else {
        return;
    };
    // Several textures, used in a different order than declared, one unused, a parameter
    // ending off a word boundary, two kernels: slots follow first use, after the
    // parameters' next word.
    let ptx = r#".version 7.8
.target sm_50
.address_size 64
.global .texref tA;
.global .texref tB;
.global .texref tC;
.global .texref tD;
.visible .entry k(.param .u64 out, .param .f32 x, .param .u8 b)
{
 .reg .f32 %f<16>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.f32 %f1, [x];
 tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [tC, {%f1, %f1}];
 tex.1d.v4.f32.f32 {%f7,%f8,%f9,%f10}, [tA, {%f1}];
 txq.width.b32 %r1, [tC];
 add.f32 %f3, %f3, %f7;
 st.global.f32 [%rd2], %f3;
 st.global.u32 [%rd2+4], %r1;
 ret;
}
.visible .entry k2(.param .u64 out, .param .f32 x, .param .u64 h)
{
 .reg .f32 %f<16>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.f32 %f1, [x]; ld.param.u64 %rd3, [h];
 tex.1d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [tD, {%f1}];
 tex.1d.v4.f32.f32 {%f7,%f8,%f9,%f10}, [%rd3, {%f1}];
 add.f32 %f3, %f3, %f7;
 st.global.f32 [%rd2], %f3;
 ret;
}
.visible .entry k3(.param .u64 out, .param .u64 h)
{
 .reg .f32 %f<16>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
 ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.u64 %rd3, [h];
 tex.2d.v4.s32.s32 {%r1,%r2,%r3,%r4}, [%rd3, {%r1, %r1}];
 st.global.u32 [%rd2], %r1;
 ret;
}
"#;
    let out = compile(ptx, &opts("meta"))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let theirs = common::ptxas_cached(&oracle, ptx, "sm_50").unwrap();
    let (ours_meta, theirs_meta) = (texture_meta(&out.cubin), texture_meta(&theirs));
    assert_eq!(ours_meta, theirs_meta, "ours (left) vs ptxas (right)");
    // Not vacuous: both kernels with bound textures have their words.
    assert_eq!(ours_meta.0.len(), 4);
    assert!(ours_meta.1.iter().filter(|k| !k.1.is_empty()).count() == 2);
    common::assert_cuobjdump_lists_unordered(&oracle, "meta", &out.cubin, &out.sass);
}

/// The listings of four shapes, one per form family (read when accepted: the coordinate
/// pairs `{x,y}` / `{layer,x}` / `{layer,0}`+`{x,y}`, the `I2I.U16.U32.SAT` layer, the
/// `TEX.B` handle in rb, one aligned quad for four results).
#[test]
fn listings_snapshot() {
    let mut text = String::new();
    for name in [
        "tex_3d_f32_f32_ref",
        "tex_a2d_s32_s32_obj",
        "tex_a1d_f32_f32_ref",
        "tex_2d_f32_f32_objreg",
    ] {
        let case = cases().into_iter().find(|c| c.name() == name).unwrap();
        let out = ours(&case);
        text += &out.sass;
    }
    insta::assert_snapshot!("tex_listings", text);
}

/// `verify` binds the textures a kernel reads (random texels, texture-object handles in
/// their parameters) for both sides: the corpus's texture files that run quickly match, a
/// bound `.texref` (ZLUDA's 2D read, cuda-samples' Sobel filter) and a texture object
/// passed as a parameter (ZLUDA's 3D read, simplePitchLinearTexture).
#[test]
fn verify_matches_on_corpus_texture_files() {
    let root = env!("CARGO_MANIFEST_DIR");
    for file in [
        "tests/data/corpus/ptx/vosen__ZLUDA__zluda_src_impl_test_ptx_tex_read_2d_float.ptx",
        "tests/data/corpus/ptx/vosen__ZLUDA__zluda_src_impl_test_ptx_tex_read_3d_float_texobj.ptx",
        "tests/data/corpus-nvcc/ptx/cuda-samples__Samples_5_Domain_Specific_SobelFilter_SobelFilter_kernels.ptx",
        "tests/data/corpus-nvcc/ptx/cuda-samples__Samples_0_Introduction_simplePitchLinearTexture_simplePitchLinearTexture.ptx",
    ] {
        let ptx = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        assert_verify_matches(file, &ptx, None);
    }
}

/// `verify` of `ptx` (named `file`) finds every kernel matching, on our code and, given
/// ptxas's cubin, on ptxas's; returns how many kernels it ran.
fn assert_verify_matches(file: &str, ptx: &str, ptxas_cubin: Option<Vec<u8>>) -> usize {
    let mut opts = leafold::verify::VerifyOptions::default();
    opts.compile.file_name = file.to_string();
    opts.ptxas_cubin = ptxas_cubin;
    let verdicts = leafold::verify::verify_file(ptx, None, &opts)
        .unwrap_or_else(|d| panic!("{file}: {}", leafold::error::render_all(&d.0)));
    for v in &verdicts {
        assert!(
            matches!(v.outcome, leafold::verify::Outcome::Match { .. }),
            "{file}: {v}"
        );
    }
    verdicts.len()
}

/// `verify` binds a texture object the kernel loads from a buffer (`ld.global.u64 h,
/// [out+1024]`, the `objreg` cases): the handle it stores in that word names a described
/// texture for the reference and the simulator alike, on our code and (with the oracle) on
/// ptxas's. Before, such kernels could not run ("no texture object has handle ...").
#[test]
fn verify_binds_texture_objects_loaded_from_memory() {
    let oracle = Oracle::for_test("compile_tex");
    let picked: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.reg && (c.txq.is_some() || c.result == "f32"))
        .step_by(3)
        .collect();
    assert!(picked.len() >= 4);
    for case in picked {
        let name = case.name();
        let ptx = case.ptx();
        let theirs = oracle
            .as_ref()
            .map(|o| common::ptxas_cached(o, &ptx, "sm_50").unwrap());
        assert_eq!(
            assert_verify_matches(&format!("{name}.ptx"), &ptx, theirs),
            1,
            "{name}"
        );
    }
}

/// The whole cubin but the code equals ptxas's (`common::assert_same_cubin_metadata`:
/// sections, symbols in order, relocations, `.strtab`, `.nv.info`) for modules whose
/// `.texref`s are used in another order than declared, by several kernels, some not at all,
/// and mixed with `.surfref`s in one kernel. The facts this pins (ptxas 11.8): the reference
/// symbols follow the first kernel's symbol (ptxas compiles the last kernel first), those
/// it uses in the order it first uses them, textures and surfaces together, then the others
/// in declaration order; a kernel's texture words come before its surface words; the names
/// `$BINDLESS$<kernel>$<ref>` are interned per slot. Before, the textures came after every
/// kernel in declaration order, and a kernel using both kinds put its first surface in the
/// word of its first texture.
#[test]
fn cubin_reference_symbols_and_slots_match_ptxas() {
    let Some(oracle) = Oracle::for_test("compile_tex") else {
        return;
    };
    let kernel = |name: &str, refs: &[&str]| {
        let mut s = format!(
            ".visible .entry {name}(.param .u64 out, .param .f32 a)\n{{\n \
             .reg .f32 %f<20>; .reg .b64 %rd<4>; .reg .b32 %r<4>;\n \
             ld.param.u64 %rd1, [out]; ld.param.f32 %f1, [a]; mov.u32 %r1, 3;\n"
        );
        for r in refs {
            if r.starts_with('s') {
                s += &format!(" sust.b.1d.b32.trap [{r}, {{%r1}}], {{%r1}};\n");
            } else {
                s += &format!(
                    " tex.1d.v4.f32.f32 {{%f6,%f7,%f8,%f9}}, [{r}, {{%f1}}];\n \
                     add.f32 %f1, %f1, %f6;\n"
                );
            }
        }
        s + " st.global.f32 [%rd1], %f1;\n ret;\n}\n"
    };
    let module = |decls: &[&str], kernels: &[String]| {
        let mut s = String::from(".version 7.8\n.target sm_50\n.address_size 64\n");
        for d in decls {
            let space = if d.starts_with('s') {
                "surfref"
            } else {
                "texref"
            };
            s += &format!(".global .{space} {d};\n");
        }
        s + &kernels.concat()
    };
    let cases = [
        (
            "two kernels",
            module(
                &["ta", "tb", "tc"],
                &[kernel("k", &["tc", "ta"]), kernel("k2", &["tb", "tc"])],
            ),
        ),
        (
            "an unused texture and a kernel without any",
            module(
                &["ta", "tz", "tb", "tc"],
                &[
                    kernel("ka", &["tc", "tb"]),
                    kernel("kb", &[]),
                    kernel("kc", &["ta", "tb"]),
                ],
            ),
        ),
        (
            "the last kernel uses an unused one of the others",
            module(
                &["ta", "tz", "tb", "tc"],
                &[
                    kernel("ka", &["tc", "tb"]),
                    kernel("kc", &["tb"]),
                    kernel("kb", &["tz"]),
                ],
            ),
        ),
        (
            "last kernel without textures",
            module(
                &["ta", "tz", "tb", "tc"],
                &[
                    kernel("ka", &["tc", "tb"]),
                    kernel("kc", &["tb", "ta"]),
                    kernel("kb", &[]),
                ],
            ),
        ),
        (
            "textures and surfaces",
            module(
                &["ta", "sa", "tb", "sb", "sc"],
                &[kernel("ka", &["sc", "tb", "sa", "ta"])],
            ),
        ),
        (
            "unused ones of both kinds",
            module(&["sz", "ta", "sa", "tb"], &[kernel("ka", &["tb"])]),
        ),
    ];
    for (what, ptx) in &cases {
        let out = compile(ptx, &opts("refs"))
            .unwrap_or_else(|d| panic!("{what}: {}", leafold::error::render_all(&d.0)));
        let theirs = common::ptxas_cached(&oracle, ptx, "sm_50").unwrap();
        common::assert_same_cubin_metadata(&oracle, what, &out.cubin, &theirs);
    }
}

/// `TEXS ... 3D` reads x and y as one aligned pair, which the lowering fills with one copy
/// per word (`select::tex`'s `tex_vec`). Where the coordinates are needed only by the
/// fetch, the register allocation puts each where its word of the pair is
/// (`machinst::assign`'s pack copies), so the `FFMA`s write the pair and no `MOV` builds
/// it (ptxas's code has none either; volumeFiltering's `d_render` had two per fetch).
/// With y needed after the fetch as well, y's copy must stay (x's could go, but the
/// colouring does not find that placement yet: 2 copies, as before). Both verify
/// (eval = simulator). Only the copies before the fetch count: the store's quad is built
/// by its own copies once its first word is changed.
#[test]
fn texs_coordinate_pair_is_written_in_place() {
    let ptx = |after: &str| {
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.global .texref t3;\n\
             .entry k3(.param .u64 out, .param .f32 a)\n{{\n\
             \x20 .reg .f32 %f<16>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n\
             \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
             \x20 ld.param.f32 %f1, [a];\n  mov.u32 %r1, %tid.x;\n  cvt.rn.f32.u32 %f2, %r1;\n\
             \x20 fma.rn.f32 %f3, %f2, %f1, 0f3F000000;\n\
             \x20 fma.rn.f32 %f4, %f2, %f2, 0f3F000000;\n\
             \x20 fma.rn.f32 %f5, %f3, %f1, 0f3F000000;\n\
             \x20 tex.3d.v4.f32.f32 {{%f10, %f11, %f12, %f13}}, [t3, {{%f3, %f4, %f5, %f5}}];\n\
             \x20 {after}\n\
             \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n\
             \x20 st.global.v4.f32 [%rd3], {{%f10, %f11, %f12, %f13}};\n  ret;\n}}\n"
        )
    };
    let moves = |sass: &str| {
        sass.lines()
            .take_while(|l| !l.contains("TEXS"))
            .filter(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                t.iter()
                    .position(|w| *w == "MOV")
                    .is_some_and(|k| t.get(k + 2).is_some_and(|s| s.starts_with('R')))
            })
            .count()
    };
    let sass = common::compile_and_verify("k3.ptx", "pair in place", &ptx(""));
    assert!(sass.contains("TEXS"), "{sass}");
    assert_eq!(moves(&sass), 0, "{sass}");
    let sass =
        common::compile_and_verify("k3.ptx", "y needed after", &ptx("add.f32 %f10, %f10, %f4;"));
    assert!((1..=2).contains(&moves(&sass)), "{sass}");
}
