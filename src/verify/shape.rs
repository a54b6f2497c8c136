//! The launch a kernel is written for, read from the kernel itself, for `verify`'s full
//! launch.
//!
//! In: a kernel's IR ([`Function`]), its module (the sizes of its `.shared` variables), the
//! block `.reqntid`/`.maxntid` give (if any) and the block and grid `verify` would use
//! otherwise. Out: a [`KernelLaunch`] (grid, block and the rule that chose them, one line for
//! `--explain-inputs` and for the verdict) or `None` when no rule applies or the launch it
//! gives is the default one.
//!
//! # Rules, first that applies
//!
//! 1. **Directive.** `.reqntid` fixes the block; `.maxntid` bounds it: the default block is
//!    kept when it fits, else the directive's dimensions are the block. The grid is the
//!    default one. (A launch that breaks the directive does not exist on hardware.)
//! 2. **Shared arrays indexed by the thread index.** Each address of a `.shared` access (or
//!    `.const` load: a table per thread, as dct8x8's 8×8 quantization matrix) is
//!    taken apart into constant multiples of `%tid.x`, `%tid.y` and one shared variable's
//!    address (through `add`, `sub`, `mul`/`shl` by a constant, `mul.wide`, conversions and
//!    `cvta`; other terms are ignored). With both `%tid.x` and `%tid.y` in the address, the
//!    dimension of the smaller multiplier is bounded by the ratio of the two (the row of a
//!    `[16][16]` tile: 64 / 4 = 16) and the other by the variable's size over the bigger
//!    multiplier (1024 / 64 = 16 rows); with one only, it is bounded by size over multiplier.
//!    A term of another index with a bigger multiplier (`a[i][tid.x]`, `i` a loop
//!    counter: `64·i + 4·tid.x`) bounds the thread index's dimension by the ratio too.
//!    The block is the tightest bound of each dimension (`x` no bigger than the default
//!    thread count; `y`, for a kernel that reads `%tid.y`, the bound or else the default
//!    thread count over `x`), at most 1024 threads; a kernel that reads `%tid.y` gets a 2D
//!    block. The grid is the default one. Where `%tid.x` is both compared with a constant
//!    `c` at or past that `x` and has `c` subtracted from it (lud's `lud_perimeter`:
//!    `if (tid < 16) … else … a[tid - 16]`, two groups of threads), `x` grows by `c` when
//!    that fits the default block; when it does not, the launch leaves the second group's
//!    code unrun and is marked not full ([`KernelLaunch::full`]): a match on it counts as a
//!    reduced launch, not a full one.
//! 3. **One thread.** When no store or atomic to global, shared or generic memory has an
//!    address that depends on `%tid`, `%ctaid`, `%laneid`, `%warpid`, a lane mask, an
//!    atomic's old value, a vote or a shuffle (through every operand and block argument),
//!    every thread writes the same places: the kernel is written for one thread, and the
//!    launch is one thread in one CTA. Not for a kernel whose threads work together: one
//!    with an atomic, a barrier, or both stores to and loads from shared memory is written
//!    for many threads, whatever its store addresses.
//!
//! 4. **One CTA.** When nothing depends on which CTA runs (no `%ctaid`, `%nctaid` or other
//!    special register but the thread's own indices, no global atomic), every CTA does the
//!    same work on the same places, so more than one only races with itself: the kernel is
//!    written for one CTA, and the launch is one CTA of the default block. Rule 2's launch
//!    has one CTA too for such a kernel.
//!
//! Invariants: depends only on the IR and the directives (not on a seed); never returns the
//! default launch; `verify` tries this launch only when the default one is undefined or
//! faults, and a match on it counts as verified at the full launch, with the rule as its
//! note (`Verdict::launch_from_kernel`), unless the launch is marked not full.

use std::collections::HashMap;

use cranelift_entity::EntityRef;

use crate::ir::{
    self, BinaryOp, Dim, Function, InstData, IntCC, Space, SpecialReg, Value, ValueDef,
};

/// Most threads a block may have (every CUDA architecture).
pub const MAX_BLOCK_THREADS: u32 = 1024;
/// Steps the walk of one address may take.
const WALK_BUDGET: usize = 2_000;

