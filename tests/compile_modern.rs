//! Issue 26 on hand-written PTX, one test per construct: the warp collectives sm_5x lacks
//! (`redux.sync`, `match.{any,all}.sync`, `elect.sync`, emulated by `ir::collective`), the
//! atomics it lacks (`atom/red.add.f64`, `.add.noftz.f16/.f16x2`, `atom.cas.b16`: CAS loops), memory-ordering
//! qualifiers and fences (`MEMBAR` of the scope), the hints and directives that mean nothing
//! on Maxwell, and the located errors for what cannot run there.
//!
//! Each kernel goes through `common::warp_kernel` (hazards; with the oracle, cuobjdump and
//! nvdisasm print our listing; `ir::eval` = the simulator on 4 random launches of 2 CTAs ×
//! 64 threads), and the results are also checked against a model of the PTX definition
//! written here from the inputs, so that a wrong meaning in `ir::eval` fails too.

mod common;

use common::warp_kernel::*;
use leafold::driver::{compile, Options};

/// The input word of global thread `g` in the last launch `run` makes (seed 3).
fn input(g: usize) -> u32 {
    let b = &launch(3).global[0].bytes;
    u32::from_le_bytes(b[4 * g..4 * g + 4].try_into().unwrap())
}

/// The global threads of `g`'s warp.
fn warp_of(g: usize) -> std::ops::Range<usize> {
    (g / 32 * 32)..(g / 32 * 32 + 32)
}

#[test]
fn redux_full_partial_and_split_masks() {
    let body = r#"
    redux.sync.add.u32 %r12, %r2, -1;
    st.global.u32 [%rd3], %r12;
    redux.sync.min.s32 %r13, %r2, -1;
    st.global.u32 [%rd3+4], %r13;
    redux.sync.max.u32 %r14, %r2, 0xffffffff;
    st.global.u32 [%rd3+8], %r14;
    redux.sync.xor.b32 %r15, %r2, -1;
    st.global.u32 [%rd3+12], %r15;
    // The lanes with an even input, inside the branch only they take.
    and.b32 %r16, %r2, 1;
    setp.eq.u32 %p1, %r16, 0;
    vote.sync.ballot.b32 %r17, %p1, -1;
    mov.u32 %r18, 0;
    mov.u32 %r19, 0;
    @!%p1 bra SKIP;
    redux.sync.add.u32 %r18, %r2, %r17;
    redux.sync.min.u32 %r19, %r2, %r17;
SKIP:
    st.global.u32 [%rd3+16], %r18;
    st.global.u32 [%rd3+20], %r19;
    // Two groups at once: each half-warp reduces over itself.
    and.b32 %r20, %r9, 16;
    setp.eq.u32 %p2, %r20, 0;
    selp.u32 %r21, 0xffff, 0xffff0000, %p2;
    redux.sync.max.s32 %r22, %r2, %r21;
    st.global.u32 [%rd3+24], %r22;
    redux.sync.or.b32 %r23, %r2, %r21;
    redux.sync.and.b32 %r24, %r23, %r21;
    st.global.u32 [%rd3+28], %r24;
"#;
    let (out, last) = run("redux", "", body);
    // A full mask is a butterfly (5 SHFL.BFLY each); the others loop over the members.
    let t = texts(&out.sass);
    assert_eq!(
        t.iter().filter(|s| s.starts_with("SHFL.BFLY")).count(),
        20,
        "{}",
        out.sass
    );
    assert!(has(&out.sass, |s| s.starts_with("SHFL.IDX")));
    for g in [0, 5, 31, 40, 63, 64, 127] {
        let w: Vec<u32> = warp_of(g).map(input).collect();
        assert_eq!(
            word(&last, g, 0),
            w.iter().fold(0u32, |a, &x| a.wrapping_add(x))
        );
        assert_eq!(
            word(&last, g, 1),
            w.iter().map(|&x| x as i32).min().unwrap() as u32
        );
        assert_eq!(word(&last, g, 2), *w.iter().max().unwrap());
        assert_eq!(word(&last, g, 3), w.iter().fold(0, |a, &x| a ^ x));
        let even: Vec<u32> = w.iter().copied().filter(|x| x & 1 == 0).collect();
        if input(g) & 1 == 0 {
            assert_eq!(
                word(&last, g, 4),
                even.iter().fold(0u32, |a, &x| a.wrapping_add(x))
            );
            assert_eq!(word(&last, g, 5), *even.iter().min().unwrap());
        }
        let half: Vec<u32> = warp_of(g)
            .filter(|&h| (h % 32 < 16) == (g % 32 < 16))
            .map(input)
            .collect();
        assert_eq!(
            word(&last, g, 6),
            half.iter().map(|&x| x as i32).max().unwrap() as u32
        );
        assert_eq!(word(&last, g, 7), half.iter().fold(0, |a, &x| a | x));
    }
}

