//! `FCMP` (Rd = (Rc cmp 0.0) ? Ra : B) in the simulator: ptxas 11.8 selects `selp.f32` of a
//! float comparison with zero this way (volumeRender, particlefilter, the Monte Carlo
//! samples), which verify could not run on ptxas's code before. `tests/data/sim/fcmp.ptx`
//! has one case per comparison (`.FTZ`, NaN-aware and unordered ones, an immediate B); the
//! reference and the simulator running ptxas's cubin must agree on random inputs.

use leafold::oracle::Oracle;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

const PTX: &str = include_str!("data/sim/fcmp.ptx");

#[test]
fn fcmp_runs_as_the_reference() {
    let Some(oracle) = Oracle::for_test("fcmp_runs_as_the_reference") else {
        return;
    };
    let cubin = oracle.ptxas(PTX, "sm_50", &[]).expect("ptxas compiles it");
    let listing = oracle
        .cuobjdump(&cubin, "-sass")
        .expect("cuobjdump lists it");
    let fcmps = listing.matches("FCMP").count();
    assert!(fcmps >= 7, "ptxas no longer selects with FCMP:\n{listing}");
    let opts = VerifyOptions {
        grid: [1, 1, 1],
        block: [64, 1, 1],
        runs: 8,
        ptxas_cubin: Some(cubin),
        ..VerifyOptions::default()
    };
    for v in verify_file(PTX, None, &opts).expect("compiles") {
        assert!(
            matches!(v.outcome, Outcome::Match { ptxas: true, .. }),
            "{v}"
        );
    }
}
