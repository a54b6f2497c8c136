//! Inputs and launches shaped by the kernel (`verify::inputs`, `verify::shape`): one table
//! ([`CASES`]) of small kernels, one per inference rule, each of which faulted on the old
//! random inputs (pointers only in plain pointer parameters, every other word random) or
//! raced at the default launch, with every line `--explain-inputs` prints for it and the
//! launch it verifies at (full); the clock model; launches that used to be refused (buffers on the module
//! globals' line, races between CTAs); and that the injected miscompile is still caught on
//! a pointer-chasing kernel.

use leafold::driver::{InjectBug, Options};
use leafold::verify::inputs::{infer, Kind};
use leafold::verify::{verify_file, Outcome, VerifyOptions};
use std::process::Command;

const HEAD: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

fn opts() -> VerifyOptions {
    VerifyOptions {
        runs: 3,
        ..VerifyOptions::default()
    }
}

/// A pointer parameter inside a struct passed by value (`{ long n; float *p; }`): the
/// struct used to be random bytes (but for a pointer at its start).
const STRUCT_BY_VALUE: &str = r#"
.visible .entry k(.param .align 8 .b8 s[16], .param .u64 out)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [s+8];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r4, [%rd4];
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r4;
    ret;
}
"#;

/// `rows[i][j]`: an array of pointers (`float **rows`), each row read and written.
const POINTER_IN_MEMORY: &str = r#"
.visible .entry k(.param .u64 rows)
{
    .reg .b64 %rd<10>;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [rows];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u64 %rd4, [%rd3];
    ld.global.u32 %r4, [%rd4+4];
    add.s32 %r4, %r4, 1;
    st.global.u32 [%rd4], %r4;
    ret;
}
"#;

/// A pointer to a struct of pointers and a count (`struct { int *src; int *dst; int n; }`):
/// each thread copies `n` words from `src` to its own part of `dst`.
const STRUCT_OF_POINTERS: &str = r#"
.visible .entry k(.param .u64 desc)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<10>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [desc];
    ld.global.u64 %rd2, [%rd1];
    ld.global.u64 %rd3, [%rd1+8];
    ld.global.u32 %r9, [%rd1+16];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.lo.u32 %r1, %r1, 64;
    mov.u32 %r5, 0;
LOOP:
    setp.ge.u32 %p1, %r5, %r9;
    @%p1 bra DONE;
    add.s32 %r6, %r1, %r5;
    mul.wide.s32 %rd4, %r6, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r7, [%rd5];
    add.s64 %rd6, %rd3, %rd4;
    st.global.u32 [%rd6], %r7;
    add.s32 %r5, %r5, 1;
    bra LOOP;
DONE:
    ret;
}
"#;

/// A pitched 2-D array passed as `{ size_t pitch; char *ptr; }` by value: the pitch
/// multiplies the row index, so it is a size (it used to be 8 random bytes).
const PITCHED: &str = r#"
.visible .entry k(.param .align 8 .b8 p[16], .param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [p+8];
    ld.param.u64 %rd2, [p];
    ld.param.u64 %rd9, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    cvt.u64.u32 %rd3, %r2;
    mul.lo.s64 %rd4, %rd3, %rd2;
    add.s64 %rd5, %rd1, %rd4;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd5, %rd6;
    ld.global.u32 %r3, [%rd7];
    mov.u32 %r4, %ntid.x;
    mad.lo.u32 %r5, %r2, %r4, %r1;
    mul.wide.u32 %rd8, %r5, 4;
    add.s64 %rd10, %rd9, %rd8;
    st.global.u32 [%rd10], %r3;
    ret;
}
"#;

/// A loop bound read from memory (`n = hdr[0]; for j < n: sum += a[j]`): a random word made
/// the loop run off the buffer.
const LOOP_BOUND: &str = r#"
.visible .entry k(.param .u64 hdr, .param .u64 a, .param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<10>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [hdr];
    ld.param.u64 %rd2, [a];
    ld.param.u64 %rd3, [out];
    ld.global.u32 %r9, [%rd1];
    mov.u32 %r5, 0;
    mov.u32 %r6, 0;
LOOP:
    setp.ge.u32 %p1, %r5, %r9;
    @%p1 bra DONE;
    mul.wide.u32 %rd4, %r5, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r7, [%rd5];
    add.s32 %r6, %r6, %r7;
    add.s32 %r5, %r5, 1;
    bra LOOP;
DONE:
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.global.u32 [%rd7], %r6;
    ret;
}
"#;

