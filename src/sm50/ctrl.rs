//! Control words and 32-byte bundles (sm50-isa.md §1).
//!
//! In: the 21-bit per-instruction control field, or a 32-byte bundle
//! `[control word][insn0][insn1][insn2]`. Out: a typed [`Ctrl`] and a [`Bundle`].
//!
//! Layout of the 21-bit field: stall 0..3, yield bit 4, write barrier 5..7 (7 = none),
//! read barrier 8..10 (7 = none), wait mask 11..16, reuse 17..20. Slot `n` of a bundle uses
//! control-word bits `21n .. 21n+20`; bit 63 is unused.
//!
//! nvdisasm rejects barrier index 6, reuse bit 3, and any barrier on a fixed-latency
//! instruction; [`Ctrl::validate`] applies exactly those checks so that what we emit is
//! always something nvdisasm accepts.

use std::fmt;

/// One instruction's control field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ctrl {
    /// Cycles to wait before issuing the next instruction (0..15).
    pub stall: u8,
    /// Bit 4 (ptxas sets it on most instructions; with stall 0 it marks a dual-issue pair).
    pub yield_: bool,
    /// Scoreboard set when the result is written (0..5).
    pub wbar: Option<u8>,
    /// Scoreboard set when the sources have been read (0..5).
    pub rbar: Option<u8>,
    /// Bit i = wait for scoreboard i before issuing.
    pub wait: u8,
    /// Operand reuse: bit0 = A, bit1 = B, bit2 = C.
    pub reuse: u8,
}

/// Why a control field is not one nvdisasm accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CtrlError {
    #[error("barrier index {0} is reserved (only 0..5 or none)")]
    BadBarrier(u8),
    #[error("reuse bit 3 must be zero")]
    ReuseBit3,
    #[error("a fixed-latency instruction cannot set a scoreboard")]
    BarrierOnFixedLatency,
    #[error("stall {0} exceeds 15")]
    Stall(u8),
    #[error("wait mask {0:#x} exceeds 6 bits")]
    Wait(u8),
}

impl Ctrl {
    /// The neutral field ptxas uses on padding NOPs (`0x7e0`).
    pub const NEUTRAL: Ctrl = Ctrl {
        stall: 0,
        yield_: false,
        wbar: None,
        rbar: None,
        wait: 0,
        reuse: 0,
    };

    /// Decode a 21-bit field (higher bits ignored). Barrier values 6 are kept as
    /// `Some(6)` so that `to_bits` round-trips; `validate` reports them.
    pub fn from_bits(bits: u32) -> Ctrl {
        let bar = |v: u32| if v == 7 { None } else { Some(v as u8) };
        Ctrl {
            stall: (bits & 0xf) as u8,
            yield_: bits >> 4 & 1 != 0,
            wbar: bar(bits >> 5 & 7),
            rbar: bar(bits >> 8 & 7),
            wait: (bits >> 11 & 0x3f) as u8,
            reuse: (bits >> 17 & 0xf) as u8,
        }
    }

    /// Encode as the 21-bit field.
    pub fn to_bits(self) -> u32 {
        let bar = |b: Option<u8>| b.map_or(7, |v| v as u32 & 7);
        (self.stall as u32 & 0xf)
            | (self.yield_ as u32) << 4
            | bar(self.wbar) << 5
            | bar(self.rbar) << 8
            | (self.wait as u32 & 0x3f) << 11
            | (self.reuse as u32 & 0xf) << 17
    }

    /// Check the field the way nvdisasm does, for an instruction of the given latency class.
    pub fn validate(self, variable_latency: bool) -> Result<(), CtrlError> {
        if self.stall > 15 {
            return Err(CtrlError::Stall(self.stall));
        }
        if self.wait > 0x3f {
            return Err(CtrlError::Wait(self.wait));
        }
        for b in [self.wbar, self.rbar].into_iter().flatten() {
            if b > 5 {
                return Err(CtrlError::BadBarrier(b));
            }
            if !variable_latency {
                return Err(CtrlError::BarrierOnFixedLatency);
            }
        }
        if self.reuse & 8 != 0 {
            return Err(CtrlError::ReuseBit3);
        }
        Ok(())
    }

    /// maxas column style `wait:rbar:wbar:yield:stall`, e.g. `--:-:-:Y:6`. maxas writes
    /// `Y` when bit 4 is **0**; we keep that convention so its readers understand us.
    pub fn maxas(self) -> String {
        let wait = if self.wait == 0 {
            "--".to_string()
        } else {
            format!("{:02x}", self.wait)
        };
        let b = |v: Option<u8>| v.map_or("-".to_string(), |v| (v + 1).to_string());
        format!(
            "{wait}:{}:{}:{}:{}",
            b(self.rbar),
            b(self.wbar),
            if self.yield_ { "-" } else { "Y" },
            self.stall
        )
    }

