//! Divergence and reconvergence (`lower::reconverge`) end to end, on the kernels of
//! tests/data/cflow/*.ptx (each file says in its header what it pins down):
//! * snapshots of the IR and of the SASS with its control codes;
//! * every cubin passes the hazard checker, and cuobjdump/nvdisasm print our listing;
//! * `ir::eval` and the simulator running our code write the same memory, over several warps
//!   and CTAs and several `n` (all lanes one way, all the other way, split inside a warp);
//! * without `SSY`/`SYNC` (`Options::no_reconvergence`) a barrier after divergent code is
//!   reported by the simulator as a diverged warp at `BAR.SYNC`: what reconvergence is for.
//!
//! If-conversion (`lower::ifconv`) is off here (`Options::no_ifconv`): it would turn the
//! small branches these kernels are made of into predicated code, leaving nothing to place
//! tokens for. `eval_and_sim_agree` also runs every kernel with it on.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options, Output};
use leafold::ir::eval::{self, GlobalRegion, Launch, RunOutput};
use leafold::oracle::Oracle;
use leafold::sim::{self, SimError};
use leafold::sm50::sched::check::check_code;

const OUT: u64 = 0x1000_0000;
const KERNELS: [&str; 13] = [
    "if_else",
    "nested_if",
    "loop_break",
    "early_exit",
    "if_bar",
    "uniform_loop",
    "loop_at_entry",
    "bar_named",
    "bar_arrive",
    "unreachable",
    "loop_if",
    "spin_loop",
    "loop_break_join",
];

fn source(name: &str) -> String {
    let path = format!("{}/tests/data/cflow/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn opts(name: &str, reconverge: bool) -> Options {
    Options {
        file_name: format!("{name}.ptx"),
        emit: Emit::Sass,
        no_reconvergence: !reconverge,
        no_ifconv: true,
        ..Options::default()
    }
}

fn build(name: &str, reconverge: bool) -> Output {
    compile(&source(name), &opts(name, reconverge))
        .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)))
}

fn ir_text(name: &str) -> String {
    common::ir_module(format!("{name}.ptx"), source(name)).to_string()
}

/// The listing with a control-code column, as `leafold disasm --ctrl` prints it.
fn listing(out: &Output) -> String {
    let c = cubin::read(&out.cubin).unwrap();
    leafold::disasm::listing(
        &c,
        leafold::disasm::ListingOptions {
            ctrl: true,
            raw: false,
            slice: false,
        },
    )
}

fn launch(n: u32, grid: u32, block: u32) -> Launch {
    let mut l = Launch::new([grid, 1, 1], [block, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.params.extend(n.to_le_bytes());
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0xee; (grid * block * 4) as usize],
    }];
    l
}

fn eval_run(name: &str, l: &Launch) -> RunOutput {
    let module = common::ir_module(format!("{name}.ptx"), source(name));
    eval::run(&module, name, l).unwrap_or_else(|e| panic!("{name}: eval: {e}"))
}

#[test]
fn snapshots() {
    for name in KERNELS {
        let out = build(name, true);
        insta::assert_snapshot!(
            name,
            format!("{}\n---- SASS\n{}", ir_text(name), listing(&out))
        );
    }
}

#[test]
fn every_cubin_is_hazard_free() {
    for name in KERNELS {
        for reconverge in [true, false] {
            let out = build(name, reconverge);
            let c = cubin::read(&out.cubin).unwrap();
            let errs = check_code(&c.kernels[0].code);
            assert!(errs.is_empty(), "{name}: {errs:#?}\n{}", out.sass);
        }
    }
}

/// The instruction of listing text `t` without its guard (`@P3 `, `@!P0 `), and whether it
/// had one (predicate numbers follow the allocator's rotation, so tests name none).
fn strip_guard(t: &str) -> (&str, bool) {
    let t = t.trim_start();
    match t.strip_prefix('@') {
        Some(g) => (
            g.split_once(' ').map_or("", |(_, rest)| rest.trim_start()),
            true,
        ),
        None => (t, false),
    }
}

/// How many instructions of `sass` run `op` under a guard.
fn guarded(sass: &str, op: &str) -> usize {
    common::parse_lines(sass)
        .iter()
        .filter(|(_, t)| matches!(strip_guard(t), (i, true) if i.starts_with(op)))
        .count()
}

