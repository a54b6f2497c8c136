//! The FCHK fast path and the shared slow-path subroutine of `div.rn.f32` / `rcp.rn.f32`
//! (`lower::select::fdiv`), end to end on `tests/data/fdiv/both_paths.ptx`: fifteen divisions
//! whose lanes take the fast path, the slow path, or both within one warp (random operand
//! words, exponents forced to specials, to 1, to huge/tiny gaps; x / x; a division under a
//! divergent branch and one in a loop). Checked: `ir::eval` against the simulator on our
//! code for several seeds (with and without `--no-subroutines`), against ptxas's code too
//! when the oracle is installed; the code has one `CAL` per division, reached only by the
//! lanes its site's check flags (`FCHK.DIVIDE` at each division, ptxas's `SSY ; @P SYNC ;
//! CAL ; SYNC`), the subroutine once after the kernel's `EXIT` (and the reciprocal's
//! own after it, which the `rcp`s call), a hazard-free schedule,
//! and nvdisasm prints every word as our printer does.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;
use leafold::sm50::sched::check::check_code;
use leafold::verify::{verify_file, Outcome, VerifyOptions};

fn source() -> String {
    let path = format!(
        "{}/tests/data/fdiv/both_paths.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

fn options(inline: bool) -> Options {
    Options {
        file_name: "both_paths.ptx".to_string(),
        emit: Emit::Sass,
        no_subroutines: inline,
        ..Options::default()
    }
}

/// Lines of the listing whose instruction text starts with `what`.
fn count(sass: &str, what: &str) -> usize {
    common::parse_lines(sass)
        .iter()
        .filter(|(_, i)| i.starts_with(what))
        .count()
}

#[test]
fn one_call_per_division_and_one_subroutine() {
    let out = compile(&source(), &options(false)).unwrap();
    let lines = common::parse_lines(&out.sass);
    let text: Vec<&str> = lines.iter().map(|(_, i)| i.as_str()).collect();
    let cals = text.iter().filter(|i| i.starts_with("CAL ")).count();
    assert_eq!(cals, 15, "{}", out.sass);
    // One FCHK per division site (twelve), none in the subroutine; every CAL in ptxas's
    // shape: `@P SYNC` (or `@!P`) before it, a bare SYNC after it.
    assert_eq!(count(&out.sass, "FCHK.DIVIDE"), 12, "{}", out.sass);
    let cal_at = text
        .iter()
        .enumerate()
        .filter(|(_, i)| i.starts_with("CAL "));
    for (k, _) in cal_at {
        assert!(
            (text[k - 1].starts_with("@P") || text[k - 1].starts_with("@!P"))
                && text[k - 1].ends_with(" SYNC"),
            "{k}: {}\n{}",
            text[k - 1],
            out.sass
        );
        assert_eq!(text[k + 1], "SYNC", "{}", out.sass);
        assert!(
            text[..k].iter().any(|i| i.starts_with("SSY ")),
            "{}",
            out.sass
        );
    }
    // The divisions' CALs go to the division's subroutine, which follows the kernel's last
    // EXIT; the reciprocals' (three) to the reciprocal's subroutine, right after the
    // division's (which ends at its first unguarded RET).
    let exit = lines
        .iter()
        .rposition(|(_, i)| i.starts_with("EXIT"))
        .unwrap();
    let div = exit + 1;
    let rcp = div + lines[div..].iter().position(|(_, i)| i == "RET").unwrap() + 1;
    assert!(lines[rcp].1.starts_with("FSETP.EQ.AND"), "{}", out.sass);
    // (A target in a bundle's first slot is printed as the bundle's base, as ptxas does.)
    let at = |k: usize| lines[k].0;
    let goes_to = |t: u64, k: usize| t == at(k) || (at(k) % 32 == 8 && t == at(k) - 8);
    let targets: Vec<u64> = text
        .iter()
        .filter(|i| i.starts_with("CAL "))
        .map(|i| u64::from_str_radix(i.trim_start_matches("CAL 0x"), 16).unwrap())
        .collect();
    assert_eq!(targets.iter().filter(|&&t| goes_to(t, div)).count(), 12);
    assert_eq!(targets.iter().filter(|&&t| goes_to(t, rcp)).count(), 3);
    let code = cubin::read(&out.cubin).unwrap().kernels[0].code.clone();
    let errs = check_code(&code);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);
    // --no-subroutines: no call, no FCHK.
    let inline = compile(&source(), &options(true)).unwrap();
    assert!(!inline.sass.contains("CAL ") && !inline.sass.contains("FCHK"));
}

#[test]
fn both_paths_verify_against_the_reference() {
    for inline in [false, true] {
        for seed in [1, 2, 3] {
            let o = VerifyOptions {
                seed,
                runs: 2,
                block: [96, 1, 1],
                compile: options(inline),
                ..VerifyOptions::default()
            };
            let v = verify_file(&source(), None, &o).unwrap();
            assert_eq!(v.len(), 1);
            match &v[0].outcome {
                Outcome::Match {
                    one_thread: None, ..
                } => {}
                _ => panic!("inline {inline}, seed {seed}: {}", v[0]),
            }
        }
    }
}

#[test]
fn ptxas_code_agrees_and_nvdisasm_prints_our_listing() {
    let Some(oracle) = Oracle::for_test("fdiv_subroutine") else {
        return;
    };
    let src = source();
    let out = compile(&src, &options(false)).unwrap();
    common::assert_oracle_prints_our_listing(&oracle, "both_paths", &out.cubin, &out.sass);
    let theirs = oracle.ptxas(&src, "sm_50", &[]).unwrap();
    let o = VerifyOptions {
        seed: 5,
        runs: 2,
        compile: options(false),
        ptxas_cubin: Some(theirs),
        ..VerifyOptions::default()
    };
    let v = verify_file(&src, None, &o).unwrap();
    assert!(
        matches!(v[0].outcome, Outcome::Match { ptxas: true, .. }),
        "{}",
        v[0]
    );
}

/// Corpus kernels that once spilled at low register pressure because of the subroutine's
/// fixed registers (so that the driver compiled them a second time with every division
/// inline): a divisor that lives on pinned at every call, and regalloc2 evicting long-lived
/// values from the call's fixed registers. Each now keeps its calls and allocates without a
/// spill.
#[test]
fn corpus_kernels_with_calls_allocate_without_spills() {
    let cases = [
        ("rodinia_hwt", "_Z6kernelv"),
        (
            "sdk2.2_bisect_large",
            "_Z17bisectKernelLargePfS_jffjjfPjS0_S_S_S0_S_S_S0_S0_S0_S0_",
        ),
        ("sdk2.2_dxtc", "_Z8compressPKjS0_P5uint2"),
        (
            "rodinia_track_ellipse_kernel",
            "_Z12IMGVF_kernelPPfS0_PiS1_fffif",
        ),
        ("unstructured_vm", "_Z8VmKernelPcP17sphyraena_resultsiii"),
    ];
    for (file, kernel) in cases {
        let name = format!("gtcasl__gpuocelot__tests_ptx_{file}.ptx");
        let path = format!(
            "{}/tests/data/corpus/ptx/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let opts = Options {
            file_name: name,
            emit: Emit::Alloc,
            ..Options::default()
        };
        let out = compile(&std::fs::read_to_string(path).unwrap(), &opts).unwrap();
        // `--emit alloc`: "kernel NAME:", a header line, the code, up to the next kernel.
        let start = out
            .text
            .find(&format!("kernel {kernel}:\n"))
            .unwrap_or_else(|| panic!("{kernel} not in the output"));
        let section = &out.text[start..];
        let section = match section[1..].find("\nkernel ") {
            Some(end) => &section[..end + 1],
            None => section,
        };
        let header = section.lines().nth(1).unwrap();
        assert!(
            header.contains(" 0 bytes spill frame"),
            "{kernel}: {header}"
        );
        assert!(
            section.contains("CAL "),
            "{kernel}: no call, compiled inline"
        );
    }
}

/// The slow path's zero-dividend exit (`Seq::zero_dividend_exit`): `±0 / y` for `y` of
/// either sign, normal, subnormal, infinite, zero and NaN (`x` of either sign), eval =
/// the simulator on our code (the exit must give `x ^ y`'s signed zero, and leave 0/0 and
/// 0/NaN to the full sequence), and the exit's `@P RET` is there.
#[test]
fn zero_dividends_take_the_early_exit() {
    use common::warp_kernel::*;
    let body = r#"
    .reg .f32 %f<20>;
    .reg .b32 %z<12>;
    and.b32 %z1, %r2, -2147483648;
    shl.b32 %z2, %r2, 1;
    and.b32 %z2, %z2, -2147483648;
    and.b32 %z3, %r2, -2139095041;
    or.b32 %z4, %z2, 2139095040;
    mov.b32 %f1, %z1;
    mov.b32 %f2, %z2;
    mov.b32 %f3, %r2;
    mov.b32 %f4, %z3;
    mov.b32 %f5, %z4;
    div.rn.f32 %f10, %f1, %f3;
    div.rn.f32 %f11, %f2, %f3;
    div.rn.f32 %f12, %f1, %f4;
    div.rn.f32 %f13, %f2, %f5;
    div.rn.f32 %f14, %f1, %f2;
    div.rn.f32 %f15, %f2, %f4;
    neg.f32 %f6, %f3;
    div.rn.f32 %f16, %f1, %f6;
    div.rn.f32 %f17, %f3, %f4;
    st.global.v4.f32 [%rd3], {%f10, %f11, %f12, %f13};
    st.global.v4.f32 [%rd3+16], {%f14, %f15, %f16, %f17};
"#;
    let (out, last) = run("fdiv_zero_dividend", "", body);
    let t = common::parse_lines(&out.sass);
    assert!(
        t.iter()
            .any(|(_, i)| i.starts_with("@P") && i.contains("RET")),
        "the early exit's guarded RET\n{}",
        out.sass
    );
    // Word 0 is x / y with x the zero of y's sign: +0 for every nonzero, non-NaN y, and
    // the canonical NaN for y = ±0 or NaN.
    let mut zeros = 0;
    for g in 0..64 {
        let q = word(&last, g, 0);
        assert!(q == 0 || q == 0x7fff_ffff, "thread {g}: {q:#x}");
        zeros += usize::from(q == 0);
    }
    assert!(zeros > 0, "some zero quotients were written");
}