#[test]
fn match_any_and_all_b32_b64() {
    let body = r#"
    .reg .b64 %rdm<4>;
    and.b32 %r12, %r2, 3;
    match.any.sync.b32 %r13, %r12, -1;
    st.global.u32 [%rd3], %r13;
    // 64 bits: equal low words, high words that differ by input bit 2.
    and.b32 %r14, %r2, 4;
    cvt.u64.u32 %rdm1, %r14;
    shl.b64 %rdm1, %rdm1, 32;
    or.b64 %rdm1, %rdm1, 7;
    match.any.sync.b64 %r15, %rdm1, -1;
    st.global.u32 [%rd3+4], %r15;
    match.all.sync.b32 %r16|%p1, %r12, -1;
    selp.u32 %r17, 1, 0, %p1;
    st.global.u32 [%rd3+8], %r16;
    st.global.u32 [%rd3+12], %r17;
    // The same value in every lane of a warp.
    shr.u32 %r18, %r1, 5;
    match.all.sync.b32 %r19|%p2, %r18, -1;
    selp.u32 %r20, 1, 0, %p2;
    st.global.u32 [%rd3+16], %r19;
    st.global.u32 [%rd3+20], %r20;
    // Among the odd lanes only, in their branch (a 64-bit match.all without p).
    and.b32 %r21, %r9, 1;
    setp.eq.u32 %p3, %r21, 1;
    mov.u32 %r22, 0;
    mov.u32 %r23, 0;
    @!%p3 bra SKIP;
    match.any.sync.b32 %r22, %r12, 0xaaaaaaaa;
    cvt.u64.u32 %rdm2, %r18;
    match.all.sync.b64 %r23, %rdm2, 0xaaaaaaaa;
SKIP:
    st.global.u32 [%rd3+24], %r22;
    st.global.u32 [%rd3+28], %r23;
"#;
    let (out, last) = run("match", "", body);
    assert!(
        has(&out.sass, |s| s.starts_with("SHFL.IDX")),
        "{}",
        out.sass
    );
    for g in [0, 1, 17, 31, 32, 50, 63, 64, 100, 127] {
        let lane_mask = |f: &dyn Fn(usize) -> bool| {
            warp_of(g)
                .filter(|&h| f(h))
                .fold(0u32, |m, h| m | 1 << (h % 32))
        };
        let v = input(g) & 3;
        assert_eq!(word(&last, g, 0), lane_mask(&|h| input(h) & 3 == v));
        let v64 = input(g) & 4;
        assert_eq!(word(&last, g, 1), lane_mask(&|h| input(h) & 4 == v64));
        let all = warp_of(g).all(|h| input(h) & 3 == v);
        assert_eq!(word(&last, g, 2), if all { u32::MAX } else { 0 });
        assert_eq!(word(&last, g, 3), all as u32);
        assert_eq!((word(&last, g, 4), word(&last, g, 5)), (u32::MAX, 1));
        if g % 2 == 1 {
            assert_eq!(
                word(&last, g, 6),
                lane_mask(&|h| h % 2 == 1 && input(h) & 3 == v)
            );
            assert_eq!(word(&last, g, 7), 0xaaaa_aaaa);
        }
    }
}

