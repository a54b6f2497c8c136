//! The surfaces of a `verify` launch ([`crate::surface`]).
//!
//! In: a kernel's IR, the launch `make_launch` built, and the surface size (`--surface`,
//! default [`DEFAULT_SURFACE`]). Out: the launch with one surface per `.surfref` the kernel
//! names (bound by name) and one per `.u64` parameter the kernel uses directly as a bindless
//! surface handle (the parameter then holds the surface's index, its handle). Each surface
//! is a global region of random bytes, placed after the buffers (`buffer_base`), so `verify`
//! compares its final contents like any other buffer's, on both sides.
//!
//! A handle that does not come straight from a parameter (loaded from memory, computed)
//! names no surface the launch has: `ir::eval` calls such a run undefined, and the kernel
//! cannot be run.

use crate::ir::eval::{GlobalRegion, Launch};
use crate::ir::{Function, InstData, Module, ValueDef};
use crate::surface::{SurfHandle, SurfaceDesc};

/// Bytes per row, rows, slices, layers of every surface unless `--surface` says otherwise:
/// 4 KiB rows (x is in bytes: 1024 32-bit elements), 64 rows, 4 slices, 4 layers (4 MiB).
pub const DEFAULT_SURFACE: [u32; 4] = [4096, 64, 4, 4];

/// Add the kernel's surfaces to `launch` (see the module essay); `first` is the buffer
/// number after the launch's own buffers.
pub fn attach(
    launch: &mut Launch,
    module: &Module,
    f: &Function,
    (size, format): ([u32; 4], crate::surface::SurfFormat),
    first: usize,
    addr32: bool,
    seed: u64,
) -> Result<(), String> {
    let mut named: Vec<String> = Vec::new();
    let mut params: Vec<u32> = Vec::new();
    for node in f.insts.values() {
        let InstData::Surface { access, args } = &node.data else {
            continue;
        };
        match access.handle {
            SurfHandle::Bound(i) => {
                let n = &module.surfrefs[i as usize];
                if !named.contains(n) {
                    named.push(n.clone());
                }
            }
            SurfHandle::Bindless => {
                if let ValueDef::Result(d, _) = f.values[args[0]].def {
                    if let InstData::LoadParam { offset, .. } = f.insts[d].data {
                        if !params.contains(&offset) {
                            params.push(offset);
                        }
                    }
                }
            }
        }
    }
    let [width, height, depth, layers] = size;
    let mut rng = super::Rng::new(seed ^ 0x5u64.rotate_right(4));
    let bound = named.len();
    let names = named
        .into_iter()
        .map(Some)
        .chain(params.iter().map(|_| None));
    for (j, name) in names.enumerate() {
        let mut desc = SurfaceDesc {
            name,
            base: 0,
            width,
            height,
            depth,
            layers,
            format,
        };
        let bytes = desc.bytes();
        desc.base = super::buffer_base(first + j, bytes, addr32).ok_or_else(|| {
            format!("surface {j} of {bytes} bytes does not fit the address space")
        })?;
        let mut data = vec![0u8; bytes as usize];
        rng.fill(&mut data);
        launch.global.push(GlobalRegion {
            base: desc.base,
            bytes: data,
        });
        if desc.name.is_none() {
            let at = params[j - bound] as usize;
            let handle = (launch.surfaces.len() as u64).to_le_bytes();
            if let Some(dst) = launch.params.get_mut(at..at + 8) {
                dst.copy_from_slice(&handle);
            }
        }
        launch.surfaces.push(desc);
    }
    Ok(())
}

/// `W[,H[,D[,L]]][:FORMAT]`: the size ([`parse_size`]) and the element format
/// ([`crate::surface::SurfFormat::parse`]: `u8`, `s16x2`, `f32x4`, `unorm8x4`, ...; plain
/// bytes, `u8`, when absent).
pub fn parse_spec(s: &str) -> Option<([u32; 4], crate::surface::SurfFormat)> {
    let (size, format) = match s.split_once(':') {
        Some((z, f)) => (z, crate::surface::SurfFormat::parse(f.trim())?),
        None => (s, crate::surface::SurfFormat::RAW),
    };
    Some((parse_size(size)?, format))
}

/// `W[,H[,D[,L]]]`: bytes per row, rows, slices, layers (missing ones 1), each at least 1,
/// at most 256 MiB in all.
pub fn parse_size(s: &str) -> Option<[u32; 4]> {
    let mut d = [1u32; 4];
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.trim().parse().ok().filter(|&n| n >= 1)?;
    }
    let total: u64 = d.iter().map(|&x| u64::from(x)).product();
    (total <= 1 << 28).then_some(d)
}
