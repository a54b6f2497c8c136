//! Narrowing 64-bit shared-memory and constant-bank addresses to 32 bits.
//!
//! In: a verified [`Function`] (after [`super::simplify`]) and its [`Module`]. Out: the same
//! function, still verified, in which every `i64` value whose every use needs only its low 32
//! bits on the way to a `.shared` or `.const` access has become an `i32` value;
//! [`narrow_addresses`] returns how many values it narrowed.
//!
//! # Why
//!
//! NVVM and the older front ends write shared pointers as 64-bit values in 64-bit modules:
//! `mov.u64 %rd1, s_left; mul.wide.u32 %rd7, %r5, 4; add.u64 %rd8, %rd7, %rd1; ld.shared.f32
//! [%rd8]`. A `.shared` address is 32 bits (the interpreter truncates it, as the hardware
//! does: `ir::eval`'s `effective_address`), so the high word is never read. Lowering is
//! demand-driven and already computes only the low word where the address feeds its access
//! directly, but a pointer carried around a loop (a block parameter, `p += 4`) is a register
//! pair, and its high word (an `IADD.X` per step) holds a register for the whole loop. ptxas
//! keeps such pointers in one register.
//!
//! A `.const` address is 32 bits as well: `LDC` takes one register and a 16-bit offset into a
//! 64 KiB bank, and the interpreter truncates it too. NVVM walks `__constant__` tables with
//! 64-bit pointers (rodinia's `GICOV_kernel`: four, stepped by 8 in its loop, which held four
//! high words: 40 registers where ptxas has 24).
//!
//! # The rule
//!
//! An `i64` value is *narrowable* when it is defined by one of
//!
//! * `add`, `sub`, `mul`, `and`, `or`, `xor`, `shl` (the low word of the result depends only
//!   on the low words of the operands, and of `shl`'s first operand only), `neg`, `not`,
//!   `select`;
//! * `mulwide` of two `i32` (its low word is `mul.lo`), `zext`/`sext` of a narrower integer;
//! * `iconst`, `ld.param`, the address of a `.shared` or `.const` variable;
//! * a block parameter,
//!
//! and every use of it is one of
//!
//! * the address of a `.shared` `load`, `store` or `atom` (never a stored value), or of a
//!   `.const` `load`;
//! * `trunc` to 32 bits or fewer;
//! * an operand of a narrowable `add`, `sub`, `mul`, `and`, `or`, `xor`, `neg`, `not`,
//!   `select`, or the first operand of a narrowable `shl`;
//! * an argument to a narrowable block parameter.
//!
//! The set is the greatest fixed point: start from every candidate and drop a value as soon
//! as one of its uses disqualifies it, until nothing changes (a loop-carried pointer and its
//! increment qualify together). Each narrowable value then becomes `i32`: the operation is the
//! same on 32 bits (`mulwide` becomes `mul`, an extension of an `i32` becomes that `i32`, a
//! constant keeps its low word), and an operand that stays `i64` (a pointer loaded from
//! memory, say) is read through a new `trunc` (or the `i32` it was extended from).
//!
//! Trade-off: `mul`/`shl` by a constant on 32 bits can no longer become a `mul.wide`-shaped
//! address chain on a register pair, but a shared address never needed one: `LEA`/`ISCADD`
//! on one register is what ptxas emits. Comparisons of two shared pointers (`p != end`)
//! disqualify a pointer, since their high words are compared too; only its address uses
//! count. `.local` addresses are 32-bit as well, but `ir::sroa` owns those.

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap as HashMap;

use super::{
    BinaryOp, BlockCall, ConvOp, Function, Inst, InstData, Module, Space, Type, Value, ValueDef,
};

/// Narrow every narrowable `i64` value of `f` to `i32` (see the module documentation);
/// returns how many values were narrowed.
pub fn narrow_addresses(module: &Module, f: &mut Function) -> usize {
    let narrow = analyse(module, f);
    let count = f.values.keys().filter(|&v| narrow[v]).count();
    if count > 0 {
        rewrite(f, &narrow);
    }
    count
}

