//! System functions: what a call to a bodiless `.extern .func` that the CUDA driver or the
//! device runtime provides *means*, shared by [`crate::ir::eval`] and the simulator so that
//! `verify` can compare kernels that print, allocate or assert.
//!
//! In: the callee's name, its arguments (one byte slice per `.param` in the prototype's order,
//! little-endian, each as wide as the parameter), a [`Memory`] that reads and writes generic
//! addresses of the running launch, and the launch's [`State`] (printf records, the heap, which
//! thread is calling). Out: the bytes of the return parameter (empty for a function without
//! one), or an [`Error`]: the thread traps (`__assertfail`), the function is a device-runtime
//! entry point that is not modelled ([`Error::Unsupported`]: `verify` reports the kernel as
//! unsupported, exit 2), the function is unknown, or the call itself is undefined (a bad
//! pointer, a double free).
//!
//! # The functions
//!
//! * **`vprintf(fmt, args) -> i32`**: CUDA's device `printf`. `fmt` is the generic address of a
//!   NUL-terminated format string, `args` the generic address of the argument buffer nvcc
//!   builds on the stack: the arguments after the format, in order, each at the next multiple
//!   of its size; after C's default promotions an integer conversion (`%d %i %u %x %X %o %c`
//!   with no length or `hh`/`h`) reads 4 bytes, with `l`/`ll`/`j`/`z`/`t` 8 bytes; every
//!   floating conversion (`%f %F %e %E %g %G %a %A`) reads an 8-byte double; `%s` and `%p`
//!   read a pointer (8 bytes, 4 in a 32-bit module: [`State::pointer_bytes`]); a `*` width or
//!   precision reads a 4-byte int. Formatting follows C (glibc): flags `- + space # 0`, width,
//!   precision, `%%`, `(null)` for a null `%s`, `(nil)` for a null `%p`, `inf`/`nan` (with
//!   sign; `-nan` for a NaN with its sign bit set), `%a` as glibc writes it (`0x1.8p+1`).
//!   Doubles are formatted exactly (correctly rounded from their binary value, ties to even, as
//!   glibc). The result is the number of arguments consumed, as CUDA documents (`-1` for a null
//!   format). A conversion that C does not define (`%n`, `%y`, an `l` on `%c`) is copied to the
//!   output as written and consumes nothing, so a model never guesses a byte count.
//! * **`malloc(size) -> ptr`** and **`free(ptr)`**: a model device heap in one global region
//!   `[HEAP_BASE, HEAP_BASE + heap_size)` that both sides add to the launch ([`heap_region`]).
//!   The two sides run threads in different orders (the interpreter one thread at a time, the
//!   simulator a warp at a time), so an address must not depend on that order: each thread of
//!   the launch owns an equal slice of the heap (its *arena*, by global linear thread index) and
//!   allocates from it upward, 16-byte aligned as CUDA's `malloc`; freed memory is not reused.
//!   A request that does not fit the arena returns null, as CUDA's `malloc` does when the heap
//!   is exhausted; `malloc(0)` returns a unique non-null pointer (16 bytes reserved). `free`
//!   of null does nothing; freeing a pointer that `malloc` did not return, or twice, is
//!   undefined ([`Error::Undefined`]). Every thread may free any block (not order-sensitive:
//!   only the block's own state changes).
//! * **`__assertfail(message, file, line, function, charSize)`**: the thread traps with
//!   CUDA's message, `file:line: function: block: [x,y,z], thread: [x,y,z] Assertion
//!   `message` failed.` ([`Error::Trap`]); two sides agree when both trap with the same text.
//! * **Device-runtime entry points** (`cudaGetParameterBuffer`, `cudaLaunchDevice`,
//!   `cudaMalloc`, `cudaStreamCreateWithFlags`, `cudaDeviceSynchronize`, ... : every name in
//!   [`DEVICE_RUNTIME`]): [`Error::Unsupported`] with the reason. A child launch's effects
//!   cannot be modelled without running the child grid, and guessing would hide mismatches.
//!
//! # Printf output and its order
//!
//! The driver prints records in an unspecified order. Here each call appends one record keyed
//! by (CTA linear index, thread linear index in the CTA, the thread's own call count), and
//! [`State::printf_output`] concatenates the records sorted by that key: CTAs in linear order
//! (x fastest), threads in linear order, each thread's calls in program order. Both sides
//! produce the same text whatever order they run threads in, and `verify` compares it.
//!
//! # Where it runs
//!
//! `ir::eval` calls [`call_abi`] at an `ExternCall`, the simulator at a `JCAL`
//! (`sim::syscall`), both with the argument registers R4..R15 as the call ABI fills them
//! ([`register_bytes`]), one [`State`] per launch ([`state_for_launch`]: the heap is the
//! launch's region at [`HEAP_BASE`], [`add_heap`]) and their own generic-address memory.
//! Their outputs carry [`State::printf_output`]; `verify` compares it.
//!
//! Invariants: nothing here panics on any input (bad addresses and malformed arguments are
//! errors); the output depends only on the arguments, memory and the calling thread.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// First byte of the model heap (a global region below the module's 32-bit globals, clear of
/// the shared/local/const windows and of verify's buffers).
pub const HEAP_BASE: u64 = 0x0400_0000;
/// Default size of the model heap in bytes (the largest is `0x0400_0000`, up to the 32-bit
/// module globals).
pub const HEAP_SIZE: u64 = 0x0010_0000;
/// Largest heap: the space from [`HEAP_BASE`] up to the 32-bit module globals.
pub const HEAP_SIZE_MAX: u64 = 0x0400_0000;
/// Alignment of every `malloc` result, as CUDA's device `malloc`.
pub const HEAP_ALIGN: u64 = 16;
/// Longest string `%s` or a format may read before the model stops with an error (a
/// missing NUL terminator is a bug the model should report, not run away on).
pub const MAX_STRING: usize = 1 << 16;

