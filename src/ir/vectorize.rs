//! Vectorisation of adjacent scalar accesses: `ld.shared.f32` at `[p]`, `[p+4]`, `[p+8]`,
//! `[p+12]` become one `load.shared.v4` (`LDS.U.128`), as ptxas 11.8 does.
//!
//! In: a kernel after `simplify` (and `unroll`, `sroa`), and its module (for the layout of the
//! variables). Out: the same function with some scalar loads and stores of `.shared` (and
//! loads of `.const`) replaced by vector ones; [`Stats`] counts them.
//!
//! # ptxas's rule (probed with ptxas 11.8 -arch=sm_50, `cuobjdump -sass`)
//!
//! * Spaces: `.shared` loads and stores (`LDS.U.64/.128`, `STS.64/.128`) and `.const` loads
//!   through a register (`LDC.64` only: LDC reads at most 64 bits; a `.const` word at a
//!   constant address is a `c[0x3][imm]` operand of its user, no load to merge). `.global` accesses through a kernel
//!   parameter are never merged, even at `p + 16*tid`: nothing proves the pointer's
//!   alignment. `.local` variables are promoted to registers by `sroa` where this would apply.
//! * Alignment is proved from the address's *known trailing zero bits*: a shared variable's
//!   address is its offset in the kernel's layout (ptxas merges `As + 16*k` of an
//!   `.align 4` array that sits at offset 0); `shl`, `mul`, `mad`, `and` with constants and
//!   `add` of aligned terms keep the bits. A group `[p+o .. p+o+16)` needs `p + o` 16-aligned
//!   for `.128`, `[p+o .. p+o+8)` 8-aligned for `.64`; offsets that are 8 but not 16 mod 16
//!   give `.64` pairs (sgemm_4x4: `LDS.U.64 [R+0x208]`, `LDS.U.64 [R+0x210]`).
//! * Order: program order of the loads does not matter (`[p+4]` then `[p]` merge), but a
//!   store between them does, even one to a provably different address, and so does a
//!   barrier. Stores merge when nothing that reads or orders memory lies between them.
//!
//! ptxas also reads a whole `.128` for three words of four (`[p]`, `[p+4]`, `[p+8]`); we do
//! not (the fourth word may lie past the kernel's shared memory in the simulator's model),
//! and give `.64` + `.32` there.
//!
//! # How
//!
//! 1. [`trailing_zeros`]: known trailing zero bits of every integer value, a forward
//!    dataflow over the function, optimistic at block parameters (they start at "all zero
//!    bits known" and only lose bits while iterating, so the fixpoint is reached; a loop's
//!    `p += 16` keeps `p`'s alignment).
//! 2. Per block, scalar accesses with the same space, type, cache operator and address
//!    *value* form a group while nothing in between breaks it (for loads: anything that may
//!    write or order memory; for stores: that, any load, or a store of another group). Only
//!    the address value and the constant offsets are compared, so two addresses computed
//!    apart are never merged (as ptxas: it merges `[R+a]`, `[R+b]` of one register).
//! 3. Inside a group, offsets are taken in increasing order: four words (two doublewords)
//!    from a 16-aligned offset become one `.v4` (`.v2`), else two words from an 8-aligned
//!    offset one `.v2`. A merged load takes the place of the group's *first* load (its
//!    address is defined before it, and no store lies between), keeping the old result
//!    values (their definitions move to it); a merged store takes the place of the group's
//!    *last* store (every stored value is defined by then). The others leave their block,
//!    their nodes becoming operand-less tombstones as `simplify` leaves them.
//!
//! Volatile accesses are never merged; loads that read the same offset twice keep the later
//! one scalar, and a store group with a repeated offset is left alone. Stores of constants
//! are not merged: a vector store wants its data in an aligned register group, so constants
//! would cost one `MOV` each where the scalar stores read `RZ` or a register already there.
//!
//! # Trade-off
//!
//! A `.128` load defines four registers at once, aligned as a quad (the allocator colours
//! groups aligned), which can raise register pressure where the words were loaded far
//! apart; ptxas accepts the same. A vector store whose values are not already a group costs
//! `MOV`s into one (`lower::select::mem::store_data`), which the allocator may or may not
//! coalesce.
//!
//! # Where it runs
//!
//! `driver::prepare_kernel_ir`, last; `leafold verify` evaluates the unmerged function, so
//! each differential run checks this pass too (a misaligned `LDS.128` traps in the
//! simulator).

use super::BinaryOp;
use super::{
    CacheOp, ConvOp, Function, GlobalVar, Inst, InstData, Module, Space, Type, Value, ValueDef,
};
use cranelift_entity::SecondaryMap;
use std::collections::{HashMap, HashSet};

