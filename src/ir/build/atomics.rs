//! PTX `atom` and `red` → [`InstData::Atomic`](crate::ir::InstData::Atomic).
//!
//! `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}` and `red{.sem}{.scope}{.space}.op.type
//! [a], b`. The memory-order and scope qualifiers are accepted and dropped: sm_5x atomics are
//! relaxed and device-wide, and no other thread order is observable in `ir::eval` (see
//! `ir::atomic`). `red` is an `atom` whose result is never read. Refused with a diagnostic:
//! other floating-point atomics (`.f64` add needs sm_60, `.f16`, and f32 operations other
//! than `add`), 16- and 128-bit ones, `inc`/`dec` on 64 bits, cache hints, and spaces other
//! than global, shared and generic.
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
use crate::ir::{AtomOp, BinaryOp, Block, CvtaDir, IntCC, Space, Type, Value};
use crate::ptx::ast::{Instruction, Opcode, TypeKind};

impl FnBuilder<'_, '_> {
    pub(super) fn atomic(&mut self, ins: &Instruction) -> Option<()> {
        if ins.has_flag("L2::cache_hint") {
            return self.unsupported(ins, "cache hints are not supported");
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
            return self.unsupported(
                ins,
                "64-bit float atomic add needs sm_60 or later; sm_5x has none",
            );
        }
        if ins.ty() != Some(PtxType::F32) || !ins.has_flag("add") {
            return self.unsupported(
                ins,
                "floating-point atomics other than add.f32 (sm_5x has no others)",
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
        let sh = Space::Shared;
        let i32t = Type::I32;
        let seen = self.new_var(i32t);
        let first = self.ins().atomic(AtomOp::Load, sh, i32t, addr, offset, &[]);
        self.def_var(seen, first);
        let head = self.new_block(2);
        self.terminate_jump(head);
        self.switch_to(head);
        let old = self.use_var(seen);
        let add = FloatOp::Binary {
            op: FloatBinOp::Add,
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let mut fb = self.ins();
        let new = fb.float(add, &[b, old]);
        let now = fb.atomic(AtomOp::Cas, sh, i32t, addr, offset, &[old, new]);
        let retry = fb.icmp(IntCC::Ne, now, old);
        self.def_var(seen, now);
        if let Some(out) = out {
            self.def_var(out, now);
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
