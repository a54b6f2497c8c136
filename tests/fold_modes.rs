//! `--fold=none|lea|full`: every strategy computes the same memory as the IR reference
//! interpreter (simulator running our SASS vs `ir::eval`), produces hazard-free code on the
//! corpus, and the strategies order as intended (none has no LEA chains; full is never longer
//! than lea on these kernels). Also `--stats` on the command line.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::lower::Fold;
use leafold::sim;
use leafold::sm50::sched::check::check_code;

const SEED: &str = include_str!("../examples/seed_lea.ptx");

/// Address shapes beyond the seed: a zero-extended scaled index with a displacement, a
/// generic access with a displacement, a sign-extended (possibly negative) scaled index, a
/// 64-bit index shifted by 3, and 32-bit shared addresses, one with a reversed index.
const SHAPES: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry shapes(.param .u64 out, .param .u64 in, .param .u32 j, .param .u64 q)
{
    .shared .align 4 .b8 sm[64];
    .reg .b64 %rd<20>;
    .reg .b32 %r<24>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.u32 %r1, [j];
    ld.param.u64 %rd10, [q];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r3, [%rd4+8];
    ld.u32 %r11, [%rd4+4];
    mul.wide.s32 %rd5, %r1, 4;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.u32 %r12, [%rd6];
    shl.b64 %rd11, %rd10, 3;
    add.s64 %rd12, %rd2, %rd11;
    ld.global.u32 %r13, [%rd12];
    shl.b32 %r4, %r2, 2;
    mov.u32 %r5, sm;
    add.s32 %r6, %r5, %r4;
    st.shared.u32 [%r6], %r3;
    sub.s32 %r7, 7, %r2;
    shl.b32 %r8, %r7, 2;
    add.s32 %r9, %r5, %r8;
    st.shared.u32 [%r9+32], %r11;
    bar.sync 0;
    ld.shared.u32 %r10, [%r6+32];
    add.s32 %r14, %r10, %r12;
    add.s32 %r15, %r14, %r13;
    add.s32 %r16, %r15, %r3;
    add.s64 %rd7, %rd1, %rd3;
    st.global.u32 [%rd7], %r16;
    ret;
}
"#;

fn opts(fold: Fold) -> Options {
    Options {
        file_name: "t.ptx".into(),
        emit: Emit::Sass,
        fold,
        ..Options::default()
    }
}

fn opts_plg(fold: Fold, plg_per_address: bool) -> Options {
    Options {
        plg_per_address,
        ..opts(fold)
    }
}

/// The simulator on our code (compiled with `fold`) against `ir::eval`; returns the
/// compiled kernel's report.
fn run_both_with(src: &str, launch: &Launch, o: &Options) -> leafold::driver::KernelReport {
    let fold = o.fold;
    let module = common::ir_module("t.ptx", src);
    let f = &module.functions[0];
    let reference = eval::run(&module, &f.name, launch).expect("ir::eval runs");
    let out = compile(src, o).unwrap_or_else(|e| panic!("{fold:?}: {e:?}"));
    let (code, info) = common::load_our_kernel(&out, f);
    assert!(
        check_code(&code).is_empty(),
        "{fold:?} hazards\n{}",
        out.sass
    );
    let ours = sim::run(&code, &info, launch)
        .unwrap_or_else(|e| panic!("{fold:?} sim: {e}\n{}", out.sass));
    assert_eq!(ours, reference, "{fold:?}\n{}", out.sass);
    out.kernels[0].clone()
}

fn le64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn seed_launch() -> Launch {
    const A: u64 = 0x1000_0000;
    const B: u64 = 0x2000_0000;
    const OUT: u64 = 0x3000_0000;
    let a: Vec<u64> = (0..128u64).map(|x| x * 0x0101_0101 + 7).collect();
    let b: Vec<u8> = (0..512u32).map(|x| (x * 7 % 251) as u8).collect();
    let mut params = Vec::new();
    params.extend(A.to_le_bytes());
    params.extend(3u64.to_le_bytes());
    params.extend(5u32.to_le_bytes());
    params.extend([0; 4]);
    params.extend(B.to_le_bytes());
    params.extend(2u32.to_le_bytes());
    params.extend([0; 4]);
    params.extend(OUT.to_le_bytes());
    let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: A,
            bytes: le64(&a),
        },
        GlobalRegion { base: B, bytes: b },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 24],
        },
    ];
    launch
}

