//! Texture descriptions as text: what `leafold verify --texture NAME=SPEC` takes, and the
//! description `verify` uses for a texture the user did not describe.
//!
//! In: a string. Out: a [`TextureDesc`] (valid: [`TextureDesc::validate`] passed) or a
//! [`SpecError`] whose message names the texture, the offending word and what was expected.
//! [`format`] writes a description back in the same syntax (`parse(format(d)) == d` for
//! every valid `d` whose border colour is written exactly by `{}`).
//!
//! # Syntax
//!
//! ```text
//! NAME=SHAPE:SIZE,FORMAT[,OPTION]...
//!
//! SHAPE   1d | 2d | 3d | a1d | a2d | cube | acube          (PTX's geometries)
//! SIZE    W | WxH | WxHxD, as many sizes as the shape has dimensions (a1d: W, a2d: WxH;
//!         cube and acube: W, the side of a square face)
//! FORMAT  TYPE[xC]   TYPE: u8 u16 u32 s8 s16 s32 f16 f32; C channels: 1 (default), 2, 4
//! OPTION  clamp | wrap | mirror | border       address mode of every dimension (clamp)
//!         addr0=MODE | addr1=MODE | addr2=MODE  address mode of dimension x, y or z
//!         bordercolor=R/G/B/A                  border colour (0/0/0/0)
//!         point | linear                       filter (point)
//!         norm | unnorm                        normalized coordinates (unnorm)
//!         element | nfloat                     read 8/16-bit integers as integers or as
//!                                              normalized floats (element)
//!         layers=N                             array layers of a1d/a2d/acube (1)
//!         mips=N                               mip levels (1)
//!         mipfilter=point|linear               filter between mip levels (point)
//!         compare=off|never|lt|eq|le|gt|ne|ge|always   depth compare (off)
//!         samples=N                            samples per texel of a multisample 2d/a2d
//!                                              texture (1; `tex.2dms`/`tex.a2dms`)
//! ```
//!
//! NAME is a `.texref`, a `.u64` parameter holding a texture object, or `p+OFF` for the
//! texture object a kernel loads `OFF` bytes past where pointer parameter `p` points.
//! For example `img=2d:64x64,u8x4,nfloat,linear,norm,wrap` or `vol=3d:32x32x32,f32`.
//! Later options override earlier ones. The combinations CUDA refuses are errors: wrap or
//! mirror without `norm` on a texture of one level, linear filtering of integers read as
//! integers, `nfloat` on 32-bit or float texels. A mipmapped texture (`mips=N`, N > 1) may
//! have an unnormalized wrap or mirror sampler, as the CUDA driver makes one: it reads
//! normalized coordinates and clamps them (the model's measured rule).
//!
//! # Defaults
//!
//! [`default_desc`] gives, per shape and result kind, a texture big enough for the
//! coordinates of typical launches (thread indices, a few thousand along one dimension,
//! a few hundred along two): `1d:4096`, `2d:256x256`, `3d:32x32x32`, `a1d:1024` with 8
//! layers, `a2d:64x64` with 8 layers, `cube:64`, `acube:32` with 4 layers; texels `f32x4`
//! for float results, `u8x4` for unsigned (the `uchar4` images of CUDA samples) and `s32x4`
//! for signed; CUDA's default sampler (clamp, point, unnormalized coordinates).

use std::fmt;

use super::{
    AddressMode, ChannelType, CompareFunc, FilterMode, ReadMode, ResultKind, Shape, TextureDesc,
};

/// A description that does not parse or is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The whole text given.
    pub text: String,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "texture description `{}`: {}", self.text, self.message)
    }
}

impl std::error::Error for SpecError {}

