//! Calls of system functions ([`InstData::ExternCall`](crate::ir::InstData::ExternCall)) by
//! the sm_50 call ABI (docs/calls.md, measured on ptxas 11.8's cubins).
//!
//! In: the argument words with their registers (R4..R15) and the result words (R4, R5..).
//! Out: one [`Sm50Inst`]: a copy of every argument word in a fresh register that the call
//! pins to its ABI register ([`OpSpec::fixed`]), the results defined in R4.., and one `JCAL`
//! piece whose target the loader fills in (`R_CUDA_ABS32_20` against the callee's undefined
//! symbol: [`RelocWord::Call`]). The call clobbers the ABI's caller-saved registers below
//! R64 (R0, R3..R15, R32..R35, R40..R43, R48..R51, R56..R59) and every predicate
//! ([`extern_call_clobbers`]); R1 (the stack pointer), R2 and R16..R31, R36..R39, ... are
//! the callee's to save. The driver refuses a kernel with such a call that uses more than
//! 64 registers (the saved/scratch pattern goes on above R64 and the clobber sets here
//! stop there).
//!
//! A call of one of the module's own subroutines (`ir::Module::subroutines`, a recursive
//! `.func`) is the same instruction with a `CAL` piece in place of the `JCAL`: its `rel`
//! holds [`SUB_CAL_BASE`] + the subroutine's index until the driver places the subroutine's
//! code after the kernel's and points the `CAL` at it. The clobbers are the same.
//!
//! Calls that pass the same values in the same registers and share a dominating block with
//! nothing but compares between it and them (an indirect call's candidates: one `CAL` each
//! behind a compare chain, `ir::build::calls`) take their copies from one set made at the end
//! of that block ([`shared_arg_calls`]): the arguments move into R4.. once per call site, as
//! ptxas moves them once before its `BRX`, not once per candidate.
//!
//! Inside a subroutine ([`crate::ir::Function::subroutine`]) the arguments arrive in R4..:
//! one piece-less instruction at entry defines every argument word in its register
//! ([`Lowerer::capture_sub_args`]) and each is copied to a fresh register at once, which
//! `LoadParam` then names (`offset / 4` is the word: `Function::subroutine`). The return
//! pins its result words to R4.. and ends in `RET` ([`Lowerer::lower_sub_return`]).
//!
//! A result of more than 12 words (over 48 bytes) comes back through memory, as ptxas
//! passes it: the call gets the address of a buffer in the caller's outgoing area
//! (`ir::result_buffer_offset`) pinned to R4 and defines no result register, and each word
//! is an `LDL` after it; the subroutine's `SubReturn` stores its words there (`STL [R1 +
//! frame + off]`, [`STACK_ARG_LOAD_BASE`] until the driver knows the frame), the two words
//! of one 64-bit register at an 8-aligned slot as one `STL.64`.
//!
//! Invariant: a def and a clobber never name one register (the sets leave out the result
//! registers).

