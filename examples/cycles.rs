//! Where a schedule spends its static issue cycles: `cargo run --release --example cycles --
//! A.cubin [B.cubin] [KERNEL]` prints, per kernel, each block's cycles under the cost model
//! (`sm50::sched::cost`) and each instruction with its modelled issue cycle and control
//! field. Given two cubins (ours and ptxas's), kernels of the same name are printed one after
//! the other, with the block totals side by side.
use leafold::sm50::sched::{check::decode_text, cost};
use leafold::sm50::{self, sched::model::inst_addr};

fn kernels(path: &str) -> Vec<(String, Vec<u64>)> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cubin = leafold::cubin::read(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    cubin
        .kernels
        .into_iter()
        .map(|k| (k.name, k.code))
        .collect()
}

fn show(label: &str, code: &[u64]) {
    let Ok((insts, ctrl, targets)) = decode_text(code) else {
        println!("{label}: does not decode");
        return;
    };
    let issue = cost::trace(&insts, &ctrl);
    let blocks = cost::block_cycles(&insts, &ctrl, &targets);
    println!(
        "== {label}: {} instructions, {} cycles",
        insts.len(),
        cost::cycles(&insts, &ctrl)
    );
    let bsum: Vec<String> = blocks
        .iter()
        .map(|(a, c)| format!("{a:#06x}:{c}"))
        .collect();
    println!("   blocks {}", bsum.join(" "));
    for (k, inst) in insts.iter().enumerate() {
        println!(
            "{:6} {:#06x} {} {}",
            issue[k],
            inst_addr(k),
            ctrl[k],
            sm50::print(inst, inst_addr(k), ctrl[k].reuse)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let files: Vec<&String> = args.iter().filter(|a| a.ends_with(".cubin")).collect();
    let filter = args.iter().find(|a| !a.ends_with(".cubin"));
    let sets: Vec<Vec<(String, Vec<u64>)>> = files.iter().map(|f| kernels(f)).collect();
    let Some(first) = sets.first() else {
        eprintln!("usage: cycles A.cubin [B.cubin] [KERNEL]");
        std::process::exit(2);
    };
    for (name, _) in first {
        if filter.is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        for (set, file) in sets.iter().zip(&files) {
            if let Some((_, code)) = set.iter().find(|(n, _)| n == name) {
                show(&format!("{file} {name}"), code);
            }
        }
    }
}
