//! Oracle tests: small PTX kernels compiled by NVIDIA's ptxas (sm_50) run in the simulator,
//! and the same kernels, written by hand as IR, run in the reference interpreter; the two
//! `RunOutput`s must be equal byte for byte. The expected memory is never written here: the
//! IR interpreter is the reference, and each test also checks a few values by hand so that a
//! pair of identical wrong answers cannot pass.

use leafold::ir::eval::{self, GlobalRegion, Launch, RunOutput};
use leafold::ir::{
    CvtaDir, Dim, Function, FunctionBuilder, IntCC, Module, Space, SpecialReg, Type, Value, VarData,
};
use leafold::oracle::Oracle;
use leafold::sim::{self, KernelInfo};

/// Compile `ptx` (kernel `k`) and extract what the simulator needs from the cubin.
fn compile(oracle: &Oracle, ptx: &str) -> (Vec<u64>, KernelInfo) {
    let cubin = oracle.ptxas(ptx, "sm_50", &[]).expect("ptxas");
    sim::load_kernel(&cubin, "k").expect("cubin loads")
}

const A: u64 = 0x1_0000_0000;
const OUT: u64 = 0x2_0000_0000;
/// Below 4 GB for the `.address_size 32` kernel, away from the windows.
const A32: u64 = 0x1000_0000;
const OUT32: u64 = 0x2000_0000;

const GRID: [u32; 3] = [2, 1, 1];
const BLOCK: [u32; 3] = [64, 1, 1];
const THREADS: usize = 128;

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u32).wrapping_mul(0x9e37_79b9).wrapping_add(seed) as u8 ^ (i as u8))
        .collect()
}

fn launch(params: Vec<u8>, global: Vec<GlobalRegion>) -> Launch {
    let mut l = Launch::new(GRID, BLOCK);
    l.params = params;
    l.global = global;
    l
}

fn params64(p: &[u64]) -> Vec<u8> {
    p.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn region(base: u64, bytes: Vec<u8>) -> GlobalRegion {
    GlobalRegion { base, bytes }
}

/// Run both and compare; returns the common output.
fn check(
    test: &str,
    ptx: &str,
    func: &Function,
    launch: &Launch,
    tweak: impl FnOnce(&mut KernelInfo),
) -> Option<RunOutput> {
    check_in(test, ptx, &Module::new(), func, launch, tweak)
}

/// [`check`] for a function whose variables live in `module`.
fn check_in(
    test: &str,
    ptx: &str,
    module: &Module,
    func: &Function,
    launch: &Launch,
    tweak: impl FnOnce(&mut KernelInfo),
) -> Option<RunOutput> {
    let oracle = Oracle::for_test(test)?;
    let (code, mut info) = compile(&oracle, ptx);
    tweak(&mut info);
    let reference = eval::run_in(module, func, launch).expect("IR runs");
    let simulated = sim::run(&code, &info, launch).unwrap_or_else(|e| panic!("sim: {e}"));
    assert_eq!(simulated.shared, reference.shared, "{test}: shared memory");
    assert_eq!(simulated.local, reference.local, "{test}: local memory");
    assert_eq!(simulated.global, reference.global, "{test}: global memory");
    Some(simulated)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap())
}

/// `ctaid.x * ntid.x + tid.x` in IR.
fn global_id(b: &mut FunctionBuilder) -> Value {
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ctaid = b.special_reg(SpecialReg::Ctaid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    b.mad_lo(ctaid, ntid, tid)
}

const GID_PTX: &str = "
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r1, %r2, %r3, %r1;";

fn header(size: u32) -> String {
    format!(".version 7.0\n.target sm_50\n.address_size {size}\n")
}

#[test]
fn a_plus_10_64bit() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 A, .param .u64 OUT)
{
  .reg .u32 %r<8>; .reg .u64 %rd<8>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;"
        + GID_PTX
        + "
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r2, [%rd4+40];
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r2;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, pa);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, gid, four);
    let p = b.add(a, off);
    let v = b.load1(Space::Global, Type::I32, p, 40);
    let q = b.add(out, off);
    b.store(Space::Global, q, 0, &[v]);
    b.ret();
    let input = pattern(4 * (THREADS + 10), 1);
    let l = launch(
        params64(&[A, OUT]),
        vec![region(A, input.clone()), region(OUT, vec![0; 4 * THREADS])],
    );
    let Some(r) = check("a_plus_10_64bit", &ptx, &func, &l, |_| {}) else {
        return;
    };
    let out = r.region(OUT).unwrap();
    assert_eq!(u32_at(out, 0), u32_at(&input, 10));
    assert_eq!(u32_at(out, 127), u32_at(&input, 137));
}