/// A launch chosen from the kernel, and the rule that chose it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLaunch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub why: String,
    /// Whether a match on this launch counts as the full launch. False where the launch is
    /// known to leave code unrun (rule 2's block splits at a `%tid.x` comparison it does not
    /// reach): such a match counts as reduced.
    pub full: bool,
}

/// The launch kernel `f` is written for (module essay), or `None` when no rule gives one
/// other than `grid` × `block`. `directive`: `.reqntid` (`true`) or `.maxntid` (`false`)
/// dimensions.
pub fn infer(
    module: &ir::Module,
    f: &Function,
    directive: Option<([u32; 3], bool)>,
    grid: [u32; 3],
    block: [u32; 3],
) -> Option<KernelLaunch> {
    let differs = |k: KernelLaunch| (k.grid != grid || k.block != block).then_some(k);
    if let Some((dims, required)) = directive {
        let fits = block.iter().zip(&dims).all(|(b, d)| b <= d);
        let (block, name) = match required {
            true => (dims, ".reqntid"),
            false if fits => return None,
            false => (dims, ".maxntid"),
        };
        return differs(KernelLaunch {
            grid,
            block,
            why: format!("block {block:?} from {name}"),
            full: true,
        });
    }
    // A kernel no part of which depends on its CTA is written for one CTA (rule 4).
    let one_cta = !tells_ctas_apart(f);
    let kernel_grid = if one_cta { [1, 1, 1] } else { grid };
    if let Some(k) = shared_extent(module, f, kernel_grid, block) {
        return differs(k);
    }
    if writes_one_place(f) {
        return differs(KernelLaunch {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            why: "one thread: no store address depends on the thread or CTA index".into(),
            full: true,
        });
    }
    if one_cta {
        return differs(KernelLaunch {
            grid: [1, 1, 1],
            block,
            why: "one CTA: nothing depends on the CTA index".into(),
            full: true,
        });
    }
    None
}

/// Whether anything in `f` can tell its CTAs apart: `%ctaid`, `%nctaid`, `%smid`-like
/// registers, or a global atomic (work handed out through a counter spreads over CTAs).
fn tells_ctas_apart(f: &Function) -> bool {
    f.insts.values().any(|n| match &n.data {
        InstData::SpecialReg { reg } => !matches!(
            reg,
            SpecialReg::Tid(_)
                | SpecialReg::Ntid(_)
                | SpecialReg::LaneId
                | SpecialReg::WarpId
                | SpecialReg::LaneMask(_)
        ),
        InstData::Atomic { space, .. } => *space != Space::Shared,
        InstData::ExternCall { .. } | InstData::Collective { .. } => true,
        _ => false,
    })
}

/// The block `.reqntid` (`true`) or `.maxntid` (`false`) of a parsed kernel gives.
pub fn directive(perf: &[crate::ptx::ast::PerfDirective]) -> Option<([u32; 3], bool)> {
    use crate::ptx::ast::PerfDirective;
    let dims = |v: &[u32]| {
        let d = |k: usize| v.get(k).copied().unwrap_or(1).max(1);
        [d(0), d(1), d(2)]
    };
    perf.iter().find_map(|p| match p {
        PerfDirective::ReqNtid(v, _) => Some((dims(v), true)),
        PerfDirective::MaxNtid(v, _) => Some((dims(v), false)),
        _ => None,
    })
}

/// What an address term multiplies.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Term {
    Tid(Dim),
    Var(ir::GlobalVar),
    /// Anything else that is not a constant (a loop counter, a loaded index).
    Other,
}

fn iconst(f: &Function, v: Value) -> Option<i64> {
    match f.values[v].def {
        ValueDef::Result(inst, _) => match f.insts[inst].data {
            InstData::Iconst { imm, .. } => Some(imm as i64),
            _ => None,
        },
        ValueDef::Param(..) => None,
    }
}

