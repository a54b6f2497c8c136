//! PTX instructions of sm_61..sm_80 that Maxwell lacks, built from IR operations Maxwell has
//! (issue 26): `dp4a`, `dp2a`, `bmsk`, `szext`, `nanosleep`, the `cp.async` family and
//! `mbarrier`; `ldmatrix`, `mma` and `wmma` are in [`super::mma`]. The
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
//!   `.L2::cache_hint` (its last operand, a `createpolicy` value, is read and dropped) and
//!   the L2 prefetch sizes `.L2::64B/128B/256B` mean nothing on sm_5x.
//!   Cost: 2 instructions (plus the address arithmetic). `cp.async.mbarrier.arrive` is
//!   nothing (the arrive-on is counted in advance and completes at once: no net change);
//!   with `.noinc` it is one mbarrier arrival.
//! * `mbarrier` (`init`, `arrive` with an optional count, `arrive_drop`, `expect_tx`,
//!   `complete_tx`, `arrive.expect_tx`, `test_wait`, `try_wait`, their `.parity` forms,
//!   `pending_count`, `inval`; `.shared`, `.shared::cta` or generic) on the 64-bit object in
//!   shared memory, with the producer/consumer semantics of the PTX ISA: a subset of the
//!   threads may wait while others arrive. Encoding: word 0 holds the pending count of the
//!   current phase in bits 0..19 and the phase number (mod 4096) in bits 20..31; word 1 the
//!   expected count. `init` stores `{n, n}`. Every update takes `d` from the pending count:
//!   an arrival of `c` is `d = c`, `arrive.expect_tx` of `tx` bytes `d = 1 - tx`,
//!   `expect_tx` `d = -tx`, `complete_tx` `d = tx` (the tx-count is folded into the pending
//!   count: the phase completes when both reach zero, which is when their sum does, since
//!   neither goes below zero in a phase that announces its bytes before they complete; a
//!   `complete_tx` ahead of its `expect_tx` that would take the sum to zero or below is
//!   not modelled). An update is a `membar.cta` (release: what the thread wrote before is
//!   seen by whoever sees the arrival), `old = atom.add(w0, -d)`; the update that finds
//!   `pending == d` completes the phase with a second `atom.add(w0, 2^20 + expected)`
//!   (phase + 1, pending refilled; the others add 0, so there is no branch; arrivals of the
//!   next phase racing in between only borrow from the same word, and the sums commute).
//!   `arrive_drop` first lowers the expected count (`atom.add(w1, -c)`), so word 1 is read
//!   atomically. The state token is the new word 0: the phase arrived at and the pending
//!   count left (`pending_count` reads its low bits).
//!
//!   A wait (`test_wait`, `try_wait`) is a yield ([`MemScope::Yield`]: a `NOP` in SASS)
//!   followed by an atomic read of word 0 (the acquire): the phase of the token (or the
//!   parity asked) has completed when word 0's phase differs. It returns at once either
//!   way (PTX lets `try_wait` give up after a system-dependent time); the caller's loop is
//!   the spin. The yield is what lets the models run it: `ir::eval` runs threads one after
//!   another and the simulator warps one after another, so a thread spinning on a later
//!   thread's arrival would never see it; at the yield both let the others run first.
//!   `ir::eval` orders the consumer's later accesses after the producers' earlier ones
//!   (message passing through the fenced arrivals and the waiter's atomic read of the
//!   same word: `RaceShadow::atomic`), so data handed over through the mbarrier is not a
//!   race.
//!
//!   **What is safe on sm_5x.** Maxwell has no independent thread scheduling: a warp
//!   that has diverged runs one side to the join before the other. A wait spinning in
//!   lanes whose phase needs arrivals from *other lanes of the same warp* that have not
//!   arrived yet never lets those lanes run: a deadlock on the hardware (the simulator
//!   stops at its step limit; `ir::eval`, which schedules threads, does not see it). Safe
//!   are: every thread arriving before it waits (`cuda::barrier`'s `arrive_and_wait`,
//!   `cuda::pipeline` in a CTA, the `cuda::ptx` idioms), and producers and consumers in
//!   different warps (warp-specialised kernels), the waiting warps spinning while the
//!   others run, in any order. This is what the CUDA 11 `cuda::barrier` of libcu++ does
//!   before sm_80 too (atomics on a shared word and a polling wait), under the same rule.
//!   `.cluster` scopes and `.shared::cluster` are refused.
//!   Cost (measured, SASS instructions): `arrive` 11 (`MEMBAR.CTA`, 3 `ATOMS`, the ALU
//!   around them and the 64-bit token); a wait 6 (`NOP`, `ATOMS.OR`, the compare), plus
//!   the caller's branch back. `inval` is two `ATOMS.EXCH` of 0 (atomic, like every
//!   mbarrier operation, so CCCL's pipeline destructor, where one lane per warp stands for
//!   its warp, does not race with the arrivals and polls of the other lanes).

