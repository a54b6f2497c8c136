//! One CTA of the reference interpreter: running its threads in lock step to each barrier,
//! checking that barriers are reached consistently, and resolving the warp-wide operations
//! (votes, shuffles, collectives) and barrier reductions.
//!
//! In: the function, the launch and the CTA's memory. Out: the CTA's effect on memory, or an
//! [`EvalError`] for a divergent barrier, a deadlock or a step limit.

use super::*;

/// What a CTA leaves: its shared memory, each thread's local memory, and which shared bytes
/// hold values computed from undefined registers (empty unless tracked: `poison.rs`).
pub(super) type CtaMemory = (Vec<u8>, Vec<Vec<u8>>, Vec<bool>);

pub(super) fn run_cta(
    ctx: &Ctx<'_>,
    mem: &mut Memory,
    steps: &mut u64,
) -> Result<CtaMemory, EvalError> {
    let [bx, by, bz] = ctx.launch.block;
    let mut shared = mem.shared_init.clone();
    let mut shared_def = mem.shared_def_init.clone();
    let track = ctx.launch.undefined_registers;
    let mut shared_poison = vec![false; if track { shared.len() } else { 0 }];
    let entry = ctx.func.layout[0];
    let mut threads = Vec::new();
    let mut locals = Vec::new();
    let mut stacks = Vec::new();
    let mut local_defs = Vec::new();
    for z in 0..bz {
        for y in 0..by {
            for x in 0..bx {
                threads.push(Thread {
                    tid: [x, y, z],
                    linear: x + bx * (y + by * z),
                    block: entry,
                    pos: 0,
                    regs: vec![0; ctx.func.values.len()],
                    fenced: false,
                    fenced_shared: false,
                    timer_reads: [0; 2],
                    cur: 0,
                    args: Vec::new(),
                    frames: Vec::new(),
                    frame_base: 0,
                    poison: vec![false; if track { ctx.func.values.len() } else { 0 }],
                });
                locals.push(mem.local_init.clone());
                stacks.push(DynStack {
                    room: ctx.launch.local_size,
                    track: ctx.launch.undefined_uninit,
                    ..DynStack::default()
                });
                local_defs.push(mem.local_def_init.clone());
            }
        }
    }
    let params = &ctx.launch.params[..];
    mem.global_races.begin_cta();
    // At most MAX_THREADS (2^20) threads in all, so this fits.
    let first_thread = ctx.cta_index * threads.len() as u32;
    let mut races = RaceShadow {
        vars: ctx.shared_vars.to_vec(),
        ..RaceShadow::default()
    };
    let mut status = vec![Status::Running; threads.len()];
    let mut spin = SpinWatch::default();
    // Each round runs every thread, in linear order, until it exits or reaches a barrier;
    // then the barrier opens for all waiting threads. Without barriers that is one round in
    // which each thread runs to its end. The step limit bounds the number of rounds.
    loop {
        let each = threads.iter_mut().zip(&mut locals).zip(&mut local_defs);
        for ((((thread, local), local_def), stack), status) in
            each.zip(&mut stacks).zip(&mut status)
        {
            if *status != Status::Running {
                continue;
            }
            let mut tm = ThreadMem {
                mem,
                shared: &mut shared,
                local,
                shared_def: &mut shared_def,
                local_def,
                shared_poison: &mut shared_poison,
                params,
                races: &mut races,
                stack,
                first_thread,
            };
            loop {
                let s = thread.step_tracked(ctx, &mut tm, steps)?;
                if s != Status::Running {
                    *status = s;
                    break;
                }
            }
        }
        if status.iter().all(|&s| s == Status::Exited) {
            break;
        }
        // Votes first: the lanes of a warp stopped at one vote take it together and run on;
        // barriers open only once no thread is left at a vote.
        if status.contains(&Status::AtVote) {
            resolve_votes(ctx.func, &mut threads, &mut status, &mut races)?;
            continue;
        }
        // Threads that yielded in a spin-wait go on once the others have had their turn; a
        // barrier opens only when no thread is left spinning.
        if status.contains(&Status::Yielded) {
            spin.round(ctx.func, &threads, &status, &shared)?;
            for s in &mut status {
                if *s == Status::Yielded {
                    *s = Status::Running;
                }
            }
            continue;
        }
        check_barrier(&threads, &status)?;
        reduce_barrier(ctx.func, &mut threads, &status)?;
        for s in &mut status {
            if matches!(*s, Status::AtBarrier(_)) {
                *s = Status::Running;
            }
        }
        // A new barrier interval: accesses before the barrier are ordered before those after.
        races.clear();
        mem.global_races.barrier();
    }
    if uses_dynamic_stack(ctx.func) || calls_subroutine(ctx.func, ctx.extern_funcs, ctx.subroutines)
    {
        // As the simulator's memory: the stack's room (its bytes at the top), then the frame.
        // (A subroutine's frames lie in the room in the simulator; here it stays zero.)
        let room = ctx.launch.local_size as usize;
        for (local, stack) in locals.iter_mut().zip(&stacks) {
            let mut out = vec![0u8; room.saturating_sub(stack.bytes.len())];
            out.extend_from_slice(&stack.bytes);
            out.extend_from_slice(local);
            *local = out;
        }
    }
    Ok((shared, locals, shared_poison))
}

