//! `leafold compare FILE.ptx... [--json] [--svg FILE] [--profile N] [--maxrregcount N]`: leafold
//! against NVIDIA ptxas 11.8 `-O3`, kernel by kernel.
//!
//! In: PTX files (directories are searched for `*.ptx` as in batch mode) and the oracle
//! (`leafold::oracle::Oracle::find`: `$LEAFOLD_ORACLE`, `~/.cache/leafold/oracle/bin` or
//! `PATH`); without ptxas the command fails with a message saying how to install it.
//! Out: a table (or `--json`) with, per kernel both compilers compiled: instructions,
//! address-arithmetic instructions (LEA, ISCADD, IADD*, SHL/SHR/SHF, XMAD, MOV; see
//! [`crate::lower::stats`]), the address slice (arithmetic instructions whose results
//! reach a memory access's address, found by dataflow: [`crate::sm50::slice`]; the same
//! goal read exactly rather than by opcode), LEAs, the sum of the control words' stall counts, the static
//! issue cycles of the cost model ([`crate::sm50::sched::cost`]: stalls plus modelled
//! scoreboard waits, one pass over the code in layout order, the same model on both cubins),
//! registers, shared and local (stack frame) bytes, the spill bytes of the `-v` report and the
//! local loads and stores (`LDL`/`STL`) in the code; per file the compile times; a totals row
//! with the per-kernel median of the cycle ratio (issue 6's figure); and optionally an SVG
//! chart.
//!
//! Both sides are measured the same way: instruction counts come from decoding each cubin's
//! `.text` (NOP padding dropped), registers from the cubin, shared/local bytes from the `-v`
//! report. leafold's time is the in-process `compile` call; ptxas's is the wall time of its
//! process (what a build pays), so the ratio is what swapping one for the other saves.
//! Files one side cannot compile are listed as skipped, with the first line of the reason.
//!
//! `--maxrregcount N` compiles both sides under one register budget (leafold's
//! `compile --maxrregcount N`, ptxas's `-maxrregcount N`): issue 23's measure of spilling,
//! where the columns to read are local bytes, spill bytes and the `LDL`/`STL` counts.
//!
//! Each kernel is also classified as *address-only* ([`address_only`]) when its PTX uses
//! nothing but issue 4's address subset (point 2 of the issue): `ld`/`st` in any space (any
//! data type, scalar or vector), `mov` of integer values (registers, immediates, special
//! registers, variable addresses), integer `add`/`sub` (with `addc`/`subc`, the carry
//! chains of point 3), `mul.lo/hi/wide`, `mad.lo/wide`, `shl`/`shr`/`and`/`or`/`xor`/`not`/
//! `neg`/`min`/`max`, `cvt` between integer types without rounding or saturation,
//! `cvta`/`cvta.to`, and `ret`/`exit`. The issue lists no comparison and no branch, so
//! `setp`, `bra`, `selp`, guards (`@p`) and therefore loops take a kernel out of the subset,
//! as do calls, barriers, atomics and any float arithmetic. The table marks such kernels
//! with `*` and a second summary line totals them (`address_only` in `--json`): issue 4's
//! figure "over the address-only kernels of the corpus".

