//! Inputs shaped by the kernel: what `verify` puts in the param space and the buffers, inferred
//! from the IR before any memory is filled.
//!
//! In: a kernel's IR ([`Function`]) and whether its addresses are 32 bits. Out: a [`Plan`]:
//! the buffers (objects) the launch needs and, for the param space and each buffer, the
//! fields that must hold a pointer (into which buffer) or a small number (an index, a size,
//! a loop bound). [`Plan::fill`] then turns a plan, a buffer size and a seed into the bytes:
//! random bytes everywhere, overwritten field by field. Nothing else is random, so a seed
//! reproduces the whole launch; `ir::eval` and the simulator get the same [`Launch`].
//!
//! # Rules
//!
//! * **Bases.** The address of every global or generic load, store, atomic (and a value
//!   compared with one, below) is taken apart into bases ([`Analysis::bases`]): walking back
//!   through `add`, `sub` (its first operand), `select`, `cvta` and block arguments, each
//!   path ends at a *root*, a `ld.param` or a global/generic load of the address's type,
//!   with a constant offset and a stride (the gcd of the multipliers of the other terms met
//!   on the way, and of the step of any loop the path goes around). Every such root is a
//!   pointer and gets its own buffer (an *object*).
//! * **Pointer in memory.** A root that is a load is a pointer stored in memory: the load's
//!   own address is taken apart the same way, and in each object it reaches, the field at
//!   `offset mod stride` (every `stride` bytes; once, at `offset`, with no stride) holds a
//!   pointer into the root's object. This recurses (pointers to structs of pointers) to
//!   [`MAX_DEPTH`] objects deep; deeper, and on cycles (`p = p->next`), a field points into
//!   the object that holds it. Two loads of one field share one target object.
//! * **Records.** A pointer read from memory points to the start of a *record* of its
//!   object: records are `record` bytes (a power of two, at least 256, covering the fields
//!   read at fixed offsets and a multiple of every field's stride), and the fixed-offset
//!   fields of an object reached through loaded pointers repeat in every record. The record
//!   a pointer names is spread (an odd multiplier over the first half of the buffer), so
//!   that neighbouring pointers name records far apart and threads writing through them do
//!   not race. Every pointer is 256-byte aligned, enough for the widest access.
//! * **Pointer compared with a pointer.** A root compared (`setp`) with a pointer is a
//!   pointer too (an end pointer): it points into the same object, a few records in.
//! * **Index or size.** The other terms of an address (what is multiplied and added to a
//!   base), and the operands of integer comparisons (loop bounds), are walked back through
//!   arithmetic, conversions, `select`, `min`/`max` and block arguments to their roots; a
//!   root that is not a pointer gets a value in `1..SMALL` (an index, a size, a count; 0
//!   is left out: a size of 0 makes `n - 1` a huge index). `verify` may instead draw the
//!   parameters among them at least as big as the launch (`verify::Sizes::Launch`).
//!   The walk also goes through shared memory: a `ld.shared` leads to the values stored
//!   at the same address (the same value, or the same variable's address, and offset:
//!   an index thread 0 loads and hands to its CTA, as bitonic merge's `startSrcA`); and the
//!   old value of a global atomic is a root like a load's (a tile counter, as CUB
//!   onesweep's).
//! * **Indices scaled into an address.** Walking from an address term to a root multiplies
//!   the constant factors met (`mul`, `shl`, `mul.wide`): a loaded index that an address
//!   scales by more than [`SCALED_FROM`] bytes is [`Kind::Scaled`], drawn in
//!   `1..=buffer / 4 / scale` ([`Kind::index_bound`]) so that it stays inside the buffer
//!   it indexes (CUB onesweep's tile number times 5376 keys of 4 bytes).
//! * **Parameters.** Every field of the param space a `ld.param` reads is a root like any
//!   other (a field of a struct passed by value gets its own treatment); a parameter of at
//!   most 8 bytes that nothing constrains still gets a value below [`SMALL`] (as before
//!   this analysis), bigger ones random bytes.
//!
//! Invariants: the plan depends only on the IR (not on the seed); objects are numbered in
//! the order they were found, the pointer parameters' first, so buffer `k` keeps its place
//! (`verify`'s `buffer_base`); pointers are written after indices (a field both is a
//! pointer).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use crate::ir::{BinaryOp, Function, Inst, InstData, Space, Type, Value, ValueDef};

