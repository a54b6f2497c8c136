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
    for (pos, &t) in bound.iter().enumerate().rev() {
        k.const0_relocs.push(cubin::RelocSpec {
            offset: u64::from(ir::tex::bound_slot_offset(f, pos)),
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

/// The module's `.surfref` symbols, as ptxas 11.8 writes them (undefined GLOBAL symbols of
/// CUDA type 12): first those the last kernel uses, in the order it first uses them (ptxas
/// compiles the kernels last first, and makes these symbols as it meets them), then the
/// others in declaration order.
pub(super) fn surface_handles(
    module: &ir::Module,
    last: Option<&ir::Function>,
) -> Vec<(String, u8)> {
    let mut order: Vec<u32> = last
        .map(|f| {
            crate::surface::bound_slots(f)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        })
        .unwrap_or_default();
    for i in 0..module.surfrefs.len() as u32 {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    order
        .into_iter()
        .map(|i| (module.surfrefs[i as usize].clone(), SURFREF_SYMBOL_INFO))
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