mod render;
use super::stats::json_str;
use crate::cubin;
use crate::driver::{compile, info_log, Arch, Options};
use crate::lower::stats::{is_address_arith, is_lea};
use crate::lower::Fold;
use crate::oracle::Oracle;
use crate::ptx::ast::{self, Modifier, Statement, TypeKind};
use crate::sim::{Profile, Timing};
use crate::sm50::sched::check::decode_text;
use crate::sm50::Form;
use crate::verify::{verify_file, Outcome, VerifyOptions};
pub use render::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// PTX files or directories (searched recursively for *.ptx).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write a chart (per-kernel ratios, sorted, and the totals) as SVG.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Target: sm_50, sm_52 or sm_53.
    #[arg(long = "arch", visible_alias = "gpu-name", default_value = "sm_50")]
    pub arch: String,
    /// leafold's folding strategy (none, lea, block, full).
    #[arg(long, default_value = "full")]
    pub fold: String,
    /// Compile leafold's side with --plg-per-address (a window test per generic final
    /// address instead of ptxas's one per base).
    #[arg(long = "plg-per-address", conflicts_with = "assume_inbounds")]
    pub plg_per_address: bool,
    /// Accepted alias of the default (one window test per base, as ptxas).
    #[arg(long)]
    pub assume_inbounds: bool,
    /// Also print, per kernel and side, the N instructions of the dynamic run that cost the
    /// most issue cycles (scoreboard waits and stalls; `sim::run_profiled`), to stderr.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub profile: usize,
    /// Compile leafold's side with runtime-trip loops unrolled by four
    /// (`compile --unroll-runtime`).
    #[arg(long = "unroll-runtime")]
    pub unroll_runtime: bool,
    /// Compile both sides under this register budget (leafold's `--maxrregcount`, ptxas's
    /// `-maxrregcount`), to compare their spilling.
    #[arg(long = "maxrregcount", value_name = "N")]
    pub maxrregcount: Option<u32>,
}

/// One compiler's figures for one kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Side {
    pub instructions: u32,
    pub address_arith: u32,
    /// Arithmetic instructions whose results reach a memory address
    /// ([`crate::sm50::slice::address_slice_arith`]).
    pub address_slice: u32,
    pub lea: u32,
    pub stalls: u32,
    /// Static issue cycles ([`crate::sm50::sched::cost::cycles`]).
    pub cycles: u64,
    pub registers: u32,
    pub shared: u64,
    pub local: u32,
    /// Bytes of spill stores and spill loads (the `-v` report's figures).
    pub spill_stores: u32,
    pub spill_loads: u32,
    /// Local-memory store and load instructions (`STL`, `LDL`) in the code: spill code and
    /// the kernel's own `.local` accesses.
    pub stl: u32,
    pub ldl: u32,
    /// Theoretical resident warps per SM ([`crate::occupancy`]).
    pub warps: u32,
    /// Warp-instructions executed on the dynamic launch (0 when it did not run).
    pub dyn_insts: u64,
    /// Issue cycles of that run (`sim::Timing`; 0 when it did not run).
    pub dyn_cycles: u64,
    /// Instructions reading two source registers from one bank
    /// ([`crate::sm50::banks::count_conflicts`]).
    pub bank_conflicts: u32,
}

impl Side {
    fn add(&mut self, o: &Side) {
        self.instructions += o.instructions;
        self.address_arith += o.address_arith;
        self.address_slice += o.address_slice;
        self.lea += o.lea;
        self.stalls += o.stalls;
        self.cycles += o.cycles;
        self.registers += o.registers;
        self.shared += o.shared;
        self.local += o.local;
        self.spill_stores += o.spill_stores;
        self.spill_loads += o.spill_loads;
        self.stl += o.stl;
        self.ldl += o.ldl;
        self.warps += o.warps;
        self.dyn_insts += o.dyn_insts;
        self.dyn_cycles += o.dyn_cycles;
        self.bank_conflicts += o.bank_conflicts;
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub file: String,
    pub kernel: String,
    /// Whether the kernel's PTX stays inside issue 4's address subset ([`address_only`]).
    pub address_only: bool,
    pub leafold: Side,
    pub ptxas: Side,
    /// Why the dynamic columns are empty (the launch could not run, or a side's run did not
    /// match the reference); `None` when both sides ran it.
    pub not_run: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    /// Per compared file: (file, leafold ms, ptxas ms).
    pub times: Vec<(String, f64, f64)>,
    /// (file, why).
    pub skipped: Vec<(String, String)>,
    /// How many instructions per kernel and side [`Report::profiles`] lists (0: none).
    pub profile_top: usize,
    /// Per kernel run dynamically, its costliest instructions ([`profile_text`]).
    pub profiles: Vec<String>,
}

impl Report {
    pub fn totals(&self) -> (Side, Side) {
        let (mut l, mut p) = (Side::default(), Side::default());
        for r in &self.rows {
            l.add(&r.leafold);
            p.add(&r.ptxas);
        }
        (l, p)
    }