/// Small values (indices, sizes, loop bounds) are drawn in `1..SMALL` (0 makes a size
/// degenerate: `n - 1` becomes a huge index).
pub const SMALL: u64 = 64;
/// A loaded index scaled by more bytes than this into an address is [`Kind::Scaled`] (below,
/// `SMALL` units of it stay within a quarter of a 64 KiB buffer: plain [`Kind::Small`]).
pub const SCALED_FROM: u64 = 256;
/// Objects reached through more loaded pointers than this point back into themselves.
pub const MAX_DEPTH: u32 = 3;
/// Most objects (buffers) one plan makes.
pub const MAX_OBJECTS: usize = 12;
/// Steps one walk back from a value may take (bounds the cost on huge kernels).
const WALK_BUDGET: usize = 20_000;
/// How deep the recursive walk for bases may nest (bounds the stack).
const MAX_WALK_DEPTH: usize = 400;

/// Where a value comes from: a param-space field or a result of a memory load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Root {
    /// `ld.param` at this byte offset of this width.
    Param { offset: u32, bytes: u32 },
    /// Result `index` of a global or generic load.
    Load { inst: Inst, index: u8 },
}

/// A base found in an address: `root + offset + (multiples of stride)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Base {
    root: Root,
    offset: i64,
    stride: u64,
}

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A pointer into object `target` (to a record start; an end pointer a few records in).
    Pointer { target: usize, end: bool },
    /// A small value (below [`SMALL`]).
    Small,
    /// An index loaded from memory that an address multiplies by `scale` bytes (the
    /// product of the constant factors on its way into the address): drawn small enough
    /// that `index · scale` stays within a quarter of the buffer ([`Kind::index_bound`]).
    Scaled { scale: u64 },
}

impl Kind {
    /// The most an index of `scale` bytes per unit may be in a buffer of `buffer` bytes:
    /// a quarter of the buffer (the rest of the address has room), at least 1, at most
    /// `SMALL - 1`.
    pub fn index_bound(scale: u64, buffer: u64) -> u64 {
        (buffer / 4 / scale.max(1)).clamp(1, SMALL - 1)
    }
}

/// A field: `bytes` bytes at `offset` (from the record start when `stride` is 0, else at
/// every position `offset mod stride` of the buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub offset: u64,
    pub stride: u64,
    pub bytes: u32,
    pub kind: Kind,
}

/// A buffer the launch gets.
#[derive(Clone, Debug)]
pub struct Object {
    /// How it was found, for `--explain-inputs`.
    pub origin: String,
    /// Loaded pointers deep (0: a parameter's buffer).
    pub depth: u32,
    /// Whether loaded pointers point into it (then its fixed fields repeat in every record).
    pub loaded: bool,
    pub fields: Vec<Field>,
}

/// What the analysis inferred for one kernel.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub addr32: bool,
    /// Fields of the param space (`stride` 0: exact offsets).
    pub params: Vec<Field>,
    pub objects: Vec<Object>,
    /// Param offsets read as roots that nothing constrains (described as random).
    pub free_params: Vec<(u32, u32)>,
}

impl Plan {
    /// The record size of object `k` for a buffer of `size` bytes.
    pub fn record(&self, k: usize, size: u64) -> u64 {
        let o = &self.objects[k];
        let mut r = 256u64;
        for f in &o.fields {
            if f.stride > 0 {
                r = lcm(r, f.stride);
            } else {
                r = r.max((f.offset + u64::from(f.bytes)).next_power_of_two());
            }
        }
        if r > size / 4 {
            // Too big to repeat: one record (pointers point at the start).
            size
        } else {
            r
        }
    }

    /// Indices of the parameters that hold a pointer (for the launch summary).
    pub fn pointer_param_offsets(&self) -> Vec<u32> {
        self.params
            .iter()
            .filter(|f| matches!(f.kind, Kind::Pointer { .. }))
            .map(|f| f.offset as u32)
            .collect()
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        a.max(b)
    } else {
        a / gcd(a, b) * b
    }
}

struct Analysis<'f> {
    f: &'f Function,
    addr_ty: Type,
    /// Incoming arguments of each block parameter.
    incoming: HashMap<Value, Vec<Value>>,
    budget: usize,
    /// Nesting of the current [`Analysis::walk_bases`] (bounded: the walk recurses).
    depth: usize,
    /// Every `st.shared`: address, offset, type and the value stored (an index passed
    /// through shared memory is followed to what was stored, [`Analysis::index_roots`]).
    shared_stores: Vec<(Value, i32, Type, Value)>,
}

