//! One texture handle per quad (`lower::select::tex::handle_split`, `sim::tex`'s "One
//! handle per quad"): the texture unit takes one handle for the four lanes of a quad, so
//! ptxas 11.8 splits a `.B` fetch whose handle may differ within a quad (`SSY`; `SHFL.IDX`
//! of quad lanes 0, 1, 2, `IADD RZ.CC`, `BRA CC.EQ` to the fetch; the fetch; `SYNC`).
//!
//! * Handles loaded from `hs[%tid]` (three textures, the lanes of most quads holding two or
//!   three of them), for every `.B` form (`TEX.B`, `TEX.B.LL`, `TXD.B`, `TLD4.B`,
//!   `TLD.B`, `TXQ.B`), inside a divergent branch and in a loop: `ir::eval` (per-lane
//!   handles, PTX's semantics) equals the simulator, the code is hazard-free;
//! * without the split (`Options::no_handle_split`) the simulator differs from `ir::eval`:
//!   the model catches a missing split;
//! * uniform handles (a parameter, `ld.global` at a uniform address) get no split
//!   (snapshot of one listing);
//! * with the oracle: cuobjdump and nvdisasm print our listing, and ptxas's split has the
//!   same instructions as ours, registers aside.

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::texture::{ChannelType, Shape, Texture, TextureBindings, TextureDesc};

const OUT: u64 = 0x3000_0000;
const HS: u64 = 0x3100_0000;
const THREADS: u32 = 64;

/// A handle that differs within quads: `hs[%tid]`.
const PER_LANE: &str = "mul.wide.u32 %rd6, %r1, 8;\n  add.s64 %rd7, %rd2, %rd6;\n  \
                        ld.global.u64 %rd5, [%rd7];";
/// Uniform handles: `hs[0]`, and the parameter itself.
const AT_UNIFORM: &str = "ld.global.u64 %rd5, [%rd2];";
const PARAM: &str = "ld.param.u64 %rd5, [ho];";

/// (name, instructions writing %f10..%f13 from handle %rd5, the `.B` form ours and ptxas's
/// use).
const CASES: &[(&str, &str, &str)] = &[
    (
        "qh_tex_2d",
        "tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd5, {%f3, %f4}];",
        "TEX.B ",
    ),
    (
        "qh_tex_level",
        "tex.level.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd5, {%f3, %f4}], %f5;",
        "TEX.B.LL ",
    ),
    (
        "qh_tex_grad",
        "tex.grad.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd5, {%f3, %f4}], \
         {%f5, %f6}, {%f6, %f5};",
        "TXD.B ",
    ),
    (
        "qh_tld4",
        "tld4.g.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd5, {%f3, %f4}];",
        "TLD4.G.B ",
    ),
    (
        "qh_tld",
        "tex.2d.v4.f32.s32 {%f10, %f11, %f12, %f13}, [%rd5, {%r5, %r6}];",
        "TLD.B.LZ ",
    ),
    (
        "qh_txq",
        "txq.width.b32 %r7, [%rd5];\n  txq.height.b32 %r8, [%rd5];\n  \
         mov.b32 %f10, %r7;\n  mov.b32 %f11, %r8;\n  mov.f32 %f12, %f3;\n  mov.f32 %f13, %f4;",
        "TXQ.B ",
    ),
    (
        "qh_tex_in_branch",
        "mov.f32 %f10, 0f00000000;\n  mov.f32 %f11, %f10;\n  mov.f32 %f12, %f10;\n  \
         mov.f32 %f13, %f10;\n  setp.gt.u32 %p1, %r6, 2;\n  @%p1 bra SKIP;\n  \
         tex.2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd5, {%f3, %f4}];\nSKIP:",
        "TEX.B ",
    ),
    (
        "qh_tex_loop",
        "mov.f32 %f10, 0f00000000;\n  mov.f32 %f11, %f10;\n  mov.f32 %f12, %f10;\n  \
         mov.f32 %f13, %f10;\n  mov.u32 %r9, 0;\nLOOP:\n  \
         tex.2d.v4.f32.f32 {%f20, %f21, %f22, %f23}, [%rd5, {%f3, %f4}];\n  \
         add.f32 %f10, %f10, %f20;\n  add.f32 %f11, %f11, %f21;\n  \
         add.f32 %f12, %f12, %f22;\n  add.f32 %f13, %f13, %f23;\n  \
         add.f32 %f3, %f3, 0f3E000000;\n  add.u32 %r9, %r9, 1;\n  \
         setp.lt.u32 %p1, %r9, 3;\n  @%p1 bra LOOP;",
        "TEX.B ",
    ),
];