#[test]
fn elect_lowest_member_full_divergent_and_sink() {
    let body = r#"
    elect.sync %r12|%p1, -1;
    selp.u32 %r13, 1, 0, %p1;
    st.global.u32 [%rd3], %r12;
    st.global.u32 [%rd3+4], %r13;
    and.b32 %r14, %r2, 1;
    setp.eq.u32 %p2, %r14, 1;
    mov.u32 %r15, 99;
    mov.u32 %r16, 99;
    @!%p2 bra SKIP;
    activemask.b32 %r17;
    elect.sync %r15|%p3, %r17;
    elect.sync _|%p4, %r17;
    selp.u32 %r16, 1, 0, %p4;
SKIP:
    st.global.u32 [%rd3+8], %r15;
    st.global.u32 [%rd3+12], %r16;
"#;
    let (out, last) = run("elect", "", body);
    assert!(
        has(&out.sass, |s| s.starts_with("FLO.U32.SH")),
        "{}",
        out.sass
    );
    for g in [0, 1, 2, 31, 32, 33, 77, 127] {
        assert_eq!(word(&last, g, 0), 0);
        assert_eq!(word(&last, g, 1), (g % 32 == 0) as u32);
        if input(g) & 1 == 1 {
            let first = warp_of(g).find(|&h| input(h) & 1 == 1).unwrap();
            assert_eq!(word(&last, g, 2), (first % 32) as u32);
            assert_eq!(word(&last, g, 3), (first == g) as u32);
        } else {
            assert_eq!((word(&last, g, 2), word(&last, g, 3)), (99, 99));
        }
    }
}

#[test]
fn atom_add_f64_global_shared_generic() {
    // Contended adds of integers (exact in any order) into words 0-1 of threads 0..3's
    // slots (global) and into a shared array copied out by threads 0..3 of each CTA; an
    // uncontended add of two arbitrary doubles whose rounding is checked; a generic one.
    let decls = ".shared .align 8 .f64 sacc[4];";
    let body = r#"
    .reg .f64 %fd<8>;
    .reg .b64 %rdf<8>;
    and.b32 %r12, %r1, 3;
    mul.wide.u32 %rdf1, %r12, 32;
    add.s64 %rdf2, %rd2, %rdf1;
    and.b32 %r13, %r2, 0xffff;
    cvt.rn.f64.u32 %fd1, %r13;
    red.global.add.f64 [%rdf2], %fd1;
    setp.lt.u32 %p1, %r9, 4;
    and.b32 %r14, %r9, 3;
    mov.u32 %r15, sacc;
    shl.b32 %r16, %r14, 3;
    add.u32 %r15, %r15, %r16;
    mov.f64 %fd2, 0d0000000000000000;
    @%p1 st.shared.f64 [%r15], %fd2;
    bar.sync 0;
    atom.shared.add.f64 %fd3, [%r15], %fd1;
    bar.sync 0;
    ld.shared.f64 %fd4, [%r15];
    @%p1 st.global.f64 [%rd3+8], %fd4;
    cvt.rn.f64.s32 %fd5, %r2;
    mul.f64 %fd5, %fd5, 0d3FB999999999999A;
    st.global.f64 [%rd3+16], %fd5;
    atom.global.add.f64 %fd6, [%rd3+16], %fd5;
    cvta.global.u64 %rdf3, %rd3;
    atom.add.f64 %fd7, [%rdf3+16], %fd1;
    st.global.f64 [%rd3+24], %fd7;
"#;
    let (out, last) = run("atom_f64", decls, body);
    let t = texts(&out.sass);
    assert!(
        t.iter().any(|s| s.starts_with("ATOM.E.CAS.64")),
        "{}",
        out.sass
    );
    assert!(
        t.iter().any(|s| s.starts_with("ATOMS.CAS.64")),
        "{}",
        out.sass
    );
    let f = |g: usize, w: usize| {
        f64::from_bits(u64::from(word(&last, g, w)) | u64::from(word(&last, g, w + 1)) << 32)
    };
    for k in 0..4 {
        let sum: f64 = (0..128)
            .filter(|g| g % 4 == k)
            .map(|g| f64::from(input(g) & 0xffff))
            .sum();
        assert_eq!(f(k, 0), sum);
    }
    for cta in 0..2 {
        for k in 0..4 {
            let sum: f64 = (0..64)
                .filter(|t| t % 4 == k)
                .map(|t| f64::from(input(64 * cta + t) & 0xffff))
                .sum();
            assert_eq!(f(64 * cta + k, 2), sum);
        }
    }
    for g in [0, 9, 64, 127] {
        let x = f64::from(input(g) as i32) * 0.1;
        // The generic add's old value: the word after the global add (x + x).
        assert_eq!(f(g, 6), x + x);
    }
}

