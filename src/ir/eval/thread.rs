//! One thread of the reference interpreter: [`Thread::step`] executes one IR instruction (its
//! operands are the thread's values; memory goes through [`ThreadMem`]), plus surfaces,
//! branches to a block with arguments, and special registers.
//!
//! In: the thread's position and values, the CTA context. Out: the thread's next status
//! ([`Status`]) or an [`EvalError`].

use super::*;

impl Thread {
    pub(super) fn get(&self, v: Value) -> u64 {
        self.regs[v.index()]
    }

    pub(super) fn set(&mut self, v: Value, x: u64, ty: Type) {
        self.regs[v.index()] = x & ty.mask();
    }

    /// Call subroutine `cur` (see "Execution") with the argument bytes `args`, from the call
    /// instruction `inst` at the current position.
    pub(super) fn enter(
        &mut self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        inst: Inst,
        cur: usize,
        args: Vec<u8>,
    ) -> Result<Status, EvalError> {
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(EvalError::CallDepth {
                inst,
                limit: MAX_CALL_DEPTH,
            });
        }
        let callee = &ctx.subroutines[cur - 1];
        let sp = tm.stack.sp;
        let mut frame_base = self.frame_base;
        let locals = &ctx.sub_locals[cur - 1];
        if locals.size > 0 {
            // The callee's `.local` frame, below what the stack holds now.
            let depth = (DynStack::depth(sp) + u64::from(locals.size))
                .next_multiple_of(u64::from(locals.align));
            frame_base = DynStack::sp_at(depth);
            let what = format!("the .local frame of a call of '{}'", callee.name);
            tm.stack.set_sp(inst, frame_base, depth, &what)?;
        }
        let regs = std::mem::replace(&mut self.regs, vec![0; callee.values.len()]);
        self.frames.push(CallFrame {
            cur: self.cur,
            block: self.block,
            pos: self.pos,
            regs,
            args: std::mem::replace(&mut self.args, args),
            frame_base: std::mem::replace(&mut self.frame_base, frame_base),
            sp,
        });
        self.cur = cur;
        self.block = callee.layout[0];
        self.pos = 0;
        Ok(Status::Running)
    }

    /// Return from the running subroutine with its result words, past the caller's call.
    pub(super) fn leave(
        &mut self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        inst: Inst,
        words: &[u64],
    ) -> Result<Status, EvalError> {
        let Some(frame) = self.frames.pop() else {
            return Err(EvalError::Unmodelled {
                inst,
                why: "a subroutine return with no caller".into(),
            });
        };
        self.cur = frame.cur;
        self.block = frame.block;
        self.pos = frame.pos;
        self.regs = frame.regs;
        self.args = frame.args;
        self.frame_base = frame.frame_base;
        tm.stack.sp = frame.sp;
        let func = match self.cur {
            0 => ctx.func,
            k => &ctx.subroutines[k - 1],
        };
        let call = func.blocks[self.block].insts[self.pos];
        // (A result of more than 8 bytes is one i32 result per word.)
        for (&r, &w) in func.insts[call].results.iter().zip(words) {
            self.set(r, w, func.values[r].ty);
        }
        self.pos += 1;
        Ok(Status::Running)
    }

    /// Execute one instruction.
    // Long by design: one arm per IR instruction kind, each the PTX meaning of that kind; a
    // dispatch, split further only by moving arms away from their neighbours.
    pub(super) fn step(
        &mut self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        steps: &mut u64,
    ) -> Result<Status, EvalError> {
        let func = match self.cur {
            0 => ctx.func,
            k => &ctx.subroutines[k - 1],
        };
        // Verified: every block ends with a terminator, so `pos` stays in range.
        let inst = func.blocks[self.block].insts[self.pos];
        *steps += 1;
        if *steps > ctx.launch.step_limit {
            return Err(EvalError::StepLimit {
                inst,
                limit: ctx.launch.step_limit,
            });
        }
        let node = &func.insts[inst];
        let ty_of = |v: Value| func.values[v].ty;
        let result = node.results.first().copied();
        let mut out: Option<u64> = None;
        if self.cur != 0 && warp_wide(&node.data) {
            return Err(EvalError::Unmodelled {
                inst,
                why: "a warp vote, shuffle or bar.red inside a subroutine is not modelled".into(),
            });
        }
        match &node.data {
            InstData::Iconst { imm, .. } => out = Some(*imm),
            InstData::Fconst { bits, .. } => out = Some(*bits),
            InstData::LoadParam { ty, offset } => {
                let size = ty.bytes().unwrap_or(1);
                let addr = u64::from(*offset);
                let params = if self.cur == 0 { tm.params } else { &self.args };
                out = Some(read(inst, Space::Param, params, addr, size)?);
            }
            InstData::SpecialReg {
                reg: reg @ (SpecialReg::Pm(_) | SpecialReg::Pm64(_)),
            } => {
                let _ = reg;
                let what = "a performance-monitor counter (%pm)";
                return Err(EvalError::Unknowable { inst, what });
            }
            InstData::SpecialReg { reg } if reg.is_timer() => {
                // The clock model (module essay, "Clocks and timers").
                let timer = !matches!(reg, SpecialReg::Clock | SpecialReg::Clock64);
                let n = self.timer_reads[usize::from(timer)];
                let (lo, hi) = timer_value(timer, n);
                if !matches!(reg, SpecialReg::GlobalTimerHi) {
                    self.timer_reads[usize::from(timer)] += 1;
                }
                out = Some(match reg {
                    SpecialReg::Clock | SpecialReg::GlobalTimerLo => u64::from(lo),
                    SpecialReg::GlobalTimerHi => u64::from(hi),
                    _ => u64::from(hi) << 32 | u64::from(lo),
                });
            }
            InstData::SpecialReg { reg } => out = Some(self.special(ctx, *reg)),
            // An opaque descriptor: only the device runtime reads it, and calls into the
            // runtime are not modelled (`crate::sysfn`); any value does.
            InstData::KernelDesc { entry, .. } => out = Some(KERNEL_DESC_BASE + u64::from(*entry)),
            InstData::SymbolAddr { var, .. } => {
                // Verified against the module, so the variable exists. A subroutine's own
                // `.local` variables lie in its activation's frame.
                let own = match self.cur {
                    0 => None,
                    k => ctx.sub_locals[k - 1].offsets.get(var),
                };
                out = Some(match own {
                    Some(&off) => tm.stack.value(self.frame_base.wrapping_add(off)),
                    None if ctx.layout.local[var.index()] => {
                        tm.stack.value(ctx.layout.addrs[var.index()] as u32)
                    }
                    None => ctx.layout.addrs[var.index()],
                });
            }
            InstData::Unary { .. }
            | InstData::Binary { .. }
            | InstData::MulWide { .. }
            | InstData::Convert { .. }
            | InstData::Select { .. }
            | InstData::Icmp { .. } => out = pure(&node.data, ty_of, |v| self.get(v)),
            InstData::Load {
                space,
                ty,
                width,
                addr,
                offset,
                cache,
            } => {
                let elem = ty.bytes().unwrap_or(1);
                let ea = effective_address(*space, self.get(*addr), *offset);
                let total = elem * u32::from(*width);
                let (sp, base) = resolve(inst, *space, ea, total)?;
                tm.note(
                    inst,
                    sp,
                    base,
                    total,
                    self.linear,
                    strong(*cache, sp, Access::Read),
                )?;
                for (i, &r) in node.results.iter().enumerate() {
                    let a = base.wrapping_add(u64::from(elem) * i as u64);
                    let x = tm.read(inst, sp, a, elem)?;
                    self.set(r, x, *ty);
                }
            }
            InstData::Store {
                space,
                ty,
                addr,
                offset,
                values,
                cache,
            } => {
                let elem = ty.bytes().unwrap_or(1);
                let ea = effective_address(*space, self.get(*addr), *offset);
                let total = elem * values.len() as u32;
                let (sp, base) = resolve(inst, *space, ea, total)?;
                // Check the whole access before writing any of it.
                tm.check(inst, sp, base, total)?;
                tm.note(
                    inst,
                    sp,
                    base,
                    total,
                    self.linear,
                    strong(*cache, sp, Access::Write),
                )?;
                for (i, &v) in values.iter().enumerate() {
                    let a = base.wrapping_add(u64::from(elem) * i as u64);
                    tm.write(inst, sp, a, elem, self.get(v))?;
                }
            }
            InstData::Cvta {
                dir, space, arg, ..
            } => {
                let base = match space {
                    Space::Shared => SHARED_WINDOW_BASE,
                    Space::Local => LOCAL_WINDOW_BASE,
                    Space::Const => CONST_WINDOW_BASE,
                    // Global addresses are generic addresses already.
                    _ => 0,
                };
                let a = self.get(*arg);
                // Converting an address that is outside the window is undefined in PTX; the
                // subtraction just gives some value, which a later access will reject.
                out = Some(match dir {
                    CvtaDir::ToGeneric => a.wrapping_add(base),
                    CvtaDir::FromGeneric => a.wrapping_sub(base),
                });
            }
            InstData::Jump { dest } => {
                self.branch(func, dest.block, &dest.args);
                return Ok(Status::Running);
            }
            InstData::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                let dest = if self.get(*cond) != 0 {
                    then_dest
                } else {
                    else_dest
                };
                self.branch(func, dest.block, &dest.args);
                return Ok(Status::Running);
            }
            InstData::Float { op, args } => {
                let a: SmallVec<[u64; 3]> = args.iter().map(|&v| self.get(v)).collect();
                out = Some(op.eval(&a));
            }
            InstData::Return => return Ok(Status::Exited),
            InstData::SubReturn { values } => {
                let words: SmallVec<[u64; 2]> = values.iter().map(|&v| self.get(v)).collect();
                return self.leave(ctx, tm, inst, &words);
            }
            InstData::Trap => return Err(EvalError::Trapped { inst }),
            // A barrier number must be below 16 and a count a non-zero multiple of 32 (PTX
            // leaves anything else undefined); then as the immediate forms.
            InstData::BarrierReg {
                red,
                wait,
                id,
                count_reg,
                args,
                ..
            } => {
                let mut rest = args.iter();
                if id.is_none() {
                    let v = self.get(*rest.next().expect("verified")) as u32;
                    if v > 15 {
                        return Err(EvalError::Undefined {
                            inst,
                            why: format!("barrier number {v} is not in 0..15"),
                        });
                    }
                }
                if *count_reg {
                    let c = self.get(*rest.next().expect("verified")) as u32;
                    if c == 0 || c % 32 != 0 {
                        return Err(EvalError::Undefined {
                            inst,
                            why: format!(
                                "barrier thread count {c} is not a non-zero multiple of 32"
                            ),
                        });
                    }
                }
                if *wait || red.is_some() {
                    self.pos += 1;
                    return Ok(Status::AtBarrier(inst));
                }
            }
            // A cache hint: no memory, no value, and no fault even out of bounds.
            InstData::Prefetch { .. } => {}
            InstData::Stack { op, arg } => {
                let sp = tm.stack.sp;
                let arg = arg.map(|a| self.get(a));
                match op {
                    StackOp::Alloca { align } => {
                        // Bytes below the frame base: offsets are 32-bit, and 2^32 is a
                        // multiple of the alignment, so rounding the pointer down rounds this up.
                        let size = arg.unwrap_or(0) & 0xffff_ffff;
                        let depth = (DynStack::depth(sp) + size).div_ceil(u64::from(*align))
                            * u64::from(*align);
                        let new = DynStack::sp_at(depth);
                        tm.stack.set_sp(inst, new, depth, "alloca")?;
                        out = Some(tm.stack.value(new));
                    }
                    StackOp::Save => out = Some(tm.stack.value(sp)),
                    StackOp::Restore => {
                        let to = tm.stack.offset(arg.unwrap_or(0));
                        // A value stacksave gave: at or above the stack pointer's lowest point.
                        let back = u32::try_from(to)
                            .ok()
                            .filter(|&t| DynStack::depth(t) <= tm.stack.bytes.len() as u64);
                        let Some(back) = back else {
                            return Err(EvalError::Undefined {
                                inst,
                                why: format!(
                                    "stackrestore to 0x{to:x}, which no stacksave of this thread gave"
                                ),
                            });
                        };
                        tm.stack
                            .set_sp(inst, back, DynStack::depth(back), "stackrestore")?;
                    }
                }
            }
            InstData::Barrier
            | InstData::NamedBarrier { wait: true, .. }
            | InstData::BarrierRed { .. } => {
                self.pos += 1;
                return Ok(Status::AtBarrier(inst));
            }
            // Arriving does not wait; threads run one at a time here, so every access is
            // already ordered and a fence has nothing to do but mark the thread, whose
            // global atomics then release for race detection ([`GlobalShadow`]).
            // `bar.warp.sync`: the warp's lanes meet here, as at a vote ([`resolve_votes`]).
            InstData::MemBar {
                scope: MemScope::Warp,
            } => return Ok(Status::AtVote),
            InstData::MemBar {
                scope: MemScope::Yield,
            } => {
                self.pos += 1;
                return Ok(Status::Yielded);
            }
            InstData::NamedBarrier { wait: false, .. } | InstData::MemBar { .. } => {
                if let InstData::MemBar { .. } = node.data {
                    self.fenced_shared = true;
                }
                if let InstData::MemBar {
                    scope: MemScope::Gl | MemScope::Sys,
                } = node.data
                {
                    self.fenced = true;
                }
            }
            InstData::Bits { .. } => out = pure(&node.data, ty_of, |v| self.get(v)),
            InstData::Texture { op, handle, args } => {
                // The texture model (`crate::texture`) through the launch's bindings.
                let vals: SmallVec<[u64; 4]> = args.iter().map(|&a| self.get(a)).collect();
                let words = super::super::tex::eval(
                    *op,
                    *handle,
                    &vals,
                    ctx.texrefs,
                    ctx.samplerrefs,
                    &ctx.launch.textures,
                )
                .map_err(EvalError::BadLaunch)?;
                for (k, &r) in node.results.iter().enumerate() {
                    self.set(r, u64::from(words[k]), Type::I32);
                }
            }
            InstData::ExternCall {
                callee,
                args,
                arg_regs,
            } => {
                // The argument registers' words, R4 first (docs/calls.md), for the model.
                let mut words: Vec<(u8, u32)> = Vec::new();
                for (&a, &r) in args.iter().zip(arg_regs) {
                    let x = self.get(a);
                    words.push((r, x as u32));
                    if ty_of(a) == Type::I64 {
                        words.push((r + 1, (x >> 32) as u32));
                    }
                }
                let name = ctx
                    .extern_funcs
                    .get(*callee as usize)
                    .map_or("?", String::as_str);
                if let Some(k) = ctx.subroutines.iter().position(|f| f.name == name) {
                    let bytes = crate::sysfn::register_bytes(&words);
                    return self.enter(ctx, tm, inst, k + 1, bytes);
                }
                let ret = self.system_call(ctx, tm, inst, name, &words)?;
                if let Some(&r) = node.results.first() {
                    let mut w = [0u8; 8];
                    for (j, b) in w.iter_mut().enumerate() {
                        *b = ret.get(j).copied().unwrap_or(0);
                    }
                    self.set(r, u64::from_le_bytes(w), ty_of(r));
                }
            }
            // Stop here, unexecuted: `run_cta` resolves the vote for the whole warp.
            InstData::Vote { .. } | InstData::Shfl { .. } | InstData::Collective { .. } => {
                return Ok(Status::AtVote)
            }
            InstData::Surface { access, args } => {
                self.surface(ctx, tm, inst, access, args)?;
            }
            InstData::Atomic {
                op,
                space,
                ty,
                addr,
                offset,
                args,
            } => {
                // One whole read-modify-write, in this thread's turn (see `ir::atomic`).
                let size = ty.bytes().unwrap_or(4);
                let ea = effective_address(*space, self.get(*addr), *offset);
                let (sp, a) = resolve(inst, *space, ea, size)?;
                if sp == Space::Global {
                    tm.mem.global_races.atomic(a, self.fenced);
                } else if sp == Space::Shared {
                    tm.races.atomic(a, self.linear, self.fenced_shared);
                }
                tm.note(inst, sp, a, size, self.linear, Access::Atomic)?;
                let old = tm.read(inst, sp, a, size)?;
                let b = args.first().map_or(0, |&v| self.get(v));
                let c = args.get(1).map_or(0, |&v| self.get(v));
                // An atomic read (a CAS loop's first) leaves the word as it is.
                if *op != AtomOp::Load {
                    tm.write(inst, sp, a, size, op.apply(ty.bits(), old, b, c))?;
                }
                out = Some(old);
            }
        }
        if let (Some(r), Some(x)) = (result, out) {
            self.set(r, x, ty_of(r));
        }
        self.pos += 1;
        Ok(Status::Running)
    }

    /// A surface access ([`crate::surface`]): through [`crate::surface::locate`] to global
    /// memory, read, written or reduced as a load, a store or an atomic of its size.
    pub(super) fn surface(
        &mut self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        inst: Inst,
        access: &crate::surface::SurfAccess,
        args: &[Value],
    ) -> Result<(), EvalError> {
        use crate::surface::{self, SurfError, SurfHandle, SurfOp};
        let h = access.handle_operands();
        let n = access.coord_operands();
        let undefined = |why: String| EvalError::Undefined { inst, why };
        let desc = match access.handle {
            SurfHandle::Bound(i) => {
                let k = ctx.surf_index.get(i as usize).copied().flatten();
                k.map(|k| &ctx.launch.surfaces[k]).ok_or_else(|| {
                    undefined("the launch binds no surface to this .surfref".to_string())
                })?
            }
            SurfHandle::Bindless => surface::by_handle(&ctx.launch.surfaces, self.get(args[0]))
                .map_err(|e| undefined(e.to_string()))?,
        };
        if let SurfOp::Query(q) = access.op {
            let r = ctx.func.insts[inst].results[0];
            self.set(r, u64::from(desc.query(q)), access.ty);
            return Ok(());
        }
        if matches!(access.op, SurfOp::RedFormatted(_)) && desc.formatted_red_signed().is_none() {
            return Err(undefined(format!(
                "sured.p on a surface of format {:?}: the model covers one 32-bit integer channel only",
                desc.format
            )));
        }
        let mut coords: Vec<i32> = args[h..h + n].iter().map(|&v| self.get(v) as i32).collect();
        let mut size = access.size();
        if matches!(access.op, SurfOp::StoreFormatted | SurfOp::RedFormatted(_)) {
            // x counts elements of the surface's format.
            size = desc.format.elem_bytes();
            coords[0] = coords[0].wrapping_mul(size as i32);
        }
        let at = match surface::locate(desc, access.shape, access.clamp, &coords, size) {
            Ok(a) => a,
            Err(SurfError::Trap) => return Err(EvalError::Trapped { inst }),
            Err(e) => return Err(undefined(e.to_string())),
        };
        let elem = access.ty.bits() / 8;
        let node_results = ctx.func.insts[inst].results.clone();
        match access.op {
            SurfOp::Load => {
                if let Some(a) = at {
                    tm.note(inst, Space::Global, a, size, self.linear, Access::Read)?;
                }
                for (i, &r) in node_results.iter().enumerate() {
                    let x = match at {
                        Some(a) => {
                            tm.read(inst, Space::Global, a + u64::from(elem) * i as u64, elem)?
                        }
                        None => 0,
                    };
                    self.set(r, x, access.ty);
                }
            }
            SurfOp::Store => {
                if let Some(a) = at {
                    tm.check(inst, Space::Global, a, size)?;
                    tm.note(inst, Space::Global, a, size, self.linear, Access::Write)?;
                    for (i, &v) in args[h + n..].iter().enumerate() {
                        let x = self.get(v);
                        tm.write(inst, Space::Global, a + u64::from(elem) * i as u64, elem, x)?;
                    }
                }
            }
            SurfOp::StoreFormatted => {
                let data: Vec<u32> = args[h + n..].iter().map(|&v| self.get(v) as u32).collect();
                let (bytes, full) = desc.format.encode(&data);
                if !full {
                    return Err(undefined(format!(
                        "sust.p writes {} values to a surface of {} channels: the others are unpredictable",
                        data.len(),
                        desc.format.channels
                    )));
                }
                if let Some(a) = at {
                    tm.check(inst, Space::Global, a, size)?;
                    tm.note(inst, Space::Global, a, size, self.linear, Access::Write)?;
                    for (i, &b) in bytes.iter().enumerate() {
                        tm.write(inst, Space::Global, a + i as u64, 1, u64::from(b))?;
                    }
                }
            }
            SurfOp::Query(_) => {}
            SurfOp::RedFormatted(op) => {
                let signed = desc.formatted_red_signed() == Some(true);
                if let Some(a) = at {
                    tm.mem.global_races.atomic(a, self.fenced);
                    tm.note(inst, Space::Global, a, size, self.linear, Access::Atomic)?;
                    let old = tm.read(inst, Space::Global, a, size)?;
                    let v = self.get(args[h + n]);
                    tm.write(
                        inst,
                        Space::Global,
                        a,
                        size,
                        op.with_sign(signed).apply(old, v, 4),
                    )?;
                }
            }
            SurfOp::Red(op) => {
                if let Some(a) = at {
                    tm.mem.global_races.atomic(a, self.fenced);
                    tm.note(inst, Space::Global, a, size, self.linear, Access::Atomic)?;
                    let old = tm.read(inst, Space::Global, a, size)?;
                    let v = self.get(args[h + n]);
                    tm.write(inst, Space::Global, a, size, op.apply(old, v, size))?;
                }
            }
        }
        Ok(())
    }

    /// Move to `block`, passing arguments as a parallel copy (read all, then write all), so
    /// that `jump block1(v2, v1)` swaps correctly when v1 and v2 are block1's own parameters.
    /// Run the system function `name` ([`crate::sysfn`]) for this thread on the argument
    /// registers' `words`, with the launch's system state; its result bytes, or the error
    /// the model's outcome maps to (an assertion traps, a device-runtime call is not
    /// modelled, a bad pointer is undefined).
    pub(super) fn system_call(
        &self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        inst: Inst,
        name: &str,
        words: &[(u8, u32)],
    ) -> Result<Vec<u8>, EvalError> {
        use crate::sysfn;
        let regs = sysfn::register_bytes(words);
        let mut state = std::mem::replace(&mut tm.mem.sys, sysfn::State::new([1; 3], [1; 3]));
        state.caller = sysfn::Caller {
            ctaid: ctx.ctaid,
            tid: self.tid,
        };
        let ret = sysfn::call_abi(name, &regs, &mut SysMem { tm, inst }, &mut state);
        tm.mem.sys = state;
        ret.map_err(|e| match e {
            sysfn::Error::Trap { message } => EvalError::AssertFailed { inst, message },
            sysfn::Error::Undefined { .. } => EvalError::Undefined {
                inst,
                why: e.to_string(),
            },
            _ => EvalError::Unmodelled {
                inst,
                why: e.to_string(),
            },
        })
    }

    pub(super) fn branch(&mut self, func: &Function, block: Block, args: &[Value]) {
        self.poison_branch(func, block, args);
        let vals: Vec<u64> = args.iter().map(|&a| self.get(a)).collect();
        for (&p, x) in func.blocks[block].params.iter().zip(vals) {
            self.set(p, x, func.values[p].ty);
        }
        self.block = block;
        self.pos = 0;
    }

    pub(super) fn special(&self, ctx: &Ctx<'_>, reg: SpecialReg) -> u64 {
        let l = ctx.launch;
        u64::from(match reg {
            SpecialReg::Tid(d) => self.tid[d.index()],
            SpecialReg::Ntid(d) => l.block[d.index()],
            SpecialReg::Ctaid(d) => ctx.ctaid[d.index()],
            SpecialReg::Nctaid(d) => l.grid[d.index()],
            SpecialReg::LaneId => self.linear % 32,
            SpecialReg::WarpId => self.linear / 32,
            // The number of warp ids of an SM (ptxas: the constant 64 on sm_5x), not of
            // the CTA's warps.
            SpecialReg::NWarpId => 64,
            SpecialReg::GridId => return l.gridid,
            SpecialReg::LaneMask(m) => m.mask(self.linear % 32),
            // Rejected in `step` before getting here.
            SpecialReg::Clock
            | SpecialReg::Clock64
            | SpecialReg::GlobalTimer
            | SpecialReg::GlobalTimerLo
            | SpecialReg::GlobalTimerHi
            | SpecialReg::Pm(_)
            | SpecialReg::Pm64(_) => 0,
            // The SM a CTA runs on: 0 in this model (no test compares it).
            SpecialReg::SmId => 0,
            // One SM.
            SpecialReg::NSmId => 1,
            SpecialReg::DynamicSmemSize => l.dynamic_shared,
            SpecialReg::TotalSmemSize => {
                let total =
                    ctx.layout.shared_size.next_multiple_of(16) + u64::from(l.dynamic_shared);
                return total & 0xffff_ffff;
            }
            // The models' driver sets every environment register to 0.
            SpecialReg::EnvReg(_) => 0,
        })
    }
}