use super::Lowerer;
use crate::ir::{BinaryOp, Block, ConvOp, Function, Inst, InstData, Type, Value};
use crate::lower::inst::{Reloc, RelocWord, Role, Sm50Inst};
use crate::lower::LowerError;
use crate::machinst::{OpSpec, PhysReg, Reg, RegKind, VReg};
use crate::sm50::{self, Field, Form};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The `rel` of a `CAL` of subroutine `k` before the driver places it: this + `k` (the
/// field is 24 bits; the f32 division's `CAL` holds `CAL_FDIV`, 0, and every `CAL` placed
/// in a kernel holds an instruction index far below this).
pub(crate) const SUB_CAL_BASE: u64 = 0x80_0000;

/// Added to [`SUB_CAL_BASE`] + `k` in the `CAL` of a subroutine kept for its size
/// (`ir::Module::outlined`, not recursive). Such a call has a convention of its own (the
/// callee is local to the kernel's `.text`, as ptxas's `$k$f` are, so no other object sees
/// it): it clobbers only R0, R3..R15 (less its results) and the predicates
/// ([`crate::lower::abi::outlined_call_clobbers`]), and the subroutine saves every other
/// register it writes (`driver::subroutines`). A kernel then keeps its values live across
/// the call in R16 and up without the ABI's gaps (R32..R35, R40..R43, ...), and its register
/// count stays near the inlined code's. Its subroutine makes no call of the standard ABI
/// (`ir::build::calls::outlined_set`), which could clobber those.
pub(crate) const OUTLINED_CAL: u64 = 0x40_0000;

/// The displacement a subroutine's load of a stack argument holds until the driver knows the
/// subroutine's frame: `[R1 + this + off]` becomes `[R1 + frame + off]`
/// (`driver::subroutines`). Far above any frame (local memory is at most 512 KiB a thread)
/// and within the `LDL` offset's 24 signed bits.
pub(crate) const STACK_ARG_LOAD_BASE: i64 = 0x40_0000;

impl Lowerer<'_> {
    /// A kernel's descriptor ([`crate::ir::InstData::KernelDesc`]) as ptxas 11.8 writes it:
    /// `MOV32I lo, 0x0` and `MOV32I hi, 0x0` that the linker patches
    /// (`R_CUDA_FUNC_DESC32_LO_32` / `HI_32` against the kernel's symbol); a 32-bit one is the
    /// low word alone.
    pub(super) fn lower_kernel_desc(
        &mut self,
        result: Value,
        ty: Type,
        entry: u32,
    ) -> Result<(), LowerError> {
        let (kind, words): (RegKind, &[RelocWord]) = if ty == Type::I64 {
            (
                RegKind::B64,
                &[RelocWord::DescLo(entry), RelocWord::DescHi(entry)],
            )
        } else {
            (RegKind::B32, &[RelocWord::DescLo(entry)])
        };
        // (`var` is unused by the descriptor's relocations.)
        self.relocated_words(result, kind, crate::ir::GlobalVar::from_u32(0), words);
        Ok(())
    }

    /// Each register argument word copied into a register of its own, which the call pins
    /// to its ABI register: the value itself may live on past the call, in a register the
    /// call does not clobber. (Pinned words are all 32-bit: a pair pinned in the 64-bit
    /// class and a word defined in the 32-bit class at one call would alias behind the
    /// allocator's back.) Stack words are left to [`Lowerer::store_stack_arg`].
    fn arg_copies(
        &mut self,
        args: &[Value],
        arg_regs: &[u8],
    ) -> Result<Vec<(VReg, u8)>, LowerError> {
        let mut copies = Vec::new();
        for (&a, &r) in args.iter().zip(arg_regs) {
            if r >= crate::ir::STACK_ARG_REG {
                continue;
            }
            let loc = self.reg(a)?;
            let words = if self.ty(a) == Type::I64 { 2 } else { 1 };
            for w in 0..words {
                let word = super::Loc {
                    vreg: loc.vreg,
                    offset: loc.offset + w,
                };
                copies.push((self.copy_b32(word), r + w));
            }
        }
        Ok(copies)
    }

    /// At the end of IR block `b` (before its terminator): the argument copies of each
    /// group of calls [`shared_arg_calls`] placed here, recorded for every call of the group.
    pub(super) fn share_arg_copies(&mut self, b: Block) -> Result<(), LowerError> {
        let Some(groups) = self.shared_groups.get(&b).cloned() else {
            return Ok(());
        };
        for group in groups {
            let InstData::ExternCall {
                ref args,
                ref arg_regs,
                ..
            } = self.f.insts[group[0]].data
            else {
                continue;
            };
            let copies = self.arg_copies(args, arg_regs)?;
            for call in group {
                self.shared_copies.insert(call, copies.clone());
            }
        }
        Ok(())
    }

    pub(super) fn lower_extern_call(
        &mut self,
        call: Inst,
        results: &[Value],
        callee: u32,
        args: &[Value],
        arg_regs: &[u8],
    ) -> Result<(), LowerError> {
        // A result of more than 12 words comes back through a buffer in the outgoing area,
        // whose address goes in R4 (`ir::result_buffer_offset`; docs/calls.md).
        let buffer = (results.len() > crate::ir::MAX_RESULT_REGISTERS)
            .then(|| crate::ir::call_result_buffer_offset(self.f, args, arg_regs));
        // The register words' copies: made once before an indirect call's dispatch where
        // its candidates share them (`shared_arg_calls`), else here.
        let mut copies = match self.shared_copies.get(&call) {
            Some(shared) => shared.clone(),
            None => self.arg_copies(args, arg_regs)?,
        };
        for (&a, &r) in args.iter().zip(arg_regs) {
            if r >= crate::ir::STACK_ARG_REG {
                self.store_stack_arg(a, r)?;
            }
        }
        if let Some(off) = buffer {
            copies.push((self.sp_plus(off), 4));
        }
        let mut i = Sm50Inst::new(Role::Plain);
        for (v, r) in copies {
            i.op(Reg::Virt(v), OpSpec::use_().fixed(PhysReg(r)));
        }
        let wide = results.first().is_some_and(|&r| self.ty(r) == Type::I64);
        let in_registers = if buffer.is_some() { 0 } else { results.len() };
        let words: Vec<VReg> = (0..in_registers * if wide { 2 } else { 1 })
            .map(|k| {
                let d = self.new_vreg(RegKind::B32);
                i.op(Reg::Virt(d), OpSpec::def().fixed(PhysReg(4 + k as u8)));
                d
            })
            .collect();
        let local = self.module.subroutine_of(callee).and_then(|f| {
            self.module
                .subroutines
                .iter()
                .position(|g| g.name == f.name)
        });
        if let Some(k) = local {
            let outlined = self
                .module
                .outlined
                .contains(&self.module.subroutines[k].name);
            let flag = if outlined { OUTLINED_CAL } else { 0 };
            let cal = sm50::Inst::new(Form::CAL).with(Field::Rel, SUB_CAL_BASE + flag + k as u64);
            i.piece(cal, &[]);
        } else {
            i.piece(sm50::Inst::new(Form::JCAL), &[]);
            if let Some(p) = i.pieces.last_mut() {
                p.reloc = Some(Reloc {
                    var: crate::ir::GlobalVar::from_u32(0),
                    word: RelocWord::Call(callee),
                });
            }
        }
        self.push(i);
        if let Some(off) = buffer {
            // The result words the caller reads, back from the buffer (ptxas: `LDL R5,
            // [R1]`, `LDL R0, [R1+0xc]`, ... only for the words it reads).
            for (k, &res) in results.iter().enumerate() {
                if !self.result_used(res) {
                    continue;
                }
                let vreg = self.frame_word(i64::from(off) + 4 * k as i64, None, 4)?;
                self.set_loc(res, super::Loc { vreg, offset: 0 });
            }
            return Ok(());
        }
        match (results.first(), &words[..]) {
            (Some(&res), [w]) => self.set_loc(
                res,
                super::Loc {
                    vreg: *w,
                    offset: 0,
                },
            ),
            (Some(&res), [lo, hi]) if results.len() == 1 => {
                let pair = self.pair_of(*lo, *hi);
                self.set_loc(
                    res,
                    super::Loc {
                        vreg: pair,
                        offset: 0,
                    },
                );
            }
            // A result of more than 8 bytes: one 32-bit result per word (R4..R15).
            _ => {
                for (&res, &w) in results.iter().zip(&words) {
                    self.set_loc(res, super::Loc { vreg: w, offset: 0 });
                }
            }
        }
        Ok(())
    }

    /// A stack argument of a call (pseudo-register `r` >= `ir::STACK_ARG_REG`): `STL` (or
    /// `STL.64`) of its value at `[R1 + 4 * (r - STACK_ARG_REG)]`, the caller's outgoing area
    /// at the bottom of its frame (`ir::outgoing_args_size`), before the call.
    fn store_stack_arg(&mut self, a: Value, r: u8) -> Result<(), LowerError> {
        let loc = self.reg(a)?;
        let bytes = if self.ty(a) == Type::I64 { 8 } else { 4 };
        let access = super::mem::Access {
            sp: true,
            addr: None,
            pred: None,
            disp: 4 * i64::from(r - crate::ir::STACK_ARG_REG),
            wide: false,
        };
        let mut i = Sm50Inst::new(Role::Plain);
        let (inst, mut refs) =
            self.mem_inst(&mut i, crate::ir::Space::Local, &access, true, bytes)?;
        let sop = i.use_(loc.vreg);
        refs.push((Field::Rd, sop, loc.offset));
        i.piece(inst, &refs);
        self.push(i);
        Ok(())
    }

    /// In a subroutine, stack argument word `word` (12 and up, after R4..R15's): `LDL` (or
    /// `LDL.64`) at `[R1 + STACK_ARG_LOAD_BASE + 4 * (word - 12)]`, which the driver turns
    /// into `[R1 + frame + ...]` once the subroutine's frame is known (the caller's outgoing
    /// area lies just above the callee's frame).
    fn load_stack_arg(&mut self, word: usize, kind: RegKind) -> Result<VReg, LowerError> {
        let bytes = if kind == RegKind::B64 { 8 } else { 4 };
        let access = super::mem::Access {
            sp: true,
            addr: None,
            pred: None,
            disp: STACK_ARG_LOAD_BASE + 4 * (word as i64 - 12),
            wide: false,
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let (inst, mut refs) =
            self.mem_inst(&mut i, crate::ir::Space::Local, &access, false, bytes)?;
        refs.push((Field::Rd, dop, 0));
        i.piece(inst, &refs);
        self.push(i);
        Ok(d)
    }

    /// At a subroutine's entry: every argument word out of R4..R15 into a register of its
    /// own (`sub_args`), before anything can overwrite them. (Stack arguments are loaded
    /// where they are read: [`Lowerer::lower_sub_param`].)
    pub(super) fn capture_sub_args(&mut self) {
        let words = self
            .f
            .params
            .iter()
            .map(|p| (p.offset + p.size).div_ceil(4))
            .max()
            .unwrap_or(0)
            .min(12);
        let mut i = Sm50Inst::new(Role::Plain);
        let fixed: Vec<VReg> = (0..words)
            .map(|k| {
                let d = self.new_vreg(RegKind::B32);
                i.op(Reg::Virt(d), OpSpec::def().fixed(PhysReg(4 + k as u8)));
                d
            })
            .collect();
        self.push(i);
        self.sub_args = fixed
            .into_iter()
            .map(|v| self.copy_b32(super::Loc { vreg: v, offset: 0 }))
            .collect();
    }

    /// `LoadParam` in a subroutine: the argument word (or pair) copied at entry.
    pub(super) fn lower_sub_param(
        &mut self,
        res: Value,
        ty: Type,
        offset: u32,
    ) -> Result<(), LowerError> {
        if self.planning.is_some() {
            // Demand planning (`Lowerer::demand`) runs before the entry copies exist; a
            // parameter reads no other value.
            return Ok(());
        }
        let word = (offset / 4) as usize;
        let unsupported = || LowerError::Unsupported {
            func: self.f.name.clone(),
            what: format!("a {ty} subroutine parameter at byte {offset} (only whole words)"),
        };
        if word >= 12 && offset % 4 == 0 {
            // A stack argument (`ir::STACK_ARG_REG`).
            let kind = match ty {
                Type::I32 | Type::F32 => RegKind::B32,
                Type::I64 | Type::F64 if word % 2 == 0 => RegKind::B64,
                _ => return Err(unsupported()),
            };
            let vreg = self.load_stack_arg(word, kind)?;
            self.set_loc(res, super::Loc { vreg, offset: 0 });
            return Ok(());
        }
        let vreg = match ty {
            Type::I32 | Type::F32 if offset % 4 == 0 => {
                *self.sub_args.get(word).ok_or_else(unsupported)?
            }
            Type::I64 | Type::F64 if offset % 4 == 0 => {
                let (Some(&lo), Some(&hi)) = (self.sub_args.get(word), self.sub_args.get(word + 1))
                else {
                    return Err(unsupported());
                };
                self.pair_of(lo, hi)
            }
            // A byte or half of an aggregate packed into its argument word (ptxas's caller
            // `BFI`s a `.b8 p[3]`'s bytes into R4, its callee `BFE`s them out).
            Type::I8 | Type::I16 | Type::F16 if (offset % 4) * 8 + ty.bits() <= 32 => {
                let w = *self.sub_args.get(word).ok_or_else(unsupported)?;
                self.sub_word(w, offset % 4)
            }
            _ => return Err(unsupported()),
        };
        self.set_loc(res, super::Loc { vreg, offset: 0 });
        Ok(())
    }

    /// The part of argument word `w` from byte `byte` up, shifted down to bit 0 (the high
    /// bits of an i8/i16 register are unspecified, so a logical shift is enough).
    fn sub_word(&mut self, w: VReg, byte: u32) -> VReg {
        if byte == 0 {
            return w;
        }
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let s = i.use_(w);
        let shr = sm50::Inst::new(Form::SHR_I).with(Field::ImmImm20s, u64::from(8 * byte));
        i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, s, 0)]);
        self.push(i);
        d
    }

    /// `SubReturn`: the result words pinned to R4.., then `RET`. More than 12 words go to the
    /// caller's buffer instead: `STL [R1 + frame + off]`, the caller's outgoing area just
    /// above this subroutine's frame at the offset the caller read them from
    /// (`ir::result_buffer_offset` after the stack parameters; the marker
    /// [`STACK_ARG_LOAD_BASE`] until the driver knows the frame), the address ptxas's callee
    /// takes from R4 (with no stack arguments, the caller's `R1`).
    pub(super) fn lower_sub_return(&mut self, values: &[Value]) -> Result<(), LowerError> {
        if values.len() > crate::ir::MAX_RESULT_REGISTERS {
            let stack_end = self
                .f
                .params
                .iter()
                .filter(|p| p.offset >= 48)
                .map(|p| p.offset + p.size.next_multiple_of(4) - 48)
                .max()
                .unwrap_or(0);
            let off = i64::from(crate::ir::result_buffer_offset(stack_end));
            let mut k = 0;
            while k < values.len() {
                let disp = STACK_ARG_LOAD_BASE + off + 4 * k as i64;
                // The two words of one 64-bit value (a `.b64` member of the result, written
                // whole) at an 8-aligned slot (the buffer is 8-aligned): one `STL.64`, as
                // ptxas 11.8 stores it (probe `r64v.ptx`: `STL.64 [R4+0x10], R6`).
                let whole = match values.get(k + 1) {
                    Some(&hi) if k % 2 == 0 => self.words_of(values[k], hi),
                    _ => None,
                };
                if let Some(x) = whole {
                    let loc = self.reg(x)?;
                    if loc.vreg.kind == RegKind::B64 && loc.offset == 0 {
                        self.frame_word(disp, Some(loc), 8)?;
                        k += 2;
                        continue;
                    }
                }
                let loc = self.reg(values[k])?;
                self.frame_word(disp, Some(loc), 4)?;
                k += 1;
            }
            let mut i = Sm50Inst::new(Role::Ret);
            i.piece(sm50::Inst::new(Form::RET), &[]);
            self.terminate(i, Vec::new());
            return Ok(());
        }
        let mut copies = Vec::new();
        for &v in values {
            let loc = self.reg(v)?;
            let words = if matches!(self.ty(v), Type::I64 | Type::F64) {
                2
            } else {
                1
            };
            for w in 0..words {
                let word = super::Loc {
                    vreg: loc.vreg,
                    offset: loc.offset + w,
                };
                copies.push(self.copy_b32(word));
            }
        }
        let mut i = Sm50Inst::new(Role::Ret);
        for (k, v) in copies.into_iter().enumerate() {
            i.op(Reg::Virt(v), OpSpec::use_().fixed(PhysReg(4 + k as u8)));
        }
        i.piece(sm50::Inst::new(Form::RET), &[]);
        self.terminate(i, Vec::new());
        Ok(())
    }

    /// The 64-bit value whose low and high words `lo` and `hi` are (`trunc x` and
    /// `trunc (x >> 32)`, each perhaps masked to 32 bits, as `ir::build` reads a word of a
    /// `.b64` slot).
    fn words_of(&self, lo: Value, hi: Value) -> Option<Value> {
        let trunc_of = |v: Value| match *self.def_of(v)? {
            InstData::Convert {
                op: ConvOp::Trunc,
                arg,
                ..
            } => Some(self.unmasked(arg)),
            _ => None,
        };
        let x = trunc_of(lo)?;
        let InstData::Binary {
            op: BinaryOp::ShrU | BinaryOp::ShrS,
            args: [y, n],
        } = *self.def_of(trunc_of(hi)?)?
        else {
            return None;
        };
        (y == x && self.ty(x) == Type::I64 && matches!(self.class(n), super::Class::Imm(32)))
            .then_some(x)
    }

    /// `v` without an `and` with `0xffffffff` (which a truncation to 32 bits makes moot).
    fn unmasked(&self, v: Value) -> Value {
        match self.def_of(v) {
            Some(&InstData::Binary {
                op: BinaryOp::And,
                args: [x, m],
            }) if matches!(self.class(m), super::Class::Imm(0xffff_ffff)) => x,
            _ => v,
        }
    }

    /// `R1 + off` in a fresh register: the 32-bit local address of the outgoing area's byte
    /// `off` (`MOV R, R1` for 0, as ptxas passes a result buffer).
    fn sp_plus(&mut self, off: u32) -> VReg {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
        if off == 0 {
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, 0), (Field::Rb, sp, 0)],
            );
        } else {
            i.piece(
                sm50::Inst::new(Form::IADD32I).with_signed(Field::Imm, i64::from(off)),
                &[(Field::Rd, dop, 0), (Field::Ra, sp, 0)],
            );
        }
        self.push(i);
        d
    }

    /// One word (`bytes` 4) or an aligned pair (8) of the frame at `[R1 + disp]`: `LDL` into
    /// a fresh register (`value` `None`) or `STL` of `value`.
    fn frame_word(
        &mut self,
        disp: i64,
        value: Option<super::Loc>,
        bytes: u32,
    ) -> Result<VReg, LowerError> {
        let access = super::mem::Access {
            sp: true,
            addr: None,
            pred: None,
            disp,
            wide: false,
        };
        let mut i = Sm50Inst::new(Role::Plain);
        let (reg, op, offset) = match value {
            Some(l) => (l.vreg, i.use_(l.vreg), l.offset),
            None => {
                let d = self.new_vreg(if bytes == 8 {
                    RegKind::B64
                } else {
                    RegKind::B32
                });
                (d, i.def(d, false), 0)
            }
        };
        let (inst, mut refs) = self.mem_inst(
            &mut i,
            crate::ir::Space::Local,
            &access,
            value.is_some(),
            bytes,
        )?;
        refs.push((Field::Rd, op, offset));
        i.piece(inst, &refs);
        self.push(i);
        Ok(reg)
    }

    /// A fresh B64 virtual register holding the words `lo` and `hi` (two register moves).
    pub(super) fn pair_of(&mut self, lo: VReg, hi: VReg) -> VReg {
        let c = self.new_vreg(RegKind::B64);
        let mut mv = Sm50Inst::new(Role::Plain);
        let d = mv.def(c, true);
        let a = mv.use_(lo);
        let b = mv.use_(hi);
        mv.piece(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, d, 0), (Field::Rb, a, 0)],
        );
        mv.piece(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, d, 1), (Field::Rb, b, 0)],
        );
        self.push(mv);
        c
    }
}

