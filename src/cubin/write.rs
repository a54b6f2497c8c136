//! The cubin writer: a [`CubinSpec`] (what the compiler knows about a module) in, ELF bytes out.
//!
//! The output copies the structure ptxas 11.8 writes for sm_5x whole-program (`ET_EXEC`)
//! cubins, as observed section for section with `cuobjdump -elf` and a raw ELF parse:
//!
//! - Kernels are laid out in the **reverse** of their PTX order (ptxas does so); the module
//!   `.nv.info` lists them in PTX order. `CubinSpec::kernels` is in PTX order.
//! - Sections: null, `.shstrtab`, `.strtab`, `.symtab`, `.nv.info`, every `.nv.info.<k>`,
//!   `.nv.rel.action`, every `.rel.text.<k>`, every `.rel.nv.constant0.<k>` (texture header
//!   indices), the data relocations (`.rel`/`.rela` of `.nv.global.init` and `.nv.constant3`:
//!   addresses in initializers), `.nv.constant3`, per kernel `.nv.constant2.<k>`
//!   and `.nv.constant0.<k>`, every `.text.<k>`, `.nv.global.init`, then the NOBITS sections
//!   in creation order (first kernel's `.nv.shared`/`.nv.local`, `.nv.global`, the other
//!   kernels'). Data follows the 64-byte ELF header, each section at its alignment (a NOBITS
//!   section's alignment moves the cursor too); then the section header table (8-aligned),
//!   then the program headers (PHDR, a read-only LOAD over constants and code, a read-write
//!   LOAD over globals, shared and local memory when there are any, and a LOAD over the
//!   program header table itself).
//! - Symbols, in ptxas's creation order: null; per kernel a non-`.visible` kernel's LOCAL
//!   symbol, its `.text` section symbol, `.nv.shared` (when not empty) and `.nv.local`
//!   section symbols, (first kernel only) module data sections each followed by its
//!   variables, `.nv.constant2`, LOCAL/WEAK subroutines, `.nv.constant0`; then
//!   `.nv.rel.action`; then the GLOBAL symbols: `.visible` kernels (`FUNC`, `STO_CUDA_ENTRY`),
//!   each followed by its GLOBAL subroutines; the texture and surface reference symbols
//!   (GLOBAL, undefined, which `.rel.nv.constant0.<k>` entries name) right after the first
//!   kernel's, in [`CubinSpec::handles`]'s order (the driver's: ptxas's order of first use in
//!   that kernel, then declaration order); last the other undefined symbols (samplers,
//!   system functions, descriptor sizes).
//! - Module `.nv.info`, per kernel in PTX order: REGCOUNT, then MAX_STACK_SIZE /
//!   MIN_STACK_SIZE / FRAME_SIZE for each subroutine (last symbol first), then for the kernel.
//! - String tables: ptxas interns every name it creates, including sections it then does not
//!   emit (`.symtab_shndx`, `.nv.shared.<k>`) and symbols it drops (`_param`, `_SREG`,
//!   `__ocg_const`, shared variables such as `$__buf__6`). We intern the same sequence so that
//!   offsets match for kernels without dropped variables; [`CubinSpec::strtab_order`] can give
//!   the exact sequence of another file.
//! - `.text.<k>`: flags `SHF_ALLOC|SHF_EXECINSTR` plus the barrier count in bits 20..26;
//!   `sh_info` = register count << 24 | kernel symbol index; alignment 32.
//! - `.nv.info.<k>` records in ptxas's order: CUDA_API_VERSION, SW2393858_WAR, SW1850030_WAR,
//!   PARAM_CBANK, CBANK_PARAM_SIZE, KPARAM_INFO (last parameter first), MAXREG_COUNT,
//!   the spec's extra records (e.g. INT_WARP_WIDE_INSTR_OFFSETS), S2RCTAID_INSTR_OFFSETS,
//!   EXIT_INSTR_OFFSETS, INDIRECT_BRANCH_TARGETS, CRS_STACK_SIZE.
//!
//! # Files of this module
//!
//! - `sections.rs`: ELF building blocks of the writer.
//! - `symtab.rs`: The symbols of the cubin and the `.symtab`/`.strtab`/`.shstrtab` bytes.
//! - `read.rs`: Reading a cubin back into a [`CubinSpec`] ([`CubinSpec::from_cubin`]).

mod sections;
use sections::*;
mod symtab;
use symtab::*;
mod read;
use super::eiattr::{self, Attribute, BranchTargets, KParamInfo};
use super::elf;
use super::encode::{
    elf_header, reloc_entry, section_offsets, sections_and_headers, symbol_entry, ElfHeader,
    SectionLayout,
};
use super::{sht, Cubin, STO_CUDA_ENTRY};

/// The toolkit version ptxas 11.8 stamps into `e_version` and `EIATTR_CUDA_API_VERSION`.
pub const TOOLKIT_VERSION: u32 = 118;
/// Parameters start here in constant bank 0 on sm_5x.
pub const PARAM_BASE: u16 = crate::sm50::PARAM_BASE as u16;

