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
//! (`select/float.rs`). The IR
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
//!
//! # Files of this module
//!
//! - `sync.rs`: Selection of barriers with a reduction (`bar.red`) and barriers with register
//!   operands (`barrier`/`bar.sync` with a register id or thread count).
//! - `values.rs`: Selection of value-producing instructions that are neither integer arithmetic
//!   nor memory.
//! - `int.rs`: Selection of integer arithmetic.
//! - `mem.rs`: Selection of memory accesses.
//! - `consts.rs`: Where an immediate already in a register may serve another use (one
//!   `MOV32I` for the uses it dominates within a loop and a short window).

mod int;
mod mem;
mod sync;
mod values;
pub(super) use mem::*;
mod approx;
mod atomic;
mod bits;
mod bytesel;
mod cache;
mod call;
mod div;
mod fdiv;
mod half;
pub(crate) use call::{OUTLINED_CAL, STACK_ARG_LOAD_BASE, SUB_CAL_BASE};
pub(crate) use fdiv::{
    ddiv_slow_path, drcp_slow_path, dsqrt_slow_path, fdiv_slow_path, frcp_slow_path,
    fsqrt_slow_path, CAL_DDIV, CAL_DRCP, CAL_DSQRT, CAL_FDIV, CAL_FRCP, CAL_FSQRT,
};
mod mul;
mod prefetch;
pub(crate) mod stack;
mod surface;
mod tex;
mod txq_table;
mod warp;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

mod consts;
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
    /// A word in a constant bank (0: the driver's words and the parameters; 3: the `.const`
    /// variables), by bank and byte offset (the high word of a pair at +4).
    Cbuf(u8, u32),
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
    /// A word in a constant bank: (bank, byte offset), as [`Src::Cbuf`].
    Cbuf(u8, u32),
}

/// Key of a chain shared by several accesses (of one block, or of blocks its block
/// dominates).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ChainKey {
    mode: AddrMode,
    plg: bool,
    sp: bool,
}

