//! Calls of system functions (`vprintf`, `malloc`, `free`, `__assertfail`) by the sm_50 call
//! ABI (docs/calls.md). Each kernel test checks:
//!
//! * the kernel compiles; its code is hazard-free, and with the oracle installed cuobjdump
//!   and nvdisasm print our listing exactly (`compile_checked`);
//! * the cubin holds what the driver needs to resolve the call, as ptxas 11.8 writes it: the
//!   callee an undefined GLOBAL FUNC symbol (`st_info` 0x12, section 0), one
//!   `R_CUDA_ABS32_20` relocation against it at each `JCAL`, and `EIATTR_EXTERNS` naming it
//!   in the kernel's `.nv.info`;
//! * what the calls do (`leafold::sysfn`, run by `ir::eval` at the PTX call and by the
//!   simulator at the `JCAL` from the argument registers): the whole output of `ir::eval`
//!   equals the simulator's on our SASS, the printf text and the model heap included, on the
//!   full launch (2 CTAs of 64 threads), and the text is the one C's printf writes; an
//!   assertion traps both sides with the same message; `verify` matches on each kernel (and
//!   on ptxas's cubin with the oracle), and reports a wrong printf argument as a mismatch.

mod common;

use common::warp_kernel::*;
use leafold::cubin;
use leafold::ir::eval::{self, EvalError, RunOutput};
use leafold::oracle::Oracle;
use leafold::sim::{self, SimError};
use leafold::verify::{self, VerifyOptions};

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

/// The usual launch with the model heap (`verify` adds it to kernels that call `malloc`).
fn heap_launch(seed: u64) -> eval::Launch {
    let mut l = launch(seed);
    leafold::sysfn::add_heap(&mut l);
    l
}

/// `ir::eval`'s run and the simulator's on `cubin`, on `launch`.
fn run_both(
    test: &str,
    src: &str,
    cubin: &[u8],
    launch: &eval::Launch,
) -> (Result<RunOutput, EvalError>, Result<RunOutput, SimError>) {
    let module = common::ir_module(format!("{test}.ptx"), src);
    (
        eval::run(&module, "k", launch),
        sim::run_cubin(cubin, "k", launch),
    )
}

/// `verify` on `src` (with ptxas's cubin too when the oracle is there): every kernel matches.
fn verify_matches(test: &str, src: &str) {
    let mut opts = VerifyOptions::default();
    opts.compile.file_name = format!("{test}.ptx");
    if let Some(oracle) = Oracle::for_test(test) {
        opts.ptxas_cubin = Some(common::ptxas_cached(&oracle, src, "sm_52").expect("ptxas"));
    }
    let verdicts = verify::verify_file(src, None, &opts).expect("verify compiles it");
    for v in &verdicts {
        assert_eq!(v.exit_code(), 0, "{test}: {v}");
    }
}

/// Compile and check `body` calling `callees`: the call facts, then eval = simulator on
/// three seeds of the full launch. Returns the compile output and the eval outputs.
fn check(test: &str, decls: &str, body: &str, callees: &[&str]) -> (String, Vec<RunOutput>) {
    let src = kernel(&format!("{DECLS}{decls}"), body);
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
    let mut outs = Vec::new();
    for seed in 0..3 {
        let (e, s) = run_both(test, &src, &out.cubin, &heap_launch(seed));
        let e = e.unwrap_or_else(|e| panic!("{test}: eval: {e}"));
        let s = s.unwrap_or_else(|e| panic!("{test}: sim: {e}\n{}", out.sass));
        assert_eq!(
            e, s,
            "{test}: eval (left) and sim (right) differ\n{}",
            out.sass
        );
        outs.push(e);
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
    }
    verify_matches(test, &src);
    (src, outs)
}

/// The input word of global thread `t` in the launch of `seed`.
fn input(seed: u64, t: usize) -> u32 {
    let l = launch(seed);
    let b = &l.global[0].bytes[4 * t..4 * t + 4];
    u32::from_le_bytes(b.try_into().unwrap())
}

