//! The SSA intermediate representation between the checked PTX AST and instruction selection.
//!
//! In: a later `ir::build(&ast::Module)` (not written yet) or tests, through [`FunctionBuilder`].
//! Out: a [`Module`] of kernel [`Function`]s that [`verify`] accepts, that prints
//! deterministically ([`std::fmt::Display`]), and that [`eval`] can run as a reference.
//!
//! # Shape
//!
//! Entities come from `cranelift-entity`: [`Value`], [`Inst`], [`Block`] and [`GlobalVar`]
//! (a module variable). A function owns its values, instructions and blocks; blocks are kept in
//! layout order in `Function::layout`, the first one is the entry. SSA merges use *block
//! parameters* (no phi instructions): a terminator passes one argument per parameter.
//!
//! Types are [`Type::I8`] .. [`Type::I64`], [`Type::F16`] .. [`Type::F64`] and [`Type::Pred`].
//! Integers carry no signedness; every operation that cares says so itself (`shr.s` vs
//! `shr.u`, `mulhi.s` vs `mulhi.u`, `slt` vs `ult`, `sext` vs `zext`). That matches PTX, where
//! `.s32`, `.u32` and `.b32` registers are interchangeable and only the opcode decides.
//!
//! # Semantics each operation carries (PTX ISA, integer subset)
//!
//! * `add`, `sub`, `mul` (the low half, PTX `mul.lo`), `neg`: wrapping two's complement.
//! * `mulhi.s` / `mulhi.u`: the high half of the 2N-bit product (PTX `mul.hi`).
//! * `mulwide.s` / `mulwide.u`: the full 2N-bit product of two N-bit values, N = 16 or 32
//!   (PTX `mul.wide`). `mad` has no opcode: the builder expands it to `mul` + `add` (or
//!   `mulhi`/`mulwide` + `add`), which is exactly how PTX defines it.
//! * `shl`, `shr.u`, `shr.s`: the shift count is always an `i32` read as unsigned (PTX: "b is
//!   always .u32"); counts at or beyond the width are *clamped* to the width, so `shl` and
//!   `shr.u` give 0 and `shr.s` fills every bit with the sign.
//! * `and`, `or`, `xor`, `not`: bitwise; they also accept `pred` operands (PTX `and.pred`).
//! * `min.s`, `min.u`, `max.s`, `max.u`.
//! * `div.u`, `div.s`, `rem.u`, `rem.s`: quotient rounded toward zero, remainder with the
//!   dividend's sign. PTX leaves division by zero unspecified and SM50 has no divide
//!   instruction; the IR defines it as *all ones* (quotient and remainder alike), which is what
//!   ptxas 11.8's `div`/`rem` sequences produce (`LOP.PASS_B d, RZ, ~divisor` when the divisor
//!   is zero) and what `lower::div` emits. The signed overflow `MIN / -1` wraps to `MIN`
//!   (its remainder is 0), as two's complement negation of `|MIN|` does.
//! * `sext`, `zext`, `trunc`: PTX `cvt` between integers (seed 6.5.1): `chop` is `trunc`,
//!   `sext`/`zext` are themselves. A chop into a register wider than its format
//!   (`cvt.s16.u32` into a 32-bit register) is built as `trunc.i16` then `sext.i32`.
//!   `sext`/`zext` require a strictly wider result, `trunc` a strictly narrower one: a
//!   same-width `cvt` is a plain copy and the builder just reuses the value.
//! * `icmp.<cc>` compares two integers of one type and yields a `pred`; `select` picks.
//! * `load` / `store` name a state space ([`Space`]), an element type, a vector width 1, 2 or 4
//!   and an address `[v + offset]` (offset signed 32-bit, PTX `[reg+immOff]`). A vector load
//!   has *one result per element* (`v1, v2 = load.global.v2.i32 [v0]`) and a vector store one
//!   operand per element. We chose this over a vector type because PTX itself destructures
//!   vectors into brace lists of scalars, and lowering wants one `LDG.64`/`.128` anyway: it
//!   sees the whole access in one instruction without an aggregate type in the IR. The
//!   address value is `i32` or `i64` and is zero-extended or truncated to the space's address
//!   width (seed 6.4.1). The access must be naturally aligned to its total size.
//! * `param.<ty> [off]`: read a kernel parameter from the param space at a byte offset.
//! * `sreg.<ty> %tid.x` etc.: a special register ([`SpecialReg`]).
//! * `addr.<space>.<ty> @var`: the address of a module variable, an offset in its own state
//!   space (seed 6.4.1: "The address is an offset in the state space in which the variable is
//!   declared"); for `.global` variables that is a global (= generic) address.
//! * `cvta.to.<space>` / `cvta.from.<space>`: generic ↔ space-specific addresses through the
//!   windows of seed 6.4.1.1; see [`eval`] for the window model.
//! * `jump`, `brif` (on a `pred`), `ret`: terminators, with block arguments.
//! * `barrier`: PTX `bar.sync 0` without a thread count (a CTA-wide barrier).
//! * `barrier.red.{popc,and,or} id[, count], p`: a barrier that reduces the predicate `p`
//!   over the arriving threads ([`BarRedOp`]): the count (`i32`) or the vote (`pred`).
//! * `clz`, `popc`, `brev`, `bfind`, `bfe`, `bfi`, `prmt` on `i32` ([`bits`], [`BitOp`]),
//!   the scalar video instructions ([`video`]), `vabsdiff4` in the one form ptxas keeps
//!   native, `cvt.sat` from 32 bits and `mad.hi.sat.s32`; the other (SIMD) video
//!   instructions are plain arithmetic by `ir::build` (`build/video.rs`).
//! * `%lanemask_{eq,lt,le,gt,ge}`: the lane's bit, the bits below it, etc. (`i32`).
//! * `atom.<space>.<op>.<ty> [a + off], b (, c)`: atomic read-modify-write ([`atomic`]),
//!   whose result is the old value; PTX `red` is the same with the result unused.
//!   `atom.global.add.f32` is the hardware's float add; shared and generic float adds are
//!   compare-and-swap loops that start from `atom.shared.load`, an atomic read.
//! * `vote.{all,any,uni,ballot} p`: a warp vote; `v, p = shfl.{idx,up,down,bfly} a, b, c`: a
//!   warp shuffle ([`warp`]).
//!
//! # How PTX maps onto it (for `ir::build`)
//!
//! ```text
//! PTX                                   IR
//! ld.param.u64 %rd1, [A+8]              v = param.i64 [offset(A)+8]
//! mov.u32 %r1, %tid.x                   v = sreg.i32 %tid.x
//! mov.u64 %rd1, var                     v = addr.<space of var>.i64 @var
//! mov.b32 %r2, %r1                      nothing: %r2 now names %r1's value (SSA renaming)
//! add/sub/mul.lo.{s,u,b}N               add.iN / sub.iN / mul.iN
//! mul.hi.sN, mul.hi.uN                  mulhi.s.iN, mulhi.u.iN
//! mul.wide.s32 %rd, %r, %r              mulwide.s.i32 (result i64)
//! mad.lo / mad.hi / mad.wide            FunctionBuilder::mad_lo / mad_hi / mad_wide
//! shl.bN, shr.{u,b}N, shr.sN            shl.iN, shr.u.iN, shr.s.iN (count: the .u32 operand)
//! and/or/xor/not.{bN,pred}, neg.sN      and / or / xor / not / neg
//! min/max.{s,u}N                        min.s / min.u / max.s / max.u
//! cvt.u64.u32 / cvt.s64.s32             zext.i64 / sext.i64
//! cvt.u32.u64                           trunc.i32
//! cvt.s16.u32 into a .b32 register      trunc.i16, then sext.i32 (seed 6.5.1 note 1)
//! setp.lt.s32 %p, a, b                  icmp.slt.i32 (setp.<cmp>.and: icmp, then and)
//! selp.b32 d, a, b, %p                  select.i32 %p, a, b
//! ld.global.v4.u32 {a,b,c,d}, [r+16]    a, b, c, d = load.global.v4.i32 [r+16]
//! ld.global.u8 into a .u32 register     load.global.i8, then zext.i32 (.s8: sext.i32)
//! st.global.u8 [r], %r1 (.u32 reg)      trunc.i8, then store.global.i8
//! cvta.to.global.u64 / cvta.shared.u64  cvta.to.global.i64 / cvta.shared.i64
//! bra L / @%p bra L / ret, exit         jump / brif %p, L, <fall-through block> / ret
//! bar.sync 0                            barrier
//! bar.red.popc.u32 d, 1, 64, !%p        not.pred, then barrier.red.popc 1, 64, v (an i32)
//! @%p add ... (a value result)          compute, then select %p, new, old
//! @%p st ... (a side effect)            brif around it into a new block
//! ```
//!
//! # Invariants ([`verify`] checks them)
//!
//! Every use is dominated by its definition; operand types match the opcode; block arguments
//! match the target's parameters in number and type; every block ends with exactly one
//! terminator and has none before it; the entry block has no parameters.
//!
//! Beside the code, a function keeps debugging facts that no pass reads for semantics:
//! `srclocs` (the PTX line of each instruction, [`SrcLoc`]) and `value_names` (the PTX
//! register a value was first written to), both for `--explain` and the verifier's report.
//!
//! # Floating point
//!
//! Float values are integer bit carriers (`i32` for `.f32`, `i64` for `.f64`, `i16` for
//! `.f16`): the opcode names the format, so loads, stores, moves and selects of floats need
//! no bitcasts. Every float operation is one `InstData::Float { op, args }`; [`float`]
//! describes the operations and gives their exact IEEE semantics (rounding modes, `.ftz`,
//! `.sat`, canonical NaN, saturating float→integer conversion).
//!
//! ```text
//! add.rn.ftz.f32 d, a, b                fadd.rn.ftz.f32 a, b
//! fma.rn.f32 / mad.f32 (fused)          ffma.rn.f32 a, b, c
//! setp.ltu.f32 p, a, b                  fcmp.ltu.f32 a, b
//! cvt.rn.f32.s32 / cvt.rzi.s32.f32      i2f.rn.f32.s.i32 / f2i.rzi.s.i32.f32
//! cvt.rn.f16.f32 / cvt.rmi.f32.f32      f2f.rn.f16.f32 / frint.rmi.f32
//! ```
//!
//! # Simplification
//!
//! [`simplify`] folds constants and applies algebraic identities on a built function (it
//! evaluates with [`eval::pure`], the interpreter's own per-operation code), and drops the
//! pure instructions left without users. The driver runs it between `build` and lowering;
//! `verify` evaluates the function as `build` made it, so each differential run checks
//! `simplify` as well.
//!
//! Calls are inlined by the builder, so the IR has none. Anything new is a new [`InstData`]
//! variants (and new `Opcode` spellings) and nothing else in the shape has to change.

