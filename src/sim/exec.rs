//! The machine: CTAs, warps, the divergence stack, and one function per instruction family.
//! The semantics are documented in the module essay of [`crate::sim`].

use super::mem::{Memory, Space};
use super::trace::{Dependences, WriteLog, NO_WRITER};
use super::{branch_target, next_addr, KernelInfo, Program, SimError, SimOptions};
use crate::ir::eval::{
    Launch, RunOutput, CONST_WINDOW_BASE, LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE,
};
use smallvec::SmallVec;
use std::sync::OnceLock;

use crate::sm50::sched::{access, Res, NUM_RES, PRED};
use crate::sm50::slice;
use crate::sm50::{rt::sext, Field, Form, Inst, FORMS};

/// CC flag bits.
const CF: u8 = 1;
/// On LEA: "not in the shared window" (seed 001).
const OF: u8 = 2;
/// Result zero.
const ZF: u8 = 4;
/// Result negative.
const SF: u8 = 8;

/// ZF and SF of a 32-bit result.
pub(super) fn zs(r: u32) -> u8 {
    flags(false, false, r)
}

/// The CC value for a carry, an OF bit and a 32-bit result.
fn flags(carry: bool, of: bool, r: u32) -> u8 {
    let mut cc = 0;
    if carry {
        cc |= CF;
    }
    if of {
        cc |= OF;
    }
    if r == 0 {
        cc |= ZF;
    }
    if r >> 31 != 0 {
        cc |= SF;
    }
    cc
}

/// Whether CC passes a BRA CC test, `None` for the tests not modelled.
fn cc_test(test: u8, cc: u8) -> Option<bool> {
    let (z, lt) = (cc & ZF != 0, (cc & SF != 0) != (cc & OF != 0));
    Some(match test {
        0 | 8 => false,
        1 | 9 => lt,
        2 | 10 => z,
        3 | 11 => lt || z,
        4 | 12 => !lt && !z,
        5 | 13 => !z,
        6 | 14 => !lt,
        7 | 15 => true,
        _ => return None,
    })
}

/// The lanes of `exec` whose CC passes the CC test of a `BRK` or `EXIT` (`EXIT CC.NEU`);
/// every lane when the test is T (15).
fn cc_exec(w: &Warp, i: &Inst, addr: u64, exec: u32) -> Result<u32, SimError> {
    let test = get(i, Field::Cc).unwrap_or(15) as u8;
    if test == 15 {
        return Ok(exec);
    }
    let mut out = exec;
    for l in lanes(exec) {
        let Some(pass) = cc_test(test, w.cc[l]) else {
            return Err(unsupported(addr, i, "this CC test"));
        };
        if !pass {
            out &= !(1 << l);
        }
    }
    Ok(out)
}

const RZ: u64 = 255;
const PT: u64 = 7;

/// A divergence-stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// SSY: reconverge at `pc`.
    Sync,
    /// The other side of a divergent branch.
    Div,
    /// PBK: where BRK lanes go.
    Brk,
    /// CAL: where RET lanes go (the return address).
    Call,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    kind: Kind,
    pc: u64,
    mask: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    AtBarrier,
    Done,
}

pub(super) struct Warp {
    /// `regs[r * 32 + lane]`, r in 0..255.
    regs: Vec<u32>,
    preds: [u8; 32],
    pub(super) cc: [u8; 32],
    pc: u64,
    active: u32,
    exited: u32,
    stack: Vec<Entry>,
    state: State,
    /// Warp index in its CTA.
    index: usize,
    /// Per lane, reads of SR_CLOCKLO and of SR_GLOBALTIMERLO so far: the clock model
    /// shared with `ir::eval` (`eval::timer_value`).
    timer_reads: [[u64; 32]; 2],
}

impl Warp {
    pub(super) fn r(&self, reg: u64, lane: usize) -> u32 {
        if reg >= RZ {
            0
        } else {
            self.regs[reg as usize * 32 + lane]
        }
    }

    pub(super) fn set_r(&mut self, reg: u64, lane: usize, v: u32) {
        if reg < RZ {
            self.regs[reg as usize * 32 + lane] = v;
        }
    }

    pub(super) fn p(&self, p: u64, lane: usize) -> bool {
        p >= PT || (self.preds[lane] >> p) & 1 != 0
    }

    pub(super) fn set_p(&mut self, p: u64, lane: usize, v: bool) {
        if p < PT {
            if v {
                self.preds[lane] |= 1 << p;
            } else {
                self.preds[lane] &= !(1 << p);
            }
        }
    }

    fn cf(&self, lane: usize) -> u64 {
        u64::from(self.cc[lane] & CF)
    }

    /// Lanes leave the active set; when none is left, resume the innermost stack entry that
    /// still has lanes, or finish the warp.
    fn leave(&mut self, lanes: u32) {
        self.active &= !lanes;
        while self.active == 0 {
            let Some(e) = self.stack.pop() else {
                self.state = State::Done;
                return;
            };
            let mask = e.mask & !self.exited;
            if mask != 0 {
                self.active = mask;
                self.pc = e.pc;
            }
        }
    }
}

/// A 32-bit source operand, resolved once per instruction.
#[derive(Clone, Copy)]
pub(super) enum Src {
    Reg(u64),
    Val(u32),
}

/// `(fields per form, slot of (form, field) or u8::MAX)`: `Inst::get` searches the form's
/// field list, which dominated the simulator's time; this table makes it one lookup.
fn slot_table() -> &'static (usize, Vec<u8>) {
    static TABLE: OnceLock<(usize, Vec<u8>)> = OnceLock::new();
    TABLE.get_or_init(|| {
        let per_form = FORMS
            .iter()
            .flat_map(|fi| fi.fields.iter())
            .map(|fd| fd.field as usize + 1)
            .max()
            .unwrap_or(0);
        let mut t = vec![u8::MAX; FORMS.len() * per_form];
        for fi in FORMS.iter() {
            for (n, fd) in fi.fields.iter().enumerate() {
                t[fi.form as usize * per_form + fd.field as usize] = n as u8;
            }
        }
        (per_form, t)
    })
}

/// A field's value, `None` when the form has no such field (same as `Inst::get`).
pub(super) fn get(i: &Inst, field: Field) -> Option<u64> {
    let (per_form, t) = slot_table();
    if field as usize >= *per_form {
        return None;
    }
    match t.get(i.form as usize * per_form + field as usize) {
        Some(&n) if n != u8::MAX => Some(u64::from(i.f[n as usize])),
        _ => None,
    }
}

pub(super) fn f(i: &Inst, field: Field) -> u64 {
    get(i, field).unwrap_or(0)
}

pub(super) fn flag(i: &Inst, field: Field) -> bool {
    f(i, field) != 0
}

/// Iterate over the set bits of a lane mask.
pub(super) fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask >> l & 1 != 0)
}

pub(super) struct Sim<'a> {
    prog: &'a Program,
    /// [`KernelInfo::calls`]: the callee of each `JCAL`, by address.
    calls: &'a [(u64, String)],
    pub(super) launch: &'a Launch,
    pub(super) mem: Memory,
    ctaid: [u32; 3],
    steps: u64,
    pub(super) opts: SimOptions,
    /// The BAR.RED reduction of the CTA's current barrier, and of the last completed one.
    red: Reduction,
    red_result: Reduction,
    /// The dependence trace, when one is asked for ([`run_dependences`]).
    deps: Option<Dependences>,
    /// The issue clocks, when timing is asked for ([`run_timed`]).
    timing: Option<Clocks>,
    /// The bound textures' slots ([`KernelInfo::textures`]).
    pub(super) textures: &'a [(u32, String)],
    /// What the system functions keep over the launch (printf records, the heap).
    sys: crate::sysfn::State,
}

/// Per warp of the running CTA its issue clock, and the totals so far ([`super::Timing`]).
#[derive(Default)]
struct Clocks {
    warps: Vec<crate::sm50::sched::cost::Clock>,
    total: super::Timing,
}

/// A BAR.RED reduction over the arriving threads' predicate.
#[derive(Clone, Copy, Debug)]
struct Reduction {
    /// The `.POPC`/`.AND`/`.OR` selector of the BAR.RED that contributed, if any did.
    mode: Option<u64>,
    count: u32,
    all: bool,
    any: bool,
}

impl Default for Reduction {
    fn default() -> Reduction {
        Reduction {
            mode: None,
            count: 0,
            all: true,
            any: false,
        }
    }
}

pub(crate) fn run(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
    opts: &SimOptions,
) -> Result<(RunOutput, u64), SimError> {
    run_logged(prog, info, launch, opts, None).map(|(out, steps, _)| (out, steps))
}

/// [`run`], also tracing the dependences of every instruction each lane runs.
pub(crate) fn run_dependences(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, Dependences), SimError> {
    run_inner(
        prog,
        info,
        launch,
        &SimOptions::default(),
        None,
        Some(Dependences::default()),
        &mut None,
    )
    .map(|(out, _, _, d)| (out, d.unwrap_or_default()))
}

/// [`run`], timing every warp's executed instructions ([`super::Timing`]).
pub(crate) fn run_timed(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, super::Timing), SimError> {
    let mut timing = Some(Clocks::default());
    let out = run_inner(
        prog,
        info,
        launch,
        &SimOptions::default(),
        None,
        None,
        &mut timing,
    )?;
    Ok((out.0, timing.map(|t| t.total).unwrap_or_default()))
}

/// [`run`], recording the last writer of each byte in `log` when one is given.
pub(crate) fn run_logged(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
    opts: &SimOptions,
    log: Option<WriteLog>,
) -> Result<(RunOutput, u64, Option<WriteLog>), SimError> {
    run_inner(prog, info, launch, opts, log, None, &mut None)
        .map(|(out, steps, log, _)| (out, steps, log))
}

