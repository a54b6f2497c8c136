//! IEEE division (`FloatBinOp::Div`: PTX `div.{rn,rz,rm,rp}{.ftz}.f32` and `.f64`, and
//! `rcp` of those forms as `1.0 / x`) → one straight-line, predicated SM50 sequence,
//! correctly rounded for every input.
//!
//! In: the two f32 operands (whole 32-bit registers) and the rounding mode. Out: one
//! multi-piece [`Sm50Inst`] whose result equals [`crate::ir::float::div`] bit for bit. The
//! only approximate step is `MUFU.RCP`; nothing below relies on how accurate it is beyond
//! "a few ulps", so the tests run it perturbed by ±2 ulps.
//!
//! ```text
//! normalise   A = |a|'s significand in [1, 2) (a subnormal first scaled by 2^24), ea its
//!             exponent; B, eb likewise; k = ea - eb; the quotient is Q·2^k, Q = A/B
//! approximate r = RCP(B); q = A·r; q += (A - B·q)·r          (|q - Q| < 1 ulp)
//! truncate    q -= 1 ulp if A - B·q < 0 (the FFMA residual is exact, so its sign is):
//!             q = Q truncated to 24 bits
//! grid        the result's ulp is 2^(max(ef, -126) - 23), ef = k + exponent(q); in units
//!             of Q that is 2^-s, s = min(150 - exponent bits of q, k + 149), clamped to
//!             s >= -2 (every s < -1 rounds alike: N = 0, Q·2^s < 1/2)
//! integer     N = trunc(q·2^s) = floor(Q·2^s); R = A - B·N·2^-s (exact: it fits 24 bits),
//!             h = B·2^(-s-1) (exact): Q·2^s - N is > = < 1/2 as R is > = < h, inexact iff R != 0
//! round       rn: +1 if R > h, or R = h and N odd; rz: never; rp/rm: +1 if R != 0 and the
//!             sign is + / -. bits = N + (max(ef + 126, 0) << 23) (a carry into the exponent
//!             is right), overflow (ef >= 128) → inf or the largest finite value by mode
//! ftz         a subnormal (rounded) result becomes zero
//! specials    x/0, inf/y → inf; 0/y, x/inf → 0 (with .ftz subnormal inputs are zero);
//!             then the sign; NaN operands, 0/0 and inf/inf → the canonical NaN (f32);
//!             f64: 0/0, inf/inf → 0xfff8000000000000, a NaN operand → the first, quieted
//! ```
//!
//! f64 is the same algorithm on register pairs: `MUFU.RCP64H` (a 20-bit reciprocal of the
//! high word) plus one DFMA Newton step gives r within ~2^-36, 53-bit significands, 2^54
//! for subnormals, `s = min(1075 - exp(q), k + 1074)`, `F2I.U64`, 64-bit ±1 steps as
//! `IADD32I.CC` + `IADD.X`, the exponent base added to the high word at bit 20.
//!
//! Every step between "normalise" and "round" works on numbers in [2^-25, 2^25], so no
//! intermediate overflows or underflows, and every product by a power of two is exact.
//!
//! # Fast path and slow-path subroutine (`div.rn.f32`, `rcp.rn.f32`, no `.ftz`)
//!
//! As ptxas does, these get a short fast path at each site and one shared subroutine per
//! kernel (unless [`crate::lower::LowerOptions::no_subroutines`]). The site is one
//! multi-piece instruction:
//!
//! ```text
//! MUFU.RCP r, y ; FCHK.DIVIDE P, x, y                              P: the fast path may be wrong
//! FFMA t, y, -r, c[0x2][1.0] ; FFMA t, r, t, r                     refined reciprocal
//! FFMA q, x, t, RZ ; FFMA e, y, -q, x ; FFMA q, t, e, q            q in SLOW_Q
//! SSY after ; @!P SYNC ; CAL slow ; SYNC                           x in SLOW_X, y in SLOW_Y
//! after:
//! ```
//!
//! (ptxas 11.8's sequence operation for operation, the reconvergence included: it is right,
//! on hardware, wherever `FCHK.DIVIDE` does not flag the operands. Unlike everything else
//! here it depends on the bits `MUFU.RCP` returns, not only on their accuracy:
//! `RCP(1 - 2^-24) = 1.0`, within half an ulp, would make `1 / (1 - 2^-24)` round to 1.0.
//! The simulator's model gives the correctly rounded reciprocal, on which it is tested;
//! `--no-subroutines` avoids it.) The lanes whose operands pass the check wait at the
//! `SSY`'s reconvergence point; only the flagged ones call the subroutine
//! ([`fdiv_slow_path`], placed after the kernel's code by `lower::emit`), which computes the
//! exact quotient with the sequence above on fixed registers ([`SLOW_X`], [`SLOW_Y`],
//! [`SLOW_Q`], [`SLOW_TEMPS`], [`SLOW_PREDS`]), overwrites `SLOW_Q` and returns to the final
//! `SYNC`. So the common lane pays the check, an `SSY` and a `SYNC`, no call and no return
//! (before, every lane called and the subroutine began `FCHK ; @!P RET`). The call pins its
//! operands to those registers (`OpSpec::fixed`; the fast path's own three scratch values
//! take the first three of `SLOW_TEMPS`; x and y themselves where they die at the call,
//! else copies of them: `Lowerer::pinned_operand`) and clobbers the other scratch registers
//! and the predicates (`MachInst::clobbers`), so the allocator keeps no value that lives
//! across it there; the check's predicate is a virtual register (a def may not name a
//! clobbered register), like ptxas's `P0`. The `SSY` target is local to the sequence
//! (`LOCAL_BRANCH`). Other modes keep the inline sequence.
//!
//! # f64: `div.rn.f64` and `rcp.rn.f64`
//!
//! The same shape (unless `no_subroutines`): ptxas 11.8's fast path at the site, operation
//! for operation, a check of our own, and one shared subroutine ([`ddiv_slow_path`]: a
//! zero-dividend exit, then the exact f64 sequence above) on fixed pairs (`DSLOW_Q` R2:R3,
//! `DSLOW_X` R4:R5, `DSLOW_Y` R6:R7, `DSLOW_PAIRS` R8..R19, `DSLOW_WORDS` R0, R20..R22 in
//! `lower::abi`), `CAL_DDIV` until `lower::emit` places it:
//!
//! ```text
//! MOV32I r.lo, 1 ; MUFU.RCP64H r.hi, y.hi                 r0, |1 - y·r0| = |ε| < 2^-18
//! DFMA e, y, -r, 1.0 ; DFMA e, e, e, e ; DFMA r, r, e, r  r1 = RN(r0(1 + ε + ε²))
//! DFMA e, y, -r, 1.0 ; DFMA r, r, e, r                    r2 = RN(r1 + r1·RN(1 - y·r1))
//! DMUL q, x, r ; DFMA e, y, -q, x ; DFMA q, r, e, q       q' = RN(q + r2·(x - y·q))
//! check: |x| >= 2^-970, 0·y.hi + q'.hi (as f32) >= 2^-1021's high word (not NaN),
//!        y.lo != 0xffffffff                               fast iff all three
//! SSY after ; @fast SYNC ; CAL ddiv ; SYNC
//! ```
//!
//! Why the fast result stands where the check passes (Markstein's theorems, P. Markstein,
//! IBM J. Res. Dev. 34(1), 1990; Muller et al., Handbook of Floating-Point Arithmetic,
//! the chapter on FMA-based division): (1) r0(1 + ε + ε²) = (1/y)(1 - ε³), and
//! |ε³| < 2^-54, so with the DFMA's one rounding r1 is within an ulp of 1/y (even with
//! `RCP64H` off by 2 of its 20-bit ulps, as the tests run it). (2) One Newton step
//! `r + r·(1 - y·r)` from within an ulp gives RN(1/y) unless y's significand is all ones:
//! the check sends every y whose low word is all ones to the slow path (one in 2^32 of
//! random divisors). (3) With r2 = RN(1/y), q = RN(x·r2) is within an ulp of x/y, the
//! residual x - y·q is exact (no underflow: |x| >= 2^-970 = 2^(-1022+52)), and
//! RN(q + r2·(x - y·q)) = RN(x/y), as long as nothing under- or overflows: a normal
//! quotient (|q'| >= 2^-1021, so x/y >= 2^-1022 too: the subnormal grid, where a quotient
//! can lie exactly on a midpoint, is the slow path's), y < 2^1017 (so 1/y is normal: a y.hi
//! of 2^1017 or more reads as an f32 infinity or NaN, and 0·inf or 0·NaN makes the test's
//! word NaN), y >= 2^-1022 (`RCP64H` of a subnormal is infinite, r NaN, q' NaN). An overflow
//! of q' itself is right: the bound MAX + ulp/2 is a midpoint like the others; an overflow
//! of q (x/y just below it) makes q' NaN. Zeros, infinities and NaN operands all make q'
//! zero or NaN or fail the x test. So everything the check passes is correctly rounded,
//! whatever `RCP64H`'s bits within its error, and everything else takes the exact
//! sequence: the result is right for every input. ptxas's own check (FSET.GTU
//! |x.hi| > 0x035b7333, FFMA 0·y.hi + q.hi, FSET.GT |t| > 0x00055555, LOP.AND.NZ: four
//! instructions, as ours) lets subnormal quotients above a third of 2^-1022 through and
//! all-ones significands, relying on its unit's bits; ours trades those rare operands for
//! the slow path. The tests (`lower_fdiv`) run it with `RCP64H` moved by ±2 ulps.
//!
//! `rcp.rn.f64` (a division of the constant 1.0) has its own pair, after ptxas's: the site
//! is the seed and the two refinements above, r2 = RN(1/y) its result (steps (1) and (2)),
//! checked by `2^-1022 <= |y|`, `|y.hi|` below the f32 infinity pattern (|y| < 2^1017: 1/y
//! normal) and `y.lo != 0xffffffff` (`FSETP`, `FSETP`, `ISETP`; ptxas: `IADD32I`, `FSETP`,
//! without the all-ones exclusion). Its subroutine ([`drcp_slow_path`]) puts 1.0 in
//! `DSLOW_X` and runs the exact division; zeros, infinities, NaN and the extreme
//! exponents take it.
//!
//! # f64: `sqrt.rn.f64`
//!
//! The same shape again (unless `no_subroutines`; `FloatOp::Sqrt`, lowered here beside the
//! division it shares its registers with): ptxas 11.8's fast path, its window check, and
//! one shared subroutine ([`dsqrt_slow_path`], `CAL_DSQRT`: the exact sequence [`Seq::dsqrt`]
//! on `DSLOW_X` into `DSLOW_Q`), but a directed-rounding finish of our own instead of
//! ptxas's last `DFMA` ([`Seq::dsqrt_fast`]):
//!
//! ```text
//! IADD32I y.lo, x.hi, -0x3500000 ; MUFU.RSQ64H y.hi, x.hi       y ≈ 1/√x (its low word junk)
//! ISETP.GE.U32 slow, y.lo, c[0x2][0x7ca00000]                   x outside [2^-970, +inf)
//! DMUL y², DFMA e = 1 - x·y², DFMA t = 0.5 + 0.375·e, DMUL y·e   (0.5 in a pair: 2 MOV32I)
//! DFMA y' = y + y·e·t ; DMUL g = x·y' ; IADD32I h = y'/2 (high word - 2^20)
//! DFMA r = x - g² ; DFMA.RM c = RD(g + r·h)
//! IADD32I.CC/IADD.X c1 = succ(c) ; DFMA.RP d = RU(x - c·c1) ; DSETP.GT up, d, 0
//! SEL q = up ? c1 : c (two words) ; SSY after ; @!slow SYNC ; CAL dsqrt ; SYNC
//! ```
//!
//! Why q = RN(√x) for every x the window passes (positive, finite, x >= 2^-970), s = √x:
//! (1) If y = (1/s)(1 + ε), then x·y² = (1 + ε)², e = -2ε - ε², and y + y·e·(1/2 + 3e/8)
//! is y·(1 - e)^(-1/2) = 1/s less its Taylor remainder: y' = (1/s)(1 + η), |η| < 3|e|³
//! (plus the DFMAs' roundings, 2^-52, and y²'s, up to 2^-50 where x is near the top of the
//! range and y² subnormal). `RSQ64H` gives about 20 bits and the junk low word (the check's
//! difference) moves y by less than 2^-20 of itself, so |ε| < 2^-18 and |η| < 2^-48; any
//! seed within 2^-14 would keep |η| < 2^-38. (2) g = RN(x·y') = s(1 + η) within half an
//! ulp: g = s + δ, |δ| < 2^-37·s. (3) x - g² = -δ(2s + δ), so g + (x - g²)·h with
//! h = (1 + η)/(2s) is s - δη - δ²(1 + η)/(2s): within 2^-74·s of s, and the DFMA's
//! rounding of r (at most 2^-53·|r|, or 2^-1075 absolute if it underflows, times h <=
//! 2^484) adds far less; so |c' - s| < 2^-70·s < ulp(s)/4, c' the exact g + r·h.
//! (4) c = RD(c'), c1 its successor: s lies in (c - ulp(c)/4, c1 + ulp(c1)/4), so RN(s) is
//! c or c1 (a predecessor of c at a binade's bottom is ulp(c)/2 away: the quarter still
//! holds). (5) √x is never a midpoint (a midpoint m = M·2^k, M odd of 54 bits, has m² = M²·2^2k
//! with 107 significant bits: not a double), so RN(s) = c1 iff x > m², m = (c + c1)/2, and
//! x - m² = (x - c·c1) - (c1 - c)²/4. With v = c1 - c = ulp(c), c·c1 is a multiple of v²,
//! and so is x (normal, of exponent at least twice c's less one: ulp(x) >= v², both powers
//! of two): x - c·c1 > v²/4 iff x - c·c1 > 0, whose sign `DFMA.RP` keeps exactly (rounding
//! up never makes a positive value 0, nor a non-positive one positive). (The window's
//! lower bound serves step (3): below 2^-970 an underflow of r, times h, nears ulp(s).) So `SEL` picks RN(s). Nothing in the window
//! overflows (c·c1 ≈ x stays inside the fused product; s < 2^512) or is NaN (y is finite
//! and positive for a positive finite high word). Every other operand (zeros, subnormals,
//! tiny normals, negatives, infinities, NaN: x.hi - 0x03500000 wraps or lands at or above
//! 0x7ca00000) takes the exact sequence: the result is right for every input, whatever
//! `RSQ64H`'s bits within its error (the tests move them by ±2 ulps). ptxas rounds the
//! window's operands with one `DFMA` (RN(g + r·h)), trusting its unit's bits near the
//! midpoints; the finish here costs five instructions more (`DFMA.RP`, `DSETP`, two
//! `SEL`s, the successor's two integer adds against one `DFMA`): the price of a proof that
//! does not depend on `RSQ64H`'s bits. Its slow path handles [2^-1022, 2^-970) with the
//! same `RM`/`RP` finish and scales subnormals by 2^106; ours runs the exact sequence.
//!
//! `rcp.rn.f32` (a division of the constant 1.0) has its own pair, after ptxas's reciprocal:
//! the site is `MUFU.RCP r, y ; FFMA t, y, -r, 1.0 ; FFMA q, r, t, r` (one Newton step, the
//! dividend's multiply and second step of the division's fast path dropped), its check
//! `2^-126 <= |y| < 2^126` (y and 1/y normal: two `FSETP`s where ptxas tests the exponent
//! with three integer instructions) and the same call shape. Its subroutine
//! ([`frcp_slow_path`]) gives each remaining class of operand its own short exit: zeros,
//! infinities and NaN after `MUFU.RCP` (whose result is exact there), subnormals after the
//! fast path on `y·2^64`; only `|y| >= 2^126` (a subnormal reciprocal) runs the exact
//! sequence. (The division's `FCHK` would send every special operand through all of it,
//! about 80 instructions: Rodinia's `IMGVF_kernel` takes reciprocals of zeros.) ptxas puts
//! its reciprocal's fast path after the `CAL` (`@P BRA fast ; CAL ; SYNC ; fast: ... ;
//! SYNC`); here both use the division's shape, one instruction fewer for the common lane.
//!
//! # f32: `sqrt.rn.f32` (no `.ftz`)
//!
//! The same shape once more (unless `no_subroutines`, which keeps the inline sequence
//! [`Seq::sqrt_f32`]): ptxas 11.8's site, operation for operation, and one shared
//! subroutine ([`fsqrt_slow_path`], `CAL_FSQRT`, from `SLOW_X` into `SLOW_Q`) for the
//! operands outside its window:
//!
//! ```text
//! IADD32I w, x, -0xd000000 ; MUFU.RSQ y, x                 y ≈ 1/√x
//! ISETP.GT.U32 slow, w, c[0x2][0x727fffff]                 x outside [2^-101, 2^128)
//! FMUL.FTZ s, x, y ; FMUL.FTZ h, y, 0.5                    s ≈ √x, h ≈ 1/(2√x)
//! FFMA r, s, -s, x ; FFMA q, r, h, s                       q = RN(s + (x - s²)·h)
//! SSY after ; @!slow SYNC ; CAL fsqrt ; SYNC
//! ```
//!
//! One Newton step, rounded once: with y = (1 + ε)/√x and s = √x(1 + e) (e from ε and the
//! product's rounding), x - s² is exact (FFMA) and s + (x - s²)·h = √x(1 - e²/2 - e·ε'), ε'
//! h's relative error: within about 2^-46 of √x, so RN of it is RN(√x) unless √x lies that
//! close to a rounding midpoint. A root can (an f32 root's distance to a midpoint is at
//! least about 2^-27 of its ulp, not more), so like the division's `FCHK` path this one is
//! right only where the unit returns what ptxas counts on. On the simulator's model (the
//! correctly rounded reciprocal root) it is right for every operand of the window, checked
//! exhaustively (all 1,920,991,232 of them) when it was written, and in the tests on a
//! stride of the window (`lower_approx`); with `RSQ` moved by one ulp it fails on 229
//! operands in 2^31. `--no-subroutines` keeps the inline sequence, which does not depend on
//! the unit's bits. The window (bit patterns 0x0d000000..=0x7f7fffff) leaves out
//! negatives, zeros, subnormals and tiny normals (below 2^-101), infinities and NaN. The
//! subroutine, as ptxas's, sorts those: the specials leave after seven instructions (their
//! `RET` included) with their IEEE roots (NaN for negatives), and the small positive ones
//! take the same step on x·2^64 (inside the window), the root scaled back by 2^-32 (exact:
//! the root of the smallest subnormal is 2^-74.5, normal). The common lane runs 11
//! instructions instead of the inline sequence's 24, a negative operand 18.

