//! Helpers shared by the integration tests (each test file that needs them says `mod common;`):
//! * the corpus: what MANIFEST.md says ptxas 11.8 does with each file, the
//!   `.target`/`.version` rewrite it needs, and a compile cache so the several corpus tests
//!   compile each file with ptxas once per checkout, not once per test;
//! * the oracle checks of our code: `cuobjdump -sass` and nvdisasm print our cubin (or our
//!   selected instructions) exactly as our printer does ([`assert_oracle_prints_our_listing`],
//!   [`check_with_nvdisasm`]), over listings read by [`parse_lines`];
//! * running our code: [`ir_module`] (PTX text to IR) and [`load_our_kernel`] (the code and
//!   `KernelInfo` from our cubin, as a loader reads them, constant banks included);
//! * deterministic inputs: [`Rng`] (xorshift64*) and [`noise`];
//! * folders of PTX files compiled, checked by the oracle and verified ([`ptx_files`]).

#![allow(dead_code)]

pub mod ptx_files;
pub mod warp_kernel;

use leafold::oracle::Oracle;
use leafold::sm50::{self, Bundle, Ctrl, Field, Form};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// What ptxas 11.8 does with a corpus file for `-arch=sm_50` (MANIFEST.md's column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    AsIs,
    Rewrite,
    Fails,
}

pub struct CorpusFile {
    pub name: String,
    pub plan: Plan,
    /// The text to hand ptxas: rewritten when the manifest says so.
    pub ptx_for_ptxas: String,
    /// The file as committed.
    pub ptx: String,
    /// The manifest marks the file TEXTURE: it uses textures or surfaces.
    pub texture: bool,
}

/// The corpus files ptxas 11.8 compiles for sm_50 (as they are, or after the rewrite), in
/// manifest order.
pub fn ptxas_corpus() -> Vec<CorpusFile> {
    corpus()
        .into_iter()
        .filter(|f| f.plan != Plan::Fails)
        .collect()
}

/// Every corpus file with its manifest verdict, in manifest order.
pub fn corpus() -> Vec<CorpusFile> {
    let text = std::fs::read_to_string("tests/data/corpus/MANIFEST.md").unwrap();
    let mut v = Vec::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        // | # | file | repo | commit | path | .version | .target | addr | generator | kernels
        // | lines | ptxas 11.8 sm_50 | ...
        if cols.len() < 13 || cols[1].parse::<u32>().is_err() {
            continue;
        }
        let name = cols[2].trim_matches('`').to_string();
        let plan = if cols[12].starts_with("FAIL") {
            Plan::Fails
        } else if cols[12].starts_with("after rewrite") {
            Plan::Rewrite
        } else {
            Plan::AsIs
        };
        let ptx = std::fs::read_to_string(format!("tests/data/corpus/ptx/{name}")).unwrap();
        let ptx_for_ptxas = if plan == Plan::Rewrite {
            retarget(&ptx)
        } else {
            ptx.clone()
        };
        let texture = cols.iter().skip(13).any(|c| c.contains("TEXTURE"));
        v.push(CorpusFile {
            name,
            plan,
            ptx_for_ptxas,
            ptx,
            texture,
        });
    }
    assert!(v.len() >= 130, "MANIFEST rows: {}", v.len());
    v
}

