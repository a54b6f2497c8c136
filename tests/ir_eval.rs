//! The reference interpreter, opcode by opcode and on whole little kernels.
//!
//! Expected values are worked out by hand from the PTX ISA definitions (shift clamping, mul.hi,
//! mul.wide, cvt chop/sext/zext), never by running the interpreter and copying its output.

use leafold::ir::eval::{
    self, EvalError, GlobalRegion, Launch, CONST_WINDOW_BASE, LOCAL_WINDOW_BASE, SHARED_WINDOW_BASE,
};
use leafold::ir::{
    BinaryOp, CvtaDir, Dim, Function, FunctionBuilder, IntCC, Module, Space, SpecialReg, Type,
    UnaryOp, Value, VarData,
};

const OUT: u64 = 0x1_0000_0000;
const INP: u64 = 0x2_0000_0000;

/// Build a one-thread kernel whose body computes some values, store each to its own 8-byte
/// slot of a global buffer (predicates as 0/1 in an i32), run it, and return the slots,
/// zero-extended from each value's width.
fn eval_values(body: impl FnOnce(&mut FunctionBuilder) -> Vec<Value>) -> Vec<u64> {
    let mut func = Function::new("k");
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let entry = b.create_block();
    b.switch_to_block(entry);
    let out = b.load_param(Type::I64, out_off);
    let values = body(&mut b);
    let mut widths = Vec::new();
    for (i, &v) in values.iter().enumerate() {
        let v = if b.func.value_type(v) == Type::Pred {
            let one = b.iconst(Type::I32, 1);
            let zero = b.iconst(Type::I32, 0);
            b.select(v, one, zero)
        } else {
            v
        };
        widths.push(b.func.value_type(v).bytes().unwrap() as usize);
        b.store(Space::Global, out, 8 * i as i32, &[v]);
    }
    b.ret();
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 8 * values.len()],
    }];
    let result = eval::run_function(&func, &launch).expect("run");
    let bytes = result.region(OUT).unwrap();
    widths
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let mut slot = [0u8; 8];
            slot[..w].copy_from_slice(&bytes[8 * i..8 * i + w]);
            u64::from_le_bytes(slot)
        })
        .collect()
}

#[test]
fn add_sub_mul_wrap_at_their_width() {
    let got = eval_values(|b| {
        let x = b.iconst(Type::I32, 0x7fff_ffff);
        let one = b.iconst(Type::I32, 1);
        let a = b.add(x, one);
        let c = b.iconst(Type::I8, 200);
        let d = b.iconst(Type::I8, 100);
        let e = b.add(c, d);
        let zero = b.iconst(Type::I16, 0);
        let one16 = b.iconst(Type::I16, 1);
        let f = b.sub(zero, one16);
        let m = b.iconst(Type::I32, 0x1_0001);
        let g = b.mul(m, m);
        vec![a, e, f, g]
    });
    // 0x1_0001^2 = 0x1_0002_0001, low 32 bits 0x0002_0001.
    assert_eq!(got, vec![0x8000_0000, 44, 0xffff, 0x0002_0001]);
}

#[test]
fn shifts_clamp_counts_at_the_width() {
    let got = eval_values(|b| {
        let x = b.iconst(Type::I32, 0x8000_0001u32 as i64);
        let c31 = b.iconst(Type::I32, 31);
        let c32 = b.iconst(Type::I32, 32);
        let huge = b.iconst(Type::I32, -1); // 0xffffffff as an unsigned count
        let s1 = b.shl(x, c31);
        let s2 = b.shl(x, c32);
        let s3 = b.binary(BinaryOp::ShrU, x, c31);
        let s4 = b.binary(BinaryOp::ShrU, x, huge);
        let s5 = b.binary(BinaryOp::ShrS, x, c31);
        let s6 = b.binary(BinaryOp::ShrS, x, huge);
        let pos = b.iconst(Type::I32, 0x4000_0000);
        let s7 = b.binary(BinaryOp::ShrS, pos, c32);
        let w = b.iconst(Type::I64, 1);
        let c63 = b.iconst(Type::I32, 63);
        let c64 = b.iconst(Type::I32, 64);
        let s8 = b.shl(w, c63);
        let s9 = b.shl(w, c64);
        let s10 = b.binary(BinaryOp::ShrS, s8, c64);
        vec![s1, s2, s3, s4, s5, s6, s7, s8, s9, s10]
    });
    assert_eq!(
        got,
        vec![
            0x8000_0000,
            0,
            1,
            0,
            0xffff_ffff,
            0xffff_ffff,
            0,
            0x8000_0000_0000_0000,
            0,
            u64::MAX,
        ]
    );
}

