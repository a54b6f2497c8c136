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

/// The optional dependence trace of a simulation ([`super::run_dependences`]): for every
/// instruction a lane runs, the dynamic instructions that last wrote what it read. It is the
/// ground truth the static address slice ([`crate::sm50::slice`]) must cover: whatever a run
/// shows flowing into an address must be in the slice. Stored flat (about 16 bytes per
/// instruction a lane runs) because a run can be millions of them.
#[derive(Clone, Debug, Default)]
pub struct Dependences {
    /// Per dynamic instruction: its `.text` offset / 8.
    slot: Vec<u32>,
    /// Per dynamic instruction: where its reads start in `reads` (they end where the next
    /// one's start).
    start: Vec<u32>,
    /// The dynamic instructions that last wrote the registers, predicates and carry each
    /// dynamic instruction read (its guard excluded); reads of a value no instruction wrote
    /// (launch state) are left out.
    reads: Vec<u32>,
    /// Per memory access run: the dynamic instructions that last wrote its address registers
    /// (and, for a generic access, its window predicate).
    address_writers: Vec<u32>,
    /// Per (warp, lane) of the running CTA, per resource: the last dynamic writer.
    pub(crate) last: Vec<u32>,
    /// The run was longer than [`MAX_TRACE`] lane-instructions: recording stopped there, and
    /// the trace says nothing about the rest.
    pub truncated: bool,
}

/// No dynamic instruction wrote it (yet).
pub(crate) const NO_WRITER: u32 = u32::MAX;

/// The most lane-instructions traced (about 1 GiB of trace).
pub const MAX_TRACE: usize = 1 << 26;

impl Dependences {
    /// How many instructions the lanes ran.
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    /// Whether no lane ran anything.
    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Record a lane running the instruction at `.text` offset `addr`, which read the values
    /// `reads` (their last writers) and, if a memory access, its address from `address`.
    /// Returns the new dynamic instruction's number.
    pub(crate) fn push(
        &mut self,
        addr: u64,
        reads: impl Iterator<Item = u32>,
        address: impl Iterator<Item = u32>,
    ) -> u32 {
        if self.slot.len() >= MAX_TRACE {
            self.truncated = true;
            return NO_WRITER;
        }
        let id = self.slot.len() as u32;
        self.slot.push((addr / 8) as u32);
        self.start.push(self.reads.len() as u32);
        self.reads.extend(reads.filter(|&r| r != NO_WRITER));
        self.address_writers
            .extend(address.filter(|&r| r != NO_WRITER));
        id
    }

    /// The `.text` offsets of the dynamic address slice: the instructions whose run reached an
    /// address, following the trace back from every address read and stopping, as the static
    /// slice does, at instructions `stops` says bring data in (memory, special registers,
    /// floating point).
    pub fn slice(&self, stops: impl Fn(u64) -> bool) -> std::collections::BTreeSet<u64> {
        let mut seen = vec![false; self.slot.len()];
        let mut work: Vec<u32> = self.address_writers.clone();
        let mut out = std::collections::BTreeSet::new();
        while let Some(n) = work.pop() {
            let n = n as usize;
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            let addr = u64::from(self.slot[n]) * 8;
            out.insert(addr);
            if !stops(addr) {
                let end = self
                    .start
                    .get(n + 1)
                    .map_or(self.reads.len(), |&e| e as usize);
                work.extend_from_slice(&self.reads[self.start[n] as usize..end]);
            }
        }
        out
    }
}