fn shapes_launch(j: i32, q: u64) -> Launch {
    const IN: u64 = 0x1000_0000;
    const OUT: u64 = 0x2000_0000;
    let input: Vec<u8> = (0..256u32)
        .flat_map(|x| (x * 3 + 1).to_le_bytes())
        .collect();
    let mut params = Vec::new();
    params.extend(OUT.to_le_bytes());
    params.extend((IN + 0x200).to_le_bytes());
    params.extend(j.to_le_bytes());
    params.extend([0; 4]);
    params.extend(q.to_le_bytes());
    let mut launch = Launch::new([1, 1, 1], [8, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: input,
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 32],
        },
    ];
    launch
}

#[test]
fn every_strategy_computes_what_the_ir_computes() {
    for fold in [Fold::None, Fold::Lea, Fold::Block, Fold::Full] {
        for per_address in [false, true] {
            let o = opts_plg(fold, per_address);
            run_both_with(SEED, &seed_launch(), &o);
            for (j, q) in [(0, 0), (-5, 3), (9, 17)] {
                run_both_with(SHAPES, &shapes_launch(j, q), &o);
            }
        }
    }
}

/// By default (one `Plg` per base: displacements stay in the instruction, as `none` keeps
/// them), folding only removes instructions. With `--plg-per-address`, a generic access's
/// `Plg` costs the two in-chain displacement LEAs, which is why the seed (three generic
/// accesses) is *longer* folded than not: `none` uses `PT` and leaves the window check to the
/// hardware.
#[test]
fn strategies_order_as_intended() {
    for (src, launch) in [(SEED, seed_launch()), (SHAPES, shapes_launch(1, 2))] {
        let run = |fold| run_both_with(src, &launch, &opts_plg(fold, false));
        let none = run(Fold::None);
        let lea = run(Fold::Lea);
        let full = run(Fold::Full);
        // `none` removes the address chains' LEAs; a 64-bit shift or mul.wide whose value
        // has other uses keeps its LEA form (the shapes kernel's `tid * 4`).
        assert!(
            none.fold.sass.lea < full.fold.sass.lea,
            "{}: none {} full {}",
            none.name,
            none.fold.sass.lea,
            full.fold.sass.lea
        );
        if src == SEED {
            assert_eq!(none.fold.sass.lea, 0);
        }
        assert!(full.fold.sass.lea > 0, "{}", full.name);
        assert!(full.fold.chains_formed > 0);
        assert!(
            full.fold.sass.instructions <= lea.fold.sass.instructions
                && full.fold.sass.instructions < none.fold.sass.instructions,
            "{}: none {} lea {} full {}",
            full.name,
            none.fold.sass.instructions,
            lea.fold.sass.instructions,
            full.fold.sass.instructions
        );
        assert_eq!(none.fold.plg_folds, 0);
    }
}

/// NVVM's shape of a coefficient table read (rodinia particlefilter's sin/cos row): six
/// `ld.global.nc.f64 [%rd+8..48]` off one sign-extended scaled index in one block, then one
/// more access to the row in a block that block dominates.
const TABLE: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry table(.param .u64 out, .param .u64 tab, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<10>;
    .reg .f64 %fd<16>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [tab];
    ld.param.u32 %r1, [n];
    cvta.to.global.u64 %rd3, %rd2;
    cvta.to.global.u64 %rd4, %rd1;
    mov.u32 %r2, %tid.x;
    mul.lo.s32 %r3, %r2, 7;
    mul.wide.s32 %rd5, %r3, 8;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.nc.f64 %fd1, [%rd6+8];
    ld.global.nc.f64 %fd2, [%rd6+16];
    ld.global.nc.f64 %fd3, [%rd6+24];
    ld.global.nc.f64 %fd4, [%rd6+32];
    ld.global.nc.f64 %fd5, [%rd6+40];
    ld.global.nc.f64 %fd6, [%rd6+48];
    fma.rn.f64 %fd7, %fd1, %fd2, %fd3;
    fma.rn.f64 %fd8, %fd4, %fd5, %fd6;
    add.f64 %fd9, %fd7, %fd8;
    setp.ge.s32 %p1, %r2, %r1;
    @%p1 bra $L_done;
    ld.global.nc.f64 %fd10, [%rd6];
    add.f64 %fd9, %fd9, %fd10;
$L_done:
    mul.wide.s32 %rd7, %r2, 8;
    add.s64 %rd8, %rd4, %rd7;
    st.global.f64 [%rd8], %fd9;
    ret;
}
"#;