#[allow(clippy::type_complexity)]
fn run_inner(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
    opts: &SimOptions,
    log: Option<WriteLog>,
    deps: Option<Dependences>,
    timing: &mut Option<Clocks>,
) -> Result<(RunOutput, u64, Option<WriteLog>, Option<Dependences>), SimError> {
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(SimError::BadLaunch(
            "grid and block dimensions must be at least 1".into(),
        ));
    }
    let per_cta: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    if per_cta > 1024 {
        return Err(SimError::BadLaunch(format!(
            "{per_cta} threads per CTA, at most 1024"
        )));
    }
    let ctas: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
    if ctas.saturating_mul(per_cta) > crate::ir::eval::MAX_THREADS {
        return Err(SimError::BadLaunch("too many threads".into()));
    }
    let mut sim = Sim {
        prog,
        calls: &info.calls,
        launch,
        mem: Memory::new(info, launch)?,
        ctaid: [0; 3],
        steps: 0,
        opts: *opts,
        red: Reduction::default(),
        red_result: Reduction::default(),
        deps,
        timing: timing.take(),
        textures: &info.textures,
        sys: crate::sysfn::state_for_launch(launch),
    };
    sim.mem.log = log;
    let mut shared = Vec::new();
    let mut local = Vec::new();
    for z in 0..launch.grid[2] {
        for y in 0..launch.grid[1] {
            for x in 0..launch.grid[0] {
                sim.ctaid = [x, y, z];
                sim.run_cta(per_cta as usize)?;
                shared.push(std::mem::take(&mut sim.mem.shared));
                local.append(&mut sim.mem.local);
            }
        }
    }
    let log = sim.mem.log.take();
    let deps = sim.deps.take();
    *timing = sim.timing.take();
    Ok((
        RunOutput {
            printf: sim.sys.printf_output(),
            global: sim.mem.global,
            shared,
            local,
        },
        sim.steps,
        log,
        deps,
    ))
}

