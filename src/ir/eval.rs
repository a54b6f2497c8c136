//! A reference interpreter of the IR: the meaning every later stage must preserve.
//!
//! In: a verified [`Function`] (with its [`Module`] for variables) and a [`Launch`]: grid and
//! CTA shape, parameter bytes, global memory regions. Out: a [`RunOutput`] with the final bytes
//! of every memory region (global regions, each CTA's shared memory, each thread's local
//! memory), so two runs (say, the IR and the SM50 simulator) can be compared byte for byte; or
//! an [`EvalError`] naming the instruction at fault. Nothing here panics on any IR or launch:
//! the function is verified first, and every memory access is bounds-checked.
//!
//! # Memory model
//!
//! Memory is byte-addressed and little-endian, one store per state space:
//!
//! * **global**: the launch's [`GlobalRegion`]s plus one region holding the module's `.global`
//!   variables at [`module_global_base`] ([`MODULE_GLOBAL_BASE`], or [`MODULE_GLOBAL_BASE_32`]
//!   in a 32-bit module). An access must lie wholly inside one region.
//! * **shared**: one array per CTA: the module's `.shared` variables, then
//!   `Launch::dynamic_shared` bytes (16-aligned, the `extern .shared` array).
//! * **local**: one array per thread: the module's `.local` variables, then
//!   `Launch::local_size` bytes (a stack frame, for later spills; not in a function with a
//!   dynamic stack, where those bytes are the stack's room below the variables).
//! * **dynamic stack** (`alloca`, `stacksave`, `stackrestore`, [`super::StackOp`]): per
//!   thread, up to `Launch::local_size` bytes *below* the local array, as in the simulator,
//!   whose stack pointer starts at the top of that memory and whose frame sits on top. `.local`
//!   addresses are offsets from the frame's base, so the stack pointer starts at 0 and an
//!   allocation's address is a wrapped 32-bit negative offset (`alloca` of 16 bytes at the start:
//!   `0xfffffff0`). `alloca` moves the stack pointer down by the size and rounds it down to the
//!   alignment (in these offsets; in the simulator the frame base is `Launch::local_size`, so
//!   the two agree when that is a multiple of the alignment), and gives it as the address;
//!   `stacksave` reads it and `stackrestore` sets it. An access to the dynamic stack must lie
//!   wholly at or above the stack pointer (memory that is allocated now): one below it is
//!   undefined (released by `stackrestore`, or never allocated), and so is growing the stack
//!   past `Launch::local_size` bytes or restoring it above its start. Bytes start as zero.
//!   A kernel with a dynamic stack reports each thread's local memory as the simulator
//!   holds it: the `Launch::local_size` bytes of stack room (the stack's bytes at the top),
//!   then the module's `.local` variables.
//!   Generic addresses of the dynamic stack are `LOCAL_WINDOW_BASE` + the 32-bit offset, as
//!   64-bit values (a window just below `LOCAL_WINDOW_BASE + 4 GB`).
//!   The *values* of `.local` addresses (a variable's, `alloca`'s, `stacksave`'s) are these
//!   offsets plus `Launch::local_size`, the simulator's absolute addresses (its R1 starts
//!   the kernel's frame there): a `.local` pointer passed into a subroutine names the same
//!   bytes there, as ptxas's absolute `R1 + offset` does; an access takes it off again.
//! * **const**: the module's `.const` variables (read-only).
//! * **param**: the launch's parameter bytes (read-only).
//!
//! No caches are modelled: a load's or store's cache operator (`.cg`, `.cs`, `.lu`, `.cv`,
//! `.wt`, `.nc`, [`super::CacheOp`]) changes nothing here, and neither does `.volatile`
//! (one thread's accesses happen in program order anyway; the simulator agrees).
//!
//! Variables of one space are laid out in declaration order, each at its alignment. Bytes
//! without an initializer start as zero (PTX says "unknown but constant"; zero is one such).
//! An address in a `.global` or `.const` variable's initializer ([`super::AddrInit`]: `p = x`,
//! `generic(x) + 8`, `0xff00(x)`) is the address a `mov` of the variable yields, plus the
//! offset: a `.global` variable's global address (its generic address too), a `.const`
//! variable's offset in the const space, or with `generic()` its address in the const window.
//!
//! Addresses in a non-generic space are offsets into that space, 32 bits wide: the address
//! value is zero-extended, the signed offset added, and the sum truncated to 32 bits (seed
//! 6.4.1). Global and generic addresses are 64-bit.
//!
//! **Generic addresses** (seed 6.4.1.1): the shared, local and const spaces appear as 16 MB
//! windows inside the generic space, each at a window base; an address inside a window maps
//! to `address - base` in that space, anything else is global. The bases follow what ptxas
//! does on sm_50 (sm50-isa.md section 4): `c[0x0][0x0]` holds the shared window base with upper
//! 32 bits zero, `cvta.to.shared` is `lo & 0x00ffffff`, and `cvta.local` ORs the local base
//! in, so both bases are 16 MB-aligned values below 4 GB. The numbers themselves are ours:
//! [`SHARED_WINDOW_BASE`], [`LOCAL_WINDOW_BASE`], [`CONST_WINDOW_BASE`]. (Where the hardware
//! puts `.const` in the generic space is not known here; we give it a window so that `cvta.const`
//! round-trips.) Global regions may not overlap a window; a launch that tries is rejected.
//! The param space has no window: seed 6.4.1.1 puts it inside the global window, and kernels
//! reach parameters with `ld.param` only.
//!
//! An access must be naturally aligned to its total size (element size × vector width). PTX
//! calls a misaligned access undefined; the reference treats it as an error so a compiler bug
//! that misaligns shows up rather than being silently masked.
//!
//! # Execution
//!
//! CTAs run one after another, x fastest; inside a CTA, threads run one after another in
//! linear order. Each thread is a resumable state machine (`Thread`: current block, position,
//! registers) advanced by `step`. Without barriers every thread simply runs to its `ret`. A
//! `barrier` makes `step` return `AtBarrier`; `run_cta` advances every thread until it is at
//! the barrier or has exited before letting any continue, and threads that exited count as
//! arrived (PTX leaves a barrier that not all threads reach undefined; this is the choice that
//! cannot deadlock). A named barrier (`bar.sync N[, count]`) is modelled the same way, as a
//! barrier for the whole CTA: exact when every thread of the CTA takes part (no count, or the
//! CTA's size), and otherwise right only for kernels whose partial barriers every live thread
//! reaches. A `bar.red` is such a barrier whose opening also hands every waiting thread the
//! reduction of the waiting threads' predicates. `bar.arrive` and `membar` do nothing here
//! (threads run one at a time, so accesses are already ordered). A warp vote or shuffle (`ir::warp`) stops a thread in the same way,
//! before it; the threads of a warp stopped at one take it together before any barrier opens.
//! When a warp's lanes are stopped at different votes, only those at the one first in block
//! layout take it; the others wait, as a diverged warp runs its lanes behind up to the join
//! where the lanes ahead wait. `bar.warp.sync` stops a thread the same way (a vote with no
//! result). A spin-wait's yield ([`MemScope::Yield`], in the emulated `mbarrier` waits)
//! stops a thread for the round: the other threads run (a consumer waiting for a later
//! producer thread makes progress), and a barrier opens only when no thread is left
//! spinning. A step limit (total instructions of the launch) stops infinite loops, and
//! [`cta::SPIN_ROUNDS`] rounds of spinning in which nothing changes (no thread exits or
//! reaches a barrier or vote, shared memory keeps its bytes) stop the run with
//! [`EvalError::NoProgress`]: a phase that never completes, reported as such.
//!
//! A call of a subroutine (an [`InstData::ExternCall`] naming one of
//! [`Module::subroutines`], a recursive `.func`) pushes a frame on the thread's own call
//! stack (`Thread::frames`: the caller's function, position, registers and argument bytes)
//! and runs the callee from its entry with fresh registers and, when it declares `.local`
//! variables, a frame of its own for them allocated on the thread's dynamic stack (as an
//! `alloca` of their size; the return releases it), so that every activation of a recursive
//! function has its own copy, as R1's frames give it in the simulator; its `LoadParam`s read the
//! argument registers' bytes (R4 first, as the call ABI passes them), and its
//! [`InstData::SubReturn`] pops the frame and writes the result. No Rust recursion is
//! involved, so deep recursion costs heap, not stack; more than [`MAX_CALL_DEPTH`] nested
//! calls stop the run with [`EvalError::CallDepth`]. Warp votes, shuffles and `bar.red`
//! inside a subroutine are not modelled (an error).
//!
//! # Undefined and unknowable runs
//!
//! Some launches have no single meaning to compare against; the run stops with an error
//! instead of an arbitrary answer ([`EvalError::Undefined`], [`EvalError::Unknowable`]):
//!
//! * **Divergent barrier.** When a barrier opens, the threads of one warp must all wait at
//!   the same barrier instruction: PTX (for sm_6x and below) requires every thread of a warp
//!   to execute the same `bar`, so a `bar.sync` in code where the warp has diverged (lanes at
//!   two different `bar.sync`s, as in `if (tid < 16) { ..; bar } else { bar; .. }`) is
//!   undefined. Different warps may wait at different instructions, and threads that exited
//!   count as arrived (the early-`ret` idiom: the hardware drops exited warps from the count).
//! * **Data race on shared memory.** Two different threads of a CTA access the same shared
//!   byte in one barrier interval (between two openings of a barrier), at least one of them
//!   writes, and they are not both atomic: the PTX memory model gives such a program no
//!   meaning, and the interpreter's thread order would otherwise pick one answer silently. A
//!   shadow per shared byte records the interval's writer, reader(s) and atomic user(s);
//!   votes and shuffles do not end an interval (they are not memory barriers). Message
//!   passing through a shared word does order two threads (the emulated `mbarrier`: a
//!   `membar`, then an atomic, which releases; another thread's atomic on the same word
//!   acquires; `RaceShadow::atomic`), approximately, erring towards fewer races. Warp-
//!   synchronous code that leans on lockstep execution without barriers counts as racy, as
//!   PTX says; a `bar.warp.sync` orders its warp's accesses (the shadow forgets entries that
//!   name only threads of that warp; an entry of several threads of one warp says which).
//! * **Shuffle from a lane that takes no part.** A `shfl` lane reading, in range, a lane that
//!   is not at that shuffle with it (inactive, exited, past the end of a partial warp): PTX
//!   leaves the value undefined.
//! * **Data race on global memory** (when [`Launch::global_races`] asks for it, as `verify`
//!   does). The same rule over the whole launch: two different
//!   threads access the same global byte, at least one writes, not both atomically, and
//!   nothing orders them. A barrier orders the threads of one CTA (accesses before an
//!   opening come before those after it); nothing orders the threads of different CTAs,
//!   except message passing through a fence and an atomic (`membar.gl`, then an atomic that
//!   a later CTA's atomic on the same address reads), modelled approximately, erring towards
//!   fewer races. A shadow per global byte (allocated per buffer at its first access)
//!   records the last writer, the reader(s) and the atomic user(s) with the barrier epoch of
//!   each ([`GlobalShadow`] has the exact rule). A kernel whose threads all store to one
//!   place (common in small tests written for one thread) is racy on a full launch.
//! * **Shared access outside the kernel's variables.** The shared layout holds only the
//!   `.shared` variables the kernel names (and the dynamic part), as ptxas allocates them
//!   (`Module::shared_layout`): an access in the padding between them or past their end ran
//!   off an array, which PTX leaves undefined (the hardware faults or reads a neighbour).
//! * **`%pm0..7`.** Performance-monitor counters count events no model knows, so a kernel
//!   that reads one cannot be compared; the read is the error ([`EvalError::Unknowable`]).
//!
//! # Clocks and timers
//!
//! `%clock`, `%clock64` and `%globaltimer` (`_lo`, `_hi`) read a deterministic model, the
//! same in `sim` ([`timer_value`]): each thread counts its own reads of the clock and, apart,
//! of the global timer; read `n` (from 0) sees the low word `lo(n)`, which grows by a fixed
//! step per read, and a constant high word. A 64-bit read (`%clock64`, `%globaltimer`) and
//! `%clock`/`%globaltimer_lo` count one read each, `%globaltimer_hi` none: exactly the reads
//! of the low word in SASS (`CS2R SR_CLOCKLO`/`SR_GLOBALTIMERLO`; the high word is read
//! around it, twice, to detect a carry, and never changes here). So the clock is honest as
//! far as it goes: it is monotonic per thread, differences of reads are what a kernel
//! measures, and both models give every thread the same sequence; it says nothing about
//! real time.
//!
//! # Files of this module
//!
//! - `race.rs`: Race detection of the reference interpreter.
//! - `cta.rs`: One CTA of the reference interpreter.
//! - `thread.rs`: One thread of the reference interpreter.
//! - `pure.rs`: The pure meaning of IR instructions.
//! - `memory.rs`: Memory of the reference interpreter.
//! - `poison.rs`: Values computed from undefined registers, and the shared bytes they reach.

