//! The listings of a laid-out kernel: `--sass` (`--emit sass`) and `--explain`, where each run
//! of instructions from one PTX line sits under that line's text, with each address chain's
//! expression after its first instruction.
//!
//! In: a laid-out kernel, its source lines and notes. Out: the listing texts.

use super::*;

/// The `--sass`/`--emit sass` listing and the `--explain` listing of the laid-out kernel;
/// returns each placed instruction's PTX line.
pub(super) fn listings(
    cx: &KernelCtx,
    laid: &Laid,
    shift: usize,
    srclocs: &[machinst::SrcLoc],
    notes: &[(usize, Box<str>)],
    out: &mut Output,
) -> Vec<Option<u32>> {
    let KernelCtx {
        file, opts, name, ..
    } = *cx;
    if opts.sass_listing || opts.emit == Emit::Sass {
        let _ = writeln!(out.sass, "\t\tFunction : {name}");
        laid.listing_to(&mut out.sass);
        out.sass.push('\n');
    }
    let placed_at = |k: usize| laid.moved.get(k + shift).copied();
    let mut src_lines = vec![None; laid.placed.len()];
    for (k, loc) in srclocs.iter().enumerate() {
        if let Some(l) = placed_at(k).and_then(|m| src_lines.get_mut(m)) {
            *l = loc.ptx_line();
        }
    }
    if opts.explain {
        let mut placed_notes: Vec<(usize, Box<str>)> = notes
            .iter()
            .filter_map(|(k, t)| placed_at(*k).map(|m| (m, t.clone())))
            .collect();
        placed_notes.sort_by_key(|n| n.0);
        explain_kernel(
            &mut out.explain,
            name,
            laid,
            &src_lines,
            &placed_notes,
            0,
            file,
        );
    }
    src_lines
}

/// Append kernel `name`'s `--explain` listing to `out`: each run of instructions from one PTX
/// line under a `// line N: <PTX text>` header (`// no PTX line` for the prologue, the
/// allocator's code and the tail), each chain's address expression after its first
/// instruction, the padding left out. `notes` index the emitted code, which sits at placed
/// index + `shift`.
pub(super) fn explain_kernel(
    out: &mut String,
    name: &str,
    laid: &Laid,
    src_lines: &[Option<u32>],
    notes: &[(usize, Box<str>)],
    shift: usize,
    file: &SourceFile,
) {
    let _ = writeln!(out, "\t\tFunction : {name}");
    let live = live_instructions(laid);
    let mut notes = notes.iter().peekable();
    let mut prev: Option<Option<u32>> = None;
    for (n, p) in laid.placed.iter().enumerate().take(live) {
        let line = src_lines.get(n).copied().flatten();
        if prev != Some(line) {
            match line {
                Some(l) => {
                    let text = file.line_text(l as usize).trim();
                    let _ = writeln!(out, "        // line {l}: {text}");
                }
                None => {
                    let _ = writeln!(out, "        // no PTX line");
                }
            }
            prev = Some(line);
        }
        let text = format!("{} ;", sm50::print(&p.inst, p.addr, p.ctrl.reuse));
        while notes.peek().is_some_and(|(k, _)| k + shift < n) {
            notes.next();
        }
        let note = match notes.peek() {
            Some((k, t)) if k + shift == n => {
                notes.next();
                format!("  // chain: {t}")
            }
            _ => String::new(),
        };
        let _ = writeln!(out, "        /*{:04x}*/    {text}{note}", p.addr);
    }
}
