//! Surfaces: what a `suld.b`/`sust.b`/`sured.b`/`sust.p` instruction touches, shared by the IR
//! ([`crate::ir::InstData::Surface`]), the reference interpreter (`ir::eval`), the simulator
//! (`sim`, running `SULD`/`SUST`/`SURED`) and `verify` (which describes the bound surfaces).
//!
//! # The model
//!
//! A surface is a block of global memory ([`SurfaceDesc`]): `width` bytes per row, `height`
//! rows, `depth` slices, `layers` layers, laid out row by row with no padding (pitch =
//! `width`), so that the byte at `(x, y, z, layer)` is at
//! `base + ((layer · depth + z) · height + y) · width + x`. Living in global memory, its
//! contents are compared by `verify` like every other buffer.
//!
//! The `.b` (raw bytes) instructions give `x` in **bytes** and `y`, `z`, the layer in
//! elements; an access reads or writes `n` bytes (1, 2, 4, 8 or 16: the element size times
//! the vector width). An access is in bounds when `0 ≤ x`, `x + n ≤ width`, `0 ≤ y <
//! height`, `0 ≤ z < depth` and `0 ≤ layer < layers` (coordinates are signed 32-bit).
//! Out of bounds, the clamp mode decides ([`SurfClamp`]): `.trap` faults (the launch
//! aborts, as with `trap`), `.clamp` moves each coordinate to the nearest valid one (x to
//! `0..=width - n`, rounded down to a multiple of `n`), `.zero` reads zeros and drops stores
//! and reductions. An `x` that is not a multiple of `n` is undefined (PTX requires aligned
//! byte coordinates; [`SurfError::Misaligned`]).
//!
//! # Handles
//!
//! A launch carries a list of surfaces ([`crate::ir::eval::Launch::surfaces`]). A surface
//! handle is an index into that list: a module-scope `.surfref` is the surface of the same
//! name (the simulator writes its index into the constant-bank word the cubin relocates
//! with `R_CUDA_SURF_HEADER_INDEX`), a bindless handle (a `.u64` surface object) is the
//! index itself (its low 32 bits, which is all `SULD`'s handle register holds).
//!
//! # Formats and `sust.p`
//!
//! Every surface has an element format ([`SurfFormat`]: 1, 2 or 4 channels of 8, 16 or 32
//! bits, each an unsigned or signed integer, a float, or an unsigned/signed normalized
//! fixed-point number); the `.b` forms ignore it (they move bytes), the default
//! ([`SurfFormat::RAW`], one 8-bit unsigned channel) makes a surface plain bytes. `sust.p`
//! ([`SurfOp::StoreFormatted`]) gives x in **elements** (the byte offset is x times the
//! element size, then [`locate`] as above with the element size as the access size) and up
//! to four 32-bit values, R, G, B, A in order; the hardware converts each to its channel
//! ([`SurfFormat::encode`]). What the PTX ISA says ("if the surface format contains UNORM,
//! SNORM, or FLOAT data, then .f32 is assumed; UINT: .u32; SINT: .s32", then "converted to
//! the surface sample format") and what this model assumes where it is silent:
//!
//! * float channels: 32 bits store the value's bits; 16 bits round to nearest even
//!   (`cvt.rn.f16.f32`: overflow to infinity, NaN stays NaN); there is no 8-bit float.
//! * unorm/snorm (8 and 16 bits): the value clamped to `[0, 1]` / `[-1, 1]` (NaN → 0),
//!   scaled by `2^n - 1` / `2^(n-1) - 1` and rounded to nearest even, as the D3D/OpenGL
//!   float→normalized conversion; 32-bit normalized formats do not exist.
//! * integer channels narrower than 32 bits keep the low bits (truncation: an assumption;
//!   the documents do not say whether the hardware saturates).
//! * a surface channel the vector does not supply "will be written with an unpredictable
//!   value" (PTX ISA): `ir::eval` calls such a store undefined, the simulator writes 0;
//!   vector elements beyond the surface's channels are ignored.
//!
//! # `suq`
//!
//! `suq.<attribute>.b32` ([`SurfOp::Query`], [`SurfQuery`]) reads one attribute of the
//! surface ([`SurfaceDesc::query`]). ptxas 11.8 reads `.width`/`.height` from the surface's
//! header (`TXQ ... TEX_HEADER_DIMENSION` on the surface's slot word or handle) and the
//! others from the driver's surface descriptor table ([`crate::tex_table::surf`]). What the
//! model answers (the driver's own values are not in any document; these are assumptions):
//! `.width` in elements of the surface's format (bytes per row / element size; the PTX ISA
//! calls it the width "in elements"), `.height`, `.depth` and `.array_size` the model's
//! rows, slices and layers, `.channel_data_type` the `CUarray_format` code of the channels
//! (normalized formats are stored as integers: unorm8 is `CU_AD_FORMAT_UNSIGNED_INT8`),
//! `.channel_order` the channel count (as `txq`'s model), and `.memory_layout` 1: the
//! model's surfaces are pitch-linear memory (the PTX ISA: 1 for a linear layout, 0
//! otherwise).
//!
//! # `sured.p`
//!
//! ptxas 11.8 takes `sured.p.{add,min,max,and,or}.{1d,2d,3d}.b32` only (other types:
//! "Unexpected instruction types specified for 'sured.p'"; `.a1d`/`.a2d`: "Illegal
//! modifier") and writes it as `SURED.D` without `.BA` (x counts elements), min/max with
//! the type `.SD32`, which the PTX ISA's "interpreted as .u32 or .s32 based on the surface
//! sample format" explains. The model ([`SurfOp::RedFormatted`]) covers the surfaces whose
//! element is one 32-bit integer channel (`u32`, `s32`: min/max compare unsigned or
//! signed); on any other format `ir::eval` calls the reduction undefined (what the
//! hardware does to narrower or float channels is not documented) and the simulator
//! refuses it.
//!
//! `suld.p` does not exist for sm_5x in ptxas 11.8.

