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
//! spinning. A step limit (total instructions of the launch) stops infinite loops.
//!
//! A call of a subroutine (an [`InstData::ExternCall`] naming one of
//! [`Module::subroutines`], a recursive `.func`) pushes a frame on the thread's own call
//! stack (`Thread::frames`: the caller's function, position, registers and argument bytes)
//! and runs the callee from its entry with fresh registers; its `LoadParam`s read the
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
    let shared_vars = shared_ranges(module, func, &layout, mem.shared_init.len() as u64);
    let surf_index: Vec<Option<usize>> = module
        .surfrefs
        .iter()
        .map(|n| crate::surface::index_of(&launch.surfaces, n))
        .collect();

    let ctas = launch.grid.iter().map(|&d| u64::from(d)).product::<u64>();
    let mut shared_out = Vec::new();
    let mut local_out = Vec::new();
    let mut steps = 0u64;
    for cz in 0..launch.grid[2] {
        for cy in 0..launch.grid[1] {
            for cx in 0..launch.grid[0] {
                let ctx = Ctx {
                    extern_funcs: &module.extern_funcs,
                    func,
                    subroutines: &module.subroutines,
                    layout: &layout,
                    launch,
                    ctaid: [cx, cy, cz],
                    cta_index: cx + launch.grid[0] * (cy + launch.grid[1] * cz),
                    shared_vars: &shared_vars,
                    texrefs: &module.texrefs,
                    surf_index: &surf_index,
                };
                let (shared, locals) = run_cta(&ctx, &mut mem, &mut steps)?;
                shared_out.push(shared);
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
            sys: crate::sysfn::state_for_launch(launch),
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
    /// For each module `.surfref`, the launch surface bound to it.
    surf_index: &'a [Option<usize>],
}

/// The byte ranges of the `.shared` variables `func` names, and the dynamic part (the
/// `extern .shared` array) when the launch has one. Only these variables have storage
/// ([`Module::shared_layout`], as ptxas allocates them); a kernel that reaches the padding
/// between them through a pointer into one of its arrays has run off that array: undefined
/// in PTX.
fn shared_ranges(
    module: &Module,
    func: &Function,
    layout: &VarLayout,
    total: u64,
) -> Vec<std::ops::Range<u64>> {
    let static_end = layout.shared_size.next_multiple_of(16);
    let mut r: Vec<std::ops::Range<u64>> = Vec::new();
    for node in func.insts.values() {
        let InstData::SymbolAddr { var, .. } = node.data else {
            continue;
        };
        let Some(v) = module.vars.get(var) else {
            continue;
        };
        if v.space == Space::Shared {
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
}

/// A caller waiting for a subroutine to return (see "Execution").
struct CallFrame {
    cur: usize,
    block: Block,
    /// The position of the call instruction.
    pos: usize,
    regs: Vec<u64>,
    args: Vec<u8>,
}

fn run_cta(
    ctx: &Ctx<'_>,
    mem: &mut Memory,
    steps: &mut u64,
) -> Result<(Vec<u8>, Vec<Vec<u8>>), EvalError> {
    let [bx, by, bz] = ctx.launch.block;
    let mut shared = mem.shared_init.clone();
    let mut shared_def = mem.shared_def_init.clone();
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
                params,
                races: &mut races,
                stack,
                first_thread,
            };
            loop {
                let s = thread.step(ctx, &mut tm, steps)?;
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
    Ok((shared, locals))
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

/// Whether `f` has `alloca`, `stacksave` or `stackrestore` (see the module essay).
fn uses_dynamic_stack(f: &Function) -> bool {
    f.insts
        .values()
        .any(|i| matches!(i.data, InstData::Stack { .. }))
}

/// Check a barrier about to open (every live thread is waiting at one): the threads of a
/// warp must all wait at the same barrier instruction (PTX: on sm_6x and below, every thread
/// of a warp executes the same `bar` instruction; in divergent code the barrier is
/// undefined). Warps may wait at different instructions (the hardware counts arrivals per
/// barrier), and threads that exited count as arrived.
fn check_barrier(threads: &[Thread], status: &[Status]) -> Result<(), EvalError> {
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
fn reduce_barrier(
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
fn resolve_votes(
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

/// The race-detection kind of a plain access `kind` with cache operator `cache` in `sp`: a
/// strong global access (`ld/st.volatile`, and the `.relaxed/.acquire/.release` accesses that
/// `ir::build` makes volatile) counts as atomic. In the PTX memory model two strong accesses
/// of one size to one place are morally strong and never form a data race; the CAS loops of
/// emulated atomics (`ir/build/atomics.rs`) and `cuda::atomic_ref` loads race with nothing.
/// Shared memory keeps the plain rule (volatile warp-synchronous code there is checked as
/// before).
fn strong(cache: CacheOp, sp: Space, kind: Access) -> Access {
    if cache == CacheOp::Volatile && sp == Space::Global {
        Access::Atomic
    } else {
        kind
    }
}

/// How an instruction touches memory, for race detection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Access {
    Read,
    Write,
    Atomic,
}

/// A cell of [`RaceShadow`] names no thread, one (linear index + 1), several of one warp
/// ([`WARP_MANY`] + the warp), or several of different warps.
const MANY: u16 = u16::MAX;
/// Several threads, all of warp `x - WARP_MANY` (a CTA has at most 32 warps).
const WARP_MANY: u16 = 2048;

/// The warp of a [`RaceShadow`] cell entry other than 0 and [`MANY`].
fn shadow_warp(x: u16) -> u16 {
    if x >= WARP_MANY {
        x - WARP_MANY
    } else {
        (x - 1) / 32
    }
}

/// Who touched each byte of a CTA's shared memory in the current barrier interval: per
/// byte, the thread that wrote it non-atomically, the thread(s) that read it, and the
/// thread(s) that accessed it atomically (0: none, `linear + 1`, or [`MANY`]). Allocated at
/// the first shared access; only touched cells are cleared when a barrier opens.
#[derive(Default)]
struct RaceShadow {
    cells: Vec<[u16; 3]>,
    touched: Vec<u32>,
    /// For each shared address an atomic released at in this interval (its thread had
    /// executed a `membar`), the releasing threads (cell entries, `linear + 1`).
    released: std::collections::HashMap<u64, Vec<u16>>,
    /// The shared variables the kernel uses ([`shared_ranges`]).
    vars: Vec<std::ops::Range<u64>>,
}

impl RaceShadow {
    /// `bar.warp.sync` by the lanes of `warp`: their accesses so far are ordered before
    /// their later ones, so entries naming only threads of that warp are dropped (an entry
    /// that also names another warp's thread stays: that pair is still unordered).
    fn warp_sync(&mut self, warp: u32) {
        for &i in &self.touched {
            for x in &mut self.cells[i as usize] {
                if *x != 0 && *x != MANY && u32::from(shadow_warp(*x)) == warp {
                    *x = 0;
                }
            }
        }
    }

    fn clear(&mut self) {
        for &i in &self.touched {
            self.cells[i as usize] = [0; 3];
        }
        self.touched.clear();
        self.released.clear();
    }

    /// A shared atomic by `thread` at `addr` (message passing, as the emulated `mbarrier`
    /// does it: a `membar`, then the arrival's atomic; the waiter's atomic read of the same
    /// word). It acquires from every other thread that released there in this interval:
    /// their accesses so far are ordered before this thread's later ones, so entries naming
    /// only one of them are dropped (as [`RaceShadow::warp_sync`] does for a warp). It
    /// releases when the thread has `fenced`. Like the global model, this errs towards
    /// finding fewer races (everything a releaser did before the acquire counts as
    /// released, not only what came before its release; entries naming several threads
    /// stay), never more.
    fn atomic(&mut self, addr: u64, thread: u32, fenced: bool) {
        let me = thread as u16 + 1;
        if let Some(from) = self.released.get(&addr) {
            let from: Vec<u16> = from.iter().copied().filter(|&x| x != me).collect();
            if !from.is_empty() {
                for &i in &self.touched {
                    for x in &mut self.cells[i as usize] {
                        if from.contains(x) {
                            *x = 0;
                        }
                    }
                }
            }
        }
        if fenced {
            let r = self.released.entry(addr).or_default();
            if !r.contains(&me) {
                r.push(me);
            }
        }
    }

    /// Record `thread`'s access to shared bytes `range` (already bounds-checked against a
    /// shared memory of `len` bytes); a conflict with another thread's access in the same
    /// interval (at least one writing, not both atomic) is an `Undefined` error.
    fn note(
        &mut self,
        inst: Inst,
        len: usize,
        range: std::ops::Range<usize>,
        thread: u32,
        kind: Access,
    ) -> Result<(), EvalError> {
        let (start, end) = (range.start as u64, range.end as u64);
        if !self.vars.iter().any(|v| v.start <= start && end <= v.end) {
            return Err(EvalError::Undefined {
                inst,
                why: format!(
                    "thread {thread}'s {}-byte shared access at 0x{start:x} lies outside \
                     every .shared variable the kernel uses",
                    end - start
                ),
            });
        }
        if self.cells.len() != len {
            self.cells = vec![[0; 3]; len];
            self.touched.clear();
        }
        // Threads per CTA are at most 1024, so `thread + 1` fits below MANY.
        let me = thread as u16 + 1;
        let other = |x: u16| x != 0 && x != me;
        for i in range {
            let c = &mut self.cells[i];
            if *c == [0; 3] {
                self.touched.push(i as u32);
            }
            let [w, r, a] = *c;
            let (conflict, with) = match kind {
                Access::Read => (other(w) || other(a), if other(w) { w } else { a }),
                Access::Write => (
                    other(w) || other(r) || other(a),
                    [w, r, a].into_iter().find(|&x| other(x)).unwrap_or(0),
                ),
                Access::Atomic => (other(w) || other(r), if other(w) { w } else { r }),
            };
            if conflict {
                let who = if with == MANY {
                    "other threads".to_string()
                } else if with >= WARP_MANY {
                    format!("other threads of warp {}", with - WARP_MANY)
                } else {
                    format!("thread {}", with - 1)
                };
                let what = match kind {
                    Access::Read => "reads",
                    Access::Write => "writes",
                    Access::Atomic => "atomically updates",
                };
                return Err(EvalError::Undefined {
                    inst,
                    why: format!(
                        "data race on shared memory: thread {thread} {what} byte 0x{i:x}, which \
                         {who} accessed (at least one writing, not both atomically) with no \
                         barrier between"
                    ),
                });
            }
            let slot = match kind {
                Access::Write => 0,
                Access::Read => 1,
                Access::Atomic => 2,
            };
            c[slot] = match c[slot] {
                0 => me,
                x if x == me => me,
                MANY => MANY,
                x if shadow_warp(x) == shadow_warp(me) => WARP_MANY + shadow_warp(me),
                _ => MANY,
            };
        }
        Ok(())
    }
}

/// One entry of [`GlobalShadow`]: a thread of the launch (0: none, `index + 1`, or
/// [`MANY_GLOBAL`]) and the epochs of its access (for `MANY`, the oldest and the newest
/// member's; for one thread both are the same).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Who {
    thread: u32,
    first: u32,
    last: u32,
}

/// A [`Who`] naming at least two different threads.
const MANY_GLOBAL: u32 = u32::MAX;

/// A [`Who`] as stored: plain zeroed integers, so that a region's shadow is allocated as
/// zeroed pages that cost nothing until touched.
type WhoCell = [u32; 3];

impl Who {
    fn load(c: WhoCell) -> Who {
        Who {
            thread: c[0],
            first: c[1],
            last: c[2],
        }
    }

    fn store(self) -> WhoCell {
        [self.thread, self.first, self.last]
    }
}

/// Who touched each byte of global memory during the launch, for race detection across
/// the CTAs and barrier intervals of the whole launch (see the module essay).
///
/// Time is counted in epochs: each CTA starts a new one and each barrier opening in it
/// starts another, so epochs only grow and `cta_start` is the first epoch of the running
/// CTA. An earlier access (thread `t`, epoch `e`) is ordered before the current one (thread
/// `me`, epoch `now`) when `t == me` (program order), when `cta_start <= e < now` (same
/// CTA, an earlier barrier interval), or when `e <= acquired` (published to the running CTA
/// by a fence and an atomic, below); anything else (another CTA: `e < cta_start`; or the
/// same interval) is unordered.
///
/// Per byte: the last non-atomic writer, and the reader(s) and the atomic user(s) as one
/// [`Who`] each. When a new access is ordered after the recorded one, it replaces it: every
/// later access that is unordered with the old one is unordered with the new one too
/// (later CTAs are unordered with both; later intervals of this CTA are ordered after
/// both), so no race is missed. When they are unordered, the entry becomes `MANY` with the
/// oldest and newest epochs; a `MANY` entry whose oldest epoch lies in the running CTA thus
/// has all its members in one interval (members of earlier intervals would have been
/// replaced), and one whose oldest epoch is older has a member in another CTA. So `MANY` is
/// ordered before an access exactly when `cta_start <= first && last < now`, or when all
/// its members were acquired (`last <= acquired`).
///
/// **Fence and atomic.** The one way PTX orders threads of different CTAs that corpus
/// kernels use is message passing through an atomic (`threadFenceReduction`: store a
/// partial result, `membar.gl`, `atom.inc` a counter; the CTA whose atomic sees the last
/// count reads everyone's results). Modelled at epoch granularity: a global atomic by a
/// thread that has executed `membar.gl`/`membar.sys` releases, remembering the epoch
/// for the atomic's address; a later atomic on that address from another CTA acquires, and
/// from then on every access of an epoch up to the released one counts as ordered before
/// the rest of the acquiring CTA. This errs towards finding fewer races (a whole epoch is
/// released, and so is everything older; the fence after the acquiring atomic is not
/// required), never more.
///
/// Each region's shadow is allocated (zeroed) at its first access.
struct GlobalShadow {
    /// [`Launch::global_races`]: when off, nothing is recorded.
    on: bool,
    /// Per region and byte: writer, reader(s), atomic user(s).
    regions: Vec<Vec<[WhoCell; 3]>>,
    epoch: u32,
    cta_start: u32,
    /// Epochs up to this one are ordered before what the running CTA does from now on.
    acquired: u32,
    /// For each global address an atomic released at, the newest epoch it released.
    released: std::collections::HashMap<u64, u32>,
    /// Threads per CTA (to name a racing thread by CTA and index).
    cta_threads: u32,
}

impl GlobalShadow {
    fn new(on: bool, regions: usize, cta_threads: u32) -> GlobalShadow {
        GlobalShadow {
            on,
            regions: vec![Vec::new(); regions],
            epoch: 0,
            cta_start: 0,
            acquired: 0,
            released: Default::default(),
            cta_threads: cta_threads.max(1),
        }
    }

    /// A new CTA starts running: nothing in it is ordered after what earlier CTAs did.
    fn begin_cta(&mut self) {
        self.epoch += 1;
        self.cta_start = self.epoch;
        self.acquired = 0;
    }

    /// A barrier opened in the running CTA.
    fn barrier(&mut self) {
        self.epoch += 1;
    }

    /// A global atomic at `addr`: it acquires what an earlier CTA released there, and
    /// releases this epoch when its thread has `fenced`.
    fn atomic(&mut self, addr: u64, fenced: bool) {
        if let Some(&e) = self.released.get(&addr) {
            if e < self.cta_start {
                self.acquired = self.acquired.max(e);
            }
        }
        if fenced {
            self.released.insert(addr, self.epoch);
        }
    }

    fn name(&self, thread: u32) -> String {
        if thread == MANY_GLOBAL {
            return "other threads".to_string();
        }
        let t = thread - 1;
        format!(
            "thread {} of CTA {}",
            t % self.cta_threads,
            t / self.cta_threads
        )
    }

    /// Record the access of launch thread `thread` to bytes `range` of global store `k`
    /// (`len` bytes; `addr` is the access's global address); a conflict with an unordered
    /// access of another thread (at least one writing, not both atomic) is `Undefined`.
    #[allow(clippy::too_many_arguments)]
    fn note(
        &mut self,
        inst: Inst,
        k: usize,
        len: usize,
        range: std::ops::Range<usize>,
        addr: u64,
        thread: u32,
        kind: Access,
    ) -> Result<(), EvalError> {
        let (now, start, acquired) = (self.epoch, self.cta_start, self.acquired);
        let me = thread + 1;
        let ordered = |w: Who| {
            w.thread == 0
                || w.thread == me
                || (start <= w.first && w.last < now)
                || w.last <= acquired
        };
        let cells = &mut self.regions[k];
        if cells.len() != len {
            *cells = vec![[[0; 3]; 3]; len];
        }
        for (n, i) in range.enumerate() {
            let [w, r, a] = cells[i].map(Who::load);
            let none = Who::default();
            let with = match kind {
                Access::Read => [w, a, none],
                Access::Write => [w, r, a],
                Access::Atomic => [w, r, none],
            }
            .into_iter()
            .find(|&x| !ordered(x));
            if let Some(with) = with {
                let what = match kind {
                    Access::Read => "reads",
                    Access::Write => "writes",
                    Access::Atomic => "atomically updates",
                };
                return Err(EvalError::Undefined {
                    inst,
                    why: format!(
                        "data race on global memory: {} {what} the byte at 0x{:x}, which {} \
                         accessed (at least one writing, not both atomically) with nothing \
                         ordering the two",
                        self.name(me),
                        addr + n as u64,
                        self.name(with.thread)
                    ),
                });
            }
            let slot = match kind {
                Access::Write => 0,
                Access::Read => 1,
                Access::Atomic => 2,
            };
            let old = Who::load(cells[i][slot]);
            let new = if kind == Access::Write || ordered(old) {
                Who {
                    thread: me,
                    first: now,
                    last: now,
                }
            } else {
                Who {
                    thread: MANY_GLOBAL,
                    first: old.first,
                    last: now,
                }
            };
            cells[i][slot] = new.store();
        }
        Ok(())
    }
}

/// Sign-extend the low `bits` of `x`.
fn sx(x: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((x << shift) as i64) >> shift
}

impl Thread {
    fn get(&self, v: Value) -> u64 {
        self.regs[v.index()]
    }

    fn set(&mut self, v: Value, x: u64, ty: Type) {
        self.regs[v.index()] = x & ty.mask();
    }

    /// Call subroutine `cur` (see "Execution") with the argument bytes `args`, from the call
    /// instruction `inst` at the current position.
    fn enter(
        &mut self,
        ctx: &Ctx<'_>,
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
        let regs = std::mem::replace(&mut self.regs, vec![0; callee.values.len()]);
        self.frames.push(CallFrame {
            cur: self.cur,
            block: self.block,
            pos: self.pos,
            regs,
            args: std::mem::replace(&mut self.args, args),
        });
        self.cur = cur;
        self.block = callee.layout[0];
        self.pos = 0;
        Ok(Status::Running)
    }

    /// Return from the running subroutine with its result words, past the caller's call.
    fn leave(&mut self, ctx: &Ctx<'_>, inst: Inst, words: &[u64]) -> Result<Status, EvalError> {
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
        let func = match self.cur {
            0 => ctx.func,
            k => &ctx.subroutines[k - 1],
        };
        let call = func.blocks[self.block].insts[self.pos];
        if let (Some(&r), Some(&w)) = (func.insts[call].results.first(), words.first()) {
            self.set(r, w, func.values[r].ty);
        }
        self.pos += 1;
        Ok(Status::Running)
    }

    /// Execute one instruction.
    fn step(
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
                // Verified against the module, so the variable exists.
                out = Some(ctx.layout.addrs[var.index()]);
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
                return self.leave(ctx, inst, &words);
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
                        out = Some(u64::from(new));
                    }
                    StackOp::Save => out = Some(u64::from(sp)),
                    StackOp::Restore => {
                        let to = arg.unwrap_or(0);
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
                let words =
                    super::tex::eval(*op, *handle, &vals, ctx.texrefs, &ctx.launch.textures)
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
                    return self.enter(ctx, inst, k + 1, bytes);
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
    fn surface(
        &mut self,
        ctx: &Ctx<'_>,
        tm: &mut ThreadMem<'_>,
        inst: Inst,
        access: &crate::surface::SurfAccess,
        args: &[Value],
    ) -> Result<(), EvalError> {
        use crate::surface::{self, SurfError, SurfHandle, SurfOp};
        let h = access.handle_operands();
        let n = access.shape.coords();
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
        let coords: Vec<i32> = args[h..h + n].iter().map(|&v| self.get(v) as i32).collect();
        let size = access.size();
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
    fn system_call(
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

    fn branch(&mut self, func: &Function, block: Block, args: &[Value]) {
        let vals: Vec<u64> = args.iter().map(|&a| self.get(a)).collect();
        for (&p, x) in func.blocks[block].params.iter().zip(vals) {
            self.set(p, x, func.values[p].ty);
        }
        self.block = block;
        self.pos = 0;
    }

    fn special(&self, ctx: &Ctx<'_>, reg: SpecialReg) -> u64 {
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

/// The result of a *pure* instruction: one whose value depends on its operands' values and
/// nothing else (no memory, no thread, no launch): `Unary`, `Binary`, `MulWide`, `Convert`,
/// `Select`, `Icmp` and `Bits`. `ty_of` gives each operand's type and `get` its value (masked
/// to its type, as registers hold them); the result is *not* masked to the result's type
/// (the caller does, as [`Thread::step`] does when it writes the register). `None` for every
/// other instruction.
///
/// This is the one definition of these operations: the interpreter runs it, and
/// `ir::simplify` folds constants with it, so folding cannot disagree with the reference.
pub fn pure(
    data: &InstData,
    ty_of: impl Fn(Value) -> Type,
    get: impl Fn(Value) -> u64,
) -> Option<u64> {
    Some(match data {
        InstData::Unary { op, arg } => {
            let a = get(*arg);
            match op {
                UnaryOp::Not => !a,
                UnaryOp::Neg => a.wrapping_neg(),
            }
        }
        InstData::Binary { op, args } => binary(*op, ty_of(args[0]), get(args[0]), get(args[1])),
        InstData::MulWide { signed, args } => {
            let bits = ty_of(args[0]).bits();
            let (a, b) = (get(args[0]), get(args[1]));
            if *signed {
                (sx(a, bits) * sx(b, bits)) as u64
            } else {
                a * b
            }
        }
        InstData::Convert { op, arg, .. } => {
            let a = get(*arg);
            match op {
                ConvOp::Sext => sx(a, ty_of(*arg).bits()) as u64,
                ConvOp::Zext | ConvOp::Trunc => a,
            }
        }
        InstData::Select { cond, args } => get(if get(*cond) != 0 { args[0] } else { args[1] }),
        InstData::Icmp { cc, args } => {
            let bits = ty_of(args[0]).bits();
            let (a, b) = (get(args[0]), get(args[1]));
            let (x, y) = (sx(a, bits), sx(b, bits));
            u64::from(match cc {
                IntCC::Eq => a == b,
                IntCC::Ne => a != b,
                IntCC::Slt => x < y,
                IntCC::Sle => x <= y,
                IntCC::Sgt => x > y,
                IntCC::Sge => x >= y,
                IntCC::Ult => a < b,
                IntCC::Ule => a <= b,
                IntCC::Ugt => a > b,
                IntCC::Uge => a >= b,
            })
        }
        InstData::Bits { op, args } => {
            let vals: SmallVec<[u64; 4]> = args.iter().map(|&a| get(a)).collect();
            op.eval(&vals)
        }
        _ => return None,
    })
}

fn binary(op: BinaryOp, ty: Type, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let (x, y) = (sx(a, bits), sx(b, bits));
    // Shift counts are i32 operands read as unsigned; PTX clamps counts beyond the width.
    let count = b & 0xffff_ffff;
    match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::MulHiS => ((i128::from(x) * i128::from(y)) >> bits) as u64,
        BinaryOp::MulHiU => ((u128::from(a) * u128::from(b)) >> bits) as u64,
        BinaryOp::Shl if count >= u64::from(bits) => 0,
        BinaryOp::Shl => a << count,
        BinaryOp::ShrU if count >= u64::from(bits) => 0,
        BinaryOp::ShrU => a >> count,
        BinaryOp::ShrS => (x >> count.min(u64::from(bits) - 1)) as u64,
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::MinS => {
            if x <= y {
                a
            } else {
                b
            }
        }
        BinaryOp::MinU => a.min(b),
        BinaryOp::MaxS => {
            if x >= y {
                a
            } else {
                b
            }
        }
        BinaryOp::MaxU => a.max(b),
        BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS => divide(op, a, b, x, y),
        BinaryOp::AddSatS | BinaryOp::SubSatS => {
            let (x, y) = (i128::from(x), i128::from(y));
            let exact = if op == BinaryOp::AddSatS {
                x + y
            } else {
                x - y
            };
            let max = (1i128 << (bits - 1)) - 1;
            exact.clamp(-max - 1, max) as u64
        }
    }
}

/// Integer division as the IR defines it (see the `ir` essay): by zero gives all ones; the
/// signed overflow wraps. `a`, `b` are zero-extended and `x`, `y` sign-extended operands of
/// one type; the result is masked by the caller to that type.
fn divide(op: BinaryOp, a: u64, b: u64, x: i64, y: i64) -> u64 {
    if b == 0 {
        return u64::MAX;
    }
    match op {
        BinaryOp::DivU => a / b,
        BinaryOp::RemU => a % b,
        // `wrapping_*`: i64::MIN / -1 is the one overflow (64-bit); narrower types fit.
        BinaryOp::DivS => x.wrapping_div(y) as u64,
        _ => x.wrapping_rem(y) as u64,
    }
}

/// The address an access names: zero-extended address plus signed offset, truncated to 32
/// bits in the spaces whose addresses are 32-bit.
fn effective_address(space: Space, addr: u64, offset: i32) -> u64 {
    let ea = addr.wrapping_add(i64::from(offset) as u64);
    match space {
        Space::Global | Space::Generic => ea,
        _ => ea & 0xffff_ffff,
    }
}

/// Map a generic address into its space; other spaces map to themselves. Checks alignment.
fn resolve(inst: Inst, space: Space, ea: u64, size: u32) -> Result<(Space, u64), EvalError> {
    let (sp, addr) = if space == Space::Generic {
        let window = |base: u64| (base..base + WINDOW_SIZE).contains(&ea);
        if window(SHARED_WINDOW_BASE) {
            (Space::Shared, ea - SHARED_WINDOW_BASE)
        } else if window(LOCAL_WINDOW_BASE) {
            (Space::Local, ea - LOCAL_WINDOW_BASE)
        } else if window(LOCAL_WINDOW_BASE + (1 << 32) - WINDOW_SIZE) {
            // The dynamic stack's (negative) offsets, as `cvta.local` of a 64-bit one makes.
            (Space::Local, ea - LOCAL_WINDOW_BASE)
        } else if window(CONST_WINDOW_BASE) {
            (Space::Const, ea - CONST_WINDOW_BASE)
        } else {
            (Space::Global, ea)
        }
    } else {
        (space, ea)
    };
    if ea % u64::from(size.max(1)) != 0 {
        return Err(EvalError::Misaligned {
            inst,
            space: sp,
            addr: ea,
            size,
        });
    }
    Ok((sp, addr))
}

/// Read `size` (≤ 8) little-endian bytes of `bytes` at `addr`.
fn read(inst: Inst, space: Space, bytes: &[u8], addr: u64, size: u32) -> Result<u64, EvalError> {
    let range = range_in(inst, space, bytes.len(), addr, size)?;
    Ok(bytes[range]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

/// A shared access past the kernel's `len` bytes of shared memory (but inside the window)
/// is an array overrun: undefined, like an access between the kernel's variables (see the
/// essay), not a fault.
fn within_shared(inst: Inst, addr: u64, size: u32, len: usize) -> Result<(), EvalError> {
    if addr.saturating_add(u64::from(size)) > len as u64 && addr < WINDOW_SIZE {
        return Err(EvalError::Undefined {
            inst,
            why: format!(
                "{size}-byte shared access at 0x{addr:x} lies outside every .shared variable \
                 the kernel uses (past its {len} bytes of shared memory)"
            ),
        });
    }
    Ok(())
}

fn range_in(
    inst: Inst,
    space: Space,
    len: usize,
    addr: u64,
    size: u32,
) -> Result<std::ops::Range<usize>, EvalError> {
    let end = addr.checked_add(u64::from(size));
    match end {
        Some(end) if end <= len as u64 => Ok(addr as usize..end as usize),
        _ => Err(EvalError::OutOfBounds {
            inst,
            space,
            addr,
            size,
        }),
    }
}

impl ThreadMem<'_> {
    /// The bytes of `space` holding `[addr, addr + size)` and the range inside them.
    fn locate(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
    ) -> Result<(&mut [u8], std::ops::Range<usize>), EvalError> {
        let bytes: &mut [u8] = match space {
            Space::Shared => {
                within_shared(inst, addr, size, self.shared.len())?;
                self.shared
            }
            Space::Local => {
                if let Some(r) = self.stack.range(inst, addr, size)? {
                    return Ok((&mut self.stack.bytes, r));
                }
                self.local
            }
            Space::Const => &mut self.mem.constant,
            // Param bytes are only read through `read` below; stores to param are rejected by
            // the verifier, so reaching here means a generic address, which never maps param.
            Space::Param => {
                return Err(EvalError::OutOfBounds {
                    inst,
                    space,
                    addr,
                    size,
                })
            }
            Space::Global | Space::Generic => {
                let Some((k, r)) = self.mem.global_at(addr, size) else {
                    return Err(EvalError::Unmapped { inst, addr, size });
                };
                let bytes = match self.mem.global.get_mut(k) {
                    Some(region) => &mut region.bytes,
                    None => &mut self.mem.module_global,
                };
                return Ok((bytes, r));
            }
        };
        let r = range_in(inst, space, bytes.len(), addr, size)?;
        Ok((bytes, r))
    }

    fn read(&mut self, inst: Inst, space: Space, addr: u64, size: u32) -> Result<u64, EvalError> {
        if space == Space::Param {
            return read(inst, space, self.params, addr, size);
        }
        let (bytes, r) = self.locate(inst, space, addr, size)?;
        let r2 = r.clone();
        let value = bytes[r]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let in_stack = space == Space::Local && self.stack.range(inst, addr, size)?.is_some();
        let def: &[bool] = match space {
            Space::Local if in_stack => &self.stack.def,
            Space::Shared => self.shared_def,
            Space::Local => self.local_def,
            _ => return Ok(value),
        };
        if !def.is_empty() && def[r2].iter().any(|d| !d) {
            return Err(EvalError::Undefined {
                inst,
                why: format!("reads {space} memory that nothing wrote (its value is undefined)"),
            });
        }
        Ok(value)
    }

    /// Record an access for race detection (shared and global memory; see the module
    /// essay). `thread` is the thread's linear index in its CTA.
    fn note(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
        thread: u32,
        kind: Access,
    ) -> Result<(), EvalError> {
        match space {
            Space::Shared => {
                let len = self.shared.len();
                within_shared(inst, addr, size, len)?;
                let r = range_in(inst, space, len, addr, size)?;
                self.races.note(inst, len, r, thread, kind)
            }
            Space::Global | Space::Generic => {
                let Some((k, r)) = self.mem.global_at(addr, size) else {
                    return Err(EvalError::Unmapped { inst, addr, size });
                };
                if !self.mem.global_races.on {
                    return Ok(());
                }
                let len = match self.mem.global.get(k) {
                    Some(region) => region.bytes.len(),
                    None => self.mem.module_global.len(),
                };
                let who = self.first_thread + thread;
                self.mem.global_races.note(inst, k, len, r, addr, who, kind)
            }
            _ => Ok(()),
        }
    }

    fn check(&mut self, inst: Inst, space: Space, addr: u64, size: u32) -> Result<(), EvalError> {
        self.locate(inst, space, addr, size).map(|_| ())
    }

    fn write(
        &mut self,
        inst: Inst,
        space: Space,
        addr: u64,
        size: u32,
        x: u64,
    ) -> Result<(), EvalError> {
        let (bytes, r) = self.locate(inst, space, addr, size)?;
        for (i, b) in bytes[r.clone()].iter_mut().enumerate() {
            *b = (x >> (8 * i)) as u8;
        }
        let in_stack = space == Space::Local && self.stack.range(inst, addr, size)?.is_some();
        let def = match space {
            Space::Local if in_stack => &mut self.stack.def,
            Space::Shared => &mut self.shared_def,
            Space::Local => &mut self.local_def,
            _ => return Ok(()),
        };
        if !def.is_empty() {
            def[r].fill(true);
        }
        Ok(())
    }
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
