//! The control family of the simulator: branches and the divergence stack (`BRA`, `SSY`/`PBK`,
//! `SYNC`, `BRK`, `CAL`/`RET`, `JCAL`, `EXIT`), barriers, no-ops, and the warp-wide `VOTE` and
//! `SHFL`.
//!
//! In: one decoded instruction, its address and the executing lanes of a warp. Out: the warp's
//! new pc, active mask and stack, or a [`SimError`].

use super::*;

impl Sim<'_> {
    /// The ctrl family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_ctrl(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            BRA => {
                let target = branch_target(addr, f(i, Field::Rel));
                self.prog.get(target, addr)?;
                let exec = cc_exec(w, i, addr, exec)?;
                if exec == w.active {
                    w.pc = target;
                } else if exec != 0 {
                    w.stack.push(Entry {
                        kind: Kind::Div,
                        pc: w.pc,
                        mask: w.active & !exec,
                    });
                    w.active = exec;
                    w.pc = target;
                }
            }
            SSY | PBK => {
                let target = branch_target(addr, f(i, Field::Rel));
                self.prog.get(target, addr)?;
                let kind = if i.form == SSY { Kind::Sync } else { Kind::Brk };
                w.stack.push(Entry {
                    kind,
                    pc: target,
                    mask: w.active,
                });
            }
            SYNC => {
                if exec != 0 {
                    if !w.stack.iter().any(|e| e.kind == Kind::Sync) {
                        return Err(SimError::Divergence {
                            addr,
                            what: "SYNC without a matching SSY".into(),
                        });
                    }
                    w.leave(exec);
                }
            }
            BRK => {
                let exec = cc_exec(w, i, addr, exec)?;
                if exec != 0 {
                    let Some(k) = w.stack.iter().rposition(|e| e.kind == Kind::Brk) else {
                        return Err(SimError::Divergence {
                            addr,
                            what: "BRK without a matching PBK".into(),
                        });
                    };
                    for e in &mut w.stack[k + 1..] {
                        e.mask &= !exec;
                    }
                    w.leave(exec);
                }
            }
            CAL => {
                // CAL has no guard: every active lane calls.
                let target = branch_target(addr, f(i, Field::Rel));
                self.prog.get(target, addr)?;
                w.stack.push(Entry {
                    kind: Kind::Call,
                    pc: w.pc,
                    mask: w.active,
                });
                w.pc = target;
            }
            RET => {
                if exec != 0 {
                    let Some(k) = w.stack.iter().rposition(|e| e.kind == Kind::Call) else {
                        return Err(SimError::Divergence {
                            addr,
                            what: "RET without a matching CAL".into(),
                        });
                    };
                    // Like BRK: the returning lanes leave every entry inside the call and
                    // wait at the call entry, which resumes them at the return address.
                    for e in &mut w.stack[k + 1..] {
                        e.mask &= !exec;
                    }
                    w.leave(exec);
                }
            }
            JCAL => {
                // A call of a system function (docs/calls.md): its arguments are in R4..R15
                // of each lane; the model's result words go to R4, R5, ..
                let Some((_, name)) = self.calls.iter().find(|c| c.0 == addr) else {
                    return Err(unsupported(addr, i, "a JCAL to no system function"));
                };
                for l in lanes(exec) {
                    let regs: Vec<u8> = (4..16u64).flat_map(|r| w.r(r, l).to_le_bytes()).collect();
                    let thread = w.index * 32 + l;
                    let ret = super::super::syscall::call(
                        name,
                        &regs,
                        &mut self.mem,
                        &mut self.sys,
                        thread,
                        self.ctaid,
                        addr,
                    )?;
                    for (k, c) in ret.chunks(4).enumerate() {
                        let mut b = [0u8; 4];
                        b[..c.len()].copy_from_slice(c);
                        w.set_r(4 + k as u64, l, u32::from_le_bytes(b));
                    }
                }
            }
            BRX => self.exec_brx(w, i, addr, exec)?,
            PRET => {
                // `PRET` pushes the return address of an indirect call (`BRX` to the callee
                // follows): a call entry, as `CAL`'s, without the jump.
                let target = branch_target(addr, f(i, Field::Rel));
                self.prog.get(target, addr)?;
                w.stack.push(Entry {
                    kind: Kind::Call,
                    pc: target,
                    mask: w.active,
                });
            }
            EXIT => {
                let exec = cc_exec(w, i, addr, exec)?;
                w.exited |= exec;
                for e in &mut w.stack {
                    e.mask &= !exec;
                }
                w.leave(exec);
            }
            _ => unreachable!("{:?} is not a ctrl form", i.form),
        }
        Ok(())
    }

    /// `BRX Ra rel`: an indirect branch (a `switch`'s jump table, or the jump of an indirect
    /// call after `PRET`) to `Ra` plus the address after the instruction plus `rel` (ptxas
    /// writes `rel` as minus that address, so `Ra` is the target's `.text` offset; a bundle
    /// base means its first instruction, as for `BRA`). Lanes with different targets
    /// diverge as a `BRA` does: each other target (and the fall-through of lanes the guard
    /// turns off) waits on the stack with its lanes, to run when the lanes before it leave.
    fn exec_brx(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let (ra, rel) = (f(i, Field::Ra), f(i, Field::Rel));
        // (target, lanes), in lane order of first appearance.
        let mut groups: Vec<(u64, u32)> = Vec::new();
        for l in lanes(exec) {
            // `branch_target`'s sum with `Ra` added before its bundle-base test.
            let raw = addr
                .wrapping_add(8)
                .wrapping_add(crate::sm50::rt::sext(rel, 24))
                .wrapping_add(u64::from(w.r(ra, l)));
            let target = if raw % 32 == 0 { raw + 8 } else { raw };
            self.prog.get(target, addr)?;
            match groups.iter_mut().find(|(t, _)| *t == target) {
                Some((_, m)) => *m |= 1 << l,
                None => groups.push((target, 1 << l)),
            }
        }
        let Some(&(first, lanes_first)) = groups.first() else {
            return Ok(());
        };
        let rest = w.active & !exec;
        if rest != 0 {
            w.stack.push(Entry {
                kind: Kind::Div,
                pc: w.pc,
                mask: rest,
            });
        }
        for &(target, mask) in groups[1..].iter().rev() {
            w.stack.push(Entry {
                kind: Kind::Div,
                pc: target,
                mask,
            });
        }
        w.active = lanes_first;
        w.pc = first;
        Ok(())
    }

    /// The warp family of [`Self::exec`]: the arms of its match for these forms. (One
    /// short arm per class: a long body means many classes, not long logic.)
    pub(super) fn exec_warp(
        &mut self,
        w: &mut Warp,
        i: &Inst,
        addr: u64,
        exec: u32,
    ) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            BAR | BAR_RED | BARR_RA | BARR_RB | BARR_RR | BARR_REDRA | BARR_REDRB | BARR_REDRR => {
                use crate::sm50::values::bar::{mode as bm, ro};
                // BAR.RED is told by its form (its mode field is a constant of the form).
                let red = matches!(i.form, BAR_RED | BARR_REDRA | BARR_REDRB | BARR_REDRR);
                let mode = f(i, Field::Mode);
                if red && f(i, Field::Ro) > ro::OR {
                    return Err(unsupported(addr, i, "this BAR.RED mode"));
                }
                if exec != 0 {
                    // sm_5x counts a barrier arrival per warp: a warp whose live lanes are
                    // not all here (some wait on the divergence stack, or the guard split
                    // them) arrives for all of them, which PTX leaves undefined (bar.sync in
                    // divergent code). Report it instead of picking one outcome.
                    if exec != w.active || w.active != !w.exited {
                        return Err(SimError::Divergence {
                            addr,
                            what: format!(
                                "{} in a diverged warp (lanes {:#010x} of live {:#010x})",
                                match (red, mode) {
                                    (true, _) => "BAR.RED",
                                    (false, bm::ARV) => "BAR.ARV",
                                    _ => "BAR.SYNC",
                                },
                                exec,
                                !w.exited
                            ),
                        });
                    }
                    // BAR.RED adds the lanes' predicate to the CTA's reduction, which
                    // B2R.RESULT reads once every warp has arrived.
                    if red {
                        let (bp, bpn) = (f(i, Field::Bp), flag(i, Field::Bpn));
                        for l in lanes(exec) {
                            let p = w.p(bp, l) != bpn;
                            self.red.count += u32::from(p);
                            self.red.all &= p;
                            self.red.any |= p;
                        }
                        self.red.mode = Some(f(i, Field::Ro));
                    }
                    // BAR.ARV counts the arrival and goes on: in this one-warp-at-a-time
                    // model nothing else is observable.
                    if mode != bm::ARV {
                        w.state = State::AtBarrier;
                    }
                }
            }
            // CCTL/CCTLL (prefetch): a cache hint, no memory change and no fault.
            NOP | DEPBAR | MEMBAR | CCTL | CCTL_L => {}
            // BPT has no guard: any live lane here stops the launch. Only the TRAP mode
            // (PTX `trap`) is modelled; the others are debugger breakpoints.
            BPT => {
                if f(i, Field::Mode) != crate::sm50::values::bpt::mode::TRAP {
                    return Err(unsupported(addr, i, "BPT other than BPT.TRAP"));
                }
                if exec != 0 {
                    return Err(SimError::Trap { addr });
                }
            }
            VOTE => {
                let (pa, pan, pd) = (f(i, Field::Pa), flag(i, Field::Pan), f(i, Field::Pd));
                let mut ballot = 0u32;
                for l in lanes(exec) {
                    if w.p(pa, l) != pan {
                        ballot |= 1 << l;
                    }
                }
                use crate::sm50::values::vote::mode;
                let v = match f(i, Field::Mode) {
                    mode::ALL => ballot == exec,
                    mode::ANY => ballot != 0,
                    _ => ballot == exec || ballot == 0,
                };
                let rd = f(i, Field::Rd);
                for l in lanes(exec) {
                    w.set_r(rd, l, ballot);
                    w.set_p(pd, l, v);
                }
            }
            SHFL_RI | SHFL_II | SHFL_RR | SHFL_IR => self.shfl(w, i, exec),
            // SAM: every lane of a quad with an active lane becomes active (exited lanes
            // too: they run as the quad's helpers, `lower::select::tex::quad`) until RAM
            // restores the saved mask. No nesting.
            SAM => {
                if w.sam.is_some() {
                    return Err(unsupported(addr, i, "SAM inside SAM"));
                }
                w.sam = Some(w.active);
                let mut m = 0u32;
                for q in 0..8 {
                    if w.active >> (4 * q) & 0xf != 0 {
                        m |= 0xf << (4 * q);
                    }
                }
                w.active = m;
            }
            RAM => match w.sam.take() {
                Some(m) => w.active = m,
                None => return Err(unsupported(addr, i, "RAM without SAM")),
            },
            _ => unreachable!("{:?} is not a warp form", i.form),
        }
        Ok(())
    }

    /// SHFL (the PTX `shfl` rule): b = lane or offset (5 bits), c = clamp (bits 0..4) and
    /// segment mask (bits 8..12). Every lane first computes its source lane j and whether it
    /// is in range (Pd); an out-of-range lane gets its own Ra. All reads happen before any
    /// write. A source lane that is not executing is read all the same (PTX leaves that value
    /// undefined).
    pub(super) fn shfl(&mut self, w: &mut Warp, i: &Inst, exec: u32) {
        let (rd, ra, pd) = (f(i, Field::Rd), f(i, Field::Ra), f(i, Field::Pd));
        let (b_reg, c_reg) = match i.form {
            Form::SHFL_RI => (Some(f(i, Field::Rb)), None),
            Form::SHFL_RR => (Some(f(i, Field::Rb)), Some(f(i, Field::Rc))),
            Form::SHFL_IR => (None, Some(f(i, Field::Rc))),
            _ => (None, None),
        };
        let mode = f(i, Field::Mode);
        let mut out = Vec::new();
        for l in lanes(exec) {
            let b = b_reg.map_or(f(i, Field::B) as u32, |r| w.r(r, l)) & 0x1f;
            let c = c_reg.map_or(f(i, Field::C) as u32, |r| w.r(r, l));
            let (clamp, mask) = (c & 0x1f, (c >> 8) & 0x1f);
            let lane = l as u32;
            let max_lane = (lane & mask) | (clamp & !mask);
            let min_lane = lane & mask;
            use crate::sm50::values::shfl::mode::{DOWN, IDX, UP};
            let (j, ok) = match mode {
                IDX => {
                    let j = min_lane | (b & !mask);
                    (j, j <= max_lane)
                }
                UP => (lane.wrapping_sub(b), lane >= b && lane - b >= max_lane),
                DOWN => (lane + b, lane + b <= max_lane),
                _ => (lane ^ b, (lane ^ b) <= max_lane),
            };
            let j = if ok { j } else { lane };
            out.push((l, w.r(ra, j as usize), ok));
        }
        for (l, v, ok) in out {
            w.set_r(rd, l, v);
            w.set_p(pd, l, ok);
        }
    }
}