use std::fmt;

/// The dimensionality of a surface access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfShape {
    D1,
    D2,
    D3,
    /// `.a1d`: x and a layer.
    A1,
    /// `.a2d`: x, y and a layer.
    A2,
}

impl SurfShape {
    /// Coordinates the hardware takes, in register order: x, then y, then z or the layer.
    pub fn coords(self) -> usize {
        match self {
            SurfShape::D1 => 1,
            SurfShape::D2 | SurfShape::A1 => 2,
            SurfShape::D3 | SurfShape::A2 => 3,
        }
    }

    /// The PTX spelling.
    pub fn ptx(self) -> &'static str {
        match self {
            SurfShape::D1 => "1d",
            SurfShape::D2 => "2d",
            SurfShape::D3 => "3d",
            SurfShape::A1 => "a1d",
            SurfShape::A2 => "a2d",
        }
    }

    pub fn from_ptx(s: &str) -> Option<SurfShape> {
        Some(match s {
            "1d" => SurfShape::D1,
            "2d" => SurfShape::D2,
            "3d" => SurfShape::D3,
            "a1d" => SurfShape::A1,
            "a2d" => SurfShape::A2,
            _ => return None,
        })
    }
}

/// What an out-of-bounds access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfClamp {
    Trap,
    Clamp,
    Zero,
}

impl SurfClamp {
    pub fn ptx(self) -> &'static str {
        match self {
            SurfClamp::Trap => "trap",
            SurfClamp::Clamp => "clamp",
            SurfClamp::Zero => "zero",
        }
    }
}

/// A `sured.b` reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfRedOp {
    Add,
    /// Minimum; `signed` compares as two's complement.
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
    And,
    Or,
}

impl SurfRedOp {
    /// `op(old, v)` on `bytes` (4 or 8) bytes.
    pub fn apply(self, old: u64, v: u64, bytes: u32) -> u64 {
        let mask = if bytes == 8 { u64::MAX } else { 0xffff_ffff };
        let sext = |x: u64| -> i64 {
            if bytes == 8 {
                x as i64
            } else {
                i64::from(x as u32 as i32)
            }
        };
        let r = match self {
            SurfRedOp::Add => old.wrapping_add(v),
            SurfRedOp::And => old & v,
            SurfRedOp::Or => old | v,
            SurfRedOp::Min { signed: true } => sext(old).min(sext(v)) as u64,
            SurfRedOp::Max { signed: true } => sext(old).max(sext(v)) as u64,
            SurfRedOp::Min { signed: false } => (old & mask).min(v & mask),
            SurfRedOp::Max { signed: false } => (old & mask).max(v & mask),
        };
        r & mask
    }

