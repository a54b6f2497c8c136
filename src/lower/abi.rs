//! The register conventions of calls: the registers the f32 and f64 division slow paths take
//! (`select::fdiv`'s subroutine) and what a `CAL` of it clobbers, and what a `JCAL` of a
//! system function clobbers (the sm_50 call ABI, docs/calls.md).
//!
//! In: nothing (constants). Out: register sets that selection pins and that
//! [`super::Sm50Inst`]'s `clobbers` reports to the allocator. Invariant: a def and a clobber of
//! one call never name one register.

use crate::machinst::{PhysPred, PhysReg};

/// The caller-saved registers below R64, with R4.. R(3+skip) left out.
pub(super) const fn scratch<const N: usize>(skip: u8) -> [PhysReg; N] {
    let mut out = [PhysReg(0); N];
    let mut n = 0;
    let mut r = 0u8;
    while r < 64 {
        let saved = r == 1
            || r == 2
            || (r >= 16 && r < 32)
            || (r >= 32 && (r / 4) % 2 == 1)
            || (r >= 4 && r < 4 + skip);
        if !saved {
            out[n] = PhysReg(r);
            n += 1;
        }
        r += 1;
    }
    out
}

/// [`scratch`] for every number of result words, 0 to 12 (R4..R15): caller-saved are R0,
/// R3..R15 (13 + 1) and R32..35, 40..43, 48..51, 56..59 (16); row `n` holds the
/// `30 - n` registers a call returning `n` words clobbers, then placeholders.
const SCRATCH_BY_RESULTS: [[PhysReg; 30]; 13] = {
    let mut t = [[PhysReg(0); 30]; 13];
    let mut n = 0;
    while n < 13 {
        t[n] = scratch::<30>(n as u8);
        n += 1;
    }
    t
};

pub(super) const ALL_PREDS: [PhysPred; 7] = [
    PhysPred(0),
    PhysPred(1),
    PhysPred(2),
    PhysPred(3),
    PhysPred(4),
    PhysPred(5),
    PhysPred(6),
];

/// What a call returning `results` words (at most 12: R4..R15) clobbers besides its results.
pub(crate) fn extern_call_clobbers(results: usize) -> (&'static [PhysReg], &'static [PhysPred]) {
    let n = results.min(12);
    (&SCRATCH_BY_RESULTS[n][..30 - n], &ALL_PREDS)
}

/// What a `CAL` of a subroutine kept for its size clobbers (`select::call`'s
/// `OUTLINED_CAL`): R0, R3..R15 less the `results` words from R4, and every predicate. Row
/// `n` of [`SCRATCH_BY_RESULTS`] starts with exactly those `14 - n` registers.
pub(crate) fn outlined_call_clobbers(results: usize) -> (&'static [PhysReg], &'static [PhysPred]) {
    let n = results.min(12);
    (&SCRATCH_BY_RESULTS[n][..14 - n], &ALL_PREDS)
}

/// The f32 slow path's dividend (see the module essay).
pub(crate) const SLOW_X: PhysReg = PhysReg(2);

/// The f32 slow path's divisor.
pub(crate) const SLOW_Y: PhysReg = PhysReg(3);

/// The fast quotient on the way in, the exact one on the way out.
pub(crate) const SLOW_Q: PhysReg = PhysReg(4);

/// The slow path's scratch registers: R5..R15, so that with R2..R4 the subroutine takes one
/// aligned run R2..R15 and leaves R0 and every pair and quad base below R16 to the kernel's
/// packing as little fragmented as possible.
pub(crate) const SLOW_TEMPS: [PhysReg; 11] = [
    PhysReg(5),
    PhysReg(6),
    PhysReg(7),
    PhysReg(8),
    PhysReg(9),
    PhysReg(10),
    PhysReg(11),
    PhysReg(12),
    PhysReg(13),
    PhysReg(14),
    PhysReg(15),
];

/// The slow path's predicates: the highest ones, which the predicate allocator (lowest
/// free first) hands out last.
pub(crate) const SLOW_PREDS: [PhysPred; 3] = [PhysPred(4), PhysPred(5), PhysPred(6)];

/// What a call of the slow path clobbers besides its defs: the subroutine's scratch
/// registers but the three the fast path defines (a def and a clobber may not name one
/// register), and its predicates.
pub(crate) const CALL_CLOBBERS: (&[PhysReg], &[PhysPred]) = (
    {
        let (_, rest) = SLOW_TEMPS.split_at(3);
        rest
    },
    &SLOW_PREDS,
);

/// What a call of the f32 square root's slow path (`select::fdiv::fsqrt_slow_path`)
/// clobbers besides its result: its operand's register, one scratch register and the
/// predicates. (Three registers in all, so that a site constrains few: its own scratch
/// registers are the allocator's to place.)
pub(crate) const FSQRT_CALL_CLOBBERS: (&[PhysReg], &[PhysPred]) =
    (&[SLOW_X, SLOW_TEMPS[0]], &SLOW_PREDS);

