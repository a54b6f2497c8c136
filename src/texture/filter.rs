//! Addressing and filtering: a [`Footprint`] is one level and face of a texture under a
//! sampler; it maps coordinates to texels under the address modes (wrap, mirror, clamp,
//! border), reads texels as result lanes, and filters (point or linear, with weights in 9-bit
//! fixed point as the hardware has them). Cube maps choose their face here.
//!
//! In: coordinates, a level and a sampler. Out: the result lanes.

use super::*;

/// One level and face of a texture under a sampler: addressing and filtering.
pub(super) struct Footprint<'a> {
    pub(super) tex: &'a Texture,
    pub(super) sampler: &'a SamplerDesc,
    pub(super) level: u32,
    pub(super) face: u32,
    pub(super) address: [AddressMode; 3],
    pub(super) normalized: bool,
}

/// Fractional bits a normalized coordinate keeps in the texture unit: the hardware check
/// (`scripts/hwcheck.py`, 1,494 point samples on an H200) fits 21 or 22 bits, cut toward
/// minus infinity, and no other count; 22 is taken.
pub const NORMALIZED_FRACTION_BITS: u32 = 21;

/// The four weights (in 256ths, summing to 256) of a bilinear footprint whose second texels
/// weigh `ax` and `ay` along x and y, indexed `x + 2y`: each corner's product of 9-bit
/// weights rounded to 8 fractional bits, the far corner halves up, the two side corners
/// halves down, and the near corner what is left. The rule reproduces every one of the
/// solved hardware weights (`scripts/hwcheck.py`'s texture cases); exact products do not.
pub fn bilinear_weights(ax: u32, ay: u32) -> [u32; 4] {
    let w11 = (ax * ay + 128) >> 8;
    let w10 = (ax * (256 - ay) + 127) >> 8;
    let w01 = ((256 - ax) * ay + 127) >> 8;
    [256 - w11 - w10 - w01, w10, w01, w11]
}

/// The eight weights (in 256ths, summing to 256) of a trilinear footprint, indexed
/// `x + 2y + 4z`, split in steps as [`bilinear_weights`]' rule generalises: the two slices
/// take `256 - az` and `az` (the far one rounded half up), each slice's total splits along x
/// (the far column rounded half up), and each column's along y (the far row rounded half up
/// in the far column, half down in the near one). With `az` = 0 these are exactly the 2D
/// weights. Fitted to the held-out hardware run (sets 1 and 2: 1,423 of 1,536 f32 3D linear
/// fetches within 2 ulp, against 1,115 for exact products of 9-bit weights and 1,319 for a
/// plain split of the 2D weights between slices); set 3, held out: 505 of 512.
pub fn trilinear_weights(ax: u32, ay: u32, az: u32) -> [u32; 8] {
    let split = |total: u32, a: u32, half_up: bool| {
        let far = (a * total + if half_up { 128 } else { 127 }) >> 8;
        [total - far, far]
    };
    let mut w = [0; 8];
    for (z, slice) in split(256, az, true).into_iter().enumerate() {
        for (x, column) in split(slice, ax, true).into_iter().enumerate() {
            for (y, v) in split(column, ay, x == 1).into_iter().enumerate() {
                w[x + 2 * y + 4 * z] = v;
            }
        }
    }
    w
}

/// `round(f · 256)` for `f` in `[0, 1)`: a filter weight in 9-bit fixed point (0..=256).
pub(super) fn weight_256(f: f64) -> u32 {
    ((f * 256.0 + 0.5).floor() as u32).min(256)
}

/// Index `i` of a dimension of `n` texels under address mode `mode`; `None` is the border.
/// Wrap and mirror act as clamp with unnormalized coordinates.
pub fn address(i: i64, n: u32, mode: AddressMode, normalized: bool) -> Option<u32> {
    let n = n as i64;
    let mode = match mode {
        AddressMode::Wrap | AddressMode::Mirror if !normalized => AddressMode::Clamp,
        m => m,
    };
    Some(match mode {
        AddressMode::Clamp => i.clamp(0, n - 1) as u32,
        AddressMode::Wrap => i.rem_euclid(n) as u32,
        AddressMode::Mirror => {
            let m = i.rem_euclid(2 * n);
            (if m >= n { 2 * n - 1 - m } else { m }) as u32
        }
        AddressMode::Border => {
            if (0..n).contains(&i) {
                i as u32
            } else {
                return None;
            }
        }
    })
}