/// `Fold::Block` (the driver's register retry) shares the chain of `TABLE`'s six loads as
/// the full folding does, where `Fold::Lea` builds one per load; unlike the full folding it
/// builds the dominated block's chain again instead of keeping the pair live into it.
#[test]
fn block_folding_shares_chains_within_a_block_only() {
    const TAB: u64 = 0x1000_0000;
    const OUT: u64 = 0x2000_0000;
    let threads = 8u64;
    let table: Vec<u64> = (0..threads * 7)
        .map(|x| (1.0 + x as f64 / 8.0).to_bits())
        .collect();
    let mut params = Vec::new();
    params.extend(OUT.to_le_bytes());
    params.extend(TAB.to_le_bytes());
    params.extend(5u32.to_le_bytes());
    let mut launch = Launch::new([1, 1, 1], [threads as u32, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: TAB,
            bytes: le64(&table),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 8 * threads as usize],
        },
    ];
    let run = |fold| run_both_with(TABLE, &launch, &opts(fold)).fold;
    let (lea, block, full) = (run(Fold::Lea), run(Fold::Block), run(Fold::Full));
    // One chain for the six loads, one for the dominated load, one for the store.
    assert_eq!(
        (block.chains_formed, block.chains_shared),
        (3, 5),
        "{block:?}"
    );
    assert_eq!((lea.chains_formed, lea.chains_shared), (8, 0), "{lea:?}");
    assert_eq!((full.chains_formed, full.chains_shared), (2, 6), "{full:?}");
    assert!(
        full.sass.lea < block.sass.lea && block.sass.lea < lea.sass.lea,
        "LEAs: full {} block {} lea {}",
        full.sass.lea,
        block.sass.lea,
        lea.sass.lea
    );
}

#[test]
fn corpus_compiles_hazard_free_in_every_strategy() {
    let mut compiled = [0usize; 4];
    for file in common::corpus() {
        let (name, text) = (file.name, file.ptx);
        let full = compile(&text, &opts(Fold::Full)).is_ok();
        for (n, fold) in [Fold::None, Fold::Lea, Fold::Full, Fold::Block]
            .into_iter()
            .enumerate()
        {
            let Ok(out) = compile(&text, &opts(fold)) else {
                assert!(!full, "{name}: compiles with full but not with {fold:?}");
                continue;
            };
            compiled[n] += 1;
            let c = cubin::read(&out.cubin).unwrap();
            for k in &c.kernels {
                let errs = check_code(&k.code);
                assert!(errs.is_empty(), "{name} {fold:?} {}: {errs:#?}", k.name);
            }
        }
    }
    assert!(
        compiled[2] >= 14 && compiled.iter().all(|&c| c == compiled[2]),
        "{compiled:?}"
    );
}