/// printf with every argument class: ints of 4 and 8 bytes (signed, unsigned, hex, a char),
/// doubles in `%f`, `%e`, `%g`, a string and a pointer, each in its slot of the argument
/// buffer nvcc builds (8-byte ones 8-aligned).
const PRINTF_BODY: &str = r#"
    .local .align 8 .b8 buf[72];
    mov.u64 %rd8, buf;
    cvta.local.u64 %rd9, %rd8;
    st.local.u32 [%rd8], %r2;
    mul.lo.u32 %r3, %r2, 3;
    st.local.u32 [%rd8+4], %r3;
    st.local.u32 [%rd8+8], %r1;
    cvt.s64.s32 %rd10, %r2;
    mul.lo.s64 %rd10, %rd10, 1000003;
    st.local.u64 [%rd8+16], %rd10;
    cvt.rn.f64.s32 %fd1, %r2;
    div.rn.f64 %fd1, %fd1, 7.0;
    st.local.f64 [%rd8+24], %fd1;
    mul.f64 %fd2, %fd1, 0d4202A05F20000000;
    st.local.f64 [%rd8+32], %fd2;
    cvt.rn.f64.u32 %fd3, %r1;
    st.local.f64 [%rd8+40], %fd3;
    mov.u64 %rd11, $name;
    cvta.global.u64 %rd11, %rd11;
    st.local.u64 [%rd8+48], %rd11;
    st.local.u64 [%rd8+56], %rd5;
    and.b32 %r5, %r1, 15;
    add.u32 %r5, %r5, 65;
    st.local.u32 [%rd8+64], %r5;
    mov.u64 %rd12, $fmt;
    cvta.global.u64 %rd13, %rd12;
    {
    .param .b64 p0;
    st.param.b64 [p0], %rd13;
    .param .b64 p1;
    st.param.b64 [p1], %rd9;
    .param .b32 rv;
    call.uni (rv), vprintf, (p0, p1);
    ld.param.b32 %r4, [rv];
    }
    st.global.u32 [%rd3], %r4;
"#;

/// `$fmt`: "%d %u %x %lld %.3f %e %g %s %p %c|\n"; `$name`: "leafold".
const PRINTF_DECLS: &str = r#"
.global .align 1 .b8 $fmt[36] = {37, 100, 32, 37, 117, 32, 37, 120, 32, 37, 108, 108, 100, 32, 37, 46, 51, 102, 32, 37, 101, 32, 37, 103, 32, 37, 115, 32, 37, 112, 32, 37, 99, 124, 10, 0};
.global .align 1 .b8 $name[8] = {108, 101, 97, 102, 111, 108, 100, 0};
"#;

fn printf_src(body: &str) -> String {
    body.replace(".local .align 8", ".reg .f64 %fd<4>;\n    .local .align 8")
}

#[test]
fn vprintf_prints_every_argument_class() {
    let body = printf_src(PRINTF_BODY);
    let (_, outs) = check("vprintf", PRINTF_DECLS, &body, &["vprintf"]);
    for (seed, o) in outs.iter().enumerate() {
        let text = String::from_utf8(o.printf.clone()).expect("ASCII output");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            (THREADS * CTAS) as usize,
            "one line per thread"
        );
        // Thread t's line, in thread order, as C's printf writes it.
        for (t, line) in lines.iter().enumerate() {
            let x = input(seed as u64, t) as i32;
            let d = f64::from(x) / 7.0;
            let want_head = format!(
                "{x} {} {:x} {} {d:.3} ",
                (x as u32).wrapping_mul(3),
                t,
                i64::from(x) * 1_000_003
            );
            assert!(
                line.starts_with(&want_head),
                "line {t}: {line:?}, want {want_head:?}.."
            );
            let addr = common::warp_kernel::IN + 4 * t as u64;
            let want_tail = format!(" leafold 0x{addr:x} {}|", (b'A' + (t % 16) as u8) as char);
            assert!(
                line.ends_with(&want_tail),
                "line {t}: {line:?}, want ..{want_tail:?}"
            );
        }
        // vprintf returns the number of arguments it read (CUDA's documented result).
        let out = o.region(common::warp_kernel::OUT).unwrap();
        assert_eq!(&out[0..4], &10u32.to_le_bytes(), "vprintf's result");
    }
}

