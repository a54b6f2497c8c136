//! The driver's sampler descriptor table of `.texmode_independent`: where `txq` of a sampler
//! attribute (`addr_mode_0..2`, `filter_mode`, `force_unnormalized_coords` of a
//! `.samplerref`) reads (issue 21).
//!
//! # What ptxas 11.8 does (sm_50)
//!
//! The sampler gets its own word of constant bank 0 after the parameters (in first-use
//! order with the bound textures), relocated by `R_CUDA_SAMP_HEADER_INDEX` against the
//! sampler alone; the driver writes the sampler's header index into the word's bits 20 and
//! up (where a (texture, sampler) pair's word keeps it). The load is the texture table's
//! ([`crate::tex_table`]) with three differences:
//!
//! ```text
//! MOV      idx, c[0x0][slot]
//! SHR.U32  idx, idx, 0x14            the sampler index is the word's high 12 bits
//! MOV32I   size, 0x0                 R_CUDA_ABS32_20 against `.nv.independent.samplerrefDescSize`
//! XMAD     t, idx, size, c[0x2][k]   (RZ instead of the constant for a field at offset 0)
//! ...                                the same XMAD.MRG / XMAD.PSL.CBCC
//! IADD     a.CC, lo, c[0x0][0xb8]    the sampler table's address
//! IADD.X   a+1, RZ, c[0x0][0xbc]
//! LDG.E.CI d, [a]
//! ```
//!
//! Field offsets ([`field_offset`], from ptxas's constant bank 2): addr_mode_0 0x0,
//! addr_mode_1 0x4, addr_mode_2 0x8, filter_mode 0xc, force_unnormalized_coords 0x10.
//! `.nv.independent.samplerrefDescSize` is, like the texture table's size symbol, an
//! undefined WEAK OBJECT of size 4 right after the kernel's `.text` section symbol.
//!
//! # The model (ours, shared by `ir::eval` and the simulator)
//!
//! The driver's descriptor size is not in the cubin: the simulator resolves it to
//! [`DESC_SIZE`] and places the table at [`TABLE_BASE`]. Entry `i` describes the `i`-th
//! sampler the kernel relocates a word against ([`crate::sim::KernelInfo::samplers`] order:
//! the module's `EIATTR_SAMPLER_INIT` state of each), and the simulator writes `i << 20`
//! into that sampler's own slot word. Each field holds the code ptxas records in
//! `EIATTR_SAMPLER_INIT` ([`crate::sampler`]: address modes `wrap` 0, `mirror` 1,
//! `clamp_ogl` 2, `clamp_to_edge` 3, `clamp_to_border` 4 — PTX's `txq` numbering, the one
//! the texture table uses; filters `nearest` 0, `linear` 1) and 0/1 for
//! `force_unnormalized_coords`. A field the initializer leaves out reads 0 (`wrap`,
//! `nearest`, not forced): an assumption, the value of a zero-filled descriptor; the
//! driver's actual default was not measurable without a GPU.

use crate::sampler::{SamplerInit, UNSET};
use crate::texture::TxqQuery;

/// The symbol the descriptor size relocation names.
pub const DESC_SIZE_SYMBOL: &str = ".nv.independent.samplerrefDescSize";

/// The byte offset in constant bank 0 of the table's 64-bit address.
pub const TABLE_CBANK_OFFSET: u32 = 0xb8;

/// The descriptor size of the model.
pub const DESC_SIZE: u32 = 0x20;

/// Where the simulator places the table.
pub const TABLE_BASE: u64 = 0x6_8000_0000;

/// The sampler index is the slot word shifted right by this.
pub const INDEX_SHIFT: u32 = 20;

/// The byte offset of sampler attribute `q` in a descriptor (`None` for a texture
/// attribute).
pub fn field_offset(q: TxqQuery) -> Option<u32> {
    Some(match q {
        TxqQuery::AddrMode0 => 0x0,
        TxqQuery::AddrMode1 => 0x4,
        TxqQuery::AddrMode2 => 0x8,
        TxqQuery::FilterMode => 0xc,
        TxqQuery::ForceUnnormalizedCoords => 0x10,
        _ => return None,
    })
}

/// What `txq.<q>` of a sampler initialized by `init` returns (the module essay's model);
/// `None` for a texture attribute.
pub fn query(init: &SamplerInit, q: TxqQuery) -> Option<u32> {
    let code = |c: u8| if c == UNSET { 0 } else { u32::from(c) };
    Some(match q {
        TxqQuery::AddrMode0 => code(init.address[0]),
        TxqQuery::AddrMode1 => code(init.address[1]),
        TxqQuery::AddrMode2 => code(init.address[2]),
        TxqQuery::FilterMode => code(init.filter),
        TxqQuery::ForceUnnormalizedCoords => u32::from(init.force_unnormalized == Some(true)),
        _ => return None,
    })
}

/// The table's bytes: one [`DESC_SIZE`]-byte entry per sampler, in order.
pub fn table_bytes(samplers: &[SamplerInit]) -> Vec<u8> {
    const FIELDS: [TxqQuery; 5] = [
        TxqQuery::AddrMode0,
        TxqQuery::AddrMode1,
        TxqQuery::AddrMode2,
        TxqQuery::FilterMode,
        TxqQuery::ForceUnnormalizedCoords,
    ];
    let mut bytes = vec![0u8; samplers.len() * DESC_SIZE as usize];
    for (i, s) in samplers.iter().enumerate() {
        for q in FIELDS {
            let (Some(off), Some(v)) = (field_offset(q), query(s, q)) else {
                continue;
            };
            let at = i * DESC_SIZE as usize + off as usize;
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::FieldValue;

    #[test]
    fn entries_hold_the_initializer_codes() {
        let mut s = SamplerInit::default();
        s.set("addr_mode_1", FieldValue::Word("clamp_to_border"))
            .unwrap();
        s.set("filter_mode", FieldValue::Word("linear")).unwrap();
        s.set("force_unnormalized_coords", FieldValue::Int(1))
            .unwrap();
        let b = table_bytes(&[SamplerInit::default(), s]);
        assert_eq!(b.len(), 2 * DESC_SIZE as usize);
        let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(word(0x20 + 0x4), 4);
        assert_eq!(word(0x20 + 0xc), 1);
        assert_eq!(word(0x20 + 0x10), 1);
        assert_eq!(word(0x20), 0);
        assert_eq!(word(0x10), 0);
        assert_eq!(query(&s, TxqQuery::Width), None);
    }
}
