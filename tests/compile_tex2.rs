//! The rest of the texture instructions end to end (issue 21): `tld4` (each component, 2d
//! and a2d, f32/s32/u32 results, with an offset vector and/or a depth-compare reference,
//! bound by a `.texref`, a texture object parameter or one loaded from memory, all four or
//! some of the results read), and `tex` with `.level` (float and integer coordinates),
//! `.grad`, an offset vector and a depth-compare reference in the forms ptxas 11.8 was
//! probed with. One kernel per case; for each:
//!
//! * `ir::eval` (the PTX meaning, through the texture model) equals the simulator running
//!   our SASS, on random texels and coordinates and offsets that run off the texture's edges
//!   (and offsets past the 6 bits the hardware reads);
//! * the code is hazard-free and uses the instruction ptxas 11.8 uses for it;
//! * with the oracle: cuobjdump and nvdisasm print exactly our listing, and ptxas picks the
//!   same texture instructions (mnemonic with its `.T`/`.P` phase, slot, target and mask;
//!   registers aside).

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::texture::{
    AddressMode, ChannelType, FilterMode, Shape, Texture, TextureBindings, TextureDesc,
};

const OUT: u64 = 0x3000_0000;
const THREADS: u32 = 64;

/// Where the texture comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Handle {
    /// A module `.texref` (by slot).
    Ref,
    /// A texture object passed as a `.u64` parameter (by slot: its parameter word).
    Obj,
    /// A texture object loaded from memory (a register: the `.B` forms).
    Reg,
}

/// Which results the kernel stores (the others are unread).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Read {
    All,
    /// Only the first component.
    X,
    /// The first and the last.
    Xw,
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    /// The instruction, `T` standing for the texture and `D` for the destination vector.
    inst: String,
    shape: Shape,
    /// `f32`, `s32` or `u32`.
    result: &'static str,
    handle: Handle,
    read: Read,
    /// The texture mnemonic ptxas 11.8 writes (a prefix of our listing's line).
    want: &'static str,
    /// The texture has three mip levels (filtered linearly between them).
    mips: bool,
}

fn tld4_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let comps = ["r", "g", "b", "a"];
    for (k, comp) in comps.iter().enumerate() {
        for result in ["f32", "s32", "u32"] {
            for handle in [Handle::Ref, Handle::Obj, Handle::Reg] {
                // Every component with f32; the integer results with one component each.
                if result != "f32" && k != 3 - usize::from(result == "s32") {
                    continue;
                }
                v.push(tld4(comp, "2d", result, handle, Read::All, "", ""));
            }
        }
    }
    for handle in [Handle::Ref, Handle::Obj, Handle::Reg] {
        for (off, dc) in [(true, false), (false, true), (true, true)] {
            let off = if off { ", {%r6, %r7}" } else { "" };
            let dc = if dc { ", %f5" } else { "" };
            v.push(tld4("r", "2d", "f32", handle, Read::All, off, dc));
            v.push(tld4("g", "2d", "f32", handle, Read::X, off, dc));
        }
        v.push(tld4("b", "2d", "f32", handle, Read::X, "", ""));
        v.push(tld4("a", "2d", "f32", handle, Read::Xw, "", ""));
        v.push(tld4("g", "a2d", "f32", handle, Read::All, "", ""));
        v.push(tld4(
            "r",
            "a2d",
            "u32",
            handle,
            Read::Xw,
            ", {%r6, %r8}",
            "",
        ));
        v.push(tld4(
            "b",
            "a2d",
            "f32",
            handle,
            Read::All,
            ", {%r8, %r7}",
            ", %f5",
        ));
    }
    v
}

fn tld4(
    comp: &str,
    shape: &str,
    result: &'static str,
    handle: Handle,
    read: Read,
    off: &str,
    dc: &str,
) -> Case {
    let coords = if shape == "a2d" {
        "{%r5, %f3, %f4, %f4}"
    } else {
        "{%f3, %f4}"
    };
    let want = match handle {
        Handle::Reg => "TLD4.",
        _ if shape == "2d" && read == Read::All => "TLD4S.",
        _ => "TLD4.",
    };
    Case {
        name: format!(
            "tld4_{comp}_{shape}_{result}_{handle:?}_{read:?}{}{}",
            if off.is_empty() { "" } else { "_off" },
            if dc.is_empty() { "" } else { "_dc" }
        )
        .to_lowercase(),
        inst: format!("tld4.{comp}.{shape}.v4.{result}.f32 D, [T, {coords}]{off}{dc};"),
        shape: Shape::from_name(shape).unwrap(),
        result,
        handle,
        read,
        want,
        mips: false,
    }
}

