//! Per-instruction tests of the simulator with hand-worked expected values. Instructions are
//! either known ptxas words (sm50-isa.md, seed 001) or built with the sm50 encoder. A small
//! harness appends code that stores chosen registers and predicates of every thread to an
//! output buffer.

use leafold::ir::eval::{GlobalRegion, Launch, SHARED_WINDOW_BASE};
use leafold::sim::{self, KernelInfo, SimError};
use leafold::sm50::{encode, Field, Form, Inst};
use leafold::texture::{ChannelType, FilterMode, Shape, Texture, TextureBindings, TextureDesc};

const OUT: u64 = 0x10_0000_0000;
const DATA: u64 = 0x20_0000_0000;
const NOP: u64 = 0x50b0000000070f00;
const EXIT: u64 = 0xe30000000007000f;
const RZ: u64 = 255;

/// What to store per thread: a register or a predicate (as 0/1).
#[derive(Clone, Copy)]
enum D {
    R(u64),
    P(u64),
}

fn ins(form: Form) -> Inst {
    Inst::new(form)
}

fn e(i: Inst) -> u64 {
    encode(&i)
}

fn mov32(rd: u64, v: u32) -> u64 {
    e(ins(Form::MOV32I)
        .with(Field::Rd, rd)
        .with(Field::Imm, u64::from(v)))
}

/// Bundle instruction words (control words are ignored by the simulator; 0 is fine).
fn bundles(insts: &[u64]) -> Vec<u64> {
    let mut v = insts.to_vec();
    while v.len() % 3 != 0 {
        v.push(NOP);
    }
    v.chunks(3)
        .flat_map(|c| [0x001f_8000_fc00_07e0, c[0], c[1], c[2]])
        .collect()
}

struct Run {
    params: Vec<u8>,
    threads: u32,
    data: Vec<u8>,
    shared: u32,
    /// Texture objects (a slot word names one by its handle, `sim::KernelInfo::textures`).
    textures: TextureBindings,
}

impl Default for Run {
    fn default() -> Run {
        Run {
            params: Vec::new(),
            threads: 1,
            data: vec![0; 256],
            shared: 0,
            textures: TextureBindings::new(),
        }
    }
}

/// Run `body` then store `dump` of every thread at OUT + 64·tid; returns, per thread, the
/// dumped values, plus the DATA region afterwards.
fn run_with(run: &Run, body: &[u64], dump: &[D]) -> Result<(Vec<Vec<u32>>, Vec<u8>), SimError> {
    assert!(dump.len() <= 16);
    let mut params = run.params.clone();
    while params.len() % 8 != 0 {
        params.push(0);
    }
    let out_off = 0x140 + params.len() as u64;
    params.extend(OUT.to_le_bytes());
    let mut code = body.to_vec();
    // R249 = tid; R250:R251 = OUT + (tid << 6).
    code.push(e(ins(Form::S2R).with(Field::Rd, 249).with(Field::Sr, 0x21)));
    code.push(e(ins(Form::ISCADD_C)
        .with(Field::Rd, 250)
        .with(Field::Ra, 249)
        .with(Field::Cbo, out_off / 4)
        .with(Field::S, 6)
        .with(Field::Cc, 1)));
    code.push(e(ins(Form::IADD_C)
        .with(Field::Rd, 251)
        .with(Field::Ra, RZ)
        .with(Field::Cbo, out_off / 4 + 1)
        .with(Field::X, 1)));
    code.push(mov32(248, 1));
    for (k, d) in dump.iter().enumerate() {
        let r = match *d {
            D::R(r) => r,
            D::P(p) => {
                code.push(e(ins(Form::SEL_I)
                    .with(Field::Rd, 247)
                    .with(Field::Ra, 248)
                    .with(Field::Ps, p)));
                247
            }
        };
        code.push(e(ins(Form::STG)
            .with(Field::Rd, r)
            .with(Field::Ra, 250)
            .with(Field::E, 1)
            .with(Field::Off, 4 * k as u64)));
    }
    code.push(EXIT);
    let mut launch = Launch::new([1, 1, 1], [run.threads, 1, 1]);
    launch.params = params.clone();
    launch.dynamic_shared = run.shared;
    launch.textures = run.textures.clone();
    launch.global = vec![
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 64 * run.threads as usize],
        },
        GlobalRegion {
            base: DATA,
            bytes: run.data.clone(),
        },
    ];
    let info = KernelInfo::new(params.len() as u32);
    let out = sim::run(&bundles(&code), &info, &launch)?;
    let o = out.region(OUT).unwrap();
    let per = (0..run.threads as usize)
        .map(|t| {
            (0..dump.len())
                .map(|k| {
                    let a = 64 * t + 4 * k;
                    u32::from_le_bytes(o[a..a + 4].try_into().unwrap())
                })
                .collect()
        })
        .collect();
    Ok((per, out.region(DATA).unwrap().to_vec()))
}

/// One thread, registers only.
fn regs(params: &[u8], body: &[u64], dump: &[D]) -> Vec<u32> {
    let run = Run {
        params: params.to_vec(),
        ..Run::default()
    };
    run_with(&run, body, dump).expect("runs").0.remove(0)
}

fn p64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

// ---------------------------------------------------------------- LEA

/// Seed a_i_plus_10: `LEA R0.CC, R3, c[0x0][0x140], 0x3; LEA.HI.X R3, R3, c[0x0][0x144],
/// R2, 0x3` computes A + (i << 3) with a carry from the low word.
#[test]
fn lea_pair_from_ptxas() {
    let a = 0x1_ffff_fff8u64;
    let body = [
        mov32(3, 0x2000_0001), // i low
        mov32(2, 0),           // i high
        0x4bd7818005070300,
        0x1a1f010005170303,
    ];
    // (0x2000_0001 << 3) = 0x1_0000_0008; + 0x1_ffff_fff8 = 0x3_0000_0000.
    assert_eq!(regs(&p64(&[a]), &body, &[D::R(0), D::R(3)]), [0, 3]);
}

/// Seed 001's A[100 - i]: `LEA.LO R0.CC, -R2, R4, 3; LEA.HI.X R1, -R2, R5, R3, 3` with the
/// sign word in R3 negates the 64-bit offset.
#[test]
fn lea_negated_offset() {
    let lo = ins(Form::LEA_R)
        .with(Field::Rd, 0)
        .with(Field::Ra, 2)
        .with(Field::Rb, 4)
        .with(Field::S, 3)
        .with(Field::Nega, 1)
        .with(Field::Cc, 1);
    let hi = ins(Form::LEA_HI_R)
        .with(Field::Rd, 1)
        .with(Field::Ra, 2)
        .with(Field::Rb, 5)
        .with(Field::Rc, 3)
        .with(Field::S, 3)
        .with(Field::Nega, 1)
        .with(Field::X, 1);
    let run = |i: i32, base: u64| {
        let body = [
            mov32(2, i as u32),
            mov32(3, (i >> 31) as u32),
            mov32(4, base as u32),
            mov32(5, (base >> 32) as u32),
            e(lo),
            e(hi),
        ];
        let r = regs(&[], &body, &[D::R(0), D::R(1)]);
        u64::from(r[1]) << 32 | u64::from(r[0])
    };
    // 0x1_0000_0010 - 5*8 = 0xffff_ffe8.
    assert_eq!(run(5, 0x1_0000_0010), 0xffff_ffe8);
    // i = -3: base + 24.
    assert_eq!(run(-3, 0x1_ffff_fff0), 0x2_0000_0008);
    // i = 0: the negation of zero must not carry into the high word.
    assert_eq!(run(0, 0x7_0000_0000), 0x7_0000_0000);
}