/// CSR-style gather: `out[i] = x[col[i]]` with the index loaded from memory.
const GATHER: &str = r#"
.visible .entry k(.param .u64 col, .param .u64 x, .param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [col];
    ld.param.u64 %rd2, [x];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.u32 %r4, [%rd5];
    mul.wide.u32 %rd6, %r4, 4;
    add.s64 %rd7, %rd2, %rd6;
    ld.global.u32 %r5, [%rd7];
    add.s64 %rd8, %rd3, %rd4;
    st.global.u32 [%rd8], %r5;
    ret;
}
"#;

/// An index passed through shared memory (as bitonic merge's `startSrcA`): thread 0 loads
/// it from `idx`, stores it to shared memory, and every thread reads it back and gathers at
/// it. A random word of `idx` used to fault; the inference follows the shared load to the
/// store and on to the global load, and makes that word small.
const INDEX_THROUGH_SHARED: &str = r#"
.visible .entry k(.param .u64 idx, .param .u64 src, .param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<12>;
    .reg .pred %p<2>;
    .shared .align 4 .b8 start[4];
    ld.param.u64 %rd1, [idx];
    ld.param.u64 %rd2, [src];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    ld.global.u32 %r5, [%rd1];
    st.shared.u32 [start], %r5;
WAIT:
    bar.sync 0;
    ld.shared.u32 %r6, [start];
    add.s32 %r7, %r6, %r1;
    mul.wide.u32 %rd4, %r7, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r8, [%rd5];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd6, %r4, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.global.u32 [%rd7], %r8;
    ret;
}
"#;

/// A tile number taken from a counter with an atomic (as CUB onesweep's tile id), passed
/// through shared memory and scaled by the tile's 16 KiB into the source address. Even a
/// small random counter (up to 63 tiles of 16 KiB) ran off the buffer; the counter is now
/// an index scaled by 16384 bytes, drawn within a quarter of the buffer.
const TILE_FROM_AN_ATOMIC: &str = r#"
.visible .entry k(.param .u64 counter, .param .u64 src, .param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<12>;
    .reg .pred %p<2>;
    .shared .align 4 .b8 tile[4];
    ld.param.u64 %rd1, [counter];
    ld.param.u64 %rd2, [src];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    atom.global.add.u32 %r5, [%rd1], 1;
    st.shared.u32 [tile], %r5;
WAIT:
    bar.sync 0;
    ld.shared.u32 %r6, [tile];
    mul.lo.s32 %r7, %r6, 4096;
    add.s32 %r7, %r7, %r1;
    mul.wide.u32 %rd4, %r7, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r8, [%rd5];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd6, %r4, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.global.u32 [%rd7], %r8;
    ret;
}
"#;

/// A pointer compared with another: `do { sum += *p++; } while (p != end)`; a small `end`
/// never equalled `p`.
const END_POINTER: &str = r#"
.visible .entry k(.param .u64 begin, .param .u64 end, .param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<8>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [begin];
    ld.param.u64 %rd2, [end];
    ld.param.u64 %rd3, [out];
    mov.u32 %r6, 0;
LOOP:
    ld.global.u32 %r7, [%rd1];
    add.s32 %r6, %r6, %r7;
    add.s64 %rd1, %rd1, 4;
    setp.ne.s64 %p1, %rd1, %rd2;
    @%p1 bra LOOP;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.global.u32 [%rd7], %r6;
    ret;
}
"#;

/// A linked list: `while (n--) p = p->next; out[i] = p->value` (the next field points
/// back into the nodes' own buffer).
const LIST: &str = r#"
.visible .entry k(.param .u64 head, .param .u64 out, .param .u32 n)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<8>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [head];
    ld.param.u64 %rd3, [out];
    ld.param.u32 %r5, [n];
LOOP:
    setp.eq.s32 %p1, %r5, 0;
    @%p1 bra DONE;
    ld.global.u64 %rd1, [%rd1+8];
    sub.s32 %r5, %r5, 1;
    bra LOOP;
DONE:
    ld.global.u32 %r6, [%rd1];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd3, %rd6;
    st.global.u32 [%rd7], %r6;
    ret;
}
"#;

/// A kernel written for one thread: a running sum of `in` stored to `out[0..16]`, the same
/// addresses whatever the thread. Every thread of the default launch stores to the same
/// places (a race); the launch from the kernel is one thread.
const ONE_THREAD: &str = r#"
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<8>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    mov.u32 %r1, 0;
    mov.u32 %r2, 0;
