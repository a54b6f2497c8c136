//! `prefetch` and `prefetchu` ([`InstData::Prefetch`](crate::ir::InstData::Prefetch)).
//!
//! In: the space (global, local or generic), the cache level (1 or 2), and the address as
//! any load's (`addr + offset`). Out: as ptxas 11.8, one `CCTL.E.PF1/PF2 [Ra+off]` for a
//! global or generic address (64-bit; `CCTL.PF1/PF2` for a 32-bit one) or `CCTLL.PF1/PF2
//! [Ra+off]` for a local one (`Ra` the frame address, R1 for a frame offset). The address is
//! matched and built by [`Lowerer::address`] as a global (or local) load's is; a generic
//! address is taken as a global one (CCTL on sm_5x is generic; nothing here tests the shared
//! window). CCTL's offset counts words: a displacement that is not a multiple of 4 is added to
//! the address register first (as ptxas 11.8: `IADD32I R0, R0, 0x3; CCTL.PF1 [R0]`), except
//! on a bare frame offset (`[R1+off]`), where it is rounded down to the word: a prefetch is
//! only a hint and changes no memory, so the line it warms does not change what the program
//! computes.

use super::Lowerer;
use crate::ir::{Space, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::LowerError;
use crate::machinst::{OpSpec, PhysReg, Reg};
use crate::sm50::{self, Field, Form};

impl<'a> Lowerer<'a> {
    pub(super) fn lower_prefetch(
        &mut self,
        space: Space,
        level: u8,
        addr: Value,
        offset: i32,
    ) -> Result<(), LowerError> {
        let local = space == Space::Local;
        let as_space = if local { Space::Local } else { Space::Global };
        let mut a = self.address(as_space, addr, offset)?;
        if a.disp % 4 != 0 && !a.sp {
            // CCTL's offset counts words: as ptxas, add a byte displacement to the address.
            a.addr = Some(self.add_disp(a.addr, a.disp, a.wide)?);
            a.disp = 0;
        }
        // CCTL op: 1 = .PF1 (L1), 3 = .PF2 (L2).
        let op = if level == 1 { 1 } else { 3 };
        let words = a.disp.div_euclid(4);
        let mut inst = sm50::Inst::new(if local { Form::CCTL_L } else { Form::CCTL })
            .with(Field::Op, op)
            .with(Field::Ra, 255);
        let bits = if local { 22 } else { 30 };
        inst.set(Field::Off, (words as u64) & ((1u64 << bits) - 1));
        if !local {
            inst.set(Field::E, a.wide as u64);
        }
        let mut i = Sm50Inst::new(Role::Plain);
        let mut refs = Vec::new();
        if let Some(l) = a.addr {
            let o = i.use_(l.vreg);
            refs.push((Field::Ra, o, l.offset));
        } else if a.sp {
            let o = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
            refs.push((Field::Ra, o, 0));
        }
        i.piece(inst, &refs);
        self.push(i);
        Ok(())
    }
}
