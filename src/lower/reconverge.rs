//! Reconvergence: `SSY` / `SYNC` around branches that may diverge, so that the lanes of a warp
//! that took different paths run together again where the paths meet.
//!
//! In: [`uniform_branches`] reads an IR function and says which `brif`s have a warp-uniform
//! condition (selection marks those branches [`Sm50Inst::uniform`](super::Sm50Inst)).
//! [`insert_reconvergence`] reads the allocated, flattened blocks of `lower::emit` (every block
//! ending in explicit `BRA`s or `EXIT`, moves and spills already in place) with one flag per
//! block: "ends in a branch that may diverge". Out: the same blocks with `SSY` pushed before
//! those branches and the `BRA`s that arrive at a reconvergence point turned into `SYNC`.
//! [`fold_trivial_targets`] then turns a branch to a block that is only `SYNC` or `EXIT` into
//! that instruction under the branch's guard (`@P0 SYNC`, `@P0 EXIT`, as ptxas writes them)
//! and drops the blocks nothing reaches any more.
//!
//! # The machine model (sm50-isa.md, and `sim`'s essay)
//!
//! A warp has one program counter and an active mask. A branch whose guard holds in only some
//! active lanes pushes the other lanes (with the fall-through address) on the warp's
//! divergence stack and runs the taken lanes. `SSY target` pushes a token (target, active
//! mask). `SYNC` parks the lanes that execute it; when no active lane is left, the innermost
//! stack entry resumes: a pending branch side, or, once every side is done, the token, which
//! restarts all its lanes at `target`. `EXIT` removes lanes from every entry. Without a token
//! nothing ever reconverges: the two sides of a branch run one after the other to `EXIT`,
//! every instruction after the join twice, which is wrong for `BAR.SYNC` (hardware counts a
//! warp's arrival once), `SHFL` and `VOTE`, and slow everywhere.
//!
//! # Which branches (uniformity, [`uniform_branches`])
//!
//! A value is *uniform* when it is computed only from constants, kernel parameters,
//! `%ntid`/`%ctaid`/`%nctaid`/`%gridid`/`%warpid`/`%nwarpid`, `.param`/`.const` loads at uniform
//! addresses, and pure operations on uniform values. A block parameter is uniform when every
//! incoming value is and no divergent branch can reach its block from two sides: parameters of
//! the blocks a divergent branch reaches before its reconvergence point, and of that point, are
//! divergent. When a divergent branch lies on a cycle that avoids its reconvergence point (a
//! loop with a divergent exit), lanes leave the loop in different iterations, so every value
//! defined in the loop is divergent after it. This is iterated to a fixpoint. Everything else
//! (`%tid`, `%laneid`, memory other than `.param`/`.const`, any instruction this pass does
//! not know) is divergent. `bra.uni` is not recorded by the IR, so it earns nothing here:
//! being conservative costs an `SSY`, never correctness.
//!
//! # Where `SSY` and `SYNC` go ([`insert_reconvergence`])
//!
//! Rules, checked against ptxas 11.8 (`ptxas -arch sm_50`, `cuobjdump -sass`):
//! 1. For a divergent branch in block B, the reconvergence point R is B's immediate
//!    post-dominator (a virtual exit node post-dominates every `EXIT`). When R is that virtual
//!    exit, or a block that is nothing but `EXIT` (the sides meet only by exiting: `@P0
//!    EXIT`, an early `ret` in divergent code), no token is pushed, as ptxas does.
//! 2. The token is pushed in the *site* block S: B itself, unless B lies on a cycle that
//!    avoids R (a loop whose exit diverges); then S is the nearest dominator of B that R
//!    post-dominates and that no such cycle contains (the loop's preheader: ptxas's `SSY`
//!    before the loop, `@P0 SYNC` at the break and `SYNC` after the back edge). A token pushed
//!    inside the loop would be pushed once per iteration and popped once.
//! 3. The *region* of a site is every block reachable from S without passing R. S must
//!    dominate its region (no lane enters it without the token); otherwise the branch gets no
//!    token. A site inside the region of another site with the same R is dropped: one token
//!    serves every divergent branch of the region (every lane still reaches R through one
//!    `SYNC`, and `SYNC` resumes pending sides before it pops the token).
//! 4. `SYNC` replaces every branch from a region block to R (a guarded `BRA` becomes a guarded
//!    `SYNC`). Since the allocator splits critical edges and puts an edge's moves before the
//!    branch that ends it, the moves into R's parameters run before the lanes park: nothing
//!    the allocator inserts can land between a `SYNC` and its reconvergence point.
//! 5. Nested regions nest: an inner region's R is inside the outer region (or is the outer's
//!    R, rule 3). Several tokens pushed in one block go outer (farther R) first.
//! 6. Break loops ([`break_loops`]). Rule 2 alone fails a loop whose exit lies on one side of
//!    a divergent branch inside it (`if (c) { ..; if (d) break; } ..`, or an exit that is the
//!    only way out, so the branch's post-dominator is the exiting block): the branch's point
//!    is after the loop (or is reached only round the back edge), its token goes before the
//!    loop, and lanes that took different sides in one iteration run every later iteration
//!    apart (MC-GPU's `track_particles` ran its skip-ahead loops 9 times over). As ptxas
//!    does, such a loop, when it has one way in (a preheader whose only successor is the
//!    header) and one exit block X, gets `PBK X` in its preheader and every exit edge becomes
//!    `BRK` (a break token: `BRK` drops the breaking lanes from every token above it). The
//!    branches are then placed by rules 1-5 on the loop's [`iteration_view`] (exit edges
//!    gone, back edges sent to X), so they reconverge within the iteration. The symbolic walk
//!    models `BRK` (to the innermost break token, whose target must be the edge's); a loop
//!    is kept only if its breaks verify, and the whole placement only if it is free of the
//!    error below; otherwise the placement without break loops stands. Trade-off: one `PBK`
//!    per entry into the loop, for reconvergence in every iteration.
//!
//! The result is verified, not trusted: a symbolic walk over the CFG carries the stack of
//! pending reconvergence targets, pops it on each `SYNC` edge, and requires every block to be
//! entered with one and the same stack from every predecessor, and no branch to reach a target
//! buried under another token. When the placement of every branch's nearest point does not
//! verify (a point inside a loop whose back edge re-enters the region: lanes would come back
//! without the token), branches are placed one at a time, each at its nearest post-dominator
//! that still verifies with those kept so far (so a farther point, after the loop), or at
//! none. A branch without its own token reconverges at the enclosing token's point, or never:
//! harmless for ordinary instructions (the sides run one after the other), wrong for those
//! that count the warp's lanes together (`BAR`, `SHFL`, `VOTE`, `B2R`). If one of those lies
//! between the branch's nearest point and where its lanes actually meet, the kernel is refused
//! with an error rather than compiled wrong.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::Flat;
use crate::ir::{self, Function, InstData, Space, SpecialReg, Value};
use crate::machinst::BlockId;
use crate::sm50::{self, Field, Form};
use cranelift_entity::EntityRef;