/// What the pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Scalar loads folded into vector loads (all members, the kept one included).
    pub loads: usize,
    /// Scalar stores folded into vector stores.
    pub stores: usize,
}

/// Merge adjacent aligned scalar `.shared` / `.const` accesses of kernel `f` (see the module
/// essay).
pub fn vectorize(module: &Module, f: &mut Function) -> Stats {
    let tz = trailing_zeros(module, f);
    let mut stats = Stats::default();
    for b in f.layout.clone() {
        let insts = f.blocks[b].insts.clone();
        let mut removed: HashSet<Inst> = HashSet::new();
        for group in groups(f, &insts) {
            let (l, s) = merge_group(f, &tz, &group, &mut removed);
            stats.loads += l;
            stats.stores += s;
        }
        if !removed.is_empty() {
            f.blocks[b].insts.retain(|i| !removed.contains(i));
            for &i in &removed {
                f.insts[i].data = InstData::Iconst {
                    ty: Type::I32,
                    imm: 0,
                };
                f.insts[i].results.clear();
            }
        }
    }
    stats
}

/// The largest number of known trailing zero bits tracked (more is never needed: 16 bytes).
const CAP: u8 = 32;

fn tz_of(x: u64, ty: Type) -> u8 {
    let x = x & ty.mask();
    if x == 0 {
        CAP
    } else {
        (x.trailing_zeros() as u8).min(CAP)
    }
}

/// Known trailing zero bits of every integer value (0: nothing known; [`CAP`]: at least
/// that many).
pub fn trailing_zeros(module: &Module, f: &Function) -> SecondaryMap<Value, u8> {
    // A subroutine may be a function of a relocatable object, whose variables the linker
    // places: only their declared alignment is known there.
    let layout = (!f.subroutine).then(|| module.shared_layout(f));
    let consts: HashMap<GlobalVar, u32> = match f.subroutine {
        false => module.const_offsets().into_iter().collect(),
        true => HashMap::new(),
    };
    let mut tz: SecondaryMap<Value, u8> = SecondaryMap::with_default(0);
    tz.resize(f.values.len());
    // Optimistic start at block parameters: only lowered while iterating.
    for &b in &f.layout {
        for &p in &f.blocks[b].params {
            tz[p] = CAP;
        }
    }
    loop {
        let mut changed = false;
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                let node = &f.insts[i];
                if let [r] = node.results[..] {
                    let new = transfer(module, layout.as_ref(), &consts, f, &tz, &node.data);
                    if tz[r] != new {
                        tz[r] = new;
                        changed = true;
                    }
                }
                for call in node.data.targets() {
                    let params = &f.blocks[call.block].params;
                    for (&p, &a) in params.iter().zip(call.args.iter()) {
                        if tz[a] < tz[p] {
                            tz[p] = tz[a];
                            changed = true;
                        }
                    }
                }
            }
        }
        if !changed {
            return tz;
        }
    }
}

/// Known trailing zeros of one instruction's single result.
fn transfer(
    module: &Module,
    layout: Option<&super::SharedLayout>,
    consts: &HashMap<GlobalVar, u32>,
    f: &Function,
    tz: &SecondaryMap<Value, u8>,
    d: &InstData,
) -> u8 {
    let konst = |v: Value| match f.values[v].def {
        ValueDef::Result(i, 0) => match f.insts[i].data {
            InstData::Iconst { imm, .. } => Some(imm & f.values[v].ty.mask()),
            _ => None,
        },
        _ => None,
    };
    match *d {
        InstData::Iconst { ty, imm } => tz_of(imm, ty),
        InstData::SymbolAddr { var, .. } => {
            let vd = &module.vars[var];
            let by_align = tz_of(u64::from(vd.align.max(1)), Type::I32);
            match (vd.space, layout) {
                (Space::Shared, Some(l)) => match l.offsets.get(&var) {
                    Some(&off) => tz_of(u64::from(off), Type::I32),
                    None => 0,
                },
                (Space::Const, _) => consts
                    .get(&var)
                    .map_or(by_align, |&off| tz_of(u64::from(off), Type::I32)),
                (Space::Shared, None) => by_align,
                _ => 0,
            }
        }
        InstData::Binary { op, args: [a, b] } => {
            let (ta, tb) = (tz[a], tz[b]);
            match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Or | BinaryOp::Xor => ta.min(tb),
                BinaryOp::Mul => ta.saturating_add(tb).min(CAP),
                BinaryOp::And => ta.max(tb),
                BinaryOp::Shl => match konst(b) {
                    Some(c) if c < 64 => ta.saturating_add(c as u8).min(CAP),
                    _ => 0,
                },
                BinaryOp::ShrU | BinaryOp::ShrS => match konst(b) {
                    Some(c) if c < 64 && ta < CAP => ta.saturating_sub(c as u8),
                    _ => 0,
                },
                _ => 0,
            }
        }
        InstData::MulWide { args: [a, b], .. } => tz[a].saturating_add(tz[b]).min(CAP),
        InstData::Convert {
            op: ConvOp::Sext | ConvOp::Zext | ConvOp::Trunc,
            arg,
            ..
        } => tz[arg],
        InstData::Select { args: [a, b], .. } => tz[a].min(tz[b]),
        // The shared window's base is aligned far beyond 16 bytes.
        InstData::Cvta {
            space: Space::Shared,
            arg,
            ..
        } => tz[arg].min(16),
        _ => 0,
    }
}

