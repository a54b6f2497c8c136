//! ELF building blocks of the writer: string tables that share repeated names, sections with
//! their header fields and contents, symbols, and the relocation-action table ptxas 11.8
//! writes into `.nv.rel.action`.
//!
//! In: names, section contents and flags. Out: the pieces [`write`] lays out.

use super::*;

/// The relocation-action table ptxas 11.8 writes into `.nv.rel.action`: a header naming the
/// base relocation type (75 = R_CUDA_ABS55_16_34), then one 8-byte action per relocation type:
/// symbol kind, addend shift, source position/length/destination position twice.
pub(super) fn rel_action_table() -> Vec<u8> {
    const ADDR: u8 = 0;
    const GADDR: u8 = 1;
    const FDESC: u8 = 2;
    const HEADER_INDEX: u8 = 3;
    let mut v = vec![0x4b, 0, 0, 0, 0, 0, 0, 0];
    v.extend_from_slice(&[ADDR, 2, 2, 8, 16, 10, 47, 34]); // R_CUDA_ABS55_16_34
    for kind in [ADDR, GADDR, FDESC] {
        // R_CUDA_8_<n>, R_CUDA_G8_<n>, R_CUDA_FUNC_DESC_8_<n>
        for pos in (0..64).step_by(8) {
            v.extend_from_slice(&[kind, 0, pos, 8, 0, 0, 0, 0]);
        }
    }
    v.extend_from_slice(&[ADDR, 0, 0, 20, 44, 0, 0, 0]); // R_CUDA_ABS20_44
    v.extend_from_slice(&[HEADER_INDEX, 0, 0, 12, 0, 0, 0, 0]); // R_CUDA_SAMP_HEADER_INDEX_0
    v
}

/// A string table that hands out each name's offset once (ptxas shares repeated names).
pub(super) struct StrTab {
    pub(super) bytes: Vec<u8>,
    pub(super) index: rustc_hash::FxHashMap<String, u32>,
}

pub(super) struct Sec {
    pub(super) name: String,
    pub(super) sh_type: u32,
    pub(super) flags: u64,
    pub(super) link: u32,
    pub(super) info: u32,
    pub(super) align: u64,
    pub(super) entsize: u64,
    /// Bytes (empty for NOBITS).
    pub(super) data: Vec<u8>,
    /// Size for NOBITS sections.
    pub(super) nobits_size: u64,
}

pub(super) struct Sym {
    pub(super) name: String,
    pub(super) info: u8,
    pub(super) other: u8,
    pub(super) shndx: u16,
    pub(super) value: u64,
    pub(super) size: u64,
}

pub(super) fn align_up(x: u64, a: u64) -> u64 {
    if a <= 1 {
        x
    } else {
        x.div_ceil(a) * a
    }
}

pub(super) fn data_section(name: &str, d: &DataSpec, sh_type: u32, flags: u64) -> Sec {
    let mut s = Sec::new(name.to_string(), sh_type, flags, d.align.max(1));
    if sh_type == elf::SHT_NOBITS {
        s.nobits_size = d.size;
    } else {
        let mut bytes = d.init.clone();
        bytes.resize(d.size as usize, 0);
        s.data = bytes;
    }
    s
}

impl StrTab {
    pub(super) fn new() -> StrTab {
        StrTab {
            bytes: vec![0],
            index: Default::default(),
        }
    }
    pub(super) fn add(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&o) = self.index.get(s) {
            return o;
        }
        let o = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self.index.insert(s.to_string(), o);
        o
    }
    pub(super) fn get(&self, s: &str) -> u32 {
        self.index.get(s).copied().unwrap_or(0)
    }
}

impl Sec {
    pub(super) fn new(name: String, sh_type: u32, flags: u64, align: u64) -> Sec {
        Sec {
            name,
            sh_type,
            flags,
            link: 0,
            info: 0,
            align,
            entsize: 0,
            data: Vec::new(),
            nobits_size: 0,
        }
    }
    pub(super) fn size(&self) -> u64 {
        if self.sh_type == elf::SHT_NOBITS {
            self.nobits_size
        } else {
            self.data.len() as u64
        }
    }
}