    /// Totals over the rows both sides ran dynamically: (kernels, leafold, ptxas).
    pub fn dynamic_totals(&self) -> (usize, Side, Side) {
        let (mut n, mut l, mut p) = (0, Side::default(), Side::default());
        for r in self.rows.iter().filter(|r| r.not_run.is_none()) {
            n += 1;
            l.add(&r.leafold);
            p.add(&r.ptxas);
        }
        (n, l, p)
    }

    /// Totals over the address-only rows: (kernels, leafold, ptxas).
    pub fn address_only_totals(&self) -> (usize, Side, Side) {
        let (mut n, mut l, mut p) = (0, Side::default(), Side::default());
        for r in self.rows.iter().filter(|r| r.address_only) {
            n += 1;
            l.add(&r.leafold);
            p.add(&r.ptxas);
        }
        (n, l, p)
    }

    /// The median over kernels of leafold's static issue cycles / ptxas's (kernels where
    /// ptxas's cost is 0 left out); `None` without such kernels.
    pub fn median_cycle_ratio(&self) -> Option<f64> {
        let mut v: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| r.ptxas.cycles > 0)
            .map(|r| r.leafold.cycles as f64 / r.ptxas.cycles as f64)
            .collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    }

    /// The median over the kernels both sides ran of leafold's dynamic issue cycles /
    /// ptxas's.
    pub fn median_dynamic_ratio(&self) -> Option<f64> {
        let mut v: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| r.not_run.is_none() && r.ptxas.dyn_cycles > 0)
            .map(|r| r.leafold.dyn_cycles as f64 / r.ptxas.dyn_cycles as f64)
            .collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    }

    /// Kernels whose theoretical occupancy under leafold's code is below ptxas's.
    pub fn lower_occupancy(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.leafold.warps < r.ptxas.warps)
            .count()
    }

    pub fn time_totals(&self) -> (f64, f64) {
        self.times
            .iter()
            .fold((0.0, 0.0), |(a, b), t| (a + t.1, b + t.2))
    }
}

pub fn run(args: &Args) -> u8 {
    let Some(oracle) = Oracle::find() else {
        eprintln!(
            "error: leafold compare needs NVIDIA ptxas 11.8 (with nvdisasm and cuobjdump): run \
             scripts/install-oracle.sh and export LEAFOLD_ORACLE=~/.cache/leafold/oracle/bin"
        );
        return 2;
    };
    let Some(arch) = Arch::parse(&args.arch) else {
        eprintln!(
            "error: unknown --arch '{}' (sm_50, sm_52 or sm_53)",
            args.arch
        );
        return 2;
    };
    let Some(fold) = Fold::parse(&args.fold) else {
        eprintln!(
            "error: unknown --fold '{}' (none, lea, block or full)",
            args.fold
        );
        return 2;
    };
    let jobs = match super::batch::jobs(&args.files, None) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if let Some(n) = args.maxrregcount {
        if !(1..=255).contains(&n) {
            eprintln!("error: --maxrregcount {n} is outside 1..=255");
            return 2;
        }
    }
    let opts = Options {
        arch,
        fold,
        max_regs: args.maxrregcount,
        plg_per_address: args.plg_per_address,
        unroll_runtime: args.unroll_runtime,
        // The compile time column is `leafold compile`'s: no SASS listing (it is not read).
        sass_listing: false,
        ..Options::default()
    };
    let mut report = Report {
        profile_top: args.profile,
        ..Report::default()
    };
    for job in &jobs {
        compare_file(&oracle, &job.input, &opts, &mut report);
    }
    for p in &report.profiles {
        eprint!("{p}");
    }
    if args.json {
        super::print_out(&to_json(&report));
    } else {
        super::print_out(&to_table(&report));
    }
    if let Some(path) = &args.svg {
        if let Err(e) = std::fs::write(path, to_svg(&report)) {
            eprintln!("{}: error: cannot write file: {e}", path.display());
            return 2;
        }
    }
    0
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .to_string()
}

