//! Multisample textures: the texels of `tex.2dms` and `tex.a2dms` (SASS `TLDS.LZ.MS`,
//! `TLD.LZ.MS`, `TLD.B.LZ.MS`).
//!
//! In: a [`Texture`] whose description has `samples` ≥ 1 samples per texel (shape `2d` or
//! `a2d`, one mip level; `verify --texture NAME=2d:WxH,FMT,samples=N`), and one fetch: the
//! integer texel coordinates, the layer and the sample index. Out: the sample's four result
//! words, as [`Texture::fetch`] gives a texel's (same formats, same missing channels).
//!
//! A multisample texel is stored as `samples` ordinary texels one after another (module
//! essay of `texture`, "Layout"); a fetch without a sample index (`tex.2d` of such a
//! texture) reads sample 0.
//!
//! # Out of range
//!
//! Coordinates and layers out of range read zero in every lane, as every integer-coordinate
//! fetch of the model does. A sample index out of `0..samples` (negative included) also
//! reads zero. What Maxwell returns there is not documented (PTX says nothing; Direct3D's
//! `ld2dms` calls it undefined but confined to the resource) and could not be measured
//! here (no device). ptxas 11.8 passes the PTX sample operand unchanged in the `.MS`
//! instruction's register (no clamp, no mask), so any choice that treats it like the other
//! coordinates is consistent with the code it writes; both sides of `verify` share this one.
//! A texture with `samples = 1` is a valid target of `tex.2dms` (sample 0 only).

use super::*;

/// The most samples per texel the model takes (CUDA/OpenGL multisample surfaces on
/// Maxwell have up to 16).
pub const MAX_SAMPLES: u32 = 16;

impl TextureDesc {
    /// The multisample rules of [`validate`](TextureDesc::validate): 1..=16 samples, more
    /// than one only on a 2D or 2D array texture of one level.
    pub(super) fn validate_samples(&self) -> Result<(), String> {
        if !(1..=MAX_SAMPLES).contains(&self.samples) {
            return Err(format!(
                "samples {} is not in 1..={MAX_SAMPLES}",
                self.samples
            ));
        }
        if self.samples > 1 {
            if !matches!(self.shape, Shape::D2 | Shape::A2) {
                return Err(format!(
                    "a {} texture has no samples (multisample textures are 2d or a2d)",
                    self.shape.name()
                ));
            }
            if self.mip_levels != 1 {
                return Err("a multisample texture has one mip level".to_string());
            }
        }
        Ok(())
    }
}

impl Texture {
    /// `tex.2dms`/`tex.a2dms`: sample `sample` of texel `(x, y)` of layer `layer` (0 for a
    /// 2D texture); out of range reads zero (module essay).
    pub fn fetch_ms(&self, x: i32, y: i32, layer: i32, sample: i32) -> [u32; 4] {
        let d = &self.desc;
        let inside = |v: i32, n: u32| v >= 0 && (v as u32) < n;
        let layers = if d.shape.is_layered() { d.layers } else { 1 };
        if !inside(x, d.width)
            || !inside(y, d.height)
            || !inside(layer, layers)
            || !inside(sample, d.samples.max(1))
        {
            return [0; 4];
        }
        match self.texel_sample(0, layer as u32, [x as u32, y as u32, 0], sample as u32) {
            Lanes::Int(w) => w,
            Lanes::Float(v) => v.map(|x| (x as f32).to_bits()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_consecutive_texels() {
        let mut d = TextureDesc::new(Shape::A2, [3, 2, 1], ChannelType::U32, 1);
        d.layers = 2;
        d.samples = 4;
        d.validate().unwrap();
        assert_eq!(d.byte_len(), 3 * 2 * 2 * 4 * 4);
        // Texel (x, y, layer, sample) holds its own index.
        let mut data = Vec::new();
        for k in 0..(3 * 2 * 2 * 4u32) {
            data.extend_from_slice(&k.to_le_bytes());
        }
        let t = Texture::from_bytes(d, data).unwrap();
        let at = |x: u32, y: u32, l: u32, s: u32| ((l * 2 + y) * 3 + x) * 4 + s;
        assert_eq!(t.fetch_ms(2, 1, 1, 3)[0], at(2, 1, 1, 3));
        assert_eq!(t.fetch_ms(0, 1, 0, 2), [at(0, 1, 0, 2), 0, 0, 0]);
        // A fetch without a sample index reads sample 0.
        assert_eq!(t.fetch([1, 1, 0, 1], 0)[0], at(1, 1, 1, 0));
        for (x, y, l, s) in [
            (3, 0, 0, 0),
            (0, 2, 0, 0),
            (0, 0, 2, 0),
            (0, 0, 0, 4),
            (0, 0, 0, -1),
        ] {
            assert_eq!(t.fetch_ms(x, y, l, s), [0; 4], "({x}, {y}, {l}, {s})");
        }
    }

    #[test]
    fn only_2d_shapes_of_one_level_are_multisampled() {
        let mut d = TextureDesc::new(Shape::D3, [4, 4, 4], ChannelType::F32, 1);
        d.samples = 2;
        assert!(d.validate().is_err());
        let mut d = TextureDesc::new(Shape::D2, [4, 4, 1], ChannelType::F32, 1);
        d.samples = 17;
        assert!(d.validate().is_err());
        d.samples = 8;
        d.mip_levels = 2;
        assert!(d.validate().is_err());
        d.mip_levels = 1;
        assert!(d.validate().is_ok());
    }
}