#[test]
fn a_wrong_printf_argument_is_a_mismatch() {
    // The simulator runs the code of a kernel that prints `in + 1` where the PTX prints `in`:
    // memory is the same, only the printf text differs, and verify must say so.
    let body = printf_src(PRINTF_BODY);
    let src = kernel(&format!("{DECLS}{PRINTF_DECLS}"), &body);
    let wrong = src.replace(
        "st.local.u32 [%rd8], %r2;",
        "add.u32 %r6, %r2, 1;\n    st.local.u32 [%rd8], %r6;",
    );
    assert_ne!(src, wrong);
    let module = common::ir_module("wrong_printf.ptx", src.as_str());
    let out = compile_checked("wrong_printf", &wrong);
    let f = module.functions.iter().find(|f| f.name == "k").unwrap();
    let v = verify::verify_kernel(&module, f, false, &out.cubin, &VerifyOptions::default());
    assert_eq!(v.exit_code(), 1, "a mismatch: {v}");
    let text = v.to_string();
    assert!(text.contains("printf output differs at line 1"), "{text}");
    assert!(text.contains("reference printf output:"), "{text}");
}

#[test]
fn malloc_result_feeds_free() {
    // p = malloc(in % 64 * 4 + 8); p[0] = in; out[0] = p; out[2] = p[0]; free(p).
    let body = r#"
    and.b32 %r6, %r2, 63;
    mul.wide.u32 %rd8, %r6, 4;
    add.u64 %rd8, %rd8, 8;
    {
    .param .b64 q0;
    st.param.b64 [q0], %rd8;
    .param .b64 rv;
    call.uni (rv), malloc, (q0);
    ld.param.b64 %rd9, [rv];
    }
    st.u32 [%rd9], %r2;
    st.global.u64 [%rd3], %rd9;
    ld.u32 %r7, [%rd9];
    st.global.u32 [%rd3+8], %r7;
    {
    .param .b64 q1;
    st.param.b64 [q1], %rd9;
    call.uni free, (q1);
    }
"#;
    let (_, outs) = check("malloc_free", "", body, &["malloc", "free"]);
    for o in &outs {
        let out = o.region(common::warp_kernel::OUT).unwrap();
        let mut seen = std::collections::HashSet::new();
        for t in 0..(THREADS * CTAS) as usize {
            let p = u64::from_le_bytes(out[32 * t..32 * t + 8].try_into().unwrap());
            assert!(p != 0 && p % 16 == 0, "thread {t}: malloc gave 0x{p:x}");
            assert!(seen.insert(p), "thread {t}: 0x{p:x} given twice");
            let word = &o.region(common::warp_kernel::IN).unwrap()[4 * t..4 * t + 4];
            assert_eq!(
                &out[32 * t + 8..32 * t + 12],
                word,
                "thread {t}: the block's word"
            );
        }
    }
}

