//! Floating-point contraction: a `mul` whose product only feeds `add`/`sub` becomes part of
//! each of them as one fused multiply-add (ptxas's `--fmad=true`, its default and nvcc's).
//!
//! In: a function straight out of `ir::build`, with [`Function::contractible`] marking the
//! float `add`, `sub` and `mul` that PTX wrote without a rounding modifier. PTX allows exactly
//! those to be contracted ("`mul`/`add` with no rounding modifier may be optimized
//! aggressively by the code generator, e.g. into `fma`"); `.rn` and the other explicit modes
//! forbid it. Out: the same function in which every contracted `add`/`sub` is an
//! [`FloatOp::Fma`] (rounded once, `rn`, with the add's `.ftz`/`.sat`) and the `mul` is left
//! without uses (lowering never demands it, so it costs nothing).
//!
//! Because it runs when the IR is built, the reference interpreter (`ir::eval`, what `verify`
//! compares against) sees the contracted function too: the contraction is a choice PTX leaves
//! to the compiler, and this pass makes the same choice for both sides. It is ptxas 11.8's
//! choice, learned from its SASS for sm_50/sm_53 (`docs` has no page on it; the cases below
//! are its observed behaviour):
//!
//! * every use of the `mul` is a contractible `add`/`sub` of the same format and the same
//!   `.ftz` (the `mul` has no `.sat`); no use reads the product twice (`p + p` stays `FMUL` +
//!   `FADD`). A product that is also stored or compared is kept, and no add fuses it: fusing
//!   one use would compute the product twice, differently rounded.
//! * the uses are in the `mul`'s block, or anywhere else when at most one of the product's
//!   operands is computed (the other a parameter or a constant) and the `mul` is not in a
//!   loop header ([`crosses_blocks`]; `tests/data/fmad/cases_c.ptx`). What ptxas does with a
//!   product made in a loop header is not a rule of the PTX: after it unrolls the loop, the
//!   header's `mul` of iterations 2..n of an unrolled group sits in the adds' block and is
//!   fused, that of the first is not (hotspot3D's `hotspotOpt1`); here it is never fused.
//! * `add(p, q)` of two such products fuses the first operand; the second product then has a
//!   use that does not fuse it, so it is kept whole everywhere (decided to a fixed point).
//! * `add(p, c)` is `fma(x, y, c)`; `sub(p, c)` is `fma(x, y, -c)`; `sub(c, p)` is
//!   `fma(-x, y, c)` (the negations are exact; selection folds them into FFMA's operand
//!   negation bits). A product may reach its adds through one `neg` (`add(-p, c)` is
//!   `fma(-x, y, c)`), if every use of the `neg` is such an add.
//!
//! f16 (sm_53's HFMA2), f32 (FFMA) and f64 (DFMA) are contracted alike. The pass is off with
//! `--fmad=false`, as in ptxas.

use super::float::{FloatBinOp, FloatOp, FloatUnOp};
use super::{Block, Function, Inst, InstData, Value, ValueDef};
use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap as HashMap;
use smallvec::smallvec;

