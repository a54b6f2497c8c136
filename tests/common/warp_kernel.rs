//! The kernel harness of the one-construct-per-test files (`compile_warpsync.rs`,
//! `compile_prefetch_bar.rs`): a kernel `k(in, out)` around a body, compiled and checked
//! (hazards; with the oracle, cuobjdump and nvdisasm print our listing), then run by
//! `ir::eval` and by the simulator on our cubin over random launches of [`CTAS`] × [`THREADS`]
//! threads, which must write the same `out`.

use super::Rng;
use leafold::cubin;
use leafold::driver::{compile, Emit, Options, Output};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;
use leafold::sm50::sched::check::{check_hazards, decode_text};

pub const IN: u64 = 0x1000_0000;
pub const OUT: u64 = 0x2000_0000;
pub const THREADS: u32 = 64;
pub const CTAS: u32 = 2;

/// A kernel `k(in, out)` with `decls` at module level and `body` after the prologue, which
/// leaves: `%r1` = global thread index, `%r2` = `in[%r1]`, `%rd3` = `&out[8 * %r1]`, `%r9` =
/// `%tid.x`. Registers `%r<40>`, `%rd<16>`, `%p<8>` are declared.
pub fn kernel(decls: &str, body: &str) -> String {
    kernel_with(decls, "", body)
}

/// [`kernel`] with `extra` appended to the parameter list (after `pin, pout`).
pub fn kernel_with(decls: &str, extra: &str, body: &str) -> String {
    format!(
        r#".version 7.8
.target sm_52
.address_size 64
{decls}
.visible .entry k(.param .u64 pin, .param .u64 pout{extra})
{{
    .reg .b32 %r<40>;
    .reg .b64 %rd<16>;
    .reg .pred %p<8>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r9, %tid.x;
    mov.u32 %r10, %ctaid.x;
    mov.u32 %r11, %ntid.x;
    mad.lo.s32 %r1, %r10, %r11, %r9;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.u32 %r2, [%rd5];
    mul.wide.u32 %rd6, %r1, 32;
    add.s64 %rd3, %rd2, %rd6;
{body}
    ret;
}}
"#
    )
}

/// Compile `src`, check it for hazards and, with the oracle, that cuobjdump and nvdisasm
/// print it as we do.
pub fn compile_checked(test: &str, src: &str) -> Output {
    let opts = Options {
        file_name: format!("{test}.ptx"),
        emit: Emit::Sass,
        ..Options::default()
    };
    let out =
        compile(src, &opts).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).expect("our cubin reads back");
    let (insts, ctrl, targets) = decode_text(&c.kernels[0].code).expect("decodes");
    let errs = check_hazards(&insts, &ctrl, &targets);
    assert!(errs.is_empty(), "{test}: hazards: {errs:?}\n{}", out.sass);
    if let Some(oracle) = Oracle::for_test(test) {
        super::assert_oracle_prints_our_listing(&oracle, test, &out.cubin, &out.sass);
    }
    out
}

/// The SASS text of each instruction of `sass`, in order.
pub fn texts(sass: &str) -> Vec<String> {
    super::parse_lines(sass)
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

pub fn has(sass: &str, pred: impl Fn(&str) -> bool) -> bool {
    texts(sass).iter().any(|t| pred(t))
}

/// A launch of [`CTAS`] × [`THREADS`] over random input words (one in three an edge value).
pub fn launch(seed: u64) -> Launch {
    let mut rng = Rng(0x5eed_0000_1234_5678 ^ (seed + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let n = THREADS * CTAS;
    let input: Vec<u8> = (0..n)
        .flat_map(|_| {
            let r = rng.next();
            let w = match r % 6 {
                0 => 0,
                1 => 0xffff_ffff,
                _ => (r >> 16) as u32,
            };
            w.to_le_bytes()
        })
        .collect();
    let mut launch = Launch::new([CTAS, 1, 1], [THREADS, 1, 1]);
    launch.params = IN
        .to_le_bytes()
        .into_iter()
        .chain(OUT.to_le_bytes())
        .collect();
    launch.global = vec![
        GlobalRegion {
            base: IN,
            bytes: input,
        },
        GlobalRegion {
            base: OUT,
            bytes: vec![0; 32 * n as usize],
        },
    ];
    launch
}

/// `ir::eval` and the simulator on our cubin write the same `out` over `runs` random
/// launches (`setup` may adjust each launch). Returns the last launch's `out`.
pub fn differential(
    test: &str,
    src: &str,
    out: &Output,
    runs: u64,
    setup: impl Fn(&mut Launch),
) -> Vec<u8> {
    let module = super::ir_module(format!("{test}.ptx"), src);
    let mut last = Vec::new();
    for seed in 0..runs {
        let mut l = launch(seed);
        setup(&mut l);
        let want = eval::run(&module, "k", &l).unwrap_or_else(|e| panic!("{test}: eval: {e}"));
        let got = sim::run_cubin(&out.cubin, "k", &l)
            .unwrap_or_else(|e| panic!("{test}: sim: {e}\n{}", out.sass));
        let (a, b) = (got.region(OUT).unwrap(), want.region(OUT).unwrap());
        if let Some(k) = (0..a.len() / 4).find(|k| a[4 * k..4 * k + 4] != b[4 * k..4 * k + 4]) {
            let w = |m: &[u8]| u32::from_le_bytes(m[4 * k..4 * k + 4].try_into().unwrap());
            panic!(
                "{test}: seed {seed}, thread {}, word {}: sim {:#x}, eval {:#x}\n{}",
                k / 8,
                k % 8,
                w(a),
                w(b),
                out.sass
            );
        }
        last = a.to_vec();
    }
    last
}

/// Word `w` that thread `g` wrote.
pub fn word(out: &[u8], g: usize, w: usize) -> u32 {
    let k = 8 * g + w;
    u32::from_le_bytes(out[4 * k..4 * k + 4].try_into().unwrap())
}

/// Compile, check, and compare eval with sim over 4 random launches.
pub fn run(test: &str, decls: &str, body: &str) -> (Output, Vec<u8>) {
    let src = kernel(decls, body);
    let out = compile_checked(test, &src);
    let last = differential(test, &src, &out, 4, |_| {});
    (out, last)
}