#[test]
fn cvt_sext_zext_chop() {
    let got = eval_values(|b| {
        let x = b.iconst(Type::I8, 0x80);
        let s = b.sext(Type::I32, x);
        let z = b.zext(Type::I32, x);
        let s64 = b.sext(Type::I64, x);
        let w = b.iconst(Type::I32, 0x1234_5678);
        let t = b.trunc(Type::I16, w);
        let t8 = b.trunc(Type::I8, w);
        // cvt.s16.u32 into a 32-bit register: chop to 16 bits, then sign-extend (seed 6.5.1).
        let y = b.iconst(Type::I32, 0x0001_8000);
        let chop = b.trunc(Type::I16, y);
        let back = b.sext(Type::I32, chop);
        let neg = b.iconst(Type::I32, -2);
        let z64 = b.zext(Type::I64, neg);
        vec![s, z, s64, t, t8, back, z64]
    });
    assert_eq!(
        got,
        vec![
            0xffff_ff80,
            0x80,
            0xffff_ffff_ffff_ff80,
            0x5678,
            0x78,
            0xffff_8000,
            0xffff_fffe,
        ]
    );
}

#[test]
fn mul_wide_signed_versus_unsigned() {
    let got = eval_values(|b| {
        let m1 = b.iconst(Type::I32, -1);
        let two = b.iconst(Type::I32, 2);
        let s = b.mul_wide(true, m1, two);
        let u = b.mul_wide(false, m1, two);
        let h = b.iconst(Type::I16, -1);
        let s16 = b.mul_wide(true, h, h);
        let u16 = b.mul_wide(false, h, h);
        vec![s, u, s16, u16]
    });
    assert_eq!(
        got,
        vec![
            0xffff_ffff_ffff_fffe, // -2
            0x1_ffff_fffe,         // 0xffffffff * 2
            1,                     // (-1) * (-1)
            0xfffe_0001,           // 0xffff * 0xffff
        ]
    );
}

#[test]
fn mul_hi_signed_versus_unsigned() {
    let got = eval_values(|b| {
        let x = b.iconst(Type::I32, 0x8000_0000u32 as i64);
        let two = b.iconst(Type::I32, 2);
        let u = b.binary(BinaryOp::MulHiU, x, two);
        let s = b.binary(BinaryOp::MulHiS, x, two);
        let m = b.iconst(Type::I64, -1);
        let u64hi = b.binary(BinaryOp::MulHiU, m, m);
        let s64hi = b.binary(BinaryOp::MulHiS, m, m);
        vec![u, s, u64hi, s64hi]
    });
    // 0x80000000 * 2 = 0x1_0000_0000 unsigned (hi 1); -2^31 * 2 = -2^32 signed (hi -1).
    // (2^64-1)^2 = 2^128 - 2^65 + 1: hi = 2^64 - 2; (-1)(-1) = 1: hi = 0.
    assert_eq!(got, vec![1, 0xffff_ffff, 0xffff_ffff_ffff_fffe, 0]);
}

