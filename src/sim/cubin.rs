//! Reading what the simulator needs from a cubin (an sm_50 ELF from ptxas or from leafold):
//! the kernel's `.text.<kernel>` words and its [`KernelInfo`].
//!
//! This reads the ELF directly with the `object` crate (sections and symbols by name), so the
//! simulator does not depend on `crate::cubin`. What it takes, per sm50-isa.md §6:
//! `.nv.constant0.<k>` size − 0x140 = parameter bytes; `.nv.shared.<k>` size = static shared
//! memory; `.nv.constant2.<k>` and `.nv.constant3` = constant banks 2 and 3;
//! EIATTR_MIN_STACK_SIZE (attribute 0x12 in `.nv.info`, payload `{u32 symbol, u32 bytes}`)
//! for the kernel's symbol = the per-thread frame. Every malformed input is a
//! [`SimError::BadCubin`], never a panic.

use object::{Object, ObjectSection, ObjectSymbol};

use super::{words, KernelInfo, SimError, PARAM_BASE};

/// The code and kernel information of kernel `name` in `cubin`.
pub fn load_kernel(cubin: &[u8], name: &str) -> Result<(Vec<u64>, KernelInfo), SimError> {
    let bad = |m: String| SimError::BadCubin(m);
    let file = object::File::parse(cubin).map_err(|e| bad(format!("not an ELF file: {e}")))?;
    let section = |sname: &str| -> Result<Option<(u64, Vec<u8>)>, SimError> {
        let Some(s) = file.section_by_name(sname) else {
            return Ok(None);
        };
        // NOBITS sections (`.nv.shared`) have a size but no data.
        let data = s.data().map_err(|e| bad(format!("{sname}: {e}")))?;
        Ok(Some((s.size(), data.to_vec())))
    };
    let (_, text) = section(&format!(".text.{name}"))?
        .ok_or_else(|| bad(format!("no section .text.{name}")))?;
    let code = words(&text).map_err(|_| bad(format!(".text.{name} is not whole words")))?;
    let mut info = KernelInfo::default();
    if let Some((size, _)) = section(&format!(".nv.constant0.{name}"))? {
        info.param_size = u32::try_from(size)
            .ok()
            .and_then(|s| s.checked_sub(PARAM_BASE))
            .ok_or_else(|| bad(format!(".nv.constant0.{name} has size {size:#x}")))?;
    }
    if let Some((size, _)) = section(&format!(".nv.shared.{name}"))? {
        info.shared_size =
            u32::try_from(size).map_err(|_| bad(format!("shared size {size:#x}")))?;
    }
    if let Some((_, data)) = section(&format!(".nv.constant2.{name}"))? {
        info.banks.push((2, data));
    }
    if let Some((_, data)) = section(".nv.constant3")? {
        info.banks.push((3, data));
    }
    let symbol = file
        .symbols()
        .find(|s| s.name() == Ok(name))
        .map(|s| s.index().0 as u32);
    if let (Some(sym), Some((_, data))) = (symbol, section(".nv.info")?) {
        info.local_size = min_stack_size(&data, sym).unwrap_or(0);
    }
    Ok((code, info))
}

/// EIATTR_MIN_STACK_SIZE of symbol `sym` from `.nv.info` records (`u8 format, u8 attr`, then
/// for format 4 `u16 len` + payload, otherwise a `u16` value).
pub fn min_stack_size(info: &[u8], sym: u32) -> Option<u32> {
    let mut at = 0usize;
    while at + 4 <= info.len() {
        let (format, attr) = (info[at], info[at + 1]);
        let len = usize::from(u16::from_le_bytes([info[at + 2], info[at + 3]]));
        if format != 4 {
            at += 4;
            continue;
        }
        let payload = info.get(at + 4..at + 4 + len)?;
        if attr == 0x12 && len >= 8 {
            let word = |k: usize| {
                u32::from_le_bytes([payload[k], payload[k + 1], payload[k + 2], payload[k + 3]])
            };
            if word(0) == sym {
                return Some(word(4));
            }
        }
        at += 4 + len;
    }
    None
}
