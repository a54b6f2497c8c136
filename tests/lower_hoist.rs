//! Load hoisting before allocation (`lower::hoist`, issue 24 point 2): on PTX shaped as NVVM
//! writes it (unrolled bodies of `ld` + use), each long-latency load moves up with its address
//! arithmetic, so a run of loads issues back to back and is waited for once, where the
//! allocator's register reuse used to chain them (`LDG R18; STS R18; LDG R18; ...`).
//!
//! Each kernel: compiles, is hazard-free, `ir::eval` equals the simulator on random launches;
//! the listing (opcodes only) is a snapshot; the order facts the rule promises are asserted;
//! and what must not move (a load after a store that may alias it, a volatile load, a carry
//! chain around a load) is checked by running it. With the oracle, nvdisasm and cuobjdump
//! print our listing.

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::oracle::Oracle;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// The start of the copy kernels: parameters `in` and `out` (global), `buf` of `smem` bytes
/// of shared memory, `%r3` the thread's word index (below 4096) and `%r4` its `buf` slot.
fn copy_head(name: &str, regs: usize, smem: usize) -> String {
    format!(
        "{HEAD}.visible .entry {name}(.param .u64 in, .param .u64 out)\n{{\n\
         \t.reg .pred %p<2>;\n\t.reg .b32 %r<{regs}>;\n\t.reg .b64 %rd<64>;\n\
         \t.shared .align 4 .b8 buf[{smem}];\n\
         \tld.param.u64 %rd2, [in];\n\tld.param.u64 %rd3, [out];\n\
         \tcvta.to.global.u64 %rd1, %rd2;\n\tcvta.to.global.u64 %rd4, %rd3;\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\
         \tmad.lo.s32 %r3, %r2, 64, %r1;\n\tand.b32 %r3, %r3, 4095;\n\
         \tmov.u32 %r5, buf;\n\tshl.b32 %r6, %r1, 2;\n\tadd.s32 %r4, %r5, %r6;\n"
    )
}

/// rodinia dwt2d's shape: an unrolled copy of 8 words from global to shared memory, each
/// address its own `mad.wide` off a running index, then a barrier and a write-back.
fn copy_kernel() -> String {
    let mut body = String::new();
    for k in 0..8 {
        body += &format!(
            "\tadd.s32 %r{a}, %r3, {off};\n\tmul.wide.s32 %rd{b}, %r{a}, 4;\n\tadd.s64 %rd{c}, %rd1, %rd{b};\n\tld.global.u32 %r{v}, [%rd{c}];\n\tst.shared.u32 [%r4+{soff}], %r{v};\n",
            a = 10 + k,
            off = k * 33,
            b = 10 + k,
            c = 30 + k,
            v = 40 + k,
            soff = k * 4 * 64,
        );
    }
    format!(
        "{head}{body}\
         \tbar.sync 0;\n\
         \tld.shared.u32 %r50, [%r4+4];\n\tld.shared.u32 %r51, [%r4+260];\n\
         \tadd.s32 %r52, %r50, %r51;\n\
         \tmul.wide.u32 %rd50, %r3, 4;\n\tadd.s64 %rd51, %rd4, %rd50;\n\
         \tst.global.u32 [%rd51], %r52;\n\tret;\n}}\n",
        head = copy_head("copy", 64, 2048),
    )
}

