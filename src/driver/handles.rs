//! Texture and surface handles in the cubin: the per-kernel records and relocations of the
//! textures and surfaces a kernel names, and the bindless banks.
//!
//! In: the IR module and one kernel. Out: the kernel spec's texture and surface records.

use super::*;

/// `R_CUDA_TEX_HEADER_INDEX`: the driver writes a texture's header index into the word.
pub(super) const R_CUDA_TEX_HEADER_INDEX: u32 = 6;

/// The cubin records of kernel `f`'s bound textures, as ptxas 11.8 writes them: one word of
/// `.nv.constant0.<k>` per texture after the parameters (`ir::tex::bound_slot_offset`, where
/// `TEXS`/`TLDS`/`TXQ` read it), relocated by `R_CUDA_TEX_HEADER_INDEX` against the
/// texture's symbol (listed from the highest offset down, as ptxas lists them), and
/// `EIATTR_BINDLESS_TEXTURE_BANK` 0 (ptxas writes it for kernels with bound textures only;
/// a texture object passed as a parameter needs neither).
pub(super) fn texture_records(module: &ir::Module, f: &ir::Function, k: &mut KernelSpec) {
    let bound = ir::tex::bound_textures(f);
    if bound.is_empty() {
        return;
    }
    for (pos, &h) in bound.iter().enumerate().rev() {
        let offset = u64::from(ir::tex::bound_slot_offset(f, pos));
        let t = match h {
            ir::tex::TexHandle::Paired { tex, samp } => {
                // One word, the sampler's relocation listed first (ptxas 11.8).
                k.const0_relocs.push(cubin::RelocSpec {
                    offset,
                    symbol: module.samplerrefs[samp as usize].name.clone(),
                    rtype: crate::sampler::R_CUDA_SAMP_HEADER_INDEX,
                });
                tex
            }
            ir::tex::TexHandle::Bound(t) => t,
            ir::tex::TexHandle::Sampler(samp) => {
                // The sampler's own word (`txq` of a sampler attribute).
                k.const0_relocs.push(cubin::RelocSpec {
                    offset,
                    symbol: module.samplerrefs[samp as usize].name.clone(),
                    rtype: crate::sampler::R_CUDA_SAMP_HEADER_INDEX,
                });
                continue;
            }
            ir::tex::TexHandle::Bindless | ir::tex::TexHandle::Combined => continue,
        };
        k.const0_relocs.push(cubin::RelocSpec {
            offset,
            symbol: module.texrefs[t as usize].clone(),
            rtype: R_CUDA_TEX_HEADER_INDEX,
        });
    }
    k.extra_info.push(cubin::eiattr::Attribute::Other {
        format: cubin::eiattr::Format::Bval,
        code: BINDLESS_TEXTURE_BANK,
        payload: vec![0, 0],
    });
}

/// `EIATTR_BINDLESS_TEXTURE_BANK`.
pub(super) const BINDLESS_TEXTURE_BANK: u8 = 0x15;

/// `R_CUDA_SURF_HEADER_INDEX`: the driver writes a surface's header index into the
/// relocated word of constant bank 0.
pub(super) const R_CUDA_SURF_HEADER_INDEX: u32 = 0x34;

/// `EIATTR_BINDLESS_SURFACE_BANK` (a BVAL: the constant bank of the surface handles, 0).
pub(super) const EIATTR_BINDLESS_SURFACE_BANK: u8 = 0x16;

/// `st_info` of a `.surfref` symbol: GLOBAL binding, CUDA type 12 (surface).
pub(super) const SURFREF_SYMBOL_INFO: u8 = 0x1c;

/// `st_info` of a `.texref` symbol: GLOBAL binding, CUDA type 10 (texture).
pub(super) const TEXREF_SYMBOL_INFO: u8 = 0x1a;

