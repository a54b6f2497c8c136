//! Module data for the cubin: the `.const` bank image, the `.global` variables' image and
//! the data relocations of addresses in initializers, with the relocation types ptxas uses.
//!
//! In: the IR module. Out: [`DataSpec`]s and relocation specs for the cubin writer.

use super::*;

/// The `.const` data, laid out in declaration order at each variable's alignment, as `lower`
/// assigns their offsets. (Shared memory is per kernel: `ir::Module::shared_layout`.)
pub(super) fn module_constants(module: &ir::Module) -> Option<DataSpec> {
    let mut cdata = DataSpec {
        size: 0,
        align: 4,
        init: Vec::new(),
        symbols: Vec::new(),
    };
    let mut any_const = false;
    for (_, v) in module.vars_in_layout_order() {
        let align = u64::from(v.align.max(1));
        if let ir::Space::Const | ir::Space::Param | ir::Space::Generic = v.space {
            any_const = true;
            let off = cdata.size.next_multiple_of(align);
            cdata.size = off + u64::from(v.size);
            cdata.align = cdata.align.max(align);
            cdata.init.resize(cdata.size as usize, 0);
            if let Some(init) = &v.init {
                let end = (off as usize + init.len()).min(cdata.size as usize);
                cdata.init[off as usize..end].copy_from_slice(&init[..end - off as usize]);
            }
            cdata.symbols.push((v.name.clone(), off, u64::from(v.size)));
        }
    }
    any_const.then_some(cdata)
}

/// The data relocations for the addresses in `.global` and `.const` initializers
/// ([`ir::AddrInit`]), as ptxas 11.8 writes them: `R_CUDA_G64` for an 8-byte element,
/// `R_CUDA_G8_<8k>` for a `mask()` byte (byte k of the address), against the named variable,
/// the offset as addend; every entry without an addend in `.rel.<section>`, those with one in
/// `.rela.<section>`; the relocated bytes stay zero. A `.global` variable's plain and
/// generic addresses are the same; a `.const` variable's plain address is its offset in
/// `.nv.constant3`, which ptxas writes as data, not as a relocation (done here, into
/// `constant`/`global`'s bytes).
///
/// One deviation: for a 4-byte element (`.u32 p = x`) ptxas (with its default `-m64`, a
/// 64-bit ELF as leafold writes) also emits `R_CUDA_G64`, which writes 8 bytes into the 4-byte
/// variable and so over the 4 bytes after it; leafold writes `R_CUDA_G32`, which is what
/// ptxas `-m32` writes for the same element.
pub(super) fn data_relocations(
    module: &ir::Module,
    mut global: Option<&mut DataSpec>,
    mut constant: Option<&mut DataSpec>,
) -> Vec<cubin::DataRelocs> {
    let offset_in = |d: &Option<&mut DataSpec>, name: &str| -> Option<u64> {
        let d = d.as_deref()?;
        d.symbols.iter().find(|s| s.0 == name).map(|s| s.1)
    };
    // (global: rel, rela), (const: rel, rela)
    let mut groups: [Vec<cubin::DataRelocSpec>; 4] = Default::default();
    for (gv, v) in module.vars.iter() {
        let Some(addrs) = module.addr_inits.get(gv).filter(|a| !a.is_empty()) else {
            continue;
        };
        let (section, base) = match v.space {
            ir::Space::Global => (0, offset_in(&global, &v.name)),
            ir::Space::Const => (2, offset_in(&constant, &v.name)),
            _ => continue,
        };
        let Some(base) = base else { continue };
        for a in addrs {
            let Some(t) = module.vars.get(a.target) else {
                continue;
            };
            if t.space == ir::Space::Const && !a.generic {
                // An offset in the const space: known now.
                let Some(toff) = offset_in(&constant, &t.name) else {
                    continue;
                };
                let data = if section == 0 {
                    global.as_deref_mut()
                } else {
                    constant.as_deref_mut()
                };
                if let Some(d) = data {
                    let end = ((base + u64::from(v.size)) as usize).min(d.init.len());
                    if let Some(bytes) = d.init.get_mut(base as usize..end) {
                        a.patch(bytes, toff);
                    }
                }
                continue;
            }
            let rtype = match a.width {
                ir::AddrWidth::Word(8) => R_CUDA_G64,
                ir::AddrWidth::Word(_) => R_CUDA_G32,
                ir::AddrWidth::Byte(shift) => R_CUDA_G8_0 + u32::from(shift.min(56) / 8),
            };
            groups[section + usize::from(a.addend != 0)].push(cubin::DataRelocSpec {
                offset: base + u64::from(a.offset),
                symbol: t.name.clone(),
                rtype,
                addend: a.addend,
            });
        }
    }
    let names = [
        ".nv.global.init",
        ".nv.global.init",
        ".nv.constant3",
        ".nv.constant3",
    ];
    groups
        .into_iter()
        .enumerate()
        .filter(|(_, g)| !g.is_empty())
        .map(|(i, relocs)| cubin::DataRelocs {
            section: names[i].to_string(),
            rela: i % 2 == 1,
            relocs,
        })
        .collect()
}

/// `R_CUDA_G64`: the 64-bit generic address of a symbol (plus the addend) into 8 bytes of
/// data.
pub const R_CUDA_G64: u32 = 0x4;

/// `R_CUDA_G32`: its low 32 bits into 4 bytes of data.
pub const R_CUDA_G32: u32 = 0x3;

/// `R_CUDA_G8_0`: byte 0 of the generic address into one byte of data; `R_CUDA_G8_<8k>` is
/// `R_CUDA_G8_0 + k` (byte k, up to `R_CUDA_G8_56` = 0x5b).
pub const R_CUDA_G8_0: u32 = 0x54;

/// The module's `.global` variables as one data section, and whether it holds initial bytes.
///
/// Variables are laid out in declaration order at their alignment, exactly as
/// [`ir::eval`] places them at `MODULE_GLOBAL_BASE`, so the simulator running our cubin and the
/// IR interpreter see the same bytes at the same addresses. ptxas splits initialized
/// (`.nv.global.init`) from zero-initialized (`.nv.global`, NOBITS) variables; when a module has
/// both, leafold keeps them together in `.nv.global.init` (zeros written out) to keep that
/// layout.
pub(super) fn global_memory(module: &ir::Module) -> (Option<DataSpec>, bool) {
    let mut g = DataSpec {
        size: 0,
        align: 1,
        init: Vec::new(),
        symbols: Vec::new(),
    };
    let mut any = false;
    let mut any_init = false;
    for v in module
        .vars
        .values()
        .filter(|v| v.space == ir::Space::Global)
    {
        any = true;
        let align = u64::from(v.align.max(1));
        let off = g.size.next_multiple_of(align);
        g.size = off + u64::from(v.size);
        g.align = g.align.max(align);
        // Bytes only up to the last initialized variable (the writer zero-pads to `size`):
        // a large uninitialized array costs no memory here.
        if let Some(init) = &v.init {
            any_init = true;
            let end = (off as usize + init.len()).min(g.size as usize);
            g.init.resize(end, 0);
            g.init[off as usize..end].copy_from_slice(&init[..end - off as usize]);
        }
        g.symbols.push((v.name.clone(), off, u64::from(v.size)));
    }
    (any.then_some(g), any_init)
}