mod inst;
pub use inst::*;
mod module;
pub use module::*;
pub mod atomic;
pub mod bits;
pub mod build;
mod builder;
pub mod collective;
pub mod contract;
mod display;
pub mod eval;
pub mod float;
pub mod narrow;
pub mod simplify;
pub mod sroa;
pub mod tex;
pub mod unindex;
pub mod unroll;
pub mod unroll_runtime;
pub mod vectorize;
mod verify;
pub mod video;
pub mod warp;

pub use atomic::AtomOp;
pub use bits::{BitOp, PrmtMode};
pub use build::build;
pub use builder::FunctionBuilder;
pub use collective::{CollectiveOp, ReduxOp};
pub(crate) use verify::Dominators;
pub use verify::{verify, verify_in_module, verify_module, VerifierError};
pub use warp::{ShflMode, VoteMode};

use cranelift_entity::{entity_impl, PrimaryMap, SecondaryMap};
use smallvec::SmallVec;
use std::collections::HashMap;

/// An SSA value: an instruction result or a block parameter.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An instruction.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");

/// A basic block.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// A module-level variable (`.global`, `.shared`, `.const`, `.local` declaration).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalVar(u32);
entity_impl!(GlobalVar, "gv");

/// A value type. Integers have no signedness; operations do.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
    Pred,
}