use super::approx::Seq;
use super::{Class, Lowerer};
use crate::ir::float::{FloatFmt, Round};
use crate::ir::Value;
use crate::lower::abi::{
    DSLOW_PAIRS, DSLOW_Q, DSLOW_WORDS, DSLOW_X, DSLOW_Y, SLOW_PREDS, SLOW_Q, SLOW_TEMPS, SLOW_X,
    SLOW_Y,
};
use crate::lower::inst::{Role, Sm50Inst, LOCAL_BRANCH};
use crate::lower::lea::Loc;
use crate::lower::LowerError;
use crate::machinst::{OpSpec, PhysReg, Reg, RegKind, VReg};
use crate::mufu::Func;
use crate::sm50::{self, Field, Form};
use cranelift_entity::EntityRef;

// FSETP comparison codes (ISETP's are the same numbers for these) and LOP32I operations.
use sm50::values::fsetp::cmp::{EQ, GE, GEU, GT, LT, NAN as NAN_CMP, NE};
use sm50::values::lop32i::op::{AND, OR, XOR};

/// An optional guard predicate: (operand, negated).
type Guard = Option<(u8, bool)>;

fn f32i(x: f32) -> u64 {
    let b = x.to_bits();
    debug_assert_eq!(b & 0xfff, 0, "{x} is not an f32i immediate");
    u64::from(((b >> 12) & 0x7ffff) | ((b >> 31) << 19))
}

impl Seq {
    /// `inst` with its guard and operands.
    fn g(&mut self, guard: Guard, mut inst: sm50::Inst, refs: &[(Field, u8)]) {
        let mut refs = refs.to_vec();
        if let Some((p, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            refs.push((Field::Pg, p));
        }
        self.put(inst, &refs);
    }

    /// `FSETP.cmp{.FTZ}.AND|OR p, PT, {|}a{|}, imm, acc` (`acc` None = PT).
    #[allow(clippy::too_many_arguments)]
    fn fsetp_imm(
        &mut self,
        p: u8,
        cmp: u64,
        ftz: bool,
        a: u8,
        abs: bool,
        imm: f32,
        acc: Option<(u8, u64)>,
    ) {
        let mut inst = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, cmp)
            .with(Field::Ftz, ftz as u64)
            .with(Field::Absa, abs as u64)
            .with(Field::ImmF32i, f32i(imm));
        let mut refs = vec![(Field::Pd0, p), (Field::Ra, a)];
        if let Some((acc, bop)) = acc {
            inst.set(Field::Bop, bop);
            refs.push((Field::Pacc, acc));
        }
        self.put(inst, &refs);
    }

    /// `FSETP.cmp.AND|OR p, PT, a, b, acc`.
    fn fsetp_reg(&mut self, p: u8, cmp: u64, a: u8, b: u8, acc: Option<(u8, u64)>) {
        let mut inst = sm50::Inst::new(Form::FSETP_R).with(Field::Cmp, cmp);
        let mut refs = vec![(Field::Pd0, p), (Field::Ra, a), (Field::Rb, b)];
        if let Some((acc, bop)) = acc {
            inst.set(Field::Bop, bop);
            refs.push((Field::Pacc, acc));
        }
        self.put(inst, &refs);
    }

    /// `ISETP.cmp{.U32}.AND p, PT, a, imm, acc` (`acc` None = PT; the codes are FSETP's).
    fn isetp_imm(&mut self, p: u8, cmp: u64, signed: bool, a: u8, imm: i64, acc: Option<u8>) {
        let inst = sm50::Inst::new(Form::ISETP_I)
            .with(Field::Cmp, cmp)
            .with(Field::Sgn, signed as u64)
            .with_signed(Field::ImmImm20s, imm);
        let mut refs = vec![(Field::Pd0, p), (Field::Ra, a)];
        if let Some(acc) = acc {
            refs.push((Field::Pacc, acc));
        }
        self.put(inst, &refs);
    }