    /// The same operation with min/max comparing `signed`.
    pub fn with_sign(self, signed: bool) -> SurfRedOp {
        match self {
            SurfRedOp::Min { .. } => SurfRedOp::Min { signed },
            SurfRedOp::Max { .. } => SurfRedOp::Max { signed },
            other => other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SurfRedOp::Add => "add",
            SurfRedOp::Min { .. } => "min",
            SurfRedOp::Max { .. } => "max",
            SurfRedOp::And => "and",
            SurfRedOp::Or => "or",
        }
    }
}

/// What a surface instruction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfOp {
    /// `suld.b`: results are the loaded values.
    Load,
    /// `sust.b`: the data operands are written.
    Store,
    /// `sured.b`: memory becomes `op(memory, data)`; no result.
    Red(SurfRedOp),
    /// `sust.p`: the data operands (`width` 32-bit values, R, G, B, A) are converted to the
    /// surface's format ([`SurfFormat::encode`]); x counts elements.
    StoreFormatted,
    /// `suq`: one `I32` result, the attribute ([`SurfaceDesc::query`]); no coordinates.
    Query(SurfQuery),
    /// `sured.p`: x counts elements; memory becomes `op(memory, data)` on the element, which
    /// must be one 32-bit integer channel ([`SurfaceDesc::formatted_red_signed`]); min/max
    /// compare as the channel's type (the op's `signed` is unused, built `false`).
    RedFormatted(SurfRedOp),
}

/// A `suq` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfQuery {
    Width,
    Height,
    Depth,
    ChannelDataType,
    ChannelOrder,
    ArraySize,
    MemoryLayout,
}

impl SurfQuery {
    pub const ALL: [SurfQuery; 7] = [
        SurfQuery::Width,
        SurfQuery::Height,
        SurfQuery::Depth,
        SurfQuery::ChannelDataType,
        SurfQuery::ChannelOrder,
        SurfQuery::ArraySize,
        SurfQuery::MemoryLayout,
    ];

    /// PTX's name (`width`, `channel_data_type`, ...).
    pub fn ptx(self) -> &'static str {
        match self {
            SurfQuery::Width => "width",
            SurfQuery::Height => "height",
            SurfQuery::Depth => "depth",
            SurfQuery::ChannelDataType => "channel_data_type",
            SurfQuery::ChannelOrder => "channel_order",
            SurfQuery::ArraySize => "array_size",
            SurfQuery::MemoryLayout => "memory_layout",
        }
    }

    pub fn from_ptx(s: &str) -> Option<SurfQuery> {
        SurfQuery::ALL.into_iter().find(|q| q.ptx() == s)
    }
}

/// What one channel of a surface element holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfKind {
    Uint,
    Sint,
    Float,
    Unorm,
    Snorm,
}

/// A surface's element format: `channels` (1, 2 or 4) channels of `bits` (8, 16 or 32)
/// bits each, of one `kind`, channel 0 (R) in the lowest bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SurfFormat {
    pub channels: u8,
    pub bits: u8,
    pub kind: SurfKind,
}

impl SurfFormat {
    /// Plain bytes: one unsigned 8-bit channel.
    pub const RAW: SurfFormat = SurfFormat {
        channels: 1,
        bits: 8,
        kind: SurfKind::Uint,
    };

    /// Bytes per element.
    pub fn elem_bytes(self) -> u32 {
        u32::from(self.channels) * u32::from(self.bits) / 8
    }

