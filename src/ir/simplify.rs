//! IR simplification: constant folding and algebraic identities, between `ir::build` and
//! lowering.
//!
//! In: a verified [`Function`]. Out: the same function, still verified (debug builds and the
//! tests check it with [`super::verify`]), in which
//!
//! * every *pure* integer instruction (`Unary`, `Binary`, `MulWide`, `Convert`, `Select`,
//!   `Icmp`, `Bits`) whose operands are all known constants has been folded: an integer
//!   result becomes an `iconst` in place (same value, same PTX line); a `pred` result, which
//!   the IR cannot spell as a constant (`iconst` is integer-only), stays as it is but is
//!   *known* to this pass, so its users (`select`, `and.pred`, ...) fold in turn;
//! * identities with one constant or two equal operands have been applied: `x+0`, `x-0`,
//!   `x*1`, `x*0`, `x<<0`, `x>>0`, `x|0`, `x^0`, `x&0`, `x&-1`, `x|-1`, `x/1`, `x%1`, `x-x`,
//!   `x^x`, `x&x`, `x|x`, `min/max(x, x)`, `0<<n`, `0>>n`, `select(p, a, a)`,
//!   `select(const, a, b)`, `icmp x, x`, `trunc(zext/sext x)` back to x's type,
//!   `zext/sext(trunc x)` back to x's type when x is a special register whose range fits
//!   the narrow type (`%tid.x` < 1024, `%ctaid.y` < 65536, ...),
//!   `x & m` where `m` keeps every bit `x` can have set (`x` a zero extension of a
//!   narrower value, or a special register of bounded range, through those extensions),
//!   `sext x` → `zext x` and `mulwide.s x, y` → `mulwide.u x, y` where the sign bits of
//!   the operands are known clear (a constant, or a value bounded as above or by `and`,
//!   `shr.u`, `rem.u` by a constant, `min.u`, `bfe.u` of a constant length, `select`: a
//!   64-bit address then adds an index with `RZ` as its high word instead of a sign word),
//!   `not(not x)`, `neg(neg x)`, `x + neg y` and `neg y + x` → `x - y`, `x - neg y` →
//!   `x + y`, `mul.i64` of two equally extended i32 values (or of one and a constant that
//!   extends the same way) → `mulwide`; selects between two constants (PTX `set`/`selp`
//!   booleans): `neg`/`not` of one → a select of the folded constants, `and`/`or`/`xor`/
//!   `add`/`sub`/`mul` of one and `x` whose two outcomes are each `x` or a constant → a
//!   select of those, `and`/`or` of two over the same constants → a select on `and`/`or` of
//!   their predicates, `==`/`!=` of one against a constant → its predicate, the predicate's
//!   `not`, or a constant; and `mulhi.u x, 2^k` → `shr.u x, N-k` (`mulhi.s x, 2^k` →
//!   `shr.s x, N-k` while 2^k is positive); `mul` by 2^k is left alone, as selection already
//!   turns it into a shift;
//! * value numbering has been applied: a pure computation, or a read of a special register
//!   that stays constant for the thread (`%tid`, `%ctaid`, ...; not `%clock`, `%warpid`,
//!   `%smid`), or a float operation (pure: `ir::eval`'s float functions
//!   depend on their operands alone), equal to one earlier in its block or in a block that
//!   dominates its own is replaced by that one. Equal means same operation, result type and
//!   operands, where constants and kernel parameters compare by contents (two `iconst 4` are
//!   one operand) and the operands of a commutative operation are sorted;
//! * the pure instructions and float operations left without users have been removed
//!   (dead-code elimination; the products `ir::contract` fused away go here).
//!
//! # The one definition of each operation
//!
//! Folding evaluates with [`eval::pure`], the very function the reference interpreter runs
//! for these instructions, so a folded constant is by construction the value `ir::eval`
//! computes. The identities are not evaluations; the unit tests below check each of them
//! against `eval::pure` on random operands. A float operation (not an approximation) whose
//! operands are all constants folds to what `FloatOp::eval`, the interpreter's definition,
//! gives.
//!
//! # How values are replaced
//!
//! The IR has no value aliases. An identity that gives an existing value `x` for result `r`
//! records `r → x` in a replacement map, and every operand (block arguments of `jump` and
//! `brif` included) is rewritten through that map ([`InstData::map_operands`]) before its
//! instruction is looked at, and once more over the whole function at the end. `x` is an
//! operand of `r`'s own instruction (an identity) or the result of an equal instruction
//! earlier in `r`'s block or in a dominating block (value numbering): either way it is
//! defined before `r` and dominates every use of `r`, and it has `r`'s type, so the rewrite
//! keeps the verifier's invariants and the map has no cycles. Blocks are visited in layout order,
//! repeated until nothing changes (a value defined in a block laid out after one of its
//! users' blocks is caught by the next round; in practice two rounds suffice).
//!
//! # Removal
//!
//! Lowering is demand-driven and never selects a value nobody demands, so dead instructions
//! cost no SASS; they are removed anyway, because lowering also *counts* uses (single-use
//! values fold into their user, values used outside addresses stay in registers) and a dead
//! `add x, 0` would still count as a use of `x`. A removed instruction leaves its block's
//! list; the entity map cannot shrink, so its node stays in `Function::insts` with its data
//! replaced by an operand-less `iconst` (a tombstone that no block holds, so no pass reads it
//! as code, and whose old operands no longer count as uses). Only the pure instructions
//! above, `iconst` and `fconst` are ever removed: a dead `addr.shared @var` stays, since the
//! kernel's shared-memory layout (`Module::shared_layout`) is decided by the variables its
//! instructions name, and it must not change between the reference and the compiled code.
//!
//! # Where it runs
//!
//! `driver::compile` runs it on each kernel after `ir::build` and before lowering; `--emit
//! ir` prints the simplified IR, which is what lowering receives. `leafold verify` builds
//! the IR itself and runs `ir::eval` on the *unsimplified* function, so every differential
//! run checks this pass as well as lowering.

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;

