//! One kernel per address-matching rule and per selection family, built as IR by hand. Each
//! goes through lowering, allocation (checker on) and emit; snapshots pin the final SASS and
//! assertions pin the property the rule exists for. Every emitted word is checked against
//! nvdisasm when the oracle is installed.

mod common;
mod lower_common;

use common::check_with_nvdisasm;
use leafold::ir::{
    BinaryOp, CvtaDir, Dim, Function, FunctionBuilder, IntCC, Module, Space, SpecialReg, Type,
    UnaryOp, VarData,
};
use leafold::lower::{self, LowerError, LowerOptions};
use lower_common::{count, run, sass_text};

fn kernel(name: &str, params: &[(&str, u32)]) -> (Function, Vec<u32>) {
    let mut f = Function::new(name);
    let offs = params.iter().map(|(n, s)| f.add_param(n, *s, *s)).collect();
    (f, offs)
}

/// `A[i]` and `A[i+1]` (64-bit i, 4-byte elements) through the global space: the constant
/// inside the index is distributed into the displacement, so both loads share one chain and
/// the displacements land in LDG's imm24.
#[test]
fn global_accesses_share_one_chain() {
    let (mut f, p) = kernel("share", &[("A", 8), ("i", 4), ("out", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I64, p[0]);
    let a = b.cvta(CvtaDir::FromGeneric, Space::Global, Type::I64, a);
    let i = b.load_param(Type::I32, p[1]);
    let i = b.sext(Type::I64, i);
    let two = b.iconst(Type::I32, 2);
    let one = b.iconst(Type::I64, 1);
    let s0 = b.shl(i, two);
    let p0 = b.add(a, s0);
    let x = b.load1(Space::Global, Type::I32, p0, 0);
    let i1 = b.add(i, one);
    let s1 = b.shl(i1, two);
    let p1 = b.add(a, s1);
    let y = b.load1(Space::Global, Type::I32, p1, 0);
    let sum = b.add(x, y);
    let out = b.load_param(Type::I64, p[2]);
    b.store(Space::Global, out, 0, &[sum]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("share_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LEA"), 1, "one chain for both loads");
    assert_eq!(count(&st.sass, "IADD"), 1, "only the data add");
    assert_eq!(
        count(&st.sass, "SHL"),
        0,
        "the shift is folded into the LEA scale"
    );
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A shared array indexed by %tid.x: a 32-bit LEA (`LEA d, tid, RZ, 2`, the array's offset
/// in the LDS/STS imm24), no Plg.
#[test]
fn shared_access_uses_a_32bit_lea() {
    let mut m = Module::new();
    let pad = m.add_var(VarData {
        name: "pad".into(),
        space: Space::Shared,
        size: 16,
        align: 4,
        init: None,
    });
    let smem = m.add_var(VarData {
        name: "smem".into(),
        space: Space::Shared,
        size: 1024,
        align: 4,
        init: None,
    });
    let (mut f, _) = kernel("smem", &[]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    // The kernel names `pad` (its address is unused), so `pad` has storage and `smem`
    // sits at 0x10 (a kernel gets only the shared variables it names).
    b.symbol_addr(Type::I32, pad);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let base = b.symbol_addr(Type::I32, smem);
    let two = b.iconst(Type::I32, 2);
    let s = b.shl(tid, two);
    let p = b.add(base, s);
    let x = b.load1(Space::Shared, Type::I32, p, 0);
    b.barrier();
    b.store(Space::Shared, p, 4, &[x]);
    b.ret();
    m.functions.push(f.clone());
    let st = run(Some(&m), &f, LowerOptions::default());
    insta::assert_snapshot!("smem_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LEA"), 1);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// An address that is also used as a value is in a register anyway: the load uses it as its
/// base instead of recomputing the sum in a chain.
#[test]
fn existing_register_is_reused_as_base() {
    let (mut f, p) = kernel("reuse", &[("A", 8), ("i", 8), ("out", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I64, p[0]);
    let i = b.load_param(Type::I64, p[1]);
    let out = b.load_param(Type::I64, p[2]);
    let two = b.iconst(Type::I32, 2);
    let s = b.shl(i, two);
    let q = b.add(a, s);
    let x = b.load1(Space::Global, Type::I32, q, 8);
    b.store(Space::Global, out, 0, &[x]);
    b.store(Space::Global, out, 8, &[q]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("reuse_sass", sass_text(&st.sass));
    // q = A + (i << 2) is computed once, as a value, by a chain (it has an address's shape);
    // the load then uses q's register with the displacement in LDG's imm24.
    assert_eq!(count(&st.sass, "LEA"), 1);
    assert_eq!(count(&st.sass, "IADD"), 0);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A generic access through a pointer held in a register (no chain computes it) uses PT, and
/// a displacement beyond the chain's imm20 but within LD's imm32 stays in the LD.
#[test]
fn generic_without_chain_uses_pt() {
    let (mut f, p) = kernel("pt", &[("pp", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let pp = b.load_param(Type::I64, p[0]);
    let q = b.load1(Space::Global, Type::I64, pp, 0);
    let x = b.load1(Space::Generic, Type::I32, q, 0x10_0000);
    b.store(Space::Generic, q, 4, &[x]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("pt_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LEA"), 0);
    for i in &st.sass {
        if matches!(i.form, leafold::sm50::Form::LD | leafold::sm50::Form::ST) {
            assert_eq!(i.get(leafold::sm50::Field::P), Some(7), "PT");
        }
    }
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A negative displacement inside a 64-bit chain needs an all-ones high word. (Only
/// `--plg-per-address` puts a generic access's displacement in its chain; by default it stays
/// in the LD, which the second half pins.)
#[test]
fn negative_displacement_in_chain() {
    let (mut f, p) = kernel("neg", &[("A", 8), ("i", 4), ("out", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I64, p[0]);
    let i = b.load_param(Type::I32, p[1]);
    let i = b.zext(Type::I64, i);
    let three = b.iconst(Type::I32, 3);
    let s = b.shl(i, three);
    let q = b.add(a, s);
    let x = b.load1(Space::Generic, Type::I64, q, -8);
    let out = b.load_param(Type::I64, p[2]);
    b.store(Space::Global, out, 0, &[x]);
    b.ret();
    let per_address = LowerOptions {
        plg_per_address: true,
        ..LowerOptions::default()
    };
    let st = run(None, &f, per_address);
    insta::assert_snapshot!("negdisp_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "MOV32I"), 1);
    check_with_nvdisasm("lower_rules", &st.sass);
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("negdisp_default_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "MOV32I"), 0);
    assert_eq!(count(&st.sass, "LEA"), 1);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A displacement beyond LDG's imm24 is added to the address first.
#[test]
fn large_displacement_is_added_first() {
    let (mut f, p) = kernel("far", &[("A", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I64, p[0]);
    let x = b.load1(Space::Global, Type::I32, a, 0x100_0000);
    b.store(Space::Global, a, 0, &[x]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("far_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "IADD32I"), 1);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A const-space table indexed by a register: LDC from bank 3.
#[test]
fn const_access_uses_ldc() {
    let mut m = Module::new();
    let tab = m.add_var(VarData {
        name: "tab".into(),
        space: Space::Const,
        size: 64,
        align: 4,
        init: None,
    });
    let (mut f, p) = kernel("ctab", &[("out", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let base = b.symbol_addr(Type::I32, tab);
    let two = b.iconst(Type::I32, 2);
    let s = b.shl(tid, two);
    let q = b.add(base, s);
    let x = b.load1(Space::Const, Type::I32, q, 8);
    let out = b.load_param(Type::I64, p[0]);
    b.store(Space::Global, out, 0, &[x]);
    b.ret();
    m.functions.push(f.clone());
    let st = run(Some(&m), &f, LowerOptions::default());
    insta::assert_snapshot!("ctab_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LDC"), 1);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A counted loop: block parameters, a compare, a conditional branch and a back edge; the
/// emitted BRA fields hold instruction indices inside the function.
#[test]
fn loop_with_block_params() {
    let (mut f, p) = kernel("loop", &[("A", 8), ("n", 4)]);
    let mut b = FunctionBuilder::new(&mut f);
    let entry = b.create_block();
    let head = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.switch_to_block(entry);
    let a = b.load_param(Type::I64, p[0]);
    let n = b.load_param(Type::I32, p[1]);
    let zero = b.iconst(Type::I32, 0);
    b.jump(head, &[zero, zero]);
    let i = b.append_block_param(head, Type::I32);
    let acc = b.append_block_param(head, Type::I32);
    b.switch_to_block(head);
    let c = b.icmp(IntCC::Slt, i, n);
    b.brif(c, body, &[], exit, &[]);
    b.switch_to_block(body);
    let iw = b.sext(Type::I64, i);
    let two = b.iconst(Type::I32, 2);
    let s = b.shl(iw, two);
    let q = b.add(a, s);
    let x = b.load1(Space::Global, Type::I32, q, 0);
    let acc2 = b.add(acc, x);
    let one = b.iconst(Type::I32, 1);
    let i2 = b.add(i, one);
    b.jump(head, &[i2, acc2]);
    b.switch_to_block(exit);
    b.store(Space::Global, a, 0, &[acc]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("loop_vcode", st.vcode);
    insta::assert_snapshot!("loop_sass", sass_text(&st.sass));
    for i in &st.sass {
        if i.form == leafold::sm50::Form::BRA {
            let t = i.get(leafold::sm50::Field::Rel).unwrap() as usize;
            assert!(t < st.sass.len(), "branch target {t} inside the function");
        }
    }
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// The integer subset: XMAD multiply, power-of-two multiply, sub, logic with a 32-bit
/// immediate, min/max, narrow extensions, 64-bit compare/select/shifts, not/neg.
#[test]
fn integer_subset() {
    let (mut f, p) = kernel("ints", &[("a", 4), ("b", 4), ("w", 8), ("out", 8)]);
    let mut bld = FunctionBuilder::new(&mut f);
    let blk = bld.create_block();
    bld.switch_to_block(blk);
    let out = bld.load_param(Type::I64, p[3]);
    let pa = bld.load_param(Type::I32, p[0]);
    let pb = bld.load_param(Type::I32, p[1]);
    let w = bld.load_param(Type::I64, p[2]);
    let a = bld.load1(Space::Global, Type::I32, out, 0x40);
    let m1 = bld.mul(a, pb);
    let c8 = bld.iconst(Type::I32, 8);
    let m2 = bld.mul(a, c8);
    let s1 = bld.sub(m1, m2);
    let big = bld.iconst(Type::I32, 0x1234_5678);
    let l1 = bld.binary(BinaryOp::Xor, s1, big);
    let mn = bld.binary(BinaryOp::MinS, l1, pa);
    let mx = bld.binary(BinaryOp::MaxU, mn, pb);
    let t8 = bld.trunc(Type::I8, mx);
    let e8 = bld.sext(Type::I32, t8);
    let nt = bld.unary(UnaryOp::Not, e8);
    let ng = bld.unary(UnaryOp::Neg, nt);
    bld.store(Space::Global, out, 0, &[ng]);
    let c5 = bld.iconst(Type::I32, 5);
    let sh = bld.binary(BinaryOp::ShrS, w, c5);
    let c40 = bld.iconst(Type::I32, 40);
    let sl = bld.shl(w, c40);
    let cmp = bld.icmp(IntCC::Slt, sh, sl);
    let sel = bld.select(cmp, sh, sl);
    bld.store(Space::Global, out, 8, &[sel]);
    let wz = bld.zext(Type::I64, pa);
    let sum = bld.add(w, wz);
    let dif = bld.sub(sum, w);
    bld.store(Space::Global, out, 16, &[dif]);
    bld.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("ints_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "XMAD"), 3, "one general multiply");
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// Values used only inside addresses are never materialized: no SHL, no IADD, no MOV of the
/// base pointer.
#[test]
fn address_only_values_are_folded() {
    let (mut f, p) = kernel("fold", &[("A", 8), ("i", 4)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I64, p[0]);
    let i = b.load_param(Type::I32, p[1]);
    let c4 = b.iconst(Type::I32, 4);
    let w = b.mul_wide(false, i, c4);
    let q = b.add(a, w);
    let x = b.load1(Space::Global, Type::I32, q, 0);
    let one = b.iconst(Type::I32, 1);
    let y = b.add(x, one);
    b.store(Space::Global, q, 0, &[y]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("fold_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "SHL"), 0);
    assert_eq!(count(&st.sass, "MOV"), 1, "only the index i");
    assert_eq!(count(&st.sass, "LEA"), 1, "store and load share the chain");
    check_with_nvdisasm("lower_rules", &st.sass);
}

#[test]
fn unsupported_ir_is_an_error() {
    let (mut f, p) = kernel("hi", &[("a", 4), ("out", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I32, p[0]);
    let w = b.zext(Type::I64, a);
    let h = b.binary(BinaryOp::MinS, w, w);
    let out = b.load_param(Type::I64, p[1]);
    b.store(Space::Global, out, 0, &[h]);
    b.ret();
    let e = lower::lower_function(&Module::new(), &f, &LowerOptions::default()).unwrap_err();
    assert_eq!(
        e,
        LowerError::Unsupported {
            func: "hi".into(),
            what: "64-bit min/max".into()
        }
    );
    assert_eq!(e.to_string(), "hi: cannot lower 64-bit min/max");
}

/// A `.local` array indexed by a register: `LEA d, i, R1, 2` (R1 is the base of every local
/// address) and a constant local address straight off R1; spill slots go after the data.
#[test]
fn local_array_is_addressed_from_r1() {
    let mut m = Module::new();
    let x = m.add_var(VarData {
        name: "x".into(),
        space: Space::Local,
        size: 4,
        align: 4,
        init: None,
    });
    let arr = m.add_var(VarData {
        name: "arr".into(),
        space: Space::Local,
        size: 64,
        align: 8,
        init: None,
    });
    let (mut f, p) = kernel("loc", &[("i", 4), ("out", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let i = b.load_param(Type::I32, p[0]);
    b.symbol_addr(Type::I32, x); // named, so `x` takes the first 4 bytes
    let base = b.symbol_addr(Type::I32, arr);
    let two = b.iconst(Type::I32, 2);
    let s = b.shl(i, two);
    let q = b.add(base, s);
    b.store(Space::Local, q, 0, &[i]);
    b.store(Space::Local, base, 4, &[i]);
    let x = b.load1(Space::Local, Type::I32, q, 0);
    let out = b.load_param(Type::I64, p[1]);
    b.store(Space::Global, out, 0, &[x]);
    b.ret();
    m.functions.push(f.clone());
    assert_eq!(lower::local_size(&m, &f), 72);
    // A kernel reserves nothing for local variables it does not name.
    let (empty, _) = kernel("none", &[]);
    assert_eq!(lower::local_size(&m, &empty), 0);
    let st = run(Some(&m), &f, LowerOptions::default());
    insta::assert_snapshot!("local_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LEA"), 1);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A `.global` variable's address is `MOV32I lo, 0x0` and `MOV32I hi, 0x0`, each carrying the
/// relocation (low / high word of the variable) the cubin writer attaches, as ptxas does.
#[test]
fn global_variable_address_is_relocated() {
    let mut m = Module::new();
    let g = m.add_var(VarData {
        name: "g".into(),
        space: Space::Global,
        size: 4,
        align: 4,
        init: None,
    });
    let (mut f, _) = kernel("glob", &[]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.symbol_addr(Type::I64, g);
    let z = b.iconst(Type::I32, 0);
    b.store(Space::Global, a, 0, &[z]);
    b.ret();
    m.functions.push(f.clone());
    let vc = lower::lower_function(&m, &f, &LowerOptions::default()).unwrap();
    let al = leafold::machinst::allocate(&vc, &Default::default()).unwrap();
    let (code, relocs) = lower::emit_relocated(&al);
    let mut halves: Vec<bool> = relocs
        .iter()
        .map(|(_, r)| r.word == lower::RelocWord::Hi)
        .collect();
    halves.sort();
    assert_eq!(halves, [false, true], "{}", sass_text(&code));
    assert!(relocs
        .iter()
        .all(|(_, r)| r.word != lower::RelocWord::Abs32));
    for (at, r) in relocs {
        assert_eq!(r.var, g);
        assert_eq!(code[at].form, leafold::sm50::Form::MOV32I);
        assert_eq!(code[at].get(leafold::sm50::Field::Imm), Some(0));
    }
    check_with_nvdisasm("lower_rules", &code);
}

/// Vector accesses: an `LDG.E.128` whose four words are stored back as one `STG.E.128`
/// (already consecutive: no copies), two separate values gathered into a pair for an
/// `STG.E.64`, a 128-bit load of two i64 (pairs inside the quad), and a word of a quad passed
/// as a block argument (copied out into a register of its own).
#[test]
fn vector_accesses() {
    let (mut f, p) = kernel("vec", &[("A", 8), ("B", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let entry = b.create_block();
    let next = b.create_block();
    b.switch_to_block(entry);
    let a = b.load_param(Type::I64, p[0]);
    let bb = b.load_param(Type::I64, p[1]);
    let v = b.load(Space::Global, Type::I32, 4, a, 16);
    b.store(Space::Global, bb, 0, &[v[0], v[1], v[2], v[3]]);
    b.store(Space::Global, bb, 32, &[v[3], v[0]]);
    let w = b.load(Space::Global, Type::I64, 2, a, 48);
    let s = b.add(w[0], w[1]);
    b.store(Space::Global, bb, 64, &[s]);
    b.jump(next, &[v[2]]);
    let x = b.append_block_param(next, Type::I32);
    b.switch_to_block(next);
    b.store(Space::Global, bb, 72, &[x]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("vec_sass", sass_text(&st.sass));
    let stores: Vec<_> = st
        .sass
        .iter()
        .filter(|i| i.form == leafold::sm50::Form::STG)
        .map(|i| i.get(leafold::sm50::Field::Size).unwrap())
        .collect();
    assert_eq!(stores, [6, 5, 5, 4], "STG.128, STG.64, STG.64, STG");
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A loop whose header is the IR's entry block: a fall-through block is put in front, since
/// VCode's entry may not be a branch target.
#[test]
fn branch_to_the_entry_block() {
    let (mut f, p) = kernel("top", &[("A", 8)]);
    let mut b = FunctionBuilder::new(&mut f);
    let entry = b.create_block();
    let exit = b.create_block();
    b.switch_to_block(entry);
    let a = b.load_param(Type::I64, p[0]);
    let x = b.load1(Space::Global, Type::I32, a, 0);
    let z = b.iconst(Type::I32, 0);
    let c = b.icmp(IntCC::Ne, x, z);
    b.brif(c, entry, &[], exit, &[]);
    b.switch_to_block(exit);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("top_sass", sass_text(&st.sass));
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// A shared address built in 64 bits (`mul.wide.u32` + the variable's generic-width address),
/// as the PTX of CUDA kernels does: only its low word matters, so it is one 32-bit LEA, not a
/// 64-bit pair.
#[test]
fn shared_address_from_mul_wide() {
    let mut m = Module::new();
    let smem = m.add_var(VarData {
        name: "smem".into(),
        space: Space::Shared,
        size: 1024,
        align: 4,
        init: None,
    });
    let (mut f, _) = kernel("smw", &[]);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let four = b.iconst(Type::I32, 4);
    let w = b.mul_wide(false, tid, four);
    let base = b.symbol_addr(Type::I64, smem);
    let p = b.add(w, base);
    b.store(Space::Shared, p, 0, &[tid]);
    b.ret();
    m.functions.push(f.clone());
    let st = run(Some(&m), &f, LowerOptions::default());
    insta::assert_snapshot!("smw_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LEA"), 1);
    assert_eq!(count(&st.sass, "LEA_HI"), 0);
    check_with_nvdisasm("lower_rules", &st.sass);
}

/// Two nested loops with loop-carried block parameters pass regalloc2's checker. They used to
/// be rejected with `UnknownValueInAllocation` although the allocation was right: the
/// critical-edge block into the inner header was laid out last, so the checker's first,
/// layout-order pass met the header before any predecessor (see `machinst::alloc`'s
/// `prune_unreachable`; the toy-ISA twin is `machinst_toy::nested_loops_with_carried_values`).
#[test]
fn nested_loops_pass_the_checker() {
    let mut f = Function::new("nested");
    let pa = f.add_param("A", 8, 8);
    let mut b = FunctionBuilder::new(&mut f);
    let b0 = b.create_block();
    let h1 = b.create_block();
    let h2 = b.create_block();
    let body = b.create_block();
    let latch2 = b.create_block();
    let latch1 = b.create_block();
    let exit = b.create_block();
    b.switch_to_block(b0);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let two = b.iconst(Type::I32, 2);
    b.jump(h1, &[two]);
    let k = b.append_block_param(h1, Type::I32);
    b.switch_to_block(h1);
    let one = b.iconst(Type::I32, 1);
    let j0 = b.binary(BinaryOp::ShrU, k, one);
    let z = b.iconst(Type::I32, 0);
    let c0 = b.icmp(IntCC::Eq, j0, z);
    b.brif(c0, latch1, &[], h2, &[j0]);
    let j = b.append_block_param(h2, Type::I32);
    b.switch_to_block(h2);
    let x = b.binary(BinaryOp::Xor, j, tid);
    let c1 = b.icmp(IntCC::Ule, x, tid);
    let _ = c1;
    b.jump(body, &[]);
    b.switch_to_block(body);
    let a = b.load_param(Type::I64, pa);
    let w = b.mul_wide(false, x, two);
    let p = b.add(a, w);
    b.store(Space::Global, p, 0, &[k]);
    b.jump(latch2, &[]);
    b.switch_to_block(latch2);
    b.barrier();
    let j2 = b.binary(BinaryOp::ShrU, j, one);
    let c2 = b.icmp(IntCC::Ne, j2, z);
    b.brif(c2, h2, &[j2], latch1, &[]);
    b.switch_to_block(latch1);
    let k2 = b.mul(k, two);
    let c3 = b.icmp(IntCC::Ule, k2, z);
    b.brif(c3, h1, &[k2], exit, &[]);
    b.switch_to_block(exit);
    b.ret();
    run(None, &f, LowerOptions::default());
}
