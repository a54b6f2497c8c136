//! Every corpus kernel through ptxas 11.8 (`-arch=sm_50`); each instruction of every
//! `.text.*` section is decoded and printed by us and compared with `cuobjdump -sass`.
//!
//! The manifest (tests/data/corpus/MANIFEST.md) says which files need their `.target`
//! (and `.version`) line rewritten and which ptxas cannot compile.

mod common;

use common::Plan;
use leafold::oracle::Oracle;
use leafold::sm50::{self, Bundle};
use object::{Object, ObjectSection};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// cuobjdump's instruction lines per function: name → address → text (braces removed).
fn parse_cuobjdump(out: &str) -> HashMap<String, BTreeMap<u64, String>> {
    let mut map: HashMap<String, BTreeMap<u64, String>> = HashMap::new();
    let mut cur = String::new();
    for line in out.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            cur = name.trim().to_string();
            continue;
        }
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix("/*") else {
            continue;
        };
        let Some(e) = rest.find("*/") else { continue };
        let Ok(addr) = u64::from_str_radix(&rest[..e], 16) else {
            continue;
        };
        let mut text = rest[e + 2..].split("/*").next().unwrap_or("").trim();
        text = text.trim_start_matches('{').trim();
        text = text.trim_end_matches('}').trim();
        text = text.trim_end_matches(';').trim();
        map.entry(cur.clone())
            .or_default()
            .insert(addr, text.to_string());
    }
    map
}

/// Our text for each instruction of each `.text.<name>` section.
fn ours(cubin: &[u8]) -> Result<HashMap<String, BTreeMap<u64, String>>, String> {
    let file = object::File::parse(cubin).map_err(|e| e.to_string())?;
    let mut map = HashMap::new();
    for sec in file.sections() {
        let name = sec.name().map_err(|e| e.to_string())?;
        let Some(kernel) = name.strip_prefix(".text.") else {
            continue;
        };
        let data = sec.data().map_err(|e| e.to_string())?;
        let mut lines = BTreeMap::new();
        for (n, chunk) in data.chunks(32).enumerate() {
            let Some(b) = Bundle::from_bytes(chunk) else {
                return Err(format!("{kernel}: text size not a multiple of 32"));
            };
            for k in 0..3 {
                let addr = (n * 32 + 8 + 8 * k) as u64;
                let text = match sm50::decode(b.insts[k]) {
                    Ok(i) => sm50::print(&i, addr, b.ctrl[k].reuse),
                    Err(_) => format!("<undecoded {:#018x}>", b.insts[k]),
                };
                lines.insert(addr, text);
            }
        }
        map.insert(kernel.to_string(), lines);
    }
    Ok(map)
}

#[derive(Default)]
struct Tally {
    total: usize,
    matched: usize,
    files: usize,
    skipped: Vec<String>,
    /// Mismatches per opcode (first word of cuobjdump's text, guard removed).
    bad_ops: BTreeMap<String, (usize, String)>,
}

#[test]
fn corpus_instructions_print_like_cuobjdump() {
    let Some(oracle) = Oracle::for_test("isa_corpus") else {
        return;
    };
    let files = common::corpus();
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    // Two workers: the machine has two cores shared with other jobs.
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = files.get(n) else {
                    break;
                };
                let file = &entry.name;
                if entry.plan == Plan::Fails {
                    tally.lock().unwrap().skipped.push(file.clone());
                    continue;
                }
                let cubin = common::ptxas_cached(&oracle, &entry.ptx_for_ptxas, "sm_50")
                    .unwrap_or_else(|e| panic!("{file}: manifest says ptxas compiles it: {e}"));
                let sass = oracle.cuobjdump(&cubin, "-sass").unwrap();
                let theirs = parse_cuobjdump(&sass);
                let ours = ours(&cubin).unwrap_or_else(|e| panic!("{file}: {e}"));
                let mut t = tally.lock().unwrap();
                t.files += 1;
                for (kernel, lines) in &theirs {
                    let mine = ours.get(kernel);
                    for (addr, text) in lines {
                        t.total += 1;
                        let our = mine.and_then(|m| m.get(addr)).map_or("<missing>", |s| s);
                        if our == text {
                            t.matched += 1;
                        } else {
                            let op = text
                                .split_whitespace()
                                .find(|w| !w.starts_with('@'))
                                .unwrap_or("")
                                .split('.')
                                .next()
                                .unwrap_or("")
                                .to_string();
                            let e = t.bad_ops.entry(op).or_insert((0, String::new()));
                            e.0 += 1;
                            if e.1.is_empty() {
                                e.1 = format!("ours: {our}\n      cuobjdump: {text}");
                            }
                        }
                    }
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let rate = t.matched as f64 / t.total.max(1) as f64;
    println!(
        "corpus: {} files compiled, {} skipped (manifest FAIL), {}/{} instructions match ({:.2}%)",
        t.files,
        t.skipped.len(),
        t.matched,
        t.total,
        100.0 * rate
    );
    let mut bad: Vec<_> = t.bad_ops.iter().collect();
    bad.sort_by_key(|(_, (n, _))| std::cmp::Reverse(*n));
    for (op, (n, ex)) in &bad {
        println!("{op:>10}: {n} mismatches\n      {ex}");
    }
    assert_eq!(
        t.skipped.len(),
        2,
        "the manifest lists two files ptxas cannot compile"
    );
    assert!(t.total > 40_000, "only {} instructions seen", t.total);
    // Every instruction ptxas writes for the corpus decodes and prints like cuobjdump.
    assert_eq!(
        t.matched, t.total,
        "match rate {:.4}: every corpus instruction must print like cuobjdump",
        rate
    );
}