#[test]
fn atom_cas_b16_neighbours_contend_for_one_word() {
    // Thread pairs share a 32-bit word: each CASes its own half (0 at the start) with a
    // compare value that matches or not by its input's low bit; global and shared.
    let decls = ".shared .align 4 .b16 sh[64];";
    let body = r#"
    .reg .b16 %rs<8>;
    .reg .b64 %rdh<4>;
    and.b32 %r12, %r1, 1;
    shr.u32 %r13, %r1, 1;
    mul.wide.u32 %rdh1, %r13, 64;
    add.s64 %rdh2, %rd2, %rdh1;
    mul.wide.u32 %rdh3, %r12, 2;
    add.s64 %rdh2, %rdh2, %rdh3;
    and.b32 %r14, %r2, 1;
    xor.b32 %r14, %r14, 1;
    cvt.u16.u32 %rs1, %r14;
    shr.u32 %r15, %r2, 16;
    cvt.u16.u32 %rs2, %r15;
    atom.global.cas.b16 %rs3, [%rdh2+24], %rs1, %rs2;
    cvt.u32.u16 %r16, %rs3;
    st.global.u32 [%rd3+4], %r16;
    mov.u32 %r17, sh;
    shl.b32 %r18, %r9, 1;
    add.u32 %r17, %r17, %r18;
    cvt.u16.u32 %rs4, %r9;
    st.shared.u16 [%r17], %rs4;
    bar.sync 0;
    add.u32 %r19, %r9, %r14;
    cvt.u16.u32 %rs5, %r19;
    atom.shared.cas.b16 %rs6, [%r17], %rs5, %rs2;
    bar.sync 0;
    ld.shared.u16 %r20, [%r17];
    cvt.u32.u16 %r21, %rs6;
    st.global.u32 [%rd3+8], %r21;
    st.global.u32 [%rd3+12], %r20;
"#;
    let (out, last) = run("cas16", decls, body);
    assert!(
        has(&out.sass, |s| s.starts_with("ATOM.E.CAS ")),
        "{}",
        out.sass
    );
    assert!(
        has(&out.sass, |s| s.starts_with("ATOMS.CAS ")),
        "{}",
        out.sass
    );
    for g in [0usize, 1, 2, 3, 62, 63, 64, 127] {
        let hit = input(g) & 1 == 1;
        let new = input(g) >> 16;
        // Global: the half (in thread g & !1's word 6) was 0.
        assert_eq!(word(&last, g, 1), 0);
        let half = word(&last, g & !1, 6) >> (16 * (g & 1)) & 0xffff;
        assert_eq!(half, if hit { new } else { 0 }, "thread {g}");
        // Shared: the half held the thread index.
        let t = (g % 64) as u32;
        assert_eq!(word(&last, g, 2), t);
        assert_eq!(word(&last, g, 3), if hit { new } else { t });
    }
}

#[test]
fn memory_orders_and_fences_are_membars_of_their_scope() {
    let body = r#"
    ld.acquire.gpu.global.u32 %r12, [%rd3];
    st.release.sys.global.u32 [%rd3+4], %r12;
    atom.acq_rel.cta.global.add.u32 %r13, [%rd3+8], %r2;
    red.release.gpu.global.add.u32 [%rd3+12], %r2;
    ld.relaxed.gpu.global.u32 %r14, [%rd3+8];
    fence.sc.cta;
    st.global.u32 [%rd3+16], %r14;
    fence.acq_rel.sys;
    fence.proxy.alias;
    membar.proxy.alias;
    st.global.u32 [%rd3+20], %r13;
    ld.mmio.relaxed.sys.global.u32 %r15, [%rd3+20];
    st.global.u32 [%rd3+24], %r15;
"#;
    let (out, _) = run("orders", "", body);
    let mem: Vec<String> = texts(&out.sass)
        .into_iter()
        .filter(|t| {
            ["LDG", "STG", "ATOM", "RED", "MEMBAR", "LD.", "ST."]
                .iter()
                .any(|p| t.starts_with(p))
        })
        .map(|t| t.split(' ').next().unwrap().to_string())
        .collect();
    // The prologue's load, then: acquire (access, fence), release (fence, access), acq_rel
    // (fence, access, fence), release red, relaxed (strong: .CV), fence.sc.cta, store,
    // fence.acq_rel.sys, the two proxy fences, store, mmio load (.CV), store.
    let want = [
        "LDG.E",
        "LDG.E.CV",
        "MEMBAR.GL.IVALLD",
        "MEMBAR.SYS.IVALLD",
        "STG.E.WT",
        "MEMBAR.CTA",
        "ATOM.E.ADD",
        "MEMBAR.CTA",
        "MEMBAR.GL.IVALLD",
        "RED.E.ADD",
        "LDG.E.CV",
        "MEMBAR.CTA",
        "STG.E",
        "MEMBAR.SYS.IVALLD",
        "MEMBAR.GL.IVALLD",
        "MEMBAR.GL.IVALLD",
        "STG.E",
        "LDG.E.CV",
        "STG.E",
    ];
    assert_eq!(mem, want, "{}", out.sass);
}

