//! Snapshots of the IR that `ir::build` makes from each tests/data/build/*.ptx (each file says
//! in its header what it pins down). Every built module must also verify.

use leafold::ir;
use leafold::ptx;
use leafold::SourceFile;

fn built(name: &str) -> String {
    let path = format!("{}/tests/data/build/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let file = SourceFile::new(format!("{name}.ptx"), text);
    let (module, _) = match ptx::parse_and_check(&file) {
        Ok(ok) => ok,
        Err(d) => panic!("{name}.ptx does not check clean:\n{d}"),
    };
    let m = match ir::build(&module, &file) {
        Ok(m) => m,
        Err(d) => panic!(
            "{name}.ptx does not build:\n{}",
            leafold::error::render_all(&d)
        ),
    };
    ir::verify_module(&m).unwrap();
    m.to_string()
}

macro_rules! snap {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), built(stringify!($name)));
        }
    )*};
}

snap!(
    lea_a_i_plus_10,
    lea_a_100_minus_i,
    lea_struct_field,
    lea_byte_32bit,
    lea_u128_add,
    loop_sum,
    predication,
    conversions,
    spaces,
    sregs_arith,
    barrier_reverse,
    set_mul24,
    ssa_corners,
    carry_sub,
    module_reg,
    float_arith,
    float_cmp,
    float_cvt
);

/// Constructs outside the subset are diagnostics with file, line and column, one per
/// construct, never a panic and never IR.
#[test]
fn unsupported_constructs_are_diagnostics() {
    let path = format!(
        "{}/tests/data/build/unsupported.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = SourceFile::new("unsupported.ptx", std::fs::read_to_string(path).unwrap());
    let (module, _) = ptx::parse_and_check(&file).unwrap();
    let errs = ir::build(&module, &file).unwrap_err();
    let text = leafold::error::render_all(&errs);
    insta::assert_snapshot!("unsupported", text);
}

/// A cube-map gradient fetch with offsets is a diagnostic (a function's address in an initializer no longer is);
/// `build_partial` still builds the kernel that needs none of them.
#[test]
fn unsupported_module_constructs_are_diagnostics() {
    let path = format!(
        "{}/tests/data/build/unsupported_module.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = SourceFile::new(
        "unsupported_module.ptx",
        std::fs::read_to_string(path).unwrap(),
    );
    let (module, _) = ptx::parse_and_check(&file).unwrap();
    let partial = ir::build::build_partial(&module, &file);
    let built: Vec<&str> = partial
        .module
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(built, ["fine"]);
    assert_eq!(partial.failed, ["textured"]);
    assert!(ir::build(&module, &file).is_err());
    insta::assert_snapshot!(
        "unsupported_module",
        leafold::error::render_all(&partial.errors)
    );
}
