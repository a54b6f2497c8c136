//! PTX of toolkits that left Maxwell behind (CUDA 12/13, LLVM NVPTX): the instructions that
//! mean nothing on sm_5x, accepted as nothing, and those that cannot run there at all,
//! refused with a located error naming the construct (issue 26).
//!
//! In: one instruction whose opcode belongs to neither the sm_5x set nor an emulation.
//! Out: nothing, a constant, or a diagnostic:
//!
//! ```text
//! griddepcontrol.wait / .launch_dependents   nothing: programmatic dependent launch
//!     (sm_90) overlaps a kernel with the one before it; without it (every launch on
//!     sm_5x) the grid starts after its predecessor has finished and flushed its memory,
//!     which is what `.wait` waits for, and `.launch_dependents` only allows an early start
//! createpolicy.* d, ...                      d = 0: a cache policy is an opaque 64-bit
//!     value that only `.L2::cache_hint` accesses read, and those drop it
//! applypriority / discard.global.L2          nothing: L2 eviction priority, and dropping a
//!     line's data (PTX makes the discarded bytes undefined; keeping them is allowed)
//! wgmma, setmaxnreg, stmatrix, cp.async.bulk(.tensor), tensormap, mapa, getctarank,
//! multimem, barrier.cluster, clusterlaunchcontrol, tcgen05 ...
//!                                            error: Hopper/Blackwell hardware (warpgroup
//!     MMA, register reallocation, TMA, distributed shared memory, clusters)
//! ```
//!
//! Cluster special registers (`%clusterid`, `%cluster_ctarank`, ...) are refused where they
//! are read (`special_reg_error`).

use super::FnBuilder;
use crate::ir::Type;
use crate::ptx::ast::{Instruction, Opcode};

impl FnBuilder<'_, '_> {
    /// `Some(r)` when `ins` is one of this module's: `r` is its result.
    pub(super) fn modern_instr(&mut self, ins: &Instruction) -> Option<Option<()>> {
        let why = match ins.opcode {
            Opcode::Griddepcontrol | Opcode::Applypriority | Opcode::Discard => {
                return Some(Some(()));
            }
            Opcode::Createpolicy => {
                let Some(d) = ins.operands.first() else {
                    return Some(self.unsupported(ins, "createpolicy needs a destination"));
                };
                let zero = self.iconst(Type::I64, 0);
                let r = self
                    .dest1(d)
                    .and_then(|dst| self.write(dst, zero, false, d.span()));
                return Some(r);
            }
            Opcode::Cp if ins.mods.iter().any(|m| m.text().starts_with("bulk")) => {
                "cp.async.bulk is the Tensor Memory Accelerator (TMA, sm_90); sm_5x has none"
            }
            Opcode::Wgmma => "wgmma is warpgroup matrix multiply (sm_90a); sm_5x has none",
            Opcode::Setmaxnreg => {
                "setmaxnreg reallocates registers between warpgroups (sm_90a); sm_5x cannot"
            }
            Opcode::Stmatrix => "stmatrix is an sm_90 matrix store; sm_5x has none",
            Opcode::Tensormap => "tensormap edits TMA descriptors (sm_90); sm_5x has no TMA",
            Opcode::Mapa | Opcode::Getctarank => {
                "distributed shared memory needs thread block clusters (sm_90); sm_5x has none"
            }
            Opcode::Multimem => "multimem needs NVLink multicast memory (sm_90); sm_5x has none",
            Opcode::Barrier if ins.mods.iter().any(|m| m.text() == "cluster") => {
                "barrier.cluster needs thread block clusters (sm_90); sm_5x has none"
            }
            _ => return None,
        };
        Some(self.unsupported(ins, why))
    }
}

/// The error for a special register sm_5x cannot provide, if `name` is one.
pub(super) fn special_reg_error(name: &str) -> Option<String> {
    if name.starts_with("%cluster") || name == "%nclusterid" || name == "%is_explicit_cluster" {
        return Some(format!(
            "special register {name} needs thread block clusters (sm_90); sm_5x has none"
        ));
    }
    None
}