impl Type {
    /// Width in bits (a predicate counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            Type::I8 => 8,
            Type::I16 | Type::F16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 => 64,
            Type::Pred => 1,
        }
    }

    /// Size in memory; `None` for a predicate, which has no memory form.
    pub fn bytes(self) -> Option<u32> {
        match self {
            Type::Pred => None,
            t => Some(t.bits() / 8),
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::F32 | Type::F64)
    }

    /// The integer type of twice the width (for `mulwide`), if there is one.
    pub fn double_width(self) -> Option<Type> {
        match self {
            Type::I8 => Some(Type::I16),
            Type::I16 => Some(Type::I32),
            Type::I32 => Some(Type::I64),
            _ => None,
        }
    }

    /// A mask of the value's bits inside a `u64`.
    pub fn mask(self) -> u64 {
        match self.bits() {
            64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }
}

/// The cache operator of a load or store, or `.volatile`, as the PTX wrote it.
///
/// A hint for the memory system only: `ir::eval` and the simulator read and write memory
/// alike under every operator (no caches are modelled). Selection turns it into the SASS
/// cache field as ptxas 11.8 does (the table is in `lower::select::cache`); `Volatile` also
/// keeps its place among the accesses of its space (the scheduler's rule for `.CV`/`.WT`).
/// `.ca` on a load and `.wb` on a store are PTX's defaults and become `Default`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum CacheOp {
    #[default]
    Default,
    /// `.cg`: cache in L2, not L1.
    Cg,
    /// `.cs`: streaming, likely accessed once.
    Cs,
    /// `.lu` (loads): last use.
    Lu,
    /// `.cv` (loads): do not cache, fetch again.
    Cv,
    /// `.wt` (stores): write through.
    Wt,
    /// `ld.global.nc`: the non-coherent (read-only) path, whatever cache operator follows.
    Nc,
    /// `ld.volatile` / `st.volatile`.
    Volatile,
}