#[test]
fn a_plus_10_32bit() {
    let ptx = header(32)
        + ".visible .entry k(.param .u32 A, .param .u32 OUT)
{
  .reg .u32 %r<12>;
  ld.param.u32 %r8, [A];
  ld.param.u32 %r9, [OUT];"
        + GID_PTX
        + "
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r8, %r4;
  ld.global.u32 %r2, [%r5+40];
  add.u32 %r6, %r9, %r4;
  st.global.u32 [%r6], %r2;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 4, 4);
    let po = func.add_param("OUT", 4, 4);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I32, pa);
    let out = b.load_param(Type::I32, po);
    let gid = global_id(&mut b);
    let two = b.iconst(Type::I32, 2);
    let off = b.shl(gid, two);
    let p = b.add(a, off);
    let p = b.zext(Type::I64, p);
    let v = b.load1(Space::Global, Type::I32, p, 40);
    let q = b.add(out, off);
    let q = b.zext(Type::I64, q);
    b.store(Space::Global, q, 0, &[v]);
    b.ret();
    let input = pattern(4 * (THREADS + 10), 2);
    let mut params = (A32 as u32).to_le_bytes().to_vec();
    params.extend((OUT32 as u32).to_le_bytes());
    let l = launch(
        params,
        vec![
            region(A32, input.clone()),
            region(OUT32, vec![0; 4 * THREADS]),
        ],
    );
    let Some(r) = check("a_plus_10_32bit", &ptx, &func, &l, |_| {}) else {
        return;
    };
    let out = r.region(OUT32).unwrap();
    assert_eq!(u32_at(out, 5), u32_at(&input, 15));
}

/// Generic loads and stores: A and OUT are generic pointers to global memory, and the data
/// goes through shared memory addressed generically (cvta.shared), so both Plg outcomes occur.
#[test]
fn generic_through_shared_window() {
    let ptx = header(64)
        + ".extern .shared .align 4 .b8 sm[];
.visible .entry k(.param .u64 A, .param .u64 OUT)
{
  .reg .u32 %r<12>; .reg .u64 %rd<16>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [OUT];"
        + GID_PTX
        + "
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.u32 %r4, [%rd4];
  mov.u64 %rd5, sm;
  cvta.shared.u64 %rd6, %rd5;
  mov.u32 %r5, %tid.x;
  mul.wide.u32 %rd7, %r5, 4;
  add.u64 %rd8, %rd6, %rd7;
  st.u32 [%rd8], %r4;
  bar.sync 0;
  sub.u32 %r6, %r3, %r5;
  mul.wide.u32 %rd9, %r6, 4;
  add.u64 %rd10, %rd6, %rd9;
  ld.u32 %r7, [%rd10+-4];
  add.u64 %rd11, %rd2, %rd3;
  st.u32 [%rd11], %r7;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, pa);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, gid, four);
    let p = b.add(a, off);
    let v = b.load1(Space::Generic, Type::I32, p, 0);
    let zero = b.iconst(Type::I64, 0);
    let sm = b.cvta(CvtaDir::ToGeneric, Space::Shared, Type::I64, zero);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let toff = b.mul_wide(false, tid, four);
    let s = b.add(sm, toff);
    b.store(Space::Generic, s, 0, &[v]);
    b.barrier();
    let rev = b.sub(ntid, tid);
    let roff = b.mul_wide(false, rev, four);
    let s2 = b.add(sm, roff);
    let w = b.load1(Space::Generic, Type::I32, s2, -4);
    let q = b.add(out, off);
    b.store(Space::Generic, q, 0, &[w]);
    b.ret();
    let input = pattern(4 * THREADS, 3);
    let mut l = launch(
        params64(&[A, OUT]),
        vec![region(A, input.clone()), region(OUT, vec![0; 4 * THREADS])],
    );
    l.dynamic_shared = 4 * 64;
    let Some(r) = check("generic_through_shared_window", &ptx, &func, &l, |_| {}) else {
        return;
    };
    let out = r.region(OUT).unwrap();
    // Thread 0 of CTA 1 (global id 64) reads what thread 63 of CTA 1 stored: A[127].
    assert_eq!(u32_at(out, 64), u32_at(&input, 127));
    assert_eq!(u32_at(out, 0), u32_at(&input, 63));
}