mod race;
use race::*;
mod cta;
use cta::*;
mod pure;
mod thread;
pub use pure::*;
mod memory;
mod poison;
use memory::*;
use std::fmt;

use cranelift_entity::EntityRef;
use smallvec::SmallVec;

use super::{
    verify_in_module, AtomOp, BinaryOp, Block, CacheOp, ConvOp, CvtaDir, Function, Inst, InstData,
    IntCC, MemScope, Module, Space, SpecialReg, StackOp, Type, UnaryOp, Value, VerifierError,
};

/// Generic address of shared offset 0 (what `c[0x0][0x0]` holds in our model).
pub const SHARED_WINDOW_BASE: u64 = 0x0100_0000;
/// Generic address of local offset 0 (`c[0x0][0x4]` in our model).
pub const LOCAL_WINDOW_BASE: u64 = 0x0200_0000;
/// Generic address of const offset 0.
pub const CONST_WINDOW_BASE: u64 = 0x0300_0000;
/// Every window is 16 MB (24-bit offsets).
pub const WINDOW_SIZE: u64 = 0x0100_0000;
/// Where the module's `.global` variables live.
pub const MODULE_GLOBAL_BASE: u64 = 0x7_0000_0000;
/// Where a 32-bit module's `.global` variables live (their addresses are 32 bits): above the
/// windows, below the buffers `verify` gives 32-bit kernels.
pub const MODULE_GLOBAL_BASE_32: u64 = 0x0800_0000;