impl CacheOp {
    /// The IR spelling, `""` for the default.
    pub fn name(self) -> &'static str {
        match self {
            CacheOp::Default => "",
            CacheOp::Cg => "cg",
            CacheOp::Cs => "cs",
            CacheOp::Lu => "lu",
            CacheOp::Cv => "cv",
            CacheOp::Wt => "wt",
            CacheOp::Nc => "nc",
            CacheOp::Volatile => "volatile",
        }
    }
}

/// A PTX state space.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    Param,
    Generic,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
            Space::Generic => "generic",
        }
    }
}

/// One of the three dimensions of a launch.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn index(self) -> usize {
        match self {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        }
    }
}

/// A PTX special register that the IR can read.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum SpecialReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    /// `%gridid`, 64-bit.
    GridId,
    /// `%lanemask_eq` .. `%lanemask_ge`: bit masks of lanes relative to `%laneid`.
    LaneMask(LaneMask),
    /// `%clock` (i32) and `%clock64` (i64): cycle counters. `ir::eval` cannot know cycles and
    /// reads 0; no test may compare their values.
    Clock,
    Clock64,
    /// `%smid`: the SM running the thread (bits 20..28 of SR_VIRTID, as ptxas reads it).
    /// The models have one SM: `ir::eval` reads 0, as the simulator's SR_VIRTID gives.
    SmId,
    /// `%nsmid`: how many SM ids there are (bits 20..28 of SR_VIRTCFG, as ptxas reads it).
    /// The models have one SM: 1.
    NSmId,
    /// `%dynamic_smem_size`: the launch's dynamic shared bytes (ptxas reads `c[0x0][0xfc]`,
    /// where the driver, and the simulator, put it).
    DynamicSmemSize,
    /// `%total_smem_size`: the CTA's shared bytes, static and dynamic (ptxas reads
    /// SR_SMEMSZ). The models give the static size rounded up to 16 plus the dynamic size,
    /// as the simulator lays shared memory out.
    TotalSmemSize,
    /// `%envreg0..31`: driver-provided constants (ptxas reads `c[0x0][0x30 + 4n]`). The
    /// models' driver puts 0 in every one: the simulator's bank 0 is zero there, and
    /// `ir::eval` reads 0.
    EnvReg(u8),
    /// `%globaltimer` (i64), `%globaltimer_lo`, `%globaltimer_hi`: a nanosecond timer
    /// (CS2R of SR_GLOBALTIMERLO/HI). Like `%clock`, no fixed value: `ir::eval` reports
    /// reading it as unknowable and no test may compare it.
    GlobalTimer,
    GlobalTimerLo,
    GlobalTimerHi,
    /// `%pm0..7` (i32) and `%pm0_64..%pm7_64` (i64): performance-monitor counters (CS2R of
    /// SR_PMn and SR_PM_HIn). No fixed value, as `%clock`.
    Pm(u8),
    Pm64(u8),
}

