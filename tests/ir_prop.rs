//! Property tests of the IR: random well-typed straight-line integer functions verify and
//! evaluate without panicking (deterministically), and the interpreter's integer operations
//! agree with Rust's own wrapping / checked arithmetic on native integer types.

use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::ir::{
    verify, BinaryOp, CacheOp, Function, FunctionBuilder, IntCC, Space, Type, UnaryOp, Value,
};
use proptest::prelude::*;

const OUT: u64 = 0x1_0000_0000;
const INTS: [Type; 4] = [Type::I8, Type::I16, Type::I32, Type::I64];
const BINARY: [BinaryOp; 21] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::MulHiS,
    BinaryOp::MulHiU,
    BinaryOp::Shl,
    BinaryOp::ShrU,
    BinaryOp::ShrS,
    BinaryOp::And,
    BinaryOp::Or,
    BinaryOp::Xor,
    BinaryOp::MinS,
    BinaryOp::MinU,
    BinaryOp::MaxS,
    BinaryOp::MaxU,
    BinaryOp::DivU,
    BinaryOp::DivS,
    BinaryOp::RemU,
    BinaryOp::RemS,
    BinaryOp::AddSatS,
    BinaryOp::SubSatS,
];
const CACHES: [CacheOp; 8] = [
    CacheOp::Default,
    CacheOp::Cg,
    CacheOp::Cs,
    CacheOp::Lu,
    CacheOp::Cv,
    CacheOp::Wt,
    CacheOp::Nc,
    CacheOp::Volatile,
];

const CCS: [IntCC; 10] = [
    IntCC::Eq,
    IntCC::Ne,
    IntCC::Slt,
    IntCC::Sle,
    IntCC::Sgt,
    IntCC::Sge,
    IntCC::Ult,
    IntCC::Ule,
    IntCC::Ugt,
    IntCC::Uge,
];

/// One random step: an opcode choice, a type choice, two operand picks and an immediate.
type Step = (u8, u8, u16, u16, i64);

fn ty_index(t: Type) -> usize {
    INTS.iter().position(|&x| x == t).unwrap()
}

/// Build a straight-line kernel from random steps. Every step picks its operands from values
/// of the right type already defined, so the result is well-typed by construction.
fn build_random(seeds: [i64; 4], steps: &[Step]) -> Function {
    let mut func = Function::new("rand");
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let mut pools: [Vec<Value>; 4] = Default::default();
    for (i, &t) in INTS.iter().enumerate() {
        pools[i].push(b.iconst(t, seeds[i]));
    }
    for &(op, ty, a, c, k) in steps {
        let ti = usize::from(ty) % 4;
        let t = INTS[ti];
        let pick =
            |pools: &[Vec<Value>; 4], i: usize, n: u16| pools[i][usize::from(n) % pools[i].len()];
        let x = pick(&pools, ti, a);
        let y = pick(&pools, ti, c);
        let count = pick(&pools, 2, c);
        let v = match op % 23 {
            n @ 0..=14 => {
                let bop = BINARY[usize::from(n)];
                b.binary(bop, x, if bop.is_shift() { count } else { y })
            }
            15 => b.unary(UnaryOp::Not, x),
            16 => b.unary(UnaryOp::Neg, x),
            17 if matches!(t, Type::I16 | Type::I32) => b.mul_wide(k & 1 == 0, x, y),
            18 | 19 if t != Type::I64 => {
                let wider = INTS[ti + 1 + (k.unsigned_abs() as usize) % (3 - ti)];
                if op % 23 == 18 {
                    b.sext(wider, x)
                } else {
                    b.zext(wider, x)
                }
            }
            20 if t != Type::I8 => {
                let narrower = INTS[(k.unsigned_abs() as usize) % ti];
                b.trunc(narrower, x)
            }
            21 => {
                let p = b.icmp(CCS[(k.unsigned_abs() as usize) % 10], x, y);
                b.select(p, x, y)
            }
            _ => b.iconst(t, k),
        };
        let vt = b.func.value_type(v);
        pools[ty_index(vt)].push(v);
    }
    let out = b.load_param(Type::I64, out_off);
    for (i, pool) in pools.iter().enumerate() {
        b.store(Space::Global, out, 8 * i as i32, &[*pool.last().unwrap()]);
    }
    b.ret();
    func
}

fn launch() -> Launch {
    let mut l = Launch::new([1, 1, 1], [2, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 32],
    }];
    l
}

