//! A generator of large, valid, address-heavy PTX for the compile benchmarks: `kernels`
//! kernels of about `lines` lines each. Each group of five lines loads `in[tid*k + c]`
//! through a scaled, sign-extended index (the shape LEA folding serves) and adds it to an
//! accumulator; the sum is stored at the end. Registers are numbered afresh per group, so
//! the PTX is long but the live set stays small (as in unrolled real code).

use std::fmt::Write as _;

pub fn generate(kernels: usize, lines: usize) -> String {
    let groups = (lines.saturating_sub(12) / 5).max(1);
    let mut s = String::from(".version 7.0\n.target sm_50\n.address_size 64\n");
    for k in 0..kernels {
        let _ = write!(
            s,
            "\n.visible .entry gen{k}(.param .u64 in, .param .u64 out, .param .u32 n)\n{{\n\
             \t.reg .b64 %rd<{}>;\n\t.reg .b32 %r<{}>;\n\
             \tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n\
             \tld.param.u32 %r1, [n];\n\tmov.u32 %r2, %tid.x;\n\tmov.u32 %r3, 0;\n",
            2 * groups + 8,
            2 * groups + 8
        );
        for g in 0..groups {
            let (i, v) = (4 + 2 * g, 5 + 2 * g);
            let (a, b) = (3 + 2 * g, 4 + 2 * g);
            let _ = write!(
                s,
                "\tadd.s32 %r{i}, %r2, {};\n\tmul.wide.s32 %rd{a}, %r{i}, {};\n\
                 \tadd.s64 %rd{b}, %rd1, %rd{a};\n\tld.global.u32 %r{v}, [%rd{b}+{}];\n\
                 \tadd.s32 %r3, %r3, %r{v};\n",
                g % 61,
                [4, 8, 16][g % 3],
                (g % 7) * 4
            );
        }
        let _ = write!(
            s,
            "\tmul.wide.u32 %rd{0}, %r2, 4;\n\tadd.s64 %rd{1}, %rd2, %rd{0};\n\
             \tst.global.u32 [%rd{1}], %r3;\n\tret;\n}}\n",
            2 * groups + 4,
            2 * groups + 5
        );
    }
    s
}
