//! Texture fetches under a guard and nested guards folded into a compare (`lower::predicate`,
//! issue 24): where NVVM branches around a `tex` (`if (x < n) v = tex1Dfetch(..)`), ptxas
//! 11.8 predicates the fetch (`@!P0 TLDS`) instead of `SSY`/`@P0 SYNC`/`SYNC`; where the
//! branch is nested (leukocyte's `dilate_kernel`: `if (in range && strel[k] != 0)`), it
//! folds the outer condition into the inner compare (`FSETP.EQ.OR P3, PT, R19, RZ, P3`) and
//! guards the fetch with the result. A loop of one fetch per trip keeps its branch, as ptxas
//! keeps it (nothing to overlap; every trip a warp skips would still issue and wait).
//!
//! Each kernel: compiles, is hazard-free, `ir::eval` equals the simulator on random launches;
//! the listing (opcodes with their guards) is a snapshot; the facts the rule promises are
//! asserted (no reconvergence, the fetch guarded, the folded compares). With the oracle,
//! nvdisasm and cuobjdump print our listing.

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\
                    .global .texref t_img;\n.const .align 4 .b8 c_mask[64];\n";

/// `if (i < n) { v = tex1Dfetch(t, i * n + 7); m = v > m ? v : m; }` as NVVM writes it: the
/// side holds the fetch, a compare and a select (a predicate of its own).
fn fetch_kernel() -> String {
    format!(
        "{HEAD}.visible .entry fetch(.param .u32 n, .param .u64 out)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .f32 %f<8>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\
         \tld.param.u32 %r1, [n];\n\tld.param.u64 %rd1, [out];\n\
         \tmov.u32 %r2, %tid.x;\n\tmov.f32 %f1, 0f00000000;\n\
         \tsetp.ge.s32 %p1, %r2, %r1;\n\t@%p1 bra $L__J;\n\
         \tmad.lo.s32 %r3, %r2, %r1, 7;\n\
         \ttex.1d.v4.f32.s32 {{%f2, %f3, %f4, %f5}}, [t_img, {{%r3}}];\n\
         \tsetp.gt.f32 %p2, %f2, %f1;\n\tselp.f32 %f1, %f2, %f1, %p2;\n\
         $L__J:\n\
         \tcvta.to.global.u64 %rd2, %rd1;\n\tmul.wide.s32 %rd3, %r2, 4;\n\
         \tadd.s64 %rd2, %rd2, %rd3;\n\tst.global.f32 [%rd2], %f1;\n\tret;\n}}\n"
    )
}