/// At most this many IR instructions may lie between the block where [`shared_arg_calls`]
/// copies a group's arguments and its calls (an indirect call's compare chain is two or three
/// a candidate): the copies are live across them.
const MAX_SHARED_SPAN: usize = 32;

/// The calls that take their argument words from one set of copies, by the IR block at
/// whose end the copies are made: every group of two or more calls that pass the same values
/// in the same registers (R4..R15; at most 12 result words), where the nearest block that
/// dominates them all holds none of them, and nothing on the way from it to each call (at
/// most [`MAX_SHARED_SPAN`] instructions) is another call, which would clobber the copies.
///
/// That is the shape of an indirect call whose candidates are subroutines
/// (`ir::build::calls`): one compare and `CAL` per candidate, each copy jumping past the
/// others. With the copies made once before the compares, the arguments are moved into
/// R4.. once per call site, as ptxas does before its `BRX`, instead of once per candidate.
pub(super) fn shared_arg_calls(
    f: &Function,
    doms: &crate::ir::Dominators,
) -> HashMap<Block, Vec<Vec<Inst>>> {
    let mut by_args: HashMap<Vec<(Value, u8)>, Vec<Inst>> = HashMap::default();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let node = &f.insts[i];
            let InstData::ExternCall { args, arg_regs, .. } = &node.data else {
                continue;
            };
            if node.results.len() > crate::ir::MAX_RESULT_REGISTERS {
                continue;
            }
            let key: Vec<(Value, u8)> = args
                .iter()
                .zip(arg_regs)
                .filter(|&(_, &r)| r < crate::ir::STACK_ARG_REG)
                .map(|(&a, &r)| (a, r))
                .collect();
            if !key.is_empty() {
                by_args.entry(key).or_default().push(i);
            }
        }
    }
    let mut out: HashMap<Block, Vec<Vec<Inst>>> = HashMap::default();
    let preds = predecessors(f);
    let mut groups: Vec<Vec<Inst>> = by_args.into_values().filter(|g| g.len() > 1).collect();
    // In program order, so that the copies come out the same on every run.
    groups.sort_by_key(|g| g[0]);
    for group in groups {
        let Some(home) = group
            .iter()
            .map(|&i| Some(f.insts[i].block))
            .reduce(|a, b| common_dominator(doms, a?, b?))
            .flatten()
        else {
            continue;
        };
        if group
            .iter()
            .all(|&i| span_without_calls(f, &preds, home, i))
        {
            out.entry(home).or_default().push(group);
        }
    }
    out
}