    /// `KIND BITS [x CHANNELS]`, e.g. `u8`, `s16x2`, `f32x4`, `unorm8x4`, `snorm16`
    /// (`f8` and 32-bit normalized formats do not exist).
    pub fn parse(s: &str) -> Option<SurfFormat> {
        let (base, channels) = match s.split_once('x') {
            Some((b, c)) => (b, c.parse::<u8>().ok()?),
            None => (s, 1),
        };
        let digits = base.find(|c: char| c.is_ascii_digit())?;
        let (k, b) = base.split_at(digits);
        let kind = match k {
            "u" => SurfKind::Uint,
            "s" => SurfKind::Sint,
            "f" => SurfKind::Float,
            "unorm" => SurfKind::Unorm,
            "snorm" => SurfKind::Snorm,
            _ => return None,
        };
        let bits = b.parse::<u8>().ok()?;
        let ok = matches!(channels, 1 | 2 | 4)
            && match kind {
                SurfKind::Uint | SurfKind::Sint => matches!(bits, 8 | 16 | 32),
                SurfKind::Float => matches!(bits, 16 | 32),
                SurfKind::Unorm | SurfKind::Snorm => matches!(bits, 8 | 16),
            };
        ok.then_some(SurfFormat {
            channels,
            bits,
            kind,
        })
    }

    /// One channel's bits from a 32-bit register value (see the module essay).
    pub fn convert(self, v: u32) -> u32 {
        let mask = if self.bits == 32 {
            u32::MAX
        } else {
            (1u32 << self.bits) - 1
        };
        let f = f32::from_bits(v);
        let norm = |lo: f32, scale: f32| -> u32 {
            let x = if f.is_nan() { 0.0 } else { f.clamp(lo, 1.0) };
            ((x * scale).round_ties_even() as i32) as u32 & mask
        };
        match self.kind {
            SurfKind::Uint | SurfKind::Sint => v & mask,
            SurfKind::Float if self.bits == 32 => v,
            SurfKind::Float => {
                use crate::ir::float::{convert, FloatFmt, Round};
                convert(FloatFmt::F32, FloatFmt::F16, u64::from(v), Round::Rn, false) as u32
            }
            SurfKind::Unorm => norm(0.0, mask as f32),
            SurfKind::Snorm => norm(-1.0, (mask >> 1) as f32),
        }
    }

    /// The element `sust.p` writes from `data` (R, G, B, A; at most 4): its bytes, and
    /// whether every channel was supplied (a missing one is written as 0 here).
    pub fn encode(self, data: &[u32]) -> (Vec<u8>, bool) {
        let per = usize::from(self.bits / 8);
        let mut out = Vec::with_capacity(self.elem_bytes() as usize);
        for c in 0..usize::from(self.channels) {
            let x = data.get(c).map_or(0, |&v| self.convert(v));
            out.extend_from_slice(&x.to_le_bytes()[..per]);
        }
        (out, data.len() >= usize::from(self.channels))
    }
}

/// How the surface is named: a module `.surfref` (by its index in
/// [`crate::ir::Module::surfrefs`]), or a bindless handle, the instruction's first operand
/// (an `i64` value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfHandle {
    Bound(u32),
    Bindless,
}

/// Everything an IR surface instruction says besides its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SurfAccess {
    pub op: SurfOp,
    pub shape: SurfShape,
    pub clamp: SurfClamp,
    pub handle: SurfHandle,
    /// Data element type: `I8`, `I16`, `I32` or `I64` (`I32`/`I64` only for reductions).
    pub ty: crate::ir::Type,
    /// Data elements: 1, 2 or 4 (more than one only for `I32` and `I64`; 16 bytes at most).
    pub width: u8,
}

impl SurfAccess {
    /// Bytes one access reads or writes.
    pub fn size(&self) -> u32 {
        self.ty.bits() / 8 * u32::from(self.width)
    }

    /// Coordinate operands after the handle (none for `suq`).
    pub fn coord_operands(&self) -> usize {
        match self.op {
            SurfOp::Query(_) => 0,
            _ => self.shape.coords(),
        }
    }

    /// Operands before the coordinates (the bindless handle).
    pub fn handle_operands(&self) -> usize {
        usize::from(self.handle == SurfHandle::Bindless)
    }