/// Compile `path` with both compilers and append its rows (or why it was skipped).
pub fn compare_file(oracle: &Oracle, path: &Path, opts: &Options, report: &mut Report) {
    let file = path.display().to_string();
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            report.skipped.push((file, format!("cannot read: {e}")));
            return;
        }
    };
    let opts = Options {
        file_name: file.clone(),
        ..opts.clone()
    };
    let t = Instant::now();
    let ours = compile(&text, &opts);
    let ours_ms = t.elapsed().as_secs_f64() * 1e3;
    let ours = match ours {
        Ok(o) => o,
        Err(d) => {
            let msg = d.0.first().map_or(String::new(), |d| d.message.clone());
            report.skipped.push((file, format!("leafold: {msg}")));
            return;
        }
    };
    let (theirs, theirs_ms, log) =
        match run_ptxas(oracle, path, &text, &opts.arch.name(), opts.max_regs) {
            Ok(r) => r,
            Err(e) => {
                report
                    .skipped
                    .push((file, format!("ptxas: {}", first_line(&e))));
                return;
            }
        };
    // Only the per-kernel lines are read back, so the module gmem figure does not matter.
    let our_sides = match sides(
        &ours.cubin,
        &info_log(&ours.kernels, opts.arch, 0),
        opts.arch,
    ) {
        Ok(s) => s,
        Err(e) => {
            report.skipped.push((file, format!("leafold cubin: {e}")));
            return;
        }
    };
    let their_sides = match sides(&theirs, &log, opts.arch) {
        Ok(s) => s,
        Err(e) => {
            report.skipped.push((file, format!("ptxas cubin: {e}")));
            return;
        }
    };
    let subset = address_only_kernels(&file, &text);
    let dynamic = dynamic_runs(&text, &opts, &theirs, report.profile_top > 0);
    let mut any = false;
    for (name, l) in &our_sides {
        if let Some((_, p)) = their_sides.iter().find(|(n, _)| n == name) {
            any = true;
            let (mut l, mut p) = (*l, *p);
            let not_run = match dynamic.iter().find(|(n, _)| n == name) {
                Some((_, Ok((ours_t, theirs_t, profiles)))) => {
                    if let [Some(a), Some(b)] = profiles {
                        let codes = [&ours.cubin[..], &theirs[..]];
                        let mut text = format!("== {file} {name}\n");
                        for (side, (prof, cubin)) in ["leafold", "ptxas"]
                            .iter()
                            .zip([a, b].into_iter().zip(codes))
                        {
                            text += &profile_text(side, name, cubin, prof, report.profile_top);
                        }
                        report.profiles.push(text);
                    }
                    (l.dyn_insts, l.dyn_cycles) = (ours_t.warp_insts, ours_t.issue_cycles);
                    (p.dyn_insts, p.dyn_cycles) = (theirs_t.warp_insts, theirs_t.issue_cycles);
                    None
                }
                Some((_, Err(why))) => Some(why.clone()),
                None => Some("not run".to_string()),
            };
            report.rows.push(Row {
                file: file.clone(),
                kernel: name.clone(),
                address_only: subset.iter().any(|k| k == name),
                leafold: l,
                ptxas: p,
                not_run,
            });
        }
    }
    if any {
        report.times.push((file, ours_ms, theirs_ms));
    } else {
        report
            .skipped
            .push((file, "no kernel compiled by both".to_string()));
    }
}

/// Per kernel: both cubins run in the simulator on the launch `leafold verify` makes (its
/// first seed), with the cost of each run (`sim::run_timed`; with `profile`, also per instruction,
/// `sim::run_profiled`), or why not: the launch is
/// undefined or faults in the reference, a simulator cannot run an instruction, or a side's
/// result does not match the reference (then its figures would not describe the same work).
#[allow(clippy::type_complexity)]
fn dynamic_runs(
    text: &str,
    opts: &Options,
    ptxas_cubin: &[u8],
    profile: bool,
) -> Vec<(
    String,
    Result<(Timing, Timing, [Option<Profile>; 2]), String>,
)> {
    let vopts = VerifyOptions {
        runs: 1,
        profile,
        compile: opts.clone(),
        ptxas_cubin: Some(ptxas_cubin.to_vec()),
        ..VerifyOptions::default()
    };
    let Ok(verdicts) = verify_file(text, None, &vopts) else {
        return Vec::new();
    };
    verdicts
        .into_iter()
        .map(|v| {
            let r = match (&v.outcome, v.timing) {
                (Outcome::Match { .. }, [Some(l), Some(p)]) => Ok((l, p, v.profile)),
                (Outcome::Match { .. }, _) => Err("a side trapped".to_string()),
                (Outcome::Mismatch(m), _) => Err(format!("{} code does not match", m.side)),
                (Outcome::CannotRun(why), _) => Err(why.clone()),
            };
            (v.kernel, r)
        })
        .collect()
}

