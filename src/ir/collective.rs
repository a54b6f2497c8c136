//! Warp collectives that sm_70+ hardware has and sm_5x lacks: `redux.sync`,
//! `match.{any,all}.sync` and `elect.sync` (PTX ISA 6.0-8.0).
//!
//! In: an [`InstData::Collective`](super::InstData::Collective) `{ op, args }`, built by
//! `ir::build` from the PTX: `args` is `[a, membermask]` (`a` i32, or i64 for
//! `match.*.b64`), `[membermask]` for `elect`. Results: `redux` and `match.any` one `i32`;
//! `match.all` and `elect` an `i32` and a `pred`.
//!
//! Out, two things:
//!
//! * **The meaning** ([`CollectiveOp::eval`]), which `ir::eval` applies to the lanes of one warp
//!   that reach the instruction together (as for a vote, see `ir::warp`), straight from the
//!   PTX ISA's definition: `redux` reduces `a` over the lanes of `membermask`; `match.any`
//!   gives each lane the lanes of `membermask` whose `a` equals its own; `match.all` gives
//!   `membermask` and true when all of them hold one value, else 0 and false; `elect` gives
//!   every lane the elected lane (leafold elects the lowest lane of `membermask`: PTX asks
//!   only that the choice be deterministic) and true in that lane. A lane that is not in
//!   its own `membermask`, or a lane of `membermask` that does not take part, makes the
//!   launch undefined (PTX: the executing thread must be in the mask, and every lane of the
//!   mask must execute the instruction).
//! * **The emulation** ([`expand`]), which the driver runs after `ir::build` (so `verify`
//!   compares the meaning above with the simulator running the emulation) and before
//!   `ir::simplify` and lowering: each collective becomes ordinary IR built from votes and
//!   shuffles, with loops where needed, in blocks of its own (the selector emits one
//!   instruction's pieces into one block, so loops must exist before it). With `act =
//!   membermask & ballot(true)` (the members that are here) and `lsb(x) = bfind.shiftamt(
//!   brev(x))`, the lowest set bit:
//!
//! ```text
//! redux, mask the constant 0xffffffff   5 x (v = op(v, shfl.bfly(v, k)))        k = 16..1
//!     (every lane is a member and takes part, so the butterfly reads only members)
//!     cost: 10 SASS instructions (5 SHFL.BFLY, 5 ops)
//! redux, any other mask                 acc = identity; rem = act;
//!                                       do { j = lsb(rem); acc = op(acc, shfl.idx(a, j));
//!                                            rem &= rem - 1 } while rem != 0
//!     (a butterfly would read lanes outside the mask, whose registers hold no partial
//!     result) cost: ~4 to set up, ~7 per member lane (BREV, FLO, SHFL, op, IADD, LOP,
//!     ISETP+BRA), e.g. ~230 dynamic instructions for a full warp
//! match.any                             res = 0; rem = act;
//!                                       do { x = shfl.idx(a, lsb(rem)); eq = (x == a);
//!                                            b = ballot(eq) & act; res = eq ? b : res;
//!                                            rem &= ~b } while rem != 0
//!     (one iteration per distinct value among the members) cost: ~4 to set up, ~9 per
//!     distinct value (b32; b64 adds a second SHFL and compare)
//! match.all                             x = shfl.idx(a, lsb(act)); b = ballot(x == a) & act;
//!                                       p = (b == act); d = p ? membermask : 0
//!     cost: ~9 (b32), ~12 (b64)
//! elect                                 d = lsb(act); p = (%laneid == d)
//!     cost: 6 (VOTE, LOP, BREV, FLO, S2R, ISETP)
//! ```
//!
//! Invariants: [`expand`] leaves no `Collective` in the function; the blocks it adds sit
//! right after the block they came from, in layout order; each collective's results become
//! the parameters of the block that continues after it, so later uses need no rewriting.
//! The loops run the same number of times in every member lane (the trip count depends on
//! `act` and, for `match.any`, on the values of all members), so a warp leaves them together.

use super::{
    BinaryOp, BitOp, Block, BlockData, Function, FunctionBuilder, Inst, InstData, IntCC, ShflMode,
    SpecialReg, Type, UnaryOp, Value, ValueDef, VoteMode,
};

/// The operation of `redux.sync`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ReduxOp {
    Add,
    MinU,
    MinS,
    MaxU,
    MaxS,
    And,
    Or,
    Xor,
}