/// Where `module`'s `.global` variables live.
pub fn module_global_base(module: &Module) -> u64 {
    if module.addr32 {
        MODULE_GLOBAL_BASE_32
    } else {
        MODULE_GLOBAL_BASE
    }
}
/// The clock model's high words and steps (see the module essay).
const CLOCK_HI: u32 = 0x1;
const CLOCK_LO0: u32 = 0x1000_0000;
const CLOCK_STEP: u32 = 64;
const TIMER_HI: u32 = 0x0170_0000;
const TIMER_LO0: u32 = 0x2000_0000;
const TIMER_STEP: u32 = 1000;

/// The clock model shared with `sim`: the low word of a thread's `n`-th read (from 0) of the
/// clock (`timer` false) or of the global timer (`timer` true), and the high word.
pub fn timer_value(timer: bool, n: u64) -> (u32, u32) {
    let n = n as u32;
    if timer {
        (TIMER_LO0.wrapping_add(n.wrapping_mul(TIMER_STEP)), TIMER_HI)
    } else {
        (CLOCK_LO0.wrapping_add(n.wrapping_mul(CLOCK_STEP)), CLOCK_HI)
    }
}

/// Default instruction budget of a launch.
pub const DEFAULT_STEP_LIMIT: u64 = 10_000_000;
/// The value `ir::eval` gives kernel `k`'s descriptor ([`InstData::KernelDesc`]): this plus
/// `k`, in no window and no region.
pub const KERNEL_DESC_BASE: u64 = 0xde5c_0000_0000;

/// Most threads one launch may have (local memory is allocated per thread).
pub const MAX_THREADS: u64 = 1 << 20;
/// Most bytes of memory one launch may allocate for module variables, shared memory of all
/// CTAs and local memory of all threads together: a bound so that a huge declaration is a
/// `BadLaunch` error rather than an allocation failure.
pub const MAX_LAUNCH_BYTES: u64 = 1 << 30;

/// A range of global memory given to a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalRegion {
    pub base: u64,
    pub bytes: Vec<u8>,
}

/// How to run a kernel.
#[derive(Clone, Debug)]
pub struct Launch {
    /// CTAs per grid (%nctaid).
    pub grid: [u32; 3],
    /// Threads per CTA (%ntid).
    pub block: [u32; 3],
    /// The param space, laid out as the function's `params` say.
    pub params: Vec<u8>,
    pub global: Vec<GlobalRegion>,
    pub dynamic_shared: u32,
    pub local_size: u32,
    pub step_limit: u64,
    pub gridid: u64,
    /// Detect data races on global memory (see the module essay). Off by default: many
    /// tests run kernels written for one thread on several, where every thread stores the
    /// same value to the same place, and compare the result on purpose; `verify` turns it on.
    pub global_races: bool,
    /// The surfaces a surface instruction may name ([`crate::surface`]): a `.surfref` the
    /// one of its name, a bindless handle the one at its index. Their bytes live in
    /// `global` regions.
    pub surfaces: Vec<crate::surface::SurfaceDesc>,
    /// Reading shared or local bytes that neither a store nor an initializer wrote is
    /// undefined: PTX gives them no value, and a GPU leaves whatever was there. Off by
    /// default, because `verify`'s two sides (this interpreter and the simulator) both start
    /// from zeros and so agree; the hardware check (`examples/hwcheck_export.rs`) turns it on,
    /// since a real GPU does not start from zeros.
    pub undefined_uninit: bool,
    /// Track values computed only from registers nothing defined ([`Function::undef`]) and
    /// the shared bytes stored from them ([`RunOutput::shared_undefined`]; `poison`'s
    /// essay). Off by default; `verify` turns it on.
    pub undefined_registers: bool,
    /// The textures the kernel reads (`tex`, `txq`): `.texref`s by name, texture objects by
    /// handle (`crate::texture`). Empty by default.
    pub textures: crate::texture::TextureBindings,
}

