//! Unrolling by four of single-block loops whose trip count is known only at run time
//! (`for (i = 0; i < n; i++)`), as ptxas 11.8 unrolls them, with ptxas's remainder: a
//! two-copy block, then the original loop.
//!
//! In: a verified [`Function`] after [`super::unroll`] (the loops with a small constant
//! trip count are gone) and [`super::simplify`]. Out: the same function, still verified, in
//! which every loop of the shape below runs four copies of its body per iteration while at
//! least four iterations are certainly left, two copies when two are, and its original body
//! for the last one.
//! [`unroll_runtime_loops`] reports how many loops it unrolled.
//!
//! Off by default (`--unroll-runtime` on `compile`, `verify` and `compare` turns it on,
//! [`crate::driver::Options::unroll_runtime`]). Measured (release, `leafold compare`, the
//! same build with and without it): the older corpus's hand-written step-1 loops gain, but
//! on NVVM's users' shape (corpus-nvcc) every kernel it changed lost: all were strided loops
//! (see "Strided loops") that `verify`'s launch runs 0 or 1 times a thread, where only the
//! remainder's compares and branches are paid. With those left alone (f384927's main,
//! on against off): corpus-nvcc no kernel's dynamic cycles change (10,770,912; one kernel
//! +46 static instructions), the older corpus 24,216,320 -> 23,891,275 (-1.34%, median
//! ratio to ptxas 0.9248 -> 0.9231, one kernel +4 cycles), cuda-apps 193,340 -> 193,205
//! (kmeans_assign); no kernel loses warps. Not worse anywhere, but no gain on NVVM's
//! code yet: the switch stays off until the default is changed with its snapshot suites.
//!
//! # What ptxas does (measured)
//!
//! Probes `for (i = 0; i < n; i++) acc = fma(acc, .., p[i])` with `w` chained `fma`s, `n`
//! a kernel parameter: ptxas unrolls the loop by four whatever the compare (`lt`, `le`,
//! `gt`, `ne`; signed or unsigned) as long as the body has at most [`MAX_BODY`]
//! instructions (`w` = 44 unrolls, 45 does not: a load, the `fma`s, the pointer's and the
//! counter's adds and the compare), and leaves a `.pragma "nounroll"` loop alone. Its
//! remainder is a cascade: a two-copy block when at least two iterations are left, then a
//! one-copy block. NVVM has often unrolled the loop by four already (gauss_rows: four taps
//! a trip); ptxas unrolls that loop by four again, 16 taps a trip.
//!
//! # Which loops
//!
//! A [`SingleBlockLoop`] `B` (not the entry block, not `nounroll`) whose body has at most
//! [`MAX_BODY`] instructions (constants and free float modifiers not counted), whose branch
//! is an `icmp` of `x` against a loop-invariant `bound` (a value `B` does not define), where
//! `x` is the next value `i + s` of a parameter `i` of `B` (`add i, s`, `add s, i` or
//! `sub i, -s`, `s` a constant), and whose "go on" condition is one that a counter moving
//! towards `bound` keeps until it reaches it: `x < bound` or `x <= bound` (signed or
//! unsigned) or `x != bound` for `s > 0`, the mirror images for `s < 0`. A compare of the
//! counter before its step (`while (i++ < n)`) is left alone, as ptxas leaves it (probed:
//! signed, unsigned and `!=`; its trip count overflows when `n` is the largest value). When
//! `B`'s values are read after the loop, its exit block must have `B` as its only way in
//! (else they could not be, in SSA). A body that ptxas computes partly in a subroutine it
//! calls ([`calls_subroutine`]: `div.rn.f32`, `sqrt.rn`, `div.u64` ..) is left alone, as
//! ptxas leaves it (probed): unrolled, each copy would pay the slow path's pinned registers
//! and its branch (sdk2.2 bisectKernelLarge's Sturm-count loop, a `div.rn.f32` a trip, lost
//! 6% of its cycles to the copies).
//!
//! # Loops NVVM already unrolled
//!
//! NVVM unrolls most counted loops by four itself (a `.pragma "nounroll"` prologue for
//! `n % 4` trips, then a loop of four copies whose counter steps by 4). ptxas unrolls that
//! loop by four again, 16 copies a trip; we do not. A loop whose counter's step is a
//! multiple of four and whose body makes at least four accesses of one space and type
//! through one address at distinct offsets (the copies' `[p - 8]`, `[p - 4]`, `[p]`,
//! `[p + 4]`: [`already_unrolled`]) is left as it is. Trade-off, measured: ptxas issues
//! the 16 copies' independent loads (a sparse row's column indices) ahead of their
//! dependent ones; our scheduler does not hoist loads across the copies, so the copies'
//! gather chains serialise and the loop got slower (cuda-apps spmv_csr_scalar 14.8k ->
//! 20.0k cycles, corpus-nvcc's lud and CUB upsweep loops). Leaving them costs the few
//! NVVM-unrolled loops where a fourth copy would have helped (gauss_rows, kmeans_assign).
//! Loops of step 1 (the older corpus's hand-written kernels) are unrolled as before.
//!
//! # Strided loops
//!
//! A counter that steps by [`MIN_STRIDE`] (a warp's width) or more is a strided loop
//! (`for (i = tid; i < n; i += blockDim.x)`, CUB's `i += 160` tile tails, a reduction's
//! `w += 32` over the warps of a block): the threads share the range, so each runs the
//! range divided by the step, often fewer than four trips, where the unrolled loop only
//! adds its guard, its remainder's compare and two taken branches. ptxas unrolls them all
//! the same; we leave them alone. Trade-off, measured (release, `leafold compare`, on
//! against off): unrolled, corpus-nvcc's CUB radix upsweep kernels (step 160, 0 or 1
//! trips per thread under `verify`'s launch) lost 330..490 cycles each, mergeHistogram64
//! (step 256) 244 and simpleCudaGraphs' reduce (step 32) 166, which made the pass a loss
//! on corpus-nvcc; left alone, the older corpus gives up most of the gain of sdk2.2
//! radixsort's block-strided loops (step 192 and 64, 16 trips each): with them unrolled,
//! perf17 measured RadixPrefixSum -21k and RadixAddOffsets -10k cycles; now -5.9k (its
//! step-1 loops) and 0. Loops of step 1 (the older corpus's hand-written kernels) are
//! unaffected.
//!
//! # The rewrite
//!
//! ```text
//! P:  .. g0 = guard(i0); brif g0, U(init..), R(init..)
//! U(..): four copies of B's body, each reading the previous one's back arguments
//!        g = guard(i4); brif g, U(back4..), T
//! T:  brif c4, R(back4..), X(exit4..)          (c4: the fourth copy's compare)
//! R(..): c1 = (i + s) cc bound; brif c1, D(..), B(..)
//! D(..): two copies of B's body; brif c2, B(back2..), X(exit2..)
//! B(..): the original loop, unchanged: the last iteration
//! X(.., escaping..): the exit, with a parameter for each value of B read after the loop
//! ```
//!
//! ptxas's remainder (probed, `/tmp/p15/probe/gen.py 1`): `n - i > 1` enters a two-copy
//! block, then a predicate "an iteration is left" guards a one-copy block that falls
//! through to the exit. Ours is the same cascade: `R` asks whether the first copy's compare
//! would go on (computed ahead from the counter alone, so it is exact, wrap-around
//! included), `D` runs two copies, and `B`, entered only when an iteration is due, runs
//! the last one; its loop branch is not taken then. Where the guard of `U` cannot tell
//! (a counter about to wrap), `B` loops on as long as needed, so the rewrite stays exact.
//! Short trip counts (sparse rows of 0 to 3 entries) pay `P`'s guard and `R`'s compare,
//! no loop branch taken back.
//!
//! `guard(i)` holds when the three compares inside the four copies certainly say "go on":
//! with `m = 3s` (the third copy's next value), `i + m` does not wrap in the compare's
//! signedness and already satisfies the compare (`i + m < bound`); the counter moves
//! monotonically by `s` without wrapping, so every value before it does too. It is
//! computed as `ok && i < bound - m`, with `ok` (`bound - m` does not wrap) and `bound - m`
//! computed once in `P`, so a trip pays one compare for it (`ISETP .. AND ok`). It is a sufficient condition, so the rewrite is exact for
//! every trip count, wrap-around included: when the guard cannot tell (the last three
//! iterations, or a counter about to wrap), the remainder (`R`) runs. `guard(i4)` implies the
//! fourth copy's compare (of `i4` itself) goes on as well, so `U` branches back on the
//! guard alone. ptxas guards its own copies with one signed compare (and, for `!=`, sends
//! a counter that starts past its bound to the plain loop).
//!
//! Trade-off: against ptxas's exact trip count, the guard is two compares and an add a
//! trip instead of one compare; in exchange the rewrite needs no trip count computed at
//! run time, which is where wrap-around makes exactness hard. The copies' loads
//! are independent of each other, so the scheduler overlaps four of them (the point of
//! unrolling loops of global loads); the copies' pointer bumps fold into address offsets
//! as the full unroller's do ([`super::unroll`]'s `copy_inst`).
//!
//! # Registers and occupancy
//!
//! Four copies' loads in flight at once need four copies' registers, and the hoisting
//! (`lower::hoist`) moves them further up: fir_double (a window of f64 taps) went from 32
//! registers to 62, gemv_tiled from 26 to 46, each losing warps per SM. ptxas keeps both
//! at full occupancy (28 and 26 registers) with its loops unrolled: it schedules the
//! copies' loads less eagerly. Rather than a second, weaker hoisting rule for unrolled
//! loops, the driver (`driver::compile_kernel`) compiles a kernel whose unrolled code
//! spills or falls below the warps it wants once more from the IR prepared without this
//! pass, and keeps that where it spills less or keeps more warps resident. Trade-off: the
//! occupancy is never lower than without the unrolling, at the price of one more compile
//! for those kernels and of their unrolling's latency hiding (gemv_tiled keeps its 64
//! warps and gives up the unrolled loop's 20% fewer cycles); a kernel whose occupancy is
//! held by shared memory or its block size keeps the unrolled code.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use smallvec::SmallVec;

