//! One run of [`super::verify_launch`], in named steps: load the kernel from both cubins
//! ([`load_sides`]), find an input on which the reference interpreter runs to a comparable
//! end ([`reference_run`], trying further seeds and buffer sizes when the PTX is undefined
//! or the reference faults on one), and compare each side's simulated run with it
//! ([`Compare::side`]).
//!
//! In: the IR module and kernel, leafold's cubin and [`VerifyOptions`]. Out: the reference's
//! run, and for each side nothing (it matches) or the [`Outcome`] that ends the
//! verification. Invariant: a step's error is final: the verdict is the first reason found,
//! in the order the steps run.

use super::*;

/// A kernel loaded for the simulator: its code, its info and its module's `.global` region.
pub(super) type Loaded = (Vec<u64>, sim::KernelInfo, Option<GlobalRegion>);

/// The kernel from leafold's cubin and, when `opts` has one, from ptxas's.
pub(super) fn load_sides(
    cubin: &[u8],
    opts: &VerifyOptions,
    name: &str,
    globals: u64,
) -> Result<(Loaded, Option<Loaded>), String> {
    let ours = sim::load_kernel_globals(cubin, name, globals)
        .map_err(|e| format!("leafold's cubin: {e}"))?;
    let theirs = match &opts.ptxas_cubin {
        Some(c) => Some(
            sim::load_kernel_globals(c, name, globals)
                .map_err(|e| format!("ptxas's cubin: {e}"))?,
        ),
        None => None,
    };
    Ok((ours, theirs))
}

/// The local bytes compared on leafold's side ([`kept_locals`], with `runtime_unroll` and `unindex` as
/// the compile had them). A kernel that calls a
/// subroutine: its frames (saved registers, spills) lie in the stack room below the kernel's
/// frame, leafold's own bytes and no output; only the kernel's frame is compared.
pub(super) fn compared_locals(
    module: &ir::Module,
    f: &Function,
    runtime_unroll: bool,
    unindex: bool,
) -> Option<LocalMap> {
    let local_map = kept_locals(module, f, runtime_unroll, unindex);
    if ir::eval::calls_subroutine(f, &module.extern_funcs, &module.subroutines) {
        let room = DYNAMIC_STACK_BYTES as usize;
        let frame = module.local_layout(f).1 as usize;
        Some(match local_map {
            None => vec![(room, room, frame)],
            Some(map) => map
                .into_iter()
                .map(|(r, o, n)| (r + room, o + room, n))
                .collect(),
        })
    } else {
        local_map
    }
}

/// The reference's result on one input: its output, or the trap it ends in (the message,
/// and the assertion text when an assertion failed).
pub(super) type Reference = Result<RunOutput, (String, Option<String>)>;

/// One input the reference interpreter ran on, to which both sides are compared.
pub(super) struct ReferenceRun {
    seed: u64,
    launch: Launch,
    reference: Reference,
}

/// The launch of `f` on buffers of `size` bytes filled from `seed`: textures, surfaces,
/// dynamic shared memory, the stack room and the heap the kernel needs.
fn prepare_launch(
    module: &ir::Module,
    f: &Function,
    plan: &inputs::Plan,
    (seed, size): (u64, u64),
    opts: &VerifyOptions,
) -> Result<Launch, String> {
    let mut l = make_launch(f, plan, size, seed, opts)
        .and_then(|l| bind_textures(module, f, l, seed, opts))
        .and_then(|mut l| {
            let dims = opts.surface.unwrap_or(surfaces::DEFAULT_SURFACE);
            let n = plan.objects.len();
            let fmt = opts.surface_format;
            surfaces::attach(&mut l, module, f, (dims, fmt), n, plan.addr32, seed)?;
            Ok(l)
        })?;
    if module
        .vars
        .values()
        .any(|v| v.space == Space::Shared && v.size == 0)
    {
        l.dynamic_shared = DYNAMIC_SHARED;
    }
    // A recursive subroutine's frames lie below the kernel's frame, in the stack room, on
    // both sides (`ir::eval` adds the room to the locals it returns exactly when the kernel
    // calls one). A system call's model uses no stack, so its kernels get none: both sides
    // lay out alike.
    if ir::eval::calls_subroutine(f, &module.extern_funcs, &module.subroutines) {
        l.local_size = DYNAMIC_STACK_BYTES;
    }
    if crate::sysfn::needs_heap(&module.extern_funcs) {
        crate::sysfn::add_heap(&mut l);
    }
    Ok(l)
}

