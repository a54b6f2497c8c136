//! `prefetch`/`prefetchu` and barriers with a register barrier number or thread count (issue
//! 19 point 2). Each test checks:
//!
//! * the kernel compiles, and its SASS has the shape ptxas 11.8 gives the construct
//!   (`CCTL.E.PF1/PF2`, `CCTLL.PF1/PF2`; `BAR.SYNC Ra`, `BAR.SYNC id, Rb`, `BFI` then
//!   `BAR.ARV Rx, Rx`, each followed by `MEMBAR.CTA`), probed with `ptxas -arch=sm_50`;
//! * the hazard checker finds nothing in our `.text`;
//! * with the oracle installed, `cuobjdump -sass` lists our cubin exactly as our printer does
//!   and nvdisasm prints every word of it the same way;
//! * `ir::eval` (the PTX meaning) and the simulator running our SASS write the same bytes over
//!   random launches of 2 CTAs × 64 threads; the barrier number and count come from kernel
//!   parameters, and `ir::eval` refuses a number of 16 or more and a count that is not a
//!   multiple of 32 as undefined.
//!
//! Every kernel has parameters `(in, out, ...)`: thread `g` (global index) reads the word
//! `in[g]` and writes its results to `out[8g .. 8g + 8]` (words).

mod common;

use common::warp_kernel::*;

use leafold::driver::{compile, Options};
use leafold::ir::eval::{self, EvalError, Launch};
use leafold::sim;

/// The instruction after each one that `pred` matches.
fn followers(sass: &str, pred: impl Fn(&str) -> bool) -> Vec<String> {
    let t = texts(sass);
    (0..t.len())
        .filter(|&k| pred(&t[k]))
        .map(|k| t.get(k + 1).cloned().unwrap_or_default())
        .collect()
}

#[test]
fn prefetch_is_cctl_and_changes_nothing() {
    // Every form ptxas takes for sm_5x, on this thread's input word, a local buffer, a
    // guarded one, a byte offset (CCTL counts words: added to the address first, as ptxas),
    // and a null address (a hint must not fault); then the word is stored.
    let decls = "";
    let body = r#"
    .local .align 4 .b8 buf[64];
    prefetch.global.L1 [%rd5];
    prefetch.global.L2 [%rd5+64];
    prefetch.L1 [%rd5+8];
    prefetch.L2 [%rd5];
    prefetchu.L1 [%rd5+4];
    prefetch.global.L1 [%rd5+3];
    mov.u64 %rd7, 0;
    prefetch.global.L2 [%rd7];
    prefetch.L1 [%rd7+-16];
    and.b32 %r12, %r1, 15;
    shl.b32 %r12, %r12, 2;
    mov.u32 %r13, buf;
    add.u32 %r13, %r13, %r12;
    st.local.u32 [%r13], %r2;
    prefetch.local.L1 [%r13];
    prefetch.local.L2 [buf+12];
    setp.lt.u32 %p1, %r2, 1000;
    @%p1 prefetch.global.L1 [%rd5+128];
    ld.local.u32 %r14, [%r13];
    st.global.u32 [%rd3], %r14;
    st.global.u32 [%rd3+4], %r1;
"#;
    let (out, last) = run("prefetch", decls, body);
    for want in ["CCTL.E.PF1 [", "CCTL.E.PF2 [", "CCTLL.PF1 [", "CCTLL.PF2 ["] {
        assert!(
            has(&out.sass, |t| t.contains(want)),
            "no {want}:\n{}",
            out.sass
        );
    }
    // No prefetch became a load or store of its own: the memory instructions are the input
    // load, the local store and load, and the two output stores.
    let mem = texts(&out.sass)
        .iter()
        .filter(|t| {
            ["LDG", "STG", "LDL", "STL", "LD.", "ST."]
                .iter()
                .any(|m| t.contains(m))
        })
        .count();
    assert_eq!(mem, 5, "{}", out.sass);
    // Thread 3 wrote its own index next to its input word.
    assert_eq!(word(&last, 3, 1), 3);
}

/// A kernel whose barrier number is parameter `pid` and thread count parameter `pcnt`:
/// every thread stores its word to shared memory, meets the others at `bar.sync %rid`, and
/// reads its neighbour's; then the other register forms, and `bar.red` reductions of
/// "my word is even" under register operands.
fn barrier_kernel() -> String {
    let decls = ".shared .align 4 .b32 sm[64];";
    let body = r#"
    ld.param.u32 %r20, [pid];
    ld.param.u32 %r21, [pcnt];
    shl.b32 %r12, %r9, 2;
    mov.u32 %r13, sm;
    add.u32 %r14, %r13, %r12;
    st.shared.u32 [%r14], %r2;
    bar.sync %r20;
    add.u32 %r15, %r9, 1;
    and.b32 %r15, %r15, 63;
    shl.b32 %r15, %r15, 2;
    add.u32 %r15, %r13, %r15;
    ld.shared.u32 %r16, [%r15];
    st.global.u32 [%rd3], %r16;
    bar.sync 1, %r21;
    st.shared.u32 [%r14], %r1;
    bar.sync %r20, 64;
    ld.shared.u32 %r17, [%r15];
    st.global.u32 [%rd3+4], %r17;
    barrier.sync %r20;
    bar.arrive %r20, %r21;
    and.b32 %r18, %r2, 1;
    setp.eq.u32 %p1, %r18, 0;
    bar.red.popc.u32 %r22, %r20, %r21, %p1;
    st.global.u32 [%rd3+8], %r22;
    bar.red.or.pred %p2, %r20, !%p1;
    selp.u32 %r23, 1, 0, %p2;
    st.global.u32 [%rd3+12], %r23;
    bar.red.and.pred %p3, 3, %r21, %p1;
    selp.u32 %r24, 1, 0, %p3;
    st.global.u32 [%rd3+16], %r24;
    bar.red.popc.u32 %r25, %r20, 64, %p1;
    st.global.u32 [%rd3+20], %r25;
"#;
    kernel_with(decls, ", .param .u32 pid, .param .u32 pcnt", body)
}

