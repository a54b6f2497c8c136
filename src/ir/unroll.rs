//! Full unrolling of single-block loops with a constant trip count, as ptxas 11.8 does for
//! NVVM's copy and initialisation loops (`for (i = 0; i < 35; i++) local[i] = global[i];`)
//! and for small windows walked by float counters (`for (float i = -3; i <= 3; i++)`,
//! imageDenoising).
//!
//! In: a verified [`Function`], after [`super::simplify`] (so bounds and steps are
//! constants). Out: the same function, still verified, in which every loop of the shape
//! below whose trip count is known and small enough is replaced by that many copies of its
//! body, straight-line, at the end of the block that entered it. [`unroll_loops`] reports how
//! many loops it unrolled.
//!
//! # Which loops
//!
//! A block `B` (not the entry, not marked `.pragma "nounroll"`, [`Function::nounroll`]) that
//! ends in `brif c, B(back..), X(exit..)` (or with the two targets the other way round) and
//! that exactly one other branch reaches, a `jump B(init..)` at the end of its preheader `P`.
//! Among `B`'s parameters one is an induction variable `i`: its initial argument is a
//! constant, its back argument is an integer `add`/`sub` or a float `add`/`sub` computed in
//! `B` from `i` and constants, and `c` is an `icmp` or float compare defined in `B` of `i`
//! or of its next value against a constant. The trip count is found by running the
//! induction variable through the interpreter's own operations ([`super::eval::pure`],
//! `FloatOp::eval`: wrap-around and float rounding included), so it is exactly what
//! `ir::eval` would execute; a float counter whose steps are inexact is counted as exactly
//! as an integer one. A loop that does not leave within [`MAX_TRIPS`] iterations is left
//! alone.
//!
//! # How many iterations
//!
//! [`FULL_UNROLL`] holds ptxas's own limits, measured on probes: the larger the body, the
//! fewer iterations (1492 of a one-`fma` body, 6 of a 64-`fma` one). A nest is judged as
//! ptxas judges it: once an inner loop is unrolled, the outer loop counts its innermost
//! iterations (outer trips times inner trips) and the instructions each of them costs (the
//! outer body divided by the inner trips), so the 7x7 window of imageDenoising unrolls
//! fully, as in ptxas, while a 7x7x7x7 nest keeps its two outer loops.
//!
//! Trade-off: each unrolled loop trades code size (the body `trips` times) for the loop's
//! per-iteration overhead (the counter's add, compare and branch, a taken branch's refetch)
//! and for the scheduler's freedom to overlap the iterations' loads, which is where the
//! time goes in these loops (a texture or global load per iteration). Following ptxas's
//! limits keeps the code no larger than ptxas's.
//!
//! # The rewrite
//!
//! `P`'s `jump B(init..)` is replaced by `trips` copies of `B`'s instructions (the terminator
//! excepted), each reading the previous copy's back arguments where `B` read its parameters,
//! followed by `jump X(exit..)` with the last copy's exit arguments. Uses of `B`'s values in
//! other blocks (which `B` dominated) read the last copy's. `B` leaves the layout. A copied
//! `add x, k` whose `x` is itself a copied or original `add y, k'` (`k`, `k'` constants) is
//! emitted as `add y, k + k'`, so the pointer bumps of the copies become one base plus
//! constant offsets that selection folds into the address (`LDG [R+0x8]`) rather than a
//! chain of dependent 64-bit adds; the induction variable's integer copies fold to constants
//! in the `simplify` that follows, its float copies (and float operations of constants only,
//! `i * i`) here ([`fold_float`]). When the jump to `X` is then `X`'s only way in, `X` joins
//! `P` (its parameters read as the arguments), so the copies and the code after the loop
//! are one block for the scheduler.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use smallvec::SmallVec;

use super::eval;
use super::float::{FloatBinOp, FloatOp};
use super::{
    BinaryOp, Block, BlockCall, Function, Inst, InstData, InstNode, Value, ValueData, ValueDef,
};

/// The most iterations a loop may have to be unrolled (ptxas 11.8 unrolls a one-load,
/// one-`fma` body 1492 times; see [`FULL_UNROLL`]).
pub const MAX_TRIPS: u64 = 1536;