    /// CuAssembler style `[B------:R-:W-:Y:S06]` (wait mask printed from SB5 down to SB0).
    pub fn cuasm(self) -> String {
        let mut w = String::from("B");
        for i in (0..6).rev() {
            w.push(if self.wait >> i & 1 != 0 {
                char::from(b'0' + i)
            } else {
                '-'
            });
        }
        let b = |v: Option<u8>| v.map_or("-".to_string(), |v| v.to_string());
        format!(
            "[{w}:R{}:W{}:{}:S{:02}]",
            b(self.rbar),
            b(self.wbar),
            if self.yield_ { "Y" } else { "-" },
            self.stall
        )
    }
}

impl fmt::Display for Ctrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cuasm())
    }
}

/// 32 bytes of code: one control word and three instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub ctrl: [Ctrl; 3],
    pub insts: [u64; 3],
}

impl Bundle {
    /// The 64-bit control word.
    pub fn ctrl_word(&self) -> u64 {
        (0..3).fold(0u64, |w, k| w | (self.ctrl[k].to_bits() as u64) << (21 * k))
    }

    /// Split a control word into its three fields.
    pub fn split_ctrl(word: u64) -> [Ctrl; 3] {
        [0, 1, 2].map(|k| Ctrl::from_bits((word >> (21 * k)) as u32 & 0x1f_ffff))
    }

    pub fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0..8].copy_from_slice(&self.ctrl_word().to_le_bytes());
        for k in 0..3 {
            b[8 + 8 * k..16 + 8 * k].copy_from_slice(&self.insts[k].to_le_bytes());
        }
        b
    }

    /// Read a bundle; `None` unless exactly 32 bytes are given.
    pub fn from_bytes(b: &[u8]) -> Option<Bundle> {
        if b.len() != 32 {
            return None;
        }
        let word = |k: usize| u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().unwrap());
        Some(Bundle {
            ctrl: Bundle::split_ctrl(word(0)),
            insts: [word(1), word(2), word(3)],
        })
    }
}

/// Byte offset of instruction `n` of a laid-out `.text` (three instructions after each
/// bundle's control word).
pub fn inst_addr(n: usize) -> u64 {
    (n / 3) as u64 * 32 + 8 + (n % 3) as u64 * 8
}

/// The instruction at byte offset `addr` of a laid-out `.text` (the inverse of [`inst_addr`];
/// an address inside an instruction word names that instruction); `None` at a control word.
pub fn inst_index(addr: u64) -> Option<usize> {
    let slot = addr % 32;
    (slot >= 8).then(|| (3 * (addr / 32) + (slot - 8) / 8) as usize)
}

/// The address of the instruction in slot `slot` of the bundle starting at `base`.
pub fn slot_addr(base: u64, slot: usize) -> u64 {
    base + 8 + 8 * slot as u64
}

/// Branch target of a relative branch at `addr` with the signed 24-bit field `rel`.
pub fn branch_target(addr: u64, rel: i32) -> u64 {
    addr.wrapping_add(8).wrapping_add(rel as i64 as u64)
}

/// The rel24 field value for a branch at `addr` to `target`, if it fits.
pub fn branch_rel(addr: u64, target: u64) -> Option<u32> {
    let rel = target as i64 - (addr as i64 + 8);
    if (-(1 << 23)..(1 << 23)).contains(&rel) {
        Some(rel as u32 & 0xff_ffff)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_control_word_fields() {
        // seed a_i_plus_10 @0x40: 0x001f8400f62007ed (sm50-isa.md §1.3).
        let c = Bundle::split_ctrl(0x001f8400f62007ed);
        assert_eq!((c[0].stall, c[0].yield_, c[0].wbar), (13, false, None));
        assert_eq!((c[1].stall, c[1].yield_, c[1].wbar), (1, true, Some(5)));
        assert_eq!((c[2].stall, c[2].yield_), (1, false));
        let b = Bundle {
            ctrl: c,
            insts: [0; 3],
        };
        assert_eq!(b.ctrl_word(), 0x001f8400f62007ed);
    }

    #[test]
    fn column_formats() {
        let c = Ctrl::from_bits(0x7f6);
        assert_eq!(c.cuasm(), "[B------:R-:W-:Y:S06]");
        assert_eq!(c.maxas(), "--:-:-:-:6");
        let k1 = Bundle::split_ctrl(0x001cc441fe00071f)[1];
        assert_eq!((k1.wait, k1.reuse, k1.stall), (1, 1, 0));
        assert_eq!(k1.cuasm(), "[B-----0:R-:W-:Y:S00]");
    }

    #[test]
    fn branch_offsets() {
        assert_eq!(branch_rel(0x50, 0x50), Some(0xfffff8));
        assert_eq!(branch_target(0x50, -8), 0x50);
        assert_eq!(branch_rel(0, 1 << 30), None);
    }
}