/// A register holding an immediate (`Lowerer::imm_regs`): the IR block that wrote it, the
/// register, and the `Lowerer::clock` at the write.
type ImmReg = (Block, Loc, u32);

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
    /// By value number: whether an instruction outside the value's own block reads it (a
    /// predicate that later blocks test again: `Lowerer::select_by_mask` leaves those).
    read_elsewhere: Vec<bool>,
    /// Each IR instruction's position in its block (by `Inst` index), constants not counted
    /// (they are operands, not code): how far apart a compare and the select reading it are
    /// (`Lowerer::select_by_icmp`).
    inst_pos: Vec<u32>,
    /// By value number: whether a jump or branch passes the value to a block parameter (a
    /// copy into the parameter's register; `select::consts` leaves such constants unshared).
    block_arg: Vec<bool>,
    /// How many of those reads are sign extensions (`Convert { op: Sext }`): a narrow load
    /// read only by them is loaded signed ([`Lowerer::signed_load`]).
    sext_count: Vec<u32>,
    /// Chains built so far, with the IR block each was built in: an access reuses one built in
    /// a block that dominates its own (see [`Lowerer::chain`]).
    chains: HashMap<ChainKey, Vec<(Block, VReg, Option<VReg>)>>,
    /// Sign words (`SHR s, i, 0x1f`) of sign-extended chain indices, with their blocks.
    signs: Reuse<Value, Loc>,
    /// How many chains (counted while planning) use each sign-extended index: over the
    /// whole function (block `None`) with `--fold=full`, per block with `--fold=block`.
    sext_chains: HashMap<(Value, Option<Block>), u32>,
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
    /// A predicate the compare being lowered accumulates into (`ISETP/FSETP/DSETP.<cc>.<bop>
    /// p, PT, a, b, acc`): the operation's `bop` code and the other predicate's register, set
    /// by [`Lowerer::lower_pred_logic`] and taken by the compare's plain form.
    pending_acc: Option<(u64, Loc)>,
    /// Byte offsets of `.shared` and `.const` variables in their spaces.
    var_offsets: Vec<u32>,
    /// `brif`s whose condition is warp-uniform (no `SSY` needed).
    uniform: HashSet<Inst>,
    /// While lowering a `.B` texture instruction whose handle may differ within a quad:
    /// [`Lowerer::push`] wraps its fetch in the per-quad split (`tex::handle_split`).
    split_handles: bool,
    /// The values that may differ between lanes, loads at uniform addresses uniform
    /// (`reconverge::divergent_values`), computed at the first `.B` texture instruction.
    tex_divergent: Option<super::reconverge::DenseSet>,
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
    /// The relocated descriptor sizes loaded so far (`txq`/`suq` table loads), with their
    /// blocks: a query reuses one loaded in a block that dominates its own
    /// ([`Lowerer::desc_size`]).
    desc_sizes: Reuse<crate::lower::inst::RelocWord, VReg>,
    /// BFE/BFI control words built from registers (`BFI ctl, len, 0x808, pos`), by
    /// `(pos, len)`, with their blocks: a bit-field operation reuses one built in a block that
    /// dominates its own ([`Lowerer::bit_control`]).
    bit_ctls: Reuse<(Value, Value), VReg>,
    /// `ISET` masks of 32-bit compares (`Lowerer::select_by_mask`), by condition and sense,
    /// with their blocks: selects in the same block share one.
    masks: Reuse<(Value, bool), VReg>,
    /// With `LowerOptions::remat_cbuf`: the register each constant-bank value was last read
    /// into, with the block of that read (reused only within that block).
    cbuf_copies: HashMap<Value, (BlockId, Loc)>,
    /// Calls that share one set of argument copies, by the IR block whose end makes them
    /// (`call::shared_arg_calls`), and the copies made so far, by call.
    shared_groups: HashMap<Block, Vec<Vec<Inst>>>,
    shared_copies: HashMap<Inst, Vec<(VReg, u8)>>,
    /// Immediates written into registers (`MOV32I`), by register kind and bits, with the IR
    /// block of each: a later use of the same constant reads one written in a block that
    /// may serve it ([`consts::LoopRegions::may_serve`]) instead of writing another.
    /// Each with the [`Lowerer::clock`] when it was written ([`consts::SHARE_WINDOW`]).
    imm_regs: HashMap<(RegKind, u64), Vec<ImmReg>>,
    /// How many IR instructions have been lowered so far (outside planning): the distance
    /// between two uses of a shared immediate.
    clock: u32,
    /// The loop structure `imm_regs` is shared within, computed at the first sharing.
    loop_regions: Option<consts::LoopRegions>,
}

/// Values built once and reused wherever the block they were built in dominates the use
/// (sign words, bit-field control words): by key, each value built with its IR block.
struct Reuse<K, T>(HashMap<K, Vec<(Block, T)>>);

impl<K, T> Default for Reuse<K, T> {
    fn default() -> Self {
        Reuse(HashMap::default())
    }
}

impl<K: std::hash::Hash + Eq, T: Copy> Reuse<K, T> {
    /// The latest value built for `key` in a block that dominates `here` (`div::built`).
    fn find(&self, key: &K, here: Option<Block>, doms: &ir::Dominators) -> Option<T> {
        div::built(doms, here, false, self.0.get(key), |&(b, _)| b).map(|(_, t)| t)
    }

    /// The latest `t` built for `key` in `here` itself.
    fn find_in_block(&self, key: &K, here: Option<Block>) -> Option<T> {
        let h = here?;
        self.0
            .get(key)?
            .iter()
            .rev()
            .find(|e| e.0 == h)
            .map(|e| e.1)
    }

