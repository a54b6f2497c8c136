//! Integer operations beyond the address subset (multiplication by non-powers of two, bit and
//! warp operations), compiled end to end by `leafold::compile` and checked three ways:
//!
//! * semantics: `ir::eval` (the reference) and the SM50 simulator running our cubin write the
//!   same bytes, over several launches of 64 threads (two warps) with random inputs mixed with
//!   edge values (0, ±1, the sign bits, 16-bit boundaries);
//! * timing: the hazard checker finds nothing in our `.text`;
//! * encoding: every instruction word disassembles under nvdisasm to our printer's text (when
//!   the oracle is installed).

mod common;

use common::Rng;
use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::sim;
use leafold::sm50::sched::check::{check_hazards, decode_text};

const IN: u64 = 0x1000_0000;
const OUT: u64 = 0x2000_0000;
const THREADS: u32 = 64;

/// The kernel `tests/data/intops/NAME.ptx`. Each follows one convention: each thread reads
/// 32 bytes at `in + 32*tid` and writes 32 bytes at `out + 32*tid`.
fn kernel(name: &str) -> String {
    let path = format!(
        "{}/tests/data/intops/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

/// Inputs of the kinds this test needs, drawn from [`common::Rng`].
impl Rng {
    /// A 32-bit word: random, or (one time in three) an edge value.
    fn word(&mut self) -> u32 {
        const EDGE: [u32; 10] = [
            0,
            1,
            0xffff_ffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff,
            0x1_0000,
            0x8000,
            0xffff_8000,
            31,
        ];
        let r = self.next();
        if r % 3 == 0 {
            EDGE[(r >> 8) as usize % EDGE.len()]
        } else {
            (r >> 16) as u32
        }
    }
}

fn compile_checked(test: &str, src: &str) -> leafold::driver::Output {
    let opts = Options {
        file_name: format!("{test}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out =
        compile(src, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    let (insts, ctrl, targets) = decode_text(&c.kernels[0].code).expect("decodes");
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "hazards: {errs:?}\n{}", out.sass);
    common::check_with_nvdisasm(test, &insts);
    out
}

/// A launch of `ctas` CTAs of 64 threads over random input (seeded); every CTA reads the same
/// input. `out` has 32 bytes for every thread of the launch and 256 more bytes for counters:
/// a kernel indexes its slots by `%tid` (every CTA writing the same values; counters at
/// `out + 2048`) or by the global thread id (counters at `out + 2048 * ctas`).
fn launch(seed: u64, ctas: u32) -> Launch {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (seed + 1).wrapping_mul(0x1234_5678_9abc));
    let input: Vec<u8> = (0..THREADS * 8)
        .flat_map(|_| rng.word().to_le_bytes())
        .collect();
    let mut launch = Launch::new([ctas, 1, 1], [THREADS, 1, 1]);
    launch.params = IN
        .to_le_bytes()
        .into_iter()
        .chain(OUT.to_le_bytes())
        .collect();
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: input,
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 32 * (THREADS * ctas) as usize + 256],
        },
    ];
    launch
}

/// Compile `tests/data/intops/NAME.ptx`, snapshot its IR and SASS, and compare eval and sim
/// over `launches` random launches. Returns the SASS listing for further assertions.
fn differential(name: &str, launches: u64) -> String {
    differential_grid(name, launches, 1)
}

/// [`differential`] over `ctas` CTAs.
fn differential_grid(name: &str, launches: u64, ctas: u32) -> String {
    differential_runs(name, launches, ctas, false).0
}

