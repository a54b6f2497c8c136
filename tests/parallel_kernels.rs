//! Kernels of one file compile in parallel (`driver::compile` on rayon's current pool): the
//! output must not depend on the number of threads, and the error reported must be the one
//! of the first failing kernel in module order, whichever thread finishes first.

mod common;

use leafold::driver::{compile, Emit, Options, Output};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Everything `compile` returns, as one comparable value.
fn fingerprint(o: &Output) -> (Vec<u8>, String, String, String, String, String) {
    (
        o.cubin.clone(),
        o.sass.clone(),
        o.text.clone(),
        o.info_log.clone(),
        o.explain.clone(),
        format!("{:?}", o.kernels),
    )
}

#[test]
fn output_is_the_same_on_one_thread_and_on_four() {
    let (one, four) = (pool(1), pool(4));
    let mut multi = 0;
    for f in common::corpus() {
        // Small and medium files: this runs in a debug build, with every check on.
        if f.ptx.len() > 60_000 {
            continue;
        }
        for (emit, explain) in [(Emit::Sass, true), (Emit::Vcode, false), (Emit::Ir, false)] {
            let opts = Options {
                emit,
                explain,
                verbose: true,
                file_name: f.name.clone(),
                ..Options::default()
            };
            let a = one.install(|| compile(&f.ptx, &opts));
            let b = four.install(|| compile(&f.ptx, &opts));
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    if emit == Emit::Sass && a.kernels.len() > 1 {
                        multi += 1;
                    }
                    assert!(
                        fingerprint(&a) == fingerprint(&b),
                        "{} ({emit:?}): one thread and four give different output",
                        f.name
                    );
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", f.name),
                (a, b) => panic!(
                    "{}: one thread {}, four threads {}",
                    f.name,
                    if a.is_ok() { "compiles" } else { "fails" },
                    if b.is_ok() { "compiles" } else { "fails" }
                ),
            }
        }
    }
    // The comparison means something only if kernels did run side by side.
    assert!(
        multi >= 10,
        "only {multi} multi-kernel corpus files compared"
    );
}

/// Three kernels; under `--maxrregcount 4` the first fits (it names no more than four
/// registers at once) and the other two cannot be allocated.
const THREE_KERNELS: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry fits()
{
    ret;
}

.visible .entry wide_first(.param .u64 p)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd1;
    ld.param.u64 %rd1, [p];
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
    st.global.v4.u32 [%rd1+16], {%r1, %r2, %r3, %r4};
    ret;
}

.visible .entry wide_second(.param .u64 p)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd1;
    ld.param.u64 %rd1, [p];
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
    st.global.v4.u32 [%rd1+32], {%r1, %r2, %r3, %r4};
    ret;
}
"#;

#[test]
fn the_first_failing_kernel_in_module_order_is_reported() {
    let opts = Options {
        max_regs: Some(4),
        ..Options::default()
    };
    for threads in [1, 2, 4] {
        let err = pool(threads)
            .install(|| compile(THREE_KERNELS, &opts))
            .err()
            .unwrap_or_else(|| panic!("{threads} threads: the kernels compiled"));
        let text = err.to_string();
        assert!(
            text.contains("wide_first") && !text.contains("wide_second"),
            "{threads} threads: {text}"
        );
    }
}