/// The module's `.texref` and `.surfref` symbols, as ptxas 11.8 writes them (undefined
/// GLOBAL symbols of CUDA type 10 and 12, which it lists right after its first kernel's
/// symbol): first those the last kernel uses, textures and surfaces together in the order
/// it first uses them (ptxas compiles the kernels last first, and makes these symbols as it
/// meets them), then the others, used elsewhere or not at all, in declaration order
/// (`declared`, the module variables' names as [`module_var_names`] lists them, gives it
/// across the two kinds). Probed with modules of one to three kernels mixing
/// used, unused, textures and surfaces (`tests/compile_tex.rs`).
pub(super) fn reference_handles(
    declared: &[String],
    module: &ir::Module,
    last: Option<&ir::Function>,
) -> Vec<(String, u8)> {
    let tex = |k: u32| (module.texrefs[k as usize].clone(), TEXREF_SYMBOL_INFO);
    let surf = |k: u32| (module.surfrefs[k as usize].clone(), SURFREF_SYMBOL_INFO);
    let samp = |k: u32| sampler_handle(module, k);
    let mut order: Vec<(String, u8)> = Vec::new();
    if let Some(f) = last {
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                let hs = match &f.insts[i].data {
                    ir::InstData::Texture {
                        handle: ir::tex::TexHandle::Bound(k),
                        ..
                    } => vec![tex(*k)],
                    // The texture, then its sampler (ptxas 11.8).
                    ir::InstData::Texture {
                        handle: ir::tex::TexHandle::Paired { tex: t, samp: s },
                        ..
                    } => std::iter::once(tex(*t)).chain(samp(*s)).collect(),
                    // A sampler queried alone (`txq`, `.texmode_independent`).
                    ir::InstData::Texture {
                        handle: ir::tex::TexHandle::Sampler(s),
                        ..
                    } => samp(*s).into_iter().collect(),
                    ir::InstData::Surface { access, .. } => match access.handle {
                        crate::surface::SurfHandle::Bound(k) => vec![surf(k)],
                        _ => continue,
                    },
                    _ => continue,
                };
                for h in hs {
                    if !order.contains(&h) {
                        order.push(h);
                    }
                }
            }
        }
    }
    for name in declared {
        let h = if let Some(k) = module.texrefs.iter().position(|t| t == name) {
            tex(k as u32)
        } else if let Some(k) = module.surfrefs.iter().position(|s| s == name) {
            surf(k as u32)
        } else if let Some(k) = module
            .samplerrefs
            .iter()
            .position(|s| s.name == *name && s.param.is_none())
        {
            samp(k as u32).expect("a module sampler")
        } else {
            continue;
        };
        if !order.contains(&h) {
            order.push(h);
        }
    }
    // Any reference the declarations did not name (none expected) keeps a symbol.
    let all = (0..module.texrefs.len() as u32)
        .map(tex)
        .chain((0..module.surfrefs.len() as u32).map(surf))
        .chain((0..module.samplerrefs.len() as u32).filter_map(samp));
    for h in all.collect::<Vec<_>>() {
        if !order.contains(&h) {
            order.push(h);
        }
    }
    order
}

/// The symbol of the module's `k`-th `.samplerref` (name and `st_info`); `None` for a
/// kernel's `.param .samplerref`, whose LOCAL symbol the kernel's spec asks for
/// ([`sampler_params`]).
fn sampler_handle(module: &ir::Module, k: u32) -> Option<(String, u8)> {
    let s = &module.samplerrefs[k as usize];
    s.param
        .is_none()
        .then(|| (s.name.clone(), crate::sampler::SAMPLERREF_SYMBOL_INFO))
}

