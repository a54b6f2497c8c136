//! What the simulator needs from a cubin (an sm_50 ELF from ptxas or from leafold): the
//! kernel's `.text.<k>` words and its [`KernelInfo`], taken from [`crate::cubin::read`]:
//! `.nv.constant0.<k>` size − 0x140 = parameter bytes; `.nv.shared.<k>` size = static shared
//! memory; `.nv.constant2.<k>` and `.nv.constant3` = constant banks 2 and 3;
//! EIATTR_MIN_STACK_SIZE of the kernel = the per-thread frame. Every malformed input is a
//! [`SimError::BadCubin`], never a panic.

use super::{KernelInfo, SimError, PARAM_BASE};

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