/// The usage text `--texture` prints in `--help` (kept here, next to the parser).
pub const SYNTAX_HELP: &str = "NAME=SHAPE:SIZE,FORMAT[,OPTION]... \
SHAPE: 1d 2d 3d a1d a2d cube acube; SIZE: W, WxH or WxHxD (as many as the shape has; \
cube: the face side); FORMAT: u8 u16 u32 s8 s16 s32 f16 f32, optionally xC with C = 1, 2 \
or 4 channels; OPTIONs: clamp|wrap|mirror|border (every dimension), addr0=/addr1=/addr2=MODE, \
bordercolor=R/G/B/A, point|linear, norm|unnorm (coordinates), element|nfloat (read 8/16-bit \
integers as normalized floats), layers=N, mips=N, mipfilter=point|linear, \
compare=off|never|lt|eq|le|gt|ne|ge|always, samples=N (multisample 2d/a2d, for tex.2dms/a2dms). \
Example: img=2d:64x64,u8x4,nfloat,linear,norm,wrap. \
Repeatable; textures not described get random texels of a default size per shape \
(2d: 256x256 f32x4, clamp, point, unnormalized; 4 samples for tex.2dms/a2dms)";

/// `NAME=SPEC`: the texture's name (a `.texref` variable, or a kernel parameter for
/// texture objects) and its description.
pub fn parse_binding(text: &str) -> Result<(String, TextureDesc), SpecError> {
    let err = |message: String| SpecError {
        text: text.to_string(),
        message,
    };
    let Some((name, spec)) = text.split_once('=') else {
        return Err(err(
            "expected NAME=SHAPE:SIZE,FORMAT[,OPTION]... (no `=` after the name)".into(),
        ));
    };
    let name = name.trim();
    // `p+OFF`: the texture object the kernel loads `OFF` bytes past pointer parameter `p`.
    let ident = match name.split_once('+') {
        Some((p, off)) if !off.is_empty() && off.chars().all(|c| c.is_ascii_digit()) => p,
        _ => name,
    };
    let ok_name = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%'))
        && ident
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.'));
    if !ok_name {
        return Err(err(format!(
            "`{name}` is not a PTX identifier (the name of a .texref variable or a kernel parameter) or `param+OFFSET`"
        )));
    }
    let desc = parse(spec).map_err(|e| err(e.message))?;
    Ok((name.to_string(), desc))
}

/// Every `NAME=SPEC` of `texts` (a repeated command-line option); a name given twice is an
/// error.
pub fn parse_bindings<S: AsRef<str>>(texts: &[S]) -> Result<Vec<(String, TextureDesc)>, SpecError> {
    let mut out: Vec<(String, TextureDesc)> = Vec::new();
    for t in texts {
        let (name, desc) = parse_binding(t.as_ref())?;
        if out.iter().any(|(n, _)| *n == name) {
            return Err(SpecError {
                text: t.as_ref().to_string(),
                message: format!("texture `{name}` is described twice"),
            });
        }
        out.push((name, desc));
    }
    Ok(out)
}

/// `SHAPE:SIZE,FORMAT[,OPTION]...` (module essay).
pub fn parse(text: &str) -> Result<TextureDesc, SpecError> {
    let err = |message: String| SpecError {
        text: text.to_string(),
        message,
    };
    let Some((shape_s, rest)) = text.trim().split_once(':') else {
        return Err(err(
            "expected SHAPE:SIZE,FORMAT[,OPTION]... (no `:` after the shape)".into(),
        ));
    };
    let shape = Shape::from_name(shape_s.trim()).ok_or_else(|| {
        err(format!(
            "unknown shape `{}` (expected 1d, 2d, 3d, a1d, a2d, cube or acube)",
            shape_s.trim()
        ))
    })?;
    let mut words = rest.split(',').map(str::trim);
    let size_s = words.next().unwrap_or("");
    let size = parse_size(shape, size_s).map_err(err)?;
    let Some(format_s) = words.next() else {
        return Err(err(format!(
            "missing the texel format after the size `{size_s}` (for example `,f32x4`)"
        )));
    };
    let (channel_type, channels) = parse_format(format_s).map_err(err)?;
    let mut d = TextureDesc::new(shape, size, channel_type, channels);
    for w in words {
        apply_option(&mut d, w).map_err(err)?;
    }
    d.validate().map_err(err)?;
    Ok(d)
}