/// The constant multiples of `%tid.x`/`%tid.y` and of shared variables' addresses in `v`.
fn terms(f: &Function, v: Value) -> Vec<(Term, i64)> {
    let mut out = Vec::new();
    let mut stack = vec![(v, 1i64)];
    let mut budget = WALK_BUDGET;
    while let Some((v, scale)) = stack.pop() {
        budget = match budget.checked_sub(1) {
            Some(b) => b,
            None => break,
        };
        let ValueDef::Result(inst, _) = f.values[v].def else {
            out.push((Term::Other, scale));
            continue;
        };
        let by = |c: Option<i64>| c.map(|c| scale.saturating_mul(c));
        // A product by a constant scales the other factor; any other product is a term.
        let product = |[a, b]: [Value; 2], stack: &mut Vec<(Value, i64)>, out: &mut Vec<_>| match (
            by(iconst(f, b)),
            by(iconst(f, a)),
        ) {
            (Some(s), _) => stack.push((a, s)),
            (None, Some(s)) => stack.push((b, s)),
            (None, None) => out.push((Term::Other, scale)),
        };
        match &f.insts[inst].data {
            InstData::SpecialReg {
                reg: SpecialReg::Tid(d),
            } => out.push((Term::Tid(*d), scale)),
            InstData::SymbolAddr { var, .. } => out.push((Term::Var(*var), scale)),
            InstData::Convert { arg, .. } | InstData::Cvta { arg, .. } => stack.push((*arg, scale)),
            InstData::Binary { op, args } => match op {
                BinaryOp::Add => stack.extend(args.iter().map(|&a| (a, scale))),
                BinaryOp::Sub => {
                    stack.push((args[0], scale));
                    stack.push((args[1], -scale));
                }
                BinaryOp::Mul => product(*args, &mut stack, &mut out),
                BinaryOp::Shl => {
                    let k = iconst(f, args[1]).filter(|k| (0..32).contains(k));
                    match by(k.map(|k| 1 << k)) {
                        Some(s) => stack.push((args[0], s)),
                        None => out.push((Term::Other, scale)),
                    }
                }
                _ => out.push((Term::Other, scale)),
            },
            InstData::MulWide { args, .. } => product(*args, &mut stack, &mut out),
            InstData::Iconst { .. } => {}
            _ => out.push((Term::Other, scale)),
        }
    }
    out
}

/// Rule 2 of the module essay.
fn shared_extent(
    module: &ir::Module,
    f: &Function,
    grid: [u32; 3],
    block: [u32; 3],
) -> Option<KernelLaunch> {
    let threads: u32 = block.iter().product();
    let reads_y = f.insts.values().any(|n| {
        matches!(
            n.data,
            InstData::SpecialReg {
                reg: SpecialReg::Tid(Dim::Y) | SpecialReg::Ntid(Dim::Y)
            }
        )
    });
    let mut bound = [u32::MAX; 2];
    let mut shown = String::new();
    for n in f.insts.values() {
        let addr = match &n.data {
            InstData::Load {
                space: Space::Shared | Space::Const,
                addr,
                ..
            }
            | InstData::Store {
                space: Space::Shared,
                addr,
                ..
            }
            | InstData::Atomic {
                space: Space::Shared,
                addr,
                ..
            } => *addr,
            _ => continue,
        };
        let t = terms(f, addr);
        let vars: Vec<ir::GlobalVar> = t
            .iter()
            .filter_map(|&(t, s)| match t {
                Term::Var(v) if s == 1 => Some(v),
                _ => None,
            })
            .collect();
        let [var] = vars[..] else { continue };
        let size = i64::from(module.vars[var].size);
        if size == 0 {
            continue; // dynamic shared memory: no extent
        }
        let coef = |d: Dim| -> i64 {
            t.iter()
                .filter(|(t, _)| *t == Term::Tid(d))
                .map(|&(_, s)| s)
                .sum()
        };
        let (cx, cy) = (coef(Dim::X), coef(Dim::Y));
        let mut limit = |k: usize, b: i64| {
            let b = u32::try_from(b.max(1)).unwrap_or(u32::MAX);
            if b < bound[k] {
                bound[k] = b;
                shown = module.vars[var].name.clone();
            }
        };
        match (cx > 0, cy > 0) {
            (true, true) if cy >= cx && cy % cx == 0 => {
                limit(0, cy / cx);
                limit(1, size / cy);
            }
            (true, true) if cx > cy && cx % cy == 0 => {
                limit(1, cx / cy);
                limit(0, size / cx);
            }
            (true, false) => limit(0, size / cx),
            (false, true) => limit(1, size / cy),
            _ => {}
        }
        // A row of another index (`a[i][tid.x]`, `i` a loop counter): the thread index
        // stays within the row.
        for (k, c) in [(0, cx), (1, cy)] {
            for &(_, o) in t.iter().filter(|(t, _)| *t == Term::Other) {
                if c > 0 && o > c && o % c == 0 && (k == 0 || cx == 0 || o > cy.max(cx)) {
                    limit(k, o / c);
                }
            }
        }
    }
    if bound == [u32::MAX; 2] {
        return None;
    }
    let mut x = bound[0].min(threads).min(MAX_BLOCK_THREADS);
    // A comparison of `%tid.x` with `c` at or past the extent's bound (lud's
    // `if (tid < 16) … else … a[tid - 16]`): the threads past `c` index the arrays again
    // from `tid - c`, so the block is `c` plus the bound. When that does not fit the default
    // block either, the launch leaves one side unrun and is not the full one.
    let splits = tid_x_thresholds(f);
    if let Some(c) = splits.iter().copied().filter(|&c| c >= x).max() {
        if c.saturating_add(x) <= threads.min(MAX_BLOCK_THREADS) {
            x += c;
        }
    }
    let full = splits.iter().all(|&c| c < x);
    let y = match (reads_y, bound[1]) {
        (false, _) => 1,
        (true, u32::MAX) => (threads / x).max(1),
        (true, b) => b,
    }
    .min(MAX_BLOCK_THREADS / x)
    .max(1);
    let block = [x, y, 1];
    Some(KernelLaunch {
        grid,
        block,
        why: match full {
            true => format!("block {block:?} from the extent of `{shown}` indexed by %tid"),
            false => format!(
                "block {block:?} from the extent of `{shown}` indexed by %tid, which leaves \
                 threads past a `%tid.x` comparison unrun"
            ),
        },
        full,
    })
}