impl<'f> Analysis<'f> {
    fn new(f: &'f Function, addr32: bool) -> Self {
        let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
        for node in f.insts.values() {
            for call in node.data.targets() {
                for (&p, &a) in f.blocks[call.block].params.iter().zip(&call.args) {
                    incoming.entry(p).or_default().push(a);
                }
            }
        }
        let mut shared_stores = Vec::new();
        for node in f.insts.values() {
            if let InstData::Store {
                space: Space::Shared,
                ty,
                addr,
                offset,
                ref values,
                ..
            } = node.data
            {
                if let [v] = values[..] {
                    shared_stores.push((addr, offset, ty, v));
                }
            }
        }
        Analysis {
            f,
            addr_ty: if addr32 { Type::I32 } else { Type::I64 },
            incoming,
            budget: 0,
            depth: 0,
            shared_stores,
        }
    }

    /// Whether addresses `a` and `b` are the same: one value, or the address of one
    /// variable taken twice.
    fn same_address(&self, a: Value, b: Value) -> bool {
        if a == b {
            return true;
        }
        let sym = |v: Value| match self.f.values[v].def {
            ValueDef::Result(inst, _) => match self.f.insts[inst].data {
                InstData::SymbolAddr { var, .. } => Some(var),
                _ => None,
            },
            ValueDef::Param(..) => None,
        };
        matches!((sym(a), sym(b)), (Some(x), Some(y)) if x == y)
    }

    /// The values stored to shared memory where the shared load `inst` reads (same
    /// address, offset and type): what an index read back from shared memory was.
    fn stored_at(&self, inst: Inst) -> Vec<Value> {
        let InstData::Load {
            space: Space::Shared,
            ty,
            width: 1,
            addr,
            offset,
            ..
        } = self.f.insts[inst].data
        else {
            return Vec::new();
        };
        self.shared_stores
            .iter()
            .filter(|&&(a, o, t, _)| o == offset && t == ty && self.same_address(a, addr))
            .map(|&(.., v)| v)
            .collect()
    }

    fn iconst(&self, v: Value) -> Option<i64> {
        match self.f.values[v].def {
            ValueDef::Result(inst, _) => match self.f.insts[inst].data {
                InstData::Iconst { imm, ty } => {
                    let bits = ty.bits();
                    let x = if bits >= 64 {
                        imm as i64
                    } else {
                        let s = 64 - bits;
                        ((imm << s) as i64) >> s
                    };
                    Some(x)
                }
                _ => None,
            },
            ValueDef::Param(..) => None,
        }
    }

    /// The root `v` is, if it is a `ld.param` or a global/generic load result.
    fn root_of(&self, v: Value) -> Option<Root> {
        let ValueDef::Result(inst, index) = self.f.values[v].def else {
            return None;
        };
        match &self.f.insts[inst].data {
            InstData::LoadParam { ty, offset } => Some(Root::Param {
                offset: *offset,
                bytes: ty.bytes().unwrap_or(1),
            }),
            InstData::Load {
                space: Space::Global | Space::Generic,
                ..
            }
            | InstData::Atomic {
                space: Space::Global | Space::Generic,
                ..
            } => Some(Root::Load {
                inst,
                index: index as u8,
            }),
            _ => None,
        }
    }

