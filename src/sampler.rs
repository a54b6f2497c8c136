//! Samplers of `.texmode_independent` modules: `.samplerref` variables and what a
//! (texture, sampler) pair means, from the PTX initializer to the cubin and back.
//!
//! In: a module-scope `.samplerref` and its initializer
//! (`{ addr_mode_0 = wrap, filter_mode = linear, force_unnormalized_coords = 1 }`, any
//! subset of the fields). Out: a [`SamplerInit`], which gives
//! * the cubin's module `.nv.info` records, as ptxas 11.8 writes them
//!   ([`SamplerInit::info_word`]): `EIATTR_SAMPLER_INIT` (the sampler's symbol index, then
//!   one byte each for `addr_mode_0`, `addr_mode_1`, `addr_mode_2` and `filter_mode`, 0xff
//!   for a field the initializer leaves out) for every `.samplerref` of the module in
//!   declaration order, preceded by `EIATTR_SAMPLER_FORCE_UNNORMALIZED` (symbol index, 0 or
//!   1) when the initializer names that field;
//! * the sampler state a fetch through the pair uses ([`SamplerInit::apply`]), for
//!   `ir::eval` and for the simulator, which reads the same records back from the cubin
//!   ([`SamplerInit::from_info_word`]), so that both sides of `verify` take the modes from
//!   one place.
//!
//! Codes (measured with ptxas 11.8): address modes `wrap` 0, `mirror` 1, `clamp_ogl` 2,
//! `clamp_to_edge` 3, `clamp_to_border` 4; filters `nearest` 0, `linear` 1.
//!
//! # The model's reading of a sampler
//!
//! A field the initializer sets replaces the texture's own state ([`crate::texture::SamplerDesc`],
//! what `verify --texture` describes); a field it leaves out keeps the texture's.
//! `force_unnormalized_coords = 1` reads unnormalized coordinates; 0 (or no such field)
//! keeps the texture's choice. `clamp_ogl` (OpenGL's `GL_CLAMP`, which blends with the
//! border at the edge) is not in the texture model: a fetch through such a sampler is an
//! error of the launch, not a guess.
//!
//! # Samplers passed as kernel parameters
//!
//! A kernel may take its sampler as a parameter, `.entry k(.., .param .samplerref s)`
//! (`.texmode_independent`): the launch binds the sampler as the driver binds a module's.
//! ptxas 11.8 writes the same fetch (`TEXS.P`, `TEX.P`: one word of constant bank 0 after
//! the parameters, relocated against the texture and the sampler) and gives the parameter
//! no bytes of the parameter area: its `EIATTR_KPARAM_INFO` has offset 0xffff, size 0,
//! space 8 and, as its index, the sampler's symbol, a LOCAL symbol of CUDA type 11
//! ([`SAMPLER_PARAM_SYMBOL_INFO`]) in the section of the first kernel (in the cubin's
//! order) with a sampler parameter of that name, listed after that kernel's `.text`
//! section symbol. Symbols are made by name: two kernels whose sampler parameters share a
//! name share one symbol, and every sampler parameter of a kernel has one, used or not. The
//! module `.nv.info` has no `EIATTR_SAMPLER_INIT` for it. (Where two kernels give a
//! sampler parameter of one name different ordinals, ptxas 11.8 writes records its own code
//! contradicts: a zeroed `KPARAM_INFO` for the later kernel's sampler and its other
//! parameters' offsets shifted, while the code reads them at their true offsets; leafold
//! describes each kernel's parameters as its code reads them.) As there is no initializer, the
//! model (and `verify`) reads the texture through its own sampler state, as the simulator
//! does for a sampler no record describes.
//!
//! In the cubin a bound pair is one word of constant bank 0 after the parameters (where
//! unified mode puts one `.texref`'s word), relocated twice: `R_CUDA_TEX_HEADER_INDEX`
//! against the texture and [`R_CUDA_SAMP_HEADER_INDEX`] against the sampler; the driver
//! writes both header indices into it. The sampler's symbol is an undefined GLOBAL of CUDA
//! type 11 ([`SAMPLERREF_SYMBOL_INFO`]).

use crate::texture::{AddressMode, FilterMode, SamplerDesc};

/// `R_CUDA_SAMP_HEADER_INDEX`: the driver writes a sampler's header index into the word.
pub const R_CUDA_SAMP_HEADER_INDEX: u32 = 7;

/// `st_info` of a `.samplerref` symbol: GLOBAL binding, CUDA type 11 (sampler).
pub const SAMPLERREF_SYMBOL_INFO: u8 = 0x1b;

/// `st_info` of a `.param .samplerref`'s symbol: LOCAL binding, CUDA type 11 (sampler).
pub const SAMPLER_PARAM_SYMBOL_INFO: u8 = 0x0b;

/// `EIATTR_SAMPLER_INIT` (SVAL: symbol index, then the four mode bytes).
pub const EIATTR_SAMPLER_INIT: u8 = 0x09;

/// `EIATTR_SAMPLER_FORCE_UNNORMALIZED` (SVAL: symbol index, then 0 or 1).
pub const EIATTR_SAMPLER_FORCE_UNNORMALIZED: u8 = 0x13;

