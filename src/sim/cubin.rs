//! What the simulator needs from a cubin (an sm_50 ELF from ptxas or from leafold): the
//! kernel's `.text.<k>` words and its [`KernelInfo`], taken from [`crate::cubin::read`]:
//! `.nv.constant0.<k>` size − 0x140 = parameter bytes; `.nv.shared.<k>` size = static shared
//! memory; `.nv.constant2.<k>` and `.nv.constant3` = constant banks 2 and 3;
//! EIATTR_MIN_STACK_SIZE of the kernel = the per-thread frame. Every malformed input is a
//! [`SimError::BadCubin`], never a panic. [`load_kernel_globals`] also places the module's
//! `.global` data and applies the code's relocations against it and the data relocations of
//! `.nv.global.init` and `.nv.constant3` (addresses in initializers), as a driver's loader does.

use super::{KernelInfo, SimError, PARAM_BASE};
use crate::ir::eval::{GlobalRegion, CONST_WINDOW_BASE};

/// The code and kernel information of kernel `name` in `cubin`.
pub fn load_kernel(cubin: &[u8], name: &str) -> Result<(Vec<u64>, KernelInfo), SimError> {
    let bad = SimError::BadCubin;
    let file = crate::cubin::read(cubin).map_err(|e| bad(e.to_string()))?;
    let k = file
        .kernels
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| bad(format!("no kernel '{name}'")))?;
    let mut info = KernelInfo {
        addr32: !file.header.is_64bit(),
        ..KernelInfo::default()
    };
    if let Some(size) = k.constant0_size {
        info.param_size = u32::try_from(size)
            .ok()
            .and_then(|s| s.checked_sub(PARAM_BASE))
            .ok_or_else(|| bad(format!(".nv.constant0.{name} has size {size:#x}")))?;
    }
    surface_slots(&file, k, &mut info);
    if let Some((size, _align)) = k.shared {
        info.shared_size =
            u32::try_from(size).map_err(|_| bad(format!("shared size {size:#x}")))?;
    }
    if let Some(data) = &k.constant2 {
        info.banks.push((2, data.clone()));
    }
    if let Some(data) = file.constant3() {
        info.banks.push((3, data.to_vec()));
    }
    texture_slots(&file, name, &mut info);
    // The kernel's frame is FRAME_SIZE; a dynamic stack (a kernel with `alloca`, no static
    // stack size: 0xffffffff) and the frames of subroutines (whose needs MIN_STACK_SIZE
    // counts too) lie below it in `Launch::local_size`.
    info.local_size = match (k.frame_size, k.min_stack_size) {
        (Some(f), _) => f,
        (None, Some(u32::MAX)) | (None, None) => 0,
        (None, Some(s)) => s,
    };
    let mut code = k.code.clone();
    // Calls of system functions: a relocation of the code against an undefined symbol.
    for rs in file
        .relocations
        .iter()
        .filter(|r| r.target == k.text_section)
    {
        for r in &rs.relocs {
            let Some(sym) = file.symbols.get(r.sym as usize) else {
                continue;
            };
            if sym.shndx == 0 && r.rtype == ABS32_20 {
                if sym.name == crate::tex_table::TEXREF_DESC_SIZE_SYMBOL {
                    desc_size(&mut code, r.offset, crate::tex_table::DESC_SIZE)?;
                    info.texture_table = true;
                } else if sym.name == crate::tex_table::samp::DESC_SIZE_SYMBOL {
                    desc_size(&mut code, r.offset, crate::tex_table::samp::DESC_SIZE)?;
                    info.sampler_table = true;
                } else if sym.name == crate::tex_table::surf::DESC_SIZE_SYMBOL {
                    desc_size(&mut code, r.offset, crate::tex_table::surf::DESC_SIZE)?;
                    info.surface_table = true;
                } else {
                    info.calls.push((r.offset, sym.name.clone()));
                }
            }
        }
    }
    Ok((code, info))
}

/// Resolve a `MOV32I`'s descriptor-size relocation at byte `offset` of the code to the
/// model's `size` ([`crate::tex_table::DESC_SIZE`], [`crate::tex_table::surf::DESC_SIZE`]),
/// as the driver resolves it to its own.
fn desc_size(code: &mut [u64], offset: u64, size: u32) -> Result<(), SimError> {
    let w = code
        .get_mut((offset / 8) as usize)
        .filter(|_| offset % 8 == 0)
        .ok_or_else(|| SimError::BadCubin(format!("relocation at {offset:#x}")))?;
    *w = (*w & !(0xffff_ffff << 20)) | (u64::from(size) << 20);
    Ok(())
}

/// `R_CUDA_TEX_HEADER_INDEX`: a bound texture's word of constant bank 0.
const TEX_HEADER_INDEX: u32 = 6;

