//! A generator of random, valid PTX kernels for differential fuzzing (`leafold verify`'s
//! machinery on programs nobody wrote by hand).
//!
//! In: a [`Source`] of choices (a fuzzer's bytes, then a seeded generator when they run out;
//! or a seed alone). Out: a [`GenKernel`]: PTX text of one kernel `fz` with the launch shape
//! it was built for. Every kernel is valid and deterministic by construction:
//!
//! * **In bounds**: every address is `base + (index << scale) + displacement` (in one of
//!   several shapes: `mul.wide`, `cvt` + `shl`, `mad.wide`, `mad.lo`, 32-bit `shl` + `add`,
//!   `end - index · size`, displacement in the chain or in the instruction), where the index
//!   is an arbitrary arithmetic tree masked with `and` to the region's element count.
//! * **Race free**: the input buffers (`pin0`, `pin1`) are only read; each thread writes only
//!   its own slice of `pout` (`gtid · SLICE`) and of the shared array, and reads another
//!   thread's shared slice only in a phase (between `bar.sync 0`s) where no shared store
//!   happens. Barriers are only emitted at the top level, and only before the first
//!   conditional block, loop or guarded access (see `Gen::diverged` for why).
//! * **Defined**: a register written inside a conditional block (or by a predicated
//!   instruction) is either one that already held a value or is forgotten after the block;
//!   loops run at least once.
//!
//! What varies: 32- or 64-bit modules, global (`ld.global`, via `cvta.to.global`, or
//! generic), shared (32-bit, 64-bit or generic through `cvta.shared`) and local (likewise)
//! accesses of 1, 2, 4 and 8 bytes and `.v2.u32`, arithmetic trees over `%tid.x`,
//! `%ctaid.x`, `%ntid.x`, scalar parameters and loaded values (add, sub, mul.lo,
//! mad.lo, shl, shr, and, or, xor, not, neg, min, max, cvt, mul.wide by powers of two,
//! 64-bit add/sub/shl/xor; no mul.hi, which leafold does not lower yet),
//! predicated instructions, conditional blocks and loops with per-thread trip counts 1..4.
//!
//! Control flow is laid out in every order nvcc and hand-written PTX use, as a choice of the
//! source's bytes: loops test at the bottom of the body, or have the body laid out before
//! the header the entry jumps into with `bra.uni` (behind a trip-count test that may skip the
//! loop, as nvcc writes `for` loops); conditional blocks are in place, out of line after the
//! kernel's `ret` (entered by a branch, left by a `bra.uni` back), or the `then` half of a
//! diamond entered by a forward `bra.uni` over the `else` half; and straight-line chunks are
//! laid out in a shuffled order, linked by `bra.uni` (inside a loop body: a loop whose header
//! is in the middle of its blocks). Selection must not assume that definitions are laid out
//! before uses (`lower::select::lowering_order`). Floating-point operations on a component of
//! a vector load (`ld.v2/.v4.f32`, `ld.v2.f64`, `ld.v4.u32` words as f32: `MUFU` functions,
//! IEEE division and roots, arithmetic, conversions, compares) put their results' bits into
//! the integer values ([`Gen::float_component`]).
//!
//! [`generate_address`] makes a second kind of kernel, for the address folder: straight-line
//! accesses whose addresses are random `add/sub/shl/neg/mul.wide/cvt` trees over special
//! registers and masked parameters, kept in bounds by interval arithmetic instead of `and`
//! masks (so the whole tree is address arithmetic the folder sees), in every state space.
//!
//! The launch: [`GenKernel::grid`] × [`GenKernel::block`] threads, and every pointer parameter
//! a buffer of [`GenKernel::buffer_size`] bytes (what `verify`'s input filler gives them).
//!
//! # Files of this module
//!
//! - `address.rs`: The address-expression kernels of the generator ([`generate_address`]).
//! - `frame.rs`: The frame of a generated kernel around its body: prologue, regions,
//!   epilogue, and the PTX text.

mod address;
pub use address::*;
mod frame;
use frame::*;
use std::fmt::Write as _;

use crate::verify::Rng;

/// Bytes of `pout` each thread owns.
pub const SLICE: u32 = 512;
/// Bytes of the shared array each thread owns.
pub const SHARED_SLICE: u32 = 64;
/// Bytes of the per-thread local array.
pub const LOCAL_BYTES: u32 = 128;
/// Elements (of any size) an input-buffer index may reach, before the displacement.
const INPUT_ELEMS: u32 = 1024;

/// A generated kernel and the launch it was made for.
#[derive(Clone, Debug)]
pub struct GenKernel {
    pub ptx: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub buffer_size: u64,
}

/// Where choices come from: bytes first (so a fuzzer's mutations steer the program), then a
/// generator seeded from them.
pub struct Source<'a> {
    bytes: &'a [u8],
    pos: usize,
    rng: Rng,
}

