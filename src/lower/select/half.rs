//! Selection of IR `Float` operations in `FloatFmt::F16` (PTX `.f16`, and each lane of a
//! `.f16x2` instruction, which `ir::build` splits) into SM50/SM53 instructions.
//!
//! In: one `InstData::Float` on f16 values (add, sub, mul, fma, neg, abs, compare) and the
//! target's SM number (`LowerOptions::sm`). Out: the instructions that define the result,
//! or `None` (not an f16 arithmetic operation: the caller's f32/f64 selection handles it),
//! or a [`LowerError`] for a modifier with no exact selection.
//!
//! An f16 value lives in the low half of a 32-bit register (its high half is unspecified,
//! like every 16-bit value's). A lane that `ir::build` cut out of an `.f16x2` word as
//! `trunc.i16(shr.u(x, 16))` is read straight from `x` with the `.H1_H1` select (and
//! `trunc.i16(x)` from `x` with `.H0_H0`), so the shift is not needed for it.
//!
//! **sm_53** (the half-precision ALU, as ptxas 11.8 selects it, checked with the oracle):
//!
//! | IR                  | SASS                                                          |
//! |---------------------|---------------------------------------------------------------|
//! | fadd / fsub         | `HADD2 d, a.H0_H0, b.H0_H0` (`-b` for sub; `.FTZ`, `.SAT`)    |
//! | fmul                | `HMUL2 d, a.H0_H0, b.H0_H0` (`.FTZ`, `.SAT`)                  |
//! | ffma                | `HFMA2 d, a.H0_H0, b.H0_H0, c.H0_H0` (`.FTZ`, `.SAT`)         |
//! | fneg / fabs         | `HADD2 d, -a.H0_H0, -RZ.H0_H0` / `HADD2 d, \|a.H0_H0\|, -RZ.H0_H0` |
//! | fcmp                | `HSETP2.cc.AND p, PT, a.H0_H0, b.H0_H0, PT` (`.FTZ`)          |
//!
//! Both lanes of the result hold the same value. ptxas writes a scalar `neg/abs.f16` as
//! `F2F.F16.F16 -a` / `|a|`; leafold uses the `HADD2` form ptxas writes for `.f16x2`,
//! which gives the same value in the simulator's model (a NaN comes out canonical, as from
//! every float operation of `ir::eval`).
//!
//! **sm_50 / sm_52** have no half-precision arithmetic (ptxas 11.8 refuses it: "f16
//! arithmetic and compare instructions requires .target sm_53 or higher"); leafold computes
//! it in wider formats with the same results: `add/sub/mul` and the comparison widen both
//! operands exactly (`F2F.F32.F16`), operate in f32 and narrow (`F2F.F16.F32`, `.SAT` there
//! for `.sat`). The two roundings give the correctly rounded f16 result because f32 has at
//! least 2·11+2 significand bits (the classic double-rounding bound for `+ - ×`; an f16
//! product is exact in f32). `fma` is widened to f64 (`F2F.F64.F16`, `DFMA`,
//! `F2F.F16.F64`): `x = a·b` is exact there, and double rounding could only go wrong if
//! `s = x + c` rounded in f64 onto an f16 midpoint `m` (in `[2^e, 2^(e+1))`) without being
//! it, i.e. `0 < |s - m| <= 2^(e-53)`. But `s - m = x + (c - m)` is a nonzero multiple of
//! the smallest of the last-bit weights of `x`, `c` and `m`: `m`'s is `2^(e-11)`; `c`'s is
//! at least `2^-24` (and `2^-24 > 2^(e-53)` for every f16 exponent); and `|c - m|` is at
//! least `2^(e-11)` (`c` is an f16, `m` is not), so an `x` that nearly cancels it has
//! magnitude at least `2^(e-12)` and its 22 bits end no lower than `2^(e-34)`. So
//! `|s - m|` is never that small and the
//! result is the correctly rounded f16 (`tests/compile_half.rs` also checks it against
//! `ir::eval` on random and edge operands). `neg/abs` are `FADD -a, -RZ` / `|a|` in f32.
//! `.ftz` is refused there: a flushed f16 subnormal is a normal f32 value.