impl Case {
    /// The kernel: coordinates from the thread index (%r1) and a float scale (%f1): floats
    /// %f3 = tid * s - 2, %f4 = tid * 0.3 - 1; the layer %r5 = tid & 3 (past the texture's
    /// three layers too); offsets %r6 = (tid & 7) - 3, %r7 = (tid & 15) - 5, %r8 = 3 tid - 90
    /// (past the 6-bit range); the depth reference %f5 = tid / 64; an integer level
    /// %r9 = tid & 3 (past the three levels too), a float one %f6 = 0.06 tid - 0.5;
    /// integer coordinates %r14 = tid ^ 9, %r15 = tid >> 2 (not `x + k`: ptxas folds a
    /// constant added to an integer coordinate into `.AOFFI`, which leafold does not);
    /// gradients %f7 = tid / 4, %f8 = -0.1 %f3, %f9 = 0.5.
    fn ptx(&self) -> String {
        let name = &self.name;
        let t = if self.handle == Handle::Ref {
            "t"
        } else {
            "%rd5"
        };
        let (dty, regs) = match self.result {
            "f32" => ("f32", ["%f10", "%f11", "%f12", "%f13"]),
            _ => ("u32", ["%r10", "%r11", "%r12", "%r13"]),
        };
        let inst = self
            .inst
            .replace("T,", &format!("{t},"))
            .replace("D,", &format!("{{{}}},", regs.join(", ")));
        let store = match self.read {
            Read::All => format!("st.global.v4.{dty} [%rd3], {{{}}};", regs.join(", ")),
            Read::X => format!("st.global.{dty} [%rd3], {};", regs[0]),
            Read::Xw => format!(
                "st.global.{dty} [%rd3], {};\n  st.global.{dty} [%rd3+12], {};",
                regs[0], regs[3]
            ),
        };
        let handle = if self.handle == Handle::Reg {
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
             \x20 mov.u32 %r1, %tid.x;\n\
             \x20 cvt.rn.f32.u32 %f2, %r1;\n\
             \x20 fma.rn.f32 %f3, %f2, %f1, 0fC0000000;\n\
             \x20 fma.rn.f32 %f4, %f2, 0f3E99999A, 0fBF800000;\n\
             \x20 mul.f32 %f5, %f2, 0f3C800000;\n\
             \x20 and.b32 %r5, %r1, 3;\n\
             \x20 and.b32 %r6, %r1, 7;\n  add.s32 %r6, %r6, -3;\n\
             \x20 and.b32 %r7, %r1, 15;\n  add.s32 %r7, %r7, -5;\n\
             \x20 mad.lo.s32 %r8, %r1, 3, -90;\n\
             \x20 and.b32 %r9, %r1, 3;\n\
             \x20 xor.b32 %r14, %r1, 9;\n\
             \x20 shr.u32 %r15, %r1, 2;\n\
             \x20 fma.rn.f32 %f6, %f2, 0f3D75C28F, 0fBF000000;\n\
             \x20 mul.f32 %f7, %f2, 0f3E800000;\n\
             \x20 mul.f32 %f8, %f3, 0fBDCCCCCD;\n\
             \x20 mov.f32 %f9, 0f3F000000;\n\
             \x20 mul.wide.u32 %rd2, %r1, 16;\n  add.s64 %rd3, %rd1, %rd2;\n\
             \x20 {inst}\n  {store}\n  ret;\n}}\n"
        )
    }

    /// A 7×5(×3) texture (16×8×4 with three mip levels for the level and gradient cases; 3
    /// layers for the array shapes): 4 × f32, linear, for float results (a
    /// depth compare reads the first channel), 4 × u8 read as integers, point sampled, for
    /// integer results; clamp in x, border in y, so the footprint runs off both ways.
    fn texture(&self, seed: u64) -> Texture {
        let (ty, ch) = match self.result {
            "f32" => (ChannelType::F32, 4),
            _ => (ChannelType::U8, 4),
        };
        let size = if self.mips { [16, 8, 4] } else { [7, 5, 3] };
        let mut d = TextureDesc::new(self.shape, size, ty, ch);
        if self.shape.is_layered() {
            d.layers = 3;
        }
        if self.result == "f32" {
            d.sampler.filter = FilterMode::Linear;
            d.sampler.mip_filter = FilterMode::Linear;
        }
        if self.mips {
            d.mip_levels = 3;
        }
        d.sampler.address = [AddressMode::Clamp, AddressMode::Border, AddressMode::Clamp];
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

/// A `tex` case family: (name, instruction, shape, handles, the mnemonic ptxas 11.8 writes
/// by slot, and for a register handle).
type LodRow = (
    &'static str,
    &'static str,
    &'static str,
    &'static [Handle],
    &'static str,
    &'static str,
);

/// `tex` with a level, gradients, offsets or a depth reference.
fn tex_lod_cases() -> Vec<Case> {
    const ALL: &[Handle] = &[Handle::Ref, Handle::Obj, Handle::Reg];
    const SLOT: &[Handle] = &[Handle::Ref, Handle::Obj];
    let table: Vec<LodRow> = vec![
        (
            "level_2d",
            "tex.level.2d.v4.f32.f32 D, [T, {%f3, %f4}], %f6;",
            "2d",
            ALL,
            "TEXS.LL ",
            "TEX.B.LL ",
        ),
        (
            "level_1d",
            "tex.level.1d.v4.f32.f32 D, [T, {%f3}], %f6;",
            "1d",
            ALL,
            "TEXS.LL ",
            "TEX.B.LL ",
        ),
        (
            "level_3d",
            "tex.level.3d.v4.f32.f32 D, [T, {%f3, %f4, %f5, %f5}], %f6;",
            "3d",
            ALL,
            "TEX.LL ",
            "TEX.B.LL ",
        ),
        (
            "level_a1d",
            "tex.level.a1d.v4.f32.f32 D, [T, {%r5, %f3}], %f6;",
            "a1d",
            SLOT,
            "TEX.LL ",
            "",
        ),
        (
            "level_a2d",
            "tex.level.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], %f6;",
            "a2d",
            ALL,
            "TEX.LL ",
            "TEX.B.LL ",
        ),
        (
            "dc_2d",
            "tex.2d.v4.f32.f32 D, [T, {%f3, %f4}], %f5;",
            "2d",
            SLOT,
            "TEXS.DC ",
            "",
        ),
        (
            "dc_1d",
            "tex.1d.v4.f32.f32 D, [T, {%f3}], %f5;",
            "1d",
            ALL,
            "TEXS.DC ",
            "TEX.B.DC ",
        ),
        (
            "level_dc_2d",
            "tex.level.2d.v4.f32.f32 D, [T, {%f3, %f4}], %f6, %f5;",
            "2d",
            ALL,
            "TEXS.LL.DC ",
            "TEX.B.LL.DC ",
        ),
        // The level first, then offsets, then the reference (PTX's order; ptxas 11.8
        // refuses offsets before the level), in rb in that order.
        (
            "level_off_2d",
            "tex.level.2d.v4.f32.f32 D, [T, {%f3, %f4}], %f6, {%r6, %r8};",
            "2d",
            ALL,
            "TEX.LL.AOFFI ",
            "TEX.B.LL.AOFFI ",
        ),
        (
            "level_off_dc_2d",
            "tex.level.2d.v4.f32.f32 D, [T, {%f3, %f4}], %f6, {%r6, %r7}, %f5;",
            "2d",
            ALL,
            "TEX.LL.AOFFI.DC ",
            "TEX.B.LL.AOFFI.DC ",
        ),
        (
            "level_off_3d",
            "tex.level.3d.v4.f32.f32 D, [T, {%f3, %f4, %f5, %f5}], %f6, {%r7, %r6, %r8, %r8};",
            "3d",
            ALL,
            "TEX.LL.AOFFI ",
            "TEX.B.LL.AOFFI ",
        ),
        (
            "level_dc_a1d",
            "tex.level.a1d.v4.f32.f32 D, [T, {%r5, %f3}], %f6, %f5;",
            "a1d",
            ALL,
            "TEX.LL.DC ",
            "TEX.B.LL.DC ",
        ),
        (
            "level_off_a2d",
            "tex.level.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], %f6, {%r6, %r8};",
            "a2d",
            ALL,
            "TEX.LL.AOFFI ",
            "TEX.B.LL.AOFFI ",
        ),
        (
            "dc_a2d",
            "tex.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], %f5;",
            "a2d",
            ALL,
            "TEX.DC ",
            "TEX.B.DC ",
        ),
        (
            "off_dc_a1d",
            "tex.a1d.v4.f32.f32 D, [T, {%r5, %f3}], {%r7}, %f5;",
            "a1d",
            ALL,
            "TEX.AOFFI.DC ",
            "TEX.B.AOFFI.DC ",
        ),
        // `.base` is `tex` without a level.
        (
            "base_2d",
            "tex.base.2d.v4.f32.f32 D, [T, {%f3, %f4}];",
            "2d",
            ALL,
            "TEXS ",
            "TEX.B ",
        ),
        (
            "off_2d",
            "tex.2d.v4.f32.f32 D, [T, {%f3, %f4}], {%r6, %r8};",
            "2d",
            ALL,
            "TEX.AOFFI ",
            "TEX.B.AOFFI ",
        ),
        (
            "off_3d",
            "tex.3d.v4.f32.f32 D, [T, {%f3, %f4, %f5, %f5}], {%r7, %r6, %r8, %r8};",
            "3d",
            ALL,
            "TEX.AOFFI ",
            "TEX.B.AOFFI ",
        ),
        (
            "off_1d",
            "tex.1d.v4.f32.f32 D, [T, {%f3}], {%r7};",
            "1d",
            SLOT,
            "TEX.AOFFI ",
            "",
        ),
        (
            "off_dc_2d",
            "tex.2d.v4.f32.f32 D, [T, {%f3, %f4}], {%r6, %r7}, %f5;",
            "2d",
            ALL,
            "TEX.AOFFI.DC ",
            "TEX.B.AOFFI.DC ",
        ),
        (
            "grad_2d",
            "tex.grad.2d.v4.f32.f32 D, [T, {%f3, %f4}], {%f7, %f8}, {%f8, %f9};",
            "2d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "grad_1d",
            "tex.grad.1d.v4.f32.f32 D, [T, {%f3}], {%f7}, {%f9};",
            "1d",
            SLOT,
            "TXD ",
            "",
        ),
        (
            "ilevel_2d",
            "tex.level.2d.v4.f32.s32 D, [T, {%r14, %r15}], %r9;",
            "2d",
            ALL,
            "TLD.LL.CL ",
            "TLD.B.LL.CL ",
        ),
        (
            "ilevel_1d",
            "tex.level.1d.v4.u32.s32 D, [T, {%r14}], %r9;",
            "1d",
            SLOT,
            "TLD.LL.CL ",
            "",
        ),
    ];
    let mut v = row_cases(table, "tex_", "", |_| true);
    // Some components only (the general forms' masks, TEXS's pairs).
    let mut x = v[0].clone();
    x.name += "_x";
    x.read = Read::X;
    let mut xw = v[2].clone();
    xw.name += "_xw";
    xw.read = Read::Xw;
    v.push(x);
    v.push(xw);
    v
}

/// `tex` with integer coordinates and offsets and/or a level (`lower::select::tex::fetch`):
/// `TLDS.LZ.AOFFI` (2d by slot), `TLD{.LZ|.LL}{.AOFFI}{.CL}` and their `.B` forms; offsets
/// past the 4 bits the unit reads (%r8) and texels off every edge. Then `tex.grad` on arrays
/// and with offsets (`lower::select::tex::grad`: `TXD{.AOFFI}`, `TXD.B{.AOFFI}`).
fn tex_fetch_cases() -> Vec<Case> {
    const ALL: &[Handle] = &[Handle::Ref, Handle::Obj, Handle::Reg];
    let table: Vec<LodRow> = vec![
        (
            "ioff_1d",
            "tex.1d.v4.u32.s32 D, [T, {%r14}], {%r7};",
            "1d",
            ALL,
            "TLD.LZ.AOFFI ",
            "TLD.B.LZ.AOFFI ",
        ),
        (
            "ioff_2d",
            "tex.2d.v4.f32.s32 D, [T, {%r14, %r15}], {%r6, %r8};",
            "2d",
            ALL,
            "TLDS.LZ.AOFFI ",
            "TLD.B.LZ.AOFFI ",
        ),
        (
            "ioff_3d",
            "tex.3d.v4.u32.s32 D, [T, {%r14, %r15, %r9, %r9}], {%r7, %r6, %r8, %r8};",
            "3d",
            ALL,
            "TLD.LZ.AOFFI ",
            "TLD.B.LZ.AOFFI ",
        ),
        (
            "ioff_a1d",
            "tex.a1d.v4.u32.s32 D, [T, {%r5, %r14}], {%r6};",
            "a1d",
            ALL,
            "TLD.LZ.AOFFI ",
            "TLD.B.LZ.AOFFI ",
        ),
        (
            "ioff_a2d",
            "tex.a2d.v4.f32.s32 D, [T, {%r5, %r14, %r15, %r15}], {%r7, %r6};",
            "a2d",
            ALL,
            "TLD.LZ.AOFFI ",
            "TLD.B.LZ.AOFFI ",
        ),
        (
            "ilevel_a1d",
            "tex.level.a1d.v4.u32.s32 D, [T, {%r5, %r14}], %r9;",
            "a1d",
            ALL,
            "TLD.LL.CL ",
            "TLD.B.LL.CL ",
        ),
        (
            "ilevel_a2d",
            "tex.level.a2d.v4.f32.s32 D, [T, {%r5, %r14, %r15, %r15}], %r9;",
            "a2d",
            ALL,
            "TLD.LL.CL ",
            "TLD.B.LL.CL ",
        ),
        (
            "ilevel_off_1d",
            "tex.level.1d.v4.f32.s32 D, [T, {%r14}], %r9, {%r6};",
            "1d",
            ALL,
            "TLD.LL.AOFFI.CL ",
            "TLD.B.LL.AOFFI.CL ",
        ),
        (
            "ilevel_off_2d",
            "tex.level.2d.v4.u32.s32 D, [T, {%r14, %r15}], %r9, {%r7, %r8};",
            "2d",
            ALL,
            "TLD.LL.AOFFI.CL ",
            "TLD.B.LL.AOFFI.CL ",
        ),
        (
            "ilevel_off_3d",
            "tex.level.3d.v4.f32.s32 D, [T, {%r14, %r15, %r9, %r9}], %r9, {%r6, %r7, %r8, %r8};",
            "3d",
            ALL,
            "TLD.LL.AOFFI.CL ",
            "TLD.B.LL.AOFFI.CL ",
        ),
        (
            "ilevel_off_a2d",
            "tex.level.a2d.v4.u32.s32 D, [T, {%r5, %r14, %r15, %r15}], %r9, {%r8, %r6};",
            "a2d",
            ALL,
            "TLD.LL.AOFFI.CL ",
            "TLD.B.LL.AOFFI.CL ",
        ),
        // `tex.grad` with the layer after the coordinates (TXD's order), and offsets in
        // the word after them (layer | offsets << 16).
        (
            "grad_a1d",
            "tex.grad.a1d.v4.f32.f32 D, [T, {%r5, %f3}], {%f7}, {%f9};",
            "a1d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "grad_a2d",
            "tex.grad.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], {%f7, %f8}, {%f8, %f9};",
            "a2d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "grad_off_1d",
            "tex.grad.1d.v4.f32.f32 D, [T, {%f3}], {%f7}, {%f9}, {%r7};",
            "1d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            "grad_off_2d",
            "tex.grad.2d.v4.f32.f32 D, [T, {%f3, %f4}], {%f7, %f8}, {%f8, %f9}, {%r6, %r8};",
            "2d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            "grad_off_a1d",
            "tex.grad.a1d.v4.f32.f32 D, [T, {%r5, %f3}], {%f7}, {%f9}, {%r6};",
            "a1d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            "grad_off_a2d",
            "tex.grad.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], {%f7, %f8}, {%f8, %f9}, {%r7, %r8};",
            "a2d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
    ];
    let mut v = row_cases(table, "tex_", "", |name| {
        name.starts_with("ilevel") || name.starts_with("grad")
    });
    // Some components only (TLDS's pairs, TLD's mask).
    for (k, read) in [(3, Read::X), (6, Read::Xw)] {
        let mut c = v[k].clone();
        c.name += &format!("_{read:?}").to_lowercase();
        c.read = read;
        v.push(c);
    }
    v
}

/// One case per row and handle, named `{prefix}{row}_{handle}`, the instruction after
/// `setup`, all results read, with mip levels where `mips(row name)`.
fn row_cases(table: Vec<LodRow>, prefix: &str, setup: &str, mips: fn(&str) -> bool) -> Vec<Case> {
    let mut v = Vec::new();
    for (name, inst, shape, handles, want, want_reg) in table {
        for &handle in handles {
            let result = if inst.contains(".u32.") { "u32" } else { "f32" };
            v.push(Case {
                name: format!("{prefix}{name}_{handle:?}").to_lowercase(),
                inst: format!("{setup}{inst}"),
                shape: Shape::from_name(shape).unwrap(),
                result,
                handle,
                read: Read::All,
                want: if handle == Handle::Reg {
                    want_reg
                } else {
                    want
                },
                mips: mips(name),
            });
        }
    }
    v
}

/// Cube maps (`tex`, `tex.level`, `tld4`; cube and cube array): the direction
/// `(tid / 4 - 8, (tid & 7) - 3, (tid & 15) - 5)` points at every face (with ties between
/// axes, and through the four layers of the array, past its three).
fn cube_cases() -> Vec<Case> {
    const ALL: &[Handle] = &[Handle::Ref, Handle::Obj, Handle::Reg];
    const DIR: &str = "sub.f32 %f14, %f7, 0f41000000;\n  cvt.rn.f32.s32 %f15, %r6;\n  \
                       cvt.rn.f32.s32 %f5, %r7;\n  ";
    let table: Vec<LodRow> = vec![
        (
            "cube",
            "tex.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}];",
            "cube",
            ALL,
            "TEXS ",
            "TEX.B ",
        ),
        (
            "acube",
            "tex.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}];",
            "acube",
            ALL,
            "TEX ",
            "TEX.B ",
        ),
        (
            "level_cube",
            "tex.level.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}], %f6;",
            "cube",
            ALL,
            "TEXS.LL ",
            "TEX.B.LL ",
        ),
        (
            "level_acube",
            "tex.level.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}], %f6;",
            "acube",
            ALL,
            "TEX.LL ",
            "TEX.B.LL ",
        ),
        // A depth reference (%f8): the general TEX.DC, rb {[handle,] [lod,] ref}.
        (
            "dc_cube",
            "tex.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}], %f8;",
            "cube",
            ALL,
            "TEX.DC ",
            "TEX.B.DC ",
        ),
        (
            "level_dc_cube",
            "tex.level.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}], %f6, %f8;",
            "cube",
            ALL,
            "TEX.LL.DC ",
            "TEX.B.LL.DC ",
        ),
        (
            "dc_acube",
            "tex.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}], %f8;",
            "acube",
            ALL,
            "TEX.DC ",
            "TEX.B.DC ",
        ),
        (
            "level_dc_acube",
            "tex.level.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}], %f6, %f8;",
            "acube",
            ALL,
            "TEX.LL.DC ",
            "TEX.B.LL.DC ",
        ),
        (
            "tld4_cube",
            "tld4.g.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}];",
            "cube",
            ALL,
            "TLD4.G ",
            "TLD4.G.B ",
        ),
        (
            "tld4_acube",
            "tld4.a.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}];",
            "acube",
            ALL,
            "TLD4.A ",
            "TLD4.A.B ",
        ),
    ];
    let mut v = row_cases(table, "", DIR, |name| name.starts_with("level"));
    // Some components only (TEXS's pairs, the general forms' masks).
    for (k, read) in [(0, Read::X), (3, Read::Xw)] {
        let mut c = v[k].clone();
        c.name += &format!("_{read:?}").to_lowercase();
        c.read = read;
        v.push(c);
    }
    v
}

fn cases() -> Vec<Case> {
    let mut v = tld4_cases();
    v.extend(tex_lod_cases());
    v.extend(cube_cases());
    v.extend(tex_fetch_cases());
    v.extend(grad_int_cases());
    v.extend(quad_grad_cases());
    v
}

fn ours(case: &Case) -> leafold::driver::Output {
    let opts = Options {
        file_name: format!("{}.ptx", case.name),
        emit: Emit::Sass,
        ..Options::default()
    };
    compile(&case.ptx(), &opts).unwrap_or_else(|d| {
        panic!(
            "{}:\n{}\n{}",
            case.name,
            case.ptx(),
            leafold::error::render_all(&d.0)
        )
    })
}

#[test]
fn eval_equals_simulator_on_random_texels() {
    for case in cases() {
        let name = &case.name;
        let out = ours(&case);
        let module = common::ir_module(format!("{name}.ptx"), case.ptx());
        let mut distinct = std::collections::BTreeSet::new();
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
            // Not vacuous: the threads read different texels (a depth compare of one
            // component has two values).
            let bytes = &got.region(OUT).unwrap()[..THREADS as usize * 16];
            distinct.extend(bytes.chunks(16).map(<[u8]>::to_vec));
        }
        assert!(distinct.len() > 1, "{name}: {distinct:?}");
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
    let Some(oracle) = Oracle::for_test("compile_tex2") else {
        return;
    };
    for case in cases() {
        let name = &case.name;
        let out = ours(&case);
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
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

/// Listings of one case per form (read when accepted: TLD4S's pairs, the BFI-packed
/// offsets, the `{handle, offsets, reference}` triple of TLD4.B, the clamped layer).
#[test]
fn listings_snapshot() {
    let text = listings(&[
        "tld4_r_2d_f32_ref_all",
        "tld4_r_2d_f32_ref_all_off_dc",
        "tld4_g_2d_f32_obj_x_off",
        "tld4_r_2d_f32_reg_all_off_dc",
        "tld4_b_a2d_f32_ref_all_off_dc",
        "tex_level_dc_2d_ref",
        "tex_off_dc_2d_ref",
        "tex_grad_2d_reg",
        "tex_ilevel_2d_obj",
    ]);
    insta::assert_snapshot!("tex2_listings", text);
}

/// Our listings of the named cases, one after the other.
fn listings(names: &[&str]) -> String {
    let mut text = String::new();
    for name in names {
        let case = cases().into_iter().find(|c| c.name == *name).unwrap();
        text += &ours(&case).sass;
    }
    text
}

/// Listings of the cube forms and 3d offsets (read when accepted: the FMNMX/MUFU.RCP/FMUL
/// projection before each fetch, TEXS's `{x', y'}` pair and `{z', lod}`, ARRAY_CUBE's
/// `{layer, x', y', z'}` quad, the two BFIs of a 3d offset vector).
#[test]
fn cube_and_offset3_listings_snapshot() {
    let text = listings(&[
        "cube_ref",
        "level_cube_obj",
        "acube_reg",
        "tld4_acube_ref",
        "tex_off_3d_ref",
        "tex_off_3d_reg",
    ]);
    insta::assert_snapshot!("tex2_cube_listings", text);
}

/// Listings of the general forms with a level, offsets and a reference together (read when
/// accepted: rb is `{lod, offsets, ref}` for a slot and `{handle, lod, offsets, ref}` for a
/// register handle, PTX's operand order, as ptxas 11.8 has it; TEXS.LL.DC's `{lod, ref}`).
#[test]
fn level_offset_reference_listings_snapshot() {
    let text = listings(&[
        "tex_level_dc_2d_ref",
        "tex_level_off_dc_2d_ref",
        "tex_level_off_dc_2d_reg",
        "tex_level_dc_a1d_obj",
        "tex_dc_a2d_reg",
    ]);
    insta::assert_snapshot!("tex2_level_offset_reference_listings", text);
}

/// Listings of the integer-coordinate forms with offsets and levels and of the gradient
/// forms and cube maps with a reference (read when accepted: TLDS.LZ.AOFFI's `{x, y}` pair and packed offsets, rb
/// `{lod, offsets}` by slot and `{handle, lod, offsets}` for a register handle, the 1d
/// offset as it is, 3d's two BFIs; TXD's layer after the coordinates, `BFI w, off, 0xc10,
/// layer` with offsets; TEX.LL.DC CUBE's rb `{lod, ref}`).
#[test]
fn integer_fetch_listings_snapshot() {
    let text = listings(&[
        "tex_ioff_2d_ref",
        "tex_ioff_1d_reg",
        "tex_ioff_a2d_obj",
        "tex_ilevel_a1d_ref",
        "tex_ilevel_off_3d_reg",
        "tex_ioff_2d_ref_x",
        "tex_grad_a2d_ref",
        "tex_grad_off_2d_obj",
        "tex_grad_off_a1d_reg",
        "level_dc_cube_ref",
        "dc_acube_reg",
    ]);
    insta::assert_snapshot!("tex2_integer_fetch_listings", text);
}

/// Forms leafold does not lower get a diagnostic naming them, with file, line and column,
/// not a panic.
#[test]
fn unsupported_forms_get_a_diagnostic() {
    for (inst, what, place) in [
        (
            "tex.grad.cube.v4.f32.f32 {%f2, %f3, %f4, %f5}, [t, {%f1, %f1, %f1, %f1}], \
             {%f1, %f1, %f1, %f1}, {%f1, %f1, %f1, %f1}, {%r1, %r1};",
            "tex.cube with offsets",
            "bad.ptx:12:2",
        ),
        (
            "tex.grad.acube.v4.f32.f32 {%f2, %f3, %f4, %f5}, [t, {%r1, %f1, %f1, %f1}], \
             {%f1, %f1, %f1, %f1}, {%f1, %f1, %f1, %f1}, {%r1, %r1};",
            "tex.acube with offsets",
            "bad.ptx:12:2",
        ),
        (
            // ptxas 11.8 refuses it too ("Illegal modifier '.3d'").
            "tex.3d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [t, {%f1, %f1, %f1, %f1}], %f1;",
            "tex.3d takes no depth-compare reference",
            "bad.ptx:12:2",
        ),
    ] {
        let ptx = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.global .texref t;\n\
             .visible .entry k(.param .u64 out)\n{{\n .reg .f32 %f<8>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n\
             \x20mov.f32 %f1, 0f3F000000;\n mov.u32 %r1, 1;\n {inst}\n\
             \x20ld.param.u64 %rd1, [out];\n st.global.f32 [%rd1], %f2;\n ret;\n}}\n"
        );
        let opts = Options {
            file_name: "bad.ptx".into(),
            emit: Emit::Sass,
            ..Options::default()
        };
        let e = compile(&ptx, &opts).unwrap_err();
        let text = leafold::error::render_all(&e.0);
        assert!(text.contains(what), "{text}");
        assert!(text.contains(place), "{text}");
    }
}

/// `tex.grad` that ptxas 11.8 emulates across each quad (`lower::select::tex::quad`: four
/// passes of SHFL.IDX, FSWZADD.NDV and TEX.NDV between SAM and RAM): 3d, and 2d/a1d/a2d
/// with a depth reference. The gradients differ from lane to lane (%f7 = tid / 4), so each
/// pass must hand its quad lane `l`'s own; the coordinates grow with tid, so `(c + d) - c`
/// rounds away from `d` in some lanes (the model `ir::eval` shares with the simulator).
fn quad_grad_cases() -> Vec<Case> {
    const ALL: &[Handle] = &[Handle::Ref, Handle::Obj, Handle::Reg];
    let table: Vec<LodRow> = vec![
        (
            "qgrad_3d",
            "tex.grad.3d.v4.f32.f32 D, [T, {%f3, %f4, %f5, %f5}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7};",
            "3d",
            ALL,
            "TEX.NDV ",
            "TEX.B.NDV ",
        ),
        (
            "qgrad_dc_2d",
            "tex.grad.2d.v4.f32.f32 D, [T, {%f3, %f4}], {%f7, %f8}, {%f8, %f9}, %f5;",
            "2d",
            ALL,
            "TEX.DC.NDV ",
            "TEX.B.DC.NDV ",
        ),
        (
            "qgrad_dc_a1d",
            "tex.grad.a1d.v4.f32.f32 D, [T, {%r5, %f3}], {%f7}, {%f9}, %f5;",
            "a1d",
            ALL,
            "TEX.DC.NDV ",
            "TEX.B.DC.NDV ",
        ),
        (
            "qgrad_dc_a2d",
            "tex.grad.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], {%f7, %f8}, {%f8, %f9}, %f5;",
            "a2d",
            ALL,
            "TEX.DC.NDV ",
            "TEX.B.DC.NDV ",
        ),
        (
            "qgrad_off_3d",
            "tex.grad.3d.v4.f32.f32 D, [T, {%f3, %f4, %f5, %f5}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7}, {%r6, %r7, %r8, %r8};",
            "3d",
            ALL,
            "TEX.AOFFI.NDV ",
            "TEX.B.AOFFI.NDV ",
        ),
        (
            "qgrad_off_dc_2d",
            "tex.grad.2d.v4.f32.f32 D, [T, {%f3, %f4}], {%f7, %f8}, {%f8, %f9}, {%r6, %r7}, %f5;",
            "2d",
            ALL,
            "TEX.AOFFI.DC.NDV ",
            "TEX.B.AOFFI.DC.NDV ",
        ),
        (
            "qgrad_off_dc_a1d",
            "tex.grad.a1d.v4.f32.f32 D, [T, {%r5, %f3}], {%f7}, {%f9}, {%r8}, %f5;",
            "a1d",
            ALL,
            "TEX.AOFFI.DC.NDV ",
            "TEX.B.AOFFI.DC.NDV ",
        ),
        (
            "qgrad_off_dc_a2d",
            "tex.grad.a2d.v4.f32.f32 D, [T, {%r5, %f3, %f4, %f4}], {%f7, %f8}, {%f8, %f9}, {%r7, %r6}, %f5;",
            "a2d",
            ALL,
            "TEX.AOFFI.DC.NDV ",
            "TEX.B.AOFFI.DC.NDV ",
        ),
    ];
    let mut v = row_cases(table, "tex_", "", |_| true);
    // One component only (TEX's mask, one result word shuffled per pass).
    let mut x = v[0].clone();
    x.name += "_x";
    x.read = Read::X;
    v.push(x);
    v.extend(cube_grad_cases());
    v
}

/// `tex.grad.cube`/`.acube` (with and without a reference): emulated across the quad as
/// the other forms, each lane's perturbed direction projected (FMNMX/MUFU.RCP/FMUL) before
/// `TEX.NDV`. The direction of [`cube_cases`] (every face, ties, the layer past the last)
/// with gradients that differ per lane and reach across levels (16×16 faces, 3 levels).
fn cube_grad_cases() -> Vec<Case> {
    const ALL: &[Handle] = &[Handle::Ref, Handle::Obj, Handle::Reg];
    const DIR: &str = "sub.f32 %f14, %f7, 0f41000000;\n  cvt.rn.f32.s32 %f15, %r6;\n  \
                       cvt.rn.f32.s32 %f5, %r7;\n  ";
    let table: Vec<LodRow> = vec![
        (
            "qgrad_cube",
            "tex.grad.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7};",
            "cube",
            ALL,
            "TEX.NDV ",
            "TEX.B.NDV ",
        ),
        (
            "qgrad_acube",
            "tex.grad.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}], {%f9, %f7, %f8, %f8}, {%f7, %f7, %f9, %f9};",
            "acube",
            ALL,
            "TEX.NDV ",
            "TEX.B.NDV ",
        ),
        (
            "qgrad_dc_cube",
            "tex.grad.cube.v4.f32.f32 D, [T, {%f14, %f15, %f5, %f5}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7}, %f6;",
            "cube",
            ALL,
            "TEX.DC.NDV ",
            "TEX.B.DC.NDV ",
        ),
        (
            "qgrad_dc_acube",
            "tex.grad.acube.v4.f32.f32 D, [T, {%r5, %f14, %f15, %f5}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7}, %f6;",
            "acube",
            ALL,
            "TEX.DC.NDV ",
            "TEX.B.DC.NDV ",
        ),
    ];
    let mut v = row_cases(table, "tex_", DIR, |_| true);
    // Two components (the mask; two result words shuffled per pass).
    let mut xw = v[3].clone();
    xw.name += "_xw";
    xw.read = Read::Xw;
    v.push(xw);
    v
}

/// Listings of the quad-emulated cube gradients (read when accepted: per pass the
/// FSWZADD.NDV pairs on x, y, z, then FMNMX |x|,|y|; FMNMX m,|z|; MUFU.RCP; three FMULs
/// before TEX.NDV on CUBE/ARRAY_CUBE, the layer in q.0 for the array).
#[test]
fn quad_grad_cube_listings_snapshot() {
    let text = listings(&["tex_qgrad_cube_ref", "tex_qgrad_dc_acube_reg"]);
    insta::assert_snapshot!("tex2_quad_grad_cube_listings", text);
}

/// Listings of the quad-emulated gradients (read when accepted: per pass SAM, the SHFL.IDX
/// of lane l's operands, FSWZADD.NDV ZPPPZPPP/ZPZPPPPP, TEX.NDV, lane 0's result shuffled,
/// RAM, the lane-masked MOVs).
#[test]
fn quad_grad_listings_snapshot() {
    let text = listings(&[
        "tex_qgrad_3d_ref",
        "tex_qgrad_dc_a2d_obj",
        "tex_qgrad_3d_ref_x",
    ]);
    insta::assert_snapshot!("tex2_quad_grad_listings", text);
}

/// Listings of the quad-emulated gradients through a register handle and with offsets
/// (read when accepted: per pass the handle shuffled with the offsets and the reference
/// into one aligned rb vector, pass 0 included; a lone offset vector lane 0's own in pass
/// 0; TEX.B's `0x0` for the slot; 3d integer coordinates' bits added as floats).
#[test]
fn quad_grad_register_offset_listings_snapshot() {
    let text = listings(&[
        "tex_qgrad_3d_reg",
        "tex_qgrad_off_3d_ref",
        "tex_qgrad_off_dc_2d_reg",
        "tex_igrad_3d_obj",
    ]);
    insta::assert_snapshot!("tex2_quad_grad_register_offset_listings", text);
}

/// `tex.grad` with integer coordinates (`lower::select::tex::grad`: ptxas 11.8 hands their
/// bits to TXD unconverted, 1d as 1D, so the unit samples at the floats with those bits:
/// %r10/%r11 are the bits of %f3/%f4, %r14 tiny denormals), and `tex.grad.1d` with a depth
/// reference (which ptxas drops: TXD on 2D without `.DC`).
fn grad_int_cases() -> Vec<Case> {
    const ALL: &[Handle] = &[Handle::Ref, Handle::Obj, Handle::Reg];
    const BITS: &str = "mov.b32 %r10, %f3;\n  mov.b32 %r11, %f4;\n  ";
    let table: Vec<LodRow> = vec![
        (
            "igrad_1d",
            "tex.grad.1d.v4.f32.s32 D, [T, {%r10}], {%f7}, {%f9};",
            "1d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "igrad_off_1d",
            "tex.grad.1d.v4.f32.s32 D, [T, {%r10}], {%f7}, {%f9}, {%r7};",
            "1d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            "igrad_2d",
            "tex.grad.2d.v4.f32.s32 D, [T, {%r10, %r11}], {%f7, %f8}, {%f8, %f9};",
            "2d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "igrad_off_2d",
            "tex.grad.2d.v4.f32.s32 D, [T, {%r10, %r11}], {%f7, %f8}, {%f8, %f9}, {%r6, %r8};",
            "2d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            "igrad_a1d",
            "tex.grad.a1d.v4.f32.s32 D, [T, {%r5, %r10}], {%f7}, {%f9};",
            "a1d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "igrad_off_a1d",
            "tex.grad.a1d.v4.f32.s32 D, [T, {%r5, %r10}], {%f7}, {%f9}, {%r6};",
            "a1d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            "igrad_a2d",
            "tex.grad.a2d.v4.f32.s32 D, [T, {%r5, %r10, %r14, %r14}], {%f7, %f8}, {%f8, %f9};",
            "a2d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "igrad_off_a2d",
            "tex.grad.a2d.v4.f32.s32 D, [T, {%r5, %r11, %r10, %r10}], {%f7, %f8}, {%f8, %f9}, {%r7, %r8};",
            "a2d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
        (
            // 3d: emulated across the quad on the integers' bits (`quad`).
            "igrad_3d",
            "tex.grad.3d.v4.f32.s32 D, [T, {%r10, %r11, %r10, %r10}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7};",
            "3d",
            ALL,
            "TEX.NDV ",
            "TEX.B.NDV ",
        ),
        (
            "igrad_off_3d",
            "tex.grad.3d.v4.f32.s32 D, [T, {%r11, %r10, %r11, %r11}], {%f7, %f8, %f9, %f9}, {%f8, %f9, %f7, %f7}, {%r7, %r6, %r8, %r8};",
            "3d",
            ALL,
            "TEX.AOFFI.NDV ",
            "TEX.B.AOFFI.NDV ",
        ),
        (
            "grad_dc_1d",
            "tex.grad.1d.v4.f32.f32 D, [T, {%f3}], {%f7}, {%f9}, %f5;",
            "1d",
            ALL,
            "TXD ",
            "TXD.B ",
        ),
        (
            "grad_off_dc_1d",
            "tex.grad.1d.v4.f32.f32 D, [T, {%f3}], {%f7}, {%f9}, {%r7}, %f5;",
            "1d",
            ALL,
            "TXD.AOFFI ",
            "TXD.B.AOFFI ",
        ),
    ];
    let mut v = row_cases(table, "tex_", BITS, |_| true);
    // Some components only (TXD's mask).
    let mut x = v[0].clone();
    x.name += "_x";
    x.read = Read::X;
    v.push(x);
    v
}

/// Listings of the integer-coordinate gradient forms and of `tex.grad.1d` with a reference
/// (read when accepted: 1d integer as TXD 1D with ra `{x}` or `{x, BFI off, 0xc10, RZ}` and
/// rb `{dx, dy}`; the 1d reference not read; the layer after the coordinates).
#[test]
fn grad_int_listings_snapshot() {
    let text = listings(&[
        "tex_igrad_1d_ref",
        "tex_igrad_off_1d_reg",
        "tex_igrad_off_2d_obj",
        "tex_igrad_a1d_ref",
        "tex_grad_dc_1d_ref",
        "tex_grad_off_dc_1d_reg",
    ]);
    insta::assert_snapshot!("tex2_grad_int_listings", text);
}