/// Kernel `name`: handle %rd5 from `handle`, then `inst`, its four results stored per thread.
fn ptx(name: &str, handle: &str, inst: &str) -> String {
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\n\
         .visible .entry {name}(.param .u64 out, .param .u64 hs, .param .u64 ho)\n{{\n\
         \x20 .reg .f32 %f<24>;\n  .reg .b32 %r<10>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<2>;\n\
         \x20 ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd1, %rd1;\n\
         \x20 ld.param.u64 %rd2, [hs];\n  cvta.to.global.u64 %rd2, %rd2;\n\
         \x20 mov.u32 %r1, %tid.x;\n\
         \x20 {handle}\n\
         \x20 cvt.rn.f32.u32 %f2, %r1;\n\
         \x20 fma.rn.f32 %f3, %f2, 0f3D0F5C29, 0fBF800000;\n\
         \x20 fma.rn.f32 %f4, %f2, 0fBCA3D70A, 0f3F99999A;\n\
         \x20 mul.f32 %f5, %f2, 0f3CA3D70A;\n  mul.f32 %f6, %f5, 0f3F000000;\n\
         \x20 and.b32 %r5, %r1, 7;\n  shr.u32 %r6, %r1, 3;\n\
         \x20 mul.wide.u32 %rd3, %r1, 16;\n  add.s64 %rd4, %rd1, %rd3;\n\
         \x20 {inst}\n\
         \x20 st.global.v4.f32 [%rd4], {{%f10, %f11, %f12, %f13}};\n  ret;\n}}\n"
    )
}

/// Three 2D f32x4 textures of different sizes (so `txq` differs too), 3 levels, normalized
/// coordinates; `hs[l]` holds one of their handles per lane, most quads mixing two or three;
/// the parameter `ho` the second.
fn launch(seed: u64) -> Launch {
    let mut textures = TextureBindings::new();
    let mut handles = Vec::new();
    for (k, size) in [[7, 5, 1], [9, 6, 1], [5, 8, 1]].into_iter().enumerate() {
        let mut d = TextureDesc::new(Shape::D2, size, ChannelType::F32, 4);
        d.mip_levels = 3;
        d.sampler.normalized_coords = true;
        d.validate().unwrap();
        handles.push(textures.add_object(Texture::random(d, seed * 3 + k as u64)));
    }
    let mut params = OUT.to_le_bytes().to_vec();
    params.extend_from_slice(&HS.to_le_bytes());
    params.extend_from_slice(&handles[1].to_le_bytes());
    let mut l = common::one_cta_texture_launch(THREADS, OUT, params, textures);
    let table: Vec<u8> = (0..THREADS as usize)
        .flat_map(|lane| handles[(lane ^ (lane >> 2)) % 3].to_le_bytes())
        .collect();
    l.global.push(GlobalRegion {
        base: HS,
        bytes: table,
    });
    l
}

fn options(name: &str, split: bool) -> Options {
    Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        no_handle_split: !split,
        ..Options::default()
    }
}

fn ours(name: &str, src: &str, split: bool) -> leafold::driver::Output {
    compile(src, &options(name, split))
        .unwrap_or_else(|d| panic!("{name}:\n{}", leafold::error::render_all(&d.0)))
}

#[test]
fn per_lane_handles_verify_with_the_split_and_fail_without() {
    for &(name, inst, _) in CASES {
        let src = ptx(name, PER_LANE, inst);
        let module = common::ir_module(format!("{name}.ptx"), src.clone());
        let split = ours(name, &src, true);
        let unsplit = ours(name, &src, false);
        let mut caught = false;
        for seed in 0..2 {
            let l = launch(seed);
            let got = common::assert_eval_equals_sim(name, &module, &split, &l, OUT);
            let want = eval::run(&module, name, &l).unwrap();
            // Not every lane writes the same (the fetches ran; clamped coordinates and
            // the skipped lanes of the branch case repeat some).
            let distinct: std::collections::BTreeSet<_> = got.chunks(16).collect();
            assert!(distinct.len() > 4, "{name}: {} distinct", distinct.len());
            let bad = leafold::sim::run_cubin(&unsplit.cubin, name, &l)
                .unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", unsplit.sass));
            caught |= bad.region(OUT) != want.region(OUT);
        }
        assert!(
            caught,
            "{name}: no split, yet the simulator agrees\n{}",
            unsplit.sass
        );
        assert!(!unsplit.sass.contains("SHFL"), "{name}:\n{}", unsplit.sass);
    }
}