/// The device-runtime entry points (libcudadevrt and the driver's device side) that a model
/// refuses as unsupported.
pub const DEVICE_RUNTIME: &[&str] = &[
    "cudaGetParameterBuffer",
    "cudaGetParameterBufferV2",
    "cudaLaunchDevice",
    "cudaLaunchDeviceV2",
    "cudaMalloc",
    "cudaFree",
    "cudaMemcpyAsync",
    "cudaMemcpy2DAsync",
    "cudaMemcpy3DAsync",
    "cudaMemsetAsync",
    "cudaMemset2DAsync",
    "cudaMemset3DAsync",
    "cudaStreamCreateWithFlags",
    "cudaStreamDestroy",
    "cudaStreamWaitEvent",
    "cudaEventCreateWithFlags",
    "cudaEventRecord",
    "cudaEventRecordWithFlags",
    "cudaEventDestroy",
    "cudaDeviceSynchronize",
    "cudaDeviceGetAttribute",
    "cudaDeviceGetLimit",
    "cudaDeviceGetCacheConfig",
    "cudaDeviceGetSharedMemConfig",
    "cudaGetDevice",
    "cudaGetDeviceCount",
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaGetErrorString",
    "cudaGetErrorName",
    "cudaFuncGetAttributes",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaRuntimeGetVersion",
    "cudaCGGetIntrinsicHandle",
    "cudaCGSynchronize",
    "cudaCGSynchronizeGrid",
    "cudaCGGetSize",
    "cudaCGGetRank",
];

/// Whether `name` is a system function this module knows (modelled or refused), so that a
/// caller can tell a system call from a call to user code that is merely missing.
pub fn is_system_function(name: &str) -> bool {
    matches!(name, "vprintf" | "malloc" | "free" | "__assertfail") || is_device_runtime(name)
}

/// Whether `name` is a device-runtime entry point ([`DEVICE_RUNTIME`], or any `cudaXxx` name
/// the device runtime may add: they are refused alike).
pub fn is_device_runtime(name: &str) -> bool {
    DEVICE_RUNTIME.contains(&name) || name.starts_with("cuda")
}

/// Generic-address memory of the running launch, as the caller (interpreter or simulator) maps
/// it. Errors are the caller's own message for a bad access.
pub trait Memory {
    /// Fill `out` with the bytes at generic address `addr`.
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), String>;
    /// Store `data` at generic address `addr`.
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String>;
}

/// Which thread is calling: its CTA and its thread index, as `%ctaid` and `%tid`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Caller {
    pub ctaid: [u32; 3],
    pub tid: [u32; 3],
}

/// One `printf` call's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfRecord {
    /// Linear index of the CTA (x fastest).
    pub cta: u64,
    /// Linear index of the thread in its CTA.
    pub thread: u64,
    /// The thread's own count of `printf` calls before this one.
    pub seq: u64,
    /// The formatted bytes.
    pub text: Vec<u8>,
}

/// A heap block: where it is, how many bytes were asked for, whether it was freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    size: u64,
    freed: bool,
}

/// The state system functions keep over one launch.
#[derive(Clone, Debug)]
pub struct State {
    /// The launch's grid and CTA shape (to linearise [`Caller`]s).
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Pointer width of the module: 8, or 4 in a 32-bit module (`%s`, `%p`, `malloc`).
    pub pointer_bytes: u8,
    /// The thread making the next call; the caller sets it before each call.
    pub caller: Caller,
    /// The heap region's size (it starts at [`HEAP_BASE`]).
    pub heap_size: u64,
    records: Vec<PrintfRecord>,
    printf_calls: HashMap<(u64, u64), u64>,
    /// Bytes used so far in each thread's arena, by global linear thread index.
    arena_used: HashMap<u64, u64>,
    blocks: BTreeMap<u64, Block>,
}