fn parse_size(shape: Shape, s: &str) -> Result<[u32; 3], String> {
    let want = shape.dims();
    let parts: Vec<&str> = s.split('x').collect();
    let example = match want {
        1 => "W",
        2 => "WxH",
        _ => "WxHxD",
    };
    let want_here = if shape.is_cube() { 1 } else { want };
    if s.is_empty() || parts.len() != want_here {
        return Err(format!(
            "size `{s}`: a {} texture takes {}",
            shape.name(),
            if shape.is_cube() {
                "W (the side of a square face)"
            } else {
                example
            }
        ));
    }
    let mut size = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        size[k] = p
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("size `{s}`: `{p}` is not a number of at least 1"))?;
    }
    if shape.is_cube() {
        size[1] = size[0];
    }
    Ok(size)
}

fn parse_format(s: &str) -> Result<(ChannelType, u8), String> {
    let (t, c) = match s.split_once('x') {
        Some((t, c)) => (t, Some(c)),
        None => (s, None),
    };
    let ty = ChannelType::from_name(t).ok_or_else(|| {
        format!("unknown texel format `{s}` (expected u8 u16 u32 s8 s16 s32 f16 f32, optionally xC with C = 1, 2 or 4)")
    })?;
    let channels = match c {
        None => 1,
        Some("1") => 1,
        Some("2") => 2,
        Some("4") => 4,
        Some(c) => {
            return Err(format!(
                "texel format `{s}`: `{c}` channels (textures have 1, 2 or 4)"
            ))
        }
    };
    Ok((ty, channels))
}

fn parse_mode(v: &str) -> Result<AddressMode, String> {
    AddressMode::from_name(v).ok_or_else(|| {
        format!("unknown address mode `{v}` (expected clamp, wrap, mirror or border)")
    })
}

fn parse_filter(key: &str, v: &str) -> Result<FilterMode, String> {
    match v {
        "point" => Ok(FilterMode::Point),
        "linear" => Ok(FilterMode::Linear),
        _ => Err(format!("{key}=`{v}`: expected point or linear")),
    }
}

fn parse_count(key: &str, v: &str) -> Result<u32, String> {
    v.parse::<u32>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("{key}=`{v}`: expected a number of at least 1"))
}

fn apply_option(d: &mut TextureDesc, w: &str) -> Result<(), String> {
    let s = &mut d.sampler;
    if let Some((key, v)) = w.split_once('=') {
        match key {
            "addr0" | "addr1" | "addr2" => {
                let k = (key.as_bytes()[4] - b'0') as usize;
                s.address[k] = parse_mode(v)?;
            }
            "bordercolor" => {
                let parts: Vec<&str> = v.split('/').collect();
                if parts.len() != 4 {
                    return Err(format!(
                        "bordercolor=`{v}`: expected four numbers R/G/B/A"
                    ));
                }
                for (k, p) in parts.iter().enumerate() {
                    s.border_color[k] = p
                        .parse::<f32>()
                        .map_err(|_| format!("bordercolor=`{v}`: `{p}` is not a number"))?;
                }
            }
            "layers" => {
                if !d.shape.is_layered() {
                    return Err(format!(
                        "layers=: a {} texture is not layered (a1d, a2d and acube are)",
                        d.shape.name()
                    ));
                }
                d.layers = parse_count(key, v)?;
            }
            "mips" => d.mip_levels = parse_count(key, v)?,
            "samples" => d.samples = parse_count(key, v)?,
            "mipfilter" => s.mip_filter = parse_filter(key, v)?,
            "compare" => {
                s.compare = CompareFunc::from_name(v).ok_or_else(|| {
                    format!("compare=`{v}`: expected off, never, lt, eq, le, gt, ne, ge or always")
                })?
            }
            _ => {
                return Err(format!(
                    "unknown option `{key}=` (expected addr0=, addr1=, addr2=, bordercolor=, layers=, mips=, mipfilter=, compare= or samples=)"
                ))
            }
        }
        return Ok(());
    }
    match w {
        "clamp" | "wrap" | "mirror" | "border" => s.address = [parse_mode(w)?; 3],
        "point" => s.filter = FilterMode::Point,
        "linear" => s.filter = FilterMode::Linear,
        "norm" => s.normalized_coords = true,
        "unnorm" => s.normalized_coords = false,
        "element" => d.read_mode = ReadMode::ElementType,
        "nfloat" => d.read_mode = ReadMode::NormalizedFloat,
        "" => return Err("empty option (two commas in a row?)".into()),
        _ => {
            return Err(format!(
                "unknown option `{w}` (expected clamp, wrap, mirror, border, point, linear, norm, unnorm, element, nfloat or KEY=VALUE)"
            ))
        }
    }
    Ok(())
}