/// Evaluate one binary op on constants of type `t`; the result zero-extended to u64.
fn eval_binary(op: BinaryOp, t: Type, x: u64, y: u64) -> u64 {
    let mut func = Function::new("op");
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.iconst(t, x as i64);
    let c = if op.is_shift() {
        b.iconst(Type::I32, y as i64)
    } else {
        b.iconst(t, y as i64)
    };
    let r = b.binary(op, a, c);
    let r = if t == Type::I64 {
        r
    } else {
        b.zext(Type::I64, r)
    };
    let out = b.load_param(Type::I64, out_off);
    b.store(Space::Global, out, 0, &[r]);
    b.ret();
    let res = eval::run_function(&func, &launch()).expect("run");
    u64::from_le_bytes(res.region(OUT).unwrap()[..8].try_into().unwrap())
}

/// What Rust's native arithmetic says for each op at one width.
macro_rules! native {
    ($u:ty, $i:ty, $op:expr, $x:expr, $y:expr) => {{
        let (x, y) = ($x as $u, $y as $u);
        let (sx, sy) = (x as $i, y as $i);
        let count = $y as u32;
        let r: $u = match $op {
            BinaryOp::Add => x.wrapping_add(y),
            BinaryOp::Sub => x.wrapping_sub(y),
            BinaryOp::Mul => x.wrapping_mul(y),
            BinaryOp::MulHiU => ((x as u128 * y as u128) >> <$u>::BITS) as $u,
            BinaryOp::MulHiS => ((sx as i128 * sy as i128) >> <$u>::BITS) as $u,
            BinaryOp::Shl => x.checked_shl(count).unwrap_or(0),
            BinaryOp::ShrU => x.checked_shr(count).unwrap_or(0),
            BinaryOp::ShrS => sx.checked_shr(count).unwrap_or(if sx < 0 { -1 } else { 0 }) as $u,
            BinaryOp::And => x & y,
            BinaryOp::Or => x | y,
            BinaryOp::Xor => x ^ y,
            BinaryOp::MinS => sx.min(sy) as $u,
            BinaryOp::MinU => x.min(y),
            BinaryOp::MaxS => sx.max(sy) as $u,
            BinaryOp::MaxU => x.max(y),
            // Division by zero is all ones in the IR; MIN / -1 wraps.
            BinaryOp::DivU => x.checked_div(y).unwrap_or(<$u>::MAX),
            BinaryOp::RemU => x.checked_rem(y).unwrap_or(<$u>::MAX),
            BinaryOp::DivS if sy == 0 => <$u>::MAX,
            BinaryOp::DivS => sx.wrapping_div(sy) as $u,
            BinaryOp::RemS if sy == 0 => <$u>::MAX,
            BinaryOp::RemS => sx.wrapping_rem(sy) as $u,
            BinaryOp::AddSatS => sx.saturating_add(sy) as $u,
            BinaryOp::SubSatS => sx.saturating_sub(sy) as $u,
        };
        r as u64
    }};
}