impl ReduxOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduxOp::Add => "add",
            ReduxOp::MinU => "min.u",
            ReduxOp::MinS => "min.s",
            ReduxOp::MaxU => "max.u",
            ReduxOp::MaxS => "max.s",
            ReduxOp::And => "and",
            ReduxOp::Or => "or",
            ReduxOp::Xor => "xor",
        }
    }

    /// `op(x, y)` on 32-bit values.
    pub fn apply(self, x: u32, y: u32) -> u32 {
        match self {
            ReduxOp::Add => x.wrapping_add(y),
            ReduxOp::MinU => x.min(y),
            ReduxOp::MinS => (x as i32).min(y as i32) as u32,
            ReduxOp::MaxU => x.max(y),
            ReduxOp::MaxS => (x as i32).max(y as i32) as u32,
            ReduxOp::And => x & y,
            ReduxOp::Or => x | y,
            ReduxOp::Xor => x ^ y,
        }
    }

    /// The value `v` with `op(identity, v) = v`.
    pub fn identity(self) -> u32 {
        match self {
            ReduxOp::Add | ReduxOp::MaxU | ReduxOp::Or | ReduxOp::Xor => 0,
            ReduxOp::MinU | ReduxOp::And => u32::MAX,
            ReduxOp::MinS => i32::MAX as u32,
            ReduxOp::MaxS => i32::MIN as u32,
        }
    }

    /// The IR operation computing it.
    fn binary(self) -> BinaryOp {
        match self {
            ReduxOp::Add => BinaryOp::Add,
            ReduxOp::MinU => BinaryOp::MinU,
            ReduxOp::MinS => BinaryOp::MinS,
            ReduxOp::MaxU => BinaryOp::MaxU,
            ReduxOp::MaxS => BinaryOp::MaxS,
            ReduxOp::And => BinaryOp::And,
            ReduxOp::Or => BinaryOp::Or,
            ReduxOp::Xor => BinaryOp::Xor,
        }
    }
}

/// Which collective.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum CollectiveOp {
    /// `redux.sync.op.{u32,s32,b32} d, a, membermask`.
    Redux(ReduxOp),
    /// `match.any.sync.{b32,b64} d, a, membermask`.
    MatchAny,
    /// `match.all.sync.{b32,b64} d{|p}, a, membermask`.
    MatchAll,
    /// `elect.sync d|p, membermask`.
    Elect,
}

/// One lane's view of a collective in `ir::eval`: its `a` (0 for `elect`) and `membermask`.
#[derive(Copy, Clone, Debug)]
pub struct LaneInput {
    pub lane: u32,
    pub a: u64,
    pub mask: u32,
}

impl CollectiveOp {
    pub fn name(self) -> String {
        match self {
            CollectiveOp::Redux(op) => format!("redux.{}", op.name()),
            CollectiveOp::MatchAny => "match.any".into(),
            CollectiveOp::MatchAll => "match.all".into(),
            CollectiveOp::Elect => "elect".into(),
        }
    }

    /// The number of operands (`a` and the mask, or the mask alone).
    pub fn arity(self) -> usize {
        if self == CollectiveOp::Elect {
            1
        } else {
            2
        }
    }

    /// Whether it has a second, predicate result.
    pub fn has_pred(self) -> bool {
        matches!(self, CollectiveOp::MatchAll | CollectiveOp::Elect)
    }

    /// The PTX meaning: for the lanes that take part together (`lanes`, each with its
    /// operand and mask), each lane's results (`d`, and the predicate as 0/1), or why the
    /// PTX is undefined there.
    pub fn eval(self, lanes: &[LaneInput]) -> Result<Vec<(u64, u64)>, String> {
        let here: u32 = lanes.iter().fold(0, |m, l| m | 1 << l.lane);
        let value = |j: u32| lanes.iter().find(|l| l.lane == j).map(|l| l.a);
        let mut out = Vec::with_capacity(lanes.len());
        for l in lanes {
            if l.mask & (1 << l.lane) == 0 {
                return Err(format!(
                    "{}: lane {} is not in its membermask 0x{:08x}",
                    self.name(),
                    l.lane,
                    l.mask
                ));
            }
            if l.mask & !here != 0 {
                return Err(format!(
                    "{}: lane {} of membermask 0x{:08x} does not take part",
                    self.name(),
                    (l.mask & !here).trailing_zeros(),
                    l.mask
                ));
            }
            let members = (0..32).filter(|j| l.mask & (1 << j) != 0);
            let r = match self {
                CollectiveOp::Redux(op) => {
                    let v = members.fold(op.identity(), |acc, j| {
                        op.apply(acc, value(j).unwrap_or(0) as u32)
                    });
                    (u64::from(v), 0)
                }
                CollectiveOp::MatchAny => {
                    let d = members
                        .filter(|&j| value(j) == Some(l.a))
                        .fold(0u32, |m, j| m | 1 << j);
                    (u64::from(d), 0)
                }
                CollectiveOp::MatchAll => {
                    let all = members.into_iter().all(|j| value(j) == Some(l.a));
                    (if all { u64::from(l.mask) } else { 0 }, u64::from(all))
                }
                CollectiveOp::Elect => {
                    let leader = l.mask.trailing_zeros();
                    (u64::from(leader), u64::from(leader == l.lane))
                }
            };
            out.push(r);
        }
        Ok(out)
    }
}

