//! NaN results as a GPU gives them: the probe kernels `tests/data/fpmath/nan_probe{2,3}.ptx`
//! were run on an NVIDIA H200, and their `.rows` files hold every stored word (byte offset,
//! width, the GPU's bits). Here `ir::eval` runs each probe and must give the GPU's bits on
//! every row, except on the rows that name another value (`ours=HEX`): the documented
//! differences of `ir::float`'s essay (f64 → f16 narrowing, f64 → u8/u16, the MUFU model of
//! the f64 approximations). The simulator running our SASS for the probe must leave exactly
//! what `ir::eval` leaves (the verify check), and the whole of each probe passes `verify`.

mod common;

use leafold::ir::eval::{GlobalRegion, Launch};

const OUT: u64 = 0x2000_0000;

fn read(file: &str) -> String {
    let path = format!("{}/tests/data/fpmath/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// One row of a `.rows` file: offset, width, expected bits, the line (for messages).
fn rows(name: &str) -> Vec<(usize, usize, u64, String)> {
    let text = read(&format!("{name}.rows"));
    let mut v = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let off = f[0].parse().unwrap();
        let width = f[1].parse().unwrap();
        let want = f
            .iter()
            .find_map(|w| w.strip_prefix("ours="))
            .unwrap_or(f[2]);
        v.push((
            off,
            width,
            u64::from_str_radix(want, 16).unwrap(),
            line.to_string(),
        ));
    }
    v
}

fn check_probe(name: &str) {
    let ptx = read(&format!("{name}.ptx"));
    let out = common::compile_sass(name, &ptx);
    let module = common::ir_module(format!("{name}.ptx"), ptx.clone());
    let kernel = &module.functions[0].name;
    let mut launch = Launch::new([1, 1, 1], [32, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0; 4096],
    }];
    let got = common::assert_eval_equals_sim(kernel, &module, &out, &launch, OUT);
    let rows = rows(name);
    assert!(rows.len() > 40, "{name}: {} rows", rows.len());
    let mut bad = Vec::new();
    for (off, width, want, line) in rows {
        let mut b = [0u8; 8];
        b[..width].copy_from_slice(&got[off..off + width]);
        let have = u64::from_le_bytes(b);
        if have != want {
            bad.push(format!("{line}: eval {have:0w$x}", w = 2 * width));
        }
    }
    assert!(bad.is_empty(), "{name}:\n{}", bad.join("\n"));
    common::compile_and_verify(&format!("{name}.ptx"), name, &ptx);
}

#[test]
fn probe2_rows_hold_for_eval_and_sim() {
    check_probe("nan_probe2");
}

#[test]
fn probe3_rows_hold_for_eval_and_sim() {
    check_probe("nan_probe3");
}

#[test]
fn probe1_rows_hold_for_eval_and_sim() {
    check_probe("nan_probe");
}