use super::FnBuilder;
use crate::ir::{AtomOp, BinaryOp, BitOp, IntCC, MemScope, Space, Type, UnaryOp, Value};
use crate::ptx::ast::{self, Imm, Instruction, Modifier, Opcode, Operand, TypeKind};

/// Whether an open-ended opcode (`cp`, `mbarrier`) carries the modifier word `w`.
pub(super) fn has_word(ins: &Instruction, w: &str) -> bool {
    ins.mods.iter().any(|m| match m {
        Modifier::Flag(f) => *f == w,
        Modifier::Other(s) => s == w,
        _ => false,
    })
}

/// The mbarrier object's word 0: the pending count of the current phase in bits 0..19, the
/// phase number (mod 4096) in bits 20..31. Word 1: the expected count.
const MB_COUNT: i64 = 0xf_ffff;
const MB_PHASE_SHIFT: i64 = 20;

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
            Opcode::Mbarrier => self.mbarrier(ins),
            Opcode::Ldmatrix => self.ldmatrix(ins),
            Opcode::Mma => self.mma(ins),
            Opcode::Wmma => self.wmma(ins),
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
        if !(four || hi || ins.has_flag("lo")) {
            return self.unsupported(ins, "dp2a needs .lo or .hi");
        }
        let ops = self.ops(ins, 4)?;
        let a = self.read(&ops[1], Type::I32, Some(at))?;
        let b = self.read(&ops[2], Type::I32, Some(bt))?;
        let mut acc = self.read(&ops[3], Type::I32, Some(ast::Type::B32))?;
        if four {
            acc = self.dp4(a, b, acc, sa, sb);
        } else {
            for i in 0..2 {
                let b_pos = if hi { 8 * i + 16 } else { 8 * i };
                let ea = self.field(a, 16 * i, 16, sa);
                let eb = self.field(b, b_pos, 8, sb);
                let p = self.ins().mul(ea, eb);
                acc = self.ins().add(acc, p);
            }
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, acc, false, ops[0].span())
    }

    /// `acc + Σ ext(a.byte[i]) · ext(b.byte[i])` (`dp4a`; also the integer `mma`'s dot
    /// products, `super::mma`). Every extended byte fits a signed 16-bit value, so each
    /// product is one 16 × 16 → 32 multiply.
    pub(super) fn dp4(&mut self, a: Value, b: Value, acc: Value, sa: bool, sb: bool) -> Value {
        let mut acc = acc;
        for i in 0..4 {
            let ea = self.field(a, 8 * i, 8, sa);
            let eb = self.field(b, 8 * i, 8, sb);
            let a16 = self.ins().trunc(Type::I16, ea);
            let b16 = self.ins().trunc(Type::I16, eb);
            let p = self.ins().mul_wide(true, a16, b16);
            acc = self.ins().add(acc, p);
        }
        acc
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
        if has_word(ins, "mbarrier") && has_word(ins, "arrive") {
            // The copies are complete already. Without `.noinc` the arrive-on is counted in
            // advance (pending + 1, then - 1 when the copies land): no net change. With
            // `.noinc` it is one arrival.
            if has_word(ins, "noinc") {
                let ops = self.ops(ins, 1)?;
                let one = self.ins().iconst(Type::I32, 1);
                // The object is in shared memory; without a space CCCL still passes its
                // shared-window offset (a 32-bit register), so that is how it is read.
                self.mbarrier_arrive(&ops[0], Space::Shared, one, None)?;
            }
            return Some(());
        }
        // Bulk copies are the TMA: `modern` names them as what cannot run on sm_5x at all.
        if ins.mods.iter().any(|m| m.text().starts_with("bulk")) {
            if let Some(r) = self.modern_instr(ins) {
                return r;
            }
        }
        if has_word(ins, "mbarrier") || has_word(ins, "bulk") {
            return self.unsupported(ins, "this cp.async form is not emulated on sm_5x");
        }
        if !(has_word(ins, "ca") || has_word(ins, "cg")) {
            return self.unsupported(ins, "cp.async needs .ca or .cg");
        }
        // `.L2::cache_hint`: the last operand is a cache policy (`createpolicy`), read and
        // dropped (sm_5x has no L2 eviction priorities); `.L2::64B/128B/256B` (an L2
        // prefetch size) mean nothing either.
        let mut n = ins.operands.len();
        if has_word(ins, "L2::cache_hint") {
            if n < 4 {
                return self
                    .unsupported(ins, "cp.async.L2::cache_hint needs a cache-policy operand");
            }
            n -= 1;
            self.read(&ins.operands[n], Type::I64, Some(ast::Type::B64))?;
        }
        if !(3..=4).contains(&n) {
            return self.unsupported(
                ins,
                "cp.async takes [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}",
            );
        }
        let ops = &ins.operands[..n];
        let size = match imm_int(&ops[2]) {
            Some(s @ (4 | 8 | 16)) => s,
            _ => return self.unsupported(ins, "cp-size must be the immediate 4, 8 or 16"),
        };
        // How many bytes come from `src` (the rest of cp-size is zero-filled): all of them,
        // an immediate or register src-size, or none when the `ignore-src` predicate holds.
        let src_size = if n == 4 {
            match imm_int(&ops[3]) {
                Some(k) if k == size => None,
                Some(k) if (0..size).contains(&k) => Some(self.ins().iconst(Type::I32, k)),
                Some(_) => return self.unsupported(ins, "src-size must be at most cp-size"),
                None => {
                    let pred = match &ops[3] {
                        Operand::Name(r) => {
                            let v = self.reg_var(r)?;
                            (self.var_ty[v] == Type::Pred).then_some(v)
                        }
                        _ => None,
                    };
                    match pred {
                        Some(v) => {
                            let p = self.use_var(v);
                            let zero = self.ins().iconst(Type::I32, 0);
                            let all = self.ins().iconst(Type::I32, size);
                            Some(self.ins().select(p, zero, all))
                        }
                        None => Some(self.read(&ops[3], Type::I32, Some(ast::Type::U32))?),
                    }
                }
            }
        } else {
            None
        };
        let (src, soff) = self.address(&ops[1], Space::Global)?;
        let (dst, doff) = self.address(&ops[0], Space::Shared)?;
        match src_size {
            None => {
                let words = self
                    .ins()
                    .load(Space::Global, Type::I32, (size / 4) as u8, src, soff);
                self.ins().store(Space::Shared, dst, doff, &words);
            }
            Some(s) => self.cp_async_zero_fill(src, soff, dst, doff, size, s),
        }
        Some(())
    }

    /// `cp.async` of `size` bytes of which only the first `s` (an `i32`, at most `size`;
    /// more counts as all) come from `[src + soff]` and the rest are zeros, into
    /// `[dst + doff]`: the whole copy when `s >= size`, else two byte loops, copy then zero,
    /// so that no byte at or past `s` is read (a zero src-size usually guards an
    /// out-of-bounds address). Leaves the builder in the block after both.
    fn cp_async_zero_fill(
        &mut self,
        src: Value,
        soff: i32,
        dst: Value,
        doff: i32,
        size: i64,
        s: Value,
    ) {
        let k_size = self.ins().iconst(Type::I32, size);
        let whole = self.ins().icmp(IntCC::Uge, s, k_size);
        let full = self.new_block(1);
        let part = self.new_block(1);
        let join = self.new_block(2);
        self.brif(whole, full, part);
        self.switch_to(full);
        let words = self
            .ins()
            .load(Space::Global, Type::I32, (size / 4) as u8, src, soff);
        self.ins().store(Space::Shared, dst, doff, &words);
        self.terminate_jump(join);
        // Byte `k` of the copy: its source and destination addresses.
        let at = |this: &mut Self, base: Value, k: Value| {
            let k = if this.func.values[base].ty == Type::I64 {
                this.ins().zext(Type::I64, k)
            } else {
                k
            };
            this.ins().add(base, k)
        };
        self.switch_to(part);
        let k = self.new_var(Type::I32);
        let zero = self.ins().iconst(Type::I32, 0);
        self.def_var(k, zero);
        let copy_head = self.new_block(2);
        let copy_body = self.new_block(1);
        let zero_head = self.new_block(2);
        let zero_body = self.new_block(1);
        self.terminate_jump(copy_head);
        self.switch_to(copy_head);
        let kv = self.use_var(k);
        let more = self.ins().icmp(IntCC::Ult, kv, s);
        self.brif(more, copy_body, zero_head);
        self.switch_to(copy_body);
        let kv = self.use_var(k);
        let a = at(self, src, kv);
        let b = self.ins().load1(Space::Global, Type::I8, a, soff);
        let d = at(self, dst, kv);
        self.ins().store(Space::Shared, d, doff, &[b]);
        let one = self.ins().iconst(Type::I32, 1);
        let next = self.ins().add(kv, one);
        self.def_var(k, next);
        self.terminate_jump(copy_head);
        self.switch_to(zero_head);
        let kv = self.use_var(k);
        let more = self.ins().icmp(IntCC::Ult, kv, k_size);
        self.brif(more, zero_body, join);
        self.switch_to(zero_body);
        let kv = self.use_var(k);
        let d = at(self, dst, kv);
        let z = self.ins().iconst(Type::I8, 0);
        self.ins().store(Space::Shared, d, doff, &[z]);
        let one = self.ins().iconst(Type::I32, 1);
        let next = self.ins().add(kv, one);
        self.def_var(k, next);
        self.terminate_jump(zero_head);
        self.switch_to(join);
    }
    /// `mbarrier.*.shared.b64` (module essay: the object's encoding and what a wait is).
    fn mbarrier(&mut self, ins: &Instruction) -> Option<()> {
        for w in ["cluster", "shared::cluster"] {
            if has_word(ins, w) {
                return self.unsupported(ins, &format!("mbarrier '.{w}' is not emulated on sm_5x"));
            }
        }
        // `.shared`/`.shared::cta` objects, or a generic address of one (no space).
        let space = match ins.space() {
            Some(ast::StateSpace::Shared) => Space::Shared,
            None if has_word(ins, "shared::cta") => Space::Shared,
            None => Space::Generic,
            Some(_) => return self.unsupported(ins, "mbarrier objects live in shared memory"),
        };
        let ops = ins.operands.clone();
        if has_word(ins, "init") {
            if ops.len() != 2 {
                return self.unsupported(ins, "mbarrier.init takes [addr], count");
            }
            let (addr, off) = self.address(&ops[0], space)?;
            let n = self.read(&ops[1], Type::I32, Some(ast::Type::U32))?;
            let mask = self.ins().iconst(Type::I32, MB_COUNT);
            let n = self.ins().binary(BinaryOp::And, n, mask);
            self.ins().store(space, addr, off, &[n, n]);
            return Some(());
        }
        if has_word(ins, "inval") {
            // Atomic exchanges, not a store: like every mbarrier operation `inval` is a
            // strong operation on the object, so it does not race with the other threads'
            // arrivals and polls that only a warp collective orders before it (CCCL's
            // `cuda::pipeline` destructor: one lane per warp counts its warp out, the last
            // one invalidates).
            let (addr, off) = self.address(&ops[0], space)?;
            let z = self.ins().iconst(Type::I32, 0);
            for o in [off, off + 4] {
                self.ins()
                    .atomic(AtomOp::Exch, space, Type::I32, addr, o, &[z]);
            }
            return Some(());
        }
        if has_word(ins, "pending_count") {
            if ops.len() != 2 {
                return self.unsupported(ins, "mbarrier.pending_count takes count, state");
            }
            let st = self.read(&ops[1], Type::I64, Some(ast::Type::B64))?;
            let st = self.ins().trunc(Type::I32, st);
            let mask = self.ins().iconst(Type::I32, MB_COUNT);
            let d = self.ins().binary(BinaryOp::And, st, mask);
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, d, false, ops[0].span());
        }
        let arrive = has_word(ins, "arrive");
        let drop = has_word(ins, "arrive_drop");
        let expect = has_word(ins, "expect_tx");
        if (expect || has_word(ins, "complete_tx")) && !(arrive || drop) {
            // `mbarrier.expect_tx|complete_tx [addr], txCount`: the tx-count joins the
            // pending count (module essay), raised or lowered without an arrival.
            if ops.len() != 2 {
                return self
                    .unsupported(ins, "mbarrier.expect_tx/complete_tx takes [addr], txCount");
            }
            let tx = self.read(&ops[1], Type::I32, Some(ast::Type::U32))?;
            let d = if expect {
                self.ins().unary(UnaryOp::Neg, tx)
            } else {
                tx
            };
            self.mbarrier_arrive(&ops[0], space, d, None)?;
            return Some(());
        }
        if arrive || drop {
            // `mbarrier.arrive{_drop}{.noComplete}.shared.b64 state, [addr]{, count}`, or
            // with `.expect_tx` `state, [addr], txCount` (one arrival); a state of `_` is a
            // sink.
            if !(2..=3).contains(&ops.len()) || (expect && ops.len() != 3) {
                return self.unsupported(ins, "mbarrier.arrive takes state, [addr]{, count}");
            }
            let one = |this: &mut Self| this.ins().iconst(Type::I32, 1);
            let (count, d) = match ops.get(2) {
                Some(c) if expect => {
                    // One arrival, `tx` more bytes expected: pending - 1 + tx.
                    let tx = self.read(c, Type::I32, Some(ast::Type::U32))?;
                    let count = one(self);
                    let d = self.ins().sub(count, tx);
                    (count, d)
                }
                Some(c) => {
                    let c = self.read(c, Type::I32, Some(ast::Type::U32))?;
                    (c, c)
                }
                None => {
                    let c = one(self);
                    (c, c)
                }
            };
            let token = self.mbarrier_arrive(&ops[1], space, d, drop.then_some(count))?;
            if matches!(&ops[0], Operand::Name(n) if n.text.as_str() == "_") {
                return Some(());
            }
            let t = self.ins().zext(Type::I64, token);
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, t, false, ops[0].span());
        }
        let parity = has_word(ins, "parity");
        if has_word(ins, "test_wait") || has_word(ins, "try_wait") {
            // `waitComplete, [addr], state|phaseParity{, suspendTimeHint}`.
            if !(3..=4).contains(&ops.len()) {
                return self.unsupported(ins, "mbarrier test_wait/try_wait takes p, [addr], state");
            }
            let (addr, off) = self.address(&ops[1], space)?;
            let want = if parity {
                self.read(&ops[2], Type::I32, Some(ast::Type::U32))?
            } else {
                let st = self.read(&ops[2], Type::I64, Some(ast::Type::B64))?;
                self.ins().trunc(Type::I32, st)
            };
            if let Some(h) = ops.get(3) {
                self.read(h, Type::I32, Some(ast::Type::U32))?;
            }
            // Let the other threads run (the caller spins on a false result), then read the
            // phase: an atomic read, which acquires what the arrivals released.
            self.ins().membar(MemScope::Yield);
            let zero = self.ins().iconst(Type::I32, 0);
            let cur = self
                .ins()
                .atomic(AtomOp::Or, space, Type::I32, addr, off, &[zero]);
            let sh = self.ins().iconst(Type::I32, MB_PHASE_SHIFT);
            let cur_phase = self.ins().binary(BinaryOp::ShrU, cur, sh);
            let done = if parity {
                let one = self.ins().iconst(Type::I32, 1);
                let cp = self.ins().binary(BinaryOp::And, cur_phase, one);
                let wp = self.ins().binary(BinaryOp::And, want, one);
                self.ins().icmp(IntCC::Ne, cp, wp)
            } else {
                let tp = self.ins().binary(BinaryOp::ShrU, want, sh);
                self.ins().icmp(IntCC::Ne, cur_phase, tp)
            };
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, done, false, ops[0].span());
        }
        self.unsupported(ins, "this mbarrier operation is not emulated on sm_5x")
    }

    /// Take `d` (an `i32`; negative raises it) from the pending count of the object at
    /// `addr`, completing the phase when that brings it to zero; with `drop`, first lower
    /// the expected count of later phases by that many (`arrive_drop`). Returns the new
    /// object word (the state token: the phase arrived at and the pending count left).
    fn mbarrier_arrive(
        &mut self,
        addr: &Operand,
        space: Space,
        d: Value,
        drop: Option<Value>,
    ) -> Option<Value> {
        let (addr, off) = self.address(addr, space)?;
        // Release: what this thread wrote is seen by whoever sees the arrival.
        self.ins().membar(MemScope::Cta);
        if let Some(c) = drop {
            let neg = self.ins().unary(UnaryOp::Neg, c);
            self.ins()
                .atomic(AtomOp::Add, space, Type::I32, addr, off + 4, &[neg]);
        }
        let neg = self.ins().unary(UnaryOp::Neg, d);
        let old = self
            .ins()
            .atomic(AtomOp::Add, space, Type::I32, addr, off, &[neg]);
        let mask = self.ins().iconst(Type::I32, MB_COUNT);
        let pending = self.ins().binary(BinaryOp::And, old, mask);
        let last = self.ins().icmp(IntCC::Eq, pending, d);
        // The completing arrival starts the next phase: phase + 1, pending = expected (read
        // atomically: `arrive_drop` changes it). Other arrivals add 0 (an atomic either way,
        // so no branch).
        let zero = self.ins().iconst(Type::I32, 0);
        let expected = self
            .ins()
            .atomic(AtomOp::Or, space, Type::I32, addr, off + 4, &[zero]);
        let step = self.ins().iconst(Type::I32, 1 << MB_PHASE_SHIFT);
        let next = self.ins().add(step, expected);
        let add = self.ins().select(last, next, zero);
        self.ins()
            .atomic(AtomOp::Add, space, Type::I32, addr, off, &[add]);
        Some(self.ins().sub(old, d))
    }
}
