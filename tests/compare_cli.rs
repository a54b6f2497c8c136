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
    let cells: Vec<(u32, u32)> = row
        .split_whitespace()
        .skip(1)
        .map(|c| {
            let (a, b) = c.split_once('/').unwrap();
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(cells.len(), 7, "{row}");
    let (ours, theirs) = cells[0];
    assert!(
        (10..100).contains(&ours) && (10..100).contains(&theirs),
        "{row}"
    );
    assert!(cells[2].0 > 0 && cells[2].1 > 0, "both use LEA: {row}");
    assert!(table.contains("TOTAL") && table.contains("compile time: leafold"));
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("seed_lea"));

    let o = leafold()
        .args(["compare", "--json"])
        .arg(seed())
        .output()
        .unwrap();
    assert!(o.status.success());
    let json = String::from_utf8(o.stdout).unwrap();
    assert!(json.contains("\"kernel\": \"seed_lea\""), "{json}");
    assert!(
        json.contains(&format!("\"leafold\": {{\"instructions\": {ours},")),
        "{json}"
    );
    assert!(
        json.contains(&format!("\"ptxas\": {{\"instructions\": {theirs},")),
        "{json}"
    );
}