#[test]
fn min_max_signed_versus_unsigned() {
    let got = eval_values(|b| {
        let m1 = b.iconst(Type::I32, -1);
        let one = b.iconst(Type::I32, 1);
        vec![
            b.binary(BinaryOp::MinS, m1, one),
            b.binary(BinaryOp::MinU, m1, one),
            b.binary(BinaryOp::MaxS, m1, one),
            b.binary(BinaryOp::MaxU, m1, one),
        ]
    });
    assert_eq!(got, vec![0xffff_ffff, 1, 1, 0xffff_ffff]);
}

#[test]
fn bitwise_neg_not_icmp_select() {
    let got = eval_values(|b| {
        let a = b.iconst(Type::I16, 0x0ff0);
        let c = b.iconst(Type::I16, 0x3c3c);
        let and = b.binary(BinaryOp::And, a, c);
        let or = b.binary(BinaryOp::Or, a, c);
        let xor = b.binary(BinaryOp::Xor, a, c);
        let not = b.unary(UnaryOp::Not, a);
        let neg = b.unary(UnaryOp::Neg, a);
        let m1 = b.iconst(Type::I64, -1);
        let zero = b.iconst(Type::I64, 0);
        let slt = b.icmp(IntCC::Slt, m1, zero);
        let ult = b.icmp(IntCC::Ult, m1, zero);
        let pnot = b.unary(UnaryOp::Not, ult);
        let sel = b.select(slt, a, c);
        vec![and, or, xor, not, neg, slt, ult, pnot, sel]
    });
    assert_eq!(
        got,
        vec![0x0c30, 0x3ffc, 0x33cc, 0xf00f, 0xf010, 1, 0, 1, 0x0ff0]
    );
}

#[test]
fn special_registers_from_the_launch() {
    // 40 threads in one CTA of a 3x2 grid; every thread writes laneid, warpid, nwarpid and
    // its ctaid.y to out[4 * (linear id over the grid) ..].
    let mut func = Function::new("k");
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let out = b.load_param(Type::I64, out_off);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let cx = b.special_reg(SpecialReg::Ctaid(Dim::X));
    let cy = b.special_reg(SpecialReg::Ctaid(Dim::Y));
    let nx = b.special_reg(SpecialReg::Nctaid(Dim::X));
    let cta = b.mul(cy, nx);
    let cta = b.add(cta, cx);
    let g = b.mul(cta, ntid);
    let g = b.add(g, tid);
    let sixteen = b.iconst(Type::I32, 16);
    let byte_off = b.mul_wide(false, g, sixteen);
    let addr = b.add(out, byte_off);
    let lane = b.special_reg(SpecialReg::LaneId);
    let warp = b.special_reg(SpecialReg::WarpId);
    let nwarp = b.special_reg(SpecialReg::NWarpId);
    b.store(Space::Global, addr, 0, &[lane, warp, nwarp, cy]);
    b.ret();
    let threads = 6 * 40;
    let mut launch = Launch::new([3, 2, 1], [40, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 16 * threads],
    }];
    let r = eval::run_function(&func, &launch).unwrap();
    let bytes = r.region(OUT).unwrap();
    let word = |i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
    for t in 0..threads {
        let local = (t % 40) as u32;
        let cta_y = (t / 40 / 3) as u32;
        assert_eq!(
            [
                word(4 * t),
                word(4 * t + 1),
                word(4 * t + 2),
                word(4 * t + 3)
            ],
            // %nwarpid is the number of warp ids of an SM (64 on sm_5x, as ptxas's MOV32I
            // 0x40 and the lowering give), not the CTA's 2 warps.
            [local % 32, local / 32, 64, cta_y],
            "thread {t}"
        );
    }
}

