//! Small `.local` arrays read or written at a run-time index, rewritten so that every access
//! sits at a constant offset, which [`super::sroa`] then promotes to registers, as ptxas does.
//!
//! In: a verified [`Function`], the [`Module`] that declares its variables, and one `.local`
//! variable that [`super::sroa`] could not promote. Out: `true` and the same function, still
//! verified, in which every access to the variable is a `.local` load or store of one
//! element at a constant offset from `addr.local @var`; or `false` and the function
//! unchanged.
//!
//! # Why
//!
//! The sine/cosine argument reduction that NVVM inlines for large arguments (Payne–Hanek)
//! writes a 7-word array in a counted loop through a pointer that steps by 4, and reads it
//! back at an index computed from the exponent. ptxas 11.8 keeps the array in registers: a
//! store at an unknown index becomes one conditional move per element (`ISETP.EQ` of the
//! index against each element's offset, `@P MOV`), a load one conditional move per element
//! into the result. Local memory would cost a store and a load round trip (hundreds of
//! cycles) per access and a stack frame.
//!
//! # Which variables
//!
//! Those whose address only flows, as in [`super::sroa`], through `add`/`sub` of constants,
//! `cvta` to and from the generic space and `zext`/`trunc` between i32 and i64, and also
//! through `add`/`sub` of any other value (the index) and block parameters (a pointer
//! stepped in a loop), into the address of loads and stores that all have one element
//! type, with at least one access at an offset that is not a constant. Dynamic accesses must
//! be scalar (vector accesses at constant offsets are fine), the variable at most
//! [`MAX_ELEMS`] elements of that type, and a block parameter that receives the address
//! must receive it on every edge. The bound keeps the selects few: ptxas too keeps large
//! arrays it cannot index statically in memory.
//!
//! Three more conditions are ptxas 11.8's own rule, measured with `ptxas -arch=sm_50 -v` on
//! small kernels (arrays of 2 to 40 words; indices from a loaded value, `and 1/3/7/15/31`
//! of it, or a pointer stepped in a loop; constant and run-time stores and loads in every
//! combination):
//!
//! * **The kernel's own arrays only.** A `.func`'s array indexed at run time stays in its
//!   frame, even when every element is stored at a constant offset: a called `.func` with
//!   four constant stores and one load at `and 3` gets `STL.64`s and an `LDL` (16 bytes),
//!   where the same body in a kernel gets `ISETP.EQ` and `@P MOV`s (0 bytes); so does a
//!   `.visible .func` under `-c` and a recursive one. Hence no rewrite in subroutines
//!   ([`Function::subroutine`], object functions included) nor of the arrays of the
//!   `.func`s we inline ([`VarScope::Callee`]), which ptxas keeps in the callee's frame.
//! * **At least one access at a constant offset.** A store at `a[i]` and a load at
//!   `a[i ^ 5]` keep the array in memory at every size (2 words: 8 bytes of frame, ...,
//!   32 words: 128); add a single constant access, even a dead store `a[1] = x` after the
//!   load, and the same array (up to 8 words) goes to registers (0 bytes). A store at `a[i]`
//!   with a load at `a[1]`, or constant stores with a load at `a[i]`, are in registers.
//! * **No element stored from two blocks neither of which dominates the other, through a
//!   pointer into the array** ([`split_stores`]). NVVM shares one 7-word array among all
//!   the sine/cosine reductions it inlines in a kernel and hoists the seventh word's
//!   address, `add.s64 %rd4, %rd1, 24`, above them; each reduction, under its own `if`,
//!   stores `[%rd4]`. One reduction (`sinf`, `sincosf`) is in registers; two or more
//!   (`sinf(x) * cosf(y)`, even of one `x`) keep the array: 32 bytes of frame. Measured on
//!   25 kernels of loops, `if`s and `if`/`else`s around the stores (`tests/data/sroa/
//!   split.ptx` keeps five): two such regions, or an `if` whose two paths both store the
//!   word, keep it; the same stores written `[%rd1+24]` (the array's start plus an
//!   immediate), or from blocks of which one dominates the other, do not. Two loops in a
//!   row storing at run-time indices, or one under an `if`, do not either. The rule reads
//!   the function before [`super::unroll`]: copies of an unrolled loop put one store of
//!   the PTX in two blocks (Open64's sine reduction in `tests/data/corpus`'s simpleTexture,
//!   in registers in both compilers). Not modelled: two equal pointers computed apart
//!   (`add.s64 %rd9, %rd1, 24` next to `%rd4`) count as one for us, as `simplify` merges
//!   them first; ptxas, given the second store through `%rd9`, keeps the array in
//!   registers. nvcc does not write that.
//!
//! ptxas's size limit is wider than [`MAX_ELEMS`] and depends on how many elements no
//! constant access covers (a store at `a[i]` and a load at `a[1]`: in registers up to 17
//! words, 72 bytes of frame at 18; all elements stored first: in registers at 40); ours
//! stays at 8: our select chains hold more values live than ptxas's predicated moves
//! (with 16, two 16-word arrays took a kernel from 32 to 93 registers).
//!
//! Not modelled: in some kernels with several arrays ptxas keeps every array once one is
//! stored at a run-time index (`tests/data/sroa/mixed.ptx`: 56 bytes of frame, its
//! constant-offset array included; with that store at a constant offset, 8). We promote
//! such arrays by the conditions above.
//!
//! # The rewrite
//!
//! Every instruction that derives the address is kept but computes the *offset* from the
//! variable's start instead: `addr.local @var` becomes the constant 0 and a `cvta` becomes
//! `add x, 0` (offsets are the same in both spaces). Each access then gets a fresh
//! `addr.local @var` (element loads and stores need an address):
//!
//! * at a constant offset: the same access, in the local space, at `[@var + offset]`;
//! * a load at offset `o` (compared on its low 32 bits: offsets inside the array differ
//!   there, and one outside is undefined): every element `e` loaded at its constant offset, and
//!   `select(o == off(e), elem e, ...)` chained from element 0 (an index outside the array
//!   is undefined behaviour; it reads element 0);
//! * a store of `x` at offset `o`: every element `e` loaded and stored back as
//!   `select(o == off(e), x, elem e)`.
//!
//! Where the offset is the variable's start plus constants plus `mulwide x, s` (the shape
//! of `mul.wide.s32 %rd, %r, 4` that NVVM and Open64 write for `a[i]`), the compares read
//! the index `x` instead, against `(off(e) - c) / s`: the 64-bit offset is exact, so inside
//! the array it is `off(e)` exactly when `x` is that quotient (an element no integer `x`
//! reaches gets no select). The offset's `shl` is then dead. Where `x` is itself computed
//! from one value `y` by adding, subtracting or XORing a constant, and that is `x`'s only
//! use, the compares read `y` (those are bijections of 32-bit values): the sine reduction's
//! loads at `6 - q` and `4 - q` words then share the compares of `q`, as one value stays
//! live in place of another. ptxas compares the scaled offset; this saves its `SHL` and
//! `IADD`s.
//!
//! A store through a pointer stepped by a counted single-block loop (the shape
//! [`super::unroll`] recognises, whatever its size or pragma), the loop's only access to the
//! array, overwrites a known set of elements whatever they held: zeros are stored to them
//! just before the loop, so the selects do not carry the array's earlier values into the
//! loop (and, in registers, across everything between an earlier use of the array and
//! this one). Nothing reads those zeros. Such a store reaches only those elements, so it
//! gets a compare and a select for them only: the Payne–Hanek loop writes 6 of its 7 words
//! (the seventh is stored after the loop at a constant offset), and a select for the seventh
//! would cost a compare, a select and a register carried around the loop for nothing.
//!
//! [`super::sroa`] then turns the loads and stores into SSA values, so an element costs a
//! register and each dynamic access a compare and a select per element; `simplify` folds
//! the compares whose offset turned out constant.

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap as HashMap;
use smallvec::{smallvec, SmallVec};

