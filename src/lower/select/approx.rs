//! The f32 functions of the special function unit: `FloatOp::Approx` → `MUFU` (after `RRO`
//! for `SIN`/`COS`/`EX2`, as sm_5x requires), wrapped in ptxas 11.8's scaling steps for the
//! non-`.ftz` forms.
//!
//! In: an `Approx` float operation (see [`crate::mufu::approx`], whose model defines the
//! result). Out: one multi-piece [`Sm50Inst`]. The shapes (constants as `MOV32I`/f32
//! immediates where ptxas reads its constant bank 2):
//!
//! ```text
//! rcp.approx.ftz        MUFU.RCP d, a
//! rcp.approx            FSETP.GEU p1, |a|, 2^-126 ; FSETP.GT p0, |a|, 2^126
//!                       MOV32I s, 1.0 ; @!p1 MOV32I s, 2^24 ; @p0 MOV32I s, 0.25
//!                       FMUL t, a, s ; MUFU.RCP t, t ; FMUL d, t, s
//! sqrt/rsqrt/lg2.approx FSETP.GEU p, |a|, 2^-126 ; t = a ; @!p FMUL t, a, 2^24
//!                       (MUFU.RSQ + MUFU.RCP | MUFU.RSQ | MUFU.LG2) d, t
//!                       @!p FMUL d, d, 2^-12 | @!p FMUL d, d, 2^12 | @!p FADD d, d, -24
//! (.ftz: the bare MUFU ops)
//! sin/cos.approx        RRO.SINCOS t, a ; MUFU.SIN/COS d, t
//! ex2.approx            FSETP.GEU p, a, -126 ; t = a ; @!p FMUL t, a, 0.5
//!                       RRO.EX2 t, t ; MUFU.EX2 d, t ; @!p FMUL d, d, d
//! div.approx.ftz        MUFU.RCP t, b ; FMUL.FTZ d, t, a
//! div.approx            FSETP.GEU p, |b|, 2^-126 ; scale a and b by 2^24 when !p
//!                       MUFU.RCP t, b' ; FMUL d, t, a'
//! div.full              as div.approx, and both scaled by 1/4 first when |b| > 2^126
//! sqrt.rn               (IEEE, correctly rounded; inline with `--no-subroutines`, else
//!                       `select::fdiv`'s fast path and this in its slow path)
//!                       t = x < 2^-64 ? x·2^64 : x
//!                       s = t·RSQ(t), one FFMA Newton step, then two exact FFMA residual
//!                       tests: s -= 1 ulp if t < s², s += 1 ulp if t - s² > s·ulp(s);
//!                       s·2^-32 if scaled; ±0, +inf kept, negatives and NaN → NaN
//! sqrt.rz/.rm/.rp       (`FloatOp::Sqrt` f32) the same truncated s; rz/rm keep it (√ ≥ 0),
//!                       rp adds 1 ulp if t - s² != 0; .ftz (any mode): a subnormal x gives
//!                       the zero of its sign
//! ```

use super::Lowerer;
use crate::ir::float::Round;
use crate::ir::Value;
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::{OpSpec, RegKind};
use crate::mufu::{Approx, Func};
use crate::sm50::{self, Field, Form};
use sm50::values::fsetp::cmp::{EQ, GEU, GT, LT, NE};

/// f32 bits as the 20-bit `f32i` immediate (the low 12 mantissa bits must be zero).
fn f32i(x: f32) -> u64 {
    let b = x.to_bits();
    debug_assert_eq!(b & 0xfff, 0, "{x} is not an f32i immediate");
    u64::from(((b >> 12) & 0x7ffff) | ((b >> 31) << 19))
}

const MIN_NORMAL: f32 = f32::MIN_POSITIVE;
const TWO_24: f32 = 16_777_216.0;
const TWO_126: f32 = 8.507_059e37;
const TWO_64: f32 = 18_446_744_073_709_551_616.0;
const TWO_M64: f32 = 1.0 / 18_446_744_073_709_551_616.0;
const TWO_M32: f32 = 1.0 / 4_294_967_296.0;

/// Pieces over operand numbers (all words 0).
pub(super) struct Seq {
    pub(super) i: Sm50Inst,
}

impl Seq {
    /// Make every reference of the sequence built so far to operand `op` read word `word` of
    /// its register group instead of word 0. For an input that is one word of a bigger group
    /// (a component of a vector load, a word of a pair, an f64 in an `LDG.128`): the
    /// sequences are written over whole operands, and this lets them read the word in place,
    /// without a copy (as ptxas reads `R3` of an `LDG.64 R2`). Call it once the sequence is
    /// complete, once per operand.
    pub(super) fn read_word(&mut self, op: u8, word: u8) {
        if word == 0 {
            return;
        }
        for p in &mut self.i.pieces {
            for r in &mut p.refs {
                if r.op == op {
                    r.offset += word;
                }
            }
        }
    }

