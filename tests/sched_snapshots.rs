//! Scheduled SASS with its control-code column, pinned: the seed examples
//! (`tests/data/fold/seed*.ptx`) and a loop with loads. Each snapshot ends with the static
//! issue cycles ([`leafold::sm50::sched::cost`]) of the kernel under the three scheduling
//! modes, so a change of schedule shows its cost. Every cubin is checked for hazards first.

use leafold::cubin;
use leafold::disasm::{self, ListingOptions};
use leafold::driver::{Emit, Options};
use leafold::sm50::sched::check::check_code;
use leafold::sm50::sched::cost::kernel_cycles;
use leafold::sm50::sched::Mode;

/// A loop with two loads per iteration feeding float work, and a store after it.
const LOOP_LOADS: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry dot_loop(.param .u64 a, .param .u64 b, .param .u64 out, .param .u32 n)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .pred %p<3>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r4, 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra DONE;
LOOP:
    mul.wide.u32 %rd4, %r4, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    ld.global.f32 %f2, [%rd5];
    ld.global.f32 %f3, [%rd6];
    add.u32 %r4, %r4, 1;
    mul.f32 %f4, %f2, 0f40000000;
    fma.rn.f32 %f1, %f4, %f3, %f1;
    setp.lt.u32 %p2, %r4, %r1;
    @%p2 bra LOOP;
DONE:
    mul.wide.u32 %rd7, %r2, 4;
    add.s64 %rd8, %rd3, %rd7;
    st.global.f32 [%rd8], %f1;
    ret;
}
"#;

/// NVVM's bounds test at the top of a kernel (`if (i < n) out[i] = in[i] * s;`). A body
/// this short is if-converted (the test becomes the guard of every instruction, and only
/// the final `EXIT`, stall 15, remains); [`COPY_LOOP`]'s bounds test stays a guarded
/// `EXIT`, with ptxas's stall 13.
const GUARDED_EXIT: &str = r#"
.version 7.8
.target sm_50
.address_size 64

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u64 scale_param_1,
	.param .f32 scale_param_2,
	.param .u32 scale_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [scale_param_0];
	ld.param.u64 	%rd2, [scale_param_1];
	ld.param.f32 	%f1, [scale_param_2];
	ld.param.u32 	%r2, [scale_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd3, %rd2;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f2, [%rd5];
	mul.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd6, %rd1;
	add.s64 	%rd7, %rd6, %rd4;
	st.global.f32 	[%rd7], %f3;

$L__BB0_2:
	ret;

}
"#;

/// NVVM's grid-stride copy (alignedTypes' `testKernel` reduced): the loop bumps the store's
/// pointer pair and then the load's. The load's pair (its own carry chain) goes before the
/// store, into the load's latency; the store's pair follows the store it overwrites the
/// address of.
const COPY_LOOP: &str = r#"
.version 7.8
.target sm_50
.address_size 64

.visible .entry copy_strided(
	.param .u64 copy_strided_param_0,
	.param .u64 copy_strided_param_1,
	.param .u32 copy_strided_param_2
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<12>;

	ld.param.u64 	%rd5, [copy_strided_param_0];
	ld.param.u64 	%rd6, [copy_strided_param_1];
	ld.param.u32 	%r6, [copy_strided_param_2];
	mov.u32 	%r7, %ctaid.x;
	mov.u32 	%r8, %ntid.x;
	mov.u32 	%r9, %tid.x;
	mad.lo.s32 	%r1, %r7, %r8, %r9;
	setp.ge.s32 	%p1, %r1, %r6;
	@%p1 bra 	$L__BB0_3;

	mov.u32 	%r2, %nctaid.x;
	mul.lo.s32 	%r3, %r8, %r2;
	mul.wide.s32 	%rd1, %r3, 4;
	cvta.to.global.u64 	%rd7, %rd6;
	mul.wide.s32 	%rd8, %r1, 4;
	add.s64 	%rd11, %rd7, %rd8;
	cvta.to.global.u64 	%rd9, %rd5;
	add.s64 	%rd10, %rd9, %rd8;
	mov.u32 	%r5, %r1;

$L__BB0_2:
	ld.global.u32 	%r4, [%rd11];
	st.global.u32 	[%rd10], %r4;
	add.s64 	%rd10, %rd10, %rd1;
	add.s64 	%rd11, %rd11, %rd1;
	add.s32 	%r5, %r5, %r3;
	setp.lt.s32 	%p2, %r5, %r6;
	@%p2 bra 	$L__BB0_2;

$L__BB0_3:
	ret;

}
"#;

