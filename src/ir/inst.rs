//! The instruction set of the IR: [`InstData`], one variant per kind of instruction with its
//! operands, results and attributes, and the walks over it every pass uses (its operands, its
//! branch targets, mapping its operands).
//!
//! In/out: the data of one instruction. Invariant: [`InstData::operands`] and
//! [`InstData::map_operands`] visit the same operands in the same order.

use super::*;

/// The pseudo-register of the first word of a call's outgoing stack-argument area (the sm_50
/// call ABI, docs/calls.md): an [`InstData::ExternCall`] argument word numbered
/// `STACK_ARG_REG + k` is stored at `[R1 + 4k]` before the call, at the bottom of the
/// caller's frame ([`Module::local_layout`] reserves it), and the callee reads it from its
/// own R1 plus its frame. Every parameter word, register or stack, so keeps byte
/// `4 * (r - 4)` of the parameter bytes (`sysfn::register_bytes`, a subroutine's
/// `LoadParam` offsets).
pub const STACK_ARG_REG: u8 = 16;

/// An instruction's opcode and operands. Results live in [`InstNode::results`].
#[derive(Clone, PartialEq, Debug)]
pub enum InstData {
    /// An integer constant; `imm` holds the bits (masked to the type on evaluation).
    Iconst {
        ty: Type,
        imm: u64,
    },
    /// A float constant as raw IEEE bits of `ty`.
    Fconst {
        ty: Type,
        bits: u64,
    },
    /// `ld.param` of a kernel parameter at a byte offset in the param space.
    LoadParam {
        ty: Type,
        offset: u32,
    },
    SpecialReg {
        reg: SpecialReg,
    },
    /// The address (in its own space) of a module variable, as an `ty` (i32 or i64).
    SymbolAddr {
        ty: Type,
        var: GlobalVar,
    },
    Unary {
        op: UnaryOp,
        arg: Value,
    },
    Binary {
        op: BinaryOp,
        args: [Value; 2],
    },
    /// The full product, result twice as wide as the operands.
    MulWide {
        signed: bool,
        args: [Value; 2],
    },
    Convert {
        op: ConvOp,
        ty: Type,
        arg: Value,
    },
    /// `cond ? args[0] : args[1]`.
    Select {
        cond: Value,
        args: [Value; 2],
    },
    Icmp {
        cc: IntCC,
        args: [Value; 2],
    },
    /// `width` results of type `ty` read from `[addr + offset]`, with the PTX cache operator.
    Load {
        space: Space,
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
        cache: CacheOp,
    },
    /// The values (1, 2 or 4, all of type `ty`) written to `[addr + offset]`, with the PTX
    /// cache operator.
    Store {
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        values: SmallVec<[Value; 4]>,
        cache: CacheOp,
    },
    /// Convert between a generic address and an address in `space` (`ty`: i32 or i64).
    Cvta {
        dir: CvtaDir,
        space: Space,
        ty: Type,
        arg: Value,
    },
    Jump {
        dest: BlockCall,
    },
    Brif {
        cond: Value,
        then_dest: BlockCall,
        else_dest: BlockCall,
    },
    Return,
    /// `bar.sync` / `barrier.sync` with no thread count: wait until every thread of the CTA
    /// that has not exited has arrived here (exited threads count as arrived).
    Barrier,
    /// A floating-point operation on integer bit carriers; see [`float`].
    Float {
        op: float::FloatOp,
        args: SmallVec<[Value; 3]>,
    },
    /// `bar.sync`/`barrier.sync` (`wait`) or `bar.arrive` (not `wait`) on barrier `id`
    /// (0..=15) for `count` threads (a multiple of 32; `None`: every thread of the CTA).
    NamedBarrier {
        id: u8,
        count: Option<u32>,
        wait: bool,
    },
    /// `bar.red`: a barrier (as [`InstData::NamedBarrier`] with `wait`) that also reduces
    /// the predicate `arg` over the threads that arrive ([`BarRedOp`]); every one of them
    /// gets the result (`i32` for `popc`, `pred` for `and`/`or`).
    BarrierRed {
        op: BarRedOp,
        id: u8,
        count: Option<u32>,
        arg: Value,
    },
    /// `membar.{cta,gl,sys}`: this thread's memory accesses before it are seen before those
    /// after it, by every thread of the scope.
    MemBar {
        scope: MemScope,
    },
    /// `trap`: abort the launch with an error reported to the host. Not a terminator: as
    /// ptxas does (`BPT.TRAP 0x1` and then the code that follows), control falls through in
    /// the IR, but no thread runs past it ([`eval`] stops with `EvalError::Trapped`).
    Trap,
    /// A bit-field operation on `i32` operands with an `i32` result ([`bits`]).
    Bits {
        op: BitOp,
        args: SmallVec<[Value; 4]>,
    },
    /// `atom`/`red` ([`atomic`]): `[addr + offset]` in `space` (global, shared, generic)
    /// becomes `op(old, args..)`; the one result, of type `ty` (i32 or i64), is `old`.
    Atomic {
        op: AtomOp,
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        args: SmallVec<[Value; 2]>,
    },
    /// A warp vote ([`warp`]) on a predicate: a `pred` result, or the `i32` ballot.
    Vote {
        mode: VoteMode,
        arg: Value,
    },
    /// A warp shuffle ([`warp`]) of `args[0]` with lane operand `args[1]` and clamp/segment
    /// operand `args[2]` (all i32); results: the value (i32) and the in-range predicate.
    Shfl {
        mode: ShflMode,
        args: [Value; 3],
    },
    /// `prefetch{.global,.local,}.L1/.L2`, `prefetchu.L1`: a hint that the line holding
    /// `[addr + offset]` (in `space`: global, local or generic) is wanted soon in cache
    /// `level` (1 or 2). It changes no memory and no value, and an address outside every
    /// allocation is not an error (the PTX ISA calls prefetch a hint; ptxas's CCTL does not
    /// fault), so `eval` takes it as a no-op.
    Prefetch {
        space: Space,
        level: u8,
        addr: Value,
        offset: i32,
    },
    /// `bar.sync`/`barrier.sync`/`bar.arrive` (`red` None; as [`InstData::NamedBarrier`]) or
    /// `bar.red` (`red` Some; as [`InstData::BarrierRed`], one result) with the barrier number
    /// or the thread count, or both, in a register. `args` holds, in order: the number (when
    /// `id` is None), the count (when `count_reg`), the predicate (when `red`). With neither
    /// `count` nor `count_reg` every thread of the CTA takes part. A number of 16 or more, or
    /// a count that is not a non-zero multiple of 32, is undefined in PTX.
    BarrierReg {
        red: Option<BarRedOp>,
        wait: bool,
        id: Option<u8>,
        count: Option<u32>,
        count_reg: bool,
        args: SmallVec<[Value; 3]>,
    },
    /// The per-thread dynamic stack below the static `.local` frame ([`StackOp`]):
    /// `alloca` (one operand, the byte size, of the result's type; one result, the new stack
    /// pointer as a `.local` address), `stacksave` (no operand; the stack pointer as a
    /// `.local` address) and `stackrestore` (one operand, a value `stacksave` gave; no
    /// result). `.local` addresses are offsets from the static frame's base, so the stack
    /// pointer starts at 0 and allocations have negative (wrapped 32-bit) addresses.
    Stack {
        op: StackOp,
        arg: Option<Value>,
    },
    /// A warp collective sm_5x lacks ([`collective`]): `redux.sync`, `match.{any,all}.sync`,
    /// `elect.sync`. `args`: `[a, membermask]`, or `[membermask]` for `elect`. Results: an
    /// `i32`, plus a `pred` for `match.all` and `elect`. [`collective::expand`] replaces it
    /// by votes, shuffles and loops before lowering.
    Collective {
        op: CollectiveOp,
        args: SmallVec<[Value; 2]>,
    },
    /// `tex`/`txq` ([`tex`]): `args` are the bindless handle (`i64`, for
    /// [`tex::TexHandle::Bindless`]) then the coordinates (`i32`); four `i32` results for a
    /// sample, one for a query.
    Texture {
        op: tex::TexOp,
        handle: tex::TexHandle,
        args: SmallVec<[Value; 4]>,
    },
    /// A surface access (`suld.b`, `sust.b`, `sured.b`; [`crate::surface`]). `args`: the
    /// handle (an `i64`) when `access.handle` is bindless, then the coordinates (`i32`, x
    /// in bytes, [`crate::surface::SurfShape::coords`] of them), then the data (a store:
    /// `access.width` values of `access.ty`; a reduction: one). A load's results are
    /// `access.width` values of `access.ty`.
    Surface {
        access: crate::surface::SurfAccess,
        args: SmallVec<[Value; 4]>,
    },
    /// A call of a function the module declares without a body (`.extern .func vprintf`,
    /// `malloc`, `free`, `__assertfail`), made by the sm_50 call ABI (docs/calls.md):
    /// `callee` indexes [`Module::extern_funcs`]; `args` are the argument registers' values,
    /// `i32` words or `i64` pairs, `arg_regs[i]` the (first) register (4 to 15, even for a
    /// pair) of `args[i]`, or from [`STACK_ARG_REG`] up a word of the caller's outgoing
    /// stack area; the one result, if any, is an `i32` (R4) or an `i64` (R4:R5).
    /// The meaning is the system function's ([`crate::sysfn`]).
    ExternCall {
        callee: u32,
        args: SmallVec<[Value; 8]>,
        arg_regs: SmallVec<[u8; 8]>,
    },
    /// The return of a subroutine ([`Function::subroutine`]: a `.func` compiled as a real
    /// subroutine, docs/calls.md): `values` are its result words by the sm_50 call ABI, none,
    /// one `i32` (R4) or one `i64` (R4:R5). A terminator; a kernel ends with `Return`.
    SubReturn {
        values: SmallVec<[Value; 2]>,
    },
    /// A kernel's address (`mov.u64 %rd, kernel;` of an `.entry`, for the device runtime's
    /// `cudaGetParameterBuffer`/`cudaLaunchDevice`): an opaque function descriptor the loader
    /// fills in (`R_CUDA_FUNC_DESC32_LO_32`/`HI_32` against the kernel's symbol, as ptxas
    /// writes it). `entry` indexes [`Module::kernel_descs`]; `ty` is i32 or i64.
    KernelDesc {
        ty: Type,
        entry: u32,
    },
}