/// The U128 chain of seed 001: base + (offset << 17) over four words.
#[test]
fn lea_u128_chain() {
    let base: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
    let off: u128 = 0xffff_0000_1234_5678_9abc_def0_ffff_ffff;
    let mut body = Vec::new();
    for k in 0..4 {
        body.push(mov32(k, (base >> (32 * k)) as u32));
        body.push(mov32(8 + k, (off >> (32 * k)) as u32));
    }
    body.push(e(ins(Form::LEA_R)
        .with(Field::Rd, 12)
        .with(Field::Ra, 8)
        .with(Field::Rb, 0)
        .with(Field::S, 17)
        .with(Field::Cc, 1)));
    for k in 1..4u64 {
        body.push(e(ins(Form::LEA_HI_R)
            .with(Field::Rd, 12 + k)
            .with(Field::Ra, 8 + k - 1)
            .with(Field::Rb, k)
            .with(Field::Rc, 8 + k)
            .with(Field::S, 17)
            .with(Field::X, 1)
            .with(Field::Cc, u64::from(k < 3))));
    }
    let r = regs(&[], &body, &[D::R(12), D::R(13), D::R(14), D::R(15)]);
    let got = r
        .iter()
        .enumerate()
        .fold(0u128, |s, (k, &w)| s | u128::from(w) << (32 * k));
    assert_eq!(got, base.wrapping_add(off << 17));
}

/// 32-bit `LEA P0, R0, R0, -0x2` (ptxas, `.address_size 32`): Plg = shared-window detect.
#[test]
fn lea_32bit_plg() {
    let lea = 0x37d0007fffe70000;
    let sw = SHARED_WINDOW_BASE as u32;
    let r = regs(&[], &[mov32(0, sw + 0x12), lea], &[D::R(0), D::P(0)]);
    // Plg is "not in the shared window": false inside it.
    assert_eq!(r, [sw + 0x10, 0]);
    let r = regs(&[], &[mov32(0, 0x5000_0002), lea], &[D::R(0), D::P(0)]);
    assert_eq!(r, [0x5000_0000, 1]);
    // Just below the window (the -2 moves it out).
    let r = regs(&[], &[mov32(0, sw + 1), lea], &[D::R(0), D::P(0)]);
    assert_eq!(r, [sw - 1, 1]);
}

/// 64-bit Plg: `LEA R2.CC, R0, 0x320; LEA.HI.X P0, R3, R0, RZ, R3`: P0 is false ("shared")
/// when the high word is 0 and the low word is in the shared window.
#[test]
fn lea_hi_x_plg() {
    let sw = SHARED_WINDOW_BASE as u32;
    let run = |lo: u32, hi: u32| {
        let body = [
            mov32(0, lo),
            mov32(3, hi),
            0x36d7800032070002,
            0x5bd801c00ff70003,
        ];
        regs(&[], &body, &[D::R(2), D::R(3), D::P(0)])
    };
    assert_eq!(run(sw, 0), [sw + 0x320, 0, 0]);
    assert_eq!(run(sw, 1), [sw + 0x320, 1, 1]);
    assert_eq!(run(0x3000_0000, 0), [0x3000_0320, 0, 1]);
    // The carry from the low word reaches the high word (and leaves the window).
    assert_eq!(run(0xffff_fff0, 0), [0x310, 1, 1]);
}

// ---------------------------------------------------------------- generic memory

fn generic_ld(p: u64) -> u64 {
    e(ins(Form::LD)
        .with(Field::Rd, 10)
        .with(Field::Ra, 2)
        .with(Field::E, 1)
        .with(Field::P, p))
}

/// A generic load whose predicate says "shared" (false) on an address outside the shared
/// window is a Plg bug, reported; on a shared address it is served from shared memory, and
/// PT decodes the windows.
#[test]
fn generic_ld_plg_mismatch() {
    let sw = SHARED_WINDOW_BASE as u32;
    let mut data = vec![0; 256];
    data[16..20].copy_from_slice(&0x1234_5678u32.to_le_bytes());
    let run = Run {
        shared: 64,
        data,
        ..Run::default()
    };
    // P0 is false initially.
    let body = [
        mov32(2, DATA as u32 + 16),
        mov32(3, (DATA >> 32) as u32),
        generic_ld(0),
    ];
    let err = run_with(&run, &body, &[D::R(10)]).unwrap_err();
    assert_eq!(
        err,
        SimError::PlgMismatch {
            addr: 0x18,
            at: DATA + 16
        }
    );
    // PT on the same global address decodes it.
    let body = [
        mov32(2, DATA as u32 + 16),
        mov32(3, (DATA >> 32) as u32),
        generic_ld(7),
    ];
    let (r, _) = run_with(&run, &body, &[D::R(10)]).unwrap();
    assert_eq!(r[0], [0x1234_5678]);
    // A false predicate and PT on a shared address both read shared memory.
    for p in [0, 7] {
        let body = [
            mov32(2, sw + 8),
            mov32(3, 0),
            mov32(4, 0xdead_beef),
            e(ins(Form::STS)
                .with(Field::Rd, 4)
                .with(Field::Ra, RZ)
                .with(Field::Off, 8)),
            generic_ld(p),
        ];
        let (r, _) = run_with(&run, &body, &[D::R(10)]).unwrap();
        assert_eq!(r[0], [0xdead_beef], "predicate {p}");
    }
}

// ---------------------------------------------------------------- integer ALU

#[test]
fn iadd_carry_chain_and_subtract() {
    // 64-bit add: 0x1_ffff_ffff + 0x1 = 0x2_0000_0000.
    let add_lo = ins(Form::IADD_R)
        .with(Field::Rd, 4)
        .with(Field::Ra, 0)
        .with(Field::Rb, 2)
        .with(Field::Cc, 1);
    let add_hi = ins(Form::IADD_R)
        .with(Field::Rd, 5)
        .with(Field::Ra, 1)
        .with(Field::Rb, 3)
        .with(Field::X, 1);
    let body = [
        mov32(0, 0xffff_ffff),
        mov32(1, 1),
        mov32(2, 1),
        mov32(3, 0),
        e(add_lo),
        e(add_hi),
    ];
    assert_eq!(regs(&[], &body, &[D::R(4), D::R(5)]), [0, 2]);
    // ptxas's subtraction: ISCADD lo.CC, -Ri, B, 2 ; IADD.X hi, -Rhi, Bhi.
    // 0x5_0000_0000 - (3 << 2) = 0x4_ffff_fff4; and 0x5_0000_0000 - 0 stays.
    for (i, want) in [(3u32, 0x4_ffff_fff4u64), (0, 0x5_0000_0000)] {
        let body = [
            mov32(0, i),
            mov32(1, 0),
            mov32(2, 0),
            mov32(3, 5),
            e(ins(Form::ISCADD_R)
                .with(Field::Rd, 4)
                .with(Field::Ra, 0)
                .with(Field::Rb, 2)
                .with(Field::S, 2)
                .with(Field::Nega, 1)
                .with(Field::Cc, 1)),
            e(ins(Form::IADD_R)
                .with(Field::Rd, 5)
                .with(Field::Ra, 3)
                .with(Field::Rb, 1)
                .with(Field::Negb, 1)
                .with(Field::X, 1)),
        ];
        let r = regs(&[], &body, &[D::R(4), D::R(5)]);
        assert_eq!(u64::from(r[1]) << 32 | u64::from(r[0]), want, "i = {i}");
    }
    // IADD32I with a negative immediate, IADD3 with a negated operand, .PO.
    let body = [
        mov32(0, 10),
        mov32(1, 3),
        mov32(2, 100),
        e(ins(Form::IADD32I)
            .with(Field::Rd, 4)
            .with(Field::Ra, 0)
            .with(Field::Imm, (-7i32) as u32 as u64)),
        e(ins(Form::IADD3_R)
            .with(Field::Rd, 5)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Rc, 2)
            .with(Field::Negb, 1)),
        e(ins(Form::IADD_R)
            .with(Field::Rd, 6)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Nega, 1)
            .with(Field::Negb, 1)),
    ];
    assert_eq!(regs(&[], &body, &[D::R(4), D::R(5), D::R(6)]), [3, 107, 14]);
}

