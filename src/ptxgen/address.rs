//! The address-expression kernels of the generator ([`generate_address`]): straight-line
//! accesses whose addresses are random `add/sub/shl/neg/mul.wide/cvt` index trees over special
//! registers, masked parameters and constants, kept in bounds by interval arithmetic (not by
//! `and` masks), so that the whole tree is address arithmetic the folder sees.
//!
//! In: a [`Source`] of choices. Out: a [`GenKernel`]. Invariant: every intermediate value of an
//! index tree stays within ±`ADDR_BOUND` (no 32-bit operation wraps), every access falls in its
//! region, and each thread writes only its own slice.

use super::*;

// ------------------------------------------------------------------ address expressions

/// Bytes of `pout` each thread owns in an address-expression kernel.
pub(super) const ADDR_SLICE: u32 = 1024;

/// Bound on any intermediate value of an index tree, so no 32-bit operation wraps.
pub(super) const ADDR_BOUND: i64 = 1 << 20;

/// An index tree: its PTX register, whether it is 64-bit, and the interval of its value.
#[derive(Clone, Debug)]
pub(super) struct Idx {
    pub(super) reg: String,
    pub(super) wide: bool,
    pub(super) lo: i64,
    pub(super) hi: i64,
}

impl Gen<'_, '_> {
    /// A random index tree of `add/sub/shl/neg/mul.wide/cvt` over special registers, masked
    /// scalar parameters and constants, whose value (tracked as an interval) stays within
    /// ±[`ADDR_BOUND`]; `depth` limits its height.
    pub(super) fn index_tree(&mut self, wide: bool, depth: u32, leaves: &[Idx]) -> Idx {
        let leaf = depth == 0 || self.src.chance(25);
        if leaf {
            let same: Vec<Idx> = leaves.iter().filter(|l| l.wide == wide).cloned().collect();
            if !same.is_empty() && self.src.chance(80) {
                return self.pick(&same);
            }
            let k = self.src.below(64) as i64 - 16;
            let (reg, wide) = if wide {
                let d = self.r64();
                self.emit(&format!("mov.s64 {d}, {k};"));
                (d, true)
            } else {
                let d = self.r32();
                self.emit(&format!("mov.s32 {d}, {k};"));
                (d, false)
            };
            return Idx {
                reg,
                wide,
                lo: k,
                hi: k,
            };
        }
        let bits = if wide { 64 } else { 32 };
        let r = match self.src.below(if wide { 7 } else { 5 }) {
            0 | 1 => {
                let a = self.index_tree(wide, depth - 1, leaves);
                let b = self.index_tree(wide, depth - 1, leaves);
                let sub = self.src.chance(40);
                let d = if wide { self.r64() } else { self.r32() };
                let (op, lo, hi) = if sub {
                    ("sub", a.lo - b.hi, a.hi - b.lo)
                } else {
                    ("add", a.lo + b.lo, a.hi + b.hi)
                };
                self.emit(&format!("{op}.s{bits} {d}, {}, {};", a.reg, b.reg));
                Idx {
                    reg: d,
                    wide,
                    lo,
                    hi,
                }
            }
            2 => {
                let a = self.index_tree(wide, depth - 1, leaves);
                let k = self.src.below(4);
                let d = if wide { self.r64() } else { self.r32() };
                self.emit(&format!("shl.b{bits} {d}, {}, {k};", a.reg));
                Idx {
                    reg: d,
                    wide,
                    lo: a.lo << k,
                    hi: a.hi << k,
                }
            }
            3 => {
                let a = self.index_tree(wide, depth - 1, leaves);
                let d = if wide { self.r64() } else { self.r32() };
                self.emit(&format!("neg.s{bits} {d}, {};", a.reg));
                Idx {
                    reg: d,
                    wide,
                    lo: -a.hi,
                    hi: -a.lo,
                }
            }
            4 if !wide => {
                // A 64-bit subtree truncated (exact: its value fits 32 bits).
                let a = self.index_tree(true, depth - 1, leaves);
                let d = self.r32();
                self.emit(&format!("cvt.u32.u64 {d}, {};", a.reg));
                Idx {
                    reg: d,
                    wide: false,
                    lo: a.lo,
                    hi: a.hi,
                }
            }
            4 => {
                // mul.wide of a 32-bit subtree by a small constant (signed unless the subtree is
                // known non-negative, then either).
                let a = self.index_tree(false, depth - 1, leaves);
                let k = [1i64, 2, 3, 4, 8, 12][self.src.below(6) as usize];
                let s = if a.lo >= 0 && self.src.chance(50) {
                    "u32"
                } else {
                    "s32"
                };
                let d = self.r64();
                self.emit(&format!("mul.wide.{s} {d}, {}, {k};", a.reg));
                Idx {
                    reg: d,
                    wide: true,
                    lo: a.lo * k,
                    hi: a.hi * k,
                }
            }
            _ => {
                // cvt.s64.s32, or cvt.u64.u32 of a non-negative subtree.
                let a = self.index_tree(false, depth - 1, leaves);
                let s = if a.lo >= 0 && self.src.chance(50) {
                    "u64.u32"
                } else {
                    "s64.s32"
                };
                let d = self.r64();
                self.emit(&format!("cvt.{s} {d}, {};", a.reg));
                Idx {
                    reg: d,
                    wide: true,
                    lo: a.lo,
                    hi: a.hi,
                }
            }
        };
        if r.lo < -ADDR_BOUND || r.hi > ADDR_BOUND {
            // Too wide a range: fall back to a leaf (the emitted subtree stays, unused).
            return self.index_tree(wide, 0, leaves);
        }
        r
    }
}

