//! Scalar replacement of `.local` variables: a per-thread array whose every access sits at a
//! constant offset, and whose address goes nowhere else, becomes SSA values (registers)
//! instead of local memory, as ptxas does.
//!
//! In: a verified [`Function`] (after [`super::simplify`], so that offsets computed from
//! constants are constants) and the [`Module`] that declares its variables. Out: the same
//! function, still verified, in which every promotable `.local` variable is no longer named:
//! its loads are replaced by the values last stored to the same bytes (block parameters where
//! paths meet), its stores and the address arithmetic that led to them are gone, so
//! [`Module::local_layout`] gives the kernel a smaller frame. [`promote_locals`] reports how
//! many variables and bytes it promoted.
//!
//! # Which variables
//!
//! A `.local` variable (no initializer) is promoted when every value derived from its address
//! is one of (offsets tracked as constants from the variable's start):
//!
//! * `addr.local @var` itself (offset 0);
//! * `add x, c` / `add c, x` / `sub x, c` with `c` an `iconst` (NVVM's `add.u64 %rd1, %SPL,
//!   8`);
//! * `cvta.local x` (a generic address of the variable, NVVM's `%SP`) and `cvta.to.local` of
//!   such a generic address back;
//! * `zext`/`trunc` between i32 and i64 of a local-space (not generic) address;
//!
//! and every other use of such a value is the *address* of a `load`/`store` in the matching
//! space (`.local` for a local-space value, generic for a generic one). Anything else (the
//! address stored as data, compared, passed along a branch, used by an atomic, an index that
//! is not a constant) keeps the variable in memory. Every access must lie inside the variable,
//! naturally aligned, and the accesses must split the variable into *slots*: two accesses
//! either cover exactly the same bytes with the same type or do not overlap (a `u64` store
//! read back as two `u32` halves keeps the variable in memory). Vector accesses are split
//! into their elements.
//!
//! Arrays also read or written at a run-time index (at most [`super::unindex::MAX_ELEMS`]
//! elements) are first rewritten by [`super::unindex`] into constant-offset accesses and
//! selects, then promoted the same way.
//!
//! Whole functions are skipped when they have a dynamic stack (`alloca`: their local memory
//! has another layout) or when their entry block is a branch target (it cannot take the
//! block parameters a merge would need).
//!
//! # SSA construction
//!
//! Each slot is a variable in the sense of Braun et al.'s "Simple and Efficient Construction
//! of SSA Form": the value at a load is the last store to the slot earlier in its block, else
//! the slot's value on entry to the block. That is zero in the entry block (local memory
//! starts as zeros in `ir::eval` and in the simulator; on hardware an uninitialised read has
//! no defined value, so zero is as good as anything) and in unreachable blocks, the value at
//! the end of the only predecessor, or a new block parameter fed by every predecessor. The
//! parameters are created on demand (so a slot gets one only where some load needs it) and
//! their arguments filled from a work list, so nothing recurses. Afterwards parameters whose
//! incoming values are all one value (or themselves) are replaced by it, and parameters that
//! feed only each other are removed.
//!
//! Trade-off: a promoted array costs registers for as long as its slots are live, where local
//! memory cost none but a load and a store per access (each a long-latency round trip). ptxas
//! promotes such arrays whatever their size; so do we, and the allocator spills if it must.
//!
//! # What `verify` sees
//!
//! The reference runs the unpromoted function, so a promoted variable's bytes stay in its
//! local memory and not in ours. `verify` compares local memory only for the variables the
//! compiled kernel still has (`driver::kernel_ir` gives it the function lowering receives).

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use super::{
    BinaryOp, Block, ConvOp, CvtaDir, Function, GlobalVar, Inst, InstData, InstNode, Module, Space,
    Type, Value, ValueData, ValueDef,
};

/// What [`promote_locals`] did to one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Variables promoted to SSA values.
    pub vars: usize,
    /// Their bytes (declared sizes).
    pub bytes: u64,
    /// Loads and stores removed.
    pub accesses: usize,
    /// Of `vars`, those indexed at run time that [`super::unindex`] rewrote first.
    pub unindexed: usize,
}

/// Functions with more blocks are left alone (a bound on the work, not on correctness).
const MAX_BLOCKS: usize = 50_000;

/// Promote every promotable `.local` variable of `f` (see the module documentation).
pub fn promote_locals(module: &Module, f: &mut Function) -> Stats {
    let kept = super::unindex::split_stores(module, f);
    promote_locals_with(module, f, true, &kept)
}

