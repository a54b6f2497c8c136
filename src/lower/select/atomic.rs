//! Atomics (`ir::atomic`) in the global and shared spaces, in ptxas's forms:
//!
//! ```text
//! global, result read     ATOM[.E].op[.type] d, [a+off20], b      ATOM[.E].CAS[.64] d, [a], b, b+1|b+2
//! global, result unread   RED[.E].op[.type] [a+off20], b          (exch/cas: ATOM with d = RZ)
//! global add.f32          ATOM/RED[.E].ADD.F32.FTZ.RN
//! shared                  ATOMS.op[.type] d, [a+off*4], b          ATOMS.CAS[.64] d, [a], b, ...
//!                         (d = RZ when unread: sm_50 has no shared RED)
//! atomic read             LDS.U.32 d, [a+off] (shared); LDG.E.CV / LD.E.CV (global, generic)
//! ```
//!
//! Shared and generic `add.f32` never get here: `ir::build` expands them into CAS loops
//! (`ir/build/atomics.rs`) of `AtomOp::Load`, `fadd` and `ATOMS.CAS`, since a loop needs
//! blocks and selection emits one instruction's pieces into one block.
//!
//! The address goes through the same matcher as loads and stores (chains, constant-bank bases);
//! a displacement the instruction cannot hold (signed 20 bits for ATOM/RED; a non-negative
//! multiple of 4 below 2^24 for ATOMS, which counts words) is added to the address first.
//! `.S32`/`.S64` only matter for min/max; other operations use the unsigned spelling. CAS
//! reads its compare and new values from consecutive registers, gathered into an aligned pair
//! (quad for 64 bits). Generic-space atomics test the shared window and run `ATOMS` or
//! `ATOM` under the window predicate (see [`Lowerer::lower_generic_atomic`]); ptxas does the
//! same with a branch.

use super::Lowerer;
use crate::ir::{AtomOp, Space, Type, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};
use cranelift_entity::EntityRef;

