//! `leafold compare`: a clear error without the oracle; with it, a row per kernel both
//! compilers compile, JSON with the same figures, and an SVG chart.

use leafold::oracle::Oracle;
use std::process::Command;

fn leafold() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leafold"))
}

fn seed() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed_lea.ptx")
}

#[test]
fn without_the_oracle_compare_says_how_to_get_it() {
    let empty = std::env::temp_dir().join(format!("leafold_compare_empty_{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = leafold()
        .arg("compare")
        .arg(seed())
        .env("LEAFOLD_ORACLE", &empty)
        .env("HOME", &empty)
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("needs NVIDIA ptxas") && err.contains("install-oracle"),
        "{err}"
    );
}

#[test]
fn compare_reports_both_compilers() {
    let Some(_) = Oracle::for_test("compare_reports_both_compilers") else {
        return;
    };
    let svg = std::env::temp_dir().join(format!("leafold_compare_{}.svg", std::process::id()));
    let o = leafold()
        .arg("compare")
        .arg(seed())
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    let row = table
        .lines()
        .find(|l| l.starts_with("seed_lea "))
        .unwrap_or_else(|| panic!("{table}"));
    // Each cell is leafold/ptxas; both compilers emit a few dozen instructions here.
    // The last cell is the subset marker: seed_lea uses only issue 4's address subset.
    assert!(row.ends_with(" addr"), "{row}");
    let cells: Vec<(u64, u64)> = row
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|c| {
            let (a, b) = c.split_once('/').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(cells.len(), 8, "{row}");
    // Static issue cycles (column 5) are at least the stall sum (column 4) on both sides.
    assert!(
        cells[4].0 >= cells[3].0 && cells[4].1 >= cells[3].1 && cells[4].1 > 0,
        "{row}"
    );
    assert!(
        table.contains("static issue cycles leafold/ptxas = "),
        "{table}"
    );
    // The spill columns (bytes of the -v report, LDL+STL): nothing spills without a budget.
    assert_eq!(row.split_whitespace().nth(10).unwrap(), "0/0", "{row}");
    assert_eq!(row.split_whitespace().nth(11).unwrap(), "0/0", "{row}");
    // The warps column (the 12th pair): each side's theoretical occupancy, from its own
    // registers (seed_lea is small: both reach all 64 warps of an SM).
    let warps = row.split_whitespace().nth(12).unwrap();
    assert_eq!(warps, "64/64", "{row}");
    assert!(
        table.contains("theoretical occupancy (resident warps per SM, the column warps): below ptxas's in 0 of 1 kernels"),
        "{table}"
    );
    // The dynamic columns: both cubins ran on verify's launch, with a cost on each side.
    assert!(
        table.contains("dynamic (simulated on verify's launch, 1 of 1 kernels run)"),
        "{table}"
    );
    let dyn_cycles = row.split_whitespace().nth(14).unwrap();
    let (a, b) = dyn_cycles.split_once('/').unwrap();
    assert!(
        a.parse::<u64>().unwrap() > 0 && b.parse::<u64>().unwrap() > 0,
        "{row}"
    );
    let (ours, theirs) = cells[0];
    assert!(
        (10..100).contains(&ours) && (10..100).contains(&theirs),
        "{row}"
    );
    assert!(cells[2].0 > 0 && cells[2].1 > 0, "both use LEA: {row}");
    assert!(table.contains("TOTAL") && table.contains("compile time: leafold"));
    assert!(
        table.contains("address-only kernels (1): instructions leafold/ptxas = "),
        "{table}"
    );
    let chart = std::fs::read_to_string(&svg).unwrap();
    // One kernel: its ratios are the medians, and the address-only totals are drawn.
    assert!(
        chart.starts_with("<svg") && chart.contains("over 1 kernels"),
        "{chart}"
    );
    assert!(chart.contains("instructions (median ") && chart.contains("1 address-only"));

    let o = leafold()
        .args(["compare", "--json"])
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success());
    let json = String::from_utf8(o.stdout).unwrap();
    assert!(
        json.contains("\"kernel\": \"seed_lea\", \"address_only\": true"),
        "{json}"
    );
    assert!(
        json.contains(&format!("\"leafold\": {{\"instructions\": {ours},")),
        "{json}"
    );
    assert!(
        json.contains(&format!("\"ptxas\": {{\"instructions\": {theirs},")),
        "{json}"
    );
}

/// The address-folding goal (issues 4 and 8) as a floor against regressions: over the corpus
/// kernels both compilers compile (plus the seed kernel), `--fold=full` spends at most the
/// measured share of ptxas 11.8's address-arithmetic instructions (LEA, ISCADD, IADD*, SHL/SHR,
/// XMAD, MOV) and of its instructions in total. The issues' goals are 0.75 and below 1.0;
/// the floors are what leafold reaches now (see README), so a change that spends more fails.
#[test]
fn address_arithmetic_against_ptxas_on_the_corpus() {
    let Some(_) = Oracle::for_test("address_arithmetic_against_ptxas_on_the_corpus") else {
        return;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = leafold()
        .arg("compare")
        .arg("--json")
        .arg(root.join("tests/data/corpus/ptx"))
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = String::from_utf8(o.stdout).unwrap();
    let kernels = json.matches("\"kernel\": ").count();
    let totals = &json[json.find("\"totals\"").expect("totals")..];
    let subset = &json[json
        .find("\"address_only\": {")
        .expect("address_only totals")..];
    let field_in = |part: &str, side: &str, name: &str| -> u64 {
        let s = &part[part.find(&format!("\"{side}\"")).unwrap()..];
        let s = &s[s.find(&format!("\"{name}\": ")).unwrap() + name.len() + 4..];
        s[..s.find([',', '}']).unwrap()].trim().parse().unwrap()
    };
    let field = |side: &str, name: &str| field_in(totals, side, name);
    let (la, pa) = (
        field("leafold", "address_arith"),
        field("ptxas", "address_arith"),
    );
    let (li, pi) = (
        field("leafold", "instructions"),
        field("ptxas", "instructions"),
    );
    let ratio = la as f64 / pa as f64;
    println!(
        "{kernels} kernels: address arithmetic {la}/{pa} = {ratio:.3}, instructions {li}/{pi}"
    );
    // Fewer kernels would make the figure meaningless (and easier).
    assert!(kernels >= 330, "only {kernels} kernels compared");
    assert!(
        ratio <= RATIO_FLOOR,
        "address arithmetic {la}/{pa} = {ratio:.3} > {RATIO_FLOOR}"
    );
    let iratio = li as f64 / pi as f64;
    assert!(
        iratio <= INSTRUCTION_FLOOR,
        "instructions {li}/{pi} = {iratio:.3} > {INSTRUCTION_FLOOR}"
    );
    // The same goal read exactly: arithmetic whose results reach a memory address
    // (`leafold::sm50::slice`), on both sides.
    let (ls, ps) = (
        field("leafold", "address_slice"),
        field("ptxas", "address_slice"),
    );
    let slice_ratio = ls as f64 / ps as f64;
    println!("address slice {ls}/{ps} = {slice_ratio:.3}");
    assert!(ls > 0 && ls <= li && ps <= pi, "slice {ls}/{ps}");
    assert!(
        slice_ratio <= SLICE_FLOOR,
        "address slice {ls}/{ps} = {slice_ratio:.3} > {SLICE_FLOOR}"
    );

    // Issue 4's own figure: the kernels that use only its address subset (see
    // `leafold::cli::compare::address_only`).
    let n = field_in(subset, "address_only", "kernels");
    let (sa, spa) = (
        field_in(subset, "leafold", "address_arith"),
        field_in(subset, "ptxas", "address_arith"),
    );
    let sratio = sa as f64 / spa as f64;
    println!("{n} address-only kernels: address arithmetic {sa}/{spa} = {sratio:.3}");
    assert!(n >= 15, "only {n} address-only kernels compared");
    assert!(
        sratio <= SUBSET_RATIO_FLOOR,
        "address-only kernels: address arithmetic {sa}/{spa} = {sratio:.3} > {SUBSET_RATIO_FLOOR}"
    );
}

/// Measured with `leafold compare tests/data/corpus/ptx examples/seed_lea.ptx` (see the test
/// above), rounded up to the next hundredth. 358 kernels: address arithmetic 32717/30322 =
/// 1.079, instructions 80935/78747 = 1.028. The 341 kernels measured before 64-bit register
/// shifts, generic atomics and `bar.red` were lowered give 27170/25983 = 1.046 and 0.998; the
/// files that compile since then raise both: MC-GPU's `track_particles` spends 3276
/// address-arithmetic instructions against ptxas's 2078 (constant-bank offsets beyond LDC's
/// signed 16 bits built as `IADD32I Rn, RZ, off` + `LDC c[0x3][Rn]`), and vm 4311 against
/// 3611 instructions. Since shared and generic float atomics are lowered, optix's
/// `__globfunc__Z5tracev` compiles whole too (359 kernels: 33614/30966 = 1.086, instructions
/// 84445/80985 = 1.043): alone it is 903/644 address arithmetic and 3528/2238 instructions,
/// because leafold keeps its 2912-byte `.local` arrays in local memory, where ptxas promotes
/// them to registers (0 bytes of stack). Since then: `ir::simplify` folds constants and
/// identities before lowering (and selection moves a `mov.b64 {lo, hi}` pair's words instead
/// of extending, shifting and ORing them): 33135/30966 = 1.070, instructions 83837 = 1.035;
/// float constants that no immediate holds are read from the literal pool in constant bank 2
/// (`c[0x2][off]`) instead of being built with MOV32I (pairs): alone 32239 = 1.041 and
/// 83070 = 1.026; if-conversion (`lower::ifconv`: short branch sides as predicated code
/// instead of `SSY`/`@P SYNC`/`SYNC` or `BRA`) brings the instructions below ptxas's and
/// leaves address arithmetic as it was. All three: 31760/30966 = 1.026, instructions
/// 77153/80985 = 0.953. `div.rn.f32`/`rcp.rn.f32` as ptxas's FCHK fast path plus one
/// slow-path subroutine per kernel (`lower::select::fdiv`; inline where the subroutine's
/// pinned registers make a kernel spill more): 30263/30966 = 0.977, instructions 72888 =
/// 0.900. With integer divisions sharing reciprocals and quotients and `ir::simplify`'s
/// value numbering, negation folding, `mulwide` for extended 64-bit products and boolean
/// selects as well: 28470/30966 = 0.919, instructions 70418 = 0.870.
const RATIO_FLOOR: f64 = 0.93;
const INSTRUCTION_FLOOR: f64 = 0.88;
/// The address slice (integer arithmetic whose results reach a load's, store's or atomic's
/// address, `leafold::sm50::slice`): 19707/25110 = 0.785 when it was added; 14305/21351 =
/// 0.670 since the walk follows the CRS token stack (each `SYNC`/`RET` goes back only where
/// its own `SSY`/`CAL` says) and same-guard writes (tests/verify_corpus.rs checks the slice
/// against traced runs of both compilers' code). The goal is 0.75.
const SLICE_FLOOR: f64 = 0.70;
/// The same over the 15 address-only kernels (211/157 = 1.344 before `ir::simplify`, 168/157
/// = 1.070 since; `mul.hi.u64 x, 2` alone went from 41 to 7), rounded up likewise.
const SUBSET_RATIO_FLOOR: f64 = 1.08;

/// `compare` on PTX whose `.target` is newer than sm_50 (and `.version` newer than ptxas
/// 11.8 reads): both compilers compile it (ptxas through the retargeted text), no skip.
#[test]
fn compare_accepts_newer_targets() {
    let Some(_) = Oracle::for_test("compare_accepts_newer_targets") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("leafold_compare_newer_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(seed()).unwrap();
    for (version, target) in [("7.0", "sm_61"), ("8.0", "sm_80")] {
        let file = dir.join(format!("seed_lea_{target}.ptx"));
        std::fs::write(
            &file,
            text.replace(".version 7.0", &format!(".version {version}"))
                .replace(".target sm_50", &format!(".target {target}")),
        )
        .unwrap();
        let o = leafold().arg("compare").arg(&file).output().unwrap();
        let out =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{target}: {out}");
        assert!(out.contains("; 0 files skipped"), "{target}: {out}");
        assert!(
            out.lines().any(|l| l.starts_with("seed_lea ")),
            "{target}: no row for the kernel: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
