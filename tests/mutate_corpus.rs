//! Mutation fuzzing of the whole compile on real PTX: bad input must get a located error,
//! never a panic, a hang or an "internal error".
//!
//! In: the corpus files (`tests/data/corpus/ptx`, and `tests/data/corpus-nvcc/ptx` where it
//! is present), each mutated by one to three seeded edits: a line deleted, duplicated or two
//! lines swapped; a number replaced by a boundary value (0, -1, 2^31, 2^32, 2^63, 2^64, ...);
//! an array size or `.align` made huge; the text cut at a random point; one identifier
//! replaced by another of the file; a token replaced by another token of the file; a type or
//! vector width replaced by another; a declaration or directive at the limits inserted. Each
//! mutant goes through `leafold::driver::compile` (cubin written) on its own thread, under
//! `catch_unwind` and a wall-clock budget. Out: a list of findings (panics, hangs, errors whose
//! text says "internal"), each with its seed and a line-minimized input; the test fails when
//! the list is not empty. (Every diagnostic carries file, line and column by construction.)
//!
//! The default run is bounded for CI (a fixed seed, `DEFAULT_ITERS` mutants of files up to
//! `DEFAULT_MAX_BYTES`, stopping early after `DEFAULT_SECS`). A long run:
//!
//! ```sh
//! LEAFOLD_MUTATE_ITERS=20000 LEAFOLD_MUTATE_SECS=3000 LEAFOLD_MUTATE_SEED=7 \
//!     cargo test --test mutate_corpus -- --nocapture
//! ```
//!
//! (`LEAFOLD_MUTATE_MAX_BYTES` widens the file choice; `LEAFOLD_MUTATE_BUDGET_MS` is the
//! per-mutant budget.) The test profile keeps overflow checks and the IR/allocator checkers,
//! so an arithmetic overflow on a mutant is a finding too.
//!
//! The regression tests below hold the minimized inputs of the findings fixed so far.

use leafold::driver::{compile, Options};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const DEFAULT_ITERS: u64 = 1500;
const DEFAULT_SECS: u64 = 40;
const DEFAULT_MAX_BYTES: u64 = 12_000;
const DEFAULT_BUDGET_MS: u64 = 20_000;

/// splitmix64: a small seeded generator (no dependency, the same sequence everywhere).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        if v.is_empty() {
            None
        } else {
            Some(&v[self.below(v.len())])
        }
    }
}

const BOUNDARY: &[&str] = &[
    "0",
    "-1",
    "1",
    "3",
    "255",
    "256",
    "4096",
    "65535",
    "65536",
    "70000",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "0xffffffff",
    "0x100000000",
    "0x7fffffffffffffff",
    "0xffffffffffffffff",
    "1099511627776",
];

const HUGE_SIZES: &[&str] = &[
    "49153",
    "70000",
    "16777217",
    "1000000000",
    "2147483648",
    "4294967296",
    "4294967295",
    "18446744073709551615",
    "0",
];

const ALIGNS: &[&str] = &["0", "3", "65536", "1073741824", "2147483648", "4294967296"];

const SNIPPETS: &[&str] = &[
    ".maxnreg 0",
    ".maxntid 0, 1, 1",
    ".reqntid 1, 2, 3, 4",
    ".minnctapersm 4294967295",
    ".noreturn",
    ".shared .align 1073741824 .b8 __m_s[70000];",
    ".local .align 16 .b8 __m_l[4294967295];",
    ".global .align 2147483648 .b8 __m_g[4294967296];",
    ".const .b8 __m_c[65537];",
    ".param .b8 __m_p[70000];",
    ".reg .b32 %__m_r<4294967295>;",
    ".reg .v8 .b32 %__m_v;",
    ".global .b64 __m_a[2][9223372036854775807];",
    "{",
    "}",
    ".entry __m_k(.param .b8 __m_q[4353]) { ret; }",
    ".func __m_f() { ret; }",
    "ret;",
    "bar.sync 0;",
    "call __m_f;",
];

const TYPES: &[&str] = &[
    ".u8", ".u16", ".u32", ".u64", ".s8", ".s16", ".s32", ".s64", ".b8", ".b16", ".b32", ".b64",
    ".b128", ".f16", ".f16x2", ".f32", ".f64", ".pred", ".v2", ".v4", ".v8",
];

/// Byte ranges of the tokens of `text`: identifiers and directives (`%r1`, `.u32`, `$L1`,
/// `foo`), numbers, and single punctuation characters.
fn tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.');
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if word(c) {
            let s = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            out.push((s, i));
        } else {
            out.push((i, i + 1));
            i += 1;
        }
    }
    out
}

fn is_number(t: &str) -> bool {
    t.as_bytes().first().is_some_and(|c| c.is_ascii_digit())
}

