//! Performance-tuning directives (`.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`) reach
//! the code and the cubin as ptxas 11.8 makes them reach it:
//!
//! * the register budget (`EIATTR_MAXREG_COUNT`): `.maxnreg` wins (raised to 16, with a
//!   warning); a block-size directive gives the most registers with which `.minnctapersm`
//!   such blocks stay resident on one SM, whatever `--maxrregcount` says; the kernel never
//!   uses more than its budget, so a launch at the directive's block size cannot fail for
//!   registers. The expected budgets are ptxas's (measured with `cuobjdump -elf`), and with
//!   the oracle the test compares with ptxas's cubin directly;
//! * `EIATTR_MAX_THREADS` / `EIATTR_REQNTID` carry the block sizes, so the driver refuses a
//!   larger launch;
//! * `-v` prints each kernel's theoretical occupancy, and ptxas's line where a directive
//!   overrides `--maxrregcount` ("Overriding global maxrregcount 16 with entry-specific value
//!   24 of .maxnreg").

mod common;

use leafold::cubin::{self, eiattr::Attribute};
use leafold::driver::{compile, Options};
use leafold::oracle::Oracle;

/// A kernel whose 40 loaded values are all live at once: it wants more registers than most
/// budgets below allow, so the budget decides its register count.
fn kernel(directives: &str) -> String {
    let mut s = format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 p){directives}\n{{\n\
         \t.reg .b32 %r<100>; .reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [p];\n"
    );
    for i in 0..40 {
        s += &format!("\tld.global.u32 %r{}, [%rd1+{}];\n", i + 10, 4 * i);
    }
    for i in 0..40 {
        s += &format!(
            "\tmul.lo.u32 %r{}, %r{}, %r{};\n",
            i + 10,
            i + 10,
            (i * 7) % 40 + 10
        );
    }
    s += "\tmov.u32 %r1, 0;\n";
    for i in 0..40 {
        s += &format!("\txor.b32 %r1, %r1, %r{};\n", i + 10);
    }
    s + "\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n"
}

struct Compiled {
    regcount: u32,
    budget: u32,
    max_threads: Option<Vec<u8>>,
    reqntid: Option<Vec<u8>>,
    warnings: Vec<String>,
}

fn inspect(bytes: &[u8]) -> (u32, u32, Option<Vec<u8>>, Option<Vec<u8>>) {
    let c = cubin::read(bytes).unwrap();
    let k = &c.kernels[0];
    let budget = k
        .info
        .iter()
        .find_map(|a| match a {
            Attribute::MaxRegCount(n) => Some(u32::from(*n)),
            _ => None,
        })
        .expect("EIATTR_MAXREG_COUNT");
    let other = |code: u8| {
        k.info.iter().find_map(|a| match a {
            Attribute::Other {
                code: c, payload, ..
            } if *c == code => Some(payload.clone()),
            _ => None,
        })
    };
    (
        k.regcount,
        budget,
        other(cubin::eiattr::code::MAX_THREADS),
        other(cubin::eiattr::code::REQNTID),
    )
}

fn ours(directives: &str, max_regs: Option<u32>) -> Compiled {
    let opts = Options {
        file_name: "bounds.ptx".into(),
        max_regs,
        ..Options::default()
    };
    let out = compile(&kernel(directives), &opts)
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let (regcount, budget, max_threads, reqntid) = inspect(&out.cubin);
    Compiled {
        regcount,
        budget,
        max_threads,
        reqntid,
        warnings: out.diagnostics.iter().map(|d| d.message.clone()).collect(),
    }
}

