//! Integer division: `div.u`/`div.s`/`rem.u`/`rem.s` on 8..32-bit values as one branch-free
//! instruction sequence (SM50 has no divide instruction).
//!
//! In: a binary IR instruction with one of those opcodes. Out: one multi-piece [`Sm50Inst`]
//! whose result is the quotient or remainder as the `ir` essay defines it (all ones for a zero
//! divisor; `MIN / -1` wraps). 64-bit division IR is refused with [`LowerError::Unsupported`]:
//! `ir::build` never produces it, expanding PTX's 64-bit `div`/`rem` into a loop instead.
//!
//! # The unsigned core (n / d, 32 bits)
//!
//! The shape of ptxas 11.8's own sequence, with one deliberate difference in step 1-3:
//!
//! 1. `f = I2F.F32.U32 d` (round to nearest), `f = MUFU.RCP f`.
//! 2. `f = IADD32I f, 0x0ffffffa`: adds 32 to the exponent (×2^32) and subtracts 6 units in
//!    the last place, then `y = F2I.FTZ.U32.F32.TRUNC f`. ptxas converts with `.RP` and
//!    subtracts 2 ulps; we convert to nearest (the conversion the simulator already models)
//!    and subtract 6. A relative error of `e` units of 2^-24 survives subtracting `k` ulps
//!    (each more than 2^-24 relative) when `k > e`: the conversion gives 1, a `MUFU.RCP`
//!    error of `j` ulps gives `2j`, so 6 ulps cover an `RCP` off by up to 2 ulps and
//!    `y ≤ 2^32 / d` always, with `y ≥ (2^32 / d)(1 - 2^-20)` roughly.
//! 3. One Newton step in integers: `e = -(y·d) mod 2^32 = 2^32 - y·d` (exact because `y·d ≤
//!    2^32`), `y += mulhi(y, e)`. With `y = Y(1 - ε)`, `Y = 2^32/d`, this gives `Y(1 - ε²)`
//!    minus a truncation, still `≤ Y` and now within 2 of it.
//! 4. `q = mulhi(n, y)` is then `⌊n/d⌋ - k` with `k ∈ {0, 1, 2}`; `r = n - q·d` (never
//!    overflows: `0 ≤ r ≤ n`). Two steps of `if r ≥ d { r -= d; q += 1 }` finish.
//! 5. `d = 0`: `@P MOV32I out, 0xffffffff` (the steps above compute garbage but never fault).
//!
//! Signed: the core runs on `|n|`, `|d|` (`I2I.S32.S32 |x|`, whose `|MIN|` is `2^31` read as
//! unsigned); the quotient is negated when the signs differ, the remainder when `n < 0`.
//! Narrow (8/16-bit) operands are sign- or zero-extended first; the low bits of the 32-bit
//! result are then the narrow result. tests/lower_div.rs runs the sequence in the simulator
//! against `ir::eval` on edge and random operands, also with `MUFU` perturbed by ±1 and ±2 ulps.

use super::Lowerer;
use crate::ir::{BinaryOp, Block, Function, InstData, Type, Value};
use crate::lower::inst::{Role, Sm50Inst};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::RegKind;
use crate::machinst::VReg;
use crate::sm50::{self, Field, Form};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A register operand of the sequence: operand number and word.
#[derive(Clone, Copy)]
struct R(u8, u8);

/// RZ as a register reference: an operand-less field keeps its RZ default, so `None`.
type Ro = Option<R>;

fn refs(list: &[(Field, Ro)]) -> Vec<(Field, u8, u8)> {
    list.iter()
        .filter_map(|&(f, r)| r.map(|R(op, w)| (f, op, w)))
        .collect()
}

/// Builder of the sequence's pieces over named operands.
struct Seq {
    i: Sm50Inst,
}

impl Seq {
    fn put(&mut self, inst: sm50::Inst, list: &[(Field, Ro)]) {
        self.i.piece(inst, &refs(list));
    }

    /// `XMAD{.PSL}{mode}{.MRG} d, a{.H1}, b{.H1}, c`: `mode` 0 none, 2 CHI, 4 CBCC.
    #[allow(clippy::too_many_arguments)]
    fn xmad(
        &mut self,
        d: R,
        a: R,
        ah: bool,
        b: R,
        bh: bool,
        c: Ro,
        psl: bool,
        mode: u64,
        mrg: bool,
    ) {
        let inst = sm50::Inst::new(Form::XMAD_R)
            .with(Field::Ah, ah as u64)
            .with(Field::Bh, bh as u64)
            .with(Field::Psl, psl as u64)
            .with(Field::Mode, mode)
            .with(Field::Mrg, mrg as u64);
        self.put(
            inst,
            &[
                (Field::Rd, Some(d)),
                (Field::Ra, Some(a)),
                (Field::Rb, Some(b)),
                (Field::Rc, c),
            ],
        );
    }

