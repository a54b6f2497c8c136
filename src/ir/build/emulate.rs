//! PTX instructions of sm_61..sm_80 that Maxwell lacks, built from IR operations Maxwell has
//! (issue 26): `dp4a`, `dp2a`, `bmsk`, `szext`, `nanosleep` and the `cp.async` family. The
//! float ones (`.bf16` arithmetic and conversions, `tanh`, `ex2` on half formats) are in
//! [`super::bf16`].
//!
//! In: one PTX instruction. Out: a short sequence of existing IR operations (no new
//! `InstData`), so `ir::eval`, selection and the simulator need nothing new, as for `fns`
//! ([`super::fns`]). The meaning is the PTX ISA's; `tests/compile_emulate.rs` compares
//! `ir::eval` of each expansion with a direct Rust transcription of the ISA's definition on
//! random operands, and the simulator running our SASS with `ir::eval`.
//!
//! * `dp4a.atype.btype d, a, b, c`: `d = c + Σ ext(a.byte[i]) · ext(b.byte[i])`, bytes sign-
//!   or zero-extended by their own type. Each byte is a `BFE` (8 bits at 8i, signed or not);
//!   every extended byte fits in a signed 16-bit value, so each product is one signed
//!   16 × 16 → 32 `mul.wide` (one `XMAD` on sm_5x). Cost: 8 `BFE` + 4 `XMAD` + 4 `IADD` = 16
//!   SASS instructions (fewer when selection folds an extraction).
//! * `dp2a.mode.atype.btype d, a, b, c`: `d = c + Σ_{i<2} ext16(a.half[i]) ·
//!   ext8(b.byte[i + 2·hi])`. A u16 does not fit a signed 16-bit value, so the products
//!   are 32-bit multiplies of the extended values (`XMAD` sequences). Cost: 10 SASS
//!   instructions (measured).
//! * `bmsk.mode.b32 d, a, b`: the mask of `b` ones from bit `a`: one `BFI` of all ones into
//!   zero, with `pos = a & 31, len = b & 31` (`.wrap`) or `pos = min(a, 32), len = min(b, 32)`
//!   (`.clamp`; a position of 32 inserts nothing, a length of 32 fills to bit 31), which is
//!   the ISA's `mask0 & ~mask1` case by case. Cost: 6 SASS instructions (2 `LOP`/`IMNMX`,
//!   the constants, `BFI`).
//! * `szext.mode.type d, a, b`: `bfe.type d, a, 0, n` with `n = b & 31` (`.wrap`) or
//!   `min(b, 32)` (`.clamp`); `BFE` gives 0 for `n = 0` and `a` for `n = 32`, as `szext`.
//!   Cost: 4 SASS instructions (the width, its packing with position 0, `BFE`).
//! * `nanosleep.u32 t`: nothing. PTX only promises a suspension of *about* `t` ns, anywhere
//!   in `[0, 2t]`; zero is in range, and Maxwell has no sleep instruction (a loop on
//!   `CS2R SR_CLOCKLO` would only burn issue slots another warp could use). Spin loops that
//!   back off with it still make progress: the warp that holds the lock is scheduled as
//!   before. Cost: 0.
//! * `cp.async.ca|cg.shared.global [dst], [src], cp-size{, src-size}`: a global load of
//!   `cp-size` bytes (4, 8 or 16: one `LDG` of 1, 2 or 4 words) followed by a shared store
//!   (`STS`): the copy is complete when the instruction is, which is one of the orders the
//!   asynchronous copy allows, so `cp.async.commit_group`, `cp.async.wait_group N` and
//!   `cp.async.wait_all` have nothing left to wait for and emit nothing. Other threads see
//!   the data after a barrier, as PTX requires of real asynchronous copies. A `src-size`
//!   operand (zero fill) is accepted only when it is the immediate `cp-size`.
//!   Cost: 2 instructions (plus the address arithmetic).

use super::FnBuilder;
use crate::ir::{BinaryOp, BitOp, Space, Type, Value};
use crate::ptx::ast::{self, Imm, Instruction, Modifier, Opcode, Operand, TypeKind};

/// Whether an open-ended opcode (`cp`, `mbarrier`) carries the modifier word `w`.
pub(super) fn has_word(ins: &Instruction, w: &str) -> bool {
    ins.mods.iter().any(|m| match m {
        Modifier::Flag(f) => *f == w,
        Modifier::Other(s) => s == w,
        _ => false,
    })
}

fn imm_int(op: &Operand) -> Option<i64> {
    match op {
        Operand::Imm(Imm::Int { value, .. }, _) => Some(*value),
        _ => None,
    }
}

impl FnBuilder<'_, '_> {
    /// The instructions this module emulates; `None` for any other.
    pub(super) fn emulated_instr(&mut self, ins: &Instruction) -> Option<Option<()>> {
        Some(match ins.opcode {
            Opcode::Dp4a | Opcode::Dp2a => self.dot_product(ins),
            Opcode::Bmsk => self.bmsk(ins),
            Opcode::Szext => self.szext(ins),
            Opcode::Nanosleep => self.nanosleep(ins),
            Opcode::Cp if has_word(ins, "async") => self.cp_async(ins),
            _ => return None,
        })
    }

    fn nanosleep(&mut self, ins: &Instruction) -> Option<()> {
        let ops = self.ops(ins, 1)?;
        self.read(&ops[0], Type::I32, Some(ast::Type::U32))?;
        Some(())
    }