    /// Data operands after the coordinates.
    pub fn data_operands(&self) -> usize {
        match self.op {
            SurfOp::Load | SurfOp::Query(_) => 0,
            SurfOp::Store | SurfOp::StoreFormatted => usize::from(self.width),
            SurfOp::Red(_) | SurfOp::RedFormatted(_) => 1,
        }
    }

    /// Results.
    pub fn results(&self) -> usize {
        match self.op {
            SurfOp::Load => usize::from(self.width),
            SurfOp::Query(_) => 1,
            _ => 0,
        }
    }
}

/// One surface of a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceDesc {
    /// The module `.surfref` bound to it (`None`: reachable only through a bindless handle).
    pub name: Option<String>,
    /// Global address of byte (0, 0, 0, 0); the bytes live in one of the launch's global
    /// regions.
    pub base: u64,
    /// Bytes per row.
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub layers: u32,
    /// The element format `sust.p` converts to ([`SurfFormat::RAW`]: plain bytes).
    pub format: SurfFormat,
}

impl SurfaceDesc {
    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.width)
            * u64::from(self.height)
            * u64::from(self.depth)
            * u64::from(self.layers)
    }

    /// Whether `sured.p`'s min/max compare signed on this surface: `Some(false)` for a
    /// `u32` element, `Some(true)` for `s32`, `None` (undefined in the model) for any other
    /// format.
    pub fn formatted_red_signed(&self) -> Option<bool> {
        let f = self.format;
        match (f.channels, f.bits, f.kind) {
            (1, 32, SurfKind::Uint) => Some(false),
            (1, 32, SurfKind::Sint) => Some(true),
            _ => None,
        }
    }

    /// `suq`'s answer (the module essay says what each attribute is in the model).
    pub fn query(&self, q: SurfQuery) -> u32 {
        let f = self.format;
        match q {
            SurfQuery::Width => self.width / f.elem_bytes().max(1),
            SurfQuery::Height => self.height,
            SurfQuery::Depth => self.depth,
            SurfQuery::ArraySize => self.layers,
            SurfQuery::ChannelOrder => u32::from(f.channels),
            SurfQuery::MemoryLayout => 1,
            SurfQuery::ChannelDataType => match (f.kind, f.bits) {
                (SurfKind::Uint | SurfKind::Unorm, 8) => 0x01,
                (SurfKind::Uint | SurfKind::Unorm, 16) => 0x02,
                (SurfKind::Uint | SurfKind::Unorm, _) => 0x03,
                (SurfKind::Sint | SurfKind::Snorm, 8) => 0x08,
                (SurfKind::Sint | SurfKind::Snorm, 16) => 0x09,
                (SurfKind::Sint | SurfKind::Snorm, _) => 0x0a,
                (SurfKind::Float, 16) => 0x10,
                (SurfKind::Float, _) => 0x20,
            },
        }
    }
}

/// Why a surface access has no address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SurfError {
    /// Out of bounds under `.trap`: the launch aborts.
    Trap,
    /// `x` is not a multiple of the access size: undefined.
    Misaligned { x: i32, size: u32 },
    /// The handle names no surface of the launch.
    NoSurface(u64),
}

impl fmt::Display for SurfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SurfError::Trap => write!(f, "surface access out of bounds under .trap"),
            SurfError::Misaligned { x, size } => write!(
                f,
                "surface byte coordinate {x} is not a multiple of the access size {size}"
            ),
            SurfError::NoSurface(h) => write!(f, "surface handle {h:#x} names no surface"),
        }
    }
}