/// A module to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubinSpec {
    /// 50, 52 or 53.
    pub arch: u32,
    /// The PTX `.target` SM (e.g. 20 for `.target sm_20` compiled for sm_50): ptxas records
    /// it in `e_flags` bits 16..23.
    pub ptx_arch: u32,
    /// 32 or 64 (`.address_size`).
    pub address_bits: u32,
    /// Kernels in PTX definition order.
    pub kernels: Vec<KernelSpec>,
    /// User `.const` data (`.nv.constant3`).
    pub constant3: Option<DataSpec>,
    /// Initialised `.global` data (`.nv.global.init`).
    pub global_init: Option<DataSpec>,
    /// Zero-initialised `.global` data (`.nv.global`, NOBITS; `init` is ignored).
    pub global: Option<DataSpec>,
    /// The exact sequence of names for `.strtab` (and, those starting with `.`, for
    /// `.shstrtab`), to reproduce a given file. `None` (what the compiler passes) uses the
    /// order ptxas uses for kernels without internal symbols. ptxas also interns names of
    /// symbols it later drops (shared variables such as `$__buf__6`), in an order that
    /// depends on its internals; [`CubinSpec::from_cubin`] records them here.
    pub strtab_order: Option<Vec<String>>,
    /// Texture, sampler and surface reference symbols (`.global .texref tex;`): a name and
    /// the ELF `st_info` ptxas gives it (GLOBAL, a CUDA-specific type such as 10 for a
    /// texture), undefined (section 0): the textures and surfaces right after the first
    /// kernel's symbol, the others after every other symbol, each group in this order.
    /// Kernels refer to them through [`KernelSpec::const0_relocs`]. The undefined functions
    /// called and the dynamically sized `.shared` arrays of a relocatable object
    /// ([`DYNAMIC_SHARED_SYMBOL_INFO`]) are listed here too.
    pub handles: Vec<(String, u8)>,
    /// The local symbols' order, by name, to reproduce a given file (`None`: ptxas's order
    /// for code that uses module data in declaration order). ptxas creates data symbols as
    /// the code first uses them, so with several data sections their variables interleave
    /// (`gproperty` in `.nv.constant3`, then `.nv.global` and `gcfg`, then more constants);
    /// [`CubinSpec::from_cubin`] records the order here. Names not listed keep their place
    /// after the listed ones.
    pub symbol_order: Option<Vec<String>>,
    /// ELF `EI_ABIVERSION`: 7, or 2 when ptxas disabled its calling ABI (it does for modules
    /// with module-scope `.reg`/`.local` variables, and warns so).
    pub abi_version: u8,
    /// `.target … texmode_independent`: `e_flags` has 0x200 (EF_CUDA_TEXMODE_INDEPENDANT)
    /// instead of 0x100 (unified texture mode, the default).
    pub texmode_independent: bool,
    /// Relocations of module data (addresses in variables' initializers), one relocation
    /// section each, written in this order after the kernels' code relocations.
    pub data_relocs: Vec<DataRelocs>,
    /// The module's `.samplerref`s (`.texmode_independent`) in declaration order, each
    /// named in [`CubinSpec::handles`]: their `EIATTR_SAMPLER_*` records end the module
    /// `.nv.info` ([`crate::sampler`]).
    pub samplers: Vec<(String, crate::sampler::SamplerInit)>,
    /// The `.shared` variables the functions of a relocatable object name
    /// (`.nv_debug.shared`, NOBITS): nvlink places them in the shared window of each kernel
    /// that calls such a function, and resolves the `R_CUDA_ABS24_20` relocations against
    /// them. As ptxas 11.8 writes it (probe `sh.ptx`): the section's size is the variables'
    /// sizes laid end to end at their alignments, its alignment their largest, and each
    /// symbol's value is the variable's *alignment*, not an offset (`gbuf` `.align 16`:
    /// value 0x10; `$__buf__9` `.align 8`: value 0x8).
    pub object_shared: Option<DataSpec>,
}

/// The relocations of one module data section: `.rel.<section>` (entries without addend)
/// or `.rela.<section>` (ptxas puts every entry with a nonzero addend there, and leaves the
/// relocated bytes zero in both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRelocs {
    /// The data section they patch: `.nv.global.init` or `.nv.constant3`.
    pub section: String,
    /// `.rela` (with addends) rather than `.rel`.
    pub rela: bool,
    pub relocs: Vec<DataRelocSpec>,
}

impl DataRelocs {
    /// The relocation section's name.
    pub fn name(&self) -> String {
        format!(".rel{}{}", if self.rela { "a" } else { "" }, self.section)
    }
}

/// A relocation of module data against a module symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRelocSpec {
    /// Byte offset in the data section.
    pub offset: u64,
    /// Name of a variable of the module.
    pub symbol: String,
    /// `R_CUDA_*` type (`R_CUDA_G64`, `R_CUDA_G32`, `R_CUDA_G8_<n>`).
    pub rtype: u32,
    /// The addend (written only in a `.rela` section).
    pub addend: i64,
}

/// A module-level data section and the variables in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSpec {
    pub size: u64,
    pub align: u64,
    /// Initial bytes (zero-padded to `size`); unused for NOBITS sections.
    pub init: Vec<u8>,
    /// Variables: (name, offset, size). Written as `LOCAL OBJECT` symbols, as ptxas does for
    /// non-`.visible` variables.
    pub symbols: Vec<(String, u64, u64)>,
}

/// A kernel parameter: offset from the first parameter (c[0x0][0x140]) and size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub offset: u16,
    pub size: u32,
    /// KPARAM_INFO flag bits 0..11 for a `.ptr` parameter (`.ptr.global.align 4`): log2 of
    /// the pointee alignment in bits 0..7, its state space in 8..11; 0 for other parameters.
    pub pointee: u32,
}

impl ParamSpec {
    /// The offset of a `.param .samplerref` ([`ParamSpec::sampler`]), which has no bytes.
    pub const NO_OFFSET: u16 = 0xffff;

    /// A `.param .samplerref` as ptxas 11.8 describes it ([`crate::sampler`]): offset
    /// 0xffff, size 0, space 8 (flag bits 8..11); its KPARAM_INFO index is the sampler's
    /// symbol ([`KernelSpec::sampler_params`]).
    pub fn sampler() -> ParamSpec {
        ParamSpec {
            offset: Self::NO_OFFSET,
            size: 0,
            pointee: 8 << 8,
        }
    }

    /// Whether this is a `.param .samplerref` (no bytes of the parameter area).
    pub fn is_sampler(&self) -> bool {
        self.offset == Self::NO_OFFSET && self.size == 0
    }
}

/// A subroutine placed inside a kernel's `.text` (a PTX `.func`, or one of ptxas's helpers
/// such as `$k$__cuda_sm3x_div_rn_noftz_f32_slowpath`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionSpec {
    pub name: String,
    /// Byte offset and size within `.text.<k>`.
    pub offset: u64,
    pub size: u64,
    /// ELF binding: 0 LOCAL (a non-`.visible` PTX `.func`), 1 GLOBAL (a `.visible .func`),
    /// 2 WEAK (ptxas's helpers). LOCAL and WEAK symbols are listed among the local symbols,
    /// as ptxas does; GLOBAL ones after them.
    pub bind: u8,
    pub frame_size: u32,
    pub min_stack_size: u32,
    pub max_stack_size: u32,
}

/// A relocation of a kernel's code against a module symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelocSpec {
    /// Byte offset in `.text.<k>`.
    pub offset: u64,
    /// Name of a data symbol of the module.
    pub symbol: String,
    /// `R_CUDA_*` type.
    pub rtype: u32,
}