/// The `top` instructions of `kernel` in `cubin` that cost the most cycles in `profile`
/// (waits plus stalls), one line each: address, times issued, cycles waited before it,
/// cycles of its stalls, and the instruction as nvdisasm prints it; with the side's totals
/// first. For finding where a schedule loses cycles to the other compiler's.
pub fn profile_text(
    side: &str,
    kernel: &str,
    cubin: &[u8],
    profile: &Profile,
    top: usize,
) -> String {
    let code = cubin::read(cubin)
        .ok()
        .and_then(|c| c.kernels.into_iter().find(|k| k.name == kernel))
        .map(|k| k.code)
        .unwrap_or_default();
    let insts = decode_text(&code).map(|d| d.0).unwrap_or_default();
    let (mut waited, mut stalled, mut count) = (0, 0, 0);
    for c in profile.values() {
        (waited, stalled, count) = (waited + c.waited, stalled + c.stalled, count + c.count);
    }
    let mut out =
        format!("-- {side}: {count} warp-insts, {waited} cycles waited, {stalled} stalled\n");
    let mut rows: Vec<_> = profile.iter().collect();
    rows.sort_by_key(|(a, c)| (std::cmp::Reverse(c.waited + c.stalled), **a));
    for (addr, c) in rows.into_iter().take(top) {
        let text = crate::sm50::ctrl::inst_index(*addr)
            .and_then(|n| insts.get(n))
            .map(|i| crate::sm50::print(i, *addr, 0))
            .unwrap_or_default();
        writeln!(
            out,
            "  /*{addr:04x}*/ x{:<7} wait {:>8} stall {:>8}  {}",
            c.count,
            c.waited,
            c.stalled,
            text.trim()
        )
        .ok();
    }
    out
}

/// The names of the kernels (`.entry`) of `text` that are address-only (empty when the file
/// does not parse, which cannot happen for a file leafold compiled).
fn address_only_kernels(file: &str, text: &str) -> Vec<String> {
    let src = crate::error::SourceFile::new(file, text);
    let Ok((module, _)) = crate::ptx::parse_and_check(&src) else {
        return Vec::new();
    };
    module
        .functions()
        .filter(|f| f.kind == ast::FuncKind::Entry && address_only(f))
        .map(|f| f.name.text.to_string())
        .collect()
}

/// Whether a kernel's body uses only issue 4's address subset (the rule is in the module
/// essay). A declaration without a body is not a kernel and is not address-only.
pub fn address_only(f: &ast::Function) -> bool {
    fn block(b: &ast::Block) -> bool {
        b.stmts.iter().all(|s| match s {
            Statement::Instr(i) => instruction(i),
            Statement::Block(b) => block(b),
            Statement::Label(_) | Statement::Var(_) | Statement::Loc(_) | Statement::Pragma(..) => {
                true
            }
            Statement::Targets { .. } | Statement::Prototype { .. } => false,
        })
    }
    fn integer_types(i: &ast::Instruction) -> bool {
        i.mods.iter().all(|m| match m {
            Modifier::Type(t) => matches!(
                t.kind(),
                TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed
            ),
            _ => true,
        })
    }
    fn flags_within(i: &ast::Instruction, allowed: &[&str]) -> bool {
        i.mods.iter().all(|m| match m {
            Modifier::Flag(f) => allowed.contains(f),
            Modifier::Type(_) => true,
            _ => false,
        })
    }
    fn instruction(i: &ast::Instruction) -> bool {
        if i.guard.is_some() {
            return false;
        }
        match i.opcode.name() {
            "ld" | "st" | "ret" | "exit" | "cvta" => true,
            "mov" => integer_types(i),
            "add" | "sub" | "addc" | "subc" => integer_types(i) && flags_within(i, &["cc", "sat"]),
            "shl" | "shr" | "and" | "or" | "xor" | "not" | "neg" | "min" | "max" => {
                integer_types(i) && flags_within(i, &[])
            }
            "mul" => integer_types(i) && flags_within(i, &["lo", "hi", "wide"]),
            "mad" => integer_types(i) && flags_within(i, &["lo", "wide"]),
            "cvt" => integer_types(i) && flags_within(i, &[]),
            _ => false,
        }
    }
    f.body.as_ref().is_some_and(block)
}

