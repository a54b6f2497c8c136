//! The driver's texture descriptor table: where `txq.<attribute>` reads the attributes a
//! texture header does not hold (issue 21).
//!
//! # What ptxas 11.8 does (sm_50, unified texture mode)
//!
//! `txq.width/height/depth` read the texture header (`TXQ ... TEX_HEADER_DIMENSION`). Every
//! other attribute is an ordinary global load from a table the CUDA driver keeps:
//!
//! ```text
//! MOV      idx, c[0x0][slot]         the texture's header index (a .texref's relocated
//!                                    word, a texture object's parameter word, or the
//!                                    handle's low register)
//! LOP32I.AND idx, idx, 0xfffff       the header index is the handle's low 20 bits
//! MOV32I   size, 0x0                 R_CUDA_ABS32_20 against `.nv.unified.texrefDescSize`
//! XMAD     t, idx, size, c[0x2][k]   idx × size + the field's offset (three XMADs, the
//! XMAD.MRG u, idx, size.H1, RZ       offset a literal of constant bank 2)
//! XMAD.PSL.CBCC lo, idx.H1, u.H1, t
//! IADD     a.CC, lo, c[0x0][0xb0]    + the table's 64-bit address
//! IADD.X   a+1, RZ, c[0x0][0xb4]
//! LDG.E.CI d, [a]
//! ```
//!
//! `.nv.unified.texrefDescSize` is an undefined WEAK OBJECT symbol of size 4 (`st_info`
//! 0x21) that ptxas places right after the kernel's `.text` section symbol; the driver
//! resolves it to its descriptor size. Field offsets ([`field_offset`]), as ptxas writes
//! them into constant bank 2: addr_mode_0 0x0c, addr_mode_1 0x10, addr_mode_2 0x14,
//! filter_mode 0x18, normalized_coords 0x1c, channel_data_type 0x20, channel_order 0x24,
//! array_size 0x28, num_mipmap_levels 0x2c, num_samples 0x30. Surfaces (`suq`) use a second
//! table at `c[0x0][0xc0]` scaled by `.nv.surfrefDescSize` ([`surf`]).
//!
//! # The model (ours, shared by the simulator and `verify`)
//!
//! The descriptor size the driver uses is not in the cubin; the simulator resolves the
//! relocation to [`DESC_SIZE`] (64 bytes, enough for every field above) and places the table
//! at [`TABLE_BASE`], a region of its own that is not part of the launch's output. Entry `i`
//! describes the texture of header index `i`: a texture object's handle is its index (the
//! handles of [`crate::texture::TextureBindings`] are small integers), and a bound `.texref`
//! gets the index [`named_index`] (after the highest object handle, in name order), which
//! the simulator writes into the `.texref`'s slot word. Each field holds what
//! [`crate::texture::Texture::query`] returns, so `ir::eval` (which asks the model directly)
//! and the simulator (which runs the loads) agree: `CUarray_format` codes for
//! `channel_data_type` (`CU_AD_FORMAT_UNSIGNED_INT8` = 0x01 ... `CU_AD_FORMAT_FLOAT` =
//! 0x20), the channel count for `channel_order`, PTX's `{wrap, mirror, clamp_ogl,
//! clamp_to_edge, clamp_to_border}` numbering for the address modes, 0/1 for point/linear
//! and for normalized coordinates. Width, height and depth (level 0) are written at 0x0,
//! 0x4 and 0x8, an assumption: ptxas reads them from the header, and the surface table
//! keeps its depth at 0x8.

pub mod samp;
pub mod surf;

use crate::texture::{Texture, TextureBindings, TxqQuery};

/// The symbol the descriptor size relocation names.
pub const TEXREF_DESC_SIZE_SYMBOL: &str = ".nv.unified.texrefDescSize";

/// `st_info` of [`TEXREF_DESC_SIZE_SYMBOL`]: WEAK binding, OBJECT type (as ptxas 11.8).
pub const DESC_SIZE_SYMBOL_INFO: u8 = 0x21;

/// The byte offset in constant bank 0 of the table's 64-bit address.
pub const TABLE_CBANK_OFFSET: u32 = 0xb0;

/// The descriptor size of the model (what the simulator resolves the relocation to).
pub const DESC_SIZE: u32 = 0x40;

/// Where the simulator places the table.
pub const TABLE_BASE: u64 = 0x6_0000_0000;