    fn dot_product(&mut self, ins: &Instruction) -> Option<()> {
        let types = ins.type_mod_list();
        let [at, bt] = types[..] else {
            return self.unsupported(ins, "expects two types (.atype.btype)");
        };
        let signed = |t: ast::Type| t.kind() == TypeKind::Signed;
        let (sa, sb) = (signed(at), signed(bt));
        let hi = ins.has_flag("hi");
        let four = ins.opcode == Opcode::Dp4a;
        if !four && !(hi || ins.has_flag("lo")) {
            return self.unsupported(ins, "dp2a needs .lo or .hi");
        }
        let ops = self.ops(ins, 4)?;
        let a = self.read(&ops[1], Type::I32, Some(at))?;
        let b = self.read(&ops[2], Type::I32, Some(bt))?;
        let mut acc = self.read(&ops[3], Type::I32, Some(ast::Type::B32))?;
        for i in 0..if four { 4 } else { 2 } {
            let (a_pos, a_len) = if four { (8 * i, 8) } else { (16 * i, 16) };
            let b_pos = if four || !hi { 8 * i } else { 8 * i + 16 };
            let ea = self.field(a, a_pos, a_len, sa);
            let eb = self.field(b, b_pos, 8, sb);
            let p = if four {
                // Both fit a signed 16-bit value: one 16 × 16 → 32 multiply.
                let a16 = self.ins().trunc(Type::I16, ea);
                let b16 = self.ins().trunc(Type::I16, eb);
                self.ins().mul_wide(true, a16, b16)
            } else {
                self.ins().mul(ea, eb)
            };
            acc = self.ins().add(acc, p);
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, acc, false, ops[0].span())
    }

    /// `len` bits of `x` from `pos`, sign- or zero-extended.
    fn field(&mut self, x: Value, pos: i64, len: i64, signed: bool) -> Value {
        let p = self.ins().iconst(Type::I32, pos);
        let l = self.ins().iconst(Type::I32, len);
        self.ins().bits(BitOp::Bfe { signed }, &[x, p, l])
    }

    /// A `.clamp`/`.wrap` bit count or position: `min(x, 32)` or `x & 31`.
    fn clamp_or_wrap(&mut self, ins: &Instruction, x: Value) -> Option<Value> {
        if ins.has_flag("clamp") {
            let k = self.ins().iconst(Type::I32, 32);
            Some(self.ins().binary(BinaryOp::MinU, x, k))
        } else if ins.has_flag("wrap") {
            let k = self.ins().iconst(Type::I32, 31);
            Some(self.ins().binary(BinaryOp::And, x, k))
        } else {
            self.unsupported(ins, "needs .clamp or .wrap");
            None
        }
    }

    fn bmsk(&mut self, ins: &Instruction) -> Option<()> {
        let ops = self.ops(ins, 3)?;
        let a = self.read(&ops[1], Type::I32, Some(ast::Type::U32))?;
        let b = self.read(&ops[2], Type::I32, Some(ast::Type::U32))?;
        let pos = self.clamp_or_wrap(ins, a)?;
        let len = self.clamp_or_wrap(ins, b)?;
        let ones = self.ins().iconst(Type::I32, -1);
        let zero = self.ins().iconst(Type::I32, 0);
        let d = self.ins().bits(BitOp::Bfi, &[ones, zero, pos, len]);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn szext(&mut self, ins: &Instruction) -> Option<()> {
        let signed = match ins.ty() {
            Some(ast::Type::S32) => true,
            Some(ast::Type::U32) => false,
            _ => return self.unsupported(ins, "szext takes .u32 or .s32"),
        };
        let ops = self.ops(ins, 3)?;
        let a = self.read(&ops[1], Type::I32, ins.ty())?;
        let b = self.read(&ops[2], Type::I32, Some(ast::Type::U32))?;
        let n = self.clamp_or_wrap(ins, b)?;
        let zero = self.ins().iconst(Type::I32, 0);
        let d = self.ins().bits(BitOp::Bfe { signed }, &[a, zero, n]);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    fn cp_async(&mut self, ins: &Instruction) -> Option<()> {
        if has_word(ins, "commit_group") || has_word(ins, "wait_all") {
            return Some(());
        }
        if has_word(ins, "wait_group") {
            let ops = self.ops(ins, 1)?;
            if imm_int(&ops[0]).is_none() {
                return self.unsupported(ins, "wait_group takes an immediate group count");
            }
            return Some(());
        }
        if has_word(ins, "mbarrier") || has_word(ins, "bulk") {
            return self.unsupported(ins, "this cp.async form is not emulated on sm_5x");
        }
        if !(has_word(ins, "ca") || has_word(ins, "cg")) {
            return self.unsupported(ins, "cp.async needs .ca or .cg");
        }
        let n = ins.operands.len();
        if !(3..=4).contains(&n) {
            return self.unsupported(
                ins,
                "cp.async takes [dst], [src], cp-size{, src-size} (no cache policy or ignore-src)",
            );
        }
        let ops = &ins.operands;
        let size = match imm_int(&ops[2]) {
            Some(s @ (4 | 8 | 16)) => s,
            _ => return self.unsupported(ins, "cp-size must be the immediate 4, 8 or 16"),
        };
        if n == 4 && imm_int(&ops[3]) != Some(size) {
            return self.unsupported(
                ins,
                "a src-size other than cp-size (zero fill) is not emulated",
            );
        }
        let (src, soff) = self.address(&ops[1], Space::Global)?;
        let (dst, doff) = self.address(&ops[0], Space::Shared)?;
        let words = self
            .ins()
            .load(Space::Global, Type::I32, (size / 4) as u8, src, soff);
        self.ins().store(Space::Shared, dst, doff, &words);
        Some(())
    }
}