/// How many iterations ptxas 11.8 (`-O3`, sm_50) unrolls fully, by body size: `(w, n)` means
/// a body of `w` instructions (as [`body_size`] counts them) is unrolled when it runs at
/// most `n` times. Measured with single-block probes (`for (i = 0; i < n; i++) acc =
/// fma(acc, .., p[i])`: a load, `w - 2` chained `fma`s and the pointer's bump; the counter's
/// add and compare fold away), the largest `n` ptxas still unrolled for each `w`; the
/// operation does not matter (`add`, `mul` and `fma` bodies stop at the same `n`).
///
/// Trade-off: the table is ptxas's own, so the code grows as ptxas's does (up to about
/// 3000 instructions for the smallest bodies) and loses each iteration's counter, compare
/// and taken branch, and lets the scheduler overlap the iterations' loads (texture and
/// global latencies dominate these loops). Larger bodies unroll fewer times: the per-
/// iteration overhead is a smaller share of the work and the code would outgrow the
/// instruction cache. Registers: the copies' values live no longer than the loop's did,
/// except where the scheduler hoists loads ahead, which it bounds itself.
pub const FULL_UNROLL: [(usize, u64); 12] = [
    (3, 1492),
    (4, 919),
    (5, 642),
    (6, 472),
    (8, 285),
    (10, 192),
    (14, 99),
    (18, 63),
    (26, 32),
    (34, 20),
    (50, 9),
    (66, 6),
];

/// The most iterations [`FULL_UNROLL`] allows a body of `w` instructions: between two rows,
/// geometric interpolation (ptxas's limit falls smoothly, about as `w^-1.7`); below the
/// first row its limit, above the last none.
pub fn max_full_trips(w: usize) -> u64 {
    let (first, last) = (FULL_UNROLL[0], FULL_UNROLL[FULL_UNROLL.len() - 1]);
    if w <= first.0 {
        return first.1;
    }
    if w > last.0 {
        return 0;
    }
    let k = FULL_UNROLL
        .iter()
        .position(|&(size, _)| w <= size)
        .unwrap_or(0);
    let ((w0, n0), (w1, n1)) = (FULL_UNROLL[k - 1], FULL_UNROLL[k]);
    let t = (w - w0) as f64 / (w1 - w0) as f64;
    (n0 as f64 * (n1 as f64 / n0 as f64).powf(t)).floor() as u64
}

/// The size of loop `b`'s body as ptxas weighs it: its instructions but its terminator,
/// constants, free operand modifiers (`fneg`, `fabs`: SASS source modifiers) and the
/// instructions that compute from constants and induction variables alone (the counter's
/// step and compare, `i * i`): those fold to constants once the loop is unrolled. A
/// parameter counts as an induction variable when its initial argument (`init`) is a
/// constant and its back argument (`back`) is computed so (found by iterating to a fixed
/// point from "every parameter with a constant start").
fn body_size(f: &Function, b: Block, init: &[Value], back: &[Value]) -> usize {
    let params = &f.blocks[b].params;
    let body = &f.blocks[b].insts[..f.blocks[b].insts.len() - 1];
    let mut ivs: Vec<bool> = init.iter().map(|&v| constant(f, v).is_some()).collect();
    loop {
        let mut folds: HashSet<Value> = HashSet::default();
        for (k, &p) in params.iter().enumerate() {
            if ivs[k] {
                folds.insert(p);
            }
        }
        let mut size = 0;
        for &i in body {
            let data = &f.insts[i].data;
            let pure = matches!(
                data,
                InstData::Binary { .. } | InstData::Icmp { .. } | InstData::Select { .. }
            ) || matches!(data, InstData::Float { op, .. } if !matches!(op, FloatOp::Approx { .. }));
            let folded = pure
                && data
                    .operands()
                    .iter()
                    .all(|&v| folds.contains(&v) || constant(f, v).is_some());
            if folded {
                for &r in &f.insts[i].results {
                    folds.insert(r);
                }
            }
            let free = matches!(data, InstData::Iconst { .. } | InstData::Fconst { .. })
                || matches!(
                    data,
                    InstData::Float {
                        op: FloatOp::Unary { .. },
                        ..
                    }
                );
            if !folded && !free {
                size += 1;
            }
        }
        let next: Vec<bool> = (0..params.len())
            .map(|k| ivs[k] && (folds.contains(&back[k]) || constant(f, back[k]).is_some()))
            .collect();
        if next == ivs {
            return size;
        }
        ivs = next;
    }
}

/// What [`unroll_loops`] did to one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Loops replaced by straight-line copies.
    pub loops: usize,
    /// Instructions copied (body size times trip count, constants included).
    pub copied: usize,
}