LOOP:
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r3, [%rd4];
    add.s32 %r2, %r2, %r3;
    add.s64 %rd5, %rd1, %rd3;
    st.global.u32 [%rd5], %r2;
    add.s32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra LOOP;
    ret;
}
"#;

/// A row of 8 words in shared memory indexed by `%tid.x` and a global index `8·ctaid + tid`:
/// written for blocks of 8 threads. At 64 threads the row is accessed out of its extent
/// and the CTAs overlap; the launch from the kernel is 8 threads per CTA.
const ROW8: &str = r#"
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<16>;
    .shared .align 4 .b8 row[32];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, %ctaid.x;
    shl.b32 %r4, %r3, 3;
    add.s32 %r7, %r1, %r4;
    mul.wide.u32 %rd3, %r7, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r8, [%rd4];
    mov.u32 %r9, row;
    shl.b32 %r12, %r1, 2;
    add.s32 %r13, %r9, %r12;
    st.shared.u32 [%r13], %r8;
    bar.sync 0;
    xor.b32 %r5, %r1, 7;
    shl.b32 %r12, %r5, 2;
    add.s32 %r13, %r9, %r12;
    ld.shared.u32 %r14, [%r13];
    add.s64 %rd5, %rd1, %rd3;
    st.global.u32 [%rd5], %r14;
    ret;
}
"#;

/// An 8×8 tile transposed in shared memory (`tile[ty][tx]` stored, `tile[tx][ty]` loaded):
/// written for 8×8 blocks. At 16×4 rows overlap (a race); the launch from the kernel is 8×8.
const TILE8: &str = r#"
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<16>;
    .shared .align 4 .b8 tile[256];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ctaid.x;
    shl.b32 %r4, %r3, 6;
    shl.b32 %r5, %r2, 3;
    add.s32 %r6, %r5, %r1;
    add.s32 %r7, %r6, %r4;
    mul.wide.u32 %rd3, %r7, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r8, [%rd4];
    mov.u32 %r9, tile;
    shl.b32 %r10, %r2, 5;
    add.s32 %r11, %r9, %r10;
    shl.b32 %r12, %r1, 2;
    add.s32 %r13, %r11, %r12;
    st.shared.u32 [%r13], %r8;
    bar.sync 0;
    shl.b32 %r10, %r1, 5;
    add.s32 %r11, %r9, %r10;
    shl.b32 %r12, %r2, 2;
    add.s32 %r13, %r11, %r12;
    ld.shared.u32 %r14, [%r13];
    add.s64 %rd5, %rd1, %rd3;
    st.global.u32 [%rd5], %r14;
    ret;
}
"#;

/// Two groups of 8 threads (lud's `lud_perimeter`): threads below 8 fill the row `a`, the
/// others fill `b` from `tid - 8`, then each reads the other row. The extent of either row
/// gives 8 threads, which would leave the second group's code unrun: the launch from the
/// kernel is 8 + 8 threads. At 64 threads `b` is accessed past its extent.
const TWO_GROUPS: &str = r#"
.visible .entry k(.param .u64 out, .param .u64 in)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<20>;
    .reg .pred %p<2>;
    .shared .align 4 .b8 a[32];
    .shared .align 4 .b8 b[32];
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, %ctaid.x;
    shl.b32 %r4, %r3, 4;
    add.s32 %r7, %r1, %r4;
    mul.wide.u32 %rd3, %r7, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r8, [%rd4];
    setp.lt.u32 %p1, %r1, 8;
    @%p1 bra FIRST;
    add.s32 %r10, %r1, -8;
    shl.b32 %r11, %r10, 2;
    mov.u32 %r12, b;
    add.s32 %r13, %r12, %r11;
    st.shared.u32 [%r13], %r8;
    bra.uni JOIN;
FIRST:
    shl.b32 %r11, %r1, 2;
    mov.u32 %r12, a;
    add.s32 %r13, %r12, %r11;
    st.shared.u32 [%r13], %r8;
JOIN:
    bar.sync 0;
    @%p1 bra READ_B;
    mov.u32 %r14, a;
    add.s32 %r15, %r14, %r11;
    ld.shared.u32 %r16, [%r15];
    bra.uni DONE;
READ_B:
    mov.u32 %r14, b;
    add.s32 %r15, %r14, %r11;
    ld.shared.u32 %r16, [%r15];