#[test]
fn placement_follows_the_rules() {
    let count = |out: &Output, what: &str| {
        out.sass
            .lines()
            .filter(|l| l.split(';').next().unwrap_or("").contains(what))
            .count()
    };
    // One token per divergent region; none for uniform branches or exits.
    let ie = build("if_else", true);
    assert_eq!(count(&ie, "SSY"), 1, "{}", ie.sass);
    assert_eq!(count(&ie, "SYNC"), 2, "{}", ie.sass);
    let ni = build("nested_if", true);
    assert_eq!(count(&ni, "SSY"), 2, "{}", ni.sass);
    let lb = build("loop_break", true);
    assert_eq!(count(&lb, "SSY"), 1, "{}", lb.sass);
    assert_eq!(guarded(&lb.sass, "SYNC"), 1, "{}", lb.sass);
    let ee = build("early_exit", true);
    assert_eq!(count(&ee, "SSY"), 0, "{}", ee.sass);
    assert_eq!(guarded(&ee.sass, "EXIT"), 2, "{}", ee.sass);
    // The header's own point (the outer latch) cannot take a token: the next post-dominator,
    // the block of the barrier, does; one token, pushed before both loops.
    let sl = build("spin_loop", true);
    assert_eq!(count(&sl, "SSY"), 1, "{}", sl.sass);
    let sl_lines = common::parse_lines(&sl.sass);
    let bar = sl_lines
        .iter()
        .position(|(_, t)| t.starts_with("BAR.SYNC"))
        .unwrap();
    assert!(sl_lines[bar - 1].1.starts_with("SYNC"), "{}", sl.sass);
    let ul = build("uniform_loop", true);
    assert_eq!(count(&ul, "SSY") + count(&ul, "SYNC"), 0, "{}", ul.sass);
    // The loop's token is pushed before the loop: the back edge goes to the instruction after
    // the SSY, never to it or before it.
    let lines = common::parse_lines(&lb.sass);
    let ssy = lines.iter().find(|(_, t)| t.starts_with("SSY")).unwrap().0;
    for (addr, text) in &lines {
        if let Some(t) = strip_guard(text).0.strip_prefix("BRA 0x") {
            let t = u64::from_str_radix(t.trim_end_matches(" ;").trim(), 16).unwrap();
            assert!(
                t > ssy || t == *addr,
                "branch to {t:#x} re-runs the SSY at {ssy:#x}"
            );
        }
    }
}

/// Rule 6 (`loop_break_join`): the loop's exit breaks (`PBK` before the loop, a guarded `BRK`), and
/// the divergent branch inside reconverges in every iteration: the loop's first instruction
/// runs, per warp, as many times as its lane with the most iterations needs (the bit length
/// of `(tid + 977) * 40503`), not once per group of lanes that took different sides.
#[test]
fn break_loop_reconverges_every_iteration() {
    let name = "loop_break_join";
    let out = build(name, true);
    let count = |what: &str| {
        common::parse_lines(&out.sass)
            .iter()
            .filter(|(_, t)| t.contains(what))
            .count()
    };
    assert_eq!(count("PBK"), 1, "{}", out.sass);
    assert_eq!(guarded(&out.sass, "BRK"), 1, "{}", out.sass);
    let (code, info) = sim::load_kernel(&out.cubin, name).unwrap();
    let (insts, _, _) = leafold::sm50::sched::check::decode_text(&code).unwrap();
    let pbk = insts
        .iter()
        .position(|i| i.form == leafold::sm50::Form::PBK)
        .unwrap();
    let header = leafold::sm50::ctrl::inst_addr(pbk + 1);
    for (grid, block) in [(1u32, 32u32), (2, 96), (3, 50)] {
        let l = launch(7, grid, block);
        let (ran, timing, profile) = sim::run_profiled(&code, &info, &l).unwrap();
        assert_eq!(ran.global, eval_run(name, &l).global);
        let iterations = |tid: u32| 32 - (tid + 977).wrapping_mul(40503).leading_zeros();
        let warps = block.div_ceil(32);
        let want: u64 = (0..warps)
            .map(|w| {
                let lanes = (w * 32)..(w * 32 + 32).min(block);
                u64::from(lanes.map(iterations).max().unwrap())
            })
            .sum::<u64>()
            * u64::from(grid);
        assert_eq!(profile[&header].count, want, "{}", out.sass);
        assert!(timing.warp_insts > 0);
    }
}

/// `n` values: every lane one way, every lane the other, split inside warp 0 and warp 1.
const NS: [u32; 5] = [0, 1000, 5, 40, 3];