/// out[i] = A[i + 10] with i = ctaid.x * ntid.x + tid.x over 2 CTAs of 4 threads.
#[test]
fn kernel_copy_with_offset_over_two_ctas() {
    let mut func = Function::new("copy");
    let a_off = func.add_param("A", 8, 8);
    let out_off = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, a_off);
    let out = b.load_param(Type::I64, out_off);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let cta = b.special_reg(SpecialReg::Ctaid(Dim::X));
    let base = b.mul(cta, ntid);
    let i = b.add(base, tid);
    let ten = b.iconst(Type::I32, 10);
    let j = b.add(i, ten);
    let four = b.iconst(Type::I32, 4);
    let j_bytes = b.mul_wide(true, j, four);
    let src = b.add(a, j_bytes);
    let x = b.load1(Space::Global, Type::I32, src, 0);
    let i_bytes = b.mul_wide(true, i, four);
    let dst = b.add(out, i_bytes);
    b.store(Space::Global, dst, 0, &[x]);
    b.ret();
    assert_eq!(leafold::ir::verify(&func), Ok(()));

    let input: Vec<u8> = (0..32u32).flat_map(|k| (100 + k).to_le_bytes()).collect();
    let mut launch = Launch::new([2, 1, 1], [4, 1, 1]);
    launch.params = [INP.to_le_bytes(), OUT.to_le_bytes()].concat();
    launch.global = vec![
        GlobalRegion {
            base: INP,
            bytes: input.clone(),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0xee; 40],
        },
    ];
    let r = eval::run_function(&func, &launch).unwrap();
    let mut expected: Vec<u8> = (110..118u32).flat_map(|v| v.to_le_bytes()).collect();
    expected.extend([0xee; 8]); // past the 8 threads: untouched
    assert_eq!(r.region(OUT).unwrap(), &expected[..]);
    assert_eq!(r.region(INP).unwrap(), &input[..]);
    assert_eq!(r.shared, vec![Vec::<u8>::new(); 2]);
    assert_eq!(r.local.len(), 8);
}

/// A counted loop with block parameters: sum = 0 + 1 + ... + (n-1), and a swap of two block
/// parameters on the back edge to check that block arguments are a parallel copy.
#[test]
fn loop_with_block_params_and_parallel_copy() {
    let mut func = Function::new("loop");
    let n_off = func.add_param("n", 4, 4);
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let entry = b.create_block();
    let head = b.create_block();
    let exit = b.create_block();
    let i = b.append_block_param(head, Type::I32);
    let sum = b.append_block_param(head, Type::I32);
    let p = b.append_block_param(head, Type::I32);
    let q = b.append_block_param(head, Type::I32);
    b.switch_to_block(entry);
    let n = b.load_param(Type::I32, n_off);
    let zero = b.iconst(Type::I32, 0);
    let one = b.iconst(Type::I32, 1);
    let two = b.iconst(Type::I32, 2);
    b.jump(head, &[zero, zero, one, two]);
    b.switch_to_block(head);
    let done = b.icmp(IntCC::Sge, i, n);
    let sum2 = b.add(sum, i);
    let i2 = b.add(i, one);
    b.brif(done, exit, &[], head, &[i2, sum2, q, p]);
    b.switch_to_block(exit);
    let out = b.load_param(Type::I64, out_off);
    b.store(Space::Global, out, 0, &[sum]);
    b.store(Space::Global, out, 4, &[p]);
    b.store(Space::Global, out, 8, &[q]);
    b.ret();
    assert_eq!(leafold::ir::verify(&func), Ok(()));

    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = [
        7u32.to_le_bytes().to_vec(),
        vec![0; 4],
        OUT.to_le_bytes().to_vec(),
    ]
    .concat();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 12],
    }];
    let r = eval::run_function(&func, &launch).unwrap();
    // i runs 0..7 (7 additions: 0+...+6 = 21); (p, q) swaps 7 times from (1, 2): (2, 1).
    let words: Vec<u32> = r
        .region(OUT)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, vec![21, 2, 1]);
}