DONE:
    add.s64 %rd5, %rd1, %rd3;
    st.global.u32 [%rd5], %r16;
    ret;
}
"#;

/// Every thread adds 1 to one counter and stores what it saw to one place: no store
/// address depends on the thread, but the atomic makes it a kernel for many threads, so
/// the one-thread rule does not apply and it verifies only at a reduced launch (the store of
/// the old value races at the full one).
const COUNTER: &str = r#"
.visible .entry k(.param .u64 out, .param .u64 counter)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [counter];
    atom.global.add.u32 %r1, [%rd2], 1;
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;

/// What a case's kernel must verify as.
enum Expect {
    /// A match at the default full launch.
    Full,
    /// A match at the launch the kernel is written for (`verify::shape`), counted as full.
    FromKernel { grid: [u32; 3], block: [u32; 3] },
    /// A match only at a smaller launch than the full one.
    Reduced { grid: [u32; 3], block: [u32; 3] },
}

/// One inference case: a small kernel that cannot run (faults or races) on the default
/// random inputs or launch without the rule, what `--explain-inputs` prints for it (every
/// line, in order), and how it verifies.
struct Case {
    name: &'static str,
    ptx: &'static str,
    /// A launch directive put before the kernel's body.
    directive: Option<&'static str>,
    explain: &'static [&'static str],
    outcome: Expect,
}

