//! Export kernels, their launches and `ir::eval`'s results, so that a GPU can run the same
//! launches and say whether the reference interpreter means what the hardware does.
//!
//! No GPU here runs sm_50 code, but any NVIDIA GPU runs PTX: its driver compiles the PTX for
//! itself. That makes a modern GPU a hardware check of `ir::eval` (the "what the PTX means"
//! side of every `verify`), not of leafold's SASS. `scripts/hwcheck.py` is the other half: it
//! loads each exported PTX with the CUDA driver API, replays the launch with the same bytes,
//! and compares every byte of every buffer with what `ir::eval` left there.
//!
//! `cargo run --release --example hwcheck_export -- OUTDIR [--gen N] [--seed S] [PTX|DIR ...]`
//!
//! * `--gen N`: N kernels from `leafold::ptxgen` (alternately `generate` and
//!   `generate_address`, seeds S..S+N), each on the launch it was generated for;
//! * `--tex N`: N generated texture kernels (module `hwcheck/tex.rs`), seeds S..S+N, each
//!   with its texture object (FIXUPS entry `offset:tK`: files `ID_tK.desc`, `ID_tK.bin`);
//! * files and folders of `.ptx`: every kernel on `verify`'s default launch (seed 1).
//!
//! Kernels are exported only where the reference can run them: 64-bit modules (the driver
//! runs no 32-bit code), and launches that `ir::eval` finishes without a fault, undefined
//! behaviour or an unknowable value. Out (in OUTDIR): `cases.txt`, one case a line:
//!
//! ```text
//! ID PTXFILE KERNEL GX GY GZ BX BY BZ DYNSHARED NREGIONS PARAMHEX FIXUPS
//! ```
//!
//! where FIXUPS is `-` or a comma list of `offset:region:delta` (a 64-bit parameter that holds
//! the address `delta` bytes into launch region `region`, to be replaced by that buffer's device
//! address plus `delta`; kernels that keep pointers in memory are not exported), and for
//! each region `ID_rK.in` (the bytes before the launch) and `ID_rK.exp` (after, by `ir::eval`).
//! The module's own `.global` variables are not compared (the driver places them).
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use leafold::error::SourceFile;
use leafold::ir::{self, eval};
use leafold::ptxgen;
use leafold::verify::{self, VerifyOptions};

#[path = "hwcheck/tex.rs"]
mod tex;

struct Exporter {
    out: PathBuf,
    cases: String,
    next: usize,
    files: usize,
    skipped: Vec<String>,
}

