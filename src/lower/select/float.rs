//! Selection of IR `Float` operations (see [`crate::ir::float`]) into SM50 instructions.
//!
//! In: one `InstData::Float` whose operands are already lowered. Out: one [`Sm50Inst`]
//! (sometimes two pieces) defining the result, or a [`LowerError`] naming what has no
//! selection. A child module of `select` (it uses the `Lowerer`'s private helpers).
//!
//! | IR                          | f32                               | f64                  |
//! |-----------------------------|-----------------------------------|----------------------|
//! | fadd / fsub                 | `FADD` (`-B` for sub)             | `DADD`               |
//! | fmul                        | `FMUL`                            | `DMUL`               |
//! | ffma                        | `FFMA`                            | `DFMA`               |
//! | fmin / fmax                 | `FMNMX a, b, PT` / `!PT`          | `DMNMX`              |
//! | fdiv (IEEE)                 | a sequence, see `select/fdiv.rs`  | likewise             |
//! | fsqrt (IEEE)                | not selected (`sqrt.rn` is `Approx`) | `select/fdiv.rs`  |
//! | fneg / fabs                 | `FADD -a, -RZ` / `FADD abs(a), -RZ` | `DADD` likewise    |
//! | fcmp                        | `FSETP.cc.AND p, PT, a, b, PT`    | `DSETP`              |
//! | i2f / f2i / f2f / frint     | `I2F` / `F2I` (+ `I2I.SAT` to 8/16 bits) / `F2F` / `F2F` with `.ROUND`…`.TRUNC` |
//!
//! These are the shapes ptxas emits (checked with the oracle: `neg.f32` is
//! `FADD R, -R, -RZ`, `abs.f64` is `DADD R, -RZ, |R|`, `cvt.sat.f32.f32` is
//! `FADD.SAT R, R, -RZ`, `cvt.rzi.s8.f32` is `F2I.S32` + `I2I.S8.S32.SAT`).
//!
//! # Constant operands
//!
//! The B operand is a constant-bank word (kernel parameters: `c[0x0][..]`), an immediate when
//! the float fits the 20-bit immediate form (its top 20 bits: f32 with the low 12 bits zero,
//! f64 with the low 44 bits zero; so 1.5, -2.5, ±0, ±inf and the canonical NaN are
//! immediates), or, for any other f32/f64 constant, a literal in the kernel's pool in constant
//! bank 2 (`c[0x2][off]`, `Lowerer::literal`: the raw bits, so negative values, -0.0, NaN
//! payloads and denormals are exact); `fadd`/`fsub`/`fmul.rn` (no `.sat` on add) take a
//! full 32-bit f32 immediate in `FADD32I`/`FMUL32I` instead, as ptxas. FFMA/DFMA read a
//! constant addend from its bank (the `CC` form, `FFMA d, a, b, c[..][..]`) when B is a
//! register; when both B and C are constants, C goes to a register (as ptxas does; an
//! `FFMA32I` would cost the same). A constant A operand (no constant form) swaps into B:
//! add, mul, min, max and fma's factors commute exactly; `k - x` is `-x + k`; `k < x` is
//! `x > k`. These are ptxas 11.8's shapes and its pool layout (checked with the oracle).
//!
//! `.sat` on an f64 `cvt` result is `DMNMX` with +0 (`!PT`) then with 1 (`PT`), as ptxas; `.sat` on an int-to-f16 `cvt` is `I2F.F32` then `F2F.F16.F32.SAT`. Not selected: other `.sat` on f64 and f16 results (no SM50
//! form has it).

