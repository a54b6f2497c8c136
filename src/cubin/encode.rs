//! ELF encodings shared by the cubin writer ([`super::write`]) and the relocatable rewrite
//! ([`super::relocatable`]): the ELF header, symbol and relocation entries, and the layout
//! of section bytes and section headers.
//!
//! In: the fields of each header, entry or section, already final (names as string-table
//! offsets, symbol indices as they stand in `.symtab`). Out: their little-endian bytes. The
//! layout places sections in list order after the 64-byte ELF header, each at its alignment
//! (a section that occupies no file bytes still moves the cursor to its aligned offset), and
//! the section header table at the next multiple of 8 after the last section's bytes.

/// The ELF header fields after the 16 identification bytes (`e_entry` is always 0).
pub(super) struct ElfHeader {
    pub e_type: u16,
    pub version: u32,
    pub phoff: u64,
    pub shoff: u64,
    pub flags: u32,
    pub phnum: u16,
    pub shnum: u16,
    pub shstrndx: u16,
}

/// Append the 64-byte ELF header: `ident` (16 bytes), then `h`'s fields.
pub(super) fn elf_header(out: &mut Vec<u8>, ident: &[u8], h: &ElfHeader) {
    out.extend_from_slice(ident);
    out.extend_from_slice(&h.e_type.to_le_bytes());
    out.extend_from_slice(&super::EM_CUDA.to_le_bytes());
    out.extend_from_slice(&h.version.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // entry
    out.extend_from_slice(&h.phoff.to_le_bytes());
    out.extend_from_slice(&h.shoff.to_le_bytes());
    out.extend_from_slice(&h.flags.to_le_bytes());
    for f in [64u16, 56, h.phnum, 64, h.shnum, h.shstrndx] {
        out.extend_from_slice(&f.to_le_bytes());
    }
}

/// One `.symtab` entry (`Elf64_Sym`, 24 bytes); `name` is the offset in `.strtab`.
pub(super) fn symbol_entry(
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
) -> Vec<u8> {
    let mut e = Vec::with_capacity(24);
    e.extend_from_slice(&name.to_le_bytes());
    e.push(info);
    e.push(other);
    e.extend_from_slice(&shndx.to_le_bytes());
    e.extend_from_slice(&value.to_le_bytes());
    e.extend_from_slice(&size.to_le_bytes());
    e
}

/// One relocation entry: `Elf64_Rel` (16 bytes), or `Elf64_Rela` (24) when there is an
/// `addend`.
pub(super) fn reloc_entry(
    out: &mut Vec<u8>,
    offset: u64,
    sym: u32,
    rtype: u32,
    addend: Option<i64>,
) {
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&((u64::from(sym) << 32) | u64::from(rtype)).to_le_bytes());
    if let Some(a) = addend {
        out.extend_from_slice(&a.to_le_bytes());
    }
}

/// A section as the layout sees it: its header fields and its file bytes.
pub(super) struct SectionLayout<'a> {
    /// Offset of the name in the section-name string table.
    pub name: u32,
    pub sh_type: u32,
    pub flags: u64,
    pub size: u64,
    pub link: u32,
    pub info: u32,
    pub align: u64,
    pub entsize: u64,
    /// The bytes in the file; `None` for a section that occupies none (NOBITS and the CUDA
    /// memory types of an object).
    pub data: Option<&'a [u8]>,
}

/// Each section's file offset (section 0's is 0), and the section header table's.
pub(super) fn section_offsets(secs: &[SectionLayout]) -> (Vec<u64>, u64) {
    let mut offsets = vec![0u64; secs.len()];
    let mut pos = 64u64;
    for (i, s) in secs.iter().enumerate().skip(1) {
        let off = pos.next_multiple_of(s.align.max(1));
        offsets[i] = off;
        pos = match s.data {
            Some(d) => off + d.len() as u64,
            None => off,
        };
    }
    (offsets, pos.next_multiple_of(8))
}

/// Append every section's bytes at its offset, then the section header table at `shoff`.
pub(super) fn sections_and_headers(
    out: &mut Vec<u8>,
    secs: &[SectionLayout],
    offsets: &[u64],
    shoff: u64,
) {
    for (i, s) in secs.iter().enumerate().skip(1) {
        if let Some(d) = s.data {
            out.resize(offsets[i] as usize, 0);
            out.extend_from_slice(d);
        }
    }
    out.resize(shoff as usize, 0);
    for (i, s) in secs.iter().enumerate() {
        out.extend_from_slice(&s.name.to_le_bytes());
        out.extend_from_slice(&s.sh_type.to_le_bytes());
        out.extend_from_slice(&s.flags.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // addr
        out.extend_from_slice(&offsets[i].to_le_bytes());
        out.extend_from_slice(&s.size.to_le_bytes());
        out.extend_from_slice(&s.link.to_le_bytes());
        out.extend_from_slice(&s.info.to_le_bytes());
        out.extend_from_slice(&s.align.to_le_bytes());
        out.extend_from_slice(&s.entsize.to_le_bytes());
    }
}