    fn lop32i(&mut self, d: u8, a: u8, op: u64, imm: u32) {
        let inst = sm50::Inst::new(Form::LOP32I)
            .with(Field::Op, op)
            .with(Field::Imm, u64::from(imm));
        self.put(inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `{@g} IADD32I d, {-}a, imm`.
    fn iadd32i_n(&mut self, guard: Guard, d: u8, nega: bool, a: u8, imm: i32) {
        let inst = sm50::Inst::new(Form::IADD32I)
            .with(Field::Imm, imm as u32 as u64)
            .with(Field::Nega, nega as u64);
        self.g(guard, inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `IADD d, a, {-}b`.
    fn iadd_r(&mut self, d: u8, a: u8, negb: bool, b: u8) {
        let inst = sm50::Inst::new(Form::IADD_R).with(Field::Negb, negb as u64);
        self.put(inst, &[(Field::Rd, d), (Field::Ra, a), (Field::Rb, b)]);
    }

    /// `IMNMX d, a, imm, PT` (min) or `!PT` (max), signed.
    fn imnmx_imm(&mut self, d: u8, a: u8, imm: i64, max: bool) {
        let inst = sm50::Inst::new(Form::IMNMX_I)
            .with(Field::Sgn, 1)
            .with(Field::Paccn, max as u64)
            .with_signed(Field::ImmImm20s, imm);
        self.put(inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `IMNMX d, a, b, PT` (signed min).
    fn imin_r(&mut self, d: u8, a: u8, b: u8) {
        let inst = sm50::Inst::new(Form::IMNMX_R).with(Field::Sgn, 1);
        self.put(inst, &[(Field::Rd, d), (Field::Ra, a), (Field::Rb, b)]);
    }

    /// `BFE.U32 d, a, 0x817`: an f32's biased exponent.
    fn exponent(&mut self, d: u8, a: u8) {
        let inst = sm50::Inst::new(Form::BFE_I).with(Field::ImmImm20s, 0x817);
        self.put(inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `FFMA{.rnd} d, {-}a, b, c`.
    fn ffma_n(&mut self, d: u8, nega: bool, a: u8, b: u8, c: u8) {
        // FFMA has no A negation; negate B instead (same product).
        let inst = sm50::Inst::new(Form::FFMA_R).with(Field::Negb, nega as u64);
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

    /// `{@g} MOV32I d, bits`.
    fn mov32i_bits(&mut self, guard: Guard, d: u8, bits: u32) {
        let inst = sm50::Inst::new(Form::MOV32I).with(Field::Imm, u64::from(bits));
        self.g(guard, inst, &[(Field::Rd, d)]);
    }

    /// `f32 div`, see the module essay. `d` the result; `x`, `y` the operands; `t` eleven
    /// 32-bit temporaries; `p` three predicates.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fdiv(&mut self, rnd: Round, ftz: bool, d: u8, x: u8, y: u8, t: &[u8], p: &[u8]) {
        let [ta, tb, a, b, ea, eb, r, q, k, s, w] = t[..] else {
            panic!("fdiv needs 11 temporaries");
        };
        let [p0, p1, p2] = p[..] else {
            panic!("fdiv needs 3 predicates");
        };
        // Normalise both operands: subnormals scaled by 2^24 (their zero and special values
        // give garbage here that the end overwrites).
        for (tx, mx, ex, src) in [(ta, a, ea, x), (tb, b, eb, y)] {
            self.fsetp_imm(p0, LT, false, src, true, f32::MIN_POSITIVE, None);
            self.mov(tx, src);
            self.fmul_i(Some((p0, false)), tx, src, 16_777_216.0);
            self.exponent(ex, tx);
            self.lop32i(mx, tx, AND, 0x007f_ffff);
            self.lop32i(mx, mx, OR, 0x3f80_0000);
            self.iadd32i_n(Some((p0, false)), ex, false, ex, -24);
        }
        self.iadd_r(k, ea, true, eb);
        // q ≈ A/B within an ulp, then truncated to 24 bits with the exact residual's sign.
        self.mufu(Func::Rcp, r, b);
        self.fmul_r(None, q, a, r, false);
        self.ffma_n(w, true, b, q, a);
        self.ffma(q, w, false, r, q);
        self.ffma_n(w, true, b, q, a);
        self.fsetp_imm(p0, LT, false, w, false, 0.0, None);
        self.iadd32i_n(Some((p0, false)), q, false, q, -1);
        // s = max(min(150 - exp(q), k + 149), -2); ta = 2^s, tb = 2^-s, ea = 2^(-s-1).
        self.exponent(eb, q);
        self.iadd32i_n(None, s, true, eb, 150);
        self.iadd32i_n(None, w, false, k, 149);
        self.imin_r(s, s, w);
        self.imnmx_imm(s, s, -2, true);
        let sh = sm50::Inst::new(Form::ISCADD32I)
            .with(Field::Imm, 0x3f80_0000)
            .with(Field::S, 23);
        self.put(sh, &[(Field::Rd, ta), (Field::Ra, s)]);
        self.iadd32i_n(None, tb, true, ta, 0x7f00_0000);
        self.iadd32i_n(None, ea, true, ta, 0x7e80_0000);
        // N = trunc(q·2^s) (as a float in ta, an integer in s); R = A - B·N·2^-s in w;
        // h = B·2^(-s-1) in ea.
        self.fmul_r(None, ta, q, ta, false);
        let trunc = sm50::Inst::new(Form::F2F_R)
            .with(Field::Dsz, sm50::values::f2f::dsz::F32)
            .with(Field::Ssz, sm50::values::f2f::ssz::F32)
            .with(Field::Ri, 1)
            .with(Field::Rm, sm50::values::f2f::rm::RZ);
        self.put(trunc, &[(Field::Rd, ta), (Field::Rb, ta)]);
        let f2i = sm50::Inst::new(Form::F2I_R)
            .with(Field::Dt, sm50::values::f2i::dt::U32)
            .with(Field::Ssz, sm50::values::f2i::ssz::F32)
            .with(Field::Rnd, sm50::values::f2i::rnd::TRUNC);
        self.put(f2i, &[(Field::Rd, s), (Field::Rb, ta)]);
        self.fmul_r(None, ta, ta, tb, false);
        self.ffma_n(w, true, b, ta, a);
        self.fmul_r(None, ea, b, ea, false);
        // The sign: bit 31 of tb.
        let xor = sm50::Inst::new(Form::LOP_R).with(Field::Op, XOR);
        self.put(xor, &[(Field::Rd, tb), (Field::Ra, x), (Field::Rb, y)]);
        // Round N up?
        let up = match rnd {
            Round::Rz => false,
            Round::Rn => {
                self.lop32i(a, s, AND, 1);
                self.isetp_imm(p0, NE, false, a, 0, None);
                self.fsetp_reg(p0, EQ, w, ea, Some((p0, AND)));
                self.fsetp_reg(p0, GT, w, ea, Some((p0, OR)));
                true
            }
            Round::Rp | Round::Rm => {
                let cmp = if rnd == Round::Rp { GE } else { LT };
                self.isetp_imm(p0, cmp, true, tb, 0, None);
                self.fsetp_imm(p0, NE, false, w, false, 0.0, Some((p0, AND)));
                true
            }
        };
        if up {
            self.iadd32i_n(Some((p0, false)), s, false, s, 1);
        }
        // Exponent base max(ef + 126, 0) = max(k + exp(q) - 1, 0); overflow when >= 254.
        self.iadd_r(k, k, false, eb);
        self.iadd32i_n(None, k, false, k, -1);
        self.imnmx_imm(k, k, 0, true);
        let sc = sm50::Inst::new(Form::ISCADD_R).with(Field::S, 23);
        self.put(sc, &[(Field::Rd, d), (Field::Ra, k), (Field::Rb, s)]);
        // Overflow: rn → inf; rz → max; rp → inf if positive else max; rm the reverse.
        self.isetp_imm(p0, GT, true, k, 253, None);
        let big = match rnd {
            Round::Rn => 0x7f80_0000,
            _ => 0x7f7f_ffff,
        };
        self.mov32i_bits(Some((p0, false)), d, big);
        if matches!(rnd, Round::Rp | Round::Rm) {
            let cmp = if rnd == Round::Rp { GE } else { LT };
            self.isetp_imm(p1, cmp, true, tb, 0, Some(p0));
            self.mov32i_bits(Some((p1, false)), d, 0x7f80_0000);
        }
        if ftz {
            self.lop32i(a, d, AND, 0x7f80_0000);
            self.isetp_imm(p0, EQ, false, a, 0, None);
            self.mov32i_bits(Some((p0, false)), d, 0);
        }
        // Specials. p1: the result is zero (0/y, x/inf); p2: infinite (x/0, inf/y).
        self.fsetp_imm(p1, EQ, ftz, x, false, 0.0, None);
        self.fsetp_imm(p1, EQ, false, y, true, f32::INFINITY, Some((p1, OR)));
        self.fsetp_imm(p2, EQ, ftz, y, false, 0.0, None);
        self.fsetp_imm(p2, EQ, false, x, true, f32::INFINITY, Some((p2, OR)));
        self.mov32i_bits(Some((p1, false)), d, 0);
        self.mov32i_bits(Some((p2, false)), d, 0x7f80_0000);
        self.lop32i(tb, tb, AND, 0x8000_0000);
        let or = sm50::Inst::new(Form::LOP_R).with(Field::Op, OR);
        self.put(or, &[(Field::Rd, d), (Field::Ra, d), (Field::Rb, tb)]);
        // NaN: a NaN operand, 0/0 or inf/inf.
        self.fsetp_imm(p1, EQ, ftz, x, false, 0.0, None);
        self.fsetp_imm(p1, EQ, ftz, y, false, 0.0, Some((p1, AND)));
        self.fsetp_reg(p1, NAN_CMP, x, y, Some((p1, OR)));
        self.fsetp_imm(p2, EQ, false, x, true, f32::INFINITY, None);
        self.fsetp_imm(p2, EQ, false, y, true, f32::INFINITY, Some((p2, AND)));
        self.mov32i_bits(Some((p1, false)), d, crate::mufu::NAN);
        self.mov32i_bits(Some((p2, false)), d, crate::mufu::NAN);
    }
}

/// A 64-bit register pair operand: (operand number, word).
type W = (u8, u8);

fn lo(r: u8) -> W {
    (r, 0)
}

fn hi(r: u8) -> W {
    (r, 1)
}

/// f64 immediates (the 20-bit `f64i` form: the low 44 bits must be zero).
fn f64i(x: f64) -> u64 {
    let b = x.to_bits();
    debug_assert_eq!(b & ((1 << 44) - 1), 0, "{x} is not an f64i immediate");
    b >> 44
}

impl Seq {
    /// `inst` with operands naming words of register groups.
    fn pw(&mut self, guard: Guard, mut inst: sm50::Inst, refs: &[(Field, W)]) {
        let mut r: Vec<(Field, u8, u8)> = refs.iter().map(|&(f, (o, w))| (f, o, w)).collect();
        if let Some((p, neg)) = guard {
            inst.set(Field::Pgn, neg as u64);
            r.push((Field::Pg, p, 0));
        }
        self.i.piece(inst, &r);
    }

    /// `DSETP.cmp.AND|OR p, PT, {|}a{|}, imm, acc`.
    fn dsetp_imm(&mut self, p: u8, cmp: u64, a: u8, abs: bool, imm: f64, acc: Option<(u8, u64)>) {
        let mut inst = sm50::Inst::new(Form::DSETP_I)
            .with(Field::Cmp, cmp)
            .with(Field::Absa, abs as u64)
            .with(Field::ImmF64i, f64i(imm));
        let mut refs = vec![(Field::Pd0, (p, 0)), (Field::Ra, lo(a))];
        if let Some((acc, bop)) = acc {
            inst.set(Field::Bop, bop);
            refs.push((Field::Pacc, (acc, 0)));
        }
        self.pw(None, inst, &refs);
    }

    /// `DSETP.cmp.AND|OR p, PT, a, b, acc`.
    fn dsetp_reg(&mut self, p: u8, cmp: u64, a: u8, b: u8, acc: Option<(u8, u64)>) {
        let mut inst = sm50::Inst::new(Form::DSETP_R).with(Field::Cmp, cmp);
        let mut refs = vec![(Field::Pd0, (p, 0)), (Field::Ra, lo(a)), (Field::Rb, lo(b))];
        if let Some((acc, bop)) = acc {
            inst.set(Field::Bop, bop);
            refs.push((Field::Pacc, (acc, 0)));
        }
        self.pw(None, inst, &refs);
    }

    /// `DFMA d, a, {-}b, c`.
    fn dfma(&mut self, d: u8, a: u8, negb: bool, b: u8, c: u8) {
        let inst = sm50::Inst::new(Form::DFMA_R).with(Field::Negb, negb as u64);
        let refs = [
            (Field::Rd, lo(d)),
            (Field::Ra, lo(a)),
            (Field::Rb, lo(b)),
            (Field::Rc, lo(c)),
        ];
        self.pw(None, inst, &refs);
    }

    /// `DMUL d, a, b`.
    fn dmul(&mut self, d: u8, a: u8, b: u8) {
        let refs = [(Field::Rd, lo(d)), (Field::Ra, lo(a)), (Field::Rb, lo(b))];
        self.pw(None, sm50::Inst::new(Form::DMUL_R), &refs);
    }

    /// `{@g} MOV32I d, bits` into a word.
    fn mov32w(&mut self, guard: Guard, d: W, bits: u32) {
        let inst = sm50::Inst::new(Form::MOV32I).with(Field::Imm, u64::from(bits));
        self.pw(guard, inst, &[(Field::Rd, d)]);
    }

    /// `MOV d, a` between words.
    fn movw(&mut self, d: W, a: W) {
        self.pw(
            None,
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, d), (Field::Rb, a)],
        );
    }

    /// `LOP32I.op d, a, imm` on words.
    fn lopw(&mut self, d: W, a: W, op: u64, imm: u32) {
        let inst = sm50::Inst::new(Form::LOP32I)
            .with(Field::Op, op)
            .with(Field::Imm, u64::from(imm));
        self.pw(None, inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `{@g} IADD32I d, {-}a, imm` on words.
    fn iaddw(&mut self, guard: Guard, d: W, nega: bool, a: W, imm: i32) {
        let inst = sm50::Inst::new(Form::IADD32I)
            .with(Field::Imm, imm as u32 as u64)
            .with(Field::Nega, nega as u64);
        self.pw(guard, inst, &[(Field::Rd, d), (Field::Ra, a)]);
    }

    /// `{@g} IADD32I.CC lo, lo, k ; {@g} IADD.X hi, hi, -(k<0)`: a 64-bit add of k = ±1.
    fn add64(&mut self, guard: Guard, r: u8, k: i32) {
        let inst = sm50::Inst::new(Form::IADD32I)
            .with(Field::Imm, k as u32 as u64)
            .with(Field::Cc, 1);
        self.pw(guard, inst, &[(Field::Rd, lo(r)), (Field::Ra, lo(r))]);
        let inst = sm50::Inst::new(Form::IADD_I)
            .with(Field::X, 1)
            .with_signed(Field::ImmImm20s, if k < 0 { -1 } else { 0 });
        self.pw(guard, inst, &[(Field::Rd, hi(r)), (Field::Ra, hi(r))]);
    }

    /// The 64-bit constant `bits` into the pair `d` (guarded).
    fn mov64(&mut self, guard: Guard, d: u8, bits: u64) {
        self.mov32w(guard, lo(d), bits as u32);
        self.mov32w(guard, hi(d), (bits >> 32) as u32);
    }

    /// `f64 div`, the f32 algorithm of the module essay with DFMA/DMUL, 53-bit significands
    /// and 64-bit integer steps. `t`: six 64-bit temporaries, `u`: four 32-bit ones.
    ///
    /// Every temporary of the sequence lives across all of it (the allocator sees one
    /// instruction), beside the operands and the result: its pairs are what sets the
    /// registers of a kernel whose peak is a division (rodinia's `srad_cuda_1`). So a pair is
    /// reused once its value is dead: the operands are normalised in place (A and B are the
    /// copies of x and y, scaled, with their exponent fields replaced), N's float takes q's
    /// pair (q dies in the product), N's integer r's (dead after the correction), h A's
    /// (dead after the residual). Trade-off: none in instructions (two `MOV`s fewer per
    /// operand), three pairs fewer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ddiv(&mut self, rnd: Round, d: u8, x: u8, y: u8, t: &[u8], u: &[u8], p: &[u8]) {
        let [a, b, r, q, w, p2] = t[..] else {
            panic!("ddiv needs 6 pairs");
        };
        // Names of the reused pairs in the later steps (see above).
        let (ta, tb, h) = (q, r, a);
        let [ea, eb, k, s] = u[..] else {
            panic!("ddiv needs 4 words");
        };
        let [p0, p1, p2p] = p[..] else {
            panic!("ddiv needs 3 predicates");
        };
        let exp = |s: &mut Seq, d: u8, a: W| {
            let inst = sm50::Inst::new(Form::BFE_I).with(Field::ImmImm20s, 0xb14);
            s.pw(None, inst, &[(Field::Rd, (d, 0)), (Field::Ra, a)]);
        };
        for (mx, ex, src) in [(a, ea, x), (b, eb, y)] {
            self.dsetp_imm(p0, LT, src, true, f64::MIN_POSITIVE, None);
            self.movw(lo(mx), lo(src));
            self.movw(hi(mx), hi(src));
            let mul = sm50::Inst::new(Form::DMUL_I).with(Field::ImmF64i, f64i(2f64.powi(54)));
            self.pw(
                Some((p0, false)),
                mul,
                &[(Field::Rd, lo(mx)), (Field::Ra, lo(src))],
            );
            exp(self, ex, hi(mx));
            self.lopw(hi(mx), hi(mx), AND, 0x000f_ffff);
            self.lopw(hi(mx), hi(mx), OR, 0x3ff0_0000);
            self.iaddw(Some((p0, false)), (ex, 0), false, (ex, 0), -54);
        }
        self.iadd_r(k, ea, true, eb);
        // r ≈ 1/B: RCP64H's high word, one Newton step (error ~2^-36 even off by 2 ulps);
        // q = A·r corrected once: within an ulp; then truncated by the residual's sign.
        self.mov64(None, w, 1f64.to_bits());
        self.mov32w(None, lo(r), 0);
        let rcp = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rcp64h.code());
        self.pw(None, rcp, &[(Field::Rd, hi(r)), (Field::Ra, hi(b))]);
        self.dfma(q, b, true, r, w);
        self.dfma(r, r, false, q, r);
        self.dmul(q, a, r);
        self.dfma(w, b, true, q, a);
        self.dfma(q, w, false, r, q);
        self.dfma(w, b, true, q, a);
        self.dsetp_imm(p0, LT, w, false, 0.0, None);
        self.add64(Some((p0, false)), q, -1);
        // s = max(min(1075 - exp(q), k + 1074), -2); s then holds 2^s's high word.
        exp(self, eb, hi(q));
        self.iadd32i_n(None, s, true, eb, 1075);
        self.iadd32i_n(None, ea, false, k, 1074);
        self.imin_r(s, s, ea);
        self.imnmx_imm(s, s, -2, true);
        let sh = sm50::Inst::new(Form::ISCADD32I)
            .with(Field::Imm, 0x3ff0_0000)
            .with(Field::S, 20);
        self.put(sh, &[(Field::Rd, s), (Field::Ra, s)]);
        self.mov32w(None, lo(p2), 0);
        self.movw(hi(p2), (s, 0));
        // N = trunc(q·2^s): float in ta, integer in tb; R = A - B·N·2^-s in w; h = B·2^(-s-1).
        self.dmul(ta, q, p2);
        let trunc = sm50::Inst::new(Form::F2F_R)
            .with(Field::Dsz, sm50::values::f2f::dsz::F64)
            .with(Field::Ssz, sm50::values::f2f::ssz::F64)
            .with(Field::Ri, 1)
            .with(Field::Rm, sm50::values::f2f::rm::RZ);
        self.pw(None, trunc, &[(Field::Rd, lo(ta)), (Field::Rb, lo(ta))]);
        let f2i = sm50::Inst::new(Form::F2I_R)
            .with(Field::Dt, sm50::values::f2i::dt::U64)
            .with(Field::Ssz, sm50::values::f2i::ssz::F64)
            .with(Field::Rnd, sm50::values::f2i::rnd::TRUNC);
        self.pw(None, f2i, &[(Field::Rd, lo(tb)), (Field::Rb, lo(ta))]);
        self.iaddw(None, hi(p2), true, (s, 0), 0x7fe0_0000);
        self.dmul(ta, ta, p2);
        self.dfma(w, b, true, ta, a);
        self.iaddw(None, hi(p2), true, (s, 0), 0x7fd0_0000);
        self.dmul(h, b, p2);
        let xor = sm50::Inst::new(Form::LOP_R).with(Field::Op, XOR);
        self.pw(
            None,
            xor,
            &[(Field::Rd, (s, 0)), (Field::Ra, hi(x)), (Field::Rb, hi(y))],
        );
        let up = match rnd {
            Round::Rz => false,
            Round::Rn => {
                self.lopw((ea, 0), lo(tb), AND, 1);
                self.isetp_imm(p0, NE, false, ea, 0, None);
                self.dsetp_reg(p0, EQ, w, h, Some((p0, AND)));
                self.dsetp_reg(p0, GT, w, h, Some((p0, OR)));
                true
            }
            Round::Rp | Round::Rm => {
                let cmp = if rnd == Round::Rp { GE } else { LT };
                self.isetp_imm(p0, cmp, true, s, 0, None);
                self.dsetp_imm(p0, NE, w, false, 0.0, Some((p0, AND)));
                true
            }
        };
        if up {
            self.add64(Some((p0, false)), tb, 1);
        }
        // Exponent base max(k + exp(q) - 1, 0) added to N's high word; overflow at >= 2046.
        self.iadd_r(k, k, false, eb);
        self.iadd32i_n(None, k, false, k, -1);
        self.imnmx_imm(k, k, 0, true);
        let sc = sm50::Inst::new(Form::ISCADD_R).with(Field::S, 20);
        self.pw(
            None,
            sc,
            &[(Field::Rd, hi(d)), (Field::Ra, (k, 0)), (Field::Rb, hi(tb))],
        );
        self.movw(lo(d), lo(tb));
        self.isetp_imm(p0, GT, true, k, 2045, None);
        let inf = f64::INFINITY.to_bits();
        let big = if rnd == Round::Rn { inf } else { inf - 1 };
        self.mov64(Some((p0, false)), d, big);
        if matches!(rnd, Round::Rp | Round::Rm) {
            let cmp = if rnd == Round::Rp { GE } else { LT };
            self.isetp_imm(p1, cmp, true, s, 0, Some(p0));
            self.mov64(Some((p1, false)), d, inf);
        }
        // Specials, the sign, NaN (as in f32).
        self.dsetp_imm(p1, EQ, x, false, 0.0, None);
        self.dsetp_imm(p1, EQ, y, true, f64::INFINITY, Some((p1, OR)));
        self.dsetp_imm(p2p, EQ, y, false, 0.0, None);
        self.dsetp_imm(p2p, EQ, x, true, f64::INFINITY, Some((p2p, OR)));
        self.mov64(Some((p1, false)), d, 0);
        self.mov64(Some((p2p, false)), d, inf);
        self.lopw((s, 0), (s, 0), AND, 0x8000_0000);
        let or = sm50::Inst::new(Form::LOP_R).with(Field::Op, OR);
        self.pw(
            None,
            or,
            &[(Field::Rd, hi(d)), (Field::Ra, hi(d)), (Field::Rb, (s, 0))],
        );
        // 0/0 and inf/inf: the invalid NaN; a NaN operand: the first one, quieted
        // (`ir::float::div`).
        self.dsetp_imm(p1, EQ, x, false, 0.0, None);
        self.dsetp_imm(p1, EQ, y, false, 0.0, Some((p1, AND)));
        self.dsetp_imm(p2p, EQ, x, true, f64::INFINITY, None);
        self.dsetp_imm(p2p, EQ, y, true, f64::INFINITY, Some((p2p, AND)));
        let nan = crate::ir::float::invalid_nan(crate::ir::float::FloatFmt::F64);
        self.mov64(Some((p1, false)), d, nan);
        self.mov64(Some((p2p, false)), d, nan);
        self.nan_through(p1, d, y);
        self.nan_through(p1, d, x);
    }

    /// `DSETP.NAN p, a, a ; @p DMUL d, a, 1.0`: a NaN `a` becomes the result, quieted (DMUL
    /// passes a NaN operand through, `ir::float::mul`).
    fn nan_through(&mut self, p: u8, d: u8, a: u8) {
        self.dsetp_reg(p, NAN_CMP, a, a, None);
        let one = sm50::Inst::new(Form::DMUL_I).with(Field::ImmF64i, f64i(1.0));
        self.pw(
            Some((p, false)),
            one,
            &[(Field::Rd, lo(d)), (Field::Ra, lo(a))],
        );
    }
    /// `sqrt.<rnd>.f64` of the positive finite `x`, specials patched at the end:
    /// x = X·2^(2j), X in [1, 4) (a subnormal first scaled by 2^54); RSQ64H seed y, one
    /// coupled Newton step g ≈ √X, h ≈ 1/(2√X), one residual correction g += (X - g²)·h
    /// (within an ulp), truncation by the exact residual's sign, then up by one ulp when
    /// rn: X - g² > g·2^-52 (both sides exact multiples of 2^-104 unless equal, so the
    /// compare of the rounded residual decides; √ never ties), rp: X - g² != 0. The result
    /// is g with j added to its exponent: a root is never subnormal and never overflows.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn dsqrt(&mut self, rnd: Round, d: u8, x: u8, t: &[u8], u: &[u8], p: &[u8]) {
        let [tx, xm, g, h, e, c] = t[..] else {
            panic!("dsqrt needs 6 pairs");
        };
        let [ex, j, par] = u[..] else {
            panic!("dsqrt needs 3 words");
        };
        let [p0, p1] = p[..] else {
            panic!("dsqrt needs 2 predicates");
        };
        self.dsetp_imm(p0, LT, x, true, f64::MIN_POSITIVE, None);
        self.movw(lo(tx), lo(x));
        self.movw(hi(tx), hi(x));
        let mul = sm50::Inst::new(Form::DMUL_I).with(Field::ImmF64i, f64i(2f64.powi(54)));
        self.pw(
            Some((p0, false)),
            mul,
            &[(Field::Rd, lo(tx)), (Field::Ra, lo(x))],
        );
        let bfe = sm50::Inst::new(Form::BFE_I).with(Field::ImmImm20s, 0xb14);
        self.pw(None, bfe, &[(Field::Rd, (ex, 0)), (Field::Ra, hi(tx))]);
        self.iaddw(None, (ex, 0), false, (ex, 0), -1023);
        self.iaddw(Some((p0, false)), (ex, 0), false, (ex, 0), -54);
        // E = 2j + par: X = significand·2^par.
        self.lop32i(par, ex, AND, 1);
        let shr = sm50::Inst::new(Form::SHR_I)
            .with(Field::Sgn, 1)
            .with(Field::ImmImm20s, 1);
        self.put(shr, &[(Field::Rd, j), (Field::Ra, ex)]);
        self.movw(lo(xm), lo(tx));
        self.lopw(hi(xm), hi(tx), AND, 0x000f_ffff);
        let sc = sm50::Inst::new(Form::ISCADD_R).with(Field::S, 20);
        self.pw(
            None,
            sc,
            &[
                (Field::Rd, hi(xm)),
                (Field::Ra, (par, 0)),
                (Field::Rb, hi(xm)),
            ],
        );
        self.iaddw(None, hi(xm), false, hi(xm), 0x3ff0_0000);
        // Seed and refinement.
        self.mov32w(None, lo(h), 0);
        let rsq = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rsq64h.code());
        self.pw(None, rsq, &[(Field::Rd, hi(h)), (Field::Ra, hi(xm))]);
        self.dmul(g, xm, h);
        let half = sm50::Inst::new(Form::DMUL_I).with(Field::ImmF64i, f64i(0.5));
        self.pw(None, half, &[(Field::Rd, lo(h)), (Field::Ra, lo(h))]);
        self.mov64(None, c, 0.5f64.to_bits());
        self.dfma(e, g, true, h, c);
        self.dfma(g, g, false, e, g);
        self.dfma(h, h, false, e, h);
        self.dfma(e, g, true, g, xm);
        self.dfma(g, e, false, h, g);
        // Truncate, then round.
        self.dfma(e, g, true, g, xm);
        self.dsetp_imm(p0, LT, e, false, 0.0, None);
        self.add64(Some((p0, false)), g, -1);
        self.dfma(e, g, true, g, xm);
        let up = match rnd {
            Round::Rz | Round::Rm => false,
            Round::Rn => {
                let ulp = sm50::Inst::new(Form::DMUL_I).with(Field::ImmF64i, f64i(2f64.powi(-52)));
                self.pw(None, ulp, &[(Field::Rd, lo(c)), (Field::Ra, lo(g))]);
                self.dsetp_reg(p0, GT, e, c, None);
                true
            }
            Round::Rp => {
                self.dsetp_imm(p0, NE, e, false, 0.0, None);
                true
            }
        };
        if up {
            self.add64(Some((p0, false)), g, 1);
        }
        let sc = sm50::Inst::new(Form::ISCADD_R).with(Field::S, 20);
        self.pw(
            None,
            sc,
            &[(Field::Rd, hi(d)), (Field::Ra, (j, 0)), (Field::Rb, hi(g))],
        );
        self.movw(lo(d), lo(g));
        // ±0 and +inf are their own roots; negatives and NaN give NaN.
        self.dsetp_imm(p0, EQ, x, false, 0.0, None);
        self.dsetp_imm(p0, EQ, x, false, f64::INFINITY, Some((p0, OR)));
        self.pw(
            Some((p0, false)),
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, lo(d)), (Field::Rb, lo(x))],
        );
        self.pw(
            Some((p0, false)),
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, hi(d)), (Field::Rb, hi(x))],
        );
        self.dsetp_imm(p1, LT, x, false, 0.0, None);
        let nan = crate::ir::float::invalid_nan(FloatFmt::F64);
        self.mov64(Some((p1, false)), d, nan);
        self.nan_through(p1, d, x);
    }
}