/// Whether `v`'s definition is one the rule can compute on 32 bits.
fn candidate(module: &Module, f: &Function, v: Value) -> bool {
    if f.values[v].ty != Type::I64 {
        return false;
    }
    let ValueDef::Result(i, _) = f.values[v].def else {
        return true;
    };
    match &f.insts[i].data {
        InstData::Binary { op, .. } => matches!(
            op,
            BinaryOp::Add
                | BinaryOp::Sub
                | BinaryOp::Mul
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Xor
                | BinaryOp::Shl
        ),
        InstData::Unary { .. } | InstData::Select { .. } => true,
        InstData::MulWide { args, .. } => f.values[args[0]].ty == Type::I32,
        InstData::Convert { op, arg, .. } => {
            *op != ConvOp::Trunc && f.values[*arg].ty.is_int() && f.values[*arg].ty.bits() <= 32
        }
        InstData::Iconst { .. } | InstData::LoadParam { .. } => true,
        InstData::SymbolAddr { var, .. } => {
            matches!(module.vars[*var].space, Space::Shared | Space::Const)
        }
        _ => false,
    }
}

/// The operands of `d` (an instruction whose results are narrowable exactly where `narrow`
/// says) that must keep all 64 bits; every other operand needs only its low word.
fn full_width_operands(
    f: &Function,
    d: &InstData,
    narrow: &SecondaryMap<Value, bool>,
    results: &[Value],
) -> Vec<Value> {
    let result_narrow = results.first().is_some_and(|&r| narrow[r]);
    match d {
        InstData::Load {
            space: Space::Shared | Space::Const,
            ..
        } => Vec::new(),
        InstData::Store {
            space: Space::Shared,
            values,
            ..
        } => values.to_vec(),
        InstData::Atomic {
            space: Space::Shared,
            args,
            ..
        } => args.to_vec(),
        InstData::Convert {
            op: ConvOp::Trunc,
            ty,
            ..
        } if ty.bits() <= 32 => Vec::new(),
        InstData::Binary {
            op: BinaryOp::Shl,
            args,
        } if result_narrow => vec![args[1]],
        InstData::Binary { .. } | InstData::Unary { .. } | InstData::Select { .. }
            if result_narrow =>
        {
            Vec::new()
        }
        InstData::Jump { .. } | InstData::Brif { .. } => {
            let mut out = Vec::new();
            if let InstData::Brif { cond, .. } = d {
                out.push(*cond);
            }
            for call in d.targets() {
                let params = &f.blocks[call.block].params;
                for (k, &a) in call.args.iter().enumerate() {
                    if !params.get(k).is_some_and(|&p| narrow[p]) {
                        out.push(a);
                    }
                }
            }
            out
        }
        _ => d.operands().to_vec(),
    }
}

/// The greatest set of candidates whose every use needs only their low word.
fn analyse(module: &Module, f: &Function) -> SecondaryMap<Value, bool> {
    let mut narrow: SecondaryMap<Value, bool> = SecondaryMap::new();
    narrow.resize(f.values.len());
    let mut any = false;
    for &b in &f.layout {
        for &p in &f.blocks[b].params {
            narrow[p] = candidate(module, f, p);
            any |= narrow[p];
        }
        for &i in &f.blocks[b].insts {
            for &r in &f.insts[i].results {
                narrow[r] = candidate(module, f, r);
                any |= narrow[r];
            }
        }
    }
    let mut changed = any;
    while changed {
        changed = false;
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                let node = &f.insts[i];
                for v in full_width_operands(f, &node.data, &narrow, &node.results) {
                    if narrow[v] {
                        narrow[v] = false;
                        changed = true;
                    }
                }
            }
        }
    }
    narrow
}