fn is_ident(t: &str) -> bool {
    t.as_bytes()
        .first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'%' || c == b'_' || c == b'$')
}

fn splice(text: &str, (s, e): (usize, usize), with: &str) -> String {
    format!("{}{with}{}", &text[..s], &text[e..])
}

/// One seeded edit of `text` (see the module essay); the name says which, for the report.
fn mutate_once(text: &str, rng: &mut Rng) -> (String, &'static str) {
    let lines: Vec<&str> = text.split('\n').collect();
    let n = lines.len();
    let join = |v: Vec<&str>| v.join("\n");
    match rng.below(12) {
        0 => {
            let mut v = lines.clone();
            v.remove(rng.below(n));
            (join(v), "delete line")
        }
        1 => {
            let mut v = lines.clone();
            let k = rng.below(n);
            v.insert(k, lines[k]);
            (join(v), "duplicate line")
        }
        2 => {
            let mut v = lines.clone();
            let (a, b) = (rng.below(n), rng.below(n));
            v.swap(a, b);
            (join(v), "swap lines")
        }
        3 | 4 => {
            let toks = tokens(text);
            let nums: Vec<_> = toks
                .iter()
                .filter(|&&(s, e)| is_number(&text[s..e]))
                .copied()
                .collect();
            match rng.pick(&nums) {
                Some(&t) => (
                    splice(text, t, rng.pick(BOUNDARY).unwrap()),
                    "boundary number",
                ),
                None => (text.to_string(), "none"),
            }
        }
        5 => {
            // An array size (`[N]`) or an alignment (`.align N`) made huge.
            let toks = tokens(text);
            let mut sites = Vec::new();
            for w in toks.windows(3) {
                let (a, b, c) = (
                    &text[w[0].0..w[0].1],
                    &text[w[1].0..w[1].1],
                    &text[w[2].0..w[2].1],
                );
                if a == "[" && is_number(b) && c == "]" {
                    sites.push((w[1], false));
                }
                if a == ".align" && is_number(b) {
                    sites.push((w[1], true));
                }
            }
            match rng.pick(&sites) {
                Some(&(t, true)) => (splice(text, t, rng.pick(ALIGNS).unwrap()), "huge align"),
                Some(&(t, false)) => (splice(text, t, rng.pick(HUGE_SIZES).unwrap()), "huge size"),
                None => (text.to_string(), "none"),
            }
        }
        6 => {
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            (text[..cut].to_string(), "truncate")
        }
        7 => {
            let toks = tokens(text);
            let ids: Vec<_> = toks
                .iter()
                .filter(|&&(s, e)| is_ident(&text[s..e]))
                .copied()
                .collect();
            match (rng.pick(&ids), rng.pick(&ids)) {
                (Some(&a), Some(&b)) => (splice(text, a, &text[b.0..b.1]), "swap identifier"),
                _ => (text.to_string(), "none"),
            }
        }
        10 => {
            // A declaration or directive at the limits, inserted at a random line.
            let mut v = lines.clone();
            v.insert(rng.below(n + 1), rng.pick(SNIPPETS).unwrap());
            (join(v), "insert snippet")
        }
        11 => {
            // A type or vector width replaced by another (`.u32` → `.v8`, `.b128`, ...).
            let toks = tokens(text);
            let types: Vec<_> = toks
                .iter()
                .filter(|&&(s, e)| TYPES.contains(&&text[s..e]))
                .copied()
                .collect();
            match rng.pick(&types) {
                Some(&t) => (splice(text, t, rng.pick(TYPES).unwrap()), "replace type"),
                None => (text.to_string(), "none"),
            }
        }
        _ => {
            let toks = tokens(text);
            match (rng.pick(&toks), rng.pick(&toks)) {
                (Some(&a), Some(&b)) => (splice(text, a, &text[b.0..b.1]), "replace token"),
                _ => (text.to_string(), "none"),
            }
        }
    }
}

/// What one compile did, as far as robustness goes.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Ok,
    /// A proper diagnostic.
    Error,
    /// An error that says "internal" (a compiler bug reported as a diagnostic).
    BadError(String),
    Panic(String),
    Hang,
}

impl Outcome {
    fn is_finding(&self) -> bool {
        matches!(
            self,
            Outcome::BadError(_) | Outcome::Panic(_) | Outcome::Hang
        )
    }
    /// Two findings are "the same" (for minimization and for the report) when their kind and
    /// first line agree, numbers aside (`v158`, line and column numbers change as lines go).
    fn key(&self) -> String {
        match self {
            Outcome::BadError(m) | Outcome::Panic(m) => {
                let k = if matches!(self, Outcome::Panic(_)) {
                    "panic"
                } else {
                    "error"
                };
                let first = m.lines().next().unwrap_or("");
                let mut out = format!("{k}: ");
                let mut in_digits = false;
                for c in first.chars() {
                    if c.is_ascii_digit() {
                        if !in_digits {
                            out.push('N');
                        }
                        in_digits = true;
                    } else {
                        out.push(c);
                        in_digits = false;
                    }
                }
                out
            }
            other => format!("{other:?}"),
        }
    }
}