/// ptxas's 32-bit multiply: XMAD; XMAD.MRG; XMAD.PSL.CBCC.
#[test]
fn xmad_multiply_idiom() {
    for (a, b) in [
        (3u32, 5u32),
        (0x1234_5678, 0x9abc_def0),
        (0xffff_ffff, 0xffff_ffff),
        (0x10000, 0x10000),
    ] {
        let body = [
            mov32(2, a),
            mov32(3, b),
            e(ins(Form::XMAD_R)
                .with(Field::Rd, 4)
                .with(Field::Ra, 2)
                .with(Field::Rb, 3)),
            e(ins(Form::XMAD_R)
                .with(Field::Rd, 5)
                .with(Field::Ra, 2)
                .with(Field::Rb, 3)
                .with(Field::Bh, 1)
                .with(Field::Mrg, 1)),
            e(ins(Form::XMAD_R)
                .with(Field::Rd, 6)
                .with(Field::Ra, 2)
                .with(Field::Ah, 1)
                .with(Field::Rb, 5)
                .with(Field::Bh, 1)
                .with(Field::Rc, 4)
                .with(Field::Psl, 1)
                .with(Field::Mode, 4)),
        ];
        assert_eq!(
            regs(&[], &body, &[D::R(6)]),
            [a.wrapping_mul(b)],
            "{a:#x}*{b:#x}"
        );
    }
    // Signed halves: XMAD.S16.S16 of 0xffff (-1) and 0x0003 (3) plus 10 = 7.
    let body = [
        mov32(2, 0xffff),
        mov32(3, 3),
        mov32(4, 10),
        e(ins(Form::XMAD_R)
            .with(Field::Rd, 5)
            .with(Field::Ra, 2)
            .with(Field::Rb, 3)
            .with(Field::Rc, 4)
            .with(Field::Sa, 1)
            .with(Field::Sb, 1)),
        // .CHI: C = Rc >> 16.
        e(ins(Form::XMAD_I)
            .with(Field::Rd, 6)
            .with(Field::Ra, 3)
            .with(Field::ImmImm16, 7)
            .with(Field::Rc, 2)
            .with(Field::Mode, 2)),
    ];
    assert_eq!(regs(&[], &body, &[D::R(5), D::R(6)]), [7, 21]);
}

/// IMUL/IMUL32I: low or high (.HI) word of the 64-bit product, each operand read as signed
/// or unsigned. ptxas never emits IMUL for sm_50 (it uses XMAD), so these are encoder words
/// with hand-worked values.
#[test]
fn imul_low_high_and_signedness() {
    let (a, b) = (0xffff_fffeu32, 0x0000_0003u32); // -2 and 3
    let imul = |rd: u64, hi: u64, sa: u64, sb: u64| {
        e(ins(Form::IMUL_R)
            .with(Field::Rd, rd)
            .with(Field::Ra, 2)
            .with(Field::Rb, 3)
            .with(Field::Hi, hi)
            .with(Field::Sa, sa)
            .with(Field::Sb, sb))
    };
    let body = [
        mov32(2, a),
        mov32(3, b),
        imul(4, 0, 0, 0),
        imul(5, 1, 0, 0),
        imul(6, 1, 1, 1),
        imul(7, 1, 0, 1),
        // IMUL32I.S32.S32.HI R8, R2, -0x10: (-2) * (-16) = 32, high word 0.
        e(ins(Form::IMUL32I)
            .with(Field::Rd, 8)
            .with(Field::Ra, 2)
            .with(Field::Imm, 0xffff_fff0)
            .with(Field::Hi, 1)
            .with(Field::Sa, 1)
            .with(Field::Sb, 1)),
        // IMUL32I.U32.U32.HI R9, R2, 0xfffffff0: (2^32-2)(2^32-16) >> 32 = 2^32 - 18.
        e(ins(Form::IMUL32I)
            .with(Field::Rd, 9)
            .with(Field::Ra, 2)
            .with(Field::Imm, 0xffff_fff0)
            .with(Field::Hi, 1)),
        // IMUL.S32.S32 R10, R2, -7 (imm20): low word 14.
        e(ins(Form::IMUL_I)
            .with(Field::Rd, 10)
            .with(Field::Ra, 2)
            .with(Field::ImmImm20s, 0xf_fff9)
            .with(Field::Sa, 1)
            .with(Field::Sb, 1)),
    ];
    let dump = [4, 5, 6, 7, 8, 9, 10].map(D::R);
    assert_eq!(
        regs(&[], &body, &dump),
        [
            0xffff_fffa, // low word of any signedness: -6
            0x0000_0002, // (2^32 - 2) * 3 = 0x2_ffff_fffa
            0xffff_ffff, // -6 signed: high word all ones
            0x0000_0002, // unsigned a, signed b = 3: as unsigned
            0,
            0xffff_ffee,
            14,
        ]
    );
}

#[test]
fn shifts_and_bitfields() {
    let body = [
        mov32(0, 0x8000_00f1),
        mov32(1, 0x0000_0003),
        // SHR.S32 R2, R0, 4 (arithmetic); SHR.U32 R3, R0, 40 → 0.
        e(ins(Form::SHR_I)
            .with(Field::Rd, 2)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 4)
            .with(Field::Sgn, 1)),
        e(ins(Form::SHR_I)
            .with(Field::Rd, 3)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 40)),
        // SHF.L.U64 R4 = hi32({R1:R0} << 4) = 0x38.
        e(ins(Form::SHF_LI)
            .with(Field::Rd, 4)
            .with(Field::Ra, 0)
            .with(Field::Sh, 4)
            .with(Field::Rc, 1)
            .with(Field::Ty, 2)),
        // SHF.R.U64 R5 = lo32({R1:R0} >> 4) = 0x3800_000f.
        e(ins(Form::SHF_RI)
            .with(Field::Rd, 5)
            .with(Field::Ra, 0)
            .with(Field::Sh, 4)
            .with(Field::Rc, 1)
            .with(Field::Ty, 2)),
        // BFE R6 = signed bits 4..8 of R0 (0xf → -1); BFE.U32 R7 = 0xf.
        e(ins(Form::BFE_I)
            .with(Field::Rd, 6)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 0x404)
            .with(Field::Sgn, 1)),
        e(ins(Form::BFE_I)
            .with(Field::Rd, 7)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 0x404)),
        // BFI R8 = R1 (3) inserted into R0 at 8, 4 bits.
        e(ins(Form::BFI_I)
            .with(Field::Rd, 8)
            .with(Field::Ra, 1)
            .with(Field::ImmImm20s, 0x408)
            .with(Field::Rc, 0)),
        // POPC R9 = popc(R0) = 6; FLO.U32 R10 = 31; FLO.U32.SH R11 of R1 = 30.
        e(ins(Form::POPC_R).with(Field::Rd, 9).with(Field::Rb, 0)),
        e(ins(Form::FLO_R).with(Field::Rd, 10).with(Field::Rb, 0)),
        e(ins(Form::FLO_R)
            .with(Field::Rd, 11)
            .with(Field::Rb, 1)
            .with(Field::Sh, 1)),
    ];
    let r = regs(
        &[],
        &body,
        &[
            D::R(2),
            D::R(3),
            D::R(4),
            D::R(5),
            D::R(6),
            D::R(7),
            D::R(8),
            D::R(9),
            D::R(10),
            D::R(11),
        ],
    );
    assert_eq!(
        r,
        [
            0xf800_000f,
            0,
            0x38,
            0x3800_000f,
            0xffff_ffff,
            0xf,
            0x8000_03f1,
            6,
            31,
            30
        ]
    );
}

