//! SSA construction after Braun et al. (see the essay of [`super`]): reading and writing
//! variables per block, block parameters for reads that cross several predecessors, sealing,
//! and the final pass ([`FnBuilder::finish`], [`FnBuilder::compact`]) that removes trivial
//! parameters and unreachable blocks and renumbers the function densely in layout order.
//!
//! In: variable definitions and uses in filled blocks. Out: a verified [`Function`]. Invariant:
//! the walk uses an explicit worklist, so deep CFGs cannot overflow the stack.

use super::*;

/// The key of block `b`'s definition of `var` in [`FnBuilder::defs`]: the two numbers side
/// by side (a variable number always fits in 32 bits: there is at most one per PTX operand).
pub(super) fn def_key(b: Block, var: VarId) -> u64 {
    debug_assert!(u32::try_from(var).is_ok());
    (u64::from(b.as_u32()) << 32) | var as u64
}

/// `blocks` without repeats, in first-seen order: a linear scan for the few predecessors a
/// block usually has, a set for a join of many edges.
pub(super) fn unique_in_order(blocks: &[Block]) -> SmallVec<[Block; 4]> {
    let mut out: SmallVec<[Block; 4]> = SmallVec::new();
    if blocks.len() > 16 {
        let mut seen = HashSet::default();
        out.extend(blocks.iter().copied().filter(|b| seen.insert(*b)));
    } else {
        for &b in blocks {
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    out
}

impl<'m, 'f> FnBuilder<'m, 'f> {
    // ---- SSA ------------------------------------------------------------------------------

    pub(super) fn use_var(&mut self, var: VarId) -> Value {
        let v = self.read_var(var, self.cur);
        self.drain();
        v
    }

    pub(super) fn read_var(&mut self, var: VarId, block: Block) -> Value {
        // Most reads find a definition (or an earlier read's answer) in the block itself.
        match self.defs.get(&def_key(block, var)) {
            Some(&v) => v,
            None => self.read_var_walk(var, block),
        }
    }

    /// [`Self::read_var`] where `block` has no definition of `var`: walk single-predecessor
    /// chains up to one that has (caching the answer in every block passed), or add a
    /// parameter.
    pub(super) fn read_var_walk(&mut self, var: VarId, block: Block) -> Value {
        let mut chain: SmallVec<[Block; 8]> = SmallVec::new();
        let mut b = block;
        let result = loop {
            // `b` has no definition of `var` here (the caller looked in `block`, the step
            // below in each block it moves to).
            if chain.len() > self.func.blocks.len() {
                // More single-predecessor steps than blocks: a cycle of them, which only
                // unreachable code forms.
                break self.undef[&self.var_ty[var]];
            }
            if !self.sealed[b] {
                let p = self.new_param(b, var);
                self.incomplete[b].push(p);
                break p;
            }
            let preds = &self.preds[b];
            let first = preds.first().copied();
            match first {
                None => break self.undef[&self.var_ty[var]],
                Some(p0) if preds.iter().all(|&p| p == p0) => {
                    chain.push(b);
                    b = p0;
                    if let Some(&v) = self.defs.get(&def_key(b, var)) {
                        break v;
                    }
                }
                Some(_) => {
                    let p = self.new_param(b, var);
                    self.pending.push(p);
                    break p;
                }
            }
        };
        for c in chain {
            self.defs.insert(def_key(c, var), result);
        }
        result
    }

    pub(super) fn new_param(&mut self, b: Block, var: VarId) -> Value {
        let p = FunctionBuilder::new(&mut self.func).append_block_param(b, self.var_ty[var]);
        self.defs.insert(def_key(b, var), p);
        self.value_slot(p);
        self.param_var[p] = Some(var);
        self.incoming[p] = Vec::new();
        p
    }

    /// Make sure the per-value maps hold a slot for `v`, growing them to twice what it needs
    /// when they do not (writing past the end of a map grew it by one slot at a time).
    /// Capacity only: a slot past the end reads as the default, like a missing one.
    pub(super) fn value_slot(&mut self, v: Value) {
        if v.index() >= self.value_slots {
            self.value_slots = 2 * (v.index() + 1);
            self.param_var.resize(self.value_slots);
            self.incoming.resize(self.value_slots);
            self.func.value_names.resize(self.value_slots);
        }
    }

    /// Give every pending parameter its incoming values.
    pub(super) fn drain(&mut self) {
        while let Some(p) = self.pending.pop() {
            let Some(var) = self.param_var[p] else {
                continue;
            };
            let ValueDef::Param(b, _) = self.func.values[p].def else {
                continue;
            };
            let preds = unique_in_order(&self.preds[b]);
            self.incoming[p].reserve_exact(preds.len());
            for pred in preds {
                let v = self.read_var(var, pred);
                self.incoming[p].push((pred, v));
            }
        }
    }

    pub(super) fn seal(&mut self, b: Block) {
        self.sealed[b] = true;
        let ps = std::mem::take(&mut self.incomplete[b]);
        self.pending.extend(ps);
        self.drain();
    }

    pub(super) fn def_var(&mut self, var: VarId, v: Value) {
        let cur = self.cur;
        self.defs.insert(def_key(cur, var), v);
    }

    /// Record the edges of the terminator just emitted in the current block.
    pub(super) fn filled(&mut self, targets: &[Block]) {
        let cur = self.cur;
        for &t in targets {
            self.preds[t].push(cur);
        }
        for (k, &t) in targets.iter().enumerate() {
            // Each target once (a branch's two sides may be one block).
            let first = !targets[..k].contains(&t);
            if first && !self.sealed[t] && self.preds[t].len() as u32 >= self.expected[t] {
                self.seal(t);
            }
        }
    }

    pub(super) fn terminate_jump(&mut self, b: Block) {
        self.ins().jump(b, &[]);
        self.filled(&[b]);
    }

    pub(super) fn brif(&mut self, cond: Value, then_b: Block, else_b: Block) {
        self.ins().brif(cond, then_b, &[], else_b, &[]);
        self.filled(&[then_b, else_b]);
    }

    // ---- finishing ------------------------------------------------------------------------

    pub(super) fn finish(mut self, span: Span) -> Option<Function> {
        let func = &self.func;
        // The sets and maps below are keyed by entities, so they are flags and slots indexed
        // by entity (hash maps here were a visible share of building); none is iterated.
        // Reachability over the emitted terminators.
        // Each is sized once from the function's counts rather than grown slot by slot.
        let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
        reachable.resize(func.blocks.len());
        let mut stack = vec![self.entry];
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut reachable[b], true) {
                continue;
            }
            if let Some(&last) = func.blocks[b].insts.last() {
                for call in func.insts[last].data.targets() {
                    stack.push(call.block);
                }
            }
        }
        // Trivial parameter removal over reachable predecessors.
        let mut alias: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
        alias.resize(func.values.len());
        fn resolve(alias: &SecondaryMap<Value, Option<Value>>, mut v: Value) -> Value {
            while let Some(a) = alias[v] {
                v = a;
            }
            v
        }
        let mut removed: SecondaryMap<Value, bool> = SecondaryMap::new();
        removed.resize(func.values.len());
        loop {
            let mut changed = false;
            for &b in &self.order {
                if !reachable[b] {
                    continue;
                }
                for &p in &func.blocks[b].params {
                    if removed[p] {
                        continue;
                    }
                    let mut only: Option<Value> = None;
                    let mut trivial = true;
                    for &(pred, v) in &self.incoming[p] {
                        if !reachable[pred] {
                            continue;
                        }
                        let v = resolve(&alias, v);
                        if v == p || only == Some(v) {
                            continue;
                        }
                        if only.is_some() {
                            trivial = false;
                            break;
                        }
                        only = Some(v);
                    }
                    if trivial {
                        let to = only.unwrap_or(self.undef[&func.values[p].ty]);
                        alias[p] = Some(to);
                        removed[p] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let order: Vec<Block> = self
            .order
            .iter()
            .copied()
            .filter(|b| reachable[*b])
            .collect();
        // The register names move to the compacted function (nothing reads them here).
        let reg_names = std::mem::take(&mut self.func.reg_names);
        let out = self.compact(&order, &alias, &removed, reg_names);
        match out {
            Some(f) => match super::super::verify_in_module(&self.m.ir, &f) {
                Ok(()) => Some(f),
                Err(errs) => {
                    let msg: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
                    let m = self.m;
                    m.error(
                        span,
                        format!(
                            "internal error: the IR built for this kernel does not verify: {}",
                            msg.join("; ")
                        ),
                    );
                    None
                }
            },
            None => {
                let m = self.m;
                m.error(span, "internal error: a value escaped SSA construction");
                None
            }
        }
    }

    /// A fresh function with the reachable blocks in `order`, parameters removed or aliased
    /// away, unused undef constants dropped, and entities numbered densely.
    // Long by design: one renumbering walk; its steps share the old-to-new maps it builds.
    pub(super) fn compact(
        &self,
        order: &[Block],
        alias: &SecondaryMap<Value, Option<Value>>,
        removed: &SecondaryMap<Value, bool>,
        reg_names: Vec<String>,
    ) -> Option<Function> {
        let old = &self.func;
        let resolve = |mut v: Value| {
            while let Some(a) = alias[v] {
                v = a;
            }
            v
        };
        // Not collected: walked where needed, so no list is allocated per block and edge.
        let kept_params = |b: Block| {
            old.blocks[b]
                .params
                .iter()
                .copied()
                .filter(move |p| !removed[*p])
        };
        let is_undef = |i: Inst| self.undef_insts.contains(&i);
        // Which undef constants are used (after aliasing)? (Like the maps below, a slot per
        // entity rather than a hash map.)
        // Every map and list below is sized once up front (old counts bound the new ones):
        // growing them entry by entry was a visible share of building.
        let mut used: SecondaryMap<Value, bool> = SecondaryMap::new();
        used.resize(old.values.len());
        for &b in order {
            for &i in &old.blocks[b].insts {
                // The undef constants' own operands do not keep them alive.
                if is_undef(i) {
                    continue;
                }
                for part in old.insts[i].data.operand_parts() {
                    for &v in part {
                        used[resolve(v)] = true;
                    }
                }
                for call in old.insts[i].data.targets() {
                    let target = call.block;
                    for p in kept_params(target) {
                        for &(pred, v) in &self.incoming[p] {
                            if pred == b {
                                used[resolve(v)] = true;
                            }
                        }
                    }
                }
            }
        }
        // The zero i32 feeds the pred undef.
        if used[self.undef[&Type::Pred]] {
            used[self.undef[&Type::I32]] = true;
        }
        let keep_inst = |i: Inst| !is_undef(i) || old.insts[i].results.iter().any(|r| used[*r]);
        let mut f = Function::new(&old.name);
        f.params = old.params.clone();
        f.subroutine = old.subroutine;
        f.blocks.reserve(order.len());
        f.layout.reserve(order.len());
        f.values.reserve(old.values.len());
        f.insts.reserve(old.insts.len());
        let mut bmap: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
        bmap.resize(old.blocks.len());
        for &b in order {
            let nb = f.blocks.push(Default::default());
            f.layout.push(nb);
            f.nounroll[nb] = old.nounroll[b];
            bmap[b] = Some(nb);
        }
        // Number every value first: a use may come before its definition in layout order.
        let mut vmap: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
        vmap.resize(old.values.len());
        let mut next_inst = 0usize;
        for &b in order {
            let nb = bmap[b]?;
            for (k, p) in kept_params(b).enumerate() {
                let nv = f.values.push(ValueData {
                    ty: old.values[p].ty,
                    def: ValueDef::Param(nb, k),
                });
                f.blocks[nb].params.push(nv);
                vmap[p] = Some(nv);
            }
            for &i in &old.blocks[b].insts {
                if !keep_inst(i) {
                    continue;
                }
                let ni = Inst::new(next_inst);
                next_inst += 1;
                for (k, &r) in old.insts[i].results.iter().enumerate() {
                    let nv = f.values.push(ValueData {
                        ty: old.values[r].ty,
                        def: ValueDef::Result(ni, k),
                    });
                    vmap[r] = Some(nv);
                }
            }
        }
        f.reg_names = reg_names;
        // One slot per value up front (capacity only: a missing slot reads as 0 too).
        f.value_names.resize(f.values.len());
        for (v, &k) in old.value_names.iter().filter(|(_, k)| **k != 0) {
            if let Some(nv) = vmap[v] {
                f.value_names[nv] = k;
            }
        }
        let map = |v: Value| vmap[resolve(v)];
        for &b in order {
            let nb = bmap[b]?;
            for &i in &old.blocks[b].insts {
                if !keep_inst(i) {
                    continue;
                }
                let node = &old.insts[i];
                let mut failed = false;
                let mut call = |c: &BlockCall| -> BlockCall {
                    let target = bmap[c.block];
                    let args = kept_params(c.block)
                        .map(|p| {
                            let v = self.incoming[p]
                                .iter()
                                .find(|(pred, _)| *pred == b)
                                .map(|&(_, v)| v);
                            // Mapped below with every other operand.
                            v.unwrap_or_else(|| {
                                failed = true;
                                p
                            })
                        })
                        .collect();
                    BlockCall {
                        block: target.unwrap_or_else(|| {
                            failed = true;
                            c.block
                        }),
                        args,
                    }
                };
                let data = match &node.data {
                    InstData::Jump { dest } => InstData::Jump { dest: call(dest) },
                    InstData::Brif {
                        cond,
                        then_dest,
                        else_dest,
                    } => {
                        let t = call(then_dest);
                        let e = call(else_dest);
                        InstData::Brif {
                            cond: *cond,
                            then_dest: t,
                            else_dest: e,
                        }
                    }
                    other => other.clone(),
                };
                let mut data = data;
                data.map_operands(|v| match map(v) {
                    Some(x) => x,
                    None => {
                        failed = true;
                        v
                    }
                });
                if failed {
                    return None;
                }
                let results = node
                    .results
                    .iter()
                    .map(|r| vmap[*r])
                    .collect::<Option<_>>()?;
                let ni = f.insts.push(InstNode {
                    data,
                    results,
                    block: nb,
                });
                f.srclocs[ni] = old.srclocs[i];
                f.contractible[ni] = old.contractible[i];
                f.undef[ni] = self.undef_insts.contains(&i);
                f.blocks[nb].insts.push(ni);
            }
        }
        Some(f)
    }
}