impl<'a> Source<'a> {
    pub fn from_bytes(bytes: &'a [u8]) -> Source<'a> {
        let seed = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        Source {
            bytes,
            pos: 0,
            rng: Rng::new(seed),
        }
    }

    pub fn from_seed(seed: u64) -> Source<'static> {
        Source {
            bytes: &[],
            pos: 0,
            rng: Rng::new(seed),
        }
    }

    /// A choice in `0..n` (`n >= 1`).
    pub fn below(&mut self, n: u32) -> u32 {
        let n = n.max(1);
        if self.pos < self.bytes.len() {
            let b = self.bytes[self.pos];
            self.pos += 1;
            u32::from(b) % n
        } else {
            self.rng.below(u64::from(n)) as u32
        }
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

/// Which memory a region lives in and how its base is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `ld.global`/`st.global` on a global address.
    Global,
    /// Generic `ld`/`st` (a global or window address).
    Generic,
    /// `ld.shared`/`st.shared` on a shared-space address.
    Shared,
    /// `ld.local`/`st.local` on a local-space address.
    Local,
}

/// A region accesses may go to: a base register and how far indices may reach.
#[derive(Clone, Debug)]
struct Region {
    base: String,
    wide: bool,
    kind: Kind,
    /// Bytes reachable from the base: [0, bytes).
    bytes: u32,
    writable: bool,
    /// Shared memory of other threads (reads only in a phase without shared stores).
    shared_other: bool,
    shared_own: bool,
}

struct Gen<'s, 'a> {
    src: &'s mut Source<'a>,
    body: String,
    n32: u32,
    n64: u32,
    npred: u32,
    nlabel: u32,
    v32: Vec<String>,
    v64: Vec<String>,
    regions: Vec<Region>,
    depth: u32,
    budget: u32,
    sh_written: bool,
    sh_read_other: bool,
    /// A conditional block or loop has been emitted: no barrier may follow (leafold emits no
    /// reconvergence point for a divergent branch yet, so a warp may reach a `BAR.SYNC`
    /// diverged; tests/data/fuzz-found/diverged_barrier.ptx is that finding).
    diverged: bool,
    /// `%f` and `%fd` registers used ([`Gen::float_component`]).
    nf32: u32,
    nf64: u32,
    /// Out-of-line blocks ([`Gen::statement`]'s conditional blocks laid out after the
    /// kernel's `ret`), emitted after the body.
    tail: Vec<String>,
}

impl Gen<'_, '_> {
    fn r32(&mut self) -> String {
        self.n32 += 1;
        format!("%r{}", self.n32)
    }
    fn r64(&mut self) -> String {
        self.n64 += 1;
        format!("%rd{}", self.n64)
    }
    fn f32r(&mut self) -> String {
        self.nf32 += 1;
        format!("%f{}", self.nf32)
    }
    fn f64r(&mut self) -> String {
        self.nf64 += 1;
        format!("%fd{}", self.nf64)
    }
    fn pred(&mut self) -> String {
        self.npred += 1;
        format!("%p{}", self.npred)
    }
    fn emit(&mut self, line: &str) {
        for _ in 0..=self.depth {
            self.body.push_str("    ");
        }
        self.body.push_str(line);
        self.body.push('\n');
    }
    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.src.below(v.len() as u32) as usize].clone()
    }
    /// A 32-bit operand: a value register, or sometimes an immediate.
    fn op32(&mut self) -> String {
        if self.src.chance(25) {
            let imm = [
                0u32,
                1,
                2,
                3,
                4,
                7,
                8,
                16,
                31,
                100,
                255,
                0xffff,
                0x7fff_ffff,
            ];
            let v = self.pick(&imm);
            if self.src.chance(20) {
                format!("-{v}")
            } else {
                v.to_string()
            }
        } else {
            let v = self.v32.clone();
            self.pick(&v)
        }
    }
    fn val32(&mut self) -> String {
        let v = self.v32.clone();
        self.pick(&v)
    }
    fn val64(&mut self) -> String {
        let v = self.v64.clone();
        self.pick(&v)
    }

    /// A new 32-bit value from an arithmetic step.
    fn arith32(&mut self) {
        let d = self.r32();
        let (a, b, c) = (self.val32(), self.op32(), self.op32());
        let line = match self.src.below(16) {
            0 => format!("add.s32 {d}, {a}, {b};"),
            1 => format!("sub.s32 {d}, {a}, {b};"),
            2 => format!("mul.lo.s32 {d}, {a}, {b};"),
            // (mul.hi is not lowered by leafold yet.)
            3 => format!("mul.lo.u32 {d}, {a}, {b};"),
            4 => format!("mad.lo.s32 {d}, {a}, {b}, {c};"),
            5 => format!("shl.b32 {d}, {a}, {};", self.src.below(32)),
            6 => format!("shr.u32 {d}, {a}, {};", self.src.below(32)),
            7 => format!("shr.s32 {d}, {a}, {};", self.src.below(32)),
            8 => format!("and.b32 {d}, {a}, {b};"),
            9 => format!("or.b32 {d}, {a}, {b};"),
            10 => format!("xor.b32 {d}, {a}, {b};"),
            11 => format!("not.b32 {d}, {a};"),
            12 => format!("neg.s32 {d}, {a};"),
            13 => format!("min.u32 {d}, {a}, {b};"),
            14 => format!("max.s32 {d}, {a}, {b};"),
            _ => {
                let w = self.val64();
                format!("cvt.u32.u64 {d}, {w};")
            }
        };
        self.emit(&line);
        self.v32.push(d);
    }

    /// A new 64-bit value.
    fn arith64(&mut self) {
        let d = self.r64();
        let a = self.val32();
        let (x, y) = (self.val64(), self.val64());
        let line = match self.src.below(8) {
            0 => format!("cvt.u64.u32 {d}, {a};"),
            1 => format!("cvt.s64.s32 {d}, {a};"),
            // leafold lowers `mul.wide` by powers of two (address scaling) only.
            2 => format!("mul.wide.u32 {d}, {a}, {};", 1u32 << self.src.below(5)),
            3 => format!("mul.wide.s32 {d}, {a}, {};", 1u32 << self.src.below(5)),
            4 => format!("add.s64 {d}, {x}, {y};"),
            5 => format!("sub.s64 {d}, {x}, {y};"),
            6 => format!("shl.b64 {d}, {x}, {};", self.src.below(64)),
            _ => format!("xor.b64 {d}, {x}, {y};"),
        };
        self.emit(&line);
        self.v64.push(d);
    }

    /// An existing value register overwritten (a loop-carried or predicated update).
    fn update32(&mut self, guard: Option<&str>) {
        let d = self.val32();
        let b = self.op32();
        let g = guard.map_or(String::new(), |p| format!("@{p} "));
        let op = self.pick(&["add.s32", "xor.b32", "sub.s32", "mul.lo.s32"]);
        self.emit(&format!("{g}{op} {d}, {d}, {b};"));
    }

    /// A comparison into a new predicate.
    fn compare(&mut self) -> String {
        let p = self.pred();
        let (a, b) = (self.val32(), self.op32());
        let cmp = self.pick(&["lt", "le", "gt", "ge", "eq", "ne"]);
        let ty = self.pick(&["u32", "s32"]);
        self.emit(&format!("setp.{cmp}.{ty} {p}, {a}, {b};"));
        p
    }

    /// An address inside region `r` for `size`-byte elements: (address register, immediate
    /// displacement), as a register of the region's width.
    fn address(&mut self, r: &Region, size: u32) -> (String, i64) {
        let elems = r.bytes / size;
        // Half the elements for the index, half for the displacement.
        let half = (elems / 2).max(1);
        let mask = half.next_power_of_two() / if half.is_power_of_two() { 1 } else { 2 } - 1;
        let disp_elems = self.src.below(elems - mask);
        let v = self.val32();
        let i = self.r32();
        self.emit(&format!("and.b32 {i}, {v}, {mask};"));
        let log = size.trailing_zeros();
        let mut disp = i64::from(disp_elems * size);
        let mut addr;
        // Part of the displacement may go into the chain instead of the instruction.
        let in_chain = self.src.chance(30);
        if r.wide {
            let a = self.r64();
            let x = self.r64();
            let base = r.base.clone();
            match self.src.below(6) {
                0 => {
                    self.emit(&format!("mul.wide.u32 {x}, {i}, {size};"));
                    self.emit(&format!("add.s64 {a}, {base}, {x};"));
                }
                1 => {
                    self.emit(&format!("cvt.u64.u32 {x}, {i};"));
                    let y = self.r64();
                    self.emit(&format!("shl.b64 {y}, {x}, {log};"));
                    self.emit(&format!("add.s64 {a}, {y}, {base};"));
                }
                2 => {
                    self.emit(&format!("mad.wide.u32 {a}, {i}, {size}, {base};"));
                }
                3 => {
                    self.emit(&format!("cvt.s64.s32 {x}, {i};"));
                    let y = self.r64();
                    self.emit(&format!("mul.lo.s64 {y}, {x}, {size};"));
                    self.emit(&format!("add.s64 {a}, {base}, {y};"));
                }
                4 => {
                    // end - index · size, end = base + mask · size.
                    let e = self.r64();
                    self.emit(&format!("add.s64 {e}, {base}, {};", mask * size));
                    self.emit(&format!("mul.wide.s32 {x}, {i}, {size};"));
                    self.emit(&format!("sub.s64 {a}, {e}, {x};"));
                }
                _ => {
                    let b = self.r32();
                    self.emit(&format!("shl.b32 {b}, {i}, {log};"));
                    self.emit(&format!("cvt.u64.u32 {x}, {b};"));
                    self.emit(&format!("add.s64 {a}, {base}, {x};"));
                }
            }
            addr = a;
            if in_chain && disp > 0 {
                let c = self.r64();
                self.emit(&format!("add.s64 {c}, {addr}, {disp};"));
                addr = c;
                disp = 0;
            }
        } else {
            let a = self.r32();
            let base = r.base.clone();
            match self.src.below(4) {
                0 => self.emit(&format!("mad.lo.s32 {a}, {i}, {size}, {base};")),
                1 => {
                    let x = self.r32();
                    self.emit(&format!("shl.b32 {x}, {i}, {log};"));
                    self.emit(&format!("add.s32 {a}, {base}, {x};"));
                }
                2 => {
                    let (e, x) = (self.r32(), self.r32());
                    self.emit(&format!("add.s32 {e}, {base}, {};", mask * size));
                    self.emit(&format!("mul.lo.s32 {x}, {i}, {size};"));
                    self.emit(&format!("sub.s32 {a}, {e}, {x};"));
                }
                _ => {
                    let x = self.r32();
                    self.emit(&format!("mul.lo.u32 {x}, {i}, {size};"));
                    self.emit(&format!("add.s32 {a}, {x}, {base};"));
                }
            }
            addr = a;
            if in_chain && disp > 0 {
                let c = self.r32();
                self.emit(&format!("add.s32 {c}, {addr}, {disp};"));
                addr = c;
                disp = 0;
            }
        }
        (addr, disp)
    }

    /// A load or store somewhere allowed at this point.
    fn access(&mut self, guard: Option<&str>) {
        let store = self.src.chance(45);
        let Some(r) = self.region_for(store) else {
            return;
        };
        self.access_in(&r, store, guard);
    }

    /// A region a load (or a store) may access at this point, with the barrier that starts
    /// a new shared-memory phase emitted first where one is needed; `None` if there is none.
    fn region_for(&mut self, store: bool) -> Option<Region> {
        // Where a barrier may be placed to start a new shared-memory phase.
        let top = self.depth == 0 && !self.diverged;
        let allowed: Vec<Region> = self
            .regions
            .iter()
            .filter(|r| {
                if store {
                    r.writable && !(r.shared_own && self.sh_read_other && !top)
                } else {
                    !(r.shared_other && self.sh_written && !top)
                }
            })
            .cloned()
            .collect();
        if allowed.is_empty() {
            return None;
        }
        let r = self.pick(&allowed);
        if r.shared_own && store && self.sh_read_other || r.shared_other && self.sh_written {
            // Only reached at the top level (see the filter): start a new phase.
            self.emit("bar.sync 0;");
            self.sh_read_other = false;
            self.sh_written = false;
        }
        if r.shared_own && store {
            self.sh_written = true;
        }
        if r.shared_other {
            self.sh_read_other = true;
        }
        Some(r)
    }

    /// A load or store in region `r`.
    fn access_in(&mut self, r: &Region, store: bool, guard: Option<&str>) {
        let (size, ty, vec2) = match self.src.below(7) {
            0 => (1, if store { "u8" } else { "s8" }, false),
            1 => (1, "u8", false),
            2 => (2, if store { "u16" } else { "s16" }, false),
            3 => (4, "u32", false),
            4 => (4, "b32", false),
            5 => (8, "u64", false),
            _ => (8, "u32", true),
        };
        let (addr, disp) = self.address(r, size);
        let space = space_of(r.kind);
        let at = if disp != 0 {
            format!("[{addr}+{disp}]")
        } else {
            format!("[{addr}]")
        };
        let g = guard.map_or(String::new(), |p| format!("@{p} "));
        // A guarded load writes registers that already hold values.
        if store {
            let v = if vec2 {
                format!("{{{}, {}}}", self.val32(), self.val32())
            } else if size == 8 {
                self.val64()
            } else {
                self.val32()
            };
            let op = if vec2 { "st{space}.v2" } else { "st{space}" }.replace("{space}", space);
            self.emit(&format!("{g}{op}.{ty} {at}, {v};"));
        } else {
            let op = if vec2 { "ld{space}.v2" } else { "ld{space}" }.replace("{space}", space);
            if vec2 {
                let (a, b) = if guard.is_some() {
                    (self.val32(), self.val32())
                } else {
                    (self.r32(), self.r32())
                };
                self.emit(&format!("{g}{op}.{ty} {{{a}, {b}}}, {at};"));
                if guard.is_none() {
                    self.v32.push(a);
                    self.v32.push(b);
                }
            } else if size == 8 {
                let d = if guard.is_some() {
                    self.val64()
                } else {
                    self.r64()
                };
                self.emit(&format!("{g}{op}.{ty} {d}, {at};"));
                if guard.is_none() {
                    self.v64.push(d);
                }
            } else {
                let d = if guard.is_some() {
                    self.val32()
                } else {
                    self.r32()
                };
                self.emit(&format!("{g}{op}.{ty} {d}, {at};"));
                if guard.is_none() {
                    self.v32.push(d);
                }
            }
        }
    }

    /// A floating-point operation on one component of a vector load: `ld.v2.f32`,
    /// `ld.v4.f32`, `ld.v4.u32` (words moved to `%f` with `mov.b32`) or `ld.v2.f64`, then one
    /// operation (`MUFU` functions, IEEE division and roots, arithmetic, conversions, a
    /// compare) on a component, with another component, or the same one, as its second
    /// operand. Selection reads such a component as a word of the load's register group (the
    /// class of `rsqrt.approx` of a `float2` component, once refused). The result's bits go
    /// into the integer pool (`mov.b32`/`mov.b64`), so later statements and the epilogue use
    /// them. The inputs are random bits: NaNs, infinities and subnormals included.
    fn float_component(&mut self) {
        let Some(r) = self.region_for(false) else {
            return;
        };
        // 0: v2.f32, 1: v4.f32, 2: v4.u32 as f32 words, 3: v2.f64.
        let shape = self.src.below(4);
        let (size, n) = match shape {
            0 => (8, 2),
            1 | 2 => (16, 4),
            _ => (16, 2),
        };
        let (addr, disp) = self.address(&r, size);
        let at = if disp != 0 {
            format!("[{addr}+{disp}]")
        } else {
            format!("[{addr}]")
        };
        let space = space_of(r.kind);
        let k = self.src.below(n) as usize;
        let j = self.src.below(n) as usize;
        if shape == 3 {
            let (a, b) = (self.f64r(), self.f64r());
            self.emit(&format!("ld{space}.v2.f64 {{{a}, {b}}}, {at};"));
            let comps = [a, b];
            let (x, y) = (comps[k].clone(), comps[j].clone());
            let d = self.f64r();
            let line = match self.src.below(10) {
                0 => format!("sqrt.rn.f64 {d}, {x};"),
                1 => format!("sqrt.rz.f64 {d}, {x};"),
                2 => format!("div.rn.f64 {d}, {x}, {y};"),
                3 => format!("div.rm.f64 {d}, {y}, {x};"),
                4 => format!("rcp.rn.f64 {d}, {x};"),
                5 => format!("rcp.approx.ftz.f64 {d}, {x};"),
                6 => format!("rsqrt.approx.f64 {d}, {x};"),
                7 => format!("add.f64 {d}, {x}, {y};"),
                8 => format!("fma.rn.f64 {d}, {x}, {y}, {x};"),
                _ => {
                    let f = self.f32r();
                    let w = self.r32();
                    self.emit(&format!("cvt.rn.f32.f64 {f}, {x};"));
                    self.emit(&format!("mov.b32 {w}, {f};"));
                    self.v32.push(w);
                    return;
                }
            };
            self.emit(&line);
            let w = self.r64();
            self.emit(&format!("mov.b64 {w}, {d};"));
            self.v64.push(w);
            return;
        }
        let comps: Vec<String> = (0..n).map(|_| self.f32r()).collect();
        if shape == 2 {
            let ints: Vec<String> = (0..n).map(|_| self.r32()).collect();
            self.emit(&format!("ld{space}.v4.u32 {{{}}}, {at};", ints.join(", ")));
            self.emit(&format!("mov.b32 {}, {};", comps[k], ints[k]));
            if j != k {
                self.emit(&format!("mov.b32 {}, {};", comps[j], ints[j]));
            }
            self.v32.extend(ints);
        } else {
            self.emit(&format!(
                "ld{space}.v{n}.f32 {{{}}}, {at};",
                comps.join(", ")
            ));
        }
        let (x, y) = (comps[k].clone(), comps[j].clone());
        let d = self.f32r();
        let line = match self.src.below(33) {
            0 => format!("rsqrt.approx.f32 {d}, {x};"),
            1 => format!("rsqrt.approx.ftz.f32 {d}, {x};"),
            2 => format!("rcp.approx.f32 {d}, {x};"),
            3 => format!("rcp.approx.ftz.f32 {d}, {x};"),
            4 => format!("rcp.rn.f32 {d}, {x};"),
            5 => format!("rcp.rz.f32 {d}, {x};"),
            6 => format!("sqrt.approx.f32 {d}, {x};"),
            7 => format!("sqrt.approx.ftz.f32 {d}, {x};"),
            8 => format!("sqrt.rn.f32 {d}, {x};"),
            9 => format!("sqrt.rp.f32 {d}, {x};"),
            10 => format!("sin.approx.f32 {d}, {x};"),
            11 => format!("cos.approx.ftz.f32 {d}, {x};"),
            12 => format!("lg2.approx.f32 {d}, {x};"),
            13 => format!("lg2.approx.ftz.f32 {d}, {x};"),
            14 => format!("ex2.approx.f32 {d}, {x};"),
            15 => format!("ex2.approx.ftz.f32 {d}, {x};"),
            16 => format!("div.rn.f32 {d}, {x}, {y};"),
            17 => format!("div.rn.f32 {d}, {y}, {x};"),
            18 => format!("div.rz.f32 {d}, {x}, {y};"),
            19 => format!("div.approx.f32 {d}, {x}, {y};"),
            20 => format!("div.full.f32 {d}, {x}, {y};"),
            21 => format!("div.approx.ftz.f32 {d}, {x}, {y};"),
            22 => format!("div.rn.ftz.f32 {d}, {x}, {y};"),
            23 => format!("add.f32 {d}, {x}, {y};"),
            24 => format!("mul.f32 {d}, {x}, {y};"),
            25 => format!("fma.rn.f32 {d}, {x}, {y}, {x};"),
            26 => format!("abs.f32 {d}, {x};"),
            27 => format!("neg.f32 {d}, {x};"),
            28 => format!("min.f32 {d}, {x}, {y};"),
            29 => format!("max.ftz.f32 {d}, {x}, {y};"),
            30 => format!("cvt.rni.f32.f32 {d}, {x};"),
            31 => {
                let w = self.r32();
                self.emit(&format!("cvt.rzi.s32.f32 {w}, {x};"));
                self.v32.push(w);
                return;
            }
            _ => {
                let (p, w) = (self.pred(), self.r32());
                self.emit(&format!("setp.lt.f32 {p}, {x}, {y};"));
                self.emit(&format!("selp.u32 {w}, 1, 0, {p};"));
                self.v32.push(w);
                return;
            }
        };
        self.emit(&line);
        let w = self.r32();
        self.emit(&format!("mov.b32 {w}, {d};"));
        self.v32.push(w);
    }

    /// Straight-line code laid out out of order: 2..4 chunks of statements, run in order
    /// 0, 1, .. but laid out in a random permutation, each entered by a `bra.uni` (the first
    /// from above, the others from the end of the previous one). A value defined in one chunk
    /// is used in later ones, which may be laid out above it; inside a loop body this is a
    /// loop whose header is in the middle of its blocks (a multi-entry-looking layout of a
    /// reducible loop).
    fn shuffled(&mut self) {
        self.nlabel += 1;
        let id = self.nlabel;
        let n = 2 + self.src.below(3) as usize;
        let label = |j: usize| {
            if j == n {
                format!("$CHUNK{id}_END")
            } else {
                format!("$CHUNK{id}_{j}")
            }
        };
        // Generated in execution order, each into its own text.
        let mut chunks = Vec::with_capacity(n);
        for j in 0..n {
            let outer = std::mem::take(&mut self.body);
            self.emit(&format!("{}:", label(j)));
            for _ in 0..1 + self.src.below(3) {
                self.statement();
            }
            self.emit(&format!("bra.uni {};", label(j + 1)));
            chunks.push(std::mem::replace(&mut self.body, outer));
        }
        // Fisher–Yates over the layout.
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let k = self.src.below(i as u32 + 1) as usize;
            order.swap(i, k);
        }
        self.emit(&format!("bra.uni {};", label(0)));
        for &j in &order {
            self.body.push_str(&chunks[j]);
        }
        self.emit(&format!("{}:", label(n)));
    }

    fn statement(&mut self) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        match self.src.below(23) {
            0..=4 => self.arith32(),
            5..=6 => self.arith64(),
            7..=11 => self.access(None),
            12 => self.update32(None),
            13 => {
                let p = self.compare();
                if self.src.chance(50) {
                    self.update32(Some(&p));
                } else {
                    self.access(Some(&p));
                    // leafold lowers a guarded load or store as a branch around it: that
                    // diverges too (tests/data/fuzz-found/predicated_ld_u64.ptx).
                    self.diverged = true;
                }
            }
            14..=15 if self.depth < 2 => {
                self.diverged = true;
                // if (!p) { ... }, laid out in one of three ways.
                let p = self.compare();
                self.nlabel += 1;
                let id = self.nlabel;
                match self.src.below(3) {
                    0 => {
                        // In place: `@p bra SKIP; body; SKIP:`.
                        let l = format!("$SKIP{id}");
                        self.emit(&format!("@{p} bra {l};"));
                        self.block_body();
                        self.emit(&format!("{l}:"));
                    }
                    1 => {
                        // Out of line, after the kernel's `ret`: `@!p bra OOL; JOIN:` here,
                        // `OOL: body; bra.uni JOIN;` in the tail.
                        let (l, join) = (format!("$OOL{id}"), format!("$JOIN{id}"));
                        self.emit(&format!("@!{p} bra {l};"));
                        self.emit(&format!("{join}:"));
                        let outer = std::mem::take(&mut self.body);
                        self.emit(&format!("{l}:"));
                        self.block_body();
                        self.emit(&format!("bra.uni {join};"));
                        let ool = std::mem::replace(&mut self.body, outer);
                        self.tail.push(ool);
                    }
                    _ => {
                        // A diamond whose `then` block is entered by a forward `bra.uni`
                        // over the `else` block: `@p bra ELSE; bra.uni THEN; ELSE: body';
                        // bra.uni JOIN; THEN: body; JOIN:`.
                        let (e, t, join) = (
                            format!("$ELSE{id}"),
                            format!("$THEN{id}"),
                            format!("$JOIN{id}"),
                        );
                        self.emit(&format!("@{p} bra {e};"));
                        self.emit(&format!("bra.uni {t};"));
                        self.emit(&format!("{e}:"));
                        self.block_body();
                        self.emit(&format!("bra.uni {join};"));
                        self.emit(&format!("{t}:"));
                        self.block_body();
                        self.emit(&format!("{join}:"));
                    }
                }
            }
            16..=17 if self.depth < 2 => {
                self.diverged = true;
                // A loop with a per-thread trip count of 1..4.
                let (t, c) = (self.r32(), self.r32());
                let v = self.val32();
                let n = self.r32();
                self.emit(&format!("and.b32 {t}, {v}, 3;"));
                self.emit(&format!("add.s32 {n}, {t}, 1;"));
                self.emit(&format!("mov.u32 {c}, 0;"));
                self.nlabel += 1;
                let id = self.nlabel;
                let l = format!("$LOOP{id}");
                // 0: the test at the bottom of the body (do-while). 1: the body laid out
                // before its header, which the entry jumps into with `bra.uni` (`bra.uni H;
                // L: body; H: c += 1; @(c <= n) bra L`). 2: as 1, behind a trip-count test
                // that may skip the loop (`@(n != 0) bra H; bra.uni X; ..; X:`), the shape
                // nvcc writes for `for` loops.
                let layout = self.src.below(3);
                let (head, exit) = (format!("$LHEAD{id}"), format!("$LEXIT{id}"));
                if layout == 2 {
                    let q = self.pred();
                    self.emit(&format!("setp.ne.u32 {q}, {n}, 0;"));
                    self.emit(&format!("@{q} bra {head};"));
                    self.emit(&format!("bra.uni {exit};"));
                } else if layout == 1 {
                    self.emit(&format!("bra.uni {head};"));
                }
                let (k32, k64) = (self.v32.len(), self.v64.len());
                self.emit(&format!("{l}:"));
                self.depth += 1;
                // The counter itself must not be updated (the loop would not end): the body
                // sees a copy.
                let cv = self.r32();
                self.emit(&format!("mov.u32 {cv}, {c};"));
                self.v32.push(cv);
                for _ in 0..1 + self.src.below(4) {
                    self.statement();
                }
                let p = self.pred();
                if layout == 0 {
                    self.emit(&format!("add.s32 {c}, {c}, 1;"));
                    self.emit(&format!("setp.lt.u32 {p}, {c}, {n};"));
                } else {
                    // The body runs for c = 1..n; its values do not dominate the exit (the
                    // header does): they are forgotten after the loop.
                    self.emit(&format!("{head}:"));
                    self.emit(&format!("add.s32 {c}, {c}, 1;"));
                    self.emit(&format!("setp.le.u32 {p}, {c}, {n};"));
                }
                self.emit(&format!("@{p} bra {l};"));
                self.depth -= 1;
                if layout != 0 {
                    self.v32.truncate(k32);
                    self.v64.truncate(k64);
                }
                if layout == 2 {
                    self.emit(&format!("{exit}:"));
                }
                self.v32.push(c);
            }
            18..=19 => self.float_component(),
            20..=21 => self.shuffled(),
            _ => self.arith32(),
        }
    }
}

