//! Spilling against ptxas under a register budget (issue 23 item 4): a few corpus kernels are
//! compiled by both compilers with `--maxrregcount N` (ptxas 11.8 `-O3 -maxrregcount=N`), and
//! the spill bytes of leafold's `-v` report, summed over the kernels, must stay within a floor
//! of ptxas's (the figures measured when the test was written, rounded up, so that a change
//! that spills more fails). Each kernel must also keep to the budget.
//!
//! Needs the oracle (ptxas); without it the test prints the oracle notice and passes. The
//! other test needs no oracle: a tight budget on a kernel with its own local memory at
//! negative offsets compiles without a panic.

use leafold::cli::compare::parse_v;
use leafold::driver::{compile, Options};
use leafold::oracle::Oracle;

/// (corpus file, budget). Kernels that spill on both sides at these budgets.
const CASES: &[(&str, u32)] = &[
    ("gtcasl__gpuocelot__tests_ptx_sdk2.2_matrixMul.ptx", 16),
    (
        "gtcasl__gpuocelot__tests_cuda3.2_data_matrixMul_kernel.ptx",
        16,
    ),
    ("gtcasl__gpuocelot__tests_ptx_sdk2.2_BlackScholes.ptx", 16),
    ("gtcasl__gpuocelot__tests_ptx_parboil_mri-q.ptx", 16),
    ("gtcasl__gpuocelot__tests_ptx_rodinia_hotspot.ptx", 24),
];

/// leafold's spill bytes (stores + loads, all kernels of [`CASES`]) at most this many times
/// ptxas's. Measured when the test was written: 2508 against 2088 = 1.201 (matrixMul 92/12,
/// CUDA 3.2's matrixMul 124/12 and matrixMul_64bit 352/24, BlackScholes 260/172, mri-q's
/// ComputeQ 1392/1840, hotspot at 24 registers 288/28); the goal (issue 23) is 1.0 or below.
const SPILL_RATIO_FLOOR: f64 = 1.21;

/// (kernel, spill store bytes + spill load bytes) of each kernel of ptxas's compile.
fn ptxas_spills(oracle: &Oracle, path: &std::path::Path, budget: u32) -> Vec<(String, u32)> {
    let out = std::env::temp_dir().join(format!(
        "leafold_spill_budget_{}_{budget}.cubin",
        std::process::id()
    ));
    let o = std::process::Command::new(&oracle.ptxas)
        .args(["-arch=sm_50", "-O3", "-v"])
        .arg(format!("-maxrregcount={budget}"))
        .arg(path)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("ptxas runs");
    let _ = std::fs::remove_file(&out);
    let log = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "ptxas failed: {log}");
    log.lines()
        .filter_map(|l| {
            let rest = l.split("Compiling entry function '").nth(1)?;
            Some(rest.split('\'').next()?.to_string())
        })
        .map(|k| {
            let v = parse_v(&log, &k);
            (k, v.spill_stores + v.spill_loads)
        })
        .collect()
}

#[test]
fn spills_under_a_budget_stay_near_ptxas() {
    let Some(oracle) = Oracle::for_test("spills_under_a_budget_stay_near_ptxas") else {
        return;
    };
    let (mut ours, mut theirs) = (0u64, 0u64);
    let mut lines = String::new();
    for (file, budget) in CASES {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/corpus/ptx")
            .join(file);
        let ptx = std::fs::read_to_string(&path).expect("corpus file");
        let opts = Options {
            file_name: (*file).into(),
            max_regs: Some(*budget),
            ..Options::default()
        };
        let out =
            compile(&ptx, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
        let theirs_k = ptxas_spills(&oracle, &path, *budget);
        for k in &out.kernels {
            assert!(
                k.registers <= *budget,
                "{file} {}: {} registers over the budget {budget}",
                k.name,
                k.registers
            );
            let Some((_, t)) = theirs_k.iter().find(|(n, _)| *n == k.name) else {
                continue;
            };
            let o = k.spill_store_bytes + k.spill_load_bytes;
            lines += &format!("{file} {} @{budget}: leafold {o}, ptxas {t}\n", k.name);
            ours += u64::from(o);
            theirs += u64::from(*t);
        }
    }
    eprint!("{lines}");
    assert!(
        theirs > 0,
        "the cases no longer spill under ptxas:\n{lines}"
    );
    let ratio = ours as f64 / theirs as f64;
    assert!(
        ratio <= SPILL_RATIO_FLOOR,
        "spill bytes {ours} against ptxas's {theirs} = {ratio:.3} > {SPILL_RATIO_FLOOR}\n{lines}"
    );
}

/// optix's `trace` (gpuocelot's PTX) keeps `.local` arrays that it addresses at negative
/// offsets from R1; under `--maxrregcount=32` the allocator's promotion of spill slots read
/// such an access's 24-bit offset as unsigned (0xfffff8 for -8) and panicked encoding it again
/// (`compare --maxrregcount 32` on the corpus stopped there). It must compile within the budget.
#[test]
fn negative_local_offsets_under_a_budget_do_not_panic() {
    let file = "gtcasl__gpuocelot__tests_ptx_optix_kernel_trace_device0_1.ptx";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/corpus/ptx")
        .join(file);
    let ptx = std::fs::read_to_string(&path).expect("corpus file");
    let opts = Options {
        file_name: file.into(),
        max_regs: Some(32),
        ..Options::default()
    };
    let out =
        compile(&ptx, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    for k in &out.kernels {
        assert!(k.registers <= 32, "{}: {} registers", k.name, k.registers);
    }
}
