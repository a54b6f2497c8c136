//! `prefetch{.global,.local,}.{L1,L2}` and `prefetchu.L1` (declared from `build.rs`).
//!
//! In: one `prefetch`/`prefetchu` instruction. Out: an `InstData::Prefetch` of its space
//! (global, local, or generic when none is written; `prefetchu` is generic, as ptxas 11.8
//! treats it: `CCTL.E.PF1`), cache level and address; `.L2::evict_last`/`.L2::evict_normal`
//! (sm_80) are L2 prefetches; a diagnostic for the forms sm_5x has not (`.tensormap`,
//! another space).

use super::FnBuilder;
use crate::ir::Space;
use crate::ptx::ast::{Instruction, Modifier, Opcode};

impl FnBuilder<'_, '_> {
    pub(super) fn prefetch(&mut self, ins: &Instruction) -> Option<()> {
        let mut level = None;
        let mut space = Space::Generic;
        for m in &ins.mods {
            match m {
                Modifier::Space(_) => {
                    space = match self.mem_space(ins)? {
                        s @ (Space::Global | Space::Local) => s,
                        _ => {
                            return self.unsupported(
                                ins,
                                "prefetch of a space other than .global and .local",
                            )
                        }
                    };
                }
                _ if m.text() == "L1" && level.is_none() => level = Some(1),
                _ if m.text() == "L2" && level.is_none() && ins.opcode == Opcode::Prefetch => {
                    level = Some(2)
                }
                // sm_80's eviction-priority prefetches: an L2 prefetch on sm_5x (issue 26).
                _ if matches!(m.text().as_str(), "L2::evict_last" | "L2::evict_normal")
                    && level.is_none()
                    && ins.opcode == Opcode::Prefetch =>
                {
                    level = Some(2)
                }
                _ => {
                    let what = format!("the modifier .{} of {}", m.text(), ins.opcode.name());
                    return self.unsupported(ins, &what);
                }
            }
        }
        let Some(level) = level else {
            return self.unsupported(ins, "prefetch needs .L1 or .L2 (prefetchu: .L1)");
        };
        let ops = self.ops(ins, 1)?;
        let (addr, off) = self.address(&ops[0], space)?;
        self.ins().prefetch(space, level, addr, off);
        Some(())
    }
}
