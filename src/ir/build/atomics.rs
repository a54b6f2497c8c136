//! PTX `atom` and `red` → [`InstData::Atomic`](crate::ir::InstData::Atomic).
//!
//! `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}` and `red{.sem}{.scope}{.space}.op.type
//! [a], b`. The memory-order and scope qualifiers are accepted and dropped: sm_5x atomics are
//! relaxed and device-wide, and no other thread order is observable in `ir::eval` (see
//! `ir::atomic`). `red` is an `atom` whose result is never read. The float adds sm_5x lacks
//! (`.f64`, `.f16`/`.f16x2`, `.bf16`/`.bf16x2`) and `cas.b16` are CAS loops on the aligned word
//! (below). Refused with a diagnostic: other floating-point atomics (min/max, f32 operations
//! other than `add`), other 16-bit and 128-bit ones, `inc`/`dec` on 64 bits, cache hints, and
//! spaces other than global, shared and generic.
//!
//! # Float add
//!
//! `atom/red.global.add.f32` is one `AtomOp::FAdd` (`ATOM/RED.ADD.F32.FTZ.RN`: round to
//! nearest, subnormals flushed). sm_5x has no float atomic on shared memory, and a generic
//! address may name either memory, so those forms become code here, as ptxas 11.8 builds
//! them (the shapes below are what it emits for sm_50):
//!
//! ```text
//! .shared                     generic
//!   old = atom.load [a]         p = a outside the shared window  (isspacep's window test)
//! loop(old):                    brif p, global, shared
//!   new = fadd.rn old, b      global:
//!   r = atom.cas [a], old, new    r = atom.global.add.f32 [a], b ; jump join(r)
//!   brif r != old, loop(r),   shared:
//!        exit                   s = cvta.to.shared a ; the loop on [s], exiting to join(r)
//! exit: d = r                 join(d):
//! ```
//!
//! * The add is a plain `fadd.rn.f32`, *not* flushed: shared-memory float atomics keep
//!   subnormals (ptxas's loop has a bare `FADD`), while global ones flush. A generic one
//!   therefore flushes or not by the window its address falls in, as on the hardware.
//! * The CAS compares bits as integers, so a NaN in memory cannot loop forever (a float
//!   compare would never find NaN equal to itself). The result is the value the successful
//!   CAS replaced, the old value PTX defines.
//! * The first read is `AtomOp::Load`, an atomic read (lowered as `LDS`, ptxas's first
//!   read): a plain load racing with the other threads' CAS would make every launch with
//!   contention undefined in `ir::eval`, whose race detector reads an atomic and a plain
//!   access to one word as a race.
//! * Building the loop in the IR, not in selection, keeps every later stage unchanged: the
//!   selector cannot emit blocks inside one instruction, and the register allocator,
//!   scheduler and reconvergence pass (`lower::reconverge`: the loop's exit is divergent, so
//!   the `SSY` goes before the loop, `SYNC` at the exit) see ordinary blocks. `ir::eval` runs
//!   the same loop: threads run one at a time there, so each CAS succeeds at once; in the
//!   simulator a warp's lanes contend and retry, and the sum is the same when it is exact.
//! * The generic test takes the address with its displacement added (ptxas tests the base
//!   register), and the shared side reaches its word through `cvta.to.shared`; an address in
//!   the local window takes the global side, as in ptxas (PTX leaves it undefined).

use super::{FnBuilder, VarId};
use crate::ir::float::{FloatBinOp, FloatFmt, FloatOp, Round};
use crate::ir::{AtomOp, BinaryOp, Block, CvtaDir, IntCC, Space, Type, UnaryOp, Value};
use crate::ptx::ast::{Instruction, Opcode, TypeKind};

impl FnBuilder<'_, '_> {
    pub(super) fn atomic(&mut self, ins: &Instruction) -> Option<()> {
        let order = super::order::order_of(ins);
        self.fence_before(order);
        self.atomic_op(ins)?;
        self.fence_after(order);
        Some(())
    }