/// `out[i] = A[100 - j]` with a signed `j = gid - 50`, 64-bit elements (seed 001's example).
#[test]
fn a_100_minus_signed_i() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 A, .param .u64 OUT)
{
  .reg .u32 %r<12>; .reg .u64 %rd<16>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;"
        + GID_PTX
        + "
  sub.s32 %r4, %r1, 50;
  cvt.s64.s32 %rd6, %r4;
  shl.b64 %rd7, %rd6, 3;
  sub.s64 %rd8, %rd1, %rd7;
  ld.global.u64 %rd9, [%rd8+800];
  mul.wide.u32 %rd3, %r1, 8;
  add.u64 %rd5, %rd2, %rd3;
  st.global.u64 [%rd5], %rd9;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, pa);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let fifty = b.iconst(Type::I32, 50);
    let j = b.sub(gid, fifty);
    let j = b.sext(Type::I64, j);
    let three = b.iconst(Type::I32, 3);
    let s = b.shl(j, three);
    let p = b.sub(a, s);
    let v = b.load1(Space::Global, Type::I64, p, 800);
    let eight = b.iconst(Type::I32, 8);
    let off = b.mul_wide(false, gid, eight);
    let q = b.add(out, off);
    b.store(Space::Global, q, 0, &[v]);
    b.ret();
    let input = pattern(8 * 151, 4);
    let l = launch(
        params64(&[A, OUT]),
        vec![region(A, input.clone()), region(OUT, vec![0; 8 * THREADS])],
    );
    let Some(r) = check("a_100_minus_signed_i", &ptx, &func, &l, |_| {}) else {
        return;
    };
    // gid 0: j = -50, element 150.
    let out = r.region(OUT).unwrap();
    assert_eq!(out[..8], input[8 * 150..8 * 151]);
}

/// Signed and unsigned byte loads.
#[test]
fn byte_loads() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 B, .param .u64 OUT)
{
  .reg .u32 %r<12>; .reg .u64 %rd<16>; .reg .s32 %s<4>;
  ld.param.u64 %rd1, [B];
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;"
        + GID_PTX
        + "
  cvt.u64.u32 %rd3, %r1;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.s8 %s1, [%rd4];
  ld.global.u8 %r5, [%rd4+1];
  shl.b32 %r6, %r5, 8;
  add.s32 %s2, %s1, %r6;
  mul.wide.u32 %rd5, %r1, 4;
  add.u64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %s2;
  ret;
}";
    let mut func = Function::new("k");
    let pb = func.add_param("B", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let base = b.load_param(Type::I64, pb);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let g64 = b.zext(Type::I64, gid);
    let p = b.add(base, g64);
    let s8 = b.load1(Space::Global, Type::I8, p, 0);
    let u8v = b.load1(Space::Global, Type::I8, p, 1);
    let s = b.sext(Type::I32, s8);
    let u = b.zext(Type::I32, u8v);
    let eight = b.iconst(Type::I32, 8);
    let u = b.shl(u, eight);
    let v = b.add(s, u);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, gid, four);
    let q = b.add(out, off);
    b.store(Space::Global, q, 0, &[v]);
    b.ret();
    let mut input = pattern(THREADS + 1, 5);
    input[0] = 0x80; // -128 signed
    input[1] = 0xff;
    let l = launch(
        params64(&[A, OUT]),
        vec![region(A, input), region(OUT, vec![0; 4 * THREADS])],
    );
    let Some(r) = check("byte_loads", &ptx, &func, &l, |_| {}) else {
        return;
    };
    assert_eq!(u32_at(r.region(OUT).unwrap(), 0), (-128i32 + 0xff00) as u32);
}