/// Append the barrier number and count parameters (after `in`, `out`: offset 16).
fn bar_params(l: &mut Launch, id: u32, count: u32) {
    l.params.extend(id.to_le_bytes());
    l.params.extend(count.to_le_bytes());
}

#[test]
fn bar_with_register_number_and_count_from_parameters() {
    let src = barrier_kernel();
    let out = compile_checked("bar_reg", &src);
    let t = texts(&out.sass);
    for want in [
        "BAR.SYNC R",
        "BAR.SYNC 0x1, R",
        "BAR.ARV R",
        "BAR.RED.POPC R",
        "BAR.RED.OR R",
    ] {
        assert!(
            t.iter().any(|x| x.starts_with(want)),
            "no {want}:\n{}",
            out.sass
        );
    }
    assert!(
        t.iter()
            .any(|x| x.starts_with("BAR.SYNC R") && x.ends_with(", 0x40")),
        "no BAR.SYNC Ra, 0x40:\n{}",
        out.sass
    );
    assert!(
        t.iter().any(|x| x.starts_with("BAR.RED.AND 0x3, R")),
        "no BAR.RED.AND 0x3, Rb:\n{}",
        out.sass
    );
    // Number and count both in registers: packed by one BFI (count into bits 16..27), the
    // register named twice, as ptxas 11.8.
    assert!(
        has(&out.sass, |x| x.starts_with("BFI") && x.contains("0xc10")),
        "{}",
        out.sass
    );
    assert!(
        t.iter().any(|x| {
            let ops: Vec<&str> = x.trim_start_matches("BAR.ARV ").split(", ").collect();
            x.starts_with("BAR.ARV R") && ops.len() == 2 && ops[0] == ops[1]
        }),
        "BAR.ARV does not name one register twice:\n{}",
        out.sass
    );
    // ptxas follows every BAR with a register operand by MEMBAR.CTA.
    let after = followers(&out.sass, |x| x.starts_with("BAR."));
    assert_eq!(after.len(), 9, "{}", out.sass);
    assert!(
        after.iter().all(|x| x == "MEMBAR.CTA"),
        "{after:?}\n{}",
        out.sass
    );
    // Several barrier numbers, the CTA's whole count.
    let mut last = Vec::new();
    for (seed, id) in [0u32, 5, 15, 9].into_iter().enumerate() {
        let module = common::ir_module("bar_reg.ptx", &src);
        let mut l = launch(seed as u64);
        bar_params(&mut l, id, THREADS);
        let want = eval::run(&module, "k", &l).unwrap_or_else(|e| panic!("eval: {e}"));
        let got = sim::run_cubin(&out.cubin, "k", &l)
            .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        let (a, b) = (got.region(OUT).unwrap(), want.region(OUT).unwrap());
        assert!(a == b, "id {id}: sim and eval differ\n{}", out.sass);
        last = a.to_vec();
    }
    // Thread 0 of CTA 0 read thread 1's input word and index; the reductions are those of
    // "input word even" over its CTA.
    let input = |g: usize| {
        let l = launch(3);
        let b = &l.global[0].bytes;
        u32::from_le_bytes(b[4 * g..4 * g + 4].try_into().unwrap())
    };
    assert_eq!(word(&last, 0, 0), input(1));
    assert_eq!(word(&last, 0, 1), 1);
    let even = (0..THREADS as usize).filter(|&g| input(g) % 2 == 0).count() as u32;
    assert_eq!(word(&last, 0, 2), even);
    assert_eq!(word(&last, 0, 3), u32::from(even < THREADS));
    assert_eq!(word(&last, 0, 4), u32::from(even == THREADS));
    assert_eq!(word(&last, 0, 5), even);
}

#[test]
fn eval_refuses_a_register_barrier_number_or_count_out_of_range() {
    let src = barrier_kernel();
    let module = common::ir_module("bar_reg_bad.ptx", &src);
    for (id, count) in [(16, THREADS), (0xffff_ffff, THREADS), (0, 48), (0, 0)] {
        let mut l = launch(0);
        bar_params(&mut l, id, count);
        match eval::run(&module, "k", &l) {
            Err(EvalError::Undefined { why, .. }) => {
                assert!(why.contains("barrier"), "id {id} count {count}: {why}")
            }
            other => panic!("id {id} count {count}: expected undefined, got {other:?}"),
        }
    }
}

#[test]
fn bad_barrier_immediates_with_a_register_are_diagnosed() {
    for (body, want) in [
        ("bar.sync 16, %r2;", "outside 0..15"),
        ("bar.sync %r2, 40;", "multiple of 32"),
        ("bar.arrive %r2;", "without a thread count"),
    ] {
        let src = kernel("", body);
        let opts = Options {
            file_name: "bad.ptx".into(),
            ..Options::default()
        };
        let err = compile(&src, &opts)
            .err()
            .unwrap_or_else(|| panic!("{body} compiled"));
        let text = leafold::error::render_all(&err.0);
        assert!(text.contains(want), "{body}: {text}");
    }
}
