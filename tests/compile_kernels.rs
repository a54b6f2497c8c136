//! Kernel-level behaviours of `leafold::compile` that whole corpus files depend on:
//! * `-e` (`Options::entries`) compiles the named kernels even when another kernel of the
//!   module uses something leafold does not support, and reports only the named kernels'
//!   errors;
//! * the dynamic shared array (`.extern .shared x[]`) starts after every static shared
//!   variable, a kernel-scope one declared after it included, in `ir::eval`, in the selected
//!   code and in the cubin's shared size, so the two never overlap;
//! * the scalar video shifts (`vshl`/`vshr` with `.clamp`/`.wrap` and `.add`) give the
//!   values the PTX definition gives, in `ir::eval` and in the simulator running our code.

mod common;

use leafold::cubin;
use leafold::driver::{compile, Emit, Options};
use leafold::ir::eval::{self, GlobalRegion, Launch};
use leafold::sim;

const TWO_KERNELS: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.global .texref tex;

.visible .entry textured(.param .u64 out)
{
    .reg .f32 %f<5>;
    .reg .s32 %r1;
    .reg .b64 %rd1;
    mov.f32 %f1, 0f00000000;
    mov.s32 %r1, 1;
    tex.grad.cube.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, {%f1, %f1, %f1, %f1}], {%f1, %f1, %f1, %f1}, {%f1, %f1, %f1, %f1}, {%r1, %r1};
    ld.param.u64 %rd1, [out];
    st.global.f32 [%rd1], %f1;
    ret;
}

.visible .entry plain(.param .u64 out)
{
    .reg .b32 %r1;
    .reg .b64 %rd1;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;

fn opts(entries: &[&str]) -> Options {
    Options {
        file_name: "k.ptx".to_string(),
        emit: Emit::Sass,
        entries: entries.iter().map(|e| e.to_string()).collect(),
        ..Options::default()
    }
}

#[test]
fn entries_need_only_their_own_kernels_to_build() {
    // The whole module does not compile: `textured` uses a cube-map gradient fetch with offsets (refused, as by ptxas).
    let all = compile(TWO_KERNELS, &opts(&[])).unwrap_err();
    assert!(
        all.0[0].message.contains("tex.grad.cube"),
        "{}",
        all.0[0].message
    );
    // `-e plain` does, and its cubin holds only `plain`.
    let out = compile(TWO_KERNELS, &opts(&["plain"]))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).unwrap();
    let names: Vec<&str> = c.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["plain"]);
    // `-e textured` reports the texture, at its line.
    let e = compile(TWO_KERNELS, &opts(&["textured"])).unwrap_err();
    assert_eq!(e.0.len(), 1, "{}", leafold::error::render_all(&e.0));
    assert!(
        e.0[0].message.contains("tex.grad.cube"),
        "{}",
        e.0[0].message
    );
    assert_eq!(e.0[0].location().0, 15);
    // A name the module does not define is still an error.
    assert!(compile(TWO_KERNELS, &opts(&["missing"])).is_err());
}

/// Thread 0 sets the kernel-scope `flag`; every thread stores its id into `dyn[tid]`; after
/// the barrier every thread writes `flag + dyn[(tid + 1) % ntid]`. Were `dyn` placed at
/// offset 0 (where it is declared, before `flag`), thread 0's `dyn[0]` would overwrite `flag`.
const DYNAMIC_AFTER_STATIC: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.extern .shared .align 4 .b8 dyn[];

.visible .entry dyn_after_static(.param .u64 out)
{
    .shared .align 4 .u32 flag;
    .reg .pred %p1;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r3, 0x11223344;
    @%p1 st.shared.u32 [flag], %r3;
    mov.u32 %r4, dyn;
    shl.b32 %r5, %r1, 2;
    add.s32 %r6, %r4, %r5;
    st.shared.u32 [%r6], %r1;
    bar.sync 0;
    add.s32 %r7, %r1, 1;
    rem.u32 %r8, %r7, %r2;
    shl.b32 %r9, %r8, 2;
    add.s32 %r10, %r4, %r9;
    ld.shared.u32 %r11, [%r10];
    ld.shared.u32 %r3, [flag];
    add.s32 %r11, %r11, %r3;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r11;
    ret;
}
"#;

