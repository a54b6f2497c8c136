//! The IR verifier: checks the invariants the rest of the compiler relies on.
//!
//! In: a [`Function`] (or a [`Module`], which adds checks of variable references). Out: `Ok`
//! or every problem found, each a [`VerifierError`] whose text names the instruction or block.
//!
//! Checked: the layout is non-empty and lists each block once; every block and instruction
//! it names exists, and block parameters and results name values that point back at them (the
//! interpreter and later passes index by these, so this is what keeps them panic-free on
//! hand-made IR); every block ends with exactly
//! one terminator and has none before it; the entry block takes no parameters; every operand
//! is a value of this function whose definition dominates the use (in the same block: comes
//! earlier); operand and result types match the opcode; branch targets are in the layout and
//! get as many arguments, of the right types, as they have parameters.
//!
//! Blocks that cannot be reached from the entry are checked for everything except dominance of
//! their own uses: nothing executes them, and dominance is undefined there (Cranelift makes the
//! same choice). A use in a reachable block of a value defined in an unreachable one is still
//! an error, because that definition never dominates anything.

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::{
    AtomOp, Block, ConvOp, Function, GlobalVar, Inst, InstData, Module, Space, Type, UnaryOp,
    Value, ValueDef,
};

/// One verifier finding. The `Display` text is the user-visible message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifierError {
    #[error("function has no blocks")]
    NoBlocks,
    #[error("{block} appears more than once in the layout")]
    DuplicateBlock { block: Block },
    #[error("{block} is in the layout but not in the function")]
    UnknownBlock { block: Block },
    #[error("{block}: parameter {value} is not that block's parameter")]
    BadBlockParam { block: Block, value: Value },
    #[error("{block}: entry block must not have parameters")]
    EntryParams { block: Block },
    #[error("{block}: does not end with a terminator")]
    MissingTerminator { block: Block },
    #[error("{inst}: terminator in the middle of {block}")]
    TerminatorMidBlock { inst: Inst, block: Block },
    #[error("{block} lists {inst}, which is not in the function")]
    UnknownInst { inst: Inst, block: Block },
    #[error("{inst}: instruction is placed more than once")]
    DuplicateInst { inst: Inst },
    #[error("{inst}: result {value} is not defined by this instruction")]
    BadResult { inst: Inst, value: Value },
    #[error("{inst}: {value} is not defined in this function")]
    UndefinedValue { inst: Inst, value: Value },
    #[error("{inst}: use of {value} is not dominated by its definition")]
    NotDominated { inst: Inst, value: Value },
    #[error("{inst}: {message}")]
    Type { inst: Inst, message: String },
    #[error("{inst}: branch to {block}, which is not in the layout")]
    BadTarget { inst: Inst, block: Block },
    #[error("{inst}: {block} takes {expected} arguments, got {got}")]
    BlockArgCount {
        inst: Inst,
        block: Block,
        expected: usize,
        got: usize,
    },
    #[error("{inst}: argument {index} to {block} is {got}, expected {expected}")]
    BlockArgType {
        inst: Inst,
        block: Block,
        index: usize,
        expected: Type,
        got: Type,
    },
    #[error("{inst}: {var} is not a variable of the module")]
    UnknownVar { inst: Inst, var: GlobalVar },
}

