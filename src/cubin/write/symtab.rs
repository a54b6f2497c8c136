//! The symbols of the cubin (step 2 of [`write`]): in: the spec and its sections; out:
//! [`Symbols`], `.symtab` in ptxas's order, and (step 4a) the bytes of `.shstrtab`, `.strtab`
//! and `.symtab`.

use super::*;

/// Step 2's result: the symbols in `.symtab` order.
pub(super) struct Symbols {
    pub(super) syms: Vec<Sym>,
    /// Each kernel's symbol index (file order).
    pub(super) ksym: Vec<usize>,
    /// The index of the first GLOBAL symbol (`.symtab`'s `sh_info`).
    pub(super) first_global: usize,
}

impl Symbols {
    /// The index of the symbol called `name` (0 if none is).
    pub(super) fn index_of(&self, name: &str) -> usize {
        self.syms.iter().position(|s| s.name == name).unwrap_or(0)
    }
}

/// A section's symbol (`STT_SECTION`, named as the section).
fn section_sym(secs: &[Sec], i: usize) -> Sym {
    Sym {
        name: secs[i].name.clone(),
        info: elf::STT_SECTION,
        other: 0,
        shndx: i as u16,
        value: 0,
        size: 0,
    }
}

/// Step 2 of `write`: the symbols in ptxas's creation order: per kernel its local symbols,
/// `.nv.rel.action`'s, then the GLOBAL ones; reordered by [`CubinSpec::symbol_order`].
pub(super) fn symbols(
    spec: &CubinSpec,
    ks: &[&KernelSpec],
    data_secs: &[DataSec],
    secs: &[Sec],
    ix: &SectionIndices,
) -> Symbols {
    let mut syms: Vec<Sym> = vec![Sym {
        name: String::new(),
        info: 0,
        other: 0,
        shndx: 0,
        value: 0,
        size: 0,
    }];
    let kernel_sym = |i: usize, k: &KernelSpec| Sym {
        name: k.name.clone(),
        info: (u8::from(k.visible) << 4) | elf::STT_FUNC,
        other: if k.entry { STO_CUDA_ENTRY } else { 0 },
        shndx: ix.ktext[i] as u16,
        value: 0,
        size: (k.code.len() * 8) as u64,
    };
    // Subroutines inside a kernel's text (see `FunctionSpec::bind` for where they go).
    let function_sym = |i: usize, f: &FunctionSpec| Sym {
        name: f.name.clone(),
        info: (f.bind << 4) | elf::STT_FUNC,
        other: 0,
        shndx: ix.ktext[i] as u16,
        value: f.offset,
        size: f.size,
    };
    let mut ksym = vec![0; ks.len()];
    for (i, k) in ks.iter().enumerate() {
        // ptxas creates a non-visible kernel's (local) symbol before its section symbols.
        if !k.visible {
            ksym[i] = syms.len();
            syms.push(kernel_sym(i, k));
        }
        syms.push(section_sym(secs, ix.ktext[i]));
        if i == 0 {
            // ptxas 11.8 lists `.nv.unified.texrefDescSize` right after the text section.
            syms.extend(desc_size_syms(spec));
        }
        if let Some(si) = ix.kshared[i].filter(|&si| secs[si].size() > 0) {
            syms.push(section_sym(secs, si));
        }
        if let Some(si) = ix.klocal[i] {
            syms.push(section_sym(secs, si));
        }
        if i == 0 {
            for (n, d, _, _) in data_secs {
                let si = ix.data_index(n).unwrap_or(0);
                syms.push(section_sym(secs, si));
                for (name, off, size) in &d.symbols {
                    syms.push(Sym {
                        name: name.clone(),
                        info: elf::STT_OBJECT,
                        other: 0,
                        shndx: si as u16,
                        value: *off,
                        size: *size,
                    });
                }
            }
        }
        if let Some(si) = ix.kc2[i] {
            syms.push(section_sym(secs, si));
        }
        for f in k.functions.iter().filter(|f| f.bind != elf::STB_GLOBAL) {
            syms.push(function_sym(i, f));
        }
        // The `.param .samplerref`s' symbols, one per name (`crate::sampler`), just
        // before the constant bank's (ptxas 11.8).
        for (_, name) in &k.sampler_params {
            if !syms.iter().any(|s| s.name == *name) {
                syms.push(Sym {
                    name: name.clone(),
                    info: crate::sampler::SAMPLER_PARAM_SYMBOL_INFO,
                    other: 0,
                    shndx: ix.ktext[i] as u16,
                    value: 0,
                    size: 0,
                });
            }
        }
        if let Some(c0) = ix.kc0[i] {
            syms.push(section_sym(secs, c0));
        }
    }
    syms.push(section_sym(secs, ix.rel_action));
    let first_global = syms.len();
    for (i, k) in ks.iter().enumerate() {
        if k.visible {
            ksym[i] = syms.len();
            syms.push(kernel_sym(i, k));
        }
        for f in k.functions.iter().filter(|f| f.bind == elf::STB_GLOBAL) {
            syms.push(function_sym(i, f));
        }
        if i == 0 {
            // ptxas 11.8 lists the `.texref`/`.surfref` symbols right after its first
            // kernel's.
            syms.extend(handle_syms(spec, true));
        }
    }
    if ks.is_empty() {
        syms.extend(handle_syms(spec, true));
    }
    syms.extend(handle_syms(spec, false));
    let mut symbols = Symbols {
        syms,
        ksym,
        first_global,
    };
    if let Some(order) = &spec.symbol_order {
        symbols.reorder_locals(order, ks);
    }
    symbols
}

impl Symbols {
    /// Step 2 of `write`, last: sort the local symbols by their place in `order` (names not
    /// listed last, in their order) and find the LOCAL kernels' symbols again.
    pub(super) fn reorder_locals(&mut self, order: &[String], ks: &[&KernelSpec]) {
        let rank = |s: &Sym| {
            order
                .iter()
                .position(|n| *n == s.name)
                .unwrap_or(usize::MAX)
        };
        let first_global = self.first_global;
        self.syms[1..first_global].sort_by_key(rank);
        for (i, k) in ks.iter().enumerate() {
            if !k.visible {
                self.ksym[i] = self.syms[..first_global]
                    .iter()
                    .position(|s| s.name == k.name && s.info & 0xf == elf::STT_FUNC)
                    .unwrap_or(self.ksym[i]);
            }
        }
    }
}

/// Step 4a of `write`: the contents of `.shstrtab`, `.strtab` and `.symtab`.
pub(super) fn symbol_and_string_tables(
    secs: &mut [Sec],
    ix: &SectionIndices,
    symbols: &Symbols,
    shs: &StrTab,
    strs: &StrTab,
) {
    secs[ix.shstrtab].data = shs.bytes.clone();
    secs[ix.strtab].data = strs.bytes.clone();
    let symtab = &mut secs[ix.symtab];
    symtab.link = ix.strtab as u32;
    symtab.info = symbols.first_global as u32;
    symtab.entsize = 24;
    symtab.data = symbols
        .syms
        .iter()
        .flat_map(|s| symbol_entry(strs.get(&s.name), s.info, s.other, s.shndx, s.value, s.size))
        .collect();
}
