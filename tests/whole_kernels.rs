//! Whole kernels of the kinds users write (tests/data/kernels/*.ptx, each file's header says
//! what it is): vector add, tiled matrix multiply with shared memory, a shared-memory
//! reduction with `bar.sync` after divergent code, a histogram with shared and global
//! atomics, a data-dependent divergent loop, the branch shapes if-conversion predicates
//! (and some it must not), and f32/f64 constants in every operand form (immediates,
//! FADD32I/FMUL32I, the literal pool in constant bank 2). For each:
//! * a snapshot of the SASS with its control codes, under the file's header comment;
//! * the cubin passes the hazard checker, and cuobjdump and nvdisasm print our listing (with
//!   the oracle);
//! * `ir::eval` and the simulator running our code write the same global and shared memory,
//!   on several launches with seeded random inputs.

mod common;

use common::Rng;
use leafold::cubin;
use leafold::driver::{compile, Emit, Options, Output};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::check_code;

const KERNELS: [&str; 8] = [
    "vector_add",
    "matmul_tiled",
    "reduce_bar",
    "histogram_atomic",
    "divergent_loop",
    "ifconv",
    "float_literals",
    "copy_unrolled",
];

/// Buffer bases (each buffer is far smaller than the gap).
const IN0: u64 = 0x1_0000_0000;
const IN1: u64 = 0x2_0000_0000;
const OUT: u64 = 0x3_0000_0000;
const OUT1: u64 = 0x4_0000_0000;

fn source(name: &str) -> String {
    let path = format!(
        "{}/tests/data/kernels/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

fn build(name: &str) -> Output {
    let opts = Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    compile(&source(name), &opts)
        .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)))
}

/// The file's leading `//` comment.
fn header(name: &str) -> String {
    source(name)
        .lines()
        .take_while(|l| l.starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The listing with a control-code column, as `leafold disasm --ctrl` prints it.
fn listing(out: &Output) -> String {
    let c = cubin::read(&out.cubin).unwrap();
    leafold::disasm::listing(
        &c,
        leafold::disasm::ListingOptions {
            ctrl: true,
            raw: false,
            slice: false,
        },
    )
}

/// Inputs of the kinds this test needs, drawn from [`common::Rng`].
impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
    /// Floats with few significant bits, so sums of products are exact-ish but order matters
    /// (both sides must use the same order).
    fn f32s(&mut self, n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|_| ((self.below(2001) as f32 - 1000.0) / 64.0).to_le_bytes())
            .collect()
    }
    /// Doubles of every kind: small values with few significant bits, values with all 52
    /// (near the constants 0.1 and 0.7 that float_literals compares with), and now and then
    /// +-0, +-inf, a NaN or a denormal.
    fn f64s(&mut self, n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|_| {
                let x = match self.below(12) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => f64::INFINITY,
                    3 => f64::NEG_INFINITY,
                    4 => f64::NAN,
                    5 => 1e-310 * f64::from(self.below(5)),
                    6..=8 => (f64::from(self.below(2001)) - 1000.0) / 64.0,
                    _ => f64::from(self.next_u32()) / f64::from(u32::MAX) - 0.2,
                };
                x.to_le_bytes()
            })
            .collect()
    }
    /// Floats of every kind, as [`Rng::f64s`] (rounded to f32).
    fn f32s_special(&mut self, n: usize) -> Vec<u8> {
        self.f64s(n)
            .chunks(8)
            .flat_map(|c| (f64::from_le_bytes(c.try_into().unwrap()) as f32).to_le_bytes())
            .collect()
    }
    fn u32s(&mut self, n: usize, below: u32) -> Vec<u8> {
        (0..n)
            .flat_map(|_| self.below(below).to_le_bytes())
            .collect()
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u32() as u8).collect()
    }
}

fn region(base: u64, bytes: Vec<u8>) -> GlobalRegion {
    GlobalRegion { base, bytes }
}

fn params(words: &[u64], ints: &[u32]) -> Vec<u8> {
    let mut p: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    p.extend(ints.iter().flat_map(|i| i.to_le_bytes()));
    p
}

