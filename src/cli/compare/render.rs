//! How a [`Report`] is shown: the text table (one row per kernel, totals with per-kernel
//! medians), `--json` (every figure of both sides, for scripts) and `--svg` (a bar chart of the
//! per-kernel ratios).
//!
//! In: a finished [`Report`]. Out: a `String`. Invariant: each form reads only the report;
//! a ratio with a zero denominator prints as `-`, never as infinity.

use super::*;

pub(super) fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 {
        "-".to_string()
    } else {
        format!("{:.2}", a / b)
    }
}

/// The human-readable table: `leafold/ptxas` per column.
pub fn to_table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<40} {:>9} {:>9} {:>9} {:>7} {:>9} {:>11} {:>7} {:>11} {:>9} {:>11} {:>9} {:>7} {:>15} {:>17} {:>7}",
        "kernel (leafold/ptxas)",
        "insts",
        "addr",
        "slice",
        "LEA",
        "stalls",
        "cycles",
        "regs",
        "smem",
        "local",
        "spill B",
        "LDL+STL",
        "warps",
        "dyn insts",
        "dyn cycles",
        "subset"
    );
    let cell = |a: u64, b: u64| format!("{a}/{b}");
    let mut line = |name: &str, l: &Side, p: &Side, subset: &str| {
        let _ = writeln!(
            s,
            "{:<40} {:>9} {:>9} {:>9} {:>7} {:>9} {:>11} {:>7} {:>11} {:>9} {:>11} {:>9} {:>7} {:>15} {:>17} {:>7}",
            name,
            cell(l.instructions.into(), p.instructions.into()),
            cell(l.address_arith.into(), p.address_arith.into()),
            cell(l.address_slice.into(), p.address_slice.into()),
            cell(l.lea.into(), p.lea.into()),
            cell(l.stalls.into(), p.stalls.into()),
            cell(l.cycles, p.cycles),
            cell(l.registers.into(), p.registers.into()),
            cell(l.shared, p.shared),
            cell(l.local.into(), p.local.into()),
            cell(
                u64::from(l.spill_stores + l.spill_loads),
                u64::from(p.spill_stores + p.spill_loads)
            ),
            cell(u64::from(l.ldl + l.stl), u64::from(p.ldl + p.stl)),
            cell(l.warps.into(), p.warps.into()),
            dynamic_cell(l.dyn_insts, p.dyn_insts),
            dynamic_cell(l.dyn_cycles, p.dyn_cycles),
            subset,
        );
    };
    for row in &r.rows {
        let name: String = row.kernel.chars().take(40).collect();
        let subset = if row.address_only { "addr" } else { "-" };
        line(&name, &row.leafold, &row.ptxas, subset);
    }
    let (l, p) = r.totals();
    line("TOTAL", &l, &p, "all");
    let (dn, dl, dp) = r.dynamic_totals();
    line("TOTAL run dynamically", &dl, &dp, "dyn");
    let (an, al, ap) = r.address_only_totals();
    line("TOTAL address-only", &al, &ap, "addr");
    let (lt, pt) = r.time_totals();
    let _ = writeln!(
        s,
        "\n{} kernels in {} files; {} files skipped",
        r.rows.len(),
        r.times.len(),
        r.skipped.len()
    );
    let _ = writeln!(
        s,
        "instructions leafold/ptxas = {}; address arithmetic leafold/ptxas = {}; address \
         slice leafold/ptxas = {}",
        ratio(l.instructions.into(), p.instructions.into()),
        ratio(l.address_arith.into(), p.address_arith.into()),
        ratio(l.address_slice.into(), p.address_slice.into())
    );
    let _ = writeln!(
        s,
        "address-only kernels ({an}): instructions leafold/ptxas = {}; address arithmetic \
         leafold/ptxas = {}; address slice leafold/ptxas = {}",
        ratio(al.instructions.into(), ap.instructions.into()),
        ratio(al.address_arith.into(), ap.address_arith.into()),
        ratio(al.address_slice.into(), ap.address_slice.into())
    );
    let _ = writeln!(
        s,
        "static issue cycles leafold/ptxas = {} in total, per-kernel median {}",
        ratio(l.cycles as f64, p.cycles as f64),
        r.median_cycle_ratio()
            .map_or_else(|| "-".to_string(), |m| format!("{m:.2}"))
    );
    let _ = writeln!(
        s,
        "dynamic (simulated on verify's launch, {dn} of {} kernels run): warp-instructions \
         leafold/ptxas = {}; issue cycles leafold/ptxas = {} in total, per-kernel median {}",
        r.rows.len(),
        ratio(dl.dyn_insts as f64, dp.dyn_insts as f64),
        ratio(dl.dyn_cycles as f64, dp.dyn_cycles as f64),
        r.median_dynamic_ratio()
            .map_or_else(|| "-".to_string(), |m| format!("{m:.2}"))
    );
    let _ = writeln!(
        s,
        "register-bank conflicts (instructions reading two source registers from one bank): \
         leafold {} of {} ({:.1}%), ptxas {} of {} ({:.1}%)",
        l.bank_conflicts,
        l.instructions,
        100.0 * l.bank_conflicts as f64 / l.instructions.max(1) as f64,
        p.bank_conflicts,
        p.instructions,
        100.0 * p.bank_conflicts as f64 / p.instructions.max(1) as f64
    );
    let _ = writeln!(
        s,
        "theoretical occupancy (resident warps per SM, the column warps): below ptxas's in {} \
         of {} kernels",
        r.lower_occupancy(),
        r.rows.len()
    );
    let _ = writeln!(
        s,
        "compile time: leafold {lt:.1} ms, ptxas -O3 {pt:.1} ms (ptxas/leafold = {})",
        ratio(pt, lt)
    );
    for (f, why) in &r.skipped {
        let _ = writeln!(s, "skipped {f}: {why}");
    }
    for row in r.rows.iter().filter(|x| x.not_run.is_some()) {
        let why = row.not_run.as_deref().unwrap_or_default();
        let _ = writeln!(s, "not run dynamically {}: {}", row.kernel, first_line(why));
    }
    s
}