#[test]
fn eval_and_sim_agree() {
    for (name, ifconv) in KERNELS.iter().flat_map(|&k| [(k, false), (k, true)]) {
        let out = compile(
            &source(name),
            &Options {
                no_ifconv: !ifconv,
                ..opts(name, true)
            },
        )
        .unwrap_or_else(|d| panic!("{name}: {}", leafold::error::render_all(&d.0)));
        for n in NS {
            for (grid, block) in [(1, 32), (2, 96), (3, 50)] {
                let l = launch(n, grid, block);
                let reference = eval_run(name, &l);
                let ours = sim::run_cubin(&out.cubin, name, &l)
                    .unwrap_or_else(|e| panic!("{name} n={n}: sim: {e}\n{}", out.sass));
                assert_eq!(ours.global, reference.global, "{name} n={n}\n{}", out.sass);
                assert_eq!(ours.shared, reference.shared, "{name} n={n}\n{}", out.sass);
            }
        }
    }
}

#[test]
fn barrier_after_divergence_needs_reconvergence() {
    for name in ["if_bar", "loop_break"] {
        let plain = build(name, false);
        let l = launch(40, 2, 96);
        match sim::run_cubin(&plain.cubin, name, &l) {
            Err(SimError::Divergence { what, .. }) => assert!(what.contains("BAR.SYNC"), "{what}"),
            other => panic!("{name} without SSY: expected a diverged barrier, got {other:?}"),
        }
        // With n = 0 every lane takes one side, nothing diverges and the plain code is
        // right too.
        let l = launch(0, 2, 96);
        let ours = sim::run_cubin(&plain.cubin, name, &l).unwrap();
        assert_eq!(ours.global, eval_run(name, &l).global);
    }
    // Without a barrier, serial execution of the sides still computes the right values.
    let plain = build("if_else", false);
    let l = launch(40, 2, 96);
    let ours = sim::run_cubin(&plain.cubin, "if_else", &l).unwrap();
    assert_eq!(ours.global, eval_run("if_else", &l).global);
}

#[test]
fn oracle_prints_our_listing() {
    let Some(oracle) = Oracle::for_test("cflow") else {
        return;
    };
    for name in KERNELS {
        let out = build(name, true);
        common::assert_oracle_prints_our_listing(&oracle, name, &out.cubin, &out.sass);
    }
}

/// What sm_5x or leafold cannot do gets a diagnostic naming the construct, its line and why.
#[test]
fn unsupported_forms_are_named_errors() {
    let cases = [
        ("bar.red.and.pred %p2, 1, 40, %p1;", "multiple of 32"),
        ("bar.sync 1, 40;", "multiple of 32"),
        ("bar.arrive 1;", "without a thread count"),
        ("bar.arrive %r1;", "without a thread count"),
        ("bar.sync %r1, 40;", "multiple of 32"),
    ];
    for (line, why) in cases {
        let src = format!(
            ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u32 n)\n{{\n\
             .reg .pred %p<4>; .reg .b32 %r<8>;\nld.param.u32 %r1, [n];\n\
             setp.ne.u32 %p1, %r1, 0;\n{line}\nret;\n}}\n"
        );
        let d = compile(&src, &opts("k", true)).expect_err(line);
        let text = leafold::error::render_all(&d.0);
        assert!(text.contains(why), "{line}: {text}");
        assert!(text.contains("k.ptx:9:"), "{line}: {text}");
    }
}

/// Under a register limit the allocator spills around divergent code (reloads on the edges
/// into the join, stores before the branch); the `SYNC`s still come after every edge's moves
/// and the results still match the interpreter. (`nested_if` and `loop_break` were the
/// kernels here; since scalars and pairs share the register file they fit their smallest
/// limits without spilling, so `spill_if` keeps four more values live across the branches.)
#[test]
fn spills_around_divergence_keep_results() {
    for (name, regs) in [("spill_if", 8)] {
        let mut o = opts(name, true);
        o.max_regs = Some(regs);
        let out = compile(&source(name), &o).unwrap();
        assert!(
            out.kernels[0].spill_store_bytes > 0,
            "{name} spills\n{}",
            out.sass
        );
        let c = cubin::read(&out.cubin).unwrap();
        assert!(check_code(&c.kernels[0].code).is_empty());
        for n in NS {
            let l = launch(n, 2, 96);
            let ours = sim::run_cubin(&out.cubin, name, &l)
                .unwrap_or_else(|e| panic!("{name} n={n}: sim: {e}\n{}", out.sass));
            let reference = eval_run(name, &l);
            assert_eq!(ours.global, reference.global, "{name} n={n}\n{}", out.sass);
            assert_eq!(ours.shared, reference.shared, "{name} n={n}\n{}", out.sass);
        }
    }
}