impl Launch {
    /// Check the caller's global regions: none wraps around the address space, none overlaps
    /// `windows` (the generic-address windows of the model running them), and none overlaps
    /// another region or `reserved` (e.g. the module's own `.global` variables). The message
    /// is the reason, for the runner's `BadLaunch` error. Shared by `ir::eval` and `sim`, so
    /// both accept exactly the same launches.
    pub fn check_global_regions(
        &self,
        windows: std::ops::Range<u64>,
        reserved: Option<(u64, u64)>,
    ) -> Result<(), String> {
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for r in &self.global {
            let Some(end) = r.base.checked_add(r.bytes.len() as u64) else {
                return Err(format!("region at 0x{:x} wraps around", r.base));
            };
            if r.base < windows.end && end > windows.start {
                return Err(format!("region at 0x{:x} overlaps a window", r.base));
            }
            spans.push((r.base, end));
        }
        spans.extend(reserved);
        spans.sort();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(format!("global regions at 0x{:x} overlap", w[1].0));
            }
        }
        Ok(())
    }

    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Launch {
        Launch {
            grid,
            block,
            params: Vec::new(),
            global: Vec::new(),
            dynamic_shared: 0,
            local_size: 0,
            step_limit: DEFAULT_STEP_LIMIT,
            gridid: 0,
            global_races: false,
            undefined_uninit: false,
            undefined_registers: false,
            textures: crate::texture::TextureBindings::default(),
            surfaces: Vec::new(),
        }
    }
}

/// The memory after a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    /// The launch's regions in order, then (if the module has `.global` variables) the
    /// module's region at [`module_global_base`].
    pub global: Vec<GlobalRegion>,
    /// Shared memory of each CTA, in launch order (x fastest).
    pub shared: Vec<Vec<u8>>,
    /// Local memory of each thread: CTA by CTA, threads in linear order inside each.
    pub local: Vec<Vec<u8>>,
    /// The launch's `printf` output ([`crate::sysfn::State::printf_output`]: CTAs in linear
    /// order, threads in linear order in each, each thread's calls in program order).
    pub printf: Vec<u8>,
    /// Per CTA (when the launch asks for [`Launch::undefined_registers`], else empty): which
    /// bytes of its shared memory last received a value computed from an undefined
    /// register. Their contents are whatever the register held; no comparison reads them.
    pub shared_undefined: Vec<Vec<bool>>,
}

impl RunOutput {
    /// The bytes of the launch region that starts at `base`.
    pub fn region(&self, base: u64) -> Option<&[u8]> {
        self.global
            .iter()
            .find(|r| r.base == base)
            .map(|r| &r.bytes[..])
    }
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("invalid IR: {}", join_errors(.0))]
    Invalid(Vec<VerifierError>),
    #[error("no kernel named '{0}'")]
    NoKernel(String),
    #[error("bad launch: {0}")]
    BadLaunch(String),
    #[error("{inst}: {size}-byte {space} access at 0x{addr:x} is out of bounds")]
    OutOfBounds {
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
    },
    #[error("{inst}: {size}-byte access at global address 0x{addr:x} is not mapped")]
    Unmapped { inst: Inst, addr: u64, size: u32 },
    #[error("{inst}: {size}-byte {space} access at 0x{addr:x} is misaligned")]
    Misaligned {
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
    },
    #[error("{inst}: step limit of {limit} instructions reached")]
    StepLimit { inst: Inst, limit: u64 },
    /// The PTX has no defined meaning on this launch (a data race, a divergent barrier): no
    /// result can be compared. See the module essay for the rules.
    #[error("{inst}: undefined in PTX: {why}")]
    Undefined { inst: Inst, why: String },
    /// The kernel reads a value no model can know (`%pm0..7`).
    #[error("{inst}: reads {what}, whose value cannot be known, so no run can be compared")]
    Unknowable { inst: Inst, what: &'static str },
    /// A thread executed `trap`: the launch is aborted (PTX: "abort execution and generate
    /// an interrupt to the host CPU"), so no memory is defined afterwards.
    #[error("{inst}: the kernel trapped (trap)")]
    Trapped { inst: Inst },
    /// A call of a system function (`vprintf`, `malloc`, ..) whose meaning is not modelled.
    #[error("{inst}: {why}")]
    Unmodelled { inst: Inst, why: String },
    /// More than `limit` nested subroutine calls (runaway recursion).
    #[error("{inst}: subroutine calls nested deeper than {limit} (runaway recursion?)")]
    CallDepth { inst: Inst, limit: usize },
    /// A thread called `__assertfail` (a failed `assert`): the launch traps with CUDA's
    /// message ([`crate::sysfn`]), so no memory is defined afterwards.
    #[error("{inst}: the kernel trapped: {message}")]
    AssertFailed { inst: Inst, message: String },
    /// Threads spin at a wait (an emulated `mbarrier` poll) round after round and nothing
    /// changes: the phase they wait for never completes (a deadlock on the hardware).
    #[error(
        "{inst}: no progress: {waiting} thread(s) spun at a wait for {rounds} rounds in which \
         no thread exited or reached a barrier and shared memory did not change (a phase \
         that never completes)"
    )]
    NoProgress {
        inst: Inst,
        rounds: u32,
        waiting: usize,
    },
}

/// Nested subroutine calls a thread may have open at once (see "Execution").
pub const MAX_CALL_DEPTH: usize = 100_000;

impl EvalError {
    /// The instruction the error names, if any.
    pub fn inst(&self) -> Option<Inst> {
        match self {
            EvalError::Invalid(_) | EvalError::NoKernel(_) | EvalError::BadLaunch(_) => None,
            EvalError::OutOfBounds { inst, .. }
            | EvalError::Unmapped { inst, .. }
            | EvalError::Misaligned { inst, .. }
            | EvalError::StepLimit { inst, .. }
            | EvalError::Undefined { inst, .. }
            | EvalError::Unknowable { inst, .. }
            | EvalError::Unmodelled { inst, .. }
            | EvalError::CallDepth { inst, .. }
            | EvalError::AssertFailed { inst, .. }
            | EvalError::NoProgress { inst, .. }
            | EvalError::Trapped { inst } => Some(*inst),
        }
    }
}