    /// The bases of address `v` (see the module essay).
    fn bases(&mut self, v: Value) -> Vec<Base> {
        self.budget = WALK_BUDGET;
        let mut out = Vec::new();
        let mut path = HashMap::new();
        let mut cycles = HashMap::new();
        let ty = self.f.value_type(v);
        self.walk_bases(v, ty, 0, 0, &mut path, &mut cycles, &mut out);
        out.sort_by_key(|b| (b.root, b.offset, b.stride));
        out.dedup();
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_bases(
        &mut self,
        v: Value,
        ty: Type,
        offset: i64,
        stride: u64,
        path: &mut HashMap<Value, i64>,
        cycles: &mut HashMap<Value, u64>,
        out: &mut Vec<Base>,
    ) {
        if self.budget == 0 || self.depth >= MAX_WALK_DEPTH || self.f.value_type(v) != ty {
            return;
        }
        self.budget -= 1;
        self.depth += 1;
        self.walk_bases_in(v, ty, offset, stride, path, cycles, out);
        self.depth -= 1;
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_bases_in(
        &mut self,
        v: Value,
        ty: Type,
        offset: i64,
        stride: u64,
        path: &mut HashMap<Value, i64>,
        cycles: &mut HashMap<Value, u64>,
        out: &mut Vec<Base>,
    ) {
        if let Some(root) = self.root_of(v) {
            out.push(Base {
                root,
                offset,
                stride,
            });
            return;
        }
        match self.f.values[v].def {
            ValueDef::Param(..) => {
                if let Some(&first) = path.get(&v) {
                    // Around a loop: the step is a stride of every base found through `v`.
                    let step = gcd((offset - first).unsigned_abs(), stride);
                    let c = cycles.entry(v).or_insert(0);
                    *c = gcd(*c, step.max(1));
                    return;
                }
                path.insert(v, offset);
                let start = out.len();
                let args = self.incoming.get(&v).cloned().unwrap_or_default();
                for a in args {
                    self.walk_bases(a, ty, offset, stride, path, cycles, out);
                }
                path.remove(&v);
                if let Some(&c) = cycles.get(&v) {
                    for b in &mut out[start..] {
                        b.stride = gcd(b.stride, c);
                    }
                }
            }
            ValueDef::Result(inst, _) => match self.f.insts[inst].data.clone() {
                InstData::Binary {
                    op: BinaryOp::Add,
                    args: [a, b],
                } => {
                    if let Some(c) = self.iconst(b) {
                        self.walk_bases(a, ty, offset.wrapping_add(c), stride, path, cycles, out);
                    } else if let Some(c) = self.iconst(a) {
                        self.walk_bases(b, ty, offset.wrapping_add(c), stride, path, cycles, out);
                    } else {
                        let sb = gcd(stride, self.stride_of(b, 0));
                        self.walk_bases(a, ty, offset, sb, path, cycles, out);
                        let sa = gcd(stride, self.stride_of(a, 0));
                        self.walk_bases(b, ty, offset, sa, path, cycles, out);
                    }
                }
                InstData::Binary {
                    op: BinaryOp::Sub,
                    args: [a, b],
                } => match self.iconst(b) {
                    Some(c) => {
                        self.walk_bases(a, ty, offset.wrapping_sub(c), stride, path, cycles, out)
                    }
                    None => {
                        let sb = gcd(stride, self.stride_of(b, 0));
                        self.walk_bases(a, ty, offset, sb, path, cycles, out);
                    }
                },
                InstData::Select { args: [a, b], .. } => {
                    self.walk_bases(a, ty, offset, stride, path, cycles, out);
                    self.walk_bases(b, ty, offset, stride, path, cycles, out);
                }
                InstData::Cvta { arg, .. } => {
                    self.walk_bases(arg, ty, offset, stride, path, cycles, out)
                }
                // A pointer aligned down to its word with a constant mask (`p & -4`, the
                // emulation of `atom.cas.b16`, `ir/build/atomics.rs`): the same object.
                InstData::Binary {
                    op: BinaryOp::And,
                    args: [a, b],
                } if self.iconst(b).is_some() => {
                    self.walk_bases(a, ty, offset, stride, path, cycles, out)
                }
                _ => {}
            },
        }
    }

    /// The gcd of the multiples an index term `v` can take (1 when unknown, 0 for zero).
    fn stride_of(&self, v: Value, depth: u32) -> u64 {
        if depth > 12 {
            return 1;
        }
        if let Some(c) = self.iconst(v) {
            return c.unsigned_abs();
        }
        let ValueDef::Result(inst, _) = self.f.values[v].def else {
            return 1;
        };
        match &self.f.insts[inst].data {
            InstData::Binary {
                op: BinaryOp::Mul,
                args: [a, b],
            }
            | InstData::MulWide { args: [a, b], .. } => match (self.iconst(*a), self.iconst(*b)) {
                (_, Some(c)) => self.stride_of(*a, depth + 1).wrapping_mul(c.unsigned_abs()),
                (Some(c), _) => self.stride_of(*b, depth + 1).wrapping_mul(c.unsigned_abs()),
                _ => 1,
            },
            InstData::Binary {
                op: BinaryOp::Shl,
                args: [a, b],
            } => match self.iconst(*b) {
                Some(k) if (0..32).contains(&k) => self.stride_of(*a, depth + 1) << k,
                _ => 1,
            },
            InstData::Binary {
                op: BinaryOp::Add | BinaryOp::Sub,
                args: [a, b],
            } => gcd(self.stride_of(*a, depth + 1), self.stride_of(*b, depth + 1)),
            InstData::Convert { arg, .. } => self.stride_of(*arg, depth + 1),
            _ => 1,
        }
    }

    /// The roots an index, size or bound `v` is computed from (see the module essay), each
    /// with its scale: the product of the constant factors (`mul`, `shl`) between the root
    /// and `v` (a value through shared memory is followed to what was stored there).
    fn index_roots(&self, v: Value, out: &mut Vec<(Root, u64)>) {
        let mut seen = HashSet::new();
        let mut stack = vec![(v, 1u64)];
        let mut budget = WALK_BUDGET;
        while let Some((v, scale)) = stack.pop() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            if !seen.insert((v, scale)) {
                continue;
            }
            if let Some(r) = self.root_of(v) {
                out.push((r, scale));
                continue;
            }
            let scaled = |c: Option<i64>| scale.saturating_mul(c.map_or(1, |c| c.unsigned_abs()));
            match self.f.values[v].def {
                ValueDef::Param(..) => stack.extend(
                    self.incoming
                        .get(&v)
                        .into_iter()
                        .flatten()
                        .map(|&a| (a, scale)),
                ),
                ValueDef::Result(inst, _) => match &self.f.insts[inst].data {
                    InstData::Binary { op, args } => match op {
                        BinaryOp::Mul => {
                            let [a, b] = *args;
                            stack.push((a, scaled(self.iconst(b))));
                            stack.push((b, scaled(self.iconst(a))));
                        }
                        BinaryOp::Add
                        | BinaryOp::Sub
                        | BinaryOp::MinS
                        | BinaryOp::MinU
                        | BinaryOp::MaxS
                        | BinaryOp::MaxU
                        | BinaryOp::DivU
                        | BinaryOp::DivS => stack.extend(args.iter().map(|&a| (a, scale))),
                        BinaryOp::Shl => {
                            let k = self.iconst(args[1]).filter(|k| (0..32).contains(k));
                            stack.push((args[0], scaled(k.map(|k| 1i64 << k))));
                        }
                        BinaryOp::ShrU | BinaryOp::ShrS => stack.push((args[0], scale)),
                        _ => {}
                    },
                    InstData::MulWide { args, .. } => {
                        let [a, b] = *args;
                        stack.push((a, scaled(self.iconst(b))));
                        stack.push((b, scaled(self.iconst(a))));
                    }
                    InstData::Convert { arg, .. } => stack.push((*arg, scale)),
                    InstData::Select { args, .. } => stack.extend(args.iter().map(|&a| (a, scale))),
                    InstData::Load {
                        space: Space::Shared,
                        ..
                    } => stack.extend(self.stored_at(inst).into_iter().map(|a| (a, scale))),
                    _ => {}
                },
            }
        }
    }
}

/// The address operand and access width of a global or generic memory access.
fn access(data: &InstData) -> Option<(Value, i32)> {
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
        }
        | InstData::Atomic {
            space,
            addr,
            offset,
            ..
        } if matches!(space, Space::Global | Space::Generic) => Some((*addr, *offset)),
        _ => None,
    }
}

