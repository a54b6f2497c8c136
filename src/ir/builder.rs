//! A cursor that appends blocks, block parameters and instructions to a [`Function`].
//!
//! The builder infers each result type from the opcode and its operands and does no checking:
//! an ill-typed instruction is still created, and [`crate::ir::verify`] reports it. That keeps
//! the builder infallible, so `ir::build` can translate first and verify once.
//!
//! Misuse by the calling code (appending with no current block) is a programming error and
//! panics; user input never reaches the builder without passing the PTX checker first.

use smallvec::SmallVec;

use super::{
    BinaryOp, Block, BlockCall, CacheOp, ConvOp, CvtaDir, Function, GlobalVar, Inst, InstData,
    InstNode, IntCC, Space, SpecialReg, SrcLoc, Type, UnaryOp, Value, ValueData, ValueDef,
};

pub struct FunctionBuilder<'f> {
    pub func: &'f mut Function,
    current: Option<Block>,
    /// Recorded for every appended instruction.
    srcloc: SrcLoc,
}

impl<'f> FunctionBuilder<'f> {
    pub fn new(func: &'f mut Function) -> FunctionBuilder<'f> {
        let current = func.layout.last().copied();
        FunctionBuilder {
            func,
            current,
            srcloc: SrcLoc::NONE,
        }
    }

    /// The source position recorded for the instructions appended from now on.
    pub fn set_srcloc(&mut self, loc: SrcLoc) {
        self.srcloc = loc;
    }

    /// Create a block at the end of the layout (the first one created is the entry).
    pub fn create_block(&mut self) -> Block {
        let block = self.func.blocks.push(Default::default());
        self.func.layout.push(block);
        block
    }

    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        let index = self.func.blocks[block].params.len();
        let v = self.func.values.push(ValueData {
            ty,
            def: ValueDef::Param(block, index),
        });
        self.func.blocks[block].params.push(v);
        v
    }

    /// Make `block` the place where following instructions are appended.
    pub fn switch_to_block(&mut self, block: Block) {
        self.current = Some(block);
    }

    pub fn current_block(&self) -> Option<Block> {
        self.current
    }

    /// Append an instruction with results of the given types.
    pub fn push(&mut self, data: InstData, result_types: &[Type]) -> Inst {
        let block = self
            .current
            .expect("FunctionBuilder: no current block (call switch_to_block first)");
        let inst = self.func.insts.push(InstNode {
            data,
            results: SmallVec::new(),
            block,
        });
        for (i, &ty) in result_types.iter().enumerate() {
            let v = self.func.values.push(ValueData {
                ty,
                def: ValueDef::Result(inst, i),
            });
            self.func.insts[inst].results.push(v);
        }
        self.func.blocks[block].insts.push(inst);
        if self.srcloc != SrcLoc::NONE {
            self.func.srclocs[inst] = self.srcloc;
        }
        inst
    }

    fn push1(&mut self, data: InstData, ty: Type) -> Value {
        let inst = self.push(data, &[ty]);
        self.func.insts[inst].results[0]
    }

    fn ty(&self, v: Value) -> Type {
        // A value from another function would be out of range: type it as i32 and let the
        // verifier say what is wrong rather than panicking here.
        self.func.values.get(v).map_or(Type::I32, |d| d.ty)
    }

    pub fn iconst(&mut self, ty: Type, imm: i64) -> Value {
        self.push1(
            InstData::Iconst {
                ty,
                imm: imm as u64,
            },
            ty,
        )
    }

    pub fn fconst_f32(&mut self, x: f32) -> Value {
        let bits = u64::from(x.to_bits());
        self.push1(
            InstData::Fconst {
                ty: Type::F32,
                bits,
            },
            Type::F32,
        )
    }

    pub fn fconst_f64(&mut self, x: f64) -> Value {
        let bits = x.to_bits();
        self.push1(
            InstData::Fconst {
                ty: Type::F64,
                bits,
            },
            Type::F64,
        )
    }

    pub fn load_param(&mut self, ty: Type, offset: u32) -> Value {
        self.push1(InstData::LoadParam { ty, offset }, ty)
    }

    pub fn special_reg(&mut self, reg: SpecialReg) -> Value {
        self.push1(InstData::SpecialReg { reg }, reg.ty())
    }

    pub fn symbol_addr(&mut self, ty: Type, var: GlobalVar) -> Value {
        self.push1(InstData::SymbolAddr { ty, var }, ty)
    }

