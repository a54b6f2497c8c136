//! Parse + check throughput over the whole corpus (tests/data/corpus/ptx), reported by criterion
//! in bytes per second: `cargo bench --bench parse`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leafold::ptx;
use leafold::SourceFile;
use std::hint::black_box;
use std::sync::Arc;

fn corpus() -> Vec<Arc<SourceFile>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/ptx");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| SourceFile::from_bytes(p.display().to_string(), &std::fs::read(p).unwrap()))
        .collect()
}

fn bench(c: &mut Criterion) {
    let files = corpus();
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("parse+check", |b| {
        b.iter(|| {
            for f in &files {
                let (m, d) = ptx::parse(f);
                black_box(&d);
                if let Some(m) = m {
                    black_box(ptx::check(&m, f));
                }
            }
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| {
            for f in &files {
                black_box(ptx::parse(f));
            }
        })
    });
    g.bench_function("lex", |b| {
        b.iter(|| {
            for f in &files {
                let mut d = Vec::new();
                black_box(ptx::lexer::lex(f, &mut d));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