/// Generate one kernel of address expressions: every access goes to
/// `base + (T << log2(size)) + D` where `T` is a random [`Gen::index_tree`] over `%tid.x`,
/// `%ctaid.x`, `%ntid.x`, masked scalar parameters and constants (32- or 64-bit), and `D`
/// (in the chain or in the instruction) moves the interval of `T` into the region. Regions:
/// the input `pin0` (global through `cvta.to.global`, or generic), the thread's own slice of
/// `pout` (global or generic), its own slice of a shared array (shared, or generic through
/// `cvta.shared`, where the chain's `Plg` picks the window) and its local array (local or
/// generic). Loaded values are xor-ed into an accumulator stored at the end of the slice; own
/// regions are filled first, so every load reads defined bytes and no two threads write the
/// same byte. The steps: the leaves, the regions, the accesses, the accumulator's store.
pub fn generate_address(src: &mut Source) -> GenKernel {
    let addr64 = src.below(4) != 0;
    let block_x = [32u32, 64][src.below(2) as usize];
    let grid_x = 1 + src.below(2);
    let mut g = Gen::new(src);
    let leaves = g.address_leaves(block_x, grid_x);
    let r = g.address_regions(addr64, &leaves);
    let n = 2 + g.src.below(6);
    for _ in 0..n {
        g.address_access(addr64, &leaves, &r);
    }
    g.emit(&format!(
        "st.u64 [{}+{}], {};",
        r.own,
        ADDR_SLICE - 8,
        r.acc
    ));
    g.emit("ret;");
    let ptx = kernel_text(&g, addr64, Some(block_x * SHARED_SLICE), true);
    GenKernel::new(ptx, grid_x, block_x, ADDR_SLICE)
}

/// The registers the accesses of an address kernel start from.
struct AddrRegions {
    /// `pin0` as loaded.
    pin0: String,
    /// The thread's own slice of `pout`.
    own: String,
    /// The thread's own slice of the shared array.
    sh_own: String,
    /// The local array.
    lc: String,
    /// The fill value (a 32-bit store's source).
    fill: String,
    /// The accumulator of loaded values (a 64-bit store's source).
    acc: String,
}

impl Gen<'_, '_> {
    /// The leaves of the index trees: `%tid.x`, `%ctaid.x`, `%ntid.x`, two scalar parameters
    /// masked to 8 bits and a 64-bit one masked to 10.
    fn address_leaves(&mut self, block_x: u32, grid_x: u32) -> Vec<Idx> {
        let mut leaves = Vec::new();
        for (sreg, hi) in [
            ("%tid.x", i64::from(block_x) - 1),
            ("%ctaid.x", i64::from(grid_x) - 1),
            ("%ntid.x", i64::from(block_x)),
        ] {
            let r = self.r32();
            self.emit(&format!("mov.u32 {r}, {sreg};"));
            let lo = if sreg == "%ntid.x" { hi } else { 0 };
            leaves.push(Idx {
                reg: r,
                wide: false,
                lo,
                hi,
            });
        }
        for p in ["s0", "s1"] {
            let (r, m) = (self.r32(), self.r32());
            self.emit(&format!("ld.param.u32 {r}, [{p}];"));
            self.emit(&format!("and.b32 {m}, {r}, 255;"));
            leaves.push(Idx {
                reg: m,
                wide: false,
                lo: 0,
                hi: 255,
            });
        }
        let (r, m) = (self.r64(), self.r64());
        self.emit(&format!("ld.param.u64 {r}, [s2];"));
        self.emit(&format!("and.b64 {m}, {r}, 1023;"));
        leaves.push(Idx {
            reg: m,
            wide: true,
            lo: 0,
            hi: 1023,
        });
        leaves
    }