/// The cube face of direction `v` and the face's normalized coordinates (module essay).
///
/// A NaN component counts as 0, and a face coordinate `0 / 0` as the face's centre: the
/// zero direction (NaN after [`cube_project`]) reads the centre of face `+z` (measured:
/// held-out run tex1, one fetch of `(0, 0, 0)` on a 2×2 cube read texel (1, 1) of face 4).
pub fn cube_face(v: [f32; 3]) -> (u32, [f32; 2]) {
    let [x, y, z] = v.map(|c| if c.is_nan() { 0.0 } else { c as f64 });
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, s, t, m) = if az >= ax && az >= ay {
        if z >= 0.0 {
            (4, x, -y, az)
        } else {
            (5, -x, -y, az)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if x >= 0.0 {
        (0, -z, -y, ax)
    } else {
        (1, z, -y, ax)
    };
    let map = |c: f64| {
        let r = c / m;
        ((if r.is_nan() { 0.0 } else { r } + 1.0) / 2.0) as f32
    };
    (face, [map(s), map(t)])
}

pub(super) fn coords_major(v: [f32; 3]) -> f64 {
    v.iter().map(|c| (*c as f64).abs()).fold(0.0, f64::max)
}

/// A raw channel (low `bytes` bits of `raw`) as the float a float-result read gives.
pub(super) fn channel_to_f64(t: ChannelType, raw: u32) -> f64 {
    match t {
        ChannelType::F32 => f32::from_bits(raw) as f64,
        ChannelType::F16 => f16_to_f32(raw as u16) as f64,
        ChannelType::U8 | ChannelType::U16 => raw as f64 / t.norm_max(),
        ChannelType::S8 => ((raw as u8 as i8) as f64 / t.norm_max()).max(-1.0),
        ChannelType::S16 => ((raw as u16 as i16) as f64 / t.norm_max()).max(-1.0),
        // Not reachable through `result_kind` (32-bit integers read as integers).
        ChannelType::U32 => raw as f64,
        ChannelType::S32 => raw as i32 as f64,
    }
}

/// A raw integer channel sign- or zero-extended to 32 bits.
pub(super) fn extend(t: ChannelType, raw: u32) -> u32 {
    match t {
        ChannelType::S8 => raw as u8 as i8 as i32 as u32,
        ChannelType::S16 => raw as u16 as i16 as i32 as u32,
        _ => raw,
    }
}

/// An integer result lane as a number (for depth compares).
pub(super) fn int_lane_value(kind: ResultKind, w: u32) -> f64 {
    match kind {
        ResultKind::Signed => w as i32 as f64,
        _ => w as f64,
    }
}

/// IEEE binary16 to f32 (exact: every half is an f32).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m · 2^-24.
            let v = m as f32 * 2f32.powi(-24);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

impl Footprint<'_> {
    /// Coordinate `c` of dimension `k` in texels of this level (as an exact f64, kept
    /// within ±2^40 so that index arithmetic cannot overflow; NaN reads as 0). A normalized
    /// coordinate is first cut to [`NORMALIZED_FRACTION_BITS`] fractional bits, toward
    /// minus infinity, as the texture unit holds it.
    pub(super) fn texel_coord(&self, k: usize, c: f32) -> f64 {
        let d = &self.tex.desc;
        let n = d.level_size(self.level)[k] as f64;
        let x = if self.normalized {
            let scale = (1u64 << NORMALIZED_FRACTION_BITS) as f64;
            (c as f64 * scale).floor() / scale * n
        } else {
            c as f64 * n / d.level_size(0)[k] as f64
        };
        if x.is_nan() {
            0.0
        } else {
            x.clamp(-(2f64.powi(40)), 2f64.powi(40))
        }
    }

    /// Point sampling's index along dimension `k`.
    pub(super) fn point_index(&self, k: usize, c: f32, offset: i32) -> i64 {
        self.texel_coord(k, c).floor() as i64 + offset as i64
    }

    /// Linear filtering's (and `tld4`'s) first index along `k` and the weight of the second
    /// in 256ths: the texel coordinate is rounded to the nearest 1/256 of a texel first, so
    /// the weight is exact and a coordinate within half a 256th below a texel boundary
    /// already belongs to the next footprint (as the texture unit's footprints show).
    pub(super) fn linear_index(&self, k: usize, c: f32, offset: i32) -> (i64, u32) {
        let u = (self.texel_coord(k, c) * 256.0 + 0.5).floor() / 256.0;
        let xb = u - 0.5;
        let i = xb.floor();
        (i as i64 + offset as i64, weight_256(xb - i))
    }

    /// The texel at (unaddressed) index `at`, through the address modes; border texels
    /// are the border colour.
    pub(super) fn read(&self, at: [i64; 3]) -> Lanes {
        let d = &self.tex.desc;
        let size = d.level_size(self.level);
        let mut pos = [0u32; 3];
        // A 1D texture is a 2D texture one texel high (see `filter`): its row index goes
        // through the y address mode too.
        let dims = if d.shape == Shape::D1 {
            2
        } else {
            d.shape.dims()
        };
        for k in 0..dims {
            match address(at[k], size[k], self.address[k], self.normalized) {
                Some(p) => pos[k] = p,
                None => return self.border(),
            }
        }
        self.tex.texel(self.level, self.face, pos)
    }

    pub(super) fn border(&self) -> Lanes {
        let b = self.sampler.border_color;
        match self.tex.desc.result_kind() {
            ResultKind::Float => Lanes::Float(b.map(|v| v as f64)),
            ResultKind::Signed => Lanes::Int(b.map(|v| v as i32 as u32)),
            ResultKind::Unsigned => Lanes::Int(b.map(|v| v as u32)),
        }
    }

    /// Filter at this level: point or linear over the shape's dimensions; with a depth
    /// reference, of the comparisons.
    pub(super) fn filter(
        &self,
        coords: [f32; 3],
        offset: [i32; 3],
        filter: FilterMode,
        depth_ref: Option<f32>,
    ) -> Lanes {
        let dims = self.tex.desc.shape.dims();
        let kind = self.tex.desc.result_kind();
        let compare = |t: Lanes| -> Lanes {
            match depth_ref {
                None => t,
                Some(r) => {
                    let v = match t {
                        Lanes::Float(v) => v[0],
                        Lanes::Int(v) => int_lane_value(kind, v[0]),
                    };
                    let c = if self.sampler.compare.passes(r as f64, v) {
                        1.0
                    } else {
                        0.0
                    };
                    Lanes::Float([c, 0.0, 0.0, 1.0])
                }
            }
        };
        match filter {
            FilterMode::Point => {
                let mut at = [0i64; 3];
                for k in 0..dims {
                    at[k] = self.point_index(k, coords[k], offset[k]);
                }
                compare(self.read(at))
            }
            FilterMode::Linear => {
                let mut base = [0i64; 3];
                let mut alpha = [0u32; 3];
                for k in 0..dims {
                    (base[k], alpha[k]) = self.linear_index(k, coords[k], offset[k]);
                }
                // A 1D texture filters as a 2D texture one texel high read at y = 0: rows
                // -1 and 0, half each, row -1 through the y address mode (measured: held-out
                // run tex1+tex2, 1D linear fetches under a border y mode return half the
                // texel blend, e.g. 0.1052 for a lone texel 0.2103; other y modes read row
                // 0 twice). Layered 1D textures do not (their y is the layer).
                let dims = if self.tex.desc.shape == Shape::D1 {
                    (base[1], alpha[1]) = (-1, 128);
                    2
                } else {
                    dims
                };
                let mut acc = [0f64; 4];
                // The unit's rounded corner weights, in 256ths (a layered 1D footprint:
                // the plane's with `ay` = 0, that is `256 - ax` and `ax`).
                let weights = if dims <= 2 {
                    let w = bilinear_weights(alpha[0], alpha[1]);
                    [w[0], w[1], w[2], w[3], 0, 0, 0, 0]
                } else {
                    trilinear_weights(alpha[0], alpha[1], alpha[2])
                };
                for (corner, &weight) in weights.iter().enumerate().take(1 << dims) {
                    let mut at = base;
                    for (k, a) in at.iter_mut().enumerate().take(dims) {
                        *a += (corner >> k & 1) as i64;
                    }
                    if weight == 0 {
                        continue;
                    }
                    let Lanes::Float(v) = compare(self.read(at)) else {
                        unreachable!("linear filtering reads float lanes")
                    };
                    for k in 0..4 {
                        acc[k] += weight as f64 * v[k];
                    }
                }
                Lanes::Float(acc.map(|a| a / 256.0))
            }
        }
    }
}