/// What an [`InstData::Stack`] does to the dynamic stack pointer `sp` (a 32-bit `.local`
/// address, 0 at entry).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StackOp {
    /// `sp = (sp - size) & -align`; the result is the new `sp`. `align` is a power of two,
    /// at least 8 (ptxas 11.8 rounds smaller alignments, and none, up to 8).
    Alloca { align: u32 },
    /// The result is `sp`.
    Save,
    /// `sp = operand`.
    Restore,
}

impl InstData {
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            InstData::Jump { .. }
                | InstData::Brif { .. }
                | InstData::Return
                | InstData::SubReturn { .. }
        )
    }

    /// The values this instruction reads, in operand order.
    pub fn operands(&self) -> SmallVec<[Value; 4]> {
        // Up to three runs of operands, pushed one by one: most instructions have one to
        // three, and `extend_from_slice` costs more than those pushes.
        let mut out = SmallVec::new();
        for part in self.operand_parts() {
            for &v in part {
                out.push(v);
            }
        }
        out
    }

    /// [`InstData::operands`] as up to three runs, in operand order (the values of the first
    /// run, then the second's, then the third's). Passes that only walk the operands loop
    /// over these, without gathering them into a vector per instruction first.
    pub fn operand_parts(&self) -> [&[Value]; 3] {
        use std::slice::from_ref;
        match self {
            InstData::Iconst { .. }
            | InstData::Fconst { .. }
            | InstData::LoadParam { .. }
            | InstData::SpecialReg { .. }
            | InstData::SymbolAddr { .. }
            | InstData::KernelDesc { .. }
            | InstData::Return
            | InstData::Barrier
            | InstData::NamedBarrier { .. }
            | InstData::MemBar { .. }
            | InstData::Trap => [&[], &[], &[]],
            InstData::Unary { arg, .. }
            | InstData::Convert { arg, .. }
            | InstData::Cvta { arg, .. }
            | InstData::Vote { arg, .. }
            | InstData::BarrierRed { arg, .. } => [from_ref(arg), &[], &[]],
            InstData::Binary { args, .. }
            | InstData::MulWide { args, .. }
            | InstData::Icmp { args, .. } => [args, &[], &[]],
            InstData::Select { cond, args } => [from_ref(cond), args, &[]],
            InstData::Load { addr, .. } | InstData::Prefetch { addr, .. } => {
                [from_ref(addr), &[], &[]]
            }
            InstData::Store { addr, values, .. } => [from_ref(addr), values, &[]],
            InstData::Jump { dest } => [&dest.args, &[], &[]],
            InstData::Float { args, .. } => [args, &[], &[]],
            InstData::Brif {
                cond,
                then_dest,
                else_dest,
            } => [from_ref(cond), &then_dest.args, &else_dest.args],
            InstData::Bits { args, .. } => [args, &[], &[]],
            InstData::Atomic { addr, args, .. } => [from_ref(addr), args, &[]],
            InstData::Shfl { args, .. } => [args, &[], &[]],
            InstData::BarrierReg { args, .. } => [args, &[], &[]],
            InstData::Stack { arg, .. } => [arg.as_slice(), &[], &[]],
            InstData::Collective { args, .. } => [args, &[], &[]],
            InstData::Texture { args, .. } => [args, &[], &[]],
            InstData::Surface { args, .. } => [args, &[], &[]],
            InstData::ExternCall { args, .. } => [args, &[], &[]],
            InstData::SubReturn { values } => [values, &[], &[]],
        }
    }

    /// Replace every value this instruction reads (the same ones, in the same order, as
    /// [`InstData::operands`], block arguments included) by `f` of it.
    pub fn map_operands(&mut self, mut f: impl FnMut(Value) -> Value) {
        let call = |c: &mut BlockCall, f: &mut dyn FnMut(Value) -> Value| {
            for v in c.args.iter_mut() {
                *v = f(*v);
            }
        };
        match self {
            InstData::Iconst { .. }
            | InstData::Fconst { .. }
            | InstData::LoadParam { .. }
            | InstData::SpecialReg { .. }
            | InstData::SymbolAddr { .. }
            | InstData::KernelDesc { .. }
            | InstData::Return
            | InstData::Barrier
            | InstData::NamedBarrier { .. }
            | InstData::MemBar { .. }
            | InstData::Trap => {}
            InstData::Unary { arg, .. }
            | InstData::Convert { arg, .. }
            | InstData::Cvta { arg, .. }
            | InstData::Vote { arg, .. }
            | InstData::BarrierRed { arg, .. }
            | InstData::Load { addr: arg, .. }
            | InstData::Prefetch { addr: arg, .. } => *arg = f(*arg),
            InstData::Binary { args, .. }
            | InstData::MulWide { args, .. }
            | InstData::Icmp { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Shfl { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::BarrierReg { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Stack { arg, .. } => arg.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Collective { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Texture { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Surface { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::ExternCall { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::SubReturn { values } => values.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Select { cond, args } => {
                *cond = f(*cond);
                args.iter_mut().for_each(|v| *v = f(*v));
            }
            InstData::Store { addr, values, .. } => {
                *addr = f(*addr);
                values.iter_mut().for_each(|v| *v = f(*v));
            }
            InstData::Atomic { addr, args, .. } => {
                *addr = f(*addr);
                args.iter_mut().for_each(|v| *v = f(*v));
            }
            InstData::Float { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Bits { args, .. } => args.iter_mut().for_each(|v| *v = f(*v)),
            InstData::Jump { dest } => call(dest, &mut f),
            InstData::Brif {
                cond,
                then_dest,
                else_dest,
            } => {
                *cond = f(*cond);
                call(then_dest, &mut f);
                call(else_dest, &mut f);
            }
        }
    }

    /// Branch targets of a terminator (empty for others).
    pub fn targets(&self) -> SmallVec<[&BlockCall; 2]> {
        let mut out = SmallVec::new();
        match self {
            InstData::Jump { dest } => out.push(dest),
            InstData::Brif {
                then_dest,
                else_dest,
                ..
            } => {
                out.push(then_dest);
                out.push(else_dest);
            }
            _ => {}
        }
        out
    }
}