/// Why a system call did not return normally.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The thread traps (`__assertfail`) with this message.
    #[error("{message}")]
    Trap { message: String },
    /// The function exists but is not modelled (device runtime): nothing can be compared.
    #[error("{name}: {reason}")]
    Unsupported { name: String, reason: String },
    /// No system function has this name.
    #[error("'{name}' is not a system function leafold models")]
    Unknown { name: String },
    /// The arguments do not match the function's prototype.
    #[error("{name}: {why}")]
    BadArguments { name: String, why: String },
    /// The call has no defined meaning (a bad pointer, a double free, an unreadable string).
    #[error("{name}: undefined: {why}")]
    Undefined { name: String, why: String },
}

impl State {
    /// The state of a launch of `grid` CTAs of `block` threads, 64-bit pointers and the default
    /// heap.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> State {
        State {
            grid,
            block,
            pointer_bytes: 8,
            caller: Caller::default(),
            heap_size: HEAP_SIZE,
            records: Vec::new(),
            printf_calls: HashMap::new(),
            arena_used: HashMap::new(),
            blocks: BTreeMap::new(),
        }
    }

    fn cta_linear(&self, c: Caller) -> u64 {
        let [gx, gy, _] = self.grid.map(u64::from);
        let [x, y, z] = c.ctaid.map(u64::from);
        x + gx * (y + gy * z)
    }

    fn thread_linear(&self, c: Caller) -> u64 {
        let [bx, by, _] = self.block.map(u64::from);
        let [x, y, z] = c.tid.map(u64::from);
        x + bx * (y + by * z)
    }

    fn threads_per_cta(&self) -> u64 {
        self.block.iter().map(|&n| u64::from(n)).product()
    }

    fn threads(&self) -> u64 {
        self.grid.iter().map(|&n| u64::from(n)).product::<u64>() * self.threads_per_cta()
    }

    /// The printf records so far, in the order of their calls (not sorted).
    pub fn printf_records(&self) -> &[PrintfRecord] {
        &self.records
    }

    /// The launch's printf output: every record, sorted by (CTA, thread, call), concatenated.
    pub fn printf_output(&self) -> Vec<u8> {
        let mut sorted: Vec<&PrintfRecord> = self.records.iter().collect();
        sorted.sort_by_key(|r| (r.cta, r.thread, r.seq));
        sorted.iter().flat_map(|r| r.text.iter().copied()).collect()
    }

    /// Bytes of each thread's arena (16-aligned; zero when the heap is smaller than one
    /// 16-byte block per thread).
    pub fn arena_size(&self) -> u64 {
        let threads = self.threads().max(1);
        (self.heap_size.min(HEAP_SIZE_MAX) / threads) / HEAP_ALIGN * HEAP_ALIGN
    }
}

/// The global region the model heap lives in (zero bytes), for a launch's region list.
pub fn heap_region(state: &State) -> crate::ir::eval::GlobalRegion {
    crate::ir::eval::GlobalRegion {
        base: HEAP_BASE,
        bytes: vec![0; state.heap_size.min(HEAP_SIZE_MAX) as usize],
    }
}

/// The state of one launch, as both sides build it: the launch's grid and block, 64-bit
/// pointers (4-byte ones for a 32-bit module, `addr32`: `vprintf(fmt, args)` in R4 and R5,
/// as ptxas 11.8 passes them, probe `p32.ptx` in docs/calls.md), and the heap the launch
/// gives (the length of its global region at [`HEAP_BASE`], [`add_heap`]; none: an empty
/// heap, on which every `malloc` returns null).
pub fn state_for_launch(launch: &crate::ir::eval::Launch, addr32: bool) -> State {
    let mut s = State::new(launch.grid, launch.block);
    if addr32 {
        s.pointer_bytes = 4;
    }
    s.heap_size = heap_of(launch).map_or(0, |b| (b.len() as u64).min(HEAP_SIZE_MAX));
    s
}

/// The launch's global region at [`HEAP_BASE`], if it has one.
fn heap_of(launch: &crate::ir::eval::Launch) -> Option<&[u8]> {
    launch
        .global
        .iter()
        .find(|r| r.base == HEAP_BASE)
        .map(|r| &r.bytes[..])
}

/// Whether a module whose bodiless functions are `extern_funcs` needs the model heap.
pub fn needs_heap(extern_funcs: &[String]) -> bool {
    extern_funcs.iter().any(|n| n == "malloc" || n == "free")
}

