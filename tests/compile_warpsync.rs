//! Warp-synchronous and CUDA 9+ PTX (issue 19 point 2): `bar.warp.sync`, `activemask`,
//! `shfl.sync`, `vote.sync`, `WARP_SZ`, `brkpt`, `pmevent`, `membar`, and the special
//! registers `%nsmid`, `%nwarpid`, `%dynamic_smem_size`, `%total_smem_size`, `%envreg<n>`,
//! `%globaltimer(_lo/_hi)` and `%pm<n>(_64)`; and the other instructions ptxas 11.8 takes for
//! sm_5x that this issue added: `lop3`, `add.sat.s32`/`sub.sat.s32`. One test per construct,
//! each checked four ways:
//!
//! * the kernel compiles, and its SASS has the shape ptxas 11.8 gives the construct (the
//!   instruction ptxas emits for it, probed with `ptxas -arch=sm_52`);
//! * the hazard checker finds nothing in our `.text`;
//! * with the oracle installed, `cuobjdump -sass` lists our cubin exactly as our printer does
//!   and nvdisasm prints every word of it the same way;
//! * `ir::eval` (the PTX meaning) and the simulator running our SASS write the same bytes over
//!   random launches of 2 CTAs × 64 threads (two warps each), with divergence where it
//!   matters. Timers and performance counters have no fixed value: there `ir::eval` must
//!   refuse the launch as unknowable and the simulator must run it.
//!
//! Every kernel has parameters `(in, out)`: thread `g` (global index) reads the word
//! `in[g]` and writes its results to `out[8g .. 8g + 8]` (words).

mod common;

use common::warp_kernel::*;

use leafold::driver::{compile, Options};
use leafold::ir::eval::{self, EvalError};
use leafold::sim;

#[test]
fn bar_warp_sync_orders_shared_accesses_between_lanes() {
    // Each lane stores its word at sm[33 * warp + lane] (lane 0 also the pad slot 32), then
    // after `bar.warp.sync` reads its neighbour's slot off the same base register: a load
    // the scheduler could otherwise hoist above the store (same base, disjoint offsets).
    let body = r#"
    shr.u32 %r12, %r9, 5;
    and.b32 %r13, %r9, 31;
    mad.lo.s32 %r14, %r12, 33, %r13;
    shl.b32 %r14, %r14, 2;
    mov.u32 %r15, sm;
    add.s32 %r15, %r15, %r14;
    st.shared.u32 [%r15], %r2;
    setp.eq.u32 %p1, %r13, 0;
    @%p1 st.shared.u32 [%r15+128], %r1;
    bar.warp.sync -1;
    ld.shared.u32 %r16, [%r15+4];
    st.global.u32 [%rd3], %r16;
    bar.warp.sync %r2;
    st.global.u32 [%rd3+4], %r13;
"#;
    let (out, last) = run("bar_warp_sync", ".shared .align 4 .b32 sm[66];", body);
    // ptxas emits nothing for it; we emit a NOP the scheduler keeps in place, between the
    // store and the load.
    let t = texts(&out.sass);
    let sts = t.iter().position(|s| s.starts_with("STS")).unwrap();
    let nop = t.iter().position(|s| s.starts_with("NOP")).unwrap();
    let lds = t.iter().position(|s| s.starts_with("LDS")).unwrap();
    assert!(sts < nop && nop < lds, "{}", out.sass);
    // Lane 3 of CTA 0 reads lane 4's input word.
    let input = &launch(3).global[0].bytes;
    assert_eq!(
        word(&last, 3, 0),
        u32::from_le_bytes(input[16..20].try_into().unwrap())
    );
}

#[test]
fn warp_sz_is_32() {
    let (_, last) = run(
        "warp_sz",
        "",
        "    add.u32 %r12, %r2, WARP_SZ;\n    st.global.u32 [%rd3], %r12;\n    mov.u32 %r13, WARP_SZ;\n    st.global.u32 [%rd3+4], %r13;",
    );
    assert_eq!(word(&last, 5, 1), 32);
}

