//! Property tests of the IR: random well-typed straight-line integer functions verify and
//! evaluate without panicking (deterministically), and the interpreter's integer operations
//! agree with Rust's own wrapping / checked arithmetic on native integer types.

use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::ir::{
    verify, BinaryOp, Function, FunctionBuilder, IntCC, Space, Type, UnaryOp, Value,
};
use proptest::prelude::*;

const OUT: u64 = 0x1_0000_0000;
const INTS: [Type; 4] = [Type::I8, Type::I16, Type::I32, Type::I64];
const BINARY: [BinaryOp; 15] = [
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
        let y = if op.is_shift() { c } else { y };
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