impl Exporter {
    fn module(&mut self, name: &str, ptx: &str, opts: &VerifyOptions) {
        // The reference runs exactly the text the GPU gets: with `.rn` written, `ir::build`
        // may not contract a `mul`/`add` pair either (`ir::contract`).
        let ptx = &explicit_rounding(ptx);
        let file = SourceFile::new(name.to_string(), ptx.to_string());
        let Ok((ast, _)) = leafold::ptx::parse_and_check(&file) else {
            self.skipped.push(format!("{name}: does not parse"));
            return;
        };
        if ast.address_size() == 32 {
            self.skipped.push(format!("{name}: 32-bit addresses"));
            return;
        }
        let module = match ir::build(&ast, &file) {
            Ok(m) => m,
            Err(_) => {
                self.skipped.push(format!("{name}: not in the IR"));
                return;
            }
        };
        let ptx_name = format!("p{}.ptx", self.files);
        let mut wrote = false;
        for f in &module.functions {
            let plan = verify::inputs::infer(f, false);
            // The GPU gets the parameters with device addresses in place of the model's; a
            // pointer stored in a buffer would need the same patching, so such kernels stay out.
            let in_memory = plan.objects.iter().any(|o| {
                o.fields
                    .iter()
                    .any(|x| matches!(x.kind, verify::inputs::Kind::Pointer { .. }))
            });
            if in_memory {
                self.skipped
                    .push(format!("{name} {}: pointers stored in memory", f.name));
                continue;
            }
            let dynamic_shared = if module
                .vars
                .values()
                .any(|v| v.space == ir::Space::Shared && v.size == 0)
            {
                verify::DYNAMIC_SHARED
            } else {
                0
            };
            let sizes = match opts.buffer_size {
                Some(b) => vec![b],
                None => vec![verify::DEFAULT_BUFFER, verify::LARGE_BUFFER],
            };
            let mut done = None;
            let mut why = String::new();
            for size in sizes {
                let mut launch = match verify::make_launch(f, &plan, size, opts.seed, opts) {
                    Ok(l) => l,
                    Err(e) => {
                        why = e;
                        break;
                    }
                };
                launch.dynamic_shared = dynamic_shared;
                // Textures and surfaces are bound by the generated texture cases (`--tex`),
                // whose replay builds each texture through the driver; a corpus kernel's would
                // need its `.texref`s bound by name, which the replay does not do.
                if !launch.textures.is_empty() || !launch.surfaces.is_empty() {
                    why = "reads textures or surfaces (covered by --tex)".into();
                    break;
                }
                // A GPU does not start shared and local memory from zeros, as the models do.
                launch.undefined_uninit = true;
                match eval::run(&module, &f.name, &launch) {
                    Ok(out) => {
                        done = Some((launch, out));
                        break;
                    }
                    Err(e) => why = e.to_string(),
                }
            }
            let Some((launch, out)) = done else {
                self.skipped.push(format!("{name} {}: {why}", f.name));
                continue;
            };
            let id = self.next;
            self.next += 1;
            let mut fixups = Vec::new();
            for at in plan.pointer_param_offsets() {
                let at = at as usize;
                let Some(bytes) = launch.params.get(at..at + 8) else {
                    continue;
                };
                let v = u64::from_le_bytes(bytes.try_into().unwrap());
                let end = |g: &eval::GlobalRegion| g.base + g.bytes.len() as u64;
                if let Some(r) = launch.global.iter().position(|g| g.base <= v && v < end(g)) {
                    fixups.push(format!("{at}:{r}:{}", v - launch.global[r].base));
                }
            }
            let hex: String = launch.params.iter().fold(String::new(), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            });
            let _ = writeln!(
                self.cases,
                "{id} {ptx_name} {} {} {} {} {} {} {} {} {} {} {}",
                f.name,
                launch.grid[0],
                launch.grid[1],
                launch.grid[2],
                launch.block[0],
                launch.block[1],
                launch.block[2],
                launch.dynamic_shared,
                launch.global.len(),
                if hex.is_empty() { "-" } else { &hex },
                if fixups.is_empty() {
                    "-".to_string()
                } else {
                    fixups.join(",")
                }
            );
            self.regions(id, &launch, &out);
            wrote = true;
        }
        if wrote {
            self.write(&ptx_name, ptx.as_bytes());
            self.files += 1;
        }
    }

    /// Generated texture case `seed` (module `tex`): one CTA, the texture object in the first
    /// parameter (fixup `0:t0`: the replay creates it from `ID_t0.desc` and `ID_t0.bin`), the
    /// coordinates in region 0 and the results in region 1.
    fn texture(&mut self, seed: u64) {
        let case = tex::generate(seed);
        let (launch, out) = match tex::evaluate(&case) {
            Ok(r) => r,
            Err(e) => {
                self.skipped.push(format!("tex{seed} ({:?}): {e}", case.op));
                return;
            }
        };
        let id = self.next;
        self.next += 1;
        let ptx_name = format!("p{}.ptx", self.files);
        self.files += 1;
        self.write(&ptx_name, case.ptx.as_bytes());
        let hex: String = launch.params.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(
            self.cases,
            "{id} {ptx_name} k 1 1 1 {} 1 1 0 2 {hex} 0:t0,8:0:0,16:1:0",
            tex::THREADS
        );
        self.regions(id, &launch, &out);
        let desc = format!("{} op={:?} seed={seed}\n", tex::desc_line(&case), case.op);
        self.write(&format!("{id}_t0.desc"), desc.as_bytes());
        self.write(&format!("{id}_t0.bin"), &case.texture.data);
    }

    /// Case `id`'s launch regions: `ID_rK.in` (before) and `ID_rK.exp` (after, by `ir::eval`).
    fn regions(&self, id: usize, launch: &eval::Launch, out: &eval::RunOutput) {
        for (k, region) in launch.global.iter().enumerate() {
            let after = out
                .region(region.base)
                .expect("every launch region comes back");
            self.write(&format!("{id}_r{k}.in"), &region.bytes);
            self.write(&format!("{id}_r{k}.exp"), after);
        }
    }

    fn write(&self, name: &str, bytes: &[u8]) {
        let p = self.out.join(name);
        std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
}

