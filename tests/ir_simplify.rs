//! `ir::simplify`: each rule, and folding, checked against the reference interpreter.
//!
//! Every case builds a one-thread kernel that reads two operands `x`, `y` from its
//! parameters, computes one value and stores it; the kernel is run by `ir::eval` before and
//! after simplification on the same operands, and the stored bytes must agree. The shape
//! check (how many pure instructions are left, and which) makes sure the rule fired, so a
//! pass that did nothing would fail here too.

use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::ir::simplify::{is_pure, simplify};
use leafold::ir::{
    verify, BinaryOp, BitOp, ConvOp, Dim, Function, FunctionBuilder, InstData, IntCC, Space,
    SpecialReg, Type, UnaryOp, Value,
};
use proptest::prelude::*;

const OUT: u64 = 0x1_0000_0000;

type Body = fn(&mut FunctionBuilder, Value, Value) -> Value;
type FoldBody = dyn Fn(&mut FunctionBuilder) -> Value;

/// The kernel: `x = param[0]`, `y = param[8]` (both of type `ty`), store `body(x, y)` (a
/// predicate as an i32 0/1) to `[param[16]]`.
fn kernel(ty: Type, body: impl FnOnce(&mut FunctionBuilder, Value, Value) -> Value) -> Function {
    let mut func = Function::new("k");
    let xo = func.add_param("x", 8, 8);
    let yo = func.add_param("y", 8, 8);
    let oo = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let entry = b.create_block();
    b.switch_to_block(entry);
    let x = b.load_param(ty, xo);
    let y = b.load_param(ty, yo);
    let out = b.load_param(Type::I64, oo);
    let mut r = body(&mut b, x, y);
    if b.func.value_type(r) == Type::Pred {
        let one = b.iconst(Type::I32, 1);
        let zero = b.iconst(Type::I32, 0);
        r = b.select(r, one, zero);
    }
    b.store(Space::Global, out, 0, &[r]);
    b.ret();
    func
}

fn run(f: &Function, x: u64, y: u64) -> Vec<u8> {
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = [x, y, OUT].iter().flat_map(|v| v.to_le_bytes()).collect();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 8],
    }];
    let out = eval::run_function(f, &launch).expect("run");
    out.region(OUT).unwrap().to_vec()
}

/// The pure instructions left in the function's blocks.
fn pure_left(f: &Function) -> usize {
    f.layout
        .iter()
        .flat_map(|&b| &f.blocks[b].insts)
        .filter(|&&i| is_pure(&f.insts[i].data))
        .count()
}

/// Simplify a copy of `f`; it must verify and compute what `f` computes on every operand pair.
fn simplified(f: &Function, operands: &[(u64, u64)]) -> Function {
    if let Err(e) = verify(f) {
        panic!("test kernel does not verify: {e:?}\n{f}");
    }
    let mut s = f.clone();
    simplify(&mut s);
    if let Err(e) = verify(&s) {
        panic!("simplified IR does not verify: {e:?}\n{s}");
    }
    for &(x, y) in operands {
        assert_eq!(
            run(f, x, y),
            run(&s, x, y),
            "x = {x:#x}, y = {y:#x}\n{f}\n{s}"
        );
    }
    s
}

fn k(b: &mut FunctionBuilder, like: Value, imm: i64) -> Value {
    let ty = b.func.value_type(like);
    b.iconst(ty, imm)
}

fn k32(b: &mut FunctionBuilder, imm: i64) -> Value {
    b.iconst(Type::I32, imm)
}