/// One kernel: what the compiler knows about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    pub name: String,
    /// `.visible .entry` (a GLOBAL symbol) or plain `.entry` (LOCAL, listed first).
    pub visible: bool,
    /// Code words (control words included), a multiple of 4 words (32-byte bundles).
    pub code: Vec<u64>,
    pub regcount: u32,
    /// Parameters in ordinal order.
    pub params: Vec<ParamSpec>,
    /// The `.param .samplerref`s among [`params`](Self::params) (ordinal, name): each names
    /// a LOCAL sampler symbol (one per name in the module, in the section of the first
    /// kernel that has it), which is their KPARAM_INFO index ([`crate::sampler`]).
    pub sampler_params: Vec<(u16, String)>,
    /// `.nv.shared.<k>` (size, alignment), if the kernel uses shared memory (size 0 is
    /// legitimate: a kernel that only sees module `extern .shared` gets an empty section).
    pub shared: Option<(u64, u64)>,
    /// `.nv.local.<k>` (size, alignment): module-scope `.local` variables this kernel uses.
    pub local: Option<(u64, u64)>,
    /// Subroutines inside this kernel's text.
    pub functions: Vec<FunctionSpec>,
    /// Local-memory frame bytes (FRAME_SIZE and MIN_STACK_SIZE; ptxas writes the same value).
    pub frame_size: u32,
    pub min_stack_size: u32,
    pub max_stack_size: u32,
    /// Named barriers used (`bar.sync` ids + 1).
    pub barriers: u32,
    /// EIATTR_MAXREG_COUNT (0xff unless `-maxrregcount`).
    pub max_reg_count: u16,
    pub exit_offsets: Vec<u32>,
    pub s2r_ctaid_offsets: Vec<u32>,
    pub crs_stack_size: Option<u32>,
    /// SYNC/BRX instructions and their targets (EIATTR_INDIRECT_BRANCH_TARGETS).
    pub indirect_branch_targets: Vec<BranchTargets>,
    /// Further records (e.g. INT_WARP_WIDE_INSTR_OFFSETS), written after MAXREG_COUNT.
    pub extra_info: Vec<Attribute>,
    /// The module uses `istypep`: the module `.nv.info` starts with `EIATTR_ISTYPEP_USED`
    /// (once, when any kernel says so; ptxas 11.8).
    pub istypep_used: bool,
    /// `.nv.constant2.<k>` literals.
    pub constant2: Option<Vec<u8>>,
    pub relocs: Vec<RelocSpec>,
    /// Relocations of `.nv.constant0.<k>` (`.rel.nv.constant0.<k>`): the driver fills in a
    /// texture/sampler header index (R_CUDA_TEX_HEADER_INDEX) after the parameters. The
    /// constant bank grows to hold every relocated word.
    pub const0_relocs: Vec<RelocSpec>,
    /// The undefined functions the kernel calls (`vprintf`, `malloc`): each must be one of
    /// [`CubinSpec::handles`] (ptxas: GLOBAL FUNC, `st_info` 0x12); the writer lists their
    /// symbols in `EIATTR_EXTERNS` after MAXREG_COUNT and the early extra records.
    pub externs: Vec<String>,
    /// A kernel (`.entry`). `false`: a device function of a relocatable object (a `.visible
    /// .func` under `--compile-only`, which other objects call): as ptxas 11.8 writes one, it
    /// has its `.text.<f>` and `.nv.info.<f>` but no `.nv.constant0.<f>`, its symbol has no
    /// `STO_CUDA_ENTRY`, and its `.nv.info.<f>` holds only the version records and its
    /// externs (no parameters, MAXREG_COUNT or offsets).
    pub entry: bool,
}

impl KernelSpec {
    /// A kernel with just code and registers; every other field empty/default.
    pub fn new(name: &str, code: Vec<u64>, regcount: u32) -> KernelSpec {
        KernelSpec {
            name: name.to_string(),
            visible: true,
            code,
            regcount,
            params: Vec::new(),
            sampler_params: Vec::new(),
            shared: None,
            local: None,
            functions: Vec::new(),
            frame_size: 0,
            min_stack_size: 0,
            max_stack_size: 0,
            barriers: 0,
            max_reg_count: 0xff,
            exit_offsets: Vec::new(),
            s2r_ctaid_offsets: Vec::new(),
            crs_stack_size: None,
            indirect_branch_targets: Vec::new(),
            extra_info: Vec::new(),
            istypep_used: false,
            constant2: None,
            relocs: Vec::new(),
            const0_relocs: Vec::new(),
            externs: Vec::new(),
            entry: true,
        }
    }

    /// Bytes of the parameter area (end of the last parameter).
    pub fn param_bytes(&self) -> u32 {
        self.params
            .iter()
            .filter(|p| !p.is_sampler())
            .map(|p| u32::from(p.offset) + p.size)
            .max()
            .unwrap_or(0)
    }

    /// Bytes of `.nv.constant0.<k>`: the parameters after the driver's 0x140 bytes, and any
    /// relocated word past them.
    pub fn constant0_bytes(&self) -> u64 {
        let params = u64::from(PARAM_BASE) + u64::from(self.param_bytes());
        self.const0_relocs
            .iter()
            .map(|r| r.offset + 4)
            .fold(params, u64::max)
    }
}

/// The section of [`CubinSpec::object_shared`] (ptxas 11.8's name for it).
pub const OBJECT_SHARED: &str = ".nv_debug.shared";

/// Write a cubin for `spec`. See the module essay for the layout.
pub fn write(spec: &CubinSpec) -> Vec<u8> {
    // File order of kernels is the reverse of PTX order.
    let ks: Vec<&KernelSpec> = spec.kernels.iter().rev().collect();
    let data_secs = module_data_sections(spec);
    // 1. Sections, in ptxas's order (contents of the tables come later).
    let (mut secs, ix) = sections(&ks, spec, &data_secs);
    // 2. Symbols, in ptxas's creation order.
    let symbols = symbols(spec, &ks, &data_secs, &secs, &ix);
    // 3. String tables, interned in ptxas's order.
    let (shs, strs) = intern_strings(spec, &ks, &data_secs, &ix, &secs, &symbols.syms);
    // 4. Contents.
    symbol_and_string_tables(&mut secs, &ix, &symbols, &shs, &strs);
    info_sections(spec, &ks, &mut secs, &ix, &symbols);
    relocation_sections(&ks, &mut secs, &ix, &symbols);
    kernel_section_links(&ks, &mut secs, &ix, &symbols);
    // 5. Layout and bytes.
    elf_image(spec, &secs, ix.shstrtab, &shs)
}

/// A module data section of [`write`]: its name, contents, ELF type and flags.
type DataSec<'a> = (&'a str, &'a DataSpec, u32, u64);