#[test]
fn stats_flag_prints_json_per_kernel() {
    let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed_lea.ptx");
    let dir = std::env::temp_dir().join(format!("leafold_fold_stats_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut counts = Vec::new();
    for fold in ["none", "lea", "full"] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_leafold"))
            .args([
                "compile",
                "--assume-inbounds",
                "--stats",
                "--fold",
                fold,
                "-o",
            ])
            .arg(dir.join("s.cubin"))
            .arg(&seed)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let json = String::from_utf8(o.stdout).unwrap();
        assert!(json.contains(&format!("\"fold\": \"{fold}\"")), "{json}");
        assert!(json.contains("\"name\": \"seed_lea\""), "{json}");
        let field = |key: &str| -> i64 {
            let at = json
                .find(&format!("\"{key}\": "))
                .unwrap_or_else(|| panic!("{key}: {json}"));
            let rest = &json[at + key.len() + 4..];
            let end = rest.find([',', '}']).unwrap();
            rest[..end].trim().parse().unwrap()
        };
        if fold == "none" {
            assert_eq!(field("saved_vs_none"), 0);
            assert_eq!(field("lea"), 0);
        } else {
            assert!(field("saved_vs_none") > 0, "{json}");
        }
        counts.push(field("instructions"));
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(["compile", "--fold=most"])
        .arg(&seed)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// The window-test flags on the command line: `--assume-inbounds` is an alias of the default
/// (ptxas's one `Plg` per base), `--plg-per-address` changes the seed's code (a `Plg` per
/// final address: two more LEAs per generic access), and the two together are refused.
#[test]
fn plg_flags_alias_the_default_and_per_address_differs() {
    let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed_lea.ptx");
    let dir = std::env::temp_dir().join(format!("leafold_plg_flags_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sass = |flags: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_leafold"))
            .args(["compile", "--emit", "sass"])
            .args(flags)
            .arg("-o")
            .arg(dir.join("s.cubin"))
            .arg(&seed)
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    let (code, default) = sass(&[]);
    assert_eq!(code, Some(0));
    assert_eq!(sass(&["--assume-inbounds"]), (Some(0), default.clone()));
    let (code, per_address) = sass(&["--plg-per-address"]);
    assert_eq!(code, Some(0));
    let leas = |s: &str| s.matches(" LEA").count();
    // Three generic accesses with displacements: a base + disp pair of LEAs each.
    assert_eq!(
        leas(&per_address),
        leas(&default) + 6,
        "{default}\n{per_address}"
    );
    let (code, _) = sass(&["--assume-inbounds", "--plg-per-address"]);
    assert_eq!(code, Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// Where the register-pair tests put their buffers: 64 input words at `IN`, 32 output bytes
/// at `OUT`.
const IN: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;

/// One CTA of 8 threads with `params`, the input words `word(0..64)` at `IN` and a zeroed
/// output at `OUT`.
fn in_out_launch(params: Vec<u8>, word: impl Fn(u32) -> u32) -> Launch {
    let mut launch = Launch::new([1, 1, 1], [8, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: (0..64u32).flat_map(|x| word(x).to_le_bytes()).collect(),
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 32],
        },
    ];
    launch
}

/// The `MOV Rd, Rs` lines of a SASS listing: register-to-register copies.
fn register_moves(sass: &str) -> Vec<&str> {
    sass.lines()
        .filter(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            t.len() > 3 && t[1] == "MOV" && t[3].starts_with('R')
        })
        .collect()
}

/// 64-bit addresses whose base is a 32-bit value widened (`cvt.u64.u32`, `cvt.s64.s32`):
/// every strategy computes what the IR computes, and `--fold=full` reads the base's words
/// apart (the value and `RZ` or its sign word), so no `MOV` builds the base as a pair.
#[test]
fn extended_bases_are_read_in_halves() {
    const EXT: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry extbase(.param .u64 out, .param .u32 lo, .param .u32 j)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<10>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [lo];
    ld.param.u32 %r2, [j];
    mov.u32 %r3, %tid.x;
    cvt.u64.u32 %rd2, %r1;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r4, [%rd4];
    add.s32 %r5, %r1, 16;
    cvt.s64.s32 %rd5, %r5;
    mul.wide.s32 %rd6, %r2, 4;
    add.s64 %rd7, %rd5, %rd6;
    ld.global.u32 %r6, [%rd7+8];
    add.s32 %r7, %r4, %r6;
    add.s64 %rd8, %rd1, %rd3;
    st.global.u32 [%rd8], %r7;
    ret;
}
"#;
    for j in [0i32, 3, -2] {
        let mut params = Vec::new();
        params.extend(OUT.to_le_bytes());
        params.extend((IN as u32 + 0x40).to_le_bytes());
        params.extend(j.to_le_bytes());
        let launch = in_out_launch(params, |x| x * 5 + 2);
        for fold in [Fold::None, Fold::Lea, Fold::Full] {
            run_both_with(EXT, &launch, &opts(fold));
        }
    }
    let out = compile(EXT, &opts(Fold::Full)).unwrap();
    let pair_moves = register_moves(&out.sass);
    assert!(pair_moves.is_empty(), "{pair_moves:?}\n{}", out.sass);
}

/// A loop that bumps one pointer by a scaled stride (`p += stride * 4`, a LEA chain) and
/// another by a constant (`q += 4`, `IADD.CC` + `IADD.X`): each new pointer may take the old
/// one's registers (a chain's index must stay apart), so the back edge needs no `MOV` pair to
/// copy a new pointer into place. Every strategy computes what the IR computes.
#[test]
fn pointer_bump_reuses_its_registers() {
    const BUMP: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry bump(.param .u64 out, .param .u64 in, .param .u32 stride, .param .u32 n)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<10>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.u32 %r1, [stride];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd3, %r3, 4;
    add.s64 %rd2, %rd2, %rd3;
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
    mov.u64 %rd6, %rd2;
LOOP:
    ld.global.u32 %r6, [%rd2];
    add.s32 %r4, %r4, %r6;
    ld.global.u32 %r8, [%rd6];
    add.s32 %r4, %r4, %r8;
    add.s64 %rd6, %rd6, 4;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd2, %rd2, %rd4;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p1, %r5, %r2;
    @%p1 bra LOOP;
    add.s64 %rd5, %rd1, %rd3;
    st.global.u32 [%rd5], %r4;
    ret;
}
"#;
    let mut params = Vec::new();
    params.extend(OUT.to_le_bytes());
    params.extend(IN.to_le_bytes());
    params.extend(8u32.to_le_bytes());
    params.extend(5u32.to_le_bytes());
    let launch = in_out_launch(params, |x| x * 7 + 1);
    for fold in [Fold::None, Fold::Lea, Fold::Full] {
        run_both_with(BUMP, &launch, &opts(fold));
    }
    let out = compile(BUMP, &opts(Fold::Full)).unwrap();
    let moves = register_moves(&out.sass);
    // Only `mov.u64 %rd6, %rd2` before the loop copies a pair (both pointers live on).
    assert_eq!(moves.len(), 2, "{moves:?}\n{}", out.sass);
}

/// Three arrays indexed by one sign-extended `int` (NVVM's `mul.wide.s32` + `add.s64` per
/// array) in one block, and one of them again in a block it dominates.
const SIGNED_ROWS: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry rows(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 k)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [c];
    ld.param.u32 %r1, [k];
    mov.u32 %r2, %tid.x;
    sub.s32 %r3, %r2, %r1;
    mul.wide.s32 %rd4, %r3, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    add.s64 %rd7, %rd3, %rd4;
    ld.global.u32 %r4, [%rd5];
    ld.global.u32 %r5, [%rd6];
    add.s32 %r6, %r4, %r5;
    st.global.u32 [%rd7], %r6;
    setp.lt.u32 %p1, %r2, 4;
    @%p1 bra $L_done;
    st.global.u32 [%rd5], %r6;
$L_done:
    ret;
}
"#;