#[test]
fn activemask_gives_the_active_lanes_under_divergence() {
    // Uniform, then each side of a data-dependent branch, then inside a loop whose trip count
    // differs per lane (lanes that leave early wait), then after it (all lanes again).
    let body = r#"
    activemask.b32 %r12;
    st.global.u32 [%rd3], %r12;
    and.b32 %r13, %r2, 1;
    setp.eq.u32 %p1, %r13, 0;
    @%p1 bra EVEN;
    activemask.b32 %r14;
    st.global.u32 [%rd3+4], %r14;
    bra.uni JOIN;
EVEN:
    activemask.b32 %r14;
    st.global.u32 [%rd3+8], %r14;
JOIN:
    and.b32 %r15, %r2, 7;
    mov.u32 %r16, 0;
    mov.u32 %r17, 0;
    setp.eq.u32 %p2, %r15, 0;
    @%p2 bra DONE;
LOOP:
    activemask.b32 %r18;
    mad.lo.s32 %r16, %r16, 3, %r18;
    add.u32 %r17, %r17, 1;
    setp.lt.u32 %p3, %r17, %r15;
    @%p3 bra LOOP;
DONE:
    st.global.u32 [%rd3+12], %r16;
    activemask.b32 %r19;
    st.global.u32 [%rd3+16], %r19;
"#;
    let (out, last) = run("activemask", "", body);
    assert!(
        has(&out.sass, |t| t.starts_with("VOTE.ANY R")
            && t.ends_with(", PT, PT")),
        "activemask is VOTE.ANY Rd, PT, PT as in ptxas:\n{}",
        out.sass
    );
    assert_eq!(word(&last, 0, 0), u32::MAX);
    assert_eq!(word(&last, 63, 4), u32::MAX);
    // An odd lane's mask on its side holds exactly the odd lanes of its warp.
    let odd = |g: usize| {
        word(&last, g, 0) != 0 && {
            let input = &launch(3).global[0].bytes;
            u32::from_le_bytes(input[4 * g..4 * g + 4].try_into().unwrap()) & 1 == 1
        }
    };
    if let Some(g) = (0..32).find(|&g| odd(g)) {
        let mask = word(&last, g, 1);
        assert!((0..32).all(|l| (mask >> l & 1 == 1) == odd(l)), "{mask:#x}");
    }
}

#[test]
fn shfl_sync_modes() {
    // Every mode with the full member mask, the `|p` in-range predicate, register and
    // immediate lane operands, and a broadcast from lane 0 after a divergent loop.
    let body = r#"
    shfl.sync.bfly.b32 %r12, %r2, 1, 31, -1;
    st.global.u32 [%rd3], %r12;
    shfl.sync.up.b32 %r13|%p1, %r2, 3, 0, -1;
    selp.u32 %r13, %r13, 7, %p1;
    st.global.u32 [%rd3+4], %r13;
    and.b32 %r14, %r2, 31;
    shfl.sync.down.b32 %r15|%p2, %r2, %r14, 31, 0xffffffff;
    selp.u32 %r15, %r15, 9, %p2;
    st.global.u32 [%rd3+8], %r15;
    shfl.sync.idx.b32 %r16, %r2, %r14, 0x1f, -1;
    st.global.u32 [%rd3+12], %r16;
    shfl.sync.idx.b32 %r17, %r2, 5, 0x181f, -1;
    st.global.u32 [%rd3+16], %r17;
    and.b32 %r18, %r2, 3;
    mov.u32 %r19, %r2;
    setp.eq.u32 %p3, %r18, 0;
    @%p3 bra DONE;
LOOP:
    add.u32 %r19, %r19, %r18;
    sub.u32 %r18, %r18, 1;
    setp.ne.u32 %p4, %r18, 0;
    @%p4 bra LOOP;
DONE:
    shfl.sync.idx.b32 %r20, %r19, 0, 31, -1;
    st.global.u32 [%rd3+20], %r20;
"#;
    let (out, _) = run("shfl_sync", "", body);
    assert!(has(&out.sass, |t| t.starts_with("SHFL.BFLY")));
    assert!(has(&out.sass, |t| t.starts_with("SHFL.UP")));
    assert!(has(&out.sass, |t| t.starts_with("SHFL.DOWN")));
    assert!(has(&out.sass, |t| t.starts_with("SHFL.IDX")));
}