#[test]
fn dynamic_shared_memory_follows_kernel_scope_shared_variables() {
    const OUT: u64 = 0x1000_0000;
    let name = "dyn_after_static";
    let out = compile(DYNAMIC_AFTER_STATIC, &opts(&[]))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let c = cubin::read(&out.cubin).unwrap();
    // `flag`, padded to 16 where `dyn` starts: ptxas 11.8 -v also says 16 bytes smem for this
    // kernel, and its code addresses `dyn` at 0x10 too.
    assert_eq!(c.kernels[0].shared.map(|s| s.0), Some(16));
    let module = common::ir_module("k.ptx", DYNAMIC_AFTER_STATIC);
    for threads in [32u32, 64] {
        let mut l = Launch::new([1, 1, 1], [threads, 1, 1]);
        l.params = OUT.to_le_bytes().to_vec();
        l.dynamic_shared = 4 * threads;
        l.global = vec![GlobalRegion {
            base: OUT,
            bytes: vec![0; 4 * threads as usize],
        }];
        let reference = eval::run(&module, name, &l).unwrap();
        let ours = sim::run_cubin(&out.cubin, name, &l)
            .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        assert_eq!(ours.global, reference.global, "{}", out.sass);
        assert_eq!(ours.shared, reference.shared, "{}", out.sass);
        let got = reference.region(OUT).unwrap();
        for t in 0..threads {
            let at = 4 * t as usize;
            let v = u32::from_le_bytes(got[at..at + 4].try_into().unwrap());
            assert_eq!(v, 0x1122_3344 + (t + 1) % threads, "thread {t}");
        }
    }
}

/// The scalar video shifts: `out[0] = vshr.clamp.add(a, b, c)`, `out[1] = vshr.s32 clamp`,
/// `out[2] = vshl.wrap(a, b)`, `out[3] = vshl.clamp.add(a, b, c)`.
const VIDEO_SHIFTS: &str = r#"
.version 7.0
.target sm_50
.address_size 64

.visible .entry video_shifts(.param .u64 out, .param .u32 a, .param .u32 b, .param .u32 c)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd1;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    ld.param.u32 %r3, [c];
    vshr.u32.u32.u32.clamp.add %r4, %r1, %r2, %r3;
    vshr.s32.s32.u32.clamp %r5, %r1, %r2;
    vshl.u32.u32.u32.wrap %r6, %r1, %r2;
    vshl.u32.u32.u32.clamp.add %r7, %r1, %r2, %r3;
    st.global.v4.u32 [%rd1], {%r4, %r5, %r6, %r7};
    ret;
}
"#;

#[test]
fn scalar_video_shifts() {
    const OUT: u64 = 0x1000_0000;
    let out = compile(VIDEO_SHIFTS, &opts(&[]))
        .unwrap_or_else(|d| panic!("{}", leafold::error::render_all(&d.0)));
    let module = common::ir_module("k.ptx", VIDEO_SHIFTS);
    let a = 0x8000_00f0u32;
    let c = 7u32;
    for b in [0u32, 4, 31, 32, 33, 40, 0xffff_ffff] {
        let mut l = Launch::new([1, 1, 1], [1, 1, 1]);
        l.params = OUT.to_le_bytes().to_vec();
        for v in [a, b, c] {
            l.params.extend(v.to_le_bytes());
        }
        l.global = vec![GlobalRegion {
            base: OUT,
            bytes: vec![0; 16],
        }];
        let reference = eval::run(&module, "video_shifts", &l).unwrap();
        let ours = sim::run_cubin(&out.cubin, "video_shifts", &l)
            .unwrap_or_else(|e| panic!("sim: {e}\n{}", out.sass));
        assert_eq!(ours.global, reference.global, "b = {b}\n{}", out.sass);
        let got: Vec<u32> = reference
            .region(OUT)
            .unwrap()
            .chunks(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        let clamped = b.min(32);
        let shr = if clamped == 32 { 0 } else { a >> clamped };
        let sar = ((a as i32) >> clamped.min(31)) as u32;
        let shl = if clamped == 32 { 0 } else { a << clamped };
        let expected = [shr.wrapping_add(c), sar, a << (b & 31), shl.wrapping_add(c)];
        assert_eq!(got, expected, "b = {b}");
    }
}