/// [`promote_locals`], with the arrays indexed at run time ([`super::unindex`]) promoted
/// only where `unindex` is set (the driver compiles a kernel once more without them where
/// their select chains cost it warps).
pub fn promote_locals_with(
    module: &Module,
    f: &mut Function,
    unindex: bool,
    kept: &[GlobalVar],
) -> Stats {
    let mut stats = Stats::default();
    let Some(entry) = f.entry_block() else {
        return stats;
    };
    if f.layout.len() > MAX_BLOCKS {
        return stats;
    }
    let mut has_stack = false;
    let mut entry_is_target = false;
    let mut vars: Vec<GlobalVar> = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            match &f.insts[i].data {
                InstData::Stack { .. } => has_stack = true,
                InstData::SymbolAddr { var, .. } => {
                    let v = &module.vars[*var];
                    if v.space == Space::Local && v.init.is_none() && !vars.contains(var) {
                        vars.push(*var);
                    }
                }
                d => {
                    if d.targets().iter().any(|c| c.block == entry) {
                        entry_is_target = true;
                    }
                }
            }
        }
    }
    if has_stack || entry_is_target || vars.is_empty() {
        return stats;
    }
    for var in vars {
        let mut uses = use_lists(f);
        let mut plan = analyse(module, f, &uses, var);
        if plan.is_none() && unindex && super::unindex::unindex(module, f, &uses, var, kept) {
            stats.unindexed += 1;
            uses = use_lists(f);
            plan = analyse(module, f, &uses, var);
            debug_assert!(plan.is_some(), "unindex leaves only constant offsets");
        }
        if let Some(plan) = plan {
            stats.vars += 1;
            stats.bytes += u64::from(module.vars[var].size);
            stats.accesses += plan.accesses.len();
            Promoter::new(f, entry).run(&plan);
        }
    }
    stats
}

/// Every instruction that reads each value (once per instruction).
pub(super) fn use_lists(f: &Function) -> SecondaryMap<Value, SmallVec<[Inst; 2]>> {
    let mut uses: SecondaryMap<Value, SmallVec<[Inst; 2]>> = SecondaryMap::new();
    uses.resize(f.values.len());
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            for v in f.insts[i].data.operands() {
                if uses[v].last() != Some(&i) {
                    uses[v].push(i);
                }
            }
        }
    }
    uses
}

/// One slot of a promoted variable: `size` bytes at `off`, accessed as `ty`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    off: u32,
    size: u32,
    ty: Type,
}

/// What promoting one variable removes and rewrites.
struct Plan {
    slots: Vec<Slot>,
    /// Each load or store, with the slot of each element.
    accesses: Vec<(Inst, SmallVec<[usize; 4]>)>,
    /// The address computations (including `addr.local @var`), removed afterwards.
    derived: Vec<Inst>,
}

/// The integer constant `v` holds, sign-extended from its type.
pub(super) fn constant(f: &Function, v: Value) -> Option<i64> {
    let ValueDef::Result(i, _) = f.values[v].def else {
        return None;
    };
    match f.insts[i].data {
        InstData::Iconst { ty, imm } => {
            let bits = ty.bits();
            if bits == 0 || bits > 64 {
                return None;
            }
            let shift = 64 - bits;
            Some(((imm << shift) as i64) >> shift)
        }
        _ => None,
    }
}

/// The instructions of `f` that take `var`'s address (`SymbolAddr`), in layout order: where
/// the walks of [`analyse`] and `ir::unindex` start.
pub(super) fn symbol_addrs(f: &Function, var: GlobalVar) -> Vec<Inst> {
    f.layout
        .iter()
        .flat_map(|&b| f.blocks[b].insts.iter().copied())
        .filter(|&i| matches!(f.insts[i].data, InstData::SymbolAddr { var: v, .. } if v == var))
        .collect()
}

