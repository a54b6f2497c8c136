//! Race detection of the reference interpreter: the shared-memory shadow ([`RaceShadow`],
//! per CTA, cleared at barriers and warp synchronisations) and the global-memory shadow
//! ([`GlobalShadow`], across CTAs), which record who last read or wrote each byte.
//!
//! In: every access a thread makes, with its kind ([`Access`]) and the thread's identity.
//! Out: an [`EvalError`] naming both threads when two accesses race; nothing otherwise.

use super::*;

/// The race-detection kind of a plain access `kind` with cache operator `cache` in `sp`: a
/// strong global access (`ld/st.volatile`, and the `.relaxed/.acquire/.release` accesses that
/// `ir::build` makes volatile) counts as atomic. In the PTX memory model two strong accesses
/// of one size to one place are morally strong and never form a data race; the CAS loops of
/// emulated atomics (`ir/build/atomics.rs`) and `cuda::atomic_ref` loads race with nothing.
/// Shared memory keeps the plain rule (volatile warp-synchronous code there is checked as
/// before).
pub(super) fn strong(cache: CacheOp, sp: Space, kind: Access) -> Access {
    if cache == CacheOp::Volatile && sp == Space::Global {
        Access::Atomic
    } else {
        kind
    }
}

/// How an instruction touches memory, for race detection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Access {
    Read,
    Write,
    Atomic,
}

/// A cell of [`RaceShadow`] names no thread, one (linear index + 1), several of one warp
/// ([`WARP_MANY`] + the warp), or several of different warps.
pub(super) const MANY: u16 = u16::MAX;

/// Several threads, all of warp `x - WARP_MANY` (a CTA has at most 32 warps).
pub(super) const WARP_MANY: u16 = 2048;

/// The warp of a [`RaceShadow`] cell entry other than 0 and [`MANY`].
pub(super) fn shadow_warp(x: u16) -> u16 {
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
pub(super) struct RaceShadow {
    pub(super) cells: Vec<[u16; 3]>,
    pub(super) touched: Vec<u32>,
    /// For each shared address an atomic released at in this interval (its thread had
    /// executed a `membar`), the releasing threads (cell entries, `linear + 1`).
    pub(super) released: std::collections::HashMap<u64, Vec<u16>>,
    /// The shared variables the kernel uses ([`shared_ranges`]).
    pub(super) vars: Vec<std::ops::Range<u64>>,
}

/// One entry of [`GlobalShadow`]: a thread of the launch (0: none, `index + 1`, or
/// [`MANY_GLOBAL`]) and the epochs of its access (for `MANY`, the oldest and the newest
/// member's; for one thread both are the same).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(super) struct Who {
    pub(super) thread: u32,
    pub(super) first: u32,
    pub(super) last: u32,
}

/// A [`Who`] naming at least two different threads.
pub(super) const MANY_GLOBAL: u32 = u32::MAX;

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
pub(super) struct GlobalShadow {
    /// [`Launch::global_races`]: when off, nothing is recorded.
    pub(super) on: bool,
    /// Per region and byte: writer, reader(s), atomic user(s).
    pub(super) regions: Vec<Vec<[WhoCell; 3]>>,
    pub(super) epoch: u32,
    pub(super) cta_start: u32,
    /// Epochs up to this one are ordered before what the running CTA does from now on.
    pub(super) acquired: u32,
    /// For each global address an atomic released at, the newest epoch it released.
    pub(super) released: std::collections::HashMap<u64, u32>,
    /// Threads per CTA (to name a racing thread by CTA and index).
    pub(super) cta_threads: u32,
}

impl RaceShadow {
    /// `bar.warp.sync` by the lanes of `warp`: their accesses so far are ordered before
    /// their later ones, so entries naming only threads of that warp are dropped (an entry
    /// that also names another warp's thread stays: that pair is still unordered).
    pub(super) fn warp_sync(&mut self, warp: u32) {
        for &i in &self.touched {
            for x in &mut self.cells[i as usize] {
                if *x != 0 && *x != MANY && u32::from(shadow_warp(*x)) == warp {
                    *x = 0;
                }
            }
        }
        self.forget_cleared();
    }

    /// Drop the cells that an ordering (a warp synchronisation, an acquire) emptied from
    /// `touched`. `note` lists a cell again when it finds it empty, so without this a spin
    /// loop that acquires on every poll (the emulated `mbarrier` waits) would grow `touched`
    /// by the same cells on every round, and every later acquire, which walks `touched`,
    /// would cost more: quadratic, a run that never ends in practice (the `m2_pipeline.ptx`
    /// hang of issue 26). Invariant: `touched` lists each non-empty cell exactly once.
    fn forget_cleared(&mut self) {
        let cells = &self.cells;
        self.touched.retain(|&i| cells[i as usize] != [0; 3]);
    }

    pub(super) fn clear(&mut self) {
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
    pub(super) fn atomic(&mut self, addr: u64, thread: u32, fenced: bool) {
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
                self.forget_cleared();
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
    pub(super) fn note(
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

impl Who {
    pub(super) fn load(c: WhoCell) -> Who {
        Who {
            thread: c[0],
            first: c[1],
            last: c[2],
        }
    }

    pub(super) fn store(self) -> WhoCell {
        [self.thread, self.first, self.last]
    }
}

impl GlobalShadow {
    pub(super) fn new(on: bool, regions: usize, cta_threads: u32) -> GlobalShadow {
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
    pub(super) fn begin_cta(&mut self) {
        self.epoch += 1;
        self.cta_start = self.epoch;
        self.acquired = 0;
    }

    /// A barrier opened in the running CTA.
    pub(super) fn barrier(&mut self) {
        self.epoch += 1;
    }

    /// A global atomic at `addr`: it acquires what an earlier CTA released there, and
    /// releases this epoch when its thread has `fenced`.
    pub(super) fn atomic(&mut self, addr: u64, fenced: bool) {
        if let Some(&e) = self.released.get(&addr) {
            if e < self.cta_start {
                self.acquired = self.acquired.max(e);
            }
        }
        if fenced {
            self.released.insert(addr, self.epoch);
        }
    }

    pub(super) fn name(&self, thread: u32) -> String {
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
    pub(super) fn note(
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