/// A loop found by [`find`]: the block, its preheader, its trip count, and how many
/// innermost iterations the unrolled code stands for (`trips` times those of loops already
/// unrolled into the body).
struct Candidate {
    block: Block,
    preheader: Block,
    trips: u64,
    total: u64,
}

/// Unroll every qualifying loop of `f` (see the module documentation).
pub fn unroll_loops(f: &mut Function) -> Stats {
    let mut stats = Stats::default();
    // For each block that received copies, the most innermost iterations they stand for.
    let mut inner: HashMap<Block, u64> = HashMap::default();
    // Each rewrite removes one block from the layout, so this terminates.
    while let Some(c) = find(f, &inner) {
        stats.copied += rewrite(f, &c);
        stats.loops += 1;
        let e = inner.entry(c.preheader).or_insert(1);
        *e = (*e).max(c.total);
    }
    stats
}

/// The bits of `v` when it is an integer or float constant.
pub(super) fn constant(f: &Function, v: Value) -> Option<u64> {
    match f.values[v].def {
        ValueDef::Result(i, 0) => match f.insts[i].data {
            InstData::Iconst { imm, ty } => Some(imm & ty.mask()),
            InstData::Fconst { bits, ty } => Some(bits & ty.mask()),
            _ => None,
        },
        _ => None,
    }
}

/// The integer constant `v` is, if it is one.
pub(super) fn iconst(f: &Function, v: Value) -> Option<u64> {
    match f.values[v].def {
        ValueDef::Result(i, 0) => match f.insts[i].data {
            InstData::Iconst { imm, ty } => Some(imm & ty.mask()),
            _ => None,
        },
        _ => None,
    }
}

/// The instruction defining `v` when it is a result of an instruction in `block`.
pub(super) fn def_in(f: &Function, v: Value, block: Block) -> Option<Inst> {
    match f.values[v].def {
        ValueDef::Result(i, _) if f.insts[i].block == block => Some(i),
        _ => None,
    }
}

pub(super) fn terminator(f: &Function, b: Block) -> Option<Inst> {
    f.blocks[b].insts.last().copied()
}

/// The value `data` computes from its operands as `ir::eval` does: the pure integer
/// instructions through [`eval::pure`], float operations through [`super::float`]'s
/// `FloatOp::eval` (the interpreter's own definitions); `None` for anything else.
fn evaluate(
    data: &InstData,
    ty_of: impl Fn(Value) -> super::Type,
    get: impl Fn(Value) -> u64,
) -> Option<u64> {
    match data {
        InstData::Float { op, args } => {
            let vals: SmallVec<[u64; 3]> = args.iter().map(|&a| get(a)).collect();
            Some(op.eval(&vals))
        }
        _ => eval::pure(data, ty_of, get),
    }
}

/// How many branch edges reach each block, and from which block the last one other than
/// itself came (a single-block loop's preheader, when it has two).
pub(super) fn edges(f: &Function) -> HashMap<Block, (usize, Block)> {
    let mut preds: HashMap<Block, (usize, Block)> = HashMap::default();
    for &b in &f.layout {
        if let Some(t) = terminator(f, b) {
            for call in f.insts[t].data.targets() {
                let e = preds.entry(call.block).or_insert((0, b));
                e.0 += 1;
                if call.block != b {
                    e.1 = b;
                }
            }
        }
    }
    preds
}

/// The first loop of the layout that qualifies.
fn find(f: &Function, inner: &HashMap<Block, u64>) -> Option<Candidate> {
    let entry = f.entry_block()?;
    let preds = edges(f);
    f.layout
        .iter()
        .filter(|&&b| b != entry && !f.nounroll[b])
        .find_map(|&b| candidate(f, b, &preds, Some(inner.get(&b).copied().unwrap_or(1))))
}

/// A single-block loop: block `b` ending in `brif cond, b(back..), exit(..)` (or the two
/// targets the other way round), reached by exactly two edges, its back edge and the
/// `jump b(init..)` that ends its preheader.
pub(super) struct SingleBlockLoop {
    pub preheader: Block,
    pub cond: Value,
    /// Whether the back edge is the `brif`'s taken one (`then`).
    pub back_is_then: bool,
    pub init: BlockCall,
    pub back: BlockCall,
    pub exit: BlockCall,
}

