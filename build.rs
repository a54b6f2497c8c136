fn main() {
    println!("cargo:rerun-if-changed=isa");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("sm50_gen.rs"), leafold_isa::generate()).unwrap();
}