/// Replace every `Collective` of `f` by its emulation (see the module essay).
pub fn expand(f: &mut Function) {
    while let Some((block, pos, inst)) = find(f) {
        expand_one(f, block, pos, inst);
    }
}

fn find(f: &Function) -> Option<(Block, usize, Inst)> {
    for &b in &f.layout {
        for (pos, &i) in f.blocks[b].insts.iter().enumerate() {
            if matches!(f.insts[i].data, InstData::Collective { .. }) {
                return Some((b, pos, i));
            }
        }
    }
    None
}

/// Split `block` at `inst` (position `pos`): the instructions after it move to a new block
/// whose parameters are `inst`'s results; `block` ends with the emulation, which jumps there.
fn expand_one(f: &mut Function, block: Block, pos: usize, inst: Inst) {
    let InstData::Collective { op, ref args } = f.insts[inst].data else {
        return;
    };
    let args: Vec<Value> = args.to_vec();
    let results = f.insts[inst].results.clone();
    let loc = f.srclocs[inst];
    let tail = f.blocks.push(BlockData::default());
    let moved = f.blocks[block].insts.split_off(pos + 1);
    f.blocks[block].insts.truncate(pos);
    for &i in &moved {
        f.insts[i].block = tail;
    }
    f.blocks[tail].insts = moved;
    for (k, &r) in results.iter().enumerate() {
        f.values[r].def = ValueDef::Param(tail, k);
        f.blocks[tail].params.push(r);
    }
    let before = f.blocks.len();
    let mut fb = FunctionBuilder::new(f);
    fb.set_srcloc(loc);
    fb.switch_to_block(block);
    let mut e = Emit { fb };
    let outs: Vec<Value> = match op {
        CollectiveOp::Redux(r) => vec![e.redux(r, args[0], args[1])],
        CollectiveOp::MatchAny => vec![e.match_any(args[0], args[1])],
        CollectiveOp::MatchAll => {
            let (d, p) = e.match_all(args[0], args[1]);
            vec![d, p]
        }
        CollectiveOp::Elect => {
            let (d, p) = e.elect(args[0]);
            vec![d, p]
        }
    };
    e.fb.jump(tail, &outs);
    // Lay the new blocks (the loop's, then the tail) out right after `block`.
    let added: Vec<Block> = f
        .layout
        .iter()
        .copied()
        .filter(|b| b.index() >= before)
        .collect();
    f.layout.retain(|b| b.index() < before);
    let at = f
        .layout
        .iter()
        .position(|&b| b == block)
        .map_or(0, |p| p + 1);
    let mut new_blocks = added;
    new_blocks.push(tail);
    for (k, b) in new_blocks.into_iter().enumerate() {
        f.layout.insert(at + k, b);
    }
}

use cranelift_entity::EntityRef;

struct Emit<'f> {
    fb: FunctionBuilder<'f>,
}

