//! The seed's LEA examples (shared/seeds/001 and examples/seed_lea.ptx), built as IR by hand,
//! through lowering, allocation (regalloc2 checker on) and emit. Snapshots pin the VCode and
//! the final SASS; the assertions pin the shapes the seed describes.

mod common;
mod lower_common;

use common::check_with_nvdisasm;
use leafold::ir::{FunctionBuilder, Space, Type};
use leafold::lower::LowerOptions;
use lower_common::{count, run, sass_text};

/// examples/seed_lea.ptx: out[0] = A[i + 10] (64-bit i), out[1] = A[100 - j] (signed 32-bit j),
/// out[2] = B[k].field (128-byte structs, field at 20, unsigned 32-bit k); generic loads,
/// global stores.
fn seed_lea() -> leafold::ir::Function {
    let mut f = leafold::ir::Function::new("seed_lea");
    let a = f.add_param("A", 8, 8);
    let i = f.add_param("i", 8, 8);
    let j = f.add_param("j", 4, 4);
    let bb = f.add_param("B", 8, 8);
    let k = f.add_param("k", 4, 4);
    let out = f.add_param("out", 8, 8);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    let a = b.load_param(Type::I64, a);
    let i = b.load_param(Type::I64, i);
    let j = b.load_param(Type::I32, j);
    let bb = b.load_param(Type::I64, bb);
    let k = b.load_param(Type::I32, k);
    let out = b.load_param(Type::I64, out);
    let out = b.cvta(
        leafold::ir::CvtaDir::FromGeneric,
        Space::Global,
        Type::I64,
        out,
    );
    // A[i + 10]: shl.b64 %rd6, %rd2, 3; add.s64 %rd7, %rd1, %rd6; ld.f64 [%rd7+80]
    let three = b.iconst(Type::I32, 3);
    let s = b.shl(i, three);
    let p = b.add(a, s);
    let x = b.load1(Space::Generic, Type::F64, p, 80);
    b.store(Space::Global, out, 0, &[x]);
    // A[100 - j]: mul.wide.s32 %rd8, %r1, 8; sub.s64 %rd9, %rd1, %rd8; ld.f64 [%rd9+800]
    let eight = b.iconst(Type::I32, 8);
    let w = b.mul_wide(true, j, eight);
    let p = b.sub(a, w);
    let y = b.load1(Space::Generic, Type::F64, p, 800);
    b.store(Space::Global, out, 8, &[y]);
    // B[k].field: mul.wide.u32 %rd10, %r2, 128; add.s64 %rd11, %rd3, %rd10; ld.u32 [%rd11+20]
    let c128 = b.iconst(Type::I32, 128);
    let w = b.mul_wide(false, k, c128);
    let p = b.add(bb, w);
    let z = b.load1(Space::Generic, Type::I32, p, 20);
    b.store(Space::Global, out, 16, &[z]);
    b.ret();
    f
}

#[test]
fn seed_lea_default_matches_the_seed_shapes() {
    // The default window test is ptxas's and the seed's: one Plg per chain, the displacement
    // left in the load.
    let st = run(None, &seed_lea(), LowerOptions::default());
    insta::assert_snapshot!("seed_lea_vcode", st.vcode);
    insta::assert_snapshot!("seed_lea_sass", sass_text(&st.sass));
    // Each access: one LEA.CC + LEA.HI.X pair, parameters read from c[0x0][..] by the chain.
    assert_eq!(count(&st.sass, "LEA"), 3);
    assert_eq!(count(&st.sass, "LEA_HI"), 3);
    // MOVs only for what LEA/STG must read from registers: the indices i (a pair), j and k,
    // and the store pointer (a pair). The bases A and B stay in the constant bank.
    assert_eq!(count(&st.sass, "MOV"), 6);
    // No ISCADD/IADD.X: `A - (j << 3)` is one chain with -Ra and the sign word.
    assert_eq!(count(&st.sass, "SHR"), 1);
    assert_eq!(st.sass.len(), 20);
    check_with_nvdisasm("lower_seed", &st.sass);
}

#[test]
fn seed_lea_per_address_puts_the_displacement_in_the_chain() {
    let st = run(
        None,
        &seed_lea(),
        LowerOptions {
            plg_per_address: true,
            ..LowerOptions::default()
        },
    );
    insta::assert_snapshot!("seed_lea_per_address_sass", sass_text(&st.sass));
    // Plg must cover base + index + disp: a second LEA pair per access.
    assert_eq!(count(&st.sass, "LEA"), 6);
    assert_eq!(count(&st.sass, "LEA_HI"), 6);
    assert_eq!(st.sass.len(), 26);
    check_with_nvdisasm("lower_seed", &st.sass);
}

/// The seed's 32-bit example: `LEA P1, R10, R12, R2 ; LD.U8 Rd, [R10 - 2], P1` (B[i-2] with
/// the base in a register and a 32-bit generic address).
#[test]
fn seed_32bit_byte_access() {
    let mut f = leafold::ir::Function::new("byte");
    let pb = f.add_param("B", 4, 4);
    let pi = f.add_param("i", 4, 4);
    let po = f.add_param("out", 4, 4);
    let mut b = FunctionBuilder::new(&mut f);
    let blk = b.create_block();
    b.switch_to_block(blk);
    // The base arrives in a register (loaded from memory), as in the seed.
    let pbv = b.load_param(Type::I32, pb);
    let base = b.load1(Space::Global, Type::I32, pbv, 0);
    let i = b.load_param(Type::I32, pi);
    let out = b.load_param(Type::I32, po);
    let p = b.add(base, i);
    let x = b.load1(Space::Generic, Type::I8, p, -2);
    b.store(Space::Global, out, 0, &[x]);
    b.ret();
    let st = run(None, &f, LowerOptions::default());
    insta::assert_snapshot!("seed_32bit_byte_sass", sass_text(&st.sass));
    assert_eq!(count(&st.sass, "LEA"), 1);
    check_with_nvdisasm("lower_seed", &st.sass);
}