/// The operands of a slow-path subroutine (operand indices of its instruction).
struct SlowOps {
    /// `SLOW_Q`: the fast result on the way in, the exact one on the way out.
    d: u8,
    /// `SLOW_X`, `SLOW_Y`: the dividend and the divisor.
    x: u8,
    y: u8,
    /// `SLOW_TEMPS` and `SLOW_PREDS`, all written.
    t: Vec<u8>,
    p: Vec<u8>,
}

/// A slow-path subroutine's instruction with its fixed operands: `SLOW_Q`, the scratch
/// registers and predicates as early defs, `SLOW_X` as `x_spec` says (read by the division,
/// written by the reciprocal), `SLOW_Y` read.
fn slow_path_seq(x_spec: OpSpec) -> (Seq, SlowOps) {
    let mut s = Seq {
        i: Sm50Inst::new(Role::Plain),
    };
    let d = s.i.op(Reg::Phys(SLOW_Q), OpSpec::early_def());
    let t = early_defs(&mut s, &SLOW_TEMPS);
    let p = pred_early_defs(&mut s);
    let x = s.i.op(Reg::Phys(SLOW_X), x_spec);
    let y = s.i.op(Reg::Phys(SLOW_Y), OpSpec::use_());
    (s, SlowOps { d, x, y, t, p })
}