#[test]
fn logic_compare_select() {
    let isetp = |cmp: u64, sgn: u64, pd0: u64| {
        e(ins(Form::ISETP_R)
            .with(Field::Pd0, pd0)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Cmp, cmp)
            .with(Field::Sgn, sgn))
    };
    let body = [
        mov32(0, 0xffff_fffe), // -2 signed
        mov32(1, 5),
        isetp(1, 1, 0), // -2 < 5 signed: P0 = 1
        isetp(1, 0, 1), // unsigned: P1 = 0
        // PSETP.AND.OR P2 = (P0 & !P1) | P1 = 1
        e(ins(Form::PSETP)
            .with(Field::Pd0, 2)
            .with(Field::Pa, 0)
            .with(Field::Pb, 1)
            .with(Field::Pbn, 1)
            .with(Field::Bop1, 0)
            .with(Field::Pc, 1)
            .with(Field::Bop2, 1)),
        // SEL R2 = P1 ? R0 : R1 = 5
        e(ins(Form::SEL_R)
            .with(Field::Rd, 2)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Ps, 1)),
        // LOP3 R3 = R0 ^ R1 ^ 0 (LUT 0x96 with RZ) ; LOP.AND R4 = ~R0 & R1 with .NZ into P3.
        e(ins(Form::LOP3_R)
            .with(Field::Rd, 3)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Rc, RZ)
            .with(Field::Lut, 0x96)),
        e(ins(Form::LOP_R)
            .with(Field::Rd, 4)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Inva, 1)
            .with(Field::Pop, 3)
            .with(Field::Pd, 3)),
        // IMNMX: signed min (PT) = -2; unsigned max (!PT) = 0xfffffffe.
        e(ins(Form::IMNMX_R)
            .with(Field::Rd, 5)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Sgn, 1)),
        e(ins(Form::IMNMX_R)
            .with(Field::Rd, 6)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Paccn, 1)),
    ];
    let r = regs(
        &[],
        &body,
        &[
            D::P(0),
            D::P(1),
            D::P(2),
            D::R(2),
            D::R(3),
            D::R(4),
            D::P(3),
            D::R(5),
            D::R(6),
        ],
    );
    assert_eq!(r, [1, 0, 1, 5, 0xffff_fffb, 1, 1, 0xffff_fffe, 0xffff_fffe]);
}

#[test]
fn i2i_and_special_registers() {
    let body = [
        mov32(0, 0x0000_80ff),
        // I2I.S32.S8 R1 = sext(0xff) = -1; I2I.S32.S16 .H1-less of 0x80ff = -32513;
        e(ins(Form::I2I_R)
            .with(Field::Rd, 1)
            .with(Field::Rb, 0)
            .with(Field::Dt, 6)
            .with(Field::St, 4)),
        e(ins(Form::I2I_R)
            .with(Field::Rd, 2)
            .with(Field::Rb, 0)
            .with(Field::Dt, 6)
            .with(Field::St, 5)),
        // I2I.U8.S32.SAT of -1 → 0; byte 1 (.B1) as U8 → 0x80.
        e(ins(Form::I2I_R)
            .with(Field::Rd, 3)
            .with(Field::Rb, 1)
            .with(Field::Dt, 0)
            .with(Field::St, 6)
            .with(Field::Sat, 1)),
        e(ins(Form::I2I_R)
            .with(Field::Rd, 4)
            .with(Field::Rb, 0)
            .with(Field::Dt, 2)
            .with(Field::St, 0)
            .with(Field::Bsel, 1)),
        e(ins(Form::S2R).with(Field::Rd, 5).with(Field::Sr, 0x00)), // LANEID
        e(ins(Form::S2R).with(Field::Rd, 6).with(Field::Sr, 0x39)), // LTMASK
        e(ins(Form::MOV_C)
            .with(Field::Rd, 7)
            .with(Field::Cbo, 0x8 / 4)), // ntid.x
    ];
    let run = Run {
        threads: 40,
        ..Run::default()
    };
    let (r, _) = run_with(
        &run,
        &body,
        &[
            D::R(1),
            D::R(2),
            D::R(3),
            D::R(4),
            D::R(5),
            D::R(6),
            D::R(7),
        ],
    )
    .unwrap();
    assert_eq!(r[0], [0xffff_ffff, (-32513i32) as u32, 0, 0x80, 0, 0, 40]);
    assert_eq!(r[37][4..], [5, 0x1f, 40]);
}

// ---------------------------------------------------------------- memory

#[test]
fn loads_of_every_size() {
    let data: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) ^ 0x80).collect();
    let run = Run {
        data: data.clone(),
        ..Run::default()
    };
    let ldg = |rd: u64, size: u64, off: u64| {
        e(ins(Form::LDG)
            .with(Field::Rd, rd)
            .with(Field::Ra, 2)
            .with(Field::E, 1)
            .with(Field::Size, size)
            .with(Field::Off, off))
    };
    let body = [
        mov32(2, DATA as u32),
        mov32(3, (DATA >> 32) as u32),
        ldg(4, 0, 3),   // U8
        ldg(5, 1, 3),   // S8
        ldg(6, 3, 6),   // S16
        ldg(8, 5, 8),   // 64
        ldg(12, 6, 16), // 128
    ];
    let (r, _) = run_with(
        &run,
        &body,
        &[
            D::R(4),
            D::R(5),
            D::R(6),
            D::R(8),
            D::R(9),
            D::R(12),
            D::R(15),
        ],
    )
    .unwrap();
    let w = |o: usize| u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
    assert_eq!(r[0][0], u32::from(data[3]));
    assert_eq!(r[0][1], data[3] as i8 as i32 as u32);
    assert_eq!(
        r[0][2],
        i16::from_le_bytes([data[6], data[7]]) as i32 as u32
    );
    assert_eq!(r[0][3..], [w(8), w(12), w(16), w(28)]);

    // A store then its errors: misaligned and out of bounds, each naming the address.
    let stg = |off: u64| {
        e(ins(Form::STG)
            .with(Field::Rd, 4)
            .with(Field::Ra, 2)
            .with(Field::E, 1)
            .with(Field::Off, off))
    };
    let body = [
        mov32(2, DATA as u32),
        mov32(3, (DATA >> 32) as u32),
        mov32(4, 7),
        stg(60),
    ];
    let (_, after) = run_with(&run, &body, &[]).unwrap();
    assert_eq!(after[60..], 7u32.to_le_bytes());
    let body = [mov32(2, DATA as u32), mov32(3, (DATA >> 32) as u32), stg(2)];
    assert!(matches!(
        run_with(&run, &body, &[]),
        Err(SimError::Misaligned { addr: 0x18, at, size: 4, .. }) if at == DATA + 2
    ));
    let body = [
        mov32(2, DATA as u32),
        mov32(3, (DATA >> 32) as u32),
        stg(64),
    ];
    assert!(matches!(
        run_with(&run, &body, &[]),
        Err(SimError::Unmapped {
            addr: 0x18,
            size: 4,
            ..
        })
    ));
}