/// `ptxas -arch=.. -O3 -v [-maxrregcount N] FILE -o tmp`: (cubin, wall ms, the -v log).
/// `text` is FILE's
/// contents: where its `.target` is newer than `arch` (which `compile` accepts with a
/// warning, and ptxas refuses), ptxas reads a retargeted copy ([`crate::oracle::retarget`]).
fn run_ptxas(
    oracle: &Oracle,
    path: &Path,
    text: &str,
    arch: &str,
    max_regs: Option<u32>,
) -> Result<(Vec<u8>, f64, String), String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let stem = std::env::temp_dir().join(format!(
        "leafold-compare-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let out = stem.with_extension("cubin");
    let retargeted = match crate::oracle::retarget(text, arch) {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(t) => {
            let p = stem.with_extension("ptx");
            std::fs::write(&p, t).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            Some(p)
        }
    };
    let t = Instant::now();
    let o = std::process::Command::new(&oracle.ptxas)
        .arg(format!("-arch={arch}"))
        .args(["-O3", "-v"])
        .args(max_regs.map(|n| format!("-maxrregcount={n}")))
        .arg(retargeted.as_deref().unwrap_or(path))
        .arg("-o")
        .arg(&out)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", oracle.ptxas.display()));
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if let Some(p) = &retargeted {
        let _ = std::fs::remove_file(p);
    }
    let o = o?;
    let log = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
    if !o.status.success() {
        let _ = std::fs::remove_file(&out);
        return Err(log);
    }
    let bytes = std::fs::read(&out).map_err(|e| e.to_string());
    let _ = std::fs::remove_file(&out);
    Ok((bytes?, ms, log))
}

/// Per kernel: figures from the cubin's code and the `-v` log's stack frame / smem.
fn sides(cubin_bytes: &[u8], log: &str, arch: Arch) -> Result<Vec<(String, Side)>, String> {
    let c = cubin::read(cubin_bytes).map_err(|e| e.to_string())?;
    let mut v = Vec::new();
    for k in &c.kernels {
        let (insts, ctrls, targets) =
            decode_text(&k.code).map_err(|e| format!("{}: {e}", k.name))?;
        let mut s = Side {
            registers: k.regcount,
            warps: crate::occupancy::of_kernel(arch, k).warps,
            address_slice: crate::sm50::slice::address_slice_arith(&insts, &targets),
            ..Side::default()
        };
        s.cycles = crate::sm50::sched::cost::cycles(&insts, &ctrls);
        s.bank_conflicts = crate::sm50::banks::count_conflicts(&insts) as u32;
        for (i, c) in insts.iter().zip(&ctrls) {
            s.instructions += 1;
            s.address_arith += is_address_arith(i.form) as u32;
            s.lea += is_lea(i.form) as u32;
            s.stalls += u32::from(c.stall);
            s.ldl += u32::from(i.form == Form::LDL);
            s.stl += u32::from(i.form == Form::STL);
        }
        let fig = parse_v(log, &k.name);
        s.local = fig.frame;
        s.shared = fig.smem;
        s.spill_stores = fig.spill_stores;
        s.spill_loads = fig.spill_loads;
        v.push((k.name.clone(), s));
    }
    Ok(v)
}

/// A kernel's figures in a ptxas `-v` log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VFigures {
    /// Stack frame bytes (or `lmem` where the ABI is off).
    pub frame: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub smem: u64,
}