use super::sroa::{addr_use, symbol_addrs, AddrUse};
use super::{
    BinaryOp, Block, CacheOp, ConvOp, Function, GlobalVar, Inst, InstData, InstNode, IntCC, Module,
    Space, Type, Value, ValueDef, VarScope,
};

/// The most elements an array indexed at run time may have to be rewritten (the selects per
/// dynamic access grow with it).
pub const MAX_ELEMS: u32 = 8;

/// How an access's address relates to the variable's start.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Offset {
    Known(i64),
    Dynamic,
}

/// One load or store of the variable: the instruction and its address's offset (without the
/// instruction's immediate).
struct Access {
    inst: Inst,
    offset: Offset,
}

/// What [`analyse`] found.
struct Plan {
    /// The instructions that derive the address.
    derived: Vec<Inst>,
    accesses: Vec<Access>,
    /// The element type of every access.
    ty: Type,
    /// Stores through a pointer stepped by a counted loop: the store, the loop's preheader
    /// and the element offsets the loop overwrites (the only ones the store can reach).
    kills: Vec<(Inst, Block, Vec<u32>)>,
    /// ptxas's third condition fails ([`split_pointer_stores`]).
    split: bool,
}

/// Rewrite `var`'s accesses in `f` to constant offsets (see the module documentation);
/// whether it did. `kept`: the variables [`split_stores`] found in `f` before its loops
/// were unrolled, left alone.
pub fn unindex(
    module: &Module,
    f: &mut Function,
    uses: &SecondaryMap<Value, SmallVec<[Inst; 2]>>,
    var: GlobalVar,
    kept: &[GlobalVar],
) -> bool {
    if kept.contains(&var) {
        return false;
    }
    let Some(plan) = analyse(module, f, uses, var) else {
        return false;
    };
    rewrite(f, uses, var, module.vars[var].size, &plan);
    true
}