impl Emit<'_> {
    fn k(&mut self, x: i64) -> Value {
        self.fb.iconst(Type::I32, x)
    }

    /// The members that are here: `mask & ballot(true)`.
    fn active(&mut self, mask: Value) -> Value {
        let z = self.k(0);
        let t = self.fb.icmp(IntCC::Eq, z, z);
        let ballot = self.fb.vote(VoteMode::Ballot, t);
        self.fb.binary(BinaryOp::And, mask, ballot)
    }

    /// The index of the lowest set bit of `x` (`BREV` + `FLO.SH`).
    fn lsb(&mut self, x: Value) -> Value {
        let r = self.fb.bits(BitOp::Brev, &[x]);
        self.fb.bits(
            BitOp::Bfind {
                signed: false,
                shiftamt: true,
            },
            &[r],
        )
    }

    /// `shfl.idx` of the 32-bit `a` from lane `j`.
    fn read_lane(&mut self, a: Value, j: Value) -> Value {
        let c = self.k(0x1f);
        self.fb.shfl(ShflMode::Idx, a, j, c).0
    }

    /// Whether lane `j`'s `a` equals ours (i32 or i64 `a`).
    fn equal_to_lane(&mut self, a: Value, j: Value) -> Value {
        if self.fb.func.values[a].ty != Type::I64 {
            let x = self.read_lane(a, j);
            return self.fb.icmp(IntCC::Eq, x, a);
        }
        let lo = self.fb.trunc(Type::I32, a);
        let k32 = self.k(32);
        let hi64 = self.fb.binary(BinaryOp::ShrU, a, k32);
        let hi = self.fb.trunc(Type::I32, hi64);
        let xl = self.read_lane(lo, j);
        let xh = self.read_lane(hi, j);
        let el = self.fb.icmp(IntCC::Eq, xl, lo);
        let eh = self.fb.icmp(IntCC::Eq, xh, hi);
        self.fb.binary(BinaryOp::And, el, eh)
    }

    /// A do-while loop over `rem`: `body(rem, state) -> (next rem, next state)`; returns
    /// the final state. The current block jumps into the loop; the builder ends in the
    /// loop's exit block.
    fn loop_over(
        &mut self,
        rem0: Value,
        state0: Value,
        body: impl FnOnce(&mut Self, Value, Value) -> (Value, Value),
    ) -> Value {
        let head = self.fb.create_block();
        let rem = self.fb.append_block_param(head, Type::I32);
        let state = self.fb.append_block_param(head, Type::I32);
        let exit = self.fb.create_block();
        let out = self.fb.append_block_param(exit, Type::I32);
        self.fb.jump(head, &[rem0, state0]);
        self.fb.switch_to_block(head);
        let (rem2, state2) = body(self, rem, state);
        let z = self.k(0);
        let more = self.fb.icmp(IntCC::Ne, rem2, z);
        self.fb.brif(more, head, &[rem2, state2], exit, &[state2]);
        self.fb.switch_to_block(exit);
        out
    }

    fn redux(&mut self, op: ReduxOp, a: Value, mask: Value) -> Value {
        let f = &self.fb.func;
        let full = match f.values[mask].def {
            ValueDef::Result(i, _) => {
                matches!(f.insts[i].data, InstData::Iconst { imm, .. } if imm as u32 == u32::MAX)
            }
            ValueDef::Param(..) => false,
        };
        if full {
            let c = self.k(0x1f);
            let mut v = a;
            for k in [16, 8, 4, 2, 1] {
                let kk = self.k(k);
                let (t, _) = self.fb.shfl(ShflMode::Bfly, v, kk, c);
                v = self.fb.binary(op.binary(), v, t);
            }
            return v;
        }
        let act = self.active(mask);
        let id = self.k(i64::from(op.identity() as i32));
        self.loop_over(act, id, |e, rem, acc| {
            let j = e.lsb(rem);
            let x = e.read_lane(a, j);
            let acc2 = e.fb.binary(op.binary(), acc, x);
            let one = e.k(1);
            let less = e.fb.binary(BinaryOp::Sub, rem, one);
            let rem2 = e.fb.binary(BinaryOp::And, rem, less);
            (rem2, acc2)
        })
    }

    fn match_any(&mut self, a: Value, mask: Value) -> Value {
        let act = self.active(mask);
        let z = self.k(0);
        self.loop_over(act, z, |e, rem, res| {
            let j = e.lsb(rem);
            let eq = e.equal_to_lane(a, j);
            let ballot = e.fb.vote(VoteMode::Ballot, eq);
            let b = e.fb.binary(BinaryOp::And, ballot, act);
            let res2 = e.fb.select(eq, b, res);
            let nb = e.fb.unary(UnaryOp::Not, b);
            let rem2 = e.fb.binary(BinaryOp::And, rem, nb);
            (rem2, res2)
        })
    }

    fn match_all(&mut self, a: Value, mask: Value) -> (Value, Value) {
        let act = self.active(mask);
        let j = self.lsb(act);
        let eq = self.equal_to_lane(a, j);
        let ballot = self.fb.vote(VoteMode::Ballot, eq);
        let b = self.fb.binary(BinaryOp::And, ballot, act);
        let all = self.fb.icmp(IntCC::Eq, b, act);
        let z = self.k(0);
        let d = self.fb.select(all, mask, z);
        (d, all)
    }

    fn elect(&mut self, mask: Value) -> (Value, Value) {
        let act = self.active(mask);
        let j = self.lsb(act);
        let lane = self.fb.special_reg(SpecialReg::LaneId);
        let p = self.fb.icmp(IntCC::Eq, lane, j);
        (j, p)
    }
}
