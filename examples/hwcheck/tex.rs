//! Generated texture kernels for the hardware check: one bindless texture (a texture object
//! passed as a `.u64` parameter), random shape, texel format, channel count, read mode,
//! filtering, address modes and coordinate mode, and one fetch per thread at coordinates read
//! from a buffer: `tex` with float coordinates (with or without offsets), `tex` with integer
//! coordinates, `tex.level` on a mipmapped texture, `tld4`, or a kernel of `txq` size queries.
//!
//! What `ir::eval` returns for these is `crate::texture`'s model (the CUDA C++ Programming
//! Guide's texture-fetching appendix: 8-bit fixed-point filter weights, the address modes on
//! texel indices, the cube-face table). A GPU's texture unit is the ground truth; the replay
//! (`scripts/hwcheck.py`) builds the same texture through the driver (a CUDA array, or linear
//! memory for integer-coordinate 1D fetches, as `tex1Dfetch` reads) from the exported texel
//! bytes and description, and compares the results byte for byte.
//!
//! The description travels as one line of `key=value` words (`desc_line`); the texel bytes in
//! the model's layout (face by face, then z, y, x), which is also the layout of a CUDA 3D copy
//! into an array whose depth is its layers or cube faces.
use leafold::error::SourceFile;
use leafold::ir::{self, eval};
use leafold::texture::{
    AddressMode, ChannelType, FilterMode, ReadMode, Shape, Texture, TextureDesc,
};
use leafold::verify::Rng;

/// Threads per generated launch (one CTA): each reads its coordinates and writes four words.
pub const THREADS: u32 = 128;

/// What the generated kernel does with the texture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// `tex` with `.f32` coordinates; offsets when `true`.
    Sample(bool),
    /// `tex` with `.s32` coordinates (TLD).
    Fetch,
    /// `tex.level` with `.f32` coordinates on a mipmapped texture.
    Level,
    /// `tld4.{r,g,b,a}` on a 2D texture.
    Gather(u8),
    /// `txq` of the sizes (width, height, depth), one thread.
    Query,
}

/// One generated case: the PTX, its texture and the coordinates buffer.
pub struct Case {
    pub ptx: String,
    pub texture: Texture,
    /// Linear memory rather than a CUDA array (integer-coordinate 1D fetches).
    pub linear: bool,
    pub coords: Vec<u8>,
    pub op: Op,
}

