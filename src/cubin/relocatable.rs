//! Relocatable cubins (`ptxas --compile-only`, `-c`): the whole-program cubin [`super::write`]
//! produces, rewritten into the object form ptxas 11.8 writes for `nvlink`.
//!
//! In: the bytes of an `ET_EXEC` cubin from [`super::write`]. Out: an `ET_REL` cubin with the
//! same code, data and relocations, or a [`CubinError`] if the input is not one we wrote.
//! Learned by compiling the same PTX with `ptxas -arch=sm_50` and `ptxas -arch=sm_50 -c` and
//! comparing `cuobjdump -elf` and `readelf` of the two, section by section. The differences,
//! all applied here:
//!
//! - ELF header: `e_type` is `ET_REL` (1); no program headers (`e_phoff` 0, `e_phnum` 0).
//! - Section types name the memory each section holds: `.nv.constantN*` is
//!   `SHT_CUDA_CONSTANT_BN` (`0x70000064 + N`), `.nv.global.init` is `SHT_CUDA_GLOBAL_INIT`
//!   (`0x70000008`), `.nv.global` `SHT_CUDA_GLOBAL` (`0x70000007`), `.nv.shared.<k>`
//!   `SHT_CUDA_SHARED` (`0x7000000a`), `.nv.local.<k>` `SHT_CUDA_LOCAL` (`0x70000009`); the
//!   last three still occupy no file bytes.
//! - `.nv.rel.action` (the relocation-action table the driver uses when it loads an
//!   executable) is replaced, at the same place, by `.nv.callgraph` (`SHT_CUDA_CALLGRAPH`,
//!   entries of two `i32`, linked to `.symtab`): `<0,-1>`, one `<caller, callee>` edge per
//!   call relocation (`R_CUDA_ABS32_26`, type 0x2a, of a `JCAL`) in section order, then `<0,-2>`
//!   and `<0,-3>`. nvlink reads it to size stacks across objects.
//! - Symbols: after each `.nv.constant0.<k>` section symbol a LOCAL `_param` (value 0x140, size
//!   the parameter bytes), or `_SREG` (value 0, size 0x140) for a kernel without parameters,
//!   both of type 13 (`STT_CUDA_OBJECT`) and `st_other` 0x81 (`STO_CUDA_CONSTANT` | internal);
//!   every variable (`STT_OBJECT`) becomes type 13 with its memory in `st_other`: 0x20
//!   (`STO_CUDA_GLOBAL`) in `.nv.global`/`.nv.global.init`, 0x80 (`STO_CUDA_CONSTANT`) in
//!   `.nv.constant3`, 0x40 (`STO_CUDA_SHARED`) in a shared section; `.visible` variables are
//!   GLOBAL, moved after the LOCAL symbols. Every symbol index in
//!   relocations, `.nv.info` records and `.text` `sh_info` is renumbered accordingly.
//! - Module `.nv.info`: no `EIATTR_MIN_STACK_SIZE` records; a function with its own `.text`
//!   section and stack records but no `EIATTR_REGCOUNT` gets one (ptxas gives each function of
//!   an object its register count). A kernel's `.nv.info.<k>` lists the undefined functions it
//!   calls in `EIATTR_EXTERNS` (code 0x0f, their symbol indices), before
//!   `EIATTR_EXIT_INSTR_OFFSETS` (renumbered where the writer already wrote one: ptxas writes
//!   it in executables too, for system calls such as `vprintf`).
//!
//! - Every operand that reads a `.const` variable (constant bank 3) is relocated, since nvlink
//!   concatenates the objects' `.nv.constant3`: a constant operand (`c[0x3][X]`, bits 20..38)
//!   gets `R_CUDA_CONST_FIELD19_20` (0x32), an `LDC` offset (bits 20..35)
//!   `R_CUDA_ABS16_20` (0x2e), against the variable holding byte X, with the field cleared and
//!   X minus the variable's offset as the addend, in a `.rela.text.<k>` section (ptxas writes
//!   `MOV R0, c[0x0][0x0]` + `.rela` entry 0x32 `t1 + 8` for `ld.const [t1+8]`). Without them
//!   a second object's constants are read at the first's offsets (measured: `e2` of two linked
//!   objects read `c[0x3][0x8]` instead of `c[0x3][0x18]`). The type numbers are the order of
//!   nvlink's own `R_CUDA_*` name table (`ABS32_20` = 0x2a, `ABS32_LO_20` = 0x2b, ...).
//!
//! - A kernel's static shared window gets one LOCAL `STT_CUDA_OBJECT` symbol over all of it
//!   (`$__<k>__shared`, `STO_CUDA_SHARED`, valued at its alignment as ptxas values each of
//!   its per-variable symbols): nvlink lays out a kernel's window from the shared symbols
//!   it sees, the kernel's first, then those of the functions of other objects it calls.
//!   Without it, a called function's array was placed at offset 0 over the kernel's.
//! - A function of the object (no `STO_CUDA_ENTRY`) with literals: a LOCAL symbol
//!   `<f>.const_opt.0.<size>` (`st_other` 0x81) over its `.nv.constant2.<f>`, and every
//!   `c[0x2][X]` operand of its code relocated against it (`R_CUDA_CONST_FIELD19_20`, X as
//!   the addend): nvlink appends the literals to each calling kernel's bank 2.
//!
//! Not reproduced: ptxas's `.nv.prototype` (call prototypes nvlink does not need to link),
//! per-variable symbols for a kernel's own `.shared` variables and the relocations
//! (`R_CUDA_ABS24_20`, 0x2d) ptxas adds to their uses: the kernel's code keeps its fixed
//! offsets under the one window symbol above. The string tables keep the
//! writer's names and append any new one, so offsets differ from ptxas's. ptxas's own code
//! also differs in an object (it addresses a `.const` array through `MOV32I` + relocation); the
//! code here is the whole-program code, relocated.