impl Gen<'_, '_> {
    /// The body of a conditional block: 1..4 statements one level deeper, whose new values
    /// are forgotten after it (they are not defined on the path around it).
    fn block_body(&mut self) {
        let (k32, k64) = (self.v32.len(), self.v64.len());
        self.depth += 1;
        for _ in 0..1 + self.src.below(4) {
            self.statement();
        }
        self.depth -= 1;
        self.v32.truncate(k32);
        self.v64.truncate(k64);
    }
}

impl Gen<'_, '_> {
    /// Store `bytes` bytes of values made from `seed` (a per-thread register) at `base`, a
    /// region of `kind`: memory the kernel may read before writing it is then defined.
    fn fill(&mut self, base: &str, kind: Kind, seed: &str, bytes: u32) {
        let x = self.r32();
        self.emit(&format!("mad.lo.s32 {x}, {seed}, 40503, 12345;"));
        let sp = space_of(kind);
        for k in 0..bytes / 4 {
            self.emit(&format!("st{sp}.u32 [{base}+{}], {x};", 4 * k));
            self.emit(&format!("add.s32 {x}, {x}, 977;"));
        }
    }
}

/// The state-space suffix of a load or store in a region of this kind.
fn space_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Global => ".global",
        Kind::Generic => "",
        Kind::Shared => ".shared",
        Kind::Local => ".local",
    }
}