/// The `.local` variables of `f` that ptxas's third condition keeps in memory (two stores
/// of one element in blocks neither of which dominates the other, one through a pointer
/// into the array; see "Which variables"). Run it on the function as built, before
/// [`super::unroll`]: a loop's copies put one store of the PTX in several blocks, where
/// ptxas, which sees the PTX, finds one (the Open64 sine reduction of
/// `tests/data/corpus`'s simpleTexture, whose 6-word loop unrolls into two copies).
pub fn split_stores(module: &Module, f: &Function) -> Vec<GlobalVar> {
    let mut vars: Vec<GlobalVar> = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            if let InstData::SymbolAddr { var, .. } = f.insts[i].data {
                if module.vars[var].space == Space::Local && !vars.contains(&var) {
                    vars.push(var);
                }
            }
        }
    }
    if vars.is_empty() {
        return vars;
    }
    let uses = super::sroa::use_lists(f);
    vars.retain(|&var| analyse(module, f, &uses, var).is_some_and(|p| p.split));
    vars
}

/// How to rewrite `var`; `None` when it does not qualify.
fn analyse(
    module: &Module,
    f: &Function,
    uses: &SecondaryMap<Value, SmallVec<[Inst; 2]>>,
    var: GlobalVar,
) -> Option<Plan> {
    // ptxas's first condition: the kernel's own arrays only (see "Which variables").
    if f.subroutine || matches!(module.var_scopes[var], VarScope::Callee(_)) {
        return None;
    }
    let size = i64::from(module.vars[var].size);
    // Each derived value: its offset and whether it is a generic address.
    let mut seen: HashMap<Value, (Offset, bool)> = HashMap::default();
    let mut derived = symbol_addrs(f, var);
    let mut work: Vec<Value> = Vec::new();
    for &i in &derived {
        let r = f.insts[i].results[0];
        seen.insert(r, (Offset::Known(0), false));
        work.push(r);
    }
    let mut accesses: Vec<Access> = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    // A newly derived value: its offset and space must agree with any earlier visit.
    let reach = |seen: &mut HashMap<Value, (Offset, bool)>,
                 work: &mut Vec<Value>,
                 v: Value,
                 at: (Offset, bool)|
     -> Option<()> {
        match seen.get(&v) {
            Some(&(_, g)) if g != at.1 => None,
            Some(_) => Some(()),
            None => {
                seen.insert(v, at);
                work.push(v);
                Some(())
            }
        }
    };
    while let Some(v) = work.pop() {
        let (off, generic) = seen[&v];
        for &u in &uses[v] {
            let node = &f.insts[u];
            match addr_use(f, v, generic, u)? {
                AddrUse::Add {
                    result,
                    other,
                    sign,
                } => {
                    let next = match (off, super::sroa::constant(f, other)) {
                        (Offset::Known(o), Some(c)) => {
                            Offset::Known(o.checked_add(c.checked_mul(sign)?)?)
                        }
                        _ => Offset::Dynamic,
                    };
                    derived.push(u);
                    reach(&mut seen, &mut work, result, (next, generic))?;
                }
                AddrUse::Move { result, generic } => {
                    derived.push(u);
                    reach(&mut seen, &mut work, result, (off, generic))?;
                }
                AddrUse::Access { .. } => {
                    accesses.push(Access {
                        inst: u,
                        offset: off,
                    });
                }
                AddrUse::Other => {
                    if !matches!(node.data, InstData::Jump { .. } | InstData::Brif { .. }) {
                        return None;
                    }
                    if let InstData::Brif { cond, .. } = &node.data {
                        if *cond == v {
                            return None;
                        }
                    }
                    for c in node.data.targets() {
                        for (k, &a) in c.args.iter().enumerate() {
                            if a == v {
                                let p = f.blocks[c.block].params[k];
                                if !seen.contains_key(&p) {
                                    params.push(p);
                                }
                                reach(&mut seen, &mut work, p, (Offset::Dynamic, generic))?;
                            }
                        }
                    }
                }
            }
        }
    }
    // A binary instruction with two derived operands adds two addresses.
    for &i in &derived {
        if let InstData::Binary { args, .. } = f.insts[i].data {
            if seen.contains_key(&args[0]) && seen.contains_key(&args[1]) {
                return None;
            }
        }
    }
    // Every edge into a derived parameter passes a derived value.
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            for c in f.insts[i].data.targets() {
                for (k, a) in c.args.iter().enumerate() {
                    let p = f.blocks[c.block].params[k];
                    if params.contains(&p) && !seen.contains_key(a) {
                        return None;
                    }
                }
            }
        }
    }
    // Something to rewrite, and (ptxas's second condition) an access at a constant offset.
    if !accesses.iter().any(|a| a.offset == Offset::Dynamic)
        || !accesses
            .iter()
            .any(|a| matches!(a.offset, Offset::Known(_)))
    {
        return None;
    }
    // One element type; dynamic accesses scalar; constant ones inside the array, aligned.
    let mut ty: Option<Type> = None;
    for a in &accesses {
        let (t, width, imm) = match &f.insts[a.inst].data {
            InstData::Load {
                ty, width, offset, ..
            } => (*ty, i64::from(*width), i64::from(*offset)),
            InstData::Store {
                ty, values, offset, ..
            } => (*ty, values.len() as i64, i64::from(*offset)),
            _ => return None,
        };
        if ty.is_some_and(|u| u != t) || t == Type::Pred {
            return None;
        }
        ty = Some(t);
        let bytes = i64::from(t.bytes()?);
        match a.offset {
            Offset::Dynamic if width != 1 => return None,
            Offset::Dynamic => {}
            Offset::Known(o) => {
                let start = o.checked_add(imm)?;
                if start < 0 || start % bytes != 0 || start + width * bytes > size {
                    return None;
                }
            }
        }
    }
    let ty = ty?;
    let bytes = i64::from(ty.bytes()?);
    if size % bytes != 0 || size / bytes > i64::from(MAX_ELEMS) {
        return None;
    }
    // ptxas's third condition (see "Which variables"), for [`split_stores`].
    let split = split_pointer_stores(f, &accesses, &seen);
    derived.sort();
    derived.dedup();
    let kills = accesses
        .iter()
        .filter_map(|a| {
            let (pre, mut offs) = loop_kill(f, a, &accesses, &seen, size, bytes)?;
            offs.sort_unstable();
            offs.dedup();
            (!offs.is_empty()).then_some((a.inst, pre, offs))
        })
        .collect();
    Some(Plan {
        derived,
        accesses,
        ty,
        kills,
        split,
    })
}

