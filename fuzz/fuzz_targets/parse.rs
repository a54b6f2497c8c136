//! Fuzz target `parse`: arbitrary bytes through `SourceFile::from_bytes`, the parser, the
//! checker and the printer. Any panic, hang or stack overflow is a bug; for input that parses,
//! the printed PTX must parse again without errors.
#![no_main]

use leafold::ptx;
use leafold::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let file = SourceFile::from_bytes("fuzz.ptx", data);
    let (module, diags) = ptx::parse(&file);
    for d in &diags {
        let _ = d.to_string();
    }
    if let Some(m) = module {
        let checked = ptx::check(&m, &file);
        for d in &checked {
            let _ = d.to_string();
        }
        let _ = ptx::dump_ast(&m);
        if diags.iter().all(|d| !d.is_error()) {
            let printed = m.to_string();
            let again = SourceFile::new("printed.ptx", printed);
            let (m2, d2) = ptx::parse(&again);
            assert!(d2.iter().all(|d| !d.is_error()), "printed PTX does not reparse");
            assert!(m2.map(|m2| m2.without_spans() == m.without_spans()).unwrap_or(false));
        }
    }
});