#[test]
fn vote_sync_modes_under_divergence() {
    let body = r#"
    setp.lt.u32 %p1, %r2, 0x80000000;
    vote.sync.all.pred %p2, %p1, -1;
    vote.sync.any.pred %p3, !%p1, -1;
    vote.sync.uni.pred %p4, %p1, -1;
    vote.sync.ballot.b32 %r12, %p1, -1;
    selp.u32 %r13, 1, 0, %p2;
    selp.u32 %r14, 2, 0, %p3;
    selp.u32 %r15, 4, 0, %p4;
    or.b32 %r13, %r13, %r14;
    or.b32 %r13, %r13, %r15;
    st.global.u32 [%rd3], %r13;
    st.global.u32 [%rd3+4], %r12;
    and.b32 %r16, %r2, 2;
    setp.eq.u32 %p5, %r16, 0;
    @%p5 bra SKIP;
    vote.sync.ballot.b32 %r17, %p1, -1;
    vote.sync.all.pred %p6, %p1, -1;
    selp.u32 %r18, 1, 0, %p6;
    st.global.u32 [%rd3+8], %r17;
    st.global.u32 [%rd3+12], %r18;
SKIP:
"#;
    let (out, _) = run("vote_sync", "", body);
    for m in ["VOTE.ALL", "VOTE.ANY", "VOTE.EQ"] {
        assert!(has(&out.sass, |t| t.starts_with(m)), "{m}\n{}", out.sass);
    }
}

#[test]
fn membar_scopes() {
    let body = r#"
    st.global.u32 [%rd3], %r2;
    membar.cta;
    st.global.u32 [%rd3+4], %r1;
    membar.gl;
    st.global.u32 [%rd3+8], %r9;
    membar.sys;
    st.global.u32 [%rd3+12], %r2;
"#;
    let (out, _) = run("membar", "", body);
    for m in ["MEMBAR.CTA", "MEMBAR.GL", "MEMBAR.SYS"] {
        assert!(has(&out.sass, |t| t.starts_with(m)), "{m}\n{}", out.sass);
    }
}

#[test]
fn pmevent_emits_nothing() {
    let body = "    pmevent 1;\n    pmevent.mask 3;\n    st.global.u32 [%rd3], %r2;";
    let (out, _) = run("pmevent", "", body);
    let n = texts(&out.sass).len();
    let (plain, _) = run("pmevent_none", "", "    st.global.u32 [%rd3], %r2;");
    assert_eq!(n, texts(&plain.sass).len(), "{}", out.sass);
}

#[test]
fn brkpt_is_bpt_trap_as_in_ptxas() {
    // Never reached (no thread has index 1000): eval and sim agree on the rest; reached, both
    // stop the launch.
    let body = r#"
    setp.eq.u32 %p1, %r1, 1000;
    @%p1 brkpt;
    st.global.u32 [%rd3], %r2;
"#;
    let (out, _) = run("brkpt", "", body);
    assert!(
        has(&out.sass, |t| t.starts_with("BPT.TRAP 0x1")),
        "{}",
        out.sass
    );

    let src = kernel("", "    brkpt;\n    st.global.u32 [%rd3], %r2;");
    let out = compile_checked("brkpt_reached", &src);
    let module = common::ir_module("brkpt_reached.ptx", src.as_str());
    let l = launch(0);
    assert!(matches!(
        eval::run(&module, "k", &l),
        Err(EvalError::Trapped { .. })
    ));
    assert!(matches!(
        sim::run_cubin(&out.cubin, "k", &l),
        Err(sim::SimError::Trap { .. })
    ));
}

#[test]
fn sm_count_and_warp_count_registers() {
    let body = r#"
    mov.u32 %r12, %nsmid;
    st.global.u32 [%rd3], %r12;
    mov.u32 %r13, %nwarpid;
    st.global.u32 [%rd3+4], %r13;
    mov.u32 %r14, %smid;
    mov.u32 %r15, %warpid;
    add.u32 %r14, %r14, %r15;
    st.global.u32 [%rd3+8], %r14;
"#;
    let (out, last) = run("nsmid", "", body);
    assert!(has(&out.sass, |t| t.starts_with("S2R R")
        && t.ends_with("SR_VIRTCFG")));
    assert!(has(&out.sass, |t| t.starts_with("MOV32I") && t.contains("0x40")));
    assert_eq!((word(&last, 7, 0), word(&last, 7, 1)), (1, 64));
}

#[test]
fn shared_size_registers() {
    // 40 bytes of static shared memory (rounded to 48) and the launch's dynamic bytes.
    let decls = ".shared .align 4 .b32 sm[10];\n.extern .shared .align 4 .b32 dyn[];";
    let body = r#"
    mov.u32 %r12, %dynamic_smem_size;
    st.global.u32 [%rd3], %r12;
    mov.u32 %r13, %total_smem_size;
    st.global.u32 [%rd3+4], %r13;
    shl.b32 %r14, %r9, 2;
    mov.u32 %r15, dyn;
    add.s32 %r15, %r15, %r14;
    st.shared.u32 [%r15], %r13;
    setp.lt.u32 %p1, %r9, 10;
    mov.u32 %r16, sm;
    add.s32 %r16, %r16, %r14;
    @%p1 st.shared.u32 [%r16], %r12;
"#;
    let src = kernel(decls, body);
    let out = compile_checked("smem_size", &src);
    assert!(
        has(&out.sass, |t| t.contains("c[0x0][0xfc]")),
        "{}",
        out.sass
    );
    assert!(has(&out.sass, |t| t.contains("SR_SMEMSZ")), "{}", out.sass);
    let last = differential("smem_size", &src, &out, 4, |l| l.dynamic_shared = 256);
    assert_eq!((word(&last, 9, 0), word(&last, 9, 1)), (256, 48 + 256));
}