#[test]
fn vector_loads_and_stores() {
    let got = {
        let mut func = Function::new("v");
        let in_off = func.add_param("in", 8, 8);
        let out_off = func.add_param("out", 8, 8);
        let mut b = FunctionBuilder::new(&mut func);
        let e = b.create_block();
        b.switch_to_block(e);
        let inp = b.load_param(Type::I64, in_off);
        let out = b.load_param(Type::I64, out_off);
        let v = b.load(Space::Global, Type::I32, 4, inp, 16);
        // Write them back reversed, as two v2 stores.
        b.store(Space::Global, out, 0, &[v[3], v[2]]);
        b.store(Space::Global, out, 8, &[v[1], v[0]]);
        let w = b.load(Space::Global, Type::I16, 2, inp, 4);
        b.store(Space::Global, out, 16, &[w[1], w[0]]);
        b.ret();
        let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
        launch.params = [INP.to_le_bytes(), OUT.to_le_bytes()].concat();
        launch.global = vec![
            GlobalRegion {
                base: INP,
                bytes: (0..32u8).collect(),
            },
            GlobalRegion {
                base: OUT,
                bytes: vec![0; 20],
            },
        ];
        eval::run_function(&func, &launch).unwrap()
    };
    assert_eq!(
        got.region(OUT).unwrap(),
        &[28, 29, 30, 31, 24, 25, 26, 27, 20, 21, 22, 23, 16, 17, 18, 19, 6, 7, 4, 5]
    );
}

/// A module with a .shared, a .local and an initialised .const variable; the kernel reaches
/// each through its generic window and through its own space, and writes a global.
fn window_module() -> Module {
    let mut m = Module::new();
    let sh = m.add_var(VarData {
        name: "sh".into(),
        space: Space::Shared,
        size: 16,
        align: 4,
        init: None,
    });
    let lo = m.add_var(VarData {
        name: "lo".into(),
        space: Space::Local,
        size: 8,
        align: 8,
        init: None,
    });
    let co = m.add_var(VarData {
        name: "co".into(),
        space: Space::Const,
        size: 8,
        align: 4,
        init: Some(vec![1, 2, 3, 4, 5, 6, 7, 8]),
    });
    let gl = m.add_var(VarData {
        name: "gl".into(),
        space: Space::Global,
        size: 4,
        align: 4,
        init: None,
    });
    let mut func = Function::new("win");
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    // shared: generic store at sh+4, read back through ld.shared.
    let sh_addr = b.symbol_addr(Type::I32, sh);
    let sh_wide = b.zext(Type::I64, sh_addr);
    let sh_gen = b.cvta(CvtaDir::ToGeneric, Space::Shared, Type::I64, sh_wide);
    let x = b.iconst(Type::I32, 0x1122_3344);
    b.store(Space::Generic, sh_gen, 4, &[x]);
    let sh_back = b.load1(Space::Shared, Type::I32, sh_addr, 4);
    // local: generic store, read back through ld.local.
    let lo_addr = b.symbol_addr(Type::I64, lo);
    let lo_gen = b.cvta(CvtaDir::ToGeneric, Space::Local, Type::I64, lo_addr);
    let y = b.iconst(Type::I64, 0x0102_0304_0506_0708);
    b.store(Space::Generic, lo_gen, 0, &[y]);
    let lo_back = b.load1(Space::Local, Type::I64, lo_addr, 0);
    // const: generic load of its second word, and cvta.to.const back to the offset.
    let co_addr = b.symbol_addr(Type::I64, co);
    let co_gen = b.cvta(CvtaDir::ToGeneric, Space::Const, Type::I64, co_addr);
    let c = b.load1(Space::Generic, Type::I32, co_gen, 4);
    let co_off = b.cvta(CvtaDir::FromGeneric, Space::Const, Type::I64, co_gen);
    let c0 = b.load1(Space::Const, Type::I32, co_off, 0);
    // global: a generic store to a module .global variable.
    let gl_addr = b.symbol_addr(Type::I64, gl);
    let sum = b.add(c, c0);
    let t = b.trunc(Type::I32, lo_back);
    let sum = b.add(sum, t);
    let sum = b.add(sum, sh_back);
    b.store(Space::Generic, gl_addr, 0, &[sum]);
    b.ret();
    m.functions.push(func);
    m
}