#[test]
fn assertfail_traps_both_sides_with_cudas_message() {
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
    let src = kernel(DECLS, body);
    let out = compile_checked("assertfail", &src);
    let (undefined, relocs, externs) = call_facts(&out.cubin);
    assert_eq!(undefined, ["__assertfail"]);
    assert_eq!(externs, ["__assertfail"]);
    assert_eq!(relocs.len(), 1);
    let mut trapped = 0;
    for seed in 0..6 {
        let l = heap_launch(seed);
        let (e, s) = run_both("assertfail", &src, &out.cubin, &l);
        // The first thread (in linear order) whose input is 0 fails; both sides run it first.
        let first = (0..(THREADS * CTAS) as usize).find(|&t| input(seed, t) == 0);
        match (e, s, first) {
            (Ok(e), Ok(s), None) => assert_eq!(e, s, "seed {seed}"),
            (
                Err(EvalError::AssertFailed { message: em, .. }),
                Err(SimError::AssertFailed { message: sm, .. }),
                Some(t),
            ) => {
                assert_eq!(em, sm, "seed {seed}: eval (left) and sim (right)");
                let (cta, tid) = (t / THREADS as usize, t % THREADS as usize);
                let want = format!(
                    "a.c:42: k: block: [{cta},0,0], thread: [{tid},0,0] Assertion `v=%d %d` failed."
                );
                assert_eq!(em, want, "seed {seed}");
                trapped += 1;
            }
            (e, s, first) => panic!("seed {seed} (first zero {first:?}): eval {e:?}, sim {s:?}"),
        }
    }
    assert!(trapped > 0, "no seed reaches the assert");
    verify_matches("assertfail", &src);
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

/// A 32-bit module (`.address_size 32`) calling `vprintf`: ptxas 11.8 accepts it and passes
/// the 4-byte format and argument-buffer pointers in R4 and R5 (probe `p32.ptx`,
/// docs/calls.md: `MOV32I R4, 0x0 ; LOP.OR R5, R1, c[0x0][0x4] ; STL [R1], R0 ; JCAL`). Both
/// sides read them as 4-byte pointers (`sysfn::State::pointer_bytes`), print the same text,
/// and it is the text CUDA would print; verify matches.
#[test]
fn vprintf_in_a_32_bit_module() {
    let src = r#".version 7.8
.target sm_52
.address_size 32
.extern .func (.param .b32 func_retval0) vprintf(.param .b32 vprintf_param_0, .param .b32 vprintf_param_1);
.global .align 1 .b8 $str[10] = {116, 61, 37, 100, 32, 37, 115, 10, 0, 0};
.global .align 1 .b8 $name[3] = {104, 105, 0};
.visible .entry k()
{
    .local .align 8 .b8 __local_depot0[8];
    .reg .b32 %r<20>;
    mov.u32 %r10, __local_depot0;
    cvta.local.u32 %r11, %r10;
    mov.u32 %r1, %tid.x;
    st.local.u32 [%r10], %r1;
    mov.u32 %r2, $name;
    cvta.global.u32 %r3, %r2;
    st.local.u32 [%r10+4], %r3;
    mov.u32 %r4, $str;
    cvta.global.u32 %r5, %r4;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r5;
    .param .b32 param1;
    st.param.b32 [param1+0], %r11;
    .param .b32 retval0;
    call.uni (retval0), vprintf, (param0, param1);
    ld.param.b32 %r6, [retval0+0];
    }
    ret;
}
"#;
    let out = compile_checked("vprintf32", src);
    let sass = texts(&out.sass);
    let jcal = sass
        .iter()
        .position(|t| t.starts_with("JCAL"))
        .expect("a JCAL");
    // The format pointer in R4 and the buffer in R5, one register each.
    assert!(
        sass[..jcal].iter().any(|t| t.starts_with("MOV32I R4, 0x0")),
        "the format's address (relocated) in R4\n{}",
        out.sass
    );
    assert!(
        sass[..jcal]
            .iter()
            .any(|t| t.contains("R5, R1, c[0x0][0x4]")),
        "the generic address of the buffer in R5\n{}",
        out.sass
    );
    let launch = eval::Launch::new([1, 1, 1], [3, 1, 1]);
    let (want, got) = run_both("vprintf32", src, &out.cubin, &launch);
    let (want, got) = (want.expect("eval runs"), got.expect("the simulator runs"));
    let text = String::from_utf8(want.printf.clone()).unwrap();
    assert_eq!(text, "t=0 hi\nt=1 hi\nt=2 hi\n");
    assert_eq!(got.printf, want.printf, "the simulator prints the same");
    verify_matches("vprintf32", src);
}