/// `dilate_kernel`'s shape, two taps per trip: `if (x in range) if (mask[k] != 0) m =
/// max(m, tex(..))`, once with the inner branch skipping (`@p bra J`: the fetch runs under
/// `!p`) and once jumping to the work (`@p bra DO`: under `p`), so both folds occur.
fn nested_kernel() -> String {
    format!(
        "{HEAD}.visible .entry nested(.param .u32 n, .param .u32 w, .param .u64 out)\n{{\n\
         \t.reg .pred %p<16>;\n\t.reg .f32 %f<16>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u32 %r1, [n];\n\tld.param.u32 %r2, [w];\n\tld.param.u64 %rd1, [out];\n\
         \tmov.u32 %r3, %tid.x;\n\tmov.f32 %f1, 0f00000000;\n\tmov.u32 %r4, 0;\n\
         \tmov.u64 %rd2, c_mask;\n\
         $L__LOOP:\n\
         \tadd.s32 %r5, %r4, %r3;\n\tsetp.lt.s32 %p1, %r5, 0;\n\tsetp.ge.s32 %p2, %r5, %r1;\n\
         \tor.pred %p3, %p1, %p2;\n\tmul.wide.s32 %rd3, %r4, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \t@%p3 bra $L__A;\n\
         \tld.const.f32 %f2, [%rd4];\n\tsetp.eq.f32 %p4, %f2, 0f00000000;\n\
         \t@%p4 bra $L__A;\n\
         \tmad.lo.s32 %r6, %r5, %r2, %r3;\n\
         \ttex.1d.v4.f32.s32 {{%f3, %f4, %f5, %f6}}, [t_img, {{%r6}}];\n\
         \tsetp.gt.f32 %p5, %f3, %f1;\n\tselp.f32 %f1, %f3, %f1, %p5;\n\
         $L__A:\n\
         \tadd.s32 %r7, %r5, 1;\n\tsetp.ge.s32 %p6, %r7, %r1;\n\t@%p6 bra $L__B;\n\
         \tld.const.f32 %f7, [%rd4+4];\n\tsetp.neu.f32 %p7, %f7, 0f00000000;\n\
         \t@%p7 bra $L__DO;\n\tbra.uni $L__B;\n\
         $L__DO:\n\
         \tmad.lo.s32 %r8, %r7, %r2, %r3;\n\
         \ttex.1d.v4.f32.s32 {{%f8, %f9, %f10, %f11}}, [t_img, {{%r8}}];\n\
         \tmax.f32 %f1, %f1, %f8;\n\
         $L__B:\n\
         \tadd.s32 %r4, %r4, 2;\n\tsetp.lt.s32 %p8, %r4, 8;\n\t@%p8 bra $L__LOOP;\n\
         \tcvta.to.global.u64 %rd5, %rd1;\n\tmul.wide.u32 %rd6, %r3, 4;\n\
         \tadd.s64 %rd7, %rd5, %rd6;\n\tst.global.f32 [%rd7], %f1;\n\tret;\n}}\n"
    )
}

/// The older corpus's `dilate_kernel` shape: one fetch per loop trip, its result carried to
/// the next trip (a running maximum).
fn one_per_trip_kernel() -> String {
    format!(
        "{HEAD}.visible .entry one_per_trip(.param .u32 n, .param .u32 w, .param .u64 out)\n{{\n\
         \t.reg .pred %p<16>;\n\t.reg .f32 %f<16>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u32 %r1, [n];\n\tld.param.u32 %r2, [w];\n\tld.param.u64 %rd1, [out];\n\
         \tmov.u32 %r3, %tid.x;\n\tmov.f32 %f1, 0f00000000;\n\tmov.u32 %r4, 0;\n\
         $L__LOOP:\n\
         \tadd.s32 %r5, %r4, %r3;\n\tsetp.ge.s32 %p2, %r5, %r1;\n\t@%p2 bra $L__A;\n\
         \tmad.lo.s32 %r6, %r5, %r2, %r3;\n\
         \ttex.1d.v4.f32.s32 {{%f3, %f4, %f5, %f6}}, [t_img, {{%r6}}];\n\
         \tsetp.gt.f32 %p5, %f3, %f1;\n\tselp.f32 %f1, %f3, %f1, %p5;\n\
         $L__A:\n\
         \tadd.s32 %r4, %r4, 1;\n\tsetp.lt.s32 %p8, %r4, 8;\n\t@%p8 bra $L__LOOP;\n\
         \tcvta.to.global.u64 %rd5, %rd1;\n\tmul.wide.u32 %rd6, %r3, 4;\n\
         \tadd.s64 %rd7, %rd5, %rd6;\n\tst.global.f32 [%rd7], %f1;\n\tret;\n}}\n"
    )
}