/// Give `launch` the model heap ([`heap_region`] of its own [`State`]) unless it has one.
/// `verify` does this for kernels that call `malloc`/`free`, so that the heap's bytes are
/// part of both sides' output and compared like any other global region.
pub fn add_heap(launch: &mut crate::ir::eval::Launch) {
    if heap_of(launch).is_some() {
        return;
    }
    let mut state = State::new(launch.grid, launch.block);
    state.heap_size = HEAP_SIZE;
    launch.global.push(heap_region(&state));
}

/// Bytes of the argument registers a system call may read: R4..R15 (the sm_50 call ABI
/// passes at most twelve argument registers, docs/calls.md).
pub const ARG_REGISTER_BYTES: usize = 48;

/// The bytes of the argument registers R4..R15 ([`ARG_REGISTER_BYTES`]) from (register,
/// word) pairs; registers not named (holes) are zero. Words from `ir::STACK_ARG_REG` up (a
/// subroutine's stack arguments) follow R15's, so the bytes grow to hold them.
pub fn register_bytes(words: &[(u8, u32)]) -> Vec<u8> {
    let end = words
        .iter()
        .map(|&(r, _)| 4 * (usize::from(r.max(4)) - 3))
        .fold(ARG_REGISTER_BYTES, usize::max);
    let mut bytes = vec![0u8; end];
    for &(r, w) in words {
        let at = usize::from(r.wrapping_sub(4)) * 4;
        if let Some(b) = bytes.get_mut(at..at + 4) {
            b.copy_from_slice(&w.to_le_bytes());
        }
    }
    bytes
}

/// [`call`] from the bytes of the argument registers R4.. ([`abi_params`]): what `ir::eval`
/// and the simulator both run at a call, so that they read the parameters alike.
pub fn call_abi(
    name: &str,
    registers: &[u8],
    mem: &mut dyn Memory,
    state: &mut State,
) -> Result<Vec<u8>, Error> {
    let Some(params) = abi_params(name, registers, state.pointer_bytes) else {
        return Err(if is_system_function(name) {
            bad_args(name, "its argument registers are missing".to_string())
        } else {
            Error::Unknown {
                name: name.to_string(),
            }
        });
    };
    call(name, &params, mem, state)
}

/// An assertion message ([`Error::Trap`]) without its `block: [..], thread: [..]` part: which
/// failing thread stops a launch first depends on the order threads run in (the interpreter
/// one thread at a time, the simulator a warp at a time; CUDA prints every failing thread's
/// message), so `verify` compares assertions by this text.
pub fn assertion_text(message: &str) -> String {
    match (message.find(" block: ["), message.find("] Assertion `")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &message[..a], &message[b + 1..]),
        _ => message.to_string(),
    }
}

/// Run system function `name` for [`State::caller`] with `args` (one byte slice per parameter,
/// in prototype order). See the module essay.
pub fn call(
    name: &str,
    args: &[&[u8]],
    mem: &mut dyn Memory,
    state: &mut State,
) -> Result<Vec<u8>, Error> {
    match name {
        "vprintf" => {
            let [fmt, buf] = pointers::<2>(name, args, state)?;
            let count = vprintf(fmt, buf, mem, state)?;
            Ok(count.to_le_bytes().to_vec())
        }
        "malloc" => {
            let [size] = pointers::<1>(name, args, state)?;
            let p = malloc(size, state);
            Ok(p.to_le_bytes()[..usize::from(state.pointer_bytes)].to_vec())
        }
        "free" => {
            let [p] = pointers::<1>(name, args, state)?;
            free(p, state)?;
            Ok(Vec::new())
        }
        "__assertfail" => Err(assertfail(args, mem, state)?),
        _ if is_device_runtime(name) => Err(Error::Unsupported {
            name: name.to_string(),
            reason: "a device-runtime call (dynamic parallelism, device-side CUDA API) is not \
                     modelled: its effect depends on child grids and the runtime"
                .to_string(),
        }),
        _ => Err(Error::Unknown {
            name: name.to_string(),
        }),
    }
}