/// Builds the plan: objects by root, fields by (object, offset, stride).
struct Builder<'a, 'f> {
    an: &'a mut Analysis<'f>,
    plan: Plan,
    /// The object each pointer root points into.
    object_of: BTreeMap<Root, usize>,
    /// Roots being resolved (cycle guard).
    busy: HashSet<Root>,
}

impl Builder<'_, '_> {
    fn describe_root(&self, r: Root) -> String {
        match r {
            Root::Param { offset, bytes } => {
                let p = self
                    .an
                    .f
                    .params
                    .iter()
                    .find(|p| p.offset <= offset && offset < p.offset + p.size.max(1));
                match p {
                    Some(p) if p.offset == offset => format!("parameter {}", p.name),
                    Some(p) => format!(
                        "parameter {} bytes {}..{}",
                        p.name,
                        offset - p.offset,
                        offset - p.offset + bytes
                    ),
                    None => format!("param offset {offset}"),
                }
            }
            Root::Load { inst, index } => {
                let line = self
                    .an
                    .f
                    .srcloc(inst)
                    .ptx_line()
                    .map_or(String::new(), |n| format!(" (PTX line {n})"));
                let part = if index > 0 {
                    format!(" result {index}")
                } else {
                    String::new()
                };
                format!("the pointer loaded by {inst}{part}{line}")
            }
        }
    }