/// Verify one function on its own (variable references are checked by [`verify_module`]).
pub fn verify(func: &Function) -> Result<(), Vec<VerifierError>> {
    let mut v = Verifier {
        func,
        errors: Vec::new(),
    };
    v.run();
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

/// Verify every function of a module, plus their references to module variables.
pub fn verify_module(module: &Module) -> Result<(), Vec<VerifierError>> {
    let mut errors = Vec::new();
    for func in &module.functions {
        if let Err(e) = verify_in_module(module, func) {
            errors.extend(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Verify one function whose variable references point into `module` (the function need not
/// be one of the module's own, which lets the interpreter check before it runs).
pub fn verify_in_module(module: &Module, func: &Function) -> Result<(), Vec<VerifierError>> {
    let mut errors = verify(func).err().unwrap_or_default();
    for &block in &func.layout {
        let Some(data) = func.blocks.get(block) else {
            continue;
        };
        for &inst in &data.insts {
            if let Some(InstData::SymbolAddr { var, .. }) = func.insts.get(inst).map(|n| &n.data) {
                if !module.vars.is_valid(*var) {
                    errors.push(VerifierError::UnknownVar { inst, var: *var });
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Verifier<'a> {
    func: &'a Function,
    errors: Vec<VerifierError>,
}

/// Where each placed instruction sits: its block and index in it (`None`: not placed).
/// Slots by instruction, and blocks in the layout as flags by block: the verifier runs on
/// every function built, and hash maps here were most of its cost.
type Positions = SecondaryMap<Inst, Option<(Block, usize)>>;

/// Which blocks are in the layout.
type InLayout = SecondaryMap<Block, bool>;

impl Verifier<'_> {
    fn run(&mut self) {
        let func = self.func;
        let Some(&entry) = func.layout.first() else {
            self.errors.push(VerifierError::NoBlocks);
            return;
        };
        // Layout sanity first: the other checks index blocks and instructions through it.
        let mut seen_blocks = InLayout::new();
        seen_blocks.resize(func.blocks.len());
        let mut positions = Positions::new();
        positions.resize(func.insts.len());
        for &block in &func.layout {
            if !func.blocks.is_valid(block) {
                self.errors.push(VerifierError::UnknownBlock { block });
                return;
            }
            if std::mem::replace(&mut seen_blocks[block], true) {
                self.errors.push(VerifierError::DuplicateBlock { block });
                return;
            }
            // The interpreter and later passes index registers by these values.
            for (i, &value) in func.blocks[block].params.iter().enumerate() {
                let ok = func.values.get(value).map(|d| d.def) == Some(ValueDef::Param(block, i));
                if !ok {
                    self.errors
                        .push(VerifierError::BadBlockParam { block, value });
                    return;
                }
            }
            for (i, &inst) in func.blocks[block].insts.iter().enumerate() {
                if !func.insts.is_valid(inst) {
                    self.errors.push(VerifierError::UnknownInst { inst, block });
                    return;
                }
                if positions[inst].replace((block, i)).is_some() {
                    self.errors.push(VerifierError::DuplicateInst { inst });
                    return;
                }
                for (r, &value) in func.insts[inst].results.iter().enumerate() {
                    let ok =
                        func.values.get(value).map(|d| d.def) == Some(ValueDef::Result(inst, r));
                    if !ok {
                        self.errors.push(VerifierError::BadResult { inst, value });
                        return;
                    }
                }
            }
        }
        if !func.blocks[entry].params.is_empty() {
            self.errors
                .push(VerifierError::EntryParams { block: entry });
        }
        for &block in &func.layout {
            let insts = &func.blocks[block].insts;
            match insts.last() {
                Some(&last) if func.insts[last].data.is_terminator() => {}
                _ => self.errors.push(VerifierError::MissingTerminator { block }),
            }
            for &inst in insts.iter().rev().skip(1) {
                if func.insts[inst].data.is_terminator() {
                    self.errors
                        .push(VerifierError::TerminatorMidBlock { inst, block });
                }
            }
        }
        let doms = Dominators::compute(func, &seen_blocks);
        for &block in &func.layout {
            for &inst in &func.blocks[block].insts {
                self.check_operands(inst, block, &positions, &doms);
                self.check_types(inst);
                self.check_targets(inst, &seen_blocks);
            }
        }
    }

    fn check_operands(&mut self, inst: Inst, block: Block, pos: &Positions, doms: &Dominators) {
        let func = self.func;
        let here = pos[inst].map_or(0, |p| p.1);
        for &value in func.insts[inst].data.operand_parts().into_iter().flatten() {
            let Some(def) = func.values.get(value).map(|d| d.def) else {
                self.errors
                    .push(VerifierError::UndefinedValue { inst, value });
                continue;
            };
            if !doms.is_reachable(block) {
                continue;
            }
            let ok = match def {
                ValueDef::Param(def_block, _) => doms.dominates(def_block, block),
                ValueDef::Result(def_inst, _) => match pos[def_inst] {
                    // A result of an instruction that is not placed anywhere is never defined.
                    None => false,
                    Some((def_block, def_pos)) if def_block == block => def_pos < here,
                    Some((def_block, _)) => doms.dominates(def_block, block),
                },
            };
            if !ok {
                self.errors
                    .push(VerifierError::NotDominated { inst, value });
            }
        }
    }

    fn ty(&self, v: Value) -> Option<Type> {
        self.func.values.get(v).map(|d| d.ty)
    }

    // Long by design: the dispatch over `InstData`, one arm per IR instruction kind giving its
    // operand and result types.
    fn check_types(&mut self, inst: Inst) {
        let node = &self.func.insts[inst];
        let mut problems: Vec<String> = Vec::new();
        // Pushed one by one, not collected through SmallVec's generic extend (every
        // instruction of every built function comes here).
        let mut results: SmallVec<[Type; 4]> = SmallVec::new();
        for &v in &node.results {
            if let Some(t) = self.ty(v) {
                results.push(t);
            }
        }
        // Undefined operands were already reported; their types are unknown, so skip the rest.
        let parts = node.data.operand_parts();
        if parts
            .iter()
            .any(|p| p.iter().any(|&v| self.ty(v).is_none()))
        {
            return;
        }
        let t = |v: Value| self.ty(v).unwrap_or(Type::Pred);
        let is_addr = |ty: Type| matches!(ty, Type::I32 | Type::I64);
        let expect_results = |want: &[Type], problems: &mut Vec<String>| {
            if results[..] != *want {
                problems.push(format!(
                    "results are ({}), expected ({})",
                    join(&results),
                    join(want)
                ));
            }
        };
        match &node.data {
            InstData::Iconst { ty, .. } => {
                if !ty.is_int() {
                    problems.push(format!("iconst must have an integer type, got {ty}"));
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::Fconst { ty, .. } => {
                if !ty.is_float() {
                    problems.push(format!("fconst must have a float type, got {ty}"));
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::LoadParam { ty, .. } => {
                if *ty == Type::Pred {
                    problems.push("param cannot load a pred".to_string());
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::SpecialReg { reg } => expect_results(&[reg.ty()], &mut problems),
            InstData::KernelDesc { ty, .. } => {
                if !is_addr(*ty) {
                    problems.push(format!("kernel_desc must be i32 or i64, got {ty}"));
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::SymbolAddr { ty, .. } => {
                if !is_addr(*ty) {
                    problems.push(format!("addr must be i32 or i64, got {ty}"));
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::Unary { op, arg } => {
                let a = t(*arg);
                let ok = a.is_int() || (*op == UnaryOp::Not && a == Type::Pred);
                if !ok {
                    problems.push(format!(
                        "{}: operand must be an integer, got {a}",
                        op.name()
                    ));
                }
                expect_results(&[a], &mut problems);
            }
            InstData::Binary { op, args } => {
                let (a, b) = (t(args[0]), t(args[1]));
                let name = op.name();
                let a_ok = a.is_int() || (op.is_bitwise() && a == Type::Pred);
                if !a_ok {
                    problems.push(format!("{name}: operand must be an integer, got {a}"));
                }
                if op.is_shift() {
                    if b != Type::I32 {
                        problems.push(format!("{name}: shift count must be i32, got {b}"));
                    }
                } else if a != b {
                    problems.push(format!(
                        "{name}: operands must have the same type, got {a} and {b}"
                    ));
                }
                expect_results(&[a], &mut problems);
            }
            InstData::MulWide { args, .. } => {
                let (a, b) = (t(args[0]), t(args[1]));
                if !matches!(a, Type::I16 | Type::I32) {
                    problems.push(format!("mulwide: operands must be i16 or i32, got {a}"));
                } else {
                    expect_results(&[a.double_width().unwrap_or(a)], &mut problems);
                }
                if a != b {
                    problems.push(format!(
                        "mulwide: operands must have the same type, got {a} and {b}"
                    ));
                }
            }
            InstData::Convert { op, ty, arg } => {
                let a = t(*arg);
                let name = op.name();
                if !a.is_int() || !ty.is_int() {
                    problems.push(format!("{name}: converts integers only, got {a} to {ty}"));
                } else {
                    let ok = match op {
                        ConvOp::Sext | ConvOp::Zext => ty.bits() > a.bits(),
                        ConvOp::Trunc => ty.bits() < a.bits(),
                    };
                    if !ok {
                        let how = if *op == ConvOp::Trunc {
                            "narrower"
                        } else {
                            "wider"
                        };
                        problems.push(format!("{name}: {ty} is not {how} than {a}"));
                    }
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::Select { cond, args } => {
                let c = t(*cond);
                if c != Type::Pred {
                    problems.push(format!("select: condition must be pred, got {c}"));
                }
                let (a, b) = (t(args[0]), t(args[1]));
                if a != b {
                    problems.push(format!(
                        "select: operands must have the same type, got {a} and {b}"
                    ));
                }
                expect_results(&[a], &mut problems);
            }
            InstData::Icmp { cc, args } => {
                let (a, b) = (t(args[0]), t(args[1]));
                let name = cc.name();
                if !a.is_int() {
                    problems.push(format!("icmp.{name}: operand must be an integer, got {a}"));
                }
                if a != b {
                    problems.push(format!(
                        "icmp.{name}: operands must have the same type, got {a} and {b}"
                    ));
                }
                expect_results(&[Type::Pred], &mut problems);
            }
            InstData::Load {
                ty, width, addr, ..
            } => {
                if *ty == Type::Pred {
                    problems.push("load: cannot load a pred".to_string());
                }
                if !matches!(width, 1 | 2 | 4) {
                    problems.push(format!("load: vector width must be 1, 2 or 4, got {width}"));
                }
                let at = t(*addr);
                if !is_addr(at) {
                    problems.push(format!("load: address must be i32 or i64, got {at}"));
                }
                let want: Vec<Type> = (0..*width).map(|_| *ty).collect();
                expect_results(&want, &mut problems);
            }
            InstData::Store {
                space,
                ty,
                addr,
                values,
                ..
            } => {
                if *ty == Type::Pred {
                    problems.push("store: cannot store a pred".to_string());
                }
                if matches!(space, Space::Const | Space::Param) {
                    problems.push(format!("store: the {space} space is read-only"));
                }
                if !matches!(values.len(), 1 | 2 | 4) {
                    problems.push(format!(
                        "store: vector width must be 1, 2 or 4, got {}",
                        values.len()
                    ));
                }
                for &v in values {
                    let vt = t(v);
                    if vt != *ty {
                        problems.push(format!("store: {v} is {vt}, expected {ty}"));
                    }
                }
                let at = t(*addr);
                if !is_addr(at) {
                    problems.push(format!("store: address must be i32 or i64, got {at}"));
                }
                expect_results(&[], &mut problems);
            }
            InstData::Cvta { space, ty, arg, .. } => {
                if matches!(space, Space::Generic | Space::Param) {
                    problems.push(format!("cvta: no {space} window"));
                }
                if !is_addr(*ty) {
                    problems.push(format!("cvta: address must be i32 or i64, got {ty}"));
                }
                let a = t(*arg);
                if a != *ty {
                    problems.push(format!("cvta: operand is {a}, expected {ty}"));
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::Brif { cond, .. } => {
                let c = t(*cond);
                if c != Type::Pred {
                    problems.push(format!("brif: condition must be pred, got {c}"));
                }
                expect_results(&[], &mut problems);
            }
            InstData::Jump { .. } | InstData::Return | InstData::Barrier => {
                expect_results(&[], &mut problems)
            }
            InstData::Float { op, args } => {
                let want = op.operand_types();
                let have: Vec<Type> = args.iter().map(|&v| t(v)).collect();
                if have[..] != want[..] {
                    problems.push(format!(
                        "{}: operands are ({}), expected ({})",
                        op.display_name(),
                        join(&have),
                        join(&want)
                    ));
                }
                problems.extend(op.check());
                expect_results(&[op.result_type()], &mut problems);
            }
            InstData::NamedBarrier { id, count, .. } => {
                if *id > 15 {
                    problems.push(format!("barrier id {id} is not in 0..=15"));
                }
                if count.is_some_and(|c| c == 0 || c % 32 != 0) {
                    problems.push("barrier thread count must be a non-zero multiple of 32".into());
                }
                expect_results(&[], &mut problems)
            }
            InstData::BarrierRed { op, id, count, arg } => {
                if *id > 15 {
                    problems.push(format!("barrier id {id} is not in 0..=15"));
                }
                if count.is_some_and(|c| c == 0 || c % 32 != 0) {
                    problems.push("barrier thread count must be a non-zero multiple of 32".into());
                }
                if t(*arg) != Type::Pred {
                    problems.push(format!("bar.red: operand must be pred, got {}", t(*arg)));
                }
                expect_results(&[op.result_type()], &mut problems)
            }
            InstData::MemBar { .. } | InstData::Trap => expect_results(&[], &mut problems),
            InstData::BarrierReg {
                red,
                id,
                count,
                count_reg,
                args,
                ..
            } => {
                if id.is_some_and(|i| i > 15) {
                    problems.push(format!("barrier id {} is not in 0..=15", id.unwrap_or(0)));
                }
                if count.is_some_and(|c| c == 0 || c % 32 != 0) {
                    problems.push("barrier thread count must be a non-zero multiple of 32".into());
                }
                if count.is_some() && *count_reg {
                    problems.push("barrier: both an immediate and a register count".into());
                }
                let mut want = Vec::new();
                if id.is_none() {
                    want.push(Type::I32);
                }
                if *count_reg {
                    want.push(Type::I32);
                }
                if red.is_some() {
                    want.push(Type::Pred);
                }
                let have: Vec<Type> = args.iter().map(|&a| t(a)).collect();
                if have != want {
                    problems.push(format!("barrier: operands are {have:?}, expected {want:?}"));
                }
                match red {
                    Some(op) => expect_results(&[op.result_type()], &mut problems),
                    None => expect_results(&[], &mut problems),
                }
            }
            InstData::Stack { op, arg } => {
                let addr_result = results.len() == 1 && is_addr(results[0]);
                match (op, arg) {
                    (crate::ir::StackOp::Alloca { align }, Some(size)) => {
                        if !align.is_power_of_two() || *align < 8 {
                            problems.push(format!(
                                "alloca: alignment {align} is not a power of two of at least 8"
                            ));
                        }
                        if !addr_result || t(*size) != results[0] {
                            problems.push(format!(
                                "alloca: size {} and result ({}) must be one type, i32 or i64",
                                t(*size),
                                join(&results)
                            ));
                        }
                    }
                    (crate::ir::StackOp::Save, None) => {
                        if !addr_result {
                            problems.push(format!(
                                "stacksave: the result must be i32 or i64, got ({})",
                                join(&results)
                            ));
                        }
                    }
                    (crate::ir::StackOp::Restore, Some(sp)) => {
                        if !is_addr(t(*sp)) {
                            problems.push(format!(
                                "stackrestore: the operand must be i32 or i64, got {}",
                                t(*sp)
                            ));
                        }
                        expect_results(&[], &mut problems)
                    }
                    _ => problems.push(format!("{op:?}: wrong operand count")),
                }
            }
            InstData::Prefetch {
                space, level, addr, ..
            } => {
                if !matches!(space, Space::Global | Space::Local | Space::Generic) {
                    problems.push(format!(
                        "prefetch: space must be global, local or generic, got {space}"
                    ));
                }
                if !matches!(level, 1 | 2) {
                    problems.push(format!("prefetch: cache level must be 1 or 2, got {level}"));
                }
                let at = t(*addr);
                if !is_addr(at) {
                    problems.push(format!("prefetch: address must be i32 or i64, got {at}"));
                }
                expect_results(&[], &mut problems)
            }
            InstData::Atomic {
                op,
                space,
                ty,
                addr,
                args,
                ..
            } => {
                let name = format!("atom.{}", op.name());
                if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
                    problems.push(format!("{name}: no atomics in the .{} space", space.name()));
                }
                if !matches!(ty, Type::I32 | Type::I64) {
                    problems.push(format!("{name}: type must be i32 or i64, got {ty}"));
                }
                if matches!(op, AtomOp::Inc | AtomOp::Dec | AtomOp::FAdd) && *ty != Type::I32 {
                    problems.push(format!("{name}: 32-bit only"));
                }
                // The hardware's float add is global; shared and generic ones are CAS loops
                // starting from an atomic read of the shared word (`ir::atomic`).
                if *op == AtomOp::FAdd && *space != Space::Global {
                    problems.push(format!("{name}: .global only (others are CAS loops)"));
                }
                let at = t(*addr);
                if !matches!(at, Type::I32 | Type::I64) {
                    problems.push(format!("{name}: address must be i32 or i64, got {at}"));
                }
                if args.len() != op.arity() {
                    problems.push(format!("{name}: takes {} operands", op.arity()));
                }
                for &a in args {
                    if t(a) != *ty {
                        problems.push(format!("{name}: operands must be {ty}, got {}", t(a)));
                    }
                }
                expect_results(&[*ty], &mut problems);
            }
            InstData::Texture { op, handle, args } => {
                let handle_args = usize::from(handle.in_register());
                if args.len() != handle_args + op.coords() {
                    problems.push(format!(
                        "texture: takes {} operands, got {}",
                        handle_args + op.coords(),
                        args.len()
                    ));
                }
                for (k, &a) in args.iter().enumerate() {
                    let want = if k < handle_args {
                        Type::I64
                    } else {
                        Type::I32
                    };
                    if t(a) != want {
                        problems.push(format!("texture: operand {k} must be {want}, got {}", t(a)));
                    }
                }
                let results: Vec<Type> = (0..op.results()).map(|_| Type::I32).collect();
                expect_results(&results, &mut problems);
            }
            InstData::Shfl { args, .. } => {
                for &a in args {
                    if t(a) != Type::I32 {
                        problems.push(format!("shfl: operands must be i32, got {}", t(a)));
                    }
                }
                expect_results(&[Type::I32, Type::Pred], &mut problems);
            }
            InstData::SubReturn { values } => {
                let tys: Vec<Type> = values.iter().map(|&v| t(v)).collect();
                let words = tys.iter().all(|&t| t == Type::I32);
                if !matches!(tys[..], [] | [Type::I32] | [Type::I64]) && !words {
                    problems.push(format!(
                        "ret.sub: results {tys:?}: none, one i32 or one i64, or i32 words (R4.. up to 12, else the caller's buffer)"
                    ));
                }
                expect_results(&[], &mut problems);
            }
            InstData::ExternCall { args, arg_regs, .. } => {
                if args.len() != arg_regs.len() {
                    problems.push("call.extern: one register per argument".to_string());
                }
                for (&a, &r) in args.iter().zip(arg_regs) {
                    // From `STACK_ARG_REG` up: words of the outgoing stack area.
                    let ok = match t(a) {
                        Type::I32 => r >= 4,
                        Type::I64 => (4..=254).contains(&r) && r % 2 == 0,
                        _ => false,
                    };
                    if !ok {
                        problems.push(format!(
                            "call.extern: argument {a} ({}) in R{r}: i32 in R4.., i64 in an even pair",
                            t(a)
                        ));
                    }
                }
                let words = results.iter().all(|&r| r == Type::I32);
                if !words
                    && (results.len() > 1
                        || results.iter().any(|&r| r != Type::I32 && r != Type::I64))
                {
                    problems.push(
                        "call.extern: at most one result, i32 or i64, or i32 words (R4.. up to 12, else the caller's buffer)"
                            .to_string(),
                    );
                }
            }
            InstData::Collective { op, args } => {
                let name = op.name();
                if args.len() != op.arity() {
                    problems.push(format!("{name}: takes {} operands", op.arity()));
                }
                if let Some(&m) = args.last() {
                    if t(m) != Type::I32 {
                        problems.push(format!("{name}: membermask must be i32, got {}", t(m)));
                    }
                }
                if op.arity() == 2 {
                    let wide_ok = matches!(
                        op,
                        crate::ir::CollectiveOp::MatchAny | crate::ir::CollectiveOp::MatchAll
                    );
                    let at = t(args[0]);
                    if at != Type::I32 && !(wide_ok && at == Type::I64) {
                        problems.push(format!("{name}: operand type {at}"));
                    }
                }
                if op.has_pred() {
                    expect_results(&[Type::I32, Type::Pred], &mut problems);
                } else {
                    expect_results(&[Type::I32], &mut problems);
                }
            }
            InstData::Surface { access, args } => {
                let h = access.handle_operands();
                let n = access.coord_operands();
                let want = h + n + access.data_operands();
                if args.len() != want {
                    problems.push(format!("surface: {} operands, expected {want}", args.len()));
                } else {
                    if h == 1 && t(args[0]) != Type::I64 {
                        problems.push(format!("surface: handle must be i64, got {}", t(args[0])));
                    }
                    for &c in &args[h..h + n] {
                        if t(c) != Type::I32 {
                            problems.push(format!("surface: coordinate must be i32, got {}", t(c)));
                        }
                    }
                    for &d in &args[h + n..] {
                        if t(d) != access.ty {
                            problems.push(format!(
                                "surface: data must be {}, got {}",
                                access.ty,
                                t(d)
                            ));
                        }
                    }
                }
                let ok_ty = match access.width {
                    1 => matches!(access.ty, Type::I8 | Type::I16 | Type::I32 | Type::I64),
                    2 => matches!(access.ty, Type::I32 | Type::I64),
                    4 => access.ty == Type::I32,
                    _ => false,
                };
                if !ok_ty {
                    problems.push(format!(
                        "surface: bad data shape {}x{}",
                        access.width, access.ty
                    ));
                }
                let r: Vec<Type> = (0..access.results()).map(|_| access.ty).collect();
                expect_results(&r, &mut problems);
            }
            InstData::Vote { mode, arg } => {
                if t(*arg) != Type::Pred {
                    problems.push(format!("vote: operand must be pred, got {}", t(*arg)));
                }
                let r = if *mode == crate::ir::VoteMode::Ballot {
                    Type::I32
                } else {
                    Type::Pred
                };
                expect_results(&[r], &mut problems);
            }
            InstData::Bits { op, args } => {
                if args.len() != op.arity() {
                    problems.push(format!(
                        "{}: takes {} operands, got {}",
                        op.name(),
                        op.arity(),
                        args.len()
                    ));
                }
                for &a in args {
                    if t(a) != Type::I32 {
                        problems.push(format!("{}: operands must be i32, got {}", op.name(), t(a)));
                    }
                }
                expect_results(&[Type::I32], &mut problems);
            }
        }
        for message in problems {
            self.errors.push(VerifierError::Type { inst, message });
        }
    }

    fn check_targets(&mut self, inst: Inst, in_layout: &InLayout) {
        let func = self.func;
        for call in func.insts[inst].data.targets() {
            let block = call.block;
            if !in_layout[block] {
                self.errors.push(VerifierError::BadTarget { inst, block });
                continue;
            }
            let params = &func.blocks[block].params;
            if params.len() != call.args.len() {
                self.errors.push(VerifierError::BlockArgCount {
                    inst,
                    block,
                    expected: params.len(),
                    got: call.args.len(),
                });
                continue;
            }
            for (index, (&p, &a)) in params.iter().zip(&call.args).enumerate() {
                let (Some(expected), Some(got)) = (self.ty(p), self.ty(a)) else {
                    continue;
                };
                if expected != got {
                    self.errors.push(VerifierError::BlockArgType {
                        inst,
                        block,
                        index,
                        expected,
                        got,
                    });
                }
            }
        }
    }
}

fn join(types: &[Type]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Immediate dominators by the Cooper–Harvey–Kennedy iteration over reverse postorder.
/// Function sizes here are small and the iteration is simple enough to trust. Also used by
/// instruction selection to share address chains with dominated blocks.
pub(crate) struct Dominators {
    /// Reverse-postorder number of each reachable block.
    rpo_index: SecondaryMap<Block, Option<usize>>,
    /// Immediate dominator, indexed by RPO number (the entry is its own).
    idom: Vec<usize>,
    /// The reachable blocks in reverse postorder (RPO number → block).
    rpo: Vec<Block>,
}

impl Dominators {
    /// Dominators over the blocks in `func`'s layout.
    pub(crate) fn of(func: &Function) -> Dominators {
        if func.layout.is_empty() {
            return Dominators {
                rpo_index: SecondaryMap::new(),
                idom: Vec::new(),
                rpo: Vec::new(),
            };
        }
        let mut in_layout = InLayout::new();
        for &b in &func.layout {
            in_layout[b] = true;
        }
        Dominators::compute(func, &in_layout)
    }

    fn compute(func: &Function, in_layout: &InLayout) -> Dominators {
        let entry = func.layout[0];
        // Every layout block's successors (in layout, in target order), gathered once into
        // one vector: `flat[range[b].0..range[b].1]`. `in_layout` holds exactly the layout
        // blocks (both callers), so the walk below never meets a block without its range.
        // (Vectors and maps below sized up front from the function's counts: capacity only.)
        let mut flat: Vec<Block> = Vec::with_capacity(2 * func.layout.len());
        let mut range: SecondaryMap<Block, (u32, u32)> = SecondaryMap::new();
        range.resize(func.blocks.len());
        for &b in &func.layout {
            let first = flat.len() as u32;
            if let Some(&i) = func.blocks[b].insts.last() {
                for c in func.insts[i].data.targets() {
                    if in_layout[c.block] {
                        flat.push(c.block);
                    }
                }
            }
            range[b] = (first, flat.len() as u32);
        }
        let succs = |b: Block| -> &[Block] {
            let (a, z) = range[b];
            &flat[a as usize..z as usize]
        };
        // Iterative DFS for postorder (no recursion: deep CFGs must not overflow the stack).
        let mut postorder = Vec::with_capacity(func.layout.len());
        let mut visited: SecondaryMap<Block, bool> = SecondaryMap::new();
        visited.resize(func.blocks.len());
        let mut stack = vec![(entry, 0usize)];
        visited[entry] = true;
        while let Some((b, i)) = stack.last_mut() {
            let ss = succs(*b);
            if *i < ss.len() {
                let s = ss[*i];
                *i += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                postorder.push(*b);
                stack.pop();
            }
        }
        let rpo: Vec<Block> = postorder.into_iter().rev().collect();
        let mut rpo_index: SecondaryMap<Block, Option<usize>> = SecondaryMap::new();
        rpo_index.resize(func.blocks.len());
        for (i, &b) in rpo.iter().enumerate() {
            rpo_index[b] = Some(i);
        }
        // Each block's predecessors (by RPO index, in the order the successor lists name
        // them) in one flat vector, `pred_list[pred_start[b]..pred_start[b + 1]]`, instead
        // of a vector per block: counted, then placed.
        let mut pred_start = vec![0usize; rpo.len() + 1];
        for &b in &rpo {
            for &s in succs(b) {
                if let Some(si) = rpo_index[s] {
                    pred_start[si + 1] += 1;
                }
            }
        }
        for k in 0..rpo.len() {
            pred_start[k + 1] += pred_start[k];
        }
        let mut fill = pred_start.clone();
        let mut pred_list = vec![0usize; pred_start[rpo.len()]];
        for (i, &b) in rpo.iter().enumerate() {
            for &s in succs(b) {
                if let Some(si) = rpo_index[s] {
                    pred_list[fill[si]] = i;
                    fill[si] += 1;
                }
            }
        }
        let preds = |b: usize| &pred_list[pred_start[b]..pred_start[b + 1]];
        const UNDEF: usize = usize::MAX;
        let mut idom = vec![UNDEF; rpo.len()];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for b in 1..rpo.len() {
                let mut new = UNDEF;
                for &p in preds(b) {
                    if idom[p] == UNDEF {
                        continue;
                    }
                    new = if new == UNDEF {
                        p
                    } else {
                        intersect(&idom, p, new)
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        Dominators {
            rpo_index,
            idom,
            rpo,
        }
    }

    /// The immediate dominator of `b`; `None` for the entry and for unreachable blocks.
    pub(crate) fn idom(&self, b: Block) -> Option<Block> {
        let k = self.rpo_index[b]?;
        (k != 0).then(|| self.rpo[self.idom[k]])
    }

    fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index[b].is_some()
    }

    /// Does `a` dominate `b` (reflexively)? False if either is unreachable.
    pub(crate) fn dominates(&self, a: Block, b: Block) -> bool {
        let (Some(a), Some(mut b)) = (self.rpo_index[a], self.rpo_index[b]) else {
            return false;
        };
        loop {
            if a == b {
                return true;
            }
            if b == 0 {
                return false;
            }
            b = self.idom[b];
        }
    }
}

fn intersect(idom: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while a > b {
            a = idom[a];
        }
        while b > a {
            b = idom[b];
        }
    }
    a
}