/// Block `b` as a [`SingleBlockLoop`], if it is one (`preds` from [`edges`]).
pub(super) fn single_block_loop(
    f: &Function,
    b: Block,
    preds: &HashMap<Block, (usize, Block)>,
) -> Option<SingleBlockLoop> {
    let t = terminator(f, b)?;
    let InstData::Brif {
        cond,
        then_dest,
        else_dest,
    } = &f.insts[t].data
    else {
        return None;
    };
    let back_is_then = match (then_dest.block == b, else_dest.block == b) {
        (true, false) => true,
        (false, true) => false,
        _ => return None,
    };
    let (back, exit) = if back_is_then {
        (then_dest, else_dest)
    } else {
        (else_dest, then_dest)
    };
    // Exactly two edges: the back edge and one jump from the preheader.
    let &(count, preheader) = preds.get(&b)?;
    if count != 2 || preheader == b {
        return None;
    }
    let InstData::Jump { dest: init } = &f.insts[terminator(f, preheader)?].data else {
        return None;
    };
    if init.block != b {
        return None;
    }
    Some(SingleBlockLoop {
        preheader,
        cond: *cond,
        back_is_then,
        init: init.clone(),
        back: back.clone(),
        exit: exit.clone(),
    })
}

/// Loop `b` when it qualifies; `inner` is how many innermost iterations each of its
/// iterations already stands for (1 unless loops were unrolled into it), `None` to judge
/// the shape only, not the size.
fn candidate(
    f: &Function,
    b: Block,
    preds: &HashMap<Block, (usize, Block)>,
    inner: Option<u64>,
) -> Option<Candidate> {
    let SingleBlockLoop {
        preheader,
        cond,
        back_is_then,
        init,
        back,
        ..
    } = single_block_loop(f, b, preds)?;
    let copied = body_size(f, b, &init.args, &back.args);
    let cmp = def_in(f, cond, b)?;
    let params = &f.blocks[b].params;
    let trips = (0..params.len())
        .find_map(|k| trip_count(f, params[k], init.args[k], back.args[k], cmp, back_is_then))?;
    // A nest is sized as ptxas sizes it: by its innermost iterations and the instructions
    // each of them costs (the outer loops' own work shared out).
    let total = trips.checked_mul(inner.unwrap_or(1))?;
    let per_iteration = copied.div_ceil(inner.unwrap_or(1) as usize);
    let small = inner.is_none() || total <= max_full_trips(per_iteration.max(1));
    small.then_some(Candidate {
        block: b,
        preheader,
        trips,
        total,
    })
}

/// The preheader and trip count of `b` when it is a loop of the shape this module unrolls
/// (a single block entered by one jump, with a counted induction variable), whatever its
/// size or pragma; `ir::unindex` asks which elements a loop writes.
pub(super) fn counted_loop(f: &Function, b: Block) -> Option<(Block, u64)> {
    let c = candidate(f, b, &edges(f), None)?;
    Some((c.preheader, c.trips))
}

/// The number of times the body runs when `param` is the induction variable, starting at
/// the constant `init`, stepped by `next` (an instruction of the loop computing from
/// `param` and constants: `add i, 1`, `add.f32 x, 1.0`) and tested by `cmp` (an `icmp` or
/// float compare of `param` or `next` against a constant); `None` when it is not one or
/// the loop runs more than [`MAX_TRIPS`] times. The values are stepped and compared with
/// the interpreter's own operations ([`evaluate`]), so the count is exactly what
/// `ir::eval` would execute, float rounding included.
fn trip_count(
    f: &Function,
    param: Value,
    init: Value,
    next: Value,
    cmp: Inst,
    back_is_then: bool,
) -> Option<u64> {
    let start = constant(f, init)?;
    let step = def_in(f, next, f.insts[cmp].block)?;
    let step_data = &f.insts[step].data;
    let is_step = matches!(
        step_data,
        InstData::Binary {
            op: BinaryOp::Add | BinaryOp::Sub,
            ..
        } | InstData::Float {
            op: FloatOp::Binary {
                op: FloatBinOp::Add | FloatBinOp::Sub,
                ..
            },
            ..
        }
    );
    let step_args = step_data.operands();
    if !is_step
        || !step_args.contains(&param)
        || !step_args
            .iter()
            .all(|&a| a == param || constant(f, a).is_some())
    {
        return None;
    }
    let cmp_data = &f.insts[cmp].data;
    if !matches!(
        cmp_data,
        InstData::Icmp { .. }
            | InstData::Float {
                op: FloatOp::Cmp { .. },
                ..
            }
    ) {
        return None;
    }
    // Every operand of the compare is the variable, its next value or a constant.
    let cmp_args = cmp_data.operands();
    let known = |v: Value| v == param || v == next || constant(f, v).is_some();
    if !cmp_args.iter().all(|&v| known(v)) || !cmp_args.iter().any(|&v| v == param || v == next) {
        return None;
    }
    let ty_of = |v: Value| f.values[v].ty;
    let mask = ty_of(param).mask();
    let mut cur = start;
    for n in 1..=MAX_TRIPS {
        let get_step = |v: Value| {
            if v == param {
                cur
            } else {
                constant(f, v).unwrap_or(0)
            }
        };
        let nxt = evaluate(step_data, ty_of, get_step)? & mask;
        let get_cmp = |v: Value| {
            if v == param {
                cur
            } else if v == next {
                nxt
            } else {
                constant(f, v).unwrap_or(0)
            }
        };
        let taken = evaluate(cmp_data, ty_of, get_cmp)? & 1 != 0;
        if taken != back_is_then {
            return Some(n);
        }
        cur = nxt;
    }
    None
}