const CASES: &[Case] = &[
    Case {
        name: "pointer parameter in a struct by value",
        ptx: STRUCT_BY_VALUE,
        directive: None,
        explain: &[
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  param offset 16 (8 bytes): pointer into buffer 1",
            "  buffer 0: parameter s bytes 8..16 (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "pointer loaded from memory",
        ptx: POINTER_IN_MEMORY,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter rows (depth 0; its parameter points past its margin)",
            "    field +0 every 8 bytes (8 bytes): pointer into buffer 1",
            "  buffer 1: the pointer loaded by inst9 (PTX line 16) (depth 1; records reached through loaded pointers)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "struct of pointers",
        ptx: STRUCT_OF_POINTERS,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter desc (depth 0; its parameter points past its margin)",
            "    field +0 (8 bytes): pointer into buffer 1",
            "    field +8 (8 bytes): pointer into buffer 2",
            "    field +16 (4 bytes): small (index, size or bound: in 1..64)",
            "  buffer 1: the pointer loaded by inst1 (PTX line 11) (depth 1; records reached through loaded pointers)",
            "  buffer 2: the pointer loaded by inst2 (PTX line 12) (depth 1; records reached through loaded pointers)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "index bounded by a size parameter",
        ptx: PITCHED,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): small (index, size or bound: in 1..64)",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  param offset 16 (8 bytes): pointer into buffer 1",
            "  buffer 0: parameter p bytes 8..16 (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "loop bound loaded from memory",
        ptx: LOOP_BOUND,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  param offset 8 (8 bytes): pointer into buffer 1",
            "  param offset 16 (8 bytes): pointer into buffer 2",
            "  buffer 0: parameter hdr (depth 0; its parameter points past its margin)",
            "    field +0 (4 bytes): small (index, size or bound: in 1..64)",
            "  buffer 1: parameter a (depth 0; its parameter points past its margin)",
            "  buffer 2: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "index loaded from memory",
        ptx: GATHER,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  param offset 8 (8 bytes): pointer into buffer 1",
            "  param offset 16 (8 bytes): pointer into buffer 2",
            "  buffer 0: parameter col (depth 0; its parameter points past its margin)",
            "    field +0 every 4 bytes (4 bytes): small (index, size or bound: in 1..64)",
            "  buffer 1: parameter x (depth 0; its parameter points past its margin)",
            "  buffer 2: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "index passed through shared memory",
        ptx: INDEX_THROUGH_SHARED,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  param offset 8 (8 bytes): pointer into buffer 1",
            "  param offset 16 (8 bytes): pointer into buffer 2",
            "  buffer 0: parameter idx (depth 0; its parameter points past its margin)",
            "    field +0 (4 bytes): small (index, size or bound: in 1..64)",
            "  buffer 1: parameter src (depth 0; its parameter points past its margin)",
            "  buffer 2: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "index from an atomic scaled into an address",
        ptx: TILE_FROM_AN_ATOMIC,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  param offset 8 (8 bytes): pointer into buffer 1",
            "  param offset 16 (8 bytes): pointer into buffer 2",
            "  buffer 0: parameter counter (depth 0; its parameter points past its margin)",
            "    field +0 (4 bytes): index into an address, 16384 bytes a unit (in 1..=1 for a 64 KiB buffer)",
            "  buffer 1: parameter src (depth 0; its parameter points past its margin)",
            "  buffer 2: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "pointer compared with a pointer",
        ptx: END_POINTER,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  param offset 8 (8 bytes): end pointer into buffer 0 (compared with a pointer)",
            "  param offset 16 (8 bytes): pointer into buffer 1",
            "  buffer 0: parameter begin (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "linked list",
        ptx: LIST,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 0",
            "  param offset 8 (8 bytes): pointer into buffer 1",
            "  param offset 16 (4 bytes): small (index, size or bound: in 1..64)",
            "  buffer 0: parameter head (depth 0; its parameter points past its margin)",
            "    field +8 (8 bytes): pointer into buffer 2",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "  buffer 2: the pointer loaded by inst7 (PTX line 16) (depth 1; records reached through loaded pointers)",
            "    field +8 (8 bytes): pointer into buffer 2",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Full,
    },
    Case {
        name: "launch rule: one thread",
        ptx: ONE_THREAD,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 1",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter in (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default); when undefined there: grid [1, 1, 1], one thread: no store address depends on the thread or CTA index",
        ],
        outcome: Expect::FromKernel { grid: [1, 1, 1], block: [1, 1, 1] },
    },
    Case {
        name: "launch rule: extent of a 1D shared array",
        ptx: ROW8,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 1",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter in (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default); when undefined there: grid [2, 1, 1], block [8, 1, 1] from the extent of `k.row` indexed by %tid",
        ],
        outcome: Expect::FromKernel { grid: [2, 1, 1], block: [8, 1, 1] },
    },
    Case {
        name: "launch rule: extent of a 2D shared tile",
        ptx: TILE8,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 1",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter in (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [16, 4, 1] (default); when undefined there: grid [2, 1, 1], block [8, 8, 1] from the extent of `k.tile` indexed by %tid",
        ],
        outcome: Expect::FromKernel { grid: [2, 1, 1], block: [8, 8, 1] },
    },
    Case {
        name: "launch rule: .reqntid",
        ptx: ROW8,
        directive: Some(".reqntid 8, 1, 1"),
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 1",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter in (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [8, 1, 1] from .reqntid (the full launch)",
        ],
        outcome: Expect::FromKernel { grid: [2, 1, 1], block: [8, 1, 1] },
    },
    Case {
        name: "launch rule: two thread groups split at a %tid.x comparison",
        ptx: TWO_GROUPS,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 1",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter in (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default); when undefined there: grid [2, 1, 1], block [16, 1, 1] from the extent of `k.b` indexed by %tid",
        ],
        outcome: Expect::FromKernel { grid: [2, 1, 1], block: [16, 1, 1] },
    },
    Case {
        name: "launch rule: no one thread for a kernel with an atomic",
        ptx: COUNTER,
        directive: None,
        explain: &[
            "  param offset 0 (8 bytes): pointer into buffer 1",
            "  param offset 8 (8 bytes): pointer into buffer 0",
            "  buffer 0: parameter counter (depth 0; its parameter points past its margin)",
            "  buffer 1: parameter out (depth 0; its parameter points past its margin)",
            "k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)",
        ],
        outcome: Expect::Reduced { grid: [1, 1, 1], block: [1, 1, 1] },
    },
];

/// A case's module: the header, the kernel, its directive (if any) before the body.
fn case_ptx(case: &Case) -> String {
    let body = match case.directive {
        Some(d) => case.ptx.replacen("\n{", &format!("\n{d}\n{{"), 1),
        None => case.ptx.to_string(),
    };
    format!("{HEAD}{body}")
}

/// The `--explain-inputs` lines of the only kernel of `ptx` (inputs, then launch).
fn explain_lines(ptx: &str) -> Vec<String> {
    let o = opts();
    let plans = leafold::verify::explain_inputs(ptx, None, &o).expect("builds");
    let launches = leafold::verify::explain_launches(ptx, None, &o).expect("builds");
    assert_eq!((plans.len(), launches.len()), (1, 1));
    let mut lines: Vec<String> = plans[0].1.to_string().lines().map(String::from).collect();
    lines.push(format!("{}: launch: {}", launches[0].0, launches[0].1));
    lines
}