    /// The regions of an address kernel: the parameters' pointers, the thread's own slice
    /// of `pout`, its shared slice and the local array (both filled with defined values),
    /// and a zeroed accumulator.
    fn address_regions(&mut self, addr64: bool, leaves: &[Idx]) -> AddrRegions {
        let ptr = if addr64 { "u64" } else { "u32" };
        let tid = leaves[0].reg.clone();
        let gtid = self.r32();
        self.emit(&format!(
            "mad.lo.s32 {gtid}, {}, {}, {tid};",
            leaves[1].reg, leaves[2].reg
        ));
        let mut bases = Vec::new();
        for name in ["pin0", "pout"] {
            let r = self.new_ptr(addr64);
            self.emit(&format!("ld.param.{ptr} {r}, [{name}];"));
            bases.push(r);
        }
        // Own slice of pout.
        let own = self.thread_slice(addr64, &gtid, &bases[1], ADDR_SLICE);
        // Own shared slice and the local array, filled with defined values.
        let sh_own = self.r32();
        self.emit(&format!("mov.u32 {sh_own}, sh;"));
        self.emit(&format!(
            "mad.lo.s32 {sh_own}, {tid}, {SHARED_SLICE}, {sh_own};"
        ));
        let lc = self.r32();
        self.emit(&format!("mov.u32 {lc}, lc;"));
        let fill = self.r32();
        self.emit(&format!("mad.lo.s32 {fill}, {gtid}, 40503, 12345;"));
        for k in 0..SHARED_SLICE / 4 {
            self.emit(&format!("st.shared.u32 [{sh_own}+{}], {fill};", 4 * k));
            self.emit(&format!("add.s32 {fill}, {fill}, 977;"));
        }
        for k in 0..LOCAL_BYTES / 4 {
            self.emit(&format!("st.local.u32 [{lc}+{}], {fill};", 4 * k));
            self.emit(&format!("add.s32 {fill}, {fill}, 977;"));
        }
        let acc = self.r64();
        self.emit(&format!("mov.u64 {acc}, 0;"));
        let pin0 = bases.swap_remove(0);
        AddrRegions {
            pin0,
            own,
            sh_own,
            lc,
            fill,
            acc,
        }
    }

    /// One access of an address kernel: a random region, then an element of a random size
    /// at an index tree fitted into it, stored to (a writable region, half the time) or
    /// loaded and xor-ed into the accumulator.
    fn address_access(&mut self, addr64: bool, leaves: &[Idx], r: &AddrRegions) {
        let (base, kind, wide, bytes, writable) = self.address_region(addr64, r);
        let (size, ty) =
            [(1u32, "u8"), (2, "u16"), (4, "u32"), (8, "u64")][self.src.below(4) as usize];
        let elems = i64::from(bytes / size);
        let tree_wide = self.src.chance(50) && wide;
        let height = 1 + self.src.below(3);
        let t = self.fitting_index(tree_wide, height, leaves, elems);
        let slack = (elems - 1 - (t.hi - t.lo)).max(0);
        let dels = -t.lo + i64::from(self.src.below(slack.min(1000) as u32 + 1));
        let disp = dels * i64::from(size);
        let (at, imm) = self.address_of(&t, wide, size, &base, disp);
        let space = space_of(kind);
        let addr = if imm != 0 {
            format!("[{at}+{imm}]")
        } else {
            format!("[{at}]")
        };
        let acc = &r.acc;
        if writable && self.src.chance(50) {
            let v = if size == 8 { acc } else { &r.fill };
            self.emit(&format!("st{space}.{ty} {addr}, {v};"));
        } else {
            let d = self.r64();
            if size == 8 {
                self.emit(&format!("ld{space}.u64 {d}, {addr};"));
            } else {
                let d32 = self.r32();
                self.emit(&format!("ld{space}.{ty} {d32}, {addr};"));
                self.emit(&format!("cvt.u64.u32 {d}, {d32};"));
            }
            self.emit(&format!("xor.b64 {acc}, {acc}, {d};"));
            self.emit(&format!("shl.b64 {acc}, {acc}, 1;"));
        }
    }

