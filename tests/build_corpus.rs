//! Coverage of `ir::build` over the real-PTX corpus: how many kernels build completely, and
//! which unsupported constructs stop the rest. Every built kernel verifies (the builder checks),
//! no file panics, and no diagnostic is an internal error (those would be builder bugs).
//!
//! `cargo test --test build_corpus -- --nocapture` prints the figures and the top constructs.

use leafold::ir::build::build_partial;
use leafold::ptx;
use leafold::SourceFile;
use std::collections::HashMap;
use std::path::Path;

/// Kernels that built when this floor was last raised; the count may only go up.
const BUILT_FLOOR: usize = 107;

#[test]
fn corpus_kernels_build_or_say_why() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/ptx");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    let (mut kernels, mut built, mut files_ok, mut float_only) = (0, 0, 0, 0);
    let mut reasons: HashMap<String, usize> = HashMap::new();
    let mut why: HashMap<String, usize> = HashMap::new();
    let mut internal = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let file = SourceFile::from_bytes(name.clone(), &std::fs::read(path).unwrap());
        let Ok((module, _)) = ptx::parse_and_check(&file) else {
            continue;
        };
        let entries = module
            .functions()
            .filter(|f| f.kind == leafold::ptx::ast::FuncKind::Entry && f.body.is_some())
            .count();
        let partial = build_partial(&module, &file);
        // Failed kernels whose only problems are floating point (the next IR extension).
        for f in module.functions() {
            if f.kind != leafold::ptx::ast::FuncKind::Entry || f.body.is_none() {
                continue;
            }
            let mine: Vec<_> = partial
                .errors
                .iter()
                .filter(|d| d.span.start >= f.span.start && d.span.end <= f.span.end)
                .collect();
            if !mine.is_empty() && mine.iter().all(|d| d.message.contains("floating-point")) {
                float_only += 1;
            }
        }
        kernels += entries;
        built += partial.module.functions.len();
        if partial.errors.is_empty() {
            files_ok += 1;
        }
        for d in &partial.errors {
            if d.message.contains("internal error") {
                internal.push(d.to_string());
            }
            // Group by the construct: the message up to the parenthesised reason.
            let key = d
                .message
                .split(" (")
                .next()
                .unwrap_or(&d.message)
                .to_string();
            *reasons.entry(key).or_default() += 1;
            let reason = d.message.rsplit_once(" (").map_or("", |(_, r)| r);
            *why.entry(reason.trim_end_matches(')').to_string())
                .or_default() += 1;
        }
    }
    let mut top: Vec<_> = reasons.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("corpus: {built} of {kernels} kernels build completely; {files_ok} files build whole");
    println!("{float_only} more kernels fail only on floating-point instructions");
    for (k, n) in top.iter().take(30) {
        println!("{n:6}  {k}");
    }
    println!("top constructs other than floating point:");
    let other = top.iter().filter(|(k, _)| {
        !["f16", "f32", "f64", "float", "FLOAT"]
            .iter()
            .any(|f| k.contains(f))
    });
    for (k, n) in other.take(20) {
        println!("{n:6}  {k}");
    }
    let mut why: Vec<_> = why.into_iter().collect();
    why.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("by reason:");
    for (k, n) in why.iter().take(15) {
        println!("{n:6}  {k}");
    }
    assert!(
        internal.is_empty(),
        "internal errors:\n{}",
        internal.join("\n")
    );
    assert!(
        built >= BUILT_FLOOR,
        "{built} kernels built, floor {BUILT_FLOOR}"
    );
}