/// (name, operand type, body, pure instructions left after the rule, text the result shows)
#[rustfmt::skip]
fn rules() -> Vec<(&'static str, Type, Body, usize, &'static str)> {
    use BinaryOp as B;
    vec![
        ("x+0", Type::I32, |b, x, _| { let z = k(b, x, 0); b.add(x, z) }, 0, ""),
        ("0+x", Type::I64, |b, x, _| { let z = k(b, x, 0); b.add(z, x) }, 0, ""),
        ("x-0", Type::I16, |b, x, _| { let z = k(b, x, 0); b.sub(x, z) }, 0, ""),
        ("x-x", Type::I32, |b, x, _| b.sub(x, x), 0, "iconst.i32 0"),
        ("x*1", Type::I32, |b, x, _| { let o = k(b, x, 1); b.mul(x, o) }, 0, ""),
        ("1*x", Type::I64, |b, x, _| { let o = k(b, x, 1); b.mul(o, x) }, 0, ""),
        ("x*0", Type::I32, |b, x, _| { let z = k(b, x, 0); b.mul(x, z) }, 0, "iconst.i32 0"),
        ("0*x", Type::I8, |b, x, _| { let z = k(b, x, 0); b.mul(z, x) }, 0, "iconst.i8 0"),
        ("x<<0", Type::I64, |b, x, _| { let z = k32(b, 0); b.shl(x, z) }, 0, ""),
        ("x>>u0", Type::I32, |b, x, _| { let z = k32(b, 0); b.binary(B::ShrU, x, z) }, 0, ""),
        ("x>>s0", Type::I16, |b, x, _| { let z = k32(b, 0); b.binary(B::ShrS, x, z) }, 0, ""),
        ("0<<y", Type::I32, |b, x, y| { let z = k(b, x, 0); b.shl(z, y) }, 0, "iconst.i32 0"),
        ("0>>sy", Type::I32, |b, x, y| { let z = k(b, x, 0); b.binary(B::ShrS, z, y) }, 0, ""),
        ("x|0", Type::I32, |b, x, _| { let z = k(b, x, 0); b.binary(B::Or, x, z) }, 0, ""),
        ("0|x", Type::I64, |b, x, _| { let z = k(b, x, 0); b.binary(B::Or, z, x) }, 0, ""),
        ("x^0", Type::I32, |b, x, _| { let z = k(b, x, 0); b.binary(B::Xor, x, z) }, 0, ""),
        ("x&0", Type::I32, |b, x, _| { let z = k(b, x, 0); b.binary(B::And, x, z) }, 0, "iconst.i32 0"),
        ("x&-1", Type::I16, |b, x, _| { let m = k(b, x, -1); b.binary(B::And, x, m) }, 0, ""),
        ("-1&x", Type::I64, |b, x, _| { let m = k(b, x, -1); b.binary(B::And, m, x) }, 0, ""),
        ("x|-1", Type::I32, |b, x, _| { let m = k(b, x, -1); b.binary(B::Or, x, m) }, 0, "iconst.i32 -1"),
        ("x^x", Type::I32, |b, x, _| b.binary(B::Xor, x, x), 0, "iconst.i32 0"),
        ("x&x", Type::I32, |b, x, _| b.binary(B::And, x, x), 0, ""),
        ("x|x", Type::I8, |b, x, _| b.binary(B::Or, x, x), 0, ""),
        ("min.s(x,x)", Type::I32, |b, x, _| b.binary(B::MinS, x, x), 0, ""),
        ("max.u(x,x)", Type::I16, |b, x, _| b.binary(B::MaxU, x, x), 0, ""),
        ("x/u1", Type::I32, |b, x, _| { let o = k(b, x, 1); b.binary(B::DivU, x, o) }, 0, ""),
        ("x/s1", Type::I64, |b, x, _| { let o = k(b, x, 1); b.binary(B::DivS, x, o) }, 0, ""),
        ("x%s1", Type::I32, |b, x, _| { let o = k(b, x, 1); b.binary(B::RemS, x, o) }, 0, "iconst.i32 0"),
        ("x/u0", Type::I32, |b, x, _| { let z = k(b, x, 0); b.binary(B::DivU, x, z) }, 0, "iconst.i32 -1"),
        ("x%s0", Type::I16, |b, x, _| { let z = k(b, x, 0); b.binary(B::RemS, x, z) }, 0, "iconst.i16 -1"),
        ("select(p,x,x)", Type::I32, |b, x, y| { let p = b.icmp(IntCC::Ult, x, y); b.select(p, x, x) }, 0, ""),
        ("select(true,x,y)", Type::I32, |b, x, y| {
            let (one, two) = (k(b, x, 1), k(b, x, 2));
            let p = b.icmp(IntCC::Slt, one, two);
            b.select(p, x, y)
        }, 0, ""),
        ("select(false,x,y)", Type::I64, |b, x, y| {
            let one = k(b, x, 1);
            let p = b.icmp(IntCC::Ne, one, one);
            b.select(p, x, y)
        }, 0, ""),
        ("icmp.eq x,x", Type::I32, |b, x, _| b.icmp(IntCC::Eq, x, x), 0, "iconst.i32 1"),
        ("icmp.ne x,x", Type::I32, |b, x, _| b.icmp(IntCC::Ne, x, x), 0, "iconst.i32 0"),
        ("icmp.slt x,x", Type::I64, |b, x, _| b.icmp(IntCC::Slt, x, x), 0, "iconst.i32 0"),
        ("icmp.sle x,x", Type::I16, |b, x, _| b.icmp(IntCC::Sle, x, x), 0, "iconst.i32 1"),
        ("icmp.ugt x,x", Type::I32, |b, x, _| b.icmp(IntCC::Ugt, x, x), 0, "iconst.i32 0"),
        ("icmp.uge x,x", Type::I32, |b, x, _| b.icmp(IntCC::Uge, x, x), 0, "iconst.i32 1"),
        ("and.pred p,true", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let t = b.icmp(IntCC::Eq, x, x);
            b.binary(B::And, p, t)
        }, 2, "icmp.ult"),
        ("or.pred p,true", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let t = b.icmp(IntCC::Eq, x, x);
            b.binary(B::Or, p, t)
        }, 0, "iconst.i32 1"),
        ("trunc(zext x)", Type::I32, |b, x, _| { let w = b.zext(Type::I64, x); b.trunc(Type::I32, w) }, 0, ""),
        ("trunc(sext x)", Type::I16, |b, x, _| { let w = b.sext(Type::I32, x); b.trunc(Type::I16, w) }, 0, ""),
        ("not(not x)", Type::I32, |b, x, _| { let n = b.unary(UnaryOp::Not, x); b.unary(UnaryOp::Not, n) }, 0, ""),
        ("neg(neg x)", Type::I64, |b, x, _| { let n = b.unary(UnaryOp::Neg, x); b.unary(UnaryOp::Neg, n) }, 0, ""),
        ("x+neg y", Type::I32, |b, x, y| { let n = b.unary(UnaryOp::Neg, y); b.add(x, n) }, 1, "sub.i32"),
        ("neg y+x", Type::I64, |b, x, y| { let n = b.unary(UnaryOp::Neg, y); b.add(n, x) }, 1, "sub.i64"),
        ("x-neg y", Type::I16, |b, x, y| { let n = b.unary(UnaryOp::Neg, y); b.sub(x, n) }, 1, "add.i16"),
        ("zext x*zext y", Type::I32, |b, x, y| { let (p, q) = (b.zext(Type::I64, x), b.zext(Type::I64, y)); b.mul(p, q) }, 1, "mulwide.u.i32"),
        ("sext x*sext y", Type::I32, |b, x, y| { let (p, q) = (b.sext(Type::I64, x), b.sext(Type::I64, y)); b.mul(p, q) }, 1, "mulwide.s.i32"),
        ("zext x*96", Type::I32, |b, x, _| { let p = b.zext(Type::I64, x); let c = b.iconst(Type::I64, 96); b.mul(p, c) }, 1, "mulwide.u.i32"),
        ("-3*sext x", Type::I32, |b, x, _| { let p = b.sext(Type::I64, x); let c = b.iconst(Type::I64, -3); b.mul(c, p) }, 1, "mulwide.s.i32"),
        // Mixed extensions, or a constant the extension cannot give back: left alone.
        ("zext x*sext y", Type::I32, |b, x, y| { let (p, q) = (b.zext(Type::I64, x), b.sext(Type::I64, y)); b.mul(p, q) }, 3, "mul.i64"),
        ("zext x*-3", Type::I32, |b, x, _| { let p = b.zext(Type::I64, x); let c = b.iconst(Type::I64, -3); b.mul(p, c) }, 2, "mul.i64"),
        ("sext x*2^31", Type::I32, |b, x, _| { let p = b.sext(Type::I64, x); let c = b.iconst(Type::I64, 3 << 31); b.mul(p, c) }, 2, "mul.i64"),
        ("numbering: x*y, y*x", Type::I32, |b, x, y| { let p = b.mul(x, y); let q = b.mul(y, x); b.sub(p, q) }, 0, "iconst.i32 0"),
        ("numbering: equal constants", Type::I64, |b, x, _| {
            let (c1, c2) = (k(b, x, 12345), k(b, x, 12345));
            let (p, q) = (b.add(x, c1), b.add(x, c2));
            b.binary(B::Xor, p, q)
        }, 0, "iconst.i64 0"),
        ("numbering: %tid.x twice", Type::I32, |b, _, _| {
            let t1 = b.special_reg(SpecialReg::Tid(Dim::X));
            let t2 = b.special_reg(SpecialReg::Tid(Dim::X));
            b.sub(t1, t2)
        }, 0, "iconst.i32 0"),
        // Not commutative: x-y and y-x stay two.
        ("numbering: x-y, y-x", Type::I32, |b, x, y| { let p = b.sub(x, y); let q = b.sub(y, x); b.add(p, q) }, 3, "sub.i32"),
        ("neg(select(p,1,0))", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let (one, zero) = (k(b, x, 1), k(b, x, 0));
            let s = b.select(p, one, zero);
            b.unary(UnaryOp::Neg, s)
        }, 2, "select"),
        ("not(select(p,-1,5))", Type::I16, |b, x, y| {
            let p = b.icmp(IntCC::Sgt, x, y);
            let (m1, five) = (k(b, x, -1), k(b, x, 5));
            let s = b.select(p, m1, five);
            b.unary(UnaryOp::Not, s)
        }, 2, "select"),
        ("and(set, x)", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Eq, x, y);
            let (m1, zero) = (k(b, x, -1), k(b, x, 0));
            let s = b.select(p, m1, zero);
            b.binary(B::And, s, x)
        }, 2, "select"),
        ("or(x, selp 0, -1)", Type::I64, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let (m1, zero) = (k(b, x, -1), k(b, x, 0));
            let s = b.select(p, zero, m1);
            b.binary(B::Or, x, s)
        }, 2, "select"),
        ("y * selp 1, 0", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Slt, x, y);
            let (one, zero) = (k(b, x, 1), k(b, x, 0));
            let s = b.select(p, one, zero);
            b.mul(y, s)
        }, 2, "select"),
        ("x - selp 0, 0", Type::I16, |b, x, y| {
            let p = b.icmp(IntCC::Slt, x, y);
            let (z1, z2) = (k(b, x, 0), k(b, x, 0));
            let s = b.select(p, z1, z2);
            b.sub(x, s)
        }, 0, ""),
        // select(p, 2, 0) - x: neither outcome is x or a constant: left alone.
        ("selp 2, 0 - x", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Slt, x, y);
            let (two, zero) = (k(b, x, 2), k(b, x, 0));
            let s = b.select(p, two, zero);
            b.sub(s, x)
        }, 3, "sub.i32"),
        ("selp 1,0 == 0", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let (one, zero, z) = (k(b, x, 1), k(b, x, 0), k(b, x, 0));
            let s = b.select(p, one, zero);
            b.icmp(IntCC::Eq, s, z)
        }, 2, "icmp.uge"),
        ("selp 1,0 != 1", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let (one, zero, o) = (k(b, x, 1), k(b, x, 0), k(b, x, 1));
            let s = b.select(p, one, zero);
            b.icmp(IntCC::Ne, s, o)
        }, 2, "icmp.uge"),
        ("selp 1,0 == 7", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let (one, zero, c) = (k(b, x, 1), k(b, x, 0), k(b, x, 7));
            let s = b.select(p, one, zero);
            b.icmp(IntCC::Eq, s, c)
        }, 0, "iconst.i32 0"),
        ("selp 1,0 & selp 1,0", Type::I32, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let q = b.icmp(IntCC::Eq, x, y);
            let (one, zero) = (k(b, x, 1), k(b, x, 0));
            let s = b.select(p, one, zero);
            let t = b.select(q, one, zero);
            b.binary(B::And, s, t)
        }, 4, "and.pred"),
        ("selp 0,-1 | selp 0,-1", Type::I64, |b, x, y| {
            let p = b.icmp(IntCC::Ult, x, y);
            let q = b.icmp(IntCC::Sgt, x, y);
            let (m1, zero) = (k(b, x, -1), k(b, x, 0));
            let s = b.select(p, zero, m1);
            let t = b.select(q, zero, m1);
            b.binary(B::Or, s, t)
        }, 4, "and.pred"),
        ("zext(trunc.i16 %tid.x) + x", Type::I32, |b, x, _| {
            let t = b.special_reg(SpecialReg::Tid(Dim::X));
            let n = b.trunc(Type::I16, t);
            let z = b.zext(Type::I32, n);
            b.add(z, x)
        }, 1, "add.i32"),
        // %ctaid.x may be 2^31 - 1: the truncation stays.
        ("zext(trunc.i16 %ctaid.x) + x", Type::I32, |b, x, _| {
            let t = b.special_reg(SpecialReg::Ctaid(Dim::X));
            let n = b.trunc(Type::I16, t);
            let z = b.zext(Type::I32, n);
            b.add(z, x)
        }, 3, "trunc.i16"),
        ("mulhi.u x,2 (i64)", Type::I64, |b, x, _| { let c = k(b, x, 2); b.binary(B::MulHiU, x, c) }, 1, "shr.u.i64"),
        ("mulhi.u 16,x", Type::I32, |b, x, _| { let c = k(b, x, 16); b.binary(B::MulHiU, c, x) }, 1, "shr.u.i32"),
        ("mulhi.u x,2^31", Type::I32, |b, x, _| { let c = k(b, x, 1 << 31); b.binary(B::MulHiU, x, c) }, 1, "shr.u.i32"),
        ("mulhi.u x,1", Type::I32, |b, x, _| { let c = k(b, x, 1); b.binary(B::MulHiU, x, c) }, 0, "iconst.i32 0"),
        ("mulhi.u x,0", Type::I16, |b, x, _| { let c = k(b, x, 0); b.binary(B::MulHiU, x, c) }, 0, "iconst.i16 0"),
        ("mulhi.s x,4", Type::I32, |b, x, _| { let c = k(b, x, 4); b.binary(B::MulHiS, x, c) }, 1, "shr.s.i32"),
        ("mulhi.s x,1", Type::I64, |b, x, _| { let c = k(b, x, 1); b.binary(B::MulHiS, x, c) }, 1, "shr.s.i64"),
        ("mulhi.s x,2^30", Type::I32, |b, x, _| { let c = k(b, x, 1 << 30); b.binary(B::MulHiS, x, c) }, 1, "shr.s.i32"),
        // 2^31 is negative as an s32: not a shift, left alone.
        ("mulhi.s x,2^31", Type::I32, |b, x, _| { let c = k(b, x, 1 << 31); b.binary(B::MulHiS, x, c) }, 1, "mulhi.s.i32"),
        ("mulhi.u x,3", Type::I32, |b, x, _| { let c = k(b, x, 3); b.binary(B::MulHiU, x, c) }, 1, "mulhi.u.i32"),
        // A shifted field under a low mask is one `bfe.u` (the shift goes: nothing else reads it).
        ("(x>>u4)&3", Type::I32, |b, x, _| { let (s, m) = (k32(b, 4), k32(b, 3)); let t = b.binary(B::ShrU, x, s); b.binary(B::And, t, m) }, 1, "bfe.u"),
        ("0xff&(x>>u24)", Type::I32, |b, x, _| { let (s, m) = (k32(b, 24), k32(b, 0xff)); let t = b.binary(B::ShrU, x, s); b.binary(B::And, m, t) }, 1, "bfe.u"),
        // Past bit 31 no field; the shift leaves two bits, which the mask keeps: the `and` goes.
        ("(x>>u30)&7", Type::I32, |b, x, _| { let (s, m) = (k32(b, 30), k32(b, 7)); let t = b.binary(B::ShrU, x, s); b.binary(B::And, t, m) }, 1, "shr.u.i32"),
        // A mask that is not 2^len - 1, or an arithmetic shift: left alone.
        ("(x>>u4)&6", Type::I32, |b, x, _| { let (s, m) = (k32(b, 4), k32(b, 6)); let t = b.binary(B::ShrU, x, s); b.binary(B::And, t, m) }, 2, "and.i32"),
        ("(x>>s4)&3", Type::I32, |b, x, _| { let (s, m) = (k32(b, 4), k32(b, 3)); let t = b.binary(B::ShrS, x, s); b.binary(B::And, t, m) }, 2, "and.i32"),
        ("zext(x:i8)&255", Type::I8, |b, x, _| { let z = b.zext(Type::I32, x); let m = k32(b, 255); b.binary(B::And, z, m) }, 1, "zext.i32"),
        ("zext(zext(x:i8))&0x1ff", Type::I8, |b, x, _| {
            let h = b.zext(Type::I16, x);
            let z = b.zext(Type::I32, h);
            let m = k32(b, 0x1ff);
            b.binary(B::And, m, z)
        }, 2, "zext.i16"),
        // A mask that clears a bit the value can have stays.
        ("zext(x:i16)&255", Type::I16, |b, x, _| { let z = b.zext(Type::I32, x); let m = k32(b, 255); b.binary(B::And, z, m) }, 2, "and.i32"),
        // An extension of a value whose sign bit is clear is a zero extension (a 64-bit
        // address's high word is then `RZ`, not a sign word); so is the product of two.
        ("sext(x&8)", Type::I32, |b, x, _| { let m = k32(b, 8); let t = b.binary(B::And, x, m); b.sext(Type::I64, t) }, 2, "zext.i64"),
        ("sext(x>>u1)", Type::I32, |b, x, _| { let s = k32(b, 1); let t = b.binary(B::ShrU, x, s); b.sext(Type::I64, t) }, 2, "zext.i64"),
        ("sext(x%u10)", Type::I32, |b, x, _| { let d = k32(b, 10); let t = b.binary(B::RemU, x, d); b.sext(Type::I64, t) }, 2, "zext.i64"),
        ("sext(minu(x,y&7))", Type::I32, |b, x, y| {
            let m = k32(b, 7);
            let t = b.binary(B::And, y, m);
            let u = b.binary(B::MinU, x, t);
            b.sext(Type::I64, u)
        }, 3, "zext.i64"),
        ("sext(x<y ? 3 : x&5)", Type::I32, |b, x, y| {
            let m = k32(b, 5);
            let t = b.binary(B::And, x, m);
            let p = b.icmp(IntCC::Ult, x, y);
            let three = k32(b, 3);
            let s = b.select(p, three, t);
            b.sext(Type::I64, s)
        }, 4, "zext.i64"),
        ("sext(bfe.u x,4,31)", Type::I32, |b, x, _| {
            let (p, l) = (k32(b, 4), k32(b, 31));
            let t = b.bits(BitOp::Bfe { signed: false }, &[x, p, l]);
            b.sext(Type::I64, t)
        }, 2, "zext.i64"),
        ("mulwide.s(x>>u1,8)", Type::I32, |b, x, _| {
            let (s, e) = (k32(b, 1), k32(b, 8));
            let t = b.binary(B::ShrU, x, s);
            b.mul_wide(true, t, e)
        }, 2, "mulwide.u"),
        // Where the sign bit may be set, the sign extension stays.
        ("sext(x&0x80000000)", Type::I32, |b, x, _| { let m = k32(b, 1 << 31); let t = b.binary(B::And, x, m); b.sext(Type::I64, t) }, 2, "sext.i64"),
        ("sext(x|1)", Type::I32, |b, x, _| { let o = k32(b, 1); let t = b.binary(B::Or, x, o); b.sext(Type::I64, t) }, 2, "sext.i64"),
        ("sext(bfe.u x,4,32)", Type::I32, |b, x, _| {
            let (p, l) = (k32(b, 4), k32(b, 32));
            let t = b.bits(BitOp::Bfe { signed: false }, &[x, p, l]);
            b.sext(Type::I64, t)
        }, 2, "sext.i64"),
        ("mulwide.s(x>>u1,-8)", Type::I32, |b, x, _| {
            let (s, e) = (k32(b, 1), k32(b, -8));
            let t = b.binary(B::ShrU, x, s);
            b.mul_wide(true, t, e)
        }, 2, "mulwide.s"),
        // NVVM's inlined `pow(x, 2.0)`: `cvt.rzi` of the constant exponent compared with it.
        ("rzi(2.5)==2.0", Type::I32, |b, _, _| {
            use leafold::ir::float::{FloatCC, FloatFmt, FloatOp, Round};
            let c = b.iconst(Type::I64, 2.5f64.to_bits() as i64);
            let two = b.iconst(Type::I64, 2f64.to_bits() as i64);
            let rnd = FloatOp::RoundInt { fmt: FloatFmt::F64, rnd: Round::Rz, ftz: false, sat: false };
            let t = b.float(rnd, &[c]);
            b.float(FloatOp::Cmp { cc: FloatCC::Eq, fmt: FloatFmt::F64, ftz: false }, &[t, two])
        }, 0, "iconst.i32 1"),
        ("fold chain", Type::I32, |b, x, _| {
            let (m1, one) = (k(b, x, -1), k(b, x, 1));
            let s = b.add(m1, one);
            let c = b.icmp(IntCC::Ult, s, m1);
            let (t, f) = (k(b, x, 7), k(b, x, 9));
            let v = b.select(c, t, f);
            b.add(x, v)
        }, 1, "iconst.i32 7"),
    ]
}