/// Do two stores write one element from blocks neither of which dominates the other, one
/// of them through a pointer into the array (a value at a constant offset other than the
/// start: the shape `add.s64 %rd4, %rd1, 24; st.local.u32 [%rd4]` that NVVM hoists for the
/// sine reduction's seventh word)? ptxas 11.8 then keeps the array in memory (see "Which
/// variables").
fn split_pointer_stores(
    f: &Function,
    accesses: &[Access],
    seen: &HashMap<Value, (Offset, bool)>,
) -> bool {
    // Per element offset: the stores' blocks and whether they go through an inner pointer.
    let mut by_offset: HashMap<i64, Vec<(Block, bool)>> = HashMap::default();
    for a in accesses {
        if let InstData::Store { addr, offset, .. } = f.insts[a.inst].data {
            if let Some(&(Offset::Known(o), _)) = seen.get(&addr) {
                by_offset
                    .entry(o + i64::from(offset))
                    .or_default()
                    .push((f.insts[a.inst].block, o != 0));
            }
        }
    }
    if by_offset.values().all(|stores| stores.len() < 2) {
        return false;
    }
    let doms = super::Dominators::of(f);
    by_offset.values().any(|stores| {
        stores.iter().enumerate().any(|(k, &(a, inner_a))| {
            stores[k + 1..].iter().any(|&(b, inner_b)| {
                (inner_a || inner_b) && !doms.dominates(a, b) && !doms.dominates(b, a)
            })
        })
    })
}

