//! Predicate allocation rotates through P0..P6 (`machinst::pred`, issue 24): on PTX shaped as
//! NVVM writes Rodinia dwt2d's write-back (`if (i != end) { out[i] = sdata[..]; i += s; }`
//! several times in a row), each step's `setp` gets a register other than the step before's,
//! so the if-converted steps can overlap: a step's compare issues before the previous step's
//! global store, where one predicate for all (the lowest free one, as before) kept every
//! step's compare behind the previous step's last reader of it.
//!
//! The kernel compiles, is hazard-free and `ir::eval` equals the simulator on random launches;
//! the guards and the order the rule promises are asserted on the listing.

mod common;

const STEPS: usize = 6;

/// `STEPS` write-back steps as NVVM emits them: the thread's words are `8 * %r3 ..` (`%r3`
/// below 512, so no two threads of up to 8 CTAs write one word), and the steps stop at
/// `end = 8 * %r3 + tid % 8`, so threads skip a varying number of the later ones.
fn steps_kernel() -> String {
    let mut body = String::new();
    for k in 0..STEPS {
        let (i, next) = (20 + k, 21 + k);
        body += &format!(
            "\tsetp.eq.s32 %p{p}, %r{i}, %r7;\n\tmov.u32 %r{next}, %r7;\n\t@%p{p} bra $L__BB0_{k};\n\
             \tld.shared.u32 %r{v}, [%r4+{off}];\n\tmul.wide.s32 %rd{a}, %r{i}, 4;\n\
             \tadd.s64 %rd{b}, %rd4, %rd{a};\n\tst.global.u32 [%rd{b}], %r{v};\n\
             \tadd.s32 %r{next}, %r{i}, 1;\n$L__BB0_{k}:\n",
            p = k + 1,
            v = 40 + k,
            off = k * 256,
            a = 10 + k,
            b = 30 + k,
        );
    }
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n\
         .visible .entry steps(.param .u64 out)\n{{\n\
         \t.reg .pred %p<16>;\n\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<64>;\n\
         \t.shared .align 4 .b8 buf[2048];\n\
         \tld.param.u64 %rd3, [out];\n\tcvta.to.global.u64 %rd4, %rd3;\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\
         \tmad.lo.s32 %r3, %r2, 64, %r1;\n\tand.b32 %r3, %r3, 511;\n\
         \tmov.u32 %r5, buf;\n\tand.b32 %r6, %r1, 63;\n\tshl.b32 %r6, %r6, 2;\n\
         \tadd.s32 %r4, %r5, %r6;\n\
         \tst.shared.u32 [%r4], %r1;\n\tst.shared.u32 [%r4+256], %r2;\n\
         \tst.shared.u32 [%r4+512], %r3;\n\tst.shared.u32 [%r4+768], %r6;\n\
         \tst.shared.u32 [%r4+1024], %r1;\n\tst.shared.u32 [%r4+1280], %r2;\n\
         \tshl.b32 %r20, %r3, 3;\n\tand.b32 %r8, %r1, 7;\n\tadd.s32 %r7, %r20, %r8;\n\
         \tbar.sync 0;\n{body}\tret;\n}}\n"
    )
}

/// The guard of a listing line (`@P3`, `@!P3` → 3), if any.
fn guard(text: &str) -> Option<u32> {
    let g = text.strip_prefix('@')?.split_whitespace().next()?;
    g.trim_start_matches('!').strip_prefix('P')?.parse().ok()
}

#[test]
fn if_converted_steps_take_different_predicates_and_overlap() {
    let sass = common::compile_and_verify("steps.ptx", "steps", &steps_kernel());
    let lines: Vec<String> = common::parse_lines(&sass)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let op_at = |op: &str| -> Vec<usize> {
        (0..lines.len())
            .filter(|&k| lines[k].split_whitespace().any(|w| w.starts_with(op)))
            .collect()
    };
    let stg = op_at("STG");
    let lds = op_at("LDS");
    assert_eq!(stg.len(), STEPS, "every step is if-converted\n{sass}");
    assert_eq!(lds.len(), STEPS, "{sass}");
    // Each store runs under its step's predicate; neighbouring steps use different ones.
    let guards: Vec<u32> = stg
        .iter()
        .map(|&k| guard(&lines[k]).unwrap_or_else(|| panic!("unguarded: {}\n{sass}", lines[k])))
        .collect();
    for w in guards.windows(2) {
        assert_ne!(w[0], w[1], "steps share a predicate: {guards:?}\n{sass}");
    }
    // The steps overlap: each step's compare issues before the previous step's store (with
    // one predicate it had to wait for the store, the last reader of the old value).
    let isetp = op_at("ISETP");
    assert_eq!(isetp.len(), STEPS, "{sass}");
    for k in 1..STEPS {
        assert!(
            isetp[k] < stg[k - 1],
            "step {k}'s compare waits for the store\n{sass}"
        );
    }
    // ... and so do their shared loads (here four of the five).
    let overlapped = (1..STEPS).filter(|&k| lds[k] < stg[k - 1]).count();
    assert!(
        overlapped >= 2,
        "{overlapped} loads before the step before's store\n{sass}"
    );
}
