//! Multisample textures end to end (issue 21): `tex.2dms` and `tex.a2dms` with f32, s32 and
//! u32 results, bound by a `.texref`, a texture object parameter or one loaded from memory
//! (the `.B` form), all four or one of the results read; and the independent-mode rule
//! that every fetch names a sampler. One kernel per case; for each:
//!
//! * `ir::eval` (the PTX meaning, through `texture::Texture::fetch_ms`) equals the
//!   simulator running our SASS, on random texels, with coordinates, layers and sample
//!   indices that run out of range both ways (3 seeds);
//! * the code is hazard-free and uses the instruction ptxas 11.8 uses for it
//!   (`TLDS.LZ.MS`, `TLD.LZ.MS`, `TLD.B.LZ.MS`);
//! * with the oracle: cuobjdump and nvdisasm print exactly our listing, and ptxas picks the
//!   same texture instructions (mnemonic with its phase, slot, target and mask).

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::texture::{ChannelType, ReadMode, Shape, Texture, TextureBindings, TextureDesc};

const OUT: u64 = 0x3000_0000;
const THREADS: u32 = 128;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Handle {
    Ref,
    Obj,
    Reg,
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    array: bool,
    result: &'static str,
    handle: Handle,
    /// Only the first component is stored.
    one: bool,
    want: &'static str,
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for array in [false, true] {
        for result in ["f32", "s32", "u32"] {
            for handle in [Handle::Ref, Handle::Obj, Handle::Reg] {
                for one in [false, true] {
                    if one && result != "f32" {
                        continue;
                    }
                    let want = match (handle, array) {
                        (Handle::Reg, _) => "TLD.B.LZ.MS ",
                        (_, false) => "TLDS.LZ.MS ",
                        (_, true) => "TLD.LZ.MS ",
                    };
                    let shape = if array { "a2dms" } else { "2dms" };
                    v.push(Case {
                        name: format!(
                            "tex_{shape}_{result}_{handle:?}{}",
                            if one { "_x" } else { "" }
                        )
                        .to_lowercase(),
                        array,
                        result,
                        handle,
                        one,
                        want,
                    });
                }
            }
        }
    }
    v
}