use super::{Class, Lowerer, Src};
use crate::ir::float::{FloatBinOp, FloatCC, FloatFmt, FloatOp, FloatUnOp, Round};
use crate::ir::{InstData, Type, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::sm50::{self, Field, Form};

/// The `rnd` field of FADD/FMUL/FFMA/DADD/DMUL/DFMA/I2F/F2F: `-`, `.RM`, `.RP`, `.RZ`.
pub(super) fn rnd_code(r: Round) -> u64 {
    match r {
        Round::Rn => 0,
        Round::Rm => 1,
        Round::Rp => 2,
        Round::Rz => 3,
    }
}

/// The `cmp` field of FSETP/DSETP.
pub(super) fn cmp_code(cc: FloatCC) -> u64 {
    match cc {
        FloatCC::Lt => 1,
        FloatCC::Eq => 2,
        FloatCC::Le => 3,
        FloatCC::Gt => 4,
        FloatCC::Ne => 5,
        FloatCC::Ge => 6,
        FloatCC::Num => 7,
        FloatCC::Nan => 8,
        FloatCC::Ltu => 9,
        FloatCC::Equ => 10,
        FloatCC::Leu => 11,
        FloatCC::Gtu => 12,
        FloatCC::Neu => 13,
        FloatCC::Geu => 14,
    }
}

/// The condition that holds for `(b, a)` when `cc` holds for `(a, b)`.
fn swapped_cc(cc: FloatCC) -> FloatCC {
    match cc {
        FloatCC::Lt => FloatCC::Gt,
        FloatCC::Gt => FloatCC::Lt,
        FloatCC::Le => FloatCC::Ge,
        FloatCC::Ge => FloatCC::Le,
        FloatCC::Ltu => FloatCC::Gtu,
        FloatCC::Gtu => FloatCC::Ltu,
        FloatCC::Leu => FloatCC::Geu,
        FloatCC::Geu => FloatCC::Leu,
        FloatCC::Eq | FloatCC::Ne | FloatCC::Num | FloatCC::Nan | FloatCC::Equ | FloatCC::Neu => cc,
    }
}

/// Whether the 20-bit float immediate (the top 20 bits of the f32 or f64) holds the constant
/// `k` (raw bits) exactly: its low 12 (f32) or 44 (f64) bits are zero.
fn imm20_exact(k: i64, fmt: FloatFmt) -> bool {
    match fmt {
        FloatFmt::F32 => k as u32 & 0xfff == 0,
        FloatFmt::F64 => k as u64 & ((1 << 44) - 1) == 0,
        FloatFmt::F16 => false,
    }
}

/// The `dsz`/`ssz` field of I2F/F2I/F2F.
pub(super) fn size_code(fmt: FloatFmt) -> u64 {
    match fmt {
        FloatFmt::F16 => 1,
        FloatFmt::F32 => 2,
        FloatFmt::F64 => 3,
    }
}

/// The `st`/`dt` code of an integer type for I2F/F2I/I2I: size in bits 0-1, sign in bit 2.
fn int_code(ty: Type, signed: bool) -> u64 {
    let size = match ty.bits() {
        8 => 0,
        16 => 1,
        32 => 2,
        _ => 3,
    };
    size | if signed { 4 } else { 0 }
}

impl Lowerer<'_> {
    // Long by design: the dispatch over `FloatOp`, one short arm per operation and format.
    pub(super) fn lower_float(
        &mut self,
        v: Value,
        op: FloatOp,
        args: &[Value],
    ) -> Result<(), LowerError> {
        // SM50's f64 instructions have no .FTZ (PTX has no f64 .ftz either).
        let f64_ftz = match op {
            FloatOp::Binary { fmt, ftz, .. }
            | FloatOp::Fma { fmt, ftz, .. }
            | FloatOp::Unary { fmt, ftz, .. }
            | FloatOp::Cmp { fmt, ftz, .. }
            | FloatOp::Sqrt { fmt, ftz, .. }
            | FloatOp::RoundInt { fmt, ftz, .. } => fmt == FloatFmt::F64 && ftz,
            _ => false,
        };
        if f64_ftz {
            return Err(self.unsupported(".ftz on f64"));
        }
        // f16 arithmetic and comparisons: `select/half.rs` (HADD2.. on sm_53, else via f32).
        if let Some(r) = self.lower_half(v, op, args) {
            return r;
        }
        match op {
            FloatOp::Binary {
                op: bop,
                fmt,
                rnd,
                ftz,
                sat,
            } => {
                // `cvt.sat.f64.f64` is `x + -0.0` with .sat in the IR: the clamp alone (x + -0
                // is x, a NaN becomes +0 in the clamp anyway), as ptxas.
                if sat && fmt == FloatFmt::F64 && bop == FloatBinOp::Add {
                    if let Class::Imm(k) = self.class(args[1]) {
                        let s = self.reg(args[0])?;
                        if k as u64 == 1 << 63 && s.offset == 0 {
                            return self.dmnmx_sat(v, s.vreg);
                        }
                    }
                }
                self.no_wide_sat(fmt, sat)?;
                if bop == FloatBinOp::Div {
                    if fmt == FloatFmt::F16 || sat {
                        return Err(self.unsupported(op.display_name()));
                    }
                    return self.lower_fdiv(v, fmt, rnd, ftz, args);
                }
                // A constant A operand goes in the B slot, the only one with constant forms:
                // the operands of add, mul, min and max swap; `k - x` is `-x + k`.
                let (a, b, neg_a) = if self.const_first(args[0], args[1]) {
                    (args[1], args[0], bop == FloatBinOp::Sub)
                } else {
                    (args[0], args[1], false)
                };
                let bop = if neg_a { FloatBinOp::Add } else { bop };
                let f64 = fmt == FloatFmt::F64;
                let (forms, neg_b) = match (bop, f64) {
                    (FloatBinOp::Add | FloatBinOp::Sub, false) => (
                        (Form::FADD_R, Form::FADD_C, Form::FADD_I),
                        bop == FloatBinOp::Sub,
                    ),
                    (FloatBinOp::Add | FloatBinOp::Sub, true) => (
                        (Form::DADD_R, Form::DADD_C, Form::DADD_I),
                        bop == FloatBinOp::Sub,
                    ),
                    (FloatBinOp::Mul, false) => ((Form::FMUL_R, Form::FMUL_C, Form::FMUL_I), false),
                    (FloatBinOp::Mul, true) => ((Form::DMUL_R, Form::DMUL_C, Form::DMUL_I), false),
                    (_, false) => ((Form::FMNMX_R, Form::FMNMX_C, Form::FMNMX_I), false),
                    (_, true) => ((Form::DMNMX_R, Form::DMNMX_C, Form::DMNMX_I), false),
                };
                let minmax = matches!(bop, FloatBinOp::Min | FloatBinOp::Max);
                // A full 32-bit immediate: FADD32I / FMUL32I (they have no rounding field,
                // and FADD32I no .SAT), as ptxas uses them.
                let sat_ok = !sat || bop == FloatBinOp::Mul;
                if fmt == FloatFmt::F32 && !minmax && rnd == Round::Rn && sat_ok {
                    if let Class::Imm(k) = self.class(b) {
                        if k as u32 & 0xfff != 0 {
                            return self.float_imm32(v, bop, a, neg_a, k as u32, ftz, sat);
                        }
                    }
                }
                if minmax && sat {
                    return Err(self.unsupported("min/max with .sat"));
                }
                self.float_ab(v, fmt, a, Some(b), forms, |inst| {
                    if neg_b {
                        inst.set(Field::Negb, 1);
                    }
                    if neg_a {
                        inst.set(Field::Nega, 1);
                    }
                    if minmax {
                        // PT picks the minimum, !PT the maximum.
                        inst.set(Field::Paccn, u64::from(bop == FloatBinOp::Max));
                    } else {
                        inst.set(Field::Rnd, rnd_code(rnd));
                    }
                    set_ftz(inst, ftz);
                    if sat {
                        inst.set(Field::Sat, 1);
                    }
                })
            }
            FloatOp::Fma { fmt, rnd, ftz, sat } => {
                self.no_wide_sat(fmt, sat)?;
                self.lower_ffma(v, fmt, rnd, ftz, sat, args)
            }
            FloatOp::Unary { op: uop, fmt, ftz } => {
                // -a + -0 and |a| + -0: exact, and a NaN comes out canonical (as in eval).
                let forms = if fmt == FloatFmt::F64 {
                    (Form::DADD_R, Form::DADD_C, Form::DADD_I)
                } else {
                    (Form::FADD_R, Form::FADD_C, Form::FADD_I)
                };
                self.float_ab(v, fmt, args[0], None, forms, |inst| {
                    inst.set(Field::Negb, 1);
                    match uop {
                        FloatUnOp::Neg => inst.set(Field::Nega, 1),
                        FloatUnOp::Abs => inst.set(Field::Absa, 1),
                    }
                    set_ftz(inst, ftz);
                })
            }
            FloatOp::Cmp { cc, fmt, ftz } => self.lower_fcmp(v, cc, fmt, ftz, args),
            FloatOp::FromInt {
                signed,
                from,
                fmt,
                rnd,
                sat,
                ..
            } => {
                if sat && fmt == FloatFmt::F16 {
                    // As ptxas 11.8 for 32/64-bit sources: I2F.F32 with the rounding, then
                    // F2F.F16.F32 with it and .SAT (ptxas converts 8/16-bit sources straight to
                    // f16 and clamps with F2F.F16.F16.PASS.SAT; through f32 is as exact).
                    // Exact despite two roundings: an integer other than 0 and 1 is at least 2
                    // or at most -1 in f32 under every rounding, so the clamp gives 1 or +0.
                    let inst = sm50::Inst::new(Form::I2F_R)
                        .with(Field::Dsz, size_code(FloatFmt::F32))
                        .with(Field::St, int_code(from, signed))
                        .with(Field::Rnd, rnd_code(rnd));
                    let t = self.conv_piece(inst, args[0], FloatFmt::F32.carrier())?;
                    let inst = sm50::Inst::new(Form::F2F_R)
                        .with(Field::Dsz, size_code(FloatFmt::F16))
                        .with(Field::Ssz, size_code(FloatFmt::F32))
                        .with(Field::Rm, rnd_code(rnd))
                        .with(Field::Sat, 1);
                    let d = self.conv_from_vreg(inst, t, RegKind::B32)?;
                    self.set_loc(v, Loc { vreg: d, offset: 0 });
                    return Ok(());
                }
                // A byte or halfword of a word: I2F with the select, on the word
                // (`select/bytesel.rs`).
                if !sat
                    && fmt != FloatFmt::F16
                    && self.i2f_select(v, args[0], (from, signed), fmt, rnd)?
                {
                    return Ok(());
                }
                let inst = sm50::Inst::new(Form::I2F_R)
                    .with(Field::Dsz, size_code(fmt))
                    .with(Field::St, int_code(from, signed))
                    .with(Field::Rnd, rnd_code(rnd));
                let d = self.conv_piece(inst, args[0], fmt.carrier())?;
                if sat && fmt == FloatFmt::F64 {
                    return self.dmnmx_sat(v, d);
                }
                if sat {
                    return self.fadd_sat(v, d);
                }
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                Ok(())
            }
            FloatOp::ToInt {
                signed,
                fmt,
                to,
                rnd,
                ftz,
            } => {
                // F2I's rounding field: ROUND (rn), FLOOR, CEIL, TRUNC.
                let wide = to.bits() == 64;
                let inter = if wide { Type::I64 } else { Type::I32 };
                let mut inst = sm50::Inst::new(Form::F2I_R)
                    .with(Field::Dt, int_code(inter, signed))
                    .with(Field::Ssz, size_code(fmt))
                    .with(Field::Rnd, rnd_code(rnd));
                if ftz {
                    inst.set(Field::Ftz, 1);
                }
                let d = self.conv_piece(inst, args[0], inter)?;
                if to.bits() < 32 {
                    // Saturate the 32-bit result into the narrow range, as ptxas does.
                    let inst = sm50::Inst::new(Form::I2I_R)
                        .with(Field::Dt, int_code(to, signed))
                        .with(Field::St, int_code(Type::I32, signed))
                        .with(Field::Sat, 1);
                    let n = self.conv_from_vreg(inst, d, RegKind::B32)?;
                    self.set_loc(v, Loc { vreg: n, offset: 0 });
                } else {
                    self.set_loc(v, Loc { vreg: d, offset: 0 });
                }
                Ok(())
            }
            FloatOp::Convert {
                from,
                to,
                rnd,
                ftz,
                sat,
            } => {
                let dsat = sat && to == FloatFmt::F64;
                if !dsat {
                    self.no_wide_sat(to, sat)?;
                }
                let mut inst = sm50::Inst::new(Form::F2F_R)
                    .with(Field::Dsz, size_code(to))
                    .with(Field::Ssz, size_code(from))
                    .with(Field::Rm, rnd_code(rnd));
                set_ftz(&mut inst, ftz);
                if sat && !dsat {
                    inst.set(Field::Sat, 1);
                }
                let d = if from == FloatFmt::F16 {
                    // An f16 lane read in place (`.H1` for a high half; `select/half.rs`).
                    self.half_conv_piece(inst, args[0], to.carrier())?
                } else {
                    self.conv_piece(inst, args[0], to.carrier())?
                };
                if dsat {
                    return self.dmnmx_sat(v, d);
                }
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                Ok(())
            }
            FloatOp::Sqrt { fmt, rnd, ftz } => match fmt {
                FloatFmt::F64 => self.lower_dsqrt(v, rnd, args[0]),
                FloatFmt::F32 => self.lower_fsqrt(v, rnd, ftz, args[0]),
                _ => Err(self.unsupported(op.display_name())),
            },
            FloatOp::RoundInt { fmt, rnd, ftz, sat } => {
                if fmt == FloatFmt::F16 {
                    return self.lower_frint_f16(v, rnd, ftz, sat, args[0]);
                }
                let dsat = sat && fmt == FloatFmt::F64;
                if !dsat {
                    self.no_wide_sat(fmt, sat)?;
                }
                // .ROUND .FLOOR .CEIL .TRUNC are rm = 0..3 with ri set.
                let mut inst = sm50::Inst::new(Form::F2F_R)
                    .with(Field::Dsz, size_code(fmt))
                    .with(Field::Ssz, size_code(fmt))
                    .with(Field::Ri, 1)
                    .with(Field::Rm, rnd_code(rnd));
                set_ftz(&mut inst, ftz);
                if sat && !dsat {
                    inst.set(Field::Sat, 1);
                }
                let d = self.conv_piece(inst, args[0], fmt.carrier())?;
                if dsat {
                    return self.dmnmx_sat(v, d);
                }
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                Ok(())
            }
            // MUFU-based approximations are selected by `approx.rs` before this is reached.
            FloatOp::Approx { .. } => Err(self.unsupported(op.display_name())),
        }
    }

    /// `cvt.{rni,rzi,rmi,rpi}{.sat}.f16.f16` as ptxas 11.8 builds it: widen to f32
    /// (`F2F.F32.F16`, exact), round there (`F2F.F32.F32.ROUND/TRUNC/FLOOR/CEIL`, with
    /// `.SAT`), narrow back (`F2F.F16.F32`, exact: a rounded f16 value, or 0 and 1, is an
    /// f16). ptxas rejects `.ftz` on this conversion and `ir::build` drops it; were it set,
    /// it is refused here, since widened f16 subnormals are normal f32 values that a flush
    /// would not touch.
    fn lower_frint_f16(
        &mut self,
        v: Value,
        rnd: Round,
        ftz: bool,
        sat: bool,
        a: Value,
    ) -> Result<(), LowerError> {
        if ftz {
            return Err(self.unsupported(".ftz on an f16 round-to-integer cvt"));
        }
        let f2f = |to: FloatFmt, from: FloatFmt| {
            sm50::Inst::new(Form::F2F_R)
                .with(Field::Dsz, size_code(to))
                .with(Field::Ssz, size_code(from))
        };
        let wide = self.conv_piece(f2f(FloatFmt::F32, FloatFmt::F16), a, Type::I32)?;
        let mut round = f2f(FloatFmt::F32, FloatFmt::F32)
            .with(Field::Ri, 1)
            .with(Field::Rm, rnd_code(rnd));
        if sat {
            round.set(Field::Sat, 1);
        }
        let rounded = self.conv_from_vreg(round, wide, RegKind::B32)?;
        let d = self.conv_from_vreg(f2f(FloatFmt::F16, FloatFmt::F32), rounded, RegKind::B32)?;
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn no_wide_sat(&self, fmt: FloatFmt, sat: bool) -> Result<(), LowerError> {
        if sat && fmt != FloatFmt::F32 {
            return Err(self.unsupported(format!(".sat on {}", fmt.name())));
        }
        Ok(())
    }

    /// The B operand of a float instruction: a constant word (a kernel parameter), an
    /// immediate that the 20-bit float immediate holds exactly, any other f32/f64 constant
    /// as a literal in constant bank 2, or a register.
    fn float_src(&mut self, v: Value, fmt: FloatFmt) -> Result<Src, LowerError> {
        Ok(match self.class(v) {
            Class::Cbuf(b, o) => Src::Cbuf(b, o),
            Class::Imm(k) if imm20_exact(k, fmt) => Src::Imm(k),
            _ => self.const_word(v, fmt)?,
        })
    }

    /// `v` as an operand that a constant-bank slot can hold (FFMA/DFMA's C): a kernel
    /// parameter's word, a literal in constant bank 2 for an f32/f64 constant, or a register.
    fn const_word(&mut self, v: Value, fmt: FloatFmt) -> Result<Src, LowerError> {
        Ok(match (self.class(v), fmt) {
            (Class::Cbuf(b, o), _) => Src::Cbuf(b, o),
            (Class::Imm(k), FloatFmt::F32) => Src::Lit(self.literal(u64::from(k as u32), 4)?),
            (Class::Imm(k), FloatFmt::F64) => Src::Lit(self.literal(k as u64, 8)?),
            _ => Src::Reg(self.reg(v)?),
        })
    }

    /// Whether `a` is a constant (immediate or constant-bank word) and `b` is not: then
    /// `b` should take the A slot, which only a register can fill.
    fn const_first(&self, a: Value, b: Value) -> bool {
        !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg)
    }

    /// `op rd, ra, B` (B = `b`, or RZ when `None`), fields set by `setup`.
    pub(super) fn float_ab(
        &mut self,
        v: Value,
        fmt: FloatFmt,
        a: Value,
        b: Option<Value>,
        forms: (Form, Form, Form),
        setup: impl FnOnce(&mut sm50::Inst),
    ) -> Result<(), LowerError> {
        let al = self.reg(a)?;
        let bs = match b {
            Some(b) => Some(self.float_src(b, fmt)?),
            None => None,
        };
        let kind = if fmt == FloatFmt::F64 {
            RegKind::B64
        } else {
            RegKind::B32
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, al.offset)];
        let mut inst = match bs {
            None => sm50::Inst::new(forms.0),
            Some(s) => with_float_b(&mut i, forms, s, fmt, &mut refs),
        };
        setup(&mut inst);
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `FADD32I` / `FMUL32I rd, ra, imm` (sub: `FADD32I` with `-imm`; `neg_a`: `-ra`, for a
    /// `k - x` whose operands were swapped).
    #[allow(clippy::too_many_arguments)]
    fn float_imm32(
        &mut self,
        v: Value,
        bop: FloatBinOp,
        a: Value,
        neg_a: bool,
        imm: u32,
        ftz: bool,
        sat: bool,
    ) -> Result<(), LowerError> {
        let al = self.reg(a)?;
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        let inst = if bop == FloatBinOp::Mul {
            sm50::Inst::new(Form::FMUL32I)
                .with(Field::Imm, u64::from(imm))
                .with(Field::Fmz, u64::from(ftz))
                .with(Field::Sat, u64::from(sat))
        } else {
            sm50::Inst::new(Form::FADD32I)
                .with(Field::Imm, u64::from(imm))
                .with(Field::Negb, u64::from(bop == FloatBinOp::Sub))
                .with(Field::Nega, u64::from(neg_a))
                .with(Field::Ftz, u64::from(ftz))
        };
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, aop, al.offset)]);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn lower_ffma(
        &mut self,
        v: Value,
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
        sat: bool,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let f64 = fmt == FloatFmt::F64;
        // A negated operand (`neg x`, from `ir::contract`'s `sub` or NVVM's `neg` + `fma`) is
        // FFMA's operand negation, as ptxas folds it: (-x)*y = x*(-y) = -(x*y) exactly, so
        // either factor's sign goes in the B negation bit, the addend's in C's. A `neg.ftz`
        // folds only into an `.ftz` FFMA (which flushes the subnormal input the same way).
        let strip = |v: Value| match self.def_of(v) {
            Some(InstData::Float {
                op:
                    FloatOp::Unary {
                        op: FloatUnOp::Neg,
                        fmt: nf,
                        ftz: nz,
                    },
                args: inner,
            }) if *nf == fmt && (!*nz || ftz) => (inner[0], true),
            _ => (v, false),
        };
        let ((a0, na), (b0, nb), (c, neg_c)) = (strip(args[0]), strip(args[1]), strip(args[2]));
        let neg_product = na != nb;
        // A constant multiplicand goes in the B slot (a*b = b*a exactly).
        let (a, b) = if self.const_first(a0, b0) {
            (b0, a0)
        } else {
            (a0, b0)
        };
        let al = self.reg(a)?;
        let kind = if f64 { RegKind::B64 } else { RegKind::B32 };
        let forms = if f64 {
            (Form::DFMA_R, Form::DFMA_C, Form::DFMA_I)
        } else {
            (Form::FFMA_R, Form::FFMA_C, Form::FFMA_I)
        };
        // With B in a register, a constant addend is read from its bank (the CC form,
        // `FFMA d, a, b, c[..][..]`); otherwise B takes the constant form and C a register.
        let b_reg = matches!(self.class(b), Class::Reg);
        let c_const = !matches!(self.class(c), Class::Reg);
        let (bs, cs) = if b_reg && c_const {
            let bl = self.reg(b)?;
            (Src::Reg(bl), self.const_word(c, fmt)?)
        } else {
            (self.float_src(b, fmt)?, Src::Reg(self.reg(c)?))
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, al.offset)];
        let mut inst = match (bs, cs) {
            (Src::Reg(bl), Src::Cbuf(_, o) | Src::Lit(o)) => {
                let bop = i.use_(bl.vreg);
                refs.push((Field::Rb, bop, bl.offset));
                let bank = match cs {
                    Src::Cbuf(b, _) => u64::from(b),
                    _ => 2,
                };
                let form = if f64 { Form::DFMA_CC } else { Form::FFMA_CC };
                sm50::Inst::new(form)
                    .with(Field::Cbk, bank)
                    .with(Field::Cbo, u64::from(o / 4))
            }
            (_, cs) => {
                let cl = match cs {
                    Src::Reg(cl) => cl,
                    _ => self.reg(c)?,
                };
                let cop = i.use_(cl.vreg);
                refs.push((Field::Rc, cop, cl.offset));
                with_float_b(&mut i, forms, bs, fmt, &mut refs)
            }
        };
        inst.set(Field::Rnd, rnd_code(rnd));
        if neg_product {
            inst.set(Field::Negb, 1);
        }
        if neg_c {
            inst.set(Field::Negc, 1);
        }
        if !f64 {
            if ftz {
                inst.set(Field::Fmz, 1);
            }
            if sat {
                inst.set(Field::Sat, 1);
            }
        }
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    pub(super) fn lower_fcmp(
        &mut self,
        v: Value,
        cc: FloatCC,
        fmt: FloatFmt,
        ftz: bool,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let f64 = fmt == FloatFmt::F64;
        // `k < x` is `x > k`: the constant goes in the B slot.
        let (a, b, cc) = if self.const_first(args[0], args[1]) {
            (args[1], args[0], swapped_cc(cc))
        } else {
            (args[0], args[1], cc)
        };
        let al = self.reg(a)?;
        let bs = self.float_src(b, fmt)?;
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        let mut refs = vec![(Field::Pd0, dop, 0), (Field::Ra, aop, al.offset)];
        let forms = if f64 {
            (Form::DSETP_R, Form::DSETP_C, Form::DSETP_I)
        } else {
            (Form::FSETP_R, Form::FSETP_C, Form::FSETP_I)
        };
        let mut inst = with_float_b(&mut i, forms, bs, fmt, &mut refs);
        inst.set(Field::Cmp, cmp_code(cc));
        if ftz && !f64 {
            inst.set(Field::Ftz, 1);
        }
        self.take_accumulator(&mut i, &mut inst, &mut refs);
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A one-source conversion `inst rd, rb` of IR value `src` into a new `to` register.
    pub(super) fn conv_piece(
        &mut self,
        inst: sm50::Inst,
        src: Value,
        to: Type,
    ) -> Result<crate::machinst::VReg, LowerError> {
        let s = self.reg(src)?;
        Ok(self.conv_at(inst, s, to))
    }

    /// `inst rd, rb` from the register at `s` into a new register for a `to` value.
    pub(super) fn conv_at(&mut self, inst: sm50::Inst, s: Loc, to: Type) -> crate::machinst::VReg {
        let kind = if to.bits() == 64 {
            RegKind::B64
        } else {
            RegKind::B32
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let sop = i.use_(s.vreg);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Rb, sop, s.offset)]);
        self.push(i);
        d
    }

    /// `inst rd, rb` from a register (not an IR value) into a new register of `kind`.
    pub(super) fn conv_from_vreg(
        &mut self,
        inst: sm50::Inst,
        s: crate::machinst::VReg,
        kind: RegKind,
    ) -> Result<crate::machinst::VReg, LowerError> {
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let sop = i.use_(s);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Rb, sop, 0)]);
        self.push(i);
        Ok(d)
    }

    /// `FADD.SAT v, s, -RZ`: clamp an f32 in a register to [+0, 1].
    /// `.sat` on an f64 result, as ptxas 11.8 writes it (F2F has no usable .SAT at f64):
    /// `DMNMX t, s, RZ, !PT` (the maximum with +0: NaN and -0 give +0) and then
    /// `DMNMX d, t, 1, PT` (the minimum with 1.0).
    fn dmnmx_sat(&mut self, v: Value, s: crate::machinst::VReg) -> Result<(), LowerError> {
        let t = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(t, false);
        let sop = i.use_(s);
        let inst = sm50::Inst::new(Form::DMNMX_R).with(Field::Paccn, 1);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, sop, 0)]);
        self.push(i);
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let top = i.use_(t);
        let inst = sm50::Inst::new(Form::DMNMX_I).with(Field::ImmF64i, 1f64.to_bits() >> 44);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, top, 0)]);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn fadd_sat(&mut self, v: Value, s: crate::machinst::VReg) -> Result<(), LowerError> {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let sop = i.use_(s);
        let inst = sm50::Inst::new(Form::FADD_R)
            .with(Field::Negb, 1)
            .with(Field::Sat, 1);
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, sop, 0)]);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }
}

