//! `EIATTR_CRS_STACK_SIZE` against ptxas 11.8 over the corpus (needs the oracle; skips with
//! its notice).
//!
//! 1. `sm50::crs` applied to ptxas's own code must give at least the value ptxas writes (the
//!    rule is meant to round up, never down; one known exception, listed), and exactly
//!    ptxas's value for most kernels (a floor). It cannot be exact everywhere: ptxas knows
//!    which branches are warp-uniform, the words do not. Only indirect control flow (`BRX`,
//!    `PRET`) may be refused by the analysis.
//! 2. Every cubin we write carries exactly the value `sm50::crs` computes for its final code
//!    (no record when that is none). Where our code needs as many units as ptxas's code for
//!    the same kernel, our value is the rule's value on ptxas's code, so by 1 at least ptxas's
//!    (asserted), and ptxas's own for the kernels counted.
//! 3. The probe kernels (tests/data/crs/probes.ptx) give the table in `sm50::crs`'s essay.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Options};
use leafold::oracle::Oracle;
use leafold::sm50::crs::stack_size;
use std::collections::HashMap;

/// ptxas writes one unit more than the rule gives for this kernel (`SSY` around a diverging
/// loop after a guarded `EXIT`): the one known case, see sm50::crs's essay.
const KNOWN_SHORT: &[&str] =
    &["gtcasl__gpuocelot__tests_ptx_sdk2.2_volumeRender_kernel.ptx:_Z8d_renderPjjjffff"];

#[test]
fn crs_stack_size_matches_ptxas() {
    let Some(oracle) = Oracle::for_test("crs_stack_size_matches_ptxas") else {
        return;
    };
    let files = common::ptxas_corpus();
    let cubins = common::par_map(&files, |f| {
        common::ptxas_cached(&oracle, &f.ptx_for_ptxas, "sm_50")
    });

    // 1. The rule over ptxas's code.
    let (mut exact, mut above, mut with_record) = (0, 0, 0);
    let mut refused = Vec::new();
    let mut short = Vec::new();
    // file:kernel -> (ptxas's value, the rule over ptxas's code)
    let mut theirs: HashMap<String, (u32, u32)> = HashMap::new();
    for (f, c) in files.iter().zip(&cubins) {
        let Ok(bytes) = c else { continue };
        let cub = cubin::read(bytes).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        for k in &cub.kernels {
            let key = format!("{}:{}", f.name, k.name);
            let written = k.crs_stack_size().unwrap_or(0);
            with_record += usize::from(written > 0);
            let rule = match stack_size(&k.code) {
                Ok(r) => r,
                Err(e) => {
                    refused.push(format!("{key}: {e}"));
                    continue;
                }
            };
            let rule = rule.unwrap_or(0);
            theirs.insert(key.clone(), (written, rule));
            match rule.cmp(&written) {
                std::cmp::Ordering::Equal => exact += 1,
                std::cmp::Ordering::Greater => above += 1,
                std::cmp::Ordering::Less => {
                    short.push(format!("{key}: ptxas {written:#x}, rule {rule:#x}"))
                }
            }
        }
    }
    println!(
        "ptxas's code: {exact} kernels exact, {above} above ptxas, {} below, {} refused \
         (indirect control flow); ptxas wrote the record for {with_record}",
        short.len(),
        refused.len()
    );
    for r in &refused {
        println!("  refused {r}");
    }
    let unexpected: Vec<_> = short
        .iter()
        .filter(|s| !KNOWN_SHORT.iter().any(|k| s.starts_with(&format!("{k}:"))))
        .collect();
    assert!(
        unexpected.is_empty(),
        "the rule is below ptxas: {unexpected:#?}"
    );
    assert!(exact >= 250, "only {exact} kernels exact");
    // Only indirect control flow may be refused: never ptxas's ordinary code.
    let odd: Vec<_> = refused.iter().filter(|r| !r.contains("indirect")).collect();
    assert!(odd.is_empty(), "refused for another reason: {odd:#?}");

    // 2. Our cubins.
    let (mut ours, mut same_units, mut same_value) = (0, 0, 0);
    for f in &files {
        let opts = Options {
            file_name: f.name.clone(),
            ..Options::default()
        };
        let Ok(out) = compile(&f.ptx, &opts) else {
            continue;
        };
        let cub = cubin::read(&out.cubin).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        for k in &cub.kernels {
            ours += 1;
            let key = format!("{}:{}", f.name, k.name);
            let needed = stack_size(&k.code).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(
                k.crs_stack_size(),
                needed,
                "{key}: the record is not the rule's value"
            );
            let Some(&(written, rule)) = theirs.get(&key) else {
                continue;
            };
            let value = needed.unwrap_or(0);
            if value == rule {
                same_units += 1;
                // The known exception of part 1 (the rule is below ptxas's value on ptxas's
                // own code) is the same exception here, now that textures compile it.
                assert!(
                    value >= written || KNOWN_SHORT.contains(&key.as_str()),
                    "{key}: ours {value:#x} < ptxas {written:#x}"
                );
                same_value += usize::from(value == written);
            }
        }
    }
    println!(
        "our code: {ours} kernels; {same_units} need as many units as ptxas's code, \
         {same_value} of them with ptxas's exact value"
    );
    assert!(same_units >= 100, "only {same_units} kernels comparable");
}

