//! Compile speed: `cargo bench --bench compile`.
//!
//! * `compile/corpus`: every corpus file leafold compiles, compiled once per iteration
//!   (criterion's estimate), with the options `leafold compile FILE -o OUT` uses
//!   ([`cli_options`]: a cubin and no SASS listing, as ptxas makes); with the oracle installed, the same files go through ptxas 11.8
//!   `-O3` once each in the same run and the ratio ptxas/leafold over the files both accept
//!   is printed (ptxas's time is its process wall time, leafold's the in-process `compile`;
//!   see `leafold compare`).
//! * `compile/generated_20k`: one generated 20,000-line address-heavy kernel
//!   (benches/gen/mod.rs; goal < 100 ms).
//!
//! Peak memory is measured outside criterion (README, "Performance"): `/usr/bin/time -v` on
//! the release binary compiling a generated ~4 MB file.

#[path = "gen/mod.rs"]
mod gen;

/// The allocator of the `leafold` binary, set up as the binary sets it up
/// (`leafold::heap::keep_freed_memory` in `bench`), so that the figures are what the command
/// gets.
#[global_allocator]
static GLOBAL: leafold::heap::Heap = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leafold::driver::{compile, Options};
use leafold::oracle::Oracle;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

/// The options `leafold compile FILE -o OUT.cubin` compiles with (`cli::compile`): the
/// library's defaults, less the SASS listing, which the command only formats for
/// `--emit sass` (ptxas makes no listing either).
fn cli_options() -> Options {
    Options {
        sass_listing: false,
        ..Options::default()
    }
}

/// Corpus files (path, text) that leafold compiles.
fn compiled_corpus() -> Vec<(PathBuf, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/ptx");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let text = String::from_utf8_lossy(&std::fs::read(&p).ok()?).into_owned();
            compile(&text, &cli_options()).ok()?;
            Some((p, text))
        })
        .collect()
}

/// ptxas -O3 wall time per file of `files` (`None` for a file ptxas rejects, e.g. a newer
/// `.target` than sm_50); `None` altogether without the oracle.
fn ptxas_seconds(files: &[(PathBuf, String)]) -> Option<Vec<Option<f64>>> {
    let oracle = Oracle::find()?;
    let out = std::env::temp_dir().join(format!("leafold-bench-{}.cubin", std::process::id()));
    let mut times = Vec::new();
    for (p, _) in files {
        let t = Instant::now();
        let ok = std::process::Command::new(&oracle.ptxas)
            .args(["-arch=sm_50", "-O3"])
            .arg(p)
            .arg("-o")
            .arg(&out)
            .output()
            .ok()?
            .status
            .success();
        times.push(ok.then(|| t.elapsed().as_secs_f64()));
    }
    let _ = std::fs::remove_file(&out);
    Some(times)
}

fn bench(c: &mut Criterion) {
    leafold::heap::keep_freed_memory();
    let files = compiled_corpus();
    let bytes: usize = files.iter().map(|f| f.1.len()).sum();
    let opts = cli_options();
    let mut g = c.benchmark_group("compile");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    g.bench_function("corpus", |b| {
        b.iter(|| {
            for (_, text) in &files {
                black_box(compile(text, &opts).unwrap());
            }
        })
    });
    // The ratio in one run, over the files both compilers accept: leafold's mean over a few
    // passes against ptxas's one pass.
    match ptxas_seconds(&files) {
        Some(theirs) => {
            let both: Vec<&str> = files
                .iter()
                .zip(&theirs)
                .filter(|(_, t)| t.is_some())
                .map(|((_, text), _)| text.as_str())
                .collect();
            let theirs: f64 = theirs.iter().flatten().sum();
            let passes = 5;
            let t = Instant::now();
            for _ in 0..passes {
                for text in &both {
                    black_box(compile(text, &opts).unwrap());
                }
            }
            let ours = t.elapsed().as_secs_f64() / f64::from(passes);
            println!(
                "corpus ({} files both compile, of {} leafold compiles): leafold {:.1} ms, ptxas 11.8 -O3 {:.1} ms, ratio ptxas/leafold = {:.1}",
                both.len(),
                files.len(),
                ours * 1e3,
                theirs * 1e3,
                theirs / ours
            );
        }
        None => println!("corpus: ptxas not found (oracle not installed); no ratio"),
    }

    let big = gen::generate(1, 20_000);
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.sample_size(10);
    g.bench_function("generated_20k", |b| {
        b.iter(|| black_box(compile(&big, &opts).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