impl<'a> Lowerer<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_atomic(
        &mut self,
        v: Value,
        op: AtomOp,
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let shared = match space {
            Space::Global => false,
            Space::Shared => true,
            Space::Generic => return self.lower_generic_atomic(v, op, ty, addr, offset, args),
            _ => {
                return Err(self.unsupported(format!(
                    "an atomic in the .{} space (only .global, .shared and generic)",
                    space.name()
                )))
            }
        };
        let wide = ty == Type::I64;
        if op == AtomOp::Load {
            // An aligned word is read whole: a plain LDS is an atomic read; in global
            // memory `LDG.E.CV` reads it from L2, past any stale L1 line (the first read
            // of an emulated atomic's CAS loop).
            let cache = if shared {
                crate::ir::CacheOp::Default
            } else {
                crate::ir::CacheOp::Volatile
            };
            return self.lower_load(&[v], space, ty, 1, addr, offset, cache);
        }
        if (op == AtomOp::FAdd && shared) || op == AtomOp::Load {
            return Err(LowerError::Internal(format!(
                "atom.{}.{} reached selection (ir::build expands shared float adds into CAS \
                 loops; atomic reads are shared only)",
                space.name(),
                op.name()
            )));
        }
        // Is the old value read anywhere? (Then it needs a register; else RED / RZ.)
        let used = self.result_used(v);
        let data = self.atomic_data(op, wide, args)?;
        let mut access = self.address(space, addr, offset)?;
        let fits = if shared {
            access.disp >= 0 && access.disp % 4 == 0 && access.disp < (1 << 24)
        } else {
            (-(1 << 19)..(1 << 19)).contains(&access.disp)
        };
        // A constant address is `[RZ + disp]` when the displacement fits (a 32-bit one only:
        // `.E` would read RZ as a pair, which is fine, but keep the common shapes).
        if !fits || (access.addr.is_none() && access.wide) {
            let base = access.addr;
            access.addr = Some(self.add_disp(base, access.disp, access.wide)?);
            access.disp = 0;
        }
        let red = !used && !shared && !matches!(op, AtomOp::Exch | AtomOp::Cas);
        let mut inst = atom_inst(op, wide, shared, red);
        if shared {
            inst.set(Field::Off, (access.disp / 4) as u64);
        } else {
            inst.set(Field::E, access.wide as u64);
            inst = inst.with_signed(Field::Off, access.disp);
        }
        let mut i = Sm50Inst::new(Role::Plain);
        let mut refs = Vec::new();
        if let Some(base) = access.addr {
            let aop = i.use_(base.vreg);
            refs.push((Field::Ra, aop, base.offset));
        }
        let dop = i.use_(data.vreg);
        let data_field = if red { Field::Rd } else { Field::Rb };
        refs.push((data_field, dop, data.offset));
        if used {
            let d = self.new_vreg(if wide { RegKind::B64 } else { RegKind::B32 });
            let rop = i.def(d, false);
            refs.push((Field::Rd, rop, 0));
            self.set_loc(v, Loc { vreg: d, offset: 0 });
        }
        i.piece(inst, &refs);
        self.push(i);
        Ok(())
    }

    /// Is value `v` read anywhere (an atomic's old value: then it needs a register, else RED / RZ;
    /// a call's result word: then it is loaded from the result buffer)?
    /// `use_count` counts the operand slots of every instruction of `f` that read each value
    /// (non-zero only for a value read at least once, and `f` does not change while it is
    /// lowered), so this is the scan of every instruction's operands it replaces,
    /// which made each atomic cost a pass over the function.
    pub(super) fn result_used(&self, v: Value) -> bool {
        self.use_count[v.index()] != 0
    }

    /// The data register: the operand, or for CAS the compare and new values gathered into
    /// consecutive registers.
    fn atomic_data(&mut self, op: AtomOp, wide: bool, args: &[Value]) -> Result<Loc, LowerError> {
        if op == AtomOp::Cas {
            let total = if wide { 16 } else { 8 };
            return self.store_data(args, total);
        }
        let b = args
            .first()
            .copied()
            .ok_or_else(|| LowerError::Internal("atomic without an operand".into()))?;
        self.reg(b)
    }

    /// A generic-space atomic, as ptxas: test the final address against the shared window,
    /// then `ATOMS` on the window offset (the address's low 24 bits) or `ATOM[.E]`/`RED` on
    /// the address itself. ptxas branches between the two; here one sequence holds both,
    /// each guarded by the window predicate (true: not in the shared window):
    ///
    /// ```text
    /// LEA RZ.CC, a.lo, RZ ; LEA.HI.X P, RZ, a.lo, RZ, a.hi      (32-bit: LEA P, RZ, a, RZ;
    ///                                                          none when a chain gave Plg)
    /// LOP32I.AND t, a.lo, 0xffffff
    /// @!P ATOMS.op d, [t], b
    /// @P  ATOM[.E].op d, [a], b          (RED [a], b when d is unread)
    /// ```
    ///
    /// Every def is early (no piece may overwrite a register a later piece reads), and each
    /// lane runs exactly one of the two atomics, so `d` is written once. A `.local` address
    /// takes the global path, as in ptxas (PTX leaves atomics on local memory undefined).
    fn lower_generic_atomic(
        &mut self,
        v: Value,
        op: AtomOp,
        ty: Type,
        addr: Value,
        offset: i32,
        args: &[Value],
    ) -> Result<(), LowerError> {
        if op == AtomOp::Load {
            // A generic atomic read: `LD.E.CV` (see the global one).
            return self.lower_load(
                &[v],
                Space::Generic,
                ty,
                1,
                addr,
                offset,
                crate::ir::CacheOp::Volatile,
            );
        }
        if op == AtomOp::FAdd {
            return Err(LowerError::Internal(format!(
                "a generic atom.{} reached selection (ir::build expands generic float adds)",
                op.name()
            )));
        }
        let wide = ty == Type::I64;
        let used = self.result_used(v);
        let data = self.atomic_data(op, wide, args)?;
        let access = self.address(Space::Generic, addr, offset)?;
        // The window test needs the final address in a register.
        let a = match access.addr {
            Some(base) if access.disp == 0 => base,
            base => self.add_disp(base, access.disp, access.wide)?,
        };
        let mut i = Sm50Inst::new(Role::Plain);
        // A chain that computed the final address gave its Plg already (with
        // --plg-per-address a chain's Plg that leaves out a displacement is not enough: test
        // again; by default it serves every displacement, as for LD/ST).
        let chain_plg = access
            .pred
            .filter(|_| access.disp == 0 || !self.opts.plg_per_address);
        let (pop, own) = match chain_plg {
            Some(p) => (i.use_(p), false),
            None => {
                let p = self.new_vreg(RegKind::Pred);
                (i.def(p, true), true)
            }
        };
        let t = self.new_vreg(RegKind::B32);
        let top = i.def(t, true);
        let aop = i.use_(a.vreg);
        let o = a.offset;
        if own && access.wide {
            super::window_test_pieces(&mut i, aop, o, pop);
        } else if own {
            let lea = sm50::Inst::new(Form::LEA_R);
            i.piece(lea, &[(Field::Ra, aop, o), (Field::Plg, pop, 0)]);
        }
        let and = sm50::Inst::new(Form::LOP32I).with(Field::Imm, 0xff_ffff);
        i.piece(and, &[(Field::Rd, top, 0), (Field::Ra, aop, o)]);
        let dop = i.use_(data.vreg);
        let rop = if used {
            let d = self.new_vreg(if wide { RegKind::B64 } else { RegKind::B32 });
            self.set_loc(v, Loc { vreg: d, offset: 0 });
            Some(i.def(d, true))
        } else {
            None
        };
        let red = !used && !matches!(op, AtomOp::Exch | AtomOp::Cas);
        for shared in [true, false] {
            let mut inst = atom_inst(op, wide, shared, red && !shared);
            inst.set(Field::Pgn, shared as u64);
            let mut refs = vec![(Field::Pg, pop, 0)];
            if shared {
                refs.push((Field::Ra, top, 0));
            } else {
                inst.set(Field::E, access.wide as u64);
                refs.push((Field::Ra, aop, o));
            }
            let red_here = red && !shared;
            refs.push((
                if red_here { Field::Rd } else { Field::Rb },
                dop,
                data.offset,
            ));
            if let Some(rop) = rop {
                refs.push((Field::Rd, rop, 0));
            }
            i.piece(inst, &refs);
        }
        self.push(i);
        Ok(())
    }
}