use super::eiattr::{self, Attribute};
use super::encode::{
    elf_header, reloc_entry, section_offsets, sections_and_headers, symbol_entry, ElfHeader,
    SectionLayout,
};
use super::{elf, read, sht, CubinError, Section, Symbol};

/// `ET_REL`.
pub const ET_REL: u16 = 1;
/// `SHT_CUDA_CONSTANT_B0`; bank N is this + N.
pub const SHT_CUDA_CONSTANT: u32 = 0x7000_0064;
/// `SHT_CUDA_GLOBAL_INIT`.
pub const SHT_CUDA_GLOBAL_INIT: u32 = 0x7000_0008;
/// `STT_CUDA_OBJECT`: the symbol type of variables and parameter banks in an object.
pub const STT_CUDA_OBJECT: u8 = 13;
/// `st_other` of a global variable.
pub const STO_CUDA_GLOBAL: u8 = 0x20;
/// `st_other` of a shared variable.
pub const STO_CUDA_SHARED: u8 = 0x40;
/// `st_other` of a constant-bank symbol.
pub const STO_CUDA_CONSTANT: u8 = 0x80;
/// ELF `STV_INTERNAL`.
const STV_INTERNAL: u8 = 1;
/// `R_CUDA_ABS32_26`: the target of a `JCAL`.
pub const R_CUDA_ABS32_26: u32 = 0x2a;
/// `EIATTR_EXTERNS`.
pub const EIATTR_EXTERNS: u8 = 0x0f;

/// The section type a relocatable cubin gives a section of this name (`None`: unchanged).
fn object_type(name: &str) -> Option<u32> {
    if let Some(rest) = name.strip_prefix(".nv.constant") {
        let bank: u32 = rest.split('.').next()?.parse().ok()?;
        return (bank < 18).then_some(SHT_CUDA_CONSTANT + bank);
    }
    if name == ".nv.global.init" {
        Some(SHT_CUDA_GLOBAL_INIT)
    } else if name == ".nv.global" {
        Some(sht::CUDA_GLOBAL)
    } else if name.starts_with(".nv.shared.") || name == super::write::OBJECT_SHARED {
        Some(sht::CUDA_SHARED)
    } else if name.starts_with(".nv.local.") {
        Some(sht::CUDA_LOCAL)
    } else {
        None
    }
}

fn malformed(why: String) -> CubinError {
    CubinError::Malformed(why)
}