// ---------------------------------------------------------------- control flow

fn bra(addr: u64, target: u64, pg: u64, pgn: u64) -> u64 {
    let rel = target.wrapping_sub(addr + 8) & 0xff_ffff;
    e(ins(Form::BRA)
        .with(Field::Rel, rel)
        .with(Field::Pg, pg)
        .with(Field::Pgn, pgn))
}

/// if (laneid < 5) R4 = 1 else R4 = 2; then R5 = R4 + 10 after reconvergence (SSY/SYNC).
#[test]
fn divergent_if_else_reconverges() {
    // Addresses: bundle 0 = 0x08 0x10 0x18, bundle 1 = 0x28 0x30 0x38, bundle 2 = 0x48 ...
    let ssy = |target: u64, at: u64| {
        e(ins(Form::SSY).with(Field::Rel, target.wrapping_sub(at + 8) & 0xff_ffff))
    };
    let sync = 0xf0f800000007000f;
    let body = [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0)), // 0x08
        e(ins(Form::ISETP_I)
            .with(Field::Pd0, 0)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 5)
            .with(Field::Cmp, 1)), // 0x10: P0 = lane < 5
        ssy(0x68, 0x18),                                         // 0x18
        bra(0x28, 0x50, 0, 1),                                   // 0x28: @!P0 BRA else
        mov32(4, 1),                                             // 0x30
        sync,                                                    // 0x38
        mov32(4, 2),                                             // 0x48 (unused slot filler)
        mov32(4, 2),                                             // 0x50: else
        sync,                                                    // 0x58
        e(ins(Form::IADD32I)
            .with(Field::Rd, 5)
            .with(Field::Ra, 4)
            .with(Field::Imm, 10)), // 0x68
    ];
    let run = Run {
        threads: 32,
        ..Run::default()
    };
    let (r, _) = run_with(&run, &body, &[D::R(4), D::R(5)]).unwrap();
    for (lane, v) in r.iter().enumerate() {
        let want = if lane < 5 { [1, 11] } else { [2, 12] };
        assert_eq!(v[..], want, "lane {lane}");
    }
}

/// A loop left with BRK: each lane counts to its lane id (PBK/BRK).
#[test]
fn loop_with_break() {
    let pbk = |target: u64, at: u64| {
        e(ins(Form::PBK).with(Field::Rel, target.wrapping_sub(at + 8) & 0xff_ffff))
    };
    let brk = e(ins(Form::BRK).with(Field::Pg, 0));
    let body = [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0)), // 0x08 lane
        mov32(4, 0),                                             // 0x10
        pbk(0x50, 0x18),                                         // 0x18
        e(ins(Form::ISETP_R)
            .with(Field::Pd0, 0)
            .with(Field::Ra, 4)
            .with(Field::Rb, 0)
            .with(Field::Cmp, 6)), // 0x28: P0 = R4 >= lane
        brk,                                                     // 0x30: @P0 BRK
        e(ins(Form::IADD32I)
            .with(Field::Rd, 4)
            .with(Field::Ra, 4)
            .with(Field::Imm, 1)), // 0x38
        bra(0x48, 0x28, 7, 0),                                   // 0x48
        mov32(6, 99),                                            // 0x50
    ];
    let run = Run {
        threads: 32,
        ..Run::default()
    };
    let (r, _) = run_with(&run, &body, &[D::R(4), D::R(6)]).unwrap();
    for (lane, v) in r.iter().enumerate() {
        assert_eq!(v[..], [lane as u32, 99], "lane {lane}");
    }
}

#[test]
fn errors_name_the_address() {
    // An undecodable word at 0x10.
    let err = sim::run(
        &bundles(&[NOP, 0xffff_ffff_ffff_ffff, EXIT]),
        &KernelInfo::default(),
        &Launch::new([1, 1, 1], [1, 1, 1]),
    )
    .unwrap_err();
    assert_eq!(
        err,
        SimError::Decode {
            addr: 0x10,
            word: 0xffff_ffff_ffff_ffff
        }
    );
    // `BRA self` hits the step limit.
    let mut l = Launch::new([1, 1, 1], [1, 1, 1]);
    l.step_limit = 100;
    let err = sim::run(
        &bundles(&[NOP, bra(0x10, 0x10, 7, 0)]),
        &KernelInfo::default(),
        &l,
    )
    .unwrap_err();
    assert_eq!(
        err,
        SimError::StepLimit {
            addr: 0x10,
            limit: 100
        }
    );
    // Falling off the end of the code.
    let err = sim::run(&bundles(&[NOP]), &KernelInfo::default(), &l).unwrap_err();
    assert!(matches!(err, SimError::BadPc { addr: 0x28, .. }), "{err}");
    // Too few parameter bytes.
    let err = sim::run(&bundles(&[EXIT]), &KernelInfo::new(8), &l).unwrap_err();
    assert!(matches!(err, SimError::BadLaunch(_)));
}

/// The ptxas prologue `MOV R1, c[0x0][0x20]; IADD32I R1, R1, -0x10` and a local round trip:
/// R1 starts at the top of the thread's local memory.
#[test]
fn local_frame_and_stack_pointer() {
    let body = [
        0x4c98078000870001, // MOV R1, c[0x0][0x20]
        0x1c0fffffff070101, // IADD32I R1, R1, -0x10
        e(ins(Form::S2R).with(Field::Rd, 2).with(Field::Sr, 0x21)),
        e(ins(Form::IADD32I)
            .with(Field::Rd, 2)
            .with(Field::Ra, 2)
            .with(Field::Imm, 0x100)),
        e(ins(Form::STL)
            .with(Field::Rd, 2)
            .with(Field::Ra, 1)
            .with(Field::Off, 4)),
        e(ins(Form::LDL)
            .with(Field::Rd, 3)
            .with(Field::Ra, 1)
            .with(Field::Off, 4)),
        e(ins(Form::IADD32I)
            .with(Field::Rd, 3)
            .with(Field::Ra, 3)
            .with(Field::Imm, 1)),
        e(ins(Form::STL)
            .with(Field::Rd, 3)
            .with(Field::Ra, 1)
            .with(Field::Off, 8)),
        EXIT,
    ];
    let mut info = KernelInfo::new(0);
    info.local_size = 16;
    let out = sim::run(&bundles(&body), &info, &Launch::new([1, 1, 1], [3, 1, 1])).unwrap();
    assert_eq!(out.local.len(), 3);
    for (t, mem) in out.local.iter().enumerate() {
        let mut want = vec![0u8; 16];
        want[4..8].copy_from_slice(&(0x100 + t as u32).to_le_bytes());
        want[8..12].copy_from_slice(&(0x101 + t as u32).to_le_bytes());
        assert_eq!(mem, &want, "thread {t}");
    }
}