/// The byte of a field the initializer leaves out.
pub const UNSET: u8 = 0xff;

/// The PTX names of the address modes, by code.
const ADDRESS_MODES: [&str; 5] = [
    "wrap",
    "mirror",
    "clamp_ogl",
    "clamp_to_edge",
    "clamp_to_border",
];

/// The PTX names of the filter modes, by code.
const FILTER_MODES: [&str; 2] = ["nearest", "linear"];

/// A module `.samplerref` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SamplerRef {
    pub name: String,
    pub init: SamplerInit,
    /// A kernel's `.param .samplerref` rather than a module variable: the kernel's name and
    /// the parameter's ordinal in its signature (see the module essay). It has no
    /// initializer.
    pub param: Option<(String, u32)>,
}

/// A sampler's initializer, as ptxas records it: the codes of `addr_mode_0..2` and
/// `filter_mode` ([`UNSET`] when left out) and `force_unnormalized_coords`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SamplerInit {
    pub address: [u8; 3],
    pub filter: u8,
    pub force_unnormalized: Option<bool>,
}

impl Default for SamplerInit {
    fn default() -> SamplerInit {
        SamplerInit {
            address: [UNSET; 3],
            filter: UNSET,
            force_unnormalized: None,
        }
    }
}

/// One field of an initializer: its name and value (a keyword or an integer).
pub enum FieldValue<'a> {
    Word(&'a str),
    Int(i64),
}

/// The code of `clamp_to_edge` in [`ADDRESS_MODES`].
const CLAMP_TO_EDGE: u8 = 3;

impl SamplerInit {
    /// Whether the initializer sets `addr_mode_<k>` to `clamp_to_edge`.
    pub fn clamps_to_edge(&self, k: usize) -> bool {
        self.address[k] == CLAMP_TO_EDGE
    }

    /// Set field `name` from `value`; the error says what is wrong.
    pub fn set(&mut self, name: &str, value: FieldValue) -> Result<(), String> {
        let word = |names: &[&str]| match value {
            FieldValue::Word(w) => names
                .iter()
                .position(|n| *n == w)
                .map(|k| k as u8)
                .ok_or_else(|| format!("'{w}' is not one of {}", names.join(", "))),
            FieldValue::Int(_) => Err(format!("{name} takes one of {}", names.join(", "))),
        };
        match name {
            "addr_mode_0" | "addr_mode_1" | "addr_mode_2" => {
                let k = usize::from(name.as_bytes()[10] - b'0');
                self.address[k] = word(&ADDRESS_MODES)?;
            }
            "filter_mode" => self.filter = word(&FILTER_MODES)?,
            "force_unnormalized_coords" => {
                self.force_unnormalized = Some(match value {
                    FieldValue::Int(0) => false,
                    FieldValue::Int(1) => true,
                    FieldValue::Word("true") => true,
                    FieldValue::Word("false") => false,
                    _ => return Err("force_unnormalized_coords takes 0 or 1".to_string()),
                })
            }
            _ => {
                return Err(format!(
                    "'{name}' is not a sampler field (addr_mode_0, addr_mode_1, addr_mode_2, \
                     filter_mode, force_unnormalized_coords)"
                ))
            }
        }
        Ok(())
    }

    /// The four mode bytes of `EIATTR_SAMPLER_INIT`, as one little-endian word.
    pub fn info_word(&self) -> u32 {
        u32::from_le_bytes([
            self.address[0],
            self.address[1],
            self.address[2],
            self.filter,
        ])
    }

    /// The sampler of `EIATTR_SAMPLER_INIT`'s `word` and `EIATTR_SAMPLER_FORCE_UNNORMALIZED`'s
    /// value (the inverse of [`info_word`](Self::info_word)).
    pub fn from_info_word(word: u32, force_unnormalized: Option<bool>) -> SamplerInit {
        let b = word.to_le_bytes();
        SamplerInit {
            address: [b[0], b[1], b[2]],
            filter: b[3],
            force_unnormalized,
        }
    }

    /// The module `.nv.info` records of the sampler whose symbol index is `sym`.
    pub fn info_records(&self, sym: u32) -> Vec<crate::cubin::eiattr::Attribute> {
        use crate::cubin::eiattr::{Attribute, Format};
        let record = |code: u8, value: u32| {
            let mut payload = sym.to_le_bytes().to_vec();
            payload.extend_from_slice(&value.to_le_bytes());
            Attribute::Other {
                format: Format::Sval,
                code,
                payload,
            }
        };
        let mut out = Vec::new();
        if let Some(f) = self.force_unnormalized {
            out.push(record(EIATTR_SAMPLER_FORCE_UNNORMALIZED, u32::from(f)));
        }
        out.push(record(EIATTR_SAMPLER_INIT, self.info_word()));
        out
    }

