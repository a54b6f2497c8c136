//! The simulator runs ptxas's `BRX` and `PRET` (`sim/exec/ctrl.rs`): a jump table whose
//! lanes take four different targets (a `brx.idx` over `%tid.x & 3`: ptxas loads the
//! target from its constant bank 2 and jumps with `BRX`, the lanes reconverging at `SYNC`),
//! and an indirect call through a function pointer (ocelot's `indirectCall`: `PRET` pushes
//! the return address, `BRX` jumps to the callee, whose `RET` comes back). Both ran on
//! leafold's code before and were refused on ptxas's ("the simulator cannot run ptxas's
//! code: BRX"); now ptxas's code must match the reference too.

use leafold::oracle::Oracle;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

const SWITCH: &str = r#".version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r4, %ctaid.x;
    mad.lo.u32 %r5, %r4, 64, %r1;
    and.b32 %r2, %r1, 3;
ts: .branchtargets L0, L1, L2, L3;
    brx.idx %r2, ts;
L0:
    mov.u32 %r3, 10;
    bra.uni J;
L1:
    mul.lo.u32 %r3, %r1, 3;
    bra.uni J;
L2:
    add.u32 %r3, %r1, 7;
    bra.uni J;
L3:
    xor.b32 %r3, %r1, 5;
J:
    mul.wide.u32 %rd2, %r5, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"#;

/// ptxas's code of `ptx` (every kernel) matches the reference at the full launch.
fn ptxas_code_matches(oracle: &Oracle, name: &str, ptx: &str) {
    let cubin = oracle.ptxas(ptx, "sm_50", &[]).expect("ptxas compiles it");
    let o = VerifyOptions {
        runs: 2,
        ptxas_cubin: Some(cubin),
        only_ptxas: true,
        ..VerifyOptions::default()
    };
    let v = verify_file(ptx, None, &o).expect("leafold compiles it");
    assert!(!v.is_empty(), "{name}: no kernel");
    for v in &v {
        assert!(
            matches!(
                v.outcome,
                Outcome::Match {
                    one_thread: None,
                    ..
                }
            ),
            "{name}: {v}"
        );
    }
}

#[test]
fn brx_jump_table_with_divergent_targets() {
    let Some(oracle) = Oracle::for_test("sim_brx") else {
        return;
    };
    ptxas_code_matches(&oracle, "switch", SWITCH);
}

#[test]
fn pret_and_brx_indirect_call() {
    let Some(oracle) = Oracle::for_test("sim_brx") else {
        return;
    };
    let path = "tests/data/corpus/ptx/gtcasl__gpuocelot__ocelot_ocelot_cuda_test_functions_indirectCall.ptx";
    let ptx = std::fs::read_to_string(path).expect("corpus file");
    ptxas_code_matches(&oracle, path, &ptx);
}
