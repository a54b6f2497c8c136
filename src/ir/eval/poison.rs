//! Values computed from undefined registers ("poison"), and the shared bytes they reach.
//!
//! PTX leaves a register that no definition reaches undefined; `ir::build` reads it as a
//! zero constant ([`Function::undef`]), which is one admissible value, but compiled code
//! reads whatever the physical register holds. CUB's radix-sort downsweep, for one, stores
//! such registers (the keys of out-of-range items) to shared memory: the reference writes
//! zeros, ptxas's code (or ours) whatever was there, and a byte-for-byte comparison of
//! shared memory reports a difference that is no miscompile.
//!
//! In: a thread about to execute one kernel instruction, with
//! [`Launch::undefined_registers`] on. Out: after the instruction, each result is marked
//! *poisoned* when the instruction is an undef constant or any operand is poisoned (a
//! `select`: its condition or the operand it picks; block arguments pass their mark to the parameters, [`Thread::poison_branch`]); a load from
//! shared memory is poisoned when any byte it reads is; a store to shared memory marks the
//! bytes of each value with that value's mark, so a defined store clears them; a shared
//! atomic's old value is poisoned as its bytes were, and its new bytes as the old value or
//! the operand were. [`RunOutput::shared_undefined`] is the shared marks at the end of each
//! CTA; `verify` does not compare those bytes.
//!
//! Deliberately narrow: control flow is not tracked (a branch on a poisoned value takes the
//! zero's path, as before), nor global and local memory (a poisoned value stored there is
//! compared as before), nor subroutines (their values are defined, a call's result takes
//! its operands' mark). So poison only ever hides bytes whose value came from an undefined
//! register through data flow; it never makes a run fail.

use super::*;

impl Thread {
    /// [`Thread::step`], tracking poison (see the module essay) when the launch asks.
    pub(super) fn step_tracked(
        &mut self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        steps: &mut u64,
    ) -> Result<Status, EvalError> {
        if self.poison.is_empty() || self.cur != 0 {
            return self.step(ctx, tm, steps);
        }
        let func = ctx.func;
        let inst = func.blocks[self.block].insts[self.pos];
        let node = &func.insts[inst];
        let poisoned = |v: &Value| self.poison[v.index()];
        let operands = node
            .data
            .operand_parts()
            .iter()
            .any(|p| p.iter().any(poisoned));
        let mut results = vec![operands || func.undef[inst]; node.results.len()];
        // Shared bytes this instruction marks: (first byte, marks).
        let mut marks: Option<(usize, Vec<bool>)> = None;
        let shared_at = |space: Space, addr: Value, offset: i32, size: u32| {
            let ea = effective_address(space, self.get(addr), offset);
            match resolve(inst, space, ea, size) {
                Ok((Space::Shared, base)) => usize::try_from(base)
                    .ok()
                    .filter(|&b| b + size as usize <= tm.shared_poison.len()),
                _ => None,
            }
        };
        match &node.data {
            // Only the operand chosen matters (and the condition).
            InstData::Select { cond, args } => {
                let chosen = if self.get(*cond) != 0 {
                    args[0]
                } else {
                    args[1]
                };
                results.fill(func.undef[inst] || poisoned(cond) || poisoned(&chosen));
            }
            InstData::Load {
                space,
                ty,
                width,
                addr,
                offset,
                ..
            } => {
                let elem = ty.bytes().unwrap_or(1) as usize;
                let total = (elem * usize::from(*width)) as u32;
                if let Some(base) = shared_at(*space, *addr, *offset, total) {
                    for (i, p) in results.iter_mut().enumerate() {
                        let at = base + i * elem;
                        *p = poisoned(addr) || tm.shared_poison[at..at + elem].contains(&true);
                    }
                }
            }
            InstData::Store {
                space,
                ty,
                addr,
                offset,
                values,
                ..
            } => {
                let elem = ty.bytes().unwrap_or(1) as usize;
                let total = (elem * values.len()) as u32;
                if let Some(base) = shared_at(*space, *addr, *offset, total) {
                    let m = values
                        .iter()
                        .flat_map(|v| std::iter::repeat(poisoned(v)).take(elem))
                        .collect();
                    marks = Some((base, m));
                }
            }
            InstData::Atomic {
                space,
                ty,
                addr,
                offset,
                args,
                ..
            } => {
                let size = ty.bytes().unwrap_or(4);
                if let Some(base) = shared_at(*space, *addr, *offset, size) {
                    let old = tm.shared_poison[base..base + size as usize].contains(&true);
                    results.iter_mut().for_each(|p| *p = old);
                    let new = old || args.iter().any(poisoned);
                    marks = Some((base, vec![new; size as usize]));
                }
            }
            _ => {}
        }
        let status = self.step(ctx, tm, steps)?;
        for (r, p) in node.results.iter().zip(results) {
            self.poison[r.index()] = p;
        }
        if let Some((base, m)) = marks {
            tm.shared_poison[base..base + m.len()].copy_from_slice(&m);
        }
        Ok(status)
    }

    /// Pass the marks of a branch's arguments to `block`'s parameters (kernel only).
    pub(super) fn poison_branch(&mut self, func: &Function, block: Block, args: &[Value]) {
        if self.poison.is_empty() || self.cur != 0 {
            return;
        }
        let marks: Vec<bool> = args.iter().map(|a| self.poison[a.index()]).collect();
        for (&p, m) in func.blocks[block].params.iter().zip(marks) {
            self.poison[p.index()] = m;
        }
    }
}