#[test]
fn the_split_is_hazard_free_and_has_ptxas_shape() {
    for &(name, inst, want) in CASES {
        let out = ours(name, &ptx(name, PER_LANE, inst), true);
        common::assert_hazard_free_and_shows(name, &out.cubin, &out.sass, want);
        let shape = split_shape(&out.sass);
        assert_eq!(shape.len(), 11, "{name}: {shape:#?}\n{}", out.sass);
        assert!(out.sass.contains("SSY "), "{name}:\n{}", out.sass);
    }
}

#[test]
fn uniform_handles_get_no_split() {
    for handle in [AT_UNIFORM, PARAM] {
        for &(name, inst, _) in CASES {
            let src = ptx(name, handle, inst);
            let out = ours(name, &src, true);
            assert!(!out.sass.contains("SHFL"), "{name} {handle}:\n{}", out.sass);
            let module = common::ir_module(format!("{name}.ptx"), src);
            common::assert_eval_equals_sim(name, &module, &out, &launch(1), OUT);
        }
    }
}

/// Read when accepted: with the handle loaded at `hs`, `TEX.B` on it directly; with
/// `hs[%tid]`, `SSY`, the three `SHFL.IDX`/`IADD RZ.CC`/`BRA CC.EQ` tests, `TEX.B` on the
/// loaded handle with every result apart from it, `SYNC`.
#[test]
fn listing_snapshots() {
    let (name, inst, _) = CASES[0];
    for (snap, handle) in [
        ("quad_handle_uniform_listing", AT_UNIFORM),
        ("quad_handle_split_listing", PER_LANE),
    ] {
        insta::assert_snapshot!(snap, ours(name, &ptx(name, handle, inst), true).sass);
    }
}

#[test]
fn oracle_prints_our_split_and_ptxas_splits_alike() {
    let Some(oracle) = Oracle::for_test("compile_tex_quad_handle") else {
        return;
    };
    for &(name, inst, _) in CASES {
        let src = ptx(name, PER_LANE, inst);
        let out = ours(name, &src, true);
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
        let theirs = common::ptxas_cached(&oracle, &src, "sm_50")
            .unwrap_or_else(|e| panic!("{name}: ptxas: {e}"));
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        assert_eq!(
            split_shape(&listing),
            split_shape(&out.sass),
            "{name}: ptxas (left) vs ours (right)\n{listing}\n{}",
            out.sass
        );
        // Uniform handles: ptxas has no split either.
        let theirs = common::ptxas_cached(&oracle, &ptx(name, AT_UNIFORM, inst), "sm_50").unwrap();
        let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
        assert!(!listing.contains("SHFL"), "{name}:\n{listing}");
    }
}

/// The lines from the first `SHFL` to the first `SYNC` after it, register numbers, branch
/// targets and the texture phase (`.T`/`.P`, the scheduler's) left out.
fn split_shape(listing: &str) -> Vec<String> {
    let lines: Vec<String> = common::parse_lines(listing)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let Some(first) = lines.iter().position(|t| t.starts_with("SHFL")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in &lines[first..] {
        let t = if t.starts_with("BRA") {
            t.split(',').next().unwrap_or(t).to_string()
        } else {
            registers_out(t)
        };
        let done = t == "SYNC" || t.starts_with("SYNC ");
        out.push(t);
        if done {
            break;
        }
    }
    out
}

/// `line` with every register number dropped (`R12` reads `R`, `RZ` stays), the
/// mnemonic's `.T`/`.P` phase and a guard left out (ptxas if-converts the branch case's
/// fetch, `@!P0 TEX.B`, where ours stays behind the branch).
fn registers_out(line: &str) -> String {
    let line = line.trim_end_matches(';').trim();
    let line = match line.split_once(' ') {
        Some((g, rest)) if g.starts_with('@') => rest.trim(),
        _ => line,
    };
    let (mnemonic, rest) = line.split_once(' ').unwrap_or((line, ""));
    let mnemonic = mnemonic.trim_end_matches(".T").trim_end_matches(".P");
    let mut out = String::new();
    let mut prev = ' ';
    let mut in_reg = false;
    for c in rest.chars() {
        if in_reg && c.is_ascii_digit() {
            continue;
        }
        in_reg = c == 'R' && !prev.is_ascii_alphanumeric();
        out.push(c);
        prev = c;
    }
    format!("{mnemonic} {out}").trim_end().to_string()
}