/// The module data sections `spec` has (`.nv.constant3`, `.nv.global.init`, `.nv.global`).
fn module_data_sections(spec: &CubinSpec) -> Vec<DataSec<'_>> {
    [
        (
            ".nv.constant3",
            spec.constant3.as_ref(),
            elf::SHT_PROGBITS,
            u64::from(elf::SHF_ALLOC),
        ),
        (
            ".nv.global.init",
            spec.global_init.as_ref(),
            elf::SHT_PROGBITS,
            u64::from(elf::SHF_ALLOC | elf::SHF_WRITE),
        ),
        (
            ".nv.global",
            spec.global.as_ref(),
            elf::SHT_NOBITS,
            u64::from(elf::SHF_ALLOC | elf::SHF_WRITE),
        ),
        (
            OBJECT_SHARED,
            spec.object_shared.as_ref(),
            elf::SHT_NOBITS,
            u64::from(elf::SHF_ALLOC | elf::SHF_WRITE),
        ),
    ]
    .into_iter()
    .filter_map(|(n, d, t, f)| d.map(|d| (n, d, t, f)))
    .collect()
}

/// Where step 1 of [`write`] put each section: indices into the section list, the
/// per-kernel ones in file order.
#[derive(Default)]
struct SectionIndices<'a> {
    shstrtab: usize,
    strtab: usize,
    symtab: usize,
    info: usize,
    /// `.nv.info.<k>`.
    kinfo: Vec<usize>,
    rel_action: usize,
    /// `.rel.text.<k>`, for a kernel with code relocations.
    krel: Vec<Option<usize>>,
    /// `.rel.nv.constant0.<k>`, for a kernel with constant-bank relocations.
    kcrel: Vec<Option<usize>>,
    /// The module data relocation sections and their relocations.
    drel: Vec<(usize, &'a DataRelocs)>,
    /// The module data sections, by name.
    data: rustc_hash::FxHashMap<&'a str, usize>,
    /// `.nv.constant2.<k>`.
    kc2: Vec<Option<usize>>,
    /// `.nv.constant0.<k>` (entries only).
    kc0: Vec<Option<usize>>,
    /// `.text.<k>`.
    ktext: Vec<usize>,
    /// `.nv.shared.<k>`.
    kshared: Vec<Option<usize>>,
    /// `.nv.local.<k>`.
    klocal: Vec<Option<usize>>,
}

impl SectionIndices<'_> {
    /// The index of the module data section `name`.
    fn data_index(&self, name: &str) -> Option<usize> {
        self.data.get(name).copied()
    }
}

/// Append `s` to `secs`; its index.
fn push(secs: &mut Vec<Sec>, s: Sec) -> usize {
    secs.push(s);
    secs.len() - 1
}

/// Step 1 of `write`: every section in ptxas's order, with the data of the constant banks
/// and the code (the tables' contents come in step 4), and where each one is.
fn sections<'a>(
    ks: &[&KernelSpec],
    spec: &'a CubinSpec,
    data_secs: &[DataSec<'a>],
) -> (Vec<Sec>, SectionIndices<'a>) {
    let mut secs: Vec<Sec> = vec![Sec::new(String::new(), elf::SHT_NULL, 0, 0)];
    let mut ix = SectionIndices::default();
    table_and_relocation_sections(&mut secs, &mut ix, ks, spec);
    constant_and_code_sections(&mut secs, &mut ix, ks, data_secs);
    nobits_sections(&mut secs, &mut ix, ks, data_secs);
    (secs, ix)
}

/// Step 1a of `write`: the string, symbol and info tables, `.nv.rel.action` and the
/// relocation sections (the data relocations after the code's, before the data they patch).
fn table_and_relocation_sections<'a>(
    secs: &mut Vec<Sec>,
    ix: &mut SectionIndices<'a>,
    ks: &[&KernelSpec],
    spec: &'a CubinSpec,
) {
    ix.shstrtab = push(secs, Sec::new(".shstrtab".into(), elf::SHT_STRTAB, 0, 1));
    ix.strtab = push(secs, Sec::new(".strtab".into(), elf::SHT_STRTAB, 0, 1));
    ix.symtab = push(secs, Sec::new(".symtab".into(), elf::SHT_SYMTAB, 0, 8));
    ix.info = push(secs, Sec::new(".nv.info".into(), sht::CUDA_INFO, 0, 4));
    ix.kinfo = ks
        .iter()
        .map(|k| {
            push(
                secs,
                Sec::new(format!(".nv.info.{}", k.name), sht::CUDA_INFO, 0, 4),
            )
        })
        .collect();
    ix.rel_action = push(
        secs,
        Sec::new(".nv.rel.action".into(), sht::CUDA_RELOCINFO, 0, 8),
    );
    ix.krel = ks
        .iter()
        .map(|k| {
            (!k.relocs.is_empty()).then(|| {
                push(
                    secs,
                    Sec::new(format!(".rel.text.{}", k.name), elf::SHT_REL, 0, 8),
                )
            })
        })
        .collect();
    ix.kcrel = ks
        .iter()
        .map(|k| {
            (!k.const0_relocs.is_empty()).then(|| {
                push(
                    secs,
                    Sec::new(format!(".rel.nv.constant0.{}", k.name), elf::SHT_REL, 0, 8),
                )
            })
        })
        .collect();
    ix.drel = spec
        .data_relocs
        .iter()
        .filter(|d| !d.relocs.is_empty())
        .map(|d| {
            let (t, entsize) = if d.rela {
                (elf::SHT_RELA, 24)
            } else {
                (elf::SHT_REL, 16)
            };
            let mut s = Sec::new(d.name(), t, 0, 8);
            s.entsize = entsize;
            (push(secs, s), d)
        })
        .collect();
}

/// Step 1b of `write`: `.nv.constant3`, each kernel's `.nv.constant2`/`.nv.constant0`, the
/// code, then `.nv.global.init`.
fn constant_and_code_sections<'a>(
    secs: &mut Vec<Sec>,
    ix: &mut SectionIndices<'a>,
    ks: &[&KernelSpec],
    data_secs: &[DataSec<'a>],
) {
    if let Some((n, d, t, f)) = data_secs.first().filter(|s| s.0 == ".nv.constant3") {
        ix.data.insert(n, push(secs, data_section(n, d, *t, *f)));
    }
    let alloc = u64::from(elf::SHF_ALLOC);
    for k in ks {
        ix.kc2.push(k.constant2.as_ref().map(|c| {
            // A function of a relocatable object: nvlink appends its literals to each
            // calling kernel's bank 2 at this alignment, which must keep an f64 literal
            // 8-aligned (ptxas: 4 for a pool of one f32, 8 with an f64 in it).
            let align = if !k.entry && c.len() >= 8 { 8 } else { 4 };
            let mut s = Sec::new(
                format!(".nv.constant2.{}", k.name),
                elf::SHT_PROGBITS,
                alloc,
                align,
            );
            s.data = c.clone();
            push(secs, s)
        }));
        let mut s = Sec::new(
            format!(".nv.constant0.{}", k.name),
            elf::SHT_PROGBITS,
            alloc,
            4,
        );
        s.data = vec![0; k.constant0_bytes() as usize];
        ix.kc0.push(k.entry.then(|| push(secs, s)));
    }
    ix.ktext = ks
        .iter()
        .map(|k| {
            let flags =
                u64::from(elf::SHF_ALLOC | elf::SHF_EXECINSTR) | (u64::from(k.barriers) << 20);
            let mut s = Sec::new(format!(".text.{}", k.name), elf::SHT_PROGBITS, flags, 32);
            s.data = k.code.iter().flat_map(|w| w.to_le_bytes()).collect();
            push(secs, s)
        })
        .collect();
    for (n, d, t, f) in data_secs.iter().filter(|s| s.0 == ".nv.global.init") {
        ix.data.insert(n, push(secs, data_section(n, d, *t, *f)));
    }
}