use super::eval;
use super::float::{FloatBinOp, FloatOp};
use super::{
    BinaryOp, BitOp, Block, ConvOp, Function, GlobalVar, Inst, InstData, InstNode, IntCC,
    SpecialReg, Type, UnaryOp, Value, ValueData, ValueDef,
};

/// What [`simplify`] did to one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Instructions folded into an `iconst` (or, with a `pred` result, known constant).
    pub folded: usize,
    /// Results replaced by an existing value or rewritten into a cheaper operation.
    pub rewritten: usize,
    /// Results replaced by an earlier equal computation (value numbering).
    pub numbered: usize,
    /// Dead instructions removed.
    pub removed: usize,
}

/// Simplify `func` in place (see the module documentation).
pub fn simplify(func: &mut Function) -> Stats {
    let doms = super::Dominators::of(func);
    // At most one numbering entry per instruction: sized once (capacity only; the map is
    // never iterated) rather than rehashed as it grows.
    let numbering = HashMap::with_capacity_and_hasher(func.insts.len(), Default::default());
    let values = func.values.len();
    let uses = use_counts(func);
    let mut s = Simplifier {
        f: func,
        doms,
        numbering,
        repl: SecondaryMap::with_capacity(values),
        known: SecondaryMap::with_capacity(values),
        uses,
        stats: Stats::default(),
    };
    // Each round only adds facts (replacements, known predicates, folded instructions), so
    // it terminates; the cap only bounds pathological layouts.
    for _ in 0..16 {
        if !s.round() {
            break;
        }
    }
    s.rewrite_all();
    s.remove_dead();
    s.stats
}

/// The operation of an instruction for value numbering ([`Key`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Head {
    Unary(UnaryOp),
    Binary(BinaryOp),
    MulWide(bool),
    Convert(ConvOp),
    Select,
    Icmp(IntCC),
    Bits(BitOp),
    Sreg(SpecialReg),
    Symbol(GlobalVar),
    Float(FloatOp),
}

/// Two instructions with equal keys compute the same value: the operation, the result
/// type, and the operands ([`Simplifier::operand_key`]), sorted where the operation
/// commutes.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    head: Head,
    ty: Type,
    operands: SmallVec<[(u8, u8, u64); 3]>,
}

/// What one instruction simplifies to.
enum Action {
    /// The result is this constant (an integer result becomes an `iconst`).
    Const(u64),
    /// The result is this existing value.
    Alias(Value),
    /// The instruction becomes `op x, count` with a new `iconst.i32 count`.
    Shift(BinaryOp, Value, u64),
    /// The instruction becomes this one (same result, operands that already exist).
    Become(InstData),
    /// The instruction becomes `select(op(p, q), a, b)` with a new predicate `op` and new
    /// `iconst`s `a`, `b`.
    PredSelect(BinaryOp, Value, Value, u64, u64),
    /// An operation on a `select` between two constants becomes a `select` between its two
    /// outcomes: `select(cond, a, b)`, each an existing value (`Ok`) or a constant that gets
    /// a new `iconst` (`Err`).
    Select(Value, [Result<Value, u64>; 2]),
    /// A 64-bit `mul` of two extended 32-bit values becomes `mulwide` of them; `Err(c)`
    /// is a constant operand, which gets a new `iconst.i32`.
    Wide(bool, Value, Result<Value, u64>),
    /// `and (shr.u x, pos), 2^len - 1` becomes `bfe.u x, pos, len` (`x`, `pos` existing, a
    /// new `iconst.i32 len`).
    Field(Value, Value, u64),
}

struct Simplifier<'f> {
    f: &'f mut Function,
    doms: super::Dominators,
    /// Value numbering of the current round: each pure computation's first result, by
    /// operation and operands, with its block.
    numbering: HashMap<Key, SmallVec<[(Block, Value); 2]>>,
    /// Result → the value that replaces it. (By value, like `known`: slots indexed by the
    /// dense value numbers, read for every operand of every round, instead of hashed.)
    repl: SecondaryMap<Value, Option<Value>>,
    /// Predicates known to be constant (integers are known from their `iconst`).
    known: SecondaryMap<Value, Option<u64>>,
    /// How many operands read each value in the function as it came in (a rule that would
    /// duplicate a computation asks for a single reader; value numbering may add readers
    /// later, which costs that rule one instruction, never correctness).
    uses: SecondaryMap<Value, u32>,
    stats: Stats,
}

/// How many operands of the function's instructions read each value.
fn use_counts(f: &Function) -> SecondaryMap<Value, u32> {
    let mut uses: SecondaryMap<Value, u32> = SecondaryMap::new();
    uses.resize(f.values.len());
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            for part in f.insts[i].data.operand_parts() {
                for &v in part {
                    uses[v] += 1;
                }
            }
        }
    }
    uses
}

/// The instructions that compute from their operands alone (see [`eval::pure`]).
pub fn is_pure(d: &InstData) -> bool {
    matches!(
        d,
        InstData::Unary { .. }
            | InstData::Binary { .. }
            | InstData::MulWide { .. }
            | InstData::Convert { .. }
            | InstData::Select { .. }
            | InstData::Icmp { .. }
            | InstData::Bits { .. }
    )
}

