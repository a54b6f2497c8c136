//! Instruction selection: IR instructions → [`Sm50Inst`]s, demand-driven.
//!
//! In: a verified [`ir::Function`]. Out: a [`VCode<Sm50Inst>`] over virtual registers.
//!
//! # Demand
//!
//! Roots are the instructions with effects: loads, stores, atomics, barriers and terminators.
//! Every other instruction is lowered only if one of its results is *demanded in a register*
//! by an instruction that is itself lowered. To know what an instruction demands, it is lowered once
//! in *planning* mode: the same code runs, but it records the values it asks for
//! ([`Lowerer::reg`]) instead of emitting anything. Emission then runs the same code again.
//! So what is demanded and what is emitted cannot disagree. A value used only inside an address
//! (`shl`, `mul.wide`, `add` feeding a load) is never demanded: the address matcher folds it
//! and asks only for the leaves. Constants, kernel parameters and `%ntid`-style registers are
//! operands (`imm20`, `imm32`, `c[0x0][..]`) and are materialized only where no form takes
//! them. Float constants that no immediate holds (and `selp` constants) are read from the
//! kernel's literal pool, `c[0x2][off]` ([`Lowerer::literal`]; the driver writes it as
//! `.nv.constant2.<kernel>`).
//!
//! # Order
//!
//! Machine blocks are created in the IR's layout order, but the blocks are *selected* in an
//! order where each comes after its immediate dominator ([`lowering_order`]): a value is
//! read only where its definition dominates, so it is in a register before any use is
//! selected, whatever the layout (a loop body laid out before the header the entry jumps
//! into reads header values above their definition). Where the layout is already such an
//! order, it is the layout itself, and the output is that of a plain layout walk.
//!
//! # Values in registers
//!
//! i8/i16/i32/f32 live in one 32-bit register, i64/f64 in an aligned pair, predicates in a
//! predicate register. A value may also be a *word* of a bigger group ([`Loc`]: the low word
//! of a pair after `trunc`, element 2 of an `LDG.128`), which readers address directly.
//! **i8/i16 values have unspecified high bits**: operations whose low bits do not depend on
//! them (add, sub, mul, shl, logic, trunc, stores) use the register as is; those that do
//! (compares, right shifts, min/max, extensions) normalize first (`BFE`, `LOP32I.AND`).
//!
//! A 64-bit value built from two words, `or(zext lo, shl(zext hi, 32))` (PTX `mov.b64 d,
//! {lo, hi}`; a constant word is also recognised), is the pair itself: one `MOV` per word
//! into it (`Lowerer::lower_pair`), not two extensions, a shift and two `LOP.OR`s. The words
//! stay in their own registers until then: the allocator's scalar and pair classes are
//! disjoint, so the moves cannot be coalesced away.
//!
//! Multiplication by anything but a power of two (`mulhi`, `mulwide`, 64- and 16-bit `mul`)
//! is in the child module `mul`: ptxas's `XMAD` sequences. Bit-field operations and the clock
//! registers are in `bits`; atomics (`ATOM`, `RED`, `ATOMS`) in `atomic`; votes and
//! shuffles in `warp`.
//!
//! # Not supported (a [`LowerError::Unsupported`] naming the instruction)
//!
//! 64-bit `div`/`rem` (8..32-bit division is one branch-free sequence, see `div.rs`; `ir::build`
//! expands PTX's 64-bit division into a loop of plain operations instead),
//! 64-bit min/max, predicate `select` and `cvta` of the const space. (The
//! address of a `.global` variable is ptxas's `MOV32I lo, 0x0` / `MOV32I hi, 0x0` pair, each
//! piece carrying the [`super::Reloc`] the driver turns into `R_CUDA_ABS32_LO_20`/`HI_20`; in
//! a 32-bit module, where the address is 32 bits, one `MOV32I` with `R_CUDA_ABS32_20`.) Floating-point operations are selected in the child module `float`
//! (`lower/float.rs`). The IR
//! has no add-with-carry (carries are predicates, see `ir::build`); with `--fold=full` the
//! add/compare/select shape of an `add.cc`/`addc` chain over (shifted) words is recognised by
//! [`super::carry`] and emitted as one [`Sm50Inst`]: `LEA.CC` followed by `LEA.HI.X[.CC]`
//! links (the seed's U128 example), each link reading the previous word.
//!
//! # Spaces
//!
//! `.global` → `LDG`/`STG` (`.E` for a 64-bit address), generic → `LD`/`ST` with `Plg` or PT,
//! `.shared` → `LDS.U`/`STS`, `.const` → `LDC` from bank 3, `.local` → `LDL`/`STL` at
//! `[R1 + offset]` (a local address is an offset from the stack pointer; the frame holds the
//! variables first and the spill slots after them), `.param` → `c[0x0][0x140 + offset]`.

mod approx;
mod atomic;
mod bits;
mod cache;
mod call;
mod div;
mod fdiv;
mod half;
pub(crate) use call::{extern_call_clobbers, SUB_CAL_BASE};
pub(crate) use fdiv::{fdiv_slow_path, CALL_CLOBBERS, CAL_FDIV};
mod mul;
mod prefetch;
pub(crate) mod stack;
mod surface;
mod tex;
mod warp;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

#[path = "float.rs"]
mod float;

use smallvec::SmallVec;

use super::amode::{match_address, AddrMode, Base, Ext, Facts, Index};
use super::carry::{find_chains, CarryChain};
use super::inst::{RelocWord, Role, Sm50Inst};
use super::lea::{
    carry_chain, fits_imm20, narrow_chain, plg_step, wide_chain, ChainBase, ChainIndex, Loc,
};
use super::plain;
use super::stats::{Fold, FoldStats};
use super::{LowerError, LowerOptions};
use crate::ir::float::FloatOp;
use crate::ir::{
    self, BinaryOp, Block, CacheOp, ConvOp, CvtaDir, Function, Inst, InstData, IntCC, Space,
    SpecialReg, Type, UnaryOp, Value, ValueDef,
};
use crate::machinst::{BlockId, OpSpec, PhysReg, Reg, RegKind, VCodeBuilder, VReg};
use crate::sm50::{self, Field, Form};
use cranelift_entity::EntityRef;

/// A source operand as an instruction form can take it.
#[derive(Clone, Copy, Debug)]
enum Src {
    Reg(Loc),
    /// An immediate: the value sign-extended from its type (raw bits for floats).
    Imm(i64),
    /// A word in constant bank 0, by byte offset (the high word of a pair at +4).
    Cbuf(u32),
    /// A literal in constant bank 2, the kernel's literal pool (see [`Lowerer::literal`]), by
    /// byte offset (the high word of a pair at +4).
    Lit(u32),
}

/// A word of a 64-bit value built from two halves ([`Lowerer::pair_words`]).
#[derive(Clone, Copy)]
enum Word {
    /// An i32 value.
    Val(Value),
    /// The low word of an i64 value.
    Low(Value),
    Imm(u32),
}

/// What a value is before it is put in a register.
#[derive(Clone, Copy, Debug)]
enum Class {
    Reg,
    Imm(i64),
    Cbuf(u32),
}

/// Key of a chain shared by several accesses (of one block, or of blocks its block
/// dominates).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ChainKey {
    mode: AddrMode,
    plg: bool,
    sp: bool,
}

pub(super) struct Lowerer<'a> {
    module: &'a ir::Module,
    f: &'a Function,
    opts: &'a LowerOptions,
    vb: VCodeBuilder<Sm50Inst>,
    blocks: HashMap<Block, BlockId>,
    /// Where each lowered value is, by value number (`None` until it is lowered).
    locs: Vec<Option<Loc>>,
    cur: BlockId,
    /// `Some` while planning: the values asked for in registers.
    planning: Option<Vec<Value>>,
    /// By value number: whether the value has a use outside address arithmetic
    /// ([`non_address_uses`]).
    non_address_use: Vec<bool>,
    /// How many operand slots of the function read each value, by value number (a `mul` read
    /// once, by an `add`, is folded into that add's XMADs: [`Lowerer::lower_mad32`]).
    use_count: Vec<u32>,
    /// Chains built so far, with the IR block each was built in: an access reuses one built in
    /// a block that dominates its own (see [`Lowerer::chain`]).
    chains: HashMap<ChainKey, Vec<(Block, VReg, Option<VReg>)>>,
    /// Sign words (`SHR s, i, 0x1f`) of sign-extended chain indices, with their blocks.
    signs: HashMap<Value, Vec<(Block, Loc)>>,
    /// How many chains (counted while planning) use each sign-extended index.
    sext_chains: HashMap<Value, u32>,
    /// `base + disp` steps with Plg ([`Lowerer::plg_step`]), by base register and
    /// displacement, with their blocks (shared within a block only).
    plg_steps: HashMap<(VReg, i64), (Block, VReg, VReg)>,
    doms: ir::Dominators,
    /// Extended-precision carry chains (`--fold=full`), and for each result the chain's
    /// index; a chain is emitted once, where its first demanded result is lowered.
    carry_chains: Vec<CarryChain>,
    carry_of: HashMap<Value, usize>,
    carry_done: HashMap<usize, Vec<Loc>>,
    /// The IR block being lowered.
    cur_ir: Option<Block>,
    /// Byte offsets of `.shared` and `.const` variables in their spaces.
    var_offsets: Vec<u32>,
    /// `brif`s whose condition is warp-uniform (no `SSY` needed).
    uniform: HashSet<Inst>,
    /// What folding did (`--stats`); counted outside planning only.
    stats: FoldStats,
    /// The literal pool, `.nv.constant2.<kernel>` (constant bank 2): the constants (float
    /// operands, `selp` operands) that instructions read as `c[0x2][off]`, each once (by bits
    /// and size), in the order emission first asks for them, each at its own alignment (as
    /// ptxas lays it out).
    lits: Vec<u8>,
    lit_offsets: HashMap<(u64, u8), u32>,
    /// Integer divisions that share a divisor, and the shared parts built so far.
    div_share: div::DivShare,
    /// Virtual registers numbered below this were defined before the current block, or
    /// before the last call of the f32 division subroutine in it (see `fdiv::pinned_operand`).
    fdiv_floor: u32,
    /// In a subroutine ([`ir::Function::subroutine`]): each argument word's copy, made at
    /// entry from R4.. (`select::call`).
    sub_args: Vec<VReg>,
}

/// The size of a constant bank: the pool must fit (the `cbo` field addresses 64 KiB).
const BANK_BYTES: usize = 0x10000;

fn kind_of(ty: Type) -> RegKind {
    match ty {
        Type::I64 | Type::F64 => RegKind::B64,
        Type::Pred => RegKind::Pred,
        _ => RegKind::B32,
    }
}

fn sext_imm(ty: Type, imm: u64) -> i64 {
    let bits = ty.bits().clamp(1, 64);
    ((imm << (64 - bits)) as i64) >> (64 - bits)
}

/// The values that have a use outside address arithmetic: not as the address of a load or
/// store, and not as an operand of an add/sub/shift/multiply/extension/`cvta.global` whose own
/// result is used only in address arithmetic. Such values are in a register anyway, so an
/// address can use them as they are; the others are folded into chains.
/// The result is a flag per value number (dense tables: these are read for every operand).
fn non_address_uses(f: &Function) -> Vec<bool> {
    let foldable = |d: &InstData| {
        matches!(
            d,
            InstData::Binary {
                op: BinaryOp::Add | BinaryOp::Sub | BinaryOp::Shl | BinaryOp::Mul,
                ..
            } | InstData::MulWide { .. }
                | InstData::Convert {
                    op: ConvOp::Sext | ConvOp::Zext,
                    ..
                }
                | InstData::Cvta {
                    space: Space::Global,
                    ..
                }
        )
    };
    let mut used = vec![false; f.values.len()];
    // The values flagged so far and not yet followed.
    let mut work: Vec<Value> = Vec::new();
    // Direct uses outside addresses and address arithmetic.
    for node in f.insts.values() {
        let skip_first = matches!(
            node.data,
            InstData::Load { .. }
                | InstData::Store { .. }
                | InstData::Atomic { .. }
                | InstData::Prefetch { .. }
        );
        if foldable(&node.data) {
            continue;
        }
        for (k, &v) in node.data.operand_parts().into_iter().flatten().enumerate() {
            let address = skip_first && k == 0;
            if !address && !used[v.index()] {
                used[v.index()] = true;
                work.push(v);
            }
        }
    }
    // The operands of foldable instructions whose result is used that way, transitively: a
    // worklist over the values newly found used (linear; a pass-until-fixpoint loop was
    // quadratic on long accumulator chains).
    let mut def: HashMap<Value, &InstData> = HashMap::default();
    for node in f.insts.values() {
        if foldable(&node.data) {
            for r in &node.results {
                def.insert(*r, &node.data);
            }
        }
    }
    while let Some(v) = work.pop() {
        if let Some(d) = def.get(&v) {
            for x in d.operands() {
                if !used[x.index()] {
                    used[x.index()] = true;
                    work.push(x);
                }
            }
        }
    }
    used
}

/// The order in which [`Lowerer::run`] lowers the blocks of `f`: each reachable block after
/// its immediate dominator, and among the blocks that order allows, the first in layout.
///
/// Why: a value is read only in blocks its definition dominates (SSA), so a block lowered
/// after its dominators finds every value it reads already in a register. The layout need
/// not be such an order: a loop whose body is laid out before the header the entry jumps
/// into (`bra L_HEAD; L_BODY: ..; L_HEAD: ..; @p bra L_BODY`) reads header values in the
/// body, above their definition. Lowering order is not code order: machine blocks stay in
/// layout order (they are created in it), only the order in which their instructions are
/// selected changes. Where the layout already is a valid order (the usual case) this *is*
/// the layout, so virtual register numbers, literal-pool order and therefore the output are
/// those of a plain layout walk. Unreachable blocks (none after `ir::build`, but the IR
/// allows them) have no dominator and keep their layout place.
///
/// (Kahn's topological sort of the dominator tree with the smallest layout index first: a
/// binary heap of ready blocks; when the layout is valid, the next layout block is always
/// ready and the smallest.)
fn lowering_order(f: &Function, doms: &ir::Dominators) -> Vec<Block> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = f.layout.len();
    let mut index: HashMap<Block, usize> = HashMap::with_capacity_and_hasher(n, Default::default());
    for (k, &b) in f.layout.iter().enumerate() {
        index.insert(b, k);
    }
    // Dominator-tree children by layout index, and the roots (the entry, unreachable blocks).
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut ready = BinaryHeap::new();
    for (k, &b) in f.layout.iter().enumerate() {
        match doms.idom(b).and_then(|d| index.get(&d)) {
            Some(&d) => children[d].push(k),
            None => ready.push(Reverse(k)),
        }
    }
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(k)) = ready.pop() {
        order.push(f.layout[k]);
        for &c in &children[k] {
            ready.push(Reverse(c));
        }
    }
    debug_assert_eq!(order.len(), n);
    order
}

fn lop_code(op: BinaryOp) -> u64 {
    match op {
        BinaryOp::And => 0,
        BinaryOp::Or => 1,
        _ => 2,
    }
}

/// ISETP comparison code and signedness; `strict` drops the "or equal" (for the high word of
/// a 64-bit compare).
fn cmp_code(cc: IntCC) -> (u64, bool) {
    match cc {
        IntCC::Eq => (2, false),
        IntCC::Ne => (5, false),
        IntCC::Slt => (1, true),
        IntCC::Sle => (3, true),
        IntCC::Sgt => (4, true),
        IntCC::Sge => (6, true),
        IntCC::Ult => (1, false),
        IntCC::Ule => (3, false),
        IntCC::Ugt => (4, false),
        IntCC::Uge => (6, false),
    }
}

fn swap_cc(cc: IntCC) -> IntCC {
    match cc {
        IntCC::Slt => IntCC::Sgt,
        IntCC::Sle => IntCC::Sge,
        IntCC::Sgt => IntCC::Slt,
        IntCC::Sge => IntCC::Sle,
        IntCC::Ult => IntCC::Ugt,
        IntCC::Ule => IntCC::Uge,
        IntCC::Ugt => IntCC::Ult,
        IntCC::Uge => IntCC::Ule,
        c => c,
    }
}

