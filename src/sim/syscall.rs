//! System calls in the simulator: a `JCAL` to `vprintf`, `malloc`, `free`, `__assertfail` or
//! a device-runtime entry point runs the model [`crate::sysfn`], the one `ir::eval` runs at
//! the PTX call, so that both sides print, allocate and assert alike.
//!
//! In: the callee's name (from [`super::KernelInfo::calls`]), each calling lane's argument
//! registers R4..R15 as the sm_50 call ABI fills them (docs/calls.md), the lane's thread and
//! CTA, the launch's memory and its [`sysfn::State`]. Out: the result bytes the caller writes
//! back into R4.. (the model changes no other register: the ABI's clobbers are the
//! allocator's concern, not the model's), or a [`SimError`]: an assertion traps
//! ([`SimError::AssertFailed`], with CUDA's message), a call without a defined meaning (a bad
//! pointer, a double free) is a fault ([`SimError::SystemCall`]), and a function the model
//! does not run (the device runtime) is [`SimError::Unsupported`].
//!
//! Generic addresses are mapped as a generic `LD`/`ST` maps them (the shared, local and const
//! windows, anything else global), a byte at a time: a format string has no alignment.

use super::mem::{Memory, Space};
use super::SimError;
use crate::ir::eval::{CONST_WINDOW_BASE, LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE, WINDOW_SIZE};
use crate::sysfn;

/// One lane's view of memory for a system function.
struct LaneMem<'a> {
    mem: &'a mut Memory,
    /// The lane's linear thread index in its CTA (whose local memory the window maps).
    thread: usize,
    /// The `JCAL`'s address, for the memory's error messages.
    pc: u64,
}

impl LaneMem<'_> {
    fn byte(&mut self, at: u64, store: Option<u8>) -> Result<u8, String> {
        let window = |b: u64| at >= b && at - b < WINDOW_SIZE;
        let (space, off) = if window(SHARED_WINDOW_BASE) {
            (Space::Shared, at - SHARED_WINDOW_BASE)
        } else if window(LOCAL_WINDOW_BASE) {
            (Space::Local(self.thread), at - LOCAL_WINDOW_BASE)
        } else if window(CONST_WINDOW_BASE) {
            if store.is_some() {
                return Err(format!("a store into the const window (0x{at:x})"));
            }
            (Space::Const(3), at - CONST_WINDOW_BASE)
        } else {
            (Space::Global, at)
        };
        let b = self
            .mem
            .bytes(self.pc, space, off, 1)
            .map_err(|e| e.to_string())?;
        if let Some(v) = store {
            b[0] = v;
        }
        Ok(b[0])
    }
}

impl sysfn::Memory for LaneMem<'_> {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        for (k, b) in out.iter_mut().enumerate() {
            *b = self.byte(addr.wrapping_add(k as u64), None)?;
        }
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), String> {
        for (k, &b) in data.iter().enumerate() {
            self.byte(addr.wrapping_add(k as u64), Some(b))?;
        }
        Ok(())
    }
}

/// Run system function `name` for one lane: `regs` its argument registers R4..R15
/// ([`sysfn::ARG_REGISTER_BYTES`]), `thread` its linear index in CTA `ctaid`, `pc` the
/// `JCAL`'s address. See the module essay.
pub(super) fn call(
    name: &str,
    regs: &[u8],
    mem: &mut Memory,
    state: &mut sysfn::State,
    thread: usize,
    ctaid: [u32; 3],
    pc: u64,
) -> Result<Vec<u8>, SimError> {
    let [bx, by, _] = state.block.map(|d| d.max(1) as usize);
    state.caller = sysfn::Caller {
        ctaid,
        tid: [
            (thread % bx) as u32,
            (thread / bx % by) as u32,
            (thread / (bx * by)) as u32,
        ],
    };
    let mut lane = LaneMem { mem, thread, pc };
    sysfn::call_abi(name, regs, &mut lane, state).map_err(|e| match e {
        sysfn::Error::Trap { message } => SimError::AssertFailed { addr: pc, message },
        sysfn::Error::Undefined { .. } => SimError::SystemCall {
            addr: pc,
            what: e.to_string(),
        },
        _ => SimError::Unsupported {
            addr: pc,
            what: e.to_string(),
        },
    })
}
