//! Per-kernel shared memory (`ir::Module::shared_layout`): each kernel gets only the `.shared`
//! variables it names, laid out as ptxas 11.8 lays them out.
//!
//! - `tests/data/shared_layout/*.ptx`: every kernel's `.nv.shared.<kernel>` size and alignment
//!   equal ptxas's, and the shared addresses the kernels write to global memory are the same
//!   under `ir::eval`, the simulator running our cubin, and the simulator running ptxas's
//!   (so the variables' offsets are ptxas's too, and eval places them where our code does).
//! - The corpus: every kernel both compile has ptxas's section size and alignment.
//!
//! Both need the oracle (they print a NOTICE and pass without it; CI requires it). The
//! checks that need no oracle (three 20 KB kernels each get 20 KB; eval == our code) run
//! always.

mod common;

use common::{corpus, par_map, ptxas_cached, Plan};
use leafold::cubin;
use leafold::driver::{compile, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::ir::{self, Module};
use leafold::oracle::Oracle;
use leafold::sim;

const OUT: u64 = 0x1000_0000;

fn data(name: &str) -> String {
    let path = format!(
        "{}/tests/data/shared_layout/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

fn build(name: &str, text: &str) -> Module {
    common::ir_module(format!("{name}.ptx"), text)
}

fn ours(name: &str, text: &str) -> Vec<u8> {
    let opts = Options {
        file_name: format!("{name}.ptx"),
        ..Options::default()
    };
    compile(text, &opts)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
        .cubin
}

/// One CTA of 32 threads; the kernel's one parameter points at a 4 KB output buffer; a
/// module with an extern array gets 256 bytes of dynamic shared memory.
fn launch(m: &Module) -> Launch {
    let mut l = Launch::new([1, 1, 1], [32, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0xee; 4096],
    }];
    if m.vars
        .values()
        .any(|v| v.space == ir::Space::Shared && v.size == 0)
    {
        l.dynamic_shared = 256;
    }
    l
}

const FILES: [&str; 7] = [
    "extern",
    "sized",
    "scopes",
    "prototype",
    "hidden",
    "visibility",
    "three20k",
];

/// What each kernel of `name` writes to the output buffer, under eval and under the
/// simulator running `cubin`.
fn outputs(name: &str, cubin: &[u8]) -> Vec<(String, Vec<u8>, Vec<u8>)> {
    let text = data(name);
    let m = build(name, &text);
    m.functions
        .iter()
        .map(|f| {
            let l = launch(&m);
            let want = eval::run(&m, &f.name, &l).unwrap();
            let got = sim::run_cubin(cubin, &f.name, &l)
                .unwrap_or_else(|e| panic!("{name} {}: {e:?}", f.name));
            (
                f.name.clone(),
                want.region(OUT).unwrap().to_vec(),
                got.region(OUT).unwrap().to_vec(),
            )
        })
        .collect()
}

#[test]
fn eval_places_shared_where_our_code_does() {
    for name in FILES {
        let cubin = ours(name, &data(name));
        for (k, want, got) in outputs(name, &cubin) {
            assert_eq!(want, got, "{name} kernel {k}: eval and our code differ");
        }
    }
}

#[test]
fn three_20k_kernels_get_20k_each() {
    let c = cubin::read(&ours("three20k", &data("three20k"))).unwrap();
    let sizes: Vec<_> = c
        .kernels
        .iter()
        .map(|k| (k.name.clone(), k.shared))
        .collect();
    assert_eq!(sizes.len(), 3);
    for (k, s) in sizes {
        assert_eq!(s, Some((20480, 4)), "{k}");
    }
    // Each kernel reads its neighbour's value: thread t gets f(t ^ 1), f(t ^ 2), t ^ 3.
    for (k, want, _) in outputs("three20k", &ours("three20k", &data("three20k"))) {
        let word = |t: usize| u32::from_le_bytes(want[4 * t..4 * t + 4].try_into().unwrap());
        for t in 0..32u32 {
            let expect = match k.as_str() {
                "ka" => (t ^ 1) * 7,
                "kb" => (t ^ 2) * 5,
                _ => t ^ 3,
            };
            assert_eq!(word(t as usize), expect, "{k} thread {t}");
        }
    }
}

#[test]
fn layouts_match_ptxas() {
    let Some(oracle) = Oracle::for_test("shared_layout") else {
        return;
    };
    for name in FILES {
        let text = data(name);
        let mine = ours(name, &text);
        let theirs = ptxas_cached(&oracle, &text, "sm_50").unwrap();
        let (a, b) = (cubin::read(&mine).unwrap(), cubin::read(&theirs).unwrap());
        for k in &b.kernels {
            let ours_k = a.kernels.iter().find(|x| x.name == k.name).unwrap();
            assert_eq!(ours_k.shared, k.shared, "{name} kernel {}", k.name);
        }
        // The addresses each kernel stores are ptxas's.
        let mine_out = outputs(name, &mine);
        let their_out = outputs(name, &theirs);
        for ((k, want, got), (_, _, ptxas)) in mine_out.iter().zip(&their_out) {
            assert_eq!(want, got, "{name} kernel {k}: eval and our code differ");
            assert_eq!(
                want, ptxas,
                "{name} kernel {k}: eval and ptxas's code differ"
            );
        }
    }
}

#[test]
fn corpus_sections_match_ptxas() {
    let Some(oracle) = Oracle::for_test("shared_layout") else {
        return;
    };
    let files: Vec<_> = corpus()
        .into_iter()
        .filter(|f| f.plan != Plan::Fails && !f.texture)
        .collect();
    let rows = par_map(&files, |f| {
        let Ok(theirs) = ptxas_cached(&oracle, &f.ptx_for_ptxas, "sm_50") else {
            return Vec::new();
        };
        let theirs = cubin::read(&theirs).unwrap();
        let mut rows = Vec::new();
        for k in &theirs.kernels {
            let opts = Options {
                file_name: f.name.clone(),
                entries: vec![k.name.clone()],
                ..Options::default()
            };
            let Ok(out) = compile(&f.ptx, &opts) else {
                continue;
            };
            let mine = cubin::read(&out.cubin).unwrap();
            let m = mine.kernels.iter().find(|x| x.name == k.name).unwrap();
            rows.push((f.name.clone(), k.name.clone(), m.shared, k.shared));
        }
        rows
    });
    let rows: Vec<_> = rows.into_iter().flatten().collect();
    let size = |s: &Option<(u64, u64)>| s.map_or(0, |s| s.0);
    let mine: u64 = rows.iter().map(|r| size(&r.2)).sum();
    let theirs: u64 = rows.iter().map(|r| size(&r.3)).sum();
    println!(
        "{} kernels; .nv.shared bytes: leafold {mine}, ptxas {theirs}",
        rows.len()
    );
    let bad: Vec<_> = rows.iter().filter(|r| r.2 != r.3).collect();
    for (f, k, m, t) in &bad {
        println!("{f} {k}: leafold {m:?}, ptxas {t:?}");
    }
    assert!(rows.len() >= 340, "only {} kernels compared", rows.len());
    assert!(bad.is_empty(), "{} kernels differ from ptxas", bad.len());
}
