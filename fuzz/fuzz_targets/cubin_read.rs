//! Fuzz `cubin::read` (and what callers do with its result): any input must give a
//! `CubinError` or a `Cubin`, never a panic, hang or unbounded allocation.
#![no_main]

use leafold::cubin;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = cubin::read(data) {
        let _ = cubin::dump_info(&c);
        let _ = c.header_flags_text();
        let _ = cubin::CubinSpec::from_cubin(&c);
    }
});