/// Memory size code (`.U8` .. `.128`) for a total access size in bytes.
fn size_code(bytes: u32, signed: bool) -> u64 {
    match (bytes, signed) {
        (1, false) => 0,
        (1, true) => 1,
        (2, false) => 2,
        (2, true) => 3,
        (8, _) => 5,
        (16, _) => 6,
        _ => 4,
    }
}

impl<'a> Lowerer<'a> {
    pub(super) fn new(module: &'a ir::Module, f: &'a Function, opts: &'a LowerOptions) -> Self {
        let non_address_use = non_address_uses(f);
        // `.const` variables are laid out in `vars_in_layout_order` at their alignment,
        // exactly as `ir::eval` does (its const region also holds param/generic-space
        // variables); `.shared` and `.local` ones per kernel, by `shared_layout` and
        // `local_layout`.
        let mut const_end = 0u32;
        let mut var_offsets = vec![0; module.vars.len()];
        for (gv, off) in module.shared_layout(f).offsets {
            var_offsets[gv.as_u32() as usize] = off;
        }
        for (gv, off) in module.local_layout(f).0 {
            var_offsets[gv.as_u32() as usize] = off;
        }
        for (gv, v) in module.vars_in_layout_order() {
            if let Space::Const | Space::Param | Space::Generic = v.space {
                let off = const_end.next_multiple_of(v.align.max(1));
                const_end = off.saturating_add(v.size);
                var_offsets[gv.as_u32() as usize] = off;
            }
        }
        Lowerer {
            module,
            f,
            opts,
            vb: VCodeBuilder::new(),
            // Sized once (capacity only: neither map is iterated): growing them by rehashing
            // was a visible share of selection.
            blocks: HashMap::with_capacity_and_hasher(f.layout.len(), Default::default()),
            locs: vec![None; f.values.len()],
            cur: BlockId(0),
            planning: None,
            non_address_use,
            use_count: {
                let mut n = vec![0u32; f.values.len()];
                for node in f.insts.values() {
                    for part in node.data.operand_parts() {
                        for &v in part {
                            n[v.index()] += 1;
                        }
                    }
                }
                n
            },
            chains: HashMap::default(),
            signs: HashMap::default(),
            sext_chains: HashMap::default(),
            plg_steps: HashMap::default(),
            doms: ir::Dominators::of(f),
            carry_chains: Vec::new(),
            carry_of: HashMap::default(),
            carry_done: HashMap::default(),
            cur_ir: None,
            var_offsets,
            uniform: super::reconverge::uniform_branches(f),
            stats: FoldStats::default(),
            lits: Vec::new(),
            lit_offsets: HashMap::default(),
            div_share: div::DivShare::of(f),
            fdiv_floor: 0,
            sub_args: Vec::new(),
        }
    }

    /// The IR instruction being lowered names its PTX line (when it has one), so that the
    /// diagnostic, which points at the kernel, also says which instruction it is.
    fn unsupported(&self, what: impl Into<String>) -> LowerError {
        let mut what = what.into();
        if let Some(line) = self.vb.srcloc().ptx_line() {
            what = format!("{what} (PTX line {line})");
        }
        LowerError::Unsupported {
            func: self.f.name.clone(),
            what,
        }
    }

    // ------------------------------------------------------------------ driver

    pub(super) fn run(mut self) -> Result<super::Lowered, LowerError> {
        if self.opts.fold == Fold::Full {
            self.carry_chains = find_chains(self.f);
            for (k, c) in self.carry_chains.iter().enumerate() {
                for l in &c.links {
                    self.carry_of.insert(l.result, k);
                }
            }
        }
        let needed = self.demand()?;
        self.vb.set_srcloc(crate::machinst::SrcLoc::NONE);
        // VCode's entry block may not be a branch target; when the IR's is one (a loop at
        // the very top of a kernel), an empty block that falls into it goes first.
        let entry = self.f.entry_block();
        let entry_targeted = self
            .f
            .insts
            .values()
            .any(|n| n.data.targets().iter().any(|t| Some(t.block) == entry));
        // A subroutine takes its arguments out of R4.. in a block of its own, run once.
        let pre = (entry_targeted || self.f.subroutine).then(|| self.vb.new_block());
        if let (Some(pre), true) = (pre, self.f.subroutine) {
            self.cur = pre;
            self.capture_sub_args();
        }
        for &b in &self.f.layout {
            // Room for one machine instruction per IR instruction: folded ones need none,
            // most others one, and a few more (capacity only).
            let id = self
                .vb
                .new_block_with_capacity(self.f.blocks[b].insts.len());
            self.blocks.insert(b, id);
        }
        if let (Some(pre), Some(e)) = (pre, entry) {
            let target = self.blocks[&e];
            let mut i = Sm50Inst::new(Role::Branch);
            i.targets.push(target);
            i.branch_piece(0, None);
            self.vb.terminate(pre, i, vec![(target, Vec::new())]);
        }
        for b in lowering_order(self.f, &self.doms) {
            self.cur = self.blocks[&b];
            self.cur_ir = Some(b);
            self.fdiv_floor = self.vb.num_vregs();
            for &p in &self.f.blocks[b].params {
                let kind = kind_of(self.f.value_type(p));
                let v = self.vb.add_block_param(self.cur, kind);
                self.locs[p.index()] = Some(Loc { vreg: v, offset: 0 });
            }
            for &i in &self.f.blocks[b].insts {
                if needed[i.index()] {
                    self.vb.set_srcloc(self.f.srcloc(i));
                    self.lower_inst(i)?;
                }
            }
        }
        let stats = std::mem::take(&mut self.stats);
        let constant2 = std::mem::take(&mut self.lits);
        let vcode = self.vb.finish().map_err(LowerError::Internal)?;
        Ok(super::Lowered {
            vcode,
            fold: stats,
            constant2,
        })
    }