/// Operands every rule is run on besides the random ones: the edges of each width.
const EDGES: [u64; 9] = [
    0,
    1,
    0x7f,
    0x80,
    0xffff,
    0x8000_0000,
    0xffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
];

#[test]
fn each_rule_fires_and_agrees_with_eval() {
    let pairs: Vec<(u64, u64)> = EDGES
        .iter()
        .flat_map(|&x| EDGES.iter().map(move |&y| (x, y)))
        .collect();
    for (name, ty, body, left, shows) in rules() {
        let f = kernel(ty, body);
        let s = simplified(&f, &pairs);
        assert_eq!(pure_left(&s), left, "{name}: pure instructions left\n{s}");
        assert!(
            s.to_string().contains(shows),
            "{name}: expected `{shows}` in\n{s}"
        );
    }
}

fn binary_op(k: usize) -> BinaryOp {
    use BinaryOp::*;
    [
        Add, Sub, Mul, MulHiS, MulHiU, Shl, ShrU, ShrS, And, Or, Xor, MinS, MinU, MaxS, MaxU, DivU,
        DivS, RemU, RemS,
    ][k % 19]
}

fn int_type(k: usize) -> Type {
    [Type::I8, Type::I16, Type::I32, Type::I64][k % 4]
}

fn int_cc(k: usize) -> IntCC {
    use IntCC::*;
    [Eq, Ne, Slt, Sle, Sgt, Sge, Ult, Ule, Ugt, Uge][k % 10]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every rule agrees with eval on random operands.
    #[test]
    fn rules_agree_on_random_operands(x: u64, y: u64) {
        for (_, ty, body, _, _) in rules() {
            let f = kernel(ty, body);
            simplified(&f, &[(x, y)]);
        }
    }

    /// Every binary operation, comparison, extension and bit operation on two constants
    /// folds away entirely, to the value eval computes.
    #[test]
    fn folding_agrees_with_eval(a: u64, c: u64, op: usize, t: usize, cc: usize) {
        let ty = int_type(t);
        let op = binary_op(op);
        let cases: Vec<Box<FoldBody>> = vec![
            Box::new(move |b| {
                let x = b.iconst(ty, a as i64);
                let count_ty = if op.is_shift() { Type::I32 } else { ty };
                let y = b.iconst(count_ty, c as i64);
                b.binary(op, x, y)
            }),
            Box::new(move |b| {
                let (x, y) = (b.iconst(ty, a as i64), b.iconst(ty, c as i64));
                b.icmp(int_cc(cc), x, y)
            }),
            Box::new(move |b| {
                let x = b.iconst(ty, a as i64);
                let u = b.unary(if c & 1 == 0 { UnaryOp::Not } else { UnaryOp::Neg }, x);
                b.unary(UnaryOp::Neg, u)
            }),
            Box::new(move |b| {
                let x = b.iconst(Type::I8, a as i64);
                let op = [ConvOp::Sext, ConvOp::Zext][c as usize & 1];
                let wide = if ty == Type::I8 { Type::I32 } else { ty };
                let w = b.convert(op, wide, x);
                b.trunc(Type::I8, w)
            }),
            Box::new(move |b| {
                let small = [Type::I16, Type::I32][t % 2];
                let (x, y) = (b.iconst(small, a as i64), b.iconst(small, c as i64));
                b.mul_wide(cc & 1 == 0, x, y)
            }),
            Box::new(move |b| {
                let x = b.iconst(Type::I32, a as i64);
                let bop = [BitOp::Clz, BitOp::Popc, BitOp::Brev][cc % 3];
                b.bits(bop, &[x])
            }),
        ];
        for body in cases {
            let f = kernel(Type::I32, |b, _, _| body(b));
            let s = simplified(&f, &[(0, 0)]);
            prop_assert_eq!(pure_left(&s), 0, "not folded:\n{}\n{}", f, s);
        }
    }
}