/// Generate one kernel. The steps: the launch shape, the prologue (special registers,
/// parameters), the input and output regions, the shared and local ones (sometimes), random
/// statements until the budget is spent, the epilogue's stores, the kernel's text.
pub fn generate(src: &mut Source) -> GenKernel {
    let addr64 = src.below(4) != 0;
    let block_x = [32u32, 64, 96][src.below(3) as usize];
    let grid_x = 1 + src.below(2);
    let ptr = if addr64 { "u64" } else { "u32" };
    let mut g = Gen::new(src);
    g.budget = 8 + g.src.below(32);
    let (tid, gtid) = g.prologue();
    let pout = g.input_regions(addr64);
    let (out, out_kind) = g.output_region(addr64, &gtid, &pout);
    // Shared: the whole array (reads) and the thread's own slice; local: the array.
    let shared_bytes = block_x * SHARED_SLICE;
    let use_shared = g.src.chance(70);
    if use_shared {
        g.shared_regions(addr64, ptr, &tid, &gtid, shared_bytes);
    }
    let use_local = g.src.chance(40);
    if use_local {
        g.local_region(addr64, ptr, &gtid);
    }
    while g.budget > 0 {
        g.statement();
    }
    g.epilogue(&out, out_kind);
    let shared = use_shared.then_some(shared_bytes);
    let ptx = kernel_text(&g, addr64, shared, use_local);
    GenKernel::new(ptx, grid_x, block_x, SLICE)
}