/// The global address of an access of `size` bytes at `coords` (x in bytes, then y, then z
/// or the layer, as [`SurfShape::coords`] orders them; missing ones are 0), or `None` when
/// `.zero` drops it.
pub fn locate(
    d: &SurfaceDesc,
    shape: SurfShape,
    clamp: SurfClamp,
    coords: &[i32],
    size: u32,
) -> Result<Option<u64>, SurfError> {
    let c = |i: usize| coords.get(i).copied().unwrap_or(0);
    let (x, y, z, layer) = match shape {
        SurfShape::D1 => (c(0), 0, 0, 0),
        SurfShape::D2 => (c(0), c(1), 0, 0),
        SurfShape::D3 => (c(0), c(1), c(2), 0),
        SurfShape::A1 => (c(0), 0, 0, c(1)),
        SurfShape::A2 => (c(0), c(1), 0, c(2)),
    };
    if x.rem_euclid(size as i32) != 0 {
        return Err(SurfError::Misaligned { x, size });
    }
    let wmax = i64::from(d.width) - i64::from(size);
    let fits = |v: i32, n: u32| v >= 0 && (v as u32) < n;
    let inside = x >= 0
        && i64::from(x) <= wmax
        && fits(y, d.height)
        && fits(z, d.depth)
        && fits(layer, d.layers);
    let (x, y, z, layer) = if inside {
        (i64::from(x), y as u32, z as u32, layer as u32)
    } else {
        match clamp {
            SurfClamp::Trap => return Err(SurfError::Trap),
            SurfClamp::Zero => return Ok(None),
            SurfClamp::Clamp => {
                if wmax < 0 || d.height == 0 || d.depth == 0 || d.layers == 0 {
                    return Ok(None);
                }
                let cl = |v: i32, n: u32| (v.max(0) as u32).min(n - 1);
                let xm = wmax - wmax % i64::from(size);
                (
                    i64::from(x).clamp(0, xm),
                    cl(y, d.height),
                    cl(z, d.depth),
                    cl(layer, d.layers),
                )
            }
        }
    };
    let row =
        (u64::from(layer) * u64::from(d.depth) + u64::from(z)) * u64::from(d.height) + u64::from(y);
    Ok(Some(
        d.base
            .wrapping_add(row * u64::from(d.width))
            .wrapping_add(x as u64),
    ))
}

/// The surface a handle names: `surfaces[handle]` (the low 32 bits).
pub fn by_handle(surfaces: &[SurfaceDesc], handle: u64) -> Result<&SurfaceDesc, SurfError> {
    surfaces
        .get((handle & 0xffff_ffff) as usize)
        .ok_or(SurfError::NoSurface(handle))
}

/// The index of the surface bound to `.surfref name`.
pub fn index_of(surfaces: &[SurfaceDesc], name: &str) -> Option<usize> {
    surfaces
        .iter()
        .position(|s| s.name.as_deref() == Some(name))
}

