//! Helpers shared by the tests that compile small PTX files of `tests/data/<dir>/` and look at
//! what happens to their local memory (`sroa_locals`, `unroll_loops`): the file's text, the
//! kernel's frame with the IR lowering receives, and `ir::eval` against the simulator.

use leafold::driver::{compile, Emit, Options};
use leafold::verify::{verify_file, Outcome, VerifyOptions};

/// The text of `tests/data/<dir>/<file>`.
pub fn read(dir: &str, file: &str) -> String {
    let path = format!("{}/tests/data/{dir}/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// Compile options for `file`, printing `emit`.
pub fn options(file: &str, emit: Emit) -> Options {
    Options {
        emit,
        file_name: file.to_string(),
        ..Options::default()
    }
}

/// The first kernel's frame (local memory per thread, bytes) and the IR lowering receives.
pub fn frame_and_ir(dir: &str, file: &str) -> (u32, String) {
    let ptx = read(dir, file);
    let out = compile(&ptx, &options(file, Emit::Cubin)).unwrap_or_else(|d| {
        panic!("{}", leafold::error::render_all(&d.0));
    });
    let ir = compile(&ptx, &options(file, Emit::Ir)).unwrap().text;
    (out.kernels[0].stack_frame, ir)
}

/// `ir::eval` against the simulator, several random launches.
pub fn assert_eval_matches_sim(dir: &str, file: &str) {
    assert_eval_matches_sim_with(dir, file, options(file, Emit::Cubin));
}

/// [`assert_eval_matches_sim`], compiling with `compile`.
pub fn assert_eval_matches_sim_with(dir: &str, file: &str, compile: Options) {
    let opts = VerifyOptions {
        runs: 4,
        compile,
        ..VerifyOptions::default()
    };
    let verdicts = verify_file(&read(dir, file), None, &opts).unwrap();
    assert!(!verdicts.is_empty());
    for v in verdicts {
        assert!(
            matches!(v.outcome, Outcome::Match { .. }),
            "{file} {}: {:?}",
            v.kernel,
            v.outcome
        );
    }
}