/// Rewrite a whole-program cubin from [`super::write`] as a relocatable one (module essay).
/// `globals` names the module's `.visible` variables: their symbols are bound GLOBAL, so that
/// other objects can refer to them (the writer binds every variable LOCAL).
pub fn relocatable(exec: &[u8], globals: &[String]) -> Result<Vec<u8>, CubinError> {
    let c = read(exec)?;
    if c.header.e_type != elf::ET_EXEC {
        return Err(malformed(format!(
            "expected an executable cubin (ET_EXEC), got e_type {}",
            c.header.e_type
        )));
    }
    let mut secs: Vec<Section> = c.sections.clone();
    let tables = Tables::find(&secs)?;
    // 1. Symbols: insert the parameter-bank symbols, retype variables, bind the visible ones
    // GLOBAL (after every LOCAL symbol, as ELF requires), map old to new indices.
    let (syms, first_global, renumber) = object_symbols(&c, &secs, globals);
    // 2. Relocations: renumber symbols; collect call edges for the call graph.
    let (edges, externs) = renumber_relocations(&c, &mut secs, &syms, &renumber)?;
    // 2b. Uses of `.const` variables get relocations.
    relocate_constants(&mut secs, &syms, tables.symtab);
    // 3. Sections: types, the call graph, `.text` symbol indices, `.nv.info` records.
    object_sections(&mut secs, &edges, tables.symtab, &renumber)?;
    object_info(&mut secs, &syms, &externs, &renumber)?;
    // 4. String tables: the writer's, plus any name it lacks.
    let sec_names = string_and_symbol_tables(&mut secs, &tables, &syms, first_global);
    // 5. Bytes: header, section data at their alignments, section headers (8-aligned).
    Ok(elf_bytes(exec, &c, &secs, tables.shstrtab, &sec_names))
}

/// The indices of the executable's `.symtab`, `.strtab` (its link) and `.shstrtab`.
struct Tables {
    symtab: usize,
    strtab: usize,
    shstrtab: usize,
}

impl Tables {
    /// Find the three tables in `secs`, or say which is missing.
    fn find(secs: &[Section]) -> Result<Tables, CubinError> {
        let symtab = secs
            .iter()
            .position(|s| s.sh_type == elf::SHT_SYMTAB)
            .ok_or_else(|| malformed("no .symtab".into()))?;
        let strtab = secs[symtab].link as usize;
        let shstrtab = secs
            .iter()
            .position(|s| s.name == ".shstrtab")
            .ok_or_else(|| malformed("no .shstrtab".into()))?;
        if strtab >= secs.len() {
            return Err(malformed(".symtab links to no string table".into()));
        }
        Ok(Tables {
            symtab,
            strtab,
            shstrtab,
        })
    }
}

/// Each old symbol index's new one (step 1 of `relocatable`).
struct Renumbering(Vec<u32>);

impl Renumbering {
    /// The new index of the symbol that had index `old`.
    fn remap(&self, old: u32) -> Result<u32, CubinError> {
        self.0
            .get(old as usize)
            .copied()
            .ok_or_else(|| malformed(format!("symbol index {old} out of range")))
    }
}

/// Step 1 of `relocatable`: the object's symbols, LOCAL ones first (the null symbol stays
/// at 0), each group in its order; the index of the first GLOBAL one; the renumbering.
fn object_symbols(
    c: &super::Cubin,
    secs: &[Section],
    globals: &[String],
) -> (Vec<Symbol>, usize, Renumbering) {
    let mut syms = symbols_with_params(c, secs, globals);
    syms.sort_by_key(|(_, s)| s.info >> 4 != 0);
    let first_global = syms
        .iter()
        .position(|(_, s)| s.info >> 4 != 0)
        .unwrap_or(syms.len());
    let mut new_index = vec![0u32; c.symbols.len()];
    for (at, (old, _)) in syms.iter().enumerate() {
        if let Some(old) = old {
            new_index[*old] = at as u32;
        }
    }
    let syms: Vec<Symbol> = syms.into_iter().map(|(_, s)| s).collect();
    (syms, first_global, Renumbering(new_index))
}