/// Contract `f` in place; returns how many `add`/`sub` became fused multiply-adds.
pub fn contract(f: &mut Function) -> usize {
    // Every use of every value (branch arguments included: `operands` lists them).
    let mut uses: HashMap<Value, Vec<Inst>> = HashMap::default();
    for (inst, node) in f.insts.iter() {
        for v in node.data.operands() {
            uses.entry(v).or_default().push(inst);
        }
    }
    // The contractible adds (in instruction order, for `binary_search`).
    let adds: Vec<Inst> = f
        .insts
        .iter()
        .filter(|(i, n)| {
            f.contractible[*i]
                && matches!(
                    n.data,
                    InstData::Float {
                        op: FloatOp::Binary {
                            op: FloatBinOp::Add | FloatBinOp::Sub,
                            ..
                        },
                        ..
                    }
                )
        })
        .map(|(i, _)| i)
        .collect();
    let headers = loop_headers(f);
    // Whether `u` is a contractible add of the product's kind, reading `v` once, in the
    // product's block or in another block the product `m` may reach ([`crosses_blocks`]).
    let fusing_add = |f: &Function, u: Inst, v: Value, mop: FloatOp, m: Inst| {
        let un = &f.insts[u];
        let block = f.insts[m].block;
        (un.block == block || crosses_blocks(f, m, &headers))
            && adds.binary_search(&u).is_ok()
            && un.data.operands().iter().filter(|&&x| x == v).count() == 1
            && same_kind(mop, &un.data)
    };
    // Products every use of which could fuse them: adds, or `neg`s (same format; `.ftz`
    // only where the product has it) whose every use is such an add.
    let mut candidate: HashMap<Inst, bool> = HashMap::default();
    for (m, node) in f.insts.iter() {
        let Some(&p) = node.results.first() else {
            continue;
        };
        if !is_product(f, m) {
            continue;
        }
        let InstData::Float { op: mop, .. } = node.data else {
            continue;
        };
        let ok = uses.get(&p).is_some_and(|us| {
            us.iter().all(|&u| {
                if fusing_add(f, u, p, mop, m) {
                    return true;
                }
                match negation(f, u, mop) {
                    Some(n) if f.insts[u].block == node.block || crosses_blocks(f, m, &headers) => {
                        uses.get(&n)
                            .is_some_and(|ns| ns.iter().all(|&a| fusing_add(f, a, n, mop, m)))
                    }
                    _ => false,
                }
            })
        });
        if ok {
            candidate.insert(m, true);
        }
    }
    // Each add's choice: its first operand that is a candidate product (or its negation). A
    // product some use of which chose another operand is not fused anywhere; repeat until
    // nothing changes.
    let choice = |f: &Function, candidate: &HashMap<Inst, bool>, a: Inst| {
        let InstData::Float { args, .. } = &f.insts[a].data else {
            return None;
        };
        (0..2).find_map(|k| {
            let (m, neg) = product_of(f, args[k])?;
            candidate
                .get(&m)
                .copied()
                .unwrap_or(false)
                .then_some((k, m, neg))
        })
    };
    loop {
        let mut changed = false;
        for &a in &adds {
            let InstData::Float { args, .. } = &f.insts[a].data else {
                continue;
            };
            let chosen = choice(f, &candidate, a).map(|(k, ..)| k);
            for k in 0..2 {
                if Some(k) == chosen {
                    continue;
                }
                if let Some((m, _)) = product_of(f, args[k]) {
                    if candidate.get(&m) == Some(&true) {
                        candidate.insert(m, false);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut fused = 0;
    for &a in &adds {
        let Some((k, m, neg)) = choice(f, &candidate, a) else {
            continue;
        };
        let InstData::Float {
            op:
                FloatOp::Binary {
                    op: aop,
                    fmt,
                    rnd,
                    ftz,
                    sat,
                },
            args,
        } = f.insts[a].data.clone()
        else {
            continue;
        };
        let InstData::Float { args: xy, .. } = f.insts[m].data.clone() else {
            continue;
        };
        let (mut x, y) = (xy[0], xy[1]);
        let mut c = args[1 - k];
        // The operand is ±x*y: negated by a `neg`, and once more as `sub`'s right side.
        let sub = aop == FloatBinOp::Sub;
        if neg != (sub && k == 1) {
            x = neg_before(f, a, x, fmt);
        }
        // x*y - c = x*y + (-c)
        if sub && k == 0 {
            c = neg_before(f, a, c, fmt);
        }
        f.insts[a].data = InstData::Float {
            op: FloatOp::Fma { fmt, rnd, ftz, sat },
            args: smallvec![x, y, c],
        };
        f.contractible[a] = false;
        fused += 1;
    }
    fused
}

/// Whether the product `m` may be fused into adds outside its own block, as ptxas 11.8 does
/// (probed: `tests/data/fmad/cases_c.ptx`): when at most one of its operands is a computed
/// value, the other being a kernel parameter (`ld.param`) or a constant, and `m` is not in a
/// loop header. A product of two computed values (two loads, a load and a conversion) stays
/// `FMUL` + `FADD` across blocks (fusing would keep both operands live to every add); a
/// product computed in a loop header is not fused into the loop body or past the loop
/// either (ptxas rotates the loop, copying the header's `mul` into the preheader and the
/// latch, so the adds read a merge of two products).
fn crosses_blocks(f: &Function, m: Inst, headers: &SecondaryMap<Block, bool>) -> bool {
    let InstData::Float { args, .. } = &f.insts[m].data else {
        return false;
    };
    let computed = args
        .iter()
        .filter(|&&v| match f.values[v].def {
            ValueDef::Result(i, _) => !matches!(
                f.insts[i].data,
                InstData::LoadParam { .. } | InstData::Fconst { .. } | InstData::Iconst { .. }
            ),
            ValueDef::Param(..) => true,
        })
        .count();
    computed <= 1 && !headers[f.insts[m].block]
}

/// Per block, whether it is a loop header: the target of a back edge (a branch from a block
/// it dominates, itself included).
fn loop_headers(f: &Function) -> SecondaryMap<Block, bool> {
    let doms = super::Dominators::of(f);
    let mut headers = SecondaryMap::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            for t in f.insts[i].data.targets() {
                if doms.dominates(t.block, b) {
                    headers[t.block] = true;
                }
            }
        }
    }
    headers
}

/// Whether `m` is a contractible `mul` (no `.sat`, no rounding modifier).
fn is_product(f: &Function, m: Inst) -> bool {
    f.contractible[m]
        && matches!(
            f.insts[m].data,
            InstData::Float {
                op: FloatOp::Binary {
                    op: FloatBinOp::Mul,
                    sat: false,
                    ..
                },
                ..
            }
        )
}

/// The contractible `mul` whose product `v` is, directly or through one `neg`.
fn product_of(f: &Function, v: Value) -> Option<(Inst, bool)> {
    let ValueDef::Result(i, 0) = f.values[v].def else {
        return None;
    };
    if is_product(f, i) {
        return Some((i, false));
    }
    match &f.insts[i].data {
        InstData::Float {
            op: FloatOp::Unary {
                op: FloatUnOp::Neg, ..
            },
            args,
        } => {
            let ValueDef::Result(m, 0) = f.values[args[0]].def else {
                return None;
            };
            let InstData::Float { op: mop, .. } = f.insts[m].data else {
                return None;
            };
            (is_product(f, m) && negation(f, i, mop).is_some()).then_some((m, true))
        }
        _ => None,
    }
}

/// `u`'s result when `u` is a `neg` that a product of kind `mop` may be fused through: the
/// same format, and no `.ftz` unless the product has it.
fn negation(f: &Function, u: Inst, mop: FloatOp) -> Option<Value> {
    let FloatOp::Binary { fmt, ftz, .. } = mop else {
        return None;
    };
    match &f.insts[u].data {
        InstData::Float {
            op:
                FloatOp::Unary {
                    op: FloatUnOp::Neg,
                    fmt: nf,
                    ftz: nz,
                },
            ..
        } if *nf == fmt && (!*nz || ftz) => f.insts[u].results.first().copied(),
        _ => None,
    }
}

/// Whether the product `mop` may fuse into the add `use_`: the same format and `.ftz`.
fn same_kind(mop: FloatOp, use_: &InstData) -> bool {
    match (mop, use_) {
        (
            FloatOp::Binary { fmt, ftz, .. },
            InstData::Float {
                op: FloatOp::Binary {
                    fmt: f2, ftz: z2, ..
                },
                ..
            },
        ) => fmt == *f2 && ftz == *z2,
        _ => false,
    }
}

/// A new `neg` of `v` placed just before `at` in its block (same PTX line), returning its
/// result. Negation is exact, NaNs aside (which the fused operation makes canonical anyway).
fn neg_before(f: &mut Function, at: Inst, v: Value, fmt: super::float::FloatFmt) -> Value {
    let ty = f.values[v].ty;
    let data = InstData::Float {
        op: FloatOp::Unary {
            op: FloatUnOp::Neg,
            fmt,
            ftz: false,
        },
        args: smallvec![v],
    };
    f.insert_before(at, data, ty)
}