/// The first input, from `first_seed` on, that the reference interpreter runs to an end
/// the sides can be compared with (an output, a trap, a failed assertion), or why none is.
/// Inputs to try, in order: each seed with each buffer size; seeds after the first stand in
/// for an input on which the PTX is undefined or the reference faults.
pub(super) fn reference_run(
    module: &ir::Module,
    f: &Function,
    plan: &inputs::Plan,
    first_seed: u64,
    opts: &VerifyOptions,
) -> Result<ReferenceRun, String> {
    let sizes: Vec<u64> = match opts.buffer_size {
        Some(b) => vec![b],
        None => vec![DEFAULT_BUFFER, LARGE_BUFFER],
    };
    let mut tries: Vec<(u64, u64)> = (0..INPUT_TRIES)
        .flat_map(|k| {
            let seed = first_seed.wrapping_add(k * RETRY_SEED_STRIDE);
            sizes.iter().map(move |&size| (seed, size))
        })
        .collect();
    tries.reverse();
    // The reason the first input could not be compared.
    let mut first_why: Option<String> = None;
    loop {
        let Some((seed, size)) = tries.pop() else {
            return Err(first_why.unwrap_or_default());
        };
        let launch = prepare_launch(module, f, plan, (seed, size), opts)?;
        let at = |e: &eval::EvalError| match e.inst().and_then(|i| f.srcloc(i).ptx_line()) {
            Some(n) => format!(" (PTX line {n})"),
            None => String::new(),
        };
        let outcome: Result<Reference, String> = match eval::run(module, &f.name, &launch) {
            Ok(out) => Ok(Ok(out)),
            // A trapping launch has no defined memory: the simulator must trap too.
            Err(e @ eval::EvalError::Trapped { .. }) => Ok(Err((format!("{e}{}", at(&e)), None))),
            // So does a failed assertion, which the simulator must fail alike.
            Err(e @ eval::EvalError::AssertFailed { .. }) => {
                let eval::EvalError::AssertFailed { message, .. } = &e else {
                    unreachable!()
                };
                let text = crate::sysfn::assertion_text(message);
                Ok(Err((format!("{e}{}", at(&e)), Some(text))))
            }
            // No run of this kernel can be compared (another input does not help).
            Err(e @ eval::EvalError::Unknowable { .. }) => {
                return Err(format!("{e}{}", at(&e)));
            }
            Err(e @ eval::EvalError::Undefined { .. }) => {
                // Another buffer size does not change a race: go to the next seed.
                tries.retain(|t| t.0 != seed);
                Err(format!(
                    "{UNDEFINED} on the random inputs of seed {seed}: {e}{}",
                    at(&e)
                ))
            }
            Err(
                e @ (eval::EvalError::OutOfBounds { .. }
                | eval::EvalError::Unmapped { .. }
                | eval::EvalError::Misaligned { .. }),
            ) => Err(format!(
                "the reference run (seed {seed}) faults on the random inputs: {e}{}",
                at(&e)
            )),
            Err(e @ eval::EvalError::StepLimit { .. }) => {
                // Another input would most likely run as long: stop here.
                let why = format!("the reference interpreter cannot run it: {e}{}", at(&e));
                return Err(first_why.unwrap_or(why));
            }
            Err(e) => {
                return Err(format!(
                    "the reference interpreter cannot run it: {e}{}",
                    at(&e)
                ));
            }
        };
        match outcome {
            Ok(reference) => {
                return Ok(ReferenceRun {
                    seed,
                    launch,
                    reference,
                })
            }
            // Keep the reason of the first input, with the largest buffer tried for it.
            Err(why) => {
                if first_why.is_none() || seed == first_seed {
                    first_why = Some(why);
                }
            }
        }
    }
}

/// What comparing a side with the reference needs of the kernel, the same for every run.
pub(super) struct Compare<'a> {
    pub(super) module: &'a ir::Module,
    pub(super) f: &'a Function,
    pub(super) plan: &'a inputs::Plan,
    /// leafold's cubin.
    pub(super) cubin: &'a [u8],
    pub(super) opts: &'a VerifyOptions,
    /// Where the module's `.global` variables start.
    pub(super) globals: u64,
    /// [`compared_locals`].
    pub(super) local_map: Option<&'a [(usize, usize, usize)]>,
}

