//! `.bf16`/`.bf16x2` arithmetic and conversions, `cvt` packing two f32 into `.f16x2`/`.bf16x2`,
//! `tanh.approx` and `ex2.approx` on half formats: sm_75..sm_90 PTX that Maxwell has no
//! instruction for (issue 26), built from IR operations Maxwell has.
//!
//! In: one PTX instruction. Out: a sequence of existing IR operations (no new `InstData`), so
//! `ir::eval`, selection and the simulator need nothing new. A `.bf16` value is an `i16`
//! holding the bits, a `.bf16x2` an `i32` (lane 0 low), like `.f16`/`.f16x2`.
//!
//! # Exact bf16 arithmetic (`add sub mul fma`, `.rn`, `.relu`)
//!
//! A bf16 is the top half of an f32, so widening is a shift. Every operation is
//! `fma(a, b, c)` rounded once to bf16 (`add` is `fma(a, 1, b)`, `sub` `fma(a, 1, -b)`, `mul`
//! `fma(a, b, -0)`), computed without double rounding:
//!
//! 1. `A, B, C` in f64 (exact); `p = A·B` is exact (8-bit significands, f32 exponents).
//! 2. `s = p + C` rounded to nearest, and its exact error `e` by Knuth's two-sum (six f64
//!    additions; exact because nothing overflows or underflows in f64 here).
//! 3. Round to odd at 53 bits: `z = add.rz(p, C)`, with its lowest bit set when `e ≠ 0`.
//! 4. Round to odd at 24 bits: `u = cvt.rz.f32.f64(z)`, lowest bit set when `u ≠ z`.
//! 5. Round to nearest even at 8 bits on the f32 bits (below). Round-to-odd at two or more
//!    bits beyond the target precision followed by one rounding to nearest equals a single
//!    rounding of the exact value (Boldo–Melquiond), so the result is the correctly rounded
//!    `fma`, subnormals included (no `.ftz`: bf16 arithmetic keeps subnormals).
//!
//! NaN results are the canonical bf16 NaN `0x7fff`; `.relu` turns a negative result into
//! `+0` (NaN stays canonical NaN). Cost: 3 `F2F.F64.F32`, `DMUL`, 7 `DADD`, 2 `DSETP`,
//! 2 `F2F` and the integer rounding: 37 SASS instructions for `.bf16`, 79 for `.bf16x2`
//! (measured; f64 on purpose: it is the shortest exact route we found; Maxwell's f64 rate
//! is 1/32, so this is slow, not wrong).
//!
//! `neg`/`abs` flip or clear the sign bit(s): one `LOP` for either width. `min`/`max` (`.NaN`) compare the widened values
//! with the f32 `min`/`max` (exact: the result is an operand) and narrow again; with `.NaN`
//! a NaN operand gives `0x7fff`.
//!
//! # Conversions
//!
//! f32 → bf16 works on the bits: `.rn` adds `0x7fff + bit16` and shifts (ties to even;
//! overflow carries into the exponent and gives infinity), `.rz` shifts, `.rm`/`.rp` add
//! `0xffff` first when the rounding goes away from zero; NaN gives `0x7fff`; `.relu` clamps
//! negatives to `+0`. bf16 → f32 is a shift. `cvt.rn{.relu}.bf16x2.f32 d, a, b` and
//! `cvt.rn{.relu}.f16x2.f32 d, a, b` put `a` in the upper lane and `b` in the lower.
//!
//! # Approximate functions
//!
//! `tanh.approx.f32`: `sign(x) · (1 − 2 / (2^(2·log2(e)·|x|) + 1))` with `MUFU.EX2` and
//! `MUFU.RCP`, and `x` itself for `|x| < 2^-5` (where the formula cancels and `x` is
//! already within `x²/3 < 2^-11.5` relative). Accuracy contract (checked by
//! `tests/compile_bf16.rs` against the exact function): relative error below 2^-10.9 (the
//! ISA's bound for `tanh.approx.f32`), plus one unit in the last place of the result format.
//! ±∞ give ±1, NaN gives NaN. Cost: 12 SASS instructions. `ex2.approx` and `tanh.approx` on
//! `.f16`/`.f16x2`/`.bf16`/`.bf16x2` widen each lane to f32 (exact), use the f32 function,
//! and round to the lane's format to nearest: within one ulp of the half format plus the
//! f32 function's error.

