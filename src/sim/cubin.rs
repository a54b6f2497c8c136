//! What the simulator needs from a cubin (an sm_50 ELF from ptxas or from leafold): the
//! kernel's `.text.<k>` words and its [`KernelInfo`], taken from [`crate::cubin::read`]:
//! `.nv.constant0.<k>` size − 0x140 = parameter bytes; `.nv.shared.<k>` size = static shared
//! memory; `.nv.constant2.<k>` and `.nv.constant3` = constant banks 2 and 3;
//! EIATTR_MIN_STACK_SIZE of the kernel = the per-thread frame. Every malformed input is a
//! [`SimError::BadCubin`], never a panic. [`load_kernel_globals`] also places the module's
//! `.global` data and applies the code's relocations against it (what a driver's loader does).

use super::{KernelInfo, SimError, PARAM_BASE};
use crate::ir::eval::GlobalRegion;

/// The code and kernel information of kernel `name` in `cubin`.
pub fn load_kernel(cubin: &[u8], name: &str) -> Result<(Vec<u64>, KernelInfo), SimError> {
    let bad = SimError::BadCubin;
    let file = crate::cubin::read(cubin).map_err(|e| bad(e.to_string()))?;
    let k = file
        .kernels
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| bad(format!("no kernel '{name}'")))?;
    let mut info = KernelInfo::default();
    if let Some(size) = k.constant0_size {
        info.param_size = u32::try_from(size)
            .ok()
            .and_then(|s| s.checked_sub(PARAM_BASE))
            .ok_or_else(|| bad(format!(".nv.constant0.{name} has size {size:#x}")))?;
    }
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
    info.local_size = k.min_stack_size.unwrap_or(0);
    Ok((k.code.clone(), info))
}

/// `R_CUDA_ABS32_LO_20` / `R_CUDA_ABS32_HI_20`: a word of a symbol's address into bits 20..52
/// of an instruction (a `MOV32I`'s immediate); `R_CUDA_ABS32_20`: the whole address there (a
/// 32-bit module's).
const ABS32_20: u32 = 0x2a;
const ABS32_LO_20: u32 = 0x2b;
const ABS32_HI_20: u32 = 0x2c;

/// Load the module's global data like a driver would: `.nv.global.init` at `base`, then
/// `.nv.global` (zeros) at its alignment, and patch kernel `name`'s code for its relocations
/// against symbols in them. Returns the code and the module-global region (`None` when the
/// module has no global data). A relocation of another type against global data is a
/// [`SimError::BadCubin`]; relocations against other symbols are left alone.
pub fn load_kernel_globals(
    cubin: &[u8],
    name: &str,
    base: u64,
) -> Result<(Vec<u64>, KernelInfo, Option<GlobalRegion>), SimError> {
    let bad = SimError::BadCubin;
    let (mut code, info) = load_kernel(cubin, name)?;
    let file = crate::cubin::read(cubin).map_err(|e| bad(e.to_string()))?;
    let mut bytes: Vec<u8> = Vec::new();
    // Section index -> its address.
    let mut placed: Vec<(usize, u64)> = Vec::new();
    for sname in [".nv.global.init", ".nv.global"] {
        if let Some(i) = file.sections.iter().position(|s| s.name == sname) {
            let s = &file.sections[i];
            let at = (bytes.len() as u64).next_multiple_of(s.align.max(1));
            let end = usize::try_from(at + s.size)
                .ok()
                .filter(|&e| e <= 1 << 30)
                .ok_or_else(|| bad(format!("{sname} of {} bytes", s.size)))?;
            bytes.resize(end, 0);
            let n = s.data.len().min(s.size as usize);
            bytes[at as usize..at as usize + n].copy_from_slice(&s.data[..n]);
            placed.push((i, base + at));
        }
    }
    let k = file
        .kernels
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| bad(format!("no kernel '{name}'")))?;
    for rs in file
        .relocations
        .iter()
        .filter(|r| r.target == k.text_section)
    {
        for r in &rs.relocs {
            let sym = file
                .symbols
                .get(r.sym as usize)
                .ok_or_else(|| bad(format!("relocation symbol {}", r.sym)))?;
            let Some(&(_, sec_addr)) = placed.iter().find(|(i, _)| *i == usize::from(sym.shndx))
            else {
                // Against something else (a function, a texture): not modelled, left as
                // `load_kernel` leaves every relocation.
                continue;
            };
            let addr = sec_addr + sym.value + r.addend.unwrap_or(0) as u64;
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
        }
    }
    let region = (!placed.is_empty()).then_some(GlobalRegion { base, bytes });
    Ok((code, info, region))
}
