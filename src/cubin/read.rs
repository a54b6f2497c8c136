//! The cubin reader: bytes in, [`Cubin`] out.
//!
//! The ELF structure is parsed by hand with explicit bounds checks rather than through the
//! `object` crate: every field must be validated against the input length before use, the
//! CUDA-specific fields (`sh_info` of `.text`, section types 0x7000_00xx) are read raw anyway,
//! and a failure has to name what was wrong. Section and program header tables, names, symbol entries and relocation entries are all
//! sliced out of the input, so the reader never allocates more than a small multiple of the
//! input size whatever the header counts claim. `.nv.info` records are decoded by
//! [`super::eiattr::decode`]. The kernels are the symbols with `STO_CUDA_ENTRY`, listed in the
//! order of their `.text` sections.

use super::eiattr;
use super::elf;
use super::{
    Attribute, Cubin, CubinError, Header, Kernel, Param, ProgramHeader, Reloc, RelocSection,
    Section, Symbol, EM_CUDA,
};

/// Bounds-checked little-endian access to the input.
struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn slice(&self, what: &str, start: u64, len: u64) -> Result<&'a [u8], CubinError> {
        let end = start.checked_add(len).ok_or_else(|| {
            CubinError::Malformed(format!(
                "{what}: offset {start:#x} + size {len:#x} overflows"
            ))
        })?;
        if end > self.data.len() as u64 {
            return Err(CubinError::Truncated {
                what: what.to_string(),
                start,
                end,
                len: self.data.len(),
            });
        }
        Ok(&self.data[start as usize..end as usize])
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// A NUL-terminated name at `offset` in a string table.
fn name_at(table: &[u8], offset: u32, what: &str) -> Result<String, CubinError> {
    let start = offset as usize;
    if start >= table.len() && !(start == 0 && table.is_empty()) {
        return Err(CubinError::Malformed(format!(
            "{what}: name offset {offset:#x} outside string table of {:#x} bytes",
            table.len()
        )));
    }
    let rest = table.get(start..).unwrap_or(&[]);
    let end = rest.iter().position(|&c| c == 0).ok_or_else(|| {
        CubinError::Malformed(format!("{what}: name at {offset:#x} is not NUL-terminated"))
    })?;
    Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// Parse a cubin. See the module essay for what is checked.
pub fn read(data: &[u8]) -> Result<Cubin, CubinError> {
    let bytes = Bytes { data };
    if data.len() < 4 || data[..4] != elf::ELFMAG {
        return Err(CubinError::NotElf);
    }
    let eh = bytes.slice("ELF header", 0, 64)?;
    if eh[elf::EI_CLASS] != elf::ELFCLASS64 {
        return Err(CubinError::Unsupported(
            "only ELF64 cubins (sm_50/52/53 from ptxas) are supported".into(),
        ));
    }
    if eh[elf::EI_DATA] != elf::ELFDATA2LSB {
        return Err(CubinError::Unsupported("big-endian ELF".into()));
    }
    let machine = u16_at(eh, 18);
    if machine != EM_CUDA {
        return Err(CubinError::Unsupported(format!(
            "e_machine {machine} is not EM_CUDA (190)"
        )));
    }
    let header = Header {
        osabi: eh[elf::EI_OSABI],
        abi_version: eh[elf::EI_ABIVERSION],
        e_type: u16_at(eh, 16),
        version: u32_at(eh, 20),
        flags: u32_at(eh, 48),
    };
    let phoff = u64_at(eh, 32);
    let shoff = u64_at(eh, 40);
    let phentsize = u16_at(eh, 54);
    let phnum = u16_at(eh, 56);
    let shentsize = u16_at(eh, 58);
    let shnum = u16_at(eh, 60);
    let shstrndx = u16_at(eh, 62);

    // Program headers.
    let mut program_headers = Vec::new();
    if phnum > 0 {
        if phentsize != 56 {
            return Err(CubinError::Malformed(format!(
                "e_phentsize {phentsize}, expected 56"
            )));
        }
        let table = bytes.slice("program header table", phoff, u64::from(phnum) * 56)?;
        for e in table.chunks_exact(56) {
            program_headers.push(ProgramHeader {
                p_type: u32_at(e, 0),
                flags: u32_at(e, 4),
                offset: u64_at(e, 8),
                vaddr: u64_at(e, 16),
                paddr: u64_at(e, 24),
                filesz: u64_at(e, 32),
                memsz: u64_at(e, 40),
                align: u64_at(e, 48),
            });
        }
    }

    // Section headers (raw first, names after `.shstrtab` is known).
    if shnum == 0 {
        return Err(CubinError::Malformed("no section headers".into()));
    }
    if shentsize != 64 {
        return Err(CubinError::Malformed(format!(
            "e_shentsize {shentsize}, expected 64"
        )));
    }
    let table = bytes.slice("section header table", shoff, u64::from(shnum) * 64)?;
    let mut sections = Vec::with_capacity(usize::from(shnum));
    // Sections of a well-formed file do not overlap, so their contents add up to at most the
    // file size; overlapping sections could otherwise make us copy the input 65535 times.
    let mut copied = 0u64;
    let mut name_offsets = Vec::with_capacity(usize::from(shnum));
    for (i, e) in table.chunks_exact(64).enumerate() {
        let sh_type = u32_at(e, 4);
        let offset = u64_at(e, 24);
        let size = u64_at(e, 32);
        let data = if super::sht::is_nobits(sh_type) || sh_type == elf::SHT_NULL {
            Vec::new()
        } else {
            // Bounds first: after this `size` is at most the file length, so the sum below
            // cannot overflow.
            let contents = bytes.slice(&format!("section {i} contents"), offset, size)?;
            copied += size;
            if copied > data.len() as u64 {
                return Err(CubinError::Malformed(format!(
                    "section {i}: section contents add up to more than the file size (overlap)"
                )));
            }
            contents.to_vec()
        };
        name_offsets.push(u32_at(e, 0));
        sections.push(Section {
            name: String::new(),
            sh_type,
            flags: u64_at(e, 8),
            addr: u64_at(e, 16),
            offset,
            size,
            link: u32_at(e, 40),
            info: u32_at(e, 44),
            align: u64_at(e, 48),
            entsize: u64_at(e, 56),
            data,
        });
    }
    let shstr = sections.get(usize::from(shstrndx)).ok_or_else(|| {
        CubinError::Malformed(format!(
            "e_shstrndx {shstrndx} out of range ({shnum} sections)"
        ))
    })?;
    if shstr.sh_type != elf::SHT_STRTAB {
        return Err(CubinError::Malformed(format!(
            "e_shstrndx {shstrndx} is not a string table"
        )));
    }
    let shstr = shstr.data.clone();
    for (i, s) in sections.iter_mut().enumerate().skip(1) {
        s.name = name_at(&shstr, name_offsets[i], &format!("section {i}"))?;
    }

    let symbols = read_symbols(&sections)?;
    let relocations = read_relocs(&sections, symbols.len())?;

    // Module-level info.
    let mut info = Vec::new();
    for s in &sections {
        if s.sh_type == super::sht::CUDA_INFO && s.name == ".nv.info" {
            info.extend(eiattr::decode(&s.name, &s.data)?);
        }
    }

    let kernels = read_kernels(&sections, &symbols, &info)?;
    Ok(Cubin {
        header,
        sections,
        symbols,
        program_headers,
        info,
        kernels,
        relocations,
    })
}

fn read_symbols(sections: &[Section]) -> Result<Vec<Symbol>, CubinError> {
    let Some(symtab) = sections.iter().find(|s| s.sh_type == elf::SHT_SYMTAB) else {
        return Ok(Vec::new());
    };
    if symtab.entsize != 24 {
        return Err(CubinError::Malformed(format!(
            ".symtab entry size {}, expected 24",
            symtab.entsize
        )));
    }
    if symtab.data.len() % 24 != 0 {
        return Err(CubinError::Malformed(format!(
            ".symtab size {:#x} is not a multiple of 24",
            symtab.data.len()
        )));
    }
    let strtab = sections
        .get(symtab.link as usize)
        .filter(|s| s.sh_type == elf::SHT_STRTAB)
        .ok_or_else(|| {
            CubinError::Malformed(format!(
                ".symtab link {} is not a string table",
                symtab.link
            ))
        })?;
    let mut out = Vec::with_capacity(symtab.data.len() / 24);
    for (i, e) in symtab.data.chunks_exact(24).enumerate() {
        let shndx = u16_at(e, 6);
        if usize::from(shndx) >= sections.len() && shndx < elf::SHN_LORESERVE {
            return Err(CubinError::Malformed(format!(
                "symbol {i}: section index {shndx} out of range"
            )));
        }
        out.push(Symbol {
            name: name_at(&strtab.data, u32_at(e, 0), &format!("symbol {i}"))?,
            info: e[4],
            other: e[5],
            shndx,
            value: u64_at(e, 8),
            size: u64_at(e, 16),
        });
    }
    Ok(out)
}

fn read_relocs(sections: &[Section], nsyms: usize) -> Result<Vec<RelocSection>, CubinError> {
    let mut out = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        let with_addend = match s.sh_type {
            elf::SHT_REL => false,
            elf::SHT_RELA => true,
            _ => continue,
        };
        let entsize = if with_addend { 24 } else { 16 };
        if s.data.len() % entsize != 0 {
            return Err(CubinError::Malformed(format!(
                "{}: size {:#x} is not a multiple of {entsize}",
                s.name,
                s.data.len()
            )));
        }
        if s.info as usize >= sections.len() {
            return Err(CubinError::Malformed(format!(
                "{}: target section {} out of range",
                s.name, s.info
            )));
        }
        let mut relocs = Vec::with_capacity(s.data.len() / entsize);
        for e in s.data.chunks_exact(entsize) {
            let info = u64_at(e, 8);
            let sym = (info >> 32) as u32;
            if sym as usize >= nsyms {
                return Err(CubinError::Malformed(format!(
                    "{}: relocation symbol {sym} out of range ({nsyms} symbols)",
                    s.name
                )));
            }
            relocs.push(Reloc {
                offset: u64_at(e, 0),
                sym,
                rtype: info as u32,
                addend: with_addend.then(|| u64_at(e, 16) as i64),
            });
        }
        out.push(RelocSection {
            section: i,
            target: s.info as usize,
            relocs,
        });
    }
    Ok(out)
}