/// Kernel `f`'s parameters as the cubin describes them, in signature order: its
/// `.param .samplerref`s ([`crate::sampler`], "Samplers passed as kernel parameters") among
/// the others, with their names (the LOCAL symbols [`cubin::KernelSpec::sampler_params`]
/// asks for).
pub(super) fn kernel_params(
    module: &ir::Module,
    f: &ir::Function,
) -> (Vec<cubin::ParamSpec>, Vec<(u16, String)>) {
    let samplers: Vec<(u16, String)> = module
        .samplerrefs
        .iter()
        .filter_map(|s| match &s.param {
            Some((kernel, ordinal)) if *kernel == f.name => Some((*ordinal as u16, s.name.clone())),
            _ => None,
        })
        .collect();
    let mut plain = f.params.iter();
    let mut params = Vec::new();
    for ordinal in 0..(f.params.len() + samplers.len()) as u16 {
        if samplers.iter().any(|(o, _)| *o == ordinal) {
            params.push(cubin::ParamSpec::sampler());
        } else if let Some(p) = plain.next() {
            params.push(cubin::ParamSpec {
                offset: p.offset.min(u32::from(u16::MAX)) as u16,
                size: p.size,
                // `.ptr` parameter attributes are not recorded in the IR yet.
                pointee: 0,
            });
        }
    }
    (params, samplers)
}

/// The names of the module-scope variables of `ast`, in declaration order.
pub(super) fn module_var_names(ast: &ast::Module) -> Vec<String> {
    ast.items
        .iter()
        .flat_map(|item| match item {
            ast::Item::Var(v) => v.names.iter().map(|d| d.name.text.to_string()).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// A kernel's surface metadata, as ptxas 11.8 writes it: one `R_CUDA_SURF_HEADER_INDEX`
/// relocation of `.nv.constant0.<k>` per `.surfref` it uses (at the word
/// [`crate::surface::bound_slots`] gives it; ptxas lists them last slot first), and
/// `EIATTR_BINDLESS_SURFACE_BANK` 0 when a surface instruction names its surface by a
/// constant-bank slot (a `.surfref`, or a handle read straight from a parameter).
pub(super) fn surface_metadata(module: &ir::Module, f: &ir::Function, k: &mut KernelSpec) {
    use crate::surface::SurfHandle;
    let slots = crate::surface::bound_slots(f);
    for &(i, off) in slots.iter().rev() {
        k.const0_relocs.push(cubin::RelocSpec {
            offset: u64::from(off),
            symbol: module.surfrefs[i as usize].clone(),
            rtype: R_CUDA_SURF_HEADER_INDEX,
        });
    }
    let by_slot = f.insts.values().any(|n| match &n.data {
        ir::InstData::Surface { access, args } => match access.handle {
            SurfHandle::Bound(_) => true,
            SurfHandle::Bindless => matches!(
                f.values[args[0]].def,
                ir::ValueDef::Result(d, _) if matches!(f.insts[d].data, ir::InstData::LoadParam { .. })
            ),
        },
        _ => false,
    });
    if by_slot {
        k.extra_info.push(cubin::eiattr::Attribute::Other {
            format: cubin::eiattr::Format::Bval,
            code: EIATTR_BINDLESS_SURFACE_BANK,
            payload: vec![0, 0],
        });
    }
}

/// The descriptor-size symbols the kernels' `txq`/`suq` table loads name
/// ([`crate::tex_table`]): `.nv.unified.texrefDescSize`, then `.nv.surfrefDescSize` (WEAK
/// OBJECT, size 4), each once, when a kernel relocates against it. (The order of the two
/// when both are used was not measured.)
pub(super) fn desc_size_symbols(kernels: &[KernelSpec]) -> Vec<(String, u8)> {
    [
        crate::tex_table::TEXREF_DESC_SIZE_SYMBOL,
        crate::tex_table::surf::DESC_SIZE_SYMBOL,
        crate::tex_table::samp::DESC_SIZE_SYMBOL,
    ]
    .into_iter()
    .filter(|name| {
        kernels
            .iter()
            .any(|k| k.relocs.iter().any(|r| r.symbol == *name))
    })
    .map(|name| (name.to_string(), crate::tex_table::DESC_SIZE_SYMBOL_INFO))
    .collect()
}
