//! Property: for random address expressions (adds, subs, shifts, power-of-two and other
//! multiplies, `mulwide`, extensions, constants over 64- and 32-bit parameters), the matched
//! `base + (±ext(index) << shift) + disp` equals the expression's value for random parameter
//! values, modulo the address width. The expression is evaluated by a small evaluator written
//! here from the IR's documented semantics, independent of the matcher.

use leafold::ir::{BinaryOp, ConvOp, Function, FunctionBuilder, InstData, Type, Value, ValueDef};
use leafold::lower::amode::{match_address, Base, Ext, Facts};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum E {
    /// Parameter k (0..3: i64, 3..6: i32).
    Param(usize),
    Const(i64),
    Add(Box<E>, Box<E>),
    Sub(Box<E>, Box<E>),
    Shl(Box<E>, u8),
    Mul(Box<E>, i64),
    /// mulwide of an i32 expression by a constant.
    MulWide(bool, Box<E>, i64),
    /// sext/zext of an i32 expression.
    Ext(bool, Box<E>),
}

fn e32() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        (3usize..6).prop_map(E::Param),
        (-40i64..40).prop_map(E::Const)
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), 0u8..36).prop_map(|(a, k)| E::Shl(Box::new(a), k)),
            (
                inner,
                prop_oneof![Just(1i64), Just(4), Just(8), Just(3), Just(128)]
            )
                .prop_map(|(a, k)| E::Mul(Box::new(a), k)),
        ]
    })
}

fn e64() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        (0usize..3).prop_map(E::Param),
        (-1000i64..1000).prop_map(E::Const),
        (any::<bool>(), e32()).prop_map(|(s, a)| E::Ext(s, Box::new(a))),
        (
            any::<bool>(),
            e32(),
            prop_oneof![Just(1i64), Just(8), Just(128), Just(12)]
        )
            .prop_map(|(s, a, k)| E::MulWide(s, Box::new(a), k)),
    ];
    leaf.prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| E::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), 0u8..70).prop_map(|(a, k)| E::Shl(Box::new(a), k)),
            (inner, prop_oneof![Just(2i64), Just(16), Just(5)])
                .prop_map(|(a, k)| E::Mul(Box::new(a), k)),
        ]
    })
}

fn build(b: &mut FunctionBuilder, e: &E, params: &[Value], ty: Type) -> Value {
    match e {
        E::Param(k) => params[*k],
        E::Const(c) => b.iconst(ty, *c),
        E::Add(x, y) => {
            let (x, y) = (build(b, x, params, ty), build(b, y, params, ty));
            b.add(x, y)
        }
        E::Sub(x, y) => {
            let (x, y) = (build(b, x, params, ty), build(b, y, params, ty));
            b.sub(x, y)
        }
        E::Shl(x, k) => {
            let x = build(b, x, params, ty);
            let k = b.iconst(Type::I32, i64::from(*k));
            b.shl(x, k)
        }
        E::Mul(x, k) => {
            let x = build(b, x, params, ty);
            let k = b.iconst(ty, *k);
            b.mul(x, k)
        }
        E::MulWide(s, x, k) => {
            let x = build(b, x, params, Type::I32);
            let k = b.iconst(Type::I32, *k);
            b.mul_wide(*s, x, k)
        }
        E::Ext(s, x) => {
            let x = build(b, x, params, Type::I32);
            if *s {
                b.sext(Type::I64, x)
            } else {
                b.zext(Type::I64, x)
            }
        }
    }
}

/// The IR's semantics for the operations above (ir/mod.rs essay): wrapping arithmetic in the
/// value's width, shift counts at or beyond the width give 0, mulwide is the full product.
fn eval(f: &Function, v: Value, args: &[u64]) -> u64 {
    let ty = f.value_type(v);
    let mask = ty.mask();
    let ValueDef::Result(inst, _) = f.values[v].def else {
        unreachable!()
    };
    let sx32 = |x: u64| x as u32 as i32 as i64 as u64;
    let r = match &f.insts[inst].data {
        InstData::LoadParam { offset, .. } => args[(*offset / 8) as usize],
        InstData::Iconst { imm, .. } => *imm,
        InstData::Binary { op, args: a } => {
            let x = eval(f, a[0], args);
            let y = eval(f, a[1], args);
            match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Shl => {
                    let n = y & 0xffff_ffff;
                    if n >= u64::from(ty.bits()) {
                        0
                    } else {
                        x << n
                    }
                }
                _ => unreachable!(),
            }
        }
        InstData::MulWide { signed, args: a } => {
            let x = eval(f, a[0], args) & 0xffff_ffff;
            let y = eval(f, a[1], args) & 0xffff_ffff;
            if *signed {
                (sx32(x) as i64).wrapping_mul(sx32(y) as i64) as u64
            } else {
                x * y
            }
        }
        InstData::Convert { op, arg, .. } => {
            let x = eval(f, *arg, args) & 0xffff_ffff;
            match op {
                ConvOp::Sext => sx32(x),
                _ => x,
            }
        }
        d => panic!("unexpected {d:?}"),
    };
    r & mask
}

fn check(e: &E, wide: bool, offset: i32, vals: &[u64; 6]) -> Result<(), TestCaseError> {
    let mut f = Function::new("p");
    // Three i64 parameters at 0, 8, 16 and three i32 ones at 24, 32, 40 (8-byte slots so
    // that `offset / 8` indexes `vals`).
    for k in 0..6 {
        let size = if k < 3 { 8 } else { 4 };
        f.add_param(&format!("p{k}"), size, 8);
    }
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let params: Vec<Value> = (0..6)
        .map(|k| {
            let ty = if k < 3 { Type::I64 } else { Type::I32 };
            b.load_param(ty, 8 * k as u32)
        })
        .collect();
    let ty = if wide { Type::I64 } else { Type::I32 };
    let root = build(&mut b, e, &params, ty);
    let args: Vec<u64> = (0..6)
        .map(|k| {
            if k < 3 {
                vals[k]
            } else {
                vals[k] & 0xffff_ffff
            }
        })
        .collect();
    let no = |_: Value| false;
    let none = |_: Value| None;
    let facts = Facts {
        in_register: &no,
        constant: &none,
        frame: &none,
    };
    let m = match_address(&f, root, offset, wide, &facts, true);
    let width_mask = if wide { u64::MAX } else { 0xffff_ffff };
    let want = eval(&f, root, &args).wrapping_add(offset as i64 as u64) & width_mask;
    let base = match m.base {
        Base::None => 0,
        Base::Reg(v) => eval(&f, v, &args),
        Base::Param { value, .. } => eval(&f, value, &args),
    };
    let mut got = base.wrapping_add(m.disp as u64);
    if let Some(ix) = m.index {
        prop_assert!(ix.shift < 32);
        let x = eval(&f, ix.value, &args);
        let x = match ix.ext {
            Ext::None => x,
            Ext::Zext => x & 0xffff_ffff,
            Ext::Sext => x as u32 as i32 as i64 as u64,
        };
        let s = x << ix.shift;
        got = if ix.neg {
            got.wrapping_sub(s)
        } else {
            got.wrapping_add(s)
        };
    }
    prop_assert_eq!(got & width_mask, want, "mode {:?}", m);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn wide_modes_compute_the_address(e in e64(), off in any::<i32>(), vals in any::<[u64; 6]>()) {
        check(&e, true, off, &vals)?;
    }

    #[test]
    fn narrow_modes_compute_the_address(e in e32(), off in any::<i32>(), vals in any::<[u64; 6]>()) {
        check(&e, false, off, &vals)?;
    }
}