/// Shared memory through LDS/STS with a barrier: each CTA reverses its slice.
#[test]
fn shared_reverse() {
    let ptx = header(64)
        + ".extern .shared .align 4 .b8 sm[];
.visible .entry k(.param .u64 A, .param .u64 OUT)
{
  .reg .u32 %r<12>; .reg .u64 %rd<16>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;"
        + GID_PTX
        + "
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r4, [%rd4];
  mov.u32 %r5, %tid.x;
  shl.b32 %r6, %r5, 2;
  mov.u32 %r7, sm;
  add.u32 %r8, %r7, %r6;
  st.shared.u32 [%r8], %r4;
  bar.sync 0;
  sub.u32 %r9, %r3, %r5;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r7, %r9;
  ld.shared.u32 %r10, [%r9+-4];
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r10;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, pa);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, gid, four);
    let p = b.add(a, off);
    let v = b.load1(Space::Global, Type::I32, p, 0);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let two = b.iconst(Type::I32, 2);
    let so = b.shl(tid, two);
    b.store(Space::Shared, so, 0, &[v]);
    b.barrier();
    let rev = b.sub(ntid, tid);
    let ro = b.shl(rev, two);
    let w = b.load1(Space::Shared, Type::I32, ro, -4);
    let q = b.add(out, off);
    b.store(Space::Global, q, 0, &[w]);
    b.ret();
    let input = pattern(4 * THREADS, 6);
    let mut l = launch(
        params64(&[A, OUT]),
        vec![region(A, input.clone()), region(OUT, vec![0; 4 * THREADS])],
    );
    l.dynamic_shared = 4 * 64;
    let Some(r) = check("shared_reverse", &ptx, &func, &l, |_| {}) else {
        return;
    };
    assert_eq!(u32_at(r.region(OUT).unwrap(), 1), u32_at(&input, 62));
    // CTA 1's shared memory holds A[64..128].
    assert_eq!(r.shared[1][..], input[4 * 64..]);
}

/// A divergent loop: thread g sums A[g .. g + (g & 7)].
/// The PTX of [`divergent_loop`] (also used by the speed measurement).
fn loop_ptx() -> String {
    header(64)
        + ".visible .entry k(.param .u64 A, .param .u64 OUT)
{
  .reg .u32 %r<12>; .reg .u64 %rd<16>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;"
        + GID_PTX
        + "
  and.b32 %r4, %r1, 7;
  mov.u32 %r5, 0;
  mov.u32 %r6, 0;
LOOP:
  setp.ge.u32 %p1, %r5, %r4;
  @%p1 bra DONE;
  add.u32 %r7, %r1, %r5;
  mul.wide.u32 %rd3, %r7, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r8, [%rd4];
  add.u32 %r6, %r6, %r8;
  add.u32 %r5, %r5, 1;
  bra LOOP;
DONE:
  mul.wide.u32 %rd5, %r1, 4;
  add.u64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r6;
  ret;
}"
}

#[test]
fn divergent_loop() {
    let ptx = loop_ptx();
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let entry = b.create_block();
    let head = b.create_block();
    let k = b.append_block_param(head, Type::I32);
    let acc = b.append_block_param(head, Type::I32);
    let body = b.create_block();
    let done = b.create_block();
    let total = b.append_block_param(done, Type::I32);
    b.switch_to_block(entry);
    let a = b.load_param(Type::I64, pa);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let seven = b.iconst(Type::I32, 7);
    let n = b.binary(leafold::ir::BinaryOp::And, gid, seven);
    let zero = b.iconst(Type::I32, 0);
    b.jump(head, &[zero, zero]);
    b.switch_to_block(head);
    let stop = b.icmp(IntCC::Uge, k, n);
    b.brif(stop, done, &[acc], body, &[]);
    b.switch_to_block(body);
    let idx = b.add(gid, k);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, idx, four);
    let p = b.add(a, off);
    let v = b.load1(Space::Global, Type::I32, p, 0);
    let acc2 = b.add(acc, v);
    let one = b.iconst(Type::I32, 1);
    let k2 = b.add(k, one);
    b.jump(head, &[k2, acc2]);
    b.switch_to_block(done);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, gid, four);
    let q = b.add(out, off);
    b.store(Space::Global, q, 0, &[total]);
    b.ret();
    let input = pattern(4 * (THREADS + 8), 7);
    let l = launch(
        params64(&[A, OUT]),
        vec![region(A, input.clone()), region(OUT, vec![0; 4 * THREADS])],
    );
    let Some(r) = check("divergent_loop", &ptx, &func, &l, |_| {}) else {
        return;
    };
    let out = r.region(OUT).unwrap();
    assert_eq!(u32_at(out, 8), 0);
    let want = (3..3 + 3).fold(0u32, |s, k| s.wrapping_add(u32_at(&input, k)));
    assert_eq!(u32_at(out, 3), want);
}

