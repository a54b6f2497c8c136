//! Snapshots of the division and special-function sequences: each `tests/data/fpmath/*.ptx`
//! (one operation, its header comment saying what the sequence should look like) compiled
//! with `leafold::compile`; the snapshot is that comment followed by the SASS instructions.
//! Every cubin also passes the hazard checker.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::sm50::sched::check::check_code;

fn snapshot(name: &str) -> String {
    let path = format!(
        "{}/tests/data/fpmath/{name}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(path).unwrap();
    let header = src.lines().next().unwrap().to_string();
    let opts = Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out = compile(&src, &opts)
        .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).unwrap();
    let errs = check_code(&c.kernels[0].code);
    assert!(errs.is_empty(), "{name}: {errs:#?}");
    let mut text = header;
    for (addr, inst) in common::parse_lines(&out.sass) {
        if !inst.is_empty() {
            text.push_str(&format!("\n{addr:04x}  {inst}"));
        }
    }
    text
}

macro_rules! snap {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), snapshot(stringify!($name)));
        }
    )*};
}

snap!(
    div_u32,
    rem_s32,
    div_s16,
    div_u64,
    rcp_approx,
    sqrt_approx_ftz,
    lg2_approx,
    sin_approx,
    ex2_approx,
    div_full,
    sqrt_rn,
    div_rn,
    div_rp,
    rcp_rz_ftz,
    div_rn_f64,
    sqrt_rn_f64,
    sqrt_rz,
    sqrt_rp_ftz,
    cvt_sat_f64,
    rcp_rsqrt_approx_ftz_f64,
    cvt_sat_f16,
    rsqrt_approx_f64,
    div_rn_sub
);