/// Rule 3 of the module essay: no store address depends on which thread runs.
fn writes_one_place(f: &Function) -> bool {
    // Values that differ between threads (or CTAs), to a fixed point over block arguments.
    let mut varies = vec![false; f.values.len()];
    let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
    for n in f.insts.values() {
        let calls: Vec<&ir::BlockCall> = match &n.data {
            InstData::Jump { dest } => vec![dest],
            InstData::Brif {
                then_dest,
                else_dest,
                ..
            } => vec![then_dest, else_dest],
            _ => continue,
        };
        for c in calls {
            for (&p, &a) in f.blocks[c.block].params.iter().zip(&c.args) {
                incoming.entry(p).or_default().push(a);
            }
        }
    }
    let source = |d: &InstData| match d {
        InstData::SpecialReg { reg } => matches!(
            reg,
            SpecialReg::Tid(_)
                | SpecialReg::Ctaid(_)
                | SpecialReg::LaneId
                | SpecialReg::WarpId
                | SpecialReg::LaneMask(_)
        ),
        InstData::Atomic { .. } | InstData::Vote { .. } | InstData::Shfl { .. } => true,
        _ => false,
    };
    let mut changed = true;
    while changed {
        changed = false;
        for n in f.insts.values() {
            if n.results.iter().all(|r| varies[r.index()]) {
                continue;
            }
            if source(&n.data) || n.data.operands().iter().any(|a| varies[a.index()]) {
                for r in &n.results {
                    varies[r.index()] = true;
                }
                changed = true;
            }
        }
        for (p, args) in &incoming {
            if !varies[p.index()] && args.iter().any(|a| varies[a.index()]) {
                varies[p.index()] = true;
                changed = true;
            }
        }
    }
    if communicates(f) {
        return false;
    }
    let mut stores = 0;
    for n in f.insts.values() {
        match &n.data {
            InstData::Store { space, addr, .. } | InstData::Atomic { space, addr, .. }
                if matches!(space, Space::Global | Space::Shared | Space::Generic) =>
            {
                if varies[addr.index()] {
                    return false;
                }
                stores += 1;
            }
            // Writes this rule cannot see the address of.
            InstData::Surface { .. }
            | InstData::ExternCall { .. }
            | InstData::Collective { .. } => return false,
            _ => {}
        }
    }
    stores > 0
}