    /// Add `field` to the param space or object `obj` (None: params), unless one is there
    /// at the same place; a pointer replaces a small value. Returns the field kept.
    fn add_field(&mut self, obj: Option<usize>, field: Field) -> Field {
        let fields = match obj {
            Some(k) => &mut self.plan.objects[k].fields,
            None => &mut self.plan.params,
        };
        if let Some(f) = fields.iter_mut().find(|f| {
            f.offset == field.offset && f.stride == field.stride && f.bytes == field.bytes
        }) {
            // A pointer wins over an index; of two indices, the one scaled most (tightest).
            match (f.kind, field.kind) {
                (Kind::Small | Kind::Scaled { .. }, Kind::Pointer { .. })
                | (Kind::Small, Kind::Scaled { .. }) => f.kind = field.kind,
                (Kind::Scaled { scale: a }, Kind::Scaled { scale: b }) if b > a => {
                    f.kind = field.kind
                }
                _ => {}
            }
            return *f;
        }
        fields.push(field);
        field
    }

    fn new_object(&mut self, origin: String, depth: u32, loaded: bool) -> Option<usize> {
        if self.plan.objects.len() >= MAX_OBJECTS {
            return None;
        }
        self.plan.objects.push(Object {
            origin,
            depth,
            loaded,
            fields: Vec::new(),
        });
        Some(self.plan.objects.len() - 1)
    }

    /// The field a base names in the object it points into: `offset mod stride`.
    fn field_at(b: &Base, bytes: u32, kind: Kind) -> Option<Field> {
        let (offset, stride) = if b.stride == 0 {
            (u64::try_from(b.offset).ok()?, 0)
        } else {
            (b.offset.rem_euclid(b.stride as i64) as u64, b.stride)
        };
        Some(Field {
            offset,
            stride,
            bytes,
            kind,
        })
    }

    /// The object pointer root `r` points into, making it (and the fields that hold it) if
    /// needed. None: the object limit, or `r` is being resolved (a cycle).
    fn object(&mut self, r: Root) -> Option<usize> {
        if let Some(&k) = self.object_of.get(&r) {
            return Some(k);
        }
        if self.busy.contains(&r) {
            return None;
        }
        match r {
            Root::Param { offset, bytes } => {
                let k = self.new_object(self.describe_root(r), 0, false)?;
                self.object_of.insert(r, k);
                self.add_field(
                    None,
                    Field {
                        offset: u64::from(offset),
                        stride: 0,
                        bytes,
                        kind: Kind::Pointer {
                            target: k,
                            end: false,
                        },
                    },
                );
                Some(k)
            }
            Root::Load { inst, index } => {
                let InstData::Load {
                    ty, addr, offset, ..
                } = self.an.f.insts[inst].data.clone()
                else {
                    return None;
                };
                let bytes = ty.bytes().unwrap_or(1);
                self.busy.insert(r);
                let bases = self.an.bases(addr);
                let extra = i64::from(offset) + i64::from(index) * i64::from(bytes);
                let mut holders = Vec::new();
                let mut cyclic = Vec::new();
                for b in &bases {
                    let b = Base {
                        offset: b.offset + extra,
                        ..*b
                    };
                    if b.root == r || self.busy.contains(&b.root) {
                        cyclic.push(b);
                        continue;
                    }
                    if let Some(k) = self.object(b.root) {
                        holders.push((k, b));
                    }
                }
                self.busy.remove(&r);
                if let Some(&k) = self.object_of.get(&r) {
                    return Some(k);
                }
                // Two loads of one field share its target.
                let mut target = None;
                for (k, b) in &holders {
                    let Some(field) = Self::field_at(b, bytes, Kind::Small) else {
                        continue;
                    };
                    let existing = self.plan.objects[*k].fields.iter().find(|f| {
                        f.offset == field.offset && f.stride == field.stride && f.bytes == bytes
                    });
                    if let Some(Field {
                        kind: Kind::Pointer { target: t, .. },
                        ..
                    }) = existing
                    {
                        target = Some(*t);
                        break;
                    }
                }
                let depth = holders
                    .iter()
                    .map(|(k, _)| self.plan.objects[*k].depth + 1)
                    .min()
                    .unwrap_or(1);
                let target = match target {
                    Some(t) => t,
                    None if depth > MAX_DEPTH => holders.first()?.0,
                    None => {
                        let origin = self.describe_root(r);
                        self.new_object(origin, depth, true)?
                    }
                };
                self.plan.objects[target].loaded = true;
                self.object_of.insert(r, target);
                let kind = Kind::Pointer { target, end: false };
                for (k, b) in holders {
                    if let Some(field) = Self::field_at(&b, bytes, kind) {
                        self.add_field(Some(k), field);
                    }
                }
                // A pointer read through itself (`p = p->next`) lives in its own object.
                for b in cyclic {
                    let holder = if b.root == r {
                        Some(target)
                    } else {
                        self.object_of.get(&b.root).copied()
                    };
                    if let (Some(k), Some(field)) = (holder, Self::field_at(&b, bytes, kind)) {
                        self.add_field(Some(k), field);
                    }
                }
                Some(target)
            }
        }
    }