#[test]
fn generic_addressing_into_each_window() {
    let m = window_module();
    assert_eq!(leafold::ir::verify_module(&m), Ok(()));
    let r = eval::run(&m, "win", &Launch::new([1, 1, 1], [1, 1, 1])).unwrap();
    // Shared: sh at offset 0; the generic store landed at shared offset 4.
    assert_eq!(r.shared.len(), 1);
    assert_eq!(&r.shared[0][..8], &[0, 0, 0, 0, 0x44, 0x33, 0x22, 0x11]);
    // Local: lo at offset 0 of the thread's local memory.
    assert_eq!(r.local, vec![vec![8, 7, 6, 5, 4, 3, 2, 1]]);
    // Global: 0x08070605 + 0x04030201 + 0x05060708 + 0x11223344.
    let expected: u32 = 0x0807_0605u32
        .wrapping_add(0x0403_0201)
        .wrapping_add(0x0506_0708)
        .wrapping_add(0x1122_3344);
    assert_eq!(r.global.len(), 1);
    assert_eq!(r.global[0].base, eval::MODULE_GLOBAL_BASE);
    assert_eq!(r.global[0].bytes, expected.to_le_bytes());
}

#[test]
fn window_bases_are_16mb_aligned_below_4gb() {
    for base in [SHARED_WINDOW_BASE, LOCAL_WINDOW_BASE, CONST_WINDOW_BASE] {
        assert_eq!(base & 0x00ff_ffff, 0);
        assert_eq!(base >> 32, 0);
    }
}

/// One instruction accessing memory at a generic or space address; returns the error.
fn access_error(space: Space, addr: u64, ty: Type, store: bool) -> EvalError {
    let mut func = Function::new("bad");
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.iconst(Type::I64, addr as i64);
    if store {
        let v = b.iconst(ty, 0);
        b.store(space, a, 0, &[v]);
    } else {
        b.load1(space, ty, a, 0);
    }
    b.ret();
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 16],
    }];
    launch.dynamic_shared = 32;
    eval::run_function(&func, &launch).unwrap_err()
}

#[test]
fn bad_accesses_are_typed_errors() {
    let e = access_error(Space::Generic, 0x5000, Type::I32, true);
    assert_eq!(
        e.to_string(),
        "inst2: 4-byte access at global address 0x5000 is not mapped"
    );
    let e = access_error(Space::Global, OUT + 16, Type::I64, false);
    assert!(matches!(e, EvalError::Unmapped { addr, size: 8, .. } if addr == OUT + 16));
    // Shared is 32 bytes (dynamic): offset 32 runs off the kernel's shared memory, an
    // overrun PTX leaves undefined (not a fault: see the eval essay), via the window as well.
    let e = access_error(Space::Shared, 32, Type::I32, false);
    assert_eq!(
        e.to_string(),
        "inst1: undefined in PTX: 4-byte shared access at 0x20 lies outside every .shared \
         variable the kernel uses (past its 32 bytes of shared memory)"
    );
    let e = access_error(Space::Generic, SHARED_WINDOW_BASE + 32, Type::I32, true);
    assert!(
        matches!(&e, EvalError::Undefined { why, .. } if why.contains("at 0x20 lies outside")),
        "{e}"
    );
    // No local memory at all in this launch.
    let e = access_error(Space::Generic, LOCAL_WINDOW_BASE, Type::I8, false);
    assert!(matches!(
        e,
        EvalError::OutOfBounds {
            space: Space::Local,
            addr: 0,
            ..
        }
    ));
    let e = access_error(Space::Global, OUT + 2, Type::I32, false);
    assert_eq!(
        e.to_string(),
        "inst1: 4-byte global access at 0x100000002 is misaligned"
    );
    // Param space shorter than the read.
    let e = access_error(Space::Param, 0, Type::I32, false);
    assert!(matches!(
        e,
        EvalError::OutOfBounds {
            space: Space::Param,
            ..
        }
    ));
}