/// Whether `var` can be promoted in `f`, and how.
fn analyse(
    module: &Module,
    f: &Function,
    uses: &SecondaryMap<Value, SmallVec<[Inst; 2]>>,
    var: GlobalVar,
) -> Option<Plan> {
    let size = i64::from(module.vars[var].size);
    // (value, offset from the variable's start, generic?) still to look at.
    let mut derived = symbol_addrs(f, var);
    let mut work: Vec<(Value, i64, bool)> = derived
        .iter()
        .map(|&i| (f.insts[i].results[0], 0, false))
        .collect();
    // (instruction, element offsets and type) of each access.
    let mut raw: Vec<(Inst, i64, Type, usize)> = Vec::new();
    while let Some((v, off, generic)) = work.pop() {
        for &u in &uses[v] {
            match addr_use(f, v, generic, u)? {
                AddrUse::Add {
                    result,
                    other,
                    sign,
                } => {
                    let c = constant(f, other)?;
                    derived.push(u);
                    work.push((result, off.checked_add(c.checked_mul(sign)?)?, generic));
                }
                AddrUse::Move { result, generic } => {
                    derived.push(u);
                    work.push((result, off, generic));
                }
                AddrUse::Access { ty, width, offset } => {
                    raw.push((u, off + i64::from(offset), ty, width));
                }
                AddrUse::Other => return None,
            }
        }
    }
    // Slots: each element of each access, at most one type per offset, none overlapping.
    let mut slots: Vec<Slot> = Vec::new();
    for &(_, start, ty, width) in &raw {
        let bytes = i64::from(ty.bytes()?);
        for k in 0..width as i64 {
            let off = start + k * bytes;
            if off < 0 || off + bytes > size || off % bytes != 0 {
                return None;
            }
            let s = Slot {
                off: off as u32,
                size: bytes as u32,
                ty,
            };
            if !slots.contains(&s) {
                slots.push(s);
            }
        }
    }
    slots.sort_by_key(|s| s.off);
    for w in slots.windows(2) {
        if w[0].off + w[0].size > w[1].off {
            return None;
        }
    }
    let slot_at = |off: i64| slots.iter().position(|s| i64::from(s.off) == off);
    let mut accesses = Vec::with_capacity(raw.len());
    for &(i, start, ty, width) in &raw {
        let bytes = i64::from(ty.bytes()?);
        let elems = (0..width as i64)
            .map(|k| slot_at(start + k * bytes))
            .collect::<Option<SmallVec<[usize; 4]>>>()?;
        accesses.push((i, elems));
    }
    accesses.sort_by_key(|a| a.0);
    accesses.dedup_by_key(|a| a.0);
    Some(Plan {
        slots,
        accesses,
        derived,
    })
}

/// How instruction `u` uses `v`, an address derived from a `.local` variable's (`generic`:
/// converted to the generic space), for [`analyse`] and [`super::unindex`]; `None` where
/// the use adds the address to itself or subtracts it, or converts it to the space it is in.
pub(super) enum AddrUse {
    /// `result = v + sign * other`.
    Add {
        result: Value,
        other: Value,
        sign: i64,
    },
    /// The same offset in `result`: a `cvta` (to or from `generic`) or a `zext`/`trunc`
    /// between i32 and i64.
    Move { result: Value, generic: bool },
    /// A load or store (not of the address itself) at `[v + offset]`, of `width` values.
    Access { ty: Type, width: usize, offset: i32 },
    /// Anything else.
    Other,
}

/// See [`AddrUse`].
pub(super) fn addr_use(f: &Function, v: Value, generic: bool, u: Inst) -> Option<AddrUse> {
    let node = &f.insts[u];
    let result = node.results.first().copied();
    Some(match &node.data {
        InstData::Binary { op, args } if matches!(op, BinaryOp::Add | BinaryOp::Sub) => {
            let (other, sign) = if args[0] == v && args[1] != v {
                (args[1], if *op == BinaryOp::Add { 1 } else { -1 })
            } else if args[1] == v && args[0] != v && *op == BinaryOp::Add {
                (args[0], 1)
            } else {
                return None;
            };
            AddrUse::Add {
                result: result?,
                other,
                sign,
            }
        }
        InstData::Cvta {
            dir, space, arg, ..
        } if *space == Space::Local && *arg == v => {
            let to_generic = *dir == CvtaDir::ToGeneric;
            if to_generic == generic {
                return None;
            }
            AddrUse::Move {
                result: result?,
                generic: to_generic,
            }
        }
        InstData::Convert { op, ty, arg }
            if !generic
                && *arg == v
                && matches!(op, ConvOp::Zext | ConvOp::Trunc)
                && matches!(ty, Type::I32 | Type::I64) =>
        {
            AddrUse::Move {
                result: result?,
                generic,
            }
        }
        InstData::Load {
            space,
            ty,
            width,
            addr,
            offset,
            ..
        } if *addr == v && *space == space_of(generic) => AddrUse::Access {
            ty: *ty,
            width: usize::from(*width),
            offset: *offset,
        },
        InstData::Store {
            space,
            ty,
            addr,
            offset,
            values,
            ..
        } if *addr == v && *space == space_of(generic) && !values.contains(&v) => AddrUse::Access {
            ty: *ty,
            width: values.len(),
            offset: *offset,
        },
        _ => AddrUse::Other,
    })
}

