//! Disassembly listings: a cubin's kernels as SASS text in the layout of `cuobjdump -sass`.
//!
//! In: a parsed [`Cubin`] (from [`crate::cubin::read`]). Out: text. Each function's `.text` is a
//! series of 32-byte bundles (control word + three instructions); every instruction word is
//! decoded with [`sm50::decode`] and printed with [`sm50::print`], whose text is the one
//! nvdisasm prints, `.reuse` flags included (they come from the bundle's control word).
//!
//! Layout (as cuobjdump 11.8 prints it): a `code for sm_NN` header; per kernel a `Function :`
//! line and the `.headerflags` line; per bundle a line holding only the control word, then one
//! line per instruction: `/*addr*/`, a 19-column field holding `{` for the first of a
//! dual-issued pair and the right-aligned guard predicate, the text and ` ;`, and the encoding
//! in a comment at a column set by the kernel's longest line. The second instruction of a
//! dual-issued pair ends in `}` and its encoding moves to a line of its own. A pair is an
//! instruction whose control field has stall 0 and the yield bit set, with the next one.
//!
//! The text of each instruction is exactly nvdisasm's; the comment column follows cuobjdump's
//! rule for ordinary lines (37 + the longest `text ;`), which cuobjdump computes a little
//! differently when the longest line is the second of a dual-issued pair, so compare listings
//! line by line after collapsing whitespace, not byte for byte.
//!
//! Options: `ctrl` adds each instruction's control code in CuAssembler's notation
//! (`[B------:R-:W-:Y:S06]`) between the address and the text; `raw` prints the words alone.
//! A word that does not decode prints as `UNKNOWN 0x…` rather than stopping the listing.

use crate::cubin::Cubin;
use crate::sm50::{self, Ctrl};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, Default)]
pub struct ListingOptions {
    /// Add a control-code column.
    pub ctrl: bool,
    /// Print the raw words only.
    pub raw: bool,
    /// Mark the instructions of the address slice (`*` before the address; see
    /// [`crate::sm50::slice`]): the ones whose results reach a memory address.
    pub slice: bool,
}

/// One instruction ready to lay out.
struct Line {
    addr: u64,
    word: u64,
    ctrl: Ctrl,
    guard: String,
    text: String,
    dual_first: bool,
    dual_second: bool,
    /// A NOP after the kernel's last other instruction: alignment padding.
    padding: bool,
}

/// The whole listing of a cubin, like `cuobjdump -sass FILE.cubin`: every `.text.<name>`
/// section in section order, kernels and non-inlined functions alike.
pub fn listing(cubin: &Cubin, opts: ListingOptions) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n\tcode for sm_{}", cubin.arch());
    let flags = cubin.header_flags_text();
    for s in &cubin.sections {
        let Some(name) = s.name.strip_prefix(".text.") else {
            continue;
        };
        let code: Vec<u64> = s
            .data
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        out.push_str(&function_listing(name, &code, &flags, opts));
    }
    out
}

/// The listing of one function (its `Function :` block).
pub fn function_listing(
    name: &str,
    code: &[u64],
    header_flags: &str,
    opts: ListingOptions,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\t\tFunction : {name}");
    let _ = writeln!(out, "\t.headerflags    @\"{header_flags}\"");
    if opts.raw {
        for (i, w) in code.iter().enumerate() {
            let kind = if i % 4 == 0 { "  (control)" } else { "" };
            let _ = writeln!(out, "        /*{:04x}*/ 0x{w:016x}{kind}", i * 8);
        }
    } else {
        out.push_str(&instruction_lines(code, opts));
    }
    out.push_str("\t\t..........\n\n\n");
    out
}

/// Decode and lay out a `.text` of bundles.
fn instruction_lines(code: &[u64], opts: ListingOptions) -> String {
    let mut lines: Vec<Line> = Vec::with_capacity(code.len());
    for (b, bundle) in code.chunks(4).enumerate() {
        let ctrls = sm50::Bundle::split_ctrl(bundle[0]);
        for (slot, &word) in bundle.iter().skip(1).enumerate() {
            let addr = sm50::ctrl::inst_addr(3 * b + slot);
            let ctrl = ctrls[slot];
            let full = match sm50::decode(word) {
                Ok(inst) => sm50::print(&inst, addr, ctrl.reuse),
                Err(_) => format!("UNKNOWN 0x{word:016x}"),
            };
            let (guard, text) = split_guard(&full);
            lines.push(Line {
                addr,
                word,
                ctrl,
                guard: guard.to_string(),
                text: text.to_string(),
                dual_first: false,
                dual_second: false,
                padding: false,
            });
        }
    }
    for l in lines.iter_mut().rev() {
        if l.text != "NOP" {
            break;
        }
        l.padding = true;
    }
    for i in 0..lines.len() {
        let pairs = lines[i].ctrl.stall == 0 && lines[i].ctrl.yield_;
        if pairs && i + 1 < lines.len() && !lines[i].dual_second {
            lines[i].dual_first = true;
            lines[i + 1].dual_second = true;
        }
    }
    // Decoding the whole text (padding dropped) gives the same order as `lines`.
    let in_slice = match sm50::sched::check::decode_text(code) {
        Ok((insts, _, targets)) if opts.slice => sm50::slice::address_slice(&insts, &targets),
        _ => Vec::new(),
    };
    let ctrl_col = if opts.ctrl { 23 } else { 0 };
    let widest = lines.iter().map(|l| body(l).len()).max().unwrap_or(0);
    let column = 35 + ctrl_col + widest + 2;

    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        if i % 3 == 0 {
            let word = code[(i / 3) * 4];
            let _ = writeln!(out, "{:column$}/* 0x{word:016x} */", "");
        }
        let mark = if in_slice.get(i) == Some(&true) {
            '*'
        } else {
            ' '
        };
        let mut s = format!("      {mark} /*{:04x}*/", l.addr);
        if opts.ctrl {
            let _ = write!(s, " {}  ", l.ctrl.cuasm());
        }
        s.push_str(if l.dual_first {
            "         {"
        } else {
            "          "
        });
        let _ = write!(s, "{:>9}", l.guard);
        s.push_str(&body(l));
        if l.dual_second {
            s.push_str("         }");
            let _ = writeln!(out, "{s}");
            let _ = writeln!(out, "{:column$}/* 0x{:016x} */", "", l.word);
        } else {
            let _ = writeln!(out, "{s:column$}/* 0x{:016x} */", l.word);
        }
    }
    out
}

/// The instruction's text with its terminator: ` ;`, except `NOP;` for the padding after the
/// last instruction (cuobjdump's habit; a NOP inside the code prints `NOP ;`).
fn body(l: &Line) -> String {
    if l.dual_second {
        l.text.clone()
    } else if l.padding {
        "NOP;".to_string()
    } else {
        format!("{} ;", l.text)
    }
}

/// Split `@!P0 BRA 0x10` into (`@!P0 `, `BRA 0x10`).
fn split_guard(full: &str) -> (&str, &str) {
    if full.starts_with('@') {
        if let Some(sp) = full.find(' ') {
            return full.split_at(sp + 1);
        }
    }
    ("", full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_is_split_off() {
        assert_eq!(split_guard("@!P0 BRA 0x10"), ("@!P0 ", "BRA 0x10"));
        assert_eq!(split_guard("EXIT"), ("", "EXIT"));
    }
}