#[test]
fn an_infinite_loop_hits_the_step_limit() {
    let mut func = Function::new("spin");
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    let l = b.create_block();
    b.switch_to_block(e);
    b.jump(l, &[]);
    b.switch_to_block(l);
    b.jump(l, &[]);
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.step_limit = 1000;
    let e = eval::run_function(&func, &launch).unwrap_err();
    assert_eq!(
        e.to_string(),
        "inst1: step limit of 1000 instructions reached"
    );
}

#[test]
fn bad_launches_and_invalid_ir_are_errors() {
    let mut func = Function::new("k");
    func.add_param("p", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    b.ret();
    let launch = Launch::new([1, 1, 1], [1, 1, 1]);
    assert_eq!(
        eval::run_function(&func, &launch).unwrap_err().to_string(),
        "bad launch: 0 parameter bytes given, the kernel takes 8"
    );
    let mut launch = Launch::new([1, 0, 1], [1, 1, 1]);
    launch.params = vec![0; 8];
    assert!(matches!(
        eval::run_function(&func, &launch),
        Err(EvalError::BadLaunch(_))
    ));
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = vec![0; 8];
    launch.global = vec![GlobalRegion {
        base: SHARED_WINDOW_BASE - 4,
        bytes: vec![0; 8],
    }];
    assert_eq!(
        eval::run_function(&func, &launch).unwrap_err().to_string(),
        "bad launch: region at 0xfffffc overlaps a window"
    );
    let empty = Function::new("empty");
    assert_eq!(
        eval::run_function(&empty, &Launch::new([1, 1, 1], [1, 1, 1]))
            .unwrap_err()
            .to_string(),
        "invalid IR: function has no blocks"
    );
    assert_eq!(
        eval::run(&Module::new(), "nope", &Launch::new([1, 1, 1], [1, 1, 1]))
            .unwrap_err()
            .to_string(),
        "no kernel named 'nope'"
    );
}

#[test]
fn mad_variants_expand_to_mul_and_add() {
    let got = eval_values(|b| {
        let a = b.iconst(Type::I32, 0x10000);
        let m = b.iconst(Type::I32, 0x10003);
        let c = b.iconst(Type::I32, 5);
        let lo = b.mad_lo(a, m, c);
        let neg = b.iconst(Type::I32, -3);
        let hi_s = b.mad_hi(true, neg, a, c);
        let hi_u = b.mad_hi(false, neg, a, c);
        let c64 = b.iconst(Type::I64, 1 << 40);
        let wide = b.mad_wide(true, neg, a, c64);
        vec![lo, hi_s, hi_u, wide]
    });
    assert_eq!(
        got,
        vec![
            0x0003_0005, // 0x1_0003_0000 + 5, low 32 bits
            4,           // hi(-3 * 65536) = -1, + 5
            0xffff + 5,  // hi(0xfffffffd * 0x10000) = 0xfffd... high word 0xffff
            (1u64 << 40) - 0x30000,
        ]
    );
}

#[test]
fn huge_memory_is_a_bad_launch() {
    let mut m = Module::new();
    let big = m.add_var(VarData {
        name: "big".into(),
        space: Space::Local,
        size: 0x00f0_0000,
        align: 4,
        init: None,
    });
    // A kernel that names `big` (its address) gets its storage; one that does not, none.
    for (name, names_big) in [("k", true), ("other", false)] {
        let mut func = Function::new(name);
        let mut b = FunctionBuilder::new(&mut func);
        let e = b.create_block();
        b.switch_to_block(e);
        if names_big {
            b.symbol_addr(Type::I64, big);
        }
        b.ret();
        m.functions.push(func);
    }
    // 15 MB of local memory for each of 1024 threads.
    let e = eval::run(&m, "k", &Launch::new([1, 1, 1], [1024, 1, 1])).unwrap_err();
    assert!(matches!(e, EvalError::BadLaunch(_)), "{e}");
    assert!(eval::run(&m, "k", &Launch::new([1, 1, 1], [2, 1, 1])).is_ok());
    assert!(eval::run(&m, "other", &Launch::new([1, 1, 1], [1024, 1, 1])).is_ok());
}

/// sh[tid] = tid * 3; barrier; out[tid] = sh[ntid - 1 - tid], over 2 CTAs of 8 threads.
fn reverse_kernel(with_barrier: bool) -> Result<Vec<u32>, EvalError> {
    let mut m = Module::new();
    let sh = m.add_var(VarData {
        name: "sh".into(),
        space: Space::Shared,
        size: 32,
        align: 4,
        init: None,
    });
    let mut func = Function::new("rev");
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let out = b.load_param(Type::I64, out_off);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let cta = b.special_reg(SpecialReg::Ctaid(Dim::X));
    let base = b.symbol_addr(Type::I32, sh);
    let two = b.iconst(Type::I32, 2);
    let three = b.iconst(Type::I32, 3);
    let off = b.shl(tid, two);
    let mine = b.add(base, off);
    let val = b.mul(tid, three);
    let val = b.add(val, cta);
    b.store(Space::Shared, mine, 0, &[val]);
    if with_barrier {
        b.barrier();
    }
    let one = b.iconst(Type::I32, 1);
    let last = b.sub(ntid, one);
    let other = b.sub(last, tid);
    let other_off = b.shl(other, two);
    let theirs = b.add(base, other_off);
    let x = b.load1(Space::Shared, Type::I32, theirs, 0);
    let gid = b.mad_lo(cta, ntid, tid);
    let four = b.iconst(Type::I32, 4);
    let dst = b.mad_wide(false, gid, four, out);
    b.store(Space::Global, dst, 0, &[x]);
    b.ret();
    m.functions.push(func);
    let mut launch = Launch::new([2, 1, 1], [8, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 64],
    }];
    let r = eval::run(&m, "rev", &launch)?;
    Ok(r.region(OUT)
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

#[test]
fn barrier_orders_shared_memory_between_threads() {
    let expected: Vec<u32> = (0..2u32)
        .flat_map(|cta| (0..8u32).map(move |t| (7 - t) * 3 + cta))
        .collect();
    assert_eq!(reverse_kernel(true).unwrap(), expected);
    // Without the barrier, thread 3 reads slot 4 before thread 4 writes it in the same
    // barrier interval (threads run in order): a data race, with no meaning to compare.
    let e = reverse_kernel(false).unwrap_err();
    let EvalError::Undefined { why, .. } = &e else {
        panic!("expected a race, got {e}");
    };
    assert!(
        why.contains("data race on shared memory: thread 4 writes byte 0x10, which thread 3"),
        "{why}"
    );
}

#[test]
fn threads_that_exited_count_as_arrived_at_a_barrier() {
    // Threads 0 and 1 return at once; 2 and 3 wait at a barrier, then write out[tid] = 1.
    let mut func = Function::new("k");
    let out_off = func.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    let early = b.create_block();
    let late = b.create_block();
    b.switch_to_block(e);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let two = b.iconst(Type::I32, 2);
    let p = b.icmp(IntCC::Ult, tid, two);
    b.brif(p, early, &[], late, &[]);
    b.switch_to_block(early);
    b.ret();
    b.switch_to_block(late);
    b.barrier();
    let out = b.load_param(Type::I64, out_off);
    let one = b.iconst(Type::I8, 1);
    let off = b.zext(Type::I64, tid);
    let dst = b.add(out, off);
    b.store(Space::Global, dst, 0, &[one]);
    b.ret();
    let mut launch = Launch::new([1, 1, 1], [4, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 4],
    }];
    let r = eval::run_function(&func, &launch).unwrap();
    assert_eq!(r.region(OUT).unwrap(), &[0, 0, 1, 1]);
}