/// Rounds in a row that end with threads spinning at a wait ([`Status::Yielded`]) while
/// nothing changes (no thread exits or reaches a barrier or a vote, shared memory keeps its
/// bytes) before `run_cta` gives up with [`EvalError::NoProgress`]. A wait whose phase can
/// still complete sees it complete within a round or two of the last arrival; a thousand
/// rounds of nothing is a phase that never completes (an arrival count larger than the
/// threads that arrive, a consumer waiting for a producer blocked at a barrier).
pub(super) const SPIN_ROUNDS: u32 = 1000;

/// What the last round ended with, to notice rounds of spinning that change nothing.
#[derive(Default)]
pub(super) struct SpinWatch {
    status: Vec<Status>,
    shared: Vec<u8>,
    idle: u32,
}

impl SpinWatch {
    /// Called when a round ends with yielded threads: count it as idle when the statuses
    /// and shared memory are those of the previous such round; stop at [`SPIN_ROUNDS`].
    pub(super) fn round(
        &mut self,
        func: &Function,
        threads: &[Thread],
        status: &[Status],
        shared: &[u8],
    ) -> Result<(), EvalError> {
        if self.status == status && self.shared == shared {
            self.idle += 1;
        } else {
            self.idle = 0;
            self.status = status.to_vec();
            self.shared = shared.to_vec();
        }
        if self.idle < SPIN_ROUNDS {
            return Ok(());
        }
        let k = status
            .iter()
            .position(|&s| s == Status::Yielded)
            .unwrap_or(0);
        let t = &threads[k];
        // The thread stopped just after its yield.
        let inst = func.blocks[t.block].insts[t.pos.saturating_sub(1)];
        let waiting = status.iter().filter(|&&s| s == Status::Yielded).count();
        Err(EvalError::NoProgress {
            inst,
            rounds: SPIN_ROUNDS,
            waiting,
        })
    }
}

/// Whether `f` has `alloca`, `stacksave` or `stackrestore` (see the module essay).
pub(super) fn uses_dynamic_stack(f: &Function) -> bool {
    f.insts
        .values()
        .any(|i| matches!(i.data, InstData::Stack { .. }))
}

/// Check a barrier about to open (every live thread is waiting at one): the threads of a
/// warp must all wait at the same barrier instruction (PTX: on sm_6x and below, every thread
/// of a warp executes the same `bar` instruction; in divergent code the barrier is
/// undefined). Warps may wait at different instructions (the hardware counts arrivals per
/// barrier), and threads that exited count as arrived.
pub(super) fn check_barrier(threads: &[Thread], status: &[Status]) -> Result<(), EvalError> {
    let mut first: std::collections::BTreeMap<u32, (u32, Inst)> = Default::default();
    for (t, s) in threads.iter().zip(status) {
        let Status::AtBarrier(inst) = *s else {
            continue;
        };
        let (other, at) = *first.entry(t.linear / 32).or_insert((t.linear, inst));
        if at != inst {
            return Err(EvalError::Undefined {
                inst,
                why: format!(
                    "bar.sync in divergent code: thread {} waits at {at}, thread {} of the same \
                     warp at {inst}",
                    other, t.linear
                ),
            });
        }
    }
    Ok(())
}

/// A barrier about to open that is a `bar.red`: every waiting thread gets the reduction of
/// the waiting threads' predicates (threads that exited take no part, as in the simulator).
/// Threads waiting at a `bar.red` and at another kind of barrier, or at `bar.red`s of
/// different reductions, are [`EvalError::Undefined`] (PTX requires the threads of a
/// `bar.red` to use the same reduction; the model has one CTA-wide barrier).
pub(super) fn reduce_barrier(
    func: &Function,
    threads: &mut [Thread],
    status: &[Status],
) -> Result<(), EvalError> {
    let mut op = None;
    let mut first = None;
    for s in status {
        let Status::AtBarrier(inst) = *s else {
            continue;
        };
        let this = match func.insts[inst].data {
            InstData::BarrierRed { op, .. } => Some(op),
            InstData::BarrierReg { red, .. } => red,
            _ => None,
        };
        match first {
            None => {
                first = Some(inst);
                op = this;
            }
            Some(at) if this != op => {
                return Err(EvalError::Undefined {
                    inst,
                    why: format!(
                        "threads wait at different barriers ({at} and {inst}), one of them a \
                         bar.red"
                    ),
                })
            }
            Some(_) => {}
        }
    }
    let Some(op) = op else { return Ok(()) };
    let arg_of = |inst: Inst| match &func.insts[inst].data {
        InstData::BarrierRed { arg, .. } => Some(*arg),
        InstData::BarrierReg {
            red: Some(_), args, ..
        } => args.last().copied(),
        _ => None,
    };
    let preds: Vec<bool> = threads
        .iter()
        .zip(status)
        .filter_map(|(t, s)| match *s {
            Status::AtBarrier(inst) => arg_of(inst).map(|a| t.get(a) != 0),
            _ => None,
        })
        .collect();
    let r = op.eval(preds);
    for (t, s) in threads.iter_mut().zip(status) {
        if let Status::AtBarrier(inst) = *s {
            let res = func.insts[inst].results[0];
            t.set(res, r, op.result_type());
        }
    }
    Ok(())
}