/// The physical registers `regs` as early defs of `s` (a subroutine's scratch registers).
fn early_defs(s: &mut Seq, regs: &[PhysReg]) -> Vec<u8> {
    regs.iter()
        .map(|r| s.i.op(Reg::Phys(*r), OpSpec::early_def()))
        .collect()
}

/// The slow paths' predicates (`SLOW_PREDS`) as early defs of `s`.
fn pred_early_defs(s: &mut Seq) -> Vec<u8> {
    SLOW_PREDS
        .iter()
        .map(|r| s.i.op(Reg::Pred(*r), OpSpec::early_def()))
        .collect()
}

/// The f32 `div.rn` slow-path subroutine on physical registers (see the module essay):
/// `<zero dividend exit> ; <exact sequence> ; RET`. Only the lanes whose operands
/// `FCHK.DIVIDE` flagged at the site call it, so it checks nothing again.
pub(crate) fn fdiv_slow_path() -> Sm50Inst {
    let (mut s, SlowOps { d, x, y, t, p }) = slow_path_seq(OpSpec::use_());
    s.zero_dividend_exit(d, x, y, t[0], p[0]);
    s.fdiv(Round::Rn, false, d, x, y, &t, &p);
    s.put(sm50::Inst::new(Form::RET), &[]);
    s.i
}

impl Seq {
    /// `FFMA t, y, -r, c[0x2][one]`: the residual `1 - y·r` of the approximate reciprocal
    /// `r` (`one` is the byte offset of the literal 1.0 in bank 2).
    fn ffma_one_minus(&mut self, t: u8, y: u8, r: u8, one: u32) {
        let ffma_c = sm50::Inst::new(Form::FFMA_CC)
            .with(Field::Negb, 1)
            .with(Field::Cbk, 2)
            .with(Field::Cbo, u64::from(one / 4));
        self.put(ffma_c, &[(Field::Rd, t), (Field::Ra, y), (Field::Rb, r)]);
    }

    /// `p` = `2^-126 <= |y| < 2^126`: `y` normal and `1/y` normal, where the reciprocal's
    /// fast path is right (the site's test, [`frcp_slow_path`]).
    ///
    /// ```text
    /// FSETP.GE.AND p, PT, |y|, 2^-126, PT ; FSETP.LT.AND p, PT, |y|, 2^126, p
    /// ```
    fn rcp_in_range(&mut self, p: u8, y: u8) {
        self.fsetp_imm(p, GE, false, y, true, f32::MIN_POSITIVE, None);
        self.fsetp_imm(p, LT, false, y, true, 2f32.powi(126), Some((p, AND)));
    }

    /// The slow path's early exit for a zero dividend, the commonest reason `FCHK.DIVIDE`
    /// flags operands on real data (sparse inputs, sums that start at 0): `±0 / y` with `y`
    /// neither zero nor NaN is the zero of sign `x ^ y` (a subnormal or infinite `y`
    /// included), which the fast path cannot give (its `FFMA q, x, t, RZ` turns -0 into +0).
    /// Five instructions instead of the whole sequence below (about 80), as ptxas's slow
    /// path tests its special cases first and branches out. Trade-off: three more
    /// instructions on every other slow-path call (the `RET` not taken).
    ///
    /// ```text
    /// FSETP.EQ.AND p, PT, |x|, 0, PT ; FSETP.GT.AND p, PT, |y|, 0, p   (|y| > 0: not 0, not NaN)
    /// LOP.XOR t, x, y ; @p LOP32I.AND q, t, 0x80000000 ; @p RET
    /// ```
    fn zero_dividend_exit(&mut self, q: u8, x: u8, y: u8, t: u8, p: u8) {
        self.fsetp_imm(p, EQ, false, x, true, 0.0, None);
        self.fsetp_imm(p, GT, false, y, true, 0.0, Some((p, AND)));
        let xor = sm50::Inst::new(Form::LOP_R).with(Field::Op, XOR);
        self.put(xor, &[(Field::Rd, t), (Field::Ra, x), (Field::Rb, y)]);
        let and = sm50::Inst::new(Form::LOP32I)
            .with(Field::Op, AND)
            .with(Field::Imm, 0x8000_0000);
        self.g(Some((p, false)), and, &[(Field::Rd, q), (Field::Ra, t)]);
        self.g(Some((p, false)), sm50::Inst::new(Form::RET), &[]);
    }
}

impl Seq {
    /// [`Seq::zero_dividend_exit`] for f64: `±0 / y`, `y` neither zero nor NaN, is the zero
    /// of sign `x ^ y`.
    ///
    /// ```text
    /// DSETP.EQ.AND p, PT, |x|, 0, PT ; DSETP.GT.AND p, PT, |y|, 0, p
    /// LOP.XOR t, x.hi, y.hi ; @p LOP32I.AND q.hi, t, 0x80000000 ; @p MOV32I q.lo, 0 ; @p RET
    /// ```
    fn ddiv_zero_dividend_exit(&mut self, q: u8, x: u8, y: u8, t: u8, p: u8) {
        self.dsetp_imm(p, EQ, x, true, 0.0, None);
        self.dsetp_imm(p, GT, y, true, 0.0, Some((p, AND)));
        let xor = sm50::Inst::new(Form::LOP_R).with(Field::Op, XOR);
        self.pw(
            None,
            xor,
            &[(Field::Rd, (t, 0)), (Field::Ra, hi(x)), (Field::Rb, hi(y))],
        );
        let and = sm50::Inst::new(Form::LOP32I)
            .with(Field::Op, AND)
            .with(Field::Imm, 0x8000_0000);
        self.pw(
            Some((p, false)),
            and,
            &[(Field::Rd, hi(q)), (Field::Ra, (t, 0))],
        );
        self.mov32w(Some((p, false)), lo(q), 0);
        self.g(Some((p, false)), sm50::Inst::new(Form::RET), &[]);
    }

    /// `DFMA d, a, -b, c[0x2][one]`: the residual `1 - a·b` (`one` is the byte offset of
    /// the f64 literal 1.0 in bank 2).
    fn dfma_one_minus(&mut self, d: u8, a: u8, b: u8, one: u32) {
        let inst = sm50::Inst::new(Form::DFMA_CC)
            .with(Field::Negb, 1)
            .with(Field::Cbk, 2)
            .with(Field::Cbo, u64::from(one / 4));
        self.pw(
            None,
            inst,
            &[(Field::Rd, lo(d)), (Field::Ra, lo(a)), (Field::Rb, lo(b))],
        );
    }