/// [`differential_grid`], with `ir::eval` also detecting races on global memory when
/// `races` (the kernel must have none), returning each launch with the bytes of `out`.
fn differential_runs(
    name: &str,
    launches: u64,
    ctas: u32,
    races: bool,
) -> (String, Vec<(Launch, Vec<u8>)>) {
    let mut runs = Vec::new();
    let src = kernel(name);
    let out = compile_checked(name, &src);
    let module = common::ir_module("t.ptx", &src);
    insta::assert_snapshot!(name, format!("{module}\n---- SASS\n{}", out.sass));
    for seed in 0..launches {
        let mut launch = launch(seed, ctas);
        launch.global_races = races;
        let reference = eval::run(&module, "k", &launch).expect("ir::eval runs");
        let ours = sim::run_cubin(&out.cubin, "k", &launch)
            .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        let (a, b) = (ours.region(OUT).unwrap(), reference.region(OUT).unwrap());
        if let Some(k) = (0..a.len() / 4).find(|k| a[4 * k..4 * k + 4] != b[4 * k..4 * k + 4]) {
            let w = |m: &[u8]| u32::from_le_bytes(m[4 * k..4 * k + 4].try_into().unwrap());
            let t = (k / 8) % THREADS as usize;
            let inp = launch.global[0].bytes[32 * t..32 * t + 32].to_vec();
            panic!(
                "seed {seed}, thread {}, word {}: sim {:#x}, eval {:#x}; input {inp:02x?}\n{}",
                k / 8,
                k % 8,
                w(a),
                w(b),
                out.sass
            );
        }
        runs.push((launch, a.to_vec()));
    }
    (out.sass, runs)
}

fn count(sass: &str, mnemonic: &str) -> usize {
    sass.lines()
        .filter(|l| l.split_whitespace().any(|w| w.starts_with(mnemonic)))
        .count()
}

/// 32×32→64 products and high halves: ptxas's XMAD sequences, no IMUL (variable latency).
#[test]
fn mul32() {
    let sass = differential("mul32", 8);
    assert_eq!(count(&sass, "IMUL"), 0, "{sass}");
    assert!(count(&sass, "XMAD") >= 20, "{sass}");
}

/// Selects of a value or zero on 32-bit compares (`select_mask.ptx`'s header): ISET into a
/// register and LOP.AND; the bit test (`and` then `setp.ne`, `LOP.AND.NZ`) whose predicate
/// a two-register select also reads keeps its predicate for both selects (two SELs).
#[test]
fn select_mask() {
    let sass = differential("select_mask", 8);
    assert_eq!(count(&sass, "ISET."), 7, "{sass}");
    assert_eq!(count(&sass, "ISETP"), 0, "{sass}");
    assert_eq!(count(&sass, "LOP.AND.NZ"), 1, "{sass}");
    assert_eq!(count(&sass, "SEL"), 2, "{sass}");
}

/// Where the masks stop (`select_mask_limits.ptx`'s header): a bit test stays `LOP.AND.Z` +
/// SEL, two selects on one condition share one ISET, a predicate read again in a loop body
/// stays an ISETP read by SEL.
#[test]
fn select_mask_limits() {
    let sass = differential("select_mask_limits", 8);
    assert_eq!(count(&sass, "ISET."), 1, "{sass}");
    assert_eq!(count(&sass, "LOP.AND.Z"), 1, "{sass}");
    assert_eq!(count(&sass, "ISETP.GT"), 1, "{sass}");
    assert_eq!(count(&sass, "SEL"), 2, "{sass}");
}

#[test]
fn mul64() {
    differential("mul64", 8);
}

#[test]
fn mul16() {
    let sass = differential("mul16", 8);
    assert_eq!(count(&sass, "IMUL"), 0, "{sass}");
}

#[test]
fn bits() {
    let sass = differential("bits", 8);
    for m in ["FLO", "POPC", "BFE.U32.BREV"] {
        assert!(count(&sass, m) > 0, "{m} in\n{sass}");
    }
}

#[test]
fn bitfield() {
    let sass = differential("bitfield", 8);
    for m in ["BFE", "BFI", "PRMT"] {
        assert!(count(&sass, m) > 0, "{m} in\n{sass}");
    }
}