/// FADD/FMUL/FFMA/FSETP on values with exact results.
#[test]
fn fp32_basics() {
    let f = |x: f32| x.to_bits();
    let body = [
        mov32(0, f(1.5)),
        mov32(1, f(-4.0)),
        mov32(2, f(0.25)),
        e(ins(Form::FADD_R)
            .with(Field::Rd, 3)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)),
        e(ins(Form::FMUL_R)
            .with(Field::Rd, 4)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)),
        e(ins(Form::FFMA_R)
            .with(Field::Rd, 5)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Rc, 2)),
        // FADD R6 = |R1| + -R0 = 2.5
        e(ins(Form::FADD_R)
            .with(Field::Rd, 6)
            .with(Field::Ra, 1)
            .with(Field::Absa, 1)
            .with(Field::Rb, 0)
            .with(Field::Negb, 1)),
        // FSETP.LT P0 = R1 < R0; FSETP.GT P1 = R1 > R0
        e(ins(Form::FSETP_R)
            .with(Field::Pd0, 0)
            .with(Field::Ra, 1)
            .with(Field::Rb, 0)
            .with(Field::Cmp, 1)),
        e(ins(Form::FSETP_R)
            .with(Field::Pd0, 1)
            .with(Field::Ra, 1)
            .with(Field::Rb, 0)
            .with(Field::Cmp, 4)),
    ];
    let r = regs(
        &[],
        &body,
        &[D::R(3), D::R(4), D::R(5), D::R(6), D::P(0), D::P(1)],
    );
    assert_eq!(r, [f(-2.5), f(-6.0), f(-5.75), f(2.5), 1, 0]);
}

/// FCHK.DIVIDE (the simulator's conservative model: only plainly normal operands with a
/// quotient far from the exponent limits pass the fast path) and FMUL's scaling (`.D2`,
/// `.M4`: the exact product times 2^k, one rounding).
#[test]
fn fchk_and_scaled_fmul() {
    let f = |x: f32| x.to_bits();
    let fchk = |pd: u64, ra: u64, rb: u64| {
        e(ins(Form::FCHK_R)
            .with(Field::Pd, pd)
            .with(Field::Ra, ra)
            .with(Field::Rb, rb))
    };
    let fmul = |rd: u64, scale: u64| {
        e(ins(Form::FMUL_R)
            .with(Field::Rd, rd)
            .with(Field::Ra, 0)
            .with(Field::Rb, 1)
            .with(Field::Scale, scale))
    };
    let body = [
        mov32(0, f(6.0)),
        mov32(1, f(3.0)),
        mov32(2, f(0.0)),
        mov32(3, 1),                 // the smallest subnormal
        mov32(5, f(2f32.powi(100))), // a quotient of 2^130 with R6
        mov32(6, f(2f32.powi(-30))),
        fchk(0, 0, 1), // 6 / 3: fast
        fchk(1, 0, 2), // 6 / 0: slow
        fchk(2, 3, 1), // subnormal / 3: slow
        fchk(3, 5, 6), // 2^100 / 2^-30 overflows: slow
        fmul(7, 1),    // .D2: 6 * 3 / 2
        fmul(8, 5),    // .M4: 6 * 3 * 4
    ];
    let r = regs(
        &[],
        &body,
        &[D::P(0), D::P(1), D::P(2), D::P(3), D::R(7), D::R(8)],
    );
    assert_eq!(r, [0, 1, 1, 1, f(9.0), f(72.0)]);
}

/// I2F, F2I rounding modes, FMNMX and VOTE.
#[test]
fn conversions_and_vote() {
    let f = |x: f32| x.to_bits();
    let f2i = |rd: u64, rnd: u64| {
        e(ins(Form::F2I_R)
            .with(Field::Rd, rd)
            .with(Field::Rb, 1)
            .with(Field::Ssz, 2)
            .with(Field::Dt, 6)
            .with(Field::Rnd, rnd))
    };
    let body = [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0)), // lane
        mov32(1, f(-2.5)),
        // I2F.F32.S32 R2 = -(lane) as float (integer negation: lane 0 gives +0.0)
        e(ins(Form::I2F_R)
            .with(Field::Rd, 2)
            .with(Field::Rb, 0)
            .with(Field::Dsz, 2)
            .with(Field::St, 6)
            .with(Field::Negb, 1)),
        f2i(3, 0), // ROUND: -2
        f2i(4, 1), // FLOOR: -3
        f2i(5, 2), // CEIL: -2
        f2i(6, 3), // TRUNC: -2
        // FMNMX R7 = min(R1, R2) (PT)
        e(ins(Form::FMNMX_R)
            .with(Field::Rd, 7)
            .with(Field::Ra, 1)
            .with(Field::Rb, 2)),
        // P0 = lane < 3; VOTE.ANY R8, P1, P0
        e(ins(Form::ISETP_I)
            .with(Field::Pd0, 0)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 3)
            .with(Field::Cmp, 1)),
        e(ins(Form::VOTE)
            .with(Field::Rd, 8)
            .with(Field::Pa, 0)
            .with(Field::Pd, 1)
            .with(Field::Mode, 1)),
        e(ins(Form::VOTE)
            .with(Field::Rd, 9)
            .with(Field::Pa, 0)
            .with(Field::Pd, 2)
            .with(Field::Mode, 0)),
    ];
    let run = Run {
        threads: 8,
        ..Run::default()
    };
    let (r, _) = run_with(
        &run,
        &body,
        &[
            D::R(2),
            D::R(3),
            D::R(4),
            D::R(5),
            D::R(6),
            D::R(7),
            D::R(8),
            D::P(1),
            D::P(2),
        ],
    )
    .unwrap();
    let m = |x: i32| x as u32;
    assert_eq!(
        r[0],
        [f(0.0), m(-2), m(-3), m(-2), m(-2), f(-2.5), 0b111, 1, 0]
    );
    assert_eq!(
        r[5],
        [f(-5.0), m(-2), m(-3), m(-2), m(-2), f(-5.0), 0b111, 1, 0]
    );
}

/// CAL/RET with a divergent early return: lanes < 5 return after one step, the others after
/// two; all resume after the CAL together.
#[test]
fn call_with_divergent_return() {
    let rel = |target: u64, at: u64| target.wrapping_sub(at + 8) & 0xff_ffff;
    let ret = |pg: u64| e(ins(Form::RET).with(Field::Pg, pg));
    let add = |rd: u64, ra: u64, v: u64| {
        e(ins(Form::IADD32I)
            .with(Field::Rd, rd)
            .with(Field::Ra, ra)
            .with(Field::Imm, v))
    };
    let body = [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0)), // 0x08 lane
        mov32(4, 0),                                             // 0x10
        e(ins(Form::CAL).with(Field::Rel, rel(0x48, 0x18))),     // 0x18
        add(5, 4, 100),                                          // 0x28: after the return
        bra(0x30, 0x88, 7, 0),                                   // 0x30
        NOP,                                                     // 0x38
        add(4, 4, 1),                                            // 0x48: the subroutine
        e(ins(Form::ISETP_I)
            .with(Field::Pd0, 0)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 5)
            .with(Field::Cmp, 1)), // 0x50: P0 = lane < 5
        ret(0),                                                  // 0x58: @P0 RET
        add(4, 4, 10),                                           // 0x68
        ret(7),                                                  // 0x70
        NOP,                                                     // 0x78
        mov32(6, 7),                                             // 0x88
    ];
    let run = Run {
        threads: 32,
        ..Run::default()
    };
    let (r, _) = run_with(&run, &body, &[D::R(4), D::R(5), D::R(6)]).unwrap();
    for (lane, v) in r.iter().enumerate() {
        let want = if lane < 5 { [1, 101, 7] } else { [11, 111, 7] };
        assert_eq!(v[..], want, "lane {lane}");
    }
}

