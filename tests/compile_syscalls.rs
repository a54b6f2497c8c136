//! Calls of system functions (`vprintf`, `malloc`, `free`, `__assertfail`) by the sm_50 call
//! ABI (docs/calls.md). Each kernel test checks:
//!
//! * the kernel compiles; its code is hazard-free, and with the oracle installed cuobjdump
//!   and nvdisasm print our listing exactly (`compile_checked`);
//! * the cubin holds what the driver needs to resolve the call, as ptxas 11.8 writes it: the
//!   callee an undefined GLOBAL FUNC symbol (`st_info` 0x12, section 0), one
//!   `R_CUDA_ABS32_20` relocation against it at each `JCAL`, and `EIATTR_EXTERNS` naming it
//!   in the kernel's `.nv.info`;
//! * the argument registers: `ir::eval` (the PTX meaning, registers laid out by the ABI) and
//!   the simulator running our SASS (reading R4.. at the `JCAL`) stop at the first call with
//!   the same report, which carries the argument registers' words: the same words in the same
//!   registers. With the oracle, the simulator running ptxas's own cubin of the same PTX
//!   reports the same words too (the layout is ptxas's), where they do not depend on the
//!   stack frame or on where a global variable lies (ptxas orders module data its own way).
//!
//! Until the `sysfn` branch models the functions, every call is "not modelled"
//! (`leafold::calls_shim`), so a launch stops at the first call; one thread is launched.

mod common;

use common::warp_kernel::*;
use leafold::cubin;
use leafold::ir::eval::{self, EvalError};
use leafold::oracle::Oracle;
use leafold::sim::{self, SimError};

const DECLS: &str = r#"
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);
.extern .func free(.param .b64 free_param_0);
.extern .func __assertfail(.param .b64 __assertfail_param_0, .param .b64 __assertfail_param_1, .param .b32 __assertfail_param_2, .param .b64 __assertfail_param_3, .param .b64 __assertfail_param_4);
.global .align 1 .b8 $str[8] = {118, 61, 37, 100, 32, 37, 100, 0};
.global .align 1 .b8 $file[4] = {97, 46, 99, 0};
.global .align 1 .b8 $func[2] = {107, 0};
"#;

/// What a cubin says about its calls: see [`call_facts`].
type CallFacts = (Vec<String>, Vec<(u64, String, u32)>, Vec<String>);