/// Replace loop `c` by its copies; returns the number of instructions copied.
fn rewrite(f: &mut Function, c: &Candidate) -> usize {
    let b = c.block;
    let p = c.preheader;
    let jump = f.blocks[p].insts.pop().expect("the preheader's jump");
    let InstData::Jump { dest: init } = f.insts[jump].data.clone() else {
        unreachable!("checked by find")
    };
    let body: Vec<Inst> = f.blocks[b].insts.clone();
    let (&t, body) = body.split_last().expect("a terminator");
    let InstData::Brif {
        then_dest,
        else_dest,
        ..
    } = f.insts[t].data.clone()
    else {
        unreachable!("checked by find")
    };
    let (back, exit) = if then_dest.block == b {
        (then_dest, else_dest)
    } else {
        (else_dest, then_dest)
    };
    let params = f.blocks[b].params.clone();
    let mut map: HashMap<Value, Value> = params.iter().copied().zip(init.args).collect();
    let mut copied = 0;
    for n in 0..c.trips {
        for &i in body {
            copy_inst(f, i, p, &mut map);
            copied += 1;
        }
        if n + 1 < c.trips {
            let next: Vec<Value> = back.args.iter().map(|v| lookup(&map, *v)).collect();
            map.extend(params.iter().copied().zip(next));
        }
    }
    let exit = BlockCall {
        block: exit.block,
        args: exit.args.iter().map(|v| lookup(&map, *v)).collect(),
    };
    f.insts[jump].data = InstData::Jump { dest: exit };
    f.blocks[p].insts.push(jump);
    // Other blocks read the last copy's values; `b` itself goes away.
    f.layout.retain(|&x| x != b);
    for &x in &f.layout {
        for &i in &f.blocks[x].insts {
            f.insts[i].data.map_operands(|v| lookup(&map, v));
        }
    }
    for i in f.blocks[b].insts.clone() {
        tombstone(f, i);
    }
    f.blocks[b].insts.clear();
    f.blocks[b].params.clear();
    merge_exit(f, p);
    copied
}

/// When `p` now ends in `jump X(args)` and that is the only branch to `X` (the loop was its
/// only way in), move `X`'s instructions to the end of `p` (its parameters read as the
/// arguments), so the copies and what follows the loop form one block the scheduler can
/// overlap.
fn merge_exit(f: &mut Function, p: Block) {
    let jump = *f.blocks[p].insts.last().expect("a jump");
    let InstData::Jump { dest } = f.insts[jump].data.clone() else {
        return;
    };
    let x = dest.block;
    if Some(x) == f.entry_block() || x == p {
        return;
    }
    let edges: usize = f
        .layout
        .iter()
        .filter_map(|&b| terminator(f, b))
        .map(|t| {
            f.insts[t]
                .data
                .targets()
                .iter()
                .filter(|c| c.block == x)
                .count()
        })
        .sum();
    if edges != 1 {
        return;
    }
    let map: HashMap<Value, Value> = f.blocks[x].params.iter().copied().zip(dest.args).collect();
    f.blocks[p].insts.pop();
    tombstone(f, jump);
    let moved = std::mem::take(&mut f.blocks[x].insts);
    for &i in &moved {
        f.insts[i].block = p;
    }
    f.blocks[p].insts.extend(moved);
    f.blocks[x].params.clear();
    f.layout.retain(|&b| b != x);
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            f.insts[i].data.map_operands(|v| lookup(&map, v));
        }
    }
}