    /// The access of [`Self::atomic`], between its fences.
    fn atomic_op(&mut self, ins: &Instruction) -> Option<()> {
        let mut ins = ins;
        let trimmed;
        if ins.has_flag("L2::cache_hint") {
            // The last operand is the 64-bit cache policy: read and dropped (see
            // `cache_hint_operand`).
            let Some(last) = ins.operands.last() else {
                return self.unsupported(ins, "no cache policy operand");
            };
            self.read(last, Type::I64, Some(crate::ptx::ast::Type::B64))?;
            let mut t = ins.clone();
            t.operands.pop();
            trimmed = t;
            ins = &trimmed;
        }
        let space = self.mem_space(ins)?;
        if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
            return self.unsupported(ins, "atomics are in the global, shared or generic space");
        }
        let Some(t) = ins.ty() else {
            return self.unsupported(ins, "no instruction type");
        };
        if t.kind() == TypeKind::Float {
            return self.float_atomic(ins, space);
        }
        let (ty, signed) = self.int_type(ins)?;
        if ty == Type::I16 && ins.has_flag("cas") {
            return self.cas16(ins, space);
        }
        if !matches!(ty, Type::I32 | Type::I64) {
            return self.unsupported(ins, "atomics are 32 or 64 bits wide here");
        }
        let pick = |s: bool, a: AtomOp, b: AtomOp| if s { a } else { b };
        let op = [
            ("add", AtomOp::Add),
            ("min", pick(signed, AtomOp::MinS, AtomOp::MinU)),
            ("max", pick(signed, AtomOp::MaxS, AtomOp::MaxU)),
            ("inc", AtomOp::Inc),
            ("dec", AtomOp::Dec),
            ("and", AtomOp::And),
            ("or", AtomOp::Or),
            ("xor", AtomOp::Xor),
            ("exch", AtomOp::Exch),
            ("cas", AtomOp::Cas),
        ]
        .into_iter()
        .find(|(f, _)| ins.has_flag(f))
        .map(|(_, op)| op);
        let Some(op) = op else {
            return self.unsupported(ins, "no atomic operation");
        };
        if matches!(op, AtomOp::Inc | AtomOp::Dec) && ty != Type::I32 {
            return self.unsupported(ins, "inc and dec are 32-bit only");
        }
        let red = ins.opcode == Opcode::Red;
        let first = if red { 0 } else { 1 };
        let n = first + 1 + op.arity();
        let ops = self.ops(ins, n)?;
        let it = ins.ty();
        let (addr, offset) = self.address(&ops[first], space)?;
        let mut args = Vec::new();
        for o in &ops[first + 1..] {
            args.push(self.read(o, ty, it)?);
        }
        let old = self.ins().atomic(op, space, ty, addr, offset, &args);
        if red {
            return Some(());
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, signed, ops[0].span())
    }

    /// `atom{.space}.add.f32 d, [a], b` and `red{.space}.add.f32 [a], b` (see the module
    /// essay for the shared and generic forms).
    fn float_atomic(&mut self, ins: &Instruction, space: Space) -> Option<()> {
        use crate::ptx::ast::Type as PtxType;
        if ins.ty() == Some(PtxType::F64) && ins.has_flag("add") {
            return self.dadd_atomic(ins, space);
        }
        if matches!(ins.ty(), Some(PtxType::F16 | PtxType::F16x2)) && ins.has_flag("add") {
            return self.hadd_atomic(ins, space, ins.ty() == Some(PtxType::F16x2), false);
        }
        if matches!(ins.ty(), Some(PtxType::Bf16 | PtxType::Bf16x2)) && ins.has_flag("add") {
            return self.hadd_atomic(ins, space, ins.ty() == Some(PtxType::Bf16x2), true);
        }
        if ins.ty() != Some(PtxType::F32) || !ins.has_flag("add") {
            return self.unsupported(
                ins,
                "a floating-point atomic other than add (sm_5x has .f32 add; .f64, .f16, .f16x2, .bf16 and .bf16x2 add are emulated)",
            );
        }
        let red = ins.opcode == Opcode::Red;
        let first = if red { 0 } else { 1 };
        let ops = self.ops(ins, first + 2)?;
        let (addr, offset) = self.address(&ops[first], space)?;
        let b = self.read(&ops[first + 1], Type::I32, ins.ty())?;
        // The old value, where the form has one in a variable (the loops define it in a
        // block of their own).
        let out = (!red).then(|| self.new_var(Type::I32));
        match space {
            Space::Global => {
                let old = self
                    .ins()
                    .atomic(AtomOp::FAdd, space, Type::I32, addr, offset, &[b]);
                if let Some(out) = out {
                    self.def_var(out, old);
                }
            }
            Space::Shared => {
                let exit = self.new_block(1);
                self.fadd_cas_loop(addr, offset, b, exit, out);
                self.switch_to(exit);
            }
            _ => self.generic_fadd(addr, offset, b, out),
        }
        let Some(out) = out else {
            return Some(());
        };
        let old = self.use_var(out);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, false, ops[0].span())
    }

    /// The shared float add's CAS loop on `[addr + offset]` (shared space), from the current
    /// block into a new loop block that branches back to itself until its CAS succeeds,
    /// then to `exit` (whose predecessor count the caller set). The old value is `out`'s
    /// definition on that edge.
    fn fadd_cas_loop(
        &mut self,
        addr: Value,
        offset: i32,
        b: Value,
        exit: Block,
        out: Option<VarId>,
    ) {
        let add = FloatOp::Binary {
            op: FloatBinOp::Add,
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let step = |this: &mut Self, old: Value| (this.ins().float(add, &[b, old]), None);
        self.cas_loop(Space::Shared, Type::I32, addr, offset, exit, out, step);
    }

    /// A compare-and-swap loop on the `ty` word `[addr + offset]` of `space`: an atomic
    /// read, then a loop block that computes `(new, result) = step(old)`, swaps `new` in if
    /// the word still holds `old`, and branches back with the word it found until the swap
    /// succeeds, then to `exit` (whose predecessor count the caller set). `out` (if any) is
    /// defined on that edge as `result`, or the old word when `step` gives none (on the
    /// exit edge the word found equals `old`). Every emulated atomic is such a loop: the
    /// shared float add, `atom.add.f64`, `atom.cas.b16`.
    #[allow(clippy::too_many_arguments)]
    fn cas_loop(
        &mut self,
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        exit: Block,
        out: Option<VarId>,
        step: impl FnOnce(&mut Self, Value) -> (Value, Option<Value>),
    ) {
        let seen = self.new_var(ty);
        let first = self
            .ins()
            .atomic(AtomOp::Load, space, ty, addr, offset, &[]);
        self.def_var(seen, first);
        let head = self.new_block(2);
        self.terminate_jump(head);
        self.switch_to(head);
        let old = self.use_var(seen);
        let (new, result) = step(self, old);
        let mut fb = self.ins();
        let now = fb.atomic(AtomOp::Cas, space, ty, addr, offset, &[old, new]);
        let retry = fb.icmp(IntCC::Ne, now, old);
        self.def_var(seen, now);
        if let Some(out) = out {
            self.def_var(out, result.unwrap_or(now));
        }
        self.brif(retry, head, exit);
    }

    /// A generic float add: the shared-window test, `atom.global.add.f32` on one side and
    /// the shared CAS loop on the other, meeting in a new current block.
    fn generic_fadd(&mut self, addr: Value, offset: i32, b: Value, out: Option<VarId>) {
        let at = self.func.values[addr].ty;
        let a = if offset == 0 {
            addr
        } else {
            let k = self.iconst(at, i64::from(offset));
            self.ins().add(addr, k)
        };
        let a64 = if at == Type::I64 {
            a
        } else {
            self.ins().zext(Type::I64, a)
        };
        let mask = self.iconst(Type::I64, !0xff_ffff);
        let top = self.ins().binary(BinaryOp::And, a64, mask);
        // "Not shared" and the global side first, as `isspacep.global`'s half and ptxas's
        // window predicate (true outside the shared window) read it.
        let not_shared = self.window_cmp(top, mask, Space::Shared, IntCC::Ne);
        let shared = self.new_block(1);
        let global = self.new_block(1);
        let join = self.new_block(2);
        self.brif(not_shared, global, shared);
        self.switch_to(global);
        let old = self
            .ins()
            .atomic(AtomOp::FAdd, Space::Global, Type::I32, addr, offset, &[b]);
        if let Some(out) = out {
            self.def_var(out, old);
        }
        self.terminate_jump(join);
        self.switch_to(shared);
        let lo = if at == Type::I64 {
            self.ins().trunc(Type::I32, a)
        } else {
            a
        };
        let s = self
            .ins()
            .cvta(CvtaDir::FromGeneric, Space::Shared, Type::I32, lo);
        self.fadd_cas_loop(s, 0, b, join, out);
        self.switch_to(join);
    }
}