    /// Records `t`, built for `key` in `here`.
    fn record(&mut self, key: K, here: Option<Block>, t: T) {
        if let Some(h) = here {
            self.0.entry(key).or_default().push((h, t));
        }
    }
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

/// Whether an instruction of this kind is address arithmetic that a chain can fold (its
/// result then needs no register of its own where only addresses read it).
fn foldable(d: &InstData) -> bool {
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
}

/// By value number: how many operand slots of `f` read each value, and whether an
/// instruction outside the value's own block reads it (`Lowerer::use_count`,
/// `Lowerer::read_elsewhere`), in one pass over the instructions.
fn reads(f: &Function) -> (Vec<u32>, Vec<bool>) {
    let mut count = vec![0u32; f.values.len()];
    let mut elsewhere = vec![false; f.values.len()];
    for node in f.insts.values() {
        for part in node.data.operand_parts() {
            for &v in part {
                count[v.index()] += 1;
                if let ValueDef::Result(d, _) = f.values[v].def {
                    elsewhere[v.index()] |= f.insts[d].block != node.block;
                }
            }
        }
    }
    (count, elsewhere)
}

/// The values that have a use outside address arithmetic: not as the address of a load or
/// store, and not as an operand of an add/sub/shift/multiply/extension/`cvta.global` whose own
/// result is used only in address arithmetic. Such values are in a register anyway, so an
/// address can use them as they are; the others are folded into chains.
/// The result is a flag per value number (dense tables: these are read for every operand).
fn non_address_uses(f: &Function) -> Vec<bool> {
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
        let (use_count, read_elsewhere) = reads(f);
        // `.const` variables are laid out in `vars_in_layout_order` at their alignment,
        // exactly as `ir::eval` does (its const region also holds param/generic-space
        // variables); `.shared` and `.local` ones per kernel, by `shared_layout` and
        // `local_layout`.
        let mut var_offsets = vec![0; module.vars.len()];
        for (gv, off) in module.shared_layout(f).offsets {
            var_offsets[gv.as_u32() as usize] = off;
        }
        for (gv, off) in module.local_layout(f).0 {
            var_offsets[gv.as_u32() as usize] = off;
        }
        for (gv, off) in module.const_offsets() {
            var_offsets[gv.as_u32() as usize] = off;
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
            use_count,
            read_elsewhere,
            inst_pos: {
                let mut pos = vec![0; f.insts.len()];
                for &b in &f.layout {
                    let mut k = 0;
                    for &i in &f.blocks[b].insts {
                        pos[i.index()] = k;
                        if !matches!(
                            f.insts[i].data,
                            InstData::Iconst { .. } | InstData::Fconst { .. }
                        ) {
                            k += 1;
                        }
                    }
                }
                pos
            },
            block_arg: {
                let mut a = vec![false; f.values.len()];
                for node in f.insts.values() {
                    let dests: &[&ir::BlockCall] = match &node.data {
                        InstData::Jump { dest } => &[dest],
                        InstData::Brif {
                            then_dest,
                            else_dest,
                            ..
                        } => &[then_dest, else_dest],
                        _ => &[],
                    };
                    for d in dests {
                        for &v in &d.args {
                            a[v.index()] = true;
                        }
                    }
                }
                a
            },
            sext_count: {
                let mut n = vec![0u32; f.values.len()];
                for node in f.insts.values() {
                    if let InstData::Convert {
                        op: ConvOp::Sext,
                        arg,
                        ..
                    } = node.data
                    {
                        n[arg.index()] += 1;
                    }
                }
                n
            },
            chains: HashMap::default(),
            signs: Reuse::default(),
            sext_chains: HashMap::default(),
            plg_steps: HashMap::default(),
            doms: ir::Dominators::of(f),
            carry_chains: Vec::new(),
            carry_of: HashMap::default(),
            carry_done: HashMap::default(),
            cur_ir: None,
            pending_acc: None,
            var_offsets,
            uniform: super::reconverge::uniform_branches(f),
            split_handles: false,
            tex_divergent: None,
            stats: FoldStats::default(),
            lits: Vec::new(),
            lit_offsets: HashMap::default(),
            div_share: div::DivShare::of(f),
            fdiv_floor: 0,
            sub_args: Vec::new(),
            desc_sizes: Reuse::default(),
            bit_ctls: Reuse::default(),
            masks: Reuse::default(),
            cbuf_copies: HashMap::default(),
            shared_groups: HashMap::default(),
            shared_copies: HashMap::default(),
            imm_regs: HashMap::default(),
            clock: 0,
            loop_regions: None,
        }
    }