    pub fn unary(&mut self, op: UnaryOp, arg: Value) -> Value {
        let ty = self.ty(arg);
        self.push1(InstData::Unary { op, arg }, ty)
    }

    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let ty = self.ty(a);
        self.push1(InstData::Binary { op, args: [a, b] }, ty)
    }

    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Add, a, b)
    }

    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Sub, a, b)
    }

    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.binary(BinaryOp::Mul, a, b)
    }

    pub fn shl(&mut self, a: Value, count: Value) -> Value {
        self.binary(BinaryOp::Shl, a, count)
    }

    /// An atomic read-modify-write ([`super::atomic`]); the result is the old value.
    pub fn atomic(
        &mut self,
        op: super::AtomOp,
        space: Space,
        ty: Type,
        addr: Value,
        offset: i32,
        args: &[Value],
    ) -> Value {
        self.push1(
            InstData::Atomic {
                op,
                space,
                ty,
                addr,
                offset,
                args: args.iter().copied().collect(),
            },
            ty,
        )
    }

    /// A warp vote ([`super::warp`]) on a predicate.
    pub fn vote(&mut self, mode: super::VoteMode, arg: Value) -> Value {
        let ty = if mode == super::VoteMode::Ballot {
            Type::I32
        } else {
            Type::Pred
        };
        self.push1(InstData::Vote { mode, arg }, ty)
    }

    /// A warp shuffle ([`super::warp`]): the value and the in-range predicate.
    pub fn shfl(&mut self, mode: super::ShflMode, a: Value, b: Value, c: Value) -> (Value, Value) {
        let inst = self.push(
            InstData::Shfl {
                mode,
                args: [a, b, c],
            },
            &[Type::I32, Type::Pred],
        );
        let r = &self.func.insts[inst].results;
        (r[0], r[1])
    }

    /// A texture instruction ([`super::tex`]): its `op.results()` `i32` results.
    pub fn texture(
        &mut self,
        op: super::tex::TexOp,
        handle: super::tex::TexHandle,
        args: &[Value],
    ) -> SmallVec<[Value; 4]> {
        let types: SmallVec<[Type; 4]> = (0..op.results()).map(|_| Type::I32).collect();
        let inst = self.push(
            InstData::Texture {
                op,
                handle,
                args: args.iter().copied().collect(),
            },
            &types,
        );
        self.func.insts[inst].results.clone()
    }

    /// A warp collective ([`super::collective`]): the `i32` result, and the predicate for
    /// `match.all` and `elect`.
    pub fn collective(
        &mut self,
        op: super::CollectiveOp,
        args: &[Value],
    ) -> (Value, Option<Value>) {
        let types: &[Type] = if op.has_pred() {
            &[Type::I32, Type::Pred]
        } else {
            &[Type::I32]
        };
        let inst = self.push(
            InstData::Collective {
                op,
                args: args.iter().copied().collect(),
            },
            types,
        );
        let r = &self.func.insts[inst].results;
        (r[0], r.get(1).copied())
    }

    /// A bit-field operation ([`super::BitOp`]) on `i32` operands; the result is `i32`.
    pub fn bits(&mut self, op: super::BitOp, args: &[Value]) -> Value {
        self.push1(
            InstData::Bits {
                op,
                args: args.iter().copied().collect(),
            },
            Type::I32,
        )
    }

    pub fn mul_wide(&mut self, signed: bool, a: Value, b: Value) -> Value {
        let ty = self.ty(a);
        // An operand with no wider type gets its own type back; the verifier rejects it.
        let wide = ty.double_width().unwrap_or(ty);
        self.push1(
            InstData::MulWide {
                signed,
                args: [a, b],
            },
            wide,
        )
    }

    /// PTX `mad.lo`: `a * b + c`, low halves.
    pub fn mad_lo(&mut self, a: Value, b: Value, c: Value) -> Value {
        let p = self.mul(a, b);
        self.add(p, c)
    }

    /// PTX `mad.hi.s` / `mad.hi.u`: the high half of `a * b`, plus `c`.
    pub fn mad_hi(&mut self, signed: bool, a: Value, b: Value, c: Value) -> Value {
        let op = if signed {
            BinaryOp::MulHiS
        } else {
            BinaryOp::MulHiU
        };
        let p = self.binary(op, a, b);
        self.add(p, c)
    }

    /// PTX `mad.wide.s` / `mad.wide.u`: the full product of `a * b`, plus the wide `c`.
    pub fn mad_wide(&mut self, signed: bool, a: Value, b: Value, c: Value) -> Value {
        let p = self.mul_wide(signed, a, b);
        self.add(p, c)
    }

    pub fn convert(&mut self, op: ConvOp, ty: Type, arg: Value) -> Value {
        self.push1(InstData::Convert { op, ty, arg }, ty)
    }

    pub fn sext(&mut self, ty: Type, arg: Value) -> Value {
        self.convert(ConvOp::Sext, ty, arg)
    }

    pub fn zext(&mut self, ty: Type, arg: Value) -> Value {
        self.convert(ConvOp::Zext, ty, arg)
    }

    pub fn trunc(&mut self, ty: Type, arg: Value) -> Value {
        self.convert(ConvOp::Trunc, ty, arg)
    }

    pub fn select(&mut self, cond: Value, a: Value, b: Value) -> Value {
        let ty = self.ty(a);
        self.push1(InstData::Select { cond, args: [a, b] }, ty)
    }

    pub fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.push1(InstData::Icmp { cc, args: [a, b] }, Type::Pred)
    }

    /// A load of `width` elements; returns one value per element.
    pub fn load(
        &mut self,
        space: Space,
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
    ) -> SmallVec<[Value; 4]> {
        self.load_cached(space, ty, width, addr, offset, CacheOp::Default)
    }

    /// [`Self::load`] with a cache operator.
    pub fn load_cached(
        &mut self,
        space: Space,
        ty: Type,
        width: u8,
        addr: Value,
        offset: i32,
        cache: CacheOp,
    ) -> SmallVec<[Value; 4]> {
        let types: SmallVec<[Type; 4]> = (0..width).map(|_| ty).collect();
        let inst = self.push(
            InstData::Load {
                space,
                ty,
                width,
                addr,
                offset,
                cache,
            },
            &types,
        );
        self.func.insts[inst].results.clone()
    }

    /// A scalar load.
    pub fn load1(&mut self, space: Space, ty: Type, addr: Value, offset: i32) -> Value {
        self.load(space, ty, 1, addr, offset)[0]
    }

    /// A store of 1, 2 or 4 elements; the element type is that of the first value.
    pub fn store(&mut self, space: Space, addr: Value, offset: i32, values: &[Value]) -> Inst {
        self.store_cached(space, addr, offset, values, CacheOp::Default)
    }

    /// [`Self::store`] with a cache operator.
    pub fn store_cached(
        &mut self,
        space: Space,
        addr: Value,
        offset: i32,
        values: &[Value],
        cache: CacheOp,
    ) -> Inst {
        let ty = values.first().map_or(Type::I32, |&v| self.ty(v));
        self.push(
            InstData::Store {
                space,
                ty,
                addr,
                offset,
                values: values.iter().copied().collect(),
                cache,
            },
            &[],
        )
    }

    pub fn cvta(&mut self, dir: CvtaDir, space: Space, ty: Type, arg: Value) -> Value {
        self.push1(
            InstData::Cvta {
                dir,
                space,
                ty,
                arg,
            },
            ty,
        )
    }

    pub fn jump(&mut self, block: Block, args: &[Value]) -> Inst {
        let dest = BlockCall {
            block,
            args: args.iter().copied().collect(),
        };
        self.push(InstData::Jump { dest }, &[])
    }

    pub fn brif(
        &mut self,
        cond: Value,
        then_block: Block,
        then_args: &[Value],
        else_block: Block,
        else_args: &[Value],
    ) -> Inst {
        let then_dest = BlockCall {
            block: then_block,
            args: then_args.iter().copied().collect(),
        };
        let else_dest = BlockCall {
            block: else_block,
            args: else_args.iter().copied().collect(),
        };
        self.push(
            InstData::Brif {
                cond,
                then_dest,
                else_dest,
            },
            &[],
        )
    }

    /// A floating-point operation (see [`super::float`]); its one result.
    pub fn float(&mut self, op: super::float::FloatOp, args: &[Value]) -> Value {
        let ty = op.result_type();
        self.push1(
            InstData::Float {
                op,
                args: args.iter().copied().collect(),
            },
            ty,
        )
    }

    pub fn barrier(&mut self) -> Inst {
        self.push(InstData::Barrier, &[])
    }

    pub fn named_barrier(&mut self, id: u8, count: Option<u32>, wait: bool) -> Inst {
        self.push(InstData::NamedBarrier { id, count, wait }, &[])
    }

    /// `bar.red`: the reduction of `arg` (a predicate) over the CTA, after a barrier.
    pub fn barrier_red(
        &mut self,
        op: super::BarRedOp,
        id: u8,
        count: Option<u32>,
        arg: Value,
    ) -> Value {
        self.push1(
            InstData::BarrierRed { op, id, count, arg },
            op.result_type(),
        )
    }

    /// A barrier with its number and/or count in a register ([`InstData::BarrierReg`]): the
    /// result of `bar.red` when `red` is given, else None.
    pub fn barrier_reg(
        &mut self,
        red: Option<super::BarRedOp>,
        wait: bool,
        id: Option<u8>,
        count: Option<u32>,
        count_reg: bool,
        args: &[Value],
    ) -> Option<Value> {
        let data = InstData::BarrierReg {
            red,
            wait,
            id,
            count,
            count_reg,
            args: args.iter().copied().collect(),
        };
        match red {
            Some(op) => Some(self.push1(data, op.result_type())),
            None => {
                self.push(data, &[]);
                None
            }
        }
    }

    pub fn membar(&mut self, scope: super::MemScope) -> Inst {
        self.push(InstData::MemBar { scope }, &[])
    }

    /// `prefetch`: a cache hint for `[addr + offset]` in `space` at cache `level` (1 or 2).
    pub fn prefetch(&mut self, space: Space, level: u8, addr: Value, offset: i32) -> Inst {
        self.push(
            InstData::Prefetch {
                space,
                level,
                addr,
                offset,
            },
            &[],
        )
    }

    /// A surface access ([`InstData::Surface`]); `args` as that variant orders them. The
    /// results: a load's values (empty for stores and reductions).
    pub fn surface(
        &mut self,
        access: crate::surface::SurfAccess,
        args: &[Value],
    ) -> SmallVec<[Value; 4]> {
        let types: SmallVec<[Type; 4]> = (0..access.results()).map(|_| access.ty).collect();
        let inst = self.push(
            InstData::Surface {
                access,
                args: args.iter().copied().collect(),
            },
            &types,
        );
        self.func.insts[inst].results.clone()
    }

    /// `alloca`: `size` bytes (a value of type `ty`, i32 or i64) below the stack pointer,
    /// aligned to `align`; the result (of type `ty`) is their `.local` address.
    pub fn alloca(&mut self, ty: Type, size: Value, align: u32) -> Value {
        let op = super::StackOp::Alloca { align };
        self.push1(
            InstData::Stack {
                op,
                arg: Some(size),
            },
            ty,
        )
    }

    /// `stacksave`: the stack pointer as a `.local` address of type `ty`.
    pub fn stack_save(&mut self, ty: Type) -> Value {
        let op = super::StackOp::Save;
        self.push1(InstData::Stack { op, arg: None }, ty)
    }

    /// `stackrestore`: set the stack pointer to `sp`, a value `stacksave` gave.
    pub fn stack_restore(&mut self, sp: Value) -> Inst {
        let op = super::StackOp::Restore;
        self.push(InstData::Stack { op, arg: Some(sp) }, &[])
    }

    /// A call of the bodiless function `callee` ([`super::InstData::ExternCall`]): the
    /// arguments `args` (`i32`, or `i64` in an even register pair) go in registers
    /// `arg_regs`; results of types `rets` come back in R4...
    pub fn extern_call(
        &mut self,
        callee: u32,
        args: &[Value],
        arg_regs: &[u8],
        rets: &[Type],
    ) -> SmallVec<[Value; 4]> {
        let inst = self.push(
            InstData::ExternCall {
                callee,
                args: args.iter().copied().collect(),
                arg_regs: arg_regs.iter().copied().collect(),
            },
            rets,
        );
        self.func.insts[inst].results.iter().copied().collect()
    }

    /// Return from a subroutine with its result words ([`super::InstData::SubReturn`]).
    pub fn sub_return(&mut self, values: &[Value]) -> Inst {
        self.push(
            InstData::SubReturn {
                values: values.iter().copied().collect(),
            },
            &[],
        )
    }

    /// The descriptor of kernel `Module::kernel_descs[entry]` ([`super::InstData::KernelDesc`]).
    pub fn kernel_desc(&mut self, ty: Type, entry: u32) -> Value {
        self.push1(super::InstData::KernelDesc { ty, entry }, ty)
    }

    pub fn trap(&mut self) -> Inst {
        self.push(InstData::Trap, &[])
    }

    pub fn ret(&mut self) -> Inst {
        self.push(InstData::Return, &[])
    }
}