    /// The instructions to lower (a flag per instruction number): roots and everything a
    /// lowered instruction demands.
    fn demand(&mut self) -> Result<Vec<bool>, LowerError> {
        let mut needed = vec![false; self.f.insts.len()];
        let mut work = Vec::new();
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                let d = &self.f.insts[i].data;
                let root = d.is_terminator()
                    || matches!(
                        d,
                        InstData::Load { .. }
                            | InstData::Store { .. }
                            | InstData::Barrier
                            | InstData::NamedBarrier { .. }
                            | InstData::BarrierRed { .. }
                            | InstData::MemBar { .. }
                            | InstData::Trap
                            | InstData::Atomic { .. }
                            | InstData::Prefetch { .. }
                            | InstData::BarrierReg { .. }
                            | InstData::Stack { .. }
                            | InstData::Surface { .. }
                            | InstData::ExternCall { .. }
                    );
                if root && !needed[i.index()] {
                    needed[i.index()] = true;
                    work.push(i);
                }
            }
        }
        let mut demanded = vec![false; self.f.values.len()];
        // One list of asked values for every planned instruction, emptied after each (a new
        // vector per instruction was an allocation each).
        let mut asked_buf = Vec::new();
        while let Some(i) = work.pop() {
            self.planning = Some(std::mem::take(&mut asked_buf));
            self.vb.set_srcloc(self.f.srcloc(i));
            let r = self.lower_inst(i);
            let mut asked = self.planning.take().unwrap_or_default();
            r?;
            for v in asked.drain(..) {
                if !demanded[v.index()] {
                    demanded[v.index()] = true;
                    if let ValueDef::Result(d, _) = self.f.values[v].def {
                        if !needed[d.index()] {
                            needed[d.index()] = true;
                            work.push(d);
                        }
                    }
                }
            }
            asked_buf = asked;
        }
        Ok(needed)
    }

    // ------------------------------------------------------------ primitives

    fn new_vreg(&mut self, kind: RegKind) -> VReg {
        if self.planning.is_some() {
            VReg { index: 0, kind }
        } else {
            self.vb.new_vreg(kind)
        }
    }

    fn push(&mut self, inst: Sm50Inst) {
        if self.planning.is_none() {
            self.vb.push(self.cur, inst);
        }
    }

    fn set_loc(&mut self, v: Value, loc: Loc) {
        if self.planning.is_none() {
            self.locs[v.index()] = Some(loc);
        }
    }

    fn ty(&self, v: Value) -> Type {
        self.f.value_type(v)
    }

    fn def_of(&self, v: Value) -> Option<&'a InstData> {
        let f: &'a Function = self.f;
        match f.values[v].def {
            ValueDef::Result(i, _) => Some(&f.insts[i].data),
            ValueDef::Param(..) => None,
        }
    }

    /// `v` in a register (demanding it).
    fn reg(&mut self, v: Value) -> Result<Loc, LowerError> {
        if let Some(asked) = &mut self.planning {
            asked.push(v);
            return Ok(Loc {
                vreg: VReg {
                    index: 0,
                    kind: kind_of(self.f.value_type(v)),
                },
                offset: 0,
            });
        }
        self.locs
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| LowerError::Internal(format!("{v} used before it was lowered")))
    }

    /// The byte offset in the literal pool (constant bank 2) of the `bytes`-byte constant
    /// `bits` (4 or 8 bytes, little-endian, at its own alignment), added on first use; an
    /// error when the bank is full. While planning nothing is added (the offset is a
    /// placeholder): the pool holds what emission uses, in the order it uses it.
    fn literal(&mut self, bits: u64, bytes: u8) -> Result<u32, LowerError> {
        if self.planning.is_some() {
            return Ok(0);
        }
        if let Some(&o) = self.lit_offsets.get(&(bits, bytes)) {
            return Ok(o);
        }
        let at = self.lits.len().next_multiple_of(usize::from(bytes));
        if at + usize::from(bytes) > BANK_BYTES {
            return Err(self.unsupported("more than 64 KiB of floating-point literals"));
        }
        self.lits.resize(at, 0);
        self.lits
            .extend_from_slice(&bits.to_le_bytes()[..usize::from(bytes)]);
        let o = at as u32;
        self.lit_offsets.insert((bits, bytes), o);
        Ok(o)
    }

    /// `v` as one whole register group of its own kind (block arguments, moves): a word of
    /// a bigger group is copied out.
    fn whole(&mut self, v: Value) -> Result<VReg, LowerError> {
        let loc = self.reg(v)?;
        let kind = kind_of(self.ty(v));
        if loc.offset == 0 && loc.vreg.kind == kind {
            return Ok(loc.vreg);
        }
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let s = i.use_(loc.vreg);
        for k in 0..kind.gprs() as u8 {
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, k), (Field::Rb, s, loc.offset + k)],
            );
        }
        self.push(i);
        Ok(d)
    }

    /// What a value is as an operand, from the IR alone.
    fn class(&self, v: Value) -> Class {
        let Some(d) = self.def_of(v) else {
            return Class::Reg;
        };
        match d {
            InstData::Iconst { ty, imm } => Class::Imm(sext_imm(*ty, *imm)),
            InstData::Fconst { ty, bits } => Class::Imm(sext_imm(*ty, *bits)),
            // A narrow parameter inside a word (`.u16` at offset 2): only a register holds it
            // at bit 0 (see `materialize`); a `c[0x0][..]` operand would read the whole word.
            InstData::LoadParam { .. } if self.f.subroutine => Class::Reg,
            InstData::LoadParam { offset, .. } if offset % 4 != 0 => Class::Reg,
            InstData::LoadParam { offset, .. } => Class::Cbuf(0x140 + offset),
            InstData::SpecialReg { reg } => match reg {
                SpecialReg::Ntid(d) => Class::Cbuf(0x8 + 4 * d.index() as u32),
                SpecialReg::Nctaid(d) => Class::Cbuf(0x14 + 4 * d.index() as u32),
                SpecialReg::GridId => Class::Cbuf(0x28),
                SpecialReg::NWarpId => Class::Imm(64),
                // Where ptxas reads them: the driver's words in bank 0.
                SpecialReg::DynamicSmemSize => Class::Cbuf(0xfc),
                SpecialReg::EnvReg(n) => Class::Cbuf(0x30 + 4 * u32::from(*n)),
                _ => Class::Reg,
            },
            InstData::SymbolAddr { var, .. } => {
                match self.module.vars.get(*var).map(|vd| vd.space) {
                    Some(Space::Shared | Space::Const | Space::Local) => {
                        Class::Imm(i64::from(self.var_offsets[var.as_u32() as usize]))
                    }
                    _ => Class::Reg,
                }
            }
            InstData::Cvta {
                space: Space::Global,
                arg,
                ..
            } => self.class(*arg),
            InstData::Convert {
                op: ConvOp::Trunc,
                arg,
                ty,
            } => match self.class(*arg) {
                Class::Imm(k) => Class::Imm(sext_imm(*ty, k as u64)),
                c => c,
            },
            _ => Class::Reg,
        }
    }

    /// The offset of a `.shared`/`.const` variable whose address `v` is.
    fn known_constant(&self, v: Value) -> Option<i64> {
        match self.def_of(v)? {
            InstData::SymbolAddr { .. } => match self.class(v) {
                Class::Imm(k) => Some(k),
                _ => None,
            },
            _ => None,
        }
    }

    /// `v` as a source operand; a register only when it is not a constant or a parameter.
    fn src(&mut self, v: Value) -> Result<Src, LowerError> {
        Ok(match self.class(v) {
            Class::Imm(k) => Src::Imm(k),
            Class::Cbuf(o) => Src::Cbuf(o),
            Class::Reg => Src::Reg(self.reg(v)?),
        })
    }

    /// `v` as a source operand of a form whose immediate is a signed imm20.
    fn src20(&mut self, v: Value) -> Result<Src, LowerError> {
        match self.src(v)? {
            Src::Imm(k) if !fits_imm20(k) => Ok(Src::Reg(self.reg(v)?)),
            s => Ok(s),
        }
    }

    /// `v` as a 32-bit value with defined high bits (extended by `signed`), for operations
    /// that read all 32 bits.
    fn norm32(&mut self, v: Value, signed: bool) -> Result<Src, LowerError> {
        let ty = self.ty(v);
        let s = self.src20(v)?;
        if ty.bits() >= 32 {
            return Ok(s);
        }
        match s {
            Src::Reg(l) => Ok(Src::Reg(self.extend_narrow(l, ty, signed, None)?)),
            Src::Imm(k) => {
                let m = k as u64 & ty.mask();
                Ok(Src::Imm(if signed { sext_imm(ty, m) } else { m as i64 }))
            }
            Src::Cbuf(_) | Src::Lit(_) => {
                let l = self.reg(v)?;
                Ok(Src::Reg(self.extend_narrow(l, ty, signed, None)?))
            }
        }
    }

    /// `BFE` (signed) or `LOP32I.AND` (unsigned) of a narrow value into `into` (or a new
    /// register).
    fn extend_narrow(
        &mut self,
        l: Loc,
        ty: Type,
        signed: bool,
        into: Option<VReg>,
    ) -> Result<Loc, LowerError> {
        let d = into.unwrap_or_else(|| self.new_vreg(RegKind::B32));
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let a = i.use_(l.vreg);
        let inst = if signed {
            sm50::Inst::new(Form::BFE_I)
                .with(Field::Sgn, 1)
                .with(Field::ImmImm20s, u64::from(ty.bits()) << 8)
        } else {
            sm50::Inst::new(Form::LOP32I)
                .with(Field::Op, 0)
                .with(Field::Imm, ty.mask())
        };
        i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, a, l.offset)]);
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// Put the B operand `s` (word `word` of it) into a piece of form family (r, c, i).
    fn with_b(
        inst: &mut Sm50Inst,
        forms: (Form, Form, Form),
        s: Src,
        word: u8,
        refs: &mut Vec<(Field, u8, u8)>,
    ) -> sm50::Inst {
        match s {
            Src::Reg(l) => {
                let op = inst.use_(l.vreg);
                refs.push((Field::Rb, op, l.offset + word));
                sm50::Inst::new(forms.0)
            }
            Src::Cbuf(o) => {
                sm50::Inst::new(forms.1).with(Field::Cbo, u64::from(o / 4 + word as u32))
            }
            Src::Lit(o) => sm50::Inst::new(forms.1)
                .with(Field::Cbk, 2)
                .with(Field::Cbo, u64::from(o / 4 + word as u32)),
            Src::Imm(k) => {
                let w = if word == 0 { k } else { k >> 32 };
                let w = if word == 0 { i64::from(w as i32) } else { w };
                sm50::Inst::new(forms.2).with_signed(Field::ImmImm20s, w)
            }
        }
    }

    // ------------------------------------------------------------ dispatch

    fn lower_inst(&mut self, inst: Inst) -> Result<(), LowerError> {
        // `f` outlives the lowerer's own borrows, so the results are read in place (a clone
        // of the SmallVec per instruction was a visible cost).
        let f = self.f;
        let node = &f.insts[inst];
        let results = &node.results;
        // Matched in place: the fields bound by value are `Copy`; the others by reference
        // (a clone of the instruction per lowering was a visible cost).
        match node.data {
            InstData::LoadParam { ty, offset } if f.subroutine => {
                self.lower_sub_param(results[0], ty, offset)
            }
            InstData::Iconst { .. }
            | InstData::Fconst { .. }
            | InstData::LoadParam { .. }
            | InstData::SymbolAddr { .. } => self.materialize(results[0]),
            InstData::KernelDesc { ty, entry } => self.lower_kernel_desc(results[0], ty, entry),
            InstData::SpecialReg { reg } => self.lower_sreg(results[0], reg),
            InstData::Unary { op, arg } => self.lower_unary(results[0], op, arg),
            InstData::Binary { op, args } => self.lower_binary(results[0], op, args),
            InstData::MulWide { signed, args } => self.lower_mulwide(results[0], signed, args),
            InstData::Convert { op, ty, arg } => self.lower_convert(results[0], op, ty, arg),
            InstData::Select { cond, args } => self.lower_select(results[0], cond, args),
            InstData::Icmp { cc, args } => self.lower_icmp(results[0], cc, args),
            InstData::Load {
                space,
                ty,
                width,
                addr,
                offset,
                cache,
            } => self.lower_load(results, space, ty, width, addr, offset, cache),
            InstData::Store {
                space,
                ty,
                addr,
                offset,
                ref values,
                cache,
            } => self.lower_store(space, ty, addr, offset, values, cache),
            InstData::Cvta {
                dir,
                space,
                ty,
                arg,
            } => self.lower_cvta(results[0], dir, space, ty, arg),
            InstData::Jump { ref dest } => {
                let args = self.block_args(&dest.args)?;
                let target = self.blocks.get(&dest.block).copied().unwrap_or(BlockId(0));
                let mut i = Sm50Inst::new(Role::Branch);
                i.targets.push(target);
                i.branch_piece(0, None);
                self.terminate(i, vec![(target, args)]);
                Ok(())
            }
            InstData::Brif {
                cond,
                ref then_dest,
                ref else_dest,
            } => {
                let c = self.reg(cond)?;
                let ta = self.block_args(&then_dest.args)?;
                let ea = self.block_args(&else_dest.args)?;
                let t = self
                    .blocks
                    .get(&then_dest.block)
                    .copied()
                    .unwrap_or(BlockId(0));
                let e = self
                    .blocks
                    .get(&else_dest.block)
                    .copied()
                    .unwrap_or(BlockId(0));
                let mut i = Sm50Inst::new(Role::Branch);
                i.uniform = self.uniform.contains(&inst);
                let p = i.use_(c.vreg);
                i.targets.push(t);
                i.targets.push(e);
                i.branch_piece(0, Some((p, false)));
                i.branch_piece(1, None);
                self.terminate(i, vec![(t, ta), (e, ea)]);
                Ok(())
            }
            InstData::Return => {
                let mut i = Sm50Inst::new(Role::Ret);
                i.piece(sm50::Inst::new(Form::EXIT), &[]);
                self.terminate(i, Vec::new());
                Ok(())
            }
            InstData::Barrier => {
                // BAR.SYNC 0x0: barrier 0, all threads of the CTA.
                let mut i = Sm50Inst::new(Role::Plain);
                i.piece(sm50::Inst::new(Form::BAR), &[]);
                self.push(i);
                Ok(())
            }
            InstData::Float {
                op: FloatOp::Approx { func, ftz },
                ref args,
            } => self.lower_approx(results[0], func, ftz, args),
            InstData::Float { op, ref args } => self.lower_float(results[0], op, args),
            InstData::NamedBarrier { id, count, wait } => {
                // BAR.SYNC id[, count] / BAR.ARV id, count (count 0 = the whole CTA).
                let bar = sm50::Inst::new(Form::BAR)
                    .with(Field::Id, u64::from(id))
                    .with(Field::Cnt, u64::from(count.unwrap_or(0)))
                    .with(Field::Mode, u64::from(!wait));
                let mut i = Sm50Inst::new(Role::Plain);
                i.piece(bar, &[]);
                self.push(i);
                Ok(())
            }
            InstData::BarrierRed { op, id, count, arg } => {
                self.lower_barrier_red(results[0], op, id, count, arg)
            }
            InstData::MemBar {
                scope: ir::MemScope::Warp | ir::MemScope::Yield,
            } => {
                // `bar.warp.sync`: ptxas 11.8 emits nothing; a `NOP` keeps the scheduler from
                // moving memory accesses across it (see `ir::build::sync`). A spin-wait's
                // yield (`ir::build::emulate`) is a `NOP` too: the simulator lets the other
                // warps run there.
                let mut i = Sm50Inst::new(Role::Plain);
                i.piece(sm50::Inst::new(Form::NOP), &[]);
                self.push(i);
                Ok(())
            }
            InstData::MemBar { scope } => {
                // As ptxas 11.8: MEMBAR.CTA, MEMBAR.GL.IVALLD, MEMBAR.SYS.IVALLD (the wider
                // scopes also invalidate the SM's L1 lines, so later loads see other SMs).
                let (code, ival) = match scope {
                    ir::MemScope::Cta => (0, 0),
                    ir::MemScope::Gl => (1, 1),
                    ir::MemScope::Sys => (2, 1),
                    ir::MemScope::Warp | ir::MemScope::Yield => unreachable!("matched above"),
                };
                let mut i = Sm50Inst::new(Role::Plain);
                i.piece(
                    sm50::Inst::new(Form::MEMBAR)
                        .with(Field::Scope, code)
                        .with(Field::Ival, ival),
                    &[],
                );
                self.push(i);
                Ok(())
            }
            InstData::BarrierReg {
                red,
                wait,
                id,
                count,
                count_reg,
                ref args,
            } => self.lower_barrier_reg(results, red, wait, id, count, count_reg, args),
            InstData::Prefetch {
                space,
                level,
                addr,
                offset,
            } => self.lower_prefetch(space, level, addr, offset),
            InstData::Trap => {
                // As ptxas 11.8: `BPT.TRAP 0x1`, and the code after it follows (BPT has no
                // guard; a guarded trap is a branch around it, built by `ir::build`).
                let mut i = Sm50Inst::new(Role::Plain);
                i.piece(
                    sm50::Inst::new(Form::BPT)
                        .with(Field::Mode, 3)
                        .with(Field::Imm, 1),
                    &[],
                );
                self.push(i);
                Ok(())
            }
            InstData::Bits { op, ref args } => self.lower_bits(results[0], op, args),
            InstData::Atomic {
                op,
                space,
                ty,
                addr,
                offset,
                ref args,
            } => self.lower_atomic(results[0], op, space, ty, addr, offset, args),
            InstData::Vote { mode, arg } => self.lower_vote(results[0], mode, arg),
            InstData::Shfl { mode, args } => self.lower_shfl(results, mode, args),
            InstData::Stack { op, arg } => self.lower_stack(results, op, arg),
            InstData::Texture {
                op,
                handle,
                ref args,
            } => self.lower_texture(results, op, handle, args),
            InstData::Surface { access, ref args } => self.lower_surface(results, access, args),
            InstData::ExternCall {
                callee,
                ref args,
                ref arg_regs,
            } => self.lower_extern_call(results, callee, args, arg_regs),
            InstData::SubReturn { ref values } => self.lower_sub_return(values),
            InstData::Collective { op, .. } => Err(LowerError::Internal(format!(
                "{} reached selection (ir::collective::expand replaces it first)",
                op.name()
            ))),
        }
    }

    /// `bar.red` as ptxas 11.8: `BAR.RED.{POPC,AND,OR} id[, count], {!}P`, `MEMBAR.CTA`, then
    /// `B2R.RESULT Rd` (the count) or `B2R.RESULT RZ, Pd` (the vote). The three stay in order
    /// (BAR, MEMBAR and B2R are scheduling fences).
    fn lower_barrier_red(
        &mut self,
        v: Value,
        op: ir::BarRedOp,
        id: u8,
        count: Option<u32>,
        arg: Value,
    ) -> Result<(), LowerError> {
        // `bar.red ..., !c` reads c through BAR.RED's own negation, as ptxas.
        let (arg, neg) = match self.def_of(arg) {
            Some(&InstData::Unary {
                op: ir::UnaryOp::Not,
                arg: inner,
            }) if self.ty(inner) == Type::Pred => (inner, true),
            _ => (arg, false),
        };
        let p = self.reg(arg)?;
        let mut bar = Sm50Inst::new(Role::Plain);
        let pop = bar.use_(p.vreg);
        let ro = match op {
            ir::BarRedOp::Popc => 0,
            ir::BarRedOp::And => 1,
            ir::BarRedOp::Or => 2,
        };
        let inst = sm50::Inst::new(Form::BAR_RED)
            .with(Field::Id, u64::from(id))
            .with(Field::Cnt, u64::from(count.unwrap_or(0)))
            .with(Field::Ro, ro)
            .with(Field::Bpn, neg as u64);
        bar.piece(inst, &[(Field::Bp, pop, 0)]);
        self.push(bar);
        let mut fence = Sm50Inst::new(Role::Plain);
        fence.piece(sm50::Inst::new(Form::MEMBAR), &[]);
        self.push(fence);
        let popc = op == ir::BarRedOp::Popc;
        let d = self.new_vreg(if popc { RegKind::B32 } else { RegKind::Pred });
        let mut b2r = Sm50Inst::new(Role::Plain);
        let dop = b2r.def(d, false);
        let field = if popc { Field::Rd } else { Field::Pd };
        b2r.piece(sm50::Inst::new(Form::B2R), &[(field, dop, 0)]);
        self.push(b2r);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A barrier with its number and/or count in a register, as ptxas 11.8: `BAR.SYNC Ra`
    /// / `BAR.SYNC id, Rb` / `BAR.ARV Ra, cnt`; both in registers, one register holding both
    /// (`BFI t, count, 0xc10, id`: the count in bits 16..27) named as Ra and Rb; `bar.red`
    /// as `BAR.RED` of the same forms. Then `MEMBAR.CTA` (ptxas follows every such BAR with
    /// one), and for `bar.red` the `B2R.RESULT` that reads the reduction.
    #[allow(clippy::too_many_arguments)]
    fn lower_barrier_reg(
        &mut self,
        results: &[Value],
        red: Option<ir::BarRedOp>,
        wait: bool,
        id: Option<u8>,
        count: Option<u32>,
        count_reg: bool,
        args: &[Value],
    ) -> Result<(), LowerError> {
        let mut rest = args.iter().copied();
        let mut next = || {
            rest.next()
                .ok_or_else(|| LowerError::Internal("barrier operands".into()))
        };
        let id_reg = if id.is_none() { Some(next()?) } else { None };
        let cnt_reg = if count_reg { Some(next()?) } else { None };
        let pred = if red.is_some() { Some(next()?) } else { None };
        let id_loc = id_reg.map(|v| self.reg(v)).transpose()?;
        let cnt_loc = cnt_reg.map(|v| self.reg(v)).transpose()?;
        let mut bar = Sm50Inst::new(Role::Plain);
        let mut refs = Vec::new();
        let form = match (id_loc, cnt_loc) {
            (Some(a), Some(c)) => {
                let t = self.new_vreg(RegKind::B32);
                let mut bfi = Sm50Inst::new(Role::Plain);
                let top = bfi.def(t, false);
                let cop = bfi.use_(c.vreg);
                let aop = bfi.use_(a.vreg);
                bfi.piece(
                    sm50::Inst::new(Form::BFI_I).with(Field::ImmImm20s, 0xc10),
                    &[
                        (Field::Rd, top, 0),
                        (Field::Ra, cop, c.offset),
                        (Field::Rc, aop, a.offset),
                    ],
                );
                self.push(bfi);
                let o = bar.use_(t);
                refs.push((Field::Ra, o, 0));
                refs.push((Field::Rb, o, 0));
                if red.is_some() {
                    Form::BARR_REDRR
                } else {
                    Form::BARR_RR
                }
            }
            (Some(a), None) => {
                let o = bar.use_(a.vreg);
                refs.push((Field::Ra, o, a.offset));
                if red.is_some() {
                    Form::BARR_REDRA
                } else {
                    Form::BARR_RA
                }
            }
            (None, Some(c)) => {
                let o = bar.use_(c.vreg);
                refs.push((Field::Rb, o, c.offset));
                if red.is_some() {
                    Form::BARR_REDRB
                } else {
                    Form::BARR_RB
                }
            }
            (None, None) => return Err(LowerError::Internal("BarrierReg with no register".into())),
        };
        let mut inst = sm50::Inst::new(form);
        if id_loc.is_none() {
            inst.set(Field::Id, u64::from(id.unwrap_or(0)));
        }
        if cnt_loc.is_none() {
            inst.set(Field::Cnt, u64::from(count.unwrap_or(0)));
        }
        if let (Some(op), Some(arg)) = (red, pred) {
            // `bar.red ..., !c` reads c through BAR.RED's own negation, as ptxas.
            let (arg, neg) = match self.def_of(arg) {
                Some(&InstData::Unary {
                    op: ir::UnaryOp::Not,
                    arg: inner,
                }) if self.ty(inner) == Type::Pred => (inner, true),
                _ => (arg, false),
            };
            let p = self.reg(arg)?;
            let pop = bar.use_(p.vreg);
            refs.push((Field::Bp, pop, 0));
            let ro = match op {
                ir::BarRedOp::Popc => 0,
                ir::BarRedOp::And => 1,
                ir::BarRedOp::Or => 2,
            };
            inst.set(Field::Ro, ro);
            inst.set(Field::Bpn, neg as u64);
        } else {
            inst.set(Field::Mode, u64::from(!wait));
        }
        bar.piece(inst, &refs);
        self.push(bar);
        let mut fence = Sm50Inst::new(Role::Plain);
        fence.piece(sm50::Inst::new(Form::MEMBAR), &[]);
        self.push(fence);
        if let Some(op) = red {
            let popc = op == ir::BarRedOp::Popc;
            let d = self.new_vreg(if popc { RegKind::B32 } else { RegKind::Pred });
            let mut b2r = Sm50Inst::new(Role::Plain);
            let dop = b2r.def(d, false);
            let field = if popc { Field::Rd } else { Field::Pd };
            b2r.piece(sm50::Inst::new(Form::B2R), &[(field, dop, 0)]);
            self.push(b2r);
            let v = results
                .first()
                .copied()
                .ok_or_else(|| LowerError::Internal("bar.red result".into()))?;
            self.set_loc(v, Loc { vreg: d, offset: 0 });
        }
        Ok(())
    }

    fn block_args(&mut self, args: &[Value]) -> Result<Vec<VReg>, LowerError> {
        args.iter().map(|&a| self.whole(a)).collect()
    }

    fn terminate(&mut self, inst: Sm50Inst, succs: Vec<(BlockId, Vec<VReg>)>) {
        if self.planning.is_none() {
            self.vb.terminate(self.cur, inst, succs);
        }
    }

    // ------------------------------------------------------------ values

    /// A constant, parameter or variable address that some instruction wants in a register.
    fn materialize(&mut self, v: Value) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let kind = kind_of(ty);
        let class = self.class(v);
        if let Some(InstData::SymbolAddr { var, .. }) = self.def_of(v) {
            let var = *var;
            let space = self.module.vars.get(var).map(|d| d.space);
            if space == Some(Space::Global) && matches!(kind, RegKind::B64 | RegKind::B32) {
                // ptxas's sequence: `MOV32I lo, 0x0` and `MOV32I hi, 0x0`, which the loader
                // patches (R_CUDA_ABS32_LO_20 / R_CUDA_ABS32_HI_20) with the variable's address;
                // a 32-bit address (a 32-bit module) is one `MOV32I` (R_CUDA_ABS32_20).
                let words: &[RelocWord] = if kind == RegKind::B64 {
                    &[RelocWord::Lo, RelocWord::Hi]
                } else {
                    &[RelocWord::Abs32]
                };
                self.relocated_words(v, kind, var, words);
                return Ok(());
            }
            if matches!(class, Class::Reg) {
                let space = space.map_or("?", |s| s.name());
                return Err(self.unsupported(format!(
                    "the address of a .{space} variable (needs a frame layout or relocations)"
                )));
            }
        }
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        if let Some(&InstData::LoadParam { offset, .. }) = self.def_of(v) {
            if offset % 4 != 0 {
                // MOV the containing word, then shift the value down to bit 0 (the high bits
                // of an i8/i16 register are unspecified, so a logical shift is enough).
                let dop = i.def(d, true);
                let word = u64::from((0x140 + offset) / 4);
                let mov = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, word);
                i.piece(mov, &[(Field::Rd, dop, 0)]);
                let shr = sm50::Inst::new(Form::SHR_I)
                    .with(Field::ImmImm20s, u64::from(8 * (offset % 4)));
                i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
                self.push(i);
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                return Ok(());
            }
        }
        match (kind, class) {
            (RegKind::Pred, Class::Imm(k)) => {
                // PSETP.AND.AND d, PT, PT, PT, PT (or !PT for false)
                let dop = i.def(d, false);
                let inst = sm50::Inst::new(Form::PSETP).with(Field::Pan, (k & 1 == 0) as u64);
                i.piece(inst, &[(Field::Pd0, dop, 0)]);
            }
            (RegKind::B32, Class::Imm(k)) => {
                let dop = i.def(d, false);
                let inst = sm50::Inst::new(Form::MOV32I).with(Field::Imm, k as u64 & 0xffff_ffff);
                i.piece(inst, &[(Field::Rd, dop, 0)]);
            }
            (RegKind::B64, Class::Imm(k)) => {
                let dop = i.def(d, true);
                for w in 0..2u8 {
                    let inst = sm50::Inst::new(Form::MOV32I)
                        .with(Field::Imm, (k as u64 >> (32 * w)) & 0xffff_ffff);
                    i.piece(inst, &[(Field::Rd, dop, w)]);
                }
            }
            (RegKind::B32 | RegKind::B64, Class::Cbuf(o)) => {
                let words = kind.gprs() as u8;
                let dop = i.def(d, words > 1);
                for w in 0..words {
                    let inst = sm50::Inst::new(Form::MOV_C)
                        .with(Field::Cbo, u64::from(o / 4) + u64::from(w));
                    i.piece(inst, &[(Field::Rd, dop, w)]);
                }
            }
            _ => return Err(LowerError::Internal(format!("cannot materialize {v}"))),
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn lower_sreg(&mut self, v: Value, reg: SpecialReg) -> Result<(), LowerError> {
        let sr = match reg {
            SpecialReg::Tid(d) => 0x21 + d.index() as u64,
            SpecialReg::Ctaid(d) => 0x25 + d.index() as u64,
            SpecialReg::LaneId => 0x00,
            SpecialReg::WarpId | SpecialReg::SmId => 0x03,
            // SR_EQMASK .. SR_GEMASK
            SpecialReg::LaneMask(m) => 0x38 + m as u64,
            SpecialReg::Clock => return self.lower_clock(v, false),
            SpecialReg::Clock64 => return self.lower_clock(v, true),
            SpecialReg::NSmId => 0x02,
            SpecialReg::TotalSmemSize => 0x32,
            // SR_GLOBALTIMERLO/HI, SR_PMn (4 + n) and SR_PM_HIn (0x48 + n), read with CS2R.
            SpecialReg::GlobalTimerLo => return self.lower_counter(v, 0x52, None),
            SpecialReg::GlobalTimerHi => return self.lower_counter(v, 0x53, None),
            SpecialReg::GlobalTimer => return self.lower_counter(v, 0x52, Some(0x53)),
            SpecialReg::Pm(n) => return self.lower_counter(v, 4 + u64::from(n), None),
            SpecialReg::Pm64(n) => {
                let n = u64::from(n);
                return self.lower_counter(v, 4 + n, Some(0x48 + n));
            }
            _ => return self.materialize(v),
        };
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let s2r = sm50::Inst::new(Form::S2R).with(Field::Sr, sr);
        if matches!(
            reg,
            SpecialReg::WarpId | SpecialReg::SmId | SpecialReg::NSmId
        ) {
            // %warpid = BFE.U32(SR_VIRTID, 0x608), %smid = BFE.U32(SR_VIRTID, 0x914), %nsmid
            // = BFE.U32(SR_VIRTCFG, 0x914), as ptxas does.
            let dop = i.def(d, false);
            i.piece(s2r, &[(Field::Rd, dop, 0)]);
            let field = if reg == SpecialReg::WarpId {
                0x608
            } else {
                0x914
            };
            let bfe = sm50::Inst::new(Form::BFE_I).with(Field::ImmImm20s, field);
            i.piece(bfe, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
        } else {
            let dop = i.def(d, false);
            i.piece(s2r, &[(Field::Rd, dop, 0)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn lower_unary(&mut self, v: Value, op: UnaryOp, arg: Value) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let a = self.reg(arg)?;
        let kind = kind_of(ty);
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let words = kind.gprs() as u8;
        let dop = i.def(d, words > 1);
        let aop = i.use_(a.vreg);
        match (op, kind) {
            (UnaryOp::Not, RegKind::Pred) => {
                // PSETP.AND.AND d, PT, !a, PT, PT
                let inst = sm50::Inst::new(Form::PSETP).with(Field::Pan, 1);
                i.piece(inst, &[(Field::Pd0, dop, 0), (Field::Pa, aop, 0)]);
            }
            (UnaryOp::Not, _) => {
                for w in 0..words {
                    let inst = sm50::Inst::new(Form::LOP32I)
                        .with(Field::Op, 2)
                        .with(Field::Imm, 0xffff_ffff);
                    i.piece(inst, &[(Field::Rd, dop, w), (Field::Ra, aop, a.offset + w)]);
                }
            }
            (UnaryOp::Neg, RegKind::Pred) => return Err(self.unsupported("neg of a predicate")),
            (UnaryOp::Neg, _) => {
                // IADD[.CC] d, -a, RZ ; IADD.X d.hi, -a.hi, RZ  (0 - a, ptxas's negated-Ra shape)
                for w in 0..words {
                    let inst = sm50::Inst::new(Form::IADD_R)
                        .with(Field::Nega, 1)
                        .with(Field::Cc, (words > 1 && w == 0) as u64)
                        .with(Field::X, (w == 1) as u64);
                    i.piece(inst, &[(Field::Rd, dop, w), (Field::Ra, aop, a.offset + w)]);
                }
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `v` as one SASS instruction `inst` writing a new 32-bit register (`Rd`) and reading
    /// each `(field, source)` in order.
    fn one_inst32(&mut self, v: Value, inst: sm50::Inst, srcs: &[(Field, Loc)]) {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let mut refs = vec![(Field::Rd, dop, 0)];
        for &(field, l) in srcs {
            let op = i.use_(l.vreg);
            refs.push((field, op, l.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
    }

    fn lower_binary(&mut self, v: Value, op: BinaryOp, args: [Value; 2]) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let kind = kind_of(ty);
        if kind == RegKind::Pred {
            return self.lower_pred_logic(v, op, args);
        }
        // Two f16 lanes packed: one H* instruction or one XMAD (`select/half.rs`).
        if op == BinaryOp::Or {
            if let Some(r) = self.lower_half2_pack(v) {
                return r;
            }
        }
        let wide = kind == RegKind::B64;
        match op {
            BinaryOp::Add | BinaryOp::Sub => {
                if let Some(&k) = self.carry_of.get(&v) {
                    return self.lower_carry_chain(k);
                }
                if self.add_as_chain(v)? {
                    return Ok(());
                }
                if op == BinaryOp::Add && self.lower_mad32(v, args)? {
                    return Ok(());
                }
                self.lower_add(v, op == BinaryOp::Sub, args, wide)
            }
            BinaryOp::Mul => {
                let k = [args[1], args[0]]
                    .into_iter()
                    .find_map(|x| match self.class(x) {
                        Class::Imm(k) if k > 0 && (k as u64).is_power_of_two() => Some((x, k)),
                        _ => None,
                    });
                if let Some((c, k)) = k {
                    let x = if c == args[1] { args[0] } else { args[1] };
                    return self.shift_const(v, x, BinaryOp::Shl, k.trailing_zeros() as i64);
                }
                if ty != Type::I32 {
                    return self.lower_mul_general(v, args);
                }
                self.lower_mul32(v, args)
            }
            BinaryOp::MulHiS | BinaryOp::MulHiU => self.lower_mulhi(v, op, args),
            BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS => {
                if let Class::Imm(k) = self.class(args[1]) {
                    return self.shift_const(v, args[0], op, k & 0xffff_ffff);
                }
                if wide {
                    return self.shift64_var(v, op, args);
                }
                let a = match op {
                    BinaryOp::Shl => self.reg(args[0])?,
                    _ => match self.norm32(args[0], op == BinaryOp::ShrS)? {
                        Src::Reg(l) => l,
                        _ => self.reg(args[0])?,
                    },
                };
                let n = self.reg(args[1])?;
                let form = if op == BinaryOp::Shl {
                    Form::SHL_R
                } else {
                    Form::SHR_R
                };
                let mut inst = sm50::Inst::new(form);
                if op == BinaryOp::ShrS {
                    inst.set(Field::Sgn, 1);
                }
                self.one_inst32(v, inst, &[(Field::Ra, a), (Field::Rb, n)]);
                Ok(())
            }
            BinaryOp::Or if wide && self.lower_pair(v, args)? => Ok(()),
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => self.lower_logic(v, op, args, wide),
            BinaryOp::MinS | BinaryOp::MinU | BinaryOp::MaxS | BinaryOp::MaxU => {
                if wide {
                    return Err(self.unsupported("64-bit min/max"));
                }
                let signed = matches!(op, BinaryOp::MinS | BinaryOp::MaxS);
                let a = match self.norm32(args[0], signed)? {
                    Src::Reg(l) => l,
                    _ => self.reg(args[0])?,
                };
                let b = self.norm32(args[1], signed)?;
                let d = self.new_vreg(RegKind::B32);
                let mut i = Sm50Inst::new(Role::Plain);
                let dop = i.def(d, false);
                let aop = i.use_(a.vreg);
                let mut refs = vec![(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)];
                let forms = (Form::IMNMX_R, Form::IMNMX_C, Form::IMNMX_I);
                let mut inst = Self::with_b(&mut i, forms, b, 0, &mut refs);
                // The predicate picks the minimum when true: PT = min, !PT = max.
                inst.set(Field::Sgn, signed as u64);
                inst.set(
                    Field::Paccn,
                    matches!(op, BinaryOp::MaxS | BinaryOp::MaxU) as u64,
                );
                i.piece(inst, &refs);
                self.push(i);
                self.set_loc(v, Loc { vreg: d, offset: 0 });
                Ok(())
            }
            BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS => {
                self.lower_divide(v, op, args)
            }
            BinaryOp::AddSatS | BinaryOp::SubSatS => {
                // IADD.SAT d, a, b / IADD.SAT d, a, -b (ptxas 11.8's `add/sub.sat.s32`).
                if wide {
                    return Err(self.unsupported("64-bit add.sat"));
                }
                let a = self.reg(args[0])?;
                let b = self.reg(args[1])?;
                let inst = sm50::Inst::new(Form::IADD_R)
                    .with(Field::Sat, 1)
                    .with(Field::Negb, (op == BinaryOp::SubSatS) as u64);
                self.one_inst32(v, inst, &[(Field::Ra, a), (Field::Rb, b)]);
                Ok(())
            }
        }
    }

    fn lower_pred_logic(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        if !op.is_bitwise() {
            return Err(self.unsupported(format!("{} on predicates", op.name())));
        }
        let a = self.reg(args[0])?;
        let b = self.reg(args[1])?;
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let bop = i.use_(b.vreg);
        // PSETP.<op>.AND d, PT, a, b, PT
        let inst = sm50::Inst::new(Form::PSETP).with(Field::Bop1, lop_code(op));
        i.piece(
            inst,
            &[
                (Field::Pd0, dop, 0),
                (Field::Pa, aop, 0),
                (Field::Pb, bop, 0),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A sum that has the shape of an address (`base + (index << s)`, an extended index) is
    /// computed by a chain even when it is a plain value: one `LEA` (two for 64 bits) instead
    /// of a shift, an extension and an add. Plain `a + b` stays an IADD, which has immediate
    /// forms; a sum with a constant part too stays an IADD (the chain would need two more LEAs).
    fn add_as_chain(&mut self, v: Value) -> Result<bool, LowerError> {
        if self.opts.fold != Fold::Full {
            return Ok(false);
        }
        let wide = match self.ty(v) {
            Type::I64 => true,
            Type::I32 => false,
            _ => return Ok(false),
        };
        let in_reg = |x: Value| self.non_address_use[x.index()];
        let konst = |x: Value| self.known_constant(x);
        let facts = Facts {
            in_register: &in_reg,
            constant: &konst,
        };
        let mode = match_address(self.f, v, 0, wide, &facts, false);
        let Some(ix) = mode.index else {
            return Ok(false);
        };
        if mode.disp != 0 || (ix.shift == 0 && ix.ext == Ext::None) {
            if self.planning.is_none() {
                self.stats.reject(if mode.disp != 0 {
                    "sum with a constant part (IADD is shorter)"
                } else {
                    "plain sum without shift or extension (IADD)"
                });
            }
            return Ok(false);
        }
        let (reg, _) = self.chain(mode, 0, false, false)?;
        self.set_loc(
            v,
            Loc {
                vreg: reg,
                offset: 0,
            },
        );
        Ok(true)
    }

    /// A word of an extended-precision carry chain ([`super::carry`]): the whole chain is one
    /// `LEA` + `LEA.HI.X` links instruction, emitted with its first demanded result.
    fn lower_carry_chain(&mut self, k: usize) -> Result<(), LowerError> {
        let chain = self.carry_chains[k].clone();
        if self.planning.is_none() && self.carry_done.contains_key(&k) {
            return Ok(());
        }
        let mut links = Vec::new();
        for l in &chain.links {
            links.push((self.reg(l.base)?, self.reg(l.word)?));
        }
        let planning = self.planning.is_some();
        let vb = &mut self.vb;
        let mut fresh = |kind: RegKind| {
            if planning {
                VReg { index: 0, kind }
            } else {
                vb.new_vreg(kind)
            }
        };
        let (inst, results) = carry_chain(&mut fresh, &links, chain.shift);
        self.push(inst);
        if !planning {
            for (l, r) in chain.links.iter().zip(&results) {
                self.set_loc(l.result, *r);
            }
            self.carry_done.insert(k, results);
            self.stats.chains_formed += 1;
        }
        Ok(())
    }

    /// add/sub: `IADD` / `IADD32I` (32-bit), `IADD.CC` + `IADD.X` (64-bit). A subtraction
    /// negates its register operand in the A slot, the shape ptxas uses for 64-bit `a - b`.
    fn lower_add(
        &mut self,
        v: Value,
        sub: bool,
        args: [Value; 2],
        wide: bool,
    ) -> Result<(), LowerError> {
        let (mut a, mut b) = (args[0], args[1]);
        let mut neg_a = false;
        let mut neg_b = sub;
        // The A slot must be a register: put a constant/parameter first operand in B.
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
            std::mem::swap(&mut neg_a, &mut neg_b);
        }
        let mut bsrc = self.src(b)?;
        // A negated immediate is just another immediate.
        if let Src::Imm(k) = bsrc {
            if neg_b {
                bsrc = Src::Imm(k.wrapping_neg());
                neg_b = false;
            }
        }
        if wide {
            match bsrc {
                Src::Imm(k) if !fits_imm20(k) => bsrc = Src::Reg(self.reg(b)?),
                // A 64-bit subtraction negates a register in the A slot (ptxas's verified
                // shape); a negated constant-bank B with a carry is left unused.
                Src::Cbuf(_) if neg_b => bsrc = Src::Reg(self.reg(b)?),
                _ => {}
            }
        }
        // ptxas's shape for `x - y`: the negated operand goes in the A slot.
        let (a_loc, b_src, neg_a, neg_b) = if neg_b {
            match bsrc {
                Src::Reg(bl) => match self.src(a)? {
                    s @ (Src::Reg(_) | Src::Cbuf(_) | Src::Lit(_)) => (bl, s, true, false),
                    Src::Imm(k) if fits_imm20(k) || !wide => (bl, Src::Imm(k), true, false),
                    Src::Imm(_) => (bl, Src::Reg(self.reg(a)?), true, false),
                },
                _ => (self.reg(a)?, bsrc, neg_a, true),
            }
        } else {
            (self.reg(a)?, bsrc, neg_a, false)
        };
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // A late def even for the two-word form: each IADD reads word `w` of its operands
        // before it writes word `w` of `d`, and the high one reads no low word, so `d` may
        // take either operand's pair (a loop's `p += 4` updates `p` in place, with no MOV
        // pair on the back edge).
        let dop = i.def(d, false);
        let aop = i.use_(a_loc.vreg);
        let words = if wide { 2 } else { 1 };
        for w in 0..words {
            let mut refs = vec![(Field::Rd, dop, w), (Field::Ra, aop, a_loc.offset + w)];
            let inst = match b_src {
                Src::Imm(k) if !wide && !fits_imm20(k) => {
                    sm50::Inst::new(Form::IADD32I).with(Field::Imm, k as u64 & 0xffff_ffff)
                }
                Src::Imm(k) if wide && w == 1 => sm50::Inst::new(Form::IADD_I)
                    .with_signed(Field::ImmImm20s, if k < 0 { -1 } else { 0 }),
                s => Self::with_b(
                    &mut i,
                    (Form::IADD_R, Form::IADD_C, Form::IADD_I),
                    s,
                    w,
                    &mut refs,
                ),
            };
            let mut inst = inst;
            if inst.form != Form::IADD32I {
                inst.set(Field::Negb, neg_b as u64);
            }
            inst.set(Field::Nega, neg_a as u64);
            if wide {
                if w == 0 {
                    inst.set(Field::Cc, 1);
                } else {
                    inst.set(Field::X, 1);
                }
            }
            i.piece(inst, &refs);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// ptxas's 32-bit multiply: `XMAD t, a, b, RZ ; XMAD.MRG u, a, b.H1, RZ ;
    /// XMAD.PSL.CBCC d, a.H1, u.H1, t`.
    fn lower_mul32(&mut self, v: Value, args: [Value; 2]) -> Result<(), LowerError> {
        // By a 16-bit constant, ptxas's two-instruction shape (the constant fits XMAD's
        // immediate): `XMAD t, a, k, RZ ; XMAD.PSL d, a.H1, k, t` = a.lo·k + (a.hi·k << 16).
        let k16 = [(1, 0), (0, 1)]
            .into_iter()
            .find_map(|(c, x)| match self.class(args[c]) {
                Class::Imm(k) if (0..1 << 16).contains(&k) => Some((k as u64, args[x])),
                _ => None,
            });
        if let Some((k, x)) = k16 {
            let a = self.reg(x)?;
            let d = self.new_vreg(RegKind::B32);
            let t = self.new_vreg(RegKind::B32);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(d, false);
            let top = i.def(t, true);
            let aop = i.use_(a.vreg);
            let x = sm50::Inst::new(Form::XMAD_I).with(Field::ImmImm16, k);
            i.piece(x, &[(Field::Rd, top, 0), (Field::Ra, aop, a.offset)]);
            i.piece(
                x.with(Field::Psl, 1).with(Field::Ah, 1),
                &[
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, a.offset),
                    (Field::Rc, top, 0),
                ],
            );
            self.push(i);
            self.set_loc(v, Loc { vreg: d, offset: 0 });
            return Ok(());
        }
        // A factor in the constant bank (`%ntid.x`, a kernel parameter) is read in place by
        // the first two XMADs, as ptxas does (`XMAD t, a, c[0x0][0x8], RZ ; XMAD.MRG u, a,
        // c[0x0][0x8].H1, RZ`), which saves the MOV into a register. The third XMAD reads
        // only `a` and `u`. (`mul.lo` commutes, so either operand may be the bank one.)
        self.mul32_xmads(v, args, None)
    }

    /// `a * b + c` for an i32 `add` whose one operand is an i32 `mul` of two non-constant
    /// factors that nothing else reads: ptxas's `mad.lo` shape, the addend in the first XMAD's
    /// C slot (`XMAD t, a, b, c ; XMAD.MRG u, a, b.H1, RZ ; XMAD.PSL.CBCC d, a.H1, u.H1, t`),
    /// which saves the IADD (`%ctaid.x * %ntid.x + %tid.x`); the `mul` must be in the add's
    /// block (see below). Correct because the sequence is
    /// `(a.lo·b.lo + c) + ((a.hi·b.lo + a.lo·b.hi) << 16)` modulo 2^32. Returns false (nothing
    /// emitted) when the shape does not apply.
    fn lower_mad32(&mut self, v: Value, args: [Value; 2]) -> Result<bool, LowerError> {
        if self.ty(v) != Type::I32 {
            return Ok(false);
        }
        for (m, c) in [(args[0], args[1]), (args[1], args[0])] {
            let Some(&InstData::Binary {
                op: BinaryOp::Mul,
                args: factors,
            }) = self.def_of(m)
            else {
                continue;
            };
            // Only a product of this block: one in a dominating block (a loop-invariant
            // stride) is computed once there, and folding it here would repeat three XMADs
            // per iteration to save one IADD.
            // (From the IR, not `cur_ir`, so that planning and emission agree.)
            let block = |x: Value| match self.f.values[x].def {
                ValueDef::Result(i, _) => Some(self.f.insts[i].block),
                ValueDef::Param(..) => None,
            };
            let same_block = block(m).is_some() && block(m) == block(v);
            let plain = |x: Value| !matches!(self.class(x), Class::Imm(_));
            if !same_block
                || self.ty(m) != Type::I32
                || self.use_count[m.index()] != 1
                || !matches!(self.class(c), Class::Reg)
                || !factors.iter().all(|&x| plain(x))
            {
                continue;
            }
            self.mul32_xmads(v, factors, Some(c))?;
            return Ok(true);
        }
        Ok(false)
    }

    /// The three XMADs of a 32-bit multiply, plus `addend` in the first one's C slot.
    fn mul32_xmads(
        &mut self,
        v: Value,
        args: [Value; 2],
        addend: Option<Value>,
    ) -> Result<(), LowerError> {
        let cb = [(1, 0), (0, 1)]
            .into_iter()
            .find_map(|(c, x)| match self.class(args[c]) {
                Class::Cbuf(o) => Some((o, args[x])),
                _ => None,
            });
        let (a, b) = match cb {
            Some((o, x)) => (self.reg(x)?, Err(o)),
            None => (self.reg(args[0])?, Ok(self.reg(args[1])?)),
        };
        let c = match addend {
            Some(c) => Some(self.reg(c)?),
            None => None,
        };
        let d = self.new_vreg(RegKind::B32);
        let t = self.new_vreg(RegKind::B32);
        let u = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let top = i.def(t, true);
        let uop = i.def(u, true);
        let aop = i.use_(a.vreg);
        let x = sm50::Inst::new(Form::XMAD_R);
        let mut first = vec![(Field::Rd, top, 0), (Field::Ra, aop, a.offset)];
        if let Some(c) = c {
            let cop = i.use_(c.vreg);
            first.push((Field::Rc, cop, c.offset));
        }
        match b {
            Ok(b) => {
                let bop = i.use_(b.vreg);
                first.push((Field::Rb, bop, b.offset));
                i.piece(x, &first);
                i.piece(
                    x.with(Field::Mrg, 1).with(Field::Bh, 1),
                    &[
                        (Field::Rd, uop, 0),
                        (Field::Ra, aop, a.offset),
                        (Field::Rb, bop, b.offset),
                    ],
                );
            }
            Err(o) => {
                let xc = sm50::Inst::new(Form::XMAD_C).with(Field::Cbo, u64::from(o / 4));
                i.piece(xc, &first);
                i.piece(
                    xc.with(Field::Mrg, 1).with(Field::Bh, 1),
                    &[(Field::Rd, uop, 0), (Field::Ra, aop, a.offset)],
                );
            }
        }
        i.piece(
            x.with(Field::Psl, 1)
                .with(Field::Mode, 4)
                .with(Field::Ah, 1)
                .with(Field::Bh, 1),
            &[
                (Field::Rd, dop, 0),
                (Field::Ra, aop, a.offset),
                (Field::Rb, uop, 0),
                (Field::Rc, top, 0),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A 64-bit shift by a register count, as ptxas: a funnel shift for the word that takes
    /// bits from both halves and a plain shift for the other. `shl` is `SHF.L.U64 hi, lo, n,
    /// hi` and `SHL lo, lo, n`; `shr` is `SHF.R.{U64,S64} lo, lo, n, hi` and `SHR{.U32} hi,
    /// hi, n`. Without `.W` the hardware clamps the count (SHL/SHR at 32, SHF.U64/S64 at 64),
    /// which is PTX's clamping of counts beyond the width: every 32-bit count is exact,
    /// 0xffffffff too.
    fn shift64_var(&mut self, v: Value, op: BinaryOp, args: [Value; 2]) -> Result<(), LowerError> {
        let a = self.reg(args[0])?;
        let n = self.reg(args[1])?;
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        let nop = i.use_(n.vreg);
        let (o, no) = (a.offset, n.offset);
        let signed = op == BinaryOp::ShrS;
        // The funnel word: hi for a left shift, lo for a right one.
        let (funnel, word, plain) = if op == BinaryOp::Shl {
            (Form::SHF_LR, 1, Form::SHL_R)
        } else {
            (Form::SHF_RR, 0, Form::SHR_R)
        };
        let shf = sm50::Inst::new(funnel).with(Field::Ty, 2 + signed as u64);
        i.piece(
            shf,
            &[
                (Field::Rd, dop, word),
                (Field::Ra, aop, o),
                (Field::Rb, nop, no),
                (Field::Rc, aop, o + 1),
            ],
        );
        let other = 1 - word;
        let mut sh = sm50::Inst::new(plain);
        if signed {
            sh.set(Field::Sgn, 1);
        }
        i.piece(
            sh,
            &[
                (Field::Rd, dop, other),
                (Field::Ra, aop, o + other),
                (Field::Rb, nop, no),
            ],
        );
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// Shifts by a constant. 32-bit: `SHL`/`SHR` imm. 64-bit, all with LEA forms whose
    /// meaning ptxas shows (`LEA.HI d, lo, RZ, hi, s` = high word of `{hi:lo} << s`):
    /// `x << k`: `LEA d.lo, x.lo, RZ, k ; LEA.HI d.hi, x.lo, RZ, x.hi, k`;
    /// `x >> k`: `LEA.HI d.lo, x.lo, RZ, x.hi, 32-k ; SHR d.hi, x.hi, k`;
    /// counts of 32 or more move words and fill with zero or the sign.
    fn shift_const(&mut self, v: Value, x: Value, op: BinaryOp, k: i64) -> Result<(), LowerError> {
        let ty = self.ty(v);
        let wide = kind_of(ty) == RegKind::B64;
        let signed = op == BinaryOp::ShrS;
        let a = if op == BinaryOp::Shl || wide {
            self.reg(x)?
        } else {
            match self.norm32(x, signed)? {
                Src::Reg(l) => l,
                _ => self.reg(x)?,
            }
        };
        let width = if wide { 64 } else { 32 };
        let k = k.clamp(0, width);
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, wide);
        let aop = i.use_(a.vreg);
        let o = a.offset;
        let shl = |n: i64| sm50::Inst::new(Form::SHL_I).with_signed(Field::ImmImm20s, n);
        let shr = |n: i64| {
            sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, signed as u64)
                .with_signed(Field::ImmImm20s, n)
        };
        let mov_rz = sm50::Inst::new(Form::MOV_R);
        if !wide {
            let inst = if op == BinaryOp::Shl { shl(k) } else { shr(k) };
            i.piece(inst, &[(Field::Rd, dop, 0), (Field::Ra, aop, o)]);
        } else if op == BinaryOp::Shl {
            if k < 32 {
                let lea = sm50::Inst::new(Form::LEA_R).with(Field::S, k as u64);
                let hi = sm50::Inst::new(Form::LEA_HI_R).with(Field::S, k as u64);
                i.piece(lea, &[(Field::Rd, dop, 0), (Field::Ra, aop, o)]);
                i.piece(
                    hi,
                    &[
                        (Field::Rd, dop, 1),
                        (Field::Ra, aop, o),
                        (Field::Rc, aop, o + 1),
                    ],
                );
            } else {
                i.piece(shl(k - 32), &[(Field::Rd, dop, 1), (Field::Ra, aop, o)]);
                i.piece(mov_rz, &[(Field::Rd, dop, 0)]);
            }
        } else if k == 0 {
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, 0), (Field::Rb, aop, o)],
            );
            i.piece(
                sm50::Inst::new(Form::MOV_R),
                &[(Field::Rd, dop, 1), (Field::Rb, aop, o + 1)],
            );
        } else if k < 32 {
            let hi = sm50::Inst::new(Form::LEA_HI_R).with(Field::S, (32 - k) as u64);
            i.piece(
                hi,
                &[
                    (Field::Rd, dop, 0),
                    (Field::Ra, aop, o),
                    (Field::Rc, aop, o + 1),
                ],
            );
            i.piece(shr(k), &[(Field::Rd, dop, 1), (Field::Ra, aop, o + 1)]);
        } else if !signed && k == 64 {
            // A logical shift by 64 or more (k is clamped to 64) leaves nothing; the count
            // must not be clamped to 31, which would keep the top bit.
            i.piece(mov_rz, &[(Field::Rd, dop, 0)]);
            i.piece(mov_rz, &[(Field::Rd, dop, 1)]);
        } else {
            i.piece(
                shr((k - 32).min(31)),
                &[(Field::Rd, dop, 0), (Field::Ra, aop, o + 1)],
            );
            if signed {
                i.piece(shr(31), &[(Field::Rd, dop, 1), (Field::Ra, aop, o + 1)]);
            } else {
                i.piece(mov_rz, &[(Field::Rd, dop, 1)]);
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// One word of a 64-bit value built from two 32-bit halves (see [`Self::pair_words`]).
    fn pair_word(&self, v: Value, high: bool) -> Option<Word> {
        match *self.def_of(v)? {
            InstData::Iconst { imm, .. } => {
                let (word, other) = if high {
                    (imm >> 32, imm as u32)
                } else {
                    (imm & 0xffff_ffff, (imm >> 32) as u32)
                };
                (other == 0).then_some(Word::Imm(word as u32))
            }
            InstData::Convert {
                op: ConvOp::Zext,
                arg,
                ..
            } if !high && self.ty(arg) == Type::I32 => Some(Word::Val(arg)),
            InstData::Binary {
                op: BinaryOp::Shl,
                args: [x, n],
            } if high && matches!(self.class(n), Class::Imm(32)) => match *self.def_of(x)? {
                InstData::Convert {
                    op: ConvOp::Zext | ConvOp::Sext,
                    arg,
                    ..
                } if self.ty(arg) == Type::I32 => Some(Word::Val(arg)),
                _ => Some(Word::Low(x)),
            },
            _ => None,
        }
    }

    /// `or.i64 a, b` where one side has only low bits and the other only high bits, as PTX
    /// `mov.b64 d, {lo, hi}` builds it (`or(zext lo, shl(zext hi, 32))`, or a constant
    /// half): the words, low first.
    fn pair_words(&self, args: [Value; 2]) -> Option<(Word, Word)> {
        [(args[0], args[1]), (args[1], args[0])]
            .into_iter()
            .find_map(|(a, b)| Some((self.pair_word(a, false)?, self.pair_word(b, true)?)))
    }

    /// A 64-bit value that [`Self::pair_words`] recognises: each word moved into the pair
    /// (`MOV`, `MOV32I`, `MOV` from the constant bank or from `RZ`), instead of extending
    /// both halves, shifting one and ORing them.
    fn lower_pair(&mut self, v: Value, args: [Value; 2]) -> Result<bool, LowerError> {
        let Some((lo, hi)) = self.pair_words(args) else {
            return Ok(false);
        };
        let srcs = [lo, hi]
            .into_iter()
            .map(|w| {
                Ok(match w {
                    Word::Val(x) => self.src(x)?,
                    Word::Low(x) => Src::Reg(self.reg(x)?),
                    Word::Imm(k) => Src::Imm(i64::from(k)),
                })
            })
            .collect::<Result<SmallVec<[Src; 2]>, LowerError>>()?;
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        for (w, s) in (0u8..).zip(srcs) {
            match s {
                Src::Reg(l) => {
                    let sop = i.use_(l.vreg);
                    i.piece(
                        sm50::Inst::new(Form::MOV_R),
                        &[(Field::Rd, dop, w), (Field::Rb, sop, l.offset)],
                    );
                }
                Src::Cbuf(o) => i.piece(
                    sm50::Inst::new(Form::MOV_C).with(Field::Cbo, u64::from(o / 4)),
                    &[(Field::Rd, dop, w)],
                ),
                Src::Lit(o) => i.piece(
                    sm50::Inst::new(Form::MOV_C)
                        .with(Field::Cbk, 2)
                        .with(Field::Cbo, u64::from(o / 4)),
                    &[(Field::Rd, dop, w)],
                ),
                // MOV d, RZ
                Src::Imm(0) => i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, w)]),
                Src::Imm(k) => i.piece(
                    sm50::Inst::new(Form::MOV32I).with(Field::Imm, k as u64 & 0xffff_ffff),
                    &[(Field::Rd, dop, w)],
                ),
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    fn lower_logic(
        &mut self,
        v: Value,
        op: BinaryOp,
        args: [Value; 2],
        wide: bool,
    ) -> Result<(), LowerError> {
        let (mut a, mut b) = (args[0], args[1]);
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
        }
        let al = self.reg(a)?;
        let bs = self.src(b)?;
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // Word by word (each LOP reads word `w` of its operands, then writes word `w` of `d`):
        // a late def, so `d` may take an operand's pair.
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        for w in 0..(if wide { 2u8 } else { 1 }) {
            let mut refs = vec![(Field::Rd, dop, w), (Field::Ra, aop, al.offset + w)];
            let inst = match bs {
                Src::Imm(k) => {
                    let word = if wide {
                        (k as u64 >> (32 * w)) & 0xffff_ffff
                    } else {
                        k as u64 & 0xffff_ffff
                    };
                    sm50::Inst::new(Form::LOP32I)
                        .with(Field::Op, lop_code(op))
                        .with(Field::Imm, word)
                }
                s => Self::with_b(
                    &mut i,
                    (Form::LOP_R, Form::LOP_C, Form::LOP_I),
                    s,
                    w,
                    &mut refs,
                )
                .with(Field::Op, lop_code(op)),
            };
            i.piece(inst, &refs);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `mulwide` by a power of two is an extension and a shift; anything else goes to `mul.rs`.
    fn lower_mulwide(
        &mut self,
        v: Value,
        signed: bool,
        args: [Value; 2],
    ) -> Result<(), LowerError> {
        let k = [1usize, 0]
            .into_iter()
            .find_map(|j| match self.class(args[j]) {
                Class::Imm(k)
                    if k > 0 && (k as u64).is_power_of_two() && k.trailing_zeros() < 32 =>
                {
                    Some((args[1 - j], k.trailing_zeros() as u64))
                }
                _ => None,
            });
        let Some((x, k)) = k.filter(|_| self.ty(v) == Type::I64) else {
            return self.lower_mulwide_general(v, signed, args);
        };
        let a = self.reg(x)?;
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(a.vreg);
        // [SHR d.hi, x, 0x1f] ; LEA d.lo, x, RZ, k ; LEA.HI d.hi, x, RZ, d.hi|RZ, k
        let mut hi_refs = vec![(Field::Rd, dop, 1), (Field::Ra, aop, a.offset)];
        if signed {
            let shr = sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, 1)
                .with(Field::ImmImm20s, 0x1f);
            i.piece(shr, &[(Field::Rd, dop, 1), (Field::Ra, aop, a.offset)]);
            hi_refs.push((Field::Rc, dop, 1));
        }
        i.piece(
            sm50::Inst::new(Form::LEA_R).with(Field::S, k),
            &[(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)],
        );
        i.piece(sm50::Inst::new(Form::LEA_HI_R).with(Field::S, k), &hi_refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn lower_convert(
        &mut self,
        v: Value,
        op: ConvOp,
        ty: Type,
        arg: Value,
    ) -> Result<(), LowerError> {
        let from = self.ty(arg);
        if !from.is_int() || !ty.is_int() {
            return Err(self.unsupported(format!("convert {from} to {ty}")));
        }
        if op == ConvOp::Trunc {
            // The low word of a pair, or the same register: high bits of narrow values are
            // unspecified, so truncation costs nothing.
            let l = self.reg(arg)?;
            self.set_loc(v, l);
            return Ok(());
        }
        let signed = op == ConvOp::Sext;
        if ty != Type::I64 {
            let l = self.reg(arg)?;
            let out = self.extend_narrow(l, from, signed, None)?;
            self.set_loc(v, out);
            return Ok(());
        }
        // To 64 bits: [extend the narrow source] then the high word is RZ or the sign word.
        let lo = if from.bits() < 32 {
            match self.norm32(arg, signed)? {
                Src::Reg(l) => l,
                _ => self.reg(arg)?,
            }
        } else {
            self.reg(arg)?
        };
        let d = self.new_vreg(RegKind::B64);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let aop = i.use_(lo.vreg);
        i.piece(
            sm50::Inst::new(Form::MOV_R),
            &[(Field::Rd, dop, 0), (Field::Rb, aop, lo.offset)],
        );
        if signed {
            let shr = sm50::Inst::new(Form::SHR_I)
                .with(Field::Sgn, 1)
                .with(Field::ImmImm20s, 0x1f);
            i.piece(shr, &[(Field::Rd, dop, 1), (Field::Ra, aop, lo.offset)]);
        } else {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    fn lower_select(&mut self, v: Value, cond: Value, args: [Value; 2]) -> Result<(), LowerError> {
        let kind = kind_of(self.ty(v));
        if kind == RegKind::Pred {
            return Err(self.unsupported("select of predicates"));
        }
        if kind == RegKind::B32 && self.select_imm(v, cond, args)? {
            return Ok(());
        }
        // A constant that no immediate holds is read from the literal pool (constant bank 2),
        // as ptxas does (float constants are `iconst`s of their bits in the IR); a constant
        // first operand goes to B: `c ? k : b` is `SEL d, b, k, !c`.
        let swap = matches!(self.class(args[0]), Class::Imm(_))
            && matches!(self.class(args[1]), Class::Reg);
        let (av, bv) = if swap {
            (args[1], args[0])
        } else {
            (args[0], args[1])
        };
        let c = self.reg(cond)?;
        let a = self.reg(av)?;
        let b = match self.class(bv) {
            Class::Imm(k) if kind == RegKind::B64 => {
                if fits_imm20(i64::from(k as i32)) && fits_imm20(k >> 32) {
                    Src::Imm(k)
                } else {
                    Src::Lit(self.literal(k as u64, 8)?)
                }
            }
            Class::Imm(k) if !fits_imm20(k) => Src::Lit(self.literal(u64::from(k as u32), 4)?),
            _ if kind == RegKind::B64 => match self.src(bv)? {
                Src::Imm(_) => Src::Reg(self.reg(bv)?),
                s => s,
            },
            _ => self.src20(bv)?,
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let words = kind.gprs() as u8;
        let dop = i.def(d, words > 1);
        let cop = i.use_(c.vreg);
        let aop = i.use_(a.vreg);
        for w in 0..words {
            // SEL d, a, b, c  ==  c ? a : b
            let mut refs = vec![
                (Field::Rd, dop, w),
                (Field::Ra, aop, a.offset + w),
                (Field::Ps, cop, 0),
            ];
            let inst = Self::with_b(
                &mut i,
                (Form::SEL_R, Form::SEL_C, Form::SEL_I),
                b,
                w,
                &mut refs,
            )
            .with(Field::Psn, u64::from(swap));
            i.piece(inst, &refs);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// A 32-bit select with a constant first operand, without materializing it (ptxas's
    /// shapes): `c ? 0 : b` is `SEL d, RZ, b, c`; `c ? k : b` (k an imm20, b not a constant
    /// or 0) is `SEL d, b|RZ, k, !c`. Returns false when neither applies.
    fn select_imm(&mut self, v: Value, cond: Value, args: [Value; 2]) -> Result<bool, LowerError> {
        let Class::Imm(ka) = self.class(args[0]) else {
            return Ok(false);
        };
        let (ra, b, negate) = if ka == 0 {
            (None, self.src20(args[1])?, false)
        } else if !fits_imm20(ka) {
            return Ok(false);
        } else {
            match self.class(args[1]) {
                Class::Imm(0) => (None, Src::Imm(ka), true),
                Class::Imm(_) => return Ok(false),
                _ => (Some(self.reg(args[1])?), Src::Imm(ka), true),
            }
        };
        let c = self.reg(cond)?;
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let cop = i.use_(c.vreg);
        let mut refs = vec![(Field::Rd, dop, 0), (Field::Ps, cop, 0)];
        if let Some(a) = ra {
            let aop = i.use_(a.vreg);
            refs.push((Field::Ra, aop, a.offset));
        }
        let inst = Self::with_b(
            &mut i,
            (Form::SEL_R, Form::SEL_C, Form::SEL_I),
            b,
            0,
            &mut refs,
        )
        .with(Field::Psn, negate as u64);
        i.piece(inst, &refs);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(true)
    }

    /// `ISETP.<cc>[.U32].AND p, PT, a, b, PT`; 64-bit compares combine three ISETPs through the
    /// accumulator predicate: low words unsigned, then `hi == hi AND p`, then `hi <cc> hi OR p`
    /// with the strict form of `<cc>`.
    fn lower_icmp(&mut self, v: Value, cc: IntCC, args: [Value; 2]) -> Result<(), LowerError> {
        if let Some(a) = self.outside_shared_window(cc, args) {
            return self.lower_window_pred(v, a);
        }
        let ty = self.ty(args[0]);
        let (mut a, mut b, mut cc) = (args[0], args[1], cc);
        if !matches!(self.class(a), Class::Reg) && matches!(self.class(b), Class::Reg) {
            std::mem::swap(&mut a, &mut b);
            cc = swap_cc(cc);
        }
        let (code, signed) = cmp_code(cc);
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        if kind_of(ty) != RegKind::B64 {
            let al = match self.norm32(a, signed)? {
                Src::Reg(l) => l,
                _ => self.reg(a)?,
            };
            let bs = self.norm32(b, signed)?;
            let dop = i.def(d, false);
            let aop = i.use_(al.vreg);
            let mut refs = vec![(Field::Pd0, dop, 0), (Field::Ra, aop, al.offset)];
            let inst = Self::with_b(
                &mut i,
                (Form::ISETP_R, Form::ISETP_C, Form::ISETP_I),
                bs,
                0,
                &mut refs,
            )
            .with(Field::Cmp, code)
            .with(Field::Sgn, signed as u64);
            i.piece(inst, &refs);
        } else {
            let al = self.reg(a)?;
            let bs = match self.src(b)? {
                Src::Imm(_) => Src::Reg(self.reg(b)?),
                s => s,
            };
            let dop = i.def(d, true);
            let aop = i.use_(al.vreg);
            let forms = (Form::ISETP_R, Form::ISETP_C, Form::ISETP_I);
            let piece = |i: &mut Sm50Inst, word: u8, code: u64, sgn: bool, bop: u64, acc: bool| {
                let mut refs = vec![(Field::Pd0, dop, 0), (Field::Ra, aop, al.offset + word)];
                if acc {
                    refs.push((Field::Pacc, dop, 0));
                }
                let inst = Self::with_b(i, forms, bs, word, &mut refs)
                    .with(Field::Cmp, code)
                    .with(Field::Sgn, sgn as u64)
                    .with(Field::Bop, bop);
                i.piece(inst, &refs);
            };
            match cc {
                IntCC::Eq => {
                    piece(&mut i, 0, code, false, 0, false);
                    piece(&mut i, 1, code, false, 0, true);
                }
                IntCC::Ne => {
                    piece(&mut i, 0, code, false, 0, false);
                    piece(&mut i, 1, code, false, 1, true);
                }
                _ => {
                    let strict = match code {
                        3 => 1,
                        6 => 4,
                        c => c,
                    };
                    piece(&mut i, 0, code, false, 0, false);
                    piece(&mut i, 1, 2, false, 0, true);
                    piece(&mut i, 1, strict, signed, 1, true);
                }
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `icmp.ne (and a, ~0xffffff), (and (cvta.shared 0), ~0xffffff)` on i64, `ir::build`'s
    /// test "generic address `a` lies outside the shared window" (`isspacep.global`'s half,
    /// the generic float atomics' branch): `a`, when `args` has that shape.
    fn outside_shared_window(&self, cc: IntCC, args: [Value; 2]) -> Option<Value> {
        if cc != IntCC::Ne || self.ty(args[0]) != Type::I64 {
            return None;
        }
        let window_mask = |v: Value| {
            matches!(self.def_of(v), Some(InstData::Iconst { imm, .. })
                if *imm as i64 == !0xff_ffff)
        };
        let masked = |v: Value| match self.def_of(v) {
            Some(InstData::Binary {
                op: BinaryOp::And,
                args: [x, m],
            }) if window_mask(*m) => Some(*x),
            _ => None,
        };
        let shared_base = |v: Value| {
            matches!(self.def_of(v), Some(InstData::Cvta {
                dir: CvtaDir::ToGeneric,
                space: Space::Shared,
                arg,
                ..
            }) if matches!(self.def_of(*arg), Some(InstData::Iconst { imm: 0, .. })))
        };
        let (a, b) = (masked(args[0])?, masked(args[1])?);
        if shared_base(b) {
            Some(a)
        } else if shared_base(a) {
            Some(b)
        } else {
            None
        }
    }

    /// Generic address `a` (a pair) outside the shared window, as ptxas tests it for generic
    /// atomics: `LEA RZ.CC, a.lo, RZ` then `LEA.HI.X P, RZ, a.lo, RZ, a.hi`, whose `Plg` is
    /// true exactly outside the window (the window predicate generic accesses take; see the
    /// module essay of `lower` and `sim`). Two instructions instead of the masks, the window
    /// base's materialization and a 64-bit compare.
    fn lower_window_pred(&mut self, v: Value, a: Value) -> Result<(), LowerError> {
        let al = self.reg(a)?;
        let d = self.new_vreg(RegKind::Pred);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let aop = i.use_(al.vreg);
        window_test_pieces(&mut i, aop, al.offset, dop);
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `cvta` of the global space is the identity; shared/local add or subtract the window
    /// base from `c[0x0][0x0]` / `c[0x0][0x4]` (sm50-isa.md §4). Window addresses are below
    /// 4 GB, so the high word of the result is zero for every address inside the window
    /// (PTX leaves the rest undefined).
    fn lower_cvta(
        &mut self,
        v: Value,
        dir: CvtaDir,
        space: Space,
        ty: Type,
        arg: Value,
    ) -> Result<(), LowerError> {
        let window = match space {
            Space::Global => {
                let l = self.reg(arg)?;
                self.set_loc(v, l);
                return Ok(());
            }
            Space::Shared => 0x0,
            Space::Local => 0x4,
            Space::Const => return self.lower_cvta_const(v, dir, ty, arg),
            s => return Err(self.unsupported(format!("cvta of the .{} space", s.name()))),
        };
        if space == Space::Local && dir == CvtaDir::ToGeneric {
            if let Some(k) = self.known_constant(arg) {
                return self.lower_cvta_local_frame(v, ty, k);
            }
        }
        let a = self.reg(arg)?;
        let kind = kind_of(ty);
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let local = space == Space::Local;
        let dop = i.def(d, kind == RegKind::B64 || local);
        let aop = i.use_(a.vreg);
        let from = (dir == CvtaDir::FromGeneric) as u64;
        let add = sm50::Inst::new(Form::IADD_C)
            .with(Field::Cbo, window / 4)
            .with(Field::Negb, from);
        i.piece(add, &[(Field::Rd, dop, 0), (Field::Ra, aop, a.offset)]);
        if local {
            // A local-space address is an offset from the stack pointer R1 (see `address`).
            let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
            let add = sm50::Inst::new(Form::IADD_R).with(Field::Negb, from);
            i.piece(
                add,
                &[(Field::Rd, dop, 0), (Field::Ra, dop, 0), (Field::Rb, sp, 0)],
            );
        }
        if kind == RegKind::B64 {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `v` as `MOV32I`s of 0, one per word of `words`, each carrying that word's relocation
    /// (`var` names the variable where the word is one of its address's), for the loader or
    /// the linker to patch: a module variable's address, a kernel's descriptor.
    pub(super) fn relocated_words(
        &mut self,
        v: Value,
        kind: RegKind,
        var: crate::ir::GlobalVar,
        words: &[RelocWord],
    ) {
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        for (w, &word) in (0u8..).zip(words) {
            i.piece(
                sm50::Inst::new(Form::MOV32I).with(Field::Imm, 0),
                &[(Field::Rd, dop, w)],
            );
            if let Some(p) = i.pieces.last_mut() {
                p.reloc = Some(super::Reloc { var, word });
            }
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
    }

    /// `cvta.local` of a `.local` variable's address (a known frame offset `k`, as nvcc's
    /// `mov %SPL, __local_depot0; cvta.local %SP, %SPL` makes it): the stack pointer plus the
    /// local window base, `IADD d, R1, c[0x0][0x4]` (ptxas 11.8 writes the same sum as
    /// `LOP.OR`), then `+ k` when it is not 0; the high word of a 64-bit one is zero. The
    /// offset is never materialized in a register.
    fn lower_cvta_local_frame(&mut self, v: Value, ty: Type, k: i64) -> Result<(), LowerError> {
        let kind = kind_of(ty);
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
        // c[0x0][0x4], the local window base (the offset field counts words).
        let base = sm50::Inst::new(Form::IADD_C).with(Field::Cbo, 1);
        i.piece(base, &[(Field::Rd, dop, 0), (Field::Ra, sp, 0)]);
        if k != 0 {
            let add = sm50::Inst::new(Form::IADD32I).with(Field::Imm, k as u64 & 0xffff_ffff);
            i.piece(add, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
        }
        if kind == RegKind::B64 {
            i.piece(sm50::Inst::new(Form::MOV_R), &[(Field::Rd, dop, 1)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    /// `cvta.const` / `cvta.to.const` as ptxas 11.8 emits them: the 64-bit const window base
    /// `c[0x0][0xd0]` (low word) / `c[0x0][0xd4]` (high word) added to or subtracted from
    /// the address, `IADD.CC` then `IADD.X` (one `IADD` for `.u32`).
    fn lower_cvta_const(
        &mut self,
        v: Value,
        dir: CvtaDir,
        ty: Type,
        arg: Value,
    ) -> Result<(), LowerError> {
        let a = self.reg(arg)?;
        let kind = kind_of(ty);
        let wide = kind == RegKind::B64;
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // Word w of the result is written after word w of the source is read, and the
        // high IADD reads no low word: a late def, as `lower_add`.
        let dop = i.def(d, false);
        let aop = i.use_(a.vreg);
        let from = (dir == CvtaDir::FromGeneric) as u64;
        for w in 0..if wide { 2 } else { 1 } {
            let mut add = sm50::Inst::new(Form::IADD_C)
                .with(Field::Cbo, (0xd0 + 4 * w as u64) / 4)
                .with(Field::Negb, from);
            if wide {
                add.set(if w == 0 { Field::Cc } else { Field::X }, 1);
            }
            i.piece(add, &[(Field::Rd, dop, w), (Field::Ra, aop, a.offset + w)]);
        }
        self.push(i);
        self.set_loc(v, Loc { vreg: d, offset: 0 });
        Ok(())
    }

    // ------------------------------------------------------------ memory

    #[allow(clippy::too_many_arguments)]
    fn lower_load(
        &mut self,
        results: &[Value],
        space: Space,
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
        cache: CacheOp,
    ) -> Result<(), LowerError> {
        let bytes = ty.bytes().unwrap_or(4);
        let total = bytes * u32::from(width);
        if width > 1 && (bytes < 4 || total > 16) {
            // Narrow elements: one scalar access each (total alignment covers each element).
            for (k, &r) in results.iter().enumerate() {
                let off = offset.wrapping_add((k as u32 * bytes) as i32);
                self.lower_load(&[r], space, ty, 1, addr, off, cache)?;
            }
            return Ok(());
        }
        if space == Space::Param {
            return self.load_param_space(results, ty, width, addr, offset);
        }
        if space == Space::Const && total > 8 && width > 1 {
            // LDC reads at most 64 bits: two halves (`LDC.64` twice, as ptxas does).
            let half = results.len() / 2;
            let w = width / 2;
            let second = offset.wrapping_add((total / 2) as i32);
            self.lower_load(&results[..half], space, ty, w, addr, offset, cache)?;
            return self.lower_load(&results[half..], space, ty, w, addr, second, cache);
        }
        let kind = match total {
            8 => RegKind::B64,
            16 => RegKind::B128,
            _ => RegKind::B32,
        };
        let words_per = (bytes / 4).max(1) as u8;
        let access = self.address(space, addr, offset)?;
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let (mut inst, mut refs) = self.mem_inst(&mut i, space, &access, false, total)?;
        cache::set_field(&mut inst, cache);
        refs.push((Field::Rd, dop, 0));
        i.piece(inst, &refs);
        self.push(i);
        for (k, &r) in results.iter().enumerate() {
            self.set_loc(
                r,
                Loc {
                    vreg: d,
                    offset: k as u8 * words_per,
                },
            );
        }
        Ok(())
    }

    fn lower_store(
        &mut self,
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        values: &[Value],
        cache: CacheOp,
    ) -> Result<(), LowerError> {
        let bytes = ty.bytes().unwrap_or(4);
        let total = bytes * values.len() as u32;
        if values.len() > 1 && (bytes < 4 || total > 16) {
            for (k, &v) in values.iter().enumerate() {
                let off = offset.wrapping_add((k as u32 * bytes) as i32);
                self.lower_store(space, ty, addr, off, &[v], cache)?;
            }
            return Ok(());
        }
        if matches!(space, Space::Param | Space::Const) {
            return Err(self.unsupported(format!("store to the .{} space", space.name())));
        }
        // A zero of at most 32 bits is stored from RZ (an unset register field), no MOV32I.
        let zero =
            values.len() == 1 && total <= 4 && matches!(self.class(values[0]), Class::Imm(0));
        let data = if zero {
            None
        } else {
            Some(self.store_data(values, total)?)
        };
        let access = self.address(space, addr, offset)?;
        let mut i = Sm50Inst::new(Role::Plain);
        let (mut inst, mut refs) = self.mem_inst(&mut i, space, &access, true, total)?;
        cache::set_field(&mut inst, cache);
        if let Some(data) = data {
            let sop = i.use_(data.vreg);
            refs.push((Field::Rd, sop, data.offset));
        }
        i.piece(inst, &refs);
        self.push(i);
        Ok(())
    }

    /// The register group a store reads: the value itself, or its elements gathered into an
    /// aligned pair/quad unless they already are consecutive words of one.
    fn store_data(&mut self, values: &[Value], total: u32) -> Result<Loc, LowerError> {
        let locs: Vec<Loc> = values
            .iter()
            .map(|&v| self.reg(v))
            .collect::<Result<_, _>>()?;
        let words = (total / 4).max(1) as u8;
        let per = words / values.len() as u8;
        let first = locs[0];
        let aligned = first.offset % words == 0
            && locs
                .iter()
                .enumerate()
                .all(|(k, l)| l.vreg == first.vreg && l.offset == first.offset + k as u8 * per);
        if values.len() == 1 || aligned {
            return Ok(first);
        }
        let kind = if words == 4 {
            RegKind::B128
        } else {
            RegKind::B64
        };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, true);
        for (k, l) in locs.iter().enumerate() {
            let s = i.use_(l.vreg);
            for w in 0..per {
                i.piece(
                    sm50::Inst::new(Form::MOV_R),
                    &[
                        (Field::Rd, dop, k as u8 * per + w),
                        (Field::Rb, s, l.offset + w),
                    ],
                );
            }
        }
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// `ld.param` through an address: only constant addresses, read from the bank.
    fn load_param_space(
        &mut self,
        results: &[Value],
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
    ) -> Result<(), LowerError> {
        let Class::Imm(base) = self.class(addr) else {
            return Err(self.unsupported("ld.param through a computed address"));
        };
        let bytes = ty.bytes().unwrap_or(4);
        let off = base.wrapping_add(i64::from(offset));
        if bytes < 4 {
            // An 8- or 16-bit element (clang reads a `__half` parameter this way): MOV its
            // containing word, then shift it down to bit 0, as a direct narrow ld.param is
            // read (the high bits of an i8/i16 value are unspecified).
            for (k, &r) in results.iter().take(width as usize).enumerate() {
                let byte = 0x140 + off + i64::from(k as u32 * bytes);
                if !(0..0x10000).contains(&byte) {
                    return Err(self.unsupported("ld.param offset out of the constant bank"));
                }
                let d = self.new_vreg(kind_of(ty));
                let mut i = Sm50Inst::new(Role::Plain);
                let dop = i.def(d, true);
                let mov = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, byte as u64 / 4);
                i.piece(mov, &[(Field::Rd, dop, 0)]);
                if byte % 4 != 0 {
                    let shr =
                        sm50::Inst::new(Form::SHR_I).with(Field::ImmImm20s, 8 * (byte as u64 % 4));
                    i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, dop, 0)]);
                }
                self.push(i);
                self.set_loc(r, Loc { vreg: d, offset: 0 });
            }
            return Ok(());
        }
        let words = (bytes / 4) as u8;
        for (k, &r) in results.iter().take(width as usize).enumerate() {
            let kind = kind_of(ty);
            let d = self.new_vreg(kind);
            let mut i = Sm50Inst::new(Role::Plain);
            let dop = i.def(d, words > 1);
            for w in 0..words {
                let byte = 0x140 + off + i64::from(k as u32 * bytes) + 4 * i64::from(w);
                if !(0..0x10000).contains(&byte) {
                    return Err(self.unsupported("ld.param offset out of the constant bank"));
                }
                let inst = sm50::Inst::new(Form::MOV_C).with(Field::Cbo, byte as u64 / 4);
                i.piece(inst, &[(Field::Rd, dop, w)]);
            }
            self.push(i);
            self.set_loc(r, Loc { vreg: d, offset: 0 });
        }
        Ok(())
    }

    /// Match and build the address of an access (see [`Access`]).
    fn address(&mut self, space: Space, addr: Value, offset: i32) -> Result<Access, LowerError> {
        let wide = matches!(space, Space::Global | Space::Generic) && self.ty(addr) == Type::I64;
        let in_reg = |v: Value| self.non_address_use[v.index()];
        let konst = |v: Value| self.known_constant(v);
        let facts = Facts {
            in_register: &in_reg,
            constant: &konst,
        };
        let mode = match_address(self.f, addr, offset, wide, &facts, true);
        let generic = space == Space::Generic;
        let mem_bits = match space {
            Space::Generic => 32,
            Space::Const => 16,
            _ => 24,
        };
        // Where the displacement goes. Generic accesses computed by a chain get Plg. By default
        // (ptxas's rule) the chain's Plg, tested on `base + index`, serves every displacement
        // from it: an object never straddles a window, so the displacement stays in the
        // instruction. With `--plg-per-address` Plg must cover the final address, so the
        // displacement joins the chain (two more LEAs for a 64-bit chain).
        // A lone parameter base gets a chain only for a 64-bit generic access (where it buys
        // Plg); elsewhere two MOVs (one for 32 bits) cost as much and are shared by every
        // block.
        let fold = self.opts.fold != Fold::None;
        let has_chain = mode.index.is_some()
            || (matches!(mode.base, Base::Param { .. }) && generic && wide && fold);
        let plg = generic && has_chain && fold;
        let disp_in_chain =
            plg && self.opts.plg_per_address && mode.disp != 0 && fits_imm20(mode.disp);
        let plg = plg && (disp_in_chain || !self.opts.plg_per_address || mode.disp == 0);
        let (chain_disp, mut mem_disp) = if disp_in_chain {
            (mode.disp, 0)
        } else {
            (0, mode.disp)
        };

        let mut a = Access {
            sp: false,
            addr: None,
            pred: None,
            disp: 0,
            wide,
        };
        let local = space == Space::Local;
        if local && mode.base == Base::None {
            // `.local` addresses are offsets from the stack pointer: with no base of its own,
            // R1 is the base, of the chain or of the instruction.
            a.sp = true;
        }
        if has_chain && chain_disp > 0 && self.opts.fold == Fold::Full {
            // Plg must cover the displacement: a shared chain for the rest of the address,
            // then `base + disp` with Plg per displacement (see `lea::plg_step`).
            let (base, _) = self.chain(mode, 0, false, a.sp)?;
            let (reg, p) = self.plg_step(base, chain_disp, wide)?;
            a.addr = Some(Loc {
                vreg: reg,
                offset: 0,
            });
            a.pred = Some(p);
        } else if has_chain {
            let (reg, p) = self.chain(mode, chain_disp, plg, a.sp)?;
            a.addr = Some(Loc {
                vreg: reg,
                offset: 0,
            });
            a.pred = p;
        } else {
            match mode.base {
                Base::Reg(v) => a.addr = Some(self.reg(v)?),
                Base::Param { value, .. } => a.addr = Some(self.reg(value)?),
                Base::None => {}
            }
        }
        if local && !a.sp {
            // A base of its own (an offset in a register): add R1 to it.
            let base = a
                .addr
                .ok_or_else(|| LowerError::Internal("local base".into()))?;
            a.addr = Some(self.add_sp(base));
        }
        if a.sp && !has_chain {
            a.addr = None;
        } else {
            a.sp = false;
        }
        let limit = 1i64 << (mem_bits - 1);
        if !(-limit..limit).contains(&mem_disp) {
            // Too far for the instruction's immediate: add it to the address first.
            if a.sp {
                return Err(self.unsupported("a .local offset beyond 24 bits"));
            }
            let base = a.addr;
            a.addr = Some(self.add_disp(base, mem_disp, wide)?);
            mem_disp = 0;
        }
        a.disp = mem_disp;
        if self.planning.is_none() {
            let st = &mut self.stats;
            st.plg_folds += a.pred.is_some() as u32;
            st.disp_folds += (mem_disp != 0) as u32;
            st.disp_in_chain += (chain_disp != 0) as u32;
            if generic && has_chain && fold && a.pred.is_none() {
                st.reject("generic access: displacement beyond imm20, no Plg from the chain");
            }
        }
        Ok(a)
    }

    /// The chain for `mode` (shared with earlier accesses of this block when identical).
    fn chain(
        &mut self,
        mode: AddrMode,
        disp: i64,
        plg: bool,
        sp_base: bool,
    ) -> Result<(VReg, Option<VReg>), LowerError> {
        let key = ChainKey {
            mode: AddrMode { disp, ..mode },
            plg,
            sp: sp_base,
        };
        // `--fold=lea` builds every access its own chain. Otherwise a chain built earlier in
        // this block or in a block that dominates it is reused: its registers hold the same
        // address on every path here (the IR is SSA, so the leaves cannot have changed). The
        // trade-off is a longer live range (a loop-invariant chain lives through the loop)
        // against two or more instructions per access. A chain with `Plg` is shared within
        // its block only: predicate registers are few (7) and a live one across blocks is
        // more likely to cost a spill than the pair it saves.
        let here = self.cur_ir;
        if self.planning.is_none() && self.opts.fold != Fold::Lea {
            let doms = &self.doms;
            let found = self.chains.get(&key).and_then(|v| {
                v.iter().rev().find(|(b, _, p)| {
                    here.is_some_and(|h| *b == h || (p.is_none() && doms.dominates(*b, h)))
                })
            });
            if let Some(&(_, r, p)) = found {
                self.stats.chains_shared += 1;
                return Ok((r, p));
            }
            // An access that needs no Plg also takes the address of the same chain built with
            // one (a generic access at displacement 0 before the `plg_step`s of its
            // neighbours): the address words do not depend on the predicate, so only the
            // dominance rule of plain chains applies.
            if !plg {
                let with_plg = ChainKey { plg: true, ..key };
                let found = self.chains.get(&with_plg).and_then(|v| {
                    v.iter()
                        .rev()
                        .find(|(b, _, _)| here.is_some_and(|h| doms.dominates(*b, h)))
                });
                if let Some(&(_, r, _)) = found {
                    self.stats.chains_shared += 1;
                    return Ok((r, None));
                }
            }
        }
        let base = match mode.base {
            Base::None if sp_base => ChainBase::Sp,
            Base::None => ChainBase::None,
            Base::Reg(v) => match self.split_base(v, mode.wide) {
                Some((x, Ext::Sext)) => {
                    let lo = self.reg(x)?;
                    let hi = self.sign_word(x, lo);
                    ChainBase::Split { lo, hi: Some(hi) }
                }
                Some((x, _)) => ChainBase::Split {
                    lo: self.reg(x)?,
                    hi: None,
                },
                None => ChainBase::Reg(self.reg(v)?),
            },
            Base::Param { offset, .. } => ChainBase::Cbuf(0x140 + offset),
        };
        let index = match mode.index {
            Some(Index {
                value,
                ext,
                shift,
                neg,
            }) => {
                let loc = self.reg(value)?;
                let sext = mode.wide && ext == Ext::Sext && self.opts.fold == Fold::Full;
                if sext && self.planning.is_some() {
                    *self.sext_chains.entry(value).or_default() += 1;
                }
                // A sign word of its own only pays when several chains read it; for one it
                // would cost a register the in-chain form does not (tight --maxrregcount).
                let share = sext && self.sext_chains.get(&value).copied().unwrap_or(0) > 1;
                let sign = if share && self.planning.is_none() {
                    Some(self.sign_word(value, loc))
                } else {
                    None
                };
                Some(ChainIndex {
                    loc,
                    ext,
                    shift,
                    neg,
                    sign,
                })
            }
            None => None,
        };
        let planning = self.planning.is_some();
        let vb = &mut self.vb;
        let mut fresh = |k: RegKind| {
            if planning {
                VReg { index: 0, kind: k }
            } else {
                vb.new_vreg(k)
            }
        };
        let c = match (mode.wide, index) {
            (true, _) if self.opts.fold == Fold::None => plain::wide_chain(&mut fresh, base, index),
            (false, Some(index)) if self.opts.fold == Fold::None => {
                plain::narrow_chain(&mut fresh, base, index)
            }
            (true, _) => wide_chain(&mut fresh, base, index, disp, plg),
            (false, Some(index)) => narrow_chain(&mut fresh, base, index, disp, plg),
            (false, None) => {
                return Err(LowerError::Internal(
                    "a 32-bit chain without an index".into(),
                ))
            }
        };
        let out = (c.addr, c.plg);
        let mut inst = c.inst;
        if self.opts.explain && !planning {
            inst.note = Some(super::explain::chain_expr(self.f, &mode, disp, sp_base).into());
        }
        self.push(inst);
        if !planning {
            if let Some(h) = here {
                self.chains.entry(key).or_default().push((h, out.0, out.1));
            }
            self.stats.chains_formed += 1;
        }
        Ok(out)
    }

    /// `base + disp` with its Plg (shared with earlier accesses of this block).
    fn plg_step(&mut self, base: VReg, disp: i64, wide: bool) -> Result<(VReg, VReg), LowerError> {
        let key = (base, disp);
        let here = self.cur_ir;
        if self.planning.is_none() {
            if let Some(&(b, r, p)) = self.plg_steps.get(&key) {
                if Some(b) == here {
                    self.stats.chains_shared += 1;
                    return Ok((r, p));
                }
            }
        }
        let planning = self.planning.is_some();
        let vb = &mut self.vb;
        let mut fresh = |k: RegKind| {
            if planning {
                VReg { index: 0, kind: k }
            } else {
                vb.new_vreg(k)
            }
        };
        let c = plg_step(
            &mut fresh,
            Loc {
                vreg: base,
                offset: 0,
            },
            disp,
            wide,
        );
        let out = (c.addr, c.plg.unwrap_or(c.addr));
        self.push(c.inst);
        if !planning {
            if let Some(h) = here {
                self.plg_steps.insert(key, (h, out.0, out.1));
            }
        }
        Ok(out)
    }

    /// The sign word of the i32 `v` (in `loc`): `SHR s, v, 0x1f`, built once and reused in
    /// this block and the blocks it dominates, like chains.
    /// For the base `v` of a 64-bit chain (`--fold=full`): `(x, ext)` when `v` is an i32 `x`
    /// zero-extended, or sign-extended and used by nothing but addresses. The chain then reads
    /// `x` and `RZ` or its sign word as the base's two words, so `v` need not be built as a
    /// pair: a `MOV` saved, and for a sign extension the `SHR` is the shared sign word, as an
    /// index's. A zero-extended `v` that something else needs as a pair costs nothing more
    /// (`x` is in a register to build it anyway); a sign-extended one would cost a second
    /// `SHR`, so it stays a pair. Decided from the IR alone, so planning and emission agree.
    fn split_base(&self, v: Value, wide: bool) -> Option<(Value, Ext)> {
        if !wide || self.opts.fold != Fold::Full {
            return None;
        }
        let ValueDef::Result(def, _) = self.f.values[v].def else {
            return None;
        };
        match self.f.insts[def].data {
            InstData::Convert { op, arg, .. } if self.f.value_type(arg) == Type::I32 => match op {
                ConvOp::Sext if !self.non_address_use[v.index()] => Some((arg, Ext::Sext)),
                ConvOp::Zext => Some((arg, Ext::Zext)),
                _ => None,
            },
            _ => None,
        }
    }

    fn sign_word(&mut self, v: Value, loc: Loc) -> Loc {
        let here = self.cur_ir;
        if self.planning.is_none() {
            let doms = &self.doms;
            let found = self.signs.get(&v).and_then(|list| {
                list.iter()
                    .rev()
                    .find(|(b, _)| here.is_some_and(|h| doms.dominates(*b, h)))
            });
            if let Some(&(_, l)) = found {
                return l;
            }
        }
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let a = i.use_(loc.vreg);
        let shr = sm50::Inst::new(Form::SHR_I)
            .with(Field::Sgn, 1)
            .with(Field::ImmImm20s, 0x1f);
        i.piece(shr, &[(Field::Rd, dop, 0), (Field::Ra, a, loc.offset)]);
        self.push(i);
        let out = Loc { vreg: d, offset: 0 };
        if self.planning.is_none() {
            if let Some(h) = here {
                self.signs.entry(v).or_default().push((h, out));
            }
        }
        out
    }

    /// `base + R1`: a `.local` offset in a register made into an address.
    fn add_sp(&mut self, base: Loc) -> Loc {
        let d = self.new_vreg(RegKind::B32);
        let mut i = Sm50Inst::new(Role::Plain);
        let dop = i.def(d, false);
        let b = i.use_(base.vreg);
        let sp = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
        i.piece(
            sm50::Inst::new(Form::IADD_R),
            &[
                (Field::Rd, dop, 0),
                (Field::Ra, b, base.offset),
                (Field::Rb, sp, 0),
            ],
        );
        self.push(i);
        Loc { vreg: d, offset: 0 }
    }

    /// `addr + disp` in a new register (wide: `IADD32I.CC` + `IADD.X`).
    fn add_disp(&mut self, base: Option<Loc>, disp: i64, wide: bool) -> Result<Loc, LowerError> {
        if wide && i64::from(disp as i32) != disp {
            return Err(self.unsupported("a 64-bit displacement beyond 32 bits"));
        }
        let kind = if wide { RegKind::B64 } else { RegKind::B32 };
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        // Word by word, as a 64-bit IADD (see `lower_add`): a late def.
        let dop = i.def(d, false);
        let bop = base.map(|b| (i.use_(b.vreg), b.offset));
        let mut refs = vec![(Field::Rd, dop, 0)];
        if let Some((op, o)) = bop {
            refs.push((Field::Ra, op, o));
        }
        let lo = sm50::Inst::new(Form::IADD32I)
            .with(Field::Imm, disp as u64 & 0xffff_ffff)
            .with(Field::Cc, wide as u64);
        i.piece(lo, &refs);
        if wide {
            let mut refs = vec![(Field::Rd, dop, 1)];
            if let Some((op, o)) = bop {
                refs.push((Field::Ra, op, o + 1));
            }
            let hi = sm50::Inst::new(Form::IADD_I)
                .with(Field::X, 1)
                .with_signed(Field::ImmImm20s, if disp < 0 { -1 } else { 0 });
            i.piece(hi, &refs);
        }
        self.push(i);
        Ok(Loc { vreg: d, offset: 0 })
    }

    /// The memory instruction for an access, with its address operand added to `i`.
    #[allow(clippy::type_complexity)]
    fn mem_inst(
        &mut self,
        i: &mut Sm50Inst,
        space: Space,
        a: &Access,
        store: bool,
        total: u32,
    ) -> Result<(sm50::Inst, Vec<(Field, u8, u8)>), LowerError> {
        let size = size_code(total, false);
        let form = match (space, store) {
            (Space::Global, false) => Form::LDG,
            (Space::Global, true) => Form::STG,
            (Space::Generic, false) => Form::LD,
            (Space::Generic, true) => Form::ST,
            (Space::Shared, false) => Form::LDS,
            (Space::Shared, true) => Form::STS,
            (Space::Const, false) => Form::LDC,
            (Space::Local, false) => Form::LDL,
            (Space::Local, true) => Form::STL,
            (s, _) => {
                return Err(self.unsupported(format!("memory access to the .{} space", s.name())))
            }
        };
        if form == Form::LDC && total > 8 {
            return Err(self.unsupported("a 128-bit ld.const"));
        }
        let mut inst = sm50::Inst::new(form)
            .with(Field::Size, size)
            .with_signed(Field::Off, a.disp);
        if matches!(form, Form::LDG | Form::STG | Form::LD | Form::ST) {
            inst.set(Field::E, a.wide as u64);
        }
        if form == Form::LDS {
            inst.set(Field::U, 1);
        }
        if form == Form::LDC {
            inst.set(Field::Bank, 3);
        }
        let mut refs = Vec::new();
        if let Some(l) = a.addr {
            let op = i.use_(l.vreg);
            refs.push((Field::Ra, op, l.offset));
        } else if a.sp {
            let op = i.op(Reg::Phys(PhysReg::SP), OpSpec::use_());
            refs.push((Field::Ra, op, 0));
        }
        if let Some(p) = a.pred {
            let op = i.use_(p);
            refs.push((Field::P, op, 0));
        }
        // The caller adds the data register and makes the piece.
        Ok((inst, refs))
    }
}

/// A matched and built address, ready for the memory instruction.
#[derive(Clone, Debug)]
struct Access {
    /// The address register is R1 itself (a `.local` access with no register of its own).
    sp: bool,
    addr: Option<Loc>,
    pred: Option<VReg>,
    disp: i64,
    wide: bool,
}

/// The 64-bit shared-window test as two pieces of `i`: `LEA RZ.CC, a.lo, RZ` then
/// `LEA.HI.X P, RZ, a.lo, RZ, a.hi`, whose `Plg` (operand `pop`) is true exactly outside
/// the window. `aop` is the address pair's operand, `o` its first word.
pub(super) fn window_test_pieces(i: &mut Sm50Inst, aop: u8, o: u8, pop: u8) {
    let lo = sm50::Inst::new(Form::LEA_R).with(Field::Cc, 1);
    i.piece(lo, &[(Field::Ra, aop, o)]);
    let hi = sm50::Inst::new(Form::LEA_HI_R).with(Field::X, 1);
    i.piece(
        hi,
        &[
            (Field::Ra, aop, o),
            (Field::Rc, aop, o + 1),
            (Field::Plg, pop, 0),
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn functions(src: &str) -> Vec<Function> {
        let file = crate::error::SourceFile::new("t.ptx", src);
        let (ast, _) = crate::ptx::parse_and_check(&file).expect("parses");
        crate::ir::build(&ast, &file).expect("builds").functions
    }

    /// Whether every reachable block of `order` comes after its immediate dominator.
    fn dominators_first(order: &[Block], doms: &ir::Dominators) -> bool {
        order.iter().enumerate().all(|(k, &b)| match doms.idom(b) {
            Some(d) => order[..k].contains(&d),
            None => true,
        })
    }

    /// The properties `Lowerer::run` relies on, over generated kernels (whose loops and
    /// conditional blocks `ptxgen` lays out in every order) and the issue's reproducer: the
    /// order is a permutation of the layout, every block comes after its immediate dominator,
    /// and where the layout already has that property the order *is* the layout (so the
    /// output of well-laid-out code does not change).
    #[test]
    fn lowering_order_puts_dominators_first_and_keeps_valid_layouts() {
        let repro = ".version 7.0\n.target sm_50\n.address_size 64\n\
            .visible .entry k(.param .u64 out, .param .u32 n)\n{\n\
            .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<2>;\n\
            ld.param.u64 %rd1, [out];\nld.param.u32 %r1, [n];\nmov.u32 %r4, 0;\n\
            setp.gt.s32 %p1, %r1, 0;\n@%p1 bra L_HEAD;\nbra.uni L_EXIT;\n\
            L_BODY:\nst.global.u32 [%rd1+4], %r4;\n\
            L_HEAD:\nadd.s32 %r4, %r4, 1;\nsetp.lt.s32 %p1, %r4, %r1;\n@%p1 bra L_BODY;\n\
            L_EXIT:\nret;\n}\n";
        let mut sources = vec![repro.to_string()];
        for seed in 0..200 {
            let k = crate::ptxgen::generate(&mut crate::ptxgen::Source::from_seed(seed));
            sources.push(k.ptx);
        }
        let (mut reordered, mut kept) = (0, 0);
        for src in &sources {
            for f in functions(src) {
                let doms = ir::Dominators::of(&f);
                let order = lowering_order(&f, &doms);
                let mut sorted = order.clone();
                sorted.sort();
                let mut layout = f.layout.clone();
                layout.sort();
                assert_eq!(sorted, layout, "a permutation of the layout");
                assert!(dominators_first(&order, &doms), "{src}");
                if dominators_first(&f.layout, &doms) {
                    assert_eq!(order, f.layout, "{src}");
                    kept += 1;
                } else {
                    reordered += 1;
                }
            }
        }
        // Both cases occur (the generator lays out bodies before headers).
        assert!(
            reordered > 0 && kept > 0,
            "{reordered} reordered, {kept} kept"
        );
    }
}
