//! Differential property test over random valid PTX kernels (`leafold::ptxgen`): each is
//! compiled with regalloc2's checker on (debug build), its cubin's control codes pass
//! `sm50::sched::check::check_code`, and the simulator running our SASS writes exactly the
//! bytes the IR reference interpreter writes. The same check is the cargo-fuzz target
//! `fuzz/fuzz_targets/compile_diff.rs`.

use leafold::ptxgen::{check_generated, generate, generate_address, Source};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_kernels_verify(seed in any::<u64>()) {
        let k = generate(&mut Source::from_seed(seed));
        if let Err(e) = check_generated(&k, seed) {
            prop_assert!(false, "seed {seed}: {e}");
        }
    }
}

/// Many kernels, every failure listed (one line each) before the assertion, so that one
/// run shows every kind of finding rather than the first.
#[test]
fn survey_of_generated_kernels() {
    let n = 150;
    let mut failures = Vec::new();
    for seed in 1000..1000 + n {
        let k = generate(&mut Source::from_seed(seed));
        if let Err(e) = check_generated(&k, seed) {
            let first = e.lines().next().unwrap_or("").to_string();
            println!("seed {seed}: {first}");
            failures.push((seed, e));
        }
    }
    println!("{} of {n} generated kernels failed", failures.len());
    if let Some((seed, e)) = failures.first() {
        panic!("seed {seed}: {e}");
    }
}

/// A long run for a campaign (ignored by default): the seeds `PTXGEN_SEEDS` names (`A..B`,
/// default `0..2000`), each kernel checked as above, every failure listed, then a count.
/// With `PTXGEN_DUMP=DIR`, each kernel's PTX is also written to `DIR/SEED.ptx` (to compare
/// another build's CLI on them).
/// Run: `PTXGEN_SEEDS=0..5000 cargo test --release --test verify_fuzz -- --ignored --nocapture`.
#[test]
#[ignore]
fn many_seeds() {
    let range = std::env::var("PTXGEN_SEEDS").unwrap_or_else(|_| "0..2000".to_string());
    let (a, b) = range
        .split_once("..")
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
        .expect("PTXGEN_SEEDS=A..B");
    let mut failures = Vec::new();
    let dump = std::env::var("PTXGEN_DUMP").ok().filter(|d| !d.is_empty());
    for seed in a..b {
        let k = generate(&mut Source::from_seed(seed));
        if let Some(dir) = &dump {
            std::fs::write(format!("{dir}/{seed}.ptx"), &k.ptx).expect("PTXGEN_DUMP is writable");
        }
        if let Err(e) = check_generated(&k, seed) {
            println!("seed {seed}: {}", e.lines().next().unwrap_or(""));
            failures.push((seed, e));
        }
    }
    println!("{} of {} generated kernels failed", failures.len(), b - a);
    if let Some((seed, e)) = failures.first() {
        panic!("seed {seed}: {e}");
    }
}

/// The generator really produces what its essay promises (so the property above is not
/// vacuous): over a few hundred kernels, every feature shows up.
#[test]
fn generator_covers_its_features() {
    let mut all = String::new();
    for seed in 0..300 {
        all.push_str(&generate(&mut Source::from_seed(seed)).ptx);
    }
    for feature in [
        ".address_size 32",
        ".address_size 64",
        "mul.wide.u32",
        "mad.wide.u32",
        "cvta.to.global",
        "cvta.shared",
        "cvta.local",
        "ld.shared",
        "st.shared",
        "ld.local",
        "st.local",
        "ld.global",
        "st.global",
        "bar.sync 0",
        "$LOOP",
        "$SKIP",
        "ld.global.v2",
        "sub.s64",
        // Control flow laid out in every order: bodies before headers entered by `bra.uni`
        // (behind a trip-count test too), out-of-line blocks after `ret`, forward `bra.uni`
        // into a `then` block, straight-line chunks in shuffled order.
        "bra.uni $LHEAD",
        "bra.uni $LEXIT",
        "$OOL",
        "bra.uni $THEN",
        "bra.uni $CHUNK",
        // Float operations on components of vector loads.
        ".v2.f32 {%f",
        ".v4.f32 {%f",
        ".v2.f64 {%fd",
        "rsqrt.approx.f32",
        "div.rn.f32",
        "sqrt.rn.f64",
    ] {
        assert!(all.contains(feature), "no generated kernel has `{feature}`");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Address folding on random address expressions (`ptxgen::generate_address`: trees of
    /// add/sub/shl/neg/mul.wide/cvt over parameters and special registers, 32- and 64-bit,
    /// every state space, generic with `Plg`): same check as above. The cargo-fuzz target is
    /// `fuzz/fuzz_targets/address_diff.rs`.
    #[test]
    fn generated_address_kernels_verify(seed in any::<u64>()) {
        let k = generate_address(&mut Source::from_seed(seed));
        if let Err(e) = check_generated(&k, seed) {
            prop_assert!(false, "seed {seed}: {e}");
        }
    }
}

/// The address generator produces what its essay promises: every operation of the trees and
/// every state space shows up, and folding really happens (chains with `Plg` for generic
/// accesses), over a hundred kernels.
#[test]
fn address_generator_covers_its_features() {
    let mut all = String::new();
    let mut sass = String::new();
    for seed in 0..100 {
        let k = generate_address(&mut Source::from_seed(seed));
        let opts = leafold::driver::Options::default();
        match leafold::compile(&k.ptx, &opts) {
            Ok(o) => sass.push_str(&o.sass),
            Err(d) => panic!("seed {seed}: {}", leafold::error::render_all(&d.0)),
        }
        all.push_str(&k.ptx);
    }
    for feature in [
        ".address_size 32",
        ".address_size 64",
        "add.s64",
        "sub.s64",
        "add.s32",
        "sub.s32",
        "shl.b64",
        "shl.b32",
        "neg.s32",
        "neg.s64",
        "mul.wide.s32",
        "mul.wide.u32",
        "cvt.s64.s32",
        "cvt.u64.u32",
        "cvt.u32.u64",
        "%ctaid.x",
        "%ntid.x",
        "ld.param.u64",
        "cvta.to.global",
        "cvta.shared",
        "cvta.local",
        "ld.global",
        "st.global",
        "ld.shared",
        "st.shared",
        "ld.local",
        "st.local",
        "ld.u8",
        "st.u16",
    ] {
        assert!(all.contains(feature), "no generated kernel has `{feature}`");
    }
    for feature in ["LEA.HI.X P", "LEA P", ".CC", "LDS", "LDL", "LDG.E"] {
        assert!(sass.contains(feature), "no compiled kernel has `{feature}`");
    }
}

/// A generated address kernel the first colouring of registers across widths miscompiled: a
/// 64-bit def (a pair, written one word at a time by its pieces) was given the register of a
/// scalar input the last piece still read. Defs and uses of different widths in one
/// instruction now interfere, and the final-assignment checker rejects such overlap.
#[test]
fn pair_def_over_a_scalar_input_is_not_shared() {
    let seed = 3_007_341_894_777_104_697;
    let k = generate_address(&mut Source::from_seed(seed));
    if let Err(e) = check_generated(&k, seed) {
        panic!("seed {seed}: {e}");
    }
}