/// `a/b`, or `-` when the kernel did not run (both 0).
pub(super) fn dynamic_cell(a: u64, b: u64) -> String {
    if a == 0 && b == 0 {
        "-".to_string()
    } else {
        format!("{a}/{b}")
    }
}

pub(super) fn side_json(x: &Side) -> String {
    format!(
        "{{\"instructions\": {}, \"address_arith\": {}, \"address_slice\": {}, \"lea\": {}, \
         \"stalls\": {}, \"cycles\": {}, \"registers\": {}, \"shared\": {}, \"local\": {}, \
         \"spill_stores\": {}, \"spill_loads\": {}, \"stl\": {}, \"ldl\": {}, \
         \"warps\": {}, \"dyn_insts\": {}, \"dyn_cycles\": {}, \"bank_conflicts\": {}}}",
        x.instructions,
        x.address_arith,
        x.address_slice,
        x.lea,
        x.stalls,
        x.cycles,
        x.registers,
        x.shared,
        x.local,
        x.spill_stores,
        x.spill_loads,
        x.stl,
        x.ldl,
        x.warps,
        x.dyn_insts,
        x.dyn_cycles,
        x.bank_conflicts
    )
}

/// `{"kernels": [...], "files": [...], "skipped": [...], "totals": {...}}`.
pub fn to_json(r: &Report) -> String {
    let mut s = String::from("{\"kernels\": [");
    for (n, row) in r.rows.iter().enumerate() {
        let _ = write!(
            s,
            "{}\n  {{\"file\": {}, \"kernel\": {}, \"address_only\": {}, \"leafold\": {}, \"ptxas\": {}, \"not_run\": {}}}",
            if n == 0 { "" } else { "," },
            json_str(&row.file),
            json_str(&row.kernel),
            row.address_only,
            side_json(&row.leafold),
            side_json(&row.ptxas),
            row.not_run.as_deref().map_or("null".to_string(), json_str)
        );
    }
    s.push_str("\n], \"files\": [");
    for (n, (f, l, p)) in r.times.iter().enumerate() {
        let _ = write!(
            s,
            "{}\n  {{\"file\": {}, \"leafold_ms\": {l:.3}, \"ptxas_ms\": {p:.3}}}",
            if n == 0 { "" } else { "," },
            json_str(f)
        );
    }
    s.push_str("\n], \"skipped\": [");
    for (n, (f, why)) in r.skipped.iter().enumerate() {
        let _ = write!(
            s,
            "{}\n  {{\"file\": {}, \"why\": {}}}",
            if n == 0 { "" } else { "," },
            json_str(f),
            json_str(why)
        );
    }
    let (l, p) = r.totals();
    let (lt, pt) = r.time_totals();
    let (an, al, ap) = r.address_only_totals();
    let (dn, dl, dp) = r.dynamic_totals();
    let _ = writeln!(
        s,
        "\n], \"dynamic\": {{\"kernels\": {dn}, \"leafold\": {}, \"ptxas\": {}, \"median_cycle_ratio\": {}}}, \
         \"address_only\": {{\"kernels\": {an}, \"leafold\": {}, \"ptxas\": {}}}, \
         \"totals\": {{\"leafold\": {}, \"ptxas\": {}, \"leafold_ms\": {lt:.3}, \"ptxas_ms\": {pt:.3}, \
         \"lower_occupancy\": {}}}}}",
        side_json(&dl),
        side_json(&dp),
        r.median_dynamic_ratio()
            .map_or_else(|| "null".to_string(), |m| format!("{m:.4}")),
        side_json(&al),
        side_json(&ap),
        side_json(&l),
        side_json(&p),
        r.lower_occupancy()
    );
    s
}