#[test]
fn hints_and_directives_that_mean_nothing_on_maxwell() {
    let body = r#"
    .pragma "used_bytes_mask 0xffff";
    createpolicy.fractional.L2::evict_last.b64 %rd7, 1.0;
    createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd8, 0.5;
    ld.global.L1::evict_last.L2::cache_hint.u32 %r12, [%rd5], %rd7;
    ld.global.nc.L1::no_allocate.L2::256B.u32 %r13, [%rd5];
    st.global.L1::no_allocate.L2::cache_hint.u32 [%rd3], %r12, %rd7;
    atom.global.L2::cache_hint.add.u32 %r14, [%rd3+4], %r13, %rd8;
    red.global.add.L2::cache_hint.u32 [%rd3+8], 1, %rd8;
    griddepcontrol.wait;
    griddepcontrol.launch_dependents;
    prefetch.global.L2::evict_last [%rd5];
    prefetch.global.L2::evict_normal [%rd5];
    applypriority.global.L2::evict_normal [%rd3], 128;
    st.global.u32 [%rd3+12], %r14;
"#;
    let src = kernel_with("", "", body)
        .replace(".target sm_52", ".target sm_90")
        .replace(".version 7.8", ".version 8.7")
        .replace(
            ".visible .entry k(.param .u64 pin, .param .u64 pout)",
            ".visible .entry k(.param .u64 pin, .param .u64 pout) .maxclusterrank 4 .explicitcluster .reqnctapercluster 1, 1, 1",
        );
    let out = compile_checked("hints", &src);
    // griddepcontrol, createpolicy, applypriority: no code; the prefetches are CCTL.
    assert_eq!(
        texts(&out.sass)
            .iter()
            .filter(|t| t.starts_with("CCTL.E.PF2"))
            .count(),
        2,
        "{}",
        out.sass
    );
    let last = differential("hints", &src, &out, 4, |_| {});
    assert_eq!(word(&last, 3, 0), input(3));
}

#[test]
fn what_cannot_run_on_maxwell_is_a_located_error() {
    let cases = [
        ("mov.u32 %r12, %cluster_ctarank;", "%cluster_ctarank needs thread block clusters"),
        ("mov.u32 %r12, %clusterid.x;", "%clusterid needs thread block clusters"),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r9], [%rd5], 128, [%r9];",
            "Tensor Memory Accelerator",
        ),
        ("wgmma.fence.sync.aligned;", "warpgroup matrix multiply"),
        ("setmaxnreg.inc.sync.aligned.u32 240;", "reallocates registers"),
        ("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r9], {%r2};", "stmatrix"),
        ("mapa.shared::cluster.u32 %r12, %r9, 0;", "distributed shared memory"),
        ("barrier.cluster.arrive;", "barrier.cluster needs thread block clusters"),
        ("redux.sync.min.f32 %r12, %r2, -1;", "sm_100a"),
    ];
    for (line, want) in cases {
        let src = kernel("", &format!("    {line}\n    st.global.u32 [%rd3], %r2;"));
        let err = compile(&src, &Options::default())
            .err()
            .unwrap_or_else(|| panic!("{line} compiled"));
        let text = leafold::error::render_all(&err.0);
        // The body starts on line 23 of the template.
        assert!(
            text.contains(want) && text.contains(":23:"),
            "{line}:\n{text}"
        );
    }
    let src = kernel_with("", "", "").replace(
        ".visible .entry k(.param .u64 pin, .param .u64 pout)",
        ".visible .entry k(.param .u64 pin, .param .u64 pout) .reqnctapercluster 2",
    );
    let Err(err) = compile(&src, &Options::default()) else {
        panic!("a 2-CTA cluster compiled")
    };
    assert!(leafold::error::render_all(&err.0).contains("'.reqnctapercluster' of 2 CTAs"));
}