/// Make every narrowable value `i32` (see the module documentation).
fn rewrite(f: &mut Function, narrow: &SecondaryMap<Value, bool>) {
    // Values replaced by another (`zext` of an i32 → that i32; `trunc` to i32 of a narrowed
    // value → that value).
    let mut repl: HashMap<Value, Value> = HashMap::default();
    let blocks = f.layout.clone();
    for &b in &blocks {
        for &p in &f.blocks[b].params {
            if narrow[p] {
                f.values[p].ty = Type::I32;
            }
        }
        let insts = f.blocks[b].insts.clone();
        for i in insts {
            let results = f.insts[i].results.clone();
            let result_narrow = results.first().is_some_and(|&r| narrow[r]);
            if result_narrow {
                let r = results[0];
                f.values[r].ty = Type::I32;
                let dead = InstData::Iconst {
                    ty: Type::I32,
                    imm: 0,
                };
                match &mut f.insts[i].data {
                    InstData::Iconst { ty, imm } => {
                        *ty = Type::I32;
                        *imm &= 0xffff_ffff;
                    }
                    InstData::LoadParam { ty, .. } | InstData::SymbolAddr { ty, .. } => {
                        *ty = Type::I32
                    }
                    InstData::MulWide { args, .. } => {
                        let args = *args;
                        f.insts[i].data = InstData::Binary {
                            op: BinaryOp::Mul,
                            args,
                        };
                    }
                    InstData::Convert { ty, arg, .. } => {
                        if f.values[*arg].ty == Type::I32 {
                            repl.insert(r, *arg);
                            f.insts[i].data = dead;
                        } else {
                            *ty = Type::I32;
                        }
                    }
                    _ => {}
                }
            }
            // Operands that stay i64 where the (now 32-bit) user needs their low word.
            let data = f.insts[i].data.clone();
            match data {
                InstData::Convert {
                    op: ConvOp::Trunc,
                    ty: Type::I32,
                    arg,
                } if narrow[arg] => {
                    repl.insert(results[0], arg);
                    f.insts[i].data = InstData::Iconst {
                        ty: Type::I32,
                        imm: 0,
                    };
                }
                InstData::Binary { op, args } if result_narrow => {
                    let a = low_word(f, narrow, i, args[0]);
                    let c = if op == BinaryOp::Shl {
                        args[1]
                    } else {
                        low_word(f, narrow, i, args[1])
                    };
                    f.insts[i].data = InstData::Binary { op, args: [a, c] };
                }
                InstData::Unary { op, arg } if result_narrow => {
                    let a = low_word(f, narrow, i, arg);
                    f.insts[i].data = InstData::Unary { op, arg: a };
                }
                InstData::Select { cond, args } if result_narrow => {
                    let a = low_word(f, narrow, i, args[0]);
                    let c = low_word(f, narrow, i, args[1]);
                    f.insts[i].data = InstData::Select { cond, args: [a, c] };
                }
                InstData::Jump { .. } | InstData::Brif { .. } => {
                    let mut d = data;
                    match &mut d {
                        InstData::Jump { dest } => narrow_args(f, narrow, i, dest),
                        InstData::Brif {
                            then_dest,
                            else_dest,
                            ..
                        } => {
                            narrow_args(f, narrow, i, then_dest);
                            narrow_args(f, narrow, i, else_dest);
                        }
                        _ => {}
                    }
                    f.insts[i].data = d;
                }
                _ => {}
            }
        }
    }
    let resolve = |mut v: Value| {
        while let Some(&w) = repl.get(&v) {
            v = w;
        }
        v
    };
    for &b in &blocks {
        for &i in &f.blocks[b].insts {
            f.insts[i].data.map_operands(resolve);
        }
    }
}

/// The low word of `v` as an `i32` for an operand of `at`: `v` itself once narrowed, the
/// `i32` a `zext`/`sext` extended, or a new `iconst`/`trunc` placed just before `at`.
fn low_word(f: &mut Function, narrow: &SecondaryMap<Value, bool>, at: Inst, v: Value) -> Value {
    // A narrowed value (or one narrowed later in this walk: a loop-carried argument).
    if narrow[v] || f.values[v].ty != Type::I64 {
        return v;
    }
    let data = match f.values[v].def {
        ValueDef::Result(d, _) => match &f.insts[d].data {
            InstData::Convert {
                op: ConvOp::Zext | ConvOp::Sext,
                arg,
                ..
            } if f.values[*arg].ty == Type::I32 => return *arg,
            InstData::Iconst { imm, .. } => InstData::Iconst {
                ty: Type::I32,
                imm: imm & 0xffff_ffff,
            },
            _ => trunc(v),
        },
        ValueDef::Param(..) => trunc(v),
    };
    f.insert_before(at, data, Type::I32)
}

/// The arguments `call` passes to narrowed parameters, as `i32` (new instructions before `at`).
fn narrow_args(
    f: &mut Function,
    narrow: &SecondaryMap<Value, bool>,
    at: Inst,
    call: &mut BlockCall,
) {
    for k in 0..call.args.len() {
        if narrow[f.blocks[call.block].params[k]] {
            call.args[k] = low_word(f, narrow, at, call.args[k]);
        }
    }
}

/// `trunc.i32 v`.
fn trunc(v: Value) -> InstData {
    InstData::Convert {
        op: ConvOp::Trunc,
        ty: Type::I32,
        arg: v,
    }
}