impl Sim<'_> {
    fn run_cta(&mut self, threads: usize) -> Result<(), SimError> {
        self.mem.start_cta(threads);
        if let Some(d) = &mut self.deps {
            d.last = vec![NO_WRITER; threads.div_ceil(32) * 32 * NUM_RES];
        }
        self.red = Reduction::default();
        self.red_result = Reduction::default();
        let nwarps = threads.div_ceil(32);
        let mut warps: Vec<Warp> = (0..nwarps)
            .map(|w| {
                let n = (threads - 32 * w).min(32);
                let live = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
                Warp {
                    regs: vec![0; 255 * 32],
                    preds: [0; 32],
                    cc: [0; 32],
                    pc: 8,
                    active: live,
                    exited: !live,
                    stack: Vec::new(),
                    state: State::Running,
                    index: w,
                    timer_reads: [[0; 32]; 2],
                }
            })
            .collect();
        if let Some(t) = &mut self.timing {
            t.warps = vec![Default::default(); nwarps];
        }
        loop {
            for w in warps.iter_mut() {
                // A `NOP` is where a spin-wait yields (`ir::MemScope::Yield`): the warp stops
                // for this round and the later warps run.
                while w.state == State::Running {
                    if self.step(w)? {
                        break;
                    }
                }
            }
            if warps.iter().any(|w| w.state == State::Running) {
                continue;
            }
            if warps.iter().all(|w| w.state == State::Done) {
                if let Some(t) = &mut self.timing {
                    t.total.issue_cycles += t.warps.iter().map(|c| c.now()).sum::<u64>();
                }
                return Ok(());
            }
            // The barrier releases its warps when the last one arrives.
            if let Some(t) = &mut self.timing {
                let waiting = |k: &usize| warps[*k].state == State::AtBarrier;
                let last = (0..nwarps)
                    .filter(waiting)
                    .map(|k| t.warps[k].now())
                    .max()
                    .unwrap_or(0);
                for k in (0..nwarps).filter(waiting) {
                    t.warps[k].wait_until(last);
                }
            }
            // Every live warp is at the barrier: release them, publishing a BAR.RED
            // reduction for B2R.RESULT and starting the next one.
            if self.red.mode.is_some() {
                self.red_result = std::mem::take(&mut self.red);
            }
            for w in warps.iter_mut() {
                if w.state == State::AtBarrier {
                    w.state = State::Running;
                }
            }
        }
    }

    /// The B operand (register, constant or immediate).
    pub(super) fn src_b(&mut self, i: &Inst, addr: u64) -> Result<Src, SimError> {
        if matches!(i.form, Form::XMAD_CC | Form::BFI_CC | Form::FFMA_CC) {
            return Ok(Src::Reg(f(i, Field::Rb)));
        }
        if let Some(rb) = get(i, Field::Rb) {
            return Ok(Src::Reg(rb));
        }
        if let Some(off) = get(i, Field::Cbo) {
            let bank = get(i, Field::Cbk).or(get(i, Field::Cbks)).unwrap_or(0);
            return Ok(Src::Val(self.mem.const32(addr, bank as u8, off * 4)?));
        }
        if let Some(v) = get(i, Field::ImmImm20s) {
            return Ok(Src::Val(sext(v, 20) as u32));
        }
        if let Some(v) = get(i, Field::ImmImm20u) {
            return Ok(Src::Val(v as u32));
        }
        if let Some(v) = get(i, Field::ImmImm16) {
            return Ok(Src::Val(v as u32));
        }
        if let Some(v) = get(i, Field::ImmF32i) {
            return Ok(Src::Val(
                ((v as u32 & 0x7ffff) << 12) | ((v as u32 >> 19) << 31),
            ));
        }
        if let Some(v) = get(i, Field::Imm) {
            return Ok(Src::Val(v as u32));
        }
        if let Some(v) = get(i, Field::Sh) {
            return Ok(Src::Val(v as u32));
        }
        Err(unsupported(addr, i, "an instruction without a B operand"))
    }

    /// The C operand of forms whose C may be a constant (XMAD/BFI/FFMA cbuf-in-C).
    fn src_c(&mut self, i: &Inst, addr: u64) -> Result<Src, SimError> {
        if matches!(i.form, Form::XMAD_CC | Form::BFI_CC | Form::FFMA_CC) {
            let off = f(i, Field::Cbo);
            let bank = f(i, Field::Cbk);
            return Ok(Src::Val(self.mem.const32(addr, bank as u8, off * 4)?));
        }
        Ok(Src::Reg(f(i, Field::Rc)))
    }

    /// Run one instruction of `w`; true when it was a `NOP` (a yield point, see `run_cta`).
    fn step(&mut self, w: &mut Warp) -> Result<bool, SimError> {
        let addr = w.pc;
        let inst = *self.prog.get(addr, addr)?;
        self.steps += 1;
        if self.steps > self.launch.step_limit {
            return Err(SimError::StepLimit {
                addr,
                limit: self.launch.step_limit,
            });
        }
        if let Some(t) = &mut self.timing {
            t.warps[w.index].issue(&inst, self.prog.ctrl(addr));
            t.total.warp_insts += 1;
        }
        let pg = get(&inst, Field::Pg).unwrap_or(PT);
        let pgn = flag(&inst, Field::Pgn);
        let mut exec = 0u32;
        for l in lanes(w.active) {
            if w.p(pg, l) != pgn {
                exec |= 1 << l;
            }
        }
        w.pc = next_addr(addr);
        if self.deps.is_some() {
            self.note_dependences(w.index, &inst, addr, exec);
        }
        self.exec(w, &inst, addr, exec)?;
        Ok(inst.form == Form::NOP)
    }

    /// Record, for every lane in `exec`, what `inst` read and that it is now the last writer
    /// of what it writes (see [`Dependences`]).
    fn note_dependences(&mut self, warp: usize, inst: &Inst, addr: u64, exec: u32) {
        let Some(d) = &mut self.deps else { return };
        let acc = access(inst);
        let guard = get(inst, Field::Pg)
            .filter(|&p| p != PT)
            .map(|p| PRED + p as Res);
        let address = slice::address_uses(inst);
        for l in lanes(exec) {
            let base = (warp * 32 + l) * NUM_RES;
            let last = &d.last;
            let reads = acc
                .uses
                .iter()
                .filter(|&&r| Some(r) != guard && r < NUM_RES)
                .map(|&r| last[base + r]);
            let address_writers = address
                .iter()
                .filter(|&&r| r < NUM_RES)
                .map(|&r| last[base + r]);
            let reads: SmallVec<[u32; 8]> = reads.collect();
            let address_writers: SmallVec<[u32; 4]> = address_writers.collect();
            let id = d.push(addr, reads.into_iter(), address_writers.into_iter());
            for &r in acc.defs.iter().filter(|&&r| r < NUM_RES) {
                d.last[base + r] = id;
            }
        }
    }

    fn exec(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        use Form::*;
        match i.form {
            // ---------------------------------------------------------- control flow
            BRA => {
                let target = branch_target(addr, f(i, Field::Rel));
                self.prog.get(target, addr)?;
                let test = self.prog.bra_cc(addr);
                let mut exec = exec;
                if test != 0xf {
                    for l in lanes(exec) {
                        let Some(pass) = cc_test(test, w.cc[l]) else {
                            return Err(unsupported(addr, i, "this BRA CC test"));
                        };
                        if !pass {
                            exec &= !(1 << l);
                        }
                    }
                }
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
                    let ret = super::syscall::call(
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
            EXIT => {
                let exec = cc_exec(w, i, addr, exec)?;
                w.exited |= exec;
                for e in &mut w.stack {
                    e.mask &= !exec;
                }
                w.leave(exec);
            }
            BAR | BAR_RED | BARR_RA | BARR_RB | BARR_RR | BARR_REDRA | BARR_REDRB | BARR_REDRR => {
                let mode = f(i, Field::Mode);
                if mode == 2 && f(i, Field::Ro) > 2 {
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
                                ["BAR.SYNC", "BAR.ARV", "BAR.RED"][mode as usize],
                                exec,
                                !w.exited
                            ),
                        });
                    }
                    // BAR.RED adds the lanes' predicate to the CTA's reduction, which
                    // B2R.RESULT reads once every warp has arrived.
                    if mode == 2 {
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
                    if mode != 1 {
                        w.state = State::AtBarrier;
                    }
                }
            }
            // CCTL/CCTLL (prefetch): a cache hint, no memory change and no fault.
            NOP | DEPBAR | MEMBAR | CCTL | CCTL_L => {}
            // BPT has no guard: any live lane here stops the launch. Only the TRAP mode
            // (PTX `trap`) is modelled; the others are debugger breakpoints.
            BPT => {
                if f(i, Field::Mode) != 3 {
                    return Err(unsupported(addr, i, "BPT other than BPT.TRAP"));
                }
                if exec != 0 {
                    return Err(SimError::Trap { addr });
                }
            }

            // ---------------------------------------------------------- moves
            MOV_R | MOV_C | MOV_I => {
                let b = self.src_b(i, addr)?;
                self.alu(w, i, exec, |w, l| w.val(b, l));
            }
            MOV32I => {
                let v = f(i, Field::Imm) as u32;
                self.alu(w, i, exec, |_, _| v);
            }
            S2R | CS2R => self.s2r(w, i, addr, exec)?,
            SEL_R | SEL_C | SEL_I => {
                let b = self.src_b(i, addr)?;
                let (ra, ps, psn) = (f(i, Field::Ra), f(i, Field::Ps), flag(i, Field::Psn));
                self.alu(w, i, exec, |w, l| {
                    if w.p(ps, l) != psn {
                        w.r(ra, l)
                    } else {
                        w.val(b, l)
                    }
                });
            }

            // ---------------------------------------------------------- integer add
            IADD_R | IADD_C | IADD_I | IADD32I => {
                let b = if i.form == IADD32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let ra = f(i, Field::Ra);
                let (na, nb) = (flag(i, Field::Nega), flag(i, Field::Negb));
                if flag(i, Field::Sat) {
                    // Signed saturation of a ± b (what ptxas makes of `add/sub.sat.s32`); the
                    // extended, `.PO` and carry-out forms are not modelled.
                    if flag(i, Field::X) || (na && nb) || flag(i, Field::Cc) {
                        return Err(unsupported(addr, i, "IADD.SAT with .X, .PO or .CC"));
                    }
                    let signed = |v: u32, neg: bool| {
                        let v = i64::from(v as i32);
                        if neg {
                            -v
                        } else {
                            v
                        }
                    };
                    for l in lanes(exec) {
                        let s = signed(w.r(ra, l), na) + signed(w.val(b, l), nb);
                        let s = s.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
                        w.set_r(f(i, Field::Rd), l, s as i32 as u32);
                    }
                    return Ok(());
                }
                let x = flag(i, Field::X);
                let po = na && nb;
                for l in lanes(exec) {
                    let a = u64::from(w.r(ra, l));
                    let bv = u64::from(w.val(b, l));
                    let sum = if po {
                        a + bv + 1
                    } else {
                        add_term(a, na && !po, x) + add_term(bv, nb && !po, x)
                    } + if x { w.cf(l) } else { 0 };
                    self.write_sum(w, i, l, sum);
                }
            }
            IADD3_R | IADD3_C | IADD3_I => {
                let b = match (i.form, get(i, Field::ImmImm20u)) {
                    // nvdisasm prints IADD3's 20-bit immediate unsigned, but it is signed:
                    // ptxas 11.8 writes `IADD3 R4, R7, 0xfffe1, R4` for `x + y - 31`
                    // (build_prop's differential test against ptxas's code found it).
                    (IADD3_I, Some(v)) => Src::Val(sext(v, 20) as u32),
                    _ => self.src_b(i, addr)?,
                };
                let (ra, rc) = (f(i, Field::Ra), f(i, Field::Rc));
                let (na, nb, nc) = (
                    flag(i, Field::Nega),
                    flag(i, Field::Negb),
                    flag(i, Field::Negc),
                );
                let (ha, hb, hc, sh) = (
                    f(i, Field::Ha),
                    f(i, Field::Hb),
                    f(i, Field::Hc),
                    f(i, Field::Sh),
                );
                let x = flag(i, Field::X);
                for l in lanes(exec) {
                    let a = half(w.r(ra, l), ha);
                    let bv = half(w.val(b, l), hb);
                    let c = half(w.r(rc, l), hc);
                    let ab = add_term(a, na, x) + add_term(bv, nb, x);
                    // .RS shifts the adder's whole A+B, carry bits included: ptxas's
                    // mul.hi.u32 sums two 32-bit partial products here and needs bit 32 of
                    // that sum to land in bit 16 of the result.
                    let ab = match sh {
                        1 => (ab & 0x3_ffff_ffff) >> 16,
                        2 => (ab << 16) & 0xffff_ffff,
                        _ => ab,
                    };
                    let sum = ab + add_term(c, nc, x) + if x { w.cf(l) } else { 0 };
                    self.write_sum(w, i, l, sum);
                }
            }
            ISCADD_R | ISCADD_C | ISCADD_I | ISCADD32I => {
                let b = if i.form == ISCADD32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let (ra, s) = (f(i, Field::Ra), f(i, Field::S) as u32);
                let (na, nb) = (flag(i, Field::Nega), flag(i, Field::Negb));
                let po = na && nb;
                for l in lanes(exec) {
                    let a = u64::from(w.r(ra, l) << s);
                    let bv = u64::from(w.val(b, l));
                    let sum = if po {
                        a + bv + 1
                    } else {
                        add_term(a, na, false) + add_term(bv, nb, false)
                    };
                    self.write_sum(w, i, l, sum);
                }
            }
            LEA_R | LEA_C | LEA_I | LEA_HI_R | LEA_HI_C => self.lea(w, i, addr, exec)?,

            // ---------------------------------------------------------- shifts, logic
            SHL_R | SHL_C | SHL_I => {
                if flag(i, Field::X) || flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "SHL.X/.CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, wrap) = (f(i, Field::Ra), flag(i, Field::W));
                self.alu(w, i, exec, |w, l| {
                    let n = w.val(b, l);
                    let n = if wrap { n & 31 } else { n };
                    if n >= 32 {
                        0
                    } else {
                        w.r(ra, l) << n
                    }
                });
            }
            SHR_R | SHR_C | SHR_I => {
                if flag(i, Field::X) || flag(i, Field::Cc) || flag(i, Field::Brev) {
                    return Err(unsupported(addr, i, "SHR.X/.CC/.BREV"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, wrap, sgn) = (f(i, Field::Ra), flag(i, Field::W), flag(i, Field::Sgn));
                self.alu(w, i, exec, |w, l| {
                    let n = w.val(b, l);
                    let n = if wrap { n & 31 } else { n.min(32) };
                    let a = w.r(ra, l);
                    if sgn {
                        ((a as i32 as i64) >> n) as u32
                    } else {
                        ((u64::from(a)) >> n) as u32
                    }
                });
            }
            SHF_LR | SHF_LI | SHF_RR | SHF_RI => {
                if flag(i, Field::X) || flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "SHF.X/.CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, rc) = (f(i, Field::Ra), f(i, Field::Rc));
                let (ty, wrap, hi) = (f(i, Field::Ty), flag(i, Field::W), flag(i, Field::Hi));
                let left = matches!(i.form, SHF_LR | SHF_LI);
                self.alu(w, i, exec, |w, l| {
                    let v = u64::from(w.r(rc, l)) << 32 | u64::from(w.r(ra, l));
                    let n = w.val(b, l);
                    let n = if wrap {
                        n & 31
                    } else if ty == 0 {
                        n.min(32)
                    } else {
                        n.min(64)
                    };
                    if left {
                        (v.checked_shl(n).unwrap_or(0) >> 32) as u32
                    } else {
                        let r = if ty == 3 {
                            ((v as i64) >> n.min(63)) as u64
                        } else {
                            v.checked_shr(n).unwrap_or(0)
                        };
                        if hi {
                            (r >> 32) as u32
                        } else {
                            r as u32
                        }
                    }
                });
            }
            LOP_R | LOP_C | LOP_I | LOP32I => {
                // `.CC`: ZF/SF from the result, CF and OF clear, as on ISET. `.X`: the high-word
                // step of a 64-bit test, zero only when this word is and CC's ZF says the low
                // one was (ptxas 11.8 tests a 64-bit AND for zero with `LOP.AND RZ.CC, lo, lo'`
                // then `LOP.AND.X.NZ P, RZ, hi, hi'`, curand's Sobol64 skip-ahead). An inference
                // from that use, checked by verify against the reference (piestimator).
                let (cc, x) = (flag(i, Field::Cc), flag(i, Field::X));
                if x && cc {
                    return Err(unsupported(addr, i, "LOP.X.CC"));
                }
                let b = if i.form == LOP32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let (ra, op) = (f(i, Field::Ra), f(i, Field::Op));
                let (ia, ib) = (flag(i, Field::Inva), flag(i, Field::Invb));
                let (pop, pd) = (f(i, Field::Pop), get(i, Field::Pd).unwrap_or(PT));
                for l in lanes(exec) {
                    let a = if ia { !w.r(ra, l) } else { w.r(ra, l) };
                    let bv = if ib { !w.val(b, l) } else { w.val(b, l) };
                    let r = match op {
                        0 => a & bv,
                        1 => a | bv,
                        2 => a ^ bv,
                        _ => bv,
                    };
                    w.set_r(f(i, Field::Rd), l, r);
                    let tested = if x && r == 0 && w.cc[l] & ZF == 0 {
                        1
                    } else {
                        r
                    };
                    w.set_p(pd, l, pred_op(pop, tested));
                    if cc {
                        w.cc[l] = zs(r);
                    }
                }
            }
            LOP3_R | LOP3_I | LOP3_C => {
                if flag(i, Field::X) || flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "LOP3.X/.CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, rc, lut) = (f(i, Field::Ra), f(i, Field::Rc), f(i, Field::Lut) as u8);
                let (pop, pd) = (f(i, Field::Pop), get(i, Field::Pd).unwrap_or(PT));
                for l in lanes(exec) {
                    let r = lop3(lut, w.r(ra, l), w.val(b, l), w.r(rc, l));
                    w.set_r(f(i, Field::Rd), l, r);
                    w.set_p(pd, l, pred_op(pop, r));
                }
            }

            // ---------------------------------------------------------- multiply
            XMAD_R | XMAD_I | XMAD_C | XMAD_CC => self.xmad(w, i, addr, exec)?,
            IMUL_R | IMUL_C | IMUL_I | IMUL32I => {
                if flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "IMUL.CC"));
                }
                let b = if i.form == IMUL32I {
                    Src::Val(f(i, Field::Imm) as u32)
                } else {
                    self.src_b(i, addr)?
                };
                let ra = f(i, Field::Ra);
                let (hi, sa, sb) = (flag(i, Field::Hi), flag(i, Field::Sa), flag(i, Field::Sb));
                // The full 64-bit product of the operands read as signed or unsigned.
                let wide = |v: u32, signed: bool| {
                    if signed {
                        i64::from(v as i32)
                    } else {
                        i64::from(v)
                    }
                };
                self.alu(w, i, exec, |w, l| {
                    let p = wide(w.r(ra, l), sa).wrapping_mul(wide(w.val(b, l), sb));
                    if hi {
                        (p >> 32) as u32
                    } else {
                        p as u32
                    }
                });
            }
            PRMT_R | PRMT_C | PRMT_I => {
                let mode = f(i, Field::Mode);
                if mode > 6 {
                    return Err(unsupported(addr, i, "PRMT mode 7"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, rc) = (f(i, Field::Ra), f(i, Field::Rc));
                self.alu(w, i, exec, |w, l| {
                    prmt(mode, w.r(ra, l), w.val(b, l), w.r(rc, l))
                })
            }

            // ---------------------------------------------------------- compare, select
            ISETP_R | ISETP_C | ISETP_I => {
                // .X: the high-word step of a wide compare, as for ISET.X.
                let x = flag(i, Field::X);
                let b = self.src_b(i, addr)?;
                let (ra, cmp, sgn) = (f(i, Field::Ra), f(i, Field::Cmp), flag(i, Field::Sgn));
                let (pacc, paccn, bop) =
                    (f(i, Field::Pacc), flag(i, Field::Paccn), f(i, Field::Bop));
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                for l in lanes(exec) {
                    let c = if x {
                        icmp_x(cmp, sgn, w.r(ra, l), w.val(b, l), w.cc[l])
                    } else {
                        icmp(cmp, sgn, w.r(ra, l), w.val(b, l))
                    };
                    let acc = w.p(pacc, l) != paccn;
                    w.set_p(pd0, l, bool_op(bop, c, acc));
                    w.set_p(pd1, l, bool_op(bop, !c, acc));
                }
            }
            ISET_R | ISET_C | ISET_I => {
                let b = self.src_b(i, addr)?;
                let x = flag(i, Field::X);
                let (ra, cmp, sgn) = (f(i, Field::Ra), f(i, Field::Cmp), flag(i, Field::Sgn));
                let (pacc, paccn, bop) =
                    (f(i, Field::Pacc), flag(i, Field::Paccn), f(i, Field::Bop));
                let (bf, cc, rd) = (flag(i, Field::Bf), flag(i, Field::Cc), f(i, Field::Rd));
                for l in lanes(exec) {
                    let c = if x {
                        icmp_x(cmp, sgn, w.r(ra, l), w.val(b, l), w.cc[l])
                    } else {
                        icmp(cmp, sgn, w.r(ra, l), w.val(b, l))
                    };
                    let r = match (bool_op(bop, c, w.p(pacc, l) != paccn), bf) {
                        (false, _) => 0,
                        (true, true) => 1.0f32.to_bits(),
                        (true, false) => u32::MAX,
                    };
                    w.set_r(rd, l, r);
                    if cc {
                        // ptxas pairs `ISET … RZ.CC` with `BRA CC.NEU`: CC from the result.
                        w.cc[l] = zs(r);
                    }
                }
            }
            ICMP_R | ICMP_C | ICMP_I => {
                let b = self.src_b(i, addr)?;
                let (ra, rc) = (f(i, Field::Ra), f(i, Field::Rc));
                let (cmp, sgn) = (f(i, Field::Cmp), flag(i, Field::Sgn));
                self.alu(w, i, exec, |w, l| {
                    if icmp(cmp, sgn, w.r(rc, l), 0) {
                        w.r(ra, l)
                    } else {
                        w.val(b, l)
                    }
                });
            }
            PSET => {
                let (pa, pan) = (f(i, Field::Pa), flag(i, Field::Pan));
                let (pb, pbn) = (f(i, Field::Pb), flag(i, Field::Pbn));
                let (pc, pcn) = (f(i, Field::Pc), flag(i, Field::Pcn));
                let (b1, b2) = (f(i, Field::Bop1), f(i, Field::Bop2));
                let one = if flag(i, Field::Bf) {
                    1.0f32.to_bits()
                } else {
                    u32::MAX
                };
                self.alu(w, i, exec, |w, l| {
                    let t = bool_op(b1, w.p(pa, l) != pan, w.p(pb, l) != pbn);
                    if bool_op(b2, t, w.p(pc, l) != pcn) {
                        one
                    } else {
                        0
                    }
                });
            }
            R2P_I => {
                if flag(i, Field::Ccm) {
                    return Err(unsupported(addr, i, "R2P CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, shift) = (f(i, Field::Ra), 8 * f(i, Field::Bsel));
                for l in lanes(exec) {
                    let bits = w.r(ra, l) >> shift;
                    let mask = w.val(b, l);
                    for p in 0..7u64 {
                        if mask >> p & 1 != 0 {
                            w.set_p(p, l, bits >> p & 1 != 0);
                        }
                    }
                }
            }
            P2R_I | P2R_R | P2R_C => {
                if flag(i, Field::Ccm) {
                    return Err(unsupported(addr, i, "P2R CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, shift) = (f(i, Field::Ra), 8 * f(i, Field::Bsel));
                self.alu(w, i, exec, |w, l| {
                    let mask = (w.val(b, l) & 0xff) << shift;
                    let pr = u32::from(w.preds[l] & 0x7f) << shift;
                    (w.r(ra, l) & !mask) | (pr & mask)
                });
            }
            B2R => {
                let (rd, pd) = (f(i, Field::Rd), f(i, Field::Pd));
                let red = self.red_result;
                let Some(mode) = red.mode else {
                    return Err(unsupported(addr, i, "B2R.RESULT before any BAR.RED"));
                };
                // Rd is only known to hold the count after .POPC, Pd the vote after .AND/.OR
                // (the forms ptxas emits); other combinations are not modelled.
                if (mode == 0 && pd != PT) || (mode != 0 && rd != RZ) {
                    return Err(unsupported(addr, i, "this B2R.RESULT after this BAR.RED"));
                }
                for l in lanes(exec) {
                    w.set_r(rd, l, red.count);
                    w.set_p(pd, l, if mode == 1 { red.all } else { red.any });
                }
            }
            PSETP => {
                let (pa, pan) = (f(i, Field::Pa), flag(i, Field::Pan));
                let (pb, pbn) = (f(i, Field::Pb), flag(i, Field::Pbn));
                let (pc, pcn) = (f(i, Field::Pc), flag(i, Field::Pcn));
                let (b1, b2) = (f(i, Field::Bop1), f(i, Field::Bop2));
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                for l in lanes(exec) {
                    let t = bool_op(b1, w.p(pa, l) != pan, w.p(pb, l) != pbn);
                    let c = w.p(pc, l) != pcn;
                    w.set_p(pd0, l, bool_op(b2, t, c));
                    w.set_p(pd1, l, bool_op(b2, !t, c));
                }
            }
            IMNMX_R | IMNMX_C | IMNMX_I => {
                if f(i, Field::Mode) != 0 || flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "IMNMX .XLO/.XMED/.XHI/.CC"));
                }
                let b = self.src_b(i, addr)?;
                let (ra, sgn) = (f(i, Field::Ra), flag(i, Field::Sgn));
                let (pacc, paccn) = (f(i, Field::Pacc), flag(i, Field::Paccn));
                self.alu(w, i, exec, |w, l| {
                    let (a, bv) = (w.r(ra, l), w.val(b, l));
                    let min = w.p(pacc, l) != paccn;
                    let a_less = if sgn {
                        (a as i32) < (bv as i32)
                    } else {
                        a < bv
                    };
                    if a_less == min {
                        a
                    } else {
                        bv
                    }
                });
            }

            // ---------------------------------------------------------- bit fields
            BFE_R | BFE_C | BFE_I => {
                if flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "BFE.CC"));
                }
                let b = if i.form == BFE_I {
                    Src::Val(f(i, Field::ImmImm20s) as u32 & 0xfffff)
                } else {
                    self.src_b(i, addr)?
                };
                let (ra, sgn) = (f(i, Field::Ra), flag(i, Field::Sgn));
                // .BREV reverses the source before the extraction: ptxas's `brev.b32` is
                // `BFE.U32.BREV d, a, 0x2000` (the whole word), where either order agrees.
                let brev = flag(i, Field::Brev);
                self.alu(w, i, exec, |w, l| {
                    let ctl = w.val(b, l);
                    let a = w.r(ra, l);
                    let a = if brev { a.reverse_bits() } else { a };
                    bfe(a, ctl & 0xff, (ctl >> 8) & 0xff, sgn)
                });
            }
            BFI_R | BFI_C | BFI_I | BFI_CC => {
                if flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "BFI.CC"));
                }
                let b = self.src_b(i, addr)?;
                let c = self.src_c(i, addr)?;
                let ra = f(i, Field::Ra);
                self.alu(w, i, exec, |w, l| {
                    let ctl = w.val(b, l);
                    let (pos, len) = (ctl & 0xff, (ctl >> 8) & 0xff);
                    let base = w.val(c, l);
                    if pos >= 32 || len == 0 {
                        return base;
                    }
                    let len = len.min(32 - pos);
                    let mask = (((1u64 << len) - 1) as u32) << pos;
                    (base & !mask) | ((w.r(ra, l) << pos) & mask)
                });
            }
            POPC_R | POPC_C | POPC_I => {
                let b = self.src_b(i, addr)?;
                let inv = flag(i, Field::Invb);
                self.alu(w, i, exec, |w, l| {
                    let v = w.val(b, l);
                    (if inv { !v } else { v }).count_ones()
                });
            }
            VADD | VADD_I | VABSDIFF | VABSDIFF_I | VMNMX | VMNMX_I | VSET | VSHL | VSHL_I
            | VSHR | VSHR_I | VMAD | VMAD_I | VMAD32 | VMAD32_I => {
                let (ra, rb, rc) = (f(i, Field::Ra), f(i, Field::Rb), f(i, Field::Rc));
                let imm = i.get(Field::Imm).map(|v| v as u32);
                // Check the fields once (on zeros), then run every lane.
                super::video::video(i, 0, 0, 0).map_err(|e| unsupported(addr, i, e))?;
                self.alu(w, i, exec, |w, l| {
                    let b = imm.unwrap_or_else(|| w.r(rb, l));
                    super::video::video(i, w.r(ra, l), b, w.r(rc, l)).unwrap_or(0)
                });
            }
            IMAD_R => {
                // Only ptxas's mad.hi.sat.s32 form: IMAD.HI.SAT (signed), no negation, .X, .CC.
                let only = flag(i, Field::Hi)
                    && flag(i, Field::Sat)
                    && flag(i, Field::Sa)
                    && flag(i, Field::Sb)
                    && !flag(i, Field::Nega)
                    && !flag(i, Field::Negc)
                    && !flag(i, Field::X)
                    && !flag(i, Field::Cc);
                if !only {
                    return Err(unsupported(addr, i, "IMAD other than IMAD.HI.SAT"));
                }
                let (ra, rb, rc) = (f(i, Field::Ra), f(i, Field::Rb), f(i, Field::Rc));
                self.alu(w, i, exec, |w, l| {
                    let p = i64::from(w.r(ra, l) as i32) * i64::from(w.r(rb, l) as i32);
                    let t = (p >> 32) + i64::from(w.r(rc, l) as i32);
                    t.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
                });
            }
            VABSDIFF4 => {
                // Four byte lanes |A.b[i] - B.b[i]| (A's bytes signed with .S8, B's unsigned:
                // the only forms decoded); .ACC adds their sum to C, otherwise the lanes'
                // low bytes are the result.
                let (ra, rb, rc) = (f(i, Field::Ra), f(i, Field::Rb), f(i, Field::Rc));
                let (sa, red) = (flag(i, Field::As), f(i, Field::Red));
                if red > 1 {
                    return Err(unsupported(addr, i, "this VABSDIFF4 reduction"));
                }
                self.alu(w, i, exec, |w, l| {
                    let (a, b, c) = (w.r(ra, l), w.r(rb, l), w.r(rc, l));
                    let lane = |k: u32| {
                        let x = (a >> (8 * k)) as u8;
                        let x = if sa { x as i8 as i32 } else { x as i32 };
                        let y = (b >> (8 * k)) as u8 as i32;
                        (x - y).unsigned_abs()
                    };
                    if red == 1 {
                        (0..4).fold(c, |s, k| s.wrapping_add(lane(k)))
                    } else {
                        (0..4).fold(0, |d, k| d | (lane(k) & 0xff) << (8 * k))
                    }
                });
            }
            FLO_R | FLO_C | FLO_I => {
                if flag(i, Field::Cc) {
                    return Err(unsupported(addr, i, "FLO.CC"));
                }
                let b = self.src_b(i, addr)?;
                let (inv, sh, sgn) = (
                    flag(i, Field::Invb),
                    flag(i, Field::Sh),
                    flag(i, Field::Sgn),
                );
                self.alu(w, i, exec, |w, l| {
                    let mut v = w.val(b, l);
                    if inv {
                        v = !v;
                    }
                    if sgn && (v as i32) < 0 {
                        v = !v;
                    }
                    if v == 0 {
                        u32::MAX
                    } else if sh {
                        v.leading_zeros()
                    } else {
                        31 - v.leading_zeros()
                    }
                });
            }
            I2I_R | I2I_C | I2I_I => self.i2i(w, i, addr, exec)?,

            // ---------------------------------------------------------- memory
            LDG | STG | LD | ST | LDS | STS | LDL | STL | LDC => self.memory(w, i, addr, exec)?,

            // ---------------------------------------------------------- FP32
            FADD_R | FADD_C | FADD_I | FADD32I | FMUL_R | FMUL_C | FMUL_I | FMUL32I | FFMA_R
            | FFMA_C | FFMA_CC | FFMA_I | FSETP_R | FSETP_C | FSETP_I | FMNMX_R | FMNMX_C
            | FMNMX_I | DADD_R | DADD_C | DADD_I | DMUL_R | DMUL_C | DMUL_I | DFMA_R | DFMA_C
            | DFMA_CC | DFMA_I | DSETP_R | DSETP_C | DSETP_I | DMNMX_R | DMNMX_C | DMNMX_I
            | I2F_R | I2F_C | I2F_I | F2I_R | F2I_C | F2I_I | F2F_R | F2F_C | F2F_I | FSET_R
            | FSET_C | FSET_I | DSET_R | DSET_C | DSET_I | FCHK_R | FCHK_C | FCHK_I | FCMP_R
            | FCMP_C | FCMP_I | FCMP_CR => self.float(w, i, addr, exec)?,
            HADD2_R | HMUL2_R | HFMA2_R | HSETP2_R | HSET2_R => self.half(w, i, addr, exec)?,
            VOTE => {
                let (pa, pan, pd) = (f(i, Field::Pa), flag(i, Field::Pan), f(i, Field::Pd));
                let mut ballot = 0u32;
                for l in lanes(exec) {
                    if w.p(pa, l) != pan {
                        ballot |= 1 << l;
                    }
                }
                let v = match f(i, Field::Mode) {
                    0 => ballot == exec,
                    1 => ballot != 0,
                    _ => ballot == exec || ballot == 0,
                };
                let rd = f(i, Field::Rd);
                for l in lanes(exec) {
                    w.set_r(rd, l, ballot);
                    w.set_p(pd, l, v);
                }
            }
            SHFL_RI | SHFL_II | SHFL_RR | SHFL_IR => self.shfl(w, i, exec),
            ATOM | ATOM_CAS | RED | ATOMS | ATOMS_CAS => self.atomic(w, i, addr, exec)?,
            MUFU => self.mufu(w, i, addr, exec)?,
            CSETP => {
                // Like ISETP with the CC test as the comparison: Pd0 = test BOP Pacc,
                // Pd1 = !test BOP Pacc.
                let test = f(i, Field::Cct) as u8;
                let (pd0, pd1) = (f(i, Field::Pd0), f(i, Field::Pd1));
                let (pacc, paccn, bop) =
                    (f(i, Field::Pacc), flag(i, Field::Paccn), f(i, Field::Bop));
                for l in lanes(exec) {
                    let Some(t) = cc_test(test, w.cc[l]) else {
                        return Err(unsupported(addr, i, "this CSETP CC test"));
                    };
                    let acc = w.p(pacc, l) != paccn;
                    w.set_p(pd0, l, bool_op(bop, t, acc));
                    w.set_p(pd1, l, bool_op(bop, !t, acc));
                }
            }
            SUST_D_I | SUST_D_R | SULD_D_I | SULD_D_R | SURED_D_I | SURED_D_R
                if flag(i, Field::Ba) =>
            {
                self.surface(w, i, addr, exec)?
            }
            SUST_D_I | SUST_D_R | SUST_P_I | SUST_P_R | SULD_D_I | SULD_D_R | SULD_P_I
            | SULD_P_R | SURED_D_I | SURED_D_R | SURED_P_I | SURED_P_R | SUATOM_D_I
            | SUATOM_CAS_I => {
                return Err(unsupported(addr, i, "a surface instruction"));
            }
            TEXS | TLDS | TXQ_I | TEX | TLD_I => self.texture(w, i, addr, exec)?,
            TEX_B | TLD_B | TXQ_B => self.texture_bindless(w, i, addr, exec)?,
            TLD4S | TLD4_I | TLD4_B => self.gather(w, i, addr, exec)?,
            TXD_I | TXD_B => self.texture_grad(w, i, addr, exec)?,
            RRO_R | RRO_C | RRO_I => self.rro(w, i, addr, exec)?,
            _ => return Err(unsupported(addr, i, "this instruction")),
        }
        Ok(())
    }

    /// SHFL (the PTX `shfl` rule): b = lane or offset (5 bits), c = clamp (bits 0..4) and
    /// segment mask (bits 8..12). Every lane first computes its source lane j and whether it
    /// is in range (Pd); an out-of-range lane gets its own Ra. All reads happen before any
    /// write. A source lane that is not executing is read all the same (PTX leaves that value
    /// undefined).
    fn shfl(&mut self, w: &mut Warp, i: &Inst, exec: u32) {
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
            let (j, ok) = match mode {
                0 => {
                    let j = min_lane | (b & !mask);
                    (j, j <= max_lane)
                }
                1 => (lane.wrapping_sub(b), lane >= b && lane - b >= max_lane),
                2 => (lane + b, lane + b <= max_lane),
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

    /// ATOM/RED (global; `.E` = 64-bit address) and ATOMS (shared, offset in words): ADD,
    /// MIN, MAX (signed with .S32/.S64), INC, DEC (32-bit only), AND, OR, XOR, EXCH on 32- or
    /// 64-bit values (a 64-bit operand or result is a register pair), and CAS (Rb = compare,
    /// then the new value: Rb+1, or Rb+2:Rb+3 with .64). Lanes act one after another in lane
    /// order, so the result is one of the orders hardware may pick. `.F32.FTZ.RN` ADD (global)
    /// adds f32s, rounding to nearest and flushing subnormals; other float and 128-bit
    /// forms are Unsupported.
    /// `SULD.D.BA`, `SUST.D.BA`, `SURED.D.BA` ([`crate::surface`]): per lane, the surface
    /// from the slot's bank-0 word (`_I`) or `Rc` (`_R`), the coordinates from `Ra..`, then
    /// an access of the size's bytes at the address `surface::locate` gives.
    fn surface(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        use crate::surface::{self, SurfClamp, SurfError, SurfRedOp, SurfShape};
        use Form::*;
        let (load, red) = (
            matches!(i.form, SULD_D_I | SULD_D_R),
            matches!(i.form, SURED_D_I | SURED_D_R),
        );
        let by_slot = matches!(i.form, SULD_D_I | SUST_D_I | SURED_D_I);
        let shape = match f(i, Field::Dim) {
            0 => SurfShape::D1,
            2 => SurfShape::A1,
            3 => SurfShape::D2,
            4 => SurfShape::A2,
            5 => SurfShape::D3,
            _ => return Err(unsupported(addr, i, "this surface dimensionality")),
        };
        let clamp = match f(i, Field::Clamp) {
            0 => SurfClamp::Zero,
            1 => SurfClamp::Clamp,
            2 => SurfClamp::Trap,
            _ => return Err(unsupported(addr, i, "this surface clamp mode")),
        };
        // (bytes, reduction, signed)
        let (size, op) = if red {
            let (wide, signed) = match f(i, Field::Type) {
                0 => (false, false),
                1 => (false, true),
                2 => (true, false),
                5 => (true, true),
                _ => return Err(unsupported(addr, i, "this SURED type")),
            };
            let op = match f(i, Field::Op) {
                0 => SurfRedOp::Add,
                1 => SurfRedOp::Min { signed },
                2 => SurfRedOp::Max { signed },
                5 => SurfRedOp::And,
                6 => SurfRedOp::Or,
                _ => return Err(unsupported(addr, i, "this SURED operation")),
            };
            (if wide { 8 } else { 4 }, Some(op))
        } else {
            let size = match f(i, Field::Size) {
                0 => 1,
                2 => 2,
                4 => 4,
                5 => 8,
                6 => 16,
                _ => return Err(unsupported(addr, i, "a signed surface access size")),
            };
            (size, None)
        };
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        let words = (size / 4).max(1);
        let n = shape.coords() as u64;
        if (rd != RZ && rd + u64::from(words) > RZ) || (ra != RZ && ra + n > RZ) {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        for l in lanes(exec) {
            let handle = if by_slot {
                // A slot past bank 0 holds no handle: the access names no surface.
                u64::from(
                    self.mem
                        .const32(addr, 0, f(i, Field::Tid) * 4)
                        .unwrap_or(u32::MAX),
                )
            } else {
                u64::from(w.r(f(i, Field::Rc), l))
            };
            let coords: Vec<i32> = (0..n)
                .map(|k| if ra == RZ { 0 } else { w.r(ra + k, l) as i32 })
                .collect();
            let desc = surface::by_handle(&self.mem.surfaces, handle)
                .map_err(|e| unsupported(addr, i, &e.to_string()))?
                .clone();
            let at = match surface::locate(&desc, shape, clamp, &coords, size) {
                Ok(a) => a,
                Err(SurfError::Trap) => return Err(SimError::Trap { addr }),
                Err(e) => return Err(unsupported(addr, i, &e.to_string())),
            };
            let reg = |w: &Warp, k: u32| {
                if rd == RZ {
                    0
                } else {
                    w.r(rd + u64::from(k), l)
                }
            };
            match (at, load) {
                (None, true) => {
                    for k in 0..words {
                        if rd != RZ {
                            w.set_r(rd + u64::from(k), l, 0);
                        }
                    }
                }
                (None, false) => {}
                (Some(at), true) => {
                    let m = self.mem.bytes(addr, Space::Global, at, size)?;
                    let mut buf = [0u8; 16];
                    buf[..size as usize].copy_from_slice(m);
                    for k in 0..words {
                        let x = u32::from_le_bytes(
                            buf[4 * k as usize..4 * k as usize + 4].try_into().unwrap(),
                        );
                        if rd != RZ {
                            w.set_r(rd + u64::from(k), l, x);
                        }
                    }
                }
                (Some(at), false) => {
                    let mut buf = [0u8; 16];
                    let vwords = if red { size / 4 } else { words };
                    for k in 0..vwords {
                        buf[4 * k as usize..4 * k as usize + 4]
                            .copy_from_slice(&reg(w, k).to_le_bytes());
                    }
                    let m = self.mem.bytes(addr, Space::Global, at, size)?;
                    if let Some(op) = op {
                        let mut old = [0u8; 8];
                        old[..size as usize].copy_from_slice(m);
                        let v = u64::from_le_bytes(buf[..8].try_into().unwrap());
                        let new = op.apply(u64::from_le_bytes(old), v, size);
                        m.copy_from_slice(&new.to_le_bytes()[..size as usize]);
                    } else {
                        m.copy_from_slice(&buf[..size as usize]);
                    }
                    self.mem.note_write(addr, Space::Global, at, size);
                }
            }
        }
        Ok(())
    }

    fn atomic(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        use Form::*;
        let shared = matches!(i.form, ATOMS | ATOMS_CAS);
        let cas = matches!(i.form, ATOM_CAS | ATOMS_CAS);
        let red = i.form == RED;
        // (op, 64-bit, signed); CAS is op 9 here, f32 add (ATOM/RED .F32.FTZ.RN) op 10.
        let (op, wide_val, signed) = if cas {
            (9, flag(i, Field::W64), false)
        } else {
            let (ty, op) = (f(i, Field::Ty), f(i, Field::Op));
            // ATOMS numbers its types -, .S32, .U64, .S64; ATOM and RED -, .S32, .U64,
            // .F32, .U128, .S64.
            let (w64, signed) = match (shared, ty) {
                (_, 0) => (false, false),
                (_, 1) => (false, true),
                (_, 2) => (true, false),
                (true, 3) | (false, 5) => (true, true),
                (false, 3) if op == 0 => (false, false),
                _ => return Err(unsupported(addr, i, "a float or 128-bit atomic")),
            };
            let op = if !shared && ty == 3 { 10 } else { op };
            if (op > 8 && op != 10) || (w64 && (op == 3 || op == 4)) {
                return Err(unsupported(addr, i, "this atomic operation"));
            }
            (op, w64, signed)
        };
        let size = if wide_val { 8 } else { 4 };
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        // RED's value is in the Rd field; the others read Rb.
        let rb = if red { rd } else { f(i, Field::Rb) };
        let nregs = if wide_val { 2 } else { 1 } * if cas { 2 } else { 1 };
        if (rb != RZ && rb + nregs > RZ) || (!red && rd != RZ && wide_val && rd + 2 > RZ) {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        let off = if shared {
            f(i, Field::Off) * 4
        } else {
            sext(f(i, Field::Off), 20)
        };
        let wide_addr = !shared && flag(i, Field::E);
        // A 32- or 64-bit operand from register `r` (a pair for 64 bits; RZ reads 0).
        let val = |w: &Warp, r: u64, l: usize| {
            let lo = u64::from(w.r(r, l));
            if wide_val && r != RZ {
                lo | u64::from(w.r(r + 1, l)) << 32
            } else {
                lo
            }
        };
        for l in lanes(exec) {
            let base = if wide_addr && ra != RZ {
                u64::from(w.r(ra + 1, l)) << 32 | u64::from(w.r(ra, l))
            } else {
                u64::from(w.r(ra, l))
            };
            let at = if wide_addr {
                base.wrapping_add(off)
            } else {
                base.wrapping_add(off) & 0xffff_ffff
            };
            let space = if shared { Space::Shared } else { Space::Global };
            let b = val(w, rb, l);
            let swap = if cas {
                val(w, if rb == RZ { RZ } else { rb + nregs / 2 }, l)
            } else {
                0
            };
            let m = self.mem.bytes(addr, space, at, size)?;
            let mut buf = [0u8; 8];
            buf[..size as usize].copy_from_slice(m);
            let old = u64::from_le_bytes(buf);
            let new = match op {
                9 if old == b => swap,
                9 => old,
                10 => {
                    use crate::ir::float::{add, FloatFmt, Round};
                    add(FloatFmt::F32, old, b, Round::Rn, true)
                }
                _ if wide_val => atomic_op64(op, signed, old, b),
                _ => u64::from(atomic_op(op, signed, old as u32, b as u32)),
            };
            m.copy_from_slice(&new.to_le_bytes()[..size as usize]);
            self.mem.note_write(addr, space, at, size);
            if !red {
                w.set_r(rd, l, old as u32);
                if wide_val && rd != RZ {
                    w.set_r(rd + 1, l, (old >> 32) as u32);
                }
            }
        }
        Ok(())
    }

    /// Write a 32-bit result per executing lane.
    pub(super) fn alu(
        &self,
        w: &mut Warp,
        i: &Inst,
        exec: u32,
        mut op: impl FnMut(&Warp, usize) -> u32,
    ) {
        let rd = f(i, Field::Rd);
        for l in lanes(exec) {
            let v = op(w, l);
            w.set_r(rd, l, v);
        }
    }

    /// Write the low 32 bits of an addition to Rd, and its carry to CC with `.CC`.
    fn write_sum(&self, w: &mut Warp, i: &Inst, l: usize, sum: u64) {
        w.set_r(f(i, Field::Rd), l, sum as u32);
        if flag(i, Field::Cc) {
            w.cc[l] = flags(sum >> 32 != 0, false, sum as u32);
        }
    }

    fn lea(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let b = self.src_b(i, addr)?;
        let hi = matches!(i.form, Form::LEA_HI_R | Form::LEA_HI_C);
        let (ra, rc, rd) = (f(i, Field::Ra), f(i, Field::Rc), f(i, Field::Rd));
        let s = f(i, Field::S) as u32;
        let (neg, x, cc, plg) = (
            flag(i, Field::Nega),
            flag(i, Field::X),
            flag(i, Field::Cc),
            get(i, Field::Plg).unwrap_or(PT),
        );
        let sw = SHARED_WINDOW_BASE as u32;
        let detect = |lo: u32| lo & 0xff00_0000 == sw;
        for l in lanes(exec) {
            let off = if hi {
                u64::from(w.r(rc, l)) << 32 | u64::from(w.r(ra, l))
            } else {
                u64::from(w.r(ra, l))
            };
            let off = if neg { off.wrapping_neg() } else { off };
            let scaled = off << s;
            let term = if hi {
                scaled >> 32
            } else {
                scaled & 0xffff_ffff
            };
            let cin = if x { w.cf(l) } else { 0 };
            let sum = term + u64::from(w.val(b, l)) + cin;
            let r = sum as u32;
            let carry = sum >> 32 != 0;
            // The shared-window detect of the (64-bit) address this LEA completes.
            let in_window = if hi {
                r == 0 && w.cc[l] & OF == 0
            } else {
                detect(r)
            };
            w.set_r(rd, l, r);
            // Plg is the same bit as CC.OF: "not in the shared window" (see the essay: ptxas's
            // generic atomics branch to ATOMS when it is false).
            w.set_p(plg, l, !in_window);
            if cc {
                w.cc[l] = flags(carry, !in_window, r);
            }
        }
        Ok(())
    }

    fn xmad(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let b = self.src_b(i, addr)?;
        let c = self.src_c(i, addr)?;
        let (ra, rd) = (f(i, Field::Ra), f(i, Field::Rd));
        let (sa, sb, ah, bh) = (
            flag(i, Field::Sa),
            flag(i, Field::Sb),
            flag(i, Field::Ah),
            flag(i, Field::Bh),
        );
        let (psl, mrg, x, cc, mode) = (
            flag(i, Field::Psl),
            flag(i, Field::Mrg),
            flag(i, Field::X),
            flag(i, Field::Cc),
            f(i, Field::Mode),
        );
        if mode > 4 {
            return Err(unsupported(addr, i, "XMAD mode 5..7"));
        }
        let h16 = |v: u32, high: bool, signed: bool| -> u32 {
            let h = if high { v >> 16 } else { v & 0xffff };
            if signed {
                h as u16 as i16 as i32 as u32
            } else {
                h
            }
        };
        for l in lanes(exec) {
            let av = w.r(ra, l);
            let bv = w.val(b, l);
            let p = h16(av, ah, sa).wrapping_mul(h16(bv, bh, sb));
            let p = if psl { p << 16 } else { p };
            let cv = w.val(c, l);
            let cv = match mode {
                1 => cv & 0xffff,
                2 => cv >> 16,
                3 => cv.wrapping_sub(csfu_fixup(av, ah, sa, bv, bh, sb) << 16),
                4 => cv.wrapping_add(bv << 16),
                _ => cv,
            };
            let sum = u64::from(p) + u64::from(cv) + if x { w.cf(l) } else { 0 };
            let mut r = sum as u32;
            if mrg {
                r = (r & 0xffff) | (bv << 16);
            }
            w.set_r(rd, l, r);
            if cc {
                w.cc[l] = flags(sum >> 32 != 0, false, r);
            }
        }
        Ok(())
    }

    fn i2i(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        if flag(i, Field::Cc) {
            return Err(unsupported(addr, i, "I2I.CC"));
        }
        let b = self.src_b(i, addr)?;
        let (dt, st, bsel) = (f(i, Field::Dt), f(i, Field::St), f(i, Field::Bsel));
        let (neg, abs, sat) = (
            flag(i, Field::Negb),
            flag(i, Field::Absb),
            flag(i, Field::Sat),
        );
        // (bits, signed) of an I2I type code.
        let ty = |t: u64| (8u32 << (t & 3), t & 4 != 0);
        let (sbits, ssigned) = ty(st);
        let (dbits, dsigned) = ty(dt);
        self.alu(w, i, exec, |w, l| {
            let raw = u64::from(w.val(b, l) >> (8 * bsel));
            let mut v = if ssigned {
                sext(raw, sbits) as i64
            } else {
                (raw & ((1u64 << sbits) - 1)) as i64
            };
            if abs {
                v = v.abs();
            }
            if neg {
                v = -v;
            }
            let (lo, hi) = if dsigned {
                (-(1i64 << (dbits - 1)), (1i64 << (dbits - 1)) - 1)
            } else {
                (0, (1i64 << dbits) - 1)
            };
            if sat {
                v = v.clamp(lo, hi);
            }
            let bits = (v as u64) & ((1u64 << dbits) - 1);
            if dsigned {
                sext(bits, dbits) as u32
            } else {
                bits as u32
            }
        });
        Ok(())
    }

    fn s2r(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        let sr = f(i, Field::Sr);
        let block = self.launch.block;
        let ctaid = self.ctaid;
        let steps = self.steps;
        let smem = self.mem.shared_size as u32;
        let warp = w.index as u32;
        let reads = w.timer_reads;
        let tid = |l: usize| {
            let t = warp * 32 + l as u32;
            [
                t % block[0],
                t / block[0] % block[1],
                t / (block[0] * block[1]),
            ]
        };
        let value = |l: usize| -> Option<u32> {
            let lt = (1u64 << l) as u32;
            Some(match sr {
                0x00 => l as u32,
                0x01 => steps as u32,
                // The clock model shared with `ir::eval` (its essay, "Clocks and timers"):
                // reads of the low words count, per lane, below.
                0x50 | 0x52 => {
                    crate::ir::eval::timer_value(sr == 0x52, reads[usize::from(sr == 0x52)][l]).0
                }
                0x51 | 0x53 => crate::ir::eval::timer_value(sr == 0x53, 0).1,
                // Performance-monitor counters SR_PM0..7 and SR_PM_HI0..7: no model of the
                // events; they read as the step counter, like the clocks (no test compares
                // them).
                0x04..=0x0b => steps as u32,
                0x48..=0x4f => (steps >> 32) as u32,
                0x02 => 1 << 20 | 64 << 8,
                0x03 => (warp & 63) << 8,
                0x20 => {
                    let t = tid(l);
                    t[0] | t[1] << 16 | t[2] << 26
                }
                0x21..=0x23 => tid(l)[(sr - 0x21) as usize],
                0x25..=0x27 => ctaid[(sr - 0x25) as usize],
                0x32 => smem,
                0x38 => lt,
                0x39 => lt.wrapping_sub(1),
                0x3a => lt.wrapping_sub(1) | lt,
                0x3b => !(lt.wrapping_sub(1) | lt),
                0x3c => !lt.wrapping_sub(1),
                _ => return None,
            })
        };
        if i.form == Form::CS2R && !matches!(sr, 0x50..=0x53 | 0x04..=0x0b | 0x48..=0x4f) {
            return Err(unsupported(addr, i, "this CS2R special register"));
        }
        let rd = f(i, Field::Rd);
        for l in lanes(exec) {
            let Some(v) = value(l) else {
                return Err(unsupported(addr, i, "this special register"));
            };
            w.set_r(rd, l, v);
            if matches!(sr, 0x50 | 0x52) {
                w.timer_reads[usize::from(sr == 0x52)][l] += 1;
            }
        }
        Ok(())
    }

    fn memory(&mut self, w: &mut Warp, i: &Inst, addr: u64, exec: u32) -> Result<(), SimError> {
        use Form::*;
        let size_code = f(i, Field::Size);
        let (bytes, signed): (u32, bool) = match size_code {
            0 => (1, false),
            1 => (1, true),
            2 => (2, false),
            3 => (2, true),
            4 => (4, false),
            5 => (8, false),
            _ => (16, false),
        };
        let load = matches!(i.form, LDG | LD | LDS | LDL | LDC);
        let (rd, ra) = (f(i, Field::Rd), f(i, Field::Ra));
        let nregs = bytes.div_ceil(4) as u64;
        if rd != RZ && rd + nregs > RZ {
            return Err(unsupported(addr, i, "a register range past R254"));
        }
        let off = {
            let fi = i
                .slot(Field::Off)
                .map(|k| i.info().fields[k].len)
                .unwrap_or(0);
            sext(f(i, Field::Off), fi.max(1))
        };
        let wide = flag(i, Field::E);
        let generic_p = get(i, Field::P).unwrap_or(PT);
        if matches!(i.form, LDC) && f(i, Field::Mode) != 0 {
            return Err(unsupported(addr, i, "LDC .IL/.IS/.ISL"));
        }
        for l in lanes(exec) {
            let base = if wide && ra != RZ {
                u64::from(w.r(ra + 1, l)) << 32 | u64::from(w.r(ra, l))
            } else {
                u64::from(w.r(ra, l))
            };
            let at = if wide {
                base.wrapping_add(off)
            } else {
                base.wrapping_add(off) & 0xffff_ffff
            };
            let thread = w.index * 32 + l;
            let (space, at) = match i.form {
                LDG | STG => (Space::Global, at),
                LDS | STS => (Space::Shared, at),
                LDL | STL => (Space::Local(thread), at),
                LDC => (Space::Const(f(i, Field::Bank) as u8), at),
                _ => {
                    // P true (PT by default): decode the windows; false: Plg said "in the
                    // shared window", which had better be so.
                    let decode = w.p(generic_p, l);
                    let in_window = |b: u64| at >= b && at - b < WINDOW_SIZE;
                    if !decode && !in_window(SHARED_WINDOW_BASE) {
                        return Err(SimError::PlgMismatch { addr, at });
                    }
                    if in_window(SHARED_WINDOW_BASE) {
                        (Space::Shared, at - SHARED_WINDOW_BASE)
                    } else if in_window(LOCAL_WINDOW_BASE) {
                        (Space::Local(thread), at - LOCAL_WINDOW_BASE)
                    } else if in_window(CONST_WINDOW_BASE) {
                        // `generic(x)` of a `.const` variable (an address in an initializer):
                        // bank 3, read-only.
                        if !load {
                            return Err(SimError::Unsupported {
                                addr,
                                what: format!("a generic store into the const window (0x{at:x})"),
                            });
                        }
                        (Space::Const(3), at - CONST_WINDOW_BASE)
                    } else {
                        (Space::Global, at)
                    }
                }
            };
            if load {
                let m = self.mem.bytes(addr, space, at, bytes)?;
                let mut buf = [0u8; 16];
                buf[..bytes as usize].copy_from_slice(m);
                if bytes < 4 {
                    let v = u64::from(u16::from_le_bytes([buf[0], buf[1]]))
                        & ((1u64 << (8 * bytes)) - 1);
                    let v = if signed { sext(v, 8 * bytes) } else { v };
                    w.set_r(rd, l, v as u32);
                } else if rd != RZ {
                    for k in 0..nregs {
                        let o = 4 * k as usize;
                        let v = u32::from_le_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
                        w.set_r(rd + k, l, v);
                    }
                }
            } else {
                let mut buf = [0u8; 16];
                for k in 0..nregs {
                    let v = if rd == RZ { 0 } else { w.r(rd + k, l) };
                    buf[4 * k as usize..4 * k as usize + 4].copy_from_slice(&v.to_le_bytes());
                }
                let m = self.mem.bytes(addr, space, at, bytes)?;
                m.copy_from_slice(&buf[..bytes as usize]);
                self.mem.note_write(addr, space, at, bytes);
            }
        }
        Ok(())
    }
}

impl Warp {
    pub(super) fn val(&self, s: Src, lane: usize) -> u32 {
        match s {
            Src::Reg(r) => self.r(r, lane),
            Src::Val(v) => v,
        }
    }
}

pub(super) fn unsupported(addr: u64, i: &Inst, what: &str) -> SimError {
    SimError::Unsupported {
        addr,
        what: format!("{what} ({})", crate::sm50::print(i, addr, 0)),
    }
}

/// One addend of a 33-bit sum: a negated operand is `~x + 1`, or `~x` inside an .X chain,
/// where the +1 (or the borrow) comes in through CC.CF.
fn add_term(v: u64, neg: bool, x: bool) -> u64 {
    if !neg {
        v
    } else if x {
        !v & 0xffff_ffff
    } else {
        (!v & 0xffff_ffff) + 1
    }
}

/// The new memory value of a 32-bit atomic `op` (ATOM's encoding) on `old` with operand `b`.
/// INC and DEC wrap as PTX says: INC gives 0 once old >= b, DEC gives b when old is 0 or
/// above b.
fn atomic_op(op: u64, signed: bool, old: u32, b: u32) -> u32 {
    match op {
        0 => old.wrapping_add(b),
        1 if signed => (old as i32).min(b as i32) as u32,
        1 => old.min(b),
        2 if signed => (old as i32).max(b as i32) as u32,
        2 => old.max(b),
        3 => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        4 => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        5 => old & b,
        6 => old | b,
        7 => old ^ b,
        _ => b,
    }
}

/// [`atomic_op`] on 64-bit values (no INC/DEC).
fn atomic_op64(op: u64, signed: bool, old: u64, b: u64) -> u64 {
    match op {
        0 => old.wrapping_add(b),
        1 if signed => (old as i64).min(b as i64) as u64,
        1 => old.min(b),
        2 if signed => (old as i64).max(b as i64) as u64,
        2 => old.max(b),
        5 => old & b,
        6 => old | b,
        7 => old ^ b,
        _ => b,
    }
}

/// PRMT (PTX `prmt.b32 d, a, b, c` is `PRMT d, a, c, b`): the bytes of {c:a} are numbered
/// 0..7 from a's low byte. Default mode: result byte k is the byte named by selector nibble
/// k's low three bits, or that byte's sign (0x00/0xff) when the nibble's bit 3 is set. The
/// other modes (1..6: F4E, B4E, RC8, ECL, ECR, RC16) use the selector's two low bits `s` to
/// pick one of four byte patterns, here a table per mode of the four selectors' results
/// (each entry: the source bytes of result bytes 3, 2, 1, 0, as the PTX ISA lists them).
fn prmt(mode: u64, a: u32, sel: u32, c: u32) -> u32 {
    const TABLE: [[[u8; 4]; 4]; 6] = [
        [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]], // F4E
        [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]], // B4E
        [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]], // RC8
        [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]], // ECL
        [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]], // ECR
        [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]], // RC16
    ];
    let src = u64::from(a) | u64::from(c) << 32;
    if mode != 0 {
        let row = TABLE[mode as usize - 1][(sel & 3) as usize];
        return (0..4).fold(0, |d, k| {
            let byte = (src >> (8 * row[3 - k])) as u8;
            d | u32::from(byte) << (8 * k)
        });
    }
    (0..4).fold(0, |d, k| {
        let nib = sel >> (4 * k);
        let byte = (src >> (8 * (nib & 7))) as u8;
        let byte = if nib & 8 != 0 {
            ((byte as i8) >> 7) as u8
        } else {
            byte
        };
        d | u32::from(byte) << (8 * k)
    })
}

