//! PTX floating-point instructions → IR `Float` operations (see [`crate::ir::float`]).
//!
//! In: one checked instruction whose type (or, for `cvt`, one of whose types) is `.f16`,
//! `.f32` or `.f64`. Out: IR values written to the destination registers, or a diagnostic
//! naming the construct. Floats travel as integer bits (`.f32` registers are `i32`), so the
//! operands are read with the carrier type and float immediates become their bits.
//!
//! Choices, where PTX leaves room:
//!
//! * An arithmetic instruction without a rounding modifier rounds to nearest (`rn`).
//! * `mad.rn.f32` etc. are fused (one rounding), like `fma`: PTX defines `mad.f32` on sm_20
//!   and later as "computed to infinite precision, then rounded", and ptxas emits FFMA.
//!   ptxas 11.8 refuses `mad.f32` *without* a rounding modifier for sm_50 ("Rounding
//!   modifier required"); leafold accepts it and reads it as `mad.rn.f32`.
//! * `.ftz` is honoured on `.f32` only (PTX allows it nowhere else); `.sat` on f32 and f64.
//! * `neg`/`abs` are float operations (not sign-bit flips) because they are lowered to
//!   FADD/DADD with operand modifiers, which canonicalise a NaN.
//! * `testp` and `copysign` need no float operation: they are bit tests and bit merges.
//! * `.f16` `add/sub/mul/fma/neg/abs/setp/set` are `Float` operations in `FloatFmt::F16`
//!   (`.ftz` flushes f16 subnormals, `.sat` clamps; `min/max` on f16 are sm_80 PTX and
//!   refused). `.f16x2` ones are split into their two lanes (see [`super::half`]). The
//!   narrow formats (bf16, tf32, e4m3, e5m2) are refused; `cvt` between `.f16` and the
//!   other types is supported.

use super::FnBuilder;
use crate::ir::float::{FloatBinOp, FloatCC, FloatFmt, FloatOp, FloatUnOp, Round};
use crate::ir::{BinaryOp, IntCC, Type, Value, ValueDef};
use crate::ptx::ast::{self, CmpOp, Instruction, Opcode, Rounding, TypeKind};

fn fmt_of(t: ast::Type) -> Option<FloatFmt> {
    match t {
        ast::Type::F16 => Some(FloatFmt::F16),
        ast::Type::F32 => Some(FloatFmt::F32),
        ast::Type::F64 => Some(FloatFmt::F64),
        _ => None,
    }
}

/// The PTX instructions defined on `.f16` (and `.f16x2`) for sm_53.
pub(super) fn half_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Fma
            | Opcode::Neg
            | Opcode::Abs
            | Opcode::Setp
            | Opcode::Set
    )
}

fn is_int(t: ast::Type) -> bool {
    matches!(
        t.kind(),
        TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed
    ) && t.bits() <= 64
}

/// A float rounding modifier (`.rn` etc.) as a [`Round`]; integer ones are `Err`.
fn float_round(r: Rounding) -> Result<Round, Round> {
    match r {
        Rounding::Rn => Ok(Round::Rn),
        Rounding::Rz => Ok(Round::Rz),
        Rounding::Rm => Ok(Round::Rm),
        Rounding::Rp => Ok(Round::Rp),
        Rounding::Rni => Err(Round::Rn),
        Rounding::Rzi => Err(Round::Rz),
        Rounding::Rmi => Err(Round::Rm),
        Rounding::Rpi => Err(Round::Rp),
        // .rna / .rs: refused by the caller (they never reach here as Ok).
        Rounding::Rna | Rounding::Rs => Err(Round::Rn),
    }
}

pub(super) fn float_cc(c: CmpOp) -> Option<FloatCC> {
    Some(match c {
        CmpOp::Eq => FloatCC::Eq,
        CmpOp::Ne => FloatCC::Ne,
        CmpOp::Lt => FloatCC::Lt,
        CmpOp::Le => FloatCC::Le,
        CmpOp::Gt => FloatCC::Gt,
        CmpOp::Ge => FloatCC::Ge,
        CmpOp::Equ => FloatCC::Equ,
        CmpOp::Neu => FloatCC::Neu,
        CmpOp::Ltu => FloatCC::Ltu,
        CmpOp::Leu => FloatCC::Leu,
        CmpOp::Gtu => FloatCC::Gtu,
        CmpOp::Geu => FloatCC::Geu,
        CmpOp::Num => FloatCC::Num,
        CmpOp::Nan => FloatCC::Nan,
        CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs => return None,
    })
}