    /// The sampler state of a fetch through this sampler from a texture whose own state is
    /// `base` (module essay). `clamp_ogl` or an unknown code is an error.
    pub fn apply(&self, base: &SamplerDesc) -> Result<SamplerDesc, String> {
        let mut s = *base;
        for (k, &code) in self.address.iter().enumerate() {
            s.address[k] = match code {
                0 => AddressMode::Wrap,
                1 => AddressMode::Mirror,
                3 => AddressMode::Clamp,
                4 => AddressMode::Border,
                UNSET => continue,
                2 => {
                    return Err(format!(
                        "sampler address mode clamp_ogl (addr_mode_{k}) is not modelled"
                    ))
                }
                other => return Err(format!("sampler address mode code {other} is unknown")),
            };
        }
        s.filter = match self.filter {
            0 => FilterMode::Point,
            1 => FilterMode::Linear,
            UNSET => s.filter,
            other => return Err(format!("sampler filter mode code {other} is unknown")),
        };
        if self.force_unnormalized == Some(true) {
            s.normalized_coords = false;
            // Asked for explicitly: kept on mipmapped textures too (not measured).
            s.mipmaps_normalize = false;
        }
        Ok(s)
    }

    /// `texture` seen through this sampler: the same texels with [`apply`](Self::apply)'s
    /// state.
    pub fn texture(
        &self,
        texture: &crate::texture::Texture,
    ) -> Result<crate::texture::Texture, String> {
        let mut t = texture.clone();
        t.desc.sampler = self.apply(&texture.desc.sampler)?;
        Ok(t)
    }
}

/// The `.samplerref`s a cubin describes (its module `EIATTR_SAMPLER_INIT` records, with
/// `EIATTR_SAMPLER_FORCE_UNNORMALIZED` where present), by symbol name, in record order.
/// Records of an unexpected shape or naming no symbol are skipped.
pub fn from_cubin(c: &crate::cubin::Cubin) -> Vec<(String, SamplerInit)> {
    use crate::cubin::eiattr::Attribute;
    let pair = |a: &Attribute, want: u8| match a {
        Attribute::Other { code, payload, .. } if *code == want && payload.len() == 8 => {
            let w = |k: usize| u32::from_le_bytes(payload[k..k + 4].try_into().unwrap());
            Some((w(0), w(4)))
        }
        _ => None,
    };
    let mut force: Vec<(u32, bool)> = Vec::new();
    let mut out = Vec::new();
    for a in &c.info {
        if let Some((sym, v)) = pair(a, EIATTR_SAMPLER_FORCE_UNNORMALIZED) {
            force.push((sym, v != 0));
        }
        if let Some((sym, word)) = pair(a, EIATTR_SAMPLER_INIT) {
            let Some(y) = c.symbols.get(sym as usize) else {
                continue;
            };
            let f = force.iter().find(|(s, _)| *s == sym).map(|&(_, v)| v);
            out.push((y.name.clone(), SamplerInit::from_info_word(word, f)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_words_are_ptxas_s() {
        // ptxas 11.8: `{ addr_mode_0 = wrap, addr_mode_1 = mirror, filter_mode = linear }`
        // gives 0x01ff0100; `{ addr_mode_0 = clamp_to_border, addr_mode_1 = clamp_to_edge,
        // addr_mode_2 = wrap, filter_mode = nearest }` 0x00000304; no initializer 0xffffffff.
        let mut s = SamplerInit::default();
        assert_eq!(s.info_word(), 0xffff_ffff);
        s.set("addr_mode_0", FieldValue::Word("wrap")).unwrap();
        s.set("addr_mode_1", FieldValue::Word("mirror")).unwrap();
        s.set("filter_mode", FieldValue::Word("linear")).unwrap();
        assert_eq!(s.info_word(), 0x01ff_0100);
        let mut t = SamplerInit::default();
        for (f, v) in [
            ("addr_mode_0", "clamp_to_border"),
            ("addr_mode_1", "clamp_to_edge"),
            ("addr_mode_2", "wrap"),
            ("filter_mode", "nearest"),
        ] {
            t.set(f, FieldValue::Word(v)).unwrap();
        }
        assert_eq!(t.info_word(), 0x0000_0304);
        assert_eq!(SamplerInit::from_info_word(0x0000_0304, None), t);
        assert!(t.set("filter_mode", FieldValue::Word("cubic")).is_err());
        assert!(t.set("border", FieldValue::Int(1)).is_err());
    }

    #[test]
    fn apply_overrides_only_the_fields_set() {
        let base = SamplerDesc {
            normalized_coords: true,
            ..SamplerDesc::default()
        };
        let mut s = SamplerInit::default();
        assert_eq!(s.apply(&base).unwrap(), base);
        s.set("addr_mode_1", FieldValue::Word("wrap")).unwrap();
        s.set("force_unnormalized_coords", FieldValue::Int(1))
            .unwrap();
        let got = s.apply(&base).unwrap();
        assert_eq!(
            got.address,
            [AddressMode::Clamp, AddressMode::Wrap, AddressMode::Clamp]
        );
        assert!(!got.normalized_coords);
        s.set("addr_mode_2", FieldValue::Word("clamp_ogl")).unwrap();
        assert!(s.apply(&base).is_err());
    }
}