/// The .CSFU ("C sign fix-up") correction of XMAD, in units of 2^16 to subtract from C.
///
/// An inference from ptxas's mul.hi.s32 sequence (a = aH:aL, b = bH:bL, halves):
/// `XMAD t, a, b` (aL·bL); `XMAD.U16.S16 u, a, b.H1` (aL·bH); `XMAD.S16.U16.CHI v, a.H1, b, t`
/// (aH·bL + t>>16); `XMAD.S16.S16.CSFU w, a.H1, b.H1, RZ`; `IADD3.RS d, v, u, w`. IADD3.RS
/// adds v and u as unsigned 32-bit numbers, so a negative partial product contributes an
/// extra 2^32, i.e. 2^16 after the shift; w must take it back. `u` is negative exactly when
/// bH < 0 and aL != 0, `v` exactly when aH < 0 and bL != 0 (aL·bL>>16 < bL). So .CSFU
/// subtracts 2^16 for each signed selected half that is negative while the *other* half of
/// the other operand is non-zero. This is the only rule under which that sequence computes
/// the signed high word; tests/sim_mulhi.rs checks it on edge values against `ir::eval`.
fn csfu_fixup(a: u32, ah: bool, sa: bool, b: u32, bh: bool, sb: bool) -> u32 {
    let (a_sel, a_other) = if ah {
        (a >> 16, a & 0xffff)
    } else {
        (a & 0xffff, a >> 16)
    };
    let (b_sel, b_other) = if bh {
        (b >> 16, b & 0xffff)
    } else {
        (b & 0xffff, b >> 16)
    };
    let neg = |h: u32, signed: bool| signed && h & 0x8000 != 0;
    u32::from(neg(a_sel, sa) && b_other != 0) + u32::from(neg(b_sel, sb) && a_other != 0)
}