fn set_ftz(inst: &mut sm50::Inst, ftz: bool) {
    if !ftz {
        return;
    }
    // FMUL/FFMA spell it in the two-bit `fmz` field; the others have a flag.
    if matches!(
        inst.form,
        Form::FMUL_R | Form::FMUL_C | Form::FMUL_I | Form::FFMA_R | Form::FFMA_C | Form::FFMA_I
    ) {
        inst.set(Field::Fmz, 1);
    } else {
        inst.set(Field::Ftz, 1);
    }
}

/// The instruction in the form that takes `s` as its B operand.
fn with_float_b(
    inst: &mut Sm50Inst,
    forms: (Form, Form, Form),
    s: Src,
    fmt: FloatFmt,
    refs: &mut Vec<(Field, u8, u8)>,
) -> sm50::Inst {
    match s {
        Src::Reg(l) => {
            let op = inst.use_(l.vreg);
            refs.push((Field::Rb, op, l.offset));
            sm50::Inst::new(forms.0)
        }
        Src::Cbuf(b, o) => sm50::Inst::new(forms.1)
            .with(Field::Cbk, u64::from(b))
            .with(Field::Cbo, u64::from(o / 4)),
        Src::Lit(o) => sm50::Inst::new(forms.1)
            .with(Field::Cbk, 2)
            .with(Field::Cbo, u64::from(o / 4)),
        Src::Imm(k) => {
            if fmt == FloatFmt::F64 {
                sm50::Inst::new(forms.2).with(Field::ImmF64i, (k as u64) >> 44)
            } else {
                sm50::Inst::new(forms.2).with(Field::ImmF32i, u64::from(k as u32 >> 12))
            }
        }
    }
}
