//! Differential fuzzing of address folding: the fuzzer's bytes steer
//! `leafold::ptxgen::generate_address` to a kernel whose addresses are random trees of
//! add/sub/shl/neg/mul.wide/cvt over parameters and special registers (32- and 64-bit, global,
//! shared, local and generic with `Plg`), which is compiled (regalloc2's checker and the
//! final-assignment checker on with `-a`), hazard-checked and run in the IR reference interpreter and, as SASS, in the simulator; any
//! difference panics with the PTX. Run: `cargo +nightly fuzz run -a address_diff`.
#![no_main]

use leafold::ptxgen::{check_generated, generate_address, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let k = generate_address(&mut Source::from_bytes(data));
    let seed = data.iter().fold(7u64, |h, &b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    if let Err(e) = check_generated(&k, seed) {
        panic!("{e}");
    }
});
