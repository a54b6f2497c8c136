//! Write a generated PTX file for the benchmarks (see benches/gen/mod.rs):
//! `cargo run --release --example gen_ptx -- KERNELS LINES > big.ptx`.

#[path = "../benches/gen/mod.rs"]
mod gen;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("KERNELS LINES (numbers)"))
        .collect();
    let (kernels, lines) = match args[..] {
        [k, l] => (k, l),
        _ => (1, 20_000),
    };
    print!("{}", gen::generate(kernels, lines));
}