fn read_kernels(
    sections: &[Section],
    symbols: &[Symbol],
    module_info: &[Attribute],
) -> Result<Vec<Kernel>, CubinError> {
    let mut kernels = Vec::new();
    for (si, sym) in symbols.iter().enumerate() {
        if !sym.is_entry() || sym.info & 0xf != elf::STT_FUNC {
            continue;
        }
        let ti = usize::from(sym.shndx);
        let text = sections.get(ti).ok_or_else(|| {
            CubinError::Malformed(format!("kernel {}: bad section index", sym.name))
        })?;
        if text.data.len() % 8 != 0 {
            return Err(CubinError::Malformed(format!(
                "{}: size {:#x} is not a multiple of 8",
                text.name, text.size
            )));
        }
        let code = text
            .data
            .chunks_exact(8)
            .map(|c| u64_at(c, 0))
            .collect::<Vec<_>>();
        let by_name = |n: String| sections.iter().find(|s| s.name == n);
        let info = match by_name(format!(".nv.info.{}", sym.name)) {
            Some(s) => eiattr::decode(&s.name, &s.data)?,
            None => Vec::new(),
        };
        let mut params: Vec<Param> = info
            .iter()
            .filter_map(|a| match a {
                Attribute::KParamInfo(k) => Some(Param {
                    ordinal: k.ordinal,
                    offset: k.offset,
                    size: k.size(),
                    info: *k,
                }),
                _ => None,
            })
            .collect();
        params.sort_by_key(|p| p.ordinal);
        let this = si as u32;
        let find = |f: fn(&Attribute) -> Option<(u32, u32)>| {
            module_info
                .iter()
                .filter_map(f)
                .find(|&(s, _)| s == this)
                .map(|(_, v)| v)
        };
        kernels.push(Kernel {
            name: sym.name.clone(),
            symbol: si,
            text_section: ti,
            code,
            regcount: text.info >> 24,
            barriers: ((text.flags >> 20) & 0x7f) as u32,
            info,
            params,
            constant0_size: by_name(format!(".nv.constant0.{}", sym.name)).map(|s| s.size),
            constant2: by_name(format!(".nv.constant2.{}", sym.name)).map(|s| s.data.clone()),
            shared: by_name(format!(".nv.shared.{}", sym.name)).map(|s| (s.size, s.align)),
            frame_size: find(|a| match a {
                Attribute::FrameSize { sym, size } => Some((*sym, *size)),
                _ => None,
            }),
            min_stack_size: find(|a| match a {
                Attribute::MinStackSize { sym, size } => Some((*sym, *size)),
                _ => None,
            }),
            max_stack_size: find(|a| match a {
                Attribute::MaxStackSize { sym, size } => Some((*sym, *size)),
                _ => None,
            }),
        });
    }
    kernels.sort_by_key(|k| k.text_section);
    Ok(kernels)
}