/// Step 1c of `write`: the NOBITS sections in the order ptxas creates them: the first
/// kernel's shared and local windows, then `.nv.global`, then the other kernels'.
fn nobits_sections<'a>(
    secs: &mut Vec<Sec>,
    ix: &mut SectionIndices<'a>,
    ks: &[&KernelSpec],
    data_secs: &[DataSec<'a>],
) {
    let nobits = |name: String, (size, align): (u64, u64)| {
        let mut s = Sec::new(
            name,
            elf::SHT_NOBITS,
            u64::from(elf::SHF_ALLOC | elf::SHF_WRITE),
            align.max(1),
        );
        s.nobits_size = size;
        s
    };
    let global = |secs: &mut Vec<Sec>, ix: &mut SectionIndices<'a>| {
        for (n, d, t, f) in data_secs.iter().filter(|s| s.0 == ".nv.global") {
            ix.data.insert(n, push(secs, data_section(n, d, *t, *f)));
        }
    };
    for (i, k) in ks.iter().enumerate() {
        ix.kshared.push(
            k.shared
                .map(|sh| push(secs, nobits(format!(".nv.shared.{}", k.name), sh))),
        );
        ix.klocal.push(
            k.local
                .map(|l| push(secs, nobits(format!(".nv.local.{}", k.name), l))),
        );
        if i == 0 {
            global(secs, ix);
        }
    }
    if ks.is_empty() {
        global(secs, ix);
    }
    // Last, as ptxas lists it.
    for (n, d, t, f) in data_secs.iter().filter(|s| s.0 == OBJECT_SHARED) {
        ix.data.insert(n, push(secs, data_section(n, d, *t, *f)));
    }
}

/// Step 4b of `write`: the module's and each kernel's `.nv.info` records (the samplers'
/// records at the end of the module's), and the relocation-action table.
fn info_sections(
    spec: &CubinSpec,
    ks: &[&KernelSpec],
    secs: &mut [Sec],
    ix: &SectionIndices,
    symbols: &Symbols,
) {
    let mut module_info = module_info(ks, &symbols.ksym, |n| symbols.index_of(n));
    for (name, init) in &spec.samplers {
        module_info.extend(init.info_records(symbols.index_of(name) as u32));
    }
    secs[ix.info].data = eiattr::encode(&module_info);
    secs[ix.info].link = ix.symtab as u32;
    for (i, k) in ks.iter().enumerate() {
        let c0_sym = ix.kc0[i].map_or(0, |c0| symbols.index_of(&secs[c0].name) as u32);
        let s = &mut secs[ix.kinfo[i]];
        s.link = ix.symtab as u32;
        s.info = ix.ktext[i] as u32;
        let externs: Vec<u32> = k
            .externs
            .iter()
            .map(|n| symbols.index_of(n) as u32)
            .collect();
        let samplers: Vec<(u16, u32)> = k
            .sampler_params
            .iter()
            .map(|(o, n)| (*o, symbols.index_of(n) as u32))
            .collect();
        s.data = eiattr::encode(&kernel_info(k, c0_sym, &externs, &samplers));
    }
    secs[ix.rel_action].data = rel_action_table();
    secs[ix.rel_action].entsize = 8;
}

/// Step 4c of `write`: the entries of the module data's and each kernel's relocation
/// sections, linked to `.symtab` and to the section they patch.
fn relocation_sections(
    ks: &[&KernelSpec],
    secs: &mut [Sec],
    ix: &SectionIndices,
    symbols: &Symbols,
) {
    let entry = |e: &mut Vec<u8>, offset: u64, symbol: &str, rtype: u32, addend: Option<i64>| {
        reloc_entry(e, offset, symbols.index_of(symbol) as u32, rtype, addend);
    };
    for (ri, d) in &ix.drel {
        let mut data = Vec::new();
        for r in &d.relocs {
            entry(
                &mut data,
                r.offset,
                &r.symbol,
                r.rtype,
                d.rela.then_some(r.addend),
            );
        }
        let target = ix.data_index(&d.section).unwrap_or(0);
        let s = &mut secs[*ri];
        s.data = data;
        s.link = ix.symtab as u32;
        s.info = target as u32;
    }
    for (i, k) in ks.iter().enumerate() {
        for (ri, relocs, target) in [
            (ix.krel[i], &k.relocs, ix.ktext[i]),
            (ix.kcrel[i], &k.const0_relocs, ix.kc0[i].unwrap_or(0)),
        ] {
            if let Some(ri) = ri {
                let mut data = Vec::new();
                for r in relocs {
                    entry(&mut data, r.offset, &r.symbol, r.rtype, None);
                }
                let s = &mut secs[ri];
                s.data = data;
                s.link = ix.symtab as u32;
                s.info = target as u32;
                s.entsize = 16;
            }
        }
    }
}

/// Step 4d of `write`: each kernel's sections point at its code (`sh_info`), and the code
/// at its kernel symbol and register count.
fn kernel_section_links(
    ks: &[&KernelSpec],
    secs: &mut [Sec],
    ix: &SectionIndices,
    symbols: &Symbols,
) {
    for (i, k) in ks.iter().enumerate() {
        if let Some(ci) = ix.kc2[i] {
            secs[ci].info = ix.ktext[i] as u32;
        }
        if let Some(c0) = ix.kc0[i] {
            secs[c0].info = ix.ktext[i] as u32;
        }
        secs[ix.ktext[i]].link = ix.symtab as u32;
        secs[ix.ktext[i]].info = (k.regcount << 24) | symbols.ksym[i] as u32;
        for si in [ix.kshared[i], ix.klocal[i]].into_iter().flatten() {
            secs[si].info = ix.ktext[i] as u32;
        }
    }
}