// ----------------------------------------------------------------------------- CFG analyses

/// Reverse postorder of the nodes reachable from `root` along `next`.
fn rpo(root: usize, next: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; next.len()];
    let mut post = Vec::new();
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some(&mut (n, ref mut i)) = stack.last_mut() {
        if let Some(&s) = next[n].get(*i) {
            *i += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(n);
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// Immediate dominators over `next` from `root` (Cooper, Harvey and Kennedy, "A Simple, Fast
/// Dominance Algorithm"); `prev` are the reverse edges. `None` for unreachable nodes; the root
/// is its own.
fn idoms(root: usize, next: &[Vec<usize>], prev: &[Vec<usize>]) -> Vec<Option<usize>> {
    let order = rpo(root, next);
    let mut index = vec![usize::MAX; next.len()];
    for (k, &n) in order.iter().enumerate() {
        index[n] = k;
    }
    let mut idom: Vec<Option<usize>> = vec![None; next.len()];
    idom[root] = Some(root);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &order[1..] {
            let mut new: Option<usize> = None;
            for &p in &prev[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while index[a] > index[c] {
                                a = idom[a].unwrap_or(root);
                            }
                            while index[c] > index[a] {
                                c = idom[c].unwrap_or(root);
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// A function's control flow: successors per node (node 0 the entry), dominators and
/// post-dominators (the virtual exit is node `n`).
struct Cfg {
    succs: Vec<Vec<usize>>,
    idom: Vec<Option<usize>>,
    ipdom: Vec<Option<usize>>,
    /// Preorder interval `[enter, leave)` of each node in the dominator tree: `a` dominates
    /// `b` iff `b`'s enter number lies in `a`'s interval (O(1) instead of a walk up `idom`).
    /// Unreachable nodes get an empty interval.
    dom_interval: Vec<(u32, u32)>,
    /// The same for the post-dominator tree (`ipdom`, the virtual exit included).
    pdom_interval: Vec<(u32, u32)>,
    /// Scratch for [`Cfg::region`]: `seen[b] == stamp` marks a block of the current walk, so
    /// that a walk costs its region's size, not the function's; and the walk's queue.
    seen: std::cell::RefCell<(Vec<u32>, u32, Vec<usize>)>,
    /// [`Cfg::site`]'s steps that did not end the search, by (candidate site, point): `true`
    /// when the candidate lies on a cycle of its region (try its dominator), `false` when it
    /// fails. Branches of one loop climb the same dominators towards the same points, and
    /// each such step walks the whole loop: remembered, it is walked once.
    steps: std::cell::RefCell<HashMap<(usize, usize), bool>>,
}

/// Whether `b` lies in `a`'s subtree, given [`tree_intervals`].
fn within(interval: &[(u32, u32)], a: usize, b: usize) -> bool {
    let (ea, la) = interval[a];
    let eb = interval[b].0;
    a == b || (eb != u32::MAX && ea <= eb && eb < la)
}

/// Preorder intervals of the tree given by `parent` (a root is its own parent or has none).
fn tree_intervals(parent: &[Option<usize>]) -> Vec<(u32, u32)> {
    let n = parent.len();
    // Children in one array, each node's in increasing order: `kids[first[p]..first[p + 1]]`.
    let mut first = vec![0usize; n + 1];
    let mut roots = Vec::new();
    for (b, p) in parent.iter().enumerate() {
        match *p {
            Some(p) if p != b => first[p + 1] += 1,
            Some(_) => roots.push(b),
            None => {}
        }
    }
    for k in 1..=n {
        first[k] += first[k - 1];
    }
    let mut kids = vec![0usize; first[n]];
    let mut fill = first.clone();
    for (b, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            if p != b {
                kids[fill[p]] = b;
                fill[p] += 1;
            }
        }
    }
    let children = |b: usize| &kids[first[b]..first[b + 1]];
    let mut interval = vec![(u32::MAX, u32::MAX); n];
    let mut clock = 0u32;
    for root in roots {
        let mut stack = vec![(root, 0usize)];
        interval[root].0 = clock;
        clock += 1;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&c) = children(b).get(*i) {
                *i += 1;
                interval[c].0 = clock;
                clock += 1;
                stack.push((c, 0));
            } else {
                interval[b].1 = clock;
                stack.pop();
            }
        }
    }
    interval
}

impl Cfg {
    fn new(mut succs: Vec<Vec<usize>>) -> Cfg {
        let n = succs.len();
        // Each successor once, first occurrences kept (lists are a block's branch targets:
        // a scan of the earlier ones is cheaper than a set).
        for s in &mut succs {
            let mut k = 0;
            while k < s.len() {
                if s[..k].contains(&s[k]) {
                    s.remove(k);
                } else {
                    k += 1;
                }
            }
        }
        let mut preds = vec![Vec::new(); n];
        for (u, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(u);
            }
        }
        let idom = if n == 0 {
            Vec::new()
        } else {
            idoms(0, &succs, &preds)
        };
        // The reverse graph with a virtual exit `n` that every exiting block leads to.
        let mut rnext = preds;
        let mut rprev = succs.clone();
        rnext.push((0..n).filter(|&u| succs[u].is_empty()).collect());
        rprev.push(Vec::new());
        for u in 0..n {
            if succs[u].is_empty() {
                rprev[u].push(n);
            }
        }
        let ipdom = idoms(n, &rnext, &rprev);
        let dom_interval = tree_intervals(&idom);
        let pdom_interval = tree_intervals(&ipdom);
        Cfg {
            seen: std::cell::RefCell::new((vec![0; n], 0, Vec::new())),
            steps: std::cell::RefCell::new(HashMap::default()),
            succs,
            idom,
            ipdom,
            dom_interval,
            pdom_interval,
        }
    }

    /// Whether `a` dominates `b` (both reachable; an unreachable node dominates nothing and
    /// is dominated by nothing but itself).
    fn dominates(&self, a: usize, b: usize) -> bool {
        within(&self.dom_interval, a, b)
    }

    /// Whether `a` post-dominates `b` (the virtual exit is node `n`).
    fn post_dominates(&self, a: usize, b: usize) -> bool {
        within(&self.pdom_interval, a, b)
    }

    fn exit(&self) -> usize {
        self.succs.len()
    }

    /// Blocks reachable from `s`'s successors without passing `r`, in no particular order;
    /// until the next call, [`Cfg::in_last_region`] tests membership in O(1).
    fn region(&self, s: usize, r: usize) -> Vec<usize> {
        let mut members = Vec::new();
        self.walk_region(s, r, |b| {
            members.push(b);
            true
        });
        members
    }

    /// Visit each block of the region of (`s`, `r`) once (see [`Cfg::region`]), in no
    /// particular order, until `visit` returns false; whether the walk went to the end.
    /// A block is marked when it is queued (so the queue never holds it twice), and the
    /// scratch queue is reused: a walk allocates nothing.
    fn walk_region(&self, s: usize, r: usize, mut visit: impl FnMut(usize) -> bool) -> bool {
        let mut scratch = self.seen.borrow_mut();
        let (seen, stamp, work) = &mut *scratch;
        *stamp = stamp.wrapping_add(1);
        if *stamp == 0 {
            seen.fill(0);
            *stamp = 1;
        }
        let stamp = *stamp;
        work.clear();
        let queue = |b: usize, seen: &mut Vec<u32>, work: &mut Vec<usize>| {
            if b != r && seen[b] != stamp {
                seen[b] = stamp;
                work.push(b);
            }
        };
        for &c in &self.succs[s] {
            queue(c, seen, work);
        }
        while let Some(b) = work.pop() {
            if !visit(b) {
                return false;
            }
            for &c in &self.succs[b] {
                queue(c, seen, work);
            }
        }
        true
    }

    /// Whether `b` belongs to the region the last [`Cfg::region`] call returned.
    fn in_last_region(&self, b: usize) -> bool {
        let scratch = self.seen.borrow();
        scratch.0[b] == scratch.1
    }

    /// Depth of `b` in the post-dominator tree (the virtual exit is 0).
    fn pdom_depth(&self, mut b: usize) -> usize {
        let mut d = 0;
        while let Some(p) = self.ipdom[b] {
            if p == b {
                break;
            }
            b = p;
            d += 1;
        }
        d
    }

    /// The site for a divergent branch in `b` reconverging at `r` (rule 2), if any.
    fn site(&self, b: usize, r: usize) -> Option<(usize, Vec<usize>)> {
        let mut s = b;
        loop {
            if !self.post_dominates(r, s) {
                return None;
            }
            let known = self.steps.borrow().get(&(s, r)).copied();
            match known {
                Some(false) => return None,
                Some(true) => match self.idom[s] {
                    Some(p) if p != s => {
                        s = p;
                        continue;
                    }
                    _ => return None,
                },
                None => {}
            }
            // One walk answers both questions: whether `s` lies on a cycle inside its region
            // (then try the dominator), and otherwise whether `s` dominates every block of
            // the region (its blocks are kept only while it does).
            let mut region = Vec::new();
            let mut escaped = false;
            let s_outside = self.walk_region(s, r, |k| {
                if k == s {
                    return false;
                }
                escaped |= !self.dominates(s, k);
                if !escaped {
                    region.push(k);
                }
                true
            });
            if s_outside {
                if escaped {
                    self.steps.borrow_mut().insert((s, r), false);
                    return None;
                }
                sort_blocks(&mut region, self.succs.len());
                return Some((s, region));
            }
            self.steps.borrow_mut().insert((s, r), true);
            match self.idom[s] {
                Some(p) if p != s => s = p,
                _ => return None,
            }
        }
    }
}

// ------------------------------------------------------------------------------ uniformity

/// Whether an instruction's results are divergent whatever its operands are. With `loads`,
/// a `.global` or `.shared` load is uniform at a uniform address (every lane reads the same
/// word in one instruction), as ptxas 11.8's rule for texture handles has it; bit operations
/// (`bfi`, `bfe`, ...) are then uniform on uniform operands too, which a texture-and-sampler
/// handle combined in registers (`shl`, `bfi`) needs. (For branches, the rule without `loads`,
/// bit operations stay divergent sources: uniform branches decide where `SSY`/`SYNC` go, and
/// that rule has not been re-measured with them.)
fn source_divergent(d: &InstData, loads: bool) -> bool {
    match d {
        InstData::Bits { .. } if loads => false,
        InstData::Iconst { .. }
        | InstData::Fconst { .. }
        | InstData::LoadParam { .. }
        | InstData::SymbolAddr { .. }
        | InstData::KernelDesc { .. }
        | InstData::Unary { .. }
        | InstData::Binary { .. }
        | InstData::MulWide { .. }
        | InstData::Convert { .. }
        | InstData::Select { .. }
        | InstData::Icmp { .. }
        | InstData::Cvta { .. } => false,
        InstData::SpecialReg { reg } => !matches!(
            reg,
            SpecialReg::Ntid(_)
                | SpecialReg::Ctaid(_)
                | SpecialReg::Nctaid(_)
                | SpecialReg::GridId
                | SpecialReg::WarpId
                | SpecialReg::NWarpId
        ),
        InstData::Load { space, .. } => match space {
            Space::Param | Space::Const => false,
            Space::Global | Space::Shared => !loads,
            Space::Local | Space::Generic => true,
        },
        // Anything else that has results (memory with side effects, instructions added
        // later): divergent until shown otherwise.
        _ => true,
    }
}

/// What a value joining the divergent set makes divergent in [`uniform_branches`].
#[derive(Clone, Copy)]
enum Trigger {
    /// The results of an instruction using it.
    Results(ir::Inst),
    /// A block parameter it is an incoming value of.
    Param(Value),
    /// The divergence region of the `brif` ending layout block `k`, which it decides.
    Branch(usize),
}

/// A set of values as one flag per value.
pub(crate) struct DenseSet(Vec<bool>);

impl DenseSet {
    fn new(n: usize) -> DenseSet {
        DenseSet(vec![false; n])
    }

    pub(crate) fn contains(&self, v: &Value) -> bool {
        self.0.get(v.index()).copied().unwrap_or(false)
    }

    /// Add `v`; whether it was not in the set before.
    fn insert(&mut self, v: Value) -> bool {
        if v.index() >= self.0.len() {
            self.0.resize(v.index() + 1, false);
        }
        !std::mem::replace(&mut self.0[v.index()], true)
    }
}

/// The `brif` instructions of `f` whose condition is warp-uniform (see the module essay).
pub fn uniform_branches(f: &Function) -> HashSet<ir::Inst> {
    let divergent = divergent_values(f, false);
    f.layout
        .iter()
        .filter_map(
            |&b| match f.blocks[b].insts.last().map(|&i| (i, &f.insts[i].data)) {
                Some((i, InstData::Brif { cond, .. })) if !divergent.contains(cond) => Some(i),
                _ => None,
            },
        )
        .collect()
}

/// The values of `f` that may differ between the lanes of a warp, by the rules of
/// [`uniform_branches`]; with `loads`, also taking `.global`/`.shared` loads at uniform
/// addresses as uniform ([`source_divergent`]). `lower::select::tex` asks this (with
/// `loads`) whether a texture handle needs the per-quad split.
pub(crate) fn divergent_values(f: &Function, loads: bool) -> DenseSet {
    let index: HashMap<ir::Block, usize> =
        f.layout.iter().enumerate().map(|(k, &b)| (b, k)).collect();
    let term = |b: ir::Block| f.blocks[b].insts.last().map(|&i| (i, &f.insts[i].data));
    let succs: Vec<Vec<usize>> = f
        .layout
        .iter()
        .map(|&b| {
            term(b).map_or(Vec::new(), |(_, d)| {
                d.targets()
                    .iter()
                    .filter_map(|t| index.get(&t.block).copied())
                    .collect()
            })
        })
        .collect();
    let cfg = Cfg::new(succs);
    // The least fixpoint of the rules in the module essay, by a worklist: each value is
    // marked divergent once, and only then are the rules that read it applied (to the
    // instructions using it, the block parameters it flows into, the branches it decides).
    // Every rule only adds to the set, and a rule is applied again whenever one of its inputs
    // joins the set, so the result is the same set that rescanning the whole function until
    // nothing changed gave, at the cost of one pass instead of one per round.
    // `uses`: (value index, what it triggers), grouped by value below.
    let mut uses: Vec<(usize, Trigger)> = Vec::new();
    let mut divergent = DenseSet::new(f.values.len());
    let mut work: Vec<Value> = Vec::new();
    let mark = |v: Value, divergent: &mut DenseSet, work: &mut Vec<Value>| {
        if divergent.insert(v) {
            work.push(v);
        }
    };
    for (k, &b) in f.layout.iter().enumerate() {
        for &i in &f.blocks[b].insts {
            let node = &f.insts[i];
            if node.results.is_empty() {
                continue;
            }
            if source_divergent(&node.data, loads) {
                for &v in &node.results {
                    mark(v, &mut divergent, &mut work);
                }
            } else {
                for part in node.data.operand_parts() {
                    for &v in part {
                        uses.push((v.index(), Trigger::Results(i)));
                    }
                }
            }
        }
        if let Some((_, d)) = term(b) {
            for t in d.targets() {
                // (block parameter, incoming value) pairs.
                for (&p, &a) in f.blocks[t.block].params.iter().zip(&t.args) {
                    uses.push((a.index(), Trigger::Param(p)));
                }
            }
            if let InstData::Brif { cond, .. } = d {
                uses.push((cond.index(), Trigger::Branch(k)));
            }
        }
    }
    // Group by value (a counting sort: `start[v]..start[v + 1]` are `v`'s triggers).
    // Every value (result, parameter) is a key of `f.values`; operands too in verified IR.
    let nv = uses
        .iter()
        .map(|&(v, _)| v + 1)
        .fold(f.values.len(), usize::max);
    let mut start = vec![0usize; nv + 2];
    for &(v, _) in &uses {
        start[v + 2] += 1;
    }
    for v in 2..start.len() {
        start[v] += start[v - 1];
    }
    let mut grouped = vec![Trigger::Branch(0); uses.len()];
    for &(v, t) in &uses {
        grouped[start[v + 1]] = t;
        start[v + 1] += 1;
    }
    // Divergent branches already accounted for (their regions only grow the set once).
    let mut done = vec![false; f.layout.len()];
    let mut params_done = vec![false; f.layout.len()];
    let mut results_done = vec![false; f.layout.len()];
    while let Some(v) = work.pop() {
        for t in (start[v.index()]..start[v.index() + 1]).map(|j| grouped[j]) {
            match t {
                Trigger::Results(i) => {
                    for &r in &f.insts[i].results {
                        mark(r, &mut divergent, &mut work);
                    }
                }
                Trigger::Param(p) => mark(p, &mut divergent, &mut work),
                Trigger::Branch(k) => {
                    if std::mem::replace(&mut done[k], true) {
                        continue;
                    }
                    let r = cfg.ipdom[k].unwrap_or(cfg.exit());
                    let region = cfg.region(k, r);
                    let cyclic = cfg.in_last_region(k);
                    // A block's parameters (results) marked once are not visited again:
                    // regions of nested branches overlap.
                    for j in region
                        .iter()
                        .copied()
                        .chain((r < f.layout.len()).then_some(r))
                    {
                        let blk = f.layout[j];
                        if !std::mem::replace(&mut params_done[j], true) {
                            for &p in &f.blocks[blk].params {
                                mark(p, &mut divergent, &mut work);
                            }
                        }
                        if cyclic && j != r && !std::mem::replace(&mut results_done[j], true) {
                            for &i in &f.blocks[blk].insts {
                                for &r in &f.insts[i].results {
                                    mark(r, &mut divergent, &mut work);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    divergent
}

// ------------------------------------------------------------------ SSY / SYNC placement

fn is_bra(i: &sm50::Inst) -> bool {
    i.form == Form::BRA
}

/// `inst`'s guard copied onto a fresh instruction of `form`.
fn guarded(form: Form, inst: &sm50::Inst) -> sm50::Inst {
    sm50::Inst::new(form)
        .with(Field::Pg, inst.get(Field::Pg).unwrap_or(7))
        .with(Field::Pgn, inst.get(Field::Pgn).unwrap_or(0))
}

/// Push tokens and turn branches into `SYNC` (see the module essay). `divergent[k]`: block
/// `k` ends in a conditional branch that may diverge.
///
/// Each divergent branch has candidate placements: its site for its immediate post-dominator
/// (rule 1), then for each farther post-dominator in turn. All first candidates are tried
/// together; when that set does not verify (a reconvergence point inside a loop that leads
/// back into the region, say), placements are chosen one branch at a time, keeping each
/// branch's first candidate that still verifies with those kept so far. A branch left without
/// a token runs its sides one after the other up to the enclosing token's point (or to
/// `EXIT`): harmless, unless an instruction that needs the whole warp (`BAR`, `SHFL`, `VOTE`,
/// `B2R`) lies on that way: then the result is `Err` naming the block, and the caller must
/// not use the code. On `Err` and on success alike, `blocks` holds a verified placement.
pub(super) fn insert_reconvergence(
    blocks: &mut [(BlockId, Flat)],
    divergent: &[bool],
) -> Result<(), String> {
    let index: HashMap<BlockId, usize> = blocks.iter().enumerate().map(|(k, b)| (b.0, k)).collect();
    // Per block: (position, target) of each branch.
    let edges: Vec<Vec<(usize, usize)>> = blocks
        .iter()
        .map(|(_, insts)| {
            insts
                .iter()
                .enumerate()
                .filter(|(_, (i, _))| is_bra(i))
                .filter_map(|(p, (_, t))| t.and_then(|t| index.get(&t)).map(|&k| (p, k)))
                .collect()
        })
        .collect();
    let cfg = Cfg::new(
        edges
            .iter()
            .map(|e| e.iter().map(|&(_, k)| k).collect())
            .collect(),
    );
    // The symbolic walk's block order, the same for every placement tried.
    let order = if blocks.is_empty() {
        Vec::new()
    } else {
        rpo(0, &cfg.succs)
    };
    // Rule 6 first: loops whose exits break (`PBK`/`BRK`), so that the branches inside them
    // reconverge in every iteration. Kept only when it places without error; otherwise the
    // placement without break loops stands.
    let loops = break_loops(&cfg, &order, &edges);
    if !loops.is_empty() {
        let inner = Cfg::new(iteration_view(&cfg, &loops));
        let (placed, result) = place(blocks, divergent, &edges, &inner, &order, &loops);
        if result.is_ok() {
            apply(blocks, &placed);
            return result;
        }
    }
    let (placed, result) = place(blocks, divergent, &edges, &cfg, &order, &[]);
    apply(blocks, &placed);
    result
}

/// The placement of [`insert_reconvergence`] over `cfg` (the branches' graph, or its
/// [`iteration_view`] of `loops`), and whether it may be used.
fn place(
    blocks: &[(BlockId, Flat)],
    divergent: &[bool],
    edges: &[Vec<(usize, usize)>],
    cfg: &Cfg,
    order: &[usize],
    loops: &[BreakLoop],
) -> (Placement, Result<(), String>) {
    let exits_only = |r: usize| exits_only(blocks, cfg, r);
    // Candidate sites per divergent branch, nearest reconvergence point first: up to
    // `MAX_CANDIDATES` sites along the branch's post-dominator chain. Each site walks its
    // region, and the farther points' regions are the larger ones, so the list is filled in
    // two steps: first up to its first site (all that the common case, where the first
    // candidates verify together, looks at), the rest only when those do not verify. The
    // lists are the same as filled in one go: [`Cfg::site`] depends only on the CFG.
    let mut candidates = first_candidates(blocks, divergent, cfg);
    for c in &mut candidates {
        c.fill(cfg, &exits_only, 1);
    }
    let firsts: Vec<&Site> = candidates.iter().filter_map(|c| c.list.first()).collect();
    if let Some(placed) = walk(cfg, order, edges, &firsts, loops) {
        return (placed, Ok(()));
    }
    for c in &mut candidates {
        c.fill(cfg, &exits_only, MAX_CANDIDATES);
    }
    let mut chosen: Vec<&Site> = Vec::new();
    let mut placed =
        walk(cfg, order, edges, &chosen, loops).expect("a placement without tokens verifies");
    for Candidates { list, .. } in &candidates {
        for site in list {
            if chosen.iter().any(|c| c.s == site.s && c.r == site.r) {
                break;
            }
            chosen.push(site);
            match walk(cfg, order, edges, &chosen, loops) {
                Some(p) => {
                    placed = p;
                    break;
                }
                None => {
                    chosen.pop();
                }
            }
        }
    }
    // A branch's lanes now meet at the innermost token on the stack as its block ends (or
    // never; a break token's lanes meet at the loop's exit). Where that is not its immediate
    // post-dominator, the way from there to the meeting point runs with the warp split:
    // nothing on it may need the whole warp.
    for Candidates { k, .. } in &candidates {
        let (Some(r0), Some(entry)) = (cfg.ipdom[*k], placed.state[*k]) else {
            continue;
        };
        let meet = placed.pushes[*k]
            .last()
            .copied()
            .or(placed.stacks.top(entry))
            .map(|t| t & !BREAK_TOKEN);
        if meet == Some(r0) {
            continue;
        }
        let mut seen = vec![false; blocks.len()];
        let mut work = vec![r0];
        while let Some(b) = work.pop() {
            if Some(b) == meet || b >= blocks.len() || seen[b] {
                continue;
            }
            seen[b] = true;
            if let Some((i, _)) = blocks[b].1.iter().find(|(i, _)| needs_whole_warp(i)) {
                let error = format!(
                    "no reconvergence point could be placed for a divergent branch, and a \
                     {:?} after it would run with the warp split",
                    i.form
                );
                return (placed, Err(error));
            }
            work.extend(cfg.succs[b].iter().copied());
        }
    }
    (placed, Ok(()))
}

/// Whether the sides of a branch that meet at `r` meet only to exit: `r` is the virtual exit
/// or a block that is nothing but `EXIT` (rule 1).
fn exits_only(blocks: &[(BlockId, Flat)], cfg: &Cfg, r: usize) -> bool {
    r == cfg.exit() || matches!(blocks[r].1.as_slice(), [(i, None)] if bare(i, Form::EXIT))
}

/// One (still empty) candidate list per divergent branch of `cfg` whose sides meet before
/// they exit.
fn first_candidates(blocks: &[(BlockId, Flat)], divergent: &[bool], cfg: &Cfg) -> Vec<Candidates> {
    (0..blocks.len())
        .filter(|&k| divergent.get(k).copied().unwrap_or(false) && cfg.succs[k].len() >= 2)
        // Sides that meet only to exit need not meet at all (rule 1).
        .filter(|&k| cfg.ipdom[k].is_some_and(|t| !exits_only(blocks, cfg, t)))
        .map(|k| Candidates {
            k,
            list: Vec::new(),
            next: cfg.ipdom[k],
        })
        .collect()
}

/// A loop whose exits become `BRK` (rule 6): `PBK exit` is pushed in `pre`, the loop's only
/// way in, and every branch from a block of `body` (sorted) to `exit` breaks.
struct BreakLoop {
    pre: usize,
    header: usize,
    exit: usize,
    body: Vec<usize>,
}

/// Token targets of `PBK`s on the symbolic walk's stacks: the exit block with this bit set,
/// so that no `SYNC` or branch target is ever taken for one.
const BREAK_TOKEN: usize = 1 << 40;

/// The natural loops that rule 6 turns into `PBK`/`BRK` loops: one entry edge, from a
/// preheader whose only successor is the header; every exit edge to one block; and some
/// branch inside whose sides meet again within an iteration but, in the whole graph, only
/// after the loop (a side that may leave the loop). Without the break token such a branch
/// would reconverge after the loop: the lanes that took different sides in one iteration
/// would run every later iteration apart.
fn break_loops(cfg: &Cfg, order: &[usize], edges: &[Vec<(usize, usize)>]) -> Vec<BreakLoop> {
    let n = cfg.succs.len();
    let mut preds = vec![Vec::new(); n];
    for (u, ss) in cfg.succs.iter().enumerate() {
        for &s in ss {
            preds[s].push(u);
        }
    }
    let mut loops = Vec::new();
    for h in 0..n {
        let latches: Vec<usize> = preds[h]
            .iter()
            .copied()
            .filter(|&t| cfg.dominates(h, t))
            .collect();
        if latches.is_empty() {
            continue;
        }
        // The natural loop: `h` and every block that reaches a latch without passing `h`.
        let mut member = vec![false; n];
        member[h] = true;
        let mut work = latches.clone();
        while let Some(b) = work.pop() {
            if !member[b] {
                member[b] = true;
                work.extend(preds[b].iter().copied());
            }
        }
        let outside: Vec<usize> = preds[h].iter().copied().filter(|&p| !member[p]).collect();
        let [pre] = outside[..] else { continue };
        if cfg.succs[pre] != [h] {
            continue;
        }
        let body: Vec<usize> = (0..n).filter(|&b| member[b]).collect();
        let mut exits = body
            .iter()
            .flat_map(|&b| cfg.succs[b].iter().copied())
            .filter(|&s| !member[s]);
        let Some(exit) = exits.next() else { continue };
        if exits.any(|s| s != exit) {
            continue;
        }
        // Needed: a branch with both sides in the loop whose sides meet only after it, or
        // at a point (the exiting block) that one side passes only after going round this
        // loop's back edge. (An inner loop's own exit branch, whose sides meet at the inner
        // loop's exit, is rule 2's: a token before the inner loop serves it.)
        // A side that is itself the back edge (or the edge block the allocator split it
        // into) meets the other only in the next iteration: such a branch gains nothing.
        let back_edge = |b: usize, s: usize| s == h || (cfg.succs[s] == [h] && preds[s] == [b]);
        let needed = body.iter().any(|&b| {
            cfg.succs[b].iter().filter(|&&s| member[s]).count() >= 2
                && !cfg.succs[b].iter().any(|&s| back_edge(b, s))
                && cfg.ipdom[b]
                    .is_some_and(|r| r >= n || !member[r] || !cfg.walk_region(b, r, |k| k != h))
        });
        if needed {
            // Kept when its breaks verify together with the loops kept so far (the exit is
            // entered with one stack from the breaks and from its other predecessors).
            loops.push(BreakLoop {
                pre,
                header: h,
                exit,
                body,
            });
            if walk(cfg, order, edges, &[], &loops).is_none() {
                loops.pop();
            }
        }
    }
    loops
}

/// The successors seen from within one iteration of each break loop: its exit edges gone
/// (the lanes that take one leave every token inside the loop) and its back edges going to
/// its exit instead (the next iteration starts after this one's reconvergence points), so
/// that a branch inside reconverges where its sides meet again before the next iteration.
fn iteration_view(cfg: &Cfg, loops: &[BreakLoop]) -> Vec<Vec<usize>> {
    let mut succs = cfg.succs.clone();
    for l in loops {
        for &b in &l.body {
            let mut out: Vec<usize> = Vec::new();
            for &s in &succs[b] {
                let s = if s == l.header { l.exit } else { s };
                let leaves = s == l.exit && !cfg.succs[b].contains(&l.header);
                if !leaves && !out.contains(&s) {
                    out.push(s);
                }
            }
            succs[b] = out;
        }
    }
    succs
}

/// Turn the placement's branches into `SYNC` (positions unchanged), then push the `SSY`s
/// before each site's trailing branches.
fn apply(blocks: &mut [(BlockId, Flat)], placed: &Placement) {
    for &(u, pos) in &placed.syncs {
        let (inst, target) = &mut blocks[u].1[pos];
        *inst = guarded(Form::SYNC, inst);
        *target = None;
    }
    for &(u, pos) in &placed.breaks {
        let (inst, target) = &mut blocks[u].1[pos];
        *inst = guarded(Form::BRK, inst);
        *target = None;
    }
    let ids: Vec<BlockId> = blocks.iter().map(|b| b.0).collect();
    for (u, rs) in placed.pushes.iter().enumerate() {
        if rs.is_empty() {
            continue;
        }
        let insts = &mut blocks[u].1;
        // Before the block's closing transfers: its last instruction and the guarded ones
        // just before it (an unguarded `SYNC` earlier ends the per-quad handle split of
        // `select::tex`, which keeps its place).
        let mut at = insts.len();
        while at > 0
            && matches!(insts[at - 1].0.form, Form::BRA | Form::SYNC | Form::BRK)
            && (at == insts.len() || insts[at - 1].0.get(Field::Pg).unwrap_or(7) != 7)
        {
            at -= 1;
        }
        for (k, &r) in rs.iter().enumerate() {
            let form = if r & BREAK_TOKEN != 0 {
                Form::PBK
            } else {
                Form::SSY
            };
            insts.insert(at + k, (sm50::Inst::new(form), Some(ids[r & !BREAK_TOKEN])));
        }
    }
}

/// At most this many reconvergence points are tried per branch.
const MAX_CANDIDATES: usize = 4;

/// The candidate sites of the divergent branch ending block `k`, found so far.
struct Candidates {
    k: usize,
    list: Vec<Site>,
    /// The next post-dominator to try, `None` once the chain is done.
    next: Option<usize>,
}

impl Candidates {
    /// Walk on up `k`'s post-dominator chain until `list` holds `want` sites or the chain
    /// ends (at the virtual exit, or at a point where the sides only meet to exit).
    fn fill(&mut self, cfg: &Cfg, exits_only: &impl Fn(usize) -> bool, want: usize) {
        while self.list.len() < want {
            let Some(t) = self.next.filter(|&t| !exits_only(t)) else {
                self.next = None;
                return;
            };
            if let Some((s, region)) = cfg.site(self.k, t) {
                self.list.push(Site { s, r: t, region });
            }
            self.next = if self.list.len() == MAX_CANDIDATES {
                None
            } else {
                cfg.ipdom[t].filter(|&p| p != t)
            };
        }
    }
}

/// A candidate token: pushed in `s`, popped at `r`, covering `region` (rules 2 and 3;
/// sorted block indices).
struct Site {
    s: usize,
    r: usize,
    region: Vec<usize>,
}

/// Sort `v`, distinct block indices below `n`. A large region (a big kernel has thousands of
/// blocks, and its regions nearly as many) is sorted by flagging its blocks and reading the
/// flags in order, linear instead of `k log k` (the comparison sort was a visible share of
/// the whole compile); a small one by comparison, so that the flags cost no more than it.
fn sort_blocks(v: &mut Vec<usize>, n: usize) {
    if v.len() * 16 < n || v.iter().any(|&b| b >= n) {
        v.sort_unstable();
        return;
    }
    let mut flag = vec![false; n];
    for &b in v.iter() {
        flag[b] = true;
    }
    v.clear();
    v.extend((0..n).filter(|&b| flag[b]));
}

/// Whether block `b` is in `region` (sorted, as [`Cfg::region`] returns it).
fn in_region(region: &[usize], b: usize) -> bool {
    region.binary_search(&b).is_ok()
}

/// A verified placement: per block, the stack on entry (in `stacks`) and the targets it
/// pushes; the `(block, branch position)` pairs that become `SYNC`.
struct Placement {
    stacks: Stacks,
    state: Vec<Option<StackId>>,
    pushes: Vec<Vec<usize>>,
    syncs: HashSet<(usize, usize)>,
    /// The `(block, branch position)` pairs that become `BRK` (rule 6).
    breaks: HashSet<(usize, usize)>,
}

/// A stack of reconvergence targets, by its number in [`Stacks`].
type StackId = u32;

/// The stacks of pending targets the symbolic walk meets, each stored once as a node (its
/// top target and the stack below it), so that a block's stack is a number: copying it
/// allocates nothing, and two stacks are equal exactly when their numbers are (a stack is
/// only ever made by pushing onto a stack already stored, and each push is looked up
/// first). Stack 0 is the empty one.
struct Stacks {
    /// (the stack below, top target) of each stack but the empty one, at index `id - 1`.
    nodes: Vec<(StackId, usize)>,
    pushed: HashMap<(StackId, usize), StackId>,
}

impl Stacks {
    const EMPTY: StackId = 0;

    fn new() -> Stacks {
        Stacks {
            nodes: Vec::new(),
            pushed: HashMap::default(),
        }
    }

    fn push(&mut self, below: StackId, target: usize) -> StackId {
        let next = self.nodes.len() as StackId + 1;
        let id = *self.pushed.entry((below, target)).or_insert(next);
        if id == next {
            self.nodes.push((below, target));
        }
        id
    }

    fn top(&self, id: StackId) -> Option<usize> {
        (id != Self::EMPTY).then(|| self.nodes[id as usize - 1].1)
    }

    /// `id` without its top (the empty stack stays empty).
    fn pop(&self, id: StackId) -> StackId {
        if id == Self::EMPTY {
            id
        } else {
            self.nodes[id as usize - 1].0
        }
    }

    fn contains(&self, mut id: StackId, target: usize) -> bool {
        while id != Self::EMPTY {
            let (below, top) = self.nodes[id as usize - 1];
            if top == target {
                return true;
            }
            id = below;
        }
        false
    }
}

/// Instructions that count the warp's lanes together: a split warp would arrive twice.
fn needs_whole_warp(i: &sm50::Inst) -> bool {
    matches!(
        i.form,
        Form::BAR
            | Form::BAR_RED
            | Form::BARR_RA
            | Form::BARR_RB
            | Form::BARR_RR
            | Form::BARR_REDRA
            | Form::BARR_REDRB
            | Form::BARR_REDRR
            | Form::B2R
            | Form::VOTE
            | Form::SHFL_II
            | Form::SHFL_IR
            | Form::SHFL_RI
            | Form::SHFL_RR
    )
}

/// Rules 3 and 5 over `sites`, then the symbolic walk (see the module essay) over the blocks
/// in `order` (the reverse postorder of the CFG): `None` when a block would be entered with
/// two different stacks, or a branch would reach a target buried under another token.
fn walk(
    cfg: &Cfg,
    order: &[usize],
    edges: &[Vec<(usize, usize)>],
    sites: &[&Site],
    loops: &[BreakLoop],
) -> Option<Placement> {
    let n = edges.len();
    // Rule 3: one token per region and target.
    let kept: Vec<(usize, usize)> = sites
        .iter()
        .filter(|a| {
            !sites
                .iter()
                .any(|b| b.r == a.r && b.s != a.s && in_region(&b.region, a.s))
        })
        .map(|a| (a.s, a.r))
        .collect();
    // Rule 5: pushes per block, outer (nearer the exit in the post-dominator tree) first.
    let mut pushes: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(s, r) in &kept {
        if !pushes[s].contains(&r) {
            pushes[s].push(r);
        }
    }
    for p in &mut pushes {
        p.sort_by_key(|&r| (cfg.pdom_depth(r), r));
    }
    // Rule 6: a loop's break token is pushed after (inside) the preheader's other tokens.
    for l in loops {
        pushes[l.pre].push(BREAK_TOKEN | l.exit);
    }
    let mut stacks = Stacks::new();
    let mut state: Vec<Option<StackId>> = vec![None; n];
    let mut syncs: HashSet<(usize, usize)> = HashSet::default();
    let mut breaks: HashSet<(usize, usize)> = HashSet::default();
    if n == 0 {
        return Some(Placement {
            stacks,
            state,
            pushes,
            syncs,
            breaks,
        });
    }
    state[0] = Some(Stacks::EMPTY);
    for &u in order {
        let mut out = state[u]?;
        for &r in &pushes[u] {
            out = stacks.push(out, r);
        }
        for &(pos, s) in &edges[u] {
            let exit_edge = loops.iter().any(|l| l.exit == s && in_region(&l.body, u));
            let arriving = if exit_edge {
                // `BRK` goes to the innermost break token, dropping every token above it.
                let mut below = out;
                while stacks.top(below).is_some_and(|t| t & BREAK_TOKEN == 0) {
                    below = stacks.pop(below);
                }
                if stacks.top(below) != Some(BREAK_TOKEN | s) {
                    return None;
                }
                breaks.insert((u, pos));
                stacks.pop(below)
            } else if stacks.top(out) == Some(s) {
                syncs.insert((u, pos));
                stacks.pop(out)
            } else if stacks.contains(out, s) {
                return None;
            } else {
                out
            };
            match state[s] {
                None => state[s] = Some(arriving),
                Some(prev) if prev == arriving => {}
                Some(_) => return None,
            }
        }
    }
    Some(Placement {
        stacks,
        state,
        pushes,
        syncs,
        breaks,
    })
}

/// An unguarded instruction of `form`.
fn bare(i: &sm50::Inst, form: Form) -> bool {
    i.form == form && i.get(Field::Pg).unwrap_or(7) == 7 && i.get(Field::Pgn).unwrap_or(0) == 0
}

/// Branches to a block that holds nothing but `BRA x` go to `x`; a branch to a block that
/// holds nothing but `SYNC` or `EXIT` becomes that instruction under
/// the branch's guard; then blocks that no branch or `SSY` names any more go (every block
/// still ends in an unconditional transfer here, so none is entered by falling through).
/// The entry block always stays.
pub(super) fn fold_trivial_targets(blocks: &mut Vec<(BlockId, Flat)>) {
    // Jump threading first: a block that is only `BRA x` (an edge block that needed no
    // moves) sends its branches, and any `SSY` naming it, straight to `x`.
    let forward: HashMap<BlockId, BlockId> = blocks
        .iter()
        .filter_map(|(id, insts)| match insts.as_slice() {
            [(i, Some(t))] if bare(i, Form::BRA) && t != id => Some((*id, *t)),
            _ => None,
        })
        .collect();
    for (_, insts) in blocks.iter_mut() {
        for (_, target) in insts.iter_mut() {
            if let Some(t) = target {
                let mut hops = 0;
                while let Some(&next) = forward.get(t) {
                    // A cycle of empty jumps is an infinite loop; leave it as it is.
                    hops += 1;
                    if hops > forward.len() {
                        break;
                    }
                    *t = next;
                }
            }
        }
    }
    let trivial: HashMap<BlockId, Form> = blocks
        .iter()
        .filter_map(|(id, insts)| match insts.as_slice() {
            [(i, None)] if bare(i, Form::SYNC) => Some((*id, Form::SYNC)),
            [(i, None)] if bare(i, Form::EXIT) => Some((*id, Form::EXIT)),
            _ => None,
        })
        .collect();
    for (_, insts) in blocks.iter_mut() {
        for (inst, target) in insts.iter_mut() {
            if let Some(&form) = target.and_then(|t| trivial.get(&t)) {
                if is_bra(inst) {
                    *inst = guarded(form, inst);
                    *target = None;
                }
            }
        }
    }
    loop {
        let named: HashSet<BlockId> = blocks
            .iter()
            .flat_map(|(_, insts)| insts.iter().filter_map(|(_, t)| *t))
            .collect();
        let before = blocks.len();
        let mut first = true;
        blocks.retain(|(id, _)| std::mem::take(&mut first) || named.contains(id));
        if blocks.len() == before {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a` dominates `b` by walking up the tree: the definition the intervals replace.
    fn walk_up(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        }
    }

    /// Rule 2 as the module essay states it, with whole regions and tree walks: the
    /// reference for [`Cfg::site`], which stops its walks early.
    fn site_by_definition(cfg: &Cfg, b: usize, r: usize) -> Option<(usize, Vec<usize>)> {
        let mut s = b;
        loop {
            if !walk_up(&cfg.ipdom, r, s) {
                return None;
            }
            let mut region = cfg.region(s, r);
            region.sort_unstable();
            if region.binary_search(&s).is_err() {
                let dominated = region.iter().all(|&k| walk_up(&cfg.idom, s, k));
                return dominated.then_some((s, region));
            }
            match cfg.idom[s] {
                Some(p) if p != s => s = p,
                _ => return None,
            }
        }
    }

    /// On random graphs (a chain of blocks with random extra edges, some blocks unreachable),
    /// dominance and post-dominance by interval agree with the walk up the trees for every
    /// pair, regions hold exactly the blocks reachable without passing the target, and sites
    /// are those of the definition.
    #[test]
    fn intervals_agree_with_tree_walks() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for _ in 0..200 {
            let n = 1 + next(12);
            let succs: Vec<Vec<usize>> = (0..n)
                .map(|b| {
                    let mut s = Vec::new();
                    if b + 1 < n && next(4) != 0 {
                        s.push(b + 1);
                    }
                    for _ in 0..next(3) {
                        s.push(next(n));
                    }
                    s
                })
                .collect();
            let cfg = Cfg::new(succs.clone());
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(
                        cfg.dominates(a, b),
                        walk_up(&cfg.idom, a, b),
                        "{succs:?} {a} {b}"
                    );
                }
            }
            for a in 0..=n {
                for b in 0..=n {
                    assert_eq!(
                        cfg.post_dominates(a, b),
                        walk_up(&cfg.ipdom, a, b),
                        "{succs:?} {a} {b}"
                    );
                }
            }
            for s in 0..n {
                for r in 0..=n {
                    let mut want = vec![false; n];
                    let mut work = succs[s].clone();
                    while let Some(b) = work.pop() {
                        if b != r && !want[b] {
                            want[b] = true;
                            work.extend(succs[b].iter().copied());
                        }
                    }
                    let mut got = cfg.region(s, r);
                    for (b, &w) in want.iter().enumerate() {
                        assert_eq!(cfg.in_last_region(b), w, "{succs:?} {s} {r} {b}");
                    }
                    got.sort_unstable();
                    let want: Vec<usize> = (0..n).filter(|&b| want[b]).collect();
                    assert_eq!(got, want, "{succs:?} {s} {r}");
                    assert_eq!(
                        cfg.site(s, r),
                        site_by_definition(&cfg, s, r),
                        "{succs:?} {s} {r}"
                    );
                }
            }
        }
    }
}