impl Compare<'_> {
    /// Run `side`'s `kernel` in the simulator on the input of `run` (the `r`th run) and
    /// compare it with the reference: `Err` with the verdict's outcome when they differ or
    /// the simulator cannot run it. Records the simulator's cost and, on the first run, its
    /// timing and profile in `verdict`.
    pub(super) fn side(
        &self,
        side: Side,
        (code, info, module_globals): &Loaded,
        r: u32,
        run: &ReferenceRun,
        verdict: &mut Verdict,
    ) -> Result<(), Outcome> {
        let (f, opts, seed) = (self.f, self.opts, run.seed);
        // The module's `.global` variables sit where the reference puts them, and their
        // region comes last in both outputs.
        let mut launch = run.launch.clone();
        launch.global.extend(module_globals.clone());
        let launch = &launch;
        // A mismatch with no instruction to name as the writer of a wrong byte.
        let unattributed = |what: String| {
            Outcome::Mismatch(Box::new(Mismatch {
                side,
                seed,
                inputs: summary(launch, f, self.plan),
                what,
                writer: None,
                ptx_line: None,
            }))
        };
        let cannot_run = |addr: u64, what: String| {
            Outcome::CannotRun(format!(
                "the simulator cannot run {side}'s code: 0x{addr:04x}: {what}"
            ))
        };
        let start = std::time::Instant::now();
        let mut profile = None;
        let got = if opts.profile && r == 0 {
            sim::run_profiled(code, info, launch).map(|(out, timing, p)| {
                profile = Some(p);
                (out, timing)
            })
        } else {
            sim::run_timed(code, info, launch)
        };
        let (reference, got) = match (&run.reference, got) {
            (Ok(r), got) => (r, got),
            (Err((_, None)), Err(sim::SimError::Trap { .. })) => return Ok(()),
            // Both fail the same assertion (whichever thread's message comes first).
            (Err((_, Some(text))), Err(sim::SimError::AssertFailed { message, .. }))
                if *text == crate::sysfn::assertion_text(&message) =>
            {
                return Ok(())
            }
            (Err(_), Err(sim::SimError::Unsupported { addr, what })) => {
                return Err(cannot_run(addr, what))
            }
            (Err((trap, _)), got) => {
                let what = match got {
                    Ok(_) => format!("the reference traps ({trap}); {side}'s code does not"),
                    Err(e) => {
                        format!("the reference traps ({trap}); {side}'s code faults instead: {e}")
                    }
                };
                return Err(unattributed(what));
            }
        };
        let mut got = match got {
            Ok((out, timing)) => {
                if side == Side::Leafold {
                    verdict.sim_steps += timing.warp_insts;
                    verdict.sim_seconds += start.elapsed().as_secs_f64();
                }
                if r == 0 {
                    verdict.timing[side as usize] = Some(timing);
                    verdict.profile[side as usize] = profile;
                }
                out
            }
            Err(sim::SimError::Unsupported { addr, what }) => return Err(cannot_run(addr, what)),
            Err(e) => {
                let writer = fault_addr(&e).map(|pc| (pc, sass_at(code, pc)));
                return Err(Outcome::Mismatch(Box::new(Mismatch {
                    side,
                    seed,
                    inputs: summary(launch, f, self.plan),
                    what: format!("the reference ran, {side}'s code faults in the simulator: {e}"),
                    writer,
                    ptx_line: None,
                })));
            }
        };
        if side == Side::Ptxas {
            if let Some(c) = &opts.ptxas_cubin {
                relayout_module_globals(&mut got, reference, self.cubin, c, self.globals);
            }
        }
        let local = (side == Side::Leafold).then_some(self.local_map);
        // ptxas's shared memory is comparable only where its layout cannot differ from the
        // reference's: one variable at most (its cubin names none of them).
        let shared = side == Side::Leafold || self.module.shared_layout(f).offsets.len() <= 1;
        // The printf output is part of what the kernel does (its order: sysfn's essay).
        if let Some(what) = crate::sysfn::printf_difference(&reference.printf, &got.printf) {
            return Err(unattributed(format!(
                "{what}\n  reference printf output:\n{}\n  {side}'s printf output:\n{}",
                printf_excerpt(&reference.printf),
                printf_excerpt(&got.printf)
            )));
        }
        if let Some(d) = first_difference(reference, &got, local, shared) {
            let writer = sim::run_traced(code, info, launch)
                .ok()
                .and_then(|(_, log)| log.last_writer(d.loc))
                .map(|pc| (pc, sass_at(code, pc)));
            return Err(Outcome::Mismatch(Box::new(Mismatch {
                side,
                seed,
                inputs: summary(launch, f, self.plan),
                what: format!(
                    "first difference at {}: reference 0x{:02x}, {side} 0x{:02x}",
                    d.describe(),
                    d.expected,
                    d.got
                ),
                writer,
                ptx_line: None,
            })));
        }
        if opts.check_slice {
            match check_slice(code, info, launch) {
                Ok(()) => {}
                Err(SliceCheck::Untraceable(why)) => {
                    return Err(Outcome::CannotRun(format!("{side}'s code: {why}")));
                }
                Err(SliceCheck::Missed(what)) => return Err(unattributed(what)),
            }
        }
        Ok(())
    }
}
