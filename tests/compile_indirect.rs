//! Function addresses, indirect calls (`call %rd, (args), prototype;`) and `brx.idx`: a function whose
//! address the module takes has a value (`ir::build::calls::function_ids`: 8, 16, ...), in
//! registers (`mov.u64 %rd, f`) and in `.global`/`.const` initializers (vtables), and an
//! indirect call runs a copy of every function of its prototype whose address is taken,
//! entered when the pointer holds that function's value. Each kernel test checks, with the
//! harness of `common::warp_kernel`: the kernel compiles, is hazard-free, and (with the
//! oracle) cuobjdump and nvdisasm print our listing; `ir::eval` and the simulator running our
//! SASS write the same `out` over random launches; and the values are the PTX meaning,
//! computed here by hand.

mod common;

use common::warp_kernel::*;

const FUNCS: &str = r#"
.func (.param .b32 rv) twice(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];
    shl.b32 %r2, %r1, 1;
    st.param.b32 [rv], %r2;
    ret;
}
.func (.param .b32 rv) plus7(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];
    add.u32 %r2, %r1, 7;
    st.param.b32 [rv], %r2;
    ret;
}
.func (.param .b32 rv) square(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];
    mul.lo.u32 %r2, %r1, %r1;
    st.param.b32 [rv], %r2;
    ret;
}
.func (.param .b32 rv) mix(.param .b32 a, .param .b32 b)
{
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    xor.b32 %r3, %r1, %r2;
    st.param.b32 [rv], %r3;
    ret;
}
"#;

fn input(out: &[u8], g: usize) -> u32 {
    // The harness stores the input word as word 7 of each thread's output row.
    word(out, g, 7)
}

/// PTX that loads `%rd9 = table[%r3]` from `space`, with `%r3 = %r2 {op} {n}` (`rem.u32` or
/// `and.b32` of the input word): how each indirect-call test picks its function pointer.
fn load_entry(op: &str, n: u32, table: &str, space: &str) -> String {
    format!(
        "    {op} %r3, %r2, {n};\n    mul.wide.u32 %rd7, %r3, 8;\n    mov.u64 %rd8, {table};\n    \
         add.u64 %rd8, %rd8, %rd7;\n    ld.{space}.u64 %rd9, [%rd8];\n"
    )
}

/// Check word `k` of every thread's output row against `want(thread, input)`.
fn each_thread(last: &[u8], k: usize, want: impl Fn(usize, u32) -> u32) {
    for g in 0..(THREADS * CTAS) as usize {
        let x = input(last, g);
        assert_eq!(
            word(last, g, k),
            want(g, x),
            "thread {g}, in {x:#x}, word {k}"
        );
    }
}

/// `out[8g + 0]` = `table[in % 3](in)`; word 1 = whether the pointer is `plus7`; word 7 =
/// `in`. The table is a `.global` array initialized with function addresses.
#[test]
fn call_through_a_global_table() {
    let decls = format!("{FUNCS}\n.global .align 8 .u64 table[3] = {{twice, plus7, square}};\n");
    let body = load_entry("rem.u32", 3, "table", "global")
        + r#"
    {
    .param .b32 p0;
    st.param.b32 [p0], %r2;
    .param .b32 r0;
    prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (r0), %rd9, (p0), prototype_0;
    ld.param.b32 %r4, [r0];
    }
    st.global.u32 [%rd3], %r4;
    mov.u64 %rd10, plus7;
    setp.eq.u64 %p1, %rd9, %rd10;
    selp.u32 %r5, 1, 0, %p1;
    st.global.u32 [%rd3+4], %r5;
    st.global.u32 [%rd3+28], %r2;
"#;
    let (out, last) = run("global_table", &decls, &body);
    assert!(!has(&out.sass, |t| t.starts_with("JCAL")));
    each_thread(&last, 0, |_, x| match x % 3 {
        0 => x.wrapping_mul(2),
        1 => x.wrapping_add(7),
        _ => x.wrapping_mul(x),
    });
    each_thread(&last, 1, |_, x| u32::from(x % 3 == 1));
}