    pub(super) fn put(&mut self, inst: sm50::Inst, refs: &[(Field, u8)]) {
        let r: Vec<(Field, u8, u8)> = refs.iter().map(|&(f, o)| (f, o, 0)).collect();
        self.i.piece(inst, &r);
    }

    /// `FSETP.<cmp>.AND p, PT, {|}a{|}, imm, PT`.
    fn fsetp(&mut self, p: u8, cmp: u64, a: u8, abs: bool, imm: f32) {
        let inst = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, cmp)
            .with(Field::Absa, abs as u64)
            .with(Field::ImmF32i, f32i(imm));
        self.put(inst, &[(Field::Pd0, p), (Field::Ra, a)]);
    }

    /// `{@[!]g} FMUL d, a, imm`.
    pub(super) fn fmul_i(&mut self, guard: Option<(u8, bool)>, d: u8, a: u8, imm: f32) {
        let mut inst = sm50::Inst::new(Form::FMUL_I).with(Field::ImmF32i, f32i(imm));
        let mut refs = vec![(Field::Rd, d), (Field::Ra, a)];
        if let Some((g, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            refs.push((Field::Pg, g));
        }
        self.put(inst, &refs);
    }

    /// `{@[!]g} FMUL{.FTZ} d, a, b`.
    pub(super) fn fmul_r(&mut self, guard: Option<(u8, bool)>, d: u8, a: u8, b: u8, ftz: bool) {
        let mut inst = sm50::Inst::new(Form::FMUL_R).with(Field::Fmz, ftz as u64);
        let mut refs = vec![(Field::Rd, d), (Field::Ra, a), (Field::Rb, b)];
        if let Some((g, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            refs.push((Field::Pg, g));
        }
        self.put(inst, &refs);
    }

    fn mov32i(&mut self, guard: Option<(u8, bool)>, d: u8, x: f32) {
        let mut inst = sm50::Inst::new(Form::MOV32I).with(Field::Imm, u64::from(x.to_bits()));
        let mut refs = vec![(Field::Rd, d)];
        if let Some((g, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            refs.push((Field::Pg, g));
        }
        self.put(inst, &refs);
    }

    pub(super) fn mov(&mut self, d: u8, a: u8) {
        self.put(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, d), (Field::Rb, a)],
        );
    }

    pub(super) fn mufu(&mut self, func: Func, d: u8, a: u8) {
        let inst = sm50::Inst::new(Form::MUFU).with(Field::Op, func.code());
        self.put(inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `FFMA d, a, {-}b, c`.
    pub(super) fn ffma(&mut self, d: u8, a: u8, negb: bool, b: u8, c: u8) {
        let inst = sm50::Inst::new(Form::FFMA_R).with(Field::Negb, negb as u64);
        self.put(
            inst,
            &[
                (Field::Rd, d),
                (Field::Ra, a),
                (Field::Rb, b),
                (Field::Rc, c),
            ],
        );
    }

    /// `{@[!]g} IADD32I d, a, imm`: moves an f32 by `imm` units in the last place.
    fn iadd32i(&mut self, guard: Option<(u8, bool)>, d: u8, a: u8, imm: i32) {
        let mut inst = sm50::Inst::new(Form::IADD32I).with(Field::Imm, imm as u32 as u64);
        let mut refs = vec![(Field::Rd, d), (Field::Ra, a)];
        if let Some((g, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            refs.push((Field::Pg, g));
        }
        self.put(inst, &refs);
    }

    /// `sqrt.<rnd>{.ftz}.f32 d = √x`, correctly rounded for every input (see the module
    /// essay): the root truncated to 24 bits, then one ulp up where the mode says so.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sqrt_f32(
        &mut self,
        rnd: Round,
        ftz: bool,
        d: u8,
        x: u8,
        [t, u, w]: [u8; 3],
        [p, q]: [u8; 2],
    ) {
        // Scale tiny inputs (subnormals included) by 2^64 so that every quantity below is a
        // normal number, and the result by 2^-32 at the end (exact: √x is never subnormal).
        self.fsetp(p, LT, x, false, TWO_M64);
        self.mov(t, x);
        self.fmul_i(Some((p, false)), t, x, TWO_64);
        // s0 = t · RSQ(t); one Newton step s1 = s0 + (t - s0²) · RSQ(t)/2: within 1 ulp.
        self.mufu(Func::Rsq, u, t);
        self.fmul_r(None, d, t, u, false);
        self.fmul_i(None, u, u, 0.5);
        self.ffma(w, d, true, d, t);
        self.ffma(d, w, false, u, d);
        // Make s ≤ √t: the residual t - s² is computed exactly by the FFMA, so its sign is.
        self.ffma(w, d, true, d, t);
        self.fsetp(q, LT, w, false, 0.0);
        self.iadd32i(Some((q, false)), d, d, -1);
        // s is √t truncated to 24 bits. rz and rm (√ is positive) keep it.
        match rnd {
            Round::Rz | Round::Rm => {}
            Round::Rn => {
                // Round up iff t > (s + u/2)², u = ulp(s): with s = S·u and t a multiple of
                // u², that is t - s² > s·u, both sides exact (a power-of-two product, an
                // FFMA residual whose rounding cannot cross the integer multiple of u² it is
                // compared with).
                self.ffma(w, d, true, d, t);
                let and = sm50::Inst::new(Form::LOP32I)
                    .with(Field::Op, sm50::values::lop32i::op::AND)
                    .with(Field::Imm, 0x7f80_0000);
                self.put(and, &[(Field::Rd, u), (Field::Ra, d)]);
                self.iadd32i(None, u, u, -(23 << 23));
                self.fmul_r(None, u, d, u, false);
                let gt = sm50::Inst::new(Form::FSETP_R).with(Field::Cmp, GT);
                self.put(gt, &[(Field::Pd0, q), (Field::Ra, w), (Field::Rb, u)]);
                self.iadd32i(Some((q, false)), d, d, 1);
            }
            Round::Rp => {
                // Up iff inexact: the residual t - s² (its FFMA rounding keeps a nonzero
                // value nonzero: t ≥ 2^-64, so |t - s²| ≥ ulp(s)² ≥ 2^-110 is normal).
                self.ffma(w, d, true, d, t);
                self.fsetp(q, NE, w, false, 0.0);
                self.iadd32i(Some((q, false)), d, d, 1);
            }
        }
        self.fmul_i(Some((p, false)), d, d, TWO_M32);
        // Specials: +0, -0 and +inf are their own roots; negatives and NaN give NaN.
        self.fsetp(p, GT, x, false, 0.0);
        let lt_inf = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, LT)
            .with(Field::ImmF32i, f32i(f32::INFINITY));
        self.put(lt_inf, &[(Field::Pd0, p), (Field::Ra, x), (Field::Pacc, p)]);
        self.mov32i(Some((p, true)), d, f32::from_bits(crate::mufu::NAN));
        for special in [0.0, f32::INFINITY] {
            self.fsetp(q, EQ, x, false, special);
            let mov = sm50::Inst::new(Form::MOV_R).with(Field::Pgn, 0);
            self.put(mov, &[(Field::Rd, d), (Field::Rb, x), (Field::Pg, q)]);
        }
        if ftz {
            // A subnormal input is a zero of its sign, its own root.
            self.fsetp(q, LT, x, true, f32::MIN_POSITIVE);
            let sign = sm50::Inst::new(Form::LOP32I)
                .with(Field::Op, sm50::values::lop32i::op::AND)
                .with(Field::Imm, 0x8000_0000)
                .with(Field::Pgn, 0);
            self.put(sign, &[(Field::Rd, d), (Field::Ra, x), (Field::Pg, q)]);
        }
    }

    /// `RRO.SINCOS` (`ex2` false) or `RRO.EX2`.
    fn rro(&mut self, ex2: bool, d: u8, a: u8) {
        let inst = sm50::Inst::new(Form::RRO_R).with(Field::Op, ex2 as u64);
        self.put(inst, &[(Field::Rd, d), (Field::Rb, a)]);
    }
}

impl Lowerer<'_> {
    /// `FloatOp::Sqrt` on f32: `sqrt.<rnd>{.ftz}.f32` (see [`Seq::sqrt_f32`]). (Plain
    /// `sqrt.rn.f32` is `Approx::SqrtRn`, [`Self::lower_approx`], never this.)
    pub(super) fn lower_fsqrt(
        &mut self,
        v: Value,
        rnd: Round,
        ftz: bool,
        arg: Value,
    ) -> Result<(), LowerError> {
        let a = self.reg(arg)?;
        let out = self.new_vreg(RegKind::B32);
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let d = s.i.def(out, true);
        let mut temp = |s: &mut Seq, kind: RegKind| {
            let t = self.new_vreg(kind);
            s.i.def(t, true)
        };
        let t = [
            temp(&mut s, RegKind::B32),
            temp(&mut s, RegKind::B32),
            temp(&mut s, RegKind::B32),
        ];
        let p = [temp(&mut s, RegKind::Pred), temp(&mut s, RegKind::Pred)];
        let x = s.i.use_(a.vreg);
        s.sqrt_f32(rnd, ftz, d, x, t, p);
        s.read_word(x, a.offset);
        self.push(s.i);
        self.set_loc(
            v,
            Loc {
                vreg: out,
                offset: 0,
            },
        );
        Ok(())
    }

    // Long by design: the dispatch over (`Approx`, `.ftz`), one short arm per function.
    pub(super) fn lower_approx(
        &mut self,
        v: Value,
        func: Approx,
        ftz: bool,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let a = self.reg(args[0])?;
        if let Approx::Rcp64h | Approx::Rsqrt64h = func {
            // As ptxas: `MOV d.lo, RZ` and `MUFU.RCP64H/RSQ64H d.hi, a.hi`. d and a are
            // aligned pairs, so d.lo is never a.hi: the MOV cannot clobber the operand.
            let f = if func == Approx::Rcp64h {
                Func::Rcp64h
            } else {
                Func::Rsq64h
            };
            let out = self.new_vreg(RegKind::B64);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(out, false);
            let aop = i.use_(a.vreg);
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 0)]);
            let inst = sm50::Inst::new(Form::MUFU).with(Field::Op, f.code());
            i.piece(inst, &[(Field::Rd, dop, 1), (Field::Ra, aop, a.offset + 1)]);
            self.push(i);
            self.set_loc(
                v,
                Loc {
                    vreg: out,
                    offset: 0,
                },
            );
            return Ok(());
        }
        let b = match args.get(1) {
            Some(&x) => Some(self.reg(x)?),
            None => None,
        };
        let out = self.new_vreg(RegKind::B32);
        if func == Approx::SqrtRn && !self.opts.no_subroutines && !self.opts.inline_sqrt {
            // ptxas's fast path and a call of the slow path (`select::fdiv`).
            self.lower_fsqrt_fast(out, (a, args[0]))?;
            self.set_loc(
                v,
                Loc {
                    vreg: out,
                    offset: 0,
                },
            );
            return Ok(());
        }
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let d = s.i.def(out, true);
        let mut temp = |s: &mut Seq, kind: RegKind| {
            let t = self.new_vreg(kind);
            s.i.def(t, true)
        };
        let t = temp(&mut s, RegKind::B32);
        let u = temp(&mut s, RegKind::B32);
        let p = temp(&mut s, RegKind::Pred);
        let q = temp(&mut s, RegKind::Pred);
        // Inputs may be words of bigger groups: the pieces read them in place
        // (`Seq::read_word`, once the sequence is built).
        let x = s.i.use_(a.vreg);
        let y = b.map(|b| s.i.use_(b.vreg));
        // The scaled copy of a one-operand function's input (`t` below) is written over the
        // input's own register where that is a whole register: ptxas's `@!P0 FMUL R0, R0,
        // 2^24` in place. A reuse constraint says so; the allocator copies the input first
        // only where it lives on, where the sequence had its `MOV` at every site. (Every
        // read of the input precedes the scaling's write.)
        let in_place = a.offset == 0 && a.vreg.kind == RegKind::B32;
        let copy_in = |s: &mut Seq| {
            if in_place {
                s.i.ops[usize::from(t)].spec = OpSpec::reuse_def(usize::from(x));
            } else {
                s.mov(t, x);
            }
        };
        match (func, ftz) {
            (Approx::Sin | Approx::Cos, _) => {
                s.rro(false, t, x);
                let f = if func == Approx::Sin {
                    Func::Sin
                } else {
                    Func::Cos
                };
                s.mufu(f, d, t);
            }
            (Approx::Rcp, true) => s.mufu(Func::Rcp, d, x),
            (Approx::Rsqrt, true) => s.mufu(Func::Rsq, d, x),
            (Approx::Lg2, true) => s.mufu(Func::Lg2, d, x),
            (Approx::Sqrt, true) => {
                s.mufu(Func::Rsq, t, x);
                s.mufu(Func::Rcp, d, t);
            }
            (Approx::Ex2, true) => {
                s.rro(true, t, x);
                s.mufu(Func::Ex2, d, t);
            }
            (Approx::Div, true) => {
                let y = y.expect("div has two operands");
                s.mufu(Func::Rcp, t, y);
                s.fmul_r(None, d, t, x, true);
            }
            (Approx::Rcp, false) => {
                s.fsetp(p, GEU, x, true, MIN_NORMAL);
                s.fsetp(q, GT, x, true, TWO_126);
                s.mov32i(None, u, 1.0);
                s.mov32i(Some((p, true)), u, TWO_24);
                s.mov32i(Some((q, false)), u, 0.25);
                s.fmul_r(None, t, x, u, false);
                s.mufu(Func::Rcp, t, t);
                s.fmul_r(None, d, t, u, false);
            }
            (Approx::Sqrt | Approx::Rsqrt | Approx::Lg2, false) => {
                s.fsetp(p, GEU, x, true, MIN_NORMAL);
                copy_in(&mut s);
                s.fmul_i(Some((p, true)), t, x, TWO_24);
                match func {
                    Approx::Sqrt => {
                        s.mufu(Func::Rsq, t, t);
                        s.mufu(Func::Rcp, d, t);
                        s.fmul_i(Some((p, true)), d, d, 1.0 / 4096.0);
                    }
                    Approx::Rsqrt => {
                        s.mufu(Func::Rsq, d, t);
                        s.fmul_i(Some((p, true)), d, d, 4096.0);
                    }
                    _ => {
                        s.mufu(Func::Lg2, d, t);
                        let add = sm50::Inst::new(Form::FADD_I)
                            .with(Field::ImmF32i, f32i(-24.0))
                            .with(Field::Pgn, 1);
                        s.put(add, &[(Field::Rd, d), (Field::Ra, d), (Field::Pg, p)]);
                    }
                }
            }
            (Approx::Ex2, false) => {
                s.fsetp(p, GEU, x, false, -126.0);
                copy_in(&mut s);
                s.fmul_i(Some((p, true)), t, x, 0.5);
                s.rro(true, t, t);
                s.mufu(Func::Ex2, d, t);
                s.fmul_r(Some((p, true)), d, d, d, false);
            }
            (Approx::Rcp64h | Approx::Rsqrt64h, _) => unreachable!("selected above"),
            (Approx::SqrtRn, _) => {
                let w = temp(&mut s, RegKind::B32);
                s.sqrt_f32(Round::Rn, false, d, x, [t, u, w], [p, q]);
            }
            (Approx::DivFull, true) => {
                // ptxas's div.full.ftz: the divisor above 2^126 and the dividend scaled by
                // 1/4 (the reciprocal stays normal), no subnormal scaling (FTZ flushes it).
                let y = y.expect("div has two operands");
                s.mov(t, y);
                s.mov(u, x);
                s.fsetp(q, GT, y, true, TWO_126);
                s.fmul_i(Some((q, false)), t, t, 0.25);
                s.fmul_i(Some((q, false)), u, u, 0.25);
                s.mufu(Func::Rcp, t, t);
                s.fmul_r(None, d, t, u, true);
            }
            (Approx::Div | Approx::DivFull, _) => {
                let yo = y.expect("div has two operands");
                let b = b.expect("div has two operands");
                // t = scaled b, u = scaled a, each in place over its operand's register
                // where that is a whole register of its own (as `copy_in` above; two
                // operands in one register cannot both be), else a copy. Both tests read
                // b before t is written (the 2^24 test gives the same answer on b and on
                // b/4: b/4 is scaled only from 2^126 up).
                s.fsetp(p, GEU, yo, true, MIN_NORMAL);
                if b.offset == 0 && b.vreg.kind == RegKind::B32 && b.vreg != a.vreg {
                    s.i.ops[usize::from(t)].spec = OpSpec::reuse_def(usize::from(yo));
                } else {
                    s.mov(t, yo);
                }
                if in_place && b.vreg != a.vreg {
                    s.i.ops[usize::from(u)].spec = OpSpec::reuse_def(usize::from(x));
                } else {
                    s.mov(u, x);
                }
                if func == Approx::DivFull {
                    s.fsetp(q, GT, yo, true, TWO_126);
                    s.fmul_i(Some((q, false)), t, t, 0.25);
                    s.fmul_i(Some((q, false)), u, u, 0.25);
                }
                s.fmul_i(Some((p, true)), t, t, TWO_24);
                s.fmul_i(Some((p, true)), u, u, TWO_24);
                s.mufu(Func::Rcp, t, t);
                s.fmul_r(None, d, t, u, false);
            }
        }
        s.read_word(x, a.offset);
        if let (Some(y), Some(b)) = (y, b) {
            s.read_word(y, b.offset);
        }
        self.push(s.i);
        self.set_loc(
            v,
            Loc {
                vreg: out,
                offset: 0,
            },
        );
        Ok(())
    }
}