    /// `d = a · b mod 2^32` (ptxas's three-XMAD idiom), with `t` as scratch; `d` may be `a`
    /// only if it is not `b`. `c` is added (XMAD's first C operand), RZ for none.
    fn mul_lo(&mut self, d: R, a: R, b: R, c: Ro, t: R) {
        // t0 = a.lo·b.lo + c ; t = MRG(a.lo·b.hi) ; d = (a.hi·t.hi << 16) + t0 + (t << 16)
        self.xmad(d, a, false, b, false, c, false, 0, false);
        self.xmad(t, a, false, b, true, None, false, 0, true);
        self.xmad(d, a, true, t, true, Some(d), true, 4, false);
    }

    /// `d = mulhi.u32(a, b) + c` (ptxas's mul.hi idiom), scratch `t`, `u`, `w`; `d` may
    /// alias `a` or `b` (written last).
    #[allow(clippy::too_many_arguments)]
    fn mul_hi(&mut self, d: R, a: R, b: R, c: Ro, t: R, u: R, w: R) {
        self.xmad(t, a, false, b, false, None, false, 0, false);
        self.xmad(u, a, false, b, true, None, false, 0, false);
        self.xmad(w, a, true, b, true, c, false, 0, false);
        self.xmad(t, a, true, b, false, Some(t), false, 2, false);
        let rs = sm50::Inst::new(Form::IADD3_R).with(Field::Sh, sm50::values::iadd3::sh::RS);
        self.put(
            rs,
            &[
                (Field::Rd, Some(d)),
                (Field::Ra, Some(t)),
                (Field::Rb, Some(u)),
                (Field::Rc, Some(w)),
            ],
        );
    }

    /// `ISETP.<cmp>{.U32}.AND p, PT, a, b, PT` (`b` None = RZ); cmp codes as `cmp_code`.
    fn isetp(&mut self, p: R, cmp: u64, signed: bool, a: R, b: Ro) {
        let inst = sm50::Inst::new(Form::ISETP_R)
            .with(Field::Cmp, cmp)
            .with(Field::Sgn, signed as u64);
        self.put(
            inst,
            &[(Field::Pd0, Some(p)), (Field::Ra, Some(a)), (Field::Rb, b)],
        );
    }

    /// `@p IADD d, ±a, ±b` (`b` None = RZ).
    fn iadd(&mut self, guard: Option<R>, d: R, nega: bool, a: R, negb: bool, b: Ro) {
        let inst = sm50::Inst::new(Form::IADD_R)
            .with(Field::Nega, nega as u64)
            .with(Field::Negb, negb as u64);
        self.put(
            inst,
            &[
                (Field::Pg, guard),
                (Field::Rd, Some(d)),
                (Field::Ra, Some(a)),
                (Field::Rb, b),
            ],
        );
    }

    fn iadd32i(&mut self, guard: Option<R>, d: R, a: R, imm: u32) {
        let inst = sm50::Inst::new(Form::IADD32I).with(Field::Imm, u64::from(imm));
        self.put(
            inst,
            &[
                (Field::Pg, guard),
                (Field::Rd, Some(d)),
                (Field::Ra, Some(a)),
            ],
        );
    }
}

/// The scratch registers of the sequence.
#[derive(Clone, Copy)]
struct Scratch {
    f: R,
    t: R,
    u: R,
    w: R,
}

impl Seq {
    /// `dst = |src|` (`I2I.S32.S32 |x|`; `|MIN|` is 2^31 read as unsigned).
    fn abs(&mut self, dst: R, src: R) {
        let abs = sm50::Inst::new(Form::I2I_R)
            .with(Field::Dt, sm50::values::i2i::dt::S32)
            .with(Field::St, sm50::values::i2i::st::S32)
            .with(Field::Absb, 1);
        self.put(abs, &[(Field::Rd, Some(dst)), (Field::Rb, Some(src))]);
    }