/// Which `%lanemask_*` register: the lanes equal to, below, ... the reading lane.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum LaneMask {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl LaneMask {
    pub fn name(self) -> &'static str {
        match self {
            LaneMask::Eq => "eq",
            LaneMask::Lt => "lt",
            LaneMask::Le => "le",
            LaneMask::Gt => "gt",
            LaneMask::Ge => "ge",
        }
    }

    /// The mask for lane `lane` (0..31).
    pub fn mask(self, lane: u32) -> u32 {
        let bit = 1u32 << (lane & 31);
        match self {
            LaneMask::Eq => bit,
            LaneMask::Lt => bit - 1,
            LaneMask::Le => bit | (bit - 1),
            LaneMask::Gt => !(bit | (bit - 1)),
            LaneMask::Ge => !(bit - 1),
        }
    }
}

impl SpecialReg {
    /// Whether the register's value changes with time (clocks, timers, performance
    /// counters): `ir::eval` cannot know it, and two reads are never the same value.
    pub fn is_timer(self) -> bool {
        matches!(
            self,
            SpecialReg::Clock
                | SpecialReg::Clock64
                | SpecialReg::GlobalTimer
                | SpecialReg::GlobalTimerLo
                | SpecialReg::GlobalTimerHi
                | SpecialReg::Pm(_)
                | SpecialReg::Pm64(_)
        )
    }

    /// The type PTX gives the register (`.u32` except `%gridid`, `.u64`).
    pub fn ty(self) -> Type {
        match self {
            SpecialReg::GridId
            | SpecialReg::Clock64
            | SpecialReg::GlobalTimer
            | SpecialReg::Pm64(_) => Type::I64,
            _ => Type::I32,
        }
    }
}

/// Binary operations whose result has the type of the first operand.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    /// The low half of the product (PTX `mul.lo`).
    Mul,
    MulHiS,
    MulHiU,
    /// The count (second operand) is `i32`; counts ≥ width clamp.
    Shl,
    ShrU,
    ShrS,
    And,
    Or,
    Xor,
    MinS,
    MinU,
    MaxS,
    MaxU,
    /// Unsigned quotient, rounded toward zero. By zero: all ones (see the essay).
    DivU,
    /// Signed quotient, rounded toward zero; `MIN / -1` wraps to `MIN`. By zero: all ones.
    DivS,
    /// Unsigned remainder. By zero: all ones.
    RemU,
    /// Signed remainder, the sign of the dividend; `MIN % -1` is 0. By zero: all ones.
    RemS,
    /// Signed sum and difference clamped to the type's range (PTX `add.sat.s32`,
    /// `sub.sat.s32`; SASS `IADD.SAT`).
    AddSatS,
    SubSatS,
}

impl BinaryOp {
    pub fn is_shift(self) -> bool {
        matches!(self, BinaryOp::Shl | BinaryOp::ShrU | BinaryOp::ShrS)
    }

    /// Bitwise operations are also defined on predicates.
    pub fn is_bitwise(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor)
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    /// Bitwise not (also on predicates).
    Not,
    /// Two's complement negation.
    Neg,
}

/// Integer conversions (PTX `cvt` between integer types, seed 6.5.1).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ConvOp {
    Sext,
    Zext,
    /// PTX "chop": keep the low bits.
    Trunc,
}

/// Integer comparison conditions.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum IntCC {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

impl IntCC {
    /// The condition with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> IntCC {
        match self {
            IntCC::Slt => IntCC::Sgt,
            IntCC::Sle => IntCC::Sge,
            IntCC::Sgt => IntCC::Slt,
            IntCC::Sge => IntCC::Sle,
            IntCC::Ult => IntCC::Ugt,
            IntCC::Ule => IntCC::Uge,
            IntCC::Ugt => IntCC::Ult,
            IntCC::Uge => IntCC::Ule,
            IntCC::Eq | IntCC::Ne => self,
        }
    }

    /// The negated condition (`!(a < b)` is `a >= b`).
    pub fn negated(self) -> IntCC {
        match self {
            IntCC::Eq => IntCC::Ne,
            IntCC::Ne => IntCC::Eq,
            IntCC::Slt => IntCC::Sge,
            IntCC::Sle => IntCC::Sgt,
            IntCC::Sgt => IntCC::Sle,
            IntCC::Sge => IntCC::Slt,
            IntCC::Ult => IntCC::Uge,
            IntCC::Ule => IntCC::Ugt,
            IntCC::Ugt => IntCC::Ule,
            IntCC::Uge => IntCC::Ult,
        }
    }
}