/// Step 2 of `relocatable`: every relocation section's entries rewritten with the new
/// symbol indices; the call edges `(caller, callee)` for the call graph, and the undefined
/// functions each text section calls `(text section, callee)`.
#[allow(clippy::type_complexity)] // two lists of index pairs
fn renumber_relocations(
    c: &super::Cubin,
    secs: &mut [Section],
    syms: &[Symbol],
    renumber: &Renumbering,
) -> Result<(Vec<(u32, u32)>, Vec<(usize, u32)>), CubinError> {
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut externs: Vec<(usize, u32)> = Vec::new(); // (text section, callee symbol)
    for r in &c.relocations {
        let rela = secs[r.section].sh_type == elf::SHT_RELA;
        let mut data = Vec::new();
        for e in &r.relocs {
            let sym = renumber.remap(e.sym)?;
            reloc_entry(
                &mut data,
                e.offset,
                sym,
                e.rtype,
                rela.then_some(e.addend.unwrap_or(0)),
            );
        }
        secs[r.section].data = data;
        let target = &secs[r.target];
        if target.flags & u64::from(elf::SHF_EXECINSTR) == 0 {
            continue;
        }
        let caller = renumber.remap(target.info & 0x00ff_ffff)?;
        // A call: a `JCAL`'s relocation, or any code relocation against a function.
        let is_function = |e: &super::Reloc| {
            c.symbols
                .get(e.sym as usize)
                .is_some_and(|s| s.info & 0xf == elf::STT_FUNC)
        };
        let mut calls: Vec<&super::Reloc> = r
            .relocs
            .iter()
            .filter(|e| e.rtype == R_CUDA_ABS32_26 || is_function(e))
            .collect();
        calls.sort_by_key(|e| e.offset);
        for e in calls {
            let callee = renumber.remap(e.sym)?;
            if !edges.contains(&(caller, callee)) {
                edges.push((caller, callee));
            }
            if syms[callee as usize].shndx == 0 && !externs.contains(&(r.target, callee)) {
                externs.push((r.target, callee));
            }
        }
    }
    Ok((edges, externs))
}

/// Step 2b of `relocatable`: nvlink places each object's `.nv.constant3` in the linked
/// bank 3, so every operand naming bank 3 gets a relocation against the variable it lies in
/// (the field cleared, the offset in the variable as the addend), in a new
/// `.rela.text.<k>` after the other sections (section indices stay as they are).
fn relocate_constants(secs: &mut Vec<Section>, syms: &[Symbol], symtab: usize) {
    let constants: Vec<(u32, u64, u64)> = syms
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            s.info & 0xf == STT_CUDA_OBJECT
                && secs
                    .get(usize::from(s.shndx))
                    .is_some_and(|x| x.name == ".nv.constant3")
        })
        .map(|(i, s)| (i as u32, s.value, s.size))
        .collect();
    let texts: Vec<usize> = (1..secs.len())
        .filter(|&i| secs[i].flags & u64::from(elf::SHF_EXECINSTR) != 0)
        .collect();
    for t in texts {
        let literals = function_literals(secs, syms, t);
        if constants.is_empty() && literals.is_none() {
            continue;
        }
        let mut relas: Vec<u8> = Vec::new();
        let mut data = std::mem::take(&mut secs[t].data);
        for (n, chunk) in data.chunks_exact_mut(8).enumerate() {
            if n % 4 == 0 {
                continue; // a control word
            }
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            let found = match (bank_operand(word, 3), literals) {
                (Some((rtype, offset, clear)), _) => constants
                    .iter()
                    .rfind(|(_, v, size)| *v <= offset && offset < v + (*size).max(1))
                    .map(|&(sym, value, _)| (rtype, offset, clear, sym, value)),
                (None, Some(sym)) => bank_operand(word, 2)
                    .map(|(rtype, offset, clear)| (rtype, offset, clear, sym, 0)),
                (None, None) => None,
            };
            let Some((rtype, offset, clear, sym, value)) = found else {
                continue;
            };
            chunk.copy_from_slice(&(word & !clear).to_le_bytes());
            let addend = (offset - value) as i64;
            reloc_entry(&mut relas, n as u64 * 8, sym, rtype, Some(addend));
        }
        secs[t].data = data;
        if !relas.is_empty() {
            let name = format!(".rela{}", secs[t].name);
            secs.push(Section {
                name,
                sh_type: elf::SHT_RELA,
                flags: 0,
                addr: 0,
                offset: 0,
                size: relas.len() as u64,
                link: symtab as u32,
                info: t as u32,
                align: 8,
                entsize: 24,
                data: relas,
            });
        }
    }
}