/// The PTX with `.rn` written on every float `add`, `sub` and `mul` that has no rounding
/// modifier. Without one, PTX lets the compiler contract a `mul` and an `add` into a fused
/// multiply-add (the driver's JIT does, as ptxas does); `ir::eval` rounds each one, which is
/// what `.rn` says, so the rewritten PTX means exactly what `ir::eval` computed and the GPU
/// may not contract it. Nothing else changes.
fn explicit_rounding(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len() + 1024);
    for line in ptx.split_inclusive('\n') {
        let t = line.trim_start();
        let op = t.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        let mut parts = op.split('.');
        let head = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        let float = mods.last().is_some_and(|m| *m == "f32" || *m == "f64");
        let rounded = mods.iter().any(|m| matches!(*m, "rn" | "rz" | "rm" | "rp"));
        if matches!(head, "add" | "sub" | "mul") && float && !rounded {
            let at = line.len() - t.len() + head.len();
            out.push_str(&line[..at]);
            out.push_str(".rn");
            out.push_str(&line[at..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

fn ptx_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for e in entries {
            ptx_files(&e, out);
        }
    } else if path.extension().is_some_and(|x| x == "ptx") {
        out.push(path.to_path_buf());
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: hwcheck_export OUTDIR [--gen N] [--tex N] [--seed S] [PTX|DIR ...]");
        std::process::exit(2);
    };
    let (mut gen, mut seed, mut paths) = (0u64, 0u64, Vec::new());
    let mut textures = 0u64;
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--gen" => gen = it.next().and_then(|v| v.parse().ok()).expect("--gen N"),
            "--tex" => textures = it.next().and_then(|v| v.parse().ok()).expect("--tex N"),
            "--seed" => seed = it.next().and_then(|v| v.parse().ok()).expect("--seed S"),
            p => ptx_files(Path::new(p), &mut paths),
        }
    }
    std::fs::create_dir_all(out).expect("create OUTDIR");
    let mut ex = Exporter {
        out: PathBuf::from(out),
        cases: String::new(),
        next: 0,
        files: 0,
        skipped: Vec::new(),
    };
    for s in seed..seed + gen {
        let mut src = ptxgen::Source::from_seed(s);
        let k = if s % 2 == 0 {
            ptxgen::generate(&mut src)
        } else {
            ptxgen::generate_address(&mut src)
        };
        let opts = VerifyOptions {
            seed: s,
            grid: k.grid,
            block: k.block,
            buffer_size: Some(k.buffer_size),
            shape_block: false,
            ..VerifyOptions::default()
        };
        ex.module(&format!("gen{s}"), &k.ptx, &opts);
    }
    for s in seed..seed + textures {
        ex.texture(s);
    }
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        ex.module(&p.display().to_string(), &text, &VerifyOptions::default());
    }
    ex.write("cases.txt", ex.cases.as_bytes());
    ex.write("skipped.txt", ex.skipped.join("\n").as_bytes());
    eprintln!(
        "{} cases from {} modules in {out}; {} kernels or files skipped (skipped.txt)",
        ex.next,
        ex.files,
        ex.skipped.len()
    );
}
