//! The textures of one `verify` launch: which texture each name the kernel reads gets, and
//! its random texels.
//!
//! In: what the kernel reads ([`TextureNeed`]: a `.texref` name or a texture-object
//! parameter, with the shape and result kind its instructions use), the user's descriptions
//! (`--texture NAME=SPEC`, [`super::spec::parse_bindings`]) and the run's seed. Out: a
//! [`LaunchTextures`]: the [`TextureBindings`] both `ir::eval` and the simulator read, and
//! the handle to store in each texture-object parameter. Or an error naming the texture
//! whose description contradicts the kernel (a different shape).
//!
//! Invariants: the same needs, descriptions and seed give the same bindings byte for byte
//! (texels come from the seed and the name only); a name read several times is bound once
//! (its first need decides the default); texture objects get handles 1, 2, ... in the order
//! of their first need, so a handle's low word alone identifies it.

use super::spec::default_desc;
use super::{ResultKind, Shape, Texture, TextureBindings, TextureDesc};

/// A texture a kernel reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextureNeed {
    /// The `.texref` variable, or the `.u64` parameter that holds a texture object.
    pub name: String,
    /// A texture object (bindless, by parameter) rather than a bound `.texref`.
    pub object: bool,
    /// The geometry the instruction names.
    pub shape: Shape,
    /// What the instruction's destination type suggests the texels are (`.f32`: float
    /// results, `.u32`/`.s32`: integers); only used for the default description.
    pub kind: ResultKind,
    /// Samples per texel a multisample fetch (`tex.2dms`/`tex.a2dms`) wants by default
    /// ([`DEFAULT_SAMPLES`]); 1 for every other instruction.
    pub samples: u32,
}

/// The samples per texel of the default description of a texture that `tex.2dms` or
/// `tex.a2dms` reads.
pub const DEFAULT_SAMPLES: u32 = 4;

/// The textures of a launch.
#[derive(Clone, Debug, Default)]
pub struct LaunchTextures {
    pub bindings: TextureBindings,
    /// Texture-object parameter name and the handle to pass in it.
    pub handles: Vec<(String, u64)>,
    /// Descriptions given for names no need mentions (the caller may warn).
    pub unused: Vec<String>,
}

/// Bind every need: the user's description of its name, else [`default_desc`] of its shape
/// and kind; texels random from `seed` and the name.
pub fn bind_for_launch(
    needs: &[TextureNeed],
    given: &[(String, TextureDesc)],
    seed: u64,
) -> Result<LaunchTextures, String> {
    let mut out = LaunchTextures::default();
    let mut done: Vec<&str> = Vec::new();
    for need in needs {
        if done.contains(&need.name.as_str()) {
            continue;
        }
        done.push(&need.name);
        let desc = match given.iter().find(|(n, _)| *n == need.name) {
            Some((_, d)) => {
                if d.shape != need.shape {
                    return Err(format!(
                        "texture `{}` is described as {} but the kernel reads it as {}",
                        need.name,
                        d.shape.name(),
                        need.shape.name()
                    ));
                }
                d.clone()
            }
            None => {
                let mut d = default_desc(need.shape, need.kind);
                d.samples = need.samples;
                d
            }
        };
        let tex = Texture::random(desc, texel_seed(seed, &need.name));
        if need.object {
            let h = out.bindings.add_object(tex);
            out.handles.push((need.name.clone(), h));
        } else {
            out.bindings.bind(&need.name, tex);
        }
    }
    out.unused = given
        .iter()
        .filter(|(n, _)| !needs.iter().any(|need| need.name == *n))
        .map(|(n, _)| n.clone())
        .collect();
    Ok(out)
}

/// The seed of a texture's texels: the run's seed mixed with the name (FNV-1a), so that two
/// textures of one launch differ and each is reproducible from the run's seed.
pub fn texel_seed(seed: u64, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}