/// Every thread of a CTA adds a small integer (exact in f16 and bf16 in any order) to one of
/// four halves sharing two words with `atom.shared.add.noftz.{half}` (or `red` when
/// `red_half`), and a pair of them to one word with `.{half}x2` (`red` when `!red_half`);
/// threads 0..3 copy out, and the sums are checked through `value` (a half's bits to its
/// value).
fn half_adds_in_shared_memory(test: &str, half: &str, red_half: bool, value: fn(u32) -> f64) {
    let decls = ".shared .align 4 .b16 hacc[4];\n.shared .align 4 .b32 h2acc;";
    let (one, two) = if red_half {
        (
            format!("red.shared.add.noftz.{half} [%r13], %rs2;"),
            format!("atom.shared.add.noftz.{half}x2 %r19, [h2acc], %r18;"),
        )
    } else {
        (
            format!("atom.shared.add.noftz.{half} %rs4, [%r13], %rs2;"),
            format!("red.shared.add.noftz.{half}x2 [h2acc], %r18;"),
        )
    };
    let body = format!(
        r#"
    .reg .b16 %rs<8>;
    setp.lt.u32 %p1, %r9, 4;
    and.b32 %r12, %r9, 3;
    mov.u32 %r13, hacc;
    shl.b32 %r14, %r12, 1;
    add.u32 %r13, %r13, %r14;
    mov.u16 %rs1, 0;
    @%p1 st.shared.u16 [%r13], %rs1;
    mov.u32 %r15, 0;
    setp.eq.u32 %p2, %r9, 0;
    @%p2 st.shared.u32 [h2acc], %r15;
    bar.sync 0;
    and.b32 %r16, %r2, 3;
    cvt.rn.{half}.u32 %rs2, %r16;
    {one}
    and.b32 %r17, %r2, 1;
    cvt.rn.{half}.u32 %rs3, %r17;
    mov.b32 %r18, {{%rs2, %rs3}};
    {two}
    bar.sync 0;
    ld.shared.u16 %r20, [%r13];
    ld.shared.u32 %r21, [h2acc];
    @%p1 st.global.u32 [%rd3], %r20;
    @%p1 st.global.u32 [%rd3+4], %r21;
"#
    );
    let (out, last) = run(test, decls, &body);
    assert!(
        has(&out.sass, |s| s.starts_with("ATOMS.CAS ")),
        "{}",
        out.sass
    );
    for cta in 0..2 {
        let ins: Vec<u32> = (0..64).map(|t| input(64 * cta + t)).collect();
        for k in 0..4 {
            let sum: u32 = (0..64).filter(|t| t % 4 == k).map(|t| ins[t] & 3).sum();
            assert_eq!(value(word(&last, 64 * cta + k, 0) & 0xffff), f64::from(sum));
        }
        let w = word(&last, 64 * cta, 1);
        assert_eq!(
            value(w & 0xffff),
            f64::from(ins.iter().map(|x| x & 3).sum::<u32>())
        );
        assert_eq!(
            value(w >> 16),
            f64::from(ins.iter().map(|x| x & 1).sum::<u32>())
        );
    }
}

#[test]
fn atom_add_f16_and_f16x2_in_shared_memory() {
    use leafold::ir::float::{convert, FloatFmt, Round};
    let f16 = |x: u32| {
        f64::from_bits(convert(
            FloatFmt::F16,
            FloatFmt::F64,
            u64::from(x),
            Round::Rn,
            false,
        ))
    };
    half_adds_in_shared_memory("atom_f16", "f16", true, f16);
}

#[test]
fn atom_add_bf16_and_bf16x2_in_shared_memory() {
    // sm_90's `.add.noftz.bf16` and `.bf16x2`; a bf16 is the upper half of an f32.
    half_adds_in_shared_memory("atom_bf16", "bf16", false, |x| {
        f64::from(f32::from_bits(x << 16))
    });
}
