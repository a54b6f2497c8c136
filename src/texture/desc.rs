//! Texture descriptions: [`TextureDesc`] (shape, size, channels, levels, layers), the limits
//! the hardware and CUDA put on them, and the layout of its texels in memory (levels one after
//! another, faces and layers within a level).
//!
//! In: a description. Out: whether it is valid, and the byte offsets and sizes of its levels.
//! Invariant: a valid description's bytes fit `MAX_BYTES`.

use super::*;

/// A texture's shape, size, format and sampler state. Sizes of dimensions the shape does
/// not have are 1; `layers` is 1 unless the shape is layered; a cube's `height` equals its
/// `width`.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureDesc {
    pub shape: Shape,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    /// Array layers (cube arrays: cubes).
    pub layers: u32,
    /// Mip levels, at least 1.
    pub mip_levels: u32,
    pub channel_type: ChannelType,
    /// 1, 2 or 4.
    pub channels: u8,
    pub read_mode: ReadMode,
    pub sampler: SamplerDesc,
    /// Samples per texel: 1, or 2..=16 for a multisample 2D texture (`2dms`, `a2dms`;
    /// `texture::multisample`).
    pub samples: u32,
}

/// Largest size of one dimension of a CUDA array on Maxwell (1D, 2D, 3D and layered).
pub const MAX_DIM: u32 = 65536;

/// Largest width of a 1D texture: a `.texref` bound to linear memory (`cudaBindTexture`,
/// read with `tex1Dfetch`, PTX `tex.1d` with `.s32` coordinates) holds up to 2^27 texels.
pub const MAX_LINEAR_1D: u32 = 1 << 27;

/// Largest texture the model builds (bytes), to keep `verify` launches in memory.
pub const MAX_BYTES: usize = 256 << 20;

impl TextureDesc {
    /// A texture of `shape` and `width × height × depth` (sizes the shape lacks are
    /// ignored and set to 1; a cube's height is its width), one layer, one level, element
    /// reads, CUDA's default sampler.
    pub fn new(
        shape: Shape,
        size: [u32; 3],
        channel_type: ChannelType,
        channels: u8,
    ) -> TextureDesc {
        let dims = shape.dims();
        let width = size[0];
        let height = if shape.is_cube() {
            width
        } else if dims >= 2 {
            size[1]
        } else {
            1
        };
        let depth = if dims >= 3 { size[2] } else { 1 };
        TextureDesc {
            shape,
            width,
            height,
            depth,
            layers: 1,
            mip_levels: 1,
            channel_type,
            channels,
            read_mode: ReadMode::ElementType,
            sampler: SamplerDesc::default(),
            samples: 1,
        }
    }