impl GenKernel {
    /// The kernel `ptx` launched as `grid_x` blocks of `block_x` threads, each owning
    /// `slice` bytes of `pout`; the buffer also holds the inputs.
    fn new(ptx: String, grid_x: u32, block_x: u32, slice: u32) -> GenKernel {
        let threads = block_x * grid_x;
        let total = u64::from(threads) * u64::from(slice);
        GenKernel {
            ptx,
            grid: [grid_x, 1, 1],
            block: [block_x, 1, 1],
            buffer_size: total.max(u64::from(INPUT_ELEMS) * 8 * 2 + 1024),
        }
    }
}

/// Compile a generated kernel (regalloc2's checker and the final-assignment checker are on
/// in debug builds), check the control
/// codes of its cubin with `sm50::sched::check`, and verify it against the reference on one
/// random input (`seed`). Every failure is an error with the PTX attached: a generated
/// kernel is valid by construction, so a compile error, a hazard, a kernel that cannot run,
/// a launch the reference finds undefined (a race, also on global memory) or a mismatch is
/// a finding.
pub fn check_generated(k: &GenKernel, seed: u64) -> Result<(), String> {
    let opts = crate::verify::VerifyOptions {
        seed,
        runs: 1,
        grid: k.grid,
        block: k.block,
        buffer_size: Some(k.buffer_size),
        compile: crate::driver::Options {
            file_name: "fz.ptx".to_string(),
            // The address kernels move an index interval outside its region and bring it
            // back with the displacement, so `base + index` may lie in another window than
            // the final address (a local array sits at the start of the model's local
            // window). The default window test assumes no object straddles a window (ptxas's
            // rule), which such code breaks, so the generated kernels test every final
            // address.
            plg_per_address: true,
            ..crate::driver::Options::default()
        },
        ptxas_cubin: None,
        only_ptxas: false,
        shape_block: false,
        check_slice: false,
        sizes: crate::verify::Sizes::Small,
        textures: Vec::new(),
        surface: None,
        profile: false,
        indexed_locals_in_memory: false,
        surface_format: crate::surface::SurfFormat::RAW,
    };
    let fail = |what: String| Err(format!("{what}\n--- PTX ---\n{}", k.ptx));
    let out = match crate::compile(&k.ptx, &opts.compile) {
        Ok(o) => o,
        Err(d) => return fail(format!("compile: {}", crate::error::render_all(&d.0))),
    };
    let file = match crate::cubin::read(&out.cubin) {
        Ok(f) => f,
        Err(e) => return fail(format!("our cubin does not read back: {e}")),
    };
    for kern in &file.kernels {
        let errs = crate::sm50::sched::check::check_code(&kern.code);
        if !errs.is_empty() {
            return fail(format!("hazards: {errs:?}\n{}", out.sass));
        }
    }
    let verdicts = match crate::verify::verify_file(&k.ptx, None, &opts) {
        Ok(v) => v,
        Err(d) => return fail(format!("verify: {}", crate::error::render_all(&d.0))),
    };
    for v in verdicts {
        // A match on a smaller launch (the full one races or diverges at a barrier) is a
        // finding too: the generator promises kernels defined on their whole launch, and a
        // fallback would quietly test one thread instead.
        let fallback = matches!(
            v.outcome,
            crate::verify::Outcome::Match {
                one_thread: Some(_),
                ..
            }
        );
        if v.exit_code() != 0 || fallback {
            return fail(format!("{v}\n{}", out.sass));
        }
    }
    Ok(())
}