    /// Steps 1-3 of the module essay: `y ≈ 2^32 / du` from below, within 2.
    fn reciprocal(&mut self, y: R, du: R, s: Scratch) {
        let Scratch { f, t, u, w } = s;
        // 1-2: y ≈ 2^32 / d from below.
        let i2f = sm50::Inst::new(Form::I2F_R)
            .with(Field::Dsz, sm50::values::i2f::dsz::F32)
            .with(Field::St, sm50::values::i2f::st::U32);
        self.put(i2f, &[(Field::Rd, Some(f)), (Field::Rb, Some(du))]);
        let rcp = sm50::Inst::new(Form::MUFU).with(Field::Op, sm50::values::mufu::op::RCP);
        self.put(rcp, &[(Field::Rd, Some(f)), (Field::Ra, Some(f))]);
        self.iadd32i(None, f, f, 0x0fff_fffa);
        let f2i = sm50::Inst::new(Form::F2I_R)
            .with(Field::Dt, sm50::values::f2i::dt::U32)
            .with(Field::Ssz, sm50::values::f2i::ssz::F32)
            .with(Field::Rnd, sm50::values::f2i::rnd::TRUNC)
            .with(Field::Ftz, 1);
        self.put(f2i, &[(Field::Rd, Some(y)), (Field::Rb, Some(f))]);
        // 3: e = -(y·d); y += mulhi(y, e).
        self.mul_lo(t, y, du, None, u);
        self.iadd(None, t, true, t, false, None);
        self.mul_hi(y, y, t, Some(y), f, u, w);
    }

    /// Step 4: `q = ⌊nu / du⌋`, `r = nu mod du` from `y` (`count` false: `q` is left
    /// 0..2 short, for a remainder nobody divides for).
    #[allow(clippy::too_many_arguments)]
    fn quotient(&mut self, q: R, r: R, nu: R, du: R, y: R, p: R, s: Scratch, count: bool) {
        let Scratch { t, u, w, .. } = s;
        // 4: q = mulhi(n, y); r = n - q·d = (-q)·d + n; two corrections.
        self.mul_hi(q, y, nu, None, t, u, w);
        self.iadd(None, t, true, q, false, None);
        self.mul_lo(r, t, du, Some(nu), u);
        for _ in 0..2 {
            self.isetp(p, 6, false, r, Some(du));
            self.iadd(Some(p), r, false, r, true, Some(du));
            if count {
                self.iadd32i(Some(p), q, q, 1);
            }
        }
    }

    /// The signs and the zero divisor, on `o` (which holds the unsigned quotient or
    /// remainder): negated when the signs differ (a quotient) or `n < 0` (a remainder), all
    /// ones when `d = 0`.
    #[allow(clippy::too_many_arguments)]
    fn finish(&mut self, o: R, nin: R, din: R, p: R, t: R, signed: bool, is_div: bool) {
        if signed {
            if is_div {
                // Negative quotient when the signs differ.
                let x = sm50::Inst::new(Form::LOP_R).with(Field::Op, sm50::values::lop::op::XOR);
                self.put(
                    x,
                    &[
                        (Field::Rd, Some(t)),
                        (Field::Ra, Some(nin)),
                        (Field::Rb, Some(din)),
                    ],
                );
                self.isetp(p, 1, true, t, None);
            } else {
                // The remainder takes the dividend's sign.
                self.isetp(p, 1, true, nin, None);
            }
            self.iadd(Some(p), o, true, o, false, None);
        }
        // 5: a zero divisor gives all ones.
        self.isetp(p, 2, false, din, None);
        let ones = sm50::Inst::new(Form::MOV32I).with(Field::Imm, 0xffff_ffff);
        self.put(ones, &[(Field::Pg, Some(p)), (Field::Rd, Some(o))]);
    }
}

/// A built reciprocal: its IR block, `|d|` (signed divisions), `y`.
type Recip = (Block, Option<VReg>, VReg);
/// A built unsigned quotient: its IR block, `q`, `r`.
type Quot = (Block, VReg, VReg);

/// Which divisions of a function can share work: a key `(divisor, signed)` read by two or
/// more divisions shares its reciprocal (steps 1-3, 13 instructions), and a key
/// `(dividend, divisor, signed)` read twice (a `div` and a `rem`) shares the quotient (step 4).
#[derive(Default)]
pub(super) struct DivShare {
    divisors: HashMap<(Value, bool), u32>,
    /// The `(n, d, signed)` that a `div` reads (a shared quotient must then be exact).
    divides: HashSet<(Value, Value, bool)>,
    /// Built reciprocals: `(divisor, signed)` → (IR block, `|d|` when signed, `y`).
    recips: HashMap<(Value, bool), Vec<Recip>>,
    /// Built quotients: `(n, d, signed)` → (IR block, unsigned `q`, unsigned `r`).
    quots: HashMap<(Value, Value, bool), Vec<Quot>>,
}