fn text_words(c: &cubin::Cubin) -> Vec<(String, Vec<u64>)> {
    c.sections
        .iter()
        .filter(|s| s.name.starts_with(".text."))
        .map(|s| {
            let words = s
                .data
                .chunks(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
                .collect();
            (s.name.clone(), words)
        })
        .collect()
}

fn scheduled(name: &str, ptx: &str) -> String {
    let compile = |sched| {
        let opts = Options {
            emit: Emit::Cubin,
            file_name: name.to_string(),
            sched,
            ..Options::default()
        };
        let out = match leafold::compile(ptx, &opts) {
            Ok(out) => out,
            Err(d) => panic!("{}", leafold::error::render_all(&d.0)),
        };
        let c = cubin::read(&out.cubin).expect("our cubin reads back");
        for (section, words) in text_words(&c) {
            let hazards = check_code(&words);
            assert!(hazards.is_empty(), "{name} {section}: {hazards:#?}");
        }
        c
    };
    let c = compile(Mode::Normal);
    let mut s = disasm::listing(
        &c,
        ListingOptions {
            ctrl: true,
            raw: false,
            slice: false,
        },
    );
    s.push_str("\n== static issue cycles ==\n");
    let modes = [Mode::Normal, Mode::InOrder, Mode::Serial];
    let per_mode: Vec<Vec<(String, Vec<u64>)>> =
        modes.iter().map(|&m| text_words(&compile(m))).collect();
    for (k, (section, _)) in per_mode[0].iter().enumerate() {
        let cycles: Vec<String> = modes
            .iter()
            .zip(&per_mode)
            .map(|(m, t)| format!("{m:?} {}", kernel_cycles(&t[k].1).expect("decodes")))
            .collect();
        s.push_str(&format!("{section}: {}\n", cycles.join(", ")));
    }
    s
}

fn seed(file: &str) -> String {
    let path = format!("{}/tests/data/fold/{file}", env!("CARGO_MANIFEST_DIR"));
    let ptx = std::fs::read_to_string(&path).unwrap();
    scheduled(file, &ptx)
}

#[test]
fn sched_seed1_a64_index() {
    insta::assert_snapshot!(seed("seed1_a64_index.ptx"));
}

#[test]
fn sched_seed2_a_100_minus_i() {
    insta::assert_snapshot!(seed("seed2_a_100_minus_i.ptx"));
}

#[test]
fn sched_seed3_struct_field_cbank() {
    insta::assert_snapshot!(seed("seed3_struct_field_cbank.ptx"));
}

#[test]
fn sched_seed4_u8_32bit() {
    insta::assert_snapshot!(seed("seed4_u8_32bit.ptx"));
}

#[test]
fn sched_seed5_u128_scaled_add() {
    insta::assert_snapshot!(seed("seed5_u128_scaled_add.ptx"));
}

#[test]
fn sched_loop_with_loads() {
    insta::assert_snapshot!(scheduled("dot_loop.ptx", LOOP_LOADS));
}

#[test]
fn sched_guarded_exit() {
    insta::assert_snapshot!(scheduled("guarded_exit.ptx", GUARDED_EXIT));
}

#[test]
fn sched_copy_loop_carry_chains() {
    insta::assert_snapshot!(scheduled("copy_loop.ptx", COPY_LOOP));
}