/// Whether `message` contains the word "internal" (not inside a name like `lud_internal`).
fn says_internal(message: &str) -> bool {
    message.match_indices("internal").any(|(at, w)| {
        let before = message[..at].chars().next_back();
        let after = message[at + w.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

/// Compile `text` on a fresh thread under `catch_unwind`, waiting at most `budget`. A thread
/// that runs past the budget is left behind (reported as a hang).
fn run_one(text: &str, budget: Duration) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let text = text.to_string();
    let spawned = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let opts = Options {
                file_name: "m.ptx".to_string(),
                ..Options::default()
            };
            let r = catch_unwind(AssertUnwindSafe(|| compile(&text, &opts)));
            let out = match r {
                Ok(Ok(_)) => Outcome::Ok,
                Ok(Err(d)) => {
                    // Every diagnostic carries file, line and column by construction;
                    // "internal" marks a compiler bug reported as an error.
                    let bad =
                        d.0.iter()
                            .find(|diag| says_internal(&diag.message))
                            .map(|diag| diag.to_string());
                    match bad {
                        Some(m) => Outcome::BadError(m),
                        None => Outcome::Error,
                    }
                }
                Err(p) => Outcome::Panic(
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "a panic".to_string()),
                ),
            };
            let _ = tx.send(out);
        })
        .expect("spawn");
    match rx.recv_timeout(budget) {
        Ok(o) => {
            let _ = spawned.join();
            o
        }
        Err(_) => Outcome::Hang,
    }
}

/// Line-level minimization: drop chunks of lines (halving the chunk size) while the outcome
/// keeps the same key. Hangs are not minimized (each try would cost the whole budget).
fn minimize(text: &str, key: &str, budget: Duration) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let mut chunk = (lines.len() / 2).max(1);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut i = 0;
        let mut progress = false;
        while i < lines.len() && Instant::now() < deadline {
            let end = (i + chunk).min(lines.len());
            let mut trial = lines.clone();
            trial.drain(i..end);
            let o = run_one(&trial.join("\n"), budget);
            if o.is_finding() && o.key() == key {
                lines = trial;
                progress = true;
            } else {
                i = end;
            }
        }
        if Instant::now() >= deadline || (chunk == 1 && !progress) {
            break;
        }
        if !progress {
            chunk = (chunk / 2).max(1);
        }
    }
    lines.join("\n")
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The corpus files up to `max_bytes`, sorted by path (so a seed always means the same run).
fn corpus(max_bytes: u64) -> Vec<(PathBuf, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files = Vec::new();
    for dir in ["corpus/ptx", "corpus-nvcc/ptx"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let small = e.metadata().is_ok_and(|m| m.len() <= max_bytes);
            if p.extension().is_some_and(|x| x == "ptx") && small {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let t = String::from_utf8_lossy(&std::fs::read(&p).ok()?).into_owned();
            Some((p, t))
        })
        .collect()
}

