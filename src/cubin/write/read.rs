//! Reading a cubin back into a [`CubinSpec`] ([`CubinSpec::from_cubin`]): kernels, functions,
//! parameters, data and relocations, so that a cubin (ours or ptxas's) can be rewritten and
//! compared.
//!
//! In: a parsed [`Cubin`]. Out: its spec.

use super::*;

/// The non-entry function symbols inside a kernel's text, in symbol order, with their stack
/// records from the module `.nv.info`.
pub(super) fn functions_of(c: &Cubin, k: &super::super::Kernel) -> Vec<FunctionSpec> {
    c.symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            usize::from(s.shndx) == k.text_section && s.info & 0xf == elf::STT_FUNC && !s.is_entry()
        })
        .map(|(si, s)| {
            let stack = |want: fn(&Attribute) -> Option<(u32, u32)>| {
                c.info
                    .iter()
                    .filter_map(want)
                    .find(|&(sym, _)| sym as usize == si)
                    .map_or(0, |(_, v)| v)
            };
            FunctionSpec {
                name: s.name.clone(),
                offset: s.value,
                size: s.size,
                bind: s.info >> 4,
                frame_size: stack(|a| match a {
                    Attribute::FrameSize { sym, size } => Some((*sym, *size)),
                    _ => None,
                }),
                min_stack_size: stack(|a| match a {
                    Attribute::MinStackSize { sym, size } => Some((*sym, *size)),
                    _ => None,
                }),
                max_stack_size: stack(|a| match a {
                    Attribute::MaxStackSize { sym, size } => Some((*sym, *size)),
                    _ => None,
                }),
            }
        })
        .collect()
}

/// The names in the cubin's `.strtab`, in order.
pub(super) fn strtab_names(c: &Cubin) -> Option<Vec<String>> {
    let symtab = c.sections.iter().find(|s| s.sh_type == elf::SHT_SYMTAB)?;
    let strtab = c.sections.get(symtab.link as usize)?;
    Some(
        strtab
            .data
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect(),
    )
}

impl CubinSpec {
    /// The spec that describes a cubin we read (ptxas's or ours): used to check the writer
    /// against ptxas byte for byte, and to re-write a module.
    pub fn from_cubin(c: &Cubin) -> CubinSpec {
        let data = |name: &str| -> Option<DataSpec> {
            let (si, s) = c
                .sections
                .iter()
                .enumerate()
                .find(|(_, s)| s.name == name)?;
            Some(DataSpec {
                size: s.size,
                align: s.align,
                init: s.data.clone(),
                symbols: c
                    .symbols
                    .iter()
                    .filter(|y| usize::from(y.shndx) == si && y.info & 0xf == elf::STT_OBJECT)
                    .map(|y| (y.name.clone(), y.value, y.size))
                    .collect(),
            })
        };
        let kernels = c
            .kernels
            .iter()
            .rev()
            .map(|k| kernel_spec_of(c, k))
            .collect();
        CubinSpec {
            arch: c.header.sm(),
            ptx_arch: c.header.virtual_sm(),
            address_bits: if c.header.is_64bit() { 64 } else { 32 },
            kernels,
            constant3: data(".nv.constant3"),
            global_init: data(".nv.global.init"),
            global: data(".nv.global"),
            strtab_order: strtab_names(c),
            // Undefined symbols with a type: texture, sampler and surface references.
            handles: c
                .symbols
                .iter()
                .skip(1)
                .filter(|y| y.shndx == 0 && y.info & 0xf != 0 && !y.name.is_empty())
                .map(|y| (y.name.clone(), y.info))
                .collect(),
            symbol_order: Some(c.symbols.iter().skip(1).map(|y| y.name.clone()).collect()),
            abi_version: c.header.abi_version,
            texmode_independent: c.header.flags & 0x200 != 0,
            samplers: crate::sampler::from_cubin(c),
            object_shared: data(super::OBJECT_SHARED),
            data_relocs: c
                .relocations
                .iter()
                .filter_map(|r| {
                    let target = c.sections.get(r.target)?;
                    if !matches!(target.name.as_str(), ".nv.global.init" | ".nv.constant3") {
                        return None;
                    }
                    Some(DataRelocs {
                        section: target.name.clone(),
                        rela: c.sections.get(r.section)?.sh_type == elf::SHT_RELA,
                        relocs: r
                            .relocs
                            .iter()
                            .map(|e| DataRelocSpec {
                                offset: e.offset,
                                symbol: symbol_name(c, e.sym),
                                rtype: e.rtype,
                                addend: e.addend.unwrap_or(0),
                            })
                            .collect(),
                    })
                })
                .collect(),
        }
    }
}