/// 64-bit compares: ptxas uses `IADD RZ.CC, lo, -lo'` then `ISET.LT(.U32).X` on the high
/// words.
#[test]
fn compare_64bit() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 A, .param .u64 N)
{
  .reg .u64 %rd<8>; .reg .pred %p<3>; .reg .u32 %r<4>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [N];
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd3, %r1;
  setp.lt.u64 %p1, %rd3, %rd2;
  setp.lt.s64 %p2, %rd3, %rd2;
  selp.u32 %r2, 1, 0, %p1;
  selp.u32 %r3, 2, 0, %p2;
  add.u32 %r2, %r2, %r3;
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd1, %rd4;
  st.global.u32 [%rd5], %r2;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let pn = func.add_param("N", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I64, pa);
    let n = b.load_param(Type::I64, pn);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let t64 = b.zext(Type::I64, tid);
    let p1 = b.icmp(IntCC::Ult, t64, n);
    let p2 = b.icmp(IntCC::Slt, t64, n);
    let one = b.iconst(Type::I32, 1);
    let two = b.iconst(Type::I32, 2);
    let zero = b.iconst(Type::I32, 0);
    let r2 = b.select(p1, one, zero);
    let r3 = b.select(p2, two, zero);
    let r = b.add(r2, r3);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, tid, four);
    let q = b.add(a, off);
    b.store(Space::Global, q, 0, &[r]);
    b.ret();
    // (N, expected value at tid 0, at tid 40)
    for (n, at0, at40) in [
        (33u64, 3, 0),
        (0xffff_ffff_0000_0010, 1, 1),
        (0x1_0000_0005, 3, 3),
        (40, 3, 0),
        (41, 3, 3),
    ] {
        let mut l = launch(params64(&[A, n]), vec![region(A, vec![0; 4 * 64])]);
        l.grid = [1, 1, 1];
        let Some(r) = check("compare_64bit", &ptx, &func, &l, |_| {}) else {
            return;
        };
        let out = r.region(A).unwrap();
        assert_eq!((u32_at(out, 0), u32_at(out, 40)), (at0, at40), "N = {n:#x}");
    }
}

/// Simulator speed on the divergent loop kernel over 64 CTAs of 256 threads. Not a check:
/// run it explicitly with
/// `cargo test --release --test sim_ptxas sim_speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn sim_speed() {
    let Some(oracle) = Oracle::for_test("sim_speed") else {
        return;
    };
    let (code, info) = compile(&oracle, &loop_ptx());
    let threads = 64 * 256;
    let mut l = Launch::new([64, 1, 1], [256, 1, 1]);
    l.params = params64(&[A, OUT]);
    l.global = vec![
        region(A, pattern(4 * (threads + 8), 9)),
        region(OUT, vec![0; 4 * threads]),
    ];
    let start = std::time::Instant::now();
    let mut total = 0;
    let rounds = 20;
    for _ in 0..rounds {
        let (_, steps) = sim::run_counted(&code, &info, &l).expect("runs");
        total += steps;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "sim_speed: {total} warp-instructions in {secs:.3} s = {:.2} M warp-instructions/s",
        total as f64 / secs / 1e6
    );
}

/// The 32-bit variant of [`generic_through_shared_window`]: ptxas computes Plg with a 32-bit
/// `LEA P, …` before each generic access.
#[test]
fn generic_through_shared_window_32bit() {
    let ptx = header(32)
        + ".extern .shared .align 4 .b8 sm[];
.visible .entry k(.param .u32 A, .param .u32 OUT)
{
  .reg .u32 %r<20>;
  ld.param.u32 %r10, [A];
  ld.param.u32 %r11, [OUT];"
        + GID_PTX
        + "
  shl.b32 %r12, %r1, 2;
  add.u32 %r13, %r10, %r12;
  ld.u32 %r4, [%r13];
  mov.u32 %r5, sm;
  cvta.shared.u32 %r6, %r5;
  mov.u32 %r7, %tid.x;
  shl.b32 %r8, %r7, 2;
  add.u32 %r8, %r6, %r8;
  st.u32 [%r8], %r4;
  bar.sync 0;
  sub.u32 %r9, %r3, %r7;
  shl.b32 %r9, %r9, 2;
  add.u32 %r9, %r6, %r9;
  ld.u32 %r14, [%r9+-4];
  add.u32 %r15, %r11, %r12;
  st.u32 [%r15], %r14;
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 4, 4);
    let po = func.add_param("OUT", 4, 4);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let a = b.load_param(Type::I32, pa);
    let out = b.load_param(Type::I32, po);
    let gid = global_id(&mut b);
    let two = b.iconst(Type::I32, 2);
    let off = b.shl(gid, two);
    let p = b.add(a, off);
    let p = b.zext(Type::I64, p);
    let v = b.load1(Space::Generic, Type::I32, p, 0);
    let zero = b.iconst(Type::I32, 0);
    let sm = b.cvta(CvtaDir::ToGeneric, Space::Shared, Type::I32, zero);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let ntid = b.special_reg(SpecialReg::Ntid(Dim::X));
    let toff = b.shl(tid, two);
    let s = b.add(sm, toff);
    let s = b.zext(Type::I64, s);
    b.store(Space::Generic, s, 0, &[v]);
    b.barrier();
    let rev = b.sub(ntid, tid);
    let roff = b.shl(rev, two);
    let s2 = b.add(sm, roff);
    let s2 = b.zext(Type::I64, s2);
    let w = b.load1(Space::Generic, Type::I32, s2, -4);
    let q = b.add(out, off);
    let q = b.zext(Type::I64, q);
    b.store(Space::Generic, q, 0, &[w]);
    b.ret();
    let input = pattern(4 * THREADS, 11);
    let mut params = (A32 as u32).to_le_bytes().to_vec();
    params.extend((OUT32 as u32).to_le_bytes());
    let mut l = launch(
        params,
        vec![
            region(A32, input.clone()),
            region(OUT32, vec![0; 4 * THREADS]),
        ],
    );
    l.dynamic_shared = 4 * 64;
    let Some(r) = check(
        "generic_through_shared_window_32bit",
        &ptx,
        &func,
        &l,
        |_| {},
    ) else {
        return;
    };
    let out = r.region(OUT32).unwrap();
    assert_eq!(u32_at(out, 64), u32_at(&input, 127));
}