/// `.target sm_XX[, rest]` → `.target sm_50[, rest]`; PTX ISA 8.x → 7.8 (ptxas 11.8's newest).
pub fn retarget(ptx: &str) -> String {
    ptx.lines()
        .map(|l| {
            let t = l.trim_start();
            if let Some(rest) = t.strip_prefix(".target") {
                let rest = rest.trim_start();
                let tail = rest.find(',').map_or("", |p| &rest[p..]);
                format!(".target sm_50{tail}")
            } else if t.starts_with(".version 8.") {
                ".version 7.8".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `ptxas -arch=<arch>` through a cache in `target/oracle-cache/`, keyed by a hash of the
/// input, the arch and the ptxas path. Entries are written to a temporary name and renamed,
/// so parallel tests never see half a file. Failures are not cached.
pub fn ptxas_cached(oracle: &Oracle, ptx: &str, arch: &str) -> Result<Vec<u8>, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (ptx, arch, &oracle.ptxas).hash(&mut h);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/oracle-cache");
    let path = dir.join(format!("{:016x}.cubin", h.finish()));
    if let Ok(bytes) = std::fs::read(&path) {
        return Ok(bytes);
    }
    let bytes = oracle.ptxas(ptx, arch, &[]).map_err(|e| e.to_string())?;
    let _ = std::fs::create_dir_all(&dir);
    let tmp = dir.join(format!("{:016x}.{}.tmp", h.finish(), std::process::id()));
    if std::fs::write(&tmp, &bytes).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
    Ok(bytes)
}

/// Map `f` over `items` on as many threads as the machine has cores, keeping the order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = items.len().div_ceil(n).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Instruction lines `(address, text)` of an nvdisasm or cuobjdump listing, the text without
/// its trailing `;` (control-word-only lines have no text and are skipped by callers' zips).
pub fn parse_lines(out: &str) -> Vec<(u64, String)> {
    let mut v = Vec::new();
    for line in out.lines() {
        let Some(p) = line.find("/*") else { continue };
        let rest = &line[p + 2..];
        let Some(e) = rest.find("*/") else { continue };
        let Ok(addr) = u64::from_str_radix(&rest[..e], 16) else {
            continue;
        };
        let text = rest[e + 2..].split("/*").next().unwrap_or("").trim();
        let text = text.trim_end_matches(';').trim();
        // nvdisasm braces a dual-issue pair: `{ FIRST ;` ... `SECOND }` (with the spaces; the
        // braces of `DEPBAR {4,2,1,0}` are the instruction's own).
        let text = text.strip_prefix("{ ").unwrap_or(text).trim_start();
        let text = text.strip_suffix(" }").unwrap_or(text).trim_end();
        v.push((addr, text.to_string()));
    }
    v
}

/// With the oracle, NVIDIA's tools print our code as our printer does: `cuobjdump -sass` lists
/// `cubin` exactly as `sass` (the listing `compile` returned), line for line, and nvdisasm
/// prints the words of the cubin's first kernel the same way. `what` names the case in the
/// failure messages. For a cubin of one kernel (see [`assert_cuobjdump_lists_unordered`]).
pub fn assert_oracle_prints_our_listing(oracle: &Oracle, what: &str, cubin: &[u8], sass: &str) {
    assert_cuobjdump_lists(oracle, what, cubin, sass);
    let c = leafold::cubin::read(cubin)
        .unwrap_or_else(|e| panic!("{what}: our cubin does not read back: {e}"));
    let raw = oracle
        .nvdisasm_raw(&c.kernels[0].code)
        .unwrap_or_else(|e| panic!("{what}: nvdisasm rejects our words: {e}"));
    same_lines(
        what,
        "nvdisasm",
        &parse_lines(&raw),
        &parse_lines(sass),
        &raw,
    );
}

/// `cuobjdump -sass` of `cubin` lists exactly the instructions of `sass` (our printer's
/// listing of it), at the same addresses and in the same order. Returns cuobjdump's listing.
pub fn assert_cuobjdump_lists(oracle: &Oracle, what: &str, cubin: &[u8], sass: &str) -> String {
    let listing = oracle
        .cuobjdump(cubin, "-sass")
        .unwrap_or_else(|e| panic!("{what}: cuobjdump rejects our cubin: {e}"));
    same_lines(
        what,
        "cuobjdump",
        &parse_lines(&listing),
        &parse_lines(sass),
        &listing,
    );
    listing
}

/// [`assert_cuobjdump_lists`] for a cubin of several kernels: cuobjdump lists kernels in file
/// order (the reverse of PTX order), so the two sets of (address, text) lines are compared.
pub fn assert_cuobjdump_lists_unordered(oracle: &Oracle, what: &str, cubin: &[u8], sass: &str) {
    let listing = oracle
        .cuobjdump(cubin, "-sass")
        .unwrap_or_else(|e| panic!("{what}: cuobjdump rejects our cubin: {e}"));
    let mut theirs = parse_lines(&listing);
    let mut ours = parse_lines(sass);
    theirs.sort();
    ours.sort();
    same_lines(what, "cuobjdump", &theirs, &ours, &listing);
}

/// The lines a tool printed are ours; a failure names the first line that differs and shows
/// the tool's whole listing.
fn same_lines(
    what: &str,
    tool: &str,
    theirs: &[(u64, String)],
    ours: &[(u64, String)],
    listing: &str,
) {
    for (t, o) in theirs.iter().zip(ours) {
        assert_eq!(t, o, "{what}: {tool} (left) vs ours (right)\n{listing}");
    }
    assert_eq!(
        theirs.len(),
        ours.len(),
        "{what}: {tool} lists {} instructions, we print {}\n{listing}",
        theirs.len(),
        ours.len()
    );
}

/// Kernel `f` of our compiled `out` as a driver loads it: [`leafold::sim::load_kernel`] takes
/// the code, the parameter bytes, the shared and stack sizes and constant banks 2 (the
/// kernel's literal pool) and 3 from the cubin. Checks that what it read agrees with the IR's
/// parameter size and with the compile report.
pub fn load_our_kernel(
    out: &leafold::driver::Output,
    f: &leafold::ir::Function,
) -> (Vec<u64>, leafold::sim::KernelInfo) {
    let name = &f.name;
    let (code, info) = leafold::sim::load_kernel(&out.cubin, name)
        .unwrap_or_else(|e| panic!("{name}: our cubin does not load: {e}"));
    let report = out
        .kernels
        .iter()
        .find(|k| &k.name == name)
        .unwrap_or_else(|| panic!("{name}: not in the compile report"));
    assert_eq!(info.param_size, f.param_size(), "{name}: parameter bytes");
    assert_eq!(info.local_size, report.stack_frame, "{name}: stack frame");
    assert_eq!(
        u64::from(info.shared_size),
        report.smem,
        "{name}: shared bytes"
    );
    (code, info)
}

/// A small deterministic generator (xorshift64*), so every run sees the same inputs and a
/// failure reproduces.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The high half of [`Rng::next`] (its better bits).
    pub fn next_u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
}

/// `n` deterministic pseudo-random words (xorshift) from `seed`.
pub fn noise(n: usize, seed: u64) -> Vec<u32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect()
}

/// The IR module of PTX text `src` (`name` is the file name diagnostics give); panics with
/// the rendered diagnostics when the text does not parse, check or build.
pub fn ir_module(name: impl Into<String>, src: impl Into<String>) -> leafold::ir::Module {
    let file = leafold::SourceFile::new(name, src);
    let render = |d: &[leafold::error::Diagnostic]| leafold::error::render_all(d);
    let (ast, _) =
        leafold::ptx::parse_and_check(&file).unwrap_or_else(|d| panic!("parse: {}", render(&d.0)));
    leafold::ir::build(&ast, &file).unwrap_or_else(|d| panic!("IR build: {}", render(&d)))
}

/// Every instruction of `insts` (selected code, before any cubin) encodes to a word nvdisasm
/// prints exactly as our printer does (neutral control words). Skips with the oracle's notice
/// when the tools are absent.
pub fn check_with_nvdisasm(test: &str, insts: &[sm50::Inst]) {
    let Some(oracle) = Oracle::for_test(test) else {
        return;
    };
    // BRA holds an instruction index here; give it a real (small, forward-safe) offset so the
    // word is an ordinary branch.
    let insts: Vec<(sm50::Inst, Ctrl)> = insts
        .iter()
        .map(|i| {
            let mut i = *i;
            if i.form == Form::BRA {
                i.set(Field::Rel, 0x10);
            }
            (i, Ctrl::NEUTRAL)
        })
        .collect();
    let (words, addrs) = bundle_words(&insts);
    let ours: Vec<(u64, String)> = insts
        .iter()
        .zip(addrs)
        .map(|((i, _), addr)| (addr, sm50::print(i, addr, 0)))
        .collect();
    let out = oracle.nvdisasm_raw(&words).expect("nvdisasm runs");
    let theirs: std::collections::HashMap<u64, String> = parse_lines(&out).into_iter().collect();
    for (addr, text) in ours {
        assert_eq!(
            theirs.get(&addr).map(String::as_str),
            Some(text.as_str()),
            "instruction at {addr:#x}"
        );
    }
}

/// Instructions with their control fields packed three to a bundle, as the words of a
/// `.text` section (the last bundle padded with NOPs); returns the words and each
/// instruction's byte address in them.
pub fn bundle_words(insts: &[(sm50::Inst, Ctrl)]) -> (Vec<u64>, Vec<u64>) {
    let mut words = Vec::new();
    let mut addrs = Vec::new();
    for (n, chunk) in insts.chunks(3).enumerate() {
        let mut b = Bundle {
            ctrl: [Ctrl::NEUTRAL; 3],
            insts: [0x50b0000000070f00; 3],
        };
        for (k, (i, c)) in chunk.iter().enumerate() {
            b.ctrl[k] = *c;
            b.insts[k] = sm50::encode(i);
            addrs.push((n * 32 + 8 + 8 * k) as u64);
        }
        words.push(b.ctrl_word());
        words.extend(b.insts);
    }
    (words, addrs)
}

/// [`ptxas_cached`] with extra ptxas options (e.g. `-c` for relocatable code that calls
/// device-runtime functions), cached under a key that includes them.
pub fn ptxas_cached_with(
    oracle: &Oracle,
    ptx: &str,
    arch: &str,
    extra: &[&str],
) -> Result<Vec<u8>, String> {
    if extra.is_empty() {
        return ptxas_cached(oracle, ptx, arch);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (ptx, arch, &oracle.ptxas, extra).hash(&mut h);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/oracle-cache");
    let path = dir.join(format!("{:016x}.cubin", h.finish()));
    if let Ok(bytes) = std::fs::read(&path) {
        return Ok(bytes);
    }
    let bytes = oracle.ptxas(ptx, arch, extra).map_err(|e| e.to_string())?;
    let _ = std::fs::create_dir_all(&dir);
    let tmp = dir.join(format!("{:016x}.{}.tmp", h.finish(), std::process::id()));
    if std::fs::write(&tmp, &bytes).is_ok() {
        let _ = std::fs::rename(&tmp, &path);
    }
    Ok(bytes)
}

/// A texture instruction's listing line (TEX*, TLD*, TXQ, TXD) reduced to what selection
/// (and, with `keep_phase`, the scheduler's `.T`/`.P` texture phase) decides: the mnemonic
/// and every operand that is not a register.
pub fn texture_shape(line: &str, keep_phase: bool) -> String {
    let line = line.trim_end_matches(';').trim();
    let (mnemonic, rest) = line.split_once(' ').unwrap_or((line, ""));
    let mnemonic = if keep_phase {
        mnemonic
    } else {
        mnemonic.trim_end_matches(".T").trim_end_matches(".P")
    };
    let ops: Vec<&str> = rest
        .split(',')
        .map(str::trim)
        .filter(|o| {
            !(o.starts_with('R') && (o[1..].chars().all(|c| c.is_ascii_digit()) || *o == "RZ"))
        })
        .collect();
    format!("{mnemonic} {}", ops.join(", "))
}

/// The texture instructions of a listing, each as [`texture_shape`] reduces it (ptxas's
/// and ours compare equal when selection chose alike).
pub fn texture_lines(listing: &str, keep_phase: bool) -> Vec<String> {
    parse_lines(listing)
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| {
            ["TEX", "TLD", "TXQ", "TXD"]
                .iter()
                .any(|p| t.starts_with(p))
        })
        .map(|t| texture_shape(&t, keep_phase))
        .collect()
}

/// The hazard checker finds nothing in the first kernel of `cubin`, and some line of our
/// listing `sass` holds `want` (the `.T`/`.P` texture phase aside: the oracle tests compare
/// it): the instruction ptxas chooses for the construct `what` tests.
pub fn assert_hazard_free_and_shows(what: &str, cubin: &[u8], sass: &str, want: &str) {
    let c = leafold::cubin::read(cubin).unwrap();
    let errs = leafold::sm50::sched::check::check_code(&c.kernels[0].code);
    assert!(errs.is_empty(), "{what}: {errs:#?}\n{sass}");
    assert!(
        sass.lines()
            .any(|l| l.replace(".P ", " ").replace(".T ", " ").contains(want)),
        "{what}: no {want}\n{sass}"
    );
}

/// The cubin metadata of `ours` equals ptxas's `theirs` (everything but the code): the
/// sections (name, type, size; `.text.*` aside), the symbols (name, `st_info`, section) in
/// order, the relocations, the `.strtab` bytes and `cuobjdump -elf`'s `.nv.info` records.
pub fn assert_same_cubin_metadata(oracle: &Oracle, what: &str, ours: &[u8], theirs: &[u8]) {
    let (a, b) = (
        leafold::cubin::read(ours).unwrap(),
        leafold::cubin::read(theirs).unwrap(),
    );
    // Everything but the code's size.
    let sections = |c: &leafold::cubin::Cubin| -> Vec<(String, u32, u64)> {
        c.sections
            .iter()
            .filter(|s| !s.name.starts_with(".text."))
            .map(|s| (s.name.clone(), s.sh_type, s.size))
            .collect()
    };
    assert_eq!(
        sections(&a),
        sections(&b),
        "{what}: sections (name, type, size)"
    );
    let syms = |c: &leafold::cubin::Cubin| -> Vec<(String, u8, u16)> {
        c.symbols
            .iter()
            .map(|s| (s.name.clone(), s.info, s.shndx))
            .collect()
    };
    assert_eq!(syms(&a), syms(&b), "{what}: symbols");
    // The code's relocations (descriptor-size loads) sit where each schedule puts them:
    // their offsets are left out.
    let rels = |c: &leafold::cubin::Cubin| -> Vec<(Option<u64>, u32, u32)> {
        c.relocations
            .iter()
            .flat_map(|r| {
                let in_code = c
                    .sections
                    .get(r.target)
                    .is_some_and(|s| s.name.starts_with(".text."));
                r.relocs
                    .iter()
                    .map(move |x| ((!in_code).then_some(x.offset), x.sym, x.rtype))
            })
            .collect()
    };
    assert_eq!(rels(&a), rels(&b), "{what}: relocations");
    let strtab = |c: &leafold::cubin::Cubin| {
        c.sections
            .iter()
            .find(|s| s.name == ".strtab")
            .map(|s| s.data.clone())
    };
    assert_eq!(strtab(&a), strtab(&b), "{what}: .strtab");
    let attrs = |c: &[u8]| -> Vec<String> {
        let text = oracle.cuobjdump(c, "-elf").expect("cuobjdump -elf");
        text.lines()
            .filter(|l| l.contains("Attribute:"))
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert_eq!(attrs(ours), attrs(theirs), "{what}: .nv.info records");
}

/// With the oracle: cuobjdump and nvdisasm print exactly our listing `sass` of `cubin`, and
/// ptxas 11.8's cubin of the same `ptx` (sm_50) has the same texture instructions
/// ([`texture_lines`], with the `.T`/`.P` phase).
pub fn assert_oracle_lists_ours_and_ptxas_textures(
    oracle: &Oracle,
    what: &str,
    ptx: &str,
    cubin: &[u8],
    sass: &str,
) {
    assert_oracle_prints_our_listing(oracle, what, cubin, sass);
    let theirs =
        ptxas_cached(oracle, ptx, "sm_50").unwrap_or_else(|e| panic!("{what}: ptxas: {e}"));
    let listing = oracle.cuobjdump(&theirs, "-sass").unwrap();
    assert_eq!(
        texture_lines(&listing, true),
        texture_lines(sass, true),
        "{what}: ptxas (left) vs ours (right)\n{listing}\n{sass}"
    );
}

/// Our SASS of kernel file `name`.ptx holding `ptx`; a compile error panics with the
/// rendered diagnostics.
pub fn compile_sass(name: &str, ptx: &str) -> leafold::driver::Output {
    let opts = leafold::driver::Options {
        file_name: format!("{name}.ptx"),
        emit: leafold::driver::Emit::Sass,
        ..leafold::driver::Options::default()
    };
    leafold::driver::compile(ptx, &opts)
        .unwrap_or_else(|d| panic!("{name}:\n{ptx}\n{}", leafold::error::render_all(&d.0)))
}

/// `ir::eval` of kernel `name` of `module` and the simulator running `out`'s cubin agree on
/// the global region at `base` after `launch`; returns the simulator's bytes there.
pub fn assert_eval_equals_sim(
    name: &str,
    module: &leafold::ir::Module,
    out: &leafold::driver::Output,
    launch: &leafold::ir::eval::Launch,
    base: u64,
) -> Vec<u8> {
    let want = leafold::ir::eval::run(module, name, launch)
        .unwrap_or_else(|e| panic!("{name}: ir::eval: {e}"));
    let got = leafold::sim::run_cubin(&out.cubin, name, launch)
        .unwrap_or_else(|e| panic!("{name}: sim: {e}\n{}", out.sass));
    assert_eq!(want.region(base), got.region(base), "{name}:\n{}", out.sass);
    got.region(base).unwrap().to_vec()
}

/// Compile `src` (as `file_name`, with its SASS listing), check that the code is hazard-free
/// and that `ir::eval` equals the simulator on two seeds of two runs each; the listing.
/// Panics with `what`, the verdict and the listing otherwise.
pub fn compile_and_verify(file_name: &str, what: &str, src: &str) -> String {
    use leafold::driver::{compile, Emit, Options};
    use leafold::verify::{verify_file, Outcome, VerifyOptions};
    let opts = Options {
        file_name: file_name.to_string(),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out = compile(src, &opts)
        .unwrap_or_else(|d| panic!("{what}: {}", leafold::error::render_all(&d.0)));
    let file = leafold::cubin::read(&out.cubin).unwrap();
    let errs = leafold::sm50::sched::check::check_code(&file.kernels[0].code);
    assert!(errs.is_empty(), "{what}: hazards {errs:?}\n{}", out.sass);
    for seed in [1, 2] {
        let o = VerifyOptions {
            seed,
            runs: 2,
            compile: opts.clone(),
            ..VerifyOptions::default()
        };
        let v = verify_file(src, None, &o).unwrap();
        match &v[0].outcome {
            Outcome::Match { .. } => {}
            _ => panic!("{what}, seed {seed}: {}\n{}", v[0], out.sass),
        }
    }
    out.sass
}

/// A 7×5 texture of 4 × f32 (3 layers where `shape` is layered) with normalized coordinates,
/// `filter` and `address` on every axis, filled with `seed`'s random texels (the texture the
/// sampler tests fetch through; `what` names the case in a failure).
pub fn texture_7x5_f32x4(
    what: &str,
    shape: leafold::texture::Shape,
    filter: leafold::texture::FilterMode,
    address: leafold::texture::AddressMode,
    seed: u64,
) -> leafold::texture::Texture {
    use leafold::texture::{ChannelType, Texture, TextureDesc};
    let mut d = TextureDesc::new(shape, [7, 5, 3], ChannelType::F32, 4);
    if shape.is_layered() {
        d.layers = 3;
    }
    d.sampler.normalized_coords = true;
    d.sampler.filter = filter;
    d.sampler.address = [address; 3];
    d.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
    Texture::random(d, seed)
}

/// One CTA of `threads` threads with `params`, `textures`, and an output buffer at `out` of
/// 16 bytes per thread filled with 0xcd (so a word nothing writes shows).
pub fn one_cta_texture_launch(
    threads: u32,
    out: u64,
    params: Vec<u8>,
    textures: leafold::texture::TextureBindings,
) -> leafold::ir::eval::Launch {
    use leafold::ir::eval::{GlobalRegion, Launch};
    let mut l = Launch::new([1, 1, 1], [threads, 1, 1]);
    l.params = params;
    l.global = vec![GlobalRegion {
        base: out,
        bytes: vec![0xcd; threads as usize * 16],
    }];
    l.textures = textures;
    l
}

/// A one-kernel PTX module (`k(k_in, k_out)`, 64-bit addresses) that reads `x = in[tid]`
/// into `%r2` and `y = in[tid + 64]` into `%r3`, runs `body` (which computes `%r9` from
/// them), and stores `%r9` to `out[tid]`. `regs` declares the registers the body uses
/// beyond `%r<16>` and `%rd<..>` (say `.reg .pred %p<8>;`); the shape of the small
/// selection tests of `lower_bit_test` and `lower_pred_acc`.
pub fn two_word_kernel(regs: &str, body: &str) -> String {
    format!(
        r#".version 7.8
.target sm_50
.address_size 64

.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
{regs}
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd1, [k_in];
	ld.param.u64 	%rd2, [k_out];
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd3, %rd5;
	ld.global.u32 	%r2, [%rd6];
	ld.global.u32 	%r3, [%rd6+256];
{body}
	add.s64 	%rd7, %rd4, %rd5;
	st.global.u32 	[%rd7], %r9;
	ret;
}}
"#
    )
}