/// The scope a `membar` orders memory accesses at.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum MemScope {
    /// `membar.cta`: the threads of the CTA.
    Cta,
    /// `membar.gl`: every thread of the device.
    Gl,
    /// `membar.sys`: the device and the host.
    Sys,
    /// `bar.warp.sync`: the lanes of one warp wait for each other, and order their accesses
    /// among themselves (`ir::eval`: a warp rendezvous; SASS: a `NOP`, see `ir::build`).
    Warp,
    /// A spin-wait's back-off point (the emulated `mbarrier` waits, `ir::build::emulate`):
    /// orders nothing and changes no state; the thread is waiting for others. `ir::eval`
    /// lets every other thread of the CTA run before this one goes on; SASS: a `NOP`, at
    /// which the simulator lets the other warps run (the hardware interleaves warps anyway).
    Yield,
}

/// Direction of a `cvta`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum CvtaDir {
    /// `cvta.<space>`: space address → generic address.
    ToGeneric,
    /// `cvta.to.<space>`: generic address → space address.
    FromGeneric,
}

/// A branch target with its arguments.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BlockCall {
    pub block: Block,
    pub args: SmallVec<[Value; 4]>,
}

/// The reduction of a `bar.red` ([`InstData::BarrierRed`]) over the arriving threads'
/// predicates.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BarRedOp {
    /// How many are true (`bar.red.popc.u32`, an `i32` result).
    Popc,
    /// Whether all are true (`bar.red.and.pred`).
    And,
    /// Whether any is true (`bar.red.or.pred`).
    Or,
}

impl BarRedOp {
    pub fn name(self) -> &'static str {
        match self {
            BarRedOp::Popc => "popc",
            BarRedOp::And => "and",
            BarRedOp::Or => "or",
        }
    }

    pub fn result_type(self) -> Type {
        match self {
            BarRedOp::Popc => Type::I32,
            _ => Type::Pred,
        }
    }

    /// The result, given the arriving threads' predicates.
    pub fn eval(self, preds: impl IntoIterator<Item = bool>) -> u64 {
        let (mut n, mut all, mut any) = (0u64, true, false);
        for p in preds {
            n += u64::from(p);
            all &= p;
            any |= p;
        }
        match self {
            BarRedOp::Popc => n,
            BarRedOp::And => u64::from(all),
            BarRedOp::Or => u64::from(any),
        }
    }
}

/// An instruction with its results and the block it was placed in.
#[derive(Clone, Debug)]
pub struct InstNode {
    pub data: InstData,
    pub results: SmallVec<[Value; 4]>,
    pub block: Block,
}

/// Where a value comes from.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ValueDef {
    /// Result number `1` of instruction `0`.
    Result(Inst, usize),
    /// Parameter number `1` of block `0`.
    Param(Block, usize),
}

#[derive(Copy, Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Clone, Debug, Default)]
pub struct BlockData {
    pub params: Vec<Value>,
    pub insts: Vec<Inst>,
}

/// A kernel parameter: its place in the param space (offset and size in bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParam {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub align: u32,
}

/// Where an instruction comes from: a 1-based PTX line, or none (instructions made by tests
/// or by lowering itself). Four bytes, so every IR and machine instruction can carry one.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, Debug)]
pub struct SrcLoc(u32);

impl SrcLoc {
    /// No source position.
    pub const NONE: SrcLoc = SrcLoc(0);

    /// PTX line `line` (1-based; 0 gives [`SrcLoc::NONE`]).
    pub fn line(line: u32) -> SrcLoc {
        SrcLoc(line)
    }

    /// The 1-based PTX line, if known.
    pub fn ptx_line(self) -> Option<u32> {
        (self.0 != 0).then_some(self.0)
    }
}