    /// Global and shared accesses that read one address root at different displacements
    /// (`[p]`, `[p+128]`, ...) from blocks none of which dominates the others (NVVM's
    /// `if (ok) st [p+128k]` unrolled: every store in a block of its own) cannot share a
    /// chain ([`Lowerer::chain`] shares along dominance only), so each block rebuilt the
    /// whole address: `SHR`/`LEA`/`LEA.HI.X` per 64-bit access, predicated once the blocks
    /// are if-converted (CUB's scan kernels: 23 such stores in a row). Such a root is
    /// flagged as a value in a register: it is computed once where the IR defines it, and
    /// every access reads it with its displacement in the instruction, as ptxas does.
    /// The cost is one register (a pair) live from the definition to the last access.
    /// Generic accesses keep their chains (their `Plg` comes from the chain), and roots
    /// that are not folded arithmetic are in registers anyway.
    fn flag_roots_of_scattered_accesses(&mut self) {
        if self.opts.fold != Fold::Full {
            return;
        }
        let mut blocks_of: HashMap<Value, SmallVec<[Block; 4]>> = HashMap::default();
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                let (space, addr) = match &self.f.insts[i].data {
                    InstData::Load { space, addr, .. } | InstData::Store { space, addr, .. } => {
                        (*space, *addr)
                    }
                    _ => continue,
                };
                if !matches!(space, Space::Global | Space::Shared) {
                    continue;
                }
                let wide = space == Space::Global && self.ty(addr) == Type::I64;
                let konst = |v: Value| self.known_constant(v);
                let Some(root) = super::amode::address_root(self.f, addr, wide, &konst) else {
                    continue;
                };
                let folded = self.def_of(root).is_some_and(foldable);
                if !folded || self.non_address_use[root.index()] {
                    continue;
                }
                let list = blocks_of.entry(root).or_default();
                if !list.contains(&b) {
                    list.push(b);
                }
            }
        }
        for (root, list) in blocks_of {
            let dominated = list
                .iter()
                .any(|&d| list.iter().all(|&b| self.doms.dominates(d, b)));
            if list.len() > 1 && !dominated {
                self.non_address_use[root.index()] = true;
            }
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
        self.flag_roots_of_scattered_accesses();
        let needed = self.demand()?;
        self.shared_groups = call::shared_arg_calls(self.f, &self.doms);
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
                    if self.f.insts[i].data.is_terminator() {
                        self.share_arg_copies(b)?;
                    }
                    self.lower_inst(i)?;
                    self.clock += 1;
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
            store_motion: false,
        })
    }

    /// The instructions to lower (a flag per instruction number): roots and everything a
    /// lowered instruction demands.
    fn demand(&mut self) -> Result<Vec<bool>, LowerError> {
        let mut needed = vec![false; self.f.insts.len()];
        let mut work = Vec::new();
        // The block of each instruction: planning counts some sharing per block (sign words
        // with `--fold=block`), so `cur_ir` names the planned instruction's block.
        let mut block_of = vec![None; self.f.insts.len()];
        for &b in &self.f.layout {
            for &i in &self.f.blocks[b].insts {
                block_of[i.index()] = Some(b);
                let d = &self.f.insts[i].data;
                // A `.const` word at a constant address is an operand, not an access
                // (`const_bank_word`): lowered only where a register holding it is demanded.
                let operand = self.const_bank_word(d).is_some();
                let root = d.is_terminator()
                    || !operand
                        && matches!(
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
            self.cur_ir = block_of[i.index()];
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
        self.cur_ir = None;
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
            let inst = if self.split_handles && tex::handle_split::has_bindless_fetch(&inst) {
                let scratch = self.new_vreg(RegKind::B32);
                tex::handle_split::split_per_quad(inst, scratch)
            } else {
                inst
            };
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
        if let Some(loc) = self.cbuf_copy(v) {
            return Ok(loc);
        }
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

    /// With `LowerOptions::remat_cbuf`, a constant-bank value (`Class::Cbuf`: a parameter,
    /// a `.const` word, `%ntid`..) wanted in a register: a `MOV` from the bank in the current
    /// block, made at the block's first such use and reused by its later ones; its
    /// definition is not demanded. `None` for every other value. The bank does not change
    /// while the kernel runs, so the read may be anywhere. Trade-off: a `MOV` per block
    /// that uses the value (inside a loop, one per iteration) for a register that no longer
    /// lives from the kernel's entry across every block between (Mandelbrot's five f64
    /// parameters held ten registers through its loops: 40 registers and 48 warps where
    /// ptxas has 29 and 64). Hence only on the driver's retry for warps.
    fn cbuf_copy(&mut self, v: Value) -> Option<Loc> {
        if !self.opts.remat_cbuf || self.f.subroutine {
            return None;
        }
        let Class::Cbuf(bank, offset) = self.class(v) else {
            return None;
        };
        let kind = kind_of(self.ty(v));
        if !matches!(kind, RegKind::B32 | RegKind::B64) {
            return None;
        }
        if self.planning.is_some() {
            return Some(Loc {
                vreg: VReg { index: 0, kind },
                offset: 0,
            });
        }
        if let Some(&(block, loc)) = self.cbuf_copies.get(&v) {
            if block == self.cur {
                return Some(loc);
            }
        }
        let d = self.new_vreg(kind);
        let mut i = Sm50Inst::new(Role::Plain);
        values::bank_read(&mut i, d, bank, offset);
        self.push(i);
        let loc = Loc { vreg: d, offset: 0 };
        self.cbuf_copies.insert(v, (self.cur, loc));
        Some(loc)
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

    /// Whether the `.shared` variable `var`'s address is the linker's
    /// (`LowerOptions::shared_relocs`).
    pub(super) fn linker_shared(&self, var: crate::ir::GlobalVar) -> bool {
        let size = self.module.vars.get(var).map_or(1, |d| d.size);
        self.opts.shared_relocs.relocates(size)
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
            InstData::LoadParam { offset, .. } => Class::Cbuf(0, 0x140 + offset),
            InstData::SpecialReg { reg } => match reg {
                SpecialReg::Ntid(d) => Class::Cbuf(0, 0x8 + 4 * d.index() as u32),
                SpecialReg::Nctaid(d) => Class::Cbuf(0, 0x14 + 4 * d.index() as u32),
                SpecialReg::GridId => Class::Cbuf(0, 0x28),
                SpecialReg::NWarpId => Class::Imm(64),
                // Where ptxas reads them: the driver's words in bank 0.
                SpecialReg::DynamicSmemSize => Class::Cbuf(0, 0xfc),
                SpecialReg::EnvReg(n) => Class::Cbuf(0, 0x30 + 4 * u32::from(*n)),
                _ => Class::Reg,
            },
            InstData::SymbolAddr { var, .. } => {
                match self.module.vars.get(*var).map(|vd| vd.space) {
                    // Known only to the linker (`LowerOptions::shared_relocs`).
                    Some(Space::Shared) if self.linker_shared(*var) => Class::Reg,
                    Some(Space::Shared | Space::Const) => {
                        Class::Imm(i64::from(self.var_offsets[var.as_u32() as usize]))
                    }
                    // A `.local` variable's address as a value is absolute, `R1 + offset`
                    // (`materialize`); accesses fold its offset as a displacement off R1
                    // (`frame_offset`).
                    Some(Space::Local) => Class::Reg,
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
            InstData::Load { .. } => match self.const_bank_word(d) {
                Some(o) => Class::Cbuf(3, o),
                None => Class::Reg,
            },
            _ => Class::Reg,
        }
    }

    /// The byte offset in constant bank 3 of the word (or pair) that `d` reads, where `d` is a
    /// scalar 32- or 64-bit load of a `.const` variable at a constant address: its value is
    /// then an operand `c[0x3][o]` wherever a form takes a constant-bank operand (as ptxas
    /// reads `__constant__` coefficients: `FFMA R0, R2, c[0x3][0x40], R0`), and an `LDC`
    /// (a `MOV` from the bank) only where a register is needed. The bank does not change while
    /// the kernel runs, so the read can move to each use. Trade-off: a word read at several
    /// uses is read from the constant cache at each, where an `LDC` read it once into a
    /// register that lived across all of them (convolutionSeparable's 17 coefficients held
    /// 17 registers through the unrolled loop: 38 registers, 48 warps, where ptxas has 30).
    fn const_bank_word(&self, d: &InstData) -> Option<u32> {
        let InstData::Load {
            space: Space::Const,
            ty,
            width: 1,
            addr,
            offset,
            ..
        } = *d
        else {
            return None;
        };
        if !matches!(ty, Type::I32 | Type::F32 | Type::I64 | Type::F64) {
            return None;
        }
        let Some(InstData::SymbolAddr { var, .. }) = self.def_of(addr) else {
            return None;
        };
        if self.module.vars.get(*var).map(|vd| vd.space) != Some(Space::Const) {
            return None;
        }
        let at = self.known_constant(addr)? + i64::from(offset);
        let bytes = i64::from(ty.bits() / 8);
        // The word index is 14 bits (the bank's 64 KiB); the pair's high word at +4.
        (at >= 0 && at % bytes == 0 && at + bytes <= BANK_BYTES as i64).then_some(at as u32)
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

    /// The offset in the frame of a `.local` variable whose address `v` is: `v` is
    /// `R1 + offset` (`lower_local_address`), so an access folds it as R1 and a displacement
    /// (`amode::Facts::frame`).
    fn frame_offset(&self, v: Value) -> Option<i64> {
        match self.def_of(v)? {
            InstData::SymbolAddr { var, .. }
                if self.module.vars.get(*var).map(|vd| vd.space) == Some(Space::Local) =>
            {
                Some(i64::from(self.var_offsets[var.as_u32() as usize]))
            }
            _ => None,
        }
    }

    /// `v` as a source operand; a register only when it is not a constant or a parameter.
    fn src(&mut self, v: Value) -> Result<Src, LowerError> {
        Ok(match self.class(v) {
            Class::Imm(k) => Src::Imm(k),
            Class::Cbuf(b, o) => Src::Cbuf(b, o),
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
            Src::Cbuf(..) | Src::Lit(_) => {
                let l = self.reg(v)?;
                Ok(Src::Reg(self.extend_narrow(l, ty, signed, None)?))
            }
        }
    }

    /// [`Lowerer::norm32`] for the B operand of an instruction with no 32-bit-immediate form
    /// (`ISETP`, `ISET`, `IMNMX`): a 32-bit constant that is no imm20 is read from the
    /// literal pool, `c[0x2][off]`, as ptxas 11.8 does (1,400 such `ISETP`s in its code for
    /// corpus-nvcc, none with a `MOV32I`). Trade-off: a constant-bank read (no slower than a
    /// register operand on Maxwell, but it cannot dual-issue with another constant read)
    /// for the `MOV32I` and the register that would hold the constant wherever it is live;
    /// a constant other instructions also read in a register keeps its `MOV32I` for them.
    fn norm32_b(&mut self, v: Value, signed: bool) -> Result<Src, LowerError> {
        if self.ty(v).bits() == 32 {
            if let Class::Imm(k) = self.class(v) {
                return self.imm32(k as u32);
            }
        }
        self.norm32(v, signed)
    }

    /// A 32-bit constant (its bits) as a B operand: the sign-extended imm20 where it fits
    /// (`0xfffffff0` is `-0x10`), else read from the literal pool, `c[0x2][off]`.
    fn imm32(&mut self, bits: u32) -> Result<Src, LowerError> {
        let w = i64::from(bits as i32);
        Ok(if fits_imm20(w) {
            Src::Imm(w)
        } else {
            Src::Lit(self.literal(u64::from(bits), 4)?)
        })
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
                .with(Field::Op, sm50::values::lop32i::op::AND)
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
            Src::Cbuf(b, o) => sm50::Inst::new(forms.1)
                .with(Field::Cbk, u64::from(b))
                .with(Field::Cbo, u64::from(o / 4 + word as u32)),
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

    // Long by design: the dispatch over `InstData`, one short arm per IR instruction kind.
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
            // A constant-bank operand; in a register only where one is demanded.
            InstData::Load { .. } if self.const_bank_word(&node.data).is_some() => {
                self.materialize(results[0])
            }
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
                        .with(Field::Mode, sm50::values::bpt::mode::TRAP)
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
            } => self.lower_extern_call(inst, results, callee, args, arg_regs),
            InstData::SubReturn { ref values } => self.lower_sub_return(values),
            InstData::Collective { op, .. } => Err(LowerError::Internal(format!(
                "{} reached selection (ir::collective::expand replaces it first)",
                op.name()
            ))),
        }
    }

    fn block_args(&mut self, args: &[Value]) -> Result<Vec<VReg>, LowerError> {
        args.iter().map(|&a| self.whole(a)).collect()
    }

    fn terminate(&mut self, inst: Sm50Inst, succs: Vec<(BlockId, Vec<VReg>)>) {
        if self.planning.is_none() {
            self.vb.terminate(self.cur, inst, succs);
        }
    }
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
    /// conditional blocks `ptxgen` lays out in every order) and the reproducer: the
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