/// The undefined function symbols, the callees of the code's relocations (offset, name,
/// type) and the `EIATTR_EXTERNS` names of kernel `k` in `bytes`.
fn call_facts(bytes: &[u8]) -> CallFacts {
    let c = cubin::read(bytes).expect("cubin reads back");
    let undefined: Vec<String> = c
        .symbols
        .iter()
        .filter(|s| s.shndx == 0 && s.info == 0x12)
        .map(|s| s.name.clone())
        .collect();
    let k = &c.kernels[0];
    let mut relocs = Vec::new();
    for rs in c.relocations.iter().filter(|r| r.target == k.text_section) {
        for r in &rs.relocs {
            let name = c.symbols[r.sym as usize].name.clone();
            if undefined.contains(&name) {
                relocs.push((r.offset, name, r.rtype));
            }
        }
    }
    relocs.sort();
    let externs = k
        .info
        .iter()
        .filter_map(|a| match a {
            cubin::eiattr::Attribute::Other {
                code: 0x0f,
                payload,
                ..
            } => Some(
                payload
                    .chunks(4)
                    .map(|w| {
                        let i = u32::from_le_bytes(w.try_into().unwrap()) as usize;
                        c.symbols[i].name.clone()
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    (undefined, relocs, externs)
}

/// One thread of the usual launch, with no stack below the frame: a generic address of the
/// frame is then the same number to `ir::eval` (frame-relative local addresses) and to the
/// simulator (R1-relative ones, R1 at the bottom of the thread's local memory).
fn one_thread(seed: u64) -> eval::Launch {
    let mut l = launch(seed);
    l.grid = [1, 1, 1];
    l.block = [1, 1, 1];
    l.local_size = 0;
    l
}

/// The report of the first call: `ir::eval`'s, and the simulator's on `cubin`.
fn first_call(test: &str, src: &str, cubin: &[u8], seed: u64) -> (String, String) {
    let module = common::ir_module(format!("{test}.ptx"), src);
    let l = one_thread(seed);
    let e = match eval::run(&module, "k", &l) {
        Err(EvalError::Unmodelled { why, .. }) => why,
        other => panic!("{test}: eval did not stop at the call: {other:?}"),
    };
    let s = match sim::run_cubin(cubin, "k", &l) {
        Err(SimError::Unsupported { what, .. }) => what,
        other => panic!("{test}: sim did not stop at the call: {other:?}"),
    };
    (e, s)
}

/// The argument words of a report ("... argument registers from R4: [w w ..]").
fn words(report: &str) -> Vec<String> {
    let at = report
        .find('[')
        .expect("report lists the argument registers");
    report[at + 1..report.len() - 1]
        .split(' ')
        .map(str::to_string)
        .collect()
}

/// Compile and check `body` calling `callees`; eval and sim agree on the first call's
/// arguments; with the oracle, so does ptxas's cubin on the words `same_as_ptxas` selects.
fn check(test: &str, body: &str, callees: &[&str], same_as_ptxas: &[usize]) -> Vec<String> {
    let src = kernel(DECLS, body);
    let out = compile_checked(test, &src);
    let (undefined, relocs, externs) = call_facts(&out.cubin);
    assert_eq!(undefined, callees, "{test}: undefined function symbols");
    assert_eq!(externs, callees, "{test}: EIATTR_EXTERNS");
    let jcals: Vec<u64> = common::parse_lines(&out.sass)
        .into_iter()
        .filter(|(_, t)| t.starts_with("JCAL"))
        .map(|(a, _)| a)
        .collect();
    assert_eq!(
        relocs.iter().map(|r| r.0).collect::<Vec<_>>(),
        jcals,
        "{test}: one relocation per JCAL\n{}",
        out.sass
    );
    assert!(
        relocs.iter().all(|r| r.2 == 0x2a),
        "{test}: R_CUDA_ABS32_20"
    );
    let mut first = Vec::new();
    for seed in 0..3 {
        let (e, s) = first_call(test, &src, &out.cubin, seed);
        assert_eq!(
            e, s,
            "{test}: eval (left) and sim (right) pass different arguments"
        );
        first = words(&e);
    }
    if let Some(oracle) = Oracle::for_test(test) {
        let theirs = common::ptxas_cached(&oracle, &src, "sm_52").expect("ptxas compiles it");
        let (t_undef, t_relocs, t_externs) = call_facts(&theirs);
        assert_eq!(t_undef, undefined, "{test}: ptxas's undefined symbols");
        assert_eq!(t_externs, externs, "{test}: ptxas's EIATTR_EXTERNS");
        assert_eq!(
            t_relocs.len(),
            relocs.len(),
            "{test}: ptxas's call relocations"
        );
        let (_, s) = first_call(test, &src, &theirs, 0);
        let (ours, _) = first_call(test, &src, &out.cubin, 0);
        let (t, o) = (words(&s), words(&ours));
        for &k in same_as_ptxas {
            assert_eq!(
                t[k], o[k],
                "{test}: argument word {k}: ptxas {s}, ours {ours}"
            );
        }
    }
    first
}

#[test]
fn vprintf_gets_the_format_and_the_argument_buffer() {
    // printf("v=%d %d", in, in * 3): the arguments in a local buffer, its generic address.
    let body = r#"
    .local .align 8 .b8 buf[8];
    mov.u64 %rd8, buf;
    cvta.local.u64 %rd9, %rd8;
    st.local.u32 [%rd8], %r2;
    mul.lo.u32 %r3, %r2, 3;
    st.local.u32 [%rd8+4], %r3;
    mov.u64 %rd10, $str;
    cvta.global.u64 %rd11, %rd10;
    {
    .param .b64 p0;
    st.param.b64 [p0], %rd11;
    .param .b64 p1;
    st.param.b64 [p1], %rd9;
    .param .b32 rv;
    call.uni (rv), vprintf, (p0, p1);
    ld.param.b32 %r4, [rv];
    }
    st.global.u32 [%rd3], %r4;
"#;
    // Only the high words compare with ptxas: its data and frame layouts differ from ours.
    let w = check("vprintf", body, &["vprintf"], &[1, 3]);
    // R4:R5 the format string (a global address), R6:R7 the buffer (a local-window one).
    assert_eq!(w.len(), 4);
    assert_ne!(w[0..2], ["00000000", "00000000"]);
}

#[test]
fn malloc_result_feeds_free() {
    // p = malloc(in * 4 + 8); out[0] = p; free(p).
    let body = r#"
    mul.wide.u32 %rd8, %r2, 4;
    add.u64 %rd8, %rd8, 8;
    {
    .param .b64 q0;
    st.param.b64 [q0], %rd8;
    .param .b64 rv;
    call.uni (rv), malloc, (q0);
    ld.param.b64 %rd9, [rv];
    }
    st.global.u64 [%rd3], %rd9;
    {
    .param .b64 q1;
    st.param.b64 [q1], %rd9;
    call.uni free, (q1);
    }
"#;
    let w = check("malloc_free", body, &["malloc", "free"], &[0, 1]);
    assert_eq!(w.len(), 2, "malloc takes R4:R5");
}

#[test]
fn assertfail_leaves_a_hole_before_its_8_aligned_argument() {
    // assert(in != 0) as nvcc writes it: the call in a guarded block; a 32-bit line number in
    // R8, R9 skipped, the function name in R10:R11, the character size in R12:R13.
    let body = r#"
    setp.ne.s32 %p1, %r2, 0;
    @%p1 bra OK;
    mov.u64 %rd8, $str;
    cvta.global.u64 %rd9, %rd8;
    mov.u64 %rd10, $file;
    cvta.global.u64 %rd11, %rd10;
    mov.u64 %rd12, $func;
    cvta.global.u64 %rd13, %rd12;
    {
    .param .b64 a0;
    st.param.b64 [a0], %rd9;
    .param .b64 a1;
    st.param.b64 [a1], %rd11;
    .param .b32 a2;
    st.param.b32 [a2], 42;
    .param .b64 a3;
    st.param.b64 [a3], %rd13;
    .param .b64 a4;
    st.param.b64 [a4], 1;
    call.uni __assertfail, (a0, a1, a2, a3, a4);
    }
OK:
    st.global.u32 [%rd3], %r2;
"#;
    // Seeds whose thread 0 reads 0 reach the call; find one.
    let src = kernel(DECLS, body);
    let out = compile_checked("assertfail", &src);
    let module = common::ir_module("assertfail.ptx", src.as_str());
    let reaching: Vec<u64> = (0..64)
        .filter(|&s| {
            matches!(
                eval::run(&module, "k", &one_thread(s)),
                Err(EvalError::Unmodelled { .. })
            )
        })
        .collect();
    assert!(!reaching.is_empty(), "no seed reaches the assert");
    for &seed in reaching.iter().take(2) {
        let (e, s) = first_call("assertfail", &src, &out.cubin, seed);
        assert_eq!(e, s, "assertfail: eval (left) and sim (right)");
        let w = words(&e);
        assert_eq!(w.len(), 10, "R4..R13");
        assert_eq!(w[4], "0000002a", "the line in R8");
        assert_eq!(w[5], "00000000", "R9 is a hole");
        assert_eq!(
            w[8..10],
            ["00000001", "00000000"],
            "the char size in R12:R13"
        );
    }
    let (undefined, relocs, externs) = call_facts(&out.cubin);
    assert_eq!(undefined, ["__assertfail"]);
    assert_eq!(externs, ["__assertfail"]);
    assert_eq!(relocs.len(), 1);
    if let Some(oracle) = Oracle::for_test("assertfail") {
        let theirs = common::ptxas_cached(&oracle, &src, "sm_52").expect("ptxas compiles it");
        let (_, t) = first_call("assertfail", &src, &theirs, reaching[0]);
        let (o, _) = first_call("assertfail", &src, &out.cubin, reaching[0]);
        // The words that are no low half of a global address (ptxas lays module data out
        // its own way) and not R9 (a hole: whatever the register held) are ptxas's.
        let (t, o) = (words(&t), words(&o));
        for k in [1, 3, 4, 7, 8, 9] {
            assert_eq!(t[k], o[k], "assertfail: word {k}: ptxas {t:?}, ours {o:?}");
        }
    }
}

#[test]
fn values_live_across_a_call_survive_it() {
    // Sixteen loaded values live across a call of free (which clobbers R0, R3..R15 and the
    // predicates): summed after it. With one thread the call stops the run, so this checks
    // the allocation only: no value live across the call is in a caller-saved register.
    let mut body = String::new();
    for i in 0..16 {
        body.push_str(&format!(
            "    ld.global.u32 %r{}, [%rd5+{}];\n",
            12 + i,
            4 * i
        ));
    }
    body.push_str("    setp.gt.u32 %p2, %r2, 7;\n");
    body.push_str(
        "    {\n    .param .b64 q1;\n    st.param.b64 [q1], %rd3;\n    call.uni free, (q1);\n    }\n",
    );
    body.push_str("    mov.u32 %r30, 0;\n");
    for i in 0..16 {
        body.push_str(&format!("    add.u32 %r30, %r30, %r{};\n", 12 + i));
    }
    body.push_str("    selp.u32 %r31, 1, 2, %p2;\n    add.u32 %r30, %r30, %r31;\n");
    body.push_str("    st.global.u32 [%rd3], %r30;\n");
    let src = kernel(DECLS, &body);
    let out = compile_checked("live_across", &src);
    // Which registers each instruction after the JCAL reads, before anything writes them.
    let c = cubin::read(&out.cubin).unwrap();
    let (insts, _, _) = leafold::sm50::sched::check::decode_text(&c.kernels[0].code).unwrap();
    let at = insts
        .iter()
        .position(|i| i.form == leafold::sm50::Form::JCAL)
        .expect("a JCAL");
    let mut written = std::collections::HashSet::new();
    for i in &insts[at + 1..] {
        let a = leafold::sm50::sched::model::access(i);
        for &r in &a.uses {
            let scratch = r == 0 || (3..16).contains(&r) || (256..263).contains(&r);
            assert!(
                !scratch || written.contains(&r),
                "live_across: R{r} (or P{}) is read after the call before being written\n{}",
                r.saturating_sub(256),
                out.sass
            );
        }
        written.extend(a.defs.iter().copied());
    }
}
