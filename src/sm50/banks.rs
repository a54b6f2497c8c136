//! Register-bank conflicts: a cheap post-allocation renaming that avoids many of them.
//!
//! In: a function's allocated SM50 instructions (after `lower::emit_all`, before scheduling)
//! and its register count. Out: the same instructions with some registers renamed, so that
//! fewer instructions read two registers from one bank; [`count_conflicts`] counts them.
//!
//! Maxwell keeps a thread's registers in four banks, `R % 4`; an instruction whose source
//! registers come from one bank twice reads them one after the other (ptxas's allocator
//! avoids it: over the corpus far fewer of its instructions have such a pair than of ours
//! had before this pass). regalloc2 knows nothing of banks, so this pass works after it, with a
//! renaming that cannot break anything the allocator guaranteed: it rotates the registers of
//! an aligned quad `R4j..R4j+3` (`R4j+i -> R4j+(i+k)%4`). That is a bijection on registers
//! which changes nothing between registers of one quad (they are in four different banks
//! whatever `k`) and moves each to another bank. A quad that holds a 64-bit value (an
//! even-aligned pair) may only rotate by 0 or 2 (the halves swapped), which keeps pairs
//! pairs; other quads by any `k`. So the choice is one rotation per quad, scored by the
//! same-bank pairs of registers from different quads among each instruction's sources; a
//! greedy local search (per quad, in index order, the allowed rotation with the fewest such
//! pairs given the others, to a fixpoint or 8 passes) answers it well enough.
//!
//! Invariants: a quad is never rotated when it holds `R1` (the stack pointer the prologue and
//! every `.local` access use), or `R4..R15` in code with a `JCAL` (the call ABI's argument
//! and result registers), when any operand wider than a pair touches it (a 128-bit value
//! must stay in order), or when it is not wholly below the register count (the count stays
//! what the allocator wrote). Renaming every register field of every instruction with one
//! bijection keeps all dependencies, so the scheduler, the hazard checker and the semantics
//! see the same program; only bank reads change. Reuse flags are set later by the scheduler,
//! so the count here ignores them.

use super::{FieldKind, Inst, Operand};

/// Source registers (wide operands expanded, `RZ` left out) of `inst`, without repeats.
fn sources(inst: &Inst) -> smallvec::SmallVec<[u32; 8]> {
    let mut regs: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
    inst.operands(|o| {
        if let Operand::Reg {
            reg,
            width,
            def: false,
        } = o
        {
            if reg == 255 {
                return;
            }
            for r in u32::from(reg)..(u32::from(reg) + u32::from(width)).min(255) {
                if !regs.contains(&r) {
                    regs.push(r);
                }
            }
        }
    });
    regs
}

/// Instructions that read two distinct source registers from one bank.
pub fn count_conflicts(insts: &[Inst]) -> usize {
    insts
        .iter()
        .filter(|i| {
            let regs = sources(i);
            let mut banks = [0u8; 4];
            for r in &regs {
                banks[(r % 4) as usize] += 1;
            }
            banks.iter().any(|&n| n >= 2)
        })
        .count()
}