fn dims(d: [u32; 3]) -> Vec<u8> {
    d.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// (directives, --maxrregcount, ptxas 11.8's EIATTR_MAXREG_COUNT).
const CASES: &[(&str, Option<u32>, u32)] = &[
    ("", None, 255),
    ("", Some(40), 40),
    (" .maxnreg 24", None, 24),
    // .maxnreg wins over --maxrregcount, both ways.
    (" .maxnreg 24", Some(16), 24),
    (" .maxnreg 40", Some(20), 40),
    // Raised to 16.
    (" .maxnreg 7", None, 16),
    // 1024 threads: 32 warps of 64 registers fill the SM's 65,536.
    (" .maxntid 1024, 1, 1", None, 64),
    (" .maxntid 1024, 1, 1 .minnctapersm 2", None, 32),
    // 96 warps cannot be resident: .minnctapersm is ignored.
    (" .maxntid 1024, 1, 1 .minnctapersm 3", None, 64),
    (" .maxntid 512, 1, 1 .minnctapersm 3", None, 40),
    (" .maxntid 96, 1, 1 .minnctapersm 5", None, 128),
    (" .maxntid 100, 1, 1 .minnctapersm 7", None, 72),
    (" .maxntid 256, 1, 1 .minnctapersm 6", None, 40),
    (" .maxntid 128, 2, 1 .minnctapersm 2", None, 128),
    (" .maxntid 256, 1, 1", None, 255),
    // A block-size directive overrides --maxrregcount.
    (" .maxntid 640, 1, 1", Some(40), 96),
    (" .reqntid 96", None, 255),
    (" .reqntid 512 .minnctapersm 2", None, 64),
    // With both, the smaller of .maxnreg and the thread count's (a block size without
    // .minnctapersm does not count against .maxnreg).
    (" .maxnreg 40 .maxntid 1024, 1, 1 .minnctapersm 2", None, 32),
    (
        " .maxnreg 24 .maxntid 1024, 1, 1 .minnctapersm 2",
        Some(40),
        24,
    ),
    (" .maxnreg 80 .maxntid 1024, 1, 1", None, 80),
    (" .maxnreg 80 .maxntid 1024, 1, 1 .minnctapersm 3", None, 80),
];

#[test]
fn register_budget_is_ptxas_s_and_is_kept() {
    for &(d, cli, want) in CASES {
        let c = ours(d, cli);
        assert_eq!(
            c.budget, want,
            "budget for `{d}` with --maxrregcount {cli:?}"
        );
        assert!(
            c.regcount <= want,
            "`{d}`: {} registers over the budget {want}",
            c.regcount
        );
    }
    assert!(ours(" .maxnreg 7", None)
        .warnings
        .iter()
        .any(|w| w.contains("adjusting per thread register count of 7 to lower bound of 16")));
    assert!(ours(" .maxntid 1024, 1, 1 .minnctapersm 3", None)
        .warnings
        .iter()
        .any(|w| w.contains(".minnctapersm will be ignored")));
    assert!(ours(" .maxntid 1024, 1, 1 .minnctapersm 2", None)
        .warnings
        .is_empty());
}

#[test]
fn block_sizes_are_recorded_for_the_driver() {
    let c = ours(" .maxntid 128, 2", None);
    assert_eq!(c.max_threads, Some(dims([128, 2, 1])));
    assert_eq!(c.reqntid, None);
    let c = ours(" .reqntid 96, 1, 2", None);
    assert_eq!(c.reqntid, Some(dims([96, 1, 2])));
    assert_eq!(c.max_threads, None);
    let c = ours("", None);
    assert_eq!((c.max_threads, c.reqntid), (None, None));
}

#[test]
fn budgets_and_records_equal_ptxas_s() {
    let Some(oracle) = Oracle::for_test("launch_bounds") else {
        return;
    };
    for &(d, cli, _) in CASES {
        let args: Vec<String> = cli
            .map(|n| format!("-maxrregcount={n}"))
            .into_iter()
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let theirs = oracle
            .ptxas(&kernel(d), "sm_50", &args)
            .unwrap_or_else(|e| panic!("ptxas on `{d}`: {e}"));
        let (_, budget, max_threads, reqntid) = inspect(&theirs);
        let c = ours(d, cli);
        assert_eq!(c.budget, budget, "`{d}` with {cli:?}");
        assert_eq!(c.max_threads, max_threads, "`{d}`");
        assert_eq!(c.reqntid, reqntid, "`{d}`");
    }
}

#[test]
fn verbose_prints_occupancy() {
    let opts = Options {
        file_name: "bounds.ptx".into(),
        verbose: true,
        ..Options::default()
    };
    let src = kernel(" .maxntid 1024, 1, 1 .minnctapersm 2");
    let out = compile(&src, &opts).unwrap();
    let c = cubin::read(&out.cubin).unwrap();
    let occ = leafold::occupancy::of_kernel(leafold::driver::Arch::Sm50, &c.kernels[0]);
    // Two 1024-thread blocks of at most 32 registers: the whole SM.
    assert_eq!((occ.blocks, occ.warps, occ.block), (2, 64, 1024));
    assert!(occ.fixed_block);
}

/// (directives, --maxrregcount, ptxas 11.8's `-v` line about it; measured). The line comes
/// only with `--maxrregcount`, for `.maxnreg` or a `.minnctapersm` that counts, where the
/// value differs from the global one; a tie between the two names no source.
const OVERRIDES: &[(&str, Option<u32>, Option<&str>)] = &[
    (" .maxnreg 24", None, None),
    (
        " .maxnreg 24",
        Some(16),
        Some("Overriding global maxrregcount 16 with entry-specific value 24 of .maxnreg"),
    ),
    (" .maxnreg 16", Some(16), None),
    (
        " .maxnreg 7",
        Some(40),
        Some("Overriding global maxrregcount 40 with entry-specific value 16 of .maxnreg"),
    ),
    (
        " .maxntid 1024, 1, 1 .minnctapersm 2",
        Some(16),
        Some(
            "Overriding global maxrregcount 16 with entry-specific value 32 computed using thread count",
        ),
    ),
    (" .maxntid 1024, 1, 1 .minnctapersm 2", Some(32), None),
    (" .maxntid 640, 1, 1", Some(40), None),
    (" .maxntid 1024, 1, 1 .minnctapersm 3", Some(40), None),
    (
        " .maxnreg 40 .maxntid 1024, 1, 1 .minnctapersm 2",
        Some(40),
        Some(
            "Overriding global maxrregcount 40 with entry-specific value 32 computed using thread count",
        ),
    ),
    (
        " .maxnreg 32 .maxntid 1024, 1, 1 .minnctapersm 2",
        Some(40),
        Some("Overriding global maxrregcount 40 with entry-specific value 32 "),
    ),
    (
        " .maxnreg 80 .maxntid 1024, 1, 1",
        Some(40),
        Some("Overriding global maxrregcount 40 with entry-specific value 80 of .maxnreg"),
    ),
];

/// Our `-v` log's "Overriding" lines for `directives` under `--maxrregcount`.
fn our_override_lines(directives: &str, max_regs: Option<u32>) -> Vec<String> {
    let opts = Options {
        file_name: "bounds.ptx".into(),
        verbose: true,
        max_regs,
        ..Options::default()
    };
    let out = compile(&kernel(directives), &opts)
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    override_lines(&out.info_log)
}

fn override_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("Overriding"))
        .map(|l| l.trim_start_matches("ptxas info    : ").to_string())
        .collect()
}