/// The atomic instruction for `op` without its address and registers: `ATOMS` (shared),
/// `RED` (global, old value unread) or `ATOM` (global), with the operation and type codes.
fn atom_inst(op: AtomOp, wide: bool, shared: bool, red: bool) -> sm50::Inst {
    let cas = op == AtomOp::Cas;
    let code = match op {
        AtomOp::Add | AtomOp::FAdd => 0,
        AtomOp::MinS | AtomOp::MinU => 1,
        AtomOp::MaxS | AtomOp::MaxU => 2,
        AtomOp::Inc => 3,
        AtomOp::Dec => 4,
        AtomOp::And => 5,
        AtomOp::Or => 6,
        AtomOp::Xor => 7,
        AtomOp::Exch | AtomOp::Cas => 8,
        // Lowered as LDS, never through here.
        AtomOp::Load => 0,
    };
    let signed = matches!(op, AtomOp::MinS | AtomOp::MaxS);
    // Type codes: ATOM/RED -, .S32, .U64, .F32, .U128, .S64; ATOMS -, .S32, .U64, .S64.
    let ty_code = match (wide, signed, shared) {
        _ if op == AtomOp::FAdd => 3,
        (false, false, _) => 0,
        (false, true, _) => 1,
        (true, false, _) => 2,
        (true, true, true) => 3,
        (true, true, false) => 5,
    };
    let form = match (shared, cas, red) {
        (false, true, _) => Form::ATOM_CAS,
        (true, true, _) => Form::ATOMS_CAS,
        (false, false, true) => Form::RED,
        (false, false, false) => Form::ATOM,
        (true, false, _) => Form::ATOMS,
    };
    let mut inst = sm50::Inst::new(form);
    if cas {
        inst.set(Field::W64, wide as u64);
    } else {
        inst.set(Field::Op, code);
        inst.set(Field::Ty, ty_code);
    }
    inst
}