/// The chart for the README, readable at any corpus size (a fixed 900 × 440 canvas):
///
/// * left, one dot per kernel: leafold/ptxas for instructions (blue) and for address
///   arithmetic (red), each series sorted, on a log scale from 1/4 to 4 (clamped), with the
///   line at 1 (= ptxas) and each series' median written beside it; kernels where ptxas
///   spends no address arithmetic have no ratio and are left out of the red series (counted
///   in the legend);
/// * right, the totals as ratios: instructions, address arithmetic and static issue cycles over all
///   kernels, and over issue 4's address-only subset.
pub fn to_svg(r: &Report) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"14\">leafold vs ptxas 11.8 -O3 over {} kernels (lower is better for leafold)</text>\n",
        r.rows.len()
    );
    svg_axes(&mut s);
    svg_scatter(&mut s, r);
    svg_totals(&mut s, r);
    s.push_str("</svg>\n");
    s
}

// The canvas of [`to_svg`]'s chart, and its scatter's plot area.
const W: f64 = 900.0;
const H: f64 = 440.0;
const X0: f64 = 60.0;
const X1: f64 = 560.0;
const Y0: f64 = 60.0;
const Y1: f64 = 380.0;
/// log2 of 4: the ratio axis runs from 1/4 to 4.
const LOG_SPAN: f64 = 2.0;

/// The height of a leafold/ptxas ratio on the chart's log axis (clamped to 1/4..4).
fn y_of(ratio: f64) -> f64 {
    let l = ratio.log2().clamp(-LOG_SPAN, LOG_SPAN);
    Y0 + (LOG_SPAN - l) / (2.0 * LOG_SPAN) * (Y1 - Y0)
}