/// For a dynamic store through a pointer stepped by a counted single-block loop (the loop's
/// only access to the variable): the loop's preheader and the offsets the loop writes, each
/// exactly once whatever the array held before, so their earlier values are dead.
fn loop_kill(
    f: &Function,
    a: &Access,
    accesses: &[Access],
    seen: &HashMap<Value, (Offset, bool)>,
    size: i64,
    bytes: i64,
) -> Option<(Block, Vec<u32>)> {
    let InstData::Store { addr, offset, .. } = &f.insts[a.inst].data else {
        return None;
    };
    let ValueDef::Param(b, k) = f.values[*addr].def else {
        return None;
    };
    if f.insts[a.inst].block != b
        || accesses
            .iter()
            .any(|o| o.inst != a.inst && f.insts[o.inst].block == b)
    {
        return None;
    }
    let (pre, trips) = super::unroll::counted_loop(f, b)?;
    let jump = *f.blocks[pre].insts.last()?;
    let init = f.insts[jump].data.targets().first()?.args[k];
    let Some(&(Offset::Known(start), _)) = seen.get(&init) else {
        return None;
    };
    let term = *f.blocks[b].insts.last()?;
    let back = f.insts[term]
        .data
        .targets()
        .into_iter()
        .find(|c| c.block == b)?
        .args[k];
    let ValueDef::Result(step, _) = f.values[back].def else {
        return None;
    };
    let step = match f.insts[step].data {
        InstData::Binary {
            op: BinaryOp::Add,
            args,
        } if args[0] == *addr => super::sroa::constant(f, args[1])?,
        InstData::Binary {
            op: BinaryOp::Add,
            args,
        } if args[1] == *addr => super::sroa::constant(f, args[0])?,
        InstData::Binary {
            op: BinaryOp::Sub,
            args,
        } if args[0] == *addr => super::sroa::constant(f, args[1])?.checked_neg()?,
        _ => return None,
    };
    let mut offs = Vec::new();
    for j in 0..i64::try_from(trips).ok()? {
        let o = start
            .checked_add(i64::from(*offset))?
            .checked_add(j.checked_mul(step)?)?;
        if o < 0 || o + bytes > size || o % bytes != 0 {
            return None;
        }
        offs.push(o as u32);
    }
    Some((pre, offs))
}

