//! Differential fuzzing of the whole compiler: the fuzzer's bytes steer `leafold::ptxgen` to
//! a random valid kernel, which is compiled (regalloc2's checker and the final-assignment
//! checker on with `-a`), hazard-checked
//! and run both in the IR reference interpreter and, as SASS, in the simulator; any
//! difference panics with the PTX. Run: `cargo +nightly fuzz run -a compile_diff`.
#![no_main]

use leafold::ptxgen::{check_generated, generate, Source};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let k = generate(&mut Source::from_bytes(data));
    let seed = data.iter().fold(1u64, |h, &b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    if let Err(e) = check_generated(&k, seed) {
        panic!("{e}");
    }
});