/// Value numbering across blocks: a computation in a block that dominates another is reused
/// there; one in a sibling block (which does not dominate) is not.
#[test]
fn numbering_follows_dominance() {
    let f = kernel(Type::I32, |b, x, y| {
        let (left, right, join) = (b.create_block(), b.create_block(), b.create_block());
        let j = b.append_block_param(join, Type::I32);
        let m = b.mul(x, y);
        let p = b.icmp(IntCC::Ult, x, y);
        b.brif(p, left, &[], right, &[]);
        b.switch_to_block(left);
        let m2 = b.mul(y, x); // dominated by the entry's x*y: reused
        let s = b.add(x, y);
        let l = b.add(m2, s);
        b.jump(join, &[l]);
        b.switch_to_block(right);
        let s2 = b.add(x, y); // the left block does not dominate this one: stays
        let r = b.add(m, s2);
        b.jump(join, &[r]);
        b.switch_to_block(join);
        j
    });
    let operands = [(3, 5), (5, 3), (0, 0), (u64::MAX, 1), (7, 7)];
    let s = simplified(&f, &operands);
    let count = |op: BinaryOp| {
        s.layout
            .iter()
            .flat_map(|&b| &s.blocks[b].insts)
            .filter(|&&i| matches!(s.insts[i].data, InstData::Binary { op: o, .. } if o == op))
            .count()
    };
    assert_eq!(count(BinaryOp::Mul), 1, "{s}");
    assert_eq!(count(BinaryOp::Add), 4, "{s}");
}