/// The figures of `kernel` in a ptxas `-v` log: the lines after
/// `Compiling entry function 'kernel'` up to its `Used ...` line (the `Function properties`
/// line between them is missing when ptxas disables the ABI; its `Used` line then gives the
/// local memory as `N bytes lmem`, module-scope `.local` variables included).
pub fn parse_v(log: &str, kernel: &str) -> VFigures {
    let mut lines = log.lines();
    let header = format!("Compiling entry function '{kernel}' for");
    let mut v = VFigures::default();
    while let Some(l) = lines.next() {
        if !l.contains(&header) {
            continue;
        }
        for l in lines.by_ref() {
            if let Some(n) = number_before(l, " bytes stack frame") {
                v.frame = n as u32;
                v.spill_stores = number_before(l, " bytes spill stores").unwrap_or(0) as u32;
                v.spill_loads = number_before(l, " bytes spill loads").unwrap_or(0) as u32;
            }
            if l.contains("Used ") {
                v.smem = number_before(l, " bytes smem").unwrap_or(0);
                // Without the ABI (a module-scope `.local`), ptxas gives no stack frame
                // line but the local memory on this one.
                if let Some(n) = number_before(l, " bytes lmem") {
                    v.frame = v.frame.max(n as u32);
                }
                break;
            }
        }
        break;
    }
    v
}