use super::FnBuilder;
use crate::ir::float::{FloatBinOp, FloatCC, FloatFmt, FloatOp, Round};
use crate::ir::{BinaryOp, IntCC, Type, UnaryOp, Value};
use crate::mufu::Approx;
use crate::ptx::ast::{self, Instruction, Opcode, Operand, Rounding, TypeKind};

/// The half formats handled here.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Half {
    F16,
    Bf16,
}

const BF16_NAN: i64 = 0x7fff;

impl FnBuilder<'_, '_> {
    /// The instructions this module lowers; `None` for any other.
    pub(super) fn bf16_instr(&mut self, ins: &Instruction) -> Option<Option<()>> {
        let ty = ins.ty()?;
        let bf = matches!(ty, ast::Type::Bf16 | ast::Type::Bf16x2);
        let half = matches!(ty, ast::Type::F16 | ast::Type::F16x2) || bf;
        Some(match ins.opcode {
            Opcode::Tanh if ty == ast::Type::F32 || half => self.approx_half(ins, ty),
            Opcode::Ex2 if half => self.approx_half(ins, ty),
            Opcode::Cvt => {
                let types = ins.type_mod_list();
                match types[..] {
                    [d, ast::Type::F32] if matches!(d, ast::Type::Bf16 | ast::Type::Bf16x2) => {
                        self.cvt_to_half(ins, Half::Bf16, d == ast::Type::Bf16x2)
                    }
                    [ast::Type::F16x2, ast::Type::F32] => self.cvt_to_half(ins, Half::F16, true),
                    [ast::Type::F32, ast::Type::Bf16] => self.cvt_from_bf16(ins),
                    [ast::Type::Bf16, s] if s != ast::Type::Bf16x2 => self.cvt_any_to_bf16(ins, s),
                    [d, ast::Type::Bf16] if d != ast::Type::Bf16x2 => self.cvt_bf16_to_any(ins, d),
                    _ if types
                        .iter()
                        .any(|t| matches!(t, ast::Type::Bf16 | ast::Type::Bf16x2)) =>
                    {
                        self.unsupported(ins, "this bf16 conversion is not emulated")
                    }
                    _ => return None,
                }
            }
            Opcode::Setp | Opcode::Set if bf => self.bf16_compare(ins, ty == ast::Type::Bf16x2),
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Fma
            | Opcode::Neg
            | Opcode::Abs
            | Opcode::Min
            | Opcode::Max
                if bf =>
            {
                self.bf16_arith(ins, ty == ast::Type::Bf16x2)
            }
            _ => return None,
        })
    }

    /// Lanes of a half (1, as `i16`) or half-pair (2, from an `i32`) value.
    fn lanes(&mut self, x: Value, pair: bool) -> Vec<Value> {
        if !pair {
            return vec![x];
        }
        let lo = self.ins().trunc(Type::I16, x);
        let sixteen = self.ins().iconst(Type::I32, 16);
        let up = self.ins().binary(BinaryOp::ShrU, x, sixteen);
        let hi = self.ins().trunc(Type::I16, up);
        vec![lo, hi]
    }

    /// The inverse of [`Self::lanes`].
    fn join(&mut self, lanes: &[Value]) -> Value {
        if lanes.len() == 1 {
            return lanes[0];
        }
        let lo = self.ins().zext(Type::I32, lanes[0]);
        let hi = self.ins().zext(Type::I32, lanes[1]);
        let sixteen = self.ins().iconst(Type::I32, 16);
        let hi = self.ins().shl(hi, sixteen);
        self.ins().binary(BinaryOp::Or, lo, hi)
    }

    /// A bf16 (`i16`) widened to the f32 bits (`i32`).
    fn bf16_to_f32(&mut self, h: Value) -> Value {
        let w = self.ins().zext(Type::I32, h);
        let sixteen = self.ins().iconst(Type::I32, 16);
        self.ins().shl(w, sixteen)
    }