/// The scatter's grid lines at 1/4..4 (1 in black) and its axis labels.
fn svg_axes(s: &mut String) {
    // Axes and grid of the scatter.
    for (ratio, label) in [
        (0.25, "1/4"),
        (0.5, "1/2"),
        (1.0, "1"),
        (2.0, "2"),
        (4.0, "4"),
    ] {
        let y = y_of(ratio);
        let (stroke, width) = if ratio == 1.0 {
            ("black", 1.5)
        } else {
            ("#dddddd", 1.0)
        };
        let _ = writeln!(
            s,
            "<line x1=\"{X0}\" y1=\"{y:.1}\" x2=\"{X1}\" y2=\"{y:.1}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
            X0 - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">leafold / ptxas (log scale)</text>\n\
         <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">kernels, each series sorted by its ratio</text>",
        (Y0 + Y1) / 2.0,
        (Y0 + Y1) / 2.0,
        (X0 + X1) / 2.0,
        Y1 + 20.0
    );
}

/// The scatter's two series, each sorted, and their legend with the medians.
fn svg_scatter(s: &mut String, r: &Report) {
    let series = |f: fn(&Side) -> u32| -> Vec<f64> {
        let mut v: Vec<f64> = r
            .rows
            .iter()
            .filter(|x| f(&x.ptxas) > 0)
            .map(|x| f64::from(f(&x.leafold)) / f64::from(f(&x.ptxas)))
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let inst = series(|x| x.instructions);
    let addr = series(|x| x.address_arith);
    let median = |v: &[f64]| match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    };
    let no_addr = r.rows.len() - addr.len();
    let legend = [
        (
            "#1f77b4",
            format!("instructions (median {:.2})", median(&inst)),
        ),
        (
            "#d62728",
            match no_addr {
                0 => format!("address arithmetic (median {:.2})", median(&addr)),
                n => format!(
                    "address arithmetic (median {:.2}; {n} kernels without any in ptxas left out)",
                    median(&addr)
                ),
            },
        ),
    ];
    for (n, (colour, text)) in legend.iter().enumerate() {
        let y = 36.0 + 14.0 * n as f64;
        let _ = writeln!(
            s,
            "<circle cx=\"{}\" cy=\"{:.1}\" r=\"4\" fill=\"{colour}\"/><text x=\"{}\" y=\"{:.1}\">{text}</text>",
            X0 + 4.0,
            y - 4.0,
            X0 + 14.0,
            y
        );
    }
    for (v, colour) in [(&inst, "#1f77b4"), (&addr, "#d62728")] {
        let step = (X1 - X0) / v.len().max(1) as f64;
        for (k, ratio) in v.iter().enumerate() {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2\" fill=\"{colour}\" fill-opacity=\"0.7\"><title>{ratio:.3}</title></circle>",
                X0 + step * (k as f64 + 0.5),
                y_of(*ratio)
            );
        }
    }
}

/// The totals as bars of leafold/ptxas, all kernels and the address-only subset, with the
/// line at 1 and the bars' legend.
fn svg_totals(s: &mut String, r: &Report) {
    // Totals, as bars of leafold/ptxas with the line at 1.
    let (l, p) = r.totals();
    let (na, la, pa) = r.address_only_totals();
    let quotient = |a: u64, b: u64| {
        if b == 0 {
            f64::NAN
        } else {
            a as f64 / b as f64
        }
    };
    let (_, dl, dp) = r.dynamic_totals();
    let groups = [
        (
            format!("all {} kernels", r.rows.len()),
            [
                quotient(l.instructions.into(), p.instructions.into()),
                quotient(l.address_arith.into(), p.address_arith.into()),
                quotient(l.cycles, p.cycles),
                quotient(dl.dyn_cycles, dp.dyn_cycles),
            ],
        ),
        (
            format!("{na} address-only"),
            [
                quotient(la.instructions.into(), pa.instructions.into()),
                quotient(la.address_arith.into(), pa.address_arith.into()),
                quotient(la.cycles, pa.cycles),
                f64::NAN,
            ],
        ),
    ];
    const BX0: f64 = 620.0;
    const BAR: f64 = 27.0;
    let _ = writeln!(
        s,
        "<text x=\"{BX0}\" y=\"{}\">totals, leafold / ptxas</text>",
        Y0 - 8.0
    );
    for (g, (label, values)) in groups.iter().enumerate() {
        let gx = BX0 + g as f64 * (4.0 * BAR + 24.0);
        for (n, q) in values.iter().enumerate() {
            if !q.is_finite() {
                continue;
            }
            let colour = ["#1f77b4", "#d62728", "#7f7f7f", "#2ca02c"][n];
            let (top, base) = (y_of(*q), y_of(1.0));
            let (y, h) = if top < base {
                (top, base - top)
            } else {
                (base, top - base)
            };
            let x = gx + n as f64 * BAR;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\">{q:.2}</text>",
                BAR - 4.0,
                h.max(1.0),
                x + (BAR - 4.0) / 2.0,
                if top < base { y - 3.0 } else { y + h + 11.0 }
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
            gx + 2.0 * BAR - 2.0,
            Y1 + 20.0
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{BX0}\" y1=\"{:.1}\" x2=\"{}\" y2=\"{:.1}\" stroke=\"black\" stroke-width=\"1.5\"/>\n\
         <text x=\"{}\" y=\"{}\">bars: instructions (blue), address arithmetic (red), static issue \
         cycles (grey), dynamic issue cycles (green)</text>",
        y_of(1.0),
        W - 20.0,
        y_of(1.0),
        X0,
        Y1 + 44.0
    );
}
