//! Address folding, one PTX file per behaviour (`tests/data/fold/*.ptx`, each opening with a
//! comment that says what it pins). Each snapshot shows the whole path of one kernel: the
//! file's header comment, the SSA IR, the selected machine code over virtual registers, and
//! the final SASS of the cubin with its control codes (stall, yield, barriers, wait mask).
//! Every cubin is also checked for hazards here, so a snapshot can never pin unsafe code.
//! The generic-access cases are compiled both by default (ptxas's rule: one `Plg` per base,
//! the displacement left in the load, as the seed writes it) and with `--plg-per-address`
//! (`Plg` computed on the final address, the displacement inside the chain).

use leafold::cubin;
use leafold::disasm::{self, ListingOptions};
use leafold::driver::{Emit, Options};
use leafold::sm50::sched::check::check_code;

fn header(ptx: &str) -> String {
    ptx.lines()
        .take_while(|l| l.starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn pipeline(file: &str, plg_per_address: bool) -> String {
    let path = format!("{}/tests/data/fold/{file}", env!("CARGO_MANIFEST_DIR"));
    let ptx = std::fs::read_to_string(&path).unwrap();
    let opts = |emit| Options {
        emit,
        plg_per_address,
        file_name: file.to_string(),
        ..Options::default()
    };
    let run = |emit| match leafold::compile(&ptx, &opts(emit)) {
        Ok(out) => out,
        Err(d) => panic!("{}", leafold::error::render_all(&d.0)),
    };
    let ir = run(Emit::Ir).text;
    let vcode = run(Emit::Vcode).text;
    let out = run(Emit::Cubin);
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    for s in c.sections.iter().filter(|s| s.name.starts_with(".text.")) {
        let words: Vec<u64> = s
            .data
            .chunks(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let hazards = check_code(&words);
        assert!(hazards.is_empty(), "{file} {}: {hazards:#?}", s.name);
    }
    let sass = disasm::listing(
        &c,
        ListingOptions {
            ctrl: true,
            raw: false,
            slice: false,
        },
    );
    format!(
        "{}\n== IR ==\n{}\n== selected (virtual registers) ==\n{}\n== final SASS (control codes) ==\n{}",
        header(&ptx),
        ir.trim_end(),
        vcode.trim_end(),
        sass.trim_end()
    )
}

macro_rules! fold_case {
    ($name:ident, $file:literal) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), pipeline($file, false));
        }
    };
    ($name:ident, $per_address:ident, $file:literal) => {
        fold_case!($name, $file);
        #[test]
        fn $per_address() {
            insta::assert_snapshot!(stringify!($per_address), pipeline($file, true));
        }
    };
}

fold_case!(
    seed1_a64_index,
    seed1_a64_index_per_address,
    "seed1_a64_index.ptx"
);
fold_case!(
    seed2_a_100_minus_i,
    seed2_a_100_minus_i_per_address,
    "seed2_a_100_minus_i.ptx"
);
fold_case!(seed3_struct_field_cbank, "seed3_struct_field_cbank.ptx");
fold_case!(
    seed4_u8_32bit,
    seed4_u8_32bit_per_address,
    "seed4_u8_32bit.ptx"
);
fold_case!(seed5_u128_scaled_add, "seed5_u128_scaled_add.ptx");
fold_case!(
    shared_chain_many_displacements,
    "shared_chain_many_displacements.ptx"
);
fold_case!(shared_space_32bit_lea, "shared_space_32bit_lea.ptx");
fold_case!(far_displacement, "far_displacement.ptx");
fold_case!(
    generic_plg_chain_shared,
    generic_plg_chain_shared_per_address,
    "generic_plg_chain_shared.ptx"
);
fold_case!(scattered_guarded_accesses, "scattered_guarded_accesses.ptx");

/// The scattered-root rule (`scattered_guarded_accesses.ptx`) computes what the PTX means:
/// `ir::eval` and the simulator agree on random inputs (`n` random, so every guard pattern).
#[test]
fn scattered_guarded_accesses_verify() {
    use leafold::verify::{verify_file, Outcome, VerifyOptions};
    let path = format!(
        "{}/tests/data/fold/scattered_guarded_accesses.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let ptx = std::fs::read_to_string(&path).unwrap();
    for seed in [1, 2, 3] {
        let o = VerifyOptions {
            seed,
            runs: 2,
            ..VerifyOptions::default()
        };
        let v = verify_file(&ptx, None, &o).unwrap();
        assert!(
            matches!(v[0].outcome, Outcome::Match { .. }),
            "seed {seed}: {}",
            v[0]
        );
    }
}