/// Header indices are the handle's low 20 bits.
pub const INDEX_MASK: u32 = 0xf_ffff;

/// The byte offset of `q` in a descriptor, for the attributes ptxas reads from the table
/// (`None` for width/height/depth, which come from the header, and for
/// `force_unnormalized_coords`, a sampler attribute of independent mode).
pub fn field_offset(q: TxqQuery) -> Option<u32> {
    if matches!(q, TxqQuery::Width | TxqQuery::Height | TxqQuery::Depth) {
        return None;
    }
    FIELDS.iter().find(|&&(f, _)| f == q).map(|&(_, off)| off)
}

/// The fields the model writes, with their offsets: the sizes (our assumption), then the
/// fields ptxas reads (its offsets).
const FIELDS: [(TxqQuery, u32); 13] = [
    (TxqQuery::Width, 0x0),
    (TxqQuery::Height, 0x4),
    (TxqQuery::Depth, 0x8),
    (TxqQuery::AddrMode0, 0x0c),
    (TxqQuery::AddrMode1, 0x10),
    (TxqQuery::AddrMode2, 0x14),
    (TxqQuery::FilterMode, 0x18),
    (TxqQuery::NormalizedCoords, 0x1c),
    (TxqQuery::ChannelDataType, 0x20),
    (TxqQuery::ChannelOrder, 0x24),
    (TxqQuery::ArraySize, 0x28),
    (TxqQuery::NumMipmapLevels, 0x2c),
    (TxqQuery::NumSamples, 0x30),
];

/// The highest header index the table holds: texture objects with a larger handle are
/// left out (their loads fault in the simulator).
const MAX_INDEX: u64 = 0xffff;

/// The first index of the bound `.texref`s: one past the highest object handle kept.
fn first_named(b: &TextureBindings) -> u32 {
    b.objects()
        .map(|(h, _)| h)
        .filter(|&h| h <= MAX_INDEX)
        .max()
        .map_or(1, |h| h as u32 + 1)
}

/// The header index of the `.texref` bound as `name` (`None` when none is).
pub fn named_index(b: &TextureBindings, name: &str) -> Option<u32> {
    let at = b.names().position(|(n, _)| n == name)?;
    Some(first_named(b) + at as u32)
}

/// The table's bytes: one [`DESC_SIZE`]-byte entry per header index from 0 to the last one
/// used; an index that names no texture holds zeros.
pub fn table_bytes(b: &TextureBindings) -> Vec<u8> {
    let mut entries: Vec<(u32, &Texture)> = b
        .objects()
        .filter(|&(h, _)| h <= MAX_INDEX)
        .map(|(h, t)| (h as u32, t))
        .collect();
    let first = first_named(b);
    entries.extend(
        b.names()
            .enumerate()
            .map(|(k, (_, t))| (first + k as u32, t)),
    );
    let count = entries.iter().map(|&(i, _)| i + 1).max().unwrap_or(0);
    let mut bytes = vec![0u8; (count * DESC_SIZE) as usize];
    for (i, t) in entries {
        let base = (i * DESC_SIZE) as usize;
        for (q, off) in FIELDS {
            let at = base + off as usize;
            bytes[at..at + 4].copy_from_slice(&t.query(q, 0).to_le_bytes());
        }
    }
    bytes
}

/// PTX's name of `q` (`channel_order`, `addr_mode_0`, ...).
pub fn query_name(q: TxqQuery) -> &'static str {
    match q {
        TxqQuery::Width => "width",
        TxqQuery::Height => "height",
        TxqQuery::Depth => "depth",
        TxqQuery::ChannelDataType => "channel_data_type",
        TxqQuery::ChannelOrder => "channel_order",
        TxqQuery::NormalizedCoords => "normalized_coords",
        TxqQuery::ForceUnnormalizedCoords => "force_unnormalized_coords",
        TxqQuery::FilterMode => "filter_mode",
        TxqQuery::AddrMode0 => "addr_mode_0",
        TxqQuery::AddrMode1 => "addr_mode_1",
        TxqQuery::AddrMode2 => "addr_mode_2",
        TxqQuery::ArraySize => "array_size",
        TxqQuery::NumMipmapLevels => "num_mipmap_levels",
        TxqQuery::NumSamples => "num_samples",
    }
}