impl FnBuilder<'_, '_> {
    /// Translate `ins` if it is a floating-point instruction; `None` when it is not (the
    /// integer paths handle it), `Some(result)` when it was handled here.
    pub(super) fn float_instr(&mut self, ins: &Instruction) -> Option<Option<()>> {
        let ty = ins.ty()?;
        let is_float = ty.kind() == TypeKind::Float;
        Some(match ins.opcode {
            Opcode::Cvt if ins.type_mods().any(|t| t.kind() == TypeKind::Float) => {
                self.float_cvt(ins)
            }
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Mad
            | Opcode::Fma
            | Opcode::Min
            | Opcode::Max
            | Opcode::Neg
            | Opcode::Abs
            | Opcode::Setp
            | Opcode::Set
            | Opcode::Testp
            | Opcode::Copysign
                if is_float =>
            {
                if ty == ast::Type::F16x2 {
                    return Some(self.half2_instr(ins));
                }
                let Some(fmt) = fmt_of(ty) else {
                    return Some(
                        self.unsupported(ins, &format!(".{} arithmetic is not lowered", ty.name())),
                    );
                };
                if fmt == FloatFmt::F16 && !half_op(ins.opcode) {
                    return Some(self.unsupported(
                        ins,
                        &format!(
                            "'{}' on .f16 is not supported (PTX has it on sm_80 and later, if at all)",
                            ins.opcode.name()
                        ),
                    ));
                }
                match ins.opcode {
                    Opcode::Setp | Opcode::Set => self.float_setp(ins, fmt),
                    Opcode::Testp => self.float_testp(ins, fmt),
                    Opcode::Copysign => self.float_copysign(ins, fmt),
                    _ => self.float_arith(ins, fmt),
                }
            }
            _ => return None,
        })
    }

    /// `.ftz` (f32 only) and `.sat`, after refusing modifiers the IR does not have.
    pub(super) fn float_flags(&mut self, ins: &Instruction, fmt: FloatFmt) -> Option<(bool, bool)> {
        for f in [
            "relu",
            "NaN",
            "xorsign",
            "abs",
            "approx",
            "full",
            "oob",
            "satfinite",
        ] {
            if ins.has_flag(f) {
                self.unsupported(ins, &format!("'.{f}' is not supported"));
                return None;
            }
        }
        Some((
            ins.has_flag("ftz") && matches!(fmt, FloatFmt::F32 | FloatFmt::F16),
            ins.has_flag("sat"),
        ))
    }

    /// The float rounding mode of an arithmetic instruction (`rn` when absent).
    pub(super) fn arith_round(&mut self, ins: &Instruction) -> Option<Round> {
        match ins.rounding().map(float_round) {
            None => Some(Round::Rn),
            Some(Ok(r)) => Some(r),
            Some(Err(_)) => {
                self.unsupported(ins, "integer rounding on float arithmetic");
                None
            }
        }
    }