/// The parameters of system function `name` out of the bytes of its argument registers
/// (R4 first, 4 bytes each, as the sm_50 call ABI passes them: each parameter in the next
/// registers aligned to its size, so a 64-bit one starts at an even register), one slice per
/// parameter as [`call`] takes them. `pointer_bytes` is [`State::pointer_bytes`]. `None`: not
/// a function with a known prototype (the device-runtime entry points are refused by [`call`]
/// whatever their arguments, so they get an empty list).
pub fn abi_params<'a>(name: &str, registers: &'a [u8], pointer_bytes: u8) -> Option<Vec<&'a [u8]>> {
    let p = usize::from(pointer_bytes);
    let sizes: Vec<usize> = match name {
        "vprintf" => vec![p, p],
        "malloc" | "free" => vec![p],
        "__assertfail" => vec![p, p, 4, p, p],
        _ if is_device_runtime(name) => return Some(Vec::new()),
        _ => return None,
    };
    let mut at: usize = 0;
    let mut out = Vec::with_capacity(sizes.len());
    for size in sizes {
        at = at.next_multiple_of(size);
        out.push(registers.get(at..at + size)?);
        at += size;
    }
    Some(out)
}

/// Where two runs' printf outputs ([`State::printf_output`]) first differ: `None` when equal,
/// else a message naming the line (1-based) and both texts of it, for `verify`'s report.
pub fn printf_difference(reference: &[u8], got: &[u8]) -> Option<String> {
    if reference == got {
        return None;
    }
    let a: Vec<&[u8]> = reference.split(|&b| b == b'\n').collect();
    let b: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    let line = (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .unwrap_or(0);
    let text = |l: Option<&&[u8]>| match l {
        Some(t) => format!("{:?}", String::from_utf8_lossy(t)),
        None => "(no line)".to_string(),
    };
    Some(format!(
        "printf output differs at line {}: reference {}, got {} ({} and {} bytes in all)",
        line + 1,
        text(a.get(line)),
        text(b.get(line)),
        reference.len(),
        got.len()
    ))
}

fn bad_args(name: &str, why: String) -> Error {
    Error::BadArguments {
        name: name.to_string(),
        why,
    }
}

/// An unsigned little-endian integer of 1 to 8 bytes.
fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .take(8)
        .rev()
        .fold(0, |v, &b| (v << 8) | u64::from(b))
}

/// `N` arguments, each pointer-sized (or wider: a 64-bit size in a 32-bit module is read whole).
fn pointers<const N: usize>(name: &str, args: &[&[u8]], state: &State) -> Result<[u64; N], Error> {
    if args.len() != N {
        return Err(bad_args(
            name,
            format!("takes {N} parameters, {} given", args.len()),
        ));
    }
    let mut out = [0; N];
    for (i, a) in args.iter().enumerate() {
        if a.len() < usize::from(state.pointer_bytes) || a.len() > 8 {
            return Err(bad_args(
                name,
                format!(
                    "parameter {i} has {} bytes, expected {}",
                    a.len(),
                    state.pointer_bytes
                ),
            ));
        }
        out[i] = le(a);
    }
    Ok(out)
}

fn malloc(size: u64, state: &mut State) -> u64 {
    let arena = state.arena_size();
    let who = state.cta_linear(state.caller) * state.threads_per_cta()
        + state.thread_linear(state.caller);
    let used = state.arena_used.get(&who).copied().unwrap_or(0);
    let need = size.max(1).div_ceil(HEAP_ALIGN).saturating_mul(HEAP_ALIGN);
    if need > arena - used.min(arena) {
        return 0;
    }
    let addr = HEAP_BASE + who * arena + used;
    state.arena_used.insert(who, used + need);
    state.blocks.insert(addr, Block { size, freed: false });
    addr
}

fn free(p: u64, state: &mut State) -> Result<(), Error> {
    if p == 0 {
        return Ok(());
    }
    let undefined = |why: String| Error::Undefined {
        name: "free".to_string(),
        why,
    };
    match state.blocks.get_mut(&p) {
        None => Err(undefined(format!("0x{p:x} was not returned by malloc"))),
        Some(b) if b.freed => Err(undefined(format!("0x{p:x} is freed twice"))),
        Some(b) => {
            b.freed = true;
            Ok(())
        }
    }
}

/// Read a NUL-terminated string at `addr` (without the NUL).
fn read_string(name: &str, addr: u64, mem: &mut dyn Memory) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    loop {
        let mut b = [0u8];
        mem.read(addr + out.len() as u64, &mut b)
            .map_err(|e| Error::Undefined {
                name: name.to_string(),
                why: format!("reading the string at 0x{addr:x}: {e}"),
            })?;
        if b[0] == 0 {
            return Ok(out);
        }
        out.push(b[0]);
        if out.len() > MAX_STRING {
            return Err(Error::Undefined {
                name: name.to_string(),
                why: format!("the string at 0x{addr:x} has no NUL in {MAX_STRING} bytes"),
            });
        }
    }
}