#[test]
fn every_inference_case_explains_and_verifies() {
    let mut failures = Vec::new();
    for case in CASES {
        let ptx = case_ptx(case);
        let lines = explain_lines(&ptx);
        if lines != case.explain {
            failures.push(format!("{}: explained as\n{}", case.name, lines.join("\n")));
            continue;
        }
        let v = verify_file(&ptx, None, &opts()).expect("compiles");
        assert_eq!(v.len(), 1);
        let ok = match (&case.outcome, &v[0].outcome) {
            (
                Expect::Full,
                Outcome::Match {
                    one_thread: None,
                    runs: 3,
                    ..
                },
            ) => v[0].launch_from_kernel.is_none(),
            (
                Expect::FromKernel { grid, block },
                Outcome::Match {
                    one_thread: None,
                    runs: 3,
                    launch,
                    ..
                },
            ) => v[0].launch_from_kernel.is_some() && launch == &[*grid, *block],
            (
                Expect::Reduced { grid, block },
                Outcome::Match {
                    one_thread: Some(_),
                    runs: 3,
                    launch,
                    ..
                },
            ) => v[0].launch_from_kernel.is_none() && launch == &[*grid, *block],
            _ => false,
        };
        if !ok {
            failures.push(format!("{}: {}", case.name, v[0]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each launch rule's kernel cannot run at the default launch: without the rule it would
/// verify only at a reduced launch (the rule is what makes it full).
#[test]
fn launch_rule_kernels_are_undefined_at_the_default_launch() {
    for case in CASES {
        if !matches!(case.outcome, Expect::FromKernel { .. }) {
            continue;
        }
        let ptx = case_ptx(case);
        // A fixed block turns the rules off: the default launch and its fallbacks only.
        let o = VerifyOptions {
            shape_block: false,
            block: [64, 1, 1],
            ..opts()
        };
        let v = verify_file(&ptx, None, &o).expect("compiles");
        assert!(
            !matches!(
                v[0].outcome,
                Outcome::Match {
                    one_thread: None,
                    ..
                }
            ),
            "{}: {}",
            case.name,
            v[0]
        );
    }
}

#[test]
fn inference_is_general_not_per_file() {
    // The same rules in a 32-bit module: pointers are 4 bytes.
    let ptx = r#".version 7.0
.target sm_50
.address_size 32
.visible .entry k(.param .u32 desc)
{
    .reg .b32 %r<20>;
    .reg .pred %p<2>;
    ld.param.u32 %r11, [desc];
    ld.global.u32 %r12, [%r11];
    ld.global.u32 %r13, [%r11+4];
    ld.global.u32 %r9, [%r11+8];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.lo.u32 %r1, %r1, 64;
    mov.u32 %r5, 0;
LOOP:
    setp.ge.u32 %p1, %r5, %r9;
    @%p1 bra DONE;
    add.s32 %r6, %r1, %r5;
    shl.b32 %r14, %r6, 2;
    add.s32 %r15, %r12, %r14;
    ld.global.u32 %r7, [%r15];
    add.s32 %r16, %r13, %r14;
    st.global.u32 [%r16], %r7;
    add.s32 %r5, %r5, 1;
    bra LOOP;
DONE:
    ret;
}
"#;
    let file = leafold::SourceFile::new("t.ptx", ptx);
    let (ast, _) = leafold::ptx::parse_and_check(&file).expect("parses");
    let module = leafold::ir::build(&ast, &file).expect("builds");
    let plan = infer(&module.functions[0], true);
    assert!(
        plan.objects[0]
            .fields
            .iter()
            .any(|f| f.offset == 8 && f.kind == Kind::Small),
        "{plan}"
    );
    let ptrs: Vec<(u64, u32)> = plan.objects[0]
        .fields
        .iter()
        .filter(|f| matches!(f.kind, Kind::Pointer { .. }))
        .map(|f| (f.offset, f.bytes))
        .collect();
    assert_eq!(ptrs, vec![(0, 4), (4, 4)], "{plan}");
    let v = verify_file(ptx, None, &opts()).expect("compiles");
    assert!(
        matches!(
            v[0].outcome,
            Outcome::Match {
                one_thread: None,
                ..
            }
        ),
        "{}",
        v[0]
    );
}

/// `%clock64` and `%globaltimer` twice, the differences stored: the model gives both
/// sides the same per-thread sequence.
const CLOCKS: &str = r#"
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<8>;
    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, %clock64;
    mov.u32 %r4, %clock;
    mov.u64 %rd3, %globaltimer;
    mov.u64 %rd4, %clock64;
    mov.u64 %rd5, %globaltimer;
    sub.s64 %rd4, %rd4, %rd2;
    sub.s64 %rd5, %rd5, %rd3;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.u32 %r1, %r2, %r3, %r1;
    mul.wide.u32 %rd6, %r1, 24;
    add.s64 %rd7, %rd1, %rd6;
    st.global.u64 [%rd7], %rd4;
    st.global.u64 [%rd7+8], %rd5;
    st.global.u32 [%rd7+16], %r4;
    ret;
}
"#;

#[test]
fn clocks_read_a_deterministic_model_on_both_sides() {
    let v = verify_file(&format!("{HEAD}{CLOCKS}"), None, &opts()).expect("compiles");
    assert!(
        matches!(
            v[0].outcome,
            Outcome::Match {
                one_thread: None,
                runs: 3,
                ..
            }
        ),
        "{}",
        v[0]
    );
    let ptx = format!("{HEAD}{CLOCKS}");
    // The reference's values: the second clock64 read is two reads after the first.
    let file = leafold::SourceFile::new("t.ptx", &ptx);
    let (ast, _) = leafold::ptx::parse_and_check(&file).unwrap();
    let module = leafold::ir::build(&ast, &file).unwrap();
    let mut l = leafold::ir::eval::Launch::new([1, 1, 1], [1, 1, 1]);
    l.params = 0x1000u64.to_le_bytes().to_vec();
    l.global.push(leafold::ir::eval::GlobalRegion {
        base: 0x1000,
        bytes: vec![0; 24],
    });
    let out = leafold::ir::eval::run(&module, "k", &l).unwrap();
    let b = &out.global[0].bytes;
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let (lo0, _) = leafold::ir::eval::timer_value(false, 0);
    let (lo2, _) = leafold::ir::eval::timer_value(false, 2);
    let (t0, _) = leafold::ir::eval::timer_value(true, 0);
    let (t1, _) = leafold::ir::eval::timer_value(true, 1);
    assert_eq!(word(0), u64::from(lo2 - lo0));
    assert_eq!(word(8), u64::from(t1 - t0));
    // And ptxas's code reads the same model in the simulator.
    let Some(oracle) =
        leafold::oracle::Oracle::for_test("clocks_read_a_deterministic_model_on_both_sides")
    else {
        return;
    };
    let cubin = oracle.ptxas(&ptx, "sm_50", &[]).expect("ptxas compiles it");
    let o = VerifyOptions {
        ptxas_cubin: Some(cubin),
        ..opts()
    };
    let v = verify_file(&ptx, None, &o).unwrap();
    assert!(
        matches!(v[0].outcome, Outcome::Match { ptxas: true, .. }),
        "{}",
        v[0]
    );
}

/// Seven pointer parameters and a module `.global` variable: buffer 6 used to straddle the
/// line the module's variables start on ("global regions at 0x700000000 overlap").
#[test]
fn buffers_never_overlap_the_module_globals() {
    let mut params = Vec::new();
    let mut body = String::new();
    for k in 0..8 {
        params.push(format!(".param .u64 p{k}"));
        body.push_str(&format!(
            "    ld.param.u64 %rd{k}, [p{k}];\n    ld.global.u32 %r{k}, [%rd{k}];\n    add.s32 %r9, %r9, %r{k};\n"
        ));
    }
    let ptx = format!(
        "{HEAD}.global .u32 g;\n.visible .entry k({})\n{{\n    .reg .b64 %rd<10>;\n    .reg .b32 %r<10>;\n    mov.u32 %r9, 0;\n{body}    st.global.u32 [%rd0], %r9;\n    ld.global.u32 %r8, [g];\n    st.global.u32 [%rd1], %r8;\n    ret;\n}}\n",
        params.join(", ")
    );
    let o = VerifyOptions {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        ..opts()
    };
    let v = verify_file(&ptx, None, &o).expect("compiles");
    assert!(matches!(v[0].outcome, Outcome::Match { .. }), "{}", v[0]);
}

/// A block too small for both thread groups of [`TWO_GROUPS`] (12 threads: the extent's 8
/// plus the split's 8 do not fit): the launch from the kernel leaves the second group's code
/// unrun, and says so (a match on it counts as reduced, not full).
#[test]
fn a_launch_that_leaves_a_thread_group_unrun_is_not_claimed_full() {
    let ptx = format!("{HEAD}{TWO_GROUPS}");
    let o = VerifyOptions {
        block: [12, 1, 1],
        ..opts()
    };
    let launches = leafold::verify::explain_launches(&ptx, None, &o).expect("builds");
    assert_eq!(
        launches[0].1,
        "grid [2, 1, 1], block [12, 1, 1] (default); when undefined there: grid [2, 1, 1], \
         block [8, 1, 1] from the extent of `k.b` indexed by %tid, which leaves threads past a \
         `%tid.x` comparison unrun"
    );
}

/// Every CTA stores its index to `out[tid]`: the full launch races between CTAs, one CTA of
/// the full block is defined (before, only one thread per CTA was tried). The kernel reads
/// `%ctaid`, so one CTA is a reduced launch.
#[test]
fn a_race_between_ctas_verifies_on_one_cta_with_the_full_block() {
    let ptx = format!(
        "{HEAD}{}",
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#
    );
    let v = verify_file(&ptx, None, &opts()).expect("compiles");
    match &v[0].outcome {
        Outcome::Match {
            one_thread: Some(_),
            one_cta: true,
            launch: [grid, block],
            ..
        } => {
            assert_eq!(*grid, [1, 1, 1]);
            assert_eq!(*block, [64, 1, 1]);
            assert!(
                v[0].to_string().contains("one CTA of [64, 1, 1] threads"),
                "{}",
                v[0]
            );
        }
        _ => panic!("{}", v[0]),
    }
}

/// The same race between CTAs in a kernel that never reads `%ctaid`: every CTA does the same
/// work, so the kernel is written for one CTA (`verify::shape`'s rule 4) and one CTA of the
/// full block is its full launch.
#[test]
fn a_kernel_blind_to_its_cta_verifies_on_one_cta_as_its_full_launch() {
    let ptx = format!(
        "{HEAD}{}",
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<8>;
    .reg .b32 %r<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"#
    );
    let launches = leafold::verify::explain_launches(&ptx, None, &opts()).expect("builds");
    assert_eq!(
        launches[0].1,
        "grid [2, 1, 1], block [64, 1, 1] (default); when undefined there: grid [1, 1, 1], one \
         CTA: nothing depends on the CTA index"
    );
    let v = verify_file(&ptx, None, &opts()).expect("compiles");
    match &v[0].outcome {
        Outcome::Match {
            one_thread: None,
            launch,
            ..
        } => {
            assert_eq!(*launch, [[1, 1, 1], [64, 1, 1]]);
            assert!(v[0].launch_from_kernel.is_some(), "{}", v[0]);
        }
        _ => panic!("{}", v[0]),
    }
}

/// `leafold verify --explain-inputs` prints the plan before the verdict.
#[test]
fn cli_explains_inputs() {
    let dir = std::env::temp_dir().join(format!("leafold-verify-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rows.ptx");
    std::fs::write(&path, format!("{HEAD}{POINTER_IN_MEMORY}")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_leafold"))
        .args(["verify", "--explain-inputs", "--runs", "1"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("k: inputs"), "{text}");
    assert!(
        text.contains("param offset 0 (8 bytes): pointer into buffer 0"),
        "{text}"
    );
    assert!(
        text.contains("field +0 every 8 bytes (8 bytes): pointer into buffer 1"),
        "{text}"
    );
    assert!(
        text.contains("k: launch: grid [2, 1, 1], block [64, 1, 1] (default; no rule applies)"),
        "{text}"
    );
    assert!(text.contains("k: OK, 1 runs match"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The injected miscompile (every LEA scaled by one too many) is caught on a
/// pointer-chasing kernel, which only runs at all with shaped inputs.
#[test]
fn injected_miscompile_caught_on_a_pointer_chasing_kernel() {
    let ptx = format!("{HEAD}{POINTER_IN_MEMORY}");
    let good = verify_file(&ptx, None, &opts()).unwrap();
    assert!(
        matches!(
            good[0].outcome,
            Outcome::Match {
                one_thread: None,
                ..
            }
        ),
        "{}",
        good[0]
    );
    let o = VerifyOptions {
        compile: Options {
            debug_inject: Some(InjectBug::WrongLeaScale),
            ..Options::default()
        },
        ..opts()
    };
    let bad = verify_file(&ptx, None, &o).unwrap();
    assert!(matches!(bad[0].outcome, Outcome::Mismatch(_)), "{}", bad[0]);
}
