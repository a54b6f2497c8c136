//! Calls inlined by `ir::build` (src/ir/build/calls.rs): snapshots of the IR built from each
//! tests/data/build/call_*.ptx (each file's header says what it pins down), the
//! diagnostics for the calls leafold refuses, and `ir::eval` results computed here by hand.

use leafold::ir::eval::{run, GlobalRegion, Launch};
use leafold::ir::{self, Module};
use leafold::ptx;
use leafold::SourceFile;

fn source(name: &str) -> std::sync::Arc<SourceFile> {
    let path = format!("{}/tests/data/build/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    SourceFile::new(
        format!("{name}.ptx"),
        std::fs::read_to_string(path).unwrap(),
    )
}

fn module(name: &str) -> Module {
    let file = source(name);
    let (ast, _) = match ptx::parse_and_check(&file) {
        Ok(ok) => ok,
        Err(d) => panic!("{name}.ptx does not check clean:\n{d}"),
    };
    let m = match ir::build(&ast, &file) {
        Ok(m) => m,
        Err(d) => panic!(
            "{name}.ptx does not build:\n{}",
            leafold::error::render_all(&d)
        ),
    };
    ir::verify_module(&m).unwrap();
    m
}

macro_rules! snap {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), module(stringify!($name)).to_string());
        }
    )*};
}

snap!(
    call_scalar,
    call_struct_param,
    call_early_ret,
    call_nested,
    call_local_array,
    call_reg_params
);

/// Indirect calls no function fits, bodiless `.extern` callees, a call parameter's address
/// and a 16-byte result copied to a register are diagnostics at their line; no kernel with
/// one builds. The file's recursive kernels (direct and mutual recursion, once refused)
/// build: their callees become subroutines.
#[test]
fn refused_calls_are_diagnostics() {
    let file = source("call_errors");
    let (ast, _) = ptx::parse_and_check(&file).unwrap();
    let partial = ir::build::build_partial(&ast, &file);
    let names = |fs: &[ir::Function]| fs.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&partial.module.functions), ["recursive", "mutual"]);
    let mut subs = names(&partial.module.subroutines);
    subs.sort();
    assert_eq!(subs, ["fact", "ping", "pong"]);
    assert_eq!(
        partial.failed,
        ["indirect", "printing", "address_taken", "wide_result"]
    );
    insta::assert_snapshot!("call_errors", leafold::error::render_all(&partial.errors));
}

/// Launch one thread with these parameter bytes and a zeroed 64-byte output at OUT.
const OUT: u64 = 0x1000_0000;
const IN: u64 = 0x2000_0000;