fn assertfail(args: &[&[u8]], mem: &mut dyn Memory, state: &State) -> Result<Error, Error> {
    let name = "__assertfail";
    if args.len() != 5 {
        return Err(bad_args(
            name,
            format!("takes 5 parameters, {} given", args.len()),
        ));
    }
    let p = usize::from(state.pointer_bytes);
    for (i, a) in args.iter().enumerate() {
        let want = if i == 2 { 4 } else { p };
        if a.len() < want || a.len() > 8 {
            return Err(bad_args(
                name,
                format!("parameter {i} has {} bytes, expected {want}", a.len()),
            ));
        }
    }
    let text = |addr: u64, mem: &mut dyn Memory| -> Result<String, Error> {
        Ok(String::from_utf8_lossy(&read_string(name, addr, mem)?).into_owned())
    };
    let message = text(le(args[0]), mem)?;
    let file = text(le(args[1]), mem)?;
    let line = le(&args[2][..4]) as u32;
    let function = text(le(args[3]), mem)?;
    let Caller { ctaid, tid } = state.caller;
    Ok(Error::Trap {
        message: format!(
            "{file}:{line}: {function}: block: [{},{},{}], thread: [{},{},{}] Assertion `{message}` failed.",
            ctaid[0], ctaid[1], ctaid[2], tid[0], tid[1], tid[2]
        ),
    })
}

/// The argument buffer of one `vprintf` call: reads the next argument of a size at its
/// alignment.
struct ArgReader<'a> {
    mem: &'a mut dyn Memory,
    base: u64,
    offset: u64,
    count: i32,
}

impl ArgReader<'_> {
    fn next(&mut self, size: u64) -> Result<u64, Error> {
        self.offset = self.offset.next_multiple_of(size);
        let mut b = [0u8; 8];
        let addr = self.base.wrapping_add(self.offset);
        self.mem
            .read(addr, &mut b[..size as usize])
            .map_err(|e| Error::Undefined {
                name: "vprintf".to_string(),
                why: format!("reading argument {} at 0x{addr:x}: {e}", self.count + 1),
            })?;
        self.offset += size;
        self.count += 1;
        Ok(u64::from_le_bytes(b))
    }
}

fn vprintf(fmt: u64, buf: u64, mem: &mut dyn Memory, state: &mut State) -> Result<i32, Error> {
    if fmt == 0 {
        return Ok(-1);
    }
    let format = read_string("vprintf", fmt, mem)?;
    let pointer_bytes = u64::from(state.pointer_bytes);
    let mut args = ArgReader {
        mem,
        base: buf,
        offset: 0,
        count: 0,
    };
    let mut out = Vec::new();
    format_into(&format, pointer_bytes, &mut args, &mut out)?;
    let count = args.count;
    let cta = state.cta_linear(state.caller);
    let thread = state.thread_linear(state.caller);
    let seq = state.printf_calls.entry((cta, thread)).or_insert(0);
    state.records.push(PrintfRecord {
        cta,
        thread,
        seq: *seq,
        text: out,
    });
    *seq += 1;
    Ok(count)
}

/// One conversion specification's flags, width and precision.
#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

