//! Atomic read-modify-write operations (PTX `atom` and `red`, ISA section 9.7.13.5).
//!
//! In: an [`InstData::Atomic`](super::InstData::Atomic) names the operation, the state space
//! (global, shared or generic), the value type (`i32` or `i64`), the address `[addr + offset]`
//! and one operand (two for `cas`: compare, then the new value). It has one result, the old
//! value; `red` is an `atom` whose result nobody reads, and lowering picks `RED` from that.
//! Out: [`AtomOp::apply`], the new memory value, which `ir::eval` writes back.
//!
//! Two operations are not PTX's own. [`AtomOp::FAdd`] is the hardware's global float add
//! (`ATOM.ADD.F32.FTZ.RN`), so the IR has it in the global space only: sm_5x has no shared
//! float atomic, and `ir::build` expands `atom/red.shared.add.f32` and the generic forms
//! into a compare-and-swap loop (`build/atomics.rs`). That loop starts from
//! [`AtomOp::Load`], an atomic read of the shared word (an `LDS`): a plain load there
//! would race with the other threads' atomics and make the launch undefined in `ir::eval`.
//!
//! # Order
//!
//! `ir::eval` runs threads one after another in linear order (CTAs in order, x fastest), so
//! atomics from different threads take effect in that order, each one whole. Hardware (and
//! the SM50 simulator, which runs warps in turn and lanes in lane order) may pick another
//! order: only results that do not depend on the order (final sums, minima, bit sets, counts)
//! are comparable between the two, and the tests compare only those.

/// The operation of an `atom`/`red`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AtomOp {
    Add,
    MinS,
    MinU,
    MaxS,
    MaxU,
    /// `old >= b ? 0 : old + 1` (unsigned, 32-bit only).
    Inc,
    /// `old == 0 || old > b ? b : old - 1` (unsigned, 32-bit only).
    Dec,
    And,
    Or,
    Xor,
    Exch,
    /// `old == b ? c : old`.
    Cas,
    /// f32 `old + b`, rounded to nearest with subnormal inputs and result flushed to zero
    /// (PTX `atom.global.add.f32`, SM50 `ATOM.ADD.F32.FTZ.RN`); 32-bit and global only.
    FAdd,
    /// An atomic read: the result is the word, which stays as it is (no operand). The
    /// first read of a CAS loop; shared only (`LDS`: an aligned word is read whole).
    Load,
}

impl AtomOp {
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::MinS => "min.s",
            AtomOp::MinU => "min.u",
            AtomOp::MaxS => "max.s",
            AtomOp::MaxU => "max.u",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
            AtomOp::FAdd => "add.f32",
            AtomOp::Load => "load",
        }
    }

    /// How many value operands it takes (after the address).
    pub fn arity(self) -> usize {
        match self {
            AtomOp::Cas => 2,
            AtomOp::Load => 0,
            _ => 1,
        }
    }

    /// The value memory holds afterwards, for `old` and operands `b` (and `c`), all `bits`
    /// wide (32 or 64; inputs are masked to that width).
    pub fn apply(self, bits: u32, old: u64, b: u64, c: u64) -> u64 {
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let (old, b, c) = (old & mask, b & mask, c & mask);
        let sx = |x: u64| ((x << (64 - bits)) as i64) >> (64 - bits);
        let r = match self {
            AtomOp::Add => old.wrapping_add(b),
            AtomOp::MinS => sx(old).min(sx(b)) as u64,
            AtomOp::MinU => old.min(b),
            AtomOp::MaxS => sx(old).max(sx(b)) as u64,
            AtomOp::MaxU => old.max(b),
            AtomOp::Inc => {
                if old >= b {
                    0
                } else {
                    old + 1
                }
            }
            AtomOp::Dec => {
                if old == 0 || old > b {
                    b
                } else {
                    old - 1
                }
            }
            AtomOp::And => old & b,
            AtomOp::Or => old | b,
            AtomOp::Xor => old ^ b,
            AtomOp::Exch => b,
            AtomOp::Load => old,
            AtomOp::FAdd => {
                use crate::ir::float::{add, FloatFmt, Round};
                add(FloatFmt::F32, old, b, Round::Rn, true)
            }
            AtomOp::Cas => {
                if old == b {
                    c
                } else {
                    old
                }
            }
        };
        r & mask
    }
}

#[cfg(test)]
mod tests {
    use super::AtomOp;

    #[test]
    fn pinned_values() {
        assert_eq!(AtomOp::Add.apply(32, 0xffff_ffff, 2, 0), 1);
        // 1.5 + 2.25 = 3.75; a subnormal operand is flushed (1 + 2^-149 = 1).
        assert_eq!(
            AtomOp::FAdd.apply(32, 0x3fc0_0000, 0x4010_0000, 0),
            0x4070_0000
        );
        assert_eq!(AtomOp::FAdd.apply(32, 0x3f80_0000, 1, 0), 0x3f80_0000);
        assert_eq!(AtomOp::MinS.apply(32, 5, 0xffff_ffff, 0), 0xffff_ffff);
        assert_eq!(AtomOp::MinU.apply(32, 5, 0xffff_ffff, 0), 5);
        assert_eq!(AtomOp::MaxS.apply(64, 5, u64::MAX, 0), 5);
        assert_eq!(AtomOp::Inc.apply(32, 7, 7, 0), 0);
        assert_eq!(AtomOp::Inc.apply(32, 6, 7, 0), 7);
        assert_eq!(AtomOp::Dec.apply(32, 0, 7, 0), 7);
        assert_eq!(AtomOp::Dec.apply(32, 9, 7, 0), 7);
        assert_eq!(AtomOp::Dec.apply(32, 3, 7, 0), 2);
        assert_eq!(AtomOp::Cas.apply(32, 3, 3, 9), 9);
        assert_eq!(AtomOp::Cas.apply(32, 4, 3, 9), 4);
        assert_eq!(AtomOp::Load.apply(32, 0x7fff_ffff, 5, 9), 0x7fff_ffff);
    }
}
