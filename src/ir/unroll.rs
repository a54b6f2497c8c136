//! Full unrolling of single-block loops with a constant trip count, as ptxas does for NVVM's
//! small copy and initialisation loops (`for (i = 0; i < 35; i++) local[i] = global[i];`).
//!
//! In: a verified [`Function`], after [`super::simplify`] (so bounds and steps are `iconst`s).
//! Out: the same function, still verified, in which every loop of the shape below whose trip
//! count is known and small is replaced by that many copies of its body, straight-line, at
//! the end of the block that entered it. [`unroll_loops`] reports how many loops it unrolled.
//!
//! # Which loops
//!
//! A block `B` (not the entry) that ends in `brif c, B(back..), X(exit..)` (or with the two
//! targets the other way round) and that exactly one other branch reaches, a `jump B(init..)`
//! at the end of its preheader `P`. Among `B`'s parameters one is an induction variable `i`:
//! its initial argument is an `iconst`, its back argument is `add i, s` computed in `B` with
//! `s` an `iconst`, and `c` is an `icmp` defined in `B` of `i` or of `i + s` against an
//! `iconst`. The trip count is found by running the induction variable through
//! [`super::eval::pure`] (the interpreter's own `add` and `icmp`, wrap-around included), so it
//! is exactly what `ir::eval` would execute; a loop that does not leave within
//! [`MAX_TRIPS`] iterations is left alone.
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
//! chain of dependent 64-bit adds; the induction variable's own copies fold to constants in
//! the `simplify` that follows. When the jump to `X` is then `X`'s only way in, `X` joins
//! `P` (its parameters read as the arguments), so the copies and the code after the loop
//! are one block for the scheduler.
//!
//! Trade-off: each unrolled loop trades code size (the body `trips` times) for the loop's
//! per-iteration overhead (the counter add, compare and branch, a taken branch's refetch)
//! and for the scheduler's freedom to overlap the iterations' loads. That pays when the
//! overhead is a large share of each iteration, so only *small bodies* are unrolled: at most
//! [`MAX_BODY`] non-constant instructions (the counter's add and compare included, so the
//! overhead is at least a third of the work), at most [`MAX_TRIPS`] iterations and
//! [`MAX_COPIED`] copied instructions in all. Larger bodies (libdevice's trigonometric
//! argument reduction, six iterations of a dozen instructions on a path rarely taken) stay
//! loops, as ptxas keeps them: there the code would grow by hundreds of instructions for a
//! few executed ones.

use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use super::eval;
use super::{
    BinaryOp, Block, BlockCall, Function, Inst, InstData, InstNode, Value, ValueData, ValueDef,
};

/// The most iterations a loop may have to be unrolled.
pub const MAX_TRIPS: u64 = 128;

/// The most non-constant instructions a loop body may have to be unrolled.
pub const MAX_BODY: usize = 8;

/// The most non-constant instructions (body size times trip count) an unrolled loop may add.
pub const MAX_COPIED: usize = 512;

/// What [`unroll_loops`] did to one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Loops replaced by straight-line copies.
    pub loops: usize,
    /// Instructions copied (body size times trip count, constants included).
    pub copied: usize,
}

/// A loop found by [`find`]: the block, its preheader and its trip count.
struct Candidate {
    block: Block,
    preheader: Block,
    trips: u64,
}

/// Unroll every qualifying loop of `f` (see the module documentation).
pub fn unroll_loops(f: &mut Function) -> Stats {
    let mut stats = Stats::default();
    // Each rewrite removes one block from the layout, so this terminates.
    while let Some(c) = find(f) {
        stats.copied += rewrite(f, &c);
        stats.loops += 1;
    }
    stats
}

/// The integer constant `v` is, if it is one.
fn iconst(f: &Function, v: Value) -> Option<u64> {
    match f.values[v].def {
        ValueDef::Result(i, 0) => match f.insts[i].data {
            InstData::Iconst { imm, ty } => Some(imm & ty.mask()),
            _ => None,
        },
        _ => None,
    }
}