/// A kernel (`.entry`).
#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    pub params: Vec<KernelParam>,
    pub values: PrimaryMap<Value, ValueData>,
    pub insts: PrimaryMap<Inst, InstNode>,
    pub blocks: PrimaryMap<Block, BlockData>,
    /// Blocks in layout order; the first is the entry block.
    pub layout: Vec<Block>,
    /// The PTX line each instruction was built from ([`SrcLoc::NONE`] when unknown); set by
    /// [`FunctionBuilder::set_srcloc`], read by lowering (`--explain`, the verifier's report).
    pub srclocs: SecondaryMap<Inst, SrcLoc>,
    /// Float `add`, `sub` and `mul` that PTX wrote without a rounding modifier, which may
    /// therefore be contracted into fused multiply-adds ([`contract`]); set by `ir::build`.
    pub contractible: SecondaryMap<Inst, bool>,
    /// The PTX register a value was first written to, as 1 + an index into `reg_names`
    /// (0: none, as for temporaries); for `--explain`'s address expressions only.
    pub value_names: SecondaryMap<Value, u32>,
    /// PTX register names that `value_names` refers to.
    pub reg_names: Vec<String>,
    /// A `.func` compiled as a real subroutine (docs/calls.md), not a kernel: its
    /// [`Function::params`] are the argument registers' bytes (offset `4 * (r - 4)` for
    /// register `r`, so `LoadParam` reads R4.. as a kernel reads its parameter bank), and it
    /// ends in [`InstData::SubReturn`].
    pub subroutine: bool,
    /// The constants `ir::build` gives a register read before any definition reaches it
    /// (PTX leaves such a value undefined; the constant is zero). `ir::eval` tracks what is
    /// computed from them when the launch asks ([`eval::Launch::undefined_registers`]).
    pub undef: SecondaryMap<Inst, bool>,
    /// Blocks whose PTX carried `.pragma "nounroll";` (set by `ir::build` on the block the
    /// pragma stands in, and on the header of the loop a 64-bit `div`/`rem` becomes, which
    /// ptxas calls as a subroutine): [`unroll`] leaves a loop headed by such a block a loop,
    /// as ptxas does.
    pub nounroll: SecondaryMap<Block, bool>,
}

impl Function {
    pub fn new(name: &str) -> Function {
        Function {
            name: name.to_string(),
            ..Function::default()
        }
    }

    /// Append a kernel parameter at the next offset aligned to `align` (a power of two ≥ 1)
    /// and return that offset, which is what `LoadParam` takes.
    pub fn add_param(&mut self, name: &str, size: u32, align: u32) -> u32 {
        // Saturating: sizes come from user declarations, and the PTX checker (not this
        // bookkeeping) is where an oversized parameter list gets its diagnostic.
        let align = align.max(1);
        let offset = self
            .param_size()
            .checked_next_multiple_of(align)
            .unwrap_or(u32::MAX);
        self.params.push(KernelParam {
            name: name.to_string(),
            offset,
            size,
            align,
        });
        offset
    }

    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&KernelParam> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Bytes of param space the parameters occupy.
    pub fn param_size(&self) -> u32 {
        self.params
            .iter()
            .map(|p| p.offset.saturating_add(p.size))
            .max()
            .unwrap_or(0)
    }

    pub fn entry_block(&self) -> Option<Block> {
        self.layout.first().copied()
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    pub fn inst_results(&self, inst: Inst) -> &[Value] {
        &self.insts[inst].results
    }

    /// The PTX line `inst` was built from.
    pub fn srcloc(&self, inst: Inst) -> SrcLoc {
        self.srclocs[inst]
    }

    /// A new instruction `data` with one result of type `ty`, placed just before `at` in its
    /// block with `at`'s PTX line; its result.
    pub fn insert_before(&mut self, at: Inst, data: InstData, ty: Type) -> Value {
        let block = self.insts[at].block;
        let inst = self.insts.push(InstNode {
            data,
            results: Default::default(),
            block,
        });
        let r = self.values.push(ValueData {
            ty,
            def: ValueDef::Result(inst, 0),
        });
        self.insts[inst].results.push(r);
        self.srclocs[inst] = self.srclocs[at];
        let insts = &mut self.blocks[block].insts;
        let pos = insts.iter().position(|&i| i == at).unwrap_or(insts.len());
        insts.insert(pos, inst);
        r
    }

    /// The PTX register `v` was first written to, if it was written to one.
    pub fn value_name(&self, v: Value) -> Option<&str> {
        let k = self.value_names[v].checked_sub(1)?;
        self.reg_names.get(k as usize).map(String::as_str)
    }
}