/// A vtable in `.const` memory: `vt[in & 1]` with a two-argument prototype, and a pointer
/// chosen in a register (`mov.u64 %rd, f`; `selp.b64`).
#[test]
fn vtable_in_const_and_pointers_in_registers() {
    let decls = format!("{FUNCS}\n.const .align 8 .u64 vt[2] = {{mix, mix}};\n");
    let body = load_entry("and.b32", 1, "vt", "const")
        + r#"
    {
    .param .b32 p0;
    st.param.b32 [p0], %r2;
    .param .b32 p1;
    st.param.b32 [p1], %r9;
    .param .b32 r0;
    proto_mix : .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _);
    call (r0), %rd9, (p0, p1), proto_mix;
    ld.param.b32 %r4, [r0];
    }
    st.global.u32 [%rd3], %r4;
    mov.u64 %rd10, twice;
    mov.u64 %rd11, square;
    setp.lt.u32 %p2, %r2, 0x80000000;
    selp.b64 %rd12, %rd10, %rd11, %p2;
    {
    .param .b32 q0;
    st.param.b32 [q0], %r2;
    .param .b32 s0;
    proto_1 : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (s0), %rd12, (q0), proto_1;
    ld.param.b32 %r5, [s0];
    }
    st.global.u32 [%rd3+4], %r5;
    st.global.u32 [%rd3+28], %r2;
"#;
    let (_, last) = run("vtable_const", &decls, &body);
    each_thread(&last, 0, |g, x| x ^ (g as u32 % THREADS));
    each_thread(&last, 1, |_, x| {
        if x < 0x8000_0000 {
            x.wrapping_mul(2)
        } else {
            x.wrapping_mul(x)
        }
    });
}

/// `.calltargets` names the candidates itself (no prototype).
#[test]
fn calltargets_list_the_candidates() {
    let decls = format!("{FUNCS}\n.global .align 8 .u64 two[2] = {{plus7, square}};\n");
    let body = load_entry("and.b32", 1, "two", "global")
        + r#"
    {
    .param .b32 p0;
    st.param.b32 [p0], %r2;
    .param .b32 r0;
    targets : .calltargets plus7, square;
    call (r0), %rd9, (p0), targets;
    ld.param.b32 %r4, [r0];
    }
    st.global.u32 [%rd3], %r4;
    st.global.u32 [%rd3+28], %r2;
"#;
    let (_, last) = run("calltargets", &decls, &body);
    each_thread(&last, 0, |_, x| {
        if x & 1 == 0 {
            x.wrapping_add(7)
        } else {
            x.wrapping_mul(x)
        }
    });
}

/// Function values are distinct, non-zero, and the same in an initializer and in code.
#[test]
fn function_values_are_distinct_and_not_null() {
    let decls = format!("{FUNCS}\n.global .align 8 .u64 fs[2] = {{twice, square}};\n");
    let body = r#"
    mov.u64 %rd8, fs;
    ld.global.u64 %rd9, [%rd8];
    ld.global.u64 %rd10, [%rd8+8];
    mov.u64 %rd11, twice;
    mov.u64 %rd12, square;
    setp.eq.u64 %p1, %rd9, %rd11;
    setp.eq.u64 %p2, %rd10, %rd12;
    setp.ne.u64 %p3, %rd11, %rd12;
    setp.ne.u64 %p4, %rd11, 0;
    and.pred %p1, %p1, %p2;
    and.pred %p3, %p3, %p4;
    and.pred %p1, %p1, %p3;
    selp.u32 %r4, 1, 0, %p1;
    st.global.u32 [%rd3], %r4;
"#;
    let (_, last) = run("fn_values", &decls, body);
    each_thread(&last, 0, |_, _| 1);
}

/// `brx.idx` through a `.branchtargets` table: a divergent jump to one of three labels (as a
/// chain of compares), each of which rejoins.
#[test]
fn brx_idx_jumps_to_the_indexed_label() {
    let body = r#"
    rem.u32 %r3, %r2, 3;
    ts: .branchtargets L0, L1, L2;
    brx.idx %r3, ts;
L0:
    mul.lo.u32 %r4, %r2, 5;
    bra.uni DONE;
L1:
    add.u32 %r4, %r2, 11;
    bra.uni DONE;
L2:
    xor.b32 %r4, %r2, 0x55;
DONE:
    st.global.u32 [%rd3], %r4;
    st.global.u32 [%rd3+28], %r2;
"#;
    let (_, last) = run("brx_idx", "", body);
    each_thread(&last, 0, |_, x| match x % 3 {
        0 => x.wrapping_mul(5),
        1 => x.wrapping_add(11),
        _ => x ^ 0x55,
    });
}