fn join_errors(errors: &[VerifierError]) -> String {
    errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Run kernel `name` of `module`.
pub fn run(module: &Module, name: &str, launch: &Launch) -> Result<RunOutput, EvalError> {
    let func = module
        .functions
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| EvalError::NoKernel(name.to_string()))?;
    run_in(module, func, launch)
}

/// Run a function that uses no module variables.
pub fn run_function(func: &Function, launch: &Launch) -> Result<RunOutput, EvalError> {
    run_in(&Module::new(), func, launch)
}

/// Run `func`, whose variables live in `module`.
pub fn run_in(module: &Module, func: &Function, launch: &Launch) -> Result<RunOutput, EvalError> {
    verify_in_module(module, func).map_err(EvalError::Invalid)?;
    check_launch(func, launch)?;
    let layout = VarLayout::new(module, func);
    let mut mem = Memory::new(module, &layout, launch)?;
    let shared_vars = shared_ranges(module, &layout, mem.shared_init.len() as u64);
    let surf_index: Vec<Option<usize>> = module
        .surfrefs
        .iter()
        .map(|n| crate::surface::index_of(&launch.surfaces, n))
        .collect();

    let sub_locals: Vec<SubLocals> = module
        .subroutines
        .iter()
        .map(|sub| SubLocals::of(module, sub))
        .collect();
    let ctas = launch.grid.iter().map(|&d| u64::from(d)).product::<u64>();
    let mut shared_out = Vec::new();
    let mut shared_undefined = Vec::new();
    let mut local_out = Vec::new();
    let mut steps = 0u64;
    for cz in 0..launch.grid[2] {
        for cy in 0..launch.grid[1] {
            for cx in 0..launch.grid[0] {
                let ctx = Ctx {
                    extern_funcs: &module.extern_funcs,
                    func,
                    subroutines: &module.subroutines,
                    sub_locals: &sub_locals,
                    layout: &layout,
                    launch,
                    ctaid: [cx, cy, cz],
                    cta_index: cx + launch.grid[0] * (cy + launch.grid[1] * cz),
                    shared_vars: &shared_vars,
                    texrefs: &module.texrefs,
                    samplerrefs: &module.samplerrefs,
                    surf_index: &surf_index,
                };
                let (shared, locals, undefined) = run_cta(&ctx, &mut mem, &mut steps)?;
                shared_out.push(shared);
                if launch.undefined_registers {
                    shared_undefined.push(undefined);
                }
                local_out.extend(locals);
            }
        }
    }
    debug_assert_eq!(shared_out.len() as u64, ctas);
    let mut global = std::mem::take(&mut mem.global);
    if layout.global_size > 0 {
        global.push(GlobalRegion {
            base: layout.global_base,
            bytes: std::mem::take(&mut mem.module_global),
        });
    }
    Ok(RunOutput {
        global,
        shared: shared_out,
        local: local_out,
        printf: mem.sys.printf_output(),
        shared_undefined,
    })
}

fn check_launch(func: &Function, launch: &Launch) -> Result<(), EvalError> {
    let bad = |m: String| Err(EvalError::BadLaunch(m));
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return bad("grid and block dimensions must be at least 1".into());
    }
    let per_cta: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    if per_cta > 1024 {
        return bad(format!("{per_cta} threads per CTA, at most 1024"));
    }
    let ctas: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
    if ctas.saturating_mul(per_cta) > MAX_THREADS {
        return bad(format!("more than {MAX_THREADS} threads"));
    }
    if (launch.params.len() as u64) < u64::from(func.param_size()) {
        return bad(format!(
            "{} parameter bytes given, the kernel takes {}",
            launch.params.len(),
            func.param_size()
        ));
    }
    Ok(())
}

/// Offsets of module variables in their spaces and the size of each space's static part.
struct VarLayout {
    /// Offset of each variable in its space's storage.
    offsets: Vec<u64>,
    /// What `addr` yields for each variable: the offset, or for `.global` variables the
    /// global address.
    addrs: Vec<u64>,
    /// See [`module_global_base`].
    global_base: u64,
    global_size: u64,
    shared_size: u64,
    /// Whether each variable is a `.shared` or `.local` one the kernel names (has storage:
    /// those two spaces are laid out per kernel).
    named: Vec<bool>,
    local_size: u64,
    const_size: u64,
    /// The function has a dynamic stack: `Launch::local_size` is its room below the
    /// variables, not spare bytes after them.
    dynamic_stack: bool,
    /// Whether each variable is a `.local` one (its address as a value is absolute: see
    /// [`DynStack::value`]).
    local: Vec<bool>,
}

impl VarLayout {
    fn new(module: &Module, func: &Function) -> VarLayout {
        let shared = module.shared_layout(func);
        let mut l = VarLayout {
            offsets: vec![0; module.vars.len()],
            addrs: vec![0; module.vars.len()],
            global_base: module_global_base(module),
            global_size: 0,
            shared_size: 0,
            named: vec![false; module.vars.len()],
            local_size: 0,
            const_size: 0,
            dynamic_stack: uses_dynamic_stack(func),
            local: vec![false; module.vars.len()],
        };
        l.shared_size = u64::from(shared.size);
        let (local, local_size) = module.local_layout(func);
        l.local_size = u64::from(local_size);
        for (gv, v) in module.vars_in_layout_order() {
            let size = match v.space {
                Space::Shared | Space::Local => {
                    // The kernel's own layout; a variable it does not name has no storage.
                    let own = if v.space == Space::Shared {
                        &shared.offsets
                    } else {
                        &local
                    };
                    let off = own.get(&gv).map_or(0, |&o| u64::from(o));
                    l.named[gv.index()] = own.contains_key(&gv);
                    l.local[gv.index()] = v.space == Space::Local;
                    l.offsets[gv.index()] = off;
                    l.addrs[gv.index()] = off;
                    continue;
                }
                Space::Global => &mut l.global_size,
                // Param and generic variables have no storage of their own; give them const
                // storage so that an address still resolves somewhere read-only.
                Space::Const | Space::Param | Space::Generic => &mut l.const_size,
            };
            let align = u64::from(v.align.max(1));
            let off = size.next_multiple_of(align);
            *size = off + u64::from(v.size);
            l.offsets[gv.index()] = off;
            let base = if v.space == Space::Global {
                l.global_base
            } else {
                0
            };
            l.addrs[gv.index()] = base + off;
        }
        l
    }
}