/// Launches of kernel `name` for seed `seed`: shapes that exercise partial CTAs and warps.
fn launches(name: &str, seed: u64) -> Vec<Launch> {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut v = Vec::new();
    match name {
        "vector_add" => {
            for (grid, block, n) in [(4, 64, 200u32), (2, 96, 192), (1, 32, 7)] {
                let len = (grid * block) as usize;
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, IN1, OUT], &[n]);
                l.global = vec![
                    region(IN0, r.f32s(len)),
                    region(IN1, r.f32s(len)),
                    region(OUT, r.bytes(4 * len)),
                ];
                v.push(l);
            }
        }
        "matmul_tiled" => {
            for n in [16u32, 32] {
                let t = n / 16;
                let cells = (n * n) as usize;
                let mut l = Launch::new([t, t, 1], [16, 16, 1]);
                l.params = params(&[IN0, IN1, OUT], &[n]);
                l.global = vec![
                    region(IN0, r.f32s(cells)),
                    region(IN1, r.f32s(cells)),
                    region(OUT, r.bytes(4 * cells)),
                ];
                v.push(l);
            }
        }
        "reduce_bar" => {
            for (grid, block) in [(3, 128), (2, 256), (1, 64)] {
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, OUT], &[]);
                l.global = vec![
                    region(IN0, r.u32s((grid * block) as usize, u32::MAX)),
                    region(OUT, r.bytes(4 * grid as usize)),
                ];
                v.push(l);
            }
        }
        "histogram_atomic" => {
            for (grid, block, n) in [(2, 128, 1000u32), (3, 64, 77), (1, 96, 0)] {
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, OUT], &[n]);
                l.global = vec![
                    region(IN0, r.bytes(n.max(1) as usize)),
                    // A histogram that already holds counts: the kernel adds to it.
                    region(OUT, r.u32s(64, 1000)),
                ];
                v.push(l);
            }
        }
        "divergent_loop" => {
            for (grid, block, n, limit) in [(3, 64, 150u32, 200u32), (2, 32, 64, 20)] {
                let len = (grid * block) as usize;
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, OUT], &[n, limit]);
                l.global = vec![
                    region(IN0, r.u32s(len, 1000)),
                    region(OUT, r.bytes(4 * len)),
                ];
                v.push(l);
            }
        }
        "ifconv" => {
            // Partial last CTA (n below the thread count), odd block sizes, flag on and off.
            // `in` holds only n words: a guarded-off load past it must not fault.
            for (grid, block, n, flag) in [(2, 64, 100u32, 1u32), (3, 32, 50, 0), (1, 96, 96, 7)] {
                let len = (grid * block) as usize;
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, OUT], &[n, flag]);
                l.global = vec![
                    region(IN0, r.u32s(n as usize, 2000)),
                    region(OUT, r.bytes(4 * len)),
                ];
                v.push(l);
            }
        }
        "float_literals" => {
            for (grid, block, n) in [(2, 64, 100u32), (1, 96, 96)] {
                let len = (grid * block) as usize;
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, IN1, OUT, OUT1], &[n]);
                l.global = vec![
                    region(IN0, r.f32s_special(len)),
                    region(IN1, r.f64s(len)),
                    region(OUT, r.bytes(80 * len)),
                    region(OUT1, r.bytes(160 * len)),
                ];
                v.push(l);
            }
        }
        "copy_unrolled" => {
            // `in` holds n words; blocks of at most 64 threads (the stride of sdata's rows).
            for (grid, block, n) in [(2, 64, 100u32), (3, 32, 24), (1, 64, 64)] {
                let len = (grid * block) as usize;
                let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
                l.params = params(&[IN0, OUT], &[n]);
                l.global = vec![
                    region(IN0, r.u32s(n as usize, u32::MAX)),
                    region(OUT, r.bytes(4 * len)),
                ];
                v.push(l);
            }
        }
        _ => unreachable!("no launches for {name}"),
    }
    v
}

#[test]
fn snapshots() {
    for name in KERNELS {
        let out = build(name);
        insta::assert_snapshot!(name, format!("{}\n{}", header(name), listing(&out)));
    }
}

/// The `ifconv` kernel: shapes (1) to (4) lose their branches, (5) to (7) keep theirs, so
/// one `SSY`/`@P SYNC`/`SYNC` (the long divergent side) and two `@P BRA` (the uniform sides
/// with `bar.sync` and `vote`) are left; without if-conversion (4) is a branch too and
/// (1) to (3) each push a token.
#[test]
fn ifconv_predicates_short_sides_only() {
    let count = |out: &Output, mnemonic: &str| {
        out.sass
            .lines()
            .filter(|l| {
                l.split(';').next().is_some_and(|t| {
                    t.split_whitespace()
                        .any(|w| w == mnemonic || w.starts_with(&format!("{mnemonic}.")))
                })
            })
            .count()
    };
    let on = build("ifconv");
    let off = compile(
        &source("ifconv"),
        &Options {
            file_name: "ifconv.ptx".into(),
            emit: Emit::Sass,
            no_ifconv: true,
            ..Options::default()
        },
    )
    .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    assert_eq!(count(&on, "SSY"), 1, "{}", on.sass);
    assert_eq!(count(&on, "SYNC"), 2, "{}", on.sass);
    // (6), (7) and the final `BRA` to itself.
    assert_eq!(count(&on, "BRA"), 3, "{}", on.sass);
    assert!(on.sass.contains("@!P0 LDG.E"), "{}", on.sass);
    assert!(on.sass.contains("@!P0 STS"), "{}", on.sass);
    assert_eq!(count(&off, "SSY"), 4, "{}", off.sass);
    assert!(count(&off, "BRA") > 3, "{}", off.sass);
    assert!(!off.sass.contains("@!P0 LDG.E"), "{}", off.sass);
}