fn run1(m: &Module, params: Vec<u8>, global: Vec<GlobalRegion>, threads: u32) -> Vec<u8> {
    let mut l = Launch::new([1, 1, 1], [threads, 1, 1]);
    l.params = params;
    l.global = global;
    l.global.push(GlobalRegion {
        base: OUT,
        bytes: vec![0; 64],
    });
    let r = run(m, &m.functions[0].name, &l).unwrap();
    r.region(OUT).unwrap().to_vec()
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

fn clamp_sum(n: u32, limit: u32) -> u32 {
    let mut s = 0u32;
    for k in 1..=n {
        s += k;
        if s > limit {
            return limit;
        }
    }
    s
}

#[test]
fn inlined_calls_evaluate_as_written() {
    // call_scalar: out[t] = in[t] * 3.
    let m = module("call_scalar");
    let input: Vec<u8> = (0..4u32).flat_map(|x| (x * 10 + 1).to_le_bytes()).collect();
    let mut p = IN.to_le_bytes().to_vec();
    p.extend(OUT.to_le_bytes());
    let out = run1(
        &m,
        p,
        vec![GlobalRegion {
            base: IN,
            bytes: input,
        }],
        4,
    );
    for t in 0..4 {
        assert_eq!(u32_at(&out, 4 * t), (t as u32 * 10 + 1) * 3);
    }

    // call_struct_param: x = 0x1234 makes the u32 at +4 0x1234; result {0x1234 + 100, 0x1234}.
    let m = module("call_struct_param");
    let mut p = OUT.to_le_bytes().to_vec();
    p.extend(0xAB_1234u32.to_le_bytes());
    let out = run1(&m, p, vec![], 1);
    assert_eq!(u64_at(&out, 0), (0x1234u64 << 32) | (0x1234 + 100));

    // call_early_ret, for n = 3 (the guarded call skipped) and n = 9 (taken).
    let m = module("call_early_ret");
    for n in [3u32, 9] {
        let mut p = OUT.to_le_bytes().to_vec();
        p.extend(n.to_le_bytes());
        let out = run1(&m, p, vec![], 1);
        assert_eq!(u32_at(&out, 0), clamp_sum(n, 1000), "n = {n}");
        assert_eq!(u32_at(&out, 4), clamp_sum(n, 20), "n = {n}");
        let guarded = if n > 4 { clamp_sum(n, 5) } else { 77 };
        assert_eq!(u32_at(&out, 8), guarded, "n = {n}");
        assert_eq!(u32_at(&out, 12), 1, "n = {n}");
    }
    // n = 0: the `.noreturn` callee exits before the last store.
    let mut p = OUT.to_le_bytes().to_vec();
    p.extend(0u32.to_le_bytes());
    let out = run1(&m, p, vec![], 1);
    assert_eq!(u32_at(&out, 12), 0);

    // call_nested: inner(inner(x, 2), 0) = ((x << 2) + 1) + 1.
    let m = module("call_nested");
    let x = 0x0123_4567_89ab_cdefu64;
    let mut p = OUT.to_le_bytes().to_vec();
    p.extend(x.to_le_bytes());
    let out = run1(&m, p, vec![], 1);
    assert_eq!(u64_at(&out, 0), (x << 2).wrapping_add(2));

    // call_local_array: fill(10, i) + fill(20, 3) = 10 + i + 23.
    let m = module("call_local_array");
    for i in 0..4u32 {
        let mut p = OUT.to_le_bytes().to_vec();
        p.extend(i.to_le_bytes());
        let out = run1(&m, p, vec![], 1);
        assert_eq!(u32_at(&out, 0), 10 + i + 23, "i = {i}");
    }

    // call_reg_params: r2 = ±(x*3+5), r3 = ±(r2*x+5), negated when x > 10.
    let m = module("call_reg_params");
    for x in [4u32, 12] {
        let mut p = OUT.to_le_bytes().to_vec();
        p.extend(x.to_le_bytes());
        let out = run1(&m, p, vec![], 1);
        let f = |a: u32, b: u32| {
            let r = a.wrapping_mul(b).wrapping_add(5);
            if x > 10 {
                r.wrapping_neg()
            } else {
                r
            }
        };
        let r2 = f(x, 3);
        assert_eq!(u32_at(&out, 0), r2, "x = {x}");
        assert_eq!(u32_at(&out, 4), f(r2, x), "x = {x}");
    }
}

/// Build a generated module and return its diagnostics.
fn diagnostics(src: &str) -> String {
    let file = SourceFile::new("gen.ptx", src.to_string());
    let (ast, _) = ptx::parse_and_check(&file).unwrap();
    match ir::build(&ast, &file) {
        Ok(_) => String::new(),
        Err(d) => leafold::error::render_all(&d),
    }
}

/// A chain of calls deeper than the inlining limit (32) is refused at the call that
/// crosses it; a chain within it builds.
#[test]
fn inlining_depth_is_limited() {
    let chain = |n: usize| {
        let mut s = String::from(".version 7.0\n.target sm_50\n.address_size 64\n");
        s.push_str(&format!(".func f{n}()\n{{\n    ret;\n}}\n"));
        for k in (0..n).rev() {
            s.push_str(&format!(
                ".func f{k}()\n{{\n    call.uni f{}, ();\n    ret;\n}}\n",
                k + 1
            ));
        }
        s.push_str(".visible .entry k()\n{\n    call.uni f0, ();\n    ret;\n}\n");
        s
    };
    assert_eq!(diagnostics(&chain(30)), "");
    let d = diagnostics(&chain(40));
    assert!(d.contains("calls nested deeper than 32"), "{d}");
    assert_eq!(d.matches("error:").count(), 1, "{d}");
}

/// Each level calls the next twice: 2^18 copies of the leaf would exceed the size limit
/// (200,000 instructions); the call that crosses it is refused. (The leaf names a `.shared`
/// variable, so that no level may be kept as a subroutine instead: without it the levels
/// that grow past 100 instructions are subroutines, `calls::outlined_set`, and the chain
/// builds.)
#[test]
fn inlined_size_is_limited() {
    let chain = |shared: bool| {
        let mut s = String::from(".version 7.0\n.target sm_50\n.address_size 64\n");
        s.push_str(".shared .b32 sh;\n");
        let store = if shared {
            "    st.shared.u32 [sh], %r1;\n"
        } else {
            ""
        };
        s.push_str(&format!(
            ".func f18()\n{{\n    .reg .b32 %r1;\n    mov.u32 %r1, 1;\n{store}    ret;\n}}\n"
        ));
        for k in (0..18).rev() {
            s.push_str(&format!(
                ".func f{k}()\n{{\n    call.uni f{n}, ();\n    call.uni f{n}, ();\n    ret;\n}}\n",
                n = k + 1
            ));
        }
        s.push_str(".visible .entry k()\n{\n    call.uni f0, ();\n    ret;\n}\n");
        s
    };
    let d = diagnostics(&chain(true));
    assert!(
        d.contains("inlining makes the kernel longer than 200000 instructions"),
        "{d}"
    );
    assert_eq!(diagnostics(&chain(false)), "");
}