#[test]
fn verbose_names_the_override_of_maxrregcount() {
    for &(d, cli, want) in OVERRIDES {
        let want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(our_override_lines(d, cli), want, "`{d}` with {cli:?}");
    }
    // The lines come before the module's gmem line, one per kernel that has one.
    let opts = Options {
        file_name: "bounds.ptx".into(),
        verbose: true,
        max_regs: Some(16),
        ..Options::default()
    };
    let out = compile(&kernel(" .maxnreg 24"), &opts).unwrap();
    assert!(
        out.info_log
            .starts_with("ptxas info    : Overriding global maxrregcount 16"),
        "{}",
        out.info_log
    );
}

#[test]
fn override_lines_equal_ptxas_s() {
    let Some(oracle) = Oracle::for_test("launch_bounds") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("leafold-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, &(d, cli, _)) in OVERRIDES.iter().enumerate() {
        let input = dir.join(format!("k{i}.ptx"));
        std::fs::write(&input, kernel(d)).unwrap();
        let mut cmd = std::process::Command::new(&oracle.ptxas);
        cmd.arg("-arch=sm_50").arg("-v").arg(&input);
        cmd.arg("-o").arg(dir.join(format!("k{i}.cubin")));
        if let Some(n) = cli {
            cmd.arg(format!("--maxrregcount={n}"));
        }
        let o = cmd.output().expect("ptxas runs");
        assert!(o.status.success(), "ptxas on `{d}`");
        let log =
            String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            our_override_lines(d, cli),
            override_lines(&log),
            "`{d}` with {cli:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