    /// The f64 division's fast path and check (see the module essay): `q` ≈ x / y from the
    /// pairs `r`, `e` and the word `t`; `p` true where `q` is the correctly rounded
    /// quotient.
    ///
    /// ```text
    /// MOV32I r.lo, 1 ; MUFU.RCP64H r.hi, y.hi
    /// DFMA e, y, -r, 1.0 ; DFMA e, e, e, e ; DFMA r, r, e, r      r within an ulp of 1/y
    /// DFMA e, y, -r, 1.0 ; DFMA r, r, e, r                        r = RN(1/y)
    /// DMUL q, x, r ; DFMA e, y, -q, x ; DFMA q, r, e, q           q = RN(x/y)
    /// FSETP.GEU.AND p, PT, |x.hi|, 2^-970, PT                     the residual is exact
    /// FFMA t, RZ, y.hi, q.hi                                      NaN if y >= 2^1017
    /// FSETP.GE.AND p, PT, |t|, 2^-1021, p                         q normal, no NaN
    /// ISETP.NE.AND p, PT, y.lo, -1, p                             y's significand not all ones
    /// ```
    fn ddiv_fast(&mut self, q: u8, x: u8, y: u8, (r, e, t): (u8, u8, u8), p: u8, one: u32) {
        self.rcp64h(r, y);
        let xmin = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, GEU)
            .with(Field::Absa, 1)
            .with(Field::ImmF32i, f32i(hi_f32(2f64.powi(-970))));
        self.pw(None, xmin, &[(Field::Pd0, (p, 0)), (Field::Ra, hi(x))]);
        self.refine_rcp64(r, r, y, e, one);
        self.dmul(q, x, r);
        self.dfma(e, y, true, q, x);
        self.dfma(q, r, false, e, q);
        let zero_y = sm50::Inst::new(Form::FFMA_R).with(Field::Ra, 255);
        self.pw(
            None,
            zero_y,
            &[(Field::Rd, (t, 0)), (Field::Rb, hi(y)), (Field::Rc, hi(q))],
        );
        let qmin = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, GE)
            .with(Field::Absa, 1)
            .with(Field::ImmF32i, f32i(hi_f32(2f64.powi(-1021))))
            .with(Field::Bop, AND);
        self.and_into(p, qmin, (t, 0));
        let inst = sm50::Inst::new(Form::ISETP_I)
            .with(Field::Cmp, NE)
            .with(Field::Sgn, 0)
            .with_signed(Field::ImmImm20s, -1)
            .with(Field::Bop, AND);
        self.and_into(p, inst, lo(y));
    }

    /// `inst` (a compare) of `a` into `p`, combined with `p`'s old value by `inst`'s `Bop`:
    /// one more condition of a fast path's check.
    fn and_into(&mut self, p: u8, inst: sm50::Inst, a: W) {
        self.pw(
            None,
            inst,
            &[(Field::Pd0, (p, 0)), (Field::Ra, a), (Field::Pacc, (p, 0))],
        );
    }

    /// `MOV32I r.lo, 1 ; MUFU.RCP64H r.hi, y.hi` (ptxas's seed).
    fn rcp64h(&mut self, r: u8, y: u8) {
        self.mov32w(None, lo(r), 1);
        let rcp = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rcp64h.code());
        self.pw(None, rcp, &[(Field::Rd, hi(r)), (Field::Ra, hi(y))]);
    }

    /// The seed `r` refined into `d` = RN(1/y) (see the module essay; `e` scratch):
    ///
    /// ```text
    /// DFMA e, y, -r, 1.0 ; DFMA e, e, e, e ; DFMA r, r, e, r
    /// DFMA e, y, -r, 1.0 ; DFMA d, r, e, r
    /// ```
    fn refine_rcp64(&mut self, d: u8, r: u8, y: u8, e: u8, one: u32) {
        self.dfma_one_minus(e, y, r, one);
        self.dfma(e, e, false, e, e);
        self.dfma(r, r, false, e, r);
        self.dfma_one_minus(e, y, r, one);
        self.dfma(d, r, false, e, r);
    }

    /// The f64 reciprocal's fast path and check (see the module essay): `q` = RN(1/y) from
    /// the pairs `r`, `e` where `p` (normal y, normal 1/y, y's low word not all ones).
    ///
    /// ```text
    /// MOV32I r.lo, 1 ; MUFU.RCP64H r.hi, y.hi
    /// FSETP.GE.AND p, PT, |y.hi|, 2^-1022's high word (as f32), PT     y normal
    /// FSETP.LT.AND p, PT, |y.hi|, +INF, p                              |y| < 2^1017
    /// ISETP.NE.AND p, PT, y.lo, -1, p
    /// <the reciprocal's refinement into q>
    /// ```
    fn drcp_fast(&mut self, q: u8, y: u8, (r, e): (u8, u8), p: u8, one: u32) {
        self.rcp64h(r, y);
        let lo_bound = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, GE)
            .with(Field::Absa, 1)
            .with(Field::ImmF32i, f32i(hi_f32(f64::MIN_POSITIVE)));
        self.pw(None, lo_bound, &[(Field::Pd0, (p, 0)), (Field::Ra, hi(y))]);
        let hi_bound = sm50::Inst::new(Form::FSETP_I)
            .with(Field::Cmp, LT)
            .with(Field::Absa, 1)
            .with(Field::ImmF32i, f32i(f32::INFINITY))
            .with(Field::Bop, AND);
        self.and_into(p, hi_bound, hi(y));
        let inst = sm50::Inst::new(Form::ISETP_I)
            .with(Field::Cmp, NE)
            .with_signed(Field::ImmImm20s, -1)
            .with(Field::Bop, AND);
        self.and_into(p, inst, lo(y));
        self.refine_rcp64(q, r, y, e, one);
    }
}

impl Seq {
    /// The f64 square root's fast path (see the module essay): `q` = RN(√x) where `slow`
    /// is false (x in [2^-970, +inf)), from the pairs `y`, `a`, `b` and the predicate `up`.
    ///
    /// ```text
    /// IADD32I y.lo, x.hi, -0x3500000 ; MUFU.RSQ64H y.hi, x.hi      y ≈ 1/√x
    /// ISETP.GE.U32.AND slow, PT, y.lo, c[0x2][0x7ca00000], PT      x outside the window
    /// DMUL a, y, y ; DFMA a, x, -a, 1.0                           e = 1 - x·y²
    /// MOV32I b.lo, 0 ; MOV32I b.hi, 0.5 ; DFMA b, a, 0.375, b      0.5 + 0.375·e
    /// DMUL a, y, a ; DFMA y, b, a, y                              y' = y + y·e·(0.5 + 0.375·e)
    /// DMUL a, x, y ; IADD32I y.hi, y.hi, -0x100000                g = x·y', h = y'/2
    /// DFMA b, a, -a, x ; DFMA.RM q, b, y, a                       q = RD(g + (x - g²)·h)
    /// IADD32I.CC a.lo, q.lo, 1 ; IADD.X a.hi, q.hi, RZ            a = q's successor
    /// DFMA.RP b, q, -a, x ; DSETP.GT.AND up, PT, b, 0, PT         √x above the midpoint
    /// SEL q.lo, a.lo, q.lo, up ; SEL q.hi, a.hi, q.hi, up
    /// ```
    #[allow(clippy::too_many_arguments)]
    fn dsqrt_fast(
        &mut self,
        q: u8,
        x: u8,
        (y, a, b): (u8, u8, u8),
        (slow, up): (u8, u8),
        window: u32,
        one: u32,
    ) {
        self.iaddw(None, lo(y), false, hi(x), -SQRT_WINDOW_LO);
        let rsq = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rsq64h.code());
        self.pw(None, rsq, &[(Field::Rd, hi(y)), (Field::Ra, hi(x))]);
        let check = sm50::Inst::new(Form::ISETP_C)
            .with(Field::Cmp, GE)
            .with(Field::Sgn, 0)
            .with(Field::Cbk, 2)
            .with(Field::Cbo, u64::from(window / 4));
        self.pw(None, check, &[(Field::Pd0, (slow, 0)), (Field::Ra, lo(y))]);
        self.dmul(a, y, y);
        self.dfma_one_minus(a, x, a, one);
        self.mov64(None, b, 0.5f64.to_bits());
        let poly = sm50::Inst::new(Form::DFMA_I).with(Field::ImmF64i, f64i(0.375));
        let refs = [(Field::Rd, lo(b)), (Field::Ra, lo(a)), (Field::Rc, lo(b))];
        self.pw(None, poly, &refs);
        self.dmul(a, y, a);
        self.dfma(y, b, false, a, y);
        self.dmul(a, x, y);
        self.iaddw(None, hi(y), false, hi(y), -0x10_0000);
        self.dfma(b, a, true, a, x);
        self.dfma_rnd(q, b, false, y, a, 1);
        let inc = sm50::Inst::new(Form::IADD32I)
            .with(Field::Imm, 1)
            .with(Field::Cc, 1);
        self.pw(None, inc, &[(Field::Rd, lo(a)), (Field::Ra, lo(q))]);
        let carry = sm50::Inst::new(Form::IADD_I).with(Field::X, 1);
        self.pw(None, carry, &[(Field::Rd, hi(a)), (Field::Ra, hi(q))]);
        self.dfma_rnd(b, q, true, a, x, 2);
        self.dsetp_imm(up, GT, b, false, 0.0, None);
        for w in 0..2 {
            let sel = sm50::Inst::new(Form::SEL_R);
            let refs = [
                (Field::Rd, (q, w)),
                (Field::Ra, (a, w)),
                (Field::Rb, (q, w)),
                (Field::Ps, (up, 0)),
            ];
            self.pw(None, sel, &refs);
        }
    }

    /// `sqrt.rn.f32`'s site (see the module essay): the window check into `slow`, ptxas's
    /// one Newton step into `q`; `w`, `y`, `s` scratch.
    ///
    /// ```text
    /// IADD32I w, x, -0xd000000 ; MUFU.RSQ y, x ; ISETP.GT.U32 slow, w, c[0x2][window]
    /// <fsqrt_step q, x, y: s, h = w, r = y>
    /// ```
    fn fsqrt_fast(&mut self, q: u8, x: u8, (w, y, s): (u8, u8, u8), slow: u8, window: u32) {
        self.iadd32i_n(None, w, false, x, -FSQRT_WINDOW_LO);
        self.mufu(Func::Rsq, y, x);
        let check = sm50::Inst::new(Form::ISETP_C)
            .with(Field::Cmp, GT)
            .with(Field::Sgn, 0)
            .with(Field::Cbk, 2)
            .with(Field::Cbo, u64::from(window / 4));
        self.put(check, &[(Field::Pd0, slow), (Field::Ra, w)]);
        self.fsqrt_step(q, x, y, (s, w, y));
    }

    /// ptxas's Newton step for `sqrt.rn.f32` from `y` = `RSQ(x)`, into `q` (see the module
    /// essay; right for `x` in the fast window). `h` may be `y`, and `r` may be `y` or `x`:
    /// each is written after its last read.
    ///
    /// ```text
    /// FMUL.FTZ s, x, y ; FMUL.FTZ h, y, 0.5 ; FFMA r, s, -s, x ; FFMA q, r, h, s
    /// ```
    fn fsqrt_step(&mut self, q: u8, x: u8, y: u8, (s, h, r): (u8, u8, u8)) {
        self.fmul_r(None, s, x, y, true);
        let half = sm50::Inst::new(Form::FMUL_I)
            .with(Field::Fmz, 1)
            .with(Field::ImmF32i, f32i(0.5));
        self.put(half, &[(Field::Rd, h), (Field::Ra, y)]);
        self.ffma(r, s, true, s, x);
        self.ffma(q, r, false, h, s);
    }

    /// `DFMA.rnd d, a, {-}b, c` (`rnd`: 0 .RN, 1 .RM, 2 .RP, 3 .RZ).
    fn dfma_rnd(&mut self, d: u8, a: u8, negb: bool, b: u8, c: u8, rnd: u64) {
        let inst = sm50::Inst::new(Form::DFMA_R)
            .with(Field::Negb, negb as u64)
            .with(Field::Rnd, rnd);
        let refs = [
            (Field::Rd, lo(d)),
            (Field::Ra, lo(a)),
            (Field::Rb, lo(b)),
            (Field::Rc, lo(c)),
        ];
        self.pw(None, inst, &refs);
    }
}

/// The f32 square root's fast window: x - 0x0d000000 at most [`FSQRT_WINDOW_LEN`]
/// (unsigned) iff x is in [2^-101, 2^128), positive and finite (ptxas's constants).
const FSQRT_WINDOW_LO: i32 = 0x0d00_0000;
const FSQRT_WINDOW_LEN: u32 = 0x7f7f_ffff - 0x0d00_0000;

/// The f64 square root's fast window, on the operand's high word: x.hi - 0x03500000 below
/// [`SQRT_WINDOW_LEN`] (unsigned) iff x is in [2^-970, +inf), positive and finite.
const SQRT_WINDOW_LO: i32 = 0x0350_0000;
const SQRT_WINDOW_LEN: u32 = 0x7ff0_0000 - 0x0350_0000;

/// The high word of `v`'s bits read as an f32 (the f64 checks compare high words as f32s).
fn hi_f32(v: f64) -> f32 {
    f32::from_bits((v.to_bits() >> 32) as u32)
}

/// The placeholder `rel` of a `CAL` to the f32 division slow path (`lower::emit` sets the
/// real target, the subroutine's first instruction).
pub(crate) const CAL_FDIV: u64 = 0;

/// The placeholder `rel` of a `CAL` to the f32 reciprocal slow path ([`frcp_slow_path`]).
pub(crate) const CAL_FRCP: u64 = 1;

/// The placeholder `rel` of a `CAL` to the f64 division slow path ([`ddiv_slow_path`]).
pub(crate) const CAL_DDIV: u64 = 2;

/// The placeholder `rel` of a `CAL` to the f64 reciprocal slow path ([`drcp_slow_path`]).
pub(crate) const CAL_DRCP: u64 = 3;

/// The f64 `div.rn` slow-path subroutine on physical registers (see the module essay): the
/// dividend in `DSLOW_X`, the divisor in `DSLOW_Y`, the exact quotient into `DSLOW_Q`;
/// `<zero dividend exit> ; <exact sequence> ; RET`. Only the lanes the site's check flags
/// call it.
pub(crate) fn ddiv_slow_path() -> Sm50Inst {
    dslow_path(false)
}

/// The f64 `rcp.rn` slow-path subroutine: `DSLOW_X` = 1.0 (two `MOV32I`s), then the exact
/// division of it by `DSLOW_Y`, into `DSLOW_Q`.
pub(crate) fn drcp_slow_path() -> Sm50Inst {
    dslow_path(true)
}

/// The placeholder `rel` of a `CAL` to the f64 square root's slow path ([`dsqrt_slow_path`]).
pub(crate) const CAL_DSQRT: u64 = 4;

