//! Register pressure per class, and the escape when scalars alone overflow the Int class:
//! [`pressure`] measures the most values of each class live at once; [`overflow_scalars`] moves
//! webs of 32-bit values into the pair or quad class when the function has none of those.
//!
//! In: a [`VCode`] after edge splitting. Out: a [`Pressure`], and per vreg its new class when
//! anything moved. Invariant: a web (block parameters with their arguments, a reuse def with
//! its input) stays in one class, and webs holding a fixed register stay in Int.

use super::*;

/// What [`pressure`] finds, per class.
pub(super) struct Pressure {
    /// Maximum number of simultaneously live vregs, counting an instruction's defs with what
    /// is live after it and its uses with what is live before it (the class-size estimate).
    pub(super) max: [usize; 3],
    /// The same at regalloc2's two points of each instruction: an early def is also live with
    /// the instruction's uses, a late use also with its defs. No allocation without spilling
    /// exists in a class with fewer registers than this (at least `max`).
    pub(super) exact: [usize; 3],
    /// The most operands of the class one instruction names (the least a class must have to
    /// allocate at all).
    pub(super) min_needed: [usize; 3],
}

/// Register pressure per class (see [`Pressure`]).
pub(super) fn pressure<I: MachInst>(vc: &VCode<I>) -> Pressure {
    let (_, live_out) = liveness_sets(vc, |k| k != RegKind::Pred, false);
    let mut max = [0usize; 3];
    let mut exact = [0usize; 3];
    let mut min_needed = [0usize; 3];
    let class_of_vreg = |v: u32| class_of(vc.classes[v as usize]);
    // `live` as a dense flag per vreg, and the vregs flagged (to clear them per block)
    let mut live = vec![false; vc.vregs.len()];
    let mut flagged: Vec<u32> = Vec::new();
    // One instruction's fields (reused for every instruction of every block).
    let mut fs = Vec::new();
    for b in 0..vc.ranges.len() {
        let out = &live_out[b];
        let (s, e) = vc.ranges[b];
        // per-class counts of `live`, kept in step with it
        let mut c = [0usize; 3];
        let mut insert = |live: &mut [bool], c: &mut [usize; 3], v: u32| {
            if !live[v as usize] {
                live[v as usize] = true;
                flagged.push(v);
                c[class_of_vreg(v)] += 1;
            }
        };
        for &v in out {
            insert(&mut live, &mut c, v);
        }
        for (_, args) in &vc.succs[b] {
            for a in args {
                insert(&mut live, &mut c, a.index);
            }
        }
        for i in (s..e).rev() {
            fs.clear();
            super::super::vcode::for_each_field(&vc.insts[i as usize], |f| {
                if f.vreg.kind != RegKind::Pred {
                    fs.push(f);
                }
            });
            let mut here = [0usize; 3];
            // early defs; late uses not live after the instruction (each vreg once)
            let mut early_defs = [0usize; 3];
            let mut late_uses = [0usize; 3];
            for f in &fs {
                here[class_of_vreg(f.vreg.index)] += 1;
                if f.spec.kind == OpKind::Def && f.spec.pos == OpPos::Early {
                    early_defs[class_of_vreg(f.vreg.index)] += 1;
                }
            }
            // just after the instruction: everything live plus its defs
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                insert(&mut live, &mut c, f.vreg.index);
            }
            for (j, f) in fs.iter().enumerate() {
                let v = f.vreg.index;
                if f.spec.kind == OpKind::Use
                    && f.spec.pos == OpPos::Late
                    && !live[v as usize]
                    && !fs[..j]
                        .iter()
                        .any(|g| g.vreg.index == v && g.spec.pos == OpPos::Late)
                {
                    late_uses[class_of_vreg(v)] += 1;
                }
            }
            for k in 0..3 {
                max[k] = max[k].max(c[k]);
                exact[k] = exact[k].max(c[k] + late_uses[k]);
                min_needed[k] = min_needed[k].max(here[k]);
            }
            // just before it: defs dead, uses live
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Def) {
                let v = f.vreg.index;
                if live[v as usize] {
                    live[v as usize] = false;
                    c[class_of_vreg(v)] -= 1;
                }
            }
            for f in fs.iter().filter(|f| f.spec.kind == OpKind::Use) {
                insert(&mut live, &mut c, f.vreg.index);
            }
            for k in 0..3 {
                max[k] = max[k].max(c[k]);
                exact[k] = exact[k].max(c[k] + early_defs[k]);
            }
        }
        for v in flagged.drain(..) {
            live[v as usize] = false;
        }
    }
    Pressure {
        max,
        exact,
        min_needed,
    }
}