/// cub's radix-sort shapes (`radix_digits.ptx`'s header): one control word for every `bfe`
/// on the same register position and length, the one in the entry block serving the
/// dominated branch side too; 64-bit compares with small immediates take them in the
/// ISETPs (no `MOV32I` materializes a pair).
#[test]
fn radix_digits() {
    let sass = differential("radix_digits", 8);
    assert!(count(&sass, "BFE.U32") >= 5, "{sass}");
    assert_eq!(count(&sass, "BFI"), 1, "{sass}");
    assert_eq!(count(&sass, "MOV32I"), 0, "{sass}");
}

/// cub's warp multi-split (`ballot_chain.ptx`'s header): each bit's compare (a bit test,
/// `LOP.AND.NZ` into a predicate, or an `ISETP`), `VOTE` and `SEL` form an independent chain,
/// so a later bit's compare issues before an earlier bit's vote instead of waiting behind it
/// (a `VOTE` kept in place made the chains run one after the other, a predicate latency
/// each: radixSortThrust's onesweep kernels).
#[test]
fn ballot_chain() {
    let sass = differential("ballot_chain", 8);
    let at = |ms: &[&str], nth: usize| {
        let lines: Vec<&str> = sass.lines().filter(|l| l.contains("/*")).collect();
        lines
            .iter()
            .enumerate()
            .filter(|(_, l)| {
                l.split_whitespace()
                    .any(|w| ms.iter().any(|m| w.starts_with(m)))
            })
            .map(|(k, _)| k)
            .nth(nth)
            .unwrap_or_else(|| panic!("{ms:?} #{nth} in\n{sass}"))
    };
    assert_eq!(count(&sass, "VOTE.ANY"), 3, "{sass}");
    assert!(
        at(&["ISETP", "LOP.AND.NZ", "LOP.AND.Z"], 1) < at(&["VOTE.ANY"], 0),
        "{sass}"
    );
}

/// prmt's modes: the mode field of PRMT, the semantics of each (eval == sim) on random
/// selectors and the thread id's low bits.
#[test]
fn prmt_modes() {
    let sass = differential("prmt_modes", 8);
    for m in [".F4E", ".B4E", ".RC8", ".ECL", ".ECR", ".RC16"] {
        assert!(count(&sass, &format!("PRMT{m}")) > 0, "PRMT{m} in\n{sass}");
    }
}

#[test]
fn bits64() {
    differential("bits64", 8);
}

/// `mov.b64 {lo, hi}` (words from registers, a constant and the parameter bank) and
/// `mul.hi` by powers of two, after `ir::simplify`: pairs are word moves, no LOP.OR or SHL;
/// the multiplications are shifts, no XMAD.
#[test]
fn pair64() {
    let sass = differential("pair64", 8);
    assert_eq!(count(&sass, "LOP.OR"), 0, "{sass}");
    assert_eq!(count(&sass, "SHL"), 0, "{sass}");
    assert_eq!(count(&sass, "XMAD"), 0, "{sass}");
}

/// mad.cc/madc chains, 64-bit min/max and slct.f32 (rejected before the construct audit).
#[test]
fn carry_mad() {
    let sass = differential("carry_mad", 8);
    assert_eq!(count(&sass, "IMNMX"), 0, "{sass}");
    assert!(count(&sass, "FSETP") >= 2, "{sass}");
}

/// A construct the lowering refuses (here a `.local` offset past the 24 bits of LDL's
/// immediate) names its PTX line, not only the kernel. (The array's address is also stored
/// to global memory, so `ir::sroa` keeps it in local memory and the load reaches lowering.)
#[test]
fn lowering_refusal_names_the_ptx_line() {
    let src = kernel("carry_mad").replace(
        "    ret;",
        "    .local .b8 big[20000000];\n    .reg .b64 %bigp;\n    mov.u64 %bigp, big;\n    st.global.u64 [%rd15+8], %bigp;\n    ld.local.u32 %r9, [big+16777220];\n    st.global.u32 [%rd15], %r9;\n    ret;",
    );
    let line = src.lines().position(|l| l.contains("[big+")).unwrap() + 1;
    let opts = Options::default();
    let err = compile(&src, &opts).expect_err("the offset is refused");
    let text = leafold::error::render_all(&err.0);
    assert!(text.contains(&format!("(PTX line {line})")), "{text}");
}