/// curand `initRNG`'s shape: five words off one pointer, each folded into an accumulator
/// right after its load, twice (two rows of a matrix).
fn xor_kernel() -> String {
    let mut body = String::new();
    for row in 0..2 {
        for w in 0..5 {
            let off = row * 20 + w * 4;
            let v = 20 + row * 5 + w;
            body += &format!(
                "\tld.global.u32 %r{v}, [%rd5+{off}];\n\txor.b32 %r{acc}, %r{acc}, %r{v};\n",
                acc = 10 + w,
            );
        }
    }
    format!(
        "{HEAD}.visible .entry xors(.param .u64 m, .param .u64 out)\n{{\n\
         \t.reg .b32 %r<64>;\n\t.reg .b64 %rd<16>;\n\
         \tld.param.u64 %rd1, [m];\n\tld.param.u64 %rd2, [out];\n\
         \tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n\
         \tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 63;\n\
         \tmul.wide.u32 %rd6, %r2, 40;\n\tadd.s64 %rd5, %rd3, %rd6;\n\
         \tmov.u32 %r10, %r1;\n\tadd.s32 %r11, %r1, 1;\n\tadd.s32 %r12, %r1, 2;\n\
         \tadd.s32 %r13, %r1, 3;\n\tadd.s32 %r14, %r1, 4;\n\
         {body}\
         \tadd.s32 %r30, %r10, %r11;\n\tadd.s32 %r31, %r12, %r13;\n\
         \tadd.s32 %r32, %r30, %r31;\n\tadd.s32 %r33, %r32, %r14;\n\
         \tmul.wide.u32 %rd7, %r1, 4;\n\tadd.s64 %rd8, %rd4, %rd7;\n\
         \tst.global.u32 [%rd8], %r33;\n\tret;\n}}\n"
    )
}

/// What must keep its order: a load after a store to the same address (through another
/// register), a volatile load between plain ones, and a 64-bit carry chain built by hand
/// around a load (`add.cc` ... `ld` ... `addc`).
fn ordered_kernel() -> String {
    format!(
        "{HEAD}.visible .entry ordered(.param .u64 p)\n{{\n\
         \t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n\
         \tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 31;\n\
         \tmul.wide.u32 %rd3, %r2, 16;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tadd.s64 %rd5, %rd2, %rd3;\n\
         \tld.global.u32 %r3, [%rd4];\n\tadd.s32 %r4, %r3, %r1;\n\
         \tst.global.u32 [%rd4+4], %r4;\n\
         \tld.global.u32 %r5, [%rd5+4];\n\
         \tld.volatile.global.u32 %r6, [%rd5+8];\n\
         \tld.global.u32 %r7, [%rd5+12];\n\
         \tmov.b64 {{%r8, %r9}}, %rd3;\n\
         \tadd.cc.u32 %r10, %r8, %r5;\n\
         \tld.global.u32 %r11, [%rd4+8];\n\
         \taddc.u32 %r12, %r9, %r11;\n\
         \tadd.s32 %r13, %r10, %r6;\n\tadd.s32 %r14, %r12, %r7;\n\
         \tst.global.u32 [%rd4], %r13;\n\tst.global.u32 [%rd4+12], %r14;\n\
         \tret;\n}}\n"
    )
}

/// [`copy_kernel`]'s copy widened to 12 words, each index the last plus 33 (wrapped, a chain
/// as NVVM's clamped indices are), with 16 values computed before it and summed after the
/// barrier (live across the whole copy). Sinking the 12 stores below the
/// loads that follow them (`lower::hoist`'s store motion) would keep their words live next
/// to the 16 sums: 35 registers, a step of the occupancy rules below 32 (64 warps per SM for
/// an undirected kernel, 56 at 35; measured with the gate turned off). Moving the loads alone
/// needs 29.
fn wide_copy_kernel() -> String {
    const LIVE: usize = 16;
    const WORDS: usize = 12;
    let mut body = String::new();
    for i in 0..LIVE {
        body += &format!(
            "\tmul.lo.s32 %r{v}, %r3, {m};\n\txor.b32 %r{v}, %r{v}, %r2;\n",
            v = 100 + i,
            m = 2 * i + 3,
        );
    }
    let mut prev = "%r3".to_string();
    for k in 0..WORDS {
        body += &format!(
            "\tadd.s32 %r{a}, {prev}, 33;\n\tand.b32 %r{a}, %r{a}, 4095;\n\tmul.wide.s32 %rd{a}, %r{a}, 4;\n\tadd.s64 %rd{c}, %rd1, %rd{a};\n\tld.global.u32 %r{v}, [%rd{c}];\n\tst.shared.u32 [%r4+{soff}], %r{v};\n",
            a = 10 + k,
            c = 30 + k,
            v = 40 + k,
            soff = k * 256,
        );
        prev = format!("%r{}", 10 + k);
    }
    let mut sum = String::new();
    let mut acc = "%r62".to_string();
    for i in 0..LIVE {
        sum += &format!("\tadd.s32 %r{s}, {acc}, %r{v};\n", s = 200 + i, v = 100 + i);
        acc = format!("%r{}", 200 + i);
    }
    format!(
        "{head}{body}\
         \tbar.sync 0;\n\
         \tld.shared.u32 %r60, [%r4+4];\n\tld.shared.u32 %r61, [%r4+260];\n\
         \tadd.s32 %r62, %r60, %r61;\n\
         {sum}\
         \tmul.wide.u32 %rd50, %r3, 4;\n\tadd.s64 %rd51, %rd4, %rd50;\n\
         \tst.global.u32 [%rd51], {acc};\n\tret;\n}}\n",
        head = copy_head("wide_copy", 300, WORDS * 256),
    )
}