/// Retire instruction `i`, which no block holds any more, as `simplify` does: an operand-less
/// `iconst`, so its old operands no longer count as uses.
fn tombstone(f: &mut Function, i: Inst) {
    f.insts[i].data = InstData::Iconst {
        ty: super::Type::I32,
        imm: 0,
    };
}

pub(super) fn lookup(map: &HashMap<Value, Value>, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// Append a copy of `i` to block `p`, its operands read through `map`, and map its results
/// to the copy's. `add x, k` over an `add y, k'` becomes `add y, k + k'` (see the module
/// documentation).
pub(super) fn copy_inst(f: &mut Function, i: Inst, p: Block, map: &mut HashMap<Value, Value>) {
    let mut data = f.insts[i].data.clone();
    data.map_operands(|v| lookup(map, v));
    if let Some(folded) = reassociate(f, &data, p).or_else(|| fold_float(f, &data)) {
        data = folded;
    }
    let inst = f.insts.push(InstNode {
        data,
        results: SmallVec::new(),
        block: p,
    });
    f.srclocs[inst] = f.srclocs[i];
    f.contractible[inst] = f.contractible[i];
    let old: SmallVec<[Value; 4]> = f.insts[i].results.clone();
    for (k, &r) in old.iter().enumerate() {
        let v = f.values.push(ValueData {
            ty: f.values[r].ty,
            def: ValueDef::Result(inst, k),
        });
        f.value_names[v] = f.value_names[r];
        f.insts[inst].results.push(v);
        map.insert(r, v);
    }
    f.blocks[p].insts.push(inst);
}

/// `add (add y, k'), k` → `add y, k''` with `k'' = k + k'` a new `iconst` appended to `p`.
fn reassociate(f: &mut Function, data: &InstData, p: Block) -> Option<InstData> {
    let InstData::Binary {
        op: BinaryOp::Add,
        args: [x, k],
    } = *data
    else {
        return None;
    };
    let (x, k) = if iconst(f, k).is_some() {
        (x, k)
    } else {
        (k, x)
    };
    let k = iconst(f, k)?;
    let ValueDef::Result(xi, 0) = f.values[x].def else {
        return None;
    };
    let InstData::Binary {
        op: BinaryOp::Add,
        args: [y, k2],
    } = f.insts[xi].data
    else {
        return None;
    };
    let (y, k2) = if iconst(f, k2).is_some() {
        (y, k2)
    } else {
        (k2, y)
    };
    let k2 = iconst(f, k2)?;
    let ty = f.values[x].ty;
    let sum = f.insts.push(InstNode {
        data: InstData::Iconst {
            ty,
            imm: k.wrapping_add(k2) & ty.mask(),
        },
        results: SmallVec::new(),
        block: p,
    });
    let v = f.values.push(ValueData {
        ty,
        def: ValueDef::Result(sum, 0),
    });
    f.insts[sum].results.push(v);
    f.blocks[p].insts.push(sum);
    Some(InstData::Binary {
        op: BinaryOp::Add,
        args: [y, v],
    })
}

/// A float operation whose operands are all constants, as the constant `ir::eval` computes
/// for it (`FloatOp::eval`, the interpreter's definition): a float induction variable's
/// copies (`x + 1.0`, `x * x`, `x <= 3.0`, `cvt.rzi x`) become constants, as they are in
/// ptxas's unrolled code. Every IEEE operation (correctly rounded, so one value) folds; the
/// approximations (`ex2.approx`, `rcp.approx`: the hardware's tables) do not.
/// (`ir::simplify` folds such operations too, through the same [`FloatOp::fold`]; folding the
/// copies here lets the unrolled body's integer tests of them fold in the same pass.)
fn fold_float(f: &Function, data: &InstData) -> Option<InstData> {
    let InstData::Float { op, args } = data else {
        return None;
    };
    let imm = op.fold(args.iter().map(|&a| constant(f, a)))?;
    // Float values live in integer carriers (`FloatFmt::carrier`), as their constants do.
    let ty = op.result_type();
    Some(InstData::Iconst {
        ty,
        imm: imm & ty.mask(),
    })
}