/// The probe kernels (tests/data/crs/probes.ptx): ptxas's value, the rule over ptxas's code,
/// and the rule over ours, as the table in sm50::crs's essay gives them.
#[test]
fn probe_kernels_match_the_table() {
    let Some(oracle) = Oracle::for_test("probe_kernels_match_the_table") else {
        return;
    };
    let ptx = std::fs::read_to_string("tests/data/crs/probes.ptx").unwrap();
    let theirs = cubin::read(&common::ptxas_cached(&oracle, &ptx, "sm_50").unwrap()).unwrap();
    let ours = compile(&ptx, &Options::default()).unwrap_or_else(|d| panic!("{d:?}"));
    let ours = cubin::read(&ours.cubin).unwrap();
    // kernel, ptxas's record, the rule on ptxas's code, our record (0: none)
    let table: &[(&str, u32, u32, u32)] = &[
        ("straight", 0, 0, 0),
        ("ifelse_join", 0, 0, 0),
        ("nest1", 0x20, 0x20, 0),
        // Our innermost `if` of a nest is predicated (`lower::predicate` converts nested
        // sides from the inside out, folding the outer guard into the inner compare), so
        // our code opens one `SSY` fewer than ptxas's.
        ("nest2", 0x20, 0x20, 0),
        ("nest3", 0x40, 0x40, 0x20),
        ("nest4", 0x60, 0x60, 0x40),
        ("nest5", 0x80, 0x80, 0x60),
        ("nest6", 0xa0, 0xa0, 0x80),
        ("loop_div", 0x210, 0x210, 0x210),
        ("loop_div_join", 0x210, 0x210, 0x210),
        ("loop_break", 0x210, 0x210, 0x210),
        ("loop_uni", 0, 0x210, 0x210),
        ("loop_uni_if", 0x20, 0x210, 0x210),
        // Our division sites are ptxas's `SSY ; @!P SYNC ; CAL ; SYNC`; the rule counts the
        // `SSY` and the split of its `@!P SYNC` that ptxas's record leaves out.
        ("fdiv", 0x10, 0x40, 0x30),
        ("fdiv_if", 0x30, 0x50, 0x50),
        ("fdiv_loop", 0x90, 0x260, 0x220),
        ("fdiv_loopdiv", 0x220, 0x270, 0x230),
    ];
    let find = |c: &cubin::Cubin, name: &str| {
        c.kernels
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("no kernel {name}"))
            .clone()
    };
    for &(name, written, rule, our) in table {
        let t = find(&theirs, name);
        assert_eq!(t.crs_stack_size().unwrap_or(0), written, "{name}: ptxas");
        assert_eq!(
            stack_size(&t.code).unwrap().unwrap_or(0),
            rule,
            "{name}: rule on ptxas's code"
        );
        let o = find(&ours, name);
        assert_eq!(o.crs_stack_size().unwrap_or(0), our, "{name}: ours");
    }
}

/// Deep nesting is real code, not recursion: a kernel of 80 nested divergent `if`s compiles,
/// and its record covers the 80 open `SSY`s (ptxas 11.8 writes 0x6f0 for it). Needs no
/// oracle.
#[test]
fn deep_nesting_compiles() {
    let n = 80;
    let mut ptx = format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry deep(.param .u64 out)\n{{\n\
         .reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n.reg .pred %p<{}>;\n\
         ld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n",
        n + 1
    );
    for k in 0..n {
        ptx += &format!(
            "setp.gt.u32 %p{k}, %r1, {k};\n@!%p{k} bra L{k};\nst.global.u32 [%rd2+{}], %r1;\n",
            4 * k
        );
    }
    for k in (0..n).rev() {
        ptx += &format!("L{k}:\nst.global.u32 [%rd2+{}], %r1;\n", 4 * k + 1024);
    }
    ptx += "ret;\n}\n";
    let out = compile(&ptx, &Options::default()).unwrap_or_else(|d| panic!("{d:?}"));
    let c = cubin::read(&out.cubin).unwrap();
    let size = c.kernels[0].crs_stack_size().unwrap_or(0);
    assert!(size >= 16 * n, "CRS stack {size:#x} for {n} nested regions");
}