/// Apply the rewrite of the module documentation.
fn rewrite(
    f: &mut Function,
    uses: &SecondaryMap<Value, SmallVec<[Inst; 2]>>,
    var: GlobalVar,
    size: u32,
    plan: &Plan,
) {
    let (derived, accesses, ty) = (&plan.derived, &plan.accesses, plan.ty);
    // Zeros stored before a loop to the elements it overwrites: the values the array held
    // are not carried into (and through) the loop by its selects.
    for (_, pre, offs) in &plan.kills {
        let jump = *f.blocks[*pre].insts.last().expect("a terminator");
        let aty = match f.insts[accesses[0].inst].data {
            InstData::Load { addr, .. } | InstData::Store { addr, .. } => f.value_type(addr),
            _ => unreachable!("only loads and stores are accesses"),
        };
        let base = f.insert_before(jump, InstData::SymbolAddr { ty: aty, var }, aty);
        let zero = f.insert_before(jump, super::sroa::zero_of(ty), ty);
        for &o in offs {
            let store = elem_store(ty, (base, o), zero, CacheOp::default());
            insert_store_before(f, jump, store);
        }
    }
    // The address arithmetic computes offsets from the variable's start.
    for &i in derived.iter() {
        match f.insts[i].data {
            InstData::SymbolAddr { ty, .. } => f.insts[i].data = InstData::Iconst { ty, imm: 0 },
            InstData::Cvta { ty, arg, .. } => {
                let zero = f.insert_before(i, InstData::Iconst { ty, imm: 0 }, ty);
                f.insts[i].data = InstData::Binary {
                    op: BinaryOp::Add,
                    args: [arg, zero],
                };
            }
            _ => {}
        }
    }
    let bytes = ty.bytes().expect("an element type has a size");
    let elems: Vec<u32> = (0..size / bytes).map(|e| e * bytes).collect();
    for a in accesses {
        let i = a.inst;
        let (addr, imm) = match &f.insts[i].data {
            InstData::Load { addr, offset, .. } | InstData::Store { addr, offset, .. } => {
                (*addr, *offset)
            }
            _ => unreachable!("only loads and stores are accesses"),
        };
        let aty = f.value_type(addr);
        let base = f.insert_before(i, InstData::SymbolAddr { ty: aty, var }, aty);
        if let Offset::Known(o) = a.offset {
            let at = i32::try_from(o + i64::from(imm)).expect("checked inside the variable");
            set_address(&mut f.insts[i].data, base, at);
            continue;
        }
        // What the compares read: the index the offset was scaled from where there is one
        // (`Key::index`), else the offset's low 32 bits (`Key::offset`).
        let key = Key::index(f, uses, derived, addr).unwrap_or_else(|| {
            let low = if aty == Type::I64 {
                let data = InstData::Convert {
                    op: ConvOp::Trunc,
                    ty: Type::I32,
                    arg: addr,
                };
                f.insert_before(i, data, Type::I32)
            } else {
                addr
            };
            Key::offset(low)
        });
        // The elements this access can reach, each with the key's value there: only those a
        // loop's stepped store writes, and only those an index reaches.
        let candidates: &[u32] = plan
            .kills
            .iter()
            .find(|(s, ..)| *s == i)
            .map_or(&elems, |(_, _, offs)| offs);
        let reach: Vec<(u32, u64)> = candidates
            .iter()
            .filter_map(|&e| Some((e, key.at(i64::from(e) - i64::from(imm))?)))
            .collect();
        // Whether the key holds `want` (element `e`'s value).
        let is_elem = |f: &mut Function, want: u64| {
            let c = f.insert_before(
                i,
                InstData::Iconst {
                    ty: Type::I32,
                    imm: want,
                },
                Type::I32,
            );
            let data = InstData::Icmp {
                cc: IntCC::Eq,
                args: [key.value, c],
            };
            f.insert_before(i, data, Type::Pred)
        };
        let load_elem = |f: &mut Function, e: u32, cache| {
            let data = InstData::Load {
                space: Space::Local,
                ty,
                width: 1,
                addr: base,
                offset: e as i32,
                cache,
            };
            f.insert_before(i, data, ty)
        };
        match f.insts[i].data.clone() {
            InstData::Load { cache, .. } => {
                // No element reachable: the access is outside the array (undefined); it reads
                // element 0.
                let Some((&(first, _), rest)) = reach.split_first() else {
                    set_address(&mut f.insts[i].data, base, 0);
                    continue;
                };
                if rest.is_empty() {
                    set_address(&mut f.insts[i].data, base, first as i32);
                    continue;
                }
                let mut v = load_elem(f, first, cache);
                for (k, &(e, want)) in rest.iter().enumerate() {
                    let x = load_elem(f, e, cache);
                    let cond = is_elem(f, want);
                    let data = InstData::Select { cond, args: [x, v] };
                    if k + 1 == rest.len() {
                        // The load itself becomes the last select, keeping its result.
                        f.insts[i].data = data;
                    } else {
                        v = f.insert_before(i, data, ty);
                    }
                }
            }
            InstData::Store { values, cache, .. } => {
                // No element reachable: the store is outside the array (undefined); it
                // rewrites element 0 with its own value.
                if reach.is_empty() {
                    let old = load_elem(f, 0, cache);
                    f.insts[i].data = elem_store(ty, (base, 0), old, cache);
                    continue;
                }
                for (k, &(e, want)) in reach.iter().enumerate() {
                    let old = load_elem(f, e, cache);
                    let cond = is_elem(f, want);
                    let data = InstData::Select {
                        cond,
                        args: [values[0], old],
                    };
                    let new = f.insert_before(i, data, ty);
                    let store = elem_store(ty, (base, e), new, cache);
                    if k + 1 == reach.len() {
                        f.insts[i].data = store;
                    } else {
                        insert_store_before(f, i, store);
                    }
                }
            }
            _ => unreachable!("only loads and stores are accesses"),
        }
    }
}