fn pick<T: Copy>(rng: &mut Rng, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

/// The description line `scripts/hwcheck.py` reads.
pub fn desc_line(c: &Case) -> String {
    let d = &c.texture.desc;
    let s = &d.sampler;
    let addr = |m: AddressMode| match m {
        AddressMode::Wrap => 0,
        AddressMode::Clamp => 1,
        AddressMode::Mirror => 2,
        AddressMode::Border => 3,
    };
    format!(
        "shape={} w={} h={} d={} layers={} levels={} mipfilter={} fmt={} ch={} bytes={} int_read={} filter={} addr={},{},{} normcoords={} linear={}",
        d.shape.name(),
        d.width,
        d.height,
        d.depth,
        d.layers,
        d.mip_levels,
        u8::from(s.mip_filter == FilterMode::Linear),
        d.channel_type.cuda_format(),
        d.channels,
        d.channel_type.bytes(),
        u8::from(d.read_mode == ReadMode::ElementType),
        u8::from(s.filter == FilterMode::Linear),
        addr(s.address[0]),
        addr(s.address[1]),
        addr(s.address[2]),
        u8::from(s.normalized_coords),
        u8::from(c.linear),
    )
}

/// A float coordinate along a dimension of `n` texels: mostly inside and just outside the
/// texture, often on a texel centre, edge or a 1/256 step (the filter weights' grid), rarely
/// far away; normalized coordinates divide by `n`.
fn coord(rng: &mut Rng, n: u32, normalized: bool) -> f32 {
    let n = n as f32;
    let u = match rng.below(8) {
        0 => rng.below(n as u64 + 4) as f32 - 2.0 + 0.5,
        1 => rng.below(n as u64 + 4) as f32 - 2.0,
        2 => (rng.below((n as u64 + 4) * 256) as f32) / 256.0 - 2.0,
        3 => (rng.below((n as u64 + 4) * 512) as f32) / 512.0 - 2.0,
        4 => (rng.below(2001) as f32 - 1000.0) * n / 7.0,
        _ => {
            let r = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            r * (n + 4.0) - 2.0
        }
    };
    if normalized {
        u / n
    } else {
        u
    }
}

/// A cube-map direction component: mostly in [-1, 1], sometimes exactly ±1 or 0, or larger.
fn cube_coord(rng: &mut Rng) -> f32 {
    match rng.below(8) {
        0 => pick(rng, &[1.0, -1.0, 0.0, 0.5, -0.5]),
        1 => (rng.below(4001) as f32 - 2000.0) / 256.0,
        _ => {
            let r = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            r * 2.0 - 1.0
        }
    }
}

/// The case of `seed`.
pub fn generate(seed: u64) -> Case {
    let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x7e8);
    let op = match rng.below(20) {
        0..=8 => Op::Sample(rng.below(4) == 0),
        9..=11 => Op::Fetch,
        16..=19 => Op::Level,
        12..=14 => Op::Gather(rng.below(4) as u8),
        _ => Op::Query,
    };
    let shape = match op {
        Op::Gather(_) => Shape::D2,
        Op::Fetch => pick(
            &mut rng,
            &[
                Shape::D1,
                Shape::D1,
                Shape::D2,
                Shape::D3,
                Shape::A1,
                Shape::A2,
            ],
        ),
        Op::Sample(true) => pick(
            &mut rng,
            &[Shape::D1, Shape::D2, Shape::D3, Shape::A1, Shape::A2],
        ),
        _ => pick(
            &mut rng,
            &[
                Shape::D1,
                Shape::D2,
                Shape::D3,
                Shape::A1,
                Shape::A2,
                Shape::Cube,
                Shape::ACube,
            ],
        ),
    };
    let channel_type = pick(&mut rng, &ChannelType::ALL);
    let channels = pick(&mut rng, &[1u8, 2, 4]);
    let size = match shape {
        Shape::Cube | Shape::ACube => {
            let w = 1 + rng.below(6) as u32;
            [w, w, 1]
        }
        _ => [
            1 + rng.below(12) as u32,
            1 + rng.below(8) as u32,
            1 + rng.below(5) as u32,
        ],
    };
    let mut desc = TextureDesc::new(shape, size, channel_type, channels);
    if shape.is_layered() {
        desc.layers = 1 + rng.below(4) as u32;
    }
    if op == Op::Level || (op == Op::Query && rng.below(2) == 0) {
        let dims = shape.dims().min(3);
        let largest = [desc.width, desc.height, desc.depth][..dims.max(1)]
            .iter()
            .copied()
            .max()
            .unwrap_or(1);
        let most = 32 - largest.leading_zeros(); // floor(log2) + 1
        desc.mip_levels = 1 + rng.below(most as u64) as u32;
        if rng.below(2) == 0 {
            desc.sampler.mip_filter = FilterMode::Linear;
        }
    }
    let small_int = matches!(
        channel_type,
        ChannelType::U8 | ChannelType::U16 | ChannelType::S8 | ChannelType::S16
    );
    if small_int && rng.below(2) == 0 {
        desc.read_mode = ReadMode::NormalizedFloat;
    }
    let float_result = channel_type.is_float() || desc.read_mode == ReadMode::NormalizedFloat;
    if !float_result {
        desc.sampler.mip_filter = FilterMode::Point;
    }
    let linear = op == Op::Fetch && shape == Shape::D1;
    let s = &mut desc.sampler;
    s.normalized_coords = shape.is_cube() || (!linear && rng.below(2) == 0);
    if float_result && !linear && rng.below(2) == 0 {
        s.filter = FilterMode::Linear;
    }
    for a in s.address.iter_mut() {
        *a = if linear {
            AddressMode::Clamp
        } else if s.normalized_coords || rng.below(8) == 0 {
            pick(
                &mut rng,
                &[
                    AddressMode::Wrap,
                    AddressMode::Clamp,
                    AddressMode::Mirror,
                    AddressMode::Border,
                ],
            )
        } else {
            pick(&mut rng, &[AddressMode::Clamp, AddressMode::Border])
        };
    }
    let normalized = s.normalized_coords;
    let texture = Texture::random(desc.clone(), seed ^ 0x51ed);

    // Coordinates: eight words per thread, as the kernel reads them (four coordinate words,
    // then the level of detail of `tex.level`).
    let mut coords = Vec::with_capacity(THREADS as usize * 32);
    for _ in 0..THREADS {
        let mut w = [0u32; 8];
        let levels = desc.mip_levels;
        w[4] = match rng.below(4) {
            0 => rng.below(levels as u64 + 2) as f32 - 1.0,
            1 => (rng.below((levels as u64 + 2) * 256) as f32) / 256.0 - 1.0,
            _ => {
                let r = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
                r * (levels as f32 + 2.0) - 1.0
            }
        }
        .to_bits();
        let dims = [desc.width, desc.height, desc.depth];
        match op {
            Op::Fetch => {
                let layer = rng.below(desc.layers as u64 + 2) as i32 - 1;
                let c = |rng: &mut Rng, n: u32| rng.below(n as u64 + 4) as i32 - 2;
                match shape {
                    Shape::A1 => {
                        w[0] = layer as u32;
                        w[1] = c(&mut rng, dims[0]) as u32;
                    }
                    Shape::A2 => {
                        w[0] = layer as u32;
                        w[1] = c(&mut rng, dims[0]) as u32;
                        w[2] = c(&mut rng, dims[1]) as u32;
                    }
                    _ => {
                        for (k, n) in dims.iter().enumerate().take(shape.dims()) {
                            w[k] = c(&mut rng, *n) as u32;
                        }
                    }
                }
            }
            _ => match shape {
                Shape::Cube => {
                    for x in w.iter_mut().take(3) {
                        *x = cube_coord(&mut rng).to_bits();
                    }
                }
                Shape::ACube => {
                    w[0] = rng.below(desc.layers as u64 + 1) as u32;
                    for x in w.iter_mut().take(4).skip(1) {
                        *x = cube_coord(&mut rng).to_bits();
                    }
                }
                Shape::A1 | Shape::A2 => {
                    w[0] = rng.below(desc.layers as u64 + 1) as u32;
                    for k in 0..shape.dims() {
                        w[1 + k] = coord(&mut rng, dims[k], normalized).to_bits();
                    }
                }
                _ => {
                    for k in 0..shape.dims() {
                        w[k] = coord(&mut rng, dims[k], normalized).to_bits();
                    }
                }
            },
        }
        for x in w {
            coords.extend_from_slice(&x.to_le_bytes());
        }
    }

    let dty = if float_result {
        "f32"
    } else if channel_type.is_signed() {
        "s32"
    } else {
        "u32"
    };
    let list = match shape {
        Shape::D1 => "{%r1}",
        Shape::D2 => "{%r1, %r2}",
        Shape::A1 => "{%r1, %r2}",
        _ => "{%r1, %r2, %r3, %r4}",
    };
    let body = match op {
        Op::Sample(off) => {
            let offsets = if off {
                let o = |rng: &mut Rng| rng.below(16) as i32 - 8;
                let n = match shape {
                    Shape::D1 | Shape::A1 => 1,
                    Shape::D2 | Shape::A2 => 2,
                    _ => 3,
                };
                let vals: Vec<String> = (0..4)
                    .map(|k| {
                        if k < n {
                            o(&mut rng).to_string()
                        } else {
                            "0".into()
                        }
                    })
                    .collect();
                let regs = match n {
                    1 => "%r9",
                    2 => "{%r9, %r10}",
                    _ => "{%r9, %r10, %r11, %r12}",
                };
                format!(
                    " mov.b32 %r9, {};\n mov.b32 %r10, {};\n mov.b32 %r11, {};\n mov.b32 %r12, {};\n",
                    vals[0], vals[1], vals[2], vals[3]
                ) + &format!(" tex.{}.v4.{dty}.f32 {{%r5, %r6, %r7, %r8}}, [%rd1, {list}], {regs};\n", shape.name())
            } else {
                format!(
                    " tex.{}.v4.{dty}.f32 {{%r5, %r6, %r7, %r8}}, [%rd1, {list}];\n",
                    shape.name()
                )
            };
            offsets
        }
        Op::Level => format!(
            " tex.level.{}.v4.{dty}.f32 {{%r5, %r6, %r7, %r8}}, [%rd1, {list}], %r13;\n",
            shape.name()
        ),
        Op::Fetch => format!(
            " tex.{}.v4.{dty}.s32 {{%r5, %r6, %r7, %r8}}, [%rd1, {list}];\n",
            shape.name()
        ),
        Op::Gather(c) => format!(
            " tld4.{}.2d.v4.{dty}.f32 {{%r5, %r6, %r7, %r8}}, [%rd1, {list}];\n",
            ["r", "g", "b", "a"][c as usize]
        ),
        Op::Query => String::new(),
    };
    let ptx = if op == Op::Query {
        // Only the sizes: a GPU's JIT (an H200, 2026-11-30) drops any kernel that queries
        // `channel_data_type`, `channel_order`, `normalized_coords`, `array_size`,
        // `num_mipmap_levels` or `num_samples` on a bindless handle (the module loads,
        // `cuModuleGetFunction` says not found), so such a kernel checks nothing. The other
        // attributes stay covered by the unit and snapshot tests.
        let qs = ["width", "height", "depth"];
        let mut b = String::new();
        for (k, q) in qs.iter().enumerate() {
            b.push_str(&format!(
                " txq.{q}.b32 %r5, [%rd1];\n st.global.b32 [%rd3+{}], %r5;\n",
                4 * k
            ));
        }
        format!(
            "{HEADER} ld.param.u64 %rd1, [tex];\n ld.param.u64 %rd3, [outp];\n cvta.to.global.u64 %rd3, %rd3;\n mov.u32 %r0, %tid.x;\n setp.ne.u32 %p1, %r0, 0;\n @%p1 bra DONE;\n{b}DONE:\n ret;\n}}\n"
        )
    } else {
        format!(
            "{HEADER} ld.param.u64 %rd1, [tex];\n ld.param.u64 %rd2, [inp];\n ld.param.u64 %rd3, [outp];\n\
             \x20cvta.to.global.u64 %rd2, %rd2;\n cvta.to.global.u64 %rd3, %rd3;\n\
             \x20mov.u32 %r0, %tid.x;\n mul.wide.u32 %rd4, %r0, 32;\n add.s64 %rd5, %rd2, %rd4;\n\
             \x20ld.global.v4.b32 {{%r1, %r2, %r3, %r4}}, [%rd5];\n ld.global.b32 %r13, [%rd5+16];\n{body}\
             \x20mul.wide.u32 %rd7, %r0, 16;\n add.s64 %rd6, %rd3, %rd7;\n st.global.v4.b32 [%rd6], {{%r5, %r6, %r7, %r8}};\n ret;\n}}\n"
        )
    };
    Case {
        ptx,
        texture,
        linear,
        coords,
        op,
    }
}