/// A function of the one-word prototype long enough to be kept as a subroutine when an
/// indirect call may reach it twice (`calls::outline`, 32 PTX instructions): `rounds` rounds
/// of `r = (r * m + i) ^ (r >> 7)` with `m = k + 2i + 1`.
fn long_func(name: &str, k: u32, rounds: u32) -> String {
    let mut s = format!(
        ".func (.param .b32 rv) {name}(.param .b32 a)\n{{\n    .reg .b32 %r<4>;\n    ld.param.u32 %r1, [a];\n"
    );
    for i in 0..rounds {
        let m = k + 2 * i + 1;
        s += &format!(
            "    mul.lo.u32 %r1, %r1, {m};\n    add.u32 %r1, %r1, {i};\n    shr.u32 %r2, %r1, 7;\n    xor.b32 %r1, %r1, %r2;\n"
        );
    }
    s + "    st.param.b32 [rv], %r1;\n    ret;\n}\n"
}

/// [`long_func`]'s meaning.
fn long_value(x: u32, k: u32, rounds: u32) -> u32 {
    let mut r = x;
    for i in 0..rounds {
        r = r.wrapping_mul(k + 2 * i + 1).wrapping_add(i);
        r ^= r >> 7;
    }
    r
}

/// Two indirect calls that may each reach two long functions: every candidate is called
/// (`CAL`), one body each (two `RET`s), as ptxas 11.8 keeps them (FunctionPointers'
/// SobelShared), instead of a copy per call and candidate; the results are still the
/// candidates' (word 0: `f[in & 1](in)`, word 1: `f[(in >> 1) & 1]` of word 0).
#[test]
fn indirect_candidates_kept_as_subroutines() {
    let decls = format!(
        "{}{}\n.global .align 8 .u64 ltab[2] = {{long_a, long_b}};\n",
        long_func("long_a", 3, 9),
        long_func("long_b", 10, 9)
    );
    let body = load_entry("and.b32", 1, "ltab", "global")
        + r#"
    {
    .param .b32 p0;
    st.param.b32 [p0], %r2;
    .param .b32 r0;
    proto_a : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (r0), %rd9, (p0), proto_a;
    ld.param.b32 %r4, [r0];
    }
    st.global.u32 [%rd3], %r4;
    shr.u32 %r5, %r2, 1;
    and.b32 %r5, %r5, 1;
    mul.wide.u32 %rd7, %r5, 8;
    mov.u64 %rd8, ltab;
    add.u64 %rd8, %rd8, %rd7;
    ld.global.u64 %rd10, [%rd8];
    {
    .param .b32 q0;
    st.param.b32 [q0], %r4;
    .param .b32 s0;
    proto_b : .callprototype (.param .b32 _) _ (.param .b32 _);
    call (s0), %rd10, (q0), proto_b;
    ld.param.b32 %r6, [s0];
    }
    st.global.u32 [%rd3+4], %r6;
    st.global.u32 [%rd3+28], %r2;
"#;
    let (out, last) = run("long_candidates", &decls, &body);
    let count = |op: &str| {
        texts(&out.sass)
            .iter()
            .filter(|t| t.starts_with(op))
            .count()
    };
    assert!(count("CAL") >= 2, "{}", out.sass);
    assert_eq!(count("RET"), 2, "{}", out.sass);
    let f = |x: u32, which: u32| long_value(x, if which == 0 { 3 } else { 10 }, 9);
    each_thread(&last, 0, |_, x| f(x, x & 1));
    each_thread(&last, 1, |_, x| f(f(x, x & 1), (x >> 1) & 1));
}

/// A four-argument function of the shape [`long_func`] makes: `r = a + 2b + 3c + 4d`, then
/// `rounds` of its rounds.
fn long_func4(name: &str, k: u32, rounds: u32) -> String {
    let mut s = format!(
        ".func (.param .b32 rv) {name}(.param .b32 a, .param .b32 b, .param .b32 c, .param .b32 d)\n{{\n    \
         .reg .b32 %r<8>;\n    ld.param.u32 %r1, [a];\n    ld.param.u32 %r3, [b];\n    \
         ld.param.u32 %r4, [c];\n    ld.param.u32 %r5, [d];\n    mad.lo.u32 %r1, %r3, 2, %r1;\n    \
         mad.lo.u32 %r1, %r4, 3, %r1;\n    mad.lo.u32 %r1, %r5, 4, %r1;\n"
    );
    for i in 0..rounds {
        let m = k + 2 * i + 1;
        s += &format!(
            "    mul.lo.u32 %r1, %r1, {m};\n    add.u32 %r1, %r1, {i};\n    shr.u32 %r2, %r1, 7;\n    xor.b32 %r1, %r1, %r2;\n"
        );
    }
    s + "    st.param.b32 [rv], %r1;\n    ret;\n}\n"
}