/// Every group of threads of one warp stopped at the same vote takes it: each gets the
/// result and moves past the vote. A `shfl` lane that reads, in range, a lane that is not
/// taking part (inactive, exited, or past the end of a partial warp) is
/// [`EvalError::Undefined`]: PTX leaves the value it gets undefined (the hardware reads
/// whatever that lane's register holds).
pub(super) fn resolve_votes(
    func: &Function,
    threads: &mut [Thread],
    status: &mut [Status],
    races: &mut RaceShadow,
) -> Result<(), EvalError> {
    // Per warp, only the lanes stopped at the vote that comes first in the block layout take
    // it this round; lanes stopped further on wait. That is how a warp reconverges: lanes
    // that ran ahead (past a loop or an `if`) wait at the join for the lanes behind, which
    // reach the later vote too and take it with them (a broadcast `shfl` after a loop whose
    // trip count differs per lane reads every lane, not only the ones that left first).
    let mut rank = vec![usize::MAX; func.blocks.len()];
    for (r, &b) in func.layout.iter().enumerate() {
        rank[b.index()] = r;
    }
    let mut groups: std::collections::BTreeMap<(u32, (usize, usize), Inst), Vec<usize>> =
        Default::default();
    for (k, t) in threads.iter().enumerate() {
        if status[k] == Status::AtVote {
            let inst = func.blocks[t.block].insts[t.pos];
            let at = (rank[t.block.index()], t.pos);
            groups.entry((t.linear / 32, at, inst)).or_default().push(k);
        }
    }
    let mut last_warp = None;
    for ((warp, _, inst), ks) in groups {
        // (The map is ordered by warp, then layout position: the first entry of each warp
        // is its earliest vote.)
        if last_warp == Some(warp) {
            continue;
        }
        last_warp = Some(warp);
        let node = &func.insts[inst];
        if let InstData::Shfl { mode, args } = node.data {
            // Read every source first, then write.
            let by_lane = |lane: u32| ks.iter().copied().find(|&k| threads[k].linear % 32 == lane);
            let mut out = Vec::new();
            for &k in &ks {
                let t = &threads[k];
                let lane = t.linear % 32;
                let (j, ok) = mode.source(lane, t.get(args[1]) as u32, t.get(args[2]) as u32);
                let Some(src) = by_lane(j) else {
                    return Err(EvalError::Undefined {
                        inst,
                        why: format!(
                            "shfl: thread {} reads lane {j} of its warp, which does not take part",
                            t.linear
                        ),
                    });
                };
                out.push((k, threads[src].get(args[0]), ok));
            }
            let (rv, rp) = (node.results[0], node.results[1]);
            for (k, x, ok) in out {
                threads[k].set(rv, x, Type::I32);
                threads[k].set(rp, u64::from(ok), Type::Pred);
                threads[k].pos += 1;
                status[k] = Status::Running;
            }
            continue;
        }
        if let InstData::Collective { op, ref args } = node.data {
            // `redux`/`match`/`elect` (`ir::collective`): the PTX meaning over the lanes
            // that met here.
            let lanes: Vec<crate::ir::collective::LaneInput> = ks
                .iter()
                .map(|&k| {
                    let t = &threads[k];
                    crate::ir::collective::LaneInput {
                        lane: t.linear % 32,
                        a: if args.len() == 2 { t.get(args[0]) } else { 0 },
                        mask: t.get(args[args.len() - 1]) as u32,
                    }
                })
                .collect();
            let out = op
                .eval(&lanes)
                .map_err(|why| EvalError::Undefined { inst, why })?;
            for (&k, (d, p)) in ks.iter().zip(out) {
                threads[k].set(node.results[0], d, Type::I32);
                if let Some(&rp) = node.results.get(1) {
                    threads[k].set(rp, p, Type::Pred);
                }
                threads[k].pos += 1;
                status[k] = Status::Running;
            }
            continue;
        }
        if let InstData::MemBar { .. } = node.data {
            // `bar.warp.sync`: the lanes that met here run on together, and their shared
            // accesses before it are ordered before those after it.
            races.warp_sync(warp);
            for &k in &ks {
                threads[k].pos += 1;
                status[k] = Status::Running;
            }
            continue;
        }
        let InstData::Vote { mode, arg } = node.data else {
            continue;
        };
        let (mut active, mut ballot) = (0u32, 0u32);
        for &k in &ks {
            let bit = 1u32 << (threads[k].linear % 32);
            active |= bit;
            if threads[k].get(arg) != 0 {
                ballot |= bit;
            }
        }
        let r = mode.eval(ballot, active);
        let res = node.results[0];
        for &k in &ks {
            threads[k].set(res, r, func.values[res].ty);
            threads[k].pos += 1;
            status[k] = Status::Running;
        }
    }
    Ok(())
}