/// Format `format` with the arguments `args` yields, appending to `out`.
fn format_into(
    format: &[u8],
    pointer_bytes: u64,
    args: &mut ArgReader,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            out.push(format[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&c) = format.get(i) {
            match c {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if format.get(i) == Some(&b'*') {
            i += 1;
            let w = args.next(4)? as u32 as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = w.unsigned_abs() as usize;
        } else {
            spec.width = digits(format, &mut i);
        }
        if format.get(i) == Some(&b'.') {
            i += 1;
            if format.get(i) == Some(&b'*') {
                i += 1;
                let p = args.next(4)? as u32 as i32;
                spec.precision = (p >= 0).then_some(p as usize);
            } else {
                spec.precision = Some(digits(format, &mut i));
            }
        }
        let length_start = i;
        while let Some(b'h' | b'l' | b'j' | b'z' | b't' | b'L' | b'q') = format.get(i) {
            i += 1;
        }
        let length = &format[length_start..i];
        let Some(&conv) = format.get(i) else {
            out.extend_from_slice(&format[start..]);
            break;
        };
        i += 1;
        let wide = match length {
            b"" | b"h" | b"hh" => false,
            b"l" | b"ll" | b"j" | b"z" | b"t" | b"q" | b"L" => true,
            _ => {
                out.extend_from_slice(&format[start..i]);
                continue;
            }
        };
        match conv {
            b'%' if i - start == 2 => out.push(b'%'),
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' if length != b"L" => {
                let raw = args.next(if wide { 8 } else { 4 })?;
                let signed = matches!(conv, b'd' | b'i');
                let (negative, magnitude) = integer(raw, length, signed);
                format_integer(out, spec, conv, negative, magnitude);
            }
            b'c' if length.is_empty() => {
                let c = args.next(4)? as u8;
                pad(out, spec, &[], &[c], false);
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A'
                if matches!(length, b"" | b"l" | b"L") =>
            {
                let x = f64::from_bits(args.next(8)?);
                format_float(out, spec, conv, x);
            }
            b's' if length.is_empty() => {
                let p = args.next(pointer_bytes)?;
                let text = if p == 0 {
                    b"(null)".to_vec()
                } else {
                    read_string("vprintf", p, args.mem)?
                };
                // glibc prints "(null)" only when the precision allows all of it.
                let text = match spec.precision {
                    Some(n) if p == 0 && n < 6 => Vec::new(),
                    Some(n) => text[..text.len().min(n)].to_vec(),
                    None => text,
                };
                pad(
                    out,
                    Spec {
                        zero: false,
                        ..spec
                    },
                    &[],
                    &text,
                    false,
                );
            }
            b'p' if length.is_empty() => {
                let p = args.next(pointer_bytes)?;
                if p == 0 {
                    pad(
                        out,
                        Spec {
                            zero: false,
                            ..spec
                        },
                        &[],
                        b"(nil)",
                        false,
                    );
                } else {
                    let sign: &[u8] = if spec.plus {
                        b"+"
                    } else if spec.space {
                        b" "
                    } else {
                        b""
                    };
                    let mut prefix = sign.to_vec();
                    prefix.extend_from_slice(b"0x");
                    let body = format!("{p:x}");
                    let body = zero_extend(body.as_bytes(), spec.precision);
                    pad(out, spec, &prefix, &body, spec.precision.is_none());
                }
            }
            _ => out.extend_from_slice(&format[start..i]),
        }
    }
    Ok(())
}

fn digits(format: &[u8], i: &mut usize) -> usize {
    let mut n: usize = 0;
    while let Some(&c @ b'0'..=b'9') = format.get(*i) {
        n = n.saturating_mul(10).saturating_add(usize::from(c - b'0'));
        *i += 1;
    }
    n.min(1 << 20)
}

/// The argument's value as C converts it for the length modifier: (negative, magnitude).
fn integer(raw: u64, length: &[u8], signed: bool) -> (bool, u64) {
    let bits = match length {
        b"hh" => 8,
        b"h" => 16,
        b"" => 32,
        _ => 64,
    };
    let v = if bits == 64 {
        raw
    } else {
        raw & ((1u64 << bits) - 1)
    };
    if signed {
        let shift = 64 - bits;
        let s = ((v << shift) as i64) >> shift;
        (s < 0, s.unsigned_abs())
    } else {
        (false, v)
    }
}

/// `digits` with leading zeros up to `precision` digits.
fn zero_extend(digits: &[u8], precision: Option<usize>) -> Vec<u8> {
    let mut v = Vec::new();
    if let Some(p) = precision {
        v.resize(p.saturating_sub(digits.len()), b'0');
    }
    v.extend_from_slice(digits);
    v
}

fn format_integer(out: &mut Vec<u8>, spec: Spec, conv: u8, negative: bool, magnitude: u64) {
    let text = match conv {
        b'x' => format!("{magnitude:x}"),
        b'X' => format!("{magnitude:X}"),
        b'o' => format!("{magnitude:o}"),
        _ => magnitude.to_string(),
    };
    // C: a precision of 0 with the value 0 prints no digits.
    let mut body = if spec.precision == Some(0) && magnitude == 0 {
        Vec::new()
    } else {
        zero_extend(text.as_bytes(), spec.precision)
    };
    if conv == b'o' && spec.alt && body.first() != Some(&b'0') {
        body.insert(0, b'0');
    }
    let mut prefix: Vec<u8> = Vec::new();
    if matches!(conv, b'd' | b'i') {
        if negative {
            prefix.push(b'-');
        } else if spec.plus {
            prefix.push(b'+');
        } else if spec.space {
            prefix.push(b' ');
        }
    }
    if spec.alt && magnitude != 0 {
        match conv {
            b'x' => prefix.extend_from_slice(b"0x"),
            b'X' => prefix.extend_from_slice(b"0X"),
            _ => {}
        }
    }
    // The 0 flag is ignored for integers with a precision.
    pad(out, spec, &prefix, &body, spec.precision.is_none());
}

/// Append `prefix` and `body` padded to the width: spaces on the left, on the right (`-`), or
/// zeros between prefix and body (`0`, where `zero_ok`).
fn pad(out: &mut Vec<u8>, spec: Spec, prefix: &[u8], body: &[u8], zero_ok: bool) {
    let len = prefix.len() + body.len();
    let fill = spec.width.saturating_sub(len);
    if spec.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else if spec.zero && zero_ok {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

fn format_float(out: &mut Vec<u8>, spec: Spec, conv: u8, x: f64) {
    let upper = conv.is_ascii_uppercase();
    let mut prefix: Vec<u8> = Vec::new();
    if x.is_sign_negative() {
        prefix.push(b'-');
    } else if spec.plus {
        prefix.push(b'+');
    } else if spec.space {
        prefix.push(b' ');
    }
    if !x.is_finite() {
        let text = match (x.is_nan(), upper) {
            (true, false) => "nan",
            (true, true) => "NAN",
            (false, false) => "inf",
            (false, true) => "INF",
        };
        pad(out, spec, &prefix, text.as_bytes(), false);
        return;
    }
    let a = x.abs();
    let body = match conv.to_ascii_lowercase() {
        b'f' => fixed(a, spec.precision.unwrap_or(6), spec.alt),
        b'e' => scientific(a, spec.precision.unwrap_or(6), spec.alt, upper),
        b'g' => general(a, spec.precision.unwrap_or(6), spec.alt, upper),
        _ => {
            prefix.extend_from_slice(if upper { b"0X" } else { b"0x" });
            hex_float(a, spec.precision, spec.alt, upper)
        }
    };
    pad(out, spec, &prefix, body.as_bytes(), true);
}

/// `%f` of a non-negative finite value (Rust's formatting is exact, ties to even, as glibc).
fn fixed(a: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// `%e` of a non-negative finite value: `d.ddde+XX`, at least two exponent digits.
fn scientific(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let mut m = mantissa.to_string();
    if alt && precision == 0 {
        m.push('.');
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{m}{e}{sign}{:02}", exponent.unsigned_abs())
}

/// `%g`: the style of `%e` with precision P-1 gives exponent X; `%f` with precision P-1-X if
/// P > X >= -4, else `%e` with P-1; trailing zeros (and a trailing point) removed unless `#`.
fn general(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let p = precision.max(1);
    let e = format!("{a:.prec$e}", prec = p - 1);
    let x: i64 = e
        .split_once('e')
        .and_then(|(_, x)| x.parse().ok())
        .unwrap_or(0);
    let mut s = if (p as i64) > x && x >= -4 {
        fixed(a, (p as i64 - 1 - x) as usize, alt)
    } else {
        scientific(a, p - 1, alt, upper)
    };
    if !alt {
        let (mantissa, exponent) = match s.find(['e', 'E']) {
            Some(k) => (s[..k].to_string(), s[k..].to_string()),
            None => (s.clone(), String::new()),
        };
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            &mantissa
        };
        s = format!("{mantissa}{exponent}");
    }
    s
}

/// `%a` of a non-negative finite value after the `0x`, as glibc: `1.8p+1`, a subnormal as
/// `0.xxxp-1022`, zero as `0p+0`; without a precision the shortest exact digits, with one
/// rounded to nearest, ties to even.
fn hex_float(a: f64, precision: Option<usize>, alt: bool, upper: bool) -> String {
    let bits = a.to_bits();
    let biased = (bits >> 52) as i64;
    let mut fraction = bits & ((1 << 52) - 1);
    let (mut lead, exponent) = match (biased, fraction) {
        (0, 0) => (0u64, 0i64),
        (0, _) => (0, -1022),
        _ => (1, biased - 1023),
    };
    let mut digits = 13usize;
    if let Some(p) = precision {
        if p < 13 {
            let drop = 4 * (13 - p) as u32;
            let kept = fraction >> drop;
            let rest = fraction & ((1 << drop) - 1);
            let half = 1u64 << (drop - 1);
            // Ties to even: the last digit kept is the lead digit when no fraction digit is.
            let odd = if p == 0 { lead & 1 == 1 } else { kept & 1 == 1 };
            let up = rest > half || (rest == half && odd);
            let mut kept = kept + u64::from(up);
            if kept >> (4 * p) != 0 {
                kept &= (1 << (4 * p)) - 1;
                lead += 1;
            }
            fraction = kept << drop;
        }
        digits = p;
    }
    let mut hex = format!("{fraction:013x}");
    if precision.is_none() {
        hex = hex.trim_end_matches('0').to_string();
    } else if digits > 13 {
        hex.push_str(&"0".repeat(digits - 13));
    } else {
        hex.truncate(digits);
    }
    let mut s = String::new();
    let _ = write!(s, "{lead}");
    if !hex.is_empty() || alt {
        s.push('.');
    }
    s.push_str(&hex);
    let _ = write!(
        s,
        "p{}{}",
        if exponent < 0 { '-' } else { '+' },
        exponent.abs()
    );
    if upper {
        s = s.to_ascii_uppercase();
    }
    s
}

#[cfg(test)]
mod tests;