/// Two indirect call sites (on the two sides of a branch, with the same four arguments), so
/// that both candidates are reachable twice and kept as subroutines: at each site the
/// arguments are moved into R4..R7 at most once, before the dispatch
/// (`select::call::shared_arg_calls`), not once per candidate's `CAL` (the arguments stay
/// live after the call, so each needs a copy in its ABI register: four moves per register
/// before the rule); and the last candidate is entered without a compare (a pointer holds
/// one of the candidates' values), so one 64-bit compare (two `ISETP`s) per site picks
/// between the two. Words 0-4: the result and the four arguments, computed by hand.
#[test]
fn indirect_call_arguments_move_once() {
    let decls = format!(
        "{}{}\n.global .align 8 .u64 ftab[2] = {{four_a, four_b}};\n",
        long_func4("four_a", 3, 9),
        long_func4("four_b", 10, 9)
    );
    // One call site through the table with the four arguments; `proto` names its prototype.
    let site = |proto: &str| {
        format!(
            "    {{\n    .param .b32 p0;\n    st.param.b32 [p0], %r2;\n    .param .b32 p1;\n    \
             st.param.b32 [p1], %r12;\n    .param .b32 p2;\n    st.param.b32 [p2], %r13;\n    \
             .param .b32 p3;\n    st.param.b32 [p3], %r14;\n    .param .b32 r0;\n    \
             {proto} : .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _, \
             .param .b32 _, .param .b32 _);\n    call (r0), %rd9, (p0, p1, p2, p3), {proto};\n    \
             ld.param.b32 %r4, [r0];\n    }}\n"
        )
    };
    let body = load_entry("and.b32", 1, "ftab", "global")
        + r#"
    add.u32 %r12, %r2, 1;
    mul.lo.u32 %r13, %r2, 3;
    xor.b32 %r14, %r2, 5;
    and.b32 %r15, %r2, 2;
    setp.eq.u32 %p7, %r15, 0;
    @%p7 bra $L_second;
"# + &site("proto_4")
        + "    bra.uni $L_join;\n$L_second:\n"
        + &site("proto_4b")
        + r#"$L_join:
    st.global.u32 [%rd3], %r4;
    st.global.u32 [%rd3+4], %r2;
    st.global.u32 [%rd3+8], %r12;
    st.global.u32 [%rd3+12], %r13;
    st.global.u32 [%rd3+16], %r14;
    st.global.u32 [%rd3+28], %r2;
"#;
    let (out, last) = run("four_args", &decls, &body);
    let all = texts(&out.sass);
    // The kernel's code: everything up to its last EXIT (the subroutines follow it).
    let end = all.iter().rposition(|t| t.starts_with("EXIT")).unwrap() + 1;
    let kernel = &all[..end];
    let count = |pred: &dyn Fn(&str) -> bool| kernel.iter().filter(|t| pred(t)).count();
    assert_eq!(count(&|t| t.starts_with("CAL")), 4, "{}", out.sass);
    for r in ["R4", "R5", "R6", "R7"] {
        let moves = count(&|t| t.starts_with("MOV ") && t[4..].starts_with(&format!("{r},")));
        assert!(moves <= 2, "{moves} moves into {r}:\n{}", out.sass);
    }
    assert_eq!(count(&|t| t.starts_with("ISETP")), 4, "{}", out.sass);
    let f = |x: u32, k: u32| {
        let (b, c, d) = (x.wrapping_add(1), x.wrapping_mul(3), x ^ 5);
        let s = x
            .wrapping_add(b.wrapping_mul(2))
            .wrapping_add(c.wrapping_mul(3))
            .wrapping_add(d.wrapping_mul(4));
        long_value(s, k, 9)
    };
    each_thread(&last, 0, |_, x| f(x, if x & 1 == 0 { 3 } else { 10 }));
    each_thread(&last, 1, |_, x| x);
    each_thread(&last, 2, |_, x| x.wrapping_add(1));
    each_thread(&last, 3, |_, x| x.wrapping_mul(3));
    each_thread(&last, 4, |_, x| x ^ 5);
}