impl Case {
    /// The kernel: sample %r8 = the top 4 bits of tid · 0x9e3779b1, signed (-8..7, of 4 samples),
    /// layer %r5 = tid & 3 (of 3 layers), x %r6 = (tid & 7) ^ 1 (0..7), y %r7 = bits 3..5 of
    /// tid, signed (-4..3; of 6×6 texels). No constant is added to a coordinate: ptxas
    /// folds `x + k` into `.AOFFI` (`TLD.LZ.AOFFI.MS`), which leafold does not.
    fn ptx(&self) -> String {
        let name = &self.name;
        let t = if self.handle == Handle::Ref {
            "t"
        } else {
            "%rd5"
        };
        let regs = if self.result == "f32" {
            ["%f10", "%f11", "%f12", "%f13"]
        } else {
            ["%r10", "%r11", "%r12", "%r13"]
        };
        let (shape, coords) = if self.array {
            ("a2dms", "{%r8, %r5, %r6, %r7}")
        } else {
            ("2dms", "{%r8, %r6, %r7, %r7}")
        };
        let inst = format!(
            "tex.{shape}.v4.{}.s32 {{{}}}, [{t}, {coords}];",
            self.result,
            regs.join(", ")
        );
        let sty = if self.result == "f32" { "f32" } else { "b32" };
        let store = if self.one {
            format!("st.global.{sty} [%rd3], {};", regs[0])
        } else {
            format!("st.global.v4.{sty} [%rd3], {{{}}};", regs.join(", "))
        };
        let handle = if self.handle == Handle::Reg {
            format!("ld.global.u64 %rd5, [%rd1+{}]", THREADS * 16)
        } else {
            "ld.param.u64 %rd5, [h]".to_string()
        };
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n\n.global .texref t;\n\n\
             .visible .entry {name}(.param .u64 out, .param .u64 h)\n{{\n\
             \x20 .reg .f32 %f<16>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n\
             \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
             \x20 {handle};\n\
             \x20 mov.u32 %r1, %tid.x;\n\
             \x20 and.b32 %r5, %r1, 3;\n\
             \x20 and.b32 %r6, %r1, 7;\n  xor.b32 %r6, %r6, 1;\n\
             \x20 shl.b32 %r7, %r1, 26;\n  shr.s32 %r7, %r7, 29;\n\
             \x20 mul.lo.s32 %r8, %r1, -1640531535;\n  shr.s32 %r8, %r8, 28;\n\
             \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n\
             \x20 {inst}\n  {store}\n  ret;\n}}\n"
        )
    }

    /// 6×6 texels (3 layers for a2dms), 4 samples each: 4 × f32 for float results, 2 ×
    /// s16 for signed, 4 × u8 read as integers for unsigned.
    fn texture(&self, seed: u64) -> Texture {
        let (ty, ch) = match self.result {
            "f32" => (ChannelType::F32, 4),
            "s32" => (ChannelType::S16, 2),
            _ => (ChannelType::U8, 4),
        };
        let shape = if self.array { Shape::A2 } else { Shape::D2 };
        let mut d = TextureDesc::new(shape, [6, 6, 1], ty, ch);
        d.read_mode = ReadMode::ElementType;
        if self.array {
            d.layers = 3;
        }
        d.samples = 4;
        d.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", self.name));
        Texture::random(d, seed)
    }

    fn launch(&self, seed: u64) -> Launch {
        let mut textures = TextureBindings::new();
        let tex = self.texture(seed);
        let handle = if self.handle == Handle::Ref {
            textures.bind("t", tex);
            0x77
        } else {
            // A decoy first, so the handle is not 1.
            textures.add_object(self.texture(seed ^ 1));
            textures.add_object(tex)
        };
        let mut params = OUT.to_le_bytes().to_vec();
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

fn ours(case: &Case) -> leafold::driver::Output {
    common::compile_sass(&case.name, &case.ptx())
}

#[test]
fn eval_equals_simulator_on_random_texels() {
    for case in cases() {
        let name = &case.name;
        let out = ours(&case);
        let module = common::ir_module(format!("{name}.ptx"), case.ptx());
        let mut distinct = std::collections::BTreeSet::new();
        let mut zeros = 0;
        for seed in 0..3 {
            let got = common::assert_eval_equals_sim(name, &module, &out, &case.launch(seed), OUT);
            let width = if case.one { 4 } else { 16 };
            let bytes = &got[..THREADS as usize * 16];
            for t in bytes.chunks(16) {
                distinct.insert(t[..width].to_vec());
                zeros += usize::from(t[..width].iter().all(|&b| b == 0));
            }
        }
        // Not vacuous: many different texels, and some fetches out of range (zero).
        assert!(distinct.len() > 20, "{name}: {} distinct", distinct.len());
        assert!(zeros > 0, "{name}: no fetch out of range");
    }
}

#[test]
fn code_is_hazard_free_and_uses_ptxas_instructions() {
    for case in cases() {
        let out = ours(&case);
        common::assert_hazard_free_and_shows(&case.name, &out.cubin, &out.sass, case.want);
    }
}

#[test]
fn oracle_prints_our_listing_and_ptxas_picks_the_same_instructions() {
    let Some(oracle) = Oracle::for_test("compile_tex_ms") else {
        return;
    };
    for case in cases() {
        let out = ours(&case);
        common::assert_oracle_lists_ours_and_ptxas_textures(
            &oracle,
            &case.name,
            &case.ptx(),
            &out.cubin,
            &out.sass,
        );
    }
}

/// Listings of one case per form (read when accepted: TLDS's `{x, y}` pair and sample
/// register, TLD's `{layer, x, y}` quad with the layer clamped by I2I, TLD.B's
/// `{handle, sample}` pair).
#[test]
fn listings_snapshot() {
    let mut text = String::new();
    for name in [
        "tex_2dms_f32_ref",
        "tex_a2dms_u32_obj",
        "tex_2dms_s32_reg",
        "tex_a2dms_f32_reg_x",
    ] {
        let case = cases().into_iter().find(|c| c.name == name).unwrap();
        text += &ours(&case).sass;
    }
    insta::assert_snapshot!("tex_ms_listings", text);
}

/// `verify --texture` describes a multisample texture with `samples=N`; the text
/// round-trips, and the shapes and counts CUDA has no multisample texture for are refused.
#[test]
fn texture_descriptions_take_samples() {
    use leafold::texture::spec::{format, parse};
    let d = parse("a2d:8x4,f32x4,layers=2,samples=8").unwrap();
    assert_eq!((d.samples, d.layers, d.width, d.height), (8, 2, 8, 4));
    assert_eq!(parse(&format(&d)).unwrap(), d);
    assert_eq!(parse("2d:8x4,u8").unwrap().samples, 1);
    for bad in [
        "3d:4x4x4,f32,samples=2",
        "2d:4x4,f32,samples=32",
        "2d:8x8,f32,mips=2,samples=2",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

/// Multisample forms ptxas 11.8 refuses, and a fetch without a sampler in a
/// `texmode_independent` module (ptxas: "Argument 2 of instruction 'tex': .samplerref or
/// .u64 register expected", for `.texref`s and handles in registers, `tex` and `tld4`), get
/// a diagnostic with file, line and column, not a panic.
#[test]
fn refused_forms_get_a_diagnostic() {
    let texmode = ", texmode_independent";
    let sampler = ".global .samplerref s = { filter_mode = linear };";
    // (target, the line after the .texref, instruction, message, where: the instruction
    // (None) or its `[...]` operand).
    let at_args = Some('[');
    for (target, extra, inst, what, place) in [
        (
            "",
            "",
            "tex.2dms.v4.f32.f32 {%f2, %f3, %f4, %f5}, [t, {%f1, %f1, %f1, %f1}];",
            "tex.2dms takes .f32, .s32 or .u32 results and .s32 coordinates",
            None,
        ),
        (
            "",
            "",
            "tex.a2dms.v4.f32.s32 {%f2, %f3, %f4, %f5}, [t, {%r1, %r1, %r1}];",
            "tex.a2dms takes 4 coordinates (sample, layer, x, y), got 3",
            at_args,
        ),
        (
            "",
            "",
            "tex.2dms.level.v4.f32.s32 {%f2, %f3, %f4, %f5}, [t, {%r1, %r1, %r1, %r1}], %r1;",
            "tex.2dms takes no .level",
            None,
        ),
        (
            texmode,
            sampler,
            "tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [t, {%f1, %f1}];",
            "Argument 2 of instruction 'tex': .samplerref or .u64 register expected",
            at_args,
        ),
        (
            texmode,
            sampler,
            "tex.2d.v4.f32.s32 {%f2, %f3, %f4, %f5}, [%rd1, {%r1, %r1}];",
            "Argument 2 of instruction 'tex': .samplerref or .u64 register expected",
            at_args,
        ),
        (
            texmode,
            "",
            "tld4.r.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [t, {%f1, %f1}];",
            "Argument 2 of instruction 'tld4': .samplerref or .u64 register expected",
            at_args,
        ),
        (
            texmode,
            sampler,
            "tex.2dms.v4.f32.s32 {%f2, %f3, %f4, %f5}, [t, {%r1, %r1, %r1, %r1}];",
            "Argument 2 of instruction 'tex': .samplerref or .u64 register expected",
            at_args,
        ),
    ] {
        let ptx = format!(
            ".version 7.8\n.target sm_50{target}\n.address_size 64\n.global .texref t;\n{extra}\n\
             .visible .entry k(.param .u64 out)\n{{\n .reg .f32 %f<8>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n\
             \x20ld.param.u64 %rd1, [out];\n mov.f32 %f1, 0f3F000000;\n mov.u32 %r1, 1;\n {inst}\n\
             \x20st.global.f32 [%rd1], %f2;\n ret;\n}}\n"
        );
        // Line 14, column 2 for the instruction, or its `[`'s.
        let column = 2 + place.map_or(0, |c| inst.find(c).unwrap());
        let place = format!("bad.ptx:14:{column}:");
        let opts = Options {
            file_name: "bad.ptx".into(),
            emit: Emit::Sass,
            ..Options::default()
        };
        let e = compile(&ptx, &opts).unwrap_err();
        let text = leafold::error::render_all(&e.0);
        assert!(text.contains(what), "{ptx}\n{text}");
        assert!(text.contains(&place), "{place}\n{ptx}\n{text}");
    }
    // The same fetch with its sampler compiles.
    let ok = format!(
        ".version 7.8\n.target sm_50{texmode}\n.address_size 64\n.global .texref t;\n{sampler}\
         .visible .entry k(.param .u64 out)\n{{\n .reg .f32 %f<8>;\n .reg .b64 %rd<2>;\n\
         \x20ld.param.u64 %rd1, [out];\n mov.f32 %f1, 0f3F000000;\n\
         \x20tex.2d.v4.f32.f32 {{%f2, %f3, %f4, %f5}}, [t, s, {{%f1, %f1}}];\n\
         \x20st.global.f32 [%rd1], %f2;\n ret;\n}}\n"
    );
    compile(&ok, &Options::default()).unwrap();
}

/// `leafold verify` runs multisample kernels: textures bound by name and by parameter get
/// the default multisample description (4 samples), or the one `--texture` gives; a
/// description the model refuses is a usage error naming it.
#[test]
fn verify_cli_runs_multisample_kernels() {
    let ptx = ".version 7.8\n.target sm_50\n.address_size 64\n.global .texref t;\n.global .texref u;\n\
               .visible .entry k(.param .u64 out, .param .u64 h)\n{\n\
               \x20 .reg .f32 %f<16>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n\
               \x20 ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd5, [h];\n\
               \x20 mov.u32 %r1, %tid.x;\n  and.b32 %r3, %r1, 15;\n  shr.u32 %r4, %r1, 4;\n\
               \x20 and.b32 %r9, %r1, 3;\n  mul.wide.u32 %rd2, %r1, 48;\n  add.s64 %rd3, %rd1, %rd2;\n\
               \x20 tex.2dms.v4.f32.s32 {%f10, %f11, %f12, %f13}, [t, {%r9, %r3, %r4, %r4}];\n\
               \x20 st.global.v4.f32 [%rd3], {%f10, %f11, %f12, %f13};\n\
               \x20 tex.a2dms.v4.u32.s32 {%r10, %r11, %r12, %r13}, [u, {%r9, %r4, %r3, %r4}];\n\
               \x20 st.global.v4.u32 [%rd3+16], {%r10, %r11, %r12, %r13};\n\
               \x20 tex.2dms.v4.f32.s32 {%f10, %f11, %f12, %f13}, [%rd5, {%r9, %r3, %r4, %r4}];\n\
               \x20 st.global.v4.f32 [%rd3+32], {%f10, %f11, %f12, %f13};\n  ret;\n}\n";
    let dir = std::env::temp_dir().join(format!("leafold-tex-ms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ms.ptx");
    std::fs::write(&path, ptx).unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_leafold"))
            .arg("verify")
            .args(extra)
            .arg(&path)
            .output()
            .unwrap()
    };
    for extra in [&[][..], &["--texture", "t=2d:8x8,f32x4,samples=2"][..]] {
        let out = run(extra);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {text}");
        assert!(text.contains("k: OK, 3 runs match"), "{extra:?}: {text}");
    }
    let out = run(&["--texture", "t=3d:8x8x8,f32x4,samples=2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a 3d texture has no samples"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