/// `d` in the syntax [`parse`] reads (every field written, options in a fixed order).
pub fn format(d: &TextureDesc) -> String {
    let dims = d.shape.dims();
    let size = if d.shape.is_cube() {
        d.width.to_string()
    } else {
        [d.width, d.height, d.depth][..dims]
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("x")
    };
    let s = &d.sampler;
    let mut out = format!(
        "{}:{size},{}x{}",
        d.shape.name(),
        d.channel_type.name(),
        d.channels
    );
    if s.address.iter().all(|m| *m == s.address[0]) {
        out += &format!(",{}", s.address[0].name());
    } else {
        for (k, m) in s.address.iter().enumerate() {
            out += &format!(",addr{k}={}", m.name());
        }
    }
    if s.border_color != [0.0; 4] {
        let b = s.border_color.map(|v| v.to_string());
        out += &format!(",bordercolor={}", b.join("/"));
    }
    out += match s.filter {
        FilterMode::Point => ",point",
        FilterMode::Linear => ",linear",
    };
    out += if s.normalized_coords {
        ",norm"
    } else {
        ",unnorm"
    };
    out += match d.read_mode {
        ReadMode::ElementType => ",element",
        ReadMode::NormalizedFloat => ",nfloat",
    };
    if d.shape.is_layered() {
        out += &format!(",layers={}", d.layers);
    }
    if d.mip_levels != 1 {
        out += &format!(",mips={}", d.mip_levels);
    }
    if s.mip_filter == FilterMode::Linear {
        out += ",mipfilter=linear";
    }
    if s.compare != CompareFunc::Off {
        out += &format!(",compare={}", s.compare.name());
    }
    if d.samples != 1 {
        out += &format!(",samples={}", d.samples);
    }
    out
}

/// The texture `verify` binds when the user described none for a fetch of `shape` whose
/// results are `kind` (module essay, "Defaults").
pub fn default_desc(shape: Shape, kind: ResultKind) -> TextureDesc {
    let (size, layers) = match shape {
        Shape::D1 => ([4096, 1, 1], 1),
        Shape::D2 => ([256, 256, 1], 1),
        Shape::D3 => ([32, 32, 32], 1),
        Shape::A1 => ([1024, 1, 1], 8),
        Shape::A2 => ([64, 64, 1], 8),
        Shape::Cube => ([64, 64, 1], 1),
        Shape::ACube => ([32, 32, 1], 4),
    };
    let ty = match kind {
        ResultKind::Float => ChannelType::F32,
        ResultKind::Unsigned => ChannelType::U8,
        ResultKind::Signed => ChannelType::S32,
    };
    let mut d = TextureDesc::new(shape, size, ty, 4);
    d.layers = layers;
    d
}
