//! Snapshots of the IR text form. Each snapshot was read and checked by hand against the
//! builder calls that produce it; a change to one is a change to the `--emit ir` format.

use leafold::ir::{
    BinaryOp, CvtaDir, Dim, Function, FunctionBuilder, IntCC, Module, Space, SpecialReg, Type,
    UnaryOp, VarData,
};

/// out[i] = A[i + 10], i = ctaid.x * ntid.x + tid.x.
fn copy_kernel() -> Function {
    let mut func = Function::new("copy");
    let a_off = func.add_param("A", 8, 8);
    let n_off = func.add_param("N", 4, 4);
    let out_off = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, a_off);
    let n = b.load_param(Type::I32, n_off);
    let out = b.load_param(Type::I64, out_off);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let cta = b.special_reg(SpecialReg::Ctaid(Dim::X));
    let base = b.mul(cta, ntid);
    let i = b.add(base, tid);
    let in_range = b.icmp(IntCC::Ult, i, n);
    b.brif(in_range, body, &[], exit, &[]);
    b.switch_to_block(body);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(true, i, four);
    let src = b.add(a, off);
    let x = b.load1(Space::Global, Type::I32, src, 40);
    let dst = b.add(out, off);
    b.store(Space::Global, dst, 0, &[x]);
    b.jump(exit, &[]);
    b.switch_to_block(exit);
    b.ret();
    func
}

#[test]
fn copy_kernel_text() {
    let f = copy_kernel();
    assert_eq!(leafold::ir::verify(&f), Ok(()));
    insta::assert_snapshot!(f.to_string());
}

#[test]
fn every_kind_of_instruction_text() {
    let mut func = Function::new("all");
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    let l = b.create_block();
    let i = b.append_block_param(l, Type::I32);
    let w = b.append_block_param(l, Type::I64);
    b.switch_to_block(e);
    let m1 = b.iconst(Type::I32, -1);
    let big = b.iconst(Type::I64, 0x1234_5678_9abc);
    let byte = b.iconst(Type::I8, 0x80);
    b.fconst_f32(1.5);
    let g = b.special_reg(SpecialReg::GridId);
    b.jump(l, &[m1, g]);
    b.switch_to_block(l);
    let s = b.binary(BinaryOp::ShrS, i, i);
    let hi = b.binary(BinaryOp::MulHiU, s, i);
    let mn = b.binary(BinaryOp::MinS, hi, s);
    let n = b.unary(UnaryOp::Not, mn);
    let wide = b.mul_wide(false, n, i);
    let sum = b.add(wide, w);
    let sum = b.add(sum, big);
    let z = b.zext(Type::I32, byte);
    let t = b.trunc(Type::I16, sum);
    let p = b.icmp(IntCC::Sge, z, i);
    let sel = b.select(p, z, i);
    let gen = b.cvta(CvtaDir::ToGeneric, Space::Shared, Type::I64, sum);
    let back = b.cvta(CvtaDir::FromGeneric, Space::Local, Type::I64, gen);
    let v = b.load(Space::Generic, Type::I16, 2, gen, -8);
    b.store(Space::Local, back, 4, &[v[1], t]);
    b.brif(p, l, &[sel, sum], l, &[z, w]);
    assert_eq!(leafold::ir::verify(&func), Ok(()));
    insta::assert_snapshot!(func.to_string());
}

#[test]
fn module_with_variables_text() {
    let mut m = Module::new();
    let tbl = m.add_var(VarData {
        name: "tbl".into(),
        space: Space::Const,
        size: 8,
        align: 4,
        init: Some(vec![1, 0, 0, 0, 2, 0, 0, 0]),
    });
    let buf = m.add_var(VarData {
        name: "buf".into(),
        space: Space::Shared,
        size: 256,
        align: 16,
        init: None,
    });
    let mut func = Function::new("k");
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let t = b.symbol_addr(Type::I64, tbl);
    let x = b.load1(Space::Const, Type::I32, t, 4);
    let s = b.symbol_addr(Type::I32, buf);
    b.store(Space::Shared, s, 0, &[x]);
    b.ret();
    m.functions.push(func);
    assert_eq!(leafold::ir::verify_module(&m), Ok(()));
    insta::assert_snapshot!(m.to_string());
}