/// A `.local` array indexed dynamically: ptxas makes a 64-byte frame below `c[0x0][0x20]`
/// (`IADD32I R1, R1, -0x40`) and uses STL/LDL; the IR keeps the array at local offset 0.
/// With the frame size taken from EIATTR_MIN_STACK_SIZE both layouts coincide, so each
/// thread's local memory is compared too.
#[test]
fn local_array() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 OUT)
{
  .local .align 4 .b8 buf[64];
  .reg .u32 %r<12>; .reg .u64 %rd<16>;
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 15;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, buf;
  add.u32 %r5, %r4, %r3;
  st.local.u32 [%r5], %r1;
  add.u32 %r6, %r1, 1;
  and.b32 %r6, %r6, 15;
  shl.b32 %r6, %r6, 2;
  add.u32 %r7, %r4, %r6;
  st.local.u32 [%r7], 7;
  ld.local.u32 %r8, [%r5];
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r8;
  ret;
}";
    let mut m = Module::new();
    let buf = m.add_var(VarData {
        name: "buf".into(),
        space: Space::Local,
        size: 64,
        align: 4,
        init: None,
    });
    let mut func = Function::new("k");
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let out = b.load_param(Type::I64, po);
    let tid = b.special_reg(SpecialReg::Tid(Dim::X));
    let fifteen = b.iconst(Type::I32, 15);
    let two = b.iconst(Type::I32, 2);
    let one = b.iconst(Type::I32, 1);
    let base = b.symbol_addr(Type::I32, buf);
    let i = b.binary(leafold::ir::BinaryOp::And, tid, fifteen);
    let i = b.shl(i, two);
    let p = b.add(base, i);
    b.store(Space::Local, p, 0, &[tid]);
    let j = b.add(tid, one);
    let j = b.binary(leafold::ir::BinaryOp::And, j, fifteen);
    let j = b.shl(j, two);
    let q = b.add(base, j);
    let seven = b.iconst(Type::I32, 7);
    b.store(Space::Local, q, 0, &[seven]);
    let v = b.load1(Space::Local, Type::I32, p, 0);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, tid, four);
    let o = b.add(out, off);
    b.store(Space::Global, o, 0, &[v]);
    b.ret();
    let mut l = launch(params64(&[OUT]), vec![region(OUT, vec![0; 4 * 64])]);
    l.grid = [1, 1, 1];
    let Some(r) = check_in("local_array", &ptx, &m, &func, &l, |i| {
        assert_eq!(i.local_size, 64, "frame size from .nv.info");
    }) else {
        return;
    };
    assert_eq!(u32_at(r.region(OUT).unwrap(), 5), 5);
    assert_eq!(u32_at(&r.local[5], 5), 5);
    assert_eq!(u32_at(&r.local[5], 6), 7);
}