/// A run of scalar accesses that may merge: loads (`store == false`) or stores, in program
/// order, each with its instruction and offset.
struct Group {
    store: bool,
    addr: Value,
    members: Vec<(Inst, i32)>,
}

/// The group key of a scalar access that may merge: (space, type, cache, address, store).
type Key = (Space, Type, CacheOp, Value, bool);

fn key(d: &InstData) -> Option<(Key, i32)> {
    match *d {
        InstData::Load {
            space,
            ty,
            width: 1,
            addr,
            offset,
            cache,
        } if matches!(space, Space::Shared | Space::Const) => ((ty.bytes() == Some(4)
            || (ty.bytes() == Some(8) && space == Space::Shared))
            && cache != CacheOp::Volatile)
            .then_some(((space, ty, cache, addr, false), offset)),
        InstData::Store {
            space: Space::Shared,
            ty,
            addr,
            offset,
            ref values,
            cache,
        } if values.len() == 1 => (matches!(ty.bytes(), Some(4 | 8)) && cache != CacheOp::Volatile)
            .then_some(((Space::Shared, ty, cache, addr, true), offset)),
        _ => None,
    }
}

/// Whether `d` neither writes nor orders memory (a load may be moved across it).
fn inert(d: &InstData) -> bool {
    super::simplify::is_pure(d)
        || matches!(
            d,
            InstData::Iconst { .. }
                | InstData::Fconst { .. }
                | InstData::LoadParam { .. }
                | InstData::SpecialReg { .. }
                | InstData::SymbolAddr { .. }
                | InstData::Float { .. }
                | InstData::Cvta { .. }
        )
}

/// Whether `v` is an address known when compiling (a variable's address, a constant, sums
/// of them): a `.const` load from one is no instruction at all, lowering reads the word as a
/// `c[0x3][imm]` operand of its user, so merging it into an `LDC.64` would add one.
fn constant_address(f: &Function, v: Value) -> bool {
    match f.values[v].def {
        ValueDef::Result(i, _) => match f.insts[i].data {
            InstData::Iconst { .. } | InstData::SymbolAddr { .. } => true,
            InstData::Binary {
                op: BinaryOp::Add | BinaryOp::Sub,
                args: [a, b],
            } => constant_address(f, a) && constant_address(f, b),
            InstData::Convert { arg, .. } => constant_address(f, arg),
            _ => false,
        },
        ValueDef::Param(..) => false,
    }
}

/// The groups of one block's instruction list.
fn groups(f: &Function, insts: &[Inst]) -> Vec<Group> {
    let mut open: Vec<(Key, Group)> = Vec::new();
    let mut done: Vec<Group> = Vec::new();
    let close =
        |open: &mut Vec<(Key, Group)>, done: &mut Vec<Group>, keep: &dyn Fn(&Key) -> bool| {
            let mut k = 0;
            while k < open.len() {
                if keep(&open[k].0) {
                    k += 1;
                } else {
                    done.push(open.remove(k).1);
                }
            }
        };
    for &i in insts {
        let d = &f.insts[i].data;
        let k = key(d).filter(|((space, .., addr, _), _)| {
            *space != Space::Const || !constant_address(f, *addr)
        });
        match k {
            Some((k, off)) => {
                if k.4 {
                    // A store ends every other group: loads (it may write what they read)
                    // and other stores (their order against it must stay).
                    close(&mut open, &mut done, &|o: &Key| *o == k);
                }
                match open.iter_mut().find(|(o, _)| *o == k) {
                    Some((_, g)) => g.members.push((i, off)),
                    None => open.push((
                        k,
                        Group {
                            store: k.4,
                            addr: k.3,
                            members: vec![(i, off)],
                        },
                    )),
                }
            }
            None if inert(d) => {}
            // Any other load ends the store groups; everything else ends all groups.
            None if matches!(d, InstData::Load { cache, .. } if *cache != CacheOp::Volatile) => {
                close(&mut open, &mut done, &|o: &Key| !o.4)
            }
            None => close(&mut open, &mut done, &|_| false),
        }
    }
    done.extend(open.into_iter().map(|(_, g)| g));
    done.retain(|g| g.members.len() > 1);
    done
}