/// Storage that outlives a CTA.
struct Memory {
    global: Vec<GlobalRegion>,
    module_global: Vec<u8>,
    module_global_base: u64,
    constant: Vec<u8>,
    /// Initial images of shared and local memory (variables' initializers).
    shared_init: Vec<u8>,
    local_init: Vec<u8>,
    /// Which bytes of `shared_init` and `local_init` an initializer wrote; empty unless the
    /// launch asks for [`Launch::undefined_uninit`].
    shared_def_init: Vec<bool>,
    local_def_init: Vec<bool>,
    /// Race detection on global memory (the launch regions, then `module_global`).
    global_races: GlobalShadow,
    /// What the system functions keep over the launch (printf records, the heap).
    sys: crate::sysfn::State,
}

impl Memory {
    fn new(module: &Module, layout: &VarLayout, launch: &Launch) -> Result<Memory, EvalError> {
        let bad = |m: String| Err(EvalError::BadLaunch(m));
        let module_globals = (layout.global_size > 0)
            .then(|| (layout.global_base, layout.global_base + layout.global_size));
        let windows = SHARED_WINDOW_BASE..CONST_WINDOW_BASE + WINDOW_SIZE;
        if let Err(m) = launch.check_global_regions(windows, module_globals) {
            return bad(m);
        }
        let shared_static = layout.shared_size.next_multiple_of(16);
        let shared_total = shared_static + u64::from(launch.dynamic_shared);
        let local_room = if layout.dynamic_stack {
            0
        } else {
            u64::from(launch.local_size)
        };
        let local_total = layout.local_size + local_room;
        if shared_total > WINDOW_SIZE
            || local_total > WINDOW_SIZE
            || layout.const_size > WINDOW_SIZE
        {
            return bad("a state space is larger than its 16 MB window".into());
        }
        let ctas: u64 = launch.grid.iter().map(|&d| u64::from(d)).product();
        let threads = ctas.saturating_mul(launch.block.iter().map(|&d| u64::from(d)).product());
        let total = layout
            .global_size
            .saturating_add(layout.const_size)
            .saturating_add(ctas.saturating_mul(shared_total))
            .saturating_add(threads.saturating_mul(local_total));
        if total > MAX_LAUNCH_BYTES {
            return bad(format!(
                "the launch needs {total} bytes of memory, at most {MAX_LAUNCH_BYTES}"
            ));
        }
        let mut m = Memory {
            global: launch.global.clone(),
            module_global: vec![0; layout.global_size as usize],
            module_global_base: layout.global_base,
            constant: vec![0; layout.const_size as usize],
            shared_init: vec![0; shared_total as usize],
            local_init: vec![0; local_total as usize],
            shared_def_init: vec![
                false;
                if launch.undefined_uninit {
                    shared_total
                } else {
                    0
                } as usize
            ],
            local_def_init: vec![
                false;
                if launch.undefined_uninit {
                    local_total
                } else {
                    0
                } as usize
            ],
            global_races: GlobalShadow::new(
                launch.global_races,
                launch.global.len() + 1,
                launch.block.iter().product(),
            ),
            sys: crate::sysfn::state_for_launch(launch, module.addr32),
        };
        for (i, v) in module.vars.values().enumerate() {
            let Some(init) = &v.init else { continue };
            let off = layout.offsets[i] as usize;
            let n = init.len().min(v.size as usize);
            let (dst, def) = match v.space {
                Space::Global => (&mut m.module_global, None),
                Space::Shared | Space::Local if !layout.named[i] => continue,
                Space::Shared => (&mut m.shared_init, Some(&mut m.shared_def_init)),
                Space::Local => (&mut m.local_init, Some(&mut m.local_def_init)),
                Space::Const | Space::Param | Space::Generic => (&mut m.constant, None),
            };
            dst[off..off + n].copy_from_slice(&init[..n]);
            // An initializer defines the whole variable (PTX pads it with zeros).
            if let Some(def) = def.filter(|d| !d.is_empty()) {
                let end = (off + v.size as usize).min(def.len());
                def[off..end].fill(true);
            }
        }
        // Addresses in initializers (a loader's data relocations).
        for (gv, addrs) in module.addr_inits.iter() {
            let Some(v) = module.vars.get(gv) else {
                continue;
            };
            let dst = match v.space {
                Space::Global => &mut m.module_global,
                Space::Const => &mut m.constant,
                _ => continue,
            };
            let off = layout.offsets[gv.index()] as usize;
            let end = (off + v.size as usize).min(dst.len());
            for a in addrs {
                let Some(t) = module.vars.get(a.target) else {
                    continue;
                };
                let target = match t.space {
                    Space::Const if a.generic => {
                        CONST_WINDOW_BASE + layout.offsets[a.target.index()]
                    }
                    _ => layout.addrs[a.target.index()],
                };
                a.patch(&mut dst[off.min(end)..end], target);
            }
        }
        Ok(m)
    }
}

impl Memory {
    /// The global store holding `[addr, addr + size)` wholly: its index (a launch region,
    /// or `global.len()` for the module's `.global` variables) and the byte range in it.
    fn global_at(&self, addr: u64, size: u32) -> Option<(usize, std::ops::Range<usize>)> {
        let end = addr.checked_add(u64::from(size))?;
        let base = self.module_global_base;
        let (k, start) = if addr >= base && end <= base + self.module_global.len() as u64 {
            (self.global.len(), base)
        } else {
            let k = self
                .global
                .iter()
                .position(|r| addr >= r.base && end <= r.base + r.bytes.len() as u64)?;
            (k, self.global[k].base)
        };
        let off = (addr - start) as usize;
        Some((k, off..off + size as usize))
    }
}