/// Integer atomics run (tests/sim_ops.rs); so does ptxas's f32 add (`ATOM.E.ADD.F32.FTZ.RN`).
#[test]
fn ptxas_float_atomic_add_runs() {
    let Some(oracle) = Oracle::for_test("ptxas_float_atomic_add_runs") else {
        return;
    };
    let ptx = header(64)
        + ".visible .entry k(.param .u64 A)
{
  .reg .f32 %f<4>; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [A];
  cvta.to.global.u64 %rd1, %rd1;
  atom.global.add.f32 %f1, [%rd1], 0f3F800000;
  st.global.f32 [%rd1+4], %f1;
  ret;
}";
    let (code, info) = compile(&oracle, &ptx);
    let mut mem = vec![0u8; 16];
    mem[..4].copy_from_slice(&2.5f32.to_bits().to_le_bytes());
    let l = Launch {
        params: params64(&[A]),
        global: vec![region(A, mem)],
        ..Launch::new([1, 1, 1], [1, 1, 1])
    };
    // ptxas's ATOM.E.ADD.F32.FTZ.RN: memory 2.5 + 1.0, the old value 2.5 returned.
    let out = sim::run(&code, &info, &l).expect("the simulator runs ATOM.F32");
    let m = out.region(A).unwrap();
    assert_eq!(&m[..4], &3.5f32.to_bits().to_le_bytes());
    assert_eq!(&m[4..8], &2.5f32.to_bits().to_le_bytes());
}

/// 3-D blocks and a 2-D grid: thread numbering (x fastest, 32 per warp) and %tid/%ctaid
/// agree with the interpreter. Each thread writes its coordinates at its linear index.
#[test]
fn thread_numbering_3d() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 OUT)
{
  .reg .u32 %r<20>; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ctaid.y;
  mov.u32 %r5, %ntid.x;
  mov.u32 %r6, %ntid.y;
  mov.u32 %r7, %ntid.z;
  mad.lo.u32 %r8, %r4, %r7, %r3;
  mad.lo.u32 %r8, %r8, %r6, %r2;
  mad.lo.u32 %r8, %r8, %r5, %r1;
  shl.b32 %r9, %r2, 8;
  or.b32 %r9, %r9, %r1;
  shl.b32 %r10, %r3, 16;
  or.b32 %r9, %r9, %r10;
  shl.b32 %r10, %r4, 24;
  or.b32 %r9, %r9, %r10;
  mul.wide.u32 %rd2, %r8, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}";
    let mut func = Function::new("k");
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let e = b.create_block();
    b.switch_to_block(e);
    let out = b.load_param(Type::I64, po);
    let t = [Dim::X, Dim::Y, Dim::Z].map(|d| b.special_reg(SpecialReg::Tid(d)));
    let n = [Dim::X, Dim::Y, Dim::Z].map(|d| b.special_reg(SpecialReg::Ntid(d)));
    let cy = b.special_reg(SpecialReg::Ctaid(Dim::Y));
    let idx = b.mad_lo(cy, n[2], t[2]);
    let idx = b.mad_lo(idx, n[1], t[1]);
    let idx = b.mad_lo(idx, n[0], t[0]);
    let shift = |b: &mut FunctionBuilder, v: Value, k: i64| {
        let k = b.iconst(Type::I32, k);
        b.shl(v, k)
    };
    let y = shift(&mut b, t[1], 8);
    let z = shift(&mut b, t[2], 16);
    let c = shift(&mut b, cy, 24);
    let or = leafold::ir::BinaryOp::Or;
    let v = b.binary(or, t[0], y);
    let v = b.binary(or, v, z);
    let v = b.binary(or, v, c);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, idx, four);
    let q = b.add(out, off);
    b.store(Space::Global, q, 0, &[v]);
    b.ret();
    // 13 x 3 x 2 = 78 threads per CTA: three warps, the last one partly empty.
    let mut l = launch(params64(&[OUT]), vec![region(OUT, vec![0; 4 * 156])]);
    l.grid = [1, 2, 1];
    l.block = [13, 3, 2];
    let Some(r) = check("thread_numbering_3d", &ptx, &func, &l, |_| {}) else {
        return;
    };
    let out = r.region(OUT).unwrap();
    // Linear index 1*78 + (1*3 + 2)*13 + 5 = 148: ctaid.y 1, tid (5, 2, 1).
    assert_eq!(u32_at(out, 148), 5 | 2 << 8 | 1 << 16 | 1 << 24);
}