/// Whether `f` is written for threads that work together: it has an atomic (a counter or a
/// reduction many threads update), a barrier, or both stores to and loads from shared memory
/// (one thread hands values to another). Rule 3 does not apply to such a kernel, whatever its
/// store addresses: one thread would leave that code untested.
fn communicates(f: &Function) -> bool {
    let (mut shared_store, mut shared_load) = (false, false);
    for n in f.insts.values() {
        match &n.data {
            InstData::Atomic { .. }
            | InstData::Barrier
            | InstData::NamedBarrier { .. }
            | InstData::BarrierRed { .. }
            | InstData::BarrierReg { .. } => return true,
            InstData::Store {
                space: Space::Shared,
                ..
            } => shared_store = true,
            InstData::Load {
                space: Space::Shared,
                ..
            } => shared_load = true,
            _ => {}
        }
    }
    shared_store && shared_load
}

/// The constants `c` that `%tid.x` (directly or through conversions) is both compared with
/// and has subtracted from it: the threads are split at `c` into two groups, the second of
/// which indexes from `tid - c` (lud's `if (tid < 16) … else … a[tid - 16]`), so a block of
/// `c` threads or fewer leaves the second group's code unrun.
fn tid_x_thresholds(f: &Function) -> Vec<u32> {
    let is_tid_x = |mut v: Value| loop {
        let ValueDef::Result(inst, _) = f.values[v].def else {
            return false;
        };
        match &f.insts[inst].data {
            InstData::SpecialReg {
                reg: SpecialReg::Tid(Dim::X),
            } => return true,
            InstData::Convert { arg, .. } => v = *arg,
            _ => return false,
        }
    };
    let mut subtracted = Vec::new();
    for n in f.insts.values() {
        let (k, minus) = match &n.data {
            InstData::Binary {
                op: BinaryOp::Add,
                args: [a, b],
            } if is_tid_x(*a) => (iconst(f, *b), true),
            InstData::Binary {
                op: BinaryOp::Add,
                args: [a, b],
            } if is_tid_x(*b) => (iconst(f, *a), true),
            InstData::Binary {
                op: BinaryOp::Sub,
                args: [a, b],
            } if is_tid_x(*a) => (iconst(f, *b), false),
            _ => continue,
        };
        // `tid + k` with `k` negative, or `tid - k`: the threshold `|k|`, read as 32 bits.
        let k = k.map(|k| {
            if minus {
                -(k as i32 as i64)
            } else {
                k as i32 as i64
            }
        });
        if let Some(k) = k.filter(|&k| k > 0) {
            subtracted.push(k);
        }
    }
    let mut out = Vec::new();
    for n in f.insts.values() {
        let InstData::Icmp { cc, args: [a, b] } = &n.data else {
            continue;
        };
        let (c, cc) = match (is_tid_x(*a), is_tid_x(*b)) {
            (true, _) => (iconst(f, *b), *cc),
            (_, true) => (iconst(f, *a), swapped(*cc)),
            _ => continue,
        };
        // `tid < c` / `tid >= c` split at `c`; `tid <= c` / `tid > c` at `c + 1`.
        let split = match cc {
            IntCC::Slt | IntCC::Ult | IntCC::Sge | IntCC::Uge => c,
            IntCC::Sle | IntCC::Ule | IntCC::Sgt | IntCC::Ugt => c.map(|c| c + 1),
            IntCC::Eq | IntCC::Ne => None,
        };
        let split = split.filter(|c| subtracted.contains(c));
        if let Some(c) = split.and_then(|c| u32::try_from(c).ok()).filter(|&c| c > 0) {
            out.push(c);
        }
    }
    out
}

/// The condition `cc` with its operands swapped (`a < b` is `b > a`).
fn swapped(cc: IntCC) -> IntCC {
    match cc {
        IntCC::Slt => IntCC::Sgt,
        IntCC::Sgt => IntCC::Slt,
        IntCC::Sle => IntCC::Sge,
        IntCC::Sge => IntCC::Sle,
        IntCC::Ult => IntCC::Ugt,
        IntCC::Ugt => IntCC::Ult,
        IntCC::Ule => IntCC::Uge,
        IntCC::Uge => IntCC::Ule,
        IntCC::Eq | IntCC::Ne => cc,
    }
}