use super::float::{FloatBinOp, FloatOp};
use super::unroll::{
    copy_inst, def_in, edges, iconst, lookup, single_block_loop, terminator, SingleBlockLoop,
};
use super::{
    BinaryOp, Block, BlockCall, BlockData, Function, Inst, InstData, InstNode, IntCC, Space, Type,
    Value, ValueData, ValueDef,
};

/// How many copies of the body an unrolled iteration runs (ptxas 11.8's factor).
pub const FACTOR: usize = 4;

/// The largest body ptxas 11.8 unrolls at run time, in instructions as [`body_size`]
/// counts them (measured: a load, 44 `fma`s, two adds and a compare unroll; 45 `fma`s
/// do not).
pub const MAX_BODY: usize = 48;

/// The largest step whose multiples the guard computes (beyond, the loop is left alone).
const MAX_STEP: i64 = 1 << 20;

/// The smallest counter step (in absolute value) of a loop left alone as a strided loop:
/// one whose range the threads (or warps) of a CTA or grid share, each running the
/// range divided by the step (see the module documentation, "Strided loops").
const MIN_STRIDE: u64 = 32;

/// A loop [`find`] chose, and how its counter is tested.
struct Candidate {
    block: Block,
    shape: SingleBlockLoop,
    /// The counter: index of `B`'s parameter.
    param: usize,
    /// The counter's step.
    step: i64,
    /// The "go on" condition, as `x cc bound`.
    cc: IntCC,
    bound: Value,
    /// Values of `B` read in other blocks.
    escaping: Vec<Value>,
}