fn space_of(generic: bool) -> Space {
    if generic {
        Space::Generic
    } else {
        Space::Local
    }
}

/// The SSA construction for one variable (see the module documentation).
struct Promoter<'f> {
    f: &'f mut Function,
    entry: Block,
    preds: HashMap<Block, SmallVec<[Block; 4]>>,
    reachable: SecondaryMap<Block, bool>,
    /// Value of each slot on entry to a block, once known.
    at_entry: HashMap<(Block, usize), Value>,
    /// Value of each slot at the end of a block that stores to it.
    last_store: HashMap<(Block, usize), Value>,
    /// Zero constants made, by block and type.
    zeros: HashMap<(Block, Type), Value>,
    /// Block parameters made (with whether they are still there), and the (parameter, slot)
    /// of those whose arguments are still placeholders.
    params: Vec<(Value, bool)>,
    pending: Vec<(Value, usize)>,
    /// Results replaced: a removed load's result, a trivial parameter.
    repl: SecondaryMap<Value, Option<Value>>,
}

impl<'f> Promoter<'f> {
    fn new(f: &'f mut Function, entry: Block) -> Promoter<'f> {
        let mut preds: HashMap<Block, SmallVec<[Block; 4]>> = HashMap::default();
        for &b in &f.layout {
            if let Some(&last) = f.blocks[b].insts.last() {
                for c in f.insts[last].data.targets() {
                    let p = preds.entry(c.block).or_default();
                    if !p.contains(&b) {
                        p.push(b);
                    }
                }
            }
        }
        let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut stack = vec![entry];
        reachable[entry] = true;
        while let Some(b) = stack.pop() {
            if let Some(&last) = f.blocks[b].insts.last() {
                for c in f.insts[last].data.targets() {
                    if !reachable[c.block] {
                        reachable[c.block] = true;
                        stack.push(c.block);
                    }
                }
            }
        }
        let mut repl = SecondaryMap::new();
        repl.resize(f.values.len());
        Promoter {
            f,
            entry,
            preds,
            reachable,
            at_entry: HashMap::default(),
            last_store: HashMap::default(),
            zeros: HashMap::default(),
            params: Vec::new(),
            pending: Vec::new(),
            repl,
        }
    }

    fn run(mut self, plan: &Plan) {
        let slots = &plan.slots;
        let slot_of: HashMap<Inst, &SmallVec<[usize; 4]>> =
            plan.accesses.iter().map(|(i, s)| (*i, s)).collect();
        // The last store to each slot in each block is what the block passes on.
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                if let (Some(elems), InstData::Store { values, .. }) =
                    (slot_of.get(&i), &self.f.insts[i].data)
                {
                    for (k, &s) in elems.iter().enumerate() {
                        self.last_store.insert((b, s), values[k]);
                    }
                }
            }
        }
        // Each block in turn: loads read the block's own earlier stores, else the value on
        // entry.
        let mut removed: Vec<Inst> = Vec::new();
        for b in self.f.layout.clone() {
            let mut local: HashMap<usize, Value> = HashMap::default();
            for i in self.f.blocks[b].insts.clone() {
                let Some(elems) = slot_of.get(&i) else {
                    continue;
                };
                removed.push(i);
                match &self.f.insts[i].data {
                    InstData::Store { values, .. } => {
                        for (k, &s) in elems.iter().enumerate() {
                            local.insert(s, values[k]);
                        }
                    }
                    InstData::Load { .. } => {
                        let results = self.f.insts[i].results.clone();
                        for (k, &s) in elems.iter().enumerate() {
                            let v = match local.get(&s) {
                                Some(&v) => v,
                                None => self.entry_value(b, s, slots),
                            };
                            self.repl[results[k]] = Some(v);
                        }
                    }
                    _ => unreachable!("only loads and stores are accesses"),
                }
            }
        }
        // Arguments of the parameters made, which may ask for more parameters.
        while let Some((p, s)) = self.pending.pop() {
            let ValueDef::Param(b, idx) = self.f.values[p].def else {
                unreachable!("a parameter made here");
            };
            for pred in self.preds.get(&b).cloned().unwrap_or_default() {
                let v = self.exit_value(pred, s, slots);
                let last = *self.f.blocks[pred].insts.last().expect("a terminator");
                for_each_call_to(&mut self.f.insts[last].data, b, |args| args[idx] = v);
            }
        }
        // Remove the accesses and the address computations (tombstones, as `simplify`).
        let mut gone: SecondaryMap<Inst, bool> = SecondaryMap::new();
        for &i in removed.iter().chain(&plan.derived) {
            gone[i] = true;
        }
        for b in self.f.layout.clone() {
            self.f.blocks[b].insts.retain(|&i| !gone[i]);
        }
        for &i in removed.iter().chain(&plan.derived) {
            self.f.insts[i].data = InstData::Iconst {
                ty: Type::I32,
                imm: 0,
            };
        }
        self.remove_trivial_params();
        self.apply_replacements();
        self.remove_dead_params();
    }

    /// The value of slot `s` on entry to `b`.
    fn entry_value(&mut self, b: Block, s: usize, slots: &[Slot]) -> Value {
        // Walk up a chain of single predecessors without stores to the slot.
        let mut chain: Vec<Block> = Vec::new();
        let mut at = b;
        let v = loop {
            if let Some(&v) = self.at_entry.get(&(at, s)) {
                break v;
            }
            if at == self.entry || !self.reachable[at] {
                break self.zero(at, slots[s].ty);
            }
            let preds = self.preds.get(&at).cloned().unwrap_or_default();
            if preds.len() == 1 && !chain.contains(&at) {
                chain.push(at);
                let p = preds[0];
                if let Some(&v) = self.last_store.get(&(p, s)) {
                    break v;
                }
                at = p;
                continue;
            }
            // A merge (or a cycle of single predecessors, which only a merge can enter,
            // so it is a merge too): a parameter, its arguments later.
            let p = self.new_param(at, slots[s].ty);
            self.pending.push((p, s));
            break p;
        };
        self.at_entry.insert((at, s), v);
        for c in chain {
            self.at_entry.insert((c, s), v);
        }
        v
    }

    /// The value of slot `s` when `b` branches away.
    fn exit_value(&mut self, b: Block, s: usize, slots: &[Slot]) -> Value {
        match self.last_store.get(&(b, s)) {
            Some(&v) => v,
            None => self.entry_value(b, s, slots),
        }
    }

    fn zero(&mut self, b: Block, ty: Type) -> Value {
        if let Some(&v) = self.zeros.get(&(b, ty)) {
            return v;
        }
        let i = self.f.insts.push(InstNode {
            data: zero_of(ty),
            results: SmallVec::new(),
            block: b,
        });
        let v = self.f.values.push(ValueData {
            ty,
            def: ValueDef::Result(i, 0),
        });
        self.f.insts[i].results.push(v);
        self.f.blocks[b].insts.insert(0, i);
        self.repl.resize(self.f.values.len());
        self.zeros.insert((b, ty), v);
        v
    }

    fn new_param(&mut self, b: Block, ty: Type) -> Value {
        let idx = self.f.blocks[b].params.len();
        let v = self.f.values.push(ValueData {
            ty,
            def: ValueDef::Param(b, idx),
        });
        self.f.blocks[b].params.push(v);
        // Every branch to `b` passes the parameter itself for now (kept in step with the
        // parameter list); the work list puts the real argument there.
        for pred in self.preds.get(&b).cloned().unwrap_or_default() {
            let last = *self.f.blocks[pred].insts.last().expect("a terminator");
            for_each_call_to(&mut self.f.insts[last].data, b, |args| args.push(v));
        }
        self.repl.resize(self.f.values.len());
        self.params.push((v, true));
        v
    }

    fn resolve(&self, mut v: Value) -> Value {
        while let Some(n) = self.repl.get(v).copied().flatten() {
            v = n;
        }
        v
    }

    /// The arguments every predecessor passes to parameter `p` (resolved).
    fn incoming(&self, p: Value) -> Vec<Value> {
        let ValueDef::Param(b, idx) = self.f.values[p].def else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &pred in self.preds.get(&b).map(|p| p.as_slice()).unwrap_or(&[]) {
            let last = *self.f.blocks[pred].insts.last().expect("a terminator");
            for c in self.f.insts[last].data.targets() {
                if c.block == b {
                    out.push(self.resolve(c.args[idx]));
                }
            }
        }
        out
    }

    /// Parameters whose arguments are all one value (or the parameter itself) become that
    /// value, until none is left.
    fn remove_trivial_params(&mut self) {
        loop {
            let mut changed = false;
            for k in 0..self.params.len() {
                let (p, alive) = self.params[k];
                if !alive {
                    continue;
                }
                let mut same: Option<Value> = None;
                let mut trivial = true;
                for a in self.incoming(p) {
                    if a == p || Some(a) == same {
                        continue;
                    }
                    if same.is_some() {
                        trivial = false;
                        break;
                    }
                    same = Some(a);
                }
                let Some(v) = same.filter(|_| trivial) else {
                    continue;
                };
                self.repl[p] = Some(v);
                self.remove_param(p);
                self.params[k].1 = false;
                changed = true;
            }
            if !changed {
                break;
            }
        }
    }

    fn apply_replacements(&mut self) {
        let repl = &self.repl;
        let resolve = |mut v: Value| {
            while let Some(n) = repl.get(v).copied().flatten() {
                v = n;
            }
            v
        };
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                self.f.insts[i].data.map_operands(resolve);
            }
        }
    }

    /// Remove the parameters made here that no instruction needs: used only as arguments
    /// to such parameters (a slot stored in a loop and never loaded after it).
    fn remove_dead_params(&mut self) {
        let ours: HashMap<Value, usize> = self
            .params
            .iter()
            .enumerate()
            .filter(|(_, (_, alive))| *alive)
            .map(|(k, (p, _))| (*p, k))
            .collect();
        if ours.is_empty() {
            return;
        }
        let mut live: HashMap<Value, bool> = HashMap::default();
        // Which of our parameters each of our parameters receives.
        let mut feeds: HashMap<Value, Vec<Value>> = HashMap::default();
        let mut work: Vec<Value> = Vec::new();
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                let data = &self.f.insts[i].data;
                let calls = data.targets();
                if calls.is_empty() {
                    for v in data.operands() {
                        if ours.contains_key(&v) && live.insert(v, true).is_none() {
                            work.push(v);
                        }
                    }
                    continue;
                }
                if let InstData::Brif { cond, .. } = data {
                    if ours.contains_key(cond) && live.insert(*cond, true).is_none() {
                        work.push(*cond);
                    }
                }
                for c in calls {
                    for (idx, &a) in c.args.iter().enumerate() {
                        if !ours.contains_key(&a) {
                            continue;
                        }
                        let target = self.f.blocks[c.block].params[idx];
                        if ours.contains_key(&target) {
                            feeds.entry(target).or_default().push(a);
                        } else if live.insert(a, true).is_none() {
                            work.push(a);
                        }
                    }
                }
            }
        }
        while let Some(p) = work.pop() {
            for &a in feeds.get(&p).map(|v| v.as_slice()).unwrap_or(&[]) {
                if live.insert(a, true).is_none() {
                    work.push(a);
                }
            }
        }
        for (&p, &k) in &ours {
            if !live.contains_key(&p) {
                self.remove_param(p);
                self.params[k].1 = false;
            }
        }
    }

    /// Remove block parameter `p` and the argument every branch passes for it.
    fn remove_param(&mut self, p: Value) {
        let ValueDef::Param(b, idx) = self.f.values[p].def else {
            return;
        };
        self.f.blocks[b].params.remove(idx);
        for (k, &q) in self.f.blocks[b].params.iter().enumerate().skip(idx) {
            self.f.values[q].def = ValueDef::Param(b, k);
        }
        for pred in self.preds.get(&b).cloned().unwrap_or_default() {
            let last = *self.f.blocks[pred].insts.last().expect("a terminator");
            for_each_call_to(&mut self.f.insts[last].data, b, |args| {
                args.remove(idx);
            });
        }
    }
}

/// The constant zero of `ty`.
pub(super) fn zero_of(ty: Type) -> InstData {
    match ty {
        Type::F16 | Type::F32 | Type::F64 => InstData::Fconst { ty, bits: 0 },
        _ => InstData::Iconst { ty, imm: 0 },
    }
}

/// Call `f` on the arguments of every branch of `term` to `block`.
fn for_each_call_to(
    term: &mut InstData,
    block: Block,
    mut f: impl FnMut(&mut SmallVec<[Value; 4]>),
) {
    match term {
        InstData::Jump { dest } if dest.block == block => f(&mut dest.args),
        InstData::Brif {
            then_dest,
            else_dest,
            ..
        } => {
            if then_dest.block == block {
                f(&mut then_dest.args);
            }
            if else_dest.block == block {
                f(&mut else_dest.args);
            }
        }
        _ => {}
    }
}