    /// A random region of an address kernel, generic 40% of the time: its base register,
    /// kind, address width, bytes and whether the thread may write it.
    fn address_region(&mut self, addr64: bool, r: &AddrRegions) -> (String, Kind, bool, u32, bool) {
        let ptr = if addr64 { "u64" } else { "u32" };
        let which = self.src.below(4);
        let generic = self.src.chance(40);
        match which {
            0 => {
                let b = if !generic && self.src.chance(60) {
                    let c = self.new_ptr(addr64);
                    self.emit(&format!("cvta.to.global.{ptr} {c}, {};", r.pin0));
                    c
                } else {
                    r.pin0.clone()
                };
                let kind = if generic { Kind::Generic } else { Kind::Global };
                (b, kind, addr64, INPUT_ELEMS * 8, false)
            }
            1 => {
                let kind = if generic { Kind::Generic } else { Kind::Global };
                (r.own.clone(), kind, addr64, ADDR_SLICE - 16, true)
            }
            2 | 3 => {
                let (space, own_reg, bytes) = if which == 2 {
                    ("shared", &r.sh_own, SHARED_SLICE)
                } else {
                    ("local", &r.lc, LOCAL_BYTES)
                };
                if generic {
                    let c = self.new_ptr(addr64);
                    if addr64 {
                        let w = self.r64();
                        self.emit(&format!("cvt.u64.u32 {w}, {own_reg};"));
                        self.emit(&format!("cvta.{space}.u64 {c}, {w};"));
                    } else {
                        self.emit(&format!("cvta.{space}.u32 {c}, {own_reg};"));
                    }
                    (c, Kind::Generic, addr64, bytes, true)
                } else {
                    let kind = if which == 2 {
                        Kind::Shared
                    } else {
                        Kind::Local
                    };
                    (own_reg.clone(), kind, false, bytes, true)
                }
            }
            _ => unreachable!(),
        }
    }
}

impl Gen<'_, '_> {
    /// A random index tree of `height` over `leaves` whose interval fits `elems` elements: the
    /// tree, else the first leaf, else a fresh zero register.
    fn fitting_index(&mut self, tree_wide: bool, height: u32, leaves: &[Idx], elems: i64) -> Idx {
        let t = self.index_tree(tree_wide, height, leaves);
        let t = if t.hi - t.lo >= elems {
            // Too wide for the region: a leaf that fits instead.
            Idx {
                reg: leaves[0].reg.clone(),
                wide: false,
                lo: 0,
                hi: leaves[0].hi,
            }
        } else {
            t
        };
        let t = if t.hi - t.lo >= elems {
            let d = self.r32();
            self.emit(&format!("mov.u32 {d}, 0;"));
            Idx {
                reg: d,
                wide: false,
                lo: 0,
                hi: 0,
            }
        } else {
            t
        };
        t
    }

    /// The address of element `t` (of `size` bytes) plus `disp` bytes from `base`, `wide`
    /// (64-bit) or not: the register and the immediate offset left for the instruction.
    fn address_of(
        &mut self,
        t: &Idx,
        wide: bool,
        size: u32,
        base: &str,
        disp: i64,
    ) -> (String, i64) {
        let k = size.trailing_zeros();
        // Scale and widen the index to the address width.
        let scaled = if wide {
            let s = self.r64();
            if t.wide {
                self.emit(&format!("shl.b64 {s}, {}, {k};", t.reg));
            } else if self.src.chance(50) {
                self.emit(&format!("mul.wide.s32 {s}, {}, {size};", t.reg));
            } else {
                let w = self.r64();
                self.emit(&format!("cvt.s64.s32 {w}, {};", t.reg));
                self.emit(&format!("shl.b64 {s}, {w}, {k};"));
            }
            s
        } else {
            let s = self.r32();
            let src = if t.wide {
                let c = self.r32();
                self.emit(&format!("cvt.u32.u64 {c}, {};", t.reg));
                c
            } else {
                t.reg.clone()
            };
            self.emit(&format!("shl.b32 {s}, {src}, {k};"));
            s
        };
        let bits = if wide { 64 } else { 32 };
        let a = if wide { self.r64() } else { self.r32() };
        let (at, imm) = match self.src.below(3) {
            0 => {
                self.emit(&format!("add.s{bits} {a}, {base}, {scaled};"));
                (a, disp)
            }
            1 => {
                let s2 = if wide { self.r64() } else { self.r32() };
                self.emit(&format!("add.s{bits} {s2}, {scaled}, {disp};"));
                self.emit(&format!("add.s{bits} {a}, {s2}, {base};"));
                (a, 0)
            }
            _ => {
                let b2 = if wide { self.r64() } else { self.r32() };
                self.emit(&format!("add.s{bits} {b2}, {base}, {disp};"));
                self.emit(&format!("add.s{bits} {a}, {b2}, {scaled};"));
                (a, 0)
            }
        };
        (at, imm)
    }
}