/// Run `case` through `ir::eval` on its launch: one CTA, the texture object in the first
/// parameter, the coordinates in region 0 (at `1 << 32`) and the results in region 1 (at
/// `2 << 32`, 16 bytes a thread). Returns the launch and what the reference left.
pub fn evaluate(case: &Case) -> Result<(eval::Launch, eval::RunOutput), String> {
    let file = SourceFile::new("tex".to_string(), case.ptx.clone());
    let (ast, _) = leafold::ptx::parse_and_check(&file).map_err(|e| format!("{e:?}"))?;
    let module = ir::build(&ast, &file).map_err(|e| format!("{e:?}"))?;
    let mut launch = eval::Launch::new([1, 1, 1], [THREADS, 1, 1]);
    let handle = launch.textures.add_object(case.texture.clone());
    let (inp, outp) = (1u64 << 32, 2u64 << 32);
    for v in [handle, inp, outp] {
        launch.params.extend_from_slice(&v.to_le_bytes());
    }
    launch.global.push(eval::GlobalRegion {
        base: inp,
        bytes: case.coords.clone(),
    });
    launch.global.push(eval::GlobalRegion {
        base: outp,
        bytes: vec![0; THREADS as usize * 16],
    });
    let out = eval::run(&module, "k", &launch).map_err(|e| e.to_string())?;
    Ok((launch, out))
}

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\n\
.visible .entry k(.param .u64 tex, .param .u64 inp, .param .u64 outp)\n{\n\
 .reg .b32 %r<16>;\n .reg .b64 %rd<8>;\n .reg .pred %p<2>;\n\n";
