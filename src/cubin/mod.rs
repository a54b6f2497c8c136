//! Cubin (CUDA ELF) reading, writing and attribute dumps for sm_50/52/53.
//!
//! A cubin is an ELF64 little-endian file (`EM_CUDA` = 190, OS/ABI 0x33) whose sections carry
//! the machine code (`.text.<kernel>`: 32-byte bundles of one control word and three
//! instructions), the kernel metadata the driver needs (`.nv.info`, `.nv.info.<kernel>`: EIATTR
//! records), constant banks (`.nv.constant0.<kernel>` = driver-filled bank 0 with the parameters
//! at 0x140, `.nv.constant2.<kernel>` = compiler literals, `.nv.constant3` = user `.const`),
//! shared/global memory sizes and initial data, and relocations.
//!
//! - [`read`]: bytes → [`Cubin`]. Every offset, size and index in the input is checked before
//!   use; corrupt or truncated input is a [`CubinError`], never a panic, and no allocation is
//!   larger than the input (tables are sliced out of it, not sized from header counts).
//! - [`write`]: [`CubinSpec`] (what the compiler knows) → bytes laid out section for section the
//!   way ptxas 11.8 lays them out (section order, symbol order, alignment, program headers).
//! - [`dump_info`]: the `.nv.info*` records printed the way `cuobjdump -elf` prints them.
//! - [`relocatable`]: a written cubin → the relocatable object (`ET_REL`) ptxas `-c` writes.
//!   It and [`write`] share their ELF encodings (header, symbol and relocation entries, section
//!   layout) in `encode.rs`.
//!
//! Instruction words are opaque `u64`s here; decoding them is `sm50`'s business.

mod dump;
pub mod eiattr;
mod encode;
mod read;
pub mod relocatable;
mod write;

pub use dump::{dump_info, header_flags_text};
pub use eiattr::{Attribute, BranchTargets, Format, KParamInfo};
pub use read::read;
pub use relocatable::relocatable;
pub use write::{
    write, CubinSpec, DataRelocSpec, DataRelocs, DataSpec, FunctionSpec, KernelSpec, ParamSpec,
    RelocSpec, DYNAMIC_SHARED_SYMBOL_INFO,
};

/// Why a byte string is not a cubin we can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CubinError {
    #[error("not an ELF file (bad magic)")]
    NotElf,
    #[error("unsupported ELF: {0}")]
    Unsupported(String),
    #[error("truncated: {what} needs bytes {start:#x}..{end:#x} but the file has {len:#x}")]
    Truncated {
        what: String,
        start: u64,
        end: u64,
        len: usize,
    },
    #[error("malformed ELF: {0}")]
    Malformed(String),
    #[error("malformed {section} at byte {offset:#x}: {why}")]
    BadInfo {
        section: String,
        offset: usize,
        why: String,
    },
}

/// ELF section types specific to CUDA.
pub mod sht {
    pub const CUDA_INFO: u32 = 0x7000_0000;
    pub const CUDA_CALLGRAPH: u32 = 0x7000_0001;
    pub const CUDA_RELOCINFO: u32 = 0x7000_000b;
    /// Relocatable cubins (`ptxas -c`) type their memory sections too; these three occupy no
    /// file bytes, like `SHT_NOBITS`.
    pub const CUDA_GLOBAL: u32 = 0x7000_0007;
    pub const CUDA_LOCAL: u32 = 0x7000_0009;
    pub const CUDA_SHARED: u32 = 0x7000_000a;

    /// Whether a section of this type has no bytes in the file.
    pub fn is_nobits(sh_type: u32) -> bool {
        matches!(
            sh_type,
            super::elf::SHT_NOBITS | CUDA_GLOBAL | CUDA_LOCAL | CUDA_SHARED
        )
    }
}

/// The ELF constants the reader and writer use (the values of the ELF specification; kept
/// here as plain integers because the cubin fields are read and written as raw integers).
pub mod elf {
    pub const ELFMAG: [u8; 4] = [0x7f, b'E', b'L', b'F'];
    pub const EI_CLASS: usize = 4;
    pub const EI_DATA: usize = 5;
    pub const EI_OSABI: usize = 7;
    pub const EI_ABIVERSION: usize = 8;
    pub const ELFCLASS64: u8 = 2;
    pub const ELFDATA2LSB: u8 = 1;
    pub const EV_CURRENT: u8 = 1;
    pub const ET_EXEC: u16 = 2;
    pub const SHT_NULL: u32 = 0;
    pub const SHT_PROGBITS: u32 = 1;
    pub const SHT_SYMTAB: u32 = 2;
    pub const SHT_STRTAB: u32 = 3;
    pub const SHT_RELA: u32 = 4;
    pub const SHT_NOBITS: u32 = 8;
    pub const SHT_REL: u32 = 9;
    pub const SHF_WRITE: u32 = 1;
    pub const SHF_ALLOC: u32 = 2;
    pub const SHF_EXECINSTR: u32 = 4;
    pub const SHN_LORESERVE: u16 = 0xff00;
    pub const STB_GLOBAL: u8 = 1;
    pub const STT_OBJECT: u8 = 1;
    pub const STT_FUNC: u8 = 2;
    pub const STT_SECTION: u8 = 3;
    pub const PT_LOAD: u32 = 1;
    pub const PT_PHDR: u32 = 6;
    pub const PF_X: u32 = 1;
    pub const PF_W: u32 = 2;
    pub const PF_R: u32 = 4;
}

/// `st_other` flag marking a kernel entry symbol.
pub const STO_CUDA_ENTRY: u8 = 0x10;
/// `e_machine` for CUDA.
pub const EM_CUDA: u16 = 190;

