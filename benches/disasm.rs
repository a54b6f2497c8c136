//! `leafold disasm` against NVIDIA's `nvdisasm` on the largest corpus cubin, both run as
//! processes on the same file, the way a user runs them: `cargo bench --bench disasm`.
//!
//! The cubin is made at bench time by the oracle ptxas (NVIDIA's output is never committed);
//! without the oracle the bench prints a notice and measures nothing. It reports the median
//! wall time of each tool over 15 runs and the ratio, and the in-process listing throughput.

use leafold::oracle::Oracle;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The corpus file whose ptxas cubin is the largest (SDK reduction: ~8,300 instructions, 310 KB).
const LARGEST: &str =
    "tests/data/corpus/ptx/gtcasl__gpuocelot__tests_ptx_sdk2.2_reduction_kernel.ptx";

fn median_run(program: &Path, args: &[&std::ffi::OsStr]) -> Duration {
    let mut times: Vec<Duration> = (0..15)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new(program).args(args).output().expect("runs");
            assert!(out.status.success(), "{} failed", program.display());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let Some(oracle) = Oracle::find() else {
        eprintln!("NOTICE: disasm bench skipped: oracle not installed (scripts/install-oracle.sh)");
        return;
    };
    let root = env!("CARGO_MANIFEST_DIR");
    let ptx = std::fs::read_to_string(Path::new(root).join(LARGEST)).expect("corpus file");
    let cubin = oracle.ptxas(&ptx, "sm_50", &[]).expect("ptxas compiles it");
    let path = std::env::temp_dir().join(format!("leafold-bench-{}.cubin", std::process::id()));
    std::fs::write(&path, &cubin).unwrap();

    let parsed = leafold::cubin::read(&cubin).expect("readable");
    let words: usize = parsed.kernels.iter().map(|k| k.code.len()).sum();
    let ours = median_run(
        Path::new(env!("CARGO_BIN_EXE_leafold")),
        &["disasm".as_ref(), path.as_os_str()],
    );
    let theirs = median_run(&oracle.nvdisasm, &[path.as_os_str()]);
    let t = Instant::now();
    let reps = 20;
    for _ in 0..reps {
        std::hint::black_box(leafold::disasm::listing(
            &leafold::cubin::read(&cubin).unwrap(),
            Default::default(),
        ));
    }
    let in_process = t.elapsed() / reps;
    let _ = std::fs::remove_file(&path);
    println!(
        "disasm {} ({} bytes, {words} words): leafold {:.2} ms, nvdisasm {:.2} ms, \
         nvdisasm/leafold = {:.1}x; in-process read+listing {:.2} ms ({:.1} M words/s)",
        Path::new(LARGEST).file_name().unwrap().to_string_lossy(),
        cubin.len(),
        ours.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
        theirs.as_secs_f64() / ours.as_secs_f64(),
        in_process.as_secs_f64() * 1e3,
        words as f64 / in_process.as_secs_f64() / 1e6,
    );
}
