//! `leafold verify FILE.ptx`: compile, then run the reference interpreter and the simulator
//! on seeded random inputs and compare every byte written (see [`crate::verify`]).
//!
//! Options: `--kernel K` (default: every kernel), `--seed N`, `--runs R`, `--grid X[,Y,Z]`,
//! `--block X[,Y,Z]`, `--buffer-size BYTES`, `--surface W[,H,D,L][:FORMAT]` (the size and
//! element format of every surface, [`crate::verify::surfaces`]), `--against-ptxas` (also simulate ptxas's cubin
//! of the same file; needs the oracle, `LEAFOLD_ORACLE`), `--explain-inputs` (first print
//! what each kernel's inputs were inferred to be, [`crate::verify::inputs`], and the launch it
//! is written for, [`crate::verify::shape`]), `--texture
//! NAME=SPEC` (describe a texture the kernels read, [`crate::texture::spec`]). Exit code: 0 every kernel matched,
//! 1 a mismatch (the report names the kernel, seed, inputs, first differing byte and the SASS
//! instruction that wrote it), 2 a kernel cannot be run (the reason is printed), the file
//! cannot be read or compiled, or the arguments are bad.

use crate::driver::Options;
use crate::error::render_all;
use crate::verify::{verify_file, VerifyOptions};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The PTX file to verify.
    pub file: PathBuf,
    /// Only this kernel.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Seed of the first run (run r uses seed + r).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs, each with fresh random inputs.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// CTAs per grid: X[,Y[,Z]].
    #[arg(long, default_value = "2")]
    pub grid: String,
    /// Threads per CTA: X[,Y[,Z]] (default 64, arranged as 16×4 for kernels that read
    /// %tid.y and 4×4×4 for %tid.z).
    #[arg(long)]
    pub block: Option<String>,
    /// Bytes of each pointer parameter's buffer (default: 64 KiB, then 1 MiB if needed).
    #[arg(long)]
    pub buffer_size: Option<u64>,
    /// Size of every surface the kernel uses (`.surfref`s, and `.u64` parameters used as
    /// bindless surface handles): BYTES_PER_ROW[,ROWS[,SLICES[,LAYERS]]] (default
    /// 4096,64,4,4); random contents, compared after the run like the buffers. `:FORMAT`
    /// sets the element format `sust.p` converts to (e.g. `:unorm8x4`; default `u8`).
    #[arg(long)]
    pub surface: Option<String>,
    /// Also run ptxas's cubin through the simulator (validates the simulator).
    #[arg(long)]
    pub against_ptxas: bool,
    /// Also check the address slice `leafold compare` counts against traced runs: every
    /// instruction a run shows reaching a memory address must be in it (slow)
    #[arg(long)]
    pub check_slice: bool,
    /// FILE is a file or a directory (searched recursively for *.ptx): verify every kernel
    /// of every file and print, per file and in total, the kernels verified at the full
    /// launch, at a reduced launch, mismatched, and not run with the class of each reason.
    /// Exit 1 on any mismatch, else 0.
    #[arg(long)]
    pub summary: bool,
    /// Before verifying, print per kernel what the inputs were inferred to be: which
    /// parameters and which fields of which buffers hold pointers (into which buffer), and
    /// which hold small values (indices, sizes, loop bounds).
    #[arg(long)]
    pub explain_inputs: bool,
    /// Describe a texture the kernels read (repeatable): NAME=SHAPE:SIZE,FORMAT[,OPTION]...,
    /// e.g. img=2d:64x64,u8x4,nfloat,linear,norm,wrap. Others get random texels of a
    /// default size per shape. `--help` lists the syntax.
    #[arg(long = "texture", value_name = "NAME=SPEC", long_help = crate::texture::spec::SYNTAX_HELP)]
    pub texture: Vec<String>,
    /// Compile with runtime-trip loops unrolled by four (`compile --unroll-runtime`).
    #[arg(long = "unroll-runtime")]
    pub unroll_runtime: bool,
    /// Compile with a deliberate wrong LEA scale (to see the verifier catch it).
    #[arg(long, hide = true)]
    pub debug_wrong_lea_scale: bool,
}

/// `X[,Y[,Z]]` with every number at least 1.
pub fn parse_dims(s: &str) -> Option<[u32; 3]> {
    let mut d = [1u32; 3];
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.trim().parse().ok().filter(|&n| n >= 1)?;
    }
    Some(d)
}