impl DivShare {
    /// Count the 32-bit-or-narrower divisions of `f` by their operands.
    pub(super) fn of(f: &Function) -> DivShare {
        let mut s = DivShare::default();
        for b in &f.layout {
            for &i in &f.blocks[*b].insts {
                let InstData::Binary { op, args } = f.insts[i].data else {
                    continue;
                };
                let (signed, is_div) = match op {
                    BinaryOp::DivU => (false, true),
                    BinaryOp::DivS => (true, true),
                    BinaryOp::RemU => (false, false),
                    BinaryOp::RemS => (true, false),
                    _ => continue,
                };
                *s.divisors.entry((args[1], signed)).or_default() += 1;
                if is_div {
                    s.divides.insert((args[0], args[1], signed));
                }
            }
        }
        s
    }
}

/// The latest part of `list` built in an IR block that is `here` or dominates it (the IR is
/// SSA, so its operands have the same values on every path here); none while planning.
pub(super) fn built<T: Copy>(
    doms: &crate::ir::Dominators,
    here: Option<Block>,
    planning: bool,
    list: Option<&Vec<T>>,
    block: impl Fn(&T) -> Block,
) -> Option<T> {
    let h = here.filter(|_| !planning)?;
    list?
        .iter()
        .rev()
        .find(|e| block(e) == h || doms.dominates(block(e), h))
        .copied()
}

