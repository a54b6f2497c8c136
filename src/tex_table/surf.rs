//! The driver's surface descriptor table: where `suq.<attribute>` reads the attributes a
//! surface header does not hold (issue 21).
//!
//! # What ptxas 11.8 does (sm_50)
//!
//! `suq.width`/`suq.height` are `TXQ ... TEX_HEADER_DIMENSION` with mask 0x1/0x2 on the
//! surface's word (a `.surfref`'s relocated word or a surface object parameter's word:
//! the immediate slot is the word index) or, for a handle in a register, `TXQ.B`. Every
//! other attribute is the load [`super`] describes for `txq`, against a second table:
//! the index masked to 20 bits, times `.nv.surfrefDescSize` (relocated `MOV32I`, an
//! undefined WEAK OBJECT symbol of size 4 placed after the kernel's `.text` symbol), plus
//! the field's offset (a literal of constant bank 2), plus the table's address at
//! `c[0x0][0xc0]`, then `LDG.E.CI`. Field offsets, as ptxas writes them into bank 2:
//! depth 0x08, channel_data_type 0x0c, channel_order 0x10, memory_layout 0x14, array_size
//! 0x1c.
//!
//! # The model
//!
//! The simulator resolves the relocation to [`DESC_SIZE`] (32 bytes) and places the table at
//! [`TABLE_BASE`], a region of its own outside the launch's output. Entry `i` describes the
//! surface of handle `i` (the index into the launch's surfaces, which is also what the
//! simulator writes into a `.surfref`'s word, see [`crate::surface`]). Each field holds
//! [`SurfaceDesc::query`]'s answer, so `ir::eval` and the simulator agree. Width and height
//! are written at 0x0 and 0x4 (an assumption: ptxas reads them from the header).

use crate::surface::{SurfQuery, SurfaceDesc};

/// The symbol the descriptor size relocation names.
pub const DESC_SIZE_SYMBOL: &str = ".nv.surfrefDescSize";

/// The byte offset in constant bank 0 of the table's 64-bit address.
pub const TABLE_CBANK_OFFSET: u32 = 0xc0;

/// The descriptor size of the model.
pub const DESC_SIZE: u32 = 0x20;

/// Where the simulator places the table (after the texture table's 4 MiB at most).
pub const TABLE_BASE: u64 = 0x6_4000_0000;

/// The fields the model writes, with their offsets.
const FIELDS: [(SurfQuery, u32); 7] = [
    (SurfQuery::Width, 0x0),
    (SurfQuery::Height, 0x4),
    (SurfQuery::Depth, 0x08),
    (SurfQuery::ChannelDataType, 0x0c),
    (SurfQuery::ChannelOrder, 0x10),
    (SurfQuery::MemoryLayout, 0x14),
    (SurfQuery::ArraySize, 0x1c),
];

/// The byte offset of `q` in a descriptor, for the attributes ptxas reads from the table
/// (`None` for width and height, which come from the header).
pub fn field_offset(q: SurfQuery) -> Option<u32> {
    if matches!(q, SurfQuery::Width | SurfQuery::Height) {
        return None;
    }
    FIELDS.iter().find(|&&(f, _)| f == q).map(|&(_, off)| off)
}

/// The table's bytes: one [`DESC_SIZE`]-byte entry per surface of the launch, in order.
pub fn table_bytes(surfaces: &[SurfaceDesc]) -> Vec<u8> {
    let mut bytes = vec![0u8; surfaces.len() * DESC_SIZE as usize];
    for (i, s) in surfaces.iter().enumerate() {
        let base = i * DESC_SIZE as usize;
        for (q, off) in FIELDS {
            let at = base + off as usize;
            bytes[at..at + 4].copy_from_slice(&s.query(q).to_le_bytes());
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::SurfFormat;

    #[test]
    fn entries_hold_the_query_answers() {
        let s = SurfaceDesc {
            name: None,
            base: 0,
            width: 64,
            height: 3,
            depth: 2,
            layers: 5,
            format: SurfFormat::parse("f16x2").unwrap(),
        };
        let t = table_bytes(&[s.clone(), s]);
        assert_eq!(t.len(), 2 * DESC_SIZE as usize);
        let word = |at: usize| u32::from_le_bytes(t[at..at + 4].try_into().unwrap());
        let e = DESC_SIZE as usize;
        assert_eq!(word(e), 16); // 64 bytes of 4-byte elements
        assert_eq!(word(e + 0x08), 2);
        assert_eq!(word(e + 0x0c), 0x10); // CU_AD_FORMAT_HALF
        assert_eq!(word(e + 0x10), 2);
        assert_eq!(word(e + 0x14), 1);
        assert_eq!(word(e + 0x1c), 5);
        assert_eq!(field_offset(SurfQuery::Width), None);
        assert_eq!(field_offset(SurfQuery::ArraySize), Some(0x1c));
    }
}