/// A store of `value` to the element at `[base + offset]` in the local space.
fn elem_store(ty: Type, (base, offset): (Value, u32), value: Value, cache: CacheOp) -> InstData {
    InstData::Store {
        space: Space::Local,
        ty,
        addr: base,
        offset: offset as i32,
        values: smallvec![value],
        cache,
    }
}

/// Point a load or store at `[base + offset]` in the local space.
fn set_address(data: &mut InstData, base: Value, at: i32) {
    match data {
        InstData::Load {
            space,
            addr,
            offset,
            ..
        }
        | InstData::Store {
            space,
            addr,
            offset,
            ..
        } => {
            *space = Space::Local;
            *addr = base;
            *offset = at;
        }
        _ => unreachable!("only loads and stores are accesses"),
    }
}

/// Place `data` (an instruction without results) just before `at`, with `at`'s PTX line.
fn insert_store_before(f: &mut Function, at: Inst, data: InstData) {
    let block = f.insts[at].block;
    let inst = f.insts.push(InstNode {
        data,
        results: SmallVec::new(),
        block,
    });
    f.srclocs[inst] = f.srclocs[at];
    let insts = &mut f.blocks[block].insts;
    let pos = insts.iter().position(|&i| i == at).unwrap_or(insts.len());
    insts.insert(pos, inst);
}

/// What a dynamic access's compares read, and the value it holds at each element.
struct Key {
    /// An `i32` value.
    value: Value,
    /// `None`: `value` is the offset's low 32 bits. `Some`: the offset is exactly
    /// `base + scale * x` (64-bit, `x` the `i32` operand of a `mulwide` by a constant,
    /// extended as `signed` says), and `value` gives `x` through `steps`.
    index: Option<Index>,
}

/// See [`Key::index`].
struct Index {
    base: i64,
    scale: i64,
    signed: bool,
    /// From `x` back to the key's value: `x = value + k` or `x = k - value`, or `x = value ^
    /// k` (each a bijection of 32-bit values).
    steps: Vec<(BinaryOp, u64)>,
}

impl Key {
    fn offset(low: Value) -> Key {
        Key {
            value: low,
            index: None,
        }
    }