/// A RET with no CAL on the stack is a divergence error, not a crash.
#[test]
fn ret_without_call_is_an_error() {
    let run = Run::default();
    let err = run_with(&run, &[e(ins(Form::RET))], &[]).unwrap_err();
    assert!(
        err.to_string().contains("RET without a matching CAL"),
        "{err}"
    );
}

/// R2P restores predicates from a register byte; P2R saves them back; PSET combines them.
#[test]
fn predicate_register_moves_and_pset() {
    let pset = |rd: u64, b1: u64, pbn: u64, bf: u64| {
        e(ins(Form::PSET)
            .with(Field::Rd, rd)
            .with(Field::Pa, 0)
            .with(Field::Pb, 1)
            .with(Field::Pbn, pbn)
            .with(Field::Bop1, b1)
            .with(Field::Bf, bf))
    };
    let body = [
        mov32(1, 0b0110_0101 << 8),
        // R2P PR, R1.B1, 0x7f: P0..P6 = bits 8..14 of R1 = 1,0,1,0,0,1,1.
        e(ins(Form::R2P_I)
            .with(Field::Ra, 1)
            .with(Field::Bsel, 1)
            .with(Field::ImmImm20u, 0x7f)),
        // P2R R3, PR, RZ, 0x7f: the seven predicates as bits 0..6.
        e(ins(Form::P2R_I)
            .with(Field::Rd, 3)
            .with(Field::ImmImm20s, 0x7f)),
        mov32(8, 0xffff_ffff),
        // P2R.B2 R7, PR, R8, 0xf: only bits 16..19 of R8 are replaced (by P0..P3 = 0101b).
        e(ins(Form::P2R_I)
            .with(Field::Rd, 7)
            .with(Field::Ra, 8)
            .with(Field::Bsel, 2)
            .with(Field::ImmImm20s, 0xf)),
        pset(9, 0, 0, 0),  // PSET.AND.AND R9, P0, P1, PT: false
        pset(10, 1, 0, 0), // PSET.OR.AND R10, P0, P1, PT: true
        pset(11, 0, 1, 1), // PSET.BF.AND.AND R11, P0, !P1, PT: 1.0
    ];
    let got = regs(
        &[],
        &body,
        &[
            D::P(0),
            D::P(1),
            D::P(2),
            D::P(5),
            D::P(6),
            D::R(3),
            D::R(7),
            D::R(9),
            D::R(10),
            D::R(11),
        ],
    );
    assert_eq!(
        got,
        [
            1,
            0,
            1,
            1,
            1,
            0x65,
            0xfff5_ffff,
            0,
            0xffff_ffff,
            0x3f80_0000
        ]
    );
}

/// BAR.RED over a CTA of two warps: 20 of 64 threads hold the predicate. B2R.RESULT reads the
/// count after .POPC and the vote after .AND/.OR; a guarded-off ALU predicate reads as PT.
#[test]
fn bar_red_reduces_over_the_cta() {
    let red = |ro: u64, bp: u64| e(ins(Form::BAR_RED).with(Field::Ro, ro).with(Field::Bp, bp));
    let b2r = |rd: u64, pd: u64| e(ins(Form::B2R).with(Field::Rd, rd).with(Field::Pd, pd));
    let body = [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0x21)), // tid.x
        e(ins(Form::ISETP_I)
            .with(Field::Pd0, 1)
            .with(Field::Ra, 0)
            .with(Field::ImmImm20s, 20)
            .with(Field::Cmp, 1)), // P1 = tid < 20
        red(0, 1),
        b2r(2, 7), // R2 = popc
        red(1, 1),
        b2r(RZ, 2), // P2 = and
        red(2, 1),
        b2r(RZ, 3), // P3 = or
        red(1, 7),
        b2r(RZ, 4), // P4 = and over PT
    ];
    let run = Run {
        threads: 64,
        ..Run::default()
    };
    let (r, _) = run_with(&run, &body, &[D::R(2), D::P(2), D::P(3), D::P(4)]).unwrap();
    for (t, v) in r.iter().enumerate() {
        assert_eq!(v[..], [20, 0, 1, 1], "thread {t}");
    }
}

// ---------------------------------------------------------------- forms ptxas writes
// (decoded since issue 19 point 6: F2I to 16 bits, EXIT/BRK on a CC test, CSETP; textures
// and surfaces decode and are refused by name)

/// `IADD32I R3.CC, R0, -3` with R0 = lane: CC.ZF in lane 3, CC.SF (less than) in lanes 0..2.
fn cc_of_lane_minus_3() -> [u64; 2] {
    [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0)),
        e(ins(Form::IADD32I)
            .with(Field::Rd, 3)
            .with(Field::Ra, 0)
            .with(Field::Imm, u64::from(-3i32 as u32))
            .with(Field::Cc, 1)),
    ]
}

/// `F2I.U16/.S16.F32.TRUNC`: saturate to the 16-bit range, zero- or sign-extended to 32
/// bits (ptxas stores F2I.S16's register directly as the s32 of `cvt.s32.s16`).
#[test]
fn f2i_to_16_bits_saturates_and_extends() {
    let f2i = |rd: u64, signed: bool| {
        e(ins(Form::F2I_R)
            .with(Field::Rd, rd)
            .with(Field::Rb, 0)
            .with(Field::Dt, if signed { 5 } else { 1 })
            .with(Field::Ssz, 2)
            .with(Field::Rnd, 3))
    };
    let cases: [(f32, u32, u32); 7] = [
        (123.9, 123, 123),
        (-5.9, 0, -5i32 as u32),
        (70000.7, 0xffff, 0x7fff),
        (-40000.0, 0, -32768i32 as u32),
        (32767.99, 32767, 32767),
        (f32::NAN, 0, 0),
        (f32::NEG_INFINITY, 0, -32768i32 as u32),
    ];
    for (x, u, s) in cases {
        let body = [mov32(0, x.to_bits()), f2i(1, false), f2i(2, true)];
        let r = regs(&[], &body, &[D::R(1), D::R(2)]);
        assert_eq!(r, [u, s], "{x}");
    }
    // The words ptxas writes for cvt.rzi.u16.f32 / cvt.rzi.s16.f32 decode to these forms.
    let u16w = leafold::sm50::decode(0x5cb0018000470903).unwrap();
    let s16w = leafold::sm50::decode(0x5cb0018000471906).unwrap();
    assert_eq!(
        leafold::sm50::print(&u16w, 0, 0),
        "F2I.U16.F32.TRUNC R3, R4"
    );
    assert_eq!(
        leafold::sm50::print(&s16w, 0, 0),
        "F2I.S16.F32.TRUNC R6, R4"
    );
}