    /// Mark root `r` (not a pointer) as small: in the param space or in every object its
    /// load (or atomic) reads; an index loaded from memory with a `scale` above
    /// [`SCALED_FROM`] as [`Kind::Scaled`].
    fn small(&mut self, r: Root, scale: u64) {
        if self.object_of.contains_key(&r) {
            return;
        }
        match r {
            Root::Param { offset, bytes } => {
                self.add_field(
                    None,
                    Field {
                        offset: u64::from(offset),
                        stride: 0,
                        bytes,
                        kind: Kind::Small,
                    },
                );
            }
            Root::Load { inst, index } => {
                let (ty, addr, offset) = match self.an.f.insts[inst].data {
                    InstData::Load {
                        ty, addr, offset, ..
                    }
                    | InstData::Atomic {
                        ty, addr, offset, ..
                    } => (ty, addr, offset),
                    _ => return,
                };
                if !ty.is_int() {
                    return;
                }
                let kind = if scale > SCALED_FROM {
                    Kind::Scaled { scale }
                } else {
                    Kind::Small
                };
                let bytes = ty.bytes().unwrap_or(1);
                let bases = self.an.bases(addr);
                let extra = i64::from(offset) + i64::from(index) * i64::from(bytes);
                for b in bases {
                    let b = Base {
                        offset: b.offset + extra,
                        ..b
                    };
                    let Some(&k) = self.object_of.get(&b.root) else {
                        continue;
                    };
                    if let Some(field) = Self::field_at(&b, bytes, kind) {
                        self.add_field(Some(k), field);
                    }
                }
            }
        }
    }
}

/// Infer the plan of kernel `f` (see the module essay).
pub fn infer(f: &Function, addr32: bool) -> Plan {
    let mut an = Analysis::new(f, addr32);
    let addr_ty = an.addr_ty;
    // Accesses in instruction order, so object numbers are stable.
    let mut accesses: Vec<(Inst, Value)> = Vec::new();
    let mut compares: Vec<[Value; 2]> = Vec::new();
    for block in &f.layout {
        for &inst in &f.blocks[*block].insts {
            let data = &f.insts[inst].data;
            if let Some((addr, _)) = access(data) {
                accesses.push((inst, addr));
            }
            if let InstData::Icmp { args, .. } = data {
                compares.push(*args);
            }
        }
    }
    let mut b = Builder {
        an: &mut an,
        plan: Plan {
            addr32,
            ..Plan::default()
        },
        object_of: BTreeMap::new(),
        busy: HashSet::new(),
    };
    // Pointer parameters first (their buffers keep the numbers they had).
    let mut all_bases = Vec::new();
    for &(_, addr) in &accesses {
        let bases = b.an.bases(addr);
        all_bases.push(bases);
    }
    for bases in &all_bases {
        for base in bases {
            if let Root::Param { .. } = base.root {
                b.object(base.root);
            }
        }
    }
    for bases in &all_bases {
        for base in bases {
            b.object(base.root);
        }
    }
    // End pointers: a root compared with a pointer.
    for [x, y] in &compares {
        if b.an.f.value_type(*x) != addr_ty {
            continue;
        }
        let bx = b.an.bases(*x);
        let by = b.an.bases(*y);
        for (p, q) in [(&bx, &by), (&by, &bx)] {
            let Some(target) = p
                .iter()
                .find_map(|base| b.object_of.get(&base.root).copied())
            else {
                continue;
            };
            for base in q {
                if b.object_of.contains_key(&base.root) {
                    continue;
                }
                let kind = Kind::Pointer { target, end: true };
                match base.root {
                    Root::Param { offset, bytes } => {
                        b.add_field(
                            None,
                            Field {
                                offset: u64::from(offset),
                                stride: 0,
                                bytes,
                                kind,
                            },
                        );
                    }
                    Root::Load { .. } => {}
                }
            }
        }
    }
    // Indices, sizes and bounds: the non-base terms of addresses and compared values.
    let mut small_roots = Vec::new();
    for (inst, addr) in &accesses {
        let _ = inst;
        index_terms(b.an, *addr, &mut small_roots);
    }
    // Bounds: compared, not scaled into an address.
    let mut bounds = Vec::new();
    for [x, y] in &compares {
        b.an.index_roots(*x, &mut bounds);
        b.an.index_roots(*y, &mut bounds);
    }
    small_roots.extend(bounds.into_iter().map(|(r, _)| (r, 1)));
    small_roots.sort();
    small_roots.dedup();
    for (r, scale) in small_roots {
        b.small(r, scale);
    }
    // Parameters read that nothing constrains.
    let mut free = Vec::new();
    for node in f.insts.values() {
        if let InstData::LoadParam { ty, offset } = node.data {
            let bytes = ty.bytes().unwrap_or(1);
            if !b.plan.params.iter().any(|p| p.offset == u64::from(offset)) {
                free.push((offset, bytes));
            }
        }
    }
    free.sort_unstable();
    free.dedup();
    b.plan.free_params = free;
    b.plan.params.sort_by_key(|p| p.offset);
    b.plan
}