/// More than 64 scalars live at once do not fit the Int class. When the function has no quads
/// (or no pairs), their class is free to hold a second (third) set of up to 64 scalars. The
/// 32-bit vregs are grouped into webs (a block parameter and all its arguments, and a reuse
/// def and its input, must share a class: regalloc2 cannot move between classes). Sweeping the
/// code in layout order, each web goes at its first definition to the class with the fewest
/// scalars live there (live = up to the last use in layout order, a cheap hull); dealing webs
/// round-robin instead was tried and fails on code that alternates short- and long-lived
/// values. Webs holding a fixed-register operand stay in Int, where their register lives.
/// Returns the per-class kinds if anything moved.
///
/// With `mix`, the pair and quad classes take scalars too where the function has pairs and
/// quads of its own: a class is then a name space of mixed widths (its names' widths are the
/// widths of the values they hold, followed by `assign::NameProg`), so that regalloc2 has
/// 3 × 64 names for what is live at once and spills only where the register file is full
/// rather than where one class is (cub's radix sort keeps more than 64 scalars live beside
/// its pairs and quads). The balance then counts the pairs and quads live in their classes.
pub(super) fn overflow_scalars<I: MachInst>(
    vc: &mut VCode<I>,
    fixed: &[(RegKind, PhysReg)],
    mix: bool,
) -> Result<Option<[RegKind; 3]>, String> {
    let has = |k: RegKind| vc.vregs.contains(&k);
    let mut extra = Vec::new();
    let mut mixed = Vec::new();
    for (c, k) in [(2, RegKind::B128), (1, RegKind::B64)] {
        if !has(k) {
            extra.push(c);
        } else if mix {
            mixed.push(c);
        }
    }
    if extra.is_empty() && mixed.is_empty() {
        return Ok(None);
    }
    let n = vc.vregs.len();
    let (mut parent, pinned) = scalar_webs(vc, fixed);
    let targets: Vec<usize> = std::iter::once(0)
        .chain(extra.iter().copied())
        .chain(mixed.iter().copied())
        .collect();
    let class_ids = [ra::RegClass::Int, ra::RegClass::Float, ra::RegClass::Vector];
    let last_use = last_uses(vc);
    // Sweep in layout order; each web goes, at its first definition, to the target class with
    // the fewest scalars live there at that point.
    let mut web_class: Vec<Option<usize>> = vec![None; n];
    let mut active: [Vec<usize>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut classes = vc.classes.clone();
    for (b, &(s, e)) in vc.ranges.iter().enumerate() {
        for i in s as usize..e as usize {
            let mut defs: Vec<u32> = Vec::new();
            if i == s as usize {
                defs.extend(vc.params[b].iter().map(|p| p.index));
            }
            super::super::vcode::for_each_field(&vc.insts[i], |f| {
                if f.spec.kind == super::super::OpKind::Def {
                    defs.push(f.vreg.index);
                }
            });
            for list in active.iter_mut() {
                list.retain(|end| *end >= i);
            }
            for v in defs {
                let v = v as usize;
                if vc.vregs[v] != RegKind::B32 {
                    if vc.vregs[v] != RegKind::Pred {
                        active[class_index(vc.vregs[v])].push(last_use[v].max(i));
                    }
                    continue;
                }
                let r = find(&mut parent, v);
                let c = match web_class[r] {
                    Some(c) => c,
                    None => {
                        let c = if pinned[r] {
                            0
                        } else {
                            *targets
                                .iter()
                                .min_by_key(|c| active[**c].len())
                                .unwrap_or(&0)
                        };
                        web_class[r] = Some(c);
                        c
                    }
                };
                classes[v] = class_ids[c];
                active[c].push(last_use[v].max(i));
            }
        }
    }
    let mut kinds = KINDS;
    for c in extra {
        kinds[c] = RegKind::B32;
    }
    vc.set_classes(classes, kinds.map(|k| k.gprs() as usize))?;
    Ok(Some(kinds))
}

/// The union-find root of `x`, compressing the path.
fn find(p: &mut [usize], x: usize) -> usize {
    let mut r = x;
    while p[r] != r {
        r = p[r];
    }
    let mut x = x;
    while p[x] != r {
        let next = p[x];
        p[x] = r;
        x = next;
    }
    r
}

/// The webs of [`overflow_scalars`] as a union-find forest over the vregs (a block argument
/// and its parameter, a reuse def and the use it reuses, are one web, which keeps one class),
/// and which roots hold a fixed register (those stay in Int).
fn scalar_webs<I: MachInst>(
    vc: &VCode<I>,
    fixed: &[(RegKind, PhysReg)],
) -> (Vec<usize>, Vec<bool>) {
    let n = vc.vregs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    for (b, succs) in vc.succs.iter().enumerate() {
        let _ = b;
        for (t, args) in succs {
            for (a, p) in args.iter().zip(&vc.params[t.0 as usize]) {
                let (ra_, rp) = (
                    find(&mut parent, a.index as usize),
                    find(&mut parent, p.index as usize),
                );
                parent[ra_.max(rp)] = ra_.min(rp);
            }
        }
    }
    // A reuse def and the use it reuses must share a class too.
    for inst in &vc.insts {
        let fs = fields(inst);
        for f in fs.iter().flatten() {
            if let super::super::OpConstraint::Reuse(pos) = f.spec.constraint {
                if let Some(Some(u)) = fs.get(usize::from(pos)) {
                    let (a, b) = (
                        find(&mut parent, f.vreg.index as usize),
                        find(&mut parent, u.vreg.index as usize),
                    );
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    let mut pinned = vec![false; n];
    if !fixed.is_empty() {
        for inst in &vc.insts {
            super::super::vcode::for_each_field(inst, |f| {
                if matches!(f.spec.constraint, super::super::OpConstraint::Fixed(_)) {
                    let r = find(&mut parent, f.vreg.index as usize);
                    pinned[r] = true;
                }
            });
        }
    }
    (parent, pinned)
}

/// Last use of every vreg in layout order (a hull: enough for a balancing heuristic), a block
/// argument's at its block's end, and a value live out of a block to that block's end.
fn last_uses<I: MachInst>(vc: &VCode<I>) -> Vec<usize> {
    let n = vc.vregs.len();
    let mut last_use = vec![0usize; n];
    for (i, inst) in vc.insts.iter().enumerate() {
        super::super::vcode::for_each_field(inst, |f| last_use[f.vreg.index as usize] = i);
    }
    for (b, succs) in vc.succs.iter().enumerate() {
        let term = vc.ranges[b].1 as usize - 1;
        for (_, args) in succs {
            for a in args {
                last_use[a.index as usize] = last_use[a.index as usize].max(term);
            }
        }
    }
    // A value live out of a block is live to its end (a loop's back edge keeps what the loop
    // reads live through the loop's body, past its last use in layout order).
    let (_, live_out) = liveness_sets(vc, |k| k != RegKind::Pred, false);
    for b in 0..vc.ranges.len() {
        let term = vc.ranges[b].1 as usize - 1;
        for &v in &live_out[b] {
            last_use[v as usize] = last_use[v as usize].max(term);
        }
    }
    last_use
}
