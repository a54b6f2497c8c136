//! The optional write log of a simulation: which instruction last wrote each byte.
//!
//! `leafold verify` reruns a mismatching launch with the log on, so it can name the SASS
//! instruction behind the first wrong byte. Off (the default, [`super::run`]), the simulator
//! pays one branch per store; on ([`super::run_traced`]), one hash-map insert per byte
//! written (stores and atomics; loads are not logged).

use std::collections::HashMap;

/// A byte of memory as [`crate::ir::eval::RunOutput`] indexes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loc {
    /// A global address.
    Global(u64),
    /// Offset in the shared memory of CTA number `cta` (launch order, x fastest).
    Shared { cta: usize, offset: u64 },
    /// Offset in the local memory of thread number `thread` (over the whole launch, as
    /// `RunOutput::local`).
    Local { thread: usize, offset: u64 },
}

/// The `.text` offset of the last instruction that wrote each byte.
#[derive(Clone, Debug, Default)]
pub struct WriteLog {
    last: HashMap<Loc, u64>,
}

impl WriteLog {
    /// The instruction (byte offset in `.text`) that last wrote `loc`, if any did.
    pub fn last_writer(&self, loc: Loc) -> Option<u64> {
        self.last.get(&loc).copied()
    }

    pub(crate) fn note(&mut self, pc: u64, first: Loc, size: u32) {
        for k in 0..u64::from(size) {
            let loc = match first {
                Loc::Global(a) => Loc::Global(a.wrapping_add(k)),
                Loc::Shared { cta, offset } => Loc::Shared {
                    cta,
                    offset: offset + k,
                },
                Loc::Local { thread, offset } => Loc::Local {
                    thread,
                    offset: offset + k,
                },
            };
            self.last.insert(loc, pc);
        }
    }
}