    /// Whether the description is one the model (and CUDA) accepts; the message says why
    /// not.
    pub fn validate(&self) -> Result<(), String> {
        let dims = self.shape.dims();
        for (k, (name, n)) in [
            ("width", self.width),
            ("height", self.height),
            ("depth", self.depth),
        ]
        .into_iter()
        .enumerate()
        {
            let max = if self.shape == Shape::D1 {
                MAX_LINEAR_1D
            } else {
                MAX_DIM
            };
            if k < dims && !(1..=max).contains(&n) {
                return Err(format!(
                    "{name} {n} is not in 1..={max} (for a {} texture)",
                    self.shape.name()
                ));
            }
            if k >= dims && n != 1 {
                return Err(format!(
                    "a {} texture has no {name} (it is {n}, must be 1)",
                    self.shape.name()
                ));
            }
        }
        if self.shape.is_cube() && self.height != self.width {
            return Err(format!(
                "a cube map's faces are square (width {}, height {})",
                self.width, self.height
            ));
        }
        if self.shape.is_layered() {
            if !(1..=2048).contains(&self.layers) {
                return Err(format!("layers {} is not in 1..=2048", self.layers));
            }
        } else if self.layers != 1 {
            return Err(format!(
                "a {} texture is not layered (layers {}, must be 1)",
                self.shape.name(),
                self.layers
            ));
        }
        let largest = self.width.max(self.height).max(self.depth);
        let max_levels = 32 - largest.leading_zeros();
        if self.mip_levels < 1 || self.mip_levels > max_levels {
            return Err(format!(
                "mip levels {} is not in 1..={max_levels} for a largest dimension of {largest}",
                self.mip_levels
            ));
        }
        if !matches!(self.channels, 1 | 2 | 4) {
            return Err(format!(
                "{} channels: textures have 1, 2 or 4",
                self.channels
            ));
        }
        if self.read_mode == ReadMode::NormalizedFloat && !self.channel_type.can_normalize() {
            return Err(format!(
                "{} texels cannot be read as normalized floats (only 8- and 16-bit integers)",
                self.channel_type.name()
            ));
        }
        if self.sampler.filter == FilterMode::Linear && self.result_kind() != ResultKind::Float {
            return Err(format!(
                "linear filtering needs float results: {} texels read as integers (use `nfloat`)",
                self.channel_type.name()
            ));
        }
        // Wrap and mirror need normalized coordinates, except on a mipmapped texture: the
        // CUDA driver makes one with an unnormalized wrap or mirror sampler, and the GPU reads
        // its coordinates as normalized and clamps them (module essay, "Address modes";
        // measured).
        let mipmapped = self.mip_levels > 1 && self.sampler.mipmaps_normalize;
        if !self.sampler.normalized_coords && !mipmapped {
            if let Some(m) = self.sampler.address[..dims]
                .iter()
                .find(|m| matches!(m, AddressMode::Wrap | AddressMode::Mirror))
            {
                return Err(format!(
                    "address mode {} needs normalized coordinates (`norm`) or mip levels \
                     (`mips=N`, where it acts as clamp)",
                    m.name()
                ));
            }
        }
        self.validate_samples()?;
        if self.byte_len_u128() > MAX_BYTES as u128 {
            return Err(format!(
                "{} bytes of texels is more than the {MAX_BYTES} the model builds",
                self.byte_len_u128()
            ));
        }
        Ok(())
    }

    /// What the result words hold (module essay, "Texel formats").
    pub fn result_kind(&self) -> ResultKind {
        if self.channel_type.is_float() || self.read_mode == ReadMode::NormalizedFloat {
            ResultKind::Float
        } else if self.channel_type.is_signed() {
            ResultKind::Signed
        } else {
            ResultKind::Unsigned
        }
    }

    /// Bytes of one texel.
    pub fn texel_bytes(&self) -> usize {
        self.channel_type.bytes() * self.channels as usize
    }

    /// Faces per level: layers, times 6 for cube maps.
    pub fn faces(&self) -> u32 {
        self.layers * if self.shape.is_cube() { 6 } else { 1 }
    }

    /// `[width, height, depth]` of mip level `level` (each at least 1).
    pub fn level_size(&self, level: u32) -> [u32; 3] {
        let shrink = |n: u32| (n.checked_shr(level).unwrap_or(0)).max(1);
        let dims = self.shape.dims();
        [
            shrink(self.width),
            if dims >= 2 { shrink(self.height) } else { 1 },
            if dims >= 3 { shrink(self.depth) } else { 1 },
        ]
    }

    pub(super) fn level_texels(&self, level: u32) -> u128 {
        let [w, h, d] = self.level_size(level);
        w as u128 * h as u128 * d as u128 * self.faces() as u128 * self.samples.max(1) as u128
    }

    pub(super) fn byte_len_u128(&self) -> u128 {
        (0..self.mip_levels.min(32))
            .map(|l| self.level_texels(l))
            .sum::<u128>()
            * self.texel_bytes() as u128
    }

    /// Bytes of texels of all levels.
    pub fn byte_len(&self) -> usize {
        self.byte_len_u128() as usize
    }

    /// Byte offset of mip level `level`.
    pub fn level_offset(&self, level: u32) -> usize {
        (0..level)
            .map(|l| self.level_texels(l) as usize)
            .sum::<usize>()
            * self.texel_bytes()
    }
}

impl std::fmt::Display for TextureDesc {
    /// The description in `--texture` syntax ([`spec::format`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&spec::format(self))
    }
}