/// Step 3 of `write`: the section-name and symbol-name string tables, interned in
/// ptxas's order (`shs`: `.shstrtab`, `strs`: `.strtab`).
fn intern_strings(
    spec: &CubinSpec,
    ks: &[&KernelSpec],
    data_secs: &[DataSec],
    ix: &SectionIndices,
    secs: &[Sec],
    syms: &[Sym],
) -> (StrTab, StrTab) {
    let mut shs = StrTab::new();
    let mut strs = StrTab::new();
    for n in spec.strtab_order.iter().flatten() {
        if n.starts_with('.') {
            shs.add(n);
        }
        strs.add(n);
    }
    for n in [
        ".shstrtab",
        ".strtab",
        ".symtab",
        ".symtab_shndx",
        ".nv.info",
    ] {
        shs.add(n);
        strs.add(n);
    }
    for (i, k) in ks.iter().enumerate() {
        strs.add(&k.name);
        for n in [
            format!(".text.{}", k.name),
            format!(".nv.info.{}", k.name),
            format!(".nv.shared.{}", k.name),
        ] {
            shs.add(&n);
            strs.add(&n);
        }
        if i == 0 {
            // ptxas interns the `.texref`/`.surfref` names here, then the descriptor-size
            // symbols (measured for `suq` and `txq` table loads).
            for n in reference_handle_names(spec) {
                strs.add(n);
            }
            for s in desc_size_syms(spec) {
                strs.add(&s.name);
            }
        }
        for f in &k.functions {
            strs.add(&f.name);
        }
        if let Some(l) = k.local.is_some().then(|| format!(".nv.local.{}", k.name)) {
            shs.add(&l);
            strs.add(&l);
        }
        if i == 0 {
            for (n, d, _, _) in data_secs {
                shs.add(n);
                strs.add(n);
                for (name, _, _) in &d.symbols {
                    strs.add(name);
                }
            }
        }
        // A kernel whose code relocations load a descriptor size (a `txq`/`suq` table
        // field, whose offset is in `.nv.constant2`): ptxas interns `.nv.constant2` first.
        let table_first = k
            .relocs
            .iter()
            .any(|r| desc_size_syms(spec).any(|s| s.name == r.symbol));
        let constant2 = |shs: &mut StrTab, strs: &mut StrTab| {
            if k.constant2.is_some() {
                shs.add(&format!(".nv.constant2.{}", k.name));
                strs.add(&format!(".nv.constant2.{}", k.name));
                strs.add("__ocg_const");
            }
        };
        if table_first {
            constant2(&mut shs, &mut strs);
        }
        if ix.krel[i].is_some() {
            shs.add(&format!(".rel.text.{}", k.name));
            strs.add(&format!(".rel.text.{}", k.name));
        }
        if !table_first {
            constant2(&mut shs, &mut strs);
        }
        // The `.param .samplerref`s' symbol names, just before the constant bank's
        // (ptxas 11.8, as their symbols).
        for (_, n) in &k.sampler_params {
            strs.add(n);
        }
        if k.entry {
            shs.add(&format!(".nv.constant0.{}", k.name));
            strs.add(&format!(".nv.constant0.{}", k.name));
            strs.add(if k.params.is_empty() {
                "_SREG"
            } else {
                "_param"
            });
        }
        for n in reference_bindless_names(k) {
            strs.add(&n);
        }
    }
    for (ri, _) in &ix.drel {
        shs.add(&secs[*ri].name);
        strs.add(&secs[*ri].name);
    }
    // ptxas 11.8 interns a kernel's `.rel.nv.constant0` before `.nv.rel.action` when the
    // relocations are texture or surface slots.
    for (i, k) in ks.iter().enumerate() {
        if ix.kcrel[i].is_some() && has_reference_slots(k) {
            shs.add(&format!(".rel.nv.constant0.{}", k.name));
            strs.add(&format!(".rel.nv.constant0.{}", k.name));
        }
    }
    shs.add(".nv.rel.action");
    strs.add(".nv.rel.action");
    for (i, k) in ks.iter().enumerate() {
        if ix.kcrel[i].is_some() {
            shs.add(&format!(".rel.nv.constant0.{}", k.name));
            strs.add(&format!(".rel.nv.constant0.{}", k.name));
        }
    }
    for (name, _) in &spec.handles {
        strs.add(name);
    }
    // Any name not interned above (e.g. a section the rules missed) still gets an entry.
    for s in &secs[1..] {
        shs.add(&s.name);
    }
    for s in &syms[1..] {
        strs.add(&s.name);
    }
    (shs, strs)
}

/// Step 4 of `write`: the module-wide `.nv.info` attributes, last kernel first (`ksym`: each
/// kernel's symbol index; `sym_of`: a name's symbol index).
fn module_info(
    ks: &[&KernelSpec],
    ksym: &[usize],
    sym_of: impl Fn(&str) -> usize,
) -> Vec<Attribute> {
    let mut module_info = Vec::new();
    if ks.iter().any(|k| k.istypep_used) {
        module_info.push(Attribute::Other {
            format: eiattr::Format::Nval,
            code: EIATTR_ISTYPEP_USED,
            payload: vec![0, 0],
        });
    }
    for (i, k) in ks.iter().enumerate().rev() {
        let sym = ksym[i] as u32;
        module_info.push(Attribute::RegCount {
            sym,
            count: k.regcount,
        });
        // Subroutines (last symbol first) get stack records but no REGCOUNT.
        let mut fsyms: Vec<(u32, &FunctionSpec)> = k
            .functions
            .iter()
            .map(|f| (sym_of(&f.name) as u32, f))
            .collect();
        fsyms.sort_by_key(|&(s, _)| std::cmp::Reverse(s));
        for (fsym, f) in fsyms {
            module_info.push(Attribute::MaxStackSize {
                sym: fsym,
                size: f.max_stack_size,
            });
            module_info.push(Attribute::MinStackSize {
                sym: fsym,
                size: f.min_stack_size,
            });
            module_info.push(Attribute::FrameSize {
                sym: fsym,
                size: f.frame_size,
            });
        }
        module_info.push(Attribute::MaxStackSize {
            sym,
            size: k.max_stack_size,
        });
        module_info.push(Attribute::MinStackSize {
            sym,
            size: k.min_stack_size,
        });
        module_info.push(Attribute::FrameSize {
            sym,
            size: k.frame_size,
        });
    }
    module_info
}