#[test]
fn envreg_reads_the_drivers_words() {
    let body = r#"
    mov.u32 %r12, %envreg0;
    st.global.u32 [%rd3], %r12;
    mov.u32 %r13, %envreg31;
    add.u32 %r13, %r13, %r2;
    st.global.u32 [%rd3+4], %r13;
"#;
    let (out, _) = run("envreg", "", body);
    assert!(
        has(&out.sass, |t| t.contains("c[0x0][0x30]")),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |t| t.contains("c[0x0][0xac]")),
        "{}",
        out.sass
    );
}

/// A kernel reading a timer or counter: ptxas's shape; a performance counter has no fixed
/// value (eval refuses, sim runs), the global timer reads the clock model both share
/// (`ir::eval`, "Clocks and timers"), so both store the same bytes.
fn timer(test: &str, body: &str, want: &[&str]) {
    let src = kernel("", body);
    let out = compile_checked(test, &src);
    for w in want {
        assert!(
            has(&out.sass, |t| t.contains(w)),
            "{test}: {w}\n{}",
            out.sass
        );
    }
    let module = common::ir_module(format!("{test}.ptx"), src.as_str());
    let l = launch(0);
    let got = sim::run_cubin(&out.cubin, "k", &l).unwrap_or_else(|e| panic!("{test}: sim: {e}"));
    if body.contains("%pm") {
        assert!(
            matches!(
                eval::run(&module, "k", &l),
                Err(EvalError::Unknowable { .. })
            ),
            "{test}: eval must refuse"
        );
    } else {
        let want = eval::run(&module, "k", &l).unwrap_or_else(|e| panic!("{test}: eval: {e}"));
        assert_eq!(
            want.global.first(),
            got.global.first(),
            "{test}: the clock model differs"
        );
    }
}

#[test]
fn globaltimer_reads() {
    timer(
        "globaltimer_lo",
        "    mov.u32 %r12, %globaltimer_lo;\n    st.global.u32 [%rd3], %r12;",
        &["CS2R R", "SR_GLOBALTIMERLO"],
    );
    timer(
        "globaltimer_hi",
        "    mov.u32 %r12, %globaltimer_hi;\n    st.global.u32 [%rd3], %r12;",
        &["SR_GLOBALTIMERHI"],
    );
    // 64-bit: high, low, and the high word again when the low word's top bit is clear.
    timer(
        "globaltimer",
        "    mov.u64 %rd8, %globaltimer;\n    st.global.u64 [%rd3], %rd8;",
        &["SR_GLOBALTIMERLO", "SR_GLOBALTIMERHI", "@!P0 CS2R"],
    );
}

#[test]
fn performance_counter_reads() {
    timer(
        "pm0",
        "    mov.u32 %r12, %pm0;\n    st.global.u32 [%rd3], %r12;",
        &["CS2R R", "SR_PM0"],
    );
    timer(
        "pm7",
        "    mov.u32 %r12, %pm7;\n    st.global.u32 [%rd3], %r12;",
        &["SR_PM7"],
    );
    timer(
        "pm3_64",
        "    mov.u64 %rd8, %pm3_64;\n    st.global.u64 [%rd3], %rd8;",
        &["SR_PM3", "SR_PM_HI3", "@!P0 CS2R"],
    );
}

#[test]
fn bad_special_registers_are_errors() {
    for (reg, dst) in [
        ("%envreg32", "u32 %r12"),
        ("%pm8", "u32 %r12"),
        ("%pm8_64", "u64 %rd8"),
    ] {
        let src = kernel("", &format!("    mov.{dst}, {reg};"));
        let opts = Options {
            file_name: "bad.ptx".into(),
            ..Options::default()
        };
        let Err(d) = compile(&src, &opts) else {
            panic!("{reg} compiled");
        };
        let text = leafold::error::render_all(&d.0);
        assert!(text.contains("bad.ptx:"), "{text}");
    }
}