/// The instruction defining `v` when it is a result of an instruction in `block`.
fn def_in(f: &Function, v: Value, block: Block) -> Option<Inst> {
    match f.values[v].def {
        ValueDef::Result(i, _) if f.insts[i].block == block => Some(i),
        _ => None,
    }
}

fn terminator(f: &Function, b: Block) -> Option<Inst> {
    f.blocks[b].insts.last().copied()
}

/// The first loop of the layout that qualifies.
fn find(f: &Function) -> Option<Candidate> {
    let entry = f.entry_block()?;
    // How many branch edges reach each block, and from which block the last one came.
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
    f.layout
        .iter()
        .filter(|&&b| b != entry)
        .find_map(|&b| candidate(f, b, &preds))
}

fn candidate(f: &Function, b: Block, preds: &HashMap<Block, (usize, Block)>) -> Option<Candidate> {
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
    let back = if back_is_then { then_dest } else { else_dest };
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
    let copied = f.blocks[b].insts[..f.blocks[b].insts.len() - 1]
        .iter()
        .filter(|&&i| {
            !matches!(
                f.insts[i].data,
                InstData::Iconst { .. } | InstData::Fconst { .. }
            )
        })
        .count();
    if copied > MAX_BODY {
        return None;
    }
    let cmp = def_in(f, *cond, b)?;
    let InstData::Icmp { args: cmp_args, .. } = f.insts[cmp].data else {
        return None;
    };
    let params = &f.blocks[b].params;
    (0..params.len()).find_map(|k| {
        let trips = trip_count(
            f,
            params[k],
            init.args[k],
            back.args[k],
            cmp,
            cmp_args,
            back_is_then,
        )?;
        (trips as usize * copied <= MAX_COPIED).then_some(Candidate {
            block: b,
            preheader,
            trips,
        })
    })
}

/// The number of times the body runs when `param` is the induction variable, starting at
/// `init`, stepped by `next` (`add param, s`) and tested by the `icmp` `cmp`; `None` when it
/// is not one or the loop runs more than [`MAX_TRIPS`] times.
fn trip_count(
    f: &Function,
    param: Value,
    init: Value,
    next: Value,
    cmp: Inst,
    cmp_args: [Value; 2],
    back_is_then: bool,
) -> Option<u64> {
    let start = iconst(f, init)?;
    let add = def_in(f, next, f.insts[cmp].block)?;
    let InstData::Binary {
        op: BinaryOp::Add,
        args,
    } = f.insts[add].data
    else {
        return None;
    };
    if !(args.contains(&param) && args.iter().any(|&a| iconst(f, a).is_some())) {
        return None;
    }
    // Every operand of the add and the compare is the variable, its next value or a constant.
    let known = |v: Value| v == param || v == next || iconst(f, v).is_some();
    if !cmp_args.iter().all(|&v| known(v)) || !cmp_args.iter().any(|&v| v == param || v == next) {
        return None;
    }
    let ty_of = |v: Value| f.values[v].ty;
    let mask = ty_of(param).mask();
    let mut cur = start;
    for n in 1..=MAX_TRIPS {
        let get_add = |v: Value| {
            if v == param {
                cur
            } else {
                iconst(f, v).unwrap_or(0)
            }
        };
        let nxt = eval::pure(&f.insts[add].data, ty_of, get_add)? & mask;
        let get_cmp = |v: Value| {
            if v == param {
                cur
            } else if v == next {
                nxt
            } else {
                iconst(f, v).unwrap_or(0)
            }
        };
        let taken = eval::pure(&f.insts[cmp].data, ty_of, get_cmp)? != 0;
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

fn lookup(map: &HashMap<Value, Value>, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// Append a copy of `i` to block `p`, its operands read through `map`, and map its results
/// to the copy's. `add x, k` over an `add y, k'` becomes `add y, k + k'` (see the module
/// documentation).
fn copy_inst(f: &mut Function, i: Inst, p: Block, map: &mut HashMap<Value, Value>) {
    let mut data = f.insts[i].data.clone();
    data.map_operands(|v| lookup(map, v));
    if let Some(folded) = reassociate(f, &data, p) {
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