/// IADD3 half select: 0 = whole, 1 = .H0, 2 = .H1 (zero-extended).
fn half(v: u32, h: u64) -> u64 {
    u64::from(match h {
        1 => v & 0xffff,
        2 => v >> 16,
        _ => v,
    })
}

/// LOP/LOP3 predicate output: none (false), .T, .Z, .NZ.
fn pred_op(pop: u64, r: u32) -> bool {
    match pop {
        1 => true,
        2 => r == 0,
        3 => r != 0,
        _ => false,
    }
}

fn lop3(lut: u8, a: u32, b: u32, c: u32) -> u32 {
    let mut r = 0;
    for k in 0..8 {
        if lut >> k & 1 != 0 {
            let ta = if k & 4 != 0 { a } else { !a };
            let tb = if k & 2 != 0 { b } else { !b };
            let tc = if k & 1 != 0 { c } else { !c };
            r |= ta & tb & tc;
        }
    }
    r
}

fn bool_op(op: u64, a: bool, b: bool) -> bool {
    match op {
        0 => a && b,
        1 => a || b,
        _ => a ^ b,
    }
}

/// Integer compare: F, LT, EQ, LE, GT, NE, GE, T.
fn icmp(cmp: u64, signed: bool, a: u32, b: u32) -> bool {
    let ord = if signed {
        (a as i32).cmp(&(b as i32))
    } else {
        a.cmp(&b)
    };
    use std::cmp::Ordering::*;
    match cmp {
        0 => false,
        1 => ord == Less,
        2 => ord == Equal,
        3 => ord != Greater,
        4 => ord == Greater,
        5 => ord != Equal,
        6 => ord != Less,
        _ => true,
    }
}