/// Step 5 of `write`: lay the sections out and emit the ELF header, section bytes, section
/// headers and program headers.
fn elf_image(spec: &CubinSpec, secs: &[Sec], shstrtab: usize, shs: &StrTab) -> Vec<u8> {
    let layout: Vec<SectionLayout> = secs
        .iter()
        .enumerate()
        .map(|(i, s)| SectionLayout {
            name: if i == 0 { 0 } else { shs.get(&s.name) },
            sh_type: s.sh_type,
            flags: s.flags,
            size: s.size(),
            link: s.link,
            info: s.info,
            align: s.align,
            entsize: s.entsize,
            data: (s.sh_type != elf::SHT_NOBITS).then_some(&s.data[..]),
        })
        .collect();
    let (offsets, shoff) = section_offsets(&layout);
    let phoff = shoff + secs.len() as u64 * 64;
    let loads = load_segments(secs, &offsets);
    let phnum = loads.len() as u64 + 2;
    let phsize = phnum * 56;

    let mut out = Vec::with_capacity((phoff + phsize) as usize);
    let mut ident = [0u8; 16];
    ident[..4].copy_from_slice(&elf::ELFMAG);
    ident[4..9].copy_from_slice(&[
        elf::ELFCLASS64,
        elf::ELFDATA2LSB,
        elf::EV_CURRENT,
        0x33,
        spec.abi_version,
    ]);
    let mut flags = elf_flags(spec.arch, spec.ptx_arch, spec.address_bits);
    if spec.texmode_independent {
        flags = flags & !0x100 | 0x200;
    }
    let header = ElfHeader {
        e_type: elf::ET_EXEC,
        version: TOOLKIT_VERSION,
        phoff,
        shoff,
        flags,
        phnum: phnum as u16,
        shnum: secs.len() as u16,
        shstrndx: shstrtab as u16,
    };
    elf_header(&mut out, &ident, &header);
    sections_and_headers(&mut out, &layout, &offsets, shoff);
    let mut ph = |p_type: u32, flags: u32, off: u64, filesz: u64, memsz: u64| {
        out.extend_from_slice(&p_type.to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&filesz.to_le_bytes());
        out.extend_from_slice(&memsz.to_le_bytes());
        out.extend_from_slice(&8u64.to_le_bytes());
    };
    ph(elf::PT_PHDR, elf::PF_R | elf::PF_X, phoff, phsize, phsize);
    for (flags, off, filesz, memsz) in loads {
        ph(elf::PT_LOAD, flags, off, filesz, memsz);
    }
    ph(elf::PT_LOAD, elf::PF_R | elf::PF_X, phoff, phsize, phsize);
    out
}

/// The LOAD segments over the sections (flags, offset, file size, memory size): a read-only
/// one over constants and code, and a read-write one over globals, shared and local memory
/// when there are any.
fn load_segments(secs: &[Sec], offsets: &[u64]) -> Vec<(u32, u64, u64, u64)> {
    let ro: Vec<usize> = secs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.sh_type == elf::SHT_PROGBITS && s.flags & u64::from(elf::SHF_WRITE) == 0)
        .map(|(i, _)| i)
        .collect();
    let rw: Vec<usize> = secs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.flags & u64::from(elf::SHF_WRITE) != 0)
        .map(|(i, _)| i)
        .collect();
    let mut loads: Vec<(u32, u64, u64, u64)> = Vec::new(); // flags, offset, filesz, memsz
    if let (Some(&a), Some(&b)) = (ro.first(), ro.last()) {
        let size = offsets[b] + secs[b].size() - offsets[a];
        loads.push((elf::PF_R | elf::PF_X, offsets[a], size, size));
    }
    if let Some(&a) = rw.first() {
        let start = offsets[a];
        let mut file_end = start;
        let mut mem = start;
        let mut after_bits = false;
        for &i in &rw {
            mem = align_up(mem, secs[i].align) + secs[i].size();
            if secs[i].sh_type != elf::SHT_NOBITS {
                file_end = offsets[i] + secs[i].size();
                after_bits = true;
            } else if after_bits {
                // ptxas's file size runs to the aligned offset of the NOBITS section that
                // follows initialised data (`.nv.global.init` of 4 bytes, then a 16-aligned
                // `.nv.shared.<k>`: filesz 16).
                file_end = offsets[i];
                after_bits = false;
            }
        }
        loads.push((elf::PF_R | elf::PF_W, start, file_end - start, mem - start));
    }
    loads
}

/// ELF `e_flags` for a ptxas 11.8 cubin: SM in bits 0..7, the PTX `.target` SM in bits
/// 16..23, 0x100 (EF_CUDA_TEXMODE_UNIFIED; `CubinSpec::texmode_independent` replaces it by
/// 0x200), 0x400 for 64-bit addressing.
pub fn elf_flags(arch: u32, ptx_arch: u32, address_bits: u32) -> u32 {
    let addr = if address_bits == 64 { 0x400 } else { 0 };
    (arch & 0xff) | ((ptx_arch & 0xff) << 16) | 0x100 | addr
}

/// The `.nv.info.<k>` records, in ptxas's order.
fn kernel_info(
    k: &KernelSpec,
    constant0_sym: u32,
    externs: &[u32],
    samplers: &[(u16, u32)],
) -> Vec<Attribute> {
    let mut v = vec![
        Attribute::CudaApiVersion(TOOLKIT_VERSION),
        Attribute::Sw2393858War,
        Attribute::Sw1850030War,
    ];
    let externs_record = |v: &mut Vec<Attribute>| {
        if !externs.is_empty() {
            v.push(Attribute::Other {
                format: eiattr::Format::Sval,
                code: eiattr::code::EXTERNS,
                payload: externs.iter().flat_map(|s| s.to_le_bytes()).collect(),
            });
        }
    };
    if !k.entry {
        externs_record(&mut v);
        return v;
    }
    if !k.params.is_empty() {
        let size = k.param_bytes() as u16;
        v.push(Attribute::ParamCbank {
            sym: constant0_sym,
            offset: PARAM_BASE,
            size,
        });
        // A kernel whose only parameters are `.param .samplerref`s (no bytes): ptxas 11.8
        // writes PARAM_CBANK of size 0 but no CBANK_PARAM_SIZE.
        if !k.params.iter().all(ParamSpec::is_sampler) {
            v.push(Attribute::CbankParamSize(size));
        }
        for (ordinal, p) in k.params.iter().enumerate().rev() {
            let mut info = KParamInfo::plain(ordinal as u16, p.offset, p.size);
            info.flags |= p.pointee & 0xfff;
            // A `.param .samplerref`'s index is its sampler's symbol.
            if let Some(&(_, sym)) = samplers.iter().find(|(o, _)| *o == ordinal as u16) {
                info.index = sym;
            }
            v.push(Attribute::KParamInfo(info));
        }
    }
    v.push(Attribute::MaxRegCount(k.max_reg_count));
    // ptxas writes EIATTR_MAX_THREADS (`.maxntid`) and EIATTR_REQNTID (`.reqntid`) late,
    // between the indirect branch targets and CRS_STACK_SIZE; every other extra record comes
    // right here.
    let late =
        |a: &&Attribute| a.code() == eiattr::code::MAX_THREADS || a.code() == eiattr::code::REQNTID;
    v.extend(k.extra_info.iter().filter(|a| !late(a)).cloned());
    externs_record(&mut v);
    if !k.s2r_ctaid_offsets.is_empty() {
        v.push(Attribute::S2rCtaidInstrOffsets(k.s2r_ctaid_offsets.clone()));
    }
    if !k.exit_offsets.is_empty() {
        v.push(Attribute::ExitInstrOffsets(k.exit_offsets.clone()));
    }
    if !k.indirect_branch_targets.is_empty() {
        v.push(Attribute::IndirectBranchTargets(
            k.indirect_branch_targets.clone(),
        ));
    }
    v.extend(k.extra_info.iter().filter(late).cloned());
    if let Some(c) = k.crs_stack_size {
        v.push(Attribute::CrsStackSize(c));
    }
    v
}