/// MandelbrotDS0's shape: two independent chains of dependent float operations, written one
/// after the other (NVVM emits each expression tree whole), each step 6 cycles behind the
/// last.
fn chains_kernel() -> String {
    let mut body = String::new();
    for (chain, start, base) in [(0, 4, 10), (1, 5, 20)] {
        let mut prev = start;
        for k in 0..8 {
            let d = base + k;
            let c = [0x3F00_0000u32, 0x3F40_0000][chain];
            body += &format!(
                "\tfma.rn.f32 %f{d}, %f{prev}, 0f{c:08X}, %f{};\n",
                1 + chain
            );
            prev = d;
        }
    }
    format!(
        "{HEAD}.visible .entry chains(.param .u64 out, .param .f32 x, .param .f32 y)\n{{\n\
         \t.reg .f32 %f<40>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\
         \tld.param.f32 %f1, [x];\n\tld.param.f32 %f2, [y];\n\
         \tmov.u32 %r1, %tid.x;\n\tcvt.rn.f32.u32 %f3, %r1;\n\
         \tadd.f32 %f4, %f1, %f3;\n\tsub.f32 %f5, %f2, %f3;\n\
         {body}\
         \tmul.wide.u32 %rd3, %r1, 8;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tst.global.f32 [%rd4], %f17;\n\tst.global.f32 [%rd4+4], %f27;\n\tret;\n}}\n"
    )
}