/// The nearest block that dominates both `a` and `b` (`None` if one is unreachable).
fn common_dominator(doms: &crate::ir::Dominators, a: Block, b: Block) -> Option<Block> {
    let mut x = a;
    while !doms.dominates(x, b) {
        x = doms.idom(x)?;
    }
    Some(x)
}

/// Whether the code from the end of `home` to `call` (which `home` dominates) holds no other
/// call and at most [`MAX_SHARED_SPAN`] instructions; false where `call` is in `home`.
fn span_without_calls(
    f: &Function,
    preds: &HashMap<Block, Vec<Block>>,
    home: Block,
    call: Inst,
) -> bool {
    let start = f.insts[call].block;
    if start == home {
        return false;
    }
    let is_call = |i: &Inst| matches!(f.insts[*i].data, InstData::ExternCall { .. });
    let before = f.blocks[start].insts.iter().take_while(|&&i| i != call);
    let mut count = 0;
    for i in before {
        if is_call(i) {
            return false;
        }
        count += 1;
    }
    let mut seen: HashSet<Block> = HashSet::default();
    let mut work: Vec<Block> = preds.get(&start).cloned().unwrap_or_default();
    while let Some(b) = work.pop() {
        if b == home || !seen.insert(b) {
            continue;
        }
        if b == start || f.blocks[b].insts.iter().any(is_call) {
            return false;
        }
        count += f.blocks[b].insts.len();
        if count > MAX_SHARED_SPAN {
            return false;
        }
        work.extend(preds.get(&b).into_iter().flatten().copied());
    }
    count <= MAX_SHARED_SPAN
}

/// Each block's predecessors (by the branches of its layout's terminators).
fn predecessors(f: &Function) -> HashMap<Block, Vec<Block>> {
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::default();
    for &b in &f.layout {
        if let Some(&last) = f.blocks[b].insts.last() {
            for t in f.insts[last].data.targets() {
                preds.entry(t.block).or_default().push(b);
            }
        }
    }
    preds
}