/// `R_CUDA_SURF_HEADER_INDEX`: a `.surfref`'s slot in constant bank 0.
const R_CUDA_SURF_HEADER_INDEX: u32 = 0x34;

/// `R_CUDA_TEX_HEADER_INDEX`: a `.texref`'s slot in constant bank 0.
const R_CUDA_TEX_HEADER_INDEX: u32 = 6;

/// Whether `k` has a texture, surface or sampler word (whose `.rel.nv.constant0` ptxas
/// interns early).
fn has_reference_slots(k: &KernelSpec) -> bool {
    k.const0_relocs
        .iter()
        .any(|r| is_reference_slot(r) || r.rtype == crate::sampler::R_CUDA_SAMP_HEADER_INDEX)
}

/// A texture's or surface's header word (`R_CUDA_TEX_HEADER_INDEX`,
/// `R_CUDA_SURF_HEADER_INDEX`).
fn is_reference_slot(r: &RelocSpec) -> bool {
    r.rtype == R_CUDA_SURF_HEADER_INDEX || r.rtype == R_CUDA_TEX_HEADER_INDEX
}

/// The undefined symbols of the module's texture, sampler and surface references
/// ([`CubinSpec::handles`]), in their order there: the `.texref`s and `.surfref`s
/// (`references`) or the others. ptxas 11.8 lists the two groups at different places of
/// `.symtab`.
fn handle_syms(spec: &CubinSpec, references: bool) -> impl Iterator<Item = Sym> + '_ {
    spec.handles
        .iter()
        .filter(move |(_, info)| is_reference_symbol(*info) == references)
        .filter(|(_, info)| !is_desc_size_symbol(*info))
        .map(|(name, info)| undefined_sym(name, *info, 0))
}

/// `st_info` 0x1d (GLOBAL `STT_CUDA_OBJECT`) among the handles: a dynamically sized
/// `.extern .shared` array that code of a relocatable object addresses (ptxas 11.8: undefined,
/// `st_other` 0x40 `STO_CUDA_SHARED`; nvlink places it after each kernel's static window).
pub const DYNAMIC_SHARED_SYMBOL_INFO: u8 = 0x1d;

/// An undefined symbol (section 0, value 0) of `size` bytes.
fn undefined_sym(name: &str, info: u8, size: u64) -> Sym {
    Sym {
        name: name.to_string(),
        info,
        other: if info == DYNAMIC_SHARED_SYMBOL_INFO {
            super::relocatable::STO_CUDA_SHARED
        } else {
            0
        },
        shndx: 0,
        value: 0,
        size,
    }
}

/// The descriptor-size symbols of [`CubinSpec::handles`] (`crate::tex_table`): undefined
/// WEAK OBJECTs of 4 bytes.
fn desc_size_syms(spec: &CubinSpec) -> impl Iterator<Item = Sym> + '_ {
    spec.handles
        .iter()
        .filter(|(_, info)| is_desc_size_symbol(*info))
        .map(|(name, info)| undefined_sym(name, *info, 4))
}

/// `st_info` 0x21 (WEAK OBJECT): a descriptor-size symbol among the handles.
fn is_desc_size_symbol(info: u8) -> bool {
    info == crate::tex_table::DESC_SIZE_SYMBOL_INFO
}

/// `EIATTR_ISTYPEP_USED` (NVAL).
const EIATTR_ISTYPEP_USED: u8 = 0x22;

/// A `.texref`, `.samplerref` or `.surfref` symbol's `st_info`: GLOBAL, CUDA symbol type
/// 10, 11 or 12.
fn is_reference_symbol(info: u8) -> bool {
    info == 0x1a || info == crate::sampler::SAMPLERREF_SYMBOL_INFO || info & 0xf == 12
}

/// The `.texref` and `.surfref` symbols' names, which ptxas interns after the first
/// kernel's section names.
fn reference_handle_names(spec: &CubinSpec) -> impl Iterator<Item = &str> {
    spec.handles
        .iter()
        .filter(|(_, info)| is_reference_symbol(*info))
        .map(|(n, _)| n.as_str())
}

/// The names ptxas 11.8 interns (and drops) for a kernel's texture and surface slots,
/// `$BINDLESS$<kernel>$<ref>`, in slot order, after `_param`; a (texture, sampler) pair's
/// word (`.texmode_independent`) is `$BINDLESS$<kernel>$<tex>$<sampler>`, a sampler's own
/// word `$BINDLESS$<kernel>$<sampler>`.
fn reference_bindless_names(k: &KernelSpec) -> Vec<String> {
    let shared = |r: &RelocSpec| {
        k.const0_relocs
            .iter()
            .any(|t| t.offset == r.offset && is_reference_slot(t))
    };
    // A sampler's own word (`txq` of a sampler attribute) is `$BINDLESS$<kernel>$<sampler>`.
    let alone = |r: &RelocSpec| r.rtype == crate::sampler::R_CUDA_SAMP_HEADER_INDEX && !shared(r);
    let mut slots: Vec<&RelocSpec> = k
        .const0_relocs
        .iter()
        .filter(|r| is_reference_slot(r) || alone(r))
        .collect();
    slots.sort_by_key(|r| r.offset);
    slots
        .iter()
        .map(|r| {
            let sampler = k.const0_relocs.iter().find(|s| {
                is_reference_slot(r)
                    && s.offset == r.offset
                    && s.rtype == crate::sampler::R_CUDA_SAMP_HEADER_INDEX
            });
            match sampler {
                Some(s) => format!("$BINDLESS${}${}${}", k.name, r.symbol, s.symbol),
                None => format!("$BINDLESS${}${}", k.name, r.symbol),
            }
        })
        .collect()
}