/// The [`KernelSpec`] of kernel `k` of `c` (a step of [`CubinSpec::from_cubin`]): its code,
/// parameters, windows, subroutines and `.nv.info` records, with the records the writer
/// derives itself kept apart from the ones it copies (`extra_info`).
fn kernel_spec_of(c: &Cubin, k: &super::super::Kernel) -> KernelSpec {
    let standard = |a: &Attribute| {
        matches!(
            a,
            Attribute::CudaApiVersion(_)
                | Attribute::Sw2393858War
                | Attribute::Sw1850030War
                | Attribute::ParamCbank { .. }
                | Attribute::CbankParamSize(_)
                | Attribute::KParamInfo(_)
                | Attribute::MaxRegCount(_)
                | Attribute::S2rCtaidInstrOffsets(_)
                | Attribute::ExitInstrOffsets(_)
                | Attribute::CrsStackSize(_)
                | Attribute::IndirectBranchTargets(_)
        )
    };
    let relocs_of = |target: Option<usize>| -> Vec<RelocSpec> {
        c.relocations
            .iter()
            .filter(|r| Some(r.target) == target)
            .flat_map(|r| r.relocs.iter())
            .map(|r| RelocSpec {
                offset: r.offset,
                symbol: symbol_name(c, r.sym),
                rtype: r.rtype,
            })
            .collect()
    };
    let relocs = relocs_of(Some(k.text_section));
    let const0 = format!(".nv.constant0.{}", k.name);
    let const0_relocs = relocs_of(c.sections.iter().position(|s| s.name == const0));
    KernelSpec {
        name: k.name.clone(),
        visible: c
            .symbols
            .get(k.symbol)
            .is_some_and(|s| s.info >> 4 == elf::STB_GLOBAL),
        code: k.code.clone(),
        regcount: k.regcount,
        params: k
            .params
            .iter()
            .map(|p| ParamSpec {
                offset: p.offset,
                size: p.size,
                pointee: p.info.flags & 0xfff,
            })
            .collect(),
        sampler_params: k
            .params
            .iter()
            .filter(|p| p.offset == ParamSpec::NO_OFFSET && p.size == 0)
            .map(|p| (p.ordinal, symbol_name(c, p.info.index)))
            .collect(),
        shared: k.shared,
        local: c
            .section(&format!(".nv.local.{}", k.name))
            .map(|s| (s.size, s.align)),
        functions: functions_of(c, k),
        frame_size: k.frame_size.unwrap_or(0),
        min_stack_size: k.min_stack_size.unwrap_or(0),
        max_stack_size: k.max_stack_size.unwrap_or(0),
        barriers: k.barriers,
        istypep_used: c.info.iter().any(|a| a.code() == 0x22),
        max_reg_count: k
            .info
            .iter()
            .find_map(|a| match a {
                Attribute::MaxRegCount(v) => Some(*v),
                _ => None,
            })
            .unwrap_or(0xff),
        exit_offsets: k.exit_offsets(),
        s2r_ctaid_offsets: k.s2r_ctaid_offsets(),
        crs_stack_size: k.crs_stack_size(),
        indirect_branch_targets: k
            .info
            .iter()
            .find_map(|a| match a {
                Attribute::IndirectBranchTargets(v) => Some(v.clone()),
                _ => None,
            })
            .unwrap_or_default(),
        extra_info: k.info.iter().filter(|a| !standard(a)).cloned().collect(),
        constant2: k.constant2.clone(),
        relocs,
        const0_relocs,
        // Kept as read: an EIATTR_EXTERNS record stays in `extra_info`.
        externs: Vec::new(),
        // `read` lists only kernels (symbols with `STO_CUDA_ENTRY`).
        entry: true,
    }
}

/// The name of symbol `sym` of `c` (empty when there is none): a relocation's target.
fn symbol_name(c: &Cubin, sym: u32) -> String {
    c.symbols
        .get(sym as usize)
        .map(|s| s.name.clone())
        .unwrap_or_default()
}