    fn float_arith(&mut self, ins: &Instruction, fmt: FloatFmt) -> Option<()> {
        let (ftz, sat) = self.float_flags(ins, fmt)?;
        let rnd = self.arith_round(ins)?;
        let n = match ins.opcode {
            Opcode::Mad | Opcode::Fma => 4,
            Opcode::Neg | Opcode::Abs => 2,
            _ => 3,
        };
        if ins.has_flag("lo") || ins.has_flag("hi") || ins.has_flag("wide") {
            return self.unsupported(ins, "'.lo/.hi/.wide' on a float type");
        }
        let ops = self.ops(ins, n)?;
        let it = ins.ty();
        let carrier = fmt.carrier();
        let mut args: Vec<Value> = Vec::with_capacity(3);
        for op in &ops[1..] {
            args.push(self.read(op, carrier, it)?);
        }
        let op = match ins.opcode {
            Opcode::Mad | Opcode::Fma => FloatOp::Fma { fmt, rnd, ftz, sat },
            Opcode::Neg | Opcode::Abs => FloatOp::Unary {
                op: if ins.opcode == Opcode::Neg {
                    FloatUnOp::Neg
                } else {
                    FloatUnOp::Abs
                },
                fmt,
                ftz,
            },
            opc => FloatOp::Binary {
                op: match opc {
                    Opcode::Add => FloatBinOp::Add,
                    Opcode::Sub => FloatBinOp::Sub,
                    Opcode::Mul => FloatBinOp::Mul,
                    Opcode::Min => FloatBinOp::Min,
                    _ => FloatBinOp::Max,
                },
                fmt,
                rnd,
                ftz,
                sat,
            },
        };
        if sat && matches!(op, FloatOp::Unary { .. }) {
            return self.unsupported(ins, "'.sat' on neg/abs");
        }
        let d = self.ins().float(op, &args);
        // No rounding modifier: PTX lets the code generator contract it (`ir::contract`).
        if ins.rounding().is_none() && matches!(ins.opcode, Opcode::Add | Opcode::Sub | Opcode::Mul)
        {
            if let ValueDef::Result(i, _) = self.func.values[d].def {
                self.func.contractible[i] = true;
            }
        }
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `setp.<cmp>.f32` (with `.and/.or/.xor` and a second predicate) and
    /// `set.<cmp>.<dtype>.f32`.
    fn float_setp(&mut self, ins: &Instruction, fmt: FloatFmt) -> Option<()> {
        let (ftz, _) = self.float_flags(ins, fmt)?;
        let set_true: Option<(Type, i64)> = if ins.opcode == Opcode::Set {
            match ins.type_mods().next() {
                Some(ast::Type::F32) => Some((Type::I32, 0x3f80_0000)),
                Some(ast::Type::U32 | ast::Type::S32 | ast::Type::B32) => Some((Type::I32, -1)),
                Some(ast::Type::F16) => Some((Type::I16, 0x3c00)),
                _ => return self.unsupported(ins, "set writes .u32, .s32, .f32 or .f16"),
            }
        } else {
            None
        };
        let Some(cc) = ins.cmp().and_then(float_cc) else {
            return self.unsupported(ins, "no float comparison");
        };
        if ins.operands.len() != 3 && ins.operands.len() != 4 {
            return self.unsupported(ins, "expected 3 or 4 operands");
        }
        let ops = &ins.operands;
        let it = ins.ty();
        let a = self.read(&ops[1], fmt.carrier(), it)?;
        let b = self.read(&ops[2], fmt.carrier(), it)?;
        let r = self.ins().float(FloatOp::Cmp { cc, fmt, ftz }, &[a, b]);
        self.write_comparison(ins, r, set_true)
    }

    /// `testp.<op>.f32 p, a`: tests on the bits (`x` = `a` without its sign bit).
    fn float_testp(&mut self, ins: &Instruction, fmt: FloatFmt) -> Option<()> {
        let ops = self.ops(ins, 2)?;
        let t = fmt.carrier();
        let a = self.read(&ops[1], t, ins.ty())?;
        let bits = fmt.bits();
        let sign = 1i64.wrapping_shl(bits - 1);
        let mb = match fmt {
            FloatFmt::F16 => 10,
            FloatFmt::F32 => 23,
            FloatFmt::F64 => 52,
        };
        let inf = ((1i64 << (bits - 1 - mb)) - 1) << mb;
        let min_normal = 1i64 << mb;
        let not_sign = self.iconst(t, !sign);
        let x = self.ins().binary(BinaryOp::And, a, not_sign);
        let infv = self.iconst(t, inf);
        // x - lo <u hi - lo tests lo <= x < hi.
        let range = |this: &mut Self, lo: i64, hi: i64| {
            let l = this.iconst(t, lo);
            let w = this.iconst(t, hi - lo);
            let d = this.ins().sub(x, l);
            this.ins().icmp(IntCC::Ult, d, w)
        };
        let r = if ins.has_flag("finite") {
            self.ins().icmp(IntCC::Ult, x, infv)
        } else if ins.has_flag("infinite") {
            self.ins().icmp(IntCC::Eq, x, infv)
        } else if ins.has_flag("number") {
            self.ins().icmp(IntCC::Ule, x, infv)
        } else if ins.has_flag("notanumber") {
            self.ins().icmp(IntCC::Ugt, x, infv)
        } else if ins.has_flag("normal") {
            range(self, min_normal, inf)
        } else if ins.has_flag("subnormal") {
            range(self, 1, min_normal)
        } else {
            return self.unsupported(ins, "unknown testp test");
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, r, false, ops[0].span())
    }

    /// `copysign.f32 d, a, b`: `b` with the sign of `a`.
    fn float_copysign(&mut self, ins: &Instruction, fmt: FloatFmt) -> Option<()> {
        let ops = self.ops(ins, 3)?;
        let t = fmt.carrier();
        let a = self.read(&ops[1], t, ins.ty())?;
        let b = self.read(&ops[2], t, ins.ty())?;
        let sign = 1i64.wrapping_shl(fmt.bits() - 1);
        let s = self.iconst(t, sign);
        let ns = self.iconst(t, !sign);
        let sa = self.ins().binary(BinaryOp::And, a, s);
        let mb = self.ins().binary(BinaryOp::And, b, ns);
        let d = self.ins().binary(BinaryOp::Or, sa, mb);
        let dst = self.dest1(&ops[0])?;
        self.write(dst, d, false, ops[0].span())
    }

    /// `cvt` with a float on either side (seed 6.5, Tables 17 and 18).
    fn float_cvt(&mut self, ins: &Instruction) -> Option<()> {
        let types = ins.type_mod_list();
        let (dt, st) = match types[..] {
            [d, s] => (d, s),
            [d] => (d, d),
            _ => return self.unsupported(ins, "unexpected types"),
        };
        for t in [dt, st] {
            if t.kind() == TypeKind::Float && fmt_of(t).is_none() {
                return self.unsupported(
                    ins,
                    &format!("conversions of .{} are not supported", t.name()),
                );
            }
            if t.kind() != TypeKind::Float && !is_int(t) {
                return self.unsupported(
                    ins,
                    &format!("conversions of .{} are not supported", t.name()),
                );
            }
        }
        for f in ["relu", "satfinite", "pack"] {
            if ins.has_flag(f) {
                return self.unsupported(ins, &format!("'.{f}' is not supported"));
            }
        }
        if matches!(ins.rounding(), Some(Rounding::Rna | Rounding::Rs)) {
            return self.unsupported(ins, "'.rna'/'.rs' rounding is not supported");
        }
        let ops = self.ops(ins, 2)?;
        let ftz = ins.has_flag("ftz");
        let sat = ins.has_flag("sat");
        let rounding = ins.rounding().map(float_round);
        let (Some(sty), Some(dty)) = (super::ir_type(st), super::ir_type(dt)) else {
            return self.unsupported(ins, "operand type not in the IR");
        };
        let a = self.read(&ops[1], sty, Some(st))?;
        let (v, signed) = match (fmt_of(dt), fmt_of(st)) {
            // Integer to float.
            (Some(to), None) => {
                let rnd = match rounding {
                    None => Round::Rn,
                    Some(Ok(r)) => r,
                    Some(Err(_)) => {
                        return self.unsupported(ins, "integer rounding on an int-to-float cvt")
                    }
                };
                let op = FloatOp::FromInt {
                    signed: st.kind() == TypeKind::Signed,
                    from: sty,
                    fmt: to,
                    rnd,
                    ftz: ftz && to == FloatFmt::F32,
                    sat,
                };
                (self.ins().float(op, &[a]), false)
            }
            // Float to integer: saturating, with an integer rounding modifier.
            (None, Some(from)) => {
                let rnd = match rounding {
                    Some(Err(r)) => r,
                    _ => {
                        return self.unsupported(
                            ins,
                            "a float-to-integer cvt needs .rni, .rzi, .rmi or .rpi",
                        )
                    }
                };
                let signed = dt.kind() == TypeKind::Signed;
                let op = FloatOp::ToInt {
                    signed,
                    fmt: from,
                    to: dty,
                    rnd,
                    ftz: ftz && from == FloatFmt::F32,
                };
                (self.ins().float(op, &[a]), signed)
            }
            (Some(to), Some(from)) if to == from => {
                let ftz = ftz && to == FloatFmt::F32;
                let op = match rounding {
                    Some(Err(rnd)) => FloatOp::RoundInt {
                        fmt: to,
                        rnd,
                        ftz,
                        sat,
                    },
                    Some(Ok(_)) => {
                        return self.unsupported(ins, "a same-format cvt takes .rni/.rzi/.rmi/.rpi")
                    }
                    None if !ftz && !sat => {
                        // A plain copy.
                        let dst = self.dest1(&ops[0])?;
                        return self.write(dst, a, false, ops[0].span());
                    }
                    // Flush and/or clamp only: x + (-0.0) is x exactly, canonical for NaN.
                    None => FloatOp::Binary {
                        op: FloatBinOp::Add,
                        fmt: to,
                        rnd: Round::Rn,
                        ftz,
                        sat,
                    },
                };
                let v = if let FloatOp::Binary { .. } = op {
                    let mz = self.iconst(to.carrier(), 1i64.wrapping_shl(to.bits() - 1));
                    self.ins().float(op, &[a, mz])
                } else {
                    self.ins().float(op, &[a])
                };
                (v, false)
            }
            (Some(to), Some(from)) => {
                let rnd = match rounding {
                    None => Round::Rn,
                    Some(Ok(r)) => r,
                    Some(Err(_)) => {
                        return self.unsupported(
                            ins,
                            "integer rounding between two float formats is not supported",
                        )
                    }
                };
                let op = FloatOp::Convert {
                    from,
                    to,
                    rnd,
                    ftz,
                    sat,
                };
                (self.ins().float(op, &[a]), false)
            }
            (None, None) => return self.unsupported(ins, "no float type"),
        };
        let dst = self.dest1(&ops[0])?;
        self.write(dst, v, signed, ops[0].span())
    }
}