/// Rotate registers within quads (see the module essay) where that lowers the number of
/// same-bank source pairs; `num_regs` is the function's register count. Returns how many
/// quads were rotated.
pub fn avoid_conflicts(insts: &mut [Inst], num_regs: u32) -> usize {
    let quads = (num_regs / 4) as usize;
    if quads < 2 {
        return 0;
    }
    // Allowed rotations per quad: all four when only 32-bit operands touch it, 0 and 2 (the
    // halves swapped) when a pair does, none for quad 0 (R1) or under a wider operand.
    let mut step = vec![1u32; quads];
    step[0] = 4;
    // A call of a system function (`JCAL`, docs/calls.md) passes its arguments and results
    // in R4..R15 by the ABI, which a rotation would move: those quads stay. (The ABI's
    // callee-saved and scratch sets above R15 are whole quads, which rotations keep.)
    if insts.iter().any(|i| i.form == super::Form::JCAL) {
        for s in step.iter_mut().take(4) {
            *s = 4;
        }
    }
    // Per quad: (other quad, offset in this quad, offset in the other) of each source pair.
    let mut edges: Vec<Vec<(usize, u32, u32)>> = vec![Vec::new(); quads];
    // One visit of each instruction's operands gives both its wide operands (for `step`)
    // and its sources (as [`sources`] gathers them; two visits were a visible cost).
    let mut regs: smallvec::SmallVec<[u32; 8]> = smallvec::SmallVec::new();
    for inst in insts.iter() {
        regs.clear();
        inst.operands(|o| {
            if let Operand::Reg { reg, width, def } = o {
                if reg == 255 {
                    return;
                }
                if width >= 2 {
                    let first = usize::from(reg) / 4;
                    let last = (usize::from(reg) + usize::from(width) - 1) / 4;
                    let need = if width > 2 { 4 } else { 2 };
                    for s in step.iter_mut().take(last + 1).skip(first) {
                        *s = (*s).max(need);
                    }
                }
                if !def {
                    for r in u32::from(reg)..(u32::from(reg) + u32::from(width)).min(255) {
                        if !regs.contains(&r) {
                            regs.push(r);
                        }
                    }
                }
            }
        });
        debug_assert_eq!(regs, sources(inst));
        for (k, &a) in regs.iter().enumerate() {
            for &b in &regs[k + 1..] {
                let (qa, qb) = ((a / 4) as usize, (b / 4) as usize);
                if qa == qb || qa >= quads || qb >= quads {
                    continue;
                }
                edges[qa].push((qb, a % 4, b % 4));
                edges[qb].push((qa, b % 4, a % 4));
            }
        }
    }
    let mut rot = vec![0u32; quads];
    let conflicts_of = |q: usize, r: u32, rot: &[u32]| -> usize {
        edges[q]
            .iter()
            .filter(|&&(o, x, y)| (x + r) % 4 == (y + rot[o]) % 4)
            .count()
    };
    for _ in 0..8 {
        let mut changed = false;
        for q in 0..quads {
            if step[q] == 4 {
                continue;
            }
            let mut best = (conflicts_of(q, rot[q], &rot), rot[q]);
            for r in (0..4).step_by(step[q] as usize) {
                let c = conflicts_of(q, r, &rot);
                if c < best.0 {
                    best = (c, r);
                }
            }
            if best.1 != rot[q] {
                rot[q] = best.1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let rotated = rot.iter().filter(|&&r| r != 0).count();
    if rotated == 0 {
        return 0;
    }
    for inst in insts.iter_mut() {
        let fields = inst.info().fields;
        for (k, f) in fields.iter().enumerate() {
            if matches!(f.kind, FieldKind::Reg) {
                let r = inst.f[k];
                let q = (r / 4) as usize;
                if r != 255 && q < quads && rot[q] != 0 {
                    inst.f[k] = (r & !3) | ((r + rot[q]) & 3);
                }
            }
        }
    }
    rotated
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm50::{Field, Form};

    fn iadd3(d: u64, a: u64, b: u64, c: u64) -> Inst {
        Inst::new(Form::IADD3_R)
            .with(Field::Rd, d)
            .with(Field::Ra, a)
            .with(Field::Rb, b)
            .with(Field::Rc, c)
    }

    /// `IADD3 R8, R4, R8, R12` reads bank 0 three times; rotating quads 1 and 3 removes the
    /// pairs; the pass must not touch quad 0 (R1) and must rename consistently.
    #[test]
    fn rotations_remove_conflicts_and_rename_every_field() {
        let mut code = vec![iadd3(8, 4, 8, 12), iadd3(13, 5, 9, 13), iadd3(0, 0, 4, 8)];
        let before = count_conflicts(&code);
        assert_eq!(before, 3);
        let flipped = avoid_conflicts(&mut code, 16);
        assert!(flipped > 0);
        let after = count_conflicts(&code);
        assert_eq!(after, 0, "{before} -> {after}: {code:?}");
        // Quad 0 is fixed: R0 stays R0.
        assert_eq!(code[2].get(Field::Rd), Some(0));
        assert_eq!(code[2].get(Field::Ra), Some(0));
        // One bijection: the register the first instruction writes is the one the third reads.
        assert_eq!(code[0].get(Field::Rd), code[2].get(Field::Rc));
    }

    /// Quads at or past the register count, and quads a 128-bit operand touches, stay.
    #[test]
    fn fixed_quads_stay() {
        let mut code = vec![iadd3(8, 4, 8, 12)];
        assert_eq!(
            avoid_conflicts(&mut code, 8),
            0,
            "quad 1 alone, quad 0 fixed"
        );
        let wide = Inst::new(Form::STG)
            .with(Field::Ra, 2)
            .with(Field::Rd, 4)
            .with(Field::Size, 6);
        let mut code = vec![iadd3(8, 4, 8, 12), wide];
        let mut seen = Vec::new();
        code[1].operands(|o| seen.push(o));
        assert!(
            seen.iter().any(|o| matches!(
                o,
                Operand::Reg {
                    reg: 4,
                    width: 4,
                    ..
                }
            )),
            "{seen:?}"
        );
        avoid_conflicts(&mut code, 16);
        assert_eq!(
            code[0].get(Field::Ra),
            Some(4),
            "quad 1 holds a 128-bit value"
        );
    }
}