fn opts() -> Options {
    Options {
        file_name: "hoist.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

/// Compile `src`, check hazards and `ir::eval` == simulator on two seeds; the SASS listing.
fn compile_and_verify(what: &str, src: &str) -> String {
    common::compile_and_verify("hoist.ptx", what, src)
}

/// The opcodes of a listing, one per line (registers vary with the allocator; the order of
/// the operations is what the rule is about).
fn opcodes(sass: &str) -> Vec<String> {
    common::parse_lines(sass)
        .into_iter()
        .map(|(_, t)| {
            let t = t.trim_start_matches(|c: char| {
                c == '@' || c == '!' || c == 'P' || c.is_ascii_digit()
            });
            t.split_whitespace().next().unwrap_or("").to_string()
        })
        .collect()
}

#[test]
fn copy_loads_issue_before_the_stores() {
    let sass = compile_and_verify("copy", &copy_kernel());
    let ops = opcodes(&sass);
    insta::assert_snapshot!("hoist_copy", ops.join("\n"));
    // Every global load comes before the first shared store: the 8 loads are in flight
    // together, not one per store.
    let first_sts = ops.iter().position(|o| o.starts_with("STS")).unwrap();
    let ldg: Vec<usize> = (0..ops.len())
        .filter(|&k| ops[k].starts_with("LDG"))
        .collect();
    assert_eq!(ldg.len(), 8, "{sass}");
    assert!(ldg.iter().all(|&k| k < first_sts), "{sass}");
}

#[test]
fn accumulated_loads_issue_together() {
    let sass = compile_and_verify("xors", &xor_kernel());
    let ops = opcodes(&sass);
    insta::assert_snapshot!("hoist_xors", ops.join("\n"));
    // At least 8 of the 10 loads issue before the first XOR that folds one in.
    let first_xor = ops.iter().position(|o| o.starts_with("LOP.XOR")).unwrap();
    let early = ops[..first_xor]
        .iter()
        .filter(|o| o.starts_with("LDG"))
        .count();
    assert!(early >= 8, "{early} loads before the first xor\n{sass}");
}

#[test]
fn ordered_accesses_keep_their_order() {
    let sass = compile_and_verify("ordered", &ordered_kernel());
    let ops = opcodes(&sass);
    insta::assert_snapshot!("hoist_ordered", ops.join("\n"));
    let lines = common::parse_lines(&sass);
    // The first instruction that starts with `op` and names the displacement `disp`.
    let pos = |op: &str, disp: &str| {
        lines
            .iter()
            .position(|(_, t)| t.starts_with(op) && t.contains(&format!("{disp}]")))
            .unwrap_or_else(|| panic!("no {op} at {disp}\n{sass}"))
    };
    // The store to +4 stays before the load of +4 (the same address through another register).
    assert!(pos("STG.E [", "+0x4") < pos("LDG.E R", "+0x4"), "{sass}");
    // The volatile load (.CV) stays between the plain loads of +4 and +12.
    let cv = pos("LDG.E.CV", "+0x8");
    assert!(
        pos("LDG.E R", "+0x4") < cv && cv < pos("LDG.E R", "+0xc"),
        "{sass}"
    );
}

#[test]
fn store_motion_keeps_the_occupancy() {
    let src = wide_copy_kernel();
    let sass = compile_and_verify("wide_copy", &src);
    insta::assert_snapshot!("hoist_wide_copy", opcodes(&sass).join("\n"));
    let out = compile(&src, &opts()).unwrap();
    let regs = out.kernels[0].registers;
    // At most 32 registers: every warp of the SM stays resident (see `wide_copy_kernel`).
    let occ = leafold::occupancy::theoretical(leafold::driver::Arch::Sm50, regs, 3072, None);
    assert_eq!(occ.warps, 64, "{regs} registers\n{sass}");
    // The loads alone still move up: at least half of the 12 issue before the first store.
    let ops = opcodes(&sass);
    let first_sts = ops.iter().position(|o| o.starts_with("STS")).unwrap();
    let early = ops[..first_sts]
        .iter()
        .filter(|o| o.starts_with("LDG"))
        .count();
    assert!(early >= 6, "{early} loads before the first store\n{sass}");
}

#[test]
fn independent_chains_interleave() {
    let src = chains_kernel();
    let sass = compile_and_verify("chains", &src);
    insta::assert_snapshot!("hoist_chains", opcodes(&sass).join("\n"));
    // Two chains of 8 dependent FFMAs (one multiplies by 0.5, the other by 0.75): one after
    // the other each step waits out the last one's 6 cycles; interleaved, each fills the
    // other's shadow. Before the interleaving the allocator gave the first chain two
    // registers in turn and the listing ran six of its FFMAs back to back (stall 6 each).
    let chain: Vec<&str> = common::parse_lines(&sass)
        .iter()
        .filter(|(_, t)| t.starts_with("FFMA"))
        .map(|(_, t)| if t.contains("0.75") { "b" } else { "a" })
        .collect();
    assert_eq!(chain.len(), 16, "{sass}");
    let longest_run = chain
        .chunk_by(|x, y| x == y)
        .map(|run| run.len())
        .max()
        .unwrap();
    assert!(longest_run <= 2, "{chain:?}\n{sass}");
}

#[test]
fn nvdisasm_and_cuobjdump_print_our_listing() {
    let Some(oracle) = Oracle::for_test("lower_hoist") else {
        return;
    };
    for (what, src) in [
        ("copy", copy_kernel()),
        ("xors", xor_kernel()),
        ("ordered", ordered_kernel()),
        ("wide_copy", wide_copy_kernel()),
        ("chains", chains_kernel()),
    ] {
        let out = compile(&src, &opts()).unwrap();
        common::assert_oracle_prints_our_listing(&oracle, what, &out.cubin, &out.sass);
    }
}
