//! The machine: CTAs, warps, the divergence stack, and one function per instruction family.
//! The semantics are documented in the module essay of [`crate::sim`].
//!
//! # Files of this module
//!
//! - `ctrl.rs`: The control family of the simulator.
//! - `int.rs`: The integer family of the simulator.
//! - `bits.rs`: The bit family of the simulator.
//! - `mem.rs`: The memory family of the simulator.
//! - `fp.rs`: The floating-point family of the simulator.

mod ctrl;
mod int;
use int::*;
mod bits;
mod fp;
mod mem;
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
    // An integer CC never compares unordered: each unordered test is its ordered one.
    use crate::sm50::values::bra::cc::*;
    Some(match u64::from(test) {
        CC_F | CC_NAN => false,
        CC_LT | CC_LTU => lt,
        CC_EQ | CC_EQU => z,
        CC_LE | CC_LEU => lt || z,
        CC_GT | CC_GTU => !lt && !z,
        CC_NE | CC_NEU => !z,
        CC_GE | CC_GEU => !lt,
        CC_NUM | DEFAULT => true,
        _ => return None,
    })
}

/// The lanes of `exec` whose CC passes the CC test of a `BRA`, `BRK` or `EXIT` (`EXIT CC.NEU`);
/// every lane when the test is T (15, printed as no test).
fn cc_exec(w: &Warp, i: &Inst, addr: u64, exec: u32) -> Result<u32, SimError> {
    use crate::sm50::values::bra::cc::DEFAULT as T;
    let test = get(i, Field::Cc).unwrap_or(T) as u8;
    if u64::from(test) == T {
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

/// One general register of every lane of a warp as it was when an instruction began: what a
/// lane reads from another lane's register (a texture unit's quad handle) after earlier lanes
/// of the same instruction may have written their results over it. 32 words, not the whole
/// register file: a `.B` fetch reads its handle register only. Unused (RZ) by slot.
pub(super) struct Regs {
    reg: u64,
    words: [u32; 32],
}

impl Default for Regs {
    fn default() -> Regs {
        Regs {
            reg: RZ,
            words: [0; 32],
        }
    }
}

impl Regs {
    /// Register `reg` (the one held) of `lane` as it was.
    pub(super) fn r(&self, reg: u64, lane: usize) -> u32 {
        debug_assert_eq!(reg, self.reg, "Regs holds R{} only", self.reg);
        self.words[lane]
    }
}

pub(super) struct Warp {
    /// `regs[r * 32 + lane]`, r in 0..255.
    regs: Vec<u32>,
    preds: [u8; 32],
    pub(super) cc: [u8; 32],
    pc: u64,
    active: u32,
    exited: u32,
    /// The active mask `SAM` saved (and widened to whole quads), which `RAM` restores.
    pub(super) sam: Option<u32>,
    stack: Vec<Entry>,
    state: State,
    /// Warp index in its CTA.
    index: usize,
    /// Per lane, reads of SR_CLOCKLO and of SR_GLOBALTIMERLO so far: the clock model
    /// shared with `ir::eval` (`eval::timer_value`).
    timer_reads: [[u64; 32]; 2],
}

impl Warp {
    /// Register `reg` of every lane as it is now (see [`Regs`]).
    pub(super) fn held(&self, reg: u64) -> Regs {
        Regs {
            reg,
            words: std::array::from_fn(|l| self.r(reg, l)),
        }
    }

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
    /// The samplers of the bound (texture, sampler) pairs' slots ([`KernelInfo::samplers`]).
    pub(super) samplers: &'a [(u32, crate::sampler::SamplerInit)],
    /// The bound surfaces' slots ([`KernelInfo::surface_slots`]; `TXQ` on one is `suq`).
    pub(super) surface_slots: &'a [(u32, String)],
    /// What the system functions keep over the launch (printf records, the heap).
    sys: crate::sysfn::State,
}

/// Per warp of the running CTA its issue clock, and the totals so far ([`super::Timing`]).
#[derive(Default)]
struct Clocks {
    warps: Vec<crate::sm50::sched::cost::Clock>,
    total: super::Timing,
    /// Per instruction address, where its cycles went ([`run_profiled`]); `None` when only
    /// the totals are asked for.
    profile: Option<super::Profile>,
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
    run_clocked(prog, info, launch, false).map(|(out, t)| (out, t.total))
}

/// [`run_timed`], also attributing the cycles to the instructions ([`super::Profile`]).
pub(crate) fn run_profiled(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
) -> Result<(RunOutput, super::Timing, super::Profile), SimError> {
    run_clocked(prog, info, launch, true)
        .map(|(out, t)| (out, t.total, t.profile.unwrap_or_default()))
}

/// [`run`] with issue clocks, and a per-instruction profile when `profile` is set.
fn run_clocked(
    prog: &Program,
    info: &KernelInfo,
    launch: &Launch,
    profile: bool,
) -> Result<(RunOutput, Clocks), SimError> {
    let mut timing = Some(Clocks {
        profile: profile.then(super::Profile::default),
        ..Clocks::default()
    });
    let out = run_inner(
        prog,
        info,
        launch,
        &SimOptions::default(),
        None,
        None,
        &mut timing,
    )?;
    Ok((out.0, timing.unwrap_or_default()))
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
        samplers: &info.samplers,
        surface_slots: &info.surface_slots,
        sys: crate::sysfn::state_for_launch(launch, info.addr32),
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
            // The launch's regions (the driver's texture and surface tables, after them, are
            // not output).
            global: {
                let mut g = sim.mem.global;
                if info.texture_table {
                    g.pop();
                }
                if info.surface_table {
                    g.pop();
                }
                g
            },
            shared,
            local,
            shared_undefined: Vec::new(),
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
                    sam: None,
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
            let clock = &mut t.warps[w.index];
            let ready = clock.now();
            let c = self.prog.ctrl(addr);
            let issued = clock.issue(&inst, c);
            t.total.warp_insts += 1;
            if let Some(p) = &mut t.profile {
                let e = p.entry(addr).or_default();
                e.count += 1;
                e.waited += issued - ready;
                e.stalled += u64::from(c.stall);
            }
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
            BRA | SSY | PBK | SYNC | BRK | CAL | RET | JCAL | EXIT | BRX | PRET => {
                self.exec_ctrl(w, i, addr, exec)?
            }
            BAR | BAR_RED | BARR_RA | BARR_RB | BARR_RR | BARR_REDRA | BARR_REDRB | BARR_REDRR
            | NOP | DEPBAR | MEMBAR | CCTL | CCTL_L | BPT | VOTE | SHFL_RI | SHFL_II | SHFL_RR
            | SHFL_IR | SAM | RAM => self.exec_warp(w, i, addr, exec)?,
            MOV_R | MOV_C | MOV_I | MOV32I | S2R | CS2R | SEL_R | SEL_C | SEL_I => {
                self.exec_move(w, i, addr, exec)?
            }
            IADD_R | IADD_C | IADD_I | IADD32I | IADD3_R | IADD3_C | IADD3_I | ISCADD_R
            | ISCADD_C | ISCADD_I | ISCADD32I | LEA_R | LEA_C | LEA_I | LEA_HI_R | LEA_HI_C => {
                self.exec_add(w, i, addr, exec)?
            }
            SHL_R | SHL_C | SHL_I | SHR_R | SHR_C | SHR_I | SHF_LR | SHF_LI | SHF_RR | SHF_RI
            | LOP_R | LOP_C | LOP_I | LOP32I | LOP3_R | LOP3_I | LOP3_C | PRMT_R | PRMT_C
            | PRMT_I => self.exec_logic(w, i, addr, exec)?,
            XMAD_R | XMAD_I | XMAD_C | XMAD_CC | IMUL_R | IMUL_C | IMUL_I | IMUL32I | IMAD_R => {
                self.exec_mul(w, i, addr, exec)?
            }
            ISETP_R | ISETP_C | ISETP_I | ISET_R | ISET_C | ISET_I | ICMP_R | ICMP_C | ICMP_I
            | PSET | R2P_I | P2R_I | P2R_R | P2R_C | B2R | PSETP | IMNMX_R | IMNMX_C | IMNMX_I
            | I2I_R | I2I_C | I2I_I | CSETP => self.exec_cmp(w, i, addr, exec)?,
            BFE_R | BFE_C | BFE_I | BFI_R | BFI_C | BFI_I | BFI_CC | POPC_R | POPC_C | POPC_I
            | FLO_R | FLO_C | FLO_I => self.exec_field(w, i, addr, exec)?,
            VADD | VADD_I | VABSDIFF | VABSDIFF_I | VMNMX | VMNMX_I | VSET | VSHL | VSHL_I
            | VSHR | VSHR_I | VMAD | VMAD_I | VMAD32 | VMAD32_I | VABSDIFF4 => {
                self.exec_video(w, i, addr, exec)?
            }
            LDG | STG | LD | ST | LDS | STS | LDL | STL | LDC | ATOM | ATOM_CAS | RED | ATOMS
            | ATOMS_CAS | SUST_D_I | SUST_D_R | SULD_D_I | SULD_D_R | SURED_D_I | SURED_D_R
            | SUST_P_I | SUST_P_R | SULD_P_I | SULD_P_R | SURED_P_I | SURED_P_R | SUATOM_D_I
            | SUATOM_CAS_I | TEXS | TLDS | TXQ_I | TEX | TLD_I | TEX_B | TLD_B | TXQ_B | TLD4S
            | TLD4_I | TLD4_B | TXD_I | TXD_B => self.exec_mem(w, i, addr, exec)?,
            FADD_R | FADD_C | FADD_I | FADD32I | FMUL_R | FMUL_C | FMUL_I | FMUL32I | FFMA_R
            | FFMA_C | FFMA_CC | FFMA_I | FSETP_R | FSETP_C | FSETP_I | FMNMX_R | FMNMX_C
            | FMNMX_I | DADD_R | DADD_C | DADD_I | DMUL_R | DMUL_C | DMUL_I | DFMA_R | DFMA_C
            | DFMA_CC | DFMA_I | DSETP_R | DSETP_C | DSETP_I | DMNMX_R | DMNMX_C | DMNMX_I
            | I2F_R | I2F_C | I2F_I | F2I_R | F2I_C | F2I_I | F2F_R | F2F_C | F2F_I | FSET_R
            | FSET_C | FSET_I | DSET_R | DSET_C | DSET_I | FCHK_R | FCHK_C | FCHK_I | FCMP_R
            | FCMP_C | FCMP_I | FCMP_CR | HADD2_R | HMUL2_R | HFMA2_R | HSETP2_R | HSET2_R
            | MUFU | RRO_R | RRO_C | RRO_I => self.exec_fp(w, i, addr, exec)?,
            FSWZADD => self.fswzadd(w, i, addr, exec)?,
            _ => return Err(unsupported(addr, i, "this instruction")),
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