    /// The f32 bits `u` rounded to a bf16 (`i16`) by `rnd`; NaN gives `0x7fff`.
    fn f32_to_bf16(&mut self, u: Value, rnd: Round, relu: bool) -> Value {
        let c = |this: &mut Self, x: i64| this.ins().iconst(Type::I32, x);
        let sixteen = c(self, 16);
        let zero = c(self, 0);
        let rounded = match rnd {
            Round::Rz => u,
            Round::Rn => {
                let b16 = self.ins().binary(BinaryOp::ShrU, u, sixteen);
                let one = c(self, 1);
                let lsb = self.ins().binary(BinaryOp::And, b16, one);
                let k = c(self, 0x7fff);
                let bias = self.ins().add(k, lsb);
                self.ins().add(u, bias)
            }
            Round::Rm | Round::Rp => {
                // Away from zero (magnitude up) when the sign matches the direction.
                let neg = self.ins().icmp(IntCC::Slt, u, zero);
                let away = if rnd == Round::Rm {
                    neg
                } else {
                    self.ins().icmp(IntCC::Sge, u, zero)
                };
                let k = c(self, 0xffff);
                let bias = self.ins().select(away, k, zero);
                self.ins().add(u, bias)
            }
        };
        let mut h = self.ins().binary(BinaryOp::ShrU, rounded, sixteen);
        if relu {
            let neg = self.ins().icmp(IntCC::Slt, u, zero);
            h = self.ins().select(neg, zero, h);
        }
        let mag_mask = c(self, 0x7fff_ffff);
        let mag = self.ins().binary(BinaryOp::And, u, mag_mask);
        let inf = c(self, 0x7f80_0000);
        let nan = self.ins().icmp(IntCC::Ugt, mag, inf);
        let qnan = c(self, BF16_NAN);
        let h = self.ins().select(nan, qnan, h);
        self.ins().trunc(Type::I16, h)
    }