impl FnBuilder<'_, '_> {
    /// `atom{.space}.add.f64 d, [a], b` / `red{.space}.add.f64 [a], b` (sm_60 hardware) as
    /// the CAS loop of [`Self::cas_loop`] on the 64-bit word in the access's own space:
    /// `ATOM.E.CAS.64` (global), `ATOMS.CAS.64` (shared) or the generic window test around
    /// both. The add is `fadd.rn.f64`, subnormals kept, as PTX defines the f64 add. The
    /// first read is an atomic read (`LDG.E.CV.64`, `LDS.64`, `LD.E.CV.64`). Cost: about 12
    /// SASS instructions (the read, `DADD`, the register pair moves, `ATOM.CAS.64`, the
    /// two-word compare and the branch), one CAS per try; the CUDA programming guide's
    /// loop is the same algorithm (see the README for the measured sizes).
    pub(super) fn dadd_atomic(&mut self, ins: &Instruction, space: Space) -> Option<()> {
        let red = ins.opcode == Opcode::Red;
        let first = if red { 0 } else { 1 };
        let ops = self.ops(ins, first + 2)?;
        let (addr, offset) = self.address(&ops[first], space)?;
        let b = self.read(&ops[first + 1], Type::I64, ins.ty())?;
        let out = (!red).then(|| self.new_var(Type::I64));
        let add = FloatOp::Binary {
            op: FloatBinOp::Add,
            fmt: FloatFmt::F64,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let exit = self.new_block(1);
        let step = |this: &mut Self, old: Value| (this.ins().float(add, &[old, b]), None);
        self.cas_loop(space, Type::I64, addr, offset, exit, out, step);
        self.switch_to(exit);
        let out = out?;
        let old = self.use_var(out);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, false, ops[0].span())
    }