#[test]
fn lop3_is_lop3_lut() {
    // Three lookup tables: xor of three (0x96), majority (0xe8) and a ^ b (0x3c), on random
    // words and the thread index.
    let body = r#"
    mul.lo.u32 %r12, %r2, 0x9e3779b9;
    lop3.b32 %r13, %r2, %r12, %r1, 0x96;
    st.global.u32 [%rd3], %r13;
    lop3.b32 %r14, %r2, %r12, %r9, 0xe8;
    st.global.u32 [%rd3+4], %r14;
    lop3.b32 %r15, %r12, %r2, %r2, 0x3c;
    st.global.u32 [%rd3+8], %r15;
"#;
    let (out, last) = run("lop3", "", body);
    assert!(has(&out.sass, |t| t.starts_with("LOP3.LUT")
        && t.ends_with("0x96")));
    assert!(has(&out.sass, |t| t.starts_with("LOP3.LUT")
        && t.ends_with("0xe8")));
    // 0x96 is a ^ b ^ c.
    let input = &launch(3).global[0].bytes;
    let a = u32::from_le_bytes(input[20..24].try_into().unwrap());
    assert_eq!(word(&last, 5, 0), a ^ a.wrapping_mul(0x9e37_79b9) ^ 5);
}

#[test]
fn add_sub_sat_s32_is_iadd_sat() {
    // Random words and edge values (0, -1 and the sign boundaries, from the input mix and
    // the constants) against each other, both directions.
    let body = r#"
    mul.lo.u32 %r12, %r2, 0x9e3779b9;
    add.sat.s32 %r13, %r2, %r12;
    st.global.u32 [%rd3], %r13;
    sub.sat.s32 %r14, %r2, %r12;
    st.global.u32 [%rd3+4], %r14;
    mov.u32 %r15, 0x7fffffff;
    add.sat.s32 %r16, %r15, %r2;
    st.global.u32 [%rd3+8], %r16;
    mov.u32 %r17, 0x80000000;
    sub.sat.s32 %r18, %r17, %r2;
    st.global.u32 [%rd3+12], %r18;
    sub.sat.s32 %r19, %r2, %r17;
    st.global.u32 [%rd3+16], %r19;
"#;
    let (out, last) = run("add_sat", "", body);
    assert!(has(&out.sass, |t| t.starts_with("IADD.SAT R")
        && !t.contains('-')));
    assert!(has(&out.sass, |t| t.starts_with("IADD.SAT R")
        && t.contains(", -R")));
    // Thread g's third word: MAX + x saturates to MAX for x >= 0, else MAX + x exactly.
    let input = &launch(3).global[0].bytes;
    for g in 0..(THREADS * CTAS) as usize {
        let x = i32::from_le_bytes(input[4 * g..4 * g + 4].try_into().unwrap());
        let want = (i64::from(i32::MAX) + i64::from(x)).min(i64::from(i32::MAX)) as i32;
        assert_eq!(word(&last, g, 2) as i32, want, "thread {g}");
    }
}

#[test]
fn mad_hi_sat_and_mad24_hi_sat() {
    // The high product plus c saturates (c near the limits makes it happen).
    let body = r#"
    mul.lo.u32 %r12, %r2, 0x9e3779b9;
    xor.b32 %r13, %r2, 0x7ffffff0;
    mad.hi.sat.s32 %r14, %r2, %r12, %r13;
    st.global.u32 [%rd3], %r14;
    mad24.hi.sat.s32 %r15, %r2, %r12, %r13;
    st.global.u32 [%rd3+4], %r15;
    mad.hi.s32 %r16, %r2, %r12, %r13;
    st.global.u32 [%rd3+8], %r16;
"#;
    let (out, last) = run("mad_sat", "", body);
    // mad.hi.sat: IMAD.HI.SAT, as ptxas; mad24.hi.sat: the high product and IADD.SAT, as
    // ptxas.
    assert!(
        has(&out.sass, |t| t.starts_with("IMAD.HI.SAT R")),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |t| t.starts_with("IADD.SAT R")),
        "{}",
        out.sass
    );
    // Where the plain sum wraps, the saturated one is clamped.
    let wrapped = (0..(THREADS * CTAS) as usize).find(|&g| {
        let (s, p) = (word(&last, g, 0) as i32, word(&last, g, 2) as i32);
        s != p
    });
    if let Some(g) = wrapped {
        let s = word(&last, g, 0) as i32;
        assert!(s == i32::MAX || s == i32::MIN, "thread {g}: {s:#x}");
    }
}