/// Merge what `g` allows; the instructions that left their block go to `removed`. Returns
/// (loads merged, stores merged).
fn merge_group(
    f: &mut Function,
    tz: &SecondaryMap<Value, u8>,
    g: &Group,
    removed: &mut HashSet<Inst>,
) -> (usize, usize) {
    // Offset → member index: the earliest load of each offset; a store group that writes
    // one offset twice is left alone.
    let mut by_off: HashMap<i64, usize> = HashMap::new();
    for (k, &(_, off)) in g.members.iter().enumerate() {
        if by_off.contains_key(&i64::from(off)) {
            if g.store {
                return (0, 0);
            }
            continue;
        }
        by_off.insert(i64::from(off), k);
    }
    let first = g.members[0].0;
    let (space, ty) = match f.insts[first].data {
        InstData::Load { space, ty, .. } | InstData::Store { space, ty, .. } => (space, ty),
        _ => return (0, 0),
    };
    if g.store {
        let konst = |v: Value| match f.values[v].def {
            ValueDef::Result(i, _) => matches!(
                f.insts[i].data,
                InstData::Iconst { .. } | InstData::Fconst { .. }
            ),
            ValueDef::Param(..) => false,
        };
        let any_const = g.members.iter().any(|&(i, _)| match &f.insts[i].data {
            InstData::Store { values, .. } => konst(values[0]),
            _ => true,
        });
        if any_const {
            return (0, 0);
        }
    }
    let bytes = i64::from(ty.bytes().unwrap_or(4));
    let align = u32::from(tz[g.addr]);
    let aligned = |off: i64, n: i64| {
        let need = n.trailing_zeros();
        align >= need && off.rem_euclid(n) == 0
    };
    let mut offs: Vec<i64> = by_off.keys().copied().collect();
    offs.sort_unstable();
    let mut taken: Vec<i64> = Vec::new();
    let mut count = 0;
    for &o in &offs {
        if taken.contains(&o) {
            continue;
        }
        let present = |n: i64| (0..n).all(|k| by_off.contains_key(&(o + k * bytes)));
        let quad_ok = space == Space::Shared && aligned(o, 16) && present(16 / bytes);
        let n = if quad_ok {
            16 / bytes
        } else if bytes == 4 && aligned(o, 8) && present(2) {
            2
        } else {
            continue;
        };
        if i32::try_from(o + n * bytes).is_err() {
            continue;
        }
        let members: Vec<usize> = (0..n).map(|k| by_off[&(o + k * bytes)]).collect();
        taken.extend((0..n).map(|k| o + k * bytes));
        count += n as usize;
        if g.store {
            merge_stores(f, g, &members, o as i32, removed);
        } else {
            merge_loads(f, g, &members, o as i32, removed);
        }
    }
    if g.store {
        (0, count)
    } else {
        (count, 0)
    }
}

/// Members `members` (in element order) of load group `g` become one vector load at offset
/// `off`, in the place of the earliest of them.
fn merge_loads(
    f: &mut Function,
    g: &Group,
    members: &[usize],
    off: i32,
    removed: &mut HashSet<Inst>,
) {
    let keep_idx = *members.iter().min().expect("a merge has members");
    let keep = g.members[keep_idx].0;
    let results: Vec<Value> = members
        .iter()
        .map(|&m| f.insts[g.members[m].0].results[0])
        .collect();
    for (k, &r) in results.iter().enumerate() {
        f.values[r].def = ValueDef::Result(keep, k);
    }
    if let InstData::Load { width, offset, .. } = &mut f.insts[keep].data {
        *width = results.len() as u8;
        *offset = off;
    }
    f.insts[keep].results = results.into_iter().collect();
    for &m in members {
        let i = g.members[m].0;
        if i != keep {
            f.insts[i].results.clear();
            removed.insert(i);
        }
    }
}

/// Members of store group `g` become one vector store at offset `off`, in the place of the
/// latest of them.
fn merge_stores(
    f: &mut Function,
    g: &Group,
    members: &[usize],
    off: i32,
    removed: &mut HashSet<Inst>,
) {
    let keep_idx = *members.iter().max().expect("a merge has members");
    let keep = g.members[keep_idx].0;
    let vals: Vec<Value> = members
        .iter()
        .map(|&m| match &f.insts[g.members[m].0].data {
            InstData::Store { values, .. } => values[0],
            _ => unreachable!("a store group holds stores"),
        })
        .collect();
    if let InstData::Store { values, offset, .. } = &mut f.insts[keep].data {
        *values = vals.into_iter().collect();
        *offset = off;
    }
    for &m in members {
        let i = g.members[m].0;
        if i != keep {
            removed.insert(i);
        }
    }
}