    /// `atom{.space}.cas.b16 d, [a], b, c` (sm_70 hardware): a CAS loop on the aligned
    /// 32-bit word holding the half-word. Each try puts `c` into the half if it holds `b`
    /// (else writes the word back unchanged, which still proves the half was read
    /// atomically) and retries only when another thread changed the word in between; `d` is
    /// the half as the successful swap found it. About 14 SASS instructions.
    fn cas16(&mut self, ins: &Instruction, space: Space) -> Option<()> {
        if ins.opcode == Opcode::Red {
            return self.unsupported(ins, "red has no cas");
        }
        let ops = self.ops(ins, 4)?;
        let it = ins.ty();
        let (addr, offset) = self.address(&ops[1], space)?;
        let b = self.read(&ops[2], Type::I16, it)?;
        let c = self.read(&ops[3], Type::I16, it)?;
        let HalfWord {
            base,
            sh,
            keep,
            ffff,
        } = self.half_word(addr, offset);
        let mut fb = self.ins();
        let b32 = fb.zext(Type::I32, b);
        let c32 = fb.zext(Type::I32, c);
        let c_at = fb.shl(c32, sh);
        let out = self.new_var(Type::I16);
        let exit = self.new_block(1);
        let step = |this: &mut Self, old: Value| {
            let mut fb = this.ins();
            let shifted = fb.binary(BinaryOp::ShrU, old, sh);
            let cur = fb.binary(BinaryOp::And, shifted, ffff);
            let hit = fb.icmp(IntCC::Eq, cur, b32);
            let kept = fb.binary(BinaryOp::And, old, keep);
            let put = fb.binary(BinaryOp::Or, kept, c_at);
            let new = fb.select(hit, put, old);
            let res = fb.trunc(Type::I16, cur);
            (new, Some(res))
        };
        self.cas_loop(space, Type::I32, base, 0, exit, Some(out), step);
        self.switch_to(exit);
        let old = self.use_var(out);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, false, ops[0].span())
    }
}

/// A half-word inside its aligned 32-bit word ([`FnBuilder::half_word`]).
struct HalfWord {
    /// The word's address.
    base: Value,
    /// The half's bit offset in the word (0 or 16), an `i32`.
    sh: Value,
    /// The word with the half's bits clear: `!(0xffff << sh)`.
    keep: Value,
    /// `0xffff` (`i32`).
    ffff: Value,
}