fn shift_count() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..70, any::<u32>().prop_map(u64::from)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_functions_verify_and_run(
        seeds in any::<[i64; 4]>(),
        steps in proptest::collection::vec(any::<Step>(), 0..60),
    ) {
        let func = build_random(seeds, &steps);
        prop_assert_eq!(verify(&func), Ok(()));
        let first = eval::run_function(&func, &launch());
        prop_assert!(first.is_ok(), "{:?}\n{}", first, func);
        // Both threads stored the same values; a rerun gives the same bytes.
        prop_assert_eq!(first, eval::run_function(&func, &launch()));
        // The text form never panics and names every instruction once.
        let text = func.to_string();
        prop_assert_eq!(text.lines().count(), func.insts.len() + 3);
    }

    #[test]
    fn binary_ops_agree_with_rust(
        op in proptest::sample::select(BINARY.to_vec()),
        ti in 0usize..4,
        x in any::<u64>(),
        y in any::<u64>(),
        c in shift_count(),
    ) {
        let t = INTS[ti];
        let div = matches!(op, BinaryOp::DivU | BinaryOp::DivS | BinaryOp::RemU | BinaryOp::RemS);
        let y = match c % 4 {
            _ if op.is_shift() => c,
            // Divisors 0 and -1 (the special cases) a quarter of the time each.
            0 if div => 0,
            1 if div => u64::MAX,
            _ => y,
        };
        let expected = match t {
            Type::I8 => native!(u8, i8, op, x, y),
            Type::I16 => native!(u16, i16, op, x, y),
            Type::I32 => native!(u32, i32, op, x, y),
            _ => native!(u64, i64, op, x, y),
        };
        prop_assert_eq!(eval_binary(op, t, x, y), expected, "{:?} {} {:#x} {:#x}", op, t, x, y);
    }

    #[test]
    fn mul_wide_agrees_with_rust(x in any::<u32>(), y in any::<u32>()) {
        let mut func = Function::new("mw");
        let out_off = func.add_param("out", 8, 8);
        let mut b = FunctionBuilder::new(&mut func);
        let e = b.create_block();
        b.switch_to_block(e);
        let a = b.iconst(Type::I32, i64::from(x));
        let c = b.iconst(Type::I32, i64::from(y));
        let s = b.mul_wide(true, a, c);
        let u = b.mul_wide(false, a, c);
        let out = b.load_param(Type::I64, out_off);
        b.store(Space::Global, out, 0, &[s, u]);
        b.ret();
        let mut l = launch();
        l.global[0].bytes = vec![0; 16];
        let r = eval::run_function(&func, &l).unwrap();
        let bytes = r.region(OUT).unwrap();
        let got_s = i64::from_le_bytes(bytes[..8].try_into().unwrap());
        let got_u = u64::from_le_bytes(bytes[8..].try_into().unwrap());
        prop_assert_eq!(got_s, i64::from(x as i32) * i64::from(y as i32));
        prop_assert_eq!(got_u, u64::from(x) * u64::from(y));
    }
}

/// Raw instruction data with arbitrary (sometimes foreign) values, blocks and types, placed
/// without the builder's care: verify, display and eval must answer, never panic. Value
/// numbers are taken modulo a little more than the values defined so far, so most operands
/// exist and a fair share of the functions verify and really run.
fn arbitrary_inst(
    (kind, t, v1, v2, v3, blk, imm): (u8, u8, u8, u8, u8, u8, i64),
    nvals: usize,
) -> leafold::ir::InstData {
    use cranelift_entity::EntityRef;
    use leafold::ir::{Block, BlockCall, ConvOp, CvtaDir, InstData, SpecialReg};
    const TYPES: [Type; 8] = [
        Type::I32,
        Type::I64,
        Type::I16,
        Type::I8,
        Type::Pred,
        Type::F32,
        Type::F64,
        Type::F16,
    ];
    const SPACES: [Space; 6] = [
        Space::Global,
        Space::Shared,
        Space::Local,
        Space::Const,
        Space::Param,
        Space::Generic,
    ];
    let ty = TYPES[usize::from(t) % 8];
    let space = SPACES[usize::from(v3) % 6];
    let val = |n: u8| Value::new(usize::from(n) % (nvals + 2));
    let (a, b, c) = (val(v1), val(v2), val(v3));
    let call = |n: u8, args: &[Value]| BlockCall {
        block: Block::new(usize::from(n % 5)),
        args: args.iter().copied().collect(),
    };
    let args: &[Value] = if imm & 2 == 0 { &[] } else { &[c] };
    match kind % 16 {
        0 => InstData::Iconst {
            ty,
            imm: imm as u64,
        },
        1 => InstData::LoadParam {
            ty,
            offset: (imm as u32) % 64,
        },
        2 => InstData::SpecialReg {
            reg: SpecialReg::LaneId,
        },
        3 => InstData::Unary {
            op: UnaryOp::Neg,
            arg: a,
        },
        4 => InstData::Binary {
            op: BINARY[usize::from(v3) % 15],
            args: [a, b],
        },
        5 => InstData::MulWide {
            signed: imm & 1 == 0,
            args: [a, b],
        },
        6 => InstData::Convert {
            op: [ConvOp::Sext, ConvOp::Zext, ConvOp::Trunc][usize::from(v3) % 3],
            ty,
            arg: a,
        },
        7 => InstData::Select {
            cond: a,
            args: [b, c],
        },
        8 => InstData::Icmp {
            cc: CCS[usize::from(v3) % 10],
            args: [a, b],
        },
        9 => InstData::Load {
            space,
            ty,
            width: (imm as u8) % 5,
            addr: a,
            offset: (imm as i32) % 64,
            cache: CACHES[usize::from(v3) % CACHES.len()],
        },
        10 => InstData::Store {
            space,
            ty,
            addr: a,
            offset: (imm as i32) % 64,
            values: [b, c].into_iter().take(1 + (imm as usize & 1)).collect(),
            cache: CACHES[usize::from(v3) % CACHES.len()],
        },
        11 => InstData::Cvta {
            dir: if imm & 1 == 0 {
                CvtaDir::ToGeneric
            } else {
                CvtaDir::FromGeneric
            },
            space,
            ty,
            arg: a,
        },
        12 => InstData::Jump {
            dest: call(blk, args),
        },
        13 => InstData::Brif {
            cond: a,
            then_dest: call(blk, args),
            else_dest: call(blk / 5, &[]),
        },
        14 => InstData::Fconst {
            ty,
            bits: imm as u64,
        },
        _ => InstData::Return,
    }
}