/// A whole corpus kernel: the CUDA SDK's bitonic sort (256 threads, 8 warps, data-dependent
/// swaps nested in two loops, `bar.sync` after them). One token covers the nested divergent
/// swaps up to the barrier. Our code sorts (checked directly, not only against the
/// interpreter), and without reconvergence the first diverged warp reaches the barrier split.
#[test]
fn bitonic_sort_from_the_corpus() {
    let path = format!(
        "{}/tests/data/corpus/ptx/gtcasl__gpuocelot__tests_ptx_sdk2.2_bitonic.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let name = "_Z11bitonicSortPi";
    let mut seed = 0x2545_f491_u32;
    let values: Vec<i32> = (0..256)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed % 1000) as i32 - 500
        })
        .collect();
    let mut l = Launch::new([1, 1, 1], [256, 1, 1]);
    l.params = OUT.to_le_bytes().to_vec();
    l.dynamic_shared = 1024;
    l.global = vec![GlobalRegion {
        base: OUT,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }];
    let mut sorted = values.clone();
    sorted.sort();
    let want: Vec<u8> = sorted.iter().flat_map(|v| v.to_le_bytes()).collect();
    let module = common::ir_module("bitonic.ptx", src.as_str());
    let reference = eval::run(&module, name, &l).unwrap();
    assert_eq!(reference.region(OUT).unwrap(), &want[..]);
    let out = compile(&src, &opts("bitonic", true)).unwrap();
    let ours =
        sim::run_cubin(&out.cubin, name, &l).unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
    assert_eq!(ours.region(OUT).unwrap(), &want[..], "{}", out.sass);
    let plain = compile(&src, &opts("bitonic", false)).unwrap();
    assert!(
        matches!(
            sim::run_cubin(&plain.cubin, name, &l),
            Err(SimError::Divergence { .. })
        ),
        "{}",
        plain.sass
    );
}

/// `trap` (tests/data/cflow/trap.ptx): BPT.TRAP 0x1 twice, hazard-free, cuobjdump prints
/// our listing; a launch in which a thread reaches it traps in both `ir::eval`
/// (`EvalError::Trapped`, naming the PTX line) and the simulator (`SimError::Trap` at a
/// BPT.TRAP); one in which none does writes the same memory; `leafold verify` counts a
/// launch that traps on both sides as a match.
#[test]
fn trap_stops_the_launch() {
    let name = "trap";
    let out = build(name, true);
    insta::assert_snapshot!(
        name,
        format!("{}\n---- SASS\n{}", ir_text(name), listing(&out))
    );
    assert_eq!(out.sass.matches("BPT.TRAP 0x1").count(), 2, "{}", out.sass);
    let c = cubin::read(&out.cubin).unwrap();
    let errs = check_code(&c.kernels[0].code);
    assert!(errs.is_empty(), "{errs:#?}\n{}", out.sass);
    let module = common::ir_module("trap.ptx", source(name));
    let f = module.functions.iter().find(|f| f.name == name).unwrap();
    for n in NS {
        for (grid, block) in [(1, 32), (2, 96), (3, 50)] {
            let l = launch(n, grid, block);
            let traps = n + 1 < block;
            match (
                eval::run(&module, name, &l),
                sim::run_cubin(&out.cubin, name, &l),
            ) {
                (Err(e @ eval::EvalError::Trapped { inst }), Err(SimError::Trap { addr })) => {
                    assert!(traps, "n={n} block={block}: {e}");
                    let line = f.srcloc(inst).ptx_line().unwrap();
                    let text = source(name)
                        .lines()
                        .nth(line as usize - 1)
                        .unwrap()
                        .to_string();
                    assert!(text.contains("trap;"), "line {line}: {text}");
                    let at = common::parse_lines(&out.sass)
                        .into_iter()
                        .find(|(a, _)| *a == addr)
                        .unwrap();
                    assert!(at.1.starts_with("BPT.TRAP"), "{at:?}");
                }
                (Ok(reference), Ok(ours)) => {
                    assert!(!traps, "n={n} block={block}: no trap");
                    assert_eq!(ours.global, reference.global, "n={n}\n{}", out.sass);
                }
                (a, b) => panic!(
                    "n={n} grid={grid} block={block}: eval {:?}, sim {:?}",
                    a.err(),
                    b.err()
                ),
            }
        }
    }
    // The file (whatever random n verify picks) and a kernel that always traps.
    let always = source(name).replace("  @%p1 trap;", "  trap;");
    for src in [source(name), always] {
        let v =
            leafold::verify::verify_file(&src, None, &leafold::verify::VerifyOptions::default())
                .unwrap();
        assert!(
            v.iter()
                .all(|v| matches!(v.outcome, leafold::verify::Outcome::Match { .. })),
            "{:?}",
            v.iter().map(|v| v.to_string()).collect::<Vec<_>>()
        );
    }
    if let Some(oracle) = Oracle::for_test("cflow::trap") {
        common::assert_cuobjdump_lists(&oracle, "trap", &out.cubin, &out.sass);
    }
}
