//! `alloca`, `stacksave`, `stackrestore` ([`InstData::Stack`](crate::ir::InstData::Stack)).
//!
//! In: a stack operation with its operand (the size of an `alloca`, the value of a
//! `stackrestore`) and result. Out: SASS that moves a *dynamic stack pointer*, written here
//! as the physical register [`DSP`] (R0), which the allocator then never hands out
//! (`machinst::alloc` reserves a register any instruction names outright).
//!
//! ptxas 11.8 moves R1 itself and keeps a copy of the frame's base for the static frame.
//! Selection here addresses the static frame (`.local` variables, spill slots) off R1 like
//! any other function, so after allocation the driver swaps R0 and R1 in every register
//! field of a function with stack operations (`driver::swap_stack_registers`) and puts
//! `MOV R0, R1` after the frame adjustment: R1 becomes the moving stack pointer, as in
//! ptxas's code, and R0 the frame base. What is written below as `R0` is R1 in the final
//! code and the reverse:
//!
//! - `alloca d, size, align`: `IADD R0, R0, -size` (`IADD32I R0, R0, -k` for a constant,
//!   `-c[0x0][..]` for a parameter, as ptxas), `LOP32I.AND R0, R0, -align`, then the
//!   `.local` address `d = R0` (`MOV d, R0`; high word RZ for `.u64`).
//! - `stacksave d`: `d = R0` (the same instruction).
//! - `stackrestore a`: `MOV R0, a`.
//!
//! Invariant: a `.local` address in a register is absolute, as elsewhere
//! (`Lowerer::lower_local_address`), so loads and stores through an `alloca`'s address use
//! it as it is. (`ir::eval` counts `.local` addresses from the kernel's frame base, so its
//! `alloca` addresses are negative offsets; only memory contents are compared.) The
//! alignment is of the real address (the `LOP` works on the stack pointer itself).

use super::{Loc, Lowerer, Src};
use crate::ir::{StackOp, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::LowerError;
use crate::machinst::{OpSpec, PhysReg, Reg, RegKind};
use crate::sm50::{self, Field, Form};

/// The dynamic stack pointer during selection and allocation (R1 after the driver's swap).
pub(crate) const DSP: PhysReg = PhysReg(0);

impl<'a> Lowerer<'a> {
    pub(super) fn lower_stack(
        &mut self,
        results: &[Value],
        op: StackOp,
        arg: Option<Value>,
    ) -> Result<(), LowerError> {
        let missing = || LowerError::Internal(format!("{op:?} without its operand"));
        match op {
            StackOp::Alloca { align } => {
                let size = arg.ok_or_else(missing)?;
                let mut i = Sm50Inst::new(Role::Plain);
                let d = i.op(Reg::Phys(DSP), OpSpec::def());
                let a = i.op(Reg::Phys(DSP), OpSpec::use_());
                let mut refs = vec![(Field::Rd, d, 0), (Field::Ra, a, 0)];
                let inst = match self.src(size)? {
                    Src::Imm(k) => sm50::Inst::new(Form::IADD32I)
                        .with(Field::Imm, (k as u64).wrapping_neg() & 0xffff_ffff),
                    s => {
                        let forms = (Form::IADD_R, Form::IADD_C, Form::IADD_I);
                        Self::with_b(&mut i, forms, s, 0, &mut refs).with(Field::Negb, 1)
                    }
                };
                i.piece(inst, &refs);
                self.push(i);
                let mut i = Sm50Inst::new(Role::Plain);
                let d = i.op(Reg::Phys(DSP), OpSpec::def());
                let a = i.op(Reg::Phys(DSP), OpSpec::use_());
                let mask = u64::from(align.wrapping_neg());
                let and = sm50::Inst::new(Form::LOP32I)
                    .with(Field::Op, sm50::values::lop32i::op::AND)
                    .with(Field::Imm, mask);
                i.piece(and, &[(Field::Rd, d, 0), (Field::Ra, a, 0)]);
                self.push(i);
                self.stack_address(results)
            }
            StackOp::Save => self.stack_address(results),
            StackOp::Restore => {
                let to = self.reg(arg.ok_or_else(missing)?)?;
                let mut i = Sm50Inst::new(Role::Plain);
                let d = i.op(Reg::Phys(DSP), OpSpec::def());
                let a = i.use_(to.vreg);
                i.piece(
                    sm50::Inst::new(Form::MOV_R),
                    &[(Field::Rd, d, 0), (Field::Rb, a, to.offset)],
                );
                self.push(i);
                Ok(())
            }
        }
    }

    /// The stack pointer as a `.local` address (absolute, as every `.local` address in a
    /// register), the result of an `alloca` or `stacksave`: `MOV d, R0`, and `MOV d.hi, RZ`
    /// for a 64-bit one.
    fn stack_address(&mut self, results: &[Value]) -> Result<(), LowerError> {
        let Some(&v) = results.first() else {
            return Err(LowerError::Internal(
                "stack address without a result".into(),
            ));
        };
        let kind = if self.ty(v) == crate::ir::Type::I64 {
            RegKind::B64
        } else {
            RegKind::B32
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, kind == RegKind::B64);
        let a = i.op(Reg::Phys(DSP), OpSpec::use_());
        i.piece(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, dop, 0), (Field::Rb, a, 0)],
        );
        if kind == RegKind::B64 {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}