/// 128-bit `ld.const` as two `LDC.64`, at an immediate and a per-thread register address.
#[test]
fn const_v4() {
    let sass = differential("const_v4", 4);
    assert_eq!(sass.matches("LDC.64").count(), 6, "{sass}");
}

#[test]
fn shf_sad() {
    differential("shf_sad", 8);
}

/// `%clock` and `%clock64` compile (CS2R, with ptxas's re-read of the high word) and run;
/// their values are not comparable with `ir::eval`, so only the stored difference's sanity
/// (the second 64-bit read is not below the first) is checked.
#[test]
fn clocks_compile_and_run() {
    let src = kernel("bits")
        .split("    clz.b32")
        .next()
        .unwrap()
        .to_string()
        + "    mov.u64 %rd2, %clock64;
    mov.u32 %r12, %clock;
    mov.u64 %rd3, %clock64;
    sub.s64 %rd4, %rd3, %rd2;
    st.global.u64 [%rd15], %rd4;
    st.global.u32 [%rd15+8], %r12;
    ret;
}
";
    let out = compile_checked("clocks", &src);
    assert!(count(&out.sass, "CS2R") >= 5, "{}", out.sass);
    let ours = sim::run_cubin(&out.cubin, "k", &launch(0, 1)).expect("sim runs");
    let region = ours.region(OUT).unwrap();
    for t in 0..THREADS as usize {
        let d = u64::from_le_bytes(region[32 * t..32 * t + 8].try_into().unwrap());
        assert!(d < 1 << 40, "thread {t}: clock went backwards ({d:#x})");
    }
}

/// 32-bit atomics over two CTAs: ATOM with results on per-thread slots, RED for unread
/// results on shared counters, ATOMS on a .shared counter.
#[test]
fn atomics() {
    let sass = differential_grid("atomics", 4, 2);
    for m in [
        "ATOM.E.ADD",
        "ATOM.E.CAS",
        "RED.E.ADD",
        "RED.E.MAX.S32",
        "RED.E.INC",
        "ATOMS.ADD",
    ] {
        assert!(count(&sass, m) > 0, "{m} in\n{sass}");
    }
}

/// 64-bit atomics (register pairs and the CAS quad) over two CTAs.
#[test]
fn atomics64() {
    let sass = differential_grid("atomics64", 4, 2);
    for m in [
        "ATOM.E.ADD.U64",
        "ATOM.E.CAS.64",
        "RED.E.MIN.S64",
        "ATOMS.ADD.U64",
    ] {
        assert!(count(&sass, m) > 0, "{m} in\n{sass}");
    }
}

/// Generic-space atomics: on global slots and on shared words reached through `cvta.shared`
/// (and counters hit by every thread), each a window test plus `ATOMS` and `ATOM`/`RED`
/// under opposite predicates.
#[test]
fn generic_atomics() {
    let sass = differential("generic_atomics", 4);
    for m in [
        "@!P",
        "ATOMS.ADD",
        "ATOM.E.ADD",
        "ATOMS.CAS",
        "ATOM.E.CAS",
        "ATOMS.EXCH.U64",
        "ATOM.E.EXCH.U64",
        "ATOMS.INC",
        "ATOMS.MAX.S32",
        "RED.E.ADD",
    ] {
        assert!(sass.contains(m), "{m} in\n{sass}");
    }
    // Each guarded pair is one shared and one global atomic (eight generic atomics).
    let guarded = sass
        .lines()
        .filter(|l| l.contains("@!P") && l.contains("ATOMS."))
        .count();
    let global = sass
        .lines()
        .filter(|l| l.contains("@P") && (l.contains("ATOM.") || l.contains("RED.")))
        .count();
    assert_eq!((guarded, global), (8, 8), "{sass}");
}