/// The high-word step of a multi-word compare (`IADD RZ.CC, lo, -lo'` then `ISETP.X`/`ISET.X`
/// on the high words): the difference `a - b - !CF` decides, and equality also needs the low
/// words' ZF.
fn icmp_x(cmp: u64, signed: bool, a: u32, b: u32, cc: u8) -> bool {
    let sum = u64::from(a) + u64::from(!b) + u64::from(cc & CF);
    let r = sum as u32;
    let eq = r == 0 && cc & ZF != 0;
    let lt = if signed {
        let overflow = ((a ^ b) & (a ^ r)) >> 31 != 0;
        (r >> 31 != 0) != overflow
    } else {
        sum >> 32 == 0
    };
    match cmp {
        0 => false,
        1 => lt,
        2 => eq,
        3 => lt || eq,
        4 => !lt && !eq,
        5 => !eq,
        6 => !lt,
        _ => true,
    }
}

fn bfe(a: u32, pos: u32, len: u32, signed: bool) -> u32 {
    if len == 0 {
        return 0;
    }
    // Bits past bit 31 read as the sign (signed) or 0, however far past: PTX's rule, which
    // ptxas relies on when it emits one BFE for `bfe.s32` with a register position. An
    // arithmetic shift of the sign-extended word gives exactly that.
    let wide = if signed {
        i64::from(a as i32)
    } else {
        i64::from(a)
    };
    let v = (wide >> pos.min(63)) as u64;
    let len = len.min(32);
    let v = v & ((1u64 << len) - 1);
    if signed {
        sext(v, len) as u32
    } else {
        v as u32
    }
}