impl FnBuilder<'_, '_> {
    /// Where the half-word at `addr + offset` sits in its aligned 32-bit word (the CAS loops
    /// on halves work on that word).
    fn half_word(&mut self, addr: Value, offset: i32) -> HalfWord {
        let at = self.func.values[addr].ty;
        let a = if offset == 0 {
            addr
        } else {
            let k = self.iconst(at, i64::from(offset));
            self.ins().add(addr, k)
        };
        let word_mask = self.iconst(at, -4);
        let two = self.iconst(Type::I32, 2);
        let three = self.iconst(Type::I32, 3);
        let ffff = self.iconst(Type::I32, 0xffff);
        let mut fb = self.ins();
        let base = fb.binary(BinaryOp::And, a, word_mask);
        let lo = if at == Type::I64 {
            fb.trunc(Type::I32, a)
        } else {
            a
        };
        let half = fb.binary(BinaryOp::And, lo, two);
        let sh = fb.shl(half, three);
        let field = fb.shl(ffff, sh);
        let keep = fb.unary(UnaryOp::Not, field);
        HalfWord {
            base,
            sh,
            keep,
            ffff,
        }
    }

    /// One lane of a half-precision atomic add: `add.rn.f16` (no flush, as `.noftz` says) or
    /// the exactly rounded bf16 add (`bf16`'s `fma(x, 1, y)`).
    fn half_add(&mut self, x: Value, y: Value, bf16: bool) -> Value {
        if bf16 {
            let one = self.ins().iconst(Type::I16, 0x3f80);
            return self.bf16_fma(x, one, y, false);
        }
        let add = FloatOp::Binary {
            op: FloatBinOp::Add,
            fmt: FloatFmt::F16,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        self.ins().float(add, &[x, y])
    }

    /// `atom/red{.space}.add.noftz.f16` (sm_70) and `.f16x2` (sm_60), and with `bf16` the
    /// `.bf16`/`.bf16x2` forms (sm_90), as a CAS loop on the aligned 32-bit word: the half
    /// (or both halves) added ([`Self::half_add`]), the other half kept; `d` is the old half
    /// (the old word for the pairs). On sm_50/52 the f16 add is computed exactly through f32
    /// (see `half`), on sm_53 it is `HADD2`; the bf16 add is `bf16`'s exact f64 route. About
    /// 16 SASS instructions per try for `.f16` (f16x2: about 18), about 47 for `.bf16` (74 for `.bf16x2`).
    fn hadd_atomic(&mut self, ins: &Instruction, space: Space, x2: bool, bf16: bool) -> Option<()> {
        let red = ins.opcode == Opcode::Red;
        let first = if red { 0 } else { 1 };
        let ops = self.ops(ins, first + 2)?;
        let (addr, offset) = self.address(&ops[first], space)?;
        let vty = if x2 { Type::I32 } else { Type::I16 };
        let b = self.read(&ops[first + 1], vty, ins.ty())?;
        let exit = self.new_block(1);
        let out = (!red).then(|| self.new_var(vty));
        if x2 {
            let k16 = self.iconst(Type::I32, 16);
            let mut fb = self.ins();
            let b_lo = fb.trunc(Type::I16, b);
            let b_hi32 = fb.binary(BinaryOp::ShrU, b, k16);
            let b_hi = fb.trunc(Type::I16, b_hi32);
            let step = |this: &mut Self, old: Value| {
                let mut fb = this.ins();
                let lo = fb.trunc(Type::I16, old);
                let hi32 = fb.binary(BinaryOp::ShrU, old, k16);
                let hi = fb.trunc(Type::I16, hi32);
                let s_lo = this.half_add(lo, b_lo, bf16);
                let s_hi = this.half_add(hi, b_hi, bf16);
                let mut fb = this.ins();
                let w_lo = fb.zext(Type::I32, s_lo);
                let w_hi = fb.zext(Type::I32, s_hi);
                let w_hi = fb.shl(w_hi, k16);
                (fb.binary(BinaryOp::Or, w_lo, w_hi), None)
            };
            self.cas_loop(space, Type::I32, addr, offset, exit, out, step);
        } else {
            let HalfWord { base, sh, keep, .. } = self.half_word(addr, offset);
            let step = |this: &mut Self, old: Value| {
                let mut fb = this.ins();
                let shifted = fb.binary(BinaryOp::ShrU, old, sh);
                let cur = fb.trunc(Type::I16, shifted);
                let sum = this.half_add(cur, b, bf16);
                let mut fb = this.ins();
                let sum32 = fb.zext(Type::I32, sum);
                let put = fb.shl(sum32, sh);
                let kept = fb.binary(BinaryOp::And, old, keep);
                (fb.binary(BinaryOp::Or, kept, put), Some(cur))
            };
            self.cas_loop(space, Type::I32, base, 0, exit, out, step);
        }
        self.switch_to(exit);
        let out = out?;
        let old = self.use_var(out);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, old, false, ops[0].span())
    }
}