/// Float atomic adds without hardware support on sm_5x, as ptxas builds them: a CAS loop
/// (`LDS`, a non-flushing `FADD`, `ATOMS.CAS`, a divergent back edge inside `SSY`/`SYNC`).
/// The counters are hit by every lane of a warp at once, so in the simulator lanes contend
/// and retry; their addends are small integers (or powers of two) whose sums are exact in
/// any order, so the simulator's lane order and `ir::eval`'s thread order give the same
/// bytes (see each kernel's header). Three CTAs of 64 threads, six launches, global races
/// detected; besides agreeing with `ir::eval`, the results are checked against sums
/// computed here. Returns the SASS and, per launch, the input words and the output words.
fn float_cas_loop(name: &str) -> (String, Vec<Words>) {
    let (sass, runs) = differential_runs(name, 6, CTAS, true);
    for m in ["LDS.U.32", "ATOMS.CAS", "SSY", "SYNC"] {
        assert!(sass.contains(m), "{m} in\n{sass}");
    }
    // The loop's add keeps subnormals (shared float atomics do not flush).
    assert!(
        sass.lines()
            .any(|l| l.contains("FADD ") && !l.contains(".FTZ")),
        "{sass}"
    );
    let words = |b: &[u8]| -> Vec<u32> {
        b.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let runs = runs
        .iter()
        .map(|(l, out)| (words(&l.global[0].bytes), words(out)))
        .collect();
    (sass, runs)
}

const CTAS: u32 = 3;

/// One launch's input words and output words.
type Words = (Vec<u32>, Vec<u32>);

/// Σ f(tid, input words of tid) over the threads of one CTA, as an f32 (exact: small).
fn cta_sum(input: &[u32], f: impl Fn(usize, &[u32]) -> u32) -> u32 {
    let total: u32 = (0..THREADS as usize)
        .map(|t| f(t, &input[8 * t..8 * t + 8]))
        .sum();
    (total as f32).to_bits()
}

/// `atom.shared.add.f32`, its old value read.
#[test]
fn fatomic_shared() {
    let (sass, runs) = float_cas_loop("fatomic_shared");
    assert_eq!(count(&sass, "ATOMS.CAS"), 3, "{sass}");
    for (input, out) in runs {
        for g in 0..(CTAS * THREADS) as usize {
            let t = g % THREADS as usize;
            let w = &out[8 * g..8 * g + 8];
            assert_eq!(
                w[0],
                input[8 * t],
                "thread {g}: the old value is the slot's"
            );
            let quarter = cta_sum(&input, |u, x| if u % 4 == t % 4 { x[2] & 15 } else { 0 });
            assert_eq!(w[2], quarter, "thread {g}: counter tid & 3");
            assert_eq!(w[3], 64f32.to_bits(), "thread {g}: +1.0 by 64 threads");
            // The +1.0 counter's old values were 0..63, once each.
            assert_eq!((w[4], w[5], w[6]), (!0, !0, 63 * 64 / 2), "thread {g}");
            assert_eq!(w[7], 1, "thread {g}: old + addend <= final");
        }
    }
}

/// `red.shared.add.f32`: the same loop.
#[test]
fn fatomic_shared_red() {
    let (sass, runs) = float_cas_loop("fatomic_shared_red");
    assert_eq!(count(&sass, "ATOMS.CAS"), 4, "{sass}");
    for (input, out) in runs {
        for g in 0..(CTAS * THREADS) as usize {
            let t = g % THREADS as usize;
            let w = &out[8 * g..8 * g + 8];
            let eighth = cta_sum(&input, |u, x| if u % 8 == t % 8 { x[2] & 31 } else { 0 });
            assert_eq!(w[1], eighth, "thread {g}: counter tid & 7");
            assert_eq!(
                f32::from_bits(w[2]),
                15.9375,
                "thread {g}: 8 x (2^0 + .. + 2^-7)"
            );
            assert_eq!(
                w[3],
                cta_sum(&input, |_, x| x[2] & 31),
                "thread {g}: [%r+20]"
            );
        }
    }
}

/// Generic `atom.add.f32` / `red.add.f32`: the shared-window test, then the global float
/// atomic (flushing) or the shared CAS loop; one instruction reaches both windows within a
/// warp.
#[test]
fn fatomic_generic() {
    let (sass, runs) = float_cas_loop("fatomic_generic");
    assert_eq!(count(&sass, "ATOMS.CAS"), 4, "{sass}");
    assert_eq!(count(&sass, "ATOM.E.ADD.F32.FTZ.RN"), 2, "{sass}");
    assert_eq!(count(&sass, "RED.E.ADD.F32.FTZ.RN"), 2, "{sass}");
    for (input, out) in runs {
        for g in 0..(CTAS * THREADS) as usize {
            let t = g % THREADS as usize;
            let w = &out[8 * g..8 * g + 8];
            assert_eq!(
                w[1],
                input[8 * t],
                "thread {g}: the old value is the slot's"
            );
            assert_eq!(
                w[4],
                cta_sum(&input, |_, x| x[2] & 15),
                "thread {g}: cnt[0]"
            );
            let even = cta_sum(&input, |u, x| if u % 2 == 0 { x[2] & 15 } else { 0 });
            assert_eq!(w[5], even, "thread {g}: cnt[1]");
            assert_eq!(w[6], 1, "thread {g}: old + addend <= final");
        }
        // The global counters, hit by every CTA.
        let c = (8 * CTAS * THREADS) as usize;
        let all = cta_sum(&input, |_, x| CTAS * (x[2] & 15));
        let odd = cta_sum(
            &input,
            |u, x| if u % 2 == 1 { CTAS * (x[2] & 15) } else { 0 },
        );
        assert_eq!((out[c], out[c + 1]), (all, odd), "global counters");
    }
}

/// A float atomic sm_5x neither has nor emulates (`atom.max.f64`; `atom.add.f64` is a CAS
/// loop since issue 26, `tests/compile_modern.rs`): refused with a diagnostic naming it,
/// not compiled wrongly.
#[test]
fn unemulated_f64_atomic_is_a_diagnostic() {
    let src = kernel("bits")
        .split("    clz.b32")
        .next()
        .unwrap()
        .to_string()
        + "    atom.global.max.f64 %rd4, [%rd15], %rd0;\n    st.global.u64 [%rd15+8], %rd4;\n    ret;\n}\n";
    let opts = Options {
        file_name: "f64.ptx".into(),
        ..Options::default()
    };
    let Err(err) = compile(&src, &opts) else {
        panic!("a 64-bit float atomic add must be refused")
    };
    let text = leafold::error::render_all(&err.0);
    assert!(text.contains("atom.global.max.f64"), "{text}");
    assert!(text.contains("other than add"), "{text}");
}

/// 64-bit shifts by a register count: every PTX edge count (0, 31, 32, 33, 63, 64, 65,
/// 0xffffffff) and random ones, against the reference's clamping semantics.
#[test]
fn shift64() {
    let sass = differential("shift64", 8);
    for m in [
        "SHF.L.U64",
        "SHF.R.U64",
        "SHF.R.S64",
        "SHL ",
        "SHR.U32",
        "SHR ",
    ] {
        assert!(sass.contains(m), "{m} in\n{sass}");
    }
}

/// `bar.red.popc/and/or` (negated operands, numbered barriers, a thread count) over two
/// CTAs: each CTA's reduction of its own threads' predicates, against `ir::eval`.
#[test]
fn bar_red() {
    let sass = differential_grid("bar_red", 6, 2);
    for m in [
        "BAR.RED.POPC 0x0, P",
        "BAR.RED.POPC 0x1, 0x40, !P",
        "BAR.RED.AND",
        "BAR.RED.OR",
        "B2R.RESULT RZ, P",
    ] {
        assert!(sass.contains(m), "{m} in\n{sass}");
    }
    assert_eq!(count(&sass, "MEMBAR.CTA"), 6, "{sass}");
    assert_eq!(count(&sass, "B2R.RESULT"), 6, "{sass}");
}

/// Warp votes over whole warps and a partial active mask (a divergent branch).
#[test]
fn vote() {
    let sass = differential("vote", 8);
    for m in ["VOTE.ALL", "VOTE.ANY", "VOTE.EQ"] {
        assert!(count(&sass, m) > 0, "{m} in\n{sass}");
    }
}

/// Warp shuffles in every mode and operand form, with the in-range predicate.
#[test]
fn shfl() {
    let sass = differential("shfl", 8);
    for m in ["SHFL.IDX", "SHFL.UP", "SHFL.DOWN", "SHFL.BFLY"] {
        assert!(count(&sass, m) > 0, "{m} in\n{sass}");
    }
}

/// Cache operators and `.volatile` (`tests/data/intops/cache_ops.ptx`): ptxas 11.8's modes
/// (`lower::select::cache`), the same bytes as `ir::eval`, and the volatile store and load of
/// one word kept in order. Compared line by line with ptxas 11.8 `-O3` on the same file:
/// every load and store has ptxas's cache mode (LDG.E, .CG, .CI, .CV; STG.E, .CG, .CS, .WT;
/// LD.E.CG/.CV, ST.E.CG/.CS/.WT); ptxas differs only in merging adjacent accesses into wider
/// ones, which leafold does not do.
#[test]
fn cache_ops() {
    let sass = differential("cache_ops", 4);
    for (mnemonic, n) in [
        ("LDG.E.CG ", 2),
        ("LDG.E.CV.64 ", 2),
        ("LDG.E.CI.64 ", 1),
        ("LDG.E.CI.128 ", 1),
        ("LD.E.CG ", 1),
        ("LD.E.CG.64 ", 1),
        ("LD.E.CV ", 1),
        ("LD.E.CV.128 ", 1),
        ("STG.E.CG ", 1),
        ("STG.E.CS.64 ", 1),
        ("STG.E.WT.64 ", 1),
        ("ST.E.CG ", 1),
        ("ST.E.CS ", 1),
        ("ST.E.WT.64 ", 1),
        ("ST.E.WT.128 ", 1),
        ("STG.E.WT ", 1),
        ("LDG.E.CV ", 1),
    ] {
        let found = sass.lines().filter(|l| l.contains(mnemonic)).count();
        assert_eq!(found, n, "{mnemonic}\n{sass}");
    }
    // .ca and .cs (loads) carry no mode: plain LDG.E for words 0 and 2.
    assert_eq!(
        sass.lines().filter(|l| l.contains("LDG.E ")).count(),
        2,
        "{sass}"
    );
    let at = |m: &str| sass.lines().position(|l| l.contains(m)).unwrap();
    assert!(at("STG.E.WT ") < at("LDG.E.CV "), "volatile order\n{sass}");
}

/// `x + (a >> k)` (logical, constant k) is ptxas's one `LEA.HI d, a, x, RZ, 32 - k`: the
/// signed divisions by 2 and 4 and the parameter addend fold; the shift read twice does not.
#[test]
fn add_shr() {
    let sass = differential("add_shr", 8);
    let lea_hi = sass.lines().filter(|l| l.contains("LEA.HI R")).count();
    assert_eq!(lea_hi, 3, "{sass}");
    assert_eq!(count(&sass, "SHR.U32"), 1, "{sass}");
}
