//! `%smid` is read as ptxas reads it: `S2R SR_VIRTID` then `BFE.U32 0x914` (bits 20..28).
//! The models have one SM, so the simulator (whose SR_VIRTID has SM 0) and `ir::eval` (0)
//! agree; the test checks the selected shape, that agreement, and nvdisasm's reading.

mod common;

use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::oracle::Oracle;
use leafold::sim;

const OUT: u64 = 0x3000_0000;

const SRC: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry k(.param .u64 pout)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %smid;
    add.u32 %r2, %r2, %r1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
"#;

fn opts() -> Options {
    Options {
        file_name: "smid.ptx".to_string(),
        emit: Emit::Sass,
        ..Options::default()
    }
}

#[test]
fn smid_is_virtid_bits_20_to_28() {
    let out =
        compile(SRC, &opts()).unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let lines = common::parse_lines(&out.sass);
    let s2r = lines
        .iter()
        .position(|(_, t)| t.contains("S2R") && t.contains("SR_VIRTID"));
    let bfe = lines
        .iter()
        .position(|(_, t)| t.starts_with("BFE.U32") && t.ends_with("0x914"));
    assert!(s2r.is_some() && bfe > s2r, "{}", out.sass);

    let mut launch = Launch::new([2, 1, 1], [64, 1, 1]);
    launch.params = OUT.to_le_bytes().to_vec();
    launch.global = vec![GlobalRegion {
        base: OUT,
        bytes: vec![0xff; 64 * 4],
    }];
    let module = common::ir_module("smid.ptx", SRC);
    let want = eval::run(&module, "k", &launch).expect("ir::eval runs");
    let got = sim::run_cubin(&out.cubin, "k", &launch).unwrap_or_else(|e| panic!("sim: {e}"));
    assert_eq!(want.region(OUT), got.region(OUT));
    let first = got.region(OUT).unwrap();
    assert_eq!(
        &first[4..8],
        &1u32.to_le_bytes(),
        "thread 1 of SM 0 writes 1"
    );
}

#[test]
fn nvdisasm_agrees_with_our_printer() {
    let Some(oracle) = Oracle::for_test("lower_smid") else {
        return;
    };
    let out = compile(SRC, &opts()).unwrap();
    let code = leafold::cubin::read(&out.cubin).unwrap().kernels[0]
        .code
        .clone();
    let raw = oracle
        .nvdisasm_raw(&code)
        .expect("nvdisasm accepts our words");
    assert_eq!(common::parse_lines(&raw), common::parse_lines(&out.sass));
}