/// The constant-bank-0 byte offset of each `.surfref` kernel `f` names (by index in
/// [`crate::ir::Module::surfrefs`]), as ptxas 11.8 places them: one word each, after the
/// parameters (their end rounded up to 4) and the bound textures' words, in the order the kernel first uses them. The driver
/// fills each word in (`R_CUDA_SURF_HEADER_INDEX`); `SULD`'s immediate slot is the word
/// index (offset / 4).
pub fn bound_slots(f: &crate::ir::Function) -> Vec<(u32, u32)> {
    let mut used: Vec<u32> = Vec::new();
    for node in f.insts.values() {
        if let crate::ir::InstData::Surface { access, .. } = &node.data {
            if let SurfHandle::Bound(i) = access.handle {
                if !used.contains(&i) {
                    used.push(i);
                }
            }
        }
    }
    // After the bound textures' words (ptxas 11.8 puts the textures first).
    let textures = crate::ir::tex::bound_textures(f).len() as u32;
    let base = crate::sm50::PARAM_BASE + f.param_size().next_multiple_of(4) + 4 * textures;
    used.iter()
        .enumerate()
        .map(|(k, &i)| (i, base + 4 * k as u32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> SurfaceDesc {
        SurfaceDesc {
            name: None,
            base: 0x1000,
            width: 64,
            height: 4,
            depth: 2,
            layers: 3,
            format: SurfFormat::RAW,
        }
    }

    #[test]
    fn formats_convert() {
        let f = |s| SurfFormat::parse(s).unwrap();
        assert_eq!(f("u8"), SurfFormat::RAW);
        assert_eq!(f("unorm8x4").elem_bytes(), 4);
        assert_eq!(f("f16x2").elem_bytes(), 4);
        assert_eq!(SurfFormat::parse("f8"), None);
        assert_eq!(SurfFormat::parse("unorm32"), None);
        assert_eq!(SurfFormat::parse("u8x3"), None);
        let b = |x: f32| x.to_bits();
        // unorm8: clamped, x 255, ties to even; NaN is 0.
        let u = f("unorm8");
        assert_eq!(u.convert(b(1.5)), 255);
        assert_eq!(u.convert(b(-3.0)), 0);
        assert_eq!(u.convert(b(0.5)), 128); // 127.5 -> 128 (even)
        assert_eq!(u.convert(b(f32::NAN)), 0);
        // snorm8: x 127, negative values as two's complement bytes.
        let s = f("snorm8");
        assert_eq!(s.convert(b(-1.0)), 0x81);
        assert_eq!(s.convert(b(-7.0)), 0x81);
        assert_eq!(s.convert(b(0.5)), 64); // 63.5 -> 64
        assert_eq!(f("snorm16").convert(b(1.0)), 0x7fff);
        // Integers keep their low bits; f16 rounds.
        assert_eq!(f("s8").convert(0xffff_ff80), 0x80);
        assert_eq!(f("u16").convert(0x1_2345), 0x2345);
        assert_eq!(f("f16").convert(b(1.0)), 0x3c00);
        let (bytes, full) = f("u16x2").encode(&[0x1234, 0xabcd, 7, 7]);
        assert_eq!((bytes, full), (vec![0x34, 0x12, 0xcd, 0xab], true));
        let (bytes, full) = f("u8x4").encode(&[1, 2]);
        assert_eq!((bytes, full), (vec![1, 2, 0, 0], false));
    }

    #[test]
    fn layout_and_bounds() {
        let d = desc();
        let at = |s, c: &[i32], n| locate(&d, s, SurfClamp::Trap, c, n);
        assert_eq!(at(SurfShape::D1, &[8], 4), Ok(Some(0x1008)));
        assert_eq!(at(SurfShape::D2, &[8, 1], 4), Ok(Some(0x1000 + 64 + 8)));
        assert_eq!(at(SurfShape::D3, &[0, 1, 1], 4), Ok(Some(0x1000 + 64 * 5)));
        // Layer 2 of a 1-d array: rows (2 * depth + 0) * height.
        assert_eq!(at(SurfShape::A1, &[0, 2], 4), Ok(Some(0x1000 + 64 * 16)));
        assert_eq!(at(SurfShape::D1, &[60], 4), Ok(Some(0x1000 + 60)));
        assert_eq!(at(SurfShape::D1, &[64], 4), Err(SurfError::Trap));
        assert_eq!(at(SurfShape::D1, &[-4], 4), Err(SurfError::Trap));
        assert_eq!(at(SurfShape::D2, &[0, 4], 4), Err(SurfError::Trap));
        assert_eq!(
            at(SurfShape::D1, &[6], 4),
            Err(SurfError::Misaligned { x: 6, size: 4 })
        );
    }

    #[test]
    fn clamp_and_zero() {
        let d = desc();
        let c = |c: &[i32], n| locate(&d, SurfShape::D2, SurfClamp::Clamp, c, n);
        assert_eq!(c(&[-16, -1], 16), Ok(Some(0x1000)));
        assert_eq!(c(&[128, 9], 16), Ok(Some(0x1000 + 3 * 64 + 48)));
        let z = locate(&d, SurfShape::D2, SurfClamp::Zero, &[128, 0], 4);
        assert_eq!(z, Ok(None));
    }

    #[test]
    fn reductions() {
        assert_eq!(SurfRedOp::Add.apply(0xffff_ffff, 2, 4), 1);
        assert_eq!(
            SurfRedOp::Min { signed: true }.apply(5, 0xffff_ffff, 4),
            0xffff_ffff
        );
        assert_eq!(SurfRedOp::Min { signed: false }.apply(5, 0xffff_ffff, 4), 5);
        assert_eq!(SurfRedOp::Max { signed: true }.apply(5, 0xffff_ffff, 4), 5);
        assert_eq!(SurfRedOp::Add.apply(u64::MAX, 2, 8), 1);
    }
}