/// The ELF file header fields that matter for a cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub osabi: u8,
    pub abi_version: u8,
    /// `ET_EXEC` (2) from ptxas whole-program compiles, `ET_REL` (1) with `-c`.
    pub e_type: u16,
    /// The toolkit version (118 for ptxas 11.8).
    pub version: u32,
    pub flags: u32,
}

impl Header {
    /// The SM number in the flags' low byte (50, 52, 53).
    pub fn sm(&self) -> u32 {
        self.flags & 0xff
    }
    /// The PTX virtual SM in bits 16..23.
    pub fn virtual_sm(&self) -> u32 {
        (self.flags >> 16) & 0xff
    }
    /// 64-bit addressing (flag 0x400).
    pub fn is_64bit(&self) -> bool {
        self.flags & 0x400 != 0
    }
}

/// One section, with its header fields and (for all but NOBITS) its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub sh_type: u32,
    pub flags: u64,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    pub info: u32,
    pub align: u64,
    pub entsize: u64,
    /// File bytes; empty for `SHT_NULL` and the no-bits types ([`sht::is_nobits`]).
    pub data: Vec<u8>,
}

/// One symbol-table entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub value: u64,
    pub size: u64,
    pub info: u8,
    pub other: u8,
    pub shndx: u16,
}

impl Symbol {
    pub fn is_entry(&self) -> bool {
        self.other & STO_CUDA_ENTRY != 0
    }
}

/// One program header (ptxas writes PHDR and LOAD segments for `ET_EXEC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramHeader {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// One relocation (`.rel.*` has no addend; `.rela.*` has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub offset: u64,
    pub sym: u32,
    pub rtype: u32,
    pub addend: Option<i64>,
}

/// A relocation section: which section it patches, and its entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelocSection {
    /// Index of the `.rel*` section itself.
    pub section: usize,
    /// Index of the section it applies to (`sh_info`).
    pub target: usize,
    pub relocs: Vec<Reloc>,
}

/// A kernel parameter, from `EIATTR_KPARAM_INFO`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub ordinal: u16,
    /// Offset from the first parameter (add 0x140 for the c[0x0] address).
    pub offset: u16,
    pub size: u32,
    pub info: KParamInfo,
}

/// Everything known about one kernel (an `STO_CUDA_ENTRY` function symbol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// Index of the kernel's symbol.
    pub symbol: usize,
    /// Index of `.text.<name>`.
    pub text_section: usize,
    /// The code as little-endian 64-bit words (control words included).
    pub code: Vec<u64>,
    /// Register count: `sh_info >> 24` of `.text.<name>`.
    pub regcount: u32,
    /// Barrier count: bits 20..26 of `.text.<name>`'s flags.
    pub barriers: u32,
    /// Records of `.nv.info.<name>` (empty if the section is absent).
    pub info: Vec<Attribute>,
    /// Parameters in ordinal order.
    pub params: Vec<Param>,
    /// `.nv.constant0.<name>` size, if present.
    pub constant0_size: Option<u64>,
    /// `.nv.constant2.<name>` bytes, if present.
    pub constant2: Option<Vec<u8>>,
    /// `.nv.shared.<name>` size and alignment, if present.
    pub shared: Option<(u64, u64)>,
    /// From the module `.nv.info`: FRAME_SIZE, MIN_STACK_SIZE, MAX_STACK_SIZE for this symbol.
    pub frame_size: Option<u32>,
    pub min_stack_size: Option<u32>,
    pub max_stack_size: Option<u32>,
}

impl Kernel {
    /// The offsets of an `Offsets`-style record in this kernel's info, if present.
    pub fn exit_offsets(&self) -> Vec<u32> {
        self.info
            .iter()
            .find_map(|a| match a {
                Attribute::ExitInstrOffsets(v) => Some(v.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
    pub fn s2r_ctaid_offsets(&self) -> Vec<u32> {
        self.info
            .iter()
            .find_map(|a| match a {
                Attribute::S2rCtaidInstrOffsets(v) => Some(v.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
    pub fn crs_stack_size(&self) -> Option<u32> {
        self.info.iter().find_map(|a| match a {
            Attribute::CrsStackSize(v) => Some(*v),
            _ => None,
        })
    }
}

/// A parsed cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cubin {
    pub header: Header,
    /// All sections, index 0 being the null section.
    pub sections: Vec<Section>,
    /// All symbols, index 0 being the null symbol (empty if there is no `.symtab`).
    pub symbols: Vec<Symbol>,
    pub program_headers: Vec<ProgramHeader>,
    /// Records of the module-level `.nv.info`.
    pub info: Vec<Attribute>,
    /// Kernels in section order of their `.text` sections.
    pub kernels: Vec<Kernel>,
    pub relocations: Vec<RelocSection>,
}

impl Cubin {
    /// The SM number (50, 52, 53).
    pub fn arch(&self) -> u32 {
        self.header.sm()
    }
    /// The section with this name, if any.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }
    /// `.nv.constant3` bytes (user `.const` data).
    pub fn constant3(&self) -> Option<&[u8]> {
        self.section(".nv.constant3").map(|s| s.data.as_slice())
    }
    /// `.nv.global.init` bytes (initialised globals).
    pub fn global_init(&self) -> Option<&[u8]> {
        self.section(".nv.global.init").map(|s| s.data.as_slice())
    }
    /// `.nv.global` size (zero-initialised globals; NOBITS).
    pub fn global_size(&self) -> Option<u64> {
        self.section(".nv.global").map(|s| s.size)
    }
    /// The `.headerflags` text cuobjdump prints for this cubin.
    pub fn header_flags_text(&self) -> String {
        header_flags_text(self.header.flags)
    }
}