/// What stays fixed while a CTA runs.
struct Ctx<'a> {
    func: &'a Function,
    /// [`Module::subroutines`]: `Thread::cur` k > 0 runs `subroutines[k - 1]`.
    subroutines: &'a [Function],
    /// The `.local` variables of each of `subroutines`, laid out in each activation's frame.
    sub_locals: &'a [SubLocals],
    /// [`Module::extern_funcs`]: the names [`InstData::ExternCall`] indexes.
    extern_funcs: &'a [String],
    layout: &'a VarLayout,
    launch: &'a Launch,
    ctaid: [u32; 3],
    /// `ctaid` as one number, x fastest (the order CTAs run in).
    cta_index: u32,
    /// The shared bytes the kernel may touch (see [`shared_ranges`]).
    shared_vars: &'a [std::ops::Range<u64>],
    /// The module's `.texref` names (`InstData::Texture` of a bound texture indexes them).
    texrefs: &'a [String],
    /// The module's `.samplerref`s (`TexHandle::Paired` indexes them).
    samplerrefs: &'a [crate::sampler::SamplerRef],
    /// For each module `.surfref`, the launch surface bound to it.
    surf_index: &'a [Option<usize>],
}

/// The byte ranges of the kernel's `.shared` variables (those it names and those the
/// subroutines it calls name, `layout`), and the dynamic part (the
/// `extern .shared` array) when the launch has one. Only these variables have storage
/// ([`Module::shared_layout`], as ptxas allocates them); a kernel that reaches the padding
/// between them through a pointer into one of its arrays has run off that array: undefined
/// in PTX.
fn shared_ranges(module: &Module, layout: &VarLayout, total: u64) -> Vec<std::ops::Range<u64>> {
    let static_end = layout.shared_size.next_multiple_of(16);
    let mut r: Vec<std::ops::Range<u64>> = Vec::new();
    // The kernel's shared layout: what it names and what the subroutines it calls name
    // (`Module::shared_layout`).
    for (var, v) in module.vars.iter() {
        if v.space == Space::Shared && layout.named[var.index()] {
            let off = layout.offsets[var.index()];
            r.push(off..off + u64::from(v.size));
        }
    }
    if total > static_end {
        r.push(static_end..total);
    }
    r.sort_by_key(|x| x.start);
    r.dedup();
    r
}

/// Memory one thread can reach while it runs: the launch-wide stores plus its CTA's shared
/// memory and its own local memory.
struct ThreadMem<'a> {
    mem: &'a mut Memory,
    shared: &'a mut Vec<u8>,
    local: &'a mut Vec<u8>,
    /// Which bytes of `shared` and `local` hold a defined value; empty unless the launch asks
    /// for [`Launch::undefined_uninit`].
    shared_def: &'a mut Vec<bool>,
    local_def: &'a mut Vec<bool>,
    /// Which shared bytes hold a value computed from an undefined register ([`poison`]).
    shared_poison: &'a mut Vec<bool>,
    params: &'a [u8],
    races: &'a mut RaceShadow,
    stack: &'a mut DynStack,
    /// Launch-wide index of the CTA's thread 0 (CTA index × threads per CTA), so that
    /// `first_thread + linear` names a thread of the whole launch (global race detection).
    first_thread: u32,
}

/// One thread's dynamic stack (see the module essay): `bytes` hold the 32-bit `.local`
/// offsets `[2^32 - bytes.len(), 2^32)`, the lowest the stack pointer has reached.
#[derive(Clone, Debug, Default)]
struct DynStack {
    /// The stack pointer, a `.local` offset: 0 (the frame base) or a wrapped negative one.
    sp: u32,
    bytes: Vec<u8>,
    /// Most bytes the stack may hold (`Launch::local_size`).
    room: u32,
    /// Whether each byte was written, kept when the launch asks for
    /// [`Launch::undefined_uninit`] (`track`), as for the local array.
    def: Vec<bool>,
    track: bool,
}

impl DynStack {
    /// A `.local` offset (from the kernel's frame base) as the address value the code sees:
    /// absolute, as the simulator's R1 makes it (the frame base is `Launch::local_size`, the
    /// stack's room below it), so that the value names the same bytes in every function.
    fn value(&self, off: u32) -> u64 {
        u64::from(off.wrapping_add(self.room))
    }

    /// The `.local` offset an address value names (the inverse of [`DynStack::value`]).
    fn offset(&self, addr: u64) -> u64 {
        u64::from((addr as u32).wrapping_sub(self.room))
    }

    /// Bytes in use below the frame base when the stack pointer is `sp` (0 at the base).
    fn depth(sp: u32) -> u64 {
        ((1u64 << 32) - u64::from(sp)) & 0xffff_ffff
    }

    /// The stack pointer `depth` bytes below the frame base (`depth` < 2^32).
    fn sp_at(depth: u64) -> u32 {
        ((1u64 << 32) - depth) as u32
    }

    /// Move the stack pointer to `sp`, `depth` bytes below the frame base, growing the bytes
    /// if needed.
    fn set_sp(&mut self, inst: Inst, sp: u32, depth: u64, what: &str) -> Result<(), EvalError> {
        if depth > u64::from(self.room) {
            return Err(EvalError::Undefined {
                inst,
                why: format!(
                    "{what} moves the stack pointer to {depth} bytes below the frame, past the {} bytes of stack this launch has",
                    self.room
                ),
            });
        }
        if depth as usize > self.bytes.len() {
            let grow = depth as usize - self.bytes.len();
            let mut grown = vec![0u8; grow];
            grown.extend_from_slice(&self.bytes);
            self.bytes = grown;
            if self.track {
                let mut grown = vec![false; grow];
                grown.extend_from_slice(&self.def);
                self.def = grown;
            }
        }
        self.sp = sp;
        Ok(())
    }