#[test]
fn mutants_of_the_corpus_get_located_errors() {
    let iters = env_u64("LEAFOLD_MUTATE_ITERS", DEFAULT_ITERS);
    let secs = env_u64("LEAFOLD_MUTATE_SECS", DEFAULT_SECS);
    let seed = env_u64("LEAFOLD_MUTATE_SEED", 1);
    let max_bytes = env_u64("LEAFOLD_MUTATE_MAX_BYTES", DEFAULT_MAX_BYTES);
    let budget = Duration::from_millis(env_u64("LEAFOLD_MUTATE_BUDGET_MS", DEFAULT_BUDGET_MS));
    let files = corpus(max_bytes);
    assert!(
        files.len() >= 20,
        "the corpus is missing: {} files",
        files.len()
    );
    // Panics are caught and reported below; the default hook would print each one too.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let mut counts = std::collections::BTreeMap::<&str, u64>::new();
    let mut findings: Vec<(u64, String, Outcome, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut done = 0;
    for i in 0..iters {
        if start.elapsed() > Duration::from_secs(secs) {
            break;
        }
        // Each mutant has its own seed: `seed * 2^32 + i` reproduces it alone.
        let mut rng = Rng((seed << 32) ^ i);
        let (path, text) = &files[rng.below(files.len())];
        let mut m = text.clone();
        let mut how = Vec::new();
        for _ in 0..=rng.below(3) {
            let (t, what) = mutate_once(&m, &mut rng);
            m = t;
            how.push(what);
        }
        let o = run_one(&m, budget);
        done += 1;
        *counts
            .entry(match o {
                Outcome::Ok => "compiled",
                Outcome::Error => "located error",
                _ => "finding",
            })
            .or_default() += 1;
        if o.is_finding() && seen.insert(o.key()) {
            let small = if o == Outcome::Hang {
                m.clone()
            } else {
                minimize(&m, &o.key(), budget)
            };
            let name = path.file_name().unwrap().to_string_lossy();
            findings.push((i, format!("{name} ({})", how.join(", ")), o.clone(), small));
        }
        if o == Outcome::Hang && findings.iter().filter(|f| f.2 == Outcome::Hang).count() >= 3 {
            break;
        }
    }
    std::panic::set_hook(hook);
    println!(
        "mutate_corpus: {done} mutants of {} files in {:.1} s (seed {seed}): {counts:?}",
        files.len(),
        start.elapsed().as_secs_f64()
    );
    for (i, how, o, small) in &findings {
        let msg = match o {
            Outcome::Panic(m) | Outcome::BadError(m) => m.clone(),
            other => format!("{other:?}"),
        };
        println!("--- mutant {i} of {how}:\n{msg}\nminimized:\n{small}\n");
    }
    assert!(
        findings.is_empty(),
        "{} distinct findings (see the output above)",
        findings.len()
    );
}

// ---- regressions: minimized findings, each a located error now --------------------------

/// Compile `src` (a complete PTX file) and return its one rendered error line.
fn first_error(src: &str) -> String {
    let opts = Options {
        file_name: "m.ptx".to_string(),
        ..Options::default()
    };
    let Err(d) = compile(src, &opts) else {
        panic!("expected an error")
    };
    let first = d.0.first().expect("one diagnostic").to_string();
    first.lines().next().unwrap().to_string()
}

#[test]
fn huge_local_frame_is_an_error_not_an_immediate_overflow() {
    let src = ".version 7.0\n.target sm_50\n.address_size 64\n.entry k()\n{\n\t.local .b8 l[4000000000];\n\t.reg .b64 %rd<2>;\n\tmov.u64 %rd1, l;\n\tst.local.u8 [%rd1], 1;\n\tret;\n}\n";
    assert_eq!(
        first_error(src),
        "m.ptx:4:8: error: entry function 'k' uses too much local data (0xee6b2800 bytes per thread, 0x7fff0000 max)"
    );
}

/// Found as "internal lowering error: v158 used before it was lowered" (a mutant of rodinia's
/// hotspot3D): a loop whose body the PTX places before its header and which reads values the
/// header defines. Lowering went block by block in layout order, so the body met the header's
/// values before they had registers; it now lowers such functions in reverse postorder. The
/// code computes what the PTX means (`ir::eval` against the simulator) and is hazard-free.
#[test]
fn loop_body_placed_before_its_header_compiles_and_verifies() {
    use leafold::verify::{verify_file, Outcome as Verdict, VerifyOptions};
    let src = r#".version 7.0
.target sm_50
.address_size 64
.visible .entry rotated(.param .u64 p, .param .u32 n)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<4>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r2, [n];
	and.b32 %r2, %r2, 15;
	mov.u32 %r1, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r1, %r3, %r4, %r1;
	mov.u32 %r6, 0;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd1, %rd1, %rd2;
	bra.uni 	$L__BB0_1;
$L__BB0_3:
	add.s32 %r6, %r6, %r5;
	st.global.u32 [%rd1], %r6;
	add.s32 %r2, %r2, -1;
$L__BB0_1:
	add.s32 %r5, %r2, %r1;
	setp.ne.s32 %p1, %r2, 0;
	@%p1 bra 	$L__BB0_3;
	ret;
}
"#;
    // The minimized mutant itself: a pass-through loop over undefined registers.
    let mutant = ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k()\n{\n\t.reg .pred %p<6>;\n\t.reg .b64 %rd<56>;\n\tbra.uni $L__BB0_1;\n$L__BB0_3:\n\tadd.s64 %rd49, %rd49, %rd29;\n$L__BB0_1:\n\t@%p5 bra $L__BB0_3;\n\tret;\n}\n";
    for text in [src, mutant] {
        let out = compile(text, &Options::default()).unwrap_or_else(|d| panic!("{d:?}"));
        let c = leafold::cubin::read(&out.cubin).unwrap();
        for k in &c.kernels {
            let h = leafold::sm50::sched::check::hazards(&k.code);
            assert!(h.is_empty(), "{}: {h:?}", k.name);
        }
    }
    let verdicts = verify_file(src, None, &VerifyOptions::default()).unwrap();
    assert_eq!(verdicts.len(), 1);
    for v in verdicts {
        assert!(
            matches!(
                v.outcome,
                Verdict::Match {
                    runs: 3,
                    one_thread: None,
                    ..
                }
            ),
            "{v}"
        );
    }
}