    fn cvt_to_half(&mut self, ins: &Instruction, fmt: Half, pair: bool) -> Option<()> {
        for f in ["ftz", "sat", "satfinite"] {
            if ins.has_flag(f) {
                return self.unsupported(ins, &format!("'.{f}' is not supported here"));
            }
        }
        let relu = ins.has_flag("relu");
        let rnd = match ins.rounding() {
            Some(Rounding::Rn) => Round::Rn,
            Some(Rounding::Rz) if !pair && fmt == Half::Bf16 => Round::Rz,
            Some(Rounding::Rm) if !pair && fmt == Half::Bf16 => Round::Rm,
            Some(Rounding::Rp) if !pair && fmt == Half::Bf16 => Round::Rp,
            _ => return self.unsupported(ins, "needs a supported rounding modifier (.rn)"),
        };
        let ops = self.ops(ins, if pair { 3 } else { 2 })?;
        // `d, a, b`: `a` to the upper lane, `b` to the lower.
        let mut lanes = Vec::new();
        for op in ops[1..].iter().rev() {
            let x = self.read(op, Type::I32, Some(ast::Type::F32))?;
            let h = match fmt {
                Half::Bf16 => self.f32_to_bf16(x, rnd, relu),
                Half::F16 => {
                    let op = FloatOp::Convert {
                        from: FloatFmt::F32,
                        to: FloatFmt::F16,
                        rnd,
                        ftz: false,
                        sat: false,
                    };
                    let h = self.ins().float(op, &[x]);
                    if relu {
                        self.relu_f16(h)
                    } else {
                        h
                    }
                }
            };
            lanes.push(h);
        }
        let d = self.join(&lanes);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `.relu` on an f16 (`i16`): negative (sign set, not NaN) → `+0`, NaN → `0x7fff`.
    fn relu_f16(&mut self, h: Value) -> Value {
        let w = self.ins().zext(Type::I32, h);
        let c = |this: &mut Self, x: i64| this.ins().iconst(Type::I32, x);
        let sign = c(self, 0x8000);
        let zero = c(self, 0);
        let s = self.ins().binary(BinaryOp::And, w, sign);
        let neg = self.ins().icmp(IntCC::Ne, s, zero);
        let mut r = self.ins().select(neg, zero, w);
        let mask = c(self, 0x7fff);
        let mag = self.ins().binary(BinaryOp::And, w, mask);
        let inf = c(self, 0x7c00);
        let nan = self.ins().icmp(IntCC::Ugt, mag, inf);
        let qnan = c(self, 0x7fff);
        r = self.ins().select(nan, qnan, r);
        self.ins().trunc(Type::I16, r)
    }

    fn cvt_from_bf16(&mut self, ins: &Instruction) -> Option<()> {
        if ins.rounding().is_some() || ins.has_flag("ftz") || ins.has_flag("sat") {
            return self.unsupported(ins, "cvt.f32.bf16 is exact: no modifiers");
        }
        let ops = self.ops(ins, 2)?;
        let h = self.read(&ops[1], Type::I16, Some(ast::Type::B16))?;
        let d = self.bf16_to_f32(h);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn bf16_arith(&mut self, ins: &Instruction, pair: bool) -> Option<()> {
        for f in ["ftz", "sat", "xorsign", "abs", "oob"] {
            if ins.has_flag(f) {
                return self.unsupported(ins, &format!("'.{f}' is not supported on .bf16"));
            }
        }
        if !matches!(ins.rounding(), None | Some(Rounding::Rn)) {
            return self.unsupported(ins, "bf16 arithmetic rounds to nearest (.rn) only");
        }
        let relu = ins.has_flag("relu");
        let n = match ins.opcode {
            Opcode::Fma => 4,
            Opcode::Neg | Opcode::Abs => 2,
            _ => 3,
        };
        let ops = self.ops(ins, n)?;
        let (carrier, itype) = if pair {
            (Type::I32, ast::Type::B32)
        } else {
            (Type::I16, ast::Type::B16)
        };
        if matches!(ins.opcode, Opcode::Neg | Opcode::Abs) {
            // On the sign bits of both lanes at once: one LOP.
            let x = self.read(&ops[1], carrier, Some(itype))?;
            let (sign, mag) = if pair {
                (0x8000_8000u32 as i32 as i64, 0x7fff_7fff)
            } else {
                (0x8000u16 as i16 as i64, 0x7fff)
            };
            let d = if ins.opcode == Opcode::Neg {
                let s = self.ins().iconst(carrier, sign);
                self.ins().binary(BinaryOp::Xor, x, s)
            } else {
                let m = self.ins().iconst(carrier, mag);
                self.ins().binary(BinaryOp::And, x, m)
            };
            let dst = self.dest1(&ops[0])?;
            return self.write(dst, d, false, ops[0].span());
        }
        let mut args = Vec::new();
        for op in &ops[1..] {
            let v = self.read(op, carrier, Some(itype))?;
            args.push(self.lanes(v, pair));
        }
        let mut out = Vec::new();
        for k in 0..args[0].len() {
            let x: Vec<Value> = args.iter().map(|a| a[k]).collect();
            let r = match ins.opcode {
                Opcode::Min | Opcode::Max => self.bf16_minmax(ins, x[0], x[1], relu),
                op => {
                    let one = self.ins().iconst(Type::I16, 0x3f80);
                    let neg0 = self.ins().iconst(Type::I16, 0x8000u16 as i16 as i64);
                    let (a, b, c) = match op {
                        Opcode::Add => (x[0], one, x[1]),
                        Opcode::Sub => {
                            let w = self.ins().zext(Type::I32, x[1]);
                            let s = self.ins().iconst(Type::I32, 0x8000);
                            let nb = self.ins().binary(BinaryOp::Xor, w, s);
                            let nb = self.ins().trunc(Type::I16, nb);
                            (x[0], one, nb)
                        }
                        Opcode::Mul => (x[0], x[1], neg0),
                        _ => (x[0], x[1], x[2]),
                    };
                    self.bf16_fma(a, b, c, relu)
                }
            };
            out.push(r);
        }
        let d = self.join(&out);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    fn bf16_minmax(&mut self, ins: &Instruction, a: Value, b: Value, relu: bool) -> Value {
        let fa = self.bf16_to_f32(a);
        let fb = self.bf16_to_f32(b);
        let op = FloatOp::Binary {
            op: if ins.opcode == Opcode::Min {
                FloatBinOp::Min
            } else {
                FloatBinOp::Max
            },
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let m = self.ins().float(op, &[fa, fb]);
        let sixteen = self.ins().iconst(Type::I32, 16);
        let mut r = self.ins().binary(BinaryOp::ShrU, m, sixteen);
        let zero = self.ins().iconst(Type::I32, 0);
        if relu {
            let neg = self.ins().icmp(IntCC::Slt, m, zero);
            r = self.ins().select(neg, zero, r);
        }
        if ins.has_flag("NaN") {
            let cmp = FloatOp::Cmp {
                cc: FloatCC::Nan,
                fmt: FloatFmt::F32,
                ftz: false,
            };
            let any_nan = self.ins().float(cmp, &[fa, fb]);
            let qnan = self.ins().iconst(Type::I32, BF16_NAN);
            r = self.ins().select(any_nan, qnan, r);
        }
        // A NaN from min/max (both operands NaN) is f32's canonical NaN: its top half is
        // 0x7fff already.
        self.ins().trunc(Type::I16, r)
    }

    /// `fma(a, b, c)` on bf16 lanes (`i16`), rounded once to nearest even (module essay).
    pub(super) fn bf16_fma(&mut self, a: Value, b: Value, c: Value, relu: bool) -> Value {
        let widen = |this: &mut Self, h: Value| {
            let f = this.bf16_to_f32(h);
            let op = FloatOp::Convert {
                from: FloatFmt::F32,
                to: FloatFmt::F64,
                rnd: Round::Rn,
                ftz: false,
                sat: false,
            };
            this.ins().float(op, &[f])
        };
        let bin = |this: &mut Self, op: FloatBinOp, rnd: Round, x: Value, y: Value| {
            let op = FloatOp::Binary {
                op,
                fmt: FloatFmt::F64,
                rnd,
                ftz: false,
                sat: false,
            };
            this.ins().float(op, &[x, y])
        };
        let (a, b, c) = (widen(self, a), widen(self, b), widen(self, c));
        let p = bin(self, FloatBinOp::Mul, Round::Rn, a, b);
        // Two-sum: s + e == p + c exactly.
        let s = bin(self, FloatBinOp::Add, Round::Rn, p, c);
        let bb = bin(self, FloatBinOp::Sub, Round::Rn, s, p);
        let t = bin(self, FloatBinOp::Sub, Round::Rn, s, bb);
        let e1 = bin(self, FloatBinOp::Sub, Round::Rn, p, t);
        let e2 = bin(self, FloatBinOp::Sub, Round::Rn, c, bb);
        let e = bin(self, FloatBinOp::Add, Round::Rn, e1, e2);
        let zero = self.ins().iconst(Type::I64, 0);
        let ne = FloatOp::Cmp {
            cc: FloatCC::Ne,
            fmt: FloatFmt::F64,
            ftz: false,
        };
        let inexact = self.ins().float(ne, &[e, zero]);
        // Round to odd at 53 bits.
        let z = bin(self, FloatBinOp::Add, Round::Rz, p, c);
        let one64 = self.ins().iconst(Type::I64, 1);
        let zo = self.ins().binary(BinaryOp::Or, z, one64);
        let z = self.ins().select(inexact, zo, z);
        // Round to odd at 24 bits.
        let u = self.f64_to_f32_odd(z);
        self.f32_to_bf16(u, Round::Rn, relu)
    }

    /// `setp`/`set` on `.bf16`/`.bf16x2`: the widened lanes compared as f32 (exact). `setp`
    /// on `.bf16x2` writes lane 0 to `p` and lane 1 to `q`; `set` writes 1.0 (in the
    /// destination format) or all ones per lane, or 0.
    fn bf16_compare(&mut self, ins: &Instruction, pair: bool) -> Option<()> {
        if ins.has_flag("ftz") {
            return self.unsupported(ins, "'.ftz' on .bf16 comparisons");
        }
        let Some(cc) = ins.cmp().and_then(super::float::float_cc) else {
            return self.unsupported(ins, "no float comparison");
        };
        let ops = &ins.operands;
        if ops.len() != 3 && ops.len() != 4 {
            return self.unsupported(ins, "expected 3 or 4 operands");
        }
        // set: the value of "true" per lane (or for the whole destination) and its type.
        let set_true: Option<(Type, i64)> = if ins.opcode == Opcode::Set {
            match (ins.type_mods().next(), pair) {
                (Some(ast::Type::Bf16x2), true) => Some((Type::I16, 0x3f80)),
                (Some(ast::Type::U32 | ast::Type::S32 | ast::Type::B32), true) => {
                    Some((Type::I16, 0xffff))
                }
                (Some(ast::Type::Bf16), false) => Some((Type::I16, 0x3f80)),
                (Some(ast::Type::F32), false) => Some((Type::I32, 0x3f80_0000)),
                (Some(ast::Type::U32 | ast::Type::S32 | ast::Type::B32), false) => {
                    Some((Type::I32, -1))
                }
                _ => return self.unsupported(ins, "unsupported destination type for set"),
            }
        } else {
            None
        };
        let (carrier, itype) = if pair {
            (Type::I32, ast::Type::B32)
        } else {
            (Type::I16, ast::Type::B16)
        };
        let a = self.read(&ops[1], carrier, Some(itype))?;
        let b = self.read(&ops[2], carrier, Some(itype))?;
        let (a, b) = (self.lanes(a, pair), self.lanes(b, pair));
        let mut t = Vec::new();
        for k in 0..a.len() {
            let fa = self.bf16_to_f32(a[k]);
            let fb = self.bf16_to_f32(b[k]);
            let cmp = FloatOp::Cmp {
                cc,
                fmt: FloatFmt::F32,
                ftz: false,
            };
            t.push(self.ins().float(cmp, &[fa, fb]));
        }
        // Scalar setp with p|q: q is the negated comparison (combined with c likewise).
        if !pair {
            let n = self.ins().unary(UnaryOp::Not, t[0]);
            t.push(n);
        }
        self.combine_with_pred(ins, ops, &mut t)?;
        match (&ops[0], set_true) {
            (Operand::PredPair(p, q), None) => {
                let pv = self.reg_var(p)?;
                let qv = self.reg_var(q)?;
                self.write(Some(pv), t[0], false, p.span)?;
                self.write(Some(qv), t[1], false, q.span)
            }
            (d, None) if !pair => {
                let dst = self.dest1(d)?;
                self.write(dst, t[0], false, d.span())
            }
            (d, Some((ty, one))) if !matches!(d, Operand::PredPair(..)) => {
                let dst = self.dest1(d)?;
                let one = self.ins().iconst(ty, one);
                let zero = self.ins().iconst(ty, 0);
                let n = if pair { 2 } else { 1 };
                let mut lanes = Vec::new();
                for &r in &t[..n] {
                    lanes.push(self.ins().select(r, one, zero));
                }
                let r = self.join(&lanes);
                self.write(dst, r, false, d.span())
            }
            _ => self.unsupported(ins, "setp on .bf16x2 writes a predicate pair p|q"),
        }
    }

    /// The rounding of a conversion to bf16: one of `.rn .rz .rm .rp`.
    fn bf16_round(&mut self, ins: &Instruction) -> Option<Round> {
        match ins.rounding() {
            Some(Rounding::Rn) => Some(Round::Rn),
            Some(Rounding::Rz) => Some(Round::Rz),
            Some(Rounding::Rm) => Some(Round::Rm),
            Some(Rounding::Rp) => Some(Round::Rp),
            _ => {
                self.unsupported(ins, "conversion to .bf16 needs .rn, .rz, .rm or .rp");
                None
            }
        }
    }

    /// f64 bits rounded to odd at f32 precision (`i32` bits): exact for the later rounding to
    /// bf16 in any mode (module essay).
    fn f64_to_f32_odd(&mut self, z: Value) -> Value {
        let narrow = FloatOp::Convert {
            from: FloatFmt::F64,
            to: FloatFmt::F32,
            rnd: Round::Rz,
            ftz: false,
            sat: false,
        };
        let u = self.ins().float(narrow, &[z]);
        let back = FloatOp::Convert {
            from: FloatFmt::F32,
            to: FloatFmt::F64,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let ub = self.ins().float(back, &[u]);
        let ne = FloatOp::Cmp {
            cc: FloatCC::Ne,
            fmt: FloatFmt::F64,
            ftz: false,
        };
        let inexact = self.ins().float(ne, &[ub, z]);
        let one = self.ins().iconst(Type::I32, 1);
        let uo = self.ins().binary(BinaryOp::Or, u, one);
        self.ins().select(inexact, uo, u)
    }

    /// `cvt.rnd{.relu}.bf16.stype d, a` for `.f16`, `.f64` and integer sources: the source
    /// rounded to odd at f32 precision (f16 widens exactly; integers go through f64, 64-bit
    /// ones with a sticky bit from converting back; f64 by [`Self::f64_to_f32_odd`]), then
    /// rounded to bf16 once by `rnd`.
    fn cvt_any_to_bf16(&mut self, ins: &Instruction, st: ast::Type) -> Option<()> {
        if ins.has_flag("ftz") || ins.has_flag("sat") || ins.has_flag("satfinite") {
            return self.unsupported(ins, "'.ftz/.sat/.satfinite' on a conversion to .bf16");
        }
        let rnd = self.bf16_round(ins)?;
        let relu = ins.has_flag("relu");
        let ops = self.ops(ins, 2)?;
        let u = match st {
            ast::Type::F16 => {
                let h = self.read(&ops[1], Type::I16, Some(st))?;
                let op = FloatOp::Convert {
                    from: FloatFmt::F16,
                    to: FloatFmt::F32,
                    rnd: Round::Rn,
                    ftz: false,
                    sat: false,
                };
                self.ins().float(op, &[h])
            }
            ast::Type::F64 => {
                let z = self.read(&ops[1], Type::I64, Some(st))?;
                self.f64_to_f32_odd(z)
            }
            t if matches!(t.kind(), TypeKind::Signed | TypeKind::Unsigned) && t.bits() <= 64 => {
                let Some(ity) = super::ir_type(t) else {
                    return self.unsupported(ins, "operand type not in the IR");
                };
                let signed = t.kind() == TypeKind::Signed;
                let x = self.read(&ops[1], ity, Some(t))?;
                let to_f64 = FloatOp::FromInt {
                    signed,
                    from: ity,
                    fmt: FloatFmt::F64,
                    rnd: Round::Rz,
                    ftz: false,
                    sat: false,
                };
                let mut z = self.ins().float(to_f64, &[x]);
                if t.bits() == 64 {
                    // Sticky bit: the conversion was inexact when converting back differs.
                    let back = FloatOp::ToInt {
                        signed,
                        fmt: FloatFmt::F64,
                        to: ity,
                        rnd: Round::Rz,
                        ftz: false,
                    };
                    let xb = self.ins().float(back, &[z]);
                    let inexact = self.ins().icmp(IntCC::Ne, xb, x);
                    let one = self.ins().iconst(Type::I64, 1);
                    let zo = self.ins().binary(BinaryOp::Or, z, one);
                    z = self.ins().select(inexact, zo, z);
                }
                self.f64_to_f32_odd(z)
            }
            _ => return self.unsupported(ins, "this source type is not converted to .bf16"),
        };
        let h = self.f32_to_bf16(u, rnd, relu);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, h, false, ops[0].span())
    }

    /// `cvt.dtype.bf16 d, a` for `.f16`, `.f64` and integer destinations: the bf16 widened
    /// to f32 (exact), then the f32 conversion with the instruction's rounding (one rounding).
    fn cvt_bf16_to_any(&mut self, ins: &Instruction, dt: ast::Type) -> Option<()> {
        if ins.has_flag("sat") || ins.has_flag("relu") || ins.has_flag("satfinite") {
            return self.unsupported(ins, "'.sat/.relu/.satfinite' on a conversion from .bf16");
        }
        let ftz = ins.has_flag("ftz");
        let ops = self.ops(ins, 2)?;
        let h = self.read(&ops[1], Type::I16, Some(ast::Type::B16))?;
        let f = self.bf16_to_f32(h);
        let (d, signed) = match dt {
            ast::Type::F16 | ast::Type::F64 => {
                let (to, rnd) = if dt == ast::Type::F16 {
                    let rnd = match ins.rounding() {
                        Some(Rounding::Rn) => Round::Rn,
                        Some(Rounding::Rz) => Round::Rz,
                        Some(Rounding::Rm) => Round::Rm,
                        Some(Rounding::Rp) => Round::Rp,
                        _ => return self.unsupported(ins, "cvt.f16.bf16 needs .rn/.rz/.rm/.rp"),
                    };
                    (FloatFmt::F16, rnd)
                } else {
                    (FloatFmt::F64, Round::Rn)
                };
                let op = FloatOp::Convert {
                    from: FloatFmt::F32,
                    to,
                    rnd,
                    ftz,
                    sat: false,
                };
                (self.ins().float(op, &[f]), false)
            }
            t if matches!(t.kind(), TypeKind::Signed | TypeKind::Unsigned) && t.bits() <= 64 => {
                let rnd = match ins.rounding() {
                    Some(Rounding::Rni) => Round::Rn,
                    Some(Rounding::Rzi) => Round::Rz,
                    Some(Rounding::Rmi) => Round::Rm,
                    Some(Rounding::Rpi) => Round::Rp,
                    _ => {
                        return self.unsupported(ins, "cvt to an integer needs .rni/.rzi/.rmi/.rpi")
                    }
                };
                let Some(ity) = super::ir_type(t) else {
                    return self.unsupported(ins, "operand type not in the IR");
                };
                let signed = t.kind() == TypeKind::Signed;
                let op = FloatOp::ToInt {
                    signed,
                    fmt: FloatFmt::F32,
                    to: ity,
                    rnd,
                    ftz,
                };
                (self.ins().float(op, &[f]), signed)
            }
            _ => return self.unsupported(ins, "this destination type is not converted from .bf16"),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, signed, ops[0].span())
    }

    /// `tanh.approx` (f32 and half formats) and `ex2.approx` on half formats.
    fn approx_half(&mut self, ins: &Instruction, ty: ast::Type) -> Option<()> {
        if ins.rounding().is_some() {
            return self.unsupported(ins, "a rounding modifier on an approximate function");
        }
        if !ins.has_flag("approx") {
            return self.unsupported(ins, "only the .approx form exists");
        }
        let (fmt, pair) = match ty {
            ast::Type::F32 => (None, false),
            ast::Type::F16 => (Some(Half::F16), false),
            ast::Type::F16x2 => (Some(Half::F16), true),
            ast::Type::Bf16 => (Some(Half::Bf16), false),
            _ => (Some(Half::Bf16), true),
        };
        let ops = self.ops(ins, 2)?;
        let (carrier, itype) = match (fmt, pair) {
            (None, _) => (Type::I32, ast::Type::F32),
            (Some(_), true) => (Type::I32, ast::Type::B32),
            (Some(_), false) => (Type::I16, ast::Type::B16),
        };
        let x = self.read(&ops[1], carrier, Some(itype))?;
        let tanh = ins.opcode == Opcode::Tanh;
        let d = match fmt {
            None => self.tanh_f32(x),
            Some(h) => {
                let lanes = self.lanes(x, pair);
                let mut out = Vec::new();
                for l in lanes {
                    let f = match h {
                        Half::Bf16 => self.bf16_to_f32(l),
                        Half::F16 => {
                            let op = FloatOp::Convert {
                                from: FloatFmt::F16,
                                to: FloatFmt::F32,
                                rnd: Round::Rn,
                                ftz: false,
                                sat: false,
                            };
                            self.ins().float(op, &[l])
                        }
                    };
                    let y = if tanh {
                        self.tanh_f32(f)
                    } else {
                        let op = FloatOp::Approx {
                            func: Approx::Ex2,
                            ftz: true,
                        };
                        self.ins().float(op, &[f])
                    };
                    let r = match h {
                        Half::Bf16 => self.f32_to_bf16(y, Round::Rn, false),
                        Half::F16 => {
                            let op = FloatOp::Convert {
                                from: FloatFmt::F32,
                                to: FloatFmt::F16,
                                rnd: Round::Rn,
                                ftz: false,
                                sat: false,
                            };
                            self.ins().float(op, &[y])
                        }
                    };
                    out.push(r);
                }
                self.join(&out)
            }
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `tanh(x)` on f32 bits (module essay).
    fn tanh_f32(&mut self, x: Value) -> Value {
        let c = |this: &mut Self, v: f32| this.ins().iconst(Type::I32, v.to_bits() as i64);
        let f32op = |op| FloatOp::Binary {
            op,
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let mag = self.ins().iconst(Type::I32, 0x7fff_ffff);
        let ax = self.ins().binary(BinaryOp::And, x, mag);
        let k = c(self, 2.0 * std::f32::consts::LOG2_E);
        let t = self.ins().float(f32op(FloatBinOp::Mul), &[ax, k]);
        let ex2 = FloatOp::Approx {
            func: Approx::Ex2,
            ftz: true,
        };
        let e = self.ins().float(ex2, &[t]);
        let one = c(self, 1.0);
        let d = self.ins().float(f32op(FloatBinOp::Add), &[e, one]);
        let rcp = FloatOp::Approx {
            func: Approx::Rcp,
            ftz: true,
        };
        let r = self.ins().float(rcp, &[d]);
        let m2 = c(self, -2.0);
        let fma = FloatOp::Fma {
            fmt: FloatFmt::F32,
            rnd: Round::Rn,
            ftz: false,
            sat: false,
        };
        let y = self.ins().float(fma, &[r, m2, one]);
        let sign = self.ins().iconst(Type::I32, 0x8000_0000u32 as i32 as i64);
        let s = self.ins().binary(BinaryOp::And, x, sign);
        let y = self.ins().binary(BinaryOp::Or, y, s);
        let small = c(self, 1.0 / 32.0);
        let lt = FloatOp::Cmp {
            cc: FloatCC::Lt,
            fmt: FloatFmt::F32,
            ftz: false,
        };
        let is_small = self.ins().float(lt, &[ax, small]);
        self.ins().select(is_small, x, y)
    }
}
