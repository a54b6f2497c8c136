//! Stable text forms of [`VCode`] (`--emit vcode`) and [`Allocated`] (`--emit alloc`).
//!
//! One block per paragraph: `b3(%v4, %d5):` then one instruction per line, indented, in the
//! ISA's own `Display`; a block's successors with their arguments follow its terminator as a
//! `; -> b4(%v7), b5()` comment. The allocated form starts with a header line giving the
//! register count and spill frame, so snapshots catch changes in either.

use super::{Allocated, MachInst, VCode};
use std::fmt;

impl<I: MachInst> fmt::Display for VCode<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in 0..self.ranges.len() {
            let params: Vec<String> = self.params[b].iter().map(|p| p.to_string()).collect();
            writeln!(f, "b{b}({}):", params.join(", "))?;
            let (s, e) = self.ranges[b];
            for inst in &self.insts[s as usize..e as usize] {
                writeln!(f, "    {inst}")?;
            }
            if !self.succs[b].is_empty() {
                let succs: Vec<String> = self.succs[b]
                    .iter()
                    .map(|(t, args)| {
                        let a: Vec<String> = args.iter().map(|v| v.to_string()).collect();
                        format!("{t}({})", a.join(", "))
                    })
                    .collect();
                writeln!(f, "    ; -> {}", succs.join(", "))?;
            }
        }
        Ok(())
    }
}

impl<I: MachInst> fmt::Display for Allocated<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "; {} registers, {} bytes spill frame ({} spills, {} reloads, {} predicate spills)",
            self.num_regs, self.spill_bytes, self.spills, self.reloads, self.pred_spills
        )?;
        for b in &self.blocks {
            writeln!(f, "{}:", b.id)?;
            for inst in &b.insts {
                writeln!(f, "    {inst}")?;
            }
        }
        Ok(())
    }
}
