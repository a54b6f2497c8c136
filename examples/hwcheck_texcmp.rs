//! Compare the current texture model with a hardware run of generated texture cases, thread
//! by thread, without a GPU: the fitting loop for `crate::texture`'s measured rules.
//!
//! `cargo run --release --example hwcheck_texcmp -- CASEDIR REPORT GOTDIR [--dump FILE]`
//!
//! CASEDIR is what `hwcheck_export --tex N --seed S` wrote (the `ID_t0.desc` lines name each
//! case's seed), REPORT and GOTDIR what `scripts/hwcheck.py` wrote for it on a GPU (one line
//! `ID KERNEL CLASS ...` a case; `ID_r1.got`, the GPU's results, for every case that
//! differed). The GPU's truth of a case is its `.got`, or, where the report says `ok`, the
//! `.exp` the export wrote (equal to the GPU's). Each case is generated again from its seed
//! (`hwcheck/tex.rs`, deterministic) and run through `ir::eval` with the model as it is now;
//! every thread's four result words are then exact, within the texture unit's known
//! precision (`tolerated`, the rule of `hwcheck.py`'s `tex_tolerated`), or a mismatch.
//!
//! Out: cases and threads per class, overall and per shape and operation; with `--dump`,
//! one line per differing thread (case, thread, description, input words, model and GPU
//! words in hex) for fitting the next rule.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

// The generator is shared with `hwcheck_export`, which uses the parts this tool does not.
#[allow(dead_code)]
#[path = "hwcheck/tex.rs"]
mod tex;

/// How a thread's (or a case's) result compares with the GPU's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Exact,
    Precision,
    Mismatch,
}

/// Whether model word `a` and GPU word `b` differ only within the texture unit's known
/// filter precision (as `scripts/hwcheck.py`'s `tex_tolerated`): f32 filtering by 2 ulp;
/// 16-bit floats and 8/16-bit normalized integers, filtered or gathered, by 0.5% or 3e-5.
fn tolerated(desc: &BTreeMap<String, String>, a: u32, b: u32) -> bool {
    let get = |k: &str| desc.get(k).map(String::as_str).unwrap_or("");
    let filtered =
        get("filter") == "1" || get("mipfilter") == "1" || get("op").starts_with("Gather");
    let fmt = get("fmt");
    let small = fmt == "16" || (matches!(fmt, "1" | "2" | "8" | "9") && get("int_read") == "0");
    let (x, y) = (a as i32, b as i32);
    let (fx, fy) = (f32::from_bits(a) as f64, f32::from_bits(b) as f64);
    if fmt == "32" && filtered && (x < 0) == (y < 0) && (x as i64 - y as i64).abs() <= 2 {
        return true;
    }
    small && filtered && (fx - fy).abs() <= 3e-5f64.max(5e-3 * fx.abs().max(fy.abs()))
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[derive(Default)]
struct Tally {
    cases: [usize; 3],
    threads: [usize; 3],
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: hwcheck_texcmp CASEDIR REPORT GOTDIR [--dump FILE]");
        std::process::exit(2);
    }
    let (dir, got) = (Path::new(&args[0]), Path::new(&args[2]));
    let dump_to = args
        .iter()
        .position(|a| a == "--dump")
        .and_then(|i| args.get(i + 1));
    let report = std::fs::read_to_string(&args[1]).expect("read REPORT");
    let mut total = Tally::default();
    let mut by_kind: BTreeMap<String, Tally> = BTreeMap::new();
    let mut dump = String::new();
    for line in report.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(id), Some(class)) = (f.first(), f.get(2)) else {
            continue;
        };
        if !matches!(*class, "ok" | "tex-precision" | "tex-mismatch") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{id}_t0.desc"))) else {
            continue;
        };
        let desc: BTreeMap<String, String> = text
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let seed: u64 = desc["seed"].parse().expect("seed");
        let truth_file = if *class == "ok" {
            dir.join(format!("{id}_r1.exp"))
        } else {
            got.join(format!("{id}_r1.got"))
        };
        let Ok(truth) = std::fs::read(&truth_file) else {
            eprintln!("{}: missing", truth_file.display());
            continue;
        };
        let case = tex::generate(seed);
        let (launch, out) = match tex::evaluate(&case) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("case {id} (seed {seed}): {e}");
                continue;
            }
        };
        let model = words(out.region(launch.global[1].base).expect("region 1"));
        let truth = words(&truth);
        let inputs = words(&case.coords);
        let mut worst = Class::Exact;
        let op = desc["op"].split('(').next().unwrap_or("").to_string();
        let kind = by_kind
            .entry(format!("{} {op}", desc["shape"]))
            .or_default();
        for t in 0..tex::THREADS as usize {
            let (m, g) = (&model[4 * t..4 * t + 4], &truth[4 * t..4 * t + 4]);
            let c = if m == g {
                Class::Exact
            } else if m
                .iter()
                .zip(g)
                .all(|(a, b)| a == b || tolerated(&desc, *a, *b))
            {
                Class::Precision
            } else {
                Class::Mismatch
            };
            worst = worst.max(c);
            total.threads[c as usize] += 1;
            kind.threads[c as usize] += 1;
            if c != Class::Exact && dump_to.is_some() {
                let hex = |w: &[u32]| {
                    w.iter()
                        .map(|x| format!("{x:08x}"))
                        .collect::<Vec<_>>()
                        .join(",")
                };
                let _ = writeln!(
                    dump,
                    "{id} {t} {:?} in={} model={} gpu={} | {}",
                    c,
                    hex(&inputs[8 * t..8 * t + 5]),
                    hex(m),
                    hex(g),
                    text.trim()
                );
            }
        }
        total.cases[worst as usize] += 1;
        kind.cases[worst as usize] += 1;
    }
    let row = |name: &str, t: &Tally| {
        println!(
            "{name:<16} cases exact {:>5} precision {:>5} mismatch {:>5} | threads exact {:>7} precision {:>6} mismatch {:>6}",
            t.cases[0], t.cases[1], t.cases[2], t.threads[0], t.threads[1], t.threads[2]
        );
    };
    for (k, t) in &by_kind {
        row(k, t);
    }
    row("total", &total);
    if let Some(p) = dump_to {
        std::fs::write(p, dump).expect("write --dump FILE");
    }
}