/// Unroll every qualifying loop of `f` (see the module documentation); returns how many.
pub fn unroll_runtime_loops(f: &mut Function) -> usize {
    let mut done: HashSet<Block> = HashSet::default();
    let mut n = 0;
    while let Some(c) = find(f, &done) {
        let made = rewrite(f, &c);
        done.insert(c.block);
        done.extend(made);
        n += 1;
    }
    n
}

/// The body's size as ptxas weighs it: every instruction but the terminator, the constants
/// and the free float modifiers (`fneg`, `fabs`).
fn body_size(f: &Function, b: Block) -> usize {
    let insts = &f.blocks[b].insts;
    insts[..insts.len() - 1]
        .iter()
        .filter(|&&i| {
            !matches!(
                f.insts[i].data,
                InstData::Iconst { .. }
                    | InstData::Fconst { .. }
                    | InstData::Float {
                        op: FloatOp::Unary { .. },
                        ..
                    }
            )
        })
        .count()
}

/// Whether ptxas 11.8 computes instruction `i` in a subroutine it calls (`CAL`): the
/// correctly rounded divisions, reciprocals and square roots (`div.rn`/`rz`/.. and
/// `rcp.rn` of f32 and f64, `sqrt.rn` of both), and the 64-bit integer division and
/// remainder. Probed: a loop holding any of them is not unrolled at run time (its body is
/// no longer one block once ptxas has expanded the call's fast path and branch).
fn calls_subroutine(f: &Function, i: Inst) -> bool {
    match &f.insts[i].data {
        InstData::Float { op, .. } => matches!(
            op,
            FloatOp::Binary {
                op: FloatBinOp::Div,
                ..
            } | FloatOp::Sqrt { .. }
        ),
        InstData::Binary {
            op: BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS,
            args,
        } => f.values[args[0]].ty.bits() == 64,
        _ => false,
    }
}