/// Early exits and an if/else inside a divergent loop: threads with `gid & 5 == 5` return first;
/// the others take `gid & 3` Collatz steps on A[gid] (odd: 3v + 1, even: v / 2).
#[test]
fn early_exit_and_branches_in_loop() {
    let ptx = header(64)
        + ".visible .entry k(.param .u64 A, .param .u64 OUT)
{
  .reg .u32 %r<16>; .reg .u64 %rd<8>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [A];
  ld.param.u64 %rd2, [OUT];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;"
        + GID_PTX
        + "
  and.b32 %r4, %r1, 5;
  setp.eq.u32 %p1, %r4, 5;
  @%p1 bra END;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.u32 %r5, [%rd4];
  and.b32 %r6, %r1, 3;
  mov.u32 %r7, 0;
LOOP:
  setp.ge.u32 %p2, %r7, %r6;
  @%p2 bra DONE;
  and.b32 %r8, %r5, 1;
  setp.eq.u32 %p3, %r8, 0;
  @%p3 bra EVEN;
  mad.lo.u32 %r5, %r5, 3, 1;
  bra NEXT;
EVEN:
  shr.u32 %r5, %r5, 1;
NEXT:
  add.u32 %r7, %r7, 1;
  bra LOOP;
DONE:
  add.u64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r5;
END:
  ret;
}";
    let mut func = Function::new("k");
    let pa = func.add_param("A", 8, 8);
    let po = func.add_param("OUT", 8, 8);
    let mut b = FunctionBuilder::new(&mut func);
    let entry = b.create_block();
    let work = b.create_block();
    let head = b.create_block();
    let k = b.append_block_param(head, Type::I32);
    let v = b.append_block_param(head, Type::I32);
    let body = b.create_block();
    let odd = b.create_block();
    let even = b.create_block();
    let next = b.create_block();
    let nv = b.append_block_param(next, Type::I32);
    let done = b.create_block();
    let end = b.create_block();
    b.switch_to_block(entry);
    let a = b.load_param(Type::I64, pa);
    let out = b.load_param(Type::I64, po);
    let gid = global_id(&mut b);
    let one = b.iconst(Type::I32, 1);
    let three = b.iconst(Type::I32, 3);
    let five = b.iconst(Type::I32, 5);
    let bits = b.binary(leafold::ir::BinaryOp::And, gid, five);
    let leave = b.icmp(IntCC::Eq, bits, five);
    b.brif(leave, end, &[], work, &[]);
    b.switch_to_block(work);
    let four = b.iconst(Type::I32, 4);
    let off = b.mul_wide(false, gid, four);
    let p = b.add(a, off);
    let v0 = b.load1(Space::Global, Type::I32, p, 0);
    let zero = b.iconst(Type::I32, 0);
    b.jump(head, &[zero, v0]);
    b.switch_to_block(head);
    let n = b.binary(leafold::ir::BinaryOp::And, gid, three);
    let stop = b.icmp(IntCC::Uge, k, n);
    b.brif(stop, done, &[], body, &[]);
    b.switch_to_block(body);
    let low = b.binary(leafold::ir::BinaryOp::And, v, one);
    let is_even = b.icmp(IntCC::Eq, low, zero);
    b.brif(is_even, even, &[], odd, &[]);
    b.switch_to_block(odd);
    let t = b.mad_lo(v, three, one);
    b.jump(next, &[t]);
    b.switch_to_block(even);
    let h = b.binary(leafold::ir::BinaryOp::ShrU, v, one);
    b.jump(next, &[h]);
    b.switch_to_block(next);
    let k2 = b.add(k, one);
    b.jump(head, &[k2, nv]);
    b.switch_to_block(done);
    let o = b.add(out, off);
    b.store(Space::Global, o, 0, &[v]);
    b.ret();
    b.switch_to_block(end);
    b.ret();
    let input = pattern(4 * THREADS, 13);
    let l = launch(
        params64(&[A, OUT]),
        vec![
            region(A, input.clone()),
            region(OUT, vec![0xee; 4 * THREADS]),
        ],
    );
    let Some(r) = check("early_exit_and_branches_in_loop", &ptx, &func, &l, |_| {}) else {
        return;
    };
    let out = r.region(OUT).unwrap();
    assert_eq!(u32_at(out, 5), 0xeeee_eeee, "gid 5 returned early");
    assert_eq!(u32_at(out, 4), u32_at(&input, 4), "gid 4: no steps");
    // gid 6: two steps.
    let mut v = u32_at(&input, 6);
    for _ in 0..2 {
        v = if v & 1 == 1 {
            v.wrapping_mul(3).wrapping_add(1)
        } else {
            v >> 1
        };
    }
    assert_eq!(u32_at(out, 6), v);
}
