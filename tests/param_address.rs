//! `ld.param` through a register holding a kernel parameter's address (`mov.b64 %rd,
//! param; ld.param.u16 %rs, [%rd+k]`), as clang writes it for `__half` and byval parameters:
//! every width and byte offset reads the parameter bytes, as `ir::eval` reads them.

use leafold::driver::{compile, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::sim;

const OUT: u64 = 0x2000_0000;

const SRC: &str = r#"
.version 7.0
.target sm_50
.address_size 64
.visible .entry k(.param .u64 out, .param .align 4 .b8 blob[12])
{
    .reg .b16 %rs<8>; .reg .b32 %r<12>; .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [out];
    mov.b64 %rd2, blob;
    mov.u64 %rd3, %rd2;
    ld.param.u8 %rs1, [%rd3+1];
    ld.param.u8 %rs2, [%rd3+3];
    ld.param.u16 %rs3, [%rd3+2];
    ld.param.u16 %rs4, [%rd3+6];
    ld.param.v2.u16 {%rs5, %rs6}, [%rd3+8];
    ld.param.s8 %r1, [%rd3+5];
    ld.param.u32 %r2, [%rd3+4];
    cvt.u32.u16 %r3, %rs1;
    cvt.u32.u16 %r4, %rs2;
    cvt.u32.u16 %r5, %rs3;
    cvt.u32.u16 %r6, %rs4;
    cvt.u32.u16 %r7, %rs5;
    cvt.u32.u16 %r8, %rs6;
    st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
    st.global.v4.u32 [%rd1+16], {%r7, %r8, %r1, %r2};
    ret;
}
"#;

#[test]
fn narrow_reads_through_a_parameter_address() {
    let out = compile(SRC, &Options::default())
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let module = {
        let file = leafold::error::SourceFile::new("p.ptx", SRC);
        let (ast, _) = leafold::ptx::parse_and_check(&file).unwrap();
        leafold::ir::build(&ast, &file).unwrap()
    };
    for seed in 1..5u64 {
        let mut l = Launch::new([1, 1, 1], [1, 1, 1]);
        l.params = OUT.to_le_bytes().to_vec();
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for _ in 0..12 {
            x ^= x >> 13;
            x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
            l.params.push((x >> 56) as u8);
        }
        l.global = vec![GlobalRegion {
            base: OUT,
            bytes: vec![0; 32],
        }];
        let want = eval::run(&module, "k", &l).unwrap();
        let got = sim::run_cubin(&out.cubin, "k", &l).unwrap();
        assert_eq!(want.region(OUT), got.region(OUT), "seed {seed}");
        let w = want.region(OUT).unwrap();
        let blob = &l.params[8..];
        let word = |k: usize| u32::from_le_bytes(w[4 * k..4 * k + 4].try_into().unwrap());
        assert_eq!(word(0), u32::from(blob[1]));
        assert_eq!(word(1), u32::from(blob[3]));
        assert_eq!(word(2), u32::from(u16::from_le_bytes([blob[2], blob[3]])));
        assert_eq!(word(3), u32::from(u16::from_le_bytes([blob[6], blob[7]])));
        assert_eq!(word(4), u32::from(u16::from_le_bytes([blob[8], blob[9]])));
        assert_eq!(word(6), blob[5] as i8 as i32 as u32);
    }
}