/// The result types a careful builder would give `data` (i32 for foreign operands).
fn result_types(func: &Function, data: &leafold::ir::InstData) -> Vec<Type> {
    use leafold::ir::InstData;
    let t = |v: Value| func.values.get(v).map_or(Type::I32, |d| d.ty);
    match data {
        InstData::Iconst { ty, .. }
        | InstData::Fconst { ty, .. }
        | InstData::LoadParam { ty, .. }
        | InstData::SymbolAddr { ty, .. }
        | InstData::Convert { ty, .. }
        | InstData::Cvta { ty, .. } => vec![*ty],
        InstData::SpecialReg { reg } => vec![reg.ty()],
        InstData::Unary { arg, .. } => vec![t(*arg)],
        InstData::Binary { args, .. } | InstData::Select { args, .. } => vec![t(args[0])],
        InstData::MulWide { args, .. } => vec![t(args[0]).double_width().unwrap_or(Type::I64)],
        InstData::Icmp { .. } => vec![Type::Pred],
        InstData::Load { ty, width, .. } => vec![*ty; usize::from(*width)],
        _ => vec![],
    }
}

type RawInst = (u8, u8, u8, u8, u8, u8, i64);

fn raw_inst() -> impl Strategy<Value = RawInst> {
    (
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<i64>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_ir_never_panics(
        blocks in proptest::collection::vec(
            (0u8..2, proptest::collection::vec(raw_inst(), 0..10), proptest::bool::weighted(0.9)),
            1..5,
        ),
    ) {
        use leafold::ir::{InstData, InstNode, ValueData, ValueDef};
        let mut func = Function::new("fuzz");
        func.add_param("p", 8, 8);
        let nblocks = blocks.len();
        for (bi, (nparams, insts, ret)) in blocks.into_iter().enumerate() {
            let block = func.blocks.push(Default::default());
            func.layout.push(block);
            let nparams = if bi == 0 { 0 } else { nparams };
            for i in 0..usize::from(nparams) {
                let v = func.values.push(ValueData { ty: Type::I32, def: ValueDef::Param(block, i) });
                func.blocks[block].params.push(v);
            }
            let mut datas: Vec<InstData> =
                insts.into_iter().map(|raw| arbitrary_inst(raw, func.values.len())).collect();
            // Mostly end blocks properly, so that some functions get past the verifier.
            if ret {
                datas.retain(|d| !d.is_terminator());
                datas.push(if bi + 1 < nblocks {
                    InstData::Jump { dest: leafold::ir::BlockCall {
                        block: cranelift_entity::EntityRef::new(bi + 1),
                        args: Default::default(),
                    } }
                } else {
                    InstData::Return
                });
            }
            for data in datas {
                let types = result_types(&func, &data);
                let inst = func.insts.push(InstNode { data, results: Default::default(), block });
                for (r, ty) in types.into_iter().enumerate() {
                    let v = func.values.push(ValueData { ty, def: ValueDef::Result(inst, r) });
                    func.insts[inst].results.push(v);
                }
                func.blocks[block].insts.push(inst);
            }
        }
        let _ = func.to_string();
        let verdict = verify(&func);
        let mut l = launch();
        l.step_limit = 10_000;
        l.params = vec![0; 64];
        l.dynamic_shared = 64;
        l.local_size = 64;
        let run = eval::run_function(&func, &l);
        if verdict.is_err() {
            prop_assert!(matches!(run, Err(eval::EvalError::Invalid(_))));
        } else {
            prop_assert!(!matches!(run, Err(eval::EvalError::Invalid(_))));
        }
    }
}