/// The number just before `what` in `line` (`"    24 bytes stack frame, ..."` → 24).
fn number_before(line: &str, what: &str) -> Option<u64> {
    let at = line.find(what)?;
    line[..at].trim().rsplit([' ', ',']).next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ptxas_v_lines() {
        let log = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'a' for 'sm_50'\n\
            ptxas info    : Function properties for a\n    \
            24 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n\
            ptxas info    : Used 8 registers, 64 bytes smem, 336 bytes cmem[0]\n\
            ptxas info    : Compiling entry function 'b' for 'sm_50'\n\
            ptxas info    : Function properties for b\n    \
            0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 4 registers, 328 bytes cmem[0]\n\
            ptxas warning : Use of module scoped .local or .reg variable '%ra<' found, disabling ABI\n\
            ptxas info    : Compiling entry function 'noabi' for 'sm_50'\n\
            ptxas info    : Used 26 registers, 2048 bytes smem, 340 bytes cmem[0]\n\
            ptxas info    : Compiling entry function 'lmem' for 'sm_50'\n\
            ptxas info    : Used 29 registers, 320 bytes cmem[0], 172 bytes cmem[2], 2912 bytes lmem\n";
        let fs = |k| {
            let v = parse_v(log, k);
            (v.frame, v.smem, v.spill_stores, v.spill_loads)
        };
        assert_eq!(fs("noabi"), (0, 2048, 0, 0));
        assert_eq!(fs("a"), (24, 64, 12, 8));
        assert_eq!(fs("b"), (0, 0, 0, 0));
        assert_eq!(fs("c"), (0, 0, 0, 0));
        assert_eq!(fs("lmem"), (2912, 0, 0, 0));
    }

    #[test]
    fn totals_and_outputs() {
        let side = |i| Side {
            instructions: i,
            address_arith: i / 2,
            ..Side::default()
        };
        let r = Report {
            rows: vec![
                Row {
                    file: "f".into(),
                    kernel: "k<1>".into(),
                    address_only: true,
                    leafold: side(10),
                    ptxas: side(12),
                    not_run: None,
                },
                Row {
                    file: "f".into(),
                    kernel: "m".into(),
                    address_only: false,
                    leafold: side(4),
                    ptxas: side(6),
                    not_run: Some("the simulator cannot run it".into()),
                },
            ],
            times: vec![("f".into(), 1.0, 50.0)],
            skipped: vec![("g".into(), "ptxas: x".into())],
            profile_top: 0,
            profiles: vec![],
        };
        let (l, p) = r.totals();
        assert_eq!((l.instructions, p.instructions), (14, 18));
        // Only the first kernel ran dynamically; the second is listed with its reason.
        let (n, dl, _) = r.dynamic_totals();
        assert_eq!((n, dl.instructions), (1, 10));
        let t = to_table(&r);
        assert!(
            t.contains("dynamic (simulated on verify's launch, 1 of 2 kernels run)")
                && t.contains("not run dynamically m: the simulator cannot run it"),
            "{t}"
        );
        assert!(
            to_json(&r).contains("\"not_run\": \"the simulator cannot run it\""),
            "json"
        );
        assert!(
            t.contains("TOTAL") && t.contains("14/18") && t.contains("= 50.00"),
            "{t}"
        );
        assert!(
            t.contains("address-only kernels (1): instructions leafold/ptxas = 0.83"),
            "{t}"
        );
        let j = to_json(&r);
        assert!(j.contains("\"kernel\": \"k<1>\"") && j.contains("\"ptxas_ms\": 50.000"));
        assert!(
            j.contains("\"address_only\": {\"kernels\": 1, \"leafold\": {\"instructions\": 10,"),
            "{j}"
        );
        let svg = to_svg(&r);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // Two kernels with ratios 10/12 and 4/6 (instructions) and 5/6 and 2/3 (address
        // arithmetic): the medians and the totals (14/18) are written out.
        assert!(svg.contains("instructions (median 0.75)"), "{svg}");
        assert!(svg.contains("address arithmetic (median 0.75)"), "{svg}");
        assert!(svg.contains(">0.78</text>"), "{svg}");
        assert_eq!(
            svg.matches("<circle").count(),
            2 + 4,
            "legend + one dot per ratio"
        );
    }

    fn classify(body: &str) -> bool {
        let text = format!(
            ".version 7.0\n.target sm_50\n.address_size 64\n\
             .visible .entry k(.param .u64 p, .param .u32 n)\n{{\n\
             .reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n.reg .f32 %f<4>;\n.reg .pred %p<2>;\n\
             {body}\nret;\n}}\n"
        );
        let src = crate::error::SourceFile::new("t.ptx", text);
        let (m, _) = crate::ptx::parse_and_check(&src).expect("test PTX parses");
        let f = m.functions().next().unwrap();
        address_only(f)
    }

    #[test]
    fn address_only_follows_the_issue_subset() {
        // Inside: parameters, special registers, integer arithmetic, cvt, cvta, loads and
        // stores of any data type.
        assert!(classify(
            "ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\n\
             mad.lo.s32 %r3, %r1, %r2, 4;\nmul.wide.s32 %rd2, %r3, 4;\n\
             cvta.to.global.u64 %rd3, %rd1;\nadd.s64 %rd4, %rd3, %rd2;\n\
             ld.global.f32 %f1, [%rd4+16];\nst.global.v2.f32 [%rd4], {%f1, %f1};\n\
             cvt.u64.u32 %rd5, %r2;\nshl.b64 %rd6, %rd5, 2;\nneg.s32 %r4, %r2;\n\
             min.u32 %r5, %r4, %r2;\nst.shared.u32 [%rd6], %r5;"
        ));
        // Outside: comparisons and branches (so loops), predication, float arithmetic,
        // float moves, saturating or rounding cvt, mul24, barriers.
        for extra in [
            "setp.lt.u32 %p1, %r1, 4;",
            "L: bra L;",
            "add.f32 %f1, %f1, %f1;",
            "mov.f32 %f1, 0f3F800000;",
            "cvt.rzi.s32.f32 %r1, %f1;",
            "cvt.sat.u8.u32 %r1, %r2;",
            "mul24.lo.u32 %r1, %r2, %r3;",
            "bar.sync 0;",
            "selp.u32 %r1, %r2, %r3, %p1;",
        ] {
            assert!(!classify(extra), "{extra}");
        }
        assert!(!classify("@%p1 st.global.u32 [%rd1], %r1;"));
        assert!(classify(
            "add.cc.u32 %r1, %r2, %r3;\naddc.u32 %r4, %r5, %r6;"
        ));
    }
}