/// The roots of the non-base terms of address `v`: the operands of its `add`s that are not
/// walked as bases, taken back to their roots.
fn index_terms(an: &Analysis<'_>, v: Value, out: &mut Vec<(Root, u64)>) {
    let ty = an.f.value_type(v);
    let mut seen = HashSet::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if seen.len() > WALK_BUDGET || !seen.insert(v) || an.f.value_type(v) != ty {
            continue;
        }
        match an.f.values[v].def {
            ValueDef::Param(..) => stack.extend(an.incoming.get(&v).into_iter().flatten().copied()),
            ValueDef::Result(inst, _) => match &an.f.insts[inst].data {
                InstData::Binary {
                    op: BinaryOp::Add | BinaryOp::Sub,
                    args,
                } => {
                    for &a in args {
                        if an.iconst(a).is_some() {
                            continue;
                        }
                        if pointer_like(an, a) {
                            stack.push(a);
                        } else {
                            an.index_roots(a, out);
                        }
                    }
                }
                InstData::Select { args, .. } => stack.extend_from_slice(args),
                InstData::Cvta { arg, .. } => stack.push(*arg),
                _ => {}
            },
        }
    }
}

/// Whether `v` is (through `add`/`sub`/`select`/`cvta`/block arguments) a pointer root of
/// the address type rather than an index computed by arithmetic.
fn pointer_like(an: &Analysis<'_>, v: Value) -> bool {
    match an.f.values[v].def {
        ValueDef::Param(..) => true,
        ValueDef::Result(inst, _) => match &an.f.insts[inst].data {
            InstData::LoadParam { .. } | InstData::Load { .. } => an.f.value_type(v) == an.addr_ty,
            InstData::Binary {
                op: BinaryOp::Add | BinaryOp::Sub,
                ..
            }
            | InstData::Select { .. }
            | InstData::Cvta { .. } => true,
            _ => false,
        },
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = |k: &Kind| match k {
            Kind::Pointer { target, end: false } => format!("pointer into buffer {target}"),
            Kind::Pointer { target, end: true } => {
                format!("end pointer into buffer {target} (compared with a pointer)")
            }
            Kind::Small => format!("small (index, size or bound: in 1..{SMALL})"),
            Kind::Scaled { scale } => format!(
                "index into an address, {scale} bytes a unit (in 1..={} for a 64 KiB buffer)",
                Kind::index_bound(*scale, 64 * 1024)
            ),
        };
        let place = |f: &Field| {
            if f.stride == 0 {
                format!("+{}", f.offset)
            } else {
                format!("+{} every {} bytes", f.offset, f.stride)
            }
        };
        for p in &self.params {
            writeln!(
                out,
                "  param offset {} ({} bytes): {}",
                p.offset,
                p.bytes,
                kind(&p.kind)
            )?;
        }
        for (o, b) in &self.free_params {
            writeln!(
                out,
                "  param offset {o} ({b} bytes): unconstrained (below {SMALL} if the parameter is at most 8 bytes, else random bytes)"
            )?;
        }
        for (k, o) in self.objects.iter().enumerate() {
            let how = if o.loaded {
                "records reached through loaded pointers"
            } else {
                "its parameter points past its margin"
            };
            writeln!(out, "  buffer {k}: {} (depth {}; {how})", o.origin, o.depth)?;
            for f in &o.fields {
                writeln!(
                    out,
                    "    field {} ({} bytes): {}",
                    place(f),
                    f.bytes,
                    kind(&f.kind)
                )?;
            }
        }
        if self.params.is_empty() && self.objects.is_empty() && self.free_params.is_empty() {
            writeln!(out, "  nothing inferred (no parameters read)")?;
        }
        Ok(())
    }
}