/// The f64 `sqrt.rn` slow-path subroutine: the operand in `DSLOW_X`, the exact root into
/// `DSLOW_Q` by the inline sequence ([`Seq::dsqrt`]: zeros, infinities, NaN, negatives and
/// subnormals included) on the scratch pairs and the words R20..R22; `RET`. Only the lanes
/// whose operand is outside the fast window call it.
pub(crate) fn dsqrt_slow_path() -> Sm50Inst {
    let mut s = Seq {
        i: Sm50Inst::new(Role::Plain),
    };
    let d = s.i.op(Reg::Phys(DSLOW_Q), OpSpec::early_def());
    let t = early_defs(&mut s, &DSLOW_PAIRS);
    let u = early_defs(&mut s, &DSLOW_WORDS[1..]);
    let p = pred_early_defs(&mut s);
    let x = s.i.op(Reg::Phys(DSLOW_X), OpSpec::use_());
    s.dsqrt(Round::Rn, d, x, &t, &u, &p[..2]);
    s.put(sm50::Inst::new(Form::RET), &[]);
    s.i
}

/// The placeholder `rel` of a `CAL` to the f32 square root's slow path ([`fsqrt_slow_path`]).
pub(crate) const CAL_FSQRT: u64 = 5;

/// The f32 `sqrt.rn` slow-path subroutine: the operand in `SLOW_X` (outside the fast
/// window: the site calls for nothing else; overwritten), the root into `SLOW_Q`, on one
/// scratch register (`SLOW_TEMPS[0]`) and two of the slow paths' predicates. As ptxas's,
/// each class leaves at its own `RET`:
///
/// ```text
/// FSETP.GT p, x, 0 ; FSETP.LT.AND p, x, +inf, p      p: 0 < x < 2^-101 here
/// @!p MOV32I q, NaN                                  negatives, -inf, NaN
/// FSETP.EQ z, x, 0 ; FSETP.EQ.OR z, x, +inf, z       ±0 and +inf are their own roots
/// @z MOV q, x ; @!p RET
/// FMUL q, x, 2^64 ; MUFU.RSQ x, q                    tiny and subnormal x: x·2^64 in the
/// <fsqrt_step q, q, x> ; FMUL q, q, 2^-32 ; RET      window; √x = √(x·2^64)·2^-32, exact
///                                                    (√x >= 2^-74.5, normal)
/// ```
pub(crate) fn fsqrt_slow_path() -> Sm50Inst {
    let mut s = Seq {
        i: Sm50Inst::new(Role::Plain),
    };
    let d = s.i.op(Reg::Phys(SLOW_Q), OpSpec::early_def());
    let t = s.i.op(Reg::Phys(SLOW_TEMPS[0]), OpSpec::early_def());
    let p = pred_early_defs(&mut s);
    // Read, then overwritten (the call clobbers it).
    let x = s.i.op(Reg::Phys(SLOW_X), OpSpec::early_def());
    let (pos, z) = (p[0], p[1]);
    s.fsetp_imm(pos, GT, false, x, false, 0.0, None);
    s.fsetp_imm(pos, LT, false, x, false, f32::INFINITY, Some((pos, AND)));
    s.mov32i_bits(Some((pos, true)), d, crate::mufu::NAN);
    s.fsetp_imm(z, EQ, false, x, false, 0.0, None);
    s.fsetp_imm(z, EQ, false, x, false, f32::INFINITY, Some((z, OR)));
    let mov = sm50::Inst::new(Form::MOV_R);
    s.g(Some((z, false)), mov, &[(Field::Rd, d), (Field::Rb, x)]);
    s.g(Some((pos, true)), sm50::Inst::new(Form::RET), &[]);
    // Three registers: the scaled operand in `d`, its RSQ in `x`, the root's first
    // approximation in `t`.
    s.fmul_i(None, d, x, 18_446_744_073_709_551_616.0);
    s.mufu(Func::Rsq, x, d);
    s.fsqrt_step(d, d, x, (t, x, d));
    s.fmul_i(None, d, d, 1.0 / 4_294_967_296.0);
    s.put(sm50::Inst::new(Form::RET), &[]);
    s.i
}

/// [`ddiv_slow_path`] (`rcp` false) or [`drcp_slow_path`].
fn dslow_path(rcp: bool) -> Sm50Inst {
    let mut s = Seq {
        i: Sm50Inst::new(Role::Plain),
    };
    let d = s.i.op(Reg::Phys(DSLOW_Q), OpSpec::early_def());
    let t = early_defs(&mut s, &DSLOW_PAIRS);
    let u = early_defs(&mut s, &DSLOW_WORDS);
    let p = pred_early_defs(&mut s);
    let x_spec = if rcp {
        OpSpec::early_def()
    } else {
        OpSpec::use_()
    };
    let x = s.i.op(Reg::Phys(DSLOW_X), x_spec);
    let y = s.i.op(Reg::Phys(DSLOW_Y), OpSpec::use_());
    if rcp {
        s.mov64(None, x, 1f64.to_bits());
    } else {
        s.ddiv_zero_dividend_exit(d, x, y, u[1], p[0]);
    }
    s.ddiv(Round::Rn, d, x, y, &t, &u, &p);
    s.put(sm50::Inst::new(Form::RET), &[]);
    s.i
}

/// The f32 `rcp.rn` slow-path subroutine on physical registers (see the module essay):
/// the operand in `SLOW_Y`, the fast reciprocal in `SLOW_Q` on the way in, the exact one on
/// the way out. The site calls it only for the operands outside [2^-126, 2^126) (normal
/// operands with a normal reciprocal keep the fast path's result). Each class of operand
/// leaves at its own `RET`:
///
/// ```text
/// FSETP.EQ |y|, 0 ; FSETP.GEU.OR |y|, +inf            ±0, ±inf, NaN: MUFU.RCP's own
/// @P MUFU.RCP q, y ; @P RET                           ±inf, ±0, canonical NaN
/// FSETP.LT |y|, 2^-126                                subnormal: the fast path on y·2^64
/// FMUL s, y, 2^64 ; MUFU.RCP r, s ; MOV32I x, 1.0     (normal), then ·2^64 (exact, or the
/// FFMA t, s, -r, x ; FFMA r, r, t, r                  overflow to inf rn gives: rounding
/// @P FMUL q, r, 2^64 ; @P RET                         commutes with the scaling)
/// <the exact division 1.0 / y> ; RET                  |y| >= 2^126: 1/y is subnormal
/// ```
///
/// The last case, rare, runs the exact division sequence above (`x` = 1.0 in `SLOW_X`).
pub(crate) fn frcp_slow_path() -> Sm50Inst {
    // (it writes 1.0 into `SLOW_X` for the exact division)
    let (mut s, SlowOps { d, x, y, t, p }) = slow_path_seq(OpSpec::early_def());
    let p0 = p[0];
    let ret = |s: &mut Seq| s.g(Some((p0, false)), sm50::Inst::new(Form::RET), &[]);
    let two64 = 18_446_744_073_709_551_616.0f32;
    // (Normal operands whose reciprocal is normal keep the fast path's result: the site
    // does not call for them, `Seq::rcp_in_range`.)
    // Zeros, infinities and NaN: MUFU.RCP's result is the exact one.
    s.fsetp_imm(p0, EQ, false, y, true, 0.0, None);
    s.fsetp_imm(p0, GEU, false, y, true, f32::INFINITY, Some((p0, OR)));
    let rcp = sm50::Inst::new(Form::MUFU).with(Field::Op, Func::Rcp.code());
    s.g(Some((p0, false)), rcp, &[(Field::Rd, d), (Field::Ra, y)]);
    ret(&mut s);
    // Subnormals: the fast path on y·2^64, scaled back.
    let [sy, r, e] = [t[0], t[1], t[2]];
    s.fsetp_imm(p0, LT, false, y, true, f32::MIN_POSITIVE, None);
    s.fmul_i(None, sy, y, two64);
    s.mufu(Func::Rcp, r, sy);
    s.mov32i_bits(None, x, 1f32.to_bits());
    s.ffma_n(e, true, sy, r, x);
    s.ffma(r, r, false, e, r);
    s.fmul_i(Some((p0, false)), d, r, two64);
    ret(&mut s);
    // |y| >= 2^126 (finite): a subnormal reciprocal, by the exact division.
    s.fdiv(Round::Rn, false, d, x, y, &t, &p);
    s.put(sm50::Inst::new(Form::RET), &[]);
    s.i
}