/// The `copy_unrolled` kernel: no global load overwrites a register that a shared store
/// before it in the copy stored (the chain that made each load of rodinia's dwt kernels wait
/// alone): `lower::hoist` sinks those stores.
#[test]
fn copy_unrolled_loads_do_not_wait_for_stores() {
    let out = build("copy_unrolled");
    let mut stored: Vec<String> = Vec::new();
    for l in out.sass.lines() {
        let text = l.split(';').next().unwrap_or("");
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
            .filter(|w| !w.is_empty() && !w.starts_with("/*"))
            .collect();
        match words.first().copied() {
            Some("STS") => stored.push(words.last().unwrap().to_string()),
            Some(w) if w.starts_with("LDG") => {
                assert!(
                    !stored.iter().any(|r| r == words[1]),
                    "{l} reuses a stored register\n{}",
                    out.sass
                );
            }
            Some("BAR.SYNC") => break,
            _ => {}
        }
    }
    assert_eq!(stored.len(), 8, "{}", out.sass);
}

#[test]
fn hazard_free_and_listed_by_cuobjdump() {
    let oracle = Oracle::for_test("whole_kernels");
    for name in KERNELS {
        let out = build(name);
        let c = cubin::read(&out.cubin).unwrap();
        let errs = check_code(&c.kernels[0].code);
        assert!(errs.is_empty(), "{name}: {errs:#?}\n{}", out.sass);
        if let Some(o) = &oracle {
            common::assert_oracle_prints_our_listing(o, name, &out.cubin, &out.sass);
        }
    }
}

/// float_literals's constants that no immediate holds are in its literal pool, each once, at
/// the offsets its listing reads (f32 words first met, then 8-aligned f64s), as ptxas lays
/// them out.
#[test]
fn float_literals_pool() {
    let out = build("float_literals");
    let c = cubin::read(&out.cubin).unwrap();
    let pool = c.kernels[0]
        .constant2
        .clone()
        .expect("a .nv.constant2 section");
    let word = |o: usize| u32::from_le_bytes(pool[o..o + 4].try_into().unwrap());
    let dword = |o: usize| u64::from_le_bytes(pool[o..o + 8].try_into().unwrap());
    assert_eq!(word(0x0), 0.1f32.to_bits());
    assert_eq!(word(0x4), (-3.3f32).to_bits());
    assert_eq!(word(0x14), 0x7fc0_0001);
    assert_eq!(dword(0x20), 0.1f64.to_bits());
    assert_eq!(dword(0x48), 0x7ff8_0000_0000_0001);
    assert_eq!(dword(0x50), (-0.0f64).to_bits());
    assert_eq!(pool.len(), 0x58);
    // Each constant once: the listing reads 8 f32 and 7 f64 literals (SEL reads each word of
    // an f64 at +0 and +4), and 0.1 is read by six f32 and four f64 instructions.
    let mut read: Vec<usize> = out
        .sass
        .split("c[0x2][0x")
        .skip(1)
        .map(|t| usize::from_str_radix(&t[..t.find(']').unwrap()], 16).unwrap())
        .collect();
    assert_eq!(read.iter().filter(|&&o| o == 0).count(), 6, "{}", out.sass);
    assert_eq!(
        read.iter().filter(|&&o| o == 0x20).count(),
        4,
        "{}",
        out.sass
    );
    read.sort_unstable();
    read.dedup();
    let expect = [
        0x0, 0x4, 0x8, 0xc, 0x10, 0x14, 0x18, 0x1c, 0x20, 0x28, 0x30, 0x38, 0x40, 0x44, 0x48, 0x4c,
        0x50, 0x54,
    ];
    assert_eq!(read, expect, "{}", out.sass);
}

#[test]
fn eval_and_sim_agree_on_random_inputs() {
    for name in KERNELS {
        let out = build(name);
        let module = common::ir_module(format!("{name}.ptx"), source(name));
        for seed in 1..=3 {
            for l in launches(name, seed) {
                let reference = eval::run(&module, name, &l)
                    .unwrap_or_else(|e| panic!("{name} seed {seed}: eval: {e}"));
                let ours = sim::run_cubin(&out.cubin, name, &l)
                    .unwrap_or_else(|e| panic!("{name} seed {seed}: sim: {e}"));
                assert_eq!(
                    ours.global, reference.global,
                    "{name} seed {seed} grid {:?} block {:?}\n{}",
                    l.grid, l.block, out.sass
                );
                assert_eq!(ours.shared, reference.shared, "{name} seed {seed}");
                // The kernel wrote something: the output region changed.
                let before = &l.global.last().unwrap().bytes;
                let after = &reference.global.last().unwrap().bytes;
                assert!(
                    before != after || name == "histogram_atomic" && l.params[16..20] == [0; 4],
                    "{name} seed {seed}: the output is unchanged"
                );
            }
        }
    }
}