/// The bound textures' slots of kernel `name` ([`KernelInfo::textures`]). Those words lie
/// past the parameters, so the parameter size is then the end of the last parameter
/// (`EIATTR_KPARAM_INFO`), not the end of the bank.
fn texture_slots(file: &crate::cubin::Cubin, name: &str, info: &mut KernelInfo) {
    let spec = crate::cubin::CubinSpec::from_cubin(file);
    let Some(k) = spec.kernels.iter().find(|k| k.name == name) else {
        return;
    };
    for r in &k.const0_relocs {
        if r.rtype == TEX_HEADER_INDEX {
            info.textures.push((r.offset as u32, r.symbol.clone()));
        }
        if r.rtype == crate::sampler::R_CUDA_SAMP_HEADER_INDEX {
            // A sampler the module's records do not describe reads as one without an
            // initializer (every field the texture's own).
            let init = spec
                .samplers
                .iter()
                .find(|(n, _)| *n == r.symbol)
                .map(|&(_, s)| s)
                .unwrap_or_default();
            info.samplers.push((r.offset as u32, init));
        }
    }
    if !info.textures.is_empty() || !info.samplers.is_empty() {
        info.param_size = k.param_bytes();
    }
}

/// The words of `.nv.constant0.<k>` relocated with `R_CUDA_SURF_HEADER_INDEX`: the handles
/// of the `.surfref`s the kernel uses. They lie past the parameters, so the parameter area
/// ends where the first of them starts.
fn surface_slots(file: &crate::cubin::Cubin, k: &crate::cubin::Kernel, info: &mut KernelInfo) {
    const SURF_HEADER_INDEX: u32 = 0x34;
    let const0 = format!(".nv.constant0.{}", k.name);
    let Some(target) = file.sections.iter().position(|s| s.name == const0) else {
        return;
    };
    for rs in file.relocations.iter().filter(|r| r.target == target) {
        for r in rs.relocs.iter().filter(|r| r.rtype == SURF_HEADER_INDEX) {
            let name = file
                .symbols
                .get(r.sym as usize)
                .map(|s| s.name.clone())
                .unwrap_or_default();
            if let Ok(off) = u32::try_from(r.offset) {
                info.surface_slots.push((off, name));
            }
        }
    }
    if let Some(first) = info.surface_slots.iter().map(|s| s.0).min() {
        let end = first.saturating_sub(PARAM_BASE);
        info.param_size = info.param_size.min(end);
    }
}

/// `R_CUDA_ABS32_LO_20` / `R_CUDA_ABS32_HI_20`: a word of a symbol's address into bits 20..52
/// of an instruction (a `MOV32I`'s immediate); `R_CUDA_ABS32_20`: the whole address there (a
/// 32-bit module's).
const ABS32_20: u32 = 0x2a;
const ABS32_LO_20: u32 = 0x2b;
const ABS32_HI_20: u32 = 0x2c;
/// Data relocations (addresses in initializers): `R_CUDA_G64` / `R_CUDA_G32` write the
/// symbol's generic address plus the addend into 8 / 4 bytes, `R_CUDA_G8_<8k>` (0x54 + k)
/// byte k of it into one byte.
const G32: u32 = 0x3;
const G64: u32 = 0x4;
const G8_0: u32 = 0x54;
const G8_56: u32 = 0x5b;

/// Load the module's data like a driver would and patch kernel `name`'s code for its
/// relocations against it. Returns the code, the kernel information (constant bank 3
/// relocated) and the module-global region (`None` when the module has no global data).
///
/// `.nv.global.init` goes at `base`, then `.nv.global` (zeros) at its alignment. A symbol of
/// those sections has its address there; a symbol of `.nv.constant3` has the generic address
/// `CONST_WINDOW_BASE + value` (our model's const window, as `ir::eval` gives `generic(x)` of
/// a `.const` variable; generic loads read bank 3 there). Code relocations
/// (`R_CUDA_ABS32_*`) against global data are applied; so are the data relocations of
/// `.nv.global.init` and `.nv.constant3` (`R_CUDA_G64`/`G32`/`G8_<n>`, from `.rel` sections
/// with addend 0 or `.rela` ones). A relocation of another type against module data is a
/// [`SimError::BadCubin`]; code relocations against other symbols (functions, textures) are
/// left alone.
/// Where a driver puts the module's global data: `.nv.global.init` at `base`, then
/// `.nv.global` (zeros) at its alignment. Returns the initial bytes and, per placed section,
/// (section index, its address, its offset in the bytes).
#[allow(clippy::type_complexity)]
fn place_globals(
    file: &crate::cubin::Cubin,
    base: u64,
) -> Result<(Vec<u8>, Vec<(usize, u64, usize)>), SimError> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut placed = Vec::new();
    for sname in [".nv.global.init", ".nv.global"] {
        if let Some(i) = file.sections.iter().position(|s| s.name == sname) {
            let s = &file.sections[i];
            let at = (bytes.len() as u64).next_multiple_of(s.align.max(1));
            let end = usize::try_from(at + s.size)
                .ok()
                .filter(|&e| e <= 1 << 30)
                .ok_or_else(|| SimError::BadCubin(format!("{sname} of {} bytes", s.size)))?;
            bytes.resize(end, 0);
            let n = s.data.len().min(s.size as usize);
            bytes[at as usize..at as usize + n].copy_from_slice(&s.data[..n]);
            placed.push((i, base + at, at as usize));
        }
    }
    Ok((bytes, placed))
}