    /// The index that `addr`'s offset scales, where the derived chain is the variable's
    /// start plus constants plus one `mulwide` of an `i32` by a constant (NVVM's and
    /// Open64's `mul.wide.s32 %rd, %r, 4`), and then the value that index is computed from
    /// by adding, subtracting or XORing constants, as long as that is its only use (so the
    /// compares keep no more values live). `None` otherwise.
    fn index(
        f: &Function,
        uses: &SecondaryMap<Value, SmallVec<[Inst; 2]>>,
        derived: &[Inst],
        addr: Value,
    ) -> Option<Key> {
        let def = |v: Value| match f.values[v].def {
            ValueDef::Result(d, _) => Some(d),
            ValueDef::Param(..) => None,
        };
        let is_derived = |v: Value| def(v).is_some_and(|d| derived.binary_search(&d).is_ok());
        let mut v = addr;
        let mut base = 0i64;
        let mut term = None;
        loop {
            let d = def(v).filter(|_| is_derived(v))?;
            match f.insts[d].data {
                // The variable's start (its `addr.local`, rewritten to 0).
                InstData::Iconst { .. } => break,
                InstData::Binary {
                    op: BinaryOp::Add,
                    args,
                } => {
                    let (next, other) = if is_derived(args[0]) {
                        (args[0], args[1])
                    } else {
                        (args[1], args[0])
                    };
                    if let Some(k) = super::sroa::constant(f, other) {
                        base = base.checked_add(k)?;
                    } else if term.is_none() && !is_derived(other) {
                        term = Some(other);
                    } else {
                        return None;
                    }
                    v = next;
                }
                InstData::Binary {
                    op: BinaryOp::Sub,
                    args,
                } if is_derived(args[0]) => {
                    base = base.checked_sub(super::sroa::constant(f, args[1])?)?;
                    v = args[0];
                }
                _ => return None,
            }
        }
        let mul = def(term?)?;
        let InstData::MulWide { signed, args } = f.insts[mul].data else {
            return None;
        };
        let (mut x, k) = match (
            super::sroa::constant(f, args[0]),
            super::sroa::constant(f, args[1]),
        ) {
            (None, Some(k)) => (args[0], k),
            (Some(k), None) => (args[1], k),
            _ => return None,
        };
        // `constant` sign-extends; an unsigned `mulwide` reads its constant zero-extended.
        let scale = if signed { k } else { k & 0xffff_ffff };
        // A small scale (an element's size): the 64-bit sum cannot wrap, so it is exact.
        if f.value_type(x) != Type::I32 || scale == 0 || scale.unsigned_abs() > 1 << 16 {
            return None;
        }
        // Back through constant additions, subtractions and XORs while each is the only
        // (live) use of what it computes.
        let mut steps = Vec::new();
        let mut user = mul;
        loop {
            let only = uses[x]
                .iter()
                .all(|&u| u == user || f.insts[u].results.iter().all(|&r| uses[r].is_empty()));
            let Some(d) = def(x).filter(|_| only) else {
                break;
            };
            let InstData::Binary { op, args } = f.insts[d].data else {
                break;
            };
            let k0 = super::sroa::constant(f, args[0]);
            let k1 = super::sroa::constant(f, args[1]);
            let (step, y) = match (op, k0, k1) {
                (BinaryOp::Add | BinaryOp::Xor, None, Some(k)) => ((op, k as u64), args[0]),
                (BinaryOp::Add | BinaryOp::Xor, Some(k), None) => ((op, k as u64), args[1]),
                (BinaryOp::Sub, None, Some(k)) => {
                    ((BinaryOp::Add, k.wrapping_neg() as u64), args[0])
                }
                (BinaryOp::Sub, Some(k), None) => ((BinaryOp::Sub, k as u64), args[1]),
                _ => break,
            };
            if f.value_type(y) != Type::I32 {
                break;
            }
            steps.push(step);
            user = d;
            x = y;
        }
        Some(Key {
            value: x,
            index: Some(Index {
                base,
                scale,
                signed,
                steps,
            }),
        })
    }

    /// The key's value (32 bits) where the offset is `off`; `None` where no value gives it.
    fn at(&self, off: i64) -> Option<u64> {
        let mask = Type::I32.mask();
        let Some(ix) = &self.index else {
            return Some(off as u64 & mask);
        };
        let d = off.checked_sub(ix.base)?;
        if d % ix.scale != 0 {
            return None;
        }
        let x = d / ix.scale;
        let fits = if ix.signed {
            i64::from(i32::MIN) <= x && x <= i64::from(i32::MAX)
        } else {
            (0..=i64::from(u32::MAX)).contains(&x)
        };
        if !fits {
            return None;
        }
        // Undo the steps, the last one (nearest the key's value) last.
        let mut v = x as u64 & mask;
        for &(op, k) in &ix.steps {
            v = match op {
                BinaryOp::Add => v.wrapping_sub(k),
                BinaryOp::Sub => k.wrapping_sub(v),
                _ => v ^ k,
            } & mask;
        }
        Some(v)
    }
}