impl Lowerer<'_> {
    /// `div.rn.f32 out, x, y` (no `.ftz`): ptxas's fast path, then a call of the slow path
    /// (see the module essay). `xv` and `yv` are the IR values in `x` and `y`.
    fn lower_fdiv_fast(
        &mut self,
        out: VReg,
        (x, xv): (Loc, Value),
        (y, yv): (Loc, Value),
    ) -> Result<(), LowerError> {
        let one = self.literal(u64::from(1f32.to_bits()), 4)?;
        // The call needs x and y in two registers: x / x reads x twice, and y is a copy.
        let (x, y) = if x == y {
            (self.pinned_operand(x, xv, 2), self.copy_b32(y))
        } else {
            (self.pinned_operand(x, xv, 1), self.pinned_operand(y, yv, 1))
        };
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let q = s.i.op(Reg::Virt(out), OpSpec::early_def().fixed(SLOW_Q));
        // The fast path's scratch registers are the subroutine's first three: the call
        // overwrites them anyway, so they cost no register of their own. The refined
        // reciprocal `t` takes R5 and `r` R6: `FFMA q, x, t, RZ` reads `t` with x (R2), which
        // would read bank 2 twice with `t` in R6; so every FFMA of the site reads three banks.
        let [r, t, e] = [1, 0, 2].map(|k| {
            let v = self.new_vreg(RegKind::B32);
            s.i.op(Reg::Virt(v), OpSpec::early_def().fixed(SLOW_TEMPS[k]))
        });
        let xo = s.i.op(Reg::Virt(x), OpSpec::use_().fixed(SLOW_X));
        let yo = s.i.op(Reg::Virt(y), OpSpec::use_().fixed(SLOW_Y));
        let slow = self.seq_temps(&mut s, RegKind::Pred, 1)[0];
        s.mufu(Func::Rcp, r, yo);
        let fchk = sm50::Inst::new(Form::FCHK_R);
        s.put(fchk, &[(Field::Pd, slow), (Field::Ra, xo), (Field::Rb, yo)]);
        s.ffma_one_minus(t, yo, r, one);
        s.ffma(t, r, false, t, r);
        let rz = sm50::Inst::new(Form::FFMA_R).with(Field::Rc, 255);
        s.put(rz, &[(Field::Rd, q), (Field::Ra, xo), (Field::Rb, t)]);
        s.ffma(e, yo, true, q, xo);
        s.ffma(q, t, false, e, q);
        self.push_slow_path_call(s, CAL_FDIV, (slow, true));
        Ok(())
    }

    /// `div.rn.f64 x, y`: ptxas's fast path, this module's check, then a call of the slow
    /// path ([`ddiv_slow_path`]) for the lanes the check flags (see the module essay). The
    /// result, a new pair.
    fn lower_ddiv_fast(&mut self, x: Loc, y: Loc) -> Result<VReg, LowerError> {
        let one = self.literal(1f64.to_bits(), 8)?;
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let (q, qw) = self.fixed_pair(&mut s, DSLOW_Q, None);
        // The fast path's scratch registers are the subroutine's first two pairs and first
        // word: the call overwrites them anyway.
        let r = self.fixed_pair(&mut s, DSLOW_PAIRS[0], None).0;
        let e = self.fixed_pair(&mut s, DSLOW_PAIRS[1], None).0;
        let tv = self.new_vreg(RegKind::B32);
        let t =
            s.i.op(Reg::Virt(tv), OpSpec::early_def().fixed(DSLOW_WORDS[0]));
        let xo = self.fixed_pair(&mut s, DSLOW_X, Some(x)).0;
        let yo = self.fixed_pair(&mut s, DSLOW_Y, Some(y)).0;
        let fast = self.seq_temps(&mut s, RegKind::Pred, 1)[0];
        s.ddiv_fast(q, xo, yo, (r, e, t), fast, one);
        self.push_slow_path_call(s, CAL_DDIV, (fast, false));
        Ok(self.pair_of(qw[0], qw[1]))
    }

    /// `rcp.rn.f64 y` (any `div.rn.f64` of the constant 1.0): ptxas's reciprocal (the
    /// division's fast path less its dividend's three steps), this module's check, then a
    /// call of [`drcp_slow_path`] for the lanes the check flags (see the module essay).
    fn lower_drcp_fast(&mut self, y: Loc) -> Result<VReg, LowerError> {
        let one = self.literal(1f64.to_bits(), 8)?;
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let (q, qw) = self.fixed_pair(&mut s, DSLOW_Q, None);
        let r = self.fixed_pair(&mut s, DSLOW_PAIRS[0], None).0;
        let e = self.fixed_pair(&mut s, DSLOW_PAIRS[1], None).0;
        let yo = self.fixed_pair(&mut s, DSLOW_Y, Some(y)).0;
        let fast = self.seq_temps(&mut s, RegKind::Pred, 1)[0];
        s.drcp_fast(q, yo, (r, e), fast, one);
        self.push_slow_path_call(s, CAL_DRCP, (fast, false));
        Ok(self.pair_of(qw[0], qw[1]))
    }

    /// `sqrt.rn.f64 x`: ptxas's fast path with a directed-rounding finish, then a call of
    /// [`dsqrt_slow_path`] for the operands outside the window (see the module essay). The
    /// result, a new pair.
    fn lower_dsqrt_fast(&mut self, x: Loc) -> Result<VReg, LowerError> {
        let one = self.literal(1f64.to_bits(), 8)?;
        let window = self.literal(u64::from(SQRT_WINDOW_LEN), 4)?;
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let (q, qw) = self.fixed_pair(&mut s, DSLOW_Q, None);
        // The site's three pairs are the subroutine's first three: the call overwrites them.
        let y = self.fixed_pair(&mut s, DSLOW_PAIRS[0], None).0;
        let a = self.fixed_pair(&mut s, DSLOW_PAIRS[1], None).0;
        let b = self.fixed_pair(&mut s, DSLOW_PAIRS[2], None).0;
        let xo = self.fixed_pair(&mut s, DSLOW_X, Some(x)).0;
        let p = self.seq_temps(&mut s, RegKind::Pred, 2);
        s.dsqrt_fast(q, xo, (y, a, b), (p[0], p[1]), window, one);
        self.push_slow_path_call(s, CAL_DSQRT, (p[0], true));
        Ok(self.pair_of(qw[0], qw[1]))
    }

    /// `sqrt.rn.f32 out, x` (no `.ftz`): ptxas's site, then a call of [`fsqrt_slow_path`]
    /// for the operands outside the window (see the module essay). `xv` is the IR value in
    /// `x`.
    pub(super) fn lower_fsqrt_fast(
        &mut self,
        out: VReg,
        (x, xv): (Loc, Value),
    ) -> Result<(), LowerError> {
        let window = self.literal(u64::from(FSQRT_WINDOW_LEN), 4)?;
        let x = self.pinned_operand(x, xv, 1);
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let q = s.i.op(Reg::Virt(out), OpSpec::early_def().fixed(SLOW_Q));
        let xo = s.i.op(Reg::Virt(x), OpSpec::use_().fixed(SLOW_X));
        // The site's own scratch registers are free: the subroutine needs only one more
        // register than its operand and result, which the call clobbers.
        let t = self.seq_temps(&mut s, RegKind::B32, 3);
        let slow = self.seq_temps(&mut s, RegKind::Pred, 1)[0];
        s.fsqrt_fast(q, xo, (t[0], t[1], t[2]), slow, window);
        self.push_slow_path_call(s, CAL_FSQRT, (slow, true));
        Ok(())
    }

    /// A pair operand of the f64 slow path's call pinned to `base`:`base + 1`, as two
    /// 32-bit operands (as a call's arguments and results are: fixed registers are named
    /// word by word). `src` None: two fresh words the sequence defines (early); else copies
    /// of the pair at `src`, read. Returns the low word's operand, which the sequence's
    /// pieces name with word offsets 0 and 1 (the high word's operand is there for the
    /// allocator), and the two words' registers.
    fn fixed_pair(&mut self, s: &mut Seq, base: PhysReg, src: Option<Loc>) -> (u8, [VReg; 2]) {
        let words = [0, 1].map(|w| match src {
            Some(v) => self.copy_b32(Loc {
                vreg: v.vreg,
                offset: v.offset + w,
            }),
            None => self.new_vreg(RegKind::B32),
        });
        let ops = [0, 1].map(|w| {
            let spec = if src.is_some() {
                OpSpec::use_()
            } else {
                OpSpec::early_def()
            };
            let reg = PhysReg(base.0 + w as u8);
            s.i.op(Reg::Virt(words[w]), spec.fixed(reg))
        });
        (ops[0], words)
    }

    /// `rcp.rn.f32 out, y` (no `.ftz`; any `div.rn.f32` of the constant 1.0): ptxas's
    /// reciprocal, one Newton step on `MUFU.RCP`, then a call of the reciprocal's slow path
    /// ([`frcp_slow_path`]), which keeps this result for the normal operands whose
    /// reciprocal is normal and replaces it for the others.
    ///
    /// ```text
    /// MUFU.RCP r, y ; FFMA t, y, -r, c[0x2][1.0] ; FFMA q, r, t, r ; CAL rcp
    /// ```
    fn lower_frcp_fast(&mut self, out: VReg, (y, yv): (Loc, Value)) -> Result<(), LowerError> {
        let one = self.literal(u64::from(1f32.to_bits()), 4)?;
        let y = self.pinned_operand(y, yv, 1);
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let q = s.i.op(Reg::Virt(out), OpSpec::early_def().fixed(SLOW_Q));
        let [r, t] = [0, 1].map(|k| {
            let v = self.new_vreg(RegKind::B32);
            s.i.op(Reg::Virt(v), OpSpec::early_def().fixed(SLOW_TEMPS[k]))
        });
        let yo = s.i.op(Reg::Virt(y), OpSpec::use_().fixed(SLOW_Y));
        let fast = self.seq_temps(&mut s, RegKind::Pred, 1)[0];
        s.rcp_in_range(fast, yo);
        s.mufu(Func::Rcp, r, yo);
        s.ffma_one_minus(t, yo, r, one);
        s.ffma(q, r, false, t, r);
        self.push_slow_path_call(s, CAL_FRCP, (fast, false));
        Ok(())
    }

    /// Ends a fast path: the call of its slow-path subroutine (`rel`) for the lanes where
    /// the predicate `skip` (operand, negated) is false, the sequence pushed as one
    /// instruction, and (outside planning) the floor above which a value is the sequence's
    /// own ([`Self::pinned_operand`]). ptxas's shape: the lanes whose fast result stands
    /// wait at the reconvergence point, the others call, return and join them there.
    ///
    /// ```text
    /// SSY after ; @skip SYNC ; CAL rel ; SYNC
    /// after:
    /// ```
    fn push_slow_path_call(&mut self, mut s: Seq, rel: u64, skip: (u8, bool)) {
        // The SSY's target is the instruction after this sequence: its fourth from it.
        let ssy = sm50::Inst::new(Form::SSY).with(Field::Rel, LOCAL_BRANCH | 4);
        s.put(ssy, &[]);
        s.g(Some(skip), sm50::Inst::new(Form::SYNC), &[]);
        s.put(sm50::Inst::new(Form::CAL).with(Field::Rel, rel), &[]);
        s.put(sm50::Inst::new(Form::SYNC), &[]);
        self.push(s.i);
        if self.planning.is_none() {
            self.fdiv_floor = self.vb.num_vregs();
        }
    }

    /// `v`, holding the IR value `val` and read `reads` (at least 1) times by this division,
    /// as an operand the call pins to a fixed register: `v` itself where its live range ends
    /// here and crosses no other call (it is read nowhere else, and was defined in this block
    /// since its last call: `v` numbered from `fdiv_floor` on), else a copy (a register
    /// move).
    ///
    /// Why: a value that lives on (a loop-invariant divisor, a constant used again) and is
    /// also pinned at the call would have its live range cut there, and the allocator puts
    /// the leftover pieces in memory (spills at low pressure). The copy carries the fixed
    /// register instead; where the allocator places `v` in it anyway the move is dropped.
    /// A value that dies here needs no copy, and one would cost a move: the allocator does
    /// not coalesce explicit moves, so the value would be computed elsewhere and moved.
    /// (Either form is correct; the choice only decides the code's quality.)
    fn pinned_operand(&mut self, v: Loc, val: Value, reads: u32) -> VReg {
        let dies_here = self.use_count[val.index()] == reads;
        // A word of a bigger group (a component of a vector load) is not a register of its
        // own that could be pinned: it is always copied.
        let own_register = v.offset == 0 && v.vreg.kind == RegKind::B32;
        if dies_here && own_register && v.vreg.index >= self.fdiv_floor {
            v.vreg
        } else {
            self.copy_b32(v)
        }
    }

    /// A fresh B32 virtual register holding a copy of the word `v` (a register move).
    pub(super) fn copy_b32(&mut self, v: Loc) -> VReg {
        let c = self.new_vreg(RegKind::B32);
        let mut mv = Sm50Inst::new(Role::Move);
        let d = mv.def(c, false);
        let a = mv.use_(v.vreg);
        mv.piece(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, d, 0), (Field::Rb, a, v.offset)],
        );
        self.push(mv);
        c
    }

    /// `n` fresh virtual registers of `kind`, defined (clobbered) by the sequence `s`: its
    /// scratch registers.
    fn seq_temps(&mut self, s: &mut Seq, kind: RegKind, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let r = self.new_vreg(kind);
                s.i.def(r, true)
            })
            .collect()
    }

    /// `FloatBinOp::Div` on f32 (see the module essay).
    pub(super) fn lower_fdiv(
        &mut self,
        v: Value,
        fmt: FloatFmt,
        rnd: Round,
        ftz: bool,
        args: &[Value],
    ) -> Result<(), LowerError> {
        if fmt == FloatFmt::F64 {
            return self.lower_ddiv(v, rnd, args);
        }
        let fast = rnd == Round::Rn && !ftz && !self.opts.no_subroutines;
        if fast && matches!(self.class(args[0]), Class::Imm(k) if k == i64::from(1f32.to_bits())) {
            let b = self.reg(args[1])?;
            let out = self.new_vreg(RegKind::B32);
            self.lower_frcp_fast(out, (b, args[1]))?;
            self.set_loc(
                v,
                Loc {
                    vreg: out,
                    offset: 0,
                },
            );
            return Ok(());
        }
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        let out = self.new_vreg(RegKind::B32);
        if fast {
            self.lower_fdiv_fast(out, (a, args[0]), (b, args[1]))?;
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
        let t = self.seq_temps(&mut s, RegKind::B32, 11);
        let p = self.seq_temps(&mut s, RegKind::Pred, 3);
        let x = s.i.use_(a.vreg);
        let y = s.i.use_(b.vreg);
        s.fdiv(rnd, ftz, d, x, y, &t, &p);
        s.read_word(x, a.offset);
        s.read_word(y, b.offset);
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

    /// `FloatBinOp::Div` on f64.
    fn lower_ddiv(&mut self, v: Value, rnd: Round, args: &[Value]) -> Result<(), LowerError> {
        let fast = rnd == Round::Rn && !self.opts.no_subroutines;
        let one = i64::from_ne_bytes(1f64.to_bits().to_ne_bytes());
        if fast && matches!(self.class(args[0]), Class::Imm(k) if k == one) {
            let b = self.reg(args[1])?;
            let out = self.lower_drcp_fast(b)?;
            self.set_loc(
                v,
                Loc {
                    vreg: out,
                    offset: 0,
                },
            );
            return Ok(());
        }
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        if fast {
            let out = self.lower_ddiv_fast(a, b)?;
            self.set_loc(
                v,
                Loc {
                    vreg: out,
                    offset: 0,
                },
            );
            return Ok(());
        }
        let out = self.new_vreg(RegKind::B64);
        let mut s = Seq {
            i: Sm50Inst::new(Role::Plain),
        };
        let d = s.i.def(out, true);
        let t = self.seq_temps(&mut s, RegKind::B64, 6);
        let u = self.seq_temps(&mut s, RegKind::B32, 4);
        let p = self.seq_temps(&mut s, RegKind::Pred, 3);
        let x = s.i.use_(a.vreg);
        let y = s.i.use_(b.vreg);
        s.ddiv(rnd, d, x, y, &t, &u, &p);
        s.read_word(x, a.offset);
        s.read_word(y, b.offset);
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

    /// `FloatOp::Sqrt` on f64: `sqrt.rn` the fast path and its call (see the module essay),
    /// other modes and `no_subroutines` the exact inline sequence.
    pub(super) fn lower_dsqrt(
        &mut self,
        v: Value,
        rnd: Round,
        arg: Value,
    ) -> Result<(), LowerError> {
        let a = self.reg(arg)?;
        let out = if rnd == Round::Rn && !self.opts.no_subroutines {
            self.lower_dsqrt_fast(a)?
        } else {
            let out = self.new_vreg(RegKind::B64);
            let mut s = Seq {
                i: Sm50Inst::new(Role::Plain),
            };
            let d = s.i.def(out, true);
            let t = self.seq_temps(&mut s, RegKind::B64, 6);
            let u = self.seq_temps(&mut s, RegKind::B32, 3);
            let p = self.seq_temps(&mut s, RegKind::Pred, 2);
            let x = s.i.use_(a.vreg);
            s.dsqrt(rnd, d, x, &t, &u, &p);
            s.read_word(x, a.offset);
            self.push(s.i);
            out
        };
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
