//! `.param` bytes across inlined calls (src/ir/build/calls.rs keeps them in SSA slots and
//! composes accesses of different widths with shifts and masks): random sequences of
//! `st.param`/`ld.param` of 1, 2, 4 and 8 bytes over a 16-byte argument and a 16-byte result,
//! through a callee that copies one to the other with its own random widths. `ir::eval` must
//! give the bytes a plain byte-array model gives, and the simulator running the compiled
//! kernel must agree with `ir::eval`.

mod common;

use common::Rng;
use leafold::driver::{compile, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::sim;
use leafold::SourceFile;

const OUT: u64 = 0x1000_0000;

/// Inputs of the kinds this test needs, drawn from [`common::Rng`].
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A width in bytes and an offset aligned to it inside 16 bytes.
    fn access(&mut self) -> (u32, u32) {
        let w = 1u32 << self.below(4);
        (w, w * self.below(u64::from(16 / w)) as u32)
    }
}

fn put(mem: &mut [u8; 16], off: u32, w: u32, v: u64) {
    for k in 0..w {
        mem[(off + k) as usize] = (v >> (8 * k)) as u8;
    }
}

fn get(mem: &[u8; 16], off: u32, w: u32) -> u64 {
    (0..w).fold(0, |acc, k| {
        acc | u64::from(mem[(off + k) as usize]) << (8 * k)
    })
}

/// One random kernel and the 8 words the model says it writes.
fn case(rng: &mut Rng) -> (String, Vec<u8>) {
    let mut arg = [0u8; 16];
    let mut body = String::new();
    for _ in 0..6 {
        let (w, off) = rng.access();
        let v = rng.next() & (u64::MAX >> (64 - 8 * w));
        body += &format!("    st.param.b{} [p+{off}], {v};\n", 8 * w);
        put(&mut arg, off, w, v);
    }
    // The callee copies its argument into its result, in chunks of one random width, then
    // overwrites one random piece with a value read back from the argument.
    let cw = 1u32 << rng.below(4);
    let mut callee = String::new();
    let mut res = [0u8; 16];
    for off in (0..16).step_by(cw as usize) {
        callee += &format!(
            "    ld.param.b{b} %c, [q+{off}];\n    st.param.b{b} [r+{off}], %c;\n",
            b = 8 * cw
        );
        put(&mut res, off, cw, get(&arg, off, cw));
    }
    let (w, off) = rng.access();
    let (w2, off2) = rng.access();
    let w2 = w2.min(w);
    callee += &format!(
        "    ld.param.b{} %c, [q+{off}];\n    st.param.b{} [r+{off2}], %c;\n",
        8 * w,
        8 * w2
    );
    put(&mut res, off2, w2, get(&arg, off, w));
    let mut expect = Vec::new();
    let mut loads = String::new();
    for k in 0..8 {
        let (w, off) = rng.access();
        loads += &format!(
            "    ld.param.u{} %x, [r+{off}];\n    st.global.u64 [%rd1+{}], %x;\n",
            8 * w,
            8 * k
        );
        expect.extend(get(&res, off, w).to_le_bytes());
    }
    let ptx = format!(
        r#".version 7.0
.target sm_50
.address_size 64

.func (.param .align 8 .b8 r[16]) copy(.param .align 8 .b8 q[16])
{{
    .reg .b64 %c;
{callee}    ret;
}}

.visible .entry bytes(.param .u64 out)
{{
    .reg .b64 %rd1;
    .reg .b64 %x;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    {{
    .param .align 8 .b8 p[16];
{body}    .param .align 8 .b8 r[16];
    call.uni (r), copy, (p);
{loads}    }}
    ret;
}}
"#
    );
    (ptx, expect)
}

#[test]
fn param_bytes_compose_like_a_byte_array() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in 0..40 {
        let (ptx, expect) = case(&mut rng);
        let file = SourceFile::new("bytes.ptx", ptx.clone());
        let (ast, _) =
            leafold::ptx::parse_and_check(&file).unwrap_or_else(|d| panic!("case {n}: {d}\n{ptx}"));
        let module = leafold::ir::build(&ast, &file)
            .unwrap_or_else(|d| panic!("case {n}: {}\n{ptx}", leafold::error::render_all(&d)));
        let mut launch = Launch::new([1, 1, 1], [1, 1, 1]);
        launch.params = OUT.to_le_bytes().to_vec();
        launch.global = vec![GlobalRegion {
            base: OUT,
            bytes: vec![0; 64],
        }];
        let reference = eval::run(&module, "bytes", &launch).unwrap();
        assert_eq!(
            reference.region(OUT).unwrap(),
            &expect[..],
            "case {n}\n{ptx}"
        );
        // Every fourth case also through the compiler and the simulator.
        if n % 4 == 0 {
            let out = compile(&ptx, &Options::default())
                .unwrap_or_else(|d| panic!("case {n}: {}", leafold::error::render_all(&d.0)));
            let ours = sim::run_cubin(&out.cubin, "bytes", &launch)
                .unwrap_or_else(|e| panic!("case {n}: sim: {e}\n{}", out.sass));
            assert_eq!(
                ours.global, reference.global,
                "case {n}\n{ptx}\n{}",
                out.sass
            );
        }
    }
}