/// Whether loop `b`, whose counter steps by `step`, is one NVVM has already unrolled by
/// four (or more): the step is a multiple of [`FACTOR`] and the body makes at least
/// [`FACTOR`] accesses (loads or stores) of one state space and type through one address
/// value at distinct offsets, the copies' `[p - 8]`, `[p - 4]`, `[p]`, `[p + 4]`. See the
/// module documentation ("Loops NVVM already unrolled") for why they are left alone.
fn already_unrolled(f: &Function, b: Block, step: i64) -> bool {
    if step % FACTOR as i64 != 0 {
        return false;
    }
    let mut offsets: HashMap<(Value, Space, Type), HashSet<i32>> = HashMap::default();
    for &i in &f.blocks[b].insts {
        let key = match f.insts[i].data {
            InstData::Load {
                space,
                ty,
                addr,
                offset,
                ..
            }
            | InstData::Store {
                space,
                ty,
                addr,
                offset,
                ..
            } => Some(((addr, space, ty), offset)),
            _ => None,
        };
        if let Some((k, offset)) = key {
            offsets.entry(k).or_default().insert(offset);
        }
    }
    offsets.values().any(|o| o.len() >= FACTOR)
}

/// The first loop of the layout that qualifies.
fn find(f: &Function, done: &HashSet<Block>) -> Option<Candidate> {
    let entry = f.entry_block()?;
    let preds = edges(f);
    f.layout
        .iter()
        .filter(|&&b| b != entry && !f.nounroll[b] && !done.contains(&b))
        .find_map(|&b| candidate(f, b, &preds))
}

/// The step `s` when `next` is `param + s` computed in `b`.
fn step_of(f: &Function, b: Block, param: Value, next: Value) -> Option<i64> {
    let i = def_in(f, next, b)?;
    let InstData::Binary { op, args: [x, y] } = f.insts[i].data else {
        return None;
    };
    let bits = f.values[param].ty.bits();
    let signed = |k: u64| ((k << (64 - bits)) as i64) >> (64 - bits);
    let s = match op {
        BinaryOp::Add if x == param => signed(iconst(f, y)?),
        BinaryOp::Add if y == param => signed(iconst(f, x)?),
        BinaryOp::Sub if x == param => signed(iconst(f, y)?).checked_neg()?,
        _ => return None,
    };
    (s != 0 && s.abs() <= MAX_STEP).then_some(s)
}

/// Loop `b` when it qualifies (see the module documentation).
fn candidate(f: &Function, b: Block, preds: &HashMap<Block, (usize, Block)>) -> Option<Candidate> {
    let shape = single_block_loop(f, b, preds)?;
    if body_size(f, b) > MAX_BODY || f.blocks[b].insts.iter().any(|&i| calls_subroutine(f, i)) {
        return None;
    }
    let cmp = def_in(f, shape.cond, b)?;
    let InstData::Icmp { cc, args: [a0, a1] } = f.insts[cmp].data else {
        return None;
    };
    let go_on = if shape.back_is_then { cc } else { cc.negated() };
    let params = &f.blocks[b].params;
    // Invariant: defined outside the loop, or a constant (copied to the preheader).
    let invariant = |v: Value| match f.values[v].def {
        ValueDef::Result(i, _) => f.insts[i].block != b || iconst(f, v).is_some(),
        ValueDef::Param(pb, _) => pb != b,
    };
    // `x` on the left: the counter (or its next value) against an invariant bound.
    let (x, bound, cc) = if invariant(a1) {
        (a0, a1, go_on)
    } else if invariant(a0) {
        (a1, a0, go_on.swapped())
    } else {
        return None;
    };
    let param = (0..params.len()).find(|&k| x == shape.back.args[k])?;
    let ty = f.values[params[param]].ty;
    if !ty.is_int() {
        return None;
    }
    let step = step_of(f, b, params[param], shape.back.args[param])?;
    if step.unsigned_abs() >= MIN_STRIDE || already_unrolled(f, b, step) {
        return None;
    }
    let towards = if step > 0 {
        matches!(
            cc,
            IntCC::Slt | IntCC::Sle | IntCC::Ult | IntCC::Ule | IntCC::Ne
        )
    } else {
        matches!(
            cc,
            IntCC::Sgt | IntCC::Sge | IntCC::Ugt | IntCC::Uge | IntCC::Ne
        )
    };
    if !towards {
        return None;
    }
    let escaping = escaping(f, b);
    if !escaping.is_empty() && preds.get(&shape.exit.block).map(|e| e.0) != Some(1) {
        return None;
    }
    Some(Candidate {
        block: b,
        shape,
        param,
        step,
        cc,
        bound,
        escaping,
    })
}

