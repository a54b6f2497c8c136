//! Text renderings that mirror NVIDIA's `cuobjdump` 11.8: the `.nv.info*` attribute listing of
//! `cuobjdump -elf`, and the `.headerflags` line of `cuobjdump -sass`.
//!
//! In: a parsed [`Cubin`]. Out: text. The layout (tabs, the `<0xN>` record counter that prints
//! a *decimal* number after `0x`, trailing spaces after word lists) copies cuobjdump's output
//! byte for byte so that tests can compare the two directly.

use super::eiattr::{attr_name, Attribute, Format};
use super::{sht, Cubin};
use std::fmt::Write;

/// The `.headerflags` text cuobjdump 11.8 prints for these ELF flags, e.g.
/// `EF_CUDA_SM50 EF_CUDA_PTX_SM(EF_CUDA_SM50)` for `0x320532`. (Newer cuobjdumps also name
/// `EF_CUDA_TEXMODE_UNIFIED`/`EF_CUDA_64BIT_ADDRESS` and say `VIRTUAL_SM`; 11.8 does not.)
///
/// cuobjdump 11.8 names the real SM (bits 0..7) in both places: it ignores the virtual-SM
/// bits 16..23 (checked by patching them to 10..0x99 in a ptxas cubin: the text never changed).
pub fn header_flags_text(flags: u32) -> String {
    let sm = flags & 0xff;
    format!("EF_CUDA_SM{sm} EF_CUDA_PTX_SM(EF_CUDA_SM{sm})")
}

/// Every `.nv.info*` section of the cubin, in section order, printed as `cuobjdump -elf`
/// prints it (each section: its name, then one block per record, then two empty lines).
pub fn dump_info(cubin: &Cubin) -> String {
    let mut out = String::new();
    for s in &cubin.sections {
        if s.sh_type != sht::CUDA_INFO {
            continue;
        }
        let Ok(attrs) = super::eiattr::decode(&s.name, &s.data) else {
            // The reader already rejected malformed info sections; a hand-built `Cubin`
            // might still hold one, so say so instead of panicking.
            let _ = writeln!(out, "{}\n\t<malformed>\n\n", s.name);
            continue;
        };
        let _ = writeln!(out, "{}", s.name);
        for (i, a) in attrs.iter().enumerate() {
            // cuobjdump prints the 1-based counter in decimal behind a "0x".
            let _ = writeln!(out, "\t<0x{}>", i + 1);
            match attr_name(a.code()) {
                Some(n) => {
                    let _ = writeln!(out, "\tAttribute:\t{n}");
                }
                None => {
                    let _ = writeln!(out, "\tAttribute:\tunknown Attribute");
                }
            }
            let _ = writeln!(out, "\tFormat:\t{}", a.format().name());
            if let Some(v) = value_text(cubin, a) {
                let _ = writeln!(out, "\tValue:\t{v}");
            }
        }
        out.push_str("\n\n");
    }
    out
}

fn function(cubin: &Cubin, sym: u32) -> String {
    let name = cubin
        .symbols
        .get(sym as usize)
        .map(|s| s.name.as_str())
        .unwrap_or("");
    format!("function: {name}(0x{sym:x})\t")
}

fn words(payload: &[u8]) -> String {
    let mut s = String::new();
    for c in payload.chunks(4) {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        let _ = write!(s, "0x{:x} ", u32::from_le_bytes(w));
    }
    s
}

/// The text after `Value:\t`, or `None` for NVAL records (cuobjdump prints no value line).
fn value_text(cubin: &Cubin, a: &Attribute) -> Option<String> {
    Some(match a {
        Attribute::RegCount { sym, count } => {
            format!("{}register count: {count}", function(cubin, *sym))
        }
        Attribute::MinStackSize { sym, size } => {
            format!("{}min stack size: 0x{size:x}", function(cubin, *sym))
        }
        Attribute::FrameSize { sym, size } => {
            format!("{}frame size: 0x{size:x}", function(cubin, *sym))
        }
        Attribute::KParamInfo(k) => format!(
            "Index : 0x{:x}\tOrdinal : 0x{:x}\tOffset  : 0x{:x}\tSize    : 0x{:x}\n\t\t\
             Pointee's logAlignment : 0x{:x}\tSpace : 0x{:x}\tcbank : 0x{:x}\tParameter Space : {}\t",
            k.index,
            k.ordinal,
            k.offset,
            k.size(),
            k.log_align(),
            k.space(),
            k.cbank(),
            if k.is_cbank() { "CBANK" } else { "SMEM" },
        ),
        Attribute::IndirectBranchTargets(entries) => {
            let mut s = String::new();
            for e in entries {
                let kind = if e.kind == 1 { " (kind_call)" } else { "" };
                let _ = write!(
                    s,
                    "\n\t\tOffset of Indirect Branch: 0x{:x}{kind}\t Number of targets: {}\n\t\t",
                    e.offset,
                    e.targets.len()
                );
                if !e.targets.is_empty() {
                    s.push_str("Targets: ");
                    for t in &e.targets {
                        let _ = write!(s, "0x{t:x} ");
                    }
                }
                s.push('\n');
            }
            s
        }
        other => match other.format() {
            Format::Nval => return None,
            Format::Bval | Format::Hval => {
                let p = other.payload();
                let byte = |i: usize| p.get(i).copied().unwrap_or(0);
                format!("0x{:x}", u16::from_le_bytes([byte(0), byte(1)]))
            }
            Format::Sval => words(&other.payload()),
        },
    })
}