/// `EXIT CC.LT`: lanes 0..2 leave before the dump stores (their slots stay 0); `BRK CC.EQ`
/// inside PBK: lane 3 skips the code up to the unconditional BRK.
#[test]
fn exit_and_brk_on_a_cc_test() {
    let run = Run {
        threads: 32,
        ..Run::default()
    };
    let exit_lt = e(ins(Form::EXIT).with(Field::Cc, 1));
    assert_eq!(
        leafold::sm50::print(&ins(Form::EXIT).with(Field::Cc, 13), 0, 0),
        "EXIT CC.NEU"
    );
    let [s2r, iadd] = cc_of_lane_minus_3();
    let body = [s2r, iadd, mov32(4, 7), exit_lt];
    let (r, _) = run_with(&run, &body, &[D::R(4)]).unwrap();
    for (lane, v) in r.iter().enumerate() {
        assert_eq!(v[0], if lane < 3 { 0 } else { 7 }, "lane {lane}");
    }
    // Addresses: 0x08 0x10 0x18 | 0x28 0x30 0x38 | 0x48 0x50 0x58
    let pbk = e(ins(Form::PBK).with(Field::Rel, 0x50 - (0x28 + 8)));
    let body = [
        s2r,                                  // 0x08
        iadd,                                 // 0x10
        mov32(5, 0),                          // 0x18
        pbk,                                  // 0x28: PBK 0x50
        e(ins(Form::BRK).with(Field::Cc, 2)), // 0x30: BRK CC.EQ
        mov32(5, 1),                          // 0x38
        e(ins(Form::BRK)),                    // 0x48: BRK
        mov32(6, 99),                         // 0x50
    ];
    let (r, _) = run_with(&run, &body, &[D::R(5), D::R(6)]).unwrap();
    for (lane, v) in r.iter().enumerate() {
        assert_eq!(v[..], [u32::from(lane != 3), 99], "lane {lane}");
    }
}

/// `CSETP.LT.AND P0, P1, CC, PT` and `CSETP.EQ.OR P2, PT, CC, P0`: P0 = lane < 3,
/// P1 = !(lane < 3), P2 = lane <= 3.
#[test]
fn csetp_tests_cc() {
    let [s2r, iadd] = cc_of_lane_minus_3();
    let csetp = |cct: u64, pd0: u64, pd1: u64, pacc: u64, bop: u64| {
        e(ins(Form::CSETP)
            .with(Field::Cct, cct)
            .with(Field::Pd0, pd0)
            .with(Field::Pd1, pd1)
            .with(Field::Pacc, pacc)
            .with(Field::Bop, bop))
    };
    let i = leafold::sm50::decode(csetp(13, 0, 7, 7, 0)).unwrap();
    assert_eq!(
        leafold::sm50::print(&i, 0, 0),
        "CSETP.NEU.AND P0, PT, CC, PT"
    );
    let body = [s2r, iadd, csetp(1, 0, 1, 7, 0), csetp(2, 2, 7, 0, 1)];
    let run = Run {
        threads: 32,
        ..Run::default()
    };
    let (r, _) = run_with(&run, &body, &[D::P(0), D::P(1), D::P(2)]).unwrap();
    for (lane, v) in r.iter().enumerate() {
        let want = [lane < 3, lane >= 3, lane <= 3].map(u32::from);
        assert_eq!(v[..], want, "lane {lane}");
    }
}

/// `TEX.NDV` (the quad-emulated gradients, `lower::select::tex::quad`) takes each lane's
/// level of detail from its quad neighbours' coordinates as the instruction found them,
/// also where the results overwrite the coordinates (rd == ra, ptxas's `TEX.NDV q, q`):
/// lanes 1..3 of each quad must not read lane 0's result as its x. One warp samples a 1D
/// texture of 64 texels and 4 random levels at x = lane / 256 (quad differences of a
/// quarter and a half texel: level 0) twice, into R0..R3 over its own x and into R4..R7;
/// every lane's two results are equal (and a misread neighbour, a texel of magnitude up to
/// 8, would pick a coarser level).
#[test]
fn tex_ndv_reads_the_neighbours_coordinates_as_found() {
    let mut desc = TextureDesc::new(Shape::D1, [64, 1, 1], ChannelType::F32, 4);
    desc.mip_levels = 4;
    desc.sampler.normalized_coords = true;
    desc.sampler.filter = FilterMode::Point;
    desc.sampler.mip_filter = FilterMode::Point;
    desc.validate().unwrap();
    let mut run = Run {
        threads: 32,
        ..Run::default()
    };
    let handle = run.textures.add_object(Texture::random(desc, 5));
    run.params = p64(&[handle]);
    // TEX.NDV rd.., R0, RZ, slot c[0x0][0x140] (the handle), 1D, all four components.
    let tex = |rd: u64| {
        e(ins(Form::TEX)
            .with(Field::Rd, rd)
            .with(Field::Ra, 0)
            .with(Field::Rb, RZ)
            .with(Field::Tid, 0x140 / 4)
            .with(Field::Dim, leafold::sm50::values::tex::dim::V1D)
            .with(Field::Mask, 0xf)
            .with(Field::Ndv, 1))
    };
    let body = [
        e(ins(Form::S2R).with(Field::Rd, 0).with(Field::Sr, 0)), // lane
        // I2F.F32.S32 R0 = lane; FMUL32I R0 = R0 / 256
        e(ins(Form::I2F_R)
            .with(Field::Rd, 0)
            .with(Field::Rb, 0)
            .with(Field::Dsz, 2)
            .with(Field::St, 6)),
        e(ins(Form::FMUL32I)
            .with(Field::Rd, 0)
            .with(Field::Ra, 0)
            .with(Field::Imm, u64::from((1.0f32 / 256.0).to_bits()))),
        tex(4),
        tex(0),
    ];
    let dump: Vec<D> = (0..8).map(D::R).collect();
    let (per, _) = run_with(&run, &body, &dump).expect("runs");
    for (lane, v) in per.iter().enumerate() {
        assert_eq!(v[..4], v[4..], "lane {lane}: rd == ra differs from rd = R4");
    }
    // The levels differ, so a wrong level of detail would show.
    assert!(per.iter().any(|v| v[4] != 0), "all zero");
}

/// Surface words from ptxas decode, and the simulator refuses the ones it does not model by
/// name; the `SUST/SULD/SURED.D.BA` it models (`leafold::surface`) stop at a launch that binds
/// no surface to their slot. (Every texture instruction leafold emits runs, TXD and TLD4
/// included: tests/compile_tex.rs, tests/compile_tex2.rs.)
#[test]
fn unmodelled_surface_words_are_refused_by_name() {
    for (word, what) in [
        (0xeb3c057600c70c0e_u64, "names no surface"),
        (0xeb1c057600e70c08, "names no surface"),
        (0xeb5c057600870c0e, "names no surface"),
        (0xea3c057600c70c0e, "a surface instruction"),
    ] {
        let err = sim::run(
            &bundles(&[NOP, word, EXIT]),
            &KernelInfo::default(),
            &Launch::new([1, 1, 1], [1, 1, 1]),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, SimError::Unsupported { addr: 0x10, .. }) && text.contains(what),
            "{word:#x}: {text}"
        );
    }
}