pub fn run(args: &Args) -> u8 {
    let (Some(grid), Some(block)) = (
        parse_dims(&args.grid),
        parse_dims(args.block.as_deref().unwrap_or("64")),
    ) else {
        eprintln!("error: --grid and --block take X[,Y[,Z]] with numbers of at least 1");
        return 2;
    };
    if args.buffer_size.is_some_and(|b| b == 0 || b > 1 << 28) {
        eprintln!("error: --buffer-size must be between 1 and 268435456");
        return 2;
    }
    let textures = match crate::texture::spec::parse_bindings(&args.texture) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: --texture: {e}");
            return 2;
        }
    };
    let surface = match args
        .surface
        .as_deref()
        .map(crate::verify::surfaces::parse_spec)
    {
        Some(None) => {
            eprintln!("error: --surface takes BYTES_PER_ROW[,ROWS[,SLICES[,LAYERS]]][:FORMAT], each at least 1, at most 268435456 bytes in all; FORMAT u8|u16|u32|s8|s16|s32|f16|f32|unorm8|unorm16|snorm8|snorm16, then x2 or x4 for 2 or 4 channels");
            return 2;
        }
        Some(Some(d)) => Some(d),
        None => None,
    };
    if args.summary {
        return summary(args, grid, block, &textures);
    }
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: error: cannot read file: {e}", args.file.display());
            return 2;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut opts = VerifyOptions {
        seed: args.seed,
        runs: args.runs,
        grid,
        block,
        buffer_size: args.buffer_size,
        surface: surface.map(|(d, _)| d),
        surface_format: surface.map_or(crate::surface::SurfFormat::RAW, |(_, f)| f),
        compile: Options {
            file_name: args.file.display().to_string(),
            debug_inject: args
                .debug_wrong_lea_scale
                .then_some(crate::driver::InjectBug::WrongLeaScale),
            unroll_runtime: args.unroll_runtime,
            ..Options::default()
        },
        ptxas_cubin: None,
        only_ptxas: false,
        shape_block: args.block.is_none(),
        check_slice: args.check_slice,
        sizes: crate::verify::Sizes::Small,
        textures,
        profile: false,
        indexed_locals_in_memory: false,
    };
    if args.against_ptxas {
        let Some(oracle) = crate::oracle::Oracle::find() else {
            eprintln!(
                "error: --against-ptxas needs ptxas (set LEAFOLD_ORACLE to its bin directory)"
            );
            return 2;
        };
        // ptxas refuses a `.target` newer than its `-arch`; `compile` warns and compiles.
        match oracle.ptxas(&crate::oracle::retarget(&text, "sm_50"), "sm_50", &[]) {
            Ok(c) => opts.ptxas_cubin = Some(c),
            Err(e) => {
                eprintln!("error: ptxas rejects {}: {e}", args.file.display());
                return 2;
            }
        }
    }
    if args.explain_inputs {
        match crate::verify::explain_inputs(&text, args.kernel.as_deref(), &opts) {
            Ok(plans) => {
                let launches =
                    crate::verify::explain_launches(&text, args.kernel.as_deref(), &opts)
                        .unwrap_or_default();
                let mut out = String::new();
                for (name, plan) in plans {
                    out.push_str(&format!("{name}: inputs\n{plan}"));
                    if let Some((_, line)) = launches.iter().find(|(k, _)| *k == name) {
                        out.push_str(&format!("{name}: launch: {line}\n"));
                    }
                }
                super::print_out(&out);
            }
            Err(d) => {
                eprint!("{}", render_all(&d.0));
                return 2;
            }
        }
    }
    let verdicts = match verify_file(&text, args.kernel.as_deref(), &opts) {
        Ok(v) => v,
        Err(d) => {
            eprint!("{}", render_all(&d.0));
            return 2;
        }
    };
    let mut code = 0;
    for v in &verdicts {
        super::print_out(&format!("{v}\n"));
        code = match (code, v.exit_code()) {
            (1, _) | (_, 1) => 1,
            (a, b) => a.max(b),
        };
    }
    code
}

/// `--summary`: coverage per file and in total (see [`crate::verify::Coverage`]).
fn summary(
    args: &Args,
    grid: [u32; 3],
    block: [u32; 3],
    textures: &[(String, crate::texture::TextureDesc)],
) -> u8 {
    use crate::verify::Coverage;
    use rayon::prelude::*;
    let mut files = Vec::new();
    if args.file.is_dir() {
        if let Err(e) = super::batch::find_ptx(&args.file, &mut files) {
            eprintln!("{}: error: {e}", args.file.display());
            return 2;
        }
        files.sort();
    } else {
        files.push(args.file.clone());
    }
    let oracle = if args.against_ptxas {
        match crate::oracle::Oracle::find() {
            Some(o) => Some(o),
            None => {
                eprintln!(
                    "error: --against-ptxas needs ptxas (set LEAFOLD_ORACLE to its bin directory)"
                );
                return 2;
            }
        }
    } else {
        None
    };
    let per_file: Vec<(String, Coverage)> = files
        .par_iter()
        .map(|path| {
            let name = path.display().to_string();
            let mut c = Coverage::default();
            let Ok(bytes) = std::fs::read(path) else {
                c.add_uncompiled();
                return (name, c);
            };
            let text = String::from_utf8_lossy(&bytes);
            let opts = VerifyOptions {
                seed: args.seed,
                runs: args.runs,
                grid,
                block,
                buffer_size: args.buffer_size,
                surface: args
                    .surface
                    .as_deref()
                    .and_then(crate::verify::surfaces::parse_spec)
                    .map(|(d, _)| d),
                surface_format: args
                    .surface
                    .as_deref()
                    .and_then(crate::verify::surfaces::parse_spec)
                    .map_or(crate::surface::SurfFormat::RAW, |(_, f)| f),
                compile: Options {
                    file_name: name.clone(),
                    unroll_runtime: args.unroll_runtime,
                    ..Options::default()
                },
                ptxas_cubin: oracle
                    .as_ref()
                    .and_then(|o| o.ptxas(&text, "sm_50", &[]).ok()),
                shape_block: args.block.is_none(),
                check_slice: args.check_slice,
                textures: textures.to_vec(),
                ..VerifyOptions::default()
            };
            match verify_file(&text, None, &opts) {
                Ok(vs) => vs.iter().for_each(|v| c.add(v)),
                Err(_) => c.add_uncompiled(),
            }
            (name, c)
        })
        .collect();
    let mut total = Coverage::default();
    let mut out = String::new();
    for (name, c) in &per_file {
        out.push_str(&format!("{name}: {c}\n"));
        total.merge(c);
    }
    out.push_str(&format!("TOTAL over {} files: {total}\n", per_file.len()));
    super::print_out(&out);
    u8::from(total.mismatch > 0)
}