impl Lowerer<'_> {
    /// `v = op(args)` for op one of DivU, DivS, RemU, RemS (see the module essay).
    pub(super) fn lower_divide(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let ty = self.ty(v);
        if ty == Type::I64 {
            return Err(self.unsupported(format!("64-bit integer division ({}.i64)", op.name())));
        }
        let signed = matches!(op, BinaryOp::DivS | BinaryOp::RemS);
        let is_div = matches!(op, BinaryOp::DivU | BinaryOp::DivS);
        let shared = self.div_share.divisors.get(&(args[1], signed)) > Some(&1);
        if shared {
            return self.lower_divide_shared(v, args, signed, is_div);
        }
        let n = self.div_operand(args[0], signed)?;
        let d = self.div_operand(args[1], signed)?;

        let out = self.new_vreg(RegKind::B32);
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let o = R(s.i.def(out, true), 0);
        let f = self.temp(&mut s, RegKind::B32);
        let y = self.temp(&mut s, RegKind::B32);
        let t = self.temp(&mut s, RegKind::B32);
        let u = self.temp(&mut s, RegKind::B32);
        let w = self.temp(&mut s, RegKind::B32);
        let p = self.temp(&mut s, RegKind::Pred);
        let nin = R(s.i.use_(n.vreg), n.offset);
        let din = R(s.i.use_(d.vreg), d.offset);
        // The unsigned operands: the inputs themselves, or their magnitudes.
        let (nu, du) = if signed {
            let na = self.temp(&mut s, RegKind::B32);
            let da = self.temp(&mut s, RegKind::B32);
            s.abs(na, nin);
            s.abs(da, din);
            (na, da)
        } else {
            (nin, din)
        };
        // The quotient and remainder registers: the result is one of them.
        let (q, r) = if is_div { (o, f) } else { (f, o) };
        let scratch = Scratch { f, t, u, w };
        s.reciprocal(y, du, scratch);
        s.quotient(q, r, nu, du, y, p, scratch, is_div);
        s.finish(o, nin, din, p, t, signed, is_div);

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

    /// A division whose divisor other divisions share: the reciprocal (with `|d|`) is one
    /// instruction, built once and reused in the blocks its block dominates (like address
    /// chains: a longer live range against 13 instructions per division); the unsigned
    /// quotient and remainder are another, shared by a `div` and a `rem` of the same
    /// operands; the result is a third, which copies the shared quotient or remainder first
    /// (one `MOV` more than the single sequence, which works in place).
    fn lower_divide_shared(
        &mut self,
        v: Value,
        args: [Value; 2],
        signed: bool,
        is_div: bool,
    ) -> Result<(), LowerError> {
        let n = self.div_operand(args[0], signed)?;
        let d = self.div_operand(args[1], signed)?;
        let here = self.cur_ir;
        let planning = self.planning.is_some();

        // The reciprocal of |d|.
        let rkey = (args[1], signed);
        let found = built(
            &self.doms,
            here,
            planning,
            self.div_share.recips.get(&rkey),
            |e| e.0,
        );
        let (dabs, y) = match found {
            Some((_, dabs, y)) => (dabs, y),
            None => {
                let mut s = Seq {
                    i: Sm50Inst::new(Role::Plain),
                };
                let yv = self.new_vreg(RegKind::B32);
                let y = R(s.i.def(yv, true), 0);
                let dabs = signed.then(|| self.new_vreg(RegKind::B32));
                let da = dabs.map(|r| R(s.i.def(r, true), 0));
                let scratch = self.scratch(&mut s);
                let din = R(s.i.use_(d.vreg), d.offset);
                let du = match da {
                    Some(da) => {
                        s.abs(da, din);
                        da
                    }
                    None => din,
                };
                s.reciprocal(y, du, scratch);
                self.push(s.i);
                if let (false, Some(h)) = (planning, here) {
                    self.div_share
                        .recips
                        .entry(rkey)
                        .or_default()
                        .push((h, dabs, yv));
                }
                (dabs, yv)
            }
        };

        // The unsigned quotient and remainder.
        let qkey = (args[0], args[1], signed);
        let has_div = self.div_share.divides.contains(&qkey);
        let found = built(
            &self.doms,
            here,
            planning,
            self.div_share.quots.get(&qkey),
            |e| e.0,
        );
        let (qv, rv) = match found {
            Some((_, q, r)) => (q, r),
            None => {
                let mut s = Seq {
                    i: Sm50Inst::new(Role::Plain),
                };
                let (qv, rv) = (self.new_vreg(RegKind::B32), self.new_vreg(RegKind::B32));
                let q = R(s.i.def(qv, true), 0);
                let r = R(s.i.def(rv, true), 0);
                let scratch = self.scratch(&mut s);
                let p = self.temp(&mut s, RegKind::Pred);
                let nu = if signed {
                    let na = self.temp(&mut s, RegKind::B32);
                    let nin = R(s.i.use_(n.vreg), n.offset);
                    s.abs(na, nin);
                    na
                } else {
                    R(s.i.use_(n.vreg), n.offset)
                };
                let du = match dabs {
                    Some(da) => R(s.i.use_(da), 0),
                    None => R(s.i.use_(d.vreg), d.offset),
                };
                let yr = R(s.i.use_(y), 0);
                s.quotient(q, r, nu, du, yr, p, scratch, has_div);
                self.push(s.i);
                if let (false, Some(h)) = (planning, here) {
                    self.div_share
                        .quots
                        .entry(qkey)
                        .or_default()
                        .push((h, qv, rv));
                }
                (qv, rv)
            }
        };

        // The result: a copy of q or r with the signs and the zero divisor applied.
        let out = self.new_vreg(RegKind::B32);
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let o = R(s.i.def(out, true), 0);
        let t = self.temp(&mut s, RegKind::B32);
        let p = self.temp(&mut s, RegKind::Pred);
        let src = R(s.i.use_(if is_div { qv } else { rv }), 0);
        let nin = R(s.i.use_(n.vreg), n.offset);
        let din = R(s.i.use_(d.vreg), d.offset);
        let mov = sm50::Inst::new(Form::MOV_R);
        s.put(mov, &[(Field::Rd, Some(o)), (Field::Rb, Some(src))]);
        s.finish(o, nin, din, p, t, signed, is_div);
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

    /// A new scratch register of the sequence (an early def).
    fn temp(&mut self, s: &mut Seq, kind: RegKind) -> R {
        let t = self.new_vreg(kind);
        R(s.i.def(t, true), 0)
    }

    /// Four new 32-bit scratch registers, `f`, `t`, `u`, `w` in that order.
    fn scratch(&mut self, s: &mut Seq) -> Scratch {
        Scratch {
            f: self.temp(s, RegKind::B32),
            t: self.temp(s, RegKind::B32),
            u: self.temp(s, RegKind::B32),
            w: self.temp(s, RegKind::B32),
        }
    }

    /// An operand of the division as a full 32-bit register: narrow values extended.
    fn div_operand(&mut self, x: Value, signed: bool) -> Result<Loc, LowerError> {
        let ty = self.ty(x);
        let l = self.reg(x)?;
        if ty.bits() >= 32 {
            return Ok(l);
        }
        self.extend_narrow(l, ty, signed, None)
    }
}