/// The module's `.global` variables as [`load_kernel_globals`] places them: (name,
/// address, size) of every named symbol in `.nv.global.init` / `.nv.global`. Two compilers
/// may order these variables differently; the names say which bytes are whose.
pub fn global_symbols(cubin: &[u8], base: u64) -> Result<Vec<(String, u64, u64)>, SimError> {
    let file = crate::cubin::read(cubin).map_err(|e| SimError::BadCubin(e.to_string()))?;
    let (_, placed) = place_globals(&file, base)?;
    Ok(file
        .symbols
        .iter()
        .filter(|y| !y.name.is_empty())
        .filter_map(|y| {
            let (_, addr, _) = placed.iter().find(|p| p.0 == usize::from(y.shndx))?;
            Some((y.name.clone(), addr + y.value, y.size))
        })
        .collect())
}

pub fn load_kernel_globals(
    cubin: &[u8],
    name: &str,
    base: u64,
) -> Result<(Vec<u64>, KernelInfo, Option<GlobalRegion>), SimError> {
    let bad = SimError::BadCubin;
    let (mut code, mut info) = load_kernel(cubin, name)?;
    let file = crate::cubin::read(cubin).map_err(|e| bad(e.to_string()))?;
    let (mut bytes, placed) = place_globals(&file, base)?;
    let const3 = file.sections.iter().position(|s| s.name == ".nv.constant3");
    // The address of a symbol in module data, if it is in module data.
    let address = |sym: &crate::cubin::Symbol| -> Option<u64> {
        let sec = usize::from(sym.shndx);
        if let Some(&(_, addr, _)) = placed.iter().find(|(i, _, _)| *i == sec) {
            return Some(addr + sym.value);
        }
        (Some(sec) == const3).then(|| CONST_WINDOW_BASE + sym.value)
    };
    let k = file
        .kernels
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| bad(format!("no kernel '{name}'")))?;
    for rs in &file.relocations {
        let target = rs.target;
        let data_in = placed
            .iter()
            .find(|p| p.0 == target && file.sections[target].name == ".nv.global.init")
            .map(|p| p.2);
        let in_const3 = Some(target) == const3;
        if target != k.text_section && data_in.is_none() && !in_const3 {
            continue;
        }
        for r in &rs.relocs {
            let sym = file
                .symbols
                .get(r.sym as usize)
                .ok_or_else(|| bad(format!("relocation symbol {}", r.sym)))?;
            let Some(sym_addr) = address(sym) else {
                if target == k.text_section {
                    // Against something else (a function, a texture): not modelled, left as
                    // `load_kernel` leaves every relocation.
                    continue;
                }
                return Err(bad(format!(
                    "a data relocation against `{}`, which is not module data",
                    sym.name
                )));
            };
            let addr = sym_addr.wrapping_add(r.addend.unwrap_or(0) as u64);
            if target == k.text_section {
                let word = match r.rtype {
                    ABS32_20 if addr >> 32 != 0 => {
                        return Err(bad(format!(
                            "a 32-bit relocation of `{}` at {addr:#x}, above 4 GB",
                            sym.name
                        )))
                    }
                    ABS32_20 | ABS32_LO_20 => addr & 0xffff_ffff,
                    ABS32_HI_20 => addr >> 32,
                    t => return Err(bad(format!("relocation type {t:#x} is not modelled"))),
                };
                let w = code
                    .get_mut((r.offset / 8) as usize)
                    .filter(|_| r.offset % 8 == 0)
                    .ok_or_else(|| bad(format!("relocation at {:#x}", r.offset)))?;
                *w = (*w & !(0xffff_ffff << 20)) | (word << 20);
                continue;
            }
            let le = addr.to_le_bytes();
            let patch: &[u8] = match r.rtype {
                G64 => &le,
                G32 => &le[..4],
                t @ G8_0..=G8_56 => &le[(t - G8_0) as usize..][..1],
                t => return Err(bad(format!("data relocation type {t:#x} is not modelled"))),
            };
            let (dst, at): (&mut Vec<u8>, usize) = match data_in {
                Some(start) => (&mut bytes, start),
                None => {
                    let Some(b) = info.banks.iter_mut().find(|b| b.0 == 3) else {
                        return Err(bad("no constant bank 3 to relocate".into()));
                    };
                    (&mut b.1, 0)
                }
            };
            let size = file.sections[target].size as usize;
            let off = usize::try_from(r.offset)
                .ok()
                .filter(|&o| o + patch.len() <= size && at + o + patch.len() <= dst.len())
                .ok_or_else(|| {
                    bad(format!(
                        "data relocation at {:#x} past the end of {}",
                        r.offset, file.sections[target].name
                    ))
                })?;
            dst[at + off..at + off + patch.len()].copy_from_slice(patch);
        }
    }
    let region = (!placed.is_empty()).then_some(GlobalRegion { base, bytes });
    Ok((code, info, region))
}