/// The parameters of `b` and results of its instructions that instructions of other blocks
/// read (after the rewrite, `b` no longer dominates them: they come from `U` too).
fn escaping(f: &Function, b: Block) -> Vec<Value> {
    let defined: HashSet<Value> = f.blocks[b]
        .insts
        .iter()
        .flat_map(|&i| f.insts[i].results.iter().copied())
        .chain(f.blocks[b].params.iter().copied())
        .collect();
    let mut out: Vec<Value> = Vec::new();
    for &x in f.layout.iter().filter(|&&x| x != b) {
        for &i in &f.blocks[x].insts {
            for v in f.insts[i].data.operands() {
                if defined.contains(&v) && !out.contains(&v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Append `data`, with one result of type `ty`, to block `b`; its result.
fn push(f: &mut Function, b: Block, data: InstData, ty: Type, at: Inst) -> Value {
    let inst = f.insts.push(InstNode {
        data,
        results: SmallVec::new(),
        block: b,
    });
    let v = f.values.push(ValueData {
        ty,
        def: ValueDef::Result(inst, 0),
    });
    f.insts[inst].results.push(v);
    f.srclocs[inst] = f.srclocs[at];
    f.blocks[b].insts.push(inst);
    v
}

/// Append the constant `imm` (wrapped to `ty`) to block `b`; its value.
fn push_iconst(f: &mut Function, b: Block, ty: Type, imm: i128, at: Inst) -> Value {
    let imm = imm as u64 & ty.mask();
    push(f, b, InstData::Iconst { ty, imm }, ty, at)
}

/// Append `icmp cc, x, y` to block `b`; its predicate.
fn push_icmp(f: &mut Function, b: Block, cc: IntCC, args: [Value; 2], at: Inst) -> Value {
    push(f, b, InstData::Icmp { cc, args }, Type::Pred, at)
}

/// Append `op x, y` of type `ty` to block `b`; its result.
fn push_binary(
    f: &mut Function,
    b: Block,
    op: BinaryOp,
    args: [Value; 2],
    ty: Type,
    at: Inst,
) -> Value {
    push(f, b, InstData::Binary { op, args }, ty, at)
}

/// The loop-invariant halves of the guard, computed once in the preheader `p`: whether
/// `bound - m` does not wrap (`ok`), and `bound - m` itself (`limit`).
struct GuardParts {
    ok: Value,
    limit: Value,
}

/// Append to the preheader `p` the guard's invariant halves ([`GuardParts`]) for `bound`
/// (the loop's, or its copy in `p` when it is a constant of the loop).
fn guard_parts(f: &mut Function, p: Block, c: &Candidate, bound: Value, at: Inst) -> GuardParts {
    let ty = f.values[bound].ty;
    let bits = ty.bits();
    let m = 3 * c.step as i128;
    let unsigned = matches!(c.cc, IntCC::Ult | IntCC::Ule | IntCC::Ugt | IntCC::Uge);
    let (min, max) = if unsigned {
        (0i128, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    // `bound - m` does not wrap: `bound >= MIN + m` (counting up), `bound <= MAX + m` (down).
    let (edge, cc) = match (m > 0, unsigned) {
        (true, false) => (min + m, IntCC::Sge),
        (true, true) => (min + m, IntCC::Uge),
        (false, false) => (max + m, IntCC::Sle),
        (false, true) => (max + m, IntCC::Ule),
    };
    let edge = push_iconst(f, p, ty, edge, at);
    let ok = push_icmp(f, p, cc, [bound, edge], at);
    let m = push_iconst(f, p, ty, m, at);
    let limit = push_binary(f, p, BinaryOp::Sub, [bound, m], ty, at);
    GuardParts { ok, limit }
}

/// Append to block `b` the guard of counter value `i`: `i + m` does not wrap and already
/// satisfies the compare (see the module documentation), computed as `ok && i cc limit`
/// from [`GuardParts`]: `i + m < bound` without wrapping is `i < bound - m` when `bound - m`
/// does not wrap, and impossible when it does (and likewise for the other compares); the
/// predicate.
fn guard(
    f: &mut Function,
    b: Block,
    c: &Candidate,
    i: Value,
    parts: &GuardParts,
    at: Inst,
) -> Value {
    let cc = match c.cc {
        IntCC::Ne if c.step > 0 => IntCC::Slt,
        IntCC::Ne => IntCC::Sgt,
        cc => cc,
    };
    let go_on = push_icmp(f, b, cc, [i, parts.limit], at);
    push_binary(f, b, BinaryOp::And, [parts.ok, go_on], Type::Pred, at)
}

/// A new block with parameters of the types of `like`'s.
fn new_block(f: &mut Function, like: &[Value]) -> Block {
    let b = f.blocks.push(BlockData::default());
    for (k, &p) in like.iter().enumerate() {
        let v = f.values.push(ValueData {
            ty: f.values[p].ty,
            def: ValueDef::Param(b, k),
        });
        f.value_names[v] = f.value_names[p];
        f.blocks[b].params.push(v);
    }
    b
}

/// Append `brif cond, then_dest, else_dest` to block `b`.
fn push_brif(f: &mut Function, b: Block, cond: Value, dests: [BlockCall; 2], at: Inst) {
    let [then_dest, else_dest] = dests;
    let inst = f.insts.push(InstNode {
        data: InstData::Brif {
            cond,
            then_dest,
            else_dest,
        },
        results: SmallVec::new(),
        block: b,
    });
    f.srclocs[inst] = f.srclocs[at];
    f.blocks[b].insts.push(inst);
}

/// A new block with `n` copies of `body` (the instructions of loop `c`, whose parameters
/// are `params`), each reading the previous one's back arguments; the block and the map
/// from `c`'s values to the last copy's.
fn copies(
    f: &mut Function,
    c: &Candidate,
    params: &[Value],
    body: &[Inst],
    n: usize,
) -> (Block, HashMap<Value, Value>) {
    let blk = new_block(f, params);
    let mut map: HashMap<Value, Value> = params
        .iter()
        .copied()
        .zip(f.blocks[blk].params.clone())
        .collect();
    for k in 0..n {
        if k > 0 {
            let next: Vec<Value> = c.shape.back.args.iter().map(|&v| lookup(&map, v)).collect();
            map.extend(params.iter().copied().zip(next));
        }
        for &i in body {
            copy_inst(f, i, blk, &mut map);
        }
    }
    (blk, map)
}

/// Append to `blk` (whose last copy of loop `c` `map` describes) the last copy's own
/// decision: `brif` to `rest` with its back arguments, or to the exit with its exit
/// arguments and the escaping values.
fn leave(
    f: &mut Function,
    c: &Candidate,
    blk: Block,
    map: &HashMap<Value, Value>,
    rest: Block,
    term: Inst,
) {
    let shape = &c.shape;
    let mut exit = BlockCall {
        block: shape.exit.block,
        args: shape.exit.args.iter().map(|&v| lookup(map, v)).collect(),
    };
    exit.args.extend(c.escaping.iter().map(|&v| lookup(map, v)));
    let rest = BlockCall {
        block: rest,
        args: shape.back.args.iter().map(|&v| lookup(map, v)).collect(),
    };
    let dests = if shape.back_is_then {
        [rest, exit]
    } else {
        [exit, rest]
    };
    push_brif(f, blk, lookup(map, shape.cond), dests, term);
}

/// A jump to `block` with the parameters of `from` as arguments.
fn pass_params(f: &Function, from: Block, block: Block) -> BlockCall {
    BlockCall {
        block,
        args: f.blocks[from].params.iter().copied().collect(),
    }
}

/// Rewrite loop `c` as the module documentation shows; returns the blocks made (`U`, `T`,
/// `R`, `D`).
fn rewrite(f: &mut Function, c: &Candidate) -> [Block; 4] {
    let b = c.block;
    let shape = &c.shape;
    let term = terminator(f, b).expect("a terminator");
    let params = f.blocks[b].params.clone();
    let body: Vec<Inst> = f.blocks[b].insts[..f.blocks[b].insts.len() - 1].to_vec();

    // U: four copies, each reading the previous one's back arguments.
    let (u, map) = copies(f, c, &params, &body, FACTOR);
    let back4: SmallVec<[Value; 4]> = shape.back.args.iter().map(|&v| lookup(&map, v)).collect();
    // The guard's invariant halves go to the preheader, before its jump (taken off below).
    let p = shape.preheader;
    let jump = f.blocks[p].insts.pop().expect("the preheader's jump");
    let bound = match iconst(f, c.bound) {
        Some(imm) if def_in(f, c.bound, b).is_some() => {
            let ty = f.values[c.bound].ty;
            push(f, p, InstData::Iconst { ty, imm }, ty, jump)
        }
        _ => c.bound,
    };
    let parts = guard_parts(f, p, c, bound, jump);
    let again = guard(f, u, c, back4[c.param], &parts, term);

    // R: at least two iterations left (the first copy's compare, computed ahead: exact)
    // go to D, else to the original loop.
    let r = new_block(f, &params);
    let counter = f.blocks[r].params[c.param];
    let ty = f.values[counter].ty;
    let step = push_iconst(f, r, ty, c.step.into(), term);
    let next = push_binary(f, r, BinaryOp::Add, [counter, step], ty, term);
    let two = push_icmp(f, r, c.cc, [next, bound], term);
    // D: two copies, then the second one's compare decides between the loop and the exit.
    let (d, map2) = copies(f, c, &params, &body, 2);
    leave(f, c, d, &map2, b, term);
    let (to_d, to_b) = (pass_params(f, r, d), pass_params(f, r, b));
    push_brif(f, r, two, [to_d, to_b], term);

    // T: the fourth compare decides between the remainder and the exit.
    let t = f.blocks.push(BlockData::default());
    push_brif(
        f,
        u,
        again,
        [
            BlockCall {
                block: u,
                args: back4,
            },
            BlockCall {
                block: t,
                args: SmallVec::new(),
            },
        ],
        term,
    );
    leave(f, c, t, &map, r, term);

    // P: enter U when the guard holds, else the remainder.
    let g0 = guard(f, p, c, shape.init.args[c.param], &parts, jump);
    push_brif(
        f,
        p,
        g0,
        [
            BlockCall {
                block: u,
                args: shape.init.args.clone(),
            },
            BlockCall {
                block: r,
                args: shape.init.args.clone(),
            },
        ],
        jump,
    );
    f.insts[jump].data = InstData::Iconst {
        ty: Type::I32,
        imm: 0,
    };

    // X: a parameter for each value of B read after the loop.
    if !c.escaping.is_empty() {
        let x = shape.exit.block;
        let mut rename: HashMap<Value, Value> = HashMap::default();
        for &v in &c.escaping {
            let k = f.blocks[x].params.len();
            let param = f.values.push(ValueData {
                ty: f.values[v].ty,
                def: ValueDef::Param(x, k),
            });
            f.value_names[param] = f.value_names[v];
            f.blocks[x].params.push(param);
            rename.insert(v, param);
        }
        for &blk in f.layout.iter().filter(|&&blk| blk != b) {
            for &i in &f.blocks[blk].insts {
                f.insts[i].data.map_operands(|v| lookup(&rename, v));
            }
        }
        if let InstData::Brif {
            then_dest,
            else_dest,
            ..
        } = &mut f.insts[term].data
        {
            let exit = if then_dest.block == x {
                then_dest
            } else {
                else_dest
            };
            exit.args.extend(c.escaping.iter().copied());
        }
    }

    let at = f
        .layout
        .iter()
        .position(|&x| x == b)
        .expect("in the layout");
    f.layout.splice(at..at, [u, t, r, d]);
    [u, t, r, d]
}