    /// The range of `bytes` holding `[addr, addr + size)` if that lies in the dynamic stack
    /// region (below the frame base), `None` if it does not touch it; an error if it lies there
    /// but not wholly in allocated memory.
    fn range(
        &self,
        inst: Inst,
        addr: u64,
        size: u32,
    ) -> Result<Option<std::ops::Range<usize>>, EvalError> {
        let lowest = (1u64 << 32) - self.room as u64;
        if self.room == 0 || addr < lowest || addr >= 1 << 32 {
            return Ok(None);
        }
        let end = addr + u64::from(size);
        let sp = (1u64 << 32) - Self::depth(self.sp);
        if addr < sp || end > 1 << 32 {
            return Err(EvalError::Undefined {
                inst,
                why: format!(
                    "{size}-byte local access at 0x{addr:x} is outside the dynamic stack's allocated memory [0x{sp:x}, 0x100000000)"
                ),
            });
        }
        let base = (1u64 << 32) - self.bytes.len() as u64;
        Ok(Some((addr - base) as usize..(end - base) as usize))
    }
}

/// What a step left the thread doing.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Status {
    Running,
    /// Stopped just after this barrier instruction, waiting for the rest of the CTA.
    AtBarrier(Inst),
    /// Stopped *at* a warp vote or shuffle, waiting for its warp (see `ir::warp`).
    AtVote,
    /// Stopped just after a spin-wait's yield ([`MemScope::Yield`]): the other threads run
    /// before this one goes on.
    Yielded,
    Exited,
}

/// One thread as a resumable state machine.
struct Thread {
    tid: [u32; 3],
    linear: u32,
    block: Block,
    pos: usize,
    regs: Vec<u64>,
    /// Has executed `membar.gl` or `membar.sys` (its global atomics release; see
    /// [`GlobalShadow`]).
    fenced: bool,
    /// Has executed any `membar` (its shared atomics release; see [`RaceShadow::atomic`]).
    fenced_shared: bool,
    /// Reads of the clock and of the global timer so far (see "Clocks and timers").
    timer_reads: [u64; 2],
    /// The function running: 0 the kernel, k > 0 `Ctx::subroutines[k - 1]`.
    cur: usize,
    /// The argument bytes of the running subroutine (R4 first); empty in the kernel.
    args: Vec<u8>,
    /// The callers of the running subroutine, innermost last.
    frames: Vec<CallFrame>,
    /// The `.local` offset of the running subroutine's frame (its variables' base; see
    /// [`SubLocals`]); 0 in the kernel.
    frame_base: u32,
    /// Per kernel value: computed from an undefined register ([`poison`]); empty unless
    /// the launch asks for [`Launch::undefined_registers`].
    poison: Vec<bool>,
}

/// A caller waiting for a subroutine to return (see "Execution").
struct CallFrame {
    cur: usize,
    block: Block,
    /// The position of the call instruction.
    pos: usize,
    regs: Vec<u64>,
    args: Vec<u8>,
    /// The caller's `Thread::frame_base`, and the dynamic stack pointer at the call (the
    /// return releases the callee's `.local` frame).
    frame_base: u32,
    sp: u32,
}

/// The `.local` variables of one subroutine ([`Module::local_layout`] of its own function):
/// each activation gets a frame of `size` bytes, aligned to `align`, on the thread's dynamic
/// stack (see "Execution"), and a variable's address is the frame's base plus its offset.
struct SubLocals {
    offsets: std::collections::HashMap<super::GlobalVar, u32>,
    size: u32,
    align: u32,
}

impl SubLocals {
    fn of(module: &Module, sub: &Function) -> SubLocals {
        let (offsets, size) = module.local_layout(sub);
        let align = offsets
            .keys()
            .map(|&gv| module.vars[gv].align)
            .fold(1, u32::max);
        SubLocals {
            offsets,
            size,
            align,
        }
    }
}

/// Whether `f` calls one of the module's subroutines (whose frames the simulator keeps
/// below the kernel's frame, in the launch's stack room).
pub fn calls_subroutine(f: &Function, extern_funcs: &[String], subroutines: &[Function]) -> bool {
    f.insts.values().any(|i| match &i.data {
        InstData::ExternCall { callee, .. } => extern_funcs
            .get(*callee as usize)
            .is_some_and(|n| subroutines.iter().any(|s| &s.name == n)),
        _ => false,
    })
}

/// Whether `data` needs the whole warp at once (not modelled inside a subroutine).
fn warp_wide(data: &InstData) -> bool {
    matches!(
        data,
        InstData::Vote { .. }
            | InstData::Shfl { .. }
            | InstData::Collective { .. }
            | InstData::BarrierRed { .. }
            | InstData::MemBar {
                scope: MemScope::Warp
            }
    ) || matches!(data, InstData::BarrierReg { red: Some(_), .. })
}

/// A [`Who`] as stored: plain zeroed integers, so that a region's shadow is allocated as
/// zeroed pages that cost nothing until touched.
type WhoCell = [u32; 3];

/// Sign-extend the low `bits` of `x`.
fn sx(x: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((x << shift) as i64) >> shift
}

/// A thread's memory as the system functions see it ([`crate::sysfn::Memory`]): generic
/// addresses, mapped as a generic load maps them, read and written a byte at a time (a
/// format string or an argument buffer has no alignment to check).
struct SysMem<'a, 'b> {
    tm: &'a mut ThreadMem<'b>,
    inst: Inst,
}

impl crate::sysfn::Memory for SysMem<'_, '_> {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        for (k, b) in out.iter_mut().enumerate() {
            let a = addr.wrapping_add(k as u64);
            let (space, at) =
                resolve(self.inst, Space::Generic, a, 1).map_err(|e| e.to_string())?;
            *b = self
                .tm
                .read(self.inst, space, at, 1)
                .map_err(|e| e.to_string())? as u8;
        }
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        for (k, &b) in data.iter().enumerate() {
            let a = addr.wrapping_add(k as u64);
            let (space, at) =
                resolve(self.inst, Space::Generic, a, 1).map_err(|e| e.to_string())?;
            self.tm
                .write(self.inst, space, at, 1, u64::from(b))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// A dump of every region, for test failure messages.
impl fmt::Display for RunOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.global {
            writeln!(f, "global 0x{:x}: {:02x?}", r.base, r.bytes)?;
        }
        for (i, s) in self.shared.iter().enumerate() {
            writeln!(f, "shared cta{i}: {s:02x?}")?;
        }
        for (i, l) in self.local.iter().enumerate() {
            writeln!(f, "local thread{i}: {l:02x?}")?;
        }
        Ok(())
    }
}