/// Whether `name` is a function of the object (a FUNC symbol without `STO_CUDA_ENTRY`).
fn is_object_function(c: &super::Cubin, name: &str) -> bool {
    c.symbols.iter().any(|s| {
        s.name == name && s.info & 0xf == elf::STT_FUNC && s.other & super::STO_CUDA_ENTRY == 0
    })
}

/// The symbol over the whole `.nv.constant2.<f>` of a function of the object (`size` bytes).
/// ptxas 11.8 names each literal `f.const_opt.<start>.<end>` (probe `lit2.ptx`:
/// `f.const_opt.0.4`, `f.const_opt.4.8`, `f.const_opt.8.16`); leafold's one symbol spans the
/// pool, each operand relocated with its offset as the addend.
fn literals_symbol(function: &str, size: usize) -> String {
    format!("{function}.const_opt.0.{size}")
}

/// The symbol of the literals that text section `t` reads from bank 2, when `t` is a
/// function of the object: at run time bank 2 is the calling kernel's, so nvlink appends the
/// function's literals to each caller's bank and patches every `c[0x2][..]` operand
/// (ptxas 11.8, probe `sh2.ptx`: `FFMA R5, R0, c[0x0][0x0], R5` under
/// `R_CUDA_CONST_FIELD19_20` against `f.const_opt.0.4`). A kernel's own bank 2 stays.
fn function_literals(secs: &[Section], syms: &[Symbol], t: usize) -> Option<u32> {
    let name = secs[t].name.strip_prefix(".text.")?;
    let pool = secs
        .iter()
        .find(|s| s.name == format!(".nv.constant2.{name}"))?;
    let want = literals_symbol(name, pool.data.len());
    let sym = syms.iter().position(|s| s.name == want)?;
    Some(sym as u32)
}

/// Step 3a of `relocatable`: the object's section types, `.nv.rel.action` replaced by the
/// call graph, and each `.text`'s kernel symbol renumbered.
fn object_sections(
    secs: &mut [Section],
    edges: &[(u32, u32)],
    symtab: usize,
    renumber: &Renumbering,
) -> Result<(), CubinError> {
    for s in secs.iter_mut().skip(1) {
        if let Some(t) = object_type(&s.name) {
            s.sh_type = t;
        }
        if s.name == ".nv.rel.action" {
            let mut graph: Vec<(i32, i32)> = vec![(0, -1)];
            graph.extend(edges.iter().map(|&(a, b)| (a as i32, b as i32)));
            graph.extend([(0, -2), (0, -3)]);
            s.name = ".nv.callgraph".into();
            s.sh_type = sht::CUDA_CALLGRAPH;
            s.align = 4;
            s.entsize = 8;
            s.link = symtab as u32;
            s.data = graph
                .iter()
                .flat_map(|&(a, b)| [a.to_le_bytes(), b.to_le_bytes()].concat())
                .collect();
        }
        if s.flags & u64::from(elf::SHF_EXECINSTR) != 0 {
            s.info = (s.info & 0xff00_0000) | renumber.remap(s.info & 0x00ff_ffff)?;
        }
    }
    Ok(())
}

/// Step 3b of `relocatable`: every `.nv.info*` section's records with their symbols
/// renumbered; the module's without MIN_STACK_SIZE and with a register count for each
/// function of its own section, each kernel's with the undefined functions it calls.
fn object_info(
    secs: &mut [Section],
    syms: &[Symbol],
    externs: &[(usize, u32)],
    renumber: &Renumbering,
) -> Result<(), CubinError> {
    for i in 1..secs.len() {
        if secs[i].sh_type != sht::CUDA_INFO {
            continue;
        }
        let name = secs[i].name.clone();
        let mut attrs = eiattr::decode(&name, &secs[i].data)?;
        renumber_attributes(&name, &mut attrs, renumber)?;
        if name == ".nv.info" {
            attrs.retain(|a| !matches!(a, Attribute::MinStackSize { .. }));
            attrs = with_function_regcounts(attrs, syms, secs);
        } else {
            let text = secs[i].info as usize;
            let list: Vec<u32> = externs
                .iter()
                .filter(|(t, _)| *t == text)
                .map(|&(_, s)| s)
                .collect();
            add_externs(&mut attrs, &list);
        }
        secs[i].data = eiattr::encode(&attrs);
    }
    Ok(())
}