use super::float::{cmp_code, rnd_code, size_code};
use super::Lowerer;
use crate::ir::float::{FloatBinOp, FloatFmt, FloatOp, FloatUnOp, Round};
use crate::ir::{BinaryOp, ConvOp, InstData, Type, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::{RegKind, VReg};
use crate::sm50::{self, Field, Form};
use cranelift_entity::EntityRef;

/// The `asel`/`bsel`/`csel` value for a whole-register read of one half into both lanes.
const H0_H0: u64 = 2;
const H1_H1: u64 = 3;

/// RZ's register number (the `-RZ` addend of neg/abs).
const RZ: u64 = 255;

/// A whole-register source of an H* instruction: an IR value's register with a half
/// select, or a 32-bit constant (two f16 lanes) put in a register with `MOV32I`.
#[derive(Clone, Copy)]
enum HSrc {
    Reg(Value, u64),
    Const(u32),
}

impl Lowerer<'_> {
    /// Select `op` when it is f16 arithmetic (see the module essay); `None` otherwise.
    pub(super) fn lower_half(
        &mut self,
        v: Value,
        op: FloatOp,
        args: &[Value],
    ) -> Option<Result<(), LowerError>> {
        let fmt = match op {
            FloatOp::Binary {
                fmt,
                op: FloatBinOp::Add | FloatBinOp::Sub | FloatBinOp::Mul,
                ..
            } => fmt,
            FloatOp::Fma { fmt, .. } | FloatOp::Unary { fmt, .. } | FloatOp::Cmp { fmt, .. } => fmt,
            _ => return None,
        };
        if fmt != FloatFmt::F16 {
            return None;
        }
        Some(if self.opts.sm >= 53 {
            if let FloatOp::Cmp { .. } = op {
                if let Some(r) = self.half_cmp_pair(v, op, args) {
                    return Some(r);
                }
            }
            self.half_native(v, op, args)
        } else {
            self.half_widened(v, op, args)
        })
    }

    /// Where the f16 value `x` lives: `(w, 1)` when it is `trunc.i16(shr.u(w, 16))` (the
    /// H1 half of the 32-bit `w`), `(w, 0)` when it is `trunc.i16(w)`, else `(x, 0)` (a
    /// 16-bit value is the low half of its register). Asks for nothing.
    fn half_lane_src(&self, x: Value, deep: bool) -> (Value, u64) {
        if let Some(InstData::Convert {
            op: ConvOp::Trunc,
            arg,
            ..
        }) = self.def_of(x)
        {
            let arg = *arg;
            if self.ty(arg) == Type::I32 {
                if let Some(InstData::Binary {
                    op: BinaryOp::ShrU,
                    args: [w, k],
                }) = self.def_of(arg)
                {
                    if matches!(self.class(*k), super::Class::Imm(16)) {
                        return self.half_of(*w, 1, deep);
                    }
                }
                return self.half_of(arg, 0, deep);
            }
        }
        (x, 0)
    }

    /// Half `half` of the 32-bit `w`: with `deep`, when `w` is itself a pack of two f16 values
    /// (`or(zext(a), shl(zext(b), 16))`, as `mov.b32 %r, {%a, %b}` builds it), that value's
    /// own place, so the pack is not needed; else `(w, half)`.
    fn half_of(&self, w: Value, half: u64, deep: bool) -> (Value, u64) {
        if deep {
            if let Some((a, b)) = self.half2_pack_parts(w) {
                // A pack of two lanes computed alike is (likely) fused into one H*
                // instruction: its lanes are read from that register, not recomputed.
                if !self.half2_lanes_alike(a, b) {
                    return self.half_lane_src(if half == 0 { a } else { b }, true);
                }
            }
        }
        (w, half)
    }

    /// Whether `a` and `b` are two values of the same f16 operation (or `set` pattern), the
    /// shape [`Self::lower_half2_pack`] fuses (without checking the operands' registers).
    fn half2_lanes_alike(&self, a: Value, b: Value) -> bool {
        // One value in both lanes is a broadcast: read in place (`.H0_H0`), never packed.
        if a == b {
            return false;
        }
        match (self.def_of(a), self.def_of(b)) {
            (Some(InstData::Float { op: x, .. }), Some(InstData::Float { op: y, .. })) => x == y,
            (Some(InstData::Select { .. }), Some(InstData::Select { .. })) => true,
            _ => false,
        }
    }

    /// The two 16-bit values `(lo, hi)` packed by `w = or(zext.i32(lo), shl(zext.i32(hi), 16))`.
    fn half2_pack_parts(&self, w: Value) -> Option<(Value, Value)> {
        let Some(InstData::Binary {
            op: BinaryOp::Or,
            args: [l, h],
        }) = self.def_of(w)
        else {
            return None;
        };
        let zext_of = |x: Value| match self.def_of(x) {
            Some(InstData::Convert {
                op: ConvOp::Zext,
                ty: Type::I32,
                arg,
            }) if self.ty(*arg) == Type::I16 => Some(*arg),
            _ => None,
        };
        let lo = zext_of(*l)?;
        let hi = match self.def_of(*h) {
            Some(InstData::Binary {
                op: BinaryOp::Shl,
                args: [h, k],
            }) if matches!(self.class(*k), super::Class::Imm(16)) => zext_of(*h)?,
            _ => return None,
        };
        Some((lo, hi))
    }

    /// `or(zext.i32(lo), shl(zext.i32(hi), 16))` where `lo` and `hi` are the same f16
    /// operation on the two halves of the same registers (as `ir::build` splits `.f16x2`):
    /// one H* instruction on the whole registers, as ptxas writes `.f16x2` arithmetic.
    /// A source whose two lanes read one half is given that half's select (`.H0_H0`,
    /// `.H1_H1`); one that reads H1 for the low lane and H0 for the high has no select, so
    /// the pair is not fused. `None`: not this pattern (the integer `or` is selected).
    pub(super) fn lower_half2_pack(&mut self, v: Value) -> Option<Result<(), LowerError>> {
        let (lo, hi) = self.half2_pack_parts(v)?;
        if self.opts.sm >= 53 {
            if let Some(r) = self.half2_fused(v, lo, hi) {
                return Some(r);
            }
        }
        // Not fused: a pack of f16 results is ptxas's `XMAD.PSL.CLO d, hi, 0x1, lo`
        // ((hi.lo16 · 1) << 16 + lo.lo16: both high halves are ignored, no carry). Other
        // 16-bit packs keep the integer selection.
        let is_float = |x: Value| matches!(self.def_of(x), Some(InstData::Float { .. }));
        if !is_float(lo) && !is_float(hi) {
            return None;
        }
        Some(self.half2_xmad_pack(v, lo, hi))
    }

    fn half2_xmad_pack(&mut self, v: Value, lo: Value, hi: Value) -> Result<(), LowerError> {
        let l = self.reg(lo)?;
        let h = self.reg(hi)?;
        let inst = sm50::Inst::new(Form::XMAD_I)
            .with(Field::ImmImm16, 1)
            .with(Field::Psl, 1)
            .with(Field::Mode, sm50::values::xmad::mode::CLO);
        self.one_inst32(v, inst, &[(Field::Ra, h), (Field::Rc, l)]);
        Ok(())
    }

    /// The pack `v` of lanes `lo`, `hi` as one H* instruction, when they are computed alike.
    fn half2_fused(&mut self, v: Value, lo: Value, hi: Value) -> Option<Result<(), LowerError>> {
        // set.<cmp>.f16x2 / .u32: select(test, one, 0) per lane.
        if let (
            Some(InstData::Select {
                cond: c_lo,
                args: [one_lo, zero_lo],
            }),
            Some(InstData::Select {
                cond: c_hi,
                args: [one_hi, zero_hi],
            }),
        ) = (self.def_of(lo), self.def_of(hi))
        {
            let imm = |x: &Value| match self.class(*x) {
                super::Class::Imm(k) => Some(k & 0xffff),
                _ => None,
            };
            let one = imm(one_lo)?;
            if imm(one_hi)? != one || imm(zero_lo)? != 0 || imm(zero_hi)? != 0 {
                return None;
            }
            let bf = match one {
                0x3c00 => true,
                0xffff => false,
                _ => return None,
            };
            let (
                Some(InstData::Float {
                    op: op_lo,
                    args: a_lo,
                }),
                Some(InstData::Float {
                    op: op_hi,
                    args: a_hi,
                }),
            ) = (self.def_of(*c_lo), self.def_of(*c_hi))
            else {
                return None;
            };
            if op_lo != op_hi
                || !matches!(
                    op_lo,
                    FloatOp::Cmp {
                        fmt: FloatFmt::F16,
                        ..
                    }
                )
            {
                return None;
            }
            let srcs = self.half2_srcs(a_lo, a_hi)?;
            return Some(self.half_set2(v, *op_lo, &srcs, bf));
        }
        let (
            Some(InstData::Float {
                op: op_lo,
                args: a_lo,
            }),
            Some(InstData::Float {
                op: op_hi,
                args: a_hi,
            }),
        ) = (self.def_of(lo), self.def_of(hi))
        else {
            return None;
        };
        if op_lo != op_hi {
            return None;
        }
        let op = *op_lo;
        let fmt = match op {
            FloatOp::Binary {
                fmt,
                op: FloatBinOp::Add | FloatBinOp::Sub | FloatBinOp::Mul,
                ..
            } => fmt,
            FloatOp::Fma { fmt, .. } | FloatOp::Unary { fmt, .. } => fmt,
            _ => return None,
        };
        if fmt != FloatFmt::F16 {
            return None;
        }
        let srcs = self.half2_srcs(a_lo, a_hi)?;
        Some(self.half_native_srcs(v, op, &srcs))
    }

    /// The whole-register sources of a lane pair: operand k of the low lane and of the
    /// high lane must read the same register, H0 then H1 (no select), or one half for both.
    fn half2_srcs(&self, a_lo: &[Value], a_hi: &[Value]) -> Option<Vec<HSrc>> {
        if a_lo.len() != a_hi.len() {
            return None;
        }
        let mut srcs = Vec::with_capacity(3);
        for (&x, &y) in a_lo.iter().zip(a_hi.iter()) {
            // Two constant lanes (an f16x2 constant whose halves were folded apart).
            if let (super::Class::Imm(kx), super::Class::Imm(ky)) = (self.class(x), self.class(y)) {
                srcs.push(HSrc::Const(
                    (kx as u32 & 0xffff) | (ky as u32 & 0xffff) << 16,
                ));
                continue;
            }
            // The lanes' own values first (a broadcast `{%h, %h}` is `%h.H0_H0`), then the
            // registers they were cut from (two lanes of one packed result).
            let src = [true, false].into_iter().find_map(|deep| {
                let ((wx, hx), (wy, hy)) =
                    (self.half_lane_src(x, deep), self.half_lane_src(y, deep));
                if wx != wy {
                    return None;
                }
                let sel = match (hx, hy) {
                    (0, 1) => 0,
                    (0, 0) => H0_H0,
                    (1, 1) => H1_H1,
                    _ => return None,
                };
                Some(HSrc::Reg(wx, sel))
            })?;
            srcs.push(src);
        }
        Some(srcs)
    }

    /// The register and select of one source (a constant goes to a register by `MOV32I`).
    fn half_src_reg(&mut self, s: HSrc) -> Result<(Loc, u64), LowerError> {
        match s {
            HSrc::Reg(w, sel) => Ok((self.reg(w)?, sel)),
            HSrc::Const(bits) => {
                let d = self.new_vreg(RegKind::B32);
                let mut i = Sm50Inst::new(Role::Plain);
                let dop = i.def(d, false);
                i.piece(
                    sm50::Inst::new(Form::MOV32I).with(Field::Imm, u64::from(bits)),
                    &[(Field::Rd, dop, 0)],
                );
                self.push(i);
                Ok((Loc { vreg: d, offset: 0 }, 0))
            }
        }
    }

    /// `HSET2{.BF}.cc.AND d, a, b, PT`: each lane 1.0 (`.BF`) or all ones where its test
    /// holds, else 0, as ptxas writes `set.<cmp>.f16x2.f16x2` / `.u32.f16x2`.
    fn half_set2(
        &mut self,
        v: Value,
        op: FloatOp,
        srcs: &[HSrc],
        bf: bool,
    ) -> Result<(), LowerError> {
        let FloatOp::Cmp { cc, ftz, .. } = op else {
            return Err(self.unsupported(op.display_name()));
        };
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let (a, asel) = self.half_src_reg(srcs[0])?;
        let (b, bsel) = self.half_src_reg(srcs[1])?;
        let aop = i.use_(a.vreg);
        let bop = i.use_(b.vreg);
        let inst = sm50::Inst::new(Form::HSET2_R)
            .with(Field::Cmp, cmp_code(cc))
            .with(Field::Asel, asel)
            .with(Field::Bsel, bsel)
            .with(Field::Pacc, 7)
            .with(Field::Bf, u64::from(bf))
            .with(Field::Ftz, u64::from(ftz));
        i.piece(
            inst,
            &[
                (Field::Rd, dop, 0),
                (Field::Ra, aop, a.offset),
                (Field::Rb, bop, b.offset),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `setp.<cmp>.f16x2 p|q` as ptxas writes it: one `HSETP2 p, q, a, b, PT` on the whole
    /// registers, for the two lane comparisons `ir::build` emits side by side (same
    /// operation, the H0 and the H1 lanes of the same two registers, in the same block).
    /// The first of the pair to be lowered defines both predicates; the second finds its
    /// location set. `None`: no such sibling (a lone lane comparison).
    fn half_cmp_pair(
        &mut self,
        v: Value,
        op: FloatOp,
        args: &[Value],
    ) -> Option<Result<(), LowerError>> {
        if self.planning.is_none() && self.locs[v.index()].is_some() {
            return Some(Ok(()));
        }
        let lanes = |this: &Self, a: &[Value]| -> Option<(Value, Value, u64)> {
            let ((wa, ha), (wb, hb)) = (
                this.half_lane_src(a[0], false),
                this.half_lane_src(a[1], false),
            );
            (ha == hb && this.ty(wa) == Type::I32 && this.ty(wb) == Type::I32)
                .then_some((wa, wb, ha))
        };
        let (wa, wb, h) = lanes(self, args)?;
        let crate::ir::ValueDef::Result(me, _) = self.f.values[v].def else {
            return None;
        };
        let insts = &self.f.blocks[self.f.insts[me].block].insts;
        let at = insts.iter().position(|&i| i == me)?;
        // The sibling is next to it (a few instructions either side at most).
        let lo = at.saturating_sub(4);
        let hi = (at + 5).min(insts.len());
        let sib = insts[lo..hi].iter().copied().find(|&i| {
            i != me
                && match &self.f.insts[i].data {
                    InstData::Float { op: o, args: a } if *o == op && a.len() == 2 => {
                        lanes(self, a) == Some((wa, wb, 1 - h))
                    }
                    _ => false,
                }
        })?;
        let sv = self.f.insts[sib].results[0];
        // (pd0, pd1) = (H0 lane, H1 lane).
        let (p0, p1) = if h == 0 { (v, sv) } else { (sv, v) };
        let FloatOp::Cmp { cc, ftz, .. } = op else {
            return None;
        };
        Some((|| {
            let a = self.reg(wa)?;
            let b = self.reg(wb)?;
            let (d0, d1) = (self.new_vreg(RegKind::Pred), self.new_vreg(RegKind::Pred));
            let mut i = Sm50Inst::new(Role::Plain);
            let d0op = i.def(d0, false);
            let d1op = i.def(d1, false);
            let aop = i.use_(a.vreg);
            let bop = i.use_(b.vreg);
            let inst = sm50::Inst::new(Form::HSETP2_R)
                .with(Field::Cmp, cmp_code(cc))
                .with(Field::Ftz, u64::from(ftz))
                .with(Field::Pacc, 7);
            i.piece(
                inst,
                &[
                    (Field::Pd0, d0op, 0),
                    (Field::Pd1, d1op, 0),
                    (Field::Ra, aop, a.offset),
                    (Field::Rb, bop, b.offset),
                ],
            );
            self.push(i);
            self.set_loc(
                p0,
                Loc {
                    vreg: d0,
                    offset: 0,
                },
            );
            self.set_loc(
                p1,
                Loc {
                    vreg: d1,
                    offset: 0,
                },
            );
            Ok(())
        })())
    }

    /// sm_53: one `HADD2`/`HMUL2`/`HFMA2`/`HSETP2` on the low halves.
    fn half_native(&mut self, v: Value, op: FloatOp, args: &[Value]) -> Result<(), LowerError> {
        let srcs: Vec<HSrc> = args
            .iter()
            .map(|&x| {
                let (w, half) = self.half_lane_src(x, true);
                HSrc::Reg(w, if half == 1 { H1_H1 } else { H0_H0 })
            })
            .collect();
        self.half_native_srcs(v, op, &srcs)
    }

    /// One H* instruction for `op` on the registers of `srcs`, each with its half select.
    fn half_native_srcs(&mut self, v: Value, op: FloatOp, srcs: &[HSrc]) -> Result<(), LowerError> {
        let (form, rnd, ftz, sat) = match op {
            FloatOp::Binary {
                op: b,
                rnd,
                ftz,
                sat,
                ..
            } => (
                if b == FloatBinOp::Mul {
                    Form::HMUL2_R
                } else {
                    Form::HADD2_R
                },
                rnd,
                ftz,
                sat,
            ),
            FloatOp::Fma { rnd, ftz, sat, .. } => (Form::HFMA2_R, rnd, ftz, sat),
            FloatOp::Unary { ftz, .. } => (Form::HADD2_R, Round::Rn, ftz, false),
            FloatOp::Cmp { ftz, .. } => (Form::HSETP2_R, Round::Rn, ftz, false),
            _ => return Err(self.unsupported(op.display_name())),
        };
        if rnd != Round::Rn {
            // PTX defines only .rn on f16 arithmetic; the H* instructions have no mode.
            return Err(self.unsupported(format!(
                "{} (f16 rounds to nearest only)",
                op.display_name()
            )));
        }
        let mut inst = sm50::Inst::new(form);
        let mut i = Sm50Inst::new(Role::Plain);
        let mut refs: Vec<(Field, u8, u8)> = Vec::new();
        let d = if form == Form::HSETP2_R {
            let d = self.new_vreg(RegKind::Pred);
            refs.push((Field::Pd0, i.def(d, false), 0));
            inst.set(Field::Pd1, 7);
            inst.set(Field::Pacc, 7);
            d
        } else {
            let d = self.new_vreg(RegKind::B32);
            refs.push((Field::Rd, i.def(d, false), 0));
            d
        };
        let slots = [
            (Field::Ra, Field::Asel),
            (Field::Rb, Field::Bsel),
            (Field::Rc, Field::Csel),
        ];
        for (k, &src) in srcs.iter().enumerate() {
            let (loc, sel) = self.half_src_reg(src)?;
            let r = i.use_(loc.vreg);
            refs.push((slots[k].0, r, loc.offset));
            inst.set(slots[k].1, sel);
        }
        match op {
            FloatOp::Binary {
                op: FloatBinOp::Sub,
                ..
            } => inst.set(Field::Negb, 1),
            FloatOp::Unary { op: u, .. } => {
                // -a + -0 / |a| + -0: exact, a NaN canonical.
                match u {
                    FloatUnOp::Neg => inst.set(Field::Nega, 1),
                    FloatUnOp::Abs => inst.set(Field::Absa, 1),
                }
                inst.set(Field::Rb, RZ);
                inst.set(Field::Bsel, H0_H0);
                inst.set(Field::Negb, 1);
            }
            FloatOp::Cmp { cc, .. } => inst.set(Field::Cmp, cmp_code(cc)),
            _ => {}
        }
        if ftz {
            match form {
                Form::HMUL2_R | Form::HFMA2_R => {
                    inst.set(Field::Fmz, sm50::values::hfma2::fmz::FTZ)
                }
                _ => inst.set(Field::Ftz, 1),
            }
        }
        if sat {
            inst.set(Field::Sat, 1);
        }
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `F2F.<to>.<from>` (IEEE rounding to nearest; `.SAT` when `sat`) of a register.
    fn half_f2f(
        &mut self,
        to: FloatFmt,
        from: FloatFmt,
        s: Loc,
        sat: bool,
        h1: bool,
    ) -> Result<VReg, LowerError> {
        let kind = if to == FloatFmt::F64 {
            RegKind::B64
        } else {
            RegKind::B32
        };
        let inst = sm50::Inst::new(Form::F2F_R)
            .with(Field::Dsz, size_code(to))
            .with(Field::Ssz, size_code(from))
            .with(Field::Rm, rnd_code(Round::Rn))
            .with(Field::Sat, u64::from(sat))
            .with(Field::H1, u64::from(h1));
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let sop = i.use_(s.vreg);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Rb, sop, s.offset)]);
        self.push(i);
        Ok(d)
    }

    /// `inst rd, rb` (an `F2F` from f16) of the f16 value `x` into a new register of `to`,
    /// reading `x` where it lives: the high half of a 32-bit register with `.H1`.
    pub(super) fn half_conv_piece(
        &mut self,
        inst: sm50::Inst,
        x: Value,
        to: Type,
    ) -> Result<VReg, LowerError> {
        let (src, half) = self.half_lane_src(x, true);
        let s = self.reg(src)?;
        let kind = if to.bits() == 64 {
            RegKind::B64
        } else {
            RegKind::B32
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let sop = i.use_(s.vreg);
        i.piece(
            inst.with(Field::H1, half),
            &[(Field::Rd, dop, 0), (Field::Rb, sop, s.offset)],
        );
        self.push(i);
        Ok(d)
    }

    /// sm_50/52: widen to f32 (f64 for fma), operate, narrow (see the module essay).
    fn half_widened(&mut self, v: Value, op: FloatOp, args: &[Value]) -> Result<(), LowerError> {
        let (rnd, ftz, sat) = match op {
            FloatOp::Binary { rnd, ftz, sat, .. } | FloatOp::Fma { rnd, ftz, sat, .. } => {
                (rnd, ftz, sat)
            }
            FloatOp::Unary { ftz, .. } | FloatOp::Cmp { ftz, .. } => (Round::Rn, ftz, false),
            _ => return Err(self.unsupported(op.display_name())),
        };
        if ftz {
            return Err(self.unsupported(format!(
                "{} (.ftz on f16 needs sm_53's half-precision ALU)",
                op.display_name()
            )));
        }
        if rnd != Round::Rn {
            return Err(self.unsupported(format!(
                "{} (f16 rounds to nearest only)",
                op.display_name()
            )));
        }
        let wide = if matches!(op, FloatOp::Fma { .. }) {
            FloatFmt::F64
        } else {
            FloatFmt::F32
        };
        let mut w = Vec::with_capacity(3);
        for &x in args {
            // An H1 lane is read in place: F2F's `.H1` source select.
            let (src, half) = self.half_lane_src(x, true);
            let s = self.reg(src)?;
            w.push(self.half_f2f(wide, FloatFmt::F16, s, false, half == 1)?);
        }
        let wloc = |r: VReg| Loc { vreg: r, offset: 0 };
        // Compute in the wide format (rn, no flush), as a register.
        let mut i = Sm50Inst::new(Role::Plain);
        let kind = if wide == FloatFmt::F64 {
            RegKind::B64
        } else {
            RegKind::B32
        };
        if let FloatOp::Cmp { cc, .. } = op {
            let d = self.new_vreg(RegKind::Pred);
            let dop = i.def(d, false);
            let a = i.use_(w[0]);
            let b = i.use_(w[1]);
            let inst = sm50::Inst::new(Form::FSETP_R)
                .with(Field::Cmp, cmp_code(cc))
                .with(Field::Pd1, 7)
                .with(Field::Pacc, 7);
            i.piece(
                inst,
                &[(Field::Pd0, dop, 0), (Field::Ra, a, 0), (Field::Rb, b, 0)],
            );
            self.push(i);
            self.set_loc(v, wloc(d));
            return Ok(());
        }
        let r = self.new_vreg(kind);
        let dop = i.def(r, false);
        let mut refs = vec![(Field::Rd, dop, 0)];
        let inst = match op {
            FloatOp::Binary { op: b, .. } => {
                let a = i.use_(w[0]);
                let bb = i.use_(w[1]);
                refs.push((Field::Ra, a, 0));
                refs.push((Field::Rb, bb, 0));
                if b == FloatBinOp::Mul {
                    sm50::Inst::new(Form::FMUL_R)
                } else {
                    sm50::Inst::new(Form::FADD_R).with(Field::Negb, u64::from(b == FloatBinOp::Sub))
                }
            }
            FloatOp::Fma { .. } => {
                let a = i.use_(w[0]);
                let bb = i.use_(w[1]);
                let c = i.use_(w[2]);
                refs.push((Field::Ra, a, 0));
                refs.push((Field::Rb, bb, 0));
                refs.push((Field::Rc, c, 0));
                sm50::Inst::new(Form::DFMA_R)
            }
            FloatOp::Unary { op: u, .. } => {
                let a = i.use_(w[0]);
                refs.push((Field::Ra, a, 0));
                // -a + -0 / |a| + -0 (RZ is the B register).
                let inst = sm50::Inst::new(Form::FADD_R)
                    .with(Field::Rb, RZ)
                    .with(Field::Negb, 1);
                match u {
                    FloatUnOp::Neg => inst.with(Field::Nega, 1),
                    FloatUnOp::Abs => inst.with(Field::Absa, 1),
                }
            }
            _ => return Err(self.unsupported(op.display_name())),
        };
        i.piece(inst, &refs);
        self.push(i);
        let d = self.half_f2f(FloatFmt::F16, wide, wloc(r), sat, false)?;
        self.set_loc(v, wloc(d));
        Ok(())
    }
}