/// Sign-extend the low `bits` of `x` (how `FunctionBuilder::iconst` stores immediates).
fn sext(x: u64, bits: u32) -> u64 {
    let shift = 64 - bits.min(64);
    (((x << shift) as i64) >> shift) as u64
}

fn resolve(repl: &SecondaryMap<Value, Option<Value>>, mut v: Value) -> Value {
    // Every target is defined before the value it replaces (an operand of its instruction,
    // or an equal computation that dominates it), so the chain cannot cycle.
    while let Some(n) = repl[v] {
        v = n;
    }
    v
}

impl Simplifier<'_> {
    fn ty(&self, v: Value) -> Type {
        self.f.values[v].ty
    }

    fn def(&self, v: Value) -> Option<&InstData> {
        match self.f.values[v].def {
            ValueDef::Result(i, _) => Some(&self.f.insts[i].data),
            ValueDef::Param(..) => None,
        }
    }

    /// The value of `v` if it is a known constant, masked to its type.
    fn known(&self, v: Value) -> Option<u64> {
        if let Some(c) = self.known[v] {
            return Some(c);
        }
        match self.def(v)? {
            InstData::Iconst { imm, .. } => Some(imm & self.ty(v).mask()),
            _ => None,
        }
    }

    /// One pass over the blocks in layout order; whether anything changed.
    fn round(&mut self) -> bool {
        let mut changed = false;
        self.numbering.clear();
        for b in self.f.layout.clone() {
            let insts = std::mem::take(&mut self.f.blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                let repl = &self.repl;
                self.f.insts[inst].data.map_operands(|v| resolve(repl, v));
                changed |= self.apply(b, inst, &mut out);
                changed |= self.number(b, inst);
                out.push(inst);
            }
            self.f.blocks[b].insts = out;
        }
        changed
    }

    /// Value numbering: when an earlier instruction of this block, or one in a block that
    /// dominates it, computes the same operation on the same operands, `inst`'s result is
    /// that one's (the IR is SSA, so equal operands are equal values on every path); else
    /// `inst` is recorded. Whether `inst` was replaced.
    fn number(&mut self, b: Block, inst: Inst) -> bool {
        let node = &self.f.insts[inst];
        let &[r] = &node.results[..] else {
            return false;
        };
        if self.repl[r].is_some() || self.known[r].is_some() {
            return false;
        }
        let Some(key) = self.key(&node.data, self.ty(r)) else {
            return false;
        };
        let doms = &self.doms;
        let list = self.numbering.entry(key).or_default();
        let earlier = list
            .iter()
            .rev()
            .find(|(d, _)| *d == b || doms.dominates(*d, b));
        match earlier {
            Some(&(_, v)) if v != r => {
                self.repl[r] = Some(v);
                self.stats.numbered += 1;
                true
            }
            Some(_) => false,
            None => {
                list.push((b, r));
                false
            }
        }
    }

    /// An operand as value numbering sees it: an integer constant or a kernel parameter by
    /// its contents (two `iconst 4` are the same operand), any other value by itself.
    /// Constants and parameters carry their width (an `i16` 5 is not an `i32` 5 to an
    /// operation that reads both widths).
    fn operand_key(&self, v: Value) -> (u8, u8, u64) {
        let bits = self.ty(v).bits() as u8;
        if let Some(c) = self.known(v) {
            return (1, bits, c);
        }
        match self.def(v) {
            Some(&InstData::LoadParam { offset, .. }) => (2, bits, u64::from(offset)),
            _ => (0, 0, u64::from(v.as_u32())),
        }
    }

    /// The value-numbering key of `d` (result type `ty`), for the operations that compute
    /// from their operands alone and the special registers that stay constant for a thread
    /// (not `%clock`, `%warpid`, `%smid`, which may change while it runs).
    fn key(&self, d: &InstData, ty: Type) -> Option<Key> {
        use BinaryOp as B;
        // Pushed one by one (at most three), not collected through SmallVec's generic
        // extend: this runs for every instruction value numbering looks at.
        let ops = |vs: &[Value]| {
            let mut keys = SmallVec::new();
            for &v in vs {
                keys.push(self.operand_key(v));
            }
            keys
        };
        let (head, mut operands, commutes) = match *d {
            InstData::Unary { op, arg } => (Head::Unary(op), ops(&[arg]), false),
            InstData::Binary { op, args } => {
                let commutes = matches!(
                    op,
                    B::Add
                        | B::Mul
                        | B::MulHiU
                        | B::MulHiS
                        | B::And
                        | B::Or
                        | B::Xor
                        | B::MinS
                        | B::MinU
                        | B::MaxS
                        | B::MaxU
                );
                (Head::Binary(op), ops(&args), commutes)
            }
            InstData::MulWide { signed, args } => (Head::MulWide(signed), ops(&args), true),
            InstData::Convert { op, arg, .. } => (Head::Convert(op), ops(&[arg]), false),
            InstData::Select { cond, args } => {
                (Head::Select, ops(&[cond, args[0], args[1]]), false)
            }
            InstData::Icmp { cc, args } => (
                Head::Icmp(cc),
                ops(&args),
                matches!(cc, IntCC::Eq | IntCC::Ne),
            ),
            InstData::Bits { op, ref args } => (Head::Bits(op), ops(args), false),
            InstData::SpecialReg { reg } => match reg {
                SpecialReg::Clock | SpecialReg::Clock64 | SpecialReg::WarpId | SpecialReg::SmId => {
                    return None
                }
                _ if reg.is_timer() => return None,
                _ => (Head::Sreg(reg), SmallVec::new(), false),
            },
            InstData::SymbolAddr { var, .. } => (Head::Symbol(var), SmallVec::new(), false),
            // Float operations compute from their operands alone, so equal ones are one
            // value; `add`, `mul`, `min` and `max` commute bit for bit (a NaN result is the
            // canonical NaN whichever operand was one: `ir::float`), as ptxas uses them.
            InstData::Float { op, ref args } => {
                let commutes = matches!(
                    op,
                    FloatOp::Binary {
                        op: FloatBinOp::Add | FloatBinOp::Mul | FloatBinOp::Min | FloatBinOp::Max,
                        ..
                    }
                );
                (Head::Float(op), ops(args), commutes)
            }
            _ => return None,
        };
        if commutes {
            operands.sort_unstable();
        }
        Some(Key { head, ty, operands })
    }

    /// Simplify `inst` (of block `b`); new instructions go to `out` before it.
    fn apply(&mut self, b: Block, inst: Inst, out: &mut Vec<Inst>) -> bool {
        let node = &self.f.insts[inst];
        let &[r] = &node.results[..] else {
            return false;
        };
        if self.repl[r].is_some() || self.known[r].is_some() {
            return false;
        }
        let Some(action) = self.action(&node.data) else {
            return false;
        };
        let rty = self.ty(r);
        match action {
            Action::Const(c) => {
                let c = c & rty.mask();
                if rty.is_int() {
                    self.f.insts[inst].data = InstData::Iconst {
                        ty: rty,
                        imm: sext(c, rty.bits()),
                    };
                } else if rty == Type::Pred {
                    self.known[r] = Some(c);
                } else {
                    return false;
                }
                self.stats.folded += 1;
            }
            Action::Alias(x) => {
                self.repl[r] = Some(x);
                self.stats.rewritten += 1;
            }
            Action::Shift(op, x, count) => {
                let k = self.operand(b, inst, Type::I32, Err(count), out);
                self.f.insts[inst].data = InstData::Binary { op, args: [x, k] };
                self.stats.rewritten += 1;
            }
            Action::Become(data) => {
                self.f.insts[inst].data = data;
                self.stats.rewritten += 1;
            }
            Action::PredSelect(op, p, q, x, y) => {
                let data = InstData::Binary { op, args: [p, q] };
                let t = self.insert(b, inst, data, Type::Pred, out);
                self.select(b, inst, rty, t, [Err(x), Err(y)], out);
            }
            Action::Select(cond, arms) => self.select(b, inst, rty, cond, arms, out),
            Action::Field(x, pos, len) => {
                let len = self.operand(b, inst, Type::I32, Err(len), out);
                self.f.insts[inst].data = InstData::Bits {
                    op: BitOp::Bfe { signed: false },
                    args: [x, pos, len].into_iter().collect(),
                };
                self.stats.rewritten += 1;
            }
            Action::Wide(signed, x, y) => {
                let y = self.operand(b, inst, Type::I32, y, out);
                self.f.insts[inst].data = InstData::MulWide {
                    signed,
                    args: [x, y],
                };
                self.stats.rewritten += 1;
            }
        }
        true
    }

    /// A new instruction `data` with one result of type `ty` in block `b`, with `at`'s PTX
    /// line, placed in `out` (before `at`); its result.
    fn insert(
        &mut self,
        b: Block,
        at: Inst,
        data: InstData,
        ty: Type,
        out: &mut Vec<Inst>,
    ) -> Value {
        let k = self.f.insts.push(InstNode {
            data,
            results: Default::default(),
            block: b,
        });
        let v = self.f.values.push(ValueData {
            ty,
            def: ValueDef::Result(k, 0),
        });
        self.f.insts[k].results.push(v);
        self.f.srclocs[k] = self.f.srclocs[at];
        out.push(k);
        v
    }

    /// An operand: an existing value, or (`Err`) a new `iconst` of type `ty` placed in `out`.
    fn operand(
        &mut self,
        b: Block,
        at: Inst,
        ty: Type,
        x: Result<Value, u64>,
        out: &mut Vec<Inst>,
    ) -> Value {
        x.unwrap_or_else(|c| {
            let imm = sext(c, ty.bits());
            self.insert(b, at, InstData::Iconst { ty, imm }, ty, out)
        })
    }

    /// `at` becomes `select(cond, arms)` (arms of type `ty`).
    fn select(
        &mut self,
        b: Block,
        at: Inst,
        ty: Type,
        cond: Value,
        arms: [Result<Value, u64>; 2],
        out: &mut Vec<Inst>,
    ) {
        let args = arms.map(|a| self.operand(b, at, ty, a, out));
        self.f.insts[at].data = InstData::Select { cond, args };
        self.stats.rewritten += 1;
    }

    fn action(&self, d: &InstData) -> Option<Action> {
        // A float operation of constants: the constant `ir::eval` computes for it
        // (`FloatOp::eval`, the interpreter's own definition), an `iconst` of its carrier or
        // a known predicate. Every IEEE operation is correctly rounded (one value); the
        // approximations (`ex2.approx`, `rcp.approx`: the hardware's tables) are left alone.
        // NVVM's `pow` inlines `cvt.rzi.f64.f64` of the constant exponent and compares it
        // with itself (particlefilter's loop), which cost a MOV32I pair, an F2F and a DSETP.
        if let InstData::Float { op, ref args } = *d {
            return op
                .fold(args.iter().map(|&a| self.known(a)))
                .map(Action::Const);
        }
        if !is_pure(d) {
            return None;
        }
        let ops = d.operands();
        if ops.iter().all(|&v| self.known(v).is_some()) {
            let get = |v: Value| self.known(v).unwrap_or(0);
            return eval::pure(d, |v| self.ty(v), get).map(Action::Const);
        }
        match *d {
            InstData::Binary { op, args } => self.binary(op, args),
            InstData::Icmp { cc, args } if args[0] == args[1] => {
                Some(Action::Const(u64::from(matches!(
                    cc,
                    IntCC::Eq | IntCC::Sle | IntCC::Sge | IntCC::Ule | IntCC::Uge
                ))))
            }
            InstData::Icmp {
                cc: cc @ (IntCC::Eq | IntCC::Ne),
                args,
            } => self.test_of_select(cc, args),
            InstData::Select { cond, args } => match self.known(cond) {
                Some(c) => Some(Action::Alias(if c != 0 { args[0] } else { args[1] })),
                None if args[0] == args[1] => Some(Action::Alias(args[0])),
                None => None,
            },
            InstData::Convert {
                op: ConvOp::Trunc,
                ty,
                arg,
            } => match *self.def(arg)? {
                InstData::Convert {
                    op: ConvOp::Sext | ConvOp::Zext,
                    arg: x,
                    ..
                } if self.ty(x) == ty => Some(Action::Alias(x)),
                _ => None,
            },
            // An extension of a value whose sign bit is clear is the same either way, and
            // the zero extension is cheaper: a 64-bit address's high word is `RZ` where the
            // sign extension reads a sign word (`SHR s, i, 0x1f`); likewise the product of
            // two such values (`mul.wide.s32 %rd, %r, 8` of `and.b32 %r, %q, 8`,
            // particlefilter's sine table index, which ptxas adds with `ISCADD` and `RZ`).
            InstData::Convert {
                op: ConvOp::Sext,
                ty,
                arg,
            } if self.sign_clear(arg) => Some(Action::Become(InstData::Convert {
                op: ConvOp::Zext,
                ty,
                arg,
            })),
            InstData::MulWide { signed: true, args }
                if args.iter().all(|&a| self.sign_clear(a)) =>
            {
                Some(Action::Become(InstData::MulWide {
                    signed: false,
                    args,
                }))
            }
            // `cvt.u32.u16` of a `%tid.x` read into a 16-bit register (Open64's idiom): the
            // value already fits the narrow type, so truncating and extending it back is the
            // value itself.
            InstData::Convert {
                op: op @ (ConvOp::Zext | ConvOp::Sext),
                ty,
                arg,
            } => match *self.def(arg)? {
                InstData::Convert {
                    op: ConvOp::Trunc,
                    arg: x,
                    ..
                } if self.ty(x) == ty => {
                    let narrow = self.ty(arg).bits();
                    let fits = self.width_bound(x)? + u32::from(op == ConvOp::Sext) <= narrow;
                    fits.then_some(Action::Alias(x))
                }
                _ => None,
            },
            InstData::Unary { op, arg } => match *self.def(arg)? {
                InstData::Unary { op: inner, arg: x } if inner == op => Some(Action::Alias(x)),
                // `not(setp)` (NVVM's `xor.pred p, q, 0 ; not.pred r, p` guarding an odd-bit
                // test): the compare with the negated condition, one ISETP where the negation
                // cost a PSETP (a guard or branch cannot always absorb it: if-conversion reads
                // the predicate as it is). Only where the `not` is the `setp`'s one reader: a
                // `setp` read both ways (`bar.red ... !%p` beside `%p`) would become two
                // compares where the reader's own negation costs nothing.
                InstData::Icmp { cc, args } if op == UnaryOp::Not && self.uses[arg] == 1 => {
                    Some(Action::Become(InstData::Icmp {
                        cc: cc.negated(),
                        args,
                    }))
                }
                // `neg(set)`, `not(selp 1, 0)`: one SEL of the other two constants instead of
                // a SEL and an IADD/LOP.
                InstData::Select { cond, args } if self.ty(arg).is_int() => {
                    let (a, b) = (self.known(args[0])?, self.known(args[1])?);
                    let f = |c: u64| match op {
                        UnaryOp::Neg => c.wrapping_neg(),
                        UnaryOp::Not => !c,
                    };
                    Some(Action::Select(cond, [Err(f(a)), Err(f(b))]))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// A bound on how many low bits `v` can have set, where the IR knows one: the special
    /// registers whose ranges CUDA bounds (a block has at most 1024 threads and 64 in z, a
    /// grid at most 65535 blocks in y and z, a warp 32 lanes), zero extensions (their
    /// source's width, or its own bound), and the operations that keep or narrow a bound:
    /// `and` (either side's), `shr.u` by a constant, `rem.u` by a constant, `min.u` (either
    /// side's), `bfe.u` of a constant length and `select` (the wider arm's); a constant
    /// operand is bounded by its own bits.
    fn width_bound(&self, v: Value) -> Option<u32> {
        self.width_bound_at(v, 0)
    }

    /// [`Self::width_bound`], at most `WIDTH_BOUND_DEPTH` definitions deep.
    fn width_bound_at(&self, v: Value, depth: u32) -> Option<u32> {
        use super::Dim::{X, Y, Z};
        const WIDTH_BOUND_DEPTH: u32 = 8;
        if depth > WIDTH_BOUND_DEPTH {
            return None;
        }
        // A constant operand has its own bits; anything else its definition's bound.
        let bound = |x: Value| match self.known(x) {
            Some(c) => Some(64 - (c & self.ty(x).mask()).leading_zeros()),
            None => self.width_bound_at(x, depth + 1),
        };
        let bits = self.ty(v).bits();
        let reg = match *self.def(v)? {
            InstData::SpecialReg { reg } => reg,
            // A zero extension has at most its source's bits (NVVM's `cvt.u32.u16` of a
            // `ld.u8` value, then `and.b32 .., 255`).
            InstData::Convert {
                op: ConvOp::Zext,
                arg,
                ..
            } => return Some(bound(arg).unwrap_or(self.ty(arg).bits())),
            InstData::Binary {
                op: BinaryOp::And | BinaryOp::MinU,
                args: [a, b],
            } => {
                return match (bound(a), bound(b)) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                }
            }
            // A shift of a constant count (PTX clamps counts beyond the width: 0).
            InstData::Binary {
                op: BinaryOp::ShrU,
                args: [a, b],
            } => {
                let count = self.known(b)?;
                let width = bound(a).unwrap_or(bits);
                return Some(width.saturating_sub(count.min(u64::from(bits)) as u32));
            }
            // The remainder by a non-zero constant is below it (by zero it is all ones).
            InstData::Binary {
                op: BinaryOp::RemU,
                args: [a, b],
            } => {
                let d = self.known(b).filter(|&d| d != 0)?;
                let below = 64 - (d - 1).leading_zeros();
                return Some(bound(a).map_or(below, |w| w.min(below)));
            }
            InstData::Bits {
                op: BitOp::Bfe { signed: false },
                ref args,
            } if args.len() == 3 => {
                let len = self.known(args[2])? & 0xff;
                return (len < u64::from(bits)).then_some(len as u32);
            }
            InstData::Select { args: [a, b], .. } => return Some(bound(a)?.max(bound(b)?)),
            _ => return None,
        };
        Some(match reg {
            SpecialReg::Tid(X | Y) => 10,
            SpecialReg::Tid(Z) => 6,
            SpecialReg::Ntid(X | Y) => 11,
            SpecialReg::Ntid(Z) => 7,
            SpecialReg::Ctaid(Y | Z) | SpecialReg::Nctaid(Y | Z) => 16,
            SpecialReg::LaneId => 5,
            _ => return None,
        })
    }

    /// Whether the sign bit of the integer `v` is known to be clear (a constant's, or one
    /// below [`Self::width_bound`]).
    fn sign_clear(&self, v: Value) -> bool {
        let bits = self.ty(v).bits();
        match self.known(v) {
            Some(c) => (c & self.ty(v).mask()) >> (bits - 1) == 0,
            None => self.width_bound(v).is_some_and(|w| w < bits),
        }
    }

    /// `(signed, x)` when `v` is `sext x` / `zext x` of an i32 `x`.
    fn extended(&self, v: Value) -> Option<(bool, Value)> {
        match *self.def(v)? {
            InstData::Convert {
                op: op @ (ConvOp::Sext | ConvOp::Zext),
                arg,
                ..
            } if self.ty(arg) == Type::I32 => Some((op == ConvOp::Sext, arg)),
            _ => None,
        }
    }

    /// `mul.i64 a, b` where both are 32-bit values extended the same way (or one is and the
    /// other a constant that the same extension of its low word gives back) is their exact
    /// product: `mulwide` (7 instructions instead of 14, no high-word terms). A power-of-two
    /// constant is left to selection, which shifts it.
    fn widening(&self, a: Value, b: Value) -> Option<Action> {
        let fits = |signed: bool, c: u64| {
            if signed {
                c as i64 == i64::from(c as i32)
            } else {
                c <= u64::from(u32::MAX)
            }
        };
        for (p, q) in [(a, b), (b, a)] {
            let Some((signed, x)) = self.extended(p) else {
                continue;
            };
            if let Some((s2, y)) = self.extended(q) {
                if s2 == signed {
                    return Some(Action::Wide(signed, x, Ok(y)));
                }
            }
            if let Some(c) = self.known(q) {
                if c != 0 && fits(signed, c) && !c.is_power_of_two() {
                    return Some(Action::Wide(signed, x, Err(c & 0xffff_ffff)));
                }
            }
        }
        None
    }

    /// `select(p, k1, k2) ==/!= c` (k1 != k2, c constant): `p`, `not p`, or a constant.
    fn test_of_select(&self, cc: IntCC, args: [Value; 2]) -> Option<Action> {
        for (s, c) in [(args[0], args[1]), (args[1], args[0])] {
            let Some(&InstData::Select { cond, args: arms }) = self.def(s) else {
                continue;
            };
            let (Some(k1), Some(k2), Some(c)) =
                (self.known(arms[0]), self.known(arms[1]), self.known(c))
            else {
                continue;
            };
            if k1 == k2 {
                continue;
            }
            // `select == c` is `cond` when c is the true arm, `not cond` when it is the false
            // one; `!=` the other way round; any other c never matches.
            let eq = cc == IntCC::Eq;
            let not = Action::Become(InstData::Unary {
                op: UnaryOp::Not,
                arg: cond,
            });
            return Some(match (c == k1, c == k2) {
                (true, _) if eq => Action::Alias(cond),
                (true, _) => not,
                (_, true) if eq => not,
                (_, true) => Action::Alias(cond),
                _ => Action::Const(u64::from(!eq)),
            });
        }
        None
    }

    /// `and`/`or` of `select(p, k1, k2)` and `select(q, k1, k2)` (the same two constants,
    /// each its own result under the operation, and `op(k1, k2)` one of them): one `select`
    /// on `p and q` or `p or q` (predicate logic instead of two SELs and a LOP).
    fn select_logic(&self, op: BinaryOp, a: Value, b: Value) -> Option<Action> {
        let sel = |v: Value| match *self.def(v)? {
            InstData::Select { cond, args } => {
                Some((cond, self.known(args[0])?, self.known(args[1])?))
            }
            _ => None,
        };
        let ((p, k1, k2), (q, j1, j2)) = (sel(a)?, sel(b)?);
        if (k1, k2) != (j1, j2) || k1 == k2 {
            return None;
        }
        let f = |x: u64, y: u64| match op {
            BinaryOp::And => x & y,
            _ => x | y,
        };
        if f(k1, k1) != k1 || f(k2, k2) != k2 || f(k1, k2) != f(k2, k1) {
            return None;
        }
        let m = f(k1, k2);
        let pop = if m == k2 {
            BinaryOp::And
        } else if m == k1 {
            BinaryOp::Or
        } else {
            return None;
        };
        Some(Action::PredSelect(pop, p, q, k1, k2))
    }

    /// `op(select(p, k1, k2), x)` (either operand order where `op` commutes; `x - select`
    /// is not rewritten) where `op(k, x)` is `x` or a constant for both `k`
    /// (`and` with 0 / -1, `or` with 0 / -1, `xor`/`add` with 0, `mul` with 0 / 1):
    /// `select(p, op(k1, x), op(k2, x))`, one SEL instead of a SEL and the operation
    /// (Open64's `set` then `and`).
    fn through_select(&self, op: BinaryOp, a: Value, b: Value) -> Option<Action> {
        use BinaryOp as B;
        let ty = self.ty(a);
        if !ty.is_int() || self.ty(b) != ty {
            return None;
        }
        let ones = ty.mask();
        let outcome = |k: u64, x: Value| -> Option<Result<Value, u64>> {
            Some(match (op, k) {
                (B::And, 0) | (B::Mul, 0) => Err(0),
                (B::Or, k) if k == ones => Err(ones),
                (B::And, k) if k == ones => Ok(x),
                (B::Or | B::Xor | B::Add | B::Sub, 0) | (B::Mul, 1) => Ok(x),
                _ => return None,
            })
        };
        let commutes = matches!(op, B::And | B::Or | B::Xor | B::Add | B::Mul);
        let order: &[(Value, Value)] = if commutes {
            &[(a, b), (b, a)]
        } else {
            &[(b, a)]
        };
        for &(s, x) in order {
            let Some(&InstData::Select { cond, args }) = self.def(s) else {
                continue;
            };
            let (Some(k1), Some(k2)) = (self.known(args[0]), self.known(args[1])) else {
                continue;
            };
            if let (Some(r1), Some(r2)) = (outcome(k1, x), outcome(k2, x)) {
                return Some(Action::Select(cond, [r1, r2]));
            }
        }
        None
    }

    /// `x` when `v` is `neg x`.
    fn negated(&self, v: Value) -> Option<Value> {
        match *self.def(v)? {
            InstData::Unary {
                op: UnaryOp::Neg,
                arg,
            } => Some(arg),
            _ => None,
        }
    }

    fn binary(&self, op: BinaryOp, [a, b]: [Value; 2]) -> Option<Action> {
        use Action::{Alias, Const};
        let ty = self.ty(a);
        let ones = ty.mask();
        let (ka, kb) = (self.known(a), self.known(b));
        let same = a == b;
        // A negation folds into the add or sub that reads it (SASS negates an IADD operand
        // for free); the `neg` itself goes if nothing else reads it.
        match op {
            BinaryOp::Add => {
                if let Some(x) = self.negated(b) {
                    return Some(Action::Become(InstData::Binary {
                        op: BinaryOp::Sub,
                        args: [a, x],
                    }));
                }
                if let Some(x) = self.negated(a) {
                    return Some(Action::Become(InstData::Binary {
                        op: BinaryOp::Sub,
                        args: [b, x],
                    }));
                }
            }
            BinaryOp::Sub => {
                if let Some(x) = self.negated(b) {
                    return Some(Action::Become(InstData::Binary {
                        op: BinaryOp::Add,
                        args: [a, x],
                    }));
                }
            }
            BinaryOp::Mul if ty == Type::I64 => {
                if let Some(w) = self.widening(a, b) {
                    return Some(w);
                }
            }
            _ => {}
        }
        // Two selects: predicate logic first (a test of the result then folds too).
        if matches!(op, BinaryOp::And | BinaryOp::Or) && ty.is_int() {
            if let Some(s) = self.select_logic(op, a, b) {
                return Some(s);
            }
        }
        if let Some(s) = self.through_select(op, a, b) {
            return Some(s);
        }
        if op == BinaryOp::And && ty == Type::I32 {
            if let Some(field) = self.field(a, kb).or_else(|| self.field(b, ka)) {
                return Some(field);
            }
        }
        // `and x, m` where m keeps every bit x can have set (a zero-extended byte masked
        // with 255): x itself.
        if op == BinaryOp::And && ty.is_int() {
            for (x, k) in [(a, kb), (b, ka)] {
                if let (Some(m), Some(w)) = (k, self.width_bound(x)) {
                    let low = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                    if m & low == low {
                        return Some(Alias(x));
                    }
                }
            }
        }
        Some(match op {
            BinaryOp::Add if kb == Some(0) => Alias(a),
            BinaryOp::Add if ka == Some(0) => Alias(b),
            BinaryOp::Sub if kb == Some(0) => Alias(a),
            BinaryOp::Sub | BinaryOp::Xor if same => Const(0),
            BinaryOp::Mul if kb == Some(1) => Alias(a),
            BinaryOp::Mul if ka == Some(1) => Alias(b),
            BinaryOp::Mul if ka == Some(0) || kb == Some(0) => Const(0),
            BinaryOp::MulHiU | BinaryOp::MulHiS => return self.mulhi(op, a, b, ka, kb),
            BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS if kb == Some(0) => Alias(a),
            BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS if ka == Some(0) => Const(0),
            BinaryOp::And if kb == Some(ones) => Alias(a),
            BinaryOp::And if ka == Some(ones) => Alias(b),
            BinaryOp::And if ka == Some(0) || kb == Some(0) => Const(0),
            BinaryOp::Or | BinaryOp::Xor if kb == Some(0) => Alias(a),
            BinaryOp::Or | BinaryOp::Xor if ka == Some(0) => Alias(b),
            BinaryOp::Or if ka == Some(ones) || kb == Some(ones) => Const(ones),
            BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::MinS
            | BinaryOp::MinU
            | BinaryOp::MaxS
            | BinaryOp::MaxU
                if same =>
            {
                Alias(a)
            }
            BinaryOp::DivU | BinaryOp::DivS if kb == Some(1) => Alias(a),
            BinaryOp::RemU | BinaryOp::RemS if kb == Some(1) => Const(0),
            // Division by zero is all ones in the IR, whatever the dividend.
            BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS if kb == Some(0) => {
                Const(ones)
            }
            _ => return None,
        })
    }

    /// `and x, mask` where `x` is `shr.u y, pos` (constant `pos`) and `mask` the constant
    /// `2^len - 1` with `pos + len <= 32`: the field `bfe.u y, pos, len`, one `BFE.U32` where
    /// the shift and the mask were `SHR.U32` + `LOP32I.AND`, as ptxas selects it (dxtc's
    /// unrolled `(bits >> 2k) & 3` table indices). Where the shift has other readers it
    /// stays, and the `and` becomes the `BFE` at the same cost.
    fn field(&self, x: Value, mask: Option<u64>) -> Option<Action> {
        let mask = mask?;
        let len = u64::from(mask.trailing_ones());
        if mask == 0 || mask >> len != 0 || len >= 32 {
            return None;
        }
        let &InstData::Binary {
            op: BinaryOp::ShrU,
            args: [y, pos],
        } = self.def(x)?
        else {
            return None;
        };
        let shift = self.known(pos)?;
        (shift > 0 && shift + len <= 32).then_some(Action::Field(y, pos, len))
    }

    /// `mulhi x, 2^k`: the high half of `x << k` is `x >> (N - k)`.
    fn mulhi(
        &self,
        op: BinaryOp,
        a: Value,
        b: Value,
        ka: Option<u64>,
        kb: Option<u64>,
    ) -> Option<Action> {
        let (x, k) = match (ka, kb) {
            (_, Some(k)) => (a, k),
            (Some(k), _) => (b, k),
            _ => return None,
        };
        let n = u64::from(self.ty(a).bits());
        if k == 0 {
            return Some(Action::Const(0));
        }
        if !k.is_power_of_two() {
            return None;
        }
        let s = u64::from(k.trailing_zeros());
        match op {
            // k = 1: the high half of x is 0 (`shr.u x, N` would say the same, at a cost).
            BinaryOp::MulHiU if s == 0 => Some(Action::Const(0)),
            BinaryOp::MulHiU => Some(Action::Shift(BinaryOp::ShrU, x, n - s)),
            // 2^k read as signed must be positive: k ≤ N - 2.
            BinaryOp::MulHiS if s + 2 <= n => Some(Action::Shift(BinaryOp::ShrS, x, n - s)),
            _ => None,
        }
    }

    /// Rewrite every operand in the function through the replacement map.
    fn rewrite_all(&mut self) {
        let repl = &self.repl;
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                self.f.insts[i].data.map_operands(|v| resolve(repl, v));
            }
        }
    }

    /// Remove the pure instructions (and constants) whose results nothing uses. The use
    /// counts and the dead set are slots indexed by value and instruction (dense numbers)
    /// rather than hash maps; the dead instructions are also listed in the order found.
    fn remove_dead(&mut self) {
        let removable = |d: &InstData| {
            is_pure(d)
                || matches!(
                    d,
                    InstData::Iconst { .. } | InstData::Fconst { .. } | InstData::Float { .. }
                )
        };
        let mut uses = use_counts(self.f);
        let unused =
            |uses: &SecondaryMap<Value, u32>, n: &InstNode| n.results.iter().all(|&r| uses[r] == 0);
        let mut work: Vec<Inst> = Vec::new();
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                let n = &self.f.insts[i];
                if removable(&n.data) && unused(&uses, n) {
                    work.push(i);
                }
            }
        }
        let mut is_dead: SecondaryMap<Inst, bool> = SecondaryMap::new();
        let mut dead: Vec<Inst> = Vec::new();
        while let Some(i) = work.pop() {
            if is_dead[i] {
                continue;
            }
            is_dead[i] = true;
            dead.push(i);
            for v in self.f.insts[i].data.operands() {
                let n = &mut uses[v];
                *n = n.saturating_sub(1);
                if *n == 0 {
                    if let ValueDef::Result(d, _) = self.f.values[v].def {
                        let node = &self.f.insts[d];
                        if removable(&node.data) && unused(&uses, node) {
                            work.push(d);
                        }
                    }
                }
            }
        }
        if dead.is_empty() {
            return;
        }
        for b in self.f.layout.clone() {
            self.f.blocks[b].insts.retain(|&i| !is_dead[i]);
        }
        for &i in &dead {
            self.f.insts[i].data = InstData::Iconst {
                ty: Type::I32,
                imm: 0,
            };
        }
        self.stats.removed = dead.len();
    }
}