fn opts() -> Options {
    Options {
        file_name: "predicate_tex.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// Compile `src`, check hazards and `ir::eval` == simulator on two seeds; the SASS listing.
fn compile_and_verify(what: &str, src: &str) -> String {
    common::compile_and_verify("predicate_tex.ptx", what, src)
}

/// The instructions of a listing with their guards, operands dropped except a compare's
/// combining predicate (registers vary with the allocator; the guards are the rule).
fn shapes(sass: &str) -> Vec<String> {
    common::parse_lines(sass)
        .into_iter()
        .map(|(_, t)| {
            let mut words = t.split_whitespace();
            let first = words.next().unwrap_or("").to_string();
            let (guard, op) = if first.starts_with('@') {
                (format!("{first} "), words.next().unwrap_or("").to_string())
            } else {
                (String::new(), first)
            };
            let combine = if op.contains("SETP") {
                let last = t.rsplit(',').next().unwrap_or("").trim().to_string();
                format!(" .. {last}")
            } else {
                String::new()
            };
            format!("{guard}{op}{combine}")
        })
        .collect()
}

fn count(lines: &[String], f: impl Fn(&str) -> bool) -> usize {
    lines.iter().filter(|l| f(l)).count()
}

#[test]
fn a_fetch_side_runs_under_the_guard() {
    let sass = compile_and_verify("fetch", &fetch_kernel());
    let lines = shapes(&sass);
    insta::assert_snapshot!("predicate_tex_fetch", lines.join("\n"));
    assert_eq!(
        count(&lines, |l| l.contains("SSY") || l.contains("SYNC")),
        0,
        "{sass}"
    );
    assert_eq!(
        count(&lines, |l| l.contains("BRA")),
        1,
        "only the final self-loop: {sass}"
    );
    let fetches: Vec<&String> = lines.iter().filter(|l| l.contains("TLDS")).collect();
    assert_eq!(fetches.len(), 1, "{sass}");
    assert!(fetches[0].starts_with('@'), "the fetch is guarded: {sass}");
}

#[test]
fn nested_guards_fold_into_the_inner_compare() {
    let sass = compile_and_verify("nested", &nested_kernel());
    let lines = shapes(&sass);
    insta::assert_snapshot!("predicate_tex_nested", lines.join("\n"));
    assert_eq!(
        count(&lines, |l| l.contains("SSY") || l.contains("SYNC")),
        0,
        "{sass}"
    );
    // The loop's back edge and the final self-loop: no branch around a tap.
    assert_eq!(count(&lines, |l| l.contains("BRA")), 2, "{sass}");
    let fetches = count(&lines, |l| l.contains("TLDS"));
    let guarded = count(&lines, |l| l.starts_with('@') && l.contains("TLDS"));
    assert_eq!((fetches, guarded), (2, 2), "{sass}");
    // `mask[k] == 0` folds the outer guard in with OR (its uses run under `!q`), `mask[k]
    // != 0` with AND (its uses run under `q`); both compares stay unguarded.
    let folded = |bop: &str| {
        count(&lines, |l| {
            l.starts_with("FSETP") && l.contains(bop) && !l.ends_with(" PT")
        })
    };
    assert_eq!((folded(".EQ.OR"), folded(".NEU.AND")), (1, 1), "{sass}");
}

#[test]
fn one_fetch_per_loop_trip_stays_behind_its_branch() {
    let sass = compile_and_verify("one_per_trip", &one_per_trip_kernel());
    let lines = shapes(&sass);
    let fetches: Vec<&String> = lines.iter().filter(|l| l.contains("TLDS")).collect();
    assert_eq!(fetches.len(), 1, "{sass}");
    assert!(
        !fetches[0].starts_with('@'),
        "nothing to overlap with: {sass}"
    );
    assert!(count(&lines, |l| l.contains("SYNC")) >= 1, "{sass}");
}

#[test]
fn nvdisasm_and_cuobjdump_print_our_listing() {
    let Some(oracle) = Oracle::for_test("lower_predicate_tex") else {
        return;
    };
    for (what, src) in [
        ("fetch", fetch_kernel()),
        ("nested", nested_kernel()),
        ("one_per_trip", one_per_trip_kernel()),
    ] {
        let out = compile(&src, &opts()).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, what, &out.cubin, &out.sass);
    }
}