/// What a call of the reciprocal's slow path (`select::fdiv::frcp_slow_path`) clobbers
/// besides its defs (the result and the two scratch registers its site defines): the
/// dividend register, where it puts 1.0, the other scratch registers, and its predicates.
pub(crate) const RCP_CALL_CLOBBERS: (&[PhysReg], &[PhysPred]) = (&RCP_CLOBBERED, &SLOW_PREDS);

/// `SLOW_X`, then the scratch registers but the two the reciprocal's site defines.
const RCP_CLOBBERED: [PhysReg; SLOW_TEMPS.len() - 1] = {
    let mut regs = [SLOW_X; SLOW_TEMPS.len() - 1];
    let mut k = 2;
    while k < SLOW_TEMPS.len() {
        regs[k - 1] = SLOW_TEMPS[k];
        k += 1;
    }
    regs
};

/// The f64 division slow path's registers (`select::fdiv::ddiv_slow_path`): the fast
/// quotient on the way in and the exact one on the way out, the pair R2:R3.
pub(crate) const DSLOW_Q: PhysReg = PhysReg(2);

/// The f64 slow path's dividend (R4:R5) and divisor (R6:R7).
pub(crate) const DSLOW_X: PhysReg = PhysReg(4);
pub(crate) const DSLOW_Y: PhysReg = PhysReg(6);

/// The f64 slow path's six scratch pairs, R8..R19 (the site's refined reciprocal and
/// residual take the first two).
pub(crate) const DSLOW_PAIRS: [PhysReg; 6] = [
    PhysReg(8),
    PhysReg(10),
    PhysReg(12),
    PhysReg(14),
    PhysReg(16),
    PhysReg(18),
];

/// The f64 slow path's four scratch words: R0 (the site's check word) and R20..R22. With
/// the pairs the subroutine takes one run R2..R22 besides R0: a kernel that calls it uses
/// at least 23 registers (the inline sequence kept 22 temporaries live beside its operands).
/// Every fixed register is named word by word (a pinned pair is two pinned words): the
/// allocator's names of one class do not alias those of another.
pub(crate) const DSLOW_WORDS: [PhysReg; 4] = [PhysReg(0), PhysReg(20), PhysReg(21), PhysReg(22)];

/// What a call of the f64 slow path clobbers besides its defs (the result, the two pairs
/// and the word the site defines): the other scratch registers, and the predicates.
pub(crate) const DDIV_CALL_CLOBBERS: (&[PhysReg], &[PhysPred]) = (&DDIV_CLOBBERED, &SLOW_PREDS);

/// R12..R19 (the scratch pairs from the third on) and R20..R22.
const DDIV_CLOBBERED: [PhysReg; 11] = {
    let mut regs = [PhysReg(0); 11];
    let mut k = 0;
    while k < 8 {
        regs[k] = PhysReg(DSLOW_PAIRS[2].0 + k as u8);
        k += 1;
    }
    while k < 11 {
        regs[k] = DSLOW_WORDS[k - 7];
        k += 1;
    }
    regs
};

/// What a call of the f64 square root's slow path (`select::fdiv::dsqrt_slow_path`)
/// clobbers besides its defs (the result and the three pairs the site defines): the other
/// scratch pairs, R14..R19, the words R20..R22 (not R0: the root needs three words) and the
/// predicates, [`DDIV_CLOBBERED`] less its first pair. The operand's pair is read, and R6:R7
/// (the divisor) untouched.
pub(crate) const DSQRT_CALL_CLOBBERS: (&[PhysReg], &[PhysPred]) = (
    {
        let (_, rest) = DDIV_CLOBBERED.split_at(2);
        rest
    },
    &SLOW_PREDS,
);

/// What a call of the f64 reciprocal's slow path clobbers besides its defs (the result and
/// the two pairs the site defines): the dividend pair, where it puts 1.0, the other scratch
/// registers and words, and the predicates.
pub(crate) const DRCP_CALL_CLOBBERS: (&[PhysReg], &[PhysPred]) = (&DRCP_CLOBBERED, &SLOW_PREDS);

/// R0, R4:R5, then [`DDIV_CLOBBERED`].
const DRCP_CLOBBERED: [PhysReg; 14] = {
    let mut regs = [DSLOW_WORDS[0]; 14];
    regs[1] = DSLOW_X;
    regs[2] = PhysReg(DSLOW_X.0 + 1);
    let mut k = 0;
    while k < DDIV_CLOBBERED.len() {
        regs[3 + k] = DDIV_CLOBBERED[k];
        k += 1;
    }
    regs
};
