//! Snapshots of the SASS that leafold selects for the float construct families of
//! tests/data/build/float_{arith,cmp,cvt}.ptx (their IR is pinned by build_snapshots): the
//! instruction text only, one per line, so a review sees the shapes (FADD/DADD with operand
//! modifiers for neg/abs, FMNMX with PT/!PT, FSETP/DSETP + predicate logic, I2F/F2I/F2F,
//! 20-bit float immediates and constant-bank operands). tests/float_diff.rs checks what they
//! compute and that NVIDIA's disassemblers print the same text.

mod common;

use leafold::driver::{compile, Emit, Options};

fn sass(name: &str) -> String {
    let path = format!("{}/tests/data/build/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap();
    let o = Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out = compile(&src, &o).unwrap_or_else(|e| panic!("{name}: {e}"));
    common::parse_lines(&out.sass)
        .into_iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(_, t)| t + "\n")
        .collect()
}

#[test]
fn float_arith_sass() {
    insta::assert_snapshot!("float_arith_sass", sass("float_arith"));
}

#[test]
fn float_cmp_sass() {
    insta::assert_snapshot!("float_cmp_sass", sass("float_cmp"));
}

#[test]
fn float_cvt_sass() {
    insta::assert_snapshot!("float_cvt_sass", sass("float_cvt"));
}