/// The symbol indices in the records of the `.nv.info*` section `name`, renumbered.
fn renumber_attributes(
    name: &str,
    attrs: &mut [Attribute],
    renumber: &Renumbering,
) -> Result<(), CubinError> {
    for a in attrs.iter_mut() {
        match a {
            Attribute::RegCount { sym, .. }
            | Attribute::MaxStackSize { sym, .. }
            | Attribute::MinStackSize { sym, .. }
            | Attribute::FrameSize { sym, .. }
            | Attribute::ParamCbank { sym, .. } => *sym = renumber.remap(*sym)?,
            Attribute::Other { code, payload, .. } if *code == EIATTR_EXTERNS => {
                let mut out = Vec::with_capacity(payload.len());
                for w in payload.chunks(4) {
                    let old = u32::from_le_bytes(w.try_into().map_err(|_| {
                        malformed(format!("{name}: EIATTR_EXTERNS is not a list of words"))
                    })?);
                    out.extend_from_slice(&renumber.remap(old)?.to_le_bytes());
                }
                *payload = out;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The module `.nv.info` records with a REGCOUNT before the first stack record of each
/// function that has its own code section (its register count from that section's
/// `sh_info`) and none yet.
fn with_function_regcounts(
    attrs: Vec<Attribute>,
    syms: &[Symbol],
    secs: &[Section],
) -> Vec<Attribute> {
    let mut out = Vec::with_capacity(attrs.len());
    let mut counted: Vec<u32> = attrs
        .iter()
        .filter_map(|a| match a {
            Attribute::RegCount { sym, .. } => Some(*sym),
            _ => None,
        })
        .collect();
    for a in attrs {
        if let Attribute::MaxStackSize { sym, .. } = a {
            let s = &syms[sym as usize];
            let text = secs.get(usize::from(s.shndx));
            if let Some(t) = text.filter(|t| {
                !counted.contains(&sym) && t.name == format!(".text.{}", s.name) && s.value == 0
            }) {
                out.push(Attribute::RegCount {
                    sym,
                    count: t.info >> 24,
                });
                counted.push(sym);
            }
        }
        out.push(a);
    }
    out
}

/// A kernel's `.nv.info.<k>` records with an EIATTR_EXTERNS of `list` (the undefined
/// functions it calls) before its EXIT_INSTR_OFFSETS, unless it has one already.
fn add_externs(attrs: &mut Vec<Attribute>, list: &[u32]) {
    let listed = attrs
        .iter()
        .any(|a| matches!(a, Attribute::Other { code, .. } if *code == EIATTR_EXTERNS));
    if !list.is_empty() && !listed {
        let at = attrs
            .iter()
            .position(|a| matches!(a, Attribute::ExitInstrOffsets(_)))
            .unwrap_or(attrs.len());
        attrs.insert(
            at,
            Attribute::Other {
                format: eiattr::Format::Sval,
                code: EIATTR_EXTERNS,
                payload: list.iter().flat_map(|s| s.to_le_bytes()).collect(),
            },
        );
    }
}

/// Step 4 of `relocatable`: the string tables (the writer's, plus any name they lack) and
/// `.symtab`'s entries; each section's name offset.
fn string_and_symbol_tables(
    secs: &mut [Section],
    tables: &Tables,
    syms: &[Symbol],
    first_global: usize,
) -> Vec<u32> {
    let Tables {
        symtab,
        strtab,
        shstrtab,
    } = *tables;
    let mut strs = StrTab(secs[strtab].data.clone());
    let mut shs = if shstrtab == strtab {
        None
    } else {
        Some(StrTab(secs[shstrtab].data.clone()))
    };
    let sym_names: Vec<u32> = syms.iter().map(|s| strs.get(&s.name)).collect();
    let sec_names: Vec<u32> = secs
        .iter()
        .map(|s| match &mut shs {
            Some(t) => t.get(&s.name),
            None => strs.get(&s.name),
        })
        .collect();
    secs[strtab].data = strs.0;
    if let Some(t) = shs {
        secs[shstrtab].data = t.0;
    }
    secs[symtab].info = first_global as u32;
    secs[symtab].data = syms
        .iter()
        .zip(&sym_names)
        .flat_map(|(s, &name)| symbol_entry(name, s.info, s.other, s.shndx, s.value, s.size))
        .collect();
    sec_names
}

/// Part of step 1 of `relocatable`: every symbol of `c` (with its old index), variables retyped by
/// the memory they live in (`globals` bound GLOBAL), `.nv.rel.action`'s section symbol
/// renamed `.nv.callgraph`, and after each `.nv.constant0.<k>` section symbol the new
/// parameter-bank symbol (`_param`, or `_SREG` for a kernel without parameters).
fn symbols_with_params(
    c: &super::Cubin,
    secs: &[Section],
    globals: &[String],
) -> Vec<(Option<usize>, Symbol)> {
    let mut syms: Vec<(Option<usize>, Symbol)> = Vec::with_capacity(c.symbols.len() + 8);
    for (i, s) in c.symbols.iter().enumerate() {
        let mut s = s.clone();
        let section = secs.get(usize::from(s.shndx)).map(|x| x.name.as_str());
        let kind = s.info & 0xf;
        if kind == elf::STT_OBJECT {
            let memory = match section {
                Some(".nv.global" | ".nv.global.init") => Some(STO_CUDA_GLOBAL),
                Some(n) if n.starts_with(".nv.constant") => Some(STO_CUDA_CONSTANT),
                Some(n) if n.starts_with(".nv.shared.") || n == super::write::OBJECT_SHARED => {
                    Some(STO_CUDA_SHARED)
                }
                _ => None,
            };
            if let Some(other) = memory {
                let bind = if globals.contains(&s.name) {
                    elf::STB_GLOBAL
                } else {
                    s.info >> 4
                };
                s.info = (bind << 4) | STT_CUDA_OBJECT;
                s.other = other;
            }
        }
        let bank0 = (kind == elf::STT_SECTION)
            .then(|| section.and_then(|n| n.strip_prefix(".nv.constant0.")))
            .flatten()
            .map(str::to_string);
        if section == Some(".nv.rel.action") && kind == elf::STT_SECTION {
            s.name = ".nv.callgraph".into();
        }
        let shndx = s.shndx;
        let window = (kind == elf::STT_SECTION)
            .then(|| section.and_then(|n| n.strip_prefix(".nv.shared.")))
            .flatten()
            .map(str::to_string)
            .zip(secs.get(usize::from(shndx)))
            .filter(|(_, x)| x.size > 0)
            .map(|(k, x)| (k, x.align, x.size));
        let literals = (kind == elf::STT_SECTION)
            .then(|| section.and_then(|n| n.strip_prefix(".nv.constant2.")))
            .flatten()
            .filter(|f| is_object_function(c, f))
            .zip(secs.get(usize::from(shndx)))
            .map(|(f, x)| (literals_symbol(f, x.data.len()), x.data.len() as u64));
        syms.push((Some(i), s));
        if let Some((name, size)) = literals {
            // nvlink appends a function's literals to the bank 2 of each kernel that calls
            // it by this symbol (relocated against the section symbol, the operands kept
            // reading the function's own, unmerged bank: measured).
            syms.push((
                None,
                Symbol {
                    name,
                    value: 0,
                    size,
                    info: STT_CUDA_OBJECT,
                    other: STO_CUDA_CONSTANT | STV_INTERNAL,
                    shndx,
                },
            ));
        }
        if let Some((kernel, align, size)) = window {
            // The kernel's static shared data as one variable (its code addresses it at
            // fixed offsets from 0): nvlink lays out only the shared *symbols* of a kernel's
            // window, so without it a function of another object that the kernel calls got
            // the same offsets (measured: a ptxas object's `STS [R3+0x100]` became `STS [R3]`
            // and the window 0x100 bytes, not 0x200). ptxas has one symbol per variable, each
            // valued at its alignment (`$___ZZ5stagePiE3own__28`: value 4); nvlink keeps the
            // kernel's own first.
            syms.push((
                None,
                Symbol {
                    name: format!("$__{kernel}__shared"),
                    value: align.max(1),
                    size,
                    info: STT_CUDA_OBJECT,
                    other: STO_CUDA_SHARED,
                    shndx,
                },
            ));
        }
        if let Some(kernel) = bank0 {
            let params = c
                .kernels
                .iter()
                .find(|k| k.name == kernel)
                .map(|k| {
                    k.info
                        .iter()
                        .find_map(|a| match a {
                            Attribute::CbankParamSize(n) => Some(u64::from(*n)),
                            _ => None,
                        })
                        .unwrap_or(0)
                })
                .unwrap_or(0);
            let (name, value, size) = if params == 0 {
                ("_SREG", 0, u64::from(super::write::PARAM_BASE))
            } else {
                ("_param", u64::from(super::write::PARAM_BASE), params)
            };
            let param_sym = Symbol {
                name: name.into(),
                value,
                size,
                info: STT_CUDA_OBJECT,
                other: STO_CUDA_CONSTANT | STV_INTERNAL,
                shndx,
            };
            syms.push((None, param_sym));
        }
    }
    syms
}

/// Step 5 of `relocatable`: the ELF header (from `exec`'s identification, `ET_REL`), the
/// section data at their alignments and the section headers (8-aligned).
fn elf_bytes(
    exec: &[u8],
    c: &super::Cubin,
    secs: &[Section],
    shstrtab: usize,
    sec_names: &[u32],
) -> Vec<u8> {
    let layout: Vec<SectionLayout> = secs
        .iter()
        .zip(sec_names)
        .map(|(s, &name)| {
            let nobits = sht::is_nobits(s.sh_type);
            SectionLayout {
                name,
                sh_type: s.sh_type,
                flags: s.flags,
                size: if nobits { s.size } else { s.data.len() as u64 },
                link: s.link,
                info: s.info,
                align: s.align,
                entsize: s.entsize,
                data: (!nobits).then_some(&s.data[..]),
            }
        })
        .collect();
    let (offsets, shoff) = section_offsets(&layout);
    let mut out = Vec::with_capacity(shoff as usize + secs.len() * 64);
    let header = ElfHeader {
        e_type: ET_REL,
        version: c.header.version,
        phoff: 0,
        shoff,
        flags: c.header.flags,
        phnum: 0,
        shnum: secs.len() as u16,
        shstrndx: shstrtab as u16,
    };
    elf_header(&mut out, &exec[..16], &header);
    sections_and_headers(&mut out, &layout, &offsets, shoff);
    out
}

/// `R_CUDA_ABS16_20`: a 16-bit value at bit 20 (`LDC`'s byte offset).
pub const R_CUDA_ABS16_20: u32 = 0x2e;
/// `R_CUDA_CONST_FIELD19_20`: a constant operand's bank (bits 34..38) and word offset (bits
/// 20..33), set from the symbol's bank and byte offset.
pub const R_CUDA_CONST_FIELD19_20: u32 = 0x32;

/// If `word` names constant bank `want` with a fixed offset: the relocation type for it, the
/// byte offset, and the bits a relocation sets (cleared in the object, as ptxas leaves them).
fn bank_operand(word: u64, want: u64) -> Option<(u32, u64, u64)> {
    use crate::sm50::{Field, Form};
    let inst = crate::sm50::decode(word).ok()?;
    if inst.form == Form::LDC {
        // `LDC Rd, c[0x3][Ra + off]`: only the offset is relocated (Ra stays added).
        if inst.get(Field::Bank)? != want {
            return None;
        }
        let off = inst.get(Field::Off)? as u16 as i16;
        let off = u64::try_from(off).ok()?;
        return Some((R_CUDA_ABS16_20, off, 0xffff << 20));
    }
    let word_offset = inst.get(Field::Cbo)?;
    let bank = inst.get(Field::Cbk).or(inst.get(Field::Cbks))?;
    (bank == want).then_some((R_CUDA_CONST_FIELD19_20, word_offset * 4, 0x7_ffff << 20))
}

/// A string table's bytes; names are found where they start after a NUL, else appended.
struct StrTab(Vec<u8>);

impl StrTab {
    fn get(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        let want: Vec<u8> = [name.as_bytes(), &[0]].concat();
        let found = (0..self.0.len())
            .find(|&at| (at == 0 || self.0[at - 1] == 0) && self.0[at..].starts_with(&want));
        match found {
            Some(at) => at as u32,
            None => {
                if self.0.is_empty() {
                    self.0.push(0);
                }
                let at = self.0.len() as u32;
                self.0.extend_from_slice(&want);
                at
            }
        }
    }
}