/// The sign word of a sign-extended index (`SHR s, i, 0x1f`) is shared as the chains are:
/// by the chains of the blocks its block dominates with `--fold=full`, within its block with
/// `--fold=block` (one `SHR` for the three arrays there), by none with `--fold=lea`. Each
/// computes what the IR computes, with an index that goes negative.
#[test]
fn sign_words_are_shared_as_the_chains_are() {
    const A: u64 = 0x1000_0000;
    const B: u64 = 0x2000_0000;
    const C: u64 = 0x3000_0000;
    let threads = 8u32;
    let k = 3i32; // tid - k runs from -3 to 4
    let words = |seed: u32| -> Vec<u8> {
        (0..64u32)
            .flat_map(|x| (x * seed + 1).to_le_bytes())
            .collect()
    };
    let mut params = Vec::new();
    // each base points 16 words into its region, so indices down to -16 stay inside
    params.extend((A + 64).to_le_bytes());
    params.extend((B + 64).to_le_bytes());
    params.extend((C + 64).to_le_bytes());
    params.extend(k.to_le_bytes());
    let mut launch = Launch::new([1, 1, 1], [threads, 1, 1]);
    launch.params = params;
    launch.global = vec![
        GlobalRegion {
            base: A,
            bytes: words(3),
        },
        GlobalRegion {
            base: B,
            bytes: words(5),
        },
        GlobalRegion {
            base: C,
            bytes: vec![0; 256],
        },
    ];
    let sign_words = |fold| {
        run_both_with(SIGNED_ROWS, &launch, &opts(fold));
        let out = compile(SIGNED_ROWS, &opts(fold)).expect("compiles");
        out.sass
            .lines()
            .filter(|l| l.contains(" SHR ") && l.contains(", 0x1f ;"))
            .count()
    };
    assert_eq!(sign_words(Fold::Full), 1, "full");
    assert_eq!(sign_words(Fold::Block), 2, "block");
    assert_eq!(sign_words(Fold::Lea), 4, "lea");
}
